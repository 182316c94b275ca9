//! The event stream, `winkeye.event/1`: JSON Lines, one object per line, each line written whole
//! and flushed as it happens.
//!
//! Each line goes out in a single `write_all` of the complete line including its newline, straight
//! to the file (no user-space buffer that could hold half a line), so a killed process leaves only
//! whole lines behind.
//!
//! Where the lines go ([`EventSink::create`]): to a file, each line is written to `OUT` itself as
//! it happens (follow it with `tail -f OUT`). The file is opened (created if absent) when the
//! command has opened its input, but an existing `OUT` is emptied only when the first event is
//! written, so a run that fails before it has anything to say leaves the old stream whole. `-`
//! writes to standard output; a FIFO or device (`/dev/null`) is written as it is.

use crate::report::position::{Flag, Position};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The `format` string of every event.
pub const EVENT_FORMAT: &str = "winkeye.event/1";

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind {
    /// The scene came to rest: the position.
    Settled {
        /// The full position document.
        position: Box<Position>,
    },
    /// Something started moving.
    Motion {
        /// How much of the mat changed, in mm².
        area_mm2: f64,
    },
    /// What changed between the last two settled positions.
    Shot(super::diff::Shot),
    /// A rule flag newly raised.
    Flag {
        /// The flag, as in the position document.
        flag: Flag,
    },
    /// The calibration no longer fits (the mat or the camera moved), or none could be made.
    CalibrationLost {
        /// Why, in one line.
        reason: String,
    },
    /// A calibration fits again.
    CalibrationOk {
        /// Residual RMS of the new fit, in pixels.
        rms_px: f64,
    },
    /// The camera stopped delivering frames.
    CameraLost {
        /// What went wrong, in one line.
        error: String,
        /// Seconds until the next attempt to reopen it.
        retry_in_s: f64,
    },
    /// The camera delivers again.
    CameraOk {},
    /// The stream ended.
    End {
        /// Frames read and decoded.
        frames_read: u64,
        /// Frames that could not be decoded (corrupt or cut off) and were skipped.
        frames_skipped: u64,
        /// Frames analysed for motion (every `stride`-th frame read; live: those not dropped).
        frames_processed: u64,
        /// Live only: frames dropped because a newer one had arrived.
        frames_dropped: u64,
        /// Settled positions emitted.
        settled: u64,
        /// Why it ended: `end_of_footage`, `interrupted` (Ctrl-C) or `error`.
        reason: String,
    },
}

/// One line of the stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// Always [`EVENT_FORMAT`].
    pub format: &'static str,
    /// Seconds into the footage (or since the start, live).
    pub t_s: f64,
    /// Frame index.
    pub frame: u64,
    /// What happened, with its fields.
    #[serde(flatten)]
    pub kind: EventKind,
}

impl Event {
    /// An event at frame `frame`, `t_s` seconds in.
    pub fn new(frame: u64, t_s: f64, kind: EventKind) -> Event {
        Event { format: EVENT_FORMAT, t_s: crate::report::round3(t_s), frame, kind }
    }

    /// The event's `kind` string.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            EventKind::Settled { .. } => "settled",
            EventKind::Motion { .. } => "motion",
            EventKind::Shot(_) => "shot",
            EventKind::Flag { .. } => "flag",
            EventKind::CalibrationLost { .. } => "calibration_lost",
            EventKind::CalibrationOk { .. } => "calibration_ok",
            EventKind::CameraLost { .. } => "camera_lost",
            EventKind::CameraOk {} => "camera_ok",
            EventKind::End { .. } => "end",
        }
    }

    /// The event as one line of JSON, newline included.
    pub fn to_line(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut v = serde_json::to_vec(self)?;
        v.push(b'\n');
        Ok(v)
    }
}

