//! The mat, its baselines, the field of play and the pot, in the mat frame (mm).

use super::MatPoint;

/// One of the mat's four corners, named by the signs of its mat coordinates.
///
/// The order of [`Corner::ALL`] is the contract's order for `mat_corners_px`:
/// (−X,+Y), (+X,+Y), (+X,−Y), (−X,−Y): clockwise seen from above.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Corner {
    /// The corner at (−X, +Y).
    NegXPosY,
    /// The corner at (+X, +Y).
    PosXPosY,
    /// The corner at (+X, −Y).
    PosXNegY,
    /// The corner at (−X, −Y).
    NegXNegY,
}

impl Corner {
    /// All four corners, in the contract's order.
    pub const ALL: [Corner; 4] = [Corner::NegXPosY, Corner::PosXPosY, Corner::PosXNegY, Corner::NegXNegY];

    /// The signs (±1) of the corner's x and y coordinates.
    pub fn signs(self) -> (f64, f64) {
        match self {
            Corner::NegXPosY => (-1.0, 1.0),
            Corner::PosXPosY => (1.0, 1.0),
            Corner::PosXNegY => (1.0, -1.0),
            Corner::NegXNegY => (-1.0, -1.0),
        }
    }

    /// Its place in [`Corner::ALL`].
    pub fn index(self) -> usize {
        match self {
            Corner::NegXPosY => 0,
            Corner::PosXPosY => 1,
            Corner::PosXNegY => 2,
            Corner::NegXNegY => 3,
        }
    }

    /// The corner `k` places clockwise (seen from above) from this one.
    pub fn clockwise(self, k: usize) -> Corner {
        Corner::ALL[(self.index() + k) % 4]
    }

    /// The corner diagonally opposite: where this one lies once the mat frame is turned half
    /// round.
    pub fn opposite(self) -> Corner {
        self.clockwise(2)
    }

    /// The corner whose baseline `colour`'s winks start behind, when blue's start behind `blue`'s:
    /// the colours go clockwise seen from above in alphabetical order (rule 5.2: blue, green,
    /// red, yellow). Which corner is blue's the rules leave open: the winks behind the baselines
    /// tell ([`crate::calibrate::Calibration::blue_corner`]).
    pub fn home_of(blue: Corner, colour: crate::report::position::Colour) -> Corner {
        use crate::report::position::Colour;
        blue.clockwise(match colour {
            Colour::Blue => 0,
            Colour::Green => 1,
            Colour::Red => 2,
            Colour::Yellow => 3,
        })
    }
}

impl std::fmt::Display for Corner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (x, y) = self.signs();
        let sign = |s: f64| if s > 0.0 { '+' } else { '−' };
        write!(f, "({}X,{}Y)", sign(x), sign(y))
    }
}

/// A straight segment between two points of the mat frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// One end.
    pub a: MatPoint,
    /// The other end.
    pub b: MatPoint,
}

impl Segment {
    /// The point of the segment nearest to `p`.
    pub fn closest_point(&self, p: MatPoint) -> MatPoint {
        let d = self.b - self.a;
        let len2 = d.dot(d);
        if len2 == 0.0 {
            return self.a;
        }
        let t = ((p - self.a).dot(d) / len2).clamp(0.0, 1.0);
        self.a + d * t
    }

    /// Distance from `p` to the nearest point of the segment, in mm.
    pub fn distance(&self, p: MatPoint) -> f64 {
        p.distance(self.closest_point(p))
    }

    /// The segment's length, in mm.
    pub fn length(&self) -> f64 {
        self.a.distance(self.b)
    }
}

/// A baseline: the straight line across a corner, at right angles to the mat's diagonal
/// (rule 2.3.1). Winks behind it are unplayed; the area behind it is not field of play (rule 3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Baseline {
    /// The corner it cuts off.
    pub corner: Corner,
    /// The painted line, from the long edge to the short edge.
    pub segment: Segment,
    /// Unit vector along the diagonal, from the centre towards the corner.
    pub outward: MatPoint,
    /// Distance of the line from the mat's centre, along the diagonal, in mm.
    pub offset_mm: f64,
}

