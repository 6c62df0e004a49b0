//! Redis 7.0's configuration, side by side with redis-server 7.0.15: the
//! compact encodings' parameters (CONFIG GET/SET under both names, and the
//! OBJECT ENCODING they drive, converting as Redis converts), the full list
//! of option names, and a real redis.conf (Debian's `/etc/redis/redis.conf`,
//! installed with the redis-server package the tests already need) starting
//! both servers, `daemonize yes` included.

use firn_testkit::server::{firn_binary, Kind, Server};
use firn_testkit::{Conn, Diff, R};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The encoding parameters, each name as Redis spells it (aliases too).
const ENCODING_NAMES: &[&str] = &[
    "hash-max-listpack-entries",
    "hash-max-ziplist-entries",
    "hash-max-listpack-value",
    "hash-max-ziplist-value",
    "zset-max-listpack-entries",
    "zset-max-ziplist-entries",
    "zset-max-listpack-value",
    "zset-max-ziplist-value",
    "list-max-listpack-size",
    "list-max-ziplist-size",
    "list-compress-depth",
    "set-max-intset-entries",
    "stream-node-max-bytes",
    "stream-node-max-entries",
];

#[test]
fn encoding_parameters_are_read_under_both_names() {
    let mut d = Diff::new();
    for name in ENCODING_NAMES {
        d.cmd(&["CONFIG", "GET", name]);
    }
    d.cmd(&["CONFIG", "GET", "HASH-MAX-ZIPLIST-ENTRIES"]);
    for pattern in [
        "hash-max-*",
        "*ziplist*",
        "*listpack*",
        "zset-max*",
        "list-*",
        "set-max-*",
        "stream-node-*",
        "*-max-*-value",
    ] {
        d.cmd_with(&["CONFIG", "GET", pattern], R::pairs_sorted);
    }
    d.cmd_with(
        &["CONFIG", "GET", "hash-max-ziplist-entries", "hash-max-*"],
        R::pairs_sorted,
    );
}

#[test]
fn encoding_parameters_are_set_with_redis_checks() {
    let mut d = Diff::new();
    for name in ENCODING_NAMES {
        for value in [
            "-1",
            "abc",
            "1.5",
            "",
            "4kb",
            "2k",
            "9223372036854775807",
            "9223372036854775808",
            "-2147483649",
            "2147483648",
            "-5",
            "0",
            "7",
        ] {
            d.cmd(&["CONFIG", "SET", name, value]);
            d.cmd(&["CONFIG", "GET", name]);
        }
    }
    // An alias and its option are two names: no duplicate, the last wins.
    d.cmd(&[
        "CONFIG",
        "SET",
        "zset-max-ziplist-entries",
        "10",
        "zset-max-listpack-entries",
        "20",
    ]);
    d.cmd_with(&["CONFIG", "GET", "zset-max-*-entries"], R::pairs_sorted);
    d.cmd(&[
        "CONFIG",
        "SET",
        "hash-max-ziplist-value",
        "1",
        "hash-max-ziplist-value",
        "2",
    ]);
    d.cmd(&["CONFIG", "SET", "HASH-MAX-ZIPLIST-VALUE", "x"]);
}

/// Both servers with the compact encodings' thresholds lowered.
fn lowered(d: &mut Diff) {
    d.cmd(&[
        "CONFIG",
        "SET",
        "hash-max-ziplist-entries",
        "4",
        "hash-max-ziplist-value",
        "8",
        "zset-max-ziplist-entries",
        "4",
        "zset-max-ziplist-value",
        "8",
        "set-max-intset-entries",
        "4",
    ]);
}

