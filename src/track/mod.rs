//! Tracking a stream: frames in, `winkeye.event/1` events out.
//!
//! Every frame goes through the cheap settle detector ([`settle`]); only a frame that has been
//! still for the settle time, with nothing but winks changed on the mat, is analysed (once per
//! settle), tracked against the previous settled position ([`diff`]) and reported ([`events`]).
//! The calibration is made from the first still frame (or given), checked cheaply on each settle
//! and, when it no longer fits (the mat or camera was bumped), reported lost, remade and reported
//! good again.

pub mod annotate;
pub mod diff;
pub mod events;
pub mod run;
pub mod settle;
pub mod warp;

use crate::analyze::{analyze_frame, Analysis, AnalyzeError, AnalyzeOptions};
use crate::calibrate::{self, lens::Lens, CalibrateError, CalibrateOptions, Calibration};
use crate::capture::Frame;
use crate::report::position::{Position, Source};
use crate::rules::Ruleset;
use events::{Event, EventKind};
use opencv::core::Mat;
use opencv::prelude::*;
use settle::{Presence, SettleDetector, SettleOptions, Shrinker, SmallFrame, Step};

/// What the tracker asks of the vision pipeline; the real one is [`Referee`], tests use fakes.
pub trait Analyser {
    /// Calibrates a frame from scratch.
    fn calibrate(&mut self, frame: &Mat) -> Result<Calibration, CalibrateError>;
    /// Whether `cal` still fits `frame` (a cheap check).
    fn still_fits(&mut self, frame: &Mat, cal: &Calibration) -> Result<bool, CalibrateError>;
    /// The position in a settled frame, with what it was made from.
    fn analyse(&mut self, frame: &Mat, cal: &Calibration, source: Source) -> Result<Analysis, AnalyzeError>;
}

/// The real pipeline: [`calibrate::calibrate_frame`], [`calibrate::check_fit`] and
/// [`analyze_frame`].
#[derive(Debug, Clone)]
pub struct Referee {
    /// The ruleset.
    pub ruleset: Ruleset,
    /// A lens from a chessboard calibration, used when calibrating.
    pub lens: Option<Lens>,
    /// The camera's height above the mat as measured, mm, used when calibrating.
    pub camera_height_mm: Option<f64>,
    /// The set's winks as measured, mm across, when stated.
    pub wink_diameters: Option<crate::report::position::NominalDiameters>,
}

impl Analyser for Referee {
    fn calibrate(&mut self, frame: &Mat) -> Result<Calibration, CalibrateError> {
        calibrate::calibrate_frame(frame, &CalibrateOptions { mat: self.ruleset.spec().mat, corners: None, lens: self.lens.clone(), camera_height_mm: self.camera_height_mm })
    }
    fn still_fits(&mut self, frame: &Mat, cal: &Calibration) -> Result<bool, CalibrateError> {
        Ok(calibrate::check_fit(frame, cal)?.fits())
    }
    fn analyse(&mut self, frame: &Mat, cal: &Calibration, source: Source) -> Result<Analysis, AnalyzeError> {
        let mut opts = AnalyzeOptions::new(self.ruleset);
        opts.calibration = Some(cal.clone());
        opts.lens = self.lens.clone();
        opts.source = source;
        opts.wink_diameters = self.wink_diameters;
        analyze_frame(frame, &opts)
    }
}

/// What to track with.
#[derive(Debug, Clone)]
pub struct TrackerOptions {
    /// Settle detection.
    pub settle: SettleOptions,
    /// The ruleset (for tracking and the rules applied to tracked positions).
    pub ruleset: Ruleset,
    /// What goes into each position's `source.path` (the video file, or the camera).
    pub source_path: Option<String>,
}

