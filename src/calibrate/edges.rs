//! Sub-pixel edge points: across an expected edge, where the colour crosses halfway from one
//! side's to the other's.

use crate::geometry::PixelPoint;
use opencv::core::{Mat, Vec3b};
use opencv::prelude::*;

/// The camera's tone curve, undone: 8-bit value v is linear light (v/255)^GAMMA (close to sRGB).
const GAMMA: f32 = 2.2;
/// Rec. 709 luminance weights for linear RGB.
const LUMA: [f64; 3] = [0.2126, 0.7152, 0.0722];
/// Use brightness alone when it carries at least this share of the colour difference.
const LUMA_SHARE: f64 = 0.3;
/// Step between samples along a profile, in pixels.
const PROFILE_STEP_PX: f64 = 0.5;
/// [`step_edge_shaded_outside`]: least size, in RGB as stored (0–1), of the inside colour's part
/// orthogonal to the outside's for it to be read along that part (JPEG's noise on one pixel is
/// about 0.01; a grey felt's beside a white table is under it).
const SHADE_FREE_MIN: f64 = 0.03;
/// ... and the outside's least brightness (its length in RGB), for its direction to mean
/// anything.
const SHADE_FREE_MIN_OUTSIDE: f64 = 0.03;
/// Least colour difference (CIE Lab, 8-bit scale) between the two sides for an edge to count.
pub const MIN_CONTRAST_LAB: f64 = 8.0;
/// How far a sample before a profile's crossing may lie off the line from the inside's colour
/// along the axis read, as a share of the axis's length (the along-axis check asks under 0.35).
const OFF_AXIS_MOST: f64 = 0.35;

/// A frame in CIE Lab (OpenCV's 8-bit scale: L × 255/100, a and b offset by 128), for sampling
/// between pixels. Bilinear interpolation of many samples along an edge recovers far finer
/// positions than the 8-bit steps.
pub struct LabImage {
    data: Vec<Vec3b>,
    /// The frame's BGR bytes, read in linear light through `lut` (the camera's gamma of 2.2
    /// undone), where an edge's blurred step is symmetric: its halfway point is the edge.
    bgr: Vec<Vec3b>,
    lut: [f32; 256],
    width: usize,
    height: usize,
}

impl LabImage {
    /// Converts an 8-bit BGR frame.
    pub fn new(bgr: &Mat) -> opencv::Result<LabImage> {
        let lab = crate::detect::sample::Lab8::new().image(bgr)?;
        let src = if bgr.is_continuous() { bgr.clone() } else { bgr.try_clone()? };
        let mut lut = [0f32; 256];
        for (v, l) in lut.iter_mut().enumerate() {
            *l = (v as f32 / 255.0).powf(GAMMA);
        }
        Ok(LabImage { data: lab.data_typed::<Vec3b>()?.to_vec(), bgr: src.data_typed::<Vec3b>()?.to_vec(), lut, width: bgr.cols() as usize, height: bgr.rows() as usize })
    }

    /// Bilinear sample of linear RGB at (x, y), or `None` outside the frame.
    pub fn linear_at(&self, x: f64, y: f64) -> Option<[f64; 3]> {
        // RGB order out of BGR bytes.
        self.bilinear(x, y, |i, c| self.lut[self.bgr[i][2 - c] as usize] as f64)
    }

    /// Bilinear sample of the 8-bit RGB values as stored (0–1, the camera's tone curve kept), or
    /// `None` outside the frame.
    pub fn value_at(&self, x: f64, y: f64) -> Option<[f64; 3]> {
        self.bilinear(x, y, |i, c| self.bgr[i][2 - c] as f64 / 255.0)
    }

    /// Bilinear sample at (x, y), or `None` outside the frame.
    pub fn at(&self, x: f64, y: f64) -> Option<[f64; 3]> {
        self.bilinear(x, y, |i, c| self.data[i][c] as f64)
    }

