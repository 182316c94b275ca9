//! A wink's outline measured to a fraction of a pixel and its footprint fitted in millimetres.
//!
//! Edges are found along rays from a rough centre: on each ray, the colour just inside and just
//! beyond the expected rim, and the point where the sampled colour (linear light) crosses halfway
//! between them. Each edge point is then taken down to the mat's plane through the calibration at
//! the height where the camera's line of sight grazes the wink's rim (parallax), and a circle is
//! fitted to those footprint points by robust least squares: its centre is the footprint's centre,
//! its radius the wink's.

use super::colour::{ColourModel, Lab};
use super::sample::{linear_to_lab, LinearView};
use crate::calibrate::Calibration;
use crate::geometry::{MatPoint, PixelPoint};
use crate::report::position::Colour;

/// A wink's assumed thickness, in mm (domain: ~1.5 mm; measured winks 1.5–1.8 mm).
pub const THICKNESS_MM: f64 = 1.6;
/// Radius of the rounded rim's profile, as a share of the thickness.
pub const RIM_ROUNDING: f64 = 0.4;
/// Rec. 709 luminance weights for linear RGB.
const LUMA: [f32; 3] = [0.2126, 0.7152, 0.0722];
/// Use the colour change orthogonal to the wink's own colour when it carries at least this
/// share of the difference.
const PERP_SHARE: f32 = 0.3;
/// Use brightness alone when it carries at least this share of the colour difference.
const LUMA_SHARE: f32 = 0.3;
/// [`EdgeMeasure::Brightness`] reads a wink's rim on brightness when the wink is brighter than
/// what lies beyond it by at least this share of their colour difference (linear light; a yellow
/// wink on grey, green or blue felt: ~0.5).
const BRIGHT_WINK_LUMA_SHARE: f32 = 0.45;
/// Step between samples along a ray, in pixels.
const RAY_STEP_PX: f64 = 0.5;
/// Each ray is read this far either side of its line, weighted ¼, ½, ¼ across.
const RAY_HALF_WIDTH_PX: f64 = 0.5;
/// Largest spread (RMS) of the samples beyond the rim, as a share of the wink's contrast with
/// them, for the edge to count as the wink's own rim against the background.
const MAX_BEYOND_SPREAD: f32 = 0.25;
/// Least linear-light contrast between a wink and what lies beyond it for an edge to count.
const MIN_CONTRAST: f32 = 0.012;
/// Robust (Huber) scale of the circle fit, in pixels of the frame.
const HUBER_PX: f64 = 0.7;
/// Edge points further than this from the fitted outline (pixels) are outliers.
const OUTLIER_PX: f64 = 2.0;

/// What lies just beyond an edge point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Beyond {
    /// Felt, table, a baseline: not a wink.
    Background,
    /// Another wink of this colour.
    Wink(Colour),
    /// Inside another wink's outline (whatever its colour).
    Covered,
}

/// One edge point on a ray.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RayEdge {
    /// Where, in the frame.
    pub px: PixelPoint,
    /// Unit direction of the ray in the frame.
    pub dir: PixelPoint,
    /// What lies beyond.
    pub beyond: Beyond,
}

/// Finds edge points along `n` rays from `c0`, expecting the rim about `r0` pixels out.
pub fn ray_edges(view: &LinearView<'_>, model: &ColourModel, colour: Colour, c0: PixelPoint, r0: f64, n: usize) -> Vec<RayEdge> {
    ray_edges_with(view, model, colour, c0, r0, n, EdgeMeasure::Orthogonal)
}

/// What the crossing from a wink's colour to what lies beyond it is measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeMeasure {
    /// The colour change orthogonal to the wink's own colour (shading of the wink reads as the
    /// wink), crossed halfway to the level just past the rim when that differs from the level
    /// further out (a shadow on the felt, a strip of felt before the table or a baseline).
    Orthogonal,
    /// Chromaticity (each linear channel over their sum), when the wink and what lies beyond
    /// differ in it by at least [`MIN_CHROMA_CONTRAST`]: shading of either side changes neither,
    /// so neither the wink's dark rounded rim nor its shadow on the felt moves the crossing.
    /// Else as `Orthogonal`.
    Chroma,
    /// As `Chroma`, with the blurred mix's share of the wink taken back from its chromaticity
    /// (see [`Crossing::of`]): a close-up's rims, where no learned offset corrects them.
    ChromaMix,
    /// Brightness, for a wink brighter than what lies beyond by [`BRIGHT_WINK_LUMA_SHARE`] of the
    /// difference; else as `Orthogonal`. A JPEG, like most video, stores colour at half the
    /// resolution of brightness, blurred in its gamma-encoded values; read in linear light that
    /// blur leaves a halo of a yellow wink's colour a pixel or two wide, on which the orthogonal
    /// measure put a small wink's rim 1–2 px out on some rays and not others. Brightness is
    /// stored at full resolution, but a lamp's highlight and shaded rim move it (1.7 mm on a
    /// yellow wink drawn in the flat style), so it is asked only when the orthogonal edges
    /// scatter (`detect::measure`).
    Brightness,
}

/// Least chromaticity difference (Euclidean, in r/g/b shares) for [`EdgeMeasure::Chroma`].
pub const MIN_CHROMA_CONTRAST: f32 = 0.08;

fn chroma(v: &[f32; 3]) -> [f32; 3] {
    let s = (v[0] + v[1] + v[2]).max(1e-6);
    [v[0] / s, v[1] / s, v[2] / s]
}

