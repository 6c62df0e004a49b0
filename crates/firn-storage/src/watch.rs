//! WATCH: which clients watch which keys, and marking them dirty when a
//! batch that changes one of those keys is submitted.
//!
//! The registry maps `(logical db, key)` to the clients watching it. It is
//! consulted by `Inner::submit` only while it holds at least one entry,
//! so a server nobody WATCHes on pays one atomic load per batch. Marking is
//! synchronous, at submit, while the writing command still holds its keys'
//! locks: a write submitted before an EXEC takes its locks is always seen
//! by that EXEC's check. Only real commits are submitted, so a pool run
//! whose result is discarded never dirties anyone.
//!
//! Keys are watched precisely (not by lock stripe). As in Redis 7.0 a
//! watch remembers whether its key was already expired when it was
//! watched: deleting such a key (lazy or active expiry, FLUSHDB) is no
//! logical change and does not dirty the watcher, and EXEC fails if a key
//! that was live at WATCH time has expired since.

use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::batch::{CommitBatch, Presence, SwapCheck};
use crate::dbmap::{logical_in, swap_entries};
use crate::keys;
use crate::ticket::Ticket;
use crate::Cf;

/// A batch's ticket, set once the batch is queued (its watchers are
/// marked just before): `None` if it could not be queued.
pub(crate) type BatchTicket = Arc<OnceLock<Option<Ticket>>>;

/// Sets a [`BatchTicket`] to `None` unless the batch was queued, so that
/// nobody waits for a slot that is never filled.
pub(crate) struct TicketOnDrop(pub(crate) BatchTicket);

impl Drop for TicketOnDrop {
    fn drop(&mut self) {
        let _ = self.0.set(None);
    }
}

const SHARDS: usize = 64;

/// How many of the batches that made a watcher dirty it remembers (a
/// batch that could not be queued leaves an empty slot).
const TOUCHED_BY_KEPT: usize = 4;

/// Runtime turns an aborting EXEC yields while a touching batch's ticket
/// is being created.
const SLOT_WAIT_TURNS: usize = 1000;

/// One client's watch state (one per connection).
#[derive(Default)]
pub struct Watcher {
    /// A watched key changed (Redis's CLIENT_DIRTY_CAS).
    dirty: AtomicBool,
    /// The batches that changed them, each known by its ticket once it is
    /// queued: an EXEC that aborts waits for them, so that its reply never
    /// shows a write a crash could still undo.
    touched_by: Mutex<Vec<BatchTicket>>,
    /// The keys watched: `(logical db, key)`.
    keys: Mutex<Vec<(u8, Bytes)>>,
}

impl Watcher {
    /// Whether a watched key was touched since it was watched.
    pub fn is_dirty(&self) -> bool {
        self.dirty.load(Ordering::Acquire)
    }

    /// Forgets that a watched key changed (UNWATCH, EXEC, DISCARD).
    pub fn clear_dirty(&self) {
        self.dirty.store(false, Ordering::Release);
        self.touched_by.lock().clear();
    }

    /// The tickets of the batches that made this watcher dirty. A batch
    /// marks its watchers a moment before its ticket exists (in the same
    /// `submit`, which does not block): an empty slot is awaited by
    /// yielding to the runtime, never by spinning the thread, and given up
    /// after a bounded number of turns.
    pub async fn touching_tickets(&self) -> Vec<Ticket> {
        let touched = self.touched_by.lock().clone();
        let mut tickets = Vec::with_capacity(touched.len());
        for slot in touched {
            for _ in 0..SLOT_WAIT_TURNS {
                if slot.get().is_some() {
                    break;
                }
                tokio::task::yield_now().await;
            }
            if let Some(Some(ticket)) = slot.get() {
                tickets.push(ticket.clone());
            }
        }
        tickets
    }

    /// How many keys are watched.
    pub fn watched(&self) -> usize {
        self.keys.lock().len()
    }

    /// The keys watched, `(logical db, key)`: EXEC holds their locks too,
    /// so that its check is ordered with the writes of those keys.
    pub fn watched_keys(&self) -> Vec<(u8, Bytes)> {
        self.keys.lock().clone()
    }

    fn mark(&self, by: &BatchTicket) {
        // The first batches that touched a watched key are what an abort
        // shows; later ones add nothing, so a watcher left dirty for long
        // keeps a few slots, not one per batch.
        let mut touched = self.touched_by.lock();
        let known = touched.last().is_some_and(|last| Arc::ptr_eq(last, by));
        if !known && touched.len() < TOUCHED_BY_KEPT {
            touched.push(by.clone());
        }
        self.dirty.store(true, Ordering::Release);
    }
}

