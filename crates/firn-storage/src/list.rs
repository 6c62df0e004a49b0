//! Lists, element by element; their record, [`List`], is in meta.rs.
//!
//! Encoding: the collection's `extra` holds the head and tail positions
//! (u64 big-endian each): element `i` of the list lives in `Cf::Data` under
//! member `(head + i)` as u64 big-endian, and `tail` is one past the last
//! element, so `size == tail - head`. A new list starts both at 2^63, so
//! either end can grow for as long as the list can exist. Positions are
//! big-endian, so byte order is list order and a range of indexes is one
//! bounded range of member keys:
//!
//! - a push writes one entry at `head - 1` or `tail`, a pop reads and
//!   deletes one at `head` or `tail - 1`: O(1) whatever the length;
//! - LINDEX/LSET are one point read or write, LRANGE one seek and a scan of
//!   exactly the elements returned (the tombstones left by pops lie outside
//!   `[head, tail)`, so no read ever walks over them);
//! - an insertion or removal in the middle shifts the elements on the
//!   shorter side by rewriting them (O(n), as in Kvrocks);
//! - a trim deletes the elements it drops, or, when it keeps fewer than it
//!   drops, copies those it keeps under a fresh version and leaves the old
//!   version's entries to the compaction filter; a command that empties
//!   the list (LTRIM, LREM, a pop with a count) deletes nothing but the
//!   record.
//!
//! Invariant: no entry of the live version lies outside `[head, tail)`
//! (each pop deletes its entry), so nothing is left behind for compaction
//! to miss.

use bytes::Bytes;
use std::ops::Bound;

use crate::error::{Result, StorageError};
use crate::meta::{List, ValueType};
use crate::txn::Txn;
use crate::Cf;

