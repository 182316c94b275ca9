//! The `winkeye` command line: parses arguments, calls the library, prints. Errors end as one
//! line on stderr and exit status 1; usage errors exit 2 (clap's convention).

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use winkeye::report::position::{Position, ScoreMethod};
use winkeye::report::{write_document, write_png};
use winkeye::rules::{self, score::format_points, Ruleset};

#[derive(Parser)]
#[command(name = "winkeye", version, about = "A computer-vision referee for tiddlywinks", propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The second opinion on close calls: every pair that overlaps or nearly touches, its margin in mm ± sigma, and a verdict.
    Umpire(UmpireArgs),
    /// One still frame → a position document: every wink, its state, the squops, the rules' flags and score.
    Analyze(AnalyzeArgs),
    /// Apply the rules to a position document (winks, states, squops) and fill in its flags and score.
    Rules {
        /// A winkeye.position/1 JSON document, from any source (e.g. typed in by hand).
        position: PathBuf,
        /// Ruleset to apply (see `winkeye rulesets`); default: the document's own, else etwa-2012.
        #[arg(long, value_name = "NAME", value_parser = parse_ruleset)]
        ruleset: Option<Ruleset>,
        /// Write the completed document here ("-" for stdout). The file is replaced only once the new one is complete.
        #[arg(long, value_name = "OUT")]
        json: Option<PathBuf>,
        /// Draw a top-down plan of the position, with what the rules ask for, as a PNG.
        #[arg(long, value_name = "OUT.png")]
        diagram: Option<PathBuf>,
    },
    /// List the rulesets, one line each.
    Rulesets,
    /// Calibrate to the mat (and, with chessboard shots, the lens) and write a calibration file.
    Calibrate(CalibrateArgs),
    /// Score winkeye against rendered truth in a folder of `winkeye synth` output and print the figures.
    Eval(EvalArgs),
    /// Render synthetic scenes with exact truth: an image and a winkeye.position/1 document each.
    Synth(SynthArgs),
    /// Recorded footage → a winkeye.event/1 stream: settled positions, motion, shots, flags.
    Replay(ReplayArgs),
    /// The same, live from a camera.
    Watch(WatchArgs),
}

#[derive(clap::Args)]
struct ReplayArgs {
    /// A video file (avi/MJPG, mp4, mkv, a `winkeye synth --clip` clip), a folder of numbered images, or a glob such as "frames/img-*.jpg".
    video: PathBuf,
    /// A calibration file (from `winkeye calibrate`); default: calibrate on the first still frame.
    #[arg(long, value_name = "FILE")]
    calibration: Option<PathBuf>,
    #[command(flatten)]
    height: CameraHeightArg,
    #[command(flatten)]
    winks: WinkDiametersArg,
    /// Write the events here as JSON Lines ("-" for stdout, the default). Each event is written to OUT as it happens (an existing OUT is emptied at the first event).
    #[arg(long, value_name = "OUT.jsonl", default_value = "-")]
    events: PathBuf,
    /// Write the footage with the current settled position drawn over it (.mp4 or .avi).
    #[arg(long, value_name = "OUT.mp4")]
    annotated: Option<PathBuf>,
    /// Ruleset (see `winkeye rulesets`).
    #[arg(long, value_name = "NAME", value_parser = parse_ruleset, default_value = "etwa-2012")]
    ruleset: Ruleset,
    /// Look at every Nth frame only (motion and settling); every frame still goes into --annotated.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    stride: u64,
    /// Seconds the mat must be still before a position counts as settled.
    #[arg(long, value_name = "S", default_value_t = 0.5, value_parser = parse_settle)]
    settle: f64,
}

#[derive(clap::Args)]
struct WatchArgs {
    /// The camera's index (see --list-cameras). For testing without a camera, `file:PATH` plays a video file (or image folder) as a live camera, in real time.
    #[arg(long, value_name = "INDEX", default_value = "0", value_parser = parse_camera)]
    camera: CameraChoice,
    /// With --camera file:PATH: the camera is unplugged from START to END seconds after the start (for testing the lost / retry / back path).
    #[arg(long, value_name = "START-END", value_parser = parse_window, hide = true)]
    simulate_unplug: Option<(f64, f64)>,
    /// List the cameras and exit.
    #[arg(long)]
    list_cameras: bool,
    /// A calibration file (from `winkeye calibrate`); default: calibrate on the first still frame.
    #[arg(long, value_name = "FILE")]
    calibration: Option<PathBuf>,
    #[command(flatten)]
    height: CameraHeightArg,
    #[command(flatten)]
    winks: WinkDiametersArg,
    /// Write the events here as JSON Lines ("-" for stdout, the default). Each event is written to OUT as it happens (an existing OUT is emptied at the first event); watching ends on Ctrl-C or SIGTERM.
    #[arg(long, value_name = "OUT.jsonl", default_value = "-")]
    events: PathBuf,
    /// Ask the camera for this size, WIDTHxHEIGHT (the closest it offers).
    #[arg(long, default_value = "1920x1080", value_parser = parse_resolution)]
    resolution: (u32, u32),
    /// Ask the camera for this many frames per second (the closest it offers).
    #[arg(long, value_name = "N", default_value_t = 30)]
    fps: u32,
    /// Show the live picture with the current settled position drawn over it, where a display exists.
    #[arg(long)]
    window: bool,
    /// Ruleset (see `winkeye rulesets`).
    #[arg(long, value_name = "NAME", value_parser = parse_ruleset, default_value = "etwa-2012")]
    ruleset: Ruleset,
    /// Seconds the mat must be still before a position counts as settled.
    #[arg(long, value_name = "S", default_value_t = 0.5, value_parser = parse_settle)]
    settle: f64,
}

#[derive(clap::Args)]
struct UmpireArgs {
    /// The frame, or with --closeup a hand-held photo of a few winks.
    image: PathBuf,
    /// A calibration file (overhead frames).
    #[arg(long, value_name = "FILE")]
    calibration: Option<PathBuf>,
    /// A close-up: a hand-held photo of a few winks, no mat corner in view; the winks' known diameters set the scale.
    #[arg(long)]
    closeup: bool,
    /// Only the pairs near this pixel: within 3 mm of a wink under it, or of where two winks meet (nearest first; --evidence draws the nearest).
    #[arg(long, value_name = "X,Y", value_parser = parse_point)]
    near: Option<winkeye::geometry::PixelPoint>,
    /// Ruleset (for the winks' diameters and the mat).
    #[arg(long, value_name = "NAME", value_parser = parse_ruleset, default_value = "etwa-2012")]
    ruleset: Ruleset,
    /// The mat's corners in pixels (overhead frames where it is not found by itself).
    #[arg(long, value_name = "x,y;x,y;x,y;x,y", value_parser = parse_corners)]
    corners: Option<[winkeye::geometry::PixelPoint; 4]>,
    #[command(flatten)]
    height: CameraHeightArg,
    #[command(flatten)]
    winks: WinkDiametersArg,
    /// Write the umpire document here ("-" for stdout).
    #[arg(long, value_name = "OUT")]
    json: Option<PathBuf>,
    /// A zoomed picture of the closest call (or the --near pair) with both outlines, the overlap or gap, the margin and the verdict.
    #[arg(long, value_name = "OUT.png")]
    evidence: Option<PathBuf>,
    /// Close-ups whose winks all look one size: which size they are (a photo does not show it;
    /// else they are taken as small, rule 2.1.1's commoner size, and the document says so).
    #[arg(long, value_name = "large|small", value_parser = parse_wink_size)]
    wink_size: Option<winkeye::report::position::WinkSize>,
    /// With --closeup: another photo of the same winks from elsewhere (rule D.1: look from more
    /// than one position; repeat for more). Its winks are matched to the first photo's and each
    /// pair is called on every photo that shows it; the document keeps the first photo's ids.
    #[arg(long, value_name = "IMAGE", requires = "closeup")]
    also: Vec<PathBuf>,
}

fn parse_wink_size(s: &str) -> Result<winkeye::report::position::WinkSize, String> {
    use winkeye::report::position::WinkSize;
    match s.trim().to_ascii_lowercase().as_str() {
        "22" => Ok(WinkSize::Large),
        "16" | "15" => Ok(WinkSize::Small),
        name => [WinkSize::Large, WinkSize::Small].into_iter().find(|z| z.name() == name).ok_or_else(|| format!("\"{s}\" is not a wink size (large or small)")),
    }
}