/// What WATCH saw of a key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WatchedState {
    /// The key existed and was live.
    pub exists: bool,
    /// The key was physically present but already expired.
    pub expired: bool,
    /// The live key's deadline (0 = none).
    pub expire_at_ms: u64,
}

struct Entry {
    watcher: Arc<Watcher>,
    state: WatchedState,
}

type Shard = HashMap<(u8, Bytes), Vec<Entry>>;

pub(crate) struct WatchRegistry {
    /// Entries over all shards: zero means nobody watches anything.
    entries: AtomicUsize,
    shards: Box<[Mutex<Shard>]>,
}

impl Default for WatchRegistry {
    fn default() -> Self {
        WatchRegistry {
            entries: AtomicUsize::new(0),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }
}

impl WatchRegistry {
    fn shard(&self, db: u8, key: &[u8]) -> &Mutex<Shard> {
        &self.shards[keys::stripe_of_key(db, key) % SHARDS]
    }

    pub(crate) fn is_active(&self) -> bool {
        self.entries.load(Ordering::Acquire) > 0
    }

    pub(crate) fn watch(&self, watcher: &Arc<Watcher>, db: u8, key: &[u8], state: WatchedState) {
        let mut keys = watcher.keys.lock();
        if keys.iter().any(|(d, k)| *d == db && k.as_ref() == key) {
            return;
        }
        let key = Bytes::copy_from_slice(key);
        keys.push((db, key.clone()));
        self.shard(db, &key)
            .lock()
            .entry((db, key))
            .or_default()
            .push(Entry {
                watcher: watcher.clone(),
                state,
            });
        self.entries.fetch_add(1, Ordering::AcqRel);
    }

    pub(crate) fn unwatch_all(&self, watcher: &Arc<Watcher>) {
        let keys = std::mem::take(&mut *watcher.keys.lock());
        for (db, key) in keys {
            let mut shard = self.shard(db, &key).lock();
            let slot = (db, key);
            if let Some(list) = shard.get_mut(&slot) {
                let before = list.len();
                list.retain(|e| !Arc::ptr_eq(&e.watcher, watcher));
                self.entries
                    .fetch_sub(before - list.len(), Ordering::AcqRel);
                if list.is_empty() {
                    shard.remove(&slot);
                }
            }
        }
    }

    fn state_of(&self, watcher: &Arc<Watcher>, db: u8, key: &Bytes) -> Option<WatchedState> {
        let shard = self.shard(db, key).lock();
        shard
            .get(&(db, key.clone()))?
            .iter()
            .find(|e| Arc::ptr_eq(&e.watcher, watcher))
            .map(|e| e.state)
    }

    /// Whether `watcher`'s EXEC must fail (see `Engine::watch_failed`).
    pub(crate) fn failed(&self, watcher: &Arc<Watcher>, now_ms: u64) -> bool {
        if watcher.is_dirty() {
            return true;
        }
        let keys = watcher.keys.lock().clone();
        keys.iter().any(|(db, key)| {
            self.state_of(watcher, *db, key).is_some_and(|s| {
                !s.expired && s.exists && s.expire_at_ms != 0 && s.expire_at_ms <= now_ms
            })
        })
    }

    /// A batch changed `key` of logical db `db`; `deleted` when its
    /// meta record is gone afterwards.
    fn touch_key(&self, db: u8, key: &[u8], deleted: bool, by: &BatchTicket) {
        let mut shard = self.shard(db, key).lock();
        let Some(list) = shard.get_mut(&(db, Bytes::copy_from_slice(key))) else {
            return;
        };
        for entry in list.iter_mut() {
            if entry.state.expired && deleted {
                // An already expired key deleted: no logical change.
                entry.state = WatchedState::default();
                continue;
            }
            entry.watcher.mark(by);
        }
    }

    /// FLUSHDB/FLUSHALL emptied logical db `db`: watchers of keys that
    /// existed are dirty; already expired keys are now simply gone.
    fn touch_flushed(&self, db: u8, by: &BatchTicket) {
        self.each_in_db(db, |entry| {
            if entry.state.expired {
                entry.state = WatchedState::default();
            } else if entry.state.exists {
                entry.watcher.mark(by);
            }
        });
    }

