//! What the camera does to the light: optical blur (OpenCV), exposure, vignetting, white
//! balance, the tone curve, saturation and contrast, sensor grain, sharpening and JPEG
//! compression (OpenCV).

use super::noise;
use super::render::Effects;
use image::RgbImage;
use opencv::core::{Mat, Size, Vec3b, Vec3f, Vector, BORDER_REFLECT_101};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc};

/// Gaussian blur of a linear-light image, sigma in pixels (no blur below 0.05 px).
pub fn blur(linear: &[Vec3f], w: usize, h: usize, sigma_px: f64) -> opencv::Result<Vec<Vec3f>> {
    if sigma_px < 0.05 {
        return Ok(linear.to_vec());
    }
    let src = Mat::new_rows_cols_with_data(h as i32, w as i32, linear)?;
    let mut dst = Mat::default();
    imgproc::gaussian_blur(&src, &mut dst, Size::new(0, 0), sigma_px, sigma_px, BORDER_REFLECT_101)?;
    Ok(dst.data_typed::<Vec3f>()?.to_vec())
}

/// Exposure, vignetting, white balance, the tone curve, saturation and contrast, grain and
/// sharpening: linear light to 8-bit RGB.
pub fn develop(linear: &[Vec3f], w: usize, h: usize, fx: &Effects) -> opencv::Result<RgbImage> {
    // The tone curve, tabulated: linear 0–2 in 8192 steps, interpolated.
    const STEPS: usize = 8192;
    const TOP: f64 = 2.0;
    let look = fx.look;
    let curve: Vec<f64> = (0..=STEPS + 1).map(|i| 255.0 * (i as f64 * TOP / STEPS as f64).powf(1.0 / look.gamma)).collect();
    let gains = [look.wb_gains.0, 1.0, look.wb_gains.1];
    let neutral = look.is_neutral();
    let tone = |lin: f64| {
        let x = (lin.max(0.0) / TOP * STEPS as f64).min(STEPS as f64);
        let i = x as usize;
        curve[i] + (curve[i + 1] - curve[i]) * (x - i as f64)
    };
    let (cx, cy) = (w as f64 / 2.0, h as f64 / 2.0);
    let r2max = cx * cx + cy * cy;
    let mut img = RgbImage::new(w as u32, h as u32);
    for (i, px) in img.pixels_mut().enumerate() {
        let (x, y) = ((i % w) as f64, (i / w) as f64);
        let r2 = ((x - cx).powi(2) + (y - cy).powi(2)) / r2max;
        let gain = fx.exposure * (1.0 - fx.vignette * r2);
        let v = linear[i];
        let mut s = [0.0f64; 3];
        for ch in 0..3 {
            s[ch] = tone(v[ch] as f64 * gain * gains[ch]);
        }
        if !neutral {
            let grey = (s[0] + s[1] + s[2]) / 3.0;
            for c in s.iter_mut() {
                *c = 127.5 + look.contrast * (grey + look.saturation * (*c - grey) - 127.5);
            }
        }
        for ch in 0..3 {
            let grain = fx.noise_levels * noise::grain(fx.seed.wrapping_add(ch as u64), i as i64, 0);
            px[ch] = (s[ch] + grain).round().clamp(0.0, 255.0) as u8;
        }
    }
    sharpen(img, look.sharpen)
}

/// An unsharp mask (radius 1.5 px) of `amount` (0: the image unchanged), as cameras sharpen.
fn sharpen(img: RgbImage, amount: f64) -> opencv::Result<RgbImage> {
    if amount <= 0.0 {
        return Ok(img);
    }
    let m = to_bgr_mat(&img)?;
    let mut soft = Mat::default();
    imgproc::gaussian_blur(&m, &mut soft, Size::new(0, 0), 1.5, 1.5, BORDER_REFLECT_101)?;
    let mut out = Mat::default();
    opencv::core::add_weighted(&m, 1.0 + amount, &soft, -amount, 0.0, &mut out, -1)?;
    from_bgr_mat(&out)
}

/// An 8-bit RGB image as an OpenCV BGR matrix.
pub fn to_bgr_mat(img: &RgbImage) -> opencv::Result<Mat> {
    let data: Vec<Vec3b> = img.pixels().map(|p| Vec3b::from([p[2], p[1], p[0]])).collect();
    Mat::new_rows_cols_with_data(img.height() as i32, img.width() as i32, &data)?.try_clone()
}

/// An OpenCV 8-bit BGR matrix as an RGB image.
pub fn from_bgr_mat(m: &Mat) -> opencv::Result<RgbImage> {
    let (w, h) = (m.cols() as u32, m.rows() as u32);
    let mut img = RgbImage::new(w, h);
    let cont = if m.is_continuous() { m.clone() } else { m.try_clone()? };
    for (p, v) in img.pixels_mut().zip(cont.data_typed::<Vec3b>()?) {
        *p = image::Rgb([v[2], v[1], v[0]]);
    }
    Ok(img)
}

/// JPEG bytes of `img` at `quality` (1–100).
pub fn jpeg(img: &RgbImage, quality: u8) -> opencv::Result<Vec<u8>> {
    let m = to_bgr_mat(img)?;
    let mut buf = Vector::<u8>::new();
    let params = Vector::<i32>::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, i32::from(quality)]);
    imgcodecs::imencode(".jpg", &m, &mut buf, &params)?;
    Ok(buf.to_vec())
}

/// Decodes image bytes (any format OpenCV reads) to RGB.
pub fn decode(bytes: &[u8]) -> opencv::Result<RgbImage> {
    let buf = Vector::<u8>::from_slice(bytes);
    let m = imgcodecs::imdecode(&buf, imgcodecs::IMREAD_COLOR)?;
    from_bgr_mat(&m)
}
