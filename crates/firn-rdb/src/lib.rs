//! Redis's DUMP/RESTORE payload: one RDB object (type byte + encoding), the
//! RDB version (2 bytes LE, 10 for Redis 7.0) and a CRC64 (Jones polynomial,
//! as Redis computes it; 8 bytes LE) over everything before it. Pure codec:
//! no I/O, no storage.
//!
//! Writing follows redis-server 7.0 with its default configuration:
//! - strings: integer encoding for canonical integers of up to 11 characters
//!   that fit in 32 bits, LZF (liblzf 3.6 with Redis's settings, reproduced
//!   below) for values longer than 20 bytes when that saves at least 4 bytes,
//!   raw otherwise. Byte-identical to Redis.
//! - lists: quicklist 2 of listpack nodes, split at 8 KB as `RPUSH` splits
//!   them (`list-max-listpack-size -2`).
//! - sets: an intset for up to 512 canonical integers, else a plain set.
//! - sorted sets: a listpack for up to 128 members of at most 64 bytes,
//!   else the binary-double skiplist form, highest score first.
//! - hashes: a listpack for up to 512 pairs of at most 64 bytes, else plain.
//!
//! Checked against redis-server 7.0.15, the output is byte-identical for
//! strings, and for collections whenever the members come in the order
//! Redis holds them: a list built by RPUSH, a hash listpack in insertion
//! order, a plain set or hash in Redis's (seeded, unknowable) hash-table
//! order. Intsets and sorted sets are sorted here, so they always match.
//! A Redis value whose encoding does not follow the thresholds (a hash
//! that grew past them and shrank, a list built by LPUSH or LINSERT) is
//! dumped differently by Redis; both forms restore in either server.
//!
//! Reading accepts every encoding Redis 7.0 writes or still loads for these
//! types: string (raw, int8/16/32, LZF), list (plain, ziplist, quicklist of
//! ziplists, quicklist 2), set (plain, intset), sorted set (plain with text
//! or binary scores, ziplist, listpack), hash (plain, zipmap, ziplist,
//! listpack). Every length and offset in a payload is untrusted: all are
//! checked against the bytes actually present, and preallocation never
//! exceeds what the remaining input could hold. The embedded blobs
//! (listpack, ziplist, intset, zipmap) are always validated in full - the
//! equivalent of Redis's `sanitize-dump-payload yes` - so a payload with a
//! malformed blob, duplicate set/hash/zset members, a NaN score or an empty
//! collection is refused (Redis 7.0 by default refuses only some of those).
//! Like Redis, bytes between the object and the footer are ignored.

use crc::{Crc, CRC_64_REDIS};
use firn_prims::{format_double, string2ll};
use std::cmp::Ordering;
use std::collections::HashSet;

pub const RDB_VERSION: u16 = 10;
const CRC64: Crc<u64> = Crc::<u64>::new(&CRC_64_REDIS);

// RDB object types (rdb.h).
const TYPE_STRING: u8 = 0;
const TYPE_LIST: u8 = 1;
const TYPE_SET: u8 = 2;
const TYPE_ZSET: u8 = 3;
const TYPE_HASH: u8 = 4;
const TYPE_ZSET_2: u8 = 5;
const TYPE_HASH_ZIPMAP: u8 = 9;
const TYPE_LIST_ZIPLIST: u8 = 10;
const TYPE_SET_INTSET: u8 = 11;
const TYPE_ZSET_ZIPLIST: u8 = 12;
const TYPE_HASH_ZIPLIST: u8 = 13;
const TYPE_LIST_QUICKLIST: u8 = 14;
const TYPE_STREAM_LISTPACKS: u8 = 15;
const TYPE_HASH_LISTPACK: u8 = 16;
const TYPE_ZSET_LISTPACK: u8 = 17;
const TYPE_LIST_QUICKLIST_2: u8 = 18;
const TYPE_STREAM_LISTPACKS_2: u8 = 19;

// Special string encodings (the low 6 bits after a 0b11 length prefix).
const ENC_INT8: u8 = 0;
const ENC_INT16: u8 = 1;
const ENC_INT32: u8 = 2;
const ENC_LZF: u8 = 3;

// Quicklist 2 node containers.
const QUICKLIST_NODE_PLAIN: u64 = 1;
const QUICKLIST_NODE_PACKED: u64 = 2;

// Redis 7.0 defaults that decide which encoding DUMP writes.
// hash-max-listpack-entries is 512 in redis-server's built-in defaults
// (the sample redis.conf says 128).
const HASH_MAX_LISTPACK_ENTRIES: usize = 512;
const HASH_MAX_LISTPACK_VALUE: usize = 64;
const ZSET_MAX_LISTPACK_ENTRIES: usize = 128;
const ZSET_MAX_LISTPACK_VALUE: usize = 64;
const SET_MAX_INTSET_ENTRIES: usize = 512;
/// `list-max-listpack-size -2`: a list node's listpack stays within 8 KB.
const LIST_NODE_MAX_BYTES: usize = 8192;
/// quicklist's estimate of an entry's listpack overhead (its
/// SIZE_ESTIMATE_OVERHEAD).
const LIST_ENTRY_OVERHEAD_ESTIMATE: usize = 8;
/// Elements this large get a plain quicklist node of their own.
const LIST_PACKED_THRESHOLD: usize = 1 << 30;

/// A decoded value. Set and hash members keep the payload's order; sorted
/// set members come back ordered by score, then member bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum RdbValue {
    String(Vec<u8>),
    List(Vec<Vec<u8>>),
    Set(Vec<Vec<u8>>),
    SortedSet(Vec<(Vec<u8>, f64)>),
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
}

impl RdbValue {
    /// The name `TYPE` replies for this value.
    pub fn type_name(&self) -> &'static str {
        match self {
            RdbValue::String(_) => "string",
            RdbValue::List(_) => "list",
            RdbValue::Set(_) => "set",
            RdbValue::SortedSet(_) => "zset",
            RdbValue::Hash(_) => "hash",
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RdbError {
    /// Too short, a version newer than 10, or a CRC mismatch.
    /// Reply: "ERR DUMP payload version or checksum are wrong".
    #[error("DUMP payload version or checksum are wrong")]
    BadChecksum,
    /// The checksum holds but the object does not decode.
    /// Reply: "ERR Bad data format".
    #[error("Bad data format")]
    BadFormat,
    /// An object of a type Redis 7.0 knows and Firn cannot store yet
    /// (streams; their body is not examined). Not a Redis error: Redis
    /// would restore it.
    /// Reply: "ERR Firn cannot restore a stream value yet".
    #[error("Firn cannot restore a {} value yet", object_type_name(*.0))]
    UnsupportedType(u8),
}

impl RdbError {
    /// The error reply RESTORE sends.
    pub fn reply_text(&self) -> String {
        format!("ERR {self}")
    }
}

fn object_type_name(object_type: u8) -> &'static str {
    match object_type {
        TYPE_STREAM_LISTPACKS | TYPE_STREAM_LISTPACKS_2 => "stream",
        _ => "unknown",
    }
}

// ---------------------------------------------------------------------------
// DUMP
// ---------------------------------------------------------------------------

/// Serialises a value as redis-server 7.0 DUMP does. Collections must be
/// non-empty and set, hash and sorted set members distinct (as in any
/// Redis value); a payload breaking that is refused by `restore`.
pub fn dump(value: &RdbValue) -> Vec<u8> {
    let mut out = Vec::new();
    match value {
        RdbValue::String(bytes) => {
            out.push(TYPE_STRING);
            write_string(&mut out, bytes);
        }
        RdbValue::List(items) => write_list(&mut out, items),
        RdbValue::Set(members) => write_set(&mut out, members),
        RdbValue::SortedSet(members) => write_zset(&mut out, members),
        RdbValue::Hash(pairs) => write_hash(&mut out, pairs),
    }
    append_footer(&mut out);
    out
}

/// Appends the footer of a DUMP payload: the RDB version and the CRC64 of
/// everything before it. Also used by FUNCTION DUMP.
pub fn append_footer(out: &mut Vec<u8>) {
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = CRC64.checksum(out);
    out.extend_from_slice(&crc.to_le_bytes());
}

fn write_len(out: &mut Vec<u8>, len: u64) {
    if len < 64 {
        out.push(len as u8);
    } else if len < 16384 {
        out.push(0x40 | (len >> 8) as u8);
        out.push(len as u8);
    } else if len <= u32::MAX as u64 {
        out.push(0x80);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&len.to_be_bytes());
    }
}

/// Redis's rdbSaveRawString: integer encoding, then LZF, then raw.
pub fn write_string(out: &mut Vec<u8>, value: &[u8]) {
    if value.len() <= 11 {
        if let Some(n) = string2ll(value) {
            if let Ok(b) = i8::try_from(n) {
                out.push(0xC0 | ENC_INT8);
                out.push(b as u8);
                return;
            } else if let Ok(h) = i16::try_from(n) {
                out.push(0xC0 | ENC_INT16);
                out.extend_from_slice(&h.to_le_bytes());
                return;
            } else if let Ok(w) = i32::try_from(n) {
                out.push(0xC0 | ENC_INT32);
                out.extend_from_slice(&w.to_le_bytes());
                return;
            }
        }
    }
    if value.len() > 20 {
        // Worth it only when it saves at least four bytes.
        if let Some(compressed) = lzf_compress(value, value.len() - 4) {
            out.push(0xC0 | ENC_LZF);
            write_len(out, compressed.len() as u64);
            write_len(out, value.len() as u64);
            out.extend_from_slice(&compressed);
            return;
        }
    }
    write_len(out, value.len() as u64);
    out.extend_from_slice(value);
}

