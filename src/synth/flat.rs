//! A second, deliberately simple way to draw a scene: polygons filled with flat colours, as a
//! 2-D drawing program or a quick game engine would, instead of traced rays. The winks are flat
//! discs with a darker bevelled rim, a darker wall where it shows and a white glint; every object
//! casts a blurred drop shadow, offset away from the lamp; the pot is a flat-shaded cup.
//!
//! The detector must not depend on how one renderer happens to draw: this style draws the same
//! scene (the same truth) with other edges, shading and shadows, so `winkeye eval` on both shows
//! what a change does beyond the renderer it was built on. Hands, squidgers and chessboards are
//! taken from the traced picture, pixel for pixel.

use super::render::{Light, Surface};
use super::scene::{Disc, Rgb3, Scene};
use crate::geometry::camera::Camera;
use crate::geometry::PixelPoint;
use crate::report::position::WinkState;
use nalgebra::{Point3, Vector3};
use opencv::core::{Mat, Point, Scalar, Size, Vec3f, Vector, BORDER_REFLECT_101, CV_32FC1, CV_32FC3};
use opencv::prelude::*;
use opencv::imgproc;

/// Drawing is done this many times finer than the frame, then averaged down (anti-aliasing).
const SUPERSAMPLE: i32 = 3;
/// Fixed-point fraction bits of polygon vertices (OpenCV's `shift`).
const SHIFT: i32 = 4;
/// Points round each projected circle.
const CIRCLE_POINTS: usize = 72;
/// Points along each side of a baseline's painted strip.
const BASELINE_POINTS: usize = 32;
/// A wink's bevelled rim: this wide (mm) and this much darker than its face.
const BEVEL_MM: f64 = 0.9;
const BEVEL_SHADE: f64 = 0.6;
/// A wink's wall, where it shows, this much darker than its face.
const WALL_SHADE: f64 = 0.3;
/// Drop shadows: how dark at their darkest, their blur (sd, mm), and how far they reach past
/// the object's outline (mm).
const SHADOW_DEPTH: f64 = 0.45;
const SHADOW_BLUR_MM: f64 = 2.0;
const SHADOW_GROW_MM: f64 = 0.5;
/// Brightness of the flat-lit surfaces (linear), as the ambient and the lamp give together.
const LIGHT: f64 = 0.85;

