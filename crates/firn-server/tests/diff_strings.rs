//! Differential tests of the string commands against redis-server 7.0.15:
//! SET and its options, GET/GETEX/GETDEL/GETSET, MGET/MSET/MSETNX,
//! SETNX/SETEX/PSETEX, the INCR family, INCRBYFLOAT, APPEND, STRLEN,
//! GETRANGE/SUBSTR, SETRANGE, LCS, arity errors, binary and big values
//! (Firn stores big strings in 64 KiB chunks: boundaries are probed).

use firn_testkit::{
    data::{all_bytes, pattern},
    reply::assert_err,
    Diff, R,
};

const CHUNK: usize = 64 * 1024;

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

// ------------------------------------------------------------------ SET

#[test]
fn set_then_get_returns_the_value() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SET", "k", "other"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["GET", "missing"]);
}

#[test]
fn set_ex_and_px_set_a_ttl() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "v", "EX", "100"]);
    d.ttl("a");
    d.pttl("a");
    d.cmd(&["SET", "b", "v", "PX", "100000"]);
    d.ttl("b");
    d.pttl("b");
    d.cmd(&["SET", "c", "v", "ex", "1"]);
    d.ttl("c");
}

#[test]
fn set_exat_and_pxat_set_an_absolute_expiry() {
    let mut d = Diff::new();
    let at = (now_secs() + 1000).to_string();
    let at_ms = ((now_secs() + 1000) * 1000).to_string();
    d.cmd(&["SET", "a", "v", "EXAT", &at]);
    d.ttl("a");
    d.cmd(&["EXPIRETIME", "a"]);
    d.cmd(&["SET", "b", "v", "PXAT", &at_ms]);
    d.pttl("b");
    d.cmd(&["PEXPIRETIME", "b"]);
}

#[test]
fn set_exat_and_pxat_in_the_past_delete_the_key() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "v", "EXAT", "1"]);
    d.cmd(&["GET", "a"]);
    d.cmd(&["EXISTS", "a"]);
    d.cmd(&["SET", "b", "v", "PXAT", "1000"]);
    d.cmd(&["GET", "b"]);
    d.cmd(&["SET", "c", "old"]);
    d.cmd(&["SET", "c", "v", "EXAT", "1", "GET"]);
    d.cmd(&["GET", "c"]);
    d.cmd(&["DBSIZE"]);
}

#[test]
fn set_nx_only_sets_missing_keys() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "1", "NX"]);
    d.cmd(&["SET", "k", "2", "NX"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SET", "k", "3", "nx", "EX", "10"]);
    d.cmd(&["TTL", "k"]);
}

#[test]
fn set_xx_only_sets_existing_keys() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "1", "XX"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SET", "k", "1"]);
    d.cmd(&["SET", "k", "2", "XX"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SET", "k", "3", "XX", "PX", "50000"]);
    d.pttl("k");
}

#[test]
fn set_get_returns_the_old_value() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "new", "GET"]);
    d.cmd(&["SET", "k", "newer", "GET"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SET", "k", "x", "NX", "GET"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SET", "k", "y", "XX", "GET"]);
    d.cmd(&["SET", "missing", "y", "XX", "GET"]);
    d.cmd(&["EXISTS", "missing"]);
    d.cmd(&["SET", "k", "z", "GET", "EX", "100"]);
    d.ttl("k");
}

#[test]
fn set_keepttl_keeps_and_plain_set_clears_the_ttl() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v", "EX", "100"]);
    d.cmd(&["SET", "k", "v2", "KEEPTTL"]);
    d.ttl("k");
    d.cmd(&["GET", "k"]);
    d.cmd(&["SET", "k", "v3"]);
    d.cmd(&["TTL", "k"]);
    d.cmd(&["SET", "fresh", "v", "KEEPTTL"]);
    d.cmd(&["TTL", "fresh"]);
}

#[test]
fn set_rejects_conflicting_options() {
    let mut d = Diff::new();
    let r = d.cmd(&["SET", "k", "v", "NX", "XX"]);
    assert_err(&r, "ERR syntax error");
    d.cmd(&["SET", "k", "v", "EX", "10", "PX", "100"]);
    d.cmd(&["SET", "k", "v", "EX", "10", "KEEPTTL"]);
    d.cmd(&["SET", "k", "v", "KEEPTTL", "PX", "10"]);
    d.cmd(&["SET", "k", "v", "PX", "10", "EXAT", "100"]);
    d.cmd(&["SET", "k", "v", "EXAT", "10", "PXAT", "100"]);
    d.cmd(&["SET", "k", "v", "XX", "NX"]);
    d.cmd(&["SET", "k", "v", "EX", "10", "EX", "20"]);
    d.cmd(&["SET", "k", "v", "GET", "GET"]);
    d.cmd(&["SET", "k", "v", "NX", "NX"]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&["TTL", "k"]);
}

