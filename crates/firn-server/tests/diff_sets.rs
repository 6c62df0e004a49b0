//! Sets, side by side with redis-server 7.0.15: every command of the group,
//! its errors, OBJECT ENCODING through the intset -> hashtable conversion,
//! DUMP/RESTORE, RESP3 reply types, and a seeded random sequence mixing
//! set and string commands on the same keys.
//!
//! Redis replies with an intset's members in numeric order (compared
//! exactly here) and with a hashtable's in hash order (compared
//! unordered). Random members (SPOP, SRANDMEMBER) are checked for shape,
//! count, distinctness and membership, on sets whose remaining contents
//! do not depend on the draw when both servers' states are compared.

use firn_testkit::{data::all_bytes, env::random_seeds, reply::assert_err, Diff, R};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;

fn ints(range: std::ops::Range<i64>) -> Vec<String> {
    range.map(|i| i.to_string()).collect()
}

fn with_args(head: &[&str], tail: &[String]) -> Vec<String> {
    head.iter()
        .map(|s| s.to_string())
        .chain(tail.iter().cloned())
        .collect()
}

/// After a random pop on both servers: firn gets back what it popped and
/// loses what redis popped.
fn align_firn(d: &mut Diff, key: &str, redis_popped: &[Vec<u8>], firn_popped: &[Vec<u8>]) {
    let pair = d.client();
    for m in firn_popped {
        pair.firn.send(&[b"SADD".as_slice(), key.as_bytes(), m]);
        assert_eq!(pair.firn.read_reply().1, R::Int(1));
    }
    for m in redis_popped {
        pair.firn.send(&[b"SREM".as_slice(), key.as_bytes(), m]);
        assert_eq!(pair.firn.read_reply().1, R::Int(1));
    }
}

fn members_of_bulk(r: &R) -> Vec<Vec<u8>> {
    vec![r
        .as_bytes()
        .unwrap_or_else(|| panic!("bulk expected: {}", r.render()))
        .to_vec()]
}

fn members(r: &R) -> Vec<Vec<u8>> {
    r.items()
        .iter()
        .map(|m| {
            m.as_bytes()
                .unwrap_or_else(|| panic!("bulk expected: {}", r.render()))
                .to_vec()
        })
        .collect()
}

#[test]
fn membership_commands_and_their_errors() {
    let mut d = Diff::new();
    d.cmd(&["SADD", "s", "3", "1", "2", "10", "-5", "1"]);
    d.cmd(&["SMEMBERS", "s"]);
    d.cmd(&["OBJECT", "ENCODING", "s"]);
    d.cmd(&["SCARD", "s"]);
    d.cmd(&["SISMEMBER", "s", "10"]);
    d.cmd(&["SISMEMBER", "s", "010"]);
    d.cmd(&["SISMEMBER", "s", "x"]);
    d.cmd(&["SMISMEMBER", "s", "1", "x", "-5", "2", "99"]);
    d.cmd(&["SADD", "s", "1", "2"]);
    d.cmd(&["SREM", "s", "1", "x", "1", "3"]);
    d.cmd(&["SMEMBERS", "s"]);
    d.cmd(&["SREM", "s", "2", "10", "-5", "77"]);
    d.cmd(&["EXISTS", "s"]);
    d.cmd(&["SREM", "s", "1"]);
    // Missing keys.
    d.cmd(&["SCARD", "nokey"]);
    d.cmd(&["SISMEMBER", "nokey", "a"]);
    d.cmd(&["SMISMEMBER", "nokey", "a", "b"]);
    d.cmd(&["SMEMBERS", "nokey"]);
    d.cmd(&["SREM", "nokey", "a"]);
    d.cmd(&["SRANDMEMBER", "nokey"]);
    d.cmd(&["SPOP", "nokey"]);
    // Members that are almost integers are strings.
    for odd in [
        "007",
        "-0",
        "+1",
        " 1",
        "1 ",
        "1.0",
        "",
        "9223372036854775808",
        "-9223372036854775809",
    ] {
        d.cmd(&["DEL", "t"]);
        d.cmd(&["SADD", "t", "5", odd]);
        d.cmd(&["OBJECT", "ENCODING", "t"]);
        d.cmd(&["SISMEMBER", "t", odd]);
        d.cmd_unordered(&["SMEMBERS", "t"]);
    }
    d.cmd(&["DEL", "t"]);
    d.cmd(&[
        "SADD",
        "t",
        "9223372036854775807",
        "-9223372036854775808",
        "0",
        "-1",
    ]);
    d.cmd(&["OBJECT", "ENCODING", "t"]);
    d.cmd(&["SMEMBERS", "t"]);
    // A first member that is text makes a hashtable at once.
    d.cmd(&["SADD", "h", "a", "1"]);
    d.cmd(&["OBJECT", "ENCODING", "h"]);
    d.cmd(&["SREM", "h", "a"]);
    d.cmd(&["OBJECT", "ENCODING", "h"]);
    d.cmd(&["SMEMBERS", "h"]);
    // Binary members.
    d.cmd(&[
        b"SADD".as_slice(),
        b"bin",
        b"\x00\xff",
        b"\x00",
        b"",
        &all_bytes(),
    ]);
    d.cmd(&[b"SISMEMBER".as_slice(), b"bin", b"\x00"]);
    d.cmd(&[b"SISMEMBER".as_slice(), b"bin", b"\x00\x00"]);
    d.cmd_unordered(&["SMEMBERS", "bin"]);
    // WRONGTYPE against a string, and arity errors.
    d.cmd(&["SET", "str", "v"]);
    for args in [
        vec!["SADD", "str", "a"],
        vec!["SREM", "str", "a"],
        vec!["SCARD", "str"],
        vec!["SISMEMBER", "str", "a"],
        vec!["SMISMEMBER", "str", "a"],
        vec!["SMEMBERS", "str"],
        vec!["SPOP", "str"],
        vec!["SPOP", "str", "0"],
        vec!["SRANDMEMBER", "str"],
        vec!["SRANDMEMBER", "str", "0"],
        vec!["SINTER", "s", "str"],
        vec!["SINTER", "nokey", "str"],
        vec!["SUNION", "str"],
        vec!["SDIFF", "nokey", "str"],
        vec!["SINTERCARD", "2", "nokey", "str"],
        vec!["SSCAN", "str", "0"],
        vec!["SMOVE", "str", "x", "a"],
        vec!["SINTERSTORE", "dst", "str"],
        vec!["SUNIONSTORE", "dst", "str"],
        vec!["SDIFFSTORE", "dst", "str"],
    ] {
        d.cmd(&args);
    }
    for args in [
        vec!["SADD", "k"],
        vec!["SREM", "k"],
        vec!["SCARD"],
        vec!["SCARD", "a", "b"],
        vec!["SISMEMBER", "k"],
        vec!["SMISMEMBER", "k"],
        vec!["SMEMBERS"],
        vec!["SMOVE", "a", "b"],
        vec!["SPOP"],
        vec!["SRANDMEMBER"],
        vec!["SINTER"],
        vec!["SINTERSTORE", "d"],
        vec!["SINTERCARD", "1"],
        vec!["SUNION"],
        vec!["SDIFFSTORE", "d"],
        vec!["SSCAN", "k"],
    ] {
        d.cmd(&args);
    }
    d.cmd(&["GET", "str"]);
}

