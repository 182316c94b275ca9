//! Calibration: finding the mat in a frame and the map between image pixels and mat millimetres.
//!
//! The mat is found roughly (the felt region and four lines round it), then its edges are measured
//! to a fraction of a pixel along their whole length, the painted baselines likewise, and one robust
//! fit of all those points gives the lens distortion (unless a chessboard calibration supplies it)
//! and the homography mat → image.

pub mod chessboard;
pub mod edges;
pub mod file;
pub mod find;
pub mod fit;
pub mod lens;
pub mod pose;

use crate::geometry::{Corner, MatPoint, MatSpec, PixelPoint, REAL_DIAMETER_SHARE};
use crate::report::position::{NominalDiameters, WinkSize};
use edges::LabImage;
use fit::{LensFit, LinePoint, MatLine};
use lens::Lens;
use nalgebra::Matrix3;
use opencv::core::Mat;
use opencv::prelude::*;

/// Spacing of edge samples along the mat's edges and baselines, in pixels.
const EDGE_STEP_PX: f64 = 2.0;
/// Largest acceptable residual RMS of the final fit, in pixels: beyond it the calibration is refused
/// rather than reported as good.
pub const MAX_RMS_PX: f64 = 1.5;
/// Largest tilt of the camera off vertical that calibration accepts, in degrees.
const MAX_TILT_DEG: f64 = 45.0;
/// Least share of the edge samples that must agree with the final fit.
const MIN_KEPT_FRACTION: f64 = 0.5;
/// Least edge points every side of the mat must keep in each fit: with a side unmeasured, the
/// homography and the lens together can fit the other sides' points well and still put the
/// corners anywhere.
const MIN_SIDE_POINTS: usize = 12;
/// Fewest points found on a baseline for the fit to use it (and place it).
const MIN_BASELINE_POINTS: usize = 15;
/// A baseline whose points lie this far (mm, their median) from where rule 2.3.1 puts it, once
/// the mat is fitted with it there, was painted elsewhere. Baselines painted in place lie 0.10 mm
/// off at the sd, 0.71 mm at the most (1,744 on 483 rendered frames); painted 3 or 4 mm off, 1.52
/// mm at the least (368 on 100 frames: the fit that puts them in place is pulled towards them).
const PAINT_OFF_MM: f64 = 1.0;
/// [`shaded_table_shift`]: the least shift, in pixels, of three quarters of an edge's profiles
/// for its points to move. On our renderer's frames (no shade beside the mat; light mixed by the
/// lens, so the shade-free reading of a dark felt beside a bright table lies a little inside the
/// edge) the sides' lower quartiles are at most 0.42 px (figA's potout-03011; over 3,383 sides of
/// figA, fig96, held out 8001, 9101 and 9401, varied looks, flat-drawn, pot-outs, near-line, 4K
/// and other sets); on another renderer's, which darkens the table beside the mat by a third,
/// fading over 2 mm, 139 of its 327 sides are at 0.45–1.5.
const SHADED_MIN_SHIFT_PX: f64 = 0.45;
/// [`shaded_table_shift`]: the least share of an edge's profiles read both ways.
const SHADED_MIN_SHARE: f64 = 0.25;

/// How the mat frame's +x end was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Orientation {
    /// The corners were given in contract order.
    Corners,
    /// Unplayed winks' colours in their corners (blue at (−X,+Y), clockwise seen from above).
    UnplayedWinks,
    /// By the picture: +x towards the image's right (or, for a mat standing on end, its top).
    Image,
}

/// What to calibrate with.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrateOptions {
    /// The mat's size and baselines.
    pub mat: MatSpec,
    /// Corners given by hand, in contract order, in image pixels.
    pub corners: Option<[PixelPoint; 4]>,
    /// A lens from a chessboard calibration; otherwise the lens is fitted to the mat's edges.
    pub lens: Option<Lens>,
    /// The camera's height above the mat as measured, mm (`--camera-height`): with no lens
    /// calibration, it stands in for a table camera's usual height where the frame's perspective
    /// is too weak to tell the height (a camera straight overhead).
    pub camera_height_mm: Option<f64>,
}