#[test]
fn set_rejects_unknown_and_incomplete_options() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v", "FOO"]);
    d.cmd(&["SET", "k", "v", "EX"]);
    d.cmd(&["SET", "k", "v", "PX"]);
    d.cmd(&["SET", "k", "v", "EXAT"]);
    d.cmd(&["SET", "k", "v", "PXAT"]);
    d.cmd(&["SET", "k", "v", "NX", "EX"]);
    d.cmd(&["SET", "k", "v", "10"]);
    d.cmd(&["SET", "k", "v", "EXX", "10"]);
    d.cmd(&["SET", "k", "v", "KEEPTTL", "10"]);
    d.cmd(&["EXISTS", "k"]);
}

#[test]
fn set_rejects_bad_expire_values() {
    let mut d = Diff::new();
    let r = d.cmd(&["SET", "k", "v", "EX", "0"]);
    assert_err(&r, "ERR invalid expire time in 'set' command");
    d.cmd(&["SET", "k", "v", "EX", "-1"]);
    d.cmd(&["SET", "k", "v", "PX", "0"]);
    d.cmd(&["SET", "k", "v", "PX", "-100"]);
    d.cmd(&["SET", "k", "v", "EXAT", "0"]);
    d.cmd(&["SET", "k", "v", "PXAT", "-5"]);
    let r = d.cmd(&["SET", "k", "v", "EX", "abc"]);
    assert_err(&r, "ERR value is not an integer or out of range");
    d.cmd(&["SET", "k", "v", "EX", "1.5"]);
    d.cmd(&["SET", "k", "v", "EX", ""]);
    d.cmd(&["SET", "k", "v", "EX", " 10"]);
    d.cmd(&["SET", "k", "v", "EX", "9223372036854775807"]);
    d.cmd(&["SET", "k", "v", "EX", "9223372036854775808"]);
    d.cmd(&["SET", "k", "v", "PX", "9223372036854775807"]);
    d.cmd(&["SET", "k", "v", "EX", "9223372036854775"]);
    d.cmd(&["SET", "k", "v", "EXAT", "9223372036854775807"]);
    d.cmd(&["SET", "k", "v", "PXAT", "9223372036854775807"]);
    d.cmd(&["EXISTS", "k"]);
}

#[test]
fn set_px_large_but_valid_values_are_accepted() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v", "EX", "100000000"]);
    d.ttl("k");
    d.cmd(&["SET", "k", "v", "PX", "100000000000"]);
    d.ttl("k");
}

// ------------------------------------------------------------------ GETEX / GETDEL / GETSET

#[test]
fn getex_without_options_is_a_get() {
    let mut d = Diff::new();
    d.cmd(&["GETEX", "missing"]);
    d.cmd(&["SET", "k", "v", "EX", "100"]);
    d.cmd(&["GETEX", "k"]);
    d.ttl("k");
}

#[test]
fn getex_sets_relative_and_absolute_expiry() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["GETEX", "k", "EX", "100"]);
    d.ttl("k");
    d.cmd(&["GETEX", "k", "PX", "200000"]);
    d.pttl("k");
    let at = (now_secs() + 500).to_string();
    d.cmd(&["GETEX", "k", "EXAT", &at]);
    d.cmd(&["EXPIRETIME", "k"]);
    let at_ms = ((now_secs() + 700) * 1000).to_string();
    d.cmd(&["GETEX", "k", "PXAT", &at_ms]);
    d.cmd(&["PEXPIRETIME", "k"]);
}

#[test]
fn getex_persist_removes_the_ttl() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v", "EX", "100"]);
    d.cmd(&["GETEX", "k", "PERSIST"]);
    d.cmd(&["TTL", "k"]);
    d.cmd(&["GETEX", "k", "persist"]);
    d.cmd(&["GETEX", "missing", "PERSIST"]);
}

#[test]
fn getex_in_the_past_deletes_the_key() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["GETEX", "k", "EXAT", "1"]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["GETEX", "k", "PXAT", "1"]);
    d.cmd(&["GET", "k"]);
}

#[test]
fn getex_rejects_bad_options() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    let r = d.cmd(&["GETEX", "k", "EX", "0"]);
    assert_err(&r, "ERR invalid expire time in 'getex' command");
    d.cmd(&["GETEX", "k", "PX", "-1"]);
    d.cmd(&["GETEX", "k", "EXAT", "0"]);
    d.cmd(&["GETEX", "k", "EX", "10", "PERSIST"]);
    d.cmd(&["GETEX", "k", "PERSIST", "EX", "10"]);
    d.cmd(&["GETEX", "k", "EX", "10", "PX", "10"]);
    d.cmd(&["GETEX", "k", "EX"]);
    d.cmd(&["GETEX", "k", "EX", "ten"]);
    d.cmd(&["GETEX", "k", "FOO"]);
    d.cmd(&["GETEX", "k", "KEEPTTL"]);
    d.cmd(&["GETEX", "k", "EX", "9223372036854775807"]);
    d.cmd(&["GETEX", "missing", "EX", "0"]);
    d.cmd(&["GETEX", "missing", "EX", "10"]);
    d.cmd(&["TTL", "k"]);
}

