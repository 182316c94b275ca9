//! The rules engine's view of a position: every wink of every colour (six each, the unlisted
//! ones accounted for by reasoning), who squops whom, and the piles.

use crate::geometry::{MatPoint, REAL_DIAMETER_SHARE};
use crate::report::position::{Colour, NominalDiameters, Position, StateCounts, WinkSize, WinkState};
use std::collections::{BTreeMap, HashMap};

/// One wink as the rules see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    /// The document's id, or `"<colour>?<n>"` for a wink accounted for by reasoning.
    pub id: String,
    /// Colour.
    pub colour: Colour,
    /// Size class, when listed.
    pub size: Option<WinkSize>,
    /// Footprint radius, in mm.
    pub radius_mm: f64,
    /// How far its footprint's edge reaches from its centre, mm, to decide whether it crosses a
    /// line (13): the radius listed, or where a position measured from a frame lists the nominal
    /// diameter (the frame did not measure the wink's own), a real wink's, [`REAL_DIAMETER_SHARE`]
    /// of it.
    pub edge_mm: f64,
    /// Footprint centre, in mm, when known.
    pub centre: Option<MatPoint>,
    /// Where it left the playing volume, when known.
    pub left: Option<MatPoint>,
    /// Its state.
    pub state: WinkState,
    /// Whether the document lists it (false: counted by reasoning).
    pub listed: bool,
    /// Whether some wink is above it (8.2).
    pub squopped: bool,
    /// Whether it is above some wink (8.2).
    pub squopping: bool,
}

impl Piece {
    /// Neither potted nor squopped (rule 8.3). Unplayed and off winks are free: they can be played
    /// (an off wink is back on the field before the next shot, rule 13).
    pub fn is_free(&self) -> bool {
        self.state != WinkState::Potted && !self.squopped
    }

    /// On the field of play (rule 3, 22.2.2): played and not potted. An off wink counts, since it
    /// is replaced on the field before the next shot.
    pub fn on_field(&self) -> bool {
        matches!(self.state, WinkState::InPlay | WinkState::Off)
    }

    /// Part of a pile: squopping or squopped (22.2.2).
    pub fn in_pile(&self) -> bool {
        self.squopped || self.squopping
    }
}

/// The whole position, ready for the rules.
#[derive(Debug, Clone)]
pub struct Board {
    /// All 24 winks (fewer only when a colour lists more than its counts allow for).
    pub pieces: Vec<Piece>,
    /// Squops as (upper, lower) indices into `pieces`.
    pub squops: Vec<(usize, usize, Option<f64>)>,
    /// Piles as lists of indices, each sorted, ordered by their first index.
    pub piles: Vec<Vec<usize>>,
    /// What was accounted for by reasoning, one sentence per colour.
    pub inferred: Vec<String>,
}

impl Board {
    /// Builds the board from a validated position.
    ///
    /// A colour that lists fewer than six winks has the others accounted for from the document's
    /// `counts` where it gives more of a state than are listed, and otherwise as potted: a wink
    /// that cannot be seen is in the pot or wholly under another wink, and a detector lists the
    /// hidden-under ones it infers. Unlisted winks counted `in_play` are taken to be hidden under
    /// another wink, so squopped.
    pub fn new(position: &Position, nominal: &NominalDiameters) -> Board {
        let measured = position.calibration.is_some();
        let mut pieces: Vec<Piece> = position
            .winks
            .iter()
            .map(|w| Piece {
                id: w.id.clone(),
                colour: w.colour,
                size: Some(w.size),
                radius_mm: w.radius_mm(nominal),
                edge_mm: w.radius_mm(nominal) * if measured && w.diameter_mm.is_none_or(|d| (d - nominal.of(w.size)).abs() < 1e-6) { REAL_DIAMETER_SHARE } else { 1.0 },
                centre: w.centre_mm,
                left: w.left_mm,
                state: w.state,
                listed: true,
                squopped: false,
                squopping: false,
            })
            .collect();
        let index: HashMap<&str, usize> = position.winks.iter().enumerate().map(|(i, w)| (w.id.as_str(), i)).collect();
        let squops: Vec<(usize, usize, Option<f64>)> = position
            .squops
            .iter()
            .filter_map(|s| Some((*index.get(s.upper.as_str())?, *index.get(s.lower.as_str())?, s.margin_mm)))
            .collect();
        for &(u, l, _) in &squops {
            pieces[u].squopping = true;
            pieces[l].squopped = true;
        }
        let inferred = account_for_unlisted(&mut pieces, position.counts.as_ref(), nominal);
        let piles = find_piles(pieces.len(), &squops);
        Board { pieces, squops, piles, inferred }
    }

