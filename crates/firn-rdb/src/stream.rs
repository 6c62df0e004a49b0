//! Streams: the plain-data value ([`StreamValue`]) and its RDB object,
//! written as RDB_TYPE_STREAM_LISTPACKS_2 (19, what Redis 7.0 writes) and
//! read from types 15 (Redis 5 and 6), 19 and 21 (Redis 7.2).
//!
//! The object, in order:
//! - the entries: a count of nodes, then per node its master ID (16 bytes,
//!   ms and seq big-endian: a key of Redis's radix tree) and a listpack;
//! - length, last ID; for 19 and 21 also first ID, max deleted ID and
//!   entries added (each an RDB length; an ID is two);
//! - the consumer groups, in name order: name, last delivered ID, entries
//!   read (19 and 21; u64::MAX stands for Redis's -1, "unknown"), the
//!   group PEL (per entry: its raw 16-byte ID, delivery time as 8 bytes LE
//!   milliseconds, delivery count), then the consumers in name order: name,
//!   seen time (8 bytes LE), for 21 an active time, and the consumer PEL as
//!   raw IDs, each of which must be in the group PEL.
//!
//! A node's listpack starts with the master entry: live count, deleted
//! count, number of master fields, the master fields, a 0. Then each entry
//! (t_stream.c's layout): flags, ms and seq relative to the master ID;
//! the values alone if the SAMEFIELDS flag says the fields are the
//! master's, else the number of fields and each field followed by its
//! value; last, the number of listpack elements the entry took (so it can
//! be walked backwards). XDEL marks an entry
//! DELETED in place; such tombstones are read and dropped, so dumping a
//! decoded stream that had some gives other bytes than Redis's (same value).
//!
//! Reading validates what Redis's `sanitize-dump-payload yes` does and
//! more, so that the value is consistent: every listpack in full, entry IDs
//! strictly increasing and inside their node, counts that match the
//! entries, a length equal to the live entries, the last ID not below the
//! last entry, and PELs whose every entry has exactly one consumer. Nodes,
//! groups, consumers and PELs are accepted in any order (Redis inserts them
//! in radix trees) and come back sorted.

use std::cmp::Ordering;

use crate::blob::Entry;
use crate::encoding::{write_len, write_string, Reader};
use crate::listpack::{integer_element_bytes, listpack_entries, ListpackWriter};
use crate::RdbError;
use firn_prims::string2ll;

/// Redis's `stream-node-max-entries` default: entries per node.
pub const STREAM_NODE_MAX_ENTRIES: u64 = 100;
/// Redis's `stream-node-max-bytes` default: a node's listpack size.
pub const STREAM_NODE_MAX_BYTES: u64 = 4096;
/// STREAM_LISTPACK_MAX_SIZE: the byte limit when the configured one is 0
/// (no limit) or larger.
const NODE_BYTES_CEILING: u64 = 1 << 30;

// Entry flags.
const FLAG_DELETED: i64 = 1;
const FLAG_SAMEFIELDS: i64 = 2;
/// An entry's fixed elements: flags, ms and seq difference.
const ENTRY_FIXED_ELEMENTS: u64 = 3;
/// Redis's SCG_INVALID_ENTRIES_READ (-1) as the RDB length holds it.
const ENTRIES_READ_UNKNOWN: u64 = u64::MAX;

// RDB object types of streams (rdb.h).
pub(crate) const TYPE_STREAM_LISTPACKS: u8 = 15;
pub(crate) const TYPE_STREAM_LISTPACKS_2: u8 = 19;
pub(crate) const TYPE_STREAM_LISTPACKS_3: u8 = 21;

/// A stream entry ID, ordered as Redis orders them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

impl StreamId {
    /// The largest ID, `18446744073709551615-18446744073709551615`.
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    /// The 16-byte form of radix tree keys and PELs: ms, then seq, both
    /// big-endian, so that byte order is ID order.
    fn to_raw(self) -> [u8; 16] {
        ((u128::from(self.ms) << 64) | u128::from(self.seq)).to_be_bytes()
    }

    fn from_raw(raw: [u8; 16]) -> StreamId {
        let id = u128::from_be_bytes(raw);
        StreamId {
            ms: (id >> 64) as u64,
            seq: id as u64,
        }
    }
}