#[test]
fn getdel_returns_and_deletes() {
    let mut d = Diff::new();
    d.cmd(&["GETDEL", "missing"]);
    d.cmd(&["SET", "k", "v", "EX", "100"]);
    d.cmd(&["GETDEL", "k"]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&["GETDEL", "k"]);
    d.cmd(&["GETDEL"]);
    d.cmd(&["GETDEL", "a", "b"]);
}

#[test]
fn getset_returns_old_value_and_clears_ttl() {
    let mut d = Diff::new();
    d.cmd(&["GETSET", "k", "1"]);
    d.cmd(&["GETSET", "k", "2"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["EXPIRE", "k", "100"]);
    d.cmd(&["GETSET", "k", "3"]);
    d.cmd(&["TTL", "k"]);
    d.cmd(&["GETSET", "k"]);
}

// ------------------------------------------------------------------ MGET / MSET / MSETNX

#[test]
fn mget_returns_values_and_nils() {
    let mut d = Diff::new();
    d.cmd(&["MSET", "a", "1", "b", "2"]);
    d.cmd(&["MGET", "a", "missing", "b", "a"]);
    d.cmd(&["MGET", "missing"]);
    d.cmd(&["MGET"]);
}

#[test]
fn mset_sets_all_and_last_duplicate_wins() {
    let mut d = Diff::new();
    d.cmd(&["MSET", "a", "1", "b", "2", "a", "3"]);
    d.cmd(&["MGET", "a", "b"]);
    d.cmd(&["SET", "t", "v", "EX", "100"]);
    d.cmd(&["MSET", "t", "w"]);
    d.cmd(&["TTL", "t"]);
    d.cmd(&["MSET", "a"]);
    d.cmd(&["MSET", "a", "1", "b"]);
    d.cmd(&["MSET"]);
}

#[test]
fn msetnx_is_all_or_nothing() {
    let mut d = Diff::new();
    d.cmd(&["MSETNX", "a", "1", "b", "2"]);
    d.cmd(&["MSETNX", "b", "x", "c", "3"]);
    d.cmd(&["MGET", "a", "b", "c"]);
    d.cmd(&["MSETNX", "c", "1", "c", "2"]);
    d.cmd(&["GET", "c"]);
    d.cmd(&["MSETNX", "a"]);
    d.cmd(&["MSETNX", "x", "1", "y"]);
    d.cmd(&["DBSIZE"]);
}

// ------------------------------------------------------------------ SETNX / SETEX / PSETEX

#[test]
fn setnx_sets_only_missing_keys() {
    let mut d = Diff::new();
    d.cmd(&["SETNX", "k", "1"]);
    d.cmd(&["SETNX", "k", "2"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SETNX", "k"]);
}

#[test]
fn setex_and_psetex_set_value_and_ttl() {
    let mut d = Diff::new();
    d.cmd(&["SETEX", "a", "100", "v"]);
    d.ttl("a");
    d.cmd(&["GET", "a"]);
    d.cmd(&["PSETEX", "b", "100000", "v"]);
    d.pttl("b");
    d.cmd(&["SETEX", "a", "200", "w"]);
    d.ttl("a");
}

#[test]
fn setex_and_psetex_reject_bad_expire_times() {
    let mut d = Diff::new();
    let r = d.cmd(&["SETEX", "k", "0", "v"]);
    assert_err(&r, "ERR invalid expire time in 'setex' command");
    d.cmd(&["SETEX", "k", "-10", "v"]);
    d.cmd(&["SETEX", "k", "abc", "v"]);
    d.cmd(&["SETEX", "k", "9223372036854775807", "v"]);
    d.cmd(&["PSETEX", "k", "0", "v"]);
    d.cmd(&["PSETEX", "k", "-1", "v"]);
    d.cmd(&["PSETEX", "k", "1.5", "v"]);
    d.cmd(&["PSETEX", "k", "9223372036854775807", "v"]);
    d.cmd(&["SETEX", "k", "10"]);
    d.cmd(&["PSETEX", "k"]);
    d.cmd(&["EXISTS", "k"]);
}

// ------------------------------------------------------------------ INCR family

#[test]
fn incr_and_decr_create_and_update() {
    let mut d = Diff::new();
    d.cmd(&["INCR", "n"]);
    d.cmd(&["INCR", "n"]);
    d.cmd(&["DECR", "n"]);
    d.cmd(&["DECR", "m"]);
    d.cmd(&["INCRBY", "n", "100"]);
    d.cmd(&["INCRBY", "n", "-300"]);
    d.cmd(&["DECRBY", "n", "7"]);
    d.cmd(&["DECRBY", "n", "-7"]);
    d.cmd(&["GET", "n"]);
    d.cmd(&["GET", "m"]);
}

#[test]
fn incr_keeps_the_ttl() {
    let mut d = Diff::new();
    d.cmd(&["SET", "n", "5", "EX", "100"]);
    d.cmd(&["INCR", "n"]);
    d.ttl("n");
    d.cmd(&["INCRBY", "n", "10"]);
    d.ttl("n");
}

#[test]
fn incr_parses_values_like_redis() {
    let mut d = Diff::new();
    for v in [
        "007",
        "+1",
        "-0",
        "0",
        " 1",
        "1 ",
        "1.0",
        "",
        "abc",
        "-",
        "+",
        "0x10",
        "1e3",
        "00",
        "-007",
        "12345678901234567890",
    ] {
        d.cmd(&["SET", "n", v]);
        d.cmd(&["INCR", "n"]);
        d.cmd(&["GET", "n"]);
    }
}

#[test]
fn incr_overflow_is_an_error() {
    let mut d = Diff::new();
    d.cmd(&["SET", "n", "9223372036854775807"]);
    let r = d.cmd(&["INCR", "n"]);
    assert_err(&r, "ERR increment or decrement would overflow");
    d.cmd(&["INCRBY", "n", "1"]);
    d.cmd(&["INCRBY", "n", "-1"]);
    d.cmd(&["SET", "n", "-9223372036854775808"]);
    d.cmd(&["DECR", "n"]);
    d.cmd(&["DECRBY", "n", "1"]);
    d.cmd(&["INCRBY", "n", "-9223372036854775808"]);
    d.cmd(&["GET", "n"]);
    d.cmd(&["SET", "n", "9223372036854775808"]);
    d.cmd(&["INCR", "n"]);
}

#[test]
fn incrby_argument_errors() {
    let mut d = Diff::new();
    d.cmd(&["INCRBY", "n", "abc"]);
    d.cmd(&["INCRBY", "n", "1.5"]);
    d.cmd(&["INCRBY", "n", ""]);
    d.cmd(&["INCRBY", "n", "9223372036854775808"]);
    d.cmd(&["INCRBY", "n", "9223372036854775807"]);
    d.cmd(&["GET", "n"]);
    d.cmd(&["DECRBY", "m", "-9223372036854775808"]);
    d.cmd(&["DECRBY", "m", "9223372036854775807"]);
    d.cmd(&["DECRBY", "m", "1"]);
    d.cmd(&["DECRBY", "m", "1"]);
    d.cmd(&["INCRBY", "n"]);
    d.cmd(&["INCR"]);
    d.cmd(&["DECR", "a", "b"]);
}

// ------------------------------------------------------------------ INCRBYFLOAT

#[test]
fn incrbyfloat_formats_like_redis() {
    let mut d = Diff::new();
    d.cmd(&["SET", "f", "10.5"]);
    d.cmd(&["INCRBYFLOAT", "f", "0.1"]);
    d.cmd(&["INCRBYFLOAT", "f", "-5.6"]);
    d.cmd(&["INCRBYFLOAT", "g", "0.1"]);
    d.cmd(&["INCRBYFLOAT", "g", "0.2"]);
    d.cmd(&["INCRBYFLOAT", "h", "3.0e3"]);
    d.cmd(&["INCRBYFLOAT", "h", "1e20"]);
    d.cmd(&["INCRBYFLOAT", "h", "-1e20"]);
    d.cmd(&["INCRBYFLOAT", "i", "-0"]);
    d.cmd(&["INCRBYFLOAT", "j", "5.0e3"]);
    d.cmd(&["INCRBYFLOAT", "j", "1.23456789012345678"]);
    d.cmd(&["INCRBYFLOAT", "k", "1e-10"]);
    d.cmd(&["INCRBYFLOAT", "l", "1e400"]);
    d.cmd(&["INCRBYFLOAT", "m", "0x10"]);
    d.cmd(&["INCRBYFLOAT", "n", " 1"]);
    d.cmd(&["INCRBYFLOAT", "o", "1."]);
    d.cmd(&["INCRBYFLOAT", "o", ".5"]);
    d.cmd(&["MGET", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o"]);
}

#[test]
fn incrbyfloat_on_integer_and_float_strings() {
    let mut d = Diff::new();
    for v in ["7", "3.0e3", "1.5", "-0", "+2", "1e2", "00.5", ".5", "5."] {
        d.cmd(&["SET", "f", v]);
        d.cmd(&["INCRBYFLOAT", "f", "1"]);
        d.cmd(&["OBJECT", "ENCODING", "f"]);
    }
}

#[test]
fn incrbyfloat_rejects_nan_and_infinity() {
    let mut d = Diff::new();
    d.cmd(&["INCRBYFLOAT", "f", "inf"]);
    d.cmd(&["INCRBYFLOAT", "f", "-inf"]);
    d.cmd(&["INCRBYFLOAT", "f", "nan"]);
    d.cmd(&["INCRBYFLOAT", "f", "abc"]);
    d.cmd(&["INCRBYFLOAT", "f", ""]);
    d.cmd(&["INCRBYFLOAT", "f", "1e5000"]);
    d.cmd(&["SET", "f", "1.7976931348623157e308"]);
    d.cmd(&["INCRBYFLOAT", "f", "1.7976931348623157e308"]);
    d.cmd(&["SET", "f", "1e4932"]);
    d.cmd(&["INCRBYFLOAT", "f", "1e4932"]);
    d.cmd(&["SET", "f", "abc"]);
    d.cmd(&["INCRBYFLOAT", "f", "1"]);
    d.cmd(&["SET", "f", "inf"]);
    d.cmd(&["INCRBYFLOAT", "f", "1"]);
    d.cmd(&["SET", "f", "1 "]);
    d.cmd(&["INCRBYFLOAT", "f", "1"]);
    d.cmd(&["INCRBYFLOAT", "f"]);
}

#[test]
fn incrbyfloat_keeps_the_ttl() {
    let mut d = Diff::new();
    d.cmd(&["SET", "f", "1.5", "EX", "100"]);
    d.cmd(&["INCRBYFLOAT", "f", "1"]);
    d.ttl("f");
}

// ------------------------------------------------------------------ APPEND / STRLEN

#[test]
fn append_creates_and_extends() {
    let mut d = Diff::new();
    d.cmd(&["APPEND", "k", "hello"]);
    d.cmd(&["APPEND", "k", " world"]);
    d.cmd(&["APPEND", "k", ""]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["APPEND", "e", ""]);
    d.cmd(&["EXISTS", "e"]);
    d.cmd(&["GET", "e"]);
    d.cmd(&["SET", "n", "12"]);
    d.cmd(&["APPEND", "n", "34"]);
    d.cmd(&["INCR", "n"]);
    d.cmd(&["APPEND", "k"]);
}

#[test]
fn append_keeps_the_ttl() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "a", "EX", "100"]);
    d.cmd(&["APPEND", "k", "b"]);
    d.ttl("k");
}

#[test]
fn strlen_of_various_values() {
    let mut d = Diff::new();
    d.cmd(&["STRLEN", "missing"]);
    d.cmd(&["SET", "a", "hello"]);
    d.cmd(&["STRLEN", "a"]);
    d.cmd(&["SET", "n", "-12345"]);
    d.cmd(&["STRLEN", "n"]);
    d.cmd(&["SET", "e", ""]);
    d.cmd(&["STRLEN", "e"]);
    d.cmd(&["INCR", "i"]);
    d.cmd(&["STRLEN", "i"]);
    d.cmd(&["STRLEN"]);
    d.cmd(&["STRLEN", "a", "b"]);
}

// ------------------------------------------------------------------ GETRANGE / SUBSTR

#[test]
fn getrange_index_forms() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "Hello World"]);
    for (s, e) in [
        ("0", "-1"),
        ("0", "4"),
        ("-5", "-1"),
        ("-100", "100"),
        ("5", "3"),
        ("11", "20"),
        ("10", "10"),
        ("-1", "-5"),
        ("0", "0"),
        ("-1", "-1"),
        ("3", "-3"),
        ("100", "200"),
        ("0", "9223372036854775807"),
        ("-9223372036854775808", "9223372036854775807"),
        ("9223372036854775807", "9223372036854775807"),
        ("-9223372036854775808", "-9223372036854775808"),
    ] {
        d.cmd(&["GETRANGE", "k", s, e]);
        d.cmd(&["SUBSTR", "k", s, e]);
    }
}

