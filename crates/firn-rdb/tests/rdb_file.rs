//! RDB files written by redis-server 7.0.15 itself (SAVE), read back with
//! `RdbFileReader`: every type in each encoding Redis 7.0 writes (small
//! ones in listpacks and intsets, big ones in hash tables, skiplists and
//! many quicklist nodes), LZF and integer strings, expiries, several
//! databases, a function library and a stream with consumer groups and
//! pending entries. The reader must yield exactly what was written.

use std::collections::BTreeMap;

use firn_rdb::{RdbEntry, RdbFileReader, RdbValue, StreamId};
use firn_testkit::data::{all_bytes, pattern};
use firn_testkit::{Conn, Server, R};

const LIBRARY: &str =
    "#!lua name=mylib\nredis.register_function('myfunc', function(keys, args) return args[1] end)";
/// Far in the future, so nothing expires while the test runs.
const EXPIRE_AT_MS: i64 = 4_102_444_800_000;

type Model = BTreeMap<(u32, Vec<u8>), (RdbValue, Option<i64>)>;

fn run(conn: &mut Conn, args: &[&[u8]]) -> R {
    conn.send(args);
    let reply = conn.read_reply().1;
    assert!(!reply.is_error(), "{:?}: {reply:?}", args.first());
    reply
}

fn text(s: impl ToString) -> Vec<u8> {
    s.to_string().into_bytes()
}

/// Writes `value` at `key` with the commands that build it, and records it.
fn write(conn: &mut Conn, model: &mut Model, db: u32, key: &str, value: RdbValue) {
    run(conn, &[b"SELECT", &text(db)]);
    let k = key.as_bytes();
    let mut args: Vec<Vec<u8>> = Vec::new();
    match &value {
        RdbValue::String(s) => args.extend([text("SET"), text(key), s.clone()]),
        RdbValue::List(items) => {
            args.extend([text("RPUSH"), text(key)]);
            args.extend(items.iter().cloned());
        }
        RdbValue::Set(members) => {
            args.extend([text("SADD"), text(key)]);
            args.extend(members.iter().cloned());
        }
        RdbValue::SortedSet(members) => {
            args.extend([text("ZADD"), text(key)]);
            for (member, score) in members {
                args.extend([text(score), member.clone()]);
            }
        }
        RdbValue::Hash(pairs) => {
            args.extend([text("HSET"), text(key)]);
            for (field, value) in pairs {
                args.extend([field.clone(), value.clone()]);
            }
        }
        RdbValue::Stream(_) => unreachable!("streams are built by hand"),
    }
    let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    run(conn, &refs);
    model.insert((db, k.to_vec()), (normalised(value), None));
}

fn expire(conn: &mut Conn, model: &mut Model, db: u32, key: &str) {
    run(conn, &[b"SELECT", &text(db)]);
    run(conn, &[b"PEXPIREAT", key.as_bytes(), &text(EXPIRE_AT_MS)]);
    model.get_mut(&(db, key.as_bytes().to_vec())).unwrap().1 = Some(EXPIRE_AT_MS);
}

/// Sets and hashes in a known order (Redis's hash-table order is not).
fn normalised(value: RdbValue) -> RdbValue {
    match value {
        RdbValue::Set(mut members) => {
            members.sort();
            RdbValue::Set(members)
        }
        RdbValue::Hash(mut pairs) => {
            pairs.sort();
            RdbValue::Hash(pairs)
        }
        RdbValue::SortedSet(mut members) => {
            members.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
            RdbValue::SortedSet(members)
        }
        other => other,
    }
}

fn encoding(conn: &mut Conn, db: u32, key: &str) -> String {
    run(conn, &[b"SELECT", &text(db)]);
    run(conn, &[b"OBJECT", b"ENCODING", key.as_bytes()])
        .as_str()
        .unwrap()
}

fn strings(items: impl IntoIterator<Item = String>) -> Vec<Vec<u8>> {
    items.into_iter().map(String::into_bytes).collect()
}