fn write_list(out: &mut Vec<u8>, items: &[Vec<u8>]) {
    // Split into nodes the way quicklistPushTail does under the 7.0 default
    // fill of -2: an element joins the tail node while the node's listpack
    // plus the element and an 8-byte overhead estimate stays within 8 KB;
    // elements of 1 GB or more get a plain node of their own.
    enum Node {
        Plain(usize),
        Packed(ListpackWriter),
    }
    let mut nodes: Vec<Node> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let size = item.len();
        if size >= LIST_PACKED_THRESHOLD {
            nodes.push(Node::Plain(index));
            continue;
        }
        match nodes.last_mut() {
            Some(Node::Packed(node))
                if node.bytes() + size + LIST_ENTRY_OVERHEAD_ESTIMATE <= LIST_NODE_MAX_BYTES =>
            {
                node.push(item);
            }
            _ => {
                let mut node = ListpackWriter::new();
                node.push(item);
                nodes.push(Node::Packed(node));
            }
        }
    }
    out.push(TYPE_LIST_QUICKLIST_2);
    write_len(out, nodes.len() as u64);
    for node in nodes {
        match node {
            Node::Plain(index) => {
                write_len(out, QUICKLIST_NODE_PLAIN);
                write_string(out, items.get(index).map_or(&[][..], Vec::as_slice));
            }
            Node::Packed(listpack) => {
                write_len(out, QUICKLIST_NODE_PACKED);
                write_string(out, &listpack.finish());
            }
        }
    }
}

fn write_set(out: &mut Vec<u8>, members: &[Vec<u8>]) {
    if members.len() <= SET_MAX_INTSET_ENTRIES {
        let integers: Option<Vec<i64>> = members.iter().map(|m| string2ll(m)).collect();
        if let Some(mut integers) = integers {
            integers.sort_unstable();
            integers.dedup();
            out.push(TYPE_SET_INTSET);
            write_string(out, &intset_bytes(&integers));
            return;
        }
    }
    out.push(TYPE_SET);
    write_len(out, members.len() as u64);
    for member in members {
        write_string(out, member);
    }
}

/// An intset: encoding width (2, 4 or 8) and count as u32 LE, then the
/// values ascending, each little-endian in that width.
fn intset_bytes(sorted: &[i64]) -> Vec<u8> {
    let width: usize = sorted
        .iter()
        .map(|&v| {
            if i16::try_from(v).is_ok() {
                2
            } else if i32::try_from(v).is_ok() {
                4
            } else {
                8
            }
        })
        .max()
        .unwrap_or(2);
    let mut blob = Vec::with_capacity(8 + width * sorted.len());
    blob.extend_from_slice(&(width as u32).to_le_bytes());
    blob.extend_from_slice(&(sorted.len() as u32).to_le_bytes());
    for &v in sorted {
        blob.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    blob
}

/// Redis's zset order: by score, then by member bytes.
fn zset_order(a: &(Vec<u8>, f64), b: &(Vec<u8>, f64)) -> Ordering {
    a.1.partial_cmp(&b.1)
        .unwrap_or(Ordering::Equal)
        .then_with(|| a.0.cmp(&b.0))
}

fn write_zset(out: &mut Vec<u8>, members: &[(Vec<u8>, f64)]) {
    let mut sorted: Vec<&(Vec<u8>, f64)> = members.iter().collect();
    sorted.sort_by(|a, b| zset_order(a, b));
    let small = members.len() <= ZSET_MAX_LISTPACK_ENTRIES
        && members
            .iter()
            .all(|(m, _)| m.len() <= ZSET_MAX_LISTPACK_VALUE);
    if small {
        let mut listpack = ListpackWriter::new();
        for (member, score) in sorted {
            listpack.push(member);
            listpack.push(&score_text(*score));
        }
        out.push(TYPE_ZSET_LISTPACK);
        write_string(out, &listpack.finish());
    } else {
        // rdbSaveObject walks the skiplist from the tail so that loading
        // inserts at the head: highest score first.
        out.push(TYPE_ZSET_2);
        write_len(out, members.len() as u64);
        for (member, score) in sorted.into_iter().rev() {
            write_string(out, member);
            out.extend_from_slice(&score.to_le_bytes());
        }
    }
}

fn write_hash(out: &mut Vec<u8>, pairs: &[(Vec<u8>, Vec<u8>)]) {
    let small = pairs.len() <= HASH_MAX_LISTPACK_ENTRIES
        && pairs
            .iter()
            .all(|(f, v)| f.len() <= HASH_MAX_LISTPACK_VALUE && v.len() <= HASH_MAX_LISTPACK_VALUE);
    if small {
        let mut listpack = ListpackWriter::new();
        for (field, value) in pairs {
            listpack.push(field);
            listpack.push(value);
        }
        out.push(TYPE_HASH_LISTPACK);
        write_string(out, &listpack.finish());
    } else {
        out.push(TYPE_HASH);
        write_len(out, pairs.len() as u64);
        for (field, value) in pairs {
            write_string(out, field);
            write_string(out, value);
        }
    }
}

/// A score as Redis 7.0's d2string writes it into a listpack: integral
/// values within +-2^62 as integers, others as printf's "%.17g".
pub fn score_text(score: f64) -> Vec<u8> {
    const LIMIT: f64 = (i64::MAX / 2) as f64;
    if score.is_nan() {
        return b"nan".to_vec();
    }
    if score.is_infinite() {
        return if score > 0.0 {
            b"inf".to_vec()
        } else {
            b"-inf".to_vec()
        };
    }
    if (-LIMIT..=LIMIT).contains(&score) && score.trunc() == score {
        return (score as i64).to_string().into_bytes();
    }
    format_double(score).into_bytes()
}

/// Builds a listpack the way Redis's lpAppend does.
///
/// Layout: total bytes (u32 LE), element count (u16 LE, 65535 = unknown),
/// entries, 0xFF. An entry is an encoding byte (plus data), then its
/// "backlen": the size of encoding + data in 1-5 bytes of 7 bits, written
/// so it can be read from the right (high bit = more bytes to the left).
struct ListpackWriter {
    buf: Vec<u8>,
    count: usize,
}

impl ListpackWriter {
    fn new() -> Self {
        ListpackWriter {
            buf: vec![0; 6],
            count: 0,
        }
    }

    /// The size the finished listpack would have.
    fn bytes(&self) -> usize {
        self.buf.len() + 1
    }

    fn push(&mut self, element: &[u8]) {
        let start = self.buf.len();
        let buf = &mut self.buf;
        match string2ll(element) {
            Some(v @ 0..=127) => buf.push(v as u8),
            Some(v @ -4096..=4095) => {
                let bits = (v as u64) & 0x1FFF;
                buf.push(0xC0 | (bits >> 8) as u8);
                buf.push(bits as u8);
            }
            Some(v) if i16::try_from(v).is_ok() => {
                buf.push(0xF1);
                buf.extend_from_slice(&v.to_le_bytes()[..2]);
            }
            Some(v @ -8_388_608..=8_388_607) => {
                buf.push(0xF2);
                buf.extend_from_slice(&v.to_le_bytes()[..3]);
            }
            Some(v) if i32::try_from(v).is_ok() => {
                buf.push(0xF3);
                buf.extend_from_slice(&v.to_le_bytes()[..4]);
            }
            Some(v) => {
                buf.push(0xF4);
                buf.extend_from_slice(&v.to_le_bytes());
            }
            None => {
                let len = element.len();
                if len < 64 {
                    buf.push(0x80 | len as u8);
                } else if len < 4096 {
                    buf.push(0xE0 | (len >> 8) as u8);
                    buf.push(len as u8);
                } else {
                    buf.push(0xF0);
                    buf.extend_from_slice(&(len as u32).to_le_bytes());
                }
                buf.extend_from_slice(element);
            }
        }
        let entry_len = buf.len() - start;
        push_backlen(buf, entry_len as u64);
        self.count += 1;
    }

    fn finish(mut self) -> Vec<u8> {
        self.buf.push(0xFF);
        let total = self.buf.len() as u32;
        let count = u16::try_from(self.count).unwrap_or(u16::MAX);
        self.buf[0..4].copy_from_slice(&total.to_le_bytes());
        self.buf[4..6].copy_from_slice(&count.to_le_bytes());
        self.buf
    }
}

fn push_backlen(out: &mut Vec<u8>, len: u64) {
    if len <= 127 {
        out.push(len as u8);
    } else if len < 16383 {
        out.push((len >> 7) as u8);
        out.push((len & 127) as u8 | 128);
    } else if len < 2_097_151 {
        out.push((len >> 14) as u8);
        out.push(((len >> 7) & 127) as u8 | 128);
        out.push((len & 127) as u8 | 128);
    } else if len < 268_435_455 {
        out.push((len >> 21) as u8);
        out.push(((len >> 14) & 127) as u8 | 128);
        out.push(((len >> 7) & 127) as u8 | 128);
        out.push((len & 127) as u8 | 128);
    } else {
        out.push((len >> 28) as u8);
        out.push(((len >> 21) & 127) as u8 | 128);
        out.push(((len >> 14) & 127) as u8 | 128);
        out.push(((len >> 7) & 127) as u8 | 128);
        out.push((len & 127) as u8 | 128);
    }
}

// ---------------------------------------------------------------------------
// RESTORE
// ---------------------------------------------------------------------------

/// Checks version and checksum, then decodes the object.
pub fn restore(payload: &[u8]) -> Result<RdbValue, RdbError> {
    let body = verify_footer(payload)?;
    let mut reader = Reader { data: body, pos: 0 };
    let object_type = reader.byte()?;
    read_object(object_type, &mut reader)
}

/// Redis's verifyDumpPayload: at least the 10-byte footer, an RDB version
/// up to 10 and a matching CRC64. Returns what precedes the footer. Also
/// used by FUNCTION RESTORE.
pub fn verify_footer(payload: &[u8]) -> Result<&[u8], RdbError> {
    let Some((body, footer)) = payload.split_last_chunk::<10>() else {
        return Err(RdbError::BadChecksum);
    };
    let [version_low, version_high, crc @ ..] = *footer;
    if u16::from_le_bytes([version_low, version_high]) > RDB_VERSION {
        return Err(RdbError::BadChecksum);
    }
    let mut digest = CRC64.digest();
    digest.update(body);
    digest.update(&[version_low, version_high]);
    if digest.finalize() != u64::from_le_bytes(crc) {
        return Err(RdbError::BadChecksum);
    }
    Ok(body)
}

/// Reads one RDB string (raw, integer or LZF encoded) at `*pos`, moving
/// `*pos` past it. Used by FUNCTION RESTORE.
pub fn read_string_at(data: &[u8], pos: &mut usize) -> Result<Vec<u8>, RdbError> {
    let mut reader = Reader { data, pos: *pos };
    let value = reader.string()?;
    *pos = reader.pos;
    Ok(value)
}

/// Reads one RDB length at `*pos` as Redis's `rdbLoadLen(rdb, NULL)` does:
/// the 6-bit value of an encoded-string marker counts as a length. Used by
/// FUNCTION RESTORE.
pub fn read_length_at(data: &[u8], pos: &mut usize) -> Result<u64, RdbError> {
    let mut reader = Reader { data, pos: *pos };
    let length = reader.length()?.unwrap_or_else(u64::from);
    *pos = reader.pos;
    Ok(length)
}

fn read_object(object_type: u8, r: &mut Reader<'_>) -> Result<RdbValue, RdbError> {
    match object_type {
        TYPE_STRING => Ok(RdbValue::String(r.string()?)),
        TYPE_LIST => {
            let count = r.count()?;
            let mut items = Vec::with_capacity(r.capacity_for(count));
            for _ in 0..count {
                items.push(r.string()?);
            }
            list_value(items)
        }
        TYPE_SET => {
            let count = r.count()?;
            let mut members = Vec::with_capacity(r.capacity_for(count));
            for _ in 0..count {
                members.push(r.string()?);
            }
            set_value(members)
        }
        TYPE_ZSET | TYPE_ZSET_2 => {
            let count = r.count()?;
            let mut members = Vec::with_capacity(r.capacity_for(count));
            for _ in 0..count {
                let member = r.string()?;
                let score = if object_type == TYPE_ZSET {
                    r.text_double()?
                } else {
                    r.binary_double()?
                };
                members.push((member, score));
            }
            zset_value(members)
        }
        TYPE_HASH => {
            let count = r.count()?;
            let mut pairs = Vec::with_capacity(r.capacity_for(count));
            for _ in 0..count {
                let field = r.string()?;
                let value = r.string()?;
                pairs.push((field, value));
            }
            hash_value(pairs)
        }
        TYPE_HASH_ZIPMAP => hash_value(zipmap_pairs(&r.string()?)?),
        TYPE_LIST_ZIPLIST => {
            let blob = r.string()?;
            list_value(
                ziplist_entries(&blob)?
                    .iter()
                    .map(Entry::to_bytes)
                    .collect(),
            )
        }
        TYPE_SET_INTSET => set_value(
            intset_values(&r.string()?)?
                .into_iter()
                .map(|v| v.to_string().into_bytes())
                .collect(),
        ),
        TYPE_ZSET_ZIPLIST => zset_value(score_pairs(&ziplist_entries(&r.string()?)?)?),
        TYPE_HASH_ZIPLIST => hash_value(byte_pairs(&ziplist_entries(&r.string()?)?)?),
        TYPE_LIST_QUICKLIST => {
            let nodes = r.count()?;
            let mut items = Vec::new();
            for _ in 0..nodes {
                let blob = r.string()?;
                items.extend(ziplist_entries(&blob)?.iter().map(Entry::to_bytes));
            }
            list_value(items)
        }
        TYPE_HASH_LISTPACK => hash_value(byte_pairs(&listpack_entries(&r.string()?)?)?),
        TYPE_ZSET_LISTPACK => zset_value(score_pairs(&listpack_entries(&r.string()?)?)?),
        TYPE_LIST_QUICKLIST_2 => {
            let nodes = r.count()?;
            let mut items = Vec::new();
            for _ in 0..nodes {
                let container = r.plain_length()?;
                let blob = r.string()?;
                match container {
                    QUICKLIST_NODE_PLAIN => items.push(blob),
                    QUICKLIST_NODE_PACKED => {
                        items.extend(listpack_entries(&blob)?.iter().map(Entry::to_bytes));
                    }
                    _ => return Err(RdbError::BadFormat),
                }
            }
            list_value(items)
        }
        TYPE_STREAM_LISTPACKS | TYPE_STREAM_LISTPACKS_2 => {
            Err(RdbError::UnsupportedType(object_type))
        }
        _ => Err(RdbError::BadFormat),
    }
}

// Redis refuses to restore an empty collection ("Bad data format"), and one
// with duplicate members could not be stored faithfully.

fn list_value(items: Vec<Vec<u8>>) -> Result<RdbValue, RdbError> {
    if items.is_empty() {
        return Err(RdbError::BadFormat);
    }
    Ok(RdbValue::List(items))
}

fn set_value(members: Vec<Vec<u8>>) -> Result<RdbValue, RdbError> {
    if members.is_empty() || !all_distinct(members.iter().map(Vec::as_slice)) {
        return Err(RdbError::BadFormat);
    }
    Ok(RdbValue::Set(members))
}

fn zset_value(mut members: Vec<(Vec<u8>, f64)>) -> Result<RdbValue, RdbError> {
    if members.is_empty()
        || members.iter().any(|(_, score)| score.is_nan())
        || !all_distinct(members.iter().map(|(m, _)| m.as_slice()))
    {
        return Err(RdbError::BadFormat);
    }
    members.sort_by(zset_order);
    Ok(RdbValue::SortedSet(members))
}

fn hash_value(pairs: Pairs) -> Result<RdbValue, RdbError> {
    if pairs.is_empty() || !all_distinct(pairs.iter().map(|(f, _)| f.as_slice())) {
        return Err(RdbError::BadFormat);
    }
    Ok(RdbValue::Hash(pairs))
}

/// Hash fields and values.
type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

fn all_distinct<'a>(keys: impl Iterator<Item = &'a [u8]>) -> bool {
    let mut seen = HashSet::new();
    keys.into_iter().all(|key| seen.insert(key))
}

