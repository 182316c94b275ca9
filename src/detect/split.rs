//! Two winks of one colour read as one.
//!
//! A wink squopped deeply by another of its colour (their centres a radius or less apart) makes
//! one region of that colour barely longer than a wink: the distance transform has one maximum,
//! and the outline fit settles on one of the two rims, the other's edge points its outliers. What
//! gives the second wink away is the colour it leaves unexplained: a crescent of the region beyond
//! every fitted outline of that colour. Each such crescent, if large enough, is measured as a wink
//! of its own (rays from a circle inside it, the first wink's outline covering its hidden rim).
//! It is kept when the colour's set still has room for it (rule 2.1.1: two large and four small
//! winks a colour), its fit explains the crescent, lies clear of the first wink by more than a
//! misfit and a blur, and shows no felt where its face would be; and when the first wink, measured
//! again with the second's outline covering its rim, stays apart from it and still explains pixels
//! of its own.
//!
//! When the one outline settles between the two winks rather than on either rim, it falls short
//! of the pile's ends and runs beyond its sides, and no crescent is large enough. Its rim is then
//! longer one way than across, and two discs of the set's sizes fitted to its edge points explain
//! them far better than one circle ([`split_piles`]).

use super::{labelled_radius, measure, px_per_mm, Found, Hint, Labels, NEAREST_SHARE};
use crate::calibrate::Calibration;
use crate::detect::colour::ColourModel;
use crate::detect::sample::LinearView;
use crate::geometry::PixelPoint;
use crate::report::position::{Colour, NominalDiameters, WinkSize};
use opencv::core::Mat;
use opencv::imgproc;
use opencv::prelude::*;

/// A mask pixel this close (label pixels) outside a fitted outline of its colour is the outline's
/// own blur, not another wink.
const EXPLAINED_MARGIN_PX: f64 = 1.0;

/// The least crescent, as a share of the pixels labelled for a whole small wink, looked at as a
/// second wink.
const MIN_CRESCENT_SHARE: f64 = 0.25;

/// A second wink's centre at least this far from the first's (frame pixels): nearer, a crescent is
/// the first outline's misfit (up to a pixel) and its blur (about a pixel) together.
const MIN_APART_PX: f64 = 2.5;

/// At most this share of a second wink's face (a pixel in from its outline) may show felt.
const MAX_BARE_SHARE: f64 = 0.1;

/// A second wink's fit must explain this share of its crescent.
const MIN_EXPLAINED_SHARE: f64 = 0.6;

/// A pile's outline must be seen against the felt at least this share of the way round.
const MIN_PILE_RIM_SHARE: f64 = 0.75;

/// The least elongation (second harmonic's amplitude over the mean radius) looked at as a pile.
const MIN_PILE_ELONGATION: f64 = 0.12;

/// Two discs must bring the edge points' RMS down to this share of one circle's.
const MAX_PILE_RMS_SHARE: f64 = 0.6;

/// The most RMS (frame pixels) two discs fitted to a pile's rim may leave. (Over the five
/// evaluation sets the piles split rightly left 0.06–0.43 px; two discs put where there was one
/// wink, or one pile of three, 0.46–0.87 px.)
const MAX_PILE_RMS_PX: f64 = 0.5;

/// Winks of the pile's colour found within this share of its mean radius of its centre are the
/// pile's own.
const PILE_MEMBER_SHARE: f64 = 0.8;

/// One colour's mask over the label image.
pub(super) struct ColourMask<'a> {
    pub buf: &'a [u8],
    pub width: i32,
    pub height: i32,
}

/// A crescent of a colour unexplained by the fitted outlines, next to one of them.
#[derive(Debug, Clone)]
pub(super) struct Crescent {
    /// The wink it lies against (index into the found winks).
    pub beside: usize,
    /// Its pixels (label coordinates).
    pub pixels: Vec<(i32, i32)>,
}

/// Whether label pixel (i, j) is inside (with the blur's margin) one of `outlines` (label centre, radius).
fn explained(outlines: &[(f64, f64, f64)], i: i32, j: i32) -> bool {
    outlines.iter().any(|&(ci, cj, r)| ((i as f64 - ci).powi(2) + (j as f64 - cj).powi(2)).sqrt() <= r + EXPLAINED_MARGIN_PX)
}