/// Everything but the stream; returns the model and each key's encoding.
fn fill(conn: &mut Conn) -> (Model, BTreeMap<String, String>) {
    let mut model = Model::new();
    let mut m = |conn: &mut Conn, db: u32, key: &str, value: RdbValue| {
        write(conn, &mut model, db, key, value);
    };
    m(conn, 0, "str:small", RdbValue::String(text("hello")));
    m(conn, 0, "str:int8", RdbValue::String(text("-7")));
    m(conn, 0, "str:int16", RdbValue::String(text("12345")));
    m(conn, 0, "str:int32", RdbValue::String(text("-70000")));
    m(conn, 0, "str:i64", RdbValue::String(text(i64::MAX)));
    m(conn, 0, "str:empty", RdbValue::String(Vec::new()));
    m(
        conn,
        0,
        "str:lzf",
        RdbValue::String(text("abc".repeat(1000))),
    );
    m(conn, 0, "str:binary", RdbValue::String(all_bytes()));
    m(conn, 0, "str:200k", RdbValue::String(pattern(200_000, 3)));
    m(
        conn,
        0,
        "list:small",
        RdbValue::List(strings([
            "a".into(),
            "1".into(),
            "-2".into(),
            "x".repeat(100),
        ])),
    );
    m(
        conn,
        0,
        "list:big",
        RdbValue::List(strings((0..10_000).map(|i| format!("item:{i}")))),
    );
    m(
        conn,
        0,
        "list:wide",
        RdbValue::List((0..20).map(|i| pattern(10_000, i)).collect()),
    );
    m(
        conn,
        0,
        "set:intset",
        RdbValue::Set(strings(
            ["1", "2", "-5", "100000", "6000000000"].map(String::from),
        )),
    );
    m(
        conn,
        0,
        "set:small",
        RdbValue::Set(strings(["a", "b", "c"].map(String::from))),
    );
    m(
        conn,
        0,
        "set:big",
        RdbValue::Set(strings((0..10_000).map(|i| format!("member:{i}")))),
    );
    m(
        conn,
        0,
        "set:bigint",
        RdbValue::Set(strings((0..1000).map(|i| format!("{}", i * 7)))),
    );
    m(
        conn,
        0,
        "zset:small",
        RdbValue::SortedSet(vec![
            (text("a"), 1.0),
            (text("b"), 2.5),
            (text("c"), f64::NEG_INFINITY),
            (text("d"), f64::INFINITY),
            (text("e"), -0.125),
        ]),
    );
    m(
        conn,
        0,
        "zset:big",
        RdbValue::SortedSet(
            (0..10_000)
                .map(|i| (text(format!("m:{i}")), i as f64 * 1.5))
                .collect(),
        ),
    );
    m(
        conn,
        0,
        "zset:longmember",
        RdbValue::SortedSet(vec![(text("y".repeat(100)), 3.0)]),
    );
    m(
        conn,
        0,
        "hash:small",
        RdbValue::Hash(vec![(text("f1"), text("v1")), (text("n"), text("42"))]),
    );
    m(
        conn,
        0,
        "hash:big",
        RdbValue::Hash(
            (0..10_000)
                .map(|i| (text(format!("f:{i}")), text(format!("v:{i}"))))
                .collect(),
        ),
    );
    m(
        conn,
        0,
        "hash:longvalue",
        RdbValue::Hash(vec![(text("f"), text("z".repeat(100)))]),
    );
    m(conn, 3, "db3:string", RdbValue::String(text("in db 3")));
    m(
        conn,
        3,
        "db3:hash",
        RdbValue::Hash(vec![(text("a"), text("1"))]),
    );
    m(
        conn,
        3,
        "db3:list",
        RdbValue::List(strings(["x".into(), "y".into()])),
    );
    m(conn, 15, "db15:set", RdbValue::Set(strings(["9".into()])));
    for (db, key) in [
        (0, "str:small"),
        (0, "hash:big"),
        (0, "zset:small"),
        (3, "db3:list"),
    ] {
        expire(conn, &mut model, db, key);
    }
    let encodings = model
        .keys()
        .map(|(db, key)| {
            let key = String::from_utf8(key.clone()).unwrap();
            (key.clone(), encoding(conn, *db, &key))
        })
        .collect();
    (model, encodings)
}

