//! What every collection type shares: its meta record (type, version,
//! size, expiry, type fields; [`Collection`], in meta.rs) and member
//! access by `(cf, member)` under the key's current version.
//!
//! A command reads a [`Collection`] once, changes members through the
//! `*_member` methods, keeps `size` in step, and stores the record back
//! with [`Txn::save_collection`]. A collection whose size reaches zero is
//! deleted, as Redis deletes an empty collection; its version is never
//! reused, so a later write to the same key starts a fresh one and the old
//! members (if any were left) are the compaction filter's.

use bytes::Bytes;
use rand::{Rng, SeedableRng};
use std::ops::Bound;
use std::sync::atomic::Ordering;

use crate::collcache::Members;
use crate::error::{Result, StorageError};
use crate::keys::{member_key, member_prefix, meta_key, prefix_end};
use crate::meta::{Collection, Meta, ValueType};
use crate::txn::{ScanStep, Txn};
use crate::view::KeyspaceView;
use crate::Cf;

/// Collections up to this many members are sampled exactly (read whole);
/// larger ones by random seeks.
const EXACT_SAMPLE_LIMIT: u64 = 1024;

impl Txn<'_> {
    /// The live collection at `key` if it is of type `value_type`;
    /// `WrongType` if the key holds another type, `None` if it is missing.
    pub fn collection(
        &mut self,
        db: u8,
        key: &[u8],
        value_type: ValueType,
    ) -> Result<Option<Collection>> {
        match self.meta(db, key)? {
            None => Ok(None),
            Some(meta) if meta.value_type != value_type => Err(StorageError::WrongType),
            Some(meta) => Collection::from_meta(meta).map(Some),
        }
    }

    /// [`Txn::collection`], or a new empty one (fresh version, not stored
    /// until [`Txn::save_collection`] with a size above zero).
    pub fn collection_or_new(
        &mut self,
        db: u8,
        key: &[u8],
        value_type: ValueType,
        extra: Bytes,
    ) -> Result<Collection> {
        match self.collection(db, key, value_type)? {
            Some(found) => Ok(found),
            None => Ok(self.new_collection(value_type, extra)),
        }
    }

    /// An empty collection with a fresh version, not yet stored.
    pub fn new_collection(&mut self, value_type: ValueType, extra: Bytes) -> Collection {
        Collection {
            value_type,
            version: self.alloc_version(),
            size: 0,
            expire_at_ms: 0,
            big: false,
            extra,
            stored: false,
        }
    }

    /// Stores the record back: written if it has members, deleted (an
    /// empty collection disappears, as in Redis) if it had been stored.
    /// Replaces whatever else `key` held.
    pub fn save_collection(&mut self, db: u8, key: &[u8], coll: &Collection) -> Result<()> {
        if coll.size == 0 {
            if coll.stored {
                self.remove_meta(db, key)?;
            }
            return Ok(());
        }
        self.write_meta(db, key, &coll.to_meta())
    }

    /// The value stored for `member` of the collection, in `cf`.
    pub fn get_member(
        &mut self,
        cf: Cf,
        db: u8,
        key: &[u8],
        coll: &Collection,
        member: &[u8],
    ) -> Result<Option<Bytes>> {
        let pdb = self.physical(db);
        let raw = member_key(pdb, key, coll.version, member);
        if !self.forced_cold() && !self.wrote(cf, &raw) {
            if let Some(cached) = self.inner.coll.get(cf, &meta_key(pdb, key), coll.version) {
                self.inner
                    .stats
                    .collection_member_reads
                    .fetch_add(1, Ordering::Relaxed);
                return Ok(cached.get(member).cloned());
            }
        }
        self.get(cf, &raw)
    }

    pub fn put_member(
        &mut self,
        cf: Cf,
        db: u8,
        key: &[u8],
        coll: &Collection,
        member: &[u8],
        value: Bytes,
    ) {
        let pdb = self.physical(db);
        self.put(cf, &member_key(pdb, key, coll.version, member), value);
    }

    pub fn delete_member(&mut self, cf: Cf, db: u8, key: &[u8], coll: &Collection, member: &[u8]) {
        let pdb = self.physical(db);
        self.delete(cf, &member_key(pdb, key, coll.version, member));
    }

    /// Visits the collection's members in `cf` whose member bytes lie in
    /// `(from, to)`, in byte order or (`reverse`) the opposite, until
    /// `visit` returns false. Only the entries visited are read.
    #[allow(clippy::too_many_arguments)]
    pub fn scan_members(
        &mut self,
        cf: Cf,
        db: u8,
        key: &[u8],
        coll: &Collection,
        from: Bound<&[u8]>,
        to: Bound<&[u8]>,
        reverse: bool,
        mut visit: impl FnMut(&[u8], &Bytes) -> bool,
    ) -> Result<()> {
        let pdb = self.physical(db);
        let prefix = member_prefix(pdb, key, coll.version);
        let (start, end) = member_range(&prefix, from, to);
        if let Some(end) = &end {
            if start >= *end {
                return Ok(());
            }
        }
        let cache_key = meta_key(pdb, key);
        if !self.forced_cold() && !self.wrote_in(cf, &start, end.as_deref()) {
            if let Some(cached) = self.inner.coll.get(cf, &cache_key, coll.version) {
                let visited = visit_cached(&cached.entries, from, to, reverse, visit);
                self.inner
                    .stats
                    .scanned_entries
                    .fetch_add(visited, Ordering::Relaxed);
                return Ok(());
            }
        }
        // A whole small collection read under its key's lock, with no
        // write pending, is kept decoded (collcache.rs).
        let fill = self.is_locked()
            && !self.forced_cold()
            && coll.size <= crate::collcache::MAX_MEMBERS
            && matches!((from, to), (Bound::Unbounded, Bound::Unbounded));
        let mut gathered: Vec<(Bytes, Bytes)> = Vec::new();
        let mut complete = true;
        let skip = prefix.len();
        self.scan_dir(
            cf,
            &start,
            end.as_deref(),
            reverse,
            |raw, value| match raw.get(skip..) {
                Some(member) => {
                    if fill {
                        gathered.push((Bytes::copy_from_slice(member), value.clone()));
                    }
                    if visit(member, value) {
                        ScanStep::Continue
                    } else {
                        complete = false;
                        ScanStep::Stop
                    }
                }
                None => {
                    complete = false;
                    ScanStep::Stop
                }
            },
        )?;
        if fill && complete && !self.scan_saw_writes && gathered.len() as u64 == coll.size {
            if reverse {
                gathered.reverse();
            }
            if let Some(members) = Members::new(coll.version, gathered) {
                self.inner.coll.put(cf, &cache_key, members);
            }
        }
        Ok(())
    }

    /// Up to `count` distinct members (with their values in `cf`) chosen at
    /// random. A collection of up to 1024 members is read whole and sampled
    /// uniformly; a larger one is sampled by seeking to random positions of
    /// its member space, which favours members after sparse stretches but
    /// reads only about `count` entries.
    pub fn random_members(
        &mut self,
        cf: Cf,
        db: u8,
        key: &[u8],
        coll: &Collection,
        count: usize,
        seed: u64,
    ) -> Result<Vec<(Bytes, Bytes)>> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut picked: Vec<(Bytes, Bytes)> = Vec::new();
        if count == 0 {
            return Ok(picked);
        }
        if coll.size <= EXACT_SAMPLE_LIMIT || count as u64 >= coll.size {
            let mut all: Vec<(Bytes, Bytes)> = Vec::new();
            self.scan_members(
                cf,
                db,
                key,
                coll,
                Bound::Unbounded,
                Bound::Unbounded,
                false,
                |m, v| {
                    all.push((Bytes::copy_from_slice(m), v.clone()));
                    true
                },
            )?;
            // A partial Fisher-Yates shuffle: the first `count` are a
            // uniform sample.
            let take = count.min(all.len());
            for i in 0..take {
                let j = rng.random_range(i..all.len());
                all.swap(i, j);
            }
            all.truncate(take);
            return Ok(all);
        }
        let (Some(first), Some(last)) = (
            self.edge_member(cf, db, key, coll, false)?,
            self.edge_member(cf, db, key, coll, true)?,
        ) else {
            return Ok(picked);
        };
        let mut seen = std::collections::HashSet::new();
        let mut probes = Prober::new(&first, &last);
        // Each seek finds one member; collisions are retried a bounded
        // number of times, then the sample is completed in order.
        let mut attempts = count.saturating_mul(4).max(16);
        while picked.len() < count && attempts > 0 {
            attempts -= 1;
            // A probe below the first member always finds the first one,
            // and one past the last finds nothing after walking to the end
            // of the range: draw again instead, or the edges are picked far
            // too often (and SPOP wears a set away from its ends, leaving
            // runs of deleted entries every later seek must step over).
            let Some(probe) = (0..PROBE_DRAWS)
                .map(|_| probes.next(&mut rng))
                .find(|p| first.as_ref() <= p.as_slice() && p.as_slice() <= last.as_ref())
            else {
                continue;
            };
            let mut found = None;
            self.scan_members(
                cf,
                db,
                key,
                coll,
                Bound::Included(&probe),
                Bound::Unbounded,
                false,
                |m, v| {
                    found = Some((Bytes::copy_from_slice(m), v.clone()));
                    false
                },
            )?;
            if let Some((m, v)) = found {
                probes.learn(&m);
                if seen.insert(m.clone()) {
                    picked.push((m, v));
                }
            }
        }
        if picked.len() < count {
            self.scan_members(
                cf,
                db,
                key,
                coll,
                Bound::Unbounded,
                Bound::Unbounded,
                false,
                |m, v| {
                    if !seen.contains(m) {
                        seen.insert(Bytes::copy_from_slice(m));
                        picked.push((Bytes::copy_from_slice(m), v.clone()));
                    }
                    picked.len() < count
                },
            )?;
        }
        Ok(picked)
    }

    /// The first (or, `last`, the last) member of the collection in `cf`.
    fn edge_member(
        &mut self,
        cf: Cf,
        db: u8,
        key: &[u8],
        coll: &Collection,
        last: bool,
    ) -> Result<Option<Bytes>> {
        let mut found = None;
        self.scan_members(
            cf,
            db,
            key,
            coll,
            Bound::Unbounded,
            Bound::Unbounded,
            last,
            |m, _| {
                found = Some(Bytes::copy_from_slice(m));
                false
            },
        )?;
        Ok(found)
    }
}