    /// SWAPDB swapped logical dbs `a` and `b`: Redis 7.0's
    /// touchAllWatchedKeysInDb for each side. A key watched after the swap
    /// looked (it ran on the pool meanwhile) is dirty, to be safe.
    fn touch_swapped(&self, a: u8, b: u8, checks: &[SwapCheck], by: &BatchTicket) {
        let found: HashMap<(u8, &[u8]), &SwapCheck> =
            checks.iter().map(|c| ((c.db, c.key.as_ref()), c)).collect();
        for db in [a, b] {
            self.each_in_db_keyed(db, |key, entry| {
                let Some(check) = found.get(&(db, key)) else {
                    entry.watcher.mark(by);
                    return;
                };
                let (here, there) = (check.here, check.there);
                if here == Presence::Absent && there == Presence::Absent {
                    return;
                }
                if entry.state.expired {
                    if there == Presence::Absent {
                        // Expired key now deleted: no logical change.
                        entry.state = WatchedState::default();
                        return;
                    }
                    if there == Presence::Expired {
                        return;
                    }
                } else if here == Presence::Absent && there == Presence::Expired {
                    // A missing key replaced with an expired one.
                    entry.state = WatchedState {
                        exists: false,
                        expired: true,
                        expire_at_ms: 0,
                    };
                    return;
                }
                entry.watcher.mark(by);
            });
        }
    }

    /// Every database was replaced (a loaded checkpoint): every watcher
    /// is dirty, whatever its keys were and are now. Stricter than a
    /// FLUSHALL, which spares keys that did not exist: comparing each
    /// watched key with the loaded data would buy a replica's rare WATCH
    /// nothing. No batch did it, so no ticket is awaited on abort.
    pub(crate) fn touch_all(&self) {
        let by: BatchTicket = Arc::new(OnceLock::from(None));
        for shard in self.shards.iter() {
            for list in shard.lock().values() {
                for entry in list {
                    entry.watcher.mark(&by);
                }
            }
        }
    }

    fn each_in_db(&self, db: u8, mut visit: impl FnMut(&mut Entry)) {
        self.each_in_db_keyed(db, |_, entry| visit(entry));
    }

    fn each_in_db_keyed(&self, db: u8, mut visit: impl FnMut(&[u8], &mut Entry)) {
        for shard in self.shards.iter() {
            let mut shard = shard.lock();
            for ((entry_db, key), list) in shard.iter_mut() {
                if *entry_db == db {
                    for entry in list.iter_mut() {
                        visit(key, entry);
                    }
                }
            }
        }
    }

    /// The watched keys of logical dbs `dbs`.
    pub(crate) fn keys_in(&self, dbs: &[u8]) -> Vec<(u8, Bytes)> {
        let mut keys = Vec::new();
        for shard in self.shards.iter() {
            let shard = shard.lock();
            keys.extend(shard.keys().filter(|(db, _)| dbs.contains(db)).cloned());
        }
        keys
    }

