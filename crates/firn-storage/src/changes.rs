//! The change stream: every committed batch, in commit order, with the
//! effects its command declared. WATCH, blocking pops, keyspace
//! notifications, client-side caching and replication all consume it; none
//! of them is told about a warm-up run or a batch that was rolled back.
//!
//! Each batch also writes its replay record into the WAL beside its data
//! (`WriteBatch::put_log_data`, see [`encode_log_record`]), so the WAL alone
//! can replay both after a restart or to a replica.

use bytes::Bytes;
use std::sync::Arc;
use tokio::sync::broadcast;

/// Committed batches kept for subscribers that fall behind; a subscriber
/// that lags further learns it (`RecvError::Lagged`) and must resynchronise.
pub const CHANGE_STREAM_CAPACITY: usize = 1 << 16;

/// A replay record read back from the WAL: `(RocksDB sequence, logical
/// db, commands)`.
pub type WalRecord = (u64, u8, Vec<Vec<Bytes>>);

/// Keyspace-notification classes: Redis's `NOTIFY_*` bits (server.h), so
/// a `notify-keyspace-events` mask means the same thing in both.
pub mod notify_class {
    pub const KEYSPACE: u32 = 1 << 0;
    pub const KEYEVENT: u32 = 1 << 1;
    pub const GENERIC: u32 = 1 << 2;
    pub const STRING: u32 = 1 << 3;
    pub const LIST: u32 = 1 << 4;
    pub const SET: u32 = 1 << 5;
    pub const HASH: u32 = 1 << 6;
    pub const ZSET: u32 = 1 << 7;
    pub const EXPIRED: u32 = 1 << 8;
    pub const EVICTED: u32 = 1 << 9;
    pub const STREAM: u32 = 1 << 10;
    pub const KEY_MISS: u32 = 1 << 11;
    pub const LOADED: u32 = 1 << 12;
    pub const MODULE: u32 = 1 << 13;
    pub const NEW: u32 = 1 << 14;
    /// `A`: every class but key-miss and new.
    pub const ALL: u32 =
        GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;
}

/// One keyspace event a committed batch emits, as plain data: published
/// on `__keyspace@<db>__:<key>` and `__keyevent@<db>__:<name>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The logical database of the key.
    pub db: u8,
    /// Its `notify_class` bit.
    pub class: u32,
    pub name: &'static str,
    pub key: Bytes,
}

/// What one committed batch changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Change {
    /// The batch's commit sequence number (strictly increasing).
    pub seq: u64,
    /// The logical database its commands ran in.
    pub db: u8,
    /// The id of the client whose command made the batch (0: the server
    /// itself, e.g. active expiry). Tracking's NOLOOP reads it.
    pub client: u64,
    /// `(physical db, key)` of every key the batch wrote or deleted.
    pub keys: Vec<(u8, Bytes)>,
    /// Physical databases changed as a whole (FLUSHDB/FLUSHALL/SWAPDB).
    pub whole_dbs: Vec<u8>,
    /// Some of `whole_dbs` were flushed (FLUSHDB/FLUSHALL), not only
    /// swapped: tracking invalidates everything for a flush alone.
    pub flushed: bool,
    /// The commands a replica replays (an EX becomes an absolute PXAT, a
    /// lazy expiry a DEL, ...), each by its name and, when short, its
    /// second word: enough to find the command's declaration, a
    /// subcommand's included (`XGROUP SETID`). Never the values: the whole
    /// replay form is in the WAL beside the data (`encode_log_record`), and
    /// a subscriber that lags holds up to [`CHANGE_STREAM_CAPACITY`]
    /// records, which must stay small whatever the values written.
    pub command_heads: Vec<Vec<Bytes>>,
    /// Keyspace events, in the order Redis emits them (recorded only
    /// while `notify-keyspace-events` enables their class).
    pub events: Vec<Event>,
}

/// The longest second word a command head keeps (a subcommand is shorter).
const HEAD_WORD_BYTES: usize = 32;

pub(crate) type ChangeSender = broadcast::Sender<Arc<Change>>;
pub type ChangeReceiver = broadcast::Receiver<Arc<Change>>;

pub(crate) fn channel() -> ChangeSender {
    broadcast::channel(CHANGE_STREAM_CAPACITY).0
}

/// The WAL record of a batch: `db:u8` then each command as a RESP array of
/// bulk strings, exactly what a replica would be sent after a SELECT.
/// Built on the writer thread, which bounds write throughput: one
/// allocation per record, no formatting machinery.
/// The heads of a batch's replay commands (see [`Change::command_heads`]).
pub(crate) fn command_heads(commands: &[Vec<Bytes>]) -> Vec<Vec<Bytes>> {
    commands
        .iter()
        .map(|c| {
            let mut head: Vec<Bytes> = c.first().cloned().into_iter().collect();
            if let Some(second) = c.get(1).filter(|a| a.len() <= HEAD_WORD_BYTES) {
                // A copy: a slice would keep the request's buffer alive.
                head.push(Bytes::copy_from_slice(second));
            }
            head
        })
        .collect()
}

