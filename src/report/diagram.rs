//! A top-down plan of a position: the mat, its baselines and pot, every wink in its colour
//! (upper winks drawn over the winks they squop), and what the rules ask for (replacement spots,
//! moves), with a legend of the flags and the score. Used by `winkeye rules --diagram`.

use super::draw;
use super::position::{Colour, FlagDetail, Partnership, Position, WinkState};
use crate::geometry::{MatPoint, MatSpec, PotSpec};
use image::{imageops, Rgb, RgbImage};
use std::collections::HashMap;

/// Pixels per millimetre of the finished plan.
const SCALE_PX_PER_MM: f32 = 0.7;
/// Geometry is drawn this many times larger and shrunk at the end, which smooths every edge.
const SUPERSAMPLE: f32 = 3.0;
/// Space around the mat, in pixels of the finished plan.
const MARGIN_PX: f32 = 30.0;
/// Legend text height, in pixels.
const LEGEND_TEXT_PX: f32 = 15.0;
/// Most flag lines the legend shows before saying how many more there are.
const LEGEND_MAX_LINES: usize = 14;

const TABLE: Rgb<u8> = Rgb([74, 62, 52]);
const FELT: Rgb<u8> = Rgb([96, 122, 104]);
const FIELD_EDGE: Rgb<u8> = Rgb([150, 170, 155]);
const BASELINE: Rgb<u8> = Rgb([235, 235, 225]);
const POT: Rgb<u8> = Rgb([205, 205, 210]);
const INK: Rgb<u8> = Rgb([20, 20, 20]);
const PAPER: Rgb<u8> = Rgb([248, 247, 243]);
const WARN: Rgb<u8> = Rgb([230, 30, 30]);

/// A wink colour as drawn.
pub fn wink_rgb(c: Colour) -> Rgb<u8> {
    match c {
        Colour::Blue => Rgb([45, 95, 215]),
        Colour::Green => Rgb([35, 150, 60]),
        Colour::Red => Rgb([205, 40, 40]),
        Colour::Yellow => Rgb([240, 200, 35]),
    }
}

struct Plan {
    mat: MatSpec,
    s: f32,
}

impl Plan {
    fn px(&self, p: MatPoint) -> (f32, f32) {
        let x = (MARGIN_PX + (p.x as f32 + self.mat.length_mm as f32 / 2.0) * SCALE_PX_PER_MM) * self.s;
        let y = (MARGIN_PX + (self.mat.width_mm as f32 / 2.0 - p.y as f32) * SCALE_PX_PER_MM) * self.s;
        (x, y)
    }

    fn len(&self, mm: f64) -> f32 {
        mm as f32 * SCALE_PX_PER_MM * self.s
    }
}

/// Draws `position` on the mat `mat` with pot `pot`.
pub fn draw_position(position: &Position, mat: &MatSpec, pot: &PotSpec, nominal: &super::position::NominalDiameters) -> RgbImage {
    let plan_w = (2.0 * MARGIN_PX + mat.length_mm as f32 * SCALE_PX_PER_MM).round();
    let plan_h = (2.0 * MARGIN_PX + mat.width_mm as f32 * SCALE_PX_PER_MM).round();
    let s = SUPERSAMPLE;
    let plan = Plan { mat: *mat, s };
    let mut big = RgbImage::from_pixel((plan_w * s) as u32, (plan_h * s) as u32, TABLE);

    // The mat, the field of play and the baselines.
    let outline: Vec<(f32, f32)> = mat.corners().iter().map(|&c| plan.px(c)).collect();
    draw::polygon(&mut big, &outline, FELT);
    let field = mat.field_of_play();
    for e in field.edges() {
        draw::thick_line(&mut big, plan.px(e.a), plan.px(e.b), 1.0 * s, FIELD_EDGE);
    }
    for b in mat.baselines() {
        draw::thick_line(&mut big, plan.px(b.segment.a), plan.px(b.segment.b), 2.0 * s, BASELINE);
    }
    let centre = plan.px(MatPoint::new(0.0, 0.0));
    draw::disc(&mut big, centre, plan.len(pot.top_diameter_mm / 2.0), POT);
    draw::ring(&mut big, centre, plan.len(pot.base_diameter_mm / 2.0), 1.0 * s, Rgb([150, 150, 155]));

    // Winks, lowest first so each squopping wink covers what it squops, as seen from above.
    let mut winks: Vec<_> = position.winks.iter().filter(|w| w.state != WinkState::Potted && w.centre_mm.is_some()).collect();
    winks.sort_by_key(|w| w.level.unwrap_or(0));
    let squopped: Vec<&str> = position.squops.iter().map(|sq| sq.lower.as_str()).collect();
    let mut where_is: HashMap<&str, (MatPoint, f64, Colour)> = HashMap::new();
    for w in &winks {
        let Some(c) = w.centre_mm else { continue };
        let r = w.radius_mm(nominal);
        where_is.insert(w.id.as_str(), (c, r, w.colour));
        let p = plan.px(c);
        draw::disc(&mut big, p, plan.len(r), INK);
        draw::disc(&mut big, p, plan.len(r) - 1.2 * s, wink_rgb(w.colour));
        if squopped.contains(&w.id.as_str()) {
            // A squopped wink gets a pale centre: it cannot be played (8.2).
            draw::disc(&mut big, p, plan.len(r) * 0.35, Rgb([235, 235, 235]));
        }
        if w.state == WinkState::Off {
            let k = plan.len(r) * 0.8;
            draw::thick_line(&mut big, (p.0 - k, p.1 - k), (p.0 + k, p.1 + k), 1.6 * s, WARN);
            draw::thick_line(&mut big, (p.0 - k, p.1 + k), (p.0 + k, p.1 - k), 1.6 * s, WARN);
        }
    }

    // What the rules ask for: replacement spots and moves, each a dashed ring with an arrow.
    for f in &position.flags {
        let targets: Vec<(&str, MatPoint)> = match &f.detail {
            FlagDetail::Off { replacement_mm: Some(to), .. } => f.winks.first().map(|id| vec![(id.as_str(), *to)]).unwrap_or_default(),
            FlagDetail::UnderPot { moves } | FlagDetail::PotOut { moves, .. } => {
                moves.iter().map(|m| (m.wink.as_str(), m.to_mm)).collect()
            }
            _ => Vec::new(),
        };
        for (id, to) in targets {
            let Some(&(from, r, colour)) = where_is.get(id) else { continue };
            let (a, b) = (plan.px(from), plan.px(to));
            draw::dashed_ring(&mut big, b, plan.len(r), 1.6 * s, wink_rgb(colour));
            let (dx, dy) = (b.0 - a.0, b.1 - a.1);
            let d = (dx * dx + dy * dy).sqrt();
            if d > plan.len(r) * 2.0 {
                let shrink = plan.len(r) / d;
                let a2 = (a.0 + dx * shrink, a.1 + dy * shrink);
                let b2 = (b.0 - dx * shrink, b.1 - dy * shrink);
                draw::arrow(&mut big, a2, b2, 1.4 * s, 7.0 * s, Rgb([250, 250, 250]));
            }
        }
    }

    let plan_img = imageops::resize(&big, plan_w as u32, plan_h as u32, imageops::FilterType::Triangle);
    let mut labelled = plan_img;
    let flat = Plan { mat: *mat, s: 1.0 };
    for w in &winks {
        if let Some(c) = w.centre_mm {
            let (x, y) = flat.px(c);
            let r = flat.len(w.radius_mm(nominal));
            draw::text(&mut labelled, (x + r + 1.0) as i32, (y - r - 9.0) as i32, 11.0, Rgb([250, 250, 245]), &w.id);
        }
    }
    with_legend(labelled, position)
}

