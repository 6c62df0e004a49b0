//! Servers under test: [`Server`] starts `firn` or `redis-server` on a free
//! loopback port in its own temporary directory, restarts it (gracefully or
//! with SIGKILL) on the same data directory, and kills it on drop, so a
//! test that panics never leaks a process.

use crate::env::{cold_mode, selftest, writers_mode};
use crate::{Conn, R};
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a server may take to answer its first PING.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// Attempts at finding a port nobody else grabbed in the meantime.
const START_ATTEMPTS: usize = 5;

pub const REDIS_SERVER: &str = "/usr/bin/redis-server";

/// Which program a [`Server`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Redis,
    Firn,
}

/// A server process on 127.0.0.1, owning a temporary directory that holds
/// its data directory (`data/`) and its log (`server.log`).
pub struct Server {
    kind: Kind,
    /// A config file given before the flags (which override it).
    config_file: Option<PathBuf>,
    extra_args: Vec<String>,
    root: tempfile::TempDir,
    port: u16,
    child: Option<Child>,
}

/// The `firn` binary cargo built for the running test. Recent cargo names
/// it in `CARGO_BIN_EXE_firn` when it runs the test (older cargo only while
/// compiling the test, which this library cannot see); otherwise it is
/// where cargo puts a package's binaries, next to the `deps/` directory
/// that holds the test binaries.
pub fn firn_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("CARGO_BIN_EXE_firn") {
        return PathBuf::from(path);
    }
    let test_binary = std::env::current_exe().expect("current_exe");
    let profile_dir = test_binary
        .parent()
        .and_then(Path::parent)
        .expect("test binary outside target/<profile>/deps");
    profile_dir.join("firn")
}

/// A port the kernel just reported free, never one handed out before in
/// this test process (parallel tests must not race for the same port).
/// Public for the other processes a test starts (tests/sentinel.rs).
pub fn free_port() -> u16 {
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
fn serves_dir(port: u16, dir: &Path) -> bool {
    let mut conn = Conn::connect(port);
    match conn.cmd(&["CONFIG", "GET", "dir"]) {
        R::Array(Some(items)) if items.len() == 2 => {
            let reported = items[1].as_str().unwrap_or_default();
            let canonical = |p: &Path| std::fs::canonicalize(p).ok();
            canonical(Path::new(&reported)) == canonical(dir)
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

    /// firn on a data directory that `prepare` fills before it starts (an
    /// offline tool such as `firn import-rdb` writing into it).
    pub fn firn_prepared(prepare: impl FnOnce(&Path), args: &[&str]) -> Server {
        Server::start_prepared(Kind::Firn, None, prepare, args)
    }

    /// `kind` reading `file` first, then its usual flags (port, bind, dir
    /// and, for redis-server, no persistence, no daemonizing) and `args`,
    /// which override the file as redis-server lets flags do.
    pub fn with_config_file(kind: Kind, file: &Path, args: &[&str]) -> Server {
        Server::start_with(kind, Some(file.to_path_buf()), args)
    }

    fn start(kind: Kind, args: &[&str]) -> Server {
        Server::start_with(kind, None, args)
    }

    fn start_with(kind: Kind, config_file: Option<PathBuf>, args: &[&str]) -> Server {
        Server::start_prepared(kind, config_file, |_| {}, args)
    }

    fn start_prepared(
        kind: Kind,
        config_file: Option<PathBuf>,
        prepare: impl FnOnce(&Path),
        args: &[&str],
    ) -> Server {
        let root = tempfile::Builder::new()
            .prefix("firn-diff-")
            .tempdir()
            .expect("create temp dir");
        std::fs::create_dir_all(root.path().join("data")).expect("create data dir");
        let mut server = Server {
            kind,
            config_file,
            extra_args: args.iter().map(|s| s.to_string()).collect(),
            root,
            port: 0,
            child: None,
        };
        prepare(&server.dir());
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
                c.args(&self.config_file);
                c.args(["--port", &port.to_string(), "--bind", "127.0.0.1"]);
                c.args(["--save", "", "--appendonly", "no", "--daemonize", "no"]);
                c.arg("--dir").arg(&dir);
                c
            }
            Kind::Firn => {
                let mut c = Command::new(firn_binary());
                c.args(&self.config_file);
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

    /// Graceful restart with `between` run on the data directory while
    /// the server is down (an offline tool writing into it).
    pub fn restart_after(&mut self, between: impl FnOnce(&Path)) {
        self.stop_with_signal("-TERM");
        between(&self.dir());
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

    /// Starts a server stopped by [`Server::kill9`] again on its data
    /// directory, on its old port if still free.
    pub fn respawn(&mut self) {
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

/// Whether the process on `port` answers PING with `+PONG`.
pub fn ping_ok(port: u16) -> bool {
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
