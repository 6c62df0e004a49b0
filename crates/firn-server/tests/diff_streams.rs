//! Differential tests of streams against redis-server 7.0.15: XADD and its
//! trimming options, ranges, XDEL, XTRIM (exact and approximate, over the
//! node structure that `stream-node-max-entries` / `-bytes` shape), XREAD,
//! consumer groups (XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM,
//! XAUTOCLAIM), XINFO, XSETID, entries-read and lag accounting, keyspace
//! events, the keyspace commands over streams, MULTI/EXEC and scripts,
//! blocked readers woken from another connection, and a seeded random
//! sequence over several streams and groups.
//!
//! What differs by design and is normalised here:
//! - IDs made by `*` hold the servers' clocks: such replies are compared
//!   by shape, and every other test uses explicit IDs.
//! - Idle, seen and delivery times differ by a few milliseconds: those
//!   fields become a placeholder ([`times`]).
//! - `radix-tree-nodes` of XINFO STREAM is an estimate in Firn, which has
//!   no rax (nodes are records): it becomes a placeholder too.
//! - DUMP/RESTORE of streams is tested elsewhere.
//! - A reader of several keys written in one transaction or script is
//!   served by Redis from the key written first; Firn sees a batch's keys
//!   sorted, not in write order, so that case is not compared (keys
//!   written by separate commands are).
//!
//! `FIRN_DIFF_SEED=<n>` runs one seed of the random test;
//! `FIRN_DIFF_STEPS=<n>` changes its number of commands.

