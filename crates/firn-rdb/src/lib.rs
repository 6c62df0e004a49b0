//! Redis's RDB codec for the DUMP/RESTORE payload: one RDB object (type
//! byte + encoding), the RDB version (2 bytes LE, 10 for Redis 7.0) and a
//! CRC64 (Jones polynomial, as Redis computes it; 8 bytes LE) over
//! everything before it; and FUNCTION DUMP/RESTORE's payload, the same
//! footer after the libraries' code; and whole RDB files, read entry by
//! entry from any `std::io::Read`. A codec: no storage, no I/O of its own;
//! it depends on no Firn crate but `firn-prims` (`string2ll`, `%.17g`),
//! and firn-server is its user (DUMP, RESTORE, FUNCTION DUMP/RESTORE,
//! `score_text` for replies that show a listpack score, and the RDB
//! import).
//!
//! The modules follow the format from the outside in:
//! - `file`: an RDB file ([`RdbFileReader`]): header, opcodes, keys,
//!   function libraries and the CRC64 at the end; each object is handed
//!   to `object`, as RESTORE's payload is;
//! - `payload`: the DUMP envelope (object, version, CRC64): [`dump`],
//!   [`restore`], and the footer FUNCTION DUMP shares;
//! - `function_payload`: FUNCTION DUMP/RESTORE's libraries;
//! - `object`: each type's encodings, written and read, with `stream`
//!   for streams (the value types, [`StreamValue`], are there too);
//! - `listpack`, `ziplist` (with zipmap), `intset`: the embedded blobs,
//!   with `blob` for what they share;
//! - `encoding`: lengths, strings and doubles, and the reader over them;
//! - `lzf`: the compression of long strings.
//!
//! Writing follows redis-server 7.0 with its default configuration, unless
//! the caller names the encoding the value is held in ([`dump_as`]: the
//! server's configured thresholds decided it):
//! - strings: integer encoding for canonical integers of up to 11 characters
//!   that fit in 32 bits, LZF (liblzf 3.6 with Redis's settings, reproduced
//!   in `lzf`) for values longer than 20 bytes when that saves at least 4 bytes,
//!   raw otherwise. Byte-identical to Redis.
//! - lists: quicklist 2 of listpack nodes, split at 8 KB as `RPUSH` splits
//!   them (`list-max-listpack-size -2`).
//! - sets: an intset for up to 512 canonical integers, else a plain set.
//! - sorted sets: a listpack for up to 128 members of at most 64 bytes,
//!   else the binary-double skiplist form, highest score first.
//! - hashes: a listpack for up to 512 pairs of at most 64 bytes, else plain.
//! - streams: type 19 (RDB_TYPE_STREAM_LISTPACKS_2), the entries in
//!   listpack nodes split as XADD splits them under `stream-node-max-entries`
//!   100 and `stream-node-max-bytes` 4096 (other limits: [`dump_stream_with`]).
//!
//! Checked against redis-server 7.0.15, the output is byte-identical for
//! strings, and for collections whenever the members come in the order
//! Redis holds them: a list built by RPUSH, a hash listpack in insertion
//! order, a plain set or hash in Redis's (seeded, unknowable) hash-table
//! order. Intsets and sorted sets are sorted here, so they always match.
//! A Redis value whose encoding does not follow the thresholds (a hash
//! that grew past them and shrank, a list built by LPUSH or LINSERT) is
//! dumped differently by Redis; both forms restore in either server.
//! Streams are byte-identical unless Redis's holds tombstones: entries
//! XDEL or an exact XTRIM marked deleted inside a node, which the decoded
//! value does not keep (groups, consumers and PELs are sorted here).
//!
//! Reading accepts every encoding Redis 7.0 writes or still loads for these
//! types: string (raw, int8/16/32, LZF), list (plain, ziplist, quicklist of
//! ziplists, quicklist 2), set (plain, intset), sorted set (plain with text
//! or binary scores, ziplist, listpack), hash (plain, zipmap, ziplist,
//! listpack), stream (types 15 and 19, and 21 of Redis 7.2, which Redis 7.0
//! does not know). Every length and offset in a payload is untrusted: all are
//! checked against the bytes actually present, and preallocation never
//! exceeds what the remaining input could hold. The embedded blobs
//! (listpack, ziplist, intset, zipmap) are always validated in full - the
//! equivalent of Redis's `sanitize-dump-payload yes` - so a payload with a
//! malformed blob, duplicate set/hash/zset members, a NaN score or an empty
//! collection is refused (Redis 7.0 by default refuses only some of those);
//! so is a stream whose IDs, counts or PELs do not agree (see `stream`).
//! Like Redis, bytes between the object and the footer are ignored.

mod blob;
mod encoding;
mod error;
mod file;
#[cfg(test)]
mod file_tests;
pub mod function_payload;
mod intset;
mod listpack;
mod lzf;
mod object;
mod payload;
mod stream;
#[cfg(test)]
mod stream_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod xorshift;
mod ziplist;

pub use encoding::{read_length_at, read_string_at, write_string};
pub use error::RdbError;
pub use file::{
    RawEntry, RawKey, RdbEntry, RdbFileError, RdbFileReader, RdbKey, RDB_FILE_VERSION_MAX,
};
pub use listpack::score_text;
pub use payload::{
    append_footer, dump, dump_as, dump_stream_with, restore, verify_footer, RDB_VERSION,
};
pub use stream::{
    PendingEntry, StreamConsumer, StreamFields, StreamGroup, StreamId, StreamValue,
    STREAM_NODE_MAX_BYTES, STREAM_NODE_MAX_ENTRIES,
};

/// A decoded value. Set and hash members keep the payload's order; sorted
/// set members come back ordered by score, then member bytes; a stream's
/// groups, consumers and PELs in Redis's order (names and IDs ascending).
#[derive(Debug, Clone, PartialEq)]
pub enum RdbValue {
    String(Vec<u8>),
    List(Vec<Vec<u8>>),
    Set(Vec<Vec<u8>>),
    SortedSet(Vec<(Vec<u8>, f64)>),
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
    Stream(StreamValue),
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
            RdbValue::Stream(_) => "stream",
        }
    }
}
