//! Differential test harness: run the same commands against `redis-server`
//! (7.0.15, the specification) and `firn`, and require byte-identical replies.
//!
//! - [`Server`] starts a process on a free loopback port in its own temporary
//!   directory and kills it on drop, so a panicking test never leaks one.
//! - [`Conn`] is a raw RESP client: it writes multibulk requests (or any raw
//!   bytes) and reads exactly one RESP2/RESP3 reply, keeping the reply's bytes
//!   next to its parsed tree [`R`].
//! - [`Diff`] holds a client of each server, sends every command to both and
//!   compares; on a mismatch it panics with both replies and the history.
//!
//! With `FIRN_DIFF_SELFTEST=1`, [`Server::firn`] starts a second redis-server:
//! every suite must then pass, which proves the suites themselves are
//! deterministic (no hash-order or timing dependence left un-normalised).
//! `FIRN_DIFF_FULL_HISTORY=1` prints the whole command history on a
//! mismatch instead of the last 60 commands.
//!
//! ```ignore
//! let mut d = Diff::new();
//! d.cmd(&["SET", "k", "v", "EX", "100"]);   // byte-identical replies
//! d.ttl("k");                               // TTL, +-1 s
//! d.cmd_unordered(&["KEYS", "*"]);          // order does not matter
//! d.cmd_type_only(&["TIME"]);               // only the shape must match
//! ```
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a server may take to answer its first PING.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// Read timeout of every test connection.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Attempts at finding a port nobody else grabbed in the meantime.
const START_ATTEMPTS: usize = 5;

pub const REDIS_SERVER: &str = "/usr/bin/redis-server";

/// True when `Server::firn()` is replaced by a second redis-server.
pub fn selftest() -> bool {
    std::env::var("FIRN_DIFF_SELFTEST").is_ok_and(|v| v == "1")
}

/// True when the suites run with every firn read forced cold.
pub fn cold_mode() -> bool {
    std::env::var("FIRN_DIFF_COLD").is_ok_and(|v| v == "1")
}

/// `FIRN_DIFF_WRITERS=N`: every firn runs with `writer-threads N`.
pub fn writers_mode() -> Option<String> {
    std::env::var("FIRN_DIFF_WRITERS")
        .ok()
        .filter(|v| v.parse::<usize>().is_ok_and(|n| n >= 1))
}

// ---------------------------------------------------------------- servers

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Redis,
    Firn,
}

/// A server process on 127.0.0.1, owning a temporary directory that holds
/// its data directory (`data/`) and its log (`server.log`).
pub struct Server {
    kind: Kind,
    extra_args: Vec<String>,
    root: tempfile::TempDir,
    port: u16,
    child: Option<Child>,
}

/// A port the kernel just reported free, never one handed out before in
/// this test process (parallel tests must not race for the same port).
fn free_port() -> u16 {
    static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("local_addr").port();
        let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
        if handed_out.insert(port) {
            return port;
        }
    }
}

/// Whether the server answering on `port` is the one using `dir`. A server
/// that cannot answer CONFIG GET dir yet gets the benefit of the doubt.
fn serves_dir(port: u16, dir: &std::path::Path) -> bool {
    let mut conn = Conn::connect(port);
    match conn.cmd(&["CONFIG", "GET", "dir"]) {
        R::Array(Some(items)) if items.len() == 2 => {
            let reported = items[1].as_str().unwrap_or_default();
            let canonical = |p: &std::path::Path| std::fs::canonicalize(p).ok();
            canonical(std::path::Path::new(&reported)) == canonical(dir)
        }
        _ => true,
    }
}

impl Server {
    /// redis-server 7.0.15 with persistence off.
    pub fn redis() -> Server {
        Server::start(Kind::Redis, &[])
    }

    pub fn redis_with(args: &[&str]) -> Server {
        Server::start(Kind::Redis, args)
    }

    /// The `firn` binary built by cargo (or redis-server in self-test mode).
    pub fn firn() -> Server {
        Server::firn_with(&[])
    }

