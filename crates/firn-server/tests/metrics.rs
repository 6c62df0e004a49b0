//! The metrics port with real components: `promtool check metrics` on
//! `/metrics` under load; Debian's redis_exporter run against the same
//! Firn, each family it derives found in Firn's own page; Prometheus
//! scraping Firn every second and answering a redis_exporter dashboard's
//! queries; headless Chromium loading the status page under load and the
//! charts drawing points.
//!
//! Requirements (`scripts/install-deps.sh`): promtool and prometheus
//! (Debian's `prometheus`), `prometheus-redis-exporter`, `chromium`,
//! redis-benchmark. A missing tool fails the test: it is never skipped.
//!
//! Every process runs on free loopback ports in temporary directories and
//! is killed on drop.

use firn_testkit::server::free_port;
use firn_testkit::{wait_until, Server};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process killed when dropped.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(program: &str, args: &[&str]) -> Process {
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {program} (scripts/install-deps.sh): {e}"));
    Process(child)
}

/// Firn with its metrics port, and that port.
fn firn_with_metrics(extra: &[&str]) -> (Server, u16) {
    let metrics = free_port();
    let port = metrics.to_string();
    let mut args = vec!["--metrics-port", port.as_str()];
    args.extend_from_slice(extra);
    let server = Server::firn_with(&args);
    wait_until("the metrics port answers", Duration::from_secs(10), || {
        http_get(metrics, "/metrics").is_some()
    });
    (server, metrics)
}

/// The body of `GET path` on a loopback port, None if it did not answer 200.
fn http_get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    if !head.starts_with("HTTP/1.1 200") {
        return None;
    }
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return Some(dechunk(body));
    }
    Some(body.to_string())
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// A bounded load of mixed commands from redis-benchmark, as a process.
fn load(port: u16, requests: u32) -> Process {
    let port = port.to_string();
    let requests = requests.to_string();
    spawn(
        "redis-benchmark",
        &[
            "-p",
            &port,
            "-n",
            &requests,
            "-r",
            "10000",
            "-c",
            "4",
            "-q",
            "-l",
            "-t",
            "set,get,incr,lpush,hset,sadd",
        ],
    )
}

/// Some of every kind of figure: reads, writes, errors, a slow command.
fn exercise(server: &Server) {
    let mut conn = server.conn();
    for i in 0..200 {
        conn.cmd(&["SET", &format!("k{i}"), "v"]);
        conn.cmd(&["GET", &format!("k{i}")]);
    }
    conn.cmd(&["HSET", "h", "f", "v"]);
    conn.cmd(&["SELECT", "3"]);
    conn.cmd(&["SET", "in3", "v", "EX", "100"]);
    conn.cmd(&["INCR", "h"]);
    conn.cmd(&["NOSUCHCOMMAND"]);
    conn.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    conn.cmd(&["PING"]);
}

/// Families of a text exposition: name → (type, label names of its samples).
fn families(text: &str) -> BTreeMap<String, (String, BTreeSet<String>)> {
    let mut out: BTreeMap<String, (String, BTreeSet<String>)> = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut words = rest.split_whitespace();
            if let (Some(name), Some(kind)) = (words.next(), words.next()) {
                out.entry(name.to_string()).or_default().0 = kind.to_string();
            }
        } else if !line.starts_with('#') && !line.is_empty() {
            let name_end = line.find(['{', ' ']).unwrap_or(line.len());
            let mut name = &line[..name_end];
            for suffix in ["_bucket", "_sum", "_count"] {
                if let Some(base) = name.strip_suffix(suffix) {
                    if out.contains_key(base) {
                        name = base;
                    }
                }
            }
            let labels = line[name_end..]
                .strip_prefix('{')
                .and_then(|l| l.split_once('}'))
                .map(|(l, _)| l)
                .unwrap_or("");
            let entry = out.entry(name.to_string()).or_default();
            for pair in labels.split("\",") {
                if let Some((label, _)) = pair.split_once('=') {
                    if label != "le" && label != "quantile" {
                        entry.1.insert(label.to_string());
                    }
                }
            }
        }
    }
    out
}

