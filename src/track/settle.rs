//! Motion versus rest on the mat, cheaply enough to run on every frame of 1080p footage.
//!
//! Each frame is shrunk (OpenCV's area average) to cells of a few millimetres on the mat and kept
//! in colour (a green wink on green felt hardly shows in grey). Two frames are compared after
//! normalising each channel's global gain and offset (the median ratio, then the median
//! difference), so the camera's exposure drifting is not motion; a cell changes when its residual
//! exceeds a threshold set from the residuals' own median (sensor grain and JPEG noise), and
//! something moves when one connected region of changed cells covers most of a small wink's area
//! (noise that passes the threshold is scattered in ones and twos).
//! Only cells on the mat (plus a margin where off winks land) count once a calibration is known.
//!
//! The state machine ([`SettleDetector`]): every frame is compared with the *anchor*, the first
//! frame of the current still period, so slow movement (a wink creeping to a stop) accumulates
//! until it counts; a cell counts as changed only when it also changed in the previous frame's
//! comparison (what moved stays changed, noise comes and goes), which costs one frame of delay. Motion restarts the still period (and the first motion after a settle is
//! reported); a still period as long as the settle time makes the frame a *candidate*.
//!
//! A candidate is not yet a settled position: a hand resting over the mat is still too. The rule
//! (see [`Presence`]): **a settled scene differs from the last settled one only in wink-sized
//! islands** — a shot moves a few winks (or a pile), and each changed region, old place or new, is
//! at most a pile's area; a hand, arm or squidger-holding fist is several times larger and, coming
//! from outside the mat, one connected region. With no earlier settled frame to compare with (the
//! first settle, or after the camera moved), the scene is checked against the felt instead: no
//! region of non-felt chromaticity larger than a pile may lie on the mat (skin and sleeves differ
//! from felt in chromaticity far more than vignetting or shadows, which are nearly grey). The
//! felt test cannot see a hand whose colour matches the felt (skin over beige felt); the
//! comparison with the last settled frame can, so only a first settle is exposed to that.

use crate::calibrate::Calibration;
use crate::geometry::PixelPoint;
use opencv::core::{Mat, Size};
use opencv::prelude::*;

/// Tunables of settle detection, with their units.
#[derive(Debug, Clone, PartialEq)]
pub struct SettleOptions {
    /// How long the mat must be still before a position counts as settled, in seconds.
    pub settle_s: f64,
    /// Width the frame is shrunk to, about, in cells (the shrink factor is a whole number).
    pub target_width: u32,
    /// Least residual that can count as a change, in 8-bit levels.
    pub min_level: f32,
    /// Threshold as a multiple of the residuals' median (the noise scale).
    pub noise_factor: f32,
    /// Least connected changed area that counts as motion, in mm² of mat (a small wink covers
    /// about 200 mm²; a wink moving by half its diameter changes about that much).
    pub motion_mm2: f64,
    /// Largest changed region, against the last settled frame, that can be a shot's doing
    /// (winks or a pile moved), in mm².
    pub island_max_mm2: f64,
    /// Least non-felt region that is taken for a hand or arm, in mm² (a palm is about 8000 mm²;
    /// a pile of four winks with its shadow under 2500 mm²).
    pub foreign_min_mm2: f64,
    /// After this long still, in seconds, large differences from the last settled frame with
    /// nothing foreign on the felt are accepted (the light changed, or many winks moved).
    pub stale_reference_s: f64,
}

impl Default for SettleOptions {
    fn default() -> Self {
        SettleOptions {
            settle_s: 0.5,
            target_width: 480,
            min_level: 12.0,
            noise_factor: 5.0,
            motion_mm2: 160.0,
            island_max_mm2: 4000.0,
            foreign_min_mm2: 6000.0,
            stale_reference_s: 5.0,
        }
    }
}

/// Margin round the mat that is watched too, in mm: off winks land up to a few centimetres beyond
/// its edge, and hands come in over it.
const WATCH_MARGIN_MM: f64 = 60.0;
/// Inset from the mat's edge of the region whose colour is checked against the felt, in mm (the
/// edge itself blends with the table).
const FELT_INSET_MM: f64 = 15.0;
/// Largest difference in chromaticity (each channel's share of the sum) that is still felt.
const FELT_CHROMA: f32 = 0.05;
/// Least connected changed cells that can count as motion, however coarse the cells.
const MIN_MOTION_CELLS: usize = 2;
/// Least shrink factor (pixels per cell along each axis).
const MIN_FACTOR: i32 = 2;
/// Most cells sampled for a median.
const MEDIAN_SAMPLES: usize = 8192;

