//! The one robust fit: lens distortion and the homography mat → image, from sub-pixel edge points
//! each known to lie on a straight line of the mat (an edge or a baseline).
//!
//! Residuals are signed distances, in pixels, from each undistorted edge point to the image of
//! its mat line. Levenberg–Marquardt minimises them; points far off (a hand, a wink on the edge,
//! a squidger) are dropped and the fit repeated.

use super::lens::Lens;
use crate::geometry::{MatPoint, PixelPoint};
use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use nalgebra::{storage::Owned, DMatrix, DVector, Dyn, Matrix3, Vector3};

/// A point of the image known to lie on a straight line of the mat.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinePoint {
    /// Where it is in the image, in pixels (as delivered, distorted).
    pub px: PixelPoint,
    /// Index of its mat line in the fit's line list.
    pub line: usize,
}

/// A straight line of the mat, through two points (mm).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatLine {
    /// One point of it.
    pub a: MatPoint,
    /// Another.
    pub b: MatPoint,
    /// A painted line (a baseline): rule 2.3.1 says where it should be, but a hand painted or
    /// taped it there, so the fit takes its offset along its normal as a parameter of its own
    /// (with a weak prior, [`PAINT_PLACEMENT_SD_MM`]): its points then say how the lens bends it
    /// and which way it runs, not where the mat is. An edge of the mat is where it is.
    pub painted: bool,
}

impl MatLine {
    /// An edge of the mat, from `a` to `b`.
    pub fn edge(a: MatPoint, b: MatPoint) -> MatLine {
        MatLine { a, b, painted: false }
    }

    /// A painted line meant to run from `a` to `b`.
    pub fn painted(a: MatPoint, b: MatPoint) -> MatLine {
        MatLine { a, b, painted: true }
    }
}

/// One sd of a painted line's placement off where the rules put it, mm: the prior on its fitted
/// offset. Weak: a baseline with the fewest points the calibration uses (15) outweighs it.
pub const PAINT_PLACEMENT_SD_MM: f64 = 5.0;

/// Normalisation: mat mm / 1000, image px centred and divided by the half-diagonal.
#[derive(Debug, Clone, Copy)]
struct Norm {
    cx: f64,
    cy: f64,
    r0: f64,
}

/// What the fit found.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// Homography taking mat mm (x, y, 1) to ideal (undistorted) pixels.
    pub img_from_mat: Matrix3<f64>,
    /// The lens, as fitted (or as given).
    pub lens: Lens,
    /// RMS of the kept points' residuals, in pixels.
    pub rms_px: f64,
    /// Points kept / points given.
    pub kept: usize,
    /// Points given.
    pub total: usize,
    /// Points kept on each line of the fit's line list.
    pub kept_per_line: Vec<usize>,
    /// Each line's fitted offset along its normal, mm, away from the mat's centre (0 for an edge
    /// of the mat, and for a painted line with no points).
    pub offsets_mm: Vec<f64>,
}

struct Problem<'a> {
    pts: &'a [(f64, f64, usize)],
    lines: &'a [Vector3<f64>],
    /// Per line, the index among the fitted offsets of a painted line's (after the lens's
    /// parameters and the homography's eight).
    offset_of: &'a [Option<usize>],
    norm: Norm,
    fit_lens: usize,
    radial: bool,
    x: DVector<f64>,
}

