//! Applies a ruleset to a position: every flag, the counts, the piles and the score.

use super::board::{Board, Piece};
use super::off::{exit_point, replacement_spot, Footprint, ReplacementRule};
use super::pot::{desquop, out_from_under_pot, Disc};
use super::ruleset::{OffRule, Ruleset, RulesetSpec, ScoringRule};
use super::score::score;
use super::squidge_off::{is_squidge_off, squidge_off};
use super::squop_up::{squop_up_turns, squopped_up};
use crate::geometry::{ConvexPolygon, MatPoint, PixelPoint, Segment};
use crate::report::position::{Colour, Flag, FlagDetail, Move, Partnership, Position, PositionError, WinkState};

/// Applies `ruleset` to `position`: validates it, then returns it with `ruleset`, `counts`, `piles`,
/// `flags` and `score` filled in (any it had are replaced), missing `level`s filled in, and the
/// state of any wink listed in play whose footprint crosses the field's boundary set to `off`.
pub fn apply(position: &Position, ruleset: Ruleset) -> Result<Position, PositionError> {
    // The baselines where the document found them painted, if it says (rule 3: the field of play
    // is bounded by the lines on the mat).
    let painted = position.calibration.as_ref().and_then(|c| c.baselines_found_mm).map(|o| o.map(|v| v.unwrap_or(0.0)));
    let spec = &RulesetSpec { mat: ruleset.spec().mat.with_painted(painted.unwrap_or([0.0; 4])), ..*ruleset.spec() };
    position.validate(&spec.winks)?;
    let mut board = Board::new(position, &spec.winks);
    let field = spec.field_on(&spec.mat);
    let mut flags = Vec::new();

    for note in &board.inferred {
        flags.push(flag(spec.refs.winks, FlagDetail::Inferred { what: note.clone() }, vec![], format!("{note} (a colour has six winks)")));
    }
    let crossing = mark_crossing_winks(&mut board, &field);
    flags.extend(unplayed_checks(&board, spec));
    flags.extend(squop_flags(position, &board, spec));
    let game = position.game.clone().unwrap_or_default();
    let in_squidge_off = game.squidge_off_winner.is_none() && is_squidge_off(&board);
    // 5.5: after a squidge-off every wink goes back behind its baseline, so 13.1 does not apply.
    if !in_squidge_off {
        flags.extend(off_flags(&board, spec, &field, &crossing, game.last_shot_colour));
    }
    flags.extend(under_pot_flag(&board, spec));
    if position.calibration.is_some() {
        flags.extend(near_line_flags(position, &board, spec, &field));
    }

    let (pot_outs, order_flags) = pot_out_order(&board, position, spec);
    flags.extend(order_flags);
    flags.extend(pot_out_flags(&board, spec, &field, &pot_outs));

    if in_squidge_off {
        flags.extend(squidge_off_flag(&board, spec));
    }

    let unpotted: Vec<&Piece> = board.pieces.iter().filter(|p| p.state != WinkState::Potted).collect();
    let all_squopped = !unpotted.is_empty() && unpotted.iter().all(|p| p.squopped);
    if pot_outs.is_empty() && !all_squopped {
        for p in squopped_up(&board) {
            let s = squop_up_turns(&board, spec.squop_up, p, game.next_colour);
            let text = format!(
                "{} are squopped up: {} squop-up turn{} for {} ({})",
                p.label(),
                s.turns,
                if s.turns == 1 { "" } else { "s" },
                p.opponents().label(),
                s.reason
            );
            let rule = if s.turns > 0 { spec.refs.squop_up_turns } else { spec.refs.squopped_up };
            flags.push(flag(rule, FlagDetail::SquoppedUp { partnership: p, turns: s.turns }, vec![], text));
        }
    }

    let potted_out: Vec<Colour> = pot_outs.iter().flatten().copied().collect();
    let end_by_pot_out = match spec.scoring {
        ScoringRule::Official => Partnership::ALL.iter().any(|p| p.colours().iter().all(|c| potted_out.contains(c))),
        ScoringRule::Simplified => !potted_out.is_empty(),
        ScoringRule::PotOutOrder => potted_out.len() >= 3,
    };
    let is_final = end_by_pot_out || all_squopped;
    if end_by_pot_out {
        let reason = match spec.scoring {
            ScoringRule::Simplified => format!("{} potted out first", potted_out[0]),
            ScoringRule::PotOutOrder => "three colours have potted out".to_string(),
            ScoringRule::Official => "both colours of a partnership have potted out".to_string(),
        };
        flags.push(flag(spec.refs.pot_out_end, FlagDetail::GameOver { reason: reason.clone() }, vec![], format!("game over: {reason}")));
    } else if all_squopped {
        let reason = "every unpotted wink is squopped".to_string();
        flags.push(flag(spec.refs.all_squopped, FlagDetail::GameOver { reason: reason.clone() }, vec![], format!("game over: {reason}")));
    }

    let mut out = position.clone();
    out.ruleset = Some(ruleset.name().to_string());
    let levels = board.levels();
    for (i, w) in out.winks.iter_mut().enumerate() {
        w.state = board.pieces[i].state;
        if w.level.is_none() {
            w.level = Some(levels[i]);
        }
    }
    out.piles = board
        .piles
        .iter()
        .map(|pile| pile.iter().filter(|&&i| board.pieces[i].listed).map(|&i| board.pieces[i].id.clone()).collect())
        .collect();
    out.counts = Some(board.counts());
    out.score = Some(score(&board, spec.scoring, &pot_outs, is_final));
    out.flags = flags;
    Ok(out)
}