/// How far (share of the way) each colour lies from what lies beyond a rim towards the wink's
/// inside colour: 1 the inside, 0 beyond, a blurred mix of the two in between.
#[derive(Debug, Clone, Copy)]
struct Crossing {
    beyond: [f32; 3],
    /// Linear-light contrast of inside and beyond.
    contrast: f32,
    /// Projection used when the measure is not chromaticity.
    u: [f32; 3],
    /// Chromaticity of beyond and the inside-minus-beyond difference, when chromaticity measures.
    chroma: Option<([f32; 3], [f32; 3], f32)>,
    /// Brightness (channel sum) of inside and of beyond, for [`EdgeMeasure::ChromaMix`]: a
    /// blurred mix's chromaticity weighs each side by its brightness, which [`Crossing::of`]
    /// takes back.
    sums: Option<(f32, f32)>,
}

impl Crossing {
    /// `None` when inside and beyond differ too little to measure a crossing.
    fn new(inside: [f32; 3], beyond: [f32; 3], measure: EdgeMeasure) -> Option<Crossing> {
        let d = [inside[0] - beyond[0], inside[1] - beyond[1], inside[2] - beyond[2]];
        let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        if d2.sqrt() < MIN_CONTRAST {
            return None;
        }
        let luma = |v: &[f32; 3]| LUMA[0] * v[0] + LUMA[1] * v[1] + LUMA[2] * v[2];
        let dy = luma(&inside) - luma(&beyond);
        // A wink's rounded rim and any shading darken its colour without changing it, so the
        // silhouette is where the colour changes, not the brightness: project onto the part of
        // the difference orthogonal to the inside colour (any shade of the inside colour then
        // reads 1, the background 0, and a blurred mix of the two in between, linearly).
        let n2 = inside[0] * inside[0] + inside[1] * inside[1] + inside[2] * inside[2];
        let along = if n2 > 1e-9 { (d[0] * inside[0] + d[1] * inside[1] + d[2] * inside[2]) / n2 } else { 0.0 };
        let perp = [d[0] - along * inside[0], d[1] - along * inside[1], d[2] - along * inside[2]];
        let perp_dot_d = perp[0] * d[0] + perp[1] * d[1] + perp[2] * d[2];
        let u: [f32; 3] = if measure == EdgeMeasure::Brightness && dy >= BRIGHT_WINK_LUMA_SHARE * d2.sqrt() {
            // Asked for, a wink much brighter than what lies beyond: its brightness.
            LUMA.map(|w| w / dy)
        } else if perp_dot_d.sqrt() >= PERP_SHARE * d2.sqrt() {
            perp.map(|c| c / perp_dot_d)
        } else if dy.abs() >= LUMA_SHARE * d2.sqrt() {
            // Wink and background nearly the same hue: brightness where it carries the
            // difference, else the whole colour.
            LUMA.map(|w| w / dy)
        } else {
            d.map(|c| c / d2)
        };
        let (ci, cb) = (chroma(&inside), chroma(&beyond));
        let dc = [ci[0] - cb[0], ci[1] - cb[1], ci[2] - cb[2]];
        let dc2 = dc[0] * dc[0] + dc[1] * dc[1] + dc[2] * dc[2];
        let chroma = (matches!(measure, EdgeMeasure::Chroma | EdgeMeasure::ChromaMix) && dc2.sqrt() >= MIN_CHROMA_CONTRAST).then_some((cb, dc, dc2));
        let sum = |v: &[f32; 3]| v[0] + v[1] + v[2];
        let sums = (measure == EdgeMeasure::ChromaMix).then(|| (sum(&inside), sum(&beyond)));
        Some(Crossing { beyond, contrast: d2.sqrt(), u, chroma, sums })
    }

    /// Share of the way from beyond to inside of colour `v`: for a blurred mix, the share of
    /// the inside colour in it.
    fn of(&self, v: &[f32; 3]) -> f32 {
        match self.chroma {
            Some((cb, dc, dc2)) => {
                let c = chroma(v);
                let w = ((c[0] - cb[0]) * dc[0] + (c[1] - cb[1]) * dc[1] + (c[2] - cb[2]) * dc[2]) / dc2;
                // Read as w, a bright wink's blur on darker felt counts as the wink further out
                // than half of it reaches (a yellow wink's rim a pixel out in a close-up).
                match self.sums {
                    Some((s_in, s_out)) => {
                        let w = w.clamp(0.0, 1.0);
                        light_shares([f64::from(w), f64::from(1.0 - w)], [f64::from(s_in), f64::from(s_out)]).map_or(w, |x| x[0] as f32)
                    }
                    None => w,
                }
            }
            None => {
                let b = self.beyond;
                (v[0] - b[0]) * self.u[0] + (v[1] - b[1]) * self.u[1] + (v[2] - b[2]) * self.u[2]
            }
        }
    }
}

/// Each colour's share of a blurred mix from its share of the mix's chromaticity: a mix of shares
/// xᵢ of colours whose channel sums are sᵢ has the chromaticity of the colours weighed by xᵢ·sᵢ,
/// so xᵢ is as wᵢ / sᵢ. `None` when no colour has a share.
pub(crate) fn light_shares<const N: usize>(chroma_shares: [f64; N], sums: [f64; N]) -> Option<[f64; N]> {
    let x: [f64; N] = std::array::from_fn(|i| chroma_shares[i].max(0.0) / sums[i].max(1e-6));
    let total: f64 = x.iter().sum();
    (total > 1e-12).then(|| x.map(|v| v / total))
}

/// The level just past a rim replaces the far one when they differ by more than this share of
/// the wink's contrast with the far level.
const LOCAL_LEVEL_SHARE: f32 = 0.25;

