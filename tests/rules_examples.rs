//! The rule texts' worked examples (F.1–F.3, G.1–G.3) and the other sample positions, through the
//! library's rules engine.

use std::collections::HashMap;
use std::path::Path;
use winkeye::geometry::MatPoint;
use winkeye::report::position::{Colour, FlagDetail, NominalDiameters, Partnership, Position, ScoreMethod, WinkState};
use winkeye::rules::{apply, Ruleset};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn sample(name: &str) -> Result<Position, Box<dyn std::error::Error>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/positions").join(name);
    Ok(Position::load(&path)?)
}

fn points(p: &Position) -> Vec<f64> {
    let s = p.score.as_ref().expect("score");
    Colour::ALL.iter().map(|c| s.points.as_ref().expect("points")[c]).collect()
}

fn game_score(p: &Position) -> (f64, f64) {
    let s = &p.score.as_ref().expect("score").game_score;
    (s[&Partnership::BlueRed], s[&Partnership::GreenYellow])
}

fn kinds(p: &Position) -> Vec<&'static str> {
    p.flags.iter().map(|f| f.detail.kind()).collect()
}

#[test]
fn f1_tiddlies_and_points() -> TestResult {
    let out = apply(&sample("f1.json")?, Ruleset::Etwa2012)?;
    let s = out.score.as_ref().expect("score");
    assert_eq!(s.method, ScoreMethod::Tiddlies);
    let t: Vec<u32> = Colour::ALL.iter().map(|c| s.tiddlies.as_ref().expect("tiddlies")[c]).collect();
    assert_eq!(t, vec![10, 5, 5, 3]);
    assert_eq!(points(&out), vec![4.0, 1.5, 1.5, 0.0]);
    assert_eq!(game_score(&out), (5.5, 1.5));
    let counts = out.counts.as_ref().expect("counts");
    assert_eq!(counts[&Colour::Red].unplayed, 1);
    assert!(Colour::ALL.iter().all(|c| counts[c].total() == 6));
    assert_eq!(out.piles.len(), 6);
    Ok(())
}

#[test]
fn f2_pot_out_order_with_transfer() -> TestResult {
    let out = apply(&sample("f2.json")?, Ruleset::Etwa2012)?;
    let s = out.score.as_ref().expect("score");
    assert_eq!(s.method, ScoreMethod::PotOut);
    assert!(s.is_final, "both blue and red have potted out (16)");
    assert_eq!(points(&out), vec![4.0, 2.0, 1.0, 0.0]);
    assert_eq!(game_score(&out), (6.0, 1.0));
    let pot_outs: Vec<Colour> = out
        .flags
        .iter()
        .filter_map(|f| match &f.detail {
            FlagDetail::PotOut { colour, .. } => Some(*colour),
            _ => None,
        })
        .collect();
    assert_eq!(pot_outs, vec![Colour::Blue, Colour::Green, Colour::Red]);
    assert!(kinds(&out).contains(&"game_over"));
    Ok(())
}

#[test]
fn f3_pot_out_games_are_marked() -> TestResult {
    // F.3: pot-out games carry an asterisk; the document says so by the score's method.
    let f1 = apply(&sample("f1.json")?, Ruleset::Etwa2012)?;
    let f2 = apply(&sample("f2.json")?, Ruleset::Etwa2012)?;
    assert_eq!(f1.score.expect("score").method, ScoreMethod::Tiddlies);
    assert_eq!(f2.score.expect("score").method, ScoreMethod::PotOut);
    Ok(())
}

fn squop_up(p: &Position) -> Vec<(Partnership, u32)> {
    p.flags
        .iter()
        .filter_map(|f| match f.detail {
            FlagDetail::SquoppedUp { partnership, turns } => Some((partnership, turns)),
            _ => None,
        })
        .collect()
}

#[test]
fn g1_three_squop_up_turns() -> TestResult {
    let out = apply(&sample("g1-squop-up.json")?, Ruleset::Etwa2012)?;
    assert_eq!(squop_up(&out), vec![(Partnership::GreenYellow, 3)]);
    Ok(())
}

#[test]
fn g2_freeing_a_green_ends_the_squop_up() -> TestResult {
    // G.2: red's squop-up turn frees a green wink: green and yellow are no longer squopped up.
    let mut pos = sample("g1-squop-up.json")?;
    pos.squops.retain(|s| s.lower != "g1");
    pos.winks.iter_mut().filter(|w| w.id == "b1").for_each(|w| w.centre_mm = Some(MatPoint::new(-250.0, 100.0)));
    let out = apply(&pos, Ruleset::Etwa2012)?;
    assert!(squop_up(&out).is_empty(), "{:?}", squop_up(&out));
    Ok(())
}

