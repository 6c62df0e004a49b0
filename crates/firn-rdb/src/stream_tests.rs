//! Streams end to end, against redis-server 7.0.15 in both directions:
//! `tests/fixtures/redis_streams.txt` holds the DUMPs of streams Redis
//! built (XADD, XDEL, XTRIM, XSETID, groups) with what XINFO STREAM FULL
//! said they held; `tests/fixtures/redis_restored.txt` what Redis made of
//! the payloads Firn writes (`firn_payloads`): its XINFO and its own DUMP
//! after RESTORE. Both files come from `tests/fixtures/redis_streams.py`.
//! Then types 15 and 21, made from the type 19 payloads, payloads that
//! must be refused, and corrupt ones: errors, never a panic.

use crate::encoding::Reader;
use crate::stream::{TYPE_STREAM_LISTPACKS, TYPE_STREAM_LISTPACKS_2, TYPE_STREAM_LISTPACKS_3};
use crate::tests::{hex, to_hex, with_footer};
use crate::xorshift::Gen;
use crate::*;

const REDIS_STREAMS: &str = include_str!("../tests/fixtures/redis_streams.txt");
const REDIS_RESTORED: &str = include_str!("../tests/fixtures/redis_restored.txt");

/// Fixtures whose streams have tombstones (XDEL, or XTRIM inside a node):
/// their decoding drops them, so Firn's dump of it differs from Redis's.
const WITH_TOMBSTONES: &[&str] = &["deleted", "trimmed_exact", "pending_deleted"];

/// One record of a fixture file: a payload, and the stream Redis says it
/// holds.
struct Record {
    label: String,
    payload: Vec<u8>,
    expected: StreamValue,
}

fn records(text: &str) -> Vec<Record> {
    let mut records = Vec::new();
    let mut record: Option<Record> = None;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut words = line.split(' ');
        let kind = words.next().unwrap();
        let words: Vec<&str> = words.collect();
        if kind == "stream" {
            record = Some(Record {
                label: words[0].to_string(),
                payload: Vec::new(),
                expected: StreamValue::default(),
            });
            continue;
        }
        if kind == "end" {
            records.push(record.take().unwrap());
            continue;
        }
        let record = record.as_mut().unwrap();
        let stream = &mut record.expected;
        match kind {
            "payload" => record.payload = hex(words[0]),
            "meta" => {
                stream.length = words[0].parse().unwrap();
                stream.last_id = id(words[1]);
                stream.first_id = id(words[2]);
                stream.max_deleted_id = id(words[3]);
                stream.entries_added = words[4].parse().unwrap();
            }
            "entry" => {
                let items: Vec<Vec<u8>> = words[1..].iter().map(|w| xhex(w)).collect();
                let fields = items
                    .chunks(2)
                    .map(|pair| (pair[0].clone(), pair[1].clone()))
                    .collect();
                stream.entries.push((id(words[0]), fields));
            }
            "group" => stream.groups.push(StreamGroup {
                name: xhex(words[0]),
                last_id: id(words[1]),
                entries_read: words[2].parse().ok(),
                pending: Vec::new(),
                consumers: Vec::new(),
            }),
            "pending" => stream
                .groups
                .last_mut()
                .unwrap()
                .pending
                .push(PendingEntry {
                    id: id(words[0]),
                    delivery_time_ms: words[1].parse::<i64>().unwrap() as u64,
                    delivery_count: words[2].parse().unwrap(),
                    consumer: xhex(words[3]),
                }),
            "consumer" => stream
                .groups
                .last_mut()
                .unwrap()
                .consumers
                .push(StreamConsumer {
                    name: xhex(words[0]),
                    seen_time_ms: words[1].parse::<i64>().unwrap() as u64,
                    pending: words[2..]
                        .iter()
                        .filter(|w| !w.is_empty())
                        .map(|w| id(w))
                        .collect(),
                }),
            _ => panic!("unknown fixture line {line}"),
        }
    }
    records
}

fn id(text: &str) -> StreamId {
    let (ms, seq) = text.split_once('-').unwrap();
    StreamId {
        ms: ms.parse().unwrap(),
        seq: seq.parse().unwrap(),
    }
}