/// Light reaching the sensor, drawn flat, with the traced `light`'s hands, squidgers and boards
/// pasted in; blurred by `blur_px` as the traced light is.
pub fn draw(scene: &Scene, cam: &Camera, light: &Light, blur_px: f64) -> opencv::Result<Vec<Vec3f>> {
    let (w, h) = (cam.width as i32, cam.height as i32);
    let s = if w.max(h) > 3000 { 2 } else { SUPERSAMPLE };
    let mut canvas = Mat::new_rows_cols_with_default(h * s, w * s, CV_32FC3, colour(scene.table, LIGHT))?;
    let poly = |pts: &[PixelPoint]| fixed_point(pts, s);
    let fill = |m: &mut Mat, pts: &[PixelPoint], c: Scalar| fill_polygon(m, pts, s, c);
    // A table's grain: faint streaks along the frame.
    let mut rng = scene.table_seed;
    let mut next = || {
        rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (rng >> 33) as f64 / (1u64 << 31) as f64
    };
    let streak = 4 * s;
    let mut x = 0;
    while x < w * s {
        let k = 1.0 + 0.12 * (next() - 0.5);
        imgproc::rectangle(&mut canvas, opencv::core::Rect::new(x, 0, streak, h * s), colour(scene.table, LIGHT * k), -1, imgproc::LINE_8, 0)?;
        x += streak;
    }
    // The mat: its outline projected point by point (the lens bends straight edges).
    let mat = &scene.mat.spec;
    let (hl, hw) = (mat.length_mm / 2.0, mat.width_mm / 2.0);
    let corners = [(-hl, -hw), (hl, -hw), (hl, hw), (-hl, hw)];
    let mut outline = Vec::new();
    for k in 0..4 {
        let (a, b) = (corners[k], corners[(k + 1) % 4]);
        for i in 0..64 {
            let t = i as f64 / 64.0;
            outline.extend(cam.project(Point3::new(a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t, 0.0)));
        }
    }
    // Seen from near (a close-up) the mat's outline reaches far outside the lens's field, where
    // the lens model folds back: the felt is then where the traced picture shows it.
    let (fw, fh) = (w as f64, h as f64);
    let sane = outline.len() == 4 * 64 && outline.iter().all(|p| p.x > -fw && p.x < 2.0 * fw && p.y > -fh && p.y < 2.0 * fh);
    if sane {
        fill(&mut canvas, &outline, colour(scene.mat.felt, LIGHT))?;
    } else {
        let felt: Vec<u8> = light.surfaces.iter().map(|t| if matches!(t, Surface::Felt | Surface::Paint) { 255 } else { 0 }).collect();
        let mask = Mat::new_rows_cols_with_data(h, w, &felt)?;
        let mut big = Mat::default();
        imgproc::resize(&mask, &mut big, Size::new(w * s, h * s), 0.0, 0.0, imgproc::INTER_NEAREST)?;
        let felt_colour = colour(scene.mat.felt, LIGHT);
        canvas.set_to(&felt_colour, &big)?;
    }
    if let (Some((paint, width_mm)), true) = (scene.mat.baselines, sane) {
        for b in mat.baselines() {
            let (a, c) = (b.segment.a, b.segment.b);
            let along = (c - a) * (1.0 / (c - a).norm().max(1e-9));
            let side = crate::geometry::MatPoint::new(-along.y, along.x) * (width_mm / 2.0);
            // Point by point along both sides, as the outline: the lens bends a baseline too
            // (until session 32 a straight quadrilateral, which pulled the calibration's fit of
            // the lens up to 1.5 mm off over the mat).
            let side_points = |s: crate::geometry::MatPoint, reverse: bool| {
                (0..=BASELINE_POINTS).map(move |i| {
                    let t = i as f64 / BASELINE_POINTS as f64;
                    let t = if reverse { 1.0 - t } else { t };
                    a + (c - a) * t + s
                })
            };
            let strip: Vec<PixelPoint> = side_points(side, false).chain(side_points(side * -1.0, true)).filter_map(|p| cam.project(Point3::new(p.x, p.y, 0.0))).collect();
            fill(&mut canvas, &strip, colour(paint, LIGHT))?;
        }
    }
    // Drop shadows, all at once: discs offset away from the lamp by their height, blurred.
    let lamp = scene.light.position;
    // The scale where the winks are (a close-up's mat centre may be far out of view).
    let n = scene.winks.len().max(1) as f64;
    let at = scene.winks.iter().fold(Point3::origin(), |a, w| a + w.disc.centre.coords / n);
    let ppm = px_per_mm(cam, Point3::new(at.x, at.y, 0.0));
    let mut shade = Mat::new_rows_cols_with_default(h * s, w * s, CV_32FC1, Scalar::all(0.0))?;
    let shadow_of = |centre: Point3<f64>, radius: f64, top: f64| -> Vec<PixelPoint> {
        let away = Vector3::new(centre.x - lamp.x, centre.y - lamp.y, 0.0) * (top / (lamp.z - top).max(1.0));
        let c = Point3::new(centre.x + away.x, centre.y + away.y, 0.0);
        circle(cam, c, Vector3::z(), radius + SHADOW_GROW_MM)
    };
    for wk in &scene.winks {
        let top = wk.disc.top_centre().z;
        fill(&mut shade, &shadow_of(wk.disc.centre, wk.disc.radius_mm, top.max(0.5)), Scalar::all(1.0))?;
    }
    if let Some(pot) = &scene.pot {
        fill(&mut shade, &shadow_of(Point3::origin(), pot.spec.base_diameter_mm / 2.0 + 2.0, pot.spec.height_mm), Scalar::all(1.0))?;
    }
    let sigma = (SHADOW_BLUR_MM * ppm * s as f64).max(0.5);
    let mut soft = Mat::default();
    imgproc::gaussian_blur(&shade, &mut soft, Size::new(0, 0), sigma, sigma, BORDER_REFLECT_101)?;
    {
        let sh = soft.data_typed::<f32>()?.to_vec();
        let px = canvas.data_typed_mut::<Vec3f>()?;
        for (p, d) in px.iter_mut().zip(sh) {
            let k = 1.0 - SHADOW_DEPTH as f32 * d.clamp(0.0, 1.0);
            for c in 0..3 {
                p[c] *= k;
            }
        }
    }
    // The pot: its wall, the dark inside of its opening, winks in it, its rim.
    let potted: Vec<usize> = (0..scene.winks.len()).filter(|&i| scene.pot.is_some() && scene.winks[i].state == WinkState::Potted).collect();
    if let Some(pot) = &scene.pot {
        let (base, top, height) = (pot.spec.base_diameter_mm / 2.0, pot.spec.top_diameter_mm / 2.0, pot.spec.height_mm);
        let mut body = circle(cam, Point3::origin(), Vector3::z(), base);
        body.extend(circle(cam, Point3::new(0.0, 0.0, height), Vector3::z(), top));
        fill(&mut canvas, &hull(body), colour(pot.material.albedo, LIGHT * 0.7))?;
        fill(&mut canvas, &circle(cam, Point3::new(0.0, 0.0, height), Vector3::z(), top), colour(pot.material.albedo, LIGHT * 0.35))?;
        for &i in &potted {
            draw_wink(&mut canvas, cam, &scene.winks[i].disc, lamp, &fill)?;
        }
        let rim = circle(cam, Point3::new(0.0, 0.0, height), Vector3::z(), top);
        let mut all = Vector::<Vector<Point>>::new();
        all.push(poly(&rim));
        imgproc::polylines(&mut canvas, &all, true, colour(pot.material.albedo, LIGHT * 1.1), (1.5 * ppm * s as f64).round().max(1.0) as i32, imgproc::LINE_8, SHIFT)?;
    }
    // Winks, lowest first.
    let mut order: Vec<usize> = (0..scene.winks.len()).filter(|i| !potted.contains(i)).collect();
    order.sort_by(|&a, &b| (scene.winks[a].level, scene.winks[a].disc.top_centre().z).partial_cmp(&(scene.winks[b].level, scene.winks[b].disc.top_centre().z)).unwrap_or(std::cmp::Ordering::Equal));
    for i in order {
        draw_wink(&mut canvas, cam, &scene.winks[i].disc, lamp, &fill)?;
    }
    // Down to the frame's pixels; what this style does not draw, from the traced light.
    let mut small = Mat::default();
    imgproc::resize(&canvas, &mut small, Size::new(w, h), 0.0, 0.0, imgproc::INTER_AREA)?;
    let mut out = small.data_typed::<Vec3f>()?.to_vec();
    for (i, (o, surface)) in out.iter_mut().zip(&light.surfaces).enumerate() {
        if matches!(surface, Surface::Hand(_) | Surface::Squidger(_) | Surface::Board | Surface::Nothing) {
            *o = light.linear[i];
        }
    }
    super::effects::blur(&out, w as usize, h as usize, blur_px)
}

