//! Latency bookkeeping, as Redis 7.0 keeps it:
//! - **per-command histograms** (`latency-tracking`, on by default): every
//!   call's duration in an HDR histogram (1 ns to 1 s, 2 significant
//!   digits, as Redis's), behind LATENCY HISTOGRAM and INFO latencystats;
//! - **the latency monitor** (`latency-monitor-threshold` ms, 0 = off): the
//!   commands at least that slow, as the events `command` and
//!   `fast-command`, each a series of up to 160 samples, one per second
//!   (the worst of that second), and the worst ever, behind LATENCY
//!   LATEST, HISTORY, GRAPH, RESET and DOCTOR.
//!
//! This module holds the state and depends on nothing of the server; the
//! after-call stage records into it (`bookkeeping.rs`).

use hdrhistogram::Histogram;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Redis's LATENCY_HISTOGRAM_MIN/MAX_VALUE (ns) and precision.
const HISTOGRAM_MIN_NS: u64 = 1;
const HISTOGRAM_MAX_NS: u64 = 1_000_000_000;
const HISTOGRAM_DIGITS: u8 = 2;
/// Redis's LATENCY_TS_LEN: samples kept per event.
const SERIES_LEN: usize = 160;

/// One event's samples: `(unix seconds, ms)`, oldest first.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub samples: Vec<(u64, u64)>,
    /// The worst latency ever recorded (ms).
    pub max_ms: u64,
}

impl Series {
    /// Redis's latencyAddSample: one sample per second, the worst of it.
    fn add(&mut self, now_secs: u64, ms: u64) {
        self.max_ms = self.max_ms.max(ms);
        if let Some(last) = self.samples.last_mut() {
            if last.0 == now_secs {
                last.1 = last.1.max(ms);
                return;
            }
        }
        if self.samples.len() == SERIES_LEN {
            self.samples.remove(0);
        }
        self.samples.push((now_secs, ms));
    }
}

pub struct Latency {
    tracking: AtomicBool,
    threshold_ms: AtomicU64,
    /// Each command's and subcommand's histogram, created at its first call.
    histograms: HashMap<&'static str, Mutex<Option<Histogram<u64>>>>,
    events: Mutex<BTreeMap<&'static str, Series>>,
}

impl Latency {
    /// The state for `names`, every command and subcommand that can run.
    pub fn new(names: impl IntoIterator<Item = &'static str>) -> Latency {
        Latency {
            tracking: AtomicBool::new(true),
            threshold_ms: AtomicU64::new(0),
            histograms: names.into_iter().map(|n| (n, Mutex::new(None))).collect(),
            events: Mutex::new(BTreeMap::new()),
        }
    }

    /// `latency-tracking` and `latency-monitor-threshold`, as configured.
    pub fn configure(&self, tracking: bool, threshold_ms: u64) {
        self.tracking.store(tracking, Ordering::Relaxed);
        self.threshold_ms.store(threshold_ms, Ordering::Relaxed);
    }

    /// A call of `name` that took `micros`; `fast` names its monitor event,
    /// and `now_secs` (asked only when the monitor records it) dates it.
    pub fn record(&self, name: &str, micros: u64, fast: bool, now_secs: impl FnOnce() -> u64) {
        if self.tracking.load(Ordering::Relaxed) {
            if let Some(slot) = self.histograms.get(name) {
                let ns = micros
                    .saturating_mul(1000)
                    .clamp(HISTOGRAM_MIN_NS, HISTOGRAM_MAX_NS);
                let mut histogram = slot.lock();
                if histogram.is_none() {
                    *histogram = Histogram::new_with_bounds(
                        HISTOGRAM_MIN_NS,
                        HISTOGRAM_MAX_NS,
                        HISTOGRAM_DIGITS,
                    )
                    .ok();
                }
                if let Some(histogram) = histogram.as_mut() {
                    histogram.saturating_record(ns);
                }
            }
        }
        let threshold = self.threshold_ms.load(Ordering::Relaxed);
        let ms = micros / 1000;
        if threshold > 0 && ms >= threshold {
            let event = if fast { "fast-command" } else { "command" };
            self.events
                .lock()
                .entry(event)
                .or_default()
                .add(now_secs(), ms);
        }
    }

