//! Writes that a command has queued for the writer but that are not in
//! RocksDB yet. Every read consults this overlay first, so a command sees
//! its predecessors' writes the moment their key locks are released (as in
//! Redis, a write is visible before it is durable; its *reply* waits for
//! durability). The writer removes entries once RocksDB has them.
//!
//! The overlay is sharded by lock stripe (see locks.rs), so a shard is only
//! written by the holder of its stripe's lock or by the writer removing
//! committed entries; readers without locks (cold-pool runs) take a shard's
//! read lock for one lookup. There is no global lock.
//!
//! Each entry carries the ticket of its batch: a reader that shows a pending
//! write to its client waits for that ticket before replying.
//!
//! A *fence* stands for a whole physical database flushed by a batch that is
//! not committed yet: until the writer has applied its range deletes, reads
//! of that database ignore RocksDB, the hot tier, and overlay entries older
//! than the flush.

use bytes::Bytes;
use parking_lot::{Mutex, RwLock};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crate::engine::MAX_DATABASES;
use crate::keys::stripe_of_raw;
use crate::locks::STRIPES;
use crate::ticket::Ticket;
use crate::Cf;

#[derive(Clone)]
pub(crate) struct Pending {
    pub seq: u64,
    pub value: Option<Bytes>,
    pub ticket: Ticket,
}

/// What the overlay knows about one key.
pub(crate) enum Lookup {
    /// Not pending: read RocksDB.
    Absent,
    /// A pending put or delete.
    Pending(Pending),
    /// The key's database is being flushed: it reads as missing.
    Flushed(Ticket),
}

/// Per-entry bookkeeping charged to the byte count besides key and value.
const ENTRY_OVERHEAD_BYTES: u64 = 64;

/// One stripe's pending entries, keyed by `cf · raw key`.
type Shard = RwLock<BTreeMap<Vec<u8>, Pending>>;

pub struct Overlay {
    shards: Box<[Shard]>,
    len: AtomicUsize,
    bytes: AtomicU64,
    fences: Mutex<Vec<Option<(u64, Ticket)>>>,
    any_fence: AtomicBool,
}

impl Default for Overlay {
    fn default() -> Self {
        Overlay {
            shards: (0..STRIPES).map(|_| RwLock::new(BTreeMap::new())).collect(),
            len: AtomicUsize::new(0),
            bytes: AtomicU64::new(0),
            fences: Mutex::new(vec![None; MAX_DATABASES]),
            any_fence: AtomicBool::new(false),
        }
    }
}

pub(crate) fn overlay_key(cf: Cf, key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + 1);
    out.push(cf as u8);
    out.extend_from_slice(key);
    out
}

/// The physical database of a raw key of `cf` (none for System).
pub(crate) fn pdb_of_raw(cf: Cf, raw: &[u8]) -> Option<u8> {
    match cf {
        Cf::System => None,
        Cf::Expire => raw.get(8).copied(),
        _ => raw.first().copied(),
    }
}

fn entry_bytes(key: &[u8], value: &Option<Bytes>) -> u64 {
    (key.len() + value.as_ref().map_or(0, |v| v.len())) as u64 + ENTRY_OVERHEAD_BYTES
}

impl Overlay {
    /// The fence of physical database `pdb`, if a flush of it is pending.
    pub(crate) fn fence(&self, pdb: u8) -> Option<(u64, Ticket)> {
        if !self.any_fence.load(Ordering::Acquire) {
            return None;
        }
        self.fences.lock().get(pdb as usize).cloned().flatten()
    }

    pub(crate) fn get(&self, cf: Cf, key: &[u8]) -> Lookup {
        let fence = pdb_of_raw(cf, key).and_then(|pdb| self.fence(pdb));
        if self.len.load(Ordering::Acquire) > 0 {
            let shard = self.shards[stripe_of_raw(cf, key)].read();
            if let Some(pending) = shard.get(&overlay_key(cf, key)) {
                match &fence {
                    Some((fence_seq, _)) if pending.seq < *fence_seq => {}
                    _ => return Lookup::Pending(pending.clone()),
                }
            }
        }
        match fence {
            Some((_, ticket)) => Lookup::Flushed(ticket),
            None => Lookup::Absent,
        }
    }