    /// firn with extra arguments. With `FIRN_DIFF_COLD=1` every firn runs
    /// with `debug-cold-reads yes`: each command that reads committed data
    /// takes the cold path (pool run, write-stamp check, commit), so the
    /// suites prove the cold path gives the same replies as the warm one.
    /// `FIRN_DIFF_WRITERS=N` sets `writer-threads` (unless `args` do).
    pub fn firn_with(args: &[&str]) -> Server {
        if selftest() {
            return Server::start(Kind::Redis, args);
        }
        let mut args: Vec<&str> = args.to_vec();
        if cold_mode() {
            args.extend(["--debug-cold-reads", "yes"]);
        }
        let writers = writers_mode();
        if let Some(n) = &writers {
            if !args.contains(&"--writer-threads") {
                args.extend(["--writer-threads", n.as_str()]);
            }
        }
        Server::start(Kind::Firn, &args)
    }

    fn start(kind: Kind, args: &[&str]) -> Server {
        let root = tempfile::Builder::new()
            .prefix("firn-diff-")
            .tempdir()
            .expect("create temp dir");
        std::fs::create_dir_all(root.path().join("data")).expect("create data dir");
        let mut server = Server {
            kind,
            extra_args: args.iter().map(|s| s.to_string()).collect(),
            root,
            port: 0,
            child: None,
        };
        server.spawn_on_free_port();
        server
    }

    /// Which program really runs (redis in self-test mode even for `firn()`).
    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The data directory; it survives `restart` and `kill9_restart`.
    pub fn dir(&self) -> PathBuf {
        self.root.path().join("data")
    }

    pub fn log_path(&self) -> PathBuf {
        self.root.path().join("server.log")
    }

    /// The last lines of the server's log, for failure messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    pub fn conn(&self) -> Conn {
        Conn::connect(self.port)
    }

    fn command(&self, port: u16) -> Command {
        let dir = self.dir();
        let mut cmd = match self.kind {
            Kind::Redis => {
                let mut c = Command::new(REDIS_SERVER);
                c.args(["--port", &port.to_string(), "--bind", "127.0.0.1"]);
                c.args(["--save", "", "--appendonly", "no", "--daemonize", "no"]);
                c.arg("--dir").arg(&dir);
                c
            }
            Kind::Firn => {
                let mut c = Command::new(env!("CARGO_BIN_EXE_firn"));
                c.args(["--port", &port.to_string(), "--bind", "127.0.0.1"]);
                c.arg("--dir").arg(&dir);
                c
            }
        };
        cmd.args(&self.extra_args);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("open server log");
        let log2 = log.try_clone().expect("clone log handle");
        cmd.stdin(Stdio::null()).stdout(log).stderr(log2);
        cmd
    }

    fn spawn_on_free_port(&mut self) {
        let mut reasons = Vec::new();
        for _ in 0..START_ATTEMPTS {
            let port = free_port();
            match self.spawn_on(port) {
                Ok(()) => return,
                Err(why) => reasons.push(format!("port {port}: {why}")),
            }
        }
        panic!(
            "{:?} server did not start after {START_ATTEMPTS} attempts:\n{}\nlog:\n{}",
            self.kind,
            reasons.join("\n"),
            self.log_tail()
        );
    }

    /// Starts the process on `port` and waits for PONG. An error if the
    /// process exited early (typically: port taken) or another server
    /// answers on the port.
    fn spawn_on(&mut self, port: u16) -> Result<(), String> {
        let mut child = self.command(port).spawn().unwrap_or_else(|e| {
            panic!("cannot spawn {:?} server: {e}", self.kind);
        });
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("exited with {status}"));
            }
            if ping_ok(port) {
                if !serves_dir(port, &self.dir()) {
                    // Someone else's server holds the port, or CONFIG GET
                    // dir reports another directory.
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err("CONFIG GET dir does not name our directory".into());
                }
                self.port = port;
                self.child = Some(child);
                return Ok(());
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{:?} server on port {port} did not answer PING within {:?}; log:\n{}",
                    self.kind,
                    START_TIMEOUT,
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Graceful restart on the same data directory: SIGTERM, wait, start again
    /// (same port if it is still free).
    pub fn restart(&mut self) {
        self.stop_with_signal("-TERM");
        self.respawn();
    }

    /// Crash restart: SIGKILL, then start again on the same data directory.
    pub fn kill9_restart(&mut self) {
        self.kill9();
        self.respawn();
    }

    /// SIGKILL without restarting.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn respawn(&mut self) {
        let port = self.port;
        // The old listener may linger briefly; a few tries on the same port
        // keep clients' addresses stable, then any free port will do.
        for _ in 0..3 {
            if self.spawn_on(port).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.spawn_on_free_port();
    }

    fn stop_with_signal(&mut self, signal: &str) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = Command::new("kill")
            .arg(signal)
            .arg(child.id().to_string())
            .status();
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            match child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return;
                }
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

