//! The colour model: which pixels are wink-coloured, and which of the four colours, learned from
//! the frame itself.
//!
//! Winks are strongly coloured plastic; mats, tables, baselines, skin, shadows and glare are not,
//! or not in the same way. A pixel is a wink candidate when its chroma (distance from grey in the
//! CIE a*b* plane) is above a floor for its hue and it lies well away from the felt and the table
//! in a*b*; its colour is the nearest of four hue prototypes. The prototypes start at the hues of
//! typical blue, green, red and yellow plastic and are then moved to the mean hue of the frame's
//! own candidate pixels near each, so a yellowish light or an odd batch of winks is followed.
//!
//! The floors follow the frame too: highest at the hues of skin and wood, scaled by how saturated
//! the frame's winks are (a camera's saturation setting scales skin's chroma as it does theirs);
//! above the felt's and the table's chroma where the hue is near theirs, and elsewhere at most
//! half the colour's own chroma (a warm white balance greys blue winks while warming the table).

use crate::report::position::Colour;
use super::fit::EdgeMeasure;

/// Typical hues (CIE Lab, degrees) of wink plastic: blue, green, red, yellow.
const TYPICAL_HUE_DEG: [(Colour, f64); 4] = [(Colour::Blue, 290.0), (Colour::Green, 145.0), (Colour::Red, 35.0), (Colour::Yellow, 92.0)];
/// The felt's line of shades ([`ColourModel::off_felt_line`]) is taken only for a felt at least
/// this chromatic: a greyer felt's hue is its noise.
const FELT_LINE_MIN_CHROMA: f64 = 15.0;
/// A learned prototype may move this far from the typical hue.
const MAX_HUE_SHIFT_DEG: f64 = 25.0;
/// A pixel further than this from its colour's prototype hue is not that colour.
const HUE_WINDOW_DEG: f64 = 32.0;
/// Least chroma of a red or yellow wink pixel in a frame of typical saturation (CIE Lab units):
/// skin and wood lie at hues of about 40–80°, between red (30–35°) and yellow (about 90°), with
/// chromas up to about 35.
const MIN_CHROMA: f64 = 40.0;
/// Least chroma of a wink pixel at the hues of skin and wood themselves, at typical saturation.
/// (At 40, an arm's noisy or strongly saturated skin passed for red winks: over 57 frames
/// with their colours 35% more saturated, precision 98.3%; at 48, 99.3%.)
const MIN_CHROMA_SKIN: f64 = 48.0;
/// The hues (degrees) of skin and wood.
const SKIN_HUES_DEG: (f64, f64) = (38.0, 82.0);
/// Least chroma of a blue or green wink pixel: nothing skin- or wood-like lies at their hues, and
/// a wink a few pixels across, blurred, mixes its colour with the felt's (a green small wink
/// 4.6 px across at 0.3 px/mm peaks at chroma 32 on tan felt).
const MIN_CHROMA_COOL: f64 = 25.0;
/// Least chroma of a blue or green wink pixel to the faint model ([`ColourModel::faint`]), at hues
/// more than [`BACKGROUND_HUE_DEG`] from the felt's. A glossy wink's face is washed out by the
/// lamp's reflection: another renderer's glossy green winks read at chroma 16–25 on grey, dark
/// grey and tan felts (their matte neighbours 26–34), under [`MIN_CHROMA_COOL`] nearly all over.
/// Nearer the felt's hue the felt's own floor stays: on our renderer's blue-grey felt (chroma
/// 12) its texture and the shadows beside yellow winks reach chroma 20 at blue's hue, and with
/// this floor applied there too figA's midgame-01011 got two false blue winks.
const MIN_CHROMA_COOL_FAINT: f64 = 15.0;
/// Least chroma of a red or yellow pixel to the faint model, at hues off skin's and wood's
/// ([`SKIN_HUES_DEG`]) and more than [`BACKGROUND_HUE_DEG`] from the felt's: a glossy red wink
/// washed out by the lamp is pink (the sixth renderer's: C* 17–34 at hues 23–25°, L* 69–86), a
/// yellow one cream (C* 33 at 108°). Pixels taken only through this floor count only when light
/// ([`WASHED_OUT_MIN_L`]; [`ColourModel::washed_out_only`]).
const MIN_CHROMA_WARM_FAINT: f64 = 15.0;
/// Least L* of a red or yellow pixel the faint model alone takes for a wink's: washed out by a
/// lamp's reflection, which adds white. (A dark arm's shaded skin reaches red's hues at C* 13–29
/// and L* 23–39: with no such bar, figA and the varied looks gained five false red winks on arms.)
pub const WASHED_OUT_MIN_L: f64 = 60.0;
/// A wink pixel's chroma must exceed the felt's or the table's by this much where its hue is
/// within [`BACKGROUND_HUE_DEG`] of theirs.
const CHROMA_ABOVE_BACKGROUND: f64 = 10.0;
/// ... within this many degrees. (A floor from the background at every hue took a warm table's
/// chroma as the least of blue and green winks too: under a warm white balance, 32 of 57 frames'
/// blue winks were lost.)
const BACKGROUND_HUE_DEG: f64 = 60.0;
/// Further from the background's hue, the floor it sets is at most this share of the colour's
/// own chroma in the frame (the 90th percentile of its pixels').
const OWN_CHROMA_SHARE: f64 = 0.5;
/// The 90th percentile of wink plastic's chroma in a frame from a neutral camera: blue, green,
/// red, yellow (faces and shaded rims, CIE Lab units).
const TYPICAL_CHROMA: [f64; 4] = [85.0, 75.0, 85.0, 85.0];
/// A colour's pixels needed to read the frame's saturation from it.
const MIN_SATURATION_PIXELS: usize = 8;
/// The frame's saturation is taken within these bounds (a camera's saturation setting and white
/// balance move it by a third or so either way).
const SATURATION_RANGE: (f64, f64) = (0.6, 1.3);
/// Least a*b* distance between a wink pixel and the felt or the table.
const MIN_AB_DISTANCE: f64 = 12.0;
/// ... for a faint wink's pixels: a wink no other pixel of its colour stands for
/// ([`ColourModel::faint`]).
const MIN_AB_DISTANCE_FAINT: f64 = 10.0;
/// … and at least this many times the felt's own spread in a*b* (its texture and the noise).
const AB_SPREADS: f64 = 4.0;

