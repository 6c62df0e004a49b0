//! What an offline command (`firn import-rdb`, and any later one such as
//! an offline check) shows of its long operation while it runs: an
//! indicatif bar on standard error when that is a terminal, and otherwise
//! a plain log line every [`LOG_INTERVAL`] (through `tracing`, so a
//! `logfile` gets it too) and one when it is done.
//!
//! The command moves an `Operation`'s counters (progress.rs) as it works;
//! a thread of this module reads them ten times a second, so the work pays
//! nothing for being shown. While a bar is on the terminal, log lines
//! written through [`StderrLog`] are printed above it instead of through
//! it.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use parking_lot::Mutex;
use std::io::{IsTerminal, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::progress::{Operation, OperationSnapshot};

/// How often the counters are read (and the bar redrawn).
const TICK: Duration = Duration::from_millis(100);
/// How often a log line tells how far the operation is, off a terminal.
pub const LOG_INTERVAL: Duration = Duration::from_secs(5);

/// The bar on the terminal now, if any: what [`StderrLog`] prints around.
static ACTIVE_BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// How an operation is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Display {
    /// An indicatif bar on standard error.
    Bar,
    /// Log lines.
    Log,
}

impl Display {
    /// A bar when standard error is a terminal, log lines otherwise.
    pub fn for_stderr() -> Display {
        if std::io::stderr().is_terminal() {
            Display::Bar
        } else {
            Display::Log
        }
    }
}

/// An operation being shown; [`Shown::finish`] ends the display with its
/// outcome (dropping it ends it as failed).
pub struct Shown {
    stop: Option<mpsc::Sender<bool>>,
    thread: Option<JoinHandle<()>>,
}

/// Shows `operation`, named `what` ("Importing dump.rdb"), the way
/// [`Display::for_stderr`] picks.
pub fn show(operation: Arc<Operation>, what: String) -> Shown {
    show_as(Display::for_stderr(), operation, what)
}

/// Shows `operation` as `display` says.
pub fn show_as(display: Display, operation: Arc<Operation>, what: String) -> Shown {
    let (stop, stopped) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("firn-progress".into())
        .spawn(move || match display {
            Display::Bar => run_bar(&operation, &what, &stopped),
            Display::Log => run_log(&operation, &what, &stopped),
        })
        .ok();
    Shown {
        stop: Some(stop),
        thread,
    }
}

impl Shown {
    /// Ends the display: the bar stays at its last state (complete when
    /// `succeeded`); off a terminal a last line gives the total and the
    /// time when `succeeded`.
    pub fn finish(mut self, succeeded: bool) {
        self.end(succeeded);
    }

