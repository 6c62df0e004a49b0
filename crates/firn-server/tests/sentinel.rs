//! Failover of Firn by real Redis Sentinels: three `redis-sentinel`
//! processes (Debian's, 7.0.15; quorum 2) watch a Firn primary with two
//! Firn replicas, all on loopback. A client writes, each SET followed by
//! `WAIT 1 1000`, while the primary is killed with SIGKILL. Sentinel must
//! promote a replica and point the other one at it; redis-py's Sentinel
//! client (`tests/sentinel/client.py`) must find the new primary by
//! itself; every write a replica acknowledged must be on the new primary;
//! and the old primary, restarted on its directory, must become a replica
//! of the new one and converge to the same data.
//!
//! Requirements (`scripts/install-deps.sh`): redis-sentinel, and Debian's
//! python3-redis (redis-py) for `/usr/bin/python3`.

use firn_testkit::server::{free_port, ping_ok};
use firn_testkit::{encode_request, wait_until, Conn, Kind, Server, R};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SENTINEL: &str = "/usr/bin/redis-sentinel";
/// Debian's Python: python3-redis installs redis-py for it, and a python3
/// earlier in PATH (pyenv's, a venv's) may not have it.
const PYTHON: &str = "/usr/bin/python3";
const MASTER_NAME: &str = "mymaster";
/// How long Sentinel may take to promote a replica, and a replica to
/// follow the new primary.
const FAILOVER_TIMEOUT: Duration = Duration::from_secs(30);

fn info_field(port: u16, section: &str, name: &str) -> Option<String> {
    let info = Conn::connect(port).cmd(&["INFO", section]).text();
    info.lines().find_map(|l| {
        l.strip_prefix(&format!("{name}:"))
            .map(|v| v.trim().to_string())
    })
}

/// Whether `replica` follows `primary_port` with its link up.
fn follows(replica: u16, primary_port: u16) -> bool {
    info_field(replica, "replication", "master_port") == Some(primary_port.to_string())
        && info_field(replica, "replication", "master_link_status").as_deref() == Some("up")
}

fn offset_of(port: u16) -> Option<u64> {
    info_field(port, "replication", "master_repl_offset")?
        .parse()
        .ok()
}

/// Waits until `replica` follows `primary` and has all of its stream.
fn wait_caught_up(replica: &Server, primary: &Server) {
    wait_until("the replica to catch up", FAILOVER_TIMEOUT, || {
        follows(replica.port(), primary.port())
            && offset_of(replica.port()) == offset_of(primary.port())
    });
}

fn digest(server: &Server) -> String {
    server.conn().cmd(&["DEBUG", "DIGEST"]).text()
}

/// A Firn with a config file of its own, as deployments have: Sentinel's
/// reconfiguration ends with CONFIG REWRITE, which then has a file to write.
fn firn(dir: &Path, name: &str) -> Server {
    let file = dir.join(format!("{name}.conf"));
    std::fs::write(&file, "# firn under Sentinel (tests/sentinel.rs)\n").unwrap();
    Server::with_config_file(Kind::Firn, &file, &["--enable-debug-command", "yes"])
}

/// A `redis-sentinel` process with its own directory, config file and log,
/// killed on drop.
struct Sentinel {
    root: tempfile::TempDir,
    port: u16,
    child: Child,
}