/// A frame shrunk to cells, 8-bit BGR, row-major.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SmallFrame {
    /// Width, in cells.
    pub width: usize,
    /// Height, in cells.
    pub height: usize,
    /// B, G, R per cell.
    pub bgr: Vec<u8>,
}

/// Shrinks frames by a whole factor with OpenCV's area average, reusing its buffers.
#[derive(Debug)]
pub struct Shrinker {
    factor: i32,
    tmp: Mat,
}

impl Shrinker {
    /// A shrinker for frames `width` pixels wide, to about `target_width` cells.
    pub fn new(width: u32, target_width: u32) -> Shrinker {
        // At least 2×2 pixels a cell: single pixels carry JPEG ringing at every edge.
        let factor = ((width as f64 / target_width.max(1) as f64).round() as i32).max(MIN_FACTOR);
        Shrinker { factor, tmp: Mat::default() }
    }

    /// Pixels per cell, along each axis.
    pub fn factor(&self) -> i32 {
        self.factor
    }

    /// Shrinks an 8-bit BGR frame into `out`.
    pub fn shrink(&mut self, bgr: &Mat, out: &mut SmallFrame) -> opencv::Result<()> {
        self.shrink_reduced(bgr, 1, (bgr.cols().max(0) as u32, bgr.rows().max(0) as u32), out)
    }

    /// Whether a frame decoded at 1/`reduced` size can be shrunk to the same cells as a full one
    /// (the reduction divides the cell).
    pub fn accepts(&self, reduced: u32) -> bool {
        reduced >= 1 && self.factor % reduced as i32 == 0
    }

    /// The largest JPEG decoding reduction (1, 2, 4 or 8) that divides the cell: frames decoded
    /// at that fraction shrink to the same cells at a fraction of the cost.
    pub fn decode_reduction(&self) -> u32 {
        [8u32, 4, 2].into_iter().find(|&r| self.accepts(r)).unwrap_or(1)
    }

    /// Shrinks an 8-bit BGR frame that was decoded at 1/`reduced` of `full_size` (width, height
    /// in pixels) into `out`: the same cells as the full-size frame would give, as long as
    /// [`Shrinker::accepts`] the reduction.
    pub fn shrink_reduced(&mut self, bgr: &Mat, reduced: u32, full_size: (u32, u32), out: &mut SmallFrame) -> opencv::Result<()> {
        if !self.accepts(reduced) {
            return Err(opencv::Error::new(opencv::core::StsBadArg, format!("a frame decoded at 1/{reduced} size does not fit cells of {} px", self.factor)));
        }
        // Cells from the full size, so a stream mixing full and reduced frames keeps one grid.
        let (w, h) = (full_size.0 as i32 / self.factor, full_size.1 as i32 / self.factor);
        let step = self.factor / reduced as i32;
        if w * step > bgr.cols() || h * step > bgr.rows() {
            return Err(opencv::Error::new(opencv::core::StsBadArg, format!("a {}×{} frame is smaller than 1/{reduced} of {}×{}", bgr.cols(), bgr.rows(), full_size.0, full_size.1)));
        }
        // Cropped to a whole number of cells so the area average takes OpenCV's fast path.
        let roi = Mat::roi(bgr, opencv::core::Rect::new(0, 0, w * step, h * step))?;
        if step == 1 {
            roi.copy_to(&mut self.tmp)?;
        } else {
            opencv::imgproc::resize(&roi, &mut self.tmp, Size::new(w, h), 0.0, 0.0, opencv::imgproc::INTER_AREA)?;
        }
        let src = &self.tmp;
        out.width = w as usize;
        out.height = h as usize;
        out.bgr.clear();
        if src.is_continuous() {
            out.bgr.extend_from_slice(src.data_bytes()?);
        } else {
            for r in 0..h {
                out.bgr.extend_from_slice(src.row(r)?.data_bytes()?);
            }
        }
        Ok(())
    }
}

/// Which cells are watched, which are felt, and how much mat a cell covers.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    /// Width, in cells.
    pub width: usize,
    /// Height, in cells.
    pub height: usize,
    /// Cells on the mat or within [`WATCH_MARGIN_MM`] of it (all cells when no calibration).
    pub watch: Vec<bool>,
    /// Cells well inside the mat, where the felt shows (none when no calibration).
    pub felt: Vec<bool>,
    /// Mat area a cell covers, in mm² (an average over the mat).
    pub cell_mm2: f64,
    /// Indices of the watched cells (kept so each comparison need not find them again).
    watched: Vec<usize>,
}

