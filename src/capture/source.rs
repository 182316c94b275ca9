//! Frame sources: one trait, [`FrameSource`], for everything that yields a stream of BGR frames —
//! a video file (OpenCV `VideoCapture`: avi/MJPG, mp4, mkv, and the renderer's clips), a folder or
//! glob of numbered images, and a live camera (nokhwa).
//!
//! Recorded sources yield every frame, in order, with the time it was taken in the footage; frames
//! that cannot be decoded are skipped and counted, never fatal. A live camera yields only the newest
//! frame (a grabber thread keeps one slot and overwrites it, counting what it drops), so slow
//! processing drops stale frames instead of falling behind; when the camera goes away the source
//! says so ([`SourceEvent::Lost`]), retries with backoff and says when it is back
//! ([`SourceEvent::Restored`]).

use opencv::core::Mat;
use opencv::prelude::*;
use opencv::videoio::{self, VideoCapture};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Why a stream of frames could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The file or folder could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file is empty.
    #[error("{path} is empty")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// OpenCV cannot open the file as a video, or not one frame of it decodes.
    #[error("{path} is not a video OpenCV can read (avi, mp4, mkv, …): no frame decodes")]
    NotVideo {
        /// The file.
        path: PathBuf,
    },
    /// A folder or glob with no image that decodes.
    #[error("{path}: no readable images (jpg, png, bmp, tif, webp) match")]
    NoImages {
        /// The folder or pattern.
        path: PathBuf,
    },
    /// No camera at that index.
    #[error("no camera at index {index} (winkeye watch --list-cameras lists them)")]
    NoCamera {
        /// The index asked for.
        index: u32,
    },
    /// The camera failed.
    #[error("camera {index}: {message}")]
    Camera {
        /// The camera's index.
        index: u32,
        /// What the driver said, in one line.
        message: String,
    },
    /// The grabber thread could not be started.
    #[error("cannot start the camera thread: {source}")]
    Thread {
        /// What the operating system said.
        source: std::io::Error,
    },
    /// OpenCV failed.
    #[error("{path}: {source}")]
    OpenCv {
        /// The file.
        path: PathBuf,
        /// OpenCV's error.
        source: opencv::Error,
    },
}

/// One frame of a stream.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Index in the stream: for recorded footage the frame's number in the file (skipped frames
    /// keep their numbers), for a camera the count of frames captured since the start.
    pub index: u64,
    /// Time of the frame, in seconds: into the footage for recorded sources, since the start for
    /// a camera.
    pub t_s: f64,
    /// The picture, 8-bit BGR: full size, or a fraction of it ([`Frame::reduced`]) when the
    /// source was asked to decode cheaply ([`FrameSource::reduce`]).
    pub image: Mat,
    /// 1 when `image` is full size; 2, 4 or 8 when a JPEG frame was decoded at that fraction of
    /// its width and height (libjpeg scales in the DCT, so this costs a fraction of a full decode).
    pub reduced: u32,
    /// The compressed frame a reduced `image` was decoded from, so the full-size picture can be
    /// had when it is needed ([`Frame::full`]).
    pub encoded: Option<Arc<opencv::core::Vector<u8>>>,
    /// Full width and height, in pixels (of the full-size picture, also when `image` is reduced).
    pub full_size: (u32, u32),
}

impl Frame {
    /// A full-size frame.
    pub fn new(index: u64, t_s: f64, image: Mat) -> Frame {
        let full_size = (image.cols().max(0) as u32, image.rows().max(0) as u32);
        Frame { index, t_s, image, reduced: 1, encoded: None, full_size }
    }

    /// The full-size picture: `image` itself, or decoded from the compressed frame when `image`
    /// is reduced.
    pub fn full(&self) -> opencv::Result<std::borrow::Cow<'_, Mat>> {
        if self.reduced <= 1 {
            return Ok(std::borrow::Cow::Borrowed(&self.image));
        }
        let Some(encoded) = &self.encoded else {
            return Err(opencv::Error::new(opencv::core::StsError, format!("frame {}: reduced, and its compressed data was not kept", self.index)));
        };
        let image = opencv::imgcodecs::imdecode(encoded.as_ref(), opencv::imgcodecs::IMREAD_COLOR)?;
        if image.empty() || (image.cols().max(0) as u32, image.rows().max(0) as u32) != self.full_size {
            return Err(opencv::Error::new(opencv::core::StsError, format!("frame {}: the compressed frame does not decode at full size", self.index)));
        }
        Ok(std::borrow::Cow::Owned(image))
    }
}

/// What a source has to say next.
#[derive(Debug)]
pub enum SourceEvent {
    /// A frame.
    Frame(Frame),
    /// Nothing new yet (a live source waited its polling interval); lets the caller check for
    /// Ctrl-C without blocking.
    Idle,
    /// The camera stopped delivering; the source retries by itself.
    Lost {
        /// What went wrong, in one line.
        error: String,
        /// Seconds until the next attempt to reopen it.
        retry_in_s: f64,
    },
    /// The camera delivers again after a [`SourceEvent::Lost`].
    Restored,
}

/// A stream of frames.
pub trait FrameSource: Send {
    /// The next event: a frame, or for a live source a change of state. `Ok(None)` at the end of
    /// recorded footage. Undecodable frames are skipped (see [`FrameSource::skipped`]).
    fn next_event(&mut self) -> Result<Option<SourceEvent>, SourceError>;
    /// What the source is, for messages and the documents' `source.path`.
    fn describe(&self) -> String;
    /// Frames per second, when known.
    fn fps(&self) -> Option<f64>;
    /// How many frames the source holds, when known (recorded footage only; from the container,
    /// so an estimate for some formats).
    fn frame_count(&self) -> Option<u64>;
    /// Frames read and decoded so far.
    fn read(&self) -> u64;
    /// Frames that could not be decoded (corrupt or cut off), so far.
    fn skipped(&self) -> u64;
    /// Frames a live source dropped because a newer one arrived before they were taken.
    fn dropped(&self) -> u64 {
        0
    }
    /// Whether the source is live (a camera): then stale frames are dropped.
    fn is_live(&self) -> bool {
        false
    }
    /// Asks for the frames that follow to be decoded at 1/`by` of their width and height where
    /// that is cheaper (MJPEG video), keeping the compressed frame for [`Frame::full`]. Returns
    /// the reduction granted: 1 (full size, the default) where the source cannot.
    fn reduce(&mut self, _by: u32) -> u32 {
        1
    }
    /// Full frame width and height in pixels, when known before the frames are taken.
    fn frame_size(&self) -> Option<(u32, u32)> {
        None
    }
}