/// A frame's calibration: image pixels ↔ mat millimetres.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// Frame width, in pixels.
    pub width: u32,
    /// Frame height, in pixels.
    pub height: u32,
    /// The mat.
    pub mat: MatSpec,
    /// The lens.
    pub lens: Lens,
    /// Homography taking mat mm (x, y, 1) to ideal (undistorted) pixels.
    pub img_from_mat: Matrix3<f64>,
    /// Its inverse.
    pub mat_from_img: Matrix3<f64>,
    /// The mat's corners in the frame, in contract order.
    pub corners_px: [PixelPoint; 4],
    /// Residual RMS of the fit, in pixels.
    pub rms_px: f64,
    /// How +x was chosen.
    pub orientation: Orientation,
    /// Edge points on the mat's border used by the fit.
    pub edge_points: usize,
    /// Points on painted baselines used by the fit.
    pub baseline_points: usize,
    /// Each baseline as found painted: how much further from the mat's centre than rule 2.3.1
    /// puts it, mm along the diagonal, in the contract's corner order; `None` where none was
    /// seen (no baselines, or hidden). `mat` has them (as zero where `None`), so the field of
    /// play is bounded by the lines on the mat (rule 3).
    pub baselines_found: [Option<f64>; 4],
    /// The felt's colour, CIE Lab (OpenCV's 8-bit scale).
    pub felt_lab: [f64; 3],
    /// The camera over the mat, for parallax.
    pub camera: Option<pose::CameraPose>,
    /// The pot's rim as found in the frame: its centre (pixels) and how far that lies from where
    /// the calibration puts the rim, in pixels. `None` when the rim was not found (no pot, or it
    /// is hidden).
    pub pot_check: Option<(PixelPoint, f64)>,
    /// The set's winks as measured (mm across, e.g. with calipers), when stated
    /// (`--wink-diameters`, or a calibration file's `[winks]`): every margin, gap and edge is then
    /// a wink of that size's ([`Calibration::real_radius`]).
    pub wink_diameters: Option<NominalDiameters>,
    /// The corner whose baseline blue's winks start behind; the other colours follow clockwise
    /// seen from above ([`Corner::home_of`], rule 5.2). The rules do not say which corner is
    /// blue's: it is read from the winks behind the baselines where there are any (by the
    /// calibration, or by [`crate::analyze`] from the winks found), else taken as (−X,+Y).
    pub blue_corner: Corner,
}

impl Calibration {
    /// A real wink's radius, mm, for a size whose nominal diameters are `nominal`: the set's own as
    /// stated ([`Calibration::wink_diameters`]), else [`REAL_DIAMETER_SHARE`] of the nominal one.
    /// The frame cannot tell it: where a rim's edge falls depends on how the rim is lit and drawn
    /// (edge-fitted diameters read 0.3 mm over the truth on traced frames and 0.9 mm on flat-drawn
    /// ones), so a set drawn at its nominal size reads every margin ~0.5 mm short unless stated.
    pub fn real_radius(&self, nominal: &NominalDiameters, size: WinkSize) -> f64 {
        self.wink_diameters.map_or(REAL_DIAMETER_SHARE * nominal.of(size), |d| d.of(size)) / 2.0
    }

    /// The mat point (z = 0) seen at image point `px`.
    pub fn image_to_mat(&self, px: PixelPoint) -> Option<MatPoint> {
        fit::apply_inverse(&self.mat_from_img, self.lens.undistort(px))
    }

    /// The image point of mat point `p` on the mat's surface.
    pub fn mat_to_image(&self, p: MatPoint) -> Option<PixelPoint> {
        fit::apply(&self.img_from_mat, p).map(|u| self.lens.distort(u))
    }

    /// The footprint (mat mm) of a point `h_mm` above the mat seen at image point `px`: parallax
    /// corrected with the camera's pose (uncorrected when the pose is unknown).
    pub fn footprint(&self, px: PixelPoint, h_mm: f64) -> Option<MatPoint> {
        Some(self.raised(self.image_to_mat(px)?, h_mm))
    }

    /// The footprint of a point `h_mm` above the mat whose line of sight meets the mat at
    /// `on_mat` ([`Calibration::footprint`] of an image point already taken to the mat).
    pub fn raised(&self, on_mat: MatPoint, h_mm: f64) -> MatPoint {
        match &self.camera {
            Some(c) => c.footprint(on_mat, h_mm),
            None => on_mat,
        }
    }

    /// The same calibration with the mat frame turned half round (+x at the other end of the
    /// mat), for when later evidence settles the orientation: the winks in their home corners.
    pub fn half_turned(&self, orientation: Orientation) -> Calibration {
        let c = &self.corners_px;
        Calibration {
            img_from_mat: self.img_from_mat * half_turn(),
            mat_from_img: half_turn() * self.mat_from_img,
            corners_px: [c[2], c[3], c[0], c[1]],
            mat: self.mat.with_painted(half_turned_corners(self.mat.painted_offsets_mm)),
            baselines_found: half_turned_corners(self.baselines_found),
            orientation,
            camera: self.camera.as_ref().map(|p| p.half_turned()),
            blue_corner: self.blue_corner.opposite(),
            ..self.clone()
        }
    }

    /// The image point of mat point `p` at height `z_mm` above the mat: where the camera's line of
    /// sight through it meets the mat, mapped by the homography (the exact inverse of
    /// [`Calibration::footprint`], so what is fitted and what is drawn agree).
    pub fn mat_to_image_at(&self, p: MatPoint, z_mm: f64) -> Option<PixelPoint> {
        match &self.camera {
            Some(c) if z_mm != 0.0 && z_mm < c.height_mm() => {
                let n = c.nadir();
                self.mat_to_image(n + (p - n) * (1.0 / (1.0 - z_mm / c.height_mm())))
            }
            _ => self.mat_to_image(p),
        }
    }
}

