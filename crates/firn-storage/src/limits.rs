//! The thresholds of Redis's compact encodings (`hash-max-listpack-*`,
//! `zset-max-listpack-*`, `set-max-intset-entries`), which decide when a
//! collection's sticky `big` flag is set (see `collection.rs`), and the
//! size of a stream's nodes (`stream-node-max-*`, see stream.rs): the
//! server sets them from its configuration, every write reads them. They
//! change what OBJECT ENCODING, DUMP, XINFO and approximate trimming
//! report, never how members are stored.

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
    /// A stream's node takes no entry that would bring it to this many
    /// bytes (0: no limit but Redis's 1 GiB).
    pub stream_node_max_bytes: u64,
    /// A stream's node holds at most this many entries, deleted ones
    /// included (0: no limit).
    pub stream_node_max_entries: u64,
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
            stream_node_max_bytes: 4096,
            stream_node_max_entries: 100,
        }
    }
}

/// The engine's current thresholds, read without a lock.
pub(crate) struct LimitCell([AtomicU64; 7]);

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
            stream_node_max_bytes: get(5),
            stream_node_max_entries: get(6),
        }
    }

    pub(crate) fn store(&self, limits: EncodingLimits) {
        for (i, v) in [
            limits.hash_max_listpack_entries,
            limits.hash_max_listpack_value,
            limits.zset_max_listpack_entries,
            limits.zset_max_listpack_value,
            limits.set_max_intset_entries,
            limits.stream_node_max_bytes,
            limits.stream_node_max_entries,
        ]
        .into_iter()
        .enumerate()
        {
            self.0[i].store(v, Ordering::Relaxed);
        }
    }
}
