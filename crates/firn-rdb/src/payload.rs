//! The DUMP/RESTORE payload: one object (see `object`), then the RDB
//! version (2 bytes LE, 10 for Redis 7.0) and a CRC64 (Jones polynomial, as
//! Redis computes it; 8 bytes LE) over everything before it. FUNCTION
//! DUMP's payload (`function_payload`) shares the footer.

use crc::{Crc, CRC_64_REDIS};

use crate::encoding::Reader;
use crate::object::{read_object, write_object};
use crate::stream::{write_stream, NodeLimits};
use crate::{RdbError, RdbValue, StreamValue};

pub const RDB_VERSION: u16 = 10;
/// A static, not a const: an RDB file's reader keeps a digest of it.
pub(crate) static CRC64: Crc<u64> = Crc::<u64>::new(&CRC_64_REDIS);

/// Serialises a value as redis-server 7.0 DUMP does. Collections must be
/// non-empty and set, hash and sorted set members distinct, and a stream
/// consistent (see [`StreamValue`]), as in any Redis value; a payload
/// breaking that is refused by `restore`.
pub fn dump(value: &RdbValue) -> Vec<u8> {
    dump_as(value, None)
}

/// [`dump`] in the encoding the server holds the value in: `Some(true)`
/// for the compact one (listpack, intset), `Some(false)` for the big one
/// (hashtable, skiplist), `None` to decide from the contents under Redis's
/// default thresholds. A set that is not all integers is never an intset.
/// Strings, lists and streams have one encoding each.
pub fn dump_as(value: &RdbValue, compact: Option<bool>) -> Vec<u8> {
    let mut out = Vec::new();
    write_object(&mut out, value, compact);
    append_footer(&mut out);
    out
}

/// [`dump`] of a stream whose nodes XADD split under the given
/// `stream-node-max-entries` and `stream-node-max-bytes` (0: no limit);
/// `dump` uses Redis's defaults, [`STREAM_NODE_MAX_ENTRIES`](crate::STREAM_NODE_MAX_ENTRIES)
/// and [`STREAM_NODE_MAX_BYTES`](crate::STREAM_NODE_MAX_BYTES).
pub fn dump_stream_with(
    stream: &StreamValue,
    node_max_entries: u64,
    node_max_bytes: u64,
) -> Vec<u8> {
    let mut out = Vec::new();
    let limits = NodeLimits {
        max_entries: node_max_entries,
        max_bytes: node_max_bytes,
    };
    write_stream(&mut out, stream, limits);
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
