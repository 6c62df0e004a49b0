//! Striped key locks that wait asynchronously.
//!
//! A key's stripe is derived from its physical database and its cluster
//! slot, both of which are embedded in every RocksDB key Firn writes (see
//! keys.rs). So the stripe of any meta, member or expire-index entry can be
//! computed from the raw key alone, and the pending-write overlay is sharded
//! by the same stripes: a shard is only written under its stripe's lock.
//!
//! A command locks the stripes of all its keys in ascending order (no
//! deadlock). Stripes are tokio read-write locks, so a contended lock is
//! *awaited*, first come first served (a waiting writer holds back the
//! readers that come after it), and never parks a network thread. A
//! command that only reads takes its stripes shared, so the clients of one
//! hot key read it at the same time; anything that writes, the overlay
//! included, holds them exclusively. Critical sections are CPU-only:
//! memory reads, building a batch, queuing it.
//!
//! Each stripe also counts the batches submitted for it. A command that ran
//! on the cold-read pool without locks (blocking reads) compares these
//! counters before and after: if none moved, nothing it read has changed and
//! its result may be committed as if it had run under the locks.

use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

pub const STRIPES: usize = 4096;

/// The stripe of a key of physical database `pdb` in cluster slot `slot`.
pub fn stripe_of(pdb: u8, slot: u16) -> usize {
    (slot as usize + (pdb as usize) * 1031) % STRIPES
}

pub struct KeyLocks {
    stripes: Box<[RwLock<()>]>,
    /// Batches submitted per stripe (bumped after the overlay has them).
    writes: Box<[AtomicU64]>,
    /// Bumped by whole-database changes (flush, swap).
    epoch: AtomicU64,
}

/// Held stripes; dropping it unlocks them.
pub struct KeyGuard<'a> {
    _guards: Vec<StripeGuard<'a>>,
}

/// One stripe, held exclusively or shared.
enum StripeGuard<'a> {
    Exclusive(#[allow(dead_code)] RwLockWriteGuard<'a, ()>),
    Shared(#[allow(dead_code)] RwLockReadGuard<'a, ()>),
}

/// Stripes held by a thread outside the runtime (the script thread) that
/// may take more while it runs: the first ones are awaited in order, any
/// later one is only *tried* (a failed try means "start again holding
/// every stripe"), so no lock order is ever violated. Dropping it unlocks.
pub struct GrowingGuard<'a> {
    locks: &'a KeyLocks,
    held: std::collections::BTreeMap<usize, RwLockWriteGuard<'a, ()>>,
    all: bool,
}

impl GrowingGuard<'_> {
    /// Whether every stripe is held.
    pub fn holds_all(&self) -> bool {
        self.all
    }

    /// Tries to add `stripes` without waiting; false if one is taken (the
    /// ones already acquired stay held until the guard is dropped).
    pub fn try_add(&mut self, stripes: &[usize]) -> bool {
        if self.all {
            return true;
        }
        for &s in stripes {
            let s = s % STRIPES;
            if self.held.contains_key(&s) {
                continue;
            }
            match self.locks.stripes[s].try_write() {
                Ok(guard) => {
                    self.held.insert(s, guard);
                }
                Err(_) => return false,
            }
        }
        true
    }
}

impl Default for KeyLocks {
    fn default() -> Self {
        KeyLocks {
            stripes: (0..STRIPES).map(|_| RwLock::new(())).collect(),
            writes: (0..STRIPES).map(|_| AtomicU64::new(0)).collect(),
            epoch: AtomicU64::new(0),
        }
    }
}

/// Sorted, deduplicated stripes.
pub fn normalise(mut stripes: Vec<usize>) -> Vec<usize> {
    stripes.sort_unstable();
    stripes.dedup();
    stripes
}