/// The share of the label pixels inside `disc` (label centre and radius) that no colour's mask holds.
fn bare_share(masks: &[ColourMask<'_>; 4], (ci, cj, r): (f64, f64, f64)) -> f64 {
    let (w, h) = (masks[0].width, masks[0].height);
    let (i0, i1) = (((ci - r).floor() as i32).max(0), ((ci + r).ceil() as i32).min(w - 1));
    let (j0, j1) = (((cj - r).floor() as i32).max(0), ((cj + r).ceil() as i32).min(h - 1));
    let (mut inside, mut bare) = (0usize, 0usize);
    for j in j0..=j1 {
        for i in i0..=i1 {
            if (i as f64 - ci).powi(2) + (j as f64 - cj).powi(2) > r * r {
                continue;
            }
            inside += 1;
            let at = (j * w + i) as usize;
            if masks.iter().all(|m| m.buf.get(at).is_none_or(|&v| v == 0)) {
                bare += 1;
            }
        }
    }
    if inside == 0 {
        1.0
    } else {
        bare as f64 / inside as f64
    }
}

/// The frame outlines (centre, radius px) of the winks of `near` that `keep` keeps.
fn outlines(near: &[&Found], keep: impl Fn(&Found) -> bool) -> Vec<(PixelPoint, f64)> {
    near.iter().filter(|f| keep(f)).map(|f| (f.centre_px, f.radius_px)).collect()
}

/// How many pixels of `mask` lie inside `outline` (label centre and radius) and no other of `others`.
fn own_pixels(mask: &ColourMask<'_>, (ci, cj, r): (f64, f64, f64), others: &[(f64, f64, f64)]) -> usize {
    let reach = r + EXPLAINED_MARGIN_PX;
    let (i0, i1) = (((ci - reach).floor() as i32).max(0), ((ci + reach).ceil() as i32).min(mask.width - 1));
    let (j0, j1) = (((cj - reach).floor() as i32).max(0), ((cj + reach).ceil() as i32).min(mask.height - 1));
    let mut n = 0;
    for j in j0..=j1 {
        for i in i0..=i1 {
            if mask.buf[(j * mask.width + i) as usize] != 0 && explained(&[(ci, cj, r)], i, j) && !explained(others, i, j) {
                n += 1;
            }
        }
    }
    n
}

/// The label outlines (centre, labelled radius) of the found winks of `colour`, but `except`.
fn outlines_of(found: &[Found], colour: Colour, labels: &Labels, except: Option<usize>) -> Vec<(f64, f64, f64)> {
    let s = labels.scale as f64;
    found
        .iter()
        .enumerate()
        .filter(|&(n, f)| f.colour == colour && f.centre_mm.is_some() && Some(n) != except)
        .map(|(_, f)| {
            let (i, j) = labels.label_coords(f.centre_px);
            (i, j, labelled_radius(f.radius_px / s, s))
        })
        .collect()
}

/// The crescents of `colour` next to its found winks: connected pixels of the mask outside every
/// outline of the colour, touching the outline of the wink they are listed against.
fn crescents(mask: &ColourMask<'_>, labels: &Labels, found: &[Found], colour: Colour, small_label_area: f64) -> opencv::Result<Vec<Crescent>> {
    let s = labels.scale as f64;
    let outlines = outlines_of(found, colour, labels, None);
    let mut out: Vec<Crescent> = Vec::new();
    for (n, f) in found.iter().enumerate() {
        if f.colour != colour || f.centre_mm.is_none() {
            continue;
        }
        let (ci, cj) = labels.label_coords(f.centre_px);
        let r = labelled_radius(f.radius_px / s, s);
        let reach = (3.2 * r + 2.0).ceil() as i32;
        let (i0, j0) = (((ci.round() as i32) - reach).max(0), ((cj.round() as i32) - reach).max(0));
        let (i1, j1) = (((ci.round() as i32) + reach).min(mask.width - 1), ((cj.round() as i32) + reach).min(mask.height - 1));
        if i1 <= i0 || j1 <= j0 {
            continue;
        }
        let (w, h) = (i1 - i0 + 1, j1 - j0 + 1);
        let mut left = Mat::zeros(h, w, opencv::core::CV_8UC1)?.to_mat()?;
        let mut any = false;
        for j in j0..=j1 {
            let row = left.at_row_mut::<u8>(j - j0)?;
            for i in i0..=i1 {
                if mask.buf[(j * mask.width + i) as usize] != 0 && !explained(&outlines, i, j) {
                    row[(i - i0) as usize] = 255;
                    any = true;
                }
            }
        }
        if !any {
            continue;
        }
        let (mut lab, mut stats, mut centroids) = (Mat::default(), Mat::default(), Mat::default());
        let count = imgproc::connected_components_with_stats(&left, &mut lab, &mut stats, &mut centroids, 8, opencv::core::CV_32S)?;
        for c in 1..count {
            let area = *stats.at_2d::<i32>(c, imgproc::CC_STAT_AREA)? as f64;
            if area < MIN_CRESCENT_SHARE * small_label_area {
                continue;
            }
            let mut pixels = Vec::new();
            let mut touches = false;
            for j in 0..h {
                let row = lab.at_row::<i32>(j)?;
                for i in 0..w {
                    if row[i as usize] == c {
                        let (gi, gj) = (i + i0, j + j0);
                        pixels.push((gi, gj));
                        touches |= ((gi as f64 - ci).powi(2) + (gj as f64 - cj).powi(2)).sqrt() <= r + EXPLAINED_MARGIN_PX + 1.5;
                    }
                }
            }
            // Listed once, against the first wink it touches.
            if touches && !out.iter().any(|o| o.pixels.first() == pixels.first()) {
                out.push(Crescent { beside: n, pixels });
            }
        }
    }
    Ok(out)
}

/// Each crescent of each colour measured as a wink of its own, added when it passes (module docs).
pub(super) fn find_partners(view: &LinearView<'_>, cal: &Calibration, model: &ColourModel, nominal: &NominalDiameters, masks: &[ColourMask<'_>; 4], labels: &Labels, found: &mut Vec<Found>) -> opencv::Result<()> {
    let s = labels.scale as f64;
    for (k, colour) in Colour::ALL.into_iter().enumerate() {
        let mask = &masks[k];
        if mask.buf.is_empty() {
            continue;
        }
        let have = |found: &[Found], size: WinkSize| found.iter().filter(|f| f.colour == colour && f.size == size).count();
        if have(found, WinkSize::Small) >= WinkSize::Small.per_colour() && have(found, WinkSize::Large) >= WinkSize::Large.per_colour() {
            continue;
        }
        let Some(first) = found.iter().find(|f| f.colour == colour && f.centre_mm.is_some()) else { continue };
        let ppm = px_per_mm(cal, first.centre_mm.unwrap_or(crate::geometry::MatPoint::new(0.0, 0.0)));
        let small_label_area = std::f64::consts::PI * labelled_radius(nominal.small_mm / 2.0 * ppm / s, s).powi(2);
        let list = crescents(mask, labels, found, colour, small_label_area)?;
        for mut c in list {
            // Pixels a partner added for an earlier crescent explains are no longer unexplained.
            let now = outlines_of(found, colour, labels, None);
            c.pixels.retain(|p| !explained(&now, p.0, p.1));
            if (c.pixels.len() as f64) < MIN_CRESCENT_SHARE * small_label_area {
                continue;
            }
            let beside = found[c.beside].clone();
            let (ci, cj) = labels.label_coords(beside.centre_px);
            let n = c.pixels.len() as f64;
            let (gi, gj) = c.pixels.iter().fold((0.0, 0.0), |(a, b), p| (a + p.0 as f64 / n, b + p.1 as f64 / n));
            let (ux, uy) = (gi - ci, gj - cj);
            let len = (ux * ux + uy * uy).sqrt();
            if len < 1e-6 {
                continue;
            }
            let (ux, uy) = (ux / len, uy / len);
            let reach = c.pixels.iter().map(|p| (p.0 as f64 - ci) * ux + (p.1 as f64 - cj) * uy).fold(f64::NEG_INFINITY, f64::max);
            let at_mm = cal.image_to_mat(labels.to_frame(gi, gj)).unwrap_or(crate::geometry::MatPoint::new(0.0, 0.0));
            let ppm = px_per_mm(cal, at_mm);
            let r_px = nominal.small_mm / 2.0 * ppm;
            let r_l = labelled_radius(r_px / s, s);
            let back = (reach + 0.5 - r_l).max(0.0);
            let start = labels.to_frame(ci + ux * back, cj + uy * back);
            let near: Vec<&Found> = found.iter().filter(|f| f.centre_mm.is_some() && f.centre_px.distance(start) < 4.0 * r_px).collect();
            let hint = Hint { others: outlines(&near, |_| true), same_colour: outlines(&near, |f| f.colour == colour), ..Hint::default() };
            let Some(g) = measure(view, cal, model, colour, start, r_px, nominal, &hint) else { continue };
            let (Some(gc), Some(_)) = (g.centre_mm, g.radius_mm) else { continue };
            if have(found, g.size) >= g.size.per_colour() {
                continue;
            }
            let apart = |f: &Found| NEAREST_SHARE * f.radius_mm.unwrap_or(0.0).min(g.radius_mm.unwrap_or(0.0));
            if found.iter().filter(|f| f.colour == colour).any(|f| f.centre_mm.is_some_and(|m| m.distance(gc) < apart(f))) {
                continue;
            }
            let (gi, gj) = labels.label_coords(g.centre_px);
            let gr = labelled_radius(g.radius_px / s, s);
            // Nearer than the outlines' blur and misfit allow told apart (frame pixels), it is the
            // first wink's own halo; felt where its face would be, it is not there.
            if g.centre_px.distance(beside.centre_px) < MIN_APART_PX {
                continue;
            }
            let bare = bare_share(masks, (gi, gj, gr - 1.0));
            if bare > MAX_BARE_SHARE {
                continue;
            }
            let covered = c.pixels.iter().filter(|p| explained(&[(gi, gj, gr)], p.0, p.1)).count() as f64;
            if covered < MIN_EXPLAINED_SHARE * n {
                continue;
            }
            // The first wink measured again with the second's outline covering its rim: it may
            // have straddled the two. Both must stay apart...
            let mut near: Vec<&Found> = found.iter().enumerate().filter(|&(i, f)| i != c.beside && f.centre_mm.is_some() && f.centre_px.distance(beside.centre_px) < 4.0 * r_px).map(|(_, f)| f).collect();
            near.push(&g);
            let hint = Hint { others: outlines(&near, |_| true), same_colour: outlines(&near, |f| f.colour == colour), rest: Some(beside.rest), size: Some(beside.size), fitted: true, ..Hint::default() };
            let again = measure(view, cal, model, colour, beside.centre_px, beside.radius_px, nominal, &hint).filter(|a| a.centre_mm.is_some_and(|m| m.distance(gc) >= apart(a)));
            // ... and each explain pixels of the colour that no other outline does.
            let again = again.filter(|a| {
                let others = outlines_of(found, colour, labels, Some(c.beside));
                let (ai, aj) = labels.label_coords(a.centre_px);
                let a_outline = (ai, aj, labelled_radius(a.radius_px / s, s));
                let own = |o: (f64, f64, f64), other: (f64, f64, f64)| {
                    let mut rest = others.clone();
                    rest.push(other);
                    own_pixels(mask, o, &rest) as f64 >= MIN_CRESCENT_SHARE * small_label_area
                };
                own(a_outline, (gi, gj, gr)) && own((gi, gj, gr), a_outline)
            });
            let Some(again) = again else { continue };
            found[c.beside] = Found { level: beside.level, ..again };
            found.push(g);
        }
    }
    Ok(())
}