impl Region {
    /// Every cell watched, no felt known; the mat assumed to span 90% of the frame's width.
    pub fn whole(width: usize, height: usize, factor: i32, frame_width: u32) -> Region {
        let mm_per_px = crate::geometry::MatSpec::STANDARD.length_mm / (0.9 * frame_width.max(1) as f64);
        let cell_mm = mm_per_px * factor as f64;
        Region { width, height, watch: vec![true; width * height], felt: vec![false; width * height], cell_mm2: cell_mm * cell_mm, watched: (0..width * height).collect() }
    }

    /// The mat of a calibration, for cells of `factor` pixels.
    pub fn from_calibration(cal: &Calibration, width: usize, height: usize, factor: i32) -> Region {
        let (hl, hw) = (cal.mat.length_mm / 2.0, cal.mat.width_mm / 2.0);
        let mut watch = vec![false; width * height];
        let mut felt = vec![false; width * height];
        let mut on_mat = 0usize;
        for y in 0..height {
            for x in 0..width {
                let px = PixelPoint::new((x as f64 + 0.5) * factor as f64 - 0.5, (y as f64 + 0.5) * factor as f64 - 0.5);
                let Some(m) = cal.image_to_mat(px) else { continue };
                let i = y * width + x;
                watch[i] = m.x.abs() <= hl + WATCH_MARGIN_MM && m.y.abs() <= hw + WATCH_MARGIN_MM;
                felt[i] = m.x.abs() <= hl - FELT_INSET_MM && m.y.abs() <= hw - FELT_INSET_MM;
                if m.x.abs() <= hl && m.y.abs() <= hw {
                    on_mat += 1;
                }
            }
        }
        if on_mat < 16 {
            let frame_width = (width as i32 * factor) as u32;
            return Region::whole(width, height, factor, frame_width);
        }
        let cell_mm2 = cal.mat.length_mm * cal.mat.width_mm / on_mat as f64;
        let watched = (0..width * height).filter(|&i| watch[i]).collect();
        Region { width, height, watch, felt, cell_mm2, watched }
    }

    fn cells(&self, mm2: f64) -> usize {
        (mm2 / self.cell_mm2).ceil().max(1.0) as usize
    }
}

/// The cells that changed between two frames, after normalising gain and offset.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Changed cells (row-major, as the region).
    pub changed: Vec<bool>,
    /// How many.
    pub count: usize,
    /// The threshold used, in levels.
    pub threshold: f32,
    /// Per channel (B, G, R): the gain taking the first frame to the second.
    pub gain: [f32; 3],
}

impl Change {
    /// Whether no cell changed round a point of the frame: the cells within `radius_px` of
    /// `centre` (frame pixels) and one more all round (a wink's shadow and blur), for cells of
    /// `factor` pixels in a grid `width` × `height`. `false` when the point is off the grid.
    pub fn clear_around(&self, centre: PixelPoint, radius_px: f64, factor: i32, width: usize, height: usize) -> bool {
        let f = factor.max(1) as f64;
        let reach = (radius_px / f).ceil() as i64 + 1;
        let (cx, cy) = (((centre.x + 0.5) / f).floor() as i64, ((centre.y + 0.5) / f).floor() as i64);
        let mut inside = 0;
        for y in (cy - reach).max(0)..=(cy + reach).min(height as i64 - 1) {
            for x in (cx - reach).max(0)..=(cx + reach).min(width as i64 - 1) {
                inside += 1;
                if self.changed.get(y as usize * width + x as usize).copied().unwrap_or(true) {
                    return false;
                }
            }
        }
        inside > 0
    }
}

/// Median of `v` (reordered), 0 when empty.
fn median(v: &mut [f32]) -> f32 {
    if v.is_empty() {
        return 0.0;
    }
    let k = v.len() / 2;
    *v.select_nth_unstable_by(k, f32::total_cmp).1
}

