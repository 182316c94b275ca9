//! The umpire's second look. Rule D.1: an umpire "should view the situation from more than one
//! standing position before coming to a decision". Close-ups of the same winks from several
//! places are each read on their own ([`super::closeup`]); their winks are matched by colour, size
//! and where they lie on the mat's plane, and each pair of the first photo is called on all its
//! readings: the margins weighed by what each photo measures on its own, the doubts all photos
//! share (the rims' roundness, the winks' true size) counted once and in full.

use super::closeup::Closeup;
use super::{verdict, Budget, Pair, ViewReading};
use crate::geometry::PixelPoint;
use crate::report::position::{Colour, NominalDiameters, WinkSize};
use nalgebra::Vector3;

/// Two winks seen in two photos are one when, with the photos' planes laid on each other, they
/// are this close, mm (under half a small wink's radius; the pose of a close-up puts its winks on
/// the plane to a millimetre or so).
pub const MATCH_MM: f64 = 4.0;

/// Sources of a margin's doubt that every photo of the same winks shares: looking again does not
/// shrink them.
const SHARED: [&str; 3] = ["roundness", "scale", "assumed_size"];

/// Where a close-up's winks lie on the mat's plane, mm, each photo in axes of its own (photos
/// differ by a turn and a shift): each centre's sight line met with the fitted plane, scaled by the
/// winks' known radii. The axes are right-handed with the plane's normal towards the camera, so
/// every photo sees the plane from the same side and no photo's layout is a mirror image.
pub fn on_plane(c: &Closeup, nominal: &NominalDiameters) -> Vec<PixelPoint> {
    let p = &c.plane;
    let n = p.normal;
    let e1 = (if n.x.abs() < 0.9 { Vector3::x() } else { Vector3::y() }).cross(&n).normalize();
    let e2 = n.cross(&e1);
    // The sight line through `q` meets the plane at unit distance from the camera.
    let hit = |q: PixelPoint| {
        let l = Vector3::new((q.x - p.principal.x) / p.focal, (q.y - p.principal.y) / p.focal, 1.0);
        l / n.dot(&l).abs().max(1e-9)
    };
    // A wink's major semi-axis, px, is its radius seen square on at its distance.
    let per_mm: Vec<f64> = c.winks.iter().map(|w| w.axes.0 / p.focal * hit(w.centre).norm() / (nominal.of(w.size) / 2.0)).collect();
    let units_per_mm = per_mm.iter().sum::<f64>() / per_mm.len().max(1) as f64;
    c.winks
        .iter()
        .map(|w| {
            let x = hit(w.centre) / units_per_mm.max(1e-12);
            PixelPoint::new(e1.dot(&x), e2.dot(&x))
        })
        .collect()
}

/// A wink for matching: its colour, size and place on its photo's plane (mm).
pub type Placed = (Colour, WinkSize, PixelPoint);

