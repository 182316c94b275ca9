//! The real `winkeye` binary: the contract's commands, outputs and errors.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn winkeye() -> Command {
    Command::cargo_bin("winkeye").expect("the winkeye binary is built")
}

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/positions").join(name)
}

fn stderr_of(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn rules_prints_the_f1_score() {
    let (code, _, err) = stderr_of(winkeye().arg("rules").arg(sample("f1.json")));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("points: blue 4, green 1½, red 1½, yellow 0"), "{err}");
    assert!(err.contains("5½–1½"), "{err}");
}

#[test]
fn rules_prints_the_f2_pot_out() {
    let (code, _, err) = stderr_of(winkeye().arg("rules").arg(sample("f2.json")));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("6*–1*"), "{err}");
    assert!(err.contains("blue has potted out"), "{err}");
    assert!(err.contains("game over"), "{err}");
}

#[test]
fn rules_writes_the_document() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("f1.rules.json");
    let (code, _, err) = stderr_of(winkeye().arg("rules").arg(sample("f1.json")).arg("--json").arg(&out));
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out)?)?;
    assert_eq!(doc["format"], "winkeye.position/1");
    assert_eq!(doc["score"]["game_score"]["blue_red"], 5.5);
    assert_eq!(doc["score"]["final"], false);
    assert_eq!(doc["counts"]["red"]["unplayed"], 1);
    assert!(doc["flags"].as_array().is_some_and(|f| f.iter().all(|f| f["rule"].is_string() && f["text"].is_string())));
    assert!(doc["note"].is_string(), "unknown fields survive");
    Ok(())
}

#[test]
fn rules_draws_a_diagram() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("off.png");
    let (code, _, err) = stderr_of(winkeye().arg("rules").arg(sample("off.json")).arg("--diagram").arg(&out));
    assert_eq!(code, 0, "{err}");
    let img = image::open(&out)?.to_rgb8();
    assert!(img.width() > 1000 && img.height() > 600, "{}x{}", img.width(), img.height());
    // The off red wink r1 is drawn in red near the mat's top edge, right of centre.
    let reds = img.pixels().filter(|p| p[0] > 180 && p[1] < 70 && p[2] < 70).count();
    assert!(reds > 50, "red winks drawn: {reds} pixels");
    Ok(())
}

#[test]
fn rules_to_stdout_and_ruleset_override() -> TestResult {
    let (code, out, err) =
        stderr_of(winkeye().args(["rules", "--ruleset", "natwa-1990", "--json", "-"]).arg(sample("g1-squop-up.json")));
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out)?;
    assert_eq!(doc["ruleset"], "natwa-1990");
    let up = doc["flags"].as_array().and_then(|f| f.iter().find(|f| f["kind"] == "squopped_up")).cloned();
    let up = up.ok_or("no squopped_up flag")?;
    assert_eq!(up["rule"], "11(a)");
    assert_eq!(up["turns"], 2);
    assert_eq!(up["partnership"], "green_yellow");
    Ok(())
}

#[test]
fn rulesets_lists_five() {
    let (code, out, _) = stderr_of(winkeye().arg("rulesets"));
    assert_eq!(code, 0);
    let names: Vec<&str> = out.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(names, vec!["etwa-2012", "etwa-simplified", "natwa-1990", "etwa-original", "fr-1960"]);
}

/// A reader that stops early (`winkeye rulesets | head -0`): the program ends on the signal, as
/// Unix tools do, not with a panic (exit 101) on the failed write.
#[cfg(unix)]
#[test]
fn a_closed_pipe_is_not_a_panic() {
    use std::os::unix::process::ExitStatusExt;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("winkeye"))
        .arg("rulesets")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    // Closed before the program has started writing.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("ends");
    let how = (out.status.code(), out.status.signal());
    assert!(how == (None, Some(libc::SIGPIPE)) || how == (Some(0), None), "{how:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(stderr_of(&mut winkeye()).0, 2);
    assert_eq!(stderr_of(winkeye().args(["rules", "--ruleset", "etwa-1066"]).arg(sample("f1.json"))).0, 2);
    assert_eq!(stderr_of(winkeye().args(["rules"])).0, 2);
}

