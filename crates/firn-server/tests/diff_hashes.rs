//! Differential tests of the hash commands against redis-server 7.0.15:
//! HSET/HSETNX/HMSET, HGET/HMGET/HGETALL/HKEYS/HVALS, HLEN/HSTRLEN/
//! HEXISTS, HDEL, HINCRBY/HINCRBYFLOAT, HRANDFIELD, HSCAN, OBJECT ENCODING
//! and DUMP/RESTORE of hashes, WRONGTYPE both ways, arity errors, expiry,
//! RESP3 shapes, a seeded random sequence mixed with string commands, and
//! a kill -9 / clean restart test.
//!
//! Firn walks a hash in field byte order where Redis answers a small hash
//! in insertion order: whole-hash replies are compared with their pairs
//! sorted, or exactly when the fields were inserted in byte order.
//! HRANDFIELD picks at random: its replies are checked for shape, count,
//! distinctness and membership, or compared when they must be the whole
//! hash.

use firn_testkit::{encode_request, env::random_seeds, reply::assert_err, Diff, Kind, Server, R};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, HashSet};

/// Compares a flat field/value reply (RESP2 HGETALL, HRANDFIELD WITHVALUES
/// of the whole hash) with its pairs sorted.
fn pairs(d: &mut Diff, args: &[&str]) -> R {
    d.cmd_with(args, R::pairs_sorted)
}

fn fill(d: &mut Diff, key: &str, fields: usize, value_len: usize) {
    let mut cmd = vec!["HSET".to_string(), key.to_string()];
    for i in 0..fields {
        cmd.push(format!("f{i:04}"));
        cmd.push("v".repeat(value_len));
    }
    d.cmd(&cmd);
}

// ------------------------------------------------------------------ set and get

#[test]
fn hset_hget_hmget_and_counts() {
    let mut d = Diff::new();
    d.cmd(&["HSET", "h", "a", "1"]);
    d.cmd(&["HSET", "h", "a", "2", "b", "3", "a", "4"]);
    d.cmd(&["HGET", "h", "a"]);
    d.cmd(&["HGET", "h", "b"]);
    d.cmd(&["HGET", "h", "nope"]);
    d.cmd(&["HGET", "missing", "a"]);
    d.cmd(&["HMGET", "h", "a", "nope", "b", "a"]);
    d.cmd(&["HMGET", "missing", "a", "b"]);
    d.cmd(&["HLEN", "h"]);
    d.cmd(&["HLEN", "missing"]);
    d.cmd(&["HEXISTS", "h", "a"]);
    d.cmd(&["HEXISTS", "h", "nope"]);
    d.cmd(&["HEXISTS", "missing", "a"]);
    d.cmd(&["HSTRLEN", "h", "a"]);
    d.cmd(&["HSTRLEN", "h", "nope"]);
    d.cmd(&["HSTRLEN", "missing", "a"]);
    d.cmd(&["HSET", "h", "int", "-123", "neg0", "-0", "empty", ""]);
    d.cmd(&["HSTRLEN", "h", "int"]);
    d.cmd(&["HSTRLEN", "h", "neg0"]);
    d.cmd(&["HSTRLEN", "h", "empty"]);
    d.cmd(&["HGET", "h", "empty"]);
    d.cmd(&["HSET", "h", "", "empty field"]);
    d.cmd(&["HGET", "h", ""]);
    d.cmd(&["HMSET", "h", "c", "5", "d", "6"]);
    d.cmd(&["HMGET", "h", "c", "d"]);
    d.cmd(&["HSETNX", "h", "c", "other"]);
    d.cmd(&["HSETNX", "h", "e", "7"]);
    d.cmd(&["HSETNX", "fresh", "f", "v"]);
    d.cmd(&["HGET", "h", "c"]);
    d.cmd(&["HGET", "h", "e"]);
    d.cmd(&["HLEN", "h"]);
    d.cmd(&["TYPE", "h"]);
    d.cmd(&["TYPE", "fresh"]);
    d.cmd(&["EXISTS", "h", "fresh"]);
}

#[test]
fn binary_fields_and_values() {
    let mut d = Diff::new();
    let all: Vec<u8> = (0..=255u8).collect();
    let mut field = b"\x00f\r\n".to_vec();
    field.push(0xff);
    d.cmd(&[b"HSET".as_slice(), b"h", &field, &all]);
    d.cmd(&[b"HSET".as_slice(), b"h", &all, b"\x00"]);
    d.cmd(&[b"HGET".as_slice(), b"h", &field]);
    d.cmd(&[b"HGET".as_slice(), b"h", &all]);
    d.cmd(&[b"HSTRLEN".as_slice(), b"h", &field]);
    pairs(&mut d, &["HGETALL", "h"]);
}

