//! Calibration on rendered frames: the mat found where the truth says, clear refusals when it
//! cannot be, manual corners, saved calibrations checked against new frames, chessboard lenses.

use nalgebra::Point3;
use opencv::core::Mat;
use winkeye::calibrate::{calibrate_frame, check_fit, CalibrateError, CalibrateOptions, Calibration};
use winkeye::geometry::{MatPoint, MatSpec, PixelPoint};
use winkeye::rules::Ruleset;
use winkeye::synth::{effects, render_still, HandChoice, Kind, Still, StillOptions};

fn still_options(kind: Kind, seed: u64, w: u32, h: u32) -> StillOptions {
    StillOptions { kind, seed, width: w, height: h, hand: HandChoice::Auto, ruleset: Ruleset::Etwa2012, closeup: false, camera_seed: None, k1: None, varied_look: false, style: Default::default(), view: None, baselines_off_mm: 0.0, wink_share: winkeye::synth::layout::WINK_SHARE, blue_corner: winkeye::geometry::Corner::NegXPosY }
}

fn still(kind: Kind, seed: u64, w: u32, h: u32) -> Still {
    render_still(&still_options(kind, seed, w, h), None).expect("renders")
}

fn bgr(s: &Still) -> Mat {
    effects::to_bgr_mat(&s.image).expect("converts")
}

fn opts() -> CalibrateOptions {
    CalibrateOptions { mat: MatSpec::STANDARD, corners: None, lens: None, camera_height_mm: None }
}

