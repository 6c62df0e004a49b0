//! A completion per committed batch. The writer resolves it once RocksDB
//! has the batch (per the `appendfsync` policy) or has given up on it; a
//! connection awaits the tickets of the batches its replies depend on
//! (its own writes, and pending writes of others that it read), so a reply
//! never leaves before what it shows is durable, and a client is told of a
//! failure only for a batch its reply depended on.

use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

use crate::error::{Result, StorageError};

const PENDING: u8 = 0;
const WRITTEN: u8 = 1;
const FAILED: u8 = 2;

pub(crate) struct BatchDone {
    seq: u64,
    state: AtomicU8,
    notify: Notify,
    /// For the few waiters outside the async runtime.
    lock: Mutex<()>,
    cv: Condvar,
}

/// A handle on one batch's outcome; cheap to clone.
#[derive(Clone)]
pub struct Ticket(pub(crate) Arc<BatchDone>);

impl Ticket {
    pub(crate) fn new(seq: u64) -> Ticket {
        Ticket(Arc::new(BatchDone {
            seq,
            state: AtomicU8::new(PENDING),
            notify: Notify::new(),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }))
    }

    pub fn seq(&self) -> u64 {
        self.0.seq
    }

    pub fn is_done(&self) -> bool {
        self.0.state.load(Ordering::Acquire) != PENDING
    }

    fn outcome(&self) -> Result<()> {
        match self.0.state.load(Ordering::Acquire) {
            FAILED => Err(StorageError::WriteFailed(
                "the write could not be made durable".into(),
            )),
            _ => Ok(()),
        }
    }

    /// Waits asynchronously until the batch is durable or given up on.
    pub async fn wait(&self) -> Result<()> {
        loop {
            // Created before the check: notify_waiters reaches it even
            // though it has not been polled yet.
            let notified = self.0.notify.notified();
            if self.is_done() {
                return self.outcome();
            }
            notified.await;
        }
    }

    /// Blocks the calling thread; never call it on a network thread.
    pub fn wait_blocking(&self) -> Result<()> {
        let mut guard = self.0.lock.lock();
        while !self.is_done() {
            self.0.cv.wait(&mut guard);
        }
        drop(guard);
        self.outcome()
    }

    pub(crate) fn resolve(&self, written: bool) {
        {
            let _guard = self.0.lock.lock();
            self.0
                .state
                .store(if written { WRITTEN } else { FAILED }, Ordering::Release);
        }
        self.0.cv.notify_all();
        self.0.notify.notify_waiters();
    }
}

impl std::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ticket({})", self.0.seq)
    }
}
