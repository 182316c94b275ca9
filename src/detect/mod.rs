//! Detection: every wink in a calibrated frame, by colour and size, its outline fitted to a
//! fraction of a pixel, and the overlaps between them.
//!
//! 1. The colour model is learned from the frame ([`colour`]): felt and table from round the
//!    mat, the four wink hues from the frame's own strongly coloured pixels.
//! 2. On a reduced copy of the mat's region (a small wink still ~8 pixels across) every pixel is
//!    labelled with a wink colour or none; each colour's regions are filled and split into
//!    circle hypotheses at the maxima of their distance transform (touching and overlapping
//!    winks of one colour give one region and several maxima).
//! 3. Each hypothesis is measured at full resolution ([`fit`]): edge points along rays, a robust
//!    circle fit of the parallax-corrected footprint, the size from the radius.
//! 4. Overlaps, who is on top, levels and margins are the stacking stage ([`crate::stack`]); the
//!    uppers are refitted as leaning winks, and each wink's state follows from where it lies.

pub mod colour;
pub mod fit;
pub mod naive;
pub mod sample;
mod search;
mod split;
pub mod template;

use crate::calibrate::Calibration;
use crate::geometry::plane::{fit_circle, inside_convex};
use crate::geometry::{MatPoint, PixelPoint};
use crate::report::position::{Colour, NominalDiameters, Squop, Wink, WinkSize, WinkState};
use crate::report::round3;
use crate::rules::Ruleset;
use colour::{ColourModel, Lab};
use fit::{Beyond, CircleFit, Rest, RayEdge};
use opencv::core::{Mat, Point, Rect, Scalar, Size, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use sample::LinearView;
use serde_json::json;

/// Winks off the mat can lie on the table this far beyond its edge (mm) and still be looked for.
const TABLE_MARGIN_MM: f64 = 90.0;
/// A small wink should span at least this many pixels in the reduced label image.
const LABEL_SMALL_WINK_PX: f64 = 8.0;
/// Regions smaller than this share of a small wink's labelled area are noise.
const MIN_REGION_SHARE: f64 = 0.25;
/// A wink's outermost half pixel or so, blurred into what lies beyond, is not labelled as its
/// colour (frame pixels): the least region taken for a wink allows for its disc shrunk by this
/// much all round. At a few pixels across that is much of the disc (a small wink 4.6 px across at
/// 0.29 px/mm labels 4 px, under the 4.5 px a quarter of its disc would need). (1 px let
/// fragments of hands through: over the renderer's 228 frames precision 99.76 -> 99.63%.)
const LABEL_SHRINK_PX: f64 = 0.5;
/// Regions larger than this many large winks are not winks (a sleeve, a coloured pot).
const MAX_REGION_LARGE_WINKS: f64 = 7.0;
/// Rays per wink.
const RAYS: usize = 72;
/// A wink's edges this far (RMS, pixels) from its fitted outline are measured again on brightness.
const SCATTERED_EDGES_PX: f64 = 0.5;
/// ... and those kept when their RMS is under this share of the first's. Over the renderer's 228
/// frames and two held-out sets (75, 90): footprints' 95th percentile 1.033 -> 1.013, 0.983 ->
/// 0.951 and 1.030 -> 1.016 mm, one more size right, nothing else changed; 90 frames of the flat
/// style: one wink more found, one false find fewer, one more size wrong. At 0.6 the held-out
/// sets found 2 winks more but the flat style read 5 more sizes wrong.
const BRIGHTNESS_RMS_SHARE: f64 = 0.4;
/// The felt beside winks counts as shaded (contact shadows) when its median brightness is under
/// this share of the felt's a little further out ([`contact_shade`]). With the rings read at
/// every pixel round (as first built), our traced renderer's frames read 0.94–1.08 (nine sets,
/// about 1,100 frames; one set of pot-outs 0.88–0.98, 2 of 45 frames under), its flat-drawn ones
/// 0.89–0.99 (4 of 91 under); another renderer's, whose winks cast soft contact shadows,
/// 0.55–1.05 (median 0.80; 62 of 83 under). See [`contact_shade`] for what measuring on
/// chromaticity then gains and costs.
const CONTACT_SHADE: f64 = 0.9;
/// The rings [`contact_shade`] compares, pixels beyond a wink's nominal rim: the felt just past
/// the rim, clear of its blur (a pixel)...
const SHADE_NEAR_PX: (f64, f64) = (1.0, 2.5);
/// ... and the felt's own level, further out.
const SHADE_FAR_PX: (f64, f64) = (5.0, 9.0);
/// Each ring is read at this many angles and radii (its median needs no more).
const SHADE_RING_ANGLES: usize = 48;
const SHADE_RING_RADII: usize = 2;
/// Winks with another found within this many of their radii are left out of [`contact_shade`].
const SHADE_CLEAR_RADII: f64 = 3.2;
/// Fewest winks [`contact_shade`] reads a frame's shading from.
const SHADE_MIN_WINKS: usize = 3;
/// Least share of rays that must find the rim for a hypothesis to be a wink.
const MIN_RIM_SHARE: f64 = 0.25;
/// Winks with at least this share of their rim seen have their radius fitted; others take the
/// nominal radius of the size that fits them better.
const WELL_SEEN_RIM_SHARE: f64 = 0.75;
/// Largest RMS of a wink's fit, in pixels.
const MAX_FIT_RMS_PX: f64 = 0.9;
/// The pot's rim (etwa-2012 2.4): inner radius at the top, mm, and its height.
const POT_OPENING: (f64, f64) = (22.8, 38.0);
/// The pot's base radius, mm.
const POT_BASE_MM: f64 = 19.0;
/// The pot's floor above the mat, mm (winks inside lie on it).
const POT_FLOOR_MM: f64 = 3.0;
/// A wink in its own corner whose footprint reaches over the baseline by less than this (mm, about
/// twice the footprint's typical error) is taken as unplayed: a wink placed behind its baseline
/// before play is there by rule 3, and a still frame cannot tell it was played.
const UNPLAYED_TOLERANCE_MM: f64 = 0.6;
/// Height of a wink's underside when it lies on the table beside the mat (the mat's thickness is
/// not known; a typical mat is 2–4 mm thick).
const TABLE_BASE_MM: f64 = -3.0;

/// One wink as detected.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Its id in the position document.
    pub id: String,
    /// Colour.
    pub colour: Colour,
    /// Size class.
    pub size: WinkSize,
    /// Radius of the footprint used for margins: the size's nominal radius, mm (`None` for winks
    /// in the pot).
    pub radius_mm: Option<f64>,
    /// Radius as measured, when most of the rim was seen, mm.
    pub measured_radius_mm: Option<f64>,
    /// Footprint centre, mat mm (`None` for winks in the pot).
    pub centre_mm: Option<MatPoint>,
    /// Centre of the visible top face in the frame.
    pub centre_px: PixelPoint,
    /// Radius of the outline in the frame, pixels (approximate).
    pub radius_px: f64,
    /// How it rests.
    pub rest: Rest,
    /// Level in its pile (0 on the mat).
    pub level: u32,
    /// State.
    pub state: WinkState,
    /// Confidence 0–1.
    pub confidence: f64,
    /// Fit RMS, mm.
    pub rms_mm: f64,
    /// Share of the rays that found the rim.
    pub rim_share: f64,
    /// How strongly the outline argued for a large wink rather than a small one: about +1 for a
    /// clear large, −1 for a clear small, near 0 when the two fitted about as well.
    pub large_preference: f64,
    /// The edge points (frame pixels) and what lies beyond each.
    pub edges: Vec<RayEdge>,
    /// Which edge points the fit kept.
    pub inlier: Vec<bool>,
    /// Where the rays were cast from and how far out they expected the rim (pixels).
    pub rays_from: (PixelPoint, f64),
    /// Its footprint centre is its picture's (a free wink's, [`template`]), not the outline fit's.
    pub pictured: bool,
    /// Found from a crescent of its colour beside another wink ([`crescent`]): the crescent's
    /// outer arc alone places it.
    pub crescent: bool,
}

/// One squop as detected.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundSquop {
    /// Index of the upper wink in [`Detections::found`].
    pub upper: usize,
    /// Index of the lower wink.
    pub lower: usize,
    /// Overlap depth of the footprints, mm.
    pub margin_mm: f64,
    /// Confidence 0–1 that the upper is the upper.
    pub confidence: f64,
    /// What decided it.
    pub evidence: &'static str,
}

/// What detection found in a frame.
#[derive(Debug, Clone, Default)]
pub struct Detections {
    /// The winks seen.
    pub found: Vec<Found>,
    /// The squops seen.
    pub squops: Vec<FoundSquop>,
    /// The frame's colour model.
    pub model: Option<ColourModel>,
    /// Pixels per mm at the mat's centre.
    pub px_per_mm: f64,
}

impl Detections {
    /// The winks, as the position document lists them; winks seen in the pot, whose rims are
    /// not measured, with their size's nominal diameter from `nominal`; every wink with its
    /// size's from `stated` where the set's measured diameters are stated.
    pub fn winks(&self, nominal: &NominalDiameters, stated: Option<&NominalDiameters>) -> Vec<Wink> {
        self.found
            .iter()
            .map(|f| {
                let mut extra = serde_json::Map::new();
                extra.insert("fit_rms_mm".into(), json!(round3(f.rms_mm)));
                extra.insert("rim_seen".into(), json!(round3(f.rim_share)));
                if let Some(r) = f.measured_radius_mm {
                    extra.insert("measured_diameter_mm".into(), json!(round3(2.0 * r)));
                }
                Wink {
                    id: f.id.clone(),
                    colour: f.colour,
                    size: f.size,
                    diameter_mm: Some(round3(stated.map(|d| d.of(f.size)).or(f.radius_mm.map(|r| 2.0 * r)).unwrap_or(nominal.of(f.size)))),
                    centre_px: Some(PixelPoint::new(round3(f.centre_px.x), round3(f.centre_px.y))),
                    centre_mm: f.centre_mm.map(|c| MatPoint::new(round3(c.x), round3(c.y))),
                    level: Some(f.level),
                    state: f.state,
                    confidence: Some(round3(f.confidence)),
                    left_mm: None,
                    extra,
                }
            })
            .collect()
    }

    /// The squops, as the position document lists them.
    pub fn squops(&self) -> Vec<Squop> {
        self.squops
            .iter()
            .map(|s| {
                let mut extra = serde_json::Map::new();
                extra.insert("evidence".into(), json!(s.evidence));
                Squop { upper: self.found[s.upper].id.clone(), lower: self.found[s.lower].id.clone(), margin_mm: Some(round3(s.margin_mm)), confidence: Some(round3(s.confidence)), extra }
            })
            .collect()
    }
}

/// Why detection failed.
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    /// OpenCV failed.
    #[error("image processing failed: {0}")]
    OpenCv(#[from] opencv::Error),
    /// The calibration puts the mat outside the frame.
    #[error("the calibration puts the mat outside this frame (is it for another camera or frame size?)")]
    MatOutside,
}

/// Below this many pixels across a small wink at the mat's centre, a frame in which no wink was
/// found says nothing of where they are: `analyze` and `umpire` refuse it rather than let the
/// rules count every wink potted. Measured on 8 of the renderer's midgame frames shrunk to each
/// scale, winks reported on the mat against the 154 there at least half visible: a small wink
/// 4.8 px across 152, 4 px 147, 3.2 px 134, 2.4 px 91; at 2 px, none at all.
pub const MIN_SMALL_WINK_PX: f64 = 3.0;
/// Below this many pixels across a small wink, detection works but misses winks (see
/// [`MIN_SMALL_WINK_PX`]): `analyze` and `umpire` say so. (Replay and watch go on: their
/// settling and motion do not need the winks.)
pub const FEW_SMALL_WINK_PX: f64 = 4.0;

/// The reduced label image over the mat's region.
struct Labels {
    /// Offset of the region in the frame.
    x0: i32,
    y0: i32,
    /// Reduction factor.
    scale: i32,
}

impl Labels {
    /// Frame coordinates of the centre of label pixel (i, j).
    fn to_frame(&self, i: f64, j: f64) -> PixelPoint {
        let s = self.scale as f64;
        PixelPoint::new(self.x0 as f64 + i * s + (s - 1.0) / 2.0, self.y0 as f64 + j * s + (s - 1.0) / 2.0)
    }
    /// Label coordinates of a frame point.
    fn label_coords(&self, p: PixelPoint) -> (f64, f64) {
        let s = self.scale as f64;
        ((p.x - self.x0 as f64 - (s - 1.0) / 2.0) / s, (p.y - self.y0 as f64 - (s - 1.0) / 2.0) / s)
    }
    /// The label pixel nearest a frame point (it may lie outside the label image).
    fn label_pixel(&self, p: PixelPoint) -> Point {
        let (i, j) = self.label_coords(p);
        Point::new(i.round() as i32, j.round() as i32)
    }
}

/// Pixels per mm of the frame at mat point `p`, on the mat's surface.
pub fn px_per_mm(cal: &Calibration, p: MatPoint) -> f64 {
    let d = 5.0;
    match (cal.mat_to_image(p + MatPoint::new(-d, 0.0)), cal.mat_to_image(p + MatPoint::new(d, 0.0)), cal.mat_to_image(p + MatPoint::new(0.0, -d)), cal.mat_to_image(p + MatPoint::new(0.0, d))) {
        (Some(a), Some(b), Some(c), Some(e)) => (a.distance(b) * c.distance(e)).sqrt() / (2.0 * d),
        _ => 1.0,
    }
}

/// How much wider (mm) than the pot itself its body is taken at its base and at its rim: the
/// rim's blur and its outer wall ([`pot_body`]).
const POT_BODY_MARGINS_MM: (f64, f64) = (1.0, 2.5);

/// The pot's body in the frame, `grown_mm` wider still than [`POT_BODY_MARGINS_MM`]: where the
/// labelling takes no wink on the mat.
fn pot_body(cal: &Calibration, grown_mm: f64) -> Vec<PixelPoint> {
    pot_outline(cal, POT_BASE_MM + POT_BODY_MARGINS_MM.0 + grown_mm, (POT_OPENING.0 + POT_BODY_MARGINS_MM.1 + grown_mm, POT_OPENING.1))
}

/// The convex hull (frame pixels) of the pot's body: its base circle on the mat and its rim.
fn pot_outline(cal: &Calibration, radius_base: f64, (r_top, h_top): (f64, f64)) -> Vec<PixelPoint> {
    let mut pts = Vec::new();
    for k in 0..48 {
        let a = k as f64 / 48.0 * std::f64::consts::TAU;
        let u = MatPoint::new(a.cos(), a.sin());
        if radius_base > 0.0 {
            pts.extend(cal.mat_to_image_at(u * radius_base, 0.0));
        }
        pts.extend(cal.mat_to_image_at(u * r_top, h_top));
    }
    convex_hull(pts)
}

/// The convex hull of points (OpenCV `convexHull`).
fn convex_hull(p: Vec<PixelPoint>) -> Vec<PixelPoint> {
    let pts: Vector<opencv::core::Point2f> = p.iter().map(|q| opencv::core::Point2f::new(q.x as f32, q.y as f32)).collect();
    let mut hull: Vector<opencv::core::Point2f> = Vector::new();
    match imgproc::convex_hull(&pts, &mut hull, false, true) {
        Ok(()) if hull.len() >= 3 => hull.iter().map(|q| PixelPoint::new(q.x as f64, q.y as f64)).collect(),
        _ => p,
    }
}

