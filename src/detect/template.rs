//! A free wink's footprint centre from every pixel round its rim ([`Ring`]): a picture of its
//! silhouette (the rim's circle through the calibration, with the parallax and rounding the
//! outline fit gives it), blurred by the optics over the felt's level (beside a painted line or
//! the mat's edge, over the background the frame shows along that line), fitted to the frame's
//! pixels by robust least squares.
//!
//! Why: the outline fit reads the rim as a halfway crossing on each of 72 rays, each resting on
//! the two samples either side of it. Where the wink's colour lies close to the felt's (a green
//! wink on green felt, a yellow one on beige) the crossings scatter and the centre wanders by
//! half a pixel or more, a millimetre at 0.5 px/mm. The picture weighs every pixel round the rim
//! across the blur's whole width, with the wink's and the felt's colours as free levels.

use super::fit::{grazing_height, Rest};
use super::sample::LinearView;
use crate::calibrate::Calibration;
use crate::geometry::{MatPoint, PixelPoint};
use nalgebra::{SMatrix, SVector};

/// Inner edge of the ring of pixels fitted: at most this far inside the outline (pixels), and no
/// nearer the middle than [`INNER_SHARE`] of the radius (the face's middle holds a lamp's
/// highlight and says nothing of the rim).
const RING_IN_PX: f64 = 4.5;
/// See [`RING_IN_PX`].
const INNER_SHARE: f64 = 0.45;
/// Outer edge of the ring beyond the outline, pixels: the blur's reach and some background.
const RING_OUT_PX: f64 = 4.5;
/// Pixels this close to another wink's outline (pixels) are left out: the background there is
/// not the felt.
const NEIGHBOUR_CLEARANCE_PX: f64 = 2.5;
/// Pixels within this distance (mm) of the mat's edge or a baseline's middle lie on paint or the
/// table, not the felt: their background is read along the line beyond the wink
/// ([`background_along`]). Baselines are 2–6 mm wide (domain.md).
const LINE_CLEARANCE_MM: f64 = 5.0;
/// Least share of the rim's directions (of 36) that keep pixels near the outline.
const MIN_RIM_COVERAGE: f64 = 0.5;
/// Starting blur scale of the logistic edge, pixels.
const START_BLUR_PX: f64 = 0.6;
/// Range the blur scale may take, pixels.
const BLUR_RANGE_PX: (f64, f64) = (0.15, 3.0);
/// Range a fitted radius may take, as shares of the starting one.
const RADIUS_RANGE: (f64, f64) = (0.8, 1.2);
/// Robust (soft-L1) scale of a pixel's residual, as a share of the wink's contrast with the felt:
/// a highlight, a shadow or a speck of another colour counts less than the rim's own pixels.
const ROBUST_SHARE: f64 = 0.15;
/// Most the refined centre may move from the outline fit's, pixels: further, the picture has
/// found something else (a shadow's edge, a neighbour not listed).
const MAX_MOVE_PX: f64 = 1.5;
/// Most of the ring's pixels the fitted picture may leave unexplained (off it by over half the
/// wink's contrast): more, and something else lies there (two winks of one colour read as one:
/// 14% of the ring; over 991 winks seen whole the most was 8%).
const MAX_UNEXPLAINED: f64 = 0.1;
/// Levenberg–Marquardt rounds at most.
const MAX_ROUNDS: usize = 20;
/// The fit has settled when the centre moves less than this in a round, pixels.
const SETTLED_PX: f64 = 0.005;

/// What [`Ring::fit`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Refined {
    /// Footprint centre, mat mm.
    pub centre: MatPoint,
    /// Radius of the silhouette's rim, mm: as given, or as fitted.
    pub radius_mm: f64,
    /// Blur scale of the edge (logistic), pixels.
    pub blur_px: f64,
    /// Share of the ring's pixels the picture leaves unexplained: off it by over half the wink's
    /// contrast with the background.
    pub unexplained: f64,
}

/// One pixel of the ring: the footprint of the rim point its line of sight grazes (mat mm), and
/// its linear RGB.
#[derive(Clone)]
struct Sample {
    foot: MatPoint,
    rgb: [f64; 3],
    /// Near a painted line or the mat's edge: the pixel's background without the wink, read
    /// along the line beyond the wink (the line looks the same along its length); elsewhere the
    /// felt's level, fitted.
    bg: Option<[f64; 3]>,
}

