//! Which of two overlapping close-up winks of one colour is on top, from the shape of the edge
//! between them.
//!
//! Where two winks overlap, the image shows one edge across the lens their outlines share: the
//! upper wink's rim (its rounded, shaded edge, a highlight along it, its shadow on the lower one),
//! while the lower's rim lies hidden beneath. The two candidate arcs meet at the lens's ends and
//! part by the overlap's depth in its middle, so the edge's shape tells them apart: measured from
//! the lens's midline, the upper's arc bulges towards the lower wink by half the lens's width, the
//! lower's arc the other way. A raised rim seen obliquely is displaced (by up to the lower's
//! thickness times the tangent of the view's tilt, a pixel or many), which moves the edge without
//! bending it: the fit allows any offset and slant, and only the bulge decides.

use super::closeup::CloseWink;
use crate::detect::sample::LinearView;
use crate::geometry::PixelPoint;
use nalgebra::{Matrix3, Vector3};

/// How the edge between two overlapping winks of one colour bulges: `bulge` is its share of the
/// lens's half-width towards `b` (+1: `a`'s arc, so `a` is on top; −1: `b`'s arc), with its
/// standard error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bulge {
    /// The edge's bulge towards `b`, in half-widths of the lens (+1: `a` on top; −1: `b`).
    pub bulge: f64,
    /// Its standard error.
    pub se: f64,
}

impl Bulge {
    /// The upper wink (`Some(true)`: `a`) when the bulge is at least [`MIN_BULGE`] of the
    /// expected one, within [`MAX_BULGE`] of it (beyond, the edge is not either arc), and
    /// [`BULGE_SIGMAS`] standard errors from none.
    pub fn upper(&self) -> Option<bool> {
        let m = self.bulge.abs();
        ((MIN_BULGE..=MAX_BULGE).contains(&m) && m >= BULGE_SIGMAS * self.se).then_some(self.bulge > 0.0)
    }
}

/// The least bulge, as a share of the expected one, that names the upper wink.
pub const MIN_BULGE: f64 = 0.3;
/// The most: an edge bent further than either arc is something else (a highlight, a shadow's
/// far side).
pub const MAX_BULGE: f64 = 2.0;
/// The bulge must be this many standard errors from none.
pub const BULGE_SIGMAS: f64 = 4.0;
/// A lens narrower than this at its widest does not bend the edge measurably, px.
pub const MIN_LENS_PX: f64 = 1.0;

/// Where the line `p + s·dir` crosses `w`'s outline: its two parameters, smaller first.
fn hits(w: &CloseWink, p: PixelPoint, dir: PixelPoint) -> Option<(f64, f64)> {
    let minor = PixelPoint::new(-w.major_dir.y, w.major_dir.x);
    let d = p - w.centre;
    let (a2, b2) = (w.axes.0 * w.axes.0, w.axes.1 * w.axes.1);
    let (dx, dy, ex, ey) = (d.dot(w.major_dir), d.dot(minor), dir.dot(w.major_dir), dir.dot(minor));
    let qa = ex * ex / a2 + ey * ey / b2;
    let qb = 2.0 * (dx * ex / a2 + dy * ey / b2);
    let qc = dx * dx / a2 + dy * dy / b2 - 1.0;
    let disc = qb * qb - 4.0 * qa * qc;
    if qa <= 0.0 || disc < 0.0 {
        return None;
    }
    let root = disc.sqrt();
    Some(((-qb - root) / (2.0 * qa), (-qb + root) / (2.0 * qa)))
}

/// Gamma-encoded luma at `p` (shading reads as it is seen).
fn luma(view: &LinearView<'_>, p: PixelPoint) -> Option<f64> {
    Some(view.luminance(p.x, p.y)?.max(0.0).powf(1.0 / 2.2))
}

/// Samples per pixel along each line across the lens.
const PER_PX: f64 = 2.0;