impl Problem<'_> {
    fn homography(x: &DVector<f64>, off: usize) -> Matrix3<f64> {
        Matrix3::new(x[off], x[off + 1], x[off + 2], x[off + 3], x[off + 4], x[off + 5], x[off + 6], x[off + 7], 1.0)
    }

    /// The lens's parameters in `x`: l1 (or k1), l2 (or k2) and the centre's offset.
    fn lens_params(&self, x: &DVector<f64>) -> (f64, f64, f64, f64) {
        match self.fit_lens {
            0 => (0.0, 0.0, 0.0, 0.0),
            1 => (x[0], 0.0, 0.0, 0.0),
            2 => (x[0], x[1], 0.0, 0.0),
            _ => (x[0], x[1], x[2], x[3]),
        }
    }

    /// Every point with the lens undone, as the lens's parameters in `x` have it.
    fn undistorted(&self, x: &DVector<f64>) -> Vec<(f64, f64)> {
        let (l1, l2, cx, cy) = self.lens_params(x);
        self.pts
            .iter()
            .map(|&(px, py, _)| {
                let (px, py) = (px - cx, py - cy);
                let rho2 = px * px + py * py;
                let s = if self.radial { super::lens::radial_undistort_scale(rho2, l1, l2) } else { 1.0 / (1.0 + l1 * rho2 + l2 * rho2 * rho2) };
                (px * s + cx, py * s + cy)
            })
            .collect()
    }

    fn residuals_at(&self, x: &DVector<f64>) -> Option<DVector<f64>> {
        self.residuals_with(x, &self.undistorted(x))
    }

    /// The residuals at `x`, its points' undistorted positions given (they depend on the lens's
    /// parameters only).
    fn residuals_with(&self, x: &DVector<f64>, undistorted: &[(f64, f64)]) -> Option<DVector<f64>> {
        let g = Self::homography(x, self.fit_lens);
        let g_inv_t = g.try_inverse()?.transpose();
        let (_, _, cx, cy) = self.lens_params(x);
        let offset = |k: usize| self.offset_of[k].map_or(0.0, |i| x[self.fit_lens + 8 + i]);
        let img_lines: Vec<Vector3<f64>> = self.lines.iter().enumerate().map(|(k, l)| g_inv_t * shifted(l, offset(k))).collect();
        // With the centre fitted, two more residuals after the points': its prior (see
        // CENTRE_PRIOR_PX), in the points' units; then each painted line's offset's prior.
        let prior = if self.fit_lens == 4 { 2 } else { 0 };
        let painted = x.len() - self.fit_lens - 8;
        let mut r = DVector::zeros(self.pts.len() + prior + painted);
        if prior > 0 {
            let w = self.norm.r0 * EDGE_POINT_SD_PX / CENTRE_PRIOR_PX;
            r[self.pts.len()] = cx * w;
            r[self.pts.len() + 1] = cy * w;
        }
        for i in 0..painted {
            r[self.pts.len() + prior + i] = x[self.fit_lens + 8 + i] / PAINT_PLACEMENT_SD_MM * EDGE_POINT_SD_PX;
        }
        for (i, (&(_, _, k), &(ux, uy))) in self.pts.iter().zip(undistorted).enumerate() {
            let l = img_lines[k];
            r[i] = (l[0] * ux + l[1] * uy + l[2]) / (l[0] * l[0] + l[1] * l[1]).sqrt() * self.norm.r0;
        }
        Some(r)
    }
}

/// Mat line `l` (homogeneous, in the fit's mat units of metres) moved `d_mm` along its normal,
/// away from the mat's centre.
fn shifted(l: &Vector3<f64>, d_mm: f64) -> Vector3<f64> {
    if d_mm == 0.0 {
        return *l;
    }
    let n = l[0].hypot(l[1]);
    Vector3::new(l[0], l[1], l[2] + l[2].signum() * d_mm / 1000.0 * n)
}

impl LeastSquaresProblem<f64, Dyn, Dyn> for Problem<'_> {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, Dyn>;
    type ParameterStorage = Owned<f64, Dyn>;

    fn set_params(&mut self, x: &DVector<f64>) {
        self.x.copy_from(x);
    }

    fn params(&self) -> DVector<f64> {
        self.x.clone()
    }

    fn residuals(&self) -> Option<DVector<f64>> {
        self.residuals_at(&self.x)
    }

    /// Forward differences; the points are undistorted once for the homography's columns (only
    /// the lens's move them), which is most of the work of a residual.
    fn jacobian(&self) -> Option<DMatrix<f64>> {
        let undistorted = self.undistorted(&self.x);
        let r0 = self.residuals_with(&self.x, &undistorted)?;
        let mut j = DMatrix::zeros(r0.len(), self.x.len());
        for c in 0..self.x.len() {
            let h = 1e-7 * self.x[c].abs().max(1e-3);
            let mut x = self.x.clone();
            x[c] += h;
            let r = if c < self.fit_lens { self.residuals_at(&x)? } else { self.residuals_with(&x, &undistorted)? };
            j.set_column(c, &((r - &r0) / h));
        }
        Some(j)
    }
}