/// Detects the winks in a calibrated BGR frame.
pub fn detect(bgr: &Mat, cal: &Calibration, ruleset: Ruleset) -> Result<Detections, DetectError> {
    let spec = ruleset.spec();
    let nominal = spec.winks;
    let view = LinearView::new(bgr)?;
    let (w, h) = (bgr.cols(), bgr.rows());

    // The mat's region with a margin for winks off on the table.
    let (hl, hw) = (spec.mat.length_mm / 2.0 + TABLE_MARGIN_MM, spec.mat.width_mm / 2.0 + TABLE_MARGIN_MM);
    let mut xs = Vec::new();
    for k in 0..=16 {
        let t = k as f64 / 16.0;
        for p in [MatPoint::new(-hl + 2.0 * hl * t, hw), MatPoint::new(-hl + 2.0 * hl * t, -hw), MatPoint::new(hl, -hw + 2.0 * hw * t), MatPoint::new(-hl, -hw + 2.0 * hw * t)] {
            xs.extend(cal.mat_to_image(p));
        }
    }
    let (minx, maxx) = xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.x), b.max(p.x)));
    let (miny, maxy) = xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.y), b.max(p.y)));
    let (x0, y0) = ((minx.floor() as i32).clamp(0, w), (miny.floor() as i32).clamp(0, h));
    let (x1, y1) = ((maxx.ceil() as i32).clamp(0, w), (maxy.ceil() as i32).clamp(0, h));
    if x1 - x0 < 16 || y1 - y0 < 16 {
        return Err(DetectError::MatOutside);
    }
    let ppm_centre = px_per_mm(cal, MatPoint::new(0.0, 0.0));
    let ppm_min = spec.mat.corners().iter().map(|&c| px_per_mm(cal, c * 0.95)).fold(ppm_centre, f64::min);
    let scale = ((ppm_min * nominal.small_mm / LABEL_SMALL_WINK_PX).floor() as i32).clamp(1, 4);

    // The region's pixels, reduced when a small wink spans more than enough of them; Lab from
    // tables (`Lab8`), as needed.
    let small = if scale > 1 { Some(reduced(bgr, Rect::new(x0, y0, x1 - x0, y1 - y0), scale)?) } else { None };
    let region = match &small {
        Some(m) => Region { data: m.data_bytes()?, step: m.step1(0)? * m.elem_size1(), x0: 0, y0: 0, width: m.cols(), height: m.rows() },
        None => Region { data: bgr.data_bytes()?, step: bgr.step1(0)? * bgr.elem_size1(), x0: x0 as usize, y0: y0 as usize, width: x1 - x0, height: y1 - y0 },
    };
    let lab8 = sample::Lab8::new();
    let (lw, lh) = (region.width, region.height);
    let lab_px = |i: i32, j: i32| -> Lab { Lab::from_cv8(lab8.lab(region.bgr(i as usize, j as usize))) };
    let labels_geom = Labels { x0, y0, scale };

    // Where each label pixel lies: on the mat, beyond it, in the pot's body.
    let pot_body = pot_body(cal, 0.0);
    let pot_opening = pot_outline(cal, 0.0, (POT_OPENING.0 - 0.5, POT_OPENING.1));

    // Felt and table colours: medians of samples on the mat and in a band beyond its edge.
    let sample_lab = |m: MatPoint| -> Option<Lab> {
        let Point { x: i, y: j } = labels_geom.label_pixel(cal.mat_to_image(m)?);
        (i >= 0 && j >= 0 && i < lw && j < lh).then(|| lab_px(i, j))
    };
    let mut felt_s = Vec::new();
    let mut table_s = Vec::new();
    for a in 0..24 {
        for b in 0..12 {
            let m = MatPoint::new((a as f64 + 0.5) / 24.0 * spec.mat.length_mm * 0.9 - spec.mat.length_mm * 0.45, (b as f64 + 0.5) / 12.0 * spec.mat.width_mm * 0.9 - spec.mat.width_mm * 0.45);
            if m.norm() > 60.0 {
                felt_s.extend(sample_lab(m));
            }
        }
    }
    for k in 0..96 {
        let t = (k as f64 + 0.5) / 96.0;
        let (hx, hy) = (spec.mat.length_mm / 2.0 + 40.0, spec.mat.width_mm / 2.0 + 40.0);
        let per = 2.0 * (hx + hy);
        let s = t * 2.0 * per;
        let m = if s < 2.0 * hx { MatPoint::new(-hx + s, hy) } else if s < 2.0 * hx + 2.0 * hy { MatPoint::new(hx, hy - (s - 2.0 * hx)) } else if s < 4.0 * hx + 2.0 * hy { MatPoint::new(hx - (s - 2.0 * hx - 2.0 * hy), -hy) } else { MatPoint::new(-hx, -hy + (s - 4.0 * hx - 2.0 * hy)) };
        table_s.extend(sample_lab(m));
    }
    let felt = median_lab(&felt_s).unwrap_or(Lab { l: cal.felt_lab[0] * 100.0 / 255.0, a: cal.felt_lab[1] - 128.0, b: cal.felt_lab[2] - 128.0 });
    let table = median_lab(&table_s);
    let spread = {
        let mut d: Vec<f64> = felt_s.iter().map(|c| c.ab_distance(felt)).collect();
        d.sort_by(f64::total_cmp);
        // The median distance of a 2-D Gaussian is 1.18 σ.
        d.get(d.len() / 2).map_or(3.0, |m| m / 1.18)
    };
    // A table of a wink's colour (green baize round a grey mat): the model refuses the table's
    // colour, and so would refuse that colour's winks on the mat, where no table shows. Such a
    // table is left out of the model, and beyond the mat that colour is not looked for.
    let table_colour = table.and_then(|t| ColourModel::new(felt, None).with_felt_spread(spread).classify(t));
    let mut model = ColourModel::new(felt, if table_colour.is_some() { None } else { table }).with_felt_spread(spread);
    // Every pixel of a 150-pixel grid's worth of rows and columns is plenty to learn hues from.
    let every = ((lw as usize * lh as usize / 40_000) as f64).sqrt().max(1.0) as usize;
    let sampled: Vec<Lab> = (0..lh).into_par_iter().step_by(every).flat_map_iter(|j| (0..lw).step_by(every).map(move |i| lab_px(i, j)).filter(|c| model.is_candidate(*c))).collect();
    model.learn(sampled.iter().copied());

    // The pot's colour (its rim's median) and spread (the samples' median distance from it), and
    // the wink colour it could pass for: pixels of that colour in the pot are taken for winks only
    // where they look more like the colour's winks on the mat than the pot.
    let (pot_lab, pot_colour) = {
        let mut rim = Vec::new();
        for k in 0..48 {
            let a = k as f64 / 48.0 * std::f64::consts::TAU;
            if let Some(p) = cal.mat_to_image_at(MatPoint::new(a.cos(), a.sin()) * 23.4, POT_OPENING.1) {
                let Point { x: i, y: j } = labels_geom.label_pixel(p);
                if i >= 0 && j >= 0 && i < lw && j < lh {
                    rim.push(lab_px(i, j));
                }
            }
        }
        let lab = median_lab(&rim).map(|m| {
            let mut d: Vec<f64> = rim.iter().map(|&c| c.distance(m)).collect();
            d.sort_by(f64::total_cmp);
            (m, d[d.len() / 2])
        });
        // A pot coloured like a wink can read duller than one at its rim (shaded, blurred with
        // what lies either side): its hue decides, once it has some colour.
        let colour = lab.and_then(|(c, _)| model.classify(c).or_else(|| (c.chroma() >= MIN_POT_CHROMA).then(|| model.nearest_hue(c.hue_deg())).flatten()));
        (lab, colour)
    };

    // Label masks: each colour's pixels on the mat; winks' pixels in the pot's opening apart.
    let pot_bbox = bbox_label(&labels_geom, &pot_body).and_then(|(a, b, c, d)| {
        let (a, b, c, d) = (a.max(0), b.max(0), c.min(lw - 1), d.min(lh - 1));
        (a <= c && b <= d).then(|| Rect::new(a, b, c - a + 1, d - b + 1))
    });
    // Faint winks (a green wink on dark green felt, or one duller than a bright green felt) are
    // looked for too, where the model sees too little of a colour for a region
    // (`ColourModel::faint`); the pot's surroundings are left to the model.
    let faint_model = model.faint();
    let lut = ClassLut::new(&model, Some(&faint_model), &lab8);
    let step = label_sample_step(ppm_min * nominal.small_mm / scale as f64);
    let (mut masks, mut faint_masks) = label_masks(&region, &lut, pot_bbox, step);
    if let Some(colour) = table_colour {
        let beyond = beyond_mat_mask(cal, &spec.mat, &labels_geom, lw, lh)?;
        for m in std::iter::once(&mut masks).chain(faint_masks.as_mut()) {
            for (v, &out) in m.bufs[colour_index(colour)].iter_mut().zip(&beyond) {
                if out {
                    *v = 0;
                }
            }
        }
    }
    let mut potted = Vec::new();
    // The pot-coloured pixels in its opening: (index in the pot's box, colour).
    let mut pot_coloured: Vec<(usize, Lab)> = Vec::new();
    // The felt's colour in the pot's opening is a wink's, where no felt shows: the model takes a
    // green wink on green felt for felt. (Warm felts, tan and beige, share yellow's and red's
    // hues with a pot's floor in their light; as in `search::felt_hued`, green and blue only.)
    // The wink colour of the felt's hue, where the felt has a hue at all.
    let felt_hue = (model.felt.chroma() >= MIN_POT_CHROMA).then(|| model.nearest_hue(model.felt.hue_deg())).flatten();
    let felt_winks = felt_hue.filter(|&c| matches!(c, Colour::Green | Colour::Blue) && pot_colour != Some(c));
    let felt_wink_in_pot = |i: i32, j: i32| -> Option<usize> {
        let colour = felt_winks?;
        let c = lab_px(i, j);
        (model.nearest_hue(c.hue_deg()) == Some(colour) && c.chroma() >= POT_FELT_CHROMA_SHARE * model.felt.chroma()).then(|| colour_index(colour))
    };
    if let Some(pb) = pot_bbox {
        potted = vec![vec![0u8; (pb.width * pb.height) as usize]; 4];
        for j in pb.y..pb.y + pb.height {
            for i in pb.x..pb.x + pb.width {
                let p = labels_geom.to_frame(i as f64, j as f64);
                let in_opening = inside_convex(&pot_opening, p);
                let Some(k) = lut.class(region.bgr(i as usize, j as usize)).or_else(|| in_opening.then(|| felt_wink_in_pot(i, j)).flatten()) else { continue };
                if in_opening {
                    let at = ((j - pb.y) * pb.width + i - pb.x) as usize;
                    if pot_colour != Some(Colour::ALL[k]) {
                        potted[k][at] = 255;
                    } else {
                        pot_coloured.push((at, lab_px(i, j)));
                    }
                } else if !inside_convex(&pot_body, p) {
                    masks.set(k, i, j);
                }
            }
        }
    }
    let labels = labels_geom;

    // Circle hypotheses from each colour's regions (the colours in parallel), measured at full
    // resolution.
    let s = scale as f64;
    // `strict`: the regions are the faint model's, with the model's masks and the hypotheses
    // from its regions; a faint region is tried unless the model saw a region's worth of the
    // colour in it and made a hypothesis there (r5 r720_s2_009: a large green wink on green felt
    // whose face clears the felt's floor only in its middle, 16 label pixels, a region too small
    // for a circle, and so no wink, while the faint model's region round it was passed over).
    // Crescents count as hypotheses there: figA midgame-03023's yellow wink a third seen under a
    // blue one, whose crescent the model saw, was otherwise found again from the faint region
    // round both, at the blue's middle, 3 px off.
    let colour_hypotheses = |k: usize, masks: &Masks, strict: Option<(&Masks, &[Hypothesis])>| -> opencv::Result<Vec<Hypothesis>> {
        let mut out = Vec::new();
        let Some(bb) = masks.bbox[k] else { return Ok(out) };
        let mask = Mat::new_rows_cols_with_data(lh, lw, masks.bufs[k].as_slice())?;
        let contours = external_contours(&Mat::roi(&mask, bb)?, bb)?;
        for contour in contours.iter() {
            let bb = imgproc::bounding_rect(&contour)?;
            let centre_guess = labels.to_frame(bb.x as f64 + bb.width as f64 / 2.0, bb.y as f64 + bb.height as f64 / 2.0);
            let at_mm = cal.image_to_mat(centre_guess).unwrap_or(MatPoint::new(0.0, 0.0));
            let ppm = px_per_mm(cal, at_mm);
            let large_area = std::f64::consts::PI * (nominal.large_mm / 2.0 * ppm / s).powi(2);
            // Pixels in the region: the contour runs through the outer pixels' centres, so its
            // area misses half a pixel all round (Pick's theorem).
            let area = imgproc::contour_area(&contour, false)? + 0.5 * imgproc::arc_length(&contour, true)? + 1.0;
            let r_small = nominal.small_mm / 2.0 * ppm / s;
            // Too small for a wink's region, but perhaps a crescent of one mostly under another.
            let sliver = area < MIN_REGION_SHARE * labelled_area(r_small, s);
            if (sliver && (strict.is_some() || area < (CRESCENT_MIN_REGION_SHARE * labelled_area(r_small, s)).max(CRESCENT_MIN_REGION_PX))) || area > MAX_REGION_LARGE_WINKS * large_area {
                continue;
            }
            if let Some((strict, had)) = strict {
                let seen = (bb.y..bb.y + bb.height).map(|j| (bb.x..bb.x + bb.width).filter(|&i| strict.bufs[k][(j * lw + i) as usize] != 0).count()).sum::<usize>();
                let (lo, hi) = (labels.to_frame(bb.x as f64, bb.y as f64), labels.to_frame((bb.x + bb.width - 1) as f64, (bb.y + bb.height - 1) as f64));
                let had_one = had.iter().any(|h| h.colour == Colour::ALL[k] && (lo.x..=hi.x).contains(&h.at.x) && (lo.y..=hi.y).contains(&h.at.y));
                if seen as f64 >= MIN_REGION_SHARE * labelled_area(r_small, s) && had_one {
                    continue;
                }
            }
            let radii = (r_small, nominal.large_mm / 2.0 * ppm / s);
            let circles = if sliver { Vec::new() } else { hypotheses(&contour, bb, s, radii)? };
            let thin = circles.is_empty() && strict.is_none();
            for hyp in circles.into_iter().chain(if thin { crescent(&contour, radii) } else { None }) {
                out.push(Hypothesis { colour: Colour::ALL[k], at: labels.to_frame(hyp.0, hyp.1), radius_px: hyp.2 * s, crescent: thin });
            }
        }
        Ok(out)
    };
    let mut todo: Vec<Hypothesis> = (0..4).into_par_iter().map(|k| colour_hypotheses(k, &masks, None)).collect::<opencv::Result<Vec<_>>>()?.concat();
    if let Some(faint) = &faint_masks {
        let extra = (0..4).into_par_iter().map(|k| colour_hypotheses(k, faint, Some((&masks, &todo)))).collect::<opencv::Result<Vec<_>>>()?.concat();
        todo.extend(extra);
    }
    let (crescents, todo): (Vec<Hypothesis>, Vec<Hypothesis>) = todo.into_iter().partition(|h| h.crescent);
    // Crescents are measured where they reach under a wink of another colour among `found`
    // ([`CRESCENT_GUESS_UNDER_SHARE`]), their rays started past the outlines over their middles
    // and the edge points inside those outlines left out, and kept where the wink measured lies
    // under one ([`CRESCENT_UNDER_SHARE`]): elsewhere a thin region is a wink's blurred rim, the
    // felt's edge or a hand's. None of the felt's hue: a wink's rim blended with the felt reads
    // as a ring of a colour between theirs, and on a felt of a wink colour's hue that ring is of
    // that colour (held out "varied looks": two false green winks round yellow ones).
    let lowers_under = |model: &ColourModel, found: &[Found]| -> Vec<Found> {
        let under_by = |share: f64, colour: Colour, at: PixelPoint| found.iter().any(|f| f.colour != colour && f.centre_px.distance(at) < share * f.radius_px && f.centre_px.distance(at) >= CRESCENT_OFFSET_SHARE * f.radius_px);
        let measure_lower = |h: &Hypothesis| {
            let others: Vec<(PixelPoint, f64)> = found.iter().filter(|f| f.colour != h.colour && f.centre_px.distance(h.at) < f.radius_px + h.radius_px).map(|f| (f.centre_px, f.radius_px)).collect();
            let over = others.iter().copied().filter(|&(c, r)| c.distance(h.at) < r).collect();
            measure(&view, cal, model, h.colour, h.at, h.radius_px, &nominal, &Hint { others, over, ..Hint::default() })
        };
        crescents
            .par_iter()
            .filter(|h| Some(h.colour) != felt_hue && under_by(CRESCENT_GUESS_UNDER_SHARE, h.colour, h.at))
            .filter_map(measure_lower)
            .filter(|f| under_by(CRESCENT_UNDER_SHARE, f.colour, f.centre_px) && (f.rms_mm * f.radius_px / (nominal.of(f.size) / 2.0) <= CRESCENT_MAX_FIT_RMS_PX || f.rms_mm <= CRESCENT_MAX_FIT_RMS_MM))
            .map(|f| Found { crescent: true, ..f })
            .collect()
    };
    // Each hypothesis measured on its own: in parallel; then the crescents under them.
    let measure_all = |model: &ColourModel| {
        let measure_one = |h: &Hypothesis| measure(&view, cal, model, h.colour, h.at, h.radius_px, &nominal, &Hint::default());
        let mut found: Vec<Found> = todo.par_iter().filter_map(measure_one).collect();
        dedupe(&mut found);
        let lowers = lowers_under(model, &found);
        if !lowers.is_empty() {
            found.extend(lowers);
            dedupe(&mut found);
        }
        found
    };
    let mut found = measure_all(&model);
    // Felt shaded beside the winks (contact shadows): their rims are measured on chromaticity,
    // which shading of neither side moves.
    if contact_shade(&view, cal, &nominal, &found).is_some_and(|s| s < CONTACT_SHADE) {
        model.edge_measure = fit::EdgeMeasure::Chroma;
        found = measure_all(&model);
    }
    // Beyond the mat, more "winks" of a colour than a set could hold are the table's pattern
    // (dropped before the search below, which looks only while the felt's colour has fewer than
    // six: on r5 r1080_s1_033 a cloth's checks gave 862 "winks", green among them).
    drop_table_pattern(&spec.mat.outline(), &mut found);
    // Beyond the mat, a "wink" whose face is the table's colour is the table's grain.
    drop_table_grain(&view, &spec.mat.outline(), &model, &mut found);
    // Winks of the felt's own colour of which the model took no pixel: looked for by their shape,
    // measured as any other.
    let painted = spec.mat.with_painted(cal.mat.painted_offsets_mm);
    let full = Mat::roi(bgr, Rect::new(x0, y0, x1 - x0, y1 - y0))?;
    let hidden = match &small {
        Some(m) => search::felt_hued(m, &full, &lab8, &labels, &masks, &model, cal, &painted, &nominal, &found)?,
        None => search::felt_hued(&full, &full, &lab8, &labels, &masks, &model, cal, &painted, &nominal, &found)?,
    };
    if !hidden.is_empty() {
        let extra: Vec<Found> = hidden
            .par_iter()
            .filter_map(|h| {
                let f = measure(&view, cal, &model, h.colour, h.at, h.radius_px, &nominal, &Hint { felt_hued: true, ..Hint::default() }).filter(|f| f.centre_px.distance(h.at) < SEARCH_MOVE_SHARE * h.radius_px)?;
                (search::stands_out(&view, &model, &f, &found) || (h.outlined && search::stands_out_by_lightness(&view, &model, &f, &found))).then_some(f)
            })
            .collect();
        // Crescents under the winks just found.
        let lowers = if extra.is_empty() { Vec::new() } else { lowers_under(&model, &extra) };
        found.extend(extra);
        found.extend(lowers);
        dedupe(&mut found);
    }
    // Along a baseline painted a wink's colour, a "wink" of its colour only in the paint is paint.
    drop_baseline_paint(&view, cal, &painted, &model, &mut found);
    // Where this frame's outlines lie against the rims, learned from the winks seen whole; every
    // wink's outline is fitted again with it.
    model.edge_offset_mm = edge_offsets(&found, &nominal);
    if model.edge_offset_mm.iter().any(|o| o.abs() >= MIN_EDGE_OFFSET_MM) {
        // The same edge points, fitted again.
        found = found
            .par_iter()
            .map(|f| {
                let hint = Hint { fitted: true, ..Hint::default() };
                fit_edges(cal, &model, f.colour, f.rays_from.0, f.rays_from.1, f.edges.clone(), &nominal, &hint).map_or_else(|| f.clone(), |g| Found { crescent: f.crescent, ..g })
            })
            .collect();
        dedupe(&mut found);
    }
    sizes_within_set(&view, cal, &model, &nominal, &mut found);
    // Two winks of one colour read as one: the colour's crescents beyond its outlines, then
    // outlines longer one way than across that two discs explain.
    let colour_masks = [0, 1, 2, 3].map(|k| split::ColourMask { buf: masks.bufs[k].as_slice(), width: lw, height: lh });
    split::find_partners(&view, cal, &model, &nominal, &colour_masks, &labels, &mut found)?;
    split::split_piles(&view, cal, &model, &nominal, &colour_masks, &labels, &mut found);

    // Stacking: overlaps, who is on top, levels; uppers refitted as leaning winks.
    let pictures = Pictures::learn(&view, cal, &nominal, &found);
    let apart = |f: &[Found], a: usize, b: usize| pictures.flat_margin(&view, cal, &nominal, f, a, b);
    let squops = crate::stack::stack(&view, cal, &model, &nominal, &mut found, &apart);
    // Refits may have changed a size: the set's limits again, squops following their winks; a
    // wink found twice (a second wink's fit moved onto the first's by the stacking) goes too.
    let keep = singles_within_set(&found);
    let new_index: Vec<Option<usize>> = keep.iter().scan(0usize, |n, &k| Some(k.then(|| { *n += 1; *n - 1 }))).collect();
    let squops: Vec<FoundSquop> = squops
        .into_iter()
        .filter_map(|s| Some(FoundSquop { upper: new_index[s.upper]?, lower: new_index[s.lower]?, ..s }))
        .collect();
    let mut k = keep.iter();
    found.retain(|_| *k.next().unwrap_or(&true));
    settle_levels(cal, &squops, &mut found);
    refine_free_winks(&view, cal, &nominal, &pictures, &squops, &mut found);

    // States, against the baselines as the calibration found them painted (rule 3).
    let mat = painted;
    let field = spec.field_on(&mat);
    let outline = mat.outline();
    let baselines = mat.baselines();
    for f in found.iter_mut() {
        let (Some(c), Some(r)) = (f.centre_mm, f.radius_mm) else { continue };
        let home = crate::geometry::Corner::home_of(cal.blue_corner, f.colour);
        f.state = if baselines.iter().any(|b| b.corner == home && b.holds_disc(c, r - UNPLAYED_TOLERANCE_MM)) && f.level == 0 && outline.contains_disc(c, r) {
            WinkState::Unplayed
        } else if !field.contains_disc(c, cal.real_radius(&spec.winks, f.size)) {
            // Off when any part of the real wink, a few per cent under its nominal size, is
            // beyond the boundary (13).
            WinkState::Off
        } else {
            WinkState::InPlay
        };
    }

    // Winks of the pot's colour in it: the pixels nearer that colour's winks on the mat (their
    // faces' median) than the pot's rim; with none of them on the mat (the colour potted out),
    // those further from the pot's colour than its own spread allows.
    if let (Some(colour), Some((pot, spread))) = (pot_colour, pot_lab) {
        let face = face_colour(&view, &found, colour);
        let k = colour_index(colour);
        for &(at, c) in &pot_coloured {
            if looks_like_a_wink(c, face, (pot, spread)) {
                potted[k][at] = 255;
            }
        }
    }

    // Winks seen in the pot.
    for (k, colour) in Colour::ALL.iter().copied().enumerate() {
        let (Some(pb), Some(buf)) = (pot_bbox, potted.get(k)) else { break };
        let contours = external_contours(&Mat::new_rows_cols_with_data(pb.height, pb.width, buf.as_slice())?, pb)?;
        let ppm = px_per_mm(cal, MatPoint::new(0.0, 0.0)) * pot_floor_magnification(cal);
        let s = scale as f64;
        let (r_small, r_large) = (nominal.small_mm / 2.0 * ppm / s, nominal.large_mm / 2.0 * ppm / s);
        let small_area = std::f64::consts::PI * r_small.powi(2);
        let large_area = std::f64::consts::PI * r_large.powi(2);
        let least_area = MIN_REGION_SHARE * labelled_area(r_small, s);
        for ci in 0..contours.len() {
            let contour = contours.get(ci)?;
            let area = imgproc::contour_area(&contour, false)? + 0.5 * imgproc::arc_length(&contour, true)? + 1.0;
            if area < least_area {
                continue;
            }
            // One wink per maximum of the region's distance transform, as on the mat: winks in
            // the pot lie on one another, each partly hidden by the one above.
            let bb = imgproc::bounding_rect(&contour)?;
            let mut hyps = hypotheses(&contour, bb, s, (r_small, r_large))?;
            if hyps.is_empty() {
                let m = imgproc::moments(&contour, false)?;
                let r = if area >= (small_area + large_area) / 2.0 { r_large } else { r_small };
                hyps.push((m.m10 / m.m00.max(1e-9), m.m01 / m.m00.max(1e-9), r));
            }
            let seen = hyps.len();
            if let Some(under) = wink_beneath(&contour, &hyps, (r_small, r_large), found.iter().filter(|f| f.colour == colour).count())? {
                hyps.push(under);
            }
            for (n, (hx, hy, hr)) in hyps.into_iter().enumerate() {
                let c = labels.to_frame(hx, hy);
                let guess = if hr >= r_large { WinkSize::Large } else { WinkSize::Small };
                let have = |s: WinkSize| found.iter().filter(|f| f.colour == colour && f.size == s).count();
                let Some(size) = [guess, guess.other()].into_iter().find(|&s| have(s) < s.per_colour()) else { break };
                found.push(Found {
                    id: String::new(),
                    colour,
                    size,
                    radius_mm: None,
                    measured_radius_mm: None,
                    centre_mm: None,
                    centre_px: c,
                    radius_px: hr * s,
                    rest: Rest::Flat { base_mm: POT_FLOOR_MM },
                    level: 0,
                    state: WinkState::Potted,
                    confidence: if n < seen { POT_SEEN_CONFIDENCE } else { POT_BENEATH_CONFIDENCE },
                    rms_mm: 0.0,
                    rim_share: 0.0,
                    large_preference: 0.0,
                    edges: Vec::new(),
                    rays_from: (c, hr * s),
                    inlier: Vec::new(),
                    pictured: false,
                    crescent: false,
                });
            }
        }
    }
    // Ids in a stable order: colour, size, then along the mat.
    let mut order: Vec<usize> = (0..found.len()).collect();
    order.sort_by(|&a, &b| {
        let (fa, fb) = (&found[a], &found[b]);
        colour_index(fa.colour).cmp(&colour_index(fb.colour)).then((fa.size == WinkSize::Small).cmp(&(fb.size == WinkSize::Small))).then(fa.centre_px.x.total_cmp(&fb.centre_px.x))
    });
    for (n, &i) in order.iter().enumerate() {
        found[i].id = format!("w{}", n + 1);
    }
    Ok(Detections { found, squops, model: Some(model), px_per_mm: ppm_centre })
}