fn byte_pairs(entries: &[Entry<'_>]) -> Result<Pairs, RdbError> {
    if !entries.len().is_multiple_of(2) {
        return Err(RdbError::BadFormat);
    }
    Ok(entries
        .chunks_exact(2)
        .map(|pair| (pair[0].to_bytes(), pair[1].to_bytes()))
        .collect())
}

fn score_pairs(entries: &[Entry<'_>]) -> Result<Vec<(Vec<u8>, f64)>, RdbError> {
    if !entries.len().is_multiple_of(2) {
        return Err(RdbError::BadFormat);
    }
    entries
        .chunks_exact(2)
        .map(|pair| Ok((pair[0].to_bytes(), pair[1].to_score()?)))
        .collect()
}

/// Parses a score written as text (Redis uses strtod). NaN is refused by
/// the caller.
fn parse_score(text: &[u8]) -> Result<f64, RdbError> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .ok_or(RdbError::BadFormat)
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8, RdbError> {
        let b = *self.data.get(self.pos).ok_or(RdbError::BadFormat)?;
        self.pos += 1;
        Ok(b)
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], RdbError> {
        let n = usize::try_from(n).map_err(|_| RdbError::BadFormat)?;
        let end = self.pos.checked_add(n).ok_or(RdbError::BadFormat)?;
        let slice = self.data.get(self.pos..end).ok_or(RdbError::BadFormat)?;
        self.pos = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], RdbError> {
        self.take(N as u64)?
            .try_into()
            .map_err(|_| RdbError::BadFormat)
    }

    /// Every element takes at least one byte, so a count can never need
    /// more room than the bytes left.
    fn capacity_for(&self, count: usize) -> usize {
        count.min(self.data.len().saturating_sub(self.pos))
    }

    /// A length, or `Err(special)` for an encoded string.
    fn length(&mut self) -> Result<Result<u64, u8>, RdbError> {
        let first = self.byte()?;
        Ok(match first >> 6 {
            0 => Ok(u64::from(first & 0x3F)),
            1 => Ok((u64::from(first & 0x3F) << 8) | u64::from(self.byte()?)),
            2 if first == 0x80 => Ok(u64::from(u32::from_be_bytes(self.array()?))),
            2 if first == 0x81 => Ok(u64::from_be_bytes(self.array()?)),
            2 => return Err(RdbError::BadFormat),
            _ => Err(first & 0x3F),
        })
    }

    fn plain_length(&mut self) -> Result<u64, RdbError> {
        self.length()?.map_err(|_| RdbError::BadFormat)
    }

    fn count(&mut self) -> Result<usize, RdbError> {
        usize::try_from(self.plain_length()?).map_err(|_| RdbError::BadFormat)
    }

    fn string(&mut self) -> Result<Vec<u8>, RdbError> {
        match self.length()? {
            Ok(len) => Ok(self.take(len)?.to_vec()),
            Err(ENC_INT8) => Ok((self.byte()? as i8).to_string().into_bytes()),
            Err(ENC_INT16) => Ok(i16::from_le_bytes(self.array()?).to_string().into_bytes()),
            Err(ENC_INT32) => Ok(i32::from_le_bytes(self.array()?).to_string().into_bytes()),
            Err(ENC_LZF) => {
                let compressed_len = self.plain_length()?;
                let len = self.plain_length()?;
                let compressed = self.take(compressed_len)?;
                lzf_decompress(compressed, len)
            }
            Err(_) => Err(RdbError::BadFormat),
        }
    }

    /// The old text score: a length byte (253 NaN, 254 +inf, 255 -inf)
    /// then that many ASCII bytes.
    fn text_double(&mut self) -> Result<f64, RdbError> {
        match self.byte()? {
            253 => Ok(f64::NAN),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            len => parse_score(self.take(u64::from(len))?),
        }
    }

    fn binary_double(&mut self) -> Result<f64, RdbError> {
        Ok(f64::from_le_bytes(self.array()?))
    }
}

/// An element of a listpack or ziplist.
enum Entry<'a> {
    Int(i64),
    Bytes(&'a [u8]),
}

impl Entry<'_> {
    fn to_bytes(&self) -> Vec<u8> {
        match self {
            Entry::Int(v) => v.to_string().into_bytes(),
            Entry::Bytes(b) => b.to_vec(),
        }
    }

    fn to_score(&self) -> Result<f64, RdbError> {
        match self {
            Entry::Int(v) => Ok(*v as f64),
            Entry::Bytes(b) => parse_score(b),
        }
    }
}

fn slice_at(blob: &[u8], start: usize, len: usize) -> Result<&[u8], RdbError> {
    let end = start.checked_add(len).ok_or(RdbError::BadFormat)?;
    blob.get(start..end).ok_or(RdbError::BadFormat)
}

fn byte_at(blob: &[u8], at: usize) -> Result<u8, RdbError> {
    blob.get(at).copied().ok_or(RdbError::BadFormat)
}

