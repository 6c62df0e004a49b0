//! Hostile clients. Each case runs the same hostile client against
//! redis-server 7.0.15 and firn and checks three things:
//!
//! 1. what the hostile client gets (replies, or being disconnected) is the
//!    same from both servers, where Redis is deterministic;
//! 2. another client kept being served: a [`Pinger`] sends PING after PING
//!    on its own connection while the hostile client acts, and each must
//!    come back within the harness's read timeout (10 s, generous on
//!    purpose: no timing ratios);
//! 3. the server stayed up and kept what it acknowledged.
//!
//! A few cases are firn-only, where firn deliberately differs from Redis
//! (docs/compatibility.md): a client that never reads its replies is not
//! buffered without bound.

use firn_testkit::conn::{Event, ReadError};
use firn_testkit::{encode_request, info, reply::escape, Conn, Kind, Server, R};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a hostile client may take to be dealt with.
const DEADLINE: Duration = Duration::from_secs(20);
const POLL: Duration = Duration::from_millis(20);

/// Both servers, fresh.
fn both() -> [Server; 2] {
    [Server::redis(), Server::firn()]
}

/// Sends PING on its own connection, again and again, until stopped.
struct Pinger {
    stop: Arc<AtomicBool>,
    pongs: Arc<AtomicU64>,
    thread: Option<JoinHandle<Result<(), String>>>,
}

impl Pinger {
    fn start(server: &Server) -> Pinger {
        let mut conn = server.conn();
        let stop = Arc::new(AtomicBool::new(false));
        let pongs = Arc::new(AtomicU64::new(0));
        let (stop2, pongs2) = (stop.clone(), pongs.clone());
        let thread = std::thread::spawn(move || {
            while !stop2.load(Ordering::Acquire) {
                match conn.try_read_reply_after(&[b"PING"]) {
                    Ok(R::Simple(s)) if s == "PONG" => {
                        pongs2.fetch_add(1, Ordering::AcqRel);
                    }
                    other => return Err(format!("PING got {other:?}")),
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(())
        });
        let pinger = Pinger {
            stop,
            pongs,
            thread: Some(thread),
        };
        pinger.wait_for_pongs(1);
        pinger
    }

    /// Waits until `n` more PINGs have been answered.
    fn wait_for_pongs(&self, n: u64) {
        let target = self.pongs.load(Ordering::Acquire) + n;
        let deadline = Instant::now() + DEADLINE;
        while self.pongs.load(Ordering::Acquire) < target {
            if self.thread.as_ref().is_some_and(|t| t.is_finished()) {
                break;
            }
            assert!(Instant::now() < deadline, "PINGs stopped being answered");
            std::thread::sleep(POLL);
        }
    }

    /// Stops; panics if any PING failed or timed out.
    fn finish(mut self) {
        self.wait_for_pongs(2);
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let result = thread.join().expect("pinger thread");
            if let Err(e) = result {
                panic!("another client was not served: {e}");
            }
        }
    }
}

trait ConnExt {
    fn try_read_reply_after(&mut self, args: &[&[u8]]) -> Result<R, String>;
}

impl ConnExt for Conn {
    fn try_read_reply_after(&mut self, args: &[&[u8]]) -> Result<R, String> {
        self.try_send_raw(&encode_request(args))
            .map_err(|e| e.to_string())?;
        self.try_read_reply()
            .map(|(_, r)| r)
            .map_err(|e| format!("{e:?}"))
    }
}

/// The server still answers a new connection.
fn assert_up(server: &Server) {
    let mut conn = server.conn();
    assert_eq!(
        conn.cmd(&["PING"]),
        R::Simple("PONG".into()),
        "{:?} no longer answers",
        server.kind()
    );
}

/// Polls until the server reports `n` connected clients.
fn wait_for_clients(conn: &mut Conn, n: i64) {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let now = info::field(conn, "clients", "connected_clients");
        if now == n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "connected_clients stayed {now}, expected {n}"
        );
        std::thread::sleep(POLL);
    }
}

fn raw(server: &Server) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", server.port())).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    stream
}

