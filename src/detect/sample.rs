//! Sampling a frame between pixels, in linear light, without copying it.
//!
//! A blurred step between two colours crosses halfway at the true edge only in linear light (the
//! camera's tone curve makes the bright side's share look larger), so edge positions are found on
//! values read through the inverse tone curve (gamma 2.2, close to sRGB).

use opencv::core::Mat;
use opencv::prelude::*;

/// The camera's tone curve, undone.
pub(crate) const GAMMA: f32 = 2.2;

/// A read-only view of an 8-bit BGR frame.
pub struct LinearView<'a> {
    data: &'a [u8],
    step: usize,
    width: usize,
    height: usize,
    lut: [f32; 256],
}

impl<'a> LinearView<'a> {
    /// A view of `bgr`, which must be 8-bit, three channels.
    pub fn new(bgr: &'a Mat) -> opencv::Result<LinearView<'a>> {
        let step = bgr.step1(0)? * bgr.elem_size1();
        let data = bgr.data_bytes()?;
        let mut lut = [0f32; 256];
        for (v, l) in lut.iter_mut().enumerate() {
            *l = (v as f32 / 255.0).powf(GAMMA);
        }
        Ok(LinearView { data, step, width: bgr.cols() as usize, height: bgr.rows() as usize, lut })
    }

    /// Frame width.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Frame height.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The 8-bit BGR bytes of pixel (x, y).
    pub fn bgr(&self, x: usize, y: usize) -> [u8; 3] {
        let i = y * self.step + x * 3;
        [self.data[i], self.data[i + 1], self.data[i + 2]]
    }

    /// Linear RGB (0–1) of pixel (x, y), which must lie in the frame.
    pub fn pixel(&self, x: usize, y: usize) -> [f32; 3] {
        let [b, g, r] = self.bgr(x, y);
        [self.lut[r as usize], self.lut[g as usize], self.lut[b as usize]]
    }

    /// Linear RGB (0–1) at (x, y), bilinear, or `None` outside the frame.
    #[inline]
    pub fn linear(&self, x: f64, y: f64) -> Option<[f32; 3]> {
        let (x0, y0, w) = bilinear_cell(x, y, (self.width, self.height))?;
        // The two pixels of each row, checked once.
        let at = y0 * self.step + x0 * 3;
        let top: &[u8; 6] = self.data.get(at..at + 6)?.try_into().ok()?;
        let bottom: &[u8; 6] = self.data.get(at + self.step..at + self.step + 6)?.try_into().ok()?;
        let px = [&top[0..3], &top[3..6], &bottom[0..3], &bottom[3..6]];
        let mut out = [0f32; 3];
        for (k, p) in px.iter().enumerate() {
            // RGB order out of BGR bytes.
            out[0] += w[k] * self.lut[p[2] as usize];
            out[1] += w[k] * self.lut[p[1] as usize];
            out[2] += w[k] * self.lut[p[0] as usize];
        }
        Some(out)
    }

    /// The pixels within `reach` of `centre` (a square, clipped to the frame, with a pixel more on
    /// the far sides for the bilinear neighbours), each turned into linear light once: for reading
    /// many points between them, as along a wink's rays.
    pub fn patch(&self, centre: (f64, f64), reach: f64) -> Patch {
        let clip = |v: f64, n: usize| (v.max(0.0) as usize).min(n);
        let (x0, x1) = (clip((centre.0 - reach).floor(), self.width), clip((centre.0 + reach).ceil() + 2.0, self.width));
        let (y0, y1) = (clip((centre.1 - reach).floor(), self.height), clip((centre.1 + reach).ceil() + 2.0, self.height));
        let mut data = Vec::with_capacity((x1 - x0) * (y1 - y0));
        for y in y0..y1 {
            let row = &self.data[y * self.step + x0 * 3..y * self.step + x1 * 3];
            data.extend(row.chunks_exact(3).map(|p| [self.lut[p[2] as usize], self.lut[p[1] as usize], self.lut[p[0] as usize], 0.0]));
        }
        Patch { x0, y0, width: x1 - x0, height: y1 - y0, frame: (self.width, self.height), data }
    }

    /// Linear luminance (Rec. 709 weights) at (x, y), bilinear, or `None` outside the frame.
    pub fn luminance(&self, x: f64, y: f64) -> Option<f64> {
        self.linear(x, y).map(|v| 0.2126 * v[0] as f64 + 0.7152 * v[1] as f64 + 0.0722 * v[2] as f64)
    }
}

/// The pixel (x0, y0) at the top left of the four round frame point (x, y) in a frame of `size`
/// (width, height), and the four's bilinear weights (top left, top right, bottom left, bottom
/// right); `None` where the four are not all in the frame.
#[inline]
fn bilinear_cell(x: f64, y: f64, size: (usize, usize)) -> Option<(usize, usize, [f32; 4])> {
    if !(x >= 0.0 && y >= 0.0) {
        return None;
    }
    // Truncation is the floor here (both are at least 0), and needs no call into libm.
    let (x0, y0) = (x as usize, y as usize);
    if x0 >= size.0.saturating_sub(1) || y0 >= size.1.saturating_sub(1) {
        return None;
    }
    Some((x0, y0, bilinear_weights((x - x0 as f64) as f32, (y - y0 as f64) as f32)))
}

/// The bilinear weights (top left, top right, bottom left, bottom right) of a point `(fx, fy)`
/// (0–1) across from the top left of its cell of four pixels.
#[inline(always)]
fn bilinear_weights(fx: f32, fy: f32) -> [f32; 4] {
    [(1.0 - fx) * (1.0 - fy), fx * (1.0 - fy), (1.0 - fx) * fy, fx * fy]
}

/// Fractional bits of [`Patch::ray_profile`]'s fixed point.
const FIXED_BITS: u32 = 24;

/// A window of a frame in linear light ([`LinearView::patch`]), read between pixels exactly as the
/// view reads it.
pub struct Patch {
    x0: usize,
    y0: usize,
    width: usize,
    height: usize,
    frame: (usize, usize),
    /// Linear RGB, padded to four lanes so that a pixel is one vector.
    data: Vec<[f32; 4]>,
}

impl Patch {
    /// Linear RGB (0–1) at frame point (x, y), bilinear: the same value as
    /// [`LinearView::linear`]; `None` outside the frame or the patch.
    #[inline(always)]
    pub fn linear(&self, x: f64, y: f64) -> Option<[f32; 3]> {
        let (x0, y0, w) = bilinear_cell(x, y, self.frame)?;
        if x0 < self.x0 || y0 < self.y0 || x0 >= (self.x0 + self.width).saturating_sub(1) || y0 >= (self.y0 + self.height).saturating_sub(1) {
            return None;
        }
        let [r, g, b, _] = self.mix((y0 - self.y0) * self.width + x0 - self.x0, w);
        Some([r, g, b])
    }

