//! Where the camera is and what it does: an overhead webcam framing the whole mat, or a hand-held
//! close-up of a few winks; and the camera's photometric effects.

use super::render::Effects;
use crate::geometry::{Camera, Intrinsics, MatPoint, MatSpec, Pose, RadialDistortion};
use nalgebra::{Point3, Vector3};
use rand::Rng;
use rand_pcg::Pcg64;
use std::f64::consts::TAU;

/// Largest tilt of the overhead camera off vertical, in degrees.
pub const MAX_TILT_DEG: f64 = 10.0;

/// An overhead camera 1.3–1.8 m above the mat, up to 10° off vertical, turned any way about the
/// vertical (mostly with the mat's long side across the frame), with barrel distortion k1 from 0
/// to −0.3 (and the positive k2 such lenses have), its focal length set so the mat fills 80–95%
/// of the frame.
pub fn overhead(rng: &mut Pcg64, mat: &MatSpec, width: u32, height: u32) -> Camera {
    let height_mm = rng.random_range(1300.0..1800.0);
    let tilt = rng.random_range(0.0..MAX_TILT_DEG).to_radians();
    let tilt_dir = rng.random_range(0.0..TAU);
    let yaw = if rng.random_bool(0.7) {
        rng.random_range(-0.25..0.25) + if rng.random_bool(0.5) { 0.0 } else { std::f64::consts::PI }
    } else {
        rng.random_range(0.0..TAU)
    };
    let target = Point3::new(rng.random_range(-40.0..40.0), rng.random_range(-25.0..25.0), 0.0);
    let eye = target + Vector3::new(tilt.sin() * tilt_dir.cos(), tilt.sin() * tilt_dir.sin(), tilt.cos()) * height_mm;
    let up = Vector3::new(-yaw.sin(), yaw.cos(), 0.0);
    let pose = Pose::look_at(eye, target, up);
    let mut k1: f64 = if rng.random_bool(0.25) { 0.0 } else { rng.random_range(-0.3..0.0) };
    // Webcam lenses with strong barrel distortion have a positive k2 that keeps the mapping
    // one-to-one over the sensor; k2 > 0.45 k1² makes it so for every radius.
    let k2_per_k1_sq = rng.random_range(0.5..1.2);
    let (cx, cy) = (width as f64 / 2.0 + rng.random_range(-8.0..8.0), height as f64 / 2.0 + rng.random_range(-6.0..6.0));
    let fill = rng.random_range(0.80..0.95);
    let (hl, hw) = (mat.length_mm / 2.0 + 15.0, mat.width_mm / 2.0 + 15.0);
    loop {
        let distortion = RadialDistortion { k1, k2: k2_per_k1_sq * k1 * k1, k3: 0.0 };
        // With unit focal length, find how far the mat's corners (and a margin) reach from the
        // principal point in normalised, distorted units; the focal length scales that linearly.
        let mut reach_x: f64 = 0.0;
        let mut reach_y: f64 = 0.0;
        for (sx, sy) in [(-1.0, -1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 1.0), (0.0, 1.0), (0.0, -1.0), (1.0, 0.0), (-1.0, 0.0)] {
            let p = pose.r_cam_from_mat * Vector3::new(sx * hl, sy * hw, 0.0) + pose.t_cam_from_mat;
            let (x, y) = (p.x / p.z, p.y / p.z);
            let f = distortion.factor(x * x + y * y);
            reach_x = reach_x.max((x * f).abs());
            reach_y = reach_y.max((y * f).abs());
        }
        let focal = fill * f64::min((width as f64 / 2.0 - 8.0) / reach_x, (height as f64 / 2.0 - 6.0) / reach_y);
        // A real lens images its whole sensor: the frame's corners must lie well inside the
        // radius where the model turns back.
        let corner = (cx.max(width as f64 - cx)).hypot(cy.max(height as f64 - cy)) / focal;
        if corner <= 0.85 * distortion.max_distorted_radius() || k1 > -1e-3 {
            return Camera { width, height, intrinsics: Intrinsics { fx: focal, fy: focal, cx, cy }, distortion, pose };
        }
        k1 *= 0.8;
    }
}

/// A hand-held close-up: 10–30 cm from `target`, up to 30° oblique, framing about `extent_mm`
/// around it.
pub fn closeup(rng: &mut Pcg64, target: MatPoint, extent_mm: f64, width: u32, height: u32) -> Camera {
    let dist = rng.random_range(100.0..300.0);
    let tilt = rng.random_range(0.0..30.0f64).to_radians();
    let dir = rng.random_range(0.0..TAU);
    let t = Point3::new(target.x, target.y, 0.0);
    let eye = t + Vector3::new(tilt.sin() * dir.cos(), tilt.sin() * dir.sin(), tilt.cos()) * dist;
    let yaw = rng.random_range(0.0..TAU);
    let pose = Pose::look_at(eye, t, Vector3::new(yaw.cos(), yaw.sin(), 0.0));
    let half = height.min(width) as f64 / 2.0;
    let focal = half * dist / (extent_mm * rng.random_range(0.9..1.4));
    let k1 = rng.random_range(-0.08..0.0);
    Camera {
        width,
        height,
        intrinsics: Intrinsics { fx: focal, fy: focal, cx: width as f64 / 2.0, cy: height as f64 / 2.0 },
        distortion: RadialDistortion { k1, k2: 0.0, k3: 0.0 },
        pose,
    }
}

/// The camera's photometric effects for one frame.
pub fn effects(rng: &mut Pcg64) -> Effects {
    Effects {
        exposure: rng.random_range(0.8..1.25),
        vignette: rng.random_range(0.0..0.35),
        blur_px: rng.random_range(0.3..0.9),
        noise_levels: rng.random_range(0.5..3.0),
        jpeg_quality: rng.random_range(72..=95),
        seed: rng.random(),
    }
}