/// Which camera `watch` reads.
#[derive(Clone, Debug)]
enum CameraChoice {
    /// A camera by index.
    Index(u32),
    /// A video file played as a live camera.
    File(PathBuf),
}

fn parse_camera(s: &str) -> Result<CameraChoice, String> {
    if let Some(path) = s.strip_prefix("file:") {
        return if path.is_empty() { Err("file: needs a path".into()) } else { Ok(CameraChoice::File(PathBuf::from(path))) };
    }
    s.trim().parse::<u32>().map(CameraChoice::Index).map_err(|_| format!("\"{s}\" is not a camera index (or file:PATH)"))
}

fn parse_window(s: &str) -> Result<(f64, f64), String> {
    let bad = || format!("\"{s}\" is not START-END in seconds");
    let (a, b) = s.split_once('-').ok_or_else(bad)?;
    let (a, b) = (a.trim().parse::<f64>().map_err(|_| bad())?, b.trim().parse::<f64>().map_err(|_| bad())?);
    if a.is_finite() && b.is_finite() && 0.0 <= a && a < b { Ok((a, b)) } else { Err(bad()) }
}

fn parse_point(s: &str) -> Result<winkeye::geometry::PixelPoint, String> {
    let bad = || format!("\"{s}\" is not a point \"x,y\"");
    let (x, y) = s.split_once(',').ok_or_else(bad)?;
    let (x, y) = (x.trim().parse::<f64>().map_err(|_| bad())?, y.trim().parse::<f64>().map_err(|_| bad())?);
    if x.is_finite() && y.is_finite() { Ok(winkeye::geometry::PixelPoint::new(x, y)) } else { Err(bad()) }
}

/// `--camera-height`, shared by every command that calibrates frames.
#[derive(clap::Args)]
struct CameraHeightArg {
    /// The camera's height above the mat, measured (mm, to the lens; ±25 mm is plenty): without a
    /// chessboard lens calibration, it tells the parallax correction what a camera straight overhead cannot.
    #[arg(long, value_name = "MM", value_parser = parse_camera_height)]
    camera_height: Option<f64>,
}

/// `--wink-diameters`, shared by every command that measures winks.
#[derive(clap::Args)]
struct WinkDiametersArg {
    /// The set's winks as measured, mm across (calipers), LARGE,SMALL (e.g. 21.35,15.5): margins,
    /// gaps and edges at the line are then winks of that size's. A frame cannot tell a wink's true
    /// size from how its rim is drawn; without this a typical real wink's is taken (97% of the
    /// nominal, rule 2.1.1's 22 and 16 mm). Also kept in a calibration file (`[winks]`).
    #[arg(long, value_name = "LARGE,SMALL", value_parser = parse_wink_diameters)]
    wink_diameters: Option<winkeye::report::position::NominalDiameters>,
}

/// `--wink-diameters LARGE,SMALL`, mm.
fn parse_wink_diameters(s: &str) -> Result<winkeye::report::position::NominalDiameters, String> {
    let bad = || format!("\"{s}\" is not two diameters in mm \"LARGE,SMALL\"");
    let (l, sm) = s.split_once(',').ok_or_else(bad)?;
    let d = winkeye::report::position::NominalDiameters { large_mm: l.trim().parse().map_err(|_| bad())?, small_mm: sm.trim().parse().map_err(|_| bad())? };
    match winkeye::calibrate::file::implausible_diameters(&d) {
        Some(why) => Err(why),
        None => Ok(d),
    }
}

/// The set's measured diameters: as given, else as the calibration file recorded them (said on
/// stderr: a file's sizes are never taken silently).
fn wink_diameters(given: Option<winkeye::report::position::NominalDiameters>, file: Option<&winkeye::calibrate::file::CalibrationFile>) -> Option<winkeye::report::position::NominalDiameters> {
    let from_file = file.and_then(|f| f.winks).filter(|_| given.is_none());
    if let Some(d) = from_file {
        eprintln!("winks taken as {} mm (large) and {} mm (small) across, as the calibration file states ([winks])", d.large_mm, d.small_mm);
    }
    given.or(from_file)
}

#[derive(clap::Args)]
struct AnalyzeArgs {
    /// The frame (JPEG, PNG, …).
    image: PathBuf,
    /// A calibration file (`winkeye calibrate`): its mat is used as it is when it still fits the
    /// frame, and its lens in any case; without one the frame is calibrated by itself.
    #[arg(long, value_name = "FILE")]
    calibration: Option<PathBuf>,
    /// Ruleset (see `winkeye rulesets`).
    #[arg(long, value_name = "NAME", value_parser = parse_ruleset, default_value = "etwa-2012")]
    ruleset: Ruleset,
    /// The mat's corners in pixels, in the order (−X,+Y), (+X,+Y), (+X,−Y), (−X,−Y), for frames where it is not found by itself.
    #[arg(long, value_name = "x,y;x,y;x,y;x,y", value_parser = parse_corners)]
    corners: Option<[winkeye::geometry::PixelPoint; 4]>,
    #[command(flatten)]
    height: CameraHeightArg,
    #[command(flatten)]
    winks: WinkDiametersArg,
    /// Write the position document here ("-" for stdout).
    #[arg(long, value_name = "OUT")]
    json: Option<PathBuf>,
    /// Draw what was found on the frame: outlines, states, squops, piles, replacement spots, the mat.
    #[arg(long, value_name = "OUT.png")]
    overlay: Option<PathBuf>,
}

#[derive(clap::Args)]
struct CalibrateArgs {
    /// Frames of the mat (and chessboard shots, with --chessboard).
    #[arg(required = true)]
    images: Vec<PathBuf>,
    /// Chessboard shots among the images: inner corners as COLSxROWS (e.g. 9x6).
    #[arg(long, value_name = "COLSxROWS", value_parser = parse_pattern, requires = "square")]
    chessboard: Option<(u32, u32)>,
    /// Side of a chessboard square, in mm.
    #[arg(long, value_name = "MM", requires = "chessboard", value_parser = parse_square)]
    square: Option<f64>,
    /// The mat's corners in the first frame, in pixels, in the order (−X,+Y), (+X,+Y), (+X,−Y), (−X,−Y).
    #[arg(long, value_name = "x,y;x,y;x,y;x,y", value_parser = parse_corners)]
    corners: Option<[winkeye::geometry::PixelPoint; 4]>,
    #[command(flatten)]
    height: CameraHeightArg,
    #[command(flatten)]
    winks: WinkDiametersArg,
    /// A calibration file whose lens to use (and whose mat to check against the frame).
    #[arg(long, value_name = "FILE")]
    calibration: Option<PathBuf>,
    /// Ruleset, for the mat's size.
    #[arg(long, value_name = "NAME", value_parser = parse_ruleset, default_value = "etwa-2012")]
    ruleset: Ruleset,
    /// Write the calibration file here (TOML); default: standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Draw what was found on the frame, as a PNG.
    #[arg(long, value_name = "OUT.png")]
    overlay: Option<PathBuf>,
}

fn parse_camera_height(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(h) if h.is_finite() && (200.0..=10_000.0).contains(&h) => Ok(h),
        _ => Err(format!("\"{s}\" is not a camera height in mm (200-10000)")),
    }
}

/// A warning when the frame's perspective disagrees with the camera's height as given.
fn warn_camera_height(camera: &winkeye::calibrate::pose::CameraPose) {
    if let (Some(seen), Some(given)) = (camera.perspective_height_mm, camera.measured_height_mm) {
        eprintln!("warning: the frame's perspective puts the camera {seen:.0} mm above the mat, not the {given:.0} mm given (--camera-height): measure to the lens, from the mat's surface");
    }
}

