//! Firn's own families (`firn_*`): where reads were answered, per-command
//! latency histograms and cold calls, the cold-read pool, the memory
//! budget's shares against their limits, the engine's commits and RocksDB's
//! own figures.

use std::sync::atomic::Ordering;

use super::histogram::{Snapshot, BOUNDS_US};
use super::text::{Kind, Page};
use crate::config::MemoryBudget;
use crate::server::Server;
use Kind::{Counter, Gauge, Histogram};

/// What one render reads of the engine and the server, shared by the
/// metrics page and the status page's JSON.
pub struct Figures {
    pub tiers: firn_storage::ReadTiers,
    pub rocks: firn_storage::RocksFigures,
    pub memory: Vec<MemoryShare>,
    pub read_latency: [Snapshot; 2],
}

/// One share of the memory budget: what it holds and its limit.
pub struct MemoryShare {
    pub name: &'static str,
    pub used: u64,
    pub limit: u64,
}

pub fn figures(server: &Server) -> Figures {
    let engine = &server.engine;
    let usage = engine.memory_usage();
    let budget = MemoryBudget::of(server.config().maxmemory);
    let (_, _, _, hot_bytes) = engine.hot_cache_stats();
    let memory = vec![
        MemoryShare {
            name: "hot_tier",
            used: hot_bytes,
            limit: budget.hot_cache_bytes,
        },
        MemoryShare {
            name: "block_cache",
            used: usage.block_cache_bytes,
            limit: budget.block_cache_bytes,
        },
        MemoryShare {
            name: "memtables",
            used: usage.memtable_bytes,
            limit: budget.memtable_bytes,
        },
        MemoryShare {
            // What the reserve covers that Firn counts: the pending-write
            // overlay, SST readers outside the cache, clients' buffers.
            name: "reserve",
            used: usage.pending_write_bytes
                + usage.table_reader_bytes
                + crate::info::memory::client_query_buffer_bytes(server),
            limit: budget.reserve_bytes,
        },
        MemoryShare {
            name: "total",
            used: crate::info::memory::used_memory(server),
            limit: budget.total_bytes,
        },
    ];
    Figures {
        tiers: engine.read_tiers(),
        rocks: engine.rocks_figures(),
        memory,
        read_latency: [
            server.read_latency[0].snapshot(),
            server.read_latency[1].snapshot(),
        ],
    }
}

/// A histogram family's samples from cumulative counts at [`BOUNDS_US`].
fn histogram(
    page: &mut Page,
    name: &str,
    help: &str,
    labels: &[(&str, &str)],
    cumulative: &[u64],
    count: u64,
    sum_seconds: f64,
) {
    let bucket = |page: &mut Page, le: &str, at_most: u64| {
        let mut with_le: Vec<(&str, &str)> = labels.to_vec();
        with_le.push(("le", le));
        page.add_part(name, Histogram, help, "_bucket", &with_le, at_most as f64);
    };
    for (bound, at_most) in BOUNDS_US.iter().zip(cumulative) {
        bucket(page, &format!("{}", *bound as f64 / 1e6), *at_most);
    }
    bucket(page, "+Inf", count);
    page.add_part(name, Histogram, help, "_sum", labels, sum_seconds);
    page.add_part(name, Histogram, help, "_count", labels, count as f64);
}

pub fn render(server: &Server, figures: &Figures, page: &mut Page) {
    let tiers = &figures.tiers;
    for (tier, reads) in [
        ("hot", tiers.hot),
        ("collection_cache", tiers.collection_cache),
        ("block_cache", tiers.block_cache),
        ("disk", tiers.disk),
    ] {
        page.add(
            "firn_reads_total",
            Counter,
            "Reads answered by each tier: Firn's hot tier, the decoded-collection cache, RocksDB's memory (block cache and memtables), the SST files on disk",
            &[("tier", tier)],
            reads as f64,
        );
    }
    for (tier, snapshot) in ["hot", "cold"].iter().zip(&figures.read_latency) {
        histogram(
            page,
            "firn_read_latency_seconds",
            "Read-only commands' latency, answered from memory (hot) or after waiting for the disk (cold)",
            &[("tier", tier)],
            &snapshot.cumulative,
            snapshot.count,
            snapshot.sum_us as f64 / 1e6,
        );
    }
    commands(server, page);
    cold_pool(server, page);
    for share in &figures.memory {
        let labels = [("share", share.name)];
        page.add(
            "firn_memory_used_bytes",
            Gauge,
            "What each share of the memory budget holds (total: used_memory)",
            &labels,
            share.used as f64,
        );
        page.add(
            "firn_memory_limit_bytes",
            Gauge,
            "Each share's limit under the memory budget (maxmemory)",
            &labels,
            share.limit as f64,
        );
    }
    engine(server, page);
    rocks(&figures.rocks, page);
    replication(server, page);
    progress(server, page);
}