#[test]
fn getrange_on_missing_empty_and_integer_values() {
    let mut d = Diff::new();
    d.cmd(&["GETRANGE", "missing", "0", "-1"]);
    d.cmd(&["GETRANGE", "missing", "0", "10"]);
    d.cmd(&["SET", "e", ""]);
    d.cmd(&["GETRANGE", "e", "0", "-1"]);
    d.cmd(&["GETRANGE", "e", "-1", "-1"]);
    d.cmd(&["SET", "n", "1234567"]);
    d.cmd(&["GETRANGE", "n", "1", "3"]);
    d.cmd(&["GETRANGE", "n", "-2", "-1"]);
}

#[test]
fn getrange_argument_errors() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "abc"]);
    d.cmd(&["GETRANGE", "k", "a", "1"]);
    d.cmd(&["GETRANGE", "k", "0", "1.5"]);
    d.cmd(&["GETRANGE", "k", "0", "9223372036854775808"]);
    d.cmd(&["GETRANGE", "missing", "x", "1"]);
    d.cmd(&["GETRANGE", "k", "0"]);
    d.cmd(&["SUBSTR", "k"]);
    d.cmd(&["GETRANGE", "k", "0", "1", "2"]);
}

// ------------------------------------------------------------------ SETRANGE

#[test]
fn setrange_overwrites_and_pads_with_zeros() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "Hello World"]);
    d.cmd(&["SETRANGE", "k", "6", "Redis"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SETRANGE", "k", "20", "!"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SETRANGE", "new", "3", "abc"]);
    d.cmd(&["GET", "new"]);
    d.cmd(&["SETRANGE", "k", "0", ""]);
    d.cmd(&["SETRANGE", "k", "1000", ""]);
    d.cmd(&["STRLEN", "k"]);
    d.cmd(&["SET", "n", "12345"]);
    d.cmd(&["SETRANGE", "n", "1", "9"]);
    d.cmd(&["GET", "n"]);
    d.cmd(&["INCR", "n"]);
}

