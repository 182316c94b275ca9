//! Still images from disk, through OpenCV, with errors that say what is wrong with the file.

use opencv::core::Mat;
use opencv::prelude::*;
use std::path::{Path, PathBuf};

/// Why a frame could not be had.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file is empty.
    #[error("{path} is empty")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A JPEG without its end marker: cut short in copying or writing.
    #[error("{path} is truncated: the JPEG data ends before its end marker")]
    Truncated {
        /// The file.
        path: PathBuf,
    },
    /// OpenCV could not decode it.
    #[error("{path} is not an image OpenCV can read (JPEG, PNG, BMP, TIFF, …)")]
    Undecodable {
        /// The file.
        path: PathBuf,
    },
    /// The image is too small to hold a mat.
    #[error("{path} is {width}x{height}: too small (at least 64x64)")]
    TooSmall {
        /// The file.
        path: PathBuf,
        /// Width.
        width: i32,
        /// Height.
        height: i32,
    },
    /// OpenCV failed.
    #[error("{path}: {source}")]
    OpenCv {
        /// The file.
        path: PathBuf,
        /// OpenCV's error.
        source: opencv::Error,
    },
}

/// Reads an image file as an 8-bit BGR matrix, refusing empty, truncated and undecodable files.
pub fn load_image(path: &Path) -> Result<Mat, CaptureError> {
    let bytes = std::fs::read(path).map_err(|source| CaptureError::Read { path: path.to_owned(), source })?;
    if bytes.is_empty() {
        return Err(CaptureError::Empty { path: path.to_owned() });
    }
    // JPEG starts FF D8 and ends FF D9 (allowing trailing padding); OpenCV would decode a
    // truncated one with its bottom left grey, which must not be taken for a picture of the mat.
    if bytes.starts_with(&[0xFF, 0xD8]) {
        let tail = &bytes[bytes.len().saturating_sub(64)..];
        if !tail.windows(2).any(|w| w == [0xFF, 0xD9]) {
            return Err(CaptureError::Truncated { path: path.to_owned() });
        }
    }
    let buf = opencv::core::Vector::<u8>::from_slice(&bytes);
    let img = opencv::imgcodecs::imdecode(&buf, opencv::imgcodecs::IMREAD_COLOR)
        .map_err(|source| CaptureError::OpenCv { path: path.to_owned(), source })?;
    if img.empty() {
        return Err(CaptureError::Undecodable { path: path.to_owned() });
    }
    if img.cols() < 64 || img.rows() < 64 {
        return Err(CaptureError::TooSmall { path: path.to_owned(), width: img.cols(), height: img.rows() });
    }
    Ok(img)
}

/// An image's pixel bytes, row after row: read in place, or from a copy made into `copy` when its
/// rows have gaps (a window into a larger image).
pub(crate) fn contiguous_bytes<'a, M: MatTraitConst>(m: &'a M, copy: &'a mut Option<Mat>) -> opencv::Result<&'a [u8]> {
    if m.is_continuous() {
        return m.data_bytes();
    }
    copy.insert(m.try_clone()?).data_bytes()
}

/// Whether an 8-bit BGR frame holds no colour at all: a greyscale picture (or a monochrome
/// camera's), decoded with its three channels equal. Every fourth pixel of every fourth row is
/// looked at; the frame is colourless when all but one in ten thousand of them have their
/// channels within [`MONOCHROME_SPREAD`] levels of each other. (A colour camera's noise alone
/// parts the channels by more than that over much of a grey felt, and a wink's colour parts them
/// by tens of levels.)
pub fn is_monochrome(bgr: &Mat) -> bool {
    if bgr.typ() != opencv::core::CV_8UC3 || bgr.empty() {
        return false;
    }
    // Read as bytes, not through a checked accessor per pixel.
    let mut copy = None;
    let Ok(data) = contiguous_bytes(bgr, &mut copy) else { return false };
    let row = bgr.cols() as usize * 3;
    let (mut looked, mut coloured) = (0usize, 0usize);
    for line in data.chunks_exact(row).step_by(4) {
        for p in line.chunks_exact(3).step_by(4) {
            let (lo, hi) = (p[0].min(p[1]).min(p[2]), p[0].max(p[1]).max(p[2]));
            looked += 1;
            coloured += usize::from(hi - lo > MONOCHROME_SPREAD);
        }
    }
    coloured * 10_000 <= looked
}

/// See [`is_monochrome`]: JPEG's rounding of a grey picture parts its channels by a level or two.
const MONOCHROME_SPREAD: u8 = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_greyscale_picture_is_told_from_a_grey_scene_in_colour() -> Result<(), Box<dyn std::error::Error>> {
        let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/stills/midgame-00003.jpg");
        let colour = load_image(&sample)?;
        assert!(!is_monochrome(&colour));
        // The same frame turned grey and back: three equal channels.
        let (mut grey, mut back) = (Mat::default(), Mat::default());
        opencv::imgproc::cvt_color(&colour, &mut grey, opencv::imgproc::COLOR_BGR2GRAY, 0)?;
        opencv::imgproc::cvt_color(&grey, &mut back, opencv::imgproc::COLOR_GRAY2BGR, 0)?;
        assert!(is_monochrome(&back));
        // ... and saved as a colour JPEG, which parts the channels by a level or so.
        let mut jpeg = opencv::core::Vector::<u8>::new();
        opencv::imgcodecs::imencode(".jpg", &back, &mut jpeg, &opencv::core::Vector::new())?;
        let decoded = opencv::imgcodecs::imdecode(&jpeg, opencv::imgcodecs::IMREAD_COLOR)?;
        assert!(is_monochrome(&decoded));
        // A grey scene with a little colour in it (a 20 × 20 px wink in a 640 × 480 frame, under
        // a tenth of a per cent of it) is not colourless.
        let mut scene = Mat::new_rows_cols_with_default(480, 640, opencv::core::CV_8UC3, opencv::core::Scalar::all(120.0))?;
        opencv::imgproc::circle(&mut scene, opencv::core::Point::new(300, 200), 10, opencv::core::Scalar::new(40.0, 160.0, 60.0, 0.0), -1, opencv::imgproc::LINE_8, 0)?;
        assert!(!is_monochrome(&scene));
        Ok(())
    }

    #[test]
    fn bad_files_name_their_problem() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let p = |n: &str| dir.path().join(n);
        assert!(matches!(load_image(&p("missing.jpg")), Err(CaptureError::Read { .. })));
        std::fs::write(p("empty.jpg"), b"")?;
        assert!(matches!(load_image(&p("empty.jpg")), Err(CaptureError::Empty { .. })));
        std::fs::write(p("junk.png"), b"not an image at all")?;
        assert!(matches!(load_image(&p("junk.png")), Err(CaptureError::Undecodable { .. })));
        let img = image::RgbImage::from_pixel(100, 80, image::Rgb([10, 200, 30]));
        let jpeg = crate::synth::effects::jpeg(&img, 90)?;
        std::fs::write(p("whole.jpg"), &jpeg)?;
        let m = load_image(&p("whole.jpg"))?;
        assert_eq!((m.cols(), m.rows()), (100, 80));
        std::fs::write(p("cut.jpg"), &jpeg[..jpeg.len() / 2])?;
        assert!(matches!(load_image(&p("cut.jpg")), Err(CaptureError::Truncated { .. })));
        Ok(())
    }
}
