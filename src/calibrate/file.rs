//! Calibration files (TOML, `winkeye.calibration/1`): what `winkeye calibrate` writes and every
//! command that takes frames reads with `--calibration FILE`.
//!
//! ```toml
//! format = "winkeye.calibration/1"
//!
//! [frame]                 # the frames this calibration is for
//! width = 1920
//! height = 1080
//!
//! [lens]                  # model = "pinhole" | "radial" | "division" | "open_cv" (see Lens)
//! model = "open_cv"
//! fx = 1391.2
//! fy = 1390.8
//! cx = 961.3
//! cy = 538.9
//! dist = [-0.201, 0.031, 0.0001, -0.0002, 0.0]
//!
//! [chessboard]            # present when the lens came from chessboard shots
//! pattern = [9, 6]        # inner corners
//! square_mm = 25.0
//! images = 12
//! rms_px = 0.21           # as OpenCV's calibrateCamera returned it
//!
//! [mat]                   # present when a mat was calibrated
//! length_mm = 1828.8
//! width_mm = 914.4
//! baseline_from_centre_mm = 914.4
//! corners_px = [[x, y], [x, y], [x, y], [x, y]]   # (−X,+Y), (+X,+Y), (+X,−Y), (−X,−Y)
//! img_from_mat = [[…], […], […]]  # homography: mat mm → undistorted pixels
//! rms_px = 0.25
//! orientation = "unplayed_winks"  # or "image", "corners"
//! blue_corner = "neg_x_pos_y"     # whose baseline blue starts behind; the others clockwise
//! felt_lab = [150.0, 126.0, 131.0]
//!
//! [camera]                # the camera's pose, for parallax
//! focal_px = 1391.0
//! focal_source = "lens"   # or "homography", "prior"
//! …
//!
//! [winks]               # optional: the set as measured, mm across (calipers)
//! large_mm = 21.35
//! small_mm = 15.5
//! ```

use super::lens::Lens;
use super::pose::CameraPose;
use super::{Calibration, Orientation};
use crate::geometry::{Corner, MatSpec, PixelPoint};
use crate::report::position::NominalDiameters;
use nalgebra::Matrix3;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `format` string of a calibration file.
pub const CALIBRATION_FORMAT: &str = "winkeye.calibration/1";

/// The frames a calibration is for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FrameSize {
    /// Width, in pixels.
    pub width: u32,
    /// Height, in pixels.
    pub height: u32,
}

/// How a lens was calibrated from chessboard shots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChessboardInfo {
    /// Inner corners (columns, rows).
    pub pattern: [u32; 2],
    /// Side of a square, in mm.
    pub square_mm: f64,
    /// Shots in which the board was found.
    pub images: usize,
    /// RMS reprojection error as `calibrateCamera` returned it, in pixels.
    pub rms_px: f64,
}

/// The mat's calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatSection {
    /// Length, in mm.
    pub length_mm: f64,
    /// Width, in mm.
    pub width_mm: f64,
    /// Where the baselines cross the diagonals, from the centre, in mm.
    pub baseline_from_centre_mm: f64,
    /// Corners in the frame, contract order.
    pub corners_px: [[f64; 2]; 4],
    /// Homography mat mm → undistorted pixels, row-major.
    pub img_from_mat: [[f64; 3]; 3],
    /// Residual RMS of the fit, in pixels.
    pub rms_px: f64,
    /// How +x was chosen.
    pub orientation: Orientation,
    /// The felt's colour, CIE Lab (OpenCV 8-bit scale).
    pub felt_lab: [f64; 3],
    /// Edge points the fit used.
    pub edge_points: usize,
    /// Baseline points the fit used.
    pub baseline_points: usize,
    /// Each baseline as found painted, mm further from the centre than the rules put it, in the
    /// contract's corner order (`nan` where none was seen; TOML has no null). Absent in files
    /// written before session 32: the baselines are then where the rules put them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baselines_found_mm: Option<[f64; 4]>,
    /// The corner blue's winks start behind ([`Calibration::blue_corner`]). Absent in files
    /// written before session 36: (−X,+Y), as those versions took it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blue_corner: Option<Corner>,
}

