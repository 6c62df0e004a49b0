//! Differential tests of the server commands against redis-server 7.0.15:
//! DBSIZE, FLUSHDB/FLUSHALL, TIME, LASTSAVE, CONFIG GET/SET, COMMAND
//! COUNT/INFO/GETKEYS/DOCS, SLOWLOG and INFO.
//!
//! Normalised: values that differ by construction (port, dir, times, ids,
//! INFO contents beyond the section headers and the keyspace lines, the
//! `avg_ttl` estimate) are blanked or compared by shape only.

use firn_testkit::{reply::assert_err, Diff, Server, R};
use std::collections::BTreeSet;

// ------------------------------------------------------------------ DBSIZE / FLUSHDB / FLUSHALL

#[test]
fn dbsize_counts_keys_of_the_selected_db() {
    let mut d = Diff::new();
    d.cmd(&["DBSIZE"]);
    d.cmd(&["MSET", "a", "1", "b", "2", "c", "3"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["DEL", "a"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["SELECT", "4"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["SET", "x", "1"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["DBSIZE", "extra"]);
}

#[test]
fn flushdb_empties_only_the_selected_db() {
    let mut d = Diff::new();
    d.cmd(&["MSET", "a", "1", "b", "2"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["SET", "c", "3"]);
    d.cmd(&["FLUSHDB"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["FLUSHDB", "SYNC"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["FLUSHDB", "ASYNC"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["flushdb", "async"]);
    d.cmd(&["GET", "a"]);
}

#[test]
fn flushall_empties_every_db() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["SELECT", "9"]);
    d.cmd(&["SET", "b", "2", "EX", "100"]);
    d.cmd(&["FLUSHALL"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["FLUSHALL", "ASYNC"]);
    d.cmd(&["EXISTS", "a"]);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["FLUSHALL", "SYNC"]);
    d.cmd(&["EXISTS", "a"]);
}

#[test]
fn flush_syntax_errors() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "1"]);
    let r = d.cmd(&["FLUSHALL", "FOO"]);
    assert_err(&r, "ERR syntax error");
    d.cmd(&["FLUSHDB", "FOO"]);
    d.cmd(&["FLUSHDB", "ASYNC", "SYNC"]);
    d.cmd(&["FLUSHALL", "SYNC", "ASYNC"]);
    d.cmd(&["FLUSHALL", "ASYNC", "extra"]);
    d.cmd(&["DBSIZE"]);
}

// ------------------------------------------------------------------ TIME / LASTSAVE

#[test]
fn time_is_seconds_and_microseconds() {
    let mut d = Diff::new();
    let (r, f) = d.cmd_type_only(&["TIME"]);
    let secs = |x: &R| {
        x.items()
            .first()
            .and_then(R::as_str)
            .and_then(|s| s.parse::<i64>().ok())
            .unwrap_or(-1)
    };
    assert!(
        (secs(&r) - secs(&f)).abs() <= 2,
        "{} vs {}",
        r.render(),
        f.render()
    );
    let micros = f
        .items()
        .get(1)
        .and_then(R::as_str)
        .and_then(|s| s.parse::<i64>().ok())
        .unwrap_or(-1);
    assert!((0..1_000_000).contains(&micros), "{}", f.render());
    d.cmd(&["TIME", "extra"]);
}

#[test]
fn lastsave_is_an_integer() {
    let mut d = Diff::new();
    d.cmd_type_only(&["LASTSAVE"]);
    d.cmd(&["LASTSAVE", "extra"]);
}

// ------------------------------------------------------------------ CONFIG

#[test]
fn config_get_options_with_equal_values() {
    let mut d = Diff::new();
    for name in [
        "databases",
        "maxclients",
        "timeout",
        "tcp-backlog",
        "tcp-keepalive",
        "appendfsync",
        "slowlog-log-slower-than",
        "slowlog-max-len",
        "proto-max-bulk-len",
        "client-query-buffer-limit",
        "protected-mode",
        "requirepass",
        "maxmemory",
        "loglevel",
        "bind",
        "DATABASES",
        "nosuchoption",
    ] {
        d.cmd(&["CONFIG", "GET", name]);
    }
}

#[test]
fn config_get_patterns_and_multiple_arguments() {
    let mut d = Diff::new();
    d.cmd_with(&["CONFIG", "GET", "slowlog*"], R::pairs_sorted);
    d.cmd_with(&["CONFIG", "GET", "tcp-*"], R::pairs_sorted);
    d.cmd_with(&["CONFIG", "GET", "data?ases"], R::pairs_sorted);
    d.cmd_with(
        &["CONFIG", "GET", "databases", "maxclients", "timeout"],
        R::pairs_sorted,
    );
    d.cmd_with(
        &["CONFIG", "GET", "databases", "databases", "data*"],
        R::pairs_sorted,
    );
    d.cmd(&["CONFIG", "GET", "nomatch*"]);
    d.cmd(&["CONFIG", "GET"]);
}

#[test]
fn config_get_port_and_dir_exist() {
    let mut d = Diff::new();
    let blank_values = |r: &R| match r {
        R::Array(Some(items)) => R::Array(Some(
            items
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    if i % 2 == 1 {
                        R::Simple("<value>".into())
                    } else {
                        x.clone()
                    }
                })
                .collect(),
        ))
        .pairs_sorted(),
        other => other.clone(),
    };
    d.cmd_with(&["CONFIG", "GET", "port"], blank_values);
    d.cmd_with(&["CONFIG", "GET", "dir"], blank_values);
    d.cmd_with(&["CONFIG", "GET", "port", "dir"], blank_values);
}

#[test]
fn config_get_in_resp3_is_a_map() {
    let mut d = Diff::new();
    d.cmd_with(&["HELLO", "3"], |r| {
        R::Simple(format!("{}", matches!(r, R::Map(_))))
    });
    d.cmd_with(&["CONFIG", "GET", "databases"], R::sorted);
    d.cmd_with(&["CONFIG", "GET", "slowlog*"], R::sorted);
    d.cmd(&["CONFIG", "GET", "nomatch"]);
}

#[test]
fn config_set_changes_mutable_options() {
    let mut d = Diff::new();
    d.cmd(&["CONFIG", "SET", "slowlog-max-len", "256"]);
    d.cmd(&["CONFIG", "GET", "slowlog-max-len"]);
    d.cmd(&["CONFIG", "SET", "timeout", "100"]);
    d.cmd(&["CONFIG", "GET", "timeout"]);
    d.cmd(&[
        "CONFIG",
        "SET",
        "slowlog-log-slower-than",
        "5000",
        "slowlog-max-len",
        "64",
    ]);
    d.cmd_with(&["CONFIG", "GET", "slowlog*"], R::pairs_sorted);
    d.cmd(&["CONFIG", "SET", "maxmemory", "10mb"]);
    d.cmd(&["CONFIG", "GET", "maxmemory"]);
    d.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
    d.cmd(&["CONFIG", "SET", "SLOWLOG-MAX-LEN", "100"]);
    d.cmd(&["CONFIG", "GET", "slowlog-max-len"]);
}

#[test]
fn config_set_errors() {
    let mut d = Diff::new();
    let r = d.cmd(&["CONFIG", "SET", "foo", "bar"]);
    assert_err(
        &r,
        "ERR Unknown option or number of arguments for CONFIG SET - 'foo'",
    );
    d.cmd(&["CONFIG", "SET", "maxclients", "abc"]);
    d.cmd(&["CONFIG", "SET", "timeout", "-1"]);
    d.cmd(&["CONFIG", "SET", "databases", "20"]);
    d.cmd(&["CONFIG", "SET", "appendfsync", "sometimes"]);
    d.cmd(&["CONFIG", "SET", "protected-mode", "maybe"]);
    d.cmd(&["CONFIG", "SET", "slowlog-max-len"]);
    d.cmd(&["CONFIG", "SET", "slowlog-max-len", "1", "timeout"]);
    d.cmd(&["CONFIG", "SET", "timeout", "1", "timeout", "2"]);
    d.cmd(&["CONFIG", "SET", "timeout", "5", "foo", "1"]);
    d.cmd(&["CONFIG", "GET", "timeout"]);
    d.cmd(&["CONFIG", "SET"]);
    d.cmd(&["CONFIG", "FOO"]);
    d.cmd(&["CONFIG"]);
}

#[test]
fn config_resetstat_replies_ok() {
    let mut d = Diff::new();
    d.cmd(&["CONFIG", "RESETSTAT"]);
    d.cmd(&["CONFIG", "RESETSTAT", "extra"]);
}

#[test]
fn client_output_buffer_limit_config_syntax() {
    let mut d = Diff::new();
    d.cmd(&["CONFIG", "GET", "client-output-buffer-limit"]);
    for value in [
        "normal 1mb 0 0",
        "slave 1k 2kb 3 pubsub 1 2 3",
        "replica 256mb 64mb 60",
        "",
        "normal 1mb 2mb",
        "foo 1mb 2mb 3",
        "normal -1 0 0",
        "normal 1 0 x",
        "normal 1gb 1GB 10 pubsub 0 0 0",
    ] {
        d.cmd(&["CONFIG", "SET", "client-output-buffer-limit", value]);
        d.cmd(&["CONFIG", "GET", "client-output-buffer-limit"]);
    }
}

// ------------------------------------------------------------------ COMMAND

/// The subcommands Firn serves beyond Redis 7.0's table (Redis 7.2's
/// CLIENT NO-TOUCH and SETINFO, Firn's own MEMORY TIERS and SLOWLOG COLD*).
const FIRN_ONLY_SUBCOMMANDS: &[&str] = &[
    "client|no-touch",
    "client|setinfo",
    "memory|tiers",
    "slowlog|coldget",
    "slowlog|coldlen",
    "slowlog|coldreset",
];

/// A COMMAND (or COMMAND INFO) reply as a set: entries sorted by name, each
/// one's subcommands sorted, Firn's own subcommands left out (Redis lists
/// its dictionary in hash order).
fn command_table(r: &R) -> R {
    fn entry(e: &R) -> R {
        let mut fields = e.items().to_vec();
        if let Some(R::Array(Some(subs))) = fields.get(9) {
            let mut subs: Vec<R> = subs
                .iter()
                .filter(|s| {
                    let name = s
                        .items()
                        .first()
                        .and_then(|n| n.as_str())
                        .unwrap_or_default();
                    !FIRN_ONLY_SUBCOMMANDS.contains(&name.as_str())
                })
                .map(entry)
                .collect();
            subs.sort_by_key(|s| format!("{s:?}"));
            fields[9] = R::Array(Some(subs));
        }
        R::Array(Some(fields))
    }
    let mut entries: Vec<R> = r.items().iter().map(entry).collect();
    entries.sort_by_key(|e| format!("{e:?}"));
    R::Array(Some(entries))
}

/// COMMAND lists every command of Redis 7.0's table, served or not, as
/// Redis's COMMAND lists its whole table: redis-py's CommandsParser builds
/// its key-position table from it, so CLUSTER, MIGRATE, READONLY... are
/// there although Firn answers them as unknown commands. COMMAND COUNT,
/// LIST, INFO and DOCS list the same commands.
/// `args`' replies from both servers, uncompared.
fn both(d: &mut Diff, args: &[&str]) -> (R, R) {
    let pair = d.client();
    (pair.redis.cmd(args), pair.firn.cmd(args))
}

#[test]
fn command_lists_every_command_of_redis_table() {
    let mut d = Diff::new();
    let count = d.cmd(&["COMMAND", "COUNT"]);
    assert!(count.as_int().is_some_and(|n| n >= 240), "{count:?}");
    d.cmd(&["COMMAND", "COUNT", "extra"]);
    d.cmd_with(&["COMMAND"], command_table);
    d.cmd_with(&["COMMAND", "INFO"], command_table);
    // COMMAND LIST: Redis's names, and Firn's own subcommands besides.
    let names = |r: &R| -> BTreeSet<String> {
        r.items()
            .iter()
            .filter_map(|n| n.as_str())
            .filter(|n| !FIRN_ONLY_SUBCOMMANDS.contains(&n.as_str()))
            .collect()
    };
    // Firn lists its own subcommands too, so the lengths differ.
    let (redis_list, firn_list) = both(&mut d, &["COMMAND", "LIST"]);
    assert_eq!(names(&redis_list), names(&firn_list));
    for unserved in [
        "asking",
        "bgrewriteaof",
        "cluster",
        "cluster|info",
        "migrate",
        "readonly",
    ] {
        assert!(names(&firn_list).contains(unserved), "{unserved}");
        // Listed, yet not served: Firn answers it as an unknown command.
        let name = unserved.split('|').next().unwrap_or_default();
        let reply = d.client().firn.cmd(&[name, "x"]);
        assert!(
            format!("{reply:?}").contains("unknown command"),
            "{unserved}: {reply:?}"
        );
    }
    // COMMAND DOCS of every command: the same names (Firn writes its own
    // summaries).
    let (redis_docs, firn_docs) = both(&mut d, &["COMMAND", "DOCS"]);
    let doc_names = |r: &R| -> BTreeSet<String> {
        r.items()
            .iter()
            .step_by(2)
            .filter_map(|n| n.as_str())
            .collect()
    };
    assert_eq!(doc_names(&redis_docs), doc_names(&firn_docs));
}

#[test]
fn command_info_matches_exactly() {
    let mut d = Diff::new();
    for name in [
        "get",
        "set",
        "mset",
        "bitop",
        "object|encoding",
        "GET",
        "getex",
        "incrbyfloat",
        "lcs",
        "bitfield",
        "bitfield_ro",
        "expire",
        "copy",
        "move",
        "del",
        "scan",
        "ping",
        "echo",
        "select",
        "dbsize",
        "restore",
        "dump",
    ] {
        d.cmd(&["COMMAND", "INFO", name]);
    }
    d.cmd(&["COMMAND", "INFO", "get", "set", "nosuchcommand"]);
    d.cmd(&["COMMAND", "INFO", "nosuchcommand"]);
}

/// Drops every `summary` field (Firn writes its own summaries) from a
/// COMMAND DOCS reply in RESP2's flat key-value arrays.
fn without_summaries(r: &R) -> R {
    match r {
        R::Array(Some(items)) => {
            let mut kept = Vec::new();
            let mut i = 0;
            while i < items.len() {
                if items[i].as_str().as_deref() == Some("summary") && i + 1 < items.len() {
                    i += 2;
                    continue;
                }
                kept.push(without_summaries(&items[i]));
                i += 1;
            }
            R::Array(Some(kept))
        }
        other => other.clone(),
    }
}

/// Redis 7.0's commands Firn does not serve are described all the same
/// (clients such as redis-py read their key positions from COMMAND INFO).
#[test]
fn command_info_and_docs_describe_commands_firn_does_not_serve() {
    let mut d = Diff::new();
    for name in [
        "migrate",
        "bgrewriteaof",
        "acl|whoami",
        "ACL|GETUSER",
        "cluster|info",
    ] {
        d.cmd(&["COMMAND", "INFO", name]);
        d.cmd_with(&["COMMAND", "DOCS", name], without_summaries);
    }
    d.cmd(&[
        "COMMAND",
        "INFO",
        "migrate",
        "get",
        "acl|nosuch",
        "nosuch|x",
    ]);
    d.cmd(&[
        "COMMAND", "GETKEYS", "xread", "COUNT", "2", "STREAMS", "s1", "s2", "0", "0",
    ]);
    let pair = d.client();
    pair.firn.send(&[b"COMMAND", b"DOCS", b"migrate"]);
    let raw = String::from_utf8_lossy(&pair.firn.read_reply().0).into_owned();
    assert!(
        raw.contains("Redis 7.0's MIGRATE, which Firn does not serve yet."),
        "{raw}"
    );
}

#[test]
fn command_info_in_resp3() {
    let mut d = Diff::new();
    d.cmd_with(&["HELLO", "3"], |r| {
        R::Simple(format!("{}", matches!(r, R::Map(_))))
    });
    d.cmd(&["COMMAND", "INFO", "get", "set", "object|encoding"]);
}

#[test]
fn command_getkeys_finds_key_positions() {
    let mut d = Diff::new();
    for cmd in [
        vec!["get", "k"],
        vec!["SET", "k", "v", "EX", "10"],
        vec!["mset", "a", "1", "b", "2"],
        vec!["msetnx", "a", "1", "b", "2", "c", "3"],
        vec!["mget", "a", "b", "c"],
        vec!["bitop", "and", "dest", "a", "b"],
        vec!["del", "a", "b", "c"],
        vec!["exists", "a", "a"],
        vec!["rename", "a", "b"],
        vec!["copy", "a", "b", "db", "2"],
        vec!["move", "a", "1"],
        vec!["lcs", "a", "b", "idx"],
        vec!["object", "encoding", "k"],
        vec!["expire", "k", "10"],
        vec!["getex", "k", "persist"],
        vec!["bitfield", "k", "get", "u8", "0"],
        vec!["restore", "k", "0", "payload"],
        vec!["touch", "a", "b"],
    ] {
        let mut args = vec!["COMMAND", "GETKEYS"];
        args.extend(cmd);
        d.cmd(&args);
    }
}

#[test]
fn command_getkeys_errors() {
    let mut d = Diff::new();
    d.cmd(&["COMMAND", "GETKEYS", "ping"]);
    d.cmd(&["COMMAND", "GETKEYS", "nosuch", "a"]);
    d.cmd(&["COMMAND", "GETKEYS", "set", "k"]);
    d.cmd(&["COMMAND", "GETKEYS", "get"]);
    d.cmd(&["COMMAND", "GETKEYS", "get", "a", "b"]);
    d.cmd(&["COMMAND", "GETKEYS", "dbsize"]);
    d.cmd(&["COMMAND", "GETKEYS"]);
}

#[test]
fn command_getkeysandflags() {
    let mut d = Diff::new();
    d.cmd(&["COMMAND", "GETKEYSANDFLAGS", "set", "k", "v"]);
    d.cmd(&["COMMAND", "GETKEYSANDFLAGS", "get", "k"]);
    d.cmd(&["COMMAND", "GETKEYSANDFLAGS", "copy", "a", "b"]);
    d.cmd(&["COMMAND", "GETKEYSANDFLAGS", "bitop", "or", "d", "a", "b"]);
    d.cmd(&["COMMAND", "GETKEYSANDFLAGS", "getdel", "k"]);
    d.cmd(&["COMMAND", "GETKEYSANDFLAGS", "ping"]);
}

#[test]
fn command_docs_shape() {
    let mut d = Diff::new();
    d.cmd_type_only(&["COMMAND", "DOCS", "get"]);
    d.cmd_type_only(&["COMMAND", "DOCS", "set"]);
    d.cmd(&["COMMAND", "DOCS", "nosuchcommand"]);
}

#[test]
fn command_unknown_subcommand() {
    let mut d = Diff::new();
    d.cmd(&["COMMAND", "FOO"]);
}

// ------------------------------------------------------------------ SLOWLOG

#[test]
fn slowlog_reset_len_and_get() {
    let mut d = Diff::new();
    d.cmd_type_only(&["SLOWLOG", "LEN"]);
    d.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "-1"]);
    d.cmd(&["SLOWLOG", "RESET"]);
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["SLOWLOG", "LEN"]);
    d.cmd(&["SLOWLOG", "GET"]);
    d.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    d.cmd(&["SET", "k", "v"]);
    // The entry of the SET: id, time, duration, arguments, address, name.
    let (r, f) = d.cmd_type_only(&["SLOWLOG", "GET", "1"]);
    let args = |x: &R| x.items().first().map(|e| e.items().get(3).cloned());
    assert_eq!(args(&r), args(&f), "{}\n{}", r.render(), f.render());
    assert_eq!(
        args(&r).flatten(),
        Some(R::Array(Some(vec![
            R::bulk(b"SET"),
            R::bulk(b"k"),
            R::bulk(b"v")
        ])))
    );
    d.cmd_type_only(&["SLOWLOG", "LEN"]);
    d.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "-1"]);
    d.cmd(&["SLOWLOG", "RESET"]);
    d.cmd(&["SLOWLOG", "LEN"]);
}