/// Calibrates one BGR frame.
pub fn calibrate_frame(bgr: &Mat, opts: &CalibrateOptions) -> Result<Calibration, CalibrateError> {
    // With the corners given, a failed fit is about them, not a request for them.
    calibrate_from(bgr, opts).map_err(|e| match (e, opts.corners.is_some()) {
        (CalibrateError::NoFit { why }, true) => CalibrateError::NotAtCorners { why },
        // Edges that do not fit where many of the rough search's rays ran off the frame: the mat
        // most likely runs off it (a fourth side was taken from a baseline or a row of winks).
        (CalibrateError::NoFit { .. }, false) if find::rough(bgr).is_ok_and(|r| r.rays_off_frame) => CalibrateError::CutOff,
        (e, _) => e,
    })
}

fn calibrate_from(bgr: &Mat, opts: &CalibrateOptions) -> Result<Calibration, CalibrateError> {
    let (w, h) = (bgr.cols() as u32, bgr.rows() as u32);
    let img = LabImage::new(bgr)?;
    let mat = opts.mat;
    let mat_corners = mat.corners();
    let (start, felt_lab, orientation) = match opts.corners {
        Some(c) => (c, felt_near_centre(&img, &c), Orientation::Corners),
        None => {
            let r = find::rough(bgr)?;
            (assign_corners(&r.corners), r.felt_lab, Orientation::Image)
        }
    };
    let lines: Vec<MatLine> = (0..4).map(|k| MatLine::edge(mat_corners[k], mat_corners[(k + 1) % 4])).collect();
    let g0 = fit::homography_from_4(&mat_corners, &start).ok_or_else(|| CalibrateError::NoFit { why: "the corners are degenerate".into() })?;
    let lens_fit = if opts.lens.is_some() { LensFit::Fixed } else { LensFit::Division2 };
    let lens0 = opts.lens.clone().unwrap_or(Lens::Pinhole);

    // Pass 1: along the straight chords between the rough corners, searching widely (the edges
    // bow with lens distortion and the rough corners are a few pixels off).
    let reach1 = (0.015 * w.max(h) as f64).max(12.0);
    let mut pts = Vec::new();
    for k in 0..4 {
        let (a, b) = (start[k], start[(k + 1) % 4]);
        let n = outward(a, b, &start);
        let count = probe_count(&img, a, b) / 2;
        for i in 0..count {
            let t = 0.04 + 0.92 * i as f64 / count as f64;
            let p = a + (b - a) * t;
            if let Some(e) = edges::first_step_from_inside(&img, p, n, reach1) {
                pts.push(LinePoint { px: e, line: k });
            }
        }
    }
    let f1 = fit::fit(&pts, &lines, &g0, &lens0, lens_fit, w, h, 1.0, 2).ok_or_else(|| CalibrateError::NoFit { why: "too few edge points".into() })?;
    every_side_measured(&f1)?;

    // Pass 2: along the fitted (curved) edges, close in; and across the baselines.
    let mut pts = edge_points(&img, &f1, &mat, 5.0);
    let border = pts.len();
    let mut all_lines = lines.clone();
    let mut baseline_points = 0;
    for (k, b) in mat.baselines().iter().enumerate() {
        let found = baseline_points_of(&img, &f1, b.segment.a, b.segment.b, b.outward, 4 + k);
        if found.len() >= MIN_BASELINE_POINTS {
            baseline_points += found.len();
            pts.extend(found);
        }
        all_lines.push(MatLine::painted(b.segment.a, b.segment.b));
    }
    // The final fit also places the centre of distortion (the first pass's bowed chords are too
    // rough for it), and takes Brown's radial model, the lens's usual description (k1, k2), from
    // the first pass's division model (mapping RMS over figA's 228 frames, median / max: 0.104 /
    // 1.092 mm with the division model, 0.091 / 1.108 with this; its k1 = −0.28 frame 1.09 → 0.38).
    let lens_fit2 = if lens_fit == LensFit::Division2 { LensFit::Radial2Centre } else { lens_fit };
    let fit2 = |lines: &[MatLine], from: &fit::Fit| fit::fit(&pts, lines, &from.img_from_mat, &from.lens, lens_fit2, w, h, 0.5, 3).ok_or_else(|| CalibrateError::NoFit { why: "too few edge points".into() });
    // The baselines first taken where rule 2.3.1 puts them: their bands' centres then also hold
    // the mat's scale against the edges' own small biases. One whose points lie PAINT_OFF_MM or
    // more from there (their median) was painted elsewhere: the fit is repeated, from where the
    // first ended, with its offset a parameter of its own.
    let in_place: Vec<MatLine> = all_lines.iter().map(|l| MatLine::edge(l.a, l.b)).collect();
    let mut f2 = fit2(&in_place, &f1)?;
    let off = baselines_off(&pts, &f2, &mat);
    let lines2: Vec<MatLine> = all_lines.iter().enumerate().map(|(k, l)| if k >= 4 && off[k - 4].is_some_and(|d| d.abs() >= PAINT_OFF_MM) { *l } else { in_place[k] }).collect();
    if lines2 != in_place {
        f2 = fit2(&lines2, &f2)?;
    }
    every_side_measured(&f2)?;
    if f2.rms_px > MAX_RMS_PX || (f2.kept as f64) < MIN_KEPT_FRACTION * f2.total as f64 {
        return Err(CalibrateError::NoFit { why: format!("the edges do not fit a mat ({:.1} px RMS, {} of {} points)", f2.rms_px, f2.kept, f2.total) });
    }
    let mut g = f2.img_from_mat;
    // Each baseline's offset, where enough of its points were kept to place it.
    let mut baselines_found: [Option<f64>; 4] = std::array::from_fn(|k| (f2.kept_per_line.get(4 + k).is_some_and(|&n| n >= MIN_BASELINE_POINTS)).then(|| f2.offsets_mm[4 + k]));
    let mut orientation = orientation;
    // Where blue's winks start, from the winks behind the baselines; with the corners given, the
    // mat frame is theirs and only blue's corner is read.
    let blue = orient_by_unplayed(&img, &g, &f2.lens, &mat, felt_lab);
    let mut blue_corner = Corner::NegXPosY;
    if orientation == Orientation::Corners {
        blue_corner = blue.unwrap_or(blue_corner);
    } else {
        // Blue's corner at the −x end: the mat frame is turned half round when it lies at +x.
        let flip = match blue {
            Some(b) => {
                orientation = Orientation::UnplayedWinks;
                let flip = b.signs().0 > 0.0;
                blue_corner = if flip { b.opposite() } else { b };
                flip
            }
            None => !points_right(&g),
        };
        if flip {
            g *= half_turn();
            baselines_found = half_turned_corners(baselines_found);
        }
    }
    let mat = mat.with_painted(baselines_found.map(|o| o.unwrap_or(0.0)));
    let mat_from_img = g.try_inverse().ok_or_else(|| CalibrateError::NoFit { why: "singular homography".into() })?;
    let corners_px = mat_corners.map(|c| fit::apply(&g, c).map(|u| f2.lens.distort(u)).unwrap_or(PixelPoint::new(f64::NAN, f64::NAN)));
    if corners_px.iter().any(|c| !c.is_finite() || c.x < 0.0 || c.y < 0.0 || c.x > (w - 1) as f64 || c.y > (h - 1) as f64) {
        return Err(CalibrateError::CutOff);
    }
    let principal = match f2.lens {
        Lens::OpenCv { cx, cy, .. } => PixelPoint::new(cx, cy),
        // The fitted centre of distortion: the lens's axis (parallax alone, worst point of each
        // frame, median over 228 frames: 0.087 mm with the image's centre, 0.061 with this).
        Lens::Division { centre, .. } | Lens::Radial { centre, .. } => PixelPoint::new(centre[0], centre[1]),
        _ => PixelPoint::new(w as f64 / 2.0, h as f64 / 2.0),
    };
    let prior = opts.camera_height_mm.map_or(pose::HeightPrior::Table, |h| pose::HeightPrior::Measured { height_mm: h, sigma_mm: pose::MEASURED_HEIGHT_SIGMA_MM });
    let camera = pose::pose(&g, principal, w, h, f2.lens.intrinsics().map(|(fx, fy, _, _)| (fx + fy) / 2.0), &mat.corners(), prior);
    // A homography no real camera over the mat could give (a mat seen from below, or nearly edge
    // on) means the edges were matched wrongly: refuse it rather than report it.
    if camera.as_ref().is_some_and(|c| c.height_mm() <= 0.0 || c.tilt_deg > MAX_TILT_DEG) {
        return Err(CalibrateError::NoFit { why: "the fitted mat implies an impossible camera pose".into() });
    }
    let pot_check = camera.as_ref().and_then(|c| find_pot_rim(&img, c, &f2.lens, &POT_RIM));
    Ok(Calibration {
        pot_check,
        camera,
        width: w,
        height: h,
        mat,
        lens: f2.lens,
        img_from_mat: g,
        mat_from_img,
        corners_px,
        rms_px: f2.rms_px,
        orientation,
        edge_points: border.min(f2.kept),
        baseline_points,
        baselines_found,
        felt_lab,
        wink_diameters: None,
        blue_corner,
    })
}

