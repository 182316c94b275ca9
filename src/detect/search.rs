//! Winks of the felt's own colour that no pixel tells from the felt, looked for by their shape.
//!
//! A green wink on green felt can lie a few CIE a*b* units from the felt at its face, inside the
//! scatter of single felt pixels (3–7 units on a textured felt, under JPEG noise), where the colour
//! model ([`super::colour`]) cannot take any of its pixels. But a wink's colour differs from the
//! felt's over its whole face, and averaged over a face the felt's noise falls by the square root
//! of its pixels. So each point's colour, averaged over a box a small wink's radius wide, is
//! compared with the felt's round it (a box six radii wide), both over the felt alone (on the mat,
//! off its baselines, no other wink colour labelled, no wink found, off the pot), along the
//! direction *off the felt's line of shades* (the ray in a*b* from grey through the felt): shade,
//! glare and a blur with a white or black line move the felt along that line, a wink's plastic of
//! a slightly other hue moves it off. Points standing out by many times the frame's own noise of
//! that comparison, clear of the mat's edges, its baselines, the pot and the winks found, are
//! measured as winks of the felt's colour ([`super::measure`]); a wink so measured is kept when its
//! face stands out from the felt round it as the search said ([`stands_out`]).
//!
//! Only cool felts are searched (a felt whose hue is green's or blue's): warm felts share their
//! hues with skin and wood, and a fingertip over tan felt stands out just as a yellow wink on it
//! would. Over another renderer's 83 frames this found 21 more winks (green on green felts) and no
//! false one; the gates, and what each was added for, are in the README ("Winks no pixel of which
//! tells them from the felt").
//!
//! A wink of the felt's hue but purer or darker plastic lies on the felt's line of shades, where
//! that search does not look; but its rim is a circle of a wink's size. So circles of a small or a
//! large wink's radius are looked for in the frame's lightness too ([`circles`]: OpenCV's gradient
//! Hough transform, over the felt alone), and a wink measured on one is kept when its face is
//! lighter or darker than the felt round it by several times that felt's own scatter, or purer
//! ([`stands_out_by_lightness`]): a shade moves the felt's lightness smoothly, not inside a
//! wink's circle alone, and takes chroma away where it does.

use super::colour::{ColourModel, Lab};
use super::sample::Lab8;
use super::{px_per_mm, Found, Labels, Masks};
use crate::calibrate::Calibration;
use crate::geometry::{MatPoint, MatSpec, PixelPoint};
use crate::report::position::{Colour, NominalDiameters};
use opencv::core::{Mat, Point, Rect, Scalar, Size, CV_32F};
use opencv::imgproc;
use opencv::prelude::*;
use rayon::prelude::*;