#[test]
fn encoding_converts_past_512_integers_and_stays_converted() {
    let mut d = Diff::new();
    d.cmd(&with_args(&["SADD", "s"], &ints(0..512)));
    d.cmd(&["OBJECT", "ENCODING", "s"]);
    d.cmd(&["SADD", "s", "511"]);
    d.cmd(&["OBJECT", "ENCODING", "s"]);
    d.cmd(&["SMEMBERS", "s"]);
    d.cmd(&["SADD", "s", "-1"]);
    d.cmd(&["OBJECT", "ENCODING", "s"]);
    d.cmd(&with_args(&["SREM", "s"], &ints(0..500)));
    d.cmd(&["OBJECT", "ENCODING", "s"]);
    d.cmd_unordered(&["SMEMBERS", "s"]);
    d.cmd(&["SCARD", "s"]);
    // 513 members in one SADD.
    d.cmd(&with_args(&["SADD", "t"], &ints(-300..213)));
    d.cmd(&["OBJECT", "ENCODING", "t"]);
    d.cmd(&["TYPE", "t"]);
    // COPY keeps the encoding; RENAME moves it.
    d.cmd(&["SADD", "small", "1", "2"]);
    d.cmd(&["COPY", "s", "s2"]);
    d.cmd(&["OBJECT", "ENCODING", "s2"]);
    d.cmd(&["COPY", "small", "small2"]);
    d.cmd(&["OBJECT", "ENCODING", "small2"]);
    d.cmd(&["SMEMBERS", "small2"]);
    d.cmd(&["RENAME", "s2", "s3"]);
    d.cmd(&["OBJECT", "ENCODING", "s3"]);
    d.cmd(&["SCARD", "s3"]);
}

#[test]
fn smove_between_sets() {
    let mut d = Diff::new();
    d.cmd(&["SADD", "src", "1", "2", "a"]);
    d.cmd(&["SET", "str", "v"]);
    // A missing source answers 0 before any type check.
    d.cmd(&["SMOVE", "nokey", "str", "1"]);
    d.cmd(&["SMOVE", "src", "str", "1"]);
    d.cmd(&["SMOVE", "str", "src", "1"]);
    d.cmd(&["SMOVE", "src", "src", "1"]);
    d.cmd(&["SMOVE", "src", "src", "9"]);
    d.cmd(&["SMOVE", "src", "dst", "9"]);
    d.cmd(&["EXISTS", "dst"]);
    // Into a new destination: its encoding follows the member.
    d.cmd(&["SMOVE", "src", "dst", "1"]);
    d.cmd(&["OBJECT", "ENCODING", "dst"]);
    d.cmd(&["SMOVE", "src", "dst2", "a"]);
    d.cmd(&["OBJECT", "ENCODING", "dst2"]);
    d.cmd(&["SMOVE", "src", "dst", "2"]);
    d.cmd(&["EXISTS", "src"]);
    d.cmd(&["SMEMBERS", "dst"]);
    // Into an existing intset, text converts it; a member already there
    // still leaves the source.
    d.cmd(&["SADD", "src", "x", "2"]);
    d.cmd(&["SMOVE", "src", "dst", "2"]);
    d.cmd(&["SMEMBERS", "dst"]);
    d.cmd(&["SMEMBERS", "src"]);
    d.cmd(&["SMOVE", "src", "dst", "x"]);
    d.cmd(&["OBJECT", "ENCODING", "dst"]);
    d.cmd_unordered(&["SMEMBERS", "dst"]);
    d.cmd(&["EXISTS", "src"]);
}

