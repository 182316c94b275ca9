//! Deterministic noise for textures and sensor grain: a hash of integer coordinates and a seed,
//! smooth value noise built on it, and fractal sums of that. Pure functions of their inputs, so a
//! picture is the same whatever order its pixels are computed in.

/// A well-mixed 64-bit hash of a seed and two integer coordinates (SplitMix64's finaliser).
pub fn hash3(seed: u64, x: i64, y: i64) -> u64 {
    let mut z = seed
        .wrapping_add((x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add((y as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform value in [0, 1) from the hash.
pub fn unit(seed: u64, x: i64, y: i64) -> f64 {
    (hash3(seed, x, y) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A standard normal value from the hash (Box–Muller on two hashed uniforms).
pub fn gaussian(seed: u64, x: i64, y: i64) -> f64 {
    let u1 = unit(seed, x, y).max(1e-12);
    let u2 = unit(seed ^ 0x5DEE_CE66_D1CE_4E5B, x, y);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Smooth value noise in [-1, 1] at (x, y), with features about one unit across.
pub fn value(seed: u64, x: f64, y: f64) -> f64 {
    let (x0, y0) = (fast_floor(x), fast_floor(y));
    let (fx, fy) = (x - x0, y - y0);
    let (sx, sy) = (fx * fx * (3.0 - 2.0 * fx), fy * fy * (3.0 - 2.0 * fy));
    let (ix, iy) = (x0 as i64, y0 as i64);
    let v = |dx: i64, dy: i64| unit(seed, ix + dx, iy + dy) * 2.0 - 1.0;
    let a = v(0, 0) + (v(1, 0) - v(0, 0)) * sx;
    let b = v(0, 1) + (v(1, 1) - v(0, 1)) * sx;
    a + (b - a) * sy
}

/// `x.floor()` without a libm call on baseline x86-64.
fn fast_floor(x: f64) -> f64 {
    let t = x as i64 as f64;
    if t > x {
        t - 1.0
    } else {
        t
    }
}

/// An approximately standard normal value from the hash: the sum of four uniforms, rescaled
/// (Irwin–Hall), which is cheaper than Box–Muller and close enough for sensor grain.
pub fn grain(seed: u64, x: i64, y: i64) -> f64 {
    let h = hash3(seed, x, y);
    let sum: u64 = (0..4).map(|k| (h >> (16 * k)) & 0xFFFF).sum();
    (sum as f64 / 65535.0 - 2.0) * (3.0f64).sqrt()
}

/// A fractal sum of `octaves` value noises, each half the size and amplitude of the last,
/// normalised to about [-1, 1]; `scale` is the size of the largest features.
pub fn fbm(seed: u64, x: f64, y: f64, scale: f64, octaves: u32) -> f64 {
    let mut sum = 0.0;
    let mut amp = 1.0;
    let mut norm = 0.0;
    let mut f = 1.0 / scale;
    for o in 0..octaves {
        sum += amp * value(seed.wrapping_add(o as u64 * 7919), x * f, y * f);
        norm += amp;
        amp *= 0.5;
        f *= 2.0;
    }
    sum / norm
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_deterministic_bounded_and_varied() {
        let a: Vec<f64> = (0..100).map(|i| fbm(7, i as f64 * 0.37, 1.5, 3.0, 3)).collect();
        let b: Vec<f64> = (0..100).map(|i| fbm(7, i as f64 * 0.37, 1.5, 3.0, 3)).collect();
        assert_eq!(a, b);
        assert!(a.iter().all(|v| v.abs() <= 1.0));
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        let var = a.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / a.len() as f64;
        assert!(var > 0.01, "variance {var}");
        let g: Vec<f64> = (0..20000).map(|i| gaussian(3, i, 0)).collect();
        let m = g.iter().sum::<f64>() / g.len() as f64;
        let s = (g.iter().map(|v| (v - m).powi(2)).sum::<f64>() / g.len() as f64).sqrt();
        assert!(m.abs() < 0.03 && (s - 1.0).abs() < 0.03, "mean {m}, sd {s}");
    }
}