/// Finds edge points along `n` rays from `c0`, expecting the rim about `r0` pixels out, with the
/// crossing measured as `measure` says.
pub fn ray_edges_with(view: &LinearView<'_>, model: &ColourModel, colour: Colour, c0: PixelPoint, r0: f64, n: usize, measure: EdgeMeasure) -> Vec<RayEdge> {
    ray_edges_past(view, model, colour, c0, r0, n, measure, &[])
}

/// Rays from a middle covered by other winks start past their outlines (and this blur, pixels).
const OVER_BLUR_PX: f64 = 1.0;

/// [`ray_edges_with`] for a wink whose middle lies under the winks `over` (outlines: centre,
/// radius px), as a wink mostly under another does: each ray's inside colour is read from where
/// it leaves their outlines, and a ray that does not leave them short of the expected rim is
/// covered (no edge).
#[allow(clippy::too_many_arguments)]
pub fn ray_edges_past(view: &LinearView<'_>, model: &ColourModel, colour: Colour, c0: PixelPoint, r0: f64, n: usize, measure: EdgeMeasure, over: &[(PixelPoint, f64)]) -> Vec<RayEdge> {
    if !(r0.is_finite() && r0 > 0.5 && r0 < (view.width() + view.height()) as f64 / 4.0) {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(n);
    let (s_in, s_out) = ((0.25 * r0).max(1.0), 1.75 * r0 + 1.5);
    let steps = ((s_out - s_in) / RAY_STEP_PX) as usize + 1;
    let mut prof: Vec<[f32; 3]> = Vec::with_capacity(steps);
    // Every sample below lies within the last step's reach (and half a pixel across) of `c0`.
    let patch = view.patch((c0.x, c0.y), s_in + steps as f64 * RAY_STEP_PX + 1.0);
    for k in 0..n {
        let a = k as f64 / n as f64 * std::f64::consts::TAU;
        let dir = PixelPoint::new(a.cos(), a.sin());
        if !patch.ray_profile((c0.x, c0.y), (dir.x, dir.y), (s_in, RAY_STEP_PX, steps), RAY_HALF_WIDTH_PX, &mut prof) {
            continue;
        }
        let at = |s: f64| ((s - s_in) / RAY_STEP_PX).round().clamp(0.0, (steps - 1) as f64) as usize;
        let mean = |a: usize, b: usize| {
            let mut m = [0f32; 3];
            for v in &prof[a..=b] {
                for c in 0..3 {
                    m[c] += v[c];
                }
            }
            m.map(|x| x / (b - a + 1) as f32)
        };
        // Where the ray leaves the outlines over this wink's middle (none: 0).
        let leave = over
            .iter()
            .filter_map(|&(c, r)| {
                let (d, r) = (c0 - c, r + OVER_BLUR_PX);
                let b = dir.x * d.x + dir.y * d.y;
                let q = d.x * d.x + d.y * d.y - r * r;
                (q < 0.0).then(|| -b + (b * b - q).sqrt())
            })
            .fold(0.0, f64::max);
        if leave >= r0 - 0.5 {
            continue;
        }
        let inside = if leave > 0.0 { mean(at(leave), at(0.5 * (leave + r0))) } else { mean(0, at(0.55 * r0)) };
        let i0 = at(0.5 * r0).max(at(leave));
        // A ray starting inside a wink of another colour: the hypothesis is that wink's blurred
        // rim (a yellow wink's edge on green felt mixes to green), or this wink is covered here.
        if model.classify(linear_to_lab(inside)).is_some_and(|c| c != colour) {
            continue;
        }
        let far = mean(at(1.35 * r0 + 1.0), steps - 1);
        let Some(far_share) = Crossing::new(inside, far, measure) else { continue };
        // What lies beyond must be one thing: a ray whose far samples run from felt into another
        // wink (or a shadow's edge) has no single level to cross halfway to.
        let (b0, b1) = (at(1.35 * r0 + 1.0), steps - 1);
        let spread = (prof[b0..=b1].iter().map(|v| (0..3).map(|c| (v[c] - far[c]).powi(2)).sum::<f32>()).sum::<f32>() / (b1 - b0 + 1) as f32).sqrt();
        let mut mixed_beyond = spread > MAX_BEYOND_SPREAD * far_share.contrast;
        // The rim borders what lies just past it, which need not be what lies further out (a
        // strip of felt between a wink and the mat's edge or a baseline): the level
        // where the profile first levels off a little past where it first leaves the wink's colour.
        // Used when it differs materially from the far level.
        let mut beyond = far;
        let mut share = far_share;
        // Only between backgrounds (felt, table, baseline): where a wink lies beyond, the far
        // level already names it, and the boundary between winks is the stacking's.
        let background = |v: [f32; 3]| model.classify(linear_to_lab(v)).is_none();
        // The far level's class, asked for at most once.
        let far_class = std::cell::OnceCell::new();
        let far_class = || *far_class.get_or_init(|| model.classify(linear_to_lab(far)));
        let far_is_background = || far_class().is_none();
        if let Some(first) = (i0..steps).find(|&i| share.of(&prof[i]) < 0.75) {
            let (lo, hi) = (first + (1.5 / RAY_STEP_PX) as usize, (first + (5.0 / RAY_STEP_PX) as usize).min(steps - 3));
            let g = |j: usize| (0..3).map(|c| (prof[j + 1][c] - prof[j - 1][c]).powi(2)).sum::<f32>();
            // The first plateau: the first sample at which the profile stops flattening.
            let flattest = (lo..=hi).find(|&j| g(j) <= g(j + 1)).or_else(|| (lo <= hi).then_some(hi));
            if let Some(j) = flattest {
                let local = mean(j - 1, j + 1);
                let moved = (0..3).map(|c| (local[c] - far[c]).powi(2)).sum::<f32>().sqrt();
                if moved > LOCAL_LEVEL_SHARE * far_share.contrast && background(local) && far_is_background() {
                    if let Some(near_share) = Crossing::new(inside, local, measure) {
                        beyond = local;
                        share = near_share;
                        mixed_beyond = false;
                    }
                }
            }
        }
        if beyond == far {
            // A strip too thin to level off (felt a pixel or two wide between a wink and the
            // table): the sample furthest from every mix of the inside and far colours stands
            // for what lies just past the rim. (Over the renderer's 228 frames: 3 winks by the
            // mat's edge lost and 2 false ones found before; none lost or added by it.)
            let seg = [far[0] - inside[0], far[1] - inside[1], far[2] - inside[2]];
            let seg2 = (seg[0] * seg[0] + seg[1] * seg[1] + seg[2] * seg[2]).max(1e-12);
            let dev = |v: &[f32; 3]| {
                let d = [v[0] - inside[0], v[1] - inside[1], v[2] - inside[2]];
                let t = ((d[0] * seg[0] + d[1] * seg[1] + d[2] * seg[2]) / seg2).clamp(0.0, 1.0);
                (0..3).map(|c| (d[c] - t * seg[c]).powi(2)).sum::<f32>().sqrt()
            };
            let (i0, i1) = (at(0.5 * r0), at(1.35 * r0 + 1.0));
            if let Some((j, local_dev)) = (i0..=i1).map(|i| (i, dev(&prof[i]))).max_by(|a, b| a.1.total_cmp(&b.1)) {
                let local = prof[j];
                // Felt between the wink and something else (the table, a baseline): nearer the
                // felt's colour than the far level is. Round a wink on the felt the far level is
                // the felt, so a JPEG's colour ringing there never passes for a strip (taken
                // for one, it lost or doubled 5 winks a few pixels across).
                let to_felt = |v: [f32; 3]| linear_to_lab(v).distance(model.felt);
                if !mixed_beyond && local_dev > LOCAL_LEVEL_SHARE * far_share.contrast && background(local) && far_is_background() && to_felt(local) < to_felt(far) {
                    if let Some(near_share) = Crossing::new(inside, local, measure) {
                        beyond = local;
                        share = near_share;
                    }
                }
            }
        }
        let f = |v: &[f32; 3]| share.of(v);
        // The halfway crossing (inside → beyond, going out) nearest the expected rim.
        let mut best: Option<f64> = None;
        let mut f1 = f(&prof[i0]);
        for i in i0..steps - 1 {
            let f0 = f1;
            f1 = f(&prof[i + 1]);
            if f0 >= 0.5 && f1 < 0.5 {
                let s = s_in + (i as f64 + ((f0 - 0.5) / (f0 - f1)) as f64) * RAY_STEP_PX;
                if best.is_none_or(|b| (s - r0).abs() < (b - r0).abs()) {
                    best = Some(s);
                }
            }
        }
        let Some(s) = best else { continue };
        if s > 1.45 * r0 + 1.0 {
            continue;
        }
        let beyond_class = if beyond == far { far_class() } else { model.classify(linear_to_lab(beyond)) };
        let kind = match beyond_class {
            Some(c) if c != colour => Beyond::Wink(c),
            Some(_) => continue,
            None if mixed_beyond => Beyond::Covered,
            None => Beyond::Background,
        };
        out.push(RayEdge { px: PixelPoint::new(c0.x + dir.x * s, c0.y + dir.y * s), dir, beyond: kind });
    }
    out
}

/// How a wink rests, for the heights of its rim's points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rest {
    /// Flat, its underside `base_mm` above the mat (0 on the mat, negative on a lower table).
    Flat {
        /// Height of the underside, in mm.
        base_mm: f64,
    },
    /// Tilted: one edge on the mat, the other on a lower wink whose top lies `support_mm` above the
    /// mat at the point `towards` (mat mm) where it carries this wink.
    Leaning {
        /// Height of the support, in mm.
        support_mm: f64,
        /// Where the support is, in mat mm.
        towards: MatPoint,
    },
}

