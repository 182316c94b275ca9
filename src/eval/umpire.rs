//! How good the umpire's calls are, against the renderer's truth: verdicts right when given,
//! uncertainty honest (|true − measured| ≤ 2 sigma), and how often it declines to call.
//!
//! True pairs are those of seen winks (not potted) with a true margin from −2 to +2 mm: the
//! truth's squop margin where it has one, else the flat footprints' (sum of radii less the centre
//! distance). Measured pairs are matched to true ones by both winks' image positions.

use super::Case;
use crate::analyze::{analyze_frame, AnalyzeOptions};
use crate::capture::load_image;
use crate::geometry::PixelPoint;
use crate::report::position::{NominalDiameters, Position, WinkState};
use crate::rules::Ruleset;
use crate::umpire::{boundaries, call_on_views, closeup, line_calls, overhead, which_line, Budget, Closeup, LineCall, Pair};

/// One matched pair.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PairResult {
    /// The image.
    pub image: String,
    /// Whether it is a close-up.
    pub closeup: bool,
    /// True margin, mm.
    pub true_mm: f64,
    /// True upper wink is the measured `a` (`Some(true)`), `b`, or no squop (`None`).
    pub true_upper_is_a: Option<bool>,
    /// Measured margin, mm.
    pub margin_mm: f64,
    /// Its sigma, mm.
    pub sigma_mm: f64,
    /// What the sigma is made of.
    pub sigma_parts: Budget,
    /// The verdict.
    pub verdict: String,
    /// Whether the verdict, when given, is right.
    pub right: Option<bool>,
    /// The stacking's confidence in the upper wink.
    pub upper_confidence: Option<f64>,
    /// What named it.
    pub upper_evidence: Option<String>,
    /// Close-ups: the share of felt seen between the two (`None` where it could not be read).
    pub felt_between: Option<f64>,
    /// Overhead frames: the frame's scale on the mat, pixels per mm (the truth's mat length in
    /// pixels over its length in mm).
    pub px_per_mm: Option<f64>,
    /// Close-ups: how many photos the call was made on (1, or with the photo's other views,
    /// `<stem>-vN`, beside it, all of them).
    pub photos: usize,
}

/// One wink of an overhead frame within 3 mm of the field of play's boundary, by the truth, and
/// the umpire's call on it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LineResult {
    /// The image.
    pub image: String,
    /// How far the wink's footprint edge truly lies inside the field of play (< 0: beyond), mm.
    pub true_mm: f64,
    /// The call's distance, mm; `None` where no call was made on the wink (not found, or
    /// measured 3 mm or more from the line).
    pub inside_mm: Option<f64>,
    /// Its sigma, mm.
    pub sigma_mm: Option<f64>,
    /// `in`, `off` or `too_close_to_call`; `None` where no call was made.
    pub verdict: Option<String>,
    /// Whether the verdict, when given, is right.
    pub right: Option<bool>,
    /// `mat_edge` or `baseline`, by the truth.
    pub line: &'static str,
}

/// Every wink of the truth in play or off whose footprint's edge lies within
/// [`crate::umpire::REPORT_GAP_MM`] of the field of play's boundary (the baselines where the
/// truth says they are painted): its image centre, how far inside (mm) and which line.
fn truth_lines(truth: &Position, ruleset: Ruleset) -> Vec<(PixelPoint, f64, &'static str)> {
    let painted = truth.calibration.as_ref().and_then(|c| c.baselines_found_mm).map_or([0.0; 4], |o| o.map(|v| v.unwrap_or(0.0)));
    let (field, outline) = boundaries(ruleset.spec(), painted);
    truth
        .winks
        .iter()
        .filter(|w| matches!(w.state, WinkState::InPlay | WinkState::Off) && w.level == Some(0))
        .filter_map(|w| {
            let (px, c, d) = (w.centre_px?, w.centre_mm?, w.diameter_mm?);
            let inside = field.inside_distance(c) - d / 2.0;
            (inside.abs() < crate::umpire::REPORT_GAP_MM).then_some((px, inside, which_line((&field, &outline), c)))
        })
        .collect()
}