/// "x" + hex, so that the empty string is "x".
fn xhex(word: &str) -> Vec<u8> {
    hex(word.strip_prefix('x').unwrap())
}

/// `dump` of a stream value.
fn dump_stream(stream: &StreamValue) -> Vec<u8> {
    dump(&RdbValue::Stream(stream.clone()))
}

fn stream_of(payload: &[u8]) -> StreamValue {
    match restore(payload) {
        Ok(RdbValue::Stream(stream)) => stream,
        other => panic!("not a stream: {other:?}"),
    }
}

/// `assert_eq!` for streams, which says where they differ instead of
/// printing both.
fn assert_same(got: &StreamValue, want: &StreamValue, label: &str) {
    if got == want {
        return;
    }
    let entry = (0..got.entries.len().max(want.entries.len()))
        .find(|&i| got.entries.get(i) != want.entries.get(i))
        .map(|i| (i, got.entries.get(i), want.entries.get(i)));
    let meta = |s: &StreamValue| {
        (
            s.length,
            s.last_id,
            s.first_id,
            s.max_deleted_id,
            s.entries_added,
        )
    };
    panic!(
        "{label}: streams differ\n metadata {:?} vs {:?}\n first other entry {entry:?}\n groups {:?}\n vs {:?}",
        meta(got),
        meta(want),
        got.groups,
        want.groups
    );
}

#[test]
fn redis_dumps_decode_to_what_xinfo_shows() {
    let records = records(REDIS_STREAMS);
    assert_eq!(records.len(), 9);
    for record in &records {
        assert_eq!(record.payload[0], TYPE_STREAM_LISTPACKS_2);
        let decoded = stream_of(&record.payload);
        assert_same(&decoded, &record.expected, &record.label);
        assert_eq!(decoded.length, decoded.entries.len() as u64);
    }
}

#[test]
fn dumps_match_redis_unless_it_kept_tombstones() {
    for record in records(REDIS_STREAMS) {
        let payload = dump_stream(&record.expected);
        let label = &record.label;
        if WITH_TOMBSTONES.contains(&label.as_str()) {
            assert_ne!(payload, record.payload, "{label}");
            assert!(payload.len() < record.payload.len(), "{label}");
        } else {
            assert_eq!(to_hex(&payload), to_hex(&record.payload), "{label}");
        }
        assert_same(&stream_of(&payload), &record.expected, label);
    }
}

#[test]
fn fixtures_cover_what_they_claim() {
    let records = records(REDIS_STREAMS);
    let plain = &records[0].expected;
    // Several nodes, split by entry count and by bytes: the byte-identical
    // dump above checks that the split follows streamAppendItem.
    let nodes = node_count(&records[0].payload);
    assert!(nodes > plain.entries.len() / 100 + 1, "{nodes} nodes");
    let master_fields: Vec<&Vec<u8>> = plain.entries[0].1.iter().map(|(f, _)| f).collect();
    assert!(plain.entries.iter().any(|(_, fields)| fields
        .iter()
        .map(|(f, _)| f)
        .ne(master_fields.iter().copied())));
    let deleted = &records[2].expected;
    assert_eq!(records[2].label, "deleted");
    assert!(deleted.max_deleted_id > deleted.first_id);
    let empty = &records[5].expected;
    assert_eq!((empty.length, empty.first_id), (0, StreamId::default()));
    let groups = &records[1].expected.groups;
    assert!(groups.iter().any(|g| g.entries_read.is_none()));
    assert!(groups.iter().any(|g| g.consumers.is_empty()));
    assert!(groups
        .iter()
        .any(|g| g.pending.iter().any(|p| p.delivery_count > 1)));
}

/// Splits a type 19 object into its parts, so that tests can rewrite it
/// as type 15 or 21: (start, end) byte ranges of the body.
struct Layout {
    /// The metadata Redis 7.0 added: first ID, max deleted ID, entries
    /// added.
    v2_metadata: (usize, usize),
    /// Each group's entries read.
    entries_read: Vec<(usize, usize)>,
    /// Where each consumer's seen time ends (type 21 adds the active time
    /// there).
    seen_time_ends: Vec<usize>,
}

