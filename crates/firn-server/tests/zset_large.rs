//! Cost of sorted-set commands on a set of one million members, measured as
//! work done (the engine's counters in INFO storage: `scanned_entries`,
//! entries that range scans visited, and `point_reads`, point reads),
//! never as time:
//!
//! - ZSCORE, ZMSCORE, ZCARD, ZADD and ZREM of one member cost the same on
//!   the million-member set as on a ten-member one (a point read or two,
//!   no scan);
//! - ZRANGEBYSCORE of 10 members, ZRANGE 0 9, ZRANGE -10 -1, ZREVRANGE,
//!   ZCOUNT of 10 and ZPOPMIN visit about as many index entries as they
//!   return; ZRANK near either end visits the members between that end and
//!   the member;
//! - a walk over the whole set (ZCOUNT -inf +inf) leaves the network
//!   thread for the cold-read pool (INFO `cold_commands`);
//! - DEL is O(1): it scans nothing and leaves the two million entries
//!   (member and index) to compaction.
//!
//! That compaction then drops them is checked in firn-storage
//! (`zset::tests::compaction_reclaims_members_and_index_of_a_deleted_set`),
//! where a compaction can be forced.

use firn_testkit::{
    cost::{measured, work},
    encode_request, info,
    streamed::read_streamed,
    Conn, Server, R,
};

const MEMBERS: usize = 1_000_000;
const PER_COMMAND: usize = 1000;
/// ZADD commands per pipelined write.
const PER_WRITE: usize = 20;
/// Entries a few background tasks may scan meanwhile (the expiry cycle).
const SLACK: u64 = 5;

fn member(i: usize) -> String {
    format!("member-{i:07}")
}

/// Builds `key` with members `member(0..count)`, member i scored i, by
/// pipelined ZADDs of 1000 pairs.
fn build(conn: &mut Conn, key: &str, count: usize) {
    let commands = count.div_ceil(PER_COMMAND);
    let mut sent = 0;
    while sent < commands {
        let batch = (commands - sent).min(PER_WRITE);
        let mut request = Vec::new();
        for c in sent..sent + batch {
            let start = c * PER_COMMAND;
            let end = (start + PER_COMMAND).min(count);
            let mut args: Vec<Vec<u8>> = vec![b"ZADD".to_vec(), key.as_bytes().to_vec()];
            for i in start..end {
                args.push(i.to_string().into_bytes());
                args.push(member(i).into_bytes());
            }
            let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
            request.extend_from_slice(&encode_request(&refs));
        }
        conn.send_raw(&request);
        for c in sent..sent + batch {
            let start = c * PER_COMMAND;
            let added = ((start + PER_COMMAND).min(count) - start) as i64;
            assert_eq!(conn.read_reply().1, R::Int(added));
        }
        sent += batch;
    }
}

/// `member score` pairs of members `range`, as a WITHSCORES reply.
fn with_scores(range: impl Iterator<Item = usize>) -> R {
    R::Array(Some(
        range
            .flat_map(|i| {
                [
                    R::bulk(member(i).as_bytes()),
                    R::bulk(i.to_string().as_bytes()),
                ]
            })
            .collect(),
    ))
}

/// Sends `ZRANGE key 0 -1 WITHSCORES` and counts the reply's elements as
/// they stream in, checking some of them, without keeping the reply.
fn streamed_zrange_count(port: u16, key: &str, first: usize) -> usize {
    let args: [&[u8]; 5] = [b"ZRANGE", key.as_bytes(), b"0", b"-1", b"WITHSCORES"];
    read_streamed(port, false, &args, '*', |n, element| {
        let i = first + n / 2;
        if n % 100_000 == 0 {
            assert_eq!(element, member(i).as_bytes(), "element {n}");
        }
        if n % 100_000 == 1 {
            assert_eq!(element, i.to_string().as_bytes(), "element {n}");
        }
    })
}

