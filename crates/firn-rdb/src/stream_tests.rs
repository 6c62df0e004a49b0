//! Streams end to end: round trips of streams no Redis command makes in
//! this shape, and hand-written payloads that must be refused.

use crate::encoding::Reader;
use crate::stream::TYPE_STREAM_LISTPACKS_2;
use crate::tests::{with_footer, Gen};
use crate::*;

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
