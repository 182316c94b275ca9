//! The call at the line (rule 13): a wink is off when any part of it leaves the field of play,
//! so an umpire asked "is it off?" needs how far the wink's edge lies inside the boundary (or
//! beyond it), with its uncertainty, and a verdict only where that decides it.
//!
//! From an overhead frame: the wink's parallax-corrected footprint and a real wink's radius
//! ([`crate::calibrate::Calibration::real_radius`]), against the field of play's boundary where the
//! calibration found it (the mat's edges, and the baselines as painted, rule 3).

use super::{centre_sigma, nearest_first, ruleset_of, size_sigma, Budget, Nearness, DIAMETER_SIGMA_MM, NEAR_MM, REPORT_GAP_MM, TILT_SIGMA_MM, VERDICT_SIGMAS};
use crate::analyze::Analysis;
use crate::detect::Found;
use crate::geometry::{ConvexPolygon, MatPoint, PixelPoint};
use crate::report::position::{Colour, WinkState};
use crate::report::round3;
use crate::rules::RulesetSpec;
use serde::Serialize;

/// One sd of a baseline's place as the calibration takes it, mm: the painted band's centre as
/// measured (baselines painted in place lie 0.10 mm off it at the sd over 1,744 rendered ones,
/// session 32; one painted 1 mm or more off is measured where it is).
pub const BASELINE_SIGMA_MM: f64 = 0.1;

/// How far along the boundary, each way from the point nearest the wink, the evidence picture
/// draws it, mm.
const DRAWN_LINE_MM: f64 = 30.0;

/// One wink's call at the field of play's boundary.
#[derive(Debug, Clone, Serialize)]
pub struct LineCall {
    /// The wink's id.
    pub wink: String,
    /// Its colour, for people.
    pub colour: Colour,
    /// Its centre in the image.
    pub wink_px: [f64; 2],
    /// The ruleset's rule that puts a wink off (13 in etwa-2012).
    pub rule: String,
    /// The boundary nearest it: `mat_edge`, or `baseline` (as painted).
    pub line: &'static str,
    /// How far the wink's footprint edge lies inside the field of play (> 0), or minus how far
    /// it reaches beyond the boundary (< 0), mm.
    pub inside_mm: f64,
    /// One standard deviation of `inside_mm`, mm.
    pub sigma_mm: f64,
    /// What `sigma_mm` is made of, largest first.
    pub sigma_parts: Budget,
    /// `in`, `off` or `too_close_to_call`: `in` when `inside_mm` exceeds [`VERDICT_SIGMAS`]
    /// sigma, `off` when minus it does.
    pub verdict: String,
    /// A call too close: what keeps it from being made and the look that would make it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advice: Option<String>,
    /// The rim's point nearest the boundary, in the image (for the evidence picture).
    #[serde(skip)]
    pub rim_px: PixelPoint,
    /// The boundary near the wink, in the image, as a polyline (for the evidence picture).
    #[serde(skip)]
    pub boundary_px: Vec<PixelPoint>,
    /// A point of the field of play 20 mm in from the boundary's point nearest the wink, in the
    /// image (which side of the boundary is in).
    #[serde(skip)]
    pub field_px: PixelPoint,
}