use firn_testkit::keyspace_events::{Message, Subscriber, MARKER};
use firn_testkit::{
    diff::command,
    env::{random_seeds, random_steps},
    Diff, R,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

// ------------------------------------------------------------ helpers

/// Fields whose value is a time (or Firn's radix-tree-nodes estimate).
const TIMED_FIELDS: [&str; 4] = ["seen-time", "idle", "radix-tree-nodes", "delivery-time"];

fn placeholder() -> R {
    R::Simple("<normalised>".into())
}

/// Replaces every time field of an XINFO / XPENDING / XCLAIM reply (and
/// radix-tree-nodes) by a placeholder, at any depth, in RESP2 flat
/// key-value arrays and RESP3 maps. The pending lists of XINFO STREAM FULL
/// hold their delivery time by position: `[id, consumer, time, count]`
/// for a group, `[id, time, count]` for a consumer.
fn times(r: &R) -> R {
    match r {
        R::Map(pairs) => R::Map(
            pairs
                .iter()
                .map(|(k, v)| (k.clone(), field_value(k, v)))
                .collect(),
        ),
        R::Array(Some(items)) if is_field_list(items) => R::Array(Some(
            items
                .chunks(2)
                .flat_map(|c| [c[0].clone(), field_value(&c[0], &c[1])])
                .collect(),
        )),
        R::Array(Some(items)) => R::Array(Some(items.iter().map(times).collect())),
        other => other.clone(),
    }
}

fn is_field_list(items: &[R]) -> bool {
    items.len().is_multiple_of(2)
        && !items.is_empty()
        && items.chunks(2).all(|c| {
            c[0].as_str()
                .is_some_and(|k| k.chars().all(|ch| ch.is_ascii_lowercase() || ch == '-'))
                && matches!(c[0], R::Bulk(Some(_)) | R::Simple(_))
        })
        && items.chunks(2).any(|c| {
            c[0].as_str().is_some_and(|k| {
                [
                    "name",
                    "length",
                    "pending",
                    "idle",
                    "seen-time",
                    "consumers",
                    "last-delivered-id",
                ]
                .contains(&k.as_str())
            })
        })
}

fn field_value(key: &R, value: &R) -> R {
    let key = key.as_str().unwrap_or_default();
    if TIMED_FIELDS.contains(&key.as_str()) {
        return placeholder();
    }
    if key == "pending" {
        if let R::Array(Some(entries)) = value {
            return R::Array(Some(entries.iter().map(pending_entry_times).collect()));
        }
    }
    times(value)
}

fn pending_entry_times(e: &R) -> R {
    match e {
        R::Array(Some(v)) if v.len() == 4 && matches!(v[2], R::Int(_)) => {
            let mut v = v.clone();
            v[2] = placeholder();
            R::Array(Some(v))
        }
        R::Array(Some(v)) if v.len() == 3 && matches!(v[1], R::Int(_)) => {
            let mut v = v.clone();
            v[1] = placeholder();
            R::Array(Some(v))
        }
        other => other.clone(),
    }
}

/// XPENDING's extended form: `[id, consumer, idle, deliveries]` each.
fn pending_idle(r: &R) -> R {
    match r {
        R::Array(Some(items)) => R::Array(Some(items.iter().map(pending_entry_times).collect())),
        other => other.clone(),
    }
}

/// Switches the active client pair to RESP3 (HELLO's id differs).
fn resp3(d: &mut Diff) {
    d.cmd_type_only(&["HELLO", "3"]);
}

fn resp2(d: &mut Diff) {
    d.cmd_type_only(&["HELLO", "2"]);
}

/// XADD of `n` entries with IDs `first..first+n` (ms, seq 1) and fields
/// whose sizes vary with the index, pipelined.
fn fill(d: &mut Diff, key: &str, first: u64, n: u64) {
    let commands: Vec<Vec<Vec<u8>>> = (first..first + n)
        .map(|i| {
            let value = "v".repeat((i as usize * 37) % 300);
            vec![
                b"XADD".to_vec(),
                key.as_bytes().to_vec(),
                format!("{i}-1").into_bytes(),
                b"f".to_vec(),
                value.into_bytes(),
                format!("n{}", i % 7).into_bytes(),
                i.to_string().into_bytes(),
            ]
        })
        .collect();
    for chunk in commands.chunks(200) {
        d.pipeline(chunk);
    }
}

fn xinfo(d: &mut Diff, args: &[&str]) -> R {
    d.cmd_with(args, times)
}

/// XINFO STREAM, GROUPS, CONSUMERS of every group, XINFO STREAM FULL and
/// XLEN, all normalised.
fn stream_state(d: &mut Diff, key: &str) {
    d.cmd(&["XLEN", key]);
    xinfo(d, &["XINFO", "STREAM", key]);
    xinfo(d, &["XINFO", "STREAM", key, "FULL"]);
    let groups = xinfo(d, &["XINFO", "GROUPS", key]);
    for g in groups.items() {
        let name = match g {
            R::Map(pairs) => pairs.first().and_then(|(_, v)| v.as_str()),
            other => other.items().get(1).and_then(R::as_str),
        }
        .unwrap_or_default();
        xinfo(d, &["XINFO", "CONSUMERS", key, &name]);
        d.cmd_with(&["XPENDING", key, &name, "-", "+", "1000"], pending_idle);
        d.cmd(&["XPENDING", key, &name]);
    }
}

// ------------------------------------------------------------ XADD

#[test]
fn xadd_with_explicit_and_partial_ids() {
    let mut d = Diff::new();
    d.cmd(&["XADD", "s", "1-1", "a", "1"]);
    d.cmd(&["XADD", "s", "1-2", "a", "2", "b", "3"]);
    d.cmd(&["XADD", "s", "1-*", "a", "3"]);
    d.cmd(&["XADD", "s", "5-*", "a", "4"]);
    d.cmd(&["XADD", "s", "5-*", "a", "5"]);
    d.cmd(&["XADD", "s", "6", "a", "6"]);
    d.cmd(&[
        "XADD",
        "s",
        "18446744073709551615-18446744073709551614",
        "x",
        "y",
    ]);
    d.cmd(&["XADD", "s", "18446744073709551615-*", "x", "y"]);
    d.cmd(&["XADD", "s", "18446744073709551615-*", "x", "y"]);
    d.cmd(&["XADD", "s", "*", "x", "y"]);
    d.cmd(&["XRANGE", "s", "-", "+"]);
    d.cmd(&["XADD", "n", "0-1", "a", "b"]);
    d.cmd(&["XADD", "n2", "0-*", "a", "b"]);
    d.cmd(&["XADD", "n2", "0-*", "a", "b"]);
    d.cmd(&["XRANGE", "n2", "-", "+"]);
    d.cmd(&["XADD", "bin", "1-1", "\u{0}\u{ff}", ""]);
    d.cmd(&["XRANGE", "bin", "-", "+"]);
    // Auto IDs: the clocks differ, so shapes only.
    d.cmd_type_only(&["XADD", "auto", "*", "a", "b"]);
    d.cmd_type_only(&["XADD", "auto", "*", "a", "b"]);
    d.cmd(&["XLEN", "auto"]);
    d.cmd_type_only(&["XRANGE", "auto", "-", "+"]);
    for protocol in ["2", "3"] {
        d.cmd_type_only(&["HELLO", protocol]);
        d.cmd(&["XRANGE", "s", "-", "+", "COUNT", "2"]);
        d.cmd(&["XADD", "missing", "NOMKSTREAM", "*", "a", "b"]);
    }
    d.cmd(&["EXISTS", "missing"]);
    d.cmd(&["XADD", "n", "NOMKSTREAM", "0-2", "a", "b"]);
    d.cmd(&["XLEN", "n"]);
}

#[test]
fn xadd_errors_come_in_redis_order() {
    let mut d = Diff::new();
    d.cmd(&["XADD", "s", "5-5", "a", "1"]);
    for c in [
        vec!["XADD", "s", "0-0", "a", "1"],
        vec!["XADD", "new", "0-0", "a", "1"],
        vec!["XADD", "new", "0", "a", "1"],
        vec!["XADD", "s", "5-5", "a", "1"],
        vec!["XADD", "s", "5-4", "a", "1"],
        vec!["XADD", "s", "4", "a", "1"],
        vec!["XADD", "s", "4-*", "a", "1"],
        vec!["XADD", "s", "5-*", "a", "1"],
        vec!["XADD", "s", "6-1", "a"],
        vec!["XADD", "s", "6-1", "a", "1", "b"],
        vec!["XADD", "s", "6-1"],
        vec!["XADD", "s"],
        vec!["XADD", "s", "abc", "a", "1"],
        vec!["XADD", "s", "1-abc", "a", "1"],
        vec!["XADD", "s", "-", "a", "1"],
        vec!["XADD", "s", "+", "a", "1"],
        vec!["XADD", "s", "-1", "a", "1"],
        vec!["XADD", "s", "1--1", "a", "1"],
        vec!["XADD", "s", "*-1", "a", "1"],
        vec!["XADD", "s", "18446744073709551616-1", "a", "1"],
        vec!["XADD", "s", "MAXLEN", "-1", "*", "a", "1"],
        vec!["XADD", "s", "MAXLEN", "abc", "*", "a", "1"],
        vec!["XADD", "s", "MAXLEN", "10", "LIMIT", "10", "*", "a", "1"],
        vec![
            "XADD", "s", "MAXLEN", "=", "10", "LIMIT", "10", "*", "a", "1",
        ],
        vec![
            "XADD", "s", "MAXLEN", "~", "10", "LIMIT", "-1", "*", "a", "1",
        ],
        vec![
            "XADD", "s", "MAXLEN", "~", "10", "LIMIT", "abc", "*", "a", "1",
        ],
        vec!["XADD", "s", "MAXLEN", "1", "MINID", "1", "*", "a", "1"],
        vec!["XADD", "s", "MINID", "abc", "*", "a", "1"],
        vec!["XADD", "s", "MINID", "-", "*", "a", "1"],
        vec!["XADD", "s", "MAXLEN", "*", "a", "1"],
        vec!["XADD", "s", "MAXLEN", "~", "*", "a", "1"],
        vec!["XADD", "s", "NOMKSTREAM", "NOMKSTREAM", "6-1", "a", "1"],
        vec!["XADD", "s", "LIMIT", "5", "6-1", "a", "1"],
    ] {
        d.cmd(&c);
    }
    d.cmd(&["SET", "str", "x"]);
    d.cmd(&["XADD", "str", "1-1", "a", "b"]);
    d.cmd(&["XADD", "str", "NOMKSTREAM", "*", "a", "b"]);
    d.cmd(&["XRANGE", "s", "-", "+"]);
    d.cmd(&["XLEN", "s"]);
}

#[test]
fn xadd_trims_with_maxlen_and_minid() {
    let mut d = Diff::new();
    for i in 1..=20 {
        d.cmd(&[
            "XADD",
            "s",
            "MAXLEN",
            "5",
            &format!("{i}-1"),
            "i",
            &i.to_string(),
        ]);
    }
    d.cmd(&["XRANGE", "s", "-", "+"]);
    d.cmd(&["XADD", "s", "MAXLEN", "=", "2", "21-1", "i", "21"]);
    d.cmd(&["XADD", "s", "MAXLEN", "0", "22-1", "i", "22"]);
    d.cmd(&["XLEN", "s"]);
    d.cmd(&["XADD", "s", "MINID", "23", "23-1", "i", "23"]);
    d.cmd(&["XADD", "s", "MINID", "=", "30", "24-1", "i", "24"]);
    d.cmd(&["XLEN", "s"]);
    xinfo(&mut d, &["XINFO", "STREAM", "s"]);
    fill(&mut d, "big", 1, 400);
    d.cmd(&["XADD", "big", "MAXLEN", "~", "150", "1000-1", "a", "b"]);
    d.cmd(&["XLEN", "big"]);
    d.cmd(&[
        "XADD", "big", "MAXLEN", "~", "10", "LIMIT", "100", "1001-1", "a", "b",
    ]);
    d.cmd(&["XLEN", "big"]);
    d.cmd(&[
        "XADD", "big", "MINID", "~", "300", "LIMIT", "0", "1002-1", "a", "b",
    ]);
    d.cmd(&["XLEN", "big"]);
    d.cmd(&["XADD", "big", "MINID", "~", "300", "1003-1", "a", "b"]);
    d.cmd(&["XLEN", "big"]);
    xinfo(&mut d, &["XINFO", "STREAM", "big"]);
    // NOMKSTREAM with trimming on a missing key: nil, nothing made.
    d.cmd(&["XADD", "none", "NOMKSTREAM", "MAXLEN", "0", "1-1", "a", "b"]);
    d.cmd(&["EXISTS", "none"]);
    // MAXLEN 0 on a new stream: the entry is added and trimmed at once.
    d.cmd(&["XADD", "zero", "MAXLEN", "0", "1-1", "a", "b"]);
    xinfo(&mut d, &["XINFO", "STREAM", "zero"]);
    d.cmd(&["XADD", "zero", "2-1", "a", "b"]);
    d.cmd(&["XRANGE", "zero", "-", "+"]);
}

// ------------------------------------------------------------ ranges

#[test]
fn ranges_with_bounds_counts_and_incomplete_ids() {
    let mut d = Diff::new();
    for (ms, seq) in [(1, 0), (1, 1), (1, 5), (2, 0), (3, 3), (3, 4), (10, 0)] {
        d.cmd(&["XADD", "s", &format!("{ms}-{seq}"), "ms", &ms.to_string()]);
    }
    for protocol in ["2", "3"] {
        d.cmd_type_only(&["HELLO", protocol]);
        for (start, end) in [
            ("-", "+"),
            ("1", "1"),
            ("1", "2"),
            ("1-1", "3-3"),
            ("(1-1", "(3-3"),
            ("(1", "+"),
            ("-", "(3"),
            ("(1-5", "+"),
            ("(0-0", "+"),
            ("-", "(18446744073709551615-18446744073709551615"),
            ("(18446744073709551615-18446744073709551615", "+"),
            ("(-", "+"),
            ("-", "(+"),
            ("3", "1"),
            ("2", "2-0"),
            ("18446744073709551615", "+"),
            ("0", "0"),
            ("(3-3", "(3-4"),
            ("(3-3", "3-4"),
            ("abc", "+"),
            ("-", "1-x"),
            ("((1", "+"),
            ("1-", "+"),
            ("-1", "+"),
        ] {
            d.cmd(&["XRANGE", "s", start, end]);
            d.cmd(&["XREVRANGE", "s", end, start]);
            d.cmd(&["XRANGE", "s", start, end, "COUNT", "2"]);
            d.cmd(&["XREVRANGE", "s", end, start, "COUNT", "2"]);
        }
        for count in ["0", "-1", "1", "100", "abc", "9223372036854775807"] {
            d.cmd(&["XRANGE", "s", "-", "+", "COUNT", count]);
            d.cmd(&["XREVRANGE", "s", "+", "-", "COUNT", count]);
        }
        d.cmd(&["XRANGE", "s", "-", "+", "COUNT"]);
        d.cmd(&["XRANGE", "s", "-", "+", "COUNT", "1", "COUNT", "2"]);
        d.cmd(&["XRANGE", "s", "-", "+", "LIMIT", "1"]);
        d.cmd(&["XRANGE", "s", "-"]);
        d.cmd(&["XRANGE", "missing", "-", "+"]);
        d.cmd(&["XREVRANGE", "missing", "+", "-"]);
    }
    d.cmd(&["SET", "str", "x"]);
    d.cmd(&["XRANGE", "str", "-", "+"]);
    d.cmd(&["XRANGE", "str", "abc", "+"]);
}

#[test]
fn xlen_xdel_and_the_stream_metadata() {
    let mut d = Diff::new();
    for i in 1..=10 {
        d.cmd(&["XADD", "s", &format!("{i}-0"), "i", &i.to_string()]);
    }
    d.cmd(&["XDEL", "s", "3-0", "5", "5-0", "99-0"]);
    d.cmd(&["XDEL", "s", "3-0"]);
    d.cmd(&["XDEL", "s", "abc"]);
    d.cmd(&["XDEL", "s", "1-0", "abc"]);
    d.cmd(&["XDEL", "s"]);
    d.cmd(&["XDEL", "missing", "1-0"]);
    d.cmd(&["XDEL", "missing", "abc"]);
    d.cmd(&["XLEN", "s"]);
    d.cmd(&["XLEN", "missing"]);
    d.cmd(&["XLEN"]);
    d.cmd(&["XRANGE", "s", "-", "+"]);
    xinfo(&mut d, &["XINFO", "STREAM", "s"]);
    // The last entry deleted: last-generated-id stays, first/last move.
    d.cmd(&["XDEL", "s", "10-0"]);
    xinfo(&mut d, &["XINFO", "STREAM", "s"]);
    d.cmd(&["XADD", "s", "10-0", "a", "b"]);
    d.cmd(&["XADD", "s", "10-1", "a", "b"]);
    // Deleting everything keeps the empty stream.
    d.cmd(&[
        "XDEL", "s", "1-0", "2-0", "4-0", "6-0", "7-0", "8-0", "9-0", "10-1",
    ]);
    d.cmd(&["EXISTS", "s"]);
    xinfo(&mut d, &["XINFO", "STREAM", "s"]);
    xinfo(&mut d, &["XINFO", "STREAM", "s", "FULL"]);
    d.cmd(&["SET", "str", "x"]);
    d.cmd(&["XDEL", "str", "1-0"]);
    d.cmd(&["XLEN", "str"]);
}

// ------------------------------------------------------------ XTRIM

#[test]
fn xtrim_exact_and_errors() {
    let mut d = Diff::new();
    for i in 1..=30 {
        d.cmd(&["XADD", "s", &format!("{i}-0"), "i", &i.to_string()]);
    }
    for c in [
        vec!["XTRIM", "s"],
        vec!["XTRIM", "s", "MAXLEN"],
        vec!["XTRIM", "s", "MAXLEN", "-1"],
        vec!["XTRIM", "s", "MAXLEN", "abc"],
        vec!["XTRIM", "s", "MAXLEN", "~"],
        vec!["XTRIM", "s", "FOO", "1"],
        vec!["XTRIM", "s", "MAXLEN", "10", "LIMIT", "1"],
        vec!["XTRIM", "s", "MAXLEN", "~", "10", "LIMIT", "-1"],
        vec!["XTRIM", "s", "MAXLEN", "10", "MINID", "1"],
        vec!["XTRIM", "s", "MINID", "abc"],
        vec!["XTRIM", "s", "MINID", "~"],
        vec!["XTRIM", "s", "MAXLEN", "10", "extra"],
        vec!["XTRIM", "missing", "MAXLEN", "0"],
        vec!["XTRIM", "missing", "MAXLEN", "-1"],
        vec!["XTRIM", "s", "MAXLEN", "25"],
        vec!["XTRIM", "s", "MAXLEN", "=", "20"],
        vec!["XTRIM", "s", "MAXLEN", "100"],
        vec!["XTRIM", "s", "MINID", "15"],
        vec!["XTRIM", "s", "MINID", "=", "15-1"],
        vec!["XTRIM", "s", "MINID", "(15"],
        vec!["XTRIM", "s", "MINID", "0"],
        vec!["XTRIM", "s", "MAXLEN", "~", "2"],
        vec!["XTRIM", "s", "MAXLEN", "~", "2", "LIMIT", "0"],
        vec!["XTRIM", "s", "MAXLEN", "0"],
    ] {
        d.cmd(&c);
        d.cmd(&["XLEN", "s"]);
    }
    xinfo(&mut d, &["XINFO", "STREAM", "s"]);
    d.cmd(&["SET", "str", "x"]);
    d.cmd(&["XTRIM", "str", "MAXLEN", "1"]);
}

/// Approximate trimming removes whole nodes only: the node boundaries
/// must be Redis's, set by entry counts and by bytes.
#[test]
fn approximate_trimming_follows_the_node_structure() {
    let mut d = Diff::new();
    fill(&mut d, "s", 1, 1000);
    xinfo(&mut d, &["XINFO", "STREAM", "s"]);
    d.cmd(&["XTRIM", "s", "MAXLEN", "~", "555"]);
    d.cmd(&["XLEN", "s"]);
    xinfo(&mut d, &["XINFO", "STREAM", "s"]);
    d.cmd(&["XTRIM", "s", "MAXLEN", "~", "300", "LIMIT", "150"]);
    d.cmd(&["XLEN", "s"]);
    d.cmd(&["XTRIM", "s", "MINID", "~", "800"]);
    d.cmd(&["XLEN", "s"]);
    d.cmd(&["XRANGE", "s", "-", "+", "COUNT", "1"]);
    xinfo(&mut d, &["XINFO", "STREAM", "s"]);
    for (entries, bytes) in [
        ("10", "0"),
        ("0", "500"),
        ("7", "1000"),
        ("1", "0"),
        ("0", "1"),
    ] {
        d.cmd(&["CONFIG", "SET", "stream-node-max-entries", entries]);
        d.cmd(&["CONFIG", "SET", "stream-node-max-bytes", bytes]);
        let key = format!("k{entries}-{bytes}");
        fill(&mut d, &key, 1, 300);
        xinfo(&mut d, &["XINFO", "STREAM", &key]);
        d.cmd(&["XTRIM", &key, "MAXLEN", "~", "211"]);
        d.cmd(&["XLEN", &key]);
        d.cmd(&["XTRIM", &key, "MAXLEN", "~", "100", "LIMIT", "30"]);
        d.cmd(&["XLEN", &key]);
        d.cmd(&["XTRIM", &key, "MINID", "~", "250"]);
        d.cmd(&["XLEN", &key]);
        d.cmd(&["XADD", &key, "MAXLEN", "~", "20", "1000-1", "a", "b"]);
        d.cmd(&["XLEN", &key]);
        xinfo(&mut d, &["XINFO", "STREAM", &key]);
        // Deletions leave holes in nodes; the node still counts them.
        d.cmd(&["XDEL", &key, "290-1", "291-1", "292-1"]);
        d.cmd(&["XTRIM", &key, "MAXLEN", "~", "5"]);
        d.cmd(&["XLEN", &key]);
        xinfo(&mut d, &["XINFO", "STREAM", &key, "FULL"]);
    }
    // Redis lists matching options in its dict's order.
    d.cmd_with(&["CONFIG", "GET", "stream-node-max-*"], R::pairs_sorted);
}

// ------------------------------------------------------------ XREAD

#[test]
fn xread_over_several_keys_in_both_protocols() {
    let mut d = Diff::new();
    for i in 1..=5 {
        d.cmd(&["XADD", "a", &format!("{i}-0"), "a", &i.to_string()]);
        d.cmd(&["XADD", "b", &format!("{i}-1"), "b", &i.to_string()]);
    }
    for protocol in ["2", "3"] {
        d.cmd_type_only(&["HELLO", protocol]);
        d.cmd(&["XREAD", "STREAMS", "a", "b", "0", "0"]);
        d.cmd(&["XREAD", "COUNT", "2", "STREAMS", "a", "b", "2", "3-1"]);
        d.cmd(&["XREAD", "COUNT", "0", "STREAMS", "a", "0"]);
        d.cmd(&["XREAD", "COUNT", "-5", "STREAMS", "a", "0"]);
        d.cmd(&["XREAD", "STREAMS", "a", "b", "$", "$"]);
        d.cmd(&["XREAD", "STREAMS", "a", "b", "5", "0"]);
        d.cmd(&["XREAD", "STREAMS", "missing", "a", "0", "4"]);
        d.cmd(&["XREAD", "STREAMS", "missing", "0"]);
        d.cmd(&["XREAD", "STREAMS", "a", "a", "0", "3"]);
        d.cmd(&["XREAD", "count", "1", "streams", "a", "0"]);
        d.cmd(&["XREAD", "BLOCK", "0", "STREAMS", "a", "0"]);
        d.cmd(&["XREAD", "BLOCK", "10", "STREAMS", "a", "$"]);
        d.cmd(&["XREAD", "STREAMS", "a", "+"]);
    }
    resp2(&mut d);
    for c in [
        vec!["XREAD"],
        vec!["XREAD", "STREAMS"],
        vec!["XREAD", "STREAMS", "a"],
        vec!["XREAD", "STREAMS", "a", "b", "0"],
        vec!["XREAD", "COUNT", "abc", "STREAMS", "a", "0"],
        vec!["XREAD", "COUNT"],
        vec!["XREAD", "BLOCK", "abc", "STREAMS", "a", "0"],
        vec!["XREAD", "BLOCK", "-1", "STREAMS", "a", "0"],
        vec!["XREAD", "STREAMS", "a", "abc"],
        vec!["XREAD", "STREAMS", "a", ">"],
        vec!["XREAD", "NOACK", "STREAMS", "a", "0"],
        vec!["XREAD", "GROUP", "g", "c", "STREAMS", "a", "0"],
        vec!["XREAD", "FOO", "STREAMS", "a", "0"],
        vec!["XREAD", "STREAMS", "a", "-"],
        vec!["XREAD", "STREAMS", "a", "1-x"],
    ] {
        d.cmd(&c);
    }
    d.cmd(&["SET", "str", "x"]);
    d.cmd(&["XREAD", "STREAMS", "a", "str", "0", "0"]);
    d.cmd(&["XREAD", "STREAMS", "str", "$"]);
}

// ------------------------------------------------------------ groups

#[test]
fn xgroup_subcommands_and_their_errors() {
    let mut d = Diff::new();
    d.cmd(&["XADD", "s", "1-0", "a", "1"]);
    d.cmd(&["XADD", "s", "2-0", "a", "2"]);
    for c in [
        vec!["XGROUP", "CREATE", "s", "g1", "0"],
        vec!["XGROUP", "CREATE", "s", "g1", "0"],
        vec!["XGROUP", "CREATE", "s", "g2", "$"],
        vec!["XGROUP", "CREATE", "s", "g3", "1-0", "ENTRIESREAD", "1"],
        vec!["XGROUP", "CREATE", "s", "g4", "1", "ENTRIESREAD", "-1"],
        vec!["XGROUP", "CREATE", "s", "g5", "1", "ENTRIESREAD", "-2"],
        vec!["XGROUP", "CREATE", "s", "g5", "1", "ENTRIESREAD", "abc"],
        vec!["XGROUP", "CREATE", "s", "g5", "1", "ENTRIESREAD"],
        vec!["XGROUP", "CREATE", "s", "g5", "1", "ENTRIESREAD", "5"],
        vec!["XGROUP", "CREATE", "s", "g6", "abc"],
        vec!["XGROUP", "CREATE", "s", "g6", "-"],
        vec!["XGROUP", "CREATE", "s", "g6", "+"],
        vec!["XGROUP", "CREATE", "s", "g6", "0", "FOO"],
        vec!["XGROUP", "CREATE", "s", "g6", "0", "MKSTREAM", "MKSTREAM"],
        vec!["XGROUP", "CREATE", "s"],
        vec!["XGROUP", "CREATE", "s", "g6"],
        vec!["XGROUP", "CREATE", "missing", "g", "$"],
        vec!["XGROUP", "CREATE", "missing", "g", "$", "MKSTREAM"],
        vec![
            "XGROUP",
            "CREATE",
            "missing2",
            "g",
            "5-5",
            "MKSTREAM",
            "ENTRIESREAD",
            "3",
        ],
        vec!["XGROUP", "SETID", "s", "g1", "1-0"],
        vec!["XGROUP", "SETID", "s", "g1", "$", "ENTRIESREAD", "2"],
        vec!["XGROUP", "SETID", "s", "g1", "0", "ENTRIESREAD", "-3"],
        vec!["XGROUP", "SETID", "s", "g1", "0", "ENTRIESREAD"],
        vec!["XGROUP", "SETID", "s", "g1", "0", "FOO", "1"],
        vec!["XGROUP", "SETID", "s", "nope", "0"],
        vec!["XGROUP", "SETID", "missing", "g", "0"],
        vec!["XGROUP", "SETID", "s", "g1", "abc"],
        vec!["XGROUP", "SETID", "s", "g1"],
        vec!["XGROUP", "CREATECONSUMER", "s", "g1", "alice"],
        vec!["XGROUP", "CREATECONSUMER", "s", "g1", "alice"],
        vec!["XGROUP", "CREATECONSUMER", "s", "nope", "alice"],
        vec!["XGROUP", "CREATECONSUMER", "missing", "g", "alice"],
        vec!["XGROUP", "CREATECONSUMER", "s", "g1"],
        vec!["XGROUP", "CREATECONSUMER", "s", "g1", "a", "b"],
        vec!["XGROUP", "DELCONSUMER", "s", "g1", "alice"],
        vec!["XGROUP", "DELCONSUMER", "s", "g1", "alice"],
        vec!["XGROUP", "DELCONSUMER", "s", "nope", "alice"],
        vec!["XGROUP", "DELCONSUMER", "missing", "g", "alice"],
        vec!["XGROUP", "DELCONSUMER", "s", "g1"],
        vec!["XGROUP", "DESTROY", "s", "g2"],
        vec!["XGROUP", "DESTROY", "s", "g2"],
        vec!["XGROUP", "DESTROY", "missing", "g2"],
        vec!["XGROUP", "DESTROY", "s"],
        vec!["XGROUP", "DESTROY", "s", "g", "x"],
        vec!["XGROUP", "HELP"],
        vec!["XGROUP", "help"],
        vec!["XGROUP", "HELP", "x"],
        vec!["XGROUP", "FOO"],
        vec!["XGROUP", "FOO", "s"],
        vec!["XGROUP"],
    ] {
        d.cmd(&c);
    }
    stream_state(&mut d, "s");
    stream_state(&mut d, "missing");
    stream_state(&mut d, "missing2");
    d.cmd(&["SET", "str", "x"]);
    d.cmd(&["XGROUP", "CREATE", "str", "g", "$"]);
    d.cmd(&["XGROUP", "CREATE", "str", "g", "$", "MKSTREAM"]);
    d.cmd(&["XGROUP", "SETID", "str", "g", "$"]);
    d.cmd(&["XGROUP", "DESTROY", "str", "g"]);
    d.cmd(&["XGROUP", "CREATECONSUMER", "str", "g", "c"]);
    d.cmd(&["XGROUP", "DELCONSUMER", "str", "g", "c"]);
}

#[test]
fn xreadgroup_delivers_and_reads_history() {
    let mut d = Diff::new();
    for i in 1..=6 {
        d.cmd(&["XADD", "s", &format!("{i}-0"), "i", &i.to_string()]);
        d.cmd(&["XADD", "t", &format!("{i}-5"), "t", &i.to_string()]);
    }
    d.cmd(&["XGROUP", "CREATE", "s", "g", "0"]);
    d.cmd(&["XGROUP", "CREATE", "t", "g", "0"]);
    for protocol in ["2", "3"] {
        d.cmd_type_only(&["HELLO", protocol]);
        d.cmd(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "COUNT",
            "2",
            "STREAMS",
            "s",
            ">",
        ]);
        d.cmd(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "bob",
            "COUNT",
            "1",
            "STREAMS",
            "s",
            "t",
            ">",
            ">",
        ]);
        d.cmd(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"]);
        d.cmd(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "1-0"]);
        d.cmd(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "COUNT",
            "1",
            "STREAMS",
            "s",
            "0",
        ]);
        d.cmd(&["XREADGROUP", "GROUP", "g", "nobody", "STREAMS", "s", "0"]);
        // A deleted pending entry comes back as [id, nil].
        d.cmd(&["XDEL", "s", "1-0"]);
        d.cmd(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"]);
        d.cmd(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "carol",
            "NOACK",
            "COUNT",
            "1",
            "STREAMS",
            "s",
            ">",
        ]);
        d.cmd(&["XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", "0"]);
        d.cmd(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "dave",
            "COUNT",
            "0",
            "STREAMS",
            "t",
            ">",
        ]);
        d.cmd(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "dave",
            "STREAMS",
            "s",
            "t",
            ">",
            "0",
        ]);
        d.cmd(&["XREADGROUP", "GROUP", "g", "dave", "STREAMS", "s", ">"]);
        d.cmd(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "dave",
            "BLOCK",
            "10",
            "STREAMS",
            "s",
            ">",
        ]);
        d.cmd(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "dave",
            "BLOCK",
            "10",
            "STREAMS",
            "s",
            "0",
        ]);
        stream_state(&mut d, "s");
        stream_state(&mut d, "t");
        d.cmd(&["XGROUP", "SETID", "s", "g", "0"]);
        d.cmd(&["XGROUP", "SETID", "t", "g", "0"]);
    }
    resp2(&mut d);
    d.cmd(&["SET", "str", "x"]);
    for c in [
        vec!["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$"],
        vec!["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s"],
        vec!["XREADGROUP", "GROUP", "g", "STREAMS", "s", ">"],
        vec!["XREADGROUP", "GROUP", "g"],
        vec!["XREADGROUP", "STREAMS", "s", ">"],
        vec!["XREADGROUP", "GROUP", "nope", "c", "STREAMS", "s", ">"],
        vec!["XREADGROUP", "GROUP", "g", "c", "STREAMS", "missing", ">"],
        vec![
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "STREAMS",
            "s",
            "missing",
            ">",
            ">",
        ],
        vec!["XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">"],
        vec!["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "abc"],
        vec![
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "COUNT",
            "x",
            "STREAMS",
            "s",
            ">",
        ],
        vec![
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "NOACK",
            "NOACK",
            "STREAMS",
            "s",
            ">",
        ],
        vec![
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "BLOCK",
            "-1",
            "STREAMS",
            "s",
            ">",
        ],
        vec![
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "GROUP",
            "h",
            "d",
            "STREAMS",
            "s",
            ">",
        ],
    ] {
        d.cmd(&c);
    }
    stream_state(&mut d, "s");
}

#[test]
fn xack_and_xpending_forms() {
    let mut d = Diff::new();
    for i in 1..=8 {
        d.cmd(&["XADD", "s", &format!("{i}-0"), "i", &i.to_string()]);
    }
    d.cmd(&["XGROUP", "CREATE", "s", "g", "0"]);
    d.cmd(&["XPENDING", "s", "g"]);
    d.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "alice",
        "COUNT",
        "3",
        "STREAMS",
        "s",
        ">",
    ]);
    d.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "bob",
        "COUNT",
        "3",
        "STREAMS",
        "s",
        ">",
    ]);
    d.cmd(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"]);
    for protocol in ["2", "3"] {
        d.cmd_type_only(&["HELLO", protocol]);
        d.cmd(&["XPENDING", "s", "g"]);
        for c in [
            vec!["XPENDING", "s", "g", "-", "+", "10"],
            vec!["XPENDING", "s", "g", "-", "+", "2"],
            vec!["XPENDING", "s", "g", "(2", "(7", "10"],
            vec!["XPENDING", "s", "g", "-", "+", "10", "bob"],
            vec!["XPENDING", "s", "g", "-", "+", "10", "nobody"],
            vec!["XPENDING", "s", "g", "IDLE", "0", "-", "+", "10"],
            vec!["XPENDING", "s", "g", "IDLE", "1000000", "-", "+", "10"],
            vec!["XPENDING", "s", "g", "-", "+", "0"],
            vec!["XPENDING", "s", "g", "-", "+", "-1"],
            vec!["XPENDING", "s", "g", "5", "3", "10"],
        ] {
            d.cmd_with(&c, pending_idle);
        }
    }
    resp2(&mut d);
    for c in [
        vec!["XPENDING", "s"],
        vec!["XPENDING", "s", "nope"],
        vec!["XPENDING", "missing", "g"],
        vec!["XPENDING", "s", "g", "-"],
        vec!["XPENDING", "s", "g", "-", "+"],
        vec!["XPENDING", "s", "g", "-", "+", "abc"],
        vec!["XPENDING", "s", "g", "abc", "+", "10"],
        vec!["XPENDING", "s", "g", "IDLE", "abc", "-", "+", "10"],
        vec!["XPENDING", "s", "g", "IDLE", "-5", "-", "+", "10"],
        vec!["XPENDING", "s", "g", "IDLE", "5"],
        vec!["XPENDING", "s", "g", "IDLE", "5", "-", "+"],
        vec!["XPENDING", "s", "g", "-", "+", "10", "bob", "extra"],
        vec!["XPENDING", "missing", "g", "-", "+", "10"],
    ] {
        d.cmd_with(&c, pending_idle);
    }
    // Set idle times far apart with XCLAIM IDLE so the filter is exact.
    d.cmd(&[
        "XCLAIM", "s", "g", "alice", "0", "1-0", "2-0", "IDLE", "500000", "JUSTID",
    ]);
    d.cmd_with(
        &["XPENDING", "s", "g", "IDLE", "400000", "-", "+", "10"],
        pending_idle,
    );
    d.cmd_with(
        &[
            "XPENDING", "s", "g", "IDLE", "400000", "-", "+", "10", "bob",
        ],
        pending_idle,
    );
    for c in [
        vec!["XACK", "s", "g", "1-0", "2-0", "99-0"],
        vec!["XACK", "s", "g", "1-0"],
        vec!["XACK", "s", "nope", "3-0"],
        vec!["XACK", "missing", "g", "3-0"],
        vec!["XACK", "s", "g", "abc"],
        vec!["XACK", "s", "g", "3-0", "abc"],
        vec!["XACK", "s", "g"],
        vec!["XACK", "s", "g", "3"],
    ] {
        d.cmd(&c);
    }
    stream_state(&mut d, "s");
    d.cmd(&["SET", "str", "x"]);
    d.cmd(&["XACK", "str", "g", "1-0"]);
    d.cmd(&["XPENDING", "str", "g"]);
}

