//! Clips: a short sequence around one shot. The scene rests; a hand with a squidger comes in and
//! presses a wink; the wink slides (and may squop another, land in the pot or go off); the hand
//! leaves; the scene rests again. Written through OpenCV's `VideoWriter`, with the truth of both
//! settled positions and the frame ranges in which things move.

use super::layout::{self, resting_pose, Kind};
use super::render::{self, Effects};
use super::scene::{Disc, Material, Scene};
use super::{effects, shoot, truth, SynthError};
use crate::geometry::{Camera, MatPoint};
use crate::report::position::{Position, WinkState};
use crate::rules::Ruleset;
use nalgebra::{Point3, Vector3};
use opencv::core::Size;
use opencv::prelude::*;
use opencv::videoio::VideoWriter;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::Serialize;
use std::path::Path;

/// The `format` string of a clip's truth document.
pub const CLIP_FORMAT: &str = "winkeye.synth-clip/1";

/// What the shot does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The wink slides to a free spot.
    Move,
    /// The wink ends up squopping another.
    Squop,
    /// The wink goes into the pot.
    Pot,
    /// The wink leaves the field of play.
    Off,
}

/// The phases of a clip, in seconds from its start.
const REST_BEFORE_S: f64 = 0.8;
const HAND_IN_S: f64 = 0.8;
const PRESS_S: f64 = 0.3;
const SLIDE_S: f64 = 0.6;
const HAND_OUT_S: f64 = 0.8;
const REST_AFTER_S: f64 = 1.2;

/// What to render.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipOptions {
    /// The seed.
    pub seed: u64,
    /// Frame width, in pixels.
    pub width: u32,
    /// Frame height, in pixels.
    pub height: u32,
    /// Frames per second.
    pub fps: f64,
    /// The shot's outcome; `None` lets the seed decide.
    pub outcome: Option<Outcome>,
    /// Equipment and rules.
    pub ruleset: Ruleset,
    /// Knock the camera while the hand leaves: the scene after the shot is seen from a camera
    /// turned and shifted a little (for testing that calibration is lost and found again).
    pub bump: bool,
}

/// A span of frames, first and last inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Frames {
    /// First frame.
    pub first: u64,
    /// Last frame.
    pub last: u64,
}

/// A settled position and the frames that show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settled {
    /// The frames.
    pub frames: Frames,
    /// The truth.
    pub position: Position,
}

/// Something moving, and when.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Motion {
    /// The frames.
    pub frames: Frames,
    /// What moves: "hand" or a wink's id.
    pub what: String,
}

/// The shot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shot {
    /// The wink played.
    pub wink: String,
    /// What happened to it.
    pub outcome: Outcome,
    /// The wink it squops, for a squop.
    pub target: Option<String>,
    /// Where its footprint started and ended, in mm.
    pub from_mm: MatPoint,
    /// Where it ended, in mm.
    pub to_mm: MatPoint,
}

/// A clip's truth document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClipTruth {
    /// Always [`CLIP_FORMAT`].
    pub format: &'static str,
    /// The video file's name.
    pub video: String,
    /// Frames per second.
    pub fps: f64,
    /// Number of frames.
    pub frames: u64,
    /// The seed.
    pub seed: u64,
    /// The camera.
    pub camera: Camera,
    /// The shot.
    pub shot: Shot,
    /// The position before and after the shot.
    pub settled: Vec<Settled>,
    /// The spans in which things move.
    pub motion: Vec<Motion>,
    /// The spans in which some part of the hand or arm is over the mat (its vertical projection
    /// overlaps the mat's rectangle): no position may be reported as settled in these frames.
    pub hand_over_mat: Vec<Frames>,
    /// When the camera was knocked (`--bump`): the first frame taken from its new pose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bump_frame: Option<u64>,
    /// The camera after the knock (`--bump`); `camera` is the one before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub camera_after_bump: Option<Camera>,
}

/// How far the knock turns the camera about its optical axis, in degrees, and shifts it across
/// the mat, in mm: enough to move the mat's outline several pixels at any resolution, as a
/// tripod nudged by an elbow does.
const BUMP_TURN_DEG: f64 = 1.2;
const BUMP_SHIFT_MM: [f64; 2] = [18.0, -11.0];

