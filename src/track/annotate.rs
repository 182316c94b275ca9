//! The annotated footage: every frame with the current settled position drawn over it.
//!
//! The drawing is made once per settled position, as a sparse layer of coloured pixels
//! ([`OverlayLayer`]), and stamped onto each frame, so annotating costs little more than encoding
//! the video. What is drawn is the referee's full view of the settled frame
//! ([`crate::report::overlay::position_overlay`], as `winkeye analyze --overlay` draws it: fitted
//! outlines, ids and states, squop arrows and margins, piles, replacement spots, the mat, and the
//! counts, score and flags in a legend); the layer keeps the pixels that drawing changed
//! ([`analysis_layer`]).

use crate::analyze::Analysis;
use crate::calibrate::CalibrateError;
use opencv::core::{Mat, Size, Vec3b};
use opencv::prelude::*;
use opencv::videoio::VideoWriter;
use std::path::{Path, PathBuf};

/// Why the annotated video could not be written.
#[derive(Debug, thiserror::Error)]
pub enum AnnotateError {
    /// The extension names no container winkeye writes.
    #[error("{path}: write the annotated video as .mp4 or .avi")]
    Container {
        /// The file.
        path: PathBuf,
    },
    /// OpenCV could not open a writer for it.
    #[error("cannot write the video {path} (no encoder for it, or the folder is not writable)")]
    Open {
        /// The file.
        path: PathBuf,
    },
    /// The finished video could not be renamed into place.
    #[error("cannot rename {from} to {to}: {source}")]
    Rename {
        /// The partial file.
        from: PathBuf,
        /// The target.
        to: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The overlay could not be drawn.
    #[error("cannot draw the overlay: {0}")]
    Draw(#[from] CalibrateError),
    /// OpenCV failed.
    #[error("{path}: {source}")]
    OpenCv {
        /// The file.
        path: PathBuf,
        /// OpenCV's error.
        source: opencv::Error,
    },
}

/// Pixels to paint over a frame: (offset of the pixel in the frame, BGR).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OverlayLayer {
    /// Frame width and height the layer was drawn for.
    pub size: (u32, u32),
    /// The painted pixels.
    pub pixels: Vec<(u32, [u8; 3])>,
}

impl OverlayLayer {
    /// Paints the layer onto an 8-bit BGR frame of the size it was drawn for (other sizes are
    /// left alone).
    pub fn apply(&self, frame: &mut Mat) -> opencv::Result<()> {
        if (frame.cols() as u32, frame.rows() as u32) != self.size || !frame.is_continuous() {
            return Ok(());
        }
        let data = frame.data_typed_mut::<Vec3b>()?;
        for &(i, bgr) in &self.pixels {
            if let Some(p) = data.get_mut(i as usize) {
                *p = Vec3b::from(bgr);
            }
        }
        Ok(())
    }
}

/// The referee's view of a settled frame as a layer: [`crate::report::overlay::position_overlay`]
/// drawn over `frame` (the frame that was analysed), keeping the pixels the drawing changed. The
/// legend's darkened band is kept too, so it reads the same over later frames.
pub fn analysis_layer(frame: &Mat, analysis: &Analysis) -> Result<OverlayLayer, AnnotateError> {
    let drawn = crate::report::overlay::position_overlay(frame, analysis)?;
    let size = (drawn.width(), drawn.height());
    let mut pixels = Vec::new();
    let ocv = |source| AnnotateError::OpenCv { path: PathBuf::new(), source };
    let mut copy = None;
    let bgr = crate::capture::contiguous_bytes(frame, &mut copy).map_err(ocv)?;
    for (i, p) in drawn.pixels().enumerate() {
        let Some(o) = bgr.get(3 * i..3 * i + 3) else { break };
        if o[0] != p[2] || o[1] != p[1] || o[2] != p[0] {
            pixels.push((i as u32, [p[2], p[1], p[0]]));
        }
    }
    Ok(OverlayLayer { size, pixels })
}

/// Writes the annotated footage: `.mp4` (mp4v) or `.avi` (MJPG), through a partial file beside
/// the target that is renamed into place by [`AnnotatedWriter::finish`].
pub struct AnnotatedWriter {
    writer: VideoWriter,
    path: PathBuf,
    partial: PathBuf,
    layer: OverlayLayer,
    drawn_for: Option<u64>,
    buf: Mat,
}

/// The codec for a file name: mp4v for `.mp4`, MJPG for `.avi`; an error for anything else.
pub fn codec_for(path: &Path) -> Result<[char; 4], AnnotateError> {
    let ext = path.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "mp4" | "m4v" | "mov" => Ok(['m', 'p', '4', 'v']),
        "avi" => Ok(['M', 'J', 'P', 'G']),
        _ => Err(AnnotateError::Container { path: path.to_owned() }),
    }
}

