//! The thresholds of Redis's compact encodings (`hash-max-listpack-*`,
//! `zset-max-listpack-*`, `set-max-intset-entries`), which decide when a
//! collection's sticky `big` flag is set (see `collection.rs`): the server
//! sets them from its configuration, every write reads them. They change
//! what OBJECT ENCODING and DUMP report, never how members are stored.

use std::sync::atomic::{AtomicU64, Ordering};

/// One reading of the thresholds, Redis 7.0's built-in defaults unless the
/// server set others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodingLimits {
    /// A hash with more fields converts to a hashtable.
    pub hash_max_listpack_entries: u64,
    /// A hash given a longer field or value (bytes) converts.
    pub hash_max_listpack_value: u64,
    /// A sorted set with more members converts to a skiplist.
    pub zset_max_listpack_entries: u64,
    /// A sorted set given a longer member (bytes) converts.
    pub zset_max_listpack_value: u64,
    /// A set of integers with more members converts to a hashtable.
    pub set_max_intset_entries: u64,
}

impl Default for EncodingLimits {
    /// redis-server's built-in defaults (the sample redis.conf sets
    /// `hash-max-listpack-entries 128`; the binary's default is 512).
    fn default() -> Self {
        EncodingLimits {
            hash_max_listpack_entries: 512,
            hash_max_listpack_value: 64,
            zset_max_listpack_entries: 128,
            zset_max_listpack_value: 64,
            set_max_intset_entries: 512,
        }
    }
}

/// The engine's current thresholds, read without a lock.
pub(crate) struct LimitCell([AtomicU64; 5]);

impl Default for LimitCell {
    fn default() -> Self {
        let cell = LimitCell(Default::default());
        cell.store(EncodingLimits::default());
        cell
    }
}

impl LimitCell {
    pub(crate) fn load(&self) -> EncodingLimits {
        let get = |i: usize| self.0[i].load(Ordering::Relaxed);
        EncodingLimits {
            hash_max_listpack_entries: get(0),
            hash_max_listpack_value: get(1),
            zset_max_listpack_entries: get(2),
            zset_max_listpack_value: get(3),
            set_max_intset_entries: get(4),
        }
    }

    pub(crate) fn store(&self, limits: EncodingLimits) {
        for (i, v) in [
            limits.hash_max_listpack_entries,
            limits.hash_max_listpack_value,
            limits.zset_max_listpack_entries,
            limits.zset_max_listpack_value,
            limits.set_max_intset_entries,
        ]
        .into_iter()
        .enumerate()
        {
            self.0[i].store(v, Ordering::Relaxed);
        }
    }
}
