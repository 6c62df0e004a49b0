//! Pub/Sub integration tests on a real firn: delivery to channel and
//! pattern subscribers in order, fan-out, a slow subscriber closed by the
//! `client-output-buffer-limit pubsub` class while the publisher goes on
//! unhindered, and disconnection removing every subscription. Waits poll
//! with a deadline.

use firn_testkit::conn::ReadError;
use firn_testkit::{info, Conn, Server, R};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(20);

fn subscribe(conn: &mut Conn, args: &[&str], confirmations: usize) {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    conn.send(&args);
    for _ in 0..confirmations {
        let (_, reply) = conn.read_reply();
        assert!(
            matches!(reply, R::Array(_) | R::Push(_)),
            "{}",
            reply.render()
        );
    }
}

/// The text items of a pub/sub message.
fn message(conn: &mut Conn) -> Vec<String> {
    let (_, reply) = conn.read_reply();
    reply
        .items()
        .iter()
        .map(|i| i.as_str().unwrap_or_else(|| format!("{i:?}")))
        .collect()
}

fn poll_until(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn numsub(conn: &mut Conn, channel: &str) -> i64 {
    conn.cmd(&["PUBSUB", "NUMSUB", channel]).items()[1]
        .as_int()
        .unwrap_or(-1)
}

#[test]
fn channel_and_pattern_messages_arrive_in_publish_order() {
    let server = Server::firn();
    let mut subscriber = server.conn();
    let mut publisher = server.conn();
    subscribe(&mut subscriber, &["SUBSCRIBE", "orders"], 1);
    subscribe(&mut subscriber, &["PSUBSCRIBE", "ord*", "x"], 2);
    for i in 0..500 {
        let reply = publisher.cmd(&["PUBLISH", "orders", &format!("m{i}")]);
        assert_eq!(reply.as_int(), Some(2), "channel + pattern ord*");
    }
    for i in 0..500 {
        let text = format!("m{i}");
        assert_eq!(message(&mut subscriber), ["message", "orders", &text]);
        assert_eq!(
            message(&mut subscriber),
            ["pmessage", "ord*", "orders", &text]
        );
    }
    assert!(subscriber.silent_for(Duration::from_millis(100)));
}

#[test]
fn fan_out_reaches_every_subscriber() {
    let server = Server::firn();
    let mut subscribers: Vec<Conn> = (0..50).map(|_| server.conn()).collect();
    for s in subscribers.iter_mut() {
        subscribe(s, &["SUBSCRIBE", "fan"], 1);
    }
    let mut publisher = server.conn();
    for i in 0..20 {
        let reply = publisher.cmd(&["PUBLISH", "fan", &i.to_string()]);
        assert_eq!(reply.as_int(), Some(50));
    }
    for s in subscribers.iter_mut() {
        for i in 0..20 {
            assert_eq!(message(s), ["message", "fan", &i.to_string()]);
        }
    }
}

#[test]
fn slow_subscriber_is_closed_by_the_pubsub_limit_while_publishing_goes_on() {
    let server = Server::firn();
    let mut admin = server.conn();
    let limit = admin.cmd(&[
        "CONFIG",
        "SET",
        "client-output-buffer-limit",
        "pubsub 1048576 0 0",
    ]);
    assert_eq!(limit, R::Simple("OK".into()));
    // The slow one never reads; the fast one reads everything.
    let mut slow = server.conn();
    subscribe(&mut slow, &["SUBSCRIBE", "feed"], 1);
    let mut fast = server.conn();
    subscribe(&mut fast, &["SUBSCRIBE", "feed"], 1);
    let mut publisher = server.conn();
    let payload = "x".repeat(64 * 1024);
    let start = Instant::now();
    let mut slowest_publish = Duration::ZERO;
    let mut sent = 0;
    // The kernel's socket buffers take some megabytes before the server's
    // queue grows; 256 MB is far more than both together.
    while numsub(&mut publisher, "feed") == 2 {
        assert!(sent < 4096, "the slow subscriber was never closed");
        assert!(start.elapsed() < DEADLINE, "publishing took too long");
        let before = Instant::now();
        let receivers = publisher.cmd(&["PUBLISH", "feed", &payload]);
        slowest_publish = slowest_publish.max(before.elapsed());
        assert!(matches!(receivers.as_int(), Some(1..=2)));
        sent += 1;
        let got = message(&mut fast);
        assert_eq!(got[2].len(), payload.len());
    }
    assert!(
        slowest_publish < Duration::from_secs(2),
        "a PUBLISH waited for the slow subscriber: {slowest_publish:?}"
    );
    // The publisher and the fast subscriber go on.
    assert_eq!(
        publisher.cmd(&["PUBLISH", "feed", "after"]).as_int(),
        Some(1)
    );
    let mut last = message(&mut fast);
    while last[2] != "after" {
        last = message(&mut fast);
    }
    // The slow subscriber's connection was closed (after whatever the
    // kernel had buffered).
    let mut received = 0;
    let end = loop {
        match slow.try_read_reply() {
            Ok(_) => received += 1,
            Err(e) => break e,
        }
    };
    assert!(
        matches!(end, ReadError::Closed),
        "the slow subscriber's connection stayed open: {end:?}"
    );
    assert!(received < sent, "the slow subscriber got every message");
}

#[test]
fn disconnection_removes_every_subscription() {
    let server = Server::firn();
    let mut admin = server.conn();
    let mut subscriber = server.conn();
    subscribe(&mut subscriber, &["SUBSCRIBE", "a", "b"], 2);
    subscribe(&mut subscriber, &["PSUBSCRIBE", "p*"], 1);
    subscribe(&mut subscriber, &["SSUBSCRIBE", "s"], 1);
    assert_eq!(info::field(&mut admin, "stats", "pubsub_channels"), 2);
    assert_eq!(info::field(&mut admin, "stats", "pubsub_patterns"), 1);
    assert_eq!(info::field(&mut admin, "stats", "pubsubshard_channels"), 1);
    let listed = admin.cmd(&["CLIENT", "LIST", "TYPE", "pubsub"]);
    let line = listed.as_str().unwrap_or_default();
    assert!(
        line.contains("flags=P ") && line.contains(" sub=2 psub=1 ssub=1 "),
        "{line}"
    );
    subscriber.shutdown();
    poll_until("the subscriptions to go", || {
        info::field(&mut admin, "stats", "pubsub_channels") == 0
            && info::field(&mut admin, "stats", "pubsub_patterns") == 0
            && info::field(&mut admin, "stats", "pubsubshard_channels") == 0
    });
    assert_eq!(admin.cmd(&["PUBLISH", "a", "x"]).as_int(), Some(0));
    assert_eq!(admin.cmd(&["PUBSUB", "NUMPAT"]).as_int(), Some(0));
    let listed = admin.cmd(&["CLIENT", "LIST", "TYPE", "pubsub"]);
    assert_eq!(listed.as_str().unwrap_or_default(), "");
}

/// Publishes 64 KiB messages to `channel` until `stop` says so; returns
/// how many were published.
fn publish_until(publisher: &mut Conn, channel: &str, mut stop: impl FnMut() -> bool) -> usize {
    let payload = "y".repeat(64 * 1024);
    let start = Instant::now();
    let mut sent = 0;
    while !stop() {
        assert!(start.elapsed() < DEADLINE, "gave up publishing");
        assert!(sent < 4096, "published 256 MB without reaching the state");
        publisher.cmd(&["PUBLISH", channel, &payload]);
        sent += 1;
    }
    sent
}

/// CLIENT LIST's `omem` of the only pubsub client.
fn pubsub_omem(conn: &mut Conn) -> i64 {
    let listed = conn.cmd(&["CLIENT", "LIST", "TYPE", "pubsub"]);
    listed
        .as_str()
        .unwrap_or_default()
        .split(' ')
        .find_map(|f| f.strip_prefix("omem="))
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1)
}