/// Why tracking stopped.
#[derive(Debug, thiserror::Error)]
pub enum TrackError {
    /// A frame could not be shrunk (not 8-bit BGR).
    #[error("frame {frame}: {source}")]
    Frame {
        /// The frame's index.
        frame: u64,
        /// OpenCV's error.
        source: opencv::Error,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CalState {
    /// Not yet tried (or given and not yet checked).
    Unknown,
    Good,
    Lost,
}

/// Counts kept while tracking.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrackStats {
    /// Frames pushed.
    pub processed: u64,
    /// Settled positions emitted.
    pub settled: u64,
    /// Still candidates refused because something other than winks was over the mat.
    pub refused: u64,
    /// Settled frames whose analysis failed.
    pub analysis_failed: u64,
    /// Still frames in which the mat could not be calibrated.
    pub calibration_failed: u64,
}

/// Drives settle detection, calibration, analysis and tracking over a stream of frames.
pub struct Tracker<A: Analyser> {
    analyser: A,
    opts: TrackerOptions,
    detector: SettleDetector,
    shrinker: Option<Shrinker>,
    small: SmallFrame,
    calibration: Option<Calibration>,
    cal_state: CalState,
    /// The analysis of the current settled position, its position the tracked one.
    analysis: Option<Analysis>,
    /// The last settled frame at full size and the calibration it was seen through: after a
    /// knock it is redrawn into the new view to serve as the settle detector's reference again.
    settled_frame: Option<(Mat, Calibration)>,
    stats: TrackStats,
    warnings: Vec<String>,
}

impl<A: Analyser> Tracker<A> {
    /// A tracker; `calibration` is used as given (checked on the first settle), else the first
    /// still frame is calibrated.
    pub fn new(analyser: A, opts: TrackerOptions, calibration: Option<Calibration>) -> Tracker<A> {
        Tracker {
            analyser,
            detector: SettleDetector::new(opts.settle.clone()),
            opts,
            shrinker: None,
            small: SmallFrame::default(),
            calibration,
            cal_state: CalState::Unknown,
            analysis: None,
            settled_frame: None,
            stats: TrackStats::default(),
            warnings: Vec::new(),
        }
    }

    /// The current settled position (tracked), if any.
    pub fn current(&self) -> Option<&Position> {
        self.analysis.as_ref().map(|a| &a.position)
    }

    /// The analysis behind the current settled position (its detections renamed to the tracked
    /// ids, its position the tracked one), for drawing the referee's view over the footage.
    pub fn current_analysis(&self) -> Option<&Analysis> {
        self.analysis.as_ref()
    }

    /// The calibration in use, if any.
    pub fn calibration(&self) -> Option<&Calibration> {
        self.calibration.as_ref()
    }

    /// The counts so far.
    pub fn stats(&self) -> TrackStats {
        self.stats
    }

    /// Messages for a person (analysis failures and the like) since the last call.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Feeds one frame; events it causes are appended to `out`.
    pub fn push(&mut self, frame: &Frame, out: &mut Vec<Event>) -> Result<(), TrackError> {
        let width = frame.full_size.0;
        let shrinker = self.shrinker.get_or_insert_with(|| Shrinker::new(width, self.opts.settle.target_width));
        let shrunk = if shrinker.accepts(frame.reduced) {
            shrinker.shrink_reduced(&frame.image, frame.reduced, frame.full_size, &mut self.small)
        } else {
            frame.full().and_then(|full| shrinker.shrink(&full, &mut self.small))
        };
        shrunk.map_err(|source| TrackError::Frame { frame: frame.index, source })?;
        let factor = shrinker.factor();
        self.stats.processed += 1;
        if self.detector.region().is_none_or(|r| r.width != self.small.width || r.height != self.small.height) {
            self.update_region(factor);
        }
        match self.detector.push(&self.small, frame.t_s, factor, width) {
            Step::Nothing => {}
            Step::Motion { area_mm2 } => out.push(Event::new(frame.index, frame.t_s, EventKind::Motion { area_mm2: area_mm2.round() })),
            Step::Candidate { still_s } => self.candidate(frame, still_s, factor, out),
        }
        Ok(())
    }