/// Least chroma of a felt whose line of shades is taken (a greyer felt's hue is its noise, and
/// no wink colour is its own).
const MIN_FELT_CHROMA: f64 = 25.0;
/// A point's face stands out when its colour off the felt's line differs from the felt's round
/// it by this many times the frame's own noise of that difference (a robust sd over the felt).
/// (12 until session 48: the sixth renderer's green winks on green felt, duller than it and 6–10°
/// off its hue, stand out 8–14 times that noise, and on the two frames traced every point over 3
/// times it was one of them; at 8 two more were found, at 6 its 65 frames gained 5 false winks,
/// and our sets score the same at 8 as at 12.)
const MIN_SIGMAS: f64 = 8.0;
/// ... and by at least this much (CIE units): a felt drawn flat has next to no noise of its own.
const MIN_RESPONSE: f64 = 2.5;
/// Side of the face's box, in small winks' radii.
const FACE_BOX_RADII: f64 = 1.0;
/// Side of the felt's box round it, in small winks' radii.
const FELT_BOX_RADII: f64 = 6.0;
/// Least share of the face's box that is felt (on the mat, off its baselines, no wink of another
/// colour labelled, no wink found, off the pot's body): nearer those, they blur into the box.
const MIN_FACE_FELT: f64 = 0.9;
/// Least share of the felt's box that is felt.
const MIN_BOX_FELT: f64 = 0.5;
/// Points nearer than this (mm), beyond a large wink's radius, to the mat's edges, a baseline's
/// middle or the pot's clearance ([`POT_CLEAR_MM`]) are not looked at: lines and the pot's wall
/// blur into the felt off its line too.
const CLEARANCE_MM: f64 = 6.0;
/// Points nearer a wink found than its outline and this many small winks' radii are not looked
/// at (its blurred rim and its shadow).
const BESIDE_WINK_RADII: f64 = 3.5;
/// The felt is taken this far (mm) inside the mat's edges ...
const EDGE_INSET_MM: f64 = 3.0;
/// ... and off a band this wide (mm) along each baseline's middle (lines are 2–6 mm wide, and
/// blurred).
const LINE_BAND_MM: f64 = 12.0;
/// Points along each baseline where it is drawn out of the felt's mask (the lens bends straight
/// lines; the mat's edges are drawn into it by [`super::fill_outline`]).
const EDGE_SAMPLES: usize = 24;
/// Points nearer the pot's middle than this (mm) and the clearance are not looked at by their
/// colour off the felt's line: the pot's rim, tinted by its gloss, blurs into the felt off that
/// line (held out 9101 midgame-09122, at 0.33 px/mm: a false green wink a pixel or two from a
/// white pot's rim, when only the pot's body was left out).
const POT_CLEAR_MM: f64 = 60.0;
/// The felt is taken up to the pot's body ([`super::pot_body`]) grown by this much (mm), and
/// circles are looked for there: a wink of the felt's colour against the pot has its middle a
/// radius from the body (the fifth renderer's r720_s2_001: a small green 54 mm from the pot's
/// middle, inside the 60 mm once left out).
const POT_GROWN_MM: f64 = 1.0;
/// Least radius of a small wink in the frame, pixels: a face fewer pixels across holds too few to
/// average (and a JPEG's 8-pixel blocks are as large as winks).
const MIN_SMALL_RADIUS_PX: f64 = 3.0;
/// Winks a colour has (rule 2.1.1: two large and four small).
const WINKS_A_COLOUR: usize = 6;
/// The circles ([`circles`]) are looked for in the frame scaled so that a small wink's radius is
/// this many pixels: the gradient Hough transform's votes need a rim of some length (at 4.6 px,
/// a 720p frame's, it found none), and a 4K frame's rims need no more.
const CIRCLE_SMALL_RADIUS_PX: f64 = 9.0;
/// The edges the circles are drawn from: Canny's upper threshold (OpenCV's 3×3 Sobel, L1, on 8-bit
/// lightness) at least this ...
const CIRCLE_EDGE_MIN: f64 = 30.0;
/// ... and this many times the felt's own mean gradient (a textured felt's fibres cross the bar
/// at 30 everywhere: over a thousand circles on a frame).
const CIRCLE_EDGE_TEXTURES: f64 = 5.0;
/// Least votes for a circle (OpenCV's accumulator threshold, at the scale above).
const CIRCLE_VOTES: f64 = 12.0;
/// Circles measured, at most, for each wink of the felt's colour not found.
const CIRCLES_A_MISSING: usize = 3;
/// A circle is not measured where its middle lies within a wink found's outline and this share
/// of a small wink's radius beyond it (that wink's own rim): the middle of a wink of the felt's
/// colour touching another lies a radius beyond, and under one, nearer. (At a whole small radius
/// the fifth renderer's recall was 94.4%, at a half or none 94.8%; ours unchanged either way.)
const CIRCLE_BESIDE_SHARE: f64 = 0.5;

/// Where a wink of the felt's colour may lie ([`felt_hued`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Hidden {
    /// The felt's colour.
    pub colour: Colour,
    /// Its middle in the frame.
    pub at: PixelPoint,
    /// Its radius in the frame, pixels.
    pub radius_px: f64,
    /// Looked for by its outline, a circle in the lightness ([`circles`]), not by its colour off
    /// the felt's line.
    pub outlined: bool,
}

