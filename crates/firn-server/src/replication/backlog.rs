//! The replication backlog: the replication stream's most recent bytes,
//! addressed by Redis's offsets, shared by every replica's sender.
//!
//! A position is the number of stream bytes before a byte; `end` is
//! INFO's `master_repl_offset`. The stream is held as the records
//! themselves (`Bytes`, shared with the writer that made them), never
//! copied into a ring. The backlog keeps at least `repl-backlog-size`
//! bytes, and more while a connected replica still has to be sent them,
//! up to that replica's hard output limit: a replica further behind than
//! that is dropped and syncs again, and the primary never waits for it.

use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

/// A reader's place in the stream (a replica's sender); the backlog keeps
/// what it has not been sent yet, within `hard_limit` bytes of the end.
pub struct Reader {
    pub pos: AtomicU64,
    /// 0: no limit.
    pub hard_limit: u64,
}

/// The reader fell behind what the backlog still holds.
#[derive(Debug)]
pub struct Gone;

struct Chunks {
    chunks: VecDeque<(u64, Bytes)>,
    /// Position of the first byte held.
    start: u64,
    /// Position after the last byte (master_repl_offset).
    end: u64,
    limit: u64,
    /// The logical db the stream has selected at `end` (None: the next
    /// record starts with a SELECT).
    db: Option<u8>,
    readers: Vec<Arc<Reader>>,
    /// Cuts seen (`Replayed::Cut`): sequence → (position, selected db).
    cuts: BTreeMap<u64, (u64, Option<u8>)>,
}

pub struct Backlog {
    chunks: Mutex<Chunks>,
    /// Woken after each append.
    pub grew: Notify,
}

impl Backlog {
    pub fn new(limit: u64) -> Backlog {
        Backlog {
            chunks: Mutex::new(Chunks {
                chunks: VecDeque::new(),
                start: 0,
                end: 0,
                limit,
                db: None,
                readers: Vec::new(),
                cuts: BTreeMap::new(),
            }),
            grew: Notify::new(),
        }
    }

    /// Appends a committed batch's commands (RESP) that ran in logical db
    /// `db`, with a SELECT first when the stream is elsewhere.
    pub fn append_record(&self, db: u8, commands: Bytes) {
        let mut c = self.chunks.lock();
        if c.db != Some(db) {
            let select = select_command(db);
            c.push(select);
            c.db = Some(db);
        }
        c.push(commands);
        drop(c);
        self.grew.notify_waiters();
    }

    /// Appends stream bytes as received from this server's own primary,
    /// after which the stream has `db` selected.
    pub fn append_raw(&self, bytes: Bytes, db: Option<u8>) {
        let mut c = self.chunks.lock();
        c.push(bytes);
        c.db = db;
        drop(c);
        self.grew.notify_waiters();
    }

    /// Remembers where cut `seq` falls in the stream.
    pub fn mark_cut(&self, seq: u64) {
        let mut c = self.chunks.lock();
        let at = (c.end, c.db);
        c.cuts.insert(seq, at);
        // Cuts nobody collected (a failed sync) do not pile up.
        while c.cuts.len() > 64 {
            c.cuts.pop_first();
        }
    }

    /// Where cut `seq` fell: `(position, selected db)`.
    pub fn take_cut(&self, seq: u64) -> Option<(u64, Option<u8>)> {
        self.chunks.lock().cuts.remove(&seq)
    }

    /// Starts the stream afresh at `pos` (a replica's full sync), holding
    /// nothing; `db` is what the stream has selected there.
    pub fn reset(&self, pos: u64, db: Option<u8>) {
        let mut c = self.chunks.lock();
        c.chunks.clear();
        c.start = pos;
        c.end = pos;
        c.db = db;
        c.cuts.clear();
        for reader in &c.readers {
            reader.pos.store(pos, Ordering::Release);
        }
    }

    /// `(start, end)` positions.
    pub fn range(&self) -> (u64, u64) {
        let c = self.chunks.lock();
        (c.start, c.end)
    }

    pub fn end(&self) -> u64 {
        self.chunks.lock().end
    }

    pub fn selected_db(&self) -> Option<u8> {
        self.chunks.lock().db
    }

    pub fn set_limit(&self, limit: u64) {
        let mut c = self.chunks.lock();
        c.limit = limit.max(1);
        c.trim();
    }

    pub fn limit(&self) -> u64 {
        self.chunks.lock().limit
    }

    /// Bytes held.
    pub fn held(&self) -> u64 {
        let c = self.chunks.lock();
        c.end - c.start
    }

