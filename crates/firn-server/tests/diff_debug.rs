//! Differential tests of DEBUG against redis-server 7.0.15, both started
//! with `enable-debug-command` set alike: the refusal when it is off, ERROR,
//! SLEEP, OBJECT's encoding and serialized length, PROTOCOL's sample replies
//! in RESP2 and RESP3, DIGEST and DIGEST-VALUE (Redis's algorithm, so the
//! same data digests alike), SET-ACTIVE-EXPIRE, and RELOAD, which keeps
//! values, expiries and encodings.

use firn_testkit::{Diff, Server, R};
use std::time::{Duration, Instant};

fn with_debug(value: &str) -> Diff {
    let flags = ["--enable-debug-command", value];
    Diff::with_servers(Server::redis_with(&flags), Server::firn_with(&flags))
}

/// The `name:value` field of a DEBUG OBJECT line.
fn field(line: &R, name: &str) -> R {
    let text = line.as_str().unwrap_or_default();
    let value = text
        .split(' ')
        .find_map(|part| part.strip_prefix(name)?.strip_prefix(':'))
        .unwrap_or("<missing>");
    R::Simple(format!("{name}:{value}"))
}

/// Keys of each type and encoding, one with an expiry.
fn fill(d: &mut Diff) {
    d.cmd(&["SET", "str", "hello"]);
    d.cmd(&["SET", "int", "12345"]);
    d.cmd(&["SET", "raw", &"x".repeat(100)]);
    d.cmd(&["SET", "ttl", "v", "EX", "1000"]);
    d.cmd(&["RPUSH", "list", "a", "b", "1", "2"]);
    d.cmd(&["HSET", "hash", "f", "v", "g", "2"]);
    d.cmd(&["HSET", "bighash", "f", &"v".repeat(100)]);
    d.cmd(&["SADD", "intset", "1", "2", "3"]);
    d.cmd(&["SADD", "set", "a", "b", "1"]);
    d.cmd(&["ZADD", "zset", "1", "a", "2.5", "b", "-3", "c"]);
    d.cmd(&["ZADD", "bigzset", "1", &"m".repeat(100)]);
    d.cmd(&["PEXPIRE", "hash", "5000000"]);
}

const KEYS: &[&str] = &[
    "str", "int", "raw", "ttl", "list", "hash", "bighash", "intset", "set", "zset", "bigzset",
];

