//! The hot tier's share for small collections: the members of a
//! collection of up to [`MAX_MEMBERS`] members, decoded, in member order,
//! per column family (a sorted set has its `data` members and its `zscore`
//! index). A hit answers a point read or a range walk of the collection
//! with a binary search in memory instead of RocksDB iterators. Larger
//! collections keep their meta record in the hot tier and their recently
//! used members in RocksDB's block cache.
//!
//! Consistency (the cache never answers with stale members):
//! - an entry is keyed by the collection's physical meta key and column
//!   family, and carries the version it was read at: a reader uses it only
//!   for the version its own meta record names, so a deleted, flushed,
//!   expired or re-created collection never matches an old entry;
//! - every commit removes the entries of the keys whose members it writes,
//!   while its command still holds their locks (before any other locked
//!   reader can look); a meta-only write changes no member, and a change
//!   of version is caught by the version check;
//! - a reader fills an entry only while holding the key's lock, after a
//!   complete walk that met no pending write of the overlay and no write of
//!   its own transaction.

use bytes::Bytes;
use quick_cache::sync::Cache;
use quick_cache::Weighter;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::Cf;

/// Collections up to this many members are cached decoded (Redis's
/// listpack thresholds are 128 to 512 entries).
pub const MAX_MEMBERS: u64 = 512;
/// ... and up to this many bytes of members and values.
const MAX_BYTES: usize = 64 * 1024;

/// The cached members of one collection version in one column family.
pub struct Members {
    pub version: u64,
    /// `(member, value)` in member byte order.
    pub entries: Vec<(Bytes, Bytes)>,
    bytes: usize,
}

impl Members {
    pub fn new(version: u64, entries: Vec<(Bytes, Bytes)>) -> Option<Members> {
        let bytes = entries.iter().map(|(m, v)| m.len() + v.len() + 32).sum();
        (bytes <= MAX_BYTES).then_some(Members {
            version,
            entries,
            bytes,
        })
    }

    /// The value of `member`, if present.
    pub fn get(&self, member: &[u8]) -> Option<&Bytes> {
        self.entries
            .binary_search_by(|(m, _)| m.as_ref().cmp(member))
            .ok()
            .map(|at| &self.entries[at].1)
    }
}

#[derive(Clone)]
struct MembersWeight;

impl Weighter<Vec<u8>, Arc<Members>> for MembersWeight {
    fn weight(&self, key: &Vec<u8>, value: &Arc<Members>) -> u64 {
        (key.len() + value.bytes + 64) as u64
    }
}

pub struct CollCache {
    cache: Option<Cache<Vec<u8>, Arc<Members>, MembersWeight>>,
    pub hits: AtomicU64,
}

/// The cache key: column family, then the physical meta key.
fn cache_key(cf: Cf, meta_key: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(1 + meta_key.len());
    key.push(cf as u8);
    key.extend_from_slice(meta_key);
    key
}

impl CollCache {
    /// A cache of about `capacity_bytes`; 0 disables it.
    pub fn new(capacity_bytes: u64) -> Self {
        let cache = (capacity_bytes > 0).then(|| {
            let items = (capacity_bytes / 1024).clamp(256, 1 << 20) as usize;
            Cache::with_weighter(items, capacity_bytes, MembersWeight)
        });
        CollCache {
            cache,
            hits: AtomicU64::new(0),
        }
    }

    /// The members of version `version` of the collection at `meta_key`.
    pub fn get(&self, cf: Cf, meta_key: &[u8], version: u64) -> Option<Arc<Members>> {
        let cache = self.cache.as_ref()?;
        if cache.is_empty() {
            return None;
        }
        let found = cache
            .get(&cache_key(cf, meta_key))
            .filter(|m| m.version == version)?;
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some(found)
    }

    pub fn put(&self, cf: Cf, meta_key: &[u8], members: Members) {
        if let Some(cache) = &self.cache {
            cache.insert(cache_key(cf, meta_key), Arc::new(members));
        }
    }

    /// The bytes the cache counts for the key at `meta_key` (its weight,
    /// every column family's members), without counting a hit.
    pub fn bytes_of(&self, meta_key: &[u8]) -> u64 {
        let Some(cache) = self.cache.as_ref().filter(|c| !c.is_empty()) else {
            return 0;
        };
        [Cf::Data, Cf::ZScore]
            .into_iter()
            .map(|cf| {
                let key = cache_key(cf, meta_key);
                cache
                    .peek(&key)
                    .map_or(0, |members| MembersWeight.weight(&key, &members))
            })
            .sum()
    }

    /// Forgets every column family's members of the key at `meta_key`.
    pub fn remove(&self, meta_key: &[u8]) {
        if let Some(cache) = self.cache.as_ref().filter(|c| !c.is_empty()) {
            for cf in [Cf::Data, Cf::ZScore] {
                cache.remove(&cache_key(cf, meta_key));
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.cache.as_ref().is_none_or(|c| c.is_empty())
    }

    pub fn clear(&self) {
        if let Some(cache) = &self.cache {
            cache.clear();
        }
    }

    pub fn set_capacity(&self, capacity_bytes: u64) {
        if let Some(cache) = &self.cache {
            cache.set_capacity(capacity_bytes.max(1 << 20));
        }
    }

    pub fn used_bytes(&self) -> u64 {
        self.cache.as_ref().map_or(0, |c| c.weight())
    }
}
