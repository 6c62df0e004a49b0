//! A set of a million members: the work a command does must not grow with
//! the set. Work is read from INFO storage (`point_reads`: point
//! reads; `scanned_entries`: entries handed out by range scans), never
//! from the clock:
//! - SCARD and SISMEMBER read as much on the big set as on a small one;
//! - SRANDMEMBER and SPOP with a small count read about as many members as
//!   they return; SINTER and SINTERCARD walk the smaller set and probe the
//!   big one; an SSCAN page reads one page;
//! - DEL drops the key at once without reading its members.

use firn_testkit::{
    cost::measured, encode_request, info, streamed::read_streamed, Conn, Server, R,
};
use std::collections::BTreeSet;

const MEMBERS: usize = 1_000_000;
const PER_COMMAND: usize = 1_000;
/// Commands sent per write while filling the set.
const PIPELINE: usize = 50;

fn member(i: usize) -> String {
    format!("member:{i:07}")
}

/// Fills `key` with members 0..n, PER_COMMAND per SADD, pipelined.
fn fill(conn: &mut Conn, key: &str, n: usize) {
    let commands: Vec<(Vec<u8>, usize)> = (0..n)
        .step_by(PER_COMMAND)
        .map(|start| {
            let names: Vec<String> = (start..n.min(start + PER_COMMAND)).map(member).collect();
            let mut args: Vec<&[u8]> = vec![b"SADD", key.as_bytes()];
            args.extend(names.iter().map(|m| m.as_bytes()));
            (encode_request(&args), names.len())
        })
        .collect();
    for batch in commands.chunks(PIPELINE) {
        let bytes: Vec<u8> = batch.iter().flat_map(|(req, _)| req.clone()).collect();
        conn.send_raw(&bytes);
        for (_, added) in batch {
            let reply = conn.read_reply().1;
            assert_eq!(reply, R::Int(*added as i64), "SADD while filling");
        }
    }
}

fn distinct_members(reply: &R) -> BTreeSet<Vec<u8>> {
    let got: Vec<Vec<u8>> = reply
        .items()
        .iter()
        .map(|m| m.as_bytes().expect("bulk member").to_vec())
        .collect();
    let distinct: BTreeSet<Vec<u8>> = got.iter().cloned().collect();
    assert_eq!(
        distinct.len(),
        got.len(),
        "members repeat: {}",
        reply.render()
    );
    distinct
}

/// Sends SMEMBERS (after HELLO `protocol`) and counts the members as they
/// stream in, checking they come in byte order, without keeping the reply.
fn smembers_count(port: u16, key: &str, protocol: u8) -> usize {
    let header = if protocol == 3 { '~' } else { '*' };
    let mut previous = Vec::new();
    let args: [&[u8]; 2] = [b"SMEMBERS", key.as_bytes()];
    read_streamed(port, protocol == 3, &args, header, |n, member| {
        assert!(member > previous.as_slice(), "member {n} out of order");
        previous = member.to_vec();
    })
}

