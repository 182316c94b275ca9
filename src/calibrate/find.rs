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
/// Lines considered for the mat's four sides.
const CANDIDATE_LINES: usize = 7;
/// Least outline points on a candidate line.
const MIN_LINE_POINTS: usize = 15;
/// Rays cast from the centre to find the outline.
const RAYS: usize = 720;
/// A change from the felt (CIE Lab, 8-bit scale, lightness weighted) that may be the mat's edge.
const STEP_LAB: f64 = 10.0;
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
}

fn median(v: &mut [u8]) -> f64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0) as f64
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
    let mut lab = Mat::default();
    imgproc::cvt_color(&blurred, &mut lab, imgproc::COLOR_BGR2Lab, 0)?;

    // The felt's colour: the median over the frame's central part, which the mat covers.
    let (mut ls, mut as_, mut bs) = (Vec::new(), Vec::new(), Vec::new());
    for y in (sh * 3 / 10)..(sh * 7 / 10) {
        for x in (sw * 3 / 10)..(sw * 7 / 10) {
            let p = lab.at_2d::<Vec3b>(y, x)?;
            ls.push(p[0]);
            as_.push(p[1]);
            bs.push(p[2]);
        }
    }
    let felt = [median(&mut ls), median(&mut as_), median(&mut bs)];

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
    let (cx, cy) = (sw as f64 / 2.0, sh as f64 / 2.0);
    let r_start = 0.06 * sw as f64;
    let mut pts: Vec<(f64, f64)> = Vec::new();
    let mut escaped = 0;
    for k in 0..RAYS {
        let ang = k as f64 / RAYS as f64 * std::f64::consts::TAU;
        let (dx, dy) = (ang.cos(), ang.sin());
        let mut reference = felt;
        let mut r = r_start;
        let mut hit = None;
        loop {
            let Some(c) = at(cx + dx * r, cy + dy * r) else { break };
            if diff(c, reference) > STEP_LAB {
                // Lasting: the next PERSIST pixels all stay unlike the felt behind.
                let lasting = (1..=PERSIST_PX).all(|j| at(cx + dx * (r + j as f64), cy + dy * (r + j as f64)).is_none_or(|c2| diff(c2, reference) > STEP_LAB * 0.6));
                if lasting {
                    hit = Some(r);
                    break;
                }
            } else {
                // Follow the felt slowly.
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
    if std::env::var("WINKEYE_DEBUG_DIR").is_ok() {
        eprintln!("rays: {} hits, {escaped} escaped", pts.len());
    }
    if escaped as f64 > 0.1 * RAYS as f64 {
        return Err(CalibrateError::CutOff);
    }
    let area = polygon_area(&pts);
    let frac = area / (sw as f64 * sh as f64);
    if frac < MIN_AREA_FRACTION {
        return Err(CalibrateError::NoMat { why: format!("the felt round the centre covers only {:.0}% of the frame", frac * 100.0) });
    }
    let lines = candidate_lines(&pts, CANDIDATE_LINES);
    let corners_small = best_quad(&lines, &pts).ok_or_else(|| CalibrateError::NoMat { why: "the felt's outline is not a quadrilateral".into() })?;
    if std::env::var("WINKEYE_DEBUG_DIR").is_ok() {
        eprintln!("rough corners (shrunk): {corners_small:?} in {sw}x{sh}");
    }
    // Lens distortion bows the edges, so straight lines through them meet a little outside the
    // true corners; only corners well outside the frame mean the mat is cut off (the final fit
    // checks again, exactly).
    let margin = -0.04 * sw as f64;
    let outside = corners_small.iter().any(|&(x, y)| x < margin || y < margin || x > sw as f64 - 1.0 - margin || y > sh as f64 - 1.0 - margin);
    if outside {
        return Err(CalibrateError::CutOff);
    }
    let corners = corners_small.map(|(x, y)| PixelPoint::new((x + 0.5) / scale - 0.5, (y + 0.5) / scale - 0.5));
    Ok(Rough { corners, felt_lab: felt })
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
    let tol = 3.0;
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
                        if dmin < 4.0 {
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
