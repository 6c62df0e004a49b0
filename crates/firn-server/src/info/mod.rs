//! INFO: Redis's sections (server, clients, memory, persistence, stats,
//! replication, cpu, modules, commandstats, errorstats, cluster, keyspace)
//! with Redis's field names, plus `storage` with Firn's tiers (hot cache,
//! RocksDB memory tier, disk), the cold-read pool and RocksDB's own figures.
//!
//! A field Redis has but Firn cannot honestly fill is left out rather than
//! faked; fields that are true by construction (no forks, no replicas, no
//! eviction) report Redis's idle values.

use std::fmt::Write;
use std::sync::atomic::Ordering;

use crate::server::Server;
use format::line;
use rates::Sample;

pub mod format;
pub mod memory;
pub mod rates;

/// Every section, in output order.
const SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "commandstats",
    "errorstats",
    "latencystats",
    "cluster",
    "storage",
    "keyspace",
];

/// Whether `INFO` alone and `INFO default` print `section`: all but
/// commandstats and latencystats, as in Redis.
fn is_default(section: &str) -> bool {
    section != "commandstats" && section != "latencystats"
}

/// The sections to print for INFO's (lowercase) arguments, in output
/// order, each once. Unknown names select nothing.
pub fn select_sections(args: &[String]) -> Vec<&'static str> {
    let wanted = |section: &str| {
        args.is_empty() && is_default(section)
            || args.iter().any(|w| {
                w == section
                    || w == "all"
                    || w == "everything"
                    || (w == "default" && is_default(section))
            })
    };
    SECTIONS.iter().copied().filter(|s| wanted(s)).collect()
}

fn cpu_times() -> (f64, f64) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes the struct we own; on failure we read zeros.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

/// The text of INFO for the given (lowercase) section names.
pub fn render(server: &Server, args: &[String]) -> String {
    let mut out = String::new();
    for section in select_sections(args) {
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        match section {
            "server" => server_section(server, &mut out),
            "clients" => clients_section(server, &mut out),
            "memory" => memory::memory_section(server, &mut out),
            "persistence" => persistence_section(server, &mut out),
            "stats" => stats_section(server, &mut out),
            "replication" => replication_section(server, &mut out),
            "cpu" => cpu_section(&mut out),
            "modules" => out.push_str("# Modules\r\n"),
            "commandstats" => commandstats_section(server, &mut out),
            "errorstats" => errorstats_section(server, &mut out),
            "latencystats" => latencystats_section(server, &mut out),
            "cluster" => {
                out.push_str("# Cluster\r\n");
                line(&mut out, "cluster_enabled", 0);
            }
            "storage" => memory::storage_section(server, &mut out),
            _ => keyspace_section(server, &mut out),
        }
    }
    out
}

fn server_section(server: &Server, out: &mut String) {
    let config = server.config();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    out.push_str("# Server\r\n");
    line(out, "redis_version", "7.0.15");
    line(out, "firn_version", env!("CARGO_PKG_VERSION"));
    line(out, "redis_git_sha1", "00000000");
    line(out, "redis_git_dirty", 0);
    line(out, "redis_mode", "standalone");
    line(out, "os", std::env::consts::OS);
    line(out, "arch_bits", usize::BITS);
    line(out, "multiplexing_api", "epoll");
    line(out, "process_id", std::process::id());
    line(out, "process_supervised", "no");
    line(out, "run_id", &server.run_id);
    line(out, "tcp_port", config.port);
    line(out, "server_time_usec", now.as_micros());
    line(out, "uptime_in_seconds", server.uptime_secs());
    line(out, "uptime_in_days", server.uptime_secs() / 86_400);
    line(out, "hz", config.hz);
    line(out, "configured_hz", config.hz);
    // Redis's LRU clock: seconds, 24 bits.
    line(out, "lru_clock", now.as_secs() & ((1 << 24) - 1));
    line(
        out,
        "executable",
        std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    );
    line(
        out,
        "config_file",
        config
            .config_file
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    );
    line(out, "io_threads_active", 0);
}

fn clients_section(server: &Server, out: &mut String) {
    let max_input_buffer = server
        .clients
        .lock()
        .values()
        .map(|c| c.query_buffer.load(Ordering::Relaxed))
        .max()
        .unwrap_or(0);
    out.push_str("# Clients\r\n");
    line(
        out,
        "connected_clients",
        server.connected.load(Ordering::Relaxed),
    );
    line(out, "cluster_connections", 0);
    line(out, "maxclients", server.config().maxclients);
    line(out, "client_recent_max_input_buffer", max_input_buffer);
    line(out, "client_recent_max_output_buffer", 0);
    line(
        out,
        "blocked_clients",
        server.blocking.blocked_clients() + server.pause.held(),
    );
    line(out, "tracking_clients", server.tracking.clients_on());
    line(
        out,
        "clients_in_timeout_table",
        server.blocking.clients_with_timeout(),
    );
}

