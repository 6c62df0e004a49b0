//! What the engine's memory holds, each component counted once (INFO
//! `memory` and `storage`).
//!
//! RocksDB's column families share one block cache (the `facts` column
//! family has one of its own, carved out of the same share), so its usage
//! is read from the caches themselves, never summed over column families. That usage
//! already contains the memtables (charged through the write-buffer
//! manager) and the index and filter blocks; they are reported as parts of
//! it, not added to it.

use crate::state::Inner;

/// The engine's memory, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryUsage {
    /// The hot tier's records, weighed with its per-entry overhead.
    pub hot_tier_bytes: u64,
    /// What the block cache holds: data blocks, index and filter blocks
    /// and the memtables' reservations.
    pub block_cache_bytes: u64,
    pub block_cache_capacity_bytes: u64,
    /// Entries in use by a reader or pinned (top-level and L0 index and
    /// filter blocks, memtable reservations): the cache cannot evict them.
    pub block_cache_pinned_bytes: u64,
    /// Memtables of every column family; part of `block_cache_bytes`.
    pub memtable_bytes: u64,
    /// Index and filter blocks; part of `block_cache_bytes`. RocksDB
    /// refreshes this figure at most every 10 seconds, to 3 digits.
    pub index_filter_bytes: u64,
    /// Open SST readers' own memory, outside the cache.
    pub table_reader_bytes: u64,
    /// Writes queued for the writer but not yet in RocksDB.
    pub pending_write_bytes: u64,
}

impl MemoryUsage {
    /// The engine's total: every component once.
    pub fn total_bytes(&self) -> u64 {
        self.hot_tier_bytes
            + self.block_cache_bytes
            + self.table_reader_bytes
            + self.pending_write_bytes
    }
}

impl MemoryUsage {
    /// The engine's memory now.
    pub(crate) fn of(inner: &Inner) -> MemoryUsage {
        let (block_cache_bytes, block_cache_pinned_bytes) = {
            let cache = inner.block_cache.lock();
            let facts = inner.facts_cache.lock();
            (
                (cache.get_usage() + facts.0.get_usage()) as u64,
                (cache.get_pinned_usage() + facts.0.get_pinned_usage()) as u64,
            )
        };
        let facts_capacity = inner.facts_cache.lock().1 as u64;
        let index_filter_bytes = inner
            .db
            .property_value("rocksdb.block-cache-entry-stats")
            .ok()
            .flatten()
            .map_or(0, |text| index_filter_bytes(&text));
        MemoryUsage {
            hot_tier_bytes: inner.hot.used_bytes() + inner.coll.used_bytes(),
            block_cache_bytes,
            block_cache_capacity_bytes: inner
                .db
                .property_int_value("rocksdb.block-cache-capacity")
                .ok()
                .flatten()
                .unwrap_or(0)
                + facts_capacity,
            block_cache_pinned_bytes,
            memtable_bytes: inner.property_sum("rocksdb.cur-size-all-mem-tables"),
            index_filter_bytes,
            table_reader_bytes: inner.property_sum("rocksdb.estimate-table-readers-mem"),
            pending_write_bytes: inner.overlay.bytes(),
        }
    }
}

/// Index and filter bytes from RocksDB's `block-cache-entry-stats` text:
/// `... IndexBlock(12,1.50 MB,2.3%) FilterBlock(3,20.00 KB,0.1%) ...`.
/// The map form of the property is not in RocksDB's C API.
fn index_filter_bytes(stats: &str) -> u64 {
    ["IndexBlock", "FilterBlock", "FilterMetaBlock"]
        .iter()
        .filter_map(|role| role_bytes(stats, role))
        .sum()
}

fn role_bytes(stats: &str, role: &str) -> Option<u64> {
    let start = stats.find(&format!(" {role}("))? + role.len() + 2;
    let inside = &stats[start..start + stats[start..].find(')')?];
    let size = inside.split(',').nth(1)?;
    let (number, unit) = size.trim().split_once(' ')?;
    let number: f64 = number.parse().ok()?;
    let scale = match unit {
        "KB" => 1u64 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => return None,
    };
    Some((number * scale as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_stats_text_is_parsed_per_role() {
        let text = "Block cache LRUCache@0x1#7 capacity: 40.00 MB seed: 1 usage: 9.00 MB \
                    table_size: 4096 occupancy: 87 collections: 3 last_copies: 1 \
                    last_secs: 0.001 secs_since: 0\n\
                    Block cache entry stats(count,size,portion): DataBlock(50,800.00 KB,2%) \
                    DeprecatedFilterBlock(1,9.00 MB,1%) FilterBlock(4,1.50 MB,3.75%) \
                    IndexBlock(3,20.00 KB,0.05%) WriteBuffer(8,8.00 MB,20%)\n";
        assert_eq!(role_bytes(text, "FilterBlock"), Some(3 << 19));
        assert_eq!(role_bytes(text, "IndexBlock"), Some(20 << 10));
        assert_eq!(role_bytes(text, "FilterMetaBlock"), None);
        assert_eq!(index_filter_bytes(text), (3 << 19) + (20 << 10));
        assert_eq!(index_filter_bytes("garbage"), 0);
        assert_eq!(role_bytes(" IndexBlock(1,2.00 PB,1%)", "IndexBlock"), None);
    }
}
