//! The umpire's second opinion (rules Note D.1): for every pair of winks that overlap or nearly
//! touch, the measured overlap or gap in mm with its uncertainty, and a verdict that is given only
//! when the evidence decides it.
//!
//! **Overhead** (a frame of the whole mat): the pairs come from [`crate::analyze`]; margins from the
//! parallax-corrected footprints and the nominal diameters.
//!
//! **Close-up** (a hand-held photo of a few winks, no mat corner in view): the winks' outlines
//! are ellipses of circles of known diameter, so each gives the scale (its major axis is the
//! diameter) and the plane's tilt (minor / major = cos tilt, foreshortened along the minor axis).
//! Distances are measured in that plane.
//!
//! **Uncertainty** (one standard deviation of the margin), added in quadrature: each centre's
//! fit (edge scatter over the square root of half the edge count), the calibration's residual,
//! each wink's true diameter against the nominal one ([`DIAMETER_SIGMA_MM`]), and for a wink
//! resting on another its unknown tilt ([`TILT_SIGMA_MM`]).
//!
//! **Verdict**: `squopped` when the margin exceeds [`VERDICT_SIGMAS`] standard deviations and the
//! stacking evidence names the upper wink; `not_squopped` when minus the margin does; otherwise
//! `too_close_to_call`.