/// How much darker the felt is beside the winks than a little further out: over the winks seen
/// whole with no other wink near, the median of the median brightness in a ring just beyond
/// each one's nominal rim ([`SHADE_NEAR_PX`]) over that in a ring further out ([`SHADE_FAR_PX`]);
/// `None` with fewer than [`SHADE_MIN_WINKS`] such winks.
///
/// Where winks cast contact shadows on the felt (another renderer's soft shadows darken it by up
/// to half at the rim, fading over 1–2.5 mm), the orthogonal edge measure reads the shaded felt
/// as partly the wink (black is a shade of both), and the outline swells unevenly: a large blue
/// wink's edges lay 7.6–11.4 px from its centre, fitted 4.4 mm off and read small. Chromaticity
/// is moved by neither side's shading. Over that renderer's 83 frames (720p–4K), with it where
/// this reads under [`CONTACT_SHADE`]: recall 90.0% → 91.2%, precision 97.5% → 98.6%, sizes right
/// 89.2% → 92.7%, footprint error median 0.97 → 0.80 mm, squops of ≥ 1 mm right 87 → 112 of 197,
/// false squops across gaps 14 → 8. It is not asked everywhere: on our renderer's frames, with
/// their sharper edges and JPEG's half-resolution colour, chromaticity fits worse (all 228 frames
/// of figA on it: recall 99.84% → 98.99%, sizes 99.83% → 98.95%). As it stands, figA's, the
/// held-out sets' and varied looks' tables are unchanged; one frame of the pot-out set 7001
/// gained a wink found and lost a squop; the flat-drawn frames' footprints' 95th percentile went
/// 1.256 → 1.186 mm (flat90b).
fn contact_shade(view: &LinearView<'_>, cal: &Calibration, nominal: &NominalDiameters, found: &[Found]) -> Option<f64> {
    let ring = |p: PixelPoint, (a, b): (f64, f64)| -> Option<f64> {
        let (n, across) = (SHADE_RING_ANGLES, SHADE_RING_RADII);
        let mut v: Vec<f64> = (0..n * across)
            .filter_map(|k| {
                let t = (k / across) as f64 / n as f64 * std::f64::consts::TAU;
                let d = a + (b - a) * ((k % across) as f64 + 0.5) / across as f64;
                view.luminance(p.x + d * t.cos(), p.y + d * t.sin())
            })
            .collect();
        (v.len() * 2 >= n * across).then(|| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
    };
    let mut ratios: Vec<f64> = found
        .iter()
        .enumerate()
        .filter(|(_, f)| f.rim_share >= WELL_SEEN_RIM_SHARE)
        .filter_map(|(i, f)| {
            let r = nominal.of(f.size) / 2.0 * px_per_mm(cal, f.centre_mm?);
            let p = f.centre_px;
            if found.iter().enumerate().any(|(j, g)| j != i && g.centre_px.distance(p) < SHADE_CLEAR_RADII * r) {
                return None;
            }
            let near = ring(p, (r + SHADE_NEAR_PX.0, r + SHADE_NEAR_PX.1))?;
            let far = ring(p, (r + SHADE_FAR_PX.0, r + SHADE_FAR_PX.1))?;
            (far > 1e-4).then(|| near / far)
        })
        .collect();
    (ratios.len() >= SHADE_MIN_WINKS).then(|| {
        ratios.sort_by(f64::total_cmp);
        ratios[ratios.len() / 2]
    })
}

/// The median colour of the faces of the winks of `colour` found on the mat (the middle half of
/// each radius), `None` when too few are seen.
fn face_colour(view: &LinearView<'_>, found: &[Found], colour: Colour) -> Option<Lab> {
    let v: Vec<Lab> = found.iter().filter(|f| f.colour == colour && f.state != WinkState::Potted).flat_map(|f| face_samples(view, f)).collect();
    median_lab(&v)
}

/// Twelve colours round the middle of a found wink's face, 0.4 of its radius out.
fn face_samples<'a>(view: &'a LinearView<'_>, f: &'a Found) -> impl Iterator<Item = Lab> + 'a {
    (0..12).filter_map(move |k| {
        let t = k as f64 / 12.0 * std::f64::consts::TAU;
        fit::lab_at(view, f.centre_px + PixelPoint::new(t.cos(), t.sin()) * (0.4 * f.radius_px))
    })
}

/// Drops the winks found beyond `outline` (the mat's edge) whose faces are nearer the table's
/// colour than the faces of their colour's winks inside it (or, with none inside, within the
/// model's least distance of a wink pixel from the table): the table's grain ([`face_lab`]).
fn drop_table_grain(view: &LinearView<'_>, outline: &crate::geometry::ConvexPolygon, model: &ColourModel, found: &mut Vec<Found>) {
    let Some(table) = model.table else { return };
    let beyond = |f: &Found| f.centre_mm.is_some_and(|c| outline.inside_distance(c) < 0.0);
    let faces: [Option<Lab>; 4] = Colour::ALL.map(|c| median_lab(&found.iter().filter(|f| f.colour == c && !beyond(f)).flat_map(|f| face_samples(view, f)).collect::<Vec<_>>()));
    let grain = |f: &Found| {
        face_lab(view, f).is_some_and(|face| match faces[colour_index(f.colour)] {
            Some(own) => face.ab_distance(table) < face.ab_distance(own),
            None => face.ab_distance(table) < model.min_ab_distance,
        })
    };
    found.retain(|f| !(beyond(f) && grain(f)));
}

/// More winks of one colour than this found beyond the mat's edge cannot all be winks (a set
/// holds six of a colour, and a wink may be found twice before doubles go): the table there is
/// patterned in that colour.
const MAX_BEYOND_PER_COLOUR: usize = 12;
/// How far above the table pattern's confidences (robust sds over their median) a wink found
/// beyond the mat must stand to be kept.
const PATTERN_OUTLIER_SDS: f64 = 4.0;

/// Drops the winks found beyond `outline` (the mat's edge) that are a table's pattern: where a
/// colour has more of them than [`MAX_BEYOND_PER_COLOUR`], all but those whose confidence stands
/// [`PATTERN_OUTLIER_SDS`] robust sds above the rest's median. Another renderer's gingham cloth
/// (r1080_s1_023: red and pink checks) gave 500 red "winks" beyond the mat; their outlines,
/// learned from, moved every red wink's edge offset, and the set's limit then kept five checks
/// and lost the four red winks on the mat (confidences: checks 0.37–0.75, median 0.55; winks
/// 0.79–0.98).
fn drop_table_pattern(outline: &crate::geometry::ConvexPolygon, found: &mut Vec<Found>) {
    let beyond = |f: &Found| f.centre_mm.is_some_and(|c| outline.inside_distance(c) < 0.0);
    for colour in Colour::ALL {
        let mut conf: Vec<f64> = found.iter().filter(|f| f.colour == colour && beyond(f)).map(|f| f.confidence).collect();
        if conf.len() <= MAX_BEYOND_PER_COLOUR {
            continue;
        }
        conf.sort_by(f64::total_cmp);
        let median = conf[conf.len() / 2];
        let mut dev: Vec<f64> = conf.iter().map(|c| (c - median).abs()).collect();
        dev.sort_by(f64::total_cmp);
        let bar = median + PATTERN_OUTLIER_SDS * 1.4826 * dev[dev.len() / 2];
        found.retain(|f| f.colour != colour || !beyond(f) || f.confidence > bar);
    }
}

/// Half the width of the band along a baseline's centre line that [`drop_baseline_paint`] leaves
/// out of a wink's face, mm: paint or tape is 2–6 mm wide (domain), and blur adds a little.
const PAINT_HALF_BAND_MM: f64 = 4.5;
/// [`drop_baseline_paint`]: a wink along a baseline of its colour is kept when at least this
/// share of its face beyond the paint's band is its colour.
const MIN_FACE_BEYOND_PAINT: f64 = 0.3;

/// Drops the winks found along a baseline painted in their colour whose faces are that colour
/// only in the paint: bits of the line read as small winks (another renderer's yellow tape on
/// dark blue felt gave four in one frame, and pushed the real small yellow winks out of the set).
/// The paint's colour is the model's name for the median colour along the line's middle; a wink
/// there is judged on its face (0.3–0.8 of its radius) outside the band
/// [`PAINT_HALF_BAND_MM`] either side of that middle. A real wink across the line is its colour
/// there; a bit of the line is felt.
fn drop_baseline_paint(view: &LinearView<'_>, cal: &Calibration, mat: &crate::geometry::MatSpec, model: &ColourModel, found: &mut Vec<Found>) {
    for b in mat.baselines() {
        let along: Vec<Lab> = (0..48)
            .filter_map(|k| {
                let t = 0.1 + 0.8 * k as f64 / 47.0;
                let m = b.segment.a + (b.segment.b - b.segment.a) * t;
                fit::lab_at(view, cal.mat_to_image(m)?)
            })
            .collect();
        let Some(paint) = median_lab(&along).and_then(|c| model.classify(c)) else { continue };
        found.retain(|f| {
            let (Some(c), Some(r)) = (f.centre_mm, f.radius_mm) else { return true };
            if f.colour != paint || b.depth_behind(c).abs() >= r {
                return true;
            }
            let (mut beyond, mut own) = (0usize, 0usize);
            for ring in 0..6 {
                let rr = r * (0.3 + 0.1 * ring as f64);
                for k in 0..16 {
                    let a = (k as f64 + 0.5 * ring as f64) / 16.0 * std::f64::consts::TAU;
                    let m = c + MatPoint::new(a.cos(), a.sin()) * rr;
                    if b.depth_behind(m).abs() < PAINT_HALF_BAND_MM {
                        continue;
                    }
                    let Some(lab) = cal.mat_to_image(m).and_then(|p| fit::lab_at(view, p)) else { continue };
                    beyond += 1;
                    own += usize::from(model.classify(lab) == Some(paint));
                }
            }
            beyond < 8 || own as f64 >= MIN_FACE_BEYOND_PAINT * beyond as f64
        });
    }
}

/// The median colour of a found wink's face ([`face_samples`]), `None` when too little of it is
/// in the frame.
///
/// A wink must be its colour at its middle, not only round a few streaks: another renderer's
/// wooden tables have orange-red grain, whose streaks the colour model takes for red, and red
/// "winks" were found in it beyond the mat (7 in 83 frames, each reported off, more behind them
/// once those went) whose faces lay 11–13 CIE a*b* units from the table's median colour and
/// further from red winks' faces on the mat. The winks that truly lay beyond the mat's edge there
/// and on our renderer's frames (20; 40 in figA, 13 in held-out 8001) were 36–88 units from the
/// table's colour.
fn face_lab(view: &LinearView<'_>, f: &Found) -> Option<Lab> {
    median_lab(&face_samples(view, f).collect::<Vec<_>>())
}

/// Each channel's median of at least five colours, else `None`.
fn median_lab(v: &[Lab]) -> Option<Lab> {
    if v.len() < 5 {
        return None;
    }
    let mid = v.len() / 2;
    let pick = |f: fn(&Lab) -> f64| *v.iter().map(f).collect::<Vec<f64>>().select_nth_unstable_by(mid, f64::total_cmp).1;
    Some(Lab { l: pick(|c| c.l), a: pick(|c| c.a), b: pick(|c| c.b) })
}

/// A pixel in the pot's opening of the felt's hue is taken for a wink of the felt's colour when
/// its chroma is at least this share of the felt's (the pot's floor and walls in the felt's light
/// are greyer).
const POT_FELT_CHROMA_SHARE: f64 = 0.5;

/// Whether a pixel of the pot's colour in the pot is a wink's: nearer the colour's winks' faces
/// on the mat (`face`) than the pot (`pot`: its rim's median colour and spread); with no face to
/// compare with, further from the pot than its spread allows.
fn looks_like_a_wink(c: Lab, face: Option<Lab>, (pot, spread): (Lab, f64)) -> bool {
    match face {
        Some(face) => c.distance(face) < c.distance(pot),
        None => c.distance(pot) > (POT_SPREADS * spread).max(MIN_POT_DISTANCE),
    }
}

/// With none of its colour's winks on the mat to compare with, a pixel of the pot's colour in it
/// is a wink's when further from the pot's colour than this many times the rim's spread ...
const POT_SPREADS: f64 = 3.0;
/// ... and than this (CIE76): a wink and a pot of one plastic colour differ by more.
const MIN_POT_DISTANCE: f64 = 12.0;

/// Least chroma of a pot's rim for its hue to name the wink colour it could pass for (grey, white
/// and black pots have a few units, blurred with the felt up to ~10).
const MIN_POT_CHROMA: f64 = 15.0;

/// Confidence given a wink seen in the pot: its region's outline is partly the pot's rim and
/// the winks above it, so its size and centre are rough.
const POT_SEEN_CONFIDENCE: f64 = 0.6;
/// ... and one taken to lie beneath another there ([`wink_beneath`]).
const POT_BENEATH_CONFIDENCE: f64 = 0.5;

/// One more wink in the pot, under those seen in a region (label pixels: centre and radius),
/// when the region is wider than they could make it and the colour, with `found` of its winks
/// found so far, has winks not yet found.
///
/// A wink in the pot lying mostly under another of its colour shows as a crescent that joins the
/// upper's region, whose distance transform then has one maximum. The region's smallest enclosing
/// circle is wider than a large wink's outline. A single wink can read that wide too: a yellow
/// one's pale blur into a light pot floor still reads yellow, and large yellow winks alone in the
/// pot read up to 1.14 times a large wink's radius on the renderer's frames (1.26 flat-drawn), so
/// width alone would split some of those. Hence the set's count as well: a wink of the colour
/// found nowhere lies more often in the pot, under the one seen, than wholly under another wink
/// on the mat. Over the renderer's 573 frames of five sets (555 colours' regions in the pot with
/// one maximum) this found all 31 winks at least half visible that those regions had missed, and
/// took a region for two where there was one once (the same scene in two sets: the colour's
/// missing wink lay wholly under another on the mat). Where the region has two or more maxima,
/// it is wider than they make it when a point of it lies a large wink's radius from every one
/// (the enclosing circle says nothing there): over those sets that found 4 of the 5 winks such
/// regions had missed, and took a region for one more wink than was there once, in 121 regions
/// so read. The new wink is put at the region's point farthest from those seen, a small wink's
/// radius in towards the nearest.
fn wink_beneath(contour: &Vector<Point>, hyps: &[(f64, f64, f64)], (r_small, r_large): (f64, f64), found: usize) -> opencv::Result<Option<(f64, f64, f64)>> {
    if hyps.is_empty() || found + hyps.len() >= WinkSize::Large.per_colour() + WinkSize::Small.per_colour() {
        return Ok(None);
    }
    // The region's point farthest from the winks seen in it: its distance and the nearest of them.
    let nearest = |p: &Point| hyps.iter().map(|&(hx, hy, _)| ((p.x as f64 - hx).hypot(p.y as f64 - hy), (hx, hy))).min_by(|a, b| a.0.total_cmp(&b.0));
    let Some((far, (d, (hx, hy)))) = contour.iter().filter_map(|p| Some((p, nearest(&p)?))).max_by(|a, b| a.1 .0.total_cmp(&b.1 .0)) else { return Ok(None) };
    let wide = if hyps.len() == 1 {
        let (mut centre, mut radius) = (opencv::core::Point2f::default(), 0f32);
        imgproc::min_enclosing_circle(contour, &mut centre, &mut radius)?;
        radius as f64
    } else {
        d
    };
    if wide < r_large {
        return Ok(None);
    }
    let back = r_small.min(d) / d.max(1e-9);
    Ok(Some((far.x as f64 + (hx - far.x as f64) * back, far.y as f64 + (hy - far.y as f64) * back, r_small)))
}

