//! The replay loop shared by `winkeye replay` and `winkeye eval --what replay`: frames from a
//! recorded source through the [`Tracker`], each event handed on with the wall-clock time since
//! its frame left the decoder, and the `end` event last.

use super::events::{Event, EventKind};
use super::{Analyser, TrackError, Tracker};
use crate::capture::{Frame, FrameSource, SourceError, SourceEvent};
use std::time::{Duration, Instant};

/// Why the loop stopped early.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The source failed.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// A frame could not be tracked.
    #[error(transparent)]
    Track(#[from] TrackError),
    /// Where the events or pictures go failed.
    #[error(transparent)]
    Output(Box<dyn std::error::Error + Send + Sync>),
}

impl RunError {
    /// Wraps an output's error.
    pub fn output(e: impl std::error::Error + Send + Sync + 'static) -> RunError {
        RunError::Output(Box::new(e))
    }
}

/// How the footage ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Every frame was read.
    Footage,
    /// Stopped on request (Ctrl-C).
    Interrupted,
}

impl Ending {
    /// The `end` event's `reason`.
    pub fn reason(self) -> &'static str {
        match self {
            Ending::Footage => "end_of_footage",
            Ending::Interrupted => "interrupted",
        }
    }
}

/// What the caller does with the loop's output.
pub trait Hooks<A: Analyser> {
    /// An event, and the wall-clock time from its frame leaving the source to the event being
    /// ready (zero for the `end` event).
    fn event(&mut self, event: &Event, since_read: Duration) -> Result<(), RunError>;
    /// Every frame read (also those skipped by the stride), after the tracker has seen it.
    fn frame(&mut self, _frame: &Frame, _tracker: &Tracker<A>) -> Result<(), RunError> {
        Ok(())
    }
    /// A message for a person.
    fn warning(&mut self, _message: String) {}
    /// Whether to stop now.
    fn interrupted(&self) -> bool {
        false
    }
}

/// What the loop did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// How it ended.
    pub ending: Ending,
    /// Frames read and decoded.
    pub read: u64,
    /// Frames that could not be decoded.
    pub skipped: u64,
    /// Wall-clock time of the whole loop.
    pub elapsed: Duration,
}

/// The `end` event for a source.
pub fn end_event(frame: u64, t_s: f64, source: &dyn FrameSource, processed: u64, settled: u64, ending: Ending) -> Event {
    Event::new(
        frame,
        t_s,
        EventKind::End {
            frames_read: source.read(),
            frames_skipped: source.skipped(),
            frames_processed: processed,
            frames_dropped: source.dropped(),
            settled,
            reason: ending.reason().into(),
        },
    )
}

/// Runs recorded footage through `tracker`, looking at every `stride`-th frame, until the footage
/// ends or `hooks` asks to stop; the `end` event goes out last.
pub fn replay<A: Analyser>(source: &mut dyn FrameSource, tracker: &mut Tracker<A>, stride: u64, hooks: &mut dyn Hooks<A>) -> Result<Summary, RunError> {
    let mut events = Vec::new();
    let (mut last_frame, mut last_t) = (0u64, 0.0f64);
    let mut last_pushed: Option<Frame> = None;
    let started = Instant::now();
    let ending = loop {
        if hooks.interrupted() {
            break Ending::Interrupted;
        }
        let Some(ev) = source.next_event()? else { break Ending::Footage };
        let read_at = Instant::now();
        let SourceEvent::Frame(frame) = ev else { continue };
        (last_frame, last_t) = (frame.index, frame.t_s);
        if frame.index % stride.max(1) == 0 {
            tracker.push(&frame, &mut events)?;
            let took = read_at.elapsed();
            for e in events.drain(..) {
                hooks.event(&e, took)?;
            }
            for w in tracker.take_warnings() {
                hooks.warning(w);
            }
        }
        hooks.frame(&frame, tracker)?;
        if frame.index % stride.max(1) == 0 {
            last_pushed = Some(frame);
        }
    };
    // Footage that ends at rest, but sooner after the last motion than the settle time.
    if let (Ending::Footage, Some(last)) = (ending, &last_pushed) {
        tracker.end_of_footage(last, &mut events);
        for e in events.drain(..) {
            hooks.event(&e, Duration::ZERO)?;
        }
        for w in tracker.take_warnings() {
            hooks.warning(w);
        }
    }
    let stats = tracker.stats();
    hooks.event(&end_event(last_frame, last_t, source, stats.processed, stats.settled, ending), Duration::ZERO)?;
    Ok(Summary { ending, read: source.read(), skipped: source.skipped(), elapsed: started.elapsed() })
}