pub fn encode_log_record(db: u8, commands: &[Vec<Bytes>]) -> Vec<u8> {
    encode_log_record_with(db, commands, |_, _| None)
}

/// Values shorter than this are written out even where a reference could
/// replace them: a reference costs about as much.
pub(crate) const MIN_REFERENCED_BYTES: usize = 32;

/// [`encode_log_record`] for the WAL, where the batch's writes sit beside
/// the record: an argument that is the value the batch writes for the
/// argument before it (SET's and MSET's key and value), as that key's
/// inline string, is written as a reference to that meta record instead
/// of a second copy: `&<pdb>:<n>\r\n`, the value of the `n`-th put (from
/// 0) of the key's meta record in physical database `pdb` in the same WAL
/// batch. `reference(key, value)` says whether and where.
pub(crate) fn encode_log_record_with(
    db: u8,
    commands: &[Vec<Bytes>],
    mut reference: impl FnMut(&[u8], &[u8]) -> Option<(u8, u32)>,
) -> Vec<u8> {
    let size: usize = commands
        .iter()
        .map(|c| 16 + c.iter().map(|a| a.len() + 16).sum::<usize>())
        .sum();
    let mut out = Vec::with_capacity(1 + size);
    out.push(db);
    for command in commands {
        push_header(&mut out, b'*', command.len());
        for (i, arg) in command.iter().enumerate() {
            let referenced = (i >= 2 && arg.len() >= MIN_REFERENCED_BYTES)
                .then(|| reference(&command[i - 1], arg))
                .flatten();
            if let Some((pdb, n)) = referenced {
                out.push(b'&');
                push_decimal(&mut out, pdb as usize);
                out.push(b':');
                push_decimal(&mut out, n as usize);
                out.extend_from_slice(b"\r\n");
                continue;
            }
            push_header(&mut out, b'$', arg.len());
            out.extend_from_slice(arg);
            out.extend_from_slice(b"\r\n");
        }
    }
    out
}

/// `<tag><n>\r\n` in decimal.
fn push_header(out: &mut Vec<u8>, tag: u8, n: usize) {
    out.push(tag);
    push_decimal(out, n);
    out.extend_from_slice(b"\r\n");
}

/// `n` in decimal.
fn push_decimal(out: &mut Vec<u8>, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Decodes [`encode_log_record`]; `None` if the record is malformed.
pub fn decode_log_record(raw: &[u8]) -> Option<(u8, Vec<Vec<Bytes>>)> {
    decode_log_record_with(raw, |_, _, _| None)
}

/// [`decode_log_record`] of a WAL record, whose references
/// (`encode_log_record_with`) `resolve(pdb, key, n)` turns back into the
/// values they name; `None` if one cannot be resolved.
pub(crate) fn decode_log_record_with(
    raw: &[u8],
    mut resolve: impl FnMut(u8, &[u8], u32) -> Option<Bytes>,
) -> Option<(u8, Vec<Vec<Bytes>>)> {
    let (&db, mut rest) = raw.split_first()?;
    let mut commands = Vec::new();
    while !rest.is_empty() {
        let (count, after) = read_header(rest, b'*')?;
        rest = after;
        let mut command: Vec<Bytes> = Vec::with_capacity(count.min(1024));
        for _ in 0..count {
            if rest.first() == Some(&b'&') {
                let end = rest.windows(2).position(|w| w == b"\r\n")?;
                let text = std::str::from_utf8(&rest[1..end]).ok()?;
                let (pdb, n) = text.split_once(':')?;
                let key = command.last()?;
                command.push(resolve(pdb.parse().ok()?, key, n.parse().ok()?)?);
                rest = &rest[end + 2..];
                continue;
            }
            let (len, after) = read_header(rest, b'$')?;
            let arg = after.get(..len)?;
            if after.get(len..len + 2)? != b"\r\n" {
                return None;
            }
            command.push(Bytes::copy_from_slice(arg));
            rest = &after[len + 2..];
        }
        commands.push(command);
    }
    Some((db, commands))
}

fn read_header(raw: &[u8], tag: u8) -> Option<(usize, &[u8])> {
    if raw.first() != Some(&tag) {
        return None;
    }
    let end = raw.windows(2).position(|w| w == b"\r\n")?;
    let n = std::str::from_utf8(raw.get(1..end)?).ok()?.parse().ok()?;
    Some((n, &raw[end + 2..]))
}

/// What a RocksDB `WriteBatch` holds that Firn reads back: its log-data
/// blobs and its puts `(column family id, key, value)`, in batch order.
#[derive(Default)]
pub struct BatchContents<'a> {
    pub log_data: Vec<&'a [u8]>,
    pub puts: Vec<(u32, &'a [u8], &'a [u8])>,
}

