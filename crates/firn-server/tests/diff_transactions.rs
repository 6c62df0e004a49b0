//! Differential tests of MULTI/EXEC/DISCARD/WATCH/UNWATCH against
//! redis-server 7.0.15: every error path (nested MULTI, WATCH inside MULTI,
//! EXEC/DISCARD without MULTI, commands refused inside a transaction),
//! queue-time errors and EXECABORT, runtime errors kept in their slot,
//! WATCH/UNWATCH on one connection (own writes, expiry), CLIENT REPLY and
//! SELECT inside a transaction, RESP3, and seeded random transactions
//! mixing types on the same keys (WRONGTYPE inside EXEC included).
//!
//! `FIRN_DIFF_SEED=<n>` runs one seed only; `FIRN_DIFF_STEPS=<n>` changes
//! the number of transactions per seed.

use firn_testkit::{
    diff::slowlog_normalised,
    env::{random_seeds, random_steps},
    Diff, R,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[test]
fn errors_outside_and_inside_multi() {
    let mut d = Diff::new();
    d.cmd(&["EXEC"]);
    d.cmd(&["DISCARD"]);
    d.cmd(&["MULTI", "x"]);
    d.cmd(&["EXEC", "x"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "a", "0"]);
    d.cmd(&["EXEC", "x"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["EXISTS", "a"]);
    d.cmd(&["WATCH"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["WATCH", "a"]);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["GET", "a"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "a", "2"]);
    d.cmd(&["DISCARD"]);
    d.cmd(&["GET", "a"]);
    d.cmd(&["EXEC"]);
}

#[test]
fn queue_time_errors_abort_the_transaction() {
    let mut d = Diff::new();
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "a"]);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["NOSUCHCOMMAND", "x"]);
    d.cmd(&["CONFIG", "NOSUCHSUB"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["EXISTS", "a"]);
    // A command refused inside a transaction.
    d.cmd(&["MULTI"]);
    d.cmd(&["SAVE"]);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["EXISTS", "a"]);
    // DISCARD clears the error.
    d.cmd(&["MULTI"]);
    d.cmd(&["GET"]);
    d.cmd(&["DISCARD"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["EXEC"]);
}

#[test]
fn runtime_errors_stay_in_their_slot() {
    let mut d = Diff::new();
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "s", "x"]);
    d.cmd(&["INCR", "s"]);
    d.cmd(&["LPUSH", "s", "a"]);
    d.cmd(&["APPEND", "s", "y"]);
    d.cmd(&["HSET", "h", "f", "1"]);
    d.cmd(&["HINCRBY", "h", "f", "x"]);
    d.cmd(&["SADD", "h", "m"]);
    d.cmd(&["HGETALL", "h"]);
    d.cmd(&["GET", "s"]);
    d.cmd(&["SET", "n", "1", "EX", "-5"]);
    d.cmd(&["EXISTS", "n"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["GET", "s"]);
    d.cmd(&["TYPE", "h"]);
}

