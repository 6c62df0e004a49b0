//! [`Diff`]: one client of redis-server and one of firn, every command sent
//! to both and the replies compared (byte for byte, or after a
//! normalisation, or by shape only). On a mismatch it panics with both
//! replies, the last commands of its history and the test's context.

use crate::conn::{Event, ReadError};
use crate::env::{full_history, selftest};
use crate::reply::escape;
use crate::{encode_request, Conn, Server, R};
use std::fmt::Write as _;
use std::time::Duration;

/// A command argument: text or bytes.
pub trait Arg {
    fn arg_bytes(&self) -> &[u8];
}

impl Arg for &str {
    fn arg_bytes(&self) -> &[u8] {
        self.as_bytes()
    }
}
impl Arg for String {
    fn arg_bytes(&self) -> &[u8] {
        self.as_bytes()
    }
}
impl Arg for &String {
    fn arg_bytes(&self) -> &[u8] {
        self.as_bytes()
    }
}
impl Arg for &[u8] {
    fn arg_bytes(&self) -> &[u8] {
        self
    }
}
impl Arg for Vec<u8> {
    fn arg_bytes(&self) -> &[u8] {
        self
    }
}
impl Arg for &Vec<u8> {
    fn arg_bytes(&self) -> &[u8] {
        self
    }
}
impl<const N: usize> Arg for &[u8; N] {
    fn arg_bytes(&self) -> &[u8] {
        &self[..]
    }
}