/// Where winks of the felt's own colour may lie unseen by the colour model, looked for in the
/// label image `image` and, by their outlines, in `frame` (the same region at full resolution):
/// most standing out first, at most two for each wink of
/// that colour not found off the felt's line and [`CIRCLES_A_MISSING`] by their outlines. Empty
/// unless the felt's hue is green's or blue's, fewer than six of that colour are among `found`,
/// and a small wink is [`MIN_SMALL_RADIUS_PX`] in radius or more.
#[allow(clippy::too_many_arguments)]
pub(super) fn felt_hued(image: &impl opencv::core::ToInputArray, frame: &impl opencv::core::ToInputArray, lab8: &Lab8, labels: &Labels, masks: &Masks, model: &ColourModel, cal: &Calibration, mat: &MatSpec, nominal: &NominalDiameters, found: &[Found]) -> opencv::Result<Vec<Hidden>> {
    let felt = model.felt;
    if felt.chroma() < MIN_FELT_CHROMA {
        return Ok(Vec::new());
    }
    // Warm felts (tan, brown, red) share their hues with skin and wood: a fingertip over them
    // stands out as a wink of their colour would.
    let Some(colour) = model.nearest_hue(felt.hue_deg()).filter(|c| matches!(c, Colour::Green | Colour::Blue)) else { return Ok(Vec::new()) };
    let have = found.iter().filter(|f| f.colour == colour).count();
    if have >= WINKS_A_COLOUR {
        return Ok(Vec::new());
    }
    let (lw, lh) = (masks.width, masks.bufs.first().map_or(0, |b| b.len() as i32 / masks.width.max(1)));
    if lw < 8 || lh < 8 {
        return Ok(Vec::new());
    }
    let s = labels.scale as f64;
    let ppm = px_per_mm(cal, MatPoint::new(0.0, 0.0));
    let r_small = nominal.small_mm / 2.0 * ppm / s;
    if r_small * s < MIN_SMALL_RADIUS_PX {
        return Ok(Vec::new());
    }
    // The grid: blocks of label pixels half a small wink's radius wide.
    let g = ((r_small / 2.0).floor() as i32).max(1);
    let (gw, gh) = (lw / g, lh / g);
    if gw < 8 || gh < 8 {
        return Ok(Vec::new());
    }

    // Felt: on the mat, off its baselines, no other wink colour labelled, no wink found, off the
    // pot's body.
    let to_label = |m: MatPoint| cal.mat_to_image(m).map(|p| labels.label_pixel(p));
    let mut felt_mask = Mat::new_rows_cols_with_default(lh, lw, opencv::core::CV_8U, Scalar::all(0.0))?;
    // 255 where felt (a byte's full scale, for the block means below).
    if let Some(inner) = mat.outline().inset(EDGE_INSET_MM) {
        super::fill_outline(&mut felt_mask, &inner, cal, labels)?;
    }
    let line_px = ((LINE_BAND_MM * ppm / s).ceil() as i32).max(1);
    for b in mat.baselines() {
        let pts: Vec<Point> = (0..=EDGE_SAMPLES).filter_map(|k| to_label(b.segment.a + (b.segment.b - b.segment.a) * (k as f64 / EDGE_SAMPLES as f64))).collect();
        for w in pts.windows(2) {
            imgproc::line(&mut felt_mask, w[0], w[1], Scalar::all(0.0), line_px, imgproc::LINE_8, 0)?;
        }
    }
    // The felt's own colour's pixels stay: its winks found are cut out below, and a wink of it
    // whose middle alone the model labels is looked for here too.
    let own = super::colour_index(colour);
    for (k, (buf, bb)) in masks.bufs.iter().zip(masks.bbox).enumerate() {
        let Some(bb) = bb.filter(|_| k != own && buf.len() == (lw * lh) as usize) else { continue };
        let labelled = Mat::new_rows_cols_with_data(lh, lw, buf.as_slice())?;
        let mut felt_part = Mat::roi_mut(&mut felt_mask, bb)?;
        let mut kept = Mat::default();
        opencv::core::subtract(&felt_part, &Mat::roi(&labelled, bb)?, &mut kept, &opencv::core::no_array(), -1)?;
        kept.copy_to(&mut felt_part)?;
    }
    for f in found {
        imgproc::circle(&mut felt_mask, labels.label_pixel(f.centre_px), (f.radius_px / s + 2.0).ceil() as i32, Scalar::all(0.0), imgproc::FILLED, imgproc::LINE_8, 0)?;
    }
    let pot: opencv::core::Vector<Point> = super::pot_body(cal, POT_GROWN_MM).into_iter().map(|p| labels.label_pixel(p)).collect();
    if pot.len() >= 3 {
        imgproc::fill_convex_poly(&mut felt_mask, &pot, Scalar::all(0.0), imgproc::LINE_8, 0)?;
    }

    // On the grid: block means, and each block's a*b* off the felt's line of shades (signed, CIE
    // units; from the crate's tables, as the labelling's: OpenCV's 8-bit Lab builds its own
    // tables on its first call, 0.1 s).
    let grid = Size::new(gw, gh);
    let crop = Rect::new(0, 0, gw * g, gh * g);
    let mut bgr_g = Mat::default();
    imgproc::resize(&Mat::roi(&image.input_array()?.get_mat(-1)?, crop)?, &mut bgr_g, grid, 0.0, 0.0, imgproc::INTER_AREA)?;
    let off_of = |bgr: &[u8]| model.felt_line_offset(Lab::from_cv8(lab8.lab([bgr[0], bgr[1], bgr[2]]))) as f32;
    let offs: Vec<f32> = bgr_g.data_bytes()?.par_chunks_exact(3).map(off_of).collect();
    let off_g = Mat::new_rows_cols_with_data(gh, gw, offs.as_slice())?.try_clone()?;
    let mut felt_b = Mat::default();
    imgproc::resize(&Mat::roi(&felt_mask, crop)?, &mut felt_b, grid, 0.0, 0.0, imgproc::INTER_AREA)?;
    let mut felt_g = Mat::default();
    felt_b.convert_to(&mut felt_g, CV_32F, 1.0 / 255.0, 0.0)?;
    let mut off_felt = Mat::default();
    opencv::core::multiply(&off_g, &felt_g, &mut off_felt, 1.0, CV_32F)?;

    let odd = |x: f64| ((x.round() as i32) / 2 * 2 + 1).max(1);
    let (kf, kb) = (odd(FACE_BOX_RADII * r_small / g as f64), odd(FELT_BOX_RADII * r_small / g as f64));
    let boxed = |m: &Mat, k: i32| -> opencv::Result<Mat> {
        let mut out = Mat::default();
        imgproc::blur(m, &mut out, Size::new(k, k), Point::new(-1, -1), opencv::core::BORDER_REPLICATE)?;
        Ok(out)
    };
    let face_sum = boxed(&off_felt, kf)?;
    let face_felt = boxed(&felt_g, kf)?;
    let round_sum = boxed(&off_felt, kb)?;
    let round_felt = boxed(&felt_g, kb)?;
    let (face_sum, face_felt, round_sum, round_felt) = (face_sum.data_typed::<f32>()?, face_felt.data_typed::<f32>()?, round_sum.data_typed::<f32>()?, round_felt.data_typed::<f32>()?);

    // How far each grid point's face stands out, where it and the felt round it are felt.
    let cells = (gw * gh) as usize;
    let mut response = vec![f32::NAN; cells];
    for k in 0..cells {
        if face_felt[k] as f64 >= MIN_FACE_FELT && round_felt[k] as f64 >= MIN_BOX_FELT {
            response[k] = (face_sum[k] / face_felt[k] - round_sum[k] / round_felt[k]).abs();
        }
    }
    let mut seen: Vec<f32> = response.iter().copied().filter(|v| v.is_finite()).collect();
    if seen.len() < 100 {
        return Ok(Vec::new());
    }
    let mid = seen.len() / 2;
    seen.select_nth_unstable_by(mid, f32::total_cmp);
    // The median of |x| for a Gaussian x is 0.674 sd.
    let noise = (seen[mid] as f64 / 0.674).max(1e-3);

    // Peaks: the most standing-out point within a small wink's diameter.
    let reach = ((2.0 * r_small / g as f64).round() as i32).max(1);
    let outline = mat.outline();
    let baselines = mat.baselines();
    let clear = nominal.large_mm / 2.0 + CLEARANCE_MM;
    let mut out = Vec::new();
    for gj in 0..gh {
        for gi in 0..gw {
            let v = response[(gj * gw + gi) as usize];
            if !(v.is_finite() && v as f64 >= (MIN_SIGMAS * noise).max(MIN_RESPONSE)) {
                continue;
            }
            let peak = (gj - reach..=gj + reach).all(|y| {
                (gi - reach..=gi + reach).all(|x| {
                    x < 0 || y < 0 || x >= gw || y >= gh || (x, y) == (gi, gj) || {
                        let w = response[(y * gw + x) as usize];
                        !(w > v || (w == v && (y, x) < (gj, gi)))
                    }
                })
            });
            if !peak {
                continue;
            }
            let p = labels.to_frame((gi * g) as f64 + (g - 1) as f64 / 2.0, (gj * g) as f64 + (g - 1) as f64 / 2.0);
            // Beside a wink found, its rim's blur and its shadow stand out from the felt too.
            if found.iter().any(|f| f.centre_px.distance(p) < f.radius_px + BESIDE_WINK_RADII * r_small * s) {
                continue;
            }
            let Some(at) = cal.image_to_mat(p) else { continue };
            let by_line = baselines.iter().any(|b| b.depth_behind(at).abs() < clear);
            if outline.inside_distance(at) < clear || by_line || at.norm() < POT_CLEAR_MM + clear {
                continue;
            }
            out.push((v, p));
        }
    }
    out.sort_by(|x, y| y.0.total_cmp(&x.0));
    out.truncate(2 * (WINKS_A_COLOUR - have));
    let mut out: Vec<Hidden> = out.into_iter().map(|(_, at)| Hidden { colour, at, radius_px: r_small * s, outlined: false }).collect();
    // The same colour's winks by their outlines, where the felt's line did not find them.
    let (r_full, missing) = (r_small * s, WINKS_A_COLOUR - have);
    let outlines = circles(frame, &felt_mask, labels, r_full, nominal)?;
    let near_any = |p: PixelPoint, out: &[Hidden]| found.iter().any(|f| f.centre_px.distance(p) < f.radius_px + CIRCLE_BESIDE_SHARE * r_full) || out.iter().any(|h| h.at.distance(p) < r_full);
    for (at, radius_px) in outlines {
        if out.iter().filter(|h| h.outlined).count() >= CIRCLES_A_MISSING * missing {
            break;
        }
        if !near_any(at, &out) {
            out.push(Hidden { colour, at, radius_px: radius_px.max(r_full), outlined: true });
        }
    }
    Ok(out)
}

