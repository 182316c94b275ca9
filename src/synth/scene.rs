//! What a synthetic scene holds, in the mat frame (mm, z up from the mat's surface): the mat and
//! table, the pot, the winks as solid bodies, squidgers, hands and the lamp; and the signed
//! distance functions the renderer traces.

use crate::geometry::{MatPoint, MatSpec, PotSpec};
use crate::report::position::{Colour, WinkSize, WinkState};
use nalgebra::{Point3, Vector3};

/// A linear-light RGB triple, each channel 0–1.
pub type Rgb3 = [f64; 3];

/// How a surface reflects light.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Material {
    /// Diffuse colour.
    pub albedo: Rgb3,
    /// Strength of the specular highlight (0: matte).
    pub specular: f64,
    /// Blinn–Phong exponent: higher is a smaller, sharper highlight.
    pub shininess: f64,
}

/// The mat's look.
#[derive(Debug, Clone, PartialEq)]
pub struct MatLook {
    /// Size and baselines.
    pub spec: MatSpec,
    /// Felt colour.
    pub felt: Rgb3,
    /// Felt texture strength at the fine, middle and coarse scales.
    pub texture: [f64; 3],
    /// Painted baselines: colour and width in mm; `None` for a mat without baselines.
    pub baselines: Option<(Rgb3, f64)>,
    /// Thickness of the mat above the table, in mm.
    pub thickness_mm: f64,
    /// Seed of the felt texture.
    pub seed: u64,
}

/// A disc-shaped body: a wink or a squidger, a cylinder with rounded edges.
#[derive(Debug, Clone, PartialEq)]
pub struct Disc {
    /// Centre of the solid, in mm.
    pub centre: Point3<f64>,
    /// Unit axis (the top face's normal).
    pub normal: Vector3<f64>,
    /// Radius, in mm.
    pub radius_mm: f64,
    /// Thickness, in mm.
    pub thickness_mm: f64,
    /// Radius of the rounding of the edges, in mm.
    pub edge_mm: f64,
    /// Surface.
    pub material: Material,
}

impl Disc {
    /// Signed distance from `p` to the disc's surface (negative inside), in mm.
    pub fn sdf(&self, p: Point3<f64>) -> f64 {
        let q = p - self.centre;
        let along = q.dot(&self.normal);
        let radial = (q - self.normal * along).norm();
        // A rounded cylinder: a rectangle in (radial, along) with rounded corners, revolved.
        let rb = self.edge_mm.min(self.thickness_mm / 2.0);
        let dx = radial - (self.radius_mm - rb);
        let dy = along.abs() - (self.thickness_mm / 2.0 - rb);
        let outside = (dx.max(0.0).powi(2) + dy.max(0.0).powi(2)).sqrt();
        dx.max(dy).min(0.0) + outside - rb
    }

    /// The centre of the top face.
    pub fn top_centre(&self) -> Point3<f64> {
        self.centre + self.normal * (self.thickness_mm / 2.0)
    }

    /// The centre of the footprint (the vertical projection of the solid), in mm.
    pub fn footprint_centre(&self) -> MatPoint {
        MatPoint::new(self.centre.x, self.centre.y)
    }

    /// How far the footprint reaches from its centre in the horizontal direction `u` (unit), in mm:
    /// a tilted circle projects to an ellipse, and the thickness adds a little along the tilt.
    pub fn support_mm(&self, u: MatPoint) -> f64 {
        let nu = self.normal.x * u.x + self.normal.y * u.y;
        self.radius_mm * (1.0 - nu * nu).max(0.0).sqrt() + self.thickness_mm / 2.0 * nu.abs()
    }

    /// Height of the top face's plane above the point (x, y), in mm.
    pub fn top_height_at(&self, x: f64, y: f64) -> f64 {
        let t = self.top_centre();
        let n = self.normal;
        t.z - (n.x * (x - t.x) + n.y * (y - t.y)) / n.z
    }

    /// Radius of a sphere about `centre` that holds the whole disc.
    pub fn bound_radius(&self) -> f64 {
        self.radius_mm.hypot(self.thickness_mm / 2.0) + 0.01
    }
}

/// A wink in the scene, with what the truth document needs to know about it.
#[derive(Debug, Clone, PartialEq)]
pub struct WinkBody {
    /// The truth document's id.
    pub id: String,
    /// Colour.
    pub colour: Colour,
    /// Size class.
    pub size: WinkSize,
    /// The solid.
    pub disc: Disc,
    /// Its state, by construction.
    pub state: WinkState,
    /// 0 on the mat (or table, or pot floor), one more than the wink it rests on otherwise.
    pub level: u32,
}