/// Why an event could not be written.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// The stream's file could not be created.
    #[error("cannot create {path}: {source}")]
    Create {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A line could not be written.
    #[error("cannot write to {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// An event could not be encoded (a bug).
    #[error("cannot encode an event: {0}")]
    Encode(#[from] serde_json::Error),
}

enum Target {
    Stdout,
    /// A file, or something that is not a regular file (a FIFO, /dev/null, a terminal), written
    /// where it is; `started` once the first line went in (a regular file was emptied then).
    File { file: std::fs::File, path: PathBuf, special: bool, started: bool },
    Memory(Vec<u8>),
}

/// Where events go: a file (written as it happens), standard output, or memory (for tests).
pub struct EventSink {
    target: Target,
    written: u64,
}

impl EventSink {
    /// Starts a stream to `path` (`-` for standard output). Call only once the input has been
    /// opened: this opens `OUT`, creating it if absent, and empties it at the first event.
    pub fn create(path: &Path) -> Result<EventSink, EventError> {
        if path.as_os_str() == "-" {
            return Ok(EventSink { target: Target::Stdout, written: 0 });
        }
        // A link is followed, so that the file it names is written and the link kept.
        let path = crate::report::output::through_links(path);
        let special = crate::report::output::is_special(&path);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(!special)
            .truncate(false)
            .open(&path)
            .map_err(|source| EventError::Create { path: path.clone(), source })?;
        Ok(EventSink { target: Target::File { file, path, special, started: false }, written: 0 })
    }

    /// A stream kept in memory.
    pub fn memory() -> EventSink {
        EventSink { target: Target::Memory(Vec::new()), written: 0 }
    }

    /// The lines written so far, for a memory sink.
    pub fn memory_lines(&self) -> Vec<String> {
        match &self.target {
            Target::Memory(v) => String::from_utf8_lossy(v).lines().map(str::to_owned).collect(),
            _ => Vec::new(),
        }
    }

    /// Events written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Writes one event as one whole line and flushes it.
    pub fn emit(&mut self, event: &Event) -> Result<(), EventError> {
        let line = event.to_line()?;
        match &mut self.target {
            Target::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(&line).and_then(|_| out.flush()).map_err(|source| EventError::Write { path: "-".into(), source })?;
            }
            Target::File { file, path, special, started } => {
                if !*started && !*special {
                    file.set_len(0).map_err(|source| EventError::Write { path: path.clone(), source })?;
                }
                *started = true;
                file.write_all(&line).and_then(|_| file.flush()).map_err(|source| EventError::Write { path: path.clone(), source })?;
            }
            Target::Memory(v) => v.extend_from_slice(&line),
        }
        self.written += 1;
        Ok(())
    }

    /// Ends the stream: syncs a regular file to disk.
    pub fn finish(self) -> Result<(), EventError> {
        if let Target::File { file, path, special: false, .. } = self.target {
            file.sync_all().map_err(|source| EventError::Write { path, source })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_whole_and_readable_as_they_happen() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let out = dir.path().join("events.jsonl");
        std::fs::write(&out, "old\n")?;
        let mut sink = EventSink::create(&out)?;
        assert_eq!(std::fs::read_to_string(&out)?, "old\n", "the old stream stands until the first event");
        sink.emit(&Event::new(3, 0.1, EventKind::Motion { area_mm2: 120.0 }))?;
        let so_far = std::fs::read_to_string(&out)?;
        assert!(so_far.ends_with('\n') && so_far.lines().count() == 1 && so_far.contains("motion"), "{so_far}");
        sink.emit(&Event::new(9, 0.3, EventKind::End { frames_read: 10, frames_skipped: 0, frames_processed: 10, frames_dropped: 0, settled: 0, reason: "end_of_footage".into() }))?;
        sink.finish()?;
        let text = std::fs::read_to_string(&out)?;
        let lines: Vec<serde_json::Value> = text.lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["format"], EVENT_FORMAT);
        assert_eq!(lines[0]["kind"], "motion");
        assert_eq!(lines[0]["frame"], 3);
        assert_eq!(lines[1]["kind"], "end");
        assert_eq!(lines[1]["frames_read"], 10);
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_in_place_not_replaced() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let fifo = dir.path().join("events.fifo");
        if !std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
            return Ok(());
        }
        let f2 = fifo.clone();
        let reader = std::thread::spawn(move || std::fs::read_to_string(f2));
        let mut sink = EventSink::create(&fifo)?;
        sink.emit(&Event::new(0, 0.0, EventKind::CameraOk {}))?;
        sink.finish()?;
        let text = reader.join().map_err(|_| "reader")??;
        assert!(text.contains("camera_ok"));
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata(&fifo)?.file_type().is_fifo(), "still a FIFO");
        Ok(())
    }
}