/// Adds a legend panel under the plan: potted winks, the flags and the score.
fn with_legend(plan: RgbImage, position: &Position) -> RgbImage {
    let width = plan.width();
    let line_h = (LEGEND_TEXT_PX * 1.35) as u32;
    let text_w = width.saturating_sub(30);
    let mut lines: Vec<(String, Rgb<u8>)> = Vec::new();
    let ruleset = position.ruleset.as_deref().unwrap_or("etwa-2012");
    let mut potted: Vec<String> = Vec::new();
    if let Some(counts) = &position.counts {
        for (c, n) in counts {
            if n.potted > 0 {
                potted.push(format!("{c} {}", n.potted));
            }
        }
    }
    let potted = if potted.is_empty() { "none".to_string() } else { potted.join(", ") };
    lines.push((format!("{ruleset} · {} winks · potted: {potted}", position.winks.len()), INK));
    let mut flag_lines: Vec<String> = Vec::new();
    for f in position.flags.iter().filter(|f| !matches!(f.detail, FlagDetail::Squop { .. } | FlagDetail::Pile {})) {
        for (k, l) in draw::wrap(&format!("[{}] {}", f.rule, f.text), LEGEND_TEXT_PX, text_w).into_iter().enumerate() {
            flag_lines.push(if k == 0 { l } else { format!("    {l}") });
        }
    }
    let squops = position.squops.len();
    if squops > 0 {
        flag_lines.insert(0, format!("{squops} squop{} in {} pile{} (pale centre: squopped)", if squops == 1 { "" } else { "s" }, position.piles.len(), if position.piles.len() == 1 { "" } else { "s" }));
    }
    if flag_lines.len() > LEGEND_MAX_LINES {
        let more = flag_lines.len() - (LEGEND_MAX_LINES - 1);
        flag_lines.truncate(LEGEND_MAX_LINES - 1);
        flag_lines.push(format!("… and {more} more lines (see the JSON)"));
    }
    lines.extend(flag_lines.into_iter().map(|l| (l, INK)));
    if let Some(score) = &position.score {
        let gs = |p| score.game_score.get(&p).copied().unwrap_or(0.0);
        let mut line = format!(
            "score {}: blue–red {} v green–yellow {}",
            if score.is_final { "(game over)" } else { "if the game ended now" },
            crate::rules::score::format_points(gs(Partnership::BlueRed)),
            crate::rules::score::format_points(gs(Partnership::GreenYellow)),
        );
        if let Some(points) = &score.points {
            let parts: Vec<String> = points.iter().map(|(c, v)| format!("{c} {}", crate::rules::score::format_points(*v))).collect();
            line.push_str(&format!(" ({})", parts.join(", ")));
        }
        lines.push((line, INK));
    }
    let legend_h = 16 + line_h * lines.len() as u32;
    let mut out = RgbImage::from_pixel(width, plan.height() + legend_h, PAPER);
    imageops::replace(&mut out, &plan, 0, 0);
    for (k, (l, colour)) in lines.iter().enumerate() {
        draw::text(&mut out, 15, (plan.height() + 8 + k as u32 * line_h) as i32, LEGEND_TEXT_PX, *colour, l);
    }
    out
}
