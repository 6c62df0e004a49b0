//! Active expiry: a background thread walks the `expire` CF (ordered by
//! time) up to now and deletes each due key through the normal locked,
//! memory-only path, so expired keys disappear without being touched, as in
//! Redis. Index entries left stale by a changed TTL, FLUSHDB or a lazy
//! deletion are removed as they are met.

use std::sync::atomic::Ordering;

use crate::engine::Engine;
use crate::error::{Result, StorageError};
use crate::keys::{expire_key, meta_key, parse_expire_key};
use crate::Cf;

/// Runs expiry cycles; owned by the server's background thread.
pub struct ExpireCycle {
    engine: Engine,
}

impl ExpireCycle {
    pub fn new(engine: Engine) -> Self {
        ExpireCycle { engine }
    }

    /// Deletes up to `max_keys` due keys; returns how many index entries were
    /// processed (so the caller can run again at once when it hit the cap).
    /// Blocking reads: never call on a network thread.
    pub fn run_once(&self, max_keys: usize) -> Result<usize> {
        let inner = self.engine.inner();
        let now = crate::now_ms();
        if now < inner.expiry_paused_until_ms.load(Ordering::Relaxed) {
            return Ok(0);
        }
        let Some(cf) = inner.cf(Cf::Expire) else {
            return Ok(0);
        };
        let mut due: Vec<(u64, u8, Vec<u8>)> = Vec::new();
        let mut ro = rocksdb::ReadOptions::default();
        ro.set_iterate_upper_bound((now + 1).to_be_bytes().to_vec());
        let mut iter = inner.db.raw_iterator_cf_opt(cf, ro);
        iter.seek_to_first();
        while iter.valid() && due.len() < max_keys {
            if let Some((at, pdb, key)) = iter.key().and_then(parse_expire_key) {
                due.push((at, pdb, key.to_vec()));
            }
            iter.next();
        }
        iter.status().map_err(StorageError::from)?;
        for (at, pdb, key) in &due {
            for attempt in 0..2 {
                match self.expire_one(*at, *pdb, key, now) {
                    Err(StorageError::Incomplete) if attempt == 0 => {
                        // Warm the block cache without holding the lock.
                        if let Some(facts_cf) = inner.cf(Cf::Facts) {
                            let _ = inner.db.get_cf(facts_cf, meta_key(*pdb, key));
                        }
                    }
                    Err(StorageError::Incomplete) => break,
                    other => {
                        other?;
                        break;
                    }
                }
            }
        }
        Ok(due.len())
    }

    fn expire_one(&self, at: u64, pdb: u8, key: &[u8], now: u64) -> Result<()> {
        let inner = self.engine.inner();
        let _guard = self.engine.lock_physical_blocking(pdb, key);
        let mut txn = self.engine.maintenance_txn();
        match txn.raw_facts(pdb, key)? {
            Some(facts) if facts.expire_at_ms == at && at <= now => {
                txn.remove_meta_physical(pdb, key, Some(&facts));
                inner.stats.expired_keys.fetch_add(1, Ordering::Relaxed);
                // Replicas and the change stream see an expiry as a DEL.
                let db = inner.db_map.logical(pdb);
                txn.set_db(db);
                txn.notify(crate::notify_class::EXPIRED, "expired", db, key);
                txn.set_replay(vec![vec![
                    bytes::Bytes::from_static(b"DEL"),
                    bytes::Bytes::copy_from_slice(key),
                ]]);
            }
            Some(meta) if meta.expire_at_ms == at => return Ok(()),
            _ => txn.delete(Cf::Expire, &expire_key(at, pdb, key)),
        }
        txn.commit()?;
        Ok(())
    }
}
