//! Differential tests of the blocking commands against redis-server 7.0.15:
//! BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP, BZPOPMIN, BZPOPMAX and BZMPOP
//! served at once when there is data (RESP2 and RESP3 reply shapes),
//! argument and timeout errors in Redis's order, short timeouts, and
//! waiters woken by pushes from another connection (one waiter, a BLMOVE
//! chain, CLIENT UNBLOCK), whose replies are compared byte for byte.
//!
//! MULTI/EXEC (where a blocking command answers at once) is not served on
//! this branch; its differential case belongs with the transactions suite.

use firn_testkit::{info, Diff, R};

/// Switches the active client pair to RESP3 (HELLO's id differs).
fn resp3(d: &mut Diff) {
    d.cmd_type_only(&["HELLO", "3"]);
}

// ------------------------------------------------------------ served at once

#[test]
fn list_pops_are_served_at_once_when_there_is_data() {
    let mut d = Diff::new();
    d.cmd(&["RPUSH", "a", "1", "2", "3"]);
    d.cmd(&["RPUSH", "b", "x"]);
    d.cmd(&["BLPOP", "missing", "a", "b", "0"]);
    d.cmd(&["BRPOP", "missing", "a", "b", "0"]);
    d.cmd(&["BRPOP", "b", "a", "1"]);
    d.cmd(&["EXISTS", "b"]);
    d.cmd(&["BLPOP", "a", "0.5"]);
    d.cmd(&["EXISTS", "a"]);
    d.cmd(&["RPUSH", "src", "p", "q", "r"]);
    d.cmd(&["BRPOPLPUSH", "src", "dst", "0"]);
    d.cmd(&["BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"]);
    d.cmd(&["BLMOVE", "src", "src", "left", "left", "0"]);
    d.cmd(&["LRANGE", "dst", "0", "-1"]);
    d.cmd(&["LRANGE", "src", "0", "-1"]);
    d.cmd(&["RPUSH", "m", "1", "2", "3", "4"]);
    d.cmd(&["BLMPOP", "0", "2", "none", "m", "LEFT"]);
    d.cmd(&["BLMPOP", "0", "1", "m", "RIGHT", "COUNT", "2"]);
    d.cmd(&["BLMPOP", "0", "1", "m", "RIGHT", "COUNT", "10"]);
    d.cmd(&["EXISTS", "m"]);
}

#[test]
fn sorted_set_pops_are_served_at_once_in_both_protocols() {
    let mut d = Diff::new();
    for round in 0..2 {
        if round == 1 {
            resp3(&mut d);
        }
        d.cmd(&["ZADD", "z", "1", "a", "2.5", "b", "3", "c", "-inf", "n"]);
        d.cmd(&["BZPOPMIN", "missing", "z", "0"]);
        d.cmd(&["BZPOPMAX", "z", "missing", "0"]);
        d.cmd(&["BZMPOP", "0", "2", "missing", "z", "MIN"]);
        d.cmd(&["ZADD", "z", "7", "x", "8", "y"]);
        d.cmd(&["BZMPOP", "1", "1", "z", "MAX", "COUNT", "2"]);
        d.cmd(&["BZMPOP", "1", "1", "z", "min", "count", "100"]);
        d.cmd(&["EXISTS", "z"]);
        d.cmd(&["RPUSH", "l", "a", "b"]);
        d.cmd(&["BLPOP", "l", "0"]);
        d.cmd(&["BLMPOP", "0", "1", "l", "LEFT", "COUNT", "3"]);
    }
}

#[test]
fn wrong_types_are_errors_where_redis_meets_them() {
    let mut d = Diff::new();
    d.cmd(&["SET", "s", "v"]);
    d.cmd(&["RPUSH", "l", "1", "2"]);
    d.cmd(&["ZADD", "z", "1", "m"]);
    d.cmd(&["BLPOP", "s", "l", "0"]);
    d.cmd(&["BLPOP", "l", "s", "0"]);
    d.cmd(&["BRPOP", "missing", "s", "0"]);
    d.cmd(&["BZPOPMIN", "l", "0"]);
    d.cmd(&["BZPOPMAX", "z", "l", "0"]);
    d.cmd(&["BZMPOP", "0", "2", "s", "z", "MIN"]);
    d.cmd(&["BLMPOP", "0", "2", "z", "l", "LEFT"]);
    d.cmd(&["RPUSH", "l", "3", "4"]);
    d.cmd(&["BLMOVE", "s", "l", "LEFT", "LEFT", "0"]);
    d.cmd(&["BLMOVE", "l", "s", "LEFT", "LEFT", "0"]);
    d.cmd(&["BRPOPLPUSH", "l", "z", "0"]);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    // An empty source never looks at its destination's type.
    d.cmd(&["BLMOVE", "missing", "s", "LEFT", "LEFT", "0.01"]);
}