/// A colour in CIE Lab, OpenCV's 8-bit scale converted back to L* 0–100 and signed a*, b*.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lab {
    /// Lightness, 0–100.
    pub l: f64,
    /// Green (−) to red (+).
    pub a: f64,
    /// Blue (−) to yellow (+).
    pub b: f64,
}

impl Lab {
    /// From OpenCV's 8-bit Lab bytes.
    pub fn from_cv8(v: [u8; 3]) -> Lab {
        Lab { l: v[0] as f64 * 100.0 / 255.0, a: v[1] as f64 - 128.0, b: v[2] as f64 - 128.0 }
    }
    /// Chroma: distance from grey in the a*b* plane. (A plain square root: `hypot`'s guard
    /// against overflow is not needed at Lab's scale, and it is a slow call on a hot path.)
    pub fn chroma(self) -> f64 {
        (self.a * self.a + self.b * self.b).sqrt()
    }
    /// Hue angle in degrees, 0–360.
    pub fn hue_deg(self) -> f64 {
        wrap_360(self.b.atan2(self.a).to_degrees())
    }
    /// CIE76 colour difference: the distance in Lab.
    pub fn distance(self, o: Lab) -> f64 {
        let (dl, da, db) = (self.l - o.l, self.a - o.a, self.b - o.b);
        (dl * dl + da * da + db * db).sqrt()
    }
    /// Distance in the a*b* plane.
    pub fn ab_distance(self, o: Lab) -> f64 {
        let (da, db) = (self.a - o.a, self.b - o.b);
        (da * da + db * db).sqrt()
    }
}

/// Signed difference between two hue angles, in degrees, in (−180, 180].
pub fn hue_diff(a: f64, b: f64) -> f64 {
    wrap_360(a - b + 540.0) - 180.0
}