fn le_at<const N: usize>(blob: &[u8], at: usize) -> Result<[u8; N], RdbError> {
    slice_at(blob, at, N)?
        .try_into()
        .map_err(|_| RdbError::BadFormat)
}

/// Sign-extends the low `bits` bits of `value`.
fn sign_extend(value: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((value << shift) as i64) >> shift
}

/// Decodes and fully validates a listpack (layout at `ListpackWriter`).
fn listpack_entries(blob: &[u8]) -> Result<Vec<Entry<'_>>, RdbError> {
    let total = u32::from_le_bytes(le_at(blob, 0)?) as usize;
    let declared = u16::from_le_bytes(le_at(blob, 4)?);
    if total != blob.len() || blob.len() < 7 || blob.last() != Some(&0xFF) {
        return Err(RdbError::BadFormat);
    }
    let mut entries = Vec::with_capacity(usize::from(declared).min(blob.len()));
    let mut pos = 6;
    loop {
        let first = byte_at(blob, pos)?;
        if first == 0xFF {
            break;
        }
        let (entry, size) = match first {
            0x00..=0x7F => (Entry::Int(i64::from(first)), 1),
            0x80..=0xBF => {
                let len = usize::from(first & 0x3F);
                (Entry::Bytes(slice_at(blob, pos + 1, len)?), 1 + len)
            }
            0xC0..=0xDF => {
                let bits = (u64::from(first & 0x1F) << 8) | u64::from(byte_at(blob, pos + 1)?);
                (Entry::Int(sign_extend(bits, 13)), 2)
            }
            0xE0..=0xEF => {
                let len = (usize::from(first & 0x0F) << 8) | usize::from(byte_at(blob, pos + 1)?);
                (Entry::Bytes(slice_at(blob, pos + 2, len)?), 2 + len)
            }
            0xF0 => {
                let len = u32::from_le_bytes(le_at(blob, pos + 1)?) as usize;
                (
                    Entry::Bytes(slice_at(blob, pos + 5, len)?),
                    len.checked_add(5).ok_or(RdbError::BadFormat)?,
                )
            }
            0xF1 => (
                Entry::Int(i64::from(i16::from_le_bytes(le_at(blob, pos + 1)?))),
                3,
            ),
            0xF2 => {
                let [a, b, c] = le_at::<3>(blob, pos + 1)?;
                let bits = u64::from(u32::from_le_bytes([a, b, c, 0]));
                (Entry::Int(sign_extend(bits, 24)), 4)
            }
            0xF3 => (
                Entry::Int(i64::from(i32::from_le_bytes(le_at(blob, pos + 1)?))),
                5,
            ),
            0xF4 => (Entry::Int(i64::from_le_bytes(le_at(blob, pos + 1)?)), 9),
            _ => return Err(RdbError::BadFormat),
        };
        let mut backlen = Vec::with_capacity(5);
        push_backlen(&mut backlen, size as u64);
        let backlen_at = pos.checked_add(size).ok_or(RdbError::BadFormat)?;
        if slice_at(blob, backlen_at, backlen.len())? != backlen.as_slice() {
            return Err(RdbError::BadFormat);
        }
        pos = backlen_at + backlen.len();
        entries.push(entry);
    }
    if pos != blob.len() - 1 || (declared != u16::MAX && usize::from(declared) != entries.len()) {
        return Err(RdbError::BadFormat);
    }
    Ok(entries)
}

/// Decodes and fully validates a ziplist (Redis before 7.0).
///
/// Layout: total bytes (u32 LE), offset of the last entry (u32 LE), count
/// (u16 LE, 65535 = unknown), entries, 0xFF. An entry is the previous
/// entry's size (1 byte, or 0xFE + u32 LE), an encoding and its data:
/// 00pppppp / 01pppppp qqqqqqqq / 10xxxxxx + u32 BE: string lengths;
/// 0xC0 i16, 0xD0 i32, 0xE0 i64, 0xF0 i24, 0xFE i8 (all LE);
/// 0xF1..=0xFD: the integers 0..=12.
fn ziplist_entries(blob: &[u8]) -> Result<Vec<Entry<'_>>, RdbError> {
    let total = u32::from_le_bytes(le_at(blob, 0)?) as usize;
    let tail = u32::from_le_bytes(le_at(blob, 4)?) as usize;
    let declared = u16::from_le_bytes(le_at(blob, 8)?);
    if total != blob.len() || blob.len() < 11 || blob.last() != Some(&0xFF) {
        return Err(RdbError::BadFormat);
    }
    let mut entries = Vec::with_capacity(usize::from(declared).min(blob.len()));
    let mut pos = 10;
    let mut previous_size = 0;
    let mut last_entry_at = 10;
    loop {
        let first = byte_at(blob, pos)?;
        if first == 0xFF {
            break;
        }
        let start = pos;
        let (prevlen, header) = if first < 0xFE {
            (usize::from(first), 1)
        } else if first == 0xFE {
            (u32::from_le_bytes(le_at(blob, pos + 1)?) as usize, 5)
        } else {
            return Err(RdbError::BadFormat);
        };
        if prevlen != previous_size {
            return Err(RdbError::BadFormat);
        }
        pos += header;
        let encoding = byte_at(blob, pos)?;
        let (entry, size) = match encoding {
            0x00..=0x3F => {
                let len = usize::from(encoding);
                (Entry::Bytes(slice_at(blob, pos + 1, len)?), 1 + len)
            }
            0x40..=0x7F => {
                let len =
                    (usize::from(encoding & 0x3F) << 8) | usize::from(byte_at(blob, pos + 1)?);
                (Entry::Bytes(slice_at(blob, pos + 2, len)?), 2 + len)
            }
            0x80..=0xBF => {
                let len = u32::from_be_bytes(le_at(blob, pos + 1)?) as usize;
                (
                    Entry::Bytes(slice_at(blob, pos + 5, len)?),
                    len.checked_add(5).ok_or(RdbError::BadFormat)?,
                )
            }
            0xC0 => (
                Entry::Int(i64::from(i16::from_le_bytes(le_at(blob, pos + 1)?))),
                3,
            ),
            0xD0 => (
                Entry::Int(i64::from(i32::from_le_bytes(le_at(blob, pos + 1)?))),
                5,
            ),
            0xE0 => (Entry::Int(i64::from_le_bytes(le_at(blob, pos + 1)?)), 9),
            0xF0 => {
                let [a, b, c] = le_at::<3>(blob, pos + 1)?;
                let bits = u64::from(u32::from_le_bytes([a, b, c, 0]));
                (Entry::Int(sign_extend(bits, 24)), 4)
            }
            0xFE => (Entry::Int(i64::from(byte_at(blob, pos + 1)? as i8)), 2),
            0xF1..=0xFD => (Entry::Int(i64::from(encoding & 0x0F) - 1), 1),
            _ => return Err(RdbError::BadFormat),
        };
        pos = pos.checked_add(size).ok_or(RdbError::BadFormat)?;
        if pos >= blob.len() {
            return Err(RdbError::BadFormat);
        }
        previous_size = pos - start;
        last_entry_at = start;
        entries.push(entry);
    }
    if pos != blob.len() - 1
        || tail != last_entry_at
        || (declared != u16::MAX && usize::from(declared) != entries.len())
    {
        return Err(RdbError::BadFormat);
    }
    Ok(entries)
}

/// Decodes and validates an intset (layout at `intset_bytes`); values must
/// be strictly ascending.
fn intset_values(blob: &[u8]) -> Result<Vec<i64>, RdbError> {
    let width = u32::from_le_bytes(le_at(blob, 0)?) as usize;
    let count = u32::from_le_bytes(le_at(blob, 4)?) as usize;
    if !matches!(width, 2 | 4 | 8) || count.checked_mul(width) != Some(blob.len() - 8) {
        return Err(RdbError::BadFormat);
    }
    let mut values: Vec<i64> = Vec::with_capacity(count);
    for chunk in blob.get(8..).unwrap_or_default().chunks_exact(width) {
        let mut bytes = [0u8; 8];
        bytes[..width].copy_from_slice(chunk);
        let value = sign_extend(u64::from_le_bytes(bytes), width as u32 * 8);
        if values.last().is_some_and(|&last| last >= value) {
            return Err(RdbError::BadFormat);
        }
        values.push(value);
    }
    Ok(values)
}

/// Decodes a zipmap (the hash encoding of Redis before 2.6).
///
/// Layout: a count byte (254 = unknown), then per pair: key length, key,
/// value length, a "free" byte, value, that many unused bytes; 0xFF ends
/// it. A length is one byte below 254, or 254 + u32 LE.
fn zipmap_pairs(blob: &[u8]) -> Result<Pairs, RdbError> {
    fn length(blob: &[u8], pos: &mut usize) -> Result<usize, RdbError> {
        match byte_at(blob, *pos)? {
            len @ 0..=253 => {
                *pos += 1;
                Ok(usize::from(len))
            }
            254 => {
                let len = u32::from_le_bytes(le_at(blob, *pos + 1)?) as usize;
                *pos += 5;
                Ok(len)
            }
            _ => Err(RdbError::BadFormat),
        }
    }
    let declared = byte_at(blob, 0)?;
    let mut pairs = Vec::new();
    let mut pos = 1;
    while byte_at(blob, pos)? != 0xFF {
        let key_len = length(blob, &mut pos)?;
        let key = slice_at(blob, pos, key_len)?.to_vec();
        pos += key_len;
        let value_len = length(blob, &mut pos)?;
        let free = usize::from(byte_at(blob, pos)?);
        pos += 1;
        let value = slice_at(blob, pos, value_len)?.to_vec();
        pos += value_len;
        slice_at(blob, pos, free)?;
        pos += free;
        pairs.push((key, value));
    }
    if pos != blob.len() - 1 || (declared < 254 && usize::from(declared) != pairs.len()) {
        return Err(RdbError::BadFormat);
    }
    Ok(pairs)
}

// ---------------------------------------------------------------------------
// LZF
// ---------------------------------------------------------------------------
//
// Format: a control byte 000LLLLL is followed by L+1 literal bytes;
// LLLooooo oooooooo copies L+2 bytes from `offset + 1` back in the output,
// and 111ooooo LLLLLLLL oooooooo copies L+9.

