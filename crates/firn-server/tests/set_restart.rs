//! Sets survive a `kill -9` and a clean restart: members, counts,
//! encodings, expiry, and the results of SPOP/SMOVE/STORE writes
//! acknowledged just before the crash.

use firn_testkit::{Conn, Server, R};

fn bulk_strings(r: &R) -> Vec<String> {
    let mut out: Vec<String> = r
        .items()
        .iter()
        .map(|m| m.as_str().expect("bulk member"))
        .collect();
    out.sort();
    out
}

/// Everything the test checks, as plain values.
fn snapshot(conn: &mut Conn) -> Vec<(String, R, R, Vec<String>, bool)> {
    ["ints", "text", "many", "ttl", "stored", "moved", "popped"]
        .iter()
        .map(|key| {
            let ttl = conn.cmd(&["TTL", key]);
            let has_ttl = matches!(ttl, R::Int(t) if t > 0);
            (
                key.to_string(),
                conn.cmd(&["SCARD", key]),
                conn.cmd(&["OBJECT", "ENCODING", key]),
                bulk_strings(&conn.cmd(&["SMEMBERS", key])),
                has_ttl,
            )
        })
        .collect()
}

fn write_sets(conn: &mut Conn) {
    conn.cmd(&["SADD", "ints", "3", "1", "2", "-7"]);
    conn.cmd(&["SADD", "text", "a", "b", "c", "1"]);
    let many: Vec<String> = (0..3000).map(|i| format!("m{i}")).collect();
    let mut args: Vec<&str> = vec!["SADD", "many"];
    args.extend(many.iter().map(String::as_str));
    assert_eq!(conn.cmd(&args), R::Int(3000));
    conn.cmd(&["SREM", "many", "m5", "m6"]);
    conn.cmd(&["SADD", "ttl", "x", "y"]);
    conn.cmd(&["EXPIRE", "ttl", "10000"]);
    conn.cmd(&["SUNIONSTORE", "stored", "ints", "text"]);
    conn.cmd(&["SMOVE", "text", "moved", "a"]);
    conn.cmd(&["SADD", "popped", "p1", "p2", "p3", "p4"]);
    conn.cmd(&["SPOP", "popped", "2"]);
    conn.cmd(&["SPOP", "popped"]);
}

#[test]
fn sets_survive_kill9_and_restart() {
    let mut server = Server::firn();
    let mut conn = server.conn();
    write_sets(&mut conn);
    let before = snapshot(&mut conn);
    assert_eq!(before[2].1, R::Int(2998));
    assert_eq!(before[0].2, R::bulk(b"intset"));
    assert_eq!(before[6].1, R::Int(1));
    drop(conn);

    server.kill9_restart();
    let mut conn = server.conn();
    assert_eq!(snapshot(&mut conn), before, "after kill -9");
    assert_eq!(conn.cmd(&["SISMEMBER", "many", "m2999"]), R::Int(1));
    assert_eq!(conn.cmd(&["SISMEMBER", "many", "m5"]), R::Int(0));
    conn.cmd(&["SADD", "ints", "100"]);
    let before = snapshot(&mut conn);
    drop(conn);

    server.restart();
    let mut conn = server.conn();
    assert_eq!(snapshot(&mut conn), before, "after a clean restart");
    assert_eq!(
        conn.cmd(&["SMEMBERS", "ints"]),
        R::Array(Some(
            ["-7", "1", "2", "3", "100"]
                .iter()
                .map(|m| R::bulk(m.as_bytes()))
                .collect()
        ))
    );
}
