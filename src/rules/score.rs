//! Tiddlies, points and the game score (etwa-2012 19, 20.2, 21; natwa-1990 10; etwa-simplified
//! 15, 16; etwa-original 5; fr-1960 4).

use super::board::Board;
use super::ruleset::ScoringRule;
use crate::report::position::{Colour, Partnership, Score, ScoreMethod, WinkState};
use std::collections::BTreeMap;

/// Points for first, second, third and fourth place (19.2, 20.2).
pub const PLACE_POINTS: [f64; 4] = [4.0, 2.0, 1.0, 0.0];

/// Rule 19.1: three tiddlies per potted wink and one per free wink played from behind the baseline.
pub fn tiddlies(board: &Board) -> BTreeMap<Colour, u32> {
    let mut t: BTreeMap<Colour, u32> = Colour::ALL.iter().map(|&c| (c, 0)).collect();
    for p in &board.pieces {
        let add = match p.state {
            WinkState::Potted => 3,
            WinkState::InPlay | WinkState::Off if !p.squopped => 1,
            _ => 0,
        };
        *t.entry(p.colour).or_default() += add;
    }
    t
}

/// Rule 19.2: 4, 2, 1 and 0 points by rank, tied colours sharing the points of the places they
/// occupy.
pub fn ranked_points(values: &BTreeMap<Colour, u32>) -> BTreeMap<Colour, f64> {
    let mut ranked: Vec<(Colour, u32)> = values.iter().map(|(&c, &v)| (c, v)).collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let groups: Vec<Vec<Colour>> = ranked
        .chunk_by(|a, b| a.1 == b.1)
        .map(|g| g.iter().map(|(c, _)| *c).collect())
        .collect();
    share_places(&groups)
}

/// Rule 20.2: points by the order of potting out; colours that potted out in the same shot share
/// their places' points. Colours that have not potted out share the places that are left (the
/// texts are silent on a game that ends with fewer than three pot-outs; sharing is how 19.2
/// treats equal places).
pub fn pot_out_points(order: &[Vec<Colour>]) -> BTreeMap<Colour, f64> {
    let mut groups: Vec<Vec<Colour>> = order.iter().filter(|g| !g.is_empty()).cloned().collect();
    let rest: Vec<Colour> = Colour::ALL.iter().copied().filter(|c| !groups.iter().flatten().any(|d| d == c)).collect();
    if !rest.is_empty() {
        groups.push(rest);
    }
    share_places(&groups)
}

fn share_places(groups: &[Vec<Colour>]) -> BTreeMap<Colour, f64> {
    let mut points = BTreeMap::new();
    let mut place = 0;
    for g in groups {
        let end = (place + g.len()).min(PLACE_POINTS.len());
        let total: f64 = PLACE_POINTS[place.min(PLACE_POINTS.len())..end].iter().sum();
        for &c in g {
            points.insert(c, total / g.len() as f64);
        }
        place = end;
    }
    points
}

/// Partners' points added (19.2), with one point moved from the losing to the winning partnership
/// when `transfer` (20.2).
pub fn game_score(points: &BTreeMap<Colour, f64>, transfer: bool) -> BTreeMap<Partnership, f64> {
    let mut score: BTreeMap<Partnership, f64> = Partnership::ALL.iter().map(|&p| (p, 0.0)).collect();
    for (&c, &v) in points {
        *score.entry(c.partnership()).or_default() += v;
    }
    if transfer {
        let (br, gy) = (score[&Partnership::BlueRed], score[&Partnership::GreenYellow]);
        let (winner, loser) = match br.partial_cmp(&gy) {
            Some(std::cmp::Ordering::Greater) => (Partnership::BlueRed, Partnership::GreenYellow),
            Some(std::cmp::Ordering::Less) => (Partnership::GreenYellow, Partnership::BlueRed),
            _ => return score,
        };
        *score.entry(winner).or_default() += 1.0;
        *score.entry(loser).or_default() -= 1.0;
    }
    score
}

