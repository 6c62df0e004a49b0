//! The cold-read pool: a fixed set of OS threads (`io-threads`) where
//! commands whose data is not in memory run with blocking RocksDB reads.
//! The queue is bounded (`io-queue-max`): when it is full the command gets
//! an error at once instead of the queue growing without bound. Pool
//! threads run at a lower CPU priority than the network threads, so on a
//! busy machine cold reads take the CPU time hot requests leave.
//!
//! Each job is timed (`JobTiming`): how long it waited for a thread, how
//! long until it finished, how many jobs were ahead of it. The wait for a
//! thread also goes into an HDR histogram (`PoolState::wait_histogram`),
//! and the pipeline logs slow cold commands from the timing (coldlog.rs).

/// Niceness of the cold-read pool and of long commands' threads.
pub const BACKGROUND_NICE: libc::c_int = 10;

/// Lowers the calling thread's CPU priority to [`BACKGROUND_NICE`]. On
/// Linux, PRIO_PROCESS with a thread id re-nices that thread alone; a
/// failure is harmless (the thread keeps the normal priority).
pub fn lower_thread_priority() {
    // SAFETY: plain syscalls on integers.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, BACKGROUND_NICE);
    }
}

use crossbeam_channel::{Receiver, Sender};
use hdrhistogram::Histogram;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

pub struct ColdReadPool {
    tx: Sender<Job>,
    state: Arc<PoolState>,
}

pub struct PoolState {
    pub queued: AtomicUsize,
    pub max_queued: AtomicUsize,
    pub rejected: AtomicU64,
    pub completed: AtomicU64,
    /// Microseconds from submission until a thread started the job. A
    /// record under the (uncontended) lock costs about 20 ns (measured:
    /// `recording_a_wait_is_cheap`), against the tens of µs a cold read
    /// takes at best.
    waits_us: Mutex<Histogram<u64>>,
}

/// Waits recorded up to an hour (longer ones count as an hour), to three
/// significant digits.
const WAIT_HISTOGRAM_MAX_US: u64 = 3_600_000_000;

impl Default for PoolState {
    fn default() -> Self {
        PoolState {
            queued: AtomicUsize::new(0),
            max_queued: AtomicUsize::new(0),
            rejected: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            waits_us: Mutex::new(
                Histogram::new_with_bounds(1, WAIT_HISTOGRAM_MAX_US, 3)
                    .expect("valid histogram bounds"),
            ),
        }
    }
}

impl PoolState {
    /// A copy of the histogram of queue waits (µs from submission until a
    /// pool thread started the job), since the server started.
    pub fn wait_histogram(&self) -> Histogram<u64> {
        self.waits_us.lock().clone()
    }

    fn record_wait(&self, wait_us: u64) {
        self.waits_us.lock().saturating_record(wait_us.max(1));
    }
}

/// How one job went through the pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobTiming {
    /// Microseconds from submission until it finished.
    pub wait_us: u64,
    /// Microseconds from submission until a thread started it.
    pub queue_wait_us: u64,
    /// Jobs waiting for a thread when it was submitted (itself not counted).
    pub queue_len: u64,
}

/// The queue already holds `io-queue-max` jobs.
#[derive(Debug)]
pub struct QueueFull(pub usize);

impl ColdReadPool {
    pub fn new(threads: usize, max_queued: usize) -> std::io::Result<Self> {
        let (tx, rx): (Sender<Job>, Receiver<Job>) = crossbeam_channel::unbounded();
        let state = Arc::new(PoolState::default());
        state.max_queued.store(max_queued, Ordering::Relaxed);
        for i in 0..threads.max(1) {
            let rx = rx.clone();
            let state = state.clone();
            std::thread::Builder::new()
                .name(format!("firn-io-{i}"))
                .spawn(move || {
                    lower_thread_priority();
                    while let Ok(job) = rx.recv() {
                        state.queued.fetch_sub(1, Ordering::AcqRel);
                        job();
                        state.completed.fetch_add(1, Ordering::Relaxed);
                    }
                })?;
        }
        Ok(ColdReadPool { tx, state })
    }

