//! A hash of a million fields costs what each command touches (item 10 of
//! the collections issue), measured in work, never in time:
//! - HGET, HLEN, HEXISTS and HSTRLEN do as many RocksDB point reads on the
//!   million-field hash as on a ten-field one (INFO `point_reads`);
//! - HGETALL of the big hash is streamed from a background thread, not
//!   built on a network thread (INFO `streamed_replies`), and returns every
//!   field;
//! - DEL removes the key at once with a constant number of reads and leaves
//!   the fields to compaction (RocksDB still holds them right after).
//!
//! That compaction then drops the fields of a deleted hash is checked in
//! firn-storage (`hash::tests::compaction_reclaims_the_fields_of_a_deleted_hash`),
//! where a compaction can be forced.

use firn_testkit::{encode_request, info, streamed::read_streamed, Conn, Kind, Server, R};

const FIELDS: usize = 1_000_000;
const FIELDS_PER_HSET: usize = 1000;
/// HSET commands sent per write before their replies are read.
const HSETS_PER_BATCH: usize = 20;
/// Point commands measured on each hash.
const PROBES: usize = 200;

fn field(i: usize) -> String {
    format!("field:{i:07}")
}

fn value(i: usize) -> String {
    format!("value:{i}")
}

/// Fills `key` with `count` fields by pipelined HSETs of 1000 fields.
fn build(conn: &mut Conn, key: &str, count: usize) {
    let mut start = 0;
    while start < count {
        let mut batch = Vec::new();
        let mut commands = 0;
        while commands < HSETS_PER_BATCH && start < count {
            let end = (start + FIELDS_PER_HSET).min(count);
            let mut args: Vec<Vec<u8>> = vec![b"HSET".to_vec(), key.as_bytes().to_vec()];
            for i in start..end {
                args.push(field(i).into_bytes());
                args.push(value(i).into_bytes());
            }
            let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
            batch.extend(encode_request(&refs));
            start = end;
            commands += 1;
        }
        conn.send_raw(&batch);
        for _ in 0..commands {
            let reply = conn.read_reply().1;
            assert!(reply.as_int().is_some(), "HSET: {}", reply.render());
        }
    }
}

/// RocksDB point reads done by `work`.
fn reads_during(conn: &mut Conn, work: impl FnOnce(&mut Conn)) -> u64 {
    let before = info::storage(conn, "point_reads");
    work(conn);
    info::storage(conn, "point_reads") - before
}

/// Point commands on `key`, whose fields are `field(0..fields)`.
fn point_commands(conn: &mut Conn, key: &str, fields: usize) {
    for n in 0..PROBES {
        let i = n * 7919 % fields;
        assert_eq!(
            conn.cmd(&["HGET", key, &field(i)]),
            R::bulk(value(i).as_bytes())
        );
        assert_eq!(conn.cmd(&["HLEN", key]), R::Int(fields as i64));
        assert_eq!(conn.cmd(&["HEXISTS", key, &field(i)]), R::Int(1));
        assert_eq!(
            conn.cmd(&["HSTRLEN", key, &field(i)]),
            R::Int(value(i).len() as i64)
        );
    }
}

/// Sends HGETALL and counts the reply's elements as they stream in,
/// checking a few of them, without keeping the reply.
fn hgetall_element_count(port: u16, key: &str) -> usize {
    let args: [&[u8]; 2] = [b"HGETALL", key.as_bytes()];
    read_streamed(port, false, &args, '*', |n, element| {
        // Fields come in byte order: the n-th pair is field(n/2).
        if n % 200_000 == 0 {
            assert_eq!(element, field(n / 2).as_bytes(), "element {n}");
        }
        if n % 200_000 == 1 {
            assert_eq!(element, value(n / 2).as_bytes(), "element {n}");
        }
    })
}

#[test]
fn a_million_field_hash_costs_what_each_command_touches() {
    let server = Server::firn();
    if server.kind() != Kind::Firn {
        return;
    }
    let mut conn = server.conn();
    build(&mut conn, "small", 10);
    build(&mut conn, "big", FIELDS);
    assert_eq!(conn.cmd(&["HLEN", "big"]), R::Int(FIELDS as i64));
    assert_eq!(
        conn.cmd(&["OBJECT", "ENCODING", "big"]),
        R::bulk(b"hashtable")
    );

    // Point commands: no more reads on a million fields than on ten. Each
    // read is the field itself (the key's record is in the hot tier); a
    // command that had to wait for the disk reads its field twice.
    let small_reads = reads_during(&mut conn, |c| point_commands(c, "small", 10));
    let big_reads = reads_during(&mut conn, |c| point_commands(c, "big", FIELDS));
    eprintln!("point reads: {small_reads} on 10 fields, {big_reads} on {FIELDS}");
    assert!(
        big_reads <= 2 * small_reads + 20 && big_reads <= (PROBES * 3 * 2 + 20) as u64,
        "point commands read {big_reads} entries on the big hash, {small_reads} on the small one"
    );

    // Small samples and scan pages stay small.
    assert_eq!(conn.cmd(&["HRANDFIELD", "big", "5"]).items().len(), 5);
    assert_eq!(conn.cmd(&["HRANDFIELD", "big", "-5"]).items().len(), 5);
    let page = conn.cmd(&["HSCAN", "big", "0", "COUNT", "10"]);
    assert_eq!(page.items()[1].items().len(), 20, "{}", page.render());

    // HGETALL is streamed and answers every field.
    let streamed_before = info::storage(&mut conn, "streamed_replies");
    assert_eq!(hgetall_element_count(server.port(), "big"), 2 * FIELDS);
    assert_eq!(
        info::storage(&mut conn, "streamed_replies"),
        streamed_before + 1,
        "HGETALL of a million fields was not streamed"
    );

    // DEL: one record, a constant number of reads; the fields stay in
    // RocksDB for compaction.
    let entries_before = info::storage(&mut conn, "rocksdb_estimate_num_keys");
    assert!(entries_before >= FIELDS as u64 * 9 / 10, "{entries_before}");
    let del_reads = reads_during(&mut conn, |c| {
        assert_eq!(c.cmd(&["DEL", "big"]), R::Int(1));
    });
    eprintln!("DEL read {del_reads} entries; RocksDB held {entries_before} before");
    assert!(del_reads <= 5, "DEL read {del_reads} entries");
    assert_eq!(conn.cmd(&["EXISTS", "big"]), R::Int(0));
    assert_eq!(conn.cmd(&["HLEN", "big"]), R::Int(0));
    assert_eq!(conn.cmd(&["HGET", "big", &field(42)]), R::Bulk(None));
    assert_eq!(conn.cmd(&["DBSIZE"]), R::Int(1));
    let entries_after = info::storage(&mut conn, "rocksdb_estimate_num_keys");
    assert!(
        entries_after >= FIELDS as u64 * 9 / 10,
        "the fields were deleted one by one: {entries_before} entries before DEL, {entries_after} after"
    );
    // A new hash under the same key starts empty.
    assert_eq!(conn.cmd(&["HSET", "big", "f", "v"]), R::Int(1));
    assert_eq!(conn.cmd(&["HLEN", "big"]), R::Int(1));
    assert_eq!(conn.cmd(&["HGET", "big", &field(42)]), R::Bulk(None));
}
