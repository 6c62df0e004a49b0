//! One command's view of the database and its queued writes.
//!
//! Reads look, in order, at this command's own writes, the pending-write
//! overlay, and RocksDB. In `MemoryOnly` mode RocksDB may answer only from
//! the memtable and block cache; anything else is `Incomplete`, and the
//! caller re-runs the command where blocking reads are allowed. Writes are
//! buffered here and reach RocksDB only through [`Txn::commit`], so an
//! abandoned or failed execution leaves no trace.
//!
//! Meta writes go through `write_meta`/`remove_meta`, which keep the key
//! counters and the expire index exact.

use bytes::Bytes;
use rocksdb::{ReadOptions, ReadTier};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use crate::engine::{Inner, MAX_DATABASES};
use crate::error::{Result, StorageError};
use crate::keys::{self, expire_key, meta_key};
use crate::meta::Meta;
use crate::overlay::overlay_key;
use crate::writer::CommitBatch;
use crate::Cf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadMode {
    /// Memtable and block cache only: safe on a network thread.
    MemoryOnly,
    /// May read SST files from disk: I/O pool and background threads only.
    Blocking,
}

/// What a scan callback wants next.
pub(crate) enum ScanStep {
    Continue,
    Stop,
}

pub struct Txn<'e> {
    pub(crate) inner: &'e Inner,
    mode: ReadMode,
    now_ms: u64,
    writes: BTreeMap<Vec<u8>, Option<Bytes>>,
    range_deletes: Vec<(Cf, Vec<u8>, Vec<u8>)>,
    count_deltas: Vec<(u8, i64, i64)>,
    count_resets: Vec<u8>,
    max_version: u64,
    /// The caller holds the locks of every key this transaction touches.
    locked: bool,
    /// Live keys found and not found by `meta` (INFO keyspace_hits/misses).
    key_hits: u64,
    key_misses: u64,
}

fn read_options(mode: ReadMode) -> ReadOptions {
    let mut ro = ReadOptions::default();
    if mode == ReadMode::MemoryOnly {
        ro.set_read_tier(ReadTier::BlockCache);
    }
    ro
}

thread_local! {
    // Point reads reuse one ReadOptions per thread and mode instead of
    // allocating a C object per read.
    static POINT_READ_OPTIONS: [ReadOptions; 2] =
        [read_options(ReadMode::MemoryOnly), read_options(ReadMode::Blocking)];
}

impl<'e> Txn<'e> {
    pub(crate) fn new(inner: &'e Inner, mode: ReadMode, now_ms: u64, locked: bool) -> Self {
        Txn {
            inner,
            mode,
            now_ms,
            writes: BTreeMap::new(),
            range_deletes: Vec::new(),
            count_deltas: Vec::new(),
            count_resets: Vec::new(),
            max_version: 0,
            locked,
            key_hits: 0,
            key_misses: 0,
        }
    }

    /// `(hits, misses)` of key lookups so far.
    pub fn key_lookups(&self) -> (u64, u64) {
        (self.key_hits, self.key_misses)
    }