#[test]
fn intersections_unions_and_differences() {
    let mut d = Diff::new();
    d.cmd(&["SADD", "i1", "1", "2", "3", "4", "5", "100"]);
    d.cmd(&["SADD", "i2", "5", "4", "3", "-7"]);
    d.cmd(&["SADD", "i3", "3", "4", "200", "5000"]);
    d.cmd(&["SADD", "t1", "a", "b", "c", "3", "4"]);
    d.cmd(&["SADD", "t2", "b", "c", "d"]);
    d.cmd(&["SET", "str", "v"]);
    // Results held as intsets come back in numeric order.
    d.cmd(&["SINTER", "i1", "i2"]);
    d.cmd(&["SINTER", "i1", "i2", "i3"]);
    d.cmd(&["SINTER", "t1", "i1"]);
    d.cmd(&["SINTER", "i1", "i1"]);
    d.cmd(&["SINTER", "i1", "nokey"]);
    d.cmd(&["SINTER", "nokey"]);
    d.cmd_unordered(&["SINTER", "t1", "t2"]);
    d.cmd_unordered(&["SINTER", "t1"]);
    d.cmd(&["SUNION", "i1", "i2", "i3"]);
    d.cmd(&["SUNION", "i1", "nokey"]);
    d.cmd(&["SUNION", "nokey", "nokey2"]);
    d.cmd_unordered(&["SUNION", "t1", "i1"]);
    d.cmd(&["SDIFF", "i1", "i2"]);
    d.cmd(&["SDIFF", "i1", "i2", "i3"]);
    d.cmd(&["SDIFF", "i1", "nokey", "i3"]);
    d.cmd(&["SDIFF", "i1", "i1"]);
    d.cmd(&["SDIFF", "i1", "i2", "i1"]);
    d.cmd(&["SDIFF", "nokey", "i1"]);
    d.cmd_unordered(&["SDIFF", "t1", "t2"]);
    d.cmd_unordered(&["SDIFF", "t1", "i1"]);
    d.cmd_unordered(&["SDIFF", "t1", "nokey"]);
    // STORE forms: the result's encoding follows its contents.
    d.cmd(&["SINTERSTORE", "d1", "t1", "i1"]);
    d.cmd(&["OBJECT", "ENCODING", "d1"]);
    d.cmd(&["SMEMBERS", "d1"]);
    d.cmd(&["SUNIONSTORE", "d2", "i1", "i2"]);
    d.cmd(&["OBJECT", "ENCODING", "d2"]);
    d.cmd(&["SUNIONSTORE", "d3", "t1", "i2"]);
    d.cmd(&["OBJECT", "ENCODING", "d3"]);
    d.cmd(&["SDIFFSTORE", "d4", "t1", "t2"]);
    d.cmd(&["OBJECT", "ENCODING", "d4"]);
    d.cmd_unordered(&["SMEMBERS", "d4"]);
    // Redis's second diff algorithm (three sets, small subtrahends) adds
    // the whole first set first: text in it leaves a hashtable.
    d.cmd(&["SADD", "big1", "x", "1", "2", "3", "4", "5", "6", "7", "8"]);
    d.cmd(&["SADD", "sm1", "x"]);
    d.cmd(&["SADD", "sm2", "8"]);
    d.cmd(&["SDIFFSTORE", "d5", "big1", "sm1", "sm2"]);
    d.cmd(&["OBJECT", "ENCODING", "d5"]);
    d.cmd_unordered(&["SMEMBERS", "d5"]);
    d.cmd(&["SDIFFSTORE", "d6", "big1", "sm1"]);
    d.cmd(&["OBJECT", "ENCODING", "d6"]);
    d.cmd(&["SMEMBERS", "d6"]);
    // A STORE replaces any type and drops the TTL; an empty result deletes.
    d.cmd(&["SET", "dst", "v", "EX", "1000"]);
    d.cmd(&["SUNIONSTORE", "dst", "i1"]);
    d.cmd(&["TTL", "dst"]);
    d.cmd(&["TYPE", "dst"]);
    d.cmd(&["SMEMBERS", "dst"]);
    d.cmd(&["SINTERSTORE", "dst", "i1", "t2"]);
    d.cmd(&["EXISTS", "dst"]);
    d.cmd(&["SINTERSTORE", "dst", "i1", "nokey"]);
    d.cmd(&["SDIFFSTORE", "dst", "nokey", "i1"]);
    d.cmd(&["SUNIONSTORE", "str2", "nokey"]);
    // The destination may be a source.
    d.cmd(&["SINTERSTORE", "i1", "i1", "i2"]);
    d.cmd(&["SMEMBERS", "i1"]);
    d.cmd(&["SUNIONSTORE", "i2", "i2", "i3"]);
    d.cmd(&["SMEMBERS", "i2"]);
    d.cmd(&["SDIFFSTORE", "i3", "i3", "i1"]);
    d.cmd(&["SMEMBERS", "i3"]);
    // SINTERCARD.
    d.cmd(&["SINTERCARD", "2", "i2", "i3"]);
    d.cmd(&["SINTERCARD", "1", "t1"]);
    d.cmd(&["SINTERCARD", "1", "t1", "LIMIT", "2"]);
    d.cmd(&["SINTERCARD", "1", "t1", "limit", "0"]);
    d.cmd(&["SINTERCARD", "1", "t1", "LIMIT", "2", "LIMIT", "100"]);
    d.cmd(&["SINTERCARD", "2", "t1", "nokey"]);
    d.cmd(&["SINTERCARD", "2", "t1", "t2", "LIMIT", "1"]);
    for bad in [
        vec!["SINTERCARD", "0", "t1"],
        vec!["SINTERCARD", "-1", "t1"],
        vec!["SINTERCARD", "abc", "t1"],
        vec!["SINTERCARD", "9223372036854775808", "t1"],
        vec!["SINTERCARD", "3", "t1", "t2"],
        vec!["SINTERCARD", "1", "t1", "LIMIT"],
        vec!["SINTERCARD", "1", "t1", "LIMIT", "-1"],
        vec!["SINTERCARD", "1", "t1", "LIMIT", "x"],
        vec!["SINTERCARD", "1", "t1", "LIMITS", "1"],
        vec!["SINTERCARD", "1", "t1", "t2"],
        vec!["SINTERCARD", "1", "str", "LIMIT", "x"],
        vec!["SINTERCARD", "1", "str"],
    ] {
        d.cmd(&bad);
    }
}