/// Circles of a wink's size in the lightness of `frame` (the label image's region at full
/// resolution) whose middles lie on the felt (`felt`, a label image: non-zero where
/// felt), most voted first: middles and radii in the frame, pixels. The region is scaled so that a
/// small wink ([`CIRCLE_SMALL_RADIUS_PX`]; `r_small` in the frame) is enough pixels across, all
/// but the felt is set to the felt's mean (the table, the lines and the winks found draw no
/// circles), and the edges are taken above the felt's own texture ([`CIRCLE_EDGE_TEXTURES`]).
fn circles(frame: &impl opencv::core::ToInputArray, felt: &Mat, labels: &Labels, r_small: f64, nominal: &NominalDiameters) -> opencv::Result<Vec<(PixelPoint, f64)>> {
    let f = CIRCLE_SMALL_RADIUS_PX / r_small.max(1e-6);
    let mut grey = Mat::default();
    imgproc::cvt_color_def(frame, &mut grey, imgproc::COLOR_BGR2GRAY)?;
    let mut scaled = Mat::default();
    imgproc::resize(&grey, &mut scaled, Size::new(0, 0), f, f, if f < 1.0 { imgproc::INTER_AREA } else { imgproc::INTER_LINEAR })?;
    if scaled.rows() < 8 || scaled.cols() < 8 {
        return Ok(Vec::new());
    }
    let mut on_felt = Mat::default();
    imgproc::resize(felt, &mut on_felt, scaled.size()?, 0.0, 0.0, imgproc::INTER_NEAREST)?;
    let felt_pixels = opencv::core::count_non_zero(&on_felt)?;
    if felt_pixels < 100 {
        return Ok(Vec::new());
    }
    let mean = opencv::core::mean(&scaled, &on_felt)?;
    let mut not_felt = Mat::default();
    opencv::core::bitwise_not_def(&on_felt, &mut not_felt)?;
    scaled.set_to(&mean, &not_felt)?;
    let mut smooth = Mat::default();
    imgproc::gaussian_blur_def(&scaled, &mut smooth, Size::new(0, 0), 1.0)?;
    // The felt's own texture: its mean L1 gradient, as Canny's.
    let (mut gx, mut gy) = (Mat::default(), Mat::default());
    imgproc::sobel_def(&smooth, &mut gx, opencv::core::CV_16S, 1, 0)?;
    imgproc::sobel_def(&smooth, &mut gy, opencv::core::CV_16S, 0, 1)?;
    let texture = (opencv::core::norm(&gx, opencv::core::NORM_L1, &on_felt)? + opencv::core::norm(&gy, opencv::core::NORM_L1, &on_felt)?) / felt_pixels as f64;
    let (rs, rl) = (CIRCLE_SMALL_RADIUS_PX, CIRCLE_SMALL_RADIUS_PX * nominal.large_mm / nominal.small_mm);
    let mut found = opencv::core::Vector::<opencv::core::Vec3f>::new();
    let edge = CIRCLE_EDGE_MIN.max(CIRCLE_EDGE_TEXTURES * texture);
    imgproc::hough_circles(&smooth, &mut found, imgproc::HOUGH_GRADIENT, 1.0, 1.2 * rs, edge, CIRCLE_VOTES, (0.8 * rs).floor() as i32, (1.15 * rl).ceil() as i32)?;
    let mut out = Vec::new();
    for c in found.iter() {
        let at = PixelPoint::new(labels.x0 as f64 + (c[0] as f64 + 0.5) / f - 0.5, labels.y0 as f64 + (c[1] as f64 + 0.5) / f - 0.5);
        let Point { x: i, y: j } = labels.label_pixel(at);
        if i >= 0 && j >= 0 && i < felt.cols() && j < felt.rows() && *felt.at_2d::<u8>(j, i)? != 0 {
            out.push((at, c[2] as f64 / f));
        }
    }
    Ok(out)
}