#[test]
fn xclaim_options_and_filters() {
    let mut d = Diff::new();
    for i in 1..=8 {
        d.cmd(&["XADD", "s", &format!("{i}-0"), "i", &i.to_string()]);
    }
    d.cmd(&["XGROUP", "CREATE", "s", "g", "0"]);
    d.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "alice",
        "COUNT",
        "6",
        "STREAMS",
        "s",
        ">",
    ]);
    for protocol in ["2", "3"] {
        d.cmd_type_only(&["HELLO", protocol]);
        // Too young for a large min-idle: nothing claimed.
        d.cmd(&["XCLAIM", "s", "g", "bob", "3600000", "1-0", "2-0"]);
        d.cmd(&["XCLAIM", "s", "g", "bob", "0", "1-0", "2-0"]);
        d.cmd(&["XCLAIM", "s", "g", "bob", "0", "1-0", "JUSTID"]);
        d.cmd(&[
            "XCLAIM",
            "s",
            "g",
            "carol",
            "0",
            "3-0",
            "IDLE",
            "100000",
            "RETRYCOUNT",
            "7",
        ]);
        d.cmd(&["XCLAIM", "s", "g", "carol", "50000", "3-0", "JUSTID"]);
        d.cmd(&[
            "XCLAIM", "s", "g", "carol", "0", "4-0", "TIME", "1000", "JUSTID",
        ]);
        d.cmd(&["XCLAIM", "s", "g", "dave", "0", "7-0", "8-0"]);
        d.cmd(&["XCLAIM", "s", "g", "dave", "0", "7-0", "8-0", "FORCE"]);
        d.cmd(&["XCLAIM", "s", "g", "dave", "0", "99-0", "FORCE", "JUSTID"]);
        d.cmd(&["XCLAIM", "s", "g", "dave", "0", "5-0", "LASTID", "7-0"]);
        d.cmd(&[
            "XCLAIM", "s", "g", "dave", "0", "5-0", "LASTID", "1-0", "JUSTID",
        ]);
        d.cmd_with(&["XPENDING", "s", "g", "-", "+", "20"], pending_idle);
        d.cmd(&["XDEL", "s", "2-0"]);
        // Deleted entry: Redis 7.0 removes it from the PEL and omits it.
        d.cmd(&["XCLAIM", "s", "g", "eve", "0", "2-0", "6-0"]);
        d.cmd_with(&["XPENDING", "s", "g", "-", "+", "20"], pending_idle);
        stream_state(&mut d, "s");
        d.cmd(&["XADD", "s", "100-0", "x", "y"]);
        d.cmd(&["XGROUP", "SETID", "s", "g", "0"]);
        d.cmd(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"]);
    }
    resp2(&mut d);
    for c in [
        vec!["XCLAIM", "s", "g", "bob"],
        vec!["XCLAIM", "s", "g", "bob", "0"],
        vec!["XCLAIM", "s", "g", "bob", "abc", "1-0"],
        vec!["XCLAIM", "s", "g", "bob", "-1", "1-0"],
        vec!["XCLAIM", "s", "g", "bob", "0", "abc"],
        vec!["XCLAIM", "s", "g", "bob", "0", "1-0", "IDLE"],
        vec!["XCLAIM", "s", "g", "bob", "0", "1-0", "IDLE", "abc"],
        vec!["XCLAIM", "s", "g", "bob", "0", "1-0", "TIME", "abc"],
        vec!["XCLAIM", "s", "g", "bob", "0", "1-0", "RETRYCOUNT", "abc"],
        vec!["XCLAIM", "s", "g", "bob", "0", "1-0", "RETRYCOUNT", "-1"],
        vec!["XCLAIM", "s", "g", "bob", "0", "1-0", "LASTID", "abc"],
        vec!["XCLAIM", "s", "g", "bob", "0", "1-0", "FOO"],
        vec!["XCLAIM", "s", "nope", "bob", "0", "1-0"],
        vec!["XCLAIM", "missing", "g", "bob", "0", "1-0"],
        vec![
            "XCLAIM", "s", "g", "bob", "0", "1-0", "IDLE", "-5", "JUSTID",
        ],
        vec![
            "XCLAIM",
            "s",
            "g",
            "bob",
            "0",
            "1-0",
            "TIME",
            "99999999999999",
            "JUSTID",
        ],
    ] {
        d.cmd(&c);
    }
    d.cmd_with(&["XPENDING", "s", "g", "-", "+", "20"], pending_idle);
    d.cmd(&["SET", "str", "x"]);
    d.cmd(&["XCLAIM", "str", "g", "bob", "0", "1-0"]);
}