#[test]
fn algebra_over_sets_larger_than_a_page() {
    let mut d = Diff::new();
    // 3000 and 2500 members: walks of several pages, on the pool.
    for chunk in 0..6 {
        let evens: Vec<String> = (chunk * 500..(chunk + 1) * 500)
            .map(|i| format!("m{}", i * 2))
            .collect();
        d.cmd(&with_args(&["SADD", "even"], &evens));
    }
    for chunk in 0..5 {
        let threes: Vec<String> = (chunk * 500..(chunk + 1) * 500)
            .map(|i| format!("m{}", i * 3))
            .collect();
        d.cmd(&with_args(&["SADD", "three"], &threes));
    }
    d.cmd(&["SADD", "few", "m6", "m12", "m7", "m9000", "zzz"]);
    d.cmd(&["SCARD", "even"]);
    d.cmd_unordered(&["SMEMBERS", "even"]);
    d.cmd_unordered(&["SINTER", "even", "three"]);
    d.cmd_unordered(&["SINTER", "three", "few", "even"]);
    d.cmd(&["SINTERCARD", "2", "even", "three"]);
    d.cmd(&["SINTERCARD", "2", "even", "three", "LIMIT", "1500"]);
    d.cmd(&["SINTERCARD", "2", "even", "three", "LIMIT", "10"]);
    d.cmd_unordered(&["SUNION", "even", "three", "few"]);
    d.cmd_unordered(&["SDIFF", "even", "three"]);
    d.cmd_unordered(&["SDIFF", "three", "few", "even"]);
    d.cmd_unordered(&["SDIFF", "even", "few"]);
    d.cmd(&["SUNIONSTORE", "u", "even", "three"]);
    d.cmd(&["OBJECT", "ENCODING", "u"]);
    d.cmd(&["SINTERSTORE", "i", "even", "three"]);
    d.cmd(&["SDIFFSTORE", "df", "even", "three", "few"]);
    d.cmd(&["SDIFFSTORE", "df2", "few", "even"]);
    d.cmd_unordered(&["SMEMBERS", "df2"]);
    for key in ["u", "i", "df"] {
        d.cmd(&["SCARD", key]);
        d.scan_all(&["SSCAN", key], &[]);
    }
    d.scan_all(&["SSCAN", "even"], &["MATCH", "m1*", "COUNT", "100"]);
    d.scan_all(&["SSCAN", "three"], &["COUNT", "7"]);
    // Integers past 512 are a hashtable.
    for chunk in 0..3 {
        d.cmd(&with_args(
            &["SADD", "nums"],
            &ints(chunk * 400..(chunk + 1) * 400),
        ));
    }
    d.cmd(&["SINTERSTORE", "n2", "nums", "nums"]);
    d.cmd(&["OBJECT", "ENCODING", "n2"]);
    d.cmd(&["SDIFFSTORE", "n3", "nums", "even"]);
    d.cmd(&["OBJECT", "ENCODING", "n3"]);
    d.cmd(&with_args(&["SADD", "low"], &ints(0..1100)));
    d.cmd(&["SDIFFSTORE", "n4", "nums", "low"]);
    d.cmd(&["OBJECT", "ENCODING", "n4"]);
    d.cmd(&["SMEMBERS", "n4"]);
}