/// Printable form of a command for history and failure messages.
pub fn render_command(args: &[&[u8]]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.len() <= 60
                && a.iter()
                    .all(|b| b.is_ascii_graphic() && *b != b'"' && *b != b'\\');
            if plain {
                String::from_utf8_lossy(a).into_owned()
            } else {
                format!("\"{}\"", escape(a, 60))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One client of each server.
pub struct ClientPair {
    pub redis: Conn,
    pub firn: Conn,
}

/// Sends everything to redis-server and to firn and compares the replies.
pub struct Diff {
    pub redis_server: Server,
    pub firn_server: Server,
    clients: Vec<ClientPair>,
    active: usize,
    history: Vec<String>,
    /// Extra text for failure messages (e.g. the random seed).
    pub context: String,
}

impl Default for Diff {
    fn default() -> Self {
        Diff::new()
    }
}

impl Diff {
    /// Starts both servers on fresh directories and connects to each.
    pub fn new() -> Diff {
        Diff::with_servers(Server::redis(), Server::firn())
    }

    /// Uses the given servers (e.g. started with extra arguments).
    pub fn with_servers(redis_server: Server, firn_server: Server) -> Diff {
        let clients = vec![ClientPair {
            redis: redis_server.conn(),
            firn: firn_server.conn(),
        }];
        let mut d = Diff {
            redis_server,
            firn_server,
            clients,
            active: 0,
            history: Vec::new(),
            context: String::new(),
        };
        // Both servers start on fresh directories; FLUSHALL only guards
        // against a reused one, so its reply is not part of any test.
        let pair = &mut d.clients[0];
        pair.redis.send(&[b"FLUSHALL"]);
        pair.firn.send(&[b"FLUSHALL"]);
        let _ = pair.redis.try_read_reply();
        let _ = pair.firn.try_read_reply();
        d
    }

    /// Opens another client pair and returns its index (see `use_client`).
    pub fn open_client(&mut self) -> usize {
        self.clients.push(ClientPair {
            redis: self.redis_server.conn(),
            firn: self.firn_server.conn(),
        });
        self.clients.len() - 1
    }

    /// Makes client pair `i` the one commands go to.
    pub fn use_client(&mut self, i: usize) {
        assert!(i < self.clients.len(), "no client {i}");
        self.active = i;
        self.history.push(format!("(switch to client {i})"));
    }

    /// Replaces the active client pair by fresh connections.
    pub fn reconnect(&mut self) {
        let pair = ClientPair {
            redis: self.redis_server.conn(),
            firn: self.firn_server.conn(),
        };
        self.clients[self.active] = pair;
        self.history.push("(reconnect)".into());
    }

    pub fn client(&mut self) -> &mut ClientPair {
        &mut self.clients[self.active]
    }

    /// Client pair `i`, e.g. to read what a subscriber was sent.
    pub fn client_at(&mut self, i: usize) -> &mut ClientPair {
        &mut self.clients[i]
    }

    pub fn note(&mut self, text: &str) {
        self.history.push(format!("({text})"));
    }

    fn history_text(&self) -> String {
        let keep = if full_history() { usize::MAX } else { 60 };
        let start = self.history.len().saturating_sub(keep);
        let mut s = String::new();
        if start > 0 {
            let _ = writeln!(s, "  ... {start} earlier commands");
        }
        for (i, h) in self.history.iter().enumerate().skip(start) {
            let _ = writeln!(s, "  {:>4}. {h}", i + 1);
        }
        s
    }

    /// Panics with both replies, the history and the context.
    pub fn fail(&self, what: &str, redis: &R, firn: &R) -> ! {
        panic!(
            "\n=== differential mismatch: {what}\n{}--- redis:\n{}\n--- firn{}:\n{}\n--- history:\n{}",
            if self.context.is_empty() {
                String::new()
            } else {
                format!("context: {}\n", self.context)
            },
            redis.render(),
            if selftest() { " (self-test: redis)" } else { "" },
            firn.render(),
            self.history_text()
        );
    }

    fn read_pair(&mut self, what: &str) -> ((Vec<u8>, R), (Vec<u8>, R)) {
        let pair = &mut self.clients[self.active];
        let r = pair.redis.try_read_reply();
        let f = pair.firn.try_read_reply();
        match (r, f) {
            (Ok(r), Ok(f)) => (r, f),
            (r, f) => {
                let show = |x: &Result<(Vec<u8>, R), ReadError>| match x {
                    Ok((_, tree)) => tree.clone(),
                    Err(e) => R::Simple(format!("<no reply: {e:?}>")),
                };
                let (rr, ff) = (show(&r), show(&f));
                self.fail(what, &rr, &ff)
            }
        }
    }

    /// Sends `args` to both and returns both raw replies.
    pub fn exchange<A: Arg>(&mut self, args: &[A]) -> ((Vec<u8>, R), (Vec<u8>, R)) {
        let args: Vec<&[u8]> = args.iter().map(|a| a.arg_bytes()).collect();
        let text = render_command(&args);
        self.history.push(text.clone());
        let req = encode_request(&args);
        let pair = &mut self.clients[self.active];
        pair.redis.send_raw(&req);
        if pair.firn.try_send_raw(&req).is_err() {
            self.fail(
                &text,
                &R::Simple("<sent>".into()),
                &R::Simple("<write failed>".into()),
            );
        }
        self.read_pair(&text)
    }

    /// Both replies must be byte-identical; returns the parsed reply.
    pub fn cmd<A: Arg>(&mut self, args: &[A]) -> R {
        let ((rraw, r), (fraw, f)) = self.exchange(args);
        if rraw != fraw {
            let what = self.history.last().cloned().unwrap_or_default();
            self.fail(&what, &r, &f);
        }
        r
    }

    /// Both replies must be equal after applying `normalise` to each.
    pub fn cmd_with<A: Arg>(&mut self, args: &[A], normalise: impl Fn(&R) -> R) -> R {
        let ((_, r), (_, f)) = self.exchange(args);
        let (nr, nf) = (normalise(&r), normalise(&f));
        if nr.encode() != nf.encode() {
            let what = format!(
                "{} (after normalising)",
                self.history.last().cloned().unwrap_or_default()
            );
            self.fail(&what, &nr, &nf);
        }
        r
    }

    /// For replies whose element order is unspecified (KEYS...): the
    /// top-level aggregate is sorted before comparing.
    pub fn cmd_unordered<A: Arg>(&mut self, args: &[A]) -> R {
        self.cmd_with(args, R::sorted)
    }

    /// Like `cmd_unordered`, sorting nested aggregates too.
    pub fn cmd_unordered_deep<A: Arg>(&mut self, args: &[A]) -> R {
        self.cmd_with(args, R::sorted_deep)
    }

    /// For replies that legitimately differ in value (TIME, CLIENT ID...):
    /// only the shape must match (see `R::same_shape`). Returns both.
    pub fn cmd_type_only<A: Arg>(&mut self, args: &[A]) -> (R, R) {
        let ((_, r), (_, f)) = self.exchange(args);
        if !r.same_shape(&f) {
            let what = format!(
                "{} (shape)",
                self.history.last().cloned().unwrap_or_default()
            );
            self.fail(&what, &r, &f);
        }
        (r, f)
    }

    /// Integers may differ by `tolerance` when both are >= 0 (TTL: 1, PTTL:
    /// 100); negative integers (-1, -2) and everything else must be equal.
    /// Applies element-wise inside arrays.
    pub fn cmd_approx<A: Arg>(&mut self, args: &[A], tolerance: i64) -> R {
        let ((_, r), (_, f)) = self.exchange(args);
        if !approx_eq(&r, &f, tolerance) {
            let what = format!(
                "{} (tolerance {tolerance})",
                self.history.last().cloned().unwrap_or_default()
            );
            self.fail(&what, &r, &f);
        }
        r
    }

    /// TTL with +-1 s.
    pub fn ttl(&mut self, key: &str) -> R {
        self.cmd_approx(&["TTL", key], 1)
    }

    /// PTTL with +-100 ms.
    pub fn pttl(&mut self, key: &str) -> R {
        self.cmd_approx(&["PTTL", key], 100)
    }

    /// Sends a command to both without reading a reply (CLIENT REPLY OFF,
    /// pipelining by hand); read the replies with `read_both`.
    pub fn send<A: Arg>(&mut self, args: &[A]) {
        let args: Vec<&[u8]> = args.iter().map(|a| a.arg_bytes()).collect();
        self.history
            .push(format!("(no read) {}", render_command(&args)));
        let req = encode_request(&args);
        let pair = &mut self.clients[self.active];
        pair.redis.send_raw(&req);
        pair.firn.send_raw(&req);
    }

    /// Sends raw bytes to both (protocol tests); nothing is read.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.history
            .push(format!("(raw) \"{}\"", escape(bytes, 120)));
        let pair = &mut self.clients[self.active];
        let r = pair.redis.try_send_raw(bytes);
        let f = pair.firn.try_send_raw(bytes);
        if r.is_ok() != f.is_ok() {
            let what = format!("raw write {:?} / {:?}", r.err(), f.err());
            self.fail(&what, &R::Null, &R::Null);
        }
    }

    /// Reads one reply from each and requires identical bytes.
    pub fn read_both(&mut self) -> R {
        let what = format!(
            "reply to {}",
            self.history.last().cloned().unwrap_or_default()
        );
        let ((rraw, r), (fraw, f)) = self.read_pair(&what);
        if rraw != fraw {
            self.fail(&what, &r, &f);
        }
        r
    }

    /// Polls both servers (through client pair `via`) until `n` clients
    /// are blocked, for at most 10 seconds; then makes pair `back` active.
    pub fn wait_blocked(&mut self, via: usize, back: usize, n: i64) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        self.use_client(via);
        loop {
            let pair = self.client();
            let (redis, firn) = (
                crate::info::field(&mut pair.redis, "clients", "blocked_clients"),
                crate::info::field(&mut pair.firn, "clients", "blocked_clients"),
            );
            if redis == n && firn == n {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "blocked_clients: redis {redis}, firn {firn}, expected {n}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        self.use_client(back);
    }

    /// Both servers must close the active connection (within 5 s) without
    /// sending anything else.
    pub fn assert_closed_both(&mut self) {
        self.assert_event_both(Event::Closed, Duration::from_secs(5));
    }

    /// Both servers must keep the active connection open and silent.
    pub fn assert_silent_both(&mut self, wait: Duration) {
        self.assert_event_both(Event::Silent, wait);
    }

    fn assert_event_both(&mut self, expected: Event, wait: Duration) {
        let pair = &mut self.clients[self.active];
        let r = pair.redis.wait_event(wait);
        let f = pair.firn.wait_event(wait);
        if r != expected || f != expected {
            let what = format!("expected the connection to be {expected:?}");
            self.fail(&what, &r.as_reply(), &f.as_reply());
        }
    }

    /// Sends all commands in one write to each server, then compares every
    /// reply byte for byte. Returns redis's replies.
    pub fn pipeline(&mut self, commands: &[Vec<Vec<u8>>]) -> Vec<R> {
        let mut req = Vec::new();
        for c in commands {
            let args: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
            self.history
                .push(format!("(pipelined) {}", render_command(&args)));
            req.extend_from_slice(&encode_request(&args));
        }
        let pair = &mut self.clients[self.active];
        pair.redis.send_raw(&req);
        pair.firn.send_raw(&req);
        let mut out = Vec::new();
        for (i, _) in commands.iter().enumerate() {
            let what = format!("pipelined reply #{}", i + 1);
            let ((rraw, r), (fraw, f)) = self.read_pair(&what);
            if rraw != fraw {
                self.fail(&what, &r, &f);
            }
            out.push(r);
        }
        out
    }

    /// SCAN-style full iteration on each server separately (the cursors are
    /// the server's own business); the sets of returned keys must match.
    /// `cmd` is e.g. `["SCAN"]` or `["SSCAN", "k"]`; `opts` follow the cursor.
    pub fn scan_all(&mut self, cmd: &[&str], opts: &[&str]) -> Vec<Vec<u8>> {
        self.history.push(format!(
            "(full iteration) {} <cursor> {}",
            cmd.join(" "),
            opts.join(" ")
        ));
        let pair = &mut self.clients[self.active];
        let r = scan_one(&mut pair.redis, cmd, opts);
        let f = scan_one(&mut pair.firn, cmd, opts);
        let as_reply = |x: &Result<Vec<Vec<u8>>, R>| match x {
            Ok(keys) => R::Array(Some(keys.iter().map(|k| R::bulk(k)).collect())),
            Err(e) => e.clone(),
        };
        let (rr, ff) = (as_reply(&r), as_reply(&f));
        if rr != ff {
            let what = format!("full {} iteration", cmd.join(" "));
            self.fail(&what, &rr, &ff);
        }
        r.unwrap_or_default()
    }

    pub fn sleep_ms(&mut self, ms: u64) {
        self.history.push(format!("(sleep {ms} ms)"));
        std::thread::sleep(Duration::from_millis(ms));
    }
}

/// Iterates until cursor 0 (bounded); returns the sorted, de-duplicated keys
/// or the first error reply.
fn scan_one(conn: &mut Conn, cmd: &[&str], opts: &[&str]) -> Result<Vec<Vec<u8>>, R> {
    let mut keys = Vec::new();
    let mut cursor = "0".to_string();
    for _ in 0..100_000 {
        let mut args: Vec<&str> = cmd.to_vec();
        args.push(&cursor);
        args.extend_from_slice(opts);
        let reply = conn.cmd(&args);
        let (next, batch) = match &reply {
            R::Array(Some(v)) if v.len() == 2 => (v[0].as_str(), v[1].items()),
            _ => return Err(reply),
        };
        let Some(next) = next else {
            return Err(reply);
        };
        keys.extend(
            batch
                .iter()
                .filter_map(|k| k.as_bytes().map(|b| b.to_vec())),
        );
        if next == "0" {
            keys.sort();
            keys.dedup();
            return Ok(keys);
        }
        cursor = next;
    }
    Err(R::Error("scan did not finish in 100000 calls".into()))
}

fn approx_eq(a: &R, b: &R, tolerance: i64) -> bool {
    match (a, b) {
        (R::Int(x), R::Int(y)) if *x >= 0 && *y >= 0 => (x - y).abs() <= tolerance,
        (R::Array(Some(x)), R::Array(Some(y))) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| approx_eq(p, q, tolerance))
        }
        _ => a == b,
    }
}

