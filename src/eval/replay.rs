//! How well `replay` follows footage: rendered clips (`winkeye synth --clip`) run through the
//! same loop as `winkeye replay` ([`crate::track::run::replay`]), and the event stream scored
//! against the clip's truth.
//!
//! - **Settles**: each truth settled span must get one `settled` event whose frame lies in it (or
//!   at most [`JUST_AFTER_FRAMES`] after its end); other `settled` events are extra.
//! - **Positions**: each matched `settled` event's position is scored against the span's truth as
//!   the detection eval scores a still ([`super::detection::score`]).
//! - **Shot**: the `shot` event that comes with the second settle must name the wink played as
//!   the one that moved, potted or went off (and no other), and the squops made and broken must
//!   be those between the two truth positions. Winks are compared through the image-position
//!   matching of each settle to its truth, so the referee's own ids need not be the renderer's.
//! - **Ids**: every wink matched in both settles keeps its id across the shot.
//! - **Hands**: no `settled` event in a frame where the truth has a hand over the mat.
//! - **Latency**: the frames from the start of the truth span to the frame whose processing
//!   emitted the event, in seconds, minus the settle time (so 0 is as fast as the settle time
//!   allows); and the wall-clock time from the frame leaving the decoder to the event.

use super::detection::{self, FrameResult};
use super::quantile;
use crate::capture::{open_recorded, prefetch};
use crate::report::position::Position;
use crate::rules::Ruleset;
use crate::track::events::{Event, EventKind};
use crate::track::run::{Hooks, RunError};
use crate::track::settle::SettleOptions;
use crate::track::{Analyser, Referee, Tracker, TrackerOptions};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A `settled` event this many frames after its truth span ends still counts for it: the settle
/// detector confirms a change one frame late (a change must persist over two comparisons).
pub const JUST_AFTER_FRAMES: u64 = 1;

/// The `format` of a clip's truth.
const CLIP_FORMAT: &str = "winkeye.synth-clip/1";

/// A span of frames in a clip's truth, first and last inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// First frame.
    pub first: u64,
    /// Last frame.
    pub last: u64,
}

impl Span {
    fn contains(&self, f: u64) -> bool {
        f >= self.first && f <= self.last
    }
}

/// The shot, as the truth tells it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TruthShot {
    /// The renderer's id of the wink played.
    pub wink: String,
    /// `move`, `squop`, `pot` or `off`.
    pub outcome: String,
    /// The wink it squops, for a squop.
    #[serde(default)]
    pub target: Option<String>,
}

/// A truth settled span.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TruthSettled {
    /// The frames that show it.
    pub frames: Span,
    /// The position.
    pub position: Position,
}

/// Something moving in the truth.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TruthMotion {
    /// The frames.
    pub frames: Span,
    /// `hand` or a wink's id.
    pub what: String,
}

/// A clip's truth document (`winkeye.synth-clip/1`); fields this eval does not use are ignored.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ClipTruth {
    /// The video's file name, beside the truth.
    pub video: String,
    /// Frames per second.
    pub fps: f64,
    /// Number of frames.
    pub frames: u64,
    /// The shot.
    pub shot: TruthShot,
    /// The settled spans.
    pub settled: Vec<TruthSettled>,
    /// The spans in which things move.
    #[serde(default)]
    pub motion: Vec<TruthMotion>,
    /// Spans with a hand over the mat (older truths lack it: then the hand's motion span).
    #[serde(default)]
    pub hand_over_mat: Option<Vec<Span>>,
    /// The first frame after the camera was knocked, if it was.
    #[serde(default)]
    pub bump_frame: Option<u64>,
}

impl ClipTruth {
    /// The first frame of `span` from which the mat itself was at rest: after the last wink
    /// motion, the last hand over the mat and the camera's knock that came within or before it.
    pub fn mat_rest_from(&self, span: &Span) -> u64 {
        let winks = self.motion.iter().filter(|m| m.what != "hand").map(|m| m.frames);
        let knock = self.bump_frame.map(|f| Span { first: f, last: f });
        let moving = winks.chain(self.hand_spans()).chain(knock).filter(|m| m.last < span.last).map(|m| m.last + 1).max().unwrap_or(0);
        moving.min(span.first)
    }