fn layout(body: &[u8]) -> Layout {
    let mut r = Reader { data: body, pos: 1 };
    let nodes = r.count().unwrap();
    for _ in 0..nodes * 2 {
        r.string().unwrap();
    }
    for _ in 0..3 {
        r.plain_length().unwrap(); // length, last id
    }
    let start = r.pos;
    for _ in 0..5 {
        r.plain_length().unwrap();
    }
    let mut layout = Layout {
        v2_metadata: (start, r.pos),
        entries_read: Vec::new(),
        seen_time_ends: Vec::new(),
    };
    for _ in 0..r.count().unwrap() {
        r.string().unwrap();
        r.plain_length().unwrap();
        r.plain_length().unwrap();
        let start = r.pos;
        r.plain_length().unwrap();
        layout.entries_read.push((start, r.pos));
        for _ in 0..r.count().unwrap() {
            r.take(16 + 8).unwrap();
            r.plain_length().unwrap();
        }
        for _ in 0..r.count().unwrap() {
            r.string().unwrap();
            r.take(8).unwrap();
            layout.seen_time_ends.push(r.pos);
            let ids = r.plain_length().unwrap();
            r.take(16 * ids).unwrap();
        }
    }
    assert_eq!(r.pos, body.len());
    layout
}

/// A type 19 payload rewritten as type 15: without the metadata and the
/// entries read Redis 7.0 added.
fn as_type_15(payload: &[u8]) -> Vec<u8> {
    let body = &payload[..payload.len() - 10];
    let layout = layout(body);
    let mut cuts = vec![layout.v2_metadata];
    cuts.extend(layout.entries_read);
    let mut out = vec![TYPE_STREAM_LISTPACKS];
    let mut pos = 1;
    for (start, end) in cuts {
        out.extend_from_slice(&body[pos..start]);
        pos = end;
    }
    out.extend_from_slice(&body[pos..]);
    with_footer(&out)
}

/// A type 19 payload rewritten as type 21: each consumer gets an active
/// time, here its seen time plus one.
fn as_type_21(payload: &[u8]) -> Vec<u8> {
    let body = &payload[..payload.len() - 10];
    let layout = layout(body);
    let mut out = vec![TYPE_STREAM_LISTPACKS_3];
    let mut pos = 1;
    for end in layout.seen_time_ends {
        out.extend_from_slice(&body[pos..end]);
        let seen = u64::from_le_bytes(body[end - 8..end].try_into().unwrap());
        out.extend_from_slice(&(seen + 1).to_le_bytes());
        pos = end;
    }
    out.extend_from_slice(&body[pos..]);
    with_footer(&out)
}

/// Every stream payload of the fixtures, as types 19, 15 and 21 (the RDB
/// file tests read each inside a file).
pub(crate) fn stream_seeds() -> Vec<Vec<u8>> {
    records(REDIS_STREAMS)
        .into_iter()
        .flat_map(|record| {
            let payload = record.payload;
            [as_type_15(&payload), as_type_21(&payload), payload]
        })
        .collect()
}

#[test]
fn type_21_is_type_19_with_active_times() {
    for record in records(REDIS_STREAMS) {
        let payload = as_type_21(&record.payload);
        assert_same(&stream_of(&payload), &record.expected, &record.label);
    }
}

#[test]
fn type_15_gets_the_metadata_redis_7_0_derives() {
    for record in records(REDIS_STREAMS) {
        let decoded = stream_of(&as_type_15(&record.payload));
        let expected = &record.expected;
        let label = &record.label;
        assert_eq!(decoded.entries, expected.entries, "{label}");
        assert_eq!(decoded.last_id, expected.last_id, "{label}");
        assert_eq!(decoded.max_deleted_id, StreamId::default(), "{label}");
        assert_eq!(decoded.entries_added, expected.length, "{label}");
        let first_id = expected.entries.first().map_or(StreamId::MAX, |e| e.0);
        assert_eq!(decoded.first_id, first_id, "{label}");
        for (got, want) in decoded.groups.iter().zip(&expected.groups) {
            assert_eq!(got.pending, want.pending, "{label}");
            assert_eq!(got.consumers, want.consumers, "{label}");
        }
    }
    // The entries read Redis estimates (checked against redis-server
    // 7.0.15 by `firn_payloads_restore_in_redis_7_0`): for the group at
    // the last ID, the length; at the first ID, 1; before it, 0; between
    // first and last, unknown.
    let groups = stream_of(&as_type_15(&records(REDIS_STREAMS)[1].payload)).groups;
    let read: Vec<(&[u8], Option<u64>)> = groups
        .iter()
        .map(|g| (g.name.as_slice(), g.entries_read))
        .collect();
    assert_eq!(
        read,
        [
            (&b"123"[..], None),
            (b"g0", Some(40)),
            (b"g1", None),
            (b"g2", None)
        ]
    );
}