    /// Whether [`Patch::linear`] reads a value at every point within `margin` pixels of (x, y)
    /// (a square about it).
    fn holds(&self, x: f64, y: f64, margin: f64) -> bool {
        let (x0, y0) = (self.x0 as f64, self.y0 as f64);
        let (x1, y1) = ((self.x0 + self.width) as f64 - 1.0, (self.y0 + self.height) as f64 - 1.0);
        x - margin >= x0 && y - margin >= y0 && x + margin < x1 && y + margin < y1
    }

    /// The profile along a ray from frame point `from` in unit direction `dir`: `n` points
    /// `step` pixels apart from `s0` pixels out, each the weighted mean (¼, ½, ¼) of the colours
    /// `half` a pixel to its left, on it and to its right, read as [`Patch::linear`] does. Into
    /// `out`; false (and `out` empty) where the patch does not hold the whole ray.
    ///
    /// The points are stepped in fixed point (2⁻²⁴ px, drifting under 10⁻⁵ px over a ray), so the
    /// inner loop has no conversion from floating point.
    pub fn ray_profile(&self, from: (f64, f64), dir: (f64, f64), (s0, step, n): (f64, f64, usize), half: f64, out: &mut Vec<[f32; 3]>) -> bool {
        out.clear();
        let at = |s: f64, o: f64| (from.0 + dir.0 * s - dir.1 * o, from.1 + dir.1 * s + dir.0 * o);
        let last = s0 + n.saturating_sub(1) as f64 * step;
        // The patch is a box: holding the ray's four corners, it holds all of it (with room for
        // the fixed point's drift).
        if n == 0 || ![(s0, half), (s0, -half), (last, half), (last, -half)].iter().all(|&(s, o)| {
            let (x, y) = at(s, o);
            self.holds(x, y, 1e-3)
        }) {
            return false;
        }
        const ONE: f64 = (1u64 << FIXED_BITS) as f64;
        let fix = |v: f64| (v * ONE).round() as i64;
        let start = at(s0, 0.0);
        let (x0, y0) = (fix(start.0 - self.x0 as f64), fix(start.1 - self.y0 as f64));
        let (dx, dy) = (fix(dir.0 * step), fix(dir.1 * step));
        let (ox, oy) = (fix(-dir.1 * half), fix(dir.0 * half));
        out.reserve(n);
        let (mut x, mut y) = (x0, y0);
        for _ in 0..n {
            let (a, b, c) = (self.fixed(x + ox, y + oy), self.fixed(x, y), self.fixed(x - ox, y - oy));
            let v: [f32; 4] = std::array::from_fn(|k| 0.25 * a[k] + 0.5 * b[k] + 0.25 * c[k]);
            out.push([v[0], v[1], v[2]]);
            (x, y) = (x + dx, y + dy);
        }
        true
    }