fn persistence_section(server: &Server, out: &mut String) {
    let engine = &server.engine;
    let now_ms = firn_storage::now_ms();
    let running = server.progress.snapshot();
    // A dataset replaced from a primary is Redis's "loading"; the oldest
    // one running, if two overlap.
    let loading = running
        .iter()
        .find(|op| op.kind == "full-sync" || op.kind == "import");
    out.push_str("# Persistence\r\n");
    line(out, "loading", u8::from(loading.is_some()));
    line(out, "async_loading", 0);
    line(
        out,
        "rdb_changes_since_last_save",
        server.stats.dirty.load(Ordering::Relaxed),
    );
    line(
        out,
        "rdb_bgsave_in_progress",
        server.bgsave_in_progress.load(Ordering::Relaxed) as u8,
    );
    line(
        out,
        "rdb_last_save_time",
        server.last_save_unix.load(Ordering::Relaxed),
    );
    line(
        out,
        "rdb_last_bgsave_status",
        if server.last_bgsave_ok.load(Ordering::Relaxed) {
            "ok"
        } else {
            "err"
        },
    );
    line(out, "aof_enabled", 1);
    line(
        out,
        "aof_last_write_status",
        if engine.write_error().is_some() {
            "err"
        } else {
            "ok"
        },
    );
    line(
        out,
        "firn_write_error",
        engine
            .write_error()
            .unwrap_or_default()
            .replace(['\r', '\n'], " "),
    );
    if let Some(op) = loading {
        loading_lines(op, now_ms, out);
    }
    for op in &running {
        let eta = op.eta_secs(now_ms).map_or(-1, |s| s as i64);
        line(
            out,
            &format!("firn_progress_{}", op.kind.replace('-', "_")),
            format!(
                "unit={},done={},total={},perc={:.2},eta={eta}",
                op.unit,
                op.done,
                op.total,
                op.fraction().unwrap_or(0.0) * 100.0,
            ),
        );
    }
    if let Some(op) = server.progress.last_finished() {
        let finished_ms = op.finished_unix_ms.unwrap_or(op.started_unix_ms);
        line(
            out,
            "firn_progress_last_finished",
            format!(
                "kind={},unit={},done={},total={},duration_ms={}",
                op.kind,
                op.unit,
                op.done,
                op.total,
                finished_ms - op.started_unix_ms
            ),
        );
    }
}

/// Redis's `loading_*` fields, with its arithmetic (rdb.c startLoading,
/// server.c genRedisInfoString): whole seconds elapsed times the bytes
/// left over the bytes loaded plus one, or 1 in the first second. Firn
/// learns no `used-mem` from a payload: `loading_rdb_used_mem` is 0.
fn loading_lines(op: &crate::progress::OperationSnapshot, now_ms: u64, out: &mut String) {
    let start_secs = op.started_unix_ms / 1000;
    let elapsed = (now_ms / 1000).saturating_sub(start_secs);
    let (perc, remaining) = if op.total > 0 {
        (
            op.done as f64 / op.total as f64 * 100.0,
            op.total.saturating_sub(op.done),
        )
    } else {
        (0.0, 1)
    };
    let eta = if elapsed == 0 {
        1
    } else {
        elapsed.saturating_mul(remaining) / (op.done + 1)
    };
    line(out, "loading_start_time", start_secs);
    line(out, "loading_total_bytes", op.total);
    line(out, "loading_rdb_used_mem", 0);
    line(out, "loading_loaded_bytes", op.done);
    line(out, "loading_loaded_perc", format!("{perc:.2}"));
    line(out, "loading_eta_seconds", eta);
}