#[test]
fn spop_and_srandmember() {
    let mut d = Diff::new();
    d.cmd(&["SADD", "s", "1", "2", "3"]);
    for bad in [
        vec!["SPOP", "s", "-1"],
        vec!["SPOP", "s", "abc"],
        vec!["SPOP", "s", "1.5"],
        vec!["SPOP", "s", "9223372036854775808"],
        vec!["SPOP", "s", "1", "2"],
        vec!["SPOP", "nokey", "-1"],
        vec!["SRANDMEMBER", "s", "abc"],
        vec!["SRANDMEMBER", "s", "-9223372036854775808"],
        vec!["SRANDMEMBER", "s", "9223372036854775808"],
        vec!["SRANDMEMBER", "s", "1", "2"],
        vec!["SRANDMEMBER", "nokey", "x"],
    ] {
        d.cmd(&bad);
    }
    d.cmd(&["SPOP", "nokey", "0"]);
    d.cmd(&["SPOP", "nokey", "5"]);
    d.cmd(&["SPOP", "s", "0"]);
    d.cmd(&["SRANDMEMBER", "nokey", "5"]);
    d.cmd(&["SRANDMEMBER", "nokey", "-5"]);
    d.cmd(&["SRANDMEMBER", "s", "0"]);
    // A count covering the set returns it whole (an intset in order).
    d.cmd(&["SRANDMEMBER", "s", "3"]);
    d.cmd(&["SRANDMEMBER", "s", "100"]);
    d.cmd(&["SADD", "one", "x"]);
    d.cmd(&["SRANDMEMBER", "one", "-3"]);
    d.cmd(&["SRANDMEMBER", "one"]);
    d.cmd(&["SPOP", "s", "3"]);
    d.cmd(&["EXISTS", "s"]);
    d.cmd(&["SADD", "s", "10", "2", "-3"]);
    d.cmd(&["SPOP", "s", "100"]);
    d.cmd(&["SADD", "t", "a", "b", "c"]);
    d.cmd_unordered(&["SPOP", "t", "3"]);
    d.cmd(&["SPOP", "one"]);
    d.cmd(&["EXISTS", "one"]);

    // Random picks: shape, count, distinctness, membership.
    let all: BTreeSet<Vec<u8>> = (0..40).map(|i| format!("m{i}").into_bytes()).collect();
    let fill: Vec<String> = (0..40).map(|i| format!("m{i}")).collect();
    d.cmd(&with_args(&["SADD", "r"], &fill));
    for count in ["1", "5", "13", "39", "40", "41"] {
        let (redis, firn) = d.cmd_type_only(&["SRANDMEMBER", "r", count]);
        for reply in [&redis, &firn] {
            let got = members(reply);
            let distinct: BTreeSet<Vec<u8>> = got.iter().cloned().collect();
            assert_eq!(distinct.len(), got.len(), "distinct: {}", reply.render());
            assert!(distinct.is_subset(&all));
        }
    }
    for count in ["-1", "-5", "-40", "-100"] {
        let (_, firn) = d.cmd_type_only(&["SRANDMEMBER", "r", count]);
        assert!(members(&firn).iter().all(|m| all.contains(m)));
    }
    let (_, firn) = d.cmd_type_only(&["SRANDMEMBER", "r"]);
    assert!(all.contains(firn.as_bytes().unwrap_or_default()));
    // SPOP on both, then firn is brought back to redis's state.
    for count in ["1", "3", "10"] {
        let (redis, firn) = d.cmd_type_only(&["SPOP", "r", count]);
        for reply in [&redis, &firn] {
            let got = members(reply);
            let distinct: BTreeSet<Vec<u8>> = got.iter().cloned().collect();
            assert_eq!(distinct.len(), got.len());
            assert!(distinct.is_subset(&all));
        }
        align_firn(&mut d, "r", &members(&redis), &members(&firn));
        d.cmd(&["SCARD", "r"]);
        d.cmd_unordered(&["SMEMBERS", "r"]);
    }
    let (redis, firn) = d.cmd_type_only(&["SPOP", "r"]);
    let (redis, firn) = (members_of_bulk(&redis), members_of_bulk(&firn));
    assert!(all.contains(&firn[0]));
    align_firn(&mut d, "r", &redis, &firn);
    d.cmd_unordered(&["SMEMBERS", "r"]);
    d.cmd(&["SCARD", "r"]);

    // Popping most of a big set builds a new set of what is left: with
    // integers only, an intset again; a big set losing a few stays big.
    d.cmd(&with_args(&["SADD", "big"], &ints(0..600)));
    d.cmd(&["OBJECT", "ENCODING", "big"]);
    let (redis, firn) = d.cmd_type_only(&["SPOP", "big", "590"]);
    assert_eq!(members(&firn).len(), 590);
    assert_eq!(members(&redis).len(), 590);
    d.cmd(&["SCARD", "big"]);
    d.cmd(&["OBJECT", "ENCODING", "big"]);
    d.cmd(&with_args(&["SADD", "big2"], &ints(0..600)));
    d.cmd_type_only(&["SPOP", "big2", "50"]);
    d.cmd(&["SCARD", "big2"]);
    d.cmd(&["OBJECT", "ENCODING", "big2"]);
    let text: Vec<String> = (0..600).map(|i| format!("t{i}")).collect();
    d.cmd(&with_args(&["SADD", "big3"], &text));
    d.cmd_type_only(&["SPOP", "big3", "595"]);
    d.cmd(&["OBJECT", "ENCODING", "big3"]);
    d.cmd(&["SCARD", "big3"]);
    // Over 1024 members: sampled by probes.
    let many: Vec<String> = (0..3000).map(|i| format!("k{i:05}")).collect();
    d.cmd(&with_args(&["SADD", "many"], &many));
    let universe: BTreeSet<Vec<u8>> = many.iter().map(|m| m.clone().into_bytes()).collect();
    for count in ["7", "500", "-20", "2999", "3000"] {
        let (_, firn) = d.cmd_type_only(&["SRANDMEMBER", "many", count]);
        let got = members(&firn);
        assert!(got.iter().all(|m| universe.contains(m)));
        if !count.starts_with('-') {
            let distinct: BTreeSet<&Vec<u8>> = got.iter().collect();
            assert_eq!(distinct.len(), got.len());
        }
    }
    let (_, firn) = d.cmd_type_only(&["SPOP", "many", "25"]);
    let popped = members(&firn);
    let pair = d.client();
    assert_eq!(pair.firn.cmd(&["SCARD", "many"]), R::Int(2975));
    for m in &popped {
        assert!(universe.contains(m));
        let back = pair
            .firn
            .cmd(&["SISMEMBER", "many", &String::from_utf8_lossy(m)]);
        assert_eq!(back, R::Int(0));
    }
}