fn ping_ok(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"*1\r\n$4\r\nPING\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 64];
    let mut got = Vec::new();
    while !got.ends_with(b"\r\n") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    got == b"+PONG\r\n"
}

// ---------------------------------------------------------------- replies

/// A parsed RESP2/RESP3 reply.
#[derive(Clone, Debug, PartialEq)]
pub enum R {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<R>>),
    Map(Vec<(R, R)>),
    Set(Vec<R>),
    /// The textual form, as sent (`1.5`, `inf`, ...).
    Double(String),
    Bool(bool),
    Null,
    BigNum(String),
    /// Format (e.g. `txt`) and payload.
    Verbatim(String, Vec<u8>),
    Push(Vec<R>),
}

impl R {
    pub fn bulk(v: &[u8]) -> R {
        R::Bulk(Some(v.to_vec()))
    }

    pub fn is_error(&self) -> bool {
        matches!(self, R::Error(_))
    }

    pub fn error_text(&self) -> Option<&str> {
        match self {
            R::Error(e) => Some(e),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            R::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            R::Bulk(Some(b)) => Some(b),
            R::Simple(s) => Some(s.as_bytes()),
            R::Verbatim(_, b) => Some(b),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<String> {
        self.as_bytes()
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }

    /// Elements of an array, set or push reply (empty for anything else).
    pub fn items(&self) -> &[R] {
        match self {
            R::Array(Some(v)) | R::Set(v) | R::Push(v) => v,
            _ => &[],
        }
    }

    /// Canonical RESP encoding of the tree (used to sort and compare
    /// normalised replies).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    fn encode_into(&self, out: &mut Vec<u8>) {
        match self {
            R::Simple(s) => {
                out.push(b'+');
                out.extend_from_slice(s.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            R::Error(s) => {
                out.push(b'-');
                out.extend_from_slice(s.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            R::Int(i) => out.extend_from_slice(format!(":{i}\r\n").as_bytes()),
            R::Bulk(None) => out.extend_from_slice(b"$-1\r\n"),
            R::Bulk(Some(b)) => {
                out.extend_from_slice(format!("${}\r\n", b.len()).as_bytes());
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            }
            R::Array(None) => out.extend_from_slice(b"*-1\r\n"),
            R::Array(Some(v)) => encode_aggregate(out, b'*', v),
            R::Set(v) => encode_aggregate(out, b'~', v),
            R::Push(v) => encode_aggregate(out, b'>', v),
            R::Map(pairs) => {
                out.extend_from_slice(format!("%{}\r\n", pairs.len()).as_bytes());
                for (k, v) in pairs {
                    k.encode_into(out);
                    v.encode_into(out);
                }
            }
            R::Double(s) => out.extend_from_slice(format!(",{s}\r\n").as_bytes()),
            R::Bool(b) => out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" }),
            R::Null => out.extend_from_slice(b"_\r\n"),
            R::BigNum(s) => out.extend_from_slice(format!("({s}\r\n").as_bytes()),
            R::Verbatim(f, b) => {
                out.extend_from_slice(format!("={}\r\n{f}:", b.len() + 4).as_bytes());
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            }
        }
    }

    /// Same variant, same aggregate lengths and element shapes; errors must
    /// match exactly, nil and non-nil are different shapes.
    pub fn same_shape(&self, other: &R) -> bool {
        match (self, other) {
            (R::Error(a), R::Error(b)) => a == b,
            (R::Simple(_), R::Simple(_))
            | (R::Int(_), R::Int(_))
            | (R::Double(_), R::Double(_))
            | (R::Bool(_), R::Bool(_))
            | (R::Null, R::Null)
            | (R::BigNum(_), R::BigNum(_))
            | (R::Bulk(Some(_)), R::Bulk(Some(_)))
            | (R::Bulk(None), R::Bulk(None))
            | (R::Array(None), R::Array(None)) => true,
            (R::Verbatim(f1, _), R::Verbatim(f2, _)) => f1 == f2,
            (R::Array(Some(a)), R::Array(Some(b)))
            | (R::Set(a), R::Set(b))
            | (R::Push(a), R::Push(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_shape(y))
            }
            (R::Map(a), R::Map(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((k1, v1), (k2, v2))| k1.same_shape(k2) && v1.same_shape(v2))
            }
            _ => false,
        }
    }

    /// Sorts the elements of this aggregate (not of nested ones) by their
    /// encoding; map entries are sorted by key.
    pub fn sorted(&self) -> R {
        let sort = |v: &[R]| {
            let mut v = v.to_vec();
            v.sort_by_key(|a| a.encode());
            v
        };
        match self {
            R::Array(Some(v)) => R::Array(Some(sort(v))),
            R::Set(v) => R::Set(sort(v)),
            R::Map(p) => {
                let mut p = p.clone();
                p.sort_by_key(|(k, _)| k.encode());
                R::Map(p)
            }
            other => other.clone(),
        }
    }

    /// Like `sorted`, at every nesting level.
    pub fn sorted_deep(&self) -> R {
        match self {
            R::Array(Some(v)) => R::Array(Some(v.iter().map(R::sorted_deep).collect())).sorted(),
            R::Set(v) => R::Set(v.iter().map(R::sorted_deep).collect()).sorted(),
            R::Push(v) => R::Push(v.iter().map(R::sorted_deep).collect()),
            R::Map(p) => R::Map(
                p.iter()
                    .map(|(k, v)| (k.sorted_deep(), v.sorted_deep()))
                    .collect(),
            )
            .sorted(),
            other => other.clone(),
        }
    }

    /// A flat `[k1, v1, k2, v2, ...]` array (CONFIG GET in RESP2) with its
    /// pairs sorted by key.
    pub fn pairs_sorted(&self) -> R {
        match self {
            R::Array(Some(v)) if v.len() % 2 == 0 => {
                let mut pairs: Vec<(R, R)> =
                    v.chunks(2).map(|c| (c[0].clone(), c[1].clone())).collect();
                pairs.sort_by_key(|(k, _)| k.encode());
                R::Array(Some(pairs.into_iter().flat_map(|(k, v)| [k, v]).collect()))
            }
            other => other.sorted(),
        }
    }

    /// Human-readable rendering, redis-cli style, bounded in size.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out, 0);
        if out.len() > 4000 {
            let mut cut = 4000;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push_str("\n... (truncated)");
        }
        out
    }

    fn render_into(&self, out: &mut String, indent: usize) {
        let pad = "  ".repeat(indent);
        match self {
            R::Simple(s) => {
                let _ = write!(out, "{pad}+{s}");
            }
            R::Error(s) => {
                let _ = write!(out, "{pad}(error) {s}");
            }
            R::Int(i) => {
                let _ = write!(out, "{pad}(integer) {i}");
            }
            R::Bulk(None) => {
                let _ = write!(out, "{pad}(nil bulk)");
            }
            R::Bulk(Some(b)) => {
                let _ = write!(out, "{pad}\"{}\"", escape(b, 200));
            }
            R::Array(None) => {
                let _ = write!(out, "{pad}(nil array)");
            }
            R::Array(Some(v)) => render_list(out, &pad, "array", v, indent),
            R::Set(v) => render_list(out, &pad, "set", v, indent),
            R::Push(v) => render_list(out, &pad, "push", v, indent),
            R::Map(p) => {
                let _ = write!(out, "{pad}(map of {})", p.len());
                for (k, v) in p {
                    out.push('\n');
                    k.render_into(out, indent + 1);
                    out.push_str(" =>\n");
                    v.render_into(out, indent + 2);
                }
            }
            R::Double(s) => {
                let _ = write!(out, "{pad}(double) {s}");
            }
            R::Bool(b) => {
                let _ = write!(out, "{pad}(boolean) {b}");
            }
            R::Null => {
                let _ = write!(out, "{pad}(null)");
            }
            R::BigNum(s) => {
                let _ = write!(out, "{pad}(big number) {s}");
            }
            R::Verbatim(f, b) => {
                let _ = write!(out, "{pad}(verbatim {f}) \"{}\"", escape(b, 200));
            }
        }
    }
}

fn encode_aggregate(out: &mut Vec<u8>, prefix: u8, items: &[R]) {
    out.push(prefix);
    out.extend_from_slice(format!("{}\r\n", items.len()).as_bytes());
    for item in items {
        item.encode_into(out);
    }
}

fn render_list(out: &mut String, pad: &str, what: &str, items: &[R], indent: usize) {
    if items.is_empty() {
        let _ = write!(out, "{pad}(empty {what})");
        return;
    }
    let _ = write!(out, "{pad}({what} of {})", items.len());
    for item in items {
        out.push('\n');
        item.render_into(out, indent + 1);
    }
}

/// Printable form of arbitrary bytes, cut after `max` bytes.
pub fn escape(bytes: &[u8], max: usize) -> String {
    let mut s = String::new();
    for &b in bytes.iter().take(max) {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\r' => s.push_str("\\r"),
            b'\n' => s.push_str("\\n"),
            0x20..=0x7e => s.push(b as char),
            _ => {
                let _ = write!(s, "\\x{b:02x}");
            }
        }
    }
    if bytes.len() > max {
        let _ = write!(s, "...({} bytes)", bytes.len());
    }
    s
}

// ---------------------------------------------------------------- parser

#[derive(Debug)]
enum Parse {
    /// Not enough bytes yet.
    Incomplete,
    Invalid(String),
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn line(&mut self) -> Result<&[u8], Parse> {
        let rest = &self.buf[self.pos..];
        let Some(end) = rest.windows(2).position(|w| w == b"\r\n") else {
            return Err(Parse::Incomplete);
        };
        self.pos += end + 2;
        Ok(&rest[..end])
    }

    fn int_line(&mut self) -> Result<i64, Parse> {
        let line = self.line()?;
        std::str::from_utf8(line)
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
            .ok_or_else(|| Parse::Invalid(format!("bad integer {:?}", escape(line, 40))))
    }

    fn text_line(&mut self) -> Result<String, Parse> {
        Ok(String::from_utf8_lossy(self.line()?).into_owned())
    }

    fn payload(&mut self, len: i64) -> Result<Vec<u8>, Parse> {
        let len = usize::try_from(len).map_err(|_| Parse::Invalid(format!("length {len}")))?;
        if self.buf.len() < self.pos + len + 2 {
            return Err(Parse::Incomplete);
        }
        let data = self.buf[self.pos..self.pos + len].to_vec();
        if &self.buf[self.pos + len..self.pos + len + 2] != b"\r\n" {
            return Err(Parse::Invalid("payload not followed by CRLF".into()));
        }
        self.pos += len + 2;
        Ok(data)
    }

    fn items(&mut self, n: i64) -> Result<Vec<R>, Parse> {
        (0..n).map(|_| self.reply()).collect()
    }

    fn reply(&mut self) -> Result<R, Parse> {
        let Some(&prefix) = self.buf.get(self.pos) else {
            return Err(Parse::Incomplete);
        };
        self.pos += 1;
        Ok(match prefix {
            b'+' => R::Simple(self.text_line()?),
            b'-' => R::Error(self.text_line()?),
            b':' => R::Int(self.int_line()?),
            b'$' => match self.int_line()? {
                -1 => R::Bulk(None),
                n => R::Bulk(Some(self.payload(n)?)),
            },
            b'*' => match self.int_line()? {
                -1 => R::Array(None),
                n => R::Array(Some(self.items(n)?)),
            },
            b'~' => {
                let n = self.int_line()?;
                R::Set(self.items(n)?)
            }
            b'>' => {
                let n = self.int_line()?;
                R::Push(self.items(n)?)
            }
            b'%' => {
                let n = self.int_line()?;
                let mut pairs = Vec::new();
                for _ in 0..n {
                    let k = self.reply()?;
                    let v = self.reply()?;
                    pairs.push((k, v));
                }
                R::Map(pairs)
            }
            b'|' => {
                // An attribute: skip it and return the reply it decorates.
                let n = self.int_line()?;
                for _ in 0..2 * n {
                    self.reply()?;
                }
                self.reply()?
            }
            b',' => R::Double(self.text_line()?),
            b'#' => match self.line()? {
                b"t" => R::Bool(true),
                b"f" => R::Bool(false),
                other => return Err(Parse::Invalid(format!("boolean {:?}", escape(other, 10)))),
            },
            b'_' => {
                self.line()?;
                R::Null
            }
            b'(' => R::BigNum(self.text_line()?),
            b'=' => {
                let n = self.int_line()?;
                let data = self.payload(n)?;
                if data.len() < 4 || data[3] != b':' {
                    return Err(Parse::Invalid("verbatim without format".into()));
                }
                R::Verbatim(
                    String::from_utf8_lossy(&data[..3]).into_owned(),
                    data[4..].to_vec(),
                )
            }
            other => {
                return Err(Parse::Invalid(format!(
                    "unknown type byte {:?}",
                    escape(&[other], 4)
                )))
            }
        })
    }
}

// ---------------------------------------------------------------- client

/// Why a reply could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The server closed the connection (EOF or reset).
    Closed,
    Timeout,
    Io(std::io::Error),
    /// The server sent bytes that are not RESP.
    Invalid(String),
}

/// What happened on a connection while waiting (see `Conn::wait_event`).
#[derive(Debug, PartialEq)]
pub enum Event {
    Silent,
    Closed,
    Data(Vec<u8>),
    Failed(String),
}

impl Event {
    fn as_reply(&self) -> R {
        R::Simple(match self {
            Event::Silent => "<silent, still open>".into(),
            Event::Closed => "<closed>".into(),
            Event::Data(d) => format!("<sent \"{}\">", escape(d, 300)),
            Event::Failed(e) => format!("<read failed: {e}>"),
        })
    }
}

/// A raw RESP connection.
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

/// Multibulk encoding of a request.
pub fn encode_request(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

impl Conn {
    pub fn connect(port: u16) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", port))
            .unwrap_or_else(|e| panic!("connect to 127.0.0.1:{port}: {e}"));
        stream
            .set_read_timeout(Some(READ_TIMEOUT))
            .expect("set_read_timeout");
        stream.set_nodelay(true).expect("set_nodelay");
        Conn {
            stream,
            buf: Vec::new(),
        }
    }

    pub fn send(&mut self, args: &[&[u8]]) {
        self.send_raw(&encode_request(args));
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream
            .write_all(bytes)
            .unwrap_or_else(|e| panic!("write to server: {e}"));
    }

    /// Like `send_raw` but reports a failed write (the server may already
    /// have closed the connection).
    pub fn try_send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// Reads exactly one reply: its raw bytes and its parsed tree.
    pub fn try_read_reply(&mut self) -> Result<(Vec<u8>, R), ReadError> {
        loop {
            let mut cursor = Cursor {
                buf: &self.buf,
                pos: 0,
            };
            match cursor.reply() {
                Ok(tree) => {
                    let used = cursor.pos;
                    let raw: Vec<u8> = self.buf.drain(..used).collect();
                    return Ok((raw, tree));
                }
                Err(Parse::Invalid(why)) => {
                    return Err(ReadError::Invalid(format!(
                        "{why} in {}",
                        escape(&self.buf, 200)
                    )))
                }
                Err(Parse::Incomplete) => self.fill()?,
            }
        }
    }

    fn fill(&mut self) -> Result<(), ReadError> {
        let mut chunk = [0u8; 64 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) => Err(ReadError::Closed),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(())
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                Err(ReadError::Timeout)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::ConnectionReset
                        | ErrorKind::ConnectionAborted
                        | ErrorKind::BrokenPipe
                ) =>
            {
                Err(ReadError::Closed)
            }
            Err(e) => Err(ReadError::Io(e)),
        }
    }