/// A frame that shows its winks too small: refused when nothing was found in it and a small wink
/// spans under `detect::MIN_SMALL_WINK_PX` (the rules would count every wink potted), else a
/// warning under `detect::FEW_SMALL_WINK_PX`. (A frame with no colour is refused by the analysis
/// itself: `AnalyzeError::NoColour`.)
fn check_coarse(analysis: &winkeye::analyze::Analysis, ruleset: Ruleset) -> Result<()> {
    let spec = ruleset.spec();
    let small_px = analysis.detections.px_per_mm * spec.winks.small_mm;
    if (small_px.is_nan() || small_px < winkeye::detect::MIN_SMALL_WINK_PX) && analysis.detections.found.is_empty() {
        let mat_px = winkeye::detect::MIN_SMALL_WINK_PX / spec.winks.small_mm * spec.mat.length_mm;
        anyhow::bail!("no winks found, and the mat is too small in this frame to find any: a small wink spans {small_px:.1} px, under {} (the mat's long side needs ~{mat_px:.0} px); move the camera closer or use a higher resolution", winkeye::detect::MIN_SMALL_WINK_PX);
    }
    if small_px < winkeye::detect::FEW_SMALL_WINK_PX {
        eprintln!("warning: a small wink spans only {small_px:.1} px in this frame: expect missed winks and squops ({} px or more advised)", winkeye::detect::FEW_SMALL_WINK_PX);
    }
    Ok(())
}

/// The camera's measured height: as given, else as the calibration file recorded it.
fn camera_height(given: Option<f64>, file: Option<&winkeye::calibrate::file::CalibrationFile>) -> Option<f64> {
    given.or_else(|| file.and_then(|f| f.camera.as_ref()).and_then(|c| c.measured_height_mm))
}

fn parse_corners(s: &str) -> Result<[winkeye::geometry::PixelPoint; 4], String> {
    let bad = || format!("\"{s}\" is not four corners \"x,y;x,y;x,y;x,y\"");
    let pts: Vec<winkeye::geometry::PixelPoint> = s
        .split(';')
        .map(|p| {
            let (x, y) = p.split_once(',').ok_or_else(bad)?;
            let (x, y) = (x.trim().parse::<f64>().map_err(|_| bad())?, y.trim().parse::<f64>().map_err(|_| bad())?);
            if x.is_finite() && y.is_finite() { Ok(winkeye::geometry::PixelPoint::new(x, y)) } else { Err(bad()) }
        })
        .collect::<Result<_, _>>()?;
    pts.try_into().map_err(|_| bad())
}

#[derive(clap::Args)]
struct EvalArgs {
    /// Folder of images with truth documents beside them.
    dir: PathBuf,
    /// What to evaluate.
    #[arg(long, default_value = "calibration", value_parser = ["calibration", "detection", "umpire", "replay"])]
    what: String,
    /// Seconds the mat must be still before a position counts as settled (replay).
    #[arg(long, value_name = "S", default_value_t = 0.5, value_parser = parse_settle)]
    settle: f64,
    /// Print every frame's problems (detection).
    #[arg(long)]
    verbose: bool,
    /// Write every frame's result here as JSON.
    #[arg(long, value_name = "OUT")]
    json: Option<PathBuf>,
    /// Calibration: calibrate every frame as if its camera's height had been measured, off the truth by MM.
    #[arg(long, value_name = "MM", allow_negative_numbers = true)]
    camera_height_off: Option<f64>,
    /// Use this calibration file's lens (from chessboard shots) for every frame.
    #[arg(long, value_name = "FILE")]
    calibration: Option<PathBuf>,
    #[command(flatten)]
    winks: WinkDiametersArg,
}

#[derive(clap::Args)]
struct SynthArgs {
    /// What position to render.
    #[arg(long, value_enum, default_value = "midgame")]
    kind: winkeye::synth::Kind,
    /// First seed; the same seed gives the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How many scenes (seeds SEED, SEED+1, …).
    #[arg(long, default_value_t = 1)]
    count: u64,
    /// Image size, WIDTHxHEIGHT.
    #[arg(long, default_value = "1920x1080", value_parser = parse_resolution)]
    resolution: (u32, u32),
    /// A hand-held close-up of a few winks (10–30 cm, up to 30° oblique, no mat corner in view).
    #[arg(long)]
    closeup: bool,
    /// With --closeup: another photo of the same winks, from the hand-held position this number
    /// draws (an umpire's second look, rule D.1); written as closeup-SEED-vN.
    #[arg(long, value_name = "N", requires = "closeup")]
    view: Option<u64>,
    /// A hand or arm over the mat.
    #[arg(long, value_enum, default_value = "auto")]
    hand: winkeye::synth::HandChoice,
    /// Ruleset for the equipment's sizes and the truth's flags.
    #[arg(long, value_name = "NAME", value_parser = parse_ruleset, default_value = "etwa-2012")]
    ruleset: Ruleset,
    /// Image format: jpg (as the camera delivers it) or png (the same pixels, losslessly).
    #[arg(long, default_value = "jpg", value_parser = ["jpg", "png"])]
    format: String,
    /// Folder to write into (created if missing).
    #[arg(long, default_value = "synth")]
    out: PathBuf,
    /// Fix the camera body (focal length, lens) by this seed, so chessboard shots and mat frames share one camera.
    #[arg(long, value_name = "N")]
    camera_seed: Option<u64>,
    /// Barrel distortion k1 of the lens (0 to -0.3); default: the seed decides.
    #[arg(long, value_name = "K1", allow_negative_numbers = true)]
    k1: Option<f64>,
    /// Develop each picture with a camera look the seed draws (white balance off by up to a fifth,
    /// tone curve gamma 1.8–2.6, saturation and contrast ±30%, sharpening), as webcams differ;
    /// the scene and camera are those of the same seed without it.
    #[arg(long, conflicts_with = "clip")]
    varied_look: bool,
    /// How to draw: traced (rays through a lamp-lit scene) or flat (flat-coloured polygons,
    /// drop shadows, a dark bevel round each wink): the same scene and truth either way.
    #[arg(long, value_enum, default_value = "traced", conflicts_with = "clip")]
    style: winkeye::synth::Style,
    /// Paint every baseline this many mm beyond where rule 2.3.1 puts it (negative: towards the
    /// centre), as on a hand-painted mat; the truth's field of play follows the painted lines.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true, value_parser = baseline_offset, conflicts_with_all = ["clip", "closeup"])]
    baselines_off: f64,
    /// Draw each wink's diameter as this share of its nominal one, LO,HI (uniformly between; e.g.
    /// 1,1: every wink at its nominal size, as another renderer may draw them); the default,
    /// 0.955,1, is as real winks run. The scene is otherwise the same.
    #[arg(long, value_name = "LO,HI", default_value = "0.955,1", value_parser = parse_wink_share, conflicts_with = "clip")]
    wink_share: (f64, f64),
    /// The corner whose baseline blue's unplayed winks lie behind, in the mat frame (x along the
    /// long side); green's, red's and yellow's follow clockwise seen from above (rule 5.2 fixes
    /// only that order). pos-x-pos-y puts blue and green on a short side.
    #[arg(long, value_enum, default_value = "neg-x-pos-y", conflicts_with_all = ["clip", "closeup"])]
    blue_corner: winkeye::geometry::Corner,
    /// Render a clip around one shot (a video and its truth) instead of a still.
    #[arg(long, conflicts_with = "closeup")]
    clip: bool,
    /// Frames per second of a clip.
    #[arg(long, default_value_t = 30.0, requires = "clip")]
    fps: f64,
    /// What a clip's shot does; default: the seed decides.
    #[arg(long, value_enum, requires = "clip")]
    outcome: Option<winkeye::synth::clip::Outcome>,
    /// Video container of a clip: avi (MJPG) or mp4 (mp4v, where OpenCV has it).
    #[arg(long, default_value = "avi", value_parser = ["avi", "mp4"], requires = "clip")]
    video: String,
    /// Knock the camera while the hand leaves the mat: the clip ends seen from a slightly turned and shifted camera (the truth says when, and the new camera).
    #[arg(long, requires = "clip")]
    bump: bool,
}

fn parse_resolution(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(|| format!("\"{s}\" is not WIDTHxHEIGHT"))?;
    let parse = |v: &str| v.trim().parse::<u32>().map_err(|_| format!("\"{s}\" is not WIDTHxHEIGHT"));
    Ok((parse(w)?, parse(h)?))
}