/// The radius the picture's rim takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Radius {
    /// This radius, mm.
    Fixed(f64),
    /// Fitted, starting from the ring's radius.
    Free,
}

/// The frame's pixels round one wink's outline, clear of other winks and the mat's lines.
pub struct Ring {
    start: MatPoint,
    radius_mm: f64,
    ppm: f64,
    samples: Vec<Sample>,
    /// Share of the rim's directions (of 36) with pixels near the outline.
    pub coverage: f64,
    /// The same, of pixels on the felt (not beside a line).
    pub felt_coverage: f64,
}

impl Ring {
    /// The ring round a wink resting as `rest` with its footprint at `start` (mat mm) and rim
    /// radius `radius_mm`; `ppm` is the frame's scale there (pixels per mm); `avoid` lists the
    /// other winks' outlines (frame pixels: centre and radius), whose surroundings are left out.
    /// Beside a baseline or the mat's edge each pixel's background is read along the line
    /// (session 34; until then those pixels were left out, and a wink at the line was measured
    /// from its far side and its assumed radius); where two lines meet they are left out.
    /// `None` when less than half the rim is left.
    pub fn new(view: &LinearView<'_>, cal: &Calibration, start: MatPoint, radius_mm: f64, rest: Rest, ppm: f64, avoid: &[(PixelPoint, f64)]) -> Option<Ring> {
        let mid = rest.rim_mid_height(start, radius_mm, MatPoint::new(1.0, 0.0));
        let c_px = cal.mat_to_image_at(start, mid)?;
        let r_px = radius_mm * ppm;
        let (r_in, r_out) = ((INNER_SHARE * r_px).max(r_px - RING_IN_PX), r_px + RING_OUT_PX);
        let (x0, x1) = ((c_px.x - r_out).floor().max(0.0) as usize, ((c_px.x + r_out).ceil() as usize).min(view.width().saturating_sub(1)));
        let (y0, y1) = ((c_px.y - r_out).floor().max(0.0) as usize, ((c_px.y + r_out).ceil() as usize).min(view.height().saturating_sub(1)));
        // The mat's edges and baselines within reach.
        let reach_mm = r_out / ppm + LINE_CLEARANCE_MM + 1.0;
        let lines: Vec<crate::geometry::Segment> = cal.mat.outline().edges().chain(cal.mat.baselines().iter().map(|b| b.segment)).filter(|s| s.distance(start) < reach_mm).collect();
        // Where the background beside a line is read: clear of every wink, this one too.
        let winks: Vec<(PixelPoint, f64)> = avoid.iter().copied().chain([(c_px, r_px)]).collect();
        let mut samples = Vec::with_capacity((x1.saturating_sub(x0) + 1) * (y1.saturating_sub(y0) + 1));
        let (mut covered, mut on_felt) = ([false; 36], [false; 36]);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let p = PixelPoint::new(x as f64, y as f64);
                let d = p.distance(c_px);
                if d < r_in || d > r_out || avoid.iter().any(|&(c, r)| p.distance(c) < r + NEIGHBOUR_CLEARANCE_PX) {
                    continue;
                }
                let Some(on_mat) = cal.image_to_mat(p) else { continue };
                let mut near = lines.iter().filter(|s| s.distance(on_mat) < LINE_CLEARANCE_MM);
                let bg = match (near.next(), near.next()) {
                    (None, _) => None,
                    (Some(line), None) => match background_along(view, cal, line, on_mat, radius_mm + LINE_CLEARANCE_MM, &lines, &winks) {
                        Some(bg) => Some(bg),
                        None => continue,
                    },
                    // Where two lines meet (a baseline at the mat's edge) neither looks the same along its length.
                    (Some(_), Some(_)) => continue,
                };
                if (d - r_px).abs() < 1.5 {
                    let a = (p.y - c_px.y).atan2(p.x - c_px.x);
                    let k = ((a / std::f64::consts::TAU + 1.0).fract() * 36.0) as usize % 36;
                    covered[k] = true;
                    on_felt[k] |= bg.is_none();
                }
                // The sight line through this pixel grazes the rim at this height (as the outline
                // fit takes it); the direction from the centre hardly turns as the centre moves
                // the pixel or so the fit allows, so the footprint is worked out once.
                let v = on_mat - start;
                let n = v.norm();
                let u = if n > 1e-9 { v * (1.0 / n) } else { MatPoint::new(1.0, 0.0) };
                let h = rest.rim_mid_height(start, radius_mm, u) + grazing_height(cal, on_mat, u);
                let [r, g, b] = view.pixel(x, y);
                samples.push(Sample { foot: cal.raised(on_mat, h), rgb: [r as f64, g as f64, b as f64], bg });
            }
        }
        let share = |bins: [bool; 36]| bins.iter().filter(|&&c| c).count() as f64 / 36.0;
        let (coverage, felt_coverage) = (share(covered), share(on_felt));
        (coverage >= MIN_RIM_COVERAGE).then_some(Ring { start, radius_mm, ppm, samples, coverage, felt_coverage })
    }

    /// The ring's pixels on the felt alone (none beside a line): where a colour's rim is
    /// measured, a wink's shade on paint beside it is not.
    pub fn on_felt(&self) -> Ring {
        let samples = self.samples.iter().filter(|s| s.bg.is_none()).cloned().collect();
        Ring { samples, coverage: self.felt_coverage, ..*self }
    }

    /// The footprint centre (and, with [`Radius::Free`], the rim's radius) that best explains
    /// the ring, starting from the outline fit's; `None` when the picture does not settle near
    /// the start or leaves much unexplained.
    pub fn fit(&self, radius: Radius) -> Option<Refined> {
        let (radius_mm, free_radius) = match radius {
            Radius::Fixed(r) => (r, false),
            Radius::Free => (self.radius_mm, true),
        };
        let picture = Picture { radius_mm, free_radius, ppm: self.ppm, samples: &self.samples };
        picture.fit(self.start).filter(|r| r.centre.distance(self.start) * self.ppm <= MAX_MOVE_PX && r.unexplained <= MAX_UNEXPLAINED)
    }
}

