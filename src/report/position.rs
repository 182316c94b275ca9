//! The position document, `winkeye.position/1`: every wink, its state, the squops between them,
//! the rules' flags and the score. One set of serde types serves every command.
//!
//! Readers ignore fields they do not know but keep them, so a document passed through
//! `winkeye rules` comes back with everything it had.

use crate::geometry::{MatPoint, PixelPoint};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// The `format` string of a position document.
pub const POSITION_FORMAT: &str = "winkeye.position/1";

/// Largest gap between two footprints that may still be recorded as a squop, in mm: a squopping
/// wink must be vertically above part of the other, so anything more is a mistake in the document
/// (with 1 mm allowed for measurement and tilt).
pub const MAX_SQUOP_GAP_MM: f64 = 1.0;

/// A wink colour. The order is the turn sequence (rule 7): blue, green, red, yellow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Colour {
    /// Blue, partner of red.
    Blue,
    /// Green, partner of yellow.
    Green,
    /// Red, partner of blue.
    Red,
    /// Yellow, partner of green.
    Yellow,
}

impl Colour {
    /// The four colours in turn order.
    pub const ALL: [Colour; 4] = [Colour::Blue, Colour::Green, Colour::Red, Colour::Yellow];

    /// The colour's name as written in documents.
    pub fn name(self) -> &'static str {
        match self {
            Colour::Blue => "blue",
            Colour::Green => "green",
            Colour::Red => "red",
            Colour::Yellow => "yellow",
        }
    }

    /// The partnership the colour plays in (rule 1.1).
    pub fn partnership(self) -> Partnership {
        match self {
            Colour::Blue | Colour::Red => Partnership::BlueRed,
            Colour::Green | Colour::Yellow => Partnership::GreenYellow,
        }
    }

    /// The colour whose turn follows this one's (rule 7.1).
    pub fn next(self) -> Colour {
        match self {
            Colour::Blue => Colour::Green,
            Colour::Green => Colour::Red,
            Colour::Red => Colour::Yellow,
            Colour::Yellow => Colour::Blue,
        }
    }
}

impl fmt::Display for Colour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A partnership: blue and red against green and yellow (rule 1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Partnership {
    /// Blue and red.
    BlueRed,
    /// Green and yellow.
    GreenYellow,
}

impl Partnership {
    /// Both partnerships.
    pub const ALL: [Partnership; 2] = [Partnership::BlueRed, Partnership::GreenYellow];

    /// The partnership's two colours.
    pub fn colours(self) -> [Colour; 2] {
        match self {
            Partnership::BlueRed => [Colour::Blue, Colour::Red],
            Partnership::GreenYellow => [Colour::Green, Colour::Yellow],
        }
    }

    /// The other partnership.
    pub fn opponents(self) -> Partnership {
        match self {
            Partnership::BlueRed => Partnership::GreenYellow,
            Partnership::GreenYellow => Partnership::BlueRed,
        }
    }

    /// The name as written in documents.
    pub fn name(self) -> &'static str {
        match self {
            Partnership::BlueRed => "blue_red",
            Partnership::GreenYellow => "green_yellow",
        }
    }

    /// The name for people: "blue and red".
    pub fn label(self) -> &'static str {
        match self {
            Partnership::BlueRed => "blue and red",
            Partnership::GreenYellow => "green and yellow",
        }
    }
}

/// A wink's size class: each colour has 2 large and 4 small (rule 2.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WinkSize {
    /// A large wink (22 mm).
    Large,
    /// A small wink (16 mm; 15 mm under natwa-1990).
    Small,
}

impl WinkSize {
    /// How many winks of this size a colour has.
    pub fn per_colour(self) -> usize {
        match self {
            WinkSize::Large => 2,
            WinkSize::Small => 4,
        }
    }

    /// The name as written in documents.
    pub fn name(self) -> &'static str {
        match self {
            WinkSize::Large => "large",
            WinkSize::Small => "small",
        }
    }

    /// The other size.
    pub fn other(self) -> WinkSize {
        match self {
            WinkSize::Large => WinkSize::Small,
            WinkSize::Small => WinkSize::Large,
        }
    }
}

/// Where a wink is in the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WinkState {
    /// Wholly behind its own baseline, not yet played.
    Unplayed,
    /// Played and on the field of play.
    InPlay,
    /// Some part of it beyond the field of play's boundary (rule 13).
    Off,
    /// Inside the pot or on its rim (rule 8.1).
    Potted,
}