    pub fn read_reply(&mut self) -> (Vec<u8>, R) {
        self.try_read_reply()
            .unwrap_or_else(|e| panic!("reading a reply: {e:?}"))
    }

    /// Sends a command and returns its parsed reply.
    pub fn cmd(&mut self, args: &[&str]) -> R {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.send(&args);
        self.read_reply().1
    }

    /// What the server does within `wait`: nothing, close the connection,
    /// or send bytes (kept in the buffer for the next read).
    pub fn wait_event(&mut self, wait: Duration) -> Event {
        if !self.buf.is_empty() {
            return Event::Data(self.buf.clone());
        }
        self.stream
            .set_read_timeout(Some(wait))
            .expect("set_read_timeout");
        let result = self.fill();
        self.stream
            .set_read_timeout(Some(READ_TIMEOUT))
            .expect("set_read_timeout");
        match result {
            Ok(()) => Event::Data(self.buf.clone()),
            Err(ReadError::Closed) => Event::Closed,
            Err(ReadError::Timeout) => Event::Silent,
            Err(e) => Event::Failed(format!("{e:?}")),
        }
    }

    /// True if the server closes the connection (within 5 s) without
    /// sending anything more.
    pub fn is_closed(&mut self) -> bool {
        self.wait_event(Duration::from_secs(5)) == Event::Closed
    }

