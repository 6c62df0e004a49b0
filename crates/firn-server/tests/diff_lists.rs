//! Differential tests of the list commands against redis-server 7.0.15:
//! pushes and pops (with counts, RESP2 and RESP3 nulls), LLEN, LINDEX,
//! LSET, LRANGE, LTRIM, LREM, LINSERT, LPOS, RPOPLPUSH, LMOVE, LMPOP,
//! WRONGTYPE both ways, arity errors, DUMP/RESTORE, COPY/RENAME, lists
//! longer than the 1,000 elements a command may visit on a network thread,
//! and seeded random sequences mixing list and string commands.
//!
//! `FIRN_DIFF_SEED=<n>` runs one seed only; `FIRN_DIFF_STEPS=<n>` changes
//! the number of commands per seed.

use firn_testkit::{
    data::pattern,
    diff::command,
    env::{random_seeds, random_steps, selftest},
    info, Diff, Server, R,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Switches the active client pair to RESP3 (HELLO's id differs).
fn resp3(d: &mut Diff) {
    d.cmd_type_only(&["HELLO", "3"]);
}

/// `RPUSH key` with `n` elements `prefix0..prefix{n-1}`, pipelined in
/// chunks of 500.
fn rpush_many(d: &mut Diff, key: &str, n: usize, prefix: &str) {
    let mut commands = Vec::new();
    let mut start = 0;
    while start < n {
        let end = (start + 500).min(n);
        let mut c = command(&["RPUSH", key]);
        c.extend((start..end).map(|i| format!("{prefix}{i}").into_bytes()));
        commands.push(c);
        start = end;
    }
    d.pipeline(&commands);
}

// ------------------------------------------------------------------ push / pop

#[test]
fn pushes_return_the_length_and_keep_order() {
    let mut d = Diff::new();
    d.cmd(&["LPUSH", "l", "a", "b", "c"]);
    d.cmd(&["RPUSH", "l", "x", "y"]);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&["LLEN", "l"]);
    d.cmd(&["TYPE", "l"]);
    d.cmd(&["OBJECT", "ENCODING", "l"]);
    d.cmd(&["LPUSH", "l", ""]);
    d.cmd(&["RPUSH", "l", "12345", "-7", "9223372036854775807", "1.5"]);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&["LPUSH", "l"]);
    d.cmd(&["RPUSH"]);
    d.cmd(&["LLEN", "missing"]);
    d.cmd(&["LLEN"]);
    d.cmd(&["LLEN", "l", "x"]);
}

#[test]
fn pushx_needs_an_existing_list() {
    let mut d = Diff::new();
    d.cmd(&["LPUSHX", "l", "a"]);
    d.cmd(&["RPUSHX", "l", "a", "b"]);
    d.cmd(&["EXISTS", "l"]);
    d.cmd(&["RPUSH", "l", "m"]);
    d.cmd(&["LPUSHX", "l", "a", "b"]);
    d.cmd(&["RPUSHX", "l", "y", "z"]);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&["LPUSHX", "l"]);
}

#[test]
fn pops_with_and_without_count() {
    let mut d = Diff::new();
    d.cmd(&["RPUSH", "l", "a", "b", "c", "d", "e"]);
    d.cmd(&["LPOP", "l"]);
    d.cmd(&["RPOP", "l"]);
    d.cmd(&["LPOP", "l", "2"]);
    d.cmd(&["LPOP", "l", "0"]);
    d.cmd(&["RPOP", "l", "0"]);
    d.cmd(&["RPOP", "l", "5"]);
    d.cmd(&["EXISTS", "l"]);
    d.cmd(&["RPUSH", "l", "a", "b", "c"]);
    d.cmd(&["RPOP", "l", "2"]);
    d.cmd(&["LPOP", "l", "9223372036854775807"]);
    d.cmd(&["EXISTS", "l"]);
    for count in ["-1", "abc", "1.5", "", "9223372036854775808", "-0"] {
        d.cmd(&["LPOP", "missing", count]);
        d.cmd(&["RPOP", "missing", count]);
    }
    d.cmd(&["LPOP", "missing"]);
    d.cmd(&["LPOP", "missing", "0"]);
    d.cmd(&["RPOP", "missing", "3"]);
    d.cmd(&["LPOP", "l", "1", "2"]);
    d.cmd(&["RPOP", "l", "1", "2"]);
    d.cmd(&["LPOP"]);
}

