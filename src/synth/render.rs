//! The renderer: one ray per pixel traced through the scene's signed distance functions, lit by
//! the lamp with soft shadows and highlights; then sixteen rays for every pixel on an edge (where
//! its neighbours saw another surface); then what the camera does to it — blur, exposure,
//! vignetting, grain.

use super::noise;
use super::scene::{Rgb3, Scene};
use crate::geometry::{Camera, MatPoint, PixelPoint};
use nalgebra::{Point3, Vector3};
use opencv::core::Vec3f;
use rayon::prelude::*;

/// Sphere-tracing stops when this close to a surface, in mm.
const HIT_MM: f64 = 2e-3;
/// Most sphere-tracing steps for one ray and one object.
const MAX_STEPS: usize = 160;
/// Most steps of a soft-shadow march through one object.
const SHADOW_STEPS: usize = 64;

/// What the camera does after the optics.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Effects {
    /// Exposure multiplier.
    pub exposure: f64,
    /// Vignetting: relative darkening in the image corners.
    pub vignette: f64,
    /// Optical blur, Gaussian sigma in pixels.
    pub blur_px: f64,
    /// Sensor noise, sigma in 8-bit levels.
    pub noise_levels: f64,
    /// JPEG quality, 1–100.
    pub jpeg_quality: u8,
    /// Seed of the grain.
    pub seed: u64,
    /// How the camera develops colour (neutral unless asked for).
    #[serde(skip_serializing_if = "Look::is_neutral")]
    pub look: Look,
}

/// How a camera develops colour: its white balance, tone curve, saturation, contrast and
/// sharpening. Webcams differ in all five; a detector that holds up across them does not depend
/// on how this renderer happens to draw colour.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Look {
    /// White-balance gains on linear red and blue (green 1): above 1 warms or cools the picture.
    pub wb_gains: (f64, f64),
    /// The tone curve: 8-bit value = 255 · linear^(1/gamma) (2.2: sRGB-like).
    pub gamma: f64,
    /// Saturation about each pixel's grey, in 8-bit RGB (1: unchanged).
    pub saturation: f64,
    /// Contrast about mid-grey, in 8-bit RGB (1: unchanged).
    pub contrast: f64,
    /// Unsharp-mask amount, radius 1.5 px (0: none).
    pub sharpen: f64,
}

impl Look {
    /// The renderer's own look: no white-balance error, sRGB-like tone, nothing else.
    pub const NEUTRAL: Look = Look { wb_gains: (1.0, 1.0), gamma: 2.2, saturation: 1.0, contrast: 1.0, sharpen: 0.0 };

    /// Whether this is [`Look::NEUTRAL`].
    pub fn is_neutral(&self) -> bool {
        *self == Look::NEUTRAL
    }
}

/// What was hit.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Hit {
    Nothing,
    Mat(Point3<f64>),
    MatSide(Point3<f64>),
    Table(Point3<f64>),
    Object(usize, Point3<f64>),
    Board(Point3<f64>, bool),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Body {
    Wink(usize),
    Squidger(usize),
    Pot,
    /// One capsule of a hand.
    HandPart(usize, usize),
}

struct Obj {
    body: Body,
    centre: Point3<f64>,
    radius: f64,
    bbox: [f64; 4],
    /// Where its shadow falls on the mat: a disc (centre, radius) holding it.
    shadow: (MatPoint, f64),
}

/// What the ray through a pixel's centre met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// Nothing (outside the lens model's field).
    Nothing,
    /// The table.
    Table,
    /// The mat's cut edge.
    MatSide,
    /// The mat's felt.
    Felt,
    /// A painted baseline.
    Paint,
    /// A chessboard.
    Board,
    /// A wink (index into the scene's winks).
    Wink(usize),
    /// A squidger (index into the scene's squidgers).
    Squidger(usize),
    /// The pot.
    Pot,
    /// A hand (index into the scene's hands).
    Hand(usize),
}

/// The rendered picture, what each pixel shows, and how much of each wink is visible.
pub struct Frame {
    /// The image, 8-bit RGB, before JPEG compression.
    pub rgb: image::RgbImage,
    /// What the ray through each pixel's centre met, row by row.
    pub surfaces: Vec<Surface>,
    /// Per wink (scene order): visible pixels (fractional, from the samples).
    pub visible_px: Vec<f64>,
}

