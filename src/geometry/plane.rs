//! Small plane-geometry tools on image points shared by calibration, detection and the umpire.

use super::PixelPoint;

/// Kåsa's algebraic circle through points (least squares on x² + y² + D x + E y + F = 0, in
/// coordinates centred on the points' mean for conditioning): centre and radius. `None` for
/// fewer than three points or collinear ones.
pub fn fit_circle(p: &[PixelPoint]) -> Option<(PixelPoint, f64)> {
    if p.len() < 3 {
        return None;
    }
    let n = p.len() as f64;
    let (mx, my) = (p.iter().map(|q| q.x).sum::<f64>() / n, p.iter().map(|q| q.y).sum::<f64>() / n);
    let (mut suu, mut svv, mut suv, mut suuu, mut svvv, mut suvv, mut svuu) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for q in p {
        let (u, v) = (q.x - mx, q.y - my);
        suu += u * u;
        svv += v * v;
        suv += u * v;
        suuu += u * u * u;
        svvv += v * v * v;
        suvv += u * v * v;
        svuu += v * u * u;
    }
    let m = nalgebra::Matrix2::new(suu, suv, suv, svv);
    let b = nalgebra::Vector2::new(0.5 * (suuu + suvv), 0.5 * (svvv + svuu));
    let c = m.try_inverse()? * b;
    let r = (c.x * c.x + c.y * c.y + (suu + svv) / n).sqrt();
    Some((PixelPoint::new(c.x + mx, c.y + my), r))
}

/// Whether `q` lies inside the convex polygon `poly` (either winding).
pub fn inside_convex(poly: &[PixelPoint], q: PixelPoint) -> bool {
    if poly.len() < 3 {
        return false;
    }
    let mut sign = 0.0;
    for i in 0..poly.len() {
        let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
        let c = (b.x - a.x) * (q.y - a.y) - (b.y - a.y) * (q.x - a.x);
        if c != 0.0 {
            if sign == 0.0 {
                sign = c.signum();
            } else if c.signum() != sign {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn circle_through_points_on_an_arc() {
        let pts: Vec<PixelPoint> = (0..10).map(|k| {
            let a = k as f64 * 0.2;
            PixelPoint::new(3.0 + 5.0 * a.cos(), -2.0 + 5.0 * a.sin())
        }).collect();
        let (c, r) = fit_circle(&pts).expect("a circle");
        assert!(c.distance(PixelPoint::new(3.0, -2.0)) < 1e-9 && (r - 5.0).abs() < 1e-9);
        assert!(fit_circle(&pts[..2]).is_none());
    }

    #[test]
    fn inside_a_square_either_way_round() {
        let sq = [PixelPoint::new(0.0, 0.0), PixelPoint::new(2.0, 0.0), PixelPoint::new(2.0, 2.0), PixelPoint::new(0.0, 2.0)];
        let rev: Vec<PixelPoint> = sq.iter().rev().copied().collect();
        for poly in [&sq[..], &rev[..]] {
            assert!(inside_convex(poly, PixelPoint::new(1.0, 1.0)));
            assert!(!inside_convex(poly, PixelPoint::new(3.0, 1.0)));
        }
    }
}