fn run_promtool(text: &str) -> (bool, String) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot run promtool (scripts/install-deps.sh installs Debian's prometheus)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

#[test]
fn promtool_accepts_the_page_under_load_and_it_has_every_redis_exporter_family() {
    let (server, metrics) = firn_with_metrics(&["--enable-debug-command", "yes"]);
    exercise(&server);
    let _load = load(server.port(), 2_000_000);
    std::thread::sleep(Duration::from_millis(500));
    let page = http_get(metrics, "/metrics").expect("/metrics answers");
    let (ok, said) = run_promtool(&page);
    assert!(ok, "promtool check metrics refused the page:\n{said}");

    // The real exporter against the same server.
    let exporter_port = free_port();
    let redis_addr = format!("redis://127.0.0.1:{}", server.port());
    let listen = format!("127.0.0.1:{exporter_port}");
    let _exporter = spawn(
        "prometheus-redis-exporter",
        &[
            "-redis.addr",
            &redis_addr,
            "-web.listen-address",
            &listen,
            "-redis-only-metrics",
        ],
    );
    let mut exported = None;
    wait_until("redis_exporter answers", Duration::from_secs(15), || {
        exported = http_get(exporter_port, "/metrics").filter(|t| t.contains("redis_up 1"));
        exported.is_some()
    });
    let theirs = families(&exported.unwrap());
    let page = http_get(metrics, "/metrics").unwrap();
    let ours = families(&page);
    let mut missing = Vec::new();
    for (name, (kind, labels)) in &theirs {
        // The exporter's own health, and what only the exporter measures.
        if name.starts_with("redis_exporter_")
            || name == "redis_target_scrape_request_errors_total"
            || name == "redis_last_key_groups_scrape_duration_milliseconds"
        {
            continue;
        }
        match ours.get(name) {
            None => missing.push(format!("{name} (absent)")),
            Some((our_kind, our_labels)) => {
                if our_labels != labels {
                    missing.push(format!(
                        "{name}: labels {our_labels:?}, exporter {labels:?}"
                    ));
                }
                // Types differ only where Prometheus's naming rules say so.
                let renamed = (kind == "gauge" && name.ends_with("_total"))
                    || (kind == "counter" && !name.ends_with("_total"));
                if our_kind != kind && !renamed {
                    missing.push(format!("{name}: type {our_kind}, exporter {kind}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "families redis_exporter derives that /metrics lacks or differs on:\n{}",
        missing.join("\n")
    );
    assert!(
        theirs.len() > 60,
        "the exporter gave {} families",
        theirs.len()
    );

    // The same values where they cannot move between the two scrapes.
    let line_of = |text: &str, prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .map(str::to_string)
    };
    let exported = http_get(exporter_port, "/metrics").unwrap();
    for sample in [
        "redis_db_keys{db=\"db3\"}",
        "redis_db_keys_expiring{db=\"db3\"}",
        "redis_config_maxclients",
    ] {
        assert_eq!(
            line_of(&page, sample),
            line_of(&exported, sample),
            "{sample}"
        );
    }

    // Firn's own families are there with data.
    for family in [
        "firn_reads_total",
        "firn_read_latency_seconds",
        "firn_command_latency_seconds",
        "firn_cold_queue_length",
        "firn_memory_used_bytes",
        "firn_memory_limit_bytes",
        "firn_rocksdb_write_stalls_total",
        "firn_rocksdb_pending_compaction_bytes",
        "firn_rocksdb_l0_files",
        "firn_rocksdb_block_cache_hit_ratio",
        "firn_rocksdb_write_amplification",
    ] {
        assert!(ours.contains_key(family), "{family} missing");
    }
    assert!(page.contains("firn_command_latency_seconds_bucket{cmd=\"get\",le=\"+Inf\"}"));
}

#[test]
fn the_http_port_answers_errors_and_never_a_redis_client() {
    let (server, metrics) = firn_with_metrics(&[]);
    assert!(http_get(metrics, "/nosuch").is_none());
    let mut stream = TcpStream::connect(("127.0.0.1", metrics)).unwrap();
    stream
        .write_all(
            b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 405"), "{response}");
    // Garbage gets an HTTP error or a closed connection, and Redis clients
    // go on being served.
    let mut stream = TcpStream::connect(("127.0.0.1", metrics)).unwrap();
    stream.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    let mut buf = Vec::new();
    let _ = stream.read_to_end(&mut buf);
    assert!(!buf.starts_with(b"+PONG"));
    assert_eq!(
        server.conn().cmd(&["PING"]),
        firn_testkit::R::Simple("PONG".into())
    );
    let json = http_get(metrics, "/status.json").unwrap();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(value["reads"]["hot"].is_u64(), "{json}");
    assert!(http_get(metrics, "/").unwrap().contains("uPlot"));
}

/// The queries of redis_exporter's Grafana dashboard (its
/// `contrib/grafana_prometheus_redis_dashboard.json`), without the
/// dashboard's variables.
const DASHBOARD_QUERIES: &[&str] = &[
    "max(max_over_time(redis_uptime_in_seconds[1m]))",
    "redis_connected_clients",
    "100 * (redis_memory_used_bytes / redis_memory_max_bytes)",
    "rate(redis_commands_processed_total[1m])",
    "irate(redis_keyspace_hits_total[5m])",
    "irate(redis_keyspace_misses_total[5m])",
    "redis_memory_used_bytes",
    "redis_memory_max_bytes",
    "rate(redis_net_input_bytes_total[5m])",
    "rate(redis_net_output_bytes_total[5m])",
    "sum (redis_db_keys) by (db)",
    "sum (redis_db_keys) - sum (redis_db_keys_expiring)",
    "sum(rate(redis_expired_keys_total[5m])) by (instance)",
    "sum(rate(redis_evicted_keys_total[5m])) by (instance)",
    "topk(5, irate(redis_commands_total[1m]))",
    "sum(irate(redis_commands_duration_seconds_total[1m])) by (cmd) / sum(irate(redis_commands_total[1m])) by (cmd)",
    "redis_up",
    "redis_mem_fragmentation_ratio",
    "redis_memory_used_rss_bytes",
    "redis_blocked_clients",
    "redis_connected_slaves",
    // Firn's own, as an operator's dashboard would query them.
    "sum(rate(firn_reads_total[1m])) by (tier)",
    "histogram_quantile(0.99, sum(rate(firn_read_latency_seconds_bucket[1m])) by (le, tier))",
    "histogram_quantile(0.5, sum(rate(firn_command_latency_seconds_bucket[1m])) by (le, cmd))",
    "firn_memory_used_bytes / firn_memory_limit_bytes",
];

fn prometheus_query(port: u16, query: &str) -> Option<serde_json::Value> {
    let mut encoded = String::new();
    for b in query.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    let body = http_get(port, &format!("/api/v1/query?query={encoded}"))?;
    serde_json::from_str(&body).ok()
}

#[test]
fn prometheus_scraping_firn_answers_a_redis_exporter_dashboard() {
    let (server, metrics) = firn_with_metrics(&[]);
    exercise(&server);
    let _load = load(server.port(), 5_000_000);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: firn\n    static_configs:\n      - targets: ['127.0.0.1:{metrics}']\n"
        ),
    )
    .unwrap();
    let prometheus_port = free_port();
    let listen = format!("127.0.0.1:{prometheus_port}");
    let storage = dir.path().join("data");
    let _prometheus = spawn(
        "prometheus",
        &[
            &format!("--config.file={}", config.display()),
            &format!("--storage.tsdb.path={}", storage.display()),
            &format!("--web.listen-address={listen}"),
        ],
    );
    // Rates need two samples of each series.
    let started = Instant::now();
    let mut empty: Vec<&str> = DASHBOARD_QUERIES.to_vec();
    while !empty.is_empty() && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(1000));
        empty.retain(|query| {
            let answer = prometheus_query(prometheus_port, query);
            let has_data = answer
                .as_ref()
                .and_then(|a| a["data"]["result"].as_array())
                .is_some_and(|r| !r.is_empty());
            !has_data
        });
    }
    assert!(
        empty.is_empty(),
        "queries without data after {:?}: {empty:?}",
        started.elapsed()
    );
}

#[test]
fn headless_chromium_draws_the_status_page_under_load() {
    let (server, metrics) = firn_with_metrics(&[]);
    exercise(&server);
    let _load = load(server.port(), 5_000_000);
    let profile = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{metrics}/");
    // Virtual time runs the page's one-second polls back to back, pausing
    // while a fetch is in flight, so six seconds of page time take about as
    // long as six requests.
    let output = Command::new("chromium")
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.path().display()),
            "--window-size=1400,1200",
            "--virtual-time-budget=6000",
            "--dump-dom",
            &url,
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("cannot run chromium (scripts/install-deps.sh)");
    let dom = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "chromium failed: {dom}");
    let attribute = |name: &str| -> Vec<u64> {
        dom.match_indices(&format!("{name}=\""))
            .filter_map(|(at, m)| {
                let rest = &dom[at + m.len()..];
                rest[..rest.find('"')?].parse().ok()
            })
            .collect()
    };
    let updates = attribute("data-updates");
    assert!(
        updates.first().is_some_and(|&n| n >= 3),
        "the page did not update (data-updates {updates:?}):\n{dom}"
    );
    // Six charts, each with points, each drawn on a canvas.
    let points = attribute("data-points");
    assert_eq!(points.len(), 6, "charts with points: {points:?}");
    assert!(points.iter().all(|&n| n >= 3), "{points:?}");
    assert!(dom.matches("<canvas").count() >= 6);
    assert!(
        dom.contains("string"),
        "the ops chart names the string group"
    );
    assert!(
        dom.contains("<span id=\"error\"></span>"),
        "the page reports an error"
    );
}