#[test]
fn a_million_member_sorted_set_costs_what_each_command_touches() {
    let server = Server::firn();
    let mut c = server.conn();
    build(&mut c, "big", MEMBERS);
    build(&mut c, "small", 10);
    assert_eq!(c.cmd(&["ZCARD", "big"]), R::Int(MEMBERS as i64));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "big"]), R::bulk(b"skiplist"));

    // Point commands cost the same on a million members as on ten.
    let probe = member(7);
    for line in [
        vec!["ZSCORE", "KEY", probe.as_str()],
        vec!["ZMSCORE", "KEY", probe.as_str(), "absent"],
        vec!["ZCARD", "KEY"],
        vec!["ZADD", "KEY", "0.5", "fresh"],
        vec!["ZADD", "KEY", "XX", "7.5", probe.as_str()],
        vec!["ZINCRBY", "KEY", "-0.5", probe.as_str()],
        vec!["ZREM", "KEY", "fresh"],
    ] {
        let cost = |c: &mut Conn, key: &str| {
            let args: Vec<&str> = line
                .iter()
                .map(|a| if *a == "KEY" { key } else { a })
                .collect();
            let (reply, scanned, reads) = measured(c, &args);
            assert!(!reply.is_error(), "{args:?}: {}", reply.render());
            (scanned, reads)
        };
        let (big_scanned, big_reads) = cost(&mut c, "big");
        let (small_scanned, small_reads) = cost(&mut c, "small");
        assert!(
            big_scanned <= small_scanned + SLACK && big_reads <= small_reads + 1,
            "{line:?}: big set {big_scanned} scanned/{big_reads} reads, \
             small set {small_scanned}/{small_reads}"
        );
        assert!(big_scanned <= SLACK, "{line:?} scanned {big_scanned}");
    }
    assert_eq!(c.cmd(&["ZSCORE", "big", &probe]), R::bulk(b"7"));

    // Ranges visit about what they return, wherever they are.
    for (args, expected) in [
        (
            vec!["ZRANGEBYSCORE", "big", "500000", "500009", "WITHSCORES"],
            with_scores(500_000..500_010),
        ),
        (
            vec![
                "ZRANGEBYSCORE",
                "big",
                "(600000",
                "+inf",
                "WITHSCORES",
                "LIMIT",
                "0",
                "10",
            ],
            with_scores(600_001..600_011),
        ),
        (
            vec!["ZREVRANGEBYSCORE", "big", "(300010", "300000", "WITHSCORES"],
            with_scores((300_000..300_010).rev()),
        ),
        (
            vec!["ZRANGE", "big", "0", "9", "WITHSCORES"],
            with_scores(0..10),
        ),
        (
            vec!["ZRANGE", "big", "-10", "-1", "WITHSCORES"],
            with_scores(MEMBERS - 10..MEMBERS),
        ),
        (
            vec!["ZREVRANGE", "big", "0", "9", "WITHSCORES"],
            with_scores((MEMBERS - 10..MEMBERS).rev()),
        ),
        (
            vec!["ZRANGE", "big", "800000", "800009", "BYSCORE", "WITHSCORES"],
            with_scores(800_000..800_010),
        ),
    ] {
        let (reply, scanned, _) = measured(&mut c, &args);
        assert_eq!(reply, expected, "{args:?}");
        assert!(
            scanned <= 10 + SLACK,
            "{args:?} on a million members scanned {scanned} entries"
        );
    }
    let (reply, scanned, _) = measured(&mut c, &["ZCOUNT", "big", "1000", "(1010"]);
    assert_eq!(reply, R::Int(10));
    assert!(scanned <= 10 + SLACK, "ZCOUNT of 10 scanned {scanned}");

    // ZRANK walks from both ends in turn, 32 entries first, so a member
    // near either end costs at most 64 visits.
    for (m, rank) in [(5, 5), (MEMBERS - 3, MEMBERS - 3)] {
        let (reply, scanned, _) = measured(&mut c, &["ZRANK", "big", &member(m)]);
        assert_eq!(reply, R::Int(rank as i64));
        assert!(
            scanned <= 64 + SLACK,
            "ZRANK of rank {rank} scanned {scanned}"
        );
    }

    // Pops take the end they return.
    let (reply, scanned, _) = measured(&mut c, &["ZPOPMIN", "big", "2"]);
    assert_eq!(reply, with_scores(0..2));
    assert!(scanned <= 2 + SLACK, "ZPOPMIN 2 scanned {scanned}");
    let (reply, scanned, _) = measured(&mut c, &["ZPOPMAX", "big"]);
    assert_eq!(reply, with_scores(MEMBERS - 1..MEMBERS));
    assert!(scanned <= 1 + SLACK, "ZPOPMAX scanned {scanned}");
    let size = MEMBERS as i64 - 3;
    assert_eq!(c.cmd(&["ZCARD", "big"]), R::Int(size));

    // The whole set is streamed from a snapshot (no walk in a command's
    // transaction), never held whole.
    let (scanned, _) = work(&mut c);
    let elements = streamed_zrange_count(server.port(), "big", 2);
    assert_eq!(elements, 2 * size as usize);
    let (scanned_after, _) = work(&mut c);
    assert!(
        scanned_after - scanned <= SLACK,
        "ZRANGE 0 -1 walked {} entries inside a command",
        scanned_after - scanned
    );

    // A walk of the whole set runs on the cold-read pool.
    let cold = info::storage(&mut c, "cold_commands");
    assert_eq!(c.cmd(&["ZCOUNT", "big", "-inf", "+inf"]), R::Int(size));
    assert!(
        info::storage(&mut c, "cold_commands") > cold,
        "ZCOUNT of the whole set stayed on a network thread"
    );

    // DEL drops the meta record only; members and index stay for compaction.
    let keys_before = info::storage(&mut c, "rocksdb_estimate_num_keys");
    let (reply, scanned, reads) = measured(&mut c, &["DEL", "big"]);
    assert_eq!(reply, R::Int(1));
    assert!(
        scanned <= SLACK && reads <= 3,
        "DEL: {scanned} scanned, {reads} reads"
    );
    assert_eq!(c.cmd(&["EXISTS", "big"]), R::Int(0));
    assert_eq!(c.cmd(&["ZCARD", "big"]), R::Int(0));
    assert_eq!(
        c.cmd(&["ZRANGE", "big", "0", "9"]),
        R::Array(Some(Vec::new()))
    );
    assert!(
        info::storage(&mut c, "rocksdb_estimate_num_keys") * 2 >= keys_before,
        "entries vanished at DEL time"
    );
    // A new set at the same key starts empty.
    c.cmd(&["ZADD", "big", "1", "again"]);
    assert_eq!(
        c.cmd(&["ZRANGE", "big", "0", "-1"]),
        R::Array(Some(vec![R::bulk(b"again")]))
    );
}