/// Streams no Redis command makes in this shape, for the edges of the
/// encoding: IDs whose difference to the master overflows an i64 or has a
/// seq below the master's, integers of every listpack width, a value over
/// 4 KB, names the RDB writes as integers or LZF, extreme counters.
fn synthetic_streams() -> Vec<(&'static str, StreamValue)> {
    let pair = |f: &str, v: &[u8]| (f.as_bytes().to_vec(), v.to_vec());
    let mut g = Gen(99);
    let mut entries = vec![
        (StreamId { ms: 1, seq: 10 }, vec![pair("a", b"1")]),
        (
            StreamId { ms: 2, seq: 0 },
            vec![pair("a", b"-9223372036854775808")],
        ),
        (StreamId { ms: 2, seq: 1 }, vec![pair("a", &[0xFF; 4100])]),
        (
            StreamId { ms: 2, seq: 2 },
            vec![pair("b", b""), pair("a", b"")],
        ),
    ];
    for i in 0..120u64 {
        // 0, then every width up to 64 bits, both signs.
        let integer = (i as i64 - 60).signum() * (1i64 << (i % 63)) / 3;
        let value: Vec<u8> = (0..g.below(30)).map(|_| b'a' + g.below(3) as u8).collect();
        entries.push((
            StreamId {
                ms: 3 + i * (1 << 40),
                seq: g.below(1 << 40),
            },
            vec![pair("a", &value), pair("n", integer.to_string().as_bytes())],
        ));
    }
    entries.push((
        StreamId {
            ms: u64::MAX - 1,
            seq: u64::MAX,
        },
        vec![pair("a", b"near the end")],
    ));
    let last_id = StreamId {
        ms: u64::MAX,
        seq: 7,
    };
    let consumer = |name: &[u8], pending: Vec<StreamId>| StreamConsumer {
        name: name.to_vec(),
        seen_time_ms: 1_700_000_000_000,
        pending,
    };
    let pending = |id: StreamId, consumer: &[u8]| PendingEntry {
        id,
        delivery_time_ms: 1_600_000_000_000,
        delivery_count: u64::MAX >> 1,
        consumer: consumer.to_vec(),
    };
    let groups = vec![
        StreamGroup {
            name: b"12345".to_vec(),
            last_id,
            entries_read: Some(u64::MAX >> 2),
            pending: vec![pending(entries[1].0, b"c"), pending(last_id, b"c")],
            consumers: vec![consumer(b"c", vec![entries[1].0, last_id])],
        },
        StreamGroup {
            name: vec![b'g'; 100],
            last_id: StreamId::default(),
            entries_read: None,
            pending: Vec::new(),
            consumers: vec![consumer(b"", Vec::new()), consumer(&[b'z'; 40], Vec::new())],
        },
    ];
    let length = entries.len() as u64;
    vec![
        (
            "edges",
            StreamValue {
                first_id: entries[0].0,
                entries,
                length,
                last_id,
                max_deleted_id: StreamId { ms: 0, seq: 5 },
                entries_added: length + 3,
                groups,
            },
        ),
        (
            "single",
            StreamValue {
                entries: vec![(StreamId { ms: 7, seq: 0 }, vec![pair("f", b"v")])],
                length: 1,
                last_id: StreamId { ms: 7, seq: 0 },
                first_id: StreamId { ms: 7, seq: 0 },
                entries_added: 1,
                ..StreamValue::default()
            },
        ),
    ]
}