    pub fn state(&self) -> &PoolState {
        &self.state
    }

    pub fn set_max_queued(&self, max: usize) {
        self.state.max_queued.store(max, Ordering::Relaxed);
    }

    /// Runs `job` on a pool thread; the receiver yields its result and how
    /// long it took.
    pub fn submit<R: Send + 'static>(
        &self,
        job: impl FnOnce() -> R + Send + 'static,
    ) -> Result<oneshot::Receiver<(R, JobTiming)>, QueueFull> {
        let max = self.state.max_queued.load(Ordering::Relaxed);
        let queued = self.state.queued.fetch_add(1, Ordering::AcqRel);
        if queued >= max {
            self.state.queued.fetch_sub(1, Ordering::AcqRel);
            self.state.rejected.fetch_add(1, Ordering::Relaxed);
            return Err(QueueFull(max));
        }
        let submitted = Instant::now();
        let state = self.state.clone();
        let (done_tx, done_rx) = oneshot::channel();
        let boxed: Job = Box::new(move || {
            let queue_wait_us = submitted.elapsed().as_micros() as u64;
            state.record_wait(queue_wait_us);
            let result = job();
            let timing = JobTiming {
                wait_us: submitted.elapsed().as_micros() as u64,
                queue_wait_us,
                queue_len: queued as u64,
            };
            let _ = done_tx.send((result, timing));
        });
        if self.tx.send(boxed).is_err() {
            self.state.queued.fetch_sub(1, Ordering::AcqRel);
            return Err(QueueFull(max));
        }
        Ok(done_rx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_full_queue_rejects_instead_of_growing() {
        let pool = ColdReadPool::new(1, 1).unwrap();
        let (release_tx, release_rx) = crossbeam_channel::bounded::<()>(0);
        let (started_tx, started_rx) = crossbeam_channel::bounded::<()>(1);
        // Occupies the only thread until released.
        let busy = pool
            .submit(move || {
                let _ = started_tx.send(());
                let _ = release_rx.recv();
                1
            })
            .unwrap();
        started_rx.recv_timeout(Duration::from_secs(5)).unwrap();
        // One job may wait in the queue; the next is refused.
        let queued = pool.submit(|| 2).unwrap();
        let refused = pool.submit(|| 3);
        assert!(matches!(refused, Err(QueueFull(1))));
        assert_eq!(pool.state().rejected.load(Ordering::Relaxed), 1);
        std::thread::sleep(Duration::from_millis(20));
        release_tx.send(()).unwrap();
        let (one, busy_timing) = busy.blocking_recv().unwrap();
        assert_eq!(one, 1);
        assert_eq!(busy_timing.queue_len, 0);
        assert!(busy_timing.wait_us >= 20_000, "{busy_timing:?}");
        // The queued job waited for the busy one (running, so not in the
        // queue it found).
        let (two, timing) = queued.blocking_recv().unwrap();
        assert_eq!(two, 2);
        assert_eq!(timing.queue_len, 0);
        assert!(timing.queue_wait_us >= 20_000, "{timing:?}");
        assert!(timing.wait_us >= timing.queue_wait_us);
        // Room again once the queue drained.
        assert_eq!(pool.submit(|| 4).unwrap().blocking_recv().unwrap().0, 4);
        let waits = pool.state().wait_histogram();
        assert_eq!(waits.len(), 3);
        assert!(waits.max() >= 20_000);
    }

    #[test]
    fn recording_a_wait_is_cheap() {
        let state = PoolState::default();
        let records = 1_000_000u64;
        let started = Instant::now();
        for i in 0..records {
            state.record_wait(i % 100_000);
        }
        let per_record_ns = started.elapsed().as_nanos() as u64 / records;
        // About 20 ns in a release build, 200 ns unoptimised; the bound
        // only catches a mistake (an allocation, a resize per record).
        assert!(per_record_ns < 2_000, "{per_record_ns} ns per record");
        assert_eq!(state.wait_histogram().len(), records);
    }
}
