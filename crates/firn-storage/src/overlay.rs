//! Writes that a command has queued for the group-commit writer but that are
//! not in RocksDB yet. Every read consults this overlay first, so a command
//! sees its predecessors' writes the moment their key locks are released
//! (as in Redis, a write is visible before it is durable; its *reply* waits
//! for durability). The writer removes entries once RocksDB has them.

use bytes::Bytes;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::Cf;

#[derive(Clone)]
struct Pending {
    seq: u64,
    value: Option<Bytes>,
}

/// Payload bytes one entry holds: its key and value (INFO `mem_overlay`).
fn entry_bytes(key: &[u8], value: Option<&Bytes>) -> usize {
    key.len() + value.map_or(0, |v| v.len())
}

#[derive(Default)]
pub struct Overlay {
    map: RwLock<BTreeMap<Vec<u8>, Pending>>,
    len: AtomicUsize,
    bytes: AtomicUsize,
}

pub(crate) fn overlay_key(cf: Cf, key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + 1);
    out.push(cf as u8);
    out.extend_from_slice(key);
    out
}

impl Overlay {
    /// `Some(Some(v))` pending put, `Some(None)` pending delete, `None` not pending.
    pub fn get(&self, cf: Cf, key: &[u8]) -> Option<Option<Bytes>> {
        if self.len.load(Ordering::Acquire) == 0 {
            return None;
        }
        let map = self.map.read();
        map.get(&overlay_key(cf, key)).map(|p| p.value.clone())
    }

    /// Pending entries of `cf` with `start <= key < end`, in key order.
    pub fn range(&self, cf: Cf, start: &[u8], end: Option<&[u8]>) -> Vec<(Vec<u8>, Option<Bytes>)> {
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
        let map = self.map.read();
        map.range((Bound::Included(lo), hi))
            .map(|(k, p)| (k[1..].to_vec(), p.value.clone()))
            .collect()
    }

    pub(crate) fn insert_all(&self, seq: u64, writes: &BTreeMap<Vec<u8>, Option<Bytes>>) {
        let mut map = self.map.write();
        let (mut added, mut replaced) = (0, 0);
        for (k, v) in writes {
            added += entry_bytes(k, v.as_ref());
            let old = map.insert(
                k.clone(),
                Pending {
                    seq,
                    value: v.clone(),
                },
            );
            if let Some(old) = old {
                replaced += entry_bytes(k, old.value.as_ref());
            }
        }
        self.len.store(map.len(), Ordering::Release);
        self.bytes.fetch_add(added, Ordering::Relaxed);
        self.bytes.fetch_sub(replaced, Ordering::Relaxed);
    }

    /// Drops entries written by `seq` unless a later command re-wrote them.
    pub(crate) fn remove_committed<'a>(&self, committed: impl Iterator<Item = (u64, &'a Vec<u8>)>) {
        let mut map = self.map.write();
        let mut removed = 0;
        for (seq, key) in committed {
            if map.get(key).is_some_and(|p| p.seq == seq) {
                if let Some(old) = map.remove(key) {
                    removed += entry_bytes(key, old.value.as_ref());
                }
            }
        }
        self.len.store(map.len(), Ordering::Release);
        self.bytes.fetch_sub(removed, Ordering::Relaxed);
    }

    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// Key and value bytes of the pending writes.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}
