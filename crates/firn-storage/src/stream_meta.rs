//! A stream's records, decoded: its meta record's type fields
//! ([`StreamMeta`]), its nodes ([`StreamNode`]), groups ([`StreamGroup`]),
//! pending entries ([`PendingEntry`]) and consumers ([`StreamConsumer`]),
//! and the member bytes each is stored under. The operations on them are
//! `Txn` methods in stream.rs.
//!
//! Every record lives in `Cf::Stream` under the key's version; the first
//! byte of the member says what it is, and IDs are 16 bytes big-endian, so
//! byte order is ID order:
//!
//! ```text
//! e · id                         an entry: its fields and values
//! n · master id                  a node (Redis's listpack): counts, size, fields
//! g · group name                 a group: number, last id, counters
//! p · group number · id          a pending entry: consumer, delivery time, count
//! c · group number · consumer    a consumer: seen time, pending count
//! q · group number · len · consumer · id
//!                                the consumer's own pending list (empty value)
//! ```
//! Entries, pending entries and consumers are point records, so XADD, XACK
//! and XCLAIM cost a few reads whatever the stream's size, and ranges walk
//! only what they return. Nodes exist only to answer as Redis does where
//! its listpack nodes show: approximate trimming (`~`) removes whole nodes,
//! and XINFO counts them.

use bytes::Bytes;
use std::fmt;

use crate::error::{Result, StorageError};
use crate::meta::Collection;

pub(crate) const ENTRY: u8 = b'e';
pub(crate) const NODE: u8 = b'n';
pub(crate) const GROUP: u8 = b'g';
pub(crate) const PENDING: u8 = b'p';
pub(crate) const CONSUMER: u8 = b'c';
pub(crate) const CONSUMER_PENDING: u8 = b'q';

/// Redis's cap on a node's listpack (STREAM_LISTPACK_MAX_SIZE), and on the
/// bytes of one entry's fields and values.
pub const STREAM_LISTPACK_MAX_SIZE: u64 = 1 << 30;

/// How a trim chooses what goes (XADD's and XTRIM's MAXLEN and MINID).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trim {
    MaxLen(u64),
    MinId(StreamId),
}

/// An entry: its ID and its fields and values in order.
pub type StreamEntry = (StreamId, Vec<(Bytes, Bytes)>);

/// Why an append failed (Redis's EDOM and ERANGE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendError {
    /// The ID is not above the stream's last ID.
    NotAbove,
    /// The fields and values are too large for a node.
    TooLarge,
}

/// A stream entry ID, `ms-seq`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

impl StreamId {
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    pub fn new(ms: u64, seq: u64) -> Self {
        StreamId { ms, seq }
    }

    pub fn is_zero(&self) -> bool {
        *self == StreamId::MIN
    }

    /// The next ID (streamIncrID); `None` past the last one.
    pub fn next(&self) -> Option<StreamId> {
        if self.seq < u64::MAX {
            Some(StreamId::new(self.ms, self.seq + 1))
        } else if self.ms < u64::MAX {
            Some(StreamId::new(self.ms + 1, 0))
        } else {
            None
        }
    }

    /// The previous ID (streamDecrID); `None` before 0-0.
    pub fn prev(&self) -> Option<StreamId> {
        if self.seq > 0 {
            Some(StreamId::new(self.ms, self.seq - 1))
        } else if self.ms > 0 {
            Some(StreamId::new(self.ms - 1, u64::MAX))
        } else {
            None
        }
    }

    pub fn to_bytes(self) -> [u8; 16] {
        let mut out = [0; 16];
        out[..8].copy_from_slice(&self.ms.to_be_bytes());
        out[8..].copy_from_slice(&self.seq.to_be_bytes());
        out
    }