/// Silences OpenCV's own warnings on stderr (a bad file would otherwise print several lines
/// before ours), once per process.
fn quiet_opencv() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        let _ = opencv::core::set_log_level(opencv::core::LogLevel::LOG_LEVEL_SILENT);
    });
}

/// Opens a recorded source: a folder of numbered images, a glob pattern such as
/// `frames/img-*.jpg` (wildcards `*` and `?` in the file name), or a video file. The first frame is
/// read at once, so a missing, empty or undecodable input is an error here, before any output is
/// created.
pub fn open_recorded(path: &Path) -> Result<Box<dyn FrameSource>, SourceError> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if path.is_dir() || name.contains(['*', '?']) {
        return Ok(Box::new(ImageSequence::open(path, DEFAULT_SEQUENCE_FPS)?));
    }
    Ok(Box::new(VideoFile::open(path)?))
}

/// Frame rate assumed for a folder of images, which carries none.
pub const DEFAULT_SEQUENCE_FPS: f64 = 30.0;

/// Consecutive undecodable frames after which a video is taken to end there (the rest of the
/// frames the container declares are counted as skipped).
const MAX_CONSECUTIVE_FAILURES: u32 = 25;

/// Bytes at the end of a JPEG packet searched for its end-of-image marker (containers pad packets).
const JPEG_TAIL_SLACK: usize = 16;

/// One attempt to read a frame.
enum Read {
    Frame(Frame),
    /// A frame was there but could not be had (corrupt, cut short).
    Bad,
    /// No more frames in the file.
    End,
}

/// A video file read through OpenCV's `VideoCapture` (FFmpeg): avi (MJPG), mp4, mkv, …
pub struct VideoFile {
    path: PathBuf,
    cap: VideoCapture,
    fps: Option<f64>,
    declared: Option<u64>,
    next_index: u64,
    read: u64,
    skipped: u64,
    pending: Option<Frame>,
    buf: Mat,
    done: bool,
    /// Frames come as compressed JPEG packets (MJPEG) decoded here at 1/`reduce` size.
    raw: bool,
    reduce: u32,
    /// Full frame size, from the first frame.
    full_size: (u32, u32),
}

impl VideoFile {
    /// Opens `path` and decodes its first frame.
    pub fn open(path: &Path) -> Result<VideoFile, SourceError> {
        quiet_opencv();
        let meta = std::fs::metadata(path).map_err(|source| SourceError::Read { path: path.to_owned(), source })?;
        if meta.is_dir() {
            return Err(SourceError::NotVideo { path: path.to_owned() });
        }
        // Readable at all? (OpenCV only says "not opened" for a file it may not read.)
        std::fs::File::open(path).map_err(|source| SourceError::Read { path: path.to_owned(), source })?;
        if meta.len() == 0 {
            return Err(SourceError::Empty { path: path.to_owned() });
        }
        let ocv = |source| SourceError::OpenCv { path: path.to_owned(), source };
        let name = path.to_string_lossy().into_owned();
        let cap = VideoCapture::from_file(&name, videoio::CAP_FFMPEG).or_else(|_| VideoCapture::from_file(&name, videoio::CAP_ANY)).map_err(ocv)?;
        if !cap.is_opened().map_err(ocv)? {
            return Err(SourceError::NotVideo { path: path.to_owned() });
        }
        let fps = cap.get(videoio::CAP_PROP_FPS).ok().filter(|f| f.is_finite() && *f > 0.0 && *f < 1000.0);
        let declared = cap.get(videoio::CAP_PROP_FRAME_COUNT).ok().filter(|n| n.is_finite() && *n >= 1.0).map(|n| n as u64);
        let mut v = VideoFile { path: path.to_owned(), cap, fps, declared, next_index: 0, read: 0, skipped: 0, pending: None, buf: Mat::default(), done: false, raw: false, reduce: 1, full_size: (0, 0) };
        match v.decode_next()? {
            Some(f) => {
                v.full_size = f.full_size;
                v.pending = Some(f);
            }
            None => return Err(SourceError::NotVideo { path: path.to_owned() }),
        }
        Ok(v)
    }

    fn t_of(&self, index: u64) -> f64 {
        index as f64 / self.fps.unwrap_or(DEFAULT_SEQUENCE_FPS)
    }