impl Sample {
    /// How the levels enter this pixel's picture at edge share `e`: rgb = a_B·B + a_D·D + c, with
    /// B the felt's level and D the wink's less the felt's. On the felt (a_B, a_D) = (1, e), c = 0;
    /// beside a line the background is its own, `bg`: rgb = bg·(1 − e) + (B + D)·e.
    fn coefficients(&self, e: f64) -> (f64, f64) {
        if self.bg.is_some() {
            (e, e)
        } else {
            (1.0, e)
        }
    }

    /// The picture's value here for parameters `p` at edge share `e`, and the contrast across
    /// the edge (the wink's level less this pixel's background), per channel.
    fn terms(&self, p: &Params, e: f64) -> ([f64; 3], [f64; 3]) {
        match self.bg {
            None => ([0, 1, 2].map(|k| p[4 + k] + p[7 + k] * e), [0, 1, 2].map(|k| p[7 + k])),
            Some(g) => ([0, 1, 2].map(|k| g[k] * (1.0 - e) + (p[4 + k] + p[7 + k]) * e), [0, 1, 2].map(|k| p[4 + k] + p[7 + k] - g[k])),
        }
    }
}

/// Where beyond `reach_mm` along a line its background is read, mm (several, against the felt's
/// and the table's texture).
const BACKGROUND_STEPS_MM: [f64; 3] = [0.0, 3.0, 6.0];

/// The background at mat point `at` beside `line` as the frame shows it without the wink there:
/// the mean of the frame at the same distance from the line, `reach_mm` along it either way,
/// where that is clear of the winks (`avoid`, frame pixels: centre and radius) and of every other
/// line.
fn background_along(view: &LinearView<'_>, cal: &Calibration, line: &crate::geometry::Segment, at: MatPoint, reach_mm: f64, lines: &[crate::geometry::Segment], avoid: &[(PixelPoint, f64)]) -> Option<[f64; 3]> {
    let d = line.b - line.a;
    let along = d * (1.0 / d.norm().max(1e-9));
    let (mut sum, mut n) = ([0.0; 3], 0.0);
    for step in [-1.0, 1.0].iter().flat_map(|side| BACKGROUND_STEPS_MM.map(|s| side * (reach_mm + s))) {
        let q = at + along * step;
        if lines.iter().any(|o| o != line && o.distance(q) < LINE_CLEARANCE_MM) {
            continue;
        }
        let Some(px) = cal.mat_to_image(q) else { continue };
        if avoid.iter().any(|&(c, r)| px.distance(c) < r + NEIGHBOUR_CLEARANCE_PX) {
            continue;
        }
        let Some(rgb) = view.linear(px.x, px.y) else { continue };
        for k in 0..3 {
            sum[k] += rgb[k] as f64;
        }
        n += 1.0;
    }
    (n > 0.0).then(|| sum.map(|v| v / n))
}