const LZF_HASH_LOG: u32 = 16;
const LZF_MAX_LITERAL: usize = 1 << 5;
const LZF_MAX_OFFSET: usize = 1 << 13;
const LZF_MAX_REFERENCE: usize = (1 << 8) + (1 << 3);

/// Compresses as liblzf 3.6 does with Redis's settings (HLOG 16, VERY_FAST,
/// not ULTRA_FAST), so that DUMP output is byte-identical to Redis.
/// Returns None when the result would not fit in `out_len` bytes, using
/// liblzf's own (conservative) bounds checks.
///
/// liblzf leaves its hash table uninitialised (INIT_HTAB 0), yet its output
/// is deterministic and a zeroed table reproduces it: a stale slot can only
/// be consulted for a trigram not seen at any hashed position before, and
/// every trigram inside a match also occurs at an earlier hashed position,
/// so a stale candidate never compares equal. Offset 0 is never a valid
/// candidate in liblzf either, which is why 0 can mean "empty".
fn lzf_compress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    fn slot(hval: u32) -> usize {
        ((hval >> (24 - LZF_HASH_LOG)).wrapping_sub(hval.wrapping_mul(5))
            & ((1 << LZF_HASH_LOG) - 1)) as usize
    }
    fn set(out: &mut [u8], at: usize, byte: u8) -> Option<()> {
        *out.get_mut(at)? = byte;
        Some(())
    }
    fn at(input: &[u8], i: usize) -> u32 {
        input.get(i).copied().map_or(0, u32::from)
    }

    let in_len = input.len();
    if in_len == 0 || out_len == 0 {
        return None;
    }
    let mut table = vec![0u32; 1 << LZF_HASH_LOG];
    let mut out = vec![0u8; out_len];
    let mut lit: usize = 0;
    let mut op: usize = 1; // out[op - lit - 1] holds the open literal run's header
    let mut ip: usize = 0;
    let mut hval: u32 = (at(input, 0) << 8) | at(input, 1);
    while ip + 2 < in_len {
        hval = (hval << 8) | at(input, ip + 2);
        let h = slot(hval);
        let reference = table[h] as usize;
        table[h] = ip as u32;
        let is_match = reference > 0
            && reference < ip
            && ip - reference - 1 < LZF_MAX_OFFSET
            && input.get(reference..reference + 3) == input.get(ip..ip + 3);
        if is_match {
            let off = ip - reference - 1;
            let mut len: usize = 2;
            let max_len = (in_len - ip - len).min(LZF_MAX_REFERENCE);
            if op - usize::from(lit == 0) + 3 + 1 >= out_len {
                return None;
            }
            set(&mut out, op - lit - 1, (lit as u8).wrapping_sub(1))?;
            if lit == 0 {
                op -= 1;
            }
            // liblzf compares 16 bytes unrolled before its bounded loop when
            // more than 16 are possible; reproduce its exact lengths.
            let mut mismatch = false;
            if max_len > 16 {
                for _ in 0..16 {
                    len += 1;
                    if input.get(reference + len) != input.get(ip + len) {
                        mismatch = true;
                        break;
                    }
                }
            }
            if !mismatch {
                loop {
                    len += 1;
                    if !(len < max_len && input.get(reference + len) == input.get(ip + len)) {
                        break;
                    }
                }
            }
            len -= 2;
            ip += 1;
            if len < 7 {
                set(&mut out, op, ((off >> 8) + (len << 5)) as u8)?;
                op += 1;
            } else {
                set(&mut out, op, ((off >> 8) + (7 << 5)) as u8)?;
                set(&mut out, op + 1, (len - 7) as u8)?;
                op += 2;
            }
            set(&mut out, op, off as u8)?;
            op += 2; // and open a new literal run
            lit = 0;
            ip += len + 1;
            if ip + 2 >= in_len {
                break;
            }
            // VERY_FAST: hash the last two positions of the match.
            ip -= 2;
            hval = (at(input, ip) << 8) | at(input, ip + 1);
            for _ in 0..2 {
                hval = (hval << 8) | at(input, ip + 2);
                table[slot(hval)] = ip as u32;
                ip += 1;
            }
        } else {
            if op >= out_len {
                return None;
            }
            set(&mut out, op, at(input, ip) as u8)?;
            op += 1;
            ip += 1;
            lit += 1;
            if lit == LZF_MAX_LITERAL {
                set(&mut out, op - lit - 1, (lit - 1) as u8)?;
                lit = 0;
                op += 1;
            }
        }
    }
    if op + 3 > out_len {
        return None;
    }
    while ip < in_len {
        set(&mut out, op, at(input, ip) as u8)?;
        op += 1;
        ip += 1;
        lit += 1;
        if lit == LZF_MAX_LITERAL {
            set(&mut out, op - lit - 1, (lit - 1) as u8)?;
            lit = 0;
            op += 1;
        }
    }
    set(&mut out, op - lit - 1, (lit as u8).wrapping_sub(1))?;
    if lit == 0 {
        op -= 1;
    }
    out.truncate(op);
    Some(out)
}