#[test]
fn slowlog_errors() {
    let mut d = Diff::new();
    d.cmd(&["SLOWLOG", "FOO"]);
    d.cmd(&["SLOWLOG", "GET", "abc"]);
    d.cmd(&["SLOWLOG", "GET", "-2"]);
    d.cmd(&["SLOWLOG", "LEN", "x"]);
    d.cmd(&["SLOWLOG"]);
}

// ------------------------------------------------------------------ INFO

/// What must agree in an INFO reply: the presence of a few fixed markers,
/// CRLF line endings, and the keyspace lines with `avg_ttl` blanked.
fn info_normalised(r: &R) -> R {
    let Some(bytes) = r.as_bytes() else {
        return r.clone();
    };
    let text = String::from_utf8_lossy(bytes);
    let mut facts = Vec::new();
    for marker in ["# Server\r\n", "\r\nredis_version:", "# Keyspace\r\n"] {
        facts.push(R::Simple(format!(
            "{marker:?} present: {}",
            text.contains(marker)
        )));
    }
    let bare_lf = text.replace("\r\n", "").contains('\n');
    facts.push(R::Simple(format!("bare LF: {bare_lf}")));
    for line in text.split("\r\n").filter(|l| l.starts_with("db")) {
        let line = match line.find(",avg_ttl=") {
            Some(i) if line[i + 9..].chars().all(|c| c.is_ascii_digit()) => {
                format!("{},avg_ttl=T", &line[..i])
            }
            _ => line.to_string(),
        };
        facts.push(R::Simple(line));
    }
    R::Array(Some(facts))
}