/// Two winks of one colour offset in a pile, read as one wink (their union is longer one way
/// than across, and each may be too shallow a crescent beyond the other for [`find_partners`]):
/// split when two discs of the set's sizes explain the rim's edge points far better than one
/// circle and than the winks of the colour already found there, and each disc, measured as a
/// wink with the other covering its hidden rim, is found apart from the other with no felt
/// where its face would be.
pub(super) fn split_piles(view: &LinearView<'_>, cal: &Calibration, model: &ColourModel, nominal: &NominalDiameters, masks: &[ColourMask<'_>; 4], labels: &Labels, found: &mut Vec<Found>) {
    let s = labels.scale as f64;
    let mut replaced: Vec<usize> = Vec::new();
    for i in 0..found.len() {
        let f = &found[i];
        let Some(at_mm) = f.centre_mm.filter(|_| f.rim_share >= MIN_PILE_RIM_SHARE && !replaced.contains(&i)) else { continue };
        let (colour, c0, level) = (f.colour, f.rays_from.0, f.level);
        let pts: Vec<PixelPoint> = f.edges.iter().filter(|e| e.beyond == super::fit::Beyond::Background).map(|e| e.px).collect();
        let Some(long) = elongation(c0, &pts) else { continue };
        let (r0, amp, _) = long;
        if amp < MIN_PILE_ELONGATION * r0 {
            continue;
        }
        let ppm = px_per_mm(cal, at_mm);
        let offset = model.edge_offset_mm[super::colour_index(colour)];
        let radius = |z: WinkSize| ((if z == WinkSize::Large { nominal.large_mm } else { nominal.small_mm }) / 2.0 + offset) * ppm;
        // Winks of its colour found within its outline are the pile's own (found twice): the two
        // replace them all, within the set's limits (rule 2.1.1).
        let own: Vec<usize> = (0..found.len()).filter(|&k| k == i || (found[k].colour == colour && found[k].centre_mm.is_some() && found[k].centre_px.distance(c0) < PILE_MEMBER_SHARE * r0)).collect();
        let have = |z: WinkSize| (0..found.len()).filter(|k| !own.contains(k) && found[*k].colour == colour && found[*k].size == z).count();
        let room = |sizes: &[WinkSize; 2]| [WinkSize::Small, WinkSize::Large].iter().all(|&z| have(z) + sizes.iter().filter(|&&x| x == z).count() <= z.per_colour());
        let pairs: Vec<([WinkSize; 2], [f64; 2])> = PILE_SIZES.iter().filter(|z| room(z)).map(|z| (*z, [radius(z[0]), radius(z[1])])).collect();
        let Some((c, sizes, rms)) = two_disc_pile(&pts, c0, long, &pairs) else { continue };
        let Some(one) = crate::geometry::plane::fit_circle(&pts).map(|o| union_rms(&pts, &[o])) else { continue };
        let nearby: Vec<(PixelPoint, f64)> = found.iter().filter(|g| g.colour == colour && g.centre_mm.is_some() && g.centre_px.distance(c0) < 3.0 * r0).map(|g| (g.centre_px, g.radius_px)).collect();
        if rms > MAX_PILE_RMS_PX || rms > MAX_PILE_RMS_SHARE * one.min(union_rms(&pts, &nearby)) {
            continue;
        }
        let near: Vec<&Found> = found.iter().enumerate().filter(|&(k, g)| !own.contains(&k) && g.centre_mm.is_some() && g.centre_px.distance(c0) < 4.0 * r0).map(|(_, g)| g).collect();
        let mut measured = (0..2)
            .map(|k| {
                let other = (c[1 - k], radius(sizes[1 - k]));
                let (mut others, mut same_colour) = (outlines(&near, |_| true), outlines(&near, |g| g.colour == colour));
                others.push(other);
                same_colour.push(other);
                let hint = Hint { others, same_colour, size: Some(sizes[k]), ..Hint::default() };
                measure(view, cal, model, colour, c[k], radius(sizes[k]), nominal, &hint)
            });
        let (Some(a), Some(b)) = (measured.next().flatten(), measured.next().flatten()) else { continue };
        let (Some(am), Some(bm)) = (a.centre_mm, b.centre_mm) else { continue };
        if am.distance(bm) < NEAREST_SHARE * a.radius_mm.unwrap_or(0.0).min(b.radius_mm.unwrap_or(0.0)) || a.centre_px.distance(b.centre_px) < MIN_APART_PX {
            continue;
        }
        let bare = |g: &Found| {
            let (gi, gj) = labels.label_coords(g.centre_px);
            bare_share(masks, (gi, gj, labelled_radius(g.radius_px / s, s) - 1.0))
        };
        if bare(&a) > MAX_BARE_SHARE || bare(&b) > MAX_BARE_SHARE {
            continue;
        }
        found[i] = Found { level, ..a };
        found.push(b);
        replaced.extend(own.into_iter().filter(|&k| k != i));
    }
    let mut k = 0;
    found.retain(|_| {
        k += 1;
        !replaced.contains(&(k - 1))
    });
}