/// Refuses a fit in which some side of the mat kept too few edge points to be measured.
fn every_side_measured(f: &fit::Fit) -> Result<(), CalibrateError> {
    match f.kept_per_line.iter().take(4).position(|&n| n < MIN_SIDE_POINTS) {
        Some(k) => Err(CalibrateError::NoFit { why: format!("side {} of the mat shows no clear edge ({} points)", k + 1, f.kept_per_line[k]) }),
        None => Ok(()),
    }
}

/// The colours in the order their corners go, clockwise seen from above from blue's (5.2).
const HOME_COLOURS: [WinkHue; 4] = [WinkHue::Blue, WinkHue::Green, WinkHue::Red, WinkHue::Yellow];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WinkHue {
    Blue,
    Green,
    Red,
    Yellow,
}

/// Least chroma difference from the felt (Lab a, b, 8-bit scale) for a pixel to count as a wink's.
const WINK_CHROMA: f64 = 22.0;
/// Least wink pixels (samples 4 mm apart) for a corner's colour to count.
const MIN_CORNER_SAMPLES: usize = 5;

/// The corner blue's winks start behind, in the mat frame of homography `g`, as the unplayed
/// winks' colours in the corners say (at least two corners agreeing, no other corner said as
/// often), or `None` (too few winks, or they disagree).
fn orient_by_unplayed(img: &LabImage, g: &Matrix3<f64>, lens: &Lens, mat: &MatSpec, felt: [f64; 3]) -> Option<Corner> {
    let mut seen: [Option<WinkHue>; 4] = [None; 4];
    for (k, b) in mat.baselines().iter().enumerate() {
        let mut votes = [0usize; 4];
        let corner = mat.corner(b.corner);
        let step = 4.0;
        let mut x = -200.0;
        while x <= 200.0 {
            let mut y = -200.0;
            while y <= 200.0 {
                let m = corner + MatPoint::new(x, y);
                y += step;
                if !(b.depth_behind(m) > 3.0 && m.x.abs() < mat.length_mm / 2.0 - 3.0 && m.y.abs() < mat.width_mm / 2.0 - 3.0) {
                    continue;
                }
                let Some(px) = fit::apply(g, m).map(|u| lens.distort(u)) else { continue };
                let Some(c) = img.at(px.x, px.y) else { continue };
                let (da, db) = (c[1] - felt[1], c[2] - felt[2]);
                if (da * da + db * db).sqrt() < WINK_CHROMA {
                    continue;
                }
                let hue = (c[2] - 128.0).atan2(c[1] - 128.0).to_degrees().rem_euclid(360.0);
                let protos = [(WinkHue::Blue, 285.0), (WinkHue::Green, 150.0), (WinkHue::Red, 35.0), (WinkHue::Yellow, 90.0)];
                if let Some((i, _)) = protos
                    .iter()
                    .enumerate()
                    .map(|(i, (_, h))| (i, ((hue - h + 540.0) % 360.0 - 180.0).abs()))
                    .filter(|(_, d)| *d < 35.0)
                    .min_by(|a, b| a.1.total_cmp(&b.1))
                {
                    votes[i] += 1;
                }
            }
            x += step;
        }
        let (best, n) = votes.iter().enumerate().max_by_key(|(_, n)| **n).map(|(i, n)| (i, *n))?;
        if n >= MIN_CORNER_SAMPLES {
            seen[k] = Some([WinkHue::Blue, WinkHue::Green, WinkHue::Red, WinkHue::Yellow][best]);
        }
    }
    // Blue's corner `b`: each corner seen holding the colour `b` gives it (clockwise, 5.2).
    let score = |b: Corner| Corner::ALL.iter().zip(&seen).filter(|(&k, s)| **s == Some(HOME_COLOURS[(k.index() + 4 - b.index()) % 4])).count();
    let scores = Corner::ALL.map(score);
    let best = (0..4).max_by_key(|&k| scores[k])?;
    (scores[best] >= 2 && (0..4).all(|k| k == best || scores[k] < scores[best])).then_some(Corner::ALL[best])
}

