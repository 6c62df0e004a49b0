//! Commands whose work grows with the data (KEYS, SCAN with a large COUNT,
//! RANDOMKEY past many expired keys) run on blocking threads, not on the
//! network threads: while more of them are in progress than the server has
//! network threads, other clients are still answered. The assertions are
//! about order (the probe's replies arrive while every long command is
//! still outstanding), never about elapsed time.

use firn_testkit::{encode_request, Conn, Server, R};
use std::time::Duration;

/// More long commands than a 2-core machine has network threads.
const LONG_CLIENTS: usize = 4;

/// Loads `count` keys of `key_len` bytes ("aaa…" followed by the index).
fn load_long_keys(conn: &mut Conn, count: usize, key_len: usize) {
    let mut request = Vec::new();
    for i in 0..count {
        let index = i.to_string();
        let key = format!("{}{index}", "a".repeat(key_len - index.len()));
        request.extend_from_slice(&encode_request(&[b"SET", key.as_bytes(), b"1"]));
    }
    conn.send_raw(&request);
    for _ in 0..count {
        assert_eq!(conn.read_reply().1, R::Simple("OK".into()));
    }
}

/// Sends `args` on `LONG_CLIENTS` connections without reading the replies,
/// checks that a probe client is answered while none of them has replied,
/// then returns the long commands' replies.
fn probe_while_running(server: &Server, args: &[&[u8]]) -> Vec<R> {
    let mut long: Vec<Conn> = (0..LONG_CLIENTS).map(|_| server.conn()).collect();
    for conn in &mut long {
        conn.send(args);
    }
    let mut probe = server.conn();
    for _ in 0..20 {
        assert_eq!(probe.cmd(&["PING"]), R::Simple("PONG".into()));
        assert_eq!(probe.cmd(&["GET", "probe"]), R::bulk(b"here"));
    }
    for (i, conn) in long.iter_mut().enumerate() {
        assert!(
            conn.silent_for(Duration::from_millis(1)),
            "long command #{i} answered before the probe finished: it is too short \
             to show anything, or the probe waited for it"
        );
    }
    long.iter_mut().map(|c| c.read_reply().1).collect()
}

/// The matcher is polynomial, but this pattern still costs about
/// (key length × 100) steps per key: KEYS takes a while on purpose.
fn slow_pattern() -> String {
    format!("*{}b", "a".repeat(100))
}

#[test]
fn keys_runs_off_the_network_threads() {
    let server = Server::firn();
    let mut setup = server.conn();
    load_long_keys(&mut setup, 1500, 400);
    setup.cmd(&["SET", "probe", "here"]);
    let pattern = slow_pattern();
    for reply in probe_while_running(&server, &[b"KEYS", pattern.as_bytes()]) {
        assert_eq!(reply, R::Array(Some(Vec::new())));
    }
    // The same view answers correctly when something matches.
    let all = setup.cmd(&["KEYS", "a*"]);
    assert_eq!(all.items().len(), 1500);
}

#[test]
fn scan_with_a_large_count_runs_off_the_network_threads() {
    let server = Server::firn();
    let mut setup = server.conn();
    load_long_keys(&mut setup, 1500, 400);
    setup.cmd(&["SET", "probe", "here"]);
    let pattern = slow_pattern();
    let args: [&[u8]; 6] = [
        b"SCAN",
        b"0",
        b"COUNT",
        b"100000",
        b"MATCH",
        pattern.as_bytes(),
    ];
    for reply in probe_while_running(&server, &args) {
        let items = reply.items();
        assert_eq!(items.len(), 2, "{}", reply.render());
        assert_eq!(items[0].as_str().as_deref(), Some("0"));
        assert_eq!(items[1], R::Array(Some(Vec::new())));
    }
}

/// A SCAN step of 10 records is normally inline, but matching long keys
/// against a long pattern costs (pattern × key) steps each: past a step
/// budget the step moves off the network thread.
#[test]
fn a_small_scan_step_with_a_costly_pattern_runs_off_the_network_threads() {
    let server = Server::firn();
    let mut setup = server.conn();
    load_long_keys(&mut setup, 12, 20_000);
    setup.cmd(&["SET", "probe", "here"]);
    let pattern = format!("*{}b", "a".repeat(500));
    let args: [&[u8]; 6] = [b"SCAN", b"0", b"COUNT", b"10", b"MATCH", pattern.as_bytes()];
    for reply in probe_while_running(&server, &args) {
        let items = reply.items();
        assert_eq!(items.len(), 2, "{}", reply.render());
        assert_ne!(items[0].as_str().as_deref(), Some("0"));
        assert_eq!(items[1], R::Array(Some(Vec::new())));
    }
}

/// A small SCAN step stays inline and still pages through everything.
#[test]
fn small_scan_steps_page_through_every_key() {
    let server = Server::firn();
    let mut conn = server.conn();
    load_long_keys(&mut conn, 300, 20);
    let mut cursor = "0".to_string();
    let mut seen = Vec::new();
    for _ in 0..1000 {
        let reply = conn.cmd(&["SCAN", &cursor, "COUNT", "7"]);
        let items = reply.items();
        assert_eq!(items.len(), 2, "{}", reply.render());
        seen.extend(items[1].items().iter().filter_map(|k| k.as_str()));
        cursor = items[0].as_str().unwrap_or_default();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(cursor, "0");
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 300);
}