fn stats_section(server: &Server, out: &mut String) {
    let s = &server.stats;
    let get = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
    let rates = s.rate_samples.lock().record(Sample {
        at_ms: firn_storage::now_ms(),
        commands: get(&s.commands_processed),
        input_bytes: get(&s.net_input_bytes),
        output_bytes: get(&s.net_output_bytes),
    });
    out.push_str("# Stats\r\n");
    line(
        out,
        "total_connections_received",
        get(&s.connections_received),
    );
    line(out, "total_commands_processed", get(&s.commands_processed));
    line(out, "instantaneous_ops_per_sec", rates.ops);
    line(out, "total_net_input_bytes", get(&s.net_input_bytes));
    line(out, "total_net_output_bytes", get(&s.net_output_bytes));
    line(
        out,
        "total_net_repl_input_bytes",
        get(&s.net_repl_input_bytes),
    );
    line(
        out,
        "total_net_repl_output_bytes",
        get(&s.net_repl_output_bytes),
    );
    line(
        out,
        "instantaneous_input_kbps",
        format!("{:.2}", rates.input_kbps),
    );
    line(
        out,
        "instantaneous_output_kbps",
        format!("{:.2}", rates.output_kbps),
    );
    line(out, "rejected_connections", get(&s.rejected_connections));
    let repl = &server.replication;
    line(out, "sync_full", get(&repl.sync_full));
    line(out, "sync_partial_ok", get(&repl.sync_partial_ok));
    line(out, "sync_partial_err", get(&repl.sync_partial_err));
    line(
        out,
        "expired_keys",
        server.engine.stats().expired_keys.load(Ordering::Relaxed),
    );
    line(out, "evicted_keys", 0);
    line(out, "evicted_clients", 0);
    line(out, "keyspace_hits", get(&s.keyspace_hits));
    line(out, "keyspace_misses", get(&s.keyspace_misses));
    line(out, "pubsub_channels", server.pubsub.channel_count());
    line(out, "pubsub_patterns", server.pubsub.pattern_count());
    line(
        out,
        "pubsubshard_channels",
        server.pubsub.shard_channel_count(),
    );
    line(out, "latest_fork_usec", 0);
    line(out, "total_forks", 0);
    // Firn has no MIGRATE, hence no cached connections to other servers.
    line(out, "migrate_cached_sockets", 0);
    line(out, "tracking_total_keys", server.tracking.total_keys());
    line(out, "tracking_total_items", server.tracking.total_items());
    line(
        out,
        "tracking_total_prefixes",
        server.tracking.total_prefixes(),
    );
    line(out, "unexpected_error_replies", 0);
    line(out, "total_error_replies", get(&s.total_error_replies));
}

fn replication_section(server: &Server, out: &mut String) {
    use crate::replication::state::{LinkState, STATE_ONLINE, STATE_SEND_BULK};
    let repl = &server.replication;
    let now = crate::replication::state::now_ms();
    out.push_str("# Replication\r\n");
    let following = repl.following.lock().as_ref().map(|f| {
        (
            f.host.clone(),
            f.port,
            f.state,
            f.last_io_ms,
            f.down_since_ms,
            f.sync_bytes,
        )
    });
    let (start, end) = repl.backlog.range();
    if let Some((host, port, state, last_io, down_since, sync_bytes)) = following {
        line(out, "role", "slave");
        line(out, "master_host", host);
        line(out, "master_port", port);
        let up = state == LinkState::Connected;
        line(out, "master_link_status", if up { "up" } else { "down" });
        let io_ago = if last_io == 0 {
            -1
        } else {
            (now.saturating_sub(last_io) / 1000) as i64
        };
        line(out, "master_last_io_seconds_ago", io_ago);
        let syncing = state == LinkState::Transfer;
        line(out, "master_sync_in_progress", u8::from(syncing));
        line(out, "slave_read_repl_offset", end);
        line(out, "slave_repl_offset", end);
        if syncing {
            // As Redis: -1 total and left while the size is unknown.
            let (total, read) = sync_bytes;
            let known = total > 0;
            line(
                out,
                "master_sync_total_bytes",
                if known { total as i64 } else { -1 },
            );
            line(out, "master_sync_read_bytes", read);
            line(
                out,
                "master_sync_left_bytes",
                if known {
                    total.saturating_sub(read) as i64
                } else {
                    -1
                },
            );
            let perc = if known {
                read as f64 * 100.0 / total as f64
            } else {
                0.0
            };
            line(out, "master_sync_perc", format!("{perc:.2}"));
            line(out, "master_sync_last_io_seconds_ago", io_ago.max(0));
        }
        if !up {
            let down = if down_since == 0 {
                -1
            } else {
                (now.saturating_sub(down_since) / 1000) as i64
            };
            line(out, "master_link_down_since_seconds", down);
        }
        let config = server.config();
        line(out, "slave_priority", config.setting("replica-priority"));
        line(
            out,
            "slave_read_only",
            u8::from(config.setting_yes("replica-read-only")),
        );
        line(
            out,
            "replica_announced",
            u8::from(config.setting_yes("replica-announced")),
        );
    } else {
        line(out, "role", "master");
    }
    let replicas = repl.replicas.lock().clone();
    line(out, "connected_slaves", replicas.len());
    for (i, r) in replicas.iter().enumerate() {
        let state = match r.state.load(Ordering::Acquire) {
            STATE_ONLINE => "online",
            STATE_SEND_BULK => "send_bulk",
            _ => "wait_bgsave",
        };
        let lag = now.saturating_sub(r.ack_ms.load(Ordering::Acquire)) / 1000;
        line(
            out,
            &format!("slave{i}"),
            format!(
                "ip={},port={},state={state},offset={},lag={lag}",
                r.ip,
                r.port.load(Ordering::Relaxed),
                r.ack.load(Ordering::Relaxed)
            ),
        );
    }
    let ids = repl.ids.lock().clone();
    line(out, "master_failover_state", *repl.failover_state.lock());
    line(out, "master_replid", ids.replid);
    line(out, "master_replid2", ids.replid2);
    line(out, "master_repl_offset", end);
    line(out, "second_repl_offset", ids.second_offset);
    let active = repl.active.load(Ordering::Acquire);
    line(out, "repl_backlog_active", u8::from(active));
    line(out, "repl_backlog_size", repl.backlog.limit());
    line(
        out,
        "repl_backlog_first_byte_offset",
        if active { start + 1 } else { 0 },
    );
    line(out, "repl_backlog_histlen", end - start);
}

