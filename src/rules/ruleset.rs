//! The five rulesets: their equipment and which rule each decision follows.
//!
//! Where a text is silent, the ruleset falls back to `etwa-2012` and its rule references say so
//! (`"etwa-2012 25.3"`).

use crate::geometry::{ConvexPolygon, MatSpec, PotSpec, FOOT_MM};
use crate::report::position::NominalDiameters;
use std::fmt;

/// A ruleset, selected by name (`--ruleset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Ruleset {
    /// The Official Rules of Tiddlywinks, ETwA, April 2012 (the default).
    #[default]
    Etwa2012,
    /// ETwA's condensed version of the 2012 rules.
    EtwaSimplified,
    /// NATwA rules, May 1990.
    Natwa1990,
    /// The early ETwA rules.
    EtwaOriginal,
    /// "Les règles officielles du Tiddly", 1959–60.
    Fr1960,
}

/// The name is not one of the five rulesets.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown ruleset \"{name}\"; known: etwa-2012, etwa-simplified, natwa-1990, etwa-original, fr-1960")]
pub struct UnknownRuleset {
    /// The name given.
    pub name: String,
}

/// How a wink that went off is put back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OffRule {
    /// Flat, nearest edge `inset_mm` in from the boundary, as near as possible to where it left,
    /// its nearest edge at least `clearance_mm` from every other wink and from any baseline with
    /// unplayed winks behind it (etwa-2012 13.1, natwa-1990 7(a)).
    Inset {
        /// Distance of the wink's nearest edge from the boundary, in mm.
        inset_mm: f64,
        /// Least distance from the wink's edge to other winks' edges and to active baselines, in mm.
        clearance_mm: f64,
    },
    /// On the edge where it left (etwa-original 8, fr-1960 7, etwa-simplified 9).
    AtEdge,
}

/// How many squop-up (free) turns the squopping partnership gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SquopUpRule {
    /// One more than the winks on the field of play not in piles, with 22.2.3's special case.
    Etwa2012,
    /// One per wink on the field of play neither squopping nor squopped (natwa-1990 11(a)).
    Natwa1990,
    /// The squopping pair's own free winks (etwa-original 9(c), fr-1960 10).
    SquoppingPairFreeWinks,
    /// None: the ruleset has no squop-up turns (etwa-simplified).
    None,
}

/// How the game is scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoringRule {
    /// Tiddlies 3/1 ranked 4/2/1/0; pot-outs 4/2/1/0 with one point transferred (19, 20.2).
    Official,
    /// The partnership of the colour with most tiddlies wins; the first pot-out wins (15, 16).
    Simplified,
    /// Only the order of potting out, 4/2/1/0, partners added, no transfer (etwa-original 5, fr-1960 4).
    PotOutOrder,
}

/// Rule numbers in the ruleset's own text, for each decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleRefs {
    /// The set of winks: six of each colour (etwa-2012 2.1.1).
    pub winks: &'static str,
    /// A squop (etwa-2012 8.2).
    pub squop: &'static str,
    /// A pile (8.2.2).
    pub pile: &'static str,
    /// The field of play and unplayed winks (3).
    pub field: &'static str,
    /// A wink off and its replacement (13.1).
    pub off: &'static str,
    /// Forfeiting a shot for sending one's own wink off (14).
    pub forfeit: &'static str,
    /// Winks under the pot's base (25.3).
    pub under_pot: &'static str,
    /// A pot-out (15).
    pub pot_out: &'static str,
    /// Desquopping after a pot-out (20.1).
    pub desquop: &'static str,
    /// The squidge-off (5.4).
    pub squidge_off: &'static str,
    /// Squopped up (22.1).
    pub squopped_up: &'static str,
    /// Squop-up turns (22.2).
    pub squop_up_turns: &'static str,
    /// The game ends when every unpotted wink is squopped (21).
    pub all_squopped: &'static str,
    /// The game ends by pot-outs (16 ii, 20).
    pub pot_out_end: &'static str,
    /// Tiddlies (19.1).
    pub tiddlies: &'static str,
    /// Points from tiddlies (19.2).
    pub tiddly_points: &'static str,
    /// Points from pot-outs (20.2).
    pub pot_out_points: &'static str,
}

/// Everything the rules engine needs to know about one ruleset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RulesetSpec {
    /// Which ruleset.
    pub ruleset: Ruleset,
    /// The mat and where the baselines (or start lines) cross its diagonals.
    pub mat: MatSpec,
    /// The pot.
    pub pot: PotSpec,
    /// Nominal wink diameters.
    pub winks: NominalDiameters,
    /// Whether the areas behind the baselines are outside the field of play (etwa-2012 rule 3);
    /// where not, only the mat's edge bounds it ("off the mat").
    pub baselines_bound_field: bool,
    /// How winks that went off are put back.
    pub off: OffRule,
    /// Squop-up turns.
    pub squop_up: SquopUpRule,
    /// Scoring.
    pub scoring: ScoringRule,
    /// The gap left between winks when desquopping after a pot-out, in mm.
    pub desquop_gap_mm: f64,
    /// Rule numbers.
    pub refs: RuleRefs,
}