/// Matches one frame's line calls to its truth's winks at the line and scores them.
fn score_lines(name: &str, calls: &[LineCall], truth: &Position, ruleset: Ruleset, out: &mut Vec<LineResult>) {
    for (px, true_mm, line) in truth_lines(truth, ruleset) {
        let call = calls.iter().find(|c| PixelPoint::new(c.wink_px[0], c.wink_px[1]).distance(px) < 4.0);
        let right = call.and_then(|c| match c.verdict.as_str() {
            "in" => Some(true_mm >= 0.0),
            "off" => Some(true_mm < 0.0),
            _ => None,
        });
        out.push(LineResult { image: name.to_string(), true_mm, inside_mm: call.map(|c| c.inside_mm), sigma_mm: call.map(|c| c.sigma_mm), verdict: call.map(|c| c.verdict.clone()), right, line });
    }
}

/// The line calls' figures as a Markdown table: every wink whose edge truly lies within 2 mm of
/// the boundary.
pub fn line_table(r: &[LineResult]) -> String {
    let v: Vec<&LineResult> = r.iter().filter(|l| l.true_mm.abs() <= 2.0).collect();
    let called: Vec<(&LineResult, f64, f64, &str)> = v.iter().filter_map(|l| Some((*l, l.inside_mm?, l.sigma_mm?, l.verdict.as_deref()?))).collect();
    let mut out = String::from("| line calls (rule 13), winks whose edge lies within 2 mm of the boundary | overhead |\n|---|---|\n");
    out.push_str(&format!("| winks / called (found, measured within 3 mm) | {} / {} |\n", v.len(), called.len()));
    out.push_str(&format!("| verdicts right when given | {} |\n", pct(v.iter().filter(|l| l.right == Some(true)).count(), v.iter().filter(|l| l.right.is_some()).count())));
    out.push_str(&format!("| |true − measured| ≤ 2 sigma | {} |\n", pct(called.iter().filter(|c| (c.0.true_mm - c.1).abs() <= 2.0 * c.2).count(), called.len())));
    for lo in [0.5, 1.0, 1.5] {
        let s: Vec<_> = called.iter().filter(|c| c.0.true_mm.abs() >= lo).collect();
        out.push_str(&format!("| too close to call, |distance| ≥ {lo} mm | {} |\n", pct(s.iter().filter(|c| c.3 == "too_close_to_call").count(), s.len())));
    }
    let mut e: Vec<f64> = called.iter().map(|c| (c.0.true_mm - c.1).abs()).collect();
    let err = if e.is_empty() { "–".to_string() } else { format!("{:.3} / {:.3}", super::quantile(&mut e, 0.5), super::quantile(&mut e, 0.95)) };
    out.push_str(&format!("| |true − measured|, median / 95th pct (mm) | {err} |\n"));
    out.push_str(&format!("| measured − true, mean (mm; + reads further inside than truly) | {} |\n", mean_or_dash(&called.iter().map(|c| c.1 - c.0.true_mm).collect::<Vec<_>>())));
    let mut s: Vec<f64> = called.iter().map(|c| c.2).collect();
    let sig = if s.is_empty() { "–".to_string() } else { format!("{:.2}", super::quantile(&mut s, 0.5)) };
    out.push_str(&format!("| median sigma (mm) | {sig} |\n"));
    out
}

/// The mean of `v` signed, to 0.001 mm, or "–" for none.
fn mean_or_dash(v: &[f64]) -> String {
    if v.is_empty() { "–".into() } else { format!("{:+.3}", v.iter().sum::<f64>() / v.len() as f64) }
}

/// A close-up that is another view of one beside it (`<stem>-v<N>`): its photo's file stem.
fn view_of(stem: &str) -> Option<&str> {
    let (base, n) = stem.rsplit_once("-v")?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(base)
}

fn truth_pairs(truth: &Position) -> Vec<(PixelPoint, PixelPoint, f64, Option<bool>)> {
    let w: Vec<_> = truth.winks.iter().filter_map(|w| Some((w, w.centre_px?, w.centre_mm?)).filter(|_| w.state != WinkState::Potted)).collect();
    let mut out = Vec::new();
    for i in 0..w.len() {
        for j in i + 1..w.len() {
            let ((a, pa, ca), (b, pb, cb)) = (w[i], w[j]);
            let sq = truth.squops.iter().find(|s| (s.upper == a.id && s.lower == b.id) || (s.upper == b.id && s.lower == a.id));
            let m = match sq.and_then(|s| s.margin_mm) {
                Some(m) => m,
                None => (a.diameter_mm.unwrap_or(16.0) + b.diameter_mm.unwrap_or(16.0)) / 2.0 - ca.distance(cb),
            };
            if m.abs() <= 2.0 {
                let up = sq.map(|s| s.upper == a.id);
                out.push((pa, pb, m, up));
            }
        }
    }
    out
}