#[test]
fn pops_in_resp3() {
    let mut d = Diff::new();
    resp3(&mut d);
    d.cmd(&["LPOP", "missing"]);
    d.cmd(&["LPOP", "missing", "0"]);
    d.cmd(&["RPOP", "missing", "2"]);
    d.cmd(&["RPUSH", "l", "a", "b"]);
    d.cmd(&["LPOP", "l", "0"]);
    d.cmd(&["RPOP", "l", "1"]);
    d.cmd(&["LPOP", "l"]);
    d.cmd(&["LPOP", "l"]);
    d.cmd(&["LINDEX", "missing", "0"]);
    d.cmd(&["LPOS", "missing", "a"]);
    d.cmd(&["LPOS", "missing", "a", "COUNT", "0"]);
    d.cmd(&["LMPOP", "1", "missing", "LEFT"]);
    d.cmd(&["RPUSH", "l", "a", "b"]);
    d.cmd(&["LMPOP", "2", "missing", "l", "RIGHT", "COUNT", "5"]);
    d.cmd(&["LMOVE", "missing", "l", "LEFT", "RIGHT"]);
    d.cmd(&["LRANGE", "missing", "0", "-1"]);
}

#[test]
fn a_list_emptied_by_pops_disappears_and_starts_afresh() {
    let mut d = Diff::new();
    d.cmd(&["RPUSH", "l", "a"]);
    d.cmd(&["EXPIRE", "l", "1000"]);
    d.cmd(&["LPOP", "l"]);
    d.cmd(&["EXISTS", "l"]);
    d.cmd(&["TYPE", "l"]);
    d.cmd(&["RPUSH", "l", "b"]);
    d.ttl("l");
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&["SET", "l", "now a string"]);
    d.cmd(&["GET", "l"]);
    d.cmd(&["DEL", "l"]);
    d.cmd(&["LPUSH", "l", "c"]);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
}

#[test]
fn pushes_keep_the_ttl() {
    let mut d = Diff::new();
    d.cmd(&["RPUSH", "l", "a", "b", "c", "d"]);
    d.cmd(&["EXPIRE", "l", "1000"]);
    d.cmd(&["LPUSH", "l", "z"]);
    d.ttl("l");
    d.cmd(&["LTRIM", "l", "1", "1"]);
    d.ttl("l");
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&["PERSIST", "l"]);
    d.ttl("l");
}

// ------------------------------------------------------------------ index / range

#[test]
fn lindex_and_lset() {
    let mut d = Diff::new();
    d.cmd(&["RPUSH", "l", "a", "b", "c"]);
    for index in [
        "0",
        "2",
        "3",
        "-1",
        "-3",
        "-4",
        "9223372036854775807",
        "-9223372036854775808",
        "x",
        "1.0",
    ] {
        d.cmd(&["LINDEX", "l", index]);
        d.cmd(&["LINDEX", "missing", index]);
        d.cmd(&["LSET", "l", index, "new"]);
        d.cmd(&["LSET", "missing", index, "new"]);
    }
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&["LSET", "l", "1", ""]);
    d.cmd(&["LINDEX", "l", "1"]);
    d.cmd(&["LINDEX", "l"]);
    d.cmd(&["LSET", "l", "1"]);
}

#[test]
fn lrange_edges() {
    let mut d = Diff::new();
    d.cmd(&["RPUSH", "l", "a", "b", "c", "d", "e"]);
    let bounds = [
        "0",
        "1",
        "4",
        "5",
        "-1",
        "-5",
        "-6",
        "100",
        "-100",
        "9223372036854775807",
        "-9223372036854775808",
    ];
    for start in bounds {
        for stop in bounds {
            d.cmd(&["LRANGE", "l", start, stop]);
        }
    }
    d.cmd(&["LRANGE", "missing", "0", "-1"]);
    d.cmd(&["LRANGE", "missing", "x", "-1"]);
    d.cmd(&["LRANGE", "l", "0", "x"]);
    d.cmd(&["LRANGE", "l", "0"]);
}

#[test]
fn ltrim_edges() {
    let mut d = Diff::new();
    let bounds = [
        "0",
        "1",
        "3",
        "-1",
        "-2",
        "-100",
        "100",
        "9223372036854775807",
    ];
    for start in bounds {
        for stop in bounds {
            d.cmd(&["DEL", "l"]);
            d.cmd(&["RPUSH", "l", "a", "b", "c", "d", "e", "f"]);
            d.cmd(&["LTRIM", "l", start, stop]);
            d.cmd(&["LRANGE", "l", "0", "-1"]);
            d.cmd(&["EXISTS", "l"]);
            d.cmd(&["RPUSH", "l", "y"]);
            d.cmd(&["LPUSH", "l", "x"]);
            d.cmd(&["LRANGE", "l", "0", "-1"]);
        }
    }
    d.cmd(&["LTRIM", "missing", "0", "1"]);
    d.cmd(&["LTRIM", "missing", "x", "1"]);
    d.cmd(&["LTRIM", "l", "0", "x"]);
    d.cmd(&["LTRIM", "l", "0"]);
}