    /// The spans in which a hand is over the mat.
    pub fn hand_spans(&self) -> Vec<Span> {
        match &self.hand_over_mat {
            Some(v) => v.clone(),
            None => self.motion.iter().filter(|m| m.what == "hand").map(|m| m.frames).collect(),
        }
    }
}

/// A clip and its truth.
#[derive(Debug, Clone)]
pub struct ClipCase {
    /// The truth file.
    pub truth_path: PathBuf,
    /// The video.
    pub video: PathBuf,
    /// The truth.
    pub truth: ClipTruth,
}

/// Why the clips could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayEvalError {
    /// The folder could not be listed.
    #[error("cannot list {path}: {source}")]
    List {
        /// The folder.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A clip truth that does not parse.
    #[error("{path}: {message}")]
    Truth {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// No clip truth in the folder.
    #[error("{path} holds no winkeye synth --clip truth (clip-*.json with its video beside it)")]
    Empty {
        /// The folder.
        path: PathBuf,
    },
}

/// Every clip truth in `dir` (`*.json` of format `winkeye.synth-clip/1`) whose video is beside it,
/// sorted by name.
pub fn clip_cases(dir: &Path) -> Result<Vec<ClipCase>, ReplayEvalError> {
    let rd = std::fs::read_dir(dir).map_err(|source| ReplayEvalError::List { path: dir.to_owned(), source })?;
    let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else { continue };
        if value.get("format").and_then(|f| f.as_str()) != Some(CLIP_FORMAT) {
            continue;
        }
        let truth: ClipTruth = serde_json::from_value(value).map_err(|e| ReplayEvalError::Truth { path: path.clone(), message: e.to_string() })?;
        let video = path.with_file_name(&truth.video);
        if !video.is_file() {
            continue;
        }
        out.push(ClipCase { truth_path: path, video, truth });
    }
    if out.is_empty() {
        return Err(ReplayEvalError::Empty { path: dir.to_owned() });
    }
    Ok(out)
}

/// How the shot event compares with the truth.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ShotResult {
    /// The winks reported moved are exactly the one played.
    pub moved_right: bool,
    /// The winks reported potted are exactly the one played for a pot, none otherwise.
    pub potted_right: bool,
    /// The winks reported off are exactly the one played for an off, none otherwise.
    pub off_right: bool,
    /// The squops made are the truth's.
    pub squops_made_right: bool,
    /// The squops broken are the truth's.
    pub squops_broken_right: bool,
}

impl ShotResult {
    /// Every part right.
    pub fn all_right(&self) -> bool {
        self.moved_right && self.potted_right && self.off_right && self.squops_made_right && self.squops_broken_right
    }
}

/// One clip's result.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClipResult {
    /// The video's file name.
    pub clip: String,
    /// The truth's outcome.
    pub outcome: String,
    /// Whether the camera was knocked in the clip.
    pub bumped: bool,
    /// Why the clip could not be replayed.
    pub error: Option<String>,
    /// Frames read.
    pub frames_read: u64,
    /// Truth settled spans.
    pub spans: usize,
    /// Of those, with a `settled` event.
    pub spans_found: usize,
    /// `settled` events matched to no span.
    pub extra_settles: usize,
    /// `settled` events in a frame with a hand over the mat.
    pub settles_under_hand: usize,
    /// Each matched settle's position scored against its truth.
    pub positions: Vec<FrameResult>,
    /// The shot event against the truth (`None` when the second settle was missed).
    pub shot: Option<ShotResult>,
    /// Winks matched in both settles that kept their id, and how many were matched in both.
    pub ids_kept: usize,
    /// See `ids_kept`.
    pub ids_compared: usize,
    /// Per matched settle: seconds from the start of its span to the frame that emitted it,
    /// minus the settle time.
    pub latency_s: Vec<f64>,
    /// Per matched settle: seconds from when the mat came to rest (the wink stopped and no hand
    /// over the mat, by the truth) to the frame that emitted it, minus the settle time. The
    /// truth's span starts only when the hand has left the picture altogether, which can be
    /// later: the referee watches only the mat and a margin round it.
    pub rest_latency_s: Vec<f64>,
    /// Per matched settle: wall-clock ms from its frame leaving the decoder to the event.
    pub wall_ms: Vec<f64>,
    /// `calibration_lost` and `calibration_ok` events.
    pub calibration_lost: usize,
    /// See `calibration_lost`.
    pub calibration_ok: usize,
    /// Frames read per second of wall-clock time, end to end (decode, track, analyse).
    pub frames_per_s: f64,
    /// What was wrong, for a person.
    pub problems: Vec<String>,
}

