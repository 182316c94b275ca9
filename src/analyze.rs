//! One frame → one position: calibrate (or reuse a calibration), detect the winks, infer the
//! stacking, and apply the rules. Every command that looks at frames (`analyze`, `replay`,
//! `watch`, `umpire`) goes through [`analyze_frame`].

use crate::calibrate::{self, lens::Lens, CalibrateOptions, Calibration, Orientation};
use crate::geometry::Corner;
use crate::detect::{self, Detections};
use crate::geometry::PixelPoint;
use crate::report::position::{CalibrationInfo, Colour, Counts, Position, Source, StateCounts, Wink, WinkState};
use crate::rules::{self, Ruleset};
use opencv::core::Mat;
use opencv::prelude::*;

/// What to analyse a frame with.
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    /// The ruleset (mat size, field of play, flags).
    pub ruleset: Ruleset,
    /// A calibration to use as it is (e.g. from a calibration file, or an earlier frame of the
    /// same footage); otherwise the frame is calibrated by itself.
    pub calibration: Option<Calibration>,
    /// A lens from a chessboard calibration, used when calibrating the frame itself.
    pub lens: Option<Lens>,
    /// The mat's corners given by hand, in contract order.
    pub corners: Option<[PixelPoint; 4]>,
    /// The camera's height above the mat as measured, mm, used when calibrating the frame itself
    /// (see [`CalibrateOptions::camera_height_mm`]).
    pub camera_height_mm: Option<f64>,
    /// What goes into the document's `source`.
    pub source: Source,
    /// The set's winks as measured, mm across, when stated ([`Calibration::wink_diameters`]).
    pub wink_diameters: Option<crate::report::position::NominalDiameters>,
}

impl AnalyzeOptions {
    /// Defaults for a ruleset: calibrate from the frame, no lens, no corners.
    pub fn new(ruleset: Ruleset) -> AnalyzeOptions {
        AnalyzeOptions { ruleset, calibration: None, lens: None, corners: None, camera_height_mm: None, source: Source::default(), wink_diameters: None }
    }
}

/// A frame's analysis: the position document and what it was made from.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The position, with the rules' flags and score.
    pub position: Position,
    /// The calibration used.
    pub calibration: Calibration,
    /// The detections behind the position (fitted outlines, evidence).
    pub detections: Detections,
}

/// Blue's corner as the winks behind the baselines vote ([`detect::home_corner_votes`]), where
/// they outvote `current`: `None` to keep it. Ties keep `current`, then (with `free_turn`, the +x
/// end the program's to choose) prefer the corner half round from it, as the votes did before
/// session 36. One wink alone can move it: a single wink behind another colour's baseline is
/// either unplayed there (the colours turned) or knocked off there, and either reading wrong
/// costs that one wink's state; on the renderers' frames the first is the commoner (another
/// renderer's 83 frames: 1697 of 1697 states right with one vote enough, 1693 needing two;
/// ours with the colours a quarter turn round, 424 against 422 of 425).
pub fn blue_corner_by_votes(votes: [usize; 4], current: Corner, free_turn: bool) -> Option<Corner> {
    let best = Corner::ALL.into_iter().max_by_key(|k| (votes[k.index()], *k == current, free_turn && *k == current.opposite()))?;
    (votes[best.index()] > votes[current.index()]).then_some(best)
}

/// Each colour's counts with its winks not found accounted for (a colour has six, rule 2.1.1):
/// in the pot when winks are seen in it, else in play (taken as hidden under another wink). The
/// rules engine ([`rules::apply`]) lists them so, with a flag saying what was inferred.
///
/// A pot's wall and the winks in it hide most of what lies there: over our renderer's frames, of
/// the colours with winks unfound and none of them seen in the pot, 96% had winks in it (227 of
/// 236 in figA). But a pot seen holding no wink at all holds none unseen either (no such frame
/// there had one: figA, held-out 8001, the pot-out sets 7001 and 7101, 383 frames): counted in
/// the pot, as they all were before session 37, the winks a detector missed went potted there,
/// and a whole colour missed went potted out, with rule 20's desquop moves and the pot-out score
/// (another renderer's green winks of its green felt's own hue, in frames whose pot was empty).
pub fn unseen_counted(winks: &[Wink]) -> Counts {
    let mut counts: Counts = Colour::ALL.into_iter().map(|c| (c, StateCounts::default())).collect();
    for w in winks {
        if let Some(c) = counts.get_mut(&w.colour) {
            c.add(w.state);
        }
    }
    let pot_holds_winks = winks.iter().any(|w| w.state == WinkState::Potted);
    for c in counts.values_mut() {
        let missing = 6u32.saturating_sub(c.unplayed + c.in_play + c.off + c.potted);
        if pot_holds_winks {
            c.potted += missing;
        } else {
            c.in_play += missing;
        }
    }
    counts
}