    /// True if nothing arrives within `wait` and the connection stays open.
    pub fn silent_for(&mut self, wait: Duration) -> bool {
        self.wait_event(wait) == Event::Silent
    }

    /// Half-closes: the server sees EOF but can still send.
    pub fn shutdown_write(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Write);
    }

    /// Closes both directions now.
    pub fn shutdown(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

// ---------------------------------------------------------------- diff

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
        let keep = if std::env::var_os("FIRN_DIFF_FULL_HISTORY").is_some() {
            usize::MAX
        } else {
            60
        };
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

/// Asserts `r` is an error reply with exactly this text.
#[track_caller]
pub fn assert_err(r: &R, text: &str) {
    match r {
        R::Error(e) if e == text => {}
        other => panic!("expected error {text:?}, got:\n{}", other.render()),
    }
}

/// Asserts `r` is an error reply starting with `prefix`.
#[track_caller]
pub fn assert_err_prefix(r: &R, prefix: &str) {
    match r {
        R::Error(e) if e.starts_with(prefix) => {}
        other => panic!(
            "expected error starting {prefix:?}, got:\n{}",
            other.render()
        ),
    }
}

/// Builds a `Vec<Vec<u8>>` command for `Diff::pipeline`.
pub fn command(args: &[&str]) -> Vec<Vec<u8>> {
    args.iter().map(|a| a.as_bytes().to_vec()).collect()
}

/// Every byte value 0..=255, in order.
pub fn all_bytes() -> Vec<u8> {
    (0..=255u8).collect()
}

/// A deterministic byte pattern of `len` bytes (not compressible to one run).
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u32)
                .wrapping_mul(31)
                .wrapping_add(seed as u32 * 7 + (i as u32 >> 8)) as u8
        })
        .collect()
}