/// The payloads Firn writes that `redis_restored.txt` shows Redis's view
/// of, by label: dumps of streams Redis kept tombstones in, type 15
/// conversions (Redis derives the metadata), other node limits, and the
/// synthetic streams.
fn firn_payloads() -> Vec<(String, Vec<u8>)> {
    let mut payloads = Vec::new();
    for record in records(REDIS_STREAMS) {
        let label = record.label.as_str();
        if ["deleted", "pending_deleted"].contains(&label) {
            payloads.push((format!("{label}/redump"), dump_stream(&record.expected)));
        }
        if ["groups", "pending_deleted", "empty", "setid", "mkstream"].contains(&label) {
            payloads.push((format!("{label}/type15"), as_type_15(&record.payload)));
        }
        if label == "groups" {
            let small = dump_stream_with(&record.expected, 7, 300);
            payloads.push((format!("{label}/small_nodes"), small));
        }
    }
    for (label, stream) in synthetic_streams() {
        payloads.push((label.to_string(), dump_stream(&stream)));
        let small = dump_stream_with(&stream, 2, 0);
        payloads.push((format!("{label}/small_nodes"), small));
        let unlimited = dump_stream_with(&stream, 0, 0);
        payloads.push((format!("{label}/unlimited"), unlimited));
    }
    payloads
}

/// Writes `firn_payloads` as "label hex" lines for `redis_streams.py
/// check`, which makes `redis_restored.txt`:
/// `FIRN_STREAM_PAYLOADS=/tmp/p.txt cargo test -p firn-rdb -- --ignored`.
#[test]
#[ignore]
fn write_firn_payloads() {
    let path = std::env::var("FIRN_STREAM_PAYLOADS").expect("FIRN_STREAM_PAYLOADS");
    let lines: Vec<String> = firn_payloads()
        .iter()
        .map(|(label, payload)| format!("{label} {}\n", to_hex(payload)))
        .collect();
    std::fs::write(path, lines.concat()).unwrap();
}

#[test]
fn firn_payloads_restore_in_redis_7_0() {
    let restored = records(REDIS_RESTORED);
    let payloads = firn_payloads();
    assert_eq!(restored.len(), payloads.len());
    for ((label, payload), redis) in payloads.iter().zip(&restored) {
        assert_eq!(*label, redis.label);
        // Redis took the stream as Firn decodes it, and its own DUMP is the
        // payload it restored (RESTORE keeps the listpacks as they are) or,
        // for type 15 without tombstones, Firn's dump of what Firn derived.
        let decoded = stream_of(payload);
        assert_same(&decoded, &redis.expected, label);
        let base = label.split('/').next().unwrap();
        if payload[0] == TYPE_STREAM_LISTPACKS_2 {
            assert_eq!(to_hex(payload), to_hex(&redis.payload), "{label}");
        } else if !WITH_TOMBSTONES.contains(&base) {
            let firn = dump_stream(&decoded);
            assert_eq!(to_hex(&firn), to_hex(&redis.payload), "{label}");
        }
    }
}

/// The number of nodes a stream payload holds.
fn node_count(payload: &[u8]) -> usize {
    Reader {
        data: payload,
        pos: 1,
    }
    .count()
    .unwrap()
}

#[test]
fn synthetic_streams_round_trip() {
    for (label, stream) in synthetic_streams() {
        let entries = stream.entries.len();
        let limits = [(100, 4096), (1, 1), (2, 0), (0, 1), (0, 0)];
        let nodes = [
            None,
            Some(entries),
            Some(entries.div_ceil(2)),
            Some(entries),
            Some(1),
        ];
        for ((max_entries, max_bytes), nodes) in limits.into_iter().zip(nodes) {
            let payload = dump_stream_with(&stream, max_entries, max_bytes);
            assert_same(&stream_of(&payload), &stream, label);
            if let Some(nodes) = nodes {
                assert_eq!(
                    node_count(&payload),
                    nodes,
                    "{label} {max_entries} {max_bytes}"
                );
            }
        }
        assert_eq!(dump_stream_with(&stream, 100, 4096), dump_stream(&stream));
    }
}

