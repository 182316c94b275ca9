//! Lens calibration from chessboard shots, with OpenCV: `findChessboardCorners`, `cornerSubPix`,
//! `calibrateCamera`. The RMS reported is the one `calibrateCamera` returns.

use super::file::ChessboardInfo;
use super::lens::Lens;
use super::CalibrateError;
use opencv::calib3d;
use opencv::core::{Mat, Point2f, Point3f, Size, TermCriteria, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use std::path::PathBuf;

/// Least shots with the board found for a lens calibration.
pub const MIN_SHOTS: usize = 4;

/// Calibrates the lens from the `frames` in which a chessboard of `pattern` inner corners
/// (columns, rows) with squares of `square_mm` is found. Returns the lens, how it was made, and
/// for each frame whether the board was found in it (the others are taken for mat frames).
pub fn calibrate_lens(frames: &[(PathBuf, Mat)], pattern: (u32, u32), square_mm: f64) -> Result<(Lens, ChessboardInfo, Vec<bool>), CalibrateError> {
    let size = Size::new(pattern.0 as i32, pattern.1 as i32);
    let mut object = Vector::<Vector<Point3f>>::new();
    let mut image = Vector::<Vector<Point2f>>::new();
    let mut used = Vec::new();
    let mut frame_size: Option<Size> = None;
    let grid: Vector<Point3f> = (0..pattern.1)
        .flat_map(|r| (0..pattern.0).map(move |c| Point3f::new((c as f64 * square_mm) as f32, (r as f64 * square_mm) as f32, 0.0)))
        .collect();
    for (path, bgr) in frames {
        let mut gray = Mat::default();
        imgproc::cvt_color(bgr, &mut gray, imgproc::COLOR_BGR2GRAY, 0)?;
        let mut corners = Vector::<Point2f>::new();
        let flags = calib3d::CALIB_CB_ADAPTIVE_THRESH | calib3d::CALIB_CB_NORMALIZE_IMAGE;
        let found = calib3d::find_chessboard_corners(&gray, size, &mut corners, flags)?;
        used.push(found);
        if !found {
            continue;
        }
        let this = Size::new(bgr.cols(), bgr.rows());
        if frame_size.is_some_and(|s| s != this) {
            return Err(CalibrateError::Chessboard { why: format!("{} is {}x{}, unlike the other chessboard shots", path.display(), this.width, this.height) });
        }
        frame_size = Some(this);
        let criteria = TermCriteria::new(opencv::core::TermCriteria_EPS + opencv::core::TermCriteria_COUNT, 40, 1e-3)?;
        imgproc::corner_sub_pix(&gray, &mut corners, Size::new(11, 11), Size::new(-1, -1), criteria)?;
        object.push(grid.clone());
        image.push(corners);
    }
    let shots = image.len();
    let Some(frame_size) = frame_size.filter(|_| shots >= MIN_SHOTS) else {
        return Err(CalibrateError::Chessboard { why: format!("the {}x{} chessboard was found in {shots} images; at least {MIN_SHOTS} are needed", pattern.0, pattern.1) });
    };
    let mut k = Mat::default();
    let mut dist = Mat::default();
    let mut rvecs = Vector::<Mat>::new();
    let mut tvecs = Vector::<Mat>::new();
    let criteria = TermCriteria::new(opencv::core::TermCriteria_EPS + opencv::core::TermCriteria_COUNT, 100, 1e-9)?;
    // Webcam lenses are described well by k1, k2 (and tangential terms); a free k3 overfits.
    let rms = calib3d::calibrate_camera(&object, &image, frame_size, &mut k, &mut dist, &mut rvecs, &mut tvecs, calib3d::CALIB_FIX_K3, criteria)?;
    let kv = |r: i32, c: i32| -> Result<f64, CalibrateError> { Ok(*k.at_2d::<f64>(r, c)?) };
    let d: Vec<f64> = (0..5).map(|i| dist.at::<f64>(i).copied().unwrap_or(0.0)).collect();
    let lens = Lens::OpenCv { fx: kv(0, 0)?, fy: kv(1, 1)?, cx: kv(0, 2)?, cy: kv(1, 2)?, dist: [d[0], d[1], d[2], d[3], d[4]] };
    Ok((lens, ChessboardInfo { pattern: [pattern.0, pattern.1], square_mm, images: shots, rms_px: rms }, used))
}