/// INFO commandstats reduced to the sorted `name calls=N` of each command.
pub fn calls_only(info: &R) -> R {
    let text = info.as_str().unwrap_or_default();
    let mut rows: Vec<String> = text
        .lines()
        .filter_map(|line| line.strip_prefix("cmdstat_"))
        .filter_map(|line| {
            let (name, fields) = line.split_once(':')?;
            let calls = fields.split(',').next()?;
            Some(format!("{name} {calls}"))
        })
        .collect();
    rows.sort();
    R::Array(Some(rows.iter().map(|r| R::bulk(r.as_bytes())).collect()))
}

/// The `keyspace_hits` and `keyspace_misses` lines of INFO stats.
pub fn lookups_only(info: &R) -> R {
    let text = info.as_str().unwrap_or_default();
    let rows: Vec<R> = text
        .lines()
        .filter(|l| l.starts_with("keyspace_hits:") || l.starts_with("keyspace_misses:"))
        .map(|l| R::bulk(l.trim().as_bytes()))
        .collect();
    R::Array(Some(rows))
}

// ------------------------------------------------------------- engine work

/// A numeric field of INFO storage, Firn's own section (cost tests count
/// the engine's work with it, never time).
pub fn info_storage(conn: &mut Conn, field: &str) -> u64 {
    let text = match conn.cmd(&["INFO", "storage"]) {
        R::Bulk(Some(v)) => String::from_utf8_lossy(&v).to_string(),
        other => panic!("INFO: {}", other.render()),
    };
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in INFO storage:\n{text}"))
}