#[test]
fn arity_errors() {
    let mut d = Diff::new();
    for cmd in [
        &["HSET", "h"][..],
        &["HSET", "h", "f"],
        &["HSET", "h", "f", "v", "g"],
        &["HMSET", "h", "f"],
        &["HMSET", "h", "f", "v", "g"],
        &["HSETNX", "h", "f"],
        &["HGET", "h"],
        &["HMGET", "h"],
        &["HGETALL"],
        &["HKEYS"],
        &["HVALS", "h", "x"],
        &["HLEN"],
        &["HSTRLEN", "h"],
        &["HEXISTS", "h"],
        &["HDEL", "h"],
        &["HINCRBY", "h", "f"],
        &["HINCRBYFLOAT", "h", "f"],
        &["HRANDFIELD"],
        &["HSCAN", "h"],
    ] {
        d.cmd(cmd);
    }
    d.cmd(&["EXISTS", "h"]);
}

#[test]
fn whole_hash_replies() {
    let mut d = Diff::new();
    d.cmd(&["HGETALL", "missing"]);
    d.cmd(&["HKEYS", "missing"]);
    d.cmd(&["HVALS", "missing"]);
    // Inserted in byte order: Redis's listpack order is Firn's order.
    d.cmd(&["HSET", "sorted", "a", "1", "b", "2", "c", "3"]);
    d.cmd(&["HGETALL", "sorted"]);
    d.cmd(&["HKEYS", "sorted"]);
    d.cmd(&["HVALS", "sorted"]);
    d.cmd(&[
        "HSET", "h", "z", "1", "y", "2", "x", "3", "10", "4", "9", "5",
    ]);
    pairs(&mut d, &["HGETALL", "h"]);
    d.cmd_unordered(&["HKEYS", "h"]);
    d.cmd_unordered(&["HVALS", "h"]);
    fill(&mut d, "big", 300, 3);
    pairs(&mut d, &["HGETALL", "big"]);
    d.cmd_unordered(&["HKEYS", "big"]);
    d.cmd_unordered(&["HVALS", "big"]);
    // RESP3: a map for HGETALL.
    d.cmd_with(&["HELLO", "3"], |_| R::Null);
    d.cmd(&["HGETALL", "sorted"]);
    d.cmd(&["HGETALL", "missing"]);
    d.cmd_unordered(&["HGETALL", "h"]);
    d.cmd(&["HMGET", "h", "z", "nope"]);
    d.cmd(&["HGET", "h", "nope"]);
}

#[test]
fn hdel_removes_fields_and_empty_hashes() {
    let mut d = Diff::new();
    d.cmd(&["HDEL", "missing", "a"]);
    d.cmd(&["HSET", "h", "a", "1", "b", "2", "c", "3"]);
    d.cmd(&["HDEL", "h", "a", "a", "nope"]);
    d.cmd(&["HLEN", "h"]);
    d.cmd(&["HDEL", "h", "nope"]);
    d.cmd(&["HDEL", "h", "b", "c"]);
    d.cmd(&["EXISTS", "h"]);
    d.cmd(&["TYPE", "h"]);
    d.cmd(&["HLEN", "h"]);
    // A key that emptied can be re-created as another type, and back.
    d.cmd(&["SET", "h", "str"]);
    d.cmd(&["GET", "h"]);
    d.cmd(&["DEL", "h"]);
    d.cmd(&["HSET", "h", "x", "1"]);
    pairs(&mut d, &["HGETALL", "h"]);
}

#[test]
fn wrongtype_both_ways() {
    let mut d = Diff::new();
    d.cmd(&["SET", "s", "x"]);
    for cmd in [
        &["HSET", "s", "f", "v"][..],
        &["HMSET", "s", "f", "v"],
        &["HSETNX", "s", "f", "v"],
        &["HGET", "s", "f"],
        &["HMGET", "s", "f"],
        &["HGETALL", "s"],
        &["HKEYS", "s"],
        &["HVALS", "s"],
        &["HLEN", "s"],
        &["HSTRLEN", "s", "f"],
        &["HEXISTS", "s", "f"],
        &["HDEL", "s", "f"],
        &["HINCRBY", "s", "f", "1"],
        &["HINCRBYFLOAT", "s", "f", "1"],
        &["HRANDFIELD", "s"],
        &["HRANDFIELD", "s", "3"],
        &["HRANDFIELD", "s", "-3", "WITHVALUES"],
        &["HSCAN", "s", "0"],
    ] {
        d.cmd(cmd);
    }
    // Argument errors come before the type check where Redis checks them
    // first.
    d.cmd(&["HINCRBY", "s", "f", "x"]);
    d.cmd(&["HINCRBYFLOAT", "s", "f", "x"]);
    d.cmd(&["HRANDFIELD", "s", "x"]);
    d.cmd(&["HRANDFIELD", "s", "1", "WITHVALUE"]);
    d.cmd(&["HSET", "h", "f", "v"]);
    for cmd in [
        &["GET", "h"][..],
        &["APPEND", "h", "x"],
        &["INCR", "h"],
        &["STRLEN", "h"],
        &["SETRANGE", "h", "0", "x"],
        &["GETRANGE", "h", "0", "-1"],
        &["SETBIT", "h", "1", "1"],
    ] {
        d.cmd(cmd);
    }
    d.cmd(&["SET", "h", "overwritten"]);
    d.cmd(&["GET", "h"]);
    d.cmd(&["HGET", "h", "f"]);
}