impl KeyspaceView<'_> {
    /// [`Txn::collection`] in the view's snapshot: a key expired at the
    /// view's clock is missing.
    pub fn collection(&mut self, key: &[u8], value_type: ValueType) -> Result<Option<Collection>> {
        let handle = self
            .inner
            .cf(Cf::Meta)
            .ok_or(StorageError::Corrupt("missing column family"))?;
        let mut ro = rocksdb::ReadOptions::default();
        ro.set_snapshot(&self.snapshot);
        let raw = self
            .inner
            .db
            .get_pinned_cf_opt(handle, meta_key(self.pdb, key), &ro)?;
        let Some(raw) = raw else {
            return Ok(None);
        };
        let meta = Meta::decode(&Bytes::copy_from_slice(&raw))?;
        if meta.is_expired(self.now_ms) {
            return Ok(None);
        }
        if meta.value_type != value_type {
            return Err(StorageError::WrongType);
        }
        Collection::from_meta(meta).map(Some)
    }

    /// [`Txn::scan_members`] in the view's snapshot. Its reads do not fill
    /// the block cache: streaming a big collection to one client does not
    /// evict everybody else's working set.
    #[allow(clippy::too_many_arguments)]
    pub fn scan_members(
        &mut self,
        cf: Cf,
        key: &[u8],
        coll: &Collection,
        from: Bound<&[u8]>,
        to: Bound<&[u8]>,
        reverse: bool,
        mut visit: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        let prefix = member_prefix(self.pdb, key, coll.version);
        let (start, end) = member_range(&prefix, from, to);
        let handle = self
            .inner
            .cf(cf)
            .ok_or(StorageError::Corrupt("missing column family"))?;
        let mut ro = rocksdb::ReadOptions::default();
        ro.set_snapshot(&self.snapshot);
        ro.fill_cache(false);
        ro.set_iterate_lower_bound(start.clone());
        if let Some(end) = &end {
            ro.set_iterate_upper_bound(end.clone());
        }
        let mut iter = self.snapshot.raw_iterator_cf_opt(handle, ro);
        if reverse {
            iter.seek_to_last();
        } else {
            iter.seek(&start);
        }
        while let (Some(raw), Some(value)) = (iter.key(), iter.value()) {
            let Some(member) = raw.get(prefix.len()..) else {
                break;
            };
            if !visit(member, value) {
                return Ok(());
            }
            if reverse {
                iter.prev();
            } else {
                iter.next();
            }
        }
        Ok(iter.status()?)
    }
}

