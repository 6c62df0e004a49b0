//! The families `redis_exporter` (1.45, the version Debian ships) derives
//! from INFO, SLOWLOG and CONFIG, under its names, types and labels, so
//! that dashboards and alerts written for it work against Firn unchanged.
//! They are derived the way it derives them: from the text of `INFO
//! everything`, field by field, through its table of INFO fields; fields
//! Firn's INFO leaves out give no family, as they give none to the
//! exporter. `tests/metrics.rs` runs the real exporter against Firn and
//! checks that every family it produces is here.

use super::text::{Kind, Page};
use crate::server::Server;
use Kind::{Counter, Gauge};

/// INFO field → (metric name after `redis_`, type): redis_exporter's table,
/// for the fields of Redis 7.0's INFO.
const FIELDS: &[(&str, &str, Kind)] = &[
    ("process_id", "process_id", Gauge),
    ("uptime_in_seconds", "uptime_in_seconds", Gauge),
    ("io_threads_active", "io_threads_active", Gauge),
    ("connected_clients", "connected_clients", Gauge),
    ("cluster_connections", "cluster_connections", Gauge),
    (
        "client_recent_max_input_buffer",
        "client_recent_max_input_buffer_bytes",
        Gauge,
    ),
    (
        "client_recent_max_output_buffer",
        "client_recent_max_output_buffer_bytes",
        Gauge,
    ),
    ("blocked_clients", "blocked_clients", Gauge),
    ("tracking_clients", "tracking_clients", Gauge),
    (
        "clients_in_timeout_table",
        "clients_in_timeout_table",
        Gauge,
    ),
    ("used_memory", "memory_used_bytes", Gauge),
    ("used_memory_rss", "memory_used_rss_bytes", Gauge),
    ("used_memory_peak", "memory_used_peak_bytes", Gauge),
    ("used_memory_overhead", "memory_used_overhead_bytes", Gauge),
    ("used_memory_startup", "memory_used_startup_bytes", Gauge),
    ("used_memory_dataset", "memory_used_dataset_bytes", Gauge),
    ("allocator_allocated", "allocator_allocated_bytes", Gauge),
    ("allocator_active", "allocator_active_bytes", Gauge),
    ("allocator_resident", "allocator_resident_bytes", Gauge),
    ("used_memory_lua", "memory_used_lua_bytes", Gauge),
    (
        "number_of_cached_scripts",
        "number_of_cached_scripts",
        Gauge,
    ),
    ("used_memory_scripts", "memory_used_scripts_bytes", Gauge),
    ("maxmemory", "memory_max_bytes", Gauge),
    ("allocator_frag_ratio", "allocator_frag_ratio", Gauge),
    ("allocator_frag_bytes", "allocator_frag_bytes", Gauge),
    ("allocator_rss_ratio", "allocator_rss_ratio", Gauge),
    ("allocator_rss_bytes", "allocator_rss_bytes", Gauge),
    ("mem_fragmentation_ratio", "mem_fragmentation_ratio", Gauge),
    ("mem_fragmentation_bytes", "mem_fragmentation_bytes", Gauge),
    (
        "mem_not_counted_for_evict",
        "mem_not_counted_for_eviction_bytes",
        Gauge,
    ),
    ("mem_clients_slaves", "mem_clients_slaves", Gauge),
    ("mem_clients_normal", "mem_clients_normal", Gauge),
    ("active_defrag_running", "active_defrag_running", Gauge),
    (
        "lazyfree_pending_objects",
        "lazyfree_pending_objects",
        Gauge,
    ),
    ("loading", "loading_dump_file", Gauge),
    (
        "rdb_changes_since_last_save",
        "rdb_changes_since_last_save",
        Gauge,
    ),
    ("rdb_bgsave_in_progress", "rdb_bgsave_in_progress", Gauge),
    (
        "rdb_last_save_time",
        "rdb_last_save_timestamp_seconds",
        Gauge,
    ),
    ("rdb_last_bgsave_status", "rdb_last_bgsave_status", Gauge),
    (
        "rdb_last_bgsave_time_sec",
        "rdb_last_bgsave_duration_sec",
        Gauge,
    ),
    (
        "rdb_current_bgsave_time_sec",
        "rdb_current_bgsave_duration_sec",
        Gauge,
    ),
    ("rdb_last_cow_size", "rdb_last_cow_size_bytes", Gauge),
    ("aof_enabled", "aof_enabled", Gauge),
    ("aof_rewrite_in_progress", "aof_rewrite_in_progress", Gauge),
    ("aof_rewrite_scheduled", "aof_rewrite_scheduled", Gauge),
    (
        "aof_last_rewrite_time_sec",
        "aof_last_rewrite_duration_sec",
        Gauge,
    ),
    (
        "aof_current_rewrite_time_sec",
        "aof_current_rewrite_duration_sec",
        Gauge,
    ),
    (
        "aof_last_bgrewrite_status",
        "aof_last_bgrewrite_status",
        Gauge,
    ),
    ("aof_last_write_status", "aof_last_write_status", Gauge),
    ("aof_last_cow_size", "aof_last_cow_size_bytes", Gauge),
    ("module_fork_in_progress", "module_fork_in_progress", Gauge),
    (
        "module_fork_last_cow_size",
        "module_fork_last_cow_size",
        Gauge,
    ),
    (
        "total_connections_received",
        "connections_received_total",
        Counter,
    ),
    (
        "total_commands_processed",
        "commands_processed_total",
        Counter,
    ),
    ("total_net_input_bytes", "net_input_bytes_total", Counter),
    ("total_net_output_bytes", "net_output_bytes_total", Counter),
    (
        "rejected_connections",
        "rejected_connections_total",
        Counter,
    ),
    ("sync_full", "replica_resyncs_full", Gauge),
    ("sync_partial_ok", "replica_partial_resync_accepted", Gauge),
    ("sync_partial_err", "replica_partial_resync_denied", Gauge),
    ("expired_keys", "expired_keys_total", Counter),
    ("expired_stale_perc", "expired_stale_percentage", Gauge),
    (
        "expired_time_cap_reached_count",
        "expired_time_cap_reached_total",
        Gauge,
    ),
    ("evicted_keys", "evicted_keys_total", Counter),
    ("keyspace_hits", "keyspace_hits_total", Counter),
    ("keyspace_misses", "keyspace_misses_total", Counter),
    ("pubsub_channels", "pubsub_channels", Gauge),
    ("pubsub_patterns", "pubsub_patterns", Gauge),
    (
        "migrate_cached_sockets",
        "migrate_cached_sockets_total",
        Gauge,
    ),
    (
        "slave_expires_tracked_keys",
        "slave_expires_tracked_keys",
        Gauge,
    ),
    ("active_defrag_hits", "defrag_hits", Gauge),
    ("active_defrag_misses", "defrag_misses", Gauge),
    ("active_defrag_key_hits", "defrag_key_hits", Gauge),
    ("active_defrag_key_misses", "defrag_key_misses", Gauge),
    ("tracking_total_keys", "tracking_total_keys", Gauge),
    ("tracking_total_items", "tracking_total_items", Gauge),
    ("tracking_total_prefixes", "tracking_total_prefixes", Gauge),
    (
        "unexpected_error_replies",
        "unexpected_error_replies",
        Counter,
    ),
    ("total_error_replies", "total_error_replies", Counter),
    (
        "dump_payload_sanitizations",
        "dump_payload_sanitizations",
        Counter,
    ),
    ("total_reads_processed", "total_reads_processed", Counter),
    ("total_writes_processed", "total_writes_processed", Counter),
    (
        "io_threaded_reads_processed",
        "io_threaded_reads_processed",
        Counter,
    ),
    (
        "io_threaded_writes_processed",
        "io_threaded_writes_processed",
        Counter,
    ),
    ("connected_slaves", "connected_slaves", Gauge),
    ("master_repl_offset", "master_repl_offset", Gauge),
    ("second_repl_offset", "second_repl_offset", Gauge),
    ("repl_backlog_active", "repl_backlog_is_active", Gauge),
    ("repl_backlog_size", "replication_backlog_bytes", Gauge),
    (
        "repl_backlog_first_byte_offset",
        "repl_backlog_first_byte_offset",
        Gauge,
    ),
    ("repl_backlog_histlen", "repl_backlog_history_bytes", Gauge),
    ("used_cpu_sys", "cpu_sys_seconds_total", Counter),
    ("used_cpu_user", "cpu_user_seconds_total", Counter),
    (
        "used_cpu_sys_children",
        "cpu_sys_children_seconds_total",
        Counter,
    ),
    (
        "used_cpu_user_children",
        "cpu_user_children_seconds_total",
        Counter,
    ),
    ("cluster_enabled", "cluster_enabled", Gauge),
    (
        "used_cpu_sys_main_thread",
        "cpu_sys_main_thread_seconds_total",
        Counter,
    ),
    (
        "used_cpu_user_main_thread",
        "cpu_user_main_thread_seconds_total",
        Counter,
    ),
];

