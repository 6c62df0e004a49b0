//! Striped key locks. A command locks the stripes of all its keys in sorted
//! order (no deadlock), executes with memory-only reads, queues its writes
//! and unlocks: critical sections never include a disk read or an fsync, so
//! a network thread waiting here waits only for another CPU-bound command.

use parking_lot::{Mutex, MutexGuard};
use std::hash::{BuildHasher, Hasher};

const STRIPES: usize = 4096;

pub struct KeyLocks {
    stripes: Box<[Mutex<()>]>,
    hasher: std::collections::hash_map::RandomState,
}

/// Held stripes; dropping it unlocks them.
pub struct KeyGuard<'a> {
    _guards: Vec<MutexGuard<'a, ()>>,
}

impl Default for KeyLocks {
    fn default() -> Self {
        KeyLocks {
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            hasher: std::collections::hash_map::RandomState::new(),
        }
    }
}

impl KeyLocks {
    fn stripe_of(&self, db: u8, key: &[u8]) -> usize {
        let mut h = self.hasher.build_hasher();
        h.write_u8(db);
        h.write(key);
        (h.finish() as usize) % STRIPES
    }

    /// Locks every `(physical db, key)` in `keys`.
    pub fn lock<'a, K: AsRef<[u8]>>(&'a self, keys: &[(u8, K)]) -> KeyGuard<'a> {
        let mut stripes: Vec<usize> = keys
            .iter()
            .map(|(db, key)| self.stripe_of(*db, key.as_ref()))
            .collect();
        stripes.sort_unstable();
        stripes.dedup();
        KeyGuard {
            _guards: stripes
                .into_iter()
                .map(|s| self.stripes[s].lock())
                .collect(),
        }
    }

    /// Locks every stripe: the caller runs alone (FLUSHALL, SWAPDB, ...).
    pub fn lock_all(&self) -> KeyGuard<'_> {
        KeyGuard {
            _guards: self.stripes.iter().map(|s| s.lock()).collect(),
        }
    }
}