#[test]
fn hashes_keep_and_lose_their_ttl_like_redis() {
    let mut d = Diff::new();
    d.cmd(&["HSET", "h", "a", "1"]);
    d.cmd(&["EXPIRE", "h", "1000"]);
    d.cmd(&["HSET", "h", "b", "2"]);
    d.cmd(&["HINCRBY", "h", "c", "5"]);
    d.cmd(&["HINCRBYFLOAT", "h", "d", "1.5"]);
    d.cmd(&["HDEL", "h", "a"]);
    d.ttl("h");
    d.cmd(&["PERSIST", "h"]);
    d.ttl("h");
    d.cmd(&["PEXPIRE", "h", "1"]);
    d.sleep_ms(20);
    d.cmd(&["HGET", "h", "b"]);
    d.cmd(&["EXISTS", "h"]);
    d.cmd(&["HSET", "h", "new", "1"]);
    d.ttl("h");
    d.cmd(&["HLEN", "h"]);
    // The last field deleted drops the TTL with the key.
    d.cmd(&["EXPIRE", "h", "1000"]);
    d.cmd(&["HDEL", "h", "new"]);
    d.cmd(&["HSET", "h", "again", "1"]);
    d.ttl("h");
}

/// INFO's `rdb_changes_since_last_save` (Redis's `server.dirty`).
fn changes_line(r: &R) -> R {
    let text = r.as_str().unwrap_or_default();
    let line = text
        .lines()
        .find(|l| l.starts_with("rdb_changes_since_last_save:"))
        .unwrap_or("no rdb_changes_since_last_save");
    R::Simple(line.to_string())
}

#[test]
fn writes_count_changes_like_redis() {
    let mut d = Diff::new();
    d.cmd(&["SET", "s", "x"]);
    d.cmd_with(&["INFO", "persistence"], changes_line);
    for cmd in [
        &["HSET", "h", "a", "1", "a", "2"][..],
        &["HSET", "h", "a", "1"],
        &["HMSET", "h", "a", "1", "b", "2"],
        &["HSETNX", "h", "a", "1"],
        &["HSETNX", "h", "c", "1"],
        &["HDEL", "h", "a", "x"],
        &["HDEL", "h", "x"],
        &["HINCRBY", "h", "n", "1"],
        &["HINCRBYFLOAT", "h", "n", "1.5"],
        &["HINCRBY", "h", "c", "x"],
        &["HINCRBY", "h", "n", "1"],
        &["HSET", "s", "f", "v"],
        &["HDEL", "h", "b", "c", "n"],
        &["HGET", "h", "a"],
    ] {
        d.cmd(cmd);
        d.cmd_with(&["INFO", "persistence"], changes_line);
    }
}

// ------------------------------------------------------------------ counters

#[test]
fn hincrby_counts_and_checks() {
    let mut d = Diff::new();
    d.cmd(&["HINCRBY", "h", "n", "5"]);
    d.cmd(&["HINCRBY", "h", "n", "-7"]);
    d.cmd(&["HGET", "h", "n"]);
    d.cmd(&["HINCRBY", "h", "n", "x"]);
    d.cmd(&["HINCRBY", "h", "n", "1.5"]);
    d.cmd(&["HINCRBY", "h", "n", "9223372036854775808"]);
    d.cmd(&["HINCRBY", "missing", "n", "x"]);
    d.cmd(&["EXISTS", "missing"]);
    d.cmd(&[
        "HSET",
        "h",
        "max",
        "9223372036854775807",
        "min",
        "-9223372036854775808",
    ]);
    d.cmd(&["HINCRBY", "h", "max", "1"]);
    d.cmd(&["HINCRBY", "h", "max", "0"]);
    d.cmd(&["HINCRBY", "h", "max", "-1"]);
    d.cmd(&["HINCRBY", "h", "min", "-1"]);
    d.cmd(&["HINCRBY", "h", "min", "9223372036854775807"]);
    for value in ["abc", "", " 1", "1 ", "007", "+1", "1.0", "-0", "0x10"] {
        d.cmd(&["HSET", "h", "v", value]);
        d.cmd(&["HINCRBY", "h", "v", "1"]);
        d.cmd(&["HGET", "h", "v"]);
    }
}

#[test]
fn hincrbyfloat_counts_and_checks() {
    let mut d = Diff::new();
    d.cmd(&["HINCRBYFLOAT", "h", "f", "10.5"]);
    d.cmd(&["HINCRBYFLOAT", "h", "f", "0.1"]);
    d.cmd(&["HINCRBYFLOAT", "h", "f", "-5.0e3"]);
    d.cmd(&["HINCRBYFLOAT", "h", "f", "3e-5"]);
    d.cmd(&["HGET", "h", "f"]);
    for incr in [
        "inf", "-inf", "nan", "abc", "", " 1", "1e5000", "0x10", "1e400", "-0", "1.", ".5",
    ] {
        d.cmd(&["HINCRBYFLOAT", "h", "f", incr]);
    }
    d.cmd(&["HINCRBYFLOAT", "missing", "f", "inf"]);
    d.cmd(&["EXISTS", "missing"]);
    for value in [
        "abc", "", " 1", "inf", "-inf", "1e5000", "10", "007", "1.5e3", "0x10", "-0",
    ] {
        d.cmd(&["HSET", "h", "v", value]);
        d.cmd(&["HINCRBYFLOAT", "h", "v", "1"]);
        d.cmd(&["HGET", "h", "v"]);
    }
    d.cmd(&["HSET", "h", "i", "9223372036854775807"]);
    d.cmd(&["HINCRBYFLOAT", "h", "i", "1"]);
    d.cmd(&["HINCRBY", "h", "f", "1"]);
    d.cmd(&["HINCRBYFLOAT", "h", "big", "1e300"]);
    d.cmd(&["HINCRBYFLOAT", "h", "big", "1e4000"]);
    d.cmd(&["HGET", "h", "big"]);
}