/// Reads and discards until the server closes the connection; returns the
/// bytes received, or `None` if it stayed open for `wait`.
fn drain_until_closed(stream: &mut TcpStream, wait: Duration) -> Option<u64> {
    let deadline = Instant::now() + wait;
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("read timeout");
    while Instant::now() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => return Some(total),
            Ok(n) => total += n as u64,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return Some(total),
        }
    }
    None
}

/// Reads exactly `n` bytes, keeping only the last `keep`.
fn read_exactly(stream: &mut TcpStream, mut n: u64, keep: usize) -> Vec<u8> {
    let mut buf = vec![0u8; 1 << 20];
    let mut tail = Vec::new();
    while n > 0 {
        let want = (n as usize).min(buf.len());
        let got = stream.read(&mut buf[..want]).expect("read");
        assert!(got > 0, "closed with {n} bytes to go");
        tail.extend_from_slice(&buf[..got]);
        if tail.len() > keep {
            tail.drain(..tail.len() - keep);
        }
        n -= got as u64;
    }
    tail
}

fn read_line(stream: &mut TcpStream) -> Vec<u8> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        assert_eq!(stream.read(&mut byte).expect("read"), 1, "closed");
        line.push(byte[0]);
    }
    line
}

/// Replies (raw) until the connection closes or goes quiet for 300 ms.
fn replies_until_quiet(conn: &mut Conn) -> (Vec<Vec<u8>>, bool) {
    let mut replies = Vec::new();
    for _ in 0..10_000 {
        match conn.wait_event(Duration::from_millis(300)) {
            Event::Closed => return (replies, true),
            Event::Silent => return (replies, false),
            Event::Failed(e) => panic!("read failed: {e}"),
            Event::Data(_) => match conn.try_read_reply() {
                Ok((raw, _)) => replies.push(raw),
                Err(ReadError::Closed) => return (replies, true),
                Err(e) => panic!("bad reply: {e:?}"),
            },
        }
    }
    (replies, false)
}

/// Peak resident memory of a process, in bytes (Linux).
fn peak_rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Polls until the server runs nothing but these polls (each one INFO)
/// for a second.
fn wait_until_quiescent(conn: &mut Conn) {
    let deadline = Instant::now() + DEADLINE;
    let mut last = info::field(conn, "stats", "total_commands_processed");
    let mut quiet_polls = 0;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        let now = info::field(conn, "stats", "total_commands_processed");
        quiet_polls = if now - last <= 1 { quiet_polls + 1 } else { 0 };
        if quiet_polls >= 10 {
            return;
        }
        last = now;
    }
    panic!("the server never stopped processing commands");
}

// ------------------------------------------------------------ output buffers

const BIG_VALUE_BYTES: usize = 100_000;
/// `$100000\r\n` + value + `\r\n`.
const BIG_REPLY_BYTES: u64 = 9 + BIG_VALUE_BYTES as u64 + 2;

fn pipelined_gets(n: usize) -> Vec<u8> {
    let mut req = Vec::new();
    for _ in 0..n {
        req.extend_from_slice(&encode_request(&[b"GET", b"big"]));
    }
    req
}

/// A client pipelines GETs of a 100 KB value and reads nothing: with
/// `client-output-buffer-limit normal 1mb 0 0` both servers close it, and
/// everyone else is served meanwhile.
#[test]
fn output_buffer_hard_limit_closes_a_client_that_does_not_read() {
    const GETS: usize = 500;
    for server in both() {
        let mut control = server.conn();
        control.cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 1mb 0 0",
        ]);
        let value = "v".repeat(BIG_VALUE_BYTES);
        control.cmd(&["SET", "big", &value]);
        let pinger = Pinger::start(&server);
        wait_for_clients(&mut control, 2);
        let mut hostile = raw(&server);
        hostile.write_all(&pipelined_gets(GETS)).expect("write");
        for i in 1..=50 {
            assert_eq!(control.cmd(&["INCR", "acked"]), R::Int(i));
        }
        wait_for_clients(&mut control, 2);
        let received = drain_until_closed(&mut hostile, DEADLINE)
            .unwrap_or_else(|| panic!("{:?} kept the client open", server.kind()));
        assert!(
            received < GETS as u64 * BIG_REPLY_BYTES,
            "{:?} sent every reply ({received} bytes)",
            server.kind()
        );
        pinger.finish();
        assert_eq!(control.cmd(&["GET", "acked"]), R::bulk(b"50"));
        assert_up(&server);
    }
}