#[test]
fn sscan_of_intsets_and_hashtables() {
    let mut d = Diff::new();
    d.cmd(&["SADD", "i", "30", "-2", "100", "7", "11"]);
    d.cmd(&["SSCAN", "i", "0"]);
    d.cmd(&["SSCAN", "i", "0", "COUNT", "1"]);
    d.cmd(&["SSCAN", "i", "0", "MATCH", "1*"]);
    d.cmd(&["SSCAN", "i", "12345"]);
    d.cmd(&["SSCAN", "nokey", "0"]);
    d.cmd(&["SSCAN", "i", "abc"]);
    d.cmd(&["SSCAN", "i", "-1"]);
    d.cmd(&["SSCAN", "i", "0", "COUNT", "0"]);
    d.cmd(&["SSCAN", "i", "0", "COUNT", "x"]);
    d.cmd(&["SSCAN", "i", "0", "MATCH"]);
    d.cmd(&["SSCAN", "i", "0", "FOO", "bar"]);
    d.cmd(&["SADD", "h", "a", "b", "c", "1"]);
    d.cmd_with(&["SSCAN", "h", "0"], |r| {
        let parts = r.items();
        R::Array(Some(vec![parts[0].clone(), parts[1].sorted()]))
    });
    d.scan_all(&["SSCAN", "h"], &["MATCH", "[ab]"]);
}

#[test]
fn dump_and_restore() {
    let mut d = Diff::new();
    d.cmd(&["SADD", "i", "5", "-1", "70000", "3"]);
    d.cmd(&["DUMP", "i"]);
    d.cmd(&["SADD", "i64", "5", "9223372036854775807"]);
    d.cmd(&["DUMP", "i64"]);
    d.cmd(&["SADD", "one", "x"]);
    d.cmd(&["DUMP", "one"]);
    let dump = d.cmd(&["DUMP", "i"]);
    let payload = dump.as_bytes().unwrap().to_vec();
    d.cmd(&[b"RESTORE".as_slice(), b"r", b"0", &payload]);
    d.cmd(&["SMEMBERS", "r"]);
    d.cmd(&["OBJECT", "ENCODING", "r"]);
    d.cmd(&[b"RESTORE".as_slice(), b"r", b"0", &payload]);
    d.cmd(&[b"RESTORE".as_slice(), b"r", b"0", &payload, b"REPLACE"]);
    d.cmd(&[b"RESTORE".as_slice(), b"rt", b"5000000", &payload]);
    d.cmd_approx(&["PTTL", "rt"], 1000);
    // A hashtable set: restored from redis's own payload on both sides.
    let text: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
    d.cmd(&with_args(&["SADD", "h"], &text));
    let redis_dump = d.client().redis.cmd(&["DUMP", "h"]);
    let payload = redis_dump.as_bytes().unwrap().to_vec();
    d.cmd(&[b"RESTORE".as_slice(), b"h2", b"0", &payload]);
    d.cmd_unordered(&["SMEMBERS", "h2"]);
    d.cmd(&["OBJECT", "ENCODING", "h2"]);
    // A plain-set payload of integers loads as an intset.
    d.cmd(&["SADD", "conv", "x", "1", "2"]);
    d.cmd(&["SREM", "conv", "x"]);
    d.cmd(&["OBJECT", "ENCODING", "conv"]);
    let redis_dump = d.client().redis.cmd(&["DUMP", "conv"]);
    let payload = redis_dump.as_bytes().unwrap().to_vec();
    d.cmd(&[b"RESTORE".as_slice(), b"conv2", b"0", &payload]);
    d.cmd(&["OBJECT", "ENCODING", "conv2"]);
    d.cmd(&["SMEMBERS", "conv2"]);
    // A big set round-trips through firn's own DUMP.
    d.cmd(&with_args(&["SADD", "big"], &ints(0..700)));
    let firn_dump = d.client().firn.cmd(&["DUMP", "big"]);
    let payload = firn_dump.as_bytes().unwrap().to_vec();
    d.cmd(&[b"RESTORE".as_slice(), b"big2", b"0", &payload]);
    d.cmd(&["OBJECT", "ENCODING", "big2"]);
    d.cmd(&["SCARD", "big2"]);
    d.cmd_unordered(&["SUNION", "big2"]);
}