// ------------------------------------------------------------------ OBJECT ENCODING

#[test]
fn object_encoding_follows_the_listpack_limits() {
    let mut d = Diff::new();
    let long = "v".repeat(65);
    let limit = "v".repeat(64);
    // redis-server's built-in hash-max-listpack-entries is 512.
    fill(&mut d, "h512", 512, 64);
    d.cmd(&["OBJECT", "ENCODING", "h512"]);
    d.cmd(&["HSET", "h512", "f0000", "x"]);
    d.cmd(&["OBJECT", "ENCODING", "h512"]);
    d.cmd(&["HSET", "h512", "one-more", "x"]);
    d.cmd(&["OBJECT", "ENCODING", "h512"]);
    // Sticky: shrinking does not convert back.
    d.cmd(&["HDEL", "h512", "one-more", "f0001", "f0002"]);
    d.cmd(&["OBJECT", "ENCODING", "h512"]);
    fill(&mut d, "h129", 129, 1);
    d.cmd(&["OBJECT", "ENCODING", "h129"]);
    d.cmd(&["HSET", "v64", "f", &limit, &limit, "x"]);
    d.cmd(&["OBJECT", "ENCODING", "v64"]);
    d.cmd(&["HSET", "v65", "f", &long]);
    d.cmd(&["OBJECT", "ENCODING", "v65"]);
    d.cmd(&["HSET", "f65", &long, "v"]);
    d.cmd(&["OBJECT", "ENCODING", "f65"]);
    d.cmd(&["HSET", "later", "f", "v"]);
    d.cmd(&["HSET", "later", "f", &long]);
    d.cmd(&["HSET", "later", "f", "short"]);
    d.cmd(&["OBJECT", "ENCODING", "later"]);
    d.cmd(&["HMSET", "hm", "a", "1", "b", &long]);
    d.cmd(&["OBJECT", "ENCODING", "hm"]);
    // HSETNX converts only when it sets the field.
    d.cmd(&["HSET", "nx", "f", "v"]);
    d.cmd(&["HSETNX", "nx", "f", &long]);
    d.cmd(&["OBJECT", "ENCODING", "nx"]);
    d.cmd(&["HSETNX", "nx", "g", &long]);
    d.cmd(&["OBJECT", "ENCODING", "nx"]);
    d.cmd(&["HSETNX", "nx2", &long, "v"]);
    d.cmd(&["OBJECT", "ENCODING", "nx2"]);
    // Counters: a long field name, a long float result.
    d.cmd(&["HINCRBY", "ib", &long, "1"]);
    d.cmd(&["OBJECT", "ENCODING", "ib"]);
    d.cmd(&["HINCRBYFLOAT", "fl", "f", "1e50"]);
    d.cmd(&["OBJECT", "ENCODING", "fl"]);
    d.cmd(&["HINCRBYFLOAT", "fl", "f", "1e70"]);
    d.cmd(&["OBJECT", "ENCODING", "fl"]);
    d.cmd(&["HGET", "fl", "f"]);
    // COPY and RENAME keep the encoding.
    d.cmd(&["COPY", "fl", "fl-copy"]);
    d.cmd(&["OBJECT", "ENCODING", "fl-copy"]);
    d.cmd(&["RENAME", "v64", "v64-renamed"]);
    d.cmd(&["OBJECT", "ENCODING", "v64-renamed"]);
}

// ------------------------------------------------------------------ DUMP / RESTORE

fn dump_from_redis(d: &mut Diff, key: &str) -> Vec<u8> {
    match d.client().redis.cmd(&["DUMP", key]) {
        R::Bulk(Some(payload)) => payload,
        other => panic!("DUMP: {}", other.render()),
    }
}

fn dump_from_firn(d: &mut Diff, key: &str) -> Vec<u8> {
    match d.client().firn.cmd(&["DUMP", key]) {
        R::Bulk(Some(payload)) => payload,
        other => panic!("DUMP: {}", other.render()),
    }
}

#[test]
fn dump_is_byte_identical_for_a_listpack_in_byte_order() {
    let mut d = Diff::new();
    d.cmd(&["HSET", "h", "a", "1", "b", "two", "c", "-3", "d", ""]);
    d.cmd(&["DUMP", "h"]);
    d.cmd(&["DUMP", "missing"]);
    let mut fields = vec!["HSET".to_string(), "max".to_string()];
    for i in 0..512 {
        fields.push(format!("f{i:03}"));
        fields.push(format!("{i}").repeat(i % 20));
    }
    d.cmd(&fields);
    d.cmd(&["OBJECT", "ENCODING", "max"]);
    d.cmd(&["DUMP", "max"]);
}