/// Runs the umpire on every case (close-ups by their truth's kind) and matches the pairs. A
/// close-up with other views of it beside it (`<stem>-vN`) is also called on all its photos (the
/// views are not scored on their own).
pub fn evaluate(cases: &[Case], ruleset: Ruleset, wink_diameters: Option<NominalDiameters>, progress: &mut dyn FnMut(usize)) -> (Vec<PairResult>, Vec<LineResult>) {
    let mut out = Vec::new();
    let mut lines = Vec::new();
    // A close-up's scale is the winks' own: the set's measured sizes where stated.
    let nominal = wink_diameters.unwrap_or(ruleset.spec().winks);
    let stem = |c: &Case| c.image.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    for (k, case) in cases.iter().enumerate() {
        progress(k + 1);
        let is_close = case.truth.extra.get("truth").and_then(|t| t.get("kind")).and_then(|k| k.as_str()) == Some("closeup");
        let here = stem(case);
        if is_close && view_of(&here).is_some() {
            continue;
        }
        let Ok(frame) = load_image(&case.image) else { continue };
        let name = case.image.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let mut calls: Vec<(Vec<Pair>, usize)> = Vec::new();
        if is_close {
            let Ok(found) = closeup(&frame, &nominal, None, None) else { continue };
            let views: Vec<(Closeup, String)> = cases
                .iter()
                .filter(|c| view_of(&stem(c)) == Some(here.as_str()))
                .filter_map(|c| Some((closeup(&load_image(&c.image).ok()?, &nominal, None, None).ok()?, c.image.display().to_string())))
                .collect();
            if !views.is_empty() {
                calls.push((call_on_views((&found, &case.image.display().to_string()), &views, &nominal).0, 1 + views.len()));
            }
            calls.push((found.pairs, 1));
        } else {
            match analyze_frame(&frame, &AnalyzeOptions { wink_diameters, ..AnalyzeOptions::new(ruleset) }) {
                Ok(a) => {
                    calls.push((overhead(&a, None), 1));
                    let called: Vec<LineCall> = line_calls(&a, None).into_iter().map(|(_, l)| l).collect();
                    score_lines(&name, &called, &case.truth, ruleset, &mut lines);
                }
                Err(_) => continue,
            }
        }
        for (pairs, photos) in &calls {
            score(&name, is_close, *photos, pairs, &case.truth, &mut out);
        }
    }
    (out, lines)
}

/// Matches one photo's calls to its truth's pairs and scores them.
fn score(name: &str, is_close: bool, photos: usize, pairs: &[Pair], truth: &Position, out: &mut Vec<PairResult>) {
    for (ta, tb, m, up) in truth_pairs(truth) {
        let near = |p: [f64; 2], q: PixelPoint| PixelPoint::new(p[0], p[1]).distance(q);
        let tol = if is_close { 25.0 } else { 4.0 };
        let Some((p, swapped)) = pairs.iter().find_map(|p| {
            if near(p.a_px, ta) < tol && near(p.b_px, tb) < tol {
                Some((p, false))
            } else if near(p.a_px, tb) < tol && near(p.b_px, ta) < tol {
                Some((p, true))
            } else {
                None
            }
        }) else {
            continue;
        };
        let true_upper_is_a = up.map(|u| u != swapped);
        let right = match p.verdict.as_str() {
            "squopped" => Some(true_upper_is_a.is_some_and(|ua| p.upper.as_deref() == Some(if ua { p.a.as_str() } else { p.b.as_str() }))),
            "not_squopped" => Some(true_upper_is_a.is_none()),
            _ => None,
        };
        out.push(PairResult { image: name.to_string(), closeup: is_close, true_mm: m, true_upper_is_a, margin_mm: p.margin_mm, sigma_mm: p.sigma_mm, sigma_parts: p.sigma_parts.clone(), verdict: p.verdict.clone(), right, upper_confidence: p.upper_confidence, upper_evidence: p.upper_evidence.clone(), felt_between: p.felt_between, px_per_mm: (!is_close).then(|| super::detection::px_scale(truth)), photos });
    }
}

