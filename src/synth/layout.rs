//! Scene content from a seed: where every wink lies (and how squopping winks rest tilted on the
//! winks below them), the mat's and table's look, the pot, squidgers, hands and the lamp.

use super::scene::{Disc, Hand, Light, Material, MatLook, PotBody, Rgb3, Scene, WinkBody};
use crate::geometry::{ConvexPolygon, Corner, MatPoint, MatSpec};
use crate::report::position::{Colour, WinkSize, WinkState};
use crate::rules::RulesetSpec;
use nalgebra::{Point3, Vector3};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_pcg::Pcg64;
use std::f64::consts::TAU;

/// Least gap between winks that are not meant to touch, in mm.
const CLEAR_GAP_MM: f64 = 3.0;
/// Placement attempts for one group before giving up on it.
const PLACEMENT_TRIES: usize = 400;

/// The kind of scene to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// The start of a game: six winks behind each baseline.
    Start,
    /// A game in progress: winks clustered round the pot, squops and piles, some potted.
    Midgame,
    /// Like midgame, with several pairs 0.2–2 mm apart or overlapping: the umpire's cases.
    NearMiss,
    /// One colour has potted out; squops remain to be undone.
    PotOut,
    /// A printed 9 × 6 chessboard (25 mm squares) held up to the camera, for lens calibration.
    Chessboard,
    /// Like midgame, with several winks lying flat whose edges are within 2 mm of the field of
    /// play's boundary, inside or beyond it (a mat's edge or a baseline): rule 13's close calls.
    NearLine,
}

/// `near-line` scenes: a wink's edge lies up to this far inside or beyond the boundary, mm.
pub const LINE_REACH_MM: f64 = 2.0;

/// Whether a hand is over the mat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HandChoice {
    /// Decided by the seed (a quarter of mid-game scenes).
    Auto,
    /// Never.
    None,
    /// An arm reaching over the mat from a long side.
    Over,
    /// An arm over one of the mat's corners.
    Corner,
}

fn lin(srgb: [f64; 3]) -> Rgb3 {
    srgb.map(|c| (c / 255.0).powf(2.2))
}

fn jitter(rng: &mut Pcg64, c: Rgb3, amount: f64) -> Rgb3 {
    c.map(|v| (v * (1.0 + rng.random_range(-amount..amount))).clamp(0.0, 1.0))
}

/// The colour a wink's plastic has (sRGB, before per-wink variation).
pub fn wink_srgb(c: Colour) -> [f64; 3] {
    match c {
        Colour::Blue => [30.0, 70.0, 190.0],
        Colour::Green => [30.0, 150.0, 60.0],
        Colour::Red => [200.0, 30.0, 35.0],
        Colour::Yellow => [235.0, 200.0, 30.0],
    }
}

/// Builds the look of the room: mat, table, pot and lamp.
pub fn room(rng: &mut Pcg64, spec: &RulesetSpec) -> Scene {
    let felts = [[120.0, 120.0, 118.0], [190.0, 170.0, 135.0], [70.0, 120.0, 75.0], [95.0, 110.0, 125.0], [150.0, 150.0, 150.0]];
    let felt = { let c = lin(felts[rng.random_range(0..felts.len())]); jitter(rng, c, 0.08) };
    let tables = [[120.0, 80.0, 45.0], [40.0, 40.0, 42.0], [200.0, 195.0, 185.0], [150.0, 110.0, 70.0]];
    let table = { let c = lin(tables[rng.random_range(0..tables.len())]); jitter(rng, c, 0.08) };
    let baselines = if rng.random_bool(0.92) {
        let light = rng.random_bool(0.6);
        let c = if light { lin([235.0, 235.0, 225.0]) } else { lin([25.0, 25.0, 28.0]) };
        Some((c, rng.random_range(2.0..6.0)))
    } else {
        None
    };
    let pots = [[225.0, 225.0, 220.0], [170.0, 30.0, 30.0], [20.0, 20.0, 22.0], [140.0, 145.0, 150.0]];
    let pot_colour = { let c = lin(pots[rng.random_range(0..pots.len())]); jitter(rng, c, 0.05) };
    let lamp = Point3::new(rng.random_range(-600.0..600.0), rng.random_range(-400.0..400.0), rng.random_range(1600.0..2600.0));
    Scene {
        mat: MatLook {
            spec: spec.mat,
            felt,
            texture: [rng.random_range(0.03..0.08), rng.random_range(0.03..0.08), rng.random_range(0.02..0.06)],
            baselines,
            thickness_mm: rng.random_range(2.0..4.0),
            seed: rng.random(),
        },
        table,
        table_seed: rng.random(),
        pot: Some(PotBody {
            spec: spec.pot,
            wall_mm: 1.2,
            floor_mm: 3.0,
            material: Material { albedo: pot_colour, specular: 0.35, shininess: 40.0 },
        }),
        winks: Vec::new(),
        squidgers: Vec::new(),
        hands: Vec::new(),
        light: Light {
            position: lamp,
            intensity: rng.random_range(0.75..1.0),
            ambient: rng.random_range(0.25..0.45),
            hardness: rng.random_range(6.0..24.0),
            gradient: (rng.random_range(-0.2..0.2), rng.random_range(-0.2..0.2)),
        },
        board: None,
    }
}