#[test]
fn xautoclaim_cursor_count_and_deleted_entries() {
    let mut d = Diff::new();
    for i in 1..=10 {
        d.cmd(&["XADD", "s", &format!("{i}-0"), "i", &i.to_string()]);
    }
    d.cmd(&["XGROUP", "CREATE", "s", "g", "0"]);
    d.cmd(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"]);
    d.cmd(&["XDEL", "s", "3-0", "4-0", "9-0"]);
    for protocol in ["2", "3"] {
        d.cmd_type_only(&["HELLO", protocol]);
        d.cmd(&["XAUTOCLAIM", "s", "g", "bob", "3600000", "0-0"]);
        d.cmd(&["XAUTOCLAIM", "s", "g", "bob", "0", "0-0", "COUNT", "2"]);
        d.cmd(&["XAUTOCLAIM", "s", "g", "bob", "0", "2-0", "COUNT", "3"]);
        d.cmd(&[
            "XAUTOCLAIM",
            "s",
            "g",
            "bob",
            "0",
            "5-0",
            "COUNT",
            "2",
            "JUSTID",
        ]);
        d.cmd(&["XAUTOCLAIM", "s", "g", "carol", "0", "-", "JUSTID"]);
        d.cmd(&["XAUTOCLAIM", "s", "g", "carol", "0", "8-0"]);
        d.cmd(&["XAUTOCLAIM", "s", "g", "carol", "0", "+"]);
        d.cmd_with(&["XPENDING", "s", "g", "-", "+", "20"], pending_idle);
        stream_state(&mut d, "s");
    }
    resp2(&mut d);
    for c in [
        vec!["XAUTOCLAIM", "s", "g", "bob"],
        vec!["XAUTOCLAIM", "s", "g", "bob", "0"],
        vec!["XAUTOCLAIM", "s", "g", "bob", "abc", "0"],
        vec!["XAUTOCLAIM", "s", "g", "bob", "-1", "0"],
        vec!["XAUTOCLAIM", "s", "g", "bob", "0", "abc"],
        vec!["XAUTOCLAIM", "s", "g", "bob", "0", "0", "COUNT"],
        vec!["XAUTOCLAIM", "s", "g", "bob", "0", "0", "COUNT", "0"],
        vec!["XAUTOCLAIM", "s", "g", "bob", "0", "0", "COUNT", "-1"],
        vec!["XAUTOCLAIM", "s", "g", "bob", "0", "0", "COUNT", "abc"],
        vec![
            "XAUTOCLAIM",
            "s",
            "g",
            "bob",
            "0",
            "0",
            "COUNT",
            "9223372036854775807",
        ],
        vec!["XAUTOCLAIM", "s", "g", "bob", "0", "0", "FOO"],
        vec!["XAUTOCLAIM", "s", "nope", "bob", "0", "0"],
        vec!["XAUTOCLAIM", "missing", "g", "bob", "0", "0"],
    ] {
        d.cmd(&c);
    }
    d.cmd(&["SET", "str", "x"]);
    d.cmd(&["XAUTOCLAIM", "str", "g", "bob", "0", "0"]);
}

// ------------------------------------------------------------ XINFO, XSETID

#[test]
fn xinfo_in_both_protocols() {
    let mut d = Diff::new();
    for i in 1..=30 {
        d.cmd(&["XADD", "s", &format!("{i}-0"), "i", &i.to_string()]);
    }
    d.cmd(&["XGROUP", "CREATE", "s", "g1", "0"]);
    d.cmd(&["XGROUP", "CREATE", "s", "g2", "10"]);
    d.cmd(&["XGROUP", "CREATECONSUMER", "s", "g1", "idle-one"]);
    d.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "a",
        "COUNT",
        "5",
        "STREAMS",
        "s",
        ">",
    ]);
    d.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "b",
        "COUNT",
        "15",
        "STREAMS",
        "s",
        ">",
    ]);
    d.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g2",
        "a",
        "COUNT",
        "3",
        "STREAMS",
        "s",
        ">",
    ]);
    for protocol in ["2", "3"] {
        d.cmd_type_only(&["HELLO", protocol]);
        xinfo(&mut d, &["XINFO", "STREAM", "s"]);
        xinfo(&mut d, &["XINFO", "STREAM", "s", "FULL"]);
        xinfo(&mut d, &["XINFO", "STREAM", "s", "FULL", "COUNT", "3"]);
        xinfo(&mut d, &["XINFO", "STREAM", "s", "FULL", "COUNT", "0"]);
        xinfo(&mut d, &["XINFO", "STREAM", "s", "FULL", "COUNT", "-1"]);
        xinfo(&mut d, &["XINFO", "GROUPS", "s"]);
        xinfo(&mut d, &["XINFO", "CONSUMERS", "s", "g1"]);
        xinfo(&mut d, &["XINFO", "CONSUMERS", "s", "g2"]);
    }
    resp2(&mut d);
    d.cmd(&["SET", "str", "x"]);
    for c in [
        vec!["XINFO"],
        vec!["XINFO", "HELP"],
        vec!["XINFO", "help", "x"],
        vec!["XINFO", "FOO"],
        vec!["XINFO", "FOO", "s"],
        vec!["XINFO", "STREAM"],
        vec!["XINFO", "STREAM", "missing"],
        vec!["XINFO", "STREAM", "str"],
        vec!["XINFO", "STREAM", "s", "FOO"],
        vec!["XINFO", "STREAM", "s", "FULL", "COUNT"],
        vec!["XINFO", "STREAM", "s", "FULL", "COUNT", "abc"],
        vec!["XINFO", "STREAM", "s", "FULL", "FOO", "1"],
        vec!["XINFO", "STREAM", "s", "FULL", "COUNT", "1", "x"],
        vec!["XINFO", "GROUPS", "missing"],
        vec!["XINFO", "GROUPS", "str"],
        vec!["XINFO", "GROUPS"],
        vec!["XINFO", "GROUPS", "s", "x"],
        vec!["XINFO", "CONSUMERS", "s"],
        vec!["XINFO", "CONSUMERS", "s", "nope"],
        vec!["XINFO", "CONSUMERS", "missing", "g"],
        vec!["XINFO", "CONSUMERS", "str", "g"],
    ] {
        d.cmd(&c);
    }
}