#[test]
fn info_has_server_and_keyspace_sections() {
    let mut d = Diff::new();
    d.cmd(&["INFO", "keyspace"]);
    d.cmd_with(&["INFO"], info_normalised);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["SET", "b", "2", "EX", "100"]);
    d.cmd(&["SELECT", "3"]);
    d.cmd(&["SET", "c", "3"]);
    let r = info_normalised(&d.cmd_with(&["INFO"], info_normalised));
    assert!(
        r.items()
            .contains(&R::Simple("db0:keys=2,expires=1,avg_ttl=T".into())),
        "{}",
        r.render()
    );
    d.cmd_with(&["INFO", "keyspace"], info_normalised);
    d.cmd_with(&["INFO", "KEYSPACE"], info_normalised);
    d.cmd_with(&["INFO", "all"], info_normalised);
    d.cmd_with(&["INFO", "default"], info_normalised);
    d.cmd_with(&["INFO", "everything"], info_normalised);
    d.cmd_with(&["INFO", "server", "keyspace"], info_normalised);
}

#[test]
fn info_server_section_only() {
    let mut d = Diff::new();
    d.cmd_with(&["INFO", "server"], info_normalised);
    d.cmd(&["INFO", "nosuchsection"]);
}

// ------------------------------------------------------------------ restarts (harness helpers)