impl Rest {
    /// Height of the middle of the wink's rim at unit direction `u` (mat frame) from its centre.
    pub fn rim_mid_height(&self, centre: MatPoint, radius: f64, u: MatPoint) -> f64 {
        match *self {
            Rest::Flat { base_mm } => base_mm + THICKNESS_MM / 2.0,
            Rest::Leaning { support_mm, towards } => {
                let v = towards - centre;
                let d = v.norm().max(1e-6);
                let w = v * (1.0 / d);
                // Far edge on the mat, the disc rising through the support: slope over the reach.
                let slope = support_mm / (d + radius).max(1.0);
                slope * radius * (1.0 + u.dot(w)) + THICKNESS_MM / 2.0
            }
        }
    }
    /// Height of the top face at the centre.
    pub fn top_height(&self, radius: f64, centre: MatPoint) -> f64 {
        match *self {
            Rest::Flat { base_mm } => base_mm + THICKNESS_MM,
            Rest::Leaning { .. } => self.rim_mid_height(centre, radius, MatPoint::new(0.0, 0.0)) + THICKNESS_MM / 2.0,
        }
    }
}

/// A fitted footprint.
#[derive(Debug, Clone, PartialEq)]
pub struct CircleFit {
    /// Footprint centre, mat mm.
    pub centre: MatPoint,
    /// Radius, mm.
    pub radius: f64,
    /// RMS residual of the inliers, mm.
    pub rms_mm: f64,
    /// Which edge points were kept.
    pub inlier: Vec<bool>,
    /// Robust cost: the sum over edge points of the squared residual, capped at the outlier
    /// distance (mm²).
    pub cost: f64,
}