/// One colour's six winks, to be placed.
struct Set {
    colour: Colour,
    sizes: Vec<WinkSize>,
}

fn sets(rng: &mut Pcg64) -> Vec<Set> {
    Colour::ALL
        .iter()
        .map(|&colour| {
            let mut sizes = vec![WinkSize::Large, WinkSize::Large, WinkSize::Small, WinkSize::Small, WinkSize::Small, WinkSize::Small];
            sizes.shuffle(rng);
            Set { colour, sizes }
        })
        .collect()
}

/// Poses `upper` with its footprint centre near `c`, resting on `below`: flat on top when its centre
/// is over the lower wink's top face, otherwise tilted with its far edge on the mat and its
/// underside on the lower wink's rim.
pub fn resting_pose(below: &Disc, upper: &mut Disc, c: MatPoint) {
    let cl = below.footprint_centre();
    let dist = c.distance(cl);
    let r_top_face = below.radius_mm - below.edge_mm;
    if dist < r_top_face - 0.5 {
        let z = below.top_height_at(c.x, c.y);
        upper.normal = below.normal;
        upper.centre = Point3::new(c.x, c.y, z) + below.normal * (upper.thickness_mm / 2.0 / below.normal.z);
    } else {
        let u = (cl - c) * (1.0 / dist);
        let s = cl - u * r_top_face;
        let h = below.top_height_at(s.x, s.y);
        let mut theta: f64 = 0.0;
        for _ in 0..6 {
            let reach = (dist - r_top_face) + upper.radius_mm * theta.cos();
            theta = (h / reach).atan();
        }
        let n = Vector3::new(-u.x * theta.sin(), -u.y * theta.sin(), theta.cos());
        let bottom = Point3::new(c.x, c.y, upper.radius_mm * theta.sin());
        upper.normal = n;
        upper.centre = bottom + n * (upper.thickness_mm / 2.0);
    }
}

/// A rendered wink's diameter as a share of its nominal one, drawn uniformly from this range for
/// each wink: real winks run a little under their nominal size and are not all alike (domain.md:
/// large ones 21.1–21.6 mm for a nominal 22). `synth --wink-share` draws from another range, e.g.
/// every wink at its nominal size, as another renderer may.
pub const WINK_SHARE: (f64, f64) = (0.955, 1.0);

/// Places winks on the mat, keeping the ones not meant to touch apart.
pub struct Placer<'a> {
    rng: &'a mut Pcg64,
    spec: MatSpec,
    nominal: (f64, f64),
    /// The range of a wink's diameter as a share of its nominal one ([`WINK_SHARE`]).
    share: (f64, f64),
    /// The winks placed so far.
    pub winks: Vec<WinkBody>,
    /// How many winks of each colour have been made (for ids).
    made: usize,
    /// The corner blue's unplayed winks lie behind; the other colours' follow clockwise.
    blue: Corner,
}

