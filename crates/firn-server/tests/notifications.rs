//! Keyspace notifications that a differential test cannot pin down:
//! `expired` from active expiry for a key nobody touches (and how soon
//! after its deadline), events of commands that take the cold path (each
//! published once, never by a discarded pool run), events of a long
//! pipeline in order, and silence when notifications are off.

use firn_testkit::keyspace_events::{Message, Subscriber, MARKER};
use firn_testkit::{encode_request, Conn, Server, R};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn ok(reply: R) {
    assert_eq!(reply, R::Simple("OK".into()), "expected OK");
}

fn event(channel: &str, message: &str) -> Message {
    (channel.to_string(), message.to_string())
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[test]
fn expired_comes_from_active_expiry_for_an_untouched_key() {
    let server = Server::firn();
    let mut c = server.conn();
    ok(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEx"]));
    let mut sub = Subscriber::new(&server);
    let mut lateness = Vec::new();
    for round in 0..3 {
        let key = format!("untouched{round}");
        let deadline_ms = unix_ms() + 300;
        ok(c.cmd(&["SET", &key, "v", "PXAT", &deadline_ms.to_string()]));
        let (found, before) = sub.wait_for(Duration::from_secs(5), |m| {
            *m == event("__keyevent@0__:expired", &key)
        });
        let arrived_ms = unix_ms();
        assert!(
            found.is_some(),
            "no expired event for {key}; got {before:?}"
        );
        assert_eq!(
            before,
            vec![event(&format!("__keyspace@0__:{key}"), "expired")],
            "the keyspace message comes first, and nothing else"
        );
        assert!(arrived_ms >= deadline_ms, "expired before its deadline");
        lateness.push(arrived_ms - deadline_ms);
    }
    // The expiry thread runs every 100 ms: an event is due within about
    // that, as with Redis's hz 10 (allow scheduling noise in CI).
    let worst = *lateness.iter().max().unwrap_or(&0);
    assert!(worst < 1000, "expired events came late: {lateness:?} ms");
    eprintln!("expired event lateness after the deadline: {lateness:?} ms");
    assert_eq!(c.cmd(&["DBSIZE"]), R::Int(0));
}

#[test]
fn lazy_expiry_comes_before_the_command_events() {
    let server = Server::firn();
    let mut c = server.conn();
    ok(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]));
    let mut sub = Subscriber::new(&server);
    // Pipelined: the RPUSH meets the expired key (or active expiry did).
    let mut req = Vec::new();
    req.extend(encode_request(&[b"SET", b"k", b"v", b"PXAT", b"1"]));
    req.extend(encode_request(&[b"RPUSH", b"k", b"x"]));
    c.send_raw(&req);
    c.read_reply();
    c.read_reply();
    let got = sub.drain_until(Instant::now() + Duration::from_millis(800));
    let names: Vec<&str> = got
        .iter()
        .filter(|(ch, _)| ch.starts_with("__keyevent"))
        .map(|(ch, _)| ch.trim_start_matches("__keyevent@0__:"))
        .collect();
    assert_eq!(names, ["set", "expire", "expired", "rpush"], "{got:?}");
}

#[test]
fn cold_commands_publish_their_events_once() {
    // Every read of committed data takes the pool path: the events are
    // those of the committed run only.
    let server = Server::firn_with(&["--debug-cold-reads", "yes"]);
    let mut c = server.conn();
    ok(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "E$lshzg"]));
    let mut sub = Subscriber::new(&server);
    c.cmd(&["RPUSH", "l", "a", "b"]);
    c.cmd(&["LPOP", "l"]);
    c.cmd(&["SADD", "s", "a"]);
    c.cmd(&["HSET", "h", "f", "1"]);
    c.cmd(&["HINCRBY", "h", "f", "1"]);
    c.cmd(&["ZADD", "z", "1", "a"]);
    c.cmd(&["INCR", "n"]);
    c.cmd(&["INCR", "n"]);
    c.cmd(&["DEL", "l", "s"]);
    let got = sub.drain_until(Instant::now() + Duration::from_millis(800));
    let expected = [
        ("rpush", "l"),
        ("lpop", "l"),
        ("sadd", "s"),
        ("hset", "h"),
        ("hincrby", "h"),
        ("zadd", "z"),
        ("incrby", "n"),
        ("incrby", "n"),
        ("del", "l"),
        ("del", "s"),
    ];
    let expected: Vec<Message> = expected
        .iter()
        .map(|(name, key)| event(&format!("__keyevent@0__:{name}"), key))
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn a_key_cold_on_disk_after_a_restart_still_notifies() {
    let mut server = Server::firn();
    let mut c = server.conn();
    c.cmd(&["RPUSH", "l", "a", "b", "c"]);
    c.cmd(&["SET", "s", "v"]);
    server.restart();
    let mut c = server.conn();
    ok(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]));
    let mut sub = Subscriber::new(&server);
    c.cmd(&["LTRIM", "l", "5", "6"]);
    c.cmd(&["APPEND", "s", "w"]);
    let got = sub.drain_until(Instant::now() + Duration::from_millis(800));
    assert_eq!(
        got,
        vec![
            event("__keyspace@0__:l", "ltrim"),
            event("__keyevent@0__:ltrim", "l"),
            event("__keyspace@0__:l", "del"),
            event("__keyevent@0__:del", "l"),
            event("__keyspace@0__:s", "append"),
            event("__keyevent@0__:append", "s"),
        ]
    );
}

