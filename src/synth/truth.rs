//! The truth document of a rendered scene: every wink with its exact image and mat positions,
//! state and level, every squop with its exact margin, the camera, and the rules applied.

use super::render::Effects;
use super::scene::{Scene, WinkBody};
use crate::geometry::{Camera, MatPoint};
use crate::report::position::{CalibrationInfo, Position, Source, Squop, Wink, WinkState};
use crate::rules::{self, Ruleset};
use nalgebra::{Point3, Vector3};
use serde_json::{json, Map};

/// Overlap depth of two winks' footprints along the line joining their centres, in mm
/// (negative: the gap between them).
pub fn footprint_margin(a: &WinkBody, b: &WinkBody) -> f64 {
    let (ca, cb) = (a.disc.footprint_centre(), b.disc.footprint_centre());
    let d = ca.distance(cb);
    if d < 1e-9 {
        return a.disc.radius_mm + b.disc.radius_mm;
    }
    let u = (cb - ca) * (1.0 / d);
    a.disc.support_mm(u) + b.disc.support_mm(u * -1.0) - d
}

/// Area of a wink's outline in the image if nothing covered it, in px².
fn projected_area(cam: &Camera, w: &WinkBody) -> f64 {
    let n = w.disc.normal;
    let e1 = n.cross(&Vector3::x()).try_normalize(1e-9).unwrap_or_else(|| n.cross(&Vector3::y()).normalize());
    let e2 = n.cross(&e1);
    let c = w.disc.top_centre();
    let pts: Vec<(f64, f64)> = (0..64)
        .filter_map(|k| {
            let a = k as f64 / 64.0 * std::f64::consts::TAU;
            cam.project(c + (e1 * a.cos() + e2 * a.sin()) * w.disc.radius_mm).map(|p| (p.x, p.y))
        })
        .collect();
    let m = pts.len();
    (0..m).map(|i| pts[i].0 * pts[(i + 1) % m].1 - pts[(i + 1) % m].0 * pts[i].1).sum::<f64>().abs() / 2.0
}

/// What went into the scene beyond its winks, for the truth document.
pub struct Provenance<'a> {
    /// The scene kind's name.
    pub kind: &'a str,
    /// The seed.
    pub seed: u64,
    /// The camera's effects.
    pub effects: &'a Effects,
    /// The image file's name, for `source.path`.
    pub path: Option<String>,
    /// How the picture was drawn.
    pub style: super::Style,
    /// The range the winks' diameters were drawn from, as shares of their nominal ones.
    pub wink_share: (f64, f64),
    /// The corner blue's unplayed winks lie behind.
    pub blue_corner: crate::geometry::Corner,
}

/// The truth position document: winks, squops (computed from the geometry), the calibration as
/// truth, and the rules' flags and score.
pub fn truth(scene: &Scene, cam: &Camera, visible_px: &[f64], ruleset: Ruleset, prov: &Provenance<'_>) -> Result<Position, crate::report::PositionError> {
    let field = ruleset.spec().field_on(&scene.mat.spec);
    let mut winks = Vec::new();
    for (i, w) in scene.winks.iter().enumerate() {
        let fp = w.disc.footprint_centre();
        let reach = (0..16)
            .map(|k| {
                let a = k as f64 / 16.0 * std::f64::consts::TAU;
                w.disc.support_mm(MatPoint::new(a.cos(), a.sin()))
            })
            .fold(0.0, f64::max);
        let state = match w.state {
            WinkState::InPlay if !field.contains_disc(fp, reach) => WinkState::Off,
            s => s,
        };
        let area = projected_area(cam, w);
        let visible = if area > 0.0 { (visible_px.get(i).copied().unwrap_or(0.0) / area).min(1.0) } else { 0.0 };
        let mut extra = Map::new();
        extra.insert("visible_fraction".into(), json!(crate::report::round3(visible)));
        extra.insert("tilt_deg".into(), json!(w.disc.normal.z.clamp(-1.0, 1.0).acos().to_degrees()));
        extra.insert("top_z_mm".into(), json!(w.disc.top_centre().z));
        winks.push(Wink {
            id: w.id.clone(),
            colour: w.colour,
            size: w.size,
            diameter_mm: Some(w.disc.radius_mm * 2.0),
            centre_px: cam.project(w.disc.top_centre()),
            centre_mm: Some(fp),
            level: Some(w.level),
            state,
            confidence: Some(1.0),
            left_mm: None,
            extra,
        });
    }
    let mut squops = Vec::new();
    for (i, a) in scene.winks.iter().enumerate() {
        for b in scene.winks.iter().skip(i + 1) {
            if a.state == WinkState::Potted || b.state == WinkState::Potted {
                continue;
            }
            let m = footprint_margin(a, b);
            if m <= 0.0 {
                continue;
            }
            let a_up = (a.level, a.disc.centre.z) > (b.level, b.disc.centre.z);
            let (u, l) = if a_up { (a, b) } else { (b, a) };
            squops.push(Squop { upper: u.id.clone(), lower: l.id.clone(), margin_mm: Some(m), confidence: Some(1.0), extra: Map::new() });
        }
    }
    let corners = scene.mat.spec.corners().map(|c| cam.project(Point3::new(c.x, c.y, 0.0)));
    let mat_corners_px = match corners {
        [Some(a), Some(b), Some(c), Some(d)] => Some([a, b, c, d]),
        _ => None,
    };
    let mut extra = Map::new();
    let mut about = json!({
            "generator": concat!("winkeye synth ", env!("CARGO_PKG_VERSION")),
            "kind": prov.kind,
            "seed": prov.seed,
            "camera": cam,
            "effects": prov.effects,
            "mat": {"length_mm": scene.mat.spec.length_mm, "width_mm": scene.mat.spec.width_mm,
                    "baselines": scene.mat.baselines.is_some(), "thickness_mm": scene.mat.thickness_mm},
            "hands": scene.hands.len(),
            "squidgers": scene.squidgers.len(),
            "pot_rim_centre_px": scene.pot.as_ref().and_then(|p| cam.project(Point3::new(0.0, 0.0, p.spec.height_mm))),
    });
    if prov.style == super::Style::Flat {
        about["style"] = json!("flat");
    }
    if prov.wink_share != super::layout::WINK_SHARE {
        about["wink_share"] = json!([prov.wink_share.0, prov.wink_share.1]);
    }
    if prov.blue_corner != crate::geometry::Corner::NegXPosY {
        about["blue_corner"] = json!(prov.blue_corner);
    }
    extra.insert("truth".into(), about);
    let raw = Position {
        source: Some(Source { path: prov.path.clone(), width: Some(cam.width), height: Some(cam.height), frame: None, t_s: None, extra: Map::new() }),
        ruleset: Some(ruleset.name().into()),
        calibration: Some(CalibrationInfo {
            mat_corners_px,
            pot_centre_px: cam.project(Point3::new(0.0, 0.0, 0.0)),
            rms_px: Some(0.0),
            // Baselines painted off their place (`synth --baselines-off`): where they are.
            baselines_found_mm: (scene.mat.baselines.is_some() && scene.mat.spec.painted_offsets_mm != [0.0; 4]).then(|| scene.mat.spec.painted_offsets_mm.map(Some)),
            extra: Map::new(),
        }),
        extra,
        ..Position::of_winks(winks, squops)
    };
    rules::apply(&raw, ruleset)
}