impl<'a> Placer<'a> {
    /// A placer for a mat and nominal (large, small) diameters.
    pub fn new(rng: &'a mut Pcg64, spec: &RulesetSpec) -> Self {
        Placer { rng, spec: spec.mat, nominal: (spec.winks.large_mm, spec.winks.small_mm), share: WINK_SHARE, winks: Vec::new(), made: 0, blue: Corner::NegXPosY }
    }

    /// This placer with winks' diameters drawn from `share` of their nominal ones.
    pub fn sized(self, share: (f64, f64)) -> Self {
        Placer { share, ..self }
    }

    /// This placer with blue's unplayed winks behind `blue`'s baseline, the others clockwise.
    pub fn homes(self, blue: Corner) -> Self {
        Placer { blue, ..self }
    }

    fn body(&mut self, colour: Colour, size: WinkSize) -> Disc {
        let nominal = match size {
            WinkSize::Large => self.nominal.0,
            WinkSize::Small => self.nominal.1,
        };
        // Real winks run a little under their nominal size and are not all alike. Another range
        // takes the same draw to the same place in it, so the scene is otherwise the same.
        let t = self.rng.random_range(WINK_SHARE.0..WINK_SHARE.1);
        let share = if self.share == WINK_SHARE { t } else { self.share.0 + (t - WINK_SHARE.0) / (WINK_SHARE.1 - WINK_SHARE.0) * (self.share.1 - self.share.0) };
        let diameter = nominal * share;
        let thickness = self.rng.random_range(1.4..1.8);
        let albedo = jitter(self.rng, lin(wink_srgb(colour)), 0.1);
        Disc {
            centre: Point3::new(0.0, 0.0, thickness / 2.0),
            normal: Vector3::z(),
            radius_mm: diameter / 2.0,
            thickness_mm: thickness,
            edge_mm: thickness * 0.4,
            material: Material { albedo, specular: self.rng.random_range(0.05..0.35), shininess: self.rng.random_range(300.0..1500.0) },
        }
    }

    fn push(&mut self, colour: Colour, size: WinkSize, disc: Disc, state: WinkState, level: u32) -> usize {
        self.made += 1;
        self.winks.push(WinkBody { id: format!("w{}", self.made), colour, size, disc, state, level });
        self.winks.len() - 1
    }

    /// Whether a disc of `radius` at `c` keeps `gap` from every placed wink not in `except`.
    fn clear(&self, c: MatPoint, radius: f64, gap: f64, except: &[usize]) -> bool {
        self.winks.iter().enumerate().all(|(i, w)| {
            except.contains(&i)
                || w.state == WinkState::Potted
                || w.disc.footprint_centre().distance(c) >= w.disc.radius_mm + radius + gap
        })
    }

    /// A random spot in the field of play for a group of `extent` mm radius, clustered round the
    /// pot with spread `sigma_mm`, clear of the pot and of every wink.
    fn spot(&mut self, extent: f64, sigma_mm: f64) -> Option<MatPoint> {
        let field = self.spec.field_of_play();
        for _ in 0..PLACEMENT_TRIES {
            let r = 40.0 + extent + (self.rng.random::<f64>() * sigma_mm * 2.0).abs();
            let a = self.rng.random_range(0.0..TAU);
            let c = MatPoint::new(r * a.cos() * 1.6, r * a.sin());
            if field.contains_disc(c, extent + 8.0) && self.clear(c, extent, CLEAR_GAP_MM, &[]) {
                return Some(c);
            }
        }
        None
    }

    /// A flat wink on the mat at `c`.
    pub fn flat(&mut self, colour: Colour, size: WinkSize, c: MatPoint, state: WinkState) -> usize {
        let mut d = self.body(colour, size);
        d.centre = Point3::new(c.x, c.y, d.thickness_mm / 2.0);
        self.push(colour, size, d, state, 0)
    }

