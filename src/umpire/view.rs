//! The mat's plane as a close-up sees it, from the winks' outlines alone.
//!
//! A small circle on a plane images as an ellipse whose shape (not size) depends only on the
//! plane's normal `n` and the sight line to it: with the camera at the origin looking along +z,
//! focal length `f` and principal point `c`, the projection's Jacobian at the normalised image
//! point `q = (p − c) / f` is `(f / Z) [[1, 0, −q.x], [0, 1, −q.y]]`, and applied to an
//! orthonormal basis of the plane it maps the circle to the ellipse. Near the centre of a photo
//! every wink looks equally foreshortened, but across it the sight line swings by `atan(|q|)`:
//! winks on the far side look flatter than those on the near side. Fitting `n` and `f` to every
//! wink's ellipse (three unknowns, two measurements a wink) gives the tilt at each wink, which
//! way the plane recedes, and so how a raised wink's outline is displaced.

use crate::geometry::PixelPoint;
use nalgebra::{Matrix2, Matrix2x3, Vector2, Vector3};

/// One wink's outline, as the fit uses it: its shape with the wall taken out (see
/// [`super::closeup`]), at its place in the photo.
#[derive(Debug, Clone, Copy)]
pub struct WinkShape {
    /// Ellipse centre, px.
    pub centre: PixelPoint,
    /// Direction of the major axis (unit).
    pub major_dir: PixelPoint,
    /// The footprint's minor / major ratio: cos of the local tilt.
    pub ratio: f64,
    /// How much this wink counts (its rim seen, whether it may rest tilted on another).
    pub weight: f64,
}

/// The plane's pose relative to the camera, up to scale.
#[derive(Debug, Clone, Copy)]
pub struct PlaneView {
    /// Unit normal in camera coordinates, pointing towards the camera.
    pub normal: Vector3<f64>,
    /// Focal length, px.
    pub focal: f64,
    /// Principal point, px (the photo's centre).
    pub principal: PixelPoint,
    /// Root-mean-square misfit of the winks' shapes (Frobenius, normalised shapes).
    pub rms: f64,
    /// How much better this pose fits than the best one tilted the other way (objective ratio,
    /// ≥ 1): near 1 the photo does not tell which way the plane recedes.
    pub sidedness: f64,
    /// That pose tilted the other way: its normal and focal length.
    pub mirror: (Vector3<f64>, f64),
}

/// Focal length prior: a phone's main camera (~26 mm equivalent) is about this × the photo's
/// longer side.
const FOCAL_PRIOR: f64 = 0.8;

impl PlaneView {
    /// The pose that best explains the winks' shapes: a coarse grid over the tilt (0–60°), its
    /// direction and the focal length (0.3–3 × the longer side), refined by pattern search. A
    /// weak prior on the focal length settles it when the photo's perspective does not.
    pub fn fit(shapes: &[WinkShape], width: u32, height: u32) -> PlaneView {
        let principal = PixelPoint::new(width as f64 / 2.0, height as f64 / 2.0);
        let f0 = FOCAL_PRIOR * width.max(height) as f64;
        let obj = |th: f64, psi: f64, lf: f64| objective(shapes, principal, th, psi, lf, f0);
        let mut best = (f64::INFINITY, 0.0, 0.0, f0.ln());
        for ti in 0..=30 {
            let th = (ti as f64 * 2.0).to_radians();
            for pi in 0..72 {
                let psi = (pi as f64 * 5.0).to_radians();
                for fi in 0..=12 {
                    let lf = (f0 * 0.3).ln() + fi as f64 * (10f64).ln() / 12.0;
                    let v = obj(th, psi, lf);
                    if v < best.0 {
                        best = (v, th, psi, lf);
                    }
                }
                if ti == 0 {
                    break;
                }
            }
        }
        let refined = refine(&obj, best);
        // The same tilt the other way round, its focal length and tilt refitted.
        let (_, th, psi, lf) = refined;
        let mirror = refine(
            &obj,
            (
                obj(th, psi + std::f64::consts::PI, lf),
                th,
                psi + std::f64::consts::PI,
                lf,
            ),
        );
        let (v, th, psi, lf) = refined;
        let w: f64 = shapes.iter().map(|s| s.weight).sum::<f64>().max(1e-9);
        PlaneView {
            normal: normal(th, psi),
            focal: lf.exp(),
            principal,
            rms: (v / w).sqrt(),
            sidedness: (mirror.0 / v.max(1e-12)).max(1.0),
            mirror: (normal(mirror.1, mirror.2), mirror.3.exp()),
        }
    }

