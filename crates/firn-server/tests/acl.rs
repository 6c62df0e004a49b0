//! ACL across restarts and under concurrency: users declared in the config
//! file survive CONFIG REWRITE and a restart as they are now, an ACL file
//! is read at start-up and a bad one stops the start, and a permission
//! revoked while another client hammers the server takes effect at once,
//! with every refusal logged exactly once.

use firn_testkit::{Conn, Kind, Server, R};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn ok() -> R {
    R::Simple("OK".into())
}

fn users(conn: &mut Conn) -> Vec<String> {
    match conn.cmd(&["ACL", "USERS"]) {
        R::Array(Some(items)) => items.iter().filter_map(R::as_str).collect(),
        other => panic!("ACL USERS {other:?}"),
    }
}

#[test]
fn config_file_users_survive_rewrite_and_restart_as_they_are_now() {
    let conf_dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let conf = conf_dir.path().join("firn.conf");
    std::fs::write(
        &conf,
        "user alice on >alicepw ~* +@all\nuser default on nopass ~* &* +@all\n",
    )
    .unwrap_or_else(|e| panic!("write: {e}"));
    let mut server = Server::with_config_file(Kind::Firn, &conf, &[]);
    let mut conn = server.conn();
    assert_eq!(users(&mut conn), ["alice", "default"]);
    assert_eq!(
        conn.cmd(&["ACL", "SETUSER", "bob", "on", ">bobpw", "+get", "~b*"]),
        ok()
    );
    assert_eq!(conn.cmd(&["ACL", "SETUSER", "alice", "-flushall"]), ok());
    assert_eq!(conn.cmd(&["CONFIG", "REWRITE"]), ok());
    let text = std::fs::read_to_string(&conf).unwrap_or_default();
    assert!(text.contains("user bob on #"), "{text}");
    assert!(text.contains("-flushall"), "{text}");
    server.restart();
    let mut conn = server.conn();
    assert_eq!(users(&mut conn), ["alice", "bob", "default"]);
    assert_eq!(conn.cmd(&["AUTH", "bob", "bobpw"]), ok());
    match conn.cmd(&["SET", "b1", "v"]) {
        R::Error(e) => assert!(e.starts_with("NOPERM"), "{e}"),
        other => panic!("SET as bob: {other:?}"),
    }
    assert_eq!(conn.cmd(&["AUTH", "alice", "alicepw"]), ok());
    match conn.cmd(&["FLUSHALL"]) {
        R::Error(e) => assert!(e.starts_with("NOPERM"), "{e}"),
        other => panic!("FLUSHALL as alice: {other:?}"),
    }
}

#[test]
fn an_acl_file_is_read_at_start_up_and_a_bad_one_stops_it() {
    let mut server = Server::firn_prepared(
        |dir| {
            std::fs::write(dir.join("users.acl"), "user carol on >c ~* +@all\n")
                .unwrap_or_else(|e| panic!("write: {e}"));
        },
        // Relative: under `dir`, as Redis finds it.
        &["--aclfile", "users.acl"],
    );
    let mut conn = server.conn();
    assert_eq!(users(&mut conn), ["carol", "default"]);
    assert_eq!(conn.cmd(&["AUTH", "carol", "c"]), ok());
    assert_eq!(conn.cmd(&["ACL", "SETUSER", "dave", "on", "nopass"]), ok());
    assert_eq!(conn.cmd(&["ACL", "SAVE"]), ok());
    server.restart();
    let mut conn = server.conn();
    assert_eq!(users(&mut conn), ["carol", "dave", "default"]);
    drop(conn);
    // A file with an error: the server does not start.
    let acl = server.dir().join("users.acl");
    std::fs::write(&acl, "user carol on +nosuchcommand\n").unwrap_or_else(|e| panic!("write: {e}"));
    let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.restart()));
    assert!(started.is_err(), "started with a bad ACL file");
    let log = server.log_tail();
    assert!(
        log.contains("Unknown command or category name in ACL"),
        "{log}"
    );
}

/// A client runs GET after GET while another revokes its permission: every
/// GET before the revocation's reply may succeed, every GET sent after it
/// is refused, and each refusal is logged once (the count of the one
/// grouped ACL LOG entry equals the refusals the client saw).
#[test]
fn a_revoked_permission_applies_at_once_to_a_busy_client() {
    let server = Server::firn();
    let mut admin = server.conn();
    assert_eq!(
        admin.cmd(&["ACL", "SETUSER", "busy", "on", "nopass", "+get", "~*"]),
        ok()
    );
    assert_eq!(admin.cmd(&["SET", "k", "v"]), ok());
    let revoked = Arc::new(AtomicBool::new(false));
    let refused = Arc::new(AtomicU64::new(0));
    let mut worker = server.conn();
    assert_eq!(worker.cmd(&["AUTH", "busy", "x"]), ok());
    let (revoked2, refused2) = (revoked.clone(), refused.clone());
    let thread = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut after = 0;
        while after < 200 && Instant::now() < deadline {
            let was_revoked = revoked2.load(Ordering::Acquire);
            match worker.cmd(&["GET", "k"]) {
                R::Bulk(Some(v)) => {
                    assert!(!was_revoked, "GET allowed after the revocation");
                    assert_eq!(v, b"v");
                }
                R::Error(e) => {
                    assert!(e.starts_with("NOPERM"), "{e}");
                    refused2.fetch_add(1, Ordering::AcqRel);
                }
                other => panic!("GET {other:?}"),
            }
            if was_revoked {
                after += 1;
            }
        }
        after
    });
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(admin.cmd(&["ACL", "SETUSER", "busy", "-get"]), ok());
    revoked.store(true, Ordering::Release);
    let after = thread.join().unwrap_or_else(|_| panic!("worker panicked"));
    assert_eq!(after, 200);
    let seen = refused.load(Ordering::Acquire) as i64;
    assert!(seen >= 200);
    match admin.cmd(&["ACL", "LOG", "1"]) {
        R::Array(Some(entries)) => {
            let Some(R::Array(Some(fields))) = entries.first() else {
                panic!("no entry");
            };
            assert_eq!(fields[0].as_str().as_deref(), Some("count"));
            assert_eq!(fields[1], R::Int(seen));
        }
        other => panic!("ACL LOG {other:?}"),
    }
}
