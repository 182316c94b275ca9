//! winkeye: a computer-vision referee for tiddlywinks.
//!
//! It watches a 6 × 3 ft mat through an overhead camera (or recorded footage, or one still
//! photo), finds every wink, works out which winks squop which, and applies the rules. The
//! pipeline runs in the order of the modules below; this version holds the geometry, the
//! documents and the rules engine.
//!
//! # Conventions
//! - **Image frame**: pixels, x right, y down; the centre of the top-left pixel is (0, 0) (OpenCV).
//!   Points are [`geometry::PixelPoint`].
//! - **Mat frame**: millimetres, origin at the mat's centre (the pot's centre), x along the 6 ft
//!   side, y along the 3 ft side, right-handed seen from above, z up from the mat. Points are
//!   [`geometry::MatPoint`]. Which end is +x is the program's choice; a half turn is accepted.
//! - **Corner order** (`mat_corners_px`): (−X,+Y), (+X,+Y), (+X,−Y), (−X,−Y) in mat coordinates.
//! - A wink's position is the centre of its **footprint**, its vertical projection onto the mat.
//! - Rule numbers are those of the ruleset's own text; `etwa-2012` is the default.

#![deny(missing_docs)]

pub mod analyze;
pub mod calibrate;
pub mod capture;
pub mod detect;
pub mod eval;
pub mod geometry;
pub mod report;
pub mod stack;
pub mod rules;
pub mod synth;
pub mod track;
pub mod umpire;
