//! How long the scene renderer takes for one still: `cargo bench --bench synth`.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use winkeye::rules::Ruleset;
use winkeye::synth::{render_still, HandChoice, Kind, StillOptions};

fn still(c: &mut Criterion) {
    let mut group = c.benchmark_group("synth");
    group.sample_size(10);
    for (name, w, h, hand) in [("1280x720", 1280, 720, HandChoice::None), ("1920x1080", 1920, 1080, HandChoice::None), ("1920x1080+hand", 1920, 1080, HandChoice::Over)] {
        let mut seed = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                // A different scene every time, so the figure is an average over layouts.
                seed += 1;
                let o = StillOptions { kind: Kind::Midgame, seed, width: w, height: h, hand, ruleset: Ruleset::Etwa2012, closeup: false, camera_seed: None, k1: None, varied_look: false, style: Default::default(), view: None, baselines_off_mm: 0.0, wink_share: winkeye::synth::layout::WINK_SHARE, blue_corner: winkeye::geometry::Corner::NegXPosY };
                black_box(render_still(&o, None).map(|s| s.jpeg.len()).unwrap_or(0))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, still);
criterion_main!(benches);
