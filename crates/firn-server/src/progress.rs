//! Progress of long operations: a full sync from a Firn primary
//! ("full-sync"), a live import from a Redis primary ("import"), DEBUG
//! RELOAD ("debug-reload") and the start-up's replay of RocksDB's WAL
//! ("startup-replay"). INFO persistence, the status page and the metrics
//! read them from `Server::progress`.
//!
//! Whoever runs an operation holds an `Arc<Operation>` and moves its
//! counters (atomics: updating costs a relaxed store, never a lock); the
//! registry keeps only a `Weak` to it, taken under a lock once, at the
//! start. The operation ends when it is finished or its last `Arc` is
//! dropped (an early return, an error); its final state is then kept as
//! `last_finished`. An offline command shows its operation on the terminal
//! with cli_progress.rs.

use parking_lot::Mutex;
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// The registry of running operations.
#[derive(Default)]
pub struct Progress {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    /// Running operations, oldest first (dead ones pruned on each start).
    running: Mutex<Vec<Weak<Operation>>>,
    last_finished: Mutex<Option<OperationSnapshot>>,
}

/// One running operation's counters.
pub struct Operation {
    kind: &'static str,
    unit: &'static str,
    started_unix_ms: u64,
    total: AtomicU64,
    done: AtomicU64,
    finished: AtomicBool,
    registry: Weak<Shared>,
}

/// An operation as it stood when read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationSnapshot {
    pub kind: &'static str,
    pub unit: &'static str,
    pub started_unix_ms: u64,
    /// 0 while the total is unknown.
    pub total: u64,
    pub done: u64,
    pub finished_unix_ms: Option<u64>,
}

impl Progress {
    /// Registers an operation of `kind`, counted in `unit`, of `total`
    /// units (0 = unknown). It runs until finished or dropped.
    pub fn start(&self, kind: &'static str, unit: &'static str, total: u64) -> Arc<Operation> {
        let operation = Arc::new(Operation {
            kind,
            unit,
            started_unix_ms: firn_storage::now_ms(),
            total: AtomicU64::new(total),
            done: AtomicU64::new(0),
            finished: AtomicBool::new(false),
            registry: Arc::downgrade(&self.shared),
        });
        let mut running = self.shared.running.lock();
        running.retain(|op| op.strong_count() > 0);
        running.push(Arc::downgrade(&operation));
        operation
    }

    /// The operations running now, oldest first.
    pub fn snapshot(&self) -> Vec<OperationSnapshot> {
        let running = self.shared.running.lock();
        running
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|op| !op.finished.load(Ordering::Acquire))
            .map(|op| op.snapshot())
            .collect()
    }

    /// The operation that ended last (finished or dropped), as it ended.
    pub fn last_finished(&self) -> Option<OperationSnapshot> {
        self.shared.last_finished.lock().clone()
    }
}

impl Operation {
    pub fn set_total(&self, total: u64) {
        self.total.store(total, Ordering::Relaxed);
    }

    pub fn advance(&self, units: u64) {
        self.done.fetch_add(units, Ordering::Relaxed);
    }

    pub fn set_done(&self, done: u64) {
        self.done.store(done, Ordering::Relaxed);
    }

    /// Ends the operation (once; later calls do nothing) and keeps its
    /// final state as the registry's `last_finished`.
    pub fn finish(&self) {
        if self.finished.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut last = self.snapshot();
        last.finished_unix_ms = Some(firn_storage::now_ms().max(last.started_unix_ms));
        if let Some(registry) = self.registry.upgrade() {
            *registry.last_finished.lock() = Some(last);
        }
    }

    pub fn snapshot(&self) -> OperationSnapshot {
        OperationSnapshot {
            kind: self.kind,
            unit: self.unit,
            started_unix_ms: self.started_unix_ms,
            total: self.total.load(Ordering::Relaxed),
            done: self.done.load(Ordering::Relaxed),
            finished_unix_ms: None,
        }
    }
}

impl Drop for Operation {
    fn drop(&mut self) {
        self.finish();
    }
}

impl OperationSnapshot {
    /// How much is done, from 0 to 1; `None` while the total is unknown.
    pub fn fraction(&self) -> Option<f64> {
        (self.total > 0).then(|| (self.done as f64 / self.total as f64).min(1.0))
    }