#[test]
fn empty_and_keyless_transactions() {
    let mut d = Diff::new();
    d.cmd(&["MULTI"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["PING"]);
    d.cmd(&["ECHO", "hi"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["MSET", "k1", "a", "k2", "b"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["KEYS", "k*"]);
    d.cmd_unordered_deep(&["EXEC"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["QUIT"]);
    d.assert_closed_both();
}

#[test]
fn watch_on_one_connection() {
    let mut d = Diff::new();
    d.cmd(&["SET", "w", "1"]);
    // Own write after WATCH aborts.
    d.cmd(&["WATCH", "w"]);
    d.cmd(&["SET", "w", "2"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "w"]);
    d.cmd(&["EXEC"]);
    // EXEC unwatched: the next one runs.
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "w"]);
    d.cmd(&["EXEC"]);
    // UNWATCH clears the dirty state.
    d.cmd(&["WATCH", "w", "other"]);
    d.cmd(&["INCR", "w"]);
    d.cmd(&["UNWATCH"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["INCR", "w"]);
    d.cmd(&["EXEC"]);
    // A write that changes nothing does not touch the key.
    d.cmd(&["WATCH", "w"]);
    d.cmd(&["SET", "w", "9", "NX"]);
    d.cmd(&["DEL", "missing"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "w"]);
    d.cmd(&["EXEC"]);
    // Another key, and another database, do not touch it.
    d.cmd(&["WATCH", "w"]);
    d.cmd(&["SET", "x", "1"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["SET", "w", "1"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "w"]);
    d.cmd(&["EXEC"]);
    // DISCARD unwatches too.
    d.cmd(&["WATCH", "w"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["DISCARD"]);
    d.cmd(&["SET", "w", "5"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "w"]);
    d.cmd(&["EXEC"]);
    // A missing key created, and a key deleted.
    d.cmd(&["WATCH", "fresh"]);
    d.cmd(&["SET", "fresh", "1"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["PING"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["WATCH", "fresh"]);
    d.cmd(&["DEL", "fresh"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["PING"]);
    d.cmd(&["EXEC"]);
    // A collection member written.
    d.cmd(&["RPUSH", "l", "a"]);
    d.cmd(&["WATCH", "l"]);
    d.cmd(&["RPUSH", "l", "b"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["LRANGE", "l", "0", "-1"]);
    d.cmd(&["EXEC"]);
}

#[test]
fn watch_and_flushes() {
    let mut d = Diff::new();
    d.cmd(&["SET", "w", "1"]);
    d.cmd(&["WATCH", "w"]);
    d.cmd(&["FLUSHDB"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["PING"]);
    d.cmd(&["EXEC"]);
    // A missing watched key is not touched by a flush.
    d.cmd(&["WATCH", "w"]);
    d.cmd(&["FLUSHALL"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["PING"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["SET", "w", "1"]);
    d.cmd(&["WATCH", "w"]);
    d.cmd(&["FLUSHALL"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["PING"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["SET", "w", "1"]);
    d.cmd(&["WATCH", "w"]);
    d.cmd(&["SWAPDB", "0", "1"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["PING"]);
    d.cmd(&["EXEC"]);
    // SWAPDB: a key in the other database only, then in neither.
    d.cmd(&["WATCH", "w"]);
    d.cmd(&["SWAPDB", "0", "1"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "w"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["WATCH", "nowhere"]);
    d.cmd(&["SWAPDB", "0", "1"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "w"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["SWAPDB", "0", "1"]);
}

#[test]
fn watch_and_expiry() {
    let mut d = Diff::new();
    // A key that expires after WATCH fails the EXEC.
    d.cmd(&["SET", "e", "1", "PX", "50"]);
    d.cmd(&["WATCH", "e"]);
    std::thread::sleep(std::time::Duration::from_millis(120));
    d.cmd(&["MULTI"]);
    d.cmd(&["PING"]);
    d.cmd(&["EXEC"]);
    // Setting an expire is a change.
    d.cmd(&["SET", "t", "1"]);
    d.cmd(&["WATCH", "t"]);
    d.cmd(&["EXPIRE", "t", "100"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["TTL", "t"]);
    d.cmd(&["EXEC"]);
}

#[test]
fn select_inside_multi_stays_selected() {
    let mut d = Diff::new();
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "a", "0"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["SELECT", "99"]);
    d.cmd(&["GET", "a"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["GET", "a"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["GET", "a"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["MOVE", "a", "2"]);
    d.cmd(&["SELECT", "2"]);
    d.cmd(&["GET", "a"]);
    d.cmd(&["EXEC"]);
}

/// CLIENT REPLY OFF or SKIP inside MULTI makes Redis send an array header
/// counting every queued command followed by fewer replies (a malformed
/// reply, see compatibility.md); only the well-formed cases are compared.
#[test]
fn client_reply_inside_multi() {
    let mut d = Diff::new();
    d.cmd(&["MULTI"]);
    d.cmd(&["CLIENT", "REPLY", "ON"]);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["CLIENT", "REPLY", "BAD"]);
    d.cmd(&["EXEC"]);
    d.send(&["CLIENT", "REPLY", "SKIP"]);
    d.send(&["MULTI"]);
    d.cmd(&["GET", "a"]);
    d.cmd(&["EXEC"]);
}

#[test]
fn resp3_transactions() {
    let mut d = Diff::new();
    d.cmd_type_only(&["HELLO", "3"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "nokey"]);
    d.cmd(&["HSET", "h", "f", "v"]);
    d.cmd(&["HGETALL", "h"]);
    d.cmd(&["SMEMBERS", "nokey"]);
    d.cmd(&["ZADD", "z", "1.5", "m"]);
    d.cmd(&["ZSCORE", "z", "m"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["SET", "w", "1"]);
    d.cmd(&["WATCH", "w"]);
    d.cmd(&["SET", "w", "2"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "w"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET"]);
    d.cmd(&["EXEC"]);
}

#[test]
fn reset_leaves_multi() {
    let mut d = Diff::new();
    d.cmd(&["SET", "w", "1"]);
    d.cmd(&["WATCH", "w"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["RESET"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["EXISTS", "a"]);
    d.cmd(&["SET", "w", "2"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET", "w"]);
    d.cmd(&["EXEC"]);
}

/// One random command over a few shared keys of mixed types.
fn random_command(rng: &mut StdRng) -> Vec<String> {
    let keys = ["k1", "k2", "k3"];
    let key = keys[rng.random_range(0..keys.len())].to_string();
    let n = rng.random_range(-3..20).to_string();
    let words: Vec<&str> = match rng.random_range(0..22) {
        0 => vec!["SET", &key, &n],
        1 => vec!["GET", &key],
        2 => vec!["INCR", &key],
        3 => vec!["APPEND", &key, "x"],
        4 => vec!["DEL", &key],
        5 => vec!["LPUSH", &key, &n],
        6 => vec!["RPOP", &key],
        7 => vec!["LRANGE", &key, "0", "-1"],
        8 => vec!["HSET", &key, "f", &n],
        9 => vec!["HINCRBY", &key, "f", "2"],
        10 => vec!["HGETALL", &key],
        11 => vec!["SADD", &key, &n],
        12 => vec!["SCARD", &key],
        13 => vec!["ZADD", &key, &n, "m"],
        14 => vec!["ZRANGE", &key, "0", "-1", "WITHSCORES"],
        15 => vec!["TYPE", &key],
        16 => vec!["EXPIRE", &key, "100"],
        17 => vec!["TTL", &key],
        18 => vec!["RENAME", &key, "k1"],
        19 => vec!["INCRBY", &key],
        20 => vec!["EXISTS", "k1", "k2", "k3"],
        _ => vec!["STRLEN", &key],
    };
    words.into_iter().map(String::from).collect()
}

#[test]
fn random_transactions_over_shared_keys() {
    for seed in random_seeds(1400, 4) {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut d = Diff::new();
        d.note(&format!("seed {seed}"));
        for _ in 0..random_steps(60) {
            let watch = rng.random_bool(0.3);
            if watch {
                d.cmd(&["WATCH", "k1", "k2"]);
                if rng.random_bool(0.5) {
                    d.cmd(&random_command(&mut rng));
                }
            }
            d.cmd(&["MULTI"]);
            for _ in 0..rng.random_range(0..6) {
                d.cmd(&random_command(&mut rng));
            }
            if rng.random_bool(0.1) {
                d.cmd(&["DISCARD"]);
            } else {
                d.cmd(&["EXEC"]);
            }
        }
        d.cmd_unordered(&["KEYS", "*"]);
    }
}

#[test]
fn error_counts_include_queue_time_and_runtime_errors() {
    let mut d = Diff::new();
    d.cmd(&["CONFIG", "RESETSTAT"]);
    d.cmd(&["SET", "s", "x"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["INCR", "s"]);
    d.cmd(&["LPUSH", "s", "a"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["SAVE"]);
    d.cmd(&["GET"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["EXEC", "x"]);
    d.cmd(&["INFO", "errorstats"]);
}

/// A monitor line without its timestamp and client address.
fn feed_line(r: &R) -> String {
    let R::Simple(text) = r else {
        return format!("not a feed line: {}", r.render());
    };
    match (text.find('['), text.find(']')) {
        (Some(open), Some(close)) if open < close => {
            let db = text[open + 1..close].split(' ').next().unwrap_or_default();
            format!("[{db}]{}", &text[close + 1..])
        }
        _ => format!("malformed feed line: {text}"),
    }
}

#[test]
fn monitors_see_the_queued_commands_when_exec_runs_them() {
    let mut d = Diff::new();
    let monitor = d.open_client();
    d.use_client(monitor);
    d.cmd(&["MONITOR"]);
    d.use_client(0);
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["GET", "a"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["GET"]);
    d.cmd(&["EXEC"]);
    d.use_client(monitor);
    for expected in [
        r#"[0] "MULTI""#,
        r#"[0] "SET" "a" "1""#,
        r#"[1] "SELECT" "1""#,
        r#"[1] "GET" "a""#,
        r#"[1] "EXEC""#,
        r#"[1] "MULTI""#,
        r#"[1] "EXEC""#,
    ] {
        let pair = d.client();
        let redis = feed_line(&pair.redis.read_reply().1);
        let firn = feed_line(&pair.firn.read_reply().1);
        assert_eq!(redis, expected, "redis's feed line");
        assert_eq!(firn, expected, "firn's feed line");
    }
}

#[test]
fn slowlog_has_the_queued_commands_but_not_exec() {
    let mut d = Diff::new();
    d.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    d.cmd(&["SLOWLOG", "RESET"]);
    d.cmd(&["MULTI"]);
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["INCR", "a"]);
    d.cmd(&["EXEC"]);
    d.cmd_with(&["SLOWLOG", "GET", "-1"], slowlog_normalised);
}

#[test]
fn scripts_and_functions_inside_multi() {
    let mut d = Diff::new();
    d.cmd(&["SET", "n", "1"]);
    d.cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=txlib\nredis.register_function('bump', function(keys, args) return redis.call('INCRBY', keys[1], args[1]) end)",
    ]);
    d.cmd(&["MULTI"]);
    d.cmd(&["INCR", "n"]);
    d.cmd(&["EVAL", "return redis.call('INCR', KEYS[1])", "1", "n"]);
    d.cmd(&["EVAL", "return redis.call('GET', KEYS[1])", "1", "n"]);
    d.cmd(&["FCALL", "bump", "1", "n", "10"]);
    d.cmd(&["EVAL", "return redis.call('LPUSH', KEYS[1], 'x')", "1", "n"]);
    d.cmd(&["EVAL", "return {1, 'two', {3}}", "0"]);
    d.cmd(&["GET", "n"]);
    d.cmd(&["EXEC"]);
    d.cmd(&["GET", "n"]);
    d.cmd(&["FUNCTION", "FLUSH"]);
}