#[test]
fn resp3_reply_types() {
    let mut d = Diff::new();
    d.cmd_with(&["HELLO", "3"], |_| R::Null);
    d.cmd(&["SADD", "s", "3", "1", "2"]);
    d.cmd(&["SMEMBERS", "s"]);
    d.cmd(&["SMEMBERS", "nokey"]);
    d.cmd(&["SINTER", "s", "nokey"]);
    d.cmd(&["SUNION", "s"]);
    d.cmd(&["SDIFF", "s", "nokey"]);
    d.cmd(&["SMISMEMBER", "s", "1", "9"]);
    d.cmd(&["SRANDMEMBER", "s", "5"]);
    d.cmd(&["SRANDMEMBER", "nokey", "5"]);
    d.cmd(&["SRANDMEMBER", "nokey"]);
    d.cmd(&["SPOP", "nokey"]);
    d.cmd(&["SPOP", "nokey", "2"]);
    d.cmd(&["SPOP", "s", "0"]);
    d.cmd(&["SSCAN", "s", "0"]);
    d.cmd_type_only(&["SPOP", "s", "1"]);
    d.cmd_type_only(&["SPOP", "s", "5"]);
}

#[test]
fn expiry_of_sets() {
    let mut d = Diff::new();
    d.cmd(&["SADD", "s", "1", "2"]);
    d.cmd(&["SADD", "s", "x"]);
    d.cmd(&["SMOVE", "s", "d", "x"]);
    d.cmd(&["SINTERSTORE", "d2", "s", "s"]);
    d.cmd(&["SMEMBERS", "d2"]);
    d.cmd(&["OBJECT", "ENCODING", "s"]);
    d.cmd(&["PEXPIRE", "s", "50"]);
    d.sleep_ms(120);
    d.cmd(&["SCARD", "s"]);
    d.cmd(&["SADD", "s", "5"]);
    d.cmd(&["OBJECT", "ENCODING", "s"]);
    d.cmd(&["TTL", "s"]);
    d.cmd(&["EXPIRE", "d", "1000"]);
    d.cmd(&["SADD", "d", "y"]);
    d.ttl("d");
    d.cmd(&["SREM", "d", "x", "y"]);
    d.cmd(&["TTL", "d"]);
}

// ------------------------------------------------------------ random mix

const KEYS: [&str; 4] = ["a", "b", "c", "d"];

fn random_member(rng: &mut StdRng) -> String {
    match rng.random_range(0..10) {
        0 => rng.random_range(-3..600).to_string(),
        1..=4 => rng.random_range(0..12).to_string(),
        5 => ["007", "-0", "", "9223372036854775807", "+1"][rng.random_range(0..5)].to_string(),
        _ => ["x", "y", "z", "hello", "w"][rng.random_range(0..5)].to_string(),
    }
}