/// The bulge of the edge between `a` and `b` (one colour, overlapping), or `None` when their
/// outlines do not share a lens of [`MIN_LENS_PX`] or too few lines across it find an edge.
///
/// Lines run parallel to the line of centres, a pixel apart, across the middle of the lens
/// (where it is at least a third of its widest: near its ends the arcs meet and the felt is
/// near). On each, luma is read (three lines a pixel apart, averaged) from `b`'s arc less a
/// margin to `a`'s arc plus one; the margin allows the raised rim's displacement. The edge is
/// where luma changes fastest with the sign it has across the whole lens (the lines' profiles
/// averaged about the midline), sub-pixel from a parabola. Then the edges' offsets from the
/// midline are fitted, least squares with outliers out, as offset + slant·t + bulge·(half the
/// lens's width).
pub fn bulge(view: &LinearView<'_>, a: &CloseWink, b: &CloseWink) -> Option<Bulge> {
    let d = b.centre - a.centre;
    let dist = d.norm();
    if dist < 1e-6 {
        return None;
    }
    let u = d * (1.0 / dist);
    let v = PixelPoint::new(-u.y, u.x);
    let reach = a.axes.0.min(b.axes.0);
    // (t, midline, half-width) of each line across the lens.
    let mut lines: Vec<(f64, f64, f64)> = Vec::new();
    let mut t = -reach.floor();
    while t <= reach {
        let o = a.centre + v * t;
        if let (Some((_, sa)), Some((sb, _))) = (hits(a, o, u), hits(b, o, u)) {
            if sa > sb {
                lines.push((t, (sa + sb) / 2.0, (sa - sb) / 2.0));
            }
        }
        t += 1.0;
    }
    let widest = lines.iter().map(|l| 2.0 * l.2).fold(0.0, f64::max);
    if widest < MIN_LENS_PX {
        return None;
    }
    lines.retain(|l| 2.0 * l.2 >= widest / 3.0);
    let margin = 3.0 + 0.12 * reach;
    let half_span = widest / 2.0 + margin;
    let n_s = (2.0 * half_span * PER_PX).ceil() as usize + 1;
    let offset = |k: usize| -half_span + k as f64 / PER_PX;
    // Each line's profile about its midline.
    let mut profiles: Vec<Vec<Option<f64>>> = Vec::with_capacity(lines.len());
    for &(t, mid, _) in &lines {
        let p: Vec<Option<f64>> = (0..n_s)
            .map(|k| {
                let at = a.centre + v * t + u * (mid + offset(k));
                let vals: Option<Vec<f64>> = [-1.0, 0.0, 1.0].iter().map(|dv| luma(view, at + v * *dv)).collect();
                vals.map(|x| x.iter().sum::<f64>() / 3.0)
            })
            .collect();
        profiles.push(p);
    }
    let grad = |p: &[Option<f64>], k: usize| -> Option<f64> {
        if k == 0 || k + 1 >= p.len() {
            return None;
        }
        Some((p[k + 1]? - p[k - 1]?) * PER_PX / 2.0)
    };
    // The edge's sign: the strongest change in the lines' mean profile.
    let mut mean_grad = vec![0.0; n_s];
    for p in &profiles {
        for (k, g) in mean_grad.iter_mut().enumerate() {
            *g += grad(p, k).unwrap_or(0.0);
        }
    }
    let sign = mean_grad.iter().copied().fold(0.0, |best: f64, g| if g.abs() > best.abs() { g } else { best }).signum();
    if sign == 0.0 {
        return None;
    }
    // Each line's edge: its strongest change of that sign between the arcs, margins included.
    let mut pts: Vec<(f64, f64, f64)> = Vec::new();
    for (&(t, _, half), p) in lines.iter().zip(&profiles) {
        let (lo, hi) = (-half - margin, half + margin);
        let mut best: Option<(usize, f64)> = None;
        for k in 1..n_s - 1 {
            let s = offset(k);
            if s < lo || s > hi {
                continue;
            }
            if let Some(g) = grad(p, k).map(|g| g * sign) {
                if g > 0.0 && best.is_none_or(|(_, b)| g > b) {
                    best = Some((k, g));
                }
            }
        }
        let Some((k, g0)) = best else { continue };
        let (gm, gp) = (grad(p, k - 1).map(|g| g * sign), grad(p, k + 1).map(|g| g * sign));
        let sub = match (gm, gp) {
            (Some(gm), Some(gp)) if gm + gp - 2.0 * g0 < 0.0 => (0.5 * (gm - gp) / (gm + gp - 2.0 * g0)).clamp(-0.5, 0.5),
            _ => 0.0,
        };
        pts.push((t, offset(k) + sub / PER_PX, half));
    }
    fit_bulge(&pts).map(|(bulge, se)| Bulge { bulge, se })
}

