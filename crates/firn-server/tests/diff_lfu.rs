//! OBJECT FREQ and the LFU policies against redis-server 7.0.15: the
//! errors of OBJECT FREQ and OBJECT IDLETIME under each kind of policy,
//! the counter after a number of accesses (every access counts with
//! `lfu-log-factor 0`; the first ones do at the default factor), which
//! commands count, and switching policies with CONFIG SET. Then Debian's
//! `redis-cli --hotkeys` against Firn.

use firn_testkit::{Diff, Server, R};
use std::process::Command;

fn lfu() -> Diff {
    let flags = ["--maxmemory-policy", "allkeys-lfu"];
    Diff::with_servers(Server::redis_with(&flags), Server::firn_with(&flags))
}

#[test]
fn errors_follow_the_policy() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["OBJECT", "FREQ", "k"]);
    d.cmd(&["OBJECT", "FREQ", "missing"]);
    d.cmd(&["OBJECT", "FREQ"]);
    d.cmd(&["OBJECT", "FREQ", "k", "extra"]);
    d.cmd(&["OBJECT", "IDLETIME", "k"]);
    for policy in ["volatile-lfu", "allkeys-lfu", "ALLKEYS-LFU"] {
        d.cmd(&["CONFIG", "SET", "maxmemory-policy", policy]);
        d.cmd(&["CONFIG", "GET", "maxmemory-policy"]);
        d.cmd(&["OBJECT", "IDLETIME", "k"]);
        d.cmd(&["OBJECT", "IDLETIME", "missing"]);
        d.cmd(&["OBJECT", "FREQ", "missing"]);
    }
    d.cmd(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]);
    d.cmd(&["OBJECT", "FREQ", "k"]);
    d.cmd(&["OBJECT", "IDLETIME", "k"]);
    d.cmd(&["CONFIG", "SET", "lfu-log-factor", "-1"]);
    d.cmd(&["CONFIG", "SET", "lfu-decay-time", "x"]);
}

#[test]
fn every_access_counts_at_factor_zero() {
    let mut d = lfu();
    d.cmd(&["CONFIG", "SET", "lfu-log-factor", "0"]);
    d.cmd(&["CONFIG", "GET", "lfu-log-factor"]);
    // A new key starts at LFU_INIT_VAL (5): its creation does not count.
    d.cmd(&["SET", "s", "value"]);
    assert_eq!(d.cmd(&["OBJECT", "FREQ", "s"]), R::Int(5));
    for _ in 0..20 {
        d.cmd(&["GET", "s"]);
    }
    assert_eq!(d.cmd(&["OBJECT", "FREQ", "s"]), R::Int(25));
    // Reads and writes count; OBJECT, TYPE, TTL, EXISTS do not; TOUCH does.
    d.cmd(&["APPEND", "s", "more"]);
    d.cmd(&["SET", "s", "other"]);
    d.cmd(&["TYPE", "s"]);
    d.cmd(&["TTL", "s"]);
    d.cmd(&["EXISTS", "s"]);
    d.cmd(&["OBJECT", "ENCODING", "s"]);
    d.cmd(&["TOUCH", "s", "missing"]);
    assert_eq!(d.cmd(&["OBJECT", "FREQ", "s"]), R::Int(28));
    d.cmd(&["RPUSH", "list", "a", "b"]);
    d.cmd(&["LRANGE", "list", "0", "-1"]);
    d.cmd(&["LPUSH", "list", "c"]);
    d.cmd(&["OBJECT", "FREQ", "list"]);
    d.cmd(&["HSET", "hash", "f", "v"]);
    d.cmd(&["HGET", "hash", "f"]);
    d.cmd(&["OBJECT", "FREQ", "hash"]);
    // A key deleted and written again starts over.
    d.cmd(&["DEL", "s"]);
    d.cmd(&["SET", "s", "again"]);
    d.cmd(&["OBJECT", "FREQ", "s"]);
    // The counter saturates at 255.
    d.cmd(&["SET", "many", "v"]);
    let gets: Vec<Vec<Vec<u8>>> = (0..300)
        .map(|_| vec![b"GET".to_vec(), b"many".to_vec()])
        .collect();
    d.pipeline(&gets);
    assert_eq!(d.cmd(&["OBJECT", "FREQ", "many"]), R::Int(255));
}

#[test]
fn the_default_factor_counts_the_first_accesses() {
    let mut d = lfu();
    d.cmd(&["SET", "k", "value"]);
    // From 5, the next access always counts (probability 1).
    d.cmd(&["GET", "k"]);
    assert_eq!(d.cmd(&["OBJECT", "FREQ", "k"]), R::Int(6));
    // Then logarithmically: about 10 after 100 accesses (redis.conf's
    // table), give or take what chance gives.
    let gets: Vec<Vec<Vec<u8>>> = (0..100)
        .map(|_| vec![b"GET".to_vec(), b"k".to_vec()])
        .collect();
    d.pipeline(&gets);
    d.cmd_with(&["OBJECT", "FREQ", "k"], |r| match r {
        R::Int(n) if (7..=13).contains(n) => R::Simple("7..13".into()),
        other => other.clone(),
    });
}

#[test]
fn client_no_touch_leaves_counters_alone() {
    // CLIENT NO-TOUCH is Redis 7.2's: against Firn alone.
    let server = Server::firn_with(&["--maxmemory-policy", "allkeys-lfu", "--lfu-log-factor", "0"]);
    let mut c = server.conn();
    c.cmd(&["SET", "k", "v"]);
    assert_eq!(c.cmd(&["CLIENT", "NO-TOUCH", "ON"]), R::Simple("OK".into()));
    c.cmd(&["GET", "k"]);
    c.cmd(&["SET", "k", "w"]);
    assert_eq!(c.cmd(&["OBJECT", "FREQ", "k"]), R::Int(5));
    // TOUCH still counts.
    c.cmd(&["TOUCH", "k"]);
    assert_eq!(c.cmd(&["OBJECT", "FREQ", "k"]), R::Int(6));
    c.cmd(&["CLIENT", "NO-TOUCH", "OFF"]);
    c.cmd(&["GET", "k"]);
    assert_eq!(c.cmd(&["OBJECT", "FREQ", "k"]), R::Int(7));
}

#[test]
fn redis_cli_hotkeys_lists_the_hottest_key_first() {
    let server = Server::firn_with(&["--maxmemory-policy", "allkeys-lfu"]);
    let mut c = server.conn();
    for i in 0..50 {
        c.cmd(&["SET", &format!("key:{i}"), "value"]);
    }
    for _ in 0..2000 {
        c.send(&[b"GET", b"key:7"]);
    }
    for _ in 0..2000 {
        c.read_reply();
    }
    for _ in 0..200 {
        c.cmd(&["GET", "key:31"]);
    }
    let out = Command::new("redis-cli")
        .args(["-p", &server.port().to_string(), "--hotkeys"])
        .output()
        .expect("redis-cli runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let found: Vec<&str> = text
        .lines()
        .filter_map(|line| line.split("keyname: ").nth(1))
        .collect();
    assert!(text.contains("Sampled 50 keys"), "{text}");
    assert_eq!(found.first(), Some(&"\"key:7\""), "{text}");
    assert_eq!(found.get(1), Some(&"\"key:31\""), "{text}");
}