    /// Indices of the winks of one colour.
    pub fn of_colour(&self, colour: Colour) -> impl Iterator<Item = &Piece> + '_ {
        self.pieces.iter().filter(move |p| p.colour == colour)
    }

    /// How many winks of `colour` are potted.
    pub fn potted(&self, colour: Colour) -> usize {
        self.of_colour(colour).filter(|p| p.state == WinkState::Potted).count()
    }

    /// Counts per colour and state.
    pub fn counts(&self) -> BTreeMap<Colour, StateCounts> {
        let mut counts: BTreeMap<Colour, StateCounts> = Colour::ALL.iter().map(|&c| (c, StateCounts::default())).collect();
        for p in &self.pieces {
            counts.entry(p.colour).or_default().add(p.state);
        }
        counts
    }

    /// Each piece's level in its pile: 0 for winks with nothing below them, otherwise one more
    /// than the highest wink they squop.
    pub fn levels(&self) -> Vec<u32> {
        let mut level = vec![0u32; self.pieces.len()];
        // Squops form a DAG (validated), so relaxing |V| times settles every level.
        for _ in 0..self.pieces.len() {
            let mut changed = false;
            for &(u, l, _) in &self.squops {
                if level[u] < level[l] + 1 {
                    level[u] = level[l] + 1;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        level
    }
}

fn account_for_unlisted(pieces: &mut Vec<Piece>, counts: Option<&BTreeMap<Colour, StateCounts>>, nominal: &NominalDiameters) -> Vec<String> {
    let mut notes = Vec::new();
    for colour in Colour::ALL {
        let mut listed = StateCounts::default();
        for p in pieces.iter().filter(|p| p.colour == colour) {
            listed.add(p.state);
        }
        let missing = 6u32.saturating_sub(listed.total());
        if missing == 0 {
            continue;
        }
        let claimed = counts.and_then(|c| c.get(&colour)).copied().unwrap_or_default();
        let mut added: Vec<(WinkState, u32)> = Vec::new();
        let mut left = missing;
        for state in [WinkState::InPlay, WinkState::Off, WinkState::Unplayed, WinkState::Potted] {
            let extra = claimed.get(state).saturating_sub(listed.get(state)).min(left);
            if extra > 0 {
                added.push((state, extra));
                left -= extra;
            }
        }
        if left > 0 {
            match added.iter_mut().find(|(s, _)| *s == WinkState::Potted) {
                Some((_, n)) => *n += left,
                None => added.push((WinkState::Potted, left)),
            }
        }
        let mut serial = 0;
        for &(state, n) in &added {
            for _ in 0..n {
                serial += 1;
                pieces.push(Piece {
                    id: format!("{colour}?{serial}"),
                    colour,
                    size: None,
                    radius_mm: nominal.small_mm / 2.0,
                    edge_mm: nominal.small_mm / 2.0,
                    centre: None,
                    left: None,
                    state,
                    listed: false,
                    // Not seen on the mat yet counted in play: taken as hidden under another wink.
                    squopped: state == WinkState::InPlay,
                    squopping: false,
                });
            }
        }
        let parts: Vec<String> = added
            .iter()
            .map(|(s, n)| {
                let how = if *s == WinkState::InPlay { "in play, unseen (under another wink, or not found)" } else { s.name() };
                format!("{n} {how}")
            })
            .collect();
        notes.push(format!("{missing} {colour} wink{} not listed, counted as {}", plural(missing), parts.join(" and ")));
    }
    notes
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Connected components of the squop graph with two or more winks (rule 8.2.2).
fn find_piles(n: usize, squops: &[(usize, usize, Option<f64>)]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for &(u, l, _) in squops {
        let (a, b) = (root(&mut parent, u), root(&mut parent, l));
        if a != b {
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..n {
        let r = root(&mut parent, i);
        groups.entry(r).or_default().push(i);
    }
    groups.into_values().filter(|g| g.len() >= 2).collect()
}
