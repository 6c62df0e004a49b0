//! Waiting for a condition that another process brings about (a replica
//! catching up, a sentinel promoting one), with a bound.

use std::path::Path;
use std::time::{Duration, Instant};

/// Polls `ok` every 50 ms until it holds; panics naming `what` after
/// `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("timed out after {timeout:?} waiting for {what}");
}

/// The words of a config file's `name` line (empty: no such line), quotes
/// dropped (Firn quotes a value whole, Redis does not).
pub fn config_file_words(file: &Path, name: &str) -> Vec<String> {
    let prefix = format!("{name} ");
    std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .lines()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
        .unwrap_or_default()
        .split_whitespace()
        .map(|w| w.trim_matches('"').to_string())
        .collect()
}