impl Baseline {
    /// Signed distance of `p` behind the line, in mm: positive on the corner's side.
    pub fn depth_behind(&self, p: MatPoint) -> f64 {
        p.dot(self.outward) - self.offset_mm
    }

    /// Whether a disc of `radius_mm` centred at `p` lies wholly behind the line.
    pub fn holds_disc(&self, p: MatPoint, radius_mm: f64) -> bool {
        self.depth_behind(p) >= radius_mm
    }
}

/// A mat: its size and where its baselines cross the diagonals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatSpec {
    /// Length of the long side, in mm.
    pub length_mm: f64,
    /// Length of the short side, in mm.
    pub width_mm: f64,
    /// Distance from the centre, along each diagonal, at which the baseline (or start line) crosses it, in mm.
    pub baseline_from_centre_mm: f64,
    /// Each baseline as painted on this mat: how much further from the centre than
    /// `baseline_from_centre_mm` it crosses the diagonal, in mm, in the contract's corner order
    /// (zero in a ruleset's mat; calibration measures them, `calibrate::Calibration::baselines_found`).
    /// The painted line is the boundary (rule 3), wherever the rules meant it to be.
    pub painted_offsets_mm: [f64; 4],
}

/// One foot in millimetres.
pub const FOOT_MM: f64 = 304.8;

/// A real wink's diameter as a share of the nominal one: measured large winks are 21.1–21.6 mm
/// across for a nominal 22 (domain notes), 0.97 at the middle; small winks are taken alike.
pub const REAL_DIAMETER_SHARE: f64 = 21.35 / 22.0;

impl MatSpec {
    /// The standard 6 ft × 3 ft mat with baselines 3 ft from the centre (ETwA 2012 rule 2.3.1).
    pub const STANDARD: MatSpec = MatSpec {
        length_mm: 6.0 * FOOT_MM,
        width_mm: 3.0 * FOOT_MM,
        baseline_from_centre_mm: 3.0 * FOOT_MM,
        painted_offsets_mm: [0.0; 4],
    };

    /// A mat of the given size with its baselines where the rules put them.
    pub const fn new(length_mm: f64, width_mm: f64, baseline_from_centre_mm: f64) -> MatSpec {
        MatSpec { length_mm, width_mm, baseline_from_centre_mm, painted_offsets_mm: [0.0; 4] }
    }

    /// This mat with its baselines painted `offsets_mm` further from the centre than the rules
    /// put them (contract corner order).
    pub fn with_painted(self, offsets_mm: [f64; 4]) -> MatSpec {
        MatSpec { painted_offsets_mm: offsets_mm, ..self }
    }

    /// Half the length of the mat's diagonal, in mm.
    pub fn half_diagonal_mm(&self) -> f64 {
        (self.length_mm / 2.0).hypot(self.width_mm / 2.0)
    }

    /// The corner's position in the mat frame.
    pub fn corner(&self, corner: Corner) -> MatPoint {
        let (sx, sy) = corner.signs();
        MatPoint::new(sx * self.length_mm / 2.0, sy * self.width_mm / 2.0)
    }

    /// The four corners in the contract's order.
    pub fn corners(&self) -> [MatPoint; 4] {
        Corner::ALL.map(|c| self.corner(c))
    }

    /// Where the baseline meets the mat's edges, as distances from the corner: (along the long
    /// edge, along the short edge), in mm.
    pub fn baseline_edge_offsets_mm(&self) -> (f64, f64) {
        self.edge_offsets_at(self.baseline_from_centre_mm)
    }