/// `x.rem_euclid(360.0)`, the same to the last bit, without a call to `fmod` for the angles met
/// here (−360 to 1080°; subtracting 360 or 720 from a number within a factor of two of it is
/// exact).
/// It sat on the labelling's hottest path: every new colour's class needs a dozen.
#[inline]
fn wrap_360(x: f64) -> f64 {
    if (0.0..360.0).contains(&x) {
        x
    } else if (360.0..720.0).contains(&x) {
        x - 360.0
    } else if (720.0..1080.0).contains(&x) {
        x - 720.0
    } else if x > -360.0 && x < 0.0 {
        // Exactly as rem_euclid: −ε + 360 rounds to 360.0 there too.
        x + 360.0
    } else {
        x.rem_euclid(360.0)
    }
}

/// The frame's colour model.
#[derive(Debug, Clone, PartialEq)]
pub struct ColourModel {
    /// The felt's colour.
    pub felt: Lab,
    /// The table's colour round the mat, when seen.
    pub table: Option<Lab>,
    /// The hue prototype of each wink colour, in degrees.
    pub hues: [(Colour, f64); 4],
    /// How saturated the frame's colours are against typical wink plastic under a neutral camera
    /// (1: as typical), read from the winks' own most saturated pixels ([`ColourModel::learn`]);
    /// skin's and wood's chroma scale with it, and so does [`MIN_CHROMA`].
    pub saturation: f64,
    /// The 90th percentile of each colour's pixels' chroma in this frame (in the order of
    /// `hues`), when enough were seen.
    pub chroma_p90: [Option<f64>; 4],
    /// Least a*b* distance of a wink pixel from the felt and the table in this frame.
    pub min_ab_distance: f64,
    /// The felt's spread in a*b* (a robust sd), when measured.
    pub felt_spread: f64,
    /// How far each colour's outline, as its edges are found in this frame, lies outside the
    /// wink's rim, in mm (in the order of `Colour::ALL`; see `detect::edge_offsets`).
    pub edge_offset_mm: [f64; 4],
    /// What winks' rims are measured on in this frame: [`EdgeMeasure::Orthogonal`], or
    /// [`EdgeMeasure::Chroma`] where the felt beside the winks is shaded (`detect::contact_shade`).
    pub edge_measure: EdgeMeasure,
    /// The felt's and the table's hue (degrees) and chroma, worked out once
    /// ([`ColourModel::chroma_floor`] asks for them for every colour it is asked about).
    backgrounds: [Option<(f64, f64)>; 2],
    /// Whether this is the faint model ([`ColourModel::faint`]): a pixel of a wink colour's hue
    /// off the felt's line of shades is not held to the floor the felt's chroma sets
    /// ([`ColourModel::off_felt_line`]), and a blue or green one far from the felt's hue needs only
    /// [`MIN_CHROMA_COOL_FAINT`].
    is_faint: bool,
}

impl ColourModel {
    /// A model with typical hues for a frame whose felt (and table) colours are known.
    pub fn new(felt: Lab, table: Option<Lab>) -> ColourModel {
        let backgrounds = [Some(felt), table].map(|b| b.map(|b| (b.hue_deg(), b.chroma())));
        ColourModel { felt, table, hues: TYPICAL_HUE_DEG, saturation: 1.0, chroma_p90: [None; 4], min_ab_distance: MIN_AB_DISTANCE, felt_spread: 0.0, edge_offset_mm: [0.0; 4], edge_measure: EdgeMeasure::Orthogonal, backgrounds, is_faint: false }
    }

    /// Sets the felt's spread in a*b* (a robust standard deviation of its pixels' distance from
    /// its median colour): wink pixels must lie well outside it.
    pub fn with_felt_spread(mut self, spread: f64) -> ColourModel {
        self.felt_spread = spread;
        self.min_ab_distance = MIN_AB_DISTANCE.max(AB_SPREADS * spread);
        self
    }

    /// The model for faint winks: pixels nearer the felt or the table in a*b* than a wink pixel
    /// must be ([`MIN_AB_DISTANCE_FAINT`] rather than [`MIN_AB_DISTANCE`], still outside the
    /// felt's spread). A green wink on dark green felt can differ from it by 11–13 units at its
    /// middle and is lost at 12; at 10 everywhere, the blurred rims of winks of one colour
    /// touching or squopping on a felt of their hue join them into one region, read as one wink.
    /// And pixels of any wink colour's hue off the felt's line of shades, free of the floor the
    /// felt's chroma sets ([`ColourModel::off_felt_line`]); and blue or green pixels far from the
    /// felt's hue down to [`MIN_CHROMA_COOL_FAINT`].
    pub fn faint(&self) -> ColourModel {
        ColourModel { min_ab_distance: MIN_AB_DISTANCE_FAINT.max(AB_SPREADS * self.felt_spread), is_faint: true, ..self.clone() }
    }