// ------------------------------------------------------------------ LREM / LINSERT

#[test]
fn lrem_counts_from_either_end() {
    let mut d = Diff::new();
    for count in [
        "0",
        "1",
        "2",
        "-1",
        "-2",
        "100",
        "-100",
        "-9223372036854775808",
        "9223372036854775807",
    ] {
        for layout in [
            &["x", "a", "x", "b", "x", "c", "x"][..],
            &["x", "x", "a", "b", "c", "d", "e", "f"],
            &["a", "b", "c", "d", "e", "f", "x", "x"],
            &["x"],
            &["a", "b"],
        ] {
            d.cmd(&["DEL", "l"]);
            let mut push = vec!["RPUSH", "l"];
            push.extend_from_slice(layout);
            d.cmd(&push);
            d.cmd(&["LREM", "l", count, "x"]);
            d.cmd(&["LRANGE", "l", "0", "-1"]);
            d.cmd(&["EXISTS", "l"]);
            d.cmd(&["LPUSH", "l", "h"]);
            d.cmd(&["RPUSH", "l", "t"]);
            d.cmd(&["LRANGE", "l", "0", "-1"]);
        }
    }
    d.cmd(&["LREM", "missing", "0", "x"]);
    d.cmd(&["LREM", "missing", "x", "x"]);
    d.cmd(&["LREM", "l", "1.5", "x"]);
    d.cmd(&["LREM", "l", "0"]);
}

#[test]
fn linsert_before_and_after() {
    let mut d = Diff::new();
    d.cmd(&["RPUSH", "l", "a", "b", "c", "d", "e", "b"]);
    for (place, pivot) in [
        ("BEFORE", "a"),
        ("AFTER", "a"),
        ("before", "e"),
        ("after", "b"),
        ("AFTER", "b"),
        ("Before", "b"),
        ("AFTER", "z"),
        ("BEFORE", ""),
    ] {
        d.cmd(&["LINSERT", "l", place, pivot, "new"]);
        d.cmd(&["LRANGE", "l", "0", "-1"]);
    }
    d.cmd(&["LINSERT", "l", "AFTER", "new", "x"]);
    d.cmd(&["RPUSH", "t", "a"]);
    d.cmd(&["LINSERT", "t", "AFTER", "a", "z"]);
    d.cmd(&["LINSERT", "t", "BEFORE", "z", "y"]);
    d.cmd(&["LRANGE", "t", "0", "-1"]);
    d.cmd(&["LINSERT", "l", "MIDDLE", "a", "x"]);
    d.cmd(&["LINSERT", "missing", "MIDDLE", "a", "x"]);
    d.cmd(&["LINSERT", "missing", "BEFORE", "a", "x"]);
    d.cmd(&["EXISTS", "missing"]);
    d.cmd(&["LINSERT", "l", "BEFORE", "a"]);
}

// ------------------------------------------------------------------ LPOS

#[test]
fn lpos_options() {
    let mut d = Diff::new();
    d.cmd(&["RPUSH", "l", "a", "b", "c", "a", "b", "c", "a", "x"]);
    let options: &[&[&str]] = &[
        &[],
        &["RANK", "1"],
        &["RANK", "2"],
        &["RANK", "3"],
        &["RANK", "4"],
        &["RANK", "-1"],
        &["RANK", "-3"],
        &["RANK", "-4"],
        &["RANK", "0"],
        &["RANK", "-9223372036854775808"],
        &["RANK", "9223372036854775807"],
        &["RANK", "x"],
        &["COUNT", "0"],
        &["COUNT", "1"],
        &["COUNT", "2"],
        &["COUNT", "-1"],
        &["COUNT", "x"],
        &["COUNT", "2", "RANK", "2"],
        &["COUNT", "0", "RANK", "-1"],
        &["COUNT", "2", "RANK", "-1", "MAXLEN", "4"],
        &["COUNT", "2", "RANK", "-9223372036854775808"],
        &["COUNT", "0", "RANK", "-9223372036854775808"],
        &["MAXLEN", "0"],
        &["MAXLEN", "1"],
        &["MAXLEN", "3", "RANK", "2"],
        &["MAXLEN", "-1"],
        &["MAXLEN", "x"],
        &["RANK", "2", "RANK", "1"],
        &["rank", "1", "count", "0", "maxlen", "0"],
        &["FOO"],
        &["RANK"],
        &["COUNT", "1", "MAXLEN"],
    ];
    for opts in options {
        for element in ["a", "b", "x", "z"] {
            let mut c = vec!["LPOS", "l", element];
            c.extend_from_slice(opts);
            d.cmd(&c);
            c[1] = "missing";
            d.cmd(&c);
        }
    }
    d.cmd(&["LPOS", "l"]);
}