// ------------------------------------------------------------ errors

#[test]
fn timeouts_parse_as_redis_parses_them() {
    let mut d = Diff::new();
    for timeout in [
        "abc",
        "-1",
        "inf",
        "-inf",
        "+inf",
        "nan",
        "1e400",
        " 1",
        "1 ",
        "",
        "-0.5",
        "0x",
        "1e",
        "9223372036854775807",
    ] {
        d.cmd(&["BLPOP", "k", timeout]);
        d.cmd(&["BRPOP", "k", "j", timeout]);
        d.cmd(&["BZPOPMIN", "k", timeout]);
        d.cmd(&["BZPOPMAX", "k", timeout]);
        d.cmd(&["BRPOPLPUSH", "k", "d", timeout]);
        d.cmd(&["BLMOVE", "k", "d", "LEFT", "RIGHT", timeout]);
        d.cmd(&["BLMPOP", timeout, "1", "k", "LEFT"]);
        d.cmd(&["BZMPOP", timeout, "1", "k", "MAX"]);
    }
    // A timeout under a millisecond rounds up to 1 ms, and a negative one
    // under a millisecond to 0 (forever). Served at once here, so the
    // reply is comparable.
    d.cmd(&["RPUSH", "k", "v", "w"]);
    d.cmd(&["BLPOP", "k", "0.0001"]);
    d.cmd(&["BLPOP", "k", "-0.0001"]);
    // Redis's "with 0.001 timeout should not block indefinitely": on an
    // empty key these time out at once (0.001's long double is a hair
    // under it, and rounds up).
    for timeout in ["0.001", "0.0001", "1e-10"] {
        d.cmd(&["BLPOP", "empty", timeout]);
        d.cmd(&["BZPOPMIN", "empty", timeout]);
    }
    d.cmd(&["ZADD", "z", "1", "a", "2", "b"]);
    d.cmd(&["BZPOPMIN", "z", "1e-10"]);
    d.cmd(&["BZPOPMIN", "z", "0x1p-2"]);
}

/// A timeout under a millisecond is a millisecond, not forever: the
/// client is answered a null when it passes (Redis 7.0.15 rounds up).
#[test]
fn sub_millisecond_timeouts_expire() {
    let mut d = Diff::new();
    for timeout in ["0.001", "0.0001", "1e-10"] {
        d.cmd(&["BLPOP", "empty", timeout]);
        d.cmd(&["BZPOPMIN", "empty", timeout]);
    }
}

#[test]
fn argument_errors_come_in_redis_order() {
    let mut d = Diff::new();
    for command in [
        vec!["BLPOP"],
        vec!["BLPOP", "k"],
        vec!["BRPOP", "k"],
        vec!["BRPOPLPUSH", "a", "b"],
        vec!["BRPOPLPUSH", "a", "b", "0", "x"],
        vec!["BLMOVE", "a", "b", "LEFT", "RIGHT"],
        vec!["BLMOVE", "a", "b", "UP", "RIGHT", "abc"],
        vec!["BLMOVE", "a", "b", "LEFT", "DOWN", "abc"],
        vec!["BLMOVE", "a", "b", "LEFT", "RIGHT", "abc"],
        vec!["BLMPOP", "0", "1", "k"],
        vec!["BLMPOP", "abc", "0", "k", "LEFT"],
        vec!["BLMPOP", "abc", "1", "k", "UP"],
        vec!["BLMPOP", "abc", "1", "k", "LEFT", "COUNT", "0"],
        vec!["BLMPOP", "abc", "1", "k", "LEFT"],
        vec!["BLMPOP", "0", "-1", "k", "LEFT"],
        vec!["BLMPOP", "0", "x", "k", "LEFT"],
        vec!["BLMPOP", "0", "2", "k", "LEFT"],
        vec!["BLMPOP", "0", "1", "k", "LEFT", "COUNT"],
        vec!["BLMPOP", "0", "1", "k", "LEFT", "COUNT", "-3"],
        vec!["BLMPOP", "0", "1", "k", "LEFT", "COUNT", "2", "COUNT", "3"],
        vec!["BLMPOP", "0", "1", "k", "LEFT", "FOO", "2"],
        vec!["BZMPOP", "0", "1", "k"],
        vec!["BZMPOP", "abc", "0", "k", "MIN"],
        vec!["BZMPOP", "abc", "1", "k", "LEFT"],
        vec!["BZMPOP", "abc", "1", "k", "MIN"],
        vec!["BZMPOP", "0", "1", "k", "MIN", "COUNT", "0"],
        vec!["BZMPOP", "0", "1", "k", "MIN", "COUNT", "1", "COUNT", "1"],
        vec!["BZMPOP", "0", "3", "k", "MIN"],
        vec!["BZPOPMIN", "k"],
        vec!["BZPOPMAX"],
    ] {
        d.cmd(&command);
    }
    d.cmd(&["CLIENT", "UNBLOCK"]);
    d.cmd(&["CLIENT", "UNBLOCK", "abc", "foo"]);
    d.cmd(&["CLIENT", "UNBLOCK", "abc"]);
    d.cmd(&["CLIENT", "UNBLOCK", "-5"]);
    d.cmd(&["CLIENT", "UNBLOCK", "999999", "ERROR"]);
    d.cmd(&["CLIENT", "UNBLOCK", "1", "timeout", "extra"]);
}

