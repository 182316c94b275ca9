//! The documents winkeye reads and writes (`winkeye.position/1`, …) and how they reach disk.

pub mod diagram;
pub mod draw;
pub mod output;
pub mod overlay;
pub mod position;

pub use output::{write_bytes, write_document, write_png, OutputError};
pub use position::{
    Colour, Counts, Flag, FlagDetail, Game, Move, Partnership, Position, PositionError, Score, ScoreMethod, Squop,
    StateCounts, Wink, WinkSize, WinkState,
};