    /// Least chroma of a wink pixel of this hue: [`MIN_CHROMA`] at the hues of skin and wood,
    /// [`MIN_CHROMA_COOL`] elsewhere, and [`CHROMA_ABOVE_BACKGROUND`] more than the felt or the
    /// table where the hue is near theirs.
    pub fn chroma_floor(&self, hue: f64) -> f64 {
        self.floor_at(hue, false)
    }

    /// [`ColourModel::chroma_floor`], where `off_felt_line` says the pixel lies off the felt's
    /// line of shades ([`ColourModel::off_felt_line`]): the felt's chroma is then no floor.
    fn floor_at(&self, hue: f64, off_felt_line: bool) -> f64 {
        self.floor_with(hue, off_felt_line, true)
    }

    /// Whether the faint model takes `c` for a red or yellow wink's only through the floor it
    /// sets for washed-out winks ([`MIN_CHROMA_WARM_FAINT`]): such a pixel counts only when light
    /// ([`WASHED_OUT_MIN_L`]; `detect::label_masks`).
    pub fn washed_out_only(&self, c: Lab) -> bool {
        let hue = c.hue_deg();
        let off = self.off_felt_line(c);
        self.is_faint && c.chroma() >= self.floor_with(hue, off, true) && c.chroma() < self.floor_with(hue, off, false)
    }

    /// [`ColourModel::floor_at`], with the faint model's floor for washed-out red and yellow
    /// winks when `washed_out` says so.
    fn floor_with(&self, hue: f64, off_felt_line: bool, washed_out: bool) -> f64 {
        let nearest = self.nearest_index(hue);
        let warm = nearest.is_some_and(|k| matches!(self.hues[k].0, Colour::Red | Colour::Yellow));
        let skin = (SKIN_HUES_DEG.0..=SKIN_HUES_DEG.1).contains(&hue);
        let mut floor = if skin { MIN_CHROMA_SKIN * self.saturation } else if warm { MIN_CHROMA * self.saturation } else { MIN_CHROMA_COOL };
        let own = nearest.and_then(|k| self.chroma_p90[k]);
        // The faint model, far from the felt's hue: a glossy wink's face washed out by the lamp.
        if self.is_faint && !skin && self.backgrounds[0].is_some_and(|(h, _)| hue_diff(hue, h).abs() > BACKGROUND_HUE_DEG) {
            if !warm {
                floor = floor.min(MIN_CHROMA_COOL_FAINT);
            } else if washed_out {
                floor = floor.min(MIN_CHROMA_WARM_FAINT);
            }
        }
        for (k, &(b_hue, b_chroma)) in self.backgrounds.iter().enumerate().filter_map(|(k, b)| b.as_ref().map(|b| (k, b))) {
            if k == 0 && off_felt_line {
                continue;
            }
            let above = b_chroma + CHROMA_ABOVE_BACKGROUND;
            if hue_diff(hue, b_hue).abs() <= BACKGROUND_HUE_DEG {
                floor = floor.max(above);
            } else {
                // Far from the background's hue, its chroma is a floor only up to half the
                // colour's own: a frame whose winks are weakly coloured (a warm white balance
                // turns blue winks grey) keeps them.
                floor = floor.max(own.map_or(0.0, |c| above.min(OWN_CHROMA_SHARE * c)));
            }
        }
        floor
    }

    /// Whether a pixel could be part of a wink (any colour): chroma above the floor for its hue,
    /// and well away from the felt and the table.
    pub fn is_candidate(&self, c: Lab) -> bool {
        self.candidate_hue(c).is_some()
    }