    /// A wink whose footprint centre is near `c`, resting on wink `lower`: flat on top when its
    /// centre is over the lower wink's top face, otherwise tilted with its far edge on the mat and
    /// its underside on the lower wink's rim.
    pub fn rest_on(&mut self, colour: Colour, size: WinkSize, c: MatPoint, lower: usize) -> usize {
        let mut d = self.body(colour, size);
        let level = self.winks[lower].level + 1;
        resting_pose(&self.winks[lower].disc, &mut d, c);
        self.push(colour, size, d, WinkState::InPlay, level)
    }

    /// A pile of winks at a random spot: `members` (colour, size), the first at the bottom, each
    /// next one resting on one already placed. `margin_mm` draws each squop's overlap.
    /// Returns the members it could not place (all of them when no spot was free).
    fn pile(&mut self, members: &[(Colour, WinkSize)], margin_mm: &mut dyn FnMut(&mut Pcg64) -> f64) -> Vec<(Colour, WinkSize)> {
        let Some(at) = self.spot(40.0, 260.0) else { return members.to_vec() };
        let base = self.flat(members[0].0, members[0].1, at, WinkState::InPlay);
        let mut dir = self.rng.random_range(0.0..TAU);
        let mut below = base;
        for (k, &(colour, size)) in members.iter().enumerate().skip(1) {
            let r_l = self.winks[below].disc.radius_mm;
            let r_u = match size {
                WinkSize::Large => self.nominal.0,
                WinkSize::Small => self.nominal.1,
            } / 2.0 * 0.98;
            let m = margin_mm(self.rng).min(r_l + r_u - 0.5);
            let cl = self.winks[below].disc.footprint_centre();
            let c = cl + MatPoint::new(dir.cos(), dir.sin()) * (r_l + r_u - m);
            // Clear of everything but the wink it rests on: piles are chains and stars, never a
            // wink wedged between two others.
            if !self.clear(c, r_u, CLEAR_GAP_MM, &[below]) {
                return members[k..].to_vec();
            }
            let k = self.rest_on(colour, size, c, below);
            below = if self.rng.random_bool(0.7) { k } else { below };
            dir += self.rng.random_range(-1.0..1.0);
        }
        Vec::new()
    }

    /// Two winks side by side with a gap (> 0) or one squopping the other by an overlap (< 0) of
    /// `gap_mm`.
    fn pair(&mut self, a: (Colour, WinkSize), b: (Colour, WinkSize), gap_mm: f64) -> bool {
        let Some(at) = self.spot(40.0, 220.0) else { return false };
        let ia = self.flat(a.0, a.1, at, WinkState::InPlay);
        let dir = self.rng.random_range(0.0..TAU);
        let r_a = self.winks[ia].disc.radius_mm;
        let r_b = match b.1 {
            WinkSize::Large => self.nominal.0,
            WinkSize::Small => self.nominal.1,
        } / 2.0;
        if gap_mm > 0.0 {
            // The second is made first so its true radius sets the distance exactly.
            let mut d = self.body(b.0, b.1);
            let c = at + MatPoint::new(dir.cos(), dir.sin()) * (r_a + d.radius_mm + gap_mm);
            d.centre = Point3::new(c.x, c.y, d.thickness_mm / 2.0);
            self.push(b.0, b.1, d, WinkState::InPlay, 0);
        } else {
            let c = at + MatPoint::new(dir.cos(), dir.sin()) * (r_a + r_b + gap_mm);
            self.rest_on(b.0, b.1, c, ia);
        }
        true
    }

    /// A wink wholly behind its colour's baseline (clockwise from blue's corner, 5.2).
    pub fn unplayed(&mut self, colour: Colour, size: WinkSize) {
        let corner = Corner::home_of(self.blue, colour);
        let (sx, sy) = corner.signs();
        let base = self.spec.baseline(corner);
        let outline = self.spec.outline();
        let r = match size {
            WinkSize::Large => self.nominal.0,
            WinkSize::Small => self.nominal.1,
        } / 2.0;
        for _ in 0..PLACEMENT_TRIES {
            let c = MatPoint::new(sx * self.rng.random_range(700.0..900.0), sy * self.rng.random_range(250.0..450.0));
            if base.holds_disc(c, r + 2.0) && outline.contains_disc(c, r + 3.0) && self.clear(c, r, 2.0, &[]) {
                self.flat(colour, size, c, WinkState::Unplayed);
                return;
            }
        }
        // The corner is full: play it into the field instead.
        if let Some(c) = self.spot(r, 300.0) {
            self.flat(colour, size, c, WinkState::InPlay);
        }
    }