#[test]
fn hashes_convert_at_the_configured_thresholds() {
    let mut d = Diff::new();
    lowered(&mut d);
    d.cmd(&["HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"]);
    d.cmd(&["OBJECT", "ENCODING", "h"]);
    d.cmd(&["HSET", "h", "e", "5"]);
    d.cmd(&["OBJECT", "ENCODING", "h"]);
    d.cmd(&["HDEL", "h", "a", "b", "c"]);
    d.cmd(&["OBJECT", "ENCODING", "h"]);
    d.cmd(&["HSET", "long", "f", "12345678"]);
    d.cmd(&["OBJECT", "ENCODING", "long"]);
    d.cmd(&["HSET", "long", "f", "123456789"]);
    d.cmd(&["OBJECT", "ENCODING", "long"]);
    d.cmd(&["HINCRBY", "n", "f", "1"]);
    d.cmd(&["HSETNX", "n", "0123456789", "x"]);
    d.cmd(&["OBJECT", "ENCODING", "n"]);
    // Lowering a threshold changes nothing until the next write, which
    // converts even when it only updates a field.
    d.cmd(&["HSET", "small", "a", "1", "b", "2", "c", "3"]);
    d.cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "2"]);
    d.cmd(&["OBJECT", "ENCODING", "small"]);
    d.cmd(&["HSET", "small", "a", "9"]);
    d.cmd(&["OBJECT", "ENCODING", "small"]);
    // Raising it again converts nothing back.
    d.cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "512"]);
    d.cmd(&["HSET", "small", "b", "9"]);
    d.cmd(&["OBJECT", "ENCODING", "small"]);
    // 0 entries: every hash is a hashtable from its first field.
    d.cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "0"]);
    d.cmd(&["HSET", "zero", "a", "1"]);
    d.cmd(&["OBJECT", "ENCODING", "zero"]);
    d.cmd(&["HGETALL", "zero"]);
}

#[test]
fn sorted_sets_convert_at_the_configured_thresholds() {
    let mut d = Diff::new();
    lowered(&mut d);
    d.cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"]);
    d.cmd(&["OBJECT", "ENCODING", "z"]);
    d.cmd(&["ZADD", "z", "5", "e"]);
    d.cmd(&["OBJECT", "ENCODING", "z"]);
    d.cmd(&["ZREM", "z", "a", "b", "c", "d"]);
    d.cmd(&["OBJECT", "ENCODING", "z"]);
    d.cmd(&["ZADD", "long", "1", "12345678"]);
    d.cmd(&["OBJECT", "ENCODING", "long"]);
    d.cmd(&["ZADD", "long", "1", "123456789"]);
    d.cmd(&["OBJECT", "ENCODING", "long"]);
    d.cmd(&["ZADD", "neg", "-0", "a"]);
    d.cmd(&["ZSCORE", "neg", "a"]);
    // A score update is no insertion: no conversion at a lowered limit.
    d.cmd(&["ZADD", "s", "1", "a", "2", "b", "3", "c"]);
    d.cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "2"]);
    d.cmd(&["ZADD", "s", "5", "a"]);
    d.cmd(&["OBJECT", "ENCODING", "s"]);
    d.cmd(&["ZADD", "s", "5", "d"]);
    d.cmd(&["OBJECT", "ENCODING", "s"]);
    // Stored results are decided from their size.
    d.cmd(&["ZUNIONSTORE", "u", "1", "s"]);
    d.cmd(&["OBJECT", "ENCODING", "u"]);
    d.cmd(&["ZRANGESTORE", "r", "s", "0", "0"]);
    d.cmd(&["OBJECT", "ENCODING", "r"]);
    d.cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "0"]);
    d.cmd(&["ZADD", "zero", "-0", "a"]);
    d.cmd(&["OBJECT", "ENCODING", "zero"]);
    d.cmd(&["ZSCORE", "zero", "a"]);
}

#[test]
fn sets_convert_at_the_configured_thresholds() {
    let mut d = Diff::new();
    lowered(&mut d);
    d.cmd(&["SADD", "s", "1", "2", "3", "4"]);
    d.cmd(&["OBJECT", "ENCODING", "s"]);
    d.cmd(&["SADD", "s", "5"]);
    d.cmd(&["OBJECT", "ENCODING", "s"]);
    d.cmd(&["SREM", "s", "1", "2", "3", "4"]);
    d.cmd(&["OBJECT", "ENCODING", "s"]);
    d.cmd(&["SADD", "small", "3", "1", "2"]);
    d.cmd(&["CONFIG", "SET", "set-max-intset-entries", "2"]);
    d.cmd(&["OBJECT", "ENCODING", "small"]);
    d.cmd(&["SMEMBERS", "small"]);
    d.cmd(&["SADD", "small", "0"]);
    d.cmd(&["OBJECT", "ENCODING", "small"]);
    d.cmd(&["SADD", "t", "1", "2"]);
    d.cmd(&["SINTERSTORE", "t2", "t"]);
    d.cmd(&["OBJECT", "ENCODING", "t2"]);
}