#[test]
fn restart_and_kill9_restart_keep_the_data_directory() {
    use firn_testkit::{Kind, Server};
    let mut server = Server::firn();
    let dir = server.dir();
    let mut conn = server.conn();
    assert_eq!(conn.cmd(&["SET", "durable", "yes"]), R::Simple("OK".into()));
    server.restart();
    assert_eq!(server.dir(), dir);
    let mut conn = server.conn();
    assert_eq!(conn.cmd(&["PING"]), R::Simple("PONG".into()));
    // Firn commits every write to RocksDB before replying; redis-server
    // (self-test mode) runs without persistence and forgets.
    let expected = match server.kind() {
        Kind::Firn => R::bulk(b"yes"),
        Kind::Redis => R::Bulk(None),
    };
    assert_eq!(conn.cmd(&["GET", "durable"]), expected);
    assert_eq!(
        conn.cmd(&["SET", "after-crash", "yes"]),
        R::Simple("OK".into())
    );
    server.kill9_restart();
    let mut conn = server.conn();
    let expected = match server.kind() {
        Kind::Firn => R::bulk(b"yes"),
        Kind::Redis => R::Bulk(None),
    };
    assert_eq!(conn.cmd(&["GET", "after-crash"]), expected);
}

// ------------------------------------------------------------------ MEMORY