#[test]
fn g3_special_case_gives_two_turns() -> TestResult {
    let pos = sample("g3-squop-up.json")?;
    let out = apply(&pos, Ruleset::Etwa2012)?;
    assert_eq!(squop_up(&out), vec![(Partnership::GreenYellow, 2)]);
    // With blue to play next (and blue having free winks), 22.2.3 does not apply: one turn.
    let mut blue_next = pos.clone();
    blue_next.game.as_mut().expect("game").next_colour = Some(Colour::Blue);
    assert_eq!(squop_up(&apply(&blue_next, Ruleset::Etwa2012)?), vec![(Partnership::GreenYellow, 1)]);
    Ok(())
}

#[test]
fn squop_up_turns_differ_between_rulesets() -> TestResult {
    let pos = sample("g1-squop-up.json")?;
    // natwa-1990 11(a): one free turn per wink on the field neither squopping nor squopped.
    assert_eq!(squop_up(&apply(&pos, Ruleset::Natwa1990)?), vec![(Partnership::GreenYellow, 2)]);
    // etwa-original 9(c): the squopping pair's free winks (b5, r4 and the two unplayed reds).
    assert_eq!(squop_up(&apply(&pos, Ruleset::EtwaOriginal)?), vec![(Partnership::GreenYellow, 4)]);
    // etwa-simplified: no squop-up turns, but the squop-up is still flagged.
    assert_eq!(squop_up(&apply(&pos, Ruleset::EtwaSimplified)?), vec![(Partnership::GreenYellow, 0)]);
    Ok(())
}

#[test]
fn scoring_differs_between_rulesets() -> TestResult {
    let f1 = sample("f1.json")?;
    let f2 = sample("f2.json")?;
    // Simplified 15: the partnership of the colour with most tiddlies wins.
    let s = apply(&f1, Ruleset::EtwaSimplified)?;
    assert_eq!(game_score(&s), (1.0, 0.0));
    // The contract's per-colour points: the winning colour's share, adding up to the game score.
    let points = s.score.as_ref().expect("score").points.clone().expect("points");
    assert_eq!(points.values().filter(|&&p| p > 0.0).count(), 1, "{points:?}");
    assert_eq!((points[&Colour::Blue] + points[&Colour::Red], points[&Colour::Green] + points[&Colour::Yellow]), game_score(&s));
    // Simplified 16: the first pot-out wins and ends the game.
    let s = apply(&f2, Ruleset::EtwaSimplified)?;
    assert_eq!(game_score(&s), (1.0, 0.0));
    assert!(s.score.as_ref().expect("score").is_final);
    // etwa-original 5: order of potting out, no transfer.
    let o = apply(&f2, Ruleset::EtwaOriginal)?;
    assert_eq!(game_score(&o), (5.0, 2.0));
    // natwa-1990 10(a): as etwa-2012 20.2.
    assert_eq!(game_score(&apply(&f2, Ruleset::Natwa1990)?), (6.0, 1.0));
    Ok(())
}

#[test]
fn off_winks_get_spots_meeting_every_clause_of_13_1() -> TestResult {
    let pos = sample("off.json")?;
    let out = apply(&pos, Ruleset::Etwa2012)?;
    let spec = Ruleset::Etwa2012.spec();
    let field = spec.mat.field_of_play();
    let radius = |id: &str| pos.winks.iter().find(|w| w.id == id).map(|w| w.radius_mm(&NominalDiameters::STANDARD)).unwrap_or(0.0);
    let mut replaced: HashMap<String, MatPoint> = HashMap::new();
    for f in &out.flags {
        if let FlagDetail::Off { replacement_mm, forfeit } = &f.detail {
            let spot = replacement_mm.expect("a spot exists on this mat");
            assert_eq!(*forfeit, Some(Colour::Red), "red's shot sent a red wink off (14)");
            replaced.insert(f.winks[0].clone(), spot);
        }
    }
    assert_eq!(replaced.len(), 2, "r1 (crossing the edge, listed in play) and r3 (off)");
    assert_eq!(out.winks.iter().find(|w| w.id == "r1").map(|w| w.state), Some(WinkState::Off));
    let unplayed_baselines: Vec<_> = spec
        .mat
        .baselines()
        .into_iter()
        .filter(|b| pos.winks.iter().any(|w| w.state == WinkState::Unplayed && w.centre_mm.is_some_and(|c| b.depth_behind(c) > 0.0)))
        .collect();
    assert_eq!(unplayed_baselines.len(), 4);
    for (id, spot) in &replaced {
        let r = radius(id);
        // (i) nearest edge 22 mm in from the boundary of the field of play.
        assert!((field.inside_distance(*spot) - r - 22.0).abs() < 1e-6, "{id}: {spot:?}");
        // (ii) 10 cm from the edge of every other wink, including the other replaced one.
        for w in pos.winks.iter().filter(|w| w.id != *id && matches!(w.state, WinkState::InPlay | WinkState::Unplayed)) {
            let other = replaced.get(&w.id).copied().or(w.centre_mm).expect("centre");
            let gap = spot.distance(other) - r - radius(&w.id);
            assert!(gap >= 100.0 - 1e-6, "{id} only {gap} mm from {}", w.id);
        }
        // (iii) 10 cm from every baseline with unplayed winks behind it.
        for b in &unplayed_baselines {
            assert!(b.segment.distance(*spot) - r >= 100.0 - 1e-6);
        }
    }
    // r1 left near (700, 457.2): its spot is moved along the edge just enough to clear green's baseline.
    let r1 = replaced["r1"];
    assert!((r1.y - (457.2 - 30.0)).abs() < 1e-6 && r1.x < 700.0 && r1.x > 600.0, "{r1:?}");
    // 25.3: y2 under the pot's base is moved to touch it.
    let under: Vec<_> = out.flags.iter().filter(|f| f.detail.kind() == "under_pot").collect();
    assert_eq!(under.len(), 1);
    Ok(())
}

