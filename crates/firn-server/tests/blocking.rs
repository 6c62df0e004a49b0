//! Multi-client behaviour of the blocking commands on Firn: fairness in
//! block order, wake-ups from every kind of write that adds elements (a
//! multi-key write committed at once included), cleanup when a blocked
//! client disconnects or is killed, CLIENT UNBLOCK, CLIENT LIST/INFO,
//! pipelined requests behind a blocked one, timeouts, and a waiter whose
//! data is cold on disk. Every wait polls with a deadline.
//!
//! MULTI/EXEC is not served on this branch: the "push inside a transaction
//! wakes after EXEC" case is covered here by single commands that write
//! several keys in one batch (LMOVE, RENAME, SORT ... STORE,
//! ZUNIONSTORE); the transactions suite adds EXEC itself.

use firn_testkit::{encode_request, info, Conn, Server, R};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(10);

/// Polls until `n` clients are blocked.
fn wait_blocked(conn: &mut Conn, n: i64) {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let blocked = info::field(conn, "clients", "blocked_clients");
        if blocked == n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "blocked_clients is {blocked}, expected {n}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends a blocking command on a fresh connection and waits until the
/// server counts it as blocked (`blocked_before` + 1).
fn block(server: &Server, control: &mut Conn, blocked_before: i64, args: &[&str]) -> Conn {
    let mut conn = server.conn();
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    conn.send(&args);
    wait_blocked(control, blocked_before + 1);
    conn
}

fn pair(key: &str, value: &str) -> R {
    R::Array(Some(vec![
        R::bulk(key.as_bytes()),
        R::bulk(value.as_bytes()),
    ]))
}

#[test]
fn three_waiters_are_served_in_block_order() {
    let server = Server::firn();
    let mut control = server.conn();
    let mut first = block(&server, &mut control, 0, &["BLPOP", "q", "0"]);
    let mut second = block(&server, &mut control, 1, &["BRPOP", "other", "q", "0"]);
    let mut third = block(&server, &mut control, 2, &["BLPOP", "q", "0"]);
    // One element: only the first is served, the others keep waiting.
    assert_eq!(control.cmd(&["RPUSH", "q", "a"]), R::Int(1));
    assert_eq!(first.read_reply().1, pair("q", "a"));
    wait_blocked(&mut control, 2);
    assert!(second.silent_for(Duration::from_millis(100)));
    // Two at once: the second (a BRPOP: the tail), then the third.
    assert_eq!(control.cmd(&["RPUSH", "q", "b", "c"]), R::Int(2));
    assert_eq!(second.read_reply().1, pair("q", "c"));
    assert_eq!(third.read_reply().1, pair("q", "b"));
    wait_blocked(&mut control, 0);
    assert_eq!(control.cmd(&["EXISTS", "q"]), R::Int(0));
}

#[test]
fn writes_of_several_keys_in_one_batch_wake_their_waiters() {
    let server = Server::firn();
    let mut control = server.conn();
    let mut by_lmove = block(&server, &mut control, 0, &["BLPOP", "moved", "0"]);
    let mut by_rename = block(&server, &mut control, 1, &["BRPOP", "renamed", "0"]);
    let mut by_sort = block(&server, &mut control, 2, &["BLPOP", "sorted", "0"]);
    let mut by_union = block(&server, &mut control, 3, &["BZPOPMIN", "union", "0"]);
    control.cmd(&["RPUSH", "src", "x", "y"]);
    control.cmd(&["LMOVE", "src", "moved", "LEFT", "RIGHT"]);
    assert_eq!(by_lmove.read_reply().1, pair("moved", "x"));
    control.cmd(&["RENAME", "src", "renamed"]);
    assert_eq!(by_rename.read_reply().1, pair("renamed", "y"));
    control.cmd(&["RPUSH", "nums", "3", "1", "2"]);
    assert_eq!(control.cmd(&["SORT", "nums", "STORE", "sorted"]), R::Int(3));
    assert_eq!(by_sort.read_reply().1, pair("sorted", "1"));
    control.cmd(&["ZADD", "z1", "5", "m"]);
    control.cmd(&["ZUNIONSTORE", "union", "1", "z1"]);
    assert_eq!(by_union.read_reply().1.items().len(), 3);
    wait_blocked(&mut control, 0);
}

#[test]
fn a_blocked_client_that_disconnects_leaves_no_waiter() {
    let server = Server::firn();
    let mut control = server.conn();
    let mut gone = block(&server, &mut control, 0, &["BLPOP", "q", "0"]);
    let mut timed = block(&server, &mut control, 1, &["BLPOP", "q", "100"]);
    assert_eq!(
        info::field(&mut control, "clients", "clients_in_timeout_table"),
        1
    );
    gone.shutdown();
    timed.shutdown();
    wait_blocked(&mut control, 0);
    assert_eq!(
        info::field(&mut control, "clients", "clients_in_timeout_table"),
        0
    );
    // Nobody takes the element any more.
    assert_eq!(control.cmd(&["RPUSH", "q", "kept"]), R::Int(1));
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(control.cmd(&["LLEN", "q"]), R::Int(1));
    // The next waiter is served as usual.
    control.cmd(&["DEL", "q"]);
    let mut next = block(&server, &mut control, 0, &["BLPOP", "q", "0"]);
    control.cmd(&["RPUSH", "q", "v"]);
    assert_eq!(next.read_reply().1, pair("q", "v"));
}

#[test]
fn a_departing_waiter_passes_its_wake_up_on() {
    let server = Server::firn();
    let mut control = server.conn();
    let first = block(&server, &mut control, 0, &["BLPOP", "q", "0"]);
    let mut second = block(&server, &mut control, 1, &["BLPOP", "q", "0"]);
    // The first leaves; a push must still reach the second.
    drop(first);
    wait_blocked(&mut control, 1);
    control.cmd(&["LPUSH", "q", "v"]);
    assert_eq!(second.read_reply().1, pair("q", "v"));
}

#[test]
fn client_unblock_kill_and_list_see_blocked_clients() {
    let server = Server::firn();
    let mut control = server.conn();
    let mut waiting = server.conn();
    let id = waiting.cmd(&["CLIENT", "ID"]).as_int().expect("client id");
    waiting.send(&[b"BLMPOP", b"0", b"1", b"k", b"LEFT"]);
    wait_blocked(&mut control, 1);
    let list = control
        .cmd(&["CLIENT", "LIST"])
        .as_str()
        .unwrap_or_default();
    let line = list
        .lines()
        .find(|l| l.starts_with(&format!("id={id} ")))
        .expect("the blocked client is listed");
    assert!(line.contains(" flags=b "), "{line}");
    assert!(line.contains(" cmd=blmpop "), "{line}");
    assert_eq!(
        control.cmd(&["CLIENT", "UNBLOCK", &id.to_string()]),
        R::Int(1)
    );
    assert_eq!(waiting.read_reply().1, R::Array(None));
    wait_blocked(&mut control, 0);
    assert_eq!(
        control.cmd(&["CLIENT", "UNBLOCK", &id.to_string()]),
        R::Int(0)
    );
    waiting.send(&[b"BZPOPMAX", b"z", b"0"]);
    wait_blocked(&mut control, 1);
    assert_eq!(
        control.cmd(&["CLIENT", "UNBLOCK", &id.to_string(), "ERROR"]),
        R::Int(1)
    );
    assert_eq!(
        waiting.read_reply().1,
        R::Error("UNBLOCKED client unblocked via CLIENT UNBLOCK".into())
    );
    assert_eq!(waiting.cmd(&["PING"]), R::Simple("PONG".into()));
    waiting.send(&[b"BLPOP", b"k", b"0"]);
    wait_blocked(&mut control, 1);
    assert_eq!(
        control.cmd(&["CLIENT", "KILL", "ID", &id.to_string()]),
        R::Int(1)
    );
    assert!(waiting.is_closed());
    wait_blocked(&mut control, 0);
}

#[test]
fn requests_pipelined_behind_a_blocked_one_wait_for_it() {
    let server = Server::firn();
    let mut control = server.conn();
    let mut conn = server.conn();
    let mut pipeline = encode_request(&[b"PING", b"before"]);
    pipeline.extend(encode_request(&[b"BLPOP", b"q", b"0"]));
    pipeline.extend(encode_request(&[b"PING", b"after"]));
    conn.send_raw(&pipeline);
    // The reply before the blocked command is not held back.
    assert_eq!(conn.read_reply().1, R::bulk(b"before"));
    wait_blocked(&mut control, 1);
    assert!(conn.silent_for(Duration::from_millis(100)));
    control.cmd(&["RPUSH", "q", "v"]);
    assert_eq!(conn.read_reply().1, pair("q", "v"));
    assert_eq!(conn.read_reply().1, R::bulk(b"after"));
}

#[test]
fn timeouts_are_kept_to_the_millisecond_scale() {
    let server = Server::firn();
    let mut conn = server.conn();
    let started = Instant::now();
    assert_eq!(conn.cmd(&["BLPOP", "k", "0.25"]), R::Array(None));
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(250), "{took:?}");
    assert!(took < Duration::from_millis(2000), "{took:?}");
    let started = Instant::now();
    assert_eq!(
        conn.cmd(&["BLMOVE", "k", "d", "LEFT", "LEFT", "0.05"]),
        R::Array(None)
    );
    assert!(started.elapsed() >= Duration::from_millis(50));
}