impl WinkState {
    /// The four states, in document order.
    pub const ALL: [WinkState; 4] = [WinkState::Unplayed, WinkState::InPlay, WinkState::Off, WinkState::Potted];

    /// The name as written in documents.
    pub fn name(self) -> &'static str {
        match self {
            WinkState::Unplayed => "unplayed",
            WinkState::InPlay => "in_play",
            WinkState::Off => "off",
            WinkState::Potted => "potted",
        }
    }
}

/// Where the document's image came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// The image or video file.
    #[serde(default)]
    pub path: Option<String>,
    /// Image width, in pixels.
    #[serde(default)]
    pub width: Option<u32>,
    /// Image height, in pixels.
    #[serde(default)]
    pub height: Option<u32>,
    /// Frame index within a video, when the image is one.
    #[serde(default)]
    pub frame: Option<u64>,
    /// Time of the frame within a video, in seconds.
    #[serde(default)]
    pub t_s: Option<f64>,
    /// Fields this version does not know, kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What the calibration found in the image.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CalibrationInfo {
    /// The mat's corners in the image, in the order (−X,+Y), (+X,+Y), (+X,−Y), (−X,−Y) of mat coordinates.
    #[serde(default)]
    pub mat_corners_px: Option<[PixelPoint; 4]>,
    /// The pot's centre in the image.
    #[serde(default)]
    pub pot_centre_px: Option<PixelPoint>,
    /// Residual of the image ↔ mat fit, in pixels.
    #[serde(default)]
    pub rms_px: Option<f64>,
    /// Each baseline as found painted: mm further from the mat's centre, along the diagonal,
    /// than the rules put it (rule 2.3.1), in the corner order of `mat_corners_px`; `null` where
    /// none was seen. The rules engine bounds the field of play by these lines (rule 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baselines_found_mm: Option<[Option<f64>; 4]>,
    /// Fields this version does not know, kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One wink.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wink {
    /// Identifier, unique within the document.
    pub id: String,
    /// Colour.
    pub colour: Colour,
    /// Size class.
    pub size: WinkSize,
    /// Measured (or nominal) diameter, in mm; the ruleset's nominal size when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diameter_mm: Option<f64>,
    /// Centre of the visible top face in the image, in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub centre_px: Option<PixelPoint>,
    /// Centre of the footprint on the mat's plane, in mm (parallax corrected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub centre_mm: Option<MatPoint>,
    /// 0 on the mat, 1 on one wink, and so on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<u32>,
    /// Where the wink is in the game.
    pub state: WinkState,
    /// The producer's estimate (0–1) that this wink is right.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Where the wink left the playing volume, in mm, when that is known (from tracking); used for
    /// its replacement spot (rule 13.1). Otherwise the nearest boundary point stands in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_mm: Option<MatPoint>,
    /// Fields this version does not know, kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One squop: some part of `upper` is vertically above some part of `lower` (rule 8.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Squop {
    /// The squopping wink's id.
    pub upper: String,
    /// The squopped wink's id.
    pub lower: String,
    /// Overlap depth of the two footprints, in mm (> 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin_mm: Option<f64>,
    /// The producer's estimate (0–1) that this squop is right.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Fields this version does not know, kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// How many winks of one colour are in each state; the four add up to 6.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateCounts {
    /// Behind the baseline, not yet played.
    #[serde(default)]
    pub unplayed: u32,
    /// On the field of play.
    #[serde(default)]
    pub in_play: u32,
    /// Beyond the field of play.
    #[serde(default)]
    pub off: u32,
    /// In the pot.
    #[serde(default)]
    pub potted: u32,
}

impl StateCounts {
    /// The count for one state.
    pub fn get(&self, state: WinkState) -> u32 {
        match state {
            WinkState::Unplayed => self.unplayed,
            WinkState::InPlay => self.in_play,
            WinkState::Off => self.off,
            WinkState::Potted => self.potted,
        }
    }

    /// Adds one to the count for `state`.
    pub fn add(&mut self, state: WinkState) {
        match state {
            WinkState::Unplayed => self.unplayed += 1,
            WinkState::InPlay => self.in_play += 1,
            WinkState::Off => self.off += 1,
            WinkState::Potted => self.potted += 1,
        }
    }

    /// All four added up.
    pub fn total(&self) -> u32 {
        self.unplayed + self.in_play + self.off + self.potted
    }
}

/// Counts per colour.
pub type Counts = BTreeMap<Colour, StateCounts>;

/// One entry of `game.potted_out`: a colour, or several that potted out in the same shot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PottedOut {
    /// One colour.
    One(Colour),
    /// Colours that potted out in the same shot.
    Together(Vec<Colour>),
}

