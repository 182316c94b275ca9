//! How well `analyze` reads a frame: winks found, colour, size, state, footprint error, squops,
//! and whole positions right, against the renderer's truth.
//!
//! Detected winks are matched to true ones by their image position (nearest within half a small
//! wink's radius), whatever their colour, so a wrong colour counts as a wrong colour, not as a
//! miss and a false find. Winks in the pot are compared by count per colour (the pot hides most of
//! them and their positions do not matter).

use super::{quantile, Case};
use crate::analyze::{analyze_frame, AnalyzeOptions};
use crate::capture::load_image;
use crate::geometry::MatPoint;
use crate::report::position::{Colour, NominalDiameters, Position, Wink, WinkState};
use crate::rules::{Ruleset, SURE_SQUOP};
use std::time::Instant;

/// Winks at least this visible must be found.
const MUST_FIND_VISIBLE: f64 = 0.5;

/// A squop between two matched winks, by its true margin.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SquopResult {
    /// True margin, mm.
    pub margin_mm: f64,
    /// Whether the detection has it, the right way up.
    pub right: bool,
    /// Whether the two winks are of one colour (their overlap then shows no colour boundary).
    pub same_colour: bool,
    /// What the detection read for the pair, either way up: its evidence and confidence (`None`
    /// where it found no squop between them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<(String, f64)>,
}

/// How a wink lies, in the truth: its footprint's error has a different cause in each (the rim's
/// blur and the lens alone; part of the rim hidden; a tilt on the wink beneath).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lies {
    /// On the mat (or the table), at least [`SEEN_WHOLE`] of it in view.
    Whole,
    /// On the mat, partly under another wink.
    PartlyCovered,
    /// On another wink.
    OnAnother,
}

impl Lies {
    /// Every kind, in the order the table gives them.
    pub const ALL: [Lies; 3] = [Lies::Whole, Lies::PartlyCovered, Lies::OnAnother];

    fn of(level: Option<u32>, visible: f64) -> Lies {
        if level.unwrap_or(0) > 0 {
            Lies::OnAnother
        } else if visible >= SEEN_WHOLE {
            Lies::Whole
        } else {
            Lies::PartlyCovered
        }
    }
}

/// A wink at least this visible counts as seen whole ([`Lies::Whole`]).
const SEEN_WHOLE: f64 = 0.95;

/// One frame's result.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct FrameResult {
    /// The image's file name.
    pub image: String,
    /// Why the frame could not be analysed.
    pub error: Option<String>,
    /// True winks off the pot at least half visible.
    pub must_find: usize,
    /// Of those, found.
    pub found: usize,
    /// Detected winks off the pot.
    pub detected: usize,
    /// Detected winks that match no true wink.
    pub false_finds: usize,
    /// Matched winks with the right colour / size / state, and how many were matched.
    pub colour_right: usize,
    /// See `colour_right`.
    pub size_right: usize,
    /// See `colour_right`.
    pub state_right: usize,
    /// See `colour_right`.
    pub matched: usize,
    /// True winks in the pot at least half visible.
    pub potted_true_visible: usize,
    /// Of those, found (per colour, by count).
    pub potted_found: usize,
    /// Detected winks in the pot.
    pub potted_detected: usize,
    /// Detected winks in the pot beyond the number truly there.
    pub potted_false: usize,
    /// Footprint centre errors of matched winks, mm.
    pub footprint_errors_mm: Vec<f64>,
    /// What each of `footprint_errors_mm`'s winks is, in the truth.
    pub footprint_lies: Vec<Lies>,
    /// True squops between matched winks.
    pub squops: Vec<SquopResult>,
    /// Detected squops between winks with a true gap ≥ 0.5 mm.
    pub false_squops_gap: usize,
    /// Detected squops that are not true squops (any margin).
    pub false_squops: usize,
    /// Every detected squop between matched winks: its confidence, and whether it is a true squop
    /// the right way up.
    pub found_squops: Vec<(f64, bool)>,
    /// Every wink, state and squop right, and every colour's count in the pot (from those at
    /// least half visible to all there).
    pub fully_right: bool,
    /// What was wrong, for a person.
    pub problems: Vec<String>,
    /// Time to analyse (calibration included), ms.
    pub ms: f64,
    /// The frame's scale on the mat, pixels per mm (the truth's mat length in pixels over its
    /// length in mm): the figures are also given by scale, as a wink's rim and an overlap's
    /// width in pixels go with it.
    pub px_per_mm: f64,
    /// The matched winks: (true id, detected id).
    #[serde(skip)]
    pub pairs: Vec<(String, String)>,
}

