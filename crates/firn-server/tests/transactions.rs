//! MULTI/EXEC and WATCH between clients: two clients racing a WATCHed
//! counter (exactly one EXEC per round wins, the count is exact), WATCH
//! against another client's write, the key's expiry, FLUSHALL and SWAPDB,
//! no abort for another key of the same lock stripe, EXEC's atomicity
//! against a concurrent INCR loop, CLIENT LIST's transaction fields, and
//! transactions over cold keys (`debug-cold-reads yes`).

use firn_testkit::{Conn, Server, R};
use std::time::{Duration, Instant};

fn exec_aborted(reply: &R) -> bool {
    matches!(reply, R::Array(None) | R::Null)
}

/// Polls `check` until it holds, for at most five seconds.
fn wait_for(mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Optimistic increments of `counter` by WATCH/GET/MULTI/SET/EXEC;
/// returns how many EXECs succeeded.
fn watched_increments(port: u16, counter: &str, rounds: usize) -> (u64, u64) {
    let mut c = Conn::connect(port);
    let (mut won, mut lost) = (0, 0);
    for _ in 0..rounds {
        assert_eq!(c.cmd(&["WATCH", counter]), R::Simple("OK".into()));
        let value = c.cmd(&["GET", counter]).as_str().unwrap_or_default();
        let next = value.parse::<i64>().unwrap_or(0) + 1;
        assert_eq!(c.cmd(&["MULTI"]), R::Simple("OK".into()));
        assert_eq!(
            c.cmd(&["SET", counter, &next.to_string()]),
            R::Simple("QUEUED".into())
        );
        let reply = c.cmd(&["EXEC"]);
        if exec_aborted(&reply) {
            lost += 1;
        } else {
            assert_eq!(reply, R::Array(Some(vec![R::Simple("OK".into())])));
            won += 1;
        }
    }
    (won, lost)
}

#[test]
fn two_clients_racing_a_watch_count_exactly() {
    let server = Server::firn();
    let port = server.port();
    let rounds = 400;
    let racers: Vec<_> = (0..2)
        .map(|_| std::thread::spawn(move || watched_increments(port, "counter", rounds)))
        .collect();
    let mut won = 0;
    let mut lost = 0;
    for racer in racers {
        let (w, l) = racer.join().expect("racer");
        won += w;
        lost += l;
    }
    assert_eq!(won + lost, 2 * rounds as u64);
    let mut c = server.conn();
    let value = c.cmd(&["GET", "counter"]).as_str().unwrap_or_default();
    assert_eq!(value.parse::<u64>().ok(), Some(won), "lost {lost}");
}

#[test]
fn another_clients_write_aborts_the_exec() {
    let server = Server::firn();
    let mut a = server.conn();
    let mut b = server.conn();
    a.cmd(&["SET", "k", "1"]);
    a.cmd(&["WATCH", "k"]);
    b.cmd(&["SET", "k", "2"]);
    a.cmd(&["MULTI"]);
    a.cmd(&["SET", "k", "3"]);
    assert!(exec_aborted(&a.cmd(&["EXEC"])));
    assert_eq!(a.cmd(&["GET", "k"]).as_str().as_deref(), Some("2"));
    // Watching again and nobody writing: it runs.
    a.cmd(&["WATCH", "k"]);
    b.cmd(&["GET", "k"]);
    a.cmd(&["MULTI"]);
    a.cmd(&["SET", "k", "3"]);
    assert!(!exec_aborted(&a.cmd(&["EXEC"])));
}

#[test]
fn client_list_shows_multi_and_dirty_watch() {
    let server = Server::firn();
    let mut a = server.conn();
    let mut b = server.conn();
    let id = a.cmd(&["CLIENT", "ID"]).as_int().expect("id");
    let line = |b: &mut Conn| {
        let list = b.cmd(&["CLIENT", "LIST", "ID", &id.to_string()]);
        String::from_utf8_lossy(list.as_bytes().unwrap_or_default()).into_owned()
    };
    assert!(line(&mut b).contains(" flags=N "), "{}", line(&mut b));
    assert!(line(&mut b).contains(" multi=-1 "));
    a.cmd(&["WATCH", "k"]);
    a.cmd(&["MULTI"]);
    a.cmd(&["SET", "a", "1"]);
    a.cmd(&["SET", "abcdef", "1234567890"]);
    let text = line(&mut b);
    assert!(text.contains(" flags=x "), "{text}");
    assert!(text.contains(" multi=2 "), "{text}");
    assert!(text.contains(" multi-mem=72 "), "{text}");
    b.cmd(&["SET", "k", "1"]);
    let text = line(&mut b);
    assert!(text.contains(" flags=xd "), "{text}");
    // A transaction bound to fail keeps no more commands (Redis 7.0).
    assert_eq!(a.cmd(&["SET", "c", "1"]), R::Simple("QUEUED".into()));
    assert!(line(&mut b).contains(" multi=2 "));
    assert!(exec_aborted(&a.cmd(&["EXEC"])));
    let text = line(&mut b);
    assert!(
        text.contains(" flags=N ") && text.contains(" multi=-1 "),
        "{text}"
    );
    a.cmd(&["MULTI"]);
    a.cmd(&["GET"]);
    a.cmd(&["SET", "a", "1"]);
    assert!(line(&mut b).contains(" multi=0 "));
    assert!(a.cmd(&["EXEC"]).is_error());
}

#[test]
fn expiry_flushall_and_swapdb_abort_watchers() {
    let server = Server::firn();
    let mut a = server.conn();
    let mut b = server.conn();
    // Expiry, even with nobody touching the key.
    a.cmd(&["SET", "e", "1", "PX", "100"]);
    a.cmd(&["WATCH", "e"]);
    assert!(wait_for(|| b.cmd(&["EXISTS", "e"]).as_int() == Some(0)));
    a.cmd(&["MULTI"]);
    a.cmd(&["PING"]);
    assert!(exec_aborted(&a.cmd(&["EXEC"])));
    // FLUSHALL of an existing watched key.
    a.cmd(&["SET", "f", "1"]);
    a.cmd(&["WATCH", "f"]);
    b.cmd(&["FLUSHALL"]);
    a.cmd(&["MULTI"]);
    a.cmd(&["PING"]);
    assert!(exec_aborted(&a.cmd(&["EXEC"])));
    // FLUSHALL does not touch a watched key that did not exist.
    a.cmd(&["WATCH", "f"]);
    b.cmd(&["FLUSHALL"]);
    a.cmd(&["MULTI"]);
    a.cmd(&["PING"]);
    assert!(!exec_aborted(&a.cmd(&["EXEC"])));
    // SWAPDB with the key in the other database.
    b.cmd(&["SELECT", "1"]);
    b.cmd(&["SET", "s", "1"]);
    a.cmd(&["WATCH", "s"]);
    b.cmd(&["SWAPDB", "0", "1"]);
    a.cmd(&["MULTI"]);
    a.cmd(&["GET", "s"]);
    assert!(exec_aborted(&a.cmd(&["EXEC"])));
    // SWAPDB spares a watched key that is in neither database.
    a.cmd(&["WATCH", "nowhere"]);
    b.cmd(&["SWAPDB", "0", "1"]);
    a.cmd(&["MULTI"]);
    a.cmd(&["GET", "s"]);
    assert!(!exec_aborted(&a.cmd(&["EXEC"])));
}

#[test]
fn no_abort_for_another_key_of_the_same_stripe() {
    let server = Server::firn();
    let mut a = server.conn();
    let mut b = server.conn();
    // One hash tag: the same cluster slot, so the same lock stripe.
    a.cmd(&["SET", "{tag}watched", "1"]);
    a.cmd(&["WATCH", "{tag}watched"]);
    for i in 0..20 {
        b.cmd(&["SET", "{tag}neighbour", &i.to_string()]);
    }
    a.cmd(&["MULTI"]);
    a.cmd(&["INCR", "{tag}watched"]);
    assert_eq!(a.cmd(&["EXEC"]), R::Array(Some(vec![R::Int(2)])));
}

#[test]
fn exec_is_atomic_against_a_concurrent_incr_loop() {
    let server = Server::firn();
    let port = server.port();
    let writer = std::thread::spawn(move || {
        let mut c = Conn::connect(port);
        for _ in 0..3000 {
            c.cmd(&["INCR", "n"]);
        }
    });
    let mut a = server.conn();
    for _ in 0..300 {
        a.cmd(&["MULTI"]);
        a.cmd(&["GET", "n"]);
        a.cmd(&["INCR", "n"]);
        a.cmd(&["GET", "n"]);
        let reply = a.cmd(&["EXEC"]);
        let items = reply.items().to_vec();
        assert_eq!(items.len(), 3, "{reply:?}");
        let before = items[0]
            .as_str()
            .and_then(|s| s.parse::<i64>().ok())
            .unwrap_or(0);
        assert_eq!(items[1], R::Int(before + 1), "{reply:?}");
        assert_eq!(
            items[2].as_str(),
            Some((before + 1).to_string()),
            "{reply:?}"
        );
    }
    writer.join().expect("writer");
    assert_eq!(a.cmd(&["GET", "n"]).as_str(), Some("3300".to_string()));
}

#[test]
fn transactions_over_cold_keys() {
    let server = Server::firn_with(&["--debug-cold-reads", "yes"]);
    let mut a = server.conn();
    let mut b = server.conn();
    a.cmd(&["SET", "k", "10"]);
    a.cmd(&["RPUSH", "l", "x", "y"]);
    a.cmd(&["MULTI"]);
    a.cmd(&["GET", "k"]);
    a.cmd(&["INCR", "k"]);
    a.cmd(&["LPOP", "l"]);
    a.cmd(&["LPUSH", "k", "bad"]);
    a.cmd(&["KEYS", "*"]);
    let reply = a.cmd(&["EXEC"]);
    let items = reply.items();
    assert_eq!(items.len(), 5, "{reply:?}");
    assert_eq!(items[0].as_str().as_deref(), Some("10"));
    assert_eq!(items[1], R::Int(11));
    assert_eq!(items[2].as_str().as_deref(), Some("x"));
    assert!(items[3].is_error());
    assert_eq!(items[4].items().len(), 2, "{reply:?}");
    // WATCH of a cold key, then another client's write.
    a.cmd(&["WATCH", "k"]);
    b.cmd(&["SET", "k", "1"]);
    a.cmd(&["MULTI"]);
    a.cmd(&["GET", "k"]);
    assert!(exec_aborted(&a.cmd(&["EXEC"])));
    a.cmd(&["WATCH", "k"]);
    a.cmd(&["MULTI"]);
    a.cmd(&["GET", "k"]);
    assert_eq!(a.cmd(&["EXEC"]).items().len(), 1);
}

#[test]
fn client_pause_write_holds_queued_writes_and_exec() {
    let server = Server::firn();
    let mut a = server.conn();
    let mut b = server.conn();
    a.cmd(&["MULTI"]);
    a.cmd(&["GET", "k"]);
    // A read is queued during a write pause at once.
    b.cmd(&["CLIENT", "PAUSE", "400", "WRITE"]);
    let started = Instant::now();
    assert_eq!(a.cmd(&["GET", "k"]), R::Simple("QUEUED".into()));
    assert!(started.elapsed() < Duration::from_millis(300));
    // A write waits for the pause to end before it is queued.
    assert_eq!(a.cmd(&["SET", "k", "1"]), R::Simple("QUEUED".into()));
    assert!(started.elapsed() >= Duration::from_millis(350));
    // An EXEC whose queue holds a write is paused like a write.
    b.cmd(&["CLIENT", "PAUSE", "400", "WRITE"]);
    let started = Instant::now();
    let reply = a.cmd(&["EXEC"]);
    assert!(started.elapsed() >= Duration::from_millis(350));
    assert_eq!(reply.items().len(), 3, "{reply:?}");
    // A read-only EXEC is not.
    a.cmd(&["MULTI"]);
    a.cmd(&["GET", "k"]);
    b.cmd(&["CLIENT", "PAUSE", "2000", "WRITE"]);
    let started = Instant::now();
    assert_eq!(a.cmd(&["EXEC"]).items().len(), 1);
    assert!(started.elapsed() < Duration::from_millis(1500));
    b.cmd(&["CLIENT", "UNPAUSE"]);
}

#[test]
fn blocking_jobs_reply_inside_exec() {
    let server = Server::firn();
    let mut a = server.conn();
    // Over 1 MiB: BITCOUNT runs as a blocking job.
    a.cmd(&["SETRANGE", "big", "2000000", "x"]);
    a.cmd(&["MULTI"]);
    a.cmd(&["BITCOUNT", "big"]);
    a.cmd(&["STRLEN", "big"]);
    let reply = a.cmd(&["EXEC"]);
    assert_eq!(reply, R::Array(Some(vec![R::Int(4), R::Int(2000001)])));
}

#[test]
fn client_pause_write_holds_scripts_and_publish_as_redis() {
    let server = Server::firn();
    let mut a = server.conn();
    let mut b = server.conn();
    // Redis 7.0 holds CMD_MAY_REPLICATE commands (EVAL, PUBLISH) like writes,
    // and lets a read-only script through.
    b.cmd(&["CLIENT", "PAUSE", "2000", "WRITE"]);
    let started = Instant::now();
    assert_eq!(
        a.cmd(&["EVAL_RO", "return redis.call('GET', KEYS[1])", "1", "k"]),
        R::Bulk(None)
    );
    assert!(started.elapsed() < Duration::from_millis(1500));
    for command in [
        vec!["EVAL", "return 1", "0"],
        vec!["PUBLISH", "channel", "message"],
    ] {
        b.cmd(&["CLIENT", "PAUSE", "400", "WRITE"]);
        let started = Instant::now();
        a.cmd(&command);
        assert!(
            started.elapsed() >= Duration::from_millis(350),
            "{command:?} was not held"
        );
    }
}

/// Redis's "pause RO" scenarios (unit/pause): a script that declares
/// `no-writes` (EVAL's shebang, a cached EVALSHA, a function's flags, and
/// inside MULTI) runs during CLIENT PAUSE WRITE; a script with a shebang and
/// no flags is held like a write; each held client counts in INFO
/// `blocked_clients` until UNPAUSE. Run on redis-server and Firn alike.
fn pause_holds_scripts_by_their_declared_flags(server: &Server) {
    let mut admin = server.conn();
    let mut client = server.conn();
    admin.cmd(&["SET", "x", "y"]);
    admin.cmd(&[
        "FUNCTION",
        "LOAD",
        "REPLACE",
        "#!lua name=pauselib\nredis.register_function{function_name='ro', callback=function() return 'hello' end, flags={'no-writes'}}",
    ]);
    let sha = match client.cmd(&["SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn 2"]) {
        R::Bulk(Some(sha)) => String::from_utf8(sha).expect("hex"),
        other => panic!("SCRIPT LOAD: {other:?}"),
    };
    admin.cmd(&["CLIENT", "PAUSE", "60000", "WRITE"]);
    let no_writes = "#!lua flags=no-writes\nreturn 'unique script'";
    assert_eq!(
        client.cmd(&["EVAL", no_writes, "0"]),
        R::Bulk(Some(b"unique script".to_vec()))
    );
    assert_eq!(
        client.cmd(&["EVAL_RO", "return redis.call('GeT', 'x')", "1", "x"]),
        R::Bulk(Some(b"y".to_vec()))
    );
    assert_eq!(client.cmd(&["EVALSHA", &sha, "0"]), R::Int(2));
    assert_eq!(
        client.cmd(&["FCALL", "ro", "0"]),
        R::Bulk(Some(b"hello".to_vec()))
    );
    client.cmd(&["MULTI"]);
    client.cmd(&["EVAL", "#!lua flags=no-writes\nreturn 12", "0"]);
    assert_eq!(client.cmd(&["EXEC"]), R::Array(Some(vec![R::Int(12)])));
    assert_eq!(
        firn_testkit::info::field(&mut admin, "clients", "blocked_clients"),
        0
    );

    // Held: a shebang without flags, a script without a shebang.
    let mut held = [server.conn(), server.conn()];
    held[0].send(&[b"EVAL", b"#!lua\nreturn 1", b"0"]);
    held[1].send(&[b"EVAL", b"return 1", b"0"]);
    assert!(
        wait_for(|| firn_testkit::info::field(&mut admin, "clients", "blocked_clients") == 2),
        "two held scripts are blocked clients"
    );
    admin.cmd(&["CLIENT", "UNPAUSE"]);
    for conn in &mut held {
        assert_eq!(conn.read_reply().1, R::Int(1));
    }
    assert_eq!(
        firn_testkit::info::field(&mut admin, "clients", "blocked_clients"),
        0
    );
}

#[test]
fn pause_holds_scripts_by_their_declared_flags_as_redis() {
    pause_holds_scripts_by_their_declared_flags(&Server::redis());
    pause_holds_scripts_by_their_declared_flags(&Server::firn());
}

/// Redis's "Test both active and passive expires are skipped during client
/// pause": under CLIENT PAUSE WRITE an expired key reads as missing but is
/// not deleted (an expiry is a write), and the deletions happen once the
/// pause ends. Run on redis-server and Firn alike.
fn pause_holds_expiries(server: &Server) {
    let mut c = server.conn();
    let expired = |c: &mut Conn| firn_testkit::info::field(c, "stats", "expired_keys");
    let before = expired(&mut c);
    c.cmd(&["MULTI"]);
    c.cmd(&["SET", "foo{t}", "bar", "PX", "10"]);
    c.cmd(&["SET", "bar{t}", "foo", "PX", "10"]);
    c.cmd(&["CLIENT", "PAUSE", "50000", "WRITE"]);
    c.cmd(&["EXEC"]);
    assert!(wait_for(|| {
        c.cmd(&["GET", "foo{t}"]) == R::Bulk(None) && c.cmd(&["GET", "bar{t}"]) == R::Bulk(None)
    }));
    // Let the active cycle have its chances too.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        expired(&mut c),
        before,
        "no key was deleted during the pause"
    );
    c.cmd(&["CLIENT", "UNPAUSE"]);
    c.cmd(&["GET", "foo{t}"]);
    c.cmd(&["GET", "bar{t}"]);
    assert_eq!(expired(&mut c), before + 2);
}

#[test]
fn pause_holds_expiries_as_redis() {
    pause_holds_expiries(&Server::redis());
    pause_holds_expiries(&Server::firn());
}