/// The raw key range `[start, end)` of the members of `prefix` within
/// `(from, to)`; `end` is `None` when unbounded.
fn member_range(prefix: &[u8], from: Bound<&[u8]>, to: Bound<&[u8]>) -> (Vec<u8>, Option<Vec<u8>>) {
    let with_prefix = |member: &[u8], after: bool| {
        let mut raw = prefix.to_vec();
        raw.extend_from_slice(member);
        // The first key after every key equal to prefix·m is prefix·m·0.
        if after {
            raw.push(0);
        }
        raw
    };
    let start = match from {
        Bound::Unbounded => prefix.to_vec(),
        Bound::Included(m) => with_prefix(m, false),
        Bound::Excluded(m) => with_prefix(m, true),
    };
    let end = match to {
        Bound::Unbounded => prefix_end(prefix),
        Bound::Excluded(m) => Some(with_prefix(m, false)),
        Bound::Included(m) => Some(with_prefix(m, true)),
    };
    (start, end)
}

/// Visits the cached `(member, value)` entries within `(from, to)` in
/// either direction until `visit` returns false; returns how many it
/// visited.
fn visit_cached(
    entries: &[(Bytes, Bytes)],
    from: Bound<&[u8]>,
    to: Bound<&[u8]>,
    reverse: bool,
    mut visit: impl FnMut(&[u8], &Bytes) -> bool,
) -> u64 {
    let first = match from {
        Bound::Unbounded => 0,
        Bound::Included(m) => entries.partition_point(|(e, _)| e.as_ref() < m),
        Bound::Excluded(m) => entries.partition_point(|(e, _)| e.as_ref() <= m),
    };
    let end = match to {
        Bound::Unbounded => entries.len(),
        Bound::Included(m) => entries.partition_point(|(e, _)| e.as_ref() <= m),
        Bound::Excluded(m) => entries.partition_point(|(e, _)| e.as_ref() < m),
    };
    let window = entries.get(first..end.max(first)).unwrap_or_default();
    let mut visited = 0;
    let mut step = |(member, value): &(Bytes, Bytes)| {
        visited += 1;
        visit(member, value)
    };
    if reverse {
        for entry in window.iter().rev() {
            if !step(entry) {
                break;
            }
        }
    } else {
        for entry in window {
            if !step(entry) {
                break;
            }
        }
    }
    visited
}

