//! A read-only, point-in-time view of one logical database
//! ([`KeyspaceView`]), and the key scans it shares with a command's `Txn`:
//! a page of keys ([`ScanPage`], SCAN and KEYS) and a random live key
//! ([`RandomPick`], RANDOMKEY).
//!
//! The scans run over a [`MetaSource`]: the view's snapshot here, or a
//! command's transaction (memory tier plus pending writes, for short steps
//! on a network thread; its `MetaSource` is in keyspace.rs).

use bytes::Bytes;
use rocksdb::{ReadOptions, Snapshot};

use crate::batch::CommitBatch;
use crate::error::{Result, StorageError};
use crate::keys;
use crate::member_filter::PinMembers;
use crate::meta::Meta;
use crate::state::Inner;
use crate::Cf;

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

/// A source of `meta` records in key order.
pub(crate) trait MetaSource {
    /// Visits the records in `[start, end)` until `visit` returns false.
    fn scan_meta(
        &mut self,
        start: &[u8],
        end: Option<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &Bytes) -> bool,
    ) -> Result<()>;
}

/// The keys of physical database `pdb` after `after`, `count` records at
/// most; see `Txn::scan_keys`.
pub(crate) fn scan_keys_in(
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
            return true;
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
            false
        } else {
            true
        }
    })?;
    if let Some(e) = decode_error {
        return Err(e);
    }
    page.next_after = last_key;
    Ok(page)
}

/// The first live key at or after the position `seed` picks in physical
/// database `pdb`, wrapping around once; see `Txn::random_key`.
pub(crate) fn random_key_in(
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
                    return false;
                }
            }
            visited < max_visits
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

impl<'e> KeyspaceView<'e> {
    /// A view of logical database `db` that contains every write submitted
    /// before the call (`Engine::keyspace_view`). Blocks until those writes
    /// are committed: never call it on a network thread.
    ///
    /// Writes (and flushes, through their fences) become visible to other
    /// commands when they are submitted, before RocksDB has them; a
    /// snapshot taken earlier could miss a key another client has already
    /// read. So an empty batch goes through the writer as a barrier: once
    /// its ticket resolves, every batch queued before it has been written
    /// or given up on (its outcome does not matter here). This is the only
    /// place a view depends on how the writer reports commits.
    pub(crate) fn open(inner: &'e Inner, db: u8) -> Result<KeyspaceView<'e>> {
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
        visit: &mut dyn FnMut(&[u8], &Bytes) -> bool,
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
            if !visit(key, &Bytes::copy_from_slice(value)) {
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

    /// `Txn::scan_keys` over the snapshot; `usize::MAX` visits everything.
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
                return true;
            };
            match Meta::decode(raw_value) {
                Ok(meta) if meta.is_expired(now_ms) => true,
                Ok(_) => visit(user_key),
                Err(e) => {
                    decode_error = Some(e);
                    false
                }
            }
        })?;
        decode_error.map_or(Ok(()), Err)
    }

    /// `Txn::random_key` without a budget: `None` only if the database
    /// holds no live key.
    pub fn random_key(&mut self, seed: u64) -> Result<Option<Bytes>> {
        let (pdb, now_ms) = (self.pdb, self.now_ms);
        Ok(match random_key_in(self, pdb, now_ms, seed, usize::MAX)? {
            RandomPick::Key(key) => Some(key),
            RandomPick::Empty | RandomPick::Undecided => None,
        })
    }
}
