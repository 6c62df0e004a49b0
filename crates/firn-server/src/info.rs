//! INFO: Redis's sections (server, clients, memory, persistence, stats,
//! replication, cpu, keyspace) with Redis's field names, plus `storage`
//! with Firn's tiers (hot cache, RocksDB memory tier, disk), the cold-read
//! pool and RocksDB's own figures.

use std::fmt::Write;
use std::sync::atomic::Ordering;

use crate::server::Server;

const DEFAULT_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "storage",
    "keyspace",
];

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
pub fn render(server: &Server, sections: &[String]) -> String {
    let wanted: Vec<&str> = if sections.is_empty()
        || sections
            .iter()
            .any(|s| s == "default" || s == "all" || s == "everything")
    {
        DEFAULT_SECTIONS.to_vec()
    } else {
        DEFAULT_SECTIONS
            .iter()
            .copied()
            .filter(|s| sections.iter().any(|w| w == s))
            .collect()
    };
    let mut out = String::new();
    for section in wanted {
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
            "storage" => crate::info_memory::storage_section(server, &mut out),
            _ => keyspace_section(server, &mut out),
        }
    }
    out
}

pub(crate) fn line(out: &mut String, name: &str, value: impl std::fmt::Display) {
    let _ = write!(out, "{name}:{value}\r\n");
}

fn server_section(server: &Server, out: &mut String) {
    let config = server.config();
    out.push_str("# Server\r\n");
    line(out, "redis_version", "7.0.15");
    line(out, "firn_version", env!("CARGO_PKG_VERSION"));
    line(out, "redis_mode", "standalone");
    line(out, "os", std::env::consts::OS);
    line(out, "arch_bits", usize::BITS);
    line(out, "multiplexing_api", "epoll");
    line(out, "process_id", std::process::id());
    line(out, "run_id", &server.run_id);
    line(out, "tcp_port", config.port);
    line(out, "server_time_usec", firn_storage::now_ms() * 1000);
    line(out, "uptime_in_seconds", server.uptime_secs());
    line(out, "uptime_in_days", server.uptime_secs() / 86_400);
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
    out.push_str("# Clients\r\n");
    line(
        out,
        "connected_clients",
        server.connected.load(Ordering::Relaxed),
    );
    line(out, "maxclients", server.config().maxclients);
    line(out, "blocked_clients", 0);
    line(out, "pubsub_clients", 0);
}

fn persistence_section(server: &Server, out: &mut String) {
    let engine = &server.engine;
    out.push_str("# Persistence\r\n");
    line(out, "loading", 0);
    line(out, "async_loading", 0);
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
    out.push_str("# Stats\r\n");
    line(
        out,
        "total_connections_received",
        get(&s.connections_received),
    );
    line(out, "total_commands_processed", get(&s.commands_processed));
    line(out, "total_net_input_bytes", get(&s.net_input_bytes));
    line(out, "total_net_output_bytes", get(&s.net_output_bytes));
    line(out, "rejected_connections", get(&s.rejected_connections));
    line(
        out,
        "expired_keys",
        server.engine.stats().expired_keys.load(Ordering::Relaxed),
    );
    line(out, "evicted_keys", 0);
    line(out, "keyspace_hits", get(&s.keyspace_hits));
    line(out, "keyspace_misses", get(&s.keyspace_misses));
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
}

fn cpu_section(out: &mut String) {
    let (user, sys) = cpu_times();
    out.push_str("# CPU\r\n");
    line(out, "used_cpu_sys", format!("{sys:.6}"));
    line(out, "used_cpu_user", format!("{user:.6}"));
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
