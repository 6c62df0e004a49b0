//! Differential tests of client-side caching against redis-server 7.0.15:
//! CLIENT TRACKING's options and errors, CLIENT CACHING, GETREDIR and
//! TRACKINGINFO, and the invalidation messages themselves (RESP3 pushes,
//! RESP2 redirection to `__redis__:invalidate`, BCAST with prefixes,
//! OPTIN/OPTOUT, NOLOOP, flushes), compared byte for byte.
//!
//! Firn sends invalidations from the change stream, a moment after the
//! write; each one is therefore read with the harness's read timeout
//! rather than expected before the next reply. Client ids differ between
//! the servers: REDIRECT gets each server its own id, and replies that
//! show the id are compared with it replaced.

use firn_testkit::{Conn, Diff, R};
use std::time::Duration;

/// The active client's id on each server.
fn ids(d: &mut Diff) -> (String, String) {
    let pair = d.client();
    let id = |r: R| r.as_int().map(|i| i.to_string()).unwrap_or_default();
    (
        id(pair.redis.cmd(&["CLIENT", "ID"])),
        id(pair.firn.cmd(&["CLIENT", "ID"])),
    )
}

/// CLIENT TRACKING ON REDIRECT <each server's id of `target`> <options>.
fn track_redirected(d: &mut Diff, target: (String, String), options: &[&str]) {
    let pair = d.client();
    let mut redis_args = vec!["CLIENT", "TRACKING", "on", "REDIRECT", target.0.as_str()];
    redis_args.extend_from_slice(options);
    let mut firn_args = vec!["CLIENT", "TRACKING", "on", "REDIRECT", target.1.as_str()];
    firn_args.extend_from_slice(options);
    let r = pair.redis.cmd(&redis_args);
    let f = pair.firn.cmd(&firn_args);
    assert_eq!(r, f, "CLIENT TRACKING on REDIRECT");
    assert_eq!(r, R::Simple("OK".into()));
}

/// Replaces an integer equal to the server's own redirect id by 0.
fn without_id(r: &R, id: &str) -> R {
    match r {
        R::Int(n) if n.to_string() == id => R::Int(0),
        R::Map(pairs) => R::Map(
            pairs
                .iter()
                .map(|(k, v)| (k.clone(), without_id(v, id)))
                .collect(),
        ),
        R::Array(Some(items)) => R::Array(Some(items.iter().map(|i| without_id(i, id)).collect())),
        other => other.clone(),
    }
}

/// Reads `n` invalidations of one key each from both servers; the keys
/// must be the same set (Redis sends them in the command's key order,
/// Firn in the order of its storage keys).
fn invalidations_unordered(d: &mut Diff, n: usize) {
    let pair = d.client();
    let read = |conn: &mut Conn| {
        let mut all: Vec<Vec<u8>> = (0..n).map(|_| conn.read_reply().0).collect();
        all.sort();
        all
    };
    let redis = read(&mut pair.redis);
    let firn = read(&mut pair.firn);
    assert_eq!(
        redis
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect::<Vec<_>>(),
        firn.iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect::<Vec<_>>()
    );
}

fn quiet(d: &mut Diff) {
    d.assert_silent_both(Duration::from_millis(300));
}

