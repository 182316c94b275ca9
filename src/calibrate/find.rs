//! Finding the mat roughly: the felt-coloured region round the frame's centre, and four straight
//! lines fitted to its outline (robust to hands, winks and squidgers on the edge).

use super::CalibrateError;
use crate::geometry::PixelPoint;
use opencv::core::{Mat, Size, Vec3b};

use opencv::prelude::*;
use opencv::imgproc;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// Width the frame is shrunk to for the rough search, in pixels.
const WORK_WIDTH: i32 = 640;
/// Smallest share of the frame the mat may cover.
const MIN_AREA_FRACTION: f64 = 0.08;
/// A second felt region at least this share of the mat's area, wholly in view, is a second mat.
const SECOND_MAT_FRACTION: f64 = 0.3;
/// Lines considered for the mat's four sides.
const CANDIDATE_LINES: usize = 8;
/// How far outline points may lie from a candidate line, in pixels of the shrunk frame.
const LINE_TOLERANCE_PX: f64 = 5.0;
/// Least outline points on a candidate line.
const MIN_LINE_POINTS: usize = 15;
/// Rays cast from the centre to find the outline.
const RAYS: usize = 720;
/// A change from the felt (CIE Lab, 8-bit scale, lightness weighted) that may be the mat's edge.
const STEP_LAB: f64 = 10.0;
/// The felt's reference follows a ray's colour only where it differs by at most this much
/// (vignetting and soft shadows change by far less per pixel; an edge forming, by more).
const FOLLOW_LAB: f64 = 0.5 * STEP_LAB;
/// Pixels (in the shrunk frame) a change must last to be the mat's edge rather than a wink or a
/// baseline.
const PERSIST_PX: usize = 10;
/// Weight of lightness against colour when comparing with the felt: lighting varies across a mat
/// far more in lightness than in hue.
const LIGHTNESS_WEIGHT: f64 = 0.5;

/// The rough find: four corners (in the full frame's pixels, in order round the quadrilateral)
/// and the felt's colour.
#[derive(Debug, Clone, PartialEq)]
pub struct Rough {
    /// Corners, in order round the outline.
    pub corners: [PixelPoint; 4],
    /// The felt's colour, CIE Lab (OpenCV 8-bit scale).
    pub felt_lab: [f64; 3],
    /// Whether many of the rays cast from the centre ran off the frame without meeting an edge:
    /// the mat may run off the frame, or its edge be too faint against the table there.
    pub rays_off_frame: bool,
}