/// A chessboard's inner corners, COLSxROWS: OpenCV needs at least 3 each way.
fn parse_pattern(s: &str) -> Result<(u32, u32), String> {
    let (c, r) = parse_resolution(s).map_err(|_| format!("\"{s}\" is not COLSxROWS (inner corners, e.g. 9x6)"))?;
    if c < 3 || r < 3 || c > 100 || r > 100 {
        return Err(format!("\"{s}\": a chessboard needs 3 to 100 inner corners each way"));
    }
    Ok((c, r))
}

/// A chessboard square's side, mm.
fn parse_square(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1000.0 => Ok(v),
        _ => Err(format!("\"{s}\" is not a square's side in mm (more than 0, at most 1000)")),
    }
}

/// A range of shares of a wink's nominal diameter, "LO,HI", within 0.8–1.1.
fn parse_wink_share(s: &str) -> Result<(f64, f64), String> {
    let bad = || format!("\"{s}\" is not LO,HI with 0.8 <= LO <= HI <= 1.1 (shares of a wink's nominal diameter)");
    let (lo, hi) = s.split_once(',').ok_or_else(bad)?;
    match (lo.trim().parse::<f64>(), hi.trim().parse::<f64>()) {
        (Ok(lo), Ok(hi)) if (0.8..=1.1).contains(&lo) && (lo..=1.1).contains(&hi) => Ok((lo, hi)),
        _ => Err(bad()),
    }
}

/// How far a rendered baseline is painted off its place: within the calibration's search (a
/// line further off is another line).
fn baseline_offset(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v.abs() <= 10.0 => Ok(v),
        _ => Err(format!("\"{s}\" is not an offset in mm from -10 to 10")),
    }
}

/// Seconds the mat must be still before a position counts as settled.
fn parse_settle(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=60.0).contains(&v) => Ok(v),
        _ => Err(format!("\"{s}\" is not 0-60 seconds")),
    }
}

/// A progress bar drawn with `template` (indicatif's), on stderr.
fn progress_bar(len: u64, template: &str) -> indicatif::ProgressBar {
    let b = indicatif::ProgressBar::new(len);
    b.set_style(indicatif::ProgressStyle::with_template(template).unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()));
    b
}

fn parse_ruleset(name: &str) -> Result<Ruleset, String> {
    Ruleset::from_name(name).map_err(|e| e.to_string())
}

/// An error and its causes on one line, each cause once: errors that already name their source
/// in their own message (`cannot read X: No such file…`) are not followed by it again.
fn one_line(e: &anyhow::Error) -> String {
    let mut line = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !line.contains(&c) {
            line.push_str(": ");
            line.push_str(&c);
        }
    }
    line
}

fn main() -> ExitCode {
    // Output piped into a reader that stops early (`winkeye rulesets | head -1`) ends the program
    // quietly, as for any Unix tool, rather than as a panic on the failed write.
    #[cfg(unix)]
    // SAFETY: restoring the default action of one signal, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("winkeye: {}", one_line(&e));
            ExitCode::from(1)
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Rules { position, ruleset, json, diagram } => cmd_rules(&position, ruleset, json, diagram),
        Command::Analyze(args) => cmd_analyze(&args),
        Command::Umpire(args) => cmd_umpire(&args),
        Command::Synth(args) => cmd_synth(&args),
        Command::Eval(args) => cmd_eval(&args),
        Command::Calibrate(args) => cmd_calibrate(&args),
        Command::Replay(args) => cmd_replay(&args),
        Command::Watch(args) => cmd_watch(&args),
        Command::Rulesets => {
            let text: String = Ruleset::ALL.iter().map(|r| format!("{:<16} {}\n", r.name(), r.summary())).collect();
            to_stdout(&text)
        }
    }
}

/// The calibration to analyse a frame with: a saved one that still fits, else the frame's own
/// (with the saved lens if it came from chessboard shots).
fn analyze_options(frame: &opencv::core::Mat, path: &std::path::Path, calibration: Option<&std::path::Path>, ruleset: Ruleset, corners: Option<[winkeye::geometry::PixelPoint; 4]>, (height, winks): (Option<f64>, Option<winkeye::report::position::NominalDiameters>)) -> Result<winkeye::analyze::AnalyzeOptions> {
    use winkeye::calibrate::file::CalibrationFile;
    let mut opts = winkeye::analyze::AnalyzeOptions::new(ruleset);
    opts.corners = corners;
    opts.source.path = Some(path.display().to_string());
    let file = calibration.map(CalibrationFile::load).transpose()?;
    opts.camera_height_mm = camera_height(height, file.as_ref());
    opts.wink_diameters = wink_diameters(winks, file.as_ref());
    if let Some(file) = file {
        let (w, h) = (opencv::prelude::MatTraitConst::cols(frame) as u32, opencv::prelude::MatTraitConst::rows(frame) as u32);
        if (file.frame.width, file.frame.height) != (w, h) {
            anyhow::bail!("{}: the calibration is for {}x{} frames, this one is {w}x{h}", path.display(), file.frame.width, file.frame.height);
        }
        opts.lens = Some(file.lens.clone());
        if let (Some(cal), None) = (file.calibration(), corners) {
            let check = winkeye::calibrate::check_fit(frame, &cal)?;
            if check.fits() {
                opts.calibration = Some(cal);
            } else if file.chessboard.is_none() {
                // The saved lens was fitted to that frame's mat, not measured on chessboard shots:
                // the new frame (perhaps another camera) measures its own.
                opts.lens = None;
                eprintln!("{}: the saved calibration no longer fits (the mat or camera moved): calibrating from the frame, lens too", path.display());
            } else {
                eprintln!("{}: the saved calibration no longer fits (the mat or camera moved): calibrating from the frame with the saved lens", path.display());
            }
        }
    }
    Ok(opts)
}