#[test]
fn commands_on_a_million_member_set_do_work_in_proportion_to_what_they_touch() {
    let server = Server::firn();
    let mut conn = server.conn();
    fill(&mut conn, "big", MEMBERS);
    fill(&mut conn, "small", 10);
    assert_eq!(conn.cmd(&["SCARD", "big"]), R::Int(MEMBERS as i64));
    assert_eq!(conn.cmd(&["SCARD", "small"]), R::Int(10));
    assert_eq!(
        conn.cmd(&["OBJECT", "ENCODING", "big"]),
        R::bulk(b"hashtable")
    );

    // O(1) and point reads: as much work on a million members as on ten.
    let present = member(MEMBERS / 2);
    let absent = "member:x";
    for args in [
        ["SCARD", "KEY", ""],
        ["SISMEMBER", "KEY", present.as_str()],
        ["SISMEMBER", "KEY", absent],
        ["SMISMEMBER", "KEY", absent],
    ] {
        let with_key = |key: &'static str| -> Vec<&str> {
            args.iter()
                .map(|a| if *a == "KEY" { key } else { a })
                .filter(|a| !a.is_empty())
                .collect()
        };
        let (_, small_scanned, small_reads) = measured(&mut conn, &with_key("small"));
        let (_, big_scanned, big_reads) = measured(&mut conn, &with_key("big"));
        assert_eq!((small_scanned, big_scanned), (0, 0), "{args:?} scanned");
        assert!(
            big_reads <= small_reads + 2 && big_reads <= 4,
            "{args:?}: {big_reads} reads on the big set, {small_reads} on the small"
        );
    }
    assert_eq!(conn.cmd(&["SISMEMBER", "big", &present]), R::Int(1));

    // Random members: about as many entries read as members returned.
    for count in ["10", "-10"] {
        let (reply, scanned, reads) = measured(&mut conn, &["SRANDMEMBER", "big", count]);
        assert_eq!(reply.items().len(), 10);
        if count == "10" {
            distinct_members(&reply);
        }
        assert!(
            scanned <= 100 && reads <= 20,
            "SRANDMEMBER {count}: {scanned} entries scanned, {reads} point reads"
        );
    }
    let (reply, scanned, _) = measured(&mut conn, &["SPOP", "big", "10"]);
    let popped = distinct_members(&reply);
    assert_eq!(popped.len(), 10);
    assert!(scanned <= 100, "SPOP 10 scanned {scanned} entries");
    assert_eq!(conn.cmd(&["SCARD", "big"]), R::Int(MEMBERS as i64 - 10));
    for m in &popped {
        let m = String::from_utf8_lossy(m).into_owned();
        assert_eq!(conn.cmd(&["SISMEMBER", "big", &m]), R::Int(0));
    }
    let (reply, scanned, _) = measured(&mut conn, &["SPOP", "big"]);
    assert!(reply.as_bytes().is_some());
    assert!(scanned <= 50, "SPOP scanned {scanned} entries");

    // The smaller set is walked, the big one probed.
    let (reply, scanned, reads) = measured(&mut conn, &["SINTERCARD", "2", "big", "small"]);
    assert!(matches!(reply, R::Int(n) if n >= 8), "{}", reply.render());
    assert!(
        scanned <= 40 && reads <= 60,
        "SINTERCARD: {scanned} scanned, {reads} reads"
    );
    let (reply, scanned, _) = measured(&mut conn, &["SINTER", "small", "big"]);
    assert!(reply.items().len() >= 8);
    assert!(scanned <= 40, "SINTER scanned {scanned} entries");
    let (reply, scanned, _) = measured(&mut conn, &["SSCAN", "big", "0", "COUNT", "20"]);
    assert_eq!(reply.items()[1].items().len(), 20);
    assert!(scanned <= 60, "SSCAN page scanned {scanned} entries");

    // SMEMBERS is streamed from a snapshot and answers every member.
    let before = info::storage(&mut conn, "streamed_replies");
    assert_eq!(smembers_count(server.port(), "big", 2), MEMBERS - 11);
    assert_eq!(smembers_count(server.port(), "big", 3), MEMBERS - 11);
    assert_eq!(
        info::storage(&mut conn, "streamed_replies"),
        before + 2,
        "SMEMBERS was not streamed"
    );

    // DEL: the key goes at once; its members are left to compaction.
    let (reply, scanned, reads) = measured(&mut conn, &["DEL", "big"]);
    assert_eq!(reply, R::Int(1));
    assert_eq!(scanned, 0, "DEL scanned members");
    assert!(reads <= 4, "DEL did {reads} point reads");
    assert_eq!(conn.cmd(&["EXISTS", "big"]), R::Int(0));
    assert_eq!(conn.cmd(&["SCARD", "big"]), R::Int(0));
    let (reply, scanned, _) = measured(&mut conn, &["SADD", "big", "fresh"]);
    assert_eq!(reply, R::Int(1));
    assert_eq!(scanned, 0);
    assert_eq!(
        conn.cmd(&["SMEMBERS", "big"]),
        R::Array(Some(vec![R::bulk(b"fresh")]))
    );
}
