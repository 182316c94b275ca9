//! What replay costs per 1920×1080 frame: `cargo bench --bench replay`.
//!
//! `settle step` is the work done on every frame (shrink, compare with the anchor, state machine);
//! `decode` is the baseline every replay pays anyway: reading one frame of a 1080p MJPG AVI
//! through OpenCV's VideoCapture, and the reduced decode `winkeye replay` uses instead for frames
//! only the settle detector sees. Decoding runs on its own thread in `winkeye replay`, so the
//! throughput is bounded by the slower of the two (on two cores).

use criterion::{criterion_group, criterion_main, Criterion};
use opencv::prelude::*;
use std::hint::black_box;
use std::path::Path;
use winkeye::capture::{FrameSource, SourceEvent, VideoFile};
use winkeye::track::settle::{SettleDetector, SettleOptions, Shrinker, SmallFrame};

fn replay(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/stills/midgame-00003.jpg");
    let Ok(frame) = winkeye::capture::load_image(&path) else { return };
    // A second frame a little brighter (exposure drift), so the comparison does real work.
    let mut brighter = Mat::default();
    if frame.convert_to(&mut brighter, -1, 1.05, 2.0).is_err() {
        return;
    }
    let mut group = c.benchmark_group("replay 1920x1080");
    group.sample_size(50);
    let mut shrinker = Shrinker::new(1920, SettleOptions::default().target_width);
    let mut small = SmallFrame::default();
    group.bench_function("shrink", |b| b.iter(|| black_box(shrinker.shrink(&frame, &mut small).is_ok())));
    let mut detector = SettleDetector::new(SettleOptions::default());
    let mut t = 0.0;
    let frames = [&frame, &brighter];
    let mut k = 0usize;
    group.bench_function("settle step (shrink + compare + state)", |b| {
        b.iter(|| {
            k += 1;
            t += 1.0 / 30.0;
            let _ = shrinker.shrink(frames[k % 2], &mut small);
            black_box(detector.push(&small, t, shrinker.factor(), 1920))
        })
    });

    // Decoding: a 1080p MJPG AVI of 30 frames written once.
    let dir = tempfile::tempdir().ok();
    if let Some(dir) = &dir {
        let video = dir.path().join("bench.avi");
        let ok = (|| -> opencv::Result<bool> {
            let code = opencv::videoio::VideoWriter::fourcc('M', 'J', 'P', 'G')?;
            let mut w = opencv::videoio::VideoWriter::new(&video, code, 30.0, opencv::core::Size::new(1920, 1080), true)?;
            for i in 0..30 {
                w.write(if i % 2 == 0 { &frame } else { &brighter })?;
            }
            w.release()?;
            Ok(true)
        })()
        .unwrap_or(false);
        if ok {
            // Full decode through FFmpeg (the baseline), and what replay does instead for frames
            // only the settle detector sees: the JPEG packet decoded at 1/4 (the cell size).
            for (name, reduce) in [("decode (VideoCapture, MJPG AVI, per frame)", 1), ("decode at 1/4 (MJPG packet, libjpeg DCT scaling, per frame)", 4)] {
                let open = || {
                    VideoFile::open(&video).ok().map(|mut s| {
                        s.reduce(reduce);
                        s
                    })
                };
                group.bench_function(name, |b| {
                    let mut src = open();
                    b.iter(|| {
                        let next = src.as_mut().and_then(|s| s.next_event().ok().flatten());
                        if next.is_none() {
                            src = open();
                        }
                        black_box(matches!(next, Some(SourceEvent::Frame(_))))
                    })
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, replay);
criterion_main!(benches);