impl PottedOut {
    /// The colours of this entry.
    pub fn colours(&self) -> Vec<Colour> {
        match self {
            PottedOut::One(c) => vec![*c],
            PottedOut::Together(cs) => cs.clone(),
        }
    }
}

/// What a still frame cannot show about the game.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Game {
    /// The colour whose turn comes next.
    #[serde(default)]
    pub next_colour: Option<Colour>,
    /// Colours in the order they potted out.
    #[serde(default)]
    pub potted_out: Vec<PottedOut>,
    /// The colour that won the squidge-off.
    #[serde(default)]
    pub squidge_off_winner: Option<Colour>,
    /// The colour whose shot led to this position, when known; decides forfeits (rule 14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_shot_colour: Option<Colour>,
    /// Fields this version does not know, kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A wink moved by a rule, and where to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Move {
    /// The wink's id.
    pub wink: String,
    /// Its new footprint centre, in mm.
    pub to_mm: MatPoint,
}

/// A rule's finding about the position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flag {
    /// The rule number in the ruleset's own text (or `etwa-2012 N` where that text is silent).
    pub rule: String,
    /// What was found, with its kind-specific fields.
    #[serde(flatten)]
    pub detail: FlagDetail,
    /// The winks concerned.
    #[serde(default)]
    pub winks: Vec<String>,
    /// One sentence for a person.
    pub text: String,
}

/// The kind of a flag and the fields that go with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FlagDetail {
    /// One wink squops another (8.2).
    Squop {
        /// Overlap depth, in mm, when measured.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        margin_mm: Option<f64>,
        /// The squop's confidence as the position gives it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        confidence: Option<f64>,
        /// Given less confidence than [`crate::rules::SURE_SQUOP`]: a call to check (rule D.1's
        /// second look; `winkeye umpire`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        unsure: bool,
    },
    /// Winks connected by squops (8.2.2).
    Pile {},
    /// A wink is off (13, 14).
    Off {
        /// Where to replace it (13.1), or null when no spot satisfies the rule or its position is unknown.
        replacement_mm: Option<MatPoint>,
        /// The colour that forfeits its next shot (14), when known.
        forfeit: Option<Colour>,
    },
    /// Winks under the pot's base, moved to touch it (25.3).
    UnderPot {
        /// The moves.
        moves: Vec<Move>,
    },
    /// A colour has potted out (15); squops are undone by these moves (20.1).
    PotOut {
        /// The colour.
        colour: Colour,
        /// Desquop moves (20.1).
        moves: Vec<Move>,
    },
    /// A partnership has no free winks (22.1).
    SquoppedUp {
        /// The partnership squopped up.
        partnership: Partnership,
        /// Squop-up turns the opponents get (22.2).
        turns: u32,
    },
    /// The squidge-off's order (5.4).
    SquidgeOff {
        /// Colours, nearest the pot first.
        order: Vec<Colour>,
        /// Whether the nearest are tied (5.4.2).
        tie: bool,
    },
    /// The position ends the game.
    GameOver {
        /// Why.
        reason: String,
    },
    /// Something counted by reasoning rather than seen.
    Inferred {
        /// What was inferred.
        what: String,
    },
    /// The document contradicts itself or the rules (e.g. an "unplayed" wink in front of its baseline).
    Inconsistent {},
    /// A wink measured from a frame lies so near the field of play's boundary that whether it is
    /// off (13) is a close call ([`crate::rules::CLOSE_LINE_MM`]).
    NearLine {
        /// How far its footprint's edge lies inside the boundary, mm (negative: beyond it).
        inside_mm: f64,
    },
}

impl FlagDetail {
    /// The `kind` string.
    pub fn kind(&self) -> &'static str {
        match self {
            FlagDetail::Squop { .. } => "squop",
            FlagDetail::Pile {} => "pile",
            FlagDetail::Off { .. } => "off",
            FlagDetail::UnderPot { .. } => "under_pot",
            FlagDetail::PotOut { .. } => "pot_out",
            FlagDetail::SquoppedUp { .. } => "squopped_up",
            FlagDetail::SquidgeOff { .. } => "squidge_off",
            FlagDetail::GameOver { .. } => "game_over",
            FlagDetail::Inferred { .. } => "inferred",
            FlagDetail::Inconsistent {} => "inconsistent",
            FlagDetail::NearLine { .. } => "near_line",
        }
    }
}

