//! The documents winkeye reads and writes (`winkeye.position/1`, …) and how they reach disk.

pub mod diagram;
pub mod draw;
pub mod output;
pub mod overlay;
pub mod position;

/// A document's value to a thousandth (µm for mm, ms for s): what it writes, not noise.
pub fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

pub use output::{write_bytes, write_document, write_png, OutputError};
pub use position::{
    Colour, Counts, Flag, FlagDetail, Game, Move, Partnership, Position, PositionError, Score, ScoreMethod, Squop,
    StateCounts, Wink, WinkSize, WinkState,
};
