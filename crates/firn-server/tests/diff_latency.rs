//! Differential tests of latency bookkeeping against redis-server 7.0.15:
//! LATENCY's monitor (LATEST, HISTORY, GRAPH, RESET) with
//! `latency-monitor-threshold`, and the per-command histograms of LATENCY
//! HISTOGRAM and INFO latencystats. Latencies differ between the servers;
//! what is compared is the shape, the events and the call counts.

use firn_testkit::{Diff, R};

/// A script that runs for at least `ms` milliseconds (Redis has no other
/// slow command to call without DEBUG).
fn busy_script(ms: u64) -> String {
    format!(
        "local t = redis.call('TIME') \
         while true do \
           local n = redis.call('TIME') \
           if (n[1] - t[1]) * 1000000 + (n[2] - t[2]) > {} then return 1 end \
         end",
        ms * 1000
    )
}

/// The `calls` of `name` in a LATENCY HISTOGRAM reply (RESP2: flat pairs).
fn calls_of(reply: &R, name: &str) -> Option<i64> {
    let R::Array(Some(items)) = reply else {
        return None;
    };
    let at = items
        .chunks(2)
        .position(|p| p[0].as_str().as_deref() == Some(name))?;
    match &items[2 * at + 1] {
        R::Array(Some(fields)) => fields[1].as_int(),
        _ => None,
    }
}

#[test]
fn the_monitor_records_commands_past_its_threshold() {
    let mut d = Diff::new();
    d.cmd(&["LATENCY", "LATEST"]);
    d.cmd(&["LATENCY", "HISTORY", "command"]);
    d.cmd(&["LATENCY", "GRAPH", "command"]);
    d.cmd(&["LATENCY", "RESET"]);
    d.cmd(&["LATENCY", "NOSUCH"]);
    d.cmd(&["LATENCY", "HISTORY"]);
    d.cmd_type_only(&["LATENCY", "HELP"]);
    d.cmd_type_only(&["LATENCY", "DOCTOR"]);
    d.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "2"]);
    d.cmd(&["CONFIG", "GET", "latency-monitor-threshold"]);
    d.cmd(&["EVAL", &busy_script(5), "0"]);
    let pair = d.client();
    for conn in [&mut pair.redis, &mut pair.firn] {
        let latest = conn.cmd(&["LATENCY", "LATEST"]);
        let R::Array(Some(events)) = &latest else {
            panic!("LATENCY LATEST: {latest:?}")
        };
        assert_eq!(events.len(), 1, "{latest:?}");
        let R::Array(Some(fields)) = &events[0] else {
            panic!("{latest:?}")
        };
        assert_eq!(fields[0].as_str().as_deref(), Some("command"));
        assert!(fields[2].as_int().is_some_and(|ms| ms >= 5), "{latest:?}");
        let history = conn.cmd(&["LATENCY", "HISTORY", "command"]);
        assert!(
            matches!(&history, R::Array(Some(s)) if s.len() == 1),
            "{history:?}"
        );
        let graph = conn.cmd(&["LATENCY", "GRAPH", "command"]);
        assert!(matches!(graph, R::Bulk(Some(_))), "{graph:?}");
    }
    d.cmd(&["LATENCY", "RESET", "nosuch"]);
    d.cmd(&["LATENCY", "RESET", "command", "fast-command"]);
    d.cmd(&["LATENCY", "LATEST"]);
    d.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "0"]);
}

#[test]
fn histograms_count_each_commands_calls() {
    let mut d = Diff::new();
    d.cmd(&["CONFIG", "RESETSTAT"]);
    for i in 0..5 {
        d.cmd(&["SET", &format!("k{i}"), "v"]);
    }
    d.cmd(&["CONFIG", "GET", "latency-tracking"]);
    d.cmd(&["CONFIG", "GET", "latency-tracking-info-percentiles"]);
    d.cmd(&["LATENCY", "HISTOGRAM", "nosuchcommand"]);
    let pair = d.client();
    for conn in [&mut pair.redis, &mut pair.firn] {
        let reply = conn.cmd(&["LATENCY", "HISTOGRAM", "set", "get"]);
        assert_eq!(calls_of(&reply, "set"), Some(5), "{reply:?}");
        assert_eq!(calls_of(&reply, "get"), None, "{reply:?}");
        let config = conn.cmd(&["LATENCY", "HISTOGRAM", "config"]);
        assert_eq!(calls_of(&config, "config|resetstat"), Some(1), "{config:?}");
        let info = conn.cmd(&["INFO", "latencystats"]);
        let text = match &info {
            R::Bulk(Some(b)) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("{other:?}"),
        };
        assert!(text.starts_with("# Latencystats\r\n"), "{text}");
        let set_line = text
            .lines()
            .find(|l| l.starts_with("latency_percentiles_usec_set:"))
            .expect("a line for SET");
        assert!(
            set_line.contains(":p50=")
                && set_line.contains(",p99=")
                && set_line.contains(",p99.9=")
        );
        assert!(!conn
            .cmd(&["INFO"])
            .as_str()
            .unwrap_or_default()
            .contains("Latencystats"));
    }
    d.cmd(&[
        "CONFIG",
        "SET",
        "latency-tracking-info-percentiles",
        "50 101",
    ]);
    d.cmd(&[
        "CONFIG",
        "SET",
        "latency-tracking-info-percentiles",
        "50 abc",
    ]);
    d.cmd(&["CONFIG", "SET", "latency-tracking-info-percentiles", "75"]);
    d.cmd(&["CONFIG", "GET", "latency-tracking-info-percentiles"]);
    d.cmd(&["CONFIG", "SET", "latency-tracking", "no"]);
    d.cmd(&["CONFIG", "RESETSTAT"]);
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["LATENCY", "HISTOGRAM"]);
    d.cmd(&["INFO", "latencystats"]);
    d.cmd(&["CONFIG", "SET", "latency-tracking", "yes"]);
}