fn cmd_umpire(args: &UmpireArgs) -> Result<()> {
    use winkeye::umpire::{self, Scale, UmpireDoc, UmpireSource, UMPIRE_FORMAT};
    let frame = winkeye::capture::load_image(&args.image)?;
    let (w, h) = (opencv::prelude::MatTraitConst::cols(&frame) as u32, opencv::prelude::MatTraitConst::rows(&frame) as u32);
    if let Some(p) = args.near {
        // A pixel off the frame is a slip (a point from another frame or picture), not a question.
        if !(0.0..w as f64).contains(&p.x) || !(0.0..h as f64).contains(&p.y) {
            anyhow::bail!("{}: --near {:.0},{:.0} is outside the {w}×{h} frame", args.image.display(), p.x, p.y);
        }
    }
    // Overhead: each call with how near the --near pixel it is, to draw the nearest's evidence.
    let mut lines: Vec<(Option<umpire::Nearness>, umpire::LineCall)> = Vec::new();
    let mut pair_nearness: Option<umpire::Nearness> = None;
    let (pairs, scale, outlines): (Vec<umpire::Pair>, Scale, Vec<(String, umpire::Outline)>) = if args.closeup {
        // A close-up's scale is the winks' own: the set's measured sizes where stated.
        let saved = args.calibration.as_deref().map(winkeye::calibrate::file::CalibrationFile::load).transpose()?;
        let stated = wink_diameters(args.winks.wink_diameters, saved.as_ref());
        let nominal = stated.unwrap_or(args.ruleset.spec().winks);
        // The other photos read first: one that cannot be read stops the call before anything is said.
        let mut others = Vec::new();
        for path in &args.also {
            let other = winkeye::capture::load_image(path)?;
            others.push((umpire::closeup(&other, &nominal, None, args.wink_size).with_context(|| path.display().to_string())?, path.display().to_string()));
        }
        let found = umpire::closeup(&frame, &nominal, args.near, args.wink_size).with_context(|| args.image.display().to_string())?;
        let outlines = found.winks.iter().map(|w| (w.id.clone(), umpire::close_outline(w))).collect();
        if found.sizes == umpire::SizeSource::AssumedSmall {
            eprintln!("the winks all look one size: taken as small ({} mm); if they are large, say --wink-size large", nominal.small_mm);
        }
        let scale = Scale { method: "wink_size".into(), mm_per_px: (found.mm_per_px * 1e4).round() / 1e4, wink_sizes: Some(found.sizes.name()), wink_diameters_mm: stated.map(|d| [d.large_mm, d.small_mm]) };
        let pairs = if others.is_empty() {
            found.pairs.clone()
        } else {
            let (pairs, shown) = umpire::call_on_views((&found, &args.image.display().to_string()), &others, &nominal);
            for ((_, path), n) in others.iter().zip(shown) {
                if n < 2 {
                    eprintln!("{path}: not two of the first photo's winks found in it (by colour, size and place): not used");
                }
            }
            pairs
        };
        (pairs, scale, outlines)
    } else {
        let opts = analyze_options(&frame, &args.image, args.calibration.as_deref(), args.ruleset, args.corners, (args.height.camera_height, args.winks.wink_diameters))?;
        let analysis = winkeye::analyze::analyze_frame(&frame, &opts).with_context(|| args.image.display().to_string())?;
        if let Some(c) = analysis.calibration.camera.as_ref() {
            warn_camera_height(c);
        }
        check_coarse(&analysis, args.ruleset).with_context(|| args.image.display().to_string())?;
        let tagged = umpire::overhead_tagged(&analysis, args.near);
        pair_nearness = tagged.first().and_then(|t| t.0);
        let pairs = tagged.into_iter().map(|(_, p)| p).collect();
        lines = umpire::line_calls(&analysis, args.near);
        let outlines = analysis.detections.found.iter().filter_map(|f| umpire::overhead_outline(&analysis, &f.id).map(|o| (f.id.clone(), o))).collect();
        let stated = analysis.calibration.wink_diameters.map(|d| [d.large_mm, d.small_mm]);
        (pairs, Scale { method: "mat".into(), mm_per_px: (1e4 / analysis.detections.px_per_mm.max(1e-9)).round() / 1e4, wink_sizes: None, wink_diameters_mm: stated }, outlines)
    };
    for p in &pairs {
        let photos = if p.views.is_empty() { String::new() } else { format!(" over {} photos", p.views.len()) };
        eprintln!("{} ({}) / {} ({}): margin {:+.2} ± {:.2} mm{photos} → {}", p.a, p.colours[0], p.b, p.colours[1], p.margin_mm, p.sigma_mm, p.verdict_text());
        if let Some(advice) = &p.advice {
            eprintln!("    {advice}");
        }
    }
    for (_, l) in &lines {
        eprintln!("{} (rule {})", l.text(), l.rule);
        if let Some(advice) = &l.advice {
            eprintln!("    {advice}");
        }
    }
    match (pairs.is_empty() && lines.is_empty(), args.near) {
        (true, Some(p)) => eprintln!("{}: no winks near ({2:.0}, {3:.0}) (within {1} mm) overlap or come within {4} mm of each other or of the field of play's boundary", args.image.display(), umpire::NEAR_MM, p.x, p.y, umpire::REPORT_GAP_MM),
        (true, None) => eprintln!("{}: no two winks overlap or come within {} mm of each other, and none of the field of play's boundary", args.image.display(), umpire::REPORT_GAP_MM),
        _ => {}
    }
    // The evidence: with --near, the call nearest the pixel; else the closest call, the smallest
    // |margin| in sigmas (a pair where a line call is no closer).
    let closeness = |m: f64, s: f64| m.abs() / s.max(1e-6);
    let closest_line = match args.near {
        Some(_) => lines.first().map(|l| &l.1),
        None => lines.iter().map(|l| &l.1).min_by(|a, b| closeness(a.inside_mm, a.sigma_mm).total_cmp(&closeness(b.inside_mm, b.sigma_mm))),
    };
    let line_shown = closest_line
        .filter(|l| match (args.near, pairs.is_empty()) {
            (_, true) => true,
            (Some(_), false) => umpire::nearer(lines.first().and_then(|x| x.0), pair_nearness).is_lt(),
            (None, false) => pairs.iter().all(|p| closeness(l.inside_mm, l.sigma_mm) < closeness(p.margin_mm, p.sigma_mm)),
        })
        .cloned();
    let doc = UmpireDoc { format: UMPIRE_FORMAT.into(), source: UmpireSource { path: args.image.display().to_string(), width: w, height: h }, scale, pairs, lines: lines.into_iter().map(|(_, l)| l).collect() };
    if let Some(dest) = &args.json {
        write_document(dest, &doc)?;
        if dest.as_os_str() != "-" {
            eprintln!("wrote {}", dest.display());
        }
    }
    if let (Some(dest), Some(l)) = (&args.evidence, &line_shown) {
        let outline = outlines.iter().find(|(i, _)| *i == l.wink).map(|(_, o)| o.clone()).unwrap_or_default();
        let img = umpire::line_evidence(&frame, l, &outline)?;
        write_png(dest, &img)?;
        eprintln!("wrote {}", dest.display());
    } else if let Some(dest) = &args.evidence {
        // The pair nearest the --near pixel, else the closest call: the smallest |margin| in sigmas.
        let nearest = args.near.and(doc.pairs.first());
        let Some(p) = nearest.or_else(|| doc.pairs.iter().min_by(|a, b| closeness(a.margin_mm, a.sigma_mm).total_cmp(&closeness(b.margin_mm, b.sigma_mm)))) else {
            anyhow::bail!("no pair or wink at the line to draw evidence for");
        };
        let find = |id: &str| outlines.iter().find(|(i, _)| i == id).map(|(_, o)| o.clone()).unwrap_or_default();
        let img = umpire::evidence(&frame, p, &find(&p.a), &find(&p.b), p.colours)?;
        write_png(dest, &img)?;
        eprintln!("wrote {}", dest.display());
    }
    Ok(())
}

fn cmd_analyze(args: &AnalyzeArgs) -> Result<()> {
    let frame = winkeye::capture::load_image(&args.image)?;
    let opts = analyze_options(&frame, &args.image, args.calibration.as_deref(), args.ruleset, args.corners, (args.height.camera_height, args.winks.wink_diameters))?;
    let analysis = winkeye::analyze::analyze_frame(&frame, &opts).with_context(|| args.image.display().to_string())?;
    if let Some(c) = analysis.calibration.camera.as_ref() {
        warn_camera_height(c);
    }
    check_coarse(&analysis, args.ruleset).with_context(|| args.image.display().to_string())?;
    print_summary(&args.image, &analysis.position);
    if let Some(dest) = &args.json {
        write_document(dest, &analysis.position)?;
        if dest.as_os_str() != "-" {
            eprintln!("wrote {}", dest.display());
        }
    }
    if let Some(dest) = &args.overlay {
        let img = winkeye::report::overlay::position_overlay(&frame, &analysis)?;
        write_png(dest, &img)?;
        eprintln!("wrote {}", dest.display());
    }
    Ok(())
}

fn cmd_rules(path: &std::path::Path, ruleset: Option<Ruleset>, json: Option<PathBuf>, diagram: Option<PathBuf>) -> Result<()> {
    let doc = Position::load(path)?;
    let ruleset = match (ruleset, doc.ruleset.as_deref()) {
        (Some(r), _) => r,
        (None, Some(name)) => Ruleset::from_name(name).with_context(|| format!("{}: \"ruleset\"", path.display()))?,
        (None, None) => Ruleset::default(),
    };
    let out = rules::apply(&doc, ruleset).with_context(|| format!("{}", path.display()))?;
    print_summary(path, &out);
    if let Some(dest) = json {
        write_document(&dest, &out)?;
        if dest.as_os_str() != "-" {
            eprintln!("wrote {}", dest.display());
        }
    }
    if let Some(dest) = diagram {
        let spec = ruleset.spec();
        let img = winkeye::report::diagram::draw_position(&out, &spec.mat, &spec.pot, &spec.winks);
        write_png(&dest, &img)?;
        eprintln!("wrote {}", dest.display());
    }
    Ok(())
}