/// The frame's scale on the mat, pixels per mm: the truth's mat length in pixels over its
/// length in mm.
pub(super) fn px_scale(truth: &Position) -> f64 {
    let c = truth.calibration.as_ref().and_then(|c| c.mat_corners_px);
    match c {
        Some(c) => c[0].distance(c[1]) / crate::geometry::MatSpec::STANDARD.length_mm,
        None => 1.0,
    }
}

/// Analyses every case and scores it.
pub fn evaluate(cases: &[Case], ruleset: Ruleset, wink_diameters: Option<NominalDiameters>, progress: &mut dyn FnMut(usize)) -> Vec<FrameResult> {
    let mut out = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        out.push(one(case, ruleset, wink_diameters));
        progress(i + 1);
    }
    out
}

fn one(case: &Case, ruleset: Ruleset, wink_diameters: Option<NominalDiameters>) -> FrameResult {
    let mut r = FrameResult { image: case.image.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), ..Default::default() };
    let frame = match load_image(&case.image) {
        Ok(f) => f,
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    let t0 = Instant::now();
    let analysis = analyze_frame(&frame, &AnalyzeOptions { wink_diameters, ..AnalyzeOptions::new(ruleset) });
    r.ms = t0.elapsed().as_secs_f64() * 1000.0;
    let analysis = match analysis {
        Ok(a) => a,
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    score(&case.truth, &analysis.position, &mut r);
    r
}

/// Scores a position against the truth.
pub fn score(truth: &Position, got: &Position, r: &mut FrameResult) {
    let ppm = px_scale(truth);
    r.px_per_mm = ppm;
    // Our mat frame may be a half turn from the truth's.
    let flip = match (truth.calibration.as_ref().and_then(|c| c.mat_corners_px), got.calibration.as_ref().and_then(|c| c.mat_corners_px)) {
        (Some(t), Some(g)) => g[0].distance(t[2]) < g[0].distance(t[0]),
        _ => false,
    };
    let to_truth = |p: MatPoint| if flip { p * -1.0 } else { p };
    let tw: Vec<&Wink> = truth.winks.iter().filter(|w| w.state != WinkState::Potted && w.centre_px.is_some()).collect();
    let gw: Vec<&Wink> = got.winks.iter().filter(|w| w.state != WinkState::Potted && w.centre_px.is_some()).collect();
    let visible = |w: &Wink| w.extra.get("visible_fraction").and_then(|v| v.as_f64()).unwrap_or(1.0);
    // Greedy nearest matching by image position, the winks that show first: a wink found where
    // one lies almost wholly under another is the one on top, though the hidden one's centre
    // may be nearer.
    let mut pairs: Vec<(bool, f64, usize, usize)> = Vec::new();
    for (i, t) in tw.iter().enumerate() {
        for (j, g) in gw.iter().enumerate() {
            let (Some(a), Some(b)) = (t.centre_px, g.centre_px) else { continue };
            let d = a.distance(b);
            if d < 0.5 * 8.0 * ppm {
                pairs.push((visible(t) < MUST_FIND_VISIBLE, d, i, j));
            }
        }
    }
    pairs.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let (mut t_of, mut g_of) = (vec![None; gw.len()], vec![None; tw.len()]);
    for (_, _, i, j) in pairs {
        if g_of[i].is_none() && t_of[j].is_none() {
            g_of[i] = Some(j);
            t_of[j] = Some(i);
        }
    }
    r.detected = gw.len();
    for (i, t) in tw.iter().enumerate() {
        let must = visible(t) >= MUST_FIND_VISIBLE;
        if must {
            r.must_find += 1;
        }
        let Some(j) = g_of[i] else {
            if must {
                r.problems.push(format!("missed {} {} {} ({:.0}% visible)", t.id, t.colour, t.size.name(), visible(t) * 100.0));
            }
            continue;
        };
        if must {
            r.found += 1;
        }
        let g = gw[j];
        r.matched += 1;
        r.pairs.push((t.id.clone(), g.id.clone()));
        let mut ok = true;
        if g.colour == t.colour {
            r.colour_right += 1;
        } else {
            ok = false;
        }
        if g.size == t.size {
            r.size_right += 1;
        } else {
            ok = false;
        }
        if g.state == t.state {
            r.state_right += 1;
        } else {
            ok = false;
        }
        if !ok {
            r.problems.push(format!("{} ({} {} {}) read as {} {} {}", t.id, t.colour, t.size.name(), t.state.name(), g.colour, g.size.name(), g.state.name()));
        }
        if let (Some(a), Some(b)) = (t.centre_mm, g.centre_mm) {
            r.footprint_errors_mm.push(a.distance(to_truth(b)));
            r.footprint_lies.push(Lies::of(t.level, visible(t)));
        }
    }
    for (j, g) in gw.iter().enumerate() {
        if t_of[j].is_none() {
            r.false_finds += 1;
            r.problems.push(format!("false find {} {} {} at ({:.0}, {:.0})", g.id, g.colour, g.size.name(), g.centre_px.map_or(0.0, |p| p.x), g.centre_px.map_or(0.0, |p| p.y)));
        }
    }
    // Winks in the pot, by count per colour.
    let mut pot_ok = true;
    for c in Colour::ALL {
        let t_vis = truth.winks.iter().filter(|w| w.colour == c && w.state == WinkState::Potted && visible(w) >= MUST_FIND_VISIBLE).count();
        let t_all = truth.winks.iter().filter(|w| w.colour == c && w.state == WinkState::Potted).count();
        let g = got.winks.iter().filter(|w| w.colour == c && w.state == WinkState::Potted).count();
        r.potted_true_visible += t_vis;
        r.potted_found += g.min(t_vis);
        r.potted_false += g.saturating_sub(t_all);
        r.potted_detected += g;
        pot_ok &= (t_vis..=t_all).contains(&g);
        if g > t_all {
            r.problems.push(format!("{} {c} winks seen in the pot, {t_all} there", g));
        } else if g < t_vis {
            r.problems.push(format!("{} {c} winks seen in the pot, {t_vis} there at least half visible", g));
        }
    }
    // Squops between matched winks.
    let g_id = |tid: &str| tw.iter().position(|t| t.id == tid).and_then(|i| g_of[i]).map(|j| gw[j].id.clone());
    let has = |u: &str, l: &str| got.squops.iter().any(|s| s.upper == u && s.lower == l);
    let mut squops_ok = true;
    for s in &truth.squops {
        let (Some(u), Some(l)) = (g_id(&s.upper), g_id(&s.lower)) else { continue };
        let right = has(&u, &l);
        let read = got.squops.iter().find(|g| (g.upper == u && g.lower == l) || (g.upper == l && g.lower == u)).map(|g| (g.extra.get("evidence").and_then(|e| e.as_str()).unwrap_or("?").to_string(), g.confidence.unwrap_or(0.0)));
        if !right {
            squops_ok = false;
            // The reading it was taken for, and on what evidence, so the failures can be sorted (not
            // right: any squop found between the two is the other way up).
            let how = match &read {
                Some((evidence, confidence)) => format!("upside down ({evidence}, confidence {confidence:.2})"),
                None => "missed".to_string(),
            };
            let name = |id: &str| tw.iter().find(|t| t.id == id).map_or(String::new(), |t| format!("{} {}", t.colour, t.size.name()));
            r.problems.push(format!("squop {} ({}) over {} ({}) ({:.2} mm) {how}", s.upper, name(&s.upper), s.lower, name(&s.lower), s.margin_mm.unwrap_or(0.0)));
        }
        let same_colour = match (tw.iter().find(|t| t.id == s.upper), tw.iter().find(|t| t.id == s.lower)) {
            (Some(a), Some(b)) => a.colour == b.colour,
            _ => false,
        };
        r.squops.push(SquopResult { margin_mm: s.margin_mm.unwrap_or(0.0), right, same_colour, read });
    }
    let t_of_id = |gid: &str| gw.iter().position(|g| g.id == gid).and_then(|j| t_of[j]).map(|i| tw[i]);
    for s in &got.squops {
        let (Some(u), Some(l)) = (t_of_id(&s.upper), t_of_id(&s.lower)) else {
            squops_ok = false;
            r.false_squops += 1;
            continue;
        };
        let right = truth.squops.iter().any(|t| t.upper == u.id && t.lower == l.id);
        if let Some(c) = s.confidence {
            r.found_squops.push((c, right));
        }
        if right {
            continue;
        }
        squops_ok = false;
        r.false_squops += 1;
        let m = match (u.centre_mm, l.centre_mm, u.diameter_mm, l.diameter_mm) {
            (Some(a), Some(b), Some(da), Some(db)) => (da + db) / 2.0 - a.distance(b),
            _ => 0.0,
        };
        if m <= -0.5 {
            r.false_squops_gap += 1;
        }
        let evidence = s.extra.get("evidence").and_then(|e| e.as_str()).unwrap_or("?");
        r.problems.push(format!("false squop {} over {} (true margin {m:.2} mm; read {:.2} mm on {evidence}, confidence {:.2})", u.id, l.id, s.margin_mm.unwrap_or(0.0), s.confidence.unwrap_or(0.0)));
    }
    r.fully_right = r.found == r.must_find && r.false_finds == 0 && r.matched == r.colour_right && r.matched == r.size_right && r.matched == r.state_right && pot_ok && squops_ok;
}

fn pct(a: usize, b: usize) -> String {
    if b == 0 {
        "–".into()
    } else {
        format!("{:.2}% ({a}/{b})", 100.0 * a as f64 / b as f64)
    }
}

/// The figures, each as (what, measured): recall, precision, colour, size, state, footprint
/// error, squops by margin, false squops, positions fully right.
pub fn figures(results: &[FrameResult]) -> Vec<(String, String)> {
    let sum = |f: fn(&FrameResult) -> usize| results.iter().map(f).sum::<usize>();
    let analysed: Vec<&FrameResult> = results.iter().filter(|r| r.error.is_none()).collect();
    let mut fp: Vec<f64> = analysed.iter().flat_map(|r| r.footprint_errors_mm.iter().copied()).collect();
    // Median / 95th percentile of the footprint errors of winks lying as `lies`, and how many.
    let fp_of = |lies: Lies| {
        let mut v: Vec<f64> = analysed.iter().flat_map(|r| r.footprint_errors_mm.iter().zip(&r.footprint_lies).filter(|(_, &l)| l == lies).map(|(e, _)| *e)).collect();
        if v.is_empty() {
            return "–".to_string();
        }
        format!("{:.3} / {:.3} ({})", quantile(&mut v, 0.5), quantile(&mut v, 0.95), v.len())
    };
    let sq: Vec<&SquopResult> = analysed.iter().flat_map(|r| r.squops.iter()).collect();
    let band = |lo: f64, hi: f64| {
        let v: Vec<_> = sq.iter().filter(|s| s.margin_mm.abs() >= lo && s.margin_mm.abs() < hi).collect();
        pct(v.iter().filter(|s| s.right).count(), v.len())
    };
    let bands = scale_bands_label();
    // Squops of ≥ 1 mm that `keep` keeps (given the squop and its frame's scale).
    let big = |keep: &dyn Fn(&SquopResult, f64) -> bool| {
        let v: Vec<&SquopResult> = analysed.iter().flat_map(|r| r.squops.iter().map(move |s| (s, r.px_per_mm))).filter(|&(s, ppm)| s.margin_mm.abs() >= 1.0 && keep(s, ppm)).map(|(s, _)| s).collect();
        pct(v.iter().filter(|s| s.right).count(), v.len())
    };
    let found = sum(|r| r.found) + sum(|r| r.potted_found);
    let must = sum(|r| r.must_find) + sum(|r| r.potted_true_visible);
    let detected = sum(|r| r.detected) + sum(|r| r.potted_detected);
    let false_finds = sum(|r| r.false_finds) + sum(|r| r.potted_false);
    vec![
        ("recall (winks ≥ 50% visible)".into(), pct(found, must)),
        ("precision".into(), pct(detected - false_finds, detected)),
        ("colour right".into(), pct(sum(|r| r.colour_right), sum(|r| r.matched))),
        ("size right".into(), pct(sum(|r| r.size_right), sum(|r| r.matched))),
        ("state right".into(), pct(sum(|r| r.state_right), sum(|r| r.matched))),
        ("footprint error, median / 95th pct / max (mm)".into(), format!("{:.3} / {:.3} / {:.3}", quantile(&mut fp, 0.5), quantile(&mut fp, 0.95), quantile(&mut fp, 1.0))),
        (
            "footprint error, median / 95th pct (mm) of winks: on the mat seen whole / partly covered / on another wink".into(),
            Lies::ALL.map(fp_of).join(" / "),
        ),
        ("squops right, margin ≥ 1 mm".into(), band(1.0, f64::INFINITY)),
        ("squops right, margin 0.5–1 mm".into(), band(0.5, 1.0)),
        ("squops right, margin < 0.5 mm".into(), band(0.0, 0.5)),
        ("false squops, true gap ≥ 0.5 mm".into(), sum(|r| r.false_squops_gap).to_string()),
        ("false squops, any".into(), sum(|r| r.false_squops).to_string()),
        ("positions fully right".into(), pct(analysed.iter().filter(|r| r.fully_right).count(), results.len())),
        (
            format!("squops found, right: given ≥ {SURE_SQUOP} / under it (flagged not sure)"),
            [true, false]
                .map(|sure| {
                    let v: Vec<bool> = analysed.iter().flat_map(|r| r.found_squops.iter()).filter(|(c, _)| (*c >= SURE_SQUOP) == sure).map(|&(_, right)| right).collect();
                    pct(v.iter().filter(|&&right| right).count(), v.len())
                })
                .join(" / "),
        ),
        ("squops right, margin ≥ 1 mm: winks of one colour / of two".into(), format!("{} / {}", big(&|s: &SquopResult, _| s.same_colour), big(&|s: &SquopResult, _| !s.same_colour))),
        ("squops right, margin ≥ 1 mm: by what named the upper".into(), by_evidence(sq.iter().copied().filter(|s| s.margin_mm.abs() >= 1.0))),
        (
            format!("squops right, margin ≥ 1 mm: {bands}"),
            by_scale(&|lo, hi| big(&|_, ppm| (lo..hi).contains(&ppm))),
        ),
        (
            format!("positions fully right: {bands}"),
            by_scale(&|lo, hi| {
                let v: Vec<_> = analysed.iter().filter(|r| (lo..hi).contains(&r.px_per_mm)).collect();
                pct(v.iter().filter(|r| r.fully_right).count(), v.len())
            }),
        ),
    ]
}

/// Squops right, grouped by the evidence the detection named the upper on (either way up; "not
/// found" where it found no squop between the two), most common first: `overlap_model 97.00%
/// (97/100), rim_edge 80.00% (8/10), not found 0.00% (0/2)`.
fn by_evidence<'a>(squops: impl Iterator<Item = &'a SquopResult>) -> String {
    let mut groups: Vec<(String, usize, usize)> = Vec::new();
    for s in squops {
        let name = s.read.as_ref().map_or("not found", |(e, _)| e.as_str());
        match groups.iter_mut().find(|g| g.0 == name) {
            Some(g) => {
                g.1 += usize::from(s.right);
                g.2 += 1;
            }
            None => groups.push((name.to_string(), usize::from(s.right), 1)),
        }
    }
    groups.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    if groups.is_empty() {
        return "–".into();
    }
    groups.iter().map(|(name, right, n)| format!("{name} {}", pct(*right, *n))).collect::<Vec<_>>().join(", ")
}

