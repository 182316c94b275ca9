//! The naive detector the benchmark compares against: what a first OpenCV tutorial does —
//! HSV `inRange` per colour, external contours, `minEnclosingCircle`. No sub-pixel edges, no
//! parallax, no overlaps; it exists only to put the real detector's speed in context.

use opencv::core::{Mat, Point, Point2f, Scalar, Vector};
use opencv::imgproc;

/// Circles (x, y, radius in px) of saturated blobs in four hue bands.
pub fn naive_detect(bgr: &Mat) -> opencv::Result<Vec<(f32, f32, f32)>> {
    let mut hsv = Mat::default();
    imgproc::cvt_color(bgr, &mut hsv, imgproc::COLOR_BGR2HSV, 0)?;
    // OpenCV hue is 0–180: red wraps round 0.
    let bands: [(f64, f64); 5] = [(0.0, 10.0), (170.0, 180.0), (20.0, 35.0), (40.0, 85.0), (100.0, 130.0)];
    let mut out = Vec::new();
    for (lo, hi) in bands {
        let mut mask = Mat::default();
        opencv::core::in_range(&hsv, &Scalar::new(lo, 120.0, 60.0, 0.0), &Scalar::new(hi, 255.0, 255.0, 0.0), &mut mask)?;
        let mut contours: Vector<Vector<Point>> = Vector::new();
        imgproc::find_contours(&mask, &mut contours, imgproc::RETR_EXTERNAL, imgproc::CHAIN_APPROX_SIMPLE, Point::new(0, 0))?;
        for c in contours.iter() {
            if imgproc::contour_area(&c, false)? < 20.0 {
                continue;
            }
            let (mut centre, mut r) = (Point2f::default(), 0f32);
            imgproc::min_enclosing_circle(&c, &mut centre, &mut r)?;
            out.push((centre.x, centre.y, r));
        }
    }
    Ok(out)
}