#[test]
fn tracking_options_and_errors() {
    let mut d = Diff::new();
    for args in [
        &["CLIENT", "TRACKING"][..],
        &["CLIENT", "TRACKING", "maybe"],
        &["CLIENT", "TRACKING", "on", "FOO"],
        &["CLIENT", "TRACKING", "on", "PREFIX", "a"],
        &["CLIENT", "TRACKING", "on", "PREFIX"],
        &["CLIENT", "TRACKING", "on", "REDIRECT"],
        &["CLIENT", "TRACKING", "on", "REDIRECT", "abc"],
        &["CLIENT", "TRACKING", "on", "REDIRECT", "999999"],
        &["CLIENT", "TRACKING", "on", "REDIRECT", "0"],
        &["CLIENT", "TRACKING", "on", "BCAST", "OPTIN"],
        &["CLIENT", "TRACKING", "on", "BCAST", "OPTOUT"],
        &["CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"],
        &[
            "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "ab",
        ],
        &["CLIENT", "TRACKING", "maybe", "BCAST"],
        &["CLIENT", "TRACKING", "off", "FOO"],
        &["CLIENT", "GETREDIR"],
        &["CLIENT", "GETREDIR", "x"],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "CACHING", "yes"],
        &["CLIENT", "CACHING"],
        &["CLIENT", "TRACKING", "off"],
        &["CLIENT", "TRACKING", "on"],
        &["CLIENT", "TRACKING", "on", "BCAST"],
        &["CLIENT", "CACHING", "yes"],
        &["CLIENT", "CACHING", "no"],
        &["CLIENT", "CACHING", "maybe"],
        &["CLIENT", "GETREDIR"],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "TRACKING", "on", "OPTIN", "NOLOOP"],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "CACHING", "no"],
        &["CLIENT", "CACHING", "yes"],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "TRACKING", "on", "OPTOUT"],
        &["CLIENT", "TRACKING", "off"],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "TRACKING", "on", "OPTOUT"],
        &["CLIENT", "CACHING", "no"],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "TRACKING", "off"],
        &[
            "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "obj:",
        ],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "us"],
        &["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:1"],
        &[
            "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "zz", "PREFIX", "a",
        ],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "TRACKING", "on"],
        &["CLIENT", "TRACKING", "off"],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "GETREDIR"],
    ] {
        d.cmd(args);
    }
    d.cmd_type_only(&["HELLO", "3"]);
    d.cmd(&["CLIENT", "TRACKING", "on", "BCAST", "NOLOOP", "PREFIX", "b"]);
    d.cmd(&["CLIENT", "TRACKINGINFO"]);
    d.cmd(&["RESET"]);
    d.cmd(&["CLIENT", "TRACKINGINFO"]);
}