/// The objects that matter for one tile of pixels: whose outline may cover it, whose shadow may
/// fall on the mat there, and which stand close enough to darken the mat there.
#[derive(Default)]
struct Near {
    candidates: Vec<usize>,
    shadows: Vec<usize>,
    contacts: Vec<usize>,
}

/// Side of the square tiles the image is rendered in, in pixels.
const TILE: usize = 16;

struct Ctx<'a> {
    scene: &'a Scene,
    objs: Vec<Obj>,
    eye: Point3<f64>,
}

impl Ctx<'_> {
    fn sdf(&self, body: Body, p: Point3<f64>) -> f64 {
        match body {
            Body::Wink(i) => self.scene.winks[i].disc.sdf(p),
            Body::Squidger(i) => self.scene.squidgers[i].sdf(p),
            Body::Pot => self.scene.pot.as_ref().map_or(f64::INFINITY, |pot| pot.sdf(p)),
            Body::HandPart(i, j) => {
                let (a, b, r) = self.scene.hands[i].capsules[j];
                let ab = b - a;
                let t = ((p - a).dot(&ab) / ab.norm_squared()).clamp(0.0, 1.0);
                (p - (a + ab * t)).norm() - r
            }
        }
    }

    fn normal(&self, body: Body, p: Point3<f64>) -> Vector3<f64> {
        let e = 1e-3;
        let f = |d: Vector3<f64>| self.sdf(body, p + d);
        let n = Vector3::new(
            f(Vector3::x() * e) - f(-Vector3::x() * e),
            f(Vector3::y() * e) - f(-Vector3::y() * e),
            f(Vector3::z() * e) - f(-Vector3::z() * e),
        );
        n.try_normalize(1e-12).unwrap_or_else(Vector3::z)
    }

    /// Sphere-traces one object along the ray, up to `t_max`.
    fn march(&self, k: usize, o: Point3<f64>, d: Vector3<f64>, t_max: f64) -> Option<f64> {
        let obj = &self.objs[k];
        let (t_in, t_out) = ray_sphere(o, d, obj.centre, obj.radius)?;
        let mut t = t_in.max(0.0);
        let t_end = t_out.min(t_max);
        for _ in 0..MAX_STEPS {
            if t > t_end {
                return None;
            }
            let dist = self.sdf(obj.body, o + d * t);
            if dist < HIT_MM {
                return Some(t);
            }
            t += dist;
        }
        None
    }

    fn trace(&self, o: Point3<f64>, d: Vector3<f64>, cands: &[usize]) -> (f64, Hit) {
        let mat = &self.scene.mat;
        let (hl, hw) = (mat.spec.length_mm / 2.0, mat.spec.width_mm / 2.0);
        let mut best = (f64::INFINITY, Hit::Nothing);
        if d.z < 0.0 {
            let t0 = -o.z / d.z;
            let p0 = o + d * t0;
            if p0.x.abs() <= hl && p0.y.abs() <= hw {
                best = (t0, Hit::Mat(p0));
            } else {
                let t1 = (-mat.thickness_mm - o.z) / d.z;
                let p1 = o + d * t1;
                best = if p1.x.abs() <= hl && p1.y.abs() <= hw { (t1, Hit::MatSide(p1)) } else { (t1, Hit::Table(p1)) };
            }
        }
        if let Some((t, black)) = self.scene.board.as_ref().and_then(|b| b.hit(o, d)) {
            if t < best.0 {
                best = (t, Hit::Board(o + d * t, black));
            }
        }
        for &k in cands {
            if let Some(t) = self.march(k, o, d, best.0) {
                best = (t, Hit::Object(k, o + d * t));
            }
        }
        best
    }

    /// How much of the lamp's light reaches `p` (0–1), softened by the lamp's size.
    fn shadow(&self, p: Point3<f64>, on_mat: bool, skip: Option<usize>, near: &Near) -> f64 {
        let light = &self.scene.light;
        let to_light = light.position - p;
        let dist = to_light.norm();
        let l = to_light / dist;
        let mut res: f64 = 1.0;
        let all: Vec<usize>;
        let list: &[usize] = if on_mat {
            &near.shadows
        } else {
            all = (0..self.objs.len()).collect();
            &all
        };
        for &k in list {
            let obj = &self.objs[k];
            if Some(k) == skip && !matches!(obj.body, Body::Pot) {
                continue;
            }
            if obj.shadow.1 < 0.0 {
                continue;
            }
            if on_mat {
                let (c, r) = obj.shadow;
                if c.distance(MatPoint::new(p.x, p.y)) > r {
                    continue;
                }
            } else {
                // Skip objects the shadow ray passes far from.
                let v = obj.centre - p;
                let along = v.dot(&l);
                if along < -obj.radius || (v - l * along).norm() > obj.radius + 0.1 * along.abs() + 2.0 {
                    continue;
                }
            }
            let Some((t_in, t_out)) = ray_sphere(p, l, obj.centre, obj.radius + 2.0) else { continue };
            let mut t = t_in.max(0.05);
            let t_end = t_out.min(dist);
            for _ in 0..SHADOW_STEPS {
                if t > t_end {
                    break;
                }
                let h = self.sdf(obj.body, p + l * t);
                if h < 1e-4 {
                    return 0.0;
                }
                res = res.min(light.hardness * h / t);
                t += h.clamp(0.1, 10.0);
            }
        }
        let s = res.clamp(0.0, 1.0);
        s * s * (3.0 - 2.0 * s)
    }

    fn light_at(&self, p: Point3<f64>) -> f64 {
        let (gx, gy) = self.scene.light.gradient;
        (1.0 + gx * p.x / 1000.0 + gy * p.y / 1000.0).max(0.2)
    }

    fn felt(&self, p: Point3<f64>) -> Rgb3 {
        let mat = &self.scene.mat;
        let s = mat.seed;
        let t = mat.texture;
        let v = t[0] * noise::value(s, p.x / 0.6, p.y / 0.6) + t[1] * noise::fbm(s ^ 1, p.x, p.y, 5.0, 2) + t[2] * noise::fbm(s ^ 2, p.x, p.y, 60.0, 2);
        let mut albedo = mat.felt.map(|c| c * (1.0 + v));
        if let Some((paint, width)) = mat.baselines {
            for b in mat.spec.baselines() {
                if b.depth_behind(MatPoint::new(p.x, p.y)).abs() <= width / 2.0 {
                    albedo = paint.map(|c| c * (1.0 + 0.5 * v));
                }
            }
        }
        albedo
    }

    fn table(&self, p: Point3<f64>) -> Rgb3 {
        let s = self.scene.table_seed;
        let grain = 0.12 * noise::fbm(s, p.x / 40.0, p.y, 6.0, 3) + 0.05 * noise::fbm(s ^ 3, p.x, p.y, 80.0, 2);
        self.scene.table.map(|c| c * (1.0 + grain))
    }

    /// Darkening of the mat right beside a wink, pot or squidger standing on it.
    fn contact(&self, p: Point3<f64>, near: &Near) -> f64 {
        let q = MatPoint::new(p.x, p.y);
        let mut ao = 1.0;
        for &k in &near.contacts {
            let obj = &self.objs[k];
            let footprint = match obj.body {
                Body::Wink(i) if self.scene.winks[i].disc.centre.z < 3.0 => Some(&self.scene.winks[i].disc),
                Body::Squidger(i) if self.scene.squidgers[i].centre.z > 0.0 => Some(&self.scene.squidgers[i]),
                _ => None,
            };
            if let Some(d) = footprint {
                let e = q.distance(d.footprint_centre()) - d.radius_mm;
                if e < 6.0 {
                    ao *= 1.0 - 0.35 * (-e.max(0.0) / 1.2).exp();
                }
            } else if matches!(obj.body, Body::Pot) {
                let r = self.scene.pot.as_ref().map_or(19.0, |pot| pot.outer_radius(0.0));
                let e = q.norm() - r;
                if (0.0..10.0).contains(&e) {
                    ao *= 1.0 - 0.4 * (-e / 3.0).exp();
                }
            }
        }
        ao
    }

    fn shade(&self, hit: Hit, d: Vector3<f64>, near: &Near) -> Rgb3 {
        let light = &self.scene.light;
        let surface = |p: Point3<f64>, n: Vector3<f64>, albedo: Rgb3, spec: f64, shin: f64, on_mat: bool, skip: Option<usize>, ao: f64| {
            let l = (light.position - p).normalize();
            let ndl = n.dot(&l).max(0.0);
            let sh = if ndl > 0.0 { self.shadow(p + n * 0.02, on_mat, skip, near) } else { 0.0 };
            let field = self.light_at(p);
            let h = (l - d).normalize();
            let highlight = spec * n.dot(&h).max(0.0).powf(shin) * sh * light.intensity * field;
            albedo.map(|a| a * (light.ambient * ao + light.intensity * ndl * sh) * field + highlight)
        };
        match hit {
            Hit::Nothing => [0.0; 3],
            Hit::Mat(p) => surface(p, Vector3::z(), self.felt(p), 0.0, 1.0, true, None, self.contact(p, near)),
            Hit::MatSide(p) => self.felt(p).map(|c| c * light.ambient * 0.6),
            Hit::Board(p, black) => {
                let paper = if black { [0.02, 0.02, 0.02] } else { [0.75, 0.75, 0.72] };
                let n = self.scene.board.as_ref().map_or(Vector3::z(), |b| b.u.cross(&b.v));
                let n = if n.dot(&d) > 0.0 { -n } else { n };
                let l = (light.position - p).normalize();
                let lit = light.ambient + light.intensity * n.dot(&l).max(0.0) * 0.8 + 0.2;
                paper.map(|a| a * lit * self.light_at(p))
            }
            Hit::Table(p) => surface(p, Vector3::z(), self.table(p), 0.05, 8.0, false, None, 1.0),
            Hit::Object(k, p) => {
                let body = self.objs[k].body;
                let n = self.normal(body, p);
                let m = match body {
                    Body::Wink(i) => self.scene.winks[i].disc.material,
                    Body::Squidger(i) => self.scene.squidgers[i].material,
                    Body::Pot => self.scene.pot.as_ref().map(|p| p.material).unwrap_or(super::scene::Material { albedo: [0.5; 3], specular: 0.0, shininess: 1.0 }),
                    Body::HandPart(i, _) => self.scene.hands[i].material,
                };
                // Inside the pot the walls hide most of the room's light.
                let ao = if matches!(body, Body::Pot) || (matches!(body, Body::Wink(i) if self.scene.winks[i].state == crate::report::position::WinkState::Potted)) {
                    let depth = self.scene.pot.as_ref().map_or(0.0, |pot| (pot.spec.height_mm - p.z).max(0.0) / pot.spec.height_mm);
                    if (p.x * p.x + p.y * p.y).sqrt() < self.scene.pot.as_ref().map_or(0.0, |pot| pot.outer_radius(p.z) - pot.wall_mm) { 1.0 - 0.6 * depth } else { 1.0 }
                } else {
                    1.0
                };
                surface(p, n, m.albedo, m.specular, m.shininess, false, Some(k), ao)
            }
        }
    }
}

