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

use crate::keys::{stripe_of_raw, MAX_DATABASES};
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
                // The flushing batch's own writes come after its flush.
                Some((fence_seq, _)) => p.seq >= fence_seq,
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
        // Added and taken back separately: a small value replacing a big
        // pending one takes back more than the batch adds, and a running
        // difference that saturated at zero leaked the rest for good.
        let mut bytes_added = 0u64;
        let mut bytes_replaced = 0u64;
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
            bytes_added += entry_bytes(k, v);
            match shard.insert(k.clone(), entry) {
                Some(old) => bytes_replaced += entry_bytes(k, &old.value),
                None => added += 1,
            }
        }
        // Added first: the count never dips below what is live, even for a
        // moment, so the subtraction cannot wrap.
        self.bytes.fetch_add(bytes_added, Ordering::AcqRel);
        self.bytes.fetch_sub(bytes_replaced, Ordering::AcqRel);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::meta_key;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// One step of a random interleaving: a batch submitted (it may
    /// overwrite pending keys), or an earlier batch committed or rolled
    /// back (both leave through `remove_committed`).
    #[derive(Debug, Clone)]
    enum Step {
        Submit(Vec<(u8, usize)>),
        Finish(usize),
    }

    fn step() -> impl Strategy<Value = Step> {
        // Sizes from empty to 8 MiB, so that shrinking overwrites of big
        // pending values (the leak that once stopped every connection)
        // come up often.
        let size = prop_oneof![0usize..16, 1000usize..2000, Just(8 << 20)];
        prop_oneof![
            3 => proptest::collection::vec((0u8..6, size), 1..4).prop_map(Step::Submit),
            2 => (0usize..64).prop_map(Step::Finish),
        ]
    }

    fn raw(key: u8) -> Vec<u8> {
        overlay_key(Cf::Meta, &meta_key(0, &[key]))
    }

    proptest! {
        /// After any interleaving the byte count equals the size of the
        /// live entries, and it is 0 once every batch has left.
        #[test]
        fn pending_bytes_equal_the_live_entries(steps in proptest::collection::vec(step(), 1..60)) {
            let overlay = Overlay::default();
            let mut batches: Vec<(u64, Vec<Vec<u8>>)> = Vec::new();
            let mut live: HashMap<Vec<u8>, (u64, u64)> = HashMap::new();
            let mut seq = 0u64;
            for step in steps {
                match step {
                    Step::Submit(writes) => {
                        seq += 1;
                        let ticket = Ticket::new(seq);
                        let writes: BTreeMap<Vec<u8>, Option<Bytes>> = writes
                            .into_iter()
                            .map(|(k, n)| (raw(k), (n > 0).then(|| Bytes::from(vec![b'x'; n]))))
                            .collect();
                        overlay.insert_all(seq, &ticket, &writes);
                        for (k, v) in &writes {
                            live.insert(k.clone(), (seq, entry_bytes(k, v)));
                        }
                        batches.push((seq, writes.into_keys().collect()));
                    }
                    Step::Finish(i) if !batches.is_empty() => {
                        let (done, keys) = batches.remove(i % batches.len());
                        overlay.remove_committed(keys.iter().map(|k| (done, k)));
                        live.retain(|_, (s, _)| *s != done);
                    }
                    Step::Finish(_) => {}
                }
                prop_assert_eq!(overlay.bytes(), live.values().map(|(_, b)| b).sum::<u64>());
                prop_assert_eq!(overlay.len(), live.len());
            }
            for (done, keys) in batches.drain(..) {
                overlay.remove_committed(keys.iter().map(|k| (done, k)));
            }
            prop_assert_eq!(overlay.bytes(), 0);
            prop_assert_eq!(overlay.len(), 0);
        }
    }

    /// Writers and the committer race on the same keys from several
    /// threads: the count still ends at 0.
    #[test]
    fn concurrent_overwrites_and_commits_return_to_zero() {
        let overlay = Overlay::default();
        let next = AtomicU64::new(0);
        let (tx, rx) = crossbeam_channel::unbounded::<(u64, Vec<Vec<u8>>)>();
        std::thread::scope(|scope| {
            for thread in 0..3u64 {
                let (overlay, next, tx) = (&overlay, &next, tx.clone());
                scope.spawn(move || {
                    for i in 0..2000u64 {
                        let seq = next.fetch_add(1, Ordering::AcqRel) + 1;
                        let size = if (i + thread) % 7 == 0 { 1 << 20 } else { 3 };
                        let writes: BTreeMap<Vec<u8>, Option<Bytes>> =
                            [(raw((i % 5) as u8), Some(Bytes::from(vec![0u8; size])))].into();
                        overlay.insert_all(seq, &Ticket::new(seq), &writes);
                        let _ = tx.send((seq, writes.into_keys().collect()));
                    }
                });
            }
            drop(tx);
            let overlay = &overlay;
            scope.spawn(move || {
                for (seq, keys) in rx {
                    overlay.remove_committed(keys.iter().map(|k| (seq, k)));
                }
            });
        });
        assert_eq!(overlay.bytes(), 0);
        assert_eq!(overlay.len(), 0);
    }
}
