//! Operations on keys whatever their type: existence, deletion, expiry,
//! copy/rename/move, scanning and random sampling of the `meta` CF.
//!
//! Scans and random sampling run over one of two sources of meta records:
//! a command's [`Txn`] (memory tier plus pending writes, for short steps on
//! a network thread) or a [`KeyspaceView`] (one RocksDB snapshot, for work
//! that grows with the data, on a blocking thread).

use bytes::Bytes;
use rocksdb::{ReadOptions, Snapshot};

use crate::batch::CommitBatch;
use crate::engine::Engine;
use crate::error::{Result, StorageError};
use crate::keys::{self, member_prefix};
use crate::member_filter::PinMembers;
use crate::meta::{Body, Meta};
use crate::state::Inner;
use crate::txn::{ReadMode, ScanStep, Txn};
use crate::watch::WatchedState;
use crate::Cf;

/// Members per staged batch of a big copy (RENAME, COPY, MOVE of a big
/// collection or string): one such batch is pending at a time.
const STAGED_COPY_ENTRIES: usize = 4096;

/// Live meta of a key, as TYPE/OBJECT/TTL need it.
pub type KeyInfo = Meta;

/// One SCAN step: the keys found and where to continue (`None` = done).
#[derive(Debug, Default)]
pub struct ScanPage {
    pub keys: Vec<Bytes>,
    pub next_after: Option<Bytes>,
}

/// What a bounded RANDOMKEY search found.
#[derive(Debug, PartialEq, Eq)]
pub enum RandomPick {
    Key(Bytes),
    /// The whole database was visited: it holds no live key.
    Empty,
    /// Only expired keys within the visit budget: search further elsewhere.
    Undecided,
}

