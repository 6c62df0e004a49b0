//! The cold-read pool: a fixed set of OS threads (`io-threads`) where
//! commands whose data is not in memory run with blocking RocksDB reads.
//! The queue is bounded (`io-queue-max`): when it is full the command gets
//! an error at once instead of the queue growing without bound. Pool
//! threads run at a lower CPU priority than the network threads, so on a
//! busy machine cold reads take the CPU time hot requests leave.

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
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

pub struct ColdReadPool {
    tx: Sender<Job>,
    state: Arc<PoolState>,
}

#[derive(Default)]
pub struct PoolState {
    pub queued: AtomicUsize,
    pub max_queued: AtomicUsize,
    pub rejected: AtomicU64,
    pub completed: AtomicU64,
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

    /// Runs `job` on a pool thread; the receiver yields its result.
    pub fn submit<R: Send + 'static>(
        &self,
        job: impl FnOnce() -> R + Send + 'static,
    ) -> Result<oneshot::Receiver<R>, QueueFull> {
        let max = self.state.max_queued.load(Ordering::Relaxed);
        let queued = self.state.queued.fetch_add(1, Ordering::AcqRel);
        if queued >= max {
            self.state.queued.fetch_sub(1, Ordering::AcqRel);
            self.state.rejected.fetch_add(1, Ordering::Relaxed);
            return Err(QueueFull(max));
        }
        let (done_tx, done_rx) = oneshot::channel();
        let boxed: Job = Box::new(move || {
            let _ = done_tx.send(job());
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
        release_tx.send(()).unwrap();
        assert_eq!(busy.blocking_recv().unwrap(), 1);
        assert_eq!(queued.blocking_recv().unwrap(), 2);
        // Room again once the queue drained.
        assert_eq!(pool.submit(|| 4).unwrap().blocking_recv().unwrap(), 4);
    }
}
