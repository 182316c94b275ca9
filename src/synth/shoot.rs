//! Where the camera is and what it does: an overhead webcam framing the whole mat, or a hand-held
//! close-up of a few winks; and the camera's photometric effects.

use super::render::{Effects, Look};
use crate::geometry::{Camera, Intrinsics, MatPoint, MatSpec, Pose, RadialDistortion};
use nalgebra::{Point3, Vector3};
use rand::Rng;
use rand_pcg::Pcg64;
use std::f64::consts::TAU;

/// Largest tilt of the overhead camera off vertical, in degrees.
pub const MAX_TILT_DEG: f64 = 10.0;

/// How an overhead camera looks at the mat: the point it aims at, the unit direction from there
/// to the camera (up to 10° off vertical), and the image's up direction (any turn about the
/// vertical, mostly with the mat's long side across the frame).
struct View {
    target: Point3<f64>,
    towards_camera: Vector3<f64>,
    up: Vector3<f64>,
}

/// A random view, and a camera height of 1.3–1.8 m drawn first when `with_height` (bodies of
/// fixed focal length find their height instead). The draws keep their order, so a seed always
/// gives the same view.
fn random_view(rng: &mut Pcg64, with_height: bool) -> (View, f64) {
    let height_mm = if with_height { rng.random_range(1300.0..1800.0) } else { 0.0 };
    let tilt = rng.random_range(0.0..MAX_TILT_DEG).to_radians();
    let tilt_dir = rng.random_range(0.0..TAU);
    let yaw = if rng.random_bool(0.7) {
        rng.random_range(-0.25..0.25) + if rng.random_bool(0.5) { 0.0 } else { std::f64::consts::PI }
    } else {
        rng.random_range(0.0..TAU)
    };
    let target = Point3::new(rng.random_range(-40.0..40.0), rng.random_range(-25.0..25.0), 0.0);
    let view = View {
        target,
        towards_camera: Vector3::new(tilt.sin() * tilt_dir.cos(), tilt.sin() * tilt_dir.sin(), tilt.cos()),
        up: Vector3::new(-yaw.sin(), yaw.cos(), 0.0),
    };
    (view, height_mm)
}

/// An overhead camera 1.3–1.8 m above the mat, up to 10° off vertical, turned any way about the
/// vertical (mostly with the mat's long side across the frame), with barrel distortion k1 from 0
/// to −0.3 (and the positive k2 such lenses have), its focal length set so the mat fills 80–95%
/// of the frame.
pub fn overhead(rng: &mut Pcg64, mat: &MatSpec, width: u32, height: u32) -> Camera {
    let (view, height_mm) = random_view(rng, true);
    let pose = Pose::look_at(view.target + view.towards_camera * height_mm, view.target, view.up);
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
        look: Look::NEUTRAL,
    }
}

/// A camera's colour processing drawn from what webcams do: white balance off by up to a fifth
/// either way, tone curves from gamma 1.8 to 2.6, saturation and contrast ±30%, some sharpening.
pub fn look(rng: &mut Pcg64) -> Look {
    Look {
        wb_gains: (rng.random_range(0.82..1.2), rng.random_range(0.8..1.2)),
        gamma: rng.random_range(1.8..2.6),
        saturation: rng.random_range(0.7..1.3),
        contrast: rng.random_range(0.8..1.25),
        sharpen: if rng.random_bool(0.5) { rng.random_range(0.3..1.2) } else { 0.0 },
    }
}

/// A camera body: focal length, principal point and lens, fixed by `seed` so that a set of shots
/// (chessboards and frames of the mat) share one camera. `k1` overrides the lens's barrel
/// distortion.
pub fn body(seed: u64, width: u32, height: u32, k1: Option<f64>) -> (Intrinsics, RadialDistortion) {
    use rand::SeedableRng;
    let mut rng = Pcg64::seed_from_u64(seed ^ 0x00CA_3E7A);
    let f = 0.72 * width.max(height) as f64 * rng.random_range(0.9..1.1);
    let (cx, cy) = (width as f64 / 2.0 + rng.random_range(-8.0..8.0), height as f64 / 2.0 + rng.random_range(-6.0..6.0));
    let drawn = if rng.random_bool(0.25) { 0.0 } else { rng.random_range(-0.3..0.0) };
    let k1 = k1.unwrap_or(drawn);
    let k2 = rng.random_range(0.5..1.2) * k1 * k1;
    (Intrinsics { fx: f, fy: f, cx, cy }, RadialDistortion { k1, k2, k3: 0.0 })
}