    /// Bilinear interpolation at (x, y) of `value(pixel index, channel)`, or `None` outside the
    /// frame.
    fn bilinear(&self, x: f64, y: f64, value: impl Fn(usize, usize) -> f64) -> Option<[f64; 3]> {
        if x < 0.0 || y < 0.0 || x > (self.width - 1) as f64 || y > (self.height - 1) as f64 {
            return None;
        }
        let (x0, y0) = (x.floor() as usize, y.floor() as usize);
        let (x1, y1) = ((x0 + 1).min(self.width - 1), (y0 + 1).min(self.height - 1));
        let (fx, fy) = (x - x0 as f64, y - y0 as f64);
        let p = |xx: usize, yy: usize, c: usize| value(yy * self.width + xx, c);
        let mut out = [0.0; 3];
        for (c, o) in out.iter_mut().enumerate() {
            let top = p(x0, y0, c) * (1.0 - fx) + p(x1, y0, c) * fx;
            let bot = p(x0, y1, c) * (1.0 - fx) + p(x1, y1, c) * fx;
            *o = top * (1.0 - fy) + bot * fy;
        }
        Some(out)
    }

    /// Frame width, in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Frame height, in pixels.
    pub fn height(&self) -> usize {
        self.height
    }
}

fn median3(v: &mut [[f64; 3]]) -> [f64; 3] {
    let mut out = [0.0; 3];
    for (c, o) in out.iter_mut().enumerate() {
        let mut ch: Vec<f64> = v.iter().map(|p| p[c]).collect();
        ch.sort_by(f64::total_cmp);
        *o = ch[ch.len() / 2];
    }
    out
}

/// A step edge across the profile through `p` along unit normal `n` (pointing from the side
/// that should be `inside` to the other), searched within ±`reach` pixels: the point where the
/// colour is halfway between the two sides' colours. `None` when the profile is not a clean step
/// (too little contrast, or more than one crossing).
pub fn step_edge(img: &LabImage, p: PixelPoint, n: (f64, f64), reach: f64) -> Option<PixelPoint> {
    step_edge_in(img, p, n, reach, true)
}

/// A profile across a mat's edge read two ways (see [`step_edge_shaded_outside`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgeReadings {
    /// As [`step_edge`] reads it.
    pub usual: Option<PixelPoint>,
    /// Read along the inside colour's part orthogonal to the outside's, in the frame's stored
    /// values, where that tells the sides apart.
    pub shade_free: Option<PixelPoint>,
}

/// [`step_edge`], and the same profile read as if the outside may be shaded near the edge: a
/// mat's edge on a table, where the felt's own thickness or a contact line can darken the table
/// over the first millimetres, and brightness then crosses halfway beyond the edge. Shading
/// scales a colour without turning it, so where the two sides' colours point different ways the
/// profile is also read along the inside colour's part orthogonal to the outside's: every shade
/// of the outside reads 1, the inside 0, and a blur's mixture of the two crosses ½ at the edge
/// if it mixed the colours in the space read. That space is the stored values (the tone curve
/// kept): JPEG keeps colour at half resolution and mixes it there, and so does a renderer that
/// blurs its output. A lens mixes light before the tone curve, where this reading of a dark felt
/// beside a bright table falls up to about half a pixel inside the edge; so the caller judges
/// over many points, and only a larger shift counts.
pub fn step_edge_shaded_outside(img: &LabImage, p: PixelPoint, n: (f64, f64), reach: f64) -> EdgeReadings {
    let Some(pr) = Profile::read(img, p, n, reach, Space::Linear) else { return EdgeReadings { usual: None, shade_free: None } };
    let at = |t: f64| PixelPoint::new(p.x + n.0 * t, p.y + n.1 * t);
    EdgeReadings {
        usual: pr.crossing(pr.usual_axis(true), false).map(at),
        shade_free: Profile::read(img, p, n, reach, Space::Value).and_then(|pv| shade_free_axis(&pv.inside, &pv.outside).and_then(|o| pv.crossing(o.map(|v| -v), false))).map(at),
    }
}

