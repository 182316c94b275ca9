//! How well calibration finds the mat: found rate, corner error (px), mapping error (mm).

use super::{quantile, Case};
use crate::calibrate::lens::Lens;
use crate::calibrate::{calibrate_frame, CalibrateOptions};
use crate::capture::load_image;
use crate::geometry::{MatPoint, MatSpec};
use nalgebra::Point3;
use std::time::Instant;

/// Height of the points whose footprints measure the parallax correction, in mm.
const PARALLAX_HEIGHT_MM: f64 = 3.0;
/// Spacing of the grid of mat points the mapping error is measured on, in mm.
const GRID_MM: f64 = 50.0;

/// One frame's result.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct FrameResult {
    /// The image's file name.
    pub image: String,
    /// Whether all four mat corners are in the frame (the frames the found rate counts).
    pub corners_in_view: bool,
    /// Whether a hand is over the mat.
    pub hand: bool,
    /// Lens distortion k1 of the truth camera.
    pub k1: f64,
    /// The calibration's error, if it failed.
    pub error: Option<String>,
    /// Largest corner error, in pixels.
    pub corner_max_px: Option<f64>,
    /// All four corner errors, in pixels.
    pub corner_errors_px: Vec<f64>,
    /// RMS mapping error over the mat's surface, in mm.
    pub mapping_rms_mm: Option<f64>,
    /// Residual RMS the calibration reported, in pixels.
    pub rms_px: Option<f64>,
    /// Time to calibrate, in milliseconds.
    pub ms: f64,
    /// How +x was chosen, and whether blue's corner came out other than the truth's (a half
    /// turn of the whole frame is the program's choice, [`crate::calibrate::Calibration::blue_corner`]).
    pub orientation: Option<(String, bool)>,
    /// Largest error of the footprint of points 3 mm above the mat, in mm.
    pub parallax_max_mm: Option<f64>,
    /// Largest difference between the footprint of a point 3 mm up and where the same point on
    /// the mat maps, in mm: the parallax correction alone, without the mapping's own error.
    pub parallax_only_max_mm: Option<f64>,
    /// How far the pot's rim was found from where the calibration puts it, in pixels.
    pub pot_offset_px: Option<f64>,
    /// The camera's height above the mat: the truth's, the calibration's and its stated
    /// one-sigma uncertainty, in mm; and where the calibration's focal length came from.
    pub height_mm: Option<(f64, f64, f64, String)>,
    /// Pixels per mm at the mat's centre (the frame's scale).
    pub px_per_mm: Option<f64>,
    /// Each baseline the calibration placed: how far from where it is painted, mm (the truth's
    /// `baselines_found_mm`, or where rule 2.3.1 puts it).
    pub baseline_errors_mm: Vec<f64>,
}

/// Calibrates every case and measures it against the truth.
/// `lens` (from a chessboard calibration) is used for every frame when given; with
/// `height_off_mm`, every frame is calibrated as if its camera's height had been measured (see
/// [`CalibrateOptions::camera_height_mm`]) and found off the truth by that many mm.
pub fn evaluate(cases: &[Case], mat: MatSpec, lens: Option<Lens>, height_off_mm: Option<f64>, progress: &mut dyn FnMut(usize)) -> Vec<FrameResult> {
    let mut out = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        out.push(one(case, mat, lens.clone(), height_off_mm));
        progress(i + 1);
    }
    out
}