#[test]
fn refused_unless_enabled() {
    let mut d = Diff::new();
    let r = d.cmd(&["DEBUG", "SLEEP", "0"]);
    assert!(r.error_text().unwrap_or_default().contains("not allowed"));
    d.cmd(&["DEBUG", "HELP"]);
    d.cmd(&["debug", "nosuchsubcommand"]);
    d.cmd(&["DEBUG"]);
    d.cmd(&["CONFIG", "GET", "enable-debug-command"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["DEBUG", "SLEEP", "0"]);
    d.cmd(&["EXEC"]);
    let mut d = with_debug("no");
    d.cmd(&["DEBUG", "ERROR", "x"]);
}

#[test]
fn allowed_from_loopback_when_local() {
    let mut d = with_debug("local");
    d.cmd(&["CONFIG", "GET", "enable-debug-command"]);
    d.cmd(&["DEBUG", "SLEEP", "0"]);
    d.cmd(&["CONFIG", "SET", "enable-debug-command", "yes"]);
}

#[test]
fn error_sleep_and_argument_checks() {
    let mut d = with_debug("yes");
    let r = d.cmd(&["DEBUG", "ERROR", "MYERR some text"]);
    assert_eq!(r, R::Error("MYERR some text".into()));
    d.cmd(&["DEBUG", "ERROR", "line\r\nbreak"]);
    d.cmd(&["DEBUG", "SLEEP", "0"]);
    d.cmd(&["DEBUG", "SLEEP", "0.01"]);
    d.cmd(&["DEBUG", "SLEEP", "notanumber"]);
    d.cmd(&["DEBUG", "SLEEP"]);
    d.cmd(&["DEBUG", "JMAP"]);
    d.cmd(&["DEBUG", "STRINGMATCH-LEN"]);
    d.cmd(&["DEBUG", "DIGEST", "extra"]);
    d.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
    d.cmd(&["DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"]);
    d.cmd(&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"]);
    d.cmd(&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"]);
    d.cmd(&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb"]);
    d.cmd(&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "abc"]);
    d.cmd(&["DEBUG", "RELOAD", "BOGUS"]);
    d.cmd(&["DEBUG", "CHANGE-REPL-ID"]);
    d.cmd(&["DEBUG", "OBJECT", "missing"]);
    d.cmd(&["DEBUG", "LISTPACK", "missing"]);
    d.cmd(&["SET", "s", "v"]);
    d.cmd(&["DEBUG", "LISTPACK", "s"]);
    d.cmd(&["DEBUG", "QUICKLIST", "s"]);
    d.cmd(&["RPUSH", "l", "a"]);
    d.cmd(&["DEBUG", "QUICKLIST", "l"]);
    d.cmd(&["HSET", "h", "a", "b"]);
    d.cmd(&["DEBUG", "LISTPACK", "h"]);
}

#[test]
fn object_reports_the_encoding_and_serialized_length() {
    let mut d = with_debug("yes");
    fill(&mut d);
    for key in KEYS {
        d.cmd_with(&["DEBUG", "OBJECT", key], |r| field(r, "encoding"));
        d.cmd_with(&["DEBUG", "OBJECT", key], |r| field(r, "refcount"));
        if *key != "list" {
            d.cmd_with(&["DEBUG", "OBJECT", key], |r| field(r, "serializedlength"));
        }
    }
    // The address stays while the value is changed in place.
    let mut firn = d.client().firn.cmd(&["DEBUG", "OBJECT", "int"]);
    let before = field(&firn, "Value at");
    d.cmd(&["INCR", "int"]);
    firn = d.client().firn.cmd(&["DEBUG", "OBJECT", "int"]);
    assert_eq!(before, field(&firn, "Value at"));
}

const TYPES: &[&str] = &[
    "string",
    "integer",
    "double",
    "bignum",
    "null",
    "array",
    "set",
    "map",
    "attrib",
    "verbatim",
    "true",
    "false",
    "nosuchtype",
];

#[test]
fn protocol_replies_in_resp2() {
    let mut d = with_debug("yes");
    for t in TYPES {
        d.cmd(&["DEBUG", "PROTOCOL", t]);
    }
    d.cmd(&["DEBUG", "PROTOCOL", "push"]);
    d.cmd(&["DEBUG", "PROTOCOL", "STRING"]);
}

#[test]
fn protocol_replies_in_resp3() {
    let mut d = with_debug("yes");
    d.cmd_type_only(&["HELLO", "3"]);
    for t in TYPES {
        d.cmd(&["DEBUG", "PROTOCOL", t]);
    }
    // The push message, then the reply proper.
    d.cmd(&["DEBUG", "PROTOCOL", "push"]);
    d.read_both();
    d.cmd(&["PING"]);
}

#[test]
fn digests_match_redis() {
    let mut d = with_debug("yes");
    d.cmd(&["DEBUG", "DIGEST"]);
    d.cmd(&["DEBUG", "DIGEST-VALUE"]);
    d.cmd(&["DEBUG", "DIGEST-VALUE", "missing", "other"]);
    fill(&mut d);
    let mut line = vec!["DEBUG", "DIGEST-VALUE"];
    line.extend_from_slice(KEYS);
    line.push("missing");
    d.cmd(&line);
    d.cmd(&["DEBUG", "DIGEST"]);
    d.cmd(&["SELECT", "5"]);
    d.cmd(&["SET", "elsewhere", "1"]);
    d.cmd(&["DEBUG", "DIGEST"]);
    d.cmd(&["DEBUG", "DIGEST-VALUE", "str"]);
}

#[test]
fn reload_keeps_values_expiries_and_encodings() {
    let mut d = with_debug("yes");
    fill(&mut d);
    d.cmd(&["SELECT", "2"]);
    d.cmd(&["SET", "k2", "v2", "PX", "900000"]);
    d.cmd(&["SELECT", "0"]);
    let check = |d: &mut Diff| {
        d.cmd(&["DEBUG", "DIGEST"]);
        d.cmd(&["DBSIZE"]);
        for key in KEYS {
            d.cmd(&["TYPE", key]);
            d.cmd(&["OBJECT", "ENCODING", key]);
            // A hash table's order is its own (Redis's changes on reload).
            if !["set", "bighash", "bigzset"].contains(key) {
                d.cmd(&["DUMP", key]);
            }
            d.cmd_approx(&["TTL", key], 2);
        }
        d.cmd(&["LRANGE", "list", "0", "-1"]);
        d.cmd(&["ZRANGE", "zset", "0", "-1", "WITHSCORES"]);
        d.cmd_unordered(&["SMEMBERS", "set"]);
        d.cmd_unordered(&["HKEYS", "bighash"]);
        d.cmd(&["ZRANGE", "bigzset", "0", "-1", "WITHSCORES"]);
        d.cmd(&["SELECT", "2"]);
        d.cmd(&["GET", "k2"]);
        d.cmd_approx(&["PTTL", "k2"], 5000);
        d.cmd(&["SELECT", "0"]);
    };
    check(&mut d);
    assert_eq!(d.cmd(&["DEBUG", "RELOAD"]), R::Simple("OK".into()));
    check(&mut d);
    d.cmd(&["DEBUG", "RELOAD", "NOSAVE", "noflush", "MERGE"]);
    // Writes after a reload land as before.
    d.cmd(&["RPUSH", "list", "z"]);
    d.cmd(&["HSET", "hash", "new", "1"]);
    d.cmd(&["DEBUG", "RELOAD"]);
    check(&mut d);
}

#[test]
fn set_active_expire_leaves_expired_keys_counted() {
    let mut d = with_debug("yes");
    d.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    d.cmd(&["SET", "k", "v", "PX", "20"]);
    d.sleep_ms(400);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
    d.cmd(&["SET", "k", "v", "PX", "20"]);
    d.sleep_ms(400);
    d.cmd(&["DBSIZE"]);
}

/// SLEEP holds its own connection, not the server: another client is
/// served meanwhile (Redis would stop; Firn's network threads do not).
#[test]
fn sleep_does_not_hold_other_clients() {
    let server = Server::firn_with(&["--enable-debug-command", "yes"]);
    let mut sleeper = server.conn();
    let mut other = server.conn();
    let started = Instant::now();
    sleeper.send(&[b"DEBUG", b"SLEEP", b"1"]);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(other.cmd(&["PING"]), R::Simple("PONG".into()));
    assert!(started.elapsed() < Duration::from_millis(900));
    assert_eq!(sleeper.read_reply().1, R::Simple("OK".into()));
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[test]
fn change_repl_id_draws_a_new_replication_id() {
    let server = Server::firn_with(&["--enable-debug-command", "yes"]);
    let mut conn = server.conn();
    let replid = |conn: &mut firn_testkit::Conn| {
        let info = conn
            .cmd(&["INFO", "replication"])
            .as_str()
            .unwrap_or_default();
        info.lines()
            .find_map(|l| l.strip_prefix("master_replid:").map(str::to_string))
            .expect("master_replid")
    };
    let before = replid(&mut conn);
    assert_eq!(
        conn.cmd(&["DEBUG", "CHANGE-REPL-ID"]),
        R::Simple("OK".into())
    );
    let after = replid(&mut conn);
    assert_ne!(before, after);
    assert_eq!(after.len(), 40);
}

/// RELOAD restarts the engine in place: the hot tier is emptied, so the
/// next reads miss it and come from the files, and the data is the same.
#[test]
fn reload_empties_the_hot_tier() {
    use firn_testkit::info::storage;
    let server = Server::firn_with(&["--enable-debug-command", "yes"]);
    let mut conn = server.conn();
    for i in 0..50 {
        conn.cmd(&["SET", &format!("k{i}"), &format!("v{i}")]);
    }
    assert!(storage(&mut conn, "hot_cache_entries") > 0);
    assert_eq!(conn.cmd(&["DEBUG", "RELOAD"]), R::Simple("OK".into()));
    assert_eq!(storage(&mut conn, "hot_cache_entries"), 0);
    let misses = storage(&mut conn, "hot_cache_misses");
    assert_eq!(conn.cmd(&["GET", "k7"]), R::bulk(b"v7"));
    assert!(storage(&mut conn, "hot_cache_misses") > misses);
    assert_eq!(conn.cmd(&["DBSIZE"]), R::Int(50));
}

/// DEBUG SET-DISABLE-DENY-SCRIPTS lets scripts call `noscript` commands,
/// as Redis's scripting unit does to reach DEBUG PROTOCOL from Lua.
#[test]
fn set_disable_deny_scripts_lets_scripts_call_debug() {
    let mut d = with_debug("yes");
    let script = "return redis.call('debug', 'protocol', 'bignum')";
    d.cmd(&["EVAL", script, "0"]);
    d.cmd(&["DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"]);
    d.cmd(&["EVAL", script, "0"]);
    d.cmd(&["EVAL", "return redis.call('debug', 'protocol', 'map')", "0"]);
    d.cmd(&["DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"]);
    d.cmd(&["EVAL", script, "0"]);
}