    pub fn from_bytes(raw: &[u8]) -> Result<StreamId> {
        Ok(StreamId::new(
            read_u64(raw, 0).ok_or(CORRUPT)?,
            read_u64(raw, 8).ok_or(CORRUPT)?,
        ))
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

const CORRUPT: StorageError = StorageError::Corrupt("stream record");

/// A stream's meta record with its type fields decoded. `coll.size` is its
/// length (live entries).
#[derive(Clone, Debug, PartialEq)]
pub struct StreamMeta {
    pub coll: Collection,
    pub last_id: StreamId,
    /// The first live entry (0-0 when empty), as Redis records it.
    pub first_id: StreamId,
    pub max_deleted_id: StreamId,
    pub entries_added: u64,
    pub groups: u64,
    /// Nodes (Redis's radix-tree keys).
    pub nodes: u64,
    /// The last node's master ID, when there are nodes.
    pub(crate) tail: StreamId,
    pub(crate) next_group: u64,
}

const META_BYTES: usize = 16 * 4 + 8 * 4;

impl StreamMeta {
    pub fn from_collection(coll: Collection) -> Result<StreamMeta> {
        let x = &coll.extra;
        if x.len() < META_BYTES {
            return Err(CORRUPT);
        }
        let id = |at: usize| StreamId::from_bytes(&x[at..at + 16]);
        let num = |at: usize| read_u64(x, at).ok_or(CORRUPT);
        Ok(StreamMeta {
            last_id: id(0)?,
            first_id: id(16)?,
            max_deleted_id: id(32)?,
            tail: id(48)?,
            entries_added: num(64)?,
            groups: num(72)?,
            nodes: num(80)?,
            next_group: num(88)?,
            coll,
        })
    }

    /// A new stream over `coll` (made with [`StreamMeta::empty_extra`]).
    pub(crate) fn empty(coll: Collection) -> StreamMeta {
        StreamMeta {
            coll,
            last_id: StreamId::MIN,
            first_id: StreamId::MIN,
            max_deleted_id: StreamId::MIN,
            entries_added: 0,
            groups: 0,
            nodes: 0,
            tail: StreamId::MIN,
            next_group: 0,
        }
    }

    /// The `extra` of a new stream.
    pub(crate) fn empty_extra() -> Bytes {
        Bytes::from(vec![0; META_BYTES])
    }

    pub fn len(&self) -> u64 {
        self.coll.size
    }

    pub fn is_empty(&self) -> bool {
        self.coll.size == 0
    }

    /// Whether a deleted entry may lie in `[start, end]`
    /// (streamRangeHasTombstones).
    pub fn has_tombstones_in(&self, start: StreamId, end: StreamId) -> bool {
        if self.is_empty() || self.max_deleted_id.is_zero() || self.first_id > self.max_deleted_id {
            return false;
        }
        start <= self.max_deleted_id && self.max_deleted_id <= end
    }

    /// The number of entries added up to and including `id`, when it can
    /// be known (streamEstimateDistanceFromFirstEverEntry).
    pub fn entries_read_at(&self, id: StreamId) -> Option<u64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if self.is_empty() && id <= self.last_id {
            return Some(self.entries_added);
        }
        match id.cmp(&self.last_id) {
            std::cmp::Ordering::Equal => return Some(self.entries_added),
            std::cmp::Ordering::Greater => return None,
            std::cmp::Ordering::Less => {}
        }
        if self.max_deleted_id.is_zero() || self.max_deleted_id < self.first_id {
            match id.cmp(&self.first_id) {
                std::cmp::Ordering::Less => return Some(self.entries_added - self.len()),
                std::cmp::Ordering::Equal => return Some(self.entries_added - self.len() + 1),
                std::cmp::Ordering::Greater => {}
            }
        }
        None
    }

    /// A group's lag: entries not yet delivered to it, when it can be
    /// known (streamReplyWithCGLag).
    pub fn lag_of(&self, group: &StreamGroup) -> Option<i64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        let lag = |read: u64| (self.entries_added as i64).wrapping_sub(read as i64);
        if let Some(read) = group.entries_read {
            if !self.has_tombstones_in(group.last_id, StreamId::MAX) {
                return Some(lag(read));
            }
        }
        self.entries_read_at(group.last_id).map(lag)
    }

