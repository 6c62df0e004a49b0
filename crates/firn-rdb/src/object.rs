//! One Redis object per type, in the encodings of RDB version 10: what
//! DUMP writes for each type (the choice of encoding follows Redis 7.0's
//! default thresholds) and every encoding RESTORE still reads, down to the
//! zipmaps and ziplists of older versions. Streams have a module of their
//! own (`stream`), and so do the blobs inside (listpack, ziplist, zipmap,
//! intset); `payload` wraps an object in the DUMP footer.

use std::cmp::Ordering;
use std::collections::HashSet;

use crate::blob::{Entry, Pairs};
use crate::encoding::{write_len, write_string, Reader};
use crate::intset::{intset_bytes, intset_values};
use crate::listpack::{listpack_entries, score_text, ListpackWriter};
use crate::stream::{
    read_stream, write_stream, NodeLimits, TYPE_STREAM_LISTPACKS, TYPE_STREAM_LISTPACKS_2,
    TYPE_STREAM_LISTPACKS_3,
};
use crate::ziplist::{ziplist_entries, zipmap_pairs};
use crate::{RdbError, RdbValue};
use firn_prims::string2ll;

// RDB object types (rdb.h).
pub(crate) const TYPE_STRING: u8 = 0;
pub(crate) const TYPE_LIST: u8 = 1;
pub(crate) const TYPE_SET: u8 = 2;
pub(crate) const TYPE_ZSET: u8 = 3;
pub(crate) const TYPE_HASH: u8 = 4;
pub(crate) const TYPE_ZSET_2: u8 = 5;
pub(crate) const TYPE_HASH_ZIPMAP: u8 = 9;
pub(crate) const TYPE_LIST_ZIPLIST: u8 = 10;
pub(crate) const TYPE_SET_INTSET: u8 = 11;
pub(crate) const TYPE_ZSET_ZIPLIST: u8 = 12;
pub(crate) const TYPE_HASH_ZIPLIST: u8 = 13;
pub(crate) const TYPE_LIST_QUICKLIST: u8 = 14;
pub(crate) const TYPE_HASH_LISTPACK: u8 = 16;
pub(crate) const TYPE_ZSET_LISTPACK: u8 = 17;
pub(crate) const TYPE_LIST_QUICKLIST_2: u8 = 18;

// Quicklist 2 node containers.
const QUICKLIST_NODE_PLAIN: u64 = 1;
const QUICKLIST_NODE_PACKED: u64 = 2;

// Redis 7.0 defaults that decide which encoding DUMP writes when the
// caller does not say (`dump_as`).
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

/// Writes the object: its type byte, then its encoding.
pub(crate) fn write_object(out: &mut Vec<u8>, value: &RdbValue, compact: Option<bool>) {
    match value {
        RdbValue::String(bytes) => {
            out.push(TYPE_STRING);
            write_string(out, bytes);
        }
        RdbValue::List(items) => write_list(out, items),
        RdbValue::Set(members) => write_set(out, members, compact),
        RdbValue::SortedSet(members) => write_zset(out, members, compact),
        RdbValue::Hash(pairs) => write_hash(out, pairs, compact),
        RdbValue::Stream(stream) => write_stream(out, stream, NodeLimits::DEFAULT),
    }
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

fn write_set(out: &mut Vec<u8>, members: &[Vec<u8>], compact: Option<bool>) {
    if compact.unwrap_or(members.len() <= SET_MAX_INTSET_ENTRIES) {
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

/// Redis's zset order: by score, then by member bytes.
pub(crate) fn zset_order(a: &(Vec<u8>, f64), b: &(Vec<u8>, f64)) -> Ordering {
    a.1.partial_cmp(&b.1)
        .unwrap_or(Ordering::Equal)
        .then_with(|| a.0.cmp(&b.0))
}

fn write_zset(out: &mut Vec<u8>, members: &[(Vec<u8>, f64)], compact: Option<bool>) {
    let mut sorted: Vec<&(Vec<u8>, f64)> = members.iter().collect();
    sorted.sort_by(|a, b| zset_order(a, b));
    let small = compact.unwrap_or_else(|| {
        members.len() <= ZSET_MAX_LISTPACK_ENTRIES
            && members
                .iter()
                .all(|(m, _)| m.len() <= ZSET_MAX_LISTPACK_VALUE)
    });
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

fn write_hash(out: &mut Vec<u8>, pairs: &[(Vec<u8>, Vec<u8>)], compact: Option<bool>) {
    let small = compact.unwrap_or_else(|| {
        pairs.len() <= HASH_MAX_LISTPACK_ENTRIES
            && pairs.iter().all(|(f, v)| {
                f.len() <= HASH_MAX_LISTPACK_VALUE && v.len() <= HASH_MAX_LISTPACK_VALUE
            })
    });
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

pub(crate) fn read_object(object_type: u8, r: &mut Reader<'_>) -> Result<RdbValue, RdbError> {
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
        TYPE_STREAM_LISTPACKS | TYPE_STREAM_LISTPACKS_2 | TYPE_STREAM_LISTPACKS_3 => {
            Ok(RdbValue::Stream(read_stream(object_type, r)?))
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