/// Above the soft limit for longer than its seconds: closed.
#[test]
fn output_buffer_soft_limit_closes_after_its_seconds() {
    for server in both() {
        let mut control = server.conn();
        control.cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 0 512kb 1",
        ]);
        control.cmd(&["SET", "big", &"v".repeat(BIG_VALUE_BYTES)]);
        let pinger = Pinger::start(&server);
        let mut hostile = raw(&server);
        // Redis checks the soft limit when it adds a reply, so keep adding.
        let deadline = Instant::now() + DEADLINE;
        let mut closed = false;
        while Instant::now() < deadline && !closed {
            closed = hostile.write_all(&pipelined_gets(10)).is_err();
            std::thread::sleep(Duration::from_millis(100));
            if !closed && info::field(&mut control, "clients", "connected_clients") == 2 {
                closed = true;
            }
        }
        assert!(closed, "{:?} kept the client open", server.kind());
        assert!(drain_until_closed(&mut hostile, DEADLINE).is_some());
        pinger.finish();
        assert_up(&server);
    }
}

/// Default limits (Redis: unlimited for normal clients): firn stops
/// reading a client whose unsent replies pass its bound, so its memory
/// stays bounded, and the client gets every reply once it reads.
#[test]
fn a_client_that_does_not_read_is_not_buffered_without_bound() {
    const GETS: usize = 3000; // 300 MB of replies
    let server = Server::firn();
    if server.kind() != Kind::Firn {
        return;
    }
    let pid = server.pid().expect("pid");
    let mut control = server.conn();
    control.cmd(&["SET", "big", &"v".repeat(BIG_VALUE_BYTES)]);
    let before = peak_rss_bytes(pid);
    let mut hostile = raw(&server);
    hostile.write_all(&pipelined_gets(GETS)).expect("write");
    wait_until_quiescent(&mut control);
    let grown = peak_rss_bytes(pid).saturating_sub(before);
    eprintln!(
        "peak RSS grew by {} MB for 300 MB of unread replies",
        grown >> 20
    );
    assert!(
        grown < 200 << 20,
        "firn grew by {} MB for a client that does not read",
        grown >> 20
    );
    // The quiescence polls above were served while the client was held.
    let tail = read_exactly(&mut hostile, GETS as u64 * BIG_REPLY_BYTES, 4);
    assert_eq!(tail, b"vv\r\n");
    assert_up(&server);
}

// ------------------------------------------------------------ slow clients

/// One byte at a time, with idle timeout set shorter than the whole
/// request: every byte is traffic, so both servers run it.
#[test]
fn a_client_sending_one_byte_at_a_time_is_served_and_serves_no_one_less() {
    let mut outcomes = Vec::new();
    for server in both() {
        let mut control = server.conn();
        control.cmd(&["CONFIG", "SET", "timeout", "1"]);
        let pinger = Pinger::start(&server);
        let mut slow = raw(&server);
        let req = encode_request(&[b"SET", b"slow", b"value"]);
        for byte in &req {
            slow.write_all(&[*byte]).expect("write");
            std::thread::sleep(Duration::from_millis(60));
        }
        outcomes.push(read_line(&mut slow));
        pinger.finish();
        let mut check = server.conn();
        check.cmd(&["CONFIG", "SET", "timeout", "0"]);
        assert_eq!(check.cmd(&["GET", "slow"]), R::bulk(b"value"));
    }
    assert_eq!(outcomes[0], outcomes[1]);
    assert_eq!(outcomes[0], b"+OK\r\n");
}