/// Least squares of `e = c0 + c1·t + bulge·h` over `(t, e, h)`, twice dropping points off by more
/// than three robust sds (and 0.75 px): the bulge and its standard error.
fn fit_bulge(pts: &[(f64, f64, f64)]) -> Option<(f64, f64)> {
    let mut kept: Vec<(f64, f64, f64)> = pts.to_vec();
    for round in 0..3 {
        if kept.len() < 6 {
            return None;
        }
        let mut xtx = Matrix3::<f64>::zeros();
        let mut xty = Vector3::<f64>::zeros();
        for &(t, e, h) in &kept {
            let x = Vector3::new(1.0, t, h);
            xtx += x * x.transpose();
            xty += x * e;
        }
        let inv = xtx.try_inverse()?;
        let c = inv * xty;
        let res: Vec<f64> = kept.iter().map(|&(t, e, h)| e - (c[0] + c[1] * t + c[2] * h)).collect();
        let cut = super::robust_cut(&res, 3.0, 0.75);
        let inliers: Vec<(f64, f64, f64)> = kept.iter().zip(&res).filter(|(_, r)| r.abs() <= cut).map(|(p, _)| *p).collect();
        if round == 2 || inliers.len() == kept.len() {
            let rss: f64 = res.iter().map(|r| r * r).sum();
            let var = rss / (kept.len() as f64 - 3.0);
            let se = (var * inv[(2, 2)]).max(0.0).sqrt();
            return Some((c[2], se));
        }
        kept = inliers;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::position::{Colour, WinkSize};
    use opencv::core::{Mat, Point, Scalar, CV_8UC3};
    use opencv::imgproc;

    fn wink(x: f64, y: f64, r: f64) -> CloseWink {
        CloseWink {
            id: String::new(),
            colour: Colour::Blue,
            size: WinkSize::Small,
            centre: PixelPoint::new(x, y),
            axes: (r, r),
            major_dir: PixelPoint::new(1.0, 0.0),
            rim_share: 1.0,
            rms_px: 0.3,
            edges: Vec::new(),
        }
    }

    /// Felt, then two blue discs of radius 80 px on y = 200, `a` at x = 230 and `b` at
    /// `230 + gap_x`; the upper drawn last, with a dark rim 3 px wide (its rounded edge in
    /// shade) and moved by `shift` px from where its outline says (a raised rim seen obliquely).
    fn scene(gap_x: f64, a_on_top: bool, shift: (f64, f64)) -> Mat {
        let mut img = Mat::new_rows_cols_with_default(400, 640, CV_8UC3, Scalar::new(150.0, 185.0, 215.0, 0.0)).expect("frame");
        let at = |x: f64, y: f64| Point::new((x * 16.0).round() as i32, (y * 16.0).round() as i32);
        let (pa, pb) = ((230.0, 200.0), (230.0 + gap_x, 200.0));
        let (lower, upper) = if a_on_top { (pb, pa) } else { (pa, pb) };
        let upper = (upper.0 + shift.0, upper.1 + shift.1);
        let fill = Scalar::new(200.0, 80.0, 30.0, 0.0);
        imgproc::circle(&mut img, at(lower.0, lower.1), 80 * 16, fill, -1, imgproc::LINE_AA, 4).expect("lower");
        imgproc::circle(&mut img, at(upper.0, upper.1), 80 * 16, fill, -1, imgproc::LINE_AA, 4).expect("upper");
        imgproc::circle(&mut img, at(upper.0, upper.1), 78 * 16 + 8, Scalar::new(110.0, 45.0, 15.0, 0.0), 3, imgproc::LINE_AA, 4).expect("rim");
        img
    }

    fn call(gap_x: f64, a_on_top: bool, shift: (f64, f64)) -> Option<Bulge> {
        let img = scene(gap_x, a_on_top, shift);
        let view = LinearView::new(&img).expect("view");
        // The drawn discs fill 80.5 px from their centres.
        bulge(&view, &wink(230.0, 200.0, 80.5), &wink(230.0 + gap_x, 200.0, 80.5))
    }

    #[test]
    fn a_line_meets_an_ellipse_where_its_equation_says() {
        let mut w = wink(10.0, 20.0, 5.0);
        w.axes = (5.0, 3.0);
        w.major_dir = PixelPoint::new(0.0, 1.0);
        // Along x through the centre: the minor axis, 3 px each way.
        let (s0, s1) = hits(&w, PixelPoint::new(0.0, 20.0), PixelPoint::new(1.0, 0.0)).expect("hits");
        assert!((s0 - 7.0).abs() < 1e-9 && (s1 - 13.0).abs() < 1e-9, "{s0} {s1}");
        assert!(hits(&w, PixelPoint::new(0.0, 30.0), PixelPoint::new(1.0, 0.0)).is_none());
    }

    /// The edge between two winks of one colour bends as the upper's rim, whichever is on top,
    /// from a lens 20 px wide down to one of 3 px (0.2 mm at 15 px/mm).
    #[test]
    fn the_upper_of_one_colour_is_named_by_the_bend_of_the_edge_between() {
        for gap_x in [141.0, 158.0] {
            for a_on_top in [true, false] {
                let b = call(gap_x, a_on_top, (0.0, 0.0)).expect("a lens");
                assert_eq!(b.upper(), Some(a_on_top), "centres {gap_x} px apart, a on top {a_on_top}: {b:?}");
                assert!((b.bulge.abs() - 1.0).abs() < 0.3, "{b:?}");
            }
        }
    }

    /// A raised rim seen obliquely is displaced from its outline's ellipse by a few pixels: the
    /// edge moves (more than the lens is wide) but keeps its bend.
    #[test]
    fn a_displaced_raised_rim_still_bends_its_own_way() {
        for shift in [(4.0, 0.0), (-4.0, 3.0)] {
            for a_on_top in [true, false] {
                let b = call(150.0, a_on_top, shift).expect("a lens");
                assert_eq!(b.upper(), Some(a_on_top), "shift {shift:?}, a on top {a_on_top}: {b:?}");
            }
        }
    }

    /// Winks apart share no lens, and nothing is said.
    #[test]
    fn winks_apart_share_no_lens() {
        assert!(call(166.0, true, (0.0, 0.0)).is_none());
    }
}