// ------------------------------------------------------------------ LMOVE / RPOPLPUSH

#[test]
fn lmove_between_lists_and_onto_itself() {
    let mut d = Diff::new();
    d.cmd(&["RPUSH", "src", "a", "b", "c"]);
    for (from, to) in [
        ("LEFT", "LEFT"),
        ("LEFT", "RIGHT"),
        ("RIGHT", "LEFT"),
        ("right", "right"),
    ] {
        d.cmd(&["LMOVE", "src", "dst", from, to]);
        d.cmd(&["LRANGE", "src", "0", "-1"]);
        d.cmd(&["LRANGE", "dst", "0", "-1"]);
        d.cmd(&["LMOVE", "dst", "dst", from, to]);
        d.cmd(&["LRANGE", "dst", "0", "-1"]);
    }
    d.cmd(&["EXISTS", "src"]);
    d.cmd(&["RPOPLPUSH", "dst", "dst"]);
    d.cmd(&["LRANGE", "dst", "0", "-1"]);
    d.cmd(&["RPOPLPUSH", "dst", "other"]);
    d.cmd(&["RPOPLPUSH", "missing", "dst"]);
    d.cmd(&["RPUSH", "one", "x"]);
    d.cmd(&["LMOVE", "one", "one", "LEFT", "RIGHT"]);
    d.cmd(&["LRANGE", "one", "0", "-1"]);
    d.cmd(&["RPOPLPUSH", "one", "fresh"]);
    d.cmd(&["EXISTS", "one"]);
    d.cmd(&["LRANGE", "fresh", "0", "-1"]);
    d.cmd(&["LMOVE", "fresh", "dst", "UP", "LEFT"]);
    d.cmd(&["LMOVE", "fresh", "dst", "LEFT", "DOWN"]);
    d.cmd(&["LMOVE", "missing", "dst", "UP", "LEFT"]);
    d.cmd(&["LMOVE", "fresh", "dst", "LEFT"]);
    d.cmd(&["RPOPLPUSH", "fresh"]);
}

#[test]
fn lmove_keeps_the_destination_ttl() {
    let mut d = Diff::new();
    d.cmd(&["RPUSH", "src", "a", "b"]);
    d.cmd(&["RPUSH", "dst", "z"]);
    d.cmd(&["EXPIRE", "dst", "1000"]);
    d.cmd(&["LMOVE", "src", "dst", "LEFT", "LEFT"]);
    d.ttl("dst");
    d.ttl("src");
}

// ------------------------------------------------------------------ LMPOP

#[test]
fn lmpop_pops_from_the_first_non_empty_list() {
    let mut d = Diff::new();
    d.cmd(&["RPUSH", "l", "a", "b", "c"]);
    d.cmd(&["RPUSH", "m", "x", "y"]);
    d.cmd(&["LMPOP", "2", "none", "l", "LEFT"]);
    d.cmd(&["LMPOP", "3", "none", "m", "l", "RIGHT", "COUNT", "5"]);
    d.cmd(&["EXISTS", "m"]);
    d.cmd(&["LMPOP", "1", "l", "left", "count", "1"]);
    d.cmd(&["LMPOP", "2", "l", "m", "RIGHT"]);
    d.cmd(&["LMPOP", "2", "l", "m", "RIGHT"]);
    d.cmd(&["LMPOP", "1", "l", "LEFT", "COUNT", "9223372036854775807"]);
    for bad in [
        &["LMPOP", "0", "l", "LEFT"][..],
        &["LMPOP", "-1", "l", "LEFT"],
        &["LMPOP", "x", "l", "LEFT"],
        &["LMPOP", "2", "l", "LEFT"],
        &["LMPOP", "5", "l", "LEFT"],
        &["LMPOP", "2147483648", "l", "LEFT"],
        &["LMPOP", "9223372036854775807", "l", "LEFT"],
        &["LMPOP", "9223372036854775808", "l", "LEFT"],
        &["LMPOP", "1", "l", "MIDDLE"],
        &["LMPOP", "1", "l", "LEFT", "COUNT", "0"],
        &["LMPOP", "1", "l", "LEFT", "COUNT", "-1"],
        &["LMPOP", "1", "l", "LEFT", "COUNT", "x"],
        &["LMPOP", "1", "l", "LEFT", "COUNT"],
        &["LMPOP", "1", "l", "LEFT", "COUNT", "1", "COUNT", "1"],
        &["LMPOP", "1", "l", "LEFT", "FOO"],
        &["LMPOP", "1", "l", "LEFT", "1"],
        &["LMPOP", "1", "l"],
        &["LMPOP", "0", "l", "MIDDLE"],
    ] {
        d.cmd(bad);
    }
    d.cmd(&["SET", "s", "x"]);
    d.cmd(&["RPUSH", "l", "a"]);
    d.cmd(&["LMPOP", "2", "s", "l", "LEFT"]);
    d.cmd(&["LMPOP", "2", "l", "s", "LEFT"]);
    d.cmd(&["LMPOP", "2", "missing", "s", "LEFT"]);
}