fn ray_sphere(o: Point3<f64>, d: Vector3<f64>, c: Point3<f64>, r: f64) -> Option<(f64, f64)> {
    let oc = o - c;
    let b = oc.dot(&d);
    let cc = oc.norm_squared() - r * r;
    let disc = b * b - cc;
    if disc < 0.0 {
        return None;
    }
    let s = disc.sqrt();
    let (t0, t1) = (-b - s, -b + s);
    (t1 > 0.0).then_some((t0, t1))
}

fn bbox_of(cam: &Camera, c: Point3<f64>, r: f64) -> [f64; 4] {
    let mut b = [f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
    let n = 10;
    for i in 0..=n {
        let th = std::f64::consts::PI * i as f64 / n as f64;
        for j in 0..(2 * n) {
            let ph = std::f64::consts::PI * j as f64 / n as f64;
            let p = c + Vector3::new(th.sin() * ph.cos(), th.sin() * ph.sin(), th.cos()) * (r * 1.05);
            if let Some(px) = cam.project(p) {
                b = [b[0].min(px.x), b[1].min(px.y), b[2].max(px.x), b[3].max(px.y)];
            }
        }
    }
    [b[0] - 2.0, b[1] - 2.0, b[2] + 2.0, b[3] + 2.0]
}

fn objects(scene: &Scene, cam: &Camera) -> Vec<Obj> {
    let mut out = Vec::new();
    let lamp = scene.light.position;
    let shadow_of = |centre: Point3<f64>, radius: f64| {
        // The shadow of the bounding sphere on the mat: its centre projected from the lamp,
        // widened in proportion, plus the penumbra.
        let k = lamp.z / (lamp.z - centre.z).max(1.0);
        let sc = lamp + (centre - lamp) * k;
        (MatPoint::new(sc.x, sc.y), radius * k * 1.3 + 3.0 + centre.z.max(0.0) * 0.3)
    };
    let mut add = |body: Body, centre: Point3<f64>, radius: f64, drawn: bool, casts: bool| {
        let bbox = if drawn { bbox_of(cam, centre, radius) } else { [f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY] };
        let shadow = if casts { shadow_of(centre, radius) } else { (MatPoint::new(0.0, 0.0), -1.0) };
        out.push(Obj { body, centre, radius, bbox, shadow });
    };
    for (i, w) in scene.winks.iter().enumerate() {
        add(Body::Wink(i), w.disc.centre, w.disc.bound_radius(), true, true);
    }
    for (i, s) in scene.squidgers.iter().enumerate() {
        add(Body::Squidger(i), s.centre, s.bound_radius(), true, true);
    }
    if let Some(pot) = &scene.pot {
        let (c, r) = pot.bound();
        add(Body::Pot, c, r, true, true);
    }
    // A hand is drawn as its capsules, each its own object with a tight bound: far cheaper to
    // trace than the blended whole, and the joins barely show at a webcam's resolution.
    for (i, h) in scene.hands.iter().enumerate() {
        for (j, &(a, b, r)) in h.capsules.iter().enumerate() {
            add(Body::HandPart(i, j), Point3::from((a.coords + b.coords) / 2.0), (b - a).norm() / 2.0 + r, true, true);
        }
    }
    out
}

/// Sixteen sample offsets on a 4 × 4 grid within a pixel.
fn grid16() -> [(f64, f64); 16] {
    let mut g = [(0.0, 0.0); 16];
    for (k, o) in g.iter_mut().enumerate() {
        *o = (((k % 4) as f64 + 0.5) / 4.0 - 0.5, ((k / 4) as f64 + 0.5) / 4.0 - 0.5);
    }
    g
}

/// Renders `scene` through `cam` and applies `fx` (all but the JPEG compression).
pub fn render(scene: &Scene, cam: &Camera, fx: &Effects) -> opencv::Result<Frame> {
    let light = render_light(scene, cam, fx.blur_px)?;
    let rgb = super::effects::develop(&light.linear, cam.width as usize, cam.height as usize, fx)?;
    Ok(Frame { rgb, surfaces: light.surfaces, visible_px: light.visible_px })
}

/// The light reaching the sensor, before exposure and grain: what a still frame of a static scene
/// shares with the next one.
pub struct Light {
    /// Linear RGB per pixel, blurred by the optics.
    pub linear: Vec<Vec3f>,
    /// What the ray through each pixel's centre met.
    pub surfaces: Vec<Surface>,
    /// Per wink: visible pixels.
    pub visible_px: Vec<f64>,
}

/// Traces the scene and applies the optical blur (sigma in pixels).
pub fn render_light(scene: &Scene, cam: &Camera, blur_px: f64) -> opencv::Result<Light> {
    let (w, h) = (cam.width as usize, cam.height as usize);
    let ctx = Ctx { scene, objs: objects(scene, cam), eye: cam.pose.centre_mat() };
    let n_winks = scene.winks.len();
    let tiles_x = w.div_ceil(TILE);
    let tile_rows = h.div_ceil(TILE);

    // Pass 1: one ray per pixel, remembering which surface each pixel saw.
    let pass1: Vec<(Vec<Vec3f>, Vec<u32>, Vec<Near>)> = (0..tile_rows)
        .into_par_iter()
        .map(|ty| {
            let (y0, y1) = (ty * TILE, ((ty + 1) * TILE).min(h));
            let mut band = vec![Vec3f::default(); w * (y1 - y0)];
            let mut ids = vec![0u32; w * (y1 - y0)];
            let mut nears = Vec::with_capacity(tiles_x);
            let mut cands: Vec<usize> = Vec::with_capacity(16);
            for x0 in (0..w).step_by(TILE) {
                let x1 = (x0 + TILE).min(w);
                let near = ctx.near(cam, x0, y0, x1, y1);
                for y in y0..y1 {
                    for x in x0..x1 {
                        let (c, id) = ctx.sample(cam, x as f64, y as f64, &near, &mut cands);
                        band[(y - y0) * w + x] = Vec3f::from([c[0] as f32, c[1] as f32, c[2] as f32]);
                        ids[(y - y0) * w + x] = id;
                    }
                }
                nears.push(near);
            }
            (band, ids, nears)
        })
        .collect();
    let mut linear = Vec::with_capacity(w * h);
    let mut ids = Vec::with_capacity(w * h);
    let mut nears: Vec<Near> = Vec::with_capacity(tiles_x * tile_rows);
    for (band, id, near) in pass1 {
        linear.extend_from_slice(&band);
        ids.extend_from_slice(&id);
        nears.extend(near);
    }

    // Pass 2: sixteen rays for each pixel where a neighbour saw another surface.
    let offsets = grid16();
    // Per row: the re-sampled pixels (index, colour) and the winks' visible pixels.
    type RowFix = (Vec<(usize, Vec3f)>, Vec<f64>);
    let fixes: Vec<RowFix> = (0..h)
        .into_par_iter()
        .map(|y| {
            let mut fixed = Vec::new();
            let mut seen = vec![0f64; n_winks];
            let mut cands: Vec<usize> = Vec::with_capacity(16);
            for x in 0..w {
                let id = ids[y * w + x];
                let edge = (y.saturating_sub(1)..(y + 2).min(h)).any(|yy| (x.saturating_sub(1)..(x + 2).min(w)).any(|xx| ids[yy * w + xx] != id));
                if !edge {
                    if let Some(i) = wink_of(id, &ctx) {
                        seen[i] += 1.0;
                    }
                    continue;
                }
                let near = &nears[(y / TILE) * tiles_x + x / TILE];
                let mut acc = [0.0f64; 3];
                for &(ox, oy) in &offsets {
                    let (c, sid) = ctx.sample(cam, x as f64 + ox, y as f64 + oy, near, &mut cands);
                    if let Some(i) = wink_of(sid, &ctx) {
                        seen[i] += 1.0 / offsets.len() as f64;
                    }
                    for ch in 0..3 {
                        acc[ch] += c[ch] / offsets.len() as f64;
                    }
                }
                fixed.push((y * w + x, Vec3f::from([acc[0] as f32, acc[1] as f32, acc[2] as f32])));
            }
            (fixed, seen)
        })
        .collect();
    let mut visible_px = vec![0f64; n_winks];
    for (fixed, seen) in fixes {
        for (i, c) in fixed {
            linear[i] = c;
        }
        for (a, b) in visible_px.iter_mut().zip(seen) {
            *a += b;
        }
    }
    let surfaces = ids
        .iter()
        .map(|&id| match id {
            0 => Surface::Nothing,
            1 => Surface::Table,
            2 => Surface::MatSide,
            3 => Surface::Felt,
            4 => Surface::Paint,
            5 | 6 => Surface::Board,
            _ => match ctx.objs[id as usize - SURFACE_IDS].body {
                Body::Wink(i) => Surface::Wink(i),
                Body::Squidger(i) => Surface::Squidger(i),
                Body::Pot => Surface::Pot,
                Body::HandPart(i, _) => Surface::Hand(i),
            },
        })
        .collect();
    let linear = super::effects::blur(&linear, w, h, blur_px)?;
    Ok(Light { linear, surfaces, visible_px })
}

/// The wink a surface id belongs to, if any.
fn wink_of(id: u32, ctx: &Ctx<'_>) -> Option<usize> {
    let k = (id as usize).checked_sub(SURFACE_IDS)?;
    match ctx.objs.get(k)?.body {
        Body::Wink(i) => Some(i),
        _ => None,
    }
}

/// Surface ids below this are the room's (nothing, table, mat side, felt, paint, board white,
/// board black); objects follow.
const SURFACE_IDS: usize = 7;

impl Ctx<'_> {
    /// One ray through image point (x, y): its colour and the id of the surface it met.
    fn sample(&self, cam: &Camera, x: f64, y: f64, near: &Near, cands: &mut Vec<usize>) -> (Rgb3, u32) {
        cands.clear();
        cands.extend(near.candidates.iter().copied().filter(|&k| {
            let b = &self.objs[k].bbox;
            x >= b[0] && x <= b[2] && y >= b[1] && y <= b[3]
        }));
        let Some(d) = cam.ray_dir(PixelPoint::new(x, y)) else { return ([0.0; 3], 0) };
        let (_, hit) = self.trace(self.eye, d, cands);
        let id = match hit {
            Hit::Nothing => 0,
            Hit::Table(_) => 1,
            Hit::MatSide(_) => 2,
            Hit::Mat(p) => {
                if self.on_paint(p) {
                    4
                } else {
                    3
                }
            }
            Hit::Board(_, black) => 5 + u32::from(black),
            Hit::Object(k, _) => (SURFACE_IDS + k) as u32,
        };
        (self.shade(hit, d, near), id)
    }

    fn on_paint(&self, p: Point3<f64>) -> bool {
        let mat = &self.scene.mat;
        mat.baselines.is_some_and(|(_, width)| mat.spec.baselines().iter().any(|b| b.depth_behind(MatPoint::new(p.x, p.y)).abs() <= width / 2.0))
    }

    /// The objects that matter for the tile of pixels [x0, x1) × [y0, y1).
    fn near(&self, cam: &Camera, x0: usize, y0: usize, x1: usize, y1: usize) -> Near {
        let (fx0, fy0, fx1, fy1) = (x0 as f64 - 1.0, y0 as f64 - 1.0, x1 as f64, y1 as f64);
        let candidates = self
            .objs
            .iter()
            .enumerate()
            .filter(|(_, o)| o.bbox[0] <= fx1 && o.bbox[2] >= fx0 && o.bbox[1] <= fy1 && o.bbox[3] >= fy0)
            .map(|(k, _)| k)
            .collect();
        // Where the tile lands on the mat's plane: a box round its corners' and centre's rays.
        let mut lo = MatPoint::new(f64::INFINITY, f64::INFINITY);
        let mut hi = MatPoint::new(f64::NEG_INFINITY, f64::NEG_INFINITY);
        let mut any = false;
        for (x, y) in [(fx0, fy0), (fx1, fy0), (fx0, fy1), (fx1, fy1), ((fx0 + fx1) / 2.0, (fy0 + fy1) / 2.0)] {
            if let Some(p) = cam.unproject_to_plane(PixelPoint::new(x, y), 0.0) {
                lo = MatPoint::new(lo.x.min(p.x), lo.y.min(p.y));
                hi = MatPoint::new(hi.x.max(p.x), hi.y.max(p.y));
                any = true;
            }
        }
        if !any {
            return Near { candidates, ..Near::default() };
        }
        // Lens distortion bends the tile's edges a little: widen the box.
        let pad = 0.1 * (hi.x - lo.x).max(hi.y - lo.y) + 2.0;
        let (lo, hi) = (MatPoint::new(lo.x - pad, lo.y - pad), MatPoint::new(hi.x + pad, hi.y + pad));
        let box_dist = |c: MatPoint| {
            let dx = (lo.x - c.x).max(0.0).max(c.x - hi.x);
            let dy = (lo.y - c.y).max(0.0).max(c.y - hi.y);
            (dx * dx + dy * dy).sqrt()
        };
        let shadows = self.objs.iter().enumerate().filter(|(_, o)| box_dist(o.shadow.0) <= o.shadow.1).map(|(k, _)| k).collect();
        let contacts = self
            .objs
            .iter()
            .enumerate()
            .filter(|(_, o)| matches!(o.body, Body::Wink(_) | Body::Squidger(_) | Body::Pot) && box_dist(MatPoint::new(o.centre.x, o.centre.y)) <= o.radius + 12.0)
            .map(|(k, _)| k)
            .collect();
        Near { candidates, shadows, contacts }
    }
}