#[test]
fn setrange_with_empty_value_on_missing_key_creates_nothing() {
    let mut d = Diff::new();
    d.cmd(&["SETRANGE", "k", "0", ""]);
    d.cmd(&["SETRANGE", "k", "100", ""]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&["SETRANGE", "k", "-1", ""]);
    d.cmd(&["SETRANGE", "k", "536870912", ""]);
    d.cmd(&["DBSIZE"]);
}

#[test]
fn setrange_rejects_bad_offsets() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "abc"]);
    let r = d.cmd(&["SETRANGE", "k", "-1", "x"]);
    assert_err(&r, "ERR offset is out of range");
    let r = d.cmd(&["SETRANGE", "k", "536870912", "x"]);
    assert_err(
        &r,
        "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
    );
    d.cmd(&["SETRANGE", "k", "536870911", "xy"]);
    d.cmd(&["SETRANGE", "k", "9223372036854775807", "x"]);
    d.cmd(&["SETRANGE", "k", "abc", "x"]);
    d.cmd(&["SETRANGE", "k", "1.0", "x"]);
    d.cmd(&["SETRANGE", "missing", "-5", "x"]);
    d.cmd(&["SETRANGE", "missing", "536870912", "x"]);
    d.cmd(&["SETRANGE", "k", "1"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["EXISTS", "missing"]);
}