/// The furthest a calibration file may place a baseline from where the rules put it, mm (the
/// calibration itself searches a few mm either side).
const MAX_BASELINE_OFFSET_MM: f64 = 50.0;

/// A calibration file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationFile {
    /// Always [`CALIBRATION_FORMAT`].
    pub format: String,
    /// The frames it is for.
    pub frame: FrameSize,
    /// The lens.
    pub lens: Lens,
    /// Chessboard provenance of the lens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chessboard: Option<ChessboardInfo>,
    /// The mat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mat: Option<MatSection>,
    /// The camera's pose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<CameraPose>,
    /// The set's winks as measured, mm across (`winkeye calibrate --wink-diameters`): margins use
    /// them in place of a typical real wink's ([`Calibration::wink_diameters`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winks: Option<NominalDiameters>,
}

/// Why a calibration file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// Not valid TOML of this format.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the TOML parser said, on one line.
        message: String,
    },
    /// Another format or version.
    #[error("{path}: \"format\" is \"{found}\", expected \"{CALIBRATION_FORMAT}\"")]
    Format {
        /// The file.
        path: PathBuf,
        /// What it said.
        found: String,
    },
    /// Serialising failed.
    #[error("cannot encode the calibration: {0}")]
    Encode(#[from] toml::ser::Error),
}

impl CalibrationFile {
    /// The file for a calibrated frame.
    pub fn from_calibration(c: &Calibration, chessboard: Option<ChessboardInfo>) -> CalibrationFile {
        let g = c.img_from_mat;
        CalibrationFile {
            format: CALIBRATION_FORMAT.into(),
            frame: FrameSize { width: c.width, height: c.height },
            lens: c.lens.clone(),
            chessboard,
            mat: Some(MatSection {
                length_mm: c.mat.length_mm,
                width_mm: c.mat.width_mm,
                baseline_from_centre_mm: c.mat.baseline_from_centre_mm,
                corners_px: c.corners_px.map(|p| [p.x, p.y]),
                img_from_mat: [[g[(0, 0)], g[(0, 1)], g[(0, 2)]], [g[(1, 0)], g[(1, 1)], g[(1, 2)]], [g[(2, 0)], g[(2, 1)], g[(2, 2)]]],
                rms_px: c.rms_px,
                orientation: c.orientation,
                felt_lab: c.felt_lab,
                edge_points: c.edge_points,
                baseline_points: c.baseline_points,
                baselines_found_mm: Some(c.baselines_found.map(|o| o.unwrap_or(f64::NAN))),
                blue_corner: Some(c.blue_corner),
            }),
            camera: c.camera,
            winks: c.wink_diameters,
        }
    }

    /// The calibration this file holds, if it holds a mat.
    pub fn calibration(&self) -> Option<Calibration> {
        let m = self.mat.as_ref()?;
        let g = Matrix3::from_fn(|i, j| m.img_from_mat[i][j]);
        let baselines_found = m.baselines_found_mm.map_or([None; 4], |o| o.map(|v| v.is_finite().then_some(v)));
        Some(Calibration {
            width: self.frame.width,
            height: self.frame.height,
            mat: MatSpec::new(m.length_mm, m.width_mm, m.baseline_from_centre_mm).with_painted(baselines_found.map(|o| o.unwrap_or(0.0))),
            lens: self.lens.clone(),
            img_from_mat: g,
            mat_from_img: g.try_inverse()?,
            corners_px: m.corners_px.map(|[x, y]| PixelPoint::new(x, y)),
            rms_px: m.rms_px,
            orientation: m.orientation,
            edge_points: m.edge_points,
            baseline_points: m.baseline_points,
            baselines_found,
            felt_lab: m.felt_lab,
            camera: self.camera,
            pot_check: None,
            wink_diameters: self.winks,
            blue_corner: m.blue_corner.unwrap_or(Corner::NegXPosY),
        })
    }

