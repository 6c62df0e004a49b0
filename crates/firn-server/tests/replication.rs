//! Replication between real Firn processes on loopback, each with its own
//! directory: full sync from a checkpoint, the stream, partial syncs after
//! a dropped link, a chain, WAIT, read-only replicas, min-replicas, FAILOVER,
//! and the faults of a slow or dead replica and of kill -9 mid-sync.

use firn_testkit::{encode_request, wait_until, Conn, Server, R};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const DEBUG: [&str; 2] = ["--enable-debug-command", "yes"];

fn firn(extra: &[&str]) -> Server {
    let mut args = DEBUG.to_vec();
    args.extend_from_slice(extra);
    Server::firn_with(&args)
}

fn info_field(conn: &mut Conn, section: &str, name: &str) -> Option<String> {
    let info = conn.cmd(&["INFO", section]).text();
    info.lines().find_map(|l| {
        l.strip_prefix(&format!("{name}:"))
            .map(|v| v.trim().to_string())
    })
}

fn offset_of(conn: &mut Conn) -> u64 {
    info_field(conn, "replication", "master_repl_offset")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Points `replica` at `primary` and waits until it has caught up.
fn follow(replica: &Server, primary: &Server) {
    let mut r = replica.conn();
    assert_eq!(
        r.cmd(&["REPLICAOF", "127.0.0.1", &primary.port().to_string()]),
        R::Simple("OK".into())
    );
    wait_caught_up(replica, primary);
}

fn link_up(replica: &Server) -> bool {
    let mut r = replica.conn();
    info_field(&mut r, "replication", "master_link_status").as_deref() == Some("up")
}

fn wait_caught_up(replica: &Server, primary: &Server) {
    let mut p = primary.conn();
    let mut r = replica.conn();
    wait_until("the replica to catch up", Duration::from_secs(60), || {
        link_up(replica) && offset_of(&mut r) == offset_of(&mut p)
    });
}

fn digest(server: &Server) -> String {
    server.conn().cmd(&["DEBUG", "DIGEST"]).text()
}

fn assert_same_data(a: &Server, b: &Server) {
    let (da, db) = (digest(a), digest(b));
    assert_eq!(da, db, "datasets differ");
    for db_index in 0..4 {
        let mut ca = a.conn();
        let mut cb = b.conn();
        ca.cmd(&["SELECT", &db_index.to_string()]);
        cb.cmd(&["SELECT", &db_index.to_string()]);
        assert_eq!(
            ca.cmd(&["DBSIZE"]),
            cb.cmd(&["DBSIZE"]),
            "DBSIZE of db {db_index}"
        );
    }
}

/// Some of every type, in two databases, with expiries and a swap.
fn load_everything(server: &Server) {
    let mut c = server.conn();
    let mut batch = Vec::new();
    for i in 0..3000 {
        batch.extend(encode_request(&[
            b"SET",
            format!("key:{i}").as_bytes(),
            format!("value:{i}").as_bytes(),
        ]));
    }
    c.send_raw(&batch);
    for _ in 0..3000 {
        c.read_reply();
    }
    c.cmd(&["SET", "big", &"x".repeat(200_000)]);
    c.cmd(&["SET", "ttl", "v", "EX", "1000"]);
    for i in 0..300 {
        let n = i.to_string();
        c.cmd(&["HSET", "hash", &n, &n]);
        c.cmd(&["RPUSH", "list", &n]);
        c.cmd(&["SADD", "set", &n]);
        c.cmd(&["ZADD", "zset", &n, &n]);
        c.cmd(&["XADD", "stream", "*", "f", &n]);
    }
    c.cmd(&["XGROUP", "CREATE", "stream", "g", "0"]);
    c.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "c1",
        "COUNT",
        "5",
        "STREAMS",
        "stream",
        ">",
    ]);
    c.cmd(&["INCRBY", "counter", "5"]);
    c.cmd(&["SELECT", "2"]);
    c.cmd(&["SET", "in-two", "2"]);
    c.cmd(&["SWAPDB", "2", "3"]);
    c.cmd(&["SELECT", "1"]);
    c.cmd(&["LPUSH", "in-one", "a", "b"]);
}

