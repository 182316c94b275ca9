//! A pinhole camera with radial lens distortion, posed over the mat: mat (mm, 3-D) ↔ image (px).
//!
//! The model is OpenCV's with the tangential terms zero: a point in the camera frame (x right,
//! y down, z forward) goes to normalised coordinates (x/z, y/z), is scaled radially by
//! 1 + k1·r² + k2·r⁴ + k3·r⁶, and then by the focal lengths to pixels.

use super::PixelPoint;
use nalgebra::{Point3, Rotation3, Vector3};
use serde::{Deserialize, Serialize};

/// Focal lengths and principal point, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Intrinsics {
    /// Focal length along x, in pixels.
    pub fx: f64,
    /// Focal length along y, in pixels.
    pub fy: f64,
    /// Principal point x, in pixels.
    pub cx: f64,
    /// Principal point y, in pixels.
    pub cy: f64,
}

/// Radial distortion coefficients (OpenCV's k1, k2, k3; barrel distortion has k1 < 0).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RadialDistortion {
    /// Coefficient of r².
    pub k1: f64,
    /// Coefficient of r⁴.
    pub k2: f64,
    /// Coefficient of r⁶.
    pub k3: f64,
}

impl RadialDistortion {
    /// The radial scale factor at normalised radius² `r2`.
    pub fn factor(&self, r2: f64) -> f64 {
        1.0 + r2 * (self.k1 + r2 * (self.k2 + r2 * self.k3))
    }

    /// The largest distorted normalised radius the model maps one-to-one: where
    /// r·(1 + k1 r² + k2 r⁴ + k3 r⁶) stops growing (searched up to r = 3).
    pub fn max_distorted_radius(&self) -> f64 {
        let mut r = 0.0;
        while r < 3.0 {
            let r2 = r * r;
            let slope = 1.0 + r2 * (3.0 * self.k1 + r2 * (5.0 * self.k2 + r2 * 7.0 * self.k3));
            if slope <= 0.0 {
                break;
            }
            r += 1e-3;
        }
        r * self.factor(r * r)
    }

    /// The undistorted normalised radius whose distorted radius is `rd`, by Newton's method;
    /// `None` where the model folds back (beyond its valid field).
    pub fn undistort_radius(&self, rd: f64) -> Option<f64> {
        let mut r = rd;
        for _ in 0..30 {
            let r2 = r * r;
            let f = r * self.factor(r2) - rd;
            let df = 1.0 + r2 * (3.0 * self.k1 + r2 * (5.0 * self.k2 + r2 * 7.0 * self.k3));
            if df <= 1e-6 {
                return None;
            }
            let step = f / df;
            r -= step;
            if step.abs() < 1e-14 {
                break;
            }
        }
        (r.is_finite() && r >= 0.0).then_some(r)
    }
}

/// A camera's pose: `p_cam = r_cam_from_mat · p_mat + t_cam_from_mat` (mm).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pose {
    /// Rotation from the mat frame to the camera frame.
    pub r_cam_from_mat: Rotation3<f64>,
    /// Translation, in mm (the mat origin in camera coordinates).
    pub t_cam_from_mat: Vector3<f64>,
}

impl Pose {
    /// A camera at `eye` (mat frame, mm) looking at `target`, with `up_hint` roughly towards the
    /// top of the image.
    pub fn look_at(eye: Point3<f64>, target: Point3<f64>, up_hint: Vector3<f64>) -> Pose {
        let z = (target - eye).normalize();
        // Image y points down, so the camera's -y is towards `up_hint`.
        let x = z.cross(&up_hint).normalize();
        let y = z.cross(&x);
        let m = nalgebra::Matrix3::from_rows(&[x.transpose(), y.transpose(), z.transpose()]);
        let r = Rotation3::from_matrix_unchecked(m);
        Pose { r_cam_from_mat: r, t_cam_from_mat: -(r * eye.coords) }
    }

    /// The camera's centre in the mat frame, in mm.
    pub fn centre_mat(&self) -> Point3<f64> {
        Point3::from(-(self.r_cam_from_mat.inverse() * self.t_cam_from_mat))
    }
}