// ------------------------------------------------------------ timeouts

#[test]
fn short_timeouts_reply_null_in_both_protocols() {
    let mut d = Diff::new();
    d.cmd(&["SET", "s", "v"]);
    for round in 0..2 {
        if round == 1 {
            resp3(&mut d);
        }
        d.cmd(&["BLPOP", "k", "0.01"]);
        d.cmd(&["BRPOP", "k", "j", "0.02"]);
        d.cmd(&["BRPOPLPUSH", "k", "d", "0.01"]);
        d.cmd(&["BLMOVE", "k", "s", "LEFT", "RIGHT", "0.01"]);
        d.cmd(&["BLMPOP", "0.01", "2", "k", "j", "RIGHT", "COUNT", "2"]);
        d.cmd(&["BZPOPMIN", "k", "0.01"]);
        d.cmd(&["BZPOPMAX", "k", "0.01"]);
        d.cmd(&["BZMPOP", "0.01", "1", "k", "MAX"]);
        d.cmd(&["EXISTS", "k", "d"]);
    }
    // Each blocked command counts as one call when it ends (times apart).
    d.cmd_with(&["INFO", "commandstats"], info::calls_only);
}

// ------------------------------------------------------------ woken waiters

#[test]
fn a_waiter_is_served_by_a_push_from_another_connection() {
    let mut d = Diff::new();
    let pusher = d.open_client();
    d.use_client(0);
    for (block, push, check) in [
        (
            vec!["BLPOP", "q", "other", "0"],
            vec!["RPUSH", "q", "a", "b", "c"],
            vec!["LRANGE", "q", "0", "-1"],
        ),
        (
            vec!["BRPOP", "other", "q2", "5"],
            vec!["LPUSH", "q2", "x", "y"],
            vec!["LRANGE", "q2", "0", "-1"],
        ),
        (
            vec!["BLMPOP", "0", "2", "m1", "m2", "RIGHT", "COUNT", "5"],
            vec!["RPUSH", "m2", "1", "2", "3"],
            vec!["EXISTS", "m2"],
        ),
        (
            vec!["BZPOPMAX", "z", "0"],
            vec!["ZADD", "z", "1", "a", "2", "b"],
            vec!["ZRANGE", "z", "0", "-1", "WITHSCORES"],
        ),
        (
            vec!["BZMPOP", "0", "1", "z2", "MIN", "COUNT", "2"],
            vec!["ZADD", "z2", "3", "c", "1", "a", "2", "b"],
            vec!["ZRANGE", "z2", "0", "-1", "WITHSCORES"],
        ),
        (
            vec!["BRPOPLPUSH", "s", "dst", "0"],
            vec!["RPUSH", "s", "v1", "v2"],
            vec!["LRANGE", "dst", "0", "-1"],
        ),
    ] {
        for protocol in ["2", "3"] {
            d.use_client(0);
            d.cmd_type_only(&["HELLO", protocol]);
            d.send(&block);
            d.wait_blocked(pusher, pusher, 1);
            d.cmd(&push);
            d.use_client(0);
            d.read_both();
            d.cmd(&check);
            d.cmd(&["DEL", "q", "q2", "m2", "z", "z2", "s", "dst"]);
        }
    }
}

#[test]
fn a_blmove_chain_serves_the_next_waiter() {
    let mut d = Diff::new();
    let second = d.open_client();
    let pusher = d.open_client();
    d.use_client(0);
    d.send(&["BLMOVE", "a", "b", "LEFT", "RIGHT", "0"]);
    d.wait_blocked(pusher, second, 1);
    d.send(&["BLPOP", "b", "0"]);
    d.wait_blocked(pusher, pusher, 2);
    d.cmd(&["RPUSH", "a", "1", "2", "3"]);
    d.use_client(0);
    d.read_both();
    d.use_client(second);
    d.read_both();
    d.use_client(pusher);
    d.cmd(&["LRANGE", "a", "0", "-1"]);
    d.cmd(&["EXISTS", "b"]);
}