impl AnnotatedWriter {
    /// Opens a writer for frames of `size` (width, height) at `fps`.
    pub fn create(path: &Path, fps: f64, size: (u32, u32)) -> Result<AnnotatedWriter, AnnotateError> {
        let ext = path.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_default();
        let fourcc = codec_for(path)?;
        let ocv = |source| AnnotateError::OpenCv { path: path.to_owned(), source };
        let code = VideoWriter::fourcc(fourcc[0], fourcc[1], fourcc[2], fourcc[3]).map_err(ocv)?;
        // The partial keeps the extension: OpenCV picks the container by it. A FIFO or device is
        // written directly (renaming over it would replace it).
        let path = &crate::report::output::through_links(path);
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let special = crate::report::output::is_special(path);
        let partial = if special { path.to_owned() } else { path.with_file_name(format!(".{stem}.partial.{ext}")) };
        let writer = VideoWriter::new(&partial, code, fps, Size::new(size.0 as i32, size.1 as i32), true).map_err(ocv)?;
        if !writer.is_opened().map_err(ocv)? {
            return Err(AnnotateError::Open { path: path.to_owned() });
        }
        Ok(AnnotatedWriter { writer, path: path.to_owned(), partial, layer: OverlayLayer::default(), drawn_for: None, buf: Mat::default() })
    }

    /// Writes one frame with the referee's view of the current settled position (if any) drawn
    /// over it. `version` identifies the position (e.g. the count of settles) so it is drawn only
    /// once, over the first frame written after it settled (the frame that was analysed).
    pub fn write(&mut self, frame: &Mat, analysis: Option<&Analysis>, version: u64) -> Result<(), AnnotateError> {
        let ocv = |source| AnnotateError::OpenCv { path: self.path.clone(), source };
        match analysis {
            Some(a) if self.drawn_for != Some(version) => {
                self.layer = analysis_layer(frame, a)?;
                self.drawn_for = Some(version);
            }
            _ => {}
        }
        if self.layer.pixels.is_empty() {
            return self.writer.write(frame).map_err(ocv);
        }
        frame.copy_to(&mut self.buf).map_err(ocv)?;
        self.layer.apply(&mut self.buf).map_err(ocv)?;
        self.writer.write(&self.buf).map_err(ocv)
    }

    /// Closes the video and renames it into place.
    pub fn finish(mut self) -> Result<(), AnnotateError> {
        self.writer.release().map_err(|source| AnnotateError::OpenCv { path: self.path.clone(), source })?;
        if self.partial == self.path {
            return Ok(());
        }
        std::fs::rename(&self.partial, &self.path).map_err(|source| AnnotateError::Rename { from: self.partial.clone(), to: self.path.clone(), source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::position::Position;

    #[test]
    fn the_layer_stamped_on_the_frame_is_the_overlay() -> Result<(), Box<dyn std::error::Error>> {
        let cal = super::super::tests::flat_calibration(320, 180)?;
        let frame = Mat::new_rows_cols_with_default(180, 320, opencv::core::CV_8UC3, opencv::core::Scalar::new(60.0, 90.0, 70.0, 0.0))?;
        let analysis = Analysis { position: Position::of_winks(Vec::new(), Vec::new()), calibration: cal, detections: Default::default() };
        let layer = analysis_layer(&frame, &analysis)?;
        assert_eq!(layer.size, (320, 180));
        assert!(!layer.pixels.is_empty(), "the mat and the legend are drawn");
        let mut stamped = frame.try_clone()?;
        layer.apply(&mut stamped)?;
        let drawn = crate::report::overlay::position_overlay(&frame, &analysis)?;
        let back = crate::synth::effects::from_bgr_mat(&stamped)?;
        assert!(drawn.pixels().zip(back.pixels()).all(|(a, b)| a == b), "stamping the layer reproduces the overlay");
        Ok(())
    }
}