fn flag(rule: &str, detail: FlagDetail, winks: Vec<String>, text: String) -> Flag {
    Flag { rule: rule.to_string(), detail, winks, text }
}

fn describe(p: &Piece) -> String {
    match p.size {
        Some(size) => format!("{} ({} {})", p.id, p.colour, size.name()),
        None => format!("{} ({})", p.id, p.colour),
    }
}

fn mm(p: MatPoint) -> String {
    format!("({:.1}, {:.1}) mm", p.x, p.y)
}

/// Winks listed in play whose footprint crosses the field's boundary are off (13); returns them.
fn mark_crossing_winks(board: &mut Board, field: &ConvexPolygon) -> Vec<usize> {
    let mut crossing = Vec::new();
    for (i, p) in board.pieces.iter_mut().enumerate() {
        if let (WinkState::InPlay, Some(c)) = (p.state, p.centre) {
            if !field.contains_disc(c, p.edge_mm) {
                p.state = WinkState::Off;
                crossing.push(i);
            }
        }
    }
    crossing
}

/// An unplayed wink must lie wholly behind a baseline (3).
fn unplayed_checks(board: &Board, spec: &RulesetSpec) -> Vec<Flag> {
    let baselines = spec.mat.baselines();
    let mut flags = Vec::new();
    for p in &board.pieces {
        if let (WinkState::Unplayed, Some(c)) = (p.state, p.centre) {
            if !baselines.iter().any(|b| b.holds_disc(c, p.radius_mm)) {
                let text = format!("{} is listed as unplayed but is not wholly behind a baseline", describe(p));
                flags.push(flag(spec.refs.field, FlagDetail::Inconsistent {}, vec![p.id.clone()], text));
            }
        }
    }
    flags
}

/// A squop the position gives less confidence than this is flagged as not sure, with where to
/// look again (rule D.1: an umpire views a close squop from more than one position; `winkeye
/// umpire --near X,Y` gives the pair's margin and verdict). Over the renderer's five traced sets
/// (573 frames) the squops `analyze` gave at least this were right 694 times in 696, those under
/// it 931 in 1,206; on 90 flat-drawn frames 102 in 106 and 146 in 209 (session 33; `winkeye eval
/// DIR --what detection`).
pub const SURE_SQUOP: f64 = 0.97;

fn squop_flags(position: &Position, board: &Board, spec: &RulesetSpec) -> Vec<Flag> {
    let mut flags = Vec::new();
    for &(u, l, margin) in &board.squops {
        let (upper, lower) = (&board.pieces[u], &board.pieces[l]);
        let by = margin.map(|m| format!(" by {m:.1} mm")).unwrap_or_default();
        let confidence = position.squops.iter().find(|s| s.upper == upper.id && s.lower == lower.id).and_then(|s| s.confidence);
        let unsure = confidence.is_some_and(|c| c < SURE_SQUOP);
        let mut text = format!("{} squops {}{by}", describe(upper), describe(lower));
        if let (true, Some(c)) = (unsure, confidence) {
            text.push_str(&format!(", not sure (confidence {c:.2}): {}", second_look(position, &[&upper.id, &lower.id])));
        }
        flags.push(flag(spec.refs.squop, FlagDetail::Squop { margin_mm: margin, confidence, unsure }, vec![upper.id.clone(), lower.id.clone()], text));
    }
    for pile in board.piles.iter().filter(|p| p.len() >= 3) {
        let ids: Vec<String> = pile.iter().map(|&i| board.pieces[i].id.clone()).collect();
        let text = format!("a pile of {} winks: {}", ids.len(), ids.join(", "));
        flags.push(flag(spec.refs.pile, FlagDetail::Pile {}, ids, text));
    }
    flags
}

