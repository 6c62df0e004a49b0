//! INFO counters that clients and dashboards read count what Redis counts.

use firn_testkit::{info, Server};

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
            info::field(&mut servers[0].conn(), "stats", field),
            info::field(&mut servers[1].conn(), "stats", field),
            "{field}"
        );
    }
}

/// INFO stats has the fields Redis's own tests read, with the values a
/// server without forks or MIGRATE reports.
#[test]
fn stats_section_has_redis_fields_without_forks_or_migrate() {
    for server in [Server::redis(), Server::firn()] {
        let mut c = server.conn();
        for name in ["total_forks", "migrate_cached_sockets"] {
            assert_eq!(info::field(&mut c, "stats", name), 0, "{name}");
        }
    }
}

/// INFO memory's lazy-free fields, which Redis's tests poll before they go
/// on (`wait_lazyfree_done`): Firn frees nothing in the background.
#[test]
fn memory_section_reports_no_pending_lazy_frees() {
    for server in [Server::redis(), Server::firn()] {
        let mut c = server.conn();
        c.cmd(&["SADD", "s", "a", "b"]);
        c.cmd(&["UNLINK", "s"]);
        for name in ["lazyfree_pending_objects", "lazyfreed_objects"] {
            assert_eq!(info::field(&mut c, "memory", name), 0, "{name}");
        }
    }
}
