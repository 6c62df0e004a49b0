//! Cost of list commands on a list of one million elements, measured as
//! work done (the engine's counters in INFO storage: `scanned_entries`,
//! entries that range scans visited, and `point_reads`, point reads),
//! never as time:
//!
//! - LRANGE 0 9 (and any 10-element window) visits 10 entries, LINDEX and
//!   LSET make a point read or two, whatever the list's length;
//! - pushes and pops at either end cost the same on the big list as on a
//!   ten-element one;
//! - LINSERT and LREM near an end visit the elements between that end and
//!   the change, not the list;
//! - LPOS/LINSERT/LREM searches that end within 1,000 elements run on the
//!   network thread, longer ones on the cold-read pool;
//! - LTRIM keeping 10 elements of a million visits about 10;
//! - DEL of the million-element list is O(1): it scans nothing and leaves
//!   the elements to compaction (RocksDB still counts about a million keys
//!   right after).

use firn_testkit::{cost::measured, encode_request, env::cold_mode, info, Conn, Server, R};

const ELEMENTS: usize = 1_000_000;
const PER_COMMAND: usize = 1000;
/// RPUSH commands per pipelined write.
const PER_WRITE: usize = 50;

/// Entries a few background tasks may scan meanwhile (the expiry cycle).
const SLACK: u64 = 5;

fn element(i: usize) -> String {
    format!("element-{i:07}")
}

/// Builds `key` with `count` elements `element(0..count)` by pipelined
/// variadic RPUSH.
fn build(conn: &mut Conn, key: &str, count: usize) {
    let commands = count.div_ceil(PER_COMMAND);
    let mut sent = 0;
    while sent < commands {
        let batch = (commands - sent).min(PER_WRITE);
        let mut request = Vec::new();
        for c in sent..sent + batch {
            let start = c * PER_COMMAND;
            let end = (start + PER_COMMAND).min(count);
            let values: Vec<String> = (start..end).map(element).collect();
            let mut args: Vec<&[u8]> = vec![b"RPUSH", key.as_bytes()];
            args.extend(values.iter().map(|v| v.as_bytes()));
            request.extend_from_slice(&encode_request(&args));
        }
        conn.send_raw(&request);
        for c in sent..sent + batch {
            let expected = ((c + 1) * PER_COMMAND).min(count) as i64;
            assert_eq!(conn.read_reply().1, R::Int(expected));
        }
        sent += batch;
    }
}

fn bulks(items: &[String]) -> R {
    R::Array(Some(items.iter().map(|s| R::bulk(s.as_bytes())).collect()))
}

