//! The rules of tiddlywinks as pure functions of a position: no images, no I/O.
//!
//! [`apply`] takes a position document (winks, states, squops) and a [`Ruleset`] and returns it
//! with the rules' flags and the score filled in. Every decision cites its rule number in the
//! ruleset's own text; where that text is silent the ruleset follows `etwa-2012` and cites it as
//! `"etwa-2012 N"`. The parts are usable alone: [`off::replacement_spot`] (13.1),
//! [`pot::desquop`] (20.1), [`pot::out_from_under_pot`] (25.3), [`squidge_off`] (5.4),
//! [`score`] (19, 20.2) and [`squop_up`] (22).
//!
//! What a still position cannot show comes from the document's `game` object: whose turn is next
//! (22.2.3), the order of pot-outs (20.2) and the colour whose shot produced the position (14).

pub mod board;
mod engine;
pub mod off;
pub mod pot;
mod ruleset;
pub mod score;
pub mod squidge_off;
pub mod squop_up;

pub use engine::{apply, CLOSE_LINE_MM, SURE_SQUOP};
pub use ruleset::{OffRule, RuleRefs, Ruleset, RulesetSpec, ScoringRule, SquopUpRule, UnknownRuleset};