/// Frame points as OpenCV's fixed-point vertices on a canvas `s` times finer: frame pixel
/// centres are integers, and so are the canvas's.
fn fixed_point(pts: &[PixelPoint], s: i32) -> Vector<Point> {
    let k = (s << SHIFT) as f64;
    let half = (1 << SHIFT) as f64 * 0.5;
    pts.iter().map(|p| Point::new(((p.x + 0.5) * k - half).round() as i32, ((p.y + 0.5) * k - half).round() as i32)).collect()
}

/// Fills the polygon `pts` (frame pixels) on a canvas `s` times finer than the frame. OpenCV
/// fills every canvas pixel its outline touches, half a canvas pixel beyond the outline all round:
/// the outline is moved in by as much first, so that the drawn area is the polygon's.
fn fill_polygon(m: &mut Mat, pts: &[PixelPoint], s: i32, c: Scalar) -> opencv::Result<()> {
    if pts.len() < 3 {
        return Ok(());
    }
    let mut all = Vector::<Vector<Point>>::new();
    all.push(fixed_point(&inset(pts, 0.5 / s as f64), s));
    imgproc::fill_poly(m, &all, c, imgproc::LINE_8, SHIFT, Point::new(0, 0))
}

/// A polygon with every edge moved `d` inwards (vertices along their mitres).
fn inset(pts: &[PixelPoint], d: f64) -> Vec<PixelPoint> {
    let n = pts.len();
    let area2: f64 = (0..n).map(|i| pts[i].x * pts[(i + 1) % n].y - pts[(i + 1) % n].x * pts[i].y).sum();
    // Inward normal of the edge from a to b: to the left of it when the outline runs
    // anticlockwise in y-down frame coordinates (negative signed area), else to the right.
    let sign = if area2 < 0.0 { 1.0 } else { -1.0 };
    let normal = |a: PixelPoint, b: PixelPoint| {
        let (dx, dy) = (b.x - a.x, b.y - a.y);
        let l = dx.hypot(dy).max(1e-12);
        PixelPoint::new(dy / l * sign, -dx / l * sign)
    };
    (0..n)
        .map(|i| {
            let (prev, p, next) = (pts[(i + n - 1) % n], pts[i], pts[(i + 1) % n]);
            let (n1, n2) = (normal(prev, p), normal(p, next));
            let k = d / (1.0 + n1.x * n2.x + n1.y * n2.y).max(0.2);
            PixelPoint::new(p.x + (n1.x + n2.x) * k, p.y + (n1.y + n2.y) * k)
        })
        .collect()
}