impl Txn<'_> {
    /// The list at `key`; `None` if missing, `WrongType` for another type.
    pub fn list(&mut self, db: u8, key: &[u8]) -> Result<Option<List>> {
        self.collection(db, key, ValueType::List)?
            .map(List::from_collection)
            .transpose()
    }

    /// [`Txn::list`], or a new empty list (stored by [`Txn::save_list`]
    /// once it has elements).
    pub fn list_or_new(&mut self, db: u8, key: &[u8]) -> Result<List> {
        match self.list(db, key)? {
            Some(list) => Ok(list),
            None => Ok(self.new_list()),
        }
    }

    /// An empty list with a fresh version, not yet stored.
    pub fn new_list(&mut self) -> List {
        let coll = self.new_collection(ValueType::List, List::origin_extra());
        List::empty(coll)
    }

    /// Stores the list's record back (an empty list is deleted).
    pub fn save_list(&mut self, db: u8, key: &[u8], list: &mut List) -> Result<()> {
        list.sync_record();
        self.save_collection(db, key, &list.coll)
    }

    /// Pushes one element at the head (`left`) or the tail.
    pub fn list_push(&mut self, db: u8, key: &[u8], list: &mut List, left: bool, value: Bytes) {
        let position = if left {
            list.head -= 1;
            list.head
        } else {
            list.tail += 1;
            list.tail - 1
        };
        self.put_member(
            Cf::Data,
            db,
            key,
            &list.coll,
            &position.to_be_bytes(),
            value,
        );
    }

    /// Pops one element from the head (`left`) or the tail.
    pub fn list_pop(
        &mut self,
        db: u8,
        key: &[u8],
        list: &mut List,
        left: bool,
    ) -> Result<Option<Bytes>> {
        if list.is_empty() {
            return Ok(None);
        }
        let index = if left { 0 } else { list.len() - 1 };
        let member = list.position(index);
        let value = self
            .get_member(Cf::Data, db, key, &list.coll, &member)?
            .ok_or(StorageError::Corrupt("list element"))?;
        self.delete_member(Cf::Data, db, key, &list.coll, &member);
        if left {
            list.head += 1;
        } else {
            list.tail -= 1;
        }
        Ok(Some(value))
    }

    /// Pops up to `count` elements from one end, in pop order: one range
    /// scan, then one delete per element.
    pub fn list_pop_many(
        &mut self,
        db: u8,
        key: &[u8],
        list: &mut List,
        left: bool,
        count: u64,
    ) -> Result<Vec<Bytes>> {
        let count = count.min(list.len());
        let (start, stop) = if left {
            (0, count)
        } else {
            (list.len() - count, list.len())
        };
        let mut popped = Vec::with_capacity(count as usize);
        self.list_range(db, key, list, start, stop, !left, |_, value| {
            popped.push(value.clone());
            true
        })?;
        if popped.len() as u64 != count {
            return Err(StorageError::Corrupt("list element"));
        }
        if count == list.len() {
            self.list_clear(list);
            return Ok(popped);
        }
        for index in start..stop {
            let member = list.position(index);
            self.delete_member(Cf::Data, db, key, &list.coll, &member);
        }
        if left {
            list.head += count;
        } else {
            list.tail -= count;
        }
        Ok(popped)
    }

    /// Element `index` (0-based from the head), if the list has it.
    pub fn list_get(
        &mut self,
        db: u8,
        key: &[u8],
        list: &List,
        index: u64,
    ) -> Result<Option<Bytes>> {
        if index >= list.len() {
            return Ok(None);
        }
        let value = self
            .get_member(Cf::Data, db, key, &list.coll, &list.position(index))?
            .ok_or(StorageError::Corrupt("list element"))?;
        Ok(Some(value))
    }

    /// Replaces element `index`, which the caller checked exists.
    pub fn list_set(&mut self, db: u8, key: &[u8], list: &List, index: u64, value: Bytes) {
        let member = list.position(index);
        self.put_member(Cf::Data, db, key, &list.coll, &member, value);
    }

    /// Visits elements `start..stop` (clamped to the list) with their
    /// indexes, head to tail or (`reverse`) tail to head, until `visit`
    /// returns false. Reads only the elements visited.
    #[allow(clippy::too_many_arguments)]
    pub fn list_range(
        &mut self,
        db: u8,
        key: &[u8],
        list: &List,
        start: u64,
        stop: u64,
        reverse: bool,
        mut visit: impl FnMut(u64, &Bytes) -> bool,
    ) -> Result<()> {
        let stop = stop.min(list.len());
        if start >= stop {
            return Ok(());
        }
        let (from, to) = (list.position(start), list.position(stop));
        let head = list.head;
        let mut corrupt = false;
        self.scan_members(
            Cf::Data,
            db,
            key,
            &list.coll,
            Bound::Included(&from),
            Bound::Excluded(&to),
            reverse,
            |member, value| match <[u8; 8]>::try_from(member) {
                Ok(position) => visit(u64::from_be_bytes(position).wrapping_sub(head), value),
                Err(_) => {
                    corrupt = true;
                    false
                }
            },
        )?;
        if corrupt {
            return Err(StorageError::Corrupt("list element"));
        }
        Ok(())
    }

    /// The elements `start..stop` in order (the caller bounds the range).
    fn list_elements(
        &mut self,
        db: u8,
        key: &[u8],
        list: &List,
        start: u64,
        stop: u64,
    ) -> Result<Vec<Bytes>> {
        let mut elements = Vec::with_capacity(stop.saturating_sub(start) as usize);
        self.list_range(db, key, list, start, stop, false, |_, value| {
            elements.push(value.clone());
            true
        })?;
        if elements.len() as u64 != stop.min(list.len()).saturating_sub(start) {
            return Err(StorageError::Corrupt("list element"));
        }
        Ok(elements)
    }

    /// Empties the list in O(1): it moves to a fresh version (same key,
    /// expiry and stored state), so every old element becomes the
    /// compaction filter's garbage and no entry of the live version ever
    /// lies outside `[head, tail)`.
    fn list_clear(&mut self, list: &mut List) {
        let mut fresh = self.new_list();
        fresh.coll.expire_at_ms = list.coll.expire_at_ms;
        fresh.coll.stored = list.coll.stored;
        fresh.coll.big = list.coll.big;
        *list = fresh;
    }

    /// Inserts `value` so that it becomes element `index` (`index <= len`),
    /// moving the elements on the shorter side of it by one position.
    pub fn list_insert(
        &mut self,
        db: u8,
        key: &[u8],
        list: &mut List,
        index: u64,
        value: Bytes,
    ) -> Result<()> {
        let len = list.len();
        let index = index.min(len);
        if index < len - index {
            // Elements 0..index move one position towards the head.
            let moved = self.list_elements(db, key, list, 0, index)?;
            list.head -= 1;
            for (i, element) in moved.into_iter().enumerate() {
                self.list_set(db, key, list, i as u64, element);
            }
        } else {
            // Elements index..len move one position towards the tail.
            let moved = self.list_elements(db, key, list, index, len)?;
            list.tail += 1;
            for (i, element) in moved.into_iter().enumerate() {
                self.list_set(db, key, list, index + 1 + i as u64, element);
            }
        }
        self.list_set(db, key, list, index, value);
        Ok(())
    }

    /// Removes the elements at `indexes` (ascending, distinct, in range),
    /// closing the gaps from the shorter side.
    pub fn list_remove(
        &mut self,
        db: u8,
        key: &[u8],
        list: &mut List,
        indexes: &[u64],
    ) -> Result<()> {
        let (Some(&first), Some(&last)) = (indexes.first(), indexes.last()) else {
            return Ok(());
        };
        let len = list.len();
        let removed = indexes.len() as u64;
        if removed >= len {
            self.list_clear(list);
            return Ok(());
        }
        let is_removed = |i: u64| indexes.binary_search(&i).is_ok();
        if len - first <= last + 1 {
            // Survivors after `first` move towards the head; the last
            // `removed` positions are freed.
            let window = self.list_elements(db, key, list, first, len)?;
            let mut to = first;
            for (offset, element) in window.into_iter().enumerate() {
                if !is_removed(first + offset as u64) {
                    self.list_set(db, key, list, to, element);
                    to += 1;
                }
            }
            for index in len - removed..len {
                let member = list.position(index);
                self.delete_member(Cf::Data, db, key, &list.coll, &member);
            }
            list.tail -= removed;
        } else {
            // Survivors before `last` move towards the tail; the first
            // `removed` positions are freed.
            let window = self.list_elements(db, key, list, 0, last + 1)?;
            let mut to = last + 1;
            for (offset, element) in window.into_iter().enumerate().rev() {
                if !is_removed(offset as u64) {
                    to -= 1;
                    self.list_set(db, key, list, to, element);
                }
            }
            for index in 0..removed {
                let member = list.position(index);
                self.delete_member(Cf::Data, db, key, &list.coll, &member);
            }
            list.head += removed;
        }
        Ok(())
    }

    /// Keeps only elements `start..stop` (clamped; an empty range empties
    /// the list). Costs the smaller of the elements dropped (deleted one by
    /// one) and the elements kept (copied under a fresh version, the old
    /// version's entries left to compaction).
    pub fn list_trim(
        &mut self,
        db: u8,
        key: &[u8],
        list: &mut List,
        start: u64,
        stop: u64,
    ) -> Result<()> {
        let len = list.len();
        let stop = stop.min(len);
        let start = start.min(stop);
        let kept = stop - start;
        if kept == len {
            return Ok(());
        }
        if kept < len - kept {
            let elements = self.list_elements(db, key, list, start, stop)?;
            self.list_clear(list);
            for element in elements {
                self.list_push(db, key, list, false, element);
            }
            return Ok(());
        }
        for index in (0..start).chain(stop..len) {
            let member = list.position(index);
            self.delete_member(Cf::Data, db, key, &list.coll, &member);
        }
        list.tail = list.head + stop;
        list.head += start;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_engine::open;
    use crate::ReadMode;
    use rand::{Rng, SeedableRng};

    const KEY: &[u8] = b"list";

    /// Runs `f` on the list at KEY in a blocking transaction, saves the
    /// list and commits; returns the list's elements afterwards.
    fn apply(engine: &crate::Engine, f: impl FnOnce(&mut Txn<'_>, &mut List)) -> Vec<Bytes> {
        let mut txn = engine.txn(ReadMode::Blocking);
        let mut list = txn.list_or_new(0, KEY).expect("list");
        f(&mut txn, &mut list);
        txn.save_list(0, KEY, &mut list).expect("save");
        for ticket in txn.commit().expect("commit") {
            ticket.wait_blocking().expect("durable");
        }
        let mut txn = engine.txn(ReadMode::Blocking);
        let Some(list) = txn.list(0, KEY).expect("read") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        txn.list_range(0, KEY, &list, 0, list.len(), false, |_, v| {
            out.push(v.clone());
            true
        })
        .expect("range");
        assert_eq!(out.len() as u64, list.len());
        out
    }

    fn b(n: u64) -> Bytes {
        Bytes::from(n.to_string())
    }

    #[test]
    fn middle_changes_match_a_vector_model() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = open(dir.path());
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut model: Vec<Bytes> = Vec::new();
        let mut next = 0u64;
        for _ in 0..400 {
            let len = model.len() as u64;
            let op = rng.random_range(0..6);
            let got = apply(&engine, |txn, list| match op {
                0 | 1 => {
                    let value = b(next);
                    next += 1;
                    let left = op == 0;
                    txn.list_push(0, KEY, list, left, value.clone());
                    if left {
                        model.insert(0, value);
                    } else {
                        model.push(value);
                    }
                }
                2 => {
                    let at = rng.random_range(0..=len);
                    let value = b(next);
                    next += 1;
                    txn.list_insert(0, KEY, list, at, value.clone())
                        .expect("insert");
                    model.insert(at as usize, value);
                }
                3 if len > 0 => {
                    let mut indexes: Vec<u64> =
                        (0..len).filter(|_| rng.random_range(0..4) == 0).collect();
                    if indexes.is_empty() {
                        indexes.push(rng.random_range(0..len));
                    }
                    txn.list_remove(0, KEY, list, &indexes).expect("remove");
                    for &i in indexes.iter().rev() {
                        model.remove(i as usize);
                    }
                }
                4 if len > 0 => {
                    let start = rng.random_range(0..=len);
                    let stop = rng.random_range(start..=len + 2);
                    txn.list_trim(0, KEY, list, start, stop).expect("trim");
                    let stop = stop.min(len) as usize;
                    model = model[start as usize..stop].to_vec();
                }
                _ => {
                    let left = rng.random_range(0..2) == 0;
                    let count = rng.random_range(0..4);
                    let popped = txn.list_pop_many(0, KEY, list, left, count).expect("pop");
                    let take = (count as usize).min(model.len());
                    let expected: Vec<Bytes> = if left {
                        model.drain(..take).collect()
                    } else {
                        model.drain(model.len() - take..).rev().collect()
                    };
                    assert_eq!(popped, expected);
                }
            });
            assert_eq!(got, model);
        }
    }

    #[test]
    fn single_pops_and_point_reads() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = open(dir.path());
        let got = apply(&engine, |txn, list| {
            for i in 0..5 {
                txn.list_push(0, KEY, list, false, b(i));
            }
            assert_eq!(txn.list_pop(0, KEY, list, true).expect("pop"), Some(b(0)));
            assert_eq!(txn.list_pop(0, KEY, list, false).expect("pop"), Some(b(4)));
            assert_eq!(txn.list_get(0, KEY, list, 0).expect("get"), Some(b(1)));
            assert_eq!(txn.list_get(0, KEY, list, 3).expect("get"), None);
            txn.list_set(0, KEY, list, 2, b(9));
        });
        assert_eq!(got, vec![b(1), b(2), b(9)]);
        let got = apply(&engine, |txn, list| {
            while txn.list_pop(0, KEY, list, true).expect("pop").is_some() {}
            assert!(list.is_empty());
        });
        assert!(got.is_empty());
        let mut txn = engine.txn(ReadMode::Blocking);
        assert_eq!(txn.list(0, KEY).expect("read"), None);
    }
}