/// An entry's field/value pairs, in the order XADD gave them.
pub type StreamFields = Vec<(Vec<u8>, Vec<u8>)>;

/// A stream as Redis 7.0 holds it, minus the node layout and tombstones.
///
/// What `restore` returns, and `dump` expects, is consistent: entries in
/// strictly increasing ID order, `length` their number, `last_id` not
/// below the last of them, `entries_added` not below `length`, and in each
/// group every pending entry in the PEL of exactly one consumer, the one
/// `consumer` names. Groups, consumers and PELs come back sorted; `dump`
/// sorts them itself. Times are Unix milliseconds, kept as the payload's 8
/// bytes (Redis's signed `mstime_t`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StreamValue {
    /// The live entries, in ID order.
    pub entries: Vec<(StreamId, StreamFields)>,
    /// The number of live entries (`entries.len()` once decoded).
    pub length: u64,
    pub last_id: StreamId,
    /// 0-0 in a stream that has no entries; a type 15 payload without
    /// entries gives `StreamId::MAX` (what Redis 7.0 loads).
    pub first_id: StreamId,
    pub max_deleted_id: StreamId,
    pub entries_added: u64,
    /// In name order.
    pub groups: Vec<StreamGroup>,
}

/// A consumer group.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamGroup {
    pub name: Vec<u8>,
    pub last_id: StreamId,
    /// `None` is Redis's SCG_INVALID_ENTRIES_READ (-1).
    pub entries_read: Option<u64>,
    /// The group PEL, in ID order.
    pub pending: Vec<PendingEntry>,
    /// In name order.
    pub consumers: Vec<StreamConsumer>,
}

/// An entry delivered to a consumer and not acknowledged yet.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingEntry {
    pub id: StreamId,
    pub delivery_time_ms: u64,
    pub delivery_count: u64,
    /// The consumer whose PEL holds it. Written through that consumer's
    /// `pending`, which must agree.
    pub consumer: Vec<u8>,
}

/// A consumer of a group.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamConsumer {
    pub name: Vec<u8>,
    pub seen_time_ms: u64,
    /// The IDs of its pending entries, in ID order.
    pub pending: Vec<StreamId>,
}

/// The node size limits XADD applies: `stream-node-max-entries` and
/// `stream-node-max-bytes`, 0 meaning no limit.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeLimits {
    pub(crate) max_entries: u64,
    pub(crate) max_bytes: u64,
}

impl NodeLimits {
    pub(crate) const DEFAULT: NodeLimits = NodeLimits {
        max_entries: STREAM_NODE_MAX_ENTRIES,
        max_bytes: STREAM_NODE_MAX_BYTES,
    };
}

// ---------------------------------------------------------------------
// Writing

/// Writes the object (type byte included) as Redis 7.0 writes type 19.
pub(crate) fn write_stream(out: &mut Vec<u8>, stream: &StreamValue, limits: NodeLimits) {
    out.push(TYPE_STREAM_LISTPACKS_2);
    let nodes = build_nodes(&stream.entries, limits);
    write_len(out, nodes.len() as u64);
    for (master_id, listpack) in &nodes {
        write_string(out, &master_id.to_raw());
        write_string(out, listpack);
    }
    write_len(out, stream.length);
    write_id(out, stream.last_id);
    write_id(out, stream.first_id);
    write_id(out, stream.max_deleted_id);
    write_len(out, stream.entries_added);
    let mut groups: Vec<&StreamGroup> = stream.groups.iter().collect();
    groups.sort_by(|a, b| a.name.cmp(&b.name));
    write_len(out, groups.len() as u64);
    for group in groups {
        write_group(out, group);
    }
}

fn write_id(out: &mut Vec<u8>, id: StreamId) {
    write_len(out, id.ms);
    write_len(out, id.seq);
}

