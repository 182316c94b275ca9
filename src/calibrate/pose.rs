//! The camera's pose over the mat, from the homography and the focal length, and what it is for:
//! parallax. A point h mm above the mat is seen where the ray from the camera through it meets the
//! mat, farther from the nadir than its footprint; knowing the camera's centre undoes that.

use crate::geometry::{MatPoint, PixelPoint};
use nalgebra::{Matrix3, Point3, Vector3};
use serde::{Deserialize, Serialize};

/// Where the focal length came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FocalSource {
    /// A chessboard lens calibration.
    Lens,
    /// The homography's perspective (the camera is tilted enough to show it).
    Homography,
    /// A table camera's usual height (the middle of [`TABLE_CAMERA_HEIGHT_MM`]): the camera is too
    /// nearly overhead for the homography to tell its focal length, and no lens calibration was
    /// given. The mat's size in the picture then gives the focal length that puts the camera at
    /// that height.
    Prior,
}

/// How high a table camera looks down on the mat, in mm: overhead at 1.3–1.8 m (the domain's
/// figures). Without a lens calibration, a camera nearly overhead is put half way.
pub const TABLE_CAMERA_HEIGHT_MM: [f64; 2] = [1300.0, 1800.0];
/// A typical webcam's focal length as a share of the frame's larger side (about 70° across): the
/// last resort when no focal length puts the camera at a table camera's height.
pub const PRIOR_FOCAL_PER_WIDTH: f64 = 0.72;
/// Below this tilt off vertical the homography does not pin the focal length down, in degrees.
const MIN_TILT_FOR_FOCAL_DEG: f64 = 4.0;

/// The camera over the mat.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CameraPose {
    /// Focal length, in (ideal) pixels.
    pub focal_px: f64,
    /// Where it came from.
    pub focal_source: FocalSource,
    /// Principal point, in pixels.
    pub principal_px: [f64; 2],
    /// The camera's centre in the mat frame, in mm (z: height above the mat).
    pub centre_mm: [f64; 3],
    /// Rotation mat → camera, row-major.
    pub r_cam_from_mat: [[f64; 3]; 3],
    /// Tilt of the optical axis off vertical, in degrees.
    pub tilt_deg: f64,
    /// One standard deviation of the height, in mm: how well the evidence pins the camera's
    /// distance down (a uniform spread over [`TABLE_CAMERA_HEIGHT_MM`] for the prior). Files
    /// written before this field read as 0.
    #[serde(default)]
    pub height_sigma_mm: f64,
}

impl CameraPose {
    /// The camera's height above the mat, in mm.
    pub fn height_mm(&self) -> f64 {
        self.centre_mm[2]
    }

    /// The point of the mat directly under the camera.
    pub fn nadir(&self) -> MatPoint {
        MatPoint::new(self.centre_mm[0], self.centre_mm[1])
    }

    /// The footprint of a point `h_mm` above the mat whose ray meets the mat (z = 0) at `on_mat`.
    pub fn footprint(&self, on_mat: MatPoint, h_mm: f64) -> MatPoint {
        on_mat + (self.nadir() - on_mat) * (h_mm / self.height_mm())
    }

    /// The same camera described in the mat frame turned half round about the pot ((x, y) → (−x, −y)).
    pub fn half_turned(&self) -> CameraPose {
        let mut r = self.r_cam_from_mat;
        for row in r.iter_mut() {
            row[0] = -row[0];
            row[1] = -row[1];
        }
        let [x, y, z] = self.centre_mm;
        CameraPose { centre_mm: [-x, -y, z], r_cam_from_mat: r, ..*self }
    }

    /// One standard deviation of the parallax correction of a point `h_mm` above the mat whose
    /// ray meets the mat at `on_mat`, in mm, from the uncertainty of the camera's height alone
    /// (the correction is (nadir − p)·h/H; a nadir that moves with the height is not counted).
    pub fn parallax_sigma_mm(&self, on_mat: MatPoint, h_mm: f64) -> f64 {
        let hh = self.height_mm();
        (self.nadir() - on_mat).norm() * h_mm * self.height_sigma_mm / (hh * hh)
    }

    /// The ideal (undistorted) pixel of mat point `p` at height `z_mm`.
    pub fn project(&self, p: MatPoint, z_mm: f64) -> Option<PixelPoint> {
        let r = Matrix3::from_fn(|i, j| self.r_cam_from_mat[i][j]);
        let c = Vector3::from(self.centre_mm);
        let q = r * (Vector3::new(p.x, p.y, z_mm) - c);
        (q.z > 1e-9).then(|| PixelPoint::new(self.focal_px * q.x / q.z + self.principal_px[0], self.focal_px * q.y / q.z + self.principal_px[1]))
    }
}