/// Runs `winkeye rules` on a document with the given text and checks for one clear line and exit 1.
fn refused(text: &str, expect: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("in.json");
    std::fs::write(&input, text).expect("write");
    let out = dir.path().join("out.json");
    std::fs::write(&out, "keep me").expect("write");
    let (code, _, err) = stderr_of(winkeye().arg("rules").arg(&input).arg("--json").arg(&out));
    assert_eq!(code, 1, "{text} → {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("winkeye: "), "{err}");
    assert!(err.contains(expect), "expected {expect:?} in {err}");
    assert!(!err.contains("panicked"));
    assert_eq!(std::fs::read_to_string(&out).expect("read"), "keep me", "existing output untouched");
}

fn doc(winks: &[String], squops: &str) -> String {
    format!(r#"{{"format": "winkeye.position/1", "winks": [{}], "squops": [{squops}]}}"#, winks.join(","))
}

fn wink(id: &str, colour: &str, size: &str, x: f64) -> String {
    format!(r#"{{"id": "{id}", "colour": "{colour}", "size": "{size}", "centre_mm": [{x}, 100.0], "state": "in_play"}}"#)
}

#[test]
fn bad_input_is_one_line_and_exit_1() {
    refused("", "is empty");
    refused("   \n", "is empty");
    refused("{\"format\": ", "EOF");
    refused("[1, 2]", "invalid type");
    refused(r#"{"format": "winkeye.umpire/1", "winks": []}"#, "expected \"winkeye.position/1\"");
    refused(r#"{"format": "winkeye.position/1"}"#, "missing field `winks`");
    refused(&doc(&[wink("a", "purple", "small", 0.0)], ""), "winks[0].colour");
    refused(&doc(&[wink("a", "red", "huge", 0.0)], ""), "winks[0].size");
    let seven: Vec<String> = (0..7).map(|i| wink(&format!("w{i}"), "red", "small", 40.0 * i as f64)).collect();
    refused(&doc(&seven, ""), "7 red winks");
    let three_large: Vec<String> = (0..3).map(|i| wink(&format!("w{i}"), "blue", "large", 40.0 * i as f64)).collect();
    refused(&doc(&three_large, ""), "3 large blue winks");
    refused(&doc(&[wink("a", "red", "small", 0.0), wink("a", "red", "small", 50.0)], ""), "\"a\" is used twice");
    let pair = [wink("a", "red", "small", 0.0), wink("b", "green", "small", 12.0)];
    refused(&doc(&pair, r#"{"upper": "a", "lower": "nope"}"#), "\"nope\", which is not in");
    refused(&doc(&pair, r#"{"upper": "a", "lower": "a"}"#), "cannot squop itself");
    refused(&doc(&pair, r#"{"upper": "a", "lower": "b"}, {"upper": "b", "lower": "a"}"#), "cycle");
    refused(&doc(&pair, r#"{"upper": "a", "lower": "b", "margin_mm": -5}"#), "squops[0].margin_mm is -5");
    let apart = [wink("a", "red", "small", 0.0), wink("b", "green", "small", 30.0)];
    refused(&doc(&apart, r#"{"upper": "a", "lower": "b"}"#), "14.0 mm apart");
    refused(&doc(&[wink("a", "red", "small", 0.0).replace("100.0]", "1e400]")], ""), "winks[0].centre_mm");
    refused(r#"{"format": "winkeye.position/1", "ruleset": "etwa-1066", "winks": []}"#, "unknown ruleset");
}

#[test]
fn a_full_stdout_is_one_line_and_exit_1() -> TestResult {
    for args in [vec!["rulesets".to_string()], vec!["calibrate".to_string(), still_sample("start-00001.jpg").display().to_string()]] {
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("winkeye")).args(&args).stdout(std::fs::File::create("/dev/full")?).output()?;
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.trim_end().lines().last().is_some_and(|l| l.contains("standard output")) && !err.contains("panicked"), "{err}");
    }
    Ok(())
}

#[test]
fn missing_file_is_one_line_and_exit_1() {
    let (code, _, err) = stderr_of(winkeye().args(["rules", "/nonexistent/position.json"]));
    assert_eq!(code, 1);
    assert!(err.starts_with("winkeye: cannot read /nonexistent/position.json"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1);
}

#[test]
fn umpire_near_a_pixel_off_the_frame_is_one_line_and_exit_1_and_keeps_outputs() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("u.json");
    std::fs::write(&out, "kept")?;
    let (code, _, err) = stderr_of(winkeye().arg("umpire").arg(still_sample("nearmiss-00005.jpg")).args(["--near", "2500,40", "--json"]).arg(&out));
    assert_eq!(code, 1, "{err}");
    assert!(err.trim_end().ends_with("--near 2500,40 is outside the 1920×1080 frame"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_eq!(std::fs::read_to_string(&out)?, "kept");
    Ok(())
}

#[test]
fn unwritable_output_is_one_line_and_exit_1() {
    let (code, _, err) = stderr_of(winkeye().arg("rules").arg(sample("f1.json")).args(["--json", "/nonexistent/dir/out.json"]));
    assert_eq!(code, 1, "{err}");
    assert!(err.lines().last().is_some_and(|l| l.starts_with("winkeye: cannot write /nonexistent/dir/out.json")), "{err}");
}

#[test]
fn synth_writes_an_image_and_its_truth() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (code, _, err) = stderr_of(winkeye().args(["synth", "--kind", "near-miss", "--seed", "4", "--resolution", "320x180", "--out"]).arg(dir.path()));
    assert_eq!(code, 0, "{err}");
    let img = image::open(dir.path().join("nearmiss-00004.jpg"))?;
    assert_eq!((img.width(), img.height()), (320, 180));
    let truth: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("nearmiss-00004.json"))?)?;
    assert_eq!(truth["format"], "winkeye.position/1");
    assert_eq!(truth["winks"].as_array().map(Vec::len), Some(24));
    assert!(truth["truth"]["camera"]["intrinsics"]["fx"].is_number());
    // The truth document is a valid position: `winkeye rules` accepts it.
    let (code, _, err) = stderr_of(winkeye().arg("rules").arg(dir.path().join("nearmiss-00004.json")));
    assert_eq!(code, 0, "{err}");
    Ok(())
}

#[test]
fn synth_bad_arguments() -> TestResult {
    let dir = tempfile::tempdir()?;
    assert_eq!(stderr_of(winkeye().args(["synth", "--resolution", "wide"])).0, 2);
    assert_eq!(stderr_of(winkeye().args(["synth", "--kind", "endgame"])).0, 2);
    // Baselines painted further off than the calibration looks for them, or on a close-up.
    assert_eq!(stderr_of(winkeye().args(["synth", "--baselines-off", "25"])).0, 2);
    assert_eq!(stderr_of(winkeye().args(["synth", "--baselines-off", "3", "--closeup"])).0, 2);
    let (code, _, err) = stderr_of(winkeye().args(["synth", "--resolution", "10x10", "--out"]).arg(dir.path()));
    assert_eq!(code, 1);
    assert!(err.trim_end().lines().count() == 1 && err.contains("10x10"), "{err}");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x")?;
    let (code, _, err) = stderr_of(winkeye().args(["synth", "--resolution", "64x64", "--out"]).arg(&file));
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("winkeye: cannot create"), "{err}");
    Ok(())
}

fn still_sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/stills").join(name)
}

#[test]
fn calibrate_writes_a_calibration_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("mat.toml");
    let overlay = dir.path().join("mat.png");
    let (code, _, err) = stderr_of(winkeye().arg("calibrate").arg(still_sample("start-00001.jpg")).arg("--out").arg(&out).arg("--overlay").arg(&overlay));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("mat found") && err.contains("UnplayedWinks"), "{err}");
    let text = std::fs::read_to_string(&out)?;
    let file: winkeye::calibrate::file::CalibrationFile = toml::from_str(&text)?;
    assert_eq!(file.format, "winkeye.calibration/1");
    assert!(file.mat.as_ref().is_some_and(|m| m.rms_px < 1.0));
    assert!(image::open(&overlay).is_ok());
    // Fed back, the saved calibration is checked against the frame.
    let (code, _, err) = stderr_of(winkeye().arg("calibrate").arg(still_sample("start-00001.jpg")).arg("--calibration").arg(&out));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("still fits"), "{err}");
    Ok(())
}

/// A saved calibration from another camera's frame: it no longer fits, and its lens, fitted to
/// that frame's mat (no chessboard), is not forced on this frame, which is read exactly as with
/// no calibration given. (Until session 32 the frame was refused: its edges did not fit a mat
/// through the other camera's lens.)
#[test]
fn a_calibration_from_another_camera_gives_way_to_the_frames_own() -> TestResult {
    let dir = tempfile::tempdir()?;
    let cal = dir.path().join("mat.toml");
    let (code, _, err) = stderr_of(winkeye().arg("calibrate").arg(still_sample("start-00001.jpg")).arg("--out").arg(&cal));
    assert_eq!(code, 0, "{err}");
    let (with, without) = (dir.path().join("with.json"), dir.path().join("without.json"));
    let (code, _, err) = stderr_of(winkeye().arg("analyze").arg(still_sample("midgame-00003.jpg")).arg("--calibration").arg(&cal).arg("--json").arg(&with));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("no longer fits") && err.contains("lens too"), "{err}");
    let (code, _, err) = stderr_of(winkeye().arg("analyze").arg(still_sample("midgame-00003.jpg")).arg("--json").arg(&without));
    assert_eq!(code, 0, "{err}");
    let read = |p: &Path| -> Result<serde_json::Value, Box<dyn std::error::Error>> { Ok(serde_json::from_str(&std::fs::read_to_string(p)?)?) };
    let (a, b) = (read(&with)?, read(&without)?);
    assert_eq!(a["winks"], b["winks"]);
    assert_eq!(a["calibration"], b["calibration"]);
    Ok(())
}

#[test]
fn a_measured_camera_height_goes_into_the_calibration_file() -> TestResult {
    use winkeye::calibrate::pose::FocalSource;
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("mat.toml");
    let (code, _, err) = stderr_of(winkeye().arg("calibrate").arg(still_sample("start-00001.jpg")).args(["--camera-height", "1550"]).arg("--out").arg(&out));
    assert_eq!(code, 0, "{err}");
    let file: winkeye::calibrate::file::CalibrationFile = toml::from_str(&std::fs::read_to_string(&out)?)?;
    let camera = file.camera.expect("a camera");
    assert_eq!(camera.focal_source, FocalSource::Measured);
    assert_eq!(camera.measured_height_mm, Some(1550.0));
    // A later frame analysed with the file, and a height no table camera has, refused.
    let (code, _, err) = stderr_of(winkeye().arg("analyze").arg(still_sample("start-00001.jpg")).arg("--calibration").arg(&out));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = stderr_of(winkeye().arg("analyze").arg(still_sample("start-00001.jpg")).args(["--camera-height", "15"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not a camera height"), "{err}");
    Ok(())
}

#[test]
fn a_greyscale_photo_of_the_mat_is_refused_not_read_as_every_wink_potted() -> TestResult {
    // The mat is found in grey, but no wink can be told by colour: without the check the rules
    // counted all 24 potted and the game over.
    let dir = tempfile::tempdir()?;
    let grey = dir.path().join("grey.png");
    image::open(still_sample("midgame-00003.jpg"))?.to_luma8().save(&grey)?;
    let out = dir.path().join("keep.json");
    std::fs::write(&out, "keep me")?;
    for cmd in ["analyze", "umpire"] {
        let (code, _, err) = stderr_of(winkeye().arg(cmd).arg(&grey).arg("--json").arg(&out));
        assert_eq!(code, 1, "{cmd}: {err}");
        assert!(err.contains("no colour") && err.trim_end().lines().count() == 1, "{cmd}: {err}");
        assert_eq!(std::fs::read_to_string(&out)?, "keep me");
    }
    Ok(())
}

#[test]
fn calibrate_bad_input() -> TestResult {
    let dir = tempfile::tempdir()?;
    // Usage: malformed corners.
    assert_eq!(stderr_of(winkeye().arg("calibrate").arg(still_sample("start-00001.jpg")).args(["--corners", "1,2;3"])).0, 2);
    // A truncated JPEG.
    let bytes = std::fs::read(still_sample("start-00001.jpg"))?;
    let cut = dir.path().join("cut.jpg");
    std::fs::write(&cut, &bytes[..bytes.len() / 3])?;
    let (code, _, err) = stderr_of(winkeye().arg("calibrate").arg(&cut));
    assert_eq!(code, 1);
    assert!(err.contains("truncated") && err.trim_end().lines().count() == 1, "{err}");
    // No mat in view: a plain grey picture.
    let grey = dir.path().join("grey.png");
    image::RgbImage::from_pixel(640, 360, image::Rgb([128, 128, 128])).save(&grey)?;
    let out = dir.path().join("keep.toml");
    std::fs::write(&out, "keep me")?;
    let (code, _, err) = stderr_of(winkeye().arg("calibrate").arg(&grey).arg("--out").arg(&out));
    assert_eq!(code, 1);
    assert!(err.contains("no mat found") && err.contains("--corners"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_eq!(std::fs::read_to_string(&out)?, "keep me");
    // A calibration file that is not one.
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "format = \"something/2\"\n")?;
    let (code, _, err) = stderr_of(winkeye().arg("calibrate").arg(still_sample("start-00001.jpg")).arg("--calibration").arg(&bad));
    assert_eq!(code, 1);
    assert!(err.contains("winkeye.calibration/1"), "{err}");
    Ok(())
}