/// LZF decompression; the output must come to exactly `expected_len` bytes.
fn lzf_decompress(input: &[u8], expected_len: u64) -> Result<Vec<u8>, RdbError> {
    let expected_len = usize::try_from(expected_len).map_err(|_| RdbError::BadFormat)?;
    // The announced length is untrusted: preallocate no more than the
    // compressed input itself and let highly compressed data grow the
    // buffer. Overshooting stops within one back reference (264 bytes).
    let mut out: Vec<u8> = Vec::with_capacity(expected_len.min(input.len()));
    let mut ip = 0;
    while let Some(&ctrl) = input.get(ip) {
        ip += 1;
        let ctrl = usize::from(ctrl);
        if ctrl < 32 {
            let literal = slice_at(input, ip, ctrl + 1)?;
            out.extend_from_slice(literal);
            ip += ctrl + 1;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                len += usize::from(byte_at(input, ip)?);
                ip += 1;
            }
            let back = ((ctrl & 0x1F) << 8) + usize::from(byte_at(input, ip)?) + 1;
            ip += 1;
            let from = out.len().checked_sub(back).ok_or(RdbError::BadFormat)?;
            // The source may overlap what this copy appends (runs).
            for at in from..from + len + 2 {
                let b = *out.get(at).ok_or(RdbError::BadFormat)?;
                out.push(b);
            }
        }
        if out.len() > expected_len {
            return Err(RdbError::BadFormat);
        }
    }
    if out.len() != expected_len {
        return Err(RdbError::BadFormat);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        assert!(s.len().is_multiple_of(2), "odd hex length");
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn to_hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Appends the version and checksum to a hand-made object.
    fn with_footer(body: &[u8]) -> Vec<u8> {
        let mut payload = body.to_vec();
        payload.extend_from_slice(&RDB_VERSION.to_le_bytes());
        let crc = CRC64.checksum(&payload);
        payload.extend_from_slice(&crc.to_le_bytes());
        payload
    }

    fn bytes_list(items: &[&str]) -> Vec<Vec<u8>> {
        items.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    // DUMP outputs of redis-server 7.0.15.
    const STRING_VECTORS: &[(&[u8], &str)] = &[
        (b"hello", "000568656c6c6f0a006372df766534200a"),
        (b"", "00000a005d9b5c400f7fa2da"),
        (b"0", "00c0000a009840a778f8500308"),
        (b"-1", "00c0ff0a000c937e2485089dc5"),
        (b"127", "00c07f0a000db5eb315254c514"),
        (b"128", "00c180000a00eb7ab3b510cf4b65"),
        (b"-128", "00c0800a009966326d2f0c5bd9"),
        (b"-129", "00c17fff0a001760822854808480"),
        (b"32767", "00c1ff7f0a00495a37da17f4d52b"),
        (b"32768", "00c2008000000a0045d82eedd5bda910"),
        (b"2147483647", "00c2ffffff7f0a002c74e59ee02eada1"),
        (
            b"2147483648",
            "000a323134373438333634380a00e7b129a34c1d76ee",
        ),
        (b"-2147483648", "00c2000000800a00c74f873e33558187"),
        (b"007", "00033030370a007258e27b4c69bad9"),
        (b"-0", "00022d300a00d5411fd9d6d050cc"),
        (b"1.5", "0003312e350a001df5d4bedb5b860d"),
        (
            b"12345678901",
            "000b31323334353637383930310a00304e52d727176510",
        ),
        (
            b"aaaaaaaaaaaaaaaaaaaa",
            "001461616161616161616161616161616161616161610a0083b46b5e1b11acf1",
        ),
        (
            b"hello world hello world hello world",
            "00c314230c68656c6c6f20776f726c642068e00b0b016c640a00778390696934acb7",
        ),
    ];

    #[test]
    fn string_dumps_match_redis_7_0() {
        let mut vectors: Vec<(Vec<u8>, String)> = STRING_VECTORS
            .iter()
            .map(|(v, h)| (v.to_vec(), h.to_string()))
            .collect();
        // LZF-compressed: "a" x 100 and "x" x 70.
        vectors.push((
            vec![b'a'; 100],
            "00c3094064016161e057000161610a00e8a3b507b06df271".into(),
        ));
        vectors.push((
            vec![b'x'; 70],
            "00c3094046017878e039000178780a0031ca1bede0f32a8d".into(),
        ));
        for (value, expected) in vectors {
            let label = String::from_utf8_lossy(&value).into_owned();
            assert_eq!(
                to_hex(&dump(&RdbValue::String(value.clone()))),
                expected,
                "{label}"
            );
            assert_eq!(
                restore(&hex(&expected)),
                Ok(RdbValue::String(value)),
                "{label}"
            );
        }
    }

    /// xorshift64: the generator the vectors below were made with (the same
    /// code in a script fed the values to redis-server 7.0.15).
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn generated_string(g: &mut Gen, i: usize) -> Vec<u8> {
        let n = 21 + g.below(3000) as usize;
        let mut out = Vec::new();
        match i % 4 {
            0 => {
                let alphabet = 1 + g.below(20);
                for _ in 0..n {
                    out.push(b'a' + g.below(alphabet) as u8);
                }
            }
            1 => {
                for _ in 0..n {
                    out.push(g.next() as u8);
                }
            }
            2 => {
                let words: Vec<Vec<u8>> = (0..12)
                    .map(|_| {
                        let len = 1 + g.below(7);
                        (0..len).map(|_| b'a' + g.below(26) as u8).collect()
                    })
                    .collect();
                while out.len() < n {
                    out.extend_from_slice(&words[g.below(12) as usize]);
                    out.push(b' ');
                }
            }
            _ => {
                let len = 1 + g.below(40);
                let pattern: Vec<u8> = (0..len).map(|_| g.next() as u8).collect();
                while out.len() < n {
                    if g.below(4) != 0 {
                        out.extend_from_slice(&pattern);
                    } else {
                        out.push(g.next() as u8);
                    }
                }
            }
        }
        out.truncate(n);
        out
    }

    /// Length and CRC footer of redis-server 7.0.15's DUMP of each generated
    /// string (44 of them LZF-compressed by Redis, 20 raw).
    const GENERATED_STRING_DUMPS: &[(usize, &str)] = &[
        (1933, "da96170d2ab214ae"),
        (2268, "7b840a3fa5987e36"),
        (1057, "6f6334b47e594b07"),
        (183, "2e08f263e50dbc80"),
        (527, "2e97137d6a6dbba2"),
        (1832, "706e7849ecc9dccd"),
        (633, "6d2344897bb325d6"),
        (75, "73f548b5d1e792b7"),
        (2126, "2e716e431555efbe"),
        (434, "d47101929e6ebae1"),
        (268, "97e4d86e922b69f3"),
        (602, "830b5dee0d60ef16"),
        (1217, "627b3cb8b9334581"),
        (2953, "f81d47157ac897e2"),
        (1191, "368112f170e14432"),
        (319, "74bfa51693ea7e5d"),
        (1671, "c92eef18adcaa5c5"),
        (822, "96eec2feacf4a863"),
        (231, "f762eefc14996a75"),
        (59, "8c07d12ef1203ae8"),
        (405, "52e488751cc2cd0a"),
        (625, "884305b94821c037"),
        (636, "33afdb3260938fcb"),
        (61, "f278efd44cd97a78"),
        (1403, "bcce964b3e2c3d62"),
        (866, "233794c3e1cbf514"),
        (602, "488f2258955fc10c"),
        (54, "fcb2369d4676f51e"),
        (915, "333219a6a45808e8"),
        (569, "49ca41ae25ee100c"),
        (245, "d73501f1d77b7d7d"),
        (624, "cb1ffa8c0262acf6"),
        (1056, "cba1317632edacc4"),
        (460, "31a998ffcf6a455d"),
        (968, "4a7dc29dada64802"),
        (274, "3eea7d37e27ed026"),
        (1801, "e941279bcabb48a4"),
        (960, "f96dafaa07d57d86"),
        (215, "a5c4e4551cde2b38"),
        (247, "62145f74dca7cb8b"),
        (121, "da6928b035596cd8"),
        (1675, "2e00439c0809441d"),
        (950, "d960349b2cb85170"),
        (231, "135cbb7fb5d2e8d9"),
        (2785, "ef1a22d2ba7f5dff"),
        (1121, "8c78dc8c4cf77a4c"),
        (797, "2c4922263648cb17"),
        (318, "eadf3ae55e6c9ad2"),
        (2252, "fb71871fb6e65066"),
        (1661, "cfa50c7d37a1a6d4"),
        (1155, "ddf2e877b63aba12"),
        (113, "fecdc598f3db441d"),
        (2018, "694bd9c292f2f8cc"),
        (570, "3b61f7de8153abc3"),
        (346, "8aa638c2e57f721b"),
        (106, "536554f0b771245f"),
        (63, "8f1c3e5ba47d57fb"),
        (2768, "ff23674b1e9e05db"),
        (869, "1e5ca2bc15294cd1"),
        (255, "b7456ab8c6b7e71a"),
        (1806, "ae16e8ef41866996"),
        (3025, "426f1e02e2134d30"),
        (803, "93dc97c3dc408985"),
        (87, "3f7689d802aaab08"),
    ];

    /// A dump whose length and CRC equal Redis's is Redis's dump.
    fn assert_same_as_redis(payload: &[u8], (len, footer): (usize, &str), label: &str) {
        assert_eq!(payload.len(), len, "{label}: length");
        assert_eq!(
            to_hex(&payload[payload.len() - 8..]),
            footer,
            "{label}: crc"
        );
    }

    #[test]
    fn generated_strings_match_redis_7_0() {
        let mut g = Gen(0x9E37_79B9_7F4A_7C15);
        let mut compressed = 0;
        for (i, expected) in GENERATED_STRING_DUMPS.iter().enumerate() {
            let value = generated_string(&mut g, i);
            let payload = dump(&RdbValue::String(value.clone()));
            assert_same_as_redis(&payload, *expected, &format!("string {i}"));
            compressed += usize::from(payload[1] == 0xC0 | ENC_LZF);
            assert_eq!(restore(&payload), Ok(RdbValue::String(value)));
        }
        assert_eq!(compressed, 44);
    }

    // DUMP outputs of redis-server 7.0.15 for small collections.
    const L1: &str = "1201022a2a00000008008161020101dfff028568656c6c6f06c12c02f290eefe04f4005ed0b200000000098001ff0a00ff305fdcad971ec5";
    const S1_PLAIN: &str =
        "02050662616e616e61c00706636865727279056170706c65022d300a00ee1d79d03543b94e";
    const S2_INTSET64_LZF: &str =
        "0bc316200408000000032003a0000080a0070100ff600001ff7f0a005ad47b373d832c0a";
    const S3_INTSET16: &str = "0b120200000005000000fbff01000200030064000a0024654d3930953b2d";
    const S4_INTSET32: &str = "0b10040000000200000001000000701101000a002735436efd6656c4";
    const Z1_LISTPACK: &str = "11c34041404a164a0000000c00816302842d696e660581650293302e3130e00500173114816102010181620283322e3504816602f400e8764817203b04098164028320390104ff0a00c4c471da4192c08f";
    const Z2_SKIPLIST: &str =
        "0502c3094046017979e0390001797900000000000000400161000000000000f03f0a004f9d654d790ca0a1";
    const H1_LISTPACK: &str = "1025250000000600846e616d6505846669726e0585636f756e74062a0185656d707479068001ff0a005d132c73b585ebc2";
    const H2_PLAIN: &str = "040203626967c3094041017a7ae03400017a7a016601760a00ef3d6e8781f6aefa";

    #[test]
    fn small_collections_match_redis_7_0() {
        let cases: Vec<(&str, RdbValue)> = vec![
            (
                L1,
                RdbValue::List(bytes_list(&[
                    "a",
                    "1",
                    "-1",
                    "hello",
                    "300",
                    "-70000",
                    "3000000000",
                    "",
                ])),
            ),
            (
                S1_PLAIN,
                RdbValue::Set(bytes_list(&["banana", "7", "cherry", "apple", "-0"])),
            ),
            (
                S2_INTSET64_LZF,
                RdbValue::Set(bytes_list(&[
                    "-9223372036854775808",
                    "0",
                    "9223372036854775807",
                ])),
            ),
            (
                S3_INTSET16,
                RdbValue::Set(bytes_list(&["-5", "1", "2", "3", "100"])),
            ),
            (S4_INTSET32, RdbValue::Set(bytes_list(&["1", "70000"]))),
            (
                Z1_LISTPACK,
                RdbValue::SortedSet(vec![
                    (b"c".to_vec(), f64::NEG_INFINITY),
                    (b"e".to_vec(), 0.1),
                    (b"a".to_vec(), 1.0),
                    (b"b".to_vec(), 2.5),
                    (b"f".to_vec(), 100_000_000_000.0),
                    (b"d".to_vec(), f64::INFINITY),
                ]),
            ),
            (
                Z2_SKIPLIST,
                RdbValue::SortedSet(vec![(b"a".to_vec(), 1.0), (vec![b'y'; 70], 2.0)]),
            ),
            (
                H1_LISTPACK,
                RdbValue::Hash(vec![
                    (b"name".to_vec(), b"firn".to_vec()),
                    (b"count".to_vec(), b"42".to_vec()),
                    (b"empty".to_vec(), b"".to_vec()),
                ]),
            ),
            (
                H2_PLAIN,
                RdbValue::Hash(vec![
                    (b"big".to_vec(), vec![b'z'; 65]),
                    (b"f".to_vec(), b"v".to_vec()),
                ]),
            ),
        ];
        for (payload, value) in cases {
            assert_eq!(restore(&hex(payload)).as_ref(), Ok(&value), "{payload}");
            assert_eq!(to_hex(&dump(&value)), payload, "{value:?}");
        }
    }

    fn big_list() -> Vec<Vec<u8>> {
        (0..1000i64)
            .map(|j| match j % 3 {
                0 => (j * 37 - 500).to_string().into_bytes(),
                1 => format!("item-{j}").into_bytes(),
                _ => vec![b'x'; (j % 200) as usize],
            })
            .collect()
    }

    #[test]
    fn large_collections_match_redis_7_0() {
        // Values built in redis-server 7.0.15 by RPUSH / ZADD / HSET / SADD
        // in this order; lengths and CRCs of its DUMPs.
        let list = RdbValue::List(big_list());
        let zset_big = RdbValue::SortedSet(
            (0..1000u32)
                .map(|j| {
                    let score = f64::from(j * 7919 % 1000) / 8.0 - 50.0;
                    (format!("m{j}").into_bytes(), score)
                })
                .collect(),
        );
        let zset_small = RdbValue::SortedSet(
            (0..100u32)
                .map(|j| (format!("m{j}").into_bytes(), f64::from(j) * 0.1))
                .collect(),
        );
        let hash_small = RdbValue::Hash(
            (0..100u32)
                .map(|j| {
                    (
                        format!("f{j}").into_bytes(),
                        format!("v{}", j * j).into_bytes(),
                    )
                })
                .collect(),
        );
        let intset = RdbValue::Set(
            (0..512i64)
                .map(|j| ((j - 256) * 1_000_003).to_string().into_bytes())
                .collect(),
        );
        let cases = [
            (&list, (5818, "98e06e38c6c6f503"), TYPE_LIST_QUICKLIST_2),
            (&zset_big, (12903, "dd7a43f3f8b5f4bc"), TYPE_ZSET_2),
            (&zset_small, (980, "eab26040503c7165"), TYPE_ZSET_LISTPACK),
            (&hash_small, (891, "c96058e68ef8d878"), TYPE_HASH_LISTPACK),
            (&intset, (2069, "856566f6a59d88a7"), TYPE_SET_INTSET),
        ];
        for (value, redis, object_type) in cases {
            let payload = dump(value);
            assert_eq!(payload[0], object_type);
            assert_same_as_redis(&payload, redis, value.type_name());
            let back = restore(&payload).unwrap();
            match (value, &back) {
                (RdbValue::SortedSet(a), RdbValue::SortedSet(b)) => {
                    let mut a = a.clone();
                    a.sort_by(zset_order);
                    assert_eq!(&a, b);
                }
                _ => assert_eq!(value, &back),
            }
        }
    }

    /// Payloads in the encodings of older Redis versions, made by hand;
    /// redis-server 7.0.15 (sanitize-dump-payload yes) restores each of
    /// them to the value given.
    fn older_encodings() -> Vec<(Vec<u8>, RdbValue)> {
        let b300 = "42".repeat(300);
        let cases: Vec<(String, RdbValue)> = vec![
            (
                "01030161023132000a00027e3986d117fbc9".into(),
                RdbValue::List(bytes_list(&["a", "12", ""])),
            ),
            (
                format!("0a4163630100005b010000090000016103f602feff03c02c0104f090eefe05e0005ed0b2000000000a0568656c6c6f07412c{b300}fe2f0100000178ff0a000486574aef266f20"),
                RdbValue::List(vec![
                    b"a".to_vec(),
                    b"5".to_vec(),
                    b"-1".to_vec(),
                    b"300".to_vec(),
                    b"-70000".to_vec(),
                    b"3000000000".to_vec(),
                    b"hello".to_vec(),
                    vec![b'B'; 300],
                    b"x".to_vec(),
                ]),
            ),
            (
                format!(
                    "0e0211110000000d0000000200000161030162ff4056560000000c000000020000fd024046{}ff0a0042d8039b90eede8b",
                    "63".repeat(70)
                ),
                RdbValue::List(vec![
                    b"a".to_vec(),
                    b"b".to_vec(),
                    b"12".to_vec(),
                    vec![b'c'; 70],
                ]),
            ),
            (
                "0303016103312e350162fe0163ff0a0006d6b5d11bd0084f".into(),
                RdbValue::SortedSet(vec![
                    (b"c".to_vec(), f64::NEG_INFINITY),
                    (b"a".to_vec(), 1.5),
                    (b"b".to_vec(), f64::INFINITY),
                ]),
            ),
            (
                "0c1e1e00000018000000060000016303fefd03016103f20201620303322e35ff0a00c4cef118c18b19a2".into(),
                RdbValue::SortedSet(vec![
                    (b"c".to_vec(), -3.0),
                    (b"a".to_vec(), 1.0),
                    (b"b".to_vec(), 2.5),
                ]),
            ),
            (
                format!("0d414d4d0100001d000000060000026631040276310402663204fe7b0302663304412c{b300}ff0a00570ce80e7c810ea7"),
                RdbValue::Hash(vec![
                    (b"f1".to_vec(), b"v1".to_vec()),
                    (b"f2".to_vec(), b"123".to_vec()),
                    (b"f3".to_vec(), vec![b'B'; 300]),
                ]),
            ),
            (
                format!(
                    "09414903026631020276310000fe2c010000{}02027632000002663300020000ff0a00cf83f8b95a75401e",
                    "6b".repeat(300)
                ),
                RdbValue::Hash(vec![
                    (b"f1".to_vec(), b"v1".to_vec()),
                    (vec![b'k'; 300], b"v2".to_vec()),
                    (b"f3".to_vec(), b"".to_vec()),
                ]),
            ),
            // Quicklist 2 with a plain node and an empty listpack node.
            (
                "12030105706c61696e0207070000000000ff020a0a0000000100816102ff0a00e97c346d2b5fd251".into(),
                RdbValue::List(bytes_list(&["plain", "a"])),
            ),
        ];
        cases.into_iter().map(|(h, v)| (hex(&h), v)).collect()
    }

    #[test]
    fn reads_older_encodings() {
        for (payload, value) in older_encodings() {
            assert_eq!(restore(&payload).as_ref(), Ok(&value));
            // And what Firn writes back restores to the same value.
            assert_eq!(restore(&dump(&value)).as_ref(), Ok(&value));
        }
    }

    fn assorted_values() -> Vec<RdbValue> {
        let mut g = Gen(42);
        let random_bytes =
            |g: &mut Gen, n: usize| -> Vec<u8> { (0..n).map(|_| g.next() as u8).collect() };
        vec![
            RdbValue::String(Vec::new()),
            RdbValue::String(random_bytes(&mut g, 100_000)),
            RdbValue::String(vec![0; 100_000]),
            RdbValue::List(vec![Vec::new()]),
            RdbValue::List(vec![vec![b'q'; 20_000], b"1".to_vec(), vec![b'r'; 9000]]),
            RdbValue::List(
                (0..3000)
                    .map(|i: i64| (i * i * i - 1_000_000).to_string().into_bytes())
                    .collect(),
            ),
            RdbValue::Set(
                (0..1000)
                    .map(|i| format!("member:{i}").into_bytes())
                    .collect(),
            ),
            RdbValue::Set((0..513).map(|i: i64| i.to_string().into_bytes()).collect()),
            RdbValue::SortedSet(vec![(vec![b'm'; 65], -0.5), (b"n".to_vec(), 1e-300)]),
            RdbValue::SortedSet(
                (0..129)
                    .map(|i| (format!("{i}").into_bytes(), f64::from(i).sqrt()))
                    .collect(),
            ),
            RdbValue::Hash(
                (0..129)
                    .map(|i| (format!("f{i}").into_bytes(), random_bytes(&mut g, i)))
                    .collect(),
            ),
            RdbValue::Hash(vec![(Vec::new(), Vec::new())]),
            RdbValue::Hash(vec![(b"k".to_vec(), vec![b'v'; 64])]),
        ]
    }

    #[test]
    fn round_trips() {
        for value in assorted_values() {
            let payload = dump(&value);
            let back = restore(&payload).unwrap();
            match (&value, &back) {
                // Intsets come back in ascending order, zsets by score.
                (RdbValue::Set(a), RdbValue::Set(b)) if payload[0] == TYPE_SET_INTSET => {
                    let mut a: Vec<i64> = a.iter().map(|m| string2ll(m).unwrap()).collect();
                    a.sort_unstable();
                    let b: Vec<i64> = b.iter().map(|m| string2ll(m).unwrap()).collect();
                    assert_eq!(a, b);
                }
                (RdbValue::SortedSet(a), RdbValue::SortedSet(b)) => {
                    let mut a = a.clone();
                    a.sort_by(zset_order);
                    assert_eq!(&a, b);
                }
                _ => assert_eq!(value, back),
            }
            assert_eq!(dump(&back), payload, "dump(restore(x)) == x");
        }
    }

    #[test]
    fn list_nodes_split_at_8_kb() {
        let payload = dump(&RdbValue::List(vec![vec![b'z'; 5000]; 3]));
        let mut reader = Reader {
            data: &payload,
            pos: 1,
        };
        assert_eq!(reader.count(), Ok(3));
        let payload = dump(&RdbValue::List(vec![vec![b'z'; 3000]; 3]));
        let mut reader = Reader {
            data: &payload,
            pos: 1,
        };
        assert_eq!(reader.count(), Ok(2));
    }

    #[test]
    fn refuses_what_redis_refuses() {
        let bad = |body: &[u8]| restore(&with_footer(body));
        // Empty collections.
        assert_eq!(bad(&[TYPE_SET, 0]), Err(RdbError::BadFormat));
        assert_eq!(bad(&[TYPE_HASH, 0]), Err(RdbError::BadFormat));
        assert_eq!(bad(&[TYPE_LIST_QUICKLIST_2, 0]), Err(RdbError::BadFormat));
        let empty_listpack = [7, 0, 0, 0, 0, 0, 0xFF];
        let mut body = vec![TYPE_LIST_QUICKLIST_2, 1, 2, 7];
        body.extend_from_slice(&empty_listpack);
        assert_eq!(bad(&body), Err(RdbError::BadFormat));
        // Unknown quicklist container.
        let mut body = vec![TYPE_LIST_QUICKLIST_2, 1, 3, 10];
        body.extend_from_slice(&[10, 0, 0, 0, 1, 0, 0x81, b'a', 2, 0xFF]);
        assert_eq!(bad(&body), Err(RdbError::BadFormat));
        body[2] = 2;
        assert_eq!(bad(&body), Ok(RdbValue::List(bytes_list(&["a"]))));
        // Duplicates.
        assert_eq!(
            bad(&[TYPE_SET, 2, 1, b'a', 1, b'a']),
            Err(RdbError::BadFormat)
        );
        let dup_fields = [
            17, 0, 0, 0, 4, 0, 0x81, b'a', 2, 1, 1, 0x81, b'a', 2, 2, 1, 0xFF,
        ];
        let mut body = vec![TYPE_HASH_LISTPACK, 17];
        body.extend_from_slice(&dup_fields);
        assert_eq!(bad(&body), Err(RdbError::BadFormat));
        body[14] = b'b'; // the second field becomes "b"
        assert_eq!(
            bad(&body),
            Ok(RdbValue::Hash(vec![
                (b"a".to_vec(), b"1".to_vec()),
                (b"b".to_vec(), b"2".to_vec())
            ]))
        );
        // Intset out of order or repeated.
        assert_eq!(
            bad(&[TYPE_SET_INTSET, 12, 2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 1, 0]),
            Err(RdbError::BadFormat)
        );
        assert_eq!(
            bad(&[TYPE_SET_INTSET, 12, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 1, 0]),
            Err(RdbError::BadFormat)
        );
        // NaN scores, binary and text.
        let mut body = vec![TYPE_ZSET_2, 1, 1, b'a'];
        body.extend_from_slice(&f64::NAN.to_le_bytes());
        assert_eq!(bad(&body), Err(RdbError::BadFormat));
        assert_eq!(bad(&[TYPE_ZSET, 1, 1, b'a', 253]), Err(RdbError::BadFormat));
        assert_eq!(
            bad(&[TYPE_ZSET, 1, 1, b'a', 3, b'n', b'a', b'n']),
            Err(RdbError::BadFormat)
        );
        assert_eq!(
            bad(&[TYPE_ZSET, 1, 1, b'a', 2, b'x', b'y']),
            Err(RdbError::BadFormat)
        );
        // Types Redis 7.0 does not know, modules, and streams.
        for object_type in [6, 7, 8, 20, 21, 22, 255] {
            assert_eq!(bad(&[object_type, 0]), Err(RdbError::BadFormat));
        }
        for object_type in [TYPE_STREAM_LISTPACKS, TYPE_STREAM_LISTPACKS_2] {
            let err = bad(&[object_type, 0]).unwrap_err();
            assert_eq!(err, RdbError::UnsupportedType(object_type));
            assert_eq!(
                err.reply_text(),
                "ERR Firn cannot restore a stream value yet"
            );
        }
        // Version and checksum.
        let mut newer = vec![TYPE_STRING, 1, b'a'];
        newer.extend_from_slice(&11u16.to_le_bytes());
        let crc = CRC64.checksum(&newer);
        newer.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(restore(&newer), Err(RdbError::BadChecksum));
        assert_eq!(
            RdbError::BadChecksum.reply_text(),
            "ERR DUMP payload version or checksum are wrong"
        );
        assert_eq!(RdbError::BadFormat.reply_text(), "ERR Bad data format");
        let mut older = vec![TYPE_STRING, 1, b'a'];
        older.extend_from_slice(&9u16.to_le_bytes());
        let crc = CRC64.checksum(&older);
        older.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(restore(&older), Ok(RdbValue::String(b"a".to_vec())));
        assert_eq!(restore(b""), Err(RdbError::BadChecksum));
        assert_eq!(restore(b"junk"), Err(RdbError::BadChecksum));
        // Like Redis, bytes after the object are ignored.
        assert_eq!(
            bad(&[TYPE_STRING, 1, b'A', b'B', b'C']),
            Ok(RdbValue::String(b"A".to_vec()))
        );
        // A length that claims more than the payload holds.
        assert_eq!(
            bad(&[TYPE_STRING, 0x80, 0xFF, 0xFF, 0xFF, 0xFF]),
            Err(RdbError::BadFormat)
        );
        assert_eq!(
            bad(&[TYPE_LIST, 0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, b'a']),
            Err(RdbError::BadFormat)
        );
    }

    /// Every payload the tests know, valid ones only.
    fn seeds() -> Vec<Vec<u8>> {
        let mut seeds: Vec<Vec<u8>> = [L1, S1_PLAIN, S2_INTSET64_LZF, S3_INTSET16, S4_INTSET32]
            .iter()
            .chain([Z1_LISTPACK, Z2_SKIPLIST, H1_LISTPACK, H2_PLAIN].iter())
            .map(|h| hex(h))
            .collect();
        seeds.extend(STRING_VECTORS.iter().map(|(_, h)| hex(h)));
        seeds.push(dump(&RdbValue::List(big_list())));
        seeds.push(dump(&RdbValue::List(
            (0..40).map(|i| vec![b'a' + i as u8 % 3; 500]).collect(),
        )));
        seeds.extend(
            assorted_values()
                .iter()
                .filter(|v| dump(v).len() < 20_000)
                .map(dump),
        );
        seeds.extend(older_encodings().into_iter().map(|(payload, _)| payload));
        seeds
    }

    #[test]
    fn seeds_are_valid() {
        for seed in seeds() {
            assert!(restore(&seed).is_ok(), "{}", to_hex(&seed));
        }
    }

    #[test]
    fn corrupt_payloads_are_errors_not_panics() {
        // Exhaustive over the small seeds; the random test covers the rest.
        let small = |payload: &Vec<u8>| {
            let decoded_bytes = match restore(payload) {
                Ok(RdbValue::String(s)) => s.len(),
                Ok(RdbValue::List(items) | RdbValue::Set(items)) => {
                    items.iter().map(Vec::len).sum()
                }
                Ok(RdbValue::SortedSet(members)) => members.iter().map(|(m, _)| m.len() + 8).sum(),
                Ok(RdbValue::Hash(pairs)) => pairs.iter().map(|(f, v)| f.len() + v.len()).sum(),
                Err(_) => usize::MAX,
            };
            payload.len() < 500 && decoded_bytes < 4096
        };
        for good in seeds().iter().filter(|s| small(s)) {
            // Without fixing the checksum, any change is caught.
            for cut in 0..good.len() {
                assert!(restore(&good[..cut]).is_err());
            }
            for i in 0..good.len() {
                let mut bad = good.clone();
                bad[i] ^= 0x55;
                assert!(restore(&bad).is_err());
            }
            // With the checksum fixed, the decoder itself must cope.
            let body = &good[..good.len() - 10];
            for cut in 0..body.len() {
                assert!(restore(&with_footer(&body[..cut])).is_err(), "cut {cut}");
            }
            for i in 0..body.len() {
                for byte in [
                    0x00, 0x01, 0x3F, 0x40, 0x7F, 0x80, 0x81, 0xC0, 0xC3, 0xFE, 0xFF,
                ] {
                    let mut bad = body.to_vec();
                    bad[i] = byte;
                    let _ = restore(&with_footer(&bad));
                    bad[i] = body[i] ^ byte;
                    let _ = restore(&with_footer(&bad));
                }
            }
        }
    }

    #[test]
    fn random_mutations_with_valid_checksums_never_panic() {
        let seeds = seeds();
        let mut g = Gen(7);
        for _ in 0..20_000 {
            let seed = &seeds[g.below(seeds.len() as u64) as usize];
            let mut body = seed[..seed.len() - 10].to_vec();
            for _ in 0..1 + g.below(4) {
                let at = g.below(body.len() as u64) as usize;
                match g.below(4) {
                    0 => body[at] = g.next() as u8,
                    1 => body[at] ^= 1 << g.below(8),
                    2 => {
                        body.remove(at);
                    }
                    _ => body.insert(at, g.next() as u8),
                }
                if body.is_empty() {
                    break;
                }
            }
            if let Ok(value) = restore(&with_footer(&body)) {
                // Whatever decodes must survive a round trip.
                assert!(restore(&dump(&value)).is_ok());
            }
        }
    }

    #[test]
    fn lzf_round_trips_and_edges() {
        let mut g = Gen(99);
        for n in [1usize, 2, 3, 4, 5, 31, 32, 33, 264, 265, 8193, 70_000] {
            for alphabet in [1u64, 2, 4, 256] {
                let input: Vec<u8> = (0..n).map(|_| g.below(alphabet) as u8).collect();
                if let Some(c) = lzf_compress(&input, n + 64) {
                    assert_eq!(lzf_decompress(&c, n as u64), Ok(input.clone()));
                }
            }
        }
        assert_eq!(lzf_compress(b"", 10), None);
        assert_eq!(lzf_compress(b"abcdef", 0), None);
        // Back reference before the start.
        assert!(lzf_decompress(&[0xE0, 0xFF, 0x00], 10).is_err());
        assert!(lzf_decompress(&[0x00, b'a', 0x20, 0x01], 4).is_err());
        // Literal run past the input.
        assert!(lzf_decompress(&[0x05, b'a'], 6).is_err());
        // Truncated back reference.
        assert!(lzf_decompress(&[0x00, b'a', 0xE0], 10).is_err());
        // Output longer or shorter than announced.
        assert!(lzf_decompress(&[0x00, b'a', 0x20, 0x00], 2).is_err());
        assert!(lzf_decompress(&[0x00, b'a', 0x20, 0x00], 5).is_err());
        assert_eq!(
            lzf_decompress(&[0x00, b'a', 0x20, 0x00], 4),
            Ok(b"aaaa".to_vec())
        );
        // An absurd announced length allocates nothing up front.
        assert!(lzf_decompress(&[0x00, b'a'], u64::MAX).is_err());
    }

    #[test]
    fn scores_are_written_like_redis_7_0_d2string() {
        // Checked against the listpack bytes of redis-server 7.0.15 DUMPs.
        let cases: &[(f64, &str)] = &[
            (0.1, "0.10000000000000001"),
            (-0.0, "0"),
            (1e300, "1.0000000000000001e+300"),
            (1e-5, "1.0000000000000001e-05"),
            (0.0001, "0.0001"),
            (1.5, "1.5"),
            (12345.678, "12345.678"),
            (2.5e-310, "2.5000000000000171e-310"),
            (1e17, "100000000000000000"),
            (4_611_686_018_427_387_904.0, "4611686018427387904"),
            (4_611_686_018_427_388_928.0, "4.6116860184273889e+18"),
            (-4_611_686_018_427_387_904.0, "-4611686018427387904"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (score, text) in cases {
            assert_eq!(
                String::from_utf8(score_text(*score)).unwrap(),
                *text,
                "{score}"
            );
        }
    }

    /// Only what `string2ll` reads (the canonical form of an i64) is
    /// written in the integer encoding; anything else stays text.
    #[test]
    fn canonical_integers_follow_string2ll() {
        let encoded = |value: &[u8]| {
            let mut out = Vec::new();
            write_string(&mut out, value);
            out
        };
        assert_eq!(encoded(b"0"), [0xC0 | ENC_INT8, 0]);
        assert_eq!(encoded(b"-1"), [0xC0 | ENC_INT8, 0xFF]);
        assert_eq!(encoded(b"300"), [0xC0 | ENC_INT16, 0x2C, 0x01]);
        assert_eq!(
            encoded(b"-2147483648"),
            [0xC0 | ENC_INT32, 0x00, 0x00, 0x00, 0x80]
        );
        // Canonical, but wider than 32 bits: raw.
        assert_eq!(encoded(b"2147483648"), b"\x0a2147483648");
        for bad in ["-", "-0", "00", "01", "+1", " 1", "1 ", "1.0", "0x1"] {
            let mut raw = vec![bad.len() as u8];
            raw.extend_from_slice(bad.as_bytes());
            assert_eq!(encoded(bad.as_bytes()), raw, "{bad}");
        }
    }
}