#[test]
fn a_million_element_list_costs_what_each_command_touches() {
    let server = Server::firn();
    let mut c = server.conn();
    build(&mut c, "big", ELEMENTS);
    build(&mut c, "small", 10);
    assert_eq!(c.cmd(&["LLEN", "big"]), R::Int(ELEMENTS as i64));

    // Ranges visit exactly what they return, wherever the window is.
    for (start, stop, first) in [
        ("0", "9", 0),
        ("500000", "500009", 500_000),
        ("-10", "-1", ELEMENTS - 10),
    ] {
        let (reply, scanned, _) = measured(&mut c, &["LRANGE", "big", start, stop]);
        let expected: Vec<String> = (first..first + 10).map(element).collect();
        assert_eq!(reply, bulks(&expected));
        assert!(
            (10..=10 + SLACK).contains(&scanned),
            "LRANGE {start} {stop} of a million elements scanned {scanned} entries"
        );
    }

    // Point reads and writes anywhere: no scan, a few point reads.
    let (reply, scanned, reads) = measured(&mut c, &["LINDEX", "big", "654321"]);
    assert_eq!(reply, R::bulk(element(654_321).as_bytes()));
    assert!(
        scanned <= SLACK && reads <= 3,
        "LINDEX: {scanned} scanned, {reads} reads"
    );
    let (reply, scanned, reads) = measured(&mut c, &["LSET", "big", "-123456", "changed"]);
    assert_eq!(reply, R::Simple("OK".into()));
    assert!(
        scanned <= SLACK && reads <= 3,
        "LSET: {scanned} scanned, {reads} reads"
    );
    assert_eq!(c.cmd(&["LINDEX", "big", "-123456"]), R::bulk(b"changed"));

    // Both ends cost the same on a million elements as on ten.
    for (name, extra) in [
        ("LPUSH", &["head"][..]),
        ("RPUSH", &["tail"]),
        ("LPOP", &[]),
        ("RPOP", &[]),
        ("LPOP", &["2"]),
        ("RPOP", &["2"]),
    ] {
        let cost = |c: &mut Conn, key: &str| {
            let mut line = vec![name, key];
            line.extend_from_slice(extra);
            let (reply, scanned, reads) = measured(c, &line);
            assert!(
                !matches!(reply, R::Error(_)),
                "{line:?}: {}",
                reply.render()
            );
            (scanned, reads)
        };
        let (big_scanned, big_reads) = cost(&mut c, "big");
        let (small_scanned, small_reads) = cost(&mut c, "small");
        assert!(
            big_scanned <= small_scanned + SLACK && big_reads <= small_reads + 1,
            "{name}: big list {big_scanned} scanned/{big_reads} reads, \
             small list {small_scanned}/{small_reads}"
        );
    }
    // After pops the head window still reads only itself.
    let (reply, scanned, _) = measured(&mut c, &["LRANGE", "big", "0", "1"]);
    assert_eq!(reply, bulks(&[element(2), element(3)]));
    assert!(
        scanned <= 2 + SLACK,
        "LRANGE 0 1 after pops scanned {scanned}"
    );
    assert_eq!(c.cmd(&["LLEN", "big"]), R::Int(ELEMENTS as i64 - 4));

    // Changes near an end shift only the elements between it and the
    // change: LINSERT finds its pivot from the head, LREM with a negative
    // count searches from the tail.
    let pivot = element(7);
    let (reply, scanned, _) = measured(&mut c, &["LINSERT", "big", "BEFORE", &pivot, "ins"]);
    assert_eq!(reply, R::Int(ELEMENTS as i64 - 3));
    assert!(
        scanned <= 20 + SLACK,
        "LINSERT near the head scanned {scanned}"
    );
    assert_eq!(c.cmd(&["LINDEX", "big", "5"]), R::bulk(b"ins"));
    let near_tail = element(ELEMENTS - 8);
    let (reply, scanned, _) = measured(&mut c, &["LREM", "big", "-1", &near_tail]);
    assert_eq!(reply, R::Int(1));
    assert!(
        scanned <= 20 + SLACK,
        "LREM near the tail scanned {scanned}"
    );
    // The tail lost two pops of one and two above: ELEMENTS - 3 is last.
    assert_eq!(
        c.cmd(&["LRANGE", "big", "-6", "-5"]),
        bulks(&[element(ELEMENTS - 9), element(ELEMENTS - 7)])
    );

    // A search that ends early stays on the network thread; one that must
    // walk far moves to the cold-read pool (with FIRN_DIFF_COLD=1 every
    // command goes there).
    let cold = |c: &mut Conn| info::storage(c, "cold_commands");
    let before = cold(&mut c);
    assert_eq!(c.cmd(&["LPOS", "big", "ins"]), R::Int(5));
    let after_near = cold(&mut c);
    let deep = element(500_000);
    assert_eq!(c.cmd(&["LPOS", "big", &deep]), R::Int(499_999));
    let after_far = cold(&mut c);
    if !cold_mode() {
        assert_eq!(
            after_near, before,
            "LPOS near the head left the network thread"
        );
        assert_eq!(after_far, before + 1, "LPOS of a far element stayed inline");
    }

    // DEL is one meta delete: nothing scanned, the elements stay for
    // compaction to reclaim.
    let (reply, scanned, reads) = measured(&mut c, &["DEL", "big"]);
    assert_eq!(reply, R::Int(1));
    assert!(
        scanned <= SLACK && reads <= 3,
        "DEL: {scanned} scanned, {reads} reads"
    );
    assert_eq!(c.cmd(&["EXISTS", "big"]), R::Int(0));
    assert_eq!(
        c.cmd(&["LRANGE", "big", "0", "9"]),
        R::Array(Some(Vec::new()))
    );
    let keys = info::storage(&mut c, "rocksdb_estimate_num_keys");
    assert!(
        keys >= ELEMENTS as u64 / 2,
        "DEL seems to have deleted the elements one by one: {keys} keys left"
    );

    // LTRIM keeping 10 of a million copies those 10, not the rest.
    build(&mut c, "trim", ELEMENTS);
    let (reply, scanned, _) = measured(&mut c, &["LTRIM", "trim", "400000", "400009"]);
    assert_eq!(reply, R::Simple("OK".into()));
    assert!(scanned <= 10 + SLACK, "LTRIM scanned {scanned} entries");
    let expected: Vec<String> = (400_000..400_010).map(element).collect();
    assert_eq!(c.cmd(&["LRANGE", "trim", "0", "-1"]), bulks(&expected));
    c.cmd(&["RPUSH", "trim", "x"]);
    assert_eq!(c.cmd(&["LLEN", "trim"]), R::Int(11));
}