/// Which wink of `b` each wink of `a` is: the turn and shift carrying the most of `a`'s winks onto
/// winks of `b` of the same colour and size within [`MATCH_MM`] (ties: the least summed
/// distance), each of `b`'s used once. `None` for a wink of `a` with no such wink in `b` (out of
/// that photo), and for all of them when no two winks of one set fit two of the other.
pub fn match_winks(a: &[Placed], b: &[Placed]) -> Vec<Option<usize>> {
    let same = |x: &Placed, y: &Placed| x.0 == y.0 && x.1 == y.1;
    let mut best: (usize, f64, Vec<Option<usize>>) = (0, f64::INFINITY, vec![None; a.len()]);
    for (i, j) in (0..a.len()).flat_map(|i| (0..a.len()).map(move |j| (i, j))).filter(|(i, j)| i != j) {
        for (k, l) in (0..b.len()).flat_map(|k| (0..b.len()).map(move |l| (k, l))).filter(|(k, l)| k != l) {
            if !same(&a[i], &b[k]) || !same(&a[j], &b[l]) {
                continue;
            }
            let (da, db) = (a[j].2 - a[i].2, b[l].2 - b[k].2);
            if (da.norm() - db.norm()).abs() > MATCH_MM {
                continue;
            }
            let turn = db.y.atan2(db.x) - da.y.atan2(da.x);
            let (s, c) = turn.sin_cos();
            let carry = |p: PixelPoint| {
                let d = p - a[i].2;
                b[k].2 + PixelPoint::new(c * d.x - s * d.y, s * d.x + c * d.y)
            };
            // Greedy, nearest pairs first.
            let mut cands: Vec<(f64, usize, usize)> = Vec::new();
            for (m, wa) in a.iter().enumerate() {
                for (q, wb) in b.iter().enumerate() {
                    let d = carry(wa.2).distance(wb.2);
                    if same(wa, wb) && d <= MATCH_MM {
                        cands.push((d, m, q));
                    }
                }
            }
            cands.sort_by(|x, y| x.0.total_cmp(&y.0));
            let mut map = vec![None; a.len()];
            let mut used = vec![false; b.len()];
            let mut total = 0.0;
            for (d, m, q) in cands {
                if map[m].is_none() && !used[q] {
                    map[m] = Some(q);
                    used[q] = true;
                    total += d;
                }
            }
            let count = map.iter().flatten().count();
            if count > best.0 || (count == best.0 && total < best.1) {
                best = (count, total, map);
            }
        }
    }
    best.2
}

/// The first close-up's pairs, each called on every photo (`others`, each with its path) that
/// shows both its winks near enough to report them; a pair no other photo shows keeps its own
/// call. With them, how many of the first photo's winks each other photo was found to show.
pub fn call_on_views(first: (&Closeup, &str), others: &[(Closeup, String)], nominal: &NominalDiameters) -> (Vec<Pair>, Vec<usize>) {
    let placed = |c: &Closeup| -> Vec<Placed> { on_plane(c, nominal).into_iter().zip(&c.winks).map(|(p, w)| (w.colour, w.size, p)).collect() };
    let here = placed(first.0);
    let maps: Vec<Vec<Option<usize>>> = others.iter().map(|(c, _)| match_winks(&here, &placed(c))).collect();
    let index = |id: &str| first.0.winks.iter().position(|w| w.id == id);
    let shown = maps.iter().map(|m| m.iter().flatten().count()).collect();
    let pairs = first
        .0
        .pairs
        .iter()
        .map(|p| {
            let mut readings = vec![(p, first.1, [p.a.clone(), p.b.clone()], p.named_upper.clone())];
            for ((c, path), map) in others.iter().zip(&maps) {
                let (Some(ja), Some(jb)) = (index(&p.a).and_then(|i| map[i]), index(&p.b).and_then(|i| map[i])) else { continue };
                let (ida, idb) = (&c.winks[ja].id, &c.winks[jb].id);
                if let Some(q) = c.pairs.iter().find(|q| (q.a == *ida && q.b == *idb) || (q.a == *idb && q.b == *ida)) {
                    // Its upper, in the first photo's ids.
                    let up = q.named_upper.as_ref().map(|u| if u == ida { p.a.clone() } else { p.b.clone() });
                    readings.push((q, path.as_str(), [ida.clone(), idb.clone()], up));
                }
            }
            if readings.len() > 1 {
                combine_views(&readings).unwrap_or_else(|| p.clone())
            } else {
                p.clone()
            }
        })
        .collect();
    (pairs, shown)
}