/// [`step_edge`], choosing whether the halfway point is found in linear light (exact) or in Lab
/// (quicker, biased towards the darker side by up to a few tenths of a pixel: fine for a first
/// look).
pub fn step_edge_in(img: &LabImage, p: PixelPoint, n: (f64, f64), reach: f64, linear: bool) -> Option<PixelPoint> {
    let pr = Profile::read(img, p, n, reach, if linear { Space::Linear } else { Space::Lab })?;
    pr.crossing(pr.usual_axis(linear), false).map(|t| PixelPoint::new(p.x + n.0 * t, p.y + n.1 * t))
}

/// [`step_edge_in`] in Lab, for a first, wide search: the inside's colour must also last up to
/// the crossing, not only its reading along the two ends' difference. On a patterned table
/// (stripes, checks) a band of a second colour between the felt and the table's median can read
/// near the felt along that difference, and the crossing then falls at the band's far side, out
/// on the table (another renderer's r1080_s1_020: the first pass's points in a sawtooth over
/// the stripes, the mat's corners fitted 25 px out).
pub fn first_step_from_inside(img: &LabImage, p: PixelPoint, n: (f64, f64), reach: f64) -> Option<PixelPoint> {
    let pr = Profile::read(img, p, n, reach, Space::Lab)?;
    pr.crossing(pr.usual_axis(false), true).map(|t| PixelPoint::new(p.x + n.0 * t, p.y + n.1 * t))
}

/// The inside colour's part orthogonal to the outside's (in the profile's space), when it tells
/// the sides apart whatever the outside's shade: the outside not near black (its direction is
/// then noise), and that part at least [`SHADE_FREE_MIN`]. With u = −(that part) = −o, a colour
/// c reads (c − inside)·u / |u|² = 1 − c·o / |o|², since inside·o = |o|²: the inside 0, any
/// shade of the outside 1.
fn shade_free_axis(inside: &[f64; 3], outside: &[f64; 3]) -> Option<[f64; 3]> {
    let dot = |a: &[f64; 3], b: &[f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let out_norm = dot(outside, outside).sqrt();
    if out_norm < SHADE_FREE_MIN_OUTSIDE {
        return None;
    }
    let t = outside.map(|v| v / out_norm);
    let along = dot(inside, &t);
    let u = [inside[0] - along * t[0], inside[1] - along * t[1], inside[2] - along * t[2]];
    (dot(&u, &u).sqrt() >= SHADE_FREE_MIN).then_some(u)
}

/// Which colours a profile's samples are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Space {
    /// CIE Lab (8-bit scale).
    Lab,
    /// Linear light (the tone curve undone).
    Linear,
    /// RGB as stored (0–1).
    Value,
}

/// Samples along a profile, with its two ends' colours.
struct Profile {
    /// (offset along the normal in pixels, colour in the profile's [`Space`]).
    samples: Vec<(f64, [f64; 3])>,
    inside: [f64; 3],
    outside: [f64; 3],
}

impl Profile {
    /// The profile through `p` along `n` within ±`reach`; `None` off the frame or when its two
    /// ends differ too little, judged perceptually.
    fn read(img: &LabImage, p: PixelPoint, n: (f64, f64), reach: f64, space: Space) -> Option<Profile> {
        if !(reach.is_finite() && reach > 0.0 && reach < (img.width() + img.height()) as f64) {
            return None;
        }
        let steps = (reach / PROFILE_STEP_PX).round() as i64;
        let mut lab = Vec::with_capacity(2 * steps as usize + 1);
        let mut samples = Vec::with_capacity(2 * steps as usize + 1);
        for k in -steps..=steps {
            let t = k as f64 * PROFILE_STEP_PX;
            let (x, y) = (p.x + n.0 * t, p.y + n.1 * t);
            let c = img.at(x, y)?;
            lab.push(c);
            samples.push((
                t,
                match space {
                    Space::Lab => c,
                    Space::Linear => img.linear_at(x, y)?,
                    Space::Value => img.value_at(x, y)?,
                },
            ));
        }
        let third = lab.len() / 3;
        let (li, lo) = (median3(&mut lab[..third].to_vec()), median3(&mut lab[lab.len() - third..].to_vec()));
        let contrast = ((li[0] - lo[0]).powi(2) + (li[1] - lo[1]).powi(2) + (li[2] - lo[2]).powi(2)).sqrt();
        if contrast < MIN_CONTRAST_LAB {
            return None;
        }
        let inside = median3(&mut samples[..third].iter().map(|q| q.1).collect::<Vec<_>>());
        let outside = median3(&mut samples[samples.len() - third..].iter().map(|q| q.1).collect::<Vec<_>>());
        Some(Profile { samples, inside, outside })
    }