/// The pot's rim: height and radius, in mm (etwa-2012 2.4: 38 mm high, 48 mm across the top).
const POT_RIM: (f64, f64) = (38.0, 24.0);

/// Finds the pot's rim round where the calibration puts it: radial edge probes from the predicted
/// rim centre, a circle fitted to what they find. Returns the found centre and its distance from
/// the prediction, in pixels.
fn find_pot_rim(img: &LabImage, cam: &pose::CameraPose, lens: &Lens, rim: &(f64, f64)) -> Option<(PixelPoint, f64)> {
    let (h, r) = *rim;
    let centre = lens.distort(cam.project(MatPoint::new(0.0, 0.0), h)?);
    let edge = lens.distort(cam.project(MatPoint::new(r, 0.0), h)?);
    let r_px = centre.distance(edge);
    if r_px < 4.0 {
        return None;
    }
    let mut pts = Vec::new();
    for k in 0..48 {
        let a = k as f64 / 48.0 * std::f64::consts::TAU;
        let n = (a.cos(), a.sin());
        let p = PixelPoint::new(centre.x + n.0 * r_px, centre.y + n.1 * r_px);
        if let Some(e) = edges::step_edge(img, p, n, 0.3 * r_px) {
            pts.push(e);
        }
    }
    if pts.len() < 16 {
        return None;
    }
    let (found, _) = crate::geometry::plane::fit_circle(&pts)?;
    Some((found, found.distance(centre)))
}