/// How a polygon is filled on the canvas (anti-aliased or not).
type Fill<'a> = dyn Fn(&mut Mat, &[PixelPoint], Scalar) -> opencv::Result<()> + 'a;

/// A wink: its wall's silhouette, its face, the bevel round the face and a glint.
fn draw_wink(canvas: &mut Mat, cam: &Camera, disc: &Disc, lamp: Point3<f64>, fill: &Fill<'_>) -> opencv::Result<()> {
    let albedo = disc.material.albedo;
    let n = disc.normal;
    let top = disc.top_centre();
    let bottom = disc.centre - n * (disc.thickness_mm / 2.0);
    let mut wall = circle(cam, top, n, disc.radius_mm);
    wall.extend(circle(cam, bottom, n, disc.radius_mm));
    fill(canvas, &hull(wall), colour(albedo, LIGHT * WALL_SHADE))?;
    fill(canvas, &circle(cam, top, n, disc.radius_mm), colour(albedo, LIGHT * BEVEL_SHADE))?;
    fill(canvas, &circle(cam, top, n, disc.radius_mm - BEVEL_MM), colour(albedo, LIGHT))?;
    // The glint: towards the lamp, a small pale disc.
    let to_lamp = Vector3::new(lamp.x - top.x, lamp.y - top.y, 0.0);
    let u = if to_lamp.norm() > 1e-6 { to_lamp / to_lamp.norm() } else { Vector3::x() };
    let glint = top + u * (0.35 * disc.radius_mm);
    let pale = [0.5 * albedo[0] + 0.5, 0.5 * albedo[1] + 0.5, 0.5 * albedo[2] + 0.5];
    fill(canvas, &circle(cam, glint, n, 0.18 * disc.radius_mm), colour(pale, LIGHT))
}