/// Where the camera's line of sight grazes a rounded rim: above the rim's middle on the side
/// facing away from the camera's nadir, below it on the near side, by the rounding's radius times
/// the sine of the sight line's angle off vertical.
pub(crate) fn grazing_height(cal: &Calibration, p: MatPoint, u: MatPoint) -> f64 {
    let Some(cam) = &cal.camera else { return 0.0 };
    let away = p - cam.nadir();
    let r = away.norm();
    if r < 1e-6 {
        return 0.0;
    }
    let sin_a = r / r.hypot(cam.height_mm());
    RIM_ROUNDING * THICKNESS_MM * sin_a * u.dot(away * (1.0 / r))
}

/// Fits a footprint circle to edge points, robustly. `radius` is the starting radius (mm); with
/// `free_radius` false it stays fixed. `mm_per_px` converts the robust scales.
pub fn fit_footprint(cal: &Calibration, edges: &[PixelPoint], start: MatPoint, radius: f64, free_radius: bool, rest: Rest, mm_per_px: f64) -> Option<CircleFit> {
    if edges.len() < 3 {
        return None;
    }
    let (mut c, mut r) = (start, radius);
    let huber = HUBER_PX * mm_per_px;
    let mut pts = vec![MatPoint::new(0.0, 0.0); edges.len()];
    let mut res = vec![0.0; edges.len()];
    // Where each edge point's line of sight meets the mat (the lens undone once, not every round).
    let on_mat: Vec<MatPoint> = edges.iter().map(|e| cal.image_to_mat(*e)).collect::<Option<_>>()?;
    for iter in 0..12 {
        // Each edge point down to the mat at the height where the sight line grazes the rim.
        for (k, &on0) in on_mat.iter().enumerate() {
            let u = {
                let v = on0 - c;
                let n = v.norm();
                if n > 1e-9 { v * (1.0 / n) } else { MatPoint::new(1.0, 0.0) }
            };
            let h = rest.rim_mid_height(c, r, u) + grazing_height(cal, on0, u);
            pts[k] = cal.raised(on0, h);
        }
        // Gauss–Newton with Huber weights on the geometric distance.
        let (mut jtj, mut jtr) = (nalgebra::Matrix3::<f64>::zeros(), nalgebra::Vector3::<f64>::zeros());
        let cut = if iter < 3 { f64::INFINITY } else { OUTLIER_PX * mm_per_px };
        for (k, p) in pts.iter().enumerate() {
            let v = *p - c;
            let d = v.norm().max(1e-9);
            let e = d - r;
            res[k] = e;
            if e.abs() > cut {
                continue;
            }
            let w = if e.abs() <= huber { 1.0 } else { huber / e.abs() };
            let j = if free_radius { nalgebra::Vector3::new(-v.x / d, -v.y / d, -1.0) } else { nalgebra::Vector3::new(-v.x / d, -v.y / d, 0.0) };
            jtj += j * j.transpose() * w;
            jtr += j * (e * w);
        }
        if !free_radius {
            jtj[(2, 2)] = 1.0;
        }
        let step = jtj.try_inverse().map(|m| -(m * jtr))?;
        c = c + MatPoint::new(step[0], step[1]);
        r += step[2];
        if !(r.is_finite() && r > 1.0) {
            return None;
        }
        if iter >= 4 && step.norm() < 1e-4 {
            break;
        }
    }
    let cut = OUTLIER_PX * mm_per_px;
    let inlier: Vec<bool> = pts.iter().map(|p| (p.distance(c) - r).abs() <= cut).collect();
    let n = inlier.iter().filter(|&&i| i).count();
    if n < 3 {
        return None;
    }
    let rms_mm = (pts.iter().zip(&inlier).filter(|(_, &i)| i).map(|(p, _)| (p.distance(c) - r).powi(2)).sum::<f64>() / n as f64).sqrt();
    let cost = pts.iter().map(|p| (p.distance(c) - r).powi(2).min(cut * cut)).sum::<f64>();
    Some(CircleFit { centre: c, radius: r, rms_mm, inlier, cost })
}

