//! Sampling a frame between pixels, in linear light, without copying it.
//!
//! A blurred step between two colours crosses halfway at the true edge only in linear light (the
//! camera's tone curve makes the bright side's share look larger), so edge positions are found on
//! values read through the inverse tone curve (gamma 2.2, close to sRGB).

use opencv::core::Mat;
use opencv::prelude::*;

/// The camera's tone curve, undone.
const GAMMA: f32 = 2.2;

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

    /// Linear RGB (0–1) at (x, y), bilinear, or `None` outside the frame.
    pub fn linear(&self, x: f64, y: f64) -> Option<[f32; 3]> {
        if !(x >= 0.0 && y >= 0.0) {
            return None;
        }
        // Truncation is the floor here (both are at least 0), and needs no call into libm.
        let (x0, y0) = (x as usize, y as usize);
        if x0 + 1 >= self.width || y0 + 1 >= self.height {
            return None;
        }
        let (fx, fy) = ((x - x0 as f64) as f32, (y - y0 as f64) as f32);
        let w = [(1.0 - fx) * (1.0 - fy), fx * (1.0 - fy), (1.0 - fx) * fy, fx * fy];
        let idx = [y0 * self.step + x0 * 3, y0 * self.step + (x0 + 1) * 3, (y0 + 1) * self.step + x0 * 3, (y0 + 1) * self.step + (x0 + 1) * 3];
        let mut out = [0f32; 3];
        for (k, &i) in idx.iter().enumerate() {
            // RGB order out of BGR bytes.
            out[0] += w[k] * self.lut[self.data[i + 2] as usize];
            out[1] += w[k] * self.lut[self.data[i + 1] as usize];
            out[2] += w[k] * self.lut[self.data[i] as usize];
        }
        Some(out)
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
