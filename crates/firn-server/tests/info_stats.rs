//! INFO counters that clients and dashboards read count what Redis counts.

mod common;

use common::{Server, R};

fn stat(server: &Server, field: &str) -> i64 {
    let mut c = server.conn();
    let text = match c.cmd(&["INFO", "stats"]) {
        R::Bulk(Some(v)) => String::from_utf8_lossy(&v).to_string(),
        other => panic!("INFO: {}", other.render()),
    };
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in INFO stats"))
}

#[test]
fn keyspace_hits_and_misses_match_redis() {
    let servers = [Server::redis(), Server::firn()];
    for server in &servers {
        let mut c = server.conn();
        for cmd in [
            &["SET", "a", "1"][..],
            &["GET", "a"],
            &["GET", "missing"],
            &["MGET", "a", "b", "c"],
            &["STRLEN", "a"],
            &["EXISTS", "a", "zz"],
            &["INCR", "a"],
            &["GETRANGE", "nope", "0", "1"],
        ] {
            c.cmd(cmd);
        }
    }
    for field in ["keyspace_hits", "keyspace_misses"] {
        assert_eq!(
            stat(&servers[0], field),
            stat(&servers[1], field),
            "{field}"
        );
    }
}