/// Finds the mat roughly in a BGR frame.
pub fn rough(bgr: &Mat) -> Result<Rough, CalibrateError> {
    let (w, h) = (bgr.cols(), bgr.rows());
    let scale = (WORK_WIDTH as f64 / w as f64).min(1.0);
    let (sw, sh) = (((w as f64) * scale).round() as i32, ((h as f64) * scale).round() as i32);
    let mut small = Mat::default();
    imgproc::resize(bgr, &mut small, Size::new(sw, sh), 0.0, 0.0, imgproc::INTER_AREA)?;
    let mut blurred = Mat::default();
    imgproc::gaussian_blur(&small, &mut blurred, Size::new(5, 5), 0.0, 0.0, opencv::core::BORDER_REFLECT_101)?;
    let lab = crate::detect::sample::Lab8::new().image(&blurred)?;

    // The felt's colour: of the commonest colours in the frame's central part (the felt, and the
    // table where the mat does not fill it), the one found nearest the centre on average.
    // Per colour bin: pixels, summed distance from the centre, summed Lab.
    type Bin = (usize, f64, [f64; 3]);
    let mut bins: std::collections::HashMap<(u8, u8, u8), Bin> = std::collections::HashMap::new();
    let (x0, x1, y0, y1) = (sw * 3 / 10, sw * 7 / 10, sh * 3 / 10, sh * 7 / 10);
    for y in y0..y1 {
        for x in x0..x1 {
            let p = lab.at_2d::<Vec3b>(y, x)?;
            let key = (p[0] / 12, p[1] / 6, p[2] / 6);
            let e = bins.entry(key).or_insert((0, 0.0, [0.0; 3]));
            e.0 += 1;
            e.1 += ((x - sw / 2) as f64).hypot((y - sh / 2) as f64);
            for c in 0..3 {
                e.2[c] += p[c] as f64;
            }
        }
    }
    let mut ranked: Vec<Bin> = bins.into_values().collect();
    ranked.sort_by_key(|b| std::cmp::Reverse(b.0));
    let top = ranked.first().map_or(0, |r| r.0);
    let felt = ranked
        .iter()
        .take(4)
        .filter(|r| r.0 * 4 >= top)
        .min_by(|a, b| (a.1 / a.0 as f64).total_cmp(&(b.1 / b.0 as f64)))
        .map(|r| r.2.map(|v| v / r.0 as f64))
        .ok_or_else(|| CalibrateError::NoMat { why: "the frame is empty".into() })?;

    // The mat's outline: rays cast from round the centre stop at the first lasting change from
    // felt. Comparing each step with the felt just behind it follows slow changes (vignetting, a
    // lamp's gradient, soft shadows); thin things on the felt (winks, baselines) are crossed
    // because the felt resumes behind them.
    let lab_px: Vec<Vec3b> = if lab.is_continuous() { lab.data_typed::<Vec3b>()?.to_vec() } else { lab.try_clone()?.data_typed::<Vec3b>()?.to_vec() };
    let at = |x: f64, y: f64| -> Option<[f64; 3]> {
        let (xi, yi) = (x.round() as i32, y.round() as i32);
        if xi < 0 || yi < 0 || xi >= sw || yi >= sh {
            return None;
        }
        let p = lab_px[(yi * sw + xi) as usize];
        Some([p[0] as f64, p[1] as f64, p[2] as f64])
    };
    let diff = |a: [f64; 3], b: [f64; 3]| ((LIGHTNESS_WEIGHT * (a[0] - b[0])).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
    // Rays from the frame's centre, or, when something lies on it (a hand, the pot), from
    // felt-coloured points round it: the origin whose rays enclose most felt wins (every origin is
    // tried: one beside the pot or a wink sees part of the mat's outline hidden). Every ray walks
    // from its origin: an origin may lie close to the mat's edge (the pot at the frame's centre
    // moves it off), and a ray that started beyond the edge would put an outline point out on the
    // table (a bulge that drags a side's line off the edge and outgrows the true outline's area).
    let cast = |cx: f64, cy: f64, rays: usize| -> (Vec<(f64, f64)>, usize) {
        let mut pts: Vec<(f64, f64)> = Vec::new();
        let mut escaped = 0;
        for k in 0..rays {
            let ang = k as f64 / rays as f64 * std::f64::consts::TAU;
            let (dx, dy) = (ang.cos(), ang.sin());
            let mut reference = felt;
            let mut r = 1.0;
            let mut hit = None;
            while let Some(c) = at(cx + dx * r, cy + dy * r) {
                if diff(c, reference) > STEP_LAB {
                    // Lasting: the next PERSIST pixels all stay unlike the felt behind.
                    let lasting = (1..=PERSIST_PX).all(|j| at(cx + dx * (r + j as f64), cy + dy * (r + j as f64)).is_none_or(|c2| diff(c2, reference) > STEP_LAB * 0.6));
                    if lasting {
                        hit = Some(r);
                        break;
                    }
                } else if diff(c, reference) <= FOLLOW_LAB {
                    // Follow the felt slowly, on small changes only: a soft, low-contrast edge
                    // (tan felt on a pale table, blurred over a few pixels) rises in steps under
                    // STEP_LAB, and following those walked the reference out onto the table.
                    for ch in 0..3 {
                        reference[ch] += 0.2 * (c[ch] - reference[ch]);
                    }
                }
                r += 1.0;
            }
            match hit {
                Some(r) => pts.push((cx + dx * (r - 0.5), cy + dy * (r - 0.5))),
                None => escaped += 1,
            }
        }
        (pts, escaped)
    };
    // (area enclosed, origin, rays that ran off the frame)
    type Cast = (f64, (f64, f64), usize);
    let mut best: Option<Cast> = None;
    for (ox, oy) in [(0.0, 0.0), (0.15, 0.0), (-0.15, 0.0), (0.0, 0.15), (0.0, -0.15), (0.12, 0.12), (-0.12, 0.12), (0.12, -0.12), (-0.12, -0.12)] {
        let (cx, cy) = (sw as f64 * (0.5 + ox), sh as f64 * (0.5 + oy));
        if at(cx, cy).is_none_or(|c| diff(c, felt) > STEP_LAB) {
            continue;
        }
        // The origins are compared on a quarter of the rays; the winner casts them all.
        let (pts, escaped) = cast(cx, cy, RAYS / 4);
        let area = if pts.len() >= 3 { polygon_area(&pts) } else { 0.0 };
        if best.as_ref().is_none_or(|b| area > b.0) {
            best = Some((area, (cx, cy), escaped));
        }
    }
    let Some((_, (cx, cy), _)) = best else {
        return Err(CalibrateError::NoMat { why: "nothing felt-coloured round the frame's centre".into() });
    };
    let (pts, escaped) = cast(cx, cy, RAYS);
    // Most rays running off the frame without meeting an edge: no mat round the centre; some:
    // the mat runs off the frame there.
    if escaped as f64 > 0.7 * RAYS as f64 {
        return Err(CalibrateError::NoMat { why: "nothing round the frame's centre has a mat's edge".into() });
    }
    // Some: the mat may run off the frame there, or its edge may be too faint against the table
    // for a ray to stop at (tan felt on a wood table of its own colour, another renderer's
    // r1080_s1_003: a quarter of the rays ran on to the frame's edge). The sides are fitted to
    // the rays that did stop; the mat is cut off if their corners lie outside the frame.
    let cut = escaped as f64 > 0.1 * RAYS as f64;
    let area = polygon_area(&pts);
    let frac = area / (sw as f64 * sh as f64);
    if frac < MIN_AREA_FRACTION {
        return Err(CalibrateError::NoMat { why: format!("the felt round the centre covers only {:.0}% of the frame", frac * 100.0) });
    }
    let lines = candidate_lines(&pts, CANDIDATE_LINES);
    let corners_small = best_quad(&lines, &pts).ok_or_else(|| if cut { CalibrateError::CutOff } else { CalibrateError::NoMat { why: "the felt's outline is not a quadrilateral".into() } })?;
    // Lens distortion bows the edges, so straight lines through them meet a little outside the
    // true corners; only corners well outside the frame mean the mat is cut off (the final fit
    // checks again, exactly).
    let margin = -0.04 * sw as f64;
    let outside = corners_small.iter().any(|&(x, y)| x < margin || y < margin || x > sw as f64 - 1.0 - margin || y > sh as f64 - 1.0 - margin);
    if outside {
        return Err(CalibrateError::CutOff);
    }
    second_mat(&lab_px, sw, sh, felt, &corners_small)?;
    let corners = corners_small.map(|(x, y)| PixelPoint::new((x + 0.5) / scale - 0.5, (y + 0.5) / scale - 0.5));
    Ok(Rough { corners, felt_lab: felt, rays_off_frame: cut })
}

/// A second felt region outside the mat found, wholly in view and nearly as big: another mat.
fn second_mat(lab: &[Vec3b], sw: i32, sh: i32, felt: [f64; 3], quad: &[(f64, f64); 4]) -> Result<(), CalibrateError> {
    let centre = (quad.iter().map(|p| p.0).sum::<f64>() / 4.0, quad.iter().map(|p| p.1).sum::<f64>() / 4.0);
    // The found mat, grown a little (its edges bow with lens distortion).
    let grown = quad.map(|p| (centre.0 + (p.0 - centre.0) * 1.08, centre.1 + (p.1 - centre.1) * 1.08));
    let mut mask = Mat::new_rows_cols_with_default(sh, sw, opencv::core::CV_8U, opencv::core::Scalar::all(0.0))?;
    for y in 0..sh {
        for x in 0..sw {
            let p = lab[(y * sw + x) as usize];
            let d = ((LIGHTNESS_WEIGHT * (p[0] as f64 - felt[0])).powi(2) + (p[1] as f64 - felt[1]).powi(2) + (p[2] as f64 - felt[2]).powi(2)).sqrt();
            if d < STEP_LAB && !inside(&grown, centre, (x as f64, y as f64)) {
                *mask.at_2d_mut::<u8>(y, x)? = 255;
            }
        }
    }
    let mut labels = Mat::default();
    let mut stats = Mat::default();
    let mut centroids = Mat::default();
    let n = imgproc::connected_components_with_stats(&mask, &mut labels, &mut stats, &mut centroids, 8, opencv::core::CV_32S)?;
    let quad_area = polygon_area(quad);
    for l in 1..n {
        let at = |k: i32| stats.at_2d::<i32>(l, k).copied();
        let (x, y, w, h, area) = (at(imgproc::CC_STAT_LEFT)?, at(imgproc::CC_STAT_TOP)?, at(imgproc::CC_STAT_WIDTH)?, at(imgproc::CC_STAT_HEIGHT)?, at(imgproc::CC_STAT_AREA)?);
        let in_view = x > 0 && y > 0 && x + w < sw && y + h < sh;
        if in_view && area as f64 > SECOND_MAT_FRACTION * quad_area {
            return Err(CalibrateError::TwoMats);
        }
    }
    Ok(())
}

fn polygon_area(p: &[(f64, f64)]) -> f64 {
    let n = p.len();
    (0..n).map(|i| p[i].0 * p[(i + 1) % n].1 - p[(i + 1) % n].0 * p[i].1).sum::<f64>().abs() / 2.0
}

/// A line a·x + b·y = c with (a, b) a unit normal.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Line {
    a: f64,
    b: f64,
    c: f64,
}

