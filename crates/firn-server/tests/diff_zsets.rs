//! Differential tests of the sorted-set commands against redis-server
//! 7.0.15: every Z* command except the blocking ones, with Redis's score
//! parsing (strtod, inf, NaN refused, `(` bounds), lex ranges, LIMIT,
//! WITHSCORES in RESP2 and RESP3, the *STORE forms, OBJECT ENCODING,
//! DUMP/RESTORE, WRONGTYPE and arity errors, and a seeded random sequence
//! mixing sorted-set and string commands on a few keys. ZRANDMEMBER's
//! members are random: its replies are checked for shape and membership.

mod common;

use common::Diff;

fn long_member(n: usize) -> String {
    "m".repeat(n)
}

// ------------------------------------------------------------------ ZADD

#[test]
fn zadd_and_zscore_basics() {
    let mut d = Diff::new();
    d.cmd(&["ZADD", "z", "1", "a", "2", "b", "1.5", "c"]);
    d.cmd(&["ZSCORE", "z", "a"]);
    d.cmd(&["ZSCORE", "z", "c"]);
    d.cmd(&["ZSCORE", "z", "nope"]);
    d.cmd(&["ZSCORE", "missing", "a"]);
    d.cmd(&["ZADD", "z", "3", "a", "4", "d"]);
    d.cmd(&["ZADD", "z", "CH", "3", "a", "5", "b", "6", "e"]);
    d.cmd(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]);
    d.cmd(&[
        "ZADD",
        "z",
        "0.1",
        "x",
        "1e17",
        "y",
        "-1e-300",
        "w",
        "123456789.123456789",
        "v",
    ]);
    d.cmd(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]);
    d.cmd(&["ZCARD", "z"]);
    d.cmd(&["ZCARD", "missing"]);
    d.cmd(&["TYPE", "z"]);
    d.cmd(&["OBJECT", "ENCODING", "z"]);
}

#[test]
fn zadd_options() {
    let mut d = Diff::new();
    d.cmd(&["ZADD", "z", "1", "a", "2", "b"]);
    d.cmd(&["ZADD", "z", "NX", "5", "a", "3", "c"]);
    d.cmd(&["ZADD", "z", "XX", "5", "a", "3", "d"]);
    d.cmd(&["ZADD", "z", "XX", "CH", "6", "a", "3", "d"]);
    d.cmd(&["ZADD", "z", "GT", "CH", "1", "a", "10", "b", "7", "new"]);
    d.cmd(&["ZADD", "z", "LT", "CH", "100", "a", "1", "b"]);
    d.cmd(&["ZADD", "z", "XX", "GT", "CH", "50", "a", "50", "zz"]);
    d.cmd(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]);
    d.cmd(&["ZADD", "z", "INCR", "2.5", "a"]);
    d.cmd(&["ZADD", "z", "INCR", "2.5", "fresh"]);
    d.cmd(&["ZADD", "z", "NX", "INCR", "2.5", "a"]);
    d.cmd(&["ZADD", "z", "XX", "INCR", "2.5", "absent"]);
    d.cmd(&["ZADD", "z", "GT", "INCR", "-1", "a"]);
    d.cmd(&["ZADD", "z", "LT", "INCR", "-1", "a"]);
    d.cmd(&["ZADD", "z", "INCR", "0", "a"]);
    d.cmd(&["ZADD", "z", "XX", "1", "a"]);
    d.cmd(&["ZADD", "newkey", "XX", "1", "a"]);
    d.cmd(&["ZADD", "newkey", "XX", "INCR", "1", "a"]);
    d.cmd(&["EXISTS", "newkey"]);
    d.cmd(&["ZADD", "z", "nx", "xx", "1", "a"]);
    d.cmd(&["ZADD", "z", "gt", "lt", "1", "a"]);
    d.cmd(&["ZADD", "z", "gt", "nx", "1", "a"]);
    d.cmd(&["ZADD", "z", "lt", "nx", "1", "a"]);
    d.cmd(&["ZADD", "z", "incr", "1", "a", "2", "b"]);
    d.cmd(&["ZADD", "z", "1", "a", "2"]);
    d.cmd(&["ZADD", "z", "nx"]);
    d.cmd(&["ZADD", "z", "1", "a", "x", "b"]);
    d.cmd(&["ZADD", "z", "nx", "xx", "1"]);
    d.cmd(&["ZADD", "z"]);
    d.cmd(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]);
}