    /// As [`MatSpec::baseline_edge_offsets_mm`], for a line crossing the diagonal `from_centre_mm`
    /// from the centre.
    fn edge_offsets_at(&self, from_centre_mm: f64) -> (f64, f64) {
        let (hl, hw) = (self.length_mm / 2.0, self.width_mm / 2.0);
        let k = from_centre_mm * self.half_diagonal_mm();
        // The line is {p : p·(hl, hw) = k}; on the long edge y = hw, on the short edge x = hl.
        let x_on_long = (k - hw * hw) / hl;
        let y_on_short = (k - hl * hl) / hw;
        (hl - x_on_long, hw - y_on_short)
    }

    /// The baseline across `corner`, as painted.
    pub fn baseline(&self, corner: Corner) -> Baseline {
        let (sx, sy) = corner.signs();
        let (hl, hw) = (self.length_mm / 2.0, self.width_mm / 2.0);
        let painted = Corner::ALL.iter().position(|&c| c == corner).map_or(0.0, |k| self.painted_offsets_mm[k]);
        let from_centre = self.baseline_from_centre_mm + painted;
        let (along_long, along_short) = self.edge_offsets_at(from_centre);
        let hd = self.half_diagonal_mm();
        Baseline {
            corner,
            segment: Segment {
                a: MatPoint::new(sx * (hl - along_long), sy * hw),
                b: MatPoint::new(sx * hl, sy * (hw - along_short)),
            },
            outward: MatPoint::new(sx * hl / hd, sy * hw / hd),
            offset_mm: from_centre,
        }
    }

    /// All four baselines, in the contract's corner order.
    pub fn baselines(&self) -> [Baseline; 4] {
        Corner::ALL.map(|c| self.baseline(c))
    }

    /// The whole mat as a polygon, counter-clockwise seen from above.
    pub fn outline(&self) -> ConvexPolygon {
        let [a, b, c, d] = self.corners();
        // Contract order runs clockwise seen from above (y up); reverse it.
        ConvexPolygon::new(vec![d, c, b, a])
    }

    /// The field of play (rule 3): the mat less the four triangles behind the baselines, an
    /// octagon, counter-clockwise seen from above.
    pub fn field_of_play(&self) -> ConvexPolygon {
        let mut v = Vec::with_capacity(8);
        // Walk counter-clockwise: corners in the order (+,−), (+,+), (−,+), (−,−).
        for corner in [Corner::PosXNegY, Corner::PosXPosY, Corner::NegXPosY, Corner::NegXNegY] {
            let s = self.baseline(corner).segment;
            // Order the two ends so the walk stays counter-clockwise.
            let (first, second) = if cross(s.a, s.b) > 0.0 { (s.a, s.b) } else { (s.b, s.a) };
            v.push(first);
            v.push(second);
        }
        ConvexPolygon::new(v)
    }
}

fn cross(a: MatPoint, b: MatPoint) -> f64 {
    a.x * b.y - a.y * b.x
}

/// The pot (rule 2.4): a concave-sided cup at the mat's centre.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PotSpec {
    /// Height, in mm.
    pub height_mm: f64,
    /// External diameter at the top (the rim), in mm.
    pub top_diameter_mm: f64,
    /// External diameter at the base, in mm.
    pub base_diameter_mm: f64,
}

impl PotSpec {
    /// The ETwA 2012 pot: 38 mm high, 48 mm across the top, 38 mm across the base.
    pub const STANDARD: PotSpec = PotSpec { height_mm: 38.0, top_diameter_mm: 48.0, base_diameter_mm: 38.0 };
}

/// A convex polygon in the mat frame, vertices counter-clockwise seen from above.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvexPolygon {
    vertices: Vec<MatPoint>,
}

impl ConvexPolygon {
    /// A polygon from its vertices, which must run counter-clockwise and be convex.
    pub fn new(vertices: Vec<MatPoint>) -> Self {
        Self { vertices }
    }

    /// The vertices, counter-clockwise.
    pub fn vertices(&self) -> &[MatPoint] {
        &self.vertices
    }

