//! Lists survive a `kill -9` and a clean restart: every acknowledged push,
//! pop, insertion, removal and trim is there afterwards, with the list's
//! TTL and database, and the lists keep working from both ends (their head
//! and tail positions were persisted with them).

use firn_testkit::{encode_request, Server, R};

/// Replies to compare before and after a restart.
fn snapshot(server: &Server) -> Vec<R> {
    let mut c = server.conn();
    let mut out = Vec::new();
    for key in ["queue", "edited", "trimmed", "ttl", "rotated"] {
        out.push(c.cmd(&["LRANGE", key, "0", "-1"]));
        out.push(c.cmd(&["LLEN", key]));
        out.push(c.cmd(&["TYPE", key]));
    }
    out.push(c.cmd(&["EXISTS", "emptied"]));
    c.cmd(&["SELECT", "2"]);
    out.push(c.cmd(&["LRANGE", "other-db", "0", "-1"]));
    out
}

fn write_lists(server: &Server) {
    let mut c = server.conn();
    // 3000 pipelined pushes at both ends, all acknowledged.
    let mut batch = Vec::new();
    for i in 0..3000 {
        let push: &[u8] = if i % 3 == 0 { b"LPUSH" } else { b"RPUSH" };
        batch.extend(encode_request(&[push, b"queue", i.to_string().as_bytes()]));
    }
    c.send_raw(&batch);
    for i in 0..3000 {
        assert_eq!(c.read_reply().1, R::Int(i + 1));
    }
    c.cmd(&["LPOP", "queue", "7"]);
    c.cmd(&["RPOP", "queue"]);

    c.cmd(&["RPUSH", "edited", "a", "b", "c", "b", "d", "b"]);
    assert_eq!(c.cmd(&["LINSERT", "edited", "AFTER", "c", "x"]), R::Int(7));
    assert_eq!(c.cmd(&["LREM", "edited", "-2", "b"]), R::Int(2));
    assert_eq!(
        c.cmd(&["LSET", "edited", "0", "first"]),
        R::Simple("OK".into())
    );

    let values: Vec<String> = (0..100).map(|i| format!("t{i}")).collect();
    let mut args = vec!["RPUSH", "trimmed"];
    args.extend(values.iter().map(String::as_str));
    c.cmd(&args);
    c.cmd(&["LTRIM", "trimmed", "40", "49"]);

    c.cmd(&["RPUSH", "ttl", "v"]);
    c.cmd(&["EXPIRE", "ttl", "100000"]);

    c.cmd(&["RPUSH", "rotated", "1", "2", "3"]);
    c.cmd(&["RPOPLPUSH", "rotated", "rotated"]);
    c.cmd(&["LMOVE", "rotated", "rotated", "LEFT", "RIGHT"]);

    c.cmd(&["RPUSH", "emptied", "gone"]);
    c.cmd(&["LPOP", "emptied"]);

    c.cmd(&["SELECT", "2"]);
    c.cmd(&["LPUSH", "other-db", "z", "y"]);
}

#[test]
fn lists_survive_kill9_and_restart() {
    let mut server = Server::firn();
    write_lists(&server);
    let before = snapshot(&server);
    assert_eq!(before[0].items().len(), 2992);

    server.kill9_restart();
    assert_eq!(
        snapshot(&server),
        before,
        "after kill -9\n{}",
        server.log_tail()
    );
    let mut c = server.conn();
    let ttl = c.cmd(&["TTL", "ttl"]).as_int().unwrap_or(-3);
    assert!(
        (99_000..=100_000).contains(&ttl),
        "TTL after kill -9: {ttl}"
    );

    server.restart();
    assert_eq!(
        snapshot(&server),
        before,
        "after restart\n{}",
        server.log_tail()
    );

    // Both ends and the middle go on from the persisted positions.
    let mut c = server.conn();
    assert_eq!(c.cmd(&["LPUSH", "queue", "new-head"]), R::Int(2993));
    assert_eq!(c.cmd(&["RPUSH", "queue", "new-tail"]), R::Int(2994));
    assert_eq!(c.cmd(&["LINDEX", "queue", "0"]), R::bulk(b"new-head"));
    assert_eq!(c.cmd(&["LINDEX", "queue", "-1"]), R::bulk(b"new-tail"));
    assert_eq!(c.cmd(&["LINDEX", "queue", "1"]), before[0].items()[0]);
    server.kill9_restart();
    let mut c = server.conn();
    assert_eq!(c.cmd(&["LLEN", "queue"]), R::Int(2994));
    assert_eq!(c.cmd(&["LPOP", "queue"]), R::bulk(b"new-head"));
    assert_eq!(c.cmd(&["RPOP", "queue"]), R::bulk(b"new-tail"));
}