#[test]
fn dump_sorts_groups_consumers_and_pels() {
    let mut stream = records(REDIS_STREAMS)[1].expected.clone();
    let payload = dump_stream(&stream);
    stream.groups.reverse();
    for group in &mut stream.groups {
        group.pending.reverse();
        group.consumers.reverse();
        for consumer in &mut group.consumers {
            consumer.pending.reverse();
        }
    }
    assert_eq!(dump_stream(&stream), payload);
}

/// A small stream object, hand-written: one node with the given master
/// fields and entries, then `tail` (metadata and groups).
fn one_node_stream(master_id: [u8; 16], listpack: &[Vec<u8>], tail: &[u8]) -> Vec<u8> {
    let mut writer = crate::listpack::ListpackWriter::new();
    for element in listpack {
        writer.push(element);
    }
    let listpack = writer.finish();
    let mut body = vec![TYPE_STREAM_LISTPACKS_2, 1, 16];
    body.extend_from_slice(&master_id);
    body.push(listpack.len() as u8);
    body.extend_from_slice(&listpack);
    body.extend_from_slice(tail);
    with_footer(&body)
}

fn elements(text: &str) -> Vec<Vec<u8>> {
    text.split(' ').map(|e| e.as_bytes().to_vec()).collect()
}

#[test]
fn refuses_inconsistent_streams() {
    let master = [0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0];
    // length 1, last id 5-0, first id 5-0, max deleted 0-0, added 1, no group
    let tail = [1, 5, 0, 5, 0, 0, 0, 1, 0];
    // count deleted nfields f 0 | flags ms seq v lp-count
    let good = elements("1 0 1 f 0 2 0 0 v 4");
    let expected = StreamValue {
        entries: vec![(
            StreamId { ms: 5, seq: 0 },
            vec![(b"f".to_vec(), b"v".to_vec())],
        )],
        length: 1,
        last_id: StreamId { ms: 5, seq: 0 },
        first_id: StreamId { ms: 5, seq: 0 },
        entries_added: 1,
        ..StreamValue::default()
    };
    assert_eq!(
        restore(&one_node_stream(master, &good, &tail)),
        Ok(RdbValue::Stream(expected))
    );
    let bad_listpacks = [
        "1 0 1 f 0 2 0 0 v 5",     // wrong lp-count
        "2 0 1 f 0 2 0 0 v 4",     // count says two entries
        "1 1 1 f 0 2 0 0 v 4",     // deleted says one more
        "0 1 1 f 0 3 0 0 v 4",     // no live entry
        "1 0 1 f 1 2 0 0 v 4",     // master entry not ended by 0
        "1 0 1 f 0 2 0 0 v 4 x",   // an element after the last entry
        "1 0 -1 f 0 2 0 0 v 4",    // negative field count
        "1 0 1 f 0 2 -1 0 v 4",    // before the master ID
        "1 0 1 f 0 0 0 0 1 f v 6", // right lp-count without SAMEFIELDS: fine
        "1 0 1 f 0 0 0 0 1 f v 5", // wrong lp-count without SAMEFIELDS
        "1 0 1 f 0 0 0 0 9 f v 6", // too many fields
        "1 0 1 f 0 x 0 0 v 4",     // flags not an integer
        "1 0 1 f 0 2 0 0 v",       // truncated entry
    ];
    for (i, text) in bad_listpacks.iter().enumerate() {
        let result = restore(&one_node_stream(master, &elements(text), &tail));
        assert_eq!(result.is_ok(), i == 8, "{text}: {result:?}");
    }
    let bad_tails: [&[u8]; 5] = [
        &[2, 5, 0, 5, 0, 0, 0, 2, 0], // length 2
        &[1, 4, 9, 5, 0, 0, 0, 1, 0], // last id before the last entry
        &[1, 5, 0, 5, 0, 0, 0, 0, 0], // fewer added than live
        &[1, 5, 0, 5, 0, 0, 0, 1, 1], // a group that is not there
        &[1, 5, 0, 5, 0, 0, 0, 1],    // no group count
    ];
    for tail in bad_tails {
        let result = restore(&one_node_stream(master, &good, tail));
        assert_eq!(result, Err(RdbError::BadFormat), "{tail:?}");
    }
    // Two consumers claiming the same pending entry, a pending entry
    // nobody claims, an ID no PEL holds, two groups of one name.
    let raw_5_0 = master;
    let group = |name: u8, consumers: &[&[u8]]| {
        let mut g = vec![1, name, 5, 0, 1, 1];
        g.extend_from_slice(&raw_5_0);
        g.extend_from_slice(&[0; 8]);
        g.push(1);
        g.push(consumers.len() as u8);
        for (i, ids) in consumers.iter().enumerate() {
            g.extend_from_slice(&[1, b'a' + i as u8]);
            g.extend_from_slice(&[0; 8]);
            g.push((ids.len() / 16) as u8);
            g.extend_from_slice(ids);
        }
        g
    };
    let with_groups = |groups: &[Vec<u8>]| {
        let mut tail = vec![1, 5, 0, 5, 0, 0, 0, 1, groups.len() as u8];
        for g in groups {
            tail.extend_from_slice(g);
        }
        one_node_stream(master, &good, &tail)
    };
    let one_owner = with_groups(&[group(b'g', &[&raw_5_0])]);
    let RdbValue::Stream(stream) = restore(&one_owner).unwrap() else {
        panic!()
    };
    assert_eq!(stream.groups[0].pending[0].consumer, b"a");
    let mut other_id = raw_5_0;
    other_id[15] = 1;
    let mut twice = raw_5_0.to_vec();
    twice.extend_from_slice(&raw_5_0);
    for groups in [
        vec![group(b'g', &[&raw_5_0, &raw_5_0])],
        vec![group(b'g', &[&twice])],
        vec![group(b'g', &[&[]])],
        vec![group(b'g', &[&other_id])],
        vec![group(b'g', &[&raw_5_0]), group(b'g', &[&raw_5_0])],
    ] {
        assert_eq!(restore(&with_groups(&groups)), Err(RdbError::BadFormat));
    }
    // A node key that is not 16 bytes.
    let mut short_key = one_node_stream(master, &good, &tail);
    short_key[2] = 15;
    assert!(restore(&with_footer(&short_key[..short_key.len() - 10])).is_err());
}