#[test]
fn xsetid_and_its_errors() {
    let mut d = Diff::new();
    for i in 1..=5 {
        d.cmd(&["XADD", "s", &format!("{i}-0"), "i", &i.to_string()]);
    }
    d.cmd(&["XDEL", "s", "5-0"]);
    for c in [
        vec!["XSETID", "s", "10-0"],
        vec!["XSETID", "s", "5-0"],
        vec!["XSETID", "s", "4-0"],
        vec!["XSETID", "s", "3-0"],
        vec![
            "XSETID",
            "s",
            "20-0",
            "ENTRIESADDED",
            "100",
            "MAXDELETEDID",
            "15-0",
        ],
        vec!["XSETID", "s", "20-0", "ENTRIESADDED", "1"],
        vec!["XSETID", "s", "20-0", "ENTRIESADDED", "-1"],
        vec!["XSETID", "s", "20-0", "ENTRIESADDED", "abc"],
        vec!["XSETID", "s", "20-0", "MAXDELETEDID", "30-0"],
        vec!["XSETID", "s", "20-0", "MAXDELETEDID", "abc"],
        vec!["XSETID", "s", "20-0", "ENTRIESADDED"],
        vec!["XSETID", "s", "20-0", "FOO", "1"],
        vec!["XSETID", "s", "abc"],
        vec!["XSETID", "s", "$"],
        vec!["XSETID", "s"],
        vec!["XSETID", "missing", "1-0"],
        vec![
            "XSETID",
            "s",
            "25",
            "ENTRIESADDED",
            "200",
            "MAXDELETEDID",
            "22",
        ],
        vec!["XSETID", "s", "18446744073709551615-18446744073709551615"],
    ] {
        d.cmd(&c);
        xinfo(&mut d, &["XINFO", "STREAM", "s"]);
    }
    d.cmd(&["XADD", "s", "*", "a", "b"]);
    d.cmd(&["XADD", "e", "MAXLEN", "0", "1-0", "a", "b"]);
    d.cmd(&["XSETID", "e", "0-0"]);
    d.cmd(&[
        "XSETID",
        "e",
        "0-0",
        "ENTRIESADDED",
        "0",
        "MAXDELETEDID",
        "0-0",
    ]);
    d.cmd(&[
        "XSETID",
        "e",
        "5-0",
        "ENTRIESADDED",
        "1",
        "MAXDELETEDID",
        "6-0",
    ]);
    d.cmd(&[
        "XSETID",
        "e",
        "5-0",
        "ENTRIESADDED",
        "0",
        "MAXDELETEDID",
        "1-0",
    ]);
    xinfo(&mut d, &["XINFO", "STREAM", "e"]);
    d.cmd(&["SET", "str", "x"]);
    d.cmd(&["XSETID", "str", "1-0"]);
}

