//! Winks off the field of play and where they go back (etwa-2012 13.1; natwa-1990 7(a);
//! etwa-original 8 and fr-1960 7 put them back at the edge).

use crate::geometry::{ConvexPolygon, MatPoint, Segment};

/// Slack added to every clearance so that spots found on a constraint's boundary satisfy it
/// after rounding, in mm.
const CLEARANCE_SLACK_MM: f64 = 1e-6;

/// Iterations of the golden-section and bisection searches along one edge; 100 halvings of a
/// 2 m edge reach far below a micrometre.
const SEARCH_ITERATIONS: usize = 100;

/// Another wink's footprint, to keep clear of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Footprint {
    /// Centre, in mm.
    pub centre: MatPoint,
    /// Radius, in mm.
    pub radius_mm: f64,
}

/// What a replacement spot must satisfy.
#[derive(Debug, Clone, Copy)]
pub struct ReplacementRule<'a> {
    /// The field of play's boundary.
    pub field: &'a ConvexPolygon,
    /// How far in from the boundary the wink's nearest edge goes, in mm (13.1 (i): 22 mm).
    pub inset_mm: f64,
    /// Least distance between the wink's edge and other winks' edges or active baselines, in mm
    /// (13.1 (ii), (iii): 10 cm).
    pub clearance_mm: f64,
    /// Other winks on the mat.
    pub others: &'a [Footprint],
    /// Baselines with unplayed winks behind them.
    pub active_baselines: &'a [Segment],
}

/// The point of the field's boundary where a wink at `centre` most likely left: the nearest one.
pub fn exit_point(field: &ConvexPolygon, centre: MatPoint) -> MatPoint {
    field.nearest_boundary_point(centre)
}

/// Rule 13.1: the replacement spot nearest to `exit` for a wink of `radius_mm`, with its nearest
/// edge exactly `inset_mm` in from the boundary and at least `clearance_mm` from every other
/// wink's edge and every active baseline. `None` when no spot satisfies all of it.
///
/// The spots `inset_mm + radius_mm` in from a convex boundary form the boundary of an inset
/// polygon; on each of its edges every constraint forbids one open interval (the set of points
/// within a distance of a convex set is convex), so the allowed spots are what is left of the
/// edge, and the nearest one to `exit` is either `exit`'s projection or an interval's end.
pub fn replacement_spot(rule: &ReplacementRule<'_>, radius_mm: f64, exit: MatPoint) -> Option<MatPoint> {
    let locus = rule.field.inset(rule.inset_mm + radius_mm)?;
    let mut best: Option<(f64, MatPoint)> = None;
    for edge in locus.edges() {
        let mut forbidden: Vec<(f64, f64)> = Vec::new();
        for o in rule.others {
            let reach = rule.clearance_mm + radius_mm + o.radius_mm + CLEARANCE_SLACK_MM;
            forbidden.extend(sublevel_interval(&edge, |p| p.distance(o.centre), reach));
        }
        for b in rule.active_baselines {
            let reach = rule.clearance_mm + radius_mm + CLEARANCE_SLACK_MM;
            forbidden.extend(sublevel_interval(&edge, |p| b.distance(p), reach));
        }
        let t_exit = project(&edge, exit);
        for (lo, hi) in complement(forbidden) {
            let t = t_exit.clamp(lo, hi);
            let p = at(&edge, t);
            let d = p.distance(exit);
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, p));
            }
        }
    }
    best.map(|(_, p)| p)
}

fn at(edge: &Segment, t: f64) -> MatPoint {
    edge.a + (edge.b - edge.a) * t
}

fn project(edge: &Segment, p: MatPoint) -> f64 {
    let d = edge.b - edge.a;
    let len2 = d.dot(d);
    if len2 == 0.0 {
        0.0
    } else {
        ((p - edge.a).dot(d) / len2).clamp(0.0, 1.0)
    }
}

/// The open interval of t in [0, 1] where `dist(at(edge, t)) < reach`, for a `dist` that is convex
/// along the edge (distance to a point or a segment).
fn sublevel_interval(edge: &Segment, dist: impl Fn(MatPoint) -> f64, reach: f64) -> Option<(f64, f64)> {
    let f = |t: f64| dist(at(edge, t));
    // Golden-section search for the minimum of a convex function on [0, 1].
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (0.0f64, 1.0f64);
    for _ in 0..SEARCH_ITERATIONS {
        let c = b - g * (b - a);
        let d = a + g * (b - a);
        if f(c) < f(d) {
            b = d;
        } else {
            a = c;
        }
    }
    let t_min = (a + b) / 2.0;
    if f(t_min) >= reach {
        return None;
    }
    let crossing = |mut inside: f64, mut outside: f64| {
        for _ in 0..SEARCH_ITERATIONS {
            let mid = (inside + outside) / 2.0;
            if f(mid) < reach {
                inside = mid;
            } else {
                outside = mid;
            }
        }
        outside
    };
    let lo = if f(0.0) < reach { 0.0 } else { crossing(t_min, 0.0) };
    let hi = if f(1.0) < reach { 1.0 } else { crossing(t_min, 1.0) };
    Some((lo, hi))
}

