//! Invariants of the rules engine over random positions (proptest).

use proptest::prelude::*;
use winkeye::report::position::{Colour, Partnership, Position, ScoreMethod, WinkState};
use winkeye::rules::{apply, Ruleset};

/// A random position: every colour's six winks with random states, and squops drawn only from a
/// wink to one listed before it (so never a cycle), between unpotted, played winks.
fn position() -> impl Strategy<Value = Position> {
    (
        prop::collection::vec(0u8..4, 24),
        prop::collection::vec((0usize..24, 0usize..24), 0..10),
        prop::collection::vec(0usize..4, 0..4),
    )
        .prop_map(|(states, pairs, pot_out_order)| {
            let state = |s: u8| match s {
                0 => WinkState::Unplayed,
                1 | 2 => WinkState::InPlay,
                _ => WinkState::Potted,
            };
            let mut winks = Vec::new();
            for (i, s) in states.iter().enumerate() {
                let colour = Colour::ALL[i / 6];
                winks.push(serde_json::json!({
                    "id": format!("w{i}"), "colour": colour, "size": if i % 6 < 2 { "large" } else { "small" },
                    "state": state(*s),
                }));
            }
            let mut squops = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for (a, b) in pairs {
                let (upper, lower) = (a.max(b), a.min(b));
                if upper != lower && state(states[upper]) == WinkState::InPlay && state(states[lower]) == WinkState::InPlay && seen.insert((upper, lower)) {
                    squops.push(serde_json::json!({"upper": format!("w{upper}"), "lower": format!("w{lower}")}));
                }
            }
            let mut order: Vec<Colour> = Vec::new();
            for k in pot_out_order {
                if !order.contains(&Colour::ALL[k]) {
                    order.push(Colour::ALL[k]);
                }
            }
            // Make the listed pot-outs real: all six of those colours potted.
            for (i, w) in winks.iter_mut().enumerate() {
                if order.contains(&Colour::ALL[i / 6]) {
                    w["state"] = serde_json::json!("potted");
                }
            }
            squops.retain(|s| {
                let idx = |k: &str| s[k].as_str().and_then(|v| v[1..].parse::<usize>().ok()).unwrap_or(0);
                !order.contains(&Colour::ALL[idx("upper") / 6]) && !order.contains(&Colour::ALL[idx("lower") / 6])
            });
            let doc = serde_json::json!({
                "format": "winkeye.position/1", "winks": winks, "squops": squops,
                "game": {"next_colour": "green", "potted_out": order, "squidge_off_winner": "blue"},
            });
            serde_json::from_value(doc).expect("well-formed")
        })
}

proptest! {
    #[test]
    fn scores_sum_to_seven_and_counts_to_six(pos in position(), r in 0usize..5) {
        let ruleset = Ruleset::ALL[r];
        let out = apply(&pos, ruleset).expect("valid position");
        let score = out.score.as_ref().expect("score");
        let total: f64 = score.game_score.values().sum();
        let expected = if ruleset == Ruleset::EtwaSimplified { 1.0 } else { 7.0 };
        prop_assert!((total - expected).abs() < 1e-9, "{ruleset}: game score sums to {total}");
        if let Some(points) = &score.points {
            prop_assert!((points.values().sum::<f64>() - expected).abs() < 1e-9, "{ruleset}: points sum to {}", points.values().sum::<f64>());
            // Under etwa-simplified the points are each winning colour's share of the game score.
            if ruleset == Ruleset::EtwaSimplified {
                for (p, g) in &score.game_score {
                    let share: f64 = points.iter().filter(|(c, _)| c.partnership() == *p).map(|(_, v)| v).sum();
                    prop_assert!((share - g).abs() < 1e-9, "{ruleset}: {p:?} points {share} against game score {g}");
                }
            }
        }
        let counts = out.counts.as_ref().expect("counts");
        for c in Colour::ALL {
            prop_assert_eq!(counts[&c].total(), 6);
        }
        // 19.1: three per potted wink, one per free played wink.
        if let (ScoreMethod::Tiddlies, Some(t)) = (score.method, &score.tiddlies) {
            for c in Colour::ALL {
                let squopped: Vec<&str> = out.squops.iter().map(|s| s.lower.as_str()).collect();
                let expected: u32 = out.winks.iter().filter(|w| w.colour == c).map(|w| match w.state {
                    WinkState::Potted => 3,
                    WinkState::InPlay if !squopped.contains(&w.id.as_str()) => 1,
                    _ => 0,
                }).sum();
                prop_assert_eq!(t[&c], expected);
            }
        }
        // A squopped-up partnership really has no free wink.
        for f in &out.flags {
            if let winkeye::report::position::FlagDetail::SquoppedUp { partnership, .. } = f.detail {
                let lowers: Vec<&str> = out.squops.iter().map(|s| s.lower.as_str()).collect();
                let free = out.winks.iter().any(|w| partnership.colours().contains(&w.colour)
                    && w.state != WinkState::Potted && !lowers.contains(&w.id.as_str()));
                prop_assert!(!free, "{:?} flagged squopped up with a free wink", partnership);
                prop_assert!(Partnership::ALL.contains(&partnership));
            }
        }
    }
}