fn random_command(rng: &mut StdRng) -> (Vec<String>, bool) {
    let mut key = || KEYS[rng.random_range(0..KEYS.len())].to_string();
    let k1 = key();
    let k2 = key();
    let k3 = key();
    let members = |rng: &mut StdRng, n: usize| -> Vec<String> {
        (0..rng.random_range(1..=n))
            .map(|_| random_member(rng))
            .collect()
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let ordered = true;
    match rng.random_range(0..26) {
        0..=3 => (with_args(&["SADD", &k1], &members(rng, 6)), ordered),
        4 => {
            // Enough integers to cross 512 now and then.
            let base = rng.random_range(0..400);
            (with_args(&["SADD", &k1], &ints(base..base + 150)), ordered)
        }
        5..=6 => (with_args(&["SREM", &k1], &members(rng, 6)), ordered),
        7 => (s(&["SCARD", &k1]), ordered),
        8 => (vec!["SISMEMBER".into(), k1, random_member(rng)], ordered),
        9 => (with_args(&["SMISMEMBER", &k1], &members(rng, 4)), ordered),
        10 => (s(&["SMEMBERS", &k1]), false),
        11 => (vec!["SMOVE".into(), k1, k2, random_member(rng)], ordered),
        12 => (s(&["SINTER", &k1, &k2]), false),
        13 => (s(&["SUNION", &k1, &k2, &k3]), false),
        14 => (s(&["SDIFF", &k1, &k2, &k3]), false),
        15 => (s(&["SINTERSTORE", &k1, &k2, &k3]), ordered),
        16 => (s(&["SUNIONSTORE", &k1, &k2, &k3]), ordered),
        17 => (s(&["SDIFFSTORE", &k1, &k2, &k3]), ordered),
        18 => {
            let limit = rng.random_range(0..4).to_string();
            (s(&["SINTERCARD", "2", &k1, &k2, "LIMIT", &limit]), ordered)
        }
        19 => (s(&["SET", &k1, "v"]), ordered),
        20 => (s(&["DEL", &k1]), ordered),
        21 => (s(&["TYPE", &k1]), ordered),
        22 => (s(&["EXPIRE", &k1, "1000"]), ordered),
        // Counts covering the whole set: deterministic replies.
        23 => (s(&["SPOP", &k1, "1000"]), false),
        24 => (s(&["SRANDMEMBER", &k1, "1000"]), false),
        _ => (s(&["GET", &k1]), ordered),
    }
}

fn compare_sets(d: &mut Diff) {
    d.cmd(&["DBSIZE"]);
    for key in KEYS {
        d.cmd(&["TYPE", key]);
        d.cmd(&["OBJECT", "ENCODING", key]);
        d.cmd(&["SCARD", key]);
        d.cmd_unordered(&["SMEMBERS", key]);
        d.cmd(&["GET", key]);
        d.ttl(key);
    }
}

#[test]
fn random_sequences_of_set_and_string_commands() {
    for seed in random_seeds(0, 4) {
        let mut d = Diff::new();
        d.context = format!("seed={seed} (rerun alone with FIRN_DIFF_SEED={seed})");
        let mut rng = StdRng::seed_from_u64(seed);
        for _ in 0..250 {
            let (args, ordered) = random_command(&mut rng);
            if ordered {
                d.cmd(&args);
            } else {
                d.cmd_unordered(&args);
            }
        }
        compare_sets(&mut d);
    }
}

#[test]
fn wrongtype_after_set_replaces_a_set() {
    let mut d = Diff::new();
    d.cmd(&["SADD", "k", "1"]);
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["SADD", "k", "1"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["DEL", "k"]);
    d.cmd(&["SADD", "k", "2"]);
    d.cmd(&["SMEMBERS", "k"]);
    let r = d.cmd(&["SET", "k", "v", "GET"]);
    assert_err(
        &r,
        "WRONGTYPE Operation against a key holding the wrong kind of value",
    );
}

#[test]
fn writes_count_as_changes_since_last_save() {
    let mut d = Diff::new();
    let changes = |r: &R| {
        let text = r.as_str().unwrap_or_default();
        let field = text
            .lines()
            .find_map(|l| l.strip_prefix("rdb_changes_since_last_save:"))
            .unwrap_or("missing")
            .trim()
            .to_string();
        R::Simple(field)
    };
    d.cmd(&["SADD", "s", "a", "b", "c", "d"]);
    d.cmd(&["SADD", "s", "a", "e"]);
    d.cmd(&["SREM", "s", "a", "x"]);
    d.cmd(&["SREM", "nokey", "a"]);
    d.cmd(&["SADD", "t", "b", "c"]);
    d.cmd(&["SMOVE", "s", "t", "b"]);
    d.cmd(&["SMOVE", "s", "t", "zz"]);
    d.cmd(&["SINTERSTORE", "i", "s", "t"]);
    d.cmd(&["SUNIONSTORE", "u", "s", "t"]);
    d.cmd(&["SDIFFSTORE", "df", "nokey", "t"]);
    d.cmd_type_only(&["SPOP", "u", "2"]);
    d.cmd_type_only(&["SPOP", "u"]);
    d.cmd(&["SPOP", "u", "0"]);
    d.cmd(&["SPOP", "nokey"]);
    d.cmd_with(&["INFO", "persistence"], changes);
}

#[test]
fn smembers_of_a_set_past_the_streaming_threshold() {
    let mut d = Diff::new();
    for chunk in 0..12 {
        let names: Vec<String> = (chunk * 1000..(chunk + 1) * 1000)
            .map(|i| format!("s{i}"))
            .collect();
        d.cmd(&with_args(&["SADD", "big"], &names));
    }
    d.cmd(&["SCARD", "big"]);
    d.cmd_unordered(&["SMEMBERS", "big"]);
    d.cmd(&["PING"]);
    d.cmd_with(&["HELLO", "3"], |_| R::Null);
    d.cmd_unordered(&["SMEMBERS", "big"]);
    d.cmd(&["SCARD", "big"]);
    d.cmd(&["SET", "str", "v"]);
    d.cmd(&["SMEMBERS", "str"]);
}

/// A small set emptied member by member moves its survivors to a fresh
/// version in firn (away from the deleted entries): nothing of it shows.
#[test]
fn a_set_emptied_by_removals_keeps_its_members_ttl_and_encoding() {
    let mut d = Diff::new();
    let names: Vec<String> = (0..200).map(|i| format!("m{i:03}")).collect();
    d.cmd(&with_args(&["SADD", "s"], &names));
    d.cmd(&with_args(&["SADD", "n"], &ints(0..300)));
    d.cmd(&["EXPIRE", "s", "1000"]);
    for name in &names[..160] {
        d.cmd(&["SREM", "s", name]);
    }
    for i in 0..250 {
        d.cmd(&["SMOVE", "n", "n2", &i.to_string()]);
    }
    for key in ["s", "n", "n2"] {
        d.cmd(&["SCARD", key]);
        d.cmd(&["OBJECT", "ENCODING", key]);
        d.cmd_unordered(&["SMEMBERS", key]);
        d.ttl(key);
    }
    d.cmd(&["SISMEMBER", "s", "m100"]);
    d.cmd(&["SISMEMBER", "s", "m199"]);
    d.cmd_unordered(&["SRANDMEMBER", "s", "100"]);
    d.cmd(&with_args(&["SREM", "s"], &names));
    d.cmd(&["EXISTS", "s"]);
}