impl Sentinel {
    fn start(primary_port: u16) -> Sentinel {
        let root = tempfile::Builder::new()
            .prefix("firn-sentinel-")
            .tempdir()
            .expect("create temp dir");
        let mut reasons = Vec::new();
        for _ in 0..5 {
            let port = free_port();
            let config = root.path().join("sentinel.conf");
            // Sentinel rewrites this file (its id, the replicas and
            // sentinels it found): it must be writable.
            std::fs::write(
                &config,
                format!(
                    "port {port}\n\
                     bind 127.0.0.1\n\
                     daemonize no\n\
                     dir {dir}\n\
                     logfile {dir}/sentinel.log\n\
                     sentinel resolve-hostnames no\n\
                     sentinel announce-hostnames no\n\
                     sentinel monitor {MASTER_NAME} 127.0.0.1 {primary_port} 2\n\
                     sentinel down-after-milliseconds {MASTER_NAME} 1000\n\
                     sentinel failover-timeout {MASTER_NAME} 5000\n\
                     sentinel parallel-syncs {MASTER_NAME} 2\n",
                    dir = root.path().display()
                ),
            )
            .unwrap();
            let mut child = Command::new(SENTINEL)
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run {SENTINEL} (scripts/install-deps.sh): {e}"));
            let deadline = Instant::now() + Duration::from_secs(10);
            let outcome = loop {
                if let Ok(Some(status)) = child.try_wait() {
                    break Err(format!("port {port}: exited with {status}"));
                }
                if ping_ok(port) {
                    break Ok(());
                }
                if Instant::now() > deadline {
                    break Err(format!("port {port}: no PONG within 10 s"));
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            match outcome {
                Ok(()) => {
                    let sentinel = Sentinel { root, port, child };
                    sentinel.speed_up();
                    return sentinel;
                }
                Err(why) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    reasons.push(why);
                }
            }
        }
        panic!(
            "redis-sentinel did not start: {}\nlog:\n{}",
            reasons.join("; "),
            std::fs::read_to_string(root.path().join("sentinel.log")).unwrap_or_default()
        );
    }

    /// Sentinel's periods, shortened as Redis's own Sentinel tests do, so
    /// that the test takes seconds, not minutes: INFO every second instead
    /// of every 10 (a replica that turned primary is noticed sooner), hello
    /// messages every second instead of every 2 (sentinels find each other
    /// sooner; a restarted old primary is converted after 4 periods), and
    /// a TILT of 5 s instead of 30 if a loaded machine stalls the timer.
    ///
    /// PING and the questions to other sentinels every 500 ms instead of
    /// every second, as `down-after-milliseconds` is 1000: Sentinel
    /// reconnects to an address at most once per PING period, and after
    /// `+switch-master` it counts the new primary's 1000 ms from the
    /// switch. With a 1000 ms period the reconnection could come just too
    /// late, the new primary was `+sdown`, the other sentinels' votes that
    /// the old one was down (kept for 5 periods) made that an `+odown` at
    /// once, and a second failover followed (seen 1 run in 12).
    fn speed_up(&self) {
        let reply = self.conn().cmd(&[
            "SENTINEL",
            "DEBUG",
            "info-period",
            "1000",
            "publish-period",
            "1000",
            "ping-period",
            "500",
            "ask-period",
            "500",
            "tilt-period",
            "5000",
        ]);
        assert_eq!(reply, R::Simple("OK".into()), "SENTINEL DEBUG");
    }

    fn conn(&self) -> Conn {
        Conn::connect(self.port)
    }

    fn log_path(&self) -> PathBuf {
        self.root.path().join("sentinel.log")
    }

    /// `SENTINEL get-master-addr-by-name`'s port.
    fn master_port(&self) -> Option<u16> {
        match self
            .conn()
            .cmd(&["SENTINEL", "get-master-addr-by-name", MASTER_NAME])
        {
            R::Array(Some(addr)) if addr.len() == 2 => addr[1].text().parse().ok(),
            _ => None,
        }
    }

    /// `SENTINEL replicas|sentinels mymaster`: one map per instance.
    fn instances(&self, which: &str) -> Vec<HashMap<String, String>> {
        let R::Array(Some(items)) = self.conn().cmd(&["SENTINEL", which, MASTER_NAME]) else {
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| match item {
                R::Array(Some(fields)) => Some(
                    fields
                        .chunks(2)
                        .map(|kv| (kv[0].text(), kv[1].text()))
                        .collect(),
                ),
                _ => None,
            })
            .collect()
    }

    /// The ports of the replicas this sentinel sees with exactly the flag
    /// `slave` (not down, not disconnected).
    fn healthy_replicas(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = self
            .instances("replicas")
            .iter()
            .filter(|r| r.get("flags").map(String::as_str) == Some("slave"))
            .filter_map(|r| r.get("port")?.parse().ok())
            .collect();
        ports.sort_unstable();
        ports
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Prints the end of every process's log when the test fails: Sentinel's
/// log says why it did not promote or reconfigure (`-failover-abort-*`,
/// `+sdown`, `-odown`...).
struct LogsOnFailure(Vec<(String, PathBuf)>);

impl Drop for LogsOnFailure {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        for (name, path) in &self.0 {
            let log = std::fs::read_to_string(path).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            eprintln!(
                "----- {name} ({}) -----\n{}",
                path.display(),
                lines[lines.len().saturating_sub(60)..].join("\n")
            );
        }
    }
}

/// Writes `acked:<i>` = `<i>` with SET then `WAIT 1 1000` until stopped or
/// until a reply fails (the primary died); returns the keys at least one
/// replica acknowledged.
fn write_until_error(
    port: u16,
    stop: &AtomicBool,
    acked_count: &AtomicUsize,
) -> Vec<(String, String)> {
    let mut conn = Conn::connect(port);
    let mut acked = Vec::new();
    // Bounded: the primary is killed long before.
    for i in 0..200_000u64 {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let (key, value) = (format!("acked:{i}"), i.to_string());
        let mut request = encode_request(&[b"SET", key.as_bytes(), value.as_bytes()]);
        request.extend(encode_request(&[b"WAIT", b"1", b"1000"]));
        if conn.try_send_raw(&request).is_err() {
            break;
        }
        match conn.try_read_reply() {
            Ok((_, R::Simple(ok))) if ok == "OK" => {}
            _ => break,
        }
        match conn.try_read_reply() {
            Ok((_, R::Int(n))) if n >= 1 => {
                acked.push((key, value));
                acked_count.fetch_add(1, Ordering::Relaxed);
            }
            Ok((_, R::Int(_))) => {}
            _ => break,
        }
    }
    acked
}

/// Every acknowledged key has its value on `server` (all of them, in
/// batches of MGET).
fn assert_all_present(server: &Server, acked: &[(String, String)]) {
    let mut conn = server.conn();
    for batch in acked.chunks(500) {
        let mut args = vec!["MGET"];
        args.extend(batch.iter().map(|(k, _)| k.as_str()));
        let R::Array(Some(values)) = conn.cmd(&args) else {
            panic!("MGET failed");
        };
        for ((key, want), got) in batch.iter().zip(&values) {
            assert_eq!(
                *got,
                R::Bulk(Some(want.as_bytes().to_vec())),
                "acknowledged key {key} on the new primary"
            );
        }
    }
}

/// Runs tests/sentinel/client.py (redis-py) against the sentinels; returns
/// the primary and replica ports it found.
fn redis_py_client(sentinels: &[Sentinel]) -> (u16, u16) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sentinel/client.py");
    let mut child = Command::new(PYTHON)
        .arg(&script)
        .args(sentinels.iter().map(|s| s.port.to_string()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {PYTHON}: {e}"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client.py failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let port_of = |what: &str| -> u16 {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(what)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("client.py printed no {what}: {stdout}"))
    };
    (port_of("master "), port_of("replica "))
}

#[test]
fn sentinel_fails_over_to_a_firn_replica_without_losing_acknowledged_writes() {
    let started = Instant::now();
    let configs = tempfile::tempdir().unwrap();
    let mut primary = firn(configs.path(), "primary");
    let names = ["replica-a", "replica-b"];
    let replicas = names.map(|name| firn(configs.path(), name));
    for replica in &replicas {
        let reply = replica
            .conn()
            .cmd(&["REPLICAOF", "127.0.0.1", &primary.port().to_string()]);
        assert_eq!(reply, R::Simple("OK".into()));
    }
    for replica in &replicas {
        wait_caught_up(replica, &primary);
    }
    let sentinels: Vec<Sentinel> = (0..3).map(|_| Sentinel::start(primary.port())).collect();
    let _logs = LogsOnFailure(
        sentinels
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("sentinel {i}"), s.log_path()))
            .chain([("primary".to_string(), primary.log_path())])
            .chain(
                replicas
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (format!("replica {i}"), r.log_path())),
            )
            .collect(),
    );

    // Each sentinel sees both replicas (from the primary's INFO) and the
    // two other sentinels (from their hello messages).
    let mut replica_ports: Vec<u16> = replicas.iter().map(Server::port).collect();
    replica_ports.sort_unstable();
    for (i, sentinel) in sentinels.iter().enumerate() {
        wait_until(
            &format!("sentinel {i} to see both replicas and 2 sentinels"),
            FAILOVER_TIMEOUT,
            || {
                sentinel.healthy_replicas() == replica_ports
                    && sentinel.instances("sentinels").len() == 2
            },
        );
    }
    let discovered = started.elapsed();

    // Writes with WAIT 1 while the primary is killed.
    let stop = Arc::new(AtomicBool::new(false));
    let acked_count = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (stop, acked_count, port) = (stop.clone(), acked_count.clone(), primary.port());
        std::thread::spawn(move || write_until_error(port, &stop, &acked_count))
    };
    wait_until("acknowledged writes", FAILOVER_TIMEOUT, || {
        acked_count.load(Ordering::Relaxed) >= 300
    });
    let old_primary_port = primary.port();
    primary.kill9();
    let killed_at = Instant::now();
    // The writer ends on the first failed reply; `stop` bounds it anyway.
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let acked = writer.join().expect("writer thread");
    assert!(
        acked.len() >= 300,
        "only {} acknowledged writes",
        acked.len()
    );

    // Every sentinel names a replica as the primary.
    let mut promoted_port = 0;
    for (i, sentinel) in sentinels.iter().enumerate() {
        wait_until(
            &format!("sentinel {i} to name a replica as the primary"),
            FAILOVER_TIMEOUT,
            || match sentinel.master_port() {
                Some(port) if replica_ports.contains(&port) => {
                    promoted_port = port;
                    true
                }
                _ => false,
            },
        );
    }
    let promoted_after = killed_at.elapsed();
    let (new, old) = if replicas[0].port() == promoted_port {
        (0, 1)
    } else {
        (1, 0)
    };
    let (new_primary, other) = (&replicas[new], &replicas[old]);
    match new_primary.conn().cmd(&["ROLE"]) {
        R::Array(Some(role)) => assert_eq!(role[0].text(), "master"),
        other => panic!("ROLE: {}", other.render()),
    }
    // The other replica is pointed at it.
    wait_until(
        "the other replica to follow the new primary",
        FAILOVER_TIMEOUT,
        || follows(other.port(), promoted_port),
    );
    let reconfigured_after = killed_at.elapsed();
    // It continued from where it was (PSYNC2: its replication id is the
    // promoted replica's previous one), as a Redis replica would: no copy
    // of the whole dataset.
    let stat = |name: &str| -> u64 {
        info_field(promoted_port, "stats", name)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("INFO stats {name}"))
    };
    assert_eq!(stat("sync_full"), 0, "full syncs from the new primary");
    assert!(stat("sync_partial_ok") >= 1, "no partial sync");

    // Nothing acknowledged is lost.
    assert_all_present(new_primary, &acked);

    // redis-py finds the new primary through the sentinels by itself.
    let (py_master, py_replica) = redis_py_client(&sentinels);
    assert_eq!(py_master, promoted_port, "redis-py's master_for");
    assert_eq!(py_replica, other.port(), "redis-py's slave_for");

    // Sentinel ends each reconfiguration with CONFIG REWRITE: the config
    // files say what each server became.
    let following_new_primary = vec!["127.0.0.1".to_string(), promoted_port.to_string()];
    let replicaof = |name: &str| replicaof_words(&configs.path().join(format!("{name}.conf")));
    assert_eq!(replicaof(names[old]), following_new_primary);
    assert_eq!(replicaof(names[new]), Vec::<String>::new());
    wait_caught_up(other, new_primary);
    assert_eq!(digest(other), digest(new_primary));

    // The old primary, restarted on its data, is turned into a replica of
    // the new one by Sentinel (SLAVEOF), and converges.
    primary.respawn();
    assert_eq!(
        primary.port(),
        old_primary_port,
        "restarted on another port"
    );
    wait_caught_up(&primary, new_primary);
    assert_eq!(digest(&primary), digest(new_primary));
    wait_until("the old primary's CONFIG REWRITE", FAILOVER_TIMEOUT, || {
        replicaof("primary") == following_new_primary
    });
    for (i, sentinel) in sentinels.iter().enumerate() {
        let mut want = vec![other.port(), old_primary_port];
        want.sort_unstable();
        wait_until(
            &format!("sentinel {i} to list the two replicas of the new primary"),
            FAILOVER_TIMEOUT,
            || sentinel.healthy_replicas() == want,
        );
    }
    eprintln!(
        "sentinel test: discovery {discovered:?}, promoted {promoted_after:?} and \
         reconfigured {reconfigured_after:?} after the kill, {} acknowledged writes, \
         total {:?}",
        acked.len(),
        started.elapsed()
    );
}

fn replicaof_words(file: &Path) -> Vec<String> {
    firn_testkit::config_file_words(file, "replicaof")
}