    /// Seconds left at the pace so far (rounded up); `None` while the
    /// total is unknown or nothing is done yet.
    pub fn eta_secs(&self, now_ms: u64) -> Option<u64> {
        if self.total == 0 || self.done == 0 {
            return None;
        }
        let left = self.total.saturating_sub(self.done);
        let elapsed_ms = now_ms.saturating_sub(self.started_unix_ms) as u128;
        let left_ms = elapsed_ms * left as u128 / self.done as u128;
        Some(u64::try_from(left_ms.div_ceil(1000)).unwrap_or(u64::MAX))
    }
}

/// A reader that counts the bytes read through it as its operation's
/// progress (`firn import-rdb` reading its file).
pub struct CountedRead<R> {
    inner: R,
    operation: Arc<Operation>,
}

impl<R> CountedRead<R> {
    pub fn new(inner: R, operation: Arc<Operation>) -> CountedRead<R> {
        CountedRead { inner, operation }
    }
}

impl<R: Read> Read for CountedRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.operation.advance(n as u64);
        Ok(n)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A snapshot of an import started at 10 s, `done` of `total` bytes
    /// (also cli_progress.rs's tests).
    pub(crate) fn snapshot(total: u64, done: u64) -> OperationSnapshot {
        OperationSnapshot {
            kind: "import",
            unit: "bytes",
            started_unix_ms: 10_000,
            total,
            done,
            finished_unix_ms: None,
        }
    }

    #[test]
    fn fraction_is_none_while_the_total_is_unknown() {
        assert_eq!(snapshot(0, 5).fraction(), None);
        assert_eq!(snapshot(200, 50).fraction(), Some(0.25));
        assert_eq!(snapshot(100, 100).fraction(), Some(1.0));
        // A total that was too small never shows more than all of it.
        assert_eq!(snapshot(100, 150).fraction(), Some(1.0));
    }

    #[test]
    fn eta_follows_the_pace_so_far() {
        // A quarter in 4 s: 12 s left.
        assert_eq!(snapshot(100, 25).eta_secs(14_000), Some(12));
        // Rounded up: 1 unit left after 1.5 s for 2 units.
        assert_eq!(snapshot(3, 2).eta_secs(11_500), Some(1));
        assert_eq!(snapshot(100, 100).eta_secs(20_000), Some(0));
        assert_eq!(snapshot(100, 0).eta_secs(20_000), None);
        assert_eq!(snapshot(0, 10).eta_secs(20_000), None);
        // A clock behind the start does not underflow.
        assert_eq!(snapshot(100, 50).eta_secs(0), Some(0));
    }

    #[test]
    fn running_operations_are_listed_oldest_first_until_they_end() {
        let progress = Progress::default();
        let sync = progress.start("full-sync", "bytes", 1000);
        let reload = progress.start("debug-reload", "column-families", 0);
        sync.advance(300);
        sync.advance(200);
        reload.set_total(9);
        reload.set_done(4);
        let now = progress.snapshot();
        assert_eq!(now.len(), 2);
        assert_eq!(
            (now[0].kind, now[0].done, now[0].total),
            ("full-sync", 500, 1000)
        );
        assert_eq!(
            (now[1].kind, now[1].done, now[1].total),
            ("debug-reload", 4, 9)
        );
        assert_eq!(progress.last_finished(), None);

        reload.finish();
        reload.finish();
        let now = progress.snapshot();
        assert_eq!(now.len(), 1);
        let last = progress.last_finished().expect("kept");
        assert_eq!((last.kind, last.done, last.total), ("debug-reload", 4, 9));
        assert!(last
            .finished_unix_ms
            .is_some_and(|at| at >= last.started_unix_ms));
    }

    #[test]
    fn a_counted_read_advances_its_operation() {
        let progress = Progress::default();
        let operation = progress.start("rdb-import", "bytes", 11);
        let mut reader = CountedRead::new(&b"hello world"[..], operation.clone());
        let mut first = [0u8; 4];
        reader.read_exact(&mut first).unwrap();
        assert_eq!(operation.snapshot().done, 4);
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).unwrap();
        assert_eq!(operation.snapshot().done, 11);
    }

    #[test]
    fn a_dropped_operation_ends_and_is_kept_as_it_stood() {
        let progress = Progress::default();
        let import = progress.start("import", "bytes", 0);
        import.set_done(77);
        drop(import);
        assert!(progress.snapshot().is_empty());
        let last = progress.last_finished().expect("kept");
        assert_eq!((last.kind, last.done, last.total), ("import", 77, 0));
        // A new start prunes the dead entry.
        let _replay = progress.start("startup-replay", "bytes", 10);
        assert_eq!(progress.shared.running.lock().len(), 1);
    }
}