fn print_summary(path: &std::path::Path, doc: &Position) {
    eprintln!(
        "{} under {}: {} winks listed, {} squop{}, {} pile{}",
        path.display(),
        doc.ruleset.as_deref().unwrap_or("?"),
        doc.winks.len(),
        doc.squops.len(),
        if doc.squops.len() == 1 { "" } else { "s" },
        doc.piles.len(),
        if doc.piles.len() == 1 { "" } else { "s" },
    );
    for f in &doc.flags {
        eprintln!("  [{}] {}", f.rule, f.text);
    }
    let Some(score) = &doc.score else { return };
    let state = if score.is_final { "game over" } else { "if the game ended now" };
    if let Some(t) = &score.tiddlies {
        let parts: Vec<String> = t.iter().map(|(c, v)| format!("{c} {v}")).collect();
        eprintln!("tiddlies: {}", parts.join(", "));
    }
    let pot_out = score.method == ScoreMethod::PotOut;
    let star = if pot_out { "*" } else { "" };
    if let Some(points) = &score.points {
        let parts: Vec<String> = points.iter().map(|(c, v)| format!("{c} {}", format_points(*v))).collect();
        eprintln!("points: {}", parts.join(", "));
    }
    let gs = |p| score.game_score.get(&p).copied().unwrap_or(0.0);
    use winkeye::report::position::Partnership::{BlueRed, GreenYellow};
    eprintln!(
        "score ({state}, by {}): {}{star}–{}{star} (blue–red v green–yellow)",
        if pot_out { "pot-out" } else { "tiddlies" },
        format_points(gs(BlueRed)),
        format_points(gs(GreenYellow)),
    );
}