    /// The footage ended with `last` (the last frame pushed): a scene still since the last
    /// motion (or since the start: one photo, a few frames) but for less than the settle time
    /// has not been looked at, and is taken as it came to rest. Nothing while it was moving, or
    /// once that stillness was settled or refused.
    pub fn end_of_footage(&mut self, last: &Frame, out: &mut Vec<Event>) {
        let Some(still_s) = self.detector.unlooked_still(last.t_s) else { return };
        let Some(factor) = self.shrinker.as_ref().map(Shrinker::factor) else { return };
        self.candidate(last, still_s, factor, out);
    }

    /// The JPEG decoding reduction (1, 2, 4 or 8) that frames `frame_width` pixels wide may come
    /// at and still shrink to the same settle cells: what to ask of [`crate::capture::FrameSource::reduce`].
    pub fn decode_reduction(&self, frame_width: u32) -> u32 {
        Shrinker::new(frame_width, self.opts.settle.target_width).decode_reduction()
    }

    fn update_region(&mut self, factor: i32) {
        let (w, h) = (self.small.width, self.small.height);
        let region = self.calibration.as_ref().map(|c| settle::Region::from_calibration(c, w, h, factor));
        self.detector.set_region(region);
    }

    /// Calibrates `frame` afresh; reports a change of state.
    fn recalibrate(&mut self, frame: &Frame, factor: i32, out: &mut Vec<Event>) -> bool {
        match self.analyser.calibrate(&frame.image) {
            Ok(cal) => {
                if self.cal_state == CalState::Lost {
                    out.push(Event::new(frame.index, frame.t_s, EventKind::CalibrationOk { rms_px: crate::report::round3(cal.rms_px) }));
                }
                self.calibration = Some(cal);
                self.cal_state = CalState::Good;
                self.update_region(factor);
                self.rebase_reference(frame);
                true
            }
            Err(e) => {
                self.stats.calibration_failed += 1;
                self.lose_calibration(frame, format!("cannot calibrate: {e}"), out);
                false
            }
        }
    }

    /// After a recalibration, the last settled frame redrawn into the new view becomes the settle
    /// detector's reference again: the picture comparison that keeps winks the detector misses in
    /// place, and resting winks read a few mm off from moving, survives a knocked camera.
    fn rebase_reference(&mut self, frame: &Frame) {
        let (Some((old, old_cal)), Some(cal), Some(shrinker)) = (&self.settled_frame, &self.calibration, self.shrinker.as_mut()) else { return };
        if old.cols() != frame.image.cols() || old.rows() != frame.image.rows() {
            return;
        }
        // The two calibrations may have put +x at opposite ends of the mat; a knock moves the
        // corners a little, so the old one's convention is the one whose corners lie nearer.
        let spread = |c: &Calibration| c.corners_px.iter().zip(&cal.corners_px).map(|(a, b)| a.distance(*b)).sum::<f64>();
        let turned = old_cal.half_turned(old_cal.orientation);
        let old_cal = if spread(&turned) < spread(old_cal) { &turned } else { old_cal };
        let mut small = SmallFrame::default();
        match warp::between(old, old_cal, cal).and_then(|w| shrinker.shrink(&w, &mut small)) {
            Ok(()) => self.detector.set_reference(small),
            Err(e) => self.warnings.push(format!("frame {}: the last settled frame could not be redrawn in the new view: {e}", frame.index)),
        }
    }

    fn lose_calibration(&mut self, frame: &Frame, reason: String, out: &mut Vec<Event>) {
        if self.cal_state != CalState::Lost {
            out.push(Event::new(frame.index, frame.t_s, EventKind::CalibrationLost { reason }));
        }
        self.cal_state = CalState::Lost;
        self.calibration = None;
        self.detector.forget_reference();
        self.detector.set_region(None);
    }

    /// Whether the calibration still fits; a failed check counts as not fitting.
    fn fits(&mut self, frame: &Frame) -> bool {
        let Some(cal) = &self.calibration else { return false };
        match self.analyser.still_fits(&frame.image, cal) {
            Ok(f) => f,
            Err(e) => {
                self.warnings.push(format!("frame {}: calibration check failed: {e}", frame.index));
                false
            }
        }
    }