// ------------------------------------------------------------------ types and arity

#[test]
fn wrongtype_both_ways() {
    let mut d = Diff::new();
    d.cmd(&["SET", "s", "x"]);
    d.cmd(&["RPUSH", "l", "a", "b"]);
    for c in [
        &["LPUSH", "s", "a"][..],
        &["RPUSH", "s", "a"],
        &["LPUSHX", "s", "a"],
        &["RPUSHX", "s", "a"],
        &["LPOP", "s"],
        &["RPOP", "s", "0"],
        &["LPOP", "s", "2"],
        &["LLEN", "s"],
        &["LINDEX", "s", "0"],
        &["LINDEX", "s", "x"],
        &["LSET", "s", "0", "v"],
        &["LSET", "s", "x", "v"],
        &["LRANGE", "s", "0", "-1"],
        &["LTRIM", "s", "0", "-1"],
        &["LREM", "s", "0", "a"],
        &["LINSERT", "s", "BEFORE", "a", "b"],
        &["LPOS", "s", "a"],
        &["LPOS", "s", "a", "RANK", "0"],
        &["RPOPLPUSH", "s", "l"],
        &["RPOPLPUSH", "l", "s"],
        &["RPOPLPUSH", "missing", "s"],
        &["LMOVE", "s", "l", "LEFT", "LEFT"],
        &["LMOVE", "l", "s", "LEFT", "LEFT"],
        &["LMPOP", "1", "s", "LEFT"],
        &["GET", "l"],
        &["APPEND", "l", "x"],
        &["INCR", "l"],
        &["STRLEN", "l"],
        &["GETRANGE", "l", "0", "1"],
        &["SETRANGE", "l", "0", "x"],
    ] {
        d.cmd(c);
    }
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&["SET", "l", "overwritten"]);
    d.cmd(&["GET", "l"]);
    d.cmd(&["TYPE", "l"]);
}

// ------------------------------------------------------------------ INFO

#[test]
fn list_writes_count_as_changes_since_last_save() {
    let mut d = Diff::new();
    let steps: &[&[&str]] = &[
        &["RPUSH", "l", "a", "b", "c", "d", "e", "f", "g", "h"],
        &["LPUSH", "l", "x", "y"],
        &["LPUSHX", "missing", "a"],
        &["RPUSHX", "l", "z"],
        &["LPOP", "l"],
        &["RPOP", "l", "2"],
        &["LPOP", "l", "0"],
        &["LPOP", "missing"],
        &["LSET", "l", "0", "q"],
        &["LSET", "l", "100", "q"],
        &["LINSERT", "l", "BEFORE", "q", "w"],
        &["LINSERT", "l", "BEFORE", "nope", "w"],
        &["LREM", "l", "0", "a"],
        &["LREM", "l", "0", "nope"],
        &["LTRIM", "l", "1", "3"],
        &["LTRIM", "l", "0", "-1"],
        &["RPOPLPUSH", "l", "l"],
        &["LMOVE", "l", "m", "LEFT", "RIGHT"],
        &["LMPOP", "1", "l", "LEFT", "COUNT", "5"],
        &["LMOVE", "missing", "m", "LEFT", "LEFT"],
        &["RPUSH", "one", "a"],
        &["LTRIM", "one", "1", "0"],
        &["LRANGE", "m", "0", "-1"],
    ];
    for step in steps {
        d.cmd(step);
        d.cmd_with(&["INFO", "persistence"], info::changes_since_save);
    }
}

// ------------------------------------------------------------------ keyspace