    /// Moves `group` past entry `id`, delivered to it now: its last ID and
    /// its read counter (streamReplyWithRange).
    pub fn advance_group(&self, group: &mut StreamGroup, id: StreamId) {
        if id <= group.last_id {
            return;
        }
        match group.entries_read {
            Some(read) if !self.has_tombstones_in(id, StreamId::MAX) => {
                group.entries_read = Some(read + 1);
            }
            _ if self.entries_added != 0 => group.entries_read = self.entries_read_at(id),
            _ => {}
        }
        group.last_id = id;
    }

    /// Writes the fields back into the collection record.
    pub(crate) fn sync_record(&mut self) {
        let mut out = Vec::with_capacity(META_BYTES);
        for id in [self.last_id, self.first_id, self.max_deleted_id, self.tail] {
            out.extend_from_slice(&id.to_bytes());
        }
        for n in [self.entries_added, self.groups, self.nodes, self.next_group] {
            out.extend_from_slice(&n.to_be_bytes());
        }
        self.coll.extra = Bytes::from(out);
    }
}

/// One of Redis's listpack nodes, as far as its size and counts go.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamNode {
    pub master: StreamId,
    pub live: u64,
    pub deleted: u64,
    /// The last entry ever appended (deleted or not).
    pub last_id: StreamId,
    /// The entries' bytes in the listpack (their size never changes).
    pub entries_bytes: u64,
    pub master_fields: Vec<Bytes>,
}

impl StreamNode {
    /// The listpack's size in bytes (lpBytes): header, master entry,
    /// entries, end byte.
    pub fn listpack_bytes(&self) -> u64 {
        use firn_prims::listpack::{entry_size, int_entry_size, LISTPACK_OVERHEAD};
        let master: u64 = int_entry_size(self.live as i64)
            + int_entry_size(self.deleted as i64)
            + int_entry_size(self.master_fields.len() as i64)
            + self
                .master_fields
                .iter()
                .map(|f| entry_size(f))
                .sum::<u64>()
            + int_entry_size(0);
        LISTPACK_OVERHEAD + master + self.entries_bytes
    }

    pub(crate) fn encode(&self) -> Bytes {
        let mut out = Vec::with_capacity(48);
        for n in [self.live, self.deleted, self.entries_bytes] {
            out.extend_from_slice(&n.to_be_bytes());
        }
        out.extend_from_slice(&self.last_id.to_bytes());
        put_list(&mut out, &self.master_fields);
        Bytes::from(out)
    }

    pub(crate) fn decode(master: StreamId, raw: &Bytes) -> Result<StreamNode> {
        let num = |at: usize| read_u64(raw, at).ok_or(CORRUPT);
        Ok(StreamNode {
            master,
            live: num(0)?,
            deleted: num(8)?,
            entries_bytes: num(16)?,
            last_id: StreamId::from_bytes(raw.get(24..40).ok_or(CORRUPT)?)?,
            master_fields: get_list(raw, 40)?,
        })
    }
}

/// A consumer group.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamGroup {
    pub name: Bytes,
    /// The number its pending entries and consumers are stored under.
    pub(crate) number: u64,
    pub last_id: StreamId,
    /// Redis's `entries_read`; `None` is its invalid counter (-1).
    pub entries_read: Option<u64>,
    pub pending: u64,
    pub consumers: u64,
}

impl StreamGroup {
    pub(crate) fn encode(&self) -> Bytes {
        let mut out = Vec::with_capacity(56);
        out.extend_from_slice(&self.number.to_be_bytes());
        out.extend_from_slice(&self.last_id.to_bytes());
        let read = self.entries_read.map_or(-1, |n| n as i64);
        out.extend_from_slice(&read.to_be_bytes());
        out.extend_from_slice(&self.pending.to_be_bytes());
        out.extend_from_slice(&self.consumers.to_be_bytes());
        Bytes::from(out)
    }