/// The pixels of `region` of `bgr`, each `scale` × `scale` block averaged into one label pixel.
/// The region is cut to a whole number of blocks (at most `scale` − 1 pixels off its right and
/// bottom), so that every label pixel is the mean of exactly the block the labels take it for: a
/// ratio a little over `scale` would stretch the reduction, drifting the labels up to a pixel
/// across the region (and OpenCV's area reduction takes its fast path only for whole ratios).
fn reduced(bgr: &Mat, region: Rect, scale: i32) -> opencv::Result<Mat> {
    let (lw, lh) = (region.width / scale, region.height / scale);
    let roi = Mat::roi(bgr, Rect::new(region.x, region.y, lw * scale, lh * scale))?;
    let mut small = Mat::default();
    imgproc::resize(&roi, &mut small, Size::new(lw, lh), 0.0, 0.0, imgproc::INTER_AREA)?;
    Ok(small)
}

/// The label image's source: 8-bit BGR pixels (i, j) at `(x0 + i, y0 + j)` of `data`.
struct Region<'a> {
    data: &'a [u8],
    step: usize,
    x0: usize,
    y0: usize,
    width: i32,
    height: i32,
}

impl Region<'_> {
    /// Row `j`'s BGR bytes.
    fn row(&self, j: usize) -> &[u8] {
        let at = (self.y0 + j) * self.step + self.x0 * 3;
        &self.data[at..at + self.width as usize * 3]
    }
    #[inline]
    fn bgr(&self, i: usize, j: usize) -> [u8; 3] {
        let k = (self.y0 + j) * self.step + (self.x0 + i) * 3;
        [self.data[k], self.data[k + 1], self.data[k + 2]]
    }
}

/// Which wink colour (index in `Colour::ALL`) a pixel shows, if any. Whether a pixel is
/// wink-coloured, and which colour, depends on its a*, b* alone: one table of 256 × 256 answers,
/// filled as colours are met. A frame holds a few tens of thousands of distinct BGR values, most
/// of them many times over, so each is converted once: a direct-mapped cache of 2¹⁶ BGR values
/// and their answers stands in front of the conversion. (Blocks of 8 × 8 × 8 BGR values made as
/// colours are met were slower: a frame's colours fill a few thousand of them.)
struct ClassLut<'m> {
    model: &'m ColourModel,
    /// The faint winks' model, when asked about too (`ColourModel::faint`).
    faint: Option<&'m ColourModel>,
    lab8: &'m sample::Lab8,
    by_ab: Vec<AtomicU8>,
    /// BGR value (high 24 bits) and its answer (low 8 bits); `EMPTY` where none.
    by_bgr: Vec<AtomicU32>,
}

impl<'m> ClassLut<'m> {
    const UNKNOWN: u8 = 255;
    /// An answer is the model's colour index (4: none) times 5 plus the faint model's where the
    /// model's is none (else 4), plus [`ClassLut::WASHED`] where the faint model's is a washed-out
    /// red or yellow's only ([`colour::ColourModel::washed_out_only`]).
    const NONE: usize = 4;
    /// Added to an answer whose faint colour is a washed-out red or yellow's only.
    const WASHED: usize = 25;
    const EMPTY: u32 = u32::MAX;

    fn new(model: &'m ColourModel, faint: Option<&'m ColourModel>, lab8: &'m sample::Lab8) -> Self {
        ClassLut {
            model,
            faint,
            lab8,
            by_ab: (0..256 * 256).map(|_| AtomicU8::new(Self::UNKNOWN)).collect(),
            by_bgr: (0..1 << 16).map(|_| AtomicU32::new(Self::EMPTY)).collect(),
        }
    }

    /// The answer for a pixel of neither colour by either model.
    const NOTHING: u8 = (Self::NONE * 5 + Self::NONE) as u8;

    /// The model's colour index of a pixel.
    #[inline]
    fn class(&self, bgr: [u8; 3]) -> Option<usize> {
        Self::decode(self.code(bgr)).0
    }

    /// Whether the faint model's colour in an answer is a washed-out red or yellow's only and the
    /// pixel too dark for one ([`colour::WASHED_OUT_MIN_L`]: a lamp's reflection adds white).
    fn too_dark_if_washed(&self, code: u8, bgr: [u8; 3]) -> bool {
        code as usize >= Self::WASHED && f64::from(self.lab8.lab(bgr)[0]) < colour::WASHED_OUT_MIN_L * 255.0 / 100.0
    }

    /// The model's colour index in an answer, and the faint model's where the model has none.
    #[inline]
    fn decode(code: u8) -> (Option<usize>, Option<usize>) {
        let code = code as usize % Self::WASHED;
        let (strict, faint) = (code / 5, code % 5);
        ((strict != Self::NONE).then_some(strict), (faint != Self::NONE).then_some(faint))
    }

    /// The answer for a pixel ([`ClassLut::decode`]).
    ///
    /// Shared by the bands labelled in parallel, so each colour is converted about once a frame,
    /// not once a band. Entries are whole words holding their own key, so a race between two
    /// bands filling one slot only costs a conversion again (relaxed loads and stores are plain
    /// moves here).
    #[inline]
    fn code(&self, bgr: [u8; 3]) -> u8 {
        let key = (bgr[0] as u32) << 16 | (bgr[1] as u32) << 8 | bgr[2] as u32;
        // Fibonacci hashing: the top 16 bits of the key times 2³²/φ.
        let slot = (key.wrapping_mul(0x9E37_79B1) >> 16) as usize;
        let e = self.by_bgr[slot].load(Ordering::Relaxed);
        if e >> 8 == key && e != Self::EMPTY {
            (e & 0xFF) as u8
        } else {
            let code = self.by_lab(bgr);
            self.by_bgr[slot].store(key << 8 | code as u32, Ordering::Relaxed);
            code
        }
    }

    fn by_lab(&self, bgr: [u8; 3]) -> u8 {
        let lab = self.lab8.lab(bgr);
        let ab = lab[1] as usize * 256 + lab[2] as usize;
        let known = self.by_ab[ab].load(Ordering::Relaxed);
        if known != Self::UNKNOWN {
            return known;
        }
        let c = Lab { l: 50.0, a: lab[1] as f64 - 128.0, b: lab[2] as f64 - 128.0 };
        let index = |m: &ColourModel| m.classify(c).map_or(Self::NONE, colour_index);
        let strict = index(self.model);
        // The faint model is asked only where the model sees no colour, and no nearer the felt or
        // the table than it allows itself.
        let near = |m: &ColourModel| c.ab_distance(m.felt) < m.min_ab_distance || m.table.is_some_and(|t| c.ab_distance(t) < m.min_ab_distance);
        let (faint, washed) = match self.faint {
            Some(f) if strict == Self::NONE && !near(f) => (index(f), f.washed_out_only(c)),
            _ => (Self::NONE, false),
        };
        let code = (strict * 5 + faint + if washed { Self::WASHED } else { 0 }) as u8;
        self.by_ab[ab].store(code, Ordering::Relaxed);
        code
    }
}

/// One mask (255 where the colour shows) per wink colour over the label image, with each mask's
/// bounding box.
struct Masks {
    width: i32,
    bufs: Vec<Vec<u8>>,
    bbox: [Option<Rect>; 4],
    /// Where the buffers may hold anything but zeros, when they came from [`MASK_POOL`] and go
    /// back to it: `None` for buffers of their own.
    written: Option<Vec<Rect>>,
    /// How many of `written` are the labelling's tiles.
    tiles: usize,
}

impl Masks {
    fn set(&mut self, k: usize, i: i32, j: i32) {
        self.bufs[k][(j * self.width + i) as usize] = 255;
        grow(&mut self.bbox[k], Rect::new(i, j, 1, 1));
        if let Some(written) = self.written.as_mut() {
            // The labelling's tiles first, then one box round every pixel set here.
            if written.len() == self.tiles {
                written.push(Rect::new(i, j, 1, 1));
            } else if let Some(last) = written.last_mut() {
                *last |= Rect::new(i, j, 1, 1);
            }
        }
    }
}

/// Zeroed label buffers, kept between frames. Four masks of a 1080p frame's mat are 5–7 MB; zeroed
/// afresh each frame, that was the labelling's largest single cost and flushed the caches the
/// rest of the detection works in. A labelling writes only in the tiles it labels (a few per
/// cent of them), so a buffer going back is zeroed there alone.
static MASK_POOL: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());
/// Most buffers [`MASK_POOL`] keeps: four masks for each of two frames labelled at once.
const MASK_POOL_BUFFERS: usize = 8;

/// Four zeroed buffers of `len` bytes: from [`MASK_POOL`] where it has them, else new.
fn zeroed_buffers(len: usize) -> Vec<Vec<u8>> {
    let mut pool = MASK_POOL.lock().unwrap_or_else(|e| e.into_inner());
    (0..4)
        .map(|_| match pool.iter().position(|b| b.len() == len) {
            Some(at) => pool.swap_remove(at),
            None => vec![0u8; len],
        })
        .collect()
}

impl Masks {
    /// The buffers from [`MASK_POOL`], zeroed where they were written, taken out; `None` for
    /// buffers of their own.
    fn take_zeroed(&mut self) -> Option<Vec<Vec<u8>>> {
        let written = self.written.take()?;
        let w = self.width.max(0) as usize;
        let mut bufs = std::mem::take(&mut self.bufs);
        for buf in bufs.iter_mut() {
            for r in &written {
                for j in r.y..r.y + r.height {
                    let row = j as usize * w;
                    buf[row + r.x as usize..row + (r.x + r.width) as usize].fill(0);
                }
            }
        }
        Some(bufs)
    }
}

impl Drop for Masks {
    /// Pooled buffers go back zeroed.
    fn drop(&mut self) {
        let Some(bufs) = self.take_zeroed() else { return };
        let mut pool = MASK_POOL.lock().unwrap_or_else(|e| e.into_inner());
        for buf in bufs {
            if pool.len() >= MASK_POOL_BUFFERS {
                pool.remove(0);
            }
            pool.push(buf);
        }
    }
}

/// `bbox` grown to hold `r` too.
fn grow(bbox: &mut Option<Rect>, r: Rect) {
    *bbox = Some(bbox.map_or(r, |b| b | r));
}

/// Labelling first asks about every s-th pixel of every s-th row (s from 2 to 4, see
/// [`label_sample_step`]), then labels in full only the tiles of this many pixels square in which
/// a sample had a colour, and the tiles round them. Every s-by-s block of pixels holds a sample,
/// so what goes unlabelled is colour nowhere s pixels wide with no sampled colour in its own tile
/// or the next (at least a tile away): a stray pixel, or a thread of JPEG ringing cut off a tile
/// or so beyond the wink it leaves, which no wink is. (On the three 1080p bench frames, 1% of the
/// tiles are labelled in full, and labelling takes a third of the time it took pixel by pixel.)
const LABEL_TILE_PX: usize = 8;

/// A faint model's pixel this near (label pixels) another colour's is that wink's rim blurred into
/// the felt. (Over the fourth renderer's 83 frames, without it one yellow wink was read as green
/// and one false wink found.)
const BLEND_REACH_PX: i64 = 2;

/// The labelling's sampling step ([`LABEL_TILE_PX`]) for a small wink `small_px` label pixels
/// across: a third of that, from 2 to 4. Any wink at least half in view holds a block that wide
/// of its colour (a half disc holds a square of 0.45 of its diameter), so none goes unsampled.
/// (At 1080p a small wink is about 14 pixels across: every fourth pixel of every fourth row, a
/// quarter of the lookups of every second one.)
fn label_sample_step(small_px: f64) -> usize {
    ((small_px / 3.0).floor() as usize).clamp(2, 4)
}

/// Labels the pixels of `region` outside `skip` with their wink colours, in parallel bands of rows
/// that share `lut`: a sparse pass finds the tiles with colour ([`LABEL_TILE_PX`]), and only those
/// and their neighbours are labelled pixel by pixel.
fn label_masks(region: &Region<'_>, lut: &ClassLut<'_>, skip: Option<Rect>, step: usize) -> (Masks, Option<Masks>) {
    let (w, h) = (region.width as usize, region.height as usize);
    if w == 0 || h == 0 {
        return (Masks { width: region.width, bufs: vec![Vec::new(); 4], bbox: [None; 4], written: None, tiles: 0 }, None);
    }
    let t = LABEL_TILE_PX;
    let (tw, th) = (w.div_ceil(t), h.div_ceil(t));
    // The sparse pass: which tiles hold a sampled pixel of any colour, by either model.
    let sampled: Vec<Vec<bool>> = (0..th)
        .into_par_iter()
        .map(|ty| {
            let mut hit = vec![false; tw];
            for j in (ty * t..((ty + 1) * t).min(h)).step_by(step) {
                for (i, p) in region.row(j).chunks_exact(3).enumerate().step_by(step) {
                    if !hit[i / t] && lut.code([p[0], p[1], p[2]]) != ClassLut::NOTHING {
                        hit[i / t] = true;
                    }
                }
            }
            hit
        })
        .collect();
    // Those tiles and their neighbours.
    let wanted: Vec<Vec<usize>> = (0..th)
        .map(|ty| (0..tw).filter(|&tx| (ty.saturating_sub(1)..=(ty + 1).min(th - 1)).any(|y| (tx.saturating_sub(1)..=(tx + 1).min(tw - 1)).any(|x| sampled[y][x]))).collect())
        .collect();
    let mut bufs = zeroed_buffers(w * h);
    // What the labelling below writes: the wanted tiles, as runs along each row of tiles.
    let mut written = Vec::new();
    for (ty, row) in wanted.iter().enumerate() {
        let mut runs = row.iter().copied().peekable();
        while let Some(first) = runs.next() {
            let mut last = first;
            while let Some(next) = runs.next_if_eq(&(last + 1)) {
                last = next;
            }
            let (x0, y0) = (first * t, ty * t);
            written.push(Rect::new(x0 as i32, y0 as i32, (((last + 1) * t).min(w) - x0) as i32, (((ty + 1) * t).min(h) - y0) as i32));
        }
    }
    // Bands of whole tile rows.
    let rows = h.div_ceil(4 * rayon::current_num_threads().max(1)).max(1).div_ceil(t) * t;
    let mut bands: Vec<Vec<&mut [u8]>> = (0..h.div_ceil(rows)).map(|_| Vec::with_capacity(4)).collect();
    for buf in bufs.iter_mut() {
        for (band, chunk) in bands.iter_mut().zip(buf.chunks_mut(rows * w)) {
            band.push(chunk);
        }
    }
    // Each band's boxes, and the pixels only the faint model gives a colour (few: listed, not
    // masked, so that frames without any pay nothing for them).
    let labelled: Vec<_> = bands
        .into_par_iter()
        .enumerate()
        .map(|(b, mut band)| {
            let mut bbox: [Option<Rect>; 4] = [None; 4];
            let mut faint_only = Vec::new();
            let j0 = b * rows;
            for dj in 0..band[0].len() / w.max(1) {
                let j = (j0 + dj) as i32;
                let row = region.row(j0 + dj);
                for &tx in &wanted[(j0 + dj) / t] {
                    for i in tx * t..((tx + 1) * t).min(w) {
                        let code = lut.code([row[3 * i], row[3 * i + 1], row[3 * i + 2]]);
                        if code == ClassLut::NOTHING || skip.is_some_and(|s| s.contains(Point::new(i as i32, j))) {
                            continue;
                        }
                        match ClassLut::decode(code) {
                            (Some(k), _) => {
                                band[k][dj * w + i] = 255;
                                grow(&mut bbox[k], Rect::new(i as i32, j, 1, 1));
                            }
                            (None, Some(k)) if !lut.too_dark_if_washed(code, [row[3 * i], row[3 * i + 1], row[3 * i + 2]]) => faint_only.push((k, (j0 + dj) * w + i)),
                            (None, _) => {}
                        }
                    }
                }
            }
            (bbox, faint_only)
        })
        .collect();
    let mut bbox: [Option<Rect>; 4] = [None; 4];
    for (bx, _) in &labelled {
        for (k, b) in bx.iter().enumerate() {
            if let Some(b) = b {
                grow(&mut bbox[k], *b);
            }
        }
    }
    let masks = Masks { width: region.width, bufs, bbox, tiles: written.len(), written: Some(written) };
    // The faint model's masks, for the colours it adds pixels to: those pixels and the model's.
    // A pixel beside another colour's is the blur of that wink's rim into the felt, not a faint
    // wink's (a yellow wink's rim on green felt lies between the two: green-yellow, off the
    // felt's line of shades).
    let beside_other = |k: usize, at: usize| {
        let (i, j) = ((at % w) as i64, (at / w) as i64);
        let r = BLEND_REACH_PX;
        (j - r..=j + r).filter(|&y| y >= 0 && y < h as i64).any(|y| {
            (i - r..=i + r).filter(|&x| x >= 0 && x < w as i64).any(|x| (0..4).any(|o| o != k && masks.bufs[o][y as usize * w + x as usize] != 0))
        })
    };
    let mut faint: Option<Masks> = None;
    for &(k, at) in labelled.iter().flat_map(|(_, f)| f) {
        if beside_other(k, at) {
            continue;
        }
        let faint = faint.get_or_insert_with(|| Masks { width: region.width, bufs: vec![Vec::new(); 4], bbox: [None; 4], written: None, tiles: 0 });
        if faint.bufs[k].is_empty() {
            faint.bufs[k] = masks.bufs[k].clone();
            faint.bbox[k] = masks.bbox[k];
        }
        faint.bufs[k][at] = 255;
        grow(&mut faint.bbox[k], Rect::new((at % w) as i32, (at / w) as i32, 1, 1));
    }
    (masks, faint)
}

/// The outer contours of a binary image that is the part `at` of a larger one, in the larger
/// one's coordinates.
fn external_contours(mask: &impl opencv::core::ToInputArray, at: Rect) -> opencv::Result<Vector<Vector<Point>>> {
    let mut contours: Vector<Vector<Point>> = Vector::new();
    imgproc::find_contours(mask, &mut contours, imgproc::RETR_EXTERNAL, imgproc::CHAIN_APPROX_SIMPLE, Point::new(at.x, at.y))?;
    Ok(contours)
}

/// For each corner blue's winks might start behind (in [`crate::geometry::Corner::ALL`]'s
/// order), how many winks lie behind the baseline of their own colour's corner were it blue's
/// (rule 5.2: each colour starts in its own corner, clockwise from blue's; which corner is
/// blue's the rules leave open, and which end of the mat is +x the program chooses).
pub fn home_corner_votes(found: &[Found], mat: &crate::geometry::MatSpec) -> [usize; 4] {
    use crate::geometry::Corner;
    let (baselines, outline) = (mat.baselines(), mat.outline());
    let mut votes = [0; 4];
    for f in found.iter().filter(|f| f.level == 0 && f.state != WinkState::Potted) {
        let Some(c) = f.centre_mm.filter(|&c| outline.contains_disc(c, 0.0)) else { continue };
        let Some(b) = baselines.iter().find(|b| b.depth_behind(c) > 0.0) else { continue };
        for blue in Corner::ALL.into_iter().filter(|&blue| Corner::home_of(blue, f.colour) == b.corner) {
            votes[blue.index()] += 1;
        }
    }
    votes
}