impl Line {
    fn through(p: (f64, f64), q: (f64, f64)) -> Option<Line> {
        let (dx, dy) = (q.0 - p.0, q.1 - p.1);
        let len = (dx * dx + dy * dy).sqrt();
        if len < 1e-9 {
            return None;
        }
        let (a, b) = (-dy / len, dx / len);
        Some(Line { a, b, c: a * p.0 + b * p.1 })
    }

    fn dist(&self, p: (f64, f64)) -> f64 {
        (self.a * p.0 + self.b * p.1 - self.c).abs()
    }

    /// Least-squares line through points (total least squares).
    fn fit(pts: &[(f64, f64)]) -> Option<Line> {
        let n = pts.len() as f64;
        if n < 2.0 {
            return None;
        }
        let (mx, my) = (pts.iter().map(|p| p.0).sum::<f64>() / n, pts.iter().map(|p| p.1).sum::<f64>() / n);
        let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
        for p in pts {
            let (dx, dy) = (p.0 - mx, p.1 - my);
            sxx += dx * dx;
            sxy += dx * dy;
            syy += dy * dy;
        }
        // The normal is the eigenvector of the smaller eigenvalue of the scatter matrix.
        let theta = 0.5 * (2.0 * sxy).atan2(sxx - syy);
        let (a, b) = (-theta.sin(), theta.cos());
        Some(Line { a, b, c: a * mx + b * my })
    }