    /// The best pose tilted the other way ([`PlaneView::sidedness`] says how much worse it fits).
    pub fn mirrored(&self) -> PlaneView {
        PlaneView { normal: self.mirror.0, focal: self.mirror.1, mirror: (self.normal, self.focal), ..*self }
    }

    fn proj(&self, p: PixelPoint) -> Matrix2x3<f64> {
        let q = (p - self.principal) * (1.0 / self.focal);
        Matrix2x3::new(1.0, 0.0, -q.x, 0.0, 1.0, -q.y)
    }

    /// The projection's Jacobian on the plane at `p`, up to scale (plane basis → image).
    fn jacobian(&self, p: PixelPoint) -> Matrix2<f64> {
        jacobian(self.normal, self.proj(p))
    }

    /// The footprint of a wink whose outline has major semi-axis `major` px at `p`: the matrix
    /// taking the unit circle to its ellipse in the image.
    pub fn footprint(&self, p: PixelPoint, major: f64) -> Matrix2<f64> {
        let j = self.jacobian(p);
        j * (major / j.singular_values().max())
    }

    /// Where a point `h` mm above the plane appears relative to its foot, px, for a wink of
    /// radius `radius` mm whose outline has major semi-axis `major` px at `p`.
    pub fn raised_shift(&self, p: PixelPoint, major: f64, radius: f64, h: f64) -> PixelPoint {
        let j = self.jacobian(p);
        let f_over_z = major / (radius * j.singular_values().max());
        let s = self.proj(p) * self.normal * (h * f_over_z);
        PixelPoint::new(s.x, s.y)
    }

    /// How far one wink's shape is from what this pose draws at its place: the Frobenius norm of
    /// the difference of the two normalised shapes (0 for a wink lying flat on the plane, as
    /// measured; a wink leaning a few degrees, on another wink, shows as a misfit).
    pub fn misfit(&self, s: &WinkShape) -> f64 {
        (shape_of(&self.jacobian(s.centre)) - observed_shape(s)).norm()
    }

    /// The angle between the sight line at `p` and the plane's normal, rad.
    pub fn tilt_at(&self, p: PixelPoint) -> f64 {
        let q = (p - self.principal) * (1.0 / self.focal);
        let l = Vector3::new(q.x, q.y, 1.0).normalize();
        l.dot(&self.normal).abs().min(1.0).acos()
    }
}

/// Distance from an ellipse's centre to its outline along unit direction `u`, for the ellipse
/// `A · (unit circle)`.
pub fn radius_along(a: &Matrix2<f64>, u: PixelPoint) -> f64 {
    match a.try_inverse() {
        Some(inv) => 1.0 / (inv * Vector2::new(u.x, u.y)).norm().max(1e-12),
        None => 0.0,
    }
}

fn normal(th: f64, psi: f64) -> Vector3<f64> {
    Vector3::new(th.sin() * psi.cos(), th.sin() * psi.sin(), -th.cos())
}

fn jacobian(n: Vector3<f64>, proj: Matrix2x3<f64>) -> Matrix2<f64> {
    let seed = if n.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let e1 = n.cross(&seed).normalize();
    let e2 = n.cross(&e1);
    let (a, b) = (proj * e1, proj * e2);
    Matrix2::new(a.x, b.x, a.y, b.y)
}