/// How the score was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreMethod {
    /// By counting tiddlies (19).
    Tiddlies,
    /// By the order of potting out (20.2).
    PotOut,
}

/// The score if the game ended now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// How it was reached.
    pub method: ScoreMethod,
    /// Whether the position itself ends the game.
    #[serde(rename = "final")]
    pub is_final: bool,
    /// Tiddlies per colour, when counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiddlies: Option<BTreeMap<Colour, u32>>,
    /// Points per colour, where the ruleset awards them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<BTreeMap<Colour, f64>>,
    /// Game score per partnership, after any pot-out transfer.
    pub game_score: BTreeMap<Partnership, f64>,
}

/// A whole position document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Position {
    /// Always [`POSITION_FORMAT`].
    pub format: String,
    /// Where the image came from.
    #[serde(default)]
    pub source: Option<Source>,
    /// The ruleset the flags and score follow.
    #[serde(default)]
    pub ruleset: Option<String>,
    /// What the calibration found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<CalibrationInfo>,
    /// Every wink.
    pub winks: Vec<Wink>,
    /// Every squop.
    #[serde(default)]
    pub squops: Vec<Squop>,
    /// Winks connected by squops, each pile a list of ids.
    #[serde(default)]
    pub piles: Vec<Vec<String>>,
    /// Winks per colour and state.
    #[serde(default)]
    pub counts: Option<Counts>,
    /// What a still frame cannot show (left out when nothing is known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<Game>,
    /// The rules' findings. On reading, flags of kinds this version does not know are dropped.
    #[serde(default, deserialize_with = "known_flags")]
    pub flags: Vec<Flag>,
    /// The score if the game ended now.
    #[serde(default)]
    pub score: Option<Score>,
    /// Fields this version does not know, kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn known_flags<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Flag>, D::Error> {
    let raw: Vec<Value> = Vec::deserialize(d)?;
    Ok(raw.into_iter().filter_map(|v| serde_json::from_value(v).ok()).collect())
}

/// Why a position document was refused.
#[derive(Debug, thiserror::Error)]
pub enum PositionError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file has nothing in it.
    #[error("{path} is empty: expected a winkeye.position/1 JSON document")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The JSON is malformed or does not fit the document's schema.
    #[error("{path}: {at}{message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// Where in the document (`winks[2].colour: `), or empty at the top level.
        at: String,
        /// What serde_json said, with line and column.
        message: String,
    },
    /// The `format` field names another document.
    #[error("\"format\" is \"{found}\", expected \"{POSITION_FORMAT}\"")]
    WrongFormat {
        /// What the document said.
        found: String,
    },
    /// Two winks share an id.
    #[error("wink id \"{id}\" is used twice")]
    DuplicateId {
        /// The id.
        id: String,
    },
    /// More winks of a colour than a set has.
    #[error("{count} {colour} winks listed; a colour has 6")]
    TooManyOfColour {
        /// The colour.
        colour: Colour,
        /// How many were listed.
        count: usize,
    },
    /// More winks of a colour and size than a set has.
    #[error("{count} {size} {colour} winks listed; a colour has {max}", size = size.name())]
    TooManyOfSize {
        /// The colour.
        colour: Colour,
        /// The size.
        size: WinkSize,
        /// How many were listed.
        count: usize,
        /// How many a set has.
        max: usize,
    },
    /// A number that must be finite is not.
    #[error("{field} is not a finite number")]
    NonFinite {
        /// Where, e.g. `winks[3].centre_mm`.
        field: String,
    },
    /// A number is outside its range.
    #[error("{field} is {value}, outside {range}")]
    OutOfRange {
        /// Where, e.g. `winks[3].confidence`.
        field: String,
        /// The value.
        value: f64,
        /// The allowed range, in words.
        range: &'static str,
    },
    /// A squop names a wink that is not listed.
    #[error("squops[{index}] names wink \"{id}\", which is not in \"winks\"")]
    UnknownWink {
        /// Index into `squops`.
        index: usize,
        /// The missing id.
        id: String,
    },
    /// A squop with the same wink above and below.
    #[error("squops[{index}]: wink \"{id}\" cannot squop itself")]
    SelfSquop {
        /// Index into `squops`.
        index: usize,
        /// The wink.
        id: String,
    },
    /// The same squop listed twice.
    #[error("squops[{index}]: \"{upper}\" over \"{lower}\" is listed twice")]
    DuplicateSquop {
        /// Index of the second listing.
        index: usize,
        /// The upper wink.
        upper: String,
        /// The lower wink.
        lower: String,
    },
    /// A squop involving a potted wink (squops are between unpotted winks, rule 8.2).
    #[error("squops[{index}]: wink \"{id}\" is potted, and only unpotted winks squop (rule 8.2)")]
    PottedInSquop {
        /// Index into `squops`.
        index: usize,
        /// The potted wink.
        id: String,
    },
    /// Squops that go round in a circle.
    #[error("squops form a cycle: {}", .ids.join(" over "))]
    SquopCycle {
        /// The winks of the cycle, each above the next, the first repeated at the end.
        ids: Vec<String>,
    },
    /// A squop between winks too far apart for either to be above the other.
    #[error("squops[{index}]: \"{upper}\" over \"{lower}\", but their footprints are {gap_mm:.1} mm apart (at most {MAX_SQUOP_GAP_MM} mm allowed)")]
    SquopTooFarApart {
        /// Index into `squops`.
        index: usize,
        /// The upper wink.
        upper: String,
        /// The lower wink.
        lower: String,
        /// The gap between the footprints, in mm.
        gap_mm: f64,
    },
}