#[test]
fn copy_rename_move_and_expiry_of_lists() {
    let mut d = Diff::new();
    d.cmd(&["RPUSH", "l", "a", "b", "c"]);
    d.cmd(&["EXPIRE", "l", "1000"]);
    d.cmd(&["COPY", "l", "c"]);
    d.cmd(&["LPUSH", "c", "z"]);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&["LRANGE", "c", "0", "-1"]);
    d.ttl("c");
    d.cmd(&["RENAME", "c", "r"]);
    d.cmd(&["RPOP", "r"]);
    d.cmd(&["LRANGE", "r", "0", "-1"]);
    d.cmd(&["MOVE", "r", "1"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["LRANGE", "r", "0", "-1"]);
    d.cmd(&["RPUSH", "r", "tail"]);
    d.cmd(&["LINDEX", "r", "-1"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["PEXPIRE", "l", "1"]);
    d.sleep_ms(20);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&["EXISTS", "l"]);
    d.cmd(&["RPUSH", "l", "fresh"]);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd_unordered(&["KEYS", "*"]);
}

#[test]
fn dump_matches_redis_and_restores() {
    let mut d = Diff::new();
    d.cmd(&[
        "RPUSH",
        "small",
        "a",
        "b",
        "12",
        "-3",
        "",
        "9223372036854775807",
    ]);
    d.cmd(&["DUMP", "small"]);
    d.cmd(&["LPUSH", "lp", "x", "y", "z"]);
    d.cmd(&["DUMP", "lp"]);
    // Several quicklist nodes (8 KB each), and one element over 8 KB.
    rpush_many(&mut d, "nodes", 3000, "element-");
    d.cmd(&["RPUSH", "nodes", &"v".repeat(9000)]);
    d.cmd(&["RPUSH", "nodes", "after"]);
    d.cmd(&["DUMP", "nodes"]);
    d.cmd(&["DUMP", "missing"]);
    let payload = d.cmd(&["DUMP", "nodes"]);
    let payload = payload.as_bytes().expect("a dump payload").to_vec();
    d.cmd(&[b"RESTORE".as_slice(), b"copy", b"0", &payload]);
    d.cmd(&["LLEN", "copy"]);
    d.cmd(&["LRANGE", "copy", "2990", "-1"]);
    d.cmd(&["LINDEX", "copy", "1500"]);
    d.cmd(&[b"RESTORE".as_slice(), b"copy", b"0", &payload]);
    d.cmd(&[
        b"RESTORE".as_slice(),
        b"copy",
        b"100000",
        &payload,
        b"REPLACE",
    ]);
    d.pttl("copy");
    d.cmd(&["OBJECT", "ENCODING", "copy"]);
    d.cmd(&["TYPE", "copy"]);
    let small = d.cmd(&["DUMP", "small"]);
    let small = small.as_bytes().expect("a dump payload").to_vec();
    d.cmd(&[b"RESTORE".as_slice(), b"s", b"0", &small]);
    d.cmd(&["LRANGE", "s", "0", "-1"]);
    d.cmd(&["RPUSH", "s", "more"]);
    d.cmd(&["LPOP", "s"]);
    d.cmd(&["DUMP", "s"]);
}

#[test]
fn long_lists_beyond_the_inline_limit() {
    let mut d = Diff::new();
    rpush_many(&mut d, "l", 2600, "e");
    d.cmd(&["RPUSH", "l", "needle", "e5", "needle"]);
    d.cmd(&["LLEN", "l"]);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&["LRANGE", "l", "1200", "1210"]);
    d.cmd(&["LINDEX", "l", "-2"]);
    d.cmd(&["LPOS", "l", "needle"]);
    d.cmd(&["LPOS", "l", "e5", "COUNT", "0"]);
    d.cmd(&["LPOS", "l", "needle", "RANK", "-2", "MAXLEN", "10"]);
    d.cmd(&["LINSERT", "l", "BEFORE", "e2000", "inserted-late"]);
    d.cmd(&["LINSERT", "l", "AFTER", "e100", "inserted-early"]);
    d.cmd(&["LRANGE", "l", "95", "105"]);
    d.cmd(&["LRANGE", "l", "1995", "2005"]);
    d.cmd(&["LREM", "l", "1", "e5"]);
    d.cmd(&["LREM", "l", "-1", "e5"]);
    d.cmd(&["LREM", "l", "0", "needle"]);
    d.cmd(&["LRANGE", "l", "-5", "-1"]);
    d.cmd(&["LPOP", "l", "1500"]);
    d.cmd(&["RPOP", "l", "3"]);
    d.cmd(&["LMPOP", "1", "l", "RIGHT", "COUNT", "1200"]);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    rpush_many(&mut d, "t", 3000, "t");
    d.cmd(&["LTRIM", "t", "100", "2900"]);
    d.cmd(&["LRANGE", "t", "0", "2"]);
    d.cmd(&["LRANGE", "t", "-2", "-1"]);
    d.cmd(&["LTRIM", "t", "1000", "1009"]);
    d.cmd(&["LRANGE", "t", "0", "-1"]);
    d.cmd(&["RPUSH", "t", "x"]);
    d.cmd(&["LPUSH", "t", "y"]);
    d.cmd(&["LRANGE", "t", "0", "-1"]);
    d.cmd(&["DUMP", "t"]);
}