/// The contents of a `WriteBatch` in its serialized form
/// (`WriteBatch::data`, or a batch read back from the WAL). The format is
/// RocksDB's (db/write_batch.cc): an 8-byte sequence, a 4-byte count, then
/// tagged records. Only the record kinds Firn writes are understood; any
/// other tag is reported as an error rather than guessed at.
pub fn batch_contents(data: &[u8]) -> Result<BatchContents<'_>, &'static str> {
    const DELETION: u8 = 0x0;
    const VALUE: u8 = 0x1;
    const MERGE: u8 = 0x2;
    const LOG_DATA: u8 = 0x3;
    const CF_DELETION: u8 = 0x4;
    const CF_VALUE: u8 = 0x5;
    const CF_MERGE: u8 = 0x6;
    const CF_RANGE_DELETION: u8 = 0xE;
    const RANGE_DELETION: u8 = 0xF;
    let mut rest = data.get(12..).ok_or("truncated header")?;
    let mut contents = BatchContents::default();
    while let Some((&tag, after)) = rest.split_first() {
        rest = after;
        let mut cf = 0;
        if matches!(tag, CF_DELETION | CF_VALUE | CF_MERGE | CF_RANGE_DELETION) {
            (cf, rest) = read_varint(rest)?;
        }
        let strings = match tag {
            DELETION | CF_DELETION | LOG_DATA => 1,
            VALUE | CF_VALUE | MERGE | CF_MERGE | RANGE_DELETION | CF_RANGE_DELETION => 2,
            _ => return Err("unexpected record type"),
        };
        let mut parts: [&[u8]; 2] = [&[], &[]];
        for part in parts.iter_mut().take(strings) {
            let (len, after) = read_varint(rest)?;
            *part = after.get(..len as usize).ok_or("truncated record")?;
            rest = &after[len as usize..];
        }
        match tag {
            LOG_DATA => contents.log_data.push(parts[0]),
            VALUE | CF_VALUE => contents.puts.push((cf, parts[0], parts[1])),
            _ => {}
        }
    }
    Ok(contents)
}

/// The id RocksDB gives column family `handle`, read from a batch's
/// serialized form (the `rocksdb` crate does not expose it).
pub(crate) fn column_family_id(handle: &rocksdb::ColumnFamily) -> Option<u32> {
    let mut probe = rocksdb::WriteBatch::default();
    probe.put_cf(handle, b"", b"");
    batch_contents(probe.data()).ok()?.puts.first().map(|p| p.0)
}

fn read_varint(raw: &[u8]) -> Result<(u32, &[u8]), &'static str> {
    let mut value: u32 = 0;
    for (i, &byte) in raw.iter().enumerate().take(5) {
        value |= ((byte & 0x7F) as u32) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok((value, &raw[i + 1..]));
        }
    }
    Err("bad varint")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_records_round_trip() {
        let commands = vec![
            vec![Bytes::from("SET"), Bytes::from("k"), Bytes::from("a\r\nb")],
            vec![Bytes::from("DEL"), Bytes::new()],
        ];
        let raw = encode_log_record(3, &commands);
        assert_eq!(decode_log_record(&raw), Some((3, commands)));
        assert_eq!(decode_log_record(&raw[..raw.len() - 1]), None);
        assert_eq!(decode_log_record(&[]), None);
    }

    #[test]
    fn a_referred_value_decodes_from_the_record_it_names() {
        let big = Bytes::from(vec![b'v'; 100]);
        let commands = vec![
            vec![
                Bytes::from("MSET"),
                Bytes::from("a"),
                big.clone(),
                Bytes::from("b"),
                big.clone(),
            ],
            vec![Bytes::from("SET"), Bytes::from("c"), Bytes::from("short")],
        ];
        // `a` is referred to (pdb 2, its second put); `b` is not.
        let raw = encode_log_record_with(1, &commands, |key, _| (key == b"a").then_some((2, 1)));
        // Written out, both values would make it over 250 bytes.
        assert!(raw.len() < 200, "{}", raw.len());
        let resolved = decode_log_record_with(&raw, |pdb, key, n| {
            assert_eq!((pdb, key, n), (2, &b"a"[..], 1));
            Some(big.clone())
        });
        assert_eq!(resolved, Some((1, commands.clone())));
        // A reference that names nothing makes the record malformed.
        assert_eq!(decode_log_record_with(&raw, |_, _, _| None), None);
        assert_eq!(decode_log_record(&raw), None);
        // Without references the two forms are the same bytes.
        assert_eq!(
            encode_log_record_with(1, &commands, |_, _| None),
            encode_log_record(1, &commands)
        );
    }
}