/// The pot: a concave-sided cup standing on the mat's centre.
#[derive(Debug, Clone, PartialEq)]
pub struct PotBody {
    /// Its dimensions.
    pub spec: PotSpec,
    /// Wall thickness, in mm.
    pub wall_mm: f64,
    /// Thickness of its base, in mm (the inside floor's height).
    pub floor_mm: f64,
    /// Surface.
    pub material: Material,
}

/// Samples along the pot's wall profile.
const POT_PROFILE_STEPS: usize = 12;

impl PotBody {
    /// Outer radius at height z (0 ≤ z ≤ height): concave sides, flaring towards the rim.
    pub fn outer_radius(&self, z: f64) -> f64 {
        let (rb, rt, h) = (self.spec.base_diameter_mm / 2.0, self.spec.top_diameter_mm / 2.0, self.spec.height_mm);
        let s = (z / h).clamp(0.0, 1.0);
        rb + (rt - rb) * s * s
    }

    /// Signed distance to the pot's surface, in mm (negative inside the plastic).
    pub fn sdf(&self, p: Point3<f64>) -> f64 {
        let rho = (p.x * p.x + p.y * p.y).sqrt();
        let h = self.spec.height_mm;
        // The wall: a thick curve in the (radius, height) half-plane, its mid-line inset by half
        // the wall's thickness from the outer surface.
        let mut wall = f64::INFINITY;
        let mid = |z: f64| self.outer_radius(z) - self.wall_mm / 2.0;
        let mut prev = (mid(0.0), 0.0);
        for i in 1..=POT_PROFILE_STEPS {
            let z = h * i as f64 / POT_PROFILE_STEPS as f64;
            let cur = (mid(z), z);
            wall = wall.min(seg_dist((rho, p.z), prev, cur));
            prev = cur;
        }
        let wall = wall - self.wall_mm / 2.0;
        // The base: a flat disc from the mat to the inside floor.
        let base_r = self.outer_radius(0.0);
        let dx = rho - base_r;
        let dz = (p.z - self.floor_mm / 2.0).abs() - self.floor_mm / 2.0;
        let base = (dx.max(0.0).powi(2) + dz.max(0.0).powi(2)).sqrt() + dx.max(dz).min(0.0);
        wall.min(base)
    }

    /// A sphere holding the pot: (centre, radius).
    pub fn bound(&self) -> (Point3<f64>, f64) {
        let h = self.spec.height_mm;
        let r = self.spec.top_diameter_mm / 2.0;
        (Point3::new(0.0, 0.0, h / 2.0), r.hypot(h / 2.0) + 1.0)
    }
}

fn seg_dist(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (abx, aby) = (b.0 - a.0, b.1 - a.1);
    let (apx, apy) = (p.0 - a.0, p.1 - a.1);
    let t = ((apx * abx + apy * aby) / (abx * abx + aby * aby)).clamp(0.0, 1.0);
    let (dx, dy) = (apx - abx * t, apy - aby * t);
    (dx * dx + dy * dy).sqrt()
}

/// A hand and forearm: capsules.
#[derive(Debug, Clone, PartialEq)]
pub struct Hand {
    /// Capsules as (one end, other end, radius), in mm.
    pub capsules: Vec<(Point3<f64>, Point3<f64>, f64)>,
    /// Skin.
    pub material: Material,
}

/// The lamp and the light in the room.
#[derive(Debug, Clone, PartialEq)]
pub struct Light {
    /// The lamp's position, in mm.
    pub position: Point3<f64>,
    /// Its brightness on a surface facing it (linear units).
    pub intensity: f64,
    /// Light from everywhere else.
    pub ambient: f64,
    /// Shadow sharpness: higher is harder (a smaller lamp).
    pub hardness: f64,
    /// Brightness across the mat: (gradient along x per metre, along y per metre).
    pub gradient: (f64, f64),
}