/// The score if the game ended now.
///
/// `pot_outs` is the order of potting out so far (each entry the colours of one shot); `is_final`
/// is whether the position itself ends the game.
pub fn score(board: &Board, rule: ScoringRule, pot_outs: &[Vec<Colour>], is_final: bool) -> Score {
    let t = tiddlies(board);
    match rule {
        ScoringRule::Official if pot_outs.is_empty() => {
            let points = ranked_points(&t);
            Score {
                method: ScoreMethod::Tiddlies,
                is_final,
                game_score: game_score(&points, false),
                tiddlies: Some(t),
                points: Some(points),
            }
        }
        ScoringRule::Official | ScoringRule::PotOutOrder => {
            let points = pot_out_points(pot_outs);
            Score {
                method: ScoreMethod::PotOut,
                is_final,
                game_score: game_score(&points, rule == ScoringRule::Official),
                tiddlies: (rule == ScoringRule::Official).then_some(t),
                points: Some(points),
            }
        }
        ScoringRule::Simplified => {
            // 15, 16: the partnership of the first colour to pot out, or of the colour with most
            // tiddlies, wins; the winner scores 1, a shared win ½ each. The rules score no colour
            // on its own; each winning colour's share is given as its points, so that partners'
            // points add up to the game score as under the other rules.
            let (method, winners): (ScoreMethod, Vec<Colour>) = match pot_outs.first() {
                Some(first) => (ScoreMethod::PotOut, first.clone()),
                None => {
                    let best = t.values().copied().max().unwrap_or(0);
                    (ScoreMethod::Tiddlies, t.iter().filter(|(_, &v)| v == best).map(|(&c, _)| c).collect())
                }
            };
            let mut game_score: BTreeMap<Partnership, f64> = Partnership::ALL.iter().map(|&p| (p, 0.0)).collect();
            let sides: Vec<Partnership> = Partnership::ALL
                .into_iter()
                .filter(|p| winners.iter().any(|c| c.partnership() == *p))
                .collect();
            for p in &sides {
                game_score.insert(*p, 1.0 / sides.len() as f64);
            }
            // Winning colours in one partnership share its point; a win shared across the
            // partnerships gives each side's winners half.
            let points = Colour::ALL
                .iter()
                .map(|&c| {
                    let mates = winners.iter().filter(|w| w.partnership() == c.partnership()).count();
                    (c, if winners.contains(&c) { game_score[&c.partnership()] / mates as f64 } else { 0.0 })
                })
                .collect();
            Score { method, is_final, tiddlies: Some(t), points: Some(points), game_score }
        }
    }
}

/// A number of points as people write it: 1½, 4, ¾.
pub fn format_points(v: f64) -> String {
    let whole = v.trunc();
    let frac = v - whole;
    let frac_str = match (frac * 4.0).round() as i64 {
        1 => "¼",
        2 => "½",
        3 => "¾",
        _ => "",
    };
    if frac_str.is_empty() {
        format!("{}", v.round())
    } else if whole == 0.0 {
        frac_str.to_string()
    } else {
        format!("{whole}{frac_str}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(v: [u32; 4]) -> BTreeMap<Colour, u32> {
        Colour::ALL.into_iter().zip(v).collect()
    }

    #[test]
    fn ranking_shares_tied_places() {
        // F.1: 10, 5, 5, 3 tiddlies.
        let p = ranked_points(&map([10, 5, 5, 3]));
        assert_eq!(p.values().copied().collect::<Vec<_>>(), vec![4.0, 1.5, 1.5, 0.0]);
        let p = ranked_points(&map([7, 7, 7, 7]));
        assert!(p.values().all(|&v| v == 1.75));
    }

    #[test]
    fn pot_out_with_transfer() {
        // F.2: blue, then green, then red.
        let p = pot_out_points(&[vec![Colour::Blue], vec![Colour::Green], vec![Colour::Red]]);
        let s = game_score(&p, true);
        assert_eq!((s[&Partnership::BlueRed], s[&Partnership::GreenYellow]), (6.0, 1.0));
        // Two colours in one shot share first and second.
        let p = pot_out_points(&[vec![Colour::Blue, Colour::Green]]);
        assert_eq!(p[&Colour::Blue], 3.0);
        assert_eq!(p[&Colour::Red], 0.5);
    }

    #[test]
    fn points_read_like_people_write_them() {
        assert_eq!(format_points(1.5), "1½");
        assert_eq!(format_points(4.0), "4");
        assert_eq!(format_points(0.5), "½");
        assert_eq!(format_points(1.75), "1¾");
    }
}