    /// A new reader at `pos`, kept until [`Backlog::leave`].
    pub fn join(&self, pos: u64, hard_limit: u64) -> Arc<Reader> {
        let reader = Arc::new(Reader {
            pos: AtomicU64::new(pos),
            hard_limit,
        });
        self.chunks.lock().readers.push(reader.clone());
        reader
    }

    pub fn leave(&self, reader: &Arc<Reader>) {
        let mut c = self.chunks.lock();
        c.readers.retain(|r| !Arc::ptr_eq(r, reader));
        c.trim();
    }

    /// The bytes from `pos` on, up to about `max` bytes (whole records),
    /// or `Gone` when `pos` is no longer held.
    pub fn read(&self, pos: u64, max: usize) -> Result<Vec<Bytes>, Gone> {
        let c = self.chunks.lock();
        if pos < c.start || pos > c.end {
            return Err(Gone);
        }
        let mut out = Vec::new();
        let mut taken = 0usize;
        // The first chunk that ends after `pos`.
        let first = c
            .chunks
            .partition_point(|(at, b)| at + b.len() as u64 <= pos);
        for (at, bytes) in c.chunks.range(first..) {
            let skip = pos.saturating_sub(*at) as usize;
            out.push(bytes.slice(skip..));
            taken += bytes.len() - skip;
            if taken >= max {
                break;
            }
        }
        Ok(out)
    }
}

impl Chunks {
    fn push(&mut self, bytes: Bytes) {
        if bytes.is_empty() {
            return;
        }
        let len = bytes.len() as u64;
        self.chunks.push_back((self.end, bytes));
        self.end += len;
        self.trim();
    }

    /// Drops the oldest records beyond the limit that no reader within
    /// its hard limit still needs.
    fn trim(&mut self) {
        let end = self.end;
        let keep_for_readers = self
            .readers
            .iter()
            .map(|r| {
                let pos = r.pos.load(Ordering::Acquire);
                if r.hard_limit > 0 {
                    pos.max(end.saturating_sub(r.hard_limit))
                } else {
                    pos
                }
            })
            .min()
            .unwrap_or(end);
        while let Some((at, bytes)) = self.chunks.front() {
            let chunk_end = at + bytes.len() as u64;
            // At least `limit` bytes stay.
            if end - chunk_end < self.limit || chunk_end > keep_for_readers {
                break;
            }
            self.start = chunk_end;
            self.chunks.pop_front();
        }
    }
}

/// `SELECT db` as RESP.
fn select_command(db: u8) -> Bytes {
    let digits = db.to_string();
    Bytes::from(format!(
        "*2\r\n$6\r\nSELECT\r\n${}\r\n{}\r\n",
        digits.len(),
        digits
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_from_any_held_position_and_trims_past_the_limit() {
        let backlog = Backlog::new(12);
        backlog.append_raw(Bytes::from_static(b"0123456789"), None);
        backlog.append_raw(Bytes::from_static(b"abcdefghij"), None);
        assert_eq!(backlog.range(), (0, 20));
        let got: Vec<u8> = backlog.read(5, 100).unwrap().concat();
        assert_eq!(got, b"56789abcdefghij");
        backlog.append_raw(Bytes::from_static(b"KLMNO"), None);
        // The first record goes: 15 bytes are still held, over 12.
        assert_eq!(backlog.range(), (10, 25));
        assert!(backlog.read(5, 100).is_err());
        assert_eq!(backlog.read(25, 100).unwrap().len(), 0);
    }

    #[test]
    fn a_reader_keeps_its_bytes_up_to_its_hard_limit() {
        let backlog = Backlog::new(4);
        let reader = backlog.join(0, 15);
        for _ in 0..2 {
            backlog.append_raw(Bytes::from_static(b"0123456789"), None);
        }
        assert_eq!(backlog.range().0, 0);
        backlog.append_raw(Bytes::from_static(b"0123456789"), None);
        // 30 bytes, the reader at 0: kept only back to 30 - 15.
        assert_eq!(backlog.range().0, 10);
        reader.pos.store(30, Ordering::Release);
        backlog.leave(&reader);
        assert_eq!(backlog.range().0, 20);
    }

    #[test]
    fn a_record_in_another_db_is_preceded_by_select() {
        let backlog = Backlog::new(1 << 20);
        backlog.append_record(3, Bytes::from_static(b"*1\r\n$4\r\nPING\r\n"));
        backlog.append_record(3, Bytes::from_static(b"*1\r\n$4\r\nPING\r\n"));
        let all: Vec<u8> = backlog.read(0, 1 << 20).unwrap().concat();
        assert_eq!(
            all,
            b"*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n"
        );
    }
}