    fn meet(&self, o: &Line) -> Option<(f64, f64)> {
        let det = self.a * o.b - self.b * o.a;
        if det.abs() < 1e-9 {
            return None;
        }
        Some(((self.c * o.b - self.b * o.c) / det, (self.a * o.c - self.c * o.a) / det))
    }
}

/// Up to `max` lines carrying the outline's points, found one after another by RANSAC, with their
/// inliers.
fn candidate_lines(pts: &[(f64, f64)], max: usize) -> Vec<(Line, Vec<(f64, f64)>)> {
    let mut rng = Pcg64::seed_from_u64(0x4D41_5431);
    let mut left: Vec<(f64, f64)> = pts.to_vec();
    let mut out = Vec::new();
    // Wide enough to take in an edge bowed by strong lens distortion.
    let tol = LINE_TOLERANCE_PX;
    while out.len() < max && left.len() >= MIN_LINE_POINTS {
        let mut best: Option<(Line, usize)> = None;
        for _ in 0..300 {
            let p = left[rng.random_range(0..left.len())];
            let q = left[rng.random_range(0..left.len())];
            let Some(l) = Line::through(p, q) else { continue };
            let count = left.iter().filter(|&&r| l.dist(r) < tol).count();
            if best.as_ref().is_none_or(|(_, c)| count > *c) {
                best = Some((l, count));
            }
        }
        let Some((l, count)) = best else { break };
        if count < MIN_LINE_POINTS {
            break;
        }
        let inliers: Vec<(f64, f64)> = left.iter().copied().filter(|&r| l.dist(r) < tol).collect();
        let Some(refined) = Line::fit(&inliers) else { break };
        let inliers: Vec<(f64, f64)> = left.iter().copied().filter(|&r| refined.dist(r) < tol).collect();
        left.retain(|&r| refined.dist(r) >= tol * 2.0);
        if let Some(l) = Line::fit(&inliers) {
            out.push((l, inliers));
        }
    }
    out
}