/// Compares two shrunk frames over the watched cells: per channel the gain (median ratio) and
/// offset (median difference after the gain) that best explain `b` from `a`, then the residual's
/// largest channel per cell, thresholded at `noise_factor` × its median (at least `min_level`).
pub fn compare(a: &SmallFrame, b: &SmallFrame, region: &Region, opts: &SettleOptions) -> Change {
    let n = a.width * a.height;
    if b.width * b.height != n || region.watch.len() != n || region.watched.last().is_some_and(|&i| i >= n) {
        return Change { changed: vec![true; n], count: n, threshold: 0.0, gain: [1.0; 3] };
    }
    let watched = &region.watched;
    let stride = (watched.len() / MEDIAN_SAMPLES).max(1);
    let mut gain = [1.0f32; 3];
    let mut offset = [0.0f32; 3];
    let mut buf: Vec<f32> = Vec::with_capacity(MEDIAN_SAMPLES + 1);
    for c in 0..3 {
        buf.clear();
        buf.extend(watched.iter().step_by(stride).filter_map(|&i| {
            let (x, y) = (a.bgr[3 * i + c] as f32, b.bgr[3 * i + c] as f32);
            // Ratios of dark or clipped cells say little about the gain.
            (x > 16.0 && x < 250.0 && y < 250.0).then(|| y / x)
        }));
        let g = median(&mut buf);
        gain[c] = if g > 0.2 && g < 5.0 { g } else { 1.0 };
        buf.clear();
        buf.extend(watched.iter().step_by(stride).map(|&i| b.bgr[3 * i + c] as f32 - gain[c] * a.bgr[3 * i + c] as f32));
        offset[c] = median(&mut buf);
    }
    let residual: Vec<f32> = watched
        .iter()
        .map(|&i| {
            let mut r = 0.0f32;
            for c in 0..3 {
                r = r.max((b.bgr[3 * i + c] as f32 - gain[c] * a.bgr[3 * i + c] as f32 - offset[c]).abs());
            }
            r
        })
        .collect();
    buf.clear();
    buf.extend(residual.iter().step_by(stride).copied());
    let noise = median(&mut buf);
    let threshold = (opts.noise_factor * noise).max(opts.min_level);
    let mut changed = vec![false; n];
    let mut count = 0;
    for (&i, &r) in watched.iter().zip(&residual) {
        if r > threshold {
            changed[i] = true;
            count += 1;
        }
    }
    Change { changed, count, threshold, gain }
}

/// Sizes (in cells) of the 8-connected regions of `mask`, largest first.
pub fn component_sizes(mask: &[bool], width: usize, height: usize) -> Vec<usize> {
    let mut seen = vec![false; mask.len()];
    let mut sizes = Vec::new();
    let mut stack = Vec::new();
    for start in 0..mask.len().min(width * height) {
        if !mask[start] || seen[start] {
            continue;
        }
        seen[start] = true;
        stack.push(start);
        let mut size = 0;
        while let Some(i) = stack.pop() {
            size += 1;
            let (x, y) = ((i % width) as isize, (i / width) as isize);
            for dy in -1..=1isize {
                for dx in -1..=1isize {
                    let (nx, ny) = (x + dx, y + dy);
                    if nx < 0 || ny < 0 || nx >= width as isize || ny >= height as isize {
                        continue;
                    }
                    let j = ny as usize * width + nx as usize;
                    if mask[j] && !seen[j] {
                        seen[j] = true;
                        stack.push(j);
                    }
                }
            }
        }
        sizes.push(size);
    }
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes
}

/// A 3×3 opening (erode, then dilate): removes lines and specks under three cells wide (painted
/// baselines, texture) and keeps anything as fat as a wink.
fn open3(mask: &[bool], width: usize, height: usize) -> Vec<bool> {
    let get = |m: &[bool], x: isize, y: isize| x >= 0 && y >= 0 && (x as usize) < width && (y as usize) < height && m[y as usize * width + x as usize];
    let mut eroded = vec![false; mask.len()];
    for y in 0..height as isize {
        for x in 0..width as isize {
            eroded[y as usize * width + x as usize] = (-1..=1).all(|dy| (-1..=1).all(|dx| get(mask, x + dx, y + dy)));
        }
    }
    let mut out = vec![false; mask.len()];
    for y in 0..height as isize {
        for x in 0..width as isize {
            out[y as usize * width + x as usize] = (-1..=1).any(|dy| (-1..=1).any(|dx| get(&eroded, x + dx, y + dy)));
        }
    }
    out
}

/// Whether something other than winks is on the mat.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Presence {
    /// Only wink-sized changes (against the last settled frame) or nothing foreign on the felt.
    Clear,
    /// A region too large to be winks changed since the last settled frame, in mm².
    LargeChange {
        /// Its area, in mm².
        area_mm2: f64,
    },
    /// A region of non-felt colour on the mat too large to be winks, in mm².
    Foreign {
        /// Its area, in mm².
        area_mm2: f64,
    },
}