/// MODULE: Firn loads none, and LOAD/UNLOAD fail with Redis's errors for
/// a module that cannot be loaded or is not loaded; LOLWUT names the
/// Redis version.
#[test]
fn module_and_lolwut_answer_as_redis_without_modules() {
    let mut d = Diff::new();
    d.cmd(&["MODULE", "LIST"]);
    d.cmd(&["MODULE", "LOAD", "/nonexistent/module.so"]);
    d.cmd(&["MODULE", "UNLOAD", "nosuchmodule"]);
    d.cmd(&["MODULE", "NOSUCH"]);
    d.cmd(&["MODULE"]);
    d.cmd_type_only(&["MODULE", "HELP"]);
    d.cmd(&["LOLWUT", "VERSION", "x"]);
    let flag = ["--enable-module-command", "yes"];
    let mut enabled = Diff::with_servers(Server::redis_with(&flag), Server::firn_with(&flag));
    enabled.cmd(&["MODULE", "LOAD", "/nonexistent/module.so"]);
    enabled.cmd(&["MODULE", "UNLOAD", "nosuchmodule"]);
    let pair = d.client();
    for conn in [&mut pair.redis, &mut pair.firn] {
        conn.send(&[b"LOLWUT"]);
        let text = String::from_utf8_lossy(&conn.read_reply().0).into_owned();
        assert!(text.contains("Redis ver. 7.0.15"), "{text}");
    }
}

