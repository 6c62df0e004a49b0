//! A connection's MULTI state: what its session queues (`TxState`) and
//! what CLIENT LIST shows of it (`ClientTx`). Depends on nothing of the
//! server, which holds both.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use firn_storage::Watcher;

use crate::reply_mode::ReplyMode;

/// A connection's MULTI state (part of its `Session`).
#[derive(Clone, Debug, Default)]
pub struct TxState {
    /// The queued commands while in MULTI.
    pub(super) queued: Option<Vec<Vec<Bytes>>>,
    /// A command was refused while queueing (Redis's CLIENT_DIRTY_EXEC).
    pub(super) aborted: bool,
    /// Whether a queued command writes (CLIENT PAUSE WRITE holds EXEC).
    pub(super) writes: bool,
    /// While EXEC runs the queued commands: a blocking command must not
    /// block (Redis's CLIENT_DENY_BLOCKING).
    pub executing: bool,
    /// Set by EXEC for the connection: the CLIENT REPLY mode after it and
    /// whether its reply is sent (see [`take_exec_pass`]).
    pub(super) exec_pass: Option<(ReplyMode, bool)>,
}

impl TxState {
    pub fn in_multi(&self) -> bool {
        self.queued.is_some()
    }
}

/// What CLIENT LIST/INFO show of a client's transaction, and its watches.
pub struct ClientTx {
    pub watcher: Arc<Watcher>,
    /// Queued commands, -1 outside MULTI (`multi=`).
    pub(super) queued: AtomicI64,
    /// Bytes of the queued arguments plus a pointer each (`multi-mem=`).
    pub(super) memory: AtomicU64,
}

impl Default for ClientTx {
    fn default() -> Self {
        ClientTx {
            watcher: Arc::default(),
            queued: AtomicI64::new(-1),
            memory: AtomicU64::new(0),
        }
    }
}

impl ClientTx {
    /// `multi=`: queued commands, or -1 outside MULTI.
    pub fn multi(&self) -> i64 {
        self.queued.load(Ordering::Relaxed)
    }

    /// `multi-mem=`.
    pub fn multi_mem(&self) -> u64 {
        self.memory.load(Ordering::Relaxed)
    }

    /// CLIENT LIST flags: `x` in MULTI, `d` once a watched key changed.
    pub fn flags(&self) -> String {
        let mut flags = String::new();
        if self.multi() >= 0 {
            flags.push('x');
        }
        if self.watcher.is_dirty() {
            flags.push('d');
        }
        flags
    }

    pub(super) fn publish(&self, queued: i64, memory: u64) {
        self.queued.store(queued, Ordering::Relaxed);
        self.memory.store(memory, Ordering::Relaxed);
    }
}