/// The camera's pose from the homography (mat mm → ideal px) and, when known, the focal length;
/// otherwise the focal length is estimated from the homography or, for a camera nearly overhead,
/// taken as a typical webcam's.
pub fn pose(img_from_mat: &Matrix3<f64>, principal: PixelPoint, width: u32, height: u32, focal: Option<f64>) -> Option<CameraPose> {
    let t = Matrix3::new(1.0, 0.0, -principal.x, 0.0, 1.0, -principal.y, 0.0, 0.0, 1.0);
    let g = t * img_from_mat;
    let webcam = PRIOR_FOCAL_PER_WIDTH * width.max(height) as f64;
    let [h_lo, h_hi] = TABLE_CAMERA_HEIGHT_MM;
    // Uniform over the table camera's range.
    let prior_sigma = (h_hi - h_lo) / 12f64.sqrt();
    let at_height = || focal_for_height(&g, 0.5 * (h_lo + h_hi), webcam).unwrap_or(webcam);
    let (f, source) = match focal {
        Some(f) => (f, FocalSource::Lens),
        None => match estimate_focal(&g) {
            Some(f) if (0.2 * webcam..5.0 * webcam).contains(&f) => {
                let p = decompose(&g, f)?;
                // A perspective too weak to read puts the camera implausibly far (or near):
                // then the table camera's height is the better guess.
                let plausible = (h_lo / PLAUSIBLE_HEIGHT_FACTOR..h_hi * PLAUSIBLE_HEIGHT_FACTOR).contains(&p.height_mm());
                if p.tilt_deg >= MIN_TILT_FOR_FOCAL_DEG && plausible {
                    (f, FocalSource::Homography)
                } else {
                    (at_height(), FocalSource::Prior)
                }
            }
            _ => (at_height(), FocalSource::Prior),
        },
    };
    let mut p = decompose(&g, f)?;
    p.focal_source = source;
    p.principal_px = [principal.x, principal.y];
    p.height_sigma_mm = match source {
        // calibrateCamera's focal length is good to a fraction of a per cent.
        FocalSource::Lens => LENS_HEIGHT_SHARE * p.height_mm(),
        FocalSource::Homography => HOMOGRAPHY_HEIGHT_SHARE * p.height_mm(),
        FocalSource::Prior => prior_sigma,
    };
    Some(p)
}

/// How far outside [`TABLE_CAMERA_HEIGHT_MM`] (as a factor) a height read from the homography is
/// still believed.
const PLAUSIBLE_HEIGHT_FACTOR: f64 = 1.5;
/// Relative uncertainty of the camera's height with a chessboard-calibrated focal length.
const LENS_HEIGHT_SHARE: f64 = 0.003;
/// Relative uncertainty of the camera's height with the focal length from the homography's
/// perspective (a camera tilted by at least [`MIN_TILT_FOR_FOCAL_DEG`]).
const HOMOGRAPHY_HEIGHT_SHARE: f64 = 0.05;

/// The focal length (pixels) that puts the camera `height_mm` above the mat for this homography:
/// for a camera nearly overhead the mat's size in the picture fixes focal length / height, so the
/// height is nearly proportional to the focal length; a few secant steps from `start`.
fn focal_for_height(g: &Matrix3<f64>, height_mm: f64, start: f64) -> Option<f64> {
    let mut f = start;
    for _ in 0..8 {
        let h = decompose(g, f)?.height_mm();
        if !(h.is_finite() && h > 0.0) {
            return None;
        }
        let next = f * height_mm / h;
        if (next - f).abs() < 1e-6 * f {
            return Some(next);
        }
        f = next;
    }
    let h = decompose(g, f)?.height_mm();
    ((h - height_mm).abs() < 0.01 * height_mm).then_some(f)
}

/// Zhang's constraints for square pixels and a known principal point: the homography's first two
/// columns, through K⁻¹, are orthogonal and of equal length.
fn estimate_focal(g: &Matrix3<f64>) -> Option<f64> {
    let (h11, h21, h31) = (g[(0, 0)], g[(1, 0)], g[(2, 0)]);
    let (h12, h22, h32) = (g[(0, 1)], g[(1, 1)], g[(2, 1)]);
    let (a1, b1) = (h11 * h12 + h21 * h22, h31 * h32);
    let (a2, b2) = (h11 * h11 + h21 * h21 - h12 * h12 - h22 * h22, h31 * h31 - h32 * h32);
    let den = a1 * a1 + a2 * a2;
    if den <= 0.0 {
        return None;
    }
    // Least squares for w = 1/f² in a_i·w + b_i = 0.
    let w = -(a1 * b1 + a2 * b2) / den;
    (w > 0.0).then(|| 1.0 / w.sqrt())
}