    fn end(&mut self, succeeded: bool) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(succeeded);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Shown {
    fn drop(&mut self) {
        self.end(false);
    }
}

/// Waits one tick for the end: `Some(succeeded)` once it came.
fn wait_tick(stopped: &mpsc::Receiver<bool>) -> Option<bool> {
    match stopped.recv_timeout(TICK) {
        Ok(succeeded) => Some(succeeded),
        Err(RecvTimeoutError::Timeout) => None,
        Err(RecvTimeoutError::Disconnected) => Some(false),
    }
}

fn run_bar(operation: &Operation, what: &str, stopped: &mpsc::Receiver<bool>) {
    let first = operation.snapshot();
    let bar = if first.total > 0 {
        ProgressBar::with_draw_target(Some(first.total), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
    };
    bar.set_style(bar_style(first.unit, first.total > 0));
    bar.set_message(what.to_string());
    *ACTIVE_BAR.lock() = Some(bar.clone());
    let succeeded = loop {
        let now = operation.snapshot();
        if now.total > 0 && bar.length() != Some(now.total) {
            bar.set_length(now.total);
            bar.set_style(bar_style(now.unit, true));
        }
        bar.set_position(now.done);
        if let Some(succeeded) = wait_tick(stopped) {
            break succeeded;
        }
    };
    let last = operation.snapshot();
    bar.set_position(last.done);
    ACTIVE_BAR.lock().take();
    if succeeded {
        bar.set_length(last.done.max(last.total));
        bar.finish();
    } else {
        bar.abandon();
    }
    // The bar stays on its line; what is printed next starts a new one.
    let _ = std::io::stderr().write_all(b"\n");
}

/// The bar's look: bytes as KiB/MiB with their rate, other units counted;
/// a spinner while the total is unknown.
fn bar_style(unit: &str, known_total: bool) -> ProgressStyle {
    ProgressStyle::with_template(&bar_template(unit, known_total))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}

fn bar_template(unit: &str, known_total: bool) -> String {
    let counts = match (unit, known_total) {
        ("bytes", true) => {
            "{binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, {eta} left)"
        }
        ("bytes", false) => "{binary_bytes} ({binary_bytes_per_sec})",
        (_, true) => "{human_pos}/{human_len} ({per_sec}, {eta} left)",
        (_, false) => "{human_pos} ({per_sec})",
    };
    let progress = if known_total {
        "{wide_bar}"
    } else {
        "{spinner}"
    };
    format!("{{msg}} [{{elapsed_precise}}] {progress} {counts}")
}

fn run_log(operation: &Operation, what: &str, stopped: &mpsc::Receiver<bool>) {
    let started = Instant::now();
    let mut next_line = LOG_INTERVAL;
    let succeeded = loop {
        if let Some(succeeded) = wait_tick(stopped) {
            break succeeded;
        }
        if started.elapsed() >= next_line {
            next_line += LOG_INTERVAL;
            tracing::info!(
                "{}",
                progress_line(what, &operation.snapshot(), firn_storage::now_ms())
            );
        }
    };
    if succeeded {
        tracing::info!(
            "{}",
            done_line(what, &operation.snapshot(), started.elapsed())
        );
    }
}

/// `Importing dump.rdb: 1048576 of 4194304 bytes (25.00%), about 12 s left`.
pub fn progress_line(what: &str, now: &OperationSnapshot, now_ms: u64) -> String {
    let mut line = match now.fraction() {
        Some(fraction) => format!(
            "{what}: {} of {} {} ({:.2}%)",
            now.done,
            now.total,
            now.unit,
            fraction * 100.0
        ),
        None => format!("{what}: {} {}", now.done, now.unit),
    };
    if let Some(eta) = now.eta_secs(now_ms) {
        line.push_str(&format!(", about {eta} s left"));
    }
    line
}

/// `Importing dump.rdb: done, 4194304 bytes in 3.21 s`.
pub fn done_line(what: &str, last: &OperationSnapshot, took: Duration) -> String {
    format!(
        "{what}: done, {} {} in {:.2} s",
        last.done,
        last.unit,
        took.as_secs_f64()
    )
}

/// A `tracing_subscriber` writer to standard error that prints each log
/// line above the progress bar, if one is on the terminal, rather than
/// through it.
pub struct StderrLog;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for StderrLog {
    type Writer = LogLine;

    fn make_writer(&'a self) -> LogLine {
        LogLine(Vec::new())
    }
}

/// One log event's text, written out whole when the event is done.
pub struct LogLine(Vec<u8>);

impl Write for LogLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        let write = || {
            let _ = std::io::stderr().lock().write_all(&self.0);
        };
        let bar = ACTIVE_BAR.lock().clone();
        match bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::tests::snapshot;
    use crate::progress::Progress;

    #[test]
    fn a_progress_line_gives_the_share_and_the_time_left() {
        assert_eq!(
            progress_line("Importing dump.rdb", &snapshot(400, 100), 14_000),
            "Importing dump.rdb: 100 of 400 bytes (25.00%), about 12 s left"
        );
        // Nothing done yet: no time left to tell.
        assert_eq!(
            progress_line("Importing dump.rdb", &snapshot(400, 0), 14_000),
            "Importing dump.rdb: 0 of 400 bytes (0.00%)"
        );
        // An unknown total: the count alone.
        assert_eq!(
            progress_line("Checking", &snapshot(0, 7), 14_000),
            "Checking: 7 bytes"
        );
        assert_eq!(
            done_line(
                "Importing dump.rdb",
                &snapshot(400, 400),
                Duration::from_millis(3210)
            ),
            "Importing dump.rdb: done, 400 bytes in 3.21 s"
        );
    }

    #[test]
    fn every_bar_template_parses() {
        for unit in ["bytes", "keys"] {
            for known_total in [true, false] {
                let template = bar_template(unit, known_total);
                assert!(
                    ProgressStyle::with_template(&template).is_ok(),
                    "{template}"
                );
            }
        }
    }

    #[test]
    fn showing_and_finishing_leaves_no_bar_behind() {
        let progress = Progress::default();
        for display in [Display::Bar, Display::Log] {
            let operation = progress.start("rdb-import", "bytes", 10);
            let shown = show_as(display, operation.clone(), "Importing".into());
            operation.advance(10);
            shown.finish(true);
            assert!(ACTIVE_BAR.lock().is_none());
            // Dropped without finish: ended as failed, thread joined.
            let shown = show_as(display, operation, "Importing".into());
            drop(shown);
            assert!(ACTIVE_BAR.lock().is_none());
        }
    }
}