impl LineCall {
    /// The verdict for `inside_mm` and its sigma.
    pub fn verdict_for(inside_mm: f64, sigma_mm: f64) -> &'static str {
        if inside_mm > VERDICT_SIGMAS * sigma_mm {
            "in"
        } else if -inside_mm > VERDICT_SIGMAS * sigma_mm {
            "off"
        } else {
            "too_close_to_call"
        }
    }

    /// The verdict for `inside_mm` and its sigma's parts, where a wink's size is unsure also
    /// `at_other_size` (its distance were it the other size): a size argued for only weakly is a
    /// two-valued doubt, not a spread, so the call must stand at the other size too (its rim
    /// ~2.9 mm away), with the rest of the sigma.
    pub fn verdict_at_sizes(inside_mm: f64, sigma: &Budget, at_other_size: Option<f64>) -> &'static str {
        let verdict = LineCall::verdict_for(inside_mm, sigma.sigma());
        let Some(other) = at_other_size else { return verdict };
        let rest = Budget::of(&sigma.parts().iter().filter(|p| p.source != "wink_size").map(|p| (p.source, p.mm)).collect::<Vec<_>>());
        if LineCall::verdict_for(other, rest.sigma()) == verdict {
            verdict
        } else {
            "too_close_to_call"
        }
    }

    /// The line in words: `w7 (red): 0.42 ± 0.25 mm inside the mat's edge → in`.
    pub fn text(&self) -> String {
        let (how, side) = if self.inside_mm >= 0.0 { (self.inside_mm, "inside") } else { (-self.inside_mm, "over") };
        let line = if self.line == "baseline" { "the baseline" } else { "the mat's edge" };
        format!("{} ({}): {how:.2} ± {:.2} mm {side} {line} → {}", self.wink, self.colour, self.sigma_mm, self.verdict.replace('_', " "))
    }

    /// For a call too close: the sigma a call would need and what most of it is, with the look
    /// that settles it (rule D.1: an umpire looks from more than one position; along the line,
    /// from low beside the mat, shows whether any part of the wink is beyond it).
    fn advise(&self) -> Option<String> {
        if self.verdict != "too_close_to_call" {
            return None;
        }
        let top = self.sigma_parts.parts().first()?;
        let how = match top.source {
            "outline_fit" | "calibration" => "a camera nearer the mat (more pixels per mm) would tell; else look along the line from low beside the mat",
            "baseline" => "where the painted line lies decides it: look along the line from low beside the mat",
            "tilt" => "it leans on another wink: look along the line from low beside the mat",
            "real_diameter" | "wink_size" => "look along the line from low beside the mat, where the wink's own edge shows",
            _ => "look along the line from low beside the mat",
        };
        let need = self.inside_mm.abs() / VERDICT_SIGMAS;
        let needs = if need >= 0.05 { format!("a call at this distance needs sigma under {need:.2} mm; ") } else { String::new() };
        Some(format!("{needs}most of the {:.2} mm is {} ({:.2} mm): {how}", self.sigma_mm, top.describe(), top.mm))
    }
}

/// The boundaries a line call is made against: the field of play (rule 3; the whole mat for
/// rulesets whose baselines do not bound it) with the baselines `painted` this far off their
/// place (mm, corner order), and the mat's outline, which tells its edges from the baselines
/// ([`which_line`]).
pub fn boundaries(spec: &RulesetSpec, painted: [f64; 4]) -> (ConvexPolygon, ConvexPolygon) {
    let mat = spec.mat.with_painted(painted);
    (spec.field_on(&mat), mat.outline())
}

/// Which line of the field of play's boundary lies nearest footprint centre `c`: `mat_edge`
/// where the mat's outline is as near as the field's boundary, else `baseline`.
pub fn which_line((field, outline): (&ConvexPolygon, &ConvexPolygon), c: MatPoint) -> &'static str {
    if (outline.inside_distance(c) - field.inside_distance(c)).abs() < 1e-6 {
        "mat_edge"
    } else {
        "baseline"
    }
}

/// Every wink in play or off whose footprint's edge lies within [`REPORT_GAP_MM`] of the field
/// of play's boundary, either side, called; with `near`, only winks within [`NEAR_MM`] of that
/// pixel (from their outline, or from the boundary beside them), each tagged with how near
/// (that, then the distance to the rim's point nearest the boundary; px), nearest first.
pub fn line_calls(analysis: &Analysis, near: Option<PixelPoint>) -> Vec<(Option<Nearness>, LineCall)> {
    let spec = ruleset_of(analysis).spec();
    let (field, outline) = boundaries(spec, analysis.calibration.mat.painted_offsets_mm);
    let found = &analysis.detections.found;
    let ppm = analysis.detections.px_per_mm.max(1e-6);
    let misfit = super::misfit_sigma(super::frame_fit_rms_px(found, ppm), ppm);
    let calls = found.iter().filter(|f| matches!(f.state, WinkState::InPlay | WinkState::Off)).filter_map(|f| line_call(analysis, spec, (&field, &outline), f, misfit, near)).collect();
    nearest_first(calls)
}