fn write_group(out: &mut Vec<u8>, group: &StreamGroup) {
    write_string(out, &group.name);
    write_id(out, group.last_id);
    write_len(out, group.entries_read.unwrap_or(ENTRIES_READ_UNKNOWN));
    let mut pending: Vec<&PendingEntry> = group.pending.iter().collect();
    pending.sort_by_key(|entry| entry.id);
    write_len(out, pending.len() as u64);
    for entry in pending {
        out.extend_from_slice(&entry.id.to_raw());
        out.extend_from_slice(&entry.delivery_time_ms.to_le_bytes());
        write_len(out, entry.delivery_count);
    }
    let mut consumers: Vec<&StreamConsumer> = group.consumers.iter().collect();
    consumers.sort_by(|a, b| a.name.cmp(&b.name));
    write_len(out, consumers.len() as u64);
    for consumer in consumers {
        write_string(out, &consumer.name);
        out.extend_from_slice(&consumer.seen_time_ms.to_le_bytes());
        let mut ids = consumer.pending.clone();
        ids.sort_unstable();
        write_len(out, ids.len() as u64);
        for id in ids {
            out.extend_from_slice(&id.to_raw());
        }
    }
}

/// Splits the entries into listpack nodes as streamAppendItem does when
/// XADD adds them one by one: an entry opens a new node when the current
/// one's listpack plus the entry's field and value bytes would reach the
/// byte limit, or when it holds the maximum number of entries.
fn build_nodes(
    entries: &[(StreamId, StreamFields)],
    limits: NodeLimits,
) -> Vec<(StreamId, Vec<u8>)> {
    let mut nodes = Vec::new();
    let mut current: Option<NodeWriter<'_>> = None;
    for (id, fields) in entries {
        match current.as_mut() {
            Some(node) if node.has_room_for(fields, limits) => node.append(*id, fields),
            _ => {
                nodes.extend(current.take().map(NodeWriter::finish));
                current = Some(NodeWriter::new(*id, fields));
            }
        }
    }
    nodes.extend(current.map(NodeWriter::finish));
    nodes
}

/// One node under construction. Its first element, the live count, changes
/// with every entry, so it is written last, before `rest`.
struct NodeWriter<'a> {
    master_id: StreamId,
    master_fields: Vec<&'a [u8]>,
    count: u64,
    rest: ListpackWriter,
}

impl<'a> NodeWriter<'a> {
    /// A node whose master entry takes the first entry's fields.
    fn new(id: StreamId, fields: &'a StreamFields) -> Self {
        let master_fields: Vec<&[u8]> = fields.iter().map(|(f, _)| f.as_slice()).collect();
        let mut rest = ListpackWriter::new();
        rest.push_integer(0); // deleted
        rest.push_integer(list_len(master_fields.len()));
        for field in &master_fields {
            rest.push(field);
        }
        rest.push_integer(0); // end of the master entry
        let mut node = NodeWriter {
            master_id: id,
            master_fields,
            count: 0,
            rest,
        };
        node.append(id, fields);
        node
    }

    /// streamAppendItem's test, against the listpack as it is now.
    fn has_room_for(&self, fields: &StreamFields, limits: NodeLimits) -> bool {
        let max_bytes = match limits.max_bytes {
            0 => NODE_BYTES_CEILING,
            max => max.min(NODE_BYTES_CEILING),
        };
        let listpack_bytes = self.rest.bytes() + integer_element_bytes(count_integer(self.count));
        let field_bytes: usize = fields.iter().map(|(f, v)| f.len() + v.len()).sum();
        let full_by_bytes = (listpack_bytes as u64).saturating_add(field_bytes as u64) >= max_bytes;
        let full_by_count = limits.max_entries != 0 && self.count >= limits.max_entries;
        !full_by_bytes && !full_by_count
    }

    fn append(&mut self, id: StreamId, fields: &StreamFields) {
        let same_fields = fields.len() == self.master_fields.len()
            && fields
                .iter()
                .zip(&self.master_fields)
                .all(|((field, _), master)| field.as_slice() == *master);
        let rest = &mut self.rest;
        rest.push_integer(if same_fields { FLAG_SAMEFIELDS } else { 0 });
        // Differences wrap as Redis's int64 arithmetic does: a seq below
        // the master's is a negative difference.
        rest.push_integer(id.ms.wrapping_sub(self.master_id.ms) as i64);
        rest.push_integer(id.seq.wrapping_sub(self.master_id.seq) as i64);
        if !same_fields {
            rest.push_integer(list_len(fields.len()));
        }
        for (field, value) in fields {
            if !same_fields {
                rest.push(field);
            }
            rest.push(value);
        }
        let n = fields.len() as u64;
        let elements = ENTRY_FIXED_ELEMENTS + n + if same_fields { 0 } else { n + 1 };
        rest.push_integer(count_integer(elements));
        self.count += 1;
    }