fn one(case: &Case, mat: MatSpec, lens: Option<Lens>, height_off_mm: Option<f64>) -> FrameResult {
    let cam = &case.camera;
    let truth_corners: Vec<_> = mat.corners().iter().map(|c| cam.project(Point3::new(c.x, c.y, 0.0))).collect();
    let corners_in_view = truth_corners.iter().all(|c| c.is_some_and(|c| c.x >= 0.0 && c.y >= 0.0 && c.x <= (cam.width - 1) as f64 && c.y <= (cam.height - 1) as f64));
    let hand = case.truth.extra.get("truth").and_then(|t| t.get("hands")).and_then(|h| h.as_u64()).unwrap_or(0) > 0;
    let mut r = FrameResult {
        image: case.image.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        corners_in_view,
        hand,
        k1: cam.distortion.k1,
        error: None,
        corner_max_px: None,
        corner_errors_px: Vec::new(),
        mapping_rms_mm: None,
        rms_px: None,
        ms: 0.0,
        orientation: None,
        parallax_max_mm: None,
        parallax_only_max_mm: None,
        pot_offset_px: None,
        height_mm: None,
        px_per_mm: None,
        baseline_errors_mm: Vec::new(),
    };
    let img = match load_image(&case.image) {
        Ok(i) => i,
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    let started = Instant::now();
    let cal = calibrate_frame(&img, &CalibrateOptions { mat, corners: None, lens, camera_height_mm: height_off_mm.map(|off| cam.pose.centre_mat().z + off) });
    r.ms = started.elapsed().as_secs_f64() * 1000.0;
    let cal = match cal {
        Ok(c) => c,
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    r.rms_px = Some(cal.rms_px);
    r.pot_offset_px = cal.pot_check.map(|(_, d)| d);
    r.height_mm = cal.camera.as_ref().map(|c| (cam.pose.centre_mat().z, c.height_mm(), c.height_sigma_mm, format!("{:?}", c.focal_source).to_lowercase()));
    r.px_per_mm = match (cal.mat_to_image(MatPoint::new(-50.0, 0.0)), cal.mat_to_image(MatPoint::new(50.0, 0.0))) {
        (Some(a), Some(b)) => Some(a.distance(b) / 100.0),
        _ => None,
    };
    // The mat frame's +x end is the program's choice: compare under the half turn that fits.
    let mut best: Option<(f64, Vec<f64>, bool)> = None;
    for flip in [false, true] {
        let errs: Vec<f64> = (0..4)
            .map(|k| {
                let j = if flip { (k + 2) % 4 } else { k };
                truth_corners[j].map_or(f64::INFINITY, |t| t.distance(cal.corners_px[k]))
            })
            .collect();
        let worst = errs.iter().copied().fold(0.0, f64::max);
        if best.as_ref().is_none_or(|b| worst < b.0) {
            best = Some((worst, errs, flip));
        }
    }
    let Some((worst, errs, flip)) = best else { return r };
    let truth_blue = case.truth.extra.get("truth").and_then(|t| t.get("blue_corner")).and_then(|v| serde_json::from_value(v.clone()).ok()).unwrap_or(crate::geometry::Corner::NegXPosY);
    let blue = if flip { cal.blue_corner.opposite() } else { cal.blue_corner };
    r.orientation = Some((format!("{:?}", cal.orientation).to_lowercase(), blue != truth_blue));
    let painted = case.truth.calibration.as_ref().and_then(|c| c.baselines_found_mm).map_or([0.0; 4], |o| o.map(|v| v.unwrap_or(0.0)));
    r.baseline_errors_mm = (0..4).filter_map(|k| cal.baselines_found[k].map(|d| (d - painted[if flip { (k + 2) % 4 } else { k }]).abs())).collect();
    r.corner_max_px = Some(worst);
    r.corner_errors_px = errs;
    let sign = if flip { -1.0 } else { 1.0 };
    let (hl, hw) = (mat.length_mm / 2.0, mat.width_mm / 2.0);
    let mut sq = 0.0;
    let mut n = 0.0;
    let mut parallax: f64 = 0.0;
    let mut parallax_only: f64 = 0.0;
    let mut x = -hl + GRID_MM / 2.0;
    while x < hl {
        let mut y = -hw + GRID_MM / 2.0;
        while y < hw {
            if let Some(px) = cam.project(Point3::new(x, y, 0.0)) {
                if let Some(m) = cal.image_to_mat(px) {
                    let d = m.distance(MatPoint::new(sign * x, sign * y));
                    sq += d * d;
                    n += 1.0;
                }
            }
            if let Some(px) = cam.project(Point3::new(x, y, PARALLAX_HEIGHT_MM)) {
                if let Some(m) = cal.footprint(px, PARALLAX_HEIGHT_MM) {
                    parallax = parallax.max(m.distance(MatPoint::new(sign * x, sign * y)));
                    if let Some(on_mat) = cam.project(Point3::new(x, y, 0.0)).and_then(|p0| cal.image_to_mat(p0)) {
                        parallax_only = parallax_only.max(m.distance(on_mat));
                    }
                }
            }
            y += GRID_MM;
        }
        x += GRID_MM;
    }
    r.mapping_rms_mm = (n > 0.0).then(|| (sq / n).sqrt());
    r.parallax_max_mm = (n > 0.0).then_some(parallax);
    r.parallax_only_max_mm = (n > 0.0).then_some(parallax_only);
    r
}

/// The figures of issue 4 from a set of results, as a Markdown table.
pub fn table(results: &[FrameResult]) -> String {
    let in_view: Vec<&FrameResult> = results.iter().filter(|r| r.corners_in_view).collect();
    let found = in_view.iter().filter(|r| r.error.is_none()).count();
    let hands: Vec<&&FrameResult> = in_view.iter().filter(|r| r.hand).collect();
    let hands_found = hands.iter().filter(|r| r.error.is_none()).count();
    let mut corners: Vec<f64> = in_view.iter().flat_map(|r| r.corner_errors_px.iter().copied()).collect();
    let mut maps: Vec<f64> = in_view.iter().filter_map(|r| r.mapping_rms_mm).collect();
    let mut times: Vec<f64> = in_view.iter().filter(|r| r.error.is_none()).map(|r| r.ms).collect();
    let pct = |a: usize, b: usize| if b == 0 { f64::NAN } else { 100.0 * a as f64 / b as f64 };
    let mut s = String::new();
    s.push_str("| figure | measured |\n|---|---|\n");
    s.push_str(&format!("| frames (all four corners in view) | {} |\n", in_view.len()));
    s.push_str(&format!("| mat found | {found} of {} ({:.1}%) |\n", in_view.len(), pct(found, in_view.len())));
    s.push_str(&format!("| mat found, hand over the mat | {hands_found} of {} ({:.1}%) |\n", hands.len(), pct(hands_found, hands.len())));
    s.push_str(&format!("| corner error, median / 95th pct / max (px) | {:.3} / {:.3} / {:.3} |\n", quantile(&mut corners, 0.5), quantile(&mut corners, 0.95), quantile(&mut corners, 1.0)));
    s.push_str(&format!("| mapping error RMS over the mat, median / max (mm) | {:.3} / {:.3} |\n", quantile(&mut maps, 0.5), quantile(&mut maps, 1.0)));
    let mut par: Vec<f64> = in_view.iter().filter_map(|r| r.parallax_max_mm).collect();
    s.push_str(&format!("| footprint of a point 3 mm up, worst over the mat: median / max over frames (mm) | {:.3} / {:.3} |\n", quantile(&mut par, 0.5), quantile(&mut par, 1.0)));
    let mut par_only: Vec<f64> = in_view.iter().filter_map(|r| r.parallax_only_max_mm).collect();
    s.push_str(&format!("| parallax correction alone (vs the same point on the mat), worst over the mat: median / max over frames (mm) | {:.3} / {:.3} |\n", quantile(&mut par_only, 0.5), quantile(&mut par_only, 1.0)));
    let mut pots: Vec<f64> = in_view.iter().filter_map(|r| r.pot_offset_px).collect();
    s.push_str(&format!("| pot rim found, and its offset from the calibration's: median / max (px) | {} frames, {:.2} / {:.2} |\n", pots.len(), quantile(&mut pots, 0.5), quantile(&mut pots, 1.0)));
    let by_winks: Vec<&&FrameResult> = in_view.iter().filter(|r| r.orientation.as_ref().is_some_and(|o| o.0 == "unplayedwinks")).collect();
    let right = by_winks.iter().filter(|r| r.orientation.as_ref().is_some_and(|o| !o.1)).count();
    s.push_str(&format!("| +x end from unplayed winks: frames / agreeing with the colours' corners | {} / {right} |\n", by_winks.len()));
    let mut baselines: Vec<f64> = in_view.iter().flat_map(|r| r.baseline_errors_mm.iter().copied()).collect();
    if !baselines.is_empty() {
        s.push_str(&format!("| baselines placed, and how far from where they are painted: median / max (mm) | {}, {:.2} / {:.2} |\n", baselines.len(), quantile(&mut baselines, 0.5), quantile(&mut baselines, 1.0)));
    }
    s.push_str(&format!("| time per frame, median (ms, this build) | {:.0} |\n", quantile(&mut times, 0.5)));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The baselines' row counts every baseline placed in the frames with the mat in view, and
    /// is left out where none was.
    #[test]
    fn the_table_says_how_far_the_placed_baselines_are_from_where_they_are_painted() {
        let frame = |errs: Vec<f64>| FrameResult { corners_in_view: true, corner_errors_px: vec![0.1; 4], mapping_rms_mm: Some(0.1), baseline_errors_mm: errs, ..Default::default() };
        let t = table(&[frame(vec![0.1, 0.3]), frame(vec![0.7]), FrameResult { baseline_errors_mm: vec![9.0], ..Default::default() }]);
        assert!(t.contains("| baselines placed, and how far from where they are painted: median / max (mm) | 3, 0.30 / 0.70 |"), "{t}");
        assert!(!table(&[frame(Vec::new())]).contains("baselines placed"));
    }
}