/// A request that never finishes: `timeout` closes the client.
#[test]
fn an_unfinished_request_is_closed_by_timeout() {
    for server in both() {
        let mut control = server.conn();
        control.cmd(&["CONFIG", "SET", "timeout", "1"]);
        let pinger = Pinger::start(&server);
        let mut hostile = raw(&server);
        hostile
            .write_all(b"*2\r\n$3\r\nGET\r\n$5\r\nab")
            .expect("write");
        let received = drain_until_closed(&mut hostile, DEADLINE);
        assert_eq!(received, Some(0), "{:?}", server.kind());
        pinger.finish();
        let mut check = server.conn();
        check.cmd(&["CONFIG", "SET", "timeout", "0"]);
        assert_up(&server);
    }
}

/// `client-query-buffer-limit`: a bulk in progress past it closes the
/// client without a reply; a request whose arguments are each below it
/// works, as in Redis (complete arguments leave the query buffer).
#[test]
fn query_buffer_limit() {
    for server in both() {
        let mut control = server.conn();
        control.cmd(&["CONFIG", "SET", "client-query-buffer-limit", "1mb"]);
        let pinger = Pinger::start(&server);

        let mut hostile = raw(&server);
        let mut req = b"*2\r\n$4\r\nECHO\r\n$2000000\r\n".to_vec();
        req.extend(std::iter::repeat_n(b'x', 1_100_000));
        let _ = hostile.write_all(&req);
        assert_eq!(
            drain_until_closed(&mut hostile, DEADLINE),
            Some(0),
            "{:?}",
            server.kind()
        );

        let mut fine = server.conn();
        let part = vec![b'p'; 800_000];
        let mut req = encode_request(&[b"SET", &part, &part]);
        req.extend_from_slice(&encode_request(&[b"STRLEN", &part]));
        fine.send_raw(&req);
        assert_eq!(fine.read_reply().1, R::Simple("OK".into()));
        assert_eq!(fine.read_reply().1, R::Int(800_000));
        pinger.finish();
        assert_up(&server);
    }
}

// ------------------------------------------------------------ maxclients

/// A burst of connections past maxclients: the surplus gets Redis's error
/// and is closed; the ones admitted and the old ones work.
#[test]
fn a_burst_of_connections_past_maxclients() {
    const MAX: usize = 8;
    const BURST: usize = 20;
    let mut outcomes = Vec::new();
    for server in both() {
        let mut control = server.conn();
        control.cmd(&["CONFIG", "SET", "maxclients", &MAX.to_string()]);
        wait_for_clients(&mut control, 1);
        let mut burst: Vec<TcpStream> = (0..BURST).map(|_| raw(&server)).collect();
        let (mut admitted, mut refused) = (0, 0);
        for stream in &mut burst {
            let _ = stream.write_all(b"PING\r\n");
            match read_line(stream).as_slice() {
                b"+PONG\r\n" => admitted += 1,
                b"-ERR max number of clients reached\r\n" => {
                    assert_eq!(drain_until_closed(stream, DEADLINE), Some(0));
                    refused += 1;
                }
                other => panic!("unexpected {:?}", String::from_utf8_lossy(other)),
            }
        }
        assert_eq!(control.cmd(&["PING"]), R::Simple("PONG".into()));
        drop(burst);
        wait_for_clients(&mut control, 1);
        assert_up(&server);
        outcomes.push((admitted, refused));
    }
    assert_eq!(outcomes[0], (MAX - 1, BURST - MAX + 1));
    assert_eq!(outcomes[0], outcomes[1]);
}

// ------------------------------------------------------------ huge requests