#[test]
fn dump_and_restore_follow_the_configured_thresholds() {
    let mut d = Diff::new();
    lowered(&mut d);
    // Converted, then shrunk: still a skiplist, dumped as one (Redis
    // writes it from the tail, Firn highest score first: the same bytes).
    d.cmd(&[
        "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e",
    ]);
    d.cmd(&["ZREM", "z", "c", "d", "e"]);
    d.cmd(&["OBJECT", "ENCODING", "z"]);
    d.cmd(&["DUMP", "z"]);
    d.cmd(&["ZADD", "small", "1", "a", "2", "b"]);
    d.cmd(&["DUMP", "small"]);
    d.cmd(&["HSET", "h", "a", "1", "b", "2"]);
    d.cmd(&["DUMP", "h"]);
    d.cmd(&["SADD", "s", "1", "2"]);
    d.cmd(&["DUMP", "s"]);
    // RESTORE decides from the contents, at the thresholds in force.
    d.cmd(&[
        "CONFIG",
        "SET",
        "hash-max-listpack-entries",
        "1",
        "zset-max-listpack-entries",
        "1",
        "set-max-intset-entries",
        "1",
    ]);
    for (key, copy) in [("h", "h2"), ("small", "z2"), ("s", "s2"), ("z", "z3")] {
        let R::Bulk(Some(payload)) = d.cmd(&["DUMP", key]) else {
            panic!("DUMP {key}");
        };
        d.cmd(&[&b"RESTORE"[..], copy.as_bytes(), b"0", &payload]);
        d.cmd(&["OBJECT", "ENCODING", copy]);
    }
    d.cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "10"]);
    let R::Bulk(Some(payload)) = d.cmd(&["DUMP", "h"]) else {
        panic!("DUMP h");
    };
    d.cmd(&[&b"RESTORE"[..], b"h3", b"0", &payload]);
    d.cmd(&["OBJECT", "ENCODING", "h3"]);
}

#[test]
fn config_get_lists_every_option_redis_lists() {
    let redis = Server::redis();
    let firn = Server::firn();
    let names = |server: &Server| -> BTreeSet<String> {
        let mut conn = server.conn();
        let R::Array(Some(items)) = conn.cmd(&["CONFIG", "GET", "*"]) else {
            panic!("CONFIG GET * is no array");
        };
        items
            .chunks(2)
            .map(|pair| pair[0].as_str().unwrap_or_default())
            .collect()
    };
    let (from_redis, from_firn) = (names(&redis), names(&firn));
    let missing: Vec<&String> = from_redis.difference(&from_firn).collect();
    assert!(
        missing.is_empty(),
        "options Firn does not list: {missing:?}"
    );
    let extra: Vec<&String> = from_firn.difference(&from_redis).collect();
    assert_eq!(
        extra,
        [
            "cold-read-log-max-len",
            "cold-read-log-slower-than",
            "debug-cold-reads",
            "io-queue-max",
            "metrics-bind",
            "metrics-port",
            "writer-threads"
        ],
        "Firn's own options"
    );
}

/// Debian's redis.conf; the tests need the redis-server package anyway.
fn debian_redis_conf() -> Option<PathBuf> {
    let path = PathBuf::from("/etc/redis/redis.conf");
    if path.exists() {
        Some(path)
    } else {
        eprintln!("skipped: no /etc/redis/redis.conf");
        None
    }
}

/// The options both servers read from the same redis.conf and report alike.
const FROM_THE_FILE: &[&str] = &[
    "protected-mode",
    "tcp-backlog",
    "timeout",
    "tcp-keepalive",
    "loglevel",
    "databases",
    "always-show-logo",
    "proc-title-template",
    "stop-writes-on-bgsave-error",
    "rdbcompression",
    "dbfilename",
    "repl-diskless-load",
    "replica-priority",
    "lazyfree-lazy-user-flush",
    "oom-score-adj-values",
    "appendonly",
    "appendfilename",
    "appendfsync",
    "auto-aof-rewrite-min-size",
    "slowlog-log-slower-than",
    "notify-keyspace-events",
    "hash-max-listpack-entries",
    "hash-max-ziplist-entries",
    "list-max-listpack-size",
    "stream-node-max-bytes",
    "client-output-buffer-limit",
    "hz",
    "jemalloc-bg-thread",
];