/// No more of a colour and size than a set holds (rule 2.1.1: two large and four small winks a
/// colour). While a colour shows too many of one size and too few of the other, the wink whose
/// outline argued least for its size is measured again as the other size (small winks seen at a
/// few pixels across blur towards the large size); any still over the limit go, least confident
/// first.
fn sizes_within_set(view: &LinearView<'_>, cal: &Calibration, model: &ColourModel, nominal: &NominalDiameters, found: &mut Vec<Found>) {
    for colour in Colour::ALL {
        let count = |found: &[Found], size: WinkSize| found.iter().filter(|f| f.colour == colour && f.size == size).count();
        for (from, to) in [(WinkSize::Large, WinkSize::Small), (WinkSize::Small, WinkSize::Large)] {
            let mut tried = Vec::new();
            while count(found, from) > from.per_colour() && count(found, to) < to.per_colour() {
                let Some(i) = least_convinced(found, colour, from, to, &tried) else { break };
                tried.push(i);
                let f = &found[i];
                // Rays cast twice, the second time from a circle through the first's rim, as when
                // the wink was first measured: cast once from the old size's outline, a wink in a
                // pile can fit too loosely to be kept at the new size (its rays' edges scatter
                // over 0.9 px), and the next wink, one that argued hard for its size, was flipped
                // instead (r5 r1080_s1_032: a small green wink on a large blue one, then a large
                // green one seen whole).
                let hint = Hint { size: Some(to), ..Hint::default() };
                if let Some(g) = measure(view, cal, model, colour, f.centre_px, f.radius_px, nominal, &hint) {
                    found[i] = Found { large_preference: f.large_preference, crescent: f.crescent, ..g };
                }
            }
        }
    }
    // A wink measured again at the other size can land on another of its colour: one wink,
    // found twice.
    dedupe(found);
    let keep = within_set(found, vec![true; found.len()]);
    let mut k = keep.iter();
    found.retain(|_| *k.next().unwrap_or(&true));
}

/// The wink of `colour` read as `from` that is least convinced of it, among those not `tried`: by
/// how far its outline argued for `to`, weighed by the fit's confidence (a pile of two small
/// winks of one colour read as one large wink fits badly), whether its size was measured from its
/// whole rim or judged from a part of it.
///
/// Until session 45 a size judged from a part of the rim went first whatever the arguments. On the
/// fifth renderer's r720_s2_012, a large blue wink whose whole rim read 8.9 mm in radius (its
/// preference −0.37, barely small) was kept small while a small one seen in part, judged small by
/// −0.70, was made large; the pair's sizes are now right there and on r720_s2_008, and our five
/// sets' tables are unchanged.
fn least_convinced(found: &[Found], colour: Colour, from: WinkSize, to: WinkSize, tried: &[usize]) -> Option<usize> {
    let toward_to = |f: &Found| f.confidence * if to == WinkSize::Large { f.large_preference } else { -f.large_preference };
    (0..found.len()).filter(|&i| found[i].colour == colour && found[i].size == from && !tried.contains(&i)).max_by(|&a, &b| toward_to(&found[a]).total_cmp(&toward_to(&found[b])))
}

/// Which winks to keep: no wink twice ([`distinct`]), then no more of a colour and size than a set
/// holds ([`within_set`]). Doubles go first: a wink found twice, once at each size, must not
/// push a wink found once out of the set's count.
fn singles_within_set(found: &[Found]) -> Vec<bool> {
    within_set(found, distinct(found, NEAREST_SHARE, vec![true; found.len()]))
}

/// Which winks to keep, of those `keep` keeps, so that no colour has more of a size than a set
/// holds (the most confident).
fn within_set(found: &[Found], mut keep: Vec<bool>) -> Vec<bool> {
    for colour in Colour::ALL {
        for size in [WinkSize::Large, WinkSize::Small] {
            let mut idx: Vec<usize> = (0..found.len()).filter(|&i| keep[i] && found[i].colour == colour && found[i].size == size).collect();
            idx.sort_by(|&a, &b| found[b].confidence.total_cmp(&found[a].confidence));
            for &d in idx.iter().skip(size.per_colour()) {
                keep[d] = false;
            }
        }
    }
    keep
}

/// Which label pixels (`lw` × `lh`, row by row) lie beyond the mat's outline.
fn beyond_mat_mask(cal: &Calibration, mat: &crate::geometry::MatSpec, labels: &Labels, lw: i32, lh: i32) -> opencv::Result<Vec<bool>> {
    let mut inside = Mat::new_rows_cols_with_default(lh, lw, opencv::core::CV_8U, Scalar::all(0.0))?;
    fill_outline(&mut inside, &mat.outline(), cal, labels)?;
    Ok(inside.data_bytes()?.iter().map(|&v| v == 0).collect())
}

/// Points along each edge of a mat-frame outline where [`fill_outline`] takes it into the
/// label image (the lens bends straight lines).
const OUTLINE_SAMPLES: usize = 24;

/// Sets to 255 the pixels of `mask` (label pixels) inside `outline` (mat mm), each of its edges
/// taken through [`OUTLINE_SAMPLES`] points.
fn fill_outline(mask: &mut Mat, outline: &crate::geometry::ConvexPolygon, cal: &Calibration, labels: &Labels) -> opencv::Result<()> {
    let mut ring: Vector<Point> = Vector::new();
    for e in outline.edges() {
        for k in 0..OUTLINE_SAMPLES {
            if let Some(p) = cal.mat_to_image(e.a + (e.b - e.a) * (k as f64 / OUTLINE_SAMPLES as f64)) {
                ring.push(labels.label_pixel(p));
            }
        }
    }
    let mut polys: Vector<Vector<Point>> = Vector::new();
    polys.push(ring);
    imgproc::fill_poly(mask, &polys, Scalar::all(255.0), imgproc::LINE_8, 0, Point::new(0, 0))
}

/// How much larger things on the pot's floor look than on the mat (they are nearer the camera).
fn pot_floor_magnification(cal: &Calibration) -> f64 {
    cal.camera.as_ref().map_or(1.0, |c| c.height_mm() / (c.height_mm() - POT_FLOOR_MM))
}

fn bbox_label(l: &Labels, poly: &[PixelPoint]) -> Option<(i32, i32, i32, i32)> {
    if poly.is_empty() {
        return None;
    }
    let pts: Vec<(f64, f64)> = poly.iter().map(|&p| l.label_coords(p)).collect();
    let (a, c) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, c), p| (a.min(p.0), c.max(p.0)));
    let (b, d) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(b, d), p| (b.min(p.1), d.max(p.1)));
    Some((a.floor() as i32 - 1, b.floor() as i32 - 1, c.ceil() as i32 + 1, d.ceil() as i32 + 1))
}

/// Index of a colour in `Colour::ALL`.
pub fn colour_index(c: Colour) -> usize {
    Colour::ALL.iter().position(|&x| x == c).unwrap_or(0)
}

/// The radius (label pixels) of the region labelled as a wink of radius `r` label pixels, in a
/// label image reduced `scale` times: shrunk by [`LABEL_SHRINK_PX`], and by at most half.
fn labelled_radius(r: f64, scale: f64) -> f64 {
    (r - LABEL_SHRINK_PX / scale).max(0.5 * r)
}

/// The area (label pixels) labelled as a wink of radius `r` label pixels ([`labelled_radius`]).
fn labelled_area(r: f64, scale: f64) -> f64 {
    std::f64::consts::PI * labelled_radius(r, scale).powi(2)
}

/// Where a wink may be, from a region of its colour ([`hypotheses`], [`crescent`]).
#[derive(Debug, Clone, Copy)]
struct Hypothesis {
    colour: Colour,
    /// Centre in the frame, pixels.
    at: PixelPoint,
    radius_px: f64,
    /// From a region too thin for a circle: a wink mostly under another, or not a wink.
    crescent: bool,
}

/// A region is tried for a crescent down to this share of a small wink's labelled area (regions
/// tried for circles: [`MIN_REGION_SHARE`]).
const CRESCENT_MIN_REGION_SHARE: f64 = 0.1;
/// ... and this many label pixels.
const CRESCENT_MIN_REGION_PX: f64 = 12.0;
/// A crescent's circle ([`crescent`]) is taken when its radius lies within these shares of a
/// small and a large wink's.
const CRESCENT_RADII: (f64, f64) = (0.6, 1.4);
/// ... and its middle lies within this share of another colour's wink's radius of that wink's
/// middle: a wink less than half seen has its middle covered.
const CRESCENT_UNDER_SHARE: f64 = 1.0;
/// ... but at least this share of it away: the blend of a wink's rim with the felt round it can
/// read as a thin ring of another colour, whose circle is the wink's own.
const CRESCENT_OFFSET_SHARE: f64 = 0.3;
/// A crescent is measured where the circle through its hull lies within this share of another
/// colour's wink's radius of its middle (a short arc places that circle a pixel or two off); the
/// wink measured must lie within [`CRESCENT_UNDER_SHARE`].
const CRESCENT_GUESS_UNDER_SHARE: f64 = 1.25;
/// A wink measured from a crescent is kept when its outline's fit is at least this close (RMS,
/// pixels; half of [`MAX_FIT_RMS_PX`]): its outer arc, a quarter to a half of its rim, is all that
/// places it, and an arc fitted loosely places its middle anywhere along the upper's.
const CRESCENT_MAX_FIT_RMS_PX: f64 = 0.45;
/// ... or this close in mm, where pixels are finer (at 2 px/mm a wink's rounded rim band, 0.5–0.9
/// mm wide, spans two pixels or so, and its edge points scatter more in pixels than at 1 px/mm
/// while placing the middle better in mm).
const CRESCENT_MAX_FIT_RMS_MM: f64 = 0.35;

/// Circle hypotheses (label x, label y, radius in label px) in one filled region: repeatedly the
/// distance transform's highest point not yet covered by an earlier circle.
fn hypotheses(contour: &Vector<Point>, bb: Rect, scale: f64, (r_small, r_large): (f64, f64)) -> opencv::Result<Vec<(f64, f64, f64)>> {
    let pad = 2;
    let mut filled = Mat::zeros(bb.height + 2 * pad, bb.width + 2 * pad, opencv::core::CV_8UC1)?.to_mat()?;
    let mut cs: Vector<Vector<Point>> = Vector::new();
    cs.push(contour.clone());
    imgproc::draw_contours(&mut filled, &cs, 0, Scalar::all(255.0), imgproc::FILLED, imgproc::LINE_8, &opencv::core::no_array(), i32::MAX, Point::new(pad - bb.x, pad - bb.y))?;
    let mut dt = Mat::default();
    imgproc::distance_transform(&filled, &mut dt, imgproc::DIST_L2, imgproc::DIST_MASK_5, opencv::core::CV_32F)?;
    let (rows, cols) = (dt.rows(), dt.cols());
    // A new Mat, so continuous: read as one slice (a Mat's own accessor checks every index).
    let dt = dt.data_typed::<f32>()?;
    let mut covered = vec![false; (rows * cols) as usize];
    let mut out = Vec::new();
    for _ in 0..8 {
        let mut best: Option<(i32, i32, f32)> = None;
        let mut uncovered = 0usize;
        for j in 0..rows {
            for i in 0..cols {
                let v = dt[(j * cols + i) as usize];
                if v <= 0.0 || covered[(j * cols + i) as usize] {
                    continue;
                }
                uncovered += 1;
                if best.is_none_or(|b| v > b.2) {
                    best = Some((i, j, v));
                }
            }
        }
        let Some((bi, bj, v)) = best else { break };
        if (uncovered as f64) < MIN_REGION_SHARE * labelled_area(r_small, scale) || (v as f64) < 0.35 * r_small {
            break;
        }
        let r = if v as f64 + 0.5 >= 0.5 * (r_small + r_large) { r_large } else { r_small };
        // Sub-pixel peak: the centroid of the near-maximal distance values round it.
        let (mut sx, mut sy, mut sw) = (0.0, 0.0, 0.0);
        for j in (bj - 2).max(0)..(bj + 3).min(rows) {
            for i in (bi - 2).max(0)..(bi + 3).min(cols) {
                let d = dt[(j * cols + i) as usize] as f64;
                if d >= v as f64 - 1.0 {
                    let wgt = d - (v as f64 - 1.0);
                    sx += wgt * i as f64;
                    sy += wgt * j as f64;
                    sw += wgt;
                }
            }
        }
        let (cx, cy) = if sw > 0.0 { (sx / sw, sy / sw) } else { (bi as f64, bj as f64) };
        let cover = r.max(v as f64 + 0.5);
        for j in 0..rows {
            for i in 0..cols {
                if ((i as f64 - cx).powi(2) + (j as f64 - cy).powi(2)).sqrt() <= cover {
                    covered[(j * cols + i) as usize] = true;
                }
            }
        }
        out.push((cx + (bb.x - pad) as f64, cy + (bb.y - pad) as f64, r));
    }
    Ok(out)
}

/// A region too thin for [`hypotheses`]' circles, as a wink mostly under another of another
/// colour leaves (a crescent): the circle through its convex hull, whose points all lie on the
/// crescent's outer arc, the lower wink's own rim (the arc's two tips included, where the upper's
/// rim crosses it). Label x, label y and the nearer nominal radius (label px), when the circle is
/// of about a wink's size.
fn crescent(contour: &Vector<Point>, (r_small, r_large): (f64, f64)) -> Option<(f64, f64, f64)> {
    let hull = convex_hull(contour.iter().map(|p| PixelPoint::new(p.x as f64, p.y as f64)).collect());
    crate::geometry::plane::fit_circle(&hull).and_then(|(c, r)| {
        (r >= CRESCENT_RADII.0 * r_small && r <= CRESCENT_RADII.1 * r_large).then_some((c.x, c.y, if r >= 0.5 * (r_small + r_large) { r_large } else { r_small }))
    })
}

/// What is already known about a wink when it is measured again.
#[derive(Debug, Clone, Default)]
pub struct Hint {
    /// How it rests (default: flat on the mat, or on the table beyond the mat).
    pub rest: Option<Rest>,
    /// Its size, when settled.
    pub size: Option<WinkSize>,
    /// Other winks' outlines in the frame (centre, radius px): edge points inside them belong to
    /// the boundary with that wink, not to this wink's rim.
    pub others: Vec<(PixelPoint, f64)>,
    /// Those of `others` that are of this wink's colour. Its colour runs on into them, so an edge
    /// point inside one is where the colour runs out beyond both winks: it bounds neither, and
    /// does not hold this wink's outline out to it (which would argue for the large size).
    pub same_colour: Vec<(PixelPoint, f64)>,
    /// Outlines of winks over this one's middle (centre, radius px): its rays start past them
    /// ([`fit::ray_edges_past`]).
    pub over: Vec<(PixelPoint, f64)>,
    /// The starting outline is a fitted one (a wink measured again): the rays already cross its
    /// rim squarely, so they are cast once rather than twice.
    pub fitted: bool,
    /// The outline (a convex polygon, frame pixels) of a body hiding part of it: edge points
    /// inside it are where that body hides the wink, not its rim. The pot's, for a wink beside
    /// it ([`measure`]).
    pub hidden_by: Vec<PixelPoint>,
    /// Looked for as a wink of the felt's colour ([`search::felt_hued`]): its rim, little
    /// different from the felt, may read well inside its outline, so a smaller radius passes
    /// ([`FELT_HUED_MIN_RADIUS_SHARE`]).
    pub felt_hued: bool,
}

/// Least radius of a wink's free fit, as a share of a small wink's: radii well off both sizes are
/// not winks (a squidger's rim, a hand's edge) ...
const MIN_RADIUS_SHARE: f64 = 0.75;
/// ... and of a wink looked for as one of the felt's colour ([`Hint::felt_hued`]): the sixth
/// renderer's small green winks on green felt, duller than it, read 5.6–5.9 mm (nominal 8) where
/// their rims' rounded shading meets the felt. (Lowered for every wink, at 0.7, that renderer's
/// other winks lost 4 and gained 7 false.)
const FELT_HUED_MIN_RADIUS_SHARE: f64 = 0.65;

/// A wink is beside the pot when the pot's body comes within this many of its radii of its middle
/// ([`beside_the_pot`]).
const POT_REACH_RADII: f64 = 2.0;

/// The pot's body in the frame ([`pot_body`], as the labelling leaves it out) when a wink at
/// `c_px`, `r_px` in radius, lies beside it: outside the body, which comes within
/// [`POT_REACH_RADII`] of its radii.
fn beside_the_pot(cal: &Calibration, c_px: PixelPoint, r_px: f64) -> Option<Vec<PixelPoint>> {
    // Far from the body's axis (its base's middle to its rim's), it cannot be beside it.
    let (base, rim) = (cal.mat_to_image_at(MatPoint::new(0.0, 0.0), 0.0)?, cal.mat_to_image_at(MatPoint::new(0.0, 0.0), POT_OPENING.1)?);
    let reach = (POT_OPENING.0 + POT_BODY_MARGINS_MM.1) * px_per_mm(cal, MatPoint::new(0.0, 0.0)) + POT_REACH_RADII * r_px + base.distance(rim);
    if c_px.distance(base).min(c_px.distance(rim)) > reach {
        return None;
    }
    let pot = pot_body(cal, 0.0);
    (!inside_convex(&pot, c_px) && pot.iter().any(|p| p.distance(c_px) < POT_REACH_RADII * r_px)).then_some(pot)
}

/// Measures one wink hypothesis at full resolution: rays, fit, size.
///
/// The size is the fitted radius's nearest when most of the rim is seen, else the nominal radius
/// whose circle explains the seen rim better while holding the covered edges inside. The
/// footprint's centre is then fitted with the size's nominal radius: the diameters are known
/// (rule 2.1.1) far better than a partly seen rim measures them.
///
/// Edges are read on the frame's measure (`model.edge_measure`: the colour change orthogonal to
/// the wink's colour, or chromaticity in a frame whose winks cast contact shadows) first; when
/// that gives no wink, again on the other. (At a few pixels across, a dark contact shadow blurs
/// into the rim and some rays read it as wink, so the fit fails; a shadow does not change
/// chromaticity. Chromaticity first everywhere was worse over the renderer's frames: sizes
/// 99.5 → 97.6% right.)
///
/// A wink beside the pot ([`beside_the_pot`]) may lie partly under its flared body, and its edges
/// against the body are not its rim: when neither measure gives a wink, it is measured again with
/// them left out ([`Hint::hidden_by`]). (Measured so first, the fifth renderer's false squops
/// fell 20 → 18, but a large red wink beside the pot, fitted well as any other, was placed
/// 0.9 px off rather than 0.2 px, and a yellow beside it read squopping it.)
#[allow(clippy::too_many_arguments)]
pub fn measure(view: &LinearView<'_>, cal: &Calibration, model: &ColourModel, colour: Colour, c_px: PixelPoint, r_px: f64, nominal: &NominalDiameters, hint: &Hint) -> Option<Found> {
    let first = measure_with(view, cal, model, colour, c_px, r_px, nominal, hint, model.edge_measure);
    // Edges scattered off the outline: measured again on brightness (a bright wink's colour halo,
    // see `fit::EdgeMeasure::Brightness`), kept only when those edges lie far closer to a circle.
    if let Some(f) = &first {
        let ppm = f.centre_mm.map_or(0.0, |c| px_per_mm(cal, c));
        if f.rms_mm * ppm >= SCATTERED_EDGES_PX {
            if let Some(b) = measure_with(view, cal, model, colour, c_px, r_px, nominal, hint, fit::EdgeMeasure::Brightness) {
                if b.rms_mm < BRIGHTNESS_RMS_SHARE * f.rms_mm {
                    return Some(b);
                }
            }
        }
    }
    let other = if model.edge_measure == fit::EdgeMeasure::Chroma { fit::EdgeMeasure::Orthogonal } else { fit::EdgeMeasure::Chroma };
    first.or_else(|| measure_with(view, cal, model, colour, c_px, r_px, nominal, hint, other)).or_else(|| {
        if !hint.hidden_by.is_empty() {
            return None;
        }
        let pot = beside_the_pot(cal, c_px, r_px)?;
        measure(view, cal, model, colour, c_px, r_px, nominal, &Hint { hidden_by: pot, ..hint.clone() })
    })
}