/// A stream with deleted entries, two groups, pending entries of two
/// consumers (some acknowledged) and a consumer without any.
fn fill_stream(conn: &mut Conn) {
    run(conn, &[b"SELECT", b"0"]);
    for i in 0..500 {
        let id = format!("{}-{}", 1_700_000_000_000u64 + i / 3, i % 3);
        let value = format!("value {i}");
        if i % 7 == 0 {
            run(
                conn,
                &[
                    b"XADD",
                    b"stream",
                    id.as_bytes(),
                    b"other",
                    value.as_bytes(),
                    b"n",
                    &text(i),
                ],
            );
        } else {
            run(
                conn,
                &[
                    b"XADD",
                    b"stream",
                    id.as_bytes(),
                    b"field",
                    value.as_bytes(),
                ],
            );
        }
    }
    run(
        conn,
        &[b"XDEL", b"stream", b"1700000000010-1", b"1700000000100-0"],
    );
    run(conn, &[b"XGROUP", b"CREATE", b"stream", b"g1", b"0"]);
    run(conn, &[b"XGROUP", b"CREATE", b"stream", b"g2", b"$"]);
    run(
        conn,
        &[
            b"XREADGROUP",
            b"GROUP",
            b"g1",
            b"alice",
            b"COUNT",
            b"10",
            b"STREAMS",
            b"stream",
            b">",
        ],
    );
    run(
        conn,
        &[
            b"XREADGROUP",
            b"GROUP",
            b"g1",
            b"bob",
            b"COUNT",
            b"5",
            b"STREAMS",
            b"stream",
            b">",
        ],
    );
    run(
        conn,
        &[
            b"XACK",
            b"stream",
            b"g1",
            b"1700000000000-0",
            b"1700000000001-1",
        ],
    );
    run(
        conn,
        &[b"XGROUP", b"CREATECONSUMER", b"stream", b"g1", b"carol"],
    );
}

fn id_of(text: &[u8]) -> StreamId {
    let text = std::str::from_utf8(text).unwrap();
    let (ms, seq) = text.split_once('-').unwrap();
    StreamId {
        ms: ms.parse().unwrap(),
        seq: seq.parse().unwrap(),
    }
}