    /// The commands with a histogram, by name, with their calls and Redis's
    /// LATENCY HISTOGRAM buckets: `(µs, calls at most that long)`,
    /// powers of two from 1 µs, where the cumulative count grows.
    pub fn histogram(&self, name: &str) -> Option<(u64, Vec<(u64, u64)>)> {
        let slot = self.histograms.get(name)?.lock();
        let histogram = slot.as_ref()?;
        let mut buckets = Vec::new();
        let mut cumulative = 0u64;
        for step in histogram.iter_log(1024, 2.0) {
            let before = cumulative;
            cumulative += step.count_since_last_iteration();
            if cumulative > before {
                let micros = histogram.highest_equivalent(step.value_iterated_to()) / 1000;
                buckets.push((micros, cumulative));
            }
        }
        Some((histogram.len(), buckets))
    }

    /// The names of the commands that have a histogram.
    pub fn tracked(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self
            .histograms
            .iter()
            .filter(|(_, slot)| slot.lock().is_some())
            .map(|(name, _)| *name)
            .collect();
        names.sort_unstable();
        names
    }

    /// `name`'s latency at each of `percentiles` (µs, 3 decimals as
    /// Redis prints them).
    pub fn percentiles(&self, name: &str, percentiles: &[f64]) -> Option<Vec<f64>> {
        let slot = self.histograms.get(name)?.lock();
        let histogram = slot.as_ref()?;
        Some(
            percentiles
                .iter()
                .map(|p| histogram.value_at_percentile(*p) as f64 / 1000.0)
                .collect(),
        )
    }

    /// `name`'s calls, and how many took at most each of `bounds_ns`
    /// (cumulative, for a Prometheus histogram).
    pub fn cumulative(&self, name: &str, bounds_ns: &[u64]) -> Option<(u64, Vec<u64>)> {
        let slot = self.histograms.get(name)?.lock();
        let histogram = slot.as_ref()?;
        let counts = bounds_ns
            .iter()
            .map(|&b| histogram.count_between(0, b))
            .collect();
        Some((histogram.len(), counts))
    }

    /// Every event of the monitor with its series.
    pub fn events(&self) -> BTreeMap<&'static str, Series> {
        self.events.lock().clone()
    }

    /// Forgets the events named (all when `names` is empty); how many were
    /// forgotten.
    pub fn reset(&self, names: &[String]) -> usize {
        let mut events = self.events.lock();
        if names.is_empty() {
            let count = events.len();
            events.clear();
            return count;
        }
        let before = events.len();
        events.retain(|event, _| !names.iter().any(|n| n.eq_ignore_ascii_case(event)));
        before - events.len()
    }

    /// CONFIG RESETSTAT: the histograms start again.
    pub fn reset_histograms(&self) {
        for slot in self.histograms.values() {
            *slot.lock() = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_keeps_its_worst_sample_and_the_series_is_bounded() {
        let mut series = Series::default();
        series.add(10, 5);
        series.add(10, 9);
        series.add(10, 7);
        assert_eq!(series.samples, vec![(10, 9)]);
        for second in 11..11 + SERIES_LEN as u64 {
            series.add(second, 1);
        }
        assert_eq!(series.samples.len(), SERIES_LEN);
        assert_eq!(series.samples[0], (11, 1));
        assert_eq!(series.max_ms, 9);
    }

    #[test]
    fn histograms_count_calls_in_power_of_two_buckets() {
        let latency = Latency::new(["get", "set"]);
        for micros in [1, 3, 3, 100] {
            latency.record("get", micros, true, || 0);
        }
        let (calls, buckets) = latency.histogram("get").expect("get was called");
        assert_eq!(calls, 4);
        assert_eq!(buckets.last().map(|b| b.1), Some(4));
        assert!(buckets
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        assert!(latency.histogram("set").is_none());
        assert_eq!(latency.tracked(), vec!["get"]);
        let p = latency.percentiles("get", &[50.0, 100.0]).expect("tracked");
        assert!(p[0] >= 2.9 && p[0] <= 3.1 && p[1] >= 99.0, "{p:?}");
    }

    #[test]
    fn the_monitor_records_only_past_its_threshold() {
        let latency = Latency::new(["get"]);
        latency.record("get", 50_000, true, || 1);
        assert!(latency.events().is_empty());
        latency.configure(true, 10);
        latency.record("get", 5_000, true, || 1);
        latency.record("get", 50_000, false, || 2);
        let events = latency.events();
        assert_eq!(events["command"].samples, vec![(2, 50)]);
        assert_eq!(latency.reset(&[]), 1);
    }
}
