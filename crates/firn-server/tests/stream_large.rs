//! Cost of stream commands on a stream of ten million entries with a
//! pending list of one million, measured as work done (INFO storage's
//! `scanned_entries`, entries range scans visited, and `point_reads`,
//! point reads), never as time:
//!
//! - XADD, XACK, XDEL, XLEN and XCLAIM of one entry cost the same as on a
//!   ten-entry stream with a ten-entry pending list;
//! - XRANGE/XREVRANGE with COUNT 10, anywhere in the stream, XREADGROUP
//!   COUNT 10, XREADGROUP's history with COUNT 10 and XPENDING with a range
//!   of 10 visit about what they return;
//! - XTRIM MINID removing 1,000 entries visits those entries and their
//!   nodes;
//! - DEL is O(1).
//!
//! `FIRN_BIG_STREAM_ENTRIES` sizes the stream (default ten million; the
//! pending list is a tenth of it).

use firn_testkit::{cost::measured, encode_request, Conn, Server, R};

/// XADDs per pipelined write.
const PER_WRITE: u64 = 10_000;
/// Entries a few background tasks may scan meanwhile (the expiry cycle).
const SLACK: u64 = 5;

fn entries() -> u64 {
    std::env::var("FIRN_BIG_STREAM_ENTRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000)
}

/// Entry `i` (1-based) has ID `i-1` and one field.
fn build(conn: &mut Conn, key: &str, count: u64) {
    let mut next = 1;
    while next <= count {
        let last = (next + PER_WRITE - 1).min(count);
        let mut request = Vec::new();
        for i in next..=last {
            let id = format!("{i}-1");
            request.extend_from_slice(&encode_request(&[
                b"XADD",
                key.as_bytes(),
                id.as_bytes(),
                b"f",
                b"v",
            ]));
        }
        conn.send_raw(&request);
        for i in next..=last {
            assert_eq!(conn.read_reply().1, R::bulk(format!("{i}-1").as_bytes()));
        }
        next = last + 1;
    }
}

/// Delivers entries `1..=count` to consumer `c` of group `g`.
fn deliver(conn: &mut Conn, key: &str, count: u64) {
    assert_eq!(
        conn.cmd(&["XGROUP", "CREATE", key, "g", "0"]),
        R::Simple("OK".into())
    );
    let mut delivered = 0;
    while delivered < count {
        let n = (count - delivered).min(100_000);
        let reply = conn.cmd(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "COUNT",
            &n.to_string(),
            "STREAMS",
            key,
            ">",
        ]);
        let got = reply.items()[0].items()[1].items().len() as u64;
        assert_eq!(got, n);
        delivered += n;
    }
}

fn ids(reply: &R) -> Vec<String> {
    reply
        .items()
        .iter()
        .map(|e| e.items()[0].as_str().unwrap_or_default())
        .collect()
}

