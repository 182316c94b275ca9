//! Pictures drawn over a frame: what calibration found, and what the referee sees.

use super::diagram::wink_rgb;
use super::draw;
use super::position::{FlagDetail, WinkState};
use crate::analyze::Analysis;
use crate::calibrate::{Calibration, CalibrateError};
use crate::geometry::MatPoint;
use image::{Rgb, RgbImage};
use opencv::core::Mat;

const OUTLINE: Rgb<u8> = Rgb([255, 40, 200]);
const BASELINE: Rgb<u8> = Rgb([40, 230, 255]);

/// The frame with the fitted mat outline, baselines, corners, the mat's centre and a legend.
pub fn calibration_overlay(bgr: &Mat, cal: &Calibration) -> Result<RgbImage, CalibrateError> {
    let mut img = crate::synth::effects::from_bgr_mat(bgr)?;
    let scale = (img.width().max(img.height()) as f32 / 1000.0).max(1.0);
    draw_mat(&mut img, cal, scale);
    for (k, p) in cal.corners_px.iter().enumerate() {
        draw::ring(&mut img, (p.x as f32, p.y as f32), 8.0 * scale, 2.0 * scale, OUTLINE);
        let label = ["(−X,+Y)", "(+X,+Y)", "(+X,−Y)", "(−X,−Y)"][k];
        draw::text(&mut img, (p.x as f32 + 10.0 * scale) as i32, (p.y as f32 + 6.0 * scale) as i32, 14.0 * scale, OUTLINE, label);
    }
    // The +x axis from the centre.
    if let (Some(o), Some(x)) = (cal.mat_to_image(MatPoint::new(0.0, 0.0)), cal.mat_to_image(MatPoint::new(150.0, 0.0))) {
        draw::arrow(&mut img, (o.x as f32, o.y as f32), (x.x as f32, x.y as f32), 2.0 * scale, 10.0 * scale, OUTLINE);
        draw::text(&mut img, (x.x as f32 + 4.0) as i32, (x.y as f32 - 8.0 * scale) as i32, 14.0 * scale, OUTLINE, "+x");
    }
    let mut legend = format!("mat fit RMS {:.2} px, {} edge + {} baseline points, +x by {:?}", cal.rms_px, cal.edge_points, cal.baseline_points, cal.orientation);
    if let Some(cam) = &cal.camera {
        legend.push_str(&format!("; camera {:.0} mm up, {:.1} deg off vertical", cam.height_mm(), cam.tilt_deg));
    }
    draw_legend(&mut img, &[legend], scale);
    Ok(img)
}

/// The mat's outline and baselines as the calibration puts them.
fn draw_mat(img: &mut RgbImage, cal: &Calibration, scale: f32) {
    let curve = |img: &mut RgbImage, a: MatPoint, b: MatPoint, colour: Rgb<u8>| {
        let n = 64;
        for i in 0..n {
            let p = a + (b - a) * (i as f64 / n as f64);
            let q = a + (b - a) * ((i + 1) as f64 / n as f64);
            if let (Some(p), Some(q)) = (cal.mat_to_image(p), cal.mat_to_image(q)) {
                draw::thick_line(img, (p.x as f32, p.y as f32), (q.x as f32, q.y as f32), 1.5 * scale, colour);
            }
        }
    };
    let c = cal.mat.corners();
    for k in 0..4 {
        curve(img, c[k], c[(k + 1) % 4], OUTLINE);
    }
    for b in cal.mat.baselines() {
        curve(img, b.segment.a, b.segment.b, BASELINE);
    }
}

/// Lines of text on a darkened band at the top left.
fn draw_legend(img: &mut RgbImage, lines: &[String], scale: f32) {
    let size = 16.0 * scale;
    let line_h = (size * 1.3) as u32;
    let tw = lines.iter().map(|l| draw::text_extent(size, l).0).max().unwrap_or(0);
    for y in 0..(line_h * lines.len() as u32 + 12).min(img.height()) {
        for x in 0..(tw + 16).min(img.width()) {
            let p = img.get_pixel_mut(x, y);
            *p = Rgb([p[0] / 3, p[1] / 3, p[2] / 3]);
        }
    }
    for (k, l) in lines.iter().enumerate() {
        draw::text(img, 8, 6 + (k as u32 * line_h) as i32, size, Rgb([255, 255, 255]), l);
    }
}