#[test]
fn setrange_keeps_the_ttl() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "abc", "EX", "100"]);
    d.cmd(&["SETRANGE", "k", "1", "X"]);
    d.ttl("k");
}

// ------------------------------------------------------------------ LCS

#[test]
fn lcs_plain_and_len() {
    let mut d = Diff::new();
    d.cmd(&["MSET", "a", "ohmytext", "b", "mynewtext"]);
    d.cmd(&["LCS", "a", "b"]);
    d.cmd(&["LCS", "a", "b", "LEN"]);
    d.cmd(&["LCS", "b", "a"]);
    d.cmd(&["LCS", "a", "a"]);
    d.cmd(&["LCS", "a", "missing"]);
    d.cmd(&["LCS", "missing", "other"]);
    d.cmd(&["LCS", "missing", "other", "LEN"]);
    d.cmd(&["LCS", "missing", "other", "IDX"]);
}

#[test]
fn lcs_idx_with_minmatchlen_and_withmatchlen() {
    let mut d = Diff::new();
    d.cmd(&["MSET", "a", "ohmytext", "b", "mynewtext"]);
    d.cmd(&["LCS", "a", "b", "IDX"]);
    d.cmd(&["LCS", "a", "b", "IDX", "MINMATCHLEN", "4"]);
    d.cmd(&["LCS", "a", "b", "IDX", "WITHMATCHLEN"]);
    d.cmd(&["LCS", "a", "b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"]);
    d.cmd(&["LCS", "a", "b", "IDX", "MINMATCHLEN", "0"]);
    d.cmd(&["LCS", "a", "b", "IDX", "MINMATCHLEN", "-3"]);
    d.cmd(&["LCS", "a", "b", "IDX", "MINMATCHLEN", "100"]);
    d.cmd(&["LCS", "a", "b", "idx", "withmatchlen", "minmatchlen", "2"]);
    d.cmd(&["LCS", "a", "b", "MINMATCHLEN", "2"]);
    d.cmd(&["LCS", "a", "b", "WITHMATCHLEN"]);
}

#[test]
fn lcs_on_longer_strings() {
    let mut d = Diff::new();
    d.cmd(&[
        "MSET",
        "a",
        "the quick brown fox jumps over the lazy dog 0123456789",
        "b",
        "a quick brown dog jumps over the lazy fox 9876543210",
    ]);
    d.cmd(&["LCS", "a", "b"]);
    d.cmd(&["LCS", "a", "b", "IDX", "WITHMATCHLEN"]);
    d.cmd(&["LCS", "a", "b", "IDX", "MINMATCHLEN", "3"]);
    d.cmd(&["MSET", "x", "", "y", "abc"]);
    d.cmd(&["LCS", "x", "y", "IDX"]);
    d.cmd(&["LCS", "x", "y", "LEN"]);
    d.cmd(&["MSET", "n1", "12345", "n2", "2345"]);
    d.cmd(&["LCS", "n1", "n2"]);
}

#[test]
fn lcs_option_errors() {
    let mut d = Diff::new();
    d.cmd(&["MSET", "a", "abc", "b", "abd"]);
    d.cmd(&["LCS", "a", "b", "LEN", "IDX"]);
    d.cmd(&["LCS", "a", "b", "IDX", "LEN"]);
    d.cmd(&["LCS", "a", "b", "FOO"]);
    d.cmd(&["LCS", "a", "b", "IDX", "MINMATCHLEN"]);
    d.cmd(&["LCS", "a", "b", "IDX", "MINMATCHLEN", "x"]);
    d.cmd(&["LCS", "a"]);
    d.cmd(&["LCS"]);
}