    /// A candidate's hue ([`ColourModel::is_candidate`]), or `None`. The cheap a*b* distances
    /// from the felt and the table are asked first (most of a frame is felt), the hue only then.
    fn candidate_hue(&self, c: Lab) -> Option<f64> {
        if c.ab_distance(self.felt) < self.min_ab_distance || self.table.is_some_and(|t| c.ab_distance(t) < self.min_ab_distance) {
            return None;
        }
        let hue = c.hue_deg();
        (c.chroma() >= self.floor_at(hue, self.off_felt_line(c))).then_some(hue)
    }

    /// How far a colour lies off the felt's line of shades in the a*b* plane (the ray from grey
    /// through the felt's colour), in CIE Lab units, signed by the side it lies on.
    pub fn felt_line_offset(&self, c: Lab) -> f64 {
        let f = self.felt;
        (c.a * f.b - c.b * f.a) / f.chroma().max(f64::EPSILON)
    }

    /// Whether a colour lies off the felt's line of shades in the a*b* plane (the ray from grey
    /// through the felt's colour) by at least the model's least distance from the felt.
    ///
    /// Shade, glare and a blur with a white line move the felt along that line (its chroma, not
    /// its hue); a wink of the felt's hue but not its shade lies off it. A green wink duller
    /// than a bright green felt (another renderer's: chroma 38 against 47, 20° of hue away,
    /// 13 units off the line) is such a wink, under the floor of the felt's chroma; so is a
    /// glossy yellow wink washed out by the lamp on green felt (chroma 33 against the felt's 36,
    /// 55° of hue away, 27 units off the line), of another colour's hue than the felt's.
    fn off_felt_line(&self, c: Lab) -> bool {
        let f = self.felt;
        self.is_faint
            && f.chroma() >= FELT_LINE_MIN_CHROMA
            && self.felt_line_offset(c).abs() >= self.min_ab_distance
            && c.a * f.a + c.b * f.b > 0.0
            && self.nearest_index(c.hue_deg()).is_some()
    }

    /// The wink colour of a pixel, or `None` when it is not wink-coloured.
    pub fn classify(&self, c: Lab) -> Option<Colour> {
        self.candidate_hue(c).and_then(|hue| self.nearest_hue(hue))
    }

    /// The colour whose prototype hue is nearest, within the window.
    pub fn nearest_hue(&self, hue: f64) -> Option<Colour> {
        self.nearest_index(hue).map(|k| self.hues[k].0)
    }