/// A posed camera with its image size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Camera {
    /// Image width, in pixels.
    pub width: u32,
    /// Image height, in pixels.
    pub height: u32,
    /// Focal lengths and principal point.
    pub intrinsics: Intrinsics,
    /// Lens distortion.
    pub distortion: RadialDistortion,
    /// Where the camera is and where it looks.
    pub pose: Pose,
}

impl Camera {
    /// The image point of `p_mat` (mm, mat frame, z up), or `None` if it is behind the camera.
    pub fn project(&self, p_mat: Point3<f64>) -> Option<PixelPoint> {
        let p = self.pose.r_cam_from_mat * p_mat.coords + self.pose.t_cam_from_mat;
        if p.z <= 1e-9 {
            return None;
        }
        let (x, y) = (p.x / p.z, p.y / p.z);
        let f = self.distortion.factor(x * x + y * y);
        let k = &self.intrinsics;
        Some(PixelPoint::new(k.fx * x * f + k.cx, k.fy * y * f + k.cy))
    }

    /// The unit direction, in the mat frame, of the ray through image point `px` (from the
    /// camera centre), or `None` outside the lens model's valid field.
    pub fn ray_dir(&self, px: PixelPoint) -> Option<Vector3<f64>> {
        let k = &self.intrinsics;
        let (xd, yd) = ((px.x - k.cx) / k.fx, (px.y - k.cy) / k.fy);
        let rd = (xd * xd + yd * yd).sqrt();
        let (x, y) = if rd < 1e-15 {
            (xd, yd)
        } else {
            let r = self.distortion.undistort_radius(rd)?;
            (xd * r / rd, yd * r / rd)
        };
        let d_cam = Vector3::new(x, y, 1.0).normalize();
        Some(self.pose.r_cam_from_mat.inverse() * d_cam)
    }

    /// Where the ray through `px` meets the horizontal plane at height `z_mm` (mat frame).
    pub fn unproject_to_plane(&self, px: PixelPoint, z_mm: f64) -> Option<Point3<f64>> {
        let o = self.pose.centre_mat();
        let d = self.ray_dir(px)?;
        if d.z.abs() < 1e-12 {
            return None;
        }
        let t = (z_mm - o.z) / d.z;
        (t > 0.0).then(|| o + d * t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn camera(k1: f64) -> Camera {
        Camera {
            width: 1920,
            height: 1080,
            intrinsics: Intrinsics { fx: 1400.0, fy: 1400.0, cx: 960.0, cy: 540.0 },
            distortion: RadialDistortion { k1, k2: 0.0, k3: 0.0 },
            pose: Pose::look_at(Point3::new(30.0, -40.0, 1500.0), Point3::new(0.0, 0.0, 0.0), Vector3::new(0.0, 1.0, 0.0)),
        }
    }

    #[test]
    fn looks_down_at_the_target() {
        let cam = camera(0.0);
        let c = cam.project(Point3::new(0.0, 0.0, 0.0)).expect("in front");
        assert!((c.x - 960.0).abs() < 1e-6 && (c.y - 540.0).abs() < 1e-6, "{c:?}");
        // +y on the mat is up in the image (smaller row) with this up hint.
        let up = cam.project(Point3::new(0.0, 100.0, 0.0)).expect("in front");
        assert!(up.y < 540.0);
        let right = cam.project(Point3::new(100.0, 0.0, 0.0)).expect("in front");
        assert!(right.x > 960.0, "right-handed seen from above: +x to the right");
        assert!((cam.pose.centre_mat() - Point3::new(30.0, -40.0, 1500.0)).norm() < 1e-9);
    }

    proptest! {
        #[test]
        fn project_and_unproject_round_trip(x in -900.0f64..900.0, y in -450.0f64..450.0, z in 0.0f64..40.0, k1 in -0.3f64..0.0) {
            let cam = camera(k1);
            let p = Point3::new(x, y, z);
            let px = cam.project(p).expect("in front");
            let back = cam.unproject_to_plane(px, z).expect("hits the plane");
            prop_assert!((back - p).norm() < 1e-6, "{p:?} -> {px:?} -> {back:?}");
        }
    }
}