    /// Reads a calibration file.
    pub fn load(path: &Path) -> Result<CalibrationFile, FileError> {
        let text = std::fs::read_to_string(path).map_err(|source| FileError::Read { path: path.to_owned(), source })?;
        let value: toml::Value = toml::from_str(&text).map_err(|e| FileError::Parse { path: path.to_owned(), message: one_line(&e.to_string()) })?;
        let found = value.get("format").and_then(|f| f.as_str()).unwrap_or("").to_string();
        if found != CALIBRATION_FORMAT {
            return Err(FileError::Format { path: path.to_owned(), found });
        }
        let file: CalibrationFile = toml::from_str(&text).map_err(|e| FileError::Parse { path: path.to_owned(), message: one_line(&e.to_string()) })?;
        let wild = file.mat.as_ref().and_then(|m| m.baselines_found_mm).and_then(|o| o.into_iter().find(|v| v.abs() > MAX_BASELINE_OFFSET_MM));
        if let Some(v) = wild {
            return Err(FileError::Parse { path: path.to_owned(), message: format!("mat.baselines_found_mm has {v} mm: a baseline painted further than {MAX_BASELINE_OFFSET_MM} mm off is another line") });
        }
        if let Some(why) = file.winks.and_then(|w| implausible_diameters(&w)) {
            return Err(FileError::Parse { path: path.to_owned(), message: format!("winks: {why}") });
        }
        Ok(file)
    }

    /// The file's text.
    pub fn to_toml(&self) -> Result<String, FileError> {
        let body = toml::to_string(self)?;
        Ok(format!("# winkeye calibration: see src/calibrate/file.rs for every field.\n{body}"))
    }
}

/// Why a set's stated diameters (mm) cannot be winks', if they cannot: each 5–40 mm, the small
/// under the large.
pub fn implausible_diameters(d: &NominalDiameters) -> Option<String> {
    let ok = |v: f64| v.is_finite() && (5.0..=40.0).contains(&v);
    if !(ok(d.large_mm) && ok(d.small_mm)) {
        Some(format!("large_mm {} and small_mm {} must each be 5-40 mm", d.large_mm, d.small_mm))
    } else if d.small_mm >= d.large_mm {
        Some(format!("small_mm {} is not under large_mm {}", d.small_mm, d.large_mm))
    } else {
        None
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sets_stated_diameters_are_kept_and_sizes_no_set_has_are_refused() -> Result<(), Box<dyn std::error::Error>> {
        let ok = NominalDiameters { large_mm: 21.35, small_mm: 15.5 };
        assert_eq!(implausible_diameters(&ok), None);
        for bad in [(16.0, 22.0), (21.0, 21.0), (80.0, 16.0), (22.0, f64::NAN), (22.0, 2.0)] {
            let d = NominalDiameters { large_mm: bad.0, small_mm: bad.1 };
            assert!(implausible_diameters(&d).is_some(), "{bad:?}");
        }
        let dir = tempfile::tempdir()?;
        let file = CalibrationFile { format: CALIBRATION_FORMAT.into(), frame: FrameSize { width: 1920, height: 1080 }, lens: Lens::Pinhole, chessboard: None, mat: None, camera: None, winks: Some(ok) };
        let path = dir.path().join("c.toml");
        std::fs::write(&path, file.to_toml()?)?;
        assert_eq!(CalibrationFile::load(&path)?.winks, Some(ok));
        // A file without them (every file before session 35) reads as before.
        std::fs::write(&path, CalibrationFile { winks: None, ..file.clone() }.to_toml()?)?;
        assert_eq!(CalibrationFile::load(&path)?.winks, None);
        // Sizes no set has: one line naming the section.
        let text = file.to_toml()?.replace("small_mm = 15.5", "small_mm = 25.0");
        std::fs::write(&path, text)?;
        let err = CalibrationFile::load(&path).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("winks: small_mm 25 is not under large_mm 21.35"), "{err}");
        Ok(())
    }
}
