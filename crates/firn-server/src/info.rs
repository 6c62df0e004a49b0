//! INFO: Redis's sections (server, clients, memory, persistence, stats,
//! replication, cpu, modules, commandstats, errorstats, cluster, keyspace)
//! with Redis's field names, plus `storage` with Firn's tiers (hot cache,
//! RocksDB memory tier, disk), the cold-read pool and RocksDB's own figures.
//!
//! A field Redis has but Firn cannot honestly fill is left out rather than
//! faked; fields that are true by construction (no forks, no replicas, no
//! eviction) report Redis's idle values.

use std::collections::VecDeque;
use std::fmt::Write;
use std::sync::atomic::Ordering;

use crate::server::Server;

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
    "cluster",
    "storage",
    "keyspace",
];

/// Whether `INFO` alone and `INFO default` print `section`: all but
/// commandstats, as in Redis (whose `all`/`everything` also add
/// latencystats, which Firn lacks).
fn is_default(section: &str) -> bool {
    section != "commandstats"
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

pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "K", "M", "G", "T"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n}B")
    } else {
        format!("{value:.2}{}", UNITS[unit])
    }
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
            "memory" => crate::info_memory::memory_section(server, &mut out),
            "persistence" => persistence_section(server, &mut out),
            "stats" => stats_section(server, &mut out),
            "replication" => replication_section(server, &mut out),
            "cpu" => cpu_section(&mut out),
            "modules" => out.push_str("# Modules\r\n"),
            "commandstats" => commandstats_section(server, &mut out),
            "errorstats" => errorstats_section(server, &mut out),
            "cluster" => {
                out.push_str("# Cluster\r\n");
                line(&mut out, "cluster_enabled", 0);
            }
            "storage" => crate::info_memory::storage_section(server, &mut out),
            _ => keyspace_section(server, &mut out),
        }
    }
    out
}

pub(crate) fn line(out: &mut String, name: &str, value: impl std::fmt::Display) {
    let _ = write!(out, "{name}:{value}\r\n");
}

/// Counters sampled at most every 100 ms when INFO runs; rates are taken
/// over the samples of the last few seconds (Redis samples 16 times in
/// 1.6 s from its cron; Firn has no cron, so the window is what INFO saw).
#[derive(Default)]
pub struct RateSamples {
    samples: VecDeque<Sample>,
}

#[derive(Clone, Copy)]
struct Sample {
    at_ms: u64,
    commands: u64,
    input_bytes: u64,
    output_bytes: u64,
}

/// Per-second rates of commands, input bytes and output bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Rates {
    ops: u64,
    input_kbps: f64,
    output_kbps: f64,
}

const SAMPLE_EVERY_MS: u64 = 100;
const SAMPLE_WINDOW_MS: u64 = 5_000;

impl RateSamples {
    fn record(&mut self, now: Sample) -> Rates {
        if self
            .samples
            .back()
            .is_none_or(|last| now.at_ms >= last.at_ms + SAMPLE_EVERY_MS)
        {
            self.samples.push_back(now);
        }
        // Keep the oldest sample inside the window, and one before it.
        while self.samples.len() > 2
            && self
                .samples
                .get(1)
                .is_some_and(|s| now.at_ms.saturating_sub(s.at_ms) >= SAMPLE_WINDOW_MS)
        {
            self.samples.pop_front();
        }
        let Some(first) = self.samples.front().copied() else {
            return Rates {
                ops: 0,
                input_kbps: 0.0,
                output_kbps: 0.0,
            };
        };
        let elapsed_ms = now.at_ms.saturating_sub(first.at_ms);
        if elapsed_ms == 0 {
            return Rates {
                ops: 0,
                input_kbps: 0.0,
                output_kbps: 0.0,
            };
        }
        let per_sec = |delta: u64| delta as f64 * 1000.0 / elapsed_ms as f64;
        Rates {
            ops: per_sec(now.commands.saturating_sub(first.commands)).round() as u64,
            input_kbps: per_sec(now.input_bytes.saturating_sub(first.input_bytes)) / 1024.0,
            output_kbps: per_sec(now.output_bytes.saturating_sub(first.output_bytes)) / 1024.0,
        }
    }
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
    line(out, "blocked_clients", 0);
    line(out, "tracking_clients", server.tracking.clients_on());
    line(out, "clients_in_timeout_table", 0);
}

fn persistence_section(server: &Server, out: &mut String) {
    let engine = &server.engine;
    out.push_str("# Persistence\r\n");
    line(out, "loading", 0);
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
        "instantaneous_input_kbps",
        format!("{:.2}", rates.input_kbps),
    );
    line(
        out,
        "instantaneous_output_kbps",
        format!("{:.2}", rates.output_kbps),
    );
    line(out, "rejected_connections", get(&s.rejected_connections));
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
    out.push_str("# Replication\r\n");
    line(out, "role", "master");
    line(out, "connected_slaves", 0);
    line(out, "master_failover_state", "no-failover");
    line(out, "master_replid", &server.run_id);
    line(
        out,
        "master_replid2",
        "0000000000000000000000000000000000000000",
    );
    line(out, "master_repl_offset", 0);
    line(out, "second_repl_offset", -1);
    line(out, "repl_backlog_active", 0);
    line(out, "repl_backlog_size", 1_048_576);
    line(out, "repl_backlog_first_byte_offset", 0);
    line(out, "repl_backlog_histlen", 0);
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
            args(&["default", "commandstats"]),
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
        // Redis's own section that Firn does not have.
        assert!(select_sections(&args(&["latencystats"])).is_empty());
    }

    #[test]
    fn human_bytes_follows_redis() {
        assert_eq!(human_bytes(0), "0B");
        assert_eq!(human_bytes(1023), "1023B");
        assert_eq!(human_bytes(1024), "1.00K");
        assert_eq!(human_bytes(1536), "1.50K");
        assert_eq!(human_bytes(5 << 20), "5.00M");
        assert_eq!(human_bytes(3 << 30), "3.00G");
    }

    fn sample(at_ms: u64, commands: u64) -> Sample {
        Sample {
            at_ms,
            commands,
            input_bytes: commands * 1024,
            output_bytes: commands * 512,
        }
    }

    #[test]
    fn rates_are_zero_until_two_samples_exist() {
        let mut r = RateSamples::default();
        assert_eq!(r.record(sample(1_000, 50)).ops, 0);
        // Too soon for a second sample: still measured against the first.
        assert_eq!(r.record(sample(1_050, 60)).ops, 200);
    }

    #[test]
    fn rates_are_per_second_over_the_window() {
        let mut r = RateSamples::default();
        r.record(sample(0, 0));
        let rates = r.record(sample(2_000, 1_000));
        assert_eq!(rates.ops, 500);
        assert!((rates.input_kbps - 500.0).abs() < 1e-9);
        assert!((rates.output_kbps - 250.0).abs() < 1e-9);
        // Old samples leave the window: the rate follows the recent load.
        r.record(sample(8_000, 1_000));
        let rates = r.record(sample(9_000, 1_000));
        assert_eq!(rates.ops, 0);
    }
}
