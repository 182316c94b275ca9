//! `winkeye replay` and `winkeye watch` on the real binary: rendered clips give the truth of
//! when the scene is settled; bad inputs fail cleanly without touching existing outputs.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn winkeye() -> Command {
    Command::cargo_bin("winkeye").expect("the winkeye binary is built")
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Renders a small clip (640x360, 15 fps) and returns its video and truth.
fn render(dir: &Path, seed: u64, outcome: &str) -> Result<(PathBuf, Value), Box<dyn std::error::Error>> {
    let (code, _, err) = run(winkeye()
        .args(["synth", "--clip", "--resolution", "640x360", "--fps", "15", "--outcome", outcome, "--seed"])
        .arg(seed.to_string())
        .arg("--out")
        .arg(dir));
    assert_eq!(code, 0, "{err}");
    let truth: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("clip-{seed:05}.json")))?)?;
    Ok((dir.join(format!("clip-{seed:05}.avi")), truth))
}

/// Reads a JSON Lines event stream, checking every line.
fn events(path: &Path) -> Result<Vec<Value>, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path)?;
    assert!(text.ends_with('\n'), "the last line is whole");
    let mut out = Vec::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line)?;
        assert_eq!(v["format"], "winkeye.event/1", "{line}");
        assert!(v["t_s"].is_number() && v["frame"].is_u64() && v["kind"].is_string(), "{line}");
        out.push(v);
    }
    Ok(out)
}

fn kinds(evs: &[Value]) -> Vec<&str> {
    evs.iter().filter_map(|e| e["kind"].as_str()).filter(|k| *k != "flag").collect()
}

/// The settled events match the truth's settled spans, one motion between them, and the end
/// counts every frame.
fn check_clip(seed: u64, outcome: &str, annotate: bool) -> TestResult {
    let dir = tempfile::tempdir()?;
    let (video, truth) = render(dir.path(), seed, outcome)?;
    let out = dir.path().join("events.jsonl");
    let mut cmd = winkeye();
    cmd.arg("replay").arg(&video).arg("--events").arg(&out);
    let annotated = dir.path().join("annotated.avi");
    if annotate {
        cmd.arg("--annotated").arg(&annotated);
    }
    let (code, _, err) = run(&mut cmd);
    assert_eq!(code, 0, "{err}");
    let evs = events(&out)?;
    let spans = truth["settled"].as_array().ok_or("settled spans")?;
    let settled: Vec<&Value> = evs.iter().filter(|e| e["kind"] == "settled").collect();
    assert_eq!(settled.len(), spans.len(), "one settled event per settled span: {:?}", kinds(&evs));
    let hand_last = truth["motion"].as_array().ok_or("motion")?.iter().filter_map(|m| m["frames"]["last"].as_u64()).max().unwrap_or(0);
    for (e, span) in settled.iter().zip(spans) {
        let f = e["frame"].as_u64().ok_or("frame")?;
        let (first, last) = (span["frames"]["first"].as_u64().ok_or("first")?, span["frames"]["last"].as_u64().ok_or("last")?);
        assert!(f >= first && f <= last, "settled at frame {f}, truth span {first}-{last}");
        assert_eq!(e["position"]["format"], "winkeye.position/1");
        assert_eq!(e["position"]["source"]["frame"], f);
        eprintln!("seed {seed} {outcome}: settled at frame {f} (span {first}-{last}, {} frames after it began)", f - first);
    }
    let second = settled[1]["frame"].as_u64().ok_or("frame")?;
    assert!(second > hand_last, "not before the hand has left (frame {hand_last})");
    let k = kinds(&evs);
    let (i0, i1) = (k.iter().position(|k| *k == "settled").ok_or("settled")?, k.iter().rposition(|k| *k == "settled").ok_or("settled")?);
    assert_eq!(k[i0 + 1..i1].iter().filter(|k| **k == "motion").count(), 1, "{k:?}");
    assert_eq!(k.iter().filter(|k| **k == "shot").count(), 1, "{k:?}");
    let end = evs.last().ok_or("events")?;
    assert_eq!(end["kind"], "end");
    assert_eq!(end["frames_read"], truth["frames"]);
    assert_eq!(end["frames_skipped"], 0);
    assert_eq!(end["reason"], "end_of_footage");
    if annotate {
        assert!(std::fs::metadata(&annotated)?.len() > 10_000, "the annotated video is written");
    }
    Ok(())
}

#[test]
fn replay_settles_around_a_move() -> TestResult {
    check_clip(1, "move", false)
}

#[test]
fn replay_settles_around_a_squop_and_annotates() -> TestResult {
    check_clip(12, "squop", true)
}

#[test]
fn replay_settles_around_a_pot() -> TestResult {
    check_clip(13, "pot", false)
}

fn sample_clip() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/clips/clip-00001.avi")
}