/// Collects the events of one run with their wall-clock latency.
struct Collect {
    events: Vec<(Event, Duration)>,
}

impl<A: Analyser> Hooks<A> for Collect {
    fn event(&mut self, event: &Event, since_read: Duration) -> Result<(), RunError> {
        self.events.push((event.clone(), since_read));
        Ok(())
    }
}

/// Replays every clip with the settle time `settle_s` and scores it.
pub fn evaluate(cases: &[ClipCase], ruleset: Ruleset, settle_s: f64, progress: &mut dyn FnMut(usize)) -> Vec<ClipResult> {
    let mut out = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        out.push(one(case, ruleset, settle_s));
        progress(i + 1);
    }
    out
}

fn one(case: &ClipCase, ruleset: Ruleset, settle_s: f64) -> ClipResult {
    let mut r = ClipResult {
        clip: case.video.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        outcome: case.truth.shot.outcome.clone(),
        bumped: case.truth.bump_frame.is_some(),
        spans: case.truth.settled.len(),
        ..Default::default()
    };
    let opts = TrackerOptions { settle: SettleOptions { settle_s, ..SettleOptions::default() }, ruleset, source_path: Some(case.video.display().to_string()) };
    let mut tracker = Tracker::new(Referee { ruleset, lens: None, camera_height_mm: None, wink_diameters: None }, opts, None);
    // As `winkeye replay` reads footage: frames only the settle detector sees decoded reduced.
    let opened = open_recorded(&case.video).and_then(|mut s| {
        if let Some((width, _)) = s.frame_size() {
            s.reduce(tracker.decode_reduction(width));
        }
        prefetch(s, 4)
    });
    let mut source = match opened {
        Ok(s) => s,
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    let mut collect = Collect { events: Vec::new() };
    let summary = match crate::track::run::replay(&mut source, &mut tracker, 1, &mut collect) {
        Ok(s) => s,
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    r.frames_read = summary.read;
    r.frames_per_s = summary.read as f64 / summary.elapsed.as_secs_f64().max(1e-9);
    score(&case.truth, &collect.events, settle_s, &mut r);
    r
}

/// Scores an event stream against a clip's truth.
pub fn score(truth: &ClipTruth, events: &[(Event, Duration)], settle_s: f64, r: &mut ClipResult) {
    let settles: Vec<(usize, &Position, u64, Duration)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, (e, d))| match &e.kind {
            EventKind::Settled { position } => Some((i, position.as_ref(), e.frame, *d)),
            _ => None,
        })
        .collect();
    r.calibration_lost = events.iter().filter(|(e, _)| matches!(e.kind, EventKind::CalibrationLost { .. })).count();
    r.calibration_ok = events.iter().filter(|(e, _)| matches!(e.kind, EventKind::CalibrationOk { .. })).count();
    // Each span takes the first unclaimed settle in it (or just after it).
    let mut claimed = vec![false; settles.len()];
    let mut matched: Vec<Option<usize>> = Vec::new();
    for (k, span) in truth.settled.iter().enumerate() {
        let window = Span { first: span.frames.first, last: span.frames.last + JUST_AFTER_FRAMES };
        let hit = (0..settles.len()).find(|&s| !claimed[s] && window.contains(settles[s].2));
        if let Some(s) = hit {
            claimed[s] = true;
        } else {
            r.problems.push(format!("settle {k} (frames {}-{}) missed", span.frames.first, span.frames.last));
        }
        matched.push(hit);
    }
    r.spans_found = matched.iter().flatten().count();
    for (s, c) in claimed.iter().enumerate() {
        if !c {
            r.extra_settles += 1;
            r.problems.push(format!("extra settle at frame {}", settles[s].2));
        }
    }
    let hands = truth.hand_spans();
    for (_, _, f, _) in &settles {
        if hands.iter().any(|h| h.contains(*f)) {
            r.settles_under_hand += 1;
            r.problems.push(format!("settled at frame {f} with a hand over the mat"));
        }
    }
    // Positions, and the truth-to-referee id map of each settle.
    let mut maps: Vec<Option<BTreeMap<String, String>>> = Vec::new();
    for (k, (span, m)) in truth.settled.iter().zip(&matched).enumerate() {
        let Some(s) = *m else {
            maps.push(None);
            continue;
        };
        let (_, got, frame, since) = settles[s];
        let mut fr = FrameResult { image: format!("{} settle {k} (frame {frame})", r.clip), ..Default::default() };
        detection::score(&span.position, got, &mut fr);
        for p in &fr.problems {
            r.problems.push(format!("settle {k}: {p}"));
        }
        maps.push(Some(fr.pairs.iter().cloned().collect()));
        r.positions.push(fr);
        let secs = |from: u64| (frame as f64 - from as f64) / truth.fps.max(1e-9) - settle_s;
        r.latency_s.push(secs(span.frames.first));
        r.rest_latency_s.push(secs(truth.mat_rest_from(&span.frames)));
        r.wall_ms.push(since.as_secs_f64() * 1000.0);
    }
    // The shot: the one that comes with the second settle.
    let (Some(Some(before)), Some(Some(after)), Some(Some(s1))) = (maps.first(), maps.get(1), matched.get(1)) else { return };
    let settle_index = settles[*s1].0;
    let shot = events[settle_index..].iter().take_while(|(e, _)| e.frame == settles[*s1].2).find_map(|(e, _)| match &e.kind {
        EventKind::Shot(s) => Some(s),
        _ => None,
    });
    let Some(shot) = shot else {
        r.shot = Some(ShotResult::default());
        r.problems.push("no shot event with the second settle".into());
        return;
    };
    let played = before.get(&truth.shot.wink);
    let only_played = |ids: &BTreeSet<String>, expect: bool| -> bool {
        match (expect, played) {
            (true, Some(p)) => ids.len() == 1 && ids.contains(p),
            (true, None) => false,
            (false, _) => ids.is_empty(),
        }
    };
    let moved: BTreeSet<String> = shot.moved.iter().map(|m| m.id.clone()).collect();
    let potted: BTreeSet<String> = shot.potted.iter().cloned().collect();
    let off: BTreeSet<String> = shot.off.iter().cloned().collect();
    let pairs = |p: &Position| -> BTreeSet<(String, String)> { p.squops.iter().map(|s| (s.upper.clone(), s.lower.clone())).collect() };
    let (t0, t1) = (pairs(&truth.settled[0].position), pairs(&truth.settled[1].position));
    // Truth squops in the referee's ids (None when a wink in it was not matched).
    let mapped = |set: BTreeSet<(String, String)>| -> Option<BTreeSet<(String, String)>> { set.into_iter().map(|(u, l)| Some((before.get(&u)?.clone(), before.get(&l)?.clone()))).collect() };
    let got_made: BTreeSet<(String, String)> = shot.squops_made.iter().map(|s| (s.upper.clone(), s.lower.clone())).collect();
    let got_broken: BTreeSet<(String, String)> = shot.squops_broken.iter().map(|s| (s.upper.clone(), s.lower.clone())).collect();
    let result = ShotResult {
        moved_right: only_played(&moved, true),
        potted_right: only_played(&potted, truth.shot.outcome == "pot"),
        off_right: only_played(&off, truth.shot.outcome == "off"),
        squops_made_right: mapped(t1.difference(&t0).cloned().collect()).is_some_and(|m| m == got_made),
        squops_broken_right: mapped(t0.difference(&t1).cloned().collect()).is_some_and(|m| m == got_broken),
    };
    if !result.all_right() {
        r.problems.push(format!(
            "shot: {} {} (truth {}) reported as moved {moved:?}, potted {potted:?}, off {off:?}, squops made {got_made:?}, broken {got_broken:?}",
            truth.shot.outcome,
            truth.shot.wink,
            played.map_or("unmatched".to_string(), |p| format!("our {p}"))
        ));
    }
    r.shot = Some(result);
    for (tid, gid) in before {
        if let Some(g1) = after.get(tid) {
            r.ids_compared += 1;
            if g1 == gid {
                r.ids_kept += 1;
            } else {
                r.problems.push(format!("{tid} was {gid}, now {g1}"));
            }
        }
    }
}