#[test]
fn debian_redis_conf_starts_firn_unchanged() {
    let Some(conf) = debian_redis_conf() else {
        return;
    };
    // Only what must differ for a test: no daemon, no shared paths.
    let scratch = tempfile::tempdir().expect("temp dir");
    let pidfile = scratch.path().join("pid");
    let pidfile = pidfile.to_str().expect("utf-8 path");
    let overrides = [
        "--daemonize",
        "no",
        "--pidfile",
        pidfile,
        "--logfile",
        "",
        "--unixsocket",
        "",
    ];
    let redis = Server::with_config_file(Kind::Redis, &conf, &overrides);
    let firn = Server::with_config_file(Kind::Firn, &conf, &overrides);
    let (mut r, mut f) = (redis.conn(), firn.conn());
    assert_eq!(f.cmd(&["PING"]), R::Simple("PONG".into()));
    // daemonize is overridden on both; save differs by construction (the
    // testkit starts redis-server with `--save ""`).
    for name in FROM_THE_FILE {
        assert_eq!(
            f.cmd(&["CONFIG", "GET", name]),
            r.cmd(&["CONFIG", "GET", name]),
            "CONFIG GET {name}"
        );
    }
    let log = std::fs::read_to_string(firn.log_path()).unwrap_or_default();
    assert!(
        log.contains("'appendonly no' has no effect in Firn"),
        "the start-up log names appendonly no:\n{log}"
    );
}

#[test]
fn unknown_directives_fail_like_redis() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let conf = scratch.path().join("bad.conf");
    std::fs::write(&conf, "port 0\nno-such-option yes\n").expect("write conf");
    let out = std::process::Command::new(firn_binary())
        .arg(&conf)
        .output()
        .expect("run firn");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Bad directive or wrong number of arguments"),
        "{err}"
    );
    std::fs::write(&conf, "hash-max-ziplist-entries -1\n").expect("write conf");
    let out = std::process::Command::new(firn_binary())
        .arg(&conf)
        .output()
        .expect("run firn");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("argument must be between 0 and 9223372036854775807 inclusive"),
        "{err}"
    );
}

#[test]
fn include_reads_another_file() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let included = scratch.path().join("included.conf");
    std::fs::write(
        &included,
        "zset-max-ziplist-entries 7\nhash-max-listpack-value 9\n",
    )
    .expect("write include");
    let conf = scratch.path().join("main.conf");
    std::fs::write(
        &conf,
        format!(
            "hash-max-listpack-value 3\ninclude {}\nset-max-intset-entries 5\n",
            included.display()
        ),
    )
    .expect("write conf");
    let firn = Server::with_config_file(Kind::Firn, &conf, &[]);
    let redis = Server::with_config_file(Kind::Redis, &conf, &[]);
    let (mut r, mut f) = (redis.conn(), firn.conn());
    for name in [
        "zset-max-listpack-entries",
        "hash-max-listpack-value",
        "set-max-intset-entries",
    ] {
        assert_eq!(
            f.cmd(&["CONFIG", "GET", name]),
            r.cmd(&["CONFIG", "GET", name]),
            "{name}"
        );
    }
}

/// Stops the daemon whose pid is in the file, even when the test fails.
struct Daemon {
    pidfile: PathBuf,
}