    fn finish(self) -> (StreamId, Vec<u8>) {
        let mut listpack = ListpackWriter::new();
        listpack.push_integer(count_integer(self.count));
        listpack.extend(self.rest);
        (self.master_id, listpack.finish())
    }
}

fn list_len(len: usize) -> i64 {
    i64::try_from(len).unwrap_or(i64::MAX)
}

fn count_integer(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

// ---------------------------------------------------------------------
// Reading

/// Reads the object after its type byte (15, 19 or 21).
pub(crate) fn read_stream(object_type: u8, r: &mut Reader<'_>) -> Result<StreamValue, RdbError> {
    let entries = read_nodes(r)?;
    let length = r.plain_length()?;
    let last_id = read_id(r)?;
    if length != entries.len() as u64 || entries.last().is_some_and(|(id, _)| *id > last_id) {
        return Err(RdbError::BadFormat);
    }
    let mut stream = StreamValue {
        length,
        last_id,
        ..StreamValue::default()
    };
    if object_type == TYPE_STREAM_LISTPACKS {
        // What rdbLoadObject derives for a stream saved before Redis 7.0:
        // nothing was deleted, every entry ever added is still there, and
        // the first ID is the first entry's (streamGetEdgeID, which gives
        // the maximum ID when there is none).
        stream.first_id = entries.first().map_or(StreamId::MAX, |(id, _)| *id);
        stream.entries_added = length;
    } else {
        stream.first_id = read_id(r)?;
        stream.max_deleted_id = read_id(r)?;
        stream.entries_added = r.plain_length()?;
        if stream.entries_added < length {
            return Err(RdbError::BadFormat);
        }
    }
    stream.entries = entries;
    let group_count = r.count()?;
    let mut groups = Vec::with_capacity(r.capacity_for(group_count));
    for _ in 0..group_count {
        groups.push(read_group(object_type, r, &stream)?);
    }
    groups.sort_by(|a, b| a.name.cmp(&b.name));
    if groups.windows(2).any(|pair| pair[0].name == pair[1].name) {
        return Err(RdbError::BadFormat);
    }
    stream.groups = groups;
    Ok(stream)
}

fn read_id(r: &mut Reader<'_>) -> Result<StreamId, RdbError> {
    Ok(StreamId {
        ms: r.plain_length()?,
        seq: r.plain_length()?,
    })
}

fn read_raw_id(r: &mut Reader<'_>) -> Result<StreamId, RdbError> {
    Ok(StreamId::from_raw(r.array()?))
}

fn read_time_ms(r: &mut Reader<'_>) -> Result<u64, RdbError> {
    Ok(u64::from_le_bytes(r.array()?))
}

/// One node as read: its master ID, and its entries, tombstones included.
struct Node {
    master_id: StreamId,
    entries: Vec<NodeEntry>,
}

struct NodeEntry {
    id: StreamId,
    deleted: bool,
    fields: StreamFields,
}

/// Reads the nodes and returns the live entries, checking that all
/// entries, tombstones included, are in strictly increasing ID order and
/// that each lies between its node's master ID and the next node's.
fn read_nodes(r: &mut Reader<'_>) -> Result<Vec<(StreamId, StreamFields)>, RdbError> {
    let node_count = r.count()?;
    let mut nodes = Vec::with_capacity(r.capacity_for(node_count));
    for _ in 0..node_count {
        let key = r.string()?;
        let master_id = StreamId::from_raw(key.try_into().map_err(|_| RdbError::BadFormat)?);
        let listpack = r.string()?;
        nodes.push(Node {
            master_id,
            entries: read_node(master_id, &listpack)?,
        });
    }
    nodes.sort_by_key(|node| node.master_id);
    let mut live = Vec::new();
    let mut previous: Option<StreamId> = None;
    for node in nodes {
        if previous.is_some_and(|id| id >= node.master_id) {
            return Err(RdbError::BadFormat);
        }
        for entry in node.entries {
            let in_order = match previous {
                Some(id) => entry.id > id,
                None => true,
            };
            if !in_order || entry.id < node.master_id {
                return Err(RdbError::BadFormat);
            }
            previous = Some(entry.id);
            if !entry.deleted {
                live.push((entry.id, entry.fields));
            }
        }
    }
    Ok(live)
}

/// Decodes one node's listpack (layout in the module header), checking it
/// as streamValidateListpackIntegrity does, and that its counts match its
/// entries and it holds at least one live entry.
fn read_node(master_id: StreamId, listpack: &[u8]) -> Result<Vec<NodeEntry>, RdbError> {
    let elements = listpack_entries(listpack)?;
    let mut cursor = Elements {
        elements: &elements,
        pos: 0,
    };
    let live_count = cursor.length()?;
    let deleted_count = cursor.length()?;
    let master_field_count = cursor.length()?;
    let master_fields = (0..master_field_count)
        .map(|_| cursor.bytes())
        .collect::<Result<Vec<_>, _>>()?;
    if cursor.integer()? != 0 || live_count == 0 {
        return Err(RdbError::BadFormat);
    }
    let total = live_count
        .checked_add(deleted_count)
        .ok_or(RdbError::BadFormat)?;
    let mut entries = Vec::with_capacity(total.min(elements.len()));
    for _ in 0..total {
        entries.push(read_node_entry(master_id, &master_fields, &mut cursor)?);
    }
    let deleted = entries.iter().filter(|entry| entry.deleted).count();
    if cursor.pos != elements.len() || deleted != deleted_count {
        return Err(RdbError::BadFormat);
    }
    Ok(entries)
}

fn read_node_entry(
    master_id: StreamId,
    master_fields: &[Vec<u8>],
    cursor: &mut Elements<'_, '_>,
) -> Result<NodeEntry, RdbError> {
    let flags = cursor.integer()?;
    let id = StreamId {
        ms: master_id.ms.wrapping_add(cursor.integer()? as u64),
        seq: master_id.seq.wrapping_add(cursor.integer()? as u64),
    };
    let same_fields = flags & FLAG_SAMEFIELDS != 0;
    let fields = if same_fields {
        master_fields
            .iter()
            .map(|name| Ok((name.clone(), cursor.bytes()?)))
            .collect::<Result<StreamFields, RdbError>>()?
    } else {
        // Field and value alternate.
        let count = cursor.length()?;
        (0..count)
            .map(|_| Ok((cursor.bytes()?, cursor.bytes()?)))
            .collect::<Result<StreamFields, RdbError>>()?
    };
    let n = fields.len() as u64;
    let expected = ENTRY_FIXED_ELEMENTS + n + if same_fields { 0 } else { n + 1 };
    if u64::try_from(cursor.integer()?) != Ok(expected) {
        return Err(RdbError::BadFormat);
    }
    Ok(NodeEntry {
        id,
        deleted: flags & FLAG_DELETED != 0,
        fields,
    })
}

/// A cursor over a node's listpack elements.
struct Elements<'e, 'a> {
    elements: &'e [Entry<'a>],
    pos: usize,
}