#[test]
fn a_waiter_with_a_wrong_type_destination_gets_the_error_when_served() {
    let mut d = Diff::new();
    let pusher = d.open_client();
    d.use_client(pusher);
    d.cmd(&["SET", "dst", "string"]);
    d.use_client(0);
    d.send(&["BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"]);
    d.wait_blocked(pusher, pusher, 1);
    d.cmd(&["RPUSH", "src", "x"]);
    d.use_client(0);
    d.read_both();
    d.cmd(&["LRANGE", "src", "0", "-1"]);
}

#[test]
fn client_unblock_answers_as_redis_does() {
    let mut d = Diff::new();
    let other = d.open_client();
    for (how, block) in [
        ("TIMEOUT", vec!["BLPOP", "k", "0"]),
        ("ERROR", vec!["BLPOP", "k", "0"]),
        ("TIMEOUT", vec!["BLMOVE", "k", "d", "LEFT", "LEFT", "0"]),
        ("ERROR", vec!["BZMPOP", "0", "1", "k", "MIN"]),
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
        assert_eq!(redis, R::Int(1));
        d.use_client(0);
        d.read_both();
        d.wait_blocked(other, 0, 0);
        d.cmd(&["PING"]);
    }
}

#[test]
fn a_key_that_becomes_another_type_does_not_serve_a_waiter() {
    let mut d = Diff::new();
    let other = d.open_client();
    d.use_client(0);
    d.send(&["BLPOP", "k", "list", "0"]);
    d.wait_blocked(other, other, 1);
    d.cmd(&["SET", "k", "string"]);
    d.cmd(&["ZADD", "list", "1", "m"]);
    d.cmd(&["DEL", "list"]);
    d.cmd(&["RPUSH", "list", "v"]);
    d.use_client(0);
    d.read_both();
    d.use_client(other);
    d.cmd(&["DEL", "k"]);
    d.use_client(0);
    d.send(&["BZMPOP", "0", "2", "z", "y", "MAX"]);
    d.wait_blocked(other, other, 1);
    d.cmd(&["RPUSH", "z", "not a zset"]);
    d.cmd(&["ZADD", "y", "2", "m"]);
    d.use_client(0);
    d.read_both();
    d.send(&["BLMOVE", "src", "dst", "LEFT", "LEFT", "0"]);
    d.wait_blocked(other, other, 1);
    d.cmd(&["SET", "src", "x"]);
    d.cmd(&["DEL", "src"]);
    d.cmd(&["RPUSH", "src", "e"]);
    d.use_client(0);
    d.read_both();
}

#[test]
fn a_subscribed_resp3_client_gets_messages_while_blocked() {
    let mut d = Diff::new();
    let other = d.open_client();
    d.use_client(0);
    resp3(&mut d);
    d.cmd(&["SUBSCRIBE", "news"]);
    d.send(&["BLPOP", "q", "0"]);
    d.wait_blocked(other, other, 1);
    d.cmd(&["PUBLISH", "news", "hello"]);
    d.use_client(0);
    d.read_both();
    d.use_client(other);
    d.cmd(&["RPUSH", "q", "v"]);
    d.use_client(0);
    d.read_both();
}

#[test]
fn blocking_commands_inside_multi_answer_at_once() {
    let mut d = Diff::new();
    d.cmd(&["SET", "s", "v"]);
    d.cmd(&["RPUSH", "full", "x"]);
    for round in 0..2 {
        if round == 1 {
            resp3(&mut d);
        }
        d.cmd(&["MULTI"]);
        d.cmd(&["BLPOP", "k", "0"]);
        d.cmd(&["BRPOP", "k", "full", "0"]);
        d.cmd(&["BRPOPLPUSH", "k", "d", "0"]);
        d.cmd(&["BLMOVE", "k", "d", "LEFT", "LEFT", "0"]);
        d.cmd(&["BLMPOP", "0", "1", "k", "LEFT"]);
        d.cmd(&["BZPOPMIN", "k", "0"]);
        d.cmd(&["BZPOPMAX", "k", "0"]);
        d.cmd(&["BZMPOP", "0", "1", "k", "MIN"]);
        d.cmd(&["BLPOP", "s", "0"]);
        d.cmd(&["BLPOP", "k", "abc"]);
        d.cmd(&["RPUSH", "full", "y"]);
        d.cmd(&["EXEC"]);
    }
}

#[test]
fn a_push_inside_multi_wakes_the_waiter_after_exec() {
    let mut d = Diff::new();
    let other = d.open_client();
    d.use_client(0);
    d.send(&["BLPOP", "q", "0"]);
    d.wait_blocked(other, other, 1);
    d.cmd(&["MULTI"]);
    d.cmd(&["RPUSH", "q", "a"]);
    d.cmd(&["RPUSH", "q", "b"]);
    d.cmd(&["LPOP", "q"]);
    d.cmd(&["EXEC"]);
    d.use_client(0);
    d.read_both();
    d.cmd(&["LRANGE", "q", "0", "-1"]);
}