/// The frame points of a circle of `radius` about `centre` in the plane normal to `n`.
fn circle(cam: &Camera, centre: Point3<f64>, n: Vector3<f64>, radius: f64) -> Vec<PixelPoint> {
    let n = n.normalize();
    let a = if n.x.abs() < 0.9 { Vector3::x() } else { Vector3::y() };
    let e1 = (a - n * a.dot(&n)).normalize();
    let e2 = n.cross(&e1);
    (0..CIRCLE_POINTS)
        .filter_map(|k| {
            let t = k as f64 / CIRCLE_POINTS as f64 * std::f64::consts::TAU;
            cam.project(centre + (e1 * t.cos() + e2 * t.sin()) * radius)
        })
        .collect()
}

/// The convex hull of points (Andrew's monotone chain).
fn hull(mut pts: Vec<PixelPoint>) -> Vec<PixelPoint> {
    pts.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    if pts.len() < 3 {
        return pts;
    }
    let cross = |o: PixelPoint, a: PixelPoint, b: PixelPoint| (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
    let mut lower: Vec<PixelPoint> = Vec::new();
    for &p in &pts {
        while lower.len() >= 2 && cross(lower[lower.len() - 2], lower[lower.len() - 1], p) <= 0.0 {
            lower.pop();
        }
        lower.push(p);
    }
    let mut upper: Vec<PixelPoint> = Vec::new();
    for &p in pts.iter().rev() {
        while upper.len() >= 2 && cross(upper[upper.len() - 2], upper[upper.len() - 1], p) <= 0.0 {
            upper.pop();
        }
        upper.push(p);
    }
    lower.pop();
    upper.pop();
    lower.extend(upper);
    lower
}

/// Pixels per mm on the mat near `at`.
fn px_per_mm(cam: &Camera, at: Point3<f64>) -> f64 {
    match (cam.project(at - Vector3::x() * 5.0), cam.project(at + Vector3::x() * 5.0)) {
        (Some(a), Some(b)) => a.distance(b) / 10.0,
        _ => 1.0,
    }
}

/// A linear colour at a brightness, as an OpenCV scalar (the canvas holds RGB in its three
/// channels, in that order, as the traced light does).
fn colour(c: Rgb3, k: f64) -> Scalar {
    Scalar::new(c[0] * k, c[1] * k, c[2] * k, 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The area a filled polygon covers once averaged down to the frame, in frame pixels.
    fn drawn_area(pts: &[PixelPoint], w: i32, h: i32) -> f64 {
        let mut m = Mat::new_rows_cols_with_default(h * SUPERSAMPLE, w * SUPERSAMPLE, CV_32FC1, Scalar::all(0.0)).expect("canvas");
        fill_polygon(&mut m, pts, SUPERSAMPLE, Scalar::all(1.0)).expect("fill");
        let sum = opencv::core::sum_elems(&m).expect("sum")[0];
        sum / (SUPERSAMPLE * SUPERSAMPLE) as f64
    }

    #[test]
    fn a_filled_polygon_covers_its_own_area() {
        // A 20 × 10 px rectangle and a disc of radius 6 px, at fractional positions.
        let rect = [PixelPoint::new(5.3, 4.7), PixelPoint::new(25.3, 4.7), PixelPoint::new(25.3, 14.7), PixelPoint::new(5.3, 14.7)];
        let a = drawn_area(&rect, 40, 30);
        assert!((a - 200.0).abs() < 2.0, "rectangle: {a}");
        let reversed: Vec<PixelPoint> = rect.iter().rev().copied().collect();
        let a = drawn_area(&reversed, 40, 30);
        assert!((a - 200.0).abs() < 2.0, "rectangle the other way round: {a}");
        let disc: Vec<PixelPoint> = (0..CIRCLE_POINTS).map(|k| {
            let t = k as f64 / CIRCLE_POINTS as f64 * std::f64::consts::TAU;
            PixelPoint::new(20.4 + 6.0 * t.cos(), 15.2 + 6.0 * t.sin())
        }).collect();
        let a = drawn_area(&disc, 40, 30);
        assert!((a - std::f64::consts::PI * 36.0).abs() < 1.5, "disc: {a}");
    }
}