/// Nominal wink diameters, in mm, used where a wink has no measured `diameter_mm` (also a set's
/// diameters as measured: [`crate::calibrate::Calibration::wink_diameters`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NominalDiameters {
    /// A large wink's diameter, in mm.
    pub large_mm: f64,
    /// A small wink's diameter, in mm.
    pub small_mm: f64,
}

impl NominalDiameters {
    /// ETwA 2012 (rule 2.1.1): 22 mm and 16 mm.
    pub const STANDARD: NominalDiameters = NominalDiameters { large_mm: 22.0, small_mm: 16.0 };

    /// The nominal diameter of a size class, in mm.
    pub fn of(&self, size: WinkSize) -> f64 {
        match size {
            WinkSize::Large => self.large_mm,
            WinkSize::Small => self.small_mm,
        }
    }
}

impl Wink {
    /// The footprint's radius, in mm: the measured diameter's half, or the nominal one's.
    pub fn radius_mm(&self, nominal: &NominalDiameters) -> f64 {
        self.diameter_mm.unwrap_or_else(|| nominal.of(self.size)) / 2.0
    }
}

impl Position {
    /// A document holding these winks and squops and nothing else yet (no source, calibration,
    /// counts, flags or score): what a detector or a test starts from.
    pub fn of_winks(winks: Vec<Wink>, squops: Vec<Squop>) -> Position {
        Position {
            format: POSITION_FORMAT.into(),
            source: None,
            ruleset: None,
            calibration: None,
            winks,
            squops,
            piles: Vec::new(),
            counts: None,
            game: None,
            flags: Vec::new(),
            score: None,
            extra: Map::new(),
        }
    }

    /// Reads and parses a position document, naming the file and the place of any problem.
    /// Does not validate; see [`Position::validate`].
    pub fn load(path: &Path) -> Result<Position, PositionError> {
        let bytes = std::fs::read(path).map_err(|source| PositionError::Read { path: path.to_owned(), source })?;
        Position::from_slice(&bytes, path)
    }