/// [0, 1] less the union of the given open intervals, as closed intervals.
fn complement(mut forbidden: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    forbidden.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut free = Vec::new();
    let mut start = 0.0;
    let mut covered_to_end = false;
    for (lo, hi) in forbidden {
        if lo > start {
            free.push((start, lo));
        }
        if hi >= 1.0 {
            covered_to_end = true;
        }
        start = f64::max(start, hi);
    }
    if !covered_to_end && start <= 1.0 {
        free.push((start, 1.0));
    }
    // A forbidden interval touching 0 leaves [0, 0] only if it starts after 0.
    free.retain(|(a, b)| a <= b);
    free
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::MatSpec;
    use proptest::prelude::*;

    fn rule<'a>(field: &'a ConvexPolygon, others: &'a [Footprint], baselines: &'a [Segment]) -> ReplacementRule<'a> {
        ReplacementRule { field, inset_mm: 22.0, clearance_mm: 100.0, others, active_baselines: baselines }
    }

    #[test]
    fn goes_straight_in_when_nothing_is_near() {
        let field = MatSpec::STANDARD.field_of_play();
        let exit = MatPoint::new(200.0, 457.2);
        let spot = replacement_spot(&rule(&field, &[], &[]), 8.0, exit).expect("a spot");
        assert!((spot.x - 200.0).abs() < 1e-6 && (spot.y - (457.2 - 30.0)).abs() < 1e-6, "{spot:?}");
    }

    #[test]
    fn slides_along_the_edge_past_a_nearby_wink() {
        let field = MatSpec::STANDARD.field_of_play();
        let exit = MatPoint::new(200.0, 457.2);
        let others = [Footprint { centre: MatPoint::new(210.0, 400.0), radius_mm: 11.0 }];
        let spot = replacement_spot(&rule(&field, &others, &[]), 8.0, exit).expect("a spot");
        assert!((spot.y - 427.2).abs() < 1e-6);
        let edge_gap = spot.distance(others[0].centre) - 8.0 - 11.0;
        assert!((edge_gap - 100.0).abs() < 1e-3, "just 10 cm clear: {edge_gap}");
        assert!(spot.x < 200.0, "moves the shorter way round: {spot:?}");
    }

    #[test]
    fn keeps_away_from_an_active_baseline() {
        let mat = MatSpec::STANDARD;
        let field = mat.field_of_play();
        let base = mat.baseline(crate::geometry::Corner::PosXPosY);
        let exit = base.segment.a; // where the baseline meets the long edge
        let spot = replacement_spot(&rule(&field, &[], &[base.segment]), 8.0, exit).expect("a spot");
        assert!(base.segment.distance(spot) - 8.0 >= 100.0 - 1e-6);
        let free = replacement_spot(&rule(&field, &[], &[]), 8.0, exit).expect("a spot");
        assert!(base.segment.distance(free) < 50.0, "without unplayed winks it may sit near the baseline");
    }

    #[test]
    fn none_when_the_mat_is_full() {
        let field = MatSpec::STANDARD.field_of_play();
        let others: Vec<Footprint> = (-10..=10)
            .flat_map(|i| [-1.0, 1.0].map(|s| Footprint { centre: MatPoint::new(i as f64 * 90.0, s * 400.0), radius_mm: 8.0 }))
            .chain((-3..=3).flat_map(|j| [-1.0, 1.0].map(move |s| Footprint { centre: MatPoint::new(s * 850.0, j as f64 * 90.0), radius_mm: 8.0 })))
            .collect();
        assert!(replacement_spot(&rule(&field, &others, &[]), 8.0, MatPoint::new(0.0, 457.2)).is_none());
    }

    proptest! {
        #[test]
        fn spot_satisfies_every_clause_of_13_1(
            others in prop::collection::vec((-880.0f64..880.0, -430.0f64..430.0, prop::bool::ANY), 0..12),
            exit_t in 0.0f64..1.0,
            large in prop::bool::ANY,
            active in prop::collection::vec(prop::bool::ANY, 4),
        ) {
            let mat = MatSpec::STANDARD;
            let field = mat.field_of_play();
            let others: Vec<Footprint> = others.into_iter()
                .map(|(x, y, l)| Footprint { centre: MatPoint::new(x, y), radius_mm: if l { 11.0 } else { 8.0 } })
                .collect();
            let baselines: Vec<Segment> = mat.baselines().iter().zip(&active).filter(|(_, a)| **a).map(|(b, _)| b.segment).collect();
            // An exit point anywhere on the boundary.
            let v = field.vertices();
            let k = ((exit_t * 8.0) as usize).min(7);
            let local = exit_t * 8.0 - k as f64;
            let exit = v[k] + (v[(k + 1) % 8] - v[k]) * local;
            let r = if large { 11.0 } else { 8.0 };
            if let Some(p) = replacement_spot(&rule(&field, &others, &baselines), r, exit) {
                // (i) nearest edge 22 mm in from the boundary.
                prop_assert!((field.inside_distance(p) - r - 22.0).abs() < 1e-6);
                // (ii) at least 10 cm from every other wink's edge.
                for o in &others {
                    prop_assert!(p.distance(o.centre) - r - o.radius_mm >= 100.0 - 1e-6);
                }
                // (iii) at least 10 cm from every baseline with unplayed winks behind it.
                for b in &baselines {
                    prop_assert!(b.distance(p) - r >= 100.0 - 1e-6);
                }
                // As near as possible: no sampled spot on the locus that satisfies all is nearer.
                let locus = field.inset(22.0 + r).unwrap();
                let best = p.distance(exit);
                for e in locus.edges() {
                    for i in 0..=400 {
                        let q = e.a + (e.b - e.a) * (i as f64 / 400.0);
                        let ok = others.iter().all(|o| q.distance(o.centre) - r - o.radius_mm >= 100.0)
                            && baselines.iter().all(|b| b.distance(q) - r >= 100.0);
                        prop_assert!(!ok || q.distance(exit) >= best - 1e-6, "{q:?} nearer than {p:?}");
                    }
                }
            }
        }
    }
}
