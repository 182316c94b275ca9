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
    draw_legend(&mut img, &[calibration_legend(cal)], scale, &|r| mat_share(cal, r));
    Ok(img)
}

/// The calibration overlay's legend: the fit, the camera, and any baseline found painted off its
/// place (rule 2.3.1; drawn where it is).
fn calibration_legend(cal: &Calibration) -> String {
    let mut legend = format!("mat fit RMS {:.2} px, {} edge + {} baseline points, +x by {:?}", cal.rms_px, cal.edge_points, cal.baseline_points, cal.orientation);
    if let Some(cam) = &cal.camera {
        legend.push_str(&format!("; camera {:.0} mm up, {:.1} deg off vertical", cam.height_mm(), cam.tilt_deg));
    }
    if cal.baselines_found.iter().flatten().any(|d| *d != 0.0) {
        let each: Vec<String> = cal.baselines_found.iter().map(|o| o.map_or("-".into(), |d| format!("{d:+.1}"))).collect();
        legend.push_str(&format!("; baselines painted {} mm off their place", each.join(" / ")));
    }
    if cal.blue_corner != crate::geometry::Corner::NegXPosY {
        // The colours start a quarter turn (or, with the frame's corners given, some turn) from
        // where a mat frame with blue at (−X,+Y) has them (rule 5.2 fixes only their order).
        legend.push_str(&format!("; blue starts at {}", cal.blue_corner));
    }
    legend
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

/// Lines of text on a darkened panel at the corner (or the middle of the top or bottom edge) of
/// the frame where `hides` (the cost of covering a rectangle `x0, y0, x1, y1`) is least; lines
/// longer than 40% of the frame's width are wrapped.
fn draw_legend(img: &mut RgbImage, lines: &[String], scale: f32, hides: &dyn Fn([f64; 4]) -> f64) {
    let size = 14.0 * scale;
    let line_h = (size * 1.3) as u32;
    let width = ((img.width() as f32 * 0.4) as u32).max(200);
    let lines: Vec<String> = lines.iter().flat_map(|l| draw::wrap(l, size, width)).collect();
    let tw = lines.iter().map(|l| draw::text_extent(size, l).0).max().unwrap_or(0);
    let (pw, ph) = ((tw + 16).min(img.width()), (line_h * lines.len() as u32 + 12).min(img.height()));
    let (w, h) = (img.width(), img.height());
    let places = [(0, 0), (w - pw, 0), (0, h - ph), (w - pw, h - ph), ((w - pw) / 2, 0), ((w - pw) / 2, h - ph)];
    let (x0, y0) = places
        .into_iter()
        .map(|(x, y)| ((x, y), hides([x as f64, y as f64, (x + pw) as f64, (y + ph) as f64])))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or((0, 0), |(c, _)| c);
    for y in y0..y0 + ph {
        for x in x0..x0 + pw {
            let p = img.get_pixel_mut(x, y);
            *p = Rgb([p[0] / 3, p[1] / 3, p[2] / 3]);
        }
    }
    for (k, l) in lines.iter().enumerate() {
        draw::text(img, x0 as i32 + 8, y0 as i32 + 6 + (k as u32 * line_h) as i32, size, Rgb([255, 255, 255]), l);
    }
}

/// The share of a rectangle of the frame (`x0, y0, x1, y1`) that shows the mat, from a grid of
/// points in it.
fn mat_share(cal: &Calibration, r: [f64; 4]) -> f64 {
    let outline = cal.mat.outline();
    let (nx, ny) = (12, 6);
    let mut inside = 0;
    for i in 0..nx {
        for j in 0..ny {
            let p = crate::geometry::PixelPoint::new(r[0] + (r[2] - r[0]) * (i as f64 + 0.5) / nx as f64, r[1] + (r[3] - r[1]) * (j as f64 + 0.5) / ny as f64);
            if cal.image_to_mat(p).is_some_and(|m| outline.contains_disc(m, 0.0)) {
                inside += 1;
            }
        }
    }
    inside as f64 / (nx * ny) as f64
}

/// White text with a dark shadow a pixel down and right, legible on felt, winks and table alike.
fn shadowed_text(img: &mut RgbImage, at: (i32, i32), size_px: f32, s: &str) {
    shadowed_text_in(img, at, size_px, Rgb([255, 255, 255]), s);
}

/// As [`shadowed_text`], in `colour`.
fn shadowed_text_in(img: &mut RgbImage, (x, y): (i32, i32), size_px: f32, colour: Rgb<u8>, s: &str) {
    draw::text(img, x + 1, y + 1, size_px, Rgb([0, 0, 0]), s);
    draw::text(img, x, y, size_px, colour, s);
}

/// Amber, for a squop the position is not sure of.
const UNSURE_RGB: Rgb<u8> = Rgb([255, 176, 0]);

/// A squop arrow's colour and the mark after its margin: white and nothing for a squop given at
/// least [`crate::rules::SURE_SQUOP`] (or no confidence), amber and " ?" below it.
fn squop_mark(confidence: Option<f64>) -> (Rgb<u8>, &'static str) {
    if confidence.is_some_and(|c| c < crate::rules::SURE_SQUOP) {
        (UNSURE_RGB, " ?")
    } else {
        (Rgb([255, 255, 255]), "")
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
        if f.state == WinkState::Potted {
            // Labelled together below: winks in the pot lie within a few pixels of each other.
            continue;
        }
        let label = if mark.is_empty() { f.id.clone() } else { format!("{} {mark}", f.id) };
        let at = ((c.0 + f.radius_px as f32 + 3.0 * scale) as i32, (c.1 - 6.0 * scale) as i32);
        shadowed_text(&mut img, at, 12.0 * scale, &label);
    }
    // The winks in the pot: one label beside them, their ids in a column.
    let potted: Vec<&crate::detect::Found> = analysis.detections.found.iter().filter(|f| f.state == WinkState::Potted).collect();
    if let Some(right) = potted.iter().map(|f| (f.centre_px.x + f.radius_px) as f32).reduce(f32::max) {
        let top = potted.iter().map(|f| (f.centre_px.y - f.radius_px) as f32).fold(f32::INFINITY, f32::min);
        let at = (right + 4.0 * scale, top - 6.0 * scale);
        let rows = std::iter::once("in the pot:".to_string()).chain(potted.iter().map(|f| format!("{} {} {}", f.id, f.colour, f.size.name())));
        for (k, row) in rows.enumerate() {
            shadowed_text(&mut img, (at.0 as i32, (at.1 + k as f32 * 11.0 * scale) as i32), 10.0 * scale, &row);
        }
    }
    // The squops not sure, with where they meet, for the legend.
    let mut unsure = Vec::new();
    for s in &pos.squops {
        let (Some(u), Some(l)) = (by_id(&s.upper), by_id(&s.lower)) else { continue };
        let (a, b) = ((u.centre_px.x as f32, u.centre_px.y as f32), (l.centre_px.x as f32, l.centre_px.y as f32));
        let (colour, mark) = squop_mark(s.confidence);
        let mid = ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0);
        if !mark.is_empty() {
            unsure.push(format!("{} over {} at {:.0},{:.0}", s.upper, s.lower, mid.0, mid.1));
        }
        draw::arrow(&mut img, a, b, 1.5 * scale, 5.0 * scale, colour);
        if let Some(m) = s.margin_mm {
            shadowed_text_in(&mut img, ((mid.0 - 30.0 * scale) as i32, (mid.1 + 4.0 * scale) as i32), 11.0 * scale, colour, &format!("{m:.1} mm{mark}"));
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
        // A wink at the line: ringed in amber, as a squop not sure is.
        if let FlagDetail::NearLine { .. } = flag.detail {
            let Some(f) = flag.winks.first().and_then(|id| by_id(id)) else { continue };
            draw::dashed_ring(&mut img, (f.centre_px.x as f32, f.centre_px.y as f32), f.radius_px as f32 + 4.0 * scale, 1.2 * scale, UNSURE_RGB);
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
    if !unsure.is_empty() {
        lines.push(format!("not sure (amber, ?), for a second look with winkeye umpire --near X,Y: {}", unsure.join("; ")));
    }
    for flag in pos.flags.iter().filter(|f| !matches!(f.detail, FlagDetail::Squop { .. })).take(6) {
        lines.push(format!("[{}] {}", flag.rule, flag.text));
    }
    // The legend where it hides the fewest winks, then the least of the mat.
    let winks: Vec<(f64, f64, f64)> = analysis.detections.found.iter().map(|f| (f.centre_px.x, f.centre_px.y, f.radius_px + 20.0 * scale as f64)).collect();
    let hides = |r: [f64; 4]| {
        let covered = winks.iter().filter(|&&(x, y, rr)| x + rr > r[0] && x - rr < r[2] && y + rr > r[1] && y - rr < r[3]).count();
        covered as f64 + mat_share(cal, r)
    };
    draw_legend(&mut img, &lines, scale, &hides);
    Ok(img)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calibration_legend_says_which_baselines_are_painted_off_their_place() {
        let mut cal = crate::detect::template::tests::overhead();
        assert!(!calibration_legend(&cal).contains("baselines painted"));
        // Seen in place (held there) or not seen: nothing to say.
        cal.baselines_found = [Some(0.0), None, Some(0.0), None];
        assert!(!calibration_legend(&cal).contains("baselines painted"));
        cal.baselines_found = [Some(4.04), None, Some(0.0), Some(-2.96)];
        assert!(calibration_legend(&cal).ends_with("; baselines painted +4.0 / - / +0.0 / -3.0 mm off their place"), "{}", calibration_legend(&cal));
    }

    #[test]
    fn a_squop_not_sure_is_drawn_amber_with_a_question_mark() {
        assert_eq!(squop_mark(Some(0.6)), (UNSURE_RGB, " ?"));
        assert_eq!(squop_mark(Some(0.99)).1, "");
        // A squop typed in by hand, with no confidence, is taken as given.
        assert_eq!(squop_mark(None).1, "");
    }

    #[test]
    fn the_legend_goes_where_it_hides_least() {
        // A grey frame; covering anything left of the middle costs, so the panel goes right.
        let mut img = RgbImage::from_pixel(800, 450, Rgb([150, 150, 150]));
        let lines = vec!["21 winks seen, 8 squops".to_string(), "score if the game ended now: 3–4".to_string()];
        draw_legend(&mut img, &lines, 1.0, &|r| if r[0] < 400.0 { 1.0 } else { 0.0 });
        let darkened = |x: u32, y: u32| img.get_pixel(x, y)[0] < 100;
        assert!(!darkened(2, 2) && !darkened(2, 447), "nothing drawn at the left");
        assert!(darkened(797, 2) || darkened(797, 447), "the panel is at a right-hand corner");
        // A line longer than 40% of the frame is wrapped: the panel stays within 45% of it.
        let mut img = RgbImage::from_pixel(800, 450, Rgb([150, 150, 150]));
        let long = vec!["[13.1] w4 went off: replace it flat 22 mm in from the edge, at least 10 cm from every other wink".to_string()];
        draw_legend(&mut img, &long, 1.0, &|_| 0.0);
        let widest = (0..800).rev().find(|&x| img.get_pixel(x, 5)[0] < 100).unwrap_or(0);
        assert!(widest < 360, "panel {widest} px wide");
    }
}