/// The camera after a knock: turned about its optical axis and shifted in its own x-y plane.
fn bumped(camera: &Camera) -> Camera {
    let turn = nalgebra::Rotation3::from_axis_angle(&Vector3::z_axis(), BUMP_TURN_DEG.to_radians());
    let mut c = *camera;
    c.pose.r_cam_from_mat = turn * camera.pose.r_cam_from_mat;
    c.pose.t_cam_from_mat = turn * camera.pose.t_cam_from_mat + Vector3::new(BUMP_SHIFT_MM[0], BUMP_SHIFT_MM[1], 0.0);
    c
}

/// Whether any part of a hand (its capsules, with their radii) lies over the mat in plan view.
fn hand_over_mat(scene: &Scene) -> bool {
    let (hl, hw) = (scene.mat.spec.length_mm / 2.0, scene.mat.spec.width_mm / 2.0);
    scene.hands.iter().flat_map(|h| h.capsules.iter()).any(|&(a, b, r)| {
        (0..=16).any(|k| {
            let p = a + (b - a) * (k as f64 / 16.0);
            p.x.abs() <= hl + r && p.y.abs() <= hw + r
        })
    })
}

fn ease_out(t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    1.0 - (1.0 - t).powi(3)
}

fn smooth(t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Where the shot ends, and the pose the wink ends in.
struct Plan {
    shooter: usize,
    outcome: Outcome,
    target: Option<usize>,
    end: Disc,
    end_state: WinkState,
    end_level: u32,
}

fn plan_shot(rng: &mut Pcg64, scene: &Scene, want: Option<Outcome>) -> Option<Plan> {
    let free: Vec<usize> = scene
        .winks
        .iter()
        .enumerate()
        .filter(|(i, w)| {
            w.state == WinkState::InPlay
                && w.level == 0
                && !scene.winks.iter().enumerate().any(|(j, o)| j != *i && o.state != WinkState::Potted && truth::footprint_margin(w, o) > -3.0)
        })
        .map(|(i, _)| i)
        .collect();
    let shooter = *free.get(rng.random_range(0..free.len().max(1)))?;
    let outcome = want.unwrap_or_else(|| [Outcome::Move, Outcome::Move, Outcome::Squop, Outcome::Squop, Outcome::Pot, Outcome::Off][rng.random_range(0..6usize)]);
    let me = &scene.winks[shooter];
    let start = me.disc.footprint_centre();
    let field = scene.mat.spec.field_of_play();
    let clear = |c: MatPoint, r: f64, except: Option<usize>| {
        scene.winks.iter().enumerate().all(|(j, o)| {
            j == shooter || Some(j) == except || o.state == WinkState::Potted || o.disc.footprint_centre().distance(c) > o.disc.radius_mm + r + 3.0
        }) && c.norm() > 24.0 + r + 5.0
    };
    let r = me.disc.radius_mm;
    let mut end = me.disc.clone();
    for _ in 0..400 {
        match outcome {
            Outcome::Move => {
                let a = rng.random_range(0.0..std::f64::consts::TAU);
                let c = start + MatPoint::new(a.cos(), a.sin()) * rng.random_range(60.0..300.0);
                if field.contains_disc(c, r + 10.0) && clear(c, r, None) {
                    end.centre = Point3::new(c.x, c.y, end.thickness_mm / 2.0);
                    return Some(Plan { shooter, outcome, target: None, end, end_state: WinkState::InPlay, end_level: 0 });
                }
            }
            Outcome::Squop => {
                let targets: Vec<usize> = free.iter().copied().filter(|&t| t != shooter).collect();
                let t = *targets.get(rng.random_range(0..targets.len().max(1)))?;
                let tw = &scene.winks[t];
                let a = rng.random_range(0.0..std::f64::consts::TAU);
                let c = tw.disc.footprint_centre() + MatPoint::new(a.cos(), a.sin()) * (tw.disc.radius_mm + r - rng.random_range(1.0..6.0));
                if field.contains_disc(c, r + 10.0) && clear(c, r, Some(t)) {
                    resting_pose(&tw.disc, &mut end, c);
                    return Some(Plan { shooter, outcome, target: Some(t), end, end_state: WinkState::InPlay, end_level: tw.level + 1 });
                }
            }
            Outcome::Pot => {
                let pot = scene.pot.as_ref()?;
                let below = scene.winks.iter().filter(|w| w.state == WinkState::Potted).count();
                let inside = pot.outer_radius(pot.floor_mm) - pot.wall_mm - r - 0.3;
                let a = rng.random_range(0.0..std::f64::consts::TAU);
                let rr = rng.random_range(0.0..inside.max(0.1));
                end.centre = Point3::new(rr * a.cos(), rr * a.sin(), pot.floor_mm + below as f64 * 1.9 + end.thickness_mm / 2.0);
                return Some(Plan { shooter, outcome, target: None, end, end_state: WinkState::Potted, end_level: 0 });
            }
            Outcome::Off => {
                let hw = scene.mat.spec.width_mm / 2.0;
                let sign = if start.y >= 0.0 { 1.0 } else { -1.0 };
                let beyond = rng.random_range(-r + 1.5..40.0);
                let c = MatPoint::new(start.x + rng.random_range(-150.0..150.0), sign * (hw + beyond));
                if c.x.abs() < scene.mat.spec.length_mm / 2.0 - 150.0 && clear(c, r, None) {
                    let z = if beyond > r { -scene.mat.thickness_mm } else { 0.0 };
                    end.centre = Point3::new(c.x, c.y, z + end.thickness_mm / 2.0);
                    return Some(Plan { shooter, outcome, target: None, end, end_state: WinkState::Off, end_level: 0 });
                }
            }
        }
    }
    None
}

/// The scene at time `t` seconds.
fn scene_at(base: &Scene, plan: &Plan, rng_seed: u64, t: f64) -> (Scene, bool, bool) {
    let mut s = base.clone();
    let t_hand_in = REST_BEFORE_S;
    let t_press = t_hand_in + HAND_IN_S;
    let t_slide = t_press + PRESS_S;
    let t_hand_out = t_slide + SLIDE_S;
    let t_rest = t_hand_out + HAND_OUT_S;
    let start = base.winks[plan.shooter].disc.clone();
    let from = start.footprint_centre();
    let to = plan.end.footprint_centre();
    let dir = {
        let d = to - from;
        let n = d.norm();
        if n > 1e-9 {
            d * (1.0 / n)
        } else {
            MatPoint::new(1.0, 0.0)
        }
    };
    // The wink.
    let k = ((t - t_slide) / SLIDE_S).clamp(0.0, 1.0);
    let moving = t > t_slide && t < t_hand_out;
    if t >= t_slide {
        let e = ease_out(k);
        let c = from + (to - from) * e;
        let w = &mut s.winks[plan.shooter];
        if k >= 1.0 {
            w.disc = plan.end.clone();
            w.state = plan.end_state;
            w.level = plan.end_level;
        } else {
            // Slides flat, settling into its final pose over the last fifth of the slide; a shot
            // into the pot hops.
            let settle = smooth((k - 0.8) / 0.2);
            let hop = if plan.outcome == Outcome::Pot { 70.0 * (std::f64::consts::PI * e).sin() } else { 0.0 };
            let z = start.centre.z + (plan.end.centre.z - start.centre.z) * settle.max(if plan.outcome == Outcome::Pot { e } else { 0.0 });
            w.disc.centre = Point3::new(c.x, c.y, z + hop);
            w.disc.normal = (Vector3::z() * (1.0 - settle) + plan.end.normal * settle).normalize();
        }
    }
    // The hand and its squidger: in, pressing behind the wink, following through, out.
    let hand_on = t >= t_hand_in && t < t_rest;
    if hand_on {
        let hover = from - dir * 30.0;
        let side = if from.y >= 0.0 { 1.0 } else { -1.0 };
        let away = Point3::new(hover.x + 150.0 * side, side * (base.mat.spec.width_mm / 2.0 + 500.0), 320.0);
        let near = Point3::new(hover.x, hover.y, 45.0);
        let follow = near + Vector3::new(dir.x, dir.y, 0.0) * 25.0;
        let wrist = if t < t_press {
            let a = smooth((t - t_hand_in) / HAND_IN_S);
            away + (near - away) * a
        } else if t < t_slide {
            near
        } else if t < t_hand_out {
            near + (follow - near) * smooth((t - t_slide) / SLIDE_S)
        } else {
            let a = smooth((t - t_hand_out) / HAND_OUT_S);
            follow + (away - follow) * a
        };
        let mut rng = Pcg64::seed_from_u64(rng_seed);
        let shoulder = Point3::new(wrist.x + 120.0 * side, side * (base.mat.spec.width_mm / 2.0 + 450.0), 420.0);
        let reach = MatPoint::new(wrist.x, wrist.y);
        let mut hand = layout::arm(&mut rng, shoulder, reach, wrist.z);
        // Point the fingers down at the squidger rather than forward.
        for cap in hand.capsules.iter_mut().skip(2) {
            cap.1 = Point3::new(cap.1.x, cap.1.y, cap.1.z.max(14.0));
        }
        s.hands.push(hand);
        let squidger_r = 18.0;
        let sq_c = Point3::new(wrist.x, wrist.y, 0.0) + Vector3::new(dir.x, dir.y, 0.0) * 12.0 + Vector3::z() * (start.thickness_mm + squidger_r * 0.55);
        s.squidgers.push(Disc {
            centre: sq_c,
            normal: Vector3::new(dir.x * 0.6, dir.y * 0.6, 0.8).normalize(),
            radius_mm: squidger_r,
            thickness_mm: 3.5,
            edge_mm: 1.0,
            material: Material { albedo: [0.03, 0.025, 0.02], specular: 0.3, shininess: 30.0 },
        });
    }
    (s, hand_on, moving)
}

/// Renders a clip into `video` (its extension picks the codec: .avi → MJPG, .mp4 → mp4v) and
/// returns its truth. `progress(frame, total)` is called after each frame.
pub fn render_clip(opts: &ClipOptions, video: &Path, progress: &mut dyn FnMut(u64, u64)) -> Result<ClipTruth, SynthError> {
    let mut rng = Pcg64::seed_from_u64(opts.seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xC11F);
    let spec = opts.ruleset.spec();
    let mut base = layout::room(&mut rng, spec);
    layout::populate(&mut rng, &mut base, spec, Kind::Midgame, layout::WINK_SHARE, crate::geometry::Corner::NegXPosY);
    let plan = (0..20).find_map(|_| plan_shot(&mut rng, &base, opts.outcome)).ok_or(SynthError::NoShot)?;
    let camera = shoot::overhead(&mut rng, &spec.mat, opts.width, opts.height);
    let fx = shoot::effects(&mut rng);
    let hand_seed: u64 = rng.random();

    let total_s = REST_BEFORE_S + HAND_IN_S + PRESS_S + SLIDE_S + HAND_OUT_S + REST_AFTER_S;
    let n = (total_s * opts.fps).round() as u64;
    let ext = video.extension().and_then(|e| e.to_str()).unwrap_or("avi").to_ascii_lowercase();
    let fourcc = if ext == "mp4" { VideoWriter::fourcc('m', 'p', '4', 'v')? } else { VideoWriter::fourcc('M', 'J', 'P', 'G')? };
    let tmp = crate::report::output::temp_file_beside(video, &format!(".{ext}")).map_err(|e| SynthError::Io { path: video.display().to_string(), source: e })?;
    let tmp_path = tmp.path().to_string_lossy().into_owned();
    let mut writer = VideoWriter::new(&tmp_path, fourcc, opts.fps, Size::new(opts.width as i32, opts.height as i32), true)?;
    if !writer.is_opened()? {
        return Err(SynthError::Codec { ext });
    }

    let mut hand_frames: Option<Frames> = None;
    let mut over_mat: Vec<Frames> = Vec::new();
    // The knock comes halfway through the hand leaving.
    let t_bump = REST_BEFORE_S + HAND_IN_S + PRESS_S + SLIDE_S + HAND_OUT_S / 2.0;
    let camera_after = opts.bump.then(|| bumped(&camera));
    let mut bump_frame = None;
    let mut wink_frames: Option<Frames> = None;
    // The truth of the first resting frame before the shot and after it.
    let mut rests: Vec<(u64, Position)> = Vec::new();
    let mut cached: Option<(bool, render::Light)> = None;
    for f in 0..n {
        let t = f as f64 / opts.fps;
        let (scene, hand_on, moving) = scene_at(&base, &plan, hand_seed ^ f, t);
        let resting = !hand_on && !moving;
        let after = t >= REST_BEFORE_S + HAND_IN_S;
        let cam = match &camera_after {
            Some(c) if t >= t_bump => {
                bump_frame.get_or_insert(f);
                c
            }
            _ => &camera,
        };
        // A resting scene is the same light frame after frame: trace it once.
        let light = match cached.take() {
            Some((was_after, l)) if resting && was_after == after => l,
            _ => render::render_light(&scene, cam, fx.blur_px)?,
        };
        if hand_over_mat(&scene) {
            match over_mat.last_mut() {
                Some(s) if s.last + 1 == f => s.last = f,
                _ => over_mat.push(Frames { first: f, last: f }),
            }
        }
        if hand_on {
            let h = hand_frames.get_or_insert(Frames { first: f, last: f });
            h.last = f;
        }
        if moving {
            let m = wink_frames.get_or_insert(Frames { first: f, last: f });
            m.last = f;
        }
        // Exposure drifts slowly, and every frame has its own grain.
        let frame_fx = Effects { exposure: fx.exposure * (1.0 + 0.03 * (t * 1.3).sin()), seed: fx.seed ^ f.wrapping_mul(0x9E37), ..fx };
        let rgb = effects::develop(&light.linear, opts.width as usize, opts.height as usize, &frame_fx)?;
        writer.write(&effects::to_bgr_mat(&rgb)?)?;
        if resting {
            if rests.len() == usize::from(after) {
                let prov = truth::Provenance { kind: "clip", seed: opts.seed, effects: &fx, path: None, style: super::Style::Traced, wink_share: super::layout::WINK_SHARE, blue_corner: crate::geometry::Corner::NegXPosY };
                rests.push((f, truth::truth(&scene, cam, &light.visible_px, opts.ruleset, &prov)?));
            }
            cached = Some((after, light));
        }
        progress(f + 1, n);
    }
    writer.release()?;
    tmp.persist(video).map_err(|e| SynthError::Io { path: video.display().to_string(), source: e.error })?;

    let hand = hand_frames.ok_or(SynthError::NoShot)?;
    let mut rests = rests.into_iter();
    let (Some((b_first, before)), Some((a_first, after))) = (rests.next(), rests.next()) else { return Err(SynthError::NoShot) };
    let settled_out = vec![
        Settled { frames: Frames { first: b_first, last: hand.first.saturating_sub(1) }, position: before },
        Settled { frames: Frames { first: a_first, last: n - 1 }, position: after },
    ];
    let mut motion = vec![Motion { frames: hand, what: "hand".into() }];
    let shooter_id = base.winks[plan.shooter].id.clone();
    if let Some(m) = wink_frames {
        motion.push(Motion { frames: m, what: shooter_id.clone() });
    }
    Ok(ClipTruth {
        format: CLIP_FORMAT,
        video: video.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        fps: opts.fps,
        frames: n,
        seed: opts.seed,
        camera,
        shot: Shot {
            wink: shooter_id,
            outcome: plan.outcome,
            target: plan.target.map(|t| base.winks[t].id.clone()),
            from_mm: base.winks[plan.shooter].disc.footprint_centre(),
            to_mm: plan.end.footprint_centre(),
        },
        settled: settled_out,
        motion,
        hand_over_mat: over_mat,
        bump_frame,
        camera_after_bump: camera_after,
    })
}