/// The normalised shape of an ellipse `A · circle`: `A Aᵀ` over its larger eigenvalue.
fn shape_of(a: &Matrix2<f64>) -> Matrix2<f64> {
    let s = a * a.transpose();
    let top = s.symmetric_eigenvalues().max();
    s / top.max(1e-12)
}

/// The normalised shape of a wink's measured ellipse (major axis 1 along `major_dir`).
fn observed_shape(s: &WinkShape) -> Matrix2<f64> {
    let (m, mi) = (Vector2::new(s.major_dir.x, s.major_dir.y), Vector2::new(-s.major_dir.y, s.major_dir.x));
    m * m.transpose() + mi * mi.transpose() * (s.ratio * s.ratio)
}

/// Weighted squared misfit of the winks' shapes to the pose (tilt `th`, its direction `psi`,
/// log focal length `lf`), plus the focal length's weak prior.
fn objective(
    shapes: &[WinkShape],
    principal: PixelPoint,
    th: f64,
    psi: f64,
    lf: f64,
    f0: f64,
) -> f64 {
    let n = normal(th, psi);
    let f = lf.exp();
    let mut sum = 0.0;
    let mut wsum = 0.0;
    for s in shapes {
        let q = (s.centre - principal) * (1.0 / f);
        let pred = shape_of(&jacobian(n, Matrix2x3::new(1.0, 0.0, -q.x, 0.0, 1.0, -q.y)));
        sum += s.weight * (pred - observed_shape(s)).norm_squared();
        wsum += s.weight;
    }
    sum + 1e-6 * wsum * ((f / f0).ln() / 0.7).powi(2)
}

