//! Drawing helpers shared by every picture winkeye makes: text in the bundled font, thick lines,
//! arrows and rings, and a legend panel.

use ab_glyph::{FontRef, PxScale};
use image::{Rgb, RgbImage};
use imageproc::drawing::{draw_filled_circle_mut, draw_polygon_mut, draw_text_mut, text_size};
use imageproc::point::Point;

/// DejaVu Sans (Bitstream Vera licence, see `assets/fonts/LICENSE-DejaVu.txt`), so pictures look
/// the same on every machine without a system font.
static FONT_BYTES: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// The bundled font, or `None` if it cannot be parsed (then pictures carry no text).
pub fn font() -> Option<FontRef<'static>> {
    FontRef::try_from_slice(FONT_BYTES).ok()
}

/// Draws `text` with its top-left corner at (x, y), `size_px` tall.
pub fn text(img: &mut RgbImage, x: i32, y: i32, size_px: f32, colour: Rgb<u8>, s: &str) {
    if let Some(f) = font() {
        draw_text_mut(img, colour, x, y, PxScale::from(size_px), &f, s);
    }
}

/// The width and height of `s` drawn `size_px` tall, in pixels.
pub fn text_extent(size_px: f32, s: &str) -> (u32, u32) {
    font().map_or((0, 0), |f| text_size(PxScale::from(size_px), &f, s))
}

/// Splits `s` into lines no wider than `width_px` at `size_px`, breaking at spaces.
pub fn wrap(s: &str, size_px: f32, width_px: u32) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in s.split(' ') {
        let candidate = if line.is_empty() { word.to_string() } else { format!("{line} {word}") };
        if !line.is_empty() && text_extent(size_px, &candidate).0 > width_px {
            lines.push(std::mem::take(&mut line));
            line = word.to_string();
        } else {
            line = candidate;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// A straight line `width` pixels thick from `a` to `b` (sub-pixel ends).
pub fn thick_line(img: &mut RgbImage, a: (f32, f32), b: (f32, f32), width: f32, colour: Rgb<u8>) {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt();
    if len < 0.5 {
        return;
    }
    let (nx, ny) = (-dy / len * width / 2.0, dx / len * width / 2.0);
    let corners = [(a.0 + nx, a.1 + ny), (b.0 + nx, b.1 + ny), (b.0 - nx, b.1 - ny), (a.0 - nx, a.1 - ny)];
    polygon(img, &corners, colour);
}

/// A filled polygon; degenerate polygons (fewer than three distinct corners) are skipped.
pub fn polygon(img: &mut RgbImage, corners: &[(f32, f32)], colour: Rgb<u8>) {
    let mut pts: Vec<Point<i32>> = Vec::with_capacity(corners.len());
    for &(x, y) in corners {
        let p = Point::new(x.round() as i32, y.round() as i32);
        if pts.last() != Some(&p) {
            pts.push(p);
        }
    }
    while pts.len() > 1 && pts.first() == pts.last() {
        pts.pop();
    }
    if pts.len() >= 3 {
        draw_polygon_mut(img, &pts, colour);
    }
}

/// An arrow from `a` to `b` with a head `head` pixels long.
pub fn arrow(img: &mut RgbImage, a: (f32, f32), b: (f32, f32), width: f32, head: f32, colour: Rgb<u8>) {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt();
    if len < 1.0 {
        return;
    }
    let (ux, uy) = (dx / len, dy / len);
    let head = head.min(len * 0.6);
    let base = (b.0 - ux * head, b.1 - uy * head);
    thick_line(img, a, base, width, colour);
    let (nx, ny) = (-uy * head * 0.5, ux * head * 0.5);
    polygon(img, &[b, (base.0 + nx, base.1 + ny), (base.0 - nx, base.1 - ny)], colour);
}

/// A filled disc.
pub fn disc(img: &mut RgbImage, c: (f32, f32), radius: f32, colour: Rgb<u8>) {
    draw_filled_circle_mut(img, (c.0.round() as i32, c.1.round() as i32), radius.round().max(1.0) as i32, colour);
}

/// A ring `width` pixels thick whose outer edge has radius `radius`.
pub fn ring(img: &mut RgbImage, c: (f32, f32), radius: f32, width: f32, colour: Rgb<u8>) {
    let steps = (2.0 * std::f32::consts::PI * radius / 2.0).clamp(24.0, 720.0) as usize;
    let r = radius - width / 2.0;
    for i in 0..steps {
        let t0 = i as f32 / steps as f32 * std::f32::consts::TAU;
        let t1 = (i + 1) as f32 / steps as f32 * std::f32::consts::TAU;
        thick_line(img, (c.0 + r * t0.cos(), c.1 + r * t0.sin()), (c.0 + r * t1.cos(), c.1 + r * t1.sin()), width, colour);
    }
}

/// A dashed ring, for things that are not there yet (a replacement spot, a move's target).
pub fn dashed_ring(img: &mut RgbImage, c: (f32, f32), radius: f32, width: f32, colour: Rgb<u8>) {
    let dashes = 12;
    let r = radius - width / 2.0;
    for i in 0..dashes {
        let t0 = i as f32 / dashes as f32 * std::f32::consts::TAU;
        let t1 = t0 + 0.55 * std::f32::consts::TAU / dashes as f32;
        let n = 4;
        for k in 0..n {
            let a = t0 + (t1 - t0) * k as f32 / n as f32;
            let b = t0 + (t1 - t0) * (k + 1) as f32 / n as f32;
            thick_line(img, (c.0 + r * a.cos(), c.1 + r * a.sin()), (c.0 + r * b.cos(), c.1 + r * b.sin()), width, colour);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_font_loads_and_measures() {
        assert!(font().is_some());
        let (w, h) = text_extent(20.0, "winkeye");
        assert!(w > 40 && h > 8, "{w}x{h}");
        let lines = wrap("one two three four five six seven", 20.0, 80);
        assert!(lines.len() >= 3, "{lines:?}");
    }

    #[test]
    fn shapes_draw_where_asked() {
        let mut img = RgbImage::new(100, 100);
        let white = Rgb([255, 255, 255]);
        disc(&mut img, (50.0, 50.0), 10.0, white);
        assert_eq!(img.get_pixel(50, 50), &white);
        assert_eq!(img.get_pixel(5, 5), &Rgb([0, 0, 0]));
        arrow(&mut img, (0.0, 90.0), (90.0, 90.0), 3.0, 10.0, white);
        assert_eq!(img.get_pixel(40, 90), &white);
        // Degenerate shapes are skipped, not a panic.
        thick_line(&mut img, (1.0, 1.0), (1.0, 1.0), 3.0, white);
        polygon(&mut img, &[(1.0, 1.0), (1.0, 1.0)], white);
    }
}
