//! Differential tests of the introspection commands against redis-server
//! 7.0.15: MONITOR mode, CONFIG GET/SET with several parameters, INFO
//! section selection, commandstats and errorstats, SLOWLOG trimming and
//! CLIENT KILL/LIST.
//!
//! Normalised: what differs by construction (timestamps, durations, client
//! addresses and ids, microsecond totals) is blanked; every count is kept.

use firn_testkit::{
    diff::{command, slowlog_normalised},
    info,
    reply::assert_err,
    Conn, Diff, Server, R,
};
use std::collections::BTreeMap;
use std::time::Duration;

// ------------------------------------------------------------------ MONITOR

/// A monitor line without its timestamp and client address:
/// `+1700000000.123456 [0 127.0.0.1:5000] "PING"` becomes `[0] "PING"`.
fn feed_normalised(r: &R) -> String {
    let text = match r {
        R::Simple(text) => text.clone(),
        other => return format!("not a feed line: {}", other.render()),
    };
    match (text.find('['), text.find(']')) {
        (Some(open), Some(close)) if open < close => {
            let db = text[open + 1..close].split(' ').next().unwrap_or_default();
            format!("[{db}]{}", &text[close + 1..])
        }
        _ => format!("malformed feed line: {text}"),
    }
}

/// Reads one monitor line from each server and compares them normalised.
fn expect_feed(d: &mut Diff, expected: &str) {
    let pair = d.client();
    let redis = feed_normalised(&pair.redis.read_reply().1);
    let firn = feed_normalised(&pair.firn.read_reply().1);
    assert_eq!(redis, expected, "redis's feed line");
    assert_eq!(firn, expected, "firn's feed line");
}