/// A wink found by [`felt_hued`] is kept when its face's colour off the felt's line of shades
/// differs from the felt's round it by at least this much (CIE units; medians of 12 and 24
/// samples, where single felt pixels scatter about 1 unit off the line) ...
const MIN_FACE_OFF: f64 = 1.5;
/// ... and by this many times the scatter of the felt round it (a blotchy shade, another wink's
/// blur).
const MIN_FACE_OFF_SPREADS: f64 = 2.5;

/// Whether a wink measured where [`felt_hued`] looked stands out from the felt round it (off the
/// winks found, `others`) as a wink of the felt's colour does: its face off the felt's line by
/// [`MIN_FACE_OFF`] and [`MIN_FACE_OFF_SPREADS`] of the felt round it, and its hue not another
/// colour's (a wink of another colour whose face the lamp has whitened is not one of the felt's).
pub(super) fn stands_out(view: &super::sample::LinearView<'_>, model: &ColourModel, f: &Found, others: &[Found]) -> bool {
    face_against_felt(view, f, others, |c| model.felt_line_offset(c)).is_some_and(|a| a.difference.abs() >= MIN_FACE_OFF.max(MIN_FACE_OFF_SPREADS * a.spread) && model.nearest_hue(a.face.hue_deg()).is_none_or(|c| c == f.colour))
}