    /// A wink in the pot, lying on the floor or on the winks already there.
    pub fn potted(&mut self, pot: &PotBody, colour: Colour, size: WinkSize) {
        let mut d = self.body(colour, size);
        let inside = pot.outer_radius(pot.floor_mm) - pot.wall_mm - d.radius_mm - 0.3;
        let below = self.winks.iter().filter(|w| w.state == WinkState::Potted).count();
        let a = self.rng.random_range(0.0..TAU);
        let r = self.rng.random_range(0.0..inside.max(0.1));
        let tilt = self.rng.random_range(0.0..0.04);
        let ta = self.rng.random_range(0.0..TAU);
        d.normal = Vector3::new(tilt * ta.cos(), tilt * ta.sin(), 1.0).normalize();
        let z = pot.floor_mm + below as f64 * 1.9 + d.thickness_mm / 2.0 + d.radius_mm * tilt;
        d.centre = Point3::new(r * a.cos(), r * a.sin(), z);
        self.push(colour, size, d, WinkState::Potted, 0);
    }

    /// A wink lying flat with its edge `edge_mm` inside the boundary of `field` (beyond it when
    /// negative), on one of its edges away from the corners, clear of every other wink by 10 mm.
    /// False when no such place was free.
    fn at_line(&mut self, colour: Colour, size: WinkSize, field: &ConvexPolygon, edge_mm: f64) -> bool {
        let edges: Vec<crate::geometry::Segment> = field.edges().collect();
        // Its true radius first, so that the distance to the line is exact.
        let mut d = self.body(colour, size);
        for _ in 0..PLACEMENT_TRIES {
            let e = edges[self.rng.random_range(0..edges.len())];
            let along = e.b - e.a;
            let len = along.norm();
            // Inward normal of a counter-clockwise edge: its direction turned left.
            let inward = MatPoint::new(-along.y / len, along.x / len);
            let t = self.rng.random_range(0.15..0.85);
            let c = e.a + along * t + inward * (d.radius_mm + edge_mm);
            let on_mat = self.spec.outline().contains_disc(c, 0.0);
            if on_mat && c.norm() > 120.0 && self.clear(c, d.radius_mm, 10.0, &[]) {
                d.centre = Point3::new(c.x, c.y, d.thickness_mm / 2.0);
                let state = if edge_mm >= 0.0 { WinkState::InPlay } else { WinkState::Off };
                self.push(colour, size, d, state, 0);
                return true;
            }
        }
        false
    }

    /// A wink off the field of play: over the mat's edge, or on the table beside it.
    pub fn off(&mut self, colour: Colour, size: WinkSize, table_z: f64) {
        let r = match size {
            WinkSize::Large => self.nominal.0,
            WinkSize::Small => self.nominal.1,
        } / 2.0;
        let (hl, hw) = (self.spec.length_mm / 2.0, self.spec.width_mm / 2.0);
        for _ in 0..PLACEMENT_TRIES {
            let on_table = self.rng.random_bool(0.4);
            let long_side = self.rng.random_bool(0.7);
            let sign = if self.rng.random_bool(0.5) { 1.0 } else { -1.0 };
            // Inside the edge by less than the radius (crossing it), or out on the table.
            let inset = if on_table { -self.rng.random_range(r + 3.0..r + 60.0) } else { self.rng.random_range(1.0..r - 1.0) };
            let c = if long_side {
                MatPoint::new(self.rng.random_range(-hl * 0.7..hl * 0.7), sign * (hw - inset))
            } else {
                MatPoint::new(sign * (hl - inset), self.rng.random_range(-hw * 0.4..hw * 0.4))
            };
            if self.clear(c, r, 10.0, &[]) {
                let k = self.flat(colour, size, c, WinkState::Off);
                if on_table {
                    self.winks[k].disc.centre.z += table_z;
                }
                return;
            }
        }
    }
}