/// Wink `f`'s call at the field of play's `boundary` (and the mat's outline, to tell its edges
/// from the baselines), when its edge lies within [`REPORT_GAP_MM`] of it and, with `near`,
/// within [`NEAR_MM`] of that pixel. `misfit`: the frame's outline misfit, one sd of a
/// footprint, mm ([`super::misfit_sigma`]).
fn line_call(analysis: &Analysis, spec: &RulesetSpec, (field, outline): (&ConvexPolygon, &ConvexPolygon), f: &Found, misfit: f64, near: Option<PixelPoint>) -> Option<(Option<Nearness>, LineCall)> {
    let (cal, ppm) = (&analysis.calibration, analysis.detections.px_per_mm.max(1e-6));
    let (c, r) = (f.centre_mm?, cal.real_radius(&spec.winks, f.size));
    let to_line = field.inside_distance(c);
    let inside = to_line - r;
    if inside.abs() >= REPORT_GAP_MM {
        return None;
    }
    let line = which_line((field, outline), c);
    let sigma = line_sigma(f, line, ppm, cal.rms_px, size_sigma(f, cal, &spec.winks)).with("outline_misfit", misfit);
    let edge = field.edges().min_by(|a, b| a.closest_point(c).distance(c).total_cmp(&b.closest_point(c).distance(c)))?;
    let at = edge.closest_point(c);
    let out = at - c;
    // Outward, towards the boundary (away from it when the centre lies beyond it).
    let u = if out.norm() > 1e-9 { out * (to_line.signum() / out.norm()) } else { MatPoint::new(1.0, 0.0) };
    let rim_px = cal.mat_to_image_at(c + u * r, f.rest.rim_mid_height(c, r, u))?;
    let along = edge.b - edge.a;
    let boundary_px = boundary_near(cal, field, at, along);
    // Inward: a counter-clockwise edge's direction turned left.
    let field_px = cal.mat_to_image(at + MatPoint::new(-along.y, along.x) * (20.0 / along.norm().max(1e-9)))?;
    let how_near = near.map(|p| ((p.distance(f.centre_px) - f.radius_px).max(0.0).min(boundary_px.iter().map(|q| q.distance(p)).fold(f64::INFINITY, f64::min)), p.distance(rim_px)));
    if how_near.is_some_and(|d| d.0 > NEAR_MM * ppm) {
        return None;
    }
    let at_other_size = (size_sigma(f, cal, &spec.winks) > 0.0).then(|| to_line - cal.real_radius(&spec.winks, f.size.other()));
    let mut call = LineCall {
        wink: f.id.clone(),
        colour: f.colour,
        wink_px: [round3(f.centre_px.x), round3(f.centre_px.y)],
        rule: spec.refs.off.to_string(),
        line,
        inside_mm: round3(inside),
        sigma_mm: round3(sigma.sigma()),
        sigma_parts: sigma.rounded(),
        verdict: LineCall::verdict_at_sizes(inside, &sigma, at_other_size).into(),
        advice: None,
        rim_px,
        boundary_px,
        field_px,
    };
    call.advice = call.advise();
    Some((how_near, call))
}

/// One sd of a wink's distance inside the boundary: its footprint centre's fit along the
/// boundary's normal, its true radius against a real wink's ([`DIAMETER_SIGMA_MM`]), the tilt
/// of a wink resting on another, its size where that is unsure (`size_sd`, from `size_sigma`), the
/// calibration's residual (the boundary's place in the frame), and a baseline's place as painted.
fn line_sigma(f: &Found, line: &str, ppm: f64, rms_px: f64, size_sd: f64) -> Budget {
    Budget::of(&[
        ("outline_fit", centre_sigma(f, ppm)),
        ("real_diameter", DIAMETER_SIGMA_MM),
        ("tilt", if f.level > 0 { TILT_SIGMA_MM } else { 0.0 }),
        ("wink_size", size_sd),
        ("calibration", rms_px / ppm),
        ("baseline", if line == "baseline" { BASELINE_SIGMA_MM } else { 0.0 }),
    ])
}