/// The stream as Redis shows it (XRANGE, XINFO, XPENDING) against what
/// the reader decoded.
fn check_stream(conn: &mut Conn, value: &RdbValue) {
    let RdbValue::Stream(stream) = value else {
        panic!("not a stream: {value:?}");
    };
    run(conn, &[b"SELECT", b"0"]);
    let range = run(conn, &[b"XRANGE", b"stream", b"-", b"+"]);
    let entries: Vec<_> = range
        .items()
        .iter()
        .map(|entry| {
            let [id, fields] = entry.items() else {
                panic!()
            };
            let fields: Vec<(Vec<u8>, Vec<u8>)> = fields
                .items()
                .chunks(2)
                .map(|p| {
                    (
                        p[0].as_bytes().unwrap().to_vec(),
                        p[1].as_bytes().unwrap().to_vec(),
                    )
                })
                .collect();
            (id_of(id.as_bytes().unwrap()), fields)
        })
        .collect();
    assert_eq!(stream.entries, entries);
    assert_eq!(stream.length, 498);
    assert_eq!(stream.entries_added, 500);
    assert_eq!(stream.last_id, id_of(b"1700000000166-1"));
    assert_eq!(stream.max_deleted_id, id_of(b"1700000000100-0"));
    let names: Vec<&[u8]> = stream.groups.iter().map(|g| g.name.as_slice()).collect();
    assert_eq!(names, [&b"g1"[..], b"g2"]);
    let g1 = &stream.groups[0];
    let pending = run(conn, &[b"XPENDING", b"stream", b"g1", b"-", b"+", b"100"]);
    let expected: Vec<(StreamId, Vec<u8>, u64)> = pending
        .items()
        .iter()
        .map(|p| {
            let [id, consumer, _idle, count] = p.items() else {
                panic!()
            };
            (
                id_of(id.as_bytes().unwrap()),
                consumer.as_bytes().unwrap().to_vec(),
                count.as_int().unwrap() as u64,
            )
        })
        .collect();
    let got: Vec<(StreamId, Vec<u8>, u64)> = g1
        .pending
        .iter()
        .map(|p| (p.id, p.consumer.clone(), p.delivery_count))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(got.len(), 13);
    let consumers: Vec<(&[u8], usize)> = g1
        .consumers
        .iter()
        .map(|c| (c.name.as_slice(), c.pending.len()))
        .collect();
    assert_eq!(consumers, [(&b"alice"[..], 8), (b"bob", 5), (b"carol", 0)]);
    // XINFO GROUPS: name, consumers, pending, last-delivered-id,
    // entries-read, lag for each group.
    let groups = run(conn, &[b"XINFO", b"GROUPS", b"stream"]);
    assert_eq!(groups.items().len(), 2);
    for (group, info) in stream.groups.iter().zip(groups.items()) {
        let field = |name: &str| {
            let at = info
                .items()
                .iter()
                .position(|f| f.as_str().as_deref() == Some(name));
            info.items()[at.unwrap() + 1].clone()
        };
        let last_id = field("last-delivered-id").as_bytes().map(id_of);
        assert_eq!(Some(group.last_id), last_id);
        let entries_read = field("entries-read").as_int().map(|n| n as u64);
        assert_eq!(group.entries_read, entries_read);
    }
    assert_eq!(stream.groups[1].last_id, stream.last_id);
    assert!(stream.groups[1].pending.is_empty());
}

#[test]
fn reads_what_redis_saves() {
    let redis = Server::redis();
    let mut conn = redis.conn();
    let (model, encodings) = fill(&mut conn);
    fill_stream(&mut conn);
    run(&mut conn, &[b"FUNCTION", b"LOAD", LIBRARY.as_bytes()]);
    run(&mut conn, &[b"SAVE"]);

    // The encodings the file holds, as Redis reports them.
    let mut seen: Vec<&str> = encodings.values().map(String::as_str).collect();
    seen.sort();
    seen.dedup();
    assert_eq!(
        seen,
        [
            "embstr",
            "hashtable",
            "int",
            "intset",
            "listpack",
            "quicklist",
            "raw",
            "skiplist"
        ]
    );

    let file = std::fs::File::open(redis.dir().join("dump.rdb")).expect("dump.rdb");
    let mut reader = RdbFileReader::new(file).unwrap();
    assert_eq!(reader.version(), 10);
    let mut functions = Vec::new();
    let mut got = Model::new();
    let mut stream = None;
    while let Some(entry) = reader.next_entry().unwrap() {
        match entry {
            RdbEntry::Function(code) => functions.push(code),
            RdbEntry::Key(key) if key.key == b"stream" => stream = Some(key),
            RdbEntry::Key(key) => {
                let value = normalised(key.value);
                assert!(
                    got.insert((key.db, key.key), (value, key.expire_at_ms))
                        .is_none(),
                    "a key twice"
                );
            }
        }
    }
    assert_eq!(functions, [LIBRARY.as_bytes()]);
    assert_eq!(got.len(), model.len());
    for (key, expected) in &model {
        assert_eq!(got.get(key), Some(expected), "{key:?}");
    }
    let stream = stream.expect("the stream");
    assert_eq!((stream.db, stream.expire_at_ms), (0, None));
    check_stream(&mut conn, &stream.value);
    let size = std::fs::metadata(redis.dir().join("dump.rdb"))
        .unwrap()
        .len();
    assert_eq!(reader.bytes_read(), size);
}