/// How well a saved calibration still fits a frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitCheck {
    /// Share of the probes along the mat's edges that found an edge.
    pub found: f64,
    /// Median distance of the found edges from where the calibration puts them, in pixels.
    pub median_px: f64,
}

impl FitCheck {
    /// Whether the calibration still fits: most edges found, within a pixel of where expected.
    pub fn fits(&self) -> bool {
        self.found >= 0.6 && self.median_px <= 1.0
    }
}

/// Probes per side of the mat for [`check_fit`]: enough for [`shaded_table_shift`] to judge a
/// side (20 profiles read both ways at the least).
const CHECK_PROBES_PER_SIDE: usize = 32;

/// A cheap check that `cal` still fits `bgr` (the mat or the camera has not moved): a few dozen
/// short edge probes where the calibration says the mat's edges are.
pub fn check_fit(bgr: &Mat, cal: &Calibration) -> Result<FitCheck, CalibrateError> {
    if bgr.cols() as u32 != cal.width || bgr.rows() as u32 != cal.height {
        return Ok(FitCheck { found: 0.0, median_px: f64::INFINITY });
    }
    let img = LabImage::new(bgr)?;
    let c = cal.mat.corners();
    let mut dists = Vec::new();
    let mut probes = 0;
    for k in 0..4 {
        let (a, b) = (c[k], c[(k + 1) % 4]);
        let mid = a + (b - a) * 0.5;
        let out = mid * (1.0 / mid.norm());
        let side: Vec<(PixelPoint, (f64, f64))> = (0..CHECK_PROBES_PER_SIDE)
            .filter_map(|i| {
                let m = a + (b - a) * ((i as f64 + 0.5) / CHECK_PROBES_PER_SIDE as f64);
                let (p, q) = (cal.mat_to_image(m)?, cal.mat_to_image(m + out * 10.0)?);
                let d = q - p;
                Some((p, (d.x / d.norm(), d.y / d.norm())))
            })
            .collect();
        probes += side.len();
        dists.extend(side_edges(&img, &side, 6.0).into_iter().map(|(i, e)| e.distance(side[i].0)));
    }
    dists.sort_by(f64::total_cmp);
    let median_px = dists.get(dists.len() / 2).copied().unwrap_or(f64::INFINITY);
    Ok(FitCheck { found: dists.len() as f64 / probes.max(1) as f64, median_px })
}

/// How far each baseline's points lie behind where `mat` puts it, mm (their median), as fit `f`
/// maps them; `None` for a baseline with no points.
fn baselines_off(pts: &[LinePoint], f: &fit::Fit, mat: &MatSpec) -> [Option<f64>; 4] {
    let Some(g_inv) = f.img_from_mat.try_inverse() else { return [None; 4] };
    let baselines = mat.baselines();
    std::array::from_fn(|k| {
        let mut d: Vec<f64> = pts.iter().filter(|p| p.line == 4 + k).filter_map(|p| fit::apply_inverse(&g_inv, f.lens.undistort(p.px))).map(|m| baselines[k].depth_behind(m)).collect();
        if d.is_empty() {
            return None;
        }
        d.sort_by(f64::total_cmp);
        Some(d[d.len() / 2])
    })
}

/// Per-corner values (contract order) in the mat frame turned half round: each corner is the
/// opposite one's.
fn half_turned_corners<T: Copy>(v: [T; 4]) -> [T; 4] {
    [v[2], v[3], v[0], v[1]]
}

/// A half turn of the mat frame: (x, y) → (−x, −y).
fn half_turn() -> Matrix3<f64> {
    Matrix3::new(-1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0)
}

/// Whether the mat's +x axis points to the image's right (or, for a mat standing on end, up).
fn points_right(g: &Matrix3<f64>) -> bool {
    let (Some(o), Some(x)) = (fit::apply(g, MatPoint::new(0.0, 0.0)), fit::apply(g, MatPoint::new(100.0, 0.0))) else { return true };
    let (dx, dy) = (x.x - o.x, x.y - o.y);
    if dx.abs() >= 0.3 * dy.abs() {
        dx > 0.0
    } else {
        dy < 0.0
    }
}

/// Orders rough corners (found in order round the outline, clockwise on screen) so that the first
/// side is a long one: the contract's order up to a half turn.
fn assign_corners(c: &[PixelPoint; 4]) -> [PixelPoint; 4] {
    let side = |k: usize| c[k].distance(c[(k + 1) % 4]);
    if side(0) + side(2) >= side(1) + side(3) {
        *c
    } else {
        [c[1], c[2], c[3], c[0]]
    }
}

