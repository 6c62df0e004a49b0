//! Differential tests of database-wide commands inside units of several
//! commands, against redis-server 7.0.15: FLUSHALL, FLUSHDB, SWAPDB,
//! SELECT, MOVE and COPY ... DB inside MULTI/EXEC and inside EVAL, followed
//! by reads and writes in the same unit; DBSIZE within them; reads that
//! must run at their place in the unit (GETRANGE over 1 MiB, KEYS, SCAN,
//! HGETALL of a big hash); and side effects (PUBLISH) that must happen
//! once per unit that takes effect, however often it runs. Each case was
//! a wrong answer or a corrupted value before (see docs/architecture.md,
//! "A transaction sees its own database-wide commands").

use firn_testkit::{encode_request, info, Conn, Diff, Server, R};
use std::time::Duration;

fn script(d: &mut Diff, body: &str, keys: &[&str]) -> R {
    let mut args = vec!["EVAL".to_string(), body.to_string(), keys.len().to_string()];
    args.extend(keys.iter().map(|k| k.to_string()));
    d.cmd(&args)
}

#[test]
fn commands_after_a_flush_in_the_same_transaction_see_it() {
    let mut d = Diff::new();
    d.cmd(&["SET", "c", "10"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["FLUSHALL"]);
    d.cmd(&["INCR", "c"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["GET", "c"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["FLUSHDB"]);
    d.cmd(&["EXISTS", "c"]);
    d.cmd(&["DBSIZE"]);
    // A list extended after the flush starts afresh (it was left with the
    // old head and tail, and later reads failed as corrupt).
    d.cmd(&["RPUSH", "l", "a", "b", "c"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["FLUSHALL"]);
    d.cmd(&["RPUSH", "l", "d"]);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["LPOP", "l"]);
    d.cmd(&["LPOP", "l"]);
    d.cmd(&["RPUSH", "l", "e", "f"]);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    // SET NX after FLUSHDB finds nothing.
    d.cmd(&["SET", "k", "old"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["FLUSHDB"]);
    d.cmd(&["SET", "k", "new", "NX"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["GET", "k"]);
    // Writes before the flush are gone, writes after it stay; a hash and
    // a set re-created after it have only their new members.
    d.cmd(&["HSET", "h", "old", "1"]);
    d.cmd(&["SADD", "s", "old"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "before", "1"]);
    d.cmd(&["FLUSHALL"]);
    d.cmd(&["SET", "after", "1"]);
    d.cmd(&["HSET", "h", "new", "2"]);
    d.cmd(&["SADD", "s", "new"]);
    d.cmd(&["EXEC"]);
    d.cmd_unordered(&["KEYS", "*"]);
    d.cmd(&["HGETALL", "h"]);
    d.cmd(&["SMEMBERS", "s"]);
    d.cmd(&["DBSIZE"]);
}

#[test]
fn flushdb_of_another_database_inside_a_transaction() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "0"]);
    d.cmd(&["SELECT", "3"]);
    d.cmd(&["SET", "a", "3"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["FLUSHDB"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["INCR", "a"]);
    d.cmd(&["SELECT", "3"]);
    d.cmd(&["INCR", "a"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["GET", "a"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["GET", "a"]);
    d.cmd(&["DBSIZE"]);
}

#[test]
fn commands_after_swapdb_in_the_same_transaction_see_the_new_mapping() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "zero"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["SET", "k", "one"]);
    d.cmd(&["SET", "only1", "x"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["SWAPDB", "0", "1"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["GET", "k"]);
    // Two swaps of the same pair are no swap.
    d.cmd(&["MULTI"]);
    d.cmd(&["SWAPDB", "0", "1"]);
    d.cmd(&["SWAPDB", "1", "0"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["GET", "k"]);
    // A swap then a flush flushes what the swap put in place.
    d.cmd(&["MULTI"]);
    d.cmd(&["SWAPDB", "0", "1"]);
    d.cmd(&["FLUSHDB"]);
    d.cmd(&["SET", "fresh", "1"]);
    d.cmd(&["EXEC"]);
    d.cmd_unordered(&["KEYS", "*"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd_unordered(&["KEYS", "*"]);
    d.cmd(&["GET", "k"]);
    // Swaps chained through three databases, then writes in each.
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["SET", "k", "zero-again"]);
    d.cmd(&["SELECT", "2"]);
    d.cmd(&["SET", "k", "two"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["SWAPDB", "0", "1"]);
    d.cmd(&["SWAPDB", "1", "2"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["APPEND", "k", "+"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["EXEC"]);
    for db in ["0", "1", "2"] {
        d.cmd(&["SELECT", db]);
        d.cmd(&["GET", "k"]);
        d.cmd(&["DBSIZE"]);
    }
}

#[test]
fn move_and_copy_between_databases_inside_a_transaction() {
    let mut d = Diff::new();
    d.cmd(&["SET", "x", "1"]);
    d.cmd(&["RPUSH", "list", "a", "b"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["MOVE", "x", "1"]);
    d.cmd(&["EXISTS", "x"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["GET", "x"]);
    d.cmd(&["COPY", "x", "y", "DB", "2"]);
    d.cmd(&["SELECT", "2"]);
    d.cmd(&["GET", "y"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["COPY", "list", "list2", "DB", "1"]);
    d.cmd(&["SWAPDB", "0", "1"]);
    d.cmd(&["LRANGE", "list2", "0", "-1"]);
    d.cmd(&["EXEC"]);
    for db in ["0", "1", "2"] {
        d.cmd(&["SELECT", db]);
        d.cmd_unordered(&["KEYS", "*"]);
        d.cmd(&["DBSIZE"]);
    }
}

#[test]
fn scripts_see_their_own_flushes_and_swaps() {
    let mut d = Diff::new();
    d.cmd(&["SET", "c", "10"]);
    script(
        &mut d,
        "redis.call('flushall'); return redis.call('incr', KEYS[1])",
        &["c"],
    );
    d.cmd(&["GET", "c"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["RPUSH", "l", "a", "b"]);
    script(
        &mut d,
        "redis.call('flushdb'); redis.call('rpush', KEYS[1], 'z'); return redis.call('lrange', KEYS[1], 0, -1)",
        &["l"],
    );
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["SET", "k", "one"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["SET", "k", "zero"]);
    script(
        &mut d,
        "redis.call('swapdb', 0, 1); local a = redis.call('get', KEYS[1]); redis.call('swapdb', 0, 1); return {a, redis.call('get', KEYS[1]), redis.call('dbsize')}",
        &["k"],
    );
    d.cmd(&["GET", "k"]);
    script(
        &mut d,
        "redis.call('swapdb', 0, 1); redis.call('flushdb'); return redis.call('dbsize')",
        &[],
    );
    d.cmd(&["GET", "k"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["GET", "k"]);
}

#[test]
fn dbsize_counts_a_pipeline_and_a_transaction_at_their_place() {
    let mut d = Diff::new();
    // Pipelined: the DBSIZE right behind the writes counts them although
    // they are not durable yet.
    let pipeline: Vec<&[&str]> = vec![
        &["SET", "a", "1"],
        &["SET", "b", "1"],
        &["DBSIZE"],
        &["DEL", "a"],
        &["DBSIZE"],
    ];
    let mut request = Vec::new();
    for args in &pipeline {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        request.extend(encode_request(&args));
    }
    let pair = d.client();
    pair.redis.send_raw(&request);
    pair.firn.send_raw(&request);
    for args in &pipeline {
        let (r, _) = pair.redis.read_reply();
        let (f, _) = pair.firn.read_reply();
        assert_eq!(
            String::from_utf8_lossy(&r),
            String::from_utf8_lossy(&f),
            "{args:?}"
        );
    }
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "c", "1"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["DEL", "b", "c"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["EXEC"]);
}

#[test]
fn long_reads_in_a_unit_run_at_their_place() {
    let mut d = Diff::new();
    let big = "v".repeat(2 << 20);
    d.cmd(&["SET", "big", &big]);
    // In EXEC, GETRANGE over 1 MiB reads before the SET queued after it.
    d.cmd(&["MULTI"]);
    d.cmd(&["STRLEN", "big"]);
    d.cmd(&["GETRANGE", "big", "0", "-1"]);
    d.cmd(&["SET", "big", "small"]);
    d.cmd(&["GETRANGE", "big", "0", "-1"]);
    d.cmd(&["EXEC"]);
    // In a script, reads see the script's own earlier writes.
    script(
        &mut d,
        "redis.call('set', KEYS[1], string.rep('x', 2097152)); return #redis.call('getrange', KEYS[1], 0, -1)",
        &["big"],
    );
    script(
        &mut d,
        "redis.call('set', 'fresh-key', '1'); local k = redis.call('keys', 'fresh-*'); redis.call('del', 'fresh-key'); return {k, redis.call('keys', 'fresh-*')}",
        &[],
    );
    // SCAN with a large COUNT inside MULTI sees the transaction's writes.
    d.cmd(&["FLUSHALL"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "s1", "1"]);
    d.cmd(&["SET", "s2", "1"]);
    d.cmd(&["SCAN", "0", "COUNT", "1000", "MATCH", "s*"]);
    // SCAN's order is the server's own.
    d.cmd_with(&["EXEC"], R::sorted_deep);
    // HGETALL of a hash over the streaming threshold, then a write to it,
    // in one transaction: the reply is the hash before the write.
    let mut hset = vec!["HSET".to_string(), "h".to_string()];
    for i in 0..10_500 {
        hset.push(format!("f{i}"));
        hset.push(i.to_string());
    }
    d.cmd(&hset);
    d.cmd(&["MULTI"]);
    d.cmd(&["HLEN", "h"]);
    d.cmd(&["HGETALL", "h"]);
    d.cmd(&["HSET", "h", "added", "1"]);
    // Redis's hashtable has an order of its own: the pairs are compared
    // as a set.
    d.cmd_with(&["EXEC"], |r| match r {
        R::Array(Some(items)) => R::Array(Some(
            items
                .iter()
                .enumerate()
                .map(|(i, x)| if i == 1 { x.pairs_sorted() } else { x.clone() })
                .collect(),
        )),
        other => other.clone(),
    });
    d.cmd(&["HLEN", "h"]);
}

/// Reads every message a subscriber got within `wait` of silence.
fn drain(conn: &mut Conn, wait: Duration) -> Vec<R> {
    let mut got = Vec::new();
    while !conn.silent_for(wait) {
        got.push(conn.read_reply().1);
    }
    got
}

/// PUBLISH inside a transaction or a script is delivered once per unit
/// that takes effect: with every read forced cold the unit runs more than
/// once, and a WATCH that fails makes it take no effect at all.
fn publish_once_per_unit(firn: Server) {
    let mut d = Diff::with_servers(Server::redis(), firn);
    let subscriber = d.open_client();
    d.use_client(subscriber);
    d.cmd(&["SUBSCRIBE", "ch"]);
    d.use_client(0);
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["PUBLISH", "ch", "m1"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["INCR", "n"]);
    d.cmd(&["EXEC"]);
    script(
        &mut d,
        "redis.call('get', KEYS[1]); redis.call('publish', 'ch', 'm2'); return redis.call('get', KEYS[1])",
        &["k"],
    );
    // A transaction whose WATCH fails publishes nothing.
    d.cmd(&["WATCH", "k"]);
    let other = d.open_client();
    d.use_client(other);
    d.cmd(&["SET", "k", "changed"]);
    d.use_client(0);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["PUBLISH", "ch", "never"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["PUBLISH", "ch", "m3"]);
    let wait = Duration::from_millis(300);
    let redis_got = drain(&mut d.client_at(subscriber).redis, wait);
    let firn_got = drain(&mut d.client_at(subscriber).firn, wait);
    let render = |v: &[R]| v.iter().map(R::render).collect::<Vec<_>>();
    assert_eq!(render(&redis_got), render(&firn_got));
    assert_eq!(redis_got.len(), 3);
}

#[test]
fn publish_happens_once_per_unit_that_takes_effect() {
    publish_once_per_unit(Server::firn());
}

#[test]
fn publish_happens_once_per_unit_with_every_read_cold() {
    publish_once_per_unit(Server::firn_with(&["--debug-cold-reads", "yes"]));
}

/// FLUSHALL leaves the expire-index entries of the keys it drops (the
/// index is ordered by time): a key re-created after it must outlive
/// them, with or without an expiry of its own.
#[test]
fn a_key_recreated_after_a_flush_outlives_its_old_expiry() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "old", "PX", "200"]);
    d.cmd(&["SET", "j", "old", "PX", "200"]);
    d.cmd(&["FLUSHALL"]);
    d.cmd(&["SET", "k", "new"]);
    d.cmd(&["SET", "j", "new", "PX", "100000"]);
    std::thread::sleep(Duration::from_millis(700));
    d.cmd(&["GET", "k"]);
    d.cmd(&["GET", "j"]);
    d.cmd(&["TTL", "k"]);
    d.ttl("j");
    d.cmd(&["DBSIZE"]);
}

/// With every read forced cold, EXEC's list and a script run more than
/// once: MONITOR lines, commandstats and keyspace hits still count each
/// command once, as Redis does.
#[test]
fn monitor_and_stats_count_each_command_once() {
    let mut d = Diff::with_servers(
        Server::redis(),
        Server::firn_with(&["--debug-cold-reads", "yes"]),
    );
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["CONFIG", "RESETSTAT"]);
    let monitor = d.open_client();
    d.use_client(monitor);
    d.cmd(&["MONITOR"]);
    d.use_client(0);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["GET", "missing"]);
    d.cmd(&["INCR", "n"]);
    d.cmd(&["EXEC"]);
    script(
        &mut d,
        "redis.call('get', KEYS[1]); return redis.call('incr', 'n')",
        &["k"],
    );
    d.cmd_with(&["INFO", "commandstats"], info::calls_only);
    d.cmd_with(&["INFO", "stats"], info::lookups_only);
    // The MONITOR lines, without their timestamps and client addresses.
    let wait = Duration::from_millis(300);
    let lines = |got: Vec<R>| -> Vec<String> {
        got.iter()
            .filter_map(R::as_str)
            .map(|l| {
                let rest = l.split_once(" [").map_or(l.as_str(), |(_, r)| r);
                let (origin, command) = rest.split_once("] ").unwrap_or(("", rest));
                let db = origin.split(' ').next().unwrap_or_default();
                let lua = origin.ends_with("lua");
                format!("{db} {} {command}", if lua { "lua" } else { "client" })
            })
            .collect()
    };
    let redis_lines = lines(drain(&mut d.client_at(monitor).redis, wait));
    let firn_lines = lines(drain(&mut d.client_at(monitor).firn, wait));
    assert_eq!(redis_lines, firn_lines);
}