    fn candidate(&mut self, frame: &Frame, still_s: f64, factor: i32, out: &mut Vec<Event>) {
        // Calibration and analysis need the full-size picture (decoded here only for candidates
        // when the source decodes reduced frames).
        let decoded;
        let frame = if frame.reduced > 1 {
            match frame.full() {
                Ok(image) => {
                    decoded = Frame::new(frame.index, frame.t_s, image.into_owned());
                    &decoded
                }
                Err(e) => {
                    self.warnings.push(format!("frame {}: cannot decode at full size: {e}", frame.index));
                    self.detector.refuse();
                    return;
                }
            }
        } else {
            frame
        };
        let mut checked = false;
        if self.calibration.is_none() {
            if !self.recalibrate(frame, factor, out) {
                self.detector.refuse();
                return;
            }
            checked = true;
        } else if self.cal_state == CalState::Unknown {
            // A calibration handed in (from a file) is checked on the first still frame, before
            // anything is judged inside the mat it puts in the picture.
            if !self.fits(frame) {
                self.lose_calibration(frame, "the saved calibration does not fit this footage (the mat or the camera moved)".into(), out);
                if !self.recalibrate(frame, factor, out) {
                    self.detector.refuse();
                    return;
                }
            }
            checked = true;
        }
        match self.detector.presence(&self.small, still_s) {
            Presence::Clear => {}
            Presence::Foreign { .. } => {
                self.stats.refused += 1;
                self.detector.refuse();
                return;
            }
            Presence::LargeChange { .. } => {
                // Everything changed but nothing foreign lies on the felt: perhaps the camera or
                // the mat moved. Otherwise (a hand the felt test cannot see, light) wait.
                let felt_clear = self.detector.region().is_some_and(|r| settle::nothing_foreign(&self.small, r, &self.opts.settle) == Presence::Clear);
                if !felt_clear || self.fits(frame) {
                    self.stats.refused += 1;
                    self.detector.refuse();
                    return;
                }
                self.lose_calibration(frame, "the mat or the camera moved".into(), out);
                if !self.recalibrate(frame, factor, out) {
                    self.detector.refuse();
                    return;
                }
                checked = true;
            }
        }
        if !checked && !self.fits(frame) {
            self.lose_calibration(frame, "the mat or the camera moved".into(), out);
            if !self.recalibrate(frame, factor, out) {
                self.detector.refuse();
                return;
            }
        }
        if self.cal_state == CalState::Unknown {
            self.cal_state = CalState::Good;
        }
        let Some(cal) = &self.calibration else {
            self.detector.refuse();
            return;
        };
        let source = Source {
            path: self.opts.source_path.clone(),
            width: Some(frame.image.cols().max(0) as u32),
            height: Some(frame.image.rows().max(0) as u32),
            frame: Some(frame.index),
            t_s: Some(crate::report::round3(frame.t_s)),
            extra: Default::default(),
        };
        let analysed = self.analyser.analyse(&frame.image, cal, source);
        // Where the picture changed since the last settle (before this frame becomes the new
        // reference): a wink the detector missed this time where nothing changed is still there.
        let change = self.detector.changed_since_reference(&self.small);
        // Either way this still scene has been dealt with: the next settle needs motion first.
        self.detector.accept(&self.small);
        // Whether the camera's view changed since the last settle (a knock, recalibrated).
        let view_changed = self.settled_frame.as_ref().is_some_and(|(_, old)| old != cal);
        self.settled_frame = frame.image.try_clone().ok().map(|m| (m, cal.clone()));
        let mut analysis = match analysed {
            Ok(a) => a,
            Err(e) => {
                self.stats.analysis_failed += 1;
                self.warnings.push(format!("frame {}: analysis failed: {e}", frame.index));
                return;
            }
        };
        // Footprints are mapped into the picture by the analysis's calibration: the one its mat
        // frame is in (the analysis may have turned the tracker's half round, by the winks in
        // their home corners).
        let (w, h, cal) = (self.small.width, self.small.height, &analysis.calibration);
        let unchanged = |p: crate::geometry::MatPoint, r_mm: f64| -> bool {
            let Some(change) = &change else { return false };
            let (Some(c), Some(e)) = (cal.mat_to_image(p), cal.mat_to_image(p + crate::geometry::MatPoint::new(r_mm, 0.0))) else { return false };
            change.clear_around(c, c.distance(e), factor, w, h)
        };
        let tracked = match diff::track(self.current(), &analysis.position, self.opts.ruleset, &unchanged) {
            Ok(t) => t,
            Err(e) => {
                self.warnings.push(format!("frame {}: tracking failed, ids start afresh: {e}", frame.index));
                let ids = analysis.position.winks.iter().map(|w| (w.id.clone(), w.id.clone())).collect();
                diff::Tracked { new_flags: analysis.position.flags.clone(), position: analysis.position.clone(), shot: diff::Shot::default(), ids }
            }
        };
        for f in &mut analysis.detections.found {
            if let Some(id) = tracked.ids.get(&f.id) {
                f.id.clone_from(id);
            }
        }
        let mut tracked = tracked;
        if view_changed {
            reproject_kept(&mut tracked.position, &analysis.calibration);
        }
        let had_previous = self.analysis.is_some();
        out.push(Event::new(frame.index, frame.t_s, EventKind::Settled { position: Box::new(tracked.position.clone()) }));
        if had_previous {
            out.push(Event::new(frame.index, frame.t_s, EventKind::Shot(tracked.shot)));
        }
        for flag in tracked.new_flags {
            out.push(Event::new(frame.index, frame.t_s, EventKind::Flag { flag }));
        }
        analysis.position = tracked.position;
        self.analysis = Some(analysis);
        self.stats.settled += 1;
    }
}

/// Winks kept by reasoning carry the picture position they were last seen at; after the view
/// changed (a knock) that is where the old view had them, so it is taken from their footprint
/// through the new calibration instead (the top face of a flat wink, straight above it).
fn reproject_kept(position: &mut Position, cal: &Calibration) {
    for w in position.winks.iter_mut().filter(|w| w.extra.contains_key("inferred")) {
        if let Some(p) = w.centre_mm {
            w.centre_px = cal.mat_to_image_at(p, crate::detect::fit::THICKNESS_MM);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{MatSpec, PixelPoint};

    /// A calibration of a 1828.8 × 914.4 mm mat filling a 320 × 180 frame's middle.
    pub(crate) fn flat_calibration(w: u32, h: u32) -> Result<Calibration, Box<dyn std::error::Error>> {
        calibration_with_corners(w, h, [(20.0, 20.0), (300.0, 20.0), (300.0, 160.0), (20.0, 160.0)])
    }

    /// A pinhole calibration putting the mat's corners (contract order) at these pixels.
    pub(crate) fn calibration_with_corners(w: u32, h: u32, corners: [(f64, f64); 4]) -> Result<Calibration, Box<dyn std::error::Error>> {
        let mat = MatSpec::STANDARD;
        let corners = corners.map(|(x, y)| PixelPoint::new(x, y));
        let g = calibrate::fit::homography_from_4(&mat.corners(), &corners).ok_or("homography")?;
        Ok(Calibration {
            width: w,
            height: h,
            mat,
            lens: Lens::Pinhole,
            img_from_mat: g,
            mat_from_img: g.try_inverse().ok_or("inverse")?,
            corners_px: corners,
            rms_px: 0.1,
            orientation: calibrate::Orientation::Corners,
            edge_points: 0,
            baseline_points: 0,
            baselines_found: [None; 4],
            felt_lab: [120.0, 128.0, 128.0],
            camera: None,
            pot_check: None,
            wink_diameters: None,
            blue_corner: crate::geometry::Corner::NegXPosY,
        })
    }

    struct Fake {
        cal: Calibration,
        fits: bool,
        analysed: Vec<u64>,
        calibrations: usize,
        /// The calibration of a knocked camera (frames whose felt no longer covers (22, 22)).
        bumped: Option<Calibration>,
        /// What each analysis finds, in turn (none once these run out).
        seen: Vec<Vec<crate::report::position::Wink>>,
    }

    impl Analyser for Fake {
        fn calibrate(&mut self, frame: &Mat) -> Result<Calibration, CalibrateError> {
            self.calibrations += 1;
            let felt = frame.at_2d::<opencv::core::Vec3b>(22, 22).map(|p| p[1] == 120).unwrap_or(false);
            Ok(self.bumped.clone().filter(|_| !felt).unwrap_or_else(|| self.cal.clone()))
        }
        fn still_fits(&mut self, frame: &Mat, _cal: &Calibration) -> Result<bool, CalibrateError> {
            // Fits while the mat's corner is where it was first seen (not bumped).
            let felt = frame.at_2d::<opencv::core::Vec3b>(22, 22).map(|p| p[1] == 120).unwrap_or(false);
            Ok(self.fits && felt)
        }
        fn analyse(&mut self, _frame: &Mat, cal: &Calibration, source: Source) -> Result<Analysis, AnalyzeError> {
            let winks = self.seen.get(self.analysed.len()).cloned().unwrap_or_default();
            self.analysed.push(source.frame.unwrap_or(0));
            let position = Position { source: Some(source), ..Position::of_winks(winks, Vec::new()) };
            Ok(Analysis { position, calibration: cal.clone(), detections: Default::default() })
        }
    }

    /// Grey felt with a blob (a wink) at `x`, and optionally a skin-coloured hand; `bump` shifts
    /// the whole scene (the camera was knocked).
    fn frame(index: u64, wink_x: i32, hand: bool, bump: i32) -> Result<Frame, Box<dyn std::error::Error>> {
        use opencv::core::{Point, Scalar};
        let mut m = Mat::new_rows_cols_with_default(180, 320, opencv::core::CV_8UC3, Scalar::new(60.0, 60.0, 60.0, 0.0))?;
        opencv::imgproc::rectangle_points(&mut m, Point::new(20 + bump, 20 + bump), Point::new(300, 160), Scalar::new(110.0, 120.0, 115.0, 0.0), -1, opencv::imgproc::LINE_8, 0)?;
        opencv::imgproc::circle(&mut m, Point::new(wink_x + bump, 90 + bump), 4, Scalar::new(200.0, 40.0, 40.0, 0.0), -1, opencv::imgproc::LINE_8, 0)?;
        if hand {
            opencv::imgproc::rectangle_points(&mut m, Point::new(150, 60), Point::new(320, 120), Scalar::new(120.0, 150.0, 210.0, 0.0), -1, opencv::imgproc::LINE_8, 0)?;
        }
        Ok(Frame::new(index, index as f64 / 30.0, m))
    }

    fn run(fake: Fake, frames: &[(i32, bool, i32)]) -> Result<(Vec<Event>, Fake), Box<dyn std::error::Error>> {
        let opts = TrackerOptions { settle: SettleOptions::default(), ruleset: Ruleset::Etwa2012, source_path: Some("test".into()) };
        let mut t = Tracker::new(fake, opts, None);
        let mut out = Vec::new();
        for (k, &(x, hand, bump)) in frames.iter().enumerate() {
            t.push(&frame(k as u64, x, hand, bump)?, &mut out)?;
        }
        Ok((out, t.analyser))
    }

    #[test]
    fn rest_shot_rest_gives_two_settles_and_one_motion() -> Result<(), Box<dyn std::error::Error>> {
        let fake = Fake { cal: flat_calibration(320, 180)?, fits: true, analysed: Vec::new(), calibrations: 0, bumped: None, seen: Vec::new() };
        // Rest 1 s, a hand comes in and stays still 1 s (longer than the settle time), the wink
        // slides while the hand leaves, rest 1 s.
        let mut frames: Vec<(i32, bool, i32)> = vec![(100, false, 0); 30];
        frames.extend(vec![(100, true, 0); 30]);
        frames.extend((0..10).map(|k| (100 + 8 * k, k < 5, 0)));
        frames.extend(vec![(180, false, 0); 30]);
        let (events, fake) = run(fake, &frames)?;
        let kinds: Vec<&str> = events.iter().map(|e| e.kind_name()).filter(|k| *k != "flag").collect();
        assert_eq!(kinds, ["settled", "motion", "settled", "shot"], "{events:#?}");
        assert_eq!(fake.calibrations, 1);
        let settled: Vec<u64> = events.iter().filter(|e| e.kind_name() == "settled").map(|e| e.frame).collect();
        assert!(settled[0] >= 15 && settled[0] < 30, "{settled:?}");
        assert!(settled[1] >= 70 + 15, "not while the hand rests, only 0.5 s after the wink stops: {settled:?}");
        Ok(())
    }

    /// Footage shorter than the settle time (one photo, a few frames), still throughout, is one
    /// settled position at its end, as is footage that comes to rest a few frames before its
    /// end; footage that ends moving is none.
    #[test]
    fn footage_that_ends_still_before_the_settle_time_settles_at_its_end() -> Result<(), Box<dyn std::error::Error>> {
        let moving = || (0..10).map(|k| (100 + 8 * k, false, 0));
        let moving_then_still: Vec<(i32, bool, i32)> = moving().chain(std::iter::repeat_n((172, false, 0), 5)).collect();
        for (frames, want) in [(vec![(100, false, 0)], 1), (vec![(100, false, 0); 5], 1), (moving().collect::<Vec<_>>(), 0), (moving_then_still, 1)] {
            let fake = Fake { cal: flat_calibration(320, 180)?, fits: true, analysed: Vec::new(), calibrations: 0, bumped: None, seen: Vec::new() };
            let opts = TrackerOptions { settle: SettleOptions::default(), ruleset: Ruleset::Etwa2012, source_path: Some("test".into()) };
            let mut t = Tracker::new(fake, opts, None);
            let mut out = Vec::new();
            let mut last = None;
            for (k, &(x, hand, bump)) in frames.iter().enumerate() {
                let f = frame(k as u64, x, hand, bump)?;
                t.push(&f, &mut out)?;
                last = Some(f);
            }
            t.end_of_footage(last.as_ref().ok_or("a frame")?, &mut out);
            let settled = out.iter().filter(|e| e.kind_name() == "settled").count();
            assert_eq!(settled, want, "{} frames: {out:#?}", frames.len());
            // Once looked at, the end of the footage adds nothing more.
            t.end_of_footage(last.as_ref().ok_or("a frame")?, &mut out);
            assert_eq!(out.iter().filter(|e| e.kind_name() == "settled").count(), want);
        }
        Ok(())
    }

    #[test]
    fn a_bumped_camera_is_lost_and_found() -> Result<(), Box<dyn std::error::Error>> {
        let fake = Fake { cal: flat_calibration(320, 180)?, fits: true, analysed: Vec::new(), calibrations: 0, bumped: None, seen: Vec::new() };
        // Rest, then the camera is knocked 6 px and rests again.
        let mut frames: Vec<(i32, bool, i32)> = vec![(100, false, 0); 30];
        frames.extend(vec![(100, false, 6); 30]);
        let (events, fake) = run(fake, &frames)?;
        let kinds: Vec<&str> = events.iter().map(|e| e.kind_name()).filter(|k| *k != "flag").collect();
        assert_eq!(kinds, ["settled", "motion", "calibration_lost", "calibration_ok", "settled", "shot"], "{events:#?}");
        assert_eq!(fake.calibrations, 2);
        assert_eq!(fake.analysed.len(), 2);
        Ok(())
    }

    /// The camera is knocked between two settles and nothing on the mat moves; the detector
    /// misses one wink the second time and reads another 4 mm off. The last settled frame,
    /// redrawn into the new view, shows both places unchanged: the missed wink is kept where it
    /// was (not taken into the pot) and the other did not move.
    #[test]
    fn after_a_knock_unchanged_places_are_still_recognised() -> Result<(), Box<dyn std::error::Error>> {
        use crate::geometry::MatPoint;
        use crate::report::position::{Colour, Wink, WinkSize, WinkState};
        use opencv::core::{Point, Scalar};
        const BUMP: i32 = 6;
        let cal = flat_calibration(320, 180)?;
        let bumped = calibration_with_corners(320, 180, [(26.0, 26.0), (306.0, 26.0), (306.0, 166.0), (26.0, 166.0)])?;
        // Two winks on grey felt; the knock shifts the whole picture.
        let scene = |index: u64, shift: i32| -> Result<Frame, Box<dyn std::error::Error>> {
            let mut m = Mat::new_rows_cols_with_default(180, 320, opencv::core::CV_8UC3, Scalar::new(60.0, 60.0, 60.0, 0.0))?;
            opencv::imgproc::rectangle_points(&mut m, Point::new(20 + shift, 20 + shift), Point::new(300 + shift, 160 + shift), Scalar::new(110.0, 120.0, 115.0, 0.0), -1, opencv::imgproc::LINE_8, 0)?;
            for (x, y) in [(100, 90), (200, 60)] {
                opencv::imgproc::circle(&mut m, Point::new(x + shift, y + shift), 3, Scalar::new(200.0, 40.0, 40.0, 0.0), -1, opencv::imgproc::LINE_8, 0)?;
            }
            Ok(Frame::new(index, index as f64 / 30.0, m))
        };
        let at = |x: f64, y: f64| cal.image_to_mat(PixelPoint::new(x, y)).ok_or("off the mat");
        let wink = |id: &str, p: MatPoint| Wink {
            id: id.into(),
            colour: Colour::Blue,
            size: WinkSize::Large,
            diameter_mm: None,
            centre_px: cal.mat_to_image(p),
            centre_mm: Some(p),
            level: None,
            state: WinkState::InPlay,
            confidence: None,
            left_mm: None,
            extra: Default::default(),
        };
        let (p1, p2) = (at(100.0, 90.0)?, at(200.0, 60.0)?);
        let seen = vec![vec![wink("d1", p1), wink("d2", p2)], vec![wink("d1", p2 + MatPoint::new(4.0, 0.0))]];
        let fake = Fake { cal: cal.clone(), fits: true, analysed: Vec::new(), calibrations: 0, bumped: Some(bumped), seen };
        let opts = TrackerOptions { settle: SettleOptions::default(), ruleset: Ruleset::Etwa2012, source_path: Some("test".into()) };
        let mut t = Tracker::new(fake, opts, None);
        let mut out = Vec::new();
        for k in 0..60u64 {
            t.push(&scene(k, if k < 30 { 0 } else { BUMP })?, &mut out)?;
        }
        let kinds: Vec<&str> = out.iter().map(|e| e.kind_name()).filter(|k| *k != "flag").collect();
        assert_eq!(kinds, ["settled", "motion", "calibration_lost", "calibration_ok", "settled", "shot"], "{out:#?}");
        let shot = out.iter().find_map(|e| match &e.kind {
            EventKind::Shot(s) => Some(s.clone()),
            _ => None,
        });
        let shot = shot.ok_or("no shot")?;
        assert!(shot.moved.is_empty() && shot.potted.is_empty(), "nothing moved: {shot:?}");
        assert_eq!(shot.inferred, vec![diff::Inferred { id: "d1".into(), under: diff::IN_PLACE.into() }], "{shot:?}");
        // The wink kept in place is drawn where the knocked camera now sees it.
        let kept = t.current().and_then(|p| p.winks.iter().find(|w| w.id == "d1")).and_then(|w| w.centre_px).ok_or("d1 kept")?;
        assert!(kept.distance(PixelPoint::new(100.0 + BUMP as f64, 90.0 + BUMP as f64)) < 0.5, "{kept:?}");
        Ok(())
    }
}