/// Builds a `Vec<Vec<u8>>` command for `Diff::pipeline`.
pub fn command(args: &[&str]) -> Vec<Vec<u8>> {
    args.iter().map(|a| a.as_bytes().to_vec()).collect()
}

/// A CLIENT INFO/LIST line (or an ACL LOG `client-info`) reduced to its
/// field names in order, with the values kept only for the fields in
/// `keep` (those that follow from the session, not addresses or ages).
pub fn client_line_kept(line: &str, keep: &[&str]) -> String {
    line.trim_end()
        .split(' ')
        .map(|field| match field.split_once('=') {
            Some((k, v)) if keep.contains(&k) => format!("{k}={v}"),
            Some((k, _)) => format!("{k}=*"),
            None => format!("<{field}>"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// SLOWLOG GET entries without id, time, duration and address; the
/// arguments and the client name are kept.
pub fn slowlog_normalised(r: &R) -> R {
    let entries = r
        .items()
        .iter()
        .map(|e| {
            let items = e.items();
            match (items.get(3), items.get(5), items.len()) {
                (Some(args), Some(name), 6) => R::Array(Some(vec![args.clone(), name.clone()])),
                _ => R::Simple(format!("malformed entry {}", e.render())),
            }
        })
        .collect();
    R::Array(Some(entries))
}