#[test]
fn binary_and_large_elements() {
    let mut d = Diff::new();
    let binary: Vec<u8> = (0..=255u8).collect();
    let large = pattern(200_000, 3);
    d.cmd(&[b"RPUSH".as_slice(), b"l", &binary, &large, b"\0", b"\r\n"]);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&[b"LPOS".as_slice(), b"l", &large]);
    d.cmd(&[b"LREM".as_slice(), b"l", b"0", &binary]);
    d.cmd(&[b"LINSERT".as_slice(), b"l", b"BEFORE", b"\0", &binary]);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&["DUMP", "l"]);
}

// ------------------------------------------------------------------ random sequences

const KEYS: [&str; 4] = ["a", "b", "c", "d"];
const DEFAULT_STEPS: usize = 400;

struct Gen {
    rng: StdRng,
}

impl Gen {
    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.rng.random_range(0..items.len())].clone()
    }

    fn key(&mut self) -> String {
        self.pick(&KEYS).to_string()
    }

    /// Few distinct values, so LREM/LPOS/LINSERT find matches.
    fn element(&mut self) -> String {
        self.pick(&["x", "y", "z", "", "1", "-2", "xx"]).to_string()
    }

    fn int(&mut self, lo: i64, hi: i64) -> String {
        if self.rng.random_range(0..100) < 88 {
            self.rng.random_range(lo..=hi).to_string()
        } else {
            self.pick(&[
                "x",
                "-0",
                "1.5",
                "9223372036854775807",
                "-9223372036854775808",
            ])
            .to_string()
        }
    }

    fn side(&mut self) -> String {
        self.pick(&["LEFT", "RIGHT", "left", "up"]).to_string()
    }

    fn command(&mut self) -> Vec<String> {
        let k = self.key();
        let mut c: Vec<String> = Vec::new();
        match self.rng.random_range(0..30) {
            0..=3 => {
                c.extend([self.pick(&["LPUSH", "RPUSH"]).to_string(), k]);
                for _ in 0..self.rng.random_range(1..5) {
                    c.push(self.element());
                }
            }
            4 => c.extend([
                self.pick(&["LPUSHX", "RPUSHX"]).to_string(),
                k,
                self.element(),
            ]),
            5 | 6 => {
                c.extend([self.pick(&["LPOP", "RPOP"]).to_string(), k]);
                if self.rng.random_range(0..2) == 0 {
                    c.push(self.int(-1, 4));
                }
            }
            7 => c.extend(["LLEN".into(), k]),
            8 => c.extend(["LINDEX".into(), k, self.int(-6, 6)]),
            9 => c.extend(["LSET".into(), k, self.int(-6, 6), self.element()]),
            10 | 11 => c.extend(["LRANGE".into(), k, self.int(-8, 8), self.int(-8, 8)]),
            12 => c.extend(["LTRIM".into(), k, self.int(-8, 8), self.int(-8, 8)]),
            13 => c.extend(["LREM".into(), k, self.int(-3, 3), self.element()]),
            14 => c.extend([
                "LINSERT".into(),
                k,
                self.pick(&["BEFORE", "AFTER", "after", "AROUND"])
                    .to_string(),
                self.element(),
                self.element(),
            ]),
            15 => {
                c.extend(["LPOS".into(), k, self.element()]);
                for _ in 0..self.rng.random_range(0..3) {
                    let opt = self.pick(&["RANK", "COUNT", "MAXLEN"]).to_string();
                    c.push(opt);
                    c.push(self.int(-3, 4));
                }
            }
            16 => c.extend(["RPOPLPUSH".into(), k, self.key()]),
            17 => c.extend(["LMOVE".into(), k, self.key(), self.side(), self.side()]),
            18 => {
                let n = self.rng.random_range(1..4);
                c.extend(["LMPOP".into(), n.to_string()]);
                for _ in 0..n {
                    c.push(self.key());
                }
                c.push(self.side());
                if self.rng.random_range(0..2) == 0 {
                    c.extend(["COUNT".into(), self.int(0, 4)]);
                }
            }
            19 | 20 => c.extend(["SET".into(), k, self.element()]),
            21 => c.extend(["GET".into(), k]),
            22 => c.extend(["DEL".into(), k]),
            23 => c.extend(["TYPE".into(), k]),
            24 => c.extend([
                "EXPIRE".into(),
                k,
                self.pick(&["1000", "0", "-1"]).to_string(),
            ]),
            25 => c.extend(["APPEND".into(), k, self.element()]),
            26 => c.extend(["RENAME".into(), k, self.key()]),
            27 => c.extend(["COPY".into(), k, self.key(), "REPLACE".into()]),
            28 => c.extend(["OBJECT".into(), "ENCODING".into(), k]),
            _ => c.extend(["EXISTS".into(), k]),
        }
        c
    }
}