/// The unit normal of side a→b pointing away from the quadrilateral's centre.
fn outward(a: PixelPoint, b: PixelPoint, quad: &[PixelPoint; 4]) -> (f64, f64) {
    let centre = PixelPoint::new(quad.iter().map(|p| p.x).sum::<f64>() / 4.0, quad.iter().map(|p| p.y).sum::<f64>() / 4.0);
    let d = b - a;
    let len = d.norm();
    let n = (-d.y / len, d.x / len);
    let mid = a + d * 0.5;
    if (mid.x - centre.x) * n.0 + (mid.y - centre.y) * n.1 >= 0.0 {
        n
    } else {
        (-n.0, -n.1)
    }
}

/// How many probes along the image segment `pa`–`pb`, one every [`EDGE_STEP_PX`]; none when the
/// segment runs far outside the frame (a degenerate fit), so a bad start costs nothing.
fn probe_count(img: &LabImage, pa: PixelPoint, pb: PixelPoint) -> usize {
    let (w, h) = (img.width() as f64, img.height() as f64);
    let far = |p: PixelPoint| !(p.x > -w && p.x < 2.0 * w && p.y > -h && p.y < 2.0 * h);
    if far(pa) || far(pb) {
        return 0;
    }
    (pa.distance(pb) / EDGE_STEP_PX) as usize
}

/// Edge points along the fitted mat edges, searched within ±`reach` pixels.
fn edge_points(img: &LabImage, f: &fit::Fit, mat: &MatSpec, reach: f64) -> Vec<LinePoint> {
    let c = mat.corners();
    let to_img = |m: MatPoint| fit::apply(&f.img_from_mat, m).map(|u| f.lens.distort(u));
    let mut pts = Vec::new();
    for k in 0..4 {
        let (a, b) = (c[k], c[(k + 1) % 4]);
        let (Some(pa), Some(pb)) = (to_img(a), to_img(b)) else { continue };
        let count = probe_count(img, pa, pb);
        // Outward in the mat frame: away from the centre.
        let mid = a + (b - a) * 0.5;
        let out = mid * (1.0 / mid.norm());
        let probes: Vec<(PixelPoint, (f64, f64))> = (0..count)
            .filter_map(|i| {
                let m = a + (b - a) * (0.03 + 0.94 * i as f64 / count as f64);
                let (p, q) = (to_img(m)?, to_img(m + out * 10.0)?);
                let d = q - p;
                Some((p, (d.x / d.norm(), d.y / d.norm())))
            })
            .collect();
        pts.extend(side_edges(img, &probes, reach).into_iter().map(|(_, e)| LinePoint { px: e, line: k }));
    }
    pts
}

/// The edge found across each of one side's `probes` (a point where the side should be and its
/// outward normal), within ±`reach` pixels: (the probe's index, the edge). Each is the brightness
/// crossing ([`edges::step_edge_shaded_outside`]), all moved in by the side's
/// [`shaded_table_shift`], so that a table shaded beside the mat reads the same to the
/// calibration and to [`check_fit`].
fn side_edges(img: &LabImage, probes: &[(PixelPoint, (f64, f64))], reach: f64) -> Vec<(usize, PixelPoint)> {
    let mut usual = Vec::new();
    let mut shifts = Vec::new();
    for (i, &(p, n)) in probes.iter().enumerate() {
        let r = edges::step_edge_shaded_outside(img, p, n, reach);
        let Some(e) = r.usual else { continue };
        usual.push((i, e));
        shifts.extend(r.shade_free.map(|f| (e.x - f.x) * n.0 + (e.y - f.y) * n.1));
    }
    let shift = shaded_table_shift(&mut shifts, usual.len());
    usual.into_iter().map(|(i, e)| (i, PixelPoint::new(e.x - shift * probes[i].1 .0, e.y - shift * probes[i].1 .1))).collect()
}

/// How far out, in pixels, brightness puts one edge of the mat beyond where the felt ends: the
/// median of `shifts` (each profile's brightness crossing less its shade-free crossing, outward;
/// see [`edges::step_edge_shaded_outside`]) when the table is shaded beside the mat, else 0. A
/// table darkened over the first millimetres beside the felt (the felt's own thickness, a
/// contact line) moves the brightness crossing out by the shading's width; colour alone is blind
/// to it, but is read the noisier under JPEG's half-resolution colour, so the points stay the
/// brightness crossings, moved in by that median. It counts when at least
/// [`SHADED_MIN_SHARE`] of the side's `usual` profiles (and 20) were read both ways and three
/// quarters of those shifts are [`SHADED_MIN_SHIFT_PX`] or more.
fn shaded_table_shift(shifts: &mut [f64], usual: usize) -> f64 {
    if shifts.len() < 20 || (shifts.len() as f64) < SHADED_MIN_SHARE * usual as f64 {
        return 0.0;
    }
    shifts.sort_by(f64::total_cmp);
    if shifts[shifts.len() / 4] >= SHADED_MIN_SHIFT_PX {
        shifts[shifts.len() / 2]
    } else {
        0.0
    }
}