/// Long operations running (full sync, import, DEBUG RELOAD, the WAL
/// replay), and how long the last one took.
fn progress(server: &Server, page: &mut Page) {
    let now = firn_storage::now_ms();
    for op in server.progress.snapshot() {
        let labels = [("kind", op.kind), ("unit", op.unit)];
        page.add(
            "firn_progress_done",
            Gauge,
            "Units a running long operation has done",
            &labels,
            op.done as f64,
        );
        page.add(
            "firn_progress_total",
            Gauge,
            "Units a running long operation has in all (0: not known yet)",
            &labels,
            op.total as f64,
        );
        if let Some(eta) = op.eta_secs(now) {
            page.add(
                "firn_progress_eta_seconds",
                Gauge,
                "Seconds a running long operation has left at its pace so far",
                &labels,
                eta as f64,
            );
        }
    }
    if let Some(last) = server.progress.last_finished() {
        let took = last
            .finished_unix_ms
            .unwrap_or(now)
            .saturating_sub(last.started_unix_ms);
        page.add(
            "firn_progress_last_duration_seconds",
            Gauge,
            "How long the long operation that ended last took",
            &[("kind", last.kind)],
            took as f64 / 1000.0,
        );
    }
}

fn commands(server: &Server, page: &mut Page) {
    let bounds_ns: Vec<u64> = BOUNDS_US.iter().map(|us| us * 1000).collect();
    for (name, [_, usec, _, _]) in server.stats.commands.snapshot() {
        if let Some((count, cumulative)) = server.latency.cumulative(name, &bounds_ns) {
            histogram(
                page,
                "firn_command_latency_seconds",
                "Each command's latency (latency-tracking's histograms)",
                &[("cmd", name)],
                &cumulative,
                count,
                usec as f64 / 1e6,
            );
        }
    }
    for (name, cold) in server.stats.commands.cold_snapshot() {
        page.add(
            "firn_command_cold_calls_total",
            Counter,
            "Each command's executions that waited for the disk (ran on the cold-read pool)",
            &[("cmd", name)],
            cold as f64,
        );
    }
}

fn cold_pool(server: &Server, page: &mut Page) {
    let pool = server.cold_pool.state();
    let get = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed) as f64;
    page.add(
        "firn_cold_queue_length",
        Gauge,
        "Commands waiting for a cold-read pool thread",
        &[],
        pool.queued.load(Ordering::Relaxed) as f64,
    );
    page.add(
        "firn_cold_queue_limit",
        Gauge,
        "io-queue-max: beyond it a cold read is refused",
        &[],
        pool.max_queued.load(Ordering::Relaxed) as f64,
    );
    page.add(
        "firn_cold_threads",
        Gauge,
        "io-threads: the cold-read pool's threads",
        &[],
        server.config().io_threads as f64,
    );
    page.add(
        "firn_cold_reads_refused_total",
        Counter,
        "Cold reads refused because the queue was full",
        &[],
        get(&pool.rejected),
    );
    page.add(
        "firn_cold_reads_completed_total",
        Counter,
        "Jobs the cold-read pool ran",
        &[],
        get(&pool.completed),
    );
    page.add(
        "firn_cold_commands_total",
        Counter,
        "Commands that waited for the disk",
        &[],
        get(&server.stats.cold_commands),
    );
    let waits = pool.wait_histogram();
    let cumulative: Vec<u64> = BOUNDS_US
        .iter()
        .map(|&b| waits.count_between(0, b))
        .collect();
    let sum_us = waits.mean() * waits.len() as f64;
    histogram(
        page,
        "firn_cold_queue_wait_seconds",
        "How long cold reads waited in the queue for a pool thread",
        &[],
        &cumulative,
        waits.len(),
        sum_us / 1e6,
    );
    let log = &server.cold_log;
    page.add(
        "firn_cold_slowlog_length",
        Gauge,
        "Entries in the slow-cold-read log (SLOWLOG COLDGET)",
        &[],
        log.len() as f64,
    );
    page.add(
        "firn_cold_slowlog_last_id",
        Gauge,
        "Id of the newest slow-cold-read log entry (entries ever logged minus 1)",
        &[],
        log.last_id().unwrap_or(0) as f64,
    );
    if let Some(last) = log.entries(1).first() {
        let labels = [
            ("cmd", last.command.as_str()),
            ("key", &String::from_utf8_lossy(&last.key)),
        ];
        page.add(
            "firn_cold_slowlog_last_wait_seconds",
            Gauge,
            "The newest slow cold read: its disk wait, with its command and key",
            &labels,
            last.wait_us as f64 / 1e6,
        );
        page.add(
            "firn_cold_slowlog_last_queue_length",
            Gauge,
            "The queue length the newest slow cold read found",
            &labels,
            last.queue_len as f64,
        );
    }
}