/// Checks a still frame against the last settled one: every changed region must be small enough
/// to be winks (or a pile) that the shot moved.
pub fn islands_only(reference: &SmallFrame, current: &SmallFrame, region: &Region, opts: &SettleOptions) -> Presence {
    let change = compare(reference, current, region, opts);
    let largest = component_sizes(&change.changed, region.width, region.height).first().copied().unwrap_or(0);
    if largest > region.cells(opts.island_max_mm2) {
        Presence::LargeChange { area_mm2: largest as f64 * region.cell_mm2 }
    } else {
        Presence::Clear
    }
}

/// Checks a still frame against the felt: no region of non-felt chromaticity on the mat larger
/// than [`SettleOptions::foreign_min_mm2`]. Always clear when the region knows no felt.
pub fn nothing_foreign(current: &SmallFrame, region: &Region, opts: &SettleOptions) -> Presence {
    let n = current.width * current.height;
    if region.felt.len() != n {
        return Presence::Clear;
    }
    let chroma = |i: usize| -> [f32; 3] {
        let p = &current.bgr[3 * i..3 * i + 3];
        let s = p[0] as f32 + p[1] as f32 + p[2] as f32 + 3.0;
        [(p[0] as f32 + 1.0) / s, (p[1] as f32 + 1.0) / s, (p[2] as f32 + 1.0) / s]
    };
    let felt_cells: Vec<usize> = (0..n).filter(|&i| region.felt[i]).collect();
    if felt_cells.is_empty() {
        return Presence::Clear;
    }
    let stride = (felt_cells.len() / MEDIAN_SAMPLES).max(1);
    let mut felt = [0.0f32; 3];
    let mut buf = Vec::with_capacity(MEDIAN_SAMPLES + 1);
    for (c, f) in felt.iter_mut().enumerate() {
        buf.clear();
        buf.extend(felt_cells.iter().step_by(stride).map(|&i| chroma(i)[c]));
        *f = median(&mut buf);
    }
    let mut foreign = vec![false; n];
    for &i in &felt_cells {
        let k = chroma(i);
        foreign[i] = (0..3).any(|c| (k[c] - felt[c]).abs() > FELT_CHROMA);
    }
    let opened = open3(&foreign, current.width, current.height);
    let largest = component_sizes(&opened, current.width, current.height).first().copied().unwrap_or(0);
    if largest > region.cells(opts.foreign_min_mm2) {
        Presence::Foreign { area_mm2: largest as f64 * region.cell_mm2 }
    } else {
        Presence::Clear
    }
}

/// Frames of stillness after motion that let footage ending sooner than the settle time settle
/// at its end.
pub const MIN_END_STILL_FRAMES: u32 = 3;

/// Where the scene is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Something moved within the settle time.
    Moving,
    /// Still, but not yet for the settle time (or a candidate was refused).
    Settling,
    /// A settled position was accepted and nothing has moved since.
    Settled,
}

/// What one frame did to the state machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// Nothing to report.
    Nothing,
    /// Something started moving (the first motion since the last settle).
    Motion {
        /// Changed area, in mm².
        area_mm2: f64,
    },
    /// The mat has been still for the settle time: check for hands and analyse, then call
    /// [`SettleDetector::accept`] or [`SettleDetector::refuse`].
    Candidate {
        /// How long it has been still, in seconds.
        still_s: f64,
    },
}

/// The Moving → Settling → Settled state machine over shrunk frames.
#[derive(Debug, Clone)]
pub struct SettleDetector {
    /// The tunables.
    pub opts: SettleOptions,
    region: Option<Region>,
    anchor: Option<SmallFrame>,
    still_since_s: f64,
    last_candidate_s: Option<f64>,
    phase: Phase,
    motion_reported: bool,
    reference: Option<SmallFrame>,
    last_change: Option<Vec<bool>>,
    /// Frames compared since the anchor was last set, none of them moving.
    still_frames: u32,
    /// Whether anything has moved since the start.
    moved: bool,
}