/// `(entries range scans visited, point reads)` so far.
pub fn work(conn: &mut Conn) -> (u64, u64) {
    (
        info_storage(conn, "scanned_entries"),
        info_storage(conn, "memory_tier_reads"),
    )
}

/// Runs `args`; returns its reply, the entries it scanned and the point
/// reads it made.
pub fn measured(conn: &mut Conn, args: &[&str]) -> (R, u64, u64) {
    let (scanned, reads) = work(conn);
    let reply = conn.cmd(args);
    let (scanned_after, reads_after) = work(conn);
    (reply, scanned_after - scanned, reads_after - reads)
}

// ---------------------------------------------------------- random tests

/// The seeds a seeded random test runs: `first..first + count`, or only
/// the one in `FIRN_DIFF_SEED` (to rerun a failure).
pub fn random_seeds(first: u64, count: u64) -> Vec<u64> {
    match std::env::var("FIRN_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(seed) => vec![seed],
        None => (first..first + count).collect(),
    }
}

/// Commands per seed: `default`, or `FIRN_DIFF_STEPS`.
pub fn random_steps(default: usize) -> usize {
    std::env::var("FIRN_DIFF_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

// ------------------------------------------------------- streamed replies

/// Reads one whole RESP reply and drops it.
pub fn skip_reply(reader: &mut impl std::io::BufRead) {
    let mut line = String::new();
    reader.read_line(&mut line).expect("reply line");
    let count = |prefix: char| -> usize {
        line.trim_end()
            .strip_prefix(prefix)
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    match line.chars().next() {
        Some('$') => {
            let mut body = vec![0; count('$') + 2];
            reader.read_exact(&mut body).expect("bulk body");
        }
        Some(c @ ('*' | '~' | '>')) => (0..count(c)).for_each(|_| skip_reply(reader)),
        Some('%') => (0..2 * count('%')).for_each(|_| skip_reply(reader)),
        _ => {}
    }
}

/// Sends `args` on a fresh connection (after `HELLO 3` when `resp3`) and
/// reads its reply, an aggregate of bulk strings headed by `header` (`*`,
/// `~`, `%`...), element by element as it streams in, without keeping it:
/// `each(n, element)` sees every element. Returns the header's count.
pub fn read_streamed(
    port: u16,
    resp3: bool,
    args: &[&[u8]],
    header: char,
    mut each: impl FnMut(usize, &[u8]),
) -> usize {
    use std::io::{BufRead, BufReader};
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .expect("timeout");
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    if resp3 {
        stream
            .write_all(&encode_request(&[b"HELLO", b"3"]))
            .expect("send");
        skip_reply(&mut reader);
    }
    stream.write_all(&encode_request(args)).expect("send");
    let mut line = String::new();
    reader.read_line(&mut line).expect("header");
    let count: usize = line
        .trim_end()
        .strip_prefix(header)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("reply header {line:?}"));
    let elements = if header == '%' { 2 * count } else { count };
    let mut body = Vec::new();
    for n in 0..elements {
        line.clear();
        reader.read_line(&mut line).expect("bulk header");
        let len: usize = line
            .trim_end()
            .strip_prefix('$')
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("element {n}: {line:?}"));
        body.resize(len + 2, 0);
        reader.read_exact(&mut body).expect("bulk body");
        each(n, &body[..len]);
    }
    count
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
