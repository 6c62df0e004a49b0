//! INFO `memory` and `storage`: where the memory budget goes and Firn's
//! storage tiers.
//!
//! `used_memory` is the sum of what Firn can count, each component once:
//! the hot tier, the RocksDB block cache (one cache shared by every column
//! family; it contains the memtables and the index and filter blocks, which
//! are shown as parts of it, not added again), SST readers' memory outside
//! the cache, writes queued for the writer (the pending-write overlay) and
//! the clients' query buffers. It leaves out what no component tracks:
//! allocator slack, thread stacks, the program itself, flush and
//! compaction buffers. `used_memory_rss` is what the kernel counts.

use std::sync::atomic::Ordering;

use super::format::{human_bytes, line};
use crate::config::MemoryBudget;
use crate::server::Server;

/// Resident set size and its peak in bytes, from /proc (0 where unavailable).
fn rss_and_peak_bytes() -> (u64, u64) {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return (0, 0);
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .map_or(0, |kib| kib * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Bytes clients have sent that are not parsed yet.
pub fn client_query_buffer_bytes(server: &Server) -> u64 {
    server
        .clients
        .lock()
        .values()
        .map(|c| c.query_buffer.load(Ordering::Relaxed))
        .sum()
}

/// MEMORY STATS: Redis 7.0's fields, in its order, from the figures INFO
/// `memory` reports. What Firn has no counterpart for (replication
/// backlog, replicas, cluster links, AOF buffer, the main dictionaries'
/// overhead) is 0; `dataset.bytes` is `used_memory` less the clients' and
/// the scripts' share; the peak is the resident set's.
pub fn memory_stats(server: &Server) -> Vec<(&'static str, MemoryStat)> {
    use MemoryStat::{Bytes, Dbs, Ratio};
    let Figures {
        clients,
        scripting,
        used,
        rss,
        rss_peak,
        ..
    } = figures(server);
    let lua = scripting.scripts_eval_bytes + scripting.vm_eval_bytes;
    let functions = scripting.functions_bytes + scripting.vm_functions_bytes;
    let overhead = clients + lua + functions;
    let dataset = used.saturating_sub(overhead);
    let keys: u64 = (0..server.engine.databases())
        .map(|db| server.engine.key_count(db as u8).0)
        .sum();
    let dbs: Vec<u8> = (0..server.engine.databases() as u8)
        .filter(|db| server.engine.key_count(*db).0 > 0)
        .collect();
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    vec![
        ("peak.allocated", Bytes(rss_peak.max(used))),
        ("total.allocated", Bytes(used)),
        ("startup.allocated", Bytes(0)),
        ("replication.backlog", Bytes(0)),
        ("clients.slaves", Bytes(0)),
        ("clients.normal", Bytes(clients)),
        ("cluster.links", Bytes(0)),
        ("aof.buffer", Bytes(0)),
        ("lua.caches", Bytes(lua)),
        ("functions.caches", Bytes(functions)),
        ("", Dbs(dbs)),
        ("overhead.total", Bytes(overhead)),
        ("keys.count", Bytes(keys)),
        (
            "keys.bytes-per-key",
            Bytes(dataset.checked_div(keys).unwrap_or(0)),
        ),
        ("dataset.bytes", Bytes(dataset)),
        ("dataset.percentage", Ratio(100.0 * ratio(dataset, used))),
        (
            "peak.percentage",
            Ratio(100.0 * ratio(used, rss_peak.max(used))),
        ),
        ("allocator.allocated", Bytes(used)),
        ("allocator.active", Bytes(used)),
        ("allocator.resident", Bytes(rss)),
        ("allocator-fragmentation.ratio", Ratio(1.0)),
        ("allocator-fragmentation.bytes", Bytes(0)),
        ("allocator-rss.ratio", Ratio(ratio(rss, used))),
        ("allocator-rss.bytes", Bytes(rss.saturating_sub(used))),
        ("rss-overhead.ratio", Ratio(1.0)),
        ("rss-overhead.bytes", Bytes(0)),
        ("fragmentation", Ratio(ratio(rss, used))),
        ("fragmentation.bytes", Bytes(rss.saturating_sub(used))),
    ]
}

/// One MEMORY STATS value.
pub enum MemoryStat {
    Bytes(u64),
    Ratio(f64),
    /// The `db.<n>` entries, for the databases holding keys.
    Dbs(Vec<u8>),
}

/// What INFO memory and MEMORY STATS both report.
struct Figures {
    engine: firn_storage::MemoryUsage,
    /// Clients' unparsed query buffers.
    clients: u64,
    scripting: crate::scripting::shared::MemoryReport,
    access_times: u64,
    /// Every component above, each once.
    used: u64,
    rss: u64,
    rss_peak: u64,
}

/// INFO's `used_memory`: every component Firn counts, each once.
pub fn used_memory(server: &Server) -> u64 {
    figures(server).used
}

fn figures(server: &Server) -> Figures {
    let engine = server.engine.memory_usage();
    let clients = client_query_buffer_bytes(server);
    let scripting = server.scripting.shared.memory_report();
    let access_times = server.access_times.bytes();
    let used = engine.total_bytes() + clients + scripting.vm_total_bytes + access_times;
    let (rss, rss_peak) = rss_and_peak_bytes();
    Figures {
        engine,
        clients,
        scripting,
        access_times,
        used,
        rss,
        rss_peak,
    }
}

pub fn memory_section(server: &Server, out: &mut String) {
    let Figures {
        engine,
        clients,
        scripting,
        access_times,
        used,
        rss,
        rss_peak,
    } = figures(server);
    let maxmemory = server.config().maxmemory;
    let budget = MemoryBudget::of(maxmemory);
    out.push_str("# Memory\r\n");
    line(out, "used_memory", used);
    line(out, "used_memory_human", human_bytes(used));
    line(out, "used_memory_rss", rss);
    line(out, "used_memory_rss_human", human_bytes(rss));
    line(out, "used_memory_rss_peak", rss_peak);
    line(out, "used_memory_rss_peak_human", human_bytes(rss_peak));
    // As MEMORY STATS reports them: the peak is the resident set's, the
    // overhead the clients' and the scripts' share, the dataset the rest.
    let overhead = clients
        + scripting.scripts_eval_bytes
        + scripting.vm_eval_bytes
        + scripting.functions_bytes
        + scripting.vm_functions_bytes;
    let peak = rss_peak.max(used);
    line(out, "used_memory_peak", peak);
    line(out, "used_memory_peak_human", human_bytes(peak));
    line(out, "used_memory_overhead", overhead);
    line(out, "used_memory_startup", 0);
    line(out, "used_memory_dataset", used.saturating_sub(overhead));
    let ratio = if used == 0 {
        0.0
    } else {
        rss as f64 / used as f64
    };
    line(out, "mem_fragmentation_ratio", format!("{ratio:.2}"));
    line(out, "mem_fragmentation_bytes", rss as i64 - used as i64);
    line(out, "mem_not_counted_for_evict", 0);
    line(out, "mem_clients_slaves", 0);
    line(out, "mem_clients_normal", clients);
    line(out, "mem_access_times", access_times);
    line(out, "mem_hot_tier", engine.hot_tier_bytes);
    line(out, "mem_block_cache", engine.block_cache_bytes);
    line(out, "mem_block_cache_memtables", engine.memtable_bytes);
    line(
        out,
        "mem_block_cache_index_filter",
        engine.index_filter_bytes,
    );
    line(out, "mem_table_readers", engine.table_reader_bytes);
    line(out, "mem_pending_writes", engine.pending_write_bytes);
    line(out, "used_memory_lua", scripting.vm_eval_bytes);
    line(out, "used_memory_vm_eval", scripting.vm_eval_bytes);
    line(
        out,
        "used_memory_lua_human",
        human_bytes(scripting.vm_eval_bytes),
    );
    line(
        out,
        "used_memory_scripts_eval",
        scripting.scripts_eval_bytes,
    );
    line(out, "number_of_cached_scripts", scripting.cached_scripts);
    line(out, "number_of_functions", scripting.functions);
    line(out, "number_of_libraries", scripting.libraries);
    line(
        out,
        "used_memory_vm_functions",
        scripting.vm_functions_bytes,
    );
    line(out, "used_memory_vm_total", scripting.vm_total_bytes);
    line(
        out,
        "used_memory_vm_total_human",
        human_bytes(scripting.vm_total_bytes),
    );
    line(out, "used_memory_functions", scripting.functions_bytes);
    line(out, "used_memory_scripts", scripting.scripts_bytes());
    line(
        out,
        "used_memory_scripts_human",
        human_bytes(scripting.scripts_bytes()),
    );
    line(out, "maxmemory", maxmemory);
    line(out, "maxmemory_human", human_bytes(maxmemory));
    line(out, "maxmemory_policy", "noeviction");
    line(out, "maxmemory_budget", budget.total_bytes);
    line(out, "maxmemory_hot_tier", budget.hot_cache_bytes);
    line(out, "maxmemory_block_cache", budget.block_cache_bytes);
    line(out, "maxmemory_memtables", budget.memtable_bytes);
    line(out, "maxmemory_reserve", budget.reserve_bytes);
    // RocksDB's C++ allocates with glibc's malloc (Rust's allocations go
    // to jemalloc, allocator.rs), and Firn has no active defragmentation,
    // which clients and Redis's tests expect behind "jemalloc" here.
    line(out, "mem_allocator", "libc");
    // Deleting a key of any size removes its record only (the compaction
    // filter reclaims its members later): nothing waits to be freed.
    line(out, "lazyfree_pending_objects", 0);
    line(out, "lazyfreed_objects", 0);
}

pub fn storage_section(server: &Server, out: &mut String) {
    let engine = &server.engine;
    let stats = engine.stats();
    let get = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
    let (hot_hits, hot_misses, hot_entries, hot_bytes) = engine.hot_cache_stats();
    let memory = engine.memory_usage();
    let pool = server.cold_pool.state();
    out.push_str("# Storage\r\n");
    line(out, "engine", "rocksdb");
    line(out, "hot_cache_hits", hot_hits);
    line(out, "hot_cache_misses", hot_misses);
    line(out, "hot_cache_entries", hot_entries);
    line(out, "hot_cache_bytes", hot_bytes);
    line(out, "point_reads", stats.point_reads());
    let tiers = engine.read_tiers();
    line(out, "collection_cache_hits", tiers.collection_cache);
    line(out, "memory_tier_reads", tiers.block_cache);
    line(out, "disk_tier_reads", tiers.disk);
    line(out, "memory_tier_incomplete", get(&stats.incomplete_reads));
    line(out, "scanned_entries", get(&stats.scanned_entries));
    line(
        out,
        "cold_commands",
        server.stats.cold_commands.load(Ordering::Relaxed),
    );
    line(
        out,
        "streamed_replies",
        server.stats.streamed_replies.load(Ordering::Relaxed),
    );
    // Writes that waited for connections read before them (arrival.rs),
    // and waits that ran out of time.
    line(out, "arrival_waits", get(&server.arrivals.waits));
    line(
        out,
        "arrival_waits_given_up",
        get(&server.arrivals.given_up),
    );
    line(out, "io_threads", server.config().io_threads);
    line(out, "io_queue_length", pool.queued.load(Ordering::Relaxed));
    line(out, "io_queue_max", pool.max_queued.load(Ordering::Relaxed));
    line(out, "io_queue_rejected", get(&pool.rejected));
    line(out, "io_completed", get(&pool.completed));
    line(out, "commits", get(&stats.commits));
    line(out, "commit_groups", get(&stats.commit_groups));
    line(out, "pending_writes", engine.pending_writes());
    line(out, "pending_write_bytes", memory.pending_write_bytes);
    line(out, "write_errors", get(&stats.write_errors));
    line(out, "rocksdb_block_cache_bytes", memory.block_cache_bytes);
    line(
        out,
        "rocksdb_block_cache_capacity",
        memory.block_cache_capacity_bytes,
    );
    line(
        out,
        "rocksdb_block_cache_pinned_bytes",
        memory.block_cache_pinned_bytes,
    );
    line(out, "rocksdb_memtable_bytes", memory.memtable_bytes);
    line(out, "rocksdb_index_filter_bytes", memory.index_filter_bytes);
    line(
        out,
        "rocksdb_table_readers_bytes",
        memory.table_reader_bytes,
    );
    for (field, property) in [
        ("rocksdb_estimate_num_keys", "rocksdb.estimate-num-keys"),
        ("rocksdb_sst_bytes", "rocksdb.total-sst-files-size"),
        (
            "rocksdb_pending_compaction_bytes",
            "rocksdb.estimate-pending-compaction-bytes",
        ),
    ] {
        line(out, field, engine.property_sum(property));
    }
    // Database-wide: summing them over column families would count each
    // six times.
    line(
        out,
        "rocksdb_running_compactions",
        engine.property("rocksdb.num-running-compactions"),
    );
    line(
        out,
        "rocksdb_background_errors",
        engine.property("rocksdb.background-errors"),
    );
}