/// Fills `scene` with a position of `kind`, the winks' diameters drawn from `share` of their
/// nominal ones ([`WINK_SHARE`]).
pub fn populate(rng: &mut Pcg64, scene: &mut Scene, spec: &RulesetSpec, kind: Kind, share: (f64, f64), blue: Corner) {
    let pot = scene.pot.clone();
    let table_z = -scene.mat.thickness_mm;
    let mut sets = sets(rng);
    let mut placer_rng = Pcg64::new(rng.random(), rng.random());
    let mut p = Placer::new(&mut placer_rng, spec).sized(share).homes(blue);
    match kind {
        Kind::Chessboard => {}
        Kind::Start => {
            for s in &sets {
                for &size in &s.sizes {
                    p.unplayed(s.colour, size);
                }
            }
        }
        Kind::Midgame | Kind::NearMiss | Kind::PotOut | Kind::NearLine => {
            let out_colour = (kind == Kind::PotOut).then(|| Colour::ALL[p.rng.random_range(0..4)]);
            let mut pool: Vec<(Colour, WinkSize)> = Vec::new();
            for s in &mut sets {
                let potted = if Some(s.colour) == out_colour { 6 } else { p.rng.random_range(0..=3usize) };
                let unplayed = if potted == 6 { 0 } else { [0, 0, 0, 1, 2][p.rng.random_range(0..5usize)] };
                for _ in 0..potted {
                    if let (Some(pot), Some(size)) = (&pot, s.sizes.pop()) {
                        p.potted(pot, s.colour, size);
                    }
                }
                for _ in 0..unplayed {
                    if let Some(size) = s.sizes.pop() {
                        p.unplayed(s.colour, size);
                    }
                }
                pool.extend(s.sizes.drain(..).map(|size| (s.colour, size)));
            }
            pool.shuffle(p.rng);
            if p.rng.random_bool(0.3) {
                if let Some((c, size)) = pool.pop() {
                    p.off(c, size, table_z);
                }
            }
            if kind == Kind::NearLine {
                let field = spec.field_on(&spec.mat);
                for _ in 0..p.rng.random_range(4..=6) {
                    let Some((c, size)) = pool.pop() else { break };
                    let edge = p.rng.random_range(-LINE_REACH_MM..LINE_REACH_MM);
                    if !p.at_line(c, size, &field, edge) {
                        pool.push((c, size));
                    }
                }
            }
            let near_pairs = if kind == Kind::NearMiss { p.rng.random_range(3..=5) } else { p.rng.random_range(0..=1) };
            for _ in 0..near_pairs {
                if pool.len() < 2 {
                    break;
                }
                let (a, b) = (pool.pop().unwrap_or((Colour::Blue, WinkSize::Small)), pool.pop().unwrap_or((Colour::Red, WinkSize::Small)));
                let gap = p.rng.random_range(0.2..2.0) * if p.rng.random_bool(0.5) { 1.0 } else { -1.0 };
                if !p.pair(a, b, gap) {
                    pool.extend([a, b]);
                }
            }
            let piles = p.rng.random_range(1..=4);
            for _ in 0..piles {
                let n = [2, 2, 2, 3, 3, 4][p.rng.random_range(0..6usize)].min(pool.len());
                if n < 2 {
                    break;
                }
                let mut members: Vec<(Colour, WinkSize)> = pool.split_off(pool.len() - n);
                // Now and then a small wink almost hidden under a large one: the large one's centre
                // 0.5–3 mm from the small one's, so it lies flat on top of it.
                let hidden = n == 2 && p.rng.random_bool(0.15);
                if hidden {
                    members.sort_by_key(|m| std::cmp::Reverse(m.1));
                }
                let hidden_d = p.rng.random_range(0.5..3.0);
                let mut margin = move |rng: &mut Pcg64| if hidden { 19.0 - hidden_d } else { rng.random_range(1.0..7.0) };
                pool.extend(p.pile(&members, &mut margin));
            }
            for (c, size) in pool {
                // Every wink is somewhere: on the mat if there is room, else in the pot.
                match p.spot(12.0, 280.0).or_else(|| p.spot(12.0, 700.0)) {
                    Some(at) => {
                        p.flat(c, size, at, WinkState::InPlay);
                    }
                    None => {
                        if let Some(pot) = &pot {
                            p.potted(pot, c, size);
                        }
                    }
                }
            }
        }
    }
    scene.winks = std::mem::take(&mut p.winks);
}