#[test]
fn restore_takes_either_servers_payload() {
    let mut d = Diff::new();
    let long = "x".repeat(100);
    d.cmd(&["HSET", "small", "z", "1", "a", "2", "m", "3"]);
    d.cmd(&["HSET", "wide", "f", &long, "g", "1"]);
    fill(&mut d, "many", 200, 2);
    fill(&mut d, "more", 600, 2);
    // A hash that grew past the limits and shrank back: Redis keeps its
    // hashtable, a restored copy is a listpack again.
    d.cmd(&["HSET", "shrunk", "f", &long, "g", "1"]);
    d.cmd(&["HSET", "shrunk", "f", "short"]);
    for key in ["small", "wide", "many", "more", "shrunk"] {
        let from_redis = dump_from_redis(&mut d, key);
        let from_firn = dump_from_firn(&mut d, key);
        for (name, payload) in [("r", from_redis), ("f", from_firn)] {
            let target = format!("{key}-{name}");
            d.cmd(&[b"RESTORE".as_slice(), target.as_bytes(), b"0", &payload]);
            pairs(&mut d, &["HGETALL", &target]);
            d.cmd(&["HLEN", &target]);
            d.cmd(&["OBJECT", "ENCODING", &target]);
            d.cmd(&[b"RESTORE".as_slice(), target.as_bytes(), b"0", &payload]);
            d.cmd(&[
                b"RESTORE".as_slice(),
                target.as_bytes(),
                b"100000",
                &payload,
                b"REPLACE",
            ]);
            d.pttl(&target);
        }
    }
}

// ------------------------------------------------------------------ HRANDFIELD

#[test]
fn hrandfield_errors_and_whole_hash_answers() {
    let mut d = Diff::new();
    for count in [
        "x",
        "1.5",
        "",
        "-9223372036854775808",
        "9223372036854775808",
    ] {
        d.cmd(&["HRANDFIELD", "missing", count]);
        d.cmd(&["HRANDFIELD", "missing", count, "WITHVALUES"]);
    }
    d.cmd(&["HRANDFIELD", "missing"]);
    d.cmd(&["HRANDFIELD", "missing", "5"]);
    d.cmd(&["HRANDFIELD", "missing", "-5", "WITHVALUES"]);
    d.cmd(&["HRANDFIELD", "missing", "0"]);
    d.cmd(&["HRANDFIELD", "missing", "4611686018427387904", "WITHVALUES"]);
    d.cmd(&[
        "HRANDFIELD",
        "missing",
        "-4611686018427387904",
        "WITHVALUES",
    ]);
    d.cmd(&["HRANDFIELD", "missing", "4611686018427387903", "WITHVALUES"]);
    d.cmd(&["HRANDFIELD", "missing", "1", "WITHVALUES", "x"]);
    d.cmd(&["HRANDFIELD", "missing", "1", "x"]);
    d.cmd(&["HSET", "h", "a", "1", "b", "2", "c", "3"]);
    d.cmd(&["HRANDFIELD", "h", "0"]);
    d.cmd(&["HRANDFIELD", "h", "0", "WITHVALUES"]);
    d.cmd(&["HRANDFIELD", "h", "1", "withvalue"]);
    d.cmd(&["HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES"]);
    // A count at least the size answers the whole hash.
    d.cmd_unordered(&["HRANDFIELD", "h", "3"]);
    d.cmd_unordered(&["HRANDFIELD", "h", "100"]);
    d.cmd_unordered(&["HRANDFIELD", "h", "9223372036854775807"]);
    pairs(&mut d, &["HRANDFIELD", "h", "3", "WITHVALUES"]);
    pairs(
        &mut d,
        &["HRANDFIELD", "h", "4611686018427387903", "withvalues"],
    );
    d.cmd(&["HSET", "one", "only", "v"]);
    d.cmd(&["HRANDFIELD", "one"]);
    d.cmd(&["HRANDFIELD", "one", "1"]);
    d.cmd(&["HRANDFIELD", "one", "-3"]);
    d.cmd(&["HRANDFIELD", "one", "-2", "WITHVALUES"]);
    d.cmd_with(&["HELLO", "3"], |_| R::Null);
    d.cmd(&["HRANDFIELD", "missing"]);
    d.cmd(&["HRANDFIELD", "missing", "3", "WITHVALUES"]);
    d.cmd(&["HRANDFIELD", "one", "-2", "WITHVALUES"]);
    d.cmd(&["HRANDFIELD", "one", "1", "WITHVALUES"]);
    d.cmd(&["HRANDFIELD", "one", "-2"]);
    d.cmd_unordered(&["HRANDFIELD", "h", "5", "WITHVALUES"]);
}