#[test]
fn memory_usage_checks_arguments_like_redis() {
    let mut d = Diff::new();
    d.cmd(&["MEMORY", "USAGE", "nokey"]);
    d.cmd(&["HSET", "h", "a", "1", "b", "2"]);
    d.cmd(&["SET", "s", "value"]);
    for key in ["h", "s"] {
        d.cmd_type_only(&["MEMORY", "USAGE", key]);
        d.cmd_type_only(&["MEMORY", "USAGE", key, "SAMPLES", "0"]);
        d.cmd_type_only(&["MEMORY", "USAGE", key, "samples", "1", "SAMPLES", "2"]);
    }
    d.cmd(&["MEMORY", "USAGE", "h", "SAMPLES", "-1"]);
    d.cmd(&["MEMORY", "USAGE", "h", "SAMPLES", "x"]);
    d.cmd(&["MEMORY", "USAGE", "h", "SAMPLES"]);
    d.cmd(&["MEMORY", "USAGE", "h", "foo", "1"]);
    d.cmd(&["MEMORY", "USAGE", "nokey", "foo"]);
    d.cmd(&["MEMORY", "USAGE"]);
    // Redis's subcommands, each listed, and Firn's own TIERS beside them.
    let ((_, redis_help), (_, firn_help)) = d.exchange(&["MEMORY", "HELP"]);
    let subcommands = |r: &R| -> Vec<String> {
        let R::Array(Some(lines)) = r else {
            panic!("MEMORY HELP: {r:?}");
        };
        lines
            .iter()
            .filter_map(|l| match l {
                R::Simple(text) if !text.starts_with(' ') => {
                    text.split_whitespace().next().map(str::to_string)
                }
                _ => None,
            })
            .collect()
    };
    let mut firn_listed = subcommands(&firn_help);
    assert!(
        firn_listed.contains(&"TIERS".to_string()),
        "{firn_listed:?}"
    );
    firn_listed.retain(|s| s != "TIERS");
    assert_eq!(firn_listed, subcommands(&redis_help));
    d.cmd(&["MEMORY", "PURGE"]);
    d.cmd(&["MEMORY", "NOSUCH"]);
    d.cmd(&["MEMORY", "STATS", "extra"]);
    d.cmd_type_only(&["MEMORY", "DOCTOR"]);
    // The same fields in the same order (values are each server's own).
    let names = |r: &R| match r {
        R::Array(Some(items)) => items
            .chunks(2)
            .map(|pair| pair[0].as_str().unwrap_or_default())
            .collect::<Vec<_>>(),
        other => panic!("MEMORY STATS: {other:?}"),
    };
    let pair = d.client();
    let (r, f) = (
        pair.redis.cmd(&["MEMORY", "STATS"]),
        pair.firn.cmd(&["MEMORY", "STATS"]),
    );
    assert_eq!(names(&f), names(&r));
}