/// Corner errors against the truth (under whichever half turn fits) and the mapping RMS in mm.
fn errors(s: &Still, cal: &Calibration) -> (f64, f64) {
    let truth: Vec<PixelPoint> = MatSpec::STANDARD.corners().iter().map(|c| s.camera.project(Point3::new(c.x, c.y, 0.0)).expect("in front")).collect();
    let (flip, worst) = [false, true]
        .into_iter()
        .map(|f| (f, (0..4).map(|k| truth[if f { (k + 2) % 4 } else { k }].distance(cal.corners_px[k])).fold(0.0, f64::max)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("two");
    let sign = if flip { -1.0 } else { 1.0 };
    let mut sq = 0.0;
    let mut n = 0.0;
    for i in -8..=8 {
        for j in -4..=4 {
            let (x, y) = (i as f64 * 100.0, j as f64 * 100.0);
            let px = s.camera.project(Point3::new(x, y, 0.0)).expect("in front");
            let m = cal.image_to_mat(px).expect("maps");
            sq += m.distance(MatPoint::new(sign * x, sign * y)).powi(2);
            n += 1.0;
        }
    }
    (worst, (sq / n).sqrt())
}

#[test]
fn finds_the_mat_where_the_truth_says() {
    // 960 x 540: about half a pixel per mm. Tolerances here are sanity bounds; `winkeye eval`
    // measures the figures on full-size frames.
    for (kind, seed) in [(Kind::Start, 11), (Kind::Midgame, 12), (Kind::NearMiss, 13), (Kind::PotOut, 14)] {
        let s = still(kind, seed, 960, 540);
        let cal = calibrate_frame(&bgr(&s), &opts()).unwrap_or_else(|e| panic!("{kind:?} {seed}: {e}"));
        let (corner, mapping) = errors(&s, &cal);
        assert!(corner < 1.0, "{kind:?} {seed}: corner error {corner:.2} px");
        assert!(mapping < 2.5, "{kind:?} {seed}: mapping RMS {mapping:.2} mm");
        assert!(cal.rms_px < 1.0);
        let cam = cal.camera.expect("a pose");
        assert!((900.0..3000.0).contains(&cam.height_mm()), "camera height {:.0}", cam.height_mm());
    }
}

#[test]
fn a_start_position_orients_the_mat_by_its_colours() {
    let s = still(Kind::Start, 21, 960, 540);
    let cal = calibrate_frame(&bgr(&s), &opts()).expect("calibrates");
    assert_eq!(cal.orientation, winkeye::calibrate::Orientation::UnplayedWinks);
    // The truth's blue corner is (−X,+Y); ours must be the same corner, not the opposite one.
    let blue = s.camera.project(Point3::new(-914.4, 457.2, 0.0)).expect("in front");
    assert!(cal.corners_px[0].distance(blue) < 2.0, "{:?} vs {blue:?}", cal.corners_px[0]);
}

#[test]
fn manual_corners_are_refined() {
    let s = still(Kind::Midgame, 31, 960, 540);
    let truth: Vec<PixelPoint> = MatSpec::STANDARD.corners().iter().map(|c| s.camera.project(Point3::new(c.x, c.y, 0.0)).expect("in front")).collect();
    // A user's clicks, a couple of pixels off.
    let clicked = [0, 1, 2, 3].map(|k| truth[k] + PixelPoint::new(2.0, -1.5));
    let cal = calibrate_frame(&bgr(&s), &CalibrateOptions { corners: Some(clicked), ..opts() }).expect("calibrates");
    assert_eq!(cal.orientation, winkeye::calibrate::Orientation::Corners);
    for (k, (got, want)) in cal.corners_px.iter().zip(&truth).enumerate() {
        assert!(got.distance(*want) < 1.0, "corner {k}: {got:?} vs {want:?}");
    }
}

#[test]
fn refuses_frames_without_a_whole_mat() {
    // No mat: the table alone (a frame's corner region, blown up).
    let s = still(Kind::Midgame, 41, 960, 540);
    let table = image::imageops::resize(&image::imageops::crop_imm(&s.image, 0, 0, 60, 34).to_image(), 960, 540, image::imageops::FilterType::Triangle);
    let err = calibrate_frame(&effects::to_bgr_mat(&table).expect("converts"), &opts()).expect_err("no mat");
    assert!(matches!(err, CalibrateError::NoMat { .. }), "{err}");
    assert!(err.to_string().contains("--corners"), "suggests --corners: {err}");

    // Cut off: the frame's left third gone, taking two corners with it.
    let cut = image::imageops::crop_imm(&s.image, 320, 0, 640, 540).to_image();
    let err = calibrate_frame(&effects::to_bgr_mat(&cut).expect("converts"), &opts()).expect_err("cut off");
    assert!(matches!(err, CalibrateError::CutOff | CalibrateError::NoMat { .. }), "{err}");

    // Two mats side by side.
    let small = still(Kind::Start, 42, 480, 270);
    let mut two = image::RgbImage::from_pixel(960, 270, *small.image.get_pixel(0, 0));
    image::imageops::replace(&mut two, &small.image, 0, 0);
    image::imageops::replace(&mut two, &small.image, 480, 0);
    let mut canvas = image::RgbImage::from_pixel(960, 540, *small.image.get_pixel(0, 0));
    image::imageops::replace(&mut canvas, &two, 0, 135);
    let err = calibrate_frame(&effects::to_bgr_mat(&canvas).expect("converts"), &opts()).expect_err("two mats");
    assert!(matches!(err, CalibrateError::TwoMats | CalibrateError::CutOff), "{err}");
}

/// Baselines painted 4 mm beyond where rule 2.3.1 puts them (a hand-painted mat): the mat is
/// still found where it is, each baseline seen is placed where it was painted, and the
/// calibration keeps them through a half turn of the mat frame and through a file.
#[test]
fn baselines_painted_off_their_place_are_found_where_they_are() {
    for (kind, seed) in [(Kind::Start, 62), (Kind::Midgame, 62)] {
        let o = StillOptions { kind, seed, width: 1280, height: 720, hand: HandChoice::None, ruleset: Ruleset::Etwa2012, closeup: false, camera_seed: None, k1: None, varied_look: false, style: Default::default(), view: None, baselines_off_mm: 4.0, wink_share: winkeye::synth::layout::WINK_SHARE, blue_corner: winkeye::geometry::Corner::NegXPosY };
        let s = render_still(&o, None).expect("renders");
        let cal = calibrate_frame(&bgr(&s), &opts()).unwrap_or_else(|e| panic!("{kind:?} {seed}: {e}"));
        let (corner, mapping) = errors(&s, &cal);
        // The same scene with its baselines where the rules put them: the mapping is as good.
        let at_place = render_still(&StillOptions { baselines_off_mm: 0.0, ..o.clone() }, None).expect("renders");
        let (_, mapping_at_place) = errors(&at_place, &calibrate_frame(&bgr(&at_place), &opts()).expect("calibrates"));
        assert!(corner < 1.0 && mapping < mapping_at_place + 0.3, "{kind:?} {seed}: corner error {corner:.2} px, mapping RMS {mapping:.2} mm ({mapping_at_place:.2} mm with the baselines in place)");
        let seen: Vec<f64> = cal.baselines_found.iter().flatten().copied().collect();
        assert!(seen.len() >= 2, "{kind:?} {seed}: baselines seen {:?}", cal.baselines_found);
        for d in &seen {
            assert!((d - 4.0).abs() < 0.75, "{kind:?} {seed}: a baseline placed {d:.2} mm off, painted 4 mm");
        }
        for (k, o) in cal.baselines_found.iter().enumerate() {
            assert_eq!(cal.mat.painted_offsets_mm[k], o.unwrap_or(0.0));
        }
        let turned = cal.half_turned(cal.orientation);
        assert_eq!(turned.baselines_found[0], cal.baselines_found[2]);
        assert_eq!(turned.mat.painted_offsets_mm[1], cal.mat.painted_offsets_mm[3]);
        let text = winkeye::calibrate::file::CalibrationFile::from_calibration(&cal, None).to_toml().expect("encodes");
        let back: winkeye::calibrate::file::CalibrationFile = toml::from_str(&text).expect("decodes");
        let again = back.calibration().expect("has a mat");
        assert_eq!(again.baselines_found, cal.baselines_found);
        assert_eq!(again.mat, cal.mat);
    }
    // A file written before baselines were placed reads as baselines where the rules put them.
    let s = still(Kind::Start, 63, 960, 540);
    let cal = calibrate_frame(&bgr(&s), &opts()).expect("calibrates");
    let text = winkeye::calibrate::file::CalibrationFile::from_calibration(&cal, None).to_toml().expect("encodes");
    let old: String = text.lines().filter(|l| !l.starts_with("baselines_found_mm")).map(|l| format!("{l}\n")).collect();
    assert_ne!(old, text);
    let back: winkeye::calibrate::file::CalibrationFile = toml::from_str(&old).expect("decodes");
    let again = back.calibration().expect("has a mat");
    assert_eq!(again.baselines_found, [None; 4]);
    assert_eq!(again.mat, MatSpec::STANDARD);
}

/// Blue's unplayed winks drawn behind (+X,+Y)'s baseline, the others clockwise (blue and green
/// on a short side): the calibration reads blue's corner from the winks there, keeps it at the
/// −x end by turning the mat frame half round, and a file keeps it (a file without it, as before
/// session 36, reads (−X,+Y)).
#[test]
fn the_calibration_reads_which_corner_is_blues_from_the_unplayed_winks() {
    use winkeye::geometry::Corner;
    let o = StillOptions { blue_corner: Corner::PosXPosY, ..still_options(Kind::Start, 3602, 1280, 720) };
    let s = render_still(&o, None).expect("renders");
    let cal = calibrate_frame(&bgr(&s), &opts()).expect("calibrates");
    assert_eq!(cal.orientation, winkeye::calibrate::Orientation::UnplayedWinks);
    assert_eq!(cal.blue_corner, Corner::NegXNegY);
    // Turned half round: the truth's (+X,−Y) corner is the calibration's (−X,+Y).
    let c = MatSpec::STANDARD.corner(Corner::PosXNegY);
    let truth = s.camera.project(Point3::new(c.x, c.y, 0.0)).expect("in front");
    assert!(cal.corners_px[0].distance(truth) < 3.0, "{:?} against {truth:?}", cal.corners_px);
    let text = winkeye::calibrate::file::CalibrationFile::from_calibration(&cal, None).to_toml().expect("encodes");
    assert!(text.contains("blue_corner = \"neg_x_neg_y\""), "{text}");
    let back: winkeye::calibrate::file::CalibrationFile = toml::from_str(&text).expect("decodes");
    assert_eq!(back.calibration().expect("has a mat").blue_corner, Corner::NegXNegY);
    let old: String = text.lines().filter(|l| !l.starts_with("blue_corner")).map(|l| format!("{l}\n")).collect();
    let back: winkeye::calibrate::file::CalibrationFile = toml::from_str(&old).expect("decodes");
    assert_eq!(back.calibration().expect("has a mat").blue_corner, Corner::NegXPosY);
}

#[test]
fn a_saved_calibration_is_checked_against_new_frames() {
    let a = still(Kind::Midgame, 51, 960, 540);
    let cal = calibrate_frame(&bgr(&a), &opts()).expect("calibrates");
    let same = check_fit(&bgr(&a), &cal).expect("checks");
    assert!(same.fits(), "{same:?}");
    // Another frame from another camera: the calibration no longer fits.
    let b = still(Kind::Midgame, 52, 960, 540);
    let other = check_fit(&bgr(&b), &cal).expect("checks");
    assert!(!other.fits(), "{other:?}");
    // And through a file and back.
    let file = winkeye::calibrate::file::CalibrationFile::from_calibration(&cal, None);
    let text = file.to_toml().expect("encodes");
    let back: winkeye::calibrate::file::CalibrationFile = toml::from_str(&text).expect("decodes");
    let again = back.calibration().expect("has a mat");
    assert!(again.corners_px[2].distance(cal.corners_px[2]) < 1e-9);
}

#[test]
fn chessboard_shots_calibrate_the_lens() -> Result<(), Box<dyn std::error::Error>> {
    let mut frames = Vec::new();
    for seed in 1..=6 {
        let o = StillOptions { kind: Kind::Chessboard, seed, width: 960, height: 540, hand: HandChoice::None, ruleset: Ruleset::Etwa2012, closeup: false, camera_seed: Some(5), k1: Some(-0.2), varied_look: false, style: Default::default(), view: None, baselines_off_mm: 0.0, wink_share: winkeye::synth::layout::WINK_SHARE, blue_corner: winkeye::geometry::Corner::NegXPosY };
        let s = render_still(&o, None)?;
        frames.push((std::path::PathBuf::from(format!("board-{seed}")), bgr(&s)));
    }
    let (lens, info, used) = winkeye::calibrate::chessboard::calibrate_lens(&frames, (9, 6), 25.0)?;
    assert!(used.iter().filter(|u| **u).count() >= 5, "{used:?}");
    assert!(info.rms_px < 0.3, "calibrateCamera RMS {}", info.rms_px);
    let winkeye::calibrate::lens::Lens::OpenCv { dist, fx, .. } = lens else { panic!("an OpenCV lens") };
    let (truth_i, truth_d) = winkeye::synth::shoot::body(5, 960, 540, Some(-0.2));
    assert!((dist[0] + 0.2).abs() < 0.02, "k1 {}", dist[0]);
    assert!((fx - truth_i.fx).abs() / truth_i.fx < 0.01, "fx {fx} vs {}", truth_i.fx);
    let _ = truth_d;
    Ok(())
}

/// Another renderer's frame whose table is shaded beside the mat (`samples/other-renderer/
/// alt36-1018.jpg`; see `analyze`'s test on it): the calibration moves each edge in to where the
/// felt ends, and the check of a saved calibration reads the edges the same way, so the
/// calibration still fits the frame it was made from (its edges had read 1.4 px out, over the
/// check's pixel).
#[test]
fn a_calibration_made_beside_a_shaded_table_still_fits_its_own_frame() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/other-renderer/alt36-1018.jpg");
    let frame = winkeye::capture::load_image(&path).expect("sample");
    let cal = calibrate_frame(&frame, &opts()).expect("calibrates");
    let check = check_fit(&frame, &cal).expect("checks");
    assert!(check.fits(), "{check:?}");
}