    /// Parses a position document from bytes; `path` is only used in error messages.
    pub fn from_slice(bytes: &[u8], path: &Path) -> Result<Position, PositionError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(PositionError::Empty { path: path.to_owned() });
        }
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let pos: Position = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let at = e.path().to_string();
            PositionError::Json {
                path: path.to_owned(),
                at: if at == "." { String::new() } else { format!("{at}: ") },
                message: e.into_inner().to_string(),
            }
        })?;
        de.end().map_err(|e| PositionError::Json { path: path.to_owned(), at: String::new(), message: e.to_string() })?;
        Ok(pos)
    }

    /// Checks everything the rules rely on, naming the first problem found.
    pub fn validate(&self, nominal: &NominalDiameters) -> Result<(), PositionError> {
        if self.format != POSITION_FORMAT {
            return Err(PositionError::WrongFormat { found: self.format.clone() });
        }
        self.validate_numbers()?;
        let by_id = self.validate_winks()?;
        self.validate_squops(&by_id, nominal)
    }

    fn validate_numbers(&self) -> Result<(), PositionError> {
        /// The furthest a document may say a baseline is painted from where the rules put it.
        const MAX_BASELINE_OFFSET_MM: f64 = 50.0;
        let finite = |field: String, values: &[f64]| {
            if values.iter().all(|v| v.is_finite()) {
                Ok(())
            } else {
                Err(PositionError::NonFinite { field })
            }
        };
        let unit = |field: String, v: Option<f64>| match v {
            Some(v) if !(0.0..=1.0).contains(&v) => Err(PositionError::OutOfRange { field, value: v, range: "0–1" }),
            _ => Ok(()),
        };
        for (i, w) in self.winks.iter().enumerate() {
            if let Some(p) = w.centre_mm {
                finite(format!("winks[{i}].centre_mm"), &[p.x, p.y])?;
            }
            if let Some(p) = w.centre_px {
                finite(format!("winks[{i}].centre_px"), &[p.x, p.y])?;
            }
            if let Some(p) = w.left_mm {
                finite(format!("winks[{i}].left_mm"), &[p.x, p.y])?;
            }
            if let Some(d) = w.diameter_mm {
                finite(format!("winks[{i}].diameter_mm"), &[d])?;
                if d <= 0.0 || d > 60.0 {
                    return Err(PositionError::OutOfRange {
                        field: format!("winks[{i}].diameter_mm"),
                        value: d,
                        range: "0–60 mm",
                    });
                }
            }
            if let Some(c) = w.confidence {
                finite(format!("winks[{i}].confidence"), &[c])?;
            }
            unit(format!("winks[{i}].confidence"), w.confidence)?;
        }
        for (i, s) in self.squops.iter().enumerate() {
            if let Some(m) = s.margin_mm {
                finite(format!("squops[{i}].margin_mm"), &[m])?;
                // The overlap depth of the two footprints: a squop has one.
                if m <= 0.0 {
                    return Err(PositionError::OutOfRange { field: format!("squops[{i}].margin_mm"), value: m, range: "more than 0 mm (the footprints' overlap)" });
                }
            }
            if let Some(c) = s.confidence {
                finite(format!("squops[{i}].confidence"), &[c])?;
            }
            unit(format!("squops[{i}].confidence"), s.confidence)?;
        }
        if let Some(cal) = &self.calibration {
            for (k, p) in cal.mat_corners_px.iter().flatten().enumerate() {
                finite(format!("calibration.mat_corners_px[{k}]"), &[p.x, p.y])?;
            }
            if let Some(p) = cal.pot_centre_px {
                finite("calibration.pot_centre_px".into(), &[p.x, p.y])?;
            }
            if let Some(r) = cal.rms_px {
                finite("calibration.rms_px".into(), &[r])?;
            }
            for (k, &d) in cal.baselines_found_mm.iter().flatten().enumerate().filter_map(|(k, d)| d.as_ref().map(|d| (k, d))) {
                let field = format!("calibration.baselines_found_mm[{k}]");
                finite(field.clone(), &[d])?;
                if d.abs() > MAX_BASELINE_OFFSET_MM {
                    return Err(PositionError::OutOfRange { field, value: d, range: "−50–50 mm (a baseline painted that far off is another line)" });
                }
            }
        }
        Ok(())
    }

    fn validate_winks(&self) -> Result<HashMap<&str, &Wink>, PositionError> {
        let mut by_id = HashMap::new();
        let mut per_colour: BTreeMap<Colour, usize> = BTreeMap::new();
        let mut per_size: BTreeMap<(Colour, WinkSize), usize> = BTreeMap::new();
        for w in &self.winks {
            if by_id.insert(w.id.as_str(), w).is_some() {
                return Err(PositionError::DuplicateId { id: w.id.clone() });
            }
            *per_colour.entry(w.colour).or_default() += 1;
            *per_size.entry((w.colour, w.size)).or_default() += 1;
        }
        if let Some((&colour, &count)) = per_colour.iter().find(|(_, &n)| n > 6) {
            return Err(PositionError::TooManyOfColour { colour, count });
        }
        if let Some((&(colour, size), &count)) = per_size.iter().find(|((_, s), &n)| n > s.per_colour()) {
            return Err(PositionError::TooManyOfSize { colour, size, count, max: size.per_colour() });
        }
        Ok(by_id)
    }

    fn validate_squops(&self, by_id: &HashMap<&str, &Wink>, nominal: &NominalDiameters) -> Result<(), PositionError> {
        let mut seen = HashSet::new();
        for (index, s) in self.squops.iter().enumerate() {
            let find = |id: &str| {
                by_id.get(id).copied().ok_or_else(|| PositionError::UnknownWink { index, id: id.to_owned() })
            };
            let (upper, lower) = (find(&s.upper)?, find(&s.lower)?);
            if s.upper == s.lower {
                return Err(PositionError::SelfSquop { index, id: s.upper.clone() });
            }
            if !seen.insert((s.upper.as_str(), s.lower.as_str())) {
                return Err(PositionError::DuplicateSquop { index, upper: s.upper.clone(), lower: s.lower.clone() });
            }
            for w in [upper, lower] {
                if w.state == WinkState::Potted {
                    return Err(PositionError::PottedInSquop { index, id: w.id.clone() });
                }
            }
            if let (Some(a), Some(b)) = (upper.centre_mm, lower.centre_mm) {
                let gap_mm = a.distance(b) - upper.radius_mm(nominal) - lower.radius_mm(nominal);
                if gap_mm > MAX_SQUOP_GAP_MM {
                    return Err(PositionError::SquopTooFarApart {
                        index,
                        upper: s.upper.clone(),
                        lower: s.lower.clone(),
                        gap_mm,
                    });
                }
            }
        }
        if let Some(ids) = find_cycle(&self.squops) {
            return Err(PositionError::SquopCycle { ids });
        }
        Ok(())
    }
}

