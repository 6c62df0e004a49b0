//! Where one key's bytes are (MEMORY TIERS): in the hot tier, in the
//! decoded-collection cache, in the memtables, in SST files. The records
//! are the key's meta record (`meta` CF) and, for a chunked string or a
//! collection, every record under its `member_prefix` in the member CFs
//! (see keys.rs). Reading the SST share may read index blocks from disk:
//! call it where blocking reads are allowed.

use rocksdb::{Direction, IteratorMode, ReadOptions, ReadTier};

use crate::keys::{member_prefix, meta_key};
use crate::{Cf, Result, Txn};

/// One key's bytes per tier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyTiers {
    /// Its meta record in the hot tier (0 when not there).
    pub hot_bytes: u64,
    /// Its decoded members in the collection cache (0 when not there).
    pub cache_bytes: u64,
    /// Its records (keys and values) still in the memtables.
    pub memtable_bytes: u64,
    /// RocksDB's approximate size of its records in SST files.
    pub disk_bytes: u64,
}

impl KeyTiers {
    /// What of the key is in memory now.
    pub fn ram_bytes(&self) -> u64 {
        self.hot_bytes + self.cache_bytes + self.memtable_bytes
    }
}

/// The first key after every key starting with `prefix`.
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    // All 0xff: no key follows; the range runs to the end.
    vec![0xff; prefix.len() + 1]
}

impl Txn<'_> {
    /// The tiers of `key` in logical database `db`; `None` if it does not
    /// exist. Blocking: run off the network threads.
    pub fn key_tiers(&mut self, db: u8, key: &[u8]) -> Result<Option<KeyTiers>> {
        // SST sizes may read index blocks: never on a memory-only run.
        if self.mode() == crate::ReadMode::MemoryOnly {
            return Err(crate::StorageError::Incomplete);
        }
        let Some(meta) = self.meta(db, key)? else {
            return Ok(None);
        };
        let pdb = self.physical(db);
        let inner = self.inner;
        let meta_raw = meta_key(pdb, key);
        let mut tiers = KeyTiers {
            hot_bytes: inner.hot.peek_bytes(&meta_raw),
            cache_bytes: inner.coll.bytes_of(&meta_raw),
            ..KeyTiers::default()
        };
        let mut ranges = vec![(Cf::Meta, meta_raw.clone(), prefix_end(&meta_raw))];
        if let Some(version) = meta.version() {
            let prefix = member_prefix(pdb, key, version);
            for cf in [Cf::Data, Cf::ZScore, Cf::Stream] {
                ranges.push((cf, prefix.clone(), prefix_end(&prefix)));
            }
        }
        for (cf, start, end) in ranges {
            let Some(handle) = inner.cf(cf) else {
                continue;
            };
            let sizes = inner
                .db
                .get_approximate_sizes_cf(&handle, &[rocksdb::Range::new(&start, &end)]);
            tiers.disk_bytes += sizes.first().copied().unwrap_or(0);
            // The memtables alone (RocksDB's memtable-only iterator).
            let mut options = ReadOptions::default();
            options.set_read_tier(ReadTier::Memtable);
            options.set_iterate_upper_bound(end.clone());
            let records = inner.db.iterator_cf_opt(
                &handle,
                options,
                IteratorMode::From(&start, Direction::Forward),
            );
            for record in records {
                let (k, v) = record.map_err(crate::StorageError::from)?;
                tiers.memtable_bytes += (k.len() + v.len()) as u64;
            }
        }
        Ok(Some(tiers))
    }
}