    pub(crate) fn decode(name: Bytes, raw: &Bytes) -> Result<StreamGroup> {
        let num = |at: usize| read_u64(raw, at).ok_or(CORRUPT);
        let read = num(24)? as i64;
        Ok(StreamGroup {
            name,
            number: num(0)?,
            last_id: StreamId::from_bytes(raw.get(8..24).ok_or(CORRUPT)?)?,
            entries_read: (read >= 0).then_some(read as u64),
            pending: num(32)?,
            consumers: num(40)?,
        })
    }
}

/// An entry of a group's pending list (Redis's NACK).
#[derive(Clone, Debug, PartialEq)]
pub struct PendingEntry {
    pub id: StreamId,
    pub consumer: Bytes,
    pub delivery_time_ms: u64,
    pub delivery_count: u64,
}

impl PendingEntry {
    pub(crate) fn encode(&self) -> Bytes {
        let mut out = Vec::with_capacity(16 + self.consumer.len());
        out.extend_from_slice(&self.delivery_time_ms.to_be_bytes());
        out.extend_from_slice(&self.delivery_count.to_be_bytes());
        out.extend_from_slice(&self.consumer);
        Bytes::from(out)
    }

    pub(crate) fn decode(id: StreamId, raw: &Bytes) -> Result<PendingEntry> {
        Ok(PendingEntry {
            id,
            delivery_time_ms: read_u64(raw, 0).ok_or(CORRUPT)?,
            delivery_count: read_u64(raw, 8).ok_or(CORRUPT)?,
            consumer: raw.slice(16..),
        })
    }
}

/// A consumer of a group.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamConsumer {
    pub name: Bytes,
    pub seen_time_ms: u64,
    pub pending: u64,
}

impl StreamConsumer {
    pub(crate) fn encode(&self) -> Bytes {
        let mut out = Vec::with_capacity(16);
        out.extend_from_slice(&self.seen_time_ms.to_be_bytes());
        out.extend_from_slice(&self.pending.to_be_bytes());
        Bytes::from(out)
    }

    pub(crate) fn decode(name: Bytes, raw: &Bytes) -> Result<StreamConsumer> {
        Ok(StreamConsumer {
            name,
            seen_time_ms: read_u64(raw, 0).ok_or(CORRUPT)?,
            pending: read_u64(raw, 8).ok_or(CORRUPT)?,
        })
    }
}

/// An entry's fields and values, as stored.
pub(crate) fn encode_fields(pairs: &[(Bytes, Bytes)]) -> Bytes {
    let size: usize = pairs.iter().map(|(f, v)| 8 + f.len() + v.len()).sum();
    let mut out = Vec::with_capacity(4 + size);
    out.extend_from_slice(&(pairs.len() as u32).to_be_bytes());
    for (f, v) in pairs {
        put_bytes(&mut out, f);
        put_bytes(&mut out, v);
    }
    Bytes::from(out)
}

pub(crate) fn decode_fields(raw: &Bytes) -> Result<Vec<(Bytes, Bytes)>> {
    let count = read_u32(raw, 0).ok_or(CORRUPT)? as usize;
    let mut pos = 4;
    let mut pairs = Vec::with_capacity(count.min(raw.len() / 8));
    for _ in 0..count {
        let field = get_bytes(raw, &mut pos)?;
        let value = get_bytes(raw, &mut pos)?;
        pairs.push((field, value));
    }
    Ok(pairs)
}

/// Member bytes: a tag, then the parts.
pub(crate) fn member(tag: u8, parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + parts.iter().map(|p| p.len()).sum::<usize>());
    out.push(tag);
    for part in parts {
        out.extend_from_slice(part);
    }
    out
}