/// Random seek targets inside a collection's member space. Members are
/// arbitrary bytes but usually share a prefix and draw each position from a
/// small alphabet (digits, letters), so a probe copies the common prefix of
/// the first and last member and picks each later byte uniformly between the
/// smallest and largest value seen at that position in members found so
/// far. (Favouring the values seen, the ends of each range, made repeated
/// SPOPs wear a set away around those points.)
struct Prober {
    prefix: Vec<u8>,
    /// Byte values seen at each position past the prefix.
    seen: Vec<Vec<u8>>,
}

/// Positions past the common prefix that a probe sets.
const PROBE_BYTES: usize = 12;
/// Probes drawn per seek until one falls between the first and the last
/// member.
const PROBE_DRAWS: usize = 8;

impl Prober {
    fn new(first: &[u8], last: &[u8]) -> Prober {
        let common = first.iter().zip(last).take_while(|(a, b)| a == b).count();
        let mut prober = Prober {
            prefix: first[..common].to_vec(),
            seen: vec![Vec::new(); PROBE_BYTES],
        };
        prober.learn(first);
        prober.learn(last);
        prober
    }

    fn learn(&mut self, member: &[u8]) {
        let tail = member.get(self.prefix.len()..).unwrap_or_default();
        for (values, b) in self.seen.iter_mut().zip(tail) {
            if let Err(at) = values.binary_search(b) {
                values.insert(at, *b);
            }
        }
    }

    fn next(&self, rng: &mut impl Rng) -> Vec<u8> {
        let mut probe = self.prefix.clone();
        for values in &self.seen {
            let (Some(&lo), Some(&hi)) = (values.first(), values.last()) else {
                break;
            };
            probe.push(rng.random_range(lo..=hi));
        }
        probe
    }
}