#[test]
fn zadd_score_parsing_and_nan() {
    let mut d = Diff::new();
    for score in [
        "inf",
        "+inf",
        "-inf",
        "INF",
        "Infinity",
        "-infinity",
        "nan",
        "NaN",
        "1e400",
        "-1e400",
        "1e-400",
        "4.9e-324",
        "0x10",
        "0x1p3",
        " 1",
        "1 ",
        "",
        "1e",
        ".5",
        "5.",
        "+5",
        "--5",
        "1_0",
        "-0",
        "0",
        "1.7976931348623157e308",
    ] {
        d.cmd(&["ZADD", "z", score, "m"]);
        d.cmd(&["ZSCORE", "z", "m"]);
    }
    d.cmd(&["ZADD", "z", "inf", "top", "-inf", "bottom"]);
    d.cmd(&["ZADD", "z", "INCR", "-inf", "top"]);
    d.cmd(&["ZINCRBY", "z", "-inf", "top"]);
    d.cmd(&["ZINCRBY", "z", "+inf", "bottom"]);
    d.cmd(&["ZINCRBY", "z", "nan", "bottom"]);
    d.cmd(&["ZINCRBY", "z", "1", "top"]);
    d.cmd(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]);
}

#[test]
fn zincrby() {
    let mut d = Diff::new();
    d.cmd(&["ZINCRBY", "z", "1.5", "a"]);
    d.cmd(&["ZINCRBY", "z", "0.1", "a"]);
    d.cmd(&["ZINCRBY", "z", "-10", "b"]);
    d.cmd(&["ZINCRBY", "z", "abc", "b"]);
    d.cmd(&["ZINCRBY", "z", "nx", "b"]);
    d.cmd(&["ZINCRBY", "z", "xx", "1"]);
    d.cmd(&["ZINCRBY", "z", "1"]);
    d.cmd(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]);
}

#[test]
fn negative_zero_scores() {
    let mut d = Diff::new();
    // Listpack: -0 is stored as 0.
    d.cmd(&["ZADD", "small", "-0", "a", "0", "b", "-0.0", "c"]);
    d.cmd(&["ZRANGE", "small", "0", "-1", "WITHSCORES"]);
    d.cmd(&["ZSCORE", "small", "a"]);
    d.cmd(&["ZINCRBY", "small", "-0", "a"]);
    // Skiplist: -0 is kept, and ties with 0 by member.
    let long = long_member(70);
    d.cmd(&["ZADD", "big", "1", &long, "-0", "c", "0", "b", "-0", "a"]);
    d.cmd(&["OBJECT", "ENCODING", "big"]);
    d.cmd(&["ZRANGE", "big", "0", "-1", "WITHSCORES"]);
    d.cmd(&["ZSCORE", "big", "a"]);
    d.cmd(&["ZINCRBY", "big", "-0", "a"]);
    d.cmd(&["ZINCRBY", "big", "0", "c"]);
    d.cmd(&["ZADD", "big", "0", "a"]);
    d.cmd(&["ZMSCORE", "big", "a", "b", "c"]);
    d.cmd(&["ZRANGEBYSCORE", "big", "-0", "0", "WITHSCORES"]);
    d.cmd(&["ZRANGEBYSCORE", "big", "(-0", "0"]);
    d.cmd(&["ZRANGEBYSCORE", "big", "0", "(0"]);
    d.cmd(&["ZRANK", "big", "c"]);
    d.cmd(&["ZUNIONSTORE", "u", "1", "big"]);
    d.cmd(&["ZRANGE", "u", "0", "-1", "WITHSCORES"]);
    d.cmd(&["ZREM", "big", &long]);
    d.cmd(&["ZUNIONSTORE", "u", "1", "big"]);
    d.cmd(&["OBJECT", "ENCODING", "u"]);
    d.cmd(&["ZRANGE", "u", "0", "-1", "WITHSCORES"]);
    d.cmd(&["ZRANGESTORE", "r", "big", "0", "-1"]);
    d.cmd(&["ZRANGE", "r", "0", "-1", "WITHSCORES"]);
}

