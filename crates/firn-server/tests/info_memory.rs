//! INFO `memory` and `storage` count each component of the memory budget
//! once, `used_memory` is their sum, and the caches really have the shares
//! of `maxmemory` that docs/configuration.md describes.

use firn_testkit::info::Info;
use firn_testkit::{Kind, Server, R};

#[test]
fn used_memory_is_the_sum_of_components_counted_once() {
    let server = Server::firn_with(&["--maxmemory", "64mb"]);
    if server.kind() != Kind::Firn {
        return; // Firn's own fields: nothing to compare in self-test mode.
    }
    let mut c = server.conn();
    let big = "x".repeat(200_000);
    for i in 0..300 {
        let key = format!("key:{i}");
        assert_eq!(
            c.cmd(&["SET", &key, &"v".repeat(1000)]),
            R::Simple("OK".into())
        );
    }
    assert_eq!(c.cmd(&["SET", "big", &big]), R::Simple("OK".into()));
    assert_eq!(c.cmd(&["GET", "big"]), R::bulk(big.as_bytes()));

    let memory = Info::read(&mut c, "memory");
    let parts = [
        "mem_hot_tier",
        "mem_block_cache",
        "mem_table_readers",
        "mem_pending_writes",
        "mem_clients_normal",
        // OBJECT IDLETIME's access times (1/32 of the budget at most).
        "mem_access_times",
        // The Lua VM (scripts and functions).
        "used_memory_vm_total",
    ];
    let sum: i64 = parts.iter().map(|p| memory.field(p)).sum();
    assert_eq!(memory.field("used_memory"), sum);
    assert!(memory.field("mem_access_times") > 300 * 10);
    assert!(memory.field("mem_access_times") <= (64 << 20) / 32);
    assert!(memory.field("mem_hot_tier") > 300 * 1000);
    // Memtables and index/filter blocks live inside the block cache.
    assert!(memory.field("mem_block_cache_memtables") > 0);
    assert!(
        memory.field("mem_block_cache_memtables") <= memory.field("mem_block_cache"),
        "{}",
        memory.text()
    );
    assert!(memory.field("used_memory_rss") > 0);

    // The shares add up to the budget, and RocksDB's cache has its share.
    let budget = memory.field("maxmemory_budget");
    assert_eq!(budget, 64 << 20);
    assert_eq!(
        memory.field("maxmemory_hot_tier")
            + memory.field("maxmemory_block_cache")
            + memory.field("maxmemory_reserve"),
        budget
    );
    let storage = Info::read(&mut c, "storage");
    assert_eq!(
        storage.field("rocksdb_block_cache_capacity"),
        memory.field("maxmemory_block_cache")
    );
    // One shared cache: the same figure in both sections, not six times it.
    let cache = storage.field("rocksdb_block_cache_bytes");
    assert!(cache <= storage.field("rocksdb_block_cache_capacity"));
    assert!(cache.abs_diff(memory.field("mem_block_cache")) < 1 << 20);

    // CONFIG SET maxmemory gives the caches their new shares at once.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "maxmemory", "128mb"]),
        R::Simple("OK".into())
    );
    let memory = Info::read(&mut c, "memory");
    let storage = Info::read(&mut c, "storage");
    assert_eq!(memory.field("maxmemory_budget"), 128 << 20);
    assert_eq!(
        storage.field("rocksdb_block_cache_capacity"),
        memory.field("maxmemory_block_cache")
    );
}

/// CONFIG SET maxmemory 1 shrinks the memtable budget at run time below
/// what the column families' empty memtables hold; RocksDB's write-buffer
/// manager then stalled every write for ever (FLUSHALL's reply never
/// came; Redis's scripting unit hung on it). Writes must go on.
#[test]
fn a_tiny_maxmemory_set_at_run_time_never_stalls_writes() {
    let server = Server::firn();
    let mut c = server.conn();
    let value = "v".repeat(1000);
    for round in 0..3 {
        for i in 0..3000 {
            c.send(&[b"SET", format!("k{round}-{i}").as_bytes(), value.as_bytes()]);
        }
        for _ in 0..3000 {
            c.read_reply();
        }
        c.cmd(&["CONFIG", "SET", "maxmemory", "1"]);
        assert_eq!(c.cmd(&["FLUSHALL"]), R::Simple("OK".into()));
        assert_eq!(c.cmd(&["SET", "after", "flush"]), R::Simple("OK".into()));
        c.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
    }
}