fn engine(server: &Server, page: &mut Page) {
    let engine = &server.engine;
    let stats = engine.stats();
    let get = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed) as f64;
    let (_, _, entries, bytes) = engine.hot_cache_stats();
    page.add(
        "firn_hot_tier_entries",
        Gauge,
        "Meta records in the hot tier",
        &[],
        entries as f64,
    );
    page.add(
        "firn_hot_tier_bytes",
        Gauge,
        "Bytes the hot tier and the decoded-collection cache hold",
        &[],
        bytes as f64,
    );
    page.add(
        "firn_commits_total",
        Counter,
        "Write batches committed",
        &[],
        get(&stats.commits),
    );
    page.add(
        "firn_commit_groups_total",
        Counter,
        "Group commits (one WAL write each)",
        &[],
        get(&stats.commit_groups),
    );
    page.add(
        "firn_pending_writes",
        Gauge,
        "Writes acknowledged to the overlay, not yet in RocksDB",
        &[],
        engine.pending_writes() as f64,
    );
    page.add(
        "firn_write_errors_total",
        Counter,
        "WAL write failures",
        &[],
        get(&stats.write_errors),
    );
}

fn rocks(r: &firn_storage::RocksFigures, page: &mut Page) {
    let counters = [
        (
            "firn_rocksdb_block_cache_hits_total",
            "Block cache lookups that hit",
            r.block_cache_hits,
        ),
        (
            "firn_rocksdb_block_cache_misses_total",
            "Block cache lookups that missed",
            r.block_cache_misses,
        ),
        (
            "firn_rocksdb_bytes_written_total",
            "Bytes the engine wrote to RocksDB",
            r.bytes_written,
        ),
        (
            "firn_rocksdb_wal_bytes_total",
            "Bytes written to the write-ahead log",
            r.wal_bytes,
        ),
        (
            "firn_rocksdb_flush_write_bytes_total",
            "Bytes flushes wrote to SST files",
            r.flush_write_bytes,
        ),
        (
            "firn_rocksdb_compaction_read_bytes_total",
            "Bytes compactions read",
            r.compact_read_bytes,
        ),
        (
            "firn_rocksdb_compaction_write_bytes_total",
            "Bytes compactions wrote",
            r.compact_write_bytes,
        ),
    ];
    for (name, help, value) in counters {
        page.add(name, Counter, help, &[], value as f64);
    }
    page.add(
        "firn_rocksdb_stall_seconds_total",
        Counter,
        "Time writes spent stalled",
        &[],
        r.stall_micros as f64 / 1e6,
    );
    for (cause, count) in &r.stalls {
        page.add(
            "firn_rocksdb_write_stalls_total",
            Counter,
            "Write stalls (delays and stops) by cause, RocksDB's names",
            &[("cause", cause)],
            *count as f64,
        );
    }
    let gauges = [
        (
            "firn_rocksdb_block_cache_hit_ratio",
            "Block cache hits per lookup since start",
            r.block_cache_hit_ratio(),
        ),
        (
            "firn_rocksdb_write_amplification",
            "Bytes flushed and compacted per byte written, since start",
            r.write_amplification(),
        ),
        (
            "firn_rocksdb_write_stopped",
            "1 while RocksDB stops writes",
            f64::from(u8::from(r.write_stopped)),
        ),
        (
            "firn_rocksdb_delayed_write_rate_bytes",
            "The rate writes are slowed to while delayed (0: not delayed)",
            r.delayed_write_rate as f64,
        ),
        (
            "firn_rocksdb_pending_compaction_bytes",
            "Estimated bytes compaction must rewrite to settle the levels (compaction debt)",
            r.pending_compaction_bytes as f64,
        ),
        (
            "firn_rocksdb_running_compactions",
            "Compactions running",
            r.running_compactions as f64,
        ),
        (
            "firn_rocksdb_running_flushes",
            "Flushes running",
            r.running_flushes as f64,
        ),
        (
            "firn_rocksdb_l0_files",
            "SST files in level 0 (many slow reads and stall writes)",
            r.levels.first().map_or(0, |l| l.files) as f64,
        ),
    ];
    for (name, help, value) in gauges {
        page.add(name, Gauge, help, &[], value);
    }
    for (level, figures) in r.levels.iter().enumerate() {
        let level = level.to_string();
        let labels = [("level", level.as_str())];
        page.add(
            "firn_rocksdb_level_files",
            Gauge,
            "SST files per level",
            &labels,
            figures.files as f64,
        );
        page.add(
            "firn_rocksdb_level_bytes",
            Gauge,
            "SST bytes per level",
            &labels,
            figures.bytes as f64,
        );
        page.add(
            "firn_rocksdb_level_compaction_read_bytes_total",
            Counter,
            "Bytes compactions into the level read (RocksDB's 0.1 GB resolution)",
            &labels,
            figures.compaction_read_bytes,
        );
        page.add(
            "firn_rocksdb_level_compaction_write_bytes_total",
            Counter,
            "Bytes compactions and flushes into the level wrote (RocksDB's 0.1 GB resolution)",
            &labels,
            figures.compaction_write_bytes,
        );
    }
}

fn replication(server: &Server, page: &mut Page) {
    let repl = &server.replication;
    let (_, end) = repl.backlog.range();
    for r in repl.replicas.lock().iter() {
        let addr = format!("{}:{}", r.ip, r.port.load(Ordering::Relaxed));
        let acked = r.ack.load(Ordering::Relaxed);
        page.add(
            "firn_replica_lag_bytes",
            Gauge,
            "Bytes of the replication stream a replica has not acknowledged",
            &[("replica", &addr)],
            end.saturating_sub(acked) as f64,
        );
    }
}