fn cmd_synth(args: &SynthArgs) -> Result<()> {
    use winkeye::synth::{render_still, StillOptions};
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    if args.clip {
        return cmd_synth_clips(args);
    }
    let bar = (args.count > 1).then(|| progress_bar(args.count, "{bar:30} {pos}/{len} scenes, {per_sec}, {eta} left"));
    for k in 0..args.count {
        let opts = StillOptions {
            kind: args.kind,
            seed: args.seed + k,
            width: args.resolution.0,
            height: args.resolution.1,
            hand: args.hand,
            ruleset: args.ruleset,
            closeup: args.closeup,
            camera_seed: args.camera_seed,
            k1: args.k1,
            varied_look: args.varied_look,
            style: args.style,
            view: args.view,
            baselines_off_mm: args.baselines_off,
            wink_share: args.wink_share,
            blue_corner: args.blue_corner,
        };
        let stem = opts.stem();
        let image_name = format!("{stem}.{}", args.format);
        let started = std::time::Instant::now();
        let still = render_still(&opts, Some(image_name.clone()))?;
        let image_path = args.out.join(&image_name);
        if args.format == "png" {
            winkeye::report::write_png(&image_path, &still.image)?;
        } else {
            winkeye::report::write_bytes(&image_path, &still.jpeg)?;
        }
        let json_path = args.out.join(format!("{stem}.json"));
        write_document(&json_path, &still.truth)?;
        let line = format!(
            "{} + {} ({} winks, {} squops, {} ms)",
            image_path.display(),
            json_path.display(),
            still.truth.winks.len(),
            still.truth.squops.len(),
            started.elapsed().as_millis()
        );
        match &bar {
            Some(b) => {
                b.println(line);
                b.inc(1);
            }
            None => eprintln!("{line}"),
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(())
}

fn cmd_synth_clips(args: &SynthArgs) -> Result<()> {
    use winkeye::synth::clip::{render_clip, ClipOptions};
    if !(args.fps > 0.0 && args.fps <= 240.0) {
        anyhow::bail!("--fps {} is outside 0-240", args.fps);
    }
    for k in 0..args.count {
        let opts = ClipOptions {
            seed: args.seed + k,
            width: args.resolution.0,
            height: args.resolution.1,
            fps: args.fps,
            outcome: args.outcome,
            ruleset: args.ruleset,
            bump: args.bump,
        };
        let stem = format!("clip-{:05}", opts.seed);
        let video = args.out.join(format!("{stem}.{}", args.video));
        let bar = progress_bar(0, "{prefix} {bar:30} {pos}/{len} frames, {per_sec}, {eta} left");
        bar.set_prefix(stem.clone());
        let started = std::time::Instant::now();
        let truth = render_clip(&opts, &video, &mut |done, total| {
            bar.set_length(total);
            bar.set_position(done);
        })?;
        bar.finish_and_clear();
        let json = args.out.join(format!("{stem}.json"));
        write_document(&json, &truth)?;
        eprintln!(
            "{} + {} ({} frames, shot: {} {:?}, {:.1} s)",
            video.display(),
            json.display(),
            truth.frames,
            truth.shot.wink,
            truth.shot.outcome,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn cmd_eval(args: &EvalArgs) -> Result<()> {
    if args.what == "replay" {
        if !(args.settle.is_finite() && (0.0..=60.0).contains(&args.settle)) {
            anyhow::bail!("--settle {} is outside 0-60 seconds", args.settle);
        }
        let cases = winkeye::eval::replay::clip_cases(&args.dir)?;
        let bar = progress_bar(cases.len() as u64, "{bar:30} {pos}/{len} clips, {eta} left");
        let results = winkeye::eval::replay::evaluate(&cases, Ruleset::Etwa2012, args.settle, &mut |n| bar.set_position(n as u64));
        bar.finish_and_clear();
        for r in &results {
            if let Some(e) = &r.error {
                eprintln!("{}: {e}", r.clip);
            } else if args.verbose && !r.problems.is_empty() {
                eprintln!("{}: {}", r.clip, r.problems.join("; "));
            }
        }
        to_stdout(&format!("{}\n", winkeye::eval::replay::table(&results, args.settle)))?;
        if let Some(out) = &args.json {
            write_document(out, &results)?;
        }
        return Ok(());
    }
    let cases = winkeye::eval::cases(&args.dir)?;
    let bar = progress_bar(cases.len() as u64, "{bar:30} {pos}/{len} frames, {per_sec}, {eta} left");
    if args.what == "umpire" {
        let (results, lines) = winkeye::eval::umpire::evaluate(&cases, Ruleset::Etwa2012, args.winks.wink_diameters, &mut |n| bar.set_position(n as u64));
        bar.finish_and_clear();
        let line_table = if lines.is_empty() { String::new() } else { format!("\n{}", winkeye::eval::umpire::line_table(&lines)) };
        to_stdout(&format!("{}{line_table}\n", winkeye::eval::umpire::table(&results)))?;
        if let Some(out) = &args.json {
            write_document(out, &serde_json::json!({"pairs": results, "lines": lines}))?;
        }
        return Ok(());
    }
    if args.what == "detection" {
        let results = winkeye::eval::detection::evaluate(&cases, Ruleset::Etwa2012, args.winks.wink_diameters, &mut |n| bar.set_position(n as u64));
        bar.finish_and_clear();
        for r in &results {
            if let Some(e) = &r.error {
                eprintln!("{}: {e}", r.image);
            } else if args.verbose && !r.problems.is_empty() {
                eprintln!("{}: {}", r.image, r.problems.join("; "));
            }
        }
        to_stdout(&format!("{}\n", winkeye::eval::detection::table(&results)))?;
        if let Some(out) = &args.json {
            write_document(out, &results)?;
        }
        return Ok(());
    }
    let lens = args.calibration.as_deref().map(winkeye::calibrate::file::CalibrationFile::load).transpose()?.map(|f| f.lens);
    let results = winkeye::eval::calibration::evaluate(&cases, Ruleset::Etwa2012.spec().mat, lens, args.camera_height_off, &mut |n| bar.set_position(n as u64));
    bar.finish_and_clear();
    for r in results.iter().filter(|r| r.corners_in_view && (r.error.is_some() || r.corner_max_px.unwrap_or(0.0) > 1.5)) {
        eprintln!("{}: {}", r.image, r.error.clone().unwrap_or_else(|| format!("corner error {:.2} px", r.corner_max_px.unwrap_or(0.0))));
    }
    to_stdout(&format!("{}\n", winkeye::eval::calibration::table(&results)))?;
    if let Some(out) = &args.json {
        write_document(out, &results)?;
    }
    Ok(())
}

fn cmd_calibrate(args: &CalibrateArgs) -> Result<()> {
    use winkeye::calibrate::{self, file::CalibrationFile, CalibrateOptions};
    let saved = args.calibration.as_deref().map(CalibrationFile::load).transpose()?;
    let mut lens = saved.as_ref().map(|f| f.lens.clone()).filter(|l| matches!(l, winkeye::calibrate::lens::Lens::OpenCv { .. }));
    let mut chessboard_info = saved.as_ref().and_then(|f| f.chessboard.clone());
    let mut frames: Vec<(PathBuf, opencv::core::Mat)> = Vec::new();
    for path in &args.images {
        frames.push((path.clone(), winkeye::capture::load_image(path)?));
    }
    if let (Some(pattern), Some(square)) = (args.chessboard, args.square) {
        let (l, info, used) = calibrate::chessboard::calibrate_lens(&frames, pattern, square)?;
        eprintln!("lens: chessboard found in {} of {} images, calibrateCamera RMS {:.3} px", info.images, frames.len(), info.rms_px);
        lens = Some(l);
        chessboard_info = Some(info);
        frames = frames.into_iter().zip(used).filter(|(_, u)| !u).map(|(f, _)| f).collect();
    }
    let Some((path, frame)) = frames.first() else {
        // Chessboard shots only: a lens-only file, for the frame size of the shots.
        let Some(lens) = lens else { anyhow::bail!("no frame of the mat to calibrate") };
        let first = winkeye::capture::load_image(&args.images[0])?;
        let size = winkeye::calibrate::file::FrameSize { width: opencv::prelude::MatTraitConst::cols(&first) as u32, height: opencv::prelude::MatTraitConst::rows(&first) as u32 };
        let file = CalibrationFile { format: winkeye::calibrate::file::CALIBRATION_FORMAT.into(), frame: size, lens, chessboard: chessboard_info, mat: None, camera: None, winks: wink_diameters(args.winks.wink_diameters, saved.as_ref()) };
        return emit_calibration(&file, args.out.as_deref());
    };
    if let Some(cal) = saved.as_ref().and_then(|f| f.calibration()) {
        let check = calibrate::check_fit(frame, &cal)?;
        if check.fits() {
            eprintln!("{}: the saved calibration still fits ({:.0}% of edge probes, {:.2} px)", path.display(), check.found * 100.0, check.median_px);
        } else {
            eprintln!("{}: the saved calibration no longer fits (the mat or camera moved): recalibrating", path.display());
        }
    }
    let opts = CalibrateOptions { mat: args.ruleset.spec().mat, corners: args.corners, lens, camera_height_mm: camera_height(args.height.camera_height, saved.as_ref()) };
    let mut cal = calibrate::calibrate_frame(frame, &opts).with_context(|| path.display().to_string())?;
    cal.wink_diameters = wink_diameters(args.winks.wink_diameters, saved.as_ref());
    let c = &cal.corners_px;
    eprintln!(
        "{}: mat found, {} edge and {} baseline points, fit RMS {:.2} px, +x end by {:?}",
        path.display(),
        cal.edge_points,
        cal.baseline_points,
        cal.rms_px,
        cal.orientation
    );
    eprintln!("  corners: ({:.1}, {:.1}) ({:.1}, {:.1}) ({:.1}, {:.1}) ({:.1}, {:.1})", c[0].x, c[0].y, c[1].x, c[1].y, c[2].x, c[2].y, c[3].x, c[3].y);
    if cal.blue_corner != winkeye::geometry::Corner::NegXPosY {
        // Rule 5.2 fixes only the order round the mat; say where the unplayed winks put it.
        let at = |c: winkeye::report::position::Colour| winkeye::geometry::Corner::home_of(cal.blue_corner, c);
        use winkeye::report::position::Colour::{Blue, Green, Red, Yellow};
        eprintln!("  colours start: blue {}, green {}, red {}, yellow {} (rule 5.2, read from the unplayed winks)", at(Blue), at(Green), at(Red), at(Yellow));
    }
    if cal.baselines_found.iter().any(Option::is_some) {
        let each: Vec<String> = cal.baselines_found.iter().map(|o| o.map_or("not seen".into(), |d| format!("{d:+.1}"))).collect();
        eprintln!("  baselines as painted, mm beyond where rule 2.3.1 puts them (corner order): {}", each.join(", "));
    }
    if let Some(cam) = &cal.camera {
        eprintln!(
            "  camera: {:.0} mm above ({:.0}, {:.0}) mm, {:.1}° off vertical, focal {:.0} px ({:?})",
            cam.height_mm(),
            cam.centre_mm[0],
            cam.centre_mm[1],
            cam.tilt_deg,
            cam.focal_px,
            cam.focal_source
        );
    }
    if let Some(c) = cal.camera.as_ref() {
        warn_camera_height(c);
    }
    match cal.pot_check {
        Some((_, off)) => eprintln!("  pot: rim found {off:.1} px from where the calibration puts it{}", if off > 4.0 { " (check the mat's centre)" } else { "" }),
        None => eprintln!("  pot: rim not found (no pot, or hidden)"),
    }
    if let Some(out) = &args.overlay {
        let img = winkeye::report::overlay::calibration_overlay(frame, &cal)?;
        winkeye::report::write_png(out, &img)?;
        eprintln!("wrote {}", out.display());
    }
    emit_calibration(&CalibrationFile::from_calibration(&cal, chessboard_info), args.out.as_deref())
}

fn emit_calibration(file: &winkeye::calibrate::file::CalibrationFile, out: Option<&std::path::Path>) -> Result<()> {
    let text = file.to_toml()?;
    match out {
        Some(p) => {
            winkeye::report::write_bytes(p, text.as_bytes())?;
            eprintln!("wrote {}", p.display());
        }
        None => to_stdout(&text)?,
    }
    Ok(())
}

/// Text for standard output; a closed or full stdout is an error, not a panic.
fn to_stdout(text: &str) -> Result<()> {
    winkeye::report::write_bytes(std::path::Path::new("-"), text.as_bytes())?;
    Ok(())
}

/// Sets a flag on Ctrl-C, SIGTERM or SIGHUP (once per process; later calls reuse it).
fn interrupt_flag() -> Result<std::sync::Arc<std::sync::atomic::AtomicBool>> {
    use std::sync::atomic::AtomicBool;
    use std::sync::{Arc, OnceLock};
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    if let Some(f) = FLAG.get() {
        return Ok(f.clone());
    }
    let flag = Arc::new(AtomicBool::new(false));
    let f2 = flag.clone();
    ctrlc::set_handler(move || f2.store(true, std::sync::atomic::Ordering::SeqCst)).context("cannot catch Ctrl-C and SIGTERM")?;
    Ok(FLAG.get_or_init(|| flag).clone())
}

/// The tracking options and calibration shared by `replay` and `watch`.
fn tracker_for(
    calibration: Option<&std::path::Path>,
    (height, winks): (Option<f64>, Option<winkeye::report::position::NominalDiameters>),
    ruleset: Ruleset,
    settle: f64,
    source_path: String,
) -> Result<winkeye::track::Tracker<winkeye::track::Referee>> {
    use winkeye::track::{settle::SettleOptions, Referee, Tracker, TrackerOptions};
    if !(settle.is_finite() && (0.0..=60.0).contains(&settle)) {
        anyhow::bail!("--settle {settle} is outside 0-60 seconds");
    }
    let file = calibration.map(winkeye::calibrate::file::CalibrationFile::load).transpose()?;
    // A lens measured on chessboard shots serves every recalibration; one fitted to the saved
    // frame's mat is that frame's (a frame the saved calibration no longer fits measures its own).
    let lens = file.as_ref().filter(|f| f.chessboard.is_some()).map(|f| f.lens.clone());
    let cal = file.as_ref().and_then(|f| f.calibration());
    let opts = TrackerOptions { settle: SettleOptions { settle_s: settle, ..SettleOptions::default() }, ruleset, source_path: Some(source_path) };
    let camera_height_mm = camera_height(height, file.as_ref());
    let wink_diameters = wink_diameters(winks, file.as_ref());
    Ok(Tracker::new(Referee { ruleset, lens, camera_height_mm, wink_diameters }, opts, cal))
}

/// Where `winkeye replay` sends the loop's output: the event stream, the annotated video, the
/// progress bar.
struct ReplayOutput<'a> {
    sink: winkeye::track::events::EventSink,
    annotated_path: Option<&'a std::path::Path>,
    annotated: Option<winkeye::track::annotate::AnnotatedWriter>,
    fps: f64,
    bar: indicatif::ProgressBar,
    video: &'a std::path::Path,
    interrupted: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl<A: winkeye::track::Analyser> winkeye::track::run::Hooks<A> for ReplayOutput<'_> {
    fn event(&mut self, event: &winkeye::track::events::Event, _since_read: std::time::Duration) -> Result<(), winkeye::track::run::RunError> {
        self.sink.emit(event).map_err(winkeye::track::run::RunError::output)
    }
    fn frame(&mut self, frame: &winkeye::capture::Frame, tracker: &winkeye::track::Tracker<A>) -> Result<(), winkeye::track::run::RunError> {
        use winkeye::track::run::RunError;
        if let Some(path) = self.annotated_path {
            if self.annotated.is_none() {
                self.annotated = Some(winkeye::track::annotate::AnnotatedWriter::create(path, self.fps, frame.full_size).map_err(RunError::output)?);
            }
            if let Some(w) = self.annotated.as_mut() {
                let image = frame.full().map_err(RunError::output)?;
                w.write(&image, tracker.current_analysis(), tracker.stats().settled).map_err(RunError::output)?;
            }
        }
        self.bar.inc(1);
        Ok(())
    }
    fn warning(&mut self, message: String) {
        let line = format!("{}: {message}", self.video.display());
        // A hidden bar (standard error not a terminal) prints nothing, its lines included.
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }
    fn interrupted(&self) -> bool {
        self.interrupted.load(std::sync::atomic::Ordering::SeqCst)
    }
}

fn cmd_replay(args: &ReplayArgs) -> Result<()> {
    use winkeye::track::events::EventSink;
    use winkeye::track::run::Ending;
    // Input first: a missing or unreadable video fails here, before any output exists.
    let mut source = winkeye::capture::open_recorded(&args.video)?;
    if let Some(p) = &args.annotated {
        winkeye::track::annotate::codec_for(p)?;
    }
    let mut tracker = tracker_for(args.calibration.as_deref(), (args.height.camera_height, args.winks.wink_diameters), args.ruleset, args.settle, source.describe())?;
    // Only the settle detector sees most frames, at a few mm a cell: decode those at a fraction
    // of full size where the source can (MJPEG), unless every frame is written out annotated.
    if let (None, Some((width, _))) = (&args.annotated, source.frame_size()) {
        source.reduce(tracker.decode_reduction(width));
    }
    let fps = source.fps().unwrap_or(winkeye::capture::source::DEFAULT_SEQUENCE_FPS);
    let total = source.frame_count().unwrap_or(0);
    let mut source = winkeye::capture::prefetch(source, 4)?;
    let mut out = ReplayOutput {
        interrupted: interrupt_flag()?,
        sink: EventSink::create(&args.events)?,
        annotated_path: args.annotated.as_deref(),
        annotated: None,
        fps,
        bar: progress_bar(total, "{bar:30} {pos}/{len} frames, {per_sec}, {eta} left"),
        video: &args.video,
    };
    let summary = winkeye::track::run::replay(&mut source, &mut tracker, args.stride, &mut out)?;
    out.bar.finish_and_clear();
    out.sink.finish()?;
    if let Some(w) = out.annotated {
        w.finish()?;
    }
    let stats = tracker.stats();
    eprintln!(
        "{}: {} frames read, {} skipped, {} settled position{}, {:.0} frames/s{}",
        args.video.display(),
        summary.read,
        summary.skipped,
        stats.settled,
        if stats.settled == 1 { "" } else { "s" },
        summary.read as f64 / summary.elapsed.as_secs_f64().max(1e-9),
        if summary.ending == Ending::Interrupted { " (interrupted)" } else { "" }
    );
    if args.events.as_os_str() != "-" {
        eprintln!("wrote {}", args.events.display());
    }
    if let Some(p) = &args.annotated {
        eprintln!("wrote {}", p.display());
    }
    // Footage in which the mat was never found is a failure (the events written say so too), and
    // so is footage none of whose still frames could be analysed (the warnings above say why).
    if stats.settled == 0 && stats.calibration_failed > 0 && summary.ending != Ending::Interrupted {
        anyhow::bail!("{}: no mat found in any still frame ({} tried; the whole mat must be in view, or give --calibration)", args.video.display(), stats.calibration_failed);
    }
    if stats.settled == 0 && stats.analysis_failed > 0 && summary.ending != Ending::Interrupted {
        anyhow::bail!("{}: no still frame could be analysed ({} tried; see above)", args.video.display(), stats.analysis_failed);
    }
    Ok(())
}

fn cmd_watch(args: &WatchArgs) -> Result<()> {
    use winkeye::capture::{CameraOptions, CameraSource, FrameSource, SourceEvent};
    use winkeye::track::events::{Event, EventKind, EventSink};
    if args.list_cameras {
        let cams = winkeye::capture::list_cameras()?;
        if cams.is_empty() {
            eprintln!("no cameras found");
        }
        let text: String = cams.iter().map(|c| format!("{:<4} {} ({})\n", c.index, c.name, c.description)).collect();
        return to_stdout(&text);
    }
    // Input first: no camera fails here, before any output exists.
    let mut source = match &args.camera {
        CameraChoice::Index(index) => {
            if args.simulate_unplug.is_some() {
                anyhow::bail!("--simulate-unplug needs --camera file:PATH");
            }
            CameraSource::open(CameraOptions { index: *index, resolution: args.resolution, fps: args.fps })?
        }
        CameraChoice::File(path) => CameraSource::open_file(path, args.simulate_unplug)?,
    };
    let name = source.describe();
    let mut tracker = tracker_for(args.calibration.as_deref(), (args.height.camera_height, args.winks.wink_diameters), args.ruleset, args.settle, name.clone())?;
    let interrupted = interrupt_flag()?;
    let window = args.window && has_display();
    if args.window && !window {
        eprintln!("no display: --window ignored");
    }
    let mut sink = EventSink::create(&args.events)?;
    eprintln!("watching {name} (Ctrl-C to stop)");
    let mut events = Vec::new();
    let (mut last_frame, mut last_t) = (0u64, 0.0f64);
    let mut layer: Option<(u64, winkeye::track::annotate::OverlayLayer)> = None;
    let mut ending = winkeye::track::run::Ending::Interrupted;
    loop {
        if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        match source.next_event()? {
            None => {
                // Only footage played as a camera ends.
                ending = winkeye::track::run::Ending::Footage;
                break;
            }
            Some(SourceEvent::Idle) => {}
            Some(SourceEvent::Lost { error, retry_in_s }) => {
                eprintln!("{name} lost: {error}; retrying");
                sink.emit(&Event::new(last_frame, last_t, EventKind::CameraLost { error, retry_in_s }))?;
            }
            Some(SourceEvent::Restored) => {
                eprintln!("{name} back");
                sink.emit(&Event::new(last_frame, last_t, EventKind::CameraOk {}))?;
            }
            Some(SourceEvent::Frame(frame)) => {
                (last_frame, last_t) = (frame.index, frame.t_s);
                tracker.push(&frame, &mut events)?;
                for e in events.drain(..) {
                    sink.emit(&e)?;
                }
                for w in tracker.take_warnings() {
                    eprintln!("{name}: {w}");
                }
                if window {
                    let settled = tracker.stats().settled;
                    if let Some(a) = tracker.current_analysis() {
                        if layer.as_ref().is_none_or(|(v, _)| *v != settled) {
                            layer = Some((settled, winkeye::track::annotate::analysis_layer(&frame.image, a)?));
                        }
                    }
                    let mut shown = frame.image.clone();
                    if let Some((_, l)) = &layer {
                        l.apply(&mut shown)?;
                    }
                    opencv::highgui::imshow("winkeye", &shown)?;
                    // Esc or q closes the window and stops, like Ctrl-C.
                    let key = opencv::highgui::wait_key(1)?;
                    if key == 27 || key == 'q' as i32 {
                        break;
                    }
                }
            }
        }
    }
    let stats = tracker.stats();
    sink.emit(&winkeye::track::run::end_event(last_frame, last_t, &source as &dyn FrameSource, stats.processed, stats.settled, ending))?;
    sink.finish()?;
    eprintln!("{name}: {} frames, {} dropped as stale, {} settled positions", source.read(), source.dropped(), stats.settled);
    if args.events.as_os_str() != "-" {
        eprintln!("wrote {}", args.events.display());
    }
    Ok(())
}

/// Whether a window can be shown.
fn has_display() -> bool {
    if cfg!(target_os = "linux") {
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    } else {
        true
    }
}