/// Fields and values of a flat RESP2 reply, or of RESP3 pairs.
fn picked(reply: &R, with_values: bool, resp3: bool) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
    let items = reply.items();
    let bytes = |r: &R| r.as_bytes().expect("bulk").to_vec();
    match (with_values, resp3) {
        (false, _) => items.iter().map(|f| (bytes(f), None)).collect(),
        (true, false) => items
            .chunks(2)
            .map(|c| (bytes(&c[0]), Some(bytes(&c[1]))))
            .collect(),
        (true, true) => items
            .iter()
            .map(|pair| {
                let p = pair.items();
                assert_eq!(p.len(), 2, "pair {}", pair.render());
                (bytes(&p[0]), Some(bytes(&p[1])))
            })
            .collect(),
    }
}

fn check_random_fields(server: &Server, fields: usize) {
    let mut c = server.conn();
    let key = format!("h{fields}");
    let mut contents = HashMap::new();
    let mut cmd = vec!["HSET".to_string(), key.clone()];
    for i in 0..fields {
        let (f, v) = (format!("field:{i}"), format!("value:{i}"));
        cmd.push(f.clone());
        cmd.push(v.clone());
        contents.insert(f.into_bytes(), v.into_bytes());
    }
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    assert_eq!(c.cmd(&cmd), R::Int(fields as i64));
    for resp3 in [false, true] {
        c.cmd(&["HELLO", if resp3 { "3" } else { "2" }]);
        let single = c.cmd(&["HRANDFIELD", &key]);
        assert!(contents.contains_key(single.as_bytes().expect("bulk")));
        for count in [1i64, 2, 5, 50, -1, -5, -50, -500, fields as i64 - 1] {
            for with_values in [false, true] {
                let mut args = vec!["HRANDFIELD".to_string(), key.clone(), count.to_string()];
                if with_values {
                    args.push("WITHVALUES".into());
                }
                let reply = c.cmd(&args.iter().map(String::as_str).collect::<Vec<_>>());
                let got = picked(&reply, with_values, resp3);
                let want_len = if count < 0 {
                    count.unsigned_abs() as usize
                } else {
                    (count as usize).min(fields)
                };
                assert_eq!(got.len(), want_len, "{args:?}: {}", reply.render());
                let elements = if with_values && !resp3 { 2 } else { 1 };
                assert_eq!(reply.items().len(), want_len * elements, "{args:?}");
                for (field, value) in &got {
                    let stored = contents.get(field).expect("a field of the hash");
                    if let Some(value) = value {
                        assert_eq!(value, stored, "{args:?}");
                    }
                }
                if count > 0 {
                    let distinct: HashSet<_> = got.iter().map(|(f, _)| f).collect();
                    assert_eq!(distinct.len(), got.len(), "{args:?}: repeated field");
                }
            }
        }
    }
}

#[test]
fn hrandfield_picks_members_of_the_hash() {
    let server = Server::firn();
    // Small (read whole) and big (sampled by seeks).
    check_random_fields(&server, 7);
    check_random_fields(&server, 3000);
    // A negative count repeats fields of a small hash.
    let mut c = server.conn();
    c.cmd(&["HSET", "two", "a", "1", "b", "2"]);
    let reply = c.cmd(&["HRANDFIELD", "two", "-100"]);
    assert_eq!(reply.items().len(), 100);
    let distinct: HashSet<_> = reply.items().iter().map(|r| r.encode()).collect();
    assert_eq!(distinct.len(), 2, "{}", reply.render());
    if server.kind() != Kind::Firn {
        return;
    }
    // Firn refuses repetitions beyond ten million (Redis would build the
    // reply until memory runs out).
    for count in ["-10000001", "-9223372036854775807"] {
        assert_err(
            &c.cmd(&["HRANDFIELD", "two", count]),
            "ERR value is out of range",
        );
    }
    assert_eq!(
        c.cmd(&["HRANDFIELD", "missing", "-10000001"]),
        R::Array(Some(vec![]))
    );
}

// ------------------------------------------------------------------ HSCAN

#[test]
fn hscan_small_and_big_hashes() {
    let mut d = Diff::new();
    d.cmd(&["HSCAN", "missing", "0"]);
    d.cmd(&["HSET", "sorted", "a", "1", "b", "2", "c", "3"]);
    // A listpack hash comes whole, cursor 0, whatever COUNT says.
    d.cmd(&["HSCAN", "sorted", "0"]);
    d.cmd(&["HSCAN", "sorted", "0", "COUNT", "1"]);
    d.cmd(&["HSCAN", "sorted", "0", "MATCH", "[ab]"]);
    d.cmd(&["HSCAN", "sorted", "0", "MATCH", "nothing"]);
    d.cmd(&["HSCAN", "sorted", "0", "COUNT", "0"]);
    d.cmd(&["HSCAN", "sorted", "0", "COUNT", "-1"]);
    d.cmd(&["HSCAN", "sorted", "0", "COUNT", "x"]);
    d.cmd(&["HSCAN", "sorted", "0", "MATCH"]);
    d.cmd(&["HSCAN", "sorted", "0", "BOGUS", "1"]);
    d.cmd(&["HSCAN", "sorted", "x"]);
    d.cmd(&["HSCAN", "sorted", "-1"]);
    d.cmd(&["HSET", "h", "z", "1", "y", "2"]);
    d.cmd_with(&["HSCAN", "h", "0"], |r| {
        R::Array(Some(vec![
            r.items()[0].clone(),
            r.items()[1].pairs_sorted(),
        ]))
    });
    fill(&mut d, "big", 1000, 1);
    d.scan_all(&["HSCAN", "big"], &[]);
    d.scan_all(&["HSCAN", "big"], &["COUNT", "7"]);
    d.scan_all(&["HSCAN", "big"], &["MATCH", "f01*", "COUNT", "50"]);
    d.scan_all(&["HSCAN", "big"], &["COUNT", "1000"]);
}