fn cpu_section(out: &mut String) {
    let (user, sys) = cpu_times();
    out.push_str("# CPU\r\n");
    line(out, "used_cpu_sys", format!("{sys:.6}"));
    line(out, "used_cpu_user", format!("{user:.6}"));
}

fn commandstats_section(server: &Server, out: &mut String) {
    out.push_str("# Commandstats\r\n");
    for (name, [calls, usec, rejected, failed]) in server.stats.commands.snapshot() {
        let per_call = if calls == 0 {
            0.0
        } else {
            usec as f64 / calls as f64
        };
        let _ = write!(
            out,
            "cmdstat_{name}:calls={calls},usec={usec},usec_per_call={per_call:.2},rejected_calls={rejected},failed_calls={failed}\r\n"
        );
    }
}

/// Each tracked command's latency at the configured percentiles (µs), as
/// `latency_percentiles_usec_<name>:p50=…,p99=…` (Redis's format).
fn latencystats_section(server: &Server, out: &mut String) {
    out.push_str("# Latencystats\r\n");
    let (tracking, shown) = {
        let config = server.config();
        (config.latency_tracking, config.latency_percentiles.clone())
    };
    if !tracking {
        return;
    }
    let labels: Vec<&str> = shown.split_ascii_whitespace().collect();
    let percentiles: Vec<f64> = labels.iter().filter_map(|p| p.parse().ok()).collect();
    for name in server.latency.tracked() {
        let Some(values) = server.latency.percentiles(name, &percentiles) else {
            continue;
        };
        let fields: Vec<String> = labels
            .iter()
            .zip(values)
            .map(|(label, value)| format!("p{label}={value:.3}"))
            .collect();
        let _ = write!(
            out,
            "latency_percentiles_usec_{name}:{}\r\n",
            fields.join(",")
        );
    }
}

fn errorstats_section(server: &Server, out: &mut String) {
    out.push_str("# Errorstats\r\n");
    for (prefix, count) in server.stats.error_counts.lock().iter() {
        let _ = write!(out, "errorstat_{prefix}:count={count}\r\n");
    }
}

fn keyspace_section(server: &Server, out: &mut String) {
    out.push_str("# Keyspace\r\n");
    for db in 0..server.engine.databases() {
        let (keys, expires) = server.engine.key_count(db as u8);
        if keys > 0 {
            let _ = write!(out, "db{db}:keys={keys},expires={expires},avg_ttl=0\r\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn default_and_all_select_their_sections() {
        for given in [args(&[]), args(&["default"])] {
            let expected = [
                "server",
                "clients",
                "memory",
                "persistence",
                "stats",
                "replication",
                "cpu",
                "modules",
                "errorstats",
                "cluster",
                "storage",
                "keyspace",
            ];
            assert_eq!(select_sections(&given), expected, "{given:?}");
        }
        for given in [
            args(&["all"]),
            args(&["everything"]),
            args(&["keyspace", "all"]),
            args(&["default", "commandstats", "latencystats"]),
        ] {
            assert_eq!(select_sections(&given), SECTIONS, "{given:?}");
        }
    }

    #[test]
    fn named_sections_come_out_in_fixed_order_once() {
        assert_eq!(
            select_sections(&args(&["keyspace", "server", "keyspace"])),
            ["server", "keyspace"]
        );
        assert_eq!(
            select_sections(&args(&["storage", "cluster", "errorstats", "commandstats"])),
            ["commandstats", "errorstats", "cluster", "storage"]
        );
    }

    #[test]
    fn unknown_sections_select_nothing() {
        assert!(select_sections(&args(&["nosuch"])).is_empty());
        assert_eq!(select_sections(&args(&["latencystats"])), ["latencystats"]);
    }
}