/// Squidgers: sometimes one lies on the mat or the table.
pub fn add_squidger(rng: &mut Pcg64, scene: &mut Scene) {
    if !rng.random_bool(0.4) {
        return;
    }
    let radius = rng.random_range(12.5..25.5);
    let thickness = rng.random_range(2.5..5.0);
    let colours = [[30.0, 25.0, 20.0], [60.0, 40.0, 25.0], [90.0, 90.0, 95.0], [15.0, 15.0, 15.0]];
    let albedo = lin(colours[rng.random_range(0..colours.len())]);
    let spec = scene.mat.spec;
    for _ in 0..PLACEMENT_TRIES {
        let c = MatPoint::new(rng.random_range(-spec.length_mm / 2.0 - 60.0..spec.length_mm / 2.0 + 60.0), rng.random_range(-spec.width_mm / 2.0 - 60.0..spec.width_mm / 2.0 + 60.0));
        let on_mat = c.x.abs() < spec.length_mm / 2.0 - radius && c.y.abs() < spec.width_mm / 2.0 - radius;
        let off_mat = c.x.abs() > spec.length_mm / 2.0 + radius || c.y.abs() > spec.width_mm / 2.0 + radius;
        let clear = scene.winks.iter().all(|w| w.disc.footprint_centre().distance(c) > w.disc.radius_mm + radius + 8.0) && c.norm() > 60.0 + radius;
        if clear && (on_mat || off_mat) {
            let z = if on_mat { thickness / 2.0 } else { thickness / 2.0 - scene.mat.thickness_mm };
            scene.squidgers.push(Disc {
                centre: Point3::new(c.x, c.y, z),
                normal: Vector3::z(),
                radius_mm: radius,
                thickness_mm: thickness,
                edge_mm: 1.0,
                material: Material { albedo, specular: 0.3, shininess: 30.0 },
            });
            return;
        }
    }
}

/// An arm reaching from beyond the mat's edge to `reach` (mat frame, mm), hovering `height_mm`
/// above the mat, with a hand and four fingers.
pub fn arm(rng: &mut Pcg64, from: Point3<f64>, reach: MatPoint, height_mm: f64) -> Hand {
    let skins = [[224.0, 172.0, 140.0], [198.0, 134.0, 100.0], [141.0, 85.0, 60.0], [90.0, 56.0, 40.0]];
    let albedo = { let c = lin(skins[rng.random_range(0..skins.len())]); jitter(rng, c, 0.05) };
    let wrist = Point3::new(reach.x, reach.y, height_mm);
    let dir = (wrist - from).normalize();
    let side = Vector3::new(-dir.y, dir.x, 0.0).normalize();
    let palm = wrist + dir * 45.0 - Vector3::z() * 10.0;
    let mut capsules = vec![(from, wrist, 32.0), (wrist, palm, 30.0)];
    for k in 0..4 {
        let off = (k as f64 - 1.5) * 17.0;
        let knuckle = palm + side * off + dir * 25.0;
        let tip = knuckle + dir * 55.0 - Vector3::z() * rng.random_range(10.0..(height_mm - 15.0).max(12.0));
        capsules.push((knuckle, tip, 8.5));
    }
    Hand { capsules, material: Material { albedo, specular: 0.08, shininess: 10.0 } }
}