fn pct(a: usize, b: usize) -> String {
    if b == 0 {
        "–".into()
    } else {
        format!("{:.1}% ({a}/{b})", 100.0 * a as f64 / b as f64)
    }
}

/// The figures as a Markdown table.
pub fn table(results: &[ClipResult], settle_s: f64) -> String {
    let ok: Vec<&ClipResult> = results.iter().filter(|r| r.error.is_none()).collect();
    let sum = |f: fn(&ClipResult) -> usize| ok.iter().map(|r| f(r)).sum::<usize>();
    let mut out = String::new();
    out.push_str("| figure | measured |\n|---|---|\n");
    out.push_str(&format!("| clips replayed | {} |\n", pct(ok.len(), results.len())));
    out.push_str(&format!("| settled spans with a settled event | {} |\n", pct(sum(|r| r.spans_found), sum(|r| r.spans))));
    out.push_str(&format!("| settled events missed / extra | {} / {} |\n", sum(|r| r.spans - r.spans_found), sum(|r| r.extra_settles)));
    out.push_str(&format!("| settled events while a hand is over the mat | {} |\n", sum(|r| r.settles_under_hand)));
    let positions: Vec<FrameResult> = ok.iter().flat_map(|r| r.positions.iter().cloned()).collect();
    for (figure, value) in detection::figures(&positions) {
        out.push_str(&format!("| settled positions: {figure} | {value} |\n"));
    }
    let shots: Vec<(&str, &ShotResult)> = ok.iter().filter_map(|r| r.shot.as_ref().map(|s| (r.outcome.as_str(), s))).collect();
    let attempted = ok.iter().filter(|r| r.spans >= 2).count();
    let count = |f: fn(&ShotResult) -> bool| shots.iter().filter(|(_, s)| f(s)).count();
    out.push_str(&format!("| shot events wholly right | {} |\n", pct(count(ShotResult::all_right), attempted)));
    for outcome in ["move", "squop", "pot", "off"] {
        let n = ok.iter().filter(|r| r.outcome == outcome && r.spans >= 2).count();
        if n > 0 {
            let right = shots.iter().filter(|(o, s)| *o == outcome && s.all_right()).count();
            out.push_str(&format!("| … {outcome} | {} |\n", pct(right, n)));
        }
    }
    out.push_str(&format!("| shot: the wink played, and only it, moved | {} |\n", pct(count(|s| s.moved_right), attempted)));
    out.push_str(&format!("| shot: potted right | {} |\n", pct(count(|s| s.potted_right), attempted)));
    out.push_str(&format!("| shot: off right | {} |\n", pct(count(|s| s.off_right), attempted)));
    out.push_str(&format!("| shot: squops made right | {} |\n", pct(count(|s| s.squops_made_right), attempted)));
    out.push_str(&format!("| shot: squops broken right | {} |\n", pct(count(|s| s.squops_broken_right), attempted)));
    out.push_str(&format!("| ids kept across the shot | {} |\n", pct(sum(|r| r.ids_kept), sum(|r| r.ids_compared))));
    let bumped: Vec<&&ClipResult> = ok.iter().filter(|r| r.bumped).collect();
    if !bumped.is_empty() {
        let recovered = bumped.iter().filter(|r| r.calibration_lost >= 1 && r.calibration_ok >= 1).count();
        out.push_str(&format!("| camera knocked: calibration lost and found again | {} |\n", pct(recovered, bumped.len())));
    }
    out.push_str(&format!("| calibration lost with no knock | {} |\n", ok.iter().filter(|r| !r.bumped).map(|r| r.calibration_lost).sum::<usize>()));
    let mut lat: Vec<f64> = ok.iter().flat_map(|r| r.latency_s.iter().copied()).collect();
    let mut rest: Vec<f64> = ok.iter().flat_map(|r| r.rest_latency_s.iter().copied()).collect();
    let mut wall: Vec<f64> = ok.iter().flat_map(|r| r.wall_ms.iter().copied()).collect();
    let mut fps: Vec<f64> = ok.iter().map(|r| r.frames_per_s).collect();
    out.push_str(&format!(
        "| settled event after the truth span starts, minus the {settle_s} s settle time, min / median / max (s) | {:.3} / {:.3} / {:.3} |\n",
        quantile(&mut lat, 0.0),
        quantile(&mut lat, 0.5),
        quantile(&mut lat, 1.0)
    ));
    out.push_str(&format!(
        "| settled event after the mat came to rest, minus the settle time, min / median / max (s) | {:.3} / {:.3} / {:.3} |\n",
        quantile(&mut rest, 0.0),
        quantile(&mut rest, 0.5),
        quantile(&mut rest, 1.0)
    ));
    out.push_str(&format!("| frame read → settled event, wall clock, median / max (ms) | {:.0} / {:.0} |\n", quantile(&mut wall, 0.5), quantile(&mut wall, 1.0)));
    out.push_str(&format!("| replay speed end to end, median (frames/s) | {:.0} |\n", quantile(&mut fps, 0.5)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{MatPoint, PixelPoint};
    use crate::report::position::{Colour, Wink, WinkSize, WinkState};
    use crate::track::diff::{Moved, Shot};

    fn wink(id: &str, colour: Colour, x: f64, y: f64) -> Wink {
        Wink {
            id: id.into(),
            colour,
            size: WinkSize::Small,
            diameter_mm: Some(16.0),
            centre_px: Some(PixelPoint::new(x, y)),
            centre_mm: Some(MatPoint::new(x, y)),
            level: Some(0),
            state: WinkState::InPlay,
            confidence: Some(1.0),
            left_mm: None,
            extra: Default::default(),
        }
    }

    fn truth() -> ClipTruth {
        let before = Position::of_winks(vec![wink("w1", Colour::Blue, 100.0, 100.0), wink("w2", Colour::Red, 300.0, 100.0)], Vec::new());
        let after = Position::of_winks(vec![wink("w1", Colour::Blue, 200.0, 150.0), wink("w2", Colour::Red, 300.0, 100.0)], Vec::new());
        ClipTruth {
            video: "clip.avi".into(),
            fps: 30.0,
            frames: 100,
            shot: TruthShot { wink: "w1".into(), outcome: "move".into(), target: None },
            settled: vec![TruthSettled { frames: Span { first: 0, last: 20 }, position: before }, TruthSettled { frames: Span { first: 60, last: 99 }, position: after }],
            motion: vec![TruthMotion { frames: Span { first: 21, last: 59 }, what: "hand".into() }],
            hand_over_mat: Some(vec![Span { first: 25, last: 55 }]),
            bump_frame: None,
        }
    }

    /// The referee's view: its own ids (a, b), the same places.
    fn settled(frame: u64, pos: &Position) -> (Event, Duration) {
        let mut p = pos.clone();
        for w in &mut p.winks {
            w.id = if w.id == "w1" { "a".into() } else { "b".into() };
        }
        (Event::new(frame, frame as f64 / 30.0, EventKind::Settled { position: Box::new(p) }), Duration::from_millis(40))
    }

    #[test]
    fn a_right_stream_scores_right_and_a_wrong_one_does_not() {
        let t = truth();
        let moved = Moved { id: "a".into(), colour: Colour::Blue, size: WinkSize::Small, from_mm: None, to_mm: None, from_state: WinkState::InPlay, to_state: WinkState::InPlay };
        let shot = Shot { moved: vec![moved], ..Shot::default() };
        let good = vec![settled(15, &t.settled[0].position), settled(75, &t.settled[1].position), (Event::new(75, 2.5, EventKind::Shot(shot.clone())), Duration::ZERO)];
        let mut r = ClipResult::default();
        score(&t, &good, 0.5, &mut r);
        assert_eq!((r.spans_found, r.extra_settles, r.settles_under_hand), (2, 0, 0), "{:?}", r.problems);
        assert!(r.shot.as_ref().is_some_and(ShotResult::all_right), "{:?}", r.problems);
        assert_eq!((r.ids_kept, r.ids_compared), (2, 2));
        assert!((r.latency_s[0] - 0.0).abs() < 1e-9 && (r.latency_s[1] - 0.0).abs() < 1e-9, "{:?}", r.latency_s);
        assert!(r.positions.iter().all(|p| p.fully_right));

        // A settle while the hand is over the mat, the wrong wink moved, and the last span missed.
        let wrong_shot = Shot { moved: vec![Moved { id: "b".into(), ..shot.moved[0].clone() }], ..Shot::default() };
        let bad = vec![settled(15, &t.settled[0].position), settled(40, &t.settled[0].position), (Event::new(40, 1.3, EventKind::Shot(wrong_shot)), Duration::ZERO)];
        let mut r = ClipResult::default();
        score(&t, &bad, 0.5, &mut r);
        assert_eq!((r.spans_found, r.extra_settles, r.settles_under_hand), (1, 1, 1), "{:?}", r.problems);
        assert!(r.shot.is_none(), "no second settle, no shot to score");
    }
}