impl KeyLocks {
    /// Locks `stripes` (sorted and deduplicated) exclusively, awaiting
    /// contended ones.
    pub async fn lock(&self, stripes: &[usize]) -> KeyGuard<'_> {
        let mut guards = Vec::with_capacity(stripes.len());
        for &s in stripes {
            let stripe = &self.stripes[s % STRIPES];
            let guard = match stripe.try_write() {
                Ok(guard) => guard,
                Err(_) => stripe.write().await,
            };
            guards.push(StripeGuard::Exclusive(guard));
        }
        KeyGuard { _guards: guards }
    }

    /// Locks `stripes` (sorted and deduplicated) shared, for a run that
    /// writes nothing, awaiting the ones held exclusively.
    pub async fn lock_shared(&self, stripes: &[usize]) -> KeyGuard<'_> {
        let mut guards = Vec::with_capacity(stripes.len());
        for &s in stripes {
            let stripe = &self.stripes[s % STRIPES];
            let guard = match stripe.try_read() {
                Ok(guard) => guard,
                Err(_) => stripe.read().await,
            };
            guards.push(StripeGuard::Shared(guard));
        }
        KeyGuard { _guards: guards }
    }

    /// Locks `stripes` from a thread outside the async runtime (active
    /// expiry). Never call it on a network thread.
    pub fn lock_blocking(&self, stripes: &[usize]) -> KeyGuard<'_> {
        KeyGuard {
            _guards: stripes
                .iter()
                .map(|&s| StripeGuard::Exclusive(self.stripes[s % STRIPES].blocking_write()))
                .collect(),
        }
    }

    /// Locks `stripes` (sorted) from a thread outside the async runtime,
    /// in a guard that may grow (see [`GrowingGuard`]). Never call it on a
    /// network thread.
    pub fn lock_growing_blocking(&self, stripes: &[usize]) -> GrowingGuard<'_> {
        let mut held = std::collections::BTreeMap::new();
        for &s in stripes {
            let s = s % STRIPES;
            // An uncontended stripe is taken without blocking_lock's
            // park/unpark machinery.
            held.entry(s)
                .or_insert_with(|| match self.stripes[s].try_write() {
                    Ok(guard) => guard,
                    Err(_) => self.stripes[s].blocking_write(),
                });
        }
        GrowingGuard {
            locks: self,
            held,
            all: false,
        }
    }

    /// Every stripe, from a thread outside the async runtime.
    pub fn lock_all_blocking(&self) -> GrowingGuard<'_> {
        let all: Vec<usize> = (0..STRIPES).collect();
        let mut guard = self.lock_growing_blocking(&all);
        guard.all = true;
        guard
    }

    /// Every stripe: the caller runs alone among keyed commands.
    pub async fn lock_all(&self) -> KeyGuard<'_> {
        let all: Vec<usize> = (0..STRIPES).collect();
        self.lock(&all).await
    }

    /// Records that a batch touching `stripes` was submitted.
    pub fn bump(&self, stripes: &[usize]) {
        for &s in stripes {
            self.writes[s % STRIPES].fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Changes with every whole-database batch (flush, swap).
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    pub fn bump_epoch(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
    }

    /// A fingerprint of the write counters of `stripes`: unchanged exactly
    /// when no batch touching them (and no flush or swap) was submitted in
    /// between. The epoch and which stripes were summed are kept apart from
    /// the counters' sum: a sum only grows over one set of stripes, but a
    /// swap changes which stripes a key's lock is, and a sum that folded
    /// the epoch in could come out equal over the new set (a cold LPOP then
    /// committed the pop of a list that a swap had moved to the other
    /// database, found by the history checker).
    pub fn stamp(&self, stripes: &[usize]) -> WriteStamp {
        let epoch = self.epoch.load(Ordering::Acquire);
        let mut writes = 0u64;
        let mut set = 0xcbf2_9ce4_8422_2325u64;
        for &s in stripes {
            writes = writes.wrapping_add(self.writes[s % STRIPES].load(Ordering::Acquire));
            set = (set ^ s as u64).wrapping_mul(0x0100_0000_01b3);
        }
        WriteStamp { epoch, set, writes }
    }
}

/// See [`KeyLocks::stamp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteStamp {
    epoch: u64,
    /// Which stripes (an FNV-1a hash of their ids, in order).
    set: u64,
    writes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn a_contended_stripe_is_awaited_not_blocked() {
        let locks = std::sync::Arc::new(KeyLocks::default());
        let held = locks.lock(&[7, 9]).await;
        let other = locks.clone();
        let waiter = tokio::spawn(async move {
            let _g = other.lock(&[9]).await;
            1
        });
        // The single runtime thread is free to run other work meanwhile.
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        let _free = locks.lock(&[8]).await;
        drop(held);
        assert_eq!(waiter.await.unwrap(), 1);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn readers_share_a_stripe_and_a_waiting_writer_goes_first() {
        let locks = std::sync::Arc::new(KeyLocks::default());
        let first = locks.lock_shared(&[4]).await;
        let second = locks.lock_shared(&[4]).await;
        let other = locks.clone();
        let writer = tokio::spawn(async move {
            let _g = other.lock(&[4]).await;
            1
        });
        tokio::task::yield_now().await;
        assert!(!writer.is_finished());
        // A reader that comes after the waiting writer waits behind it.
        let other = locks.clone();
        let late_reader = tokio::spawn(async move {
            let _g = other.lock_shared(&[4]).await;
            2
        });
        tokio::task::yield_now().await;
        assert!(!late_reader.is_finished());
        drop((first, second));
        assert_eq!(writer.await.unwrap(), 1);
        assert_eq!(late_reader.await.unwrap(), 2);
    }

    #[test]
    fn a_growing_guard_tries_more_stripes_and_never_waits() {
        let locks = KeyLocks::default();
        let mut guard = locks.lock_growing_blocking(&[3, 5]);
        assert!(guard.try_add(&[5, 6]));
        {
            let mut other = locks.lock_growing_blocking(&[7]);
            assert!(!other.try_add(&[6]));
            assert!(other.try_add(&[8]));
        }
        assert!(!guard.holds_all());
        drop(guard);
        let all = locks.lock_all_blocking();
        assert!(all.holds_all());
        drop(all);
        assert!(locks.lock_growing_blocking(&[6]).try_add(&[3, 5, 7]));
    }

    #[test]
    fn stamps_of_other_stripes_never_match() {
        let locks = KeyLocks::default();
        locks.bump(&[1]);
        // Equal sums over different stripes are different stamps.
        assert_ne!(locks.stamp(&[1]), locks.stamp(&[2, 1]));
        assert_ne!(locks.stamp(&[3]), locks.stamp(&[2]));
        let before = locks.stamp(&[2]);
        locks.bump_epoch();
        locks.bump(&[1]);
        assert_ne!(locks.stamp(&[2]), before);
    }

    #[test]
    fn stamps_change_with_writes_and_epochs() {
        let locks = KeyLocks::default();
        let before = locks.stamp(&[1, 2]);
        locks.bump(&[3]);
        assert_eq!(locks.stamp(&[1, 2]), before);
        locks.bump(&[2]);
        assert_ne!(locks.stamp(&[1, 2]), before);
        let before = locks.stamp(&[1, 2]);
        locks.bump_epoch();
        assert_ne!(locks.stamp(&[1, 2]), before);
    }
}
