//! Sorted sets survive a `kill -9` and a clean restart: every acknowledged
//! add, increment, removal, pop and store is there afterwards, with both the
//! members and the by-score index (ranges, ranks, lex ranges and scores all
//! agree), the encoding, the TTL and the database.

use firn_testkit::{encode_request, Server, R};

const KEYS: [&str; 6] = ["board", "edited", "stored", "ttl", "lex", "long"];

/// Replies to compare before and after a restart.
fn snapshot(server: &Server) -> Vec<R> {
    let mut c = server.conn();
    let mut out = Vec::new();
    for key in KEYS {
        out.push(c.cmd(&["ZRANGE", key, "0", "-1", "WITHSCORES"]));
        out.push(c.cmd(&[
            "ZREVRANGEBYSCORE",
            key,
            "+inf",
            "-inf",
            "WITHSCORES",
            "LIMIT",
            "0",
            "20",
        ]));
        out.push(c.cmd(&["ZCARD", key]));
        out.push(c.cmd(&["TYPE", key]));
        out.push(c.cmd(&["OBJECT", "ENCODING", key]));
    }
    out.push(c.cmd(&["ZRANK", "board", "m1234"]));
    out.push(c.cmd(&["ZREVRANK", "board", "m1234"]));
    out.push(c.cmd(&["ZSCORE", "board", "m77"]));
    out.push(c.cmd(&["ZRANGEBYLEX", "lex", "[b", "(d"]));
    out.push(c.cmd(&["EXISTS", "emptied"]));
    out.push(c.cmd(&["EXPIRETIME", "ttl"]));
    c.cmd(&["SELECT", "3"]);
    out.push(c.cmd(&["ZRANGE", "other-db", "0", "-1", "WITHSCORES"]));
    out
}

fn write_sets(server: &Server) {
    let mut c = server.conn();
    // 3000 pipelined ZADDs, all acknowledged: a skiplist-sized set.
    let mut batch = Vec::new();
    for i in 0..3000 {
        let score = ((i * 7919) % 1000).to_string();
        batch.extend(encode_request(&[
            b"ZADD",
            b"board",
            score.as_bytes(),
            format!("m{i}").as_bytes(),
        ]));
    }
    c.send_raw(&batch);
    for _ in 0..3000 {
        assert_eq!(c.read_reply().1, R::Int(1));
    }
    c.cmd(&["ZINCRBY", "board", "0.5", "m77"]);
    c.cmd(&["ZPOPMIN", "board", "3"]);
    c.cmd(&["ZPOPMAX", "board"]);
    c.cmd(&["ZREMRANGEBYSCORE", "board", "100", "(110"]);

    c.cmd(&["ZADD", "edited", "1", "a", "2", "b", "3", "c", "-0", "z"]);
    c.cmd(&["ZADD", "edited", "XX", "CH", "10", "a", "5", "nope"]);
    c.cmd(&["ZREM", "edited", "b"]);
    c.cmd(&["ZADD", "edited", "inf", "top", "-inf", "bottom"]);

    c.cmd(&[
        "ZUNIONSTORE",
        "stored",
        "2",
        "edited",
        "board",
        "WEIGHTS",
        "2",
        "1",
    ]);
    c.cmd(&["ZADD", "ttl", "1", "v"]);
    c.cmd(&["EXPIRE", "ttl", "100000"]);
    c.cmd(&["ZADD", "lex", "0", "a", "0", "b", "0", "c", "0", "d"]);
    c.cmd(&["ZADD", "long", "1", &"x".repeat(100)]);
    c.cmd(&["ZADD", "emptied", "1", "gone"]);
    c.cmd(&["ZREM", "emptied", "gone"]);
    c.cmd(&["SELECT", "3"]);
    c.cmd(&["ZADD", "other-db", "2", "y", "1", "z"]);
}

/// Compares two snapshots reply by reply, naming the first difference.
fn assert_same(after: &[R], before: &[R], when: &str) {
    assert_eq!(after.len(), before.len(), "{when}");
    for (i, (a, b)) in after.iter().zip(before).enumerate() {
        assert!(
            a == b,
            "{when}: reply {i} differs:\n{}\nwas\n{}",
            a.render(),
            b.render()
        );
    }
}

#[test]
fn sorted_sets_survive_kill9_and_restart() {
    let mut server = Server::firn();
    write_sets(&server);
    let before = snapshot(&server);
    assert!(before[0].items().len() > 2 * 2900, "{}", before[2].render());
    assert!(
        before[before.len() - 2].as_int() > Some(0),
        "the TTL was set"
    );

    server.kill9_restart();
    assert_same(&snapshot(&server), &before, "after kill -9");

    server.restart();
    assert_same(&snapshot(&server), &before, "after a clean restart");

    // The restored sets keep working: the index and the members agree.
    let mut c = server.conn();
    assert_eq!(c.cmd(&["ZADD", "board", "-1", "m1234"]), R::Int(0));
    assert_eq!(c.cmd(&["ZRANK", "board", "m1234"]), R::Int(0));
    assert_eq!(
        c.cmd(&["ZPOPMIN", "board"]),
        R::Array(Some(vec![R::bulk(b"m1234"), R::bulk(b"-1")]))
    );
}