    /// The edges, each from a vertex to the next.
    pub fn edges(&self) -> impl Iterator<Item = Segment> + '_ {
        let n = self.vertices.len();
        (0..n).map(move |i| Segment { a: self.vertices[i], b: self.vertices[(i + 1) % n] })
    }

    /// Signed distance from `p` to the nearest edge line, in mm: positive inside.
    ///
    /// Inside a convex polygon this is the exact distance to the boundary, so a disc of radius r
    /// centred at `p` lies inside exactly when the value is at least r.
    pub fn inside_distance(&self, p: MatPoint) -> f64 {
        self.edges()
            .map(|e| {
                let d = e.b - e.a;
                let len = d.norm();
                // Inward normal of a counter-clockwise edge is the edge direction turned left.
                let n = MatPoint::new(-d.y / len, d.x / len);
                (p - e.a).dot(n)
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// Whether a disc of `radius_mm` at `p` lies wholly inside the polygon.
    pub fn contains_disc(&self, p: MatPoint, radius_mm: f64) -> bool {
        self.inside_distance(p) >= radius_mm
    }

    /// The point of the boundary nearest to `p` (inside or outside).
    pub fn nearest_boundary_point(&self, p: MatPoint) -> MatPoint {
        self.edges()
            .map(|e| e.closest_point(p))
            .min_by(|a, b| a.distance(p).total_cmp(&b.distance(p)))
            .unwrap_or(p)
    }

    /// The polygon whose boundary lies `d_mm` inside this one's: every edge moved inward by `d_mm`.
    ///
    /// Returns `None` when an edge would vanish (the inset is too deep for this polygon).
    pub fn inset(&self, d_mm: f64) -> Option<ConvexPolygon> {
        let lines: Vec<(MatPoint, MatPoint)> = self
            .edges()
            .map(|e| {
                let dir = e.b - e.a;
                let len = dir.norm();
                let n = MatPoint::new(-dir.y / len, dir.x / len);
                (e.a + n * d_mm, dir * (1.0 / len))
            })
            .collect();
        let n = lines.len();
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let (p0, d0) = lines[(i + n - 1) % n];
            let (p1, d1) = lines[i];
            let den = cross(d0, d1);
            if den.abs() < 1e-12 {
                return None;
            }
            let t = cross(p1 - p0, d1) / den;
            out.push(p0 + d0 * t);
        }
        let inset = ConvexPolygon::new(out);
        // An edge that flipped direction means the inset passed through a vertex.
        let flipped = inset.edges().zip(self.edges()).any(|(a, b)| (a.b - a.a).dot(b.b - b.a) <= 0.0);
        (!flipped).then_some(inset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// domain.md gives these figures to 0.1 mm, from a half-diagonal it rounds to 1022.35 mm
    /// (exactly 457.2·√5 = 1022.33 mm, so the short-edge offset is 241.34 mm).
    const TOL: f64 = 0.1;

    #[test]
    fn baseline_meets_edges_where_domain_says() {
        let (long, short) = MatSpec::STANDARD.baseline_edge_offsets_mm();
        assert!((long - 120.7).abs() < TOL, "long edge offset {long}");
        assert!((short - 241.4).abs() < TOL, "short edge offset {short}");
        let hd = MatSpec::STANDARD.half_diagonal_mm();
        assert!((hd - 1022.35).abs() < TOL, "half diagonal {hd}");
    }

    #[test]
    fn baseline_is_perpendicular_to_diagonal_at_three_feet() {
        let mat = MatSpec::STANDARD;
        for b in mat.baselines() {
            let dir = b.segment.b - b.segment.a;
            assert!(dir.dot(b.outward).abs() < 1e-9);
            assert!((b.segment.a.dot(b.outward) - 914.4).abs() < 1e-9);
            assert!((b.segment.b.dot(b.outward) - 914.4).abs() < 1e-9);
            // The corner is behind its baseline, the centre is not.
            assert!(b.depth_behind(mat.corner(b.corner)) > 100.0);
            assert!(b.depth_behind(MatPoint::new(0.0, 0.0)) < 0.0);
        }
    }

    /// A baseline painted off its place is where it was painted: the same direction, moved along
    /// the diagonal, still running from edge to edge; the others stay put.
    #[test]
    fn a_baseline_painted_off_its_place_bounds_the_field_where_it_lies() {
        let nominal = MatSpec::STANDARD;
        let painted = nominal.with_painted([4.0, 0.0, -3.0, 0.0]);
        for (k, (b, n)) in painted.baselines().iter().zip(nominal.baselines()).enumerate() {
            let want = [4.0, 0.0, -3.0, 0.0][k];
            assert!((b.offset_mm - n.offset_mm - want).abs() < 1e-9);
            for end in [b.segment.a, b.segment.b] {
                assert!((end.dot(b.outward) - b.offset_mm).abs() < 1e-9, "end {end:?} off its line");
                // On the mat's long or short edge.
                let on_edge = (end.x.abs() - nominal.length_mm / 2.0).abs() < 1e-9 || (end.y.abs() - nominal.width_mm / 2.0).abs() < 1e-9;
                assert!(on_edge, "end {end:?} is not on an edge");
            }
            assert!((b.segment.b - b.segment.a).dot(b.outward).abs() < 1e-9);
        }
        // A wink 10 mm in front of the rules' line crosses a line painted 3 mm towards it.
        let b = nominal.baseline(Corner::PosXNegY);
        let p = b.outward * (b.offset_mm - 10.0);
        assert!(nominal.field_of_play().contains_disc(p, 8.0));
        assert!(!painted.field_of_play().contains_disc(p, 8.0));
        // A wink 6 mm behind the rules' line is not wholly behind a line painted 4 mm further out.
        let b = nominal.baseline(Corner::NegXPosY);
        let p = b.outward * (b.offset_mm + 6.0);
        assert!(b.holds_disc(p, 5.0));
        assert!(!painted.baseline(Corner::NegXPosY).holds_disc(p, 5.0));
        assert_eq!(MatSpec::STANDARD.with_painted([0.0; 4]), MatSpec::STANDARD);
    }

    #[test]
    fn field_of_play_is_an_octagon_with_the_right_area() {
        let mat = MatSpec::STANDARD;
        let field = mat.field_of_play();
        assert_eq!(field.vertices().len(), 8);
        let (l, s) = mat.baseline_edge_offsets_mm();
        let expected = mat.length_mm * mat.width_mm - 4.0 * 0.5 * l * s;
        let v = field.vertices();
        let area: f64 = (0..8).map(|i| cross(v[i], v[(i + 1) % 8])).sum::<f64>() / 2.0;
        assert!((area - expected).abs() < 1e-6, "area {area} vs {expected}");
        assert!(field.inside_distance(MatPoint::new(0.0, 0.0)) > 450.0);
        assert!(field.inside_distance(mat.corner(Corner::PosXPosY)) < 0.0);
    }

    #[test]
    fn inside_distance_is_distance_to_nearest_edge() {
        let field = MatSpec::STANDARD.field_of_play();
        // 10 mm in from the long edge, far from the corners.
        let p = MatPoint::new(100.0, 457.2 - 10.0);
        assert!((field.inside_distance(p) - 10.0).abs() < 1e-9);
        assert!(field.contains_disc(p, 8.0));
        assert!(!field.contains_disc(p, 11.0));
    }

    #[test]
    fn inset_moves_every_edge_inward() {
        let field = MatSpec::STANDARD.field_of_play();
        let inset = field.inset(33.0).expect("33 mm inset of the field exists");
        for v in inset.vertices() {
            assert!((field.inside_distance(*v) - 33.0).abs() < 1e-9);
        }
        assert!(field.inset(500.0).is_none());
    }
}