/// Hundreds of thousands of arguments in one request work, with identical
/// replies, and other clients are served meanwhile.
#[test]
fn a_request_with_hundreds_of_thousands_of_arguments() {
    const KEYS: usize = 150_000;
    let keys: Vec<Vec<u8>> = (0..KEYS).map(|i| format!("key:{i}").into_bytes()).collect();
    let mut mset: Vec<&[u8]> = vec![b"MSET"];
    for k in &keys {
        mset.push(k);
        mset.push(b"v");
    }
    let mut mget: Vec<&[u8]> = vec![b"MGET"];
    mget.extend(keys.iter().map(|k| k.as_slice()));
    mget.push(b"missing");
    let mut del: Vec<&[u8]> = vec![b"DEL"];
    del.extend(keys.iter().map(|k| k.as_slice()));
    let requests = [
        encode_request(&mset),
        encode_request(&mget),
        encode_request(&del),
    ];
    let mut replies = Vec::new();
    for server in both() {
        let pinger = Pinger::start(&server);
        let mut conn = server.conn();
        let mut mine = Vec::new();
        for req in &requests {
            conn.send_raw(req);
            mine.push(conn.read_reply().0);
        }
        pinger.finish();
        assert_up(&server);
        replies.push(mine);
    }
    assert_eq!(replies[0], replies[1]);
    assert_eq!(replies[0][2], format!(":{KEYS}\r\n").into_bytes());
}

/// Multibulk and bulk lengths past the limits: the same error and close.
#[test]
fn lengths_past_the_limits() {
    let cases: &[&[u8]] = &[
        b"*2147483648\r\n",
        b"*1073741825\r\n$4\r\nPING\r\n",
        b"*-2147483649\r\n*1\r\n$4\r\nPING\r\n",
        b"*1\r\n$536870913\r\n",
        b"*1\r\n$-2\r\n",
        b"*1\r\n$1048577\r\n",
    ];
    let mut outcomes = Vec::new();
    for server in both() {
        let pinger = Pinger::start(&server);
        let mut control = server.conn();
        control.cmd(&["CONFIG", "SET", "proto-max-bulk-len", "1mb"]);
        let mut mine = Vec::new();
        for case in cases {
            let mut conn = server.conn();
            conn.send_raw(case);
            mine.push(replies_until_quiet(&mut conn));
        }
        pinger.finish();
        assert_up(&server);
        outcomes.push(mine);
    }
    assert_eq!(outcomes[0], outcomes[1]);
}

// ------------------------------------------------------------ big values

/// LCS, GETRANGE and BITCOUNT over a 512 MB value: Redis's replies and
/// errors, other clients served while they run, and firn's memory stays
/// within the reply plus a bounded amount.
#[test]
fn commands_over_a_512mb_value() {
    let mut outcomes = Vec::new();
    for server in both() {
        let mut conn = server.conn();
        let mut mine = Vec::new();
        let pinger = Pinger::start(&server);
        let before = server.pid().map(peak_rss_bytes).unwrap_or(0);
        for cmd in [
            &["SETRANGE", "big", "536870911", "x"][..],
            &["SET", "small", "abc"],
            &["STRLEN", "big"],
            &["GETRANGE", "big", "536870900", "-1"],
            &["GETRANGE", "big", "-3", "-1"],
            &["BITCOUNT", "big"],
            &["BITCOUNT", "big", "0", "-1", "BIT"],
            &["BITCOUNT", "big", "-1", "-1"],
            &["BITCOUNT", "big", "1000", "536870910"],
            &["LCS", "big", "nokey"],
            &["LCS", "big", "big", "LEN"],
            &["LCS", "small", "big", "IDX"],
            &["LCS", "small", "small"],
        ] {
            let args: Vec<&[u8]> = cmd.iter().map(|a| a.as_bytes()).collect();
            conn.send(&args);
            mine.push(conn.read_reply().0);
        }
        // The whole value, read raw: 512 MB + the header and the CRLF.
        let mut stream = raw(&server);
        stream
            .write_all(&encode_request(&[b"GETRANGE", b"big", b"0", b"-1"]))
            .expect("write");
        assert_eq!(read_line(&mut stream), b"$536870912\r\n");
        assert_eq!(read_exactly(&mut stream, 536_870_914, 4), b"\0x\r\n");
        pinger.finish();
        if server.kind() == Kind::Firn {
            let grown = server
                .pid()
                .map(peak_rss_bytes)
                .unwrap_or(0)
                .saturating_sub(before);
            eprintln!("peak RSS grew by {} MB serving a 512 MB reply", grown >> 20);
            assert!(
                grown < 900 << 20,
                "firn grew by {} MB serving a 512 MB reply",
                grown >> 20
            );
        }
        assert_up(&server);
        outcomes.push(mine);
    }
    assert_eq!(outcomes[0], outcomes[1]);
}