/// An overhead camera with a given body: tilted and turned as [`overhead`] does, at the height
/// that makes the mat fill 80–95% of the frame.
pub fn overhead_with(rng: &mut Pcg64, mat: &MatSpec, intrinsics: Intrinsics, distortion: RadialDistortion, width: u32, height: u32) -> Camera {
    let (view, _) = random_view(rng, false);
    let (target, up, dir) = (view.target, view.up, view.towards_camera);
    let fill = rng.random_range(0.80..0.95);
    let (hl, hw) = (mat.length_mm / 2.0 + 15.0, mat.width_mm / 2.0 + 15.0);
    let make = |dist: f64| {
        let pose = Pose::look_at(target + dir * dist, target, up);
        Camera { width, height, intrinsics, distortion, pose }
    };
    // How much of the frame the mat takes at a distance: the largest share along either axis.
    let share = |cam: &Camera| {
        let mut s: f64 = 0.0;
        for (sx, sy) in [(-1.0, -1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 1.0)] {
            match cam.project(Point3::new(sx * hl, sy * hw, 0.0)) {
                Some(p) => {
                    s = s.max(((p.x - intrinsics.cx) / (width as f64 / 2.0)).abs()).max(((p.y - intrinsics.cy) / (height as f64 / 2.0)).abs());
                }
                None => return f64::INFINITY,
            }
        }
        s
    };
    let (mut lo, mut hi) = (300.0, 8000.0);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if share(&make(mid)) > fill {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    make(hi)
}

/// A chessboard shot with a given body: the board 35–70 cm from the camera, turned up to 40°
/// away from facing it, somewhere in the frame, wholly in view.
pub fn chessboard_shot(rng: &mut Pcg64, intrinsics: Intrinsics, distortion: RadialDistortion, width: u32, height: u32) -> (Camera, super::scene::Chessboard) {
    let eye = Point3::new(0.0, 0.0, 1500.0);
    let pose = Pose::look_at(eye, Point3::new(0.0, 0.0, 0.0), Vector3::new(0.0, 1.0, 0.0));
    let cam = Camera { width, height, intrinsics, distortion, pose };
    let (inner, square, margin) = ((9u32, 6u32), 25.0, 15.0);
    let mut board = None;
    for attempt in 0..200 {
        let shrink = 1.0 - attempt as f64 / 250.0;
        let target = crate::geometry::PixelPoint::new(
            width as f64 * rng.random_range(0.3..0.7),
            height as f64 * rng.random_range(0.3..0.7),
        );
        let Some(ray) = cam.ray_dir(target) else { continue };
        let dist = rng.random_range(350.0..700.0) / shrink.max(0.3);
        let centre = eye + ray * dist;
        // Facing the camera, then turned about a random axis in its plane, then spun.
        let facing = -ray;
        let a = facing.cross(&Vector3::z()).try_normalize(1e-9).unwrap_or_else(Vector3::x);
        let b = facing.cross(&a);
        let turn_axis = (a * rng.random_range(-1.0f64..1.0) + b * rng.random_range(-1.0f64..1.0)).try_normalize(1e-9).unwrap_or(a);
        let rot = nalgebra::Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(turn_axis), rng.random_range(0.0..40.0f64).to_radians());
        let spin = nalgebra::Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(facing), rng.random_range(0.0..TAU));
        let (u, v) = (rot * spin * a, rot * spin * b);
        let w_mm = (inner.0 + 1) as f64 * square;
        let h_mm = (inner.1 + 1) as f64 * square;
        let origin = centre - u * (w_mm / 2.0 - square) - v * (h_mm / 2.0 - square);
        let c = super::scene::Chessboard { origin, u, v, inner, square_mm: square, margin_mm: margin };
        let corners = [(-1.0, -1.0), (inner.0 as f64, -1.0), (-1.0, inner.1 as f64), (inner.0 as f64, inner.1 as f64)];
        let in_view = corners.iter().all(|&(x, y)| {
            let m = margin / square;
            let p = origin + u * ((x + x.signum() * m) * square) + v * ((y + y.signum() * m) * square);
            cam.project(p).is_some_and(|q| q.x > 10.0 && q.y > 10.0 && q.x < width as f64 - 10.0 && q.y < height as f64 - 10.0)
        });
        if in_view {
            board = Some(c);
            break;
        }
    }
    let board = board.unwrap_or(super::scene::Chessboard {
        origin: Point3::new(-100.0, -62.5, 900.0),
        u: Vector3::x(),
        v: Vector3::y(),
        inner,
        square_mm: square,
        margin_mm: margin,
    });
    (cam, board)
}
