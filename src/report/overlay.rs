//! Pictures drawn over a frame: what calibration found.

use super::draw;
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
        curve(&mut img, c[k], c[(k + 1) % 4], OUTLINE);
    }
    for b in cal.mat.baselines() {
        curve(&mut img, b.segment.a, b.segment.b, BASELINE);
    }
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
    let (tw, th) = draw::text_extent(16.0 * scale, &legend);
    for y in 0..(th + 12).min(img.height()) {
        for x in 0..(tw + 16).min(img.width()) {
            let p = img.get_pixel_mut(x, y);
            *p = Rgb([p[0] / 3, p[1] / 3, p[2] / 3]);
        }
    }
    draw::text(&mut img, 8, 6, 16.0 * scale, Rgb([255, 255, 255]), &legend);
    Ok(img)
}