impl Txn<'_> {
    pub fn exists(&mut self, db: u8, key: &[u8]) -> Result<bool> {
        Ok(self.meta(db, key)?.is_some())
    }

    /// Deletes a key of any type in O(1); returns whether it existed.
    pub fn delete_key(&mut self, db: u8, key: &[u8]) -> Result<bool> {
        if self.meta(db, key)?.is_none() {
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
        Ok(match self.raw_meta(pdb, key)? {
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
        // A sorted set also has its by-score index in `zscore`.
        for cf in [Cf::Data, Cf::ZScore] {
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

/// A source of `meta` records in key order.
trait MetaSource {
    fn scan_meta(
        &mut self,
        start: &[u8],
        end: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &Bytes) -> ScanStep,
    ) -> Result<()>;
}

impl MetaSource for Txn<'_> {
    fn scan_meta(
        &mut self,
        start: &[u8],
        end: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &Bytes) -> ScanStep,
    ) -> Result<()> {
        self.scan(Cf::Meta, start, end, visit)
    }
}

/// The keys of physical database `pdb` after `after`, `count` records at
/// most; see [`Txn::scan_keys`].
fn scan_keys_in(
    source: &mut impl MetaSource,
    pdb: u8,
    now_ms: u64,
    after: Option<&[u8]>,
    count: usize,
    mut keep: impl FnMut(&[u8], &Meta) -> bool,
) -> Result<ScanPage> {
    let start = match after {
        Some(after) => {
            let mut k = keys::meta_key(pdb, after);
            k.push(0);
            k
        }
        None => vec![pdb],
    };
    let end = keys::prefix_end(&[pdb]);
    let count = count.max(1);
    let mut page = ScanPage::default();
    let mut visited = 0usize;
    let mut last_key = None;
    let mut decode_error = None;
    source.scan_meta(&start, end.as_deref(), &mut |raw_key, raw_value| {
        let Some((_, user_key)) = keys::parse_meta_key(raw_key) else {
            return ScanStep::Continue;
        };
        visited += 1;
        match Meta::decode(raw_value) {
            Ok(meta) if !meta.is_expired(now_ms) && keep(user_key, &meta) => {
                page.keys.push(Bytes::copy_from_slice(user_key));
            }
            Ok(_) => {}
            Err(e) => decode_error = Some(e),
        }
        if visited >= count {
            last_key = Some(Bytes::copy_from_slice(user_key));
            ScanStep::Stop
        } else {
            ScanStep::Continue
        }
    })?;
    if let Some(e) = decode_error {
        return Err(e);
    }
    page.next_after = last_key;
    Ok(page)
}

/// The first live key at or after the position `seed` picks in physical
/// database `pdb`, wrapping around once; see [`Txn::random_key`].
fn random_key_in(
    source: &mut impl MetaSource,
    pdb: u8,
    now_ms: u64,
    seed: u64,
    max_visits: usize,
) -> Result<RandomPick> {
    let slot = (seed % 16384) as u16;
    let mut start = vec![pdb];
    start.extend_from_slice(&slot.to_be_bytes());
    let end = keys::prefix_end(&[pdb]);
    let mut visited = 0usize;
    for (from, to) in [(start.clone(), end), (vec![pdb], Some(start))] {
        let mut found = None;
        source.scan_meta(&from, to.as_deref(), &mut |raw_key, raw_value| {
            visited += 1;
            if let (Some((_, user_key)), Ok(meta)) =
                (keys::parse_meta_key(raw_key), Meta::decode(raw_value))
            {
                if !meta.is_expired(now_ms) {
                    found = Some(Bytes::copy_from_slice(user_key));
                    return ScanStep::Stop;
                }
            }
            if visited >= max_visits {
                ScanStep::Stop
            } else {
                ScanStep::Continue
            }
        })?;
        if let Some(key) = found {
            return Ok(RandomPick::Key(key));
        }
        if visited >= max_visits {
            return Ok(RandomPick::Undecided);
        }
    }
    Ok(RandomPick::Empty)
}

/// A read-only, point-in-time view of one logical database's keys, for
/// commands whose work grows with the data (KEYS, SCAN with a large COUNT,
/// RANDOMKEY over expired-heavy data). It is one RocksDB snapshot, merged
/// with nothing else, and its reads may wait for the disk: use it on a
/// blocking thread only. Its reads do not fill the block cache, so a full
/// scan does not evict the hot working set.
pub struct KeyspaceView<'e> {
    pub(crate) inner: &'e Inner,
    /// Declared before the count, so dropped before it.
    pub(crate) snapshot: Snapshot<'e>,
    _pin: PinMembers,
    pub(crate) pdb: u8,
    pub(crate) now_ms: u64,
}

impl Engine {
    /// Opens a [`KeyspaceView`] of logical database `db` that contains
    /// every write submitted before the call. Blocks until those writes are
    /// committed: never call it on a network thread.
    ///
    /// Writes (and flushes, through their fences) become visible to other
    /// commands when they are submitted, before RocksDB has them; a
    /// snapshot taken earlier could miss a key another client has already
    /// read. So an empty batch goes through the writer as a barrier: once
    /// its ticket resolves, every batch queued before it has been written
    /// or given up on (its outcome does not matter here). This is the only
    /// place a view depends on how the writer reports commits.
    pub fn keyspace_view(&self, db: u8) -> Result<KeyspaceView<'_>> {
        let inner = self.inner();
        let barrier = inner.submit(CommitBatch {
            db,
            ..Default::default()
        })?;
        let _written_or_given_up = barrier.wait_blocking();
        // Counted before the snapshot exists (member_filter.rs).
        let pin = PinMembers::new(inner);
        Ok(KeyspaceView {
            inner,
            snapshot: inner.db.snapshot(),
            _pin: pin,
            pdb: inner.db_map.physical(db),
            now_ms: crate::now_ms(),
        })
    }
}

impl MetaSource for KeyspaceView<'_> {
    fn scan_meta(
        &mut self,
        start: &[u8],
        end: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &Bytes) -> ScanStep,
    ) -> Result<()> {
        let handle = self
            .inner
            .cf(Cf::Meta)
            .ok_or(StorageError::Corrupt("missing column family"))?;
        let mut ro = ReadOptions::default();
        ro.fill_cache(false);
        if let Some(end) = end {
            ro.set_iterate_upper_bound(end.to_vec());
        }
        let mut iter = self.snapshot.raw_iterator_cf_opt(handle, ro);
        iter.seek(start);
        while let (Some(key), Some(value)) = (iter.key(), iter.value()) {
            if let ScanStep::Stop = visit(key, &Bytes::copy_from_slice(value)) {
                return Ok(());
            }
            iter.next();
        }
        Ok(iter.status()?)
    }
}

