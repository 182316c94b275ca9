//! The scene renderer: pictures of tiddlywinks positions with exact ground truth.
//!
//! A seed and a kind fix everything: the mat's and table's look, where every wink lies (tilted
//! where it squops another), the pot, squidgers and hands, the lamp, the camera's pose, lens and
//! effects. The renderer traces rays through signed distance functions, so the truth document's
//! positions, levels and squop margins come from the same geometry the pixels do. Same seed, same
//! bytes.

pub mod clip;
pub mod effects;
pub mod flat;
pub mod layout;
pub mod noise;
pub mod render;
pub mod scene;
pub mod shoot;
pub mod truth;

use crate::geometry::{Camera, Corner};
use crate::report::position::Position;
use crate::rules::{Ruleset, RulesetSpec};
pub use layout::{HandChoice, Kind};
use rand::SeedableRng;
use rand_pcg::Pcg64;

/// Why a scene could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    /// OpenCV failed while blurring or encoding.
    #[error("image processing failed: {0}")]
    OpenCv(#[from] opencv::Error),
    /// The truth document did not validate (a bug in the generator).
    #[error("the truth document is inconsistent: {0}")]
    Truth(#[from] crate::report::PositionError),
    /// No wink could be played for a clip's shot (a bug in the generator's layouts).
    #[error("no playable shot in this layout")]
    NoShot,
    /// The video codec for this extension is not available in this OpenCV.
    #[error("OpenCV cannot write .{ext} video here (try .avi, MJPG)")]
    Codec {
        /// The file extension.
        ext: String,
    },
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A resolution outside what the renderer makes.
    #[error("resolution {width}x{height} is outside 64x64 to 8192x8192")]
    Resolution {
        /// Width asked for.
        width: u32,
        /// Height asked for.
        height: u32,
    },
}

/// What to render.
#[derive(Debug, Clone, PartialEq)]
pub struct StillOptions {
    /// The kind of position.
    pub kind: Kind,
    /// The seed.
    pub seed: u64,
    /// Image width, in pixels.
    pub width: u32,
    /// Image height, in pixels.
    pub height: u32,
    /// Whether a hand is over the mat.
    pub hand: HandChoice,
    /// Equipment and rules.
    pub ruleset: Ruleset,
    /// A hand-held close-up of a few winks instead of the overhead view.
    pub closeup: bool,
    /// Fixes the camera body (focal length, principal point, lens) across shots: chessboards and
    /// frames of the mat with the same camera seed share one camera.
    pub camera_seed: Option<u64>,
    /// Overrides the lens's barrel distortion k1 (0 to −0.3).
    pub k1: Option<f64>,
    /// Develops the picture with a camera look drawn from the seed (white balance, tone curve,
    /// saturation, contrast, sharpening) rather than the renderer's neutral one. The scene and
    /// the camera's pose and lens are the same either way.
    pub varied_look: bool,
    /// How the picture is drawn.
    pub style: Style,
    /// A close-up: another photo of the same winks from the hand-held position (and camera
    /// effects) this seed draws, as an umpire looks again from another place (rule D.1). The
    /// winks and the truth's positions are those of `seed`.
    pub view: Option<u64>,
    /// Every baseline painted this far (mm) beyond where rule 2.3.1 puts it, away from the
    /// mat's centre (negative: towards it), as a hand-painted mat may have them; the truth's
    /// field of play follows the painted lines (rule 3).
    pub baselines_off_mm: f64,
    /// Each wink's diameter as a share of its nominal one is drawn from this range
    /// ([`layout::WINK_SHARE`] as real winks are; `(1.0, 1.0)` draws every wink at its nominal
    /// size). The scene is otherwise the same.
    pub wink_share: (f64, f64),
    /// The corner whose baseline blue's unplayed winks lie behind; the others follow clockwise
    /// seen from above (rule 5.2 fixes only the order).
    pub blue_corner: Corner,
}

/// How a still is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Style {
    /// Rays traced through a lamp-lit scene: shading, soft shadows, highlights, rounded rims.
    #[default]
    Traced,
    /// Flat-coloured polygons with drop shadows, a dark bevel round each wink and a glint
    /// ([`flat`]): the same scene and truth drawn another way, to see what holds beyond one
    /// renderer.
    Flat,
}

/// A rendered still with its truth.
pub struct Still {
    /// The picture as the camera delivered it (JPEG).
    pub jpeg: Vec<u8>,
    /// The same picture decoded.
    pub image: image::RgbImage,
    /// The truth document.
    pub truth: Position,
    /// The camera.
    pub camera: Camera,
    /// What the ray through each pixel's centre met, row by row (winks by index into `truth.winks`).
    pub surfaces: Vec<render::Surface>,
}