/// entries-read and lag of a group through XDEL, XTRIM, XSETID and SETID.
#[test]
fn entries_read_and_lag_accounting() {
    let mut d = Diff::new();
    for i in 1..=10 {
        d.cmd(&["XADD", "s", &format!("{i}-0"), "i", &i.to_string()]);
    }
    d.cmd(&["XGROUP", "CREATE", "s", "g", "0"]);
    d.cmd(&["XGROUP", "CREATE", "s", "h", "$"]);
    d.cmd(&["XGROUP", "CREATE", "s", "m", "5-0"]);
    let groups = |d: &mut Diff| {
        xinfo(d, &["XINFO", "GROUPS", "s"]);
    };
    groups(&mut d);
    d.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "COUNT",
        "3",
        "STREAMS",
        "s",
        ">",
    ]);
    d.cmd(&[
        "XREADGROUP",
        "GROUP",
        "m",
        "c",
        "COUNT",
        "1",
        "STREAMS",
        "s",
        ">",
    ]);
    groups(&mut d);
    d.cmd(&["XDEL", "s", "7-0"]);
    groups(&mut d);
    d.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "COUNT",
        "2",
        "STREAMS",
        "s",
        ">",
    ]);
    d.cmd(&["XREADGROUP", "GROUP", "m", "c", "STREAMS", "s", ">"]);
    groups(&mut d);
    d.cmd(&["XDEL", "s", "1-0"]);
    groups(&mut d);
    d.cmd(&["XTRIM", "s", "MAXLEN", "3"]);
    groups(&mut d);
    d.cmd(&["XADD", "s", "11-0", "a", "b"]);
    groups(&mut d);
    d.cmd(&["XDEL", "s", "11-0"]);
    groups(&mut d);
    d.cmd(&["XGROUP", "SETID", "s", "g", "9-0"]);
    groups(&mut d);
    d.cmd(&["XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "0"]);
    groups(&mut d);
    d.cmd(&["XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD", "1000"]);
    groups(&mut d);
    d.cmd(&[
        "XSETID",
        "s",
        "11-0",
        "ENTRIESADDED",
        "50",
        "MAXDELETEDID",
        "11-0",
    ]);
    groups(&mut d);
    d.cmd(&["XADD", "s", "12-0", "a", "b"]);
    d.cmd(&["XREADGROUP", "GROUP", "h", "c", "STREAMS", "s", ">"]);
    groups(&mut d);
    d.cmd(&["XGROUP", "CREATE", "s", "late", "0", "ENTRIESREAD", "45"]);
    d.cmd(&["XGROUP", "CREATE", "s", "later", "11-0"]);
    groups(&mut d);
    d.cmd(&["XTRIM", "s", "MAXLEN", "0"]);
    groups(&mut d);
    xinfo(&mut d, &["XINFO", "STREAM", "s", "FULL"]);
}

// ------------------------------------------------------------ events

#[test]
fn keyspace_events_of_stream_commands() {
    let mut d = Diff::new();
    let mut redis_sub = Subscriber::new(&d.redis_server);
    let mut firn_sub = Subscriber::new(&d.firn_server);
    d.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
    let steps: &[&[&str]] = &[
        &["XADD", "s", "1-0", "a", "b"],
        &["XADD", "s", "2-0", "a", "b"],
        &["XADD", "s", "MAXLEN", "1", "3-0", "a", "b"],
        &["XADD", "s", "MAXLEN", "5", "4-0", "a", "b"],
        &["XADD", "nope", "NOMKSTREAM", "1-0", "a", "b"],
        &["XADD", "s", "1-0", "a", "b"],
        &["XTRIM", "s", "MAXLEN", "1"],
        &["XTRIM", "s", "MAXLEN", "1"],
        &["XADD", "s", "5-0", "a", "b"],
        &["XDEL", "s", "4-0"],
        &["XDEL", "s", "4-0"],
        &["XGROUP", "CREATE", "s", "g", "0"],
        &["XGROUP", "CREATE", "s", "g", "0"],
        &["XGROUP", "CREATE", "new", "g", "$", "MKSTREAM"],
        &["XGROUP", "CREATECONSUMER", "s", "g", "c"],
        &["XGROUP", "CREATECONSUMER", "s", "g", "c"],
        &["XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"],
        &["XREADGROUP", "GROUP", "g", "c3", "STREAMS", "s", ">"],
        &["XGROUP", "SETID", "s", "g", "0"],
        &["XCLAIM", "s", "g", "c4", "0", "5-0"],
        &["XAUTOCLAIM", "s", "g", "c5", "0", "0"],
        &["XACK", "s", "g", "5-0"],
        &["XGROUP", "DELCONSUMER", "s", "g", "c"],
        &["XGROUP", "DELCONSUMER", "s", "g", "c"],
        &["XGROUP", "DESTROY", "s", "g"],
        &["XGROUP", "DESTROY", "s", "g"],
        &["XSETID", "s", "100-0"],
        &[
            "XSETID",
            "s",
            "100-0",
            "ENTRIESADDED",
            "10",
            "MAXDELETEDID",
            "50-0",
        ],
        &["XTRIM", "s", "MAXLEN", "0"],
        &["DEL", "s"],
    ];
    for (i, step) in steps.iter().enumerate() {
        d.cmd(step);
        let id = (i + 1).to_string();
        d.cmd(&["PUBLISH", MARKER, &id]);
        let redis = redis_sub.step(&id);
        let firn = firn_sub.step(&id);
        if redis != firn {
            d.fail("keyspace events differ", &render(&redis), &render(&firn));
        }
    }
}

fn render(events: &[Message]) -> R {
    R::Array(Some(
        events
            .iter()
            .map(|(channel, message)| R::Simple(format!("{channel} {message}")))
            .collect(),
    ))
}

// ------------------------------------------------------------ keyspace

#[test]
fn wrongtype_both_ways_and_type_encoding() {
    let mut d = Diff::new();
    d.cmd(&["XADD", "s", "1-0", "a", "b"]);
    d.cmd(&["TYPE", "s"]);
    d.cmd(&["OBJECT", "ENCODING", "s"]);
    d.cmd(&["XGROUP", "CREATE", "s", "g", "0"]);
    d.cmd(&["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"]);
    for c in [
        vec!["GET", "s"],
        vec!["LPUSH", "s", "x"],
        vec!["HSET", "s", "f", "v"],
        vec!["SADD", "s", "m"],
        vec!["ZADD", "s", "1", "m"],
        vec!["APPEND", "s", "x"],
        vec!["PFADD", "s", "x"],
        vec!["STRLEN", "s"],
        vec!["XLEN", "s"],
    ] {
        d.cmd(&c);
    }
    d.cmd(&["RPUSH", "l", "x"]);
    d.cmd(&["HSET", "h", "f", "v"]);
    for key in ["l", "h"] {
        for c in [
            vec!["XADD", key, "1-0", "a", "b"],
            vec!["XLEN", key],
            vec!["XRANGE", key, "-", "+"],
            vec!["XREVRANGE", key, "+", "-"],
            vec!["XDEL", key, "1-0"],
            vec!["XTRIM", key, "MAXLEN", "0"],
            vec!["XREAD", "STREAMS", key, "0"],
            vec!["XREADGROUP", "GROUP", "g", "c", "STREAMS", key, ">"],
            vec!["XGROUP", "CREATE", key, "g", "0"],
            vec!["XACK", key, "g", "1-0"],
            vec!["XPENDING", key, "g"],
            vec!["XCLAIM", key, "g", "c", "0", "1-0"],
            vec!["XAUTOCLAIM", key, "g", "c", "0", "0"],
            vec!["XINFO", "STREAM", key],
            vec!["XSETID", key, "1-0"],
        ] {
            d.cmd(&c);
        }
    }
    d.cmd(&["SET", "s", "string"]);
    d.cmd(&["TYPE", "s"]);
}

#[test]
fn copy_rename_move_and_del_keep_the_whole_stream() {
    let mut d = Diff::new();
    for i in 1..=250 {
        d.cmd(&["XADD", "s", &format!("{i}-0"), "i", &i.to_string()]);
    }
    d.cmd(&["XDEL", "s", "100-0"]);
    d.cmd(&["XGROUP", "CREATE", "s", "g", "0"]);
    d.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "a",
        "COUNT",
        "3",
        "STREAMS",
        "s",
        ">",
    ]);
    d.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "b",
        "COUNT",
        "2",
        "STREAMS",
        "s",
        ">",
    ]);
    d.cmd(&["XGROUP", "CREATE", "s", "h", "$"]);
    d.cmd(&["COPY", "s", "c"]);
    d.cmd(&["COPY", "s", "c"]);
    stream_state(&mut d, "c");
    d.cmd(&["XRANGE", "c", "-", "+", "COUNT", "5"]);
    d.cmd(&["XREVRANGE", "c", "+", "-", "COUNT", "5"]);
    // The copy is independent of the original.
    d.cmd(&["XACK", "c", "g", "1-0"]);
    d.cmd(&["XADD", "c", "300-0", "x", "y"]);
    d.cmd(&["XGROUP", "DESTROY", "c", "h"]);
    stream_state(&mut d, "s");
    stream_state(&mut d, "c");
    d.cmd(&["SET", "str", "x"]);
    d.cmd(&["COPY", "s", "str"]);
    d.cmd(&["COPY", "s", "str", "REPLACE"]);
    stream_state(&mut d, "str");
    d.cmd(&["RENAME", "c", "r"]);
    stream_state(&mut d, "r");
    d.cmd(&["EXISTS", "c"]);
    d.cmd(&["XLEN", "c"]);
    d.cmd(&["RENAME", "r", "s"]);
    stream_state(&mut d, "s");
    d.cmd(&["COPY", "s", "other", "DB", "1"]);
    d.cmd(&["MOVE", "s", "1"]);
    d.cmd(&["MOVE", "str", "1"]);
    d.cmd(&["EXISTS", "s"]);
    d.cmd(&["SELECT", "1"]);
    stream_state(&mut d, "s");
    stream_state(&mut d, "other");
    d.cmd(&["DEL", "s", "other"]);
    d.cmd(&["XLEN", "s"]);
    d.cmd(&["XINFO", "STREAM", "s"]);
    d.cmd(&["XPENDING", "s", "g"]);
    d.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    xinfo(&mut d, &["XINFO", "STREAM", "s", "FULL"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["UNLINK", "str"]);
    d.cmd(&["DBSIZE"]);
}