#[test]
fn accepts_what_redis_accepts_in_any_order() {
    // Nodes, groups, consumers and PELs are inserted in radix trees by
    // Redis: a payload may list them in any order.
    let record = &records(REDIS_STREAMS)[0];
    let stream = &record.expected;
    let mut body = record.payload[..record.payload.len() - 10].to_vec();
    // Swap the first two nodes.
    let mut r = Reader {
        data: &body,
        pos: 1,
    };
    assert!(r.count().unwrap() >= 2);
    let first = r.pos;
    r.string().unwrap();
    r.string().unwrap();
    let second = r.pos;
    r.string().unwrap();
    r.string().unwrap();
    let third = r.pos;
    let mut swapped = body[second..third].to_vec();
    swapped.extend_from_slice(&body[first..second]);
    body.splice(first..third, swapped);
    assert_same(&stream_of(&with_footer(&body)), stream, "swapped");
}

/// Every byte cut and flipped, with the checksum fixed so the decoder
/// itself must cope: errors, never a panic. Whatever still decodes must
/// survive its own round trip.
#[test]
fn corrupt_stream_payloads_are_errors_not_panics() {
    let mut seeds = Vec::new();
    for record in records(REDIS_STREAMS) {
        // Types 15 and 21 differ from 19 in the metadata and groups only.
        if record.payload.len() < 4000 {
            seeds.push(as_type_15(&record.payload));
            seeds.push(as_type_21(&record.payload));
        }
        seeds.push(record.payload);
    }
    seeds.extend(synthetic_streams().iter().map(|(_, s)| dump_stream(s)));
    let check = |body: &[u8]| {
        if let Ok(value) = restore(&with_footer(body)) {
            assert_eq!(restore(&dump(&value)), Ok(value));
        }
    };
    let mut g = Gen(5);
    for seed in &seeds {
        let body = &seed[..seed.len() - 10];
        assert!(restore(&seed[..seed.len() - 1]).is_err());
        // Every position of a small payload, fewer of a larger one (a
        // decode costs about 40 µs per KB in a debug build).
        let samples = (150_000 / body.len()).max(20);
        let positions: Vec<usize> = if body.len() <= samples {
            (0..body.len()).collect()
        } else {
            (0..samples)
                .map(|_| g.below(body.len() as u64) as usize)
                .collect()
        };
        for &at in &positions {
            assert!(restore(&with_footer(&body[..at])).is_err(), "cut {at}");
            for byte in [0x00, 0x01, 0x7F, 0x80, 0xC0, 0xFF] {
                let mut bad = body.to_vec();
                bad[at] = byte;
                check(&bad);
                bad[at] = body[at] ^ byte;
                check(&bad);
            }
        }
        for _ in 0..samples.min(200) {
            let mut bad = body.to_vec();
            for _ in 0..1 + g.below(4) {
                let at = g.below(bad.len() as u64) as usize;
                match g.below(3) {
                    0 => bad[at] = g.next() as u8,
                    1 => {
                        bad.remove(at);
                    }
                    _ => bad.insert(at, g.next() as u8),
                }
            }
            check(&bad);
        }
    }
}