impl RulesetSpec {
    /// The field of play (rule 3) on `mat` (this ruleset's, or one with its baselines where they
    /// are painted): the mat less the corners behind the baselines, or the whole mat where this
    /// ruleset's baselines do not bound it.
    pub fn field_on(&self, mat: &MatSpec) -> ConvexPolygon {
        if self.baselines_bound_field {
            mat.field_of_play()
        } else {
            mat.outline()
        }
    }
}

const ETWA_2012_REFS: RuleRefs = RuleRefs {
    winks: "2.1.1",
    squop: "8.2",
    pile: "8.2.2",
    field: "3",
    off: "13.1",
    forfeit: "14",
    under_pot: "25.3",
    pot_out: "15",
    desquop: "20.1",
    squidge_off: "5.4",
    squopped_up: "22.1",
    squop_up_turns: "22.2",
    all_squopped: "21",
    pot_out_end: "16",
    tiddlies: "19.1",
    tiddly_points: "19.2",
    pot_out_points: "20.2",
};

const ETWA_2012: RulesetSpec = RulesetSpec {
    ruleset: Ruleset::Etwa2012,
    mat: MatSpec::STANDARD,
    pot: PotSpec::STANDARD,
    winks: NominalDiameters::STANDARD,
    baselines_bound_field: true,
    off: OffRule::Inset { inset_mm: 22.0, clearance_mm: 100.0 },
    squop_up: SquopUpRule::Etwa2012,
    scoring: ScoringRule::Official,
    desquop_gap_mm: 2.0,
    refs: ETWA_2012_REFS,
};

const ETWA_SIMPLIFIED: RulesetSpec = RulesetSpec {
    ruleset: Ruleset::EtwaSimplified,
    off: OffRule::AtEdge,
    squop_up: SquopUpRule::None,
    scoring: ScoringRule::Simplified,
    refs: RuleRefs {
        winks: "2.1",
        squop: "6.2",
        pile: "etwa-2012 8.2.2",
        field: "etwa-2012 3",
        off: "9",
        forfeit: "10",
        under_pot: "etwa-2012 25.3",
        pot_out: "11",
        desquop: "etwa-2012 20.1",
        squidge_off: "3.3",
        squopped_up: "6.3",
        squop_up_turns: "17",
        all_squopped: "etwa-2012 21",
        pot_out_end: "16",
        tiddlies: "15",
        tiddly_points: "15",
        pot_out_points: "16",
    },
    ..ETWA_2012
};

const NATWA_1990: RulesetSpec = RulesetSpec {
    ruleset: Ruleset::Natwa1990,
    winks: NominalDiameters { large_mm: 22.0, small_mm: 15.0 },
    squop_up: SquopUpRule::Natwa1990,
    refs: RuleRefs {
        winks: "2",
        squop: "6(a)",
        pile: "etwa-2012 8.2.2",
        field: "3",
        off: "7(a)",
        forfeit: "7(a)",
        under_pot: "7(b)",
        pot_out: "8",
        desquop: "8",
        squidge_off: "5(a)",
        squopped_up: "11(a)",
        squop_up_turns: "11(a)",
        all_squopped: "6(b)",
        pot_out_end: "10(a)",
        tiddlies: "10(b)",
        tiddly_points: "10(b)",
        pot_out_points: "10(a)",
    },
    ..ETWA_2012
};

const ETWA_ORIGINAL: RulesetSpec = RulesetSpec {
    ruleset: Ruleset::EtwaOriginal,
    // "2 yards by 1 yard", winks placed 3 ft from the pot; the pot's and winks' sizes are
    // illegible in the surviving copy, so etwa-2012's stand in.
    mat: MatSpec::new(6.0 * FOOT_MM, 3.0 * FOOT_MM, 3.0 * FOOT_MM),
    baselines_bound_field: false,
    off: OffRule::AtEdge,
    squop_up: SquopUpRule::SquoppingPairFreeWinks,
    scoring: ScoringRule::PotOutOrder,
    // 9(d): "until it no longer covers any other wink": no gap is asked for.
    desquop_gap_mm: 0.0,
    refs: RuleRefs {
        winks: "4",
        squop: "9",
        pile: "9(b)",
        field: "8",
        off: "8",
        forfeit: "8",
        under_pot: "etwa-2012 25.3",
        pot_out: "5",
        desquop: "9(d)",
        squidge_off: "6",
        squopped_up: "9(c)",
        squop_up_turns: "9(c)",
        all_squopped: "etwa-2012 21",
        pot_out_end: "5",
        tiddlies: "5",
        tiddly_points: "5",
        pot_out_points: "5",
    },
    ..ETWA_2012
};

