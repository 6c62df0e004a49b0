//! A latency histogram with fixed buckets, recorded with one atomic add
//! per bucket search: cheap enough for every read command, and exactly
//! what a Prometheus histogram exposes.

use std::sync::atomic::{AtomicU64, Ordering};

/// Upper bounds of the buckets, µs (the last bucket is +Inf).
pub const BOUNDS_US: [u64; 19] = [
    10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000,
    500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000,
];

pub struct AtomicHistogram {
    /// Per bucket (not cumulative), the last one for values beyond every bound.
    buckets: [AtomicU64; BOUNDS_US.len() + 1],
    sum_us: AtomicU64,
}

impl Default for AtomicHistogram {
    fn default() -> Self {
        AtomicHistogram {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_us: AtomicU64::new(0),
        }
    }
}

/// A copy of a histogram: cumulative counts at each bound, then the total.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub cumulative: Vec<u64>,
    pub count: u64,
    pub sum_us: u64,
}

impl AtomicHistogram {
    pub fn record(&self, micros: u64) {
        let at = BOUNDS_US.partition_point(|&b| b < micros);
        self.buckets[at].fetch_add(1, Ordering::Relaxed);
        self.sum_us.fetch_add(micros, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> Snapshot {
        let mut cumulative = Vec::with_capacity(BOUNDS_US.len());
        let mut total = 0;
        for bucket in &self.buckets[..BOUNDS_US.len()] {
            total += bucket.load(Ordering::Relaxed);
            cumulative.push(total);
        }
        total += self.buckets[BOUNDS_US.len()].load(Ordering::Relaxed);
        Snapshot {
            cumulative,
            count: total,
            sum_us: self.sum_us.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_land_in_their_bucket() {
        let h = AtomicHistogram::default();
        for us in [1, 10, 11, 2_000, 20_000_000] {
            h.record(us);
        }
        let s = h.snapshot();
        assert_eq!(s.count, 5);
        assert_eq!(s.cumulative[0], 2, "1 and 10 are at most 10");
        assert_eq!(s.cumulative[1], 3);
        assert_eq!(s.cumulative[7], 4, "2000 is at most 2500");
        assert_eq!(
            *s.cumulative.last().unwrap(),
            4,
            "20 s is beyond every bound"
        );
        assert_eq!(s.sum_us, 20_002_022);
    }
}