    /// The axis [`step_edge`] reads along: the two ends' difference, or in linear light brightness
    /// alone where it tells them apart well enough.
    fn usual_axis(&self, linear: bool) -> [f64; 3] {
        let (inside, outside) = (&self.inside, &self.outside);
        let mut u = [outside[0] - inside[0], outside[1] - inside[1], outside[2] - inside[2]];
        // JPEG (and MJPEG webcams) keep colour at half resolution, which shifts colour edges by up
        // to half a pixel; where brightness alone tells the sides apart well enough, use brightness.
        if linear {
            let y = |c: &[f64; 3]| LUMA[0] * c[0] + LUMA[1] * c[1] + LUMA[2] * c[2];
            let dy = y(outside) - y(inside);
            let norm = (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]).sqrt();
            if dy.abs() >= LUMA_SHARE * norm {
                // Project onto the luma weights alone.
                u = [LUMA[0] * dy.signum(), LUMA[1] * dy.signum(), LUMA[2] * dy.signum()];
                let scale = dy.abs() / (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
                u = u.map(|v| v * scale);
            }
        }
        u
    }

    /// Where the samples, read along `u` from the inside's colour (the inside 0), cross ½: the
    /// offset along the normal, in pixels. `None` unless there is one crossing, with the samples
    /// mostly near 0 before it and near 1 after (and, with `inside_alike`, mostly within
    /// [`OFF_AXIS_MOST`] of the inside's colour off `u` as well).
    fn crossing(&self, u: [f64; 3], inside_alike: bool) -> Option<f64> {
        let (inside, lin) = (&self.inside, &self.samples);
        let uu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
        if uu <= 1e-12 {
            return None;
        }
        let q: Vec<f64> = lin.iter().map(|(_, c)| ((c[0] - inside[0]) * u[0] + (c[1] - inside[1]) * u[1] + (c[2] - inside[2]) * u[2]) / uu).collect();
        let crossings: Vec<usize> = (1..q.len()).filter(|&i| (q[i - 1] < 0.5) != (q[i] < 0.5)).collect();
        if crossings.len() != 1 {
            return None;
        }
        let i = crossings[0];
        // Clean on both sides: mostly near 0 before the crossing and near 1 after it.
        let before = q[..i].iter().filter(|&&v| v < 0.35).count() as f64 / i as f64;
        let after = q[i..].iter().filter(|&&v| v > 0.65).count() as f64 / (q.len() - i) as f64;
        if before < 0.8 || after < 0.8 {
            return None;
        }
        // Asked (`inside_alike`): the inside's colour up to the crossing, off `u` too.
        if inside_alike {
            let off_axis = |c: &[f64; 3], v: f64| (0..3).map(|k| (c[k] - inside[k] - v * u[k]).powi(2)).sum::<f64>();
            let like_inside = lin[..i].iter().zip(&q[..i]).filter(|((_, c), &v)| off_axis(c, v) <= OFF_AXIS_MOST * OFF_AXIS_MOST * uu).count() as f64 / i as f64;
            if like_inside < 0.8 {
                return None;
            }
        }
        let (t0, t1) = (lin[i - 1].0, lin[i].0);
        Some(t0 + (0.5 - q[i - 1]) / (q[i] - q[i - 1]) * (t1 - t0))
    }
}