    /// Marks the watchers of everything `batch` changes. Called at submit,
    /// before the batch's swap (if any) changes the database map: `before`
    /// is the live map then.
    ///
    /// A batch with swaps wrote some keys before them (under the map as it
    /// is now) and some after (under the swapped map), and which is not
    /// recorded: a changed physical key then touches its logical key under
    /// both maps. At worst a transaction watching the other one aborts,
    /// never one that should.
    pub(crate) fn touch_batch(&self, before: &[u8], batch: &CommitBatch, by: &BatchTicket) {
        let after = (!batch.swaps.is_empty()).then(|| {
            let mut map = before.to_vec();
            for swap in &batch.swaps {
                swap_entries(&mut map, swap.a, swap.b);
            }
            map
        });
        let logical = |pdb: u8| -> (u8, Option<u8>) {
            let now = logical_in(before, pdb);
            let swapped = after
                .as_ref()
                .map(|map| logical_in(map, pdb))
                .filter(|&db| db != now);
            (now, swapped)
        };
        for &pdb in &batch.flushes {
            let (now, swapped) = logical(pdb);
            self.touch_flushed(now, by);
            if let Some(db) = swapped {
                self.touch_flushed(db, by);
            }
        }
        for swap in &batch.swaps {
            self.touch_swapped(swap.a, swap.b, &swap.checks, by);
        }
        // The keys the batch's commands signal as modified (signals.rs),
        // each with whether the batch deletes its meta record.
        let mut changed: Vec<(u8, &[u8], bool)> = Vec::new();
        if let Some(signals) = &batch.signals {
            for (pdb, key) in &signals.modified {
                let meta = crate::overlay::overlay_key(Cf::Meta, &keys::meta_key(*pdb, key));
                let deleted = matches!(batch.writes.get(&meta), Some(None));
                changed.push((*pdb, &key[..], deleted));
            }
        } else {
            // Per key: whether its meta record is deleted by the batch.
            // Meta entries sort before member entries (by column family),
            // so a key's first entry decides. A set, not a list searched per
            // entry: an MSET of 100,000 keys took 74-112 s while anybody
            // watched.
            let mut seen: std::collections::HashSet<(u8, &[u8])> = std::collections::HashSet::new();
            for (raw, value) in &batch.writes {
                let Some((&cf, raw)) = raw.split_first() else {
                    continue;
                };
                let found = if cf == Cf::Meta as u8 {
                    keys::parse_meta_key(raw).map(|(pdb, key)| (pdb, key, value.is_none()))
                } else if cf == Cf::Data as u8 || cf == Cf::ZScore as u8 || cf == Cf::Stream as u8 {
                    keys::parse_member_key(raw).map(|(pdb, key, _)| (pdb, key, false))
                } else {
                    None
                };
                if let Some((pdb, key, deleted)) = found {
                    if seen.insert((pdb, key)) {
                        changed.push((pdb, key, deleted));
                    }
                }
            }
        }
        for (pdb, key, deleted) in changed {
            let (now, swapped) = logical(pdb);
            self.touch_key(now, key, deleted, by);
            if let Some(db) = swapped {
                self.touch_key(db, key, deleted, by);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live() -> WatchedState {
        WatchedState {
            exists: true,
            ..WatchedState::default()
        }
    }

    #[test]
    fn only_watchers_of_the_touched_key_are_dirty() {
        let registry = WatchRegistry::default();
        let (a, b) = (Arc::new(Watcher::default()), Arc::new(Watcher::default()));
        assert!(!registry.is_active());
        registry.watch(&a, 0, b"k", live());
        registry.watch(&b, 0, b"other", live());
        registry.watch(&b, 0, b"other", live());
        assert_eq!(b.watched(), 1);
        registry.touch_key(0, b"k", false, &Default::default());
        assert!(a.is_dirty() && !b.is_dirty());
        registry.touch_key(1, b"other", false, &Default::default());
        assert!(!b.is_dirty());
        registry.unwatch_all(&a);
        registry.unwatch_all(&b);
        assert!(!registry.is_active());
    }

    #[test]
    fn an_expired_key_deleted_is_no_change_but_a_new_value_is() {
        let registry = WatchRegistry::default();
        let w = Arc::new(Watcher::default());
        let expired = WatchedState {
            expired: true,
            ..WatchedState::default()
        };
        registry.watch(&w, 0, b"k", expired);
        registry.touch_key(0, b"k", true, &Default::default());
        assert!(!w.is_dirty());
        registry.touch_key(0, b"k", false, &Default::default());
        assert!(w.is_dirty());
    }

    #[test]
    fn a_swap_spares_keys_in_neither_database() {
        let registry = WatchRegistry::default();
        let (a, b, c) = (
            Arc::new(Watcher::default()),
            Arc::new(Watcher::default()),
            Arc::new(Watcher::default()),
        );
        registry.watch(&a, 0, b"nowhere", WatchedState::default());
        registry.watch(&b, 1, b"there", WatchedState::default());
        registry.watch(&c, 0, b"unchecked", WatchedState::default());
        let check = |db, key: &'static [u8], here, there| SwapCheck {
            db,
            key: Bytes::from_static(key),
            here,
            there,
        };
        let checks = [
            check(0, b"nowhere", Presence::Absent, Presence::Absent),
            check(1, b"there", Presence::Absent, Presence::Live),
        ];
        registry.touch_swapped(0, 1, &checks, &Default::default());
        assert!(!a.is_dirty() && b.is_dirty() && c.is_dirty());
    }

    #[test]
    fn a_flush_dirties_watchers_of_keys_that_existed() {
        let registry = WatchRegistry::default();
        let (a, b) = (Arc::new(Watcher::default()), Arc::new(Watcher::default()));
        registry.watch(&a, 0, b"present", live());
        registry.watch(&b, 0, b"absent", WatchedState::default());
        registry.touch_flushed(0, &Default::default());
        assert!(a.is_dirty() && !b.is_dirty());
    }

    #[tokio::test]
    async fn a_dirty_watcher_knows_the_tickets_of_the_batches_that_touched_it() {
        let watcher = Watcher::default();
        let queued: BatchTicket = Default::default();
        let refused: BatchTicket = Default::default();
        watcher.mark(&queued);
        watcher.mark(&queued);
        watcher.mark(&refused);
        let ticket = Ticket::new(7);
        let _ = queued.set(Some(ticket.clone()));
        drop(TicketOnDrop(refused));
        assert!(watcher.is_dirty());
        assert_eq!(watcher.touching_tickets().await.len(), 1);
        watcher.clear_dirty();
        assert!(watcher.touching_tickets().await.is_empty());
    }
}