#[test]
fn a_truncated_video_is_read_as_far_as_it_goes() -> TestResult {
    let dir = tempfile::tempdir()?;
    let bytes = std::fs::read(sample_clip())?;
    let cut = dir.path().join("cut.avi");
    std::fs::write(&cut, &bytes[..bytes.len() / 2])?;
    let out = dir.path().join("events.jsonl");
    let (code, _, err) = run(winkeye().arg("replay").arg(&cut).arg("--events").arg(&out));
    if code == 0 {
        let evs = events(&out)?;
        let end = evs.last().ok_or("events")?;
        assert_eq!(end["kind"], "end");
        let (read, skipped) = (end["frames_read"].as_u64().ok_or("read")?, end["frames_skipped"].as_u64().ok_or("skipped")?);
        assert!(read > 0 && read < 68, "{read} of 68 frames read");
        eprintln!("cut clip: {read} frames read, {skipped} skipped");
    } else {
        assert_eq!(code, 1, "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    Ok(())
}

#[test]
fn a_missing_video_fails_in_one_line_and_leaves_the_events_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("events.jsonl");
    std::fs::write(&out, "precious\n")?;
    let (code, _, err) = run(winkeye().arg("replay").arg(dir.path().join("nope.mp4")).arg("--events").arg(&out));
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("nope.mp4"), "{err}");
    assert_eq!(std::fs::read_to_string(&out)?, "precious\n");
    assert_eq!(std::fs::read_dir(dir.path())?.count(), 1, "nothing else created");
    Ok(())
}

#[test]
fn a_file_that_is_not_a_video_fails_cleanly() -> TestResult {
    let dir = tempfile::tempdir()?;
    let fake = dir.path().join("notes.avi");
    std::fs::write(&fake, "these are not frames\n".repeat(100))?;
    let out = dir.path().join("events.jsonl");
    std::fs::write(&out, "precious\n")?;
    let (code, _, err) = run(winkeye().arg("replay").arg(&fake).arg("--events").arg(&out));
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("not a video"), "{err}");
    assert_eq!(std::fs::read_to_string(&out)?, "precious\n");
    Ok(())
}

#[test]
fn ctrl_c_or_term_ends_the_stream_with_an_end_event() -> TestResult {
    let dir = tempfile::tempdir()?;
    // A long input: the sample clip's frames many times over, as a numbered image folder.
    let frames = dir.path().join("frames");
    std::fs::create_dir(&frames)?;
    let first = frames.join("f-0.png");
    let (code, _, err) = run(winkeye().args(["synth", "--kind", "start", "--resolution", "640x360", "--format", "png", "--out"]).arg(dir.path()));
    assert_eq!(code, 0, "{err}");
    std::fs::rename(dir.path().join("start-00001.png"), &first)?;
    for k in 1..3000 {
        std::fs::hard_link(&first, frames.join(format!("f-{k}.png")))?;
    }
    // Ctrl-C, and the TERM that `timeout` and service managers send, alike.
    for signal in ["-INT", "-TERM"] {
        let out = dir.path().join(format!("events{signal}.jsonl"));
        let bin = assert_cmd::cargo::cargo_bin("winkeye");
        let child = std::process::Command::new(bin)
            .arg("replay")
            .arg(&frames)
            .arg("--events")
            .arg(&out)
            .stderr(std::process::Stdio::piped())
            .spawn()?;
        // The stream is written as it happens: wait for its first line (the handlers are set by
        // then). On a machine loaded by other jobs that can take a while; signalling earlier
        // would test the default disposition, not the handler.
        let started = std::time::Instant::now();
        while std::fs::read_to_string(&out).map_or(true, |t| !t.contains('\n')) && started.elapsed().as_secs() < 180 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(std::fs::read_to_string(&out).is_ok_and(|t| t.contains('\n')), "no event within three minutes ({signal})");
        std::thread::sleep(std::time::Duration::from_millis(300));
        let status = std::process::Command::new("kill").arg(signal).arg(child.id().to_string()).status()?;
        assert!(status.success());
        let output = child.wait_with_output()?;
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{signal}: {:?}, stderr: {err}", output.status);
        let evs = events(&out)?;
        let end = evs.last().ok_or("events")?;
        assert_eq!(end["kind"], "end", "{signal}");
        assert_eq!(end["reason"], "interrupted", "{signal}");
        assert!(end["frames_read"].as_u64().unwrap_or(0) < 3000, "stopped early");
    }
    Ok(())
}

#[test]
fn watch_without_a_camera_fails_in_one_line() -> TestResult {
    if Path::new("/dev/video0").exists() {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("events.jsonl");
    let (code, _, err) = run(winkeye().arg("watch").arg("--events").arg(&out));
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("no camera at index 0"), "{err}");
    assert!(!out.exists());
    let (code, _, err) = run(winkeye().args(["watch", "--list-cameras"]));
    assert_eq!(code, 0, "{err}");
    Ok(())
}

