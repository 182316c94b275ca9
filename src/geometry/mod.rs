//! Geometry of the equipment and the two coordinate frames everything else is measured in.
//!
//! The mat frame is in millimetres with its origin at the mat's centre (the pot's centre), x along
//! the long side, y along the short side, right-handed seen from above. The image frame is in pixels,
//! x right, y down, with the centre of the top-left pixel at (0, 0) (OpenCV's convention).

pub mod camera;
mod frames;
mod mat;
pub mod plane;

pub use camera::{Camera, Intrinsics, Pose, RadialDistortion};
pub use frames::{MatPoint, PixelPoint};
pub use mat::{Baseline, ConvexPolygon, Corner, MatSpec, PotSpec, Segment, FOOT_MM, REAL_DIAMETER_SHARE};
