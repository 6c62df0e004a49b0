//! The slow-cold-read log (SLOWLOG COLDGET/COLDLEN/COLDRESET): commands
//! that waited on the disk are logged once each with sane fields, hot ones
//! never; its two options bound and filter it.

use firn_testkit::{Server, R};
use std::time::{SystemTime, UNIX_EPOCH};

fn int(r: &R) -> i64 {
    match r {
        R::Int(n) => *n,
        other => panic!("not an integer: {other:?}"),
    }
}

fn entries(r: R) -> Vec<Vec<R>> {
    match r {
        R::Array(Some(entries)) => entries
            .into_iter()
            .map(|e| match e {
                R::Array(Some(fields)) => fields,
                other => panic!("not an entry: {other:?}"),
            })
            .collect(),
        other => panic!("not an array: {other:?}"),
    }
}

fn cold_server() -> Server {
    Server::firn_with(&[
        "--debug-cold-reads",
        "yes",
        "--cold-read-log-slower-than",
        "0",
    ])
}

#[test]
fn cold_commands_are_logged_once_with_their_fields() {
    let server = cold_server();
    let mut c = server.conn();
    c.cmd(&["CLIENT", "SETNAME", "reader"]);
    c.cmd(&["SET", "k1", "v1"]);
    c.cmd(&["RPUSH", "list", "a", "b"]);
    c.cmd(&["SLOWLOG", "COLDRESET"]);
    assert_eq!(c.cmd(&["GET", "k1"]), R::bulk(b"v1"));
    assert_eq!(c.cmd(&["LRANGE", "list", "0", "-1"]).items().len(), 2);
    let log = entries(c.cmd(&["SLOWLOG", "COLDGET"]));
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(int(&c.cmd(&["SLOWLOG", "COLDLEN"])), 2);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    // Newest first, ids increasing.
    let (lrange, get) = (&log[0], &log[1]);
    assert_eq!(get.len(), 8);
    assert_eq!(int(&lrange[0]), int(&get[0]) + 1);
    assert!((now - int(&get[1])).abs() <= 5);
    assert_eq!(
        get[3],
        R::Array(Some(vec![R::bulk(b"get"), R::bulk(b"k1")]))
    );
    assert_eq!(
        lrange[3],
        R::Array(Some(vec![R::bulk(b"lrange"), R::bulk(b"list")]))
    );
    let addr = get[4].as_str().unwrap_or_default().to_string();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    assert_eq!(get[5], R::bulk(b"reader"));
    let (wait_us, queue_wait_us, queue_len) = (int(&get[2]), int(&get[6]), int(&get[7]));
    assert!(wait_us > 0 && wait_us < 10_000_000, "{get:?}");
    assert!((0..=wait_us).contains(&queue_wait_us), "{get:?}");
    assert_eq!(queue_len, 0);
    // COUNT as SLOWLOG GET takes it.
    assert_eq!(entries(c.cmd(&["SLOWLOG", "COLDGET", "1"])).len(), 1);
    assert_eq!(entries(c.cmd(&["SLOWLOG", "COLDGET", "-1"])).len(), 2);
    assert_eq!(
        c.cmd(&["SLOWLOG", "COLDGET", "-2"]),
        R::Error("ERR count should be greater than or equal to -1".into())
    );
    c.cmd(&["SLOWLOG", "COLDRESET"]);
    assert_eq!(int(&c.cmd(&["SLOWLOG", "COLDLEN"])), 0);
    assert_eq!(c.cmd(&["SLOWLOG", "COLDGET"]), R::Array(Some(vec![])));
    // Ids go on after a reset; a transaction is logged as EXEC.
    c.cmd(&["MULTI"]);
    c.cmd(&["GET", "k1"]);
    c.cmd(&["EXEC"]);
    let log = entries(c.cmd(&["SLOWLOG", "COLDGET"]));
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(int(&log[0][0]), int(&lrange[0]) + 1);
    assert_eq!(
        log[0][3],
        R::Array(Some(vec![R::bulk(b"exec"), R::bulk(b"k1")]))
    );
}

#[test]
fn the_options_bound_and_filter_it() {
    let server = cold_server();
    let mut c = server.conn();
    c.cmd(&["SET", "k", "v"]);
    c.cmd(&["CONFIG", "SET", "cold-read-log-max-len", "3"]);
    for _ in 0..10 {
        c.cmd(&["GET", "k"]);
    }
    assert_eq!(int(&c.cmd(&["SLOWLOG", "COLDLEN"])), 3);
    // -1 logs nothing; a threshold no read reaches neither.
    c.cmd(&["SLOWLOG", "COLDRESET"]);
    c.cmd(&["CONFIG", "SET", "cold-read-log-slower-than", "-1"]);
    c.cmd(&["GET", "k"]);
    c.cmd(&["CONFIG", "SET", "cold-read-log-slower-than", "100000000"]);
    c.cmd(&["GET", "k"]);
    assert_eq!(int(&c.cmd(&["SLOWLOG", "COLDLEN"])), 0);
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "cold-read-log-*"]).pairs_sorted(),
        R::Array(Some(vec![
            R::bulk(b"cold-read-log-max-len"),
            R::bulk(b"3"),
            R::bulk(b"cold-read-log-slower-than"),
            R::bulk(b"100000000"),
        ]))
    );
    assert!(c
        .cmd(&["CONFIG", "SET", "cold-read-log-slower-than", "-2"])
        .error_text()
        .is_some());
    let help = c.cmd(&["SLOWLOG", "HELP"]).render();
    for sub in ["COLDGET", "COLDLEN", "COLDRESET"] {
        assert!(help.contains(sub), "{help}");
    }
}

#[test]
fn hot_commands_are_never_logged() {
    let server = cold_server();
    let mut c = server.conn();
    c.cmd(&["CONFIG", "SET", "debug-cold-reads", "no"]);
    c.cmd(&["SET", "hot", "v"]);
    for _ in 0..20 {
        c.cmd(&["GET", "hot"]);
        c.cmd(&["INCR", "counter"]);
    }
    assert_eq!(int(&c.cmd(&["SLOWLOG", "COLDLEN"])), 0);
}
