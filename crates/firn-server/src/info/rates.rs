//! INFO's per-second rates (instantaneous_ops_per_sec and the network
//! kbps), from counters sampled when INFO runs.

use std::collections::VecDeque;

/// Counters sampled at most every 100 ms when INFO runs; rates are taken
/// over the samples of the last few seconds (Redis samples 16 times in
/// 1.6 s from its cron; Firn has no cron, so the window is what INFO saw).
#[derive(Default)]
pub struct RateSamples {
    samples: VecDeque<Sample>,
}

#[derive(Clone, Copy)]
pub(crate) struct Sample {
    pub(crate) at_ms: u64,
    pub(crate) commands: u64,
    pub(crate) input_bytes: u64,
    pub(crate) output_bytes: u64,
}

/// Per-second rates of commands, input bytes and output bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rates {
    pub(crate) ops: u64,
    pub(crate) input_kbps: f64,
    pub(crate) output_kbps: f64,
}

const SAMPLE_EVERY_MS: u64 = 100;
const SAMPLE_WINDOW_MS: u64 = 5_000;

impl RateSamples {
    pub(crate) fn record(&mut self, now: Sample) -> Rates {
        if self
            .samples
            .back()
            .is_none_or(|last| now.at_ms >= last.at_ms + SAMPLE_EVERY_MS)
        {
            self.samples.push_back(now);
        }
        // Keep the oldest sample inside the window, and one before it.
        while self.samples.len() > 2
            && self
                .samples
                .get(1)
                .is_some_and(|s| now.at_ms.saturating_sub(s.at_ms) >= SAMPLE_WINDOW_MS)
        {
            self.samples.pop_front();
        }
        let Some(first) = self.samples.front().copied() else {
            return Rates {
                ops: 0,
                input_kbps: 0.0,
                output_kbps: 0.0,
            };
        };
        let elapsed_ms = now.at_ms.saturating_sub(first.at_ms);
        if elapsed_ms == 0 {
            return Rates {
                ops: 0,
                input_kbps: 0.0,
                output_kbps: 0.0,
            };
        }
        let per_sec = |delta: u64| delta as f64 * 1000.0 / elapsed_ms as f64;
        Rates {
            ops: per_sec(now.commands.saturating_sub(first.commands)).round() as u64,
            input_kbps: per_sec(now.input_bytes.saturating_sub(first.input_bytes)) / 1024.0,
            output_kbps: per_sec(now.output_bytes.saturating_sub(first.output_bytes)) / 1024.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at_ms: u64, commands: u64) -> Sample {
        Sample {
            at_ms,
            commands,
            input_bytes: commands * 1024,
            output_bytes: commands * 512,
        }
    }

    #[test]
    fn rates_are_zero_until_two_samples_exist() {
        let mut r = RateSamples::default();
        assert_eq!(r.record(sample(1_000, 50)).ops, 0);
        // Too soon for a second sample: still measured against the first.
        assert_eq!(r.record(sample(1_050, 60)).ops, 200);
    }

    #[test]
    fn rates_are_per_second_over_the_window() {
        let mut r = RateSamples::default();
        r.record(sample(0, 0));
        let rates = r.record(sample(2_000, 1_000));
        assert_eq!(rates.ops, 500);
        assert!((rates.input_kbps - 500.0).abs() < 1e-9);
        assert!((rates.output_kbps - 250.0).abs() < 1e-9);
        // Old samples leave the window: the rate follows the recent load.
        r.record(sample(8_000, 1_000));
        let rates = r.record(sample(9_000, 1_000));
        assert_eq!(rates.ops, 0);
    }
}