/// Of all quadrilaterals four candidate lines make, the one the outline's points fit best: most
/// points on its sides, fewest outside it (a hand's straight edges make quadrilaterals that cut
/// through the felt).
fn best_quad(lines: &[(Line, Vec<(f64, f64)>)], pts: &[(f64, f64)]) -> Option<[(f64, f64); 4]> {
    let n = lines.len();
    let mut best: Option<(f64, [(f64, f64); 4])> = None;
    for a in 0..n {
        for b in (a + 1)..n {
            for c in (b + 1)..n {
                for d in (c + 1)..n {
                    let four = [lines[a].clone(), lines[b].clone(), lines[c].clone(), lines[d].clone()];
                    let Some(q) = quad(&four, pts) else { continue };
                    let edges: Vec<Line> = (0..4).filter_map(|k| Line::through(q[k], q[(k + 1) % 4])).collect();
                    if edges.len() != 4 {
                        continue;
                    }
                    let centre = (q.iter().map(|p| p.0).sum::<f64>() / 4.0, q.iter().map(|p| p.1).sum::<f64>() / 4.0);
                    let mut on = 0.0;
                    let mut out = 0.0;
                    for &p in pts {
                        let dmin = edges.iter().map(|e| e.dist(p)).fold(f64::INFINITY, f64::min);
                        if dmin < LINE_TOLERANCE_PX + 1.0 {
                            on += 1.0;
                        } else if !inside(&q, centre, p) {
                            out += 1.0;
                        }
                    }
                    let score = on - 3.0 * out;
                    if best.as_ref().is_none_or(|(s, _)| score > *s) {
                        best = Some((score, q));
                    }
                }
            }
        }
    }
    best.map(|(_, q)| q)
}

/// Whether `p` lies inside convex quadrilateral `q` (on the same side of every edge as `centre`).
fn inside(q: &[(f64, f64); 4], centre: (f64, f64), p: (f64, f64)) -> bool {
    (0..4).all(|k| {
        let (a, b) = (q[k], q[(k + 1) % 4]);
        let side = |r: (f64, f64)| (b.0 - a.0) * (r.1 - a.1) - (b.1 - a.1) * (r.0 - a.0);
        side(p) * side(centre) >= 0.0
    })
}

