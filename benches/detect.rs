//! How long detection takes once calibrated (colour model, candidates, sub-pixel fits, stacking,
//! states): `cargo bench --bench detect`. The same frames through a naive OpenCV detector (HSV
//! `inRange`, contours, `minEnclosingCircle`) for comparison.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::path::Path;
use winkeye::calibrate::{calibrate_frame, CalibrateOptions};
use winkeye::geometry::MatSpec;
use winkeye::rules::Ruleset;

fn frames() -> Vec<(String, opencv::core::Mat)> {
    let mut out = Vec::new();
    for name in ["midgame-00003", "nearmiss-00005", "potout-00002"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("samples/stills/{name}.jpg"));
        if let Ok(frame) = winkeye::capture::load_image(&path) {
            out.push((format!("1920x1080 {name}"), frame));
        }
    }
    // Another renderer's frame on green felt, whose green winks no pixel tells from the felt: the
    // search by shape (`detect::search`) runs.
    let other = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/other-renderer/alt36-1047.jpg");
    if let Ok(frame) = winkeye::capture::load_image(&other) {
        out.push(("1920x1080 alt36-1047 (another renderer, green felt)".into(), frame));
    }
    // 3840×2160: the same scene, upscaled (the detector's work grows with the mat's size in pixels).
    if let Some((_, f)) = out.iter().find(|(name, _)| name.ends_with("midgame-00003")) {
        let mut big = opencv::core::Mat::default();
        if opencv::imgproc::resize(f, &mut big, opencv::core::Size::new(3840, 2160), 0.0, 0.0, opencv::imgproc::INTER_CUBIC).is_ok() {
            out.push(("3840x2160 midgame-00003 (upscaled)".into(), big));
        }
    }
    out
}

fn detect(c: &mut Criterion) {
    let mut group = c.benchmark_group("detect");
    group.sample_size(20);
    for (name, frame) in frames() {
        let opts = CalibrateOptions { mat: MatSpec::STANDARD, corners: None, lens: None, camera_height_mm: None };
        let Ok(cal) = calibrate_frame(&frame, &opts) else { continue };
        group.bench_function(format!("winkeye {name}"), |b| b.iter(|| black_box(winkeye::detect::detect(&frame, &cal, Ruleset::Etwa2012).map(|d| d.found.len()).unwrap_or(0))));
        group.bench_function(format!("naive opencv {name}"), |b| b.iter(|| black_box(winkeye::detect::naive::naive_detect(&frame).map(|d| d.len()).unwrap_or(0))));
    }
    group.finish();
}

criterion_group!(benches, detect);
criterion_main!(benches);
