//! INFO `memory` and `storage` count each component of the memory budget
//! once, `used_memory` is their sum, and the caches really have the shares
//! of `maxmemory` that docs/configuration.md describes.

mod common;

use common::{Kind, Server, R};

fn info(server: &Server, section: &str) -> Vec<(String, String)> {
    let mut c = server.conn();
    let text = match c.cmd(&["INFO", section]) {
        R::Bulk(Some(v)) => String::from_utf8_lossy(&v).to_string(),
        other => panic!("INFO: {}", other.render()),
    };
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect()
}

fn field(fields: &[(String, String)], name: &str) -> u64 {
    fields
        .iter()
        .find(|(k, _)| k == name)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or_else(|| panic!("no numeric {name} in INFO"))
}

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

    let memory = info(&server, "memory");
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
    let sum: u64 = parts.iter().map(|p| field(&memory, p)).sum();
    assert_eq!(field(&memory, "used_memory"), sum);
    assert!(field(&memory, "mem_access_times") > 300 * 10);
    assert!(field(&memory, "mem_access_times") <= (64 << 20) / 32);
    assert!(field(&memory, "mem_hot_tier") > 300 * 1000);
    // Memtables and index/filter blocks live inside the block cache.
    assert!(field(&memory, "mem_block_cache_memtables") > 0);
    assert!(
        field(&memory, "mem_block_cache_memtables") <= field(&memory, "mem_block_cache"),
        "{memory:?}"
    );
    assert!(field(&memory, "used_memory_rss") > 0);

    // The shares add up to the budget, and RocksDB's cache has its share.
    let budget = field(&memory, "maxmemory_budget");
    assert_eq!(budget, 64 << 20);
    assert_eq!(
        field(&memory, "maxmemory_hot_tier")
            + field(&memory, "maxmemory_block_cache")
            + field(&memory, "maxmemory_reserve"),
        budget
    );
    let storage = info(&server, "storage");
    assert_eq!(
        field(&storage, "rocksdb_block_cache_capacity"),
        field(&memory, "maxmemory_block_cache")
    );
    // One shared cache: the same figure in both sections, not six times it.
    let cache = field(&storage, "rocksdb_block_cache_bytes");
    assert!(cache <= field(&storage, "rocksdb_block_cache_capacity"));
    assert!(cache.abs_diff(field(&memory, "mem_block_cache")) < 1 << 20);

    // CONFIG SET maxmemory gives the caches their new shares at once.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "maxmemory", "128mb"]),
        R::Simple("OK".into())
    );
    let memory = info(&server, "memory");
    let storage = info(&server, "storage");
    assert_eq!(field(&memory, "maxmemory_budget"), 128 << 20);
    assert_eq!(
        field(&storage, "rocksdb_block_cache_capacity"),
        field(&memory, "maxmemory_block_cache")
    );
}
