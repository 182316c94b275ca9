//! How long calibrating one 1920×1080 frame takes: `cargo bench --bench calibrate`.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::path::Path;
use winkeye::calibrate::{calibrate_frame, CalibrateOptions};
use winkeye::geometry::MatSpec;

fn calibrate(c: &mut Criterion) {
    let mut group = c.benchmark_group("calibrate");
    group.sample_size(30);
    for name in ["start-00001", "midgame-00003", "potout-00002"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("samples/stills/{name}.jpg"));
        let Ok(frame) = winkeye::capture::load_image(&path) else { continue };
        let opts = CalibrateOptions { mat: MatSpec::STANDARD, corners: None, lens: None, camera_height_mm: None };
        group.bench_function(format!("1920x1080 {name}"), |b| b.iter(|| black_box(calibrate_frame(&frame, &opts).map(|c| c.rms_px).unwrap_or(f64::NAN))));
    }
    group.finish();
}

criterion_group!(benches, calibrate);
criterion_main!(benches);