/// The boundary through `at` (direction `along`, mat frame) for [`DRAWN_LINE_MM`] each way, in
/// the image, cut where it leaves the mat.
fn boundary_near(cal: &crate::calibrate::Calibration, field: &ConvexPolygon, at: MatPoint, along: MatPoint) -> Vec<PixelPoint> {
    let u = along * (1.0 / along.norm().max(1e-9));
    (-12..=12)
        .map(|k| at + u * (DRAWN_LINE_MM * k as f64 / 12.0))
        .filter(|p| field.inside_distance(*p) > -0.5)
        .filter_map(|p| cal.mat_to_image(p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(inside_mm: f64, parts: &[(&'static str, f64)], line: &'static str) -> LineCall {
        let sigma = Budget::of(parts);
        let mut c = LineCall {
            wink: "w7".into(),
            colour: Colour::Red,
            wink_px: [100.0, 50.0],
            rule: "13.1".into(),
            line,
            inside_mm,
            sigma_mm: sigma.sigma(),
            sigma_parts: sigma,
            verdict: LineCall::verdict_for(inside_mm, Budget::of(parts).sigma()).into(),
            advice: None,
            rim_px: PixelPoint::new(100.0, 40.0),
            boundary_px: Vec::new(),
            field_px: PixelPoint::new(100.0, 80.0),
        };
        c.advice = c.advise();
        c
    }

    #[test]
    fn a_line_call_is_made_beyond_two_sigma_either_side_and_says_how_far() {
        assert_eq!(LineCall::verdict_for(0.61, 0.3), "in");
        assert_eq!(LineCall::verdict_for(-0.61, 0.3), "off");
        assert_eq!(LineCall::verdict_for(0.59, 0.3), "too_close_to_call");
        assert_eq!(LineCall::verdict_for(-0.2, 0.3), "too_close_to_call");
        let over = call(-0.9, &[("outline_fit", 0.2), ("real_diameter", 0.2)], "baseline");
        assert_eq!(over.text(), "w7 (red): 0.90 ± 0.28 mm over the baseline → off");
        assert_eq!(over.advice, None);
        let close = call(0.3, &[("outline_fit", 0.25), ("real_diameter", 0.2)], "mat_edge");
        assert_eq!(close.text(), "w7 (red): 0.30 ± 0.32 mm inside the mat's edge → too close to call");
        let advice = close.advice.unwrap_or_default();
        assert!(advice.starts_with("a call at this distance needs sigma under 0.15 mm; most of the 0.32 mm is the outlines' fit (0.25 mm)"), "{advice}");
        assert!(advice.ends_with("look along the line from low beside the mat"), "{advice}");
    }

    /// A wink read large 2.7 mm over the line would be 0.2 mm inside were it small: no call (a
    /// rendered small green wink on green felt by a baseline, held-out nearline-09633, was so).
    #[test]
    fn a_wink_of_unsure_size_is_called_only_if_the_call_stands_at_the_other_size() {
        let sigma = Budget::of(&[("wink_size", 1.09), ("outline_fit", 0.33), ("real_diameter", 0.2)]);
        assert_eq!(LineCall::verdict_for(-2.72, sigma.sigma()), "off");
        assert_eq!(LineCall::verdict_at_sizes(-2.72, &sigma, Some(0.19)), "too_close_to_call");
        // Beyond the line either way: called.
        assert_eq!(LineCall::verdict_at_sizes(-4.0, &sigma, Some(-1.1)), "off");
        // A size not in doubt: the sigma's rule alone.
        assert_eq!(LineCall::verdict_at_sizes(-2.72, &sigma, None), "off");
    }

    #[test]
    fn a_baselines_place_counts_in_the_sigma_and_a_mat_edges_does_not() {
        let f = crate::detect::test_wink(Colour::Blue, MatPoint::new(0.0, 0.0));
        let sources = |line: &str| line_sigma(&f, line, 0.8, 0.3, 0.0).parts().iter().map(|p| p.source).collect::<Vec<_>>();
        assert!(sources("baseline").contains(&"baseline"));
        assert!(!sources("mat_edge").contains(&"baseline"));
        // Its own diameter and the calibration count either way.
        for line in ["baseline", "mat_edge"] {
            assert!(sources(line).contains(&"real_diameter") && sources(line).contains(&"calibration"), "{line}");
        }
    }
}