#[test]
fn a_write_paused_server_holds_new_blocking_pops() {
    let server = Server::firn();
    let mut control = server.conn();
    control.cmd(&["RPUSH", "q", "v"]);
    control.cmd(&["CLIENT", "PAUSE", "300", "WRITE"]);
    let mut conn = server.conn();
    let started = Instant::now();
    // BLPOP is a write: it waits for the pause, then is served.
    assert_eq!(conn.cmd(&["BLPOP", "q", "0"]), pair("q", "v"));
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[test]
fn a_waiter_is_served_from_cold_data() {
    let server = Server::firn_with(&["--debug-cold-reads", "yes"]);
    let mut control = server.conn();
    // The destination's elements are only on disk for every later read.
    control.cmd(&["RPUSH", "dst", "old1", "old2"]);
    let mut mover = block(
        &server,
        &mut control,
        0,
        &["BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"],
    );
    let mut popper = block(&server, &mut control, 1, &["BLPOP", "cold", "0"]);
    control.cmd(&["RPUSH", "src", "new"]);
    assert_eq!(mover.read_reply().1, R::bulk(b"new"));
    assert_eq!(
        control.cmd(&["LRANGE", "dst", "0", "-1"]),
        R::Array(Some(vec![
            R::bulk(b"old1"),
            R::bulk(b"old2"),
            R::bulk(b"new")
        ]))
    );
    control.cmd(&["RPUSH", "cold", "a", "b"]);
    assert_eq!(popper.read_reply().1, pair("cold", "a"));
    assert_eq!(control.cmd(&["LLEN", "cold"]), R::Int(1));
    wait_blocked(&mut control, 0);
}

#[test]
fn many_waiters_on_many_keys_are_all_served() {
    let server = Server::firn();
    let mut control = server.conn();
    let mut waiters = Vec::new();
    for i in 0..40 {
        let key = format!("k{}", i % 8);
        waiters.push((
            key.clone(),
            block(&server, &mut control, i, &["BLPOP", &key, "0"]),
        ));
    }
    for i in 0..8 {
        let key = format!("k{i}");
        let values: Vec<String> = (0..5).map(|j| format!("v{j}")).collect();
        let mut args = vec!["RPUSH", key.as_str()];
        args.extend(values.iter().map(|v| v.as_str()));
        control.cmd(&args);
    }
    let mut served_per_key = std::collections::HashMap::new();
    for (key, conn) in &mut waiters {
        // The n-th waiter of a key (in block order) gets its n-th element.
        let served = served_per_key.entry(key.clone()).or_insert(0);
        assert_eq!(conn.read_reply().1, pair(key, &format!("v{served}")));
        *served += 1;
    }
    assert!(served_per_key.values().all(|&n| n == 5));
    wait_blocked(&mut control, 0);
    assert_eq!(control.cmd(&["DBSIZE"]), R::Int(0));
}

#[test]
fn huge_timeouts_wait_and_can_still_be_unblocked() {
    let server = Server::firn();
    let mut control = server.conn();
    for (i, timeout) in ["9223372036854775.807", "1e15", "-0.0001"]
        .iter()
        .enumerate()
    {
        let mut waiting = server.conn();
        let id = waiting.cmd(&["CLIENT", "ID"]).as_int().expect("client id");
        waiting.send(&[b"BZPOPMIN", b"z", timeout.as_bytes()]);
        wait_blocked(&mut control, 1);
        let timed = if i < 2 { 1 } else { 0 };
        assert_eq!(
            info::field(&mut control, "clients", "clients_in_timeout_table"),
            timed,
            "{timeout}"
        );
        assert_eq!(
            control.cmd(&["CLIENT", "UNBLOCK", &id.to_string(), "TIMEOUT"]),
            R::Int(1)
        );
        assert_eq!(waiting.read_reply().1, R::Array(None));
        wait_blocked(&mut control, 0);
    }
    assert_eq!(control.cmd(&["PING"]), R::Simple("PONG".into()));
}
