//! The colour model: which pixels are wink-coloured, and which of the four colours, learned from
//! the frame itself.
//!
//! Winks are strongly coloured plastic; mats, tables, baselines, skin, shadows and glare are not,
//! or not in the same way. A pixel is a wink candidate when its chroma (distance from grey in the
//! CIE a*b* plane) is well above the felt's and the table's, and it lies well away from both in
//! a*b*; its colour is the nearest of four hue prototypes. The prototypes start at the hues of
//! typical blue, green, red and yellow plastic and are then moved to the mean hue of the frame's
//! own candidate pixels near each, so a yellowish light or an odd batch of winks is followed.

use crate::report::position::Colour;

/// Typical hues (CIE Lab, degrees) of wink plastic: blue, green, red, yellow.
const TYPICAL_HUE_DEG: [(Colour, f64); 4] = [(Colour::Blue, 290.0), (Colour::Green, 145.0), (Colour::Red, 35.0), (Colour::Yellow, 92.0)];
/// A learned prototype may move this far from the typical hue.
const MAX_HUE_SHIFT_DEG: f64 = 25.0;
/// A pixel further than this from its colour's prototype hue is not that colour.
const HUE_WINDOW_DEG: f64 = 32.0;
/// Least chroma of a red or yellow wink pixel, whatever the mat (CIE Lab units): skin and wood
/// lie at hues of 40–80°, between red and yellow, with chromas up to about 35.
const MIN_CHROMA: f64 = 40.0;
/// Least chroma of a blue or green wink pixel, whatever the mat: nothing skin- or wood-like lies
/// at their hues, and a wink a few pixels across, blurred, mixes its colour with the felt's (a
/// green small wink 4.6 px across at 0.3 px/mm peaks at chroma 32 on tan felt).
const MIN_CHROMA_COOL: f64 = 25.0;
/// A wink pixel's chroma must exceed the background's by this much.
const CHROMA_ABOVE_BACKGROUND: f64 = 10.0;
/// Least a*b* distance between a wink pixel and the felt or the table.
const MIN_AB_DISTANCE: f64 = 12.0;
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
        self.b.atan2(self.a).to_degrees().rem_euclid(360.0)
    }
    /// Distance in the a*b* plane.
    pub fn ab_distance(self, o: Lab) -> f64 {
        let (da, db) = (self.a - o.a, self.b - o.b);
        (da * da + db * db).sqrt()
    }
}

/// Signed difference between two hue angles, in degrees, in (−180, 180].
pub fn hue_diff(a: f64, b: f64) -> f64 {
    (a - b + 540.0).rem_euclid(360.0) - 180.0
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
    /// Least chroma of a red or yellow wink pixel in this frame.
    pub min_chroma: f64,
    /// Least chroma of a blue or green wink pixel in this frame.
    pub min_chroma_cool: f64,
    /// Least a*b* distance of a wink pixel from the felt and the table in this frame.
    pub min_ab_distance: f64,
}

impl ColourModel {
    /// A model with typical hues for a frame whose felt (and table) colours are known.
    pub fn new(felt: Lab, table: Option<Lab>) -> ColourModel {
        let background = felt.chroma().max(table.map_or(0.0, |t| t.chroma()));
        let floor = background + CHROMA_ABOVE_BACKGROUND;
        ColourModel { felt, table, hues: TYPICAL_HUE_DEG, min_chroma: MIN_CHROMA.max(floor), min_chroma_cool: MIN_CHROMA_COOL.max(floor), min_ab_distance: MIN_AB_DISTANCE }
    }

    /// Sets the felt's spread in a*b* (a robust standard deviation of its pixels' distance from
    /// its median colour): wink pixels must lie well outside it.
    pub fn with_felt_spread(mut self, spread: f64) -> ColourModel {
        self.min_ab_distance = MIN_AB_DISTANCE.max(AB_SPREADS * spread);
        self
    }

    /// Least chroma of a pixel of `colour`.
    fn chroma_floor(&self, colour: Colour) -> f64 {
        match colour {
            Colour::Blue | Colour::Green => self.min_chroma_cool,
            Colour::Red | Colour::Yellow => self.min_chroma,
        }
    }

    /// Whether a pixel could be part of a wink (any colour): chroma enough for the least demanding
    /// colour, and well away from the felt and the table.
    pub fn is_candidate(&self, c: Lab) -> bool {
        c.chroma() >= self.min_chroma.min(self.min_chroma_cool) && c.ab_distance(self.felt) >= self.min_ab_distance && self.table.is_none_or(|t| c.ab_distance(t) >= self.min_ab_distance)
    }

    /// The wink colour of a pixel, or `None` when it is not wink-coloured.
    pub fn classify(&self, c: Lab) -> Option<Colour> {
        if !self.is_candidate(c) {
            return None;
        }
        self.nearest_hue(c.hue_deg()).filter(|&colour| c.chroma() >= self.chroma_floor(colour))
    }

    /// The colour whose prototype hue is nearest, within the window.
    pub fn nearest_hue(&self, hue: f64) -> Option<Colour> {
        self.hues
            .iter()
            .map(|&(colour, h)| (colour, hue_diff(hue, h).abs()))
            .filter(|&(_, d)| d <= HUE_WINDOW_DEG)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(c, _)| c)
    }

    /// Moves each prototype to the chroma-weighted mean hue of the candidate pixels nearest to it
    /// (two rounds), within [`MAX_HUE_SHIFT_DEG`] of the typical hue.
    pub fn learn(&mut self, pixels: impl Iterator<Item = Lab> + Clone) {
        for _ in 0..2 {
            let mut sums = [(0.0f64, 0.0f64); 4];
            for c in pixels.clone().filter(|c| self.is_candidate(*c)) {
                let hue = c.hue_deg();
                let Some(k) = self.hues.iter().enumerate().map(|(k, &(_, h))| (k, hue_diff(hue, h).abs())).filter(|&(_, d)| d <= HUE_WINDOW_DEG).min_by(|a, b| a.1.total_cmp(&b.1)).map(|(k, _)| k) else {
                    continue;
                };
                if c.chroma() < self.chroma_floor(self.hues[k].0) {
                    continue;
                }
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab(l: f64, a: f64, b: f64) -> Lab {
        Lab { l, a, b }
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
}