#[test]
fn soft_limit_closes_a_subscriber_over_it_for_its_seconds() {
    let server = Server::firn();
    let mut admin = server.conn();
    let set = admin.cmd(&[
        "CONFIG",
        "SET",
        "client-output-buffer-limit",
        "pubsub 0 1048576 1",
    ]);
    assert_eq!(set, R::Simple("OK".into()));
    let mut slow = server.conn();
    subscribe(&mut slow, &["SUBSCRIBE", "soft"], 1);
    // Fill the socket buffers, then go over the soft limit and stop.
    publish_until(&mut admin, "soft", || {
        pubsub_omem(&mut server.conn()) > 1_100_000
    });
    let over_since = Instant::now();
    // Nobody publishes any more: the connection's own timer closes it,
    // after the soft limit's second.
    poll_until("the slow subscriber to be closed", || {
        numsub(&mut admin, "soft") == 0
    });
    assert!(over_since.elapsed() >= Duration::from_millis(900));
}

#[test]
fn queued_messages_show_in_client_list() {
    let server = Server::firn();
    let mut admin = server.conn();
    let mut slow = server.conn();
    subscribe(&mut slow, &["SUBSCRIBE", "q"], 1);
    // The default limit (32 MB hard) leaves room to queue a few megabytes.
    publish_until(&mut admin, "q", || {
        pubsub_omem(&mut server.conn()) > 2_000_000
    });
    let line = admin
        .cmd(&["CLIENT", "LIST", "TYPE", "pubsub"])
        .as_str()
        .unwrap_or_default();
    assert!(line.contains(" obl=16384 "), "{line}");
    assert!(!line.contains(" oll=0 "), "{line}");
    // Reading everything empties the queue again.
    let mut received = 0;
    while pubsub_omem(&mut admin) > 0 {
        let got = message(&mut slow);
        assert_eq!(got[0], "message");
        received += 1;
    }
    assert!(received > 0);
}