/// Replication's commands on a primary with no replica: the same replies
/// and error texts as redis-server, checks in Redis's order.
#[test]
fn replication_commands_without_replicas() {
    let mut d = Diff::new();
    for port in ["abc", "99999", "-1"] {
        d.cmd(&["REPLICAOF", "127.0.0.1", port]);
    }
    d.cmd(&["WAIT", "x", "0"]);
    d.cmd(&["WAIT", "0", "x"]);
    d.cmd(&["WAIT", "0", "-1"]);
    d.cmd(&["WAIT", "0", "0"]);
    d.cmd(&["WAIT", "1", "10"]);
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["WAIT", "1", "10"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "k", "v2"]);
    d.cmd(&["WAIT", "1", "0"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["ROLE"]);
    d.cmd(&["REPLCONF", "foo", "bar"]);
    d.cmd(&["REPLCONF", "foo"]);
    d.cmd(&["REPLCONF", "listening-port", "abc"]);
    d.cmd(&["REPLCONF", "listening-port", "6380"]);
    for args in [
        &["FAILOVER"][..],
        &["FAILOVER", "ABORT"],
        &["FAILOVER", "TO", "127.0.0.1", "1"],
        &["FAILOVER", "FORCE"],
        &["FAILOVER", "TIMEOUT", "0"],
        &["FAILOVER", "TIMEOUT", "-5"],
        &["FAILOVER", "TO", "127.0.0.1", "x"],
        &["FAILOVER", "ABORT", "TIMEOUT", "10"],
        &["FAILOVER", "BOGUS"],
    ] {
        d.cmd(args);
    }
}