#[test]
fn off_winks_go_back_at_the_edge_under_the_early_rules() -> TestResult {
    let out = apply(&sample("off.json")?, Ruleset::EtwaOriginal)?;
    let field = Ruleset::EtwaOriginal.spec().mat.outline();
    for f in &out.flags {
        if let FlagDetail::Off { replacement_mm, .. } = &f.detail {
            let spot = replacement_mm.expect("spot");
            let r = if f.winks[0] == "r1" { 8.0 } else { 11.0 };
            assert!((field.inside_distance(spot) - r).abs() < 1e-6, "touching the edge: {spot:?}");
            assert_eq!(f.rule, "8");
        }
    }
    Ok(())
}

#[test]
fn pot_out_desquop_moves_meet_20_1() -> TestResult {
    let pos = sample("pot-out.json")?;
    let out = apply(&pos, Ruleset::Etwa2012)?;
    let moves = out
        .flags
        .iter()
        .find_map(|f| match &f.detail {
            FlagDetail::PotOut { colour: Colour::Blue, moves } => Some(moves.clone()),
            _ => None,
        })
        .expect("blue's pot-out flag");
    let uppers: Vec<&str> = pos.squops.iter().map(|s| s.upper.as_str()).collect();
    assert_eq!(moves.len(), 2);
    let mut at: HashMap<&str, (MatPoint, f64)> = pos
        .winks
        .iter()
        .filter(|w| w.state == WinkState::InPlay)
        .map(|w| (w.id.as_str(), (w.centre_mm.expect("centre"), w.radius_mm(&NominalDiameters::STANDARD))))
        .collect();
    for m in &moves {
        assert!(uppers.contains(&m.wink.as_str()), "only squopping winks move: {}", m.wink);
        let before = at[m.wink.as_str()].0;
        assert!((before.norm() - m.to_mm.norm()).abs() < 0.01, "distance from the pot kept");
        at.get_mut(m.wink.as_str()).expect("wink").0 = m.to_mm;
    }
    let all: Vec<_> = at.values().collect();
    for i in 0..all.len() {
        for j in (i + 1)..all.len() {
            let gap = all[i].0.distance(all[j].0) - all[i].1 - all[j].1;
            assert!(gap >= 2.0 - 1e-6, "gap {gap}");
        }
    }
    Ok(())
}

#[test]
fn squidge_off_order() -> TestResult {
    let out = apply(&sample("squidge-off.json")?, Ruleset::Etwa2012)?;
    let (order, tie) = out
        .flags
        .iter()
        .find_map(|f| match &f.detail {
            FlagDetail::SquidgeOff { order, tie } => Some((order.clone(), *tie)),
            _ => None,
        })
        .expect("squidge-off flag");
    assert_eq!(order, vec![Colour::Green, Colour::Blue, Colour::Red, Colour::Yellow]);
    assert!(!tie);
    assert!(!kinds(&out).contains(&"off"), "5.5: squidge-off winks go back behind the baselines");
    // Equal distances are a tie (5.4.2).
    let mut pos = sample("squidge-off.json")?;
    for w in pos.winks.iter_mut() {
        match w.id.as_str() {
            "b1" => w.centre_mm = Some(MatPoint::new(-60.0, 0.0)),
            "g1" => w.centre_mm = Some(MatPoint::new(0.0, 60.0)),
            _ => {}
        }
    }
    let out = apply(&pos, Ruleset::Etwa2012)?;
    assert!(out.flags.iter().any(|f| matches!(f.detail, FlagDetail::SquidgeOff { tie: true, .. })));
    Ok(())
}