/// Everything in front of the camera.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// The mat.
    pub mat: MatLook,
    /// The table's colour.
    pub table: Rgb3,
    /// Seed of the table's grain.
    pub table_seed: u64,
    /// The pot, when there is one in view.
    pub pot: Option<PotBody>,
    /// Every wink.
    pub winks: Vec<WinkBody>,
    /// Squidgers lying about.
    pub squidgers: Vec<Disc>,
    /// Hands over the mat.
    pub hands: Vec<Hand>,
    /// The lamp.
    pub light: Light,
    /// A printed chessboard held up to the camera, for lens calibration shots.
    pub board: Option<Chessboard>,
}

/// A printed chessboard: a flat card with `cols` × `rows` inner corners and a white margin.
#[derive(Debug, Clone, PartialEq)]
pub struct Chessboard {
    /// The first inner corner, in mm.
    pub origin: Point3<f64>,
    /// Unit vector along the board's columns (its x).
    pub u: Vector3<f64>,
    /// Unit vector along its rows (its y).
    pub v: Vector3<f64>,
    /// Inner corners along x and y.
    pub inner: (u32, u32),
    /// Side of a square, in mm.
    pub square_mm: f64,
    /// White margin round the squares, in mm.
    pub margin_mm: f64,
}

impl Chessboard {
    /// Where the ray from `o` along `d` meets the card: (distance, black square?), if it does.
    pub fn hit(&self, o: Point3<f64>, d: Vector3<f64>) -> Option<(f64, bool)> {
        let n = self.u.cross(&self.v);
        let den = n.dot(&d);
        if den.abs() < 1e-12 {
            return None;
        }
        let t = n.dot(&(self.origin - o)) / den;
        if t <= 0.0 {
            return None;
        }
        let q = o + d * t - self.origin;
        // Board coordinates in squares, the first inner corner at (0, 0).
        let (x, y) = (q.dot(&self.u) / self.square_mm, q.dot(&self.v) / self.square_mm);
        let m = self.margin_mm / self.square_mm;
        let (cols, rows) = (self.inner.0 as f64, self.inner.1 as f64);
        if x < -1.0 - m || y < -1.0 - m || x > cols + m || y > rows + m {
            return None;
        }
        let on_squares = x >= -1.0 && y >= -1.0 && x < cols && y < rows;
        let black = on_squares && (x.floor() as i64 + y.floor() as i64).rem_euclid(2) == 0;
        Some((t, black))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plastic() -> Material {
        Material { albedo: [0.5, 0.5, 0.5], specular: 0.0, shininess: 1.0 }
    }

    #[test]
    fn disc_sdf_and_footprint() {
        let d = Disc {
            centre: Point3::new(0.0, 0.0, 0.75),
            normal: Vector3::z(),
            radius_mm: 8.0,
            thickness_mm: 1.5,
            edge_mm: 0.5,
            material: plastic(),
        };
        assert!((d.sdf(Point3::new(0.0, 0.0, 2.0)) - 0.5).abs() < 1e-9);
        assert!((d.sdf(Point3::new(10.0, 0.0, 0.75)) - 2.0).abs() < 1e-9);
        assert!(d.sdf(Point3::new(1.0, 1.0, 0.75)) < 0.0);
        assert!((d.support_mm(MatPoint::new(1.0, 0.0)) - 8.0).abs() < 1e-12);
        let tilted = Disc { normal: Vector3::new(0.1, 0.0, 1.0).normalize(), ..d.clone() };
        // Along the tilt: r cos θ + (t/2) sin θ.
        let th = 0.1f64.atan();
        assert!((tilted.support_mm(MatPoint::new(1.0, 0.0)) - (8.0 * th.cos() + 0.75 * th.sin())).abs() < 1e-12);
        assert!((tilted.support_mm(MatPoint::new(0.0, 1.0)) - 8.0).abs() < 1e-12);
    }

    #[test]
    fn pot_sdf_has_an_inside() {
        let pot = PotBody { spec: PotSpec::STANDARD, wall_mm: 1.2, floor_mm: 3.0, material: plastic() };
        // Inside the cup (air), above the floor: positive distance.
        assert!(pot.sdf(Point3::new(0.0, 0.0, 20.0)) > 5.0);
        // In the wall near the rim: negative.
        let r = pot.outer_radius(37.0) - 0.6;
        assert!(pot.sdf(Point3::new(r, 0.0, 37.0)) < 0.0);
        // In the base: negative.
        assert!(pot.sdf(Point3::new(0.0, 0.0, 1.5)) < 0.0);
        assert!(pot.sdf(Point3::new(40.0, 0.0, 1.0)) > 10.0);
    }
}