// ------------------------------------------------------------------ random sequences

const KEYS: [&str; 4] = ["a", "b", "c", "d"];
const FIELDS: [&str; 8] = ["f1", "f2", "f3", "x", "", "long", "n", "10"];

struct Gen {
    rng: StdRng,
}

impl Gen {
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.rng.random_range(0..items.len())]
    }

    fn value(&mut self) -> String {
        match self.rng.random_range(0..8) {
            0 => "v".repeat(self.rng.random_range(60..70)),
            1 => self.rng.random_range(-100..100).to_string(),
            2 => self
                .pick(&["1.5", "abc", "", "9223372036854775807", "-0"])
                .into(),
            _ => format!("val{}", self.rng.random_range(0..20)),
        }
    }

    fn command(&mut self) -> Vec<String> {
        let key = self.pick(&KEYS).to_string();
        let field = self.pick(&FIELDS).to_string();
        let s = |x: &str| x.to_string();
        match self.rng.random_range(0..24) {
            0..=3 => {
                let mut c = vec![s("HSET"), key];
                for _ in 0..self.rng.random_range(1..4) {
                    c.push(self.pick(&FIELDS).into());
                    c.push(self.value());
                }
                c
            }
            4 => vec![s("HSETNX"), key, field, self.value()],
            5 => vec![s("HMSET"), key, field, self.value()],
            6 | 7 => vec![s("HGET"), key, field],
            8 => vec![s("HMGET"), key, field, self.pick(&FIELDS).into()],
            9 => vec![s("HDEL"), key, field, self.pick(&FIELDS).into()],
            10 => vec![s("HLEN"), key],
            11 => vec![s("HEXISTS"), key, field],
            12 => vec![s("HSTRLEN"), key, field],
            13 => {
                let incr = self.pick(&["1", "-3", "100", "x", "9223372036854775807"]);
                vec![s("HINCRBY"), key, field, s(incr)]
            }
            14 => {
                let incr = self.pick(&["1.5", "-0.25", "1e3", "x", "inf"]);
                vec![s("HINCRBYFLOAT"), key, field, s(incr)]
            }
            15 => vec![s("SET"), key, self.value()],
            16 => vec![s("GET"), key],
            17 => vec![s("DEL"), key],
            18 => vec![s("EXPIRE"), key, s(self.pick(&["1000", "2000", "0"]))],
            19 => vec![s("TYPE"), key],
            20 => vec![s("OBJECT"), s("ENCODING"), key],
            21 => vec![s("HRANDFIELD"), key, s(self.pick(&["0", "x", "-0"]))],
            22 => vec![s("COPY"), key, s(self.pick(&KEYS)), s("REPLACE")],
            _ => vec![s("RENAME"), key, s(self.pick(&KEYS))],
        }
    }
}

fn compare_state(d: &mut Diff) {
    d.cmd(&["DBSIZE"]);
    for key in KEYS {
        let t = d.cmd(&["TYPE", key]);
        if t == R::Simple("hash".into()) {
            pairs(d, &["HGETALL", key]);
            d.cmd(&["HLEN", key]);
        } else {
            d.cmd(&["GET", key]);
        }
        d.cmd(&["OBJECT", "ENCODING", key]);
        d.ttl(key);
    }
}

/// Runs 400 generated commands from `seed`; `restart` (if any) is applied
/// to firn every 100 commands, after comparing the state.
fn random_run(mut d: Diff, seed: u64, restart: Option<fn(&mut Server)>) {
    d.context = format!("seed={seed} (rerun alone with FIRN_DIFF_SEED={seed})");
    let mut gen = Gen {
        rng: StdRng::seed_from_u64(seed),
    };
    for step in 0..400 {
        let cmd = gen.command();
        d.cmd(&cmd);
        if step % 100 == 99 {
            compare_state(&mut d);
            if let Some(restart) = restart {
                restart(&mut d.firn_server);
                d.note("firn restarted");
                d.reconnect();
                compare_state(&mut d);
            }
        }
    }
    compare_state(&mut d);
}

#[test]
fn random_hash_and_string_commands() {
    for seed in random_seeds(0, 4) {
        random_run(Diff::new(), seed, None);
    }
}

/// The same sequences against a firn with a tiny cache, restarted (cleanly
/// or with kill -9) every 100 commands: what it answers after reading its
/// data back from disk must not change.
#[test]
fn random_hash_and_string_commands_across_restarts() {
    let restarts: [fn(&mut Server); 2] = [Server::restart, Server::kill9_restart];
    for (i, seed) in random_seeds(100, 4).into_iter().enumerate() {
        let firn = Server::firn_with(&["--maxmemory", "32mb", "--appendfsync", "always"]);
        if firn.kind() != Kind::Firn {
            return;
        }
        let d = Diff::with_servers(Server::redis(), firn);
        random_run(d, seed, Some(restarts[i % 2]));
    }
}