#[test]
fn a_squop_cycle_is_refused() -> TestResult {
    // Every pile has a top wink, which is free; squops that go round in a circle are a mistake.
    let mut pos = sample("g1-squop-up.json")?;
    pos.squops.push(serde_json::from_str(r#"{"upper": "g1", "lower": "b1"}"#)?);
    let err = apply(&pos, Ruleset::Etwa2012).expect_err("cycle refused");
    assert!(err.to_string().contains("cycle"), "{err}");
    Ok(())
}

/// The field of play is bounded by the baselines as painted (rule 3): a document that says where
/// calibration found them has an unplayed wink checked against those lines, not the rules' own.
#[test]
fn unplayed_winks_are_checked_against_the_baselines_as_painted() -> TestResult {
    let mut p = sample("f1.json")?;
    // ru1 (red small, red's corner +X,−Y) 10 mm behind the rules' baseline: wholly behind it.
    let out = winkeye::geometry::MatSpec::STANDARD.baseline(winkeye::geometry::Corner::PosXNegY).outward;
    let ru1 = p.winks.iter_mut().find(|w| w.id == "ru1").expect("ru1");
    ru1.centre_mm = Some(out * (3.0 * winkeye::geometry::FOOT_MM + 10.0));
    let inconsistent = |p: &Position| -> Result<bool, Box<dyn std::error::Error>> { Ok(kinds(&apply(p, Ruleset::Etwa2012)?).contains(&"inconsistent")) };
    assert!(!inconsistent(&p)?);
    let mut painted = |d: Option<f64>| {
        let cal = p.calibration.get_or_insert_with(Default::default);
        cal.baselines_found_mm = Some([None, None, d, None]);
        p.clone()
    };
    // Painted 4 mm further out, the line crosses the wink; 4 mm further in, it does not; where
    // the document says it was not seen, the rules' line stands.
    assert!(inconsistent(&painted(Some(4.0)))?);
    assert!(!inconsistent(&painted(Some(-4.0)))?);
    assert!(!inconsistent(&painted(None))?);
    // A line said to be painted further off than any baseline is refused.
    let err = apply(&painted(Some(80.0)), Ruleset::Etwa2012).expect_err("refused");
    assert!(err.to_string().contains("baselines_found_mm[2]"), "{err}");
    Ok(())
}

#[test]
fn a_squop_given_little_confidence_is_flagged_as_not_sure_with_where_to_look_again() -> TestResult {
    let mut p = sample("f1.json")?;
    // The first squop read as a near guess, the second as sure, the rest as typed (no confidence).
    p.squops[0].confidence = Some(0.6);
    p.squops[1].confidence = Some(0.99);
    for (id, at) in [(p.squops[0].upper.clone(), (900.0, 400.0)), (p.squops[0].lower.clone(), (910.0, 420.0))] {
        let w = p.winks.iter_mut().find(|w| w.id == id).ok_or("the squop's wink")?;
        w.centre_px = Some(winkeye::geometry::PixelPoint::new(at.0, at.1));
    }
    let out = apply(&p, Ruleset::Etwa2012)?;
    let squop_flags: Vec<_> = out.flags.iter().filter_map(|f| match f.detail {
        FlagDetail::Squop { confidence, unsure, .. } => Some((f.winks.clone(), confidence, unsure, f.text.clone())),
        _ => None,
    }).collect();
    let of = |s: &winkeye::report::position::Squop| squop_flags.iter().find(|f| f.0 == [s.upper.clone(), s.lower.clone()]).cloned().ok_or("its flag");
    let (_, confidence, unsure, text) = of(&p.squops[0])?;
    assert_eq!((confidence, unsure), (Some(0.6), true));
    assert!(text.ends_with("by 6.8 mm, not sure (confidence 0.60): look again, e.g. winkeye umpire IMAGE --near 905,410"), "{text}");
    let (_, confidence, unsure, text) = of(&p.squops[1])?;
    assert_eq!((confidence, unsure), (Some(0.99), false));
    assert!(!text.contains("not sure"), "{text}");
    assert!(squop_flags.iter().skip(2).all(|f| !f.2 && f.1.is_none()));
    // With the frame's path in the document, the command names it.
    p.source = Some(serde_json::from_value(serde_json::json!({"path": "games/round 3.jpg"}))?);
    let out_with_path = apply(&p, Ruleset::Etwa2012)?;
    assert!(out_with_path.flags.iter().any(|f| f.text.ends_with("winkeye umpire \"games/round 3.jpg\" --near 905,410")));
    // A video's frame is named as one, the umpire asked of that frame.
    p.source = Some(serde_json::from_value(serde_json::json!({"path": "final.mp4", "frame": 812}))?);
    let out_of_video = apply(&p, Ruleset::Etwa2012)?;
    assert!(out_of_video.flags.iter().any(|f| f.text.ends_with("look again at 905,410 in frame 812 of final.mp4 (winkeye umpire on that frame, --near 905,410)")));
    // In the document: the flag carries the confidence, and `unsure` only when it is.
    let json = serde_json::to_value(&out)?;
    let flags = json["flags"].as_array().ok_or("flags")?;
    assert!(flags.iter().any(|f| f["kind"] == "squop" && f["unsure"] == true && f["confidence"] == 0.6));
    assert!(flags.iter().filter(|f| f["kind"] == "squop").all(|f| f["unsure"] == true || f.get("unsure").is_none()));
    Ok(())
}

#[test]
fn a_wink_measured_at_the_line_is_flagged_as_a_close_call_and_a_typed_one_is_not() -> TestResult {
    let mut p = sample("f1.json")?;
    let half_width = winkeye::geometry::MatSpec::STANDARD.width_mm / 2.0;
    // Three winks in play by the long edge: a real wink's edge (3% under the nominal size the
    // measured position lists) 0.2 mm inside it, 0.3 mm over it, 3 mm inside it.
    let ids: Vec<String> = p.winks.iter().filter(|w| w.state == WinkState::InPlay).take(3).map(|w| w.id.clone()).collect();
    for (k, (id, inside)) in ids.iter().zip([0.2, -0.3, 3.0]).enumerate() {
        let w = p.winks.iter_mut().find(|w| &w.id == id).ok_or("wink")?;
        let r = winkeye::geometry::REAL_DIAMETER_SHARE * w.radius_mm(&NominalDiameters::STANDARD);
        w.centre_mm = Some(MatPoint::new(-200.0 + 150.0 * k as f64, half_width - r - inside));
        w.centre_px = Some(winkeye::geometry::PixelPoint::new(300.0 + 100.0 * k as f64, 40.0));
    }
    p.squops.retain(|s| !ids.contains(&s.upper) && !ids.contains(&s.lower));
    let near = |out: &Position| -> Vec<(String, f64, String)> {
        out.flags.iter().filter_map(|f| match f.detail {
            FlagDetail::NearLine { inside_mm } => Some((f.winks[0].clone(), inside_mm, f.text.clone())),
            _ => None,
        }).collect()
    };
    // Typed in (no calibration): the position is exact, nothing to say; the diameters listed are
    // the winks', so the first, 0.2 mm inside as a real wink, crosses the line at its nominal size.
    let typed = apply(&p, Ruleset::Etwa2012)?;
    assert!(near(&typed).is_empty());
    assert!(typed.flags.iter().any(|f| f.detail.kind() == "off" && f.winks == [ids[0].clone()]));
    // Measured from a frame: the two within a millimetre of the line are close calls.
    p.calibration = Some(serde_json::from_value(serde_json::json!({"rms_px": 0.1}))?);
    let out = apply(&p, Ruleset::Etwa2012)?;
    let got = near(&out);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!((got[0].0.as_str(), got[1].0.as_str()), (ids[0].as_str(), ids[1].as_str()));
    assert!((got[0].1 - 0.2).abs() < 1e-9 && (got[1].1 + 0.3).abs() < 1e-9, "{got:?}");
    assert!(got[0].2.contains("lies 0.2 mm inside the field of play: whether it is off is a close call"), "{}", got[0].2);
    // Where to look again: the umpire at the wink, which calls it in or off.
    assert!(got[0].2.ends_with("look again, e.g. winkeye umpire IMAGE --near 300,40"), "{}", got[0].2);
    // Measured, the first is in play: only the one over the line is off.
    assert!(!out.flags.iter().any(|f| f.detail.kind() == "off" && f.winks == [ids[0].clone()]));
    assert!(got[1].2.contains("crosses the field of play's boundary by 0.3 mm"), "{}", got[1].2);
    // The one over the line is off all the same (13), with its replacement spot.
    assert!(out.flags.iter().any(|f| f.detail.kind() == "off" && f.winks == [ids[1].clone()]));
    Ok(())
}