/// The sizes two winks of a pile may be, the first at the long axis's positive end.
const PILE_SIZES: [[WinkSize; 2]; 4] = [[WinkSize::Small, WinkSize::Small], [WinkSize::Large, WinkSize::Small], [WinkSize::Small, WinkSize::Large], [WinkSize::Large, WinkSize::Large]];

/// The two discs, of one of the `pairs` of sizes and radii (frame pixels), that best explain edge
/// points round one elongated outline whose rays were cast from `c0`: started at the ends of its
/// long axis (`(r0, amp, axis)`, its [`elongation`]), kept when they overlap and lie apart by more
/// than a misfit. Their centres, sizes and RMS.
fn two_disc_pile(pts: &[PixelPoint], c0: PixelPoint, (r0, amp, axis): (f64, f64, f64), pairs: &[([WinkSize; 2], [f64; 2])]) -> Option<([PixelPoint; 2], [WinkSize; 2], f64)> {
    let u = PixelPoint::new(axis.cos(), axis.sin());
    let half = r0 + amp;
    pairs
        .iter()
        .filter_map(|&(sizes, r)| {
            let start = [c0 + u * (half - r[0]).max(0.5), c0 - u * (half - r[1]).max(0.5)];
            let (c, rms) = fit_two_discs(pts, start, r)?;
            let apart = c[0].distance(c[1]);
            (apart >= MIN_APART_PX && apart <= r[0] + r[1] - 1.0).then_some((c, sizes, rms))
        })
        .min_by(|a, b| a.2.total_cmp(&b.2))
}