/// The member bytes of consumer `name`'s pending list in group `number`,
/// without an ID.
pub(crate) fn consumer_pending_prefix(number: u64, name: &[u8]) -> Vec<u8> {
    member(
        CONSUMER_PENDING,
        &[
            &number.to_be_bytes(),
            &(name.len() as u32).to_be_bytes(),
            name,
        ],
    )
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

fn get_bytes(raw: &Bytes, pos: &mut usize) -> Result<Bytes> {
    let len = read_u32(raw, *pos).ok_or(CORRUPT)? as usize;
    let start = *pos + 4;
    let end = start.checked_add(len).filter(|e| *e <= raw.len());
    let end = end.ok_or(CORRUPT)?;
    *pos = end;
    Ok(raw.slice(start..end))
}

fn put_list(out: &mut Vec<u8>, items: &[Bytes]) {
    out.extend_from_slice(&(items.len() as u32).to_be_bytes());
    for item in items {
        put_bytes(out, item);
    }
}

fn get_list(raw: &Bytes, at: usize) -> Result<Vec<Bytes>> {
    let count = read_u32(raw, at).ok_or(CORRUPT)? as usize;
    let mut pos = at + 4;
    let mut items = Vec::with_capacity(count.min(raw.len() / 4));
    for _ in 0..count {
        items.push(get_bytes(raw, &mut pos)?);
    }
    Ok(items)
}

fn read_u64(raw: &[u8], pos: usize) -> Option<u64> {
    Some(u64::from_be_bytes(raw.get(pos..pos + 8)?.try_into().ok()?))
}

fn read_u32(raw: &[u8], pos: usize) -> Option<u32> {
    Some(u32::from_be_bytes(raw.get(pos..pos + 4)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_truncations_are_errors() {
        let pairs = vec![
            (Bytes::from("f"), Bytes::from("v")),
            (Bytes::new(), Bytes::from("x")),
        ];
        let raw = encode_fields(&pairs);
        assert_eq!(decode_fields(&raw).unwrap(), pairs);
        for cut in 0..raw.len() {
            assert!(decode_fields(&raw.slice(..cut)).is_err());
        }
        let node = StreamNode {
            master: StreamId::new(5, 1),
            live: 3,
            deleted: 1,
            last_id: StreamId::new(9, 0),
            entries_bytes: 40,
            master_fields: vec![Bytes::from("a"), Bytes::from("bb")],
        };
        assert_eq!(
            StreamNode::decode(node.master, &node.encode()).unwrap(),
            node
        );
        let group = StreamGroup {
            name: Bytes::from("g"),
            number: 7,
            last_id: StreamId::new(1, 2),
            entries_read: None,
            pending: 4,
            consumers: 2,
        };
        assert_eq!(
            StreamGroup::decode(group.name.clone(), &group.encode()).unwrap(),
            group
        );
        assert_eq!(StreamId::MAX.next(), None);
        assert_eq!(StreamId::MIN.prev(), None);
        assert_eq!(StreamId::new(1, u64::MAX).next(), Some(StreamId::new(2, 0)));
        assert_eq!(StreamId::new(2, 0).prev(), Some(StreamId::new(1, u64::MAX)));
    }

    #[test]
    fn a_node_knows_its_listpack_size() {
        // Redis: XADD s 1-1 a 1 → a listpack of 6 + master (1,0,1,"a",0)
        // + entry (flags, 0, 0, "1", lp-count 4) + 1.
        let node = StreamNode {
            master: StreamId::new(1, 1),
            live: 1,
            deleted: 0,
            last_id: StreamId::new(1, 1),
            entries_bytes: 2 * 5,
            master_fields: vec![Bytes::from("a")],
        };
        assert_eq!(node.listpack_bytes(), 7 + 2 * 4 + 3 + 10);
    }
}