/// Lab colour of a frame point, for classifying.
pub fn lab_at(view: &LinearView<'_>, p: PixelPoint) -> Option<Lab> {
    view.linear(p.x, p.y).map(linear_to_lab)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::colour::Lab;
    use opencv::core::{Mat, Point, Scalar, CV_8UC3};
    use opencv::imgproc;

    /// A green wink (radius 40 px) on grey felt, with or without its shadow: a ring 6 px wide at
    /// 40% light.
    fn wink(shadow: bool) -> Mat {
        let mut img = Mat::new_rows_cols_with_default(200, 200, CV_8UC3, Scalar::new(150.0, 150.0, 150.0, 0.0)).expect("image");
        if shadow {
            imgproc::circle(&mut img, Point::new(100, 100), 46, Scalar::new(95.0, 95.0, 95.0, 0.0), -1, imgproc::LINE_AA, 0).expect("shadow");
        }
        imgproc::circle(&mut img, Point::new(100, 100), 40, Scalar::new(60.0, 170.0, 40.0, 0.0), -1, imgproc::LINE_AA, 0).expect("wink");
        img
    }

    #[test]
    fn the_rim_is_at_the_wink_not_at_its_shadow() {
        let model = ColourModel::new(Lab { l: 62.0, a: 0.0, b: 0.0 }, None);
        let c = PixelPoint::new(100.0, 100.0);
        let mean_r = |img: &Mat, m: EdgeMeasure| {
            let view = LinearView::new(img).expect("view");
            let e = ray_edges_with(&view, &model, Colour::Green, c, 40.0, 64, m);
            assert!(e.len() > 48, "{m:?}: {} edges", e.len());
            e.iter().map(|e| e.px.distance(c)).sum::<f64>() / e.len() as f64
        };
        // The rim as the plain measure finds it on clean felt.
        let rim = mean_r(&wink(false), EdgeMeasure::Orthogonal);
        let shadowed = wink(true);
        // Chromaticity is unchanged by the shadow; the orthogonal measure crosses halfway to the
        // shadowed felt just past the rim, not to the lit felt further out (which put the rim at
        // the shadow's outer edge, 6 px out).
        for m in [EdgeMeasure::Chroma, EdgeMeasure::Orthogonal] {
            let r = mean_r(&shadowed, m);
            assert!((r - rim).abs() < 0.4, "{m:?}: rim at {r} px, the rim at {rim} px");
        }
    }

    /// A blue wink (radius 20 px) two thirds under a green one of its size, 12 px off, on grey
    /// felt: from the blue's middle, under the green, rays read the green first and find little
    /// of the blue's rim; started past the green's outline they find its outer arc, each point
    /// within 0.2 px of where the rays find the blue's rim lying alone, and none inside the green.
    #[test]
    fn a_wink_mostly_under_another_has_its_rim_found_by_rays_started_past_the_upper() {
        let (lower, upper, r) = (PixelPoint::new(54.0, 60.0), PixelPoint::new(66.0, 60.0), 20.0);
        let draw = |winks: &[(PixelPoint, Scalar)]| {
            let mut img = Mat::new_rows_cols_with_default(120, 120, CV_8UC3, Scalar::new(150.0, 150.0, 150.0, 0.0)).expect("image");
            for &(c, bgr) in winks {
                imgproc::circle(&mut img, Point::new(c.x as i32, c.y as i32), r as i32, bgr, -1, imgproc::LINE_AA, 0).expect("wink");
            }
            img
        };
        let (blue, green) = (Scalar::new(170.0, 60.0, 30.0, 0.0), Scalar::new(60.0, 170.0, 40.0, 0.0));
        let model = ColourModel::new(Lab { l: 62.0, a: 0.0, b: 0.0 }, None);
        let rim_of = |edges: &[RayEdge]| -> Vec<f64> { edges.iter().filter(|e| e.beyond == Beyond::Background).map(|e| e.px.distance(lower)).collect() };
        let alone = draw(&[(lower, blue)]);
        let alone = rim_of(&ray_edges_with(&LinearView::new(&alone).expect("view"), &model, Colour::Blue, lower, r, 72, EdgeMeasure::Orthogonal));
        assert_eq!(alone.len(), 72);
        let rim = alone.iter().sum::<f64>() / 72.0;
        let img = draw(&[(lower, blue), (upper, green)]);
        let view = LinearView::new(&img).expect("view");
        let plain = rim_of(&ray_edges_with(&view, &model, Colour::Blue, lower, r, 72, EdgeMeasure::Orthogonal));
        let past = ray_edges_past(&view, &model, Colour::Blue, lower, r, 72, EdgeMeasure::Orthogonal, &[(upper, r)]);
        // The blue's rim outside the green: cos θ > −12 / 40 from the far side, 207° of 360.
        let seen: Vec<&RayEdge> = past.iter().filter(|e| e.beyond == Beyond::Background).collect();
        assert!(seen.len() >= 36, "{} edges past the upper, {} from the middle", seen.len(), plain.len());
        assert!(plain.len() < seen.len() / 2, "{} edges from the middle, {} past the upper", plain.len(), seen.len());
        for e in &seen {
            assert!(e.px.distance(upper) > r - 0.5, "edge {:?} inside the upper", e.px);
            assert!((e.px.distance(lower) - rim).abs() < 0.2, "edge {:?} {:.2} px from the middle, the rim {rim:.2}", e.px, e.px.distance(lower));
        }
    }

    /// A small green wink (radius 8 px) on grey felt, `gap` px from where something pale begins
    /// to its right: the table past the mat's edge (everything beyond), or a baseline `stripe` px wide.
    fn wink_beside(gap: i32, stripe: Option<i32>) -> Mat {
        wink_by(gap, stripe, Scalar::new(150.0, 150.0, 150.0, 0.0), Scalar::new(60.0, 170.0, 40.0, 0.0), Scalar::new(235.0, 235.0, 235.0, 0.0))
    }

    /// A wink of radius 8 px (BGR `wink`) centred at (31.5, 31.5) on `felt`, `gap` px of it from
    /// a strip of `pale` (`stripe` px wide, else to the edge), blurred as a lens does.
    fn wink_by(gap: i32, stripe: Option<i32>, felt: Scalar, wink: Scalar, pale: Scalar) -> Mat {
        let k = 8;
        let mut big = Mat::new_rows_cols_with_default(64 * k, 64 * k, CV_8UC3, felt).expect("image");
        let x0 = (32 + 8 + gap) * k;
        let w = stripe.map_or(64 * k - x0, |s| s * k);
        imgproc::rectangle(&mut big, opencv::core::Rect::new(x0, 0, w, 64 * k), pale, -1, imgproc::LINE_8, 0).expect("pale");
        imgproc::circle(&mut big, Point::new(32 * k, 32 * k), 8 * k, wink, -1, imgproc::LINE_AA, 0).expect("wink");
        let mut blurred = Mat::default();
        imgproc::gaussian_blur(&big, &mut blurred, opencv::core::Size::new(0, 0), 0.8 * k as f64, 0.0, opencv::core::BORDER_REPLICATE).expect("blur");
        let mut small = Mat::default();
        imgproc::resize(&blurred, &mut small, opencv::core::Size::new(64, 64), 0.0, 0.0, imgproc::INTER_AREA).expect("shrink");
        small
    }

    #[test]
    fn the_rim_is_found_against_the_felt_beside_it_not_the_table_beyond() {
        let model = ColourModel::new(Lab { l: 62.0, a: 0.0, b: 0.0 }, None);
        // Pixel (i, j) covers [i, i + 1) of the drawing: the disc's centre is at (31.5, 31.5).
        let c = PixelPoint::new(31.5, 31.5);
        // Edge distances along the rays towards the pale side (within 40° of +x).
        let towards = |gap: i32, stripe: Option<i32>| -> Vec<f64> {
            let img = wink_beside(gap, stripe);
            let view = LinearView::new(&img).expect("view");
            ray_edges(&view, &model, Colour::Green, c, 8.0, 72).iter().filter(|e| e.dir.x > 0.77).map(|e| e.px.distance(c)).collect()
        };
        // Where the rim reads with only felt beyond it (the drawing's blur, in sRGB, puts it a
        // little outside 8 px).
        let clear = towards(20, None);
        let rim = clear.iter().sum::<f64>() / clear.len() as f64;
        // A strip of felt 3 px or more wide, before the table or a baseline: the old rule took the
        // far level (the table's) and put these rims 1.5–2 px out.
        for (gap, stripe) in [(5, None), (4, None), (3, None), (4, Some(3)), (3, Some(3))] {
            let r = towards(gap, stripe);
            assert!(r.len() >= 10, "gap {gap}, stripe {stripe:?}: {} edges towards it", r.len());
            let mean = r.iter().sum::<f64>() / r.len() as f64;
            assert!((mean - rim).abs() < 0.3, "gap {gap}, stripe {stripe:?}: rim at {mean:.2} px on average, {rim:.2} against clear felt");
            for x in &r {
                assert!((x - rim).abs() < 0.6, "gap {gap}, stripe {stripe:?}: a rim point at {x:.2} px, {rim:.2} against clear felt");
            }
        }
    }

    #[test]
    fn the_rim_is_found_against_a_strip_of_felt_too_thin_to_level_off() {
        // A yellow wink on green felt a pixel from the pale table: blurred, the strip never levels
        // off, but its colour is the felt's, no mix of the wink's and the table's.
        let (felt_bgr, yellow) = (Scalar::new(60.0, 120.0, 45.0, 0.0), Scalar::new(40.0, 200.0, 235.0, 0.0));
        let felt = lab_of(felt_bgr);
        let model = ColourModel::new(felt, None);
        let c = PixelPoint::new(31.5, 31.5);
        let towards = |gap: i32| -> Vec<f64> {
            let img = wink_by(gap, None, felt_bgr, yellow, Scalar::new(225.0, 225.0, 240.0, 0.0));
            let view = LinearView::new(&img).expect("view");
            ray_edges(&view, &model, Colour::Yellow, c, 8.0, 72).iter().filter(|e| e.dir.x > 0.77).map(|e| e.px.distance(c)).collect()
        };
        let clear = towards(20);
        assert!(clear.len() >= 10, "{} edges against clear felt", clear.len());
        let rim = clear.iter().sum::<f64>() / clear.len() as f64;
        // Taking the table's level put this rim 2 px out. (Strips of 2–4 px here level off
        // where the felt blurs into the table, and those rims are still 1–3.7 px out; letting
        // the felt's colour override that level lost or doubled 3 winks in piles and on a hand
        // over the renderer's 228 frames, where it found 3 by the mat's edge.)
        let gap = 1;
        let r = towards(gap);
        assert!(r.len() >= 10, "gap {gap}: {} edges towards it", r.len());
        let mean = r.iter().sum::<f64>() / r.len() as f64;
        assert!((mean - rim).abs() < 0.5, "gap {gap}: rim at {mean:.2} px on average, {rim:.2} against clear felt");
    }

    /// Lab of a flat patch of BGR `bgr`, as the frame's pixels read.
    fn lab_of(bgr: Scalar) -> Lab {
        let patch = Mat::new_rows_cols_with_default(4, 4, CV_8UC3, bgr).expect("patch");
        linear_to_lab(LinearView::new(&patch).expect("view").linear(1.0, 1.0).expect("inside"))
    }

    /// Grey felt, BGR.
    const GREY_FELT: Scalar = Scalar::new(145.0, 137.0, 140.0, 0.0);

    /// A yellow wink of radius 5 px centred at (32, 32) on grey felt, blurred as a lens does,
    /// then stored as a JPEG keeps it (colour at half resolution, 4:2:0) or losslessly.
    fn yellow_on_grey(jpeg: bool) -> Mat {
        let k = 8;
        let mut big = Mat::new_rows_cols_with_default(64 * k, 64 * k, CV_8UC3, GREY_FELT).expect("image");
        imgproc::circle(&mut big, Point::new(32 * k + k / 2, 32 * k + k / 2), 5 * k, Scalar::new(11.0, 217.0, 255.0, 0.0), -1, imgproc::LINE_AA, 0).expect("wink");
        let mut blurred = Mat::default();
        imgproc::gaussian_blur(&big, &mut blurred, opencv::core::Size::new(0, 0), 0.8 * k as f64, 0.0, opencv::core::BORDER_REPLICATE).expect("blur");
        let mut small = Mat::default();
        imgproc::resize(&blurred, &mut small, opencv::core::Size::new(64, 64), 0.0, 0.0, imgproc::INTER_AREA).expect("shrink");
        if !jpeg {
            return small;
        }
        let mut bytes = opencv::core::Vector::<u8>::new();
        // libjpeg keeps colour at half resolution (4:2:0) by default.
        let params = opencv::core::Vector::from_slice(&[opencv::imgcodecs::IMWRITE_JPEG_QUALITY, 90]);
        opencv::imgcodecs::imencode(".jpg", &small, &mut bytes, &params).expect("encode");
        opencv::imgcodecs::imdecode(&bytes, opencv::imgcodecs::IMREAD_COLOR).expect("decode")
    }

    #[test]
    fn a_bright_winks_rim_is_read_on_brightness_where_a_jpeg_keeps_it_sharp() {
        let felt = lab_of(GREY_FELT);
        let model = ColourModel::new(felt, None);
        let c = PixelPoint::new(32.0, 32.0);
        // Mean and standard deviation of the edges' distances from the centre.
        let radii = |img: &Mat, m: EdgeMeasure| -> (f64, f64) {
            let view = LinearView::new(img).expect("view");
            let r: Vec<f64> = ray_edges_with(&view, &model, Colour::Yellow, c, 5.0, 72, m).iter().map(|e| e.px.distance(c)).collect();
            assert!(r.len() >= 60, "{m:?}: {} edges", r.len());
            let mean = r.iter().sum::<f64>() / r.len() as f64;
            (mean, (r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / r.len() as f64).sqrt())
        };
        let (lossless, _) = radii(&yellow_on_grey(false), EdgeMeasure::Brightness);
        assert!((lossless - 5.0).abs() < 0.5, "lossless: rim at {lossless:.2} px");
        let (bright, bright_sd) = radii(&yellow_on_grey(true), EdgeMeasure::Brightness);
        assert!((bright - lossless).abs() < 0.3 && bright_sd < 0.2, "JPEG, brightness: rim at {bright:.2} ± {bright_sd:.2} px, {lossless:.2} px lossless");
        // The colour measure reads the JPEG's colour halo as the wink: out, and scattered.
        let (colour, colour_sd) = radii(&yellow_on_grey(true), EdgeMeasure::Orthogonal);
        assert!(colour > bright + 0.5 && colour_sd > 2.0 * bright_sd, "JPEG, colour: rim at {colour:.2} ± {colour_sd:.2} px, brightness {bright:.2} ± {bright_sd:.2}");
    }

    /// A disc of radius 20 px centred at (40, 40) of linear colour `wink` (RGB) on `felt`,
    /// blurred in linear light as a lens does (Gaussian, sd 1 px), stored as sRGB 8-bit.
    fn disc_in_linear_light(wink: [f64; 3], felt: [f64; 3]) -> Mat {
        let k = 8;
        let mut big = Mat::new_rows_cols_with_default(80 * k, 80 * k, opencv::core::CV_32FC3, Scalar::new(felt[2], felt[1], felt[0], 0.0)).expect("image");
        imgproc::circle(&mut big, Point::new(40 * k, 40 * k), 20 * k, Scalar::new(wink[2], wink[1], wink[0], 0.0), -1, imgproc::LINE_AA, 0).expect("disc");
        crate::detect::sample::frame_of_linear_drawing(&big, k)
    }

    #[test]
    fn a_rim_on_chromaticity_is_where_half_the_blur_is_the_winks_when_its_mix_is_taken_back() {
        // Pixel (i, j) covers [i, i + 1): the disc's centre is pixel coordinate (39.5, 39.5).
        let c = PixelPoint::new(39.5, 39.5);
        let mean_r = |img: &Mat, colour: Colour, felt: [f64; 3], m: EdgeMeasure| {
            let view = LinearView::new(img).expect("view");
            let model = ColourModel::new(linear_to_lab(felt.map(|x| x as f32)), None);
            let e = ray_edges_with(&view, &model, colour, c, 20.0, 72, m);
            assert!(e.len() >= 60, "{colour:?} {m:?}: {} edges", e.len());
            e.iter().map(|e| e.px.distance(c)).sum::<f64>() / e.len() as f64
        };
        // A bright yellow on dark felt: the plain chromaticity's halfway point is where the
        // blur holds only about a sixth of the wink (its light outweighs the felt's), a pixel
        // out; a dark blue on pale felt, inward.
        let cases = [(Colour::Yellow, [0.9, 0.6, 0.02], [0.06, 0.06, 0.06], 1.0), (Colour::Blue, [0.02, 0.05, 0.45], [0.5, 0.5, 0.5], -1.0)];
        for (colour, wink, felt, outward) in cases {
            let img = disc_in_linear_light(wink, felt);
            let plain = mean_r(&img, colour, felt, EdgeMeasure::Chroma);
            let mixed = mean_r(&img, colour, felt, EdgeMeasure::ChromaMix);
            assert!((mixed - 20.0).abs() < 0.15, "{colour:?}: rim at {mixed:.2} px, drawn at 20");
            assert!(outward * (plain - 20.0) > 0.4, "{colour:?}: plain chromaticity's rim at {plain:.2} px");
        }
    }
}