/// How many lens parameters to fit alongside the homography.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LensFit {
    /// Keep the given lens; fit the homography only.
    Fixed,
    /// Fit a one-parameter division model (centre at the image centre).
    Division1,
    /// Fit a two-parameter division model.
    Division2,
    /// Fit a two-parameter division model and its centre, held near the image's centre by a
    /// prior ([`CENTRE_PRIOR_PX`]).
    Division2Centre,
    /// Fit Brown's radial model (k1, k2) and its centre, with the same prior; starts from the
    /// division model the lens is given as.
    Radial2Centre,
}

/// One sd of the centre of distortion's offset from the image's centre, px: the prior that keeps
/// a fitted centre from wandering. The mat's eight lines fix the centre of a strong lens's
/// distortion to a few pixels, but the division model is not the lens's own, and a free centre
/// takes up the mismatch (up to 7 px off where the rendered lens's was, with the mapping inside
/// the mat then worse, 0.5 mm RMS more in some frames); with k1 ≈ 0 nothing fixes it. Measured
/// mapping RMS over the mat, median / max, against the centre fixed at the image's (228 frames):
/// 0.155 / 0.98 mm fixed, 0.119 / 2.34 free, 0.124 / 1.06 with a 2 px prior, 0.104 / 1.09 with 5 px
/// (also 75 and 90 frames held out: 0.171 / 1.22 → 0.116 / 0.49 and 0.176 / 1.17 → 0.104 / 0.77).
pub const CENTRE_PRIOR_PX: f64 = 5.0;
/// An edge point's scatter about its line, px, for weighing the centre's prior against the points.
const EDGE_POINT_SD_PX: f64 = 0.3;

