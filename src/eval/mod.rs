//! Scoring winkeye's answers against the renderer's truth, so anyone can reproduce the figures
//! the README claims (`winkeye eval`).

pub mod calibration;
pub mod detection;
pub mod replay;
pub mod umpire;

use crate::geometry::Camera;
use crate::report::position::Position;
use std::path::{Path, PathBuf};

/// A rendered frame and its truth.
pub struct Case {
    /// The image file.
    pub image: PathBuf,
    /// The truth document.
    pub truth: Position,
    /// The truth camera.
    pub camera: Camera,
}

/// Why an evaluation could not run.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The folder could not be listed.
    #[error("cannot list {path}: {source}")]
    List {
        /// The folder.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// No image with a truth document beside it.
    #[error("{path} holds no image with a winkeye synth truth document beside it")]
    Empty {
        /// The folder.
        path: PathBuf,
    },
}

/// Every image in `dir` with a truth document (`<stem>.json` carrying `truth.camera`) beside it,
/// sorted by name.
pub fn cases(dir: &Path) -> Result<Vec<Case>, EvalError> {
    let rd = std::fs::read_dir(dir).map_err(|source| EvalError::List { path: dir.to_owned(), source })?;
    let mut images: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("jpg" | "jpeg" | "png")))
        .collect();
    images.sort();
    let mut out = Vec::new();
    for image in images {
        let json = image.with_extension("json");
        let Ok(truth) = Position::load(&json) else { continue };
        let Some(camera) = truth.extra.get("truth").and_then(|t| t.get("camera")).and_then(|c| serde_json::from_value::<Camera>(c.clone()).ok()) else { continue };
        out.push(Case { image, truth, camera });
    }
    if out.is_empty() {
        return Err(EvalError::Empty { path: dir.to_owned() });
    }
    Ok(out)
}

/// The value at quantile `q` (0–1) of `v` (sorted in place).
pub fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i]
}
