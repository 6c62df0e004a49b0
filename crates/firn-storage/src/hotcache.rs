//! The hot tier: Firn's own cache of meta records (which hold small strings
//! whole), in front of RocksDB's memtable and block cache. A hit costs a
//! hash lookup instead of a memtable skiplist search or a block decode.
//! quick_cache (S3-FIFO, sharded) does admission and eviction by weight;
//! evicting only drops the cached copy.
//!
//! Consistency rule (the cache never holds a stale record):
//! - the writer thread updates or removes an entry *after* RocksDB has the
//!   write and *before* the pending-write overlay forgets it, in commit
//!   order;
//! - a reader fills the cache from RocksDB only while holding the key's
//!   lock and only when the overlay had no pending write for the key; then
//!   no write to the key can be in flight or begin before the fill.

use bytes::Bytes;
use quick_cache::sync::Cache;
use quick_cache::Weighter;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone)]
struct RecordWeight;

impl Weighter<Vec<u8>, Bytes> for RecordWeight {
    fn weight(&self, key: &Vec<u8>, value: &Bytes) -> u64 {
        // Payload plus a rough per-entry overhead of the cache itself.
        (key.len() + value.len() + 64) as u64
    }
}

pub struct HotCache {
    cache: Option<Cache<Vec<u8>, Bytes, RecordWeight>>,
    pub hits: AtomicU64,
    pub misses: AtomicU64,
}

/// Records larger than this are left to RocksDB's block cache.
const MAX_RECORD_BYTES: usize = 16 * 1024;

impl HotCache {
    /// A cache of about `capacity_bytes`; 0 disables it.
    pub fn new(capacity_bytes: u64) -> Self {
        let cache = (capacity_bytes > 0).then(|| {
            let items = (capacity_bytes / 256).clamp(1024, 64 << 20) as usize;
            Cache::with_weighter(items, capacity_bytes, RecordWeight)
        });
        HotCache {
            cache,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    pub fn get(&self, meta_key: &[u8]) -> Option<Bytes> {
        let cache = self.cache.as_ref()?;
        let found = cache.get(meta_key);
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// The bytes of the record held for `meta_key` (0: none), without
    /// counting a hit or a miss.
    pub fn peek_bytes(&self, meta_key: &[u8]) -> u64 {
        self.cache
            .as_ref()
            .and_then(|c| c.peek(meta_key))
            .map_or(0, |record| record.len() as u64)
    }

    pub fn contains(&self, meta_key: &[u8]) -> bool {
        self.cache
            .as_ref()
            .is_some_and(|c| c.get(meta_key).is_some())
    }

    pub fn put(&self, meta_key: &[u8], record: &Bytes) {
        if let Some(cache) = &self.cache {
            if record.len() <= MAX_RECORD_BYTES {
                cache.insert(meta_key.to_vec(), record.clone());
            } else {
                cache.remove(meta_key);
            }
        }
    }

    pub fn remove(&self, meta_key: &[u8]) {
        if let Some(cache) = &self.cache {
            cache.remove(meta_key);
        }
    }

    pub fn clear(&self) {
        if let Some(cache) = &self.cache {
            cache.clear();
        }
    }

    /// Changes the capacity (a disabled cache stays disabled).
    pub fn set_capacity(&self, capacity_bytes: u64) {
        if let Some(cache) = &self.cache {
            cache.set_capacity(capacity_bytes.max(1 << 20));
        }
    }

    pub fn used_bytes(&self) -> u64 {
        self.cache.as_ref().map_or(0, |c| c.weight())
    }

    pub fn entries(&self) -> usize {
        self.cache.as_ref().map_or(0, |c| c.len())
    }
}