/// The quadrilateral of four lines: ordered round the outline's centre, neighbours intersected.
fn quad(lines: &[(Line, Vec<(f64, f64)>)], pts: &[(f64, f64)]) -> Option<[(f64, f64); 4]> {
    let n = pts.len() as f64;
    let centre = (pts.iter().map(|p| p.0).sum::<f64>() / n, pts.iter().map(|p| p.1).sum::<f64>() / n);
    let mut ordered: Vec<(f64, Line)> = lines
        .iter()
        .map(|(l, inl)| {
            let m = inl.len() as f64;
            let mid = (inl.iter().map(|p| p.0).sum::<f64>() / m, inl.iter().map(|p| p.1).sum::<f64>() / m);
            ((mid.1 - centre.1).atan2(mid.0 - centre.0), *l)
        })
        .collect();
    ordered.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut corners = [(0.0, 0.0); 4];
    for k in 0..4 {
        corners[k] = ordered[k].1.meet(&ordered[(k + 1) % 4].1)?;
    }
    // A sane quadrilateral: convex, corners near the outline's extent.
    let cross = |o: (f64, f64), a: (f64, f64), b: (f64, f64)| (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0);
    let signs: Vec<bool> = (0..4).map(|k| cross(corners[k], corners[(k + 1) % 4], corners[(k + 2) % 4]) > 0.0).collect();
    if signs.iter().any(|&s| s != signs[0]) {
        return None;
    }
    Some(corners)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Point, Scalar, Vector, CV_8UC3};

    /// A 640×360 frame of `table` colour with a `felt` rectangle (x0, y0, x1, y1), both BGR.
    fn mat_on_table(table: [f64; 3], felt: [f64; 3], (x0, y0, x1, y1): (i32, i32, i32, i32)) -> Mat {
        let bgr = |c: [f64; 3]| Scalar::new(c[0], c[1], c[2], 0.0);
        let mut img = Mat::new_rows_cols_with_default(360, 640, CV_8UC3, bgr(table)).expect("image");
        let quad: Vector<Point> = Vector::from_iter([Point::new(x0, y0), Point::new(x1, y0), Point::new(x1, y1), Point::new(x0, y1)]);
        let polys: Vector<Vector<Point>> = Vector::from_iter([quad]);
        imgproc::fill_poly(&mut img, &polys, bgr(felt), imgproc::LINE_8, 0, Point::new(0, 0)).expect("mat");
        img
    }

    /// Every corner of the rectangle (x0, y0, x1, y1) has a rough corner within `tol` px.
    fn assert_corners(r: &Rough, (x0, y0, x1, y1): (i32, i32, i32, i32), tol: f64) {
        let truth = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)].map(|(x, y)| PixelPoint::new(x as f64, y as f64));
        for c in truth {
            let d = r.corners.iter().map(|p| p.distance(c)).fold(f64::INFINITY, f64::min);
            assert!(d < tol, "corner {c:?} missed by {d:.1} px: {:?}", r.corners);
        }
    }

    /// A felt rectangle on a dark table with something dark (the pot, a hand) just beside the
    /// frame's centre: the rays from the centre see little of the mat's right side, and the outline
    /// must still be the rectangle's (another origin sees the whole mat).
    #[test]
    fn something_beside_the_centre_does_not_hide_a_side() {
        let rect = (40, 30, 600, 330);
        let mut img = mat_on_table([50.0; 3], [150.0, 130.0, 110.0], rect);
        imgproc::circle(&mut img, Point::new(352, 180), 26, Scalar::new(40.0, 40.0, 160.0, 0.0), -1, imgproc::LINE_8, 0).expect("pot");
        assert_corners(&rough(&img).expect("found"), rect, 3.0);
    }

    /// Tan felt on a pale table, the edge blurred over a few pixels (clip-00213's mat): the
    /// colour rises across the edge in steps each under the edge threshold, and the felt's
    /// reference must not follow them out onto the table.
    #[test]
    fn a_soft_low_contrast_edge_is_found() {
        // BGR of Lab ≈ (82, 5, 7) table and (74, 5, 19) felt.
        let rect = (240, 20, 400, 340);
        let img = mat_on_table([196.0, 202.0, 214.0], [152.0, 181.0, 203.0], rect);
        let mut soft = Mat::default();
        imgproc::gaussian_blur(&img, &mut soft, opencv::core::Size::new(0, 0), 2.5, 0.0, opencv::core::BORDER_REPLICATE).expect("blur");
        assert_corners(&rough(&soft).expect("found"), rect, 4.0);
    }
}