use crate::analyze::Analysis;
use crate::detect::colour::{ColourModel, Lab};
use crate::detect::fit::{ray_edges, Beyond};
use crate::detect::sample::LinearView;
use crate::detect::fit::lab_at;
use crate::detect::Found;
use crate::geometry::plane::inside_convex;
use crate::geometry::PixelPoint;
use crate::report::position::{Colour, NominalDiameters, WinkSize};
use opencv::core::{Mat, Point, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use serde::Serialize;

/// The `format` of an umpire document.
pub const UMPIRE_FORMAT: &str = "winkeye.umpire/1";
/// Pairs whose gap is under this are reported, mm (contract).
pub const REPORT_GAP_MM: f64 = 3.0;
/// A wink's true diameter against the nominal one: one standard deviation of its radius, mm
/// (measured winks are 21.1–21.6 mm across for a nominal 22).
pub const DIAMETER_SIGMA_MM: f64 = 0.2;
/// Unknown tilt of a wink resting on another: its effect on the footprint, one sd, mm.
pub const TILT_SIGMA_MM: f64 = 0.25;
/// `squopped` needs the stacking evidence to name the upper wink at least this surely.
pub const MIN_UPPER_CONFIDENCE: f64 = 0.75;
/// A verdict needs the margin this many standard deviations from zero.
pub const VERDICT_SIGMAS: f64 = 2.0;

/// The umpire document.
#[derive(Debug, Clone, Serialize)]
pub struct UmpireDoc {
    /// `winkeye.umpire/1`.
    pub format: String,
    /// The image.
    pub source: UmpireSource,
    /// Where the scale came from.
    pub scale: Scale,
    /// The pairs.
    pub pairs: Vec<Pair>,
}

/// The image examined.
#[derive(Debug, Clone, Serialize)]
pub struct UmpireSource {
    /// Its path.
    pub path: String,
    /// Width, px.
    pub width: u32,
    /// Height, px.
    pub height: u32,
}

/// The scale.
#[derive(Debug, Clone, Serialize)]
pub struct Scale {
    /// `mat` or `wink_size`.
    pub method: String,
    /// Millimetres per pixel (at the winks).
    pub mm_per_px: f64,
}

/// One pair's call.
#[derive(Debug, Clone, Serialize)]
pub struct Pair {
    /// One wink's id.
    pub a: String,
    /// The other's.
    pub b: String,
    /// Their centres in the image.
    pub a_px: [f64; 2],
    /// See `a_px`.
    pub b_px: [f64; 2],
    /// `squopped`, `not_squopped` or `too_close_to_call`.
    pub verdict: String,
    /// The upper wink's id when squopped.
    pub upper: Option<String>,
    /// Overlap depth (> 0) or minus the gap, mm.
    pub margin_mm: f64,
    /// One standard deviation of the margin, mm.
    pub sigma_mm: f64,
    /// Colours, for people.
    pub colours: [Colour; 2],
    /// How sure the stacking evidence is of which wink is on top (0.5–1), when it named one.
    pub upper_confidence: Option<f64>,
    /// What named the upper wink.
    pub upper_evidence: Option<String>,
}

impl Pair {
    /// A pair with its verdict by the rule: winks as (id, image centre, colour); `upper` the
    /// wink the stacking evidence names surely enough, `named` what named one at all (confidence
    /// and evidence).
    pub fn called(a: (&str, PixelPoint, Colour), b: (&str, PixelPoint, Colour), margin: f64, sigma: f64, upper: Option<&str>, named: Option<(f64, String)>) -> Pair {
        let (v, up) = verdict(margin, sigma, upper);
        Pair {
            a: a.0.to_string(),
            b: b.0.to_string(),
            a_px: [round3(a.1.x), round3(a.1.y)],
            b_px: [round3(b.1.x), round3(b.1.y)],
            verdict: v.into(),
            upper: up,
            margin_mm: round3(margin),
            sigma_mm: round3(sigma),
            colours: [a.2, b.2],
            upper_confidence: named.as_ref().map(|n| n.0),
            upper_evidence: named.map(|n| n.1),
        }
    }
}

/// The verdict for a margin, its sigma and the upper wink if the evidence named one.
pub fn verdict(margin: f64, sigma: f64, upper: Option<&str>) -> (&'static str, Option<String>) {
    if margin > VERDICT_SIGMAS * sigma {
        match upper {
            Some(u) => ("squopped", Some(u.to_string())),
            None => ("too_close_to_call", None),
        }
    } else if -margin > VERDICT_SIGMAS * sigma {
        ("not_squopped", None)
    } else {
        ("too_close_to_call", None)
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Standard deviation of a footprint centre along one direction: the fit's (edge scatter over
/// √(n/2)) and the edge localisation's own bias at this scale (shading, shadows, JPEG: measured
/// on rendered frames as about [`EDGE_BIAS_PX`] pixels).
fn centre_sigma(f: &Found, px_per_mm: f64) -> f64 {
    let n = f.inlier.iter().filter(|&&b| b).count().max(3) as f64;
    (f.rms_mm / (n / 2.0).sqrt()).hypot(EDGE_BIAS_PX / px_per_mm)
}

/// One standard deviation of a footprint centre's error from the edges' systematic shifts, in
/// pixels of the frame (`winkeye eval --what detection`: flat, fully seen winks' footprint errors
/// have a median of ~0.25 mm at ~1 px/mm, i.e. ~0.2 px per axis).
pub const EDGE_BIAS_PX: f64 = 0.2;

/// Overhead: every pair of seen winks within [`REPORT_GAP_MM`], from a frame's analysis.
pub fn overhead(analysis: &Analysis, near: Option<PixelPoint>) -> Vec<Pair> {
    let found = &analysis.detections.found;
    let ppm = analysis.detections.px_per_mm.max(1e-6);
    let cal_sigma = analysis.calibration.rms_px / ppm * 0.5;
    let mut pairs = Vec::new();
    for i in 0..found.len() {
        for j in i + 1..found.len() {
            let (a, b) = (&found[i], &found[j]);
            let Some(m) = crate::stack::margin(a, b) else { continue };
            if m <= -REPORT_GAP_MM {
                continue;
            }
            if let Some(p) = near {
                let mid = (a.centre_px + b.centre_px) * 0.5;
                if mid.distance(p) > a.radius_px + b.radius_px + 10.0 {
                    continue;
                }
            }
            let tilt = |f: &Found| if f.level > 0 { TILT_SIGMA_MM } else { 0.0 };
            let sigma = (centre_sigma(a, ppm).powi(2) + centre_sigma(b, ppm).powi(2) + 2.0 * DIAMETER_SIGMA_MM.powi(2) + tilt(a).powi(2) + tilt(b).powi(2) + cal_sigma.powi(2)).sqrt();
            let sq = analysis.detections.squops.iter().find(|s| (s.upper == i && s.lower == j) || (s.upper == j && s.lower == i));
            let upper = sq.filter(|s| s.confidence >= MIN_UPPER_CONFIDENCE).map(|s| found[s.upper].id.as_str());
            let named = sq.map(|s| (round3(s.confidence), s.evidence.to_string()));
            pairs.push(Pair::called((&a.id, a.centre_px, a.colour), (&b.id, b.centre_px, b.colour), m, sigma, upper, named));
        }
    }
    if let Some(p) = near {
        // Only the pair nearest the point.
        pairs.sort_by(|x, y| {
            let dx = (PixelPoint::new((x.a_px[0] + x.b_px[0]) / 2.0, (x.a_px[1] + x.b_px[1]) / 2.0)).distance(p);
            let dy = (PixelPoint::new((y.a_px[0] + y.b_px[0]) / 2.0, (y.a_px[1] + y.b_px[1]) / 2.0)).distance(p);
            dx.total_cmp(&dy)
        });
        pairs.truncate(1);
    }
    pairs
}

/// A wink in a close-up: its outline ellipse.
#[derive(Debug, Clone)]
pub struct CloseWink {
    /// Id.
    pub id: String,
    /// Colour.
    pub colour: Colour,
    /// Size class.
    pub size: WinkSize,
    /// Ellipse centre, px.
    pub centre: PixelPoint,
    /// Semi-axes, px (major, minor).
    pub axes: (f64, f64),
    /// Direction of the major axis (unit).
    pub major_dir: PixelPoint,
    /// Share of the rim seen.
    pub rim_share: f64,
    /// RMS of the edge points about the ellipse, px.
    pub rms_px: f64,
    /// Edge points.
    pub edges: Vec<crate::detect::fit::RayEdge>,
}

/// Why a close-up could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CloseupError {
    /// OpenCV failed.
    #[error("image processing failed: {0}")]
    OpenCv(#[from] opencv::Error),
    /// Fewer than two winks.
    #[error("fewer than two winks found in the close-up (it needs the pair in question, each mostly in view)")]
    TooFew,
}

/// Close-up: winks found by colour against the dominant background, ellipses fitted, the scale
/// and the plane's tilt from the winks' known diameters, then margins and verdicts.
pub fn closeup(bgr: &Mat, nominal: &NominalDiameters, near: Option<PixelPoint>) -> Result<(Vec<Pair>, f64, Vec<CloseWink>), CloseupError> {
    let view = LinearView::new(bgr)?;
    // Work on a reduced copy for finding; measure at full resolution.
    let (w, h) = (bgr.cols(), bgr.rows());
    let scale = ((w.max(h) as f64 / 1000.0).floor() as i32).max(1);
    let mut small = Mat::default();
    imgproc::resize(bgr, &mut small, opencv::core::Size::new(w / scale, h / scale), 0.0, 0.0, imgproc::INTER_AREA)?;
    let mut lab = Mat::default();
    imgproc::cvt_color(&small, &mut lab, imgproc::COLOR_BGR2Lab, 0)?;
    let bytes = lab.data_bytes()?;
    let step = lab.step1(0)? * lab.elem_size1();
    let (lw, lh) = (lab.cols(), lab.rows());
    let px = |i: i32, j: i32| {
        let k = j as usize * step + i as usize * 3;
        Lab::from_cv8([bytes[k], bytes[k + 1], bytes[k + 2]])
    };
    // The background: the median colour of the frame's border.
    let mut border: Vec<Lab> = Vec::new();
    for i in (0..lw).step_by(4) {
        border.push(px(i, 0));
        border.push(px(i, lh - 1));
    }
    for j in (0..lh).step_by(4) {
        border.push(px(0, j));
        border.push(px(lw - 1, j));
    }
    let med = |f: fn(&Lab) -> f64| {
        let mut v: Vec<f64> = border.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let felt = Lab { l: med(|c| c.l), a: med(|c| c.a), b: med(|c| c.b) };
    let mut model = ColourModel::new(felt, None);
    let all: Vec<Lab> = (0..lh).step_by(2).flat_map(|j| (0..lw).step_by(2).map(move |i| (i, j))).map(|(i, j)| px(i, j)).collect();
    model.learn(all.iter().copied());
    let mut winks: Vec<CloseWink> = Vec::new();
    for colour in Colour::ALL {
        let mut mask = Mat::zeros(lh, lw, opencv::core::CV_8UC1)?.to_mat()?;
        for j in 0..lh {
            for i in 0..lw {
                if model.classify(px(i, j)) == Some(colour) {
                    *mask.at_2d_mut::<u8>(j, i)? = 255;
                }
            }
        }
        let mut contours: Vector<Vector<Point>> = Vector::new();
        imgproc::find_contours(&mask, &mut contours, imgproc::RETR_EXTERNAL, imgproc::CHAIN_APPROX_NONE, Point::new(0, 0))?;
        for c in contours.iter() {
            let area = imgproc::contour_area(&c, false)?;
            if area < 0.002 * (lw * lh) as f64 || c.len() < 12 {
                continue;
            }
            let mut mc: (f64, f64) = (0.0, 0.0);
            for p in c.iter() {
                mc.0 += p.x as f64;
                mc.1 += p.y as f64;
            }
            let n = c.len() as f64;
            let centre = PixelPoint::new((mc.0 / n) * scale as f64 + (scale as f64 - 1.0) / 2.0, (mc.1 / n) * scale as f64 + (scale as f64 - 1.0) / 2.0);
            let r0 = (area / std::f64::consts::PI).sqrt() * scale as f64;
            if let Some(wk) = fit_close(&view, &model, colour, centre, r0) {
                winks.push(wk);
            }
        }
    }
    if winks.len() < 2 {
        return Err(CloseupError::TooFew);
    }
    // Sizes: the major axes fall in two groups 22:16 apart; a lone group is judged by the ratio
    // to the largest.
    let biggest = winks.iter().map(|w| w.axes.0).fold(0.0, f64::max);
    let split = biggest * (1.0 + nominal.small_mm / nominal.large_mm) / 2.0;
    for wk in winks.iter_mut() {
        wk.size = if wk.axes.0 >= split { WinkSize::Large } else { WinkSize::Small };
    }
    // Scale: mm per px from the well-seen winks' major axes; the plane's tilt from the minor/major ratios.
    let well: Vec<&CloseWink> = winks.iter().filter(|w| w.rim_share >= 0.75).collect();
    let src: Vec<&CloseWink> = if well.is_empty() { winks.iter().collect() } else { well };
    let mm_per_px = src.iter().map(|w| nominal.of(w.size) / 2.0 / w.axes.0).sum::<f64>() / src.len() as f64;
    let cos_tilt = (src.iter().map(|w| w.axes.1 / w.axes.0).sum::<f64>() / src.len() as f64).clamp(0.2, 1.0);
    let minor_dir = {
        let (sx, sy) = src.iter().fold((0.0, 0.0), |acc, w| {
            // Average the doubled angle (axes have no sign).
            let a = 2.0 * w.major_dir.y.atan2(w.major_dir.x);
            (acc.0 + a.cos(), acc.1 + a.sin())
        });
        let a = sy.atan2(sx) / 2.0;
        PixelPoint::new(-a.sin(), a.cos())
    };
    let to_plane = |d: PixelPoint| {
        let along_minor = d.dot(minor_dir);
        let rest = d - minor_dir * along_minor;
        (rest + minor_dir * (along_minor / cos_tilt)) * mm_per_px
    };
    winks.sort_by(|a, b| a.centre.x.total_cmp(&b.centre.x));
    for (k, wk) in winks.iter_mut().enumerate() {
        wk.id = format!("w{}", k + 1);
    }
    let mut pairs = Vec::new();
    for i in 0..winks.len() {
        for j in i + 1..winks.len() {
            let (a, b) = (&winks[i], &winks[j]);
            let d = to_plane(b.centre - a.centre).norm();
            let m = nominal.of(a.size) / 2.0 + nominal.of(b.size) / 2.0 - d;
            if m <= -REPORT_GAP_MM {
                continue;
            }
            if let Some(p) = near {
                if ((a.centre + b.centre) * 0.5).distance(p) > a.axes.0 + b.axes.0 + 10.0 {
                    continue;
                }
            }
            let cs = |w: &CloseWink| w.rms_px * mm_per_px / ((w.edges.len().max(3) as f64) / 2.0).sqrt();
            // The scale's own error grows with distance; the raised upper wink's shift along the
            // tilt (a tilted view sees height as displacement) is part of the tilt term.
            // Seen obliquely, a wink raised on another (its rim ~1.6 mm up) appears moved along
            // the tilt by up to its height × tan(tilt); one sd is taken as half that.
            let tan_tilt = (1.0 - cos_tilt * cos_tilt).sqrt() / cos_tilt;
            let tilt_term = 0.5 * crate::detect::fit::THICKNESS_MM * tan_tilt;
            let sigma = (cs(a).powi(2) + cs(b).powi(2) + 2.0 * DIAMETER_SIGMA_MM.powi(2) + tilt_term.powi(2) + (0.01 * d).powi(2)).sqrt();
            let upper = close_upper(&view, &model, a, b);
            let up_id = upper.map(|u| if u { a.id.as_str() } else { b.id.as_str() });
            pairs.push(Pair::called((&a.id, a.centre, a.colour), (&b.id, b.centre, b.colour), m, sigma, up_id, upper.map(|_| (1.0, "overlap_colour".to_string()))));
        }
    }
    Ok((pairs, mm_per_px, winks))
}

/// Fits an ellipse to a close-up wink's rim: ray edges, then OpenCV's `fitEllipse` on those that
/// face the background, twice (the second round from the first's centre).
fn fit_close(view: &LinearView<'_>, model: &ColourModel, colour: Colour, centre: PixelPoint, r0: f64) -> Option<CloseWink> {
    let (mut c, mut r) = (centre, r0);
    let mut last = None;
    for _ in 0..2 {
        let edges = ray_edges(view, model, colour, c, r, 96);
        let bg: Vec<PixelPoint> = edges.iter().filter(|e| e.beyond == Beyond::Background).map(|e| e.px).collect();
        if bg.len() < 12 {
            return last;
        }
        let pts: Vector<opencv::core::Point2f> = bg.iter().map(|p| opencv::core::Point2f::new(p.x as f32, p.y as f32)).collect();
        let e = imgproc::fit_ellipse(&pts).ok()?;
        let (a, b) = ((e.size.width.max(e.size.height) / 2.0) as f64, (e.size.width.min(e.size.height) / 2.0) as f64);
        if !(a > 2.0 && b > 0.3 * a) {
            return last;
        }
        let ang = (e.angle as f64).to_radians();
        let dir_w = PixelPoint::new(ang.cos(), ang.sin());
        let major_dir = if e.size.width >= e.size.height { dir_w } else { PixelPoint::new(-dir_w.y, dir_w.x) };
        let ctr = PixelPoint::new(e.center.x as f64, e.center.y as f64);
        // Residual: distance along the ray to the ellipse, approximated through the normalised radius.
        let minor_dir = PixelPoint::new(-major_dir.y, major_dir.x);
        let res: Vec<f64> = bg
            .iter()
            .map(|p| {
                let d = *p - ctr;
                let (u, v) = (d.dot(major_dir) / a, d.dot(minor_dir) / b);
                let rho = (u * u + v * v).sqrt();
                (rho - 1.0) * d.norm() / rho.max(1e-6)
            })
            .collect();
        let rms = (res.iter().map(|x| x * x).sum::<f64>() / res.len() as f64).sqrt();
        c = ctr;
        r = a;
        last = Some(CloseWink { id: String::new(), colour, size: WinkSize::Large, centre: ctr, axes: (a, b), major_dir, rim_share: bg.len() as f64 / 96.0, rms_px: rms, edges });
    }
    last
}

/// Which of two close-up winks is on top: the overlap's colour, else whose colour stops short.
fn close_upper(view: &LinearView<'_>, model: &ColourModel, a: &CloseWink, b: &CloseWink) -> Option<bool> {
    let inside = |w: &CloseWink, p: PixelPoint, shrink: f64| {
        let d = p - w.centre;
        let minor = PixelPoint::new(-w.major_dir.y, w.major_dir.x);
        let (u, v) = (d.dot(w.major_dir) / (w.axes.0 - shrink), d.dot(minor) / (w.axes.1 - shrink));
        u * u + v * v < 1.0
    };
    let (mut va, mut vb) = (0usize, 0usize);
    let r = a.axes.0.max(b.axes.0);
    let (x0, x1) = ((a.centre.x.min(b.centre.x) - r) as i64, (a.centre.x.max(b.centre.x) + r) as i64);
    let (y0, y1) = ((a.centre.y.min(b.centre.y) - r) as i64, (a.centre.y.max(b.centre.y) + r) as i64);
    for y in y0..=y1 {
        for x in x0..=x1 {
            let p = PixelPoint::new(x as f64, y as f64);
            if inside(a, p, 1.5) && inside(b, p, 1.5) {
                match lab_at(view, p).and_then(|c| model.classify(c)) {
                    Some(c) if c == a.colour && c != b.colour => va += 1,
                    Some(c) if c == b.colour && c != a.colour => vb += 1,
                    _ => {}
                }
            }
        }
    }
    (va + vb >= 6 && va != vb).then_some(va > vb)
}

/// An outline in the frame, as a closed polyline.
pub type Outline = Vec<PixelPoint>;

/// The outline of an overhead wink: its footprint circle at rim height, as the camera sees it.
pub fn overhead_outline(analysis: &Analysis, id: &str) -> Option<Outline> {
    let f = analysis.detections.found.iter().find(|f| f.id == id)?;
    let (c, r) = (f.centre_mm?, f.radius_mm?);
    Some(
        (0..96)
            .filter_map(|k| {
                let a = k as f64 / 96.0 * std::f64::consts::TAU;
                let u = crate::geometry::MatPoint::new(a.cos(), a.sin());
                analysis.calibration.mat_to_image_at(c + u * r, f.rest.rim_mid_height(c, r, u))
            })
            .collect(),
    )
}

/// The outline of a close-up wink: its ellipse.
pub fn close_outline(w: &CloseWink) -> Outline {
    let minor = PixelPoint::new(-w.major_dir.y, w.major_dir.x);
    (0..96)
        .map(|k| {
            let a = k as f64 / 96.0 * std::f64::consts::TAU;
            w.centre + w.major_dir * (w.axes.0 * a.cos()) + minor * (w.axes.1 * a.sin())
        })
        .collect()
}

/// The evidence picture: a zoomed crop round the pair with both fitted outlines, the overlap
/// filled (or the gap marked), and the margin ± sigma and verdict written under it.
pub fn evidence(bgr: &Mat, pair: &Pair, a: &Outline, b: &Outline, colours: [Colour; 2]) -> Result<image::RgbImage, opencv::Error> {
    use crate::report::{diagram::wink_rgb, draw};
    use image::Rgb;
    let frame = crate::synth::effects::from_bgr_mat(bgr).map_err(|e| opencv::Error::new(opencv::core::StsError, e.to_string()))?;
    let all: Vec<PixelPoint> = a.iter().chain(b.iter()).copied().collect();
    let (mut x0, mut x1) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| (l.min(p.x), h.max(p.x)));
    let (mut y0, mut y1) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| (l.min(p.y), h.max(p.y)));
    let pad = 0.25 * (x1 - x0).max(y1 - y0) + 4.0;
    x0 = (x0 - pad).max(0.0).floor();
    y0 = (y0 - pad).max(0.0).floor();
    x1 = (x1 + pad).min(frame.width() as f64 - 1.0);
    y1 = (y1 + pad).min(frame.height() as f64 - 1.0);
    let (cw, ch) = ((x1 - x0).max(4.0) as u32, (y1 - y0).max(4.0) as u32);
    let zoom = (640.0 / cw.max(ch) as f64).max(1.0);
    let crop = image::imageops::crop_imm(&frame, x0 as u32, y0 as u32, cw, ch).to_image();
    let (zw, zh) = ((cw as f64 * zoom) as u32, (ch as f64 * zoom) as u32);
    let zoomed = image::imageops::resize(&crop, zw, zh, image::imageops::FilterType::Triangle);
    let text_h = 70u32;
    let mut img = image::RgbImage::from_pixel(zw, zh + text_h, Rgb([20, 20, 20]));
    image::imageops::replace(&mut img, &zoomed, 0, 0);
    // Pixel i of the crop (centre at i in the frame's convention) spans [i, i + 1) × zoom.
    let to_z = |p: PixelPoint| (((p.x - x0 + 0.5) * zoom - 0.5) as f32, ((p.y - y0 + 0.5) * zoom - 0.5) as f32);
    // The overlap, tinted.
    for y in 0..zh {
        for x in 0..zw {
            let (fx, fy) = ((x as f64 + 0.5) / zoom - 0.5 + x0, (y as f64 + 0.5) / zoom - 0.5 + y0);
            let q = PixelPoint::new(fx, fy);
            if inside_convex(a, q) && inside_convex(b, q) {
                let p = img.get_pixel_mut(x, y);
                *p = Rgb([((p[0] as u16 + 255) / 2) as u8, ((p[1] as u16 + 255) / 2) as u8, ((p[2] as u16 + 255) / 2) as u8]);
            }
        }
    }
    for (poly, colour) in [(a, colours[0]), (b, colours[1])] {
        let pts: Vec<(f32, f32)> = poly.iter().map(|&p| to_z(p)).collect();
        for k in 0..pts.len() {
            draw::thick_line(&mut img, pts[k], pts[(k + 1) % pts.len()], 3.0, Rgb([0, 0, 0]));
        }
        for k in 0..pts.len() {
            draw::thick_line(&mut img, pts[k], pts[(k + 1) % pts.len()], 1.5, wink_rgb(colour));
        }
    }
    if pair.margin_mm < 0.0 {
        draw::thick_line(&mut img, to_z(PixelPoint::new(pair.a_px[0], pair.a_px[1])), to_z(PixelPoint::new(pair.b_px[0], pair.b_px[1])), 1.0, Rgb([255, 255, 0]));
    }
    let white = Rgb([255, 255, 255]);
    let what = if pair.margin_mm >= 0.0 { "overlap" } else { "gap" };
    let line1 = format!("{} / {}: {what} {:.2} mm ± {:.2} mm (1 sd)", pair.a, pair.b, pair.margin_mm.abs(), pair.sigma_mm);
    let line2 = match &pair.upper {
        Some(u) => format!("verdict: {} ({u} on top)", pair.verdict.replace('_', " ")),
        None => format!("verdict: {}", pair.verdict.replace('_', " ")),
    };
    draw::text(&mut img, 10, zh as i32 + 8, 20.0, white, &line1);
    draw::text(&mut img, 10, zh as i32 + 36, 20.0, white, &line2);
    Ok(img)
}