#[test]
fn a_ten_million_entry_stream_costs_what_each_command_touches() {
    let total = entries();
    let pending = total / 10;
    let server = Server::firn();
    let mut c = server.conn();
    build(&mut c, "big", total);
    deliver(&mut c, "big", pending);
    build(&mut c, "small", 20);
    deliver(&mut c, "small", 10);
    assert_eq!(c.cmd(&["XLEN", "big"]), R::Int(total as i64));
    let summary = c.cmd(&["XPENDING", "big", "g"]);
    assert_eq!(summary.items()[0], R::Int(pending as i64));

    // One-entry commands cost the same on the big stream as on the small.
    let mid = format!("{}-1", pending / 2);
    for line in [
        vec!["XADD", "KEY", "*", "f", "v"],
        vec!["XLEN", "KEY"],
        vec!["XACK", "KEY", "g", "MID"],
        vec!["XCLAIM", "KEY", "g", "other", "0", "3-1", "JUSTID"],
        vec!["XDEL", "KEY", "5-1"],
        vec!["XPENDING", "KEY", "g"],
    ] {
        let cost = |c: &mut Conn, key: &str, mid: &str| {
            let args: Vec<&str> = line
                .iter()
                .map(|a| match *a {
                    "KEY" => key,
                    "MID" => mid,
                    a => a,
                })
                .collect();
            let (reply, scanned, reads) = measured(c, &args);
            assert!(!reply.is_error(), "{args:?}: {}", reply.render());
            (scanned, reads)
        };
        let (big_scanned, big_reads) = cost(&mut c, "big", &mid);
        let (small_scanned, small_reads) = cost(&mut c, "small", "7-1");
        assert!(
            big_scanned <= small_scanned + SLACK && big_reads <= small_reads + 2,
            "{line:?}: big stream {big_scanned} scanned/{big_reads} reads, \
             small stream {small_scanned}/{small_reads}"
        );
    }

    // Reads of 10 visit about 10 entries, wherever they are.
    let middle = total / 2;
    for (args, first) in [
        (vec!["XRANGE", "big", "-", "+", "COUNT", "10"], 1),
        (
            vec!["XRANGE", "big", &format!("{middle}"), "+", "COUNT", "10"],
            middle,
        ),
        (vec!["XREVRANGE", "big", "+", "-", "COUNT", "10"], 0),
    ] {
        let (reply, scanned, _) = measured(&mut c, &args);
        assert_eq!(reply.items().len(), 10, "{args:?}");
        if first > 0 {
            assert_eq!(ids(&reply)[0], format!("{first}-1"), "{args:?}");
        }
        assert!(scanned <= 10 + SLACK, "{args:?} scanned {scanned}");
    }
    let (reply, scanned, reads) = measured(
        &mut c,
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "COUNT",
            "10",
            "STREAMS",
            "big",
            ">",
        ],
    );
    assert_eq!(reply.items()[0].items()[1].items().len(), 10);
    assert!(scanned <= 10 + 1 + SLACK, "XREADGROUP > scanned {scanned}");
    assert!(reads <= 10 * 3 + 10, "XREADGROUP > made {reads} reads");
    let (reply, scanned, _) = measured(
        &mut c,
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "COUNT",
            "10",
            "STREAMS",
            "big",
            "1000-1",
        ],
    );
    assert_eq!(reply.items()[0].items()[1].items().len(), 10);
    assert!(
        scanned <= 10 + SLACK,
        "XREADGROUP history scanned {scanned}"
    );
    let from = format!("{}-1", pending / 3);
    let (reply, scanned, _) = measured(&mut c, &["XPENDING", "big", "g", &from, "+", "10"]);
    assert_eq!(reply.items().len(), 10);
    assert!(scanned <= 10 + SLACK, "XPENDING of 10 scanned {scanned}");
    let (reply, scanned, _) = measured(
        &mut c,
        &["XPENDING", "big", "g", "IDLE", "0", &from, "+", "10", "c"],
    );
    assert_eq!(reply.items().len(), 10);
    assert!(
        scanned <= 10 + SLACK,
        "XPENDING of a consumer scanned {scanned}"
    );

    // Trimming 1,000 entries from the head visits those entries, their ten
    // nodes and the next first entry; on ten million entries the oldest are
    // on disk only, so a first memory-only attempt may stop part-way and
    // the run on the cold-read pool visit them all again.
    let first = c.cmd(&["XRANGE", "big", "-", "+", "COUNT", "1"]);
    let first_id = ids(&first)[0].clone();
    let first_ms: u64 = first_id
        .split('-')
        .next()
        .unwrap_or("0")
        .parse()
        .unwrap_or(0);
    let (reply, scanned, _) = measured(
        &mut c,
        &["XTRIM", "big", "MINID", &format!("{}-0", first_ms + 1001)],
    );
    assert_eq!(reply, R::Int(1000));
    assert!(
        scanned <= 2 * (1000 + 11 + 1) + SLACK,
        "XTRIM of 1,000 scanned {scanned}"
    );

    // Deleting the whole stream is O(1).
    let (reply, scanned, _) = measured(&mut c, &["DEL", "big"]);
    assert_eq!(reply, R::Int(1));
    assert!(scanned <= SLACK, "DEL scanned {scanned}");
}