/// The scales (pixels per mm on the mat) the figures are also given between: at 1920 × 1080 the
/// whole mat in view is 0.4–1.0 px/mm, and at 0.6 px/mm a 1 mm overlap is 0.6 px, under the blur.
pub const SCALE_BANDS: [f64; 2] = [0.6, 0.9];

/// The bands of [`SCALE_BANDS`] as a table row's label says them.
pub(super) fn scale_bands_label() -> String {
    let [lo, hi] = SCALE_BANDS;
    format!("frames at < {lo} / {lo}–{hi} / ≥ {hi} px per mm")
}

/// `figure(lo, hi)` for each band of [`SCALE_BANDS`], joined by " / ".
pub(super) fn by_scale(figure: &dyn Fn(f64, f64) -> String) -> String {
    let edges = [0.0, SCALE_BANDS[0], SCALE_BANDS[1], f64::INFINITY];
    edges.windows(2).map(|w| figure(w[0], w[1])).collect::<Vec<_>>().join(" / ")
}

/// The figures as a Markdown table.
pub fn table(results: &[FrameResult]) -> String {
    let analysed: Vec<&FrameResult> = results.iter().filter(|r| r.error.is_none()).collect();
    let mut ms: Vec<f64> = analysed.iter().map(|r| r.ms).collect();
    let mut out = String::new();
    out.push_str("| figure | measured |\n|---|---|\n");
    out.push_str(&format!("| frames analysed | {} |\n", pct(analysed.len(), results.len())));
    for (figure, value) in figures(results) {
        out.push_str(&format!("| {figure} | {value} |\n"));
    }
    out.push_str(&format!("| analyse time incl. calibration, median (ms) | {:.0} |\n", quantile(&mut ms, 0.5)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bundled sample's truth, with a wink of the same colour lying almost wholly under its
    /// first wink (centred 0.6 px away in the picture).
    fn truth_with_hidden_wink() -> (serde_json::Value, usize) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/stills/midgame-00003.json");
        let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).expect("sample truth")).expect("json");
        let winks = v["winks"].as_array_mut().expect("winks");
        let top = winks.iter().position(|w| w["state"] == "in_play").expect("a wink in play");
        let mut hidden = winks[top].clone();
        hidden["id"] = "w_hidden".into();
        hidden["visible_fraction"] = 0.05.into();
        hidden["centre_px"][0] = (hidden["centre_px"][0].as_f64().expect("x") + 0.6).into();
        winks[top]["visible_fraction"] = 1.0.into();
        winks.push(hidden);
        (v, top)
    }

    #[test]
    fn a_wink_found_on_top_of_a_hidden_one_is_matched_to_the_one_that_shows() {
        let (truth, top) = truth_with_hidden_wink();
        // What was found: every wink that shows, the top one read 0.5 px towards the hidden one's
        // centre (nearer it than its own).
        let mut got = truth.clone();
        let winks = got["winks"].as_array_mut().expect("winks");
        winks.retain(|w| w["id"] != "w_hidden");
        winks[top]["centre_px"][0] = (winks[top]["centre_px"][0].as_f64().expect("x") + 0.5).into();
        let (truth, got): (Position, Position) = (serde_json::from_value(truth).expect("truth"), serde_json::from_value(got).expect("got"));
        let mut r = FrameResult::default();
        score(&truth, &got, &mut r);
        assert_eq!(r.found, r.must_find, "{:?}", r.problems);
        assert!(r.problems.iter().all(|p| !p.starts_with("missed")), "{:?}", r.problems);
    }

    #[test]
    fn squops_and_whole_positions_are_also_counted_by_colour_and_by_the_frames_scale() {
        let squop = |margin_mm: f64, right: bool, same_colour: bool| SquopResult { margin_mm, right, same_colour, read: None };
        let frame = |px_per_mm: f64, squops: Vec<SquopResult>, fully_right: bool| FrameResult { px_per_mm, squops, fully_right, ..Default::default() };
        let results = [
            // Coarse: a one-colour squop right, a two-colour one wrong, one under 1 mm left out.
            frame(0.5, vec![squop(1.5, true, true), squop(2.0, false, false), squop(0.7, false, true)], false),
            frame(0.75, vec![squop(1.2, false, true)], false),
            frame(1.2, vec![squop(3.0, true, false), squop(1.0, true, true)], true),
        ];
        let figures = figures(&results);
        let row = |starts: &str| figures.iter().find(|(f, _)| f.starts_with(starts)).map(|(_, v)| v.clone()).unwrap_or_default();
        assert_eq!(row("squops right, margin ≥ 1 mm: winks of one colour"), "66.67% (2/3) / 50.00% (1/2)");
        assert_eq!(row("squops right, margin ≥ 1 mm: frames at"), "50.00% (1/2) / 0.00% (0/1) / 100.00% (2/2)");
        assert_eq!(row("positions fully right: frames at"), "0.00% (0/1) / 0.00% (0/1) / 100.00% (1/1)");
        assert_eq!(row("squops right, margin ≥ 1 mm"), "60.00% (3/5)");
    }

    #[test]
    fn squops_found_are_also_counted_by_whether_they_were_given_sure() {
        let frame = FrameResult { found_squops: vec![(0.99, true), (0.98, false), (0.5, true), (0.6, false), (0.7, false)], ..Default::default() };
        let figures = figures(&[frame]);
        let row = figures.iter().find(|(f, _)| f.starts_with("squops found, right")).map(|(_, v)| v.clone());
        assert_eq!(row.as_deref(), Some("50.00% (1/2) / 33.33% (1/3)"));
    }

    #[test]
    fn footprint_errors_are_also_given_by_how_the_wink_lies() {
        assert_eq!(Lies::of(Some(0), 1.0), Lies::Whole);
        assert_eq!(Lies::of(None, 0.96), Lies::Whole);
        assert_eq!(Lies::of(Some(0), 0.8), Lies::PartlyCovered);
        assert_eq!(Lies::of(Some(2), 1.0), Lies::OnAnother);
        let frame = |errors: Vec<(f64, Lies)>| FrameResult { footprint_errors_mm: errors.iter().map(|e| e.0).collect(), footprint_lies: errors.iter().map(|e| e.1).collect(), ..Default::default() };
        let results = [
            frame(vec![(0.1, Lies::Whole), (0.2, Lies::Whole), (0.9, Lies::OnAnother)]),
            frame(vec![(0.3, Lies::Whole), (1.5, Lies::OnAnother), (0.4, Lies::OnAnother)]),
        ];
        let figures = figures(&results);
        let row = figures.iter().find(|(f, _)| f.ends_with("partly covered / on another wink")).map(|(_, v)| v.clone());
        assert_eq!(row.as_deref(), Some("0.200 / 0.300 (3) / – / 0.900 / 1.500 (3)"));
    }

    #[test]
    fn squops_are_also_counted_by_the_evidence_that_named_the_upper() {
        let squop = |margin_mm: f64, right: bool, read: Option<&str>| SquopResult { margin_mm, right, same_colour: false, read: read.map(|e| (e.to_string(), 0.9)) };
        let frame = FrameResult {
            px_per_mm: 0.7,
            squops: vec![
                squop(2.0, true, Some("overlap_model")),
                squop(1.5, false, Some("overlap_model")),
                squop(3.0, true, Some("overlap_model")),
                squop(5.0, true, Some("rim_edge")),
                squop(1.2, false, None),
                // Under 1 mm: left out.
                squop(0.8, false, Some("rim_edge")),
            ],
            ..Default::default()
        };
        let figures = figures(&[frame]);
        let row = figures.iter().find(|(f, _)| f.ends_with("by what named the upper")).map(|(_, v)| v.clone());
        assert_eq!(row.as_deref(), Some("overlap_model 66.67% (2/3), not found 0.00% (0/1), rim_edge 100.00% (1/1)"));
        assert_eq!(by_evidence(std::iter::empty()), "–");
    }
}