/// A cycle in the "is above" graph, as ids each above the next with the first repeated, if any.
pub(crate) fn find_cycle(squops: &[Squop]) -> Option<Vec<String>> {
    let mut below: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for s in squops {
        below.entry(s.upper.as_str()).or_default().push(s.lower.as_str());
    }
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    let mut marks: HashMap<&str, Mark> = HashMap::new();
    // Iterative depth-first search keeping the current path, so deep piles cannot overflow the stack.
    for &start in below.keys() {
        if marks.contains_key(start) {
            continue;
        }
        let mut path: Vec<(&str, usize)> = vec![(start, 0)];
        marks.insert(start, Mark::Open);
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            let children = below.get(node).map(Vec::as_slice).unwrap_or(&[]);
            if let Some(&child) = children.get(*next) {
                *next += 1;
                match marks.get(child) {
                    Some(Mark::Open) => {
                        let from = path.iter().position(|(n, _)| *n == child).unwrap_or(0);
                        let mut ids: Vec<String> = path[from..].iter().map(|(n, _)| n.to_string()).collect();
                        ids.push(child.to_string());
                        return Some(ids);
                    }
                    Some(Mark::Done) => {}
                    None => {
                        marks.insert(child, Mark::Open);
                        path.push((child, 0));
                    }
                }
            } else {
                marks.insert(node, Mark::Done);
                path.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(winks: &str, squops: &str) -> String {
        format!(r#"{{"format": "winkeye.position/1", "winks": [{winks}], "squops": [{squops}]}}"#)
    }

    fn wink(id: &str, colour: &str, size: &str, x: f64, y: f64) -> String {
        format!(r#"{{"id": "{id}", "colour": "{colour}", "size": "{size}", "centre_mm": [{x}, {y}], "state": "in_play"}}"#)
    }

    fn check(text: &str) -> Result<Position, PositionError> {
        let p = Position::from_slice(text.as_bytes(), Path::new("t.json"))?;
        p.validate(&NominalDiameters::STANDARD)?;
        Ok(p)
    }

    fn err(text: &str) -> String {
        check(text).err().map(|e| e.to_string()).unwrap_or_else(|| "accepted".into())
    }

    #[test]
    fn contract_example_parses_and_round_trips() -> Result<(), Box<dyn std::error::Error>> {
        let text = r#"{
          "format": "winkeye.position/1",
          "source": {"path": "frame.jpg", "width": 1920, "height": 1080, "frame": null, "t_s": null},
          "ruleset": "etwa-2012",
          "calibration": {"mat_corners_px": [[1,2],[3,4],[5,6],[7,8]], "pot_centre_px": [4,5], "rms_px": 0.4},
          "winks": [
            {"id": "w1", "colour": "blue", "size": "large", "diameter_mm": 22.0,
             "centre_px": [812.4, 530.1], "centre_mm": [-102.3, 41.7], "level": 0,
             "state": "in_play", "confidence": 0.99},
            {"id": "w4", "colour": "red", "size": "small", "centre_mm": [-84.0, 41.7], "level": 1, "state": "in_play"}
          ],
          "squops": [{"upper": "w4", "lower": "w1", "margin_mm": 1.4, "confidence": 0.97}],
          "piles": [["w4", "w1"]],
          "counts": {"blue": {"unplayed": 0, "in_play": 3, "off": 0, "potted": 3}, "green": {}, "red": {}, "yellow": {}},
          "game": {"next_colour": "green", "potted_out": ["blue", ["red", "green"]], "squidge_off_winner": null},
          "flags": [{"rule": "22.2", "kind": "squopped_up", "partnership": "green_yellow", "turns": 3, "winks": [],
                     "text": "green and yellow are squopped up: 3 squop-up turns"},
                    {"rule": "99", "kind": "from_the_future", "winks": [], "text": "dropped"}],
          "score": {"method": "tiddlies", "final": false,
                    "tiddlies": {"blue": 10, "green": 5, "red": 5, "yellow": 3},
                    "points": {"blue": 4, "green": 1.5, "red": 1.5, "yellow": 0},
                    "game_score": {"blue_red": 5.5, "green_yellow": 1.5}},
          "producer": {"kept": true}
        }"#;
        let p = check(text)?;
        assert_eq!(p.flags.len(), 1, "unknown flag kinds are dropped");
        assert_eq!(p.game.as_ref().map(|g| g.potted_out.len()), Some(2));
        assert!(p.extra.contains_key("producer"), "unknown fields are kept");
        let again: Position = serde_json::from_str(&serde_json::to_string(&p)?)?;
        assert_eq!(again, p);
        Ok(())
    }

    #[test]
    fn unknown_colour_names_the_place() {
        let e = err(&doc(&wink("a", "purple", "large", 0.0, 100.0), ""));
        assert!(e.contains("winks[0].colour") && e.contains("purple"), "{e}");
    }

    #[test]
    fn unknown_size_names_the_place() {
        let e = err(&doc(&wink("a", "red", "medium", 0.0, 100.0), ""));
        assert!(e.contains("winks[0].size") && e.contains("medium"), "{e}");
    }

    #[test]
    fn too_many_of_a_colour() {
        let ws: Vec<String> = (0..7).map(|i| wink(&format!("w{i}"), "red", "small", 50.0 * i as f64, 100.0)).collect();
        assert!(err(&doc(&ws.join(","), "")).contains("7 red winks"));
    }

    #[test]
    fn too_many_large() {
        let ws: Vec<String> = (0..3).map(|i| wink(&format!("w{i}"), "green", "large", 50.0 * i as f64, 100.0)).collect();
        assert!(err(&doc(&ws.join(","), "")).contains("3 large green winks"));
    }

    #[test]
    fn duplicate_ids() {
        let ws = [wink("a", "red", "small", 0.0, 100.0), wink("a", "blue", "small", 50.0, 100.0)];
        assert!(err(&doc(&ws.join(","), "")).contains("\"a\" is used twice"));
    }

    #[test]
    fn squop_problems() {
        let ws = [wink("a", "red", "small", 0.0, 100.0), wink("b", "blue", "small", 14.0, 100.0)].join(",");
        assert_eq!(err(&doc(&ws, r#"{"upper": "a", "lower": "b"}"#)), "accepted");
        assert!(err(&doc(&ws, r#"{"upper": "a", "lower": "z"}"#)).contains("\"z\", which is not in"));
        assert!(err(&doc(&ws, r#"{"upper": "a", "lower": "a"}"#)).contains("cannot squop itself"));
        let cycle = err(&doc(&ws, r#"{"upper": "a", "lower": "b"}, {"upper": "b", "lower": "a"}"#));
        assert!(cycle.contains("cycle: a over b over a"), "{cycle}");
        let far = [wink("a", "red", "small", 0.0, 100.0), wink("b", "blue", "small", 18.0, 100.0)].join(",");
        let e = err(&doc(&far, r#"{"upper": "a", "lower": "b"}"#));
        assert!(e.contains("2.0 mm apart"), "{e}");
    }

    #[test]
    fn longer_cycle_is_found() {
        let ws = [
            wink("a", "red", "small", 0.0, 100.0),
            wink("b", "blue", "small", 10.0, 100.0),
            wink("c", "green", "small", 5.0, 108.0),
        ]
        .join(",");
        let e = err(&doc(&ws, r#"{"upper":"a","lower":"b"},{"upper":"b","lower":"c"},{"upper":"c","lower":"a"}"#));
        assert!(e.contains("cycle"), "{e}");
    }

    #[test]
    fn non_finite_and_bad_json() {
        let e = err(&doc(&wink("a", "red", "small", 0.0, 100.0).replace("100]", "1e999]"), ""));
        assert!(e.contains("winks[0].centre_mm"), "{e}");
        assert!(err("").contains("is empty"));
        assert!(err("{").contains("t.json"));
        assert!(err(r#"{"format": "winkeye.umpire/1", "winks": []}"#).contains("expected \"winkeye.position/1\""));
        assert!(err(r#"{"format": "winkeye.position/1"}"#).contains("winks"));
    }
}