/// Why a frame could not be analysed.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// Calibration failed.
    #[error(transparent)]
    Calibrate(#[from] calibrate::CalibrateError),
    /// Detection failed.
    #[error(transparent)]
    Detect(#[from] detect::DetectError),
    /// No wink was found and the frame has no colour to find one by (a greyscale picture, or a
    /// monochrome camera's frame): the rules would count every wink potted.
    #[error("no winks found, and the frame has no colour (a greyscale picture?): winks are told apart by their colours; use a colour camera or photo")]
    NoColour,
    /// The position broke the document's rules (a bug: detections are checked before).
    #[error("the detected position is inconsistent: {0}")]
    Position(#[from] crate::report::PositionError),
}

/// Analyses one BGR frame.
pub fn analyze_frame(bgr: &Mat, opts: &AnalyzeOptions) -> Result<Analysis, AnalyzeError> {
    let mut calibration = match &opts.calibration {
        Some(c) => c.clone(),
        None => {
            let copts = CalibrateOptions { mat: opts.ruleset.spec().mat, corners: opts.corners, lens: opts.lens.clone(), camera_height_mm: opts.camera_height_mm };
            calibrate::calibrate_frame(bgr, &copts)?
        }
    };
    if opts.wink_diameters.is_some() {
        calibration.wink_diameters = opts.wink_diameters;
    }
    let mut detections = detect::detect(bgr, &calibration, opts.ruleset)?;
    // Unless the calibration read it from the corners itself, the winks found behind the
    // baselines have the last word on which corner is blue's (rule 5.2 fixes only the colours'
    // order, clockwise): more of them behind their own colour's corner with blue's elsewhere
    // moves it there. With the +x end chosen by the picture alone, blue's corner is kept at the
    // −x end, the mat frame turned half round where it lies at +x.
    if calibration.orientation != Orientation::UnplayedWinks {
        let votes = detect::home_corner_votes(&detections.found, &calibration.mat);
        if let Some(blue) = blue_corner_by_votes(votes, calibration.blue_corner, calibration.orientation == Orientation::Image) {
            calibration.blue_corner = blue;
            if calibration.orientation == Orientation::Image && blue.signs().0 > 0.0 {
                calibration = calibration.half_turned(Orientation::UnplayedWinks);
            }
            detections = detect::detect(bgr, &calibration, opts.ruleset)?;
        }
    }
    if detections.found.is_empty() && crate::capture::is_monochrome(bgr) {
        return Err(AnalyzeError::NoColour);
    }
    let mut source = opts.source.clone();
    source.width = Some(bgr.cols() as u32);
    source.height = Some(bgr.rows() as u32);
    let raw = Position {
        source: Some(source),
        ruleset: Some(opts.ruleset.name().into()),
        calibration: Some(CalibrationInfo {
            mat_corners_px: Some(calibration.corners_px),
            pot_centre_px: calibration.mat_to_image(crate::geometry::MatPoint::new(0.0, 0.0)),
            rms_px: Some(calibration.rms_px),
            baselines_found_mm: Some(calibration.baselines_found.map(|o| o.map(|v| (v * 100.0).round() / 100.0))),
            extra: Default::default(),
        }),
        ..Position::of_winks(detections.winks(&opts.ruleset.spec().winks, calibration.wink_diameters.as_ref()), detections.squops())
    };
    let raw = Position { counts: Some(unseen_counted(&raw.winks)), ..raw };
    let position = rules::apply(&raw, opts.ruleset)?;
    Ok(Analysis { position, calibration, detections })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(colour: Colour, state: WinkState, n: usize) -> Vec<Wink> {
        let wink = |k: usize| Wink { id: format!("{colour}{k}"), colour, size: crate::report::position::WinkSize::Small, diameter_mm: None, centre_px: None, centre_mm: None, level: None, state, confidence: None, left_mm: None, extra: Default::default() };
        (0..n).map(wink).collect()
    }

    /// Winks not found count potted while the pot is seen holding winks, else in play.
    #[test]
    fn winks_not_found_count_potted_only_where_the_pot_is_seen_holding_winks() {
        let mut winks = [listed(Colour::Blue, WinkState::InPlay, 6), listed(Colour::Green, WinkState::InPlay, 2), listed(Colour::Red, WinkState::Unplayed, 5)].concat();
        let empty = unseen_counted(&winks);
        assert_eq!(empty[&Colour::Green], StateCounts { in_play: 6, ..StateCounts::default() });
        assert_eq!(empty[&Colour::Red], StateCounts { unplayed: 5, in_play: 1, ..StateCounts::default() });
        assert_eq!(empty[&Colour::Yellow], StateCounts { in_play: 6, ..StateCounts::default() });
        assert_eq!(empty[&Colour::Blue], StateCounts { in_play: 6, ..StateCounts::default() });
        winks.extend(listed(Colour::Yellow, WinkState::Potted, 1));
        let holding = unseen_counted(&winks);
        assert_eq!(holding[&Colour::Green], StateCounts { in_play: 2, potted: 4, ..StateCounts::default() });
        assert_eq!(holding[&Colour::Red], StateCounts { unplayed: 5, potted: 1, ..StateCounts::default() });
        assert_eq!(holding[&Colour::Yellow], StateCounts { potted: 6, ..StateCounts::default() });
    }

    /// Votes in `Corner::ALL`'s order: (−X,+Y), (+X,+Y), (+X,−Y), (−X,−Y).
    #[test]
    fn blues_corner_moves_where_the_winks_behind_the_baselines_outvote_it() {
        use Corner::*;
        assert_eq!(blue_corner_by_votes([0, 1, 0, 0], NegXPosY, true), Some(PosXPosY));
        assert_eq!(blue_corner_by_votes([1, 0, 0, 3], NegXPosY, true), Some(NegXNegY));
        assert_eq!(blue_corner_by_votes([0, 0, 2, 1], NegXPosY, false), Some(PosXNegY));
        // Ties keep the corner there is; then, with the +x end free, prefer the half turn.
        assert_eq!(blue_corner_by_votes([2, 2, 0, 0], NegXPosY, true), None);
        assert_eq!(blue_corner_by_votes([0, 1, 1, 0], NegXPosY, true), Some(PosXNegY));
        assert_eq!(blue_corner_by_votes([0, 1, 1, 0], NegXPosY, false).map(|c| c == PosXPosY || c == PosXNegY), Some(true));
        assert_eq!(blue_corner_by_votes([0; 4], NegXNegY, true), None);
    }
}
