//! Where frames come from. This version reads still images; video files, cameras and the
//! renderer's clips come behind the same door later.

mod still;

pub use still::{load_image, CaptureError};
