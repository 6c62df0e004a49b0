//! Operations on keys whatever their type: existence, deletion, expiry,
//! copy/rename/move, WATCH's probe, scanning and random sampling of the
//! `meta` CF.
//!
//! Scans and random sampling run over one of two sources of meta records:
//! a command's [`Txn`] (memory tier plus pending writes, for short steps on
//! a network thread) or a `KeyspaceView` (one RocksDB snapshot, for work
//! that grows with the data, on a blocking thread; view.rs, which also
//! holds the scans both share).

use bytes::Bytes;

use crate::error::Result;
use crate::keys::{self, member_prefix};
use crate::meta::{Body, Meta};
use crate::txn::{ReadMode, ScanStep, Txn};
use crate::view::{random_key_in, scan_keys_in, MetaSource, RandomPick, ScanPage};
use crate::watch::WatchedState;
use crate::Cf;

/// Members per staged batch of a big copy (RENAME, COPY, MOVE of a big
/// collection or string): one such batch is pending at a time.
const STAGED_COPY_ENTRIES: usize = 4096;

/// Live meta of a key, as TYPE/OBJECT/TTL need it.
pub type KeyInfo = Meta;

impl Txn<'_> {
    /// Whether `key` exists (its facts only: no value is read).
    pub fn exists(&mut self, db: u8, key: &[u8]) -> Result<bool> {
        Ok(self.facts(db, key)?.is_some())
    }

    /// Deletes a key of any type in O(1); returns whether it existed.
    pub fn delete_key(&mut self, db: u8, key: &[u8]) -> Result<bool> {
        if self.facts(db, key)?.is_none() {
            return Ok(false);
        }
        self.remove_meta(db, key)
    }

    /// Sets (`at_ms > 0`) or removes (`0`) a key's expiry. Returns false if
    /// the key does not exist.
    pub fn set_expire_at(&mut self, db: u8, key: &[u8], at_ms: u64) -> Result<bool> {
        match self.meta(db, key)? {
            None => Ok(false),
            Some(mut meta) => {
                meta.expire_at_ms = at_ms;
                self.write_meta(db, key, &meta)?;
                Ok(true)
            }
        }
    }

    /// What WATCH records of `key`: read without deleting an expired key
    /// (Redis's WATCH only asks whether the key is expired).
    pub fn watch_probe(&mut self, db: u8, key: &[u8]) -> Result<WatchedState> {
        let pdb = self.physical(db);
        let now = self.now_ms();
        Ok(match self.raw_facts(pdb, key)? {
            None => WatchedState::default(),
            Some(meta) if meta.is_expired(now) => WatchedState {
                exists: false,
                expired: true,
                expire_at_ms: meta.expire_at_ms,
            },
            Some(meta) => WatchedState {
                exists: true,
                expired: false,
                expire_at_ms: meta.expire_at_ms,
            },
        })
    }

    /// Copies `src` (db `src_db`) to `dst` (db `dst_db`) with its expiry,
    /// replacing whatever `dst` held. The caller checks existence rules.
    /// Collections and chunked strings get a fresh version: O(members).
    pub fn copy_key(&mut self, src_db: u8, src: &[u8], dst_db: u8, dst: &[u8]) -> Result<bool> {
        let Some(meta) = self.meta(src_db, src)? else {
            return Ok(false);
        };
        let body = match &meta.body {
            Body::Inline(v) => Body::Inline(v.clone()),
            Body::Chunked { version, len } => Body::Chunked {
                version: self.copy_members(src_db, src, *version, dst_db, dst)?,
                len: *len,
            },
            Body::Collection {
                version,
                size,
                extra,
            } => Body::Collection {
                version: self.copy_members(src_db, src, *version, dst_db, dst)?,
                size: *size,
                extra: extra.clone(),
            },
        };
        let copy = Meta { body, ..meta };
        self.write_meta(dst_db, dst, &copy)?;
        Ok(true)
    }

    fn copy_members(
        &mut self,
        src_db: u8,
        src: &[u8],
        version: u64,
        dst_db: u8,
        dst: &[u8],
    ) -> Result<u64> {
        let new_version = self.alloc_version();
        let (src_pdb, dst_pdb) = (self.physical(src_db), self.physical(dst_db));
        let src_prefix = member_prefix(src_pdb, src, version);
        let dst_prefix = member_prefix(dst_pdb, dst, new_version);
        let end = keys::prefix_end(&src_prefix);
        // Off the network threads (blocking reads), a big copy goes to the
        // writer in staged batches of its own, each waited for before the
        // next, instead of one batch and overlay entry per member; no meta
        // names the new version until this transaction commits.
        let staged = self.mode() == ReadMode::Blocking;
        // A sorted set also has its by-score index in `zscore`; a stream
        // lives in `stream`.
        for cf in [Cf::Data, Cf::ZScore, Cf::Stream] {
            let mut from = src_prefix.clone();
            loop {
                let mut members: Vec<(Vec<u8>, Bytes)> = Vec::new();
                let mut last: Option<Vec<u8>> = None;
                self.scan(cf, &from, end.as_deref(), |k, v| {
                    let mut target = dst_prefix.clone();
                    target.extend_from_slice(&k[src_prefix.len()..]);
                    members.push((target, v.clone()));
                    if staged && members.len() >= STAGED_COPY_ENTRIES {
                        last = Some(k.to_vec());
                        return ScanStep::Stop;
                    }
                    ScanStep::Continue
                })?;
                match last {
                    Some(mut last) => {
                        self.stage(cf, members)?;
                        // Resume just after the last member copied.
                        last.push(0);
                        from = last;
                    }
                    None => {
                        for (k, v) in members {
                            self.put(cf, &k, v);
                        }
                        break;
                    }
                }
            }
        }
        Ok(new_version)
    }

    /// Visits up to `count` keys of `db` after `after` (exclusive), returning
    /// those `keep` accepts. Expired keys are skipped. Reads the memory tier
    /// and pending writes: for small steps on a network thread (see
    /// [`KeyspaceView`] for long ones).
    pub fn scan_keys(
        &mut self,
        db: u8,
        after: Option<&[u8]>,
        count: usize,
        keep: impl FnMut(&[u8], &Meta) -> bool,
    ) -> Result<ScanPage> {
        let (pdb, now_ms) = (self.physical(db), self.now_ms());
        scan_keys_in(self, pdb, now_ms, after, count, keep)
    }

    /// A live key of `db` at or after the position `seed` picks, looking at
    /// no more than `max_visits` records (see [`RandomPick::Undecided`]).
    pub fn random_key(&mut self, db: u8, seed: u64, max_visits: usize) -> Result<RandomPick> {
        let (pdb, now_ms) = (self.physical(db), self.now_ms());
        random_key_in(self, pdb, now_ms, seed, max_visits)
    }
}

