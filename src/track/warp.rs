//! A frame seen through one calibration redrawn as the camera sees it through another: after the
//! camera or the mat was knocked, the last settled frame is brought into the new view so that
//! "has the picture changed round this wink since the last settle?" can still be answered.
//!
//! Every pixel of the new view is taken to the mat's plane by the new calibration and back into
//! the old frame by the old one (lens included). Winks stand 1.5–3 mm above the plane, so their
//! parallax differs between the two views by a small fraction of a pixel for a knock of a few
//! degrees and centimetres: well under the settle detector's cells.

use crate::calibrate::Calibration;
use crate::geometry::PixelPoint;
use opencv::core::{Mat, Scalar, Vec2f, CV_32FC2};
use opencv::prelude::*;

/// Spacing of the grid on which the mapping is computed exactly, in pixels; between grid points it
/// is interpolated bilinearly (lens distortion and perspective bend it far less than a hundredth
/// of a pixel over this span).
const GRID_PX: usize = 8;

/// `frame`, taken when `from` held, as it would look under `to` (same size as `frame`). Pixels
/// that `from`'s frame did not see are black, so they read as changed, never as unchanged.
pub fn between(frame: &Mat, from: &Calibration, to: &Calibration) -> opencv::Result<Mat> {
    let (w, h) = (frame.cols().max(0) as usize, frame.rows().max(0) as usize);
    let (gw, gh) = (w.div_ceil(GRID_PX) + 1, h.div_ceil(GRID_PX) + 1);
    // Where each grid point of the new view was in the old frame; NaN where the mapping fails.
    let grid: Vec<(f32, f32)> = (0..gh * gw)
        .map(|k| {
            let p = PixelPoint::new(((k % gw) * GRID_PX) as f64, ((k / gw) * GRID_PX) as f64);
            match to.image_to_mat(p).and_then(|m| from.mat_to_image(m)) {
                Some(q) if q.is_finite() => (q.x as f32, q.y as f32),
                _ => (f32::NAN, f32::NAN),
            }
        })
        .collect();
    let mut map = Mat::new_rows_cols_with_default(h as i32, w as i32, CV_32FC2, Scalar::all(-1.0))?;
    let step = GRID_PX as f32;
    for y in 0..h {
        let (j, ty) = (y / GRID_PX, (y % GRID_PX) as f32 / step);
        let row = map.at_row_mut::<Vec2f>(y as i32)?;
        for (x, out) in row.iter_mut().enumerate() {
            let (i, tx) = (x / GRID_PX, (x % GRID_PX) as f32 / step);
            let g = |di: usize, dj: usize| grid[(j + dj) * gw + i + di];
            let (a, b, c, d) = (g(0, 0), g(1, 0), g(0, 1), g(1, 1));
            let lerp = |p: f32, q: f32, t: f32| p + (q - p) * t;
            let px = lerp(lerp(a.0, b.0, tx), lerp(c.0, d.0, tx), ty);
            let py = lerp(lerp(a.1, b.1, tx), lerp(c.1, d.1, tx), ty);
            // A failed corner leaves the pixel unmapped (outside the old frame: black).
            *out = if px.is_finite() && py.is_finite() { Vec2f::from([px, py]) } else { Vec2f::from([-1.0e6, -1.0e6]) };
        }
    }
    let mut out = Mat::default();
    opencv::imgproc::remap(frame, &mut out, &map, &Mat::default(), opencv::imgproc::INTER_LINEAR, opencv::core::BORDER_CONSTANT, Scalar::all(0.0))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::track::tests::calibration_with_corners;
    use opencv::core::{Point, CV_8UC3};

    /// Felt on a table with a wink drawn at one mat point, as the camera with corners `corners`
    /// sees it.
    fn view(corners: [(f64, f64); 4]) -> Result<(Mat, Calibration), Box<dyn std::error::Error>> {
        let cal = calibration_with_corners(320, 180, corners)?;
        let mut m = Mat::new_rows_cols_with_default(180, 320, CV_8UC3, Scalar::new(60.0, 60.0, 60.0, 0.0))?;
        let quad: opencv::core::Vector<Point> = cal.corners_px.iter().map(|c| Point::new(c.x.round() as i32, c.y.round() as i32)).collect();
        opencv::imgproc::fill_poly(&mut m, &opencv::core::Vector::<opencv::core::Vector<Point>>::from_iter([quad]), Scalar::new(110.0, 120.0, 115.0, 0.0), opencv::imgproc::LINE_AA, 0, Point::new(0, 0))?;
        let c = cal.mat_to_image(crate::geometry::MatPoint::new(-300.0, 120.0)).ok_or("wink")?;
        opencv::imgproc::circle(&mut m, Point::new(c.x.round() as i32, c.y.round() as i32), 5, Scalar::new(200.0, 40.0, 40.0, 0.0), -1, opencv::imgproc::LINE_8, 0)?;
        Ok((m, cal))
    }

    #[test]
    fn the_old_view_redrawn_matches_the_new_one() -> Result<(), Box<dyn std::error::Error>> {
        let (old, old_cal) = view([(20.0, 20.0), (300.0, 20.0), (300.0, 160.0), (20.0, 160.0)])?;
        // Knocked: turned about 1.5° and shifted a few pixels.
        let (new, new_cal) = view([(29.0, 18.0), (309.0, 25.0), (305.0, 165.0), (25.0, 158.0)])?;
        let warped = between(&old, &old_cal, &new_cal)?;
        let (mut before, mut after) = (0usize, 0usize);
        for y in 30..150 {
            for x in 35..290 {
                let (a, b, n) = (old.at_2d::<opencv::core::Vec3b>(y, x)?, warped.at_2d::<opencv::core::Vec3b>(y, x)?, new.at_2d::<opencv::core::Vec3b>(y, x)?);
                let differs = |p: &opencv::core::Vec3b| (0..3).any(|c| (p[c] as i32 - n[c] as i32).abs() > 40);
                before += differs(a) as usize;
                after += differs(b) as usize;
            }
        }
        // The wink (a disc of ~80 px) is in a different place in the unwarped frame; redrawn, only
        // a pixel or two of its rim may differ (the disc is drawn on whole pixels in each view).
        assert!(before >= 80, "the knock moved the wink in the picture: {before} px differ");
        assert!(after <= 12, "{after} px still differ after redrawing");
        Ok(())
    }
}