/// A wink measured on a circle ([`circles`]) is kept when its face's lightness differs from the
/// felt's round it by at least this much (L*, medians of 12 and 24 samples) ...
const MIN_FACE_LIGHTNESS: f64 = 3.0;
/// ... or its face's chroma exceeds the felt's round it by at least this much (C*, medians as
/// above) and [`MIN_FACE_OFF_SPREADS`] of that felt's own scatter in C*: a purer plastic of the
/// felt's hue (a shade or a glare takes chroma away, never adds it) ...
const MIN_FACE_PURITY: f64 = 4.0;
/// ... its face is at least this share of the felt's chroma (the fifth renderer's green winks on
/// green felt, 99 seen whole: 0.77–2.4, and at least 0.93 where their lightness differs by 3; a
/// squidger lying on the felt, a grey, white or black disc, reads far less) ...
const MIN_FACE_CHROMA_SHARE: f64 = 0.9;
/// ... and its hue within this many degrees of the felt's (those winks: within 13.4°).
const MAX_FACE_HUE_OFF_DEG: f64 = 20.0;

/// Whether a wink measured on a circle in the lightness ([`circles`]) stands out from the felt
/// round it as a wink of the felt's hue but darker or purer plastic does: its face's L* less the
/// felt's just round it by [`MIN_FACE_LIGHTNESS`] and [`MIN_FACE_OFF_SPREADS`] of that felt's own
/// scatter in L* (or its C* above the felt's by [`MIN_FACE_PURITY`] and as many spreads in C*),
/// as coloured as the felt ([`MIN_FACE_CHROMA_SHARE`]) and of its hue ([`MAX_FACE_HUE_OFF_DEG`]),
/// and not another colour's. The felt round it is read off the winks found, `others`.
pub(super) fn stands_out_by_lightness(view: &super::sample::LinearView<'_>, model: &ColourModel, f: &Found, others: &[Found]) -> bool {
    let purer = || face_against_felt(view, f, others, |c| c.chroma()).is_some_and(|a| a.difference >= MIN_FACE_PURITY.max(MIN_FACE_OFF_SPREADS * a.spread));
    face_against_felt(view, f, others, |c| c.l).is_some_and(|a| {
        (a.difference.abs() >= MIN_FACE_LIGHTNESS.max(MIN_FACE_OFF_SPREADS * a.spread) || purer())
            && a.face.chroma() >= MIN_FACE_CHROMA_SHARE * a.felt.chroma()
            && super::colour::hue_diff(a.face.hue_deg(), a.felt.hue_deg()).abs() <= MAX_FACE_HUE_OFF_DEG
            && model.nearest_hue(a.face.hue_deg()).is_none_or(|c| c == f.colour)
    })
}

/// Share of a wink's outline radius at which the felt round it is read ([`stands_out`]).
const RING_SHARE: f64 = 1.7;

/// The felt round a wink is read this far (pixels) or more beyond the outlines of the winks found
/// (their rims' blur, [`face_against_felt`]). Read across them, the fifth renderer's r1080_s1_024
/// green wink between a yellow and a blue (a small wink's radius 7.2 px) had a scatter of 6.9 in
/// C* round it, and its face, 8.7 purer than the felt, was thrown out as felt.
const OTHERS_CLEAR_PX: f64 = 2.0;