impl SettleDetector {
    /// A detector; it starts settling from the first frame it sees.
    pub fn new(opts: SettleOptions) -> SettleDetector {
        SettleDetector {
            opts,
            region: None,
            anchor: None,
            still_since_s: 0.0,
            last_candidate_s: None,
            phase: Phase::Settling,
            motion_reported: false,
            reference: None,
            last_change: None,
            still_frames: 0,
            moved: false,
        }
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Sets the watched region (e.g. after calibrating); `None` watches the whole frame.
    pub fn set_region(&mut self, region: Option<Region>) {
        self.region = region;
    }

    /// The watched region, once a frame has been seen.
    pub fn region(&self) -> Option<&Region> {
        self.region.as_ref()
    }

    /// Forgets the last settled frame (the camera or mat moved: it no longer compares).
    pub fn forget_reference(&mut self) {
        self.reference = None;
    }

    /// Makes `small` the last settled frame (one redrawn from before a knock into the new view).
    pub fn set_reference(&mut self, small: SmallFrame) {
        self.reference = Some(small);
    }

    /// Whether a last settled frame is held.
    pub fn has_reference(&self) -> bool {
        self.reference.is_some()
    }

    /// How long the mat has been still at time `t_s`, in seconds.
    pub fn still_for(&self, t_s: f64) -> f64 {
        t_s - self.still_since_s
    }

    /// Feeds one shrunk frame taken at `t_s` seconds (`factor` pixels per cell, frame `frame_width`
    /// pixels wide: used for the default region).
    pub fn push(&mut self, small: &SmallFrame, t_s: f64, factor: i32, frame_width: u32) -> Step {
        let region_fits = self.region.as_ref().is_some_and(|r| r.width == small.width && r.height == small.height);
        if !region_fits {
            self.region = Some(Region::whole(small.width, small.height, factor, frame_width));
        }
        let Some(anchor) = &self.anchor else {
            self.anchor = Some(small.clone());
            self.still_since_s = t_s;
            return Step::Nothing;
        };
        let Some(region) = &self.region else { return Step::Nothing };
        let change = compare(anchor, small, region, &self.opts);
        // A change counts only where it was there in the previous frame too (against the same
        // anchor): what moved stays changed, while noise that passes the threshold comes and goes.
        // Of those cells, the largest connected region: what moves is one blob, noise is
        // scattered in ones and twos.
        let persistent: Vec<bool> = match &self.last_change {
            Some(prev) if prev.len() == change.changed.len() => change.changed.iter().zip(prev).map(|(a, b)| *a && *b).collect(),
            _ => vec![false; change.changed.len()],
        };
        let moved = component_sizes(&persistent, region.width, region.height).first().copied().unwrap_or(0);
        self.last_change = Some(change.changed);
        if moved >= region.cells(self.opts.motion_mm2).max(MIN_MOTION_CELLS) {
            let area_mm2 = moved as f64 * region.cell_mm2;
            if let Some(a) = self.anchor.as_mut() {
                a.clone_from(small);
            }
            self.last_change = None;
            self.still_since_s = t_s;
            self.last_candidate_s = None;
            self.phase = Phase::Moving;
            self.still_frames = 0;
            self.moved = true;
            if !self.motion_reported {
                self.motion_reported = true;
                return Step::Motion { area_mm2 };
            }
            return Step::Nothing;
        }
        self.still_frames += 1;
        if self.phase == Phase::Settled {
            return Step::Nothing;
        }
        self.phase = Phase::Settling;
        let still_s = t_s - self.still_since_s;
        // A refused candidate is looked at again every settle time while the mat stays still.
        let due = self.last_candidate_s.is_none_or(|last| t_s - last >= self.opts.settle_s);
        // Half a frame's slack so a settle time that is a whole number of frames is met exactly.
        if still_s + 1e-6 >= self.opts.settle_s && due {
            self.last_candidate_s = Some(t_s);
            return Step::Candidate { still_s };
        }
        Step::Nothing
    }

    /// Whether the candidate `small` shows only winks: compared with the last settled frame when
    /// there is one (and it has not gone stale), else with the felt. See the module's comment.
    pub fn presence(&self, small: &SmallFrame, still_s: f64) -> Presence {
        let Some(region) = &self.region else { return Presence::Clear };
        match &self.reference {
            Some(r) => match islands_only(r, small, region, &self.opts) {
                Presence::Clear => Presence::Clear,
                large if still_s < self.opts.stale_reference_s => large,
                _ => nothing_foreign(small, region, &self.opts),
            },
            None => nothing_foreign(small, region, &self.opts),
        }
    }

    /// The cells of `small` that differ from the last settled frame (`None` without one).
    pub fn changed_since_reference(&self, small: &SmallFrame) -> Option<Change> {
        let (reference, region) = (self.reference.as_ref()?, self.region.as_ref()?);
        (reference.width == small.width && reference.height == small.height && region.width == small.width).then(|| compare(reference, small, region, &self.opts))
    }

    /// At the end of the footage: how long the mat has been still at `t_s` when that stillness
    /// has not been looked at yet (no candidate since the last motion, or since the start), in
    /// seconds; `None` while moving, once settled, or after a refused candidate. After motion the
    /// stillness must have held for [`MIN_END_STILL_FRAMES`] frames (a change counts as motion
    /// only once it persists over two frames, so the frame after a motion always looks still).
    pub fn unlooked_still(&self, t_s: f64) -> Option<f64> {
        let held = !self.moved || self.still_frames >= MIN_END_STILL_FRAMES;
        (self.anchor.is_some() && self.phase == Phase::Settling && self.last_candidate_s.is_none() && held).then_some(t_s - self.still_since_s)
    }

    /// The candidate was accepted as a settled position: it becomes the reference.
    pub fn accept(&mut self, small: &SmallFrame) {
        self.phase = Phase::Settled;
        self.motion_reported = false;
        self.reference = Some(small.clone());
    }

    /// The candidate was refused (a hand, or analysis failed): stay settling.
    pub fn refuse(&mut self) {
        self.phase = Phase::Settling;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    /// A felt-like frame: a smooth grey-green gradient with a few winks, gained and noised.
    fn scene(rng: &mut Pcg64, w: usize, h: usize, gain: f32, blobs: &[(f32, f32, f32, [u8; 3])]) -> SmallFrame {
        let mut bgr = Vec::with_capacity(w * h * 3);
        for y in 0..h {
            for x in 0..w {
                let mut p = [90.0 + 30.0 * x as f32 / w as f32, 120.0 + 20.0 * y as f32 / h as f32, 80.0];
                for &(cx, cy, r, col) in blobs {
                    if (x as f32 - cx).hypot(y as f32 - cy) <= r {
                        p = [col[0] as f32, col[1] as f32, col[2] as f32];
                    }
                }
                for v in p {
                    let noise: f32 = rng.random_range(-6.0..6.0);
                    bgr.push((v * gain + noise).round().clamp(0.0, 255.0) as u8);
                }
            }
        }
        SmallFrame { width: w, height: h, bgr }
    }

    fn region(w: usize, h: usize) -> Region {
        // 4 mm cells, as 1080p with a factor 4 would give.
        let mut r = Region::whole(w, h, 1, 1);
        r.cell_mm2 = 16.0;
        r.felt = vec![true; w * h];
        r
    }

    #[test]
    fn noise_and_exposure_drift_are_not_motion() {
        let mut rng = Pcg64::seed_from_u64(1);
        let winks = [(40.0, 30.0, 2.5, [200, 40, 30]), (90.0, 50.0, 2.5, [30, 200, 220])];
        let mut d = SettleDetector::new(SettleOptions::default());
        d.set_region(Some(region(160, 90)));
        let mut candidates = 0;
        for k in 0..60 {
            // Exposure drifts 20% over two seconds.
            let f = scene(&mut rng, 160, 90, 1.0 + 0.2 * k as f32 / 60.0, &winks);
            match d.push(&f, k as f64 / 30.0, 1, 160) {
                Step::Motion { area_mm2 } => panic!("motion {area_mm2} mm² at frame {k}"),
                Step::Candidate { .. } => {
                    candidates += 1;
                    assert_eq!(d.presence(&f, 0.5), Presence::Clear);
                    d.accept(&f);
                }
                Step::Nothing => {}
            }
        }
        assert_eq!(candidates, 1, "settles once, at 0.5 s");
    }

    #[test]
    fn a_moving_wink_is_motion_and_settles_again() {
        let mut rng = Pcg64::seed_from_u64(2);
        let mut d = SettleDetector::new(SettleOptions::default());
        d.set_region(Some(region(160, 90)));
        let mut events = Vec::new();
        for k in 0..90 {
            // A small wink (4 mm cells: 2.5 cells across) slides between frames 30 and 45.
            let x = 40.0 + 3.0 * (k.clamp(30, 45) - 30) as f32;
            let f = scene(&mut rng, 160, 90, 1.0, &[(x, 40.0, 2.0, [40, 40, 210])]);
            match d.push(&f, k as f64 / 30.0, 1, 160) {
                Step::Motion { .. } => events.push(("motion", k)),
                Step::Candidate { .. } => {
                    assert_eq!(d.presence(&f, 0.5), Presence::Clear, "a moved wink is an island");
                    d.accept(&f);
                    events.push(("settled", k));
                }
                Step::Nothing => {}
            }
        }
        let kinds: Vec<&str> = events.iter().map(|e| e.0).collect();
        assert_eq!(kinds, ["settled", "motion", "settled"], "{events:?}");
        assert!(events[2].1 >= 45 + 15, "settles 0.5 s after the wink stops: {events:?}");
    }

    #[test]
    fn a_hand_held_still_never_settles() {
        let mut rng = Pcg64::seed_from_u64(3);
        let mut d = SettleDetector::new(SettleOptions::default());
        d.set_region(Some(region(160, 90)));
        let skin = [120, 150, 210];
        let mut settled = Vec::new();
        for k in 0..120 {
            // A hand (a disc 36 cells across: about 16 000 mm²) comes in at frame 30 and stays.
            let hand: Vec<(f32, f32, f32, [u8; 3])> = if k >= 30 { vec![(80.0, 45.0, 18.0, skin)] } else { vec![] };
            let f = scene(&mut rng, 160, 90, 1.0, &hand);
            if let Step::Candidate { still_s } = d.push(&f, k as f64 / 30.0, 1, 160) {
                if d.presence(&f, still_s) == Presence::Clear {
                    d.accept(&f);
                    settled.push(k);
                } else {
                    d.refuse();
                }
            }
        }
        assert_eq!(settled.len(), 1, "only the empty mat settles: {settled:?}");
        assert!(settled[0] < 30);
        // With no earlier settled frame the felt test catches it too.
        let f = scene(&mut rng, 160, 90, 1.0, &[(80.0, 45.0, 18.0, skin)]);
        assert!(matches!(nothing_foreign(&f, &region(160, 90), &SettleOptions::default()), Presence::Foreign { .. }));
    }

    /// A JPEG decoded at 1/2 and 1/4 size (libjpeg's DCT scaling) shrinks to the same cells as
    /// the full decode, within a level or two: the settle detector sees the same frame.
    #[test]
    fn a_reduced_decode_shrinks_to_the_same_cells() -> Result<(), Box<dyn std::error::Error>> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/stills/midgame-00003.jpg");
        let bytes: opencv::core::Vector<u8> = std::fs::read(path)?.into_iter().collect();
        let full = opencv::imgcodecs::imdecode(&bytes, opencv::imgcodecs::IMREAD_COLOR)?;
        let size = (full.cols() as u32, full.rows() as u32);
        let mut shrinker = Shrinker::new(size.0, SettleOptions::default().target_width);
        assert_eq!((shrinker.factor(), shrinker.decode_reduction()), (4, 4));
        let mut want = SmallFrame::default();
        shrinker.shrink(&full, &mut want)?;
        for (r, flag) in [(2, opencv::imgcodecs::IMREAD_REDUCED_COLOR_2), (4, opencv::imgcodecs::IMREAD_REDUCED_COLOR_4)] {
            let reduced = opencv::imgcodecs::imdecode(&bytes, flag)?;
            let mut got = SmallFrame::default();
            shrinker.shrink_reduced(&reduced, r, size, &mut got)?;
            assert_eq!((got.width, got.height), (want.width, want.height));
            let mean = got.bgr.iter().zip(&want.bgr).map(|(a, b)| (*a as f64 - *b as f64).abs()).sum::<f64>() / want.bgr.len() as f64;
            eprintln!("1/{r} decode: cells differ by {mean:.2} levels on average");
            assert!(mean < 2.0, "1/{r}: {mean:.2} levels");
        }
        assert!(shrinker.shrink_reduced(&full, 3, size, &mut want).is_err(), "a reduction that does not divide the cell");
        Ok(())
    }

    #[test]
    fn clear_around_sees_a_changed_cell_near_and_not_far() {
        let (w, h) = (20, 10);
        let mut changed = vec![false; w * h];
        changed[5 * w + 10] = true;
        let change = Change { changed, count: 1, threshold: 12.0, gain: [1.0; 3] };
        // Cells of 4 px: the changed cell covers pixels 40-43 across, 20-23 down.
        assert!(!change.clear_around(PixelPoint::new(41.0, 21.0), 3.0, 4, w, h));
        assert!(!change.clear_around(PixelPoint::new(50.0, 21.0), 3.0, 4, w, h), "one cell of slack round the footprint");
        assert!(change.clear_around(PixelPoint::new(70.0, 21.0), 3.0, 4, w, h));
        assert!(!change.clear_around(PixelPoint::new(-100.0, -100.0), 3.0, 4, w, h), "off the grid is not known to be clear");
    }

    #[test]
    fn components_and_opening() {
        let (w, h) = (10, 6);
        let mut m = vec![false; w * h];
        for x in 0..10 {
            m[w + x] = true; // a one-cell line
        }
        m[2 * w + 5] = true; // a one-cell neck
        for y in 3..6 {
            for x in 4..7 {
                m[y * w + x] = true; // a 3x3 block
            }
        }
        assert_eq!(component_sizes(&m, w, h), vec![20]);
        let opened = open3(&m, w, h);
        assert_eq!(component_sizes(&opened, w, h), vec![9], "the line goes, the block stays");
    }
}