impl Elements<'_, '_> {
    fn next(&mut self) -> Result<&Entry<'_>, RdbError> {
        let element = self.elements.get(self.pos).ok_or(RdbError::BadFormat)?;
        self.pos += 1;
        Ok(element)
    }

    /// An integer element; like lpGetIntegerIfValid, a string element that
    /// holds a canonical integer counts as one.
    fn integer(&mut self) -> Result<i64, RdbError> {
        match self.next()? {
            Entry::Int(value) => Ok(*value),
            Entry::Bytes(text) => string2ll(text).ok_or(RdbError::BadFormat),
        }
    }

    /// A count of things still to come in this listpack: never negative,
    /// never more than the elements left.
    fn length(&mut self) -> Result<usize, RdbError> {
        let value = usize::try_from(self.integer()?).map_err(|_| RdbError::BadFormat)?;
        if value > self.elements.len() - self.pos {
            return Err(RdbError::BadFormat);
        }
        Ok(value)
    }

    fn bytes(&mut self) -> Result<Vec<u8>, RdbError> {
        Ok(self.next()?.to_bytes())
    }
}

fn read_group(
    object_type: u8,
    r: &mut Reader<'_>,
    stream: &StreamValue,
) -> Result<StreamGroup, RdbError> {
    let name = r.string()?;
    let last_id = read_id(r)?;
    let entries_read = if object_type == TYPE_STREAM_LISTPACKS {
        estimate_entries_read(stream, last_id)
    } else {
        Some(r.plain_length()?).filter(|&read| read != ENTRIES_READ_UNKNOWN)
    };
    let mut pending = read_group_pel(r)?;
    let mut owners: Vec<Option<usize>> = vec![None; pending.len()];
    let consumer_count = r.count()?;
    let mut consumers = Vec::with_capacity(r.capacity_for(consumer_count));
    for index in 0..consumer_count {
        let consumer = read_consumer(object_type, r)?;
        for id in &consumer.pending {
            let at = pending
                .binary_search_by_key(id, |entry| entry.id)
                .map_err(|_| RdbError::BadFormat)?;
            // An ID in no consumer's PEL, or in two (or twice in one),
            // has no single owner.
            if owners[at].replace(index).is_some() {
                return Err(RdbError::BadFormat);
            }
        }
        consumers.push(consumer);
    }
    for (entry, owner) in pending.iter_mut().zip(owners) {
        let owner = owner.ok_or(RdbError::BadFormat)?;
        entry.consumer = consumers[owner].name.clone();
    }
    consumers.sort_by(|a, b| a.name.cmp(&b.name));
    if consumers
        .windows(2)
        .any(|pair| pair[0].name == pair[1].name)
    {
        return Err(RdbError::BadFormat);
    }
    Ok(StreamGroup {
        name,
        last_id,
        entries_read,
        pending,
        consumers,
    })
}