/// The baselines with unplayed winks behind them (13.1 (iii)), and whether any unplayed wink's
/// place was unknown (then every baseline is kept clear).
fn active_baselines(board: &Board, spec: &RulesetSpec) -> (Vec<Segment>, bool) {
    let baselines = spec.mat.baselines();
    let mut active = [false; 4];
    let mut unknown = false;
    for p in board.pieces.iter().filter(|p| p.state == WinkState::Unplayed) {
        match p.centre {
            Some(c) => {
                for (k, b) in baselines.iter().enumerate() {
                    active[k] |= b.depth_behind(c) > 0.0;
                }
            }
            None => unknown = true,
        }
    }
    if unknown {
        active = [true; 4];
    }
    let segments = baselines.iter().zip(active).filter(|(_, a)| *a).map(|(b, _)| b.segment).collect();
    (segments, unknown)
}

fn off_flags(board: &Board, spec: &RulesetSpec, field: &ConvexPolygon, crossing: &[usize], last_shot: Option<Colour>) -> Vec<Flag> {
    let mut placed: Vec<Footprint> = board
        .pieces
        .iter()
        .filter(|p| matches!(p.state, WinkState::InPlay | WinkState::Unplayed))
        .filter_map(|p| Some(Footprint { centre: p.centre?, radius_mm: p.radius_mm }))
        .collect();
    let (baselines, unknown_unplayed) = match spec.off {
        OffRule::Inset { .. } => active_baselines(board, spec),
        OffRule::AtEdge => (Vec::new(), false),
    };
    let mut flags = Vec::new();
    for (i, p) in board.pieces.iter().enumerate().filter(|(_, p)| p.state == WinkState::Off) {
        let exit = p.left.or_else(|| p.centre.map(|c| exit_point(field, c)));
        let spot = exit.and_then(|exit| {
            let rule = match spec.off {
                OffRule::Inset { inset_mm, clearance_mm } => {
                    ReplacementRule { field, inset_mm, clearance_mm, others: &placed, active_baselines: &baselines }
                }
                OffRule::AtEdge => ReplacementRule { field, inset_mm: 0.0, clearance_mm: 0.0, others: &[], active_baselines: &[] },
            };
            replacement_spot(&rule, p.radius_mm, exit)
        });
        if let Some(s) = spot {
            placed.push(Footprint { centre: s, radius_mm: p.radius_mm });
        }
        let forfeit = (last_shot == Some(p.colour)).then_some(p.colour);
        let mut text = format!("{} is off", describe(p));
        if crossing.contains(&i) {
            text.push_str(" (listed in play, but its footprint crosses the boundary)");
        }
        match (spot, exit, spec.off) {
            (Some(s), _, OffRule::Inset { inset_mm, clearance_mm }) => text.push_str(&format!(
                ": replace it flat at {}, its nearest edge {inset_mm:.0} mm in from the boundary and at least {:.0} cm from other winks{}",
                mm(s),
                clearance_mm / 10.0,
                if unknown_unplayed { " and from every baseline (an unplayed wink's place is unknown)" } else { " and from baselines with unplayed winks" }
            )),
            (Some(s), _, OffRule::AtEdge) => text.push_str(&format!(": replace it at the edge where it left, at {}", mm(s))),
            (None, Some(_), _) => text.push_str(": no spot on the mat satisfies the rule; the umpire decides"),
            (None, None, _) => text.push_str(": its position is unknown, so no replacement spot"),
        }
        if let Some(c) = forfeit {
            text.push_str(&format!("; {c} forfeits its next shot ({})", spec.refs.forfeit));
        }
        flags.push(flag(spec.refs.off, FlagDetail::Off { replacement_mm: spot, forfeit }, vec![p.id.clone()], text));
    }
    flags
}