/// Changes of every kind after the sync: they reach the replica by the
/// stream alone.
fn change_everything(server: &Server) {
    let mut c = server.conn();
    c.cmd(&["INCR", "counter"]);
    c.cmd(&["SET", "ex", "v", "PX", "500000"]);
    c.cmd(&["EXPIRE", "key:1", "1000"]);
    c.cmd(&["HINCRBYFLOAT", "hash", "f", "1.5"]);
    c.cmd(&["LPOP", "list"]);
    c.cmd(&["SPOP", "set"]);
    c.cmd(&["ZINCRBY", "zset", "2", "3"]);
    c.cmd(&["XACK", "stream", "g", "0-1"]);
    c.cmd(&["MULTI"]);
    c.cmd(&["INCR", "counter"]);
    c.cmd(&["DEL", "key:2"]);
    c.cmd(&["EXEC"]);
    c.cmd(&[
        "EVAL",
        "redis.call('set', KEYS[1], 'from-lua') return 1",
        "1",
        "lua",
    ]);
    c.cmd(&["SELECT", "3"]);
    c.cmd(&["FLUSHDB"]);
    c.cmd(&["SET", "after-flush", "1"]);
    c.cmd(&["SWAPDB", "1", "3"]);
    c.cmd(&["SELECT", "0"]);
    c.cmd(&["GETDEL", "key:3"]);
}

#[test]
fn a_replica_syncs_fully_then_follows_the_stream() {
    let primary = firn(&[]);
    let replica = firn(&[]);
    load_everything(&primary);
    follow(&replica, &primary);
    assert_same_data(&primary, &replica);
    let mut p = primary.conn();
    assert!(p.cmd(&["ROLE"]).text().contains("master"));
    match replica.conn().cmd(&["ROLE"]) {
        R::Array(Some(items)) => {
            assert_eq!(items[0].text(), "slave");
            assert_eq!(items[3].text(), "connected");
        }
        other => panic!("ROLE: {}", other.render()),
    }
    change_everything(&primary);
    let mut p = primary.conn();
    p.cmd(&["SET", "waited", "1"]);
    assert_eq!(p.cmd(&["WAIT", "1", "5000"]), R::Int(1));
    assert_eq!(
        replica.conn().cmd(&["GET", "waited"]),
        R::Bulk(Some(b"1".to_vec()))
    );
    wait_caught_up(&replica, &primary);
    assert_same_data(&primary, &replica);
    // Read-only, as Redis's replicas by default.
    match replica.conn().cmd(&["SET", "k", "v"]) {
        R::Error(e) => assert!(e.starts_with("READONLY"), "{e}"),
        other => panic!("a write on a replica: {}", other.render()),
    }
    let info = primary.conn().cmd(&["INFO", "replication"]).text();
    assert!(info.contains("connected_slaves:1"), "{info}");
    assert!(info.contains("state=online"), "{info}");
    // REPLICAOF NO ONE: writable, with a new id and the old one second.
    let mut r = replica.conn();
    assert_eq!(r.cmd(&["REPLICAOF", "NO", "ONE"]), R::Simple("OK".into()));
    assert_eq!(r.cmd(&["SET", "k", "v"]), R::Simple("OK".into()));
    let replid2 = info_field(&mut r, "replication", "master_replid2").unwrap();
    assert_eq!(
        Some(replid2),
        info_field(&mut primary.conn(), "replication", "master_replid")
    );
}

#[test]
fn a_dropped_link_resumes_with_a_partial_sync() {
    let primary = firn(&[]);
    let replica = firn(&[]);
    load_everything(&primary);
    follow(&replica, &primary);
    let mut p = primary.conn();
    for round in 0..3 {
        // The primary drops its replica; writes go on meanwhile.
        p.cmd(&["CLIENT", "KILL", "TYPE", "replica"]);
        for i in 0..200 {
            p.cmd(&["INCR", "counter"]);
            p.cmd(&["SET", &format!("round:{round}:{i}"), "v"]);
        }
        wait_caught_up(&replica, &primary);
    }
    assert_same_data(&primary, &replica);
    let mut p = primary.conn();
    let ok: u64 = info_field(&mut p, "stats", "sync_partial_ok")
        .unwrap()
        .parse()
        .unwrap();
    let full: u64 = info_field(&mut p, "stats", "sync_full")
        .unwrap()
        .parse()
        .unwrap();
    assert!(ok >= 3, "partial syncs: {ok}");
    assert_eq!(full, 1, "one full sync only");
}