/// A node: its raw master ID and its listpack's elements.
type NodeElements = ([u8; 16], Vec<Vec<u8>>);

/// The nodes of a stream body, and where what follows them starts.
fn node_elements(body: &[u8]) -> (Vec<NodeElements>, usize) {
    let mut r = Reader { data: body, pos: 1 };
    let mut nodes = Vec::new();
    for _ in 0..r.count().unwrap() {
        let key = r.string().unwrap().try_into().unwrap();
        let listpack = r.string().unwrap();
        let elements = crate::listpack::listpack_entries(&listpack).unwrap();
        nodes.push((key, elements.iter().map(|e| e.to_bytes()).collect()));
    }
    (nodes, r.pos)
}

/// Writes the nodes back (the listpacks uncompressed) before `rest`.
fn with_nodes(object_type: u8, nodes: &[NodeElements], rest: &[u8]) -> Vec<u8> {
    let mut body = vec![object_type];
    crate::encoding::write_len(&mut body, nodes.len() as u64);
    for (key, elements) in nodes {
        let mut writer = crate::listpack::ListpackWriter::new();
        for element in elements {
            writer.push(element);
        }
        let listpack = writer.finish();
        body.push(16);
        body.extend_from_slice(key);
        crate::encoding::write_len(&mut body, listpack.len() as u64);
        body.extend_from_slice(&listpack);
    }
    body.extend_from_slice(rest);
    body
}

/// Well-formed listpacks with wrong stream contents: one element replaced
/// by a small integer, a large one or text, or removed, or one duplicated.
/// The listpack is always valid, so these reach the stream checks that
/// byte flips (mostly caught by LZF or the listpack) rarely reach.
#[test]
fn wrong_node_elements_are_errors_not_panics() {
    let mut g = Gen(11);
    let mut seeds: Vec<Vec<u8>> = records(REDIS_STREAMS)
        .into_iter()
        .map(|r| r.payload)
        .collect();
    seeds.extend(synthetic_streams().iter().map(|(_, s)| dump_stream(s)));
    for seed in seeds {
        let body = &seed[..seed.len() - 10];
        let (nodes, rest_at) = node_elements(body);
        if nodes.is_empty() {
            continue;
        }
        assert_eq!(
            restore(&with_footer(&with_nodes(body[0], &nodes, &body[rest_at..]))),
            restore(&seed)
        );
        for _ in 0..300 {
            let mut nodes = nodes.clone();
            let node = g.below(nodes.len() as u64) as usize;
            let elements = &mut nodes[node].1;
            // The head of a node (master entry, first entries) most often.
            let span = if g.below(2) == 0 { 12 } else { elements.len() };
            let at = g.below(span.min(elements.len()) as u64) as usize;
            match g.below(5) {
                0 => elements[at] = (g.below(8) as i64 - 2).to_string().into_bytes(),
                1 => elements[at] = (g.next() as i64).to_string().into_bytes(),
                2 => elements[at] = b"x".to_vec(),
                3 => {
                    elements.remove(at);
                }
                _ => elements.insert(at, elements[at].clone()),
            }
            let payload = with_footer(&with_nodes(body[0], &nodes, &body[rest_at..]));
            if let Ok(value) = restore(&payload) {
                assert_eq!(restore(&dump(&value)), Ok(value));
            }
        }
    }
}