fn pct(a: usize, b: usize) -> String {
    if b == 0 {
        "–".into()
    } else {
        format!("{:.1}% ({a}/{b})", 100.0 * a as f64 / b as f64)
    }
}

/// Why a call was declined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Declined {
    /// The overlap is beyond 2 sigma, but the evidence did not name the upper surely enough.
    UpperUnnamed,
    /// The margin lies within 2 sigma of zero.
    UnderTwoSigma,
    /// A gap beyond 2 sigma with no felt seen in it (close-ups: a raised rim could fake it).
    NoFeltSeen,
}

fn declined_why(p: &PairResult) -> Declined {
    let bar = crate::umpire::VERDICT_SIGMAS * p.sigma_mm;
    if p.margin_mm > bar {
        Declined::UpperUnnamed
    } else if -p.margin_mm > bar {
        Declined::NoFeltSeen
    } else {
        Declined::UnderTwoSigma
    }
}

/// The figures as a Markdown table, overhead and close-up side by side.
pub fn table(r: &[PairResult]) -> String {
    // A third column for close-ups called on all their photos, where there were other views.
    let several = r.iter().any(|p| p.photos > 1);
    let mut out = String::from(if several { "| figure | overhead | close-up | close-up, all its photos |\n|---|---|---|---|\n" } else { "| figure | overhead | close-up |\n|---|---|---|\n" });
    let col = |close: bool, photos: bool, f: &dyn Fn(&[&PairResult]) -> String| {
        let v: Vec<&PairResult> = r.iter().filter(|p| p.closeup == close && (p.photos > 1) == photos).collect();
        f(&v)
    };
    let row = |label: &str, f: &dyn Fn(&[&PairResult]) -> String| {
        let more = if several { format!(" {} |", col(true, true, f)) } else { String::new() };
        format!("| {label} | {} | {} |{more}\n", col(false, false, f), col(true, false, f))
    };
    out.push_str(&row("pairs matched (true margin −2…+2 mm)", &|v| v.len().to_string()));
    out.push_str(&row("verdicts right when given", &|v| pct(v.iter().filter(|p| p.right == Some(true)).count(), v.iter().filter(|p| p.right.is_some()).count())));
    out.push_str(&row("|true − measured| ≤ 2 sigma", &|v| pct(v.iter().filter(|p| (p.true_mm - p.margin_mm).abs() <= 2.0 * p.sigma_mm).count(), v.len())));
    let tcc = |lo: f64| move |v: &[&PairResult]| {
        let s: Vec<_> = v.iter().filter(|p| p.true_mm.abs() >= lo).collect();
        pct(s.iter().filter(|p| p.verdict == "too_close_to_call").count(), s.len())
    };
    out.push_str(&row("too close to call, |margin| ≥ 0.2 mm", &tcc(0.2)));
    out.push_str(&row("too close to call, |margin| ≥ 0.5 mm", &tcc(0.5)));
    out.push_str(&row("too close to call, |margin| ≥ 1.5 mm", &tcc(1.5)));
    // By the frame's scale: an overhead margin's sigma is mostly the outlines' fit, a fraction of
    // a pixel, so it shrinks as the pixels per mm grow.
    out.push_str(&row(&format!("too close to call, |margin| ≥ 0.5 mm: {}", super::detection::scale_bands_label()), &|v| {
        if v.iter().all(|p| p.px_per_mm.is_none()) {
            return "–".into();
        }
        super::detection::by_scale(&|lo, hi| {
            let s: Vec<_> = v.iter().filter(|p| p.true_mm.abs() >= 0.5 && p.px_per_mm.is_some_and(|k| k >= lo && k < hi)).collect();
            pct(s.iter().filter(|p| p.verdict == "too_close_to_call").count(), s.len())
        })
    }));
    out.push_str(&row("of those at ≥ 0.2 mm: overlap sure, upper not named / under 2 sigma / a gap with no felt seen", &|v| {
        let declined: Vec<_> = v.iter().filter(|p| p.true_mm.abs() >= 0.2 && p.verdict == "too_close_to_call").collect();
        let count = |why: Declined| declined.iter().filter(|p| declined_why(p) == why).count();
        if declined.is_empty() { "–".into() } else { format!("{} / {} / {}", count(Declined::UpperUnnamed), count(Declined::UnderTwoSigma), count(Declined::NoFeltSeen)) }
    }));
    // What would have had to shrink: the largest part of each such call's sigma.
    out.push_str(&row("of those under 2 sigma, by sigma's largest part", &|v| {
        let mut by: Vec<(&str, usize)> = Vec::new();
        for p in v.iter().filter(|p| p.true_mm.abs() >= 0.2 && p.verdict == "too_close_to_call" && declined_why(p) == Declined::UnderTwoSigma) {
            let source = p.sigma_parts.parts().first().map_or("?", |s| s.source);
            match by.iter_mut().find(|b| b.0 == source) {
                Some(b) => b.1 += 1,
                None => by.push((source, 1)),
            }
        }
        by.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(y.0)));
        if by.is_empty() { "–".into() } else { by.iter().map(|(s, n)| format!("{s} {n}")).collect::<Vec<_>>().join(", ") }
    }));
    out.push_str(&row("|true − measured|, median / 95th pct (mm)", &|v| {
        let mut e: Vec<f64> = v.iter().map(|p| (p.true_mm - p.margin_mm).abs()).collect();
        if e.is_empty() { "–".into() } else { format!("{:.3} / {:.3}", super::quantile(&mut e, 0.5), super::quantile(&mut e, 0.95)) }
    }));
    // A bias shows what the spread hides: a set drawn at another size than margins take
    // (`--wink-diameters`) reads every margin short or long by about the same.
    out.push_str(&row("measured − true, mean (mm; + reads more overlap than truly)", &|v| mean_or_dash(&v.iter().map(|p| p.margin_mm - p.true_mm).collect::<Vec<_>>())));
    // "–" where a column has no pairs, as in the rows above.
    out.push_str(&row("median sigma (mm)", &|v| {
        let mut s: Vec<f64> = v.iter().map(|p| p.sigma_mm).collect();
        if s.is_empty() { "–".to_string() } else { format!("{:.2}", super::quantile(&mut s, 0.5)) }
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_calls_are_scored_on_the_winks_truly_within_two_mm_of_the_line() {
        let line = |true_mm: f64, call: Option<(f64, f64, &str)>| LineResult {
            image: "f.jpg".into(),
            true_mm,
            inside_mm: call.map(|c| c.0),
            sigma_mm: call.map(|c| c.1),
            verdict: call.map(|c| c.2.to_string()),
            right: call.and_then(|c| match c.2 {
                "in" => Some(true_mm >= 0.0),
                "off" => Some(true_mm < 0.0),
                _ => None,
            }),
            line: "mat_edge",
        };
        let r = [
            line(1.2, Some((1.1, 0.3, "in"))),
            line(-0.6, Some((0.1, 0.3, "too_close_to_call"))),
            line(-1.6, Some((-1.3, 0.3, "off"))),
            line(0.3, None),
            line(2.5, Some((2.4, 0.3, "in"))), // beyond 2 mm: not counted
        ];
        let t = line_table(&r);
        assert!(t.contains("| winks / called (found, measured within 3 mm) | 4 / 3 |"), "{t}");
        assert!(t.contains("| verdicts right when given | 100.0% (2/2) |"), "{t}");
        // 0.7 mm out of 0.6 for the too-close one.
        assert!(t.contains("| |true − measured| ≤ 2 sigma | 66.7% (2/3) |"), "{t}");
        assert!(t.contains("| too close to call, |distance| ≥ 0.5 mm | 33.3% (1/3) |"), "{t}");
        assert!(t.contains("| too close to call, |distance| ≥ 1.5 mm | 0.0% (0/1) |"), "{t}");
        // (1.1 − 1.2 + 0.1 + 0.6 − 1.3 + 1.6) / 3: read 0.3 mm further inside on average.
        assert!(t.contains("| measured − true, mean (mm; + reads further inside than truly) | +0.300 |"), "{t}");
    }

    fn pair(true_mm: f64, margin_mm: f64, sigma_mm: f64, verdict: &str) -> PairResult {
        PairResult { image: "x.jpg".into(), closeup: true, true_mm, true_upper_is_a: (true_mm > 0.0).then_some(true), margin_mm, sigma_mm, sigma_parts: Default::default(), verdict: verdict.into(), right: None, upper_confidence: None, upper_evidence: None, felt_between: None, px_per_mm: None, photos: 1 }
    }

    #[test]
    fn the_declined_calls_are_counted_by_why() {
        let pairs = [
            pair(1.0, 0.9, 0.2, "too_close_to_call"),  // overlap sure, upper not named
            PairResult { sigma_parts: Budget::of(&[("roundness", 0.05), ("edge_bias", 0.19)]), ..pair(0.4, 0.3, 0.2, "too_close_to_call") }, // under 2 sigma
            pair(-0.3, -0.35, 0.1, "too_close_to_call"), // a gap beyond 2 sigma, no felt seen
            pair(-0.1, -0.1, 0.1, "too_close_to_call"), // under 0.2 mm: not counted
            pair(-0.5, -0.5, 0.1, "not_squopped"),
        ];
        let t = table(&pairs);
        let row = t.lines().find(|l| l.starts_with("| of those at ≥ 0.2 mm")).unwrap_or_default();
        assert!(row.ends_with("| – | 1 / 1 / 1 |"), "{row}");
        let largest = t.lines().find(|l| l.starts_with("| of those under 2 sigma")).unwrap_or_default();
        assert!(largest.ends_with("| – | edge_bias 1 |"), "{largest}");
        let err = t.lines().find(|l| l.starts_with("| |true − measured|, median")).unwrap_or_default();
        assert!(err.ends_with("| – | 0.050 / 0.100 |"), "{err}");
        // (−0.1 − 0.1 − 0.05 + 0 + 0) / 5: margins read 0.05 mm short on average.
        let bias = t.lines().find(|l| l.starts_with("| measured − true, mean")).unwrap_or_default();
        assert!(bias.ends_with("| – | -0.050 |"), "{bias}");
    }

    #[test]
    fn a_closeups_other_views_are_told_by_their_names_and_get_a_column() {
        assert_eq!(view_of("closeup-05019-v1"), Some("closeup-05019"));
        assert_eq!(view_of("closeup-05019-v12"), Some("closeup-05019"));
        assert_eq!(view_of("closeup-05019"), None);
        assert_eq!(view_of("closeup-05019-v"), None);
        assert_eq!(view_of("my-video"), None);
        let pairs = [pair(0.8, 0.8, 0.5, "too_close_to_call"), PairResult { photos: 2, ..pair(0.8, 0.8, 0.2, "squopped") }];
        let t = table(&pairs);
        assert!(t.starts_with("| figure | overhead | close-up | close-up, all its photos |"), "{t}");
        let row = t.lines().find(|l| l.starts_with("| too close to call, |margin| ≥ 0.5 mm |")).unwrap_or_default();
        assert!(row.ends_with("| – | 100.0% (1/1) | 0.0% (0/1) |"), "{row}");
        assert!(table(&pairs[..1]).starts_with("| figure | overhead | close-up |\n"));
    }

    #[test]
    fn overhead_declines_are_also_counted_by_the_frames_scale() {
        let overhead = |true_mm: f64, verdict: &str, scale: f64| PairResult { closeup: false, px_per_mm: Some(scale), ..pair(true_mm, true_mm, 0.3, verdict) };
        let pairs = [
            overhead(0.8, "too_close_to_call", 0.5),
            overhead(-0.7, "not_squopped", 0.5),
            overhead(1.2, "too_close_to_call", 0.7),
            overhead(0.3, "too_close_to_call", 0.7), // under 0.5 mm: not counted
            overhead(-1.0, "not_squopped", 0.95),
            pair(0.8, 0.8, 0.1, "too_close_to_call"), // a close-up: its own column
        ];
        let t = table(&pairs);
        let row = t.lines().find(|l| l.starts_with("| too close to call, |margin| ≥ 0.5 mm: frames at")).unwrap_or_default();
        assert!(row.ends_with("| 50.0% (1/2) / 100.0% (1/1) / 0.0% (0/1) | – |"), "{row}");
    }
}