/// Points on a painted baseline from mat point `a` to `b` (the baseline of mat line `line`).
fn baseline_points_of(img: &LabImage, f: &fit::Fit, a: MatPoint, b: MatPoint, outward: MatPoint, line: usize) -> Vec<LinePoint> {
    let to_img = |m: MatPoint| fit::apply(&f.img_from_mat, m).map(|u| f.lens.distort(u));
    let (Some(pa), Some(pb)) = (to_img(a), to_img(b)) else { return Vec::new() };
    let px_per_mm = pa.distance(pb) / a.distance(b);
    let count = probe_count(img, pa, pb);
    let mut pts = Vec::new();
    for i in 0..count {
        let t = 0.08 + 0.84 * i as f64 / count as f64;
        let m = a + (b - a) * t;
        let (Some(p), Some(q)) = (to_img(m), to_img(m + outward * 10.0)) else { continue };
        let d = q - p;
        let n = (d.x / d.norm(), d.y / d.norm());
        // Paint is 2–6 mm wide; search a little beyond.
        let reach = 5.0 + 6.0 * px_per_mm;
        if let Some(e) = edges::band_centre(img, p, n, reach, 1.0, 8.0 * px_per_mm + 2.0) {
            pts.push(LinePoint { px: e, line });
        }
    }
    pts
}

/// The felt's colour near the middle of a quadrilateral.
fn felt_near_centre(img: &LabImage, c: &[PixelPoint; 4]) -> [f64; 3] {
    let centre = PixelPoint::new(c.iter().map(|p| p.x).sum::<f64>() / 4.0, c.iter().map(|p| p.y).sum::<f64>() / 4.0);
    let r = c[0].distance(c[2]) * 0.15;
    let mut acc = [0.0; 3];
    let mut n: f64 = 0.0;
    for k in 0..64 {
        let a = k as f64 / 64.0 * std::f64::consts::TAU;
        if let Some(v) = img.at(centre.x + r * a.cos(), centre.y + r * a.sin()) {
            for ch in 0..3 {
                acc[ch] += v[ch];
            }
            n += 1.0;
        }
    }
    acc.map(|v| v / n.max(1.0))
}


/// Why a frame could not be calibrated.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    /// Nothing in the frame looks like a mat.
    #[error("no mat found: {why}; give its corners with --corners \"x,y;x,y;x,y;x,y\"")]
    NoMat {
        /// What was missing.
        why: String,
    },
    /// Two felt regions big enough to be mats.
    #[error("two candidate mats in the frame; give the right one's corners with --corners \"x,y;x,y;x,y;x,y\"")]
    TwoMats,
    /// The mat runs off the frame.
    #[error("the mat is cut off by the frame's edge; move the camera so all four corners show, or give them with --corners")]
    CutOff,
    /// The edges could not be fitted.
    #[error("the mat's edges could not be fitted ({why}); give its corners with --corners \"x,y;x,y;x,y;x,y\"")]
    NoFit {
        /// What went wrong.
        why: String,
    },
    /// The chessboard shots do not calibrate the lens.
    #[error("lens calibration failed: {why}")]
    Chessboard {
        /// What went wrong.
        why: String,
    },
    /// Corners were given, but the mat's edges are not where they say.
    #[error("no mat's edges along the given corners ({why}); check --corners: the mat's corners in pixels, in the order (-X,+Y), (+X,+Y), (+X,-Y), (-X,-Y)")]
    NotAtCorners {
        /// What went wrong.
        why: String,
    },
    /// OpenCV failed.
    #[error("image processing failed: {0}")]
    OpenCv(#[from] opencv::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edge_moves_in_only_when_most_of_its_profiles_say_the_table_is_shaded() {
        // Three quarters of 100 profiles read the felt ending 0.6–1.2 px inside the brightness
        // crossing: the edge moves in by their median.
        let mut shifts: Vec<f64> = (0..100).map(|k| if k < 25 { -0.2 } else { 0.6 + 0.6 * (k - 25) as f64 / 75.0 }).collect();
        let s = shaded_table_shift(&mut shifts, 120);
        assert!((s - 0.8).abs() < 0.05, "{s}");
        // A median past the least shift, but a quarter of the profiles under it: not moved.
        let mut shifts: Vec<f64> = (0..100).map(|k| if k < 30 { 0.0 } else { 1.0 }).collect();
        assert_eq!(shaded_table_shift(&mut shifts, 120), 0.0);
        // Too few profiles read both ways, of too many.
        assert_eq!(shaded_table_shift(&mut [1.0; 19], 19), 0.0);
        assert_eq!(shaded_table_shift(&mut [1.0; 30], 200), 0.0);
        // Shifted inwards: the felt seen beyond the brightness crossing is not a shaded table.
        assert_eq!(shaded_table_shift(&mut [-1.0; 100], 100), 0.0);
    }
}
