//! Typed points in the image frame (pixels) and the mat frame (millimetres).

use serde::{Deserialize, Serialize};
use std::ops::{Add, Mul, Sub};

/// A point in the image, in pixels: x right, y down, the centre of the top-left pixel at (0, 0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(from = "[f64; 2]", into = "[f64; 2]")]
pub struct PixelPoint {
    /// Column, in pixels.
    pub x: f64,
    /// Row, in pixels.
    pub y: f64,
}

/// A point on the mat's plane, in millimetres: origin at the mat's centre, x along the 6 ft side,
/// y along the 3 ft side, right-handed seen from above.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(from = "[f64; 2]", into = "[f64; 2]")]
pub struct MatPoint {
    /// Along the mat's long side, in mm.
    pub x: f64,
    /// Along the mat's short side, in mm.
    pub y: f64,
}

macro_rules! point_impls {
    ($t:ident) => {
        impl $t {
            /// A point from its two coordinates.
            pub const fn new(x: f64, y: f64) -> Self {
                Self { x, y }
            }

            /// Euclidean distance to another point in the same frame.
            pub fn distance(self, other: Self) -> f64 {
                let (dx, dy) = (self.x - other.x, self.y - other.y);
                (dx * dx + dy * dy).sqrt()
            }

            /// Length of the vector from the origin to this point.
            pub fn norm(self) -> f64 {
                (self.x * self.x + self.y * self.y).sqrt()
            }

            /// Dot product, treating both points as vectors from the origin.
            pub fn dot(self, other: Self) -> f64 {
                self.x * other.x + self.y * other.y
            }

            /// Whether both coordinates are finite.
            pub fn is_finite(self) -> bool {
                self.x.is_finite() && self.y.is_finite()
            }
        }

        impl From<[f64; 2]> for $t {
            fn from([x, y]: [f64; 2]) -> Self {
                Self { x, y }
            }
        }

        impl From<$t> for [f64; 2] {
            fn from(p: $t) -> Self {
                [p.x, p.y]
            }
        }

        impl Add for $t {
            type Output = $t;
            fn add(self, o: $t) -> $t {
                $t::new(self.x + o.x, self.y + o.y)
            }
        }

        impl Sub for $t {
            type Output = $t;
            fn sub(self, o: $t) -> $t {
                $t::new(self.x - o.x, self.y - o.y)
            }
        }

        impl Mul<f64> for $t {
            type Output = $t;
            fn mul(self, k: f64) -> $t {
                $t::new(self.x * k, self.y * k)
            }
        }
    };
}

point_impls!(PixelPoint);
point_impls!(MatPoint);