#[allow(clippy::too_many_arguments)]
fn measure_with(view: &LinearView<'_>, cal: &Calibration, model: &ColourModel, colour: Colour, c_px: PixelPoint, r_px: f64, nominal: &NominalDiameters, hint: &Hint, how: fit::EdgeMeasure) -> Option<Found> {
    let mut c_px = c_px;
    let mut r_px = r_px;
    let mut edges = Vec::new();
    // Two rounds: the second from a circle through the first's rim, so the rays cross it squarely.
    let rounds = if hint.fitted { 1 } else { 2 };
    for round in 0..rounds {
        edges = fit::ray_edges_past(view, model, colour, c_px, r_px, RAYS, how, &hint.over);
        for e in edges.iter_mut() {
            if e.beyond == Beyond::Background && (inside_any(&hint.others, e.px) || inside_convex(&hint.hidden_by, e.px)) {
                e.beyond = Beyond::Covered;
            }
        }
        let bg: Vec<PixelPoint> = edges.iter().filter(|e| e.beyond == Beyond::Background).map(|e| e.px).collect();
        if bg.len() < 5 || round + 1 == rounds {
            break;
        }
        if let Some((c, r)) = fit_circle(&bg) {
            if (r - r_px).abs() < 0.4 * r_px && c.distance(c_px) < 0.6 * r_px {
                c_px = c;
                r_px = r;
            }
        }
    }
    fit_edges(cal, model, colour, c_px, r_px, edges, nominal, hint)
}

/// A wink's outline fitted to its edge points, found along rays from `c_px` expecting the rim
/// `r_px` out: its size, footprint and confidence.
#[allow(clippy::too_many_arguments)]
fn fit_edges(cal: &Calibration, model: &ColourModel, colour: Colour, c_px: PixelPoint, r_px: f64, edges: Vec<fit::RayEdge>, nominal: &NominalDiameters, hint: &Hint) -> Option<Found> {
    let bg_idx: Vec<usize> = (0..edges.len()).filter(|&i| edges[i].beyond == Beyond::Background).collect();
    let rim_share = bg_idx.len() as f64 / RAYS as f64;
    if rim_share < MIN_RIM_SHARE {
        return None;
    }
    let pts: Vec<PixelPoint> = bg_idx.iter().map(|&i| edges[i].px).collect();
    let start = cal.image_to_mat(c_px)?;
    let ppm = px_per_mm(cal, start);
    let rest = hint.rest.unwrap_or_else(|| flat_at(cal, start));
    let r0 = r_px / ppm;
    let free_fit: CircleFit = fit::fit_footprint(cal, &pts, start, r0, rim_share >= 0.5, rest, 1.0 / ppm)?;
    let (r_small, r_large) = (nominal.small_mm / 2.0, nominal.large_mm / 2.0);
    let least = if hint.felt_hued { FELT_HUED_MIN_RADIUS_SHARE } else { MIN_RADIUS_SHARE };
    if free_fit.radius < least * r_small || free_fit.radius > 1.25 * r_large || free_fit.rms_mm * ppm > MAX_FIT_RMS_PX {
        return None;
    }
    // The edges lie this far outside the rim (a shadow read as the wink, a dark rounded rim read
    // as the felt): outlines are fitted at the nominal radius plus it, the wink's radius is the
    // nominal one.
    let offset = model.edge_offset_mm[colour_index(colour)];
    let cut = 2.0 / ppm;
    let covered: Vec<MatPoint> = edges.iter().filter(|e| e.beyond != Beyond::Background && !inside_any(&hint.same_colour, e.px)).filter_map(|e| cal.image_to_mat(e.px)).collect();
    let judge = |r: f64| -> Option<(f64, CircleFit)> {
        let f = fit::fit_footprint(cal, &pts, free_fit.centre, r + offset, false, rest, 1.0 / ppm)?;
        let outside: f64 = covered.iter().map(|p| (p.distance(f.centre) - f.radius - 0.5 / ppm).max(0.0).min(cut).powi(2)).sum();
        Some((f.cost + outside, f))
    };
    let large_preference = if rim_share >= WELL_SEEN_RIM_SHARE {
        size_preference(free_fit.radius - offset, nominal)
    } else if hint.size.is_some() {
        // The size is settled: no need to fit both.
        0.0
    } else {
        match (judge(r_small), judge(r_large)) {
            (Some((cs, _)), Some((cl, _))) => (cs - cl) / (cs + cl).max(1e-9),
            (Some(_), None) => -1.0,
            (None, Some(_)) => 1.0,
            (None, None) => return None,
        }
    };
    let size = hint.size.unwrap_or(if large_preference > 0.0 { WinkSize::Large } else { WinkSize::Small });
    let nominal_r = if size == WinkSize::Large { r_large } else { r_small };
    let (_, mut fit) = judge(nominal_r)?;
    fit.radius = nominal_r;
    let top = rest.top_height(fit.radius, fit.centre);
    let centre_px = cal.mat_to_image_at(fit.centre, top)?;
    let mut inlier = vec![false; edges.len()];
    for (k, &i) in bg_idx.iter().enumerate() {
        inlier[i] = fit.inlier[k];
    }
    let kept = fit.inlier.iter().filter(|&&b| b).count() as f64 / RAYS as f64;
    let confidence = (0.5 + 0.5 * (kept / 0.8).min(1.0)) * (1.0 - (fit.rms_mm * ppm / MAX_FIT_RMS_PX).powi(2).min(1.0) * 0.5);
    Some(Found {
        id: String::new(),
        colour,
        size,
        radius_mm: Some(fit.radius),
        measured_radius_mm: (rim_share >= WELL_SEEN_RIM_SHARE).then_some(free_fit.radius - offset),
        centre_mm: Some(fit.centre),
        centre_px,
        radius_px: (fit.radius + offset) * ppm,
        rest,
        level: 0,
        state: WinkState::InPlay,
        confidence: confidence.clamp(0.0, 1.0),
        rms_mm: fit.rms_mm,
        rim_share,
        large_preference,
        edges,
        inlier,
        rays_from: (c_px, r_px),
        pictured: false,
        crescent: false,
    })
}

/// Least share of the rim a wink must show all round for its radius to be measured by the
/// picture ([`template::Radius::Free`]).
const TEMPLATE_RADIUS_COVERAGE: f64 = 0.95;
/// Winks of a colour whose radii are measured by the picture, at most: the median of a few is
/// enough.
const TEMPLATE_RADIUS_WINKS: usize = 5;
/// Most a wink's picture may be blurred, as a multiple of the median over the frame's winks seen
/// whole.
const TEMPLATE_BLUR_SHARE: f64 = 3.0;

/// What the frame teaches the pictures of [`template`]: each colour's excess of a rim's radius in
/// the picture over its size's nominal one, and the most a wink's picture may be blurred.
///
/// The picture's rim lies where the blurred step between wink and felt is halfway, which need not
/// be the nominal radius (real winks are 3% smaller, a rounded rim shades darker): with part of a
/// rim hidden (another wink beside it, a baseline), fitting it at the wrong radius moves the
/// centre towards the hidden side (gaps between winks read 0.17 mm narrower). So, as for the
/// outlines ([`edge_offsets`]), each colour's excess is learned from a few of its winks seen whole
/// (the median), and every centre is fitted at its nominal radius plus that.
struct Pictures {
    /// Excess of the picture's radius over the nominal one, mm, by colour; `None` when too few
    /// winks were seen whole to learn it (frames of winks close together), and a real wink's
    /// radius ([`Calibration::real_radius`]) stands in: the nominal one, 3% too large, moved
    /// centres towards their hidden sides.
    offset: Option<[f64; 4]>,
    /// The frame's median blur of winks seen whole times [`TEMPLATE_BLUR_SHARE`]: a picture much
    /// more blurred has stretched one disc over something else (two winks of one colour read as
    /// one: 2.4 px against the frame's 0.44).
    most_blur: f64,
}

/// The ring round wink `i` as [`template::Ring`] takes it, the other winks' outlines left out.
fn ring_of(view: &LinearView<'_>, cal: &Calibration, nominal: &NominalDiameters, found: &[Found], i: usize, rest: Rest) -> Option<template::Ring> {
    let f = &found[i];
    let c = f.centre_mm?;
    let avoid: Vec<(PixelPoint, f64)> = found.iter().enumerate().filter(|&(j, o)| j != i && o.centre_px.distance(f.centre_px) < o.radius_px + f.radius_px * 2.0 + 6.0).map(|(_, o)| (o.centre_px, o.radius_px)).collect();
    template::Ring::new(view, cal, c, nominal.of(f.size) / 2.0, rest, px_per_mm(cal, c), &avoid)
}

impl Pictures {
    /// Learned from up to [`TEMPLATE_RADIUS_WINKS`] winks of each colour flat on the mat with
    /// [`TEMPLATE_RADIUS_COVERAGE`] of their rims clear of everything else.
    fn learn(view: &LinearView<'_>, cal: &Calibration, nominal: &NominalDiameters, found: &[Found]) -> Pictures {
        let rings: Vec<(usize, template::Ring)> = (0..found.len())
            .into_par_iter()
            .filter(|&i| matches!(found[i].rest, Rest::Flat { .. }))
            // On the felt alone: a wink's shade on a painted line beside it would read as rim.
            .filter_map(|i| ring_of(view, cal, nominal, found, i, found[i].rest).map(|r| r.on_felt()).filter(|r| r.coverage >= TEMPLATE_RADIUS_COVERAGE).map(|r| (i, r)))
            .collect();
        let mut whole: Vec<&(usize, template::Ring)> = Vec::new();
        for colour in Colour::ALL {
            whole.extend(rings.iter().filter(|(i, _)| found[*i].colour == colour).take(TEMPLATE_RADIUS_WINKS));
        }
        let measured: Vec<(Colour, f64, f64)> = whole
            .par_iter()
            .filter_map(|(i, ring)| ring.fit(template::Radius::Free).map(|got| (found[*i].colour, got.radius_mm - nominal.of(found[*i].size) / 2.0, got.blur_px)))
            .collect();
        let offset = (measured.len() >= MIN_OFFSET_WINKS).then(|| per_colour_medians(&measured.iter().map(|m| (m.0, m.1)).collect::<Vec<_>>()));
        let most_blur = {
            let mut b: Vec<f64> = measured.iter().map(|m| m.2).collect();
            b.sort_by(f64::total_cmp);
            b.get(b.len() / 2).map_or(f64::INFINITY, |&m| TEMPLATE_BLUR_SHARE * m)
        };
        Pictures { offset, most_blur }
    }

    /// Wink `i`'s footprint centre from its picture, resting as `rest`; `None` where too little
    /// of its rim is clear or the picture does not settle.
    fn centre(&self, view: &LinearView<'_>, cal: &Calibration, nominal: &NominalDiameters, found: &[Found], i: usize, rest: Rest) -> Option<MatPoint> {
        let f = &found[i];
        let ring = ring_of(view, cal, nominal, found, i, rest)?;
        let nominal_r = nominal.of(f.size) / 2.0;
        let r = self.offset.map_or(cal.real_radius(nominal, f.size), |o| nominal_r + o[colour_index(f.colour)]);
        ring.fit(template::Radius::Fixed(r)).filter(|g| g.blur_px <= self.most_blur).map(|g| g.centre)
    }

    /// The margin (mm, real winks' footprints: [`Calibration::real_radius`]) of
    /// winks `a` and `b` lying flat, from their pictures each with the other left out; `None`
    /// where either picture cannot be fitted.
    fn flat_margin(&self, view: &LinearView<'_>, cal: &Calibration, nominal: &NominalDiameters, found: &[Found], a: usize, b: usize) -> Option<f64> {
        // A wink already flat keeps its base (the mat or the table); a leaning one is laid on the mat.
        let flat = |i: usize| match found[i].rest {
            r @ Rest::Flat { .. } => r,
            Rest::Leaning { .. } => Rest::Flat { base_mm: 0.0 },
        };
        let (ca, cb) = (self.centre(view, cal, nominal, found, a, flat(a))?, self.centre(view, cal, nominal, found, b, flat(b))?);
        Some(cal.real_radius(nominal, found[a].size) + cal.real_radius(nominal, found[b].size) - ca.distance(cb))
    }
}

/// Free winks' footprint centres from every pixel round their rims ([`template`]): winks flat on
/// the mat or the table, in no squop, with most of their rims clear of other winks.
fn refine_free_winks(view: &LinearView<'_>, cal: &Calibration, nominal: &NominalDiameters, pictures: &Pictures, squops: &[FoundSquop], found: &mut [Found]) {
    let refined: Vec<(usize, MatPoint, PixelPoint)> = (0..found.len())
        .into_par_iter()
        .filter(|&i| found[i].level == 0 && matches!(found[i].rest, Rest::Flat { .. }) && !squops.iter().any(|s| s.upper == i || s.lower == i))
        .filter_map(|i| {
            let f = &found[i];
            let c = pictures.centre(view, cal, nominal, found, i, f.rest)?;
            let px = cal.mat_to_image_at(c, f.rest.top_height(nominal.of(f.size) / 2.0, c))?;
            Some((i, c, px))
        })
        .collect();
    for (i, c, px) in refined {
        found[i].centre_mm = Some(c);
        found[i].centre_px = px;
        found[i].pictured = true;
    }
}

/// How strongly a measured radius (mm) argues for a large wink: +1 at the large radius, −1 at
/// the small one, 0 halfway, within ±2.
fn size_preference(radius_mm: f64, nominal: &NominalDiameters) -> f64 {
    let (r_small, r_large) = (nominal.small_mm / 2.0, nominal.large_mm / 2.0);
    (2.0 * (radius_mm - 0.5 * (r_small + r_large)) / (r_large - r_small)).clamp(-2.0, 2.0)
}

/// Least edge offset (mm) worth measuring the winks again for.
const MIN_EDGE_OFFSET_MM: f64 = 0.1;
/// Largest edge offset (mm) believed: beyond it the outlines are not a rim's.
const MAX_EDGE_OFFSET_MM: f64 = 1.5;
/// Fewest winks seen whole to learn a colour's edge offset from; with fewer, the median over
/// all colours' winks stands in (shadows and blur are the frame's).
const MIN_OFFSET_WINKS: usize = 3;

/// How far each colour's outlines lie outside the rims in this frame, mm. A soft shadow on the
/// felt beside a dark wink reads as the wink and moves its edges out; a dark rounded rim beside a
/// light wink reads as the felt and moves them in. Fitted at the nominal radius, a wink seen in
/// part would have its centre moved towards its visible arc by as much.
///
/// Learned from the winks whose rim was seen nearly whole: each colour's median of their radii
/// less their sizes' nominal radii when it has at least [`MIN_OFFSET_WINKS`] of them, else the
/// median of all colours' (shadows and blur are the frame's; 0 with too few). Where the sizes as
/// read were themselves misread through a large offset, [`set_offset`] reads them again.
pub fn edge_offsets(found: &[Found], nominal: &NominalDiameters) -> [f64; 4] {
    let excess: Vec<(Colour, f64)> = found.iter().filter_map(|f| f.measured_radius_mm.map(|r| (f.colour, r - nominal.of(f.size) / 2.0))).collect();
    let medians = per_colour_medians(&excess);
    Colour::ALL.map(|c| {
        let seen: Vec<(f64, WinkSize)> = found.iter().filter(|f| f.colour == c).filter_map(|f| Some((f.measured_radius_mm?, f.size))).collect();
        if seen.len() < MIN_OFFSET_WINKS {
            return medians[colour_index(c)];
        }
        set_offset(&seen, nominal).map_or(medians[colour_index(c)], |o| o.clamp(-MAX_EDGE_OFFSET_MM, MAX_EDGE_OFFSET_MM))
    })
}

/// [`set_offset`]: a wink's radius this far (mm) or more from its size's, less the offset,
/// costs no more (a wink mismeasured, or another's rim taken for its own).
const SET_FIT_CAP_MM: f64 = 1.0;
/// [`set_offset`]: the cost of an offset o is this times o² (mm⁻²), on top of the radii's.
const OFFSET_PRIOR: f64 = 0.25;
/// [`set_offset`]: how much better (in the cost's units: a wink's capped miss is 1) another
/// reading of the sizes must fit than the sizes as read.
const SET_READING_MARGIN: f64 = 0.6;
/// [`set_offset`]: the most a reading's squared misses may average (mm²: 0.63 mm RMS, about one
/// wink in three capped) for the radii to say what the offset is. Winks in piles and squopped
/// are measured rougher; our renderer's flat-drawn potout-01002 read green at 0.53 mm² with a
/// large wink's radius 9.17 mm and a small one's 9.04.
const SET_READING_MISS_MM2: f64 = 0.4;

/// One colour's edge offset (mm) read with its sizes, from its winks' measured radii and sizes
/// as read (`seen`), when a reading of the sizes that the set's make-up allows (at most two
/// large and four small, the larger radii the large ones) fits the radii better than the sizes
/// as read by [`SET_READING_MARGIN`], and fits them to [`SET_READING_MISS_MM2`]: that reading's
/// offset, else `None`. A reading's offset is the median of the radii's excesses over their
/// sizes' nominal radii, and its cost the squared misses of the radii less that offset from their
/// sizes' (each capped at [`SET_FIT_CAP_MM`]²) plus [`OFFSET_PRIOR`] times its square.
///
/// An offset as large as half the two sizes' difference (1.5 mm) reads a small wink as large and
/// takes the offset the other way: another renderer's small yellow winks on grey felt read
/// 9.6–9.7 mm in radius and its large one 12.5 (each 1.5–1.7 mm out), so all four were read large
/// and the offset came out −1.3 mm. One large wink and three small ones fit those radii to 0.1 mm
/// at an offset of 1.6.
fn set_offset(seen: &[(f64, WinkSize)], nominal: &NominalDiameters) -> Option<f64> {
    if seen.is_empty() {
        return None;
    }
    let (r_small, r_large) = (nominal.small_mm / 2.0, nominal.large_mm / 2.0);
    let nominal_r = |size: WinkSize| if size == WinkSize::Large { r_large } else { r_small };
    let reading = |sizes: &mut dyn Iterator<Item = (f64, WinkSize)>| -> (f64, f64, f64) {
        let excess: Vec<f64> = sizes.map(|(r, size)| r - nominal_r(size)).collect();
        let mut sorted = excess.clone();
        sorted.sort_by(f64::total_cmp);
        let o = sorted[sorted.len() / 2];
        let misses = excess.iter().map(|e| (e - o).powi(2).min(SET_FIT_CAP_MM * SET_FIT_CAP_MM)).sum::<f64>();
        (misses + OFFSET_PRIOR * o * o, o, misses / excess.len() as f64)
    };
    let (as_read, _, _) = reading(&mut seen.iter().copied());
    let mut radii: Vec<f64> = seen.iter().map(|s| s.0).collect();
    radii.sort_by(f64::total_cmp);
    let n = radii.len();
    (n.saturating_sub(WinkSize::Small.per_colour())..=WinkSize::Large.per_colour().min(n))
        .map(|large| reading(&mut radii.iter().enumerate().map(|(i, &r)| (r, if i >= n - large { WinkSize::Large } else { WinkSize::Small }))))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .filter(|&(cost, _, miss)| cost <= as_read - SET_READING_MARGIN && miss <= SET_READING_MISS_MM2)
        .map(|(_, o, _)| o)
}