fn compare_lists(d: &mut Diff) {
    d.cmd(&["DBSIZE"]);
    for key in KEYS {
        d.cmd(&["TYPE", key]);
        d.cmd(&["LRANGE", key, "0", "-1"]);
        d.cmd(&["GET", key]);
        d.cmd_approx(&["TTL", key], 1);
    }
}

fn random_run(seed: u64) {
    let mut d = Diff::new();
    d.context = format!("list seed={seed} (rerun alone with FIRN_DIFF_SEED={seed})");
    let mut gen = Gen {
        rng: StdRng::seed_from_u64(seed),
    };
    for _ in 0..random_steps(DEFAULT_STEPS) {
        let c = gen.command();
        let args: Vec<&str> = c.iter().map(String::as_str).collect();
        d.cmd(&args);
    }
    compare_lists(&mut d);
}

#[test]
fn random_list_sequences_seeds_0_to_3() {
    for seed in random_seeds(0, 4) {
        random_run(seed);
    }
}

#[test]
fn random_list_sequences_seeds_4_to_7() {
    for seed in random_seeds(4, 4) {
        random_run(seed);
    }
}

/// Restarts (clean, then kill -9, alternately) every this many commands.
const RESTART_EVERY: usize = 100;

/// The random sequence against a firn with a small memory budget that is
/// restarted every [`RESTART_EVERY`] commands: lists read back cold after
/// each restart must match redis-server, which is never restarted.
fn random_run_with_restarts(seed: u64) {
    let firn = Server::firn_with(&["--maxmemory", "16mb"]);
    let mut d = Diff::with_servers(Server::redis(), firn);
    d.context = format!("list restart seed={seed} (rerun alone with FIRN_DIFF_SEED={seed})");
    let mut gen = Gen {
        rng: StdRng::seed_from_u64(seed),
    };
    for step in 1..=random_steps(DEFAULT_STEPS) {
        let c = gen.command();
        let args: Vec<&str> = c.iter().map(String::as_str).collect();
        d.cmd(&args);
        // In self-test mode "firn" is a redis-server without persistence,
        // which a restart would empty.
        if step.is_multiple_of(RESTART_EVERY) && !selftest() {
            if (step / RESTART_EVERY).is_multiple_of(2) {
                d.firn_server.kill9_restart();
            } else {
                d.firn_server.restart();
            }
            d.note("firn restarted");
            d.reconnect();
            compare_lists(&mut d);
        }
    }
    compare_lists(&mut d);
}

#[test]
fn random_list_sequences_across_restarts() {
    for seed in random_seeds(8, 4) {
        random_run_with_restarts(seed);
    }
}

/// A range past 10,000 elements is streamed by Firn from a snapshot: the
/// bytes must still be Redis's, whatever the range arithmetic.
#[test]
fn long_ranges_are_streamed_with_redis_bytes() {
    let mut d = Diff::new();
    for part in 0..3 {
        let mut cmd = vec!["RPUSH".to_string(), "big".to_string()];
        cmd.extend((part * 5000..(part + 1) * 5000).map(|i| format!("e{i}")));
        d.cmd(&cmd);
    }
    for (start, stop) in [
        ("0", "-1"),
        ("1", "-2"),
        ("-12000", "11000"),
        ("100", "100000"),
        ("-100000", "-5"),
        ("5000", "4999"),
    ] {
        d.cmd(&["LRANGE", "big", start, stop]);
    }
    d.cmd_with(&["HELLO", "3"], |_| R::Null);
    d.cmd(&["LRANGE", "big", "0", "-1"]);
    let replies = d.pipeline(&[
        vec![b"LPUSH".to_vec(), b"big".to_vec(), b"first".to_vec()],
        vec![
            b"LRANGE".to_vec(),
            b"big".to_vec(),
            b"0".to_vec(),
            b"-1".to_vec(),
        ],
        vec![b"LPOP".to_vec(), b"big".to_vec()],
        vec![
            b"LRANGE".to_vec(),
            b"big".to_vec(),
            b"0".to_vec(),
            b"-1".to_vec(),
        ],
    ]);
    assert_eq!(replies[1].items().len(), 15_001);
    assert_eq!(replies[3].items().len(), 15_000);
}