    /// Decodes the next frame, skipping (and counting) undecodable ones.
    fn decode_next(&mut self) -> Result<Option<Frame>, SourceError> {
        if self.done {
            return Ok(None);
        }
        let mut failures = 0;
        loop {
            let got = if self.raw { self.read_packet() } else { self.read_decoded().map_or(Read::Bad, Read::Frame) };
            match got {
                Read::Frame(mut frame) => {
                    frame.index = self.next_index;
                    frame.t_s = self.t_of(frame.index);
                    self.next_index += 1;
                    self.read += 1;
                    return Ok(Some(frame));
                }
                Read::End => {
                    // The demuxer has no more packets: what the container declared beyond here
                    // was cut off.
                    if let Some(declared) = self.declared {
                        self.skipped += declared.saturating_sub(self.next_index);
                        self.next_index = declared;
                    }
                    self.done = true;
                    return Ok(None);
                }
                Read::Bad => {}
            }
            // A failed read before the end the container declares is a corrupt frame: count it
            // and step past it. Past the declared end (or with none declared) it is the end.
            let Some(declared) = self.declared else {
                self.done = true;
                return Ok(None);
            };
            if self.next_index >= declared {
                self.done = true;
                return Ok(None);
            }
            failures += 1;
            self.skipped += 1;
            self.next_index += 1;
            if failures >= MAX_CONSECUTIVE_FAILURES {
                // Cut off: what the container promised beyond here will not come.
                self.skipped += declared.saturating_sub(self.next_index);
                self.next_index = declared;
                self.done = true;
                return Ok(None);
            }
            // A bad packet was consumed; a frame FFmpeg failed to decode is stepped past.
            if !self.raw {
                let _ = self.cap.set(videoio::CAP_PROP_POS_FRAMES, self.next_index as f64);
            }
        }
    }

    /// The next frame decoded by `VideoCapture` (FFmpeg), or `None` when it fails.
    fn read_decoded(&mut self) -> Option<Frame> {
        let ok = self.cap.read(&mut self.buf).unwrap_or(false) && !self.buf.empty() && self.buf.typ() == opencv::core::CV_8UC3;
        ok.then(|| Frame::new(0, 0.0, std::mem::take(&mut self.buf)))
    }

    /// The next compressed packet decoded here at 1/`reduce` size (libjpeg's DCT scaling): `Bad`
    /// when it is cut short (no end-of-image marker), does not decode, or decodes at another size
    /// than the first frame; `End` when there is no packet.
    fn read_packet(&mut self) -> Read {
        if !self.cap.read(&mut self.buf).unwrap_or(false) || self.buf.empty() {
            return Read::End;
        }
        let Ok(bytes) = self.buf.data_bytes() else { return Read::Bad };
        // libjpeg decodes a JPEG cut short with a warning, the missing rows grey; the end-of-image
        // marker (FF D9, perhaps followed by a little padding) says it is whole.
        let tail = &bytes[bytes.len().saturating_sub(JPEG_TAIL_SLACK)..];
        if !tail.windows(2).any(|w| w == [0xFF, 0xD9]) {
            return Read::Bad;
        }
        let encoded: opencv::core::Vector<u8> = bytes.iter().copied().collect();
        let flag = match self.reduce {
            2 => opencv::imgcodecs::IMREAD_REDUCED_COLOR_2,
            4 => opencv::imgcodecs::IMREAD_REDUCED_COLOR_4,
            8 => opencv::imgcodecs::IMREAD_REDUCED_COLOR_8,
            _ => opencv::imgcodecs::IMREAD_COLOR,
        };
        let Some(image) = opencv::imgcodecs::imdecode(&encoded, flag).ok().filter(|m| !m.empty() && m.typ() == opencv::core::CV_8UC3) else { return Read::Bad };
        let r = self.reduce.max(1);
        let (w, h) = self.full_size;
        if image.cols().max(0) as u32 != w.div_ceil(r) || image.rows().max(0) as u32 != h.div_ceil(r) {
            return Read::Bad;
        }
        Read::Frame(Frame { index: 0, t_s: 0.0, image, reduced: r, encoded: Some(Arc::new(encoded)), full_size: self.full_size })
    }
}

impl FrameSource for VideoFile {
    fn frame_size(&self) -> Option<(u32, u32)> {
        Some(self.full_size)
    }
    fn reduce(&mut self, by: u32) -> u32 {
        // Only MJPEG: its packets are whole JPEG images that libjpeg can decode at a fraction.
        let mjpg = videoio::VideoWriter::fourcc('M', 'J', 'P', 'G').ok().map(f64::from);
        let is_mjpg = self.cap.get(videoio::CAP_PROP_FOURCC).ok().zip(mjpg).is_some_and(|(a, b)| a == b);
        if !matches!(by, 2 | 4 | 8) || !is_mjpg || self.full_size.0 == 0 {
            return 1;
        }
        // -1: hand over the demuxed packets undecoded (OpenCV's FFmpeg backend).
        if !self.cap.set(videoio::CAP_PROP_FORMAT, -1.0).unwrap_or(false) {
            return 1;
        }
        self.raw = true;
        self.reduce = by;
        by
    }
    fn next_event(&mut self) -> Result<Option<SourceEvent>, SourceError> {
        if let Some(f) = self.pending.take() {
            return Ok(Some(SourceEvent::Frame(f)));
        }
        Ok(self.decode_next()?.map(SourceEvent::Frame))
    }
    fn describe(&self) -> String {
        self.path.display().to_string()
    }
    fn fps(&self) -> Option<f64> {
        self.fps
    }
    fn frame_count(&self) -> Option<u64> {
        self.declared
    }
    fn read(&self) -> u64 {
        self.read
    }
    fn skipped(&self) -> u64 {
        self.skipped
    }
}

/// A recorded source decoded on its own thread, up to a few frames ahead, so decoding and
/// processing share the machine's cores.
pub struct Prefetch {
    /// `None` once dropped: the decoder's next send then fails and it stops.
    rx: Option<std::sync::mpsc::Receiver<Result<Option<SourceEvent>, SourceError>>>,
    decoder: Option<std::thread::JoinHandle<()>>,
    read: Arc<std::sync::atomic::AtomicU64>,
    skipped: Arc<std::sync::atomic::AtomicU64>,
    describe: String,
    fps: Option<f64>,
    frame_count: Option<u64>,
    live: bool,
    finished: bool,
}