/// Where to look again at some winks (a squop's two, or one at the line): the umpire's command at
/// their middle in the frame (the image named when the document has its path; a video's frame
/// named as one, the umpire reading an image saved from it).
fn second_look(position: &Position, ids: &[&str]) -> String {
    let px: Option<Vec<PixelPoint>> = ids.iter().map(|&id| position.winks.iter().find(|w| w.id == id).and_then(|w| w.centre_px)).collect();
    let Some(px) = px.filter(|p| !p.is_empty()) else { return "look again".to_string() };
    let n = px.len() as f64;
    let (x, y) = (px.iter().map(|p| p.x).sum::<f64>() / n, px.iter().map(|p| p.y).sum::<f64>() / n);
    let source = position.source.as_ref();
    let path = source.and_then(|s| s.path.as_deref()).map(|p| if p.contains(char::is_whitespace) { format!("\"{p}\"") } else { p.to_string() });
    match source.and_then(|s| s.frame) {
        None => format!("look again, e.g. winkeye umpire {} --near {x:.0},{y:.0}", path.as_deref().unwrap_or("IMAGE")),
        Some(frame) => format!("look again at {x:.0},{y:.0} in frame {frame}{} (winkeye umpire on that frame, --near {x:.0},{y:.0})", path.map(|p| format!(" of {p}")).unwrap_or_default()),
    }
}

/// A wink whose footprint's edge lies within this of the field of play's boundary, either side,
/// is flagged as a close call at the line (rule 13: off when any part of it is beyond), when the
/// position was measured from a frame (it has a `calibration`; a position typed in is exact).
/// Footprints measured from an overhead frame are that near where they are 95 times in 100 or
/// more: the 95th percentile of their error is 0.72–0.88 mm over the renderer's traced sets,
/// 0.58–0.63 mm for winks seen whole (`winkeye eval DIR --what detection`).
pub const CLOSE_LINE_MM: f64 = 1.0;

/// Winks in play or off whose footprint's edge ([`Piece::edge_mm`]) lies within
/// [`CLOSE_LINE_MM`] of the boundary.
fn near_line_flags(position: &Position, board: &Board, spec: &RulesetSpec, field: &ConvexPolygon) -> Vec<Flag> {
    let mut flags = Vec::new();
    for p in board.pieces.iter().filter(|p| p.listed && matches!(p.state, WinkState::InPlay | WinkState::Off)) {
        let Some(c) = p.centre else { continue };
        let inside = field.inside_distance(c) - p.edge_mm;
        if inside.abs() >= CLOSE_LINE_MM {
            continue;
        }
        let lies = if inside >= 0.0 { format!("lies {inside:.1} mm inside the field of play") } else { format!("crosses the field of play's boundary by {:.1} mm", -inside) };
        let text = format!("{} {lies}: whether it is off is a close call, within the measurement's reach of {CLOSE_LINE_MM:.0} mm; {}", describe(p), second_look(position, &[&p.id]));
        flags.push(flag(spec.refs.off, FlagDetail::NearLine { inside_mm: crate::report::round3(inside) }, vec![p.id.clone()], text));
    }
    flags
}

fn under_pot_flag(board: &Board, spec: &RulesetSpec) -> Option<Flag> {
    let base_r = spec.pot.base_diameter_mm / 2.0;
    let mut moves = Vec::new();
    let mut parts = Vec::new();
    for p in board.pieces.iter().filter(|p| matches!(p.state, WinkState::InPlay)) {
        let Some(c) = p.centre else { continue };
        if let Some(to) = out_from_under_pot(c, p.radius_mm, base_r) {
            parts.push(format!("{} {:.1} mm out to {}", describe(p), to.distance(c), mm(to)));
            moves.push(Move { wink: p.id.clone(), to_mm: to });
        }
    }
    if moves.is_empty() {
        return None;
    }
    let text = format!("under the pot's base: move {} to touch the base", parts.join(", "));
    let winks = moves.iter().map(|m| m.wink.clone()).collect();
    Some(flag(spec.refs.under_pot, FlagDetail::UnderPot { moves }, winks, text))
}

/// The order of pot-outs: `game.potted_out` where given, checked against the winks; colours with
/// six potted that it does not list come last, together, their order unknown.
fn pot_out_order(board: &Board, position: &Position, spec: &RulesetSpec) -> (Vec<Vec<Colour>>, Vec<Flag>) {
    let done: Vec<Colour> = Colour::ALL.into_iter().filter(|&c| board.potted(c) == 6).collect();
    let mut flags = Vec::new();
    let mut order: Vec<Vec<Colour>> = Vec::new();
    for entry in position.game.iter().flat_map(|g| g.potted_out.iter()) {
        let mut group = Vec::new();
        for c in entry.colours() {
            if !done.contains(&c) {
                let text = format!("game.potted_out lists {c}, but only {} {c} winks are potted", board.potted(c));
                flags.push(flag(spec.refs.pot_out, FlagDetail::Inconsistent {}, vec![], text));
            } else if !order.iter().flatten().any(|d| *d == c) && !group.contains(&c) {
                group.push(c);
            }
        }
        if !group.is_empty() {
            order.push(group);
        }
    }
    let unordered: Vec<Colour> = done.into_iter().filter(|c| !order.iter().flatten().any(|d| d == c)).collect();
    if unordered.len() > 1 {
        let names: Vec<&str> = unordered.iter().map(|c| c.name()).collect();
        let what = format!("{} potted out in an order the position does not show; taken as the same shot", names.join(" and "));
        flags.push(flag(spec.refs.pot_out_points, FlagDetail::Inferred { what: what.clone() }, vec![], what));
    }
    if !unordered.is_empty() {
        order.push(unordered);
    }
    (order, flags)
}

