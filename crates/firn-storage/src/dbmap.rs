//! The logical→physical database map that SWAPDB changes. Readers see
//! `live`: the committed map with every submitted swap applied, in submit
//! order. The writer persists the committed map as swaps commit; a swap
//! given up on leaves `pending`, and `live` is rebuilt from what remains.
//!
//! While a swap is submitted but not written, every read goes through a
//! map that shows it: the reads depend on the swap's ticket
//! ([`DbMap::pending_swap_tickets`]).

use parking_lot::{Mutex, RwLock};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::batch::{CommitBatch, Swap};
use crate::ticket::Ticket;

/// The map and the swaps in flight (see the module header).
pub(crate) struct DbMap {
    maps: RwLock<Maps>,
    /// Tickets of submitted swaps not yet written, and their number (one
    /// load on every read while it is 0).
    swap_tickets: Mutex<Vec<Ticket>>,
    swaps_in_flight: AtomicUsize,
}

/// The map as readers see it, as RocksDB has it, and the swaps between.
struct Maps {
    live: Vec<u8>,
    committed: Vec<u8>,
    /// `(seq, a, b)` of submitted swaps not yet written, in submit order.
    pending: Vec<(u64, u8, u8)>,
}

/// Swaps the entries of logical databases `a` and `b` (out of range: no-op).
pub(crate) fn swap_entries(map: &mut [u8], a: u8, b: u8) {
    if (a as usize) < map.len() && (b as usize) < map.len() {
        map.swap(a as usize, b as usize);
    }
}

/// The logical database `map` sends to physical database `pdb`.
pub(crate) fn logical_in(map: &[u8], pdb: u8) -> u8 {
    map.iter().position(|&p| p == pdb).map_or(pdb, |l| l as u8)
}

impl DbMap {
    /// The map RocksDB holds (read at open).
    pub(crate) fn new(committed: Vec<u8>) -> DbMap {
        DbMap {
            maps: RwLock::new(Maps {
                live: committed.clone(),
                committed,
                pending: Vec::new(),
            }),
            swap_tickets: Mutex::new(Vec::new()),
            swaps_in_flight: AtomicUsize::new(0),
        }
    }

    /// RocksDB holds `committed` now and no swap is in flight (a loaded
    /// checkpoint's map, with every writer idle): readers see it at once.
    pub(crate) fn reset(&self, committed: Vec<u8>) {
        let mut maps = self.maps.write();
        maps.live = committed.clone();
        maps.committed = committed;
        maps.pending.clear();
        self.swap_tickets.lock().clear();
        self.swaps_in_flight.store(0, Ordering::Release);
    }

    #[cfg(test)]
    pub(crate) fn committed_map(&self) -> Vec<u8> {
        self.maps.read().committed.clone()
    }

    pub(crate) fn physical(&self, db: u8) -> u8 {
        self.maps
            .read()
            .live
            .get(db as usize)
            .copied()
            .unwrap_or(db)
    }

    /// The logical database currently mapped to physical database `pdb`.
    pub(crate) fn logical(&self, pdb: u8) -> u8 {
        logical_in(&self.maps.read().live, pdb)
    }

    /// The logical→physical map every reader sees now.
    pub(crate) fn live_map(&self) -> Vec<u8> {
        self.maps.read().live.clone()
    }

    /// A submitted batch's swaps: visible to every reader from now on.
    pub(crate) fn submit_swaps(&self, seq: u64, swaps: &[Swap], ticket: Option<&Ticket>) {
        if swaps.is_empty() {
            return;
        }
        let mut map = self.maps.write();
        for swap in swaps {
            swap_entries(&mut map.live, swap.a, swap.b);
            map.pending.push((seq, swap.a, swap.b));
        }
        if let Some(ticket) = ticket {
            self.swap_tickets.lock().push(ticket.clone());
            self.swaps_in_flight.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// The tickets of swaps submitted and not yet written: every read
    /// depends on them while there are any, since the map it read through
    /// shows them (a reply must not show a swap that a crash then undoes).
    pub(crate) fn pending_swap_tickets(&self) -> Option<Vec<Ticket>> {
        if self.swaps_in_flight.load(Ordering::Acquire) == 0 {
            return None;
        }
        Some(self.swap_tickets.lock().clone())
    }

    /// `group` is done with (written or given up on): its swaps' tickets
    /// leave the list reads depend on.
    fn swaps_done(&self, group: &[CommitBatch]) {
        if group.iter().all(|b| b.swaps.is_empty()) {
            return;
        }
        let mut tickets = self.swap_tickets.lock();
        let before = tickets.len();
        tickets.retain(|t| !group.iter().any(|b| b.seq == t.seq()));
        self.swaps_in_flight
            .fetch_sub(before - tickets.len(), Ordering::AcqRel);
    }

    #[cfg(test)]
    pub(crate) fn submit_swaps_for_test(&self, batch: &CommitBatch) {
        self.submit_swaps(batch.seq, &batch.swaps, None);
    }

    /// The map RocksDB holds once `group`'s swaps are written (`None`
    /// when it has none).
    pub(crate) fn map_after(&self, group: &[CommitBatch]) -> Option<Vec<u8>> {
        if group.iter().all(|b| b.swaps.is_empty()) {
            return None;
        }
        let mut map = self.maps.read().committed.clone();
        for swap in group.iter().flat_map(|b| &b.swaps) {
            swap_entries(&mut map, swap.a, swap.b);
        }
        Some(map)
    }

    /// `group` is written: `map` (from [`DbMap::map_after`]) is committed.
    pub(crate) fn swaps_committed(&self, group: &[CommitBatch], map: Vec<u8>) {
        self.swaps_done(group);
        let mut db_map = self.maps.write();
        db_map.committed = map;
        db_map
            .pending
            .retain(|(seq, _, _)| !group.iter().any(|b| b.seq == *seq));
    }

    /// `group` was given up on: its swaps leave the pending list and the
    /// live map is rebuilt from the committed one and the swaps still
    /// pending, in order. (Undoing each swap in place was wrong once two
    /// failed groups had swapped overlapping databases.)
    pub(crate) fn swaps_abandoned(&self, group: &[CommitBatch]) {
        self.swaps_done(group);
        let mut db_map = self.maps.write();
        let before = db_map.pending.len();
        db_map
            .pending
            .retain(|(seq, _, _)| !group.iter().any(|b| b.seq == *seq));
        if db_map.pending.len() == before {
            return;
        }
        let mut live = db_map.committed.clone();
        for &(_, a, b) in &db_map.pending {
            swap_entries(&mut live, a, b);
        }
        db_map.live = live;
    }
}