#[test]
fn replication_figures_on_both_sides() {
    let (primary, primary_metrics) = firn_with_metrics(&[]);
    let (replica, replica_metrics) = firn_with_metrics(&[]);
    let mut conn = replica.conn();
    conn.cmd(&["REPLICAOF", "127.0.0.1", &primary.port().to_string()]);
    primary.conn().cmd(&["SET", "k", "v"]);
    wait_until("the replica's link is up", Duration::from_secs(30), || {
        http_get(replica_metrics, "/metrics").is_some_and(|page| {
            page.lines()
                .any(|l| l.starts_with("redis_master_link_up{") && l.ends_with(" 1"))
        })
    });
    let page = http_get(replica_metrics, "/metrics").unwrap();
    let link = page
        .lines()
        .find(|l| l.starts_with("redis_master_link_up{"))
        .unwrap();
    assert!(
        link.contains(&format!("master_port=\"{}\"", primary.port())),
        "{link}"
    );
    assert!(page.contains("redis_instance_info{") && page.contains("role=\"slave\""));
    wait_until(
        "the primary lists its replica",
        Duration::from_secs(30),
        || {
            http_get(primary_metrics, "/metrics").is_some_and(|page| {
                page.contains("redis_connected_slave_offset_bytes{")
                    && page.contains("firn_replica_lag_bytes{")
                    && page.contains("slave_state=\"online\"")
            })
        },
    );
    let page = http_get(primary_metrics, "/metrics").unwrap();
    assert!(page.contains("redis_connected_slaves 1"), "{page}");
}