/// The group PEL, sorted by ID; its consumers are filled in later.
fn read_group_pel(r: &mut Reader<'_>) -> Result<Vec<PendingEntry>, RdbError> {
    let count = r.count()?;
    let mut pending = Vec::with_capacity(r.capacity_for(count));
    for _ in 0..count {
        pending.push(PendingEntry {
            id: read_raw_id(r)?,
            delivery_time_ms: read_time_ms(r)?,
            delivery_count: r.plain_length()?,
            consumer: Vec::new(),
        });
    }
    pending.sort_by_key(|entry| entry.id);
    if pending.windows(2).any(|pair| pair[0].id == pair[1].id) {
        return Err(RdbError::BadFormat);
    }
    Ok(pending)
}

fn read_consumer(object_type: u8, r: &mut Reader<'_>) -> Result<StreamConsumer, RdbError> {
    let name = r.string()?;
    let seen_time_ms = read_time_ms(r)?;
    if object_type == TYPE_STREAM_LISTPACKS_3 {
        read_time_ms(r)?; // active time, which Redis 7.0 does not keep
    }
    let count = r.count()?;
    let mut pending = Vec::with_capacity(r.capacity_for(count));
    for _ in 0..count {
        pending.push(read_raw_id(r)?);
    }
    pending.sort_unstable();
    Ok(StreamConsumer {
        name,
        seen_time_ms,
        pending,
    })
}

/// Redis's streamEstimateDistanceFromFirstEverEntry: the entries read of a
/// group whose payload (type 15) does not say, from where its last ID
/// stands in the stream.
fn estimate_entries_read(stream: &StreamValue, id: StreamId) -> Option<u64> {
    if stream.entries_added == 0 {
        return Some(0);
    }
    if stream.length == 0 && id <= stream.last_id {
        return Some(stream.entries_added);
    }
    match id.cmp(&stream.last_id) {
        Ordering::Equal => return Some(stream.entries_added),
        Ordering::Greater => return None,
        Ordering::Less => {}
    }
    let no_tombstone_ahead =
        stream.max_deleted_id == StreamId::default() || stream.max_deleted_id < stream.first_id;
    if !no_tombstone_ahead {
        return None;
    }
    let before_first = stream.entries_added.wrapping_sub(stream.length);
    match id.cmp(&stream.first_id) {
        Ordering::Less => Some(before_first),
        Ordering::Equal => Some(before_first.wrapping_add(1)),
        Ordering::Greater => None,
    }
}