/// Adds a hand as `choice` asks.
pub fn add_hand(rng: &mut Pcg64, scene: &mut Scene, choice: HandChoice, kind: Kind) {
    let want = match choice {
        HandChoice::None => false,
        HandChoice::Over | HandChoice::Corner => true,
        HandChoice::Auto => !matches!(kind, Kind::Start | Kind::Chessboard) && rng.random_bool(0.25),
    };
    if !want {
        return;
    }
    let spec = scene.mat.spec;
    let (hl, hw) = (spec.length_mm / 2.0, spec.width_mm / 2.0);
    let height = rng.random_range(50.0..160.0);
    let (from, reach) = if choice == HandChoice::Corner {
        let (sx, sy) = Corner::ALL[rng.random_range(0..4)].signs();
        let from = Point3::new(sx * (hl + 300.0), sy * (hw + 250.0), height + 250.0);
        (from, MatPoint::new(sx * (hl - rng.random_range(20.0..120.0)), sy * (hw - rng.random_range(20.0..100.0))))
    } else {
        let sy = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        let x = rng.random_range(-hl * 0.8..hl * 0.8);
        let from = Point3::new(x + rng.random_range(-200.0..200.0), sy * (hw + 400.0), height + 250.0);
        (from, MatPoint::new(x, sy * (hw - rng.random_range(100.0..350.0))))
    };
    scene.hands.push(arm(rng, from, reach, height));
}

/// A close-up subject: two to five winks in a tight cluster well inside the mat (no corner or pot
/// in view), with near misses and a squop; the winks' diameters drawn from `share` of their
/// nominal ones. Returns the cluster's centre.
pub fn closeup_cluster(rng: &mut Pcg64, scene: &mut Scene, spec: &RulesetSpec, share: (f64, f64)) -> MatPoint {
    let mut placer_rng = Pcg64::new(rng.random(), rng.random());
    let mut p = Placer::new(&mut placer_rng, spec).sized(share);
    let (hl, hw) = (spec.mat.length_mm / 2.0, spec.mat.width_mm / 2.0);
    let centre = MatPoint::new(
        p.rng.random_range(250.0..hl - 350.0) * if p.rng.random_bool(0.5) { 1.0 } else { -1.0 },
        p.rng.random_range(-(hw - 250.0)..(hw - 250.0)),
    );
    // Colours and sizes drawn from what the set still has (rule 2.1.1: 2 large, 4 small each).
    let mut used: Vec<(Colour, WinkSize)> = Vec::new();
    let mut pick = |rng: &mut Pcg64| loop {
        let cs = (Colour::ALL[rng.random_range(0..4)], if rng.random_bool(0.4) { WinkSize::Large } else { WinkSize::Small });
        if used.iter().filter(|&&u| u == cs).count() < cs.1.per_colour() {
            used.push(cs);
            break cs;
        }
    };
    let (c0, s0) = pick(p.rng);
    let base = p.flat(c0, s0, centre, WinkState::InPlay);
    let extra = p.rng.random_range(1..=4);
    let mut dir = p.rng.random_range(0.0..TAU);
    for k in 0..extra {
        let (c, s) = pick(p.rng);
        let r_b = p.winks[base].disc.radius_mm;
        let r = match s {
            WinkSize::Large => spec.winks.large_mm,
            WinkSize::Small => spec.winks.small_mm,
        } / 2.0;
        // Margins from −2 to +2 mm: the calls an umpire is asked to make.
        let margin = p.rng.random_range(-2.0..2.0);
        if margin > 0.0 && k % 2 == 0 {
            let at = centre + MatPoint::new(dir.cos(), dir.sin()) * (r_b + r * 0.98 - margin);
            if p.clear(at, r, CLEAR_GAP_MM, &[base]) {
                p.rest_on(c, s, at, base);
            }
        } else {
            let mut d = p.body(c, s);
            let at = centre + MatPoint::new(dir.cos(), dir.sin()) * (r_b + d.radius_mm + margin.abs());
            if p.clear(at, d.radius_mm, CLEAR_GAP_MM, &[base]) {
                d.centre = Point3::new(at.x, at.y, d.thickness_mm / 2.0);
                p.push(c, s, d, WinkState::InPlay, 0);
            }
        }
        dir += p.rng.random_range(1.1..2.0);
    }
    scene.winks = std::mem::take(&mut p.winks);
    centre
}