/// Runs `source` on a thread of its own, `depth` events ahead.
pub fn prefetch(mut source: Box<dyn FrameSource>, depth: usize) -> Result<Prefetch, SourceError> {
    use std::sync::atomic::AtomicU64;
    let (tx, rx) = std::sync::mpsc::sync_channel(depth.max(1));
    let (read, skipped) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (describe, fps, frame_count, live) = (source.describe(), source.fps(), source.frame_count(), source.is_live());
    let (r2, s2) = (read.clone(), skipped.clone());
    let decoder = std::thread::Builder::new()
        .name("decoder".into())
        .spawn(move || loop {
            let ev = source.next_event();
            // Counts first, so they are final when the end arrives.
            r2.store(source.read(), Ordering::Relaxed);
            s2.store(source.skipped(), Ordering::Relaxed);
            let last = !matches!(ev, Ok(Some(_)));
            if tx.send(ev).is_err() || last {
                return;
            }
        })
        .map_err(|source| SourceError::Thread { source })?;
    Ok(Prefetch { rx: Some(rx), decoder: Some(decoder), read, skipped, describe, fps, frame_count, live, finished: false })
}

/// How long dropping a [`Prefetch`] or a [`CameraSource`] waits for its thread to finish the
/// frame in hand.
const THREAD_STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

impl Drop for Prefetch {
    /// Stops the decoder and waits for it (up to [`THREAD_STOP_WAIT`]): a program that ends
    /// while the decoder is still inside OpenCV, as when footage is interrupted, has its C++
    /// statics torn down under that thread and dies of a segmentation fault after writing
    /// everything (test `ctrl_c_or_term_ends_the_stream_with_an_end_event`, under load).
    fn drop(&mut self) {
        self.rx = None;
        wait_for(self.decoder.take());
    }
}

/// Waits up to [`THREAD_STOP_WAIT`] for a thread told to stop, and joins it if it did (one
/// stuck in a camera's driver is left behind rather than hanging the program).
fn wait_for(thread: Option<std::thread::JoinHandle<()>>) {
    let Some(thread) = thread else { return };
    let started = std::time::Instant::now();
    while !thread.is_finished() && started.elapsed() < THREAD_STOP_WAIT {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    if thread.is_finished() {
        let _ = thread.join();
    }
}

impl FrameSource for Prefetch {
    fn next_event(&mut self) -> Result<Option<SourceEvent>, SourceError> {
        if self.finished {
            return Ok(None);
        }
        let Some(rx) = &self.rx else { return Ok(None) };
        match rx.recv() {
            Ok(Ok(Some(ev))) => Ok(Some(ev)),
            Ok(other) => {
                self.finished = true;
                other
            }
            Err(_) => {
                self.finished = true;
                Ok(None)
            }
        }
    }
    fn describe(&self) -> String {
        self.describe.clone()
    }
    fn fps(&self) -> Option<f64> {
        self.fps
    }
    fn frame_count(&self) -> Option<u64> {
        self.frame_count
    }
    fn read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }
    fn skipped(&self) -> u64 {
        self.skipped.load(Ordering::Relaxed)
    }
    fn is_live(&self) -> bool {
        self.live
    }
}

/// A folder or glob of numbered still images, read in the order of the number in their names
/// (`img-2.jpg` before `img-10.jpg`).
pub struct ImageSequence {
    describe: String,
    files: Vec<PathBuf>,
    fps: f64,
    next: usize,
    read: u64,
    skipped: u64,
    pending: Option<Frame>,
}

/// File name extensions taken as images in a folder.
const IMAGE_EXTENSIONS: [&str; 7] = ["jpg", "jpeg", "png", "bmp", "tif", "tiff", "webp"];

impl ImageSequence {
    /// Lists the images of a folder or a glob (wildcards in the file name only) and reads the
    /// first one that decodes.
    pub fn open(path: &Path, fps: f64) -> Result<ImageSequence, SourceError> {
        quiet_opencv();
        let (dir, pattern) = if path.is_dir() {
            (path.to_owned(), None)
        } else {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
                _ => PathBuf::from("."),
            };
            (dir, path.file_name().map(|n| n.to_string_lossy().into_owned()))
        };
        let entries = std::fs::read_dir(&dir).map_err(|source| SourceError::Read { path: dir.clone(), source })?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .filter(|p| {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                match &pattern {
                    Some(pat) => wildcard_match(pat, &name),
                    None => p.extension().is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_string_lossy().to_lowercase().as_str())),
                }
            })
            .collect();
        files.sort_by_key(|p| numeric_key(p));
        if files.is_empty() {
            return Err(SourceError::NoImages { path: path.to_owned() });
        }
        let mut s = ImageSequence { describe: path.display().to_string(), files, fps, next: 0, read: 0, skipped: 0, pending: None };
        match s.decode_next() {
            Some(f) => s.pending = Some(f),
            None => return Err(SourceError::NoImages { path: path.to_owned() }),
        }
        Ok(s)
    }

    fn decode_next(&mut self) -> Option<Frame> {
        while self.next < self.files.len() {
            let index = self.next as u64;
            let path = &self.files[self.next];
            self.next += 1;
            match super::load_image(path) {
                Ok(image) => {
                    self.read += 1;
                    return Some(Frame::new(index, index as f64 / self.fps, image));
                }
                Err(_) => self.skipped += 1,
            }
        }
        None
    }
}

impl FrameSource for ImageSequence {
    fn next_event(&mut self) -> Result<Option<SourceEvent>, SourceError> {
        if let Some(f) = self.pending.take() {
            return Ok(Some(SourceEvent::Frame(f)));
        }
        Ok(self.decode_next().map(SourceEvent::Frame))
    }
    fn describe(&self) -> String {
        self.describe.clone()
    }
    fn fps(&self) -> Option<f64> {
        Some(self.fps)
    }
    fn frame_count(&self) -> Option<u64> {
        Some(self.files.len() as u64)
    }
    fn read(&self) -> u64 {
        self.read
    }
    fn skipped(&self) -> u64 {
        self.skipped
    }
}

