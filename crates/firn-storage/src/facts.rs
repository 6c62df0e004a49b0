//! The `facts` column family: each meta record's header alone (type,
//! flags, expiry: `meta::Facts`), under the same key. The writer writes and
//! deletes it in the same RocksDB batch as the meta record (writer.rs
//! `put_sorted`); a flush range-deletes both. A write that replaces a value
//! (SET, MSET, DEL, EXPIRE's deletions...) reads the header here instead
//! of the whole record (`Txn::raw_facts`): 1.5M keys of 1 KB take about
//! 40 MB of facts against 1.5 GB of values, so the facts stay in the block
//! cache when the values do not, and the write reads nothing from disk.
//!
//! A database written before the column family existed gets it built from
//! its meta records when it opens (`ensure_complete`), before anything
//! else reads it; a System record says the build finished, so a crash in
//! the middle builds it again on the next open.

use rocksdb::{ReadOptions, WriteBatch, WriteOptions, DB};

use crate::error::{Result, StorageError};
use crate::keys::PAST_EVERY_KEY;
use crate::meta::Facts;
use crate::Cf;

/// The System record that says the facts are complete.
pub(crate) const FACTS_COMPLETE_KEY: &[u8] = b"facts";

/// Bytes of facts per batch while building them.
const BUILD_BATCH_BYTES: usize = 4 << 20;

fn cf(db: &DB, cf: Cf) -> Result<&rocksdb::ColumnFamily> {
    db.cf_handle(cf.name())
        .ok_or_else(|| StorageError::Rocks(format!("no column family {}", cf.name())))
}

/// Builds the facts from the meta records unless a finished build is on
/// record. Returns how many it wrote (0 when they were complete already).
pub(crate) fn ensure_complete(db: &DB) -> Result<u64> {
    let system = cf(db, Cf::System)?;
    if db.get_cf(system, FACTS_COMPLETE_KEY)?.is_some() {
        return Ok(0);
    }
    let (meta, facts) = (cf(db, Cf::Meta)?, cf(db, Cf::Facts)?);
    // A build a crash interrupted left some: start again from nothing.
    let mut batch = WriteBatch::default();
    batch.delete_range_cf(facts, &[][..], &PAST_EVERY_KEY[..]);
    db.write(batch)?;
    let mut read = ReadOptions::default();
    read.fill_cache(false);
    read.set_readahead_size(2 << 20);
    let mut iter = db.raw_iterator_cf_opt(meta, read);
    iter.seek_to_first();
    let (mut batch, mut bytes, mut written) = (WriteBatch::default(), 0usize, 0u64);
    while let (Some(key), Some(value)) = (iter.key(), iter.value()) {
        let header = Facts::header_len(value).unwrap_or(value.len());
        batch.put_cf(facts, key, &value[..header]);
        bytes += key.len() + header;
        written += 1;
        if bytes >= BUILD_BATCH_BYTES {
            db.write(std::mem::take(&mut batch))?;
            bytes = 0;
        }
        iter.next();
    }
    iter.status()?;
    batch.put_cf(system, FACTS_COMPLETE_KEY, b"1");
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    db.write_opt(batch, &sync)?;
    if written > 0 {
        tracing::info!(
            keys = written,
            "built the facts column family from the meta records"
        );
    }
    Ok(written)
}

/// Marks the facts complete (after a checkpoint load derived them).
pub(crate) fn mark_complete(db: &DB) -> Result<()> {
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    db.put_cf_opt(cf(db, Cf::System)?, FACTS_COMPLETE_KEY, b"1", &sync)?;
    Ok(())
}