    /// The index in `hues` of the prototype nearest `hue`, within the window.
    fn nearest_index(&self, hue: f64) -> Option<usize> {
        self.hues
            .iter()
            .enumerate()
            .map(|(k, &(_, h))| (k, hue_diff(hue, h).abs()))
            .filter(|&(_, d)| d <= HUE_WINDOW_DEG)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(k, _)| k)
    }

    /// Moves each prototype to the chroma-weighted mean hue of the candidate pixels nearest to it
    /// (two rounds), within [`MAX_HUE_SHIFT_DEG`] of the typical hue.
    pub fn learn(&mut self, pixels: impl Iterator<Item = Lab> + Clone) {
        for _ in 0..2 {
            let mut sums = [(0.0f64, 0.0f64); 4];
            for c in pixels.clone().filter(|c| self.is_candidate(*c)) {
                let hue = c.hue_deg();
                let Some(k) = self.nearest_index(hue) else { continue };
                let w = c.chroma();
                sums[k].0 += w * hue_diff(hue, self.hues[k].1);
                sums[k].1 += w;
            }
            for (k, (s, w)) in sums.iter().enumerate() {
                if *w > 0.0 {
                    let typical = TYPICAL_HUE_DEG[k].1;
                    let moved = (self.hues[k].1 + s / w).rem_euclid(360.0);
                    let shift = hue_diff(moved, typical).clamp(-MAX_HUE_SHIFT_DEG, MAX_HUE_SHIFT_DEG);
                    self.hues[k].1 = (typical + shift).rem_euclid(360.0);
                }
            }
        }
        // The frame's saturation: for each colour, the 90th percentile of its pixels' chroma
        // against typical plastic's, the median over the colours seen (skin or wood mistaken for
        // red or yellow moves one colour's, not the median).
        let mut chroma: [Vec<f64>; 4] = Default::default();
        for c in pixels.filter(|c| self.is_candidate(*c)) {
            if let Some(k) = self.nearest_index(c.hue_deg()) {
                chroma[k].push(c.chroma());
            }
        }
        let mut ratios = Vec::new();
        let mut p90 = [None; 4];
        for (k, c) in chroma.iter_mut().enumerate() {
            if c.len() >= MIN_SATURATION_PIXELS {
                let at = (0.9 * (c.len() - 1) as f64).round() as usize;
                c.select_nth_unstable_by(at, f64::total_cmp);
                ratios.push(c[at] / TYPICAL_CHROMA[k]);
                p90[k] = Some(c[at]);
            }
        }
        self.chroma_p90 = p90;
        if !ratios.is_empty() {
            ratios.sort_by(f64::total_cmp);
            let mid = ratios.len() / 2;
            let median = if ratios.len() % 2 == 1 { ratios[mid] } else { 0.5 * (ratios[mid - 1] + ratios[mid]) };
            self.saturation = median.clamp(SATURATION_RANGE.0, SATURATION_RANGE.1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab(l: f64, a: f64, b: f64) -> Lab {
        Lab { l, a, b }
    }

    #[test]
    fn wrapping_angles_matches_rem_euclid_to_the_bit() {
        let edges = [0.0, -0.0, 360.0, -360.0, 720.0, 1080.0, 359.99999999999994, -1e-300, 1e-300, 719.9999999999999, 180.0, 540.0];
        let sweep = (0..200_000).map(|i| -400.0 + i as f64 * 0.007_3);
        for x in sweep.chain(edges) {
            assert_eq!(wrap_360(x).to_bits(), x.rem_euclid(360.0).to_bits(), "{x}");
        }
        // hue_diff over every pair of a grid of hues.
        for a in (0..720).map(|i| i as f64 * 0.5 + 0.123) {
            for b in (0..72).map(|i| i as f64 * 5.0 + 0.0071) {
                assert_eq!(hue_diff(a, b).to_bits(), ((a - b + 540.0).rem_euclid(360.0) - 180.0).to_bits());
            }
        }
    }

    #[test]
    fn wink_plastic_is_told_from_felt_skin_and_table() {
        // Green felt, brown table (CIE Lab of typical sRGB colours).
        let m = ColourModel::new(lab(46.0, -27.1, 19.6), Some(lab(37.7, 12.9, 27.2)));
        assert_eq!(m.classify(lab(54.5, -51.1, 37.9)), Some(Colour::Green), "a green wink on green felt");
        assert_eq!(m.classify(lab(43.3, 63.2, 42.7)), Some(Colour::Red));
        assert_eq!(m.classify(lab(81.3, -2.5, 78.4)), Some(Colour::Yellow));
        assert_eq!(m.classify(lab(34.8, 32.2, -66.5)), Some(Colour::Blue));
        assert_eq!(m.classify(lab(61.6, 20.7, 28.2)), None, "skin");
        assert_eq!(m.classify(lab(46.0, -27.1, 19.6)), None, "the felt itself");
        assert_eq!(m.classify(lab(95.0, 0.0, 2.0)), None, "glare");
    }

    #[test]
    fn a_green_wink_barely_more_saturated_than_green_felt_is_green_to_the_faint_model() {
        // Dark green felt and the middle of a small green wink on it, as another renderer drew
        // them (sampled from its JPEG): 11 a*b* units apart, 12 chroma units more saturated.
        let m = ColourModel::new(lab(39.2, -32.0, 20.0), Some(lab(71.0, 2.0, 19.0))).with_felt_spread(0.85);
        assert_eq!(m.classify(lab(41.2, -41.0, 27.0)), None, "not by the strict model");
        let faint = m.faint();
        assert_eq!(faint.classify(lab(41.2, -41.0, 27.0)), Some(Colour::Green));
        assert_eq!(faint.classify(lab(39.0, -34.0, 22.0)), None, "felt a little off its median");
        assert_eq!(faint.classify(lab(33.0, -25.0, 15.0)), None, "the felt in shade");
        // A noisy felt's own spread still rules.
        let noisy = ColourModel::new(lab(39.2, -32.0, 20.0), None).with_felt_spread(3.5).faint();
        assert_eq!(noisy.classify(lab(41.2, -41.0, 27.0)), None);
    }

    #[test]
    fn a_green_wink_duller_than_green_felt_is_green_to_the_faint_model_off_the_felts_line() {
        // Bright green felt and the face of a green wink on it, as another renderer drew them
        // (sampled from its JPEG): 20° of hue apart, the wink less saturated.
        let felt = at(49.0, 137.0, 49.0);
        let m = ColourModel::new(felt, Some(lab(20.0, 2.0, 3.0))).with_felt_spread(2.7);
        let wink = at(60.0, 157.0, 38.0);
        assert!(m.felt_line_offset(wink).abs() > 12.0, "{}", m.felt_line_offset(wink));
        assert_eq!(m.classify(wink), None, "not by the strict model: under the felt's chroma");
        let faint = m.faint();
        assert_eq!(faint.classify(wink), Some(Colour::Green));
        // Shades of the felt lie on its line: darker, greyer, or a little noisy.
        assert_eq!(faint.classify(at(30.0, 137.0, 30.0)), None, "the felt in shade");
        assert_eq!(faint.classify(at(70.0, 139.0, 20.0)), None, "the felt blurred with a white line");
        assert_eq!(faint.classify(at(49.0, 141.0, 47.0)), None, "the felt's noise");
        // A pixel nearer yellow's hue than green's (a yellow wink's rim blurred into the felt) is
        // not the felt's colour: yellow, if anything (such a rim joins its wink's region, which the
        // model sees, and faint pixels beside another colour's are left out: `detect`).
        assert_eq!(faint.classify(at(60.0, 112.0, 45.0)), Some(Colour::Yellow), "yellow blurred into the felt");
        // A noisy felt's own spread still rules.
        let noisy = ColourModel::new(felt, None).with_felt_spread(4.0).faint();
        assert_eq!(noisy.classify(wink), None);
    }

    #[test]
    fn a_washed_out_yellow_wink_on_green_felt_is_yellow_to_the_faint_model() {
        // Green felt and the face of a glossy yellow wink on it, as another renderer drew them
        // (sampled from its JPEG; that frame's winks at 0.71 of typical plastic's chroma): chroma
        // 33 against the felt's 36, 55° of hue away, under the floor the felt sets near its hue.
        let mut m = ColourModel::new(lab(44.3, -28.0, 22.0), Some(lab(30.0, 10.0, 20.0))).with_felt_spread(1.5);
        m.saturation = 0.71;
        let washed = lab(76.7, 2.0, 33.0);
        assert_eq!(m.classify(washed), None, "not by the strict model");
        assert_eq!(m.faint().classify(washed), Some(Colour::Yellow));
        // The felt's shades and noise stay felt.
        assert_eq!(m.faint().classify(lab(60.0, -20.0, 16.0)), None, "the felt lit");
        assert_eq!(m.faint().classify(lab(44.0, -30.0, 26.0)), None, "the felt's noise");
    }

    #[test]
    fn a_washed_out_green_wink_is_green_to_the_faint_model_far_from_the_felts_hue_only() {
        // Grey felt, and the face of a glossy green wink on it as another renderer drew it
        // (sampled from its JPEG): chroma 16, the lamp's reflection over most of it.
        let grey = ColourModel::new(lab(29.0, 3.0, -4.0), Some(lab(60.0, 4.0, 12.0))).with_felt_spread(1.0);
        let washed = lab(37.0, -15.0, 5.0);
        assert_eq!(grey.classify(washed), None, "not by the strict model");
        assert_eq!(grey.faint().classify(washed), Some(Colour::Green));
        assert_eq!(grey.faint().classify(at(40.0, 150.0, 13.0)), None, "under the faint floor");
        // Blue-grey felt (chroma 12 at 270°): its texture and shadows at blue's hue keep the
        // felt's own floor, far hues do not.
        let blue_grey = ColourModel::new(at(44.0, 270.0, 12.0), None).with_felt_spread(1.5);
        assert_eq!(blue_grey.faint().classify(at(44.0, 285.0, 20.0)), None, "the felt's texture");
        assert_eq!(blue_grey.faint().classify(at(44.0, 150.0, 20.0)), Some(Colour::Green));
        // Warm hues keep their floors (skin, wood).
        assert_eq!(grey.faint().classify(at(45.0, 30.0, 20.0)), None, "a red this pale");
    }

    #[test]
    fn a_faint_green_blur_is_green_where_skin_of_its_chroma_is_not_red() {
        // Tan felt; the middle of a green small wink 4.6 px across, half mixed with the felt
        // (sRGB 120,175,117); skin, as chromatic.
        let m = ColourModel::new(lab(75.0, 6.0, 17.0), None);
        assert_eq!(m.classify(lab(67.0, -25.0, 20.0)), Some(Colour::Green));
        assert_eq!(m.classify(lab(61.6, 20.7, 28.2)), None, "skin");
        assert_eq!(m.classify(lab(67.0, 25.0, 20.0)), None, "a warm hue at the same chroma");
    }

    #[test]
    fn prototypes_follow_the_frame_within_bounds() {
        let mut m = ColourModel::new(lab(50.0, 0.0, 0.0), None);
        // Reds lit by a warm lamp: hue 45° rather than 35°.
        let reds: Vec<Lab> = (0..50).map(|i| lab(45.0, 60.0 * 45f64.to_radians().cos(), 60.0 * 45f64.to_radians().sin() + (i % 3) as f64 * 0.1)).collect();
        m.learn(reds.iter().copied());
        let red = m.hues.iter().find(|(c, _)| *c == Colour::Red).map(|(_, h)| *h);
        assert!((red.unwrap_or(0.0) - 45.0).abs() < 1.0, "{red:?}");
        let blue = m.hues.iter().find(|(c, _)| *c == Colour::Blue).map(|(_, h)| *h);
        assert_eq!(blue, Some(290.0), "no blue pixels: the typical hue stays");
    }

    fn at(l: f64, hue_deg: f64, chroma: f64) -> Lab {
        lab(l, chroma * hue_deg.to_radians().cos(), chroma * hue_deg.to_radians().sin())
    }

    #[test]
    fn a_warm_table_does_not_raise_the_floor_of_blue_and_green() {
        // Grey felt and a strongly warm table (wood under a warm white balance: chroma 43 at 64°).
        let m = ColourModel::new(lab(74.0, 3.0, 18.0), Some(lab(61.0, 19.0, 39.0)));
        // A blue wink greyed by the same white balance.
        assert_eq!(m.classify(at(40.0, 292.0, 45.0)), Some(Colour::Blue));
        assert_eq!(m.classify(at(55.0, 142.0, 35.0)), Some(Colour::Green));
        // Near the table's hue its chroma is still the floor.
        assert_eq!(m.classify(at(60.0, 70.0, 50.0)), None, "wood");
    }

    #[test]
    fn the_red_and_yellow_floor_follows_the_frames_saturation() {
        // A desaturated camera: reds and blues at about 55% of typical plastic's chroma.
        let pixels: Vec<Lab> = (0..40).map(|i| at(45.0, 32.0, 40.0 + (i % 10) as f64)).chain((0..40).map(|i| at(40.0, 292.0, 40.0 + (i % 10) as f64))).collect();
        let faint_red = at(45.0, 32.0, 33.0);
        let typical = ColourModel::new(lab(50.0, 0.0, 0.0), None);
        assert_eq!(typical.classify(faint_red), None);
        let mut m = typical.clone();
        m.learn(pixels.iter().copied());
        assert!((0.55..0.7).contains(&m.saturation), "{}", m.saturation);
        assert_eq!(m.classify(faint_red), Some(Colour::Red));
        // Skin, desaturated as much, stays out.
        assert_eq!(m.classify(at(60.0, 50.0, 22.0)), None, "skin");
    }

    #[test]
    fn strongly_saturated_skin_is_not_a_red_wink() {
        // Skin at chroma 42 (a camera's saturation turned up): above the red floor elsewhere,
        // under the floor at skin's own hues.
        let m = ColourModel::new(lab(50.0, 0.0, 0.0), None);
        assert_eq!(m.classify(at(60.0, 48.0, 42.0)), None);
        assert_eq!(m.classify(at(45.0, 33.0, 42.0)), Some(Colour::Red));
    }
}