/// The ring's pixels and the wink's geometry.
struct Picture<'a> {
    radius_mm: f64,
    free_radius: bool,
    ppm: f64,
    samples: &'a [Sample],
}

/// Parameters: centre x, y (mm), blur scale (px), radius (mm), background RGB, wink minus
/// background RGB.
type Params = SVector<f64, 10>;

/// The picture of one pixel: its signed distance inside the rim (pixels), the unit direction
/// from the centre to it (mat frame), and the edge's share of the wink there (0 to 1).
struct Pixel {
    d: f64,
    u: MatPoint,
    e: f64,
}

impl Picture<'_> {
    fn pixel(&self, s: &Sample, c: MatPoint, radius_mm: f64, blur: f64) -> Pixel {
        let w = s.foot - c;
        let n = w.norm().max(1e-9);
        let d = (radius_mm - n) * self.ppm;
        Pixel { d, u: w * (1.0 / n), e: logistic(d / blur) }
    }

    /// Levels (background, wink minus background) that best explain the samples at centre `c`,
    /// radius and blur, each pixel weighted as `weight` says (least squares, per channel).
    fn levels(&self, c: MatPoint, radius_mm: f64, blur: f64, weight: &[f64]) -> Option<([f64; 3], [f64; 3])> {
        // Per channel, least squares in (B, D) of a_B·B + a_D·D = rgb − c ([`Sample::terms`]).
        let (mut sbb, mut sbd, mut sdd) = (0.0, 0.0, 0.0);
        let (mut sby, mut sdy) = ([0.0; 3], [0.0; 3]);
        for (s, &w) in self.samples.iter().zip(weight) {
            let e = self.pixel(s, c, radius_mm, blur).e;
            let (ab, ad) = s.coefficients(e);
            sbb += w * ab * ab;
            sbd += w * ab * ad;
            sdd += w * ad * ad;
            for k in 0..3 {
                let y = s.rgb[k] - s.bg.map_or(0.0, |g| g[k] * (1.0 - e));
                sby[k] += w * ab * y;
                sdy[k] += w * ad * y;
            }
        }
        let det = sbb * sdd - sbd * sbd;
        if det.abs() < 1e-9 * sbb * sbb.max(1.0) {
            return None;
        }
        let b = [0, 1, 2].map(|k| (sdd * sby[k] - sbd * sdy[k]) / det);
        let d = [0, 1, 2].map(|k| (sbb * sdy[k] - sbd * sby[k]) / det);
        Some((b, d))
    }

    /// Robust cost (soft-L1) and its normal equations at `p`, setting the pixels' weights.
    /// Each pixel's three residuals share the geometric part of their Jacobian (the centre, blur
    /// and radius move the edge's share `e` alike for every channel), so the sums are built from
    /// those shares rather than from ten-by-ten products per channel.
    fn normal_equations(&self, p: &Params, scale2: f64, weight: &mut [f64]) -> (f64, SMatrix<f64, 10, 10>, Params) {
        let c = MatPoint::new(p[0], p[1]);
        let (blur, radius) = (p[2], p[3]);
        let (mut jtj, mut jtr) = (SMatrix::<f64, 10, 10>::zeros(), Params::zeros());
        let mut cost = 0.0;
        for (s, w) in self.samples.iter().zip(weight.iter_mut()) {
            let Pixel { d, u, e } = self.pixel(s, c, radius, blur);
            let (ab, ad) = s.coefficients(e);
            let (model, contrast) = s.terms(p, e);
            let r = [0, 1, 2].map(|k| model[k] - s.rgb[k]);
            let z = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]) / scale2;
            cost += 2.0 * ((1.0 + z).sqrt() - 1.0);
            let wt = 1.0 / (1.0 + z).sqrt();
            *w = wt;
            // The edge's share moves with the signed distance d, which grows as the centre moves
            // along u (the pixel's footprint lies along u from it), shrinks as the blur widens
            // (at a given d) and grows with the radius.
            let de = e * (1.0 - e) / blur;
            let geo = [u.x * self.ppm * de, u.y * self.ppm * de, -de * d / blur, if self.free_radius { self.ppm * de } else { 0.0 }];
            // Per channel the Jacobian row is the contrast across the edge times geo in the first
            // four slots, a_B at B_k and a_D at D_k.
            let (mut gg, mut gr) = (0.0, 0.0);
            for k in 0..3 {
                let ck = contrast[k];
                gg += ck * ck;
                gr += ck * r[k];
                for a in 0..4 {
                    let v = wt * ck * geo[a];
                    jtj[(a, 4 + k)] += v * ab;
                    jtj[(a, 7 + k)] += v * ad;
                }
                jtj[(4 + k, 4 + k)] += wt * ab * ab;
                jtj[(4 + k, 7 + k)] += wt * ab * ad;
                jtj[(7 + k, 7 + k)] += wt * ad * ad;
                jtr[4 + k] += wt * ab * r[k];
                jtr[7 + k] += wt * ad * r[k];
            }
            for a in 0..4 {
                for b in a..4 {
                    jtj[(a, b)] += wt * gg * geo[a] * geo[b];
                }
                jtr[a] += wt * gr * geo[a];
            }
        }
        // The lower triangle from the upper.
        for a in 0..10 {
            for b in 0..a {
                jtj[(a, b)] = jtj[(b, a)];
            }
        }
        if !self.free_radius {
            jtj[(3, 3)] = 1.0;
        }
        (cost, jtj, jtr)
    }

    /// Levenberg–Marquardt from the outline fit's centre.
    fn fit(&self, start: MatPoint) -> Option<Refined> {
        if self.samples.len() < 20 {
            return None;
        }
        let mut weight = vec![1.0; self.samples.len()];
        let (b, d) = self.levels(start, self.radius_mm, START_BLUR_PX, &weight)?;
        let contrast0 = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        if contrast0.is_nan() || contrast0 <= 1e-3 {
            return None;
        }
        let scale2 = (ROBUST_SHARE * contrast0).powi(2);
        let mut p = Params::from_column_slice(&[start.x, start.y, START_BLUR_PX, self.radius_mm, b[0], b[1], b[2], d[0], d[1], d[2]]);
        let (mut cost, mut jtj, mut jtr) = self.normal_equations(&p, scale2, &mut weight);
        let mut trial = weight.clone();
        let mut lambda = 1e-3;
        for _ in 0..MAX_ROUNDS {
            let mut damped = jtj;
            for i in 0..10 {
                damped[(i, i)] *= 1.0 + lambda;
            }
            let Some(step) = damped.cholesky().map(|ch| -ch.solve(&jtr)) else {
                lambda *= 10.0;
                continue;
            };
            let mut q = p + step;
            q[2] = q[2].clamp(BLUR_RANGE_PX.0, BLUR_RANGE_PX.1);
            q[3] = q[3].clamp(RADIUS_RANGE.0 * self.radius_mm, RADIUS_RANGE.1 * self.radius_mm);
            let (c2, j2, r2) = self.normal_equations(&q, scale2, &mut trial);
            if c2 <= cost {
                let moved = step[0].hypot(step[1]) * self.ppm;
                (p, cost, jtj, jtr) = (q, c2, j2, r2);
                std::mem::swap(&mut weight, &mut trial);
                lambda = (lambda * 0.3).max(1e-7);
                if moved < SETTLED_PX {
                    break;
                }
            } else {
                lambda *= 10.0;
                if lambda > 1e6 {
                    break;
                }
            }
        }
        let contrast = (p[7] * p[7] + p[8] * p[8] + p[9] * p[9]).sqrt();
        let centre = MatPoint::new(p[0], p[1]);
        let off = self
            .samples
            .iter()
            .filter(|s| {
                // Off by over half the contrast across the rim there (the felt's, or beside a line
                // the line's background's).
                let (model, across) = s.terms(&p, self.pixel(s, centre, p[3], p[2]).e);
                let norm = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
                norm([0, 1, 2].map(|k| model[k] - s.rgb[k])) > 0.5 * norm(across)
            })
            .count();
        let unexplained = off as f64 / self.samples.len() as f64;
        (centre.is_finite() && contrast > 0.5 * contrast0).then_some(Refined { centre, radius_mm: p[3], blur_px: p[2], unexplained })
    }
}