// ------------------------------------------------------------------ arity

#[test]
fn wrong_arity_errors_name_the_command() {
    let mut d = Diff::new();
    let r = d.cmd(&["GET"]);
    assert_err(&r, "ERR wrong number of arguments for 'get' command");
    for cmd in [
        vec!["GET", "a", "b"],
        vec!["SET", "k"],
        vec!["SET"],
        vec!["GETEX"],
        vec!["GETDEL"],
        vec!["GETSET", "k"],
        vec!["MGET"],
        vec!["MSET", "k"],
        vec!["MSETNX"],
        vec!["SETNX", "k"],
        vec!["SETEX", "k", "1"],
        vec!["PSETEX", "k", "1"],
        vec!["INCR"],
        vec!["DECR"],
        vec!["INCRBY", "k"],
        vec!["DECRBY", "k"],
        vec!["INCRBYFLOAT", "k"],
        vec!["APPEND", "k"],
        vec!["STRLEN"],
        vec!["GETRANGE", "k", "1"],
        vec!["SUBSTR", "k", "1"],
        vec!["SETRANGE", "k", "1"],
        vec!["LCS", "a"],
        vec!["get"],
        vec!["GeT", "a", "b", "c"],
    ] {
        d.cmd(&cmd);
    }
}

// ------------------------------------------------------------------ binary and big values

#[test]
fn all_byte_values_round_trip() {
    let mut d = Diff::new();
    let bytes = all_bytes();
    d.cmd(&[b"SET".as_slice(), b"bin", &bytes]);
    d.cmd(&[b"GET".as_slice(), b"bin"]);
    d.cmd(&[b"STRLEN".as_slice(), b"bin"]);
    d.cmd(&[b"GETRANGE".as_slice(), b"bin", b"250", b"-1"]);
    d.cmd(&[b"APPEND".as_slice(), b"bin", &bytes]);
    d.cmd(&[b"GET".as_slice(), b"bin"]);
    // Keys are binary-safe too.
    d.cmd(&[b"SET".as_slice(), &bytes, b"value"]);
    d.cmd(&[b"GET".as_slice(), &bytes]);
    d.cmd(&[b"EXISTS".as_slice(), &bytes]);
    d.cmd(&[b"SET".as_slice(), b"", b""]);
    d.cmd(&[b"GET".as_slice(), b""]);
    d.cmd(&[b"SET".as_slice(), b"crlf", b"a\r\nb\r\n"]);
    d.cmd(&[b"GET".as_slice(), b"crlf"]);
}

#[test]
fn empty_values() {
    let mut d = Diff::new();
    d.cmd(&["SET", "e", ""]);
    d.cmd(&["GET", "e"]);
    d.cmd(&["EXISTS", "e"]);
    d.cmd(&["STRLEN", "e"]);
    d.cmd(&["APPEND", "e", ""]);
    d.cmd(&["INCR", "e"]);
    d.cmd(&["INCRBYFLOAT", "e", "1"]);
    d.cmd(&["GETRANGE", "e", "0", "0"]);
    d.cmd(&["MSET", "e1", "", "e2", ""]);
    d.cmd(&["MGET", "e1", "e2"]);
    d.cmd(&["GETSET", "e1", ""]);
    d.cmd(&["GETDEL", "e2"]);
}

#[test]
fn one_megabyte_value() {
    let mut d = Diff::new();
    let big = pattern(1 << 20, 1);
    d.cmd(&[b"SET".as_slice(), b"big", &big]);
    d.cmd(&["STRLEN", "big"]);
    d.cmd(&["GET", "big"]);
    d.cmd(&["GETRANGE", "big", "1048570", "-1"]);
    d.cmd(&["GETRANGE", "big", "-70000", "-65000"]);
    d.cmd(&["APPEND", "big", "tail"]);
    d.cmd(&["GETRANGE", "big", "-10", "-1"]);
    d.cmd(&["GETDEL", "big"]);
    d.cmd(&["EXISTS", "big"]);
}

#[test]
fn getrange_across_64k_chunk_boundaries() {
    let mut d = Diff::new();
    let big = pattern(3 * CHUNK + 100, 2);
    d.cmd(&[b"SET".as_slice(), b"k", &big]);
    for b in [CHUNK, 2 * CHUNK, 3 * CHUNK] {
        for (s, e) in [
            (b - 1, b),
            (b - 2, b + 2),
            (b, b),
            (b - 1, b - 1),
            (b - 10, b + 10),
        ] {
            d.cmd(&["GETRANGE", "k", &s.to_string(), &e.to_string()]);
        }
    }
    d.cmd(&["GETRANGE", "k", "0", &(2 * CHUNK + 5).to_string()]);
    d.cmd(&["GETRANGE", "k", &(CHUNK - 3).to_string(), "-1"]);
    d.cmd(&["GETRANGE", "k", "-65537", "-65535"]);
}