const FR_1960: RulesetSpec = RulesetSpec {
    ruleset: Ruleset::Fr1960,
    // "environ 2 mètres de long sur 1 mètre de large", winks placed 1 m from the pot.
    mat: MatSpec::new(2000.0, 1000.0, 1000.0),
    // 36 mm high, 50 mm across the top; the base is not given, so etwa-2012's 38 mm stands in.
    pot: PotSpec { height_mm: 36.0, top_diameter_mm: 50.0, base_diameter_mm: 38.0 },
    baselines_bound_field: false,
    off: OffRule::AtEdge,
    squop_up: SquopUpRule::SquoppingPairFreeWinks,
    scoring: ScoringRule::PotOutOrder,
    desquop_gap_mm: 0.0,
    refs: RuleRefs {
        winks: "3",
        squop: "8",
        pile: "9",
        field: "7",
        off: "7",
        forfeit: "7",
        under_pot: "etwa-2012 25.3",
        pot_out: "4",
        desquop: "12",
        squidge_off: "5",
        squopped_up: "10",
        squop_up_turns: "10",
        all_squopped: "etwa-2012 21",
        pot_out_end: "4",
        tiddlies: "4",
        tiddly_points: "4",
        pot_out_points: "4",
    },
    ..ETWA_2012
};

impl Ruleset {
    /// All five, the default first.
    pub const ALL: [Ruleset; 5] =
        [Ruleset::Etwa2012, Ruleset::EtwaSimplified, Ruleset::Natwa1990, Ruleset::EtwaOriginal, Ruleset::Fr1960];

    /// The name used on the command line and in documents.
    pub fn name(self) -> &'static str {
        match self {
            Ruleset::Etwa2012 => "etwa-2012",
            Ruleset::EtwaSimplified => "etwa-simplified",
            Ruleset::Natwa1990 => "natwa-1990",
            Ruleset::EtwaOriginal => "etwa-original",
            Ruleset::Fr1960 => "fr-1960",
        }
    }

    /// The ruleset with this name.
    pub fn from_name(name: &str) -> Result<Ruleset, UnknownRuleset> {
        Ruleset::ALL.into_iter().find(|r| r.name() == name).ok_or_else(|| UnknownRuleset { name: name.to_owned() })
    }

    /// What it is, in one line.
    pub fn summary(self) -> &'static str {
        match self {
            Ruleset::Etwa2012 => {
                "The Official Rules of Tiddlywinks (ETwA, April 2012): tiddlies 4-2-1-0, pot-out transfer, squop-up turns (22.2). The default."
            }
            Ruleset::EtwaSimplified => {
                "ETwA's simplified 2012 rules: no squop-up turns, most tiddlies wins, first pot-out wins; off winks go back at the edge."
            }
            Ruleset::Natwa1990 => {
                "NATwA rules, May 1990: 15 mm small winks, one free turn per wink neither squopping nor squopped, time-limit points."
            }
            Ruleset::EtwaOriginal => {
                "The early ETwA rules: winks start 3 ft from the pot, off winks back at the edge with a lost turn, pot-out order only."
            }
            Ruleset::Fr1960 => {
                "Les règles officielles du Tiddly (1959-60): 2 m x 1 m mat, 36 x 50 mm pot, start 1 m from the pot, pot-out order only."
            }
        }
    }

    /// The equipment and rule references.
    pub fn spec(self) -> &'static RulesetSpec {
        match self {
            Ruleset::Etwa2012 => &ETWA_2012,
            Ruleset::EtwaSimplified => &ETWA_SIMPLIFIED,
            Ruleset::Natwa1990 => &NATWA_1990,
            Ruleset::EtwaOriginal => &ETWA_ORIGINAL,
            Ruleset::Fr1960 => &FR_1960,
        }
    }
}

impl fmt::Display for Ruleset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Ruleset {
    type Err = UnknownRuleset;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ruleset::from_name(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for r in Ruleset::ALL {
            assert_eq!(Ruleset::from_name(r.name()).ok(), Some(r));
            assert_eq!(r.spec().ruleset, r);
        }
        assert!(Ruleset::from_name("etwa-2013").is_err());
    }

    #[test]
    fn equipment_differs_where_texts_do() {
        assert_eq!(Ruleset::Natwa1990.spec().winks.small_mm, 15.0);
        assert_eq!(Ruleset::Fr1960.spec().mat.length_mm, 2000.0);
        assert_eq!(Ruleset::Fr1960.spec().pot.top_diameter_mm, 50.0);
        assert_eq!(Ruleset::Etwa2012.spec().winks.small_mm, 16.0);
    }
}