/// Pattern search from `start` = (objective, tilt, direction, log focal), halving the steps.
fn refine(obj: &dyn Fn(f64, f64, f64) -> f64, start: (f64, f64, f64, f64)) -> (f64, f64, f64, f64) {
    let mut best = start;
    let mut steps = [2f64.to_radians(), 5f64.to_radians(), 0.2];
    for _ in 0..40 {
        let mut moved = false;
        for k in 0..3 {
            for sign in [-1.0, 1.0] {
                let mut x = [best.1, best.2, best.3];
                x[k] += sign * steps[k];
                x[0] = x[0].clamp(0.0, 70f64.to_radians());
                let v = obj(x[0], x[1], x[2]);
                if v < best.0 {
                    best = (v, x[0], x[1], x[2]);
                    moved = true;
                }
            }
        }
        if !moved {
            steps.iter_mut().for_each(|s| *s *= 0.5);
            if steps[0] < 0.01f64.to_radians() {
                break;
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wink's shape as the pose `view` draws it at `p`.
    fn drawn(view: &PlaneView, p: PixelPoint) -> WinkShape {
        let svd = view.footprint(p, 90.0).svd(true, false);
        let u = svd.u.expect("u was asked for");
        let (s0, s1) = (svd.singular_values[0], svd.singular_values[1]);
        let (major, minor, dir) = if s0 >= s1 { (s0, s1, u.column(0)) } else { (s1, s0, u.column(1)) };
        WinkShape { centre: p, major_dir: PixelPoint::new(dir[0], dir[1]), ratio: minor / major, weight: 1.0 }
    }

    /// A wink flat on the plane fits its pose; one leaning 4–5° (on another wink), whichever way,
    /// does not, by more than the close-up's bar for a leaning wink.
    #[test]
    fn a_leaning_winks_shape_does_not_fit_the_plane() {
        let view = PlaneView { normal: normal(22f64.to_radians(), 1.0), focal: 1500.0, principal: PixelPoint::new(960.0, 540.0), rms: 0.0, sidedness: 1.0, mirror: (Vector3::z(), 1500.0) };
        let p = PixelPoint::new(1100.0, 600.0);
        assert!(view.misfit(&drawn(&view, p)) < 1e-9);
        for k in 0..8 {
            let psi = 1.0 + k as f64 * std::f64::consts::FRAC_PI_4;
            // The wink's own normal: the plane's turned 4.5° about a horizontal axis at angle psi.
            let axis = Vector3::new(psi.cos(), psi.sin(), 0.0).cross(&view.normal).normalize();
            let leaning = PlaneView { normal: nalgebra::Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(axis), 4.5f64.to_radians()) * view.normal, ..view };
            let m = view.misfit(&drawn(&leaning, p));
            assert!(m > super::super::closeup::LEANING_MISFIT, "leaning towards {psi:.2} rad: misfit {m:.4}");
        }
    }

    /// Seen nearly square on, the two poses tilted either way shift a raised point off the
    /// photo's centre nearly alike (the sight line's own slant decides it), so an unsided
    /// close-up can take the shift back there; at the centre they disagree wholly.
    #[test]
    fn off_the_centre_a_raised_shift_hardly_depends_on_which_way_the_plane_tilts() {
        let pose = |psi: f64| PlaneView { normal: normal(4f64.to_radians(), psi), focal: 1500.0, principal: PixelPoint::new(960.0, 540.0), rms: 0.0, sidedness: 1.0, mirror: (Vector3::z(), 1500.0) };
        let (one, other) = (pose(0.3), pose(0.3 + std::f64::consts::PI));
        let shift = |v: &PlaneView, p: PixelPoint| v.raised_shift(p, 100.0, 11.0, 0.8);
        let off = PixelPoint::new(1560.0, 540.0);
        let (s, t) = (shift(&one, off), shift(&other, off));
        assert!((s - t).norm() < 0.4 * s.norm(), "{s:?} {t:?}");
        let centre = one.principal;
        let (s, t) = (shift(&one, centre), shift(&other, centre));
        assert!((s + t).norm() < 1e-9 * s.norm().max(1.0) && s.norm() > 0.0, "{s:?} {t:?}");
        let paired = PlaneView { mirror: (other.normal, other.focal), ..one };
        assert_eq!(paired.mirrored().normal, other.normal);
        assert_eq!(paired.mirrored().mirrored().normal, one.normal);
    }

    /// Shapes drawn from a known pose are fitted back to it, the right way round.
    #[test]
    fn a_known_pose_is_recovered_from_its_winks_shapes() {
        let truth = PlaneView {
            normal: normal(22f64.to_radians(), 1.0),
            focal: 1500.0,
            principal: PixelPoint::new(960.0, 540.0),
            rms: 0.0,
            sidedness: 1.0,
            mirror: (Vector3::z(), 1500.0),
        };
        let shapes: Vec<WinkShape> = [
            (700.0, 400.0),
            (1200.0, 450.0),
            (900.0, 750.0),
            (1150.0, 700.0),
            (960.0, 540.0),
        ]
        .iter()
        .map(|&(x, y)| {
            let p = PixelPoint::new(x, y);
            let a = truth.footprint(p, 90.0);
            let svd = a.svd(true, false);
            let u = svd.u.unwrap();
            let (s0, s1) = (svd.singular_values[0], svd.singular_values[1]);
            let (major, minor, dir) = if s0 >= s1 {
                (s0, s1, u.column(0))
            } else {
                (s1, s0, u.column(1))
            };
            WinkShape {
                centre: p,
                major_dir: PixelPoint::new(dir[0], dir[1]),
                ratio: minor / major,
                weight: 1.0,
            }
        })
        .collect();
        let fit = PlaneView::fit(&shapes, 1920, 1080);
        let angle = fit
            .normal
            .dot(&truth.normal)
            .clamp(-1.0, 1.0)
            .acos()
            .to_degrees();
        assert!(angle < 0.5, "normal off by {angle}°");
        assert!(
            (fit.focal / 1500.0 - 1.0).abs() < 0.1,
            "focal {}",
            fit.focal
        );
        assert!(fit.sidedness > 10.0, "sidedness {}", fit.sidedness);
    }
}
