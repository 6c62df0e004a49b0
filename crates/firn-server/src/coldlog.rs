//! The slow-cold-read log: like SLOWLOG, but for commands that had to wait
//! on the disk, i.e. whose run that took effect was on the cold-read pool
//! (coldpool.rs, exec.rs). An entry says how long the command waited from
//! its submission to the pool until its pool run finished, how long of
//! that it queued for a thread, and how many jobs were queued ahead of it.
//! Kept when the wait reaches `cold-read-log-slower-than` µs (-1: never),
//! at most `cold-read-log-max-len` entries, newest first; read with
//! SLOWLOG COLDGET/COLDLEN/COLDRESET and by the metrics endpoint.

use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::VecDeque;

/// One command that waited on the disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColdLogEntry {
    /// Increasing from 0 since the server started (COLDRESET keeps
    /// counting, as SLOWLOG RESET does).
    pub id: u64,
    /// When it was logged, in Unix seconds.
    pub unix_secs: u64,
    /// Microseconds from submission to the pool until its run finished.
    pub wait_us: u64,
    /// Microseconds from submission until a pool thread started it.
    pub queue_wait_us: u64,
    /// Jobs waiting for a pool thread when it was submitted.
    pub queue_len: u64,
    /// The command's name as COMMAND lists it (`get`, `memory|usage`;
    /// `exec` for a transaction).
    pub command: String,
    /// Its first key (empty when it names none).
    pub key: Bytes,
    /// The client's address (`ip:port`) and name (CLIENT SETNAME).
    pub addr: String,
    pub name: Bytes,
}

#[derive(Default)]
struct Entries {
    next_id: u64,
    newest_first: VecDeque<ColdLogEntry>,
}

#[derive(Default)]
pub struct ColdLog {
    entries: Mutex<Entries>,
}

impl ColdLog {
    /// The newest `count` entries, newest first.
    pub fn entries(&self, count: usize) -> Vec<ColdLogEntry> {
        let log = self.entries.lock();
        log.newest_first.iter().take(count).cloned().collect()
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.lock().newest_first.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id of the newest entry ever logged (held or not), `None` if
    /// none was: `last_id + 1` entries were logged since the start.
    pub fn last_id(&self) -> Option<u64> {
        self.entries.lock().next_id.checked_sub(1)
    }

    /// Drops every entry (SLOWLOG COLDRESET); ids go on.
    pub fn reset(&self) {
        self.entries.lock().newest_first.clear();
    }

    /// Adds an entry, keeping at most `max_len`.
    /// Keeps `entry` (its id assigned here) if its wait reached
    /// `threshold_us` (`cold-read-log-slower-than`; negative: never),
    /// keeping at most `max_len` entries.
    pub fn offer(&self, entry: ColdLogEntry, threshold_us: i64, max_len: u64) {
        if threshold_us < 0 || (entry.wait_us as i64) < threshold_us {
            return;
        }
        self.push(entry, usize::try_from(max_len).unwrap_or(usize::MAX));
    }

    fn push(&self, mut entry: ColdLogEntry, max_len: usize) {
        let mut log = self.entries.lock();
        entry.id = log.next_id;
        log.next_id += 1;
        log.newest_first.push_front(entry);
        log.newest_first.truncate(max_len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(command: &str) -> ColdLogEntry {
        ColdLogEntry {
            id: 0,
            unix_secs: 1,
            wait_us: 2,
            queue_wait_us: 1,
            queue_len: 0,
            command: command.into(),
            key: Bytes::from_static(b"k"),
            addr: "127.0.0.1:1".into(),
            name: Bytes::new(),
        }
    }

    #[test]
    fn keeps_the_newest_within_its_length_and_counts_ids_on() {
        let log = ColdLog::default();
        assert_eq!(log.last_id(), None);
        for command in ["a", "b", "c"] {
            log.push(entry(command), 2);
        }
        let held = log.entries(10);
        assert_eq!(held.len(), 2);
        assert_eq!((held[0].id, held[0].command.as_str()), (2, "c"));
        assert_eq!((held[1].id, held[1].command.as_str()), (1, "b"));
        assert_eq!(log.entries(1).len(), 1);
        log.reset();
        assert!(log.is_empty());
        assert_eq!(log.last_id(), Some(2));
        log.push(entry("d"), 2);
        assert_eq!(log.entries(10)[0].id, 3);
    }
}