/// A wink's rim seen all round as one outline may be two winks of one colour in a pile, offset
/// along a line: their union is longer one way than across. The edge points' radii about the
/// rays' centre, as r(θ) = r₀ + a₁cos θ + b₁sin θ + a₂cos 2θ + b₂sin 2θ: the second harmonic's
/// amplitude and the direction of its longest axis.
fn elongation(centre: PixelPoint, pts: &[PixelPoint]) -> Option<(f64, f64, f64)> {
    if pts.len() < 12 {
        return None;
    }
    let mut ata = nalgebra::SMatrix::<f64, 5, 5>::zeros();
    let mut atb = nalgebra::SVector::<f64, 5>::zeros();
    for p in pts {
        let d = *p - centre;
        let t = d.y.atan2(d.x);
        let row = nalgebra::SVector::<f64, 5>::from([1.0, t.cos(), t.sin(), (2.0 * t).cos(), (2.0 * t).sin()]);
        ata += row * row.transpose();
        atb += row * d.norm();
    }
    let x = ata.try_inverse()? * atb;
    Some((x[0], x[3].hypot(x[4]), 0.5 * x[4].atan2(x[3])))
}

/// Two discs of radii `r` fitted to edge points of their union's outline (the distance to the
/// union is the lesser of the distances to each rim), from `start`: the centres and the RMS.
fn fit_two_discs(pts: &[PixelPoint], start: [PixelPoint; 2], r: [f64; 2]) -> Option<([PixelPoint; 2], f64)> {
    let mut c = start;
    let residual = |c: &[PixelPoint; 2], p: PixelPoint| -> (f64, usize) {
        let d = [p.distance(c[0]) - r[0], p.distance(c[1]) - r[1]];
        if d[0] <= d[1] { (d[0], 0) } else { (d[1], 1) }
    };
    for _ in 0..12 {
        let mut ata = nalgebra::SMatrix::<f64, 4, 4>::zeros();
        let mut atb = nalgebra::SVector::<f64, 4>::zeros();
        for &p in pts {
            let (e, k) = residual(&c, p);
            let u = p - c[k];
            let n = u.norm().max(1e-9);
            let mut j = nalgebra::SVector::<f64, 4>::zeros();
            j[2 * k] = -u.x / n;
            j[2 * k + 1] = -u.y / n;
            // Huber weights at 1 px: stray edge points (a neighbour's blur) count less.
            let w = if e.abs() <= 1.0 { 1.0 } else { 1.0 / e.abs() };
            ata += w * j * j.transpose();
            atb += w * j * e;
        }
        for k in 0..4 {
            ata[(k, k)] += 1e-6;
        }
        let step = ata.try_inverse()? * atb;
        c[0] = c[0] - PixelPoint::new(step[0], step[1]);
        c[1] = c[1] - PixelPoint::new(step[2], step[3]);
        if step.norm() < 1e-3 {
            break;
        }
    }
    Some((c, union_rms(pts, &[(c[0], r[0]), (c[1], r[1])])))
}