/// How a wink measured where one was looked for compares with the felt round it along `channel`
/// (its colour off the felt's line of shades, or its lightness): its face's less the felt's just
/// round it (medians, CIE units; the felt read [`OTHERS_CLEAR_PX`] or more off the winks found,
/// `others`), that felt's own scatter (a robust sd of its samples), and the face's and the
/// felt's median colours.
fn face_against_felt(view: &super::sample::LinearView<'_>, f: &Found, others: &[Found], channel: impl Fn(Lab) -> f64) -> Option<FaceAgainstFelt> {
    let off_others = |p: &PixelPoint| others.iter().all(|o| o.centre_px.distance(*p) > o.radius_px + OTHERS_CLEAR_PX);
    let face: Vec<Lab> = super::face_samples(view, f).collect();
    let ring: Vec<Lab> = (0..24)
        .map(|k| {
            let t = k as f64 / 24.0 * std::f64::consts::TAU;
            f.centre_px + PixelPoint::new(t.cos(), t.sin()) * (RING_SHARE * f.radius_px)
        })
        .filter(off_others)
        .filter_map(|p| super::fit::lab_at(view, p))
        .collect();
    let median = |mut v: Vec<f64>| -> Option<f64> {
        (v.len() >= 5).then(|| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
    };
    let face_value = median(face.iter().map(|&c| channel(c)).collect())?;
    let ring_values: Vec<f64> = ring.iter().map(|&c| channel(c)).collect();
    let ring_value = median(ring_values.clone())?;
    let spread = median(ring_values.iter().map(|o| (o - ring_value).abs()).collect())? / 0.674;
    Some(FaceAgainstFelt { difference: face_value - ring_value, spread, face: super::median_lab(&face)?, felt: super::median_lab(&ring)? })
}

/// A wink's face against the felt round it ([`face_against_felt`]).
struct FaceAgainstFelt {
    /// The face's value less the felt's.
    difference: f64,
    /// The felt's own scatter (a robust sd).
    spread: f64,
    /// The face's median colour.
    face: Lab,
    /// The felt's.
    felt: Lab,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::template;
    use opencv::core::CV_8UC3;

    /// `img` blurred as a lens does and each channel of each pixel moved by up to ±14 (a
    /// deterministic generator seeded with `seed`).
    fn blurred_and_noisy(img: &Mat, seed: u64) -> opencv::Result<Mat> {
        let mut blurred = Mat::default();
        imgproc::gaussian_blur(img, &mut blurred, Size::new(3, 3), 0.7, 0.7, opencv::core::BORDER_REPLICATE)?;
        let mut state = seed;
        for v in blurred.data_bytes_mut()?.iter_mut() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let noise = ((state >> 33) % 29) as i32 - 14;
            *v = (*v as i32 + noise).clamp(0, 255) as u8;
        }
        Ok(blurred)
    }

    /// Noisy green felt (each channel of each pixel ±14 of sRGB (70, 140, 60), so single pixels
    /// scatter further in a*b* than the wink differs), a green wink 9 units of a*b* off it (7 off the
    /// felt's line of shades), a patch of shade and a white line blurred into the felt: only the
    /// wink is looked for by its colour.
    #[test]
    fn a_wink_of_the_felts_colour_is_looked_for_where_no_pixel_tells_it_from_the_felt() -> opencv::Result<()> {
        let cal = template::test_calibration();
        let (w, h) = (cal.width as i32, cal.height as i32);
        let lab8 = Lab8::new();
        let mut img = Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::new(60.0, 140.0, 70.0, 0.0))?;
        let r = (NominalDiameters::STANDARD.small_mm / 2.0 * px_per_mm(&cal, MatPoint::new(0.0, 0.0))).round() as i32;
        let wink = Point::new(135, 30);
        imgproc::circle(&mut img, wink, r, Scalar::new(78.0, 140.0, 60.0, 0.0), -1, imgproc::LINE_AA, 0)?;
        imgproc::circle(&mut img, Point::new(25, 135), r + 3, Scalar::new(36.0, 84.0, 42.0, 0.0), -1, imgproc::LINE_AA, 0)?;
        imgproc::line(&mut img, Point::new(145, 70), Point::new(145, 159), Scalar::all(235.0), 2, imgproc::LINE_AA, 0)?;
        let blurred = blurred_and_noisy(&img, 12345)?;
        let felt = {
            let c = lab8.lab([60, 140, 70]);
            Lab::from_cv8(c)
        };
        let model = ColourModel::new(felt, None);
        let labels = Labels { x0: 0, y0: 0, scale: 1 };
        let masks = Masks { width: w, bufs: vec![vec![0u8; (w * h) as usize]; 4], bbox: [None; 4], written: None, tiles: 0 };
        let found = felt_hued(&blurred, &blurred, &lab8, &labels, &masks, &model, &cal, &MatSpec::STANDARD, &NominalDiameters::STANDARD, &[])?;
        // By their colour off the felt's line (a crisp disc of shade has a wink's outline, and
        // is left to the outline's own check, [`stands_out_by_lightness`]).
        let by_colour: Vec<&Hidden> = found.iter().filter(|h| !h.outlined).collect();
        let at: Vec<(f64, f64)> = by_colour.iter().map(|h| (h.at.x, h.at.y)).collect();
        assert_eq!(by_colour.len(), 1, "{at:?}");
        assert_eq!(by_colour[0].colour, Colour::Green);
        assert!(by_colour[0].at.distance(PixelPoint::new(wink.x as f64, wink.y as f64)) < 3.0, "{at:?}");
        Ok(())
    }

    /// Noisy green felt as above; a wink of the felt's own colour a fifth darker (a shade of it,
    /// on the felt's line of shades, where the colour search does not look), a soft shadow as
    /// large and as dark, and a white line: the wink is looked for by its outline; the shadow,
    /// whose edge is no circle, and the line are not.
    #[test]
    fn a_wink_on_the_felts_line_of_shades_is_looked_for_by_its_outline() -> opencv::Result<()> {
        let cal = template::test_calibration();
        let (w, h) = (cal.width as i32, cal.height as i32);
        let lab8 = Lab8::new();
        let felt_bgr = [60.0, 140.0, 70.0];
        let mut img = Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::new(felt_bgr[0], felt_bgr[1], felt_bgr[2], 0.0))?;
        let r = (NominalDiameters::STANDARD.small_mm / 2.0 * px_per_mm(&cal, MatPoint::new(0.0, 0.0))).round() as i32;
        let darker = Scalar::new(0.8 * felt_bgr[0], 0.8 * felt_bgr[1], 0.8 * felt_bgr[2], 0.0);
        let wink = Point::new(135, 30);
        imgproc::circle(&mut img, wink, r, darker, -1, imgproc::LINE_AA, 0)?;
        let mut shadow = Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::new(felt_bgr[0], felt_bgr[1], felt_bgr[2], 0.0))?;
        imgproc::circle(&mut shadow, Point::new(25, 135), r, darker, -1, imgproc::LINE_8, 0)?;
        let mut soft = Mat::default();
        imgproc::gaussian_blur(&shadow, &mut soft, Size::new(0, 0), 0.6 * r as f64, 0.0, opencv::core::BORDER_REPLICATE)?;
        let mut shadow_mask = Mat::new_rows_cols_with_default(h, w, opencv::core::CV_8U, Scalar::all(0.0))?;
        imgproc::circle(&mut shadow_mask, Point::new(25, 135), 4 * r, Scalar::all(255.0), -1, imgproc::LINE_8, 0)?;
        soft.copy_to_masked(&mut img, &shadow_mask)?;
        imgproc::line(&mut img, Point::new(145, 70), Point::new(145, 159), Scalar::all(235.0), 2, imgproc::LINE_AA, 0)?;
        let blurred = blurred_and_noisy(&img, 54321)?;
        let felt = Lab::from_cv8(lab8.lab([60, 140, 70]));
        let model = ColourModel::new(felt, None);
        let labels = Labels { x0: 0, y0: 0, scale: 1 };
        let masks = Masks { width: w, bufs: vec![vec![0u8; (w * h) as usize]; 4], bbox: [None; 4], written: None, tiles: 0 };
        let found = felt_hued(&blurred, &blurred, &lab8, &labels, &masks, &model, &cal, &MatSpec::STANDARD, &NominalDiameters::STANDARD, &[])?;
        let at: Vec<(f64, f64, bool)> = found.iter().map(|h| (h.at.x, h.at.y, h.outlined)).collect();
        let near_wink: Vec<&Hidden> = found.iter().filter(|h| h.at.distance(PixelPoint::new(wink.x as f64, wink.y as f64)) < 3.0).collect();
        assert!(near_wink.iter().any(|h| h.outlined && h.colour == Colour::Green), "{at:?}");
        assert_eq!(found.len(), 1, "{at:?}");
        Ok(())
    }

    /// Noisy green felt as above; measured on circles ([`circles`]), a wink of the felt's hue and
    /// lightness but purer plastic (C* 14 above the felt's; on the felt's line of shades, a shade
    /// of no lightness) is kept, while a grey disc of the felt's lightness (a squidger), a paler
    /// disc of its hue (glare takes chroma away) and bare felt are not.
    #[test]
    fn a_purer_wink_of_the_felts_hue_and_lightness_stands_out_and_a_paler_disc_does_not() -> opencv::Result<()> {
        let cal = template::test_calibration();
        let (w, h) = (cal.width as i32, cal.height as i32);
        let felt_bgr = Scalar::new(60.0, 140.0, 70.0, 0.0);
        let mut img = Mat::new_rows_cols_with_default(h, w, CV_8UC3, felt_bgr)?;
        let r = NominalDiameters::STANDARD.small_mm / 2.0 * px_per_mm(&cal, MatPoint::new(0.0, 0.0));
        // sRGB of L* within 1.4 of the felt's 52.2: purer (C* 66.7 against 52.5, hue within 0.1°),
        // grey, and paler (C* 34).
        let discs = [(Point::new(40, 40), Scalar::new(40.0, 145.0, 45.0, 0.0)), (Point::new(120, 40), Scalar::all(128.0)), (Point::new(40, 120), Scalar::new(85.0, 135.0, 90.0, 0.0))];
        for &(at, bgr) in &discs {
            imgproc::circle(&mut img, at, r.round() as i32, bgr, -1, imgproc::LINE_AA, 0)?;
        }
        let blurred = blurred_and_noisy(&img, 777)?;
        let view = crate::detect::sample::LinearView::new(&blurred)?;
        let model = ColourModel::new(Lab::from_cv8(Lab8::new().lab([60, 140, 70])), None);
        let kept = |x: i32, y: i32| {
            let p = PixelPoint::new(x as f64, y as f64);
            let f = Found { centre_px: p, radius_px: r, ..crate::detect::tests::wink(Colour::Green, cal.image_to_mat(p).unwrap_or(MatPoint::new(0.0, 0.0))) };
            stands_out_by_lightness(&view, &model, &f, &[])
        };
        assert!(kept(40, 40), "the purer wink");
        assert!(!kept(120, 40), "the grey disc");
        assert!(!kept(40, 120), "the paler disc");
        assert!(!kept(120, 120), "bare felt");
        Ok(())
    }
}