/// A command's meta records: memory tier and pending writes.
impl MetaSource for Txn<'_> {
    fn scan_meta(
        &mut self,
        start: &[u8],
        end: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &Bytes) -> bool,
    ) -> Result<()> {
        self.scan(Cf::Meta, start, end, |key, value| {
            if visit(key, value) {
                ScanStep::Continue
            } else {
                ScanStep::Stop
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_engine::{open, submit_set};
    use crate::ExpireAction;

    #[test]
    fn random_keys_pass_over_expired_ones() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        let past = crate::now_ms() - 1;
        for i in 0..500u32 {
            submit_set(
                &engine,
                format!("gone{i}").as_bytes(),
                ExpireAction::At(past),
            );
        }
        // Only expired keys: the budget runs out, the full search says empty.
        let mut txn = engine.txn(ReadMode::Blocking);
        assert_eq!(txn.random_key(0, 7, 50).unwrap(), RandomPick::Undecided);
        assert_eq!(txn.random_key(0, 7, 10_000).unwrap(), RandomPick::Empty);
        drop(txn);
        assert_eq!(
            engine.keyspace_view(0).unwrap().random_key(7).unwrap(),
            None
        );
        submit_set(&engine, b"live", ExpireAction::Clear);
        let mut view = engine.keyspace_view(0).unwrap();
        for seed in [0, 1, 999, 16_383, u64::MAX] {
            assert_eq!(
                view.random_key(seed).unwrap(),
                Some(Bytes::from_static(b"live"))
            );
        }
        drop(view);
        engine.shutdown();
    }
}
