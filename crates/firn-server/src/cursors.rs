//! SCAN cursors. Firn iterates keys in RocksDB order, so a position is a
//! key, not a hash-table bucket; clients expect a number. The server keeps
//! the last key of each step under a fresh number (cursor 0 = start) in a
//! bounded table. A cursor that is unknown (evicted after `CAPACITY` newer
//! ones, or from before a restart) starts the iteration again, which still
//! returns every key that exists for the whole scan.

use bytes::Bytes;
use std::collections::{HashMap, VecDeque};

const CAPACITY: usize = 65_536;

#[derive(Default)]
pub struct ScanCursors {
    next_id: u64,
    positions: HashMap<u64, (u8, Bytes)>,
    order: VecDeque<u64>,
}

impl ScanCursors {
    /// Remembers where a scan of `db` stopped; returns the cursor to reply.
    pub fn save(&mut self, db: u8, last_key: Bytes) -> u64 {
        if self.next_id == 0 {
            // Start high and random-ish so cursors from a previous run are
            // unlikely to collide with new ones.
            self.next_id = (firn_storage::now_ms() % 1_000_000) * 1_000_000 + 1;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.positions.insert(id, (db, last_key));
        self.order.push_back(id);
        while self.order.len() > CAPACITY {
            if let Some(old) = self.order.pop_front() {
                self.positions.remove(&old);
            }
        }
        id
    }

    /// The key after which a scan of `db` continues (`None` = from the start).
    pub fn resume(&self, db: u8, cursor: u64) -> Option<Bytes> {
        match self.positions.get(&cursor) {
            Some((cursor_db, key)) if *cursor_db == db => Some(key.clone()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_resume_in_their_database_only() {
        let mut c = ScanCursors::default();
        let id = c.save(2, Bytes::from_static(b"k"));
        assert_ne!(id, 0);
        assert_eq!(c.resume(2, id), Some(Bytes::from_static(b"k")));
        assert_eq!(c.resume(3, id), None);
        assert_eq!(c.resume(2, id + 1000), None);
    }
}
