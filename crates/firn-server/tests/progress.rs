//! Progress of long operations in INFO persistence: a full sync and a
//! live import (Redis's `loading_*` fields and Firn's
//! `firn_progress_<kind>` lines), DEBUG RELOAD and the start-up's WAL
//! replay (`firn_progress_last_finished`).
//!
//! The syncs come from a primary played by the test on a local socket: it
//! sends part of a payload and waits, so the replica is caught half way
//! for as long as the test looks, with no timing involved.

use firn_testkit::info::Info;
use firn_testkit::{wait_until, Server, R};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);

fn firn() -> Server {
    Server::firn_with(&["--enable-debug-command", "yes"])
}

fn persistence(server: &Server) -> Info {
    Info::read(&mut server.conn(), "persistence")
}

/// The `key=value` pairs of a Firn progress line.
fn pairs(value: &str) -> Vec<(String, String)> {
    value
        .split(',')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn pair(value: &str, name: &str) -> String {
    pairs(value)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no {name} in {value}"))
}

/// One request from the replica (it sends one and waits for the reply).
fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Vec<String> {
    loop {
        if let Some((args, used)) = parse_request(buf) {
            buf.drain(..used);
            return args;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).expect("read from the replica");
        assert!(n > 0, "the replica closed the link");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// `*N` then N `$len` bulk strings, if `buf` holds a whole request.
fn parse_request(buf: &[u8]) -> Option<(Vec<String>, usize)> {
    let text = std::str::from_utf8(buf).ok()?;
    let mut at = 0;
    let mut next_line = || {
        let end = text[at..].find("\r\n")? + at;
        let line = &text[at..end];
        at = end + 2;
        Some(line)
    };
    let count: usize = next_line()?.strip_prefix('*')?.parse().ok()?;
    let mut args = Vec::new();
    for _ in 0..count {
        next_line()?;
        args.push(next_line()?.to_string());
    }
    Some((args, at))
}

/// Plays a primary's side of the handshake up to `+FULLRESYNC`, and
/// returns the link, ready for the payload.
fn accept_replica(listener: &TcpListener) -> TcpStream {
    let (mut stream, _) = listener.accept().expect("the replica connects");
    stream.set_read_timeout(Some(WAIT)).expect("read timeout");
    let mut buf = Vec::new();
    loop {
        let args = read_request(&mut stream, &mut buf);
        let reply = match args[0].to_ascii_uppercase().as_str() {
            "PING" => "+PONG\r\n".to_string(),
            "PSYNC" => format!("+FULLRESYNC {} 0\r\n", "a".repeat(40)),
            _ => "+OK\r\n".to_string(),
        };
        stream.write_all(reply.as_bytes()).expect("reply");
        if reply.starts_with("+FULLRESYNC") {
            return stream;
        }
    }
}

/// A replica of the primary the test plays, and that primary's link.
fn replica_of_the_test() -> (Server, TcpListener, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port().to_string();
    let replica = firn();
    assert_eq!(
        replica.conn().cmd(&["REPLICAOF", "127.0.0.1", &port]),
        R::Simple("OK".into())
    );
    let link = accept_replica(&listener);
    (replica, listener, link)
}

#[test]
fn an_import_from_a_redis_primary_shows_loading_fields_half_way() {
    let (replica, _listener, mut link) = replica_of_the_test();
    // An empty RDB: header, EOF, checksum 0 (`rdbchecksum no`).
    let mut rdb = b"REDIS0010".to_vec();
    rdb.push(0xFF);
    rdb.extend_from_slice(&[0; 8]);
    assert_eq!(rdb.len(), 18);
    link.write_all(b"$18\r\n").unwrap();
    link.write_all(&rdb[..9]).unwrap();

    wait_until("9 bytes of 18 loaded", WAIT, || {
        persistence(&replica).get("loading_loaded_bytes") == Some("9")
    });
    let info = persistence(&replica);
    assert_eq!(info.field("loading"), 1, "{}", info.text());
    assert_eq!(info.field("async_loading"), 0);
    assert_eq!(info.field("loading_total_bytes"), 18);
    assert_eq!(info.field("loading_rdb_used_mem"), 0);
    assert_eq!(info.get("loading_loaded_perc"), Some("50.00"));
    assert!(info.field("loading_eta_seconds") >= 0);
    let started = info.field("loading_start_time");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!((now - 60..=now).contains(&started), "{started} vs {now}");
    let line = info.get("firn_progress_import").expect("import line");
    assert_eq!(pair(line, "unit"), "bytes");
    assert_eq!(pair(line, "done"), "9");
    assert_eq!(pair(line, "total"), "18");
    assert_eq!(pair(line, "perc"), "50.00");
    let perc: f64 = pair(line, "perc").parse().unwrap();
    assert!(perc > 0.0 && perc < 100.0);

    link.write_all(&rdb[9..]).unwrap();
    wait_until("the import to end", WAIT, || {
        persistence(&replica).field("loading") == 0
    });
    let info = persistence(&replica);
    assert_eq!(info.get("loading_loaded_bytes"), None, "{}", info.text());
    assert_eq!(info.get("firn_progress_import"), None);
    let last = info.get("firn_progress_last_finished").expect("kept");
    assert_eq!(pair(last, "kind"), "import");
    assert_eq!(pair(last, "done"), "18");
}

#[test]
fn a_full_sync_from_a_firn_primary_shows_progress_until_the_link_drops() {
    let (replica, listener, mut link) = replica_of_the_test();
    // One 1000-byte file announced, 400 bytes of it sent.
    link.write_all(b"$FIRN-CHECKPOINT 0 1 1000\r\n1000 000009.sst\r\n")
        .unwrap();
    link.write_all(&[7u8; 400]).unwrap();

    wait_until("400 bytes of 1000 received", WAIT, || {
        persistence(&replica)
            .get("firn_progress_full_sync")
            .is_some_and(|line| pair(line, "done") == "400")
    });
    let info = persistence(&replica);
    assert_eq!(info.field("loading"), 1, "{}", info.text());
    assert_eq!(info.field("loading_total_bytes"), 1000);
    assert_eq!(info.field("loading_loaded_bytes"), 400);
    assert_eq!(info.get("loading_loaded_perc"), Some("40.00"));
    let line = info.get("firn_progress_full_sync").unwrap();
    assert_eq!(pair(line, "total"), "1000");
    assert_eq!(pair(line, "perc"), "40.00");
    let eta: i64 = pair(line, "eta").parse().unwrap();
    assert!(eta >= 0, "{line}");
    // INFO replication tells the same transfer.
    let repl = Info::read(&mut replica.conn(), "replication");
    assert_eq!(repl.field("master_sync_read_bytes"), 400);

    // The primary goes away: the sync ends unfinished.
    drop(link);
    drop(listener);
    wait_until("the sync to end", WAIT, || {
        persistence(&replica).field("loading") == 0
    });
    let info = persistence(&replica);
    assert_eq!(info.get("firn_progress_full_sync"), None, "{}", info.text());
    let last = info.get("firn_progress_last_finished").expect("kept");
    assert_eq!(pair(last, "kind"), "full-sync");
    assert_eq!(pair(last, "done"), "400");
    assert_eq!(pair(last, "total"), "1000");
}

#[test]
fn debug_reload_is_kept_as_the_last_finished_operation() {
    let server = firn();
    let mut c = server.conn();
    c.cmd(&["SET", "k", "v"]);
    assert_eq!(c.cmd(&["DEBUG", "RELOAD"]), R::Simple("OK".into()));
    let info = persistence(&server);
    assert_eq!(info.field("loading"), 0);
    let last = info.get("firn_progress_last_finished").expect("kept");
    assert_eq!(pair(last, "kind"), "debug-reload");
    assert_eq!(pair(last, "unit"), "column-families");
    assert!(pair(last, "total").parse::<u64>().unwrap() > 0, "{last}");
    assert_eq!(pair(last, "done"), pair(last, "total"));
    assert_eq!(c.cmd(&["GET", "k"]), R::Bulk(Some(b"v".to_vec())));
}

#[test]
fn a_restart_after_a_crash_reports_the_wal_it_replayed() {
    let mut server = firn();
    let mut c = server.conn();
    let value = "v".repeat(1000);
    for i in 0..2000 {
        c.cmd(&["SET", &format!("key:{i}"), &value]);
    }
    drop(c);
    server.kill9_restart();
    let info = persistence(&server);
    let last = info.get("firn_progress_last_finished").expect("kept");
    assert_eq!(pair(last, "kind"), "startup-replay", "{last}");
    assert_eq!(pair(last, "unit"), "bytes");
    let total: u64 = pair(last, "total").parse().unwrap();
    assert!(total > 2_000_000, "{last}");
    assert_eq!(pair(last, "done"), pair(last, "total"));
    let log = std::fs::read_to_string(server.log_path()).unwrap_or_default();
    assert!(log.contains("WAL replayed"), "{}", server.log_tail());
    assert_eq!(
        server.conn().cmd(&["GET", "key:1999"]),
        R::Bulk(Some(value.into_bytes()))
    );
}