    /// The command's clock: fixed for its whole execution, as in Redis.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    pub fn mode(&self) -> ReadMode {
        self.mode
    }

    pub fn has_writes(&self) -> bool {
        !self.writes.is_empty() || !self.range_deletes.is_empty()
    }

    pub(crate) fn physical(&self, db: u8) -> u8 {
        self.inner.physical(db)
    }

    pub(crate) fn get(&mut self, cf: Cf, key: &[u8]) -> Result<Option<Bytes>> {
        if let Some(local) = self.writes.get(&overlay_key(cf, key)) {
            return Ok(local.clone());
        }
        if let Some(pending) = self.inner.overlay.get(cf, key) {
            return Ok(pending);
        }
        if cf == Cf::Meta {
            if let Some(hot) = self.inner.hot.get(key) {
                return Ok(Some(hot));
            }
        }
        let handle = self
            .inner
            .cf(cf)
            .ok_or(StorageError::Corrupt("missing column family"))?;
        let found = POINT_READ_OPTIONS.with(|opts| {
            let ro = &opts[(self.mode == ReadMode::Blocking) as usize];
            self.inner
                .db
                .get_pinned_cf_opt(handle, key, ro)
                .map(|v| v.map(|v| Bytes::copy_from_slice(&v)))
        });
        match found {
            Ok(found) => {
                self.inner
                    .stats
                    .memory_reads
                    .fetch_add(1, Ordering::Relaxed);
                if let (Cf::Meta, true, Some(record)) = (cf, self.locked, &found) {
                    // Safe: we hold the key's lock and no write is pending.
                    self.inner.hot.put(key, record);
                }
                Ok(found)
            }
            Err(e) => {
                let err = StorageError::from(e);
                if err == StorageError::Incomplete {
                    self.inner
                        .stats
                        .incomplete_reads
                        .fetch_add(1, Ordering::Relaxed);
                }
                Err(err)
            }
        }
    }

    pub(crate) fn put(&mut self, cf: Cf, key: &[u8], value: Bytes) {
        self.writes.insert(overlay_key(cf, key), Some(value));
    }

    pub(crate) fn delete(&mut self, cf: Cf, key: &[u8]) {
        self.writes.insert(overlay_key(cf, key), None);
    }

    pub(crate) fn put_system(&mut self, key: &[u8], value: Bytes) {
        self.put(Cf::System, key, value);
    }

    /// Visits live entries of `cf` in `[start, end)` in key order, merging
    /// RocksDB with pending and local writes.
    pub(crate) fn scan(
        &mut self,
        cf: Cf,
        start: &[u8],
        end: Option<&[u8]>,
        mut visit: impl FnMut(&[u8], &Bytes) -> ScanStep,
    ) -> Result<()> {
        let mut extra: BTreeMap<Vec<u8>, Option<Bytes>> = self
            .inner
            .overlay
            .range(cf, start, end)
            .into_iter()
            .collect();
        let lo = overlay_key(cf, start);
        let hi = match end {
            Some(end) => overlay_key(cf, end),
            None => vec![cf as u8 + 1],
        };
        for (k, v) in self.writes.range(lo..hi) {
            extra.insert(k[1..].to_vec(), v.clone());
        }
        let handle = self
            .inner
            .cf(cf)
            .ok_or(StorageError::Corrupt("missing column family"))?;
        let mut ro = read_options(self.mode);
        if let Some(end) = end {
            ro.set_iterate_upper_bound(end.to_vec());
        }
        let mut iter = self.inner.db.raw_iterator_cf_opt(handle, ro);
        iter.seek(start);
        let mut extra_iter = extra.into_iter().peekable();
        loop {
            let from_db = if iter.valid() { iter.key() } else { None };
            let step = match (from_db, extra_iter.peek()) {
                (None, None) => break,
                (Some(db_key), Some((extra_key, _))) if extra_key.as_slice() <= db_key => {
                    let same = extra_key.as_slice() == db_key;
                    let Some((k, v)) = extra_iter.next() else {
                        break;
                    };
                    if same {
                        iter.next();
                    }
                    match v {
                        Some(v) => visit(&k, &v),
                        None => ScanStep::Continue,
                    }
                }
                (Some(db_key), _) => {
                    let k = db_key.to_vec();
                    let v = Bytes::copy_from_slice(iter.value().unwrap_or_default());
                    iter.next();
                    visit(&k, &v)
                }
                (None, Some(_)) => {
                    let Some((k, v)) = extra_iter.next() else {
                        break;
                    };
                    match v {
                        Some(v) => visit(&k, &v),
                        None => ScanStep::Continue,
                    }
                }
            };
            if let ScanStep::Stop = step {
                return Ok(());
            }
        }
        iter.status().map_err(|e| {
            let err = StorageError::from(e);
            if err == StorageError::Incomplete {
                self.inner
                    .stats
                    .incomplete_reads
                    .fetch_add(1, Ordering::Relaxed);
            }
            err
        })
    }

    /// A fresh collection version, unique for the life of the database.
    pub(crate) fn alloc_version(&mut self) -> u64 {
        let version = self.inner.next_version.fetch_add(1, Ordering::AcqRel) + 1;
        self.max_version = self.max_version.max(version);
        version
    }

    /// The meta record physically present (possibly expired).
    pub(crate) fn raw_meta(&mut self, pdb: u8, key: &[u8]) -> Result<Option<Meta>> {
        match self.get(Cf::Meta, &meta_key(pdb, key))? {
            Some(raw) => Ok(Some(Meta::decode(&raw)?)),
            None => Ok(None),
        }
    }

    /// The live meta record of `key` in logical database `db`. An expired
    /// key is deleted on the spot (lazy expiry) and reported missing.
    pub fn meta(&mut self, db: u8, key: &[u8]) -> Result<Option<Meta>> {
        let pdb = self.physical(db);
        let found = match self.raw_meta(pdb, key)? {
            Some(meta) if meta.is_expired(self.now_ms) => {
                self.remove_meta_physical(pdb, key, Some(&meta));
                self.inner
                    .stats
                    .expired_keys
                    .fetch_add(1, Ordering::Relaxed);
                None
            }
            other => other,
        };
        if found.is_some() {
            self.key_hits += 1;
        } else {
            self.key_misses += 1;
        }
        Ok(found)
    }

    /// Stores `meta` for `key`, keeping counters and the expire index exact.
    pub(crate) fn write_meta(&mut self, db: u8, key: &[u8], meta: &Meta) -> Result<()> {
        let pdb = self.physical(db);
        self.write_meta_physical(pdb, key, meta)
    }

    pub(crate) fn write_meta_physical(&mut self, pdb: u8, key: &[u8], meta: &Meta) -> Result<()> {
        let old = self.raw_meta(pdb, key)?;
        let old_expire = old.as_ref().map_or(0, |m| m.expire_at_ms);
        let key_delta = if old.is_some() { 0 } else { 1 };
        let expire_delta = (meta.expire_at_ms != 0) as i64 - (old_expire != 0) as i64;
        if old_expire != meta.expire_at_ms {
            if old_expire != 0 {
                self.delete(Cf::Expire, &expire_key(old_expire, pdb, key));
            }
            if meta.expire_at_ms != 0 {
                self.put(
                    Cf::Expire,
                    &expire_key(meta.expire_at_ms, pdb, key),
                    Bytes::new(),
                );
            }
        }
        self.add_counts(pdb, key_delta, expire_delta);
        self.put(Cf::Meta, &meta_key(pdb, key), Bytes::from(meta.encode()));
        Ok(())
    }

    /// Deletes `key` from logical database `db`; members of collections are
    /// left to the compaction filter. Returns whether a live key was removed.
    pub(crate) fn remove_meta(&mut self, db: u8, key: &[u8]) -> Result<bool> {
        let pdb = self.physical(db);
        match self.raw_meta(pdb, key)? {
            Some(meta) => {
                let live = !meta.is_expired(self.now_ms);
                self.remove_meta_physical(pdb, key, Some(&meta));
                Ok(live)
            }
            None => Ok(false),
        }
    }

    pub(crate) fn remove_meta_physical(&mut self, pdb: u8, key: &[u8], old: Option<&Meta>) {
        let old_expire = old.map_or(0, |m| m.expire_at_ms);
        if old_expire != 0 {
            self.delete(Cf::Expire, &expire_key(old_expire, pdb, key));
        }
        self.add_counts(pdb, -1, -((old_expire != 0) as i64));
        self.delete(Cf::Meta, &meta_key(pdb, key));
    }

    fn add_counts(&mut self, pdb: u8, keys: i64, expires: i64) {
        if keys == 0 && expires == 0 {
            return;
        }
        match self.count_deltas.iter_mut().find(|(db, _, _)| *db == pdb) {
            Some(entry) => {
                entry.1 += keys;
                entry.2 += expires;
            }
            None => self.count_deltas.push((pdb, keys, expires)),
        }
    }

    /// Queues the removal of everything in physical database `pdb`.
    pub(crate) fn delete_database(&mut self, pdb: u8) {
        let start = vec![pdb];
        let end = match keys::prefix_end(&start) {
            Some(end) => end,
            None => vec![0xFF; 4],
        };
        for cf in [Cf::Meta, Cf::Data, Cf::ZScore, Cf::Stream] {
            self.range_deletes.push((cf, start.clone(), end.clone()));
        }
        self.count_deltas.retain(|(db, _, _)| *db != pdb);
        self.count_resets.push(pdb);
        debug_assert!((pdb as usize) < MAX_DATABASES);
    }

    /// Hands the writes to the group-commit writer. Returns the sequence
    /// number to wait for before replying, or `None` if nothing was written.
    pub fn commit(self) -> Result<Option<u64>> {
        if !self.has_writes() {
            return Ok(None);
        }
        if let Some(error) = self.inner.write_error_text() {
            return Err(StorageError::WriteFailed(error));
        }
        let seq = self.inner.submit(CommitBatch {
            seq: 0,
            writes: self.writes,
            range_deletes: self.range_deletes,
            count_deltas: self.count_deltas,
            count_resets: self.count_resets,
            max_version: self.max_version,
        })?;
        Ok(Some(seq))
    }
}