impl Still {
    /// What the ray through pixel (x, y)'s centre met.
    pub fn surface_at(&self, x: u32, y: u32) -> render::Surface {
        if x >= self.camera.width || y >= self.camera.height {
            return render::Surface::Nothing;
        }
        self.surfaces[(y * self.camera.width + x) as usize]
    }
}

impl StillOptions {
    /// The file stem for this still: `<kind>-<seed>`, `closeup-<seed>`, or for another view of
    /// a close-up `closeup-<seed>-v<view>`.
    pub fn stem(&self) -> String {
        let kind = if self.closeup { "closeup".to_string() } else { format!("{:?}", self.kind).to_lowercase() };
        match self.view.filter(|_| self.closeup) {
            Some(v) => format!("{kind}-{:05}-v{v}", self.seed),
            None => format!("{kind}-{:05}", self.seed),
        }
    }
}

/// Renders one still.
pub fn render_still(opts: &StillOptions, path: Option<String>) -> Result<Still, SynthError> {
    if !(64..=8192).contains(&opts.width) || !(64..=8192).contains(&opts.height) {
        return Err(SynthError::Resolution { width: opts.width, height: opts.height });
    }
    let tag = if opts.closeup { 0x0C10_5E00 } else { opts.kind as u64 };
    let mut rng = Pcg64::seed_from_u64(opts.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ tag);
    let painted = RulesetSpec { mat: opts.ruleset.spec().mat.with_painted([opts.baselines_off_mm; 4]), ..*opts.ruleset.spec() };
    let spec = &painted;
    let mut scene = layout::room(&mut rng, spec);
    let body = (opts.camera_seed.is_some() || opts.k1.is_some()).then(|| shoot::body(opts.camera_seed.unwrap_or(opts.seed), opts.width, opts.height, opts.k1));
    let camera = if opts.closeup {
        let centre = layout::closeup_cluster(&mut rng, &mut scene, spec, opts.wink_share);
        if let Some(v) = opts.view {
            // Another view: its own stream for the camera and its effects, the winks unchanged.
            rng = Pcg64::seed_from_u64(opts.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ v.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ 0x0C10_5E01);
        }
        shoot::closeup(&mut rng, centre, 45.0, opts.width, opts.height)
    } else if opts.kind == Kind::Chessboard {
        let (i, d) = body.unwrap_or_else(|| shoot::body(opts.seed, opts.width, opts.height, None));
        let (cam, board) = shoot::chessboard_shot(&mut rng, i, d, opts.width, opts.height);
        scene.board = Some(board);
        scene.pot = None;
        cam
    } else {
        layout::populate(&mut rng, &mut scene, spec, opts.kind, opts.wink_share, opts.blue_corner);
        layout::add_squidger(&mut rng, &mut scene);
        layout::add_hand(&mut rng, &mut scene, opts.hand, opts.kind);
        match body {
            Some((i, d)) => shoot::overhead_with(&mut rng, &spec.mat, i, d, opts.width, opts.height),
            None => shoot::overhead(&mut rng, &spec.mat, opts.width, opts.height),
        }
    };
    let mut fx = shoot::effects(&mut rng);
    if opts.varied_look {
        // Its own stream, so that the scene and camera do not change with the look.
        fx.look = shoot::look(&mut Pcg64::seed_from_u64(opts.seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x100C));
    }
    let frame = match opts.style {
        Style::Traced => render::render(&scene, &camera, &fx)?,
        Style::Flat => {
            let light = render::render_light(&scene, &camera, fx.blur_px)?;
            let linear = flat::draw(&scene, &camera, &light, fx.blur_px)?;
            let rgb = effects::develop(&linear, camera.width as usize, camera.height as usize, &fx)?;
            render::Frame { rgb, surfaces: light.surfaces, visible_px: light.visible_px }
        }
    };
    let jpeg = effects::jpeg(&frame.rgb, fx.jpeg_quality)?;
    let image = effects::decode(&jpeg)?;
    let stem = opts.stem();
    let kind = stem.split_once('-').map_or(stem.as_str(), |(k, _)| k);
    let prov = truth::Provenance { kind, seed: opts.seed, effects: &fx, path, style: opts.style, wink_share: opts.wink_share, blue_corner: opts.blue_corner };
    let truth = truth::truth(&scene, &camera, &frame.visible_px, opts.ruleset, &prov)?;
    Ok(Still { jpeg, image, truth, camera, surfaces: frame.surfaces })
}
