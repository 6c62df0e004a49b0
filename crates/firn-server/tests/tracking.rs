//! Client-side caching on a real firn: invalidations after other clients'
//! writes (RESP3 default mode, BCAST, RESP2 redirection), including writes
//! to a key whose value was cold on disk after a restart, expiry, the
//! `tracking-table-max-keys` bound, broken redirections and cleanup on
//! disconnection. Every wait polls with a deadline.

use firn_testkit::{info, Conn, Server, R};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(20);

fn poll_until(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn resp3(server: &Server) -> Conn {
    let mut conn = server.conn();
    assert!(matches!(conn.cmd(&["HELLO", "3"]), R::Map(_)));
    conn
}

fn ok(reply: R) {
    assert_eq!(reply, R::Simple("OK".into()), "{}", reply.render());
}

/// Turns tracking on for `reader`, redirected to client `target_id`.
fn track_into(reader: &mut Conn, target_id: i64) {
    ok(reader.cmd(&[
        "CLIENT",
        "TRACKING",
        "on",
        "REDIRECT",
        &target_id.to_string(),
    ]));
}

/// The next message: an `invalidate` push, its keys (None = flush).
fn invalidation(conn: &mut Conn) -> Option<Vec<String>> {
    let (raw, reply) = conn.read_reply();
    let R::Push(items) = reply else {
        panic!("expected a push, got {}", String::from_utf8_lossy(&raw));
    };
    assert_eq!(items[0], R::bulk(b"invalidate"));
    match &items[1] {
        R::Null => None,
        keys => Some(keys.items().iter().filter_map(R::as_str).collect()),
    }
}

#[test]
fn invalidation_after_another_clients_write() {
    let server = Server::firn();
    let mut reader = resp3(&server);
    let mut writer = server.conn();
    ok(reader.cmd(&["CLIENT", "TRACKING", "on"]));
    for i in 0..100 {
        reader.cmd(&["GET", &format!("key:{i}")]);
    }
    assert_eq!(
        info::field(&mut writer, "stats", "tracking_total_keys"),
        100
    );
    assert_eq!(info::field(&mut writer, "clients", "tracking_clients"), 1);
    for i in (0..100).rev() {
        ok(writer.cmd(&["SET", &format!("key:{i}"), "v"]));
    }
    for i in (0..100).rev() {
        assert_eq!(invalidation(&mut reader), Some(vec![format!("key:{i}")]));
    }
    poll_until("the table to empty", || {
        info::field(&mut writer, "stats", "tracking_total_keys") == 0
    });
}

#[test]
fn write_to_a_key_that_was_cold_on_disk() {
    let mut server = Server::firn_with(&["--maxmemory", "64mb"]);
    {
        let mut c = server.conn();
        ok(c.cmd(&["SET", "cold", "on disk"]));
        c.cmd(&["RPUSH", "cold-list", "a", "b"]);
    }
    // After a restart the values are only in RocksDB's files.
    server.restart();
    let mut reader = resp3(&server);
    let mut writer = server.conn();
    ok(reader.cmd(&["CLIENT", "TRACKING", "on"]));
    assert_eq!(reader.cmd(&["GET", "cold"]), R::bulk(b"on disk"));
    assert_eq!(reader.cmd(&["LINDEX", "cold-list", "0"]), R::bulk(b"a"));
    assert!(
        info::field(&mut writer, "storage", "cold_commands") > 0,
        "the reads did not reach the disk"
    );
    // APPEND reads the cold value before writing it.
    assert_eq!(writer.cmd(&["APPEND", "cold", "!"]).as_int(), Some(8));
    assert_eq!(invalidation(&mut reader), Some(vec!["cold".to_string()]));
    assert_eq!(writer.cmd(&["LPOP", "cold-list"]), R::bulk(b"a"));
    assert_eq!(
        invalidation(&mut reader),
        Some(vec!["cold-list".to_string()])
    );
}

#[test]
fn expiry_invalidates() {
    let server = Server::firn();
    let mut reader = resp3(&server);
    let mut writer = server.conn();
    ok(writer.cmd(&["SET", "short", "lived", "PX", "200"]));
    ok(reader.cmd(&["CLIENT", "TRACKING", "on"]));
    assert_eq!(reader.cmd(&["GET", "short"]), R::bulk(b"lived"));
    // Nobody touches the key: active expiry deletes it.
    assert_eq!(invalidation(&mut reader), Some(vec!["short".to_string()]));
}

#[test]
fn bcast_prefixes_and_noloop() {
    let server = Server::firn();
    let mut reader = resp3(&server);
    let mut writer = server.conn();
    ok(reader.cmd(&[
        "CLIENT", "TRACKING", "on", "BCAST", "NOLOOP", "PREFIX", "a:", "PREFIX", "b:",
    ]));
    assert_eq!(
        info::field(&mut writer, "stats", "tracking_total_prefixes"),
        2
    );
    ok(reader.cmd(&["SET", "a:mine", "1"]));
    ok(writer.cmd(&["MSET", "b:2", "x", "c:1", "y", "b:1", "z"]));
    assert_eq!(
        invalidation(&mut reader),
        Some(vec!["b:1".to_string(), "b:2".to_string()])
    );
    ok(writer.cmd(&["SET", "a:theirs", "1"]));
    assert_eq!(
        invalidation(&mut reader),
        Some(vec!["a:theirs".to_string()])
    );
    // Nothing else came (its own write to a:mine was not sent back).
    assert_eq!(reader.cmd(&["PING"]), R::Simple("PONG".into()));
}

#[test]
fn the_table_is_bounded_by_tracking_table_max_keys() {
    let server = Server::firn();
    let mut admin = server.conn();
    ok(admin.cmd(&["CONFIG", "SET", "tracking-table-max-keys", "10"]));
    let mut reader = resp3(&server);
    ok(reader.cmd(&["CLIENT", "TRACKING", "on"]));
    let mut evicted = Vec::new();
    for i in 0..30 {
        reader.send(&[b"GET", format!("k{i}").as_bytes()]);
        // The reply, possibly preceded by invalidations of evicted keys.
        loop {
            let (_, reply) = reader.read_reply();
            match reply {
                R::Push(items) => evicted.extend(items[1].items().iter().filter_map(R::as_str)),
                _ => break,
            }
        }
    }
    poll_until("the evicted keys' invalidations", || {
        if evicted.len() < 20 {
            if let Some(keys) = invalidation(&mut reader) {
                evicted.extend(keys);
            }
        }
        evicted.len() >= 20
    });
    // The oldest keys went first.
    let expected: Vec<String> = (0..20).map(|i| format!("k{i}")).collect();
    assert_eq!(evicted, expected);
    assert_eq!(info::field(&mut admin, "stats", "tracking_total_keys"), 10);
    // The keys still tracked are invalidated by writes as usual.
    ok(admin.cmd(&["SET", "k29", "v"]));
    assert_eq!(invalidation(&mut reader), Some(vec!["k29".to_string()]));
}

#[test]
fn redirection_broken_and_disconnection() {
    let server = Server::firn();
    let mut target = server.conn();
    let target_id = target.cmd(&["CLIENT", "ID"]).as_int().unwrap_or(0);
    let mut reader = resp3(&server);
    let mut writer = server.conn();
    track_into(&mut reader, target_id);
    reader.cmd(&["GET", "k"]);
    target.shutdown();
    poll_until("the target to disconnect", || {
        let list = writer.cmd(&["CLIENT", "LIST"]).as_str().unwrap_or_default();
        !list.contains(&format!("id={target_id} "))
    });
    ok(writer.cmd(&["SET", "k", "v"]));
    // A RESP3 client hears that its redirection is broken.
    let (_, notice) = reader.read_reply();
    assert_eq!(
        notice,
        R::Push(vec![R::bulk(b"tracking-redir-broken"), R::Int(target_id)])
    );
    let info = reader.cmd(&["CLIENT", "TRACKINGINFO"]);
    assert!(
        info.render().contains("broken_redirect"),
        "{}",
        info.render()
    );
    let listed = writer.cmd(&["CLIENT", "LIST"]).as_str().unwrap_or_default();
    assert!(listed.contains(" flags=tR "), "{listed}");
    assert_eq!(info::field(&mut writer, "clients", "tracking_clients"), 1);
    reader.shutdown();
    poll_until("tracking clients to reach 0", || {
        info::field(&mut writer, "clients", "tracking_clients") == 0
    });
}

/// A redirection target that QUIT is gone by the time its OK is read: a
/// write right after it tells the tracking client its redirection broke.
/// (Redis's "RESP3 based basic tracking-redir-broken with client reply
/// off" hung twice in ten suite runs at this step. The target used to
/// leave the client table only after its OK was written, a race such a
/// write could win; this test did not catch it in 50 rounds on an idle
/// machine, and guards the order since the target leaves first.)
#[test]
fn a_target_that_quit_is_gone_before_its_ok_arrives() {
    let server = Server::firn();
    let mut writer = server.conn();
    for round in 0..50 {
        let key = format!("q{round}");
        let mut target = server.conn();
        let target_id = target.cmd(&["CLIENT", "ID"]).as_int().unwrap_or(0);
        let mut reader = resp3(&server);
        track_into(&mut reader, target_id);
        reader.cmd(&["GET", &key]);
        ok(target.cmd(&["QUIT"]));
        ok(writer.cmd(&["SET", &key, "v"]));
        let (_, notice) = reader.read_reply();
        assert_eq!(
            notice,
            R::Push(vec![R::bulk(b"tracking-redir-broken"), R::Int(target_id)]),
            "round {round}"
        );
    }
}

#[test]
fn a_script_that_reads_tracks_its_declared_keys_for_its_caller() {
    let server = Server::firn();
    let mut reader = resp3(&server);
    let mut writer = server.conn();
    ok(reader.cmd(&["CLIENT", "TRACKING", "on"]));
    // As Redis 7.0 does: the declared keys of a script that ran a read,
    // not the undeclared key it read, nor those of a script that only wrote.
    reader.cmd(&[
        "EVAL",
        "return redis.call('SET', KEYS[1], 'x')",
        "1",
        "written",
    ]);
    reader.cmd(&[
        "EVAL",
        "return redis.call('GET', 'undeclared')",
        "1",
        "declared",
    ]);
    assert_eq!(info::field(&mut writer, "stats", "tracking_total_keys"), 1);
    ok(writer.cmd(&["SET", "undeclared", "v"]));
    ok(writer.cmd(&["SET", "written", "v"]));
    ok(writer.cmd(&["SET", "declared", "v"]));
    assert_eq!(
        invalidation(&mut reader),
        Some(vec!["declared".to_string()])
    );
}