/// Sentinel's failover: one replica is promoted, the other is pointed at
/// it. The other keeps its replication id, which the promoted one keeps
/// as its previous id, so it continues with a partial sync, as in Redis.
#[test]
fn a_replica_pointed_at_a_promoted_sibling_continues_with_a_partial_sync() {
    let primary = firn(&[]);
    let promoted = firn(&[]);
    let sibling = firn(&[]);
    load_everything(&primary);
    follow(&promoted, &primary);
    follow(&sibling, &primary);
    change_everything(&primary);
    wait_caught_up(&promoted, &primary);
    wait_caught_up(&sibling, &primary);
    drop(primary);
    let mut p = promoted.conn();
    assert_eq!(p.cmd(&["REPLICAOF", "NO", "ONE"]), R::Simple("OK".into()));
    p.cmd(&["SET", "after-promotion", "1"]);
    follow(&sibling, &promoted);
    assert_same_data(&promoted, &sibling);
    let stat = |name: &str| -> u64 {
        info_field(&mut promoted.conn(), "stats", name)
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(stat("sync_full"), 0, "a full sync");
    assert_eq!(stat("sync_partial_ok"), 1);
}

#[test]
fn a_replica_of_a_replica_follows_the_same_stream() {
    let a = firn(&[]);
    let b = firn(&[]);
    let c = firn(&[]);
    load_everything(&a);
    follow(&b, &a);
    follow(&c, &b);
    change_everything(&a);
    wait_caught_up(&b, &a);
    wait_caught_up(&c, &b);
    assert_same_data(&a, &c);
    // The same bytes, so the same offsets and id all along the chain.
    assert_eq!(offset_of(&mut a.conn()), offset_of(&mut c.conn()));
    assert_eq!(
        info_field(&mut a.conn(), "replication", "master_replid"),
        info_field(&mut c.conn(), "replication", "master_replid")
    );
    // A replica that is fed keeps its role flag in CLIENT LIST.
    let list = b.conn().cmd(&["CLIENT", "LIST"]).text();
    assert!(list.contains("flags=S"), "{list}");
    assert!(list.contains("flags=M"), "{list}");
}

#[test]
fn a_full_sync_longer_than_the_backlog_still_continues_from_its_cut() {
    // A 16 KB backlog, and far more than that written during the sync.
    // Two writers: the cut must fall between the same batches in both.
    let primary = firn(&["--repl-backlog-size", "16kb", "--writer-threads", "2"]);
    let replica = firn(&[]);
    {
        let mut c = primary.conn();
        let value = "v".repeat(4000);
        let mut batch = Vec::new();
        for i in 0..20_000 {
            batch.extend(encode_request(&[
                b"SET",
                format!("bulk:{i}").as_bytes(),
                value.as_bytes(),
            ]));
        }
        c.send_raw(&batch);
        for _ in 0..20_000 {
            c.read_reply();
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(AtomicU64::new(0));
    let writer = {
        let (stop, writes, port) = (stop.clone(), writes.clone(), primary.port());
        std::thread::spawn(move || {
            let mut c = Conn::connect(port);
            while !stop.load(Ordering::Relaxed) {
                c.cmd(&["INCR", "during-sync"]);
                c.cmd(&["SET", "pad", &"p".repeat(1000)]);
                writes.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    // Another writer times its batches: the sync (the cut included) must
    // not pause the primary.
    let timed = timed_writer(primary.port(), stop.clone(), "timed");
    replica
        .conn()
        .cmd(&["REPLICAOF", "127.0.0.1", &primary.port().to_string()]);
    wait_until("the link", Duration::from_secs(120), || link_up(&replica));
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    let mut timed = timed.join().unwrap();
    timed.sort_unstable();
    let max = *timed.last().unwrap();
    eprintln!(
        "during the full sync: {} batches of 16 SETs, p99 {} µs, max {max} µs",
        timed.len(),
        percentile(&timed, 0.99)
    );
    assert!(max < 2_000_000, "a batch waited {max} µs during the sync");
    assert!(
        writes.load(Ordering::Relaxed) > 20,
        "too few writes during the sync"
    );
    wait_caught_up(&replica, &primary);
    assert_same_data(&primary, &replica);
    let full: u64 = info_field(&mut primary.conn(), "stats", "sync_full")
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(full, 1, "the sync did not start over");
}

#[test]
fn min_replicas_to_write_refuses_writes_without_a_good_replica() {
    let primary = firn(&[
        "--min-replicas-to-write",
        "1",
        "--min-replicas-max-lag",
        "10",
    ]);
    match primary.conn().cmd(&["SET", "k", "v"]) {
        R::Error(e) => assert!(e.starts_with("NOREPLICAS"), "{e}"),
        other => panic!("{}", other.render()),
    }
    let replica = firn(&[]);
    follow(&replica, &primary);
    assert_eq!(
        primary.conn().cmd(&["SET", "k", "v"]),
        R::Simple("OK".into())
    );
    // CONFIG SET takes effect at once.
    let mut p = primary.conn();
    p.cmd(&["CONFIG", "SET", "min-replicas-to-write", "2"]);
    match p.cmd(&["SET", "k", "v"]) {
        R::Error(e) => assert!(e.starts_with("NOREPLICAS"), "{e}"),
        other => panic!("{}", other.render()),
    }
    // A replica made writable takes writes of its own.
    let mut r = replica.conn();
    r.cmd(&["CONFIG", "SET", "replica-read-only", "no"]);
    assert_eq!(r.cmd(&["SET", "local", "1"]), R::Simple("OK".into()));
}

#[test]
fn failover_hands_the_primary_role_to_a_caught_up_replica() {
    let primary = firn(&[]);
    let replica = firn(&[]);
    load_everything(&primary);
    follow(&replica, &primary);
    assert_eq!(primary.conn().cmd(&["FAILOVER"]), R::Simple("OK".into()));
    wait_until("the roles to swap", Duration::from_secs(30), || {
        link_up(&primary) && replica.conn().cmd(&["ROLE"]).text().contains("master")
    });
    assert_eq!(
        replica.conn().cmd(&["SET", "after", "1"]),
        R::Simple("OK".into())
    );
    wait_caught_up(&primary, &replica);
    assert_same_data(&primary, &replica);
    // The old primary followed with a partial sync: no second full sync.
    let full: u64 = info_field(&mut replica.conn(), "stats", "sync_full")
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(full, 0);
}

/// Writes pipelined batches of 16 SETs of 1 KB until `stop`; returns each
/// batch's latency in microseconds.
fn timed_writer(
    port: u16,
    stop: Arc<AtomicBool>,
    prefix: &'static str,
) -> std::thread::JoinHandle<Vec<u64>> {
    std::thread::spawn(move || {
        let mut c = Conn::connect(port);
        let value = vec![b'v'; 1000];
        let mut latencies = Vec::new();
        let mut i = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let mut batch = Vec::new();
            for _ in 0..16 {
                batch.extend(encode_request(&[
                    b"SET",
                    format!("{prefix}:{}", i % 50_000).as_bytes(),
                    &value,
                ]));
                i += 1;
            }
            let started = Instant::now();
            c.send_raw(&batch);
            for _ in 0..16 {
                c.read_reply();
            }
            latencies.push(started.elapsed().as_micros() as u64);
        }
        latencies
    })
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p) as usize]
}

#[test]
fn a_replica_stopped_for_30_s_never_stalls_the_primary() {
    // A replica further behind than 8 MB is dropped; the primary never
    // waits for it.
    let primary = firn(&["--client-output-buffer-limit", "replica 8mb 4mb 10"]);
    let replica = firn(&[]);
    follow(&replica, &primary);
    let stop = Arc::new(AtomicBool::new(false));
    // Before: the primary's latency with a live replica.
    let before = timed_writer(primary.port(), stop.clone(), "before");
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::Relaxed);
    let mut before = before.join().unwrap();
    let pid = replica.pid().expect("the replica's pid").to_string();
    let signal = |sig: &str| {
        assert!(std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
            .success());
    };
    signal("-STOP");
    let stop = Arc::new(AtomicBool::new(false));
    let during = timed_writer(primary.port(), stop.clone(), "during");
    std::thread::sleep(Duration::from_secs(30));
    stop.store(true, Ordering::Relaxed);
    let mut during = during.join().unwrap();
    signal("-CONT");
    before.sort_unstable();
    during.sort_unstable();
    let (p99_before, p99_during) = (percentile(&before, 0.99), percentile(&during, 0.99));
    let max_during = *during.last().unwrap();
    eprintln!(
        "batches of 16 SETs: before p99 {p99_before} µs ({} batches); replica stopped: p99 {p99_during} µs, max {max_during} µs ({} batches)",
        before.len(),
        during.len()
    );
    assert!(during.len() > 100, "the primary served too little");
    assert!(max_during < 2_000_000, "a batch waited {max_during} µs");
    assert!(
        p99_during < p99_before.max(2_000) * 10,
        "p99 {p99_during} µs with the replica stopped, {p99_before} µs before"
    );
    // The replica was dropped (far past 8 MB behind) and syncs again.
    wait_caught_up(&replica, &primary);
    assert_same_data(&primary, &replica);
}

/// A primary loaded with about 80 MB, so that a full sync takes a while.
fn load_bulk(server: &Server) {
    let mut c = server.conn();
    let value = "v".repeat(4000);
    for part in 0..4 {
        let mut batch = Vec::new();
        for i in 0..5_000 {
            batch.extend(encode_request(&[
                b"SET",
                format!("bulk:{part}:{i}").as_bytes(),
                value.as_bytes(),
            ]));
        }
        c.send_raw(&batch);
        for _ in 0..5_000 {
            c.read_reply();
        }
    }
}

fn link_state(replica: &Server) -> String {
    match replica.conn().cmd(&["ROLE"]) {
        R::Array(Some(items)) if items.len() >= 4 => items[3].text(),
        other => other.render(),
    }
}

#[test]
fn kill_9_in_the_middle_of_syncs_converges_after_restarts() {
    let mut primary = firn(&["--repl-backlog-size", "64mb"]);
    load_bulk(&primary);
    let primary_at = format!("127.0.0.1 {}", primary.port());
    // The replica follows by configuration, so a restart follows again.
    let mut replica = firn(&["--replicaof", &primary_at]);
    // 1. The replica killed while receiving its full sync.
    wait_until("a full sync in progress", Duration::from_secs(30), || {
        link_state(&replica) == "sync"
    });
    // INFO tells how far the transfer is.
    let total: i64 = info_field(
        &mut replica.conn(),
        "replication",
        "master_sync_total_bytes",
    )
    .and_then(|v| v.parse().ok())
    .unwrap_or(0);
    assert!(total > 100_000, "master_sync_total_bytes {total}");
    replica.kill9_restart();
    wait_caught_up(&replica, &primary);
    // 2. The primary killed while it sends a full sync.
    let other = firn(&["--replicaof", &primary_at]);
    wait_until("a full sync in progress", Duration::from_secs(30), || {
        link_state(&other) == "sync"
    });
    primary.kill9_restart();
    assert_eq!(
        format!("127.0.0.1 {}", primary.port()),
        primary_at,
        "the primary came back elsewhere"
    );
    wait_caught_up(&replica, &primary);
    wait_caught_up(&other, &primary);
    // 3. Kill -9 of each in the middle of the stream.
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (stop, port) = (stop.clone(), primary.port());
        std::thread::spawn(move || {
            let mut c = Conn::connect(port);
            while !stop.load(Ordering::Relaxed) {
                c.cmd(&["INCR", "counter"]);
            }
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    replica.kill9_restart();
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    wait_caught_up(&replica, &primary);
    wait_caught_up(&other, &primary);
    assert_same_data(&primary, &replica);
    assert_same_data(&primary, &other);
    drop(other);
}

#[test]
fn a_kill_9_loop_loses_no_write_that_wait_acknowledged() {
    let mut primary = firn(&[]);
    let primary_at = format!("127.0.0.1 {}", primary.port());
    let replica = firn(&["--replicaof", &primary_at]);
    wait_caught_up(&replica, &primary);
    let mut acknowledged: Vec<String> = Vec::new();
    let mut next = 0u64;
    for round in 0..5 {
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (stop, port) = (stop.clone(), primary.port());
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                let mut c = Conn::connect(port);
                let mut i = next;
                while !stop.load(Ordering::Relaxed) {
                    let key = format!("acked:{i}");
                    i += 1;
                    let wrote = c.try_send_raw(&encode_request(&[b"SET", key.as_bytes(), b"1"]));
                    if wrote.is_err() || c.try_read_reply().is_err() {
                        break;
                    }
                    if c.try_send_raw(&encode_request(&[b"WAIT", b"1", b"1000"]))
                        .is_err()
                    {
                        break;
                    }
                    match c.try_read_reply() {
                        Ok((_, R::Int(n))) if n >= 1 => acked.push(key),
                        Ok(_) => {}
                        Err(_) => break,
                    }
                }
                (acked, i)
            })
        };
        std::thread::sleep(Duration::from_millis(400 + 150 * round));
        primary.kill9();
        stop.store(true, Ordering::Relaxed);
        let (acked, reached) = writer.join().unwrap();
        next = reached;
        acknowledged.extend(acked);
        // Every acknowledged write is on the replica right after the kill.
        let mut r = replica.conn();
        for key in &acknowledged {
            assert_eq!(
                r.cmd(&["EXISTS", key]),
                R::Int(1),
                "{key} lost (round {round})"
            );
        }
        primary.kill9_restart();
        assert_eq!(format!("127.0.0.1 {}", primary.port()), primary_at);
        wait_caught_up(&replica, &primary);
    }
    assert!(
        acknowledged.len() > 50,
        "only {} writes acknowledged",
        acknowledged.len()
    );
    let mut p = primary.conn();
    for key in &acknowledged {
        assert_eq!(
            p.cmd(&["EXISTS", key]),
            R::Int(1),
            "{key} lost on the primary"
        );
    }
}

#[test]
fn a_replica_authenticates_with_masterauth() {
    let primary = firn(&[]);
    {
        let mut p = primary.conn();
        p.cmd(&["SET", "guarded", "1"]);
        p.cmd(&["CONFIG", "SET", "requirepass", "s3cret"]);
    }
    // Without the password the link stays down.
    let replica = firn(&[]);
    let mut r = replica.conn();
    r.cmd(&["REPLICAOF", "127.0.0.1", &primary.port().to_string()]);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!link_up(&replica), "a replica without masterauth got in");
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "masterauth", "s3cret"]),
        R::Simple("OK".into())
    );
    wait_until("the link with masterauth", Duration::from_secs(30), || {
        link_up(&replica)
    });
    wait_until("the key", Duration::from_secs(10), || {
        replica.conn().cmd(&["GET", "guarded"]) == R::Bulk(Some(b"1".to_vec()))
    });
}