fn pot_out_flags(board: &Board, spec: &RulesetSpec, field: &ConvexPolygon, order: &[Vec<Colour>]) -> Vec<Flag> {
    let colours: Vec<Colour> = order.iter().flatten().copied().collect();
    let Some(&last) = colours.last() else { return Vec::new() };
    let mut flags = Vec::new();
    for &c in &colours {
        let mut text = format!("{c} has potted out");
        let mut moves = Vec::new();
        if c == last && spec.scoring != ScoringRule::Simplified {
            let (m, note) = desquop_moves(board, spec, field);
            moves = m;
            text.push_str(&note);
        }
        let winks = moves.iter().map(|m: &Move| m.wink.clone()).collect();
        let rule = if moves.is_empty() { spec.refs.pot_out } else { spec.refs.desquop };
        flags.push(flag(rule, FlagDetail::PotOut { colour: c, moves }, winks, text));
    }
    flags
}

/// Rule 20.1's moves for the current position, and a clause describing them.
fn desquop_moves(board: &Board, spec: &RulesetSpec, field: &ConvexPolygon) -> (Vec<Move>, String) {
    let discs: Vec<Option<Disc>> = board
        .pieces
        .iter()
        .map(|p| match p.state {
            WinkState::InPlay | WinkState::Unplayed => p.centre.map(|c| Disc { centre: c, radius_mm: p.radius_mm }),
            _ => None,
        })
        .collect();
    let squops: Vec<(usize, usize)> = board.squops.iter().map(|&(u, l, _)| (u, l)).collect();
    let levels = board.levels();
    let mut order: Vec<usize> = squops.iter().map(|&(u, _)| u).collect();
    order.sort_by(|a, b| levels[*b].cmp(&levels[*a]).then(a.cmp(b)));
    order.dedup();
    let result = desquop(&discs, &squops, &order, field, spec.desquop_gap_mm);
    let moves: Vec<Move> =
        result.moves.iter().map(|&(k, to)| Move { wink: board.pieces[k].id.clone(), to_mm: to }).collect();
    let mut note = if moves.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = result.moves.iter().map(|&(k, to)| format!("{} to {}", board.pieces[k].id, mm(to))).collect();
        format!(
            ": undo squops keeping each wink's distance from the pot ({} mm gaps): move {}",
            spec.desquop_gap_mm,
            parts.join(", ")
        )
    };
    if !result.crowded.is_empty() {
        let ids: Vec<&str> = result.crowded.iter().map(|&k| board.pieces[k].id.as_str()).collect();
        note.push_str(&format!("; no spot keeps the full gap for {} (the players or umpire decide)", ids.join(", ")));
    }
    (moves, note)
}

fn squidge_off_flag(board: &Board, spec: &RulesetSpec) -> Option<Flag> {
    let s = squidge_off(board, spec.pot.top_diameter_mm / 2.0)?;
    let first = *s.order.first()?;
    let parts: Vec<String> = s
        .distances_mm
        .iter()
        .map(|(c, d)| match d {
            Some(d) => format!("{c} {d:.1} mm"),
            None => format!("{c} {}", if board.of_colour(*c).any(|w| w.state == WinkState::Potted) { "potted" } else { "off" }),
        })
        .collect();
    let mut text = match (s.tie, s.waiting.is_empty()) {
        (true, true) => format!("squidge-off tied for nearest the pot: the tied colours squidge again ({})", parts.join(", ")),
        (false, true) => format!("{first} wins the squidge-off ({})", parts.join(", ")),
        (true, false) => format!("squidge-off so far tied for nearest the pot ({})", parts.join(", ")),
        (false, false) => format!("squidge-off so far: {first} nearest the pot ({})", parts.join(", ")),
    };
    if !s.waiting.is_empty() {
        let names: Vec<&str> = s.waiting.iter().map(|c| c.name()).collect();
        text.push_str(&format!("; still to play: {}", names.join(", ")));
    }
    Some(flag(spec.refs.squidge_off, FlagDetail::SquidgeOff { order: s.order, tie: s.tie }, vec![], text))
}
