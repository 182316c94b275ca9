//! The pot: winks under its base (etwa-2012 25.3) and desquopping after a pot-out (20.1), both
//! of which move winks by rule.

use crate::geometry::{ConvexPolygon, MatPoint};
use std::f64::consts::PI;

/// Slack added to every required distance so that spots found on a constraint's boundary satisfy
/// it after rounding, in mm.
const SLACK_MM: f64 = 1e-6;

/// Rule 25.3: a wink wholly or partly under the pot's base is moved the minimum distance to touch
/// the base: straight away from the pot's centre. Returns the new centre, or `None` when the wink
/// is clear of the base.
pub fn out_from_under_pot(centre: MatPoint, radius_mm: f64, base_radius_mm: f64) -> Option<MatPoint> {
    let touching = base_radius_mm + radius_mm;
    let d = centre.norm();
    if d >= touching - SLACK_MM {
        return None;
    }
    let dir = if d < 1e-9 { MatPoint::new(1.0, 0.0) } else { centre * (1.0 / d) };
    Some(dir * touching)
}

/// A wink for desquopping: where it is and how big.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Disc {
    /// Footprint centre, in mm.
    pub centre: MatPoint,
    /// Footprint radius, in mm.
    pub radius_mm: f64,
}

/// The outcome of [`desquop`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Desquop {
    /// Winks moved, as (index, new centre), in the order they were moved.
    pub moves: Vec<(usize, MatPoint)>,
    /// Winks that needed moving but for which no spot at their distance from the pot keeps
    /// the gap (they were moved with less, or not at all; see `crowded`).
    pub crowded: Vec<usize>,
}

/// Rule 20.1: after a pot-out, undo every squop by moving the squopping winks, keeping each one's
/// distance from the pot, and leave at least `gap_mm` between all unpotted winks where possible,
/// each wink moved as little as possible.
///
/// `discs` are the unpotted winks on the mat (`None` where the position is unknown); `squops` are
/// (upper, lower) indices; `order` lists indices to move first (uppers from the top of each pile
/// down). Winks are moved one at a time along their circle round the pot to the nearest angle at
/// which they keep `gap_mm` from every other wink (as they stand at that moment) and stay on the
/// field of play. A wink placed that way is never crowded by a later one, so the result keeps the
/// gap everywhere unless a wink is listed in `crowded`.
pub fn desquop(
    discs: &[Option<Disc>],
    squops: &[(usize, usize)],
    order: &[usize],
    field: &ConvexPolygon,
    gap_mm: f64,
) -> Desquop {
    let mut at: Vec<Option<Disc>> = discs.to_vec();
    let mut movers: Vec<usize> = Vec::new();
    let uppers = order.iter().copied().chain(squops.iter().map(|&(u, _)| u));
    for i in uppers {
        if squops.iter().any(|&(u, _)| u == i) && !movers.contains(&i) {
            movers.push(i);
        }
    }
    let mut out = Desquop::default();
    // Winks not moved for a squop but closer than the gap to another: move the one that needs the
    // smaller move.
    for i in 0..at.len() {
        for j in (i + 1)..at.len() {
            if movers.contains(&i) || movers.contains(&j) {
                continue;
            }
            let (Some(a), Some(b)) = (at[i], at[j]) else { continue };
            if a.centre.distance(b.centre) >= a.radius_mm + b.radius_mm + gap_mm - SLACK_MM {
                continue;
            }
            let cost = |k: usize| {
                nearest_clear_spot(&at, k, field, gap_mm).map_or(f64::INFINITY, |p| p.distance(at[k].map_or(p, |d| d.centre)))
            };
            movers.push(if cost(i) <= cost(j) { i } else { j });
        }
    }
    for k in movers {
        let Some(disc) = at[k] else {
            out.crowded.push(k);
            continue;
        };
        let spot = match nearest_clear_spot(&at, k, field, gap_mm) {
            Some(p) => Some(p),
            None => {
                out.crowded.push(k);
                // "If this is possible": at least undo the squop.
                nearest_clear_spot(&at, k, field, 0.0)
            }
        };
        if let Some(p) = spot {
            if p.distance(disc.centre) > 0.0 {
                out.moves.push((k, p));
            }
            at[k] = Some(Disc { centre: p, ..disc });
        }
    }
    out
}

/// An arc of the circle round the pot, as a centre angle and a half-width, in radians.
#[derive(Debug, Clone, Copy)]
struct Arc {
    centre: f64,
    half: f64,
}