#[test]
fn resp3_default_mode_invalidates_after_other_clients_writes() {
    let mut d = Diff::new();
    let writer = d.open_client();
    d.cmd_type_only(&["HELLO", "3"]);
    d.cmd(&["CLIENT", "TRACKING", "on"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["MGET", "a", "b", "c"]);
    d.cmd(&["HGET", "h", "f"]);
    d.use_client(writer);
    d.cmd(&["SET", "k", "1"]);
    d.use_client(0);
    d.read_both();
    d.use_client(writer);
    // Written again: nobody re-read it, so no message.
    d.cmd(&["SET", "k", "2"]);
    d.cmd(&["HSET", "h", "f", "v"]);
    d.use_client(0);
    d.read_both();
    quiet(&mut d);
    d.use_client(writer);
    d.cmd(&["MSET", "a", "1", "c", "3", "zz", "0"]);
    d.use_client(0);
    invalidations_unordered(&mut d, 2);
    quiet(&mut d);
    d.use_client(writer);
    d.cmd(&["DEL", "b"]);
    d.cmd(&["SET", "b", "x"]);
    d.use_client(0);
    d.read_both();
    quiet(&mut d);
    // The client's own write (no NOLOOP): the reply, then the message.
    d.cmd(&["GET", "own"]);
    d.cmd(&["SET", "own", "1"]);
    d.read_both();
    // A write that changes nothing invalidates nothing.
    d.cmd(&["GET", "k"]);
    d.use_client(writer);
    d.cmd(&["DEL", "missing"]);
    d.use_client(0);
    quiet(&mut d);
    // FLUSHALL: the null invalidation, and the table is emptied.
    d.use_client(writer);
    d.cmd(&["FLUSHALL"]);
    d.use_client(0);
    d.read_both();
    d.use_client(writer);
    d.cmd(&["SET", "k", "again"]);
    d.use_client(0);
    quiet(&mut d);
    d.cmd(&["GET", "k"]);
    d.use_client(writer);
    d.cmd(&["FLUSHDB"]);
    d.use_client(0);
    d.read_both();
    // SWAPDB sends nothing in Redis 7.0.
    d.cmd(&["GET", "k"]);
    d.use_client(writer);
    d.cmd(&["SWAPDB", "0", "1"]);
    d.use_client(0);
    quiet(&mut d);
    // Flushing empty databases still sends the null invalidation.
    d.use_client(writer);
    d.cmd(&["FLUSHALL"]);
    d.use_client(0);
    d.read_both();
    d.use_client(writer);
    d.cmd(&["FLUSHALL"]);
    d.cmd(&["SELECT", "5"]);
    d.cmd(&["FLUSHDB"]);
    d.use_client(0);
    d.read_both();
    d.read_both();
    quiet(&mut d);
}

#[test]
fn noloop_skips_the_clients_own_writes() {
    let mut d = Diff::new();
    let writer = d.open_client();
    d.cmd_type_only(&["HELLO", "3"]);
    d.cmd(&["CLIENT", "TRACKING", "on", "NOLOOP"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SET", "k", "mine"]);
    quiet(&mut d);
    // Its own write removed k from the table: another write sends nothing.
    d.use_client(writer);
    d.cmd(&["SET", "k", "theirs"]);
    d.use_client(0);
    quiet(&mut d);
    d.cmd(&["GET", "k"]);
    d.use_client(writer);
    d.cmd(&["SET", "k", "theirs again"]);
    d.use_client(0);
    d.read_both();
}

/// Redis's unit/tracking "Invalid keys should not be tracked for scripts
/// in NOLOOP mode": a script's write is its caller's, which NOLOOP skips.
#[test]
fn noloop_skips_the_clients_own_script_writes() {
    let mut d = Diff::new();
    d.cmd_type_only(&["HELLO", "3"]);
    d.cmd(&["CLIENT", "TRACKING", "on", "NOLOOP"]);
    d.cmd(&["SET", "key1", "1"]);
    d.cmd(&["GET", "key1"]);
    d.cmd(&["EVAL", "return redis.call('set', 'key1', '2')", "1", "key1"]);
    quiet(&mut d);
    d.cmd(&["GET", "key1"]);
}

/// Redis's unit/tracking "Tracking gets notification on tracking table key
/// eviction": lowering `tracking-table-max-keys` evicts the keys past it,
/// and their clients are told (it hung the suite when only a new key did).
#[test]
fn lowering_the_table_limit_evicts_and_invalidates() {
    let mut d = Diff::new();
    let target = ids(&mut d);
    d.cmd(&["SUBSCRIBE", "__redis__:invalidate"]);
    let tracker = d.open_client();
    d.use_client(tracker);
    track_redirected(&mut d, target, &["NOLOOP"]);
    d.cmd(&["MSET", "key1{t}", "1", "key2{t}", "2"]);
    d.cmd(&["MGET", "key1{t}", "key2{t}"]);
    d.cmd(&["CONFIG", "SET", "tracking-table-max-keys", "1"]);
    d.use_client(0);
    // Which of the two goes is each server's choice (Redis: random).
    let pair = d.client();
    for conn in [&mut pair.redis, &mut pair.firn] {
        let raw = String::from_utf8_lossy(&conn.read_reply().0).into_owned();
        assert!(raw.contains("__redis__:invalidate"), "{raw}");
        assert!(raw.contains("key1{t}") != raw.contains("key2{t}"), "{raw}");
    }
    quiet(&mut d);
    d.use_client(tracker);
    d.cmd(&["CONFIG", "SET", "tracking-table-max-keys", "1000000"]);
}

#[test]
fn optin_and_optout() {
    let mut d = Diff::new();
    let writer = d.open_client();
    d.cmd_type_only(&["HELLO", "3"]);
    d.cmd(&["CLIENT", "TRACKING", "on", "OPTIN"]);
    d.cmd(&["GET", "not-cached"]);
    d.cmd(&["CLIENT", "CACHING", "yes"]);
    d.cmd(&["GET", "cached"]);
    d.cmd(&["GET", "not-cached-either"]);
    d.use_client(writer);
    d.cmd(&["MSET", "not-cached", "1", "not-cached-either", "1"]);
    d.cmd(&["SET", "cached", "1"]);
    d.use_client(0);
    d.read_both();
    quiet(&mut d);
    d.cmd(&["CLIENT", "TRACKING", "off"]);
    d.cmd(&["CLIENT", "TRACKING", "on", "OPTOUT"]);
    d.cmd(&["CLIENT", "CACHING", "no"]);
    d.cmd(&["GET", "skipped"]);
    d.cmd(&["GET", "kept"]);
    d.use_client(writer);
    d.cmd(&["SET", "skipped", "1"]);
    d.cmd(&["SET", "kept", "1"]);
    d.use_client(0);
    d.read_both();
    quiet(&mut d);
}

#[test]
fn bcast_with_prefixes() {
    let mut d = Diff::new();
    let writer = d.open_client();
    d.cmd_type_only(&["HELLO", "3"]);
    d.cmd(&[
        "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "obj:",
    ]);
    d.use_client(writer);
    // No read needed in BCAST mode; one message per prefix, keys sorted.
    d.cmd(&[
        "MSET", "user:2", "b", "user:1", "a", "other", "c", "obj:9", "z",
    ]);
    d.use_client(0);
    d.read_both();
    d.read_both();
    quiet(&mut d);
    d.use_client(writer);
    d.cmd(&["DEL", "user:1", "user:2"]);
    d.use_client(0);
    d.read_both();
    // Its own writes, without NOLOOP, are broadcast to it too.
    d.cmd(&["SET", "obj:1", "x"]);
    d.read_both();
    d.cmd(&["CLIENT", "TRACKING", "off"]);
    d.cmd(&["CLIENT", "TRACKING", "on", "BCAST"]);
    d.use_client(writer);
    d.cmd(&["SET", "anything", "1"]);
    d.use_client(0);
    d.read_both();
    d.use_client(writer);
    d.cmd(&["FLUSHALL"]);
    d.use_client(0);
    d.read_both();
}

#[test]
fn resp2_redirection_to_redis_invalidate() {
    let mut d = Diff::new();
    let receiver = d.open_client();
    let writer = d.open_client();
    d.use_client(receiver);
    let receiver_ids = ids(&mut d);
    d.send(&["SUBSCRIBE", "__redis__:invalidate"]);
    d.read_both();
    d.use_client(0);
    track_redirected(&mut d, receiver_ids.clone(), &[]);
    let (redis_id, firn_id) = receiver_ids.clone();
    let pair = d.client();
    let r = pair.redis.cmd(&["CLIENT", "GETREDIR"]);
    let f = pair.firn.cmd(&["CLIENT", "GETREDIR"]);
    assert_eq!(without_id(&r, &redis_id), without_id(&f, &firn_id));
    let r = pair.redis.cmd(&["CLIENT", "TRACKINGINFO"]);
    let f = pair.firn.cmd(&["CLIENT", "TRACKINGINFO"]);
    assert_eq!(without_id(&r, &redis_id), without_id(&f, &firn_id));
    d.cmd(&["GET", "k"]);
    d.cmd(&["GET", "k2"]);
    d.use_client(writer);
    d.cmd(&["SET", "k", "v"]);
    d.use_client(receiver);
    d.read_both();
    d.use_client(writer);
    d.cmd(&["FLUSHALL"]);
    d.use_client(receiver);
    d.read_both();
    // A RESP2 client without redirection gets nothing.
    d.use_client(writer);
    d.cmd(&["CLIENT", "TRACKING", "on"]);
    d.cmd(&["GET", "w"]);
    d.use_client(0);
    d.cmd(&["SET", "w", "1"]);
    d.use_client(writer);
    quiet(&mut d);
    d.cmd(&["PING"]);
    // Redirecting to a client that is not subscribed: nothing either.
    d.use_client(0);
    d.cmd(&["CLIENT", "TRACKING", "off"]);
    let writer_ids = {
        d.use_client(writer);
        ids(&mut d)
    };
    d.use_client(0);
    track_redirected(&mut d, writer_ids, &[]);
    d.cmd(&["GET", "x"]);
    d.cmd(&["SET", "x", "1"]);
    d.use_client(writer);
    quiet(&mut d);
}