    /// Bilinear linear RGB at a point in fixed point from the patch's corner (in it, with the
    /// pixel to its right and below).
    #[inline(always)]
    fn fixed(&self, x: i64, y: i64) -> [f32; 4] {
        const FRACTION: i64 = (1 << FIXED_BITS) - 1;
        const SCALE: f32 = 1.0 / (1u64 << FIXED_BITS) as f32;
        let (i, j) = ((x >> FIXED_BITS) as usize, (y >> FIXED_BITS) as usize);
        self.mix(j * self.width + i, bilinear_weights((x & FRACTION) as f32 * SCALE, (y & FRACTION) as f32 * SCALE))
    }

    /// The four pixels from data index `at` (it, the one to its right and the two below) mixed
    /// by the bilinear weights `w`.
    #[inline(always)]
    fn mix(&self, at: usize, w: [f32; 4]) -> [f32; 4] {
        let (p0, p1, p2, p3) = (self.data[at], self.data[at + 1], self.data[at + self.width], self.data[at + self.width + 1]);
        // Lane by lane, in one expression each, so the four lanes go as one vector.
        std::array::from_fn(|c| 0.0 + w[0] * p0[c] + w[1] * p1[c] + w[2] * p2[c] + w[3] * p3[c])
    }
}

/// 8-bit BGR to 8-bit CIE Lab on OpenCV's scale (`COLOR_BGR2Lab`: sRGB, D65; L* × 255/100,
/// a* + 128, b* + 128), from tables: the same bytes as OpenCV's to within one step, at a cost low
/// enough to label every pixel of a frame in a few milliseconds, in parallel bands. (Within two
/// steps in dark colours, L* < 16, where OpenCV's 8-bit path strays from the formula; these
/// tables follow it.)
pub struct Lab8 {
    /// Each channel's contribution to X/Xn, Y and Z/Zn, in table steps (`F_STEPS` to 1):
    /// `[channel][value]`, channels R, G, B.
    xyz: [[[f32; 3]; 256]; 3],
    /// The Lab function f(t) = t^(1/3) (or its linear toe) at `t = k / F_STEPS`, k = 0 … F_STEPS + 1.
    f: Box<[f32; F_STEPS + 2]>,
}

/// Resolution of the f(t) table: linear interpolation then errs by under 0.04 in a*.
const F_STEPS: usize = 4096;
/// Slots (2^bits) of [`Lab8::image`]'s memory of converted colours, per band of rows.
const LAB_CACHE_BITS: u32 = 15;
/// Where f(t) turns from the cube root to its linear toe (CIE).
const F_TOE: f32 = 0.008856;

impl Default for Lab8 {
    fn default() -> Self {
        Self::new()
    }
}

impl Lab8 {
    /// The tables.
    pub fn new() -> Lab8 {
        // sRGB primaries, D65 white (as OpenCV).
        const M: [[f32; 3]; 3] = [[0.412453, 0.357580, 0.180423], [0.212671, 0.715160, 0.072169], [0.019334, 0.119193, 0.950227]];
        const WHITE: [f32; 3] = [0.950456, 1.0, 1.088754];
        let mut xyz = [[[0f32; 3]; 256]; 3];
        for v in 0..256 {
            let c = v as f32 / 255.0;
            let lin = if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) };
            for (ch, t) in xyz.iter_mut().enumerate() {
                for k in 0..3 {
                    t[v][k] = M[k][ch] * lin / WHITE[k] * F_STEPS as f32;
                }
            }
        }
        let mut f = Box::new([0f32; F_STEPS + 2]);
        for (k, v) in f.iter_mut().enumerate() {
            let t = k as f32 / F_STEPS as f32;
            *v = if t > F_TOE { t.cbrt() } else { 7.787 * t + 16.0 / 116.0 };
        }
        Lab8 { xyz, f }
    }

    /// f(t) for `x = t · F_STEPS`.
    #[inline]
    fn f(&self, x: f32) -> f32 {
        let x = x.clamp(0.0, F_STEPS as f32);
        let k = (x as usize).min(F_STEPS);
        self.f[k] + (self.f[k + 1] - self.f[k]) * (x - k as f32)
    }

    /// Lab bytes (L, a, b) of BGR bytes.
    #[inline]
    pub fn lab(&self, bgr: [u8; 3]) -> [u8; 3] {
        let (r, g, b) = (&self.xyz[0][bgr[2] as usize], &self.xyz[1][bgr[1] as usize], &self.xyz[2][bgr[0] as usize]);
        let (x, y, z) = (r[0] + g[0] + b[0], r[1] + g[1] + b[1], r[2] + g[2] + b[2]);
        let (fx, fy, fz) = (self.f(x), self.f(y), self.f(z));
        // L* × 255/100.
        let l = if y > F_TOE * F_STEPS as f32 { 2.55 * (116.0 * fy - 16.0) } else { 2.55 * 903.3 / F_STEPS as f32 * y };
        let byte = |v: f32| (v + 0.5).clamp(0.0, 255.0) as u8;
        [byte(l), byte(500.0 * (fx - fy) + 128.0), byte(200.0 * (fy - fz) + 128.0)]
    }

    /// An 8-bit BGR image in 8-bit Lab, as `COLOR_BGR2Lab` gives it to within a step, rows in
    /// parallel. (OpenCV builds its own 8-bit Lab tables in soft floating point the first time it
    /// is asked: about 0.2 s, a third of a one-off `winkeye analyze`.)
    pub fn image(&self, bgr: &impl MatTraitConst) -> opencv::Result<Mat> {
        use rayon::prelude::*;
        if bgr.typ() != opencv::core::CV_8UC3 {
            return Err(opencv::Error::new(opencv::core::StsBadArg, "Lab conversion needs an 8-bit BGR image"));
        }
        let mut out = Mat::new_rows_cols_with_default(bgr.rows(), bgr.cols(), opencv::core::CV_8UC3, opencv::core::Scalar::all(0.0))?;
        let row = bgr.cols().max(0) as usize * 3;
        if row == 0 || bgr.rows() == 0 {
            return Ok(out);
        }
        let mut copy = None;
        let src = crate::capture::contiguous_bytes(bgr, &mut copy)?;
        // In bands of rows, each remembering the colours it has converted: a frame holds a few
        // tens of thousands of distinct colours, most of them many times over.
        let band = row * (bgr.rows() as usize).div_ceil(16);
        out.data_bytes_mut()?.par_chunks_mut(band).zip(src.par_chunks(band)).for_each(|(o, s)| {
            let mut seen = vec![u64::MAX; 1 << LAB_CACHE_BITS];
            for (po, ps) in o.chunks_exact_mut(3).zip(s.chunks_exact(3)) {
                let key = (ps[0] as u64) << 16 | (ps[1] as u64) << 8 | ps[2] as u64;
                // Fibonacci hashing of the 24-bit colour; an entry holds its colour and its Lab.
                let slot = ((key as u32).wrapping_mul(0x9E37_79B1) >> (32 - LAB_CACHE_BITS)) as usize;
                let lab = if seen[slot] >> 24 == key {
                    let v = seen[slot];
                    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
                } else {
                    let lab = self.lab([ps[0], ps[1], ps[2]]);
                    seen[slot] = key << 24 | (lab[0] as u64) << 16 | (lab[1] as u64) << 8 | lab[2] as u64;
                    lab
                };
                po.copy_from_slice(&lab);
            }
        });
        Ok(out)
    }
}