#[test]
fn a_monitor_still_runs_commands_that_do_not_touch_keys() {
    let mut d = Diff::new();
    let other = d.open_client();
    d.cmd(&["MONITOR"]);
    d.cmd(&["PING"]);
    expect_feed(&mut d, r#"[0] "PING""#);
    d.cmd(&["ECHO", "hi"]);
    expect_feed(&mut d, r#"[0] "ECHO" "hi""#);
    // Keyspace commands are refused (a monitor is a replica-like client)
    // and, not having run, are not fed.
    let r = d.cmd(&["GET", "k"]);
    assert_err(&r, "ERR Replica can't interact with the keyspace");
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["GET"]);
    d.cmd(&["NOSUCH", "x"]);
    // Fed with the database the command left selected.
    d.cmd(&["SELECT", "1"]);
    expect_feed(&mut d, r#"[1] "SELECT" "1""#);
    // A monitor is flagged O in CLIENT LIST/INFO.
    d.cmd_with(&["CLIENT", "INFO"], |r| {
        let fields: Vec<R> = ["flags", "db", "cmd"]
            .iter()
            .map(|f| R::Simple(format!("{f}={}", client_field(r, f))))
            .collect();
        R::Array(Some(fields))
    });
    expect_feed(&mut d, r#"[1] "CLIENT" "INFO""#);
    // MONITOR again is ignored without a reply.
    d.send(&["MONITOR"]);
    d.cmd(&["ECHO", "after"]);
    expect_feed(&mut d, r#"[1] "ECHO" "after""#);
    // Another client's commands keep arriving.
    d.use_client(other);
    d.cmd(&["SET", "k", "v"]);
    d.use_client(0);
    expect_feed(&mut d, r#"[0] "SET" "k" "v""#);
    d.assert_silent_both(Duration::from_millis(200));
}

/// Monitors see what each handler leaves of its arguments: AUTH's and
/// HELLO ... AUTH's secrets as "(redacted)", the rest as sent (a HELLO
/// without AUTH in full, as Redis 7.0 shows it).
#[test]
fn monitors_see_secrets_redacted_by_their_commands() {
    let mut d = Diff::new();
    let other = d.open_client();
    d.cmd(&["MONITOR"]);
    d.use_client(other);
    // HELLO's reply differs by construction (server name, version, id).
    let kind = |r: &R| R::Simple(if r.is_error() { "error" } else { "hello" }.into());
    d.cmd_with(&["HELLO", "2"], kind);
    d.cmd_with(&["HELLO", "2", "SETNAME", "x"], kind);
    d.cmd_with(&["HELLO", "2", "AUTH", "default", "pw"], kind);
    d.cmd(&["AUTH", "pw"]);
    d.cmd(&["AUTH", "user", "pw"]);
    d.use_client(0);
    expect_feed(&mut d, r#"[0] "HELLO" "2""#);
    expect_feed(&mut d, r#"[0] "HELLO" "2" "SETNAME" "x""#);
    expect_feed(
        &mut d,
        r#"[0] "HELLO" "2" "AUTH" "(redacted)" "(redacted)""#,
    );
    expect_feed(&mut d, r#"[0] "AUTH" "(redacted)""#);
    expect_feed(&mut d, r#"[0] "AUTH" "(redacted)" "(redacted)""#);
    d.assert_silent_both(Duration::from_millis(200));
}

#[test]
fn reset_leaves_monitor_mode() {
    let mut d = Diff::new();
    let other = d.open_client();
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["MONITOR"]);
    d.cmd(&["RESET"]);
    // Back to a normal client: keys are readable, nothing is fed.
    d.cmd(&["GET", "k"]);
    d.use_client(other);
    d.cmd(&["SET", "k", "w"]);
    d.use_client(0);
    d.assert_silent_both(Duration::from_millis(200));
    d.cmd(&["GET", "k"]);
    // Requests pipelined behind RESET are served as a normal client's.
    d.cmd(&["MONITOR"]);
    let replies = d.pipeline(&[
        command(&["RESET"]),
        command(&["GET", "k"]),
        command(&["DBSIZE"]),
    ]);
    assert_eq!(replies.len(), 3);
    d.assert_silent_both(Duration::from_millis(200));
}

#[test]
fn quit_closes_a_monitor() {
    let mut d = Diff::new();
    d.cmd(&["MONITOR"]);
    d.cmd(&["QUIT"]);
    d.assert_closed_both();
}

// ------------------------------------------------------------------ CONFIG

/// CONFIG GET's pairs in name order (Redis lists them in hash order).
fn config_pairs(r: &R) -> R {
    r.pairs_sorted()
}

#[test]
fn config_set_takes_several_parameters() {
    let mut d = Diff::new();
    d.cmd(&["CONFIG", "SET", "timeout", "10", "slowlog-max-len", "5"]);
    d.cmd_with(
        &["CONFIG", "GET", "timeout", "slowlog-max-len"],
        config_pairs,
    );
    d.cmd(&[
        "CONFIG",
        "SET",
        "MAXMEMORY-POLICY",
        "ALLKEYS-LRU",
        "hz",
        "1000",
        "maxmemory-samples",
        "7",
    ]);
    d.cmd_with(
        &[
            "CONFIG",
            "GET",
            "maxmemory-policy",
            "hz",
            "maxmemory-samples",
        ],
        config_pairs,
    );
    // INFO reports the configured hz.
    d.cmd(&["CONFIG", "SET", "hz", "50"]);
    d.cmd_with(&["INFO", "server"], |r| {
        let text = r.as_str().unwrap_or_default();
        let lines: Vec<R> = text
            .lines()
            .filter(|l| l.starts_with("hz:") || l.starts_with("configured_hz:"))
            .map(|l| R::Simple(l.to_string()))
            .collect();
        R::Array(Some(lines))
    });
}

#[test]
fn config_set_is_all_or_nothing() {
    let mut d = Diff::new();
    d.cmd(&["CONFIG", "SET", "timeout", "10"]);
    // A bad value anywhere leaves every parameter as it was, and is
    // reported with the parameter's own name.
    d.cmd(&["CONFIG", "SET", "timeout", "20", "maxclients", "abc"]);
    d.cmd(&["CONFIG", "SET", "TIMEOUT", "abc", "maxclients", "100"]);
    d.cmd(&["CONFIG", "SET", "timeout", "20", "maxmemory-policy", "foo"]);
    d.cmd(&["CONFIG", "SET", "timeout", "20", "maxclients", "0"]);
    d.cmd(&["CONFIG", "SET", "slowlog-max-len", "3", "hz", "-1"]);
    d.cmd_with(
        &[
            "CONFIG",
            "GET",
            "timeout",
            "maxclients",
            "slowlog-max-len",
            "hz",
        ],
        config_pairs,
    );
}

#[test]
fn config_set_refuses_names_before_values() {
    let mut d = Diff::new();
    for args in [
        &["timeout", "1", "databases", "3"][..],
        &["timeout", "abc", "databases", "3"],
        &["databases", "3", "timeout", "abc"],
        &["timeout", "1", "TIMEOUT", "2"],
        &["timeout", "1", "foo", "2"],
        &["foo", "1", "timeout", "2"],
        &["timeout", "1", "maxclients"],
        &["timeout"],
        &["dir", "/tmp"],
        &["daemonize", "no"],
        &["cluster-enabled", "yes"],
        &["replica-read-only", "maybe"],
        &["maxmemory-samples", "0"],
        &["notify-keyspace-events", ""],
    ] {
        let mut cmd = vec!["CONFIG", "SET"];
        cmd.extend_from_slice(args);
        d.cmd(&cmd);
    }
    d.cmd(&["CONFIG", "GET", "timeout"]);
}

#[test]
fn config_get_reports_redis_defaults_of_common_parameters() {
    let mut d = Diff::new();
    for name in [
        "maxmemory-policy",
        "maxmemory-samples",
        "notify-keyspace-events",
        "hz",
        "replica-read-only",
        "stop-writes-on-bgsave-error",
        "cluster-enabled",
        "daemonize",
        "appendfsync",
        "maxmemory",
        "databases",
        "timeout",
        "tcp-keepalive",
    ] {
        d.cmd(&["CONFIG", "GET", name]);
    }
    d.cmd_with(&["CONFIG", "GET", "maxmemory-[ps]*"], config_pairs);
    d.cmd_with(&["CONFIG", "GET", "*policy"], config_pairs);
    d.cmd_with(
        &["CONFIG", "GET", "hz", "HZ", "cluster-enabled", "nosuch"],
        config_pairs,
    );
}

// ------------------------------------------------------------------ INFO

/// The section headers of an INFO reply, without the sections one server
/// has by design (Firn's `# Storage`; Redis's `# Latencystats`).
fn info_headers(r: &R) -> R {
    let text = r.as_str().unwrap_or_default();
    let headers: Vec<R> = text
        .lines()
        .filter(|l| l.starts_with('#'))
        .filter(|l| !matches!(*l, "# Storage" | "# Latencystats"))
        .map(|l| R::Simple(l.to_string()))
        .collect();
    R::Array(Some(headers))
}

#[test]
fn info_selects_several_sections_and_the_aliases() {
    let mut d = Diff::new();
    for args in [
        &[][..],
        &["default"],
        &["all"],
        &["everything"],
        &["server", "clients"],
        &["keyspace", "server", "keyspace"],
        &["commandstats"],
        &["errorstats"],
        &["nosuch"],
        &["server", "nosuch"],
        &["all", "commandstats"],
        &["default", "commandstats"],
        &["SERVER", "Keyspace"],
        &["modules", "cluster"],
    ] {
        let mut cmd = vec!["INFO"];
        cmd.extend_from_slice(args);
        d.cmd_with(&cmd, info_headers);
    }
}

/// `name:field=value,...` lines of an INFO section, with the fields that
/// hold times (`usec`, `usec_per_call`) reduced to their format.
fn stat_lines(r: &R) -> R {
    let text = r.as_str().unwrap_or_default();
    let mut lines: Vec<String> = Vec::new();
    for l in text.lines().filter(|l| !l.is_empty()) {
        let Some((name, fields)) = l.split_once(':') else {
            lines.push(l.to_string());
            continue;
        };
        let fields: Vec<String> = fields
            .split(',')
            .map(|f| match f.split_once('=') {
                Some(("usec", v)) => format!("usec={}", shape(v, false)),
                Some(("usec_per_call", v)) => format!("usec_per_call={}", shape(v, true)),
                _ => f.to_string(),
            })
            .collect();
        lines.push(format!("{name}:{}", fields.join(",")));
    }
    lines.sort();
    R::Array(Some(lines.into_iter().map(R::Simple).collect()))
}

/// "int" or "2-decimals" if `v` is a number of that shape.
fn shape(v: &str, decimals: bool) -> &'static str {
    let ok = match (decimals, v.split_once('.')) {
        (true, Some((whole, frac))) => {
            whole.parse::<u64>().is_ok() && frac.len() == 2 && frac.parse::<u64>().is_ok()
        }
        (false, None) => v.parse::<u64>().is_ok(),
        _ => false,
    };
    match (ok, decimals) {
        (true, true) => "<2-decimals>",
        (true, false) => "<int>",
        _ => "<malformed>",
    }
}

#[test]
fn commandstats_and_errorstats_count_as_redis_does() {
    let mut d = Diff::new();
    d.cmd(&["CONFIG", "RESETSTAT"]);
    d.cmd_with(&["INFO", "commandstats"], stat_lines);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["GET", "a", "b"]); // rejected: arity
    d.cmd(&["INCR", "a"]);
    d.cmd(&["SET", "a", "x"]);
    d.cmd(&["INCR", "a"]); // failed
    d.cmd(&["CONFIG", "GET", "timeout"]);
    d.cmd(&["CONFIG", "FOO"]); // unknown subcommand: no command to count
    d.cmd(&["CONFIG"]); // rejected: arity of the container
    d.cmd(&["NOSUCH"]); // unknown command
    d.cmd(&["AUTH", "x"]); // failed
    d.cmd(&["CLIENT", "KILL", "ID", "abc"]); // failed
    d.cmd(&["SETBIT", "b", "1", "1"]);
    d.cmd(&["OBJECT", "ENCODING", "a"]);
    d.cmd_with(&["INFO", "commandstats"], stat_lines);
    d.cmd_with(&["INFO", "errorstats"], stat_lines);
    d.cmd(&["WRONGTYPE-NOT-A-COMMAND"]);
    d.cmd(&["SET", "a", "1", "EX", "0"]);
    d.cmd_with(&["INFO", "errorstats"], stat_lines);
    // total_commands_processed counts only commands that ran.
    d.cmd_with(&["INFO", "stats"], |r| {
        let text = r.as_str().unwrap_or_default();
        let lines: Vec<R> = text
            .lines()
            .filter(|l| {
                l.starts_with("total_commands_processed:") || l.starts_with("total_error_replies:")
            })
            .map(|l| R::Simple(l.to_string()))
            .collect();
        R::Array(Some(lines))
    });
    // CONFIG RESETSTAT empties both sections (and is then counted).
    d.cmd(&["CONFIG", "RESETSTAT"]);
    d.cmd_with(&["INFO", "commandstats"], stat_lines);
    d.cmd_with(&["INFO", "errorstats"], stat_lines);
}

/// A client pair's ids, one on each server.
fn client_ids(d: &mut Diff, client: usize) -> (String, String) {
    d.use_client(client);
    let ids = d.cmd_type_only(&["CLIENT", "ID"]);
    let (Some(redis_id), Some(firn_id)) = (ids.0.as_int(), ids.1.as_int()) else {
        panic!("CLIENT ID: {ids:?}");
    };
    (redis_id.to_string(), firn_id.to_string())
}

/// CLIENT UNBLOCK `ids` (a client pair's, from [`client_ids`]) with `how`,
/// from client 0; compares the replies.
fn unblock(d: &mut Diff, ids: &(String, String), how: &str) {
    d.use_client(0);
    let pair = d.client();
    assert_eq!(
        pair.redis.cmd(&["CLIENT", "UNBLOCK", &ids.0, how]),
        pair.firn.cmd(&["CLIENT", "UNBLOCK", &ids.1, how])
    );
}

/// A blocked command ended by CLIENT UNBLOCK counts as a failed call,
/// with TIMEOUT as with ERROR (Redis 7.0's updateStatsOnUnblock), and
/// CLIENT UNBLOCK ... ERROR itself fails too (an error reply went out
/// while it ran); a blocked command that times out or is served does not.
#[test]
fn commandstats_count_a_blocked_command_ended_by_client_unblock_as_failed() {
    let mut d = Diff::new();
    let waiter = d.open_client();
    let ids = client_ids(&mut d, waiter);
    d.use_client(0);
    d.cmd(&["CONFIG", "RESETSTAT"]);
    let waits: &[&[&str]] = &[
        &["BLPOP", "q", "0"],
        &["BZPOPMIN", "z", "0"],
        &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
        &["BLMOVE", "q", "d", "LEFT", "RIGHT", "0"],
    ];
    for wait in waits {
        for how in ["ERROR", "TIMEOUT"] {
            d.use_client(waiter);
            d.send(wait);
            d.wait_blocked(0, 0, 1);
            unblock(&mut d, &ids, how);
            d.use_client(waiter);
            d.read_both();
        }
    }
    // Not blocked: nothing to unblock, nothing failed.
    unblock(&mut d, &ids, "ERROR");
    // A wait that times out, one that is served.
    d.use_client(waiter);
    d.cmd(&["BLPOP", "q", "0.01"]);
    d.send(&["BLPOP", "q", "0"]);
    d.wait_blocked(0, 0, 1);
    d.cmd(&["RPUSH", "q", "x"]);
    d.use_client(waiter);
    d.read_both();
    d.use_client(0);
    d.cmd_with(&["INFO", "commandstats"], stat_lines);
    d.cmd_with(&["INFO", "errorstats"], stat_lines);
}

// ------------------------------------------------------------------ SLOWLOG

#[test]
fn slowlog_trims_long_commands_and_get_minus_one_returns_all() {
    let mut d = Diff::new();
    d.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    d.cmd(&["SLOWLOG", "RESET"]);
    d.cmd(&["CLIENT", "SETNAME", "slow"]);
    // 33 arguments: 31 kept, then "... (2 more arguments)".
    let mut mset = vec!["MSET".to_string()];
    for i in 0..16 {
        mset.push(format!("k{i}"));
        mset.push(format!("v{i}"));
    }
    d.cmd(&mset);
    // Exactly 32 arguments are kept whole.
    let mut exact = vec!["DEL".to_string()];
    exact.extend((0..31).map(|i| format!("k{i}")));
    d.cmd(&exact);
    // Arguments longer than 128 bytes are cut, with the count of the rest.
    let long = "x".repeat(200);
    let just = "y".repeat(128);
    d.cmd(&["SET", "long", &long]);
    d.cmd(&["SET", &just, "v"]);
    // A command that fails still ran, so it is logged too.
    d.cmd(&["INCR", &long]);
    d.cmd_with(&["SLOWLOG", "GET", "-1"], slowlog_normalised);
    d.cmd_with(&["SLOWLOG", "GET", "2"], slowlog_normalised);
    d.cmd_with(&["SLOWLOG", "GET", "0"], slowlog_normalised);
    d.cmd(&["SLOWLOG", "GET", "-2"]);
    d.cmd(&["SLOWLOG", "GET", "abc"]);
    d.cmd(&["SLOWLOG", "GET", "1", "2"]);
    d.cmd(&["SLOWLOG", "LEN"]);
    // Rejected commands (arity, unknown) did not run: not logged.
    d.cmd(&["SLOWLOG", "RESET"]);
    d.cmd(&["GET"]);
    d.cmd(&["NOSUCH"]);
    d.cmd_with(&["SLOWLOG", "GET", "-1"], slowlog_normalised);
    // The slow log keeps at most slowlog-max-len entries.
    d.cmd(&["CONFIG", "SET", "slowlog-max-len", "3"]);
    for i in 0..5 {
        d.cmd(&["ECHO", &i.to_string()]);
    }
    d.cmd_with(&["SLOWLOG", "GET", "-1"], slowlog_normalised);
    d.cmd(&["SLOWLOG", "LEN"]);
}

// ------------------------------------------------------------------ CLIENT KILL / LIST

#[test]
fn client_kill_argument_errors() {
    let mut d = Diff::new();
    for args in [
        &["1.2.3.4:5"][..],
        &["id"],
        &["id", "abc"],
        &["id", "0"],
        &["id", "-1"],
        &["id", "999999"],
        &["foo", "bar"],
        &["maxage", "10"],
        &["user", "bob"],
        &["user", "default"],
        &["type", "foo"],
        &["type", "Foo"],
        &["type", "pubsub"],
        &["type", "master"],
        &["skipme", "maybe"],
        &["skipme", "yes"],
        &["id", "1", "foo"],
        &["addr", "x", "laddr", "y"],
        &["id", "abc", "foo", "bar"],
        &["foo", "bar", "id", "abc"],
        &["ID", "1", "USER", "bob"],
        &["USER", "bob", "ID", "0"],
    ] {
        let mut cmd = vec!["CLIENT", "KILL"];
        cmd.extend_from_slice(args);
        d.cmd(&cmd);
    }
    d.cmd(&["CLIENT", "KILL"]);
    d.cmd(&["PING"]);
}

#[test]
fn client_list_id_and_type_errors() {
    let mut d = Diff::new();
    for args in [
        &["id", "abc"][..],
        &["id", "0"],
        &["id", "-5"],
        &["id", "1", "2", "abc"],
        &["type", "foo"],
        &["type", "replica"],
        &["type", "slave"],
        &["type", "master"],
        &["foo"],
        &["id"],
        &["type"],
        &["type", "normal", "x"],
    ] {
        let mut cmd = vec!["CLIENT", "LIST"];
        cmd.extend_from_slice(args);
        d.cmd(&cmd);
    }
}

/// `field=value` of one CLIENT INFO line.
fn client_field(r: &R, field: &str) -> String {
    let text = r.as_str().unwrap_or_default();
    text.split_whitespace()
        .find_map(|f| f.strip_prefix(&format!("{field}=")))
        .unwrap_or_default()
        .to_string()
}

/// Redis's "CLIENT KILL SKIPME YES/NO will kill all clients": killing
/// itself, a client still gets its reply, then the connection closes.
#[test]
fn client_kill_skipme_no_replies_before_closing_the_caller() {
    let mut d = Diff::new();
    let other = d.open_client();
    // Once it has answered, the other connection is surely registered.
    d.use_client(other);
    d.cmd(&["PING"]);
    d.use_client(0);
    d.cmd_type_only(&["CLIENT", "KILL", "SKIPME", "yes"]);
    d.use_client(other);
    d.assert_closed_both();
    d.use_client(0);
    d.cmd(&["PING"]);
    d.cmd_type_only(&["CLIENT", "KILL", "SKIPME", "no"]);
    d.assert_closed_both();
}

#[test]
fn client_kill_closes_the_named_client() {
    let mut d = Diff::new();
    let victim = d.open_client();
    d.use_client(victim);
    let pair = d.client();
    let redis_info = pair.redis.cmd(&["CLIENT", "INFO"]);
    let firn_info = pair.firn.cmd(&["CLIENT", "INFO"]);
    d.use_client(0);
    // Old form, by address.
    let pair = d.client();
    let r = pair
        .redis
        .cmd(&["CLIENT", "KILL", &client_field(&redis_info, "addr")]);
    let f = pair
        .firn
        .cmd(&["CLIENT", "KILL", &client_field(&firn_info, "addr")]);
    assert_eq!(r.encode(), f.encode(), "redis {r:?} firn {f:?}");
    d.use_client(victim);
    d.assert_closed_both();
    // New form: ID, and ID with ADDR that does not match.
    d.reconnect();
    let pair = d.client();
    let redis_id = pair.redis.cmd(&["CLIENT", "ID"]).as_int().unwrap_or(-1);
    let firn_id = pair.firn.cmd(&["CLIENT", "ID"]).as_int().unwrap_or(-1);
    d.use_client(0);
    let pair = d.client();
    for extra in [&["ADDR", "1.2.3.4:5"][..], &[]] {
        let kill = |id: i64| {
            let mut cmd = vec!["CLIENT".to_string(), "KILL".into(), "ID".into()];
            cmd.push(id.to_string());
            cmd.extend(extra.iter().map(|s| s.to_string()));
            cmd
        };
        let send = |conn: &mut Conn, cmd: Vec<String>| {
            let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
            conn.cmd(&args)
        };
        let r = send(&mut pair.redis, kill(redis_id));
        let f = send(&mut pair.firn, kill(firn_id));
        assert_eq!(r.encode(), f.encode(), "redis {r:?} firn {f:?}");
    }
    d.use_client(victim);
    d.assert_closed_both();
    // SKIPME no lets a client kill itself; it gets its reply first.
    d.use_client(0);
    let pair = d.client();
    let r = pair.redis.cmd(&[
        "CLIENT",
        "KILL",
        "USER",
        "default",
        "SKIPME",
        "no",
        "LADDR",
        "0.0.0.0:1",
    ]);
    let f = pair.firn.cmd(&[
        "CLIENT",
        "KILL",
        "USER",
        "default",
        "SKIPME",
        "no",
        "LADDR",
        "0.0.0.0:1",
    ]);
    assert_eq!(r.encode(), f.encode(), "redis {r:?} firn {f:?}");
    d.cmd(&["PING"]);
}

// ------------------------------------------------------------------ OBJECT IDLETIME

/// OBJECT IDLETIME as "recent" (under 2 s) or "idle" (2 s or more): the
/// clock ticks in whole seconds on both servers, at different instants.
fn idle_class(r: &R) -> R {
    match r.as_int() {
        Some(n) if n < 2 => R::Simple("recent".into()),
        Some(_) => R::Simple("idle".into()),
        None => r.clone(),
    }
}

/// Polls (OBJECT IDLETIME does not touch) until both servers report every
/// key idle for at least 2 s; gives up after 10 s.
fn wait_until_idle(d: &mut Diff, keys: &[&str]) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let pair = d.client();
    loop {
        let idle = |conn: &mut Conn, key: &str| {
            conn.cmd(&["OBJECT", "IDLETIME", key])
                .as_int()
                .is_some_and(|n| n >= 2)
        };
        let all = keys
            .iter()
            .all(|k| idle(&mut pair.redis, k) && idle(&mut pair.firn, k));
        if all {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "keys {keys:?} did not become idle on both servers"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn object_idletime_counts_from_the_last_access() {
    let mut d = Diff::new();
    // Not small integers: Redis shares one object (and its access time)
    // between all keys holding the same integer below 10000.
    d.cmd(&["SET", "a", "va"]);
    d.cmd(&["SET", "b", "vb"]);
    d.cmd(&["SET", "c", "vc"]);
    d.cmd(&["SET", "e", "ve"]);
    d.cmd_with(&["OBJECT", "IDLETIME", "a"], idle_class);
    d.cmd(&["OBJECT", "IDLETIME", "missing"]);
    d.cmd(&["OBJECT", "IDLETIME"]);
    wait_until_idle(&mut d, &["a", "b", "c", "e"]);
    // Commands that look keys up without touching them (LOOKUP_NOTOUCH).
    for cmd in [
        &["TYPE", "a"][..],
        &["TTL", "a"],
        &["PTTL", "a"],
        &["EXPIRETIME", "a"],
        &["PEXPIRETIME", "a"],
        &["EXISTS", "a", "b"],
        &["OBJECT", "ENCODING", "a"],
        &["OBJECT", "REFCOUNT", "a"],
        &["OBJECT", "FREQ", "a"],
    ] {
        d.cmd(cmd);
    }
    // Commands refused before their key was looked up do not touch it.
    d.cmd(&["SET", "e", "v", "FOO"]);
    d.cmd(&["INCRBY", "e", "notanumber"]);
    d.cmd_with(&["OBJECT", "IDLETIME", "a"], idle_class);
    d.cmd_with(&["OBJECT", "IDLETIME", "e"], idle_class);
    // Reads, writes and TOUCH do.
    d.cmd(&["GET", "b"]);
    d.cmd(&["TOUCH", "c", "missing"]);
    d.cmd(&["APPEND", "a", "x"]);
    for key in ["a", "b", "c"] {
        d.cmd_with(&["OBJECT", "IDLETIME", key], idle_class);
    }
    // A deleted and re-created key starts afresh.
    d.cmd(&["DEL", "e"]);
    d.cmd(&["SET", "e", "again"]);
    d.cmd_with(&["OBJECT", "IDLETIME", "e"], idle_class);
}

// ------------------------------------------------------------------ helpers used above

#[test]
fn stat_lines_keeps_counts_and_hides_times() {
    let r = R::Bulk(Some(
        b"# Commandstats\r\ncmdstat_get:calls=2,usec=17,usec_per_call=8.50,rejected_calls=1,failed_calls=0\r\n"
            .to_vec(),
    ));
    let lines = stat_lines(&r);
    let texts: BTreeMap<usize, String> = lines
        .items()
        .iter()
        .enumerate()
        .map(|(i, l)| (i, l.as_str().unwrap_or_default()))
        .collect();
    assert_eq!(
        texts.values().cloned().collect::<Vec<_>>(),
        [
            "# Commandstats",
            "cmdstat_get:calls=2,usec=<int>,usec_per_call=<2-decimals>,rejected_calls=1,failed_calls=0"
        ]
    );
    assert_eq!(shape("8.5", true), "<malformed>");
}

// ------------------------------------------------------------------ rdb_changes_since_last_save

#[test]
fn changes_since_last_save_count_only_real_changes() {
    let mut d = Diff::new();
    let steps: &[&[&str]] = &[
        &["SET", "k", "v"],
        &["SET", "k", "v", "NX"],
        &["SET", "k", "w", "XX"],
        &["SET", "n", "v", "XX"],
        &["SET", "k", "x", "GET"],
        &["SET", "k", "y", "NX", "GET"],
        &["SET", "k", "y", "XX", "GET"],
        &["SET", "k", "v", "FOO"],
        &["SETNX", "k", "v"],
        &["SETNX", "k2", "v"],
        &["SETBIT", "b", "1", "1"],
        &["SETBIT", "b", "1", "1"],
        &["SETBIT", "b", "1", "0"],
        &["DEL", "nokey"],
        &["DEL", "k2", "nokey"],
        &["INCRBY", "i", "5"],
        &["INCR", "k"],
        &["INCRBYFLOAT", "f", "1.5"],
        &["MSET", "a", "1", "b2", "2", "c", "3"],
        &["MSETNX", "a", "1", "z", "2"],
        &["MSETNX", "y", "1", "z", "2"],
        &["APPEND", "k", "x"],
        &["SETRANGE", "k", "0", ""],
        &["SETRANGE", "k", "0", "z"],
        &["GETDEL", "nokey"],
        &["GETDEL", "z"],
        &["GETEX", "k"],
        &["GETEX", "k", "EX", "100"],
        &["GETSET", "k", "v"],
        &["EXPIRE", "k", "100"],
        &["EXPIRE", "nokey", "100"],
        &["PERSIST", "k"],
        &["PERSIST", "k"],
        &["RENAME", "k", "k"],
        &["RENAME", "k", "k3"],
        &["RENAMENX", "k3", "a"],
        &["COPY", "k3", "k4"],
        &["COPY", "k3", "k4"],
        &["MOVE", "k4", "1"],
        &["BITOP", "AND", "d1", "b", "nokey"],
        &[
            "BITFIELD", "bf", "SET", "u8", "0", "1", "GET", "u8", "0", "INCRBY", "u8", "0", "1",
        ],
        &[
            "BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300",
        ],
        &["SETEX", "e", "100", "v"],
        &["TOUCH", "a", "b2"],
        // A script's writes count as the commands it ran.
        &["EVAL", "redis.call('SET', KEYS[1], 'v') redis.call('SET', KEYS[1], 'w', 'NX') return redis.call('INCR', KEYS[2])", "2", "s1", "s2"],
        &["EVAL", "return redis.call('GET', KEYS[1])", "1", "s1"],
        &["FLUSHDB"],
        &["SET", "k", "v"],
        &["FLUSHALL"],
    ];
    for step in steps {
        d.cmd(step);
        d.cmd_with(&["INFO", "persistence"], info::changes_since_save);
    }
}

// ------------------------------------------------------------------ COMMAND GETKEYS by key specs

#[test]
fn command_getkeys_follows_key_specs_of_any_command() {
    let mut d = Diff::new();
    for line in [
        "SORT k",
        "SORT k BY w GET x STORE d LIMIT 0 1 STORE e",
        "SORT k LIMIT store d",
        "SORT k STORE",
        "SORT_RO k BY x GET y",
        "ZUNIONSTORE d 2 a b WEIGHTS 1 2",
        "ZUNIONSTORE d 0 a",
        "ZUNIONSTORE d 3 a b",
        "ZUNIONSTORE d x a",
        "ZINTER 2 a b WITHSCORES",
        "ZDIFFSTORE d 1 a",
        "EVAL s 2 k1 k2 a1",
        "EVAL s 0",
        "EVAL s 0 a b",
        "EVAL s 3 k1",
        "EVAL s -1 k1",
        "EVALSHA_RO s 1 k",
        "FCALL f 2 a b c",
        "XREAD COUNT 2 STREAMS s1 s2 0 0",
        "XREAD STREAMS s1 s2 s3",
        "XREAD COUNT 1 s1",
        "XREADGROUP GROUP g c STREAMS s 0",
        "GEORADIUS g 0 0 1 km STORE d",
        "GEORADIUS g 0 0 1 km STOREDIST d STORE e",
        "GEORADIUS g 0 0 1 km STORE",
        "GEORADIUSBYMEMBER g m 1 km STOREDIST d",
        "GEORADIUS_RO g 0 0 1 km",
        "MIGRATE h 1 k 0 5",
        "MIGRATE h 1 \"\" 0 5 COPY AUTH2 u p KEYS a b",
        "MIGRATE h 1 k 0 5 KEYS a",
        "LMPOP 2 a b LEFT",
        "BLMPOP 0 1 a LEFT",
        "ZMPOP 1 z MIN",
        "SINTERCARD 2 a b LIMIT 1",
        "XINFO STREAM s",
        "XINFO HELP",
        "XGROUP CREATE s g $",
        "MEMORY USAGE k",
        "OBJECT ENCODING k",
        "HSET h f v",
        "LPUSH l a b",
        "PUBLISH c m",
        "PFCOUNT a b c",
        "RPOPLPUSH a b",
        "BLPOP a b 0",
        "SMOVE a b m",
        "GEOADD g 0 0 m",
        "WATCH a b",
        "SET k v GET",
        "BITFIELD_RO k GET u8 0",
        "CLIENT CACHING yes",
        "XINFO NOSUCH s",
        "NOSUCH k",
        "HSET h f",
        "ZUNIONSTORE d",
    ] {
        let mut args: Vec<String> = vec!["COMMAND".into(), "GETKEYS".into()];
        args.extend(line.split(' ').map(|w| {
            if w == "\"\"" {
                String::new()
            } else {
                w.to_string()
            }
        }));
        d.cmd(&args);
        args[1] = "GETKEYSANDFLAGS".into();
        d.cmd(&args);
    }
}

#[test]
fn command_list_filters_by_acl_category_and_pattern() {
    let mut d = Diff::new();
    for args in [
        &["ACLCAT", "bitmap"][..],
        &["ACLCAT", "BITMAP"],
        &["ACLCAT", "nosuchcategory"],
        &["PATTERN", "bit*"],
        &["PATTERN", "BIT*"],
        &["PATTERN", "config|*"],
        &["PATTERN", "g?t"],
        &["PATTERN", "[gm]et*"],
        &["PATTERN", "nomatch*"],
        &["MODULE", "foo"],
        &["FOO", "bar"],
    ] {
        let mut cmd = vec!["COMMAND", "LIST", "FILTERBY"];
        cmd.extend_from_slice(args);
        d.cmd_unordered(&cmd);
    }
    d.cmd(&["COMMAND", "LIST", "FILTERBY", "PATTERN"]);
    d.cmd(&["COMMAND", "LIST", "FILTERBY"]);
}

/// Parameter names of a CONFIG GET * reply.
fn config_names(r: &R) -> std::collections::BTreeSet<String> {
    r.items()
        .iter()
        .step_by(2)
        .filter_map(|name| name.as_str())
        .collect()
}

#[test]
fn config_get_star_lists_only_redis_names_and_firns_own() {
    // Firn's own options, documented in docs/configuration.md.
    const FIRN_ONLY: &[&str] = &[
        "io-queue-max",
        "writer-threads",
        "debug-cold-reads",
        "metrics-port",
        "metrics-bind",
        "cold-read-log-slower-than",
        "cold-read-log-max-len",
    ];
    let redis = Server::redis();
    let firn = Server::firn();
    let redis_names = config_names(&redis.conn().cmd(&["CONFIG", "GET", "*"]));
    let firn_names = config_names(&firn.conn().cmd(&["CONFIG", "GET", "*"]));
    assert!(redis_names.len() > 100, "{redis_names:?}");
    let unknown: Vec<&String> = firn_names
        .iter()
        .filter(|n| !redis_names.contains(*n) && !FIRN_ONLY.contains(&n.as_str()))
        .collect();
    assert!(unknown.is_empty(), "not Redis parameters: {unknown:?}");
    for common in ["maxmemory-policy", "appendonly", "save", "databases", "hz"] {
        assert!(firn_names.contains(common), "{common} missing");
    }
}

#[test]
fn client_pause_checks_the_mode_before_the_timeout() {
    let mut d = Diff::new();
    for args in [
        &["abc", "foo"][..],
        &["-1"],
        &["-1", "WRITE"],
        &["10", "write", "extra"],
        &["abc"],
        &["99999999999999999999"],
        &["0", "ALL"],
        &["0", "write"],
    ] {
        let mut cmd = vec!["CLIENT", "PAUSE"];
        cmd.extend_from_slice(args);
        d.cmd(&cmd);
    }
    d.cmd(&["CLIENT", "UNPAUSE"]);
    d.cmd(&["CLIENT", "UNPAUSE", "extra"]);
    d.cmd(&["SET", "k", "v"]);
}

// ------------------------------------------------------------------ access counts from scripts and MULTI

/// Reads a script or a transaction makes count for OBJECT FREQ as the same
/// reads alone do (`lfu-log-factor 0`: every access adds one, so the
/// counters are exact on both servers), and a command refused by the
/// script's own error does not.
#[test]
fn reads_in_scripts_and_multi_count_for_object_freq() {
    let mut d = Diff::new();
    d.cmd(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"]);
    d.cmd(&["CONFIG", "SET", "lfu-log-factor", "0"]);
    d.cmd(&["SET", "hot", "v"]);
    d.cmd(&["RPUSH", "list", "a", "b"]);
    d.cmd(&["OBJECT", "FREQ", "hot"]);
    for _ in 0..3 {
        d.cmd(&["EVAL", "return redis.call('get', KEYS[1])", "1", "hot"]);
    }
    d.cmd(&["OBJECT", "FREQ", "hot"]);
    d.cmd(&[
        "EVAL",
        "redis.call('lrange', KEYS[1], 0, -1); return redis.call('get', KEYS[2])",
        "2",
        "list",
        "hot",
    ]);
    d.cmd(&["FUNCTION", "LOAD", "#!lua name=freq\nredis.register_function('g', function(keys) return redis.call('get', keys[1]) end)"]);
    d.cmd(&["FCALL", "g", "1", "hot"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "hot"]);
    d.cmd(&["LLEN", "list"]);
    d.cmd(&["GET", "hot"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["OBJECT", "FREQ", "hot"]);
    d.cmd(&["OBJECT", "FREQ", "list"]);
    d.cmd(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
}

/// A policy switch keeps what each key's entry holds, as Redis keeps each
/// object's field: a key written just before a switch to LFU and back
/// reads idle 0, not idle since the server started (go-redis's "should
/// ObjectFreq" then "should ObjectIdleTime").
#[test]
fn object_idletime_survives_a_switch_to_lfu_and_back() {
    let mut d = Diff::new();
    // Up for 2 s at least, so that "idle since the start" would show.
    d.cmd(&["SET", "other", "x"]);
    wait_until_idle(&mut d, &["other"]);
    d.cmd(&["SET", "key", "hello"]);
    d.cmd(&["CONFIG", "SET", "maxmemory-policy", "volatile-lfu"]);
    // Redis reads its LRU clock's bits as a counter and a minute (mostly
    // decayed to 0); Firn reads a time as a new key's counter.
    d.cmd_type_only(&["OBJECT", "FREQ", "key"]);
    d.cmd(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
    d.cmd_with(&["OBJECT", "IDLETIME", "key"], idle_class);
    d.cmd_with(&["OBJECT", "IDLETIME", "other"], idle_class);
}