/// The nearest point to disc `k`'s centre on its circle round the pot at which it keeps `gap_mm`
/// from every other disc and lies wholly on the field.
fn nearest_clear_spot(at: &[Option<Disc>], k: usize, field: &ConvexPolygon, gap_mm: f64) -> Option<MatPoint> {
    let me = at[k]?;
    let rho = me.centre.norm();
    if rho < 1e-9 {
        return None;
    }
    let theta0 = me.centre.y.atan2(me.centre.x);
    let arcs = |slack: f64| -> Option<Vec<Arc>> {
        let mut arcs = Vec::new();
        for (j, other) in at.iter().enumerate() {
            let Some(o) = other else { continue };
            if j == k {
                continue;
            }
            let need = me.radius_mm + o.radius_mm + gap_mm + slack;
            let rho_j = o.centre.norm();
            if rho_j < 1e-9 {
                if rho < need {
                    return None;
                }
                continue;
            }
            // |p(θ) − c_j| < need  ⇔  cos(θ − φ_j) > κ.
            let kappa = (rho * rho + rho_j * rho_j - need * need) / (2.0 * rho * rho_j);
            if kappa >= 1.0 {
                continue;
            }
            let half = if kappa <= -1.0 { PI } else { kappa.acos() };
            arcs.push(Arc { centre: o.centre.y.atan2(o.centre.x), half });
        }
        // Staying on the field: for each edge with inward normal n at angle ψ and offset c
        // (the disc is inside when p·n ≥ c + r), the circle leaves where ρ cos(θ − ψ) < c + r.
        for e in field.edges() {
            let d = e.b - e.a;
            let len = d.norm();
            let n = MatPoint::new(-d.y / len, d.x / len);
            let c = e.a.dot(n) + me.radius_mm + slack;
            let ratio = c / rho;
            if ratio <= -1.0 {
                continue;
            }
            let psi = n.y.atan2(n.x);
            let half = if ratio >= 1.0 { PI } else { PI - ratio.acos() };
            arcs.push(Arc { centre: psi + PI, half });
        }
        Some(arcs)
    };
    let strict = arcs(0.0)?;
    let padded = arcs(SLACK_MM)?;
    let clear = |delta: f64| strict.iter().all(|a| wrap(theta0 + delta - a.centre).abs() >= a.half);
    let mut candidates = vec![0.0];
    for a in &padded {
        if a.half < PI {
            candidates.push(wrap(a.centre - a.half - theta0));
            candidates.push(wrap(a.centre + a.half - theta0));
        }
    }
    candidates
        .into_iter()
        .filter(|&d| clear(d))
        .min_by(|a, b| a.abs().total_cmp(&b.abs()))
        .map(|d| MatPoint::new(rho * (theta0 + d).cos(), rho * (theta0 + d).sin()))
}

/// An angle wrapped into (−π, π].
fn wrap(a: f64) -> f64 {
    let mut a = a % (2.0 * PI);
    if a <= -PI {
        a += 2.0 * PI;
    } else if a > PI {
        a -= 2.0 * PI;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::MatSpec;
    use proptest::prelude::*;

    #[test]
    fn wink_under_the_base_is_pushed_out_radially() {
        let to = out_from_under_pot(MatPoint::new(20.0, 0.0), 8.0, 19.0).expect("moved");
        assert!((to.x - 27.0).abs() < 1e-9 && to.y.abs() < 1e-9);
        assert!(out_from_under_pot(MatPoint::new(0.0, 30.0), 8.0, 19.0).is_none());
    }

    #[test]
    fn upper_wink_slides_round_the_pot() {
        let field = MatSpec::STANDARD.field_of_play();
        let discs = [
            Some(Disc { centre: MatPoint::new(100.0, 0.0), radius_mm: 11.0 }),
            Some(Disc { centre: MatPoint::new(115.0, 0.0), radius_mm: 8.0 }),
        ];
        let out = desquop(&discs, &[(1, 0)], &[1], &field, 2.0);
        assert_eq!(out.moves.len(), 1);
        let (k, p) = out.moves[0];
        assert_eq!(k, 1);
        assert!((p.norm() - 115.0).abs() < 1e-9);
        let gap = p.distance(discs[0].unwrap().centre) - 19.0;
        assert!((gap - 2.0).abs() < 1e-4, "moved just far enough: {gap}");
        assert!(out.crowded.is_empty());
    }

    proptest! {
        #[test]
        fn desquop_keeps_distances_and_gaps(
            seeds in prop::collection::vec((60.0f64..400.0, -3.2f64..3.2, prop::bool::ANY), 2..10),
            pairs in prop::collection::vec((0usize..10, 0.3f64..0.9), 1..4),
        ) {
            let field = MatSpec::STANDARD.field_of_play();
            let mut discs: Vec<Option<Disc>> = seeds.iter()
                .map(|&(r, a, l)| Some(Disc { centre: MatPoint::new(r * a.cos(), r * a.sin()), radius_mm: if l { 11.0 } else { 8.0 } }))
                .collect();
            // Put some winks on top of others.
            let mut squops = Vec::new();
            for (n, &(i, f)) in pairs.iter().enumerate() {
                let lower = i % discs.len();
                let upper_idx = discs.len();
                let l = discs[lower].unwrap();
                let dir = MatPoint::new(1.0, 0.3 * n as f64);
                let dir = dir * (1.0 / dir.norm());
                discs.push(Some(Disc { centre: l.centre + dir * ((l.radius_mm + 8.0) * f), radius_mm: 8.0 }));
                squops.push((upper_idx, lower));
            }
            let order: Vec<usize> = squops.iter().map(|&(u, _)| u).rev().collect();
            let out = desquop(&discs, &squops, &order, &field, 2.0);
            let mut now: Vec<Disc> = discs.iter().map(|d| d.unwrap()).collect();
            for &(k, p) in &out.moves {
                prop_assert!((p.norm() - now[k].centre.norm()).abs() < 0.01, "distance from the pot kept");
                now[k].centre = p;
            }
            if out.crowded.is_empty() {
                for i in 0..now.len() {
                    for j in (i + 1)..now.len() {
                        let gap = now[i].centre.distance(now[j].centre) - now[i].radius_mm - now[j].radius_mm;
                        prop_assert!(gap >= 2.0 - 1e-6, "winks {i} and {j} only {gap} mm apart");
                    }
                    prop_assert!(field.contains_disc(now[i].centre, now[i].radius_mm - 1e-6));
                }
            }
        }
    }
}
