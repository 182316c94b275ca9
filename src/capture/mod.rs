//! Where frames come from: still images, and streams of frames behind one trait
//! ([`FrameSource`]): video files (OpenCV), folders or globs of numbered images, the renderer's
//! clips (video files too), and live cameras (nokhwa).

pub mod source;
mod still;

pub use source::{
    list_cameras, open_recorded, prefetch, CameraListing, CameraOptions, CameraSource, Frame, FrameSource, ImageSequence, Prefetch, SourceError,
    SourceEvent, VideoFile,
};
pub use still::{is_monochrome, load_image, CaptureError};
pub(crate) use still::contiguous_bytes;