/// INFO status fields that are 1 when "ok".
const STATUS_FIELDS: &[&str] = &[
    "rdb_last_bgsave_status",
    "aof_last_bgrewrite_status",
    "aof_last_write_status",
];

/// The exporter's type, unless Prometheus's naming rules (which `promtool
/// check metrics` enforces) say otherwise: a counter's name ends in
/// `_total` and only a counter's does. Three of the exporter's families
/// break them (`redis_migrate_cached_sockets_total` is its gauge,
/// `redis_total_error_replies` and `redis_unexpected_error_replies` its
/// counters); Firn types them by their names, which stay the same.
fn lint_kind(name: &str, kind: Kind) -> Kind {
    match (kind, name.ends_with("_total")) {
        (Gauge, true) => Counter,
        (Counter, false) => Gauge,
        _ => kind,
    }
}

/// `INFO everything` split into `(section, field, value)`.
fn fields(info: &str) -> Vec<(&str, &str, &str)> {
    let mut section = "";
    let mut out = Vec::new();
    for line in info.lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("# ") {
            section = name;
        } else if let Some((field, value)) = line.split_once(':') {
            out.push((section, field, value));
        }
    }
    out
}

/// `a=1,b=2` as pairs.
fn pairs(value: &str) -> impl Iterator<Item = (&str, &str)> {
    value.split(',').filter_map(|kv| kv.split_once('='))
}