/// The logistic edge: 1 well inside, 0 well outside, ½ on the outline.
fn logistic(t: f64) -> f64 {
    1.0 / (1.0 + (-t).exp())
}

#[cfg(test)]
pub(crate) use tests::overhead as test_calibration;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::calibrate::{lens::Lens, Orientation};
    use crate::geometry::MatSpec;
    use nalgebra::Matrix3;
    use opencv::core::{Mat, Point, Scalar, Size, CV_8UC3};
    use opencv::imgproc;
    use opencv::prelude::*;
    use rand::Rng;
    use rand_pcg::Pcg64;
    use rand::SeedableRng;

    /// Frame size of the drawings.
    const SIZE: i32 = 160;
    /// Their scale, pixels per mm (a 1080p frame's).
    const PPM: f64 = 0.75;

    /// A camera straight overhead with no lens distortion, `PPM` pixels per mm, the mat's centre
    /// at the frame's centre: a calibration for drawings.
    pub(crate) fn overhead() -> Calibration {
        let c = SIZE as f64 / 2.0;
        let img_from_mat = Matrix3::new(PPM, 0.0, c, 0.0, PPM, c, 0.0, 0.0, 1.0);
        let mat = MatSpec::STANDARD;
        let corners_px = mat.corners().map(|m| PixelPoint::new(c + PPM * m.x, c + PPM * m.y));
        Calibration {
            width: SIZE as u32,
            height: SIZE as u32,
            mat,
            lens: Lens::Pinhole,
            img_from_mat,
            mat_from_img: img_from_mat.try_inverse().expect("invertible"),
            corners_px,
            rms_px: 0.0,
            orientation: Orientation::Image,
            edge_points: 0,
            baseline_points: 0,
            baselines_found: [None; 4],
            felt_lab: [128.0, 128.0, 128.0],
            wink_diameters: None,
            camera: None,
            pot_check: None,
            blue_corner: crate::geometry::Corner::NegXPosY,
        }
    }

    /// The frame pixel of mat point `m` on [`overhead`]'s drawings (pixel (i, j) covers
    /// [i − ½, i + ½) in OpenCV's convention).
    fn px(m: MatPoint) -> PixelPoint {
        PixelPoint::new(SIZE as f64 / 2.0 + PPM * m.x, SIZE as f64 / 2.0 + PPM * m.y)
    }

    /// Discs (mat mm: centre, radius) of BGR `wink` on `felt`, drawn 8 times larger, blurred by
    /// `blur_px` (Gaussian sd), shrunk, with uniform noise of ±`noise` levels.
    fn drawing(discs: &[(MatPoint, f64)], felt: Scalar, wink: Scalar, blur_px: f64, noise: f64, seed: u64) -> Mat {
        painted(&[], discs, felt, wink, blur_px, noise, seed)
    }

    /// [`drawing`] over bands of paint first (mat mm: from, to, width; BGR).
    fn painted(bands: &[(MatPoint, MatPoint, f64, Scalar)], discs: &[(MatPoint, f64)], felt: Scalar, wink: Scalar, blur_px: f64, noise: f64, seed: u64) -> Mat {
        let k = 8.0;
        let big_size = SIZE * k as i32;
        let mut big = Mat::new_rows_cols_with_default(big_size, big_size, CV_8UC3, felt).expect("image");
        let big_px = |m: MatPoint| {
            let p = px(m);
            Point::new((k * (p.x + 0.5) - 0.5).round() as i32, (k * (p.y + 0.5) - 0.5).round() as i32)
        };
        for &(a, b, width, colour) in bands {
            imgproc::line(&mut big, big_px(a), big_px(b), colour, (k * width * PPM).round() as i32, imgproc::LINE_AA, 0).expect("band");
        }
        for &(c, r) in discs {
            let p = px(c);
            // Big pixel (i, j) covers small pixel (i / 8 − 7/16 …): centres map as 8 (x + ½) − ½.
            let (x, y) = ((k * (p.x + 0.5) - 0.5) * 16.0, (k * (p.y + 0.5) - 0.5) * 16.0);
            imgproc::circle(&mut big, Point::new(x.round() as i32, y.round() as i32), (k * r * PPM * 16.0).round() as i32, wink, -1, imgproc::LINE_AA, 4).expect("disc");
        }
        // The optics blur light: in linear values (as `LinearView` reads them), back to 8 bits after.
        let mut linear = Mat::default();
        big.convert_to(&mut linear, opencv::core::CV_32FC3, 1.0 / 255.0, 0.0).expect("float");
        let mut lit = Mat::default();
        opencv::core::pow(&linear, crate::detect::sample::GAMMA as f64, &mut lit).expect("linear");
        let mut blurred = Mat::default();
        imgproc::gaussian_blur(&lit, &mut blurred, Size::new(0, 0), blur_px * k, 0.0, opencv::core::BORDER_REPLICATE).expect("blur");
        let mut shrunk = Mat::default();
        imgproc::resize(&blurred, &mut shrunk, Size::new(SIZE, SIZE), 0.0, 0.0, imgproc::INTER_AREA).expect("shrink");
        let mut encoded = Mat::default();
        opencv::core::pow(&shrunk, 1.0 / crate::detect::sample::GAMMA as f64, &mut encoded).expect("encode");
        let mut small = Mat::default();
        encoded.convert_to(&mut small, CV_8UC3, 255.0, 0.0).expect("8 bits");
        let mut rng = Pcg64::seed_from_u64(seed);
        for v in small.data_bytes_mut().expect("bytes") {
            *v = (*v as f64 + rng.random_range(-noise..=noise)).round().clamp(0.0, 255.0) as u8;
        }
        small
    }

    /// Green felt and a green wink a little brighter and more saturated: 14 CIE a*b* units apart,
    /// the faint case the picture is for.
    const FELT: (f64, f64, f64) = (70.0, 118.0, 78.0);
    const GREEN: (f64, f64, f64) = (52.0, 150.0, 60.0);

    fn bgr(c: (f64, f64, f64)) -> Scalar {
        Scalar::new(c.0, c.1, c.2, 0.0)
    }

    #[test]
    fn the_logistic_edge_is_half_on_the_outline() {
        assert!((logistic(0.0) - 0.5).abs() < 1e-12);
        assert!(logistic(8.0) > 0.999 && logistic(-8.0) < 0.001);
    }

    #[test]
    fn a_faint_winks_centre_comes_from_every_pixel_round_its_rim() -> Result<(), Box<dyn std::error::Error>> {
        let cal = overhead();
        let rest = Rest::Flat { base_mm: 0.0 };
        let mut errors = Vec::new();
        for seed in 0..8u64 {
            // A small wink (radius 8 mm, 6 px) somewhere within a pixel, found by the outline
            // fit up to a pixel off.
            let t = MatPoint::new(3.0 + 0.37 * seed as f64, -2.0 + 0.23 * seed as f64);
            let img = drawing(&[(t, 8.0)], bgr(FELT), bgr(GREEN), 0.8, 4.0, seed);
            let view = LinearView::new(&img)?;
            let start = t + MatPoint::new(0.9, -0.7);
            let ring = Ring::new(&view, &cal, start, 8.0, rest, PPM, &[]).ok_or("a ring")?;
            assert!(ring.coverage > 0.99, "the whole rim is clear: {}", ring.coverage);
            let got = ring.fit(Radius::Fixed(8.0)).ok_or("a fit")?;
            errors.push(got.centre.distance(t));
        }
        errors.sort_by(f64::total_cmp);
        let (median, worst) = (errors[errors.len() / 2], errors[errors.len() - 1]);
        println!("faint wink centres: median {median:.3} mm, worst {worst:.3} mm (0.75 px/mm, noise ±4 levels)");
        assert!(median < 0.08 && worst < 0.15, "median {median:.3} mm, worst {worst:.3} mm");
        Ok(())
    }

    #[test]
    fn a_rim_partly_hidden_pulls_the_centre_unless_fitted_at_its_own_radius() -> Result<(), Box<dyn std::error::Error>> {
        let cal = overhead();
        let rest = Rest::Flat { base_mm: 0.0 };
        // A real wink is 3% smaller than its nominal 16 mm.
        let (t, r_true) = (MatPoint::new(2.3, 1.6), 8.0 * 0.97);
        let img = drawing(&[(t, r_true)], bgr(FELT), bgr(GREEN), 0.8, 2.0, 7);
        let view = LinearView::new(&img)?;
        // Seen whole, the picture measures the wink's own radius.
        let whole = Ring::new(&view, &cal, t, 8.0, rest, PPM, &[]).ok_or("ring")?;
        let free = whole.fit(Radius::Free).ok_or("free fit")?;
        assert!((free.radius_mm - r_true).abs() < 0.1, "radius {:.3} mm, drawn {r_true:.3}", free.radius_mm);
        // A large wink's outline beside it, half a millimetre off its rim to the right, hides
        // that side (its pixels are left out).
        let beside = (px(t + MatPoint::new(r_true + 0.5 + 11.0, 0.0)), 11.0 * PPM);
        let half = Ring::new(&view, &cal, t, 8.0, rest, PPM, &[beside]).ok_or("ring")?;
        assert!(half.coverage < 0.85, "coverage {}", half.coverage);
        let nominal = half.fit(Radius::Fixed(8.0)).ok_or("nominal fit")?;
        let own = half.fit(Radius::Fixed(free.radius_mm)).ok_or("own-radius fit")?;
        // At the nominal radius the circle, too big for the arc it sees, moves towards the hidden
        // side; at the radius measured whole it stays.
        println!("partly hidden: nominal radius {:.3} mm towards the hidden side, own radius {:.3} mm out", nominal.centre.x - t.x, own.centre.distance(t));
        assert!(nominal.centre.x - t.x > 0.1, "nominal: {:.3} mm towards the hidden side", nominal.centre.x - t.x);
        assert!(own.centre.distance(t) < 0.05, "own radius: {:.3} mm out", own.centre.distance(t));
        Ok(())
    }

    /// A wink lying across a painted baseline: the pixels on the paint are fitted too, over the
    /// paint as the frame shows it along the line, so the rim by the line is measured, not
    /// inferred from the far side and an assumed radius. Within a quarter of a pixel along the
    /// line's normal: the model blurs the wink over the paint's blurred picture, where the optics
    /// blur the two together, which moves the rim by a fifth of a pixel at a blur of 0.8 px
    /// (0.15 mm at 0.5 px, 0.54 mm at 1.2 px, as measured on these drawings).
    #[test]
    fn a_wink_across_a_painted_line_is_fitted_over_the_paint() -> Result<(), Box<dyn std::error::Error>> {
        // The frame shows the middle of the (+x, +y) baseline at its centre.
        let mut cal = overhead();
        let line = cal.mat.baselines().iter().find(|b| b.corner == crate::geometry::Corner::PosXPosY).ok_or("baseline")?.segment;
        let m0 = MatPoint::new((line.a.x + line.b.x) / 2.0, (line.a.y + line.b.y) / 2.0);
        let c = SIZE as f64 / 2.0;
        cal.img_from_mat[(0, 2)] = c - PPM * m0.x;
        cal.img_from_mat[(1, 2)] = c - PPM * m0.y;
        cal.mat_from_img = cal.img_from_mat.try_inverse().ok_or("invertible")?;
        // Local drawing coordinates: mat point m0 + l is drawn at l.
        let along = (line.b - line.a) * (1.0 / (line.b - line.a).norm());
        let normal = MatPoint::new(-along.y, along.x);
        let outward = if normal.dot(m0) > 0.0 { normal } else { normal * -1.0 };
        let rest = Rest::Flat { base_mm: 0.0 };
        let white = Scalar::new(235.0, 235.0, 235.0, 0.0);
        let mut errors = Vec::new();
        for seed in 0..6u64 {
            // A real small wink (7.76 mm) reaching 0–2.5 mm across the line's middle, on a
            // 4 mm band.
            let over = 0.5 * seed as f64;
            let local = outward * (over - 7.76) + along * (0.31 * seed as f64);
            let img = painted(&[(along * -60.0, along * 60.0, 4.0, white)], &[(local, 7.76)], bgr(FELT), bgr(GREEN), 0.8, 2.0, seed);
            let view = LinearView::new(&img)?;
            let t = m0 + local;
            let ring = Ring::new(&view, &cal, t + MatPoint::new(0.6, -0.5), 8.0, rest, PPM, &[]).ok_or("a ring")?;
            assert!(ring.coverage > 0.95, "the rim by the line is fitted too: {}", ring.coverage);
            let got = ring.fit(Radius::Fixed(7.76)).ok_or("a fit")?;
            errors.push((got.centre - t).dot(outward));
        }
        let worst = errors.iter().map(|e| e.abs()).fold(0.0, f64::max);
        println!("across a painted line, error along its normal: worst {worst:.3} mm of {errors:?}");
        assert!(worst < 0.25 / PPM, "{errors:?}");
        Ok(())
    }

    #[test]
    fn a_ring_with_little_rim_clear_is_refused() -> Result<(), Box<dyn std::error::Error>> {
        let cal = overhead();
        let t = MatPoint::new(0.0, 0.0);
        let img = drawing(&[(t, 8.0)], bgr(FELT), bgr(GREEN), 0.8, 2.0, 3);
        let view = LinearView::new(&img)?;
        // Two neighbours overlapping its outline on either side leave under half its rim.
        let avoid = [(px(MatPoint::new(12.0, 0.0)), 8.0 * PPM), (px(MatPoint::new(-12.0, 0.0)), 8.0 * PPM)];
        assert!(Ring::new(&view, &cal, t, 8.0, Rest::Flat { base_mm: 0.0 }, PPM, &avoid).is_none());
        Ok(())
    }
}