#[test]
fn setrange_across_64k_chunk_boundaries() {
    let mut d = Diff::new();
    let big = pattern(2 * CHUNK + 10, 3);
    d.cmd(&[b"SET".as_slice(), b"k", &big]);
    d.cmd(&["SETRANGE", "k", &(CHUNK - 2).to_string(), "ABCD"]);
    d.cmd(&[
        "GETRANGE",
        "k",
        &(CHUNK - 4).to_string(),
        &(CHUNK + 4).to_string(),
    ]);
    d.cmd(&["SETRANGE", "k", &(2 * CHUNK + 8).to_string(), "XYZW"]);
    d.cmd(&["STRLEN", "k"]);
    d.cmd(&["GETRANGE", "k", "-8", "-1"]);
    // A write covering a whole chunk and parts of its neighbours.
    let middle = pattern(CHUNK + 20, 9);
    d.cmd(&[
        b"SETRANGE".as_slice(),
        b"k",
        (CHUNK - 10).to_string().as_bytes(),
        &middle,
    ]);
    d.cmd(&["GET", "k"]);
    // Exactly one chunk, at a chunk-aligned offset.
    let exact = pattern(CHUNK, 4);
    d.cmd(&[
        b"SETRANGE".as_slice(),
        b"e",
        CHUNK.to_string().as_bytes(),
        &exact,
    ]);
    d.cmd(&["STRLEN", "e"]);
    d.cmd(&[
        "GETRANGE",
        "e",
        &(CHUNK - 1).to_string(),
        &(CHUNK + 1).to_string(),
    ]);
    d.cmd(&["GETRANGE", "e", "-2", "-1"]);
    d.cmd(&["GET", "e"]);
}

#[test]
fn append_across_64k_chunk_boundaries() {
    let mut d = Diff::new();
    let part = pattern(CHUNK - 3, 5);
    d.cmd(&[b"SET".as_slice(), b"k", &part]);
    d.cmd(&["APPEND", "k", "123456"]);
    d.cmd(&["GETRANGE", "k", &(CHUNK - 5).to_string(), "-1"]);
    let more = pattern(CHUNK + 7, 6);
    d.cmd(&[b"APPEND".as_slice(), b"k", &more]);
    d.cmd(&["STRLEN", "k"]);
    d.cmd(&[
        "GETRANGE",
        "k",
        &(2 * CHUNK - 2).to_string(),
        &(2 * CHUNK + 2).to_string(),
    ]);
    d.cmd(&["GET", "k"]);
    // Appending to exactly one full chunk.
    let full = pattern(CHUNK, 7);
    d.cmd(&[b"SET".as_slice(), b"f", &full]);
    d.cmd(&["APPEND", "f", "Z"]);
    d.cmd(&["GETRANGE", "f", "-3", "-1"]);
    d.cmd(&["STRLEN", "f"]);
}

#[test]
fn setrange_far_beyond_the_end() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "start"]);
    d.cmd(&["SETRANGE", "k", "10000000", "end"]);
    d.cmd(&["STRLEN", "k"]);
    d.cmd(&["GETRANGE", "k", "9999990", "10000010"]);
    d.cmd(&["GETRANGE", "k", "0", "10"]);
    d.cmd(&["GETRANGE", "k", "5000000", "5000005"]);
    d.cmd(&["GETRANGE", "k", "-4", "-1"]);
    d.cmd(&["SETRANGE", "k", "6553599", "mid"]);
    d.cmd(&["GETRANGE", "k", "6553595", "6553605"]);
    d.cmd(&["APPEND", "k", "more"]);
    d.cmd(&["STRLEN", "k"]);
    d.cmd(&["SETRANGE", "fresh", "10000000", "x"]);
    d.cmd(&["STRLEN", "fresh"]);
    d.cmd(&["GETRANGE", "fresh", "9999999", "-1"]);
    d.cmd(&["GETRANGE", "fresh", "0", "3"]);
}

#[test]
fn big_values_replace_small_ones_and_back() {
    let mut d = Diff::new();
    let big = pattern(200_000, 8);
    d.cmd(&["SET", "k", "small"]);
    d.cmd(&[b"SET".as_slice(), b"k", &big]);
    d.cmd(&["STRLEN", "k"]);
    d.cmd(&["SET", "k", "small again"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["STRLEN", "k"]);
    d.cmd(&["GETRANGE", "k", "65536", "65540"]);
    d.cmd(&[b"GETSET".as_slice(), b"k", &big]);
    d.cmd(&["GETSET", "k", "x"]);
    d.cmd(&["GET", "k"]);
}

#[test]
fn value_of_reply_matches_expectations() {
    // Guards against a harness that compares nothing: values come back.
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    assert_eq!(d.cmd(&["GET", "k"]), R::bulk(b"v"));
    assert_eq!(d.cmd(&["INCR", "n"]), R::Int(1));
}