/// Fits the homography (and, as `lens_fit` says, the lens) to `points` on `lines`, starting from
/// `initial` (mat mm → image px). Points whose residual exceeds `max(3σ, floor_px)` are dropped
/// and the fit repeated, `rounds` times.
#[allow(clippy::too_many_arguments)]
pub fn fit(
    points: &[LinePoint],
    lines: &[MatLine],
    initial: &Matrix3<f64>,
    lens: &Lens,
    lens_fit: LensFit,
    width: u32,
    height: u32,
    floor_px: f64,
    rounds: usize,
) -> Option<Fit> {
    let norm = Norm { cx: width as f64 / 2.0, cy: height as f64 / 2.0, r0: (width as f64).hypot(height as f64) / 2.0 };
    // Mat lines in normalised mat units as homogeneous line vectors.
    let mat_lines: Vec<Vector3<f64>> = lines
        .iter()
        .map(|l| {
            let a = Vector3::new(l.a.x / 1000.0, l.a.y / 1000.0, 1.0);
            let b = Vector3::new(l.b.x / 1000.0, l.b.y / 1000.0, 1.0);
            a.cross(&b)
        })
        .collect();
    // Normalised homography: T_img · G · T_mat⁻¹.
    let t_img = Matrix3::new(1.0 / norm.r0, 0.0, -norm.cx / norm.r0, 0.0, 1.0 / norm.r0, -norm.cy / norm.r0, 0.0, 0.0, 1.0);
    let t_mat_inv = Matrix3::new(1000.0, 0.0, 0.0, 0.0, 1000.0, 0.0, 0.0, 0.0, 1.0);
    let fixed_lens = lens_fit == LensFit::Fixed;
    // With a fixed lens, undistort up front and fit in the undistorted space.
    let prep = |p: &LinePoint| {
        let q = if fixed_lens { lens.undistort(p.px) } else { p.px };
        ((q.x - norm.cx) / norm.r0, (q.y - norm.cy) / norm.r0, p.line)
    };
    let mut pts: Vec<(f64, f64, usize)> = points.iter().map(prep).collect();
    let g0 = t_img * initial * t_mat_inv;
    let g0 = g0 / g0[(2, 2)];
    let n_lens = match lens_fit {
        LensFit::Fixed => 0,
        LensFit::Division1 => 1,
        LensFit::Division2 => 2,
        LensFit::Division2Centre | LensFit::Radial2Centre => 4,
    };
    let radial = lens_fit == LensFit::Radial2Centre;
    let mut offset_of = vec![None; lines.len()];
    let mut n_painted = 0;
    for (k, l) in lines.iter().enumerate() {
        if l.painted && points.iter().any(|p| p.line == k) {
            offset_of[k] = Some(n_painted);
            n_painted += 1;
        }
    }
    let mut x = DVector::zeros(n_lens + 8 + n_painted);
    // Start the radial model from the division model it is given as (the two agree to second
    // order in ρ when k1 = l1 and k2 = 2 l1² + l2).
    // (Or from a radial lens already fitted: a fit repeated with some lines changed.)
    if radial {
        let start = match *lens {
            Lens::Division { centre, r0, l1, l2 } => {
                let scale = norm.r0 / r0;
                let l1 = l1 * scale * scale;
                Some((l1, 2.0 * l1 * l1 + l2 * scale.powi(4), centre))
            }
            Lens::Radial { centre, r0, k1, k2 } => {
                let scale = norm.r0 / r0;
                Some((k1 * scale * scale, k2 * scale.powi(4), centre))
            }
            _ => None,
        };
        if let Some((k1, k2, centre)) = start {
            x[0] = k1;
            x[1] = k2;
            x[2] = (centre[0] - norm.cx) / norm.r0;
            x[3] = (centre[1] - norm.cy) / norm.r0;
        }
    }
    for k in 0..8 {
        x[n_lens + k] = g0[(k / 3, k % 3)];
    }
    let total = pts.len();
    let mut rms = f64::INFINITY;
    for round in 0..=rounds {
        if pts.len() < 12 {
            return None;
        }
        let problem = Problem { pts: &pts, lines: &mat_lines, offset_of: &offset_of, norm, fit_lens: n_lens, radial, x: x.clone() };
        let (solved, _report) = LevenbergMarquardt::new().with_patience(60).minimize(problem);
        x = solved.x.clone();
        // The points' residuals (a centre's prior follows them).
        let r = solved.residuals()?.rows(0, pts.len()).into_owned();
        rms = (r.iter().map(|v| v * v).sum::<f64>() / r.len() as f64).sqrt();
        if round == rounds {
            break;
        }
        let mut abs: Vec<f64> = r.iter().map(|v| v.abs()).collect();
        abs.sort_by(f64::total_cmp);
        let sigma = 1.4826 * abs[abs.len() / 2];
        let cut = (3.0 * sigma).max(floor_px);
        let keep: Vec<(f64, f64, usize)> = pts.iter().zip(r.iter()).filter(|(_, v)| v.abs() <= cut).map(|(p, _)| *p).collect();
        if keep.len() == pts.len() {
            break;
        }
        pts = keep;
    }
    let g_norm = Problem::homography(&x, n_lens);
    let g = t_img.try_inverse()? * g_norm * t_mat_inv.try_inverse()?;
    let g = g / g[(2, 2)];
    let centre = if n_lens == 4 { [norm.cx + x[2] * norm.r0, norm.cy + x[3] * norm.r0] } else { [norm.cx, norm.cy] };
    let lens = match lens_fit {
        LensFit::Fixed => lens.clone(),
        LensFit::Radial2Centre => Lens::Radial { centre, r0: norm.r0, k1: x[0], k2: x[1] },
        _ => Lens::Division {
            centre,
            r0: norm.r0,
            l1: x[0],
            l2: if n_lens >= 2 { x[1] } else { 0.0 },
        },
    };
    let mut kept_per_line = vec![0; lines.len()];
    for p in &pts {
        kept_per_line[p.2] += 1;
    }
    let offsets_mm = offset_of.iter().map(|o| o.map_or(0.0, |i| x[n_lens + 8 + i])).collect();
    Some(Fit { img_from_mat: g, lens, rms_px: rms, kept: pts.len(), total, kept_per_line, offsets_mm })
}

/// Applies a homography to a mat point.
pub fn apply(h: &Matrix3<f64>, p: MatPoint) -> Option<PixelPoint> {
    let v = h * Vector3::new(p.x, p.y, 1.0);
    (v.z.abs() > 1e-12).then(|| PixelPoint::new(v.x / v.z, v.y / v.z))
}