/// One pair called on several photos' readings of it (the first photo's first, each with its
/// photo's path, its winks' ids there and its named upper mapped to the first photo's ids).
///
/// Where some photo sees a wink of the pair raised (named upper, leaning, on a third wink), a
/// photo that saw neither raised, and so left the raised rim out of its sigma and read felt
/// between them, is given the largest raised-rim doubt of the others: its reading rests on their
/// lying flat, which another photo doubts. Readings further apart than [`VERDICT_SIGMAS`] of
/// their combined sigma contradict each other, and the call is declined. Else the margin is the
/// readings' mean weighed by the inverse square of the doubt each photo has on its own (its sigma
/// without the [`SHARED`] sources); sigma adds the shared sources once, at their largest; each
/// source of the budget is carried through the weighing. The upper is named when the photos that
/// name one agree. Felt seen between the two in any photo, with a gap measured and no photo
/// seeing either raised, is `not_squopped`; a gap declined for no felt seen in every photo stays
/// declined.
///
/// [`VERDICT_SIGMAS`]: super::VERDICT_SIGMAS
pub fn combine_views(readings: &[(&Pair, &str, [String; 2], Option<String>)]) -> Option<Pair> {
    let (first, ..) = readings.first()?;
    let any_raised = readings.iter().any(|r| r.0.raised);
    let rim = |p: &Pair| p.sigma_parts.parts().iter().find(|s| s.source == "raised_rim").map_or(0.0, |s| s.mm);
    let doubt = readings.iter().filter(|r| r.0.raised).map(|r| rim(r.0)).fold(0.0, f64::max);
    // Each reading's budget, a flat reading's raised rim made up to the doubt the others have.
    let budgets: Vec<Budget> = readings
        .iter()
        .map(|r| if any_raised && !r.0.raised && rim(r.0) < doubt { r.0.sigma_parts.clone().with("raised_rim", (doubt * doubt - rim(r.0).powi(2)).sqrt()) } else { r.0.sigma_parts.clone() })
        .map(|b| if b.is_empty() { Budget::of(&[("outline_fit", 1e-3)]) } else { b })
        .collect();
    let shared = |b: &Budget| b.parts().iter().filter(|s| SHARED.contains(&s.source)).map(|s| s.mm * s.mm).sum::<f64>();
    let own = |b: &Budget| (b.sigma().powi(2) - shared(b)).max(1e-8);
    let weights: Vec<f64> = budgets.iter().map(|b| 1.0 / own(b)).collect();
    let total: f64 = weights.iter().sum();
    let margin = readings.iter().zip(&weights).map(|(r, w)| w * r.0.margin_mm).sum::<f64>() / total;
    let mut sources: Vec<&'static str> = Vec::new();
    for b in &budgets {
        for s in b.parts() {
            if !sources.contains(&s.source) {
                sources.push(s.source);
            }
        }
    }
    let part = |b: &Budget, source: &str| b.parts().iter().find(|s| s.source == source).map_or(0.0, |s| s.mm);
    let parts: Vec<(&'static str, f64)> = sources
        .iter()
        .map(|&source| {
            let sd = if SHARED.contains(&source) {
                budgets.iter().map(|b| part(b, source)).fold(0.0, f64::max)
            } else {
                budgets.iter().zip(&weights).map(|(b, w)| (w * part(b, source)).powi(2)).sum::<f64>().sqrt() / total
            };
            (source, sd)
        })
        .collect();
    let budget = Budget::of(&parts);
    let disagree = readings.iter().zip(&budgets).enumerate().any(|(i, (r, b))| {
        readings.iter().zip(&budgets).skip(i + 1).any(|(q, c)| (r.0.margin_mm - q.0.margin_mm).abs() > super::VERDICT_SIGMAS * b.sigma().hypot(c.sigma()))
    });
    // The upper: every photo that names one names the same wink.
    let named: Vec<&String> = readings.iter().filter_map(|r| r.3.as_ref()).collect();
    let upper = named.first().filter(|u| named.iter().all(|v| v == *u)).map(|u| u.as_str());
    let (v, up) = verdict(margin, budget.sigma(), upper);
    let felt = readings.iter().filter_map(|r| r.0.felt_between).reduce(f64::max);
    let mut pair = Pair { margin_mm: super::round3(margin), sigma_mm: super::round3(budget.sigma()), verdict: v.into(), upper: up, sigma_parts: budget.rounded(), felt_between: felt, named_upper: upper.map(str::to_string), raised: any_raised, photos_disagree: disagree, ..(*first).clone() };
    if upper.is_none() {
        pair.upper_confidence = None;
        pair.upper_evidence = None;
    }
    if disagree {
        pair.verdict = "too_close_to_call".into();
        pair.upper = None;
    } else if margin < 0.0 && !any_raised && felt.is_some_and(|f| f >= super::closeup::FELT_SEEN_SHARE) {
        pair.verdict = "not_squopped".into();
    } else if pair.verdict == "not_squopped" && readings.iter().all(|r| r.0.gap_unseen) {
        pair.verdict = "too_close_to_call".into();
        pair.gap_unseen = true;
    }
    pair.views = readings
        .iter()
        .map(|(p, path, ids, _)| ViewReading { path: path.to_string(), ids: ids.clone(), margin_mm: p.margin_mm, sigma_mm: p.sigma_mm, verdict: p.verdict.clone() })
        .collect();
    pair.advice = pair.advise(true);
    Some(pair)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(c: Colour, s: WinkSize, x: f64, y: f64) -> Placed {
        (c, s, PixelPoint::new(x, y))
    }

    #[test]
    fn winks_are_matched_across_photos_turned_and_shifted() {
        use Colour::*;
        use WinkSize::*;
        let a = [placed(Green, Small, 0.0, 0.0), placed(Green, Small, 16.5, 0.0), placed(Red, Large, 8.0, 19.0), placed(Blue, Small, -30.0, 5.0)];
        // The second photo: turned 70°, shifted, a millimetre of noise, the blue out of view and
        // the winks listed in another order.
        let (s, c) = 70f64.to_radians().sin_cos();
        let move_ = |p: &Placed, dx: f64| (p.0, p.1, PixelPoint::new(c * p.2.x - s * p.2.y + 40.0 + dx, s * p.2.x + c * p.2.y - 12.0));
        let b = [move_(&a[2], 0.6), move_(&a[1], -0.8), move_(&a[0], 0.5)];
        assert_eq!(match_winks(&a, &b), vec![Some(2), Some(1), Some(0), None]);
        // A mirror image does not match two like winks the wrong way round.
        let mirrored: Vec<Placed> = b.iter().map(|p| (p.0, p.1, PixelPoint::new(-p.2.x, p.2.y))).collect();
        let m = match_winks(&a, &mirrored);
        assert!(m[0] != Some(2) || m[1] != Some(1) || m[2] != Some(0) || m.iter().flatten().count() < 3, "{m:?}");
        // Nothing alike: nothing matched.
        assert_eq!(match_winks(&a[..1], &[placed(Yellow, Small, 0.0, 0.0)]), vec![None]);
    }

    fn reading(margin: f64, parts: &[(&'static str, f64)], upper: Option<&str>) -> Pair {
        let at = |x| (x, PixelPoint::new(0.0, 0.0), Colour::Red);
        Pair::called(at("w1"), at("w2"), margin, &Budget::of(parts), upper, upper.map(|_| (1.0, "colour_stops_short".to_string())))
    }

    #[test]
    fn two_looks_weigh_their_own_doubts_and_count_the_shared_once() {
        // Each photo alone: 0.30 ± 0.22 and 0.40 ± 0.22 mm, too close to call.
        let one = reading(0.30, &[("raised_rim", 0.2), ("roundness", 0.05), ("edge_bias", 0.08)], Some("w1"));
        let two = reading(0.40, &[("raised_rim", 0.2), ("roundness", 0.05), ("edge_bias", 0.08)], None);
        assert_eq!((one.verdict.as_str(), two.verdict.as_str()), ("too_close_to_call", "too_close_to_call"));
        let ids = || ["w1".to_string(), "w2".to_string()];
        let both = combine_views(&[(&one, "a.jpg", ids(), one.named_upper.clone()), (&two, "b.jpg", ids(), two.named_upper.clone())]).unwrap_or_else(|| reading(0.0, &[], None));
        assert!((both.margin_mm - 0.35).abs() < 1e-9, "{}", both.margin_mm);
        // Own doubt sqrt(0.2² + 0.08²) / √2 = 0.152; with the roundness once: 0.160.
        let own = (0.2f64.hypot(0.08)) / 2f64.sqrt();
        assert!((both.sigma_mm - (own.hypot(0.05) * 1000.0).round() / 1000.0).abs() < 1e-9, "{}", both.sigma_mm);
        // Called now, on the upper the one photo named and the other did not contradict.
        assert_eq!(both.verdict, "squopped");
        assert_eq!(both.upper.as_deref(), Some("w1"));
        assert_eq!(both.views.len(), 2);
        assert_eq!(both.views[1].path, "b.jpg");
        // Photos naming different uppers name none.
        let other = reading(0.40, &[("raised_rim", 0.2), ("roundness", 0.05), ("edge_bias", 0.08)], Some("w2"));
        let split = combine_views(&[(&one, "a.jpg", ids(), one.named_upper.clone()), (&other, "b.jpg", ids(), other.named_upper.clone())]).unwrap_or_else(|| reading(0.0, &[], None));
        assert_eq!((split.verdict.as_str(), split.upper.as_deref()), ("too_close_to_call", None));
        assert!(split.advice.is_some_and(|a| a.contains("which wink lies on top")));
    }

    #[test]
    fn felt_seen_in_either_photo_decides_a_gap() {
        let ids = || ["w1".to_string(), "w2".to_string()];
        let mut seen = reading(-0.1, &[("edge_bias", 0.1)], None);
        seen.felt_between = Some(0.4);
        let unseen = reading(-0.2, &[("edge_bias", 0.1)], None);
        let both = combine_views(&[(&unseen, "a.jpg", ids(), None), (&seen, "b.jpg", ids(), None)]).unwrap_or_else(|| reading(0.0, &[], None));
        assert_eq!(both.verdict, "not_squopped");
        // A gap no photo saw felt in, each declined for it, stays declined however it adds up.
        let mut a = reading(-0.5, &[("edge_bias", 0.1)], None);
        a.verdict = "too_close_to_call".into();
        a.gap_unseen = true;
        let b = a.clone();
        let both = combine_views(&[(&a, "a.jpg", ids(), None), (&b, "b.jpg", ids(), None)]).unwrap_or_else(|| reading(0.0, &[], None));
        assert_eq!(both.verdict, "too_close_to_call");
        // A photo seeing a wink of the pair raised: the flat photo's felt does not decide, and its
        // reading takes the raised rim's doubt (0.3 mm) into its weight.
        let mut raised = reading(0.2, &[("raised_rim", 0.3), ("edge_bias", 0.1)], None);
        raised.raised = true;
        let both = combine_views(&[(&raised, "a.jpg", ids(), None), (&seen, "b.jpg", ids(), None)]).unwrap_or_else(|| reading(0.0, &[], None));
        assert_eq!(both.verdict, "too_close_to_call", "{both:?}");
        assert!((both.margin_mm - 0.05).abs() < 1e-9, "equal weights: {}", both.margin_mm);
        // Photos that contradict each other are declined, and say so.
        let (up, down) = (reading(0.9, &[("edge_bias", 0.1)], None), reading(-0.5, &[("edge_bias", 0.1)], None));
        let both = combine_views(&[(&up, "a.jpg", ids(), None), (&down, "b.jpg", ids(), None)]).unwrap_or_else(|| reading(0.0, &[], None));
        assert_eq!(both.verdict, "too_close_to_call");
        assert!(both.advice.is_some_and(|a| a.starts_with("the photos disagree")));
    }
}
