//! The squidge-off: which colour's wink ended nearest the pot (etwa-2012 5.4).

use super::board::Board;
use crate::report::position::{Colour, WinkState};

/// Two distances to the pot closer than this are a tie, in mm: below what a measurement of a
/// wink's edge can resolve, so the rule's "equally near" (5.4.2) is the honest call.
pub const SQUIDGE_OFF_TIE_MM: f64 = 0.05;

/// The squidge-off's result: colours nearest first, and whether the nearest are tied.
#[derive(Debug, Clone, PartialEq)]
pub struct SquidgeOff {
    /// Colours that have played, nearest the pot first.
    pub order: Vec<Colour>,
    /// Whether two or more are equally nearest (5.4.2: they squidge again).
    pub tie: bool,
    /// Each played colour's distance from its wink's nearest edge to the pot's rim, in mm
    /// (`None` for potted and off winks).
    pub distances_mm: Vec<(Colour, Option<f64>)>,
    /// Colours yet to play.
    pub waiting: Vec<Colour>,
}

/// Whether the position looks like a squidge-off: no more than one wink of each colour played,
/// and at least one.
pub fn is_squidge_off(board: &Board) -> bool {
    let played = |c: Colour| board.of_colour(c).filter(|w| w.state != WinkState::Unplayed).count();
    Colour::ALL.iter().all(|&c| played(c) <= 1) && Colour::ALL.iter().any(|&c| played(c) == 1)
}

/// Rule 5.4.1: nearness from the wink's nearest edge; potted winks are equally near and nearer
/// than any other; winks that left the playing volume are equally far and further than any other.
/// `None` when a played wink's position is unknown.
pub fn squidge_off(board: &Board, pot_rim_radius_mm: f64) -> Option<SquidgeOff> {
    // (class, distance): 0 potted, 1 on the mat, 2 off.
    let mut keyed: Vec<(Colour, u8, f64)> = Vec::new();
    let mut waiting = Vec::new();
    for c in Colour::ALL {
        match board.of_colour(c).find(|w| w.state != WinkState::Unplayed) {
            None => waiting.push(c),
            Some(w) => match w.state {
                WinkState::Potted => keyed.push((c, 0, 0.0)),
                WinkState::Off => keyed.push((c, 2, 0.0)),
                _ => keyed.push((c, 1, w.centre?.norm() - w.radius_mm - pot_rim_radius_mm)),
            },
        }
    }
    keyed.sort_by(|a, b| a.1.cmp(&b.1).then(a.2.total_cmp(&b.2)));
    let tie = match keyed.as_slice() {
        [a, b, ..] => a.1 == b.1 && (a.1 != 1 || (b.2 - a.2).abs() <= SQUIDGE_OFF_TIE_MM),
        _ => false,
    };
    Some(SquidgeOff {
        order: keyed.iter().map(|k| k.0).collect(),
        tie,
        distances_mm: keyed.iter().map(|k| (k.0, (k.1 == 1).then_some(k.2))).collect(),
        waiting,
    })
}