#[test]
fn streams_inside_multi_and_scripts() {
    let mut d = Diff::new();
    for round in 0..2 {
        if round == 1 {
            resp3(&mut d);
        }
        d.cmd(&["MULTI"]);
        d.cmd(&["XADD", "s", &format!("{}-1", round + 1), "a", "b"]);
        d.cmd(&["XGROUP", "CREATE", "s", &format!("g{round}"), "0"]);
        d.cmd(&[
            "XREADGROUP",
            "GROUP",
            &format!("g{round}"),
            "c",
            "STREAMS",
            "s",
            ">",
        ]);
        d.cmd(&["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]);
        d.cmd(&["XREAD", "BLOCK", "0", "STREAMS", "s", "0"]);
        d.cmd(&[
            "XREADGROUP",
            "GROUP",
            &format!("g{round}"),
            "c",
            "BLOCK",
            "0",
            "STREAMS",
            "s",
            ">",
        ]);
        d.cmd(&["XREAD", "BLOCK", "0", "STREAMS", "empty", "0"]);
        d.cmd(&["XLEN", "s"]);
        d.cmd(&["EXEC"]);
    }
    resp2(&mut d);
    d.cmd(&[
        "EVAL",
        "return redis.call('XREAD', 'BLOCK', '0', 'STREAMS', 's', '$')",
        "0",
    ]);
    d.cmd(&[
        "EVAL",
        "return redis.call('XREAD', 'BLOCK', '0', 'STREAMS', 's', '0')",
        "0",
    ]);
    d.cmd(&[
        "EVAL",
        "return redis.call('XREADGROUP', 'GROUP', 'g0', 'x', 'BLOCK', '0', 'STREAMS', 's', '>')",
        "0",
    ]);
    d.cmd(&[
        "EVAL",
        "return redis.call('XADD', KEYS[1], '10-0', 'a', 'b')",
        "1",
        "s",
    ]);
    d.cmd(&[
        "EVAL",
        "return redis.call('XRANGE', KEYS[1], '-', '+')",
        "1",
        "s",
    ]);
    d.cmd(&[
        "EVAL",
        "return redis.pcall('XADD', KEYS[1], '1-0', 'a', 'b')",
        "1",
        "s",
    ]);
    d.cmd(&[
        "EVAL",
        "return redis.call('XADD', KEYS[1], '*', 'a', 'b') ~= nil",
        "1",
        "s",
    ]);
}

// ------------------------------------------------------------ blocking

#[test]
fn xread_block_is_woken_by_xadd() {
    let mut d = Diff::new();
    let writer = d.open_client();
    d.use_client(writer);
    d.cmd(&["XADD", "s", "1-0", "a", "1"]);
    for protocol in ["2", "3"] {
        d.use_client(0);
        d.cmd_type_only(&["HELLO", protocol]);
        d.send(&["XREAD", "BLOCK", "0", "STREAMS", "other", "s", "$", "$"]);
        d.wait_blocked(writer, writer, 1);
        let (id, next) = if protocol == "2" {
            ("2-0", "20-0")
        } else {
            ("30-0", "300-0")
        };
        d.cmd(&["XADD", "s", id, "a", "2"]);
        d.use_client(0);
        d.read_both();
        // A reader past the last ID with COUNT.
        d.send(&["XREAD", "COUNT", "1", "BLOCK", "5000", "STREAMS", "s", id]);
        d.wait_blocked(writer, writer, 1);
        d.cmd(&["XADD", "other", &format!("{protocol}-0"), "o", "o"]);
        d.cmd(&["XADD", "s", next, "a", "3"]);
        d.use_client(0);
        d.read_both();
    }
}

#[test]
fn one_xadd_serves_two_readers() {
    let mut d = Diff::new();
    let second = d.open_client();
    let writer = d.open_client();
    d.use_client(writer);
    d.cmd(&["XADD", "s", "1-0", "a", "1"]);
    d.use_client(0);
    d.send(&["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]);
    d.wait_blocked(writer, second, 1);
    d.send(&["XREAD", "BLOCK", "0", "STREAMS", "s", "1-0"]);
    d.wait_blocked(writer, writer, 2);
    d.cmd(&["XADD", "s", "2-0", "a", "2"]);
    d.use_client(0);
    d.read_both();
    d.use_client(second);
    d.read_both();
    d.wait_blocked(writer, writer, 0);
}

#[test]
fn xreadgroup_block_is_woken_and_sees_its_group_go() {
    let mut d = Diff::new();
    let writer = d.open_client();
    d.use_client(writer);
    d.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    d.use_client(0);
    d.send(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "BLOCK",
        "0",
        "STREAMS",
        "s",
        ">",
    ]);
    d.wait_blocked(writer, writer, 1);
    d.cmd(&["XADD", "s", "1-0", "a", "1"]);
    d.use_client(0);
    d.read_both();
    d.cmd_with(&["XPENDING", "s", "g", "-", "+", "10"], pending_idle);
    // A write that is not an XADD (a group created) does not serve it.
    d.send(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "BLOCK",
        "0",
        "STREAMS",
        "s",
        ">",
    ]);
    d.wait_blocked(writer, writer, 1);
    d.cmd(&["XGROUP", "CREATE", "s", "other", "0"]);
    d.cmd(&["XADD", "s", "2-0", "a", "2"]);
    d.use_client(0);
    d.read_both();
    // The key deleted: the reader gets an error.
    d.send(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "BLOCK",
        "0",
        "STREAMS",
        "s",
        ">",
    ]);
    d.wait_blocked(writer, writer, 1);
    d.cmd(&["DEL", "s"]);
    d.use_client(0);
    d.read_both();
    // The key replaced by another type: the same error.
    d.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    d.send(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "BLOCK",
        "0",
        "STREAMS",
        "s",
        ">",
    ]);
    d.wait_blocked(writer, writer, 1);
    d.cmd(&["SET", "s", "x"]);
    d.use_client(0);
    d.read_both();
    // The group destroyed: NOGROUP.
    d.cmd(&["DEL", "s"]);
    d.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    d.send(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "BLOCK",
        "0",
        "STREAMS",
        "s",
        ">",
    ]);
    d.wait_blocked(writer, writer, 1);
    d.cmd(&["XGROUP", "DESTROY", "s", "g"]);
    d.use_client(0);
    d.read_both();
    d.wait_blocked(writer, 0, 0);
}