// ------------------------------------------------------------ malformed input

/// A deterministic byte soup (xorshift).
fn junk(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.max(1);
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// Malformed requests: every reply byte-identical and the same close.
#[test]
fn malformed_requests() {
    let mut cases: Vec<Vec<u8>> = vec![
        b"*abc\r\n".to_vec(),
        b"*1\r\n$x\r\n".to_vec(),
        b"*3\r\n$3\r\nSET\r\n:1\r\n".to_vec(),
        b"*1\r\n$-5\r\n".to_vec(),
        b"*99999999999999999999\r\n".to_vec(),
        b"*1\r\n$99999999999999999999\r\n".to_vec(),
        b"SET k \"unbalanced\r\n".to_vec(),
        b"ECHO 'a'b\r\nPING\r\n".to_vec(),
        b"PING\r\n\0\0\0*1\r\n".to_vec(),
        b"\x80\xff\xfe\r\nPING\r\n".to_vec(),
    ];
    for seed in 1..=6 {
        // Byte soup without NUL or '*' first, so it is parsed as inline
        // lines (a NUL makes both servers wait for the rest of a line).
        let mut soup = junk(seed, 2000);
        soup.retain(|b| *b != 0);
        soup.insert(0, b'x');
        cases.push(soup);
    }
    let mut outcomes = Vec::new();
    for server in both() {
        let pinger = Pinger::start(&server);
        let mut mine = Vec::new();
        for case in &cases {
            let mut conn = server.conn();
            let _ = conn.try_send_raw(case);
            mine.push(replies_until_quiet(&mut conn));
        }
        pinger.finish();
        assert_up(&server);
        outcomes.push(mine);
    }
    for (i, (r, f)) in outcomes[0].iter().zip(&outcomes[1]).enumerate() {
        assert_eq!(r, f, "case {i}: {}", escape(&cases[i], 200));
    }
}

/// A client that disconnects in the middle of a pipeline: what was
/// acknowledged is there, the half request never ran.
#[test]
fn a_client_disconnecting_mid_pipeline() {
    let mut outcomes = Vec::new();
    for server in both() {
        let pinger = Pinger::start(&server);
        let mut conn = server.conn();
        let mut req = Vec::new();
        for i in 0..2000 {
            req.extend_from_slice(&encode_request(&[b"INCR", b"counter"]));
            req.extend_from_slice(&encode_request(&[b"SET", format!("k{i}").as_bytes(), b"v"]));
        }
        conn.send_raw(&req);
        let mut acked = 0;
        for _ in 0..100 {
            if conn.read_reply().1 == R::Simple("OK".into()) {
                acked += 1;
            }
        }
        conn.send_raw(b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$5\r\nval");
        conn.shutdown();
        let mut check = server.conn();
        assert_eq!(check.cmd(&["EXISTS", "half"]), R::Int(0));
        let counter = check.cmd(&["GET", "counter"]);
        let counter: i64 = counter.as_str().and_then(|s| s.parse().ok()).unwrap_or(0);
        assert!(counter >= acked, "{counter} < {acked} acknowledged");
        pinger.finish();
        assert_up(&server);
        outcomes.push(check.cmd(&["EXISTS", "k0", "k49"]));
    }
    assert_eq!(outcomes[0], outcomes[1]);
}

// ------------------------------------------------------------ ACL

/// Pipelined `AUTH user <wrong>` requests, `n` of them.
fn wrong_auths(n: usize, user: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let password = format!("guess{i}");
        out.extend(encode_request(&[
            b"AUTH",
            user.as_bytes(),
            password.as_bytes(),
        ]));
    }
    out
}

/// The `count` of the newest ACL LOG entry.
fn newest_log_count(conn: &mut Conn) -> R {
    match conn.cmd(&["ACL", "LOG", "1"]) {
        R::Array(Some(entries)) => match entries.first() {
            Some(R::Array(Some(fields))) => fields
                .chunks(2)
                .find(|pair| pair[0].as_str().as_deref() == Some("count"))
                .map(|pair| pair[1].clone())
                .unwrap_or(R::Null),
            other => panic!("ACL LOG entry {other:?}"),
        },
        other => panic!("ACL LOG {other:?}"),
    }
}

/// A brute-force AUTH: 20,000 wrong passwords pipelined on one connection.
/// Every failure is answered WRONGPASS and counted in the ACL LOG (one
/// entry: they are alike and less than a minute apart), another client is
/// served meanwhile, and the right password still works afterwards.
#[test]
fn brute_force_auth_is_logged_and_serves_no_one_less() {
    const TRIES: usize = 20_000;
    let mut counts = Vec::new();
    for server in both() {
        let mut admin = server.conn();
        admin.cmd(&["ACL", "SETUSER", "victim", "on", ">right", "+@all", "~*"]);
        let pinger = Pinger::start(&server);
        let mut attacker = raw(&server);
        attacker
            .write_all(&wrong_auths(TRIES, "victim"))
            .unwrap_or_else(|e| panic!("send: {e}"));
        let expected = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n";
        let replies = read_exactly(
            &mut attacker,
            (expected.len() * TRIES) as u64,
            expected.len(),
        );
        assert_eq!(replies, expected, "{:?}", server.kind());
        pinger.finish();
        counts.push(newest_log_count(&mut admin));
        let mut user = server.conn();
        assert_eq!(
            user.cmd(&["AUTH", "victim", "right"]),
            R::Simple("OK".into())
        );
        assert_up(&server);
    }
    assert_eq!(counts[0], R::Int(TRIES as i64));
    assert_eq!(counts[0], counts[1]);
}

/// 10,000 users with 100 key patterns each: created while another client
/// is served, and a user's check still answers as before (how fast is
/// bench/acl.sh's question, not a test's).
#[test]
fn ten_thousand_users_with_a_hundred_patterns_each() {
    const USERS: usize = 10_000;
    const PATTERNS: usize = 100;
    let server = Server::firn();
    let pinger = Pinger::start(&server);
    let mut stream = raw(&server);
    let mut batch = Vec::new();
    for u in 0..USERS {
        let name = format!("user{u}");
        let mut args: Vec<Vec<u8>> = vec![b"ACL".to_vec(), b"SETUSER".to_vec(), name.into_bytes()];
        args.extend([
            b"on".to_vec(),
            b">pw".to_vec(),
            b"+get".to_vec(),
            b"+set".to_vec(),
        ]);
        for p in 0..PATTERNS {
            args.push(format!("~u{u}:p{p}:*").into_bytes());
        }
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        batch.extend(encode_request(&refs));
        if batch.len() > 1 << 20 || u == USERS - 1 {
            stream
                .write_all(&batch)
                .unwrap_or_else(|e| panic!("send: {e}"));
            batch.clear();
        }
    }
    let ok = b"+OK\r\n";
    assert_eq!(
        read_exactly(&mut stream, (ok.len() * USERS) as u64, ok.len()),
        ok
    );
    pinger.finish();
    let mut conn = server.conn();
    match conn.cmd(&["ACL", "USERS"]) {
        R::Array(Some(users)) => assert_eq!(users.len(), USERS + 1),
        other => panic!("ACL USERS {other:?}"),
    }
    let last = USERS - 1;
    assert_eq!(
        conn.cmd(&["AUTH", &format!("user{last}"), "pw"]),
        R::Simple("OK".into())
    );
    let own = format!("u{last}:p{}:k", PATTERNS - 1);
    assert_eq!(conn.cmd(&["SET", &own, "v"]), R::Simple("OK".into()));
    assert_eq!(conn.cmd(&["GET", &own]), R::bulk(b"v"));
    match conn.cmd(&["GET", "u0:p0:k"]) {
        R::Error(e) => assert!(e.starts_with("NOPERM"), "{e}"),
        other => panic!("another user's key: {other:?}"),
    }
    assert_up(&server);
}
