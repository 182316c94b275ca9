//! Synthetic clips: the video reads back, the truth's frame ranges and settled positions agree
//! with what moves and with the shot.

use opencv::core::Mat;
use opencv::prelude::*;
use opencv::videoio::{VideoCapture, CAP_ANY};
use winkeye::report::position::WinkState;
use winkeye::rules::Ruleset;
use winkeye::synth::clip::{render_clip, ClipOptions, Outcome};

fn frames(path: &std::path::Path) -> Vec<Mat> {
    let mut cap = VideoCapture::from_file(path, CAP_ANY).expect("opens");
    let mut out = Vec::new();
    let mut m = Mat::default();
    while cap.read(&mut m).unwrap_or(false) && !m.empty() {
        out.push(m.clone());
    }
    out
}

fn mean_abs_diff(a: &Mat, b: &Mat) -> f64 {
    let mut d = Mat::default();
    opencv::core::absdiff(a, b, &mut d).expect("absdiff");
    let s = opencv::core::mean(&d, &opencv::core::no_array()).expect("mean");
    (s[0] + s[1] + s[2]) / 3.0
}

#[test]
fn clips_match_their_truth() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    for (seed, outcome) in [(1, Outcome::Squop), (2, Outcome::Pot), (3, Outcome::Off)] {
        let opts = ClipOptions { seed, width: 320, height: 180, fps: 6.0, outcome: Some(outcome), ruleset: Ruleset::Etwa2012, bump: false };
        let video = dir.path().join(format!("clip-{seed}.avi"));
        let truth = render_clip(&opts, &video, &mut |_, _| {})?;
        let fs = frames(&video);
        assert_eq!(fs.len() as u64, truth.frames, "every frame written and readable");

        let [before, after] = [&truth.settled[0], &truth.settled[1]];
        let hand = truth.motion.iter().find(|m| m.what == "hand").expect("hand motion");
        assert!(before.frames.last < hand.frames.first && hand.frames.last < after.frames.first);
        assert_eq!(after.frames.last, truth.frames - 1);
        let slide = truth.motion.iter().find(|m| m.what == truth.shot.wink).expect("the wink moves");
        assert!(hand.frames.first <= slide.frames.first && slide.frames.last <= hand.frames.last);

        // Within a settled span only grain and exposure drift change; the hand changes a lot.
        let still = mean_abs_diff(&fs[before.frames.first as usize], &fs[before.frames.last as usize]);
        let mid = (hand.frames.first + hand.frames.last) as usize / 2;
        let moving = mean_abs_diff(&fs[before.frames.first as usize], &fs[mid]);
        assert!(still < 4.0, "settled frames differ by {still:.2} levels");
        assert!(moving > still, "the hand shows: {moving:.2} vs {still:.2}");

        // The positions before and after agree with the shot.
        let find = |p: &winkeye::report::position::Position| p.winks.iter().find(|w| w.id == truth.shot.wink).cloned().expect("listed");
        let (w0, w1) = (find(&before.position), find(&after.position));
        assert_eq!(w0.state, WinkState::InPlay);
        match outcome {
            Outcome::Squop => {
                let target = truth.shot.target.clone().expect("a target");
                assert!(after.position.squops.iter().any(|s| s.upper == truth.shot.wink && s.lower == target), "{} squops {target}", truth.shot.wink);
                assert!(!before.position.squops.iter().any(|s| s.upper == truth.shot.wink));
            }
            Outcome::Pot => assert_eq!(w1.state, WinkState::Potted),
            Outcome::Off => assert_eq!(w1.state, WinkState::Off),
            Outcome::Move => {}
        }
        assert_eq!(before.position.winks.len(), 24);
        assert_eq!(after.position.winks.len(), 24);
    }
    Ok(())
}