impl Daemon {
    fn pid(&self) -> Option<i32> {
        std::fs::read_to_string(&self.pidfile)
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(pid) = self.pid() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

#[test]
fn daemonize_yes_forks_writes_the_pidfile_and_logs_to_logfile() {
    let Some(conf) = debian_redis_conf() else {
        return;
    };
    let scratch = tempfile::tempdir().expect("temp dir");
    let daemon = Daemon {
        pidfile: scratch.path().join("firn.pid"),
    };
    let logfile = scratch.path().join("firn.log");
    let port = free_port();
    let status = std::process::Command::new(firn_binary())
        .arg(&conf)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .arg("--dir")
        .arg(scratch.path().join("data"))
        .arg("--pidfile")
        .arg(&daemon.pidfile)
        .arg("--logfile")
        .arg(&logfile)
        .args(["--unixsocket", ""])
        .status()
        .expect("run firn");
    // The parent returns at once, the daemon goes on.
    assert!(status.success(), "{status}");
    wait_for("the pidfile", || daemon.pid().is_some());
    let pid = daemon.pid().expect("pid");
    assert_ne!(pid as u32, std::process::id());
    wait_for("PONG", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let mut conn = Conn::connect(port);
    assert_eq!(conn.cmd(&["PING"]), R::Simple("PONG".into()));
    assert_eq!(
        conn.cmd(&["CONFIG", "GET", "daemonize"]),
        R::Array(Some(vec![
            R::Bulk(Some(b"daemonize".to_vec())),
            R::Bulk(Some(b"yes".to_vec())),
        ]))
    );
    drop(conn);
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    wait_for("the daemon to exit", || !alive(pid));
    assert!(!daemon.pidfile.exists(), "the pidfile is removed at exit");
    let log = std::fs::read_to_string(&logfile).unwrap_or_default();
    assert!(log.contains("Ready to accept connections"), "{log}");
}

/// `rename-command` renames a command (the old name is unknown, the new one
/// runs it) or, renamed to "", removes it, as an operator disables
/// FLUSHALL; a command Redis does not have stops the start.
#[test]
fn rename_command_renames_and_removes_as_redis() {
    let scratch = tempfile::tempdir().expect("scratch dir");
    let conf = scratch.path().join("renames.conf");
    std::fs::write(
        &conf,
        "rename-command FLUSHALL \"\"\nrename-command get fetch\nrename-command config cfg\n",
    )
    .expect("write conf");
    let redis = Server::with_config_file(Kind::Redis, &conf, &[]);
    let firn = Server::with_config_file(Kind::Firn, &conf, &[]);
    let mut d = Diff::with_servers(redis, firn);
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["FLUSHALL"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["FETCH", "k"]);
    d.cmd(&["fetch", "k", "extra"]);
    d.cmd(&["CFG", "GET", "maxmemory"]);
    d.cmd(&["CONFIG", "GET", "maxmemory"]);
    d.cmd(&["EVAL", "return redis.call('fetch', 'k')", "0"]);
    d.cmd(&["DBSIZE"]);

    let bad = scratch.path().join("bad.conf");
    std::fs::write(&bad, "rename-command nosuchcommand x\n").expect("write conf");
    let out = std::process::Command::new(firn_binary())
        .arg(&bad)
        .arg("--port")
        .arg("0")
        .output()
        .expect("run firn");
    assert!(!out.status.success());
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("No such command in rename-command"), "{text}");
}

/// `replicaof` is the primary followed now, as Redis's reads
/// `server.masterhost`: CONFIG GET shows it, and CONFIG REWRITE writes it
/// even inside Sentinel's reconfiguration transaction (`MULTI, SLAVEOF,
/// CONFIG REWRITE, CLIENT KILL TYPE normal, CLIENT KILL TYPE pubsub,
/// EXEC`), so that a reconfigured server restarts as what it became.
#[test]
fn replicaof_follows_replicaof_and_is_rewritten_inside_multi() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let (redis_conf, firn_conf) = (
        scratch.path().join("redis.conf"),
        scratch.path().join("firn.conf"),
    );
    std::fs::write(&redis_conf, "# redis\n").expect("write conf");
    std::fs::write(&firn_conf, "# firn\n").expect("write conf");
    let mut d = Diff::with_servers(
        Server::with_config_file(Kind::Redis, &redis_conf, &[]),
        Server::with_config_file(Kind::Firn, &firn_conf, &[]),
    );
    // Nobody listens there: both servers just keep trying to connect.
    let port = free_port().to_string();
    d.cmd(&["CONFIG", "GET", "replicaof"]);
    d.cmd(&["REPLICAOF", "127.0.0.1", &port]);
    d.cmd(&["CONFIG", "GET", "replicaof"]);
    d.cmd(&["CONFIG", "GET", "slaveof"]);
    for primary in [["NO", "ONE"], ["127.0.0.1", port.as_str()]] {
        d.cmd(&["MULTI"]);
        d.cmd(&["SLAVEOF", primary[0], primary[1]]);
        d.cmd(&["CONFIG", "REWRITE"]);
        d.cmd(&["CLIENT", "KILL", "TYPE", "normal"]);
        d.cmd(&["CLIENT", "KILL", "TYPE", "pubsub"]);
        d.cmd(&["EXEC"]);
        d.cmd(&["CONFIG", "GET", "replicaof"]);
        assert_eq!(
            replicaof_words(&firn_conf),
            replicaof_words(&redis_conf),
            "the rewritten replicaof after SLAVEOF {primary:?}"
        );
    }
    assert_eq!(replicaof_words(&firn_conf), ["127.0.0.1", port.as_str()]);
}

fn replicaof_words(file: &Path) -> Vec<String> {
    firn_testkit::config_file_words(file, "replicaof")
}