    /// Pending entries of `cf` with `start <= key < end`, in key order,
    /// without the ones a fence hides.
    pub(crate) fn range(
        &self,
        cf: Cf,
        start: &[u8],
        end: Option<&[u8]>,
    ) -> Vec<(Vec<u8>, Pending)> {
        if self.len.load(Ordering::Acquire) == 0 {
            return Vec::new();
        }
        let lo = overlay_key(cf, start);
        let hi = match end {
            Some(end) => Bound::Excluded(overlay_key(cf, end)),
            None => match crate::keys::prefix_end(&[cf as u8]) {
                Some(next_cf) => Bound::Excluded(next_cf),
                None => Bound::Unbounded,
            },
        };
        let mut found: Vec<(Vec<u8>, Pending)> = Vec::new();
        // A range inside one key's members (or one slot) lies in one shard:
        // the shard of its first raw key, when the end shares its db·slot.
        let one_shard = match (cf, end) {
            (Cf::Data | Cf::ZScore | Cf::Stream | Cf::Meta, Some(end))
                if start.len() >= 3 && end.len() >= 3 && start[..3] == end[..3] =>
            {
                Some(stripe_of_raw(cf, start))
            }
            _ => None,
        };
        let shards: &[Shard] = match one_shard {
            Some(stripe) => std::slice::from_ref(&self.shards[stripe]),
            None => &self.shards,
        };
        for shard in shards {
            let shard = shard.read();
            if shard.is_empty() {
                continue;
            }
            found.extend(
                shard
                    .range((Bound::Included(lo.clone()), hi.clone()))
                    .map(|(k, p)| (k[1..].to_vec(), p.clone())),
            );
        }
        found.retain(
            |(k, p)| match pdb_of_raw(cf, k).and_then(|pdb| self.fence(pdb)) {
                Some((fence_seq, _)) => p.seq > fence_seq,
                None => true,
            },
        );
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    }

    pub(crate) fn insert_all(
        &self,
        seq: u64,
        ticket: &Ticket,
        writes: &BTreeMap<Vec<u8>, Option<Bytes>>,
    ) {
        let mut added = 0usize;
        let mut bytes = 0u64;
        for (k, v) in writes {
            let Some(cf) = k.first().and_then(|&b| Cf::from_u8(b)) else {
                continue;
            };
            let mut shard = self.shards[stripe_of_raw(cf, &k[1..])].write();
            let entry = Pending {
                seq,
                value: v.clone(),
                ticket: ticket.clone(),
            };
            bytes += entry_bytes(k, v);
            match shard.insert(k.clone(), entry) {
                Some(old) => {
                    bytes = bytes.saturating_sub(entry_bytes(k, &old.value));
                }
                None => added += 1,
            }
        }
        self.bytes.fetch_add(bytes, Ordering::AcqRel);
        self.len.fetch_add(added, Ordering::AcqRel);
    }

    /// Drops entries written by `seq` unless a later command re-wrote them.
    pub(crate) fn remove_committed<'a>(&self, committed: impl Iterator<Item = (u64, &'a Vec<u8>)>) {
        for (seq, key) in committed {
            let Some(cf) = key.first().and_then(|&b| Cf::from_u8(b)) else {
                continue;
            };
            let mut shard = self.shards[stripe_of_raw(cf, &key[1..])].write();
            if shard.get(key).is_some_and(|p| p.seq == seq) {
                if let Some(old) = shard.remove(key) {
                    self.bytes
                        .fetch_sub(entry_bytes(key, &old.value), Ordering::AcqRel);
                    self.len.fetch_sub(1, Ordering::AcqRel);
                }
            }
        }
    }

    /// Hides physical database `pdb` until the flush `seq` is committed.
    pub(crate) fn add_fence(&self, pdb: u8, seq: u64, ticket: &Ticket) {
        let mut fences = self.fences.lock();
        if let Some(slot) = fences.get_mut(pdb as usize) {
            *slot = Some((seq, ticket.clone()));
        }
        self.any_fence.store(true, Ordering::Release);
    }

    /// The flush `seq` is in RocksDB (or was given up on).
    pub(crate) fn remove_fence(&self, pdb: u8, seq: u64) {
        let mut fences = self.fences.lock();
        if let Some(slot) = fences.get_mut(pdb as usize) {
            if slot.as_ref().is_some_and(|(s, _)| *s == seq) {
                *slot = None;
            }
        }
        let any = fences.iter().any(Option::is_some);
        self.any_fence.store(any, Ordering::Release);
    }

    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// Bytes of pending keys and values, plus a per-entry overhead.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Acquire)
    }
}