/// Each colour's median of `values` when it has at least [`MIN_OFFSET_WINKS`], else the median
/// of all of them (0 with too few), within ±[`MAX_EDGE_OFFSET_MM`].
fn per_colour_medians(values: &[(Colour, f64)]) -> [f64; 4] {
    let learned = |mut v: Vec<f64>| -> Option<f64> {
        (v.len() >= MIN_OFFSET_WINKS).then(|| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
    };
    let overall = learned(values.iter().map(|v| v.1).collect()).unwrap_or(0.0);
    Colour::ALL.map(|c| learned(values.iter().filter(|v| v.0 == c).map(|v| v.1).collect()).unwrap_or(overall).clamp(-MAX_EDGE_OFFSET_MM, MAX_EDGE_OFFSET_MM))
}

/// Hypotheses that converged on the same wink: keep the better fit.
fn dedupe(found: &mut Vec<Found>) {
    let keep = distinct(found, DISTINCT_SHARE, vec![true; found.len()]);
    let mut k = keep.iter();
    found.retain(|_| *k.next().unwrap_or(&true));
}

/// A wink looked for by its shape (`search`) is kept only when its outline's centre lies within
/// this share of a small wink's radius of where it was looked for.
const SEARCH_MOVE_SHARE: f64 = 0.6;

/// Two hypotheses of one colour whose fits lie nearer than this share of the smaller's radius
/// found one wink twice.
const DISTINCT_SHARE: f64 = 0.5;

/// Two winks of one colour can lie this near (as a share of the smaller's radius) only when each
/// was measured with the other's outline covering its rim (`split`): one deeply squopping the
/// other. Nearer, one wink was found twice.
const NEAREST_SHARE: f64 = 0.35;

/// Levels again from `squops` once winks have gone: one above the highest wink below. A wink left
/// on nothing lies flat again (on the mat, or on the table beyond it).
fn settle_levels(cal: &Calibration, squops: &[FoundSquop], found: &mut [Found]) {
    let level = crate::stack::levels(found.len(), squops);
    for (f, &l) in found.iter_mut().zip(&level) {
        f.level = l;
        if l == 0 && matches!(f.rest, Rest::Leaning { .. }) {
            if let Some(c) = f.centre_mm {
                f.rest = flat_at(cal, c);
            }
        }
    }
}

/// How a wink at `at` (mat mm) lies flat: on the mat, or on the table beyond its edge.
fn flat_at(cal: &Calibration, at: MatPoint) -> Rest {
    Rest::Flat { base_mm: if cal.mat.outline().contains_disc(at, 0.0) { 0.0 } else { TABLE_BASE_MM } }
}

/// Whether frame point `p` lies inside one of `outlines` (centre, radius px), with 0.7 px for the
/// outline's own blur.
fn inside_any(outlines: &[(PixelPoint, f64)], p: PixelPoint) -> bool {
    outlines.iter().any(|&(c, r)| p.distance(c) < r + 0.7)
}

/// Which winks to keep, of those `keep` keeps, so that no two of one colour lie within `share` of
/// a radius of each other: of two, the lower in its pile (a wink found twice is not on itself),
/// then the more confident.
fn distinct(found: &[Found], share: f64, mut keep: Vec<bool>) -> Vec<bool> {
    for i in 0..found.len() {
        for j in 0..found.len() {
            if i == j || !keep[i] || !keep[j] || found[i].colour != found[j].colour {
                continue;
            }
            let (Some(a), Some(b)) = (found[i].centre_mm, found[j].centre_mm) else { continue };
            let r = found[i].radius_mm.unwrap_or(8.0).min(found[j].radius_mm.unwrap_or(8.0));
            if a.distance(b) < share * r {
                let better = |x: &Found, y: &Found| x.level < y.level || (x.level == y.level && x.confidence >= y.confidence);
                let worse = if better(&found[i], &found[j]) { j } else { i };
                keep[worse] = false;
            }
        }
    }
    keep
}

#[cfg(test)]
pub(crate) use tests::wink as test_wink;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::MatSpec;

    #[test]
    fn a_reduced_region_is_each_label_pixel_the_mean_of_its_own_block() {
        // A frame of vertical stripes two pixels wide, alternating 0 and 200 in every channel,
        // with a 5-pixel mark at x = 500: a reduction stretched even a little shifts the blocks
        // over the stripes and the mark.
        let mut frame = Mat::new_rows_cols_with_default(60, 640, opencv::core::CV_8UC3, Scalar::all(0.0)).expect("frame");
        for y in 0..60 {
            for x in 0..640 {
                let v = if (x / 2) % 2 == 1 || (500..505).contains(&x) { 200 } else { 0 };
                *frame.at_2d_mut::<opencv::core::Vec3b>(y, x).expect("pixel") = opencv::core::Vec3b::from([v; 3]);
            }
        }
        // Regions of odd and even sizes, from odd and even corners.
        for (region, scale) in [(Rect::new(3, 5, 601, 51), 2), (Rect::new(10, 2, 598, 40), 2), (Rect::new(1, 1, 629, 58), 3), (Rect::new(0, 0, 640, 60), 4)] {
            let small = reduced(&frame, region, scale).expect("a reduction");
            assert_eq!((small.cols(), small.rows()), (region.width / scale, region.height / scale));
            for j in 0..small.rows() {
                for i in 0..small.cols() {
                    let mut sum = 0u32;
                    for y in 0..scale {
                        for x in 0..scale {
                            sum += frame.at_2d::<opencv::core::Vec3b>(region.y + j * scale + y, region.x + i * scale + x).expect("pixel")[0] as u32;
                        }
                    }
                    let mean = sum as f64 / (scale * scale) as f64;
                    let got = small.at_2d::<opencv::core::Vec3b>(j, i).expect("label pixel")[0] as f64;
                    assert!((got - mean).abs() <= 0.5, "{region:?} ÷ {scale}: label ({i}, {j}) reads {got}, its block's mean is {mean}");
                }
            }
        }
    }

    #[test]
    fn a_wink_a_few_pixels_across_is_a_hypothesis_though_blur_leaves_four_pixels_of_its_colour() {
        // A small wink at 0.29 px/mm: radius 2.3 px, of which blur leaves a 2 × 2 block labelled.
        let mut contour: Vector<Point> = Vector::new();
        for (x, y) in [(10, 10), (11, 10), (11, 11), (10, 11)] {
            contour.push(Point::new(x, y));
        }
        let bb = imgproc::bounding_rect(&contour).expect("box");
        let hyps = hypotheses(&contour, bb, 1.0, (2.32, 3.19)).expect("hypotheses");
        assert_eq!(hyps.len(), 1, "{hyps:?}");
        let (x, y, r) = hyps[0];
        assert!((x - 10.5).abs() < 0.6 && (y - 10.5).abs() < 0.6 && r == 2.32, "{hyps:?}");
    }

    #[test]
    fn a_wink_mostly_under_another_is_the_circle_through_its_crescents_outer_arc() {
        // Label pixels as at 1080p: small winks 7.3 px in radius, large 10.
        let (r_small, r_large) = (7.3, 10.0);
        // A large wink at (30, 30) under another large one 4 px across it: a crescent 4 px thick
        // at most, too thin for the distance transform's circles.
        let mut mask = Mat::new_rows_cols_with_default(60, 60, opencv::core::CV_8UC1, Scalar::all(0.0)).expect("mask");
        imgproc::circle(&mut mask, Point::new(30, 30), 10, Scalar::all(255.0), imgproc::FILLED, imgproc::LINE_8, 0).expect("lower");
        imgproc::circle(&mut mask, Point::new(30, 26), 10, Scalar::all(0.0), imgproc::FILLED, imgproc::LINE_8, 0).expect("upper");
        let lower = external_contours(&mask, Rect::new(0, 0, 60, 60)).expect("contours").get(0).expect("one region");
        let bb = imgproc::bounding_rect(&lower).expect("box");
        assert!(hypotheses(&lower, bb, 1.0, (r_small, r_large)).expect("hypotheses").is_empty());
        let (x, y, r) = crescent(&lower, (r_small, r_large)).expect("a circle");
        assert!((x - 30.0).abs() < 1.0 && (y - 30.0).abs() < 1.5 && r == r_large, "({x}, {y}) r {r}");
        // A thin straight strip (a line, a hand's edge) is no wink's arc.
        let mut strip = Mat::new_rows_cols_with_default(60, 60, opencv::core::CV_8UC1, Scalar::all(0.0)).expect("mask");
        imgproc::rectangle(&mut strip, Rect::new(10, 28, 30, 3), Scalar::all(255.0), imgproc::FILLED, imgproc::LINE_8, 0).expect("strip");
        let strip = external_contours(&strip, Rect::new(0, 0, 60, 60)).expect("contours").get(0).expect("one region");
        assert_eq!(crescent(&strip, (r_small, r_large)), None);
    }

    #[test]
    fn two_winks_of_one_colour_nearly_on_one_another_in_the_pot_are_two_while_the_colour_has_winks_unfound() {
        // Label pixels as at 1080p in the pot: small winks 6.5 px in radius, large 9 px.
        let (r_small, r_large) = (6.5, 9.0);
        let region = |discs: &[(f64, f64, f64)]| -> Vector<Point> {
            let mut mask = Mat::new_rows_cols_with_default(60, 60, opencv::core::CV_8UC1, Scalar::all(0.0)).expect("mask");
            for &(x, y, r) in discs {
                imgproc::circle(&mut mask, Point::new(x as i32, y as i32), r as i32, Scalar::all(255.0), imgproc::FILLED, imgproc::LINE_8, 0).expect("disc");
            }
            external_contours(&mask, Rect::new(0, 0, 60, 60)).expect("contours").get(0).expect("one region")
        };
        let read = |contour: &Vector<Point>, found: usize| {
            let hyps = hypotheses(contour, imgproc::bounding_rect(contour).expect("box"), 1.0, (r_small, r_large)).expect("hypotheses");
            (hyps.clone(), wink_beneath(contour, &hyps, (r_small, r_large), found).expect("beneath"))
        };
        // A large wink on a small one whose far side shows 2 px beyond it: one maximum, the
        // large wink's.
        let two = region(&[(30.0, 30.0, r_large - 1.0), (35.0, 30.0, r_small)]);
        let (hyps, under) = read(&two, 3);
        assert_eq!(hyps.len(), 1, "the distance transform sees one: {hyps:?}");
        let (x, y, r) = under.expect("a second wink while the colour has two unfound");
        assert!(x > hyps[0].0 + 2.0, "on the region's far side from the first: {under:?} {hyps:?}");
        assert!((y - 30.0).abs() < 2.0 && r == r_small, "{under:?}");
        // ... but not when the other five of the colour are found elsewhere.
        assert_eq!(read(&two, 5).1, None);
        // Two large winks side by side, each its own maximum, and a small one beneath both that
        // shows 2 px below them: a third while the colour has one unfound.
        let three = region(&[(22.0, 28.0, r_large - 1.0), (38.0, 28.0, r_large - 1.0), (30.0, 32.0, r_small)]);
        let (hyps, under) = read(&three, 3);
        assert_eq!(hyps.len(), 2, "{hyps:?}");
        let (x, y, _) = under.expect("a third wink");
        assert!((22.0..=38.0).contains(&x) && y > 30.0, "below the two: {under:?}");
        assert_eq!(read(&three, 4).1, None, "the colour's other four found");
        let (hyps, under) = read(&region(&[(22.0, 28.0, r_large - 1.0), (38.0, 28.0, r_large - 1.0)]), 0);
        assert_eq!((hyps.len(), under), (2, None), "two side by side are two");
        // One wink, large or small, is one, unfound winks or not.
        for r in [r_small, r_large - 0.5] {
            let (hyps, under) = read(&region(&[(30.0, 30.0, r)]), 0);
            assert_eq!((hyps.len(), under), (1, None), "radius {r}");
        }
    }

    /// A small wink of `colour` lying flat with its footprint at `at` (mm); its pixel outline a
    /// placeholder for tests to set.
    pub(crate) fn wink(colour: Colour, at: MatPoint) -> Found {
        Found {
            id: String::new(),
            colour,
            size: WinkSize::Small,
            radius_mm: Some(8.0),
            measured_radius_mm: None,
            centre_mm: Some(at),
            centre_px: PixelPoint::new(0.0, 0.0),
            radius_px: 8.0,
            rest: Rest::Flat { base_mm: 0.0 },
            level: 0,
            state: WinkState::InPlay,
            confidence: 1.0,
            rms_mm: 0.0,
            rim_share: 1.0,
            large_preference: -1.0,
            edges: Vec::new(),
            inlier: Vec::new(),
            rays_from: (PixelPoint::new(0.0, 0.0), 8.0),
            pictured: false,
            crescent: false,
        }
    }

    /// Four small blue winks on grey felt, far apart, drawn with and without a contact shadow (the
    /// felt within 2.5 px of each rim at half its light): read shaded only with it.
    #[test]
    fn the_felt_reads_shaded_beside_winks_only_where_they_cast_contact_shadows() -> opencv::Result<()> {
        use opencv::core::{Point, Scalar, CV_8UC3};
        let cal = template::test_calibration();
        let nominal = NominalDiameters::STANDARD;
        let r = nominal.small_mm / 2.0 * px_per_mm(&cal, MatPoint::new(0.0, 0.0));
        let at = [(40, 40), (120, 40), (40, 120), (120, 120)];
        let found: Vec<Found> = at
            .iter()
            .map(|&(x, y)| {
                let p = PixelPoint::new(x as f64, y as f64);
                Found { centre_px: p, ..wink(Colour::Blue, cal.image_to_mat(p).unwrap_or(MatPoint::new(0.0, 0.0))) }
            })
            .collect();
        let draw = |shadow: bool| -> opencv::Result<f64> {
            let felt = 150.0;
            let mut img = Mat::new_rows_cols_with_default(160, 160, CV_8UC3, Scalar::all(felt))?;
            for &(x, y) in &at {
                if shadow {
                    // Half the light in linear terms: 150 in sRGB is 0.305 linear, 0.152 is 108.
                    imgproc::circle(&mut img, Point::new(x, y), (r + 2.5).round() as i32, Scalar::all(108.0), -1, imgproc::LINE_AA, 0)?;
                }
                imgproc::circle(&mut img, Point::new(x, y), r.round() as i32, Scalar::new(190.0, 80.0, 30.0, 0.0), -1, imgproc::LINE_AA, 0)?;
            }
            let view = LinearView::new(&img)?;
            Ok(contact_shade(&view, &cal, &nominal, &found).unwrap_or(f64::NAN))
        };
        let (plain, shaded) = (draw(false)?, draw(true)?);
        assert!((plain - 1.0).abs() < 0.02, "no shadow: {plain:.3}");
        assert!(shaded < CONTACT_SHADE, "contact shadows: {shaded:.3}");
        // Two winks seen whole are too few to read a frame's shading from.
        let felt = Mat::new_rows_cols_with_default(160, 160, CV_8UC3, Scalar::all(150.0))?;
        let view = LinearView::new(&felt)?;
        assert_eq!(contact_shade(&view, &cal, &nominal, &found[..2]), None);
        Ok(())
    }

    /// Beyond the mat's edge (x > 0 here), forty red "winks" of a cloth's checks (confidences
    /// 0.55 ± 0.06, 0.37–0.73, as another renderer's gingham gave) and one red wink lying on it
    /// (0.97): the checks go, the wink on the table and the winks on the mat stay, whatever their
    /// confidence. With as few beyond the mat as a set could hold, nothing goes.
    #[test]
    fn more_winks_of_a_colour_beyond_the_mat_than_a_set_holds_are_the_tables_pattern() {
        use crate::geometry::ConvexPolygon;
        let mat = ConvexPolygon::new(vec![MatPoint::new(-900.0, -450.0), MatPoint::new(0.0, -450.0), MatPoint::new(0.0, 450.0), MatPoint::new(-900.0, 450.0)]);
        let at = |x: f64, y: f64, confidence: f64| Found { confidence, ..wink(Colour::Red, MatPoint::new(x, y)) };
        // Sums of three uniform draws: near normal, sd 0.06.
        let mut state = 7u64;
        let mut uniform = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut found: Vec<Found> = (0..40).map(|k| at(30.0 + (k % 4) as f64 * 20.0, -400.0 + k as f64 * 20.0, 0.55 + 0.12 * (uniform() + uniform() + uniform() - 1.5))).collect();
        let checks: Vec<f64> = found.iter().map(|f| f.confidence).collect();
        assert!(checks.iter().all(|&c| (0.37..=0.73).contains(&c)), "{checks:?}");
        found.push(at(50.0, 300.0, 0.97));
        found.push(at(-300.0, 0.0, 0.5));
        found.push(at(-200.0, 100.0, 0.9));
        drop_table_pattern(&mat, &mut found);
        let kept: Vec<f64> = found.iter().map(|f| f.confidence).collect();
        assert_eq!(kept, vec![0.97, 0.5, 0.9]);
        let mut few: Vec<Found> = (0..MAX_BEYOND_PER_COLOUR).map(|k| at(40.0, k as f64 * 30.0, 0.5)).collect();
        drop_table_pattern(&mat, &mut few);
        assert_eq!(few.len(), MAX_BEYOND_PER_COLOUR);
    }

    /// Felt on the left, a wooden table on the right beyond the mat's edge (x = 0 mm): of three
    /// red "winks" found, the one whose face is the wood's colour (a streak of its grain read as
    /// red round it) goes, while a red wink on the table and one on the felt stay.
    #[test]
    fn a_wink_beyond_the_mat_whose_face_is_the_tables_colour_is_the_tables_grain() -> opencv::Result<()> {
        use crate::geometry::ConvexPolygon;
        use opencv::core::{Point, Rect, Scalar, CV_8UC3};
        let cal = template::test_calibration();
        let mut img = Mat::new_rows_cols_with_default(160, 160, CV_8UC3, Scalar::new(120.0, 125.0, 130.0, 0.0))?;
        let (wood, red) = (Scalar::new(60.0, 95.0, 150.0, 0.0), Scalar::new(35.0, 30.0, 200.0, 0.0));
        imgproc::rectangle(&mut img, Rect::new(80, 0, 80, 160), wood, -1, imgproc::LINE_8, 0)?;
        // The grain: a ring of red streaks round wood.
        imgproc::circle(&mut img, Point::new(120, 40), 6, red, 1, imgproc::LINE_8, 0)?;
        for (x, y) in [(120, 120), (40, 80)] {
            imgproc::circle(&mut img, Point::new(x, y), 6, red, -1, imgproc::LINE_8, 0)?;
        }
        let view = LinearView::new(&img)?;
        let lab = |x: f64, y: f64| fit::lab_at(&view, PixelPoint::new(x, y)).unwrap_or(Lab { l: 0.0, a: 0.0, b: 0.0 });
        let model = ColourModel::new(lab(40.0, 20.0), Some(lab(140.0, 80.0)));
        let at = |x: f64, y: f64| {
            let p = PixelPoint::new(x, y);
            Found { centre_px: p, radius_px: 6.0, ..wink(Colour::Red, cal.image_to_mat(p).unwrap_or(MatPoint::new(0.0, 0.0))) }
        };
        let mut found = vec![at(120.0, 40.0), at(120.0, 120.0), at(40.0, 80.0)];
        let mat = ConvexPolygon::new(vec![MatPoint::new(-200.0, -200.0), MatPoint::new(0.0, -200.0), MatPoint::new(0.0, 200.0), MatPoint::new(-200.0, 200.0)]);
        drop_table_grain(&view, &mat, &model, &mut found);
        let kept: Vec<(f64, f64)> = found.iter().map(|f| (f.centre_px.x, f.centre_px.y)).collect();
        assert_eq!(kept, vec![(120.0, 120.0), (40.0, 80.0)]);
        // With no red wink on the mat to compare with, the face must still lie the model's least
        // distance from the table.
        let mut alone = vec![at(120.0, 40.0), at(120.0, 120.0)];
        drop_table_grain(&view, &mat, &model, &mut alone);
        assert_eq!(alone.len(), 1);
        assert_eq!(alone[0].centre_px, PixelPoint::new(120.0, 120.0));
        Ok(())
    }

    #[test]
    fn a_wink_in_a_pot_of_its_colour_is_told_from_the_pot() {
        // The flat style's dark red pot and a red wink on its floor (nearmiss-01019, CIE Lab).
        let (pot, wink, face) = (Lab { l: 19.0, a: 31.0, b: 21.0 }, Lab { l: 34.0, a: 53.0, b: 36.0 }, Lab { l: 36.0, a: 55.0, b: 38.0 });
        let spread = 3.0;
        assert!(looks_like_a_wink(wink, Some(face), (pot, spread)));
        // The pot's own shades (its floor darker, its lit wall lighter) are the pot.
        for shade in [Lab { l: 12.0, a: 22.0, b: 15.0 }, Lab { l: 26.0, a: 36.0, b: 25.0 }] {
            assert!(!looks_like_a_wink(shade, Some(face), (pot, spread)), "{shade:?}");
        }
        // Red potted out (no red wink on the mat): the wink, far from the pot, still counts; a
        // shade within the rim's spread and the least distance does not.
        assert!(looks_like_a_wink(wink, None, (pot, spread)));
        assert!(!looks_like_a_wink(Lab { l: 24.0, a: 36.0, b: 24.0 }, None, (pot, spread)));
    }

    #[test]
    fn a_wink_found_twice_does_not_push_another_out_of_the_sets_count() {
        let large = |x: f64, confidence: f64| Found { size: WinkSize::Large, radius_mm: Some(11.0), confidence, ..wink(Colour::Green, MatPoint::new(x, 0.0)) };
        // Green: a large wink found twice (2 mm apart, once less surely) and a second large wink
        // found once, less surely than either.
        let found = vec![large(0.0, 0.9), large(100.0, 0.6), large(2.0, 0.7)];
        assert_eq!(singles_within_set(&found), vec![true, true, false]);
        // Three large winks found once each: the least sure goes (rule 2.1.1: two a colour).
        let found = vec![large(0.0, 0.9), large(100.0, 0.6), large(200.0, 0.7)];
        assert_eq!(singles_within_set(&found), vec![true, false, true]);
    }

    #[test]
    fn the_winks_behind_the_baselines_say_which_corner_is_blues() {
        use crate::geometry::Corner;
        let mat = MatSpec::STANDARD;
        let near = |k: Corner| mat.corner(k) * 0.93;
        // With blue's winks behind (−X,+Y)'s baseline, yellow's are behind (−X,−Y)'s (clockwise
        // seen from above: blue, green, red, yellow).
        assert_eq!(Corner::home_of(Corner::NegXPosY, Colour::Yellow), Corner::NegXNegY);
        assert_eq!(Corner::home_of(Corner::PosXPosY, Colour::Green), Corner::PosXNegY);
        // Two yellow winks behind the corner opposite (−X,−Y): blue's is then (+X,−Y). One blue
        // behind (−X,+Y), one green behind (+X,−Y) (blue's then (+X,+Y): the colours a quarter
        // turn round, blue and green sharing a short side).
        let found = vec![
            wink(Colour::Yellow, near(Corner::PosXPosY)),
            wink(Colour::Yellow, near(Corner::PosXPosY) + MatPoint::new(-20.0, 0.0)),
            wink(Colour::Blue, near(Corner::NegXPosY)),
            wink(Colour::Green, near(Corner::PosXNegY)),
            // In the field of play, and in the pot: no vote.
            wink(Colour::Red, MatPoint::new(100.0, 50.0)),
            Found { state: WinkState::Potted, ..wink(Colour::Green, MatPoint::new(0.0, 0.0)) },
        ];
        assert_eq!(home_corner_votes(&found, &mat), [1, 1, 2, 0]);
    }

    #[test]
    fn the_shared_class_table_answers_as_the_model_does_from_every_band() {
        // Green felt; 16³ colours, each looked up from four threads at once (hits, misses and
        // slots two colours contend for), against the model asked directly.
        let (model, lab8) = (green_felt_model(), sample::Lab8::new());
        let lut = ClassLut::new(&model, None, &lab8);
        let colours: Vec<[u8; 3]> = (0..16u8).flat_map(|b| (0..16u8).flat_map(move |g| (0..16u8).map(move |r| [b * 17, g * 17, r * 17]))).collect();
        let wrong: Vec<[u8; 3]> = (0..4)
            .into_par_iter()
            .flat_map_iter(|_| colours.iter().copied())
            .filter(|&bgr| {
                let lab = lab8.lab(bgr);
                let direct = model.classify(Lab { l: 50.0, a: lab[1] as f64 - 128.0, b: lab[2] as f64 - 128.0 }).map(colour_index);
                lut.class(bgr) != direct
            })
            .collect();
        assert!(wrong.is_empty(), "{} lookups disagree, e.g. {:?}", wrong.len(), wrong.first());
    }

    /// A colour model learned on green felt ([`GREEN_FELT`]).
    fn green_felt_model() -> ColourModel {
        ColourModel::new(Lab { l: 46.0, a: -27.1, b: 19.6 }, None)
    }

    /// Green felt, 8-bit BGR.
    const GREEN_FELT: [u8; 3] = [60, 110, 60];

    /// The colours on a grid of 16 levels a channel that `lut` gives a wink's colour.
    fn wink_coloured(lut: &ClassLut<'_>) -> Vec<[u8; 3]> {
        (0..16u8).flat_map(|b| (0..16u8).flat_map(move |g| (0..16u8).map(move |r| [b * 17, g * 17, r * 17]))).filter(|&c| lut.class(c).is_some()).collect()
    }

    #[test]
    fn label_buffers_are_zeroed_wherever_the_labelling_or_the_pot_wrote_before_they_are_reused() {
        // Colour over the left half and the right edge of a frame whose size is no whole number
        // of tiles (the last tiles cut short), and pixels set by hand as the pot's surroundings
        // are, some in felt no tile of the labelling reached.
        let (model, lab8) = (green_felt_model(), sample::Lab8::new());
        let lut = ClassLut::new(&model, None, &lab8);
        let (felt, colours) = (GREEN_FELT, wink_coloured(&lut));
        let (w, h) = (101usize, 67usize);
        let mut img = vec![0u8; w * h * 3];
        for y in 0..h {
            for x in 0..w {
                let c = if !(60..93).contains(&x) && (x / 9 + y / 7) % 3 == 0 { colours[(x * 7 + y) % colours.len()] } else { felt };
                img[(y * w + x) * 3..(y * w + x) * 3 + 3].copy_from_slice(&c);
            }
        }
        let region = Region { data: &img, step: w * 3, x0: 0, y0: 0, width: w as i32, height: h as i32 };
        for step in [2, 4] {
            let (mut masks, _) = label_masks(&region, &lut, None, step);
            assert!(masks.bufs.iter().any(|b| b.iter().filter(|&&v| v != 0).count() > 500), "much labelled, step {step}");
            for (k, i, j) in [(0, 47, 33), (1, 74, 40), (2, 76, 45), (3, 100, 66)] {
                masks.set(k, i, j);
            }
            let bufs = masks.take_zeroed().expect("buffers from the pool");
            assert_eq!(bufs.len(), 4);
            for b in &bufs {
                assert!(b.len() == w * h && b.iter().all(|&v| v == 0), "step {step}");
            }
        }
    }

    /// Green felt with two discs of one a*b*, of red's hue but far under a red wink's least
    /// chroma (C* 20 at 29–33°): one light (L* 76, a glossy red wink the lamp washes out pink),
    /// one dark (L* 23, shaded skin on an arm). The faint model takes the light one for red, not
    /// the dark one.
    #[test]
    fn a_red_wink_washed_out_pink_is_labelled_faintly_and_dark_skin_of_its_hue_is_not() {
        let model = green_felt_model();
        let (faint, lab8) = (model.faint(), sample::Lab8::new());
        let lut = ClassLut::new(&model, Some(&faint), &lab8);
        let (pink, dark) = ([170u8, 175, 225], [40u8, 45, 85]);
        assert_eq!(lut.class(pink), None, "under the model's own floor");
        let (w, h) = (80usize, 40usize);
        let in_disc = |x: usize, y: usize, cx: usize| (x as i32 - cx as i32).pow(2) + (y as i32 - 20).pow(2) <= 64;
        let mut img = vec![0u8; w * h * 3];
        for y in 0..h {
            for x in 0..w {
                let c = if in_disc(x, y, 20) { pink } else if in_disc(x, y, 60) { dark } else { GREEN_FELT };
                img[(y * w + x) * 3..(y * w + x) * 3 + 3].copy_from_slice(&c);
            }
        }
        let region = Region { data: &img, step: w * 3, x0: 0, y0: 0, width: w as i32, height: h as i32 };
        let (_, faint_masks) = label_masks(&region, &lut, None, 2);
        let faint_masks = faint_masks.expect("faint pixels");
        let red = &faint_masks.bufs[colour_index(Colour::Red)];
        assert!(red[20 * w + 20] != 0, "the washed-out wink");
        assert!(red[20 * w + 60] == 0, "the dark skin");
    }

    #[test]
    fn labelling_tiles_with_sampled_colour_finds_every_patch_as_wide_as_the_sampling_step() {
        // Green felt with a disc, a block as wide as the step at odd rows and columns far from
        // it, a thread a pixel wide leaving the disc, and one stray pixel far from everything;
        // each labelled pixel by pixel for reference. Sampled every second and every fourth
        // pixel.
        let (model, lab8) = (green_felt_model(), sample::Lab8::new());
        let lut = ClassLut::new(&model, None, &lab8);
        let (felt, coloured) = (GREEN_FELT, wink_coloured(&lut));
        assert!(lut.class(felt).is_none() && coloured.len() > 2);
        let (w, h) = (96usize, 64usize);
        for step in [2, 4] {
            let mut img = vec![0u8; w * h * 3];
            let mut paint = |x: usize, y: usize, c: [u8; 3]| img[(y * w + x) * 3..(y * w + x) * 3 + 3].copy_from_slice(&c);
            for y in 0..h {
                for x in 0..w {
                    let inside = (x as f64 - 20.0).hypot(y as f64 - 20.0) <= 6.0;
                    paint(x, y, if inside { coloured[0] } else { felt });
                }
            }
            for y in 51..51 + step {
                for x in 71..71 + step {
                    paint(x, y, coloured[1]);
                }
            }
            for x in 26..40 {
                paint(x, 21, coloured[0]);
            }
            paint(91, 7, coloured[1]);
            let region = Region { data: &img, step: w * 3, x0: 0, y0: 0, width: w as i32, height: h as i32 };
            let (masks, _) = label_masks(&region, &lut, None, step);
            for y in 0..h {
                for x in 0..w {
                    let want = lut.class(region.bgr(x, y));
                    let got = (0..4).find(|&k| masks.bufs[k][y * w + x] == 255);
                    if (x, y) == (91, 7) {
                        // The stray pixel: no sample falls on it, and no tile near it has one.
                        assert_eq!(got, None, "step {step}");
                    } else {
                        assert_eq!(got, want, "pixel ({x}, {y}), step {step}");
                    }
                }
            }
        }
        // A small wink 8 label pixels across (the least the label scale allows) is sampled
        // every second pixel; one 14 across (1080p) every fourth.
        assert_eq!([5.0, 8.0, 11.9, 12.0, 14.0, 40.0].map(label_sample_step), [2, 2, 3, 4, 4, 4]);
    }

    #[test]
    fn edge_offsets_are_each_colours_median_excess_over_its_nominal_radius() {
        let seen = |colour: Colour, size: WinkSize, r: f64| Found { size, measured_radius_mm: Some(r), ..wink(colour, MatPoint::new(0.0, 0.0)) };
        let nominal = NominalDiameters::STANDARD;
        // Blue: three large winks read 0.4–0.6 mm too wide (a shadow taken for the wink) and
        // one small one with its rim half hidden (not measured, so it does not count).
        let mut found = vec![seen(Colour::Blue, WinkSize::Large, 11.6), seen(Colour::Blue, WinkSize::Large, 11.4), seen(Colour::Blue, WinkSize::Small, 8.5)];
        found.push(Found { size: WinkSize::Small, measured_radius_mm: None, ..wink(Colour::Blue, MatPoint::new(50.0, 0.0)) });
        // Yellow: its dark rim read as the felt, 0.3 mm too narrow, and one outlier.
        found.extend([seen(Colour::Yellow, WinkSize::Small, 7.7), seen(Colour::Yellow, WinkSize::Small, 7.7), seen(Colour::Yellow, WinkSize::Large, 9.0)]);
        // Red: two winks only, which is too few to say; the frame's median stands in.
        found.extend([seen(Colour::Red, WinkSize::Small, 9.9), seen(Colour::Red, WinkSize::Small, 9.9)]);
        let o = edge_offsets(&found, &nominal);
        let at = |c: Colour| o[colour_index(c)];
        assert!((at(Colour::Blue) - 0.5).abs() < 1e-9, "{o:?}");
        assert!((at(Colour::Yellow) + 0.3).abs() < 1e-9, "{o:?}");
        // Over all eight measured: excesses -2, -0.3, -0.3, 0.4, 0.5, 0.6, 1.9, 1.9 → the upper median.
        assert!((at(Colour::Red) - 0.5).abs() < 1e-9, "{o:?}");
        assert!((at(Colour::Green) - 0.5).abs() < 1e-9, "{o:?}");
        // Nothing measured: no offset.
        assert_eq!(edge_offsets(&[], &nominal), [0.0; 4]);
        // An offset beyond what a rim's edge can be is capped: a whole set read 2 mm wide.
        let wild: Vec<Found> = [(WinkSize::Large, 13.0), (WinkSize::Large, 13.0)].into_iter().chain([(WinkSize::Small, 10.0); 4]).map(|(size, r)| seen(Colour::Green, size, r)).collect();
        assert_eq!(edge_offsets(&wild, &nominal)[colour_index(Colour::Green)], MAX_EDGE_OFFSET_MM);
    }

    #[test]
    fn a_colours_edge_offset_is_read_with_the_sizes_its_radii_say_through_it() {
        let nominal = NominalDiameters::STANDARD;
        let (l, s) = (WinkSize::Large, WinkSize::Small);
        let seen = |size: WinkSize, r: f64| Found { size, measured_radius_mm: Some(r), ..wink(Colour::Yellow, MatPoint::new(0.0, 0.0)) };
        // Another renderer's yellow winks on grey felt (f1080_053), each read 1.5–1.7 mm wide: the
        // small ones' radii (9.6–9.7 mm) are nearer the large one's than the small one's, so all
        // four were read large and the offset came out −1.3 mm. One large wink and three small
        // ones fit at 1.63 (capped at the most a rim's edge can be).
        let read = [(9.58, l), (12.52, l), (9.63, l), (9.71, l)];
        assert!(set_offset(&read, &nominal).is_some_and(|o| (o - 1.63).abs() < 1e-9));
        let found: Vec<Found> = read.iter().map(|&(r, size)| seen(size, r)).collect();
        assert_eq!(edge_offsets(&found, &nominal)[colour_index(Colour::Yellow)], MAX_EDGE_OFFSET_MM);
        // Read at their sizes: left as read.
        assert_eq!(set_offset(&[(8.1, s), (7.9, s), (8.0, s)], &nominal), None);
        assert_eq!(set_offset(&[(11.1, l), (10.9, l), (8.0, s)], &nominal), None);
        // Three read large where a set has two, one of them squopped and mismeasured (figA's
        // nearmiss-03023: 10.58, 10.59 and 11.29 mm): no reading the set allows fits better.
        assert_eq!(set_offset(&[(10.58, l), (10.59, l), (11.29, l), (7.12, s)], &nominal), None);
        // Radii too rough to say (the flat-drawn potout-01002, winks in piles: a large one read
        // 9.17 mm, a small one 9.04): left as read.
        assert_eq!(set_offset(&[(9.17, s), (8.13, s), (7.51, s), (9.99, l), (9.04, s)], &nominal), None);
        // More winks than a set holds: no reading the set allows; none: nothing to read.
        assert_eq!(set_offset(&[(8.0, s); 7], &nominal), None);
        assert_eq!(set_offset(&[], &nominal), None);
    }

    #[test]
    fn a_wink_found_twice_keeps_the_lower_and_a_wink_whose_lower_went_lies_flat_again() {
        let cal = template::test_calibration();
        let leaning = |colour: Colour, at: MatPoint, confidence: f64| Found { level: 1, confidence, rest: Rest::Leaning { support_mm: 1.6, towards: MatPoint::new(0.0, 0.0) }, ..wink(colour, at) };
        // One red wink found twice, the copy "on" it the more confident: the one on the mat stays.
        let twice = vec![wink(Colour::Red, MatPoint::new(0.0, 0.0)), leaning(Colour::Red, MatPoint::new(1.0, 0.0), 1.0)];
        assert_eq!(distinct(&twice, NEAREST_SHARE, vec![true; 2]), vec![true, false]);
        // A blue wink squopping a red one: raised while the squop stands, flat once it is gone.
        let mut found = vec![wink(Colour::Red, MatPoint::new(0.0, 0.0)), leaning(Colour::Blue, MatPoint::new(12.0, 0.0), 0.9)];
        let squop = FoundSquop { upper: 1, lower: 0, margin_mm: 4.0, confidence: 0.9, evidence: "test" };
        settle_levels(&cal, &[squop], &mut found);
        assert_eq!(found[1].level, 1);
        assert!(matches!(found[1].rest, Rest::Leaning { .. }));
        settle_levels(&cal, &[], &mut found);
        assert_eq!(found[1].level, 0);
        assert_eq!(found[1].rest, Rest::Flat { base_mm: 0.0 });
    }

    #[test]
    fn the_wink_flipped_to_keep_a_set_is_the_least_convinced_of_its_size() {
        let large = |pref: f64, confidence: f64, measured: bool| Found {
            size: WinkSize::Large,
            large_preference: pref,
            confidence,
            measured_radius_mm: measured.then_some(9.5 + 1.5 * pref),
            ..wink(Colour::Green, MatPoint::new(0.0, 0.0))
        };
        // Three green larges: two well fitted, one (two small winks in a pile read as one) that
        // argues as hard for large but fits badly.
        let found = vec![large(0.89, 0.98, true), large(0.90, 0.59, true), large(1.11, 0.99, true)];
        assert_eq!(least_convinced(&found, Colour::Green, WinkSize::Large, WinkSize::Small, &[]), Some(1));
        // Once tried, the next least convinced.
        assert_eq!(least_convinced(&found, Colour::Green, WinkSize::Large, WinkSize::Small, &[1]), Some(0));
        // A size measured from the whole rim that barely argues for it goes before one judged
        // from a part of the rim that argues hard (the old rule took the judged one first).
        let found = vec![large(0.2, 0.9, true), large(0.8, 1.0, false)];
        assert_eq!(least_convinced(&found, Colour::Green, WinkSize::Large, WinkSize::Small, &[]), Some(0));
        // ... and one judged that barely argues goes before one measured that argues hard.
        let found = vec![large(1.0, 0.9, true), large(0.3, 1.0, false)];
        assert_eq!(least_convinced(&found, Colour::Green, WinkSize::Large, WinkSize::Small, &[]), Some(1));
        // Only that colour and size.
        assert_eq!(least_convinced(&found, Colour::Blue, WinkSize::Large, WinkSize::Small, &[]), None);
    }
}
