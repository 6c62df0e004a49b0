//! The status page: one HTML file, built into the binary with uPlot (MIT,
//! vendored in `assets/`) inlined, that polls `/status.json` once a second
//! and charts it. The JSON carries counters and cumulative histograms; the
//! page turns them into rates and windowed percentiles, so any number of
//! open pages read the same figures.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use serde_json::{json, Value};

use super::firn::Figures;
use super::histogram::BOUNDS_US;
use crate::command_table::{MetaValue, COMMANDS};
use crate::server::Server;

const TEMPLATE: &str = include_str!("../../assets/status.html");
const UPLOT_JS: &str = include_str!("../../assets/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../assets/uPlot.min.css");

/// The page, with uPlot's script and style inlined.
pub fn page() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| {
        TEMPLATE
            .replace("/*UPLOT_CSS*/", UPLOT_CSS)
            .replace("/*UPLOT_JS*/", UPLOT_JS)
    })
}

/// Each command's (and subcommand's) group, as COMMAND DOCS gives it.
fn groups() -> &'static HashMap<&'static str, &'static str> {
    static GROUPS: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        let group_of = |docs: &MetaValue| match docs {
            MetaValue::Map(entries) => entries.iter().find_map(|(k, v)| match (k, v) {
                (&"group", MetaValue::Bulk(g) | MetaValue::Simple(g)) => Some(*g),
                _ => None,
            }),
            _ => None,
        };
        let mut map = HashMap::new();
        for spec in COMMANDS {
            let group = group_of(&spec.docs).unwrap_or("other");
            map.insert(spec.name, group);
            for sub in spec.subcommands {
                map.insert(sub.name, group_of(&sub.docs).unwrap_or(group));
            }
        }
        map
    })
}

pub fn json(server: &Server, figures: &Figures) -> Value {
    let mut ops: HashMap<&str, u64> = HashMap::new();
    for (name, [calls, ..]) in server.stats.commands.snapshot() {
        let group = groups().get(name).copied().unwrap_or("other");
        *ops.entry(group).or_default() += calls;
    }
    let latency = |i: usize| {
        let s = &figures.read_latency[i];
        json!({"cumulative": s.cumulative, "count": s.count})
    };
    let pool = server.cold_pool.state();
    let rocks = &figures.rocks;
    let stalls: u64 = rocks.stalls.values().sum();
    let keys: u64 = (0..server.engine.databases())
        .map(|db| server.engine.key_count(db as u8).0)
        .sum();
    let now = firn_storage::now_ms();
    let operation = |op: &crate::progress::OperationSnapshot| {
        json!({
            "kind": op.kind, "unit": op.unit, "done": op.done, "total": op.total,
            "eta_secs": op.eta_secs(now),
            "started_unix_ms": op.started_unix_ms,
            "finished_unix_ms": op.finished_unix_ms,
        })
    };
    let progress: Vec<Value> = server.progress.snapshot().iter().map(operation).collect();
    let last_finished = server.progress.last_finished().as_ref().map(operation);
    let cold_log: Vec<Value> = server
        .cold_log
        .entries(10)
        .iter()
        .map(|e| {
            json!({
                "id": e.id, "unix_secs": e.unix_secs, "wait_us": e.wait_us,
                "queue_wait_us": e.queue_wait_us, "queue_len": e.queue_len,
                "command": e.command, "key": String::from_utf8_lossy(&e.key),
                "addr": e.addr,
            })
        })
        .collect();
    json!({
        "time_ms": now,
        "cold_log": cold_log,
        "progress": progress,
        "last_finished": last_finished,
        "version": env!("CARGO_PKG_VERSION"),
        "uptime_secs": server.uptime_secs(),
        "clients": server.connected.load(Ordering::Relaxed),
        "keys": keys,
        "commands": server.stats.commands_processed.load(Ordering::Relaxed),
        "ops": ops,
        "reads": {
            "hot": figures.tiers.hot,
            "collection_cache": figures.tiers.collection_cache,
            "block_cache": figures.tiers.block_cache,
            "disk": figures.tiers.disk,
        },
        "latency": {"bounds_us": BOUNDS_US, "hot": latency(0), "cold": latency(1)},
        "cold_queue": {
            "length": pool.queued.load(Ordering::Relaxed),
            "limit": pool.max_queued.load(Ordering::Relaxed),
            "refused": pool.rejected.load(Ordering::Relaxed),
        },
        "memory": figures.memory.iter().map(|m| json!({
            "name": m.name, "used": m.used, "limit": m.limit,
        })).collect::<Vec<_>>(),
        "compaction": {
            "pending_bytes": rocks.pending_compaction_bytes,
            "l0_files": rocks.levels.first().map_or(0, |l| l.files),
            "stall_seconds": rocks.stall_micros as f64 / 1e6,
            "stalls": stalls,
            "write_stopped": rocks.write_stopped,
            "running": rocks.running_compactions,
        },
    })
}