fn decompose(g: &Matrix3<f64>, f: f64) -> Option<CameraPose> {
    let k_inv = Matrix3::new(1.0 / f, 0.0, 0.0, 0.0, 1.0 / f, 0.0, 0.0, 0.0, 1.0);
    let m = k_inv * g;
    let (m1, m2, m3) = (m.column(0).into_owned(), m.column(1).into_owned(), m.column(2).into_owned());
    let mut lambda = 2.0 / (m1.norm() + m2.norm());
    // The mat is in front of the camera.
    if m3.z * lambda < 0.0 {
        lambda = -lambda;
    }
    let (r1, r2, tr) = (m1 * lambda, m2 * lambda, m3 * lambda);
    let r3 = r1.cross(&r2);
    let approx = Matrix3::from_columns(&[r1, r2, r3]);
    let svd = approx.svd(true, true);
    let r = svd.u? * svd.v_t?;
    let c = -(r.transpose() * tr);
    let centre = Point3::from(c);
    let axis = r.row(2).transpose();
    let tilt_deg = (-axis.z).clamp(-1.0, 1.0).acos().to_degrees();
    Some(CameraPose {
        focal_px: f,
        focal_source: FocalSource::Lens,
        principal_px: [0.0, 0.0],
        centre_mm: [centre.x, centre.y, centre.z],
        r_cam_from_mat: [[r[(0, 0)], r[(0, 1)], r[(0, 2)]], [r[(1, 0)], r[(1, 1)], r[(1, 2)]], [r[(2, 0)], r[(2, 1)], r[(2, 2)]]],
        tilt_deg,
        height_sigma_mm: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::fit::homography_from_4;
    use crate::geometry::{Camera, Intrinsics, MatSpec, Pose, RadialDistortion};

    fn camera(eye: Point3<f64>) -> Camera {
        Camera {
            width: 1920,
            height: 1080,
            intrinsics: Intrinsics { fx: 1350.0, fy: 1350.0, cx: 960.0, cy: 540.0 },
            distortion: RadialDistortion::default(),
            pose: Pose::look_at(eye, Point3::new(20.0, -10.0, 0.0), Vector3::new(0.0, 1.0, 0.0)),
        }
    }

    fn homography(cam: &Camera) -> Matrix3<f64> {
        let c = MatSpec::STANDARD.corners();
        let img = c.map(|m| cam.project(Point3::new(m.x, m.y, 0.0)).expect("in front"));
        homography_from_4(&c, &img).expect("4 points")
    }

    #[test]
    fn recovers_the_camera_and_undoes_parallax() {
        let eye = Point3::new(180.0, -120.0, 1500.0);
        let cam = camera(eye);
        let p = pose(&homography(&cam), PixelPoint::new(960.0, 540.0), 1920, 1080, Some(1350.0)).expect("pose");
        assert!((Point3::from(p.centre_mm) - eye).norm() < 1e-6, "{:?}", p.centre_mm);
        // A point 3 mm up near a corner: where its ray meets the mat, and back to its footprint.
        let top = Point3::new(850.0, 400.0, 3.0);
        let px = cam.project(top).expect("in front");
        let g_inv = homography(&cam).try_inverse().expect("invertible");
        let on_mat = crate::calibrate::fit::apply_inverse(&g_inv, px).expect("on the mat");
        assert!(on_mat.distance(MatPoint::new(top.x, top.y)) > 1.0, "parallax is real");
        let fp = p.footprint(on_mat, 3.0);
        assert!(fp.distance(MatPoint::new(top.x, top.y)) < 1e-6, "{fp:?}");
        let back = p.project(MatPoint::new(top.x, top.y), top.z).expect("in front");
        assert!(back.distance(px) < 1e-6);
    }

    #[test]
    fn a_half_turned_pose_sees_the_turned_point_at_the_same_pixel() {
        let cam = camera(Point3::new(180.0, -120.0, 1500.0));
        let p = pose(&homography(&cam), PixelPoint::new(960.0, 540.0), 1920, 1080, Some(1350.0)).expect("pose");
        let q = p.half_turned();
        let (m, z) = (MatPoint::new(640.0, -310.0), 3.0);
        let (a, b) = (p.project(m, z).expect("in front"), q.project(m * -1.0, z).expect("in front"));
        assert!(a.distance(b) < 1e-9, "{a:?} vs {b:?}");
        assert!((q.height_mm() - p.height_mm()).abs() < 1e-12);
        assert!(q.nadir().distance(p.nadir() * -1.0) < 1e-12);
    }

    #[test]
    fn estimates_the_focal_length_of_a_tilted_camera() {
        let cam = camera(Point3::new(300.0, -200.0, 1450.0));
        let p = pose(&homography(&cam), PixelPoint::new(960.0, 540.0), 1920, 1080, None).expect("pose");
        assert_eq!(p.focal_source, FocalSource::Homography);
        assert!((p.focal_px - 1350.0).abs() < 1.0, "{}", p.focal_px);
        // Straight overhead the homography cannot tell: the prior stands in.
        let cam = camera(Point3::new(20.0, -10.0, 1500.0));
        let p = pose(&homography(&cam), PixelPoint::new(960.0, 540.0), 1920, 1080, None).expect("pose");
        assert_eq!(p.focal_source, FocalSource::Prior);
        // ... and puts the camera half way up a table camera's range, saying how unsure that is.
        assert!((p.height_mm() - 1550.0).abs() < 1.0, "{}", p.height_mm());
        assert!((p.height_sigma_mm - 500.0 / 12f64.sqrt()).abs() < 1e-6);
        // A point 3 mm up at a mat corner: the correction's uncertainty is r·h·σH/H².
        let s = p.parallax_sigma_mm(MatPoint::new(914.4, 457.2), 3.0);
        assert!((0.1..0.3).contains(&s), "{s}");
    }
}