/// Sort key of a numbered file: the last run of digits in its name (as a number), then the name.
fn numeric_key(p: &Path) -> (u128, String) {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = name.rsplit_once('.').map_or(name.as_str(), |(s, _)| s);
    let digits: String = {
        let rev: String = stem.chars().rev().skip_while(|c| !c.is_ascii_digit()).take_while(|c| c.is_ascii_digit()).collect();
        rev.chars().rev().collect()
    };
    (digits.parse().unwrap_or(u128::MAX), name)
}

/// Whether `name` matches `pattern` with `*` (any run) and `?` (any one character).
fn wildcard_match(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Classic greedy match with backtracking to the last star.
    let (mut i, mut j, mut star, mut mark) = (0usize, 0usize, None::<usize>, 0usize);
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    while i < p.len() && p[i] == '*' {
        i += 1;
    }
    i == p.len()
}

/// What to ask a camera for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CameraOptions {
    /// The camera's index (as `winkeye watch --list-cameras` shows).
    pub index: u32,
    /// Width and height, in pixels (the closest the camera offers).
    pub resolution: (u32, u32),
    /// Frames per second (the closest the camera offers).
    pub fps: u32,
}

impl Default for CameraOptions {
    fn default() -> Self {
        CameraOptions { index: 0, resolution: (1920, 1080), fps: 30 }
    }
}

/// A camera the system offers.
#[derive(Debug, Clone, PartialEq)]
pub struct CameraListing {
    /// Its index.
    pub index: String,
    /// Its name.
    pub name: String,
    /// What the driver says about it.
    pub description: String,
}