#[test]
fn a_sync_killed_half_way_leaves_nothing_after_a_restart() {
    let server = Server::firn_prepared(
        |dir| {
            for leftover in ["repl-sync-12", "repl-incoming"] {
                std::fs::create_dir_all(dir.join(leftover)).unwrap();
                std::fs::write(dir.join(leftover).join("000001.sst"), b"x").unwrap();
            }
        },
        &[],
    );
    assert!(!server.dir().join("repl-sync-12").exists());
    assert!(!server.dir().join("repl-incoming").exists());
}

#[test]
fn a_cleanly_restarted_replica_continues_with_a_partial_sync() {
    let primary = firn(&[]);
    load_everything(&primary);
    let primary_at = format!("127.0.0.1 {}", primary.port());
    let mut replica = firn(&["--replicaof", &primary_at]);
    wait_caught_up(&replica, &primary);
    for round in 0..2 {
        replica.restart();
        // Written while the replica is down: it must come by the stream.
        primary.conn().cmd(&["INCR", "counter"]);
        primary
            .conn()
            .cmd(&["SET", &format!("while-down:{round}"), "1"]);
        wait_caught_up(&replica, &primary);
    }
    assert_same_data(&primary, &replica);
    let mut p = primary.conn();
    let full = info_field(&mut p, "stats", "sync_full").unwrap();
    let partial = info_field(&mut p, "stats", "sync_partial_ok").unwrap();
    assert_eq!(full, "1", "a restart synced fully again");
    assert_eq!(partial, "2");
    // A kill -9 records nothing: the next start syncs fully.
    replica.kill9_restart();
    wait_caught_up(&replica, &primary);
    assert_same_data(&primary, &replica);
    assert_eq!(info_field(&mut p, "stats", "sync_full").unwrap(), "2");
}

#[test]
fn a_big_value_arrives_whole_through_the_stream() {
    let primary = firn(&[]);
    let replica = firn(&[]);
    follow(&replica, &primary);
    // 32 MB in one command: the replica reads it in many pieces.
    let value = "b".repeat(32 << 20);
    primary.conn().cmd(&["SET", "big", &value]);
    primary.conn().cmd(&["APPEND", "big", "tail"]);
    wait_caught_up(&replica, &primary);
    assert_eq!(
        replica.conn().cmd(&["STRLEN", "big"]),
        R::Int((32 << 20) + 4)
    );
    assert_same_data(&primary, &replica);
}
