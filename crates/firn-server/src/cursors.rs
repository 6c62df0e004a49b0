//! SCAN cursors. Firn iterates keys in RocksDB order, so a position is a
//! key, not a hash-table bucket; clients expect a number. The server keeps
//! the last key of each step under a fresh number (cursor 0 = start) in a
//! bounded table. A cursor that is unknown (evicted after `CAPACITY` newer
//! ones, or from before a restart) starts the iteration again, which still
//! returns every key that exists for the whole scan.
//!
//! HSCAN, SSCAN and ZSCAN cursors live in the same table: their position is
//! a member of one key, and a cursor resumes only a scan of that key.

use bytes::Bytes;
use std::collections::{HashMap, VecDeque};

const CAPACITY: usize = 65_536;

#[derive(Default)]
pub struct ScanCursors {
    next_id: u64,
    /// `(db, key of a member scan, position)`.
    positions: HashMap<u64, (u8, Option<Bytes>, Bytes)>,
    order: VecDeque<u64>,
}

impl ScanCursors {
    /// Remembers where a scan of `db` stopped; returns the cursor to reply.
    pub fn save(&mut self, db: u8, last_key: Bytes) -> u64 {
        self.save_position(db, None, last_key)
    }

    /// Remembers where a scan of the members of `key` stopped.
    pub fn save_member(&mut self, db: u8, key: Bytes, last_member: Bytes) -> u64 {
        self.save_position(db, Some(key), last_member)
    }

    /// The member after which a scan of `key` continues (`None` = start).
    pub fn resume_member(&self, db: u8, key: &[u8], cursor: u64) -> Option<Bytes> {
        match self.positions.get(&cursor) {
            Some((cursor_db, Some(cursor_key), member))
                if *cursor_db == db && cursor_key.as_ref() == key =>
            {
                Some(member.clone())
            }
            _ => None,
        }
    }

    fn save_position(&mut self, db: u8, key: Option<Bytes>, last: Bytes) -> u64 {
        if self.next_id == 0 {
            // Start high and random-ish so cursors from a previous run are
            // unlikely to collide with new ones.
            self.next_id = (firn_storage::now_ms() % 1_000_000) * 1_000_000 + 1;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.positions.insert(id, (db, key, last));
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
            Some((cursor_db, None, key)) if *cursor_db == db => Some(key.clone()),
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

    #[test]
    fn member_cursors_resume_their_key_only() {
        let mut c = ScanCursors::default();
        let id = c.save_member(0, Bytes::from_static(b"h"), Bytes::from_static(b"f"));
        assert_eq!(c.resume_member(0, b"h", id), Some(Bytes::from_static(b"f")));
        assert_eq!(c.resume_member(0, b"g", id), None);
        assert_eq!(c.resume(0, id), None);
        let key_cursor = c.save(0, Bytes::from_static(b"h"));
        assert_eq!(c.resume_member(0, b"h", key_cursor), None);
    }
}