#[test]
fn the_cold_read_log_and_long_operations_reach_metrics_and_the_page() {
    let (server, metrics) = firn_with_metrics(&[
        "--debug-cold-reads",
        "yes",
        "--cold-read-log-slower-than",
        "0",
        "--enable-debug-command",
        "yes",
    ]);
    let mut conn = server.conn();
    conn.cmd(&["SET", "coldkey", "v"]);
    conn.cmd(&["GET", "coldkey"]);
    conn.cmd(&["DEBUG", "RELOAD"]);
    let page = http_get(metrics, "/metrics").unwrap();
    let (ok, said) = run_promtool(&page);
    assert!(ok, "{said}");
    let last = page
        .lines()
        .find(|l| l.starts_with("firn_cold_slowlog_last_wait_seconds{"))
        .unwrap_or_else(|| panic!("no slow cold read in:\n{page}"));
    assert!(last.contains("key=\"coldkey\""), "{last}");
    assert!(page.contains("firn_cold_queue_wait_seconds_count"));
    assert!(page.contains("firn_progress_last_duration_seconds{kind=\"debug-reload\"}"));
    let json: serde_json::Value =
        serde_json::from_str(&http_get(metrics, "/status.json").unwrap()).unwrap();
    assert_eq!(json["cold_log"][0]["key"], "coldkey", "{json}");
    assert_eq!(json["last_finished"]["kind"], "debug-reload", "{json}");
}