fn number(value: &str) -> Option<f64> {
    value.parse::<f64>().ok()
}

/// Adds the redis_exporter families for `server` to `page`.
pub fn render(server: &Server, page: &mut Page) {
    let info = crate::info::render(server, &["everything".to_string()]);
    let mut values = std::collections::HashMap::new();
    let (mut master_host, mut master_port) = (String::new(), String::new());
    let mut command_totals = std::collections::HashMap::new();
    let mut latencies = Vec::new();
    page.add(
        "redis_up",
        Gauge,
        "Information about the Redis instance",
        &[],
        1.0,
    );
    for (section, field, value) in fields(&info) {
        values.insert(field, value);
        match field {
            "master_host" => master_host = value.to_string(),
            "master_port" => master_port = value.to_string(),
            _ => {}
        }
        let master = [
            ("master_host", master_host.as_str()),
            ("master_port", master_port.as_str()),
        ];
        if section == "Replication" {
            if field == "master_link_status" {
                let up = if value == "up" { 1.0 } else { 0.0 };
                page.add(
                    "redis_master_link_up",
                    Gauge,
                    "Master link status on Redis slave",
                    &master,
                    up,
                );
                continue;
            }
            if matches!(
                field,
                "master_last_io_seconds_ago" | "master_sync_in_progress" | "slave_repl_offset"
            ) {
                let v = value.parse::<i64>().unwrap_or(0) as f64;
                page.add(&format!("redis_{field}"), Gauge, field, &master, v);
                continue;
            }
            if field
                .strip_prefix("slave")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            {
                let kv: std::collections::HashMap<&str, &str> = pairs(value).collect();
                let labels = [
                    ("slave_ip", kv.get("ip").copied().unwrap_or("")),
                    ("slave_port", kv.get("port").copied().unwrap_or("")),
                    ("slave_state", kv.get("state").copied().unwrap_or("")),
                ];
                if let Some(offset) = kv.get("offset").and_then(|v| number(v)) {
                    page.add(
                        "redis_connected_slave_offset_bytes",
                        Gauge,
                        "Offset of connected slave",
                        &labels,
                        offset,
                    );
                }
                if let Some(lag) = kv.get("lag").and_then(|v| number(v)) {
                    page.add(
                        "redis_connected_slave_lag_seconds",
                        Gauge,
                        "Lag of connected slave",
                        &labels,
                        lag,
                    );
                }
                continue;
            }
        }
        if section == "Server" && field == "uptime_in_seconds" {
            if let Some(uptime) = number(value) {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                page.add(
                    "redis_start_time_seconds",
                    Gauge,
                    "Start time of the Redis instance since unix epoch in seconds.",
                    &[],
                    now as f64 - uptime,
                );
            }
        }
        if let Some(cmd) = field.strip_prefix("cmdstat_") {
            let kv: std::collections::HashMap<&str, &str> = pairs(value).collect();
            let get = |k: &str| kv.get(k).and_then(|v| number(v)).unwrap_or(0.0);
            let labels = [("cmd", cmd)];
            page.add(
                "redis_commands_total",
                Counter,
                "Total number of calls per command",
                &labels,
                get("calls"),
            );
            page.add(
                "redis_commands_duration_seconds_total",
                Counter,
                "Total amount of time in seconds spent per command",
                &labels,
                get("usec") / 1e6,
            );
            page.add(
                "redis_commands_rejected_calls_total",
                Counter,
                "Total number of errors prior command execution per command",
                &labels,
                get("rejected_calls"),
            );
            page.add(
                "redis_commands_failed_calls_total",
                Counter,
                "Total number of errors within command execution per command",
                &labels,
                get("failed_calls"),
            );
            command_totals.insert(cmd, (get("calls"), get("usec")));
            continue;
        }
        if let Some(prefix) = field.strip_prefix("errorstat_") {
            let count = pairs(value)
                .find(|(k, _)| *k == "count")
                .and_then(|(_, v)| number(v))
                .unwrap_or(0.0);
            page.add(
                "redis_errors_total",
                Counter,
                "Total number of errors per error type",
                &[("err", prefix)],
                count,
            );
            continue;
        }
        if let Some(cmd) = field.strip_prefix("latency_percentiles_usec_") {
            latencies.push((cmd, value));
            continue;
        }
        if section == "Keyspace" {
            let kv: std::collections::HashMap<&str, &str> = pairs(value).collect();
            let get = |k: &str| kv.get(k).and_then(|v| number(v)).unwrap_or(0.0);
            let labels = [("db", field)];
            page.add(
                "redis_db_keys",
                Gauge,
                "Total number of keys by DB",
                &labels,
                get("keys"),
            );
            page.add(
                "redis_db_keys_expiring",
                Gauge,
                "Total number of expiring keys by DB",
                &labels,
                get("expires"),
            );
            page.add(
                "redis_db_avg_ttl_seconds",
                Gauge,
                "Avg TTL in seconds",
                &labels,
                get("avg_ttl") / 1000.0,
            );
            continue;
        }
        if field == "latest_fork_usec" {
            if let Some(v) = number(value) {
                page.add(
                    "redis_latest_fork_seconds",
                    Gauge,
                    "Latest fork duration in seconds",
                    &[],
                    v / 1e6,
                );
            }
            continue;
        }
        let Some(&(_, name, kind)) = FIELDS.iter().find(|(f, _, _)| *f == field) else {
            continue;
        };
        let v = if STATUS_FIELDS.contains(&field) {
            Some(if value == "ok" { 1.0 } else { 0.0 })
        } else {
            number(value)
        };
        if let Some(v) = v {
            page.add(
                &format!("redis_{name}"),
                lint_kind(name, kind),
                field,
                &[],
                v,
            );
        }
    }
    // The exporter's summary: quantiles from latencystats, sum and count
    // from commandstats (µs).
    for (cmd, value) in latencies {
        let Some(&(calls, usec)) = command_totals.get(cmd) else {
            continue;
        };
        let help = "A summary of latency percentile distribution per command";
        for (quantile, v) in pairs(value) {
            if let (Some(q), Some(v)) = (quantile.strip_prefix('p'), number(v)) {
                page.add_part(
                    "redis_latency_percentiles_usec",
                    Kind::Summary,
                    help,
                    "",
                    &[("cmd", cmd), ("quantile", q)],
                    v,
                );
            }
        }
        page.add_part(
            "redis_latency_percentiles_usec",
            Kind::Summary,
            help,
            "_sum",
            &[("cmd", cmd)],
            usec,
        );
        page.add_part(
            "redis_latency_percentiles_usec",
            Kind::Summary,
            help,
            "_count",
            &[("cmd", cmd)],
            calls,
        );
    }
    // Every database, empty ones at 0, as the exporter lists them from
    // CONFIG GET databases.
    for db in 0..server.engine.databases() {
        let name = format!("db{db}");
        if !values.contains_key(name.as_str()) {
            page.add(
                "redis_db_keys",
                Gauge,
                "Total number of keys by DB",
                &[("db", &name)],
                0.0,
            );
            page.add(
                "redis_db_keys_expiring",
                Gauge,
                "Total number of expiring keys by DB",
                &[("db", &name)],
                0.0,
            );
        }
    }
    let get = |k: &str| values.get(k).copied().unwrap_or("").to_string();
    page.add(
        "redis_instance_info",
        Gauge,
        "Information about the Redis instance",
        &[
            ("maxmemory_policy", &get("maxmemory_policy")),
            ("os", &get("os")),
            ("process_id", &get("process_id")),
            ("redis_build_id", &get("redis_build_id")),
            ("redis_mode", &get("redis_mode")),
            ("redis_version", &get("redis_version")),
            ("role", &get("role")),
            ("run_id", &get("run_id")),
            ("tcp_port", &get("tcp_port")),
        ],
        1.0,
    );
    let (maxclients, maxmemory, io_threads) = {
        let config = server.config();
        (config.maxclients, config.maxmemory, config.io_threads)
    };
    page.add(
        "redis_config_maxclients",
        Gauge,
        "config_maxclients",
        &[],
        maxclients as f64,
    );
    page.add(
        "redis_config_maxmemory",
        Gauge,
        "config_maxmemory",
        &[],
        maxmemory as f64,
    );
    page.add(
        "redis_config_io_threads",
        Gauge,
        "config_io_threads",
        &[],
        io_threads as f64,
    );
    let (length, last_id, last_micros) = {
        let log = server.slowlog.lock();
        let newest = log.entries.iter().max_by_key(|e| e.id);
        (
            log.entries.len(),
            newest.map_or(0, |e| e.id),
            newest.map_or(0, |e| e.micros),
        )
    };
    page.add(
        "redis_slowlog_length",
        Gauge,
        "Total slowlog",
        &[],
        length as f64,
    );
    page.add(
        "redis_slowlog_last_id",
        Gauge,
        "Last id of slowlog",
        &[],
        last_id as f64,
    );
    page.add(
        "redis_last_slow_execution_duration_seconds",
        Gauge,
        "The amount of time needed for last slow execution, in seconds",
        &[],
        last_micros as f64 / 1e6,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_keep_their_section() {
        let info = "# Server\r\nredis_version:7.0.15\r\n\r\n# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n";
        assert_eq!(
            fields(info),
            [
                ("Server", "redis_version", "7.0.15"),
                ("Keyspace", "db0", "keys=1,expires=0,avg_ttl=0")
            ]
        );
    }

    #[test]
    fn types_follow_the_names() {
        assert_eq!(lint_kind("migrate_cached_sockets_total", Gauge), Counter);
        assert_eq!(lint_kind("total_error_replies", Counter), Gauge);
        assert_eq!(lint_kind("keyspace_hits_total", Counter), Counter);
        assert_eq!(lint_kind("connected_clients", Gauge), Gauge);
    }

    #[test]
    fn every_exporter_field_is_named_once() {
        let mut seen = std::collections::HashSet::new();
        for (field, name, _) in FIELDS {
            assert!(seen.insert(*field), "{field} twice");
            assert!(!name.starts_with("redis_"), "{name}");
        }
    }
}