/// Reads the events of a run, dropping flags.
fn kinds_of(evs: &[Value]) -> Vec<String> {
    kinds(evs).into_iter().map(str::to_owned).collect()
}

#[test]
fn watch_survives_an_unplugged_camera() -> TestResult {
    // The sample clip played as a live camera that is pulled out 1.0-2.0 s after the start: the
    // camera is reported lost, retried with backoff, reported back, and watching carries on to
    // the settle after the shot.
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("live.jsonl");
    let camera = format!("file:{}", sample_clip().display());
    let (code, _, err) = run(winkeye().args(["watch", "--camera", &camera, "--simulate-unplug", "1.0-2.0", "--events"]).arg(&out));
    assert_eq!(code, 0, "{err}");
    let evs = events(&out)?;
    let k = kinds_of(&evs);
    let lost = k.iter().position(|k| k == "camera_lost").ok_or(format!("no camera_lost: {k:?}"))?;
    let back = k.iter().position(|k| k == "camera_ok").ok_or(format!("no camera_ok: {k:?}"))?;
    assert!(lost < back, "{k:?}");
    assert_eq!(k.iter().filter(|k| *k == "camera_lost").count(), 1, "lost once, however many retries: {k:?}");
    let lost_ev = evs.iter().find(|e| e["kind"] == "camera_lost").ok_or("camera_lost")?;
    assert!(lost_ev["retry_in_s"].as_f64().unwrap_or(0.0) > 0.0, "{lost_ev}");
    assert!(lost_ev["error"].as_str().unwrap_or("").contains("unplug"), "{lost_ev}");
    assert!(k[back..].iter().any(|k| k == "settled"), "carries on and settles after the camera is back: {k:?}");
    let end = evs.last().ok_or("events")?;
    assert_eq!(end["kind"], "end");
    assert_eq!(end["reason"], "end_of_footage");
    assert!(err.contains("lost") && err.contains("back"), "{err}");
    Ok(())
}

#[test]
fn a_knocked_camera_loses_and_finds_the_calibration() -> TestResult {
    // The camera is knocked while the hand leaves: the settle after the shot must report the
    // calibration lost, make a new one, report it good, and only then report the position.
    let dir = tempfile::tempdir()?;
    let (code, _, err) = run(winkeye().args(["synth", "--clip", "--bump", "--resolution", "640x360", "--fps", "15", "--outcome", "move", "--seed", "1", "--out"]).arg(dir.path()));
    assert_eq!(code, 0, "{err}");
    let truth: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("clip-00001.json"))?)?;
    let bump = truth["bump_frame"].as_u64().ok_or("bump_frame")?;
    assert!(truth["camera_after_bump"].is_object());
    let out = dir.path().join("events.jsonl");
    let (code, _, err) = run(winkeye().arg("replay").arg(dir.path().join("clip-00001.avi")).arg("--events").arg(&out));
    assert_eq!(code, 0, "{err}");
    let evs = events(&out)?;
    let k = kinds_of(&evs);
    let lost = k.iter().position(|k| k == "calibration_lost").ok_or(format!("no calibration_lost: {k:?}"))?;
    assert_eq!(k[lost + 1], "calibration_ok", "{k:?}");
    assert_eq!(k[lost + 2], "settled", "{k:?}");
    assert_eq!(k.iter().filter(|k| *k == "settled").count(), 2, "{k:?}");
    assert_eq!(k.iter().filter(|k| *k == "calibration_lost").count(), 1, "{k:?}");
    let lost_frame = evs.iter().find(|e| e["kind"] == "calibration_lost").and_then(|e| e["frame"].as_u64()).ok_or("frame")?;
    assert!(lost_frame >= bump, "lost at frame {lost_frame}, knocked at {bump}");
    // The new calibration is the one the second position carries.
    let settled: Vec<&Value> = evs.iter().filter(|e| e["kind"] == "settled").collect();
    assert_ne!(settled[0]["position"]["calibration"], settled[1]["position"]["calibration"]);
    Ok(())
}