#[test]
fn a_pipeline_publishes_every_event_in_order() {
    let server = Server::firn();
    let mut c = server.conn();
    ok(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "E$"]));
    let mut sub = Subscriber::new(&server);
    let mut req = Vec::new();
    for i in 0..200 {
        let key = format!("k{}", i % 7);
        req.extend(encode_request(&[b"SET", key.as_bytes(), b"v"]));
        req.extend(encode_request(&[b"APPEND", key.as_bytes(), b"w"]));
    }
    c.send_raw(&req);
    for _ in 0..400 {
        c.read_reply();
    }
    let mut expected = Vec::new();
    for i in 0..200 {
        let key = format!("k{}", i % 7);
        expected.push(event("__keyevent@0__:set", &key));
        expected.push(event("__keyevent@0__:append", &key));
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut got = Vec::new();
    while got.len() < expected.len() {
        match sub.next(deadline) {
            Some(m) => got.push(m),
            None => break,
        }
    }
    assert_eq!(got, expected);
    assert!(sub
        .drain_until(Instant::now() + Duration::from_millis(200))
        .is_empty());
}

#[test]
fn nothing_is_published_when_notifications_are_off() {
    let server = Server::firn();
    let mut c = server.conn();
    let mut sub = Subscriber::new(&server);
    let quiet = |c: &mut Conn, sub: &mut Subscriber| {
        c.cmd(&["SET", "a", "1", "PX", "50"]);
        c.cmd(&["RPUSH", "l", "x"]);
        c.cmd(&["DEL", "l"]);
        let got = sub.drain_until(Instant::now() + Duration::from_millis(400));
        assert!(got.is_empty(), "published while off: {got:?}");
    };
    quiet(&mut c, &mut sub);
    // On, then off again: nothing after the switch.
    ok(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]));
    c.cmd(&["SET", "b", "1"]);
    let (found, _) = sub.wait_for(Duration::from_secs(5), |m| {
        *m == event("__keyevent@0__:set", "b")
    });
    assert!(found.is_some());
    let _ = sub.drain_until(Instant::now() + Duration::from_millis(200));
    ok(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", ""]));
    quiet(&mut c, &mut sub);
    // Classes without K or E publish nothing either.
    ok(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "g$lx"]));
    quiet(&mut c, &mut sub);
}

#[test]
fn the_mask_from_the_command_line_applies_from_the_start() {
    let server = Server::firn_with(&["--notify-keyspace-events", "KEA"]);
    let mut c = server.conn();
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "notify-keyspace-events"]),
        R::Array(Some(vec![
            R::Bulk(Some(b"notify-keyspace-events".to_vec())),
            R::Bulk(Some(b"AKE".to_vec())),
        ]))
    );
    let mut sub = Subscriber::new(&server);
    c.cmd(&["HSET", "h", "f", "v"]);
    let (found, before) = sub.wait_for(Duration::from_secs(5), |m| {
        *m == event("__keyevent@0__:hset", "h")
    });
    assert!(found.is_some(), "no hset event; got {before:?}");
    assert_eq!(before, vec![event("__keyspace@0__:h", "hset")]);
}

#[test]
fn events_reach_subscribers_before_the_reply() {
    // Redis has a command's events in the subscribers' buffers before it
    // replies: a PUBLISH sent after the reply comes after them.
    let server = Server::firn();
    let mut c = server.conn();
    ok(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]));
    let mut sub = Subscriber::new(&server);
    for i in 0..50 {
        let key = format!("k{i}");
        c.cmd(&["RPUSH", &key, "x"]);
        c.cmd(&["LPOP", &key]);
        c.cmd(&["PUBLISH", MARKER, &i.to_string()]);
        let got = sub.step(&i.to_string());
        let names: Vec<&str> = got.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(
            names,
            ["rpush", &key, "lpop", &key, "del", &key],
            "events of round {i} before its marker"
        );
    }
}
