//! The annotated footage: every frame with the current settled position drawn over it.
//!
//! The drawing is made once per settled position, as a sparse layer of coloured pixels
//! ([`OverlayLayer`]), and stamped onto each frame, so annotating costs little more than encoding
//! the video. What is drawn is the referee's full view of the settled frame
//! ([`crate::report::overlay::position_overlay`], as `winkeye analyze --overlay` draws it: fitted
//! outlines, ids and states, squop arrows and margins, piles, replacement spots, the mat, and the
//! counts, score and flags in a legend); the layer keeps the pixels that drawing changed
//! ([`analysis_layer`]). [`position_layer`] is a plainer drawing from the position document alone.

use crate::analyze::Analysis;
use crate::calibrate::CalibrateError;
use crate::report::draw;
use crate::report::position::{Colour, Position, WinkState};
use image::{Rgb, RgbImage};
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

const OUTLINE: Rgb<u8> = Rgb([255, 40, 200]);

fn wink_rgb(c: Colour) -> Rgb<u8> {
    match c {
        Colour::Blue => Rgb([60, 120, 255]),
        Colour::Green => Rgb([40, 230, 60]),
        Colour::Red => Rgb([255, 50, 40]),
        Colour::Yellow => Rgb([255, 230, 30]),
    }
}

/// What is drawn for a settled position: the mat's outline (straight between its corners) and a
/// ring round each wink seen, in its colour, sized by its diameter, with its id; a line of text
/// saying which frame settled. Drawn on black; black is transparent.
pub fn position_layer(position: &Position, width: u32, height: u32) -> OverlayLayer {
    let mut img = RgbImage::new(width, height);
    let scale = (width.max(height) as f32 / 1000.0).max(0.6);
    let corners = position.calibration.as_ref().and_then(|c| c.mat_corners_px);
    // Pixels per mm along the mat's long side, for the rings' size.
    let mut px_per_mm = None;
    if let Some(c) = corners {
        for k in 0..4 {
            let (a, b) = (c[k], c[(k + 1) % 4]);
            draw::thick_line(&mut img, (a.x as f32, a.y as f32), (b.x as f32, b.y as f32), 1.5 * scale, OUTLINE);
        }
        px_per_mm = Some((c[0].distance(c[1]) + c[2].distance(c[3])) / 2.0 / crate::geometry::MatSpec::STANDARD.length_mm);
    }
    for w in &position.winks {
        let Some(p) = w.centre_px else { continue };
        if w.state == WinkState::Potted {
            continue;
        }
        let d_mm = w.diameter_mm.unwrap_or(if w.size == crate::report::position::WinkSize::Large { 22.0 } else { 16.0 });
        let r = px_per_mm.map_or(8.0, |k| (d_mm / 2.0 * k) as f32 + 2.0 * scale);
        draw::ring(&mut img, (p.x as f32, p.y as f32), r, 1.5 * scale, wink_rgb(w.colour));
        draw::text(&mut img, (p.x as f32 + r) as i32, (p.y as f32 - r - 10.0 * scale) as i32, 11.0 * scale, wink_rgb(w.colour), &w.id);
    }
    let frame = position.source.as_ref().and_then(|s| s.frame).map_or(String::new(), |f| format!(" (frame {f})"));
    let label = format!("settled{frame}: {} winks seen", position.winks.iter().filter(|w| w.centre_px.is_some()).count());
    draw::text(&mut img, 8, 6, 16.0 * scale, Rgb([255, 255, 255]), &label);
    let pixels = img
        .pixels()
        .enumerate()
        .filter(|(_, p)| p.0 != [0, 0, 0])
        .map(|(i, p)| (i as u32, [p[2], p[1], p[0]]))
        .collect();
    OverlayLayer { size: (width, height), pixels }
}

/// The referee's view of a settled frame as a layer: [`crate::report::overlay::position_overlay`]
/// drawn over `frame` (the frame that was analysed), keeping the pixels the drawing changed. The
/// legend's darkened band is kept too, so it reads the same over later frames.
pub fn analysis_layer(frame: &Mat, analysis: &Analysis) -> Result<OverlayLayer, AnnotateError> {
    let drawn = crate::report::overlay::position_overlay(frame, analysis)?;
    let size = (drawn.width(), drawn.height());
    let mut pixels = Vec::new();
    let ocv = |source| AnnotateError::OpenCv { path: PathBuf::new(), source };
    let continuous;
    let src = if frame.is_continuous() {
        frame
    } else {
        continuous = frame.try_clone().map_err(ocv)?;
        &continuous
    };
    let bgr = src.data_bytes().map_err(ocv)?;
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
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
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