#[test]
fn eval_replay_scores_the_sample_clip() -> TestResult {
    let dir = tempfile::tempdir()?;
    for f in ["clip-00001.avi", "clip-00001.json"] {
        std::fs::copy(sample_clip().with_file_name(f), dir.path().join(f))?;
    }
    let json = dir.path().join("replay.json");
    let (code, table, err) = run(winkeye().arg("eval").arg(dir.path()).args(["--what", "replay", "--json"]).arg(&json));
    assert_eq!(code, 0, "{err}");
    assert!(table.contains("settled spans with a settled event | 100.0% (2/2)"), "{table}");
    assert!(table.contains("settled events while a hand is over the mat | 0"), "{table}");
    let results: Value = serde_json::from_str(&std::fs::read_to_string(&json)?)?;
    let r = &results[0];
    assert_eq!(r["spans_found"], 2, "{r}");
    assert_eq!(r["extra_settles"], 0, "{r}");
    assert_eq!(r["positions"].as_array().map(Vec::len), Some(2));
    assert_eq!(r["shot"]["moved_right"], true, "the wink played, and only it, moved: {r}");
    for l in r["latency_s"].as_array().ok_or("latency")? {
        // Never later than a few frames (of 1/15 s) beyond the settle time. It can be earlier
        // than the truth span's start plus the settle time: the span starts when the hand has
        // left the picture, the referee watches only the mat.
        let l = l.as_f64().ok_or("latency")?;
        assert!(l < 0.3 && l > -1.0, "latency beyond the settle time {l} s");
    }
    // Bad input: a folder with no clip is one line and exit 1.
    let empty = tempfile::tempdir()?;
    let (code, _, err) = run(winkeye().arg("eval").arg(empty.path()).args(["--what", "replay"]));
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    Ok(())
}

#[test]
fn footage_without_a_mat_fails_in_one_line_after_writing_its_events() -> TestResult {
    // Two seconds of a grey table (30 numbered frames a second): still, so calibration is tried,
    // and there is no mat to find.
    let dir = tempfile::tempdir()?;
    let frames = dir.path().join("frames");
    std::fs::create_dir(&frames)?;
    for i in 0..60 {
        image::RgbImage::from_pixel(320, 180, image::Rgb([120, 118, 115])).save(frames.join(format!("img-{i:04}.png")))?;
    }
    let out = dir.path().join("e.jsonl");
    let (code, _, err) = run(winkeye().arg("replay").arg(&frames).arg("--events").arg(&out));
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.lines().filter(|l| l.contains("no mat found")).count(), 1, "{err}");
    let evs = events(&out)?;
    assert_eq!(kinds(&evs).last(), Some(&"end"), "{evs:?}");
    assert!(kinds(&evs).contains(&"calibration_lost"), "{evs:?}");
    Ok(())
}

#[test]
fn greyscale_footage_is_not_read_as_every_wink_potted() -> TestResult {
    // Two seconds of the midgame sample in grey (a webcam in its monochrome night mode): the mat
    // is found, but no wink can be told by colour. No settled position (each would have counted
    // all 24 winks potted and the game over); the warning says why, shown though standard error
    // is not a terminal, and the run fails in one line after writing its events.
    let dir = tempfile::tempdir()?;
    let frames = dir.path().join("frames");
    std::fs::create_dir(&frames)?;
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/stills/midgame-00003.jpg");
    let grey = image::open(sample)?.resize_exact(960, 540, image::imageops::FilterType::Triangle).to_luma8();
    for i in 0..60 {
        grey.save(frames.join(format!("img-{i:04}.jpg")))?;
    }
    let out = dir.path().join("e.jsonl");
    let (code, _, err) = run(winkeye().arg("replay").arg(&frames).arg("--events").arg(&out));
    assert_eq!(code, 1, "{err}");
    assert!(err.lines().any(|l| l.contains("analysis failed") && l.contains("no colour")), "{err}");
    assert_eq!(err.lines().filter(|l| l.contains("no still frame could be analysed")).count(), 1, "{err}");
    let evs = events(&out)?;
    assert!(!kinds(&evs).contains(&"settled"), "{evs:?}");
    assert_eq!(kinds(&evs).last(), Some(&"end"), "{evs:?}");
    Ok(())
}

#[test]
fn a_saved_calibration_that_does_not_fit_the_footage_is_replaced() -> TestResult {
    // A calibration made from another scene's frame: its mat lies elsewhere in the picture.
    let dir = tempfile::tempdir()?;
    let (video, _) = render(dir.path(), 2, "squop")?;
    let (code, _, err) = run(winkeye().args(["synth", "--kind", "midgame", "--seed", "9", "--resolution", "640x360", "--out"]).arg(dir.path()));
    assert_eq!(code, 0, "{err}");
    let cal = dir.path().join("other.toml");
    let (code, _, err) = run(winkeye().arg("calibrate").arg(dir.path().join("midgame-00009.jpg")).arg("--out").arg(&cal));
    assert_eq!(code, 0, "{err}");
    let out = dir.path().join("e.jsonl");
    let (code, _, err) = run(winkeye().arg("replay").arg(&video).arg("--calibration").arg(&cal).arg("--events").arg(&out));
    assert_eq!(code, 0, "{err}");
    let evs = events(&out)?;
    let k = kinds(&evs);
    assert_eq!(&k[..2], ["calibration_lost", "calibration_ok"], "{k:?}");
    assert!(k.iter().filter(|&&x| x == "settled").count() >= 2, "{k:?}");
    Ok(())
}