// ------------------------------------------------------------------ ZREM

#[test]
fn zrem_and_empty_sets_disappear() {
    let mut d = Diff::new();
    d.cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c"]);
    d.cmd(&["ZREM", "z", "a", "nope"]);
    d.cmd(&["ZREM", "z", "a"]);
    d.cmd(&["ZREM", "missing", "a"]);
    d.cmd(&["ZREM", "z", "b", "c", "b"]);
    d.cmd(&["EXISTS", "z"]);
    d.cmd(&["ZCARD", "z"]);
    d.cmd(&["ZREM", "z"]);
}

// ------------------------------------------------------------ ZRANGEBYSCORE

#[test]
fn zrangebyscore_bounds_and_limit() {
    let mut d = Diff::new();
    d.cmd(&[
        "ZADD", "z", "-inf", "ninf", "1", "a", "2", "b", "2", "bb", "3", "c", "4.5", "d", "inf",
        "pinf",
    ]);
    for (min, max) in [
        ("-inf", "+inf"),
        ("1", "3"),
        ("(1", "3"),
        ("1", "(3"),
        ("(1", "(3"),
        ("2", "2"),
        ("(2", "2"),
        ("3", "1"),
        ("-inf", "-inf"),
        ("inf", "inf"),
        ("(inf", "inf"),
        ("(-inf", "(inf"),
        ("", "+inf"),
        ("(", "3"),
        (" 2", "3"),
        ("1e400", "inf"),
        ("0x2", "0x3"),
        ("nan", "1"),
        ("(nan", "1"),
        ("1", "abc"),
        ("1x", "2"),
        ("[1", "2"),
    ] {
        d.cmd(&["ZRANGEBYSCORE", "z", min, max]);
        d.cmd(&["ZRANGEBYSCORE", "z", min, max, "WITHSCORES"]);
        d.cmd(&["ZREVRANGEBYSCORE", "z", max, min, "WITHSCORES"]);
        d.cmd(&["ZCOUNT", "z", min, max]);
    }
    for (offset, count) in [
        ("0", "2"),
        ("1", "2"),
        ("2", "-1"),
        ("-1", "2"),
        ("0", "0"),
        ("7", "1"),
        ("6", "5"),
        ("100", "1"),
        ("1", "-5"),
        ("x", "1"),
        ("1", "9223372036854775808"),
    ] {
        d.cmd(&["ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", offset, count]);
        d.cmd(&[
            "ZREVRANGEBYSCORE",
            "z",
            "+inf",
            "-inf",
            "WITHSCORES",
            "LIMIT",
            offset,
            count,
        ]);
    }
    d.cmd(&["ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "0"]);
    d.cmd(&["ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT"]);
    d.cmd(&["ZRANGEBYSCORE", "z", "-inf", "+inf", "REV"]);
    d.cmd(&["ZRANGEBYSCORE", "z", "-inf", "+inf", "BYSCORE"]);
    d.cmd(&[
        "ZRANGEBYSCORE",
        "z",
        "-inf",
        "+inf",
        "withscores",
        "withscores",
    ]);
    d.cmd(&["ZRANGEBYSCORE", "missing", "-inf", "+inf"]);
    d.cmd(&["ZRANGEBYSCORE", "missing", "x", "+inf"]);
    d.cmd(&["ZRANGEBYSCORE", "z", "1"]);
}

// ------------------------------------------------------------ errors

#[test]
fn wrongtype_and_arity() {
    let mut d = Diff::new();
    d.cmd(&["SET", "s", "v"]);
    d.cmd(&["ZADD", "z", "1", "a"]);
    for cmd in [
        vec!["ZADD", "s", "1", "a"],
        vec!["ZADD", "s", "XX", "1", "a"],
        vec!["ZINCRBY", "s", "1", "a"],
        vec!["ZSCORE", "s", "a"],
        vec!["ZMSCORE", "s", "a"],
        vec!["ZCARD", "s"],
        vec!["ZCOUNT", "s", "0", "1"],
        vec!["ZLEXCOUNT", "s", "-", "+"],
        vec!["ZRANK", "s", "a"],
        vec!["ZREVRANK", "s", "a"],
        vec!["ZREM", "s", "a"],
        vec!["ZRANGE", "s", "0", "1"],
        vec!["ZREVRANGE", "s", "0", "1"],
        vec!["ZRANGEBYSCORE", "s", "0", "1"],
        vec!["ZREVRANGEBYSCORE", "s", "0", "1"],
        vec!["ZRANGEBYLEX", "s", "-", "+"],
        vec!["ZREVRANGEBYLEX", "s", "+", "-"],
        vec!["ZRANGESTORE", "d", "s", "0", "1"],
        vec!["ZREMRANGEBYRANK", "s", "0", "1"],
        vec!["ZREMRANGEBYSCORE", "s", "0", "1"],
        vec!["ZREMRANGEBYLEX", "s", "-", "+"],
        vec!["ZPOPMIN", "s"],
        vec!["ZPOPMAX", "s", "2"],
        vec!["ZMPOP", "1", "s", "MIN"],
        vec!["ZMPOP", "2", "missing", "s", "MIN"],
        vec!["ZRANDMEMBER", "s"],
        vec!["ZRANDMEMBER", "s", "2"],
        vec!["ZUNION", "2", "z", "s"],
        vec!["ZINTER", "2", "z", "s"],
        vec!["ZDIFF", "2", "z", "s"],
        vec!["ZUNIONSTORE", "d", "2", "z", "s"],
        vec!["ZINTERSTORE", "d", "2", "z", "s"],
        vec!["ZDIFFSTORE", "d", "2", "z", "s"],
        vec!["ZINTERCARD", "2", "z", "s"],
        vec!["ZSCAN", "s", "0"],
    ] {
        d.cmd(&cmd);
    }
    d.cmd(&["GET", "s"]);
    d.cmd(&["GET", "z"]);
    d.cmd(&["EXISTS", "d"]);
    for cmd in [
        vec!["ZADD", "z"],
        vec!["ZADD", "z", "1"],
        vec!["ZINCRBY", "z", "1"],
        vec!["ZSCORE", "z"],
        vec!["ZMSCORE", "z"],
        vec!["ZCARD"],
        vec!["ZCOUNT", "z", "1"],
        vec!["ZLEXCOUNT", "z", "-"],
        vec!["ZRANK", "z"],
        vec!["ZRANK", "z", "a", "b"],
        vec!["ZREM", "z"],
        vec!["ZRANGE", "z", "0"],
        vec!["ZREVRANGE", "z", "0"],
        vec!["ZRANGESTORE", "d", "z", "0"],
        vec!["ZREMRANGEBYRANK", "z", "0"],
        vec!["ZPOPMIN"],
        vec!["ZMPOP", "1", "z"],
        vec!["ZRANDMEMBER"],
        vec!["ZUNION", "1"],
        vec!["ZUNIONSTORE", "d", "1"],
        vec!["ZINTERCARD", "1"],
        vec!["ZSCAN", "z"],
    ] {
        d.cmd(&cmd);
    }
}
