//! MEMORY TIERS (Firn's own): where a key's bytes are. A key just written
//! is in memory; after DEBUG RELOAD (memtables flushed, caches emptied) a
//! large collection is on disk and barely in memory. Argument errors and a
//! missing key answer as MEMORY USAGE's do.

use firn_testkit::{Server, R};

/// The reply's fields, RESP2 flat array or RESP3 map alike.
fn fields(r: &R) -> Vec<(String, i64)> {
    let pairs: Vec<(R, R)> = match r {
        R::Map(pairs) => pairs.clone(),
        R::Array(Some(items)) => items
            .chunks(2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect(),
        other => panic!("not a map: {other:?}"),
    };
    pairs
        .into_iter()
        .map(|(k, v)| (k.as_str().unwrap_or_default(), v.as_int().unwrap_or(-1)))
        .collect()
}

fn field(r: &R, name: &str) -> i64 {
    fields(r)
        .into_iter()
        .find(|(k, _)| k == name)
        .unwrap_or_else(|| panic!("no {name} in {r:?}"))
        .1
}

#[test]
fn a_hot_key_is_in_memory_and_a_reloaded_collection_on_disk() {
    let server = Server::firn_with(&["--enable-debug-command", "yes"]);
    let mut c = server.conn();
    c.cmd(&["CONFIG", "SET", "debug-cold-reads", "no"]);
    c.cmd(&["SET", "small", "value"]);
    c.cmd(&["GET", "small"]);
    let tiers = c.cmd(&["MEMORY", "TIERS", "small"]);
    assert!(field(&tiers, "ram-bytes") > 0, "{tiers:?}");
    assert_eq!(field(&tiers, "hot"), 1, "{tiers:?}");
    let names: Vec<String> = fields(&tiers).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        names,
        [
            "ram-bytes",
            "disk-bytes",
            "hot",
            "hot-bytes",
            "cache-bytes",
            "memtable-bytes"
        ]
    );
    // A hash of 20,000 fields of 100 bytes: some 2 MB of records.
    let member = "v".repeat(100);
    for batch in 0..20 {
        let mut args = vec!["HSET".to_string(), "big".to_string()];
        for i in 0..1000 {
            args.push(format!("field:{batch}:{i}"));
            args.push(member.clone());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        c.cmd(&args);
    }
    let before = c.cmd(&["MEMORY", "TIERS", "big"]);
    assert!(field(&before, "ram-bytes") > 1_000_000, "{before:?}");
    assert_eq!(c.cmd(&["DEBUG", "RELOAD"]), R::Simple("OK".into()));
    let after = c.cmd(&["MEMORY", "TIERS", "big"]);
    // (Compressed in SST files: the values repeat.)
    assert!(field(&after, "disk-bytes") > 100_000, "{after:?}");
    assert!(field(&after, "ram-bytes") < 10_000, "{after:?}");
    assert_eq!(field(&after, "memtable-bytes"), 0, "{after:?}");
    // RESP3: a map.
    c.cmd(&["HELLO", "3"]);
    assert!(matches!(c.cmd(&["MEMORY", "TIERS", "big"]), R::Map(_)));
}

#[test]
fn missing_keys_and_argument_errors() {
    let server = Server::firn();
    let mut c = server.conn();
    assert_eq!(c.cmd(&["MEMORY", "TIERS", "missing"]), R::Bulk(None));
    assert_eq!(
        c.cmd(&["MEMORY", "TIERS"]),
        R::Error("ERR wrong number of arguments for 'memory|tiers' command".into())
    );
    assert_eq!(
        c.cmd(&["MEMORY", "TIERS", "a", "b"]),
        R::Error("ERR wrong number of arguments for 'memory|tiers' command".into())
    );
    c.cmd(&["SET", "k", "v"]);
    // Inside a transaction it runs with the others (on the pool).
    c.cmd(&["MULTI"]);
    c.cmd(&["MEMORY", "TIERS", "k"]);
    let exec = c.cmd(&["EXEC"]);
    assert!(field(&exec.items()[0], "ram-bytes") > 0, "{exec:?}");
    let help = c.cmd(&["MEMORY", "HELP"]).render();
    assert!(help.contains("TIERS <key>"), "{help}");
}