/// The RMS distance (frame pixels) of edge points from the outline of the union of `discs`
/// (centre, radius): for each point, the lesser of its signed distances to each rim.
fn union_rms(pts: &[PixelPoint], discs: &[(PixelPoint, f64)]) -> f64 {
    (pts.iter().map(|p| discs.iter().map(|(c, r)| p.distance(*c) - r).fold(f64::INFINITY, f64::min).powi(2)).sum::<f64>() / pts.len() as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::MatPoint;

    fn wink(at: (f64, f64), r: f64) -> Found {
        let mut f = crate::detect::tests::wink(Colour::Yellow, MatPoint::new(at.0, at.1));
        f.centre_px = PixelPoint::new(at.0, at.1);
        f.radius_px = r;
        f
    }

    /// A mask of discs (centre, radius) on a 60 × 40 label image.
    fn discs(d: &[((f64, f64), f64)]) -> Vec<u8> {
        let mut buf = vec![0u8; 60 * 40];
        for j in 0..40 {
            for i in 0..60 {
                if d.iter().any(|&((x, y), r)| (i as f64 - x).hypot(j as f64 - y) <= r) {
                    buf[j * 60 + i] = 255;
                }
            }
        }
        buf
    }

    #[test]
    fn a_second_wink_under_one_outline_leaves_a_crescent_and_a_lone_wink_none() -> opencv::Result<()> {
        let labels = Labels { x0: 0, y0: 0, scale: 1 };
        let small_area = std::f64::consts::PI * 5.0f64.powi(2);
        // Two winks of radius 6 px, 5 px apart: one outline fitted to the first.
        let buf = discs(&[((25.0, 20.0), 6.0), ((30.0, 20.0), 6.0)]);
        let mask = ColourMask { buf: &buf, width: 60, height: 40 };
        let found = vec![wink((25.0, 20.0), 6.0)];
        let list = crescents(&mask, &labels, &found, Colour::Yellow, small_area)?;
        assert_eq!(list.len(), 1, "one crescent");
        let n = list[0].pixels.len() as f64;
        let gx = list[0].pixels.iter().map(|p| p.0 as f64).sum::<f64>() / n;
        assert!(gx > 31.0 && n > 0.25 * small_area, "the crescent lies beyond the outline, away from it: {n} px about x = {gx:.1}");
        // Both outlines fitted, or one wink alone: nothing left over.
        let both = vec![wink((25.0, 20.0), 6.0), wink((30.0, 20.0), 6.0)];
        assert!(crescents(&mask, &labels, &both, Colour::Yellow, small_area)?.is_empty());
        let lone = discs(&[((25.0, 20.0), 6.5)]);
        let mask = ColourMask { buf: &lone, width: 60, height: 40 };
        assert!(crescents(&mask, &labels, &found, Colour::Yellow, small_area)?.is_empty(), "a blur half a pixel wide is the outline's own");
        Ok(())
    }

    #[test]
    fn felt_where_a_second_winks_face_would_be_is_counted() {
        let buf = discs(&[((25.0, 20.0), 6.0)]);
        let empty: Vec<u8> = Vec::new();
        let masks = [ColourMask { buf: &buf, width: 60, height: 40 }, ColourMask { buf: &empty, width: 60, height: 40 }, ColourMask { buf: &empty, width: 60, height: 40 }, ColourMask { buf: &empty, width: 60, height: 40 }];
        assert!(bare_share(&masks, (25.0, 20.0, 5.0)) < 0.01);
        let half = bare_share(&masks, (31.0, 20.0, 5.0));
        assert!(half > 0.3 && half < 0.7, "half of a disc beside the wink is felt: {half:.2}");
    }

    /// Points on the outline of the union of `discs` (centre, radius), every 5° round `from` (a
    /// point inside every disc), each moved along its ray by up to 0.15 px in a fixed pattern.
    fn union_outline(from: PixelPoint, discs: &[(PixelPoint, f64)]) -> Vec<PixelPoint> {
        (0..72)
            .map(|k| {
                let t = (k as f64 * 5.0).to_radians();
                let u = PixelPoint::new(t.cos(), t.sin());
                let exit = discs
                    .iter()
                    .map(|&(c, r)| {
                        let d = c - from;
                        let along = d.x * u.x + d.y * u.y;
                        along + (r * r - (d.norm().powi(2) - along * along)).max(0.0).sqrt()
                    })
                    .fold(0.0, f64::max);
                from + u * (exit + 0.15 * (k as f64 * 2.3).sin())
            })
            .collect()
    }

    #[test]
    fn two_winks_of_one_colour_offset_in_a_pile_are_told_from_one_round_wink() {
        let sizes = |rs: f64, rl: f64| vec![([WinkSize::Small, WinkSize::Small], [rs, rs]), ([WinkSize::Large, WinkSize::Small], [rl, rs]), ([WinkSize::Small, WinkSize::Large], [rs, rl]), ([WinkSize::Large, WinkSize::Large], [rl, rl])];
        let rms_of_one = |pts: &[PixelPoint]| union_rms(pts, &[crate::geometry::plane::fit_circle(pts).expect("a circle")]);
        // Small winks 6 px in radius (large 8.25 px): two 4–8 px apart in three directions, and a
        // large and a small 7 px apart (at 5 px their union's elongation, 0.11 of its radius, is
        // under the bar, and such a pile is left to the crescents).
        for (ra, rb, apart, deg) in [(6.0, 6.0, 4.0, 30.0), (6.0, 6.0, 6.0, 100.0), (6.0, 6.0, 8.0, 160.0), (8.25, 6.0, 7.0, 45.0)] {
            let u = PixelPoint::new(f64::cos(f64::to_radians(deg)), f64::sin(f64::to_radians(deg)));
            let (a, b) = (PixelPoint::new(40.0, 30.0), PixelPoint::new(40.0, 30.0) + u * apart);
            let from = a + u * (0.5 * apart);
            let pts = union_outline(from, &[(a, ra), (b, rb)]);
            let (r0, amp, axis) = elongation(from, &pts).expect("an elongation");
            assert!(amp >= MIN_PILE_ELONGATION * r0, "{apart} px apart: elongation {:.3}", amp / r0);
            let off = (axis.to_degrees() - deg).rem_euclid(180.0);
            assert!(off.min(180.0 - off) < 3.0, "long axis {:.1}° for {deg}°", axis.to_degrees());
            let (c, z, rms) = two_disc_pile(&pts, from, (r0, amp, axis), &sizes(6.0, 8.25)).expect("two discs");
            let err = (c[0].distance(a) + c[1].distance(b)).min(c[0].distance(b) + c[1].distance(a));
            assert!(err < 0.4 && rms < 0.15, "{ra}/{rb} {apart} px apart: centres off by {err:.2} px in all, RMS {rms:.3}, sizes {z:?}");
            let want = if ra > rb { [WinkSize::Large, WinkSize::Small] } else { [WinkSize::Small, WinkSize::Small] };
            assert!(z == want || z == [want[1], want[0]], "{z:?}");
            assert!(rms < MAX_PILE_RMS_SHARE * rms_of_one(&pts), "one circle {:.3} px, two discs {rms:.3}", rms_of_one(&pts));
        }
        // One round wink, its rays cast from up to a third of its radius off its centre: not
        // elongated enough to be looked at.
        for off in [0.0, 1.0, 2.0] {
            let c = PixelPoint::new(40.0, 30.0);
            let from = c + PixelPoint::new(off, 0.5 * off);
            let pts = union_outline(from, &[(c, 6.0)]);
            let (r0, amp, _) = elongation(from, &pts).expect("an elongation");
            assert!(amp < 0.5 * MIN_PILE_ELONGATION * r0, "{off} px off: elongation {:.3}", amp / r0);
        }
    }
}