/// Applies the inverse of a homography to an image point.
pub fn apply_inverse(h_inv: &Matrix3<f64>, p: PixelPoint) -> Option<MatPoint> {
    let v = h_inv * Vector3::new(p.x, p.y, 1.0);
    (v.z.abs() > 1e-12).then(|| MatPoint::new(v.x / v.z, v.y / v.z))
}

/// The homography taking four mat points to four image points (direct linear transform).
pub fn homography_from_4(mat: &[MatPoint; 4], img: &[PixelPoint; 4]) -> Option<Matrix3<f64>> {
    let mut a = DMatrix::zeros(8, 8);
    let mut b = DVector::zeros(8);
    for k in 0..4 {
        let (x, y, u, v) = (mat[k].x, mat[k].y, img[k].x, img[k].y);
        let r = 2 * k;
        a.row_mut(r).copy_from_slice(&[x, y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y]);
        a.row_mut(r + 1).copy_from_slice(&[0.0, 0.0, 0.0, x, y, 1.0, -v * x, -v * y]);
        b[r] = u;
        b[r + 1] = v;
    }
    let h = a.lu().solve(&b)?;
    Some(Matrix3::new(h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::MatSpec;

    /// 199 noiseless points along each line, as `lens` bends the image of `g`.
    fn points_on(lines: &[MatLine], g: &Matrix3<f64>, lens: &Lens) -> Vec<LinePoint> {
        let mut pts = Vec::new();
        for (k, l) in lines.iter().enumerate() {
            for i in 1..200 {
                let m = l.a + (l.b - l.a) * (i as f64 / 200.0);
                pts.push(LinePoint { px: lens.distort(apply(g, m).expect("in front")), line: k });
            }
        }
        pts
    }

    /// A webcam's barrel lens (Brown's k1 = −0.28, k2 = 0.07 at a 1300 px focal length, its
    /// centre 3.6 px off the image's), seen on noiseless edge points: the division model leaves
    /// the mat's inside off by up to 0.042 px, the radial model, fitted from the division's start
    /// as calibration does, by 0.015 px (its centre's prior pulls it a little towards the image's
    /// centre).
    #[test]
    fn a_radial_lens_fitted_to_the_mats_lines_maps_the_inside_of_the_mat() {
        let mat = MatSpec::STANDARD;
        let c = mat.corners();
        let img = [PixelPoint::new(150.0, 110.0), PixelPoint::new(1780.0, 95.0), PixelPoint::new(1800.0, 990.0), PixelPoint::new(125.0, 1000.0)];
        let g = homography_from_4(&c, &img).expect("4 points");
        let r0 = 1920f64.hypot(1080.0) / 2.0;
        let s2 = (r0 / 1300.0).powi(2);
        let truth_lens = Lens::Radial { centre: [963.0, 538.0], r0, k1: -0.28 * s2, k2: 0.07 * s2 * s2 };
        let mut lines: Vec<MatLine> = (0..4).map(|k| MatLine::edge(c[k], c[(k + 1) % 4])).collect();
        lines.extend(mat.baselines().iter().map(|b| MatLine::painted(b.segment.a, b.segment.b)));
        let pts = points_on(&lines, &g, &truth_lens);
        let first = fit(&pts, &lines, &g, &Lens::Pinhole, LensFit::Division2, 1920, 1080, 0.5, 1).expect("fits");
        let worst_inside = |f: &Fit| {
            let mut worst: f64 = 0.0;
            for i in -8..=8 {
                for j in -4..=4 {
                    let m = MatPoint::new(i as f64 * 110.0, j as f64 * 110.0);
                    let want = truth_lens.distort(apply(&g, m).expect("in front"));
                    worst = worst.max(f.lens.distort(apply(&f.img_from_mat, m).expect("in front")).distance(want));
                }
            }
            worst
        };
        let division = fit(&pts, &lines, &first.img_from_mat, &first.lens, LensFit::Division2Centre, 1920, 1080, 0.5, 1).expect("fits");
        let radial = fit(&pts, &lines, &first.img_from_mat, &first.lens, LensFit::Radial2Centre, 1920, 1080, 0.5, 1).expect("fits");
        let (d, r) = (worst_inside(&division), worst_inside(&radial));
        assert!(r < 0.025, "radial: worst {r:.3} px inside the mat");
        assert!(d > 2.0 * r, "division {d:.3} px, radial {r:.3} px");
        assert!(matches!(radial.lens, Lens::Radial { .. }));
    }

    #[test]
    fn recovers_a_homography_and_a_division_lens_from_edge_points() {
        let mat = MatSpec::STANDARD;
        let c = mat.corners();
        let img = [PixelPoint::new(210.0, 160.0), PixelPoint::new(1720.0, 140.0), PixelPoint::new(1750.0, 930.0), PixelPoint::new(180.0, 950.0)];
        let g = homography_from_4(&c, &img).expect("4 points");
        let truth_lens = Lens::Division { centre: [960.0, 540.0], r0: 1101.4, l1: 0.12, l2: 0.0 };
        let lines: Vec<MatLine> = (0..4).map(|k| MatLine::edge(c[k], c[(k + 1) % 4])).collect();
        let pts = points_on(&lines, &g, &truth_lens);
        // Start from a deliberately wrong homography.
        let start = homography_from_4(&c, &img.map(|p| PixelPoint::new(p.x + 8.0, p.y - 6.0))).expect("4 points");
        let f = fit(&pts, &lines, &start, &Lens::Pinhole, LensFit::Division1, 1920, 1080, 0.5, 2).expect("fits");
        assert!(f.rms_px < 1e-4, "rms {}", f.rms_px);
        for (k, &m) in c.iter().enumerate() {
            let got = f.lens.distort(apply(&f.img_from_mat, m).expect("in front"));
            let want = truth_lens.distort(img[k]);
            assert!(got.distance(want) < 1e-3, "corner {k}: {got:?} vs {want:?}");
        }
    }

    /// The homography of a mat seen a little turned and tilted, filling most of a 1080p frame.
    fn slightly_turned_view() -> Matrix3<f64> {
        let img = [PixelPoint::new(210.0, 160.0), PixelPoint::new(1720.0, 140.0), PixelPoint::new(1750.0, 930.0), PixelPoint::new(180.0, 950.0)];
        homography_from_4(&MatSpec::STANDARD.corners(), &img).expect("4 points")
    }

    /// Edge points of the mat's four edges and four baselines as a lens draws them.
    fn seen_through(lens: &Lens, g: &Matrix3<f64>) -> (Vec<LinePoint>, Vec<MatLine>) {
        let mat = MatSpec::STANDARD;
        let c = mat.corners();
        let mut lines: Vec<MatLine> = (0..4).map(|k| MatLine::edge(c[k], c[(k + 1) % 4])).collect();
        lines.extend(mat.baselines().iter().map(|b| MatLine::painted(b.segment.a, b.segment.b)));
        let mut pts = Vec::new();
        for (k, l) in lines.iter().enumerate() {
            for i in 1..200 {
                let m = l.a + (l.b - l.a) * (i as f64 / 200.0);
                pts.push(LinePoint { px: lens.distort(apply(g, m).expect("in front")), line: k });
            }
        }
        (pts, lines)
    }

    /// The worst distance (px) over a 150 mm grid on the mat between where fit `f` and where
    /// `lens` through `g` draw each point.
    fn worst_inside(f: &Fit, lens: &Lens, g: &Matrix3<f64>) -> f64 {
        let mut worst: f64 = 0.0;
        for i in 0..=12 {
            for j in 0..=6 {
                let m = MatPoint::new(-900.0 + 150.0 * i as f64, -450.0 + 150.0 * j as f64);
                let got = f.lens.distort(apply(&f.img_from_mat, m).expect("in front"));
                worst = worst.max(got.distance(lens.distort(apply(g, m).expect("in front"))));
            }
        }
        worst
    }

    /// A strong lens whose centre of distortion is 6 px from the image's: the centre is found,
    /// and with it the mat's inside maps right, where a fit holding the centre at the image's
    /// bends the inside to keep the edges straight.
    #[test]
    fn the_centre_of_distortion_is_fitted_and_mends_the_inside_of_the_mat() {
        let g = slightly_turned_view();
        let truth = Lens::Division { centre: [964.0, 535.5], r0: 1101.4, l1: 0.25, l2: 0.03 };
        let (pts, lines) = seen_through(&truth, &g);
        let worst_inside = |f: &Fit| worst_inside(f, &truth, &g);
        let free = fit(&pts, &lines, &g, &Lens::Pinhole, LensFit::Division2Centre, 1920, 1080, 0.5, 2).expect("fits");
        let held = fit(&pts, &lines, &g, &Lens::Pinhole, LensFit::Division2, 1920, 1080, 0.5, 2).expect("fits");
        let Lens::Division { centre, .. } = free.lens else { panic!("a division lens") };
        assert!((centre[0] - 964.0).abs() < 0.5 && (centre[1] - 535.5).abs() < 0.5, "centre {centre:?}");
        assert!(worst_inside(&free) < 0.05, "free centre: {} px", worst_inside(&free));
        assert!(worst_inside(&held) > 5.0 * worst_inside(&free), "held {} px vs free {} px", worst_inside(&held), worst_inside(&free));
    }

    /// Baselines painted 4, −3, 2 and 0 mm off where the rules put them, seen through a barrel
    /// lens: the fit places each (to 0.05 mm) and maps the mat's inside as well as with them
    /// where the rules put them; taken as lying there, they pull the mapping a pixel off.
    #[test]
    fn painted_baselines_off_their_place_are_placed_and_do_not_pull_the_mat() {
        let g = slightly_turned_view();
        let lens = Lens::Division { centre: [960.0, 540.0], r0: 1101.4, l1: 0.2, l2: 0.0 };
        let off = [4.0, -3.0, 2.0, 0.0];
        let painted_mat = MatSpec::STANDARD.with_painted(off);
        let (_, nominal_lines) = seen_through(&lens, &g);
        // The points of the mat's edges, and of the baselines where they were painted.
        let mut as_painted = nominal_lines[..4].to_vec();
        as_painted.extend(painted_mat.baselines().iter().map(|b| MatLine::painted(b.segment.a, b.segment.b)));
        let pts = points_on(&as_painted, &g, &lens);
        let worst_inside = |f: &Fit| worst_inside(f, &lens, &g);
        let f = fit(&pts, &nominal_lines, &g, &Lens::Pinhole, LensFit::Division2, 1920, 1080, 0.5, 2).expect("fits");
        for (k, want) in off.iter().enumerate() {
            assert!((f.offsets_mm[4 + k] - want).abs() < 0.05, "baseline {k}: {:.3} mm, painted {want} mm", f.offsets_mm[4 + k]);
            assert_eq!(f.offsets_mm[k], 0.0, "an edge of the mat has no offset");
        }
        assert!(worst_inside(&f) < 0.05, "placed: {} px", worst_inside(&f));
        let as_edges: Vec<MatLine> = nominal_lines.iter().map(|l| MatLine::edge(l.a, l.b)).collect();
        let pulled = fit(&pts, &as_edges, &g, &Lens::Pinhole, LensFit::Division2, 1920, 1080, 0.5, 2).expect("fits");
        assert!(worst_inside(&pulled) > 0.5, "taken where the rules put them: {} px", worst_inside(&pulled));
    }

    /// No distortion: nothing fixes the centre, and its prior keeps it at the image's.
    #[test]
    fn without_distortion_the_centre_stays_at_the_image_centre() {
        let g = slightly_turned_view();
        let (pts, lines) = seen_through(&Lens::Pinhole, &g);
        let f = fit(&pts, &lines, &g, &Lens::Pinhole, LensFit::Division2Centre, 1920, 1080, 0.5, 2).expect("fits");
        let Lens::Division { centre, l1, .. } = f.lens else { panic!("a division lens") };
        assert!((centre[0] - 960.0).abs() < 1.0 && (centre[1] - 540.0).abs() < 1.0 && l1.abs() < 1e-3, "centre {centre:?}, l1 {l1}");
        assert!(f.rms_px < 1e-3, "rms {}", f.rms_px);
    }

}