/// Linear RGB (0–1) to CIE Lab (D65), for classifying a sampled colour.
pub fn linear_to_lab(rgb: [f32; 3]) -> super::colour::Lab {
    let [r, g, b] = rgb.map(|v| v as f64);
    let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    let f = |t: f64| if t > 0.008856 { t.cbrt() } else { 7.787 * t + 16.0 / 116.0 };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    super::colour::Lab { l: 116.0 * fy - 16.0, a: 500.0 * (fx - fy), b: 200.0 * (fy - fz) }
}

/// A drawing in linear light (BGR, `CV_32FC3`, 0–1) at `k` times a frame's resolution, as a
/// camera would store it: blurred there as a lens does (Gaussian, sd 1 frame pixel), shrunk to the
/// frame's pixels and written as 8-bit sRGB. For tests that need the blur where it happens.
#[cfg(test)]
pub(crate) fn frame_of_linear_drawing(big: &Mat, k: i32) -> Mat {
    use opencv::core::{Scalar, Size, Vec3b, Vec3f, BORDER_REPLICATE, CV_8UC3};
    use opencv::imgproc;
    use opencv::prelude::MatTrait;
    let (mut blurred, mut small) = (Mat::default(), Mat::default());
    imgproc::gaussian_blur(big, &mut blurred, Size::new(0, 0), f64::from(k), 0.0, BORDER_REPLICATE).expect("blur");
    imgproc::resize(&blurred, &mut small, Size::new(big.cols() / k, big.rows() / k), 0.0, 0.0, imgproc::INTER_AREA).expect("shrink");
    let srgb = |x: f32| {
        let x = f64::from(x).clamp(0.0, 1.0);
        (255.0 * if x <= 0.003_130_8 { 12.92 * x } else { 1.055 * x.powf(1.0 / 2.4) - 0.055 }).round() as u8
    };
    let mut out = Mat::new_rows_cols_with_default(small.rows(), small.cols(), CV_8UC3, Scalar::all(0.0)).expect("frame");
    for j in 0..small.rows() {
        for i in 0..small.cols() {
            let v = *small.at_2d::<Vec3f>(j, i).expect("pixel");
            *out.at_2d_mut::<Vec3b>(j, i).expect("pixel") = Vec3b::from([srgb(v[0]), srgb(v[1]), srgb(v[2])]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lab_matches_opencvs_to_one_step() {
        // Every 5th level of each channel: 52³ colours through OpenCV and through the tables.
        let levels: Vec<u8> = (0..=255u8).step_by(5).collect();
        let n = levels.len();
        let mut bgr = opencv::core::Mat::new_rows_cols_with_default(n as i32 * n as i32, n as i32, opencv::core::CV_8UC3, opencv::core::Scalar::all(0.0)).unwrap();
        for (i, &b) in levels.iter().enumerate() {
            for (j, &g) in levels.iter().enumerate() {
                for (k, &r) in levels.iter().enumerate() {
                    *bgr.at_2d_mut::<opencv::core::Vec3b>((i * n + j) as i32, k as i32).unwrap() = opencv::core::Vec3b::from([b, g, r]);
                }
            }
        }
        let mut lab = opencv::core::Mat::default();
        opencv::imgproc::cvt_color(&bgr, &mut lab, opencv::imgproc::COLOR_BGR2Lab, 0).unwrap();
        let conv = Lab8::new();
        // Largest difference in any channel: colours lighter than L* 16, and darker.
        let mut worst = [0i32; 2];
        for row in 0..bgr.rows() {
            for col in 0..bgr.cols() {
                let p = bgr.at_2d::<opencv::core::Vec3b>(row, col).unwrap().0;
                let want = lab.at_2d::<opencv::core::Vec3b>(row, col).unwrap().0;
                let got = conv.lab(p);
                // OpenCV's own 8-bit path interpolates its tables differently near black.
                let dark = want[0] < 40;
                for c in 0..3 {
                    let d = (got[c] as i32 - want[c] as i32).abs();
                    worst[dark as usize] = worst[dark as usize].max(d);
                }
            }
        }
        assert!(worst[0] <= 1 && worst[1] <= 2, "largest differences (lighter, darker than L* 16): {worst:?}");
    }

    #[test]
    fn an_image_in_lab_is_every_pixel_converted_whether_its_colour_repeats_or_it_is_a_window() {
        // Noise over a few flat colours (every colour seen again and again), then a window into
        // it, whose rows are not contiguous.
        let mut frame = noisy_frame();
        let palette = [[40u8, 90, 200], [200, 200, 30], [10, 10, 10], [120, 130, 140]];
        for y in 0..30 {
            for x in 0..40 {
                if (x * 7 + y * 3) % 5 != 0 {
                    *frame.at_2d_mut::<opencv::core::Vec3b>(y, x).unwrap() = opencv::core::Vec3b::from(palette[((x / 4 + y / 3) % 4) as usize]);
                }
            }
        }
        let conv = Lab8::new();
        let window = opencv::core::Mat::roi(&frame, opencv::core::Rect::new(5, 3, 20, 10)).unwrap();
        assert!(!window.is_continuous());
        for (lab, (x0, y0), (w, h)) in [(conv.image(&frame), (0, 0), (40, 30)), (conv.image(&window), (5, 3), (20, 10))] {
            let lab = lab.expect("an 8-bit BGR image converts");
            assert_eq!((lab.cols(), lab.rows(), lab.typ()), (w, h, opencv::core::CV_8UC3));
            for y in 0..h {
                for x in 0..w {
                    let bgr = frame.at_2d::<opencv::core::Vec3b>(y + y0, x + x0).unwrap().0;
                    assert_eq!(lab.at_2d::<opencv::core::Vec3b>(y, x).unwrap().0, conv.lab(bgr), "pixel ({x}, {y})");
                }
            }
        }
        // Anything but 8-bit BGR is refused.
        let grey = opencv::core::Mat::new_rows_cols_with_default(4, 4, opencv::core::CV_8UC1, opencv::core::Scalar::all(0.0)).unwrap();
        assert!(conv.image(&grey).is_err());
    }

    /// A 40 × 30 frame of noise.
    fn noisy_frame() -> opencv::core::Mat {
        let mut frame = opencv::core::Mat::new_rows_cols_with_default(30, 40, opencv::core::CV_8UC3, opencv::core::Scalar::all(0.0)).unwrap();
        let mut v: u32 = 12345;
        for y in 0..30 {
            for x in 0..40 {
                let mut px = [0u8; 3];
                for c in px.iter_mut() {
                    v = v.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    *c = (v >> 24) as u8;
                }
                *frame.at_2d_mut::<opencv::core::Vec3b>(y, x).unwrap() = opencv::core::Vec3b::from(px);
            }
        }
        frame
    }

    #[test]
    fn a_patch_reads_the_frame_between_pixels_as_the_view_does() {
        // Patches of a noisy frame, inside it and clipped by its edges, read at points inside,
        // across and outside them.
        let frame = noisy_frame();
        let view = LinearView::new(&frame).unwrap();
        for (centre, reach) in [((20.3, 14.8), 6.0), ((1.2, 2.0), 5.0), ((38.5, 28.9), 4.0)] {
            let patch = view.patch(centre, reach);
            let mut read = 0;
            for k in 0..400 {
                let (x, y) = (centre.0 - reach - 1.0 + (k % 20) as f64 * (reach + 1.0) / 10.0, centre.1 - reach - 1.0 + (k / 20) as f64 * (reach + 1.0) / 10.0);
                let got = patch.linear(x, y);
                let within = (x - centre.0).abs() <= reach && (y - centre.1).abs() <= reach;
                if within || got.is_some() {
                    assert_eq!(got, view.linear(x, y), "at ({x}, {y}) of a patch {reach} about {centre:?}");
                    read += got.is_some() as usize;
                }
            }
            assert!(read > 50, "{read} points read");
        }
    }

    #[test]
    fn a_ray_profile_is_the_patch_read_across_the_ray_where_the_patch_holds_it() {
        // Rays in 24 directions from points of a noisy frame, read every half pixel with the
        // points half a pixel to either side: the profile equals those points read one by one
        // (weighted ¼, ½, ¼) to within the fixed point's drift (10⁻⁵ px at most, on values
        // that change by at most 1 per pixel); a ray any of whose points the patch cannot read
        // gives no profile.
        let frame = noisy_frame();
        let view = LinearView::new(&frame).unwrap();
        let (mut whole, mut cut) = (0, 0);
        for (from, reach) in [((20.3, 14.8), 12.0), ((4.2, 5.0), 9.0), ((35.5, 26.9), 8.0)] {
            let patch = view.patch(from, reach);
            for k in 0..24 {
                let a = k as f64 / 24.0 * std::f64::consts::TAU;
                let dir = (a.cos(), a.sin());
                let (s0, step, n) = (1.0, 0.5, 14);
                let mut got = Vec::new();
                let held = patch.ray_profile(from, dir, (s0, step, n), 0.5, &mut got);
                let by_points: Option<Vec<[f32; 3]>> = (0..n)
                    .map(|i| {
                        let s = s0 + i as f64 * step;
                        let (x, y) = (from.0 + dir.0 * s, from.1 + dir.1 * s);
                        let (a, b, c) = (patch.linear(x - dir.1 * 0.5, y + dir.0 * 0.5)?, patch.linear(x, y)?, patch.linear(x + dir.1 * 0.5, y - dir.0 * 0.5)?);
                        Some([0, 1, 2].map(|k| 0.25 * a[k] + 0.5 * b[k] + 0.25 * c[k]))
                    })
                    .collect();
                match by_points {
                    Some(want) if held => {
                        whole += 1;
                        for (g, w) in got.iter().zip(&want) {
                            assert!((0..3).all(|c| (g[c] - w[c]).abs() < 2e-5), "ray {k} from {from:?}: {g:?} against {w:?}");
                        }
                    }
                    // The patch's bound keeps a thousandth of a pixel to spare.
                    Some(_) => panic!("ray {k} from {from:?} could be read but gave no profile"),
                    None => {
                        assert!(!held && got.is_empty(), "ray {k} from {from:?} leaves the patch");
                        cut += 1;
                    }
                }
            }
        }
        assert!(whole > 30 && cut > 10, "{whole} rays read whole, {cut} cut off");
    }
}