/// The frame with what the referee sees: each wink's fitted outline in its colour with its id and
/// state, squop arrows from upper to lower with the margin, piles ringed, the spots where winks
/// that went off are to be replaced, the mat and baselines as found, and a legend.
pub fn position_overlay(bgr: &Mat, analysis: &Analysis) -> Result<RgbImage, CalibrateError> {
    let cal = &analysis.calibration;
    let pos = &analysis.position;
    let mut img = crate::synth::effects::from_bgr_mat(bgr)?;
    let scale = (img.width().max(img.height()) as f32 / 1000.0).max(1.0);
    draw_mat(&mut img, cal, scale);
    let white = Rgb([255, 255, 255]);
    let dark = Rgb([0, 0, 0]);
    let by_id = |id: &str| analysis.detections.found.iter().find(|f| f.id == id);
    for f in &analysis.detections.found {
        let colour = wink_rgb(f.colour);
        let c = (f.centre_px.x as f32, f.centre_px.y as f32);
        match (f.centre_mm, f.radius_mm) {
            (Some(centre), Some(r)) => {
                // The footprint's outline at rim height, as the camera sees it.
                let pts: Vec<(f32, f32)> = (0..=48)
                    .filter_map(|k| {
                        let a = k as f64 / 48.0 * std::f64::consts::TAU;
                        let u = MatPoint::new(a.cos(), a.sin());
                        let h = f.rest.rim_mid_height(centre, r, u);
                        cal.mat_to_image_at(centre + u * r, h).map(|p| (p.x as f32, p.y as f32))
                    })
                    .collect();
                for w in pts.windows(2) {
                    draw::thick_line(&mut img, w[0], w[1], 2.2 * scale, dark);
                }
                for w in pts.windows(2) {
                    draw::thick_line(&mut img, w[0], w[1], 1.0 * scale, colour);
                }
            }
            _ => draw::dashed_ring(&mut img, c, f.radius_px as f32, 1.0 * scale, colour),
        }
        let mark = match f.state {
            WinkState::Unplayed => "U",
            WinkState::InPlay => "",
            WinkState::Off => "OFF",
            WinkState::Potted => "P",
        };
        let label = if mark.is_empty() { f.id.clone() } else { format!("{} {mark}", f.id) };
        let at = ((c.0 + f.radius_px as f32 + 3.0 * scale) as i32, (c.1 - 6.0 * scale) as i32);
        draw::text(&mut img, at.0 + 1, at.1 + 1, 12.0 * scale, dark, &label);
        draw::text(&mut img, at.0, at.1, 12.0 * scale, white, &label);
    }
    for s in &pos.squops {
        let (Some(u), Some(l)) = (by_id(&s.upper), by_id(&s.lower)) else { continue };
        let (a, b) = ((u.centre_px.x as f32, u.centre_px.y as f32), (l.centre_px.x as f32, l.centre_px.y as f32));
        draw::arrow(&mut img, a, b, 1.5 * scale, 5.0 * scale, white);
        if let Some(m) = s.margin_mm {
            let mid = ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0);
            draw::text(&mut img, (mid.0 - 30.0 * scale) as i32, (mid.1 + 4.0 * scale) as i32, 11.0 * scale, white, &format!("{m:.1} mm"));
        }
    }
    for pile in pos.piles.iter().filter(|p| p.len() >= 2) {
        let members: Vec<_> = pile.iter().filter_map(|id| by_id(id)).collect();
        if members.is_empty() {
            continue;
        }
        let n = members.len() as f32;
        let c = members.iter().fold((0.0, 0.0), |a, f| (a.0 + f.centre_px.x as f32 / n, a.1 + f.centre_px.y as f32 / n));
        let r = members.iter().map(|f| ((f.centre_px.x as f32 - c.0).hypot(f.centre_px.y as f32 - c.1)) + f.radius_px as f32).fold(0.0, f32::max);
        draw::dashed_ring(&mut img, c, r + 5.0 * scale, 1.2 * scale, white);
    }
    for flag in &pos.flags {
        if let FlagDetail::Off { replacement_mm: Some(to), .. } = &flag.detail {
            let Some(f) = flag.winks.first().and_then(|id| by_id(id)) else { continue };
            let Some(p) = cal.mat_to_image(*to) else { continue };
            let spot = (p.x as f32, p.y as f32);
            draw::dashed_ring(&mut img, spot, f.radius_px as f32, 1.2 * scale, wink_rgb(f.colour));
            draw::arrow(&mut img, (f.centre_px.x as f32, f.centre_px.y as f32), spot, 1.0 * scale, 5.0 * scale, wink_rgb(f.colour));
            draw::text(&mut img, (spot.0 + f.radius_px as f32 + 3.0) as i32, spot.1 as i32, 11.0 * scale, white, &format!("{} goes here (13.1)", f.id));
        }
    }
    let mut lines = Vec::new();
    let counts: Vec<String> = pos
        .counts
        .iter()
        .flat_map(|c| c.iter())
        .map(|(colour, n)| format!("{colour} {}/{}/{}/{}", n.unplayed, n.in_play, n.off, n.potted))
        .collect();
    lines.push(format!("{} winks seen, {} squops; unplayed/in play/off/potted: {}", analysis.detections.found.len(), pos.squops.len(), counts.join(", ")));
    if let Some(score) = &pos.score {
        let parts: Vec<String> = score.game_score.iter().map(|(p, v)| format!("{} {}", p.label(), crate::rules::score::format_points(*v))).collect();
        lines.push(format!("score if the game ended now: {}", parts.join(", ")));
    }
    for flag in pos.flags.iter().filter(|f| !matches!(f.detail, FlagDetail::Squop { .. })).take(6) {
        lines.push(format!("[{}] {}", flag.rule, flag.text));
    }
    draw_legend(&mut img, &lines, scale);
    Ok(img)
}