// ------------------------------------------------------------------ restarts

fn write_hashes(server: &Server) {
    let mut c = server.conn();
    let mut batch = Vec::new();
    for i in 0..600 {
        batch.extend(encode_request(&[
            b"HSET",
            b"many",
            format!("field:{i}").as_bytes(),
            format!("value:{i}").as_bytes(),
        ]));
    }
    c.send_raw(&batch);
    for _ in 0..600 {
        assert_eq!(c.read_reply().1, R::Int(1));
    }
    c.cmd(&["HSET", "small", "a", "1", "b", "2"]);
    c.cmd(&["HINCRBYFLOAT", "small", "f", "2.5"]);
    c.cmd(&["HSET", "ttl", "a", "1"]);
    c.cmd(&["EXPIRE", "ttl", "1000"]);
    c.cmd(&["HSET", "gone", "a", "1"]);
    c.cmd(&["HDEL", "gone", "a"]);
    c.cmd(&["HDEL", "many", "field:7"]);
}

fn check_hashes(server: &Server) {
    let mut c = server.conn();
    assert_eq!(
        c.cmd(&["HLEN", "many"]),
        R::Int(599),
        "{}",
        server.log_tail()
    );
    assert_eq!(c.cmd(&["HGET", "many", "field:42"]), R::bulk(b"value:42"));
    assert_eq!(c.cmd(&["HGET", "many", "field:7"]), R::Bulk(None));
    assert_eq!(c.cmd(&["HKEYS", "many"]).items().len(), 599);
    assert_eq!(
        c.cmd(&["OBJECT", "ENCODING", "many"]),
        R::bulk(b"hashtable")
    );
    assert_eq!(
        c.cmd(&["HGETALL", "small"]),
        R::Array(Some(vec![
            R::bulk(b"a"),
            R::bulk(b"1"),
            R::bulk(b"b"),
            R::bulk(b"2"),
            R::bulk(b"f"),
            R::bulk(b"2.5")
        ]))
    );
    assert_eq!(
        c.cmd(&["OBJECT", "ENCODING", "small"]),
        R::bulk(b"listpack")
    );
    let ttl = c.cmd(&["TTL", "ttl"]).as_int().unwrap_or(0);
    assert!(ttl > 900 && ttl <= 1000, "ttl {ttl}");
    assert_eq!(c.cmd(&["EXISTS", "gone"]), R::Int(0));
    assert_eq!(c.cmd(&["DBSIZE"]), R::Int(3));
}

#[test]
fn hashes_survive_kill_9_and_a_clean_restart() {
    let mut server = Server::firn_with(&["--appendfsync", "always"]);
    if server.kind() != Kind::Firn {
        // A redis-server without persistence (self-test) forgets on restart.
        return;
    }
    write_hashes(&server);
    server.kill9_restart();
    check_hashes(&server);
    server.conn().cmd(&["HSET", "small", "after", "restart"]);
    server.restart();
    let mut c = server.conn();
    assert_eq!(c.cmd(&["HGET", "small", "after"]), R::bulk(b"restart"));
    assert_eq!(c.cmd(&["HLEN", "small"]), R::Int(4));
    assert_err(
        &c.cmd(&["GET", "small"]),
        "WRONGTYPE Operation against a key holding the wrong kind of value",
    );
}

/// A hash past 10,000 fields is streamed by Firn (stream_reply.rs): the
/// bytes must still be Redis's, in RESP2 and RESP3 (a map), with the
/// replies pipelined around it in order.
#[test]
fn whole_hash_replies_of_a_big_hash_match_in_both_protocols() {
    let mut d = Diff::new();
    for part in 0..3 {
        let mut cmd = vec!["HSET".to_string(), "big".to_string()];
        for i in part * 4000..(part + 1) * 4000 {
            cmd.push(format!("field{i:05}"));
            cmd.push(format!("{}", i * 7));
        }
        d.cmd(&cmd);
    }
    pairs(&mut d, &["HGETALL", "big"]);
    d.cmd_unordered(&["HKEYS", "big"]);
    d.cmd_unordered(&["HVALS", "big"]);
    // Pipelined around the streamed reply, the replies keep their order
    // (Firn alone: the field order of the two servers differs).
    let mut firn = d.firn_server.conn();
    firn.send_raw(
        &[
            encode_request(&[b"SET", b"before", b"1"]),
            encode_request(&[b"HKEYS", b"big"]),
            encode_request(&[b"GET", b"before"]),
        ]
        .concat(),
    );
    assert_eq!(firn.read_reply().1, R::Simple("OK".into()));
    assert_eq!(firn.read_reply().1.items().len(), 12_000);
    assert_eq!(firn.read_reply().1, R::bulk(b"1"));
    d.cmd_with(&["HELLO", "3"], |_| R::Null);
    d.cmd_with(&["HGETALL", "big"], R::sorted);
    d.cmd_unordered(&["HVALS", "big"]);
    d.cmd(&["HLEN", "big"]);
}