/// The cameras the system offers (an empty list when there are none).
pub fn list_cameras() -> Result<Vec<CameraListing>, SourceError> {
    let found = nokhwa::query(nokhwa::utils::ApiBackend::Auto).map_err(|e| SourceError::Camera { index: 0, message: one_line(&e.to_string()) })?;
    Ok(found
        .into_iter()
        .map(|c| CameraListing { index: c.index().to_string(), name: c.human_name(), description: c.description().to_string() })
        .collect())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first wait before reopening a lost camera, and the longest.
const RETRY_FIRST: Duration = Duration::from_millis(500);
const RETRY_MAX: Duration = Duration::from_secs(8);
/// How long [`CameraSource::next_event`] waits for a frame before returning [`SourceEvent::Idle`].
const POLL: Duration = Duration::from_millis(200);

/// What the grabber thread hands over: the newest frame and changes of state, in order.
#[derive(Default)]
struct Slot {
    frame: Option<Frame>,
    states: std::collections::VecDeque<SourceEvent>,
    dropped: u64,
    read: u64,
    skipped: u64,
    fps: Option<f64>,
    /// The device has nothing more to give (only footage played as a camera ends).
    ended: bool,
}

/// What the grabber thread reads from: a camera (nokhwa), or footage played as one
/// ([`FilePlayback`]).
trait Device {
    /// The next frame, waiting for it as a camera does.
    fn grab(&mut self) -> Result<Mat, GrabError>;
    /// Frames per second, when known.
    fn fps(&self) -> Option<f64>;
    /// Stops streaming (before reopening, or at the end).
    fn stop(&mut self) {}
}

impl Device for nokhwa::Camera {
    fn grab(&mut self) -> Result<Mat, GrabError> {
        grab(self)
    }
    fn fps(&self) -> Option<f64> {
        Some(self.frame_rate() as f64).filter(|f| *f > 0.0)
    }
    fn stop(&mut self) {
        let _ = self.stop_stream();
    }
}

/// A live camera through nokhwa (V4L2 on Linux), MJPEG preferred, or footage played as a live
/// camera ([`CameraSource::open_file`]). A grabber thread captures continuously and keeps only
/// the newest frame.
pub struct CameraSource {
    describe: String,
    shared: Arc<(Mutex<Slot>, Condvar)>,
    stop: Arc<AtomicBool>,
    grabber: Option<std::thread::JoinHandle<()>>,
}

impl CameraSource {
    /// Opens the camera and starts grabbing. Fails at once (no retry) when the camera cannot be
    /// opened at all, e.g. there is no camera at that index.
    pub fn open(opts: CameraOptions) -> Result<CameraSource, SourceError> {
        quiet_opencv();
        // nokhwa's camera is not Send: it is opened (and reopened) on the grabber thread.
        CameraSource::start(format!("camera {}", opts.index), move || open_camera(&opts))
    }

    /// Plays a video file (or image folder) as a live camera, in real time, for testing `watch`
    /// without a camera: see [`FilePlayback`]. `unplug` is a window of seconds since the start in
    /// which the "camera" is gone: grabbing fails and reopening fails until it has passed, so the
    /// same lost / retry with backoff / restored path runs as for a camera pulled out.
    pub fn open_file(path: &Path, unplug: Option<(f64, f64)>) -> Result<CameraSource, SourceError> {
        let playback = Arc::new(Mutex::new(FilePlayback::open(path, unplug)?));
        let describe = format!("camera file:{}", path.display());
        CameraSource::start(describe, move || {
            let unplugged = playback.lock().map(|p| p.unplugged()).unwrap_or(true);
            if unplugged {
                return Err(SourceError::Camera { index: 0, message: "simulated unplug: no device".into() });
            }
            Ok(PlaybackHandle(playback.clone()))
        })
    }

    fn start<D: Device>(describe: String, mut open: impl FnMut() -> Result<D, SourceError> + Send + 'static) -> Result<CameraSource, SourceError> {
        let shared = Arc::new((Mutex::new(Slot::default()), Condvar::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s2, stop2) = (shared.clone(), stop.clone());
        let (opened_tx, opened_rx) = std::sync::mpsc::channel::<Result<(), SourceError>>();
        let grabber = std::thread::Builder::new()
            .name("camera-grabber".into())
            .spawn(move || {
                let mut cam = match open() {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = opened_tx.send(Err(e));
                        return;
                    }
                };
                if let Ok(mut slot) = s2.0.lock() {
                    slot.fps = cam.fps();
                }
                let _ = opened_tx.send(Ok(()));
                let started = Instant::now();
                let mut captured = 0u64;
                let mut backoff = RETRY_FIRST;
                while !stop2.load(Ordering::Relaxed) {
                    match cam.grab() {
                        Ok(image) => {
                            backoff = RETRY_FIRST;
                            let frame = Frame::new(captured, started.elapsed().as_secs_f64(), image);
                            captured += 1;
                            let (lock, cv) = &*s2;
                            if let Ok(mut slot) = lock.lock() {
                                slot.read += 1;
                                if slot.frame.replace(frame).is_some() {
                                    slot.dropped += 1;
                                }
                            }
                            cv.notify_all();
                        }
                        Err(GrabError::Decode) => {
                            if let Ok(mut slot) = s2.0.lock() {
                                slot.skipped += 1;
                            }
                        }
                        Err(GrabError::Ended) => {
                            if let Ok(mut slot) = s2.0.lock() {
                                slot.ended = true;
                            }
                            s2.1.notify_all();
                            break;
                        }
                        Err(GrabError::Lost(message)) => {
                            // Report once, then try to reopen with doubling waits.
                            push_state(&s2, SourceEvent::Lost { error: message, retry_in_s: backoff.as_secs_f64() });
                            cam.stop();
                            loop {
                                if stop2.load(Ordering::Relaxed) {
                                    return;
                                }
                                std::thread::sleep(backoff);
                                match open() {
                                    Ok(c) => {
                                        cam = c;
                                        push_state(&s2, SourceEvent::Restored);
                                        backoff = RETRY_FIRST;
                                        break;
                                    }
                                    Err(_) => backoff = (backoff * 2).min(RETRY_MAX),
                                }
                            }
                        }
                    }
                }
                cam.stop();
            })
            .map_err(|source| SourceError::Thread { source })?;
        match opened_rx.recv() {
            Ok(Ok(())) => Ok(CameraSource { describe, shared, stop, grabber: Some(grabber) }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(SourceError::Camera { index: 0, message: "the camera thread ended while opening it".into() }),
        }
    }
}

impl Drop for CameraSource {
    /// Stops the grabber and waits for it to let go of the camera (see [`Prefetch`]'s drop).
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        wait_for(self.grabber.take());
    }
}

fn push_state(shared: &Arc<(Mutex<Slot>, Condvar)>, ev: SourceEvent) {
    if let Ok(mut slot) = shared.0.lock() {
        slot.states.push_back(ev);
    }
    shared.1.notify_all();
}

enum GrabError {
    /// One frame could not be decoded: skip it.
    Decode,
    /// The camera stopped delivering.
    Lost(String),
    /// Footage played as a camera has ended.
    Ended,
}

/// How long footage played as a camera keeps showing its last frame after its end, in seconds:
/// a real camera keeps watching the resting scene, and the settle after the last shot needs the
/// settle time plus the analysis to happen.
pub const PLAYBACK_HOLD_S: f64 = 3.0;

/// Footage played as a live camera: frames come at the footage's own rate, in real time from
/// the moment it is opened; frames whose time has passed while the grabber was busy or the
/// "camera" was unplugged are skipped, as a camera's would be. After the end the last frame is
/// held for [`PLAYBACK_HOLD_S`], then the stream ends.
pub struct FilePlayback {
    source: Box<dyn FrameSource>,
    fps: f64,
    started: Instant,
    unplug: Option<(f64, f64)>,
    /// Index in the footage of the next frame to deliver.
    next: u64,
    last: Option<Mat>,
    ended_at: Option<f64>,
}

impl FilePlayback {
    /// Opens `path` (as [`open_recorded`] does); `unplug` as in [`CameraSource::open_file`].
    pub fn open(path: &Path, unplug: Option<(f64, f64)>) -> Result<FilePlayback, SourceError> {
        let source = open_recorded(path)?;
        let fps = source.fps().unwrap_or(DEFAULT_SEQUENCE_FPS);
        Ok(FilePlayback { source, fps, started: Instant::now(), unplug, next: 0, last: None, ended_at: None })
    }

    fn now_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Whether the simulated unplug is on now.
    pub fn unplugged(&self) -> bool {
        let t = self.now_s();
        self.unplug.is_some_and(|(a, b)| t >= a && t < b)
    }

    fn grab(&mut self) -> Result<Mat, GrabError> {
        if self.unplugged() {
            return Err(GrabError::Lost("simulated unplug: the camera went away".into()));
        }
        // Wait for the next frame's time.
        let due_s = self.next as f64 / self.fps;
        let wait = due_s - self.now_s();
        if wait > 0.0 {
            std::thread::sleep(Duration::from_secs_f64(wait));
        }
        if let Some(end) = self.ended_at {
            if self.now_s() > end + PLAYBACK_HOLD_S {
                return Err(GrabError::Ended);
            }
            self.next += 1;
            return self.last.clone().ok_or(GrabError::Ended);
        }
        // The frame for now: those whose time has passed are skipped.
        let now_index = (self.now_s() * self.fps).floor() as u64;
        loop {
            match self.source.next_event() {
                Ok(Some(SourceEvent::Frame(f))) => {
                    if f.index < now_index {
                        continue;
                    }
                    self.next = f.index + 1;
                    self.last = Some(f.image.clone());
                    return Ok(f.image);
                }
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => {
                    self.ended_at = Some(self.now_s());
                    self.next = now_index + 1;
                    return self.last.clone().ok_or(GrabError::Ended);
                }
            }
        }
    }
}

/// A shared [`FilePlayback`] as the grabber's device (it outlives each "reopening").
struct PlaybackHandle(Arc<Mutex<FilePlayback>>);

impl Device for PlaybackHandle {
    fn grab(&mut self) -> Result<Mat, GrabError> {
        match self.0.lock() {
            Ok(mut p) => p.grab(),
            Err(_) => Err(GrabError::Ended),
        }
    }
    fn fps(&self) -> Option<f64> {
        self.0.lock().ok().map(|p| p.fps)
    }
}

fn open_camera(opts: &CameraOptions) -> Result<nokhwa::Camera, SourceError> {
    use nokhwa::pixel_format::RgbFormat;
    use nokhwa::utils::{CameraFormat, CameraIndex, FrameFormat, RequestedFormat, RequestedFormatType, Resolution};
    let want = CameraFormat::new(Resolution::new(opts.resolution.0, opts.resolution.1), FrameFormat::MJPEG, opts.fps);
    let request = RequestedFormat::new::<RgbFormat>(RequestedFormatType::Closest(want));
    let err = |e: nokhwa::NokhwaError| SourceError::Camera { index: opts.index, message: one_line(&e.to_string()) };
    // Without the device node nokhwa's message is about V4L internals; say it plainly.
    #[cfg(target_os = "linux")]
    if !Path::new(&format!("/dev/video{}", opts.index)).exists() {
        return Err(SourceError::NoCamera { index: opts.index });
    }
    let mut cam = nokhwa::Camera::new(CameraIndex::Index(opts.index), request).map_err(err)?;
    cam.open_stream().map_err(err)?;
    Ok(cam)
}

/// One frame from the camera as BGR: MJPEG is decoded by OpenCV straight to BGR; other formats
/// through nokhwa's RGB decoder.
fn grab(cam: &mut nokhwa::Camera) -> Result<Mat, GrabError> {
    let buf = cam.frame().map_err(|e| GrabError::Lost(one_line(&e.to_string())))?;
    if buf.source_frame_format() == nokhwa::utils::FrameFormat::MJPEG {
        let v = opencv::core::Vector::<u8>::from_slice(buf.buffer());
        return match opencv::imgcodecs::imdecode(&v, opencv::imgcodecs::IMREAD_COLOR) {
            Ok(m) if !m.empty() => Ok(m),
            _ => Err(GrabError::Decode),
        };
    }
    let rgb = buf.decode_image::<nokhwa::pixel_format::RgbFormat>().map_err(|_| GrabError::Decode)?;
    let (w, h) = (rgb.width() as i32, rgb.height() as i32);
    let flat = Mat::from_slice(rgb.as_raw()).map_err(|_| GrabError::Decode)?;
    let rgb_mat = flat.reshape(3, h).map_err(|_| GrabError::Decode)?;
    let mut bgr = Mat::default();
    opencv::imgproc::cvt_color_def(&rgb_mat, &mut bgr, opencv::imgproc::COLOR_RGB2BGR).map_err(|_| GrabError::Decode)?;
    if bgr.cols() != w {
        return Err(GrabError::Decode);
    }
    Ok(bgr)
}

impl FrameSource for CameraSource {
    fn next_event(&mut self) -> Result<Option<SourceEvent>, SourceError> {
        let (lock, cv) = &*self.shared;
        let failed = || SourceError::Camera { index: 0, message: format!("{}: the grabber thread failed", self.describe) };
        let mut slot = lock.lock().map_err(|_| failed())?;
        if slot.states.is_empty() && slot.frame.is_none() && !slot.ended {
            slot = cv.wait_timeout(slot, POLL).map_err(|_| failed())?.0;
        }
        if let Some(ev) = slot.states.pop_front() {
            return Ok(Some(ev));
        }
        match slot.frame.take() {
            Some(f) => Ok(Some(SourceEvent::Frame(f))),
            None if slot.ended => Ok(None),
            None => Ok(Some(SourceEvent::Idle)),
        }
    }
    fn describe(&self) -> String {
        self.describe.clone()
    }
    fn fps(&self) -> Option<f64> {
        self.shared.0.lock().ok().and_then(|s| s.fps)
    }
    fn frame_count(&self) -> Option<u64> {
        None
    }
    fn read(&self) -> u64 {
        self.shared.0.lock().map(|s| s.read).unwrap_or(0)
    }
    fn skipped(&self) -> u64 {
        self.shared.0.lock().map(|s| s.skipped).unwrap_or(0)
    }
    fn dropped(&self) -> u64 {
        self.shared.0.lock().map(|s| s.dropped).unwrap_or(0)
    }
    fn is_live(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source that takes its time over each frame and says when it has been dropped.
    struct Slow {
        dropped: Arc<AtomicBool>,
    }

    impl Drop for Slow {
        fn drop(&mut self) {
            self.dropped.store(true, Ordering::SeqCst);
        }
    }

    impl FrameSource for Slow {
        fn next_event(&mut self) -> Result<Option<SourceEvent>, SourceError> {
            std::thread::sleep(Duration::from_millis(40));
            let frame = Mat::new_rows_cols_with_default(4, 4, opencv::core::CV_8UC3, opencv::core::Scalar::all(0.0)).map_err(|e| SourceError::Camera { index: 0, message: e.to_string() })?;
            Ok(Some(SourceEvent::Frame(Frame::new(0, 0.0, frame))))
        }
        fn describe(&self) -> String {
            "slow".into()
        }
        fn fps(&self) -> Option<f64> {
            None
        }
        fn frame_count(&self) -> Option<u64> {
            None
        }
        fn read(&self) -> u64 {
            0
        }
        fn skipped(&self) -> u64 {
            0
        }
    }

    #[test]
    fn a_prefetching_source_is_stopped_and_waited_for_when_dropped() -> Result<(), Box<dyn std::error::Error>> {
        // The decoder must not outlive its source's owner: a program that ends while it is still
        // decoding (inside OpenCV) dies of a segmentation fault as OpenCV's statics go.
        let dropped = Arc::new(AtomicBool::new(false));
        let mut fetch = prefetch(Box::new(Slow { dropped: dropped.clone() }), 2)?;
        assert!(matches!(fetch.next_event()?, Some(SourceEvent::Frame(_))));
        // The decoder is now decoding ahead, or blocked on the full queue.
        drop(fetch);
        assert!(dropped.load(Ordering::SeqCst), "the decoder thread (which owns the source) has ended");
        Ok(())
    }

    #[test]
    fn a_live_source_hands_over_the_newest_frame_and_drops_stale_ones() -> Result<(), Box<dyn std::error::Error>> {
        // The sample clip played as a camera, in real time, to a consumer far slower than its
        // frame rate: it must get the newest frame each time, not fall behind through a queue.
        let clip = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/clips/clip-00001.avi");
        let mut cam = CameraSource::open_file(&clip, None)?;
        assert!(cam.is_live());
        let period = 1.0 / cam.fps().unwrap_or(15.0);
        let mut indices = Vec::new();
        while indices.len() < 3 {
            match cam.next_event()? {
                Some(SourceEvent::Frame(f)) => indices.push(f.index),
                Some(_) => {}
                None => break,
            }
            // Busy for several frame periods, as an analysis can be.
            std::thread::sleep(Duration::from_secs_f64(6.0 * period));
        }
        assert_eq!(indices.len(), 3, "{indices:?}");
        assert!(indices.windows(2).all(|w| w[1] > w[0] + 1), "a stale frame was handed over: {indices:?}");
        assert!(cam.dropped() > 0);
        Ok(())
    }

    #[test]
    fn numbered_files_sort_by_number_and_globs_match() {
        let mut v: Vec<PathBuf> = ["f-10.jpg", "f-2.jpg", "f-1.jpg", "f-100.jpg"].iter().map(PathBuf::from).collect();
        v.sort_by_key(|p| numeric_key(p));
        let names: Vec<String> = v.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(names, ["f-1.jpg", "f-2.jpg", "f-10.jpg", "f-100.jpg"]);
        assert!(wildcard_match("f-*.jpg", "f-10.jpg"));
        assert!(wildcard_match("f-??.jpg", "f-10.jpg"));
        assert!(!wildcard_match("f-*.png", "f-10.jpg"));
        assert!(wildcard_match("*", "anything"));
    }

    #[test]
    fn image_folders_read_in_order_and_skip_bad_files() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        for (i, v) in [(1, 10u8), (2, 20), (10, 100)] {
            let img = image::RgbImage::from_pixel(80, 64, image::Rgb([v, v, v]));
            std::fs::write(dir.path().join(format!("f-{i}.jpg")), crate::synth::effects::jpeg(&img, 95)?)?;
        }
        std::fs::write(dir.path().join("f-3.jpg"), b"junk")?;
        let mut s = open_recorded(dir.path())?;
        let mut seen = Vec::new();
        while let Some(ev) = s.next_event()? {
            if let SourceEvent::Frame(f) = ev {
                seen.push((f.index, *f.image.at_2d::<opencv::core::Vec3b>(0, 0)?));
            }
        }
        assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), [0, 1, 3]);
        assert!(seen[2].1[0] > 90, "f-10 last");
        assert_eq!((s.read(), s.skipped()), (3, 1));
        Ok(())
    }

    /// The sample clip (640×360 MJPG), read reduced: every frame once, in order, at half size,
    /// the full picture decodable from each; cut in half, the rest is counted as skipped and no
    /// frame is read twice.
    #[test]
    fn mjpeg_frames_decode_reduced_and_full_on_demand() -> Result<(), Box<dyn std::error::Error>> {
        let clip = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/clips/clip-00001.avi");
        let dir = tempfile::tempdir()?;
        let bytes = std::fs::read(&clip)?;
        let cut = dir.path().join("cut.avi");
        std::fs::write(&cut, &bytes[..bytes.len() / 2])?;
        for (path, whole) in [(clip, true), (cut, false)] {
            let mut v = VideoFile::open(&path)?;
            assert_eq!(v.frame_size(), Some((640, 360)));
            assert_eq!(v.reduce(2), 2);
            let mut indices = Vec::new();
            while let Some(ev) = v.next_event()? {
                let SourceEvent::Frame(f) = ev else { continue };
                if f.index > 0 {
                    assert_eq!((f.reduced, f.image.cols(), f.image.rows()), (2, 320, 180));
                }
                if f.index % 20 == 1 {
                    let full = f.full()?;
                    assert_eq!((full.cols(), full.rows()), (640, 360));
                }
                indices.push(f.index);
            }
            assert!(indices.windows(2).all(|w| w[1] > w[0]), "{indices:?}");
            assert_eq!(v.read() + v.skipped(), 68, "{path:?}");
            assert_eq!(v.skipped() == 0, whole, "{path:?}: {} skipped", v.skipped());
        }
        Ok(())
    }

    #[test]
    fn bad_inputs_are_errors_not_panics() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        assert!(matches!(open_recorded(&dir.path().join("missing.avi")), Err(SourceError::Read { .. })));
        std::fs::write(dir.path().join("empty.avi"), b"")?;
        assert!(matches!(open_recorded(&dir.path().join("empty.avi")), Err(SourceError::Empty { .. })));
        std::fs::write(dir.path().join("text.mp4"), b"this is not a video at all, just some words")?;
        assert!(matches!(open_recorded(&dir.path().join("text.mp4")), Err(SourceError::NotVideo { .. })));
        assert!(matches!(open_recorded(&dir.path().join("none-*.jpg")), Err(SourceError::NoImages { .. })));
        Ok(())
    }

    #[test]
    fn no_camera_is_a_clean_error() {
        if Path::new("/dev/video7").exists() {
            return;
        }
        let err = CameraSource::open(CameraOptions { index: 7, ..CameraOptions::default() }).err();
        assert!(err.is_some_and(|e| e.to_string().contains("no camera at index 7")));
    }
}
