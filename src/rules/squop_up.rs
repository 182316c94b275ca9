//! Squopped-up partnerships and the squop-up turns their opponents get (etwa-2012 22.1, 22.2;
//! natwa-1990 11(a); etwa-original 9(c); fr-1960 10).

use super::board::Board;
use super::ruleset::SquopUpRule;
use crate::report::position::{Colour, Partnership, WinkState};

/// A partnership with no free winks, and what its opponents get for it.
#[derive(Debug, Clone, PartialEq)]
pub struct SquopUp {
    /// The partnership squopped up.
    pub partnership: Partnership,
    /// Squop-up (free) turns for the opponents.
    pub turns: u32,
    /// How the number was reached, in words.
    pub reason: String,
}

/// Rule 22.1: the partnerships that have no free winks, all their unpotted winks being squopped.
/// A partnership with every wink potted is not squopped up.
pub fn squopped_up(board: &Board) -> Vec<Partnership> {
    Partnership::ALL
        .into_iter()
        .filter(|p| {
            let mut unpotted = board
                .pieces
                .iter()
                .filter(|w| p.colours().contains(&w.colour) && w.state != WinkState::Potted)
                .peekable();
            unpotted.peek().is_some() && unpotted.all(|w| w.squopped)
        })
        .collect()
}

/// Whether `colour` has a free wink (8.3).
fn has_free(board: &Board, colour: Colour) -> bool {
    board.of_colour(colour).any(|w| w.is_free())
}

/// The squop-up turns the opponents of `squopped` get under `rule`.
///
/// `next_colour` is the colour due to play next, needed only for etwa-2012 22.2.3; when it is not
/// known and it matters, the reason says so.
pub fn squop_up_turns(board: &Board, rule: SquopUpRule, squopped: Partnership, next_colour: Option<Colour>) -> SquopUp {
    let loose = board.pieces.iter().filter(|w| w.on_field() && !w.in_pile()).count() as u32;
    let squopping = squopped.opponents();
    let (turns, reason) = match rule {
        SquopUpRule::Etwa2012 if loose > 0 => {
            (loose + 1, format!("one more than the {loose} wink{} on the field of play not in piles", s(loose)))
        }
        SquopUpRule::Etwa2012 => {
            // 22.2.3: no loose winks, and the squopping partnership's colour next in sequence has
            // no free winks: two turns instead of one.
            let [a, b] = squopping.colours();
            let next_of_squopping = next_colour.map(|mut c| {
                while c.partnership() != squopping {
                    c = c.next();
                }
                c
            });
            match next_of_squopping {
                Some(c) if !has_free(board, c) => {
                    (2, format!("no winks on the field of play outside piles and {c}, next of {}, has no free winks (22.2.3)", squopping.label()))
                }
                Some(_) => (1, "no winks on the field of play outside piles".to_string()),
                None => match (has_free(board, a), has_free(board, b)) {
                    (true, true) => (1, "no winks on the field of play outside piles".to_string()),
                    (false, false) => (2, format!("no winks on the field of play outside piles and neither {a} nor {b} has a free wink (22.2.3)")),
                    (fa, _) => {
                        let without = if fa { b } else { a };
                        (1, format!("no winks on the field of play outside piles; 2 if {without} (no free winks) is next of {} to play (22.2.3)", squopping.label()))
                    }
                },
            }
        }
        SquopUpRule::Natwa1990 => (loose, format!("one per wink on the field of play neither squopping nor squopped ({loose})")),
        SquopUpRule::SquoppingPairFreeWinks => {
            let free = board
                .pieces
                .iter()
                .filter(|w| w.colour.partnership() == squopping && w.state != WinkState::Potted && !w.in_pile())
                .count() as u32;
            (free, format!("one per free wink of {} neither covering nor covered ({free})", squopping.label()))
        }
        SquopUpRule::None => (0, "this ruleset gives no squop-up turns".to_string()),
    };
    SquopUp { partnership: squopped, turns, reason }
}

fn s(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