#[test]
fn multi_that_adds_and_deletes_does_not_wake_xread() {
    let mut d = Diff::new();
    let writer = d.open_client();
    d.use_client(0);
    d.send(&["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]);
    d.wait_blocked(writer, writer, 1);
    d.cmd(&["MULTI"]);
    d.cmd(&["XADD", "s", "1-0", "a", "1"]);
    d.cmd(&["DEL", "s"]);
    d.cmd(&["EXEC"]);
    d.wait_blocked(writer, writer, 1);
    d.cmd(&["XADD", "s", "2-0", "a", "2"]);
    d.use_client(0);
    d.read_both();
}

/// Keys written one after the other serve a reader from the key written
/// first (Redis's ready-keys order), not the first key of the command,
/// even when both writes reach Firn before the reader runs again (they are
/// pipelined). Within one transaction Firn cannot tell the order of the
/// keys (a batch's keys are sorted), so that case is not compared.
#[test]
fn the_first_key_written_serves_a_reader_of_several() {
    let mut d = Diff::new();
    let writer = d.open_client();
    d.use_client(writer);
    d.cmd(&["XADD", "s", "1-0", "a", "1"]);
    d.cmd(&["XGROUP", "CREATE", "s", "g", "$"]);
    d.cmd(&["XGROUP", "CREATE", "t", "g", "$", "MKSTREAM"]);
    for block in [
        vec!["XREAD", "BLOCK", "0", "STREAMS", "s", "t", "$", "$"],
        vec![
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "BLOCK",
            "0",
            "STREAMS",
            "s",
            "t",
            ">",
            ">",
        ],
    ] {
        d.cmd(&["XGROUP", "SETID", "s", "g", "$"]);
        d.cmd(&["XGROUP", "SETID", "t", "g", "$"]);
        d.use_client(0);
        d.send(&block);
        d.wait_blocked(writer, writer, 1);
        d.pipeline(&[
            command(&["XADD", "t", "1-*", "a", "1"]),
            command(&["XADD", "s", "2-*", "a", "1"]),
        ]);
        d.use_client(0);
        d.read_both();
        d.cmd(&["XPENDING", "s", "g"]);
        d.cmd(&["XPENDING", "t", "g"]);
    }
}

/// Only what Redis signals wakes a stream reader: XADD, the key deleted or
/// replaced, the group destroyed. XGROUP SETID and XACK do not, so the
/// reader is served by the next XADD, from the group's new position.
#[test]
fn writes_that_add_no_entry_do_not_serve_a_group_reader() {
    let mut d = Diff::new();
    let writer = d.open_client();
    d.use_client(writer);
    d.cmd(&["XADD", "s", "1-0", "a", "1"]);
    d.cmd(&["XGROUP", "CREATE", "s", "g", "$"]);
    d.use_client(0);
    d.send(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "BLOCK",
        "0",
        "STREAMS",
        "s",
        ">",
    ]);
    d.wait_blocked(writer, writer, 1);
    d.cmd(&["XGROUP", "SETID", "s", "g", "0"]);
    d.cmd(&["XGROUP", "CREATECONSUMER", "s", "g", "other"]);
    d.cmd(&["XACK", "s", "g", "1-0"]);
    d.wait_blocked(writer, writer, 1);
    d.cmd(&["XADD", "s", "2-0", "a", "2"]);
    d.use_client(0);
    d.read_both();
    stream_state(&mut d, "s");
}

/// An XADD whose entry is gone before the reader runs (trimmed at once,
/// or deleted in the same transaction) still serves it: an empty list.
#[test]
fn an_xadd_that_leaves_no_entry_serves_an_empty_reply() {
    let mut d = Diff::new();
    let writer = d.open_client();
    d.use_client(writer);
    d.cmd(&["XADD", "s", "1-0", "a", "1"]);
    d.cmd(&["XGROUP", "CREATE", "s", "g", "$"]);
    for (block, writes) in [
        (
            vec!["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
            vec![vec!["XADD", "s", "MAXLEN", "0", "2-0", "a", "1"]],
        ),
        (
            vec![
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">",
            ],
            vec![vec!["XADD", "s", "MAXLEN", "0", "3-0", "a", "1"]],
        ),
        (
            vec!["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
            vec![
                vec!["MULTI"],
                vec!["XADD", "s", "4-0", "a", "1"],
                vec!["XDEL", "s", "4-0"],
                vec!["EXEC"],
            ],
        ),
    ] {
        d.use_client(0);
        d.send(&block);
        d.wait_blocked(writer, writer, 1);
        for w in writes {
            d.cmd(&w);
        }
        d.use_client(0);
        d.read_both();
        stream_state(&mut d, "s");
    }
}

/// What happens to the key while readers wait: XREAD waits on through a
/// DEL or a type change; XREADGROUP ends with an error when its key is
/// renamed away, moved, flushed or expired (by active expiry: a lazy one
/// at the next XADD would make it NOGROUP, timing that is not compared),
/// and is served when a stream
/// with its group is renamed onto its key.
#[test]
fn readers_through_key_changes() {
    let mut d = Diff::new();
    let writer = d.open_client();
    d.use_client(writer);
    d.cmd(&["XADD", "s", "1-0", "a", "1"]);
    d.use_client(0);
    d.send(&["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]);
    d.wait_blocked(writer, writer, 1);
    d.cmd(&["DEL", "s"]);
    d.cmd(&["SET", "s", "x"]);
    d.cmd(&["DEL", "s"]);
    d.wait_blocked(writer, writer, 1);
    d.cmd(&["XADD", "s", "2-0", "a", "2"]);
    d.use_client(0);
    d.read_both();
    for change in [
        vec!["RENAME", "s", "elsewhere"],
        vec!["MOVE", "s", "1"],
        vec!["FLUSHALL"],
        vec!["PEXPIRE", "s", "20"],
    ] {
        d.use_client(writer);
        d.cmd(&["DEL", "s", "elsewhere"]);
        d.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
        d.use_client(0);
        d.send(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "BLOCK",
            "0",
            "STREAMS",
            "s",
            ">",
        ]);
        d.wait_blocked(writer, writer, 1);
        // An expired key ends the wait when active expiry deletes it.
        d.cmd(&change);
        d.use_client(0);
        d.read_both();
    }
    d.use_client(writer);
    d.cmd(&["DEL", "s"]);
    d.cmd(&["XADD", "t", "1-0", "a", "b"]);
    d.cmd(&["XGROUP", "CREATE", "t", "g", "0"]);
    d.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    d.use_client(0);
    d.send(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "BLOCK",
        "0",
        "STREAMS",
        "s",
        ">",
    ]);
    d.wait_blocked(writer, writer, 1);
    d.cmd(&["RENAME", "t", "s"]);
    d.use_client(0);
    d.read_both();
}

#[test]
fn blocked_readers_time_out_and_are_unblocked() {
    let mut d = Diff::new();
    let other = d.open_client();
    d.use_client(0);
    d.cmd(&["XADD", "s", "1-0", "a", "1"]);
    d.cmd(&["XGROUP", "CREATE", "s", "g", "$"]);
    for protocol in ["2", "3"] {
        d.cmd_type_only(&["HELLO", protocol]);
        d.cmd(&["XREAD", "BLOCK", "20", "STREAMS", "s", "$"]);
        d.cmd(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "BLOCK",
            "20",
            "STREAMS",
            "s",
            ">",
        ]);
    }
    resp2(&mut d);
    for (how, block) in [
        ("TIMEOUT", vec!["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]),
        ("ERROR", vec!["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]),
        (
            "TIMEOUT",
            vec![
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">",
            ],
        ),
        (
            "ERROR",
            vec![
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">",
            ],
        ),
    ] {
        d.use_client(0);
        let ids = {
            let pair = d.client();
            (
                pair.redis.cmd(&["CLIENT", "ID"]).as_int().unwrap_or(-1),
                pair.firn.cmd(&["CLIENT", "ID"]).as_int().unwrap_or(-1),
            )
        };
        d.send(&block);
        d.wait_blocked(other, other, 1);
        let pair = d.client();
        let redis = pair
            .redis
            .cmd(&["CLIENT", "UNBLOCK", &ids.0.to_string(), how]);
        let firn = pair
            .firn
            .cmd(&["CLIENT", "UNBLOCK", &ids.1.to_string(), how]);
        assert_eq!(redis, firn, "CLIENT UNBLOCK {how}");
        d.use_client(0);
        d.read_both();
        d.cmd(&["PING"]);
    }
}

// ------------------------------------------------------------ random

const KEYS: [&str; 3] = ["s1", "s2", "s3"];
const GROUPS: [&str; 2] = ["g1", "g2"];
const CONSUMERS: [&str; 3] = ["c1", "c2", "c3"];

struct Gen {
    rng: StdRng,
    /// The next explicit ID's milliseconds, per key (always increasing).
    next_ms: [u64; 3],
}

impl Gen {
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.rng.random_range(0..items.len())]
    }

    fn key_index(&mut self) -> usize {
        self.rng.random_range(0..KEYS.len())
    }

    /// An ID near the stream's range: existing, past, or ahead.
    fn id(&mut self, k: usize) -> String {
        let top = self.next_ms[k];
        match self.rng.random_range(0..6) {
            0 => "-".into(),
            1 => "+".into(),
            2 => "0".into(),
            _ => format!(
                "{}-{}",
                self.rng.random_range(0..=top),
                self.rng.random_range(0..3)
            ),
        }
    }

    fn command(&mut self) -> Vec<String> {
        let k = self.key_index();
        let key = KEYS[k].to_string();
        let group = self.pick(&GROUPS).to_string();
        let consumer = self.pick(&CONSUMERS).to_string();
        let s = |x: &str| x.to_string();
        match self.rng.random_range(0..22) {
            0..=4 => {
                let mut c = vec![s("XADD"), key.clone()];
                match self.rng.random_range(0..8) {
                    0 => c.extend([s("MAXLEN"), self.rng.random_range(0..20).to_string()]),
                    1 => c.extend([
                        s("MAXLEN"),
                        s("~"),
                        self.rng.random_range(0..20).to_string(),
                    ]),
                    2 => c.extend([s("MINID"), self.id(k)]),
                    3 => c.push(s("NOMKSTREAM")),
                    _ => {}
                }
                self.next_ms[k] += self.rng.random_range(0..3);
                if self.rng.random_range(0..4) == 0 {
                    c.push(format!("{}-*", self.next_ms[k]));
                } else {
                    c.push(format!(
                        "{}-{}",
                        self.next_ms[k],
                        self.rng.random_range(0..3)
                    ));
                }
                for _ in 0..self.rng.random_range(1..3) {
                    c.push(s(self.pick(&["f", "g", "field"])));
                    c.push("x".repeat(self.rng.random_range(0..40)));
                }
                c
            }
            5 => vec![s("XDEL"), key.clone(), self.id(k), self.id(k)],
            6 => {
                let mut c = vec![s("XTRIM"), key.clone()];
                if self.rng.random_range(0..2) == 0 {
                    c.extend([s("MAXLEN"), self.rng.random_range(0..15).to_string()]);
                } else {
                    c.extend([s("MINID"), self.id(k)]);
                }
                c
            }
            7 => vec![s("XRANGE"), key.clone(), self.id(k), self.id(k)],
            8 => vec![
                s("XREVRANGE"),
                key.clone(),
                self.id(k),
                self.id(k),
                s("COUNT"),
                self.rng.random_range(0..5).to_string(),
            ],
            9 => {
                let mut c = vec![s("XGROUP"), s("CREATE"), key.clone(), group, self.id(k)];
                if self.rng.random_range(0..3) == 0 {
                    c.push(s("MKSTREAM"));
                }
                c
            }
            10 => vec![s("XGROUP"), s("SETID"), key.clone(), group, self.id(k)],
            11 => vec![s("XGROUP"), s("DESTROY"), key.clone(), group],
            12 => vec![s("XGROUP"), s("DELCONSUMER"), key.clone(), group, consumer],
            13 | 14 => {
                let mut c = vec![s("XREADGROUP"), s("GROUP"), group, consumer];
                if self.rng.random_range(0..2) == 0 {
                    c.extend([s("COUNT"), self.rng.random_range(1..5).to_string()]);
                }
                if self.rng.random_range(0..5) == 0 {
                    c.push(s("NOACK"));
                }
                let id = if self.rng.random_range(0..3) == 0 {
                    s("0")
                } else {
                    s(">")
                };
                c.extend([s("STREAMS"), key.clone(), id]);
                c
            }
            15 => vec![s("XACK"), key.clone(), group, self.id(k), self.id(k)],
            16 => {
                let mut c = vec![
                    s("XCLAIM"),
                    key.clone(),
                    group,
                    consumer,
                    s("0"),
                    self.id(k),
                    self.id(k),
                ];
                match self.rng.random_range(0..4) {
                    0 => c.push(s("JUSTID")),
                    1 => c.push(s("FORCE")),
                    2 => c.extend([s("RETRYCOUNT"), s("3")]),
                    _ => {}
                }
                c
            }
            17 => {
                let mut c = vec![
                    s("XAUTOCLAIM"),
                    key.clone(),
                    group,
                    consumer,
                    s("0"),
                    self.id(k),
                ];
                if self.rng.random_range(0..2) == 0 {
                    c.extend([s("COUNT"), self.rng.random_range(1..4).to_string()]);
                }
                if self.rng.random_range(0..3) == 0 {
                    c.push(s("JUSTID"));
                }
                c
            }
            18 => vec![
                s("XREAD"),
                s("COUNT"),
                s("3"),
                s("STREAMS"),
                key.clone(),
                self.id(k),
            ],
            19 => vec![
                s("XSETID"),
                key.clone(),
                format!("{}-5", self.next_ms[k] + self.rng.random_range(0..2)),
            ],
            20 => vec![s("XINFO"), s("GROUPS"), key.clone()],
            _ => vec![s("XLEN"), key.clone()],
        }
    }
}

/// XCLAIM, XPENDING and XINFO replies carry times; the rest compare exactly.
fn random_compare(d: &mut Diff, c: &[String]) {
    match c[0].as_str() {
        "XINFO" | "XCLAIM" | "XAUTOCLAIM" => {
            d.cmd_with(c, times);
        }
        _ => {
            d.cmd(c);
        }
    }
}

#[test]
fn random_stream_and_group_sequences() {
    for seed in random_seeds(4000, 4) {
        let mut d = Diff::new();
        d.context = format!("seed {seed} (FIRN_DIFF_SEED={seed})");
        if seed % 2 == 1 {
            d.cmd(&["CONFIG", "SET", "stream-node-max-entries", "4"]);
        }
        let mut g = Gen {
            rng: StdRng::seed_from_u64(seed),
            next_ms: [1, 1, 1],
        };
        for _ in 0..random_steps(400) {
            let c = g.command();
            random_compare(&mut d, &c);
        }
        for key in KEYS {
            d.cmd(&["XRANGE", key, "-", "+"]);
            stream_state(&mut d, key);
        }
    }
}

/// Extreme IDLE and TIME values wrap as Redis's C arithmetic does and are
/// clamped to now; nothing overflows.
#[test]
fn xclaim_with_extreme_idle_and_time() {
    let mut d = Diff::new();
    d.cmd(&["XADD", "s", "1-1", "f", "v"]);
    d.cmd(&["XGROUP", "CREATE", "s", "g", "0"]);
    d.cmd(&["XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">"]);
    for (opt, value) in [
        ("IDLE", "-9223372036854775808"),
        ("IDLE", "9223372036854775807"),
        ("TIME", "-9223372036854775808"),
        ("TIME", "9223372036854775807"),
    ] {
        d.cmd(&["XCLAIM", "s", "g", "b", "0", "1-1", opt, value, "JUSTID"]);
        d.cmd(&["XPENDING", "s", "g"]);
    }
}