impl KeyspaceView<'_> {
    /// The view's clock: keys expiring at or before it are not returned.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// [`Txn::scan_keys`] over the snapshot; `usize::MAX` visits everything.
    pub fn scan_keys(
        &mut self,
        after: Option<&[u8]>,
        count: usize,
        keep: impl FnMut(&[u8], &Meta) -> bool,
    ) -> Result<ScanPage> {
        let (pdb, now_ms) = (self.pdb, self.now_ms);
        scan_keys_in(self, pdb, now_ms, after, count, keep)
    }

    /// Visits every live key of the view in order until `visit` returns
    /// false.
    pub fn visit_keys(&mut self, mut visit: impl FnMut(&[u8]) -> bool) -> Result<()> {
        let (pdb, now_ms) = (self.pdb, self.now_ms);
        let end = keys::prefix_end(&[pdb]);
        let mut decode_error = None;
        self.scan_meta(&[pdb], end.as_deref(), &mut |raw_key, raw_value| {
            let Some((_, user_key)) = keys::parse_meta_key(raw_key) else {
                return ScanStep::Continue;
            };
            match Meta::decode(raw_value) {
                Ok(meta) if meta.is_expired(now_ms) => ScanStep::Continue,
                Ok(_) if visit(user_key) => ScanStep::Continue,
                Ok(_) => ScanStep::Stop,
                Err(e) => {
                    decode_error = Some(e);
                    ScanStep::Stop
                }
            }
        })?;
        decode_error.map_or(Ok(()), Err)
    }

    /// [`Txn::random_key`] without a budget: `None` only if the database
    /// holds no live key.
    pub fn random_key(&mut self, seed: u64) -> Result<Option<Bytes>> {
        let (pdb, now_ms) = (self.pdb, self.now_ms);
        Ok(match random_key_in(self, pdb, now_ms, seed, usize::MAX)? {
            RandomPick::Key(key) => Some(key),
            RandomPick::Empty | RandomPick::Undecided => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ExpireAction, ReadMode};

    use crate::tests::open;

    /// Queues one SET without waiting for it to be committed.
    fn submit_set(engine: &Engine, key: &[u8], expire: ExpireAction) {
        let mut txn = engine.txn(ReadMode::Blocking);
        txn.set_string(0, key, Bytes::from_static(b"v"), expire)
            .expect("set");
        txn.commit().expect("commit");
    }

    fn all_keys(view: &mut KeyspaceView<'_>) -> Vec<Bytes> {
        let page = view.scan_keys(None, usize::MAX, |_, _| true).expect("scan");
        assert!(page.next_after.is_none());
        page.keys
    }

    #[test]
    fn a_view_holds_every_write_queued_before_it_and_none_after() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        for i in 0..2000u32 {
            submit_set(&engine, format!("k{i:04}").as_bytes(), ExpireAction::Clear);
        }
        let past = crate::now_ms() - 1;
        submit_set(&engine, b"expired", ExpireAction::At(past));
        let mut view = engine.keyspace_view(0).expect("view");
        submit_set(&engine, b"later", ExpireAction::Clear);
        let keys = all_keys(&mut view);
        assert_eq!(keys.len(), 2000);
        assert!(!keys.contains(&Bytes::from_static(b"expired")));
        assert!(!keys.contains(&Bytes::from_static(b"later")));
        // Paged like SCAN: every key once, in order.
        let mut paged = Vec::new();
        let mut after: Option<Bytes> = None;
        loop {
            let page = view
                .scan_keys(after.as_deref(), 300, |_, _| true)
                .expect("scan");
            paged.extend(page.keys);
            match page.next_after {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        assert_eq!(paged, keys);
        drop(view);
        let mut fresh = engine.keyspace_view(0).expect("view");
        assert_eq!(all_keys(&mut fresh).len(), 2001);
        assert!(all_keys(&mut engine.keyspace_view(3).expect("view")).is_empty());
        drop(fresh);
        engine.shutdown();
    }

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