/// A painted line across the profile through `p` along unit normal `n`: the centre of the band,
/// within ±`reach` pixels, whose colour differs from the felt on both sides, `min_px` to `max_px`
/// wide. `None` when there is no such single band.
pub fn band_centre(img: &LabImage, p: PixelPoint, n: (f64, f64), reach: f64, min_px: f64, max_px: f64) -> Option<PixelPoint> {
    // A profile longer than the frame (a degenerate mapping) has nothing to find.
    if !(reach.is_finite() && reach > 0.0 && reach < (img.width() + img.height()) as f64) {
        return None;
    }
    let steps = (reach / PROFILE_STEP_PX).round() as i64;
    let mut prof = Vec::with_capacity(2 * steps as usize + 1);
    for k in -steps..=steps {
        let t = k as f64 * PROFILE_STEP_PX;
        prof.push((t, img.at(p.x + n.0 * t, p.y + n.1 * t)?));
    }
    let quarter = prof.len() / 4;
    let mut ends: Vec<[f64; 3]> = prof[..quarter].iter().chain(prof[prof.len() - quarter..].iter()).map(|q| q.1).collect();
    let felt = median3(&mut ends);
    let mid = &prof[quarter..prof.len() - quarter];
    let diff = |c: &[f64; 3]| ((c[0] - felt[0]).powi(2) + (c[1] - felt[1]).powi(2) + (c[2] - felt[2]).powi(2)).sqrt();
    let peak = mid.iter().map(|q| diff(&q.1)).fold(0.0, f64::max);
    if peak < MIN_CONTRAST_LAB * 1.5 {
        return None;
    }
    // The band: samples past half the peak difference; its centre is their weighted mean.
    let half = peak / 2.0;
    let inside: Vec<(f64, f64)> = mid.iter().map(|q| (q.0, diff(&q.1))).filter(|(_, d)| *d >= half).collect();
    let (first, last) = (inside.first()?.0, inside.last()?.0);
    let width = last - first + PROFILE_STEP_PX;
    // One band, not two: every sample between its ends is in it.
    let span = ((last - first) / PROFILE_STEP_PX).round() as usize + 1;
    if inside.len() != span || width < min_px || width > max_px {
        return None;
    }
    let wsum: f64 = inside.iter().map(|(_, d)| d).sum();
    let t = inside.iter().map(|(t, d)| t * d).sum::<f64>() / wsum;
    Some(PixelPoint::new(p.x + n.0 * t, p.y + n.1 * t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Vec3b, CV_8UC3};

    /// A frame 80 × 24 px: felt (RGB as stored) left of x = `edge` (pixel centres at integers),
    /// the table right of it, darkened beside the edge by `shade(distance beyond it)`; mixed at
    /// the edge by a Gaussian blur of 1 px in stored values (as JPEG's colour and a renderer that
    /// blurs its output mix), each pixel averaged over 16 sub-columns.
    fn edge_frame(felt: [f64; 3], table: [f64; 3], edge: f64, shade: impl Fn(f64) -> f64) -> Mat {
        frame_of(|x: f64| if x < edge { felt } else { table.map(|v| v * shade(x - edge)) })
    }

    /// A frame 80 × 24 px whose columns are `sharp(x)` (RGB as stored), blurred as [`edge_frame`]'s.
    fn frame_of(sharp: impl Fn(f64) -> [f64; 3]) -> Mat {
        let (w, h) = (80usize, 24usize);
        let row: Vec<[f64; 3]> = (0..w)
            .map(|i| {
                let mut acc = [0.0; 3];
                let mut wsum = 0.0;
                for k in -64..=64 {
                    let dx = k as f64 / 16.0;
                    let g = (-0.5 * dx * dx).exp();
                    let c = sharp(i as f64 + dx);
                    for ch in 0..3 {
                        acc[ch] += g * c[ch];
                    }
                    wsum += g;
                }
                acc.map(|v| v / wsum)
            })
            .collect();
        let mut m = Mat::new_rows_cols_with_default(h as i32, w as i32, CV_8UC3, opencv::core::Scalar::all(0.0)).expect("frame");
        for j in 0..h {
            for (i, c) in row.iter().enumerate() {
                *m.at_2d_mut::<Vec3b>(j as i32, i as i32).expect("pixel") = Vec3b::from([c[2].round() as u8, c[1].round() as u8, c[0].round() as u8]);
            }
        }
        m
    }

    #[test]
    fn a_table_shaded_beside_the_mat_moves_brightness_out_but_not_the_shade_free_reading() {
        // Beige felt, a white table darkened by a third at the edge, fading over 2.5 px (another
        // renderer's tables beside its mat).
        let edge = 40.3;
        let img = LabImage::new(&edge_frame([200.0, 175.0, 145.0], [236.0, 236.0, 228.0], edge, |d| 1.0 - 0.35 * (-d / 2.5).exp())).expect("lab");
        let r = step_edge_shaded_outside(&img, PixelPoint::new(38.0, 12.0), (1.0, 0.0), 10.0);
        let usual = r.usual.expect("brightness crossing").x;
        let free = r.shade_free.expect("shade-free crossing").x;
        assert!(usual - edge > 1.0, "brightness crossing {usual:.2}, edge {edge}");
        assert!((free - edge).abs() < 0.25, "shade-free crossing {free:.2}, edge {edge}");
    }

    #[test]
    fn with_no_shade_both_readings_find_the_edge() {
        let edge = 40.3;
        let img = LabImage::new(&edge_frame([200.0, 175.0, 145.0], [236.0, 236.0, 228.0], edge, |_| 1.0)).expect("lab");
        let r = step_edge_shaded_outside(&img, PixelPoint::new(38.0, 12.0), (1.0, 0.0), 10.0);
        // Mixed in stored values, the brightness crossing (read in linear light) lies a little
        // towards the brighter side.
        let (usual, free) = (r.usual.expect("brightness crossing").x, r.shade_free.expect("shade-free crossing").x);
        assert!((usual - edge).abs() < 0.3, "brightness crossing {usual:.2}, edge {edge}");
        assert!((free - edge).abs() < 0.2, "shade-free crossing {free:.2}, edge {edge}");
    }

    /// Brown felt, then a green stripe 5 px wide and a pink-red one (another renderer's striped
    /// cloth): read along the felt's difference from the table's median (the red), the green
    /// reads near the felt, and the crossing falls at the stripes' boundary, 5 px out on the
    /// table. The first search takes no crossing there; on a plain table, the same one.
    #[test]
    fn a_first_search_takes_no_crossing_beyond_a_band_of_another_colour() {
        let (felt, green, red) = ([120.0, 95.0, 65.0], [100.0, 130.0, 115.0], [190.0, 100.0, 110.0]);
        let striped = LabImage::new(&frame_of(|x| if x < 30.3 { felt } else if x < 35.3 { green } else { red })).expect("lab");
        let (p, n) = (PixelPoint::new(30.0, 12.0), (1.0, 0.0));
        let usual = step_edge_in(&striped, p, n, 14.0, false).expect("a crossing").x;
        assert!((usual - 35.3).abs() < 0.5, "the usual reading at the stripes' boundary: {usual:.2}");
        let first = first_step_from_inside(&striped, p, n, 14.0).map(|e| e.x);
        assert!(first.is_none_or(|x| (x - 30.3).abs() < 0.5), "the first search at {first:?}");
        let plain = LabImage::new(&frame_of(|x| if x < 30.3 { felt } else { red })).expect("lab");
        let (a, b) = (step_edge_in(&plain, p, n, 14.0, false).expect("usual").x, first_step_from_inside(&plain, p, n, 14.0).expect("first").x);
        assert!((a - 30.3).abs() < 0.5 && a == b, "plain table: {a:.2}, {b:.2}");
    }

    #[test]
    fn grey_felt_on_a_white_table_has_no_shade_free_reading() {
        let img = LabImage::new(&edge_frame([110.0, 110.0, 110.0], [236.0, 236.0, 236.0], 40.3, |_| 1.0)).expect("lab");
        let r = step_edge_shaded_outside(&img, PixelPoint::new(38.0, 12.0), (1.0, 0.0), 10.0);
        assert!(r.usual.is_some());
        assert_eq!(r.shade_free, None);
    }
}
