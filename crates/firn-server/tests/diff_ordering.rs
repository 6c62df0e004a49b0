//! Arrival order across connections, compared with redis-server 7.0.15
//! byte for byte. Each case writes commands to several connections one
//! right after another without waiting for replies (as Redis's own suite
//! does with its deferring clients), so both servers read them in the same
//! order: the first connection's command before the second's. Redis runs
//! them in that order, and so must Firn, whichever network thread reads
//! each (docs/architecture.md, "Arrival order"):
//!
//! - blocking commands register as blocked before a command read after
//!   them runs, and are served in the order they blocked, every blocking
//!   command, with pushes, DEL, SET, FLUSHDB and SWAPDB racing them;
//! - a tracking client's read is remembered before a write read after it,
//!   and the write's invalidation is queued before its reply, after the
//!   writer's own reply on its own connection, never inside an EXEC's
//!   reply (default, BCAST, OPTIN, OPTOUT and REDIRECT; RESP2 and RESP3);
//! - a write signals exactly what Redis signals: WATCH aborts and stream
//!   readers wake only where Redis's `signalModifiedKey` and
//!   `signalKeyAsReady` fire.
//!
//! Every case runs [`ROUNDS`] times on fresh keys, and the whole suite
//! runs again with every read cold and two writers in CI's second pass.

use firn_testkit::{Diff, R};

/// Rounds of each race: the old path lost them in a few of a hundred.
const ROUNDS: usize = 25;

/// Opens `n` more client pairs; returns their indexes.
fn clients(d: &mut Diff, n: usize) -> Vec<usize> {
    (0..n).map(|_| d.open_client()).collect()
}

/// Sends `args` on client pair `client` without reading its reply.
fn send_on(d: &mut Diff, client: usize, args: &[&str]) {
    d.use_client(client);
    d.send(args);
}

/// Sends `args` on `client` and compares its reply.
fn cmd_on(d: &mut Diff, client: usize, args: &[&str]) -> R {
    d.use_client(client);
    d.cmd(args)
}

/// Reads and compares the next reply of `client`.
fn read_on(d: &mut Diff, client: usize) -> R {
    d.use_client(client);
    d.read_both()
}

/// How each blocking command waits on a key, and how an element arrives.
struct Blocker {
    /// The command, with `{k}` for the key it waits on and `{d}` for a
    /// destination.
    wait: &'static [&'static str],
    /// Gives the key one element (`{n}`: a number unique in the round).
    push: &'static [&'static str],
}

const BLOCKERS: &[Blocker] = &[
    Blocker {
        wait: &["BLPOP", "{k}", "0"],
        push: &["RPUSH", "{k}", "e{n}"],
    },
    Blocker {
        wait: &["BRPOP", "{k}", "0"],
        push: &["LPUSH", "{k}", "e{n}"],
    },
    Blocker {
        wait: &["BRPOPLPUSH", "{k}", "{d}", "0"],
        push: &["RPUSH", "{k}", "e{n}"],
    },
    Blocker {
        wait: &["BLMOVE", "{k}", "{d}", "LEFT", "RIGHT", "0"],
        push: &["RPUSH", "{k}", "e{n}"],
    },
    Blocker {
        wait: &["BLMPOP", "0", "1", "{k}", "LEFT", "COUNT", "2"],
        push: &["RPUSH", "{k}", "e{n}"],
    },
    Blocker {
        wait: &["BZPOPMIN", "{k}", "0"],
        push: &["ZADD", "{k}", "{n}", "m{n}"],
    },
    Blocker {
        wait: &["BZPOPMAX", "{k}", "0"],
        push: &["ZADD", "{k}", "{n}", "m{n}"],
    },
    Blocker {
        wait: &["BZMPOP", "0", "1", "{k}", "MIN"],
        push: &["ZADD", "{k}", "{n}", "m{n}"],
    },
];

fn fill(template: &[&str], key: &str, dest: &str, n: usize) -> Vec<String> {
    template
        .iter()
        .map(|part| {
            part.replace("{k}", key)
                .replace("{d}", dest)
                .replace("{n}", &n.to_string())
        })
        .collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

// ------------------------------------------------------------ blocking

/// Two clients block one right after the other and a third pushes right
/// after them: the first is served first, then the second (Redis's
/// "BRPOPLPUSH with multiple blocked clients" raced this).
#[test]
fn blocked_clients_are_served_in_the_order_they_arrived() {
    let mut d = Diff::new();
    let c = clients(&mut d, 3);
    for blocker in BLOCKERS {
        for round in 0..ROUNDS {
            let key = format!("q{round}");
            let dest = format!("d{round}");
            send_on(&mut d, c[0], &strs(&fill(blocker.wait, &key, &dest, 0)));
            send_on(&mut d, c[1], &strs(&fill(blocker.wait, &key, &dest, 0)));
            cmd_on(&mut d, c[2], &strs(&fill(blocker.push, &key, &dest, 1)));
            read_on(&mut d, c[0]);
            cmd_on(&mut d, c[2], &strs(&fill(blocker.push, &key, &dest, 2)));
            read_on(&mut d, c[1]);
            cmd_on(&mut d, c[2], &["EXISTS", &key, &dest]);
        }
    }
}

/// Redis's case: the first client's destination holds a string, so it is
/// answered WRONGTYPE when the push wakes it, and the element goes to the
/// second.
#[test]
fn a_first_waiter_that_fails_hands_the_element_to_the_next() {
    let mut d = Diff::new();
    let c = clients(&mut d, 3);
    for round in 0..ROUNDS {
        let (key, bad, good) = (
            format!("l{round}"),
            format!("bad{round}"),
            format!("good{round}"),
        );
        cmd_on(&mut d, c[2], &["SET", &bad, "nolist"]);
        send_on(&mut d, c[0], &["BRPOPLPUSH", &key, &bad, "0"]);
        send_on(&mut d, c[1], &["BRPOPLPUSH", &key, &good, "0"]);
        cmd_on(&mut d, c[2], &["LPUSH", &key, "foo"]);
        read_on(&mut d, c[0]);
        read_on(&mut d, c[1]);
        cmd_on(&mut d, c[2], &["LRANGE", &good, "0", "-1"]);
    }
}

/// A push right after a blocking pop from another client, then a pop by
/// a third: the blocked client gets the element (served in the push's own
/// turn, as Redis serves it), the third finds nothing.
#[test]
fn a_woken_client_is_served_before_a_command_read_after_the_push() {
    let mut d = Diff::new();
    let c = clients(&mut d, 3);
    for round in 0..ROUNDS {
        let key = format!("w{round}");
        send_on(&mut d, c[0], &["BLPOP", &key, "0"]);
        send_on(&mut d, c[1], &["RPUSH", &key, "x"]);
        send_on(&mut d, c[2], &["LPOP", &key]);
        read_on(&mut d, c[1]);
        read_on(&mut d, c[2]);
        read_on(&mut d, c[0]);
    }
}

/// DEL, SET, FLUSHDB and SWAPDB right after a blocking list pop: the pop
/// stays blocked through each (a string is passed over, as in Redis) and
/// is served by the push that follows.
#[test]
fn whole_key_and_database_changes_race_a_blocked_pop() {
    let mut d = Diff::new();
    let c = clients(&mut d, 2);
    let races: &[&[&str]] = &[
        &["DEL", "{k}"],
        &["SET", "{k}", "str"],
        &["FLUSHDB"],
        &["SWAPDB", "0", "1"],
    ];
    for race in races {
        for round in 0..ROUNDS {
            let key = format!("r{round}");
            send_on(&mut d, c[0], &["BLPOP", &key, "0"]);
            cmd_on(&mut d, c[1], &strs(&fill(race, &key, "", 0)));
            cmd_on(&mut d, c[1], &["DEL", &key]);
            cmd_on(&mut d, c[1], &["RPUSH", &key, "after"]);
            read_on(&mut d, c[0]);
            cmd_on(&mut d, c[1], &["SELECT", "1"]);
            cmd_on(&mut d, c[1], &["FLUSHDB"]);
            cmd_on(&mut d, c[1], &["SELECT", "0"]);
        }
    }
}

/// A blocked XREADGROUP whose stream is deleted, overwritten, flushed or
/// swapped away right after it blocked ends with Redis's errors; a blocked
/// XREAD waits on through a SET and is served by the next XADD.
#[test]
fn stream_readers_race_deletion_type_changes_and_flushes() {
    let mut d = Diff::new();
    let c = clients(&mut d, 2);
    let races: &[&[&str]] = &[
        &["DEL", "{k}"],
        &["SET", "{k}", "val1"],
        &["FLUSHDB"],
        &["SWAPDB", "0", "1"],
    ];
    for race in races {
        for round in 0..ROUNDS {
            let key = format!("s{round}");
            cmd_on(&mut d, c[1], &["DEL", &key]);
            cmd_on(&mut d, c[1], &["XADD", &key, "666-0", "f", "v"]);
            cmd_on(&mut d, c[1], &["XGROUP", "CREATE", &key, "g", "$"]);
            send_on(
                &mut d,
                c[0],
                &[
                    "XREADGROUP",
                    "GROUP",
                    "g",
                    "Alice",
                    "BLOCK",
                    "0",
                    "STREAMS",
                    &key,
                    ">",
                ],
            );
            cmd_on(&mut d, c[1], &strs(&fill(race, &key, "", 0)));
            read_on(&mut d, c[0]);
            cmd_on(&mut d, c[1], &["SELECT", "1"]);
            cmd_on(&mut d, c[1], &["FLUSHDB"]);
            cmd_on(&mut d, c[1], &["SELECT", "0"]);
        }
    }
    for round in 0..ROUNDS {
        let key = format!("x{round}");
        cmd_on(&mut d, c[1], &["DEL", &key]);
        cmd_on(&mut d, c[1], &["XADD", &key, "1-0", "f", "v"]);
        send_on(&mut d, c[0], &["XREAD", "BLOCK", "0", "STREAMS", &key, "$"]);
        cmd_on(&mut d, c[1], &["SET", &key, "val1"]);
        cmd_on(&mut d, c[1], &["DEL", &key]);
        cmd_on(&mut d, c[1], &["XADD", &key, "2-0", "g", "w"]);
        read_on(&mut d, c[0]);
    }
}

/// Several XREAD readers all get an entry; the readers of one group share
/// its entries in the order they blocked.
#[test]
fn stream_readers_are_served_in_the_order_they_blocked() {
    let mut d = Diff::new();
    let c = clients(&mut d, 4);
    for round in 0..ROUNDS {
        let key = format!("st{round}");
        cmd_on(
            &mut d,
            c[3],
            &["XGROUP", "CREATE", &key, "g", "$", "MKSTREAM"],
        );
        send_on(&mut d, c[0], &["XREAD", "BLOCK", "0", "STREAMS", &key, "$"]);
        send_on(
            &mut d,
            c[1],
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "a",
                "BLOCK",
                "0",
                "STREAMS",
                &key,
                ">",
            ],
        );
        send_on(
            &mut d,
            c[2],
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "b",
                "BLOCK",
                "0",
                "STREAMS",
                &key,
                ">",
            ],
        );
        cmd_on(&mut d, c[3], &["XADD", &key, "1-1", "f", "1"]);
        read_on(&mut d, c[0]);
        read_on(&mut d, c[1]);
        cmd_on(&mut d, c[3], &["XADD", &key, "1-2", "f", "2"]);
        read_on(&mut d, c[2]);
    }
}

/// What adds no entry wakes no stream reader, even beside another write in
/// one MULTI or script: `XGROUP SETID ... 0` with a SET keeps a blocked
/// XREADGROUP blocked (Redis signals no key for SETID), and the next XADD
/// serves it the whole history.
#[test]
fn a_group_change_beside_another_write_wakes_no_reader() {
    let mut d = Diff::new();
    let c = clients(&mut d, 2);
    for round in 0..ROUNDS {
        let key = format!("g{round}");
        cmd_on(&mut d, c[1], &["XADD", &key, "1-0", "f", "v"]);
        cmd_on(&mut d, c[1], &["XGROUP", "CREATE", &key, "g", "$"]);
        send_on(
            &mut d,
            c[0],
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "BLOCK",
                "0",
                "STREAMS",
                &key,
                ">",
            ],
        );
        cmd_on(&mut d, c[1], &["MULTI"]);
        cmd_on(&mut d, c[1], &["XGROUP", "SETID", &key, "g", "0"]);
        cmd_on(&mut d, c[1], &["SET", "other", "1"]);
        cmd_on(&mut d, c[1], &["EXEC"]);
        let script = "redis.call('XGROUP', 'SETID', KEYS[1], 'g', '0'); \
                      return redis.call('SET', 'other', '2')";
        cmd_on(&mut d, c[1], &["EVAL", script, "1", &key]);
        cmd_on(&mut d, c[1], &["XACK", &key, "g", "1-0"]);
        cmd_on(&mut d, c[1], &["XADD", &key, "2-0", "f", "w"]);
        read_on(&mut d, c[0]);
        cmd_on(&mut d, c[1], &["XPENDING", &key, "g"]);
    }
}

/// A script takes its declared keys' place where it is read: a command on
/// one of them written right after it runs after the whole script.
#[test]
fn a_script_runs_before_a_command_read_after_it() {
    let mut d = Diff::new();
    let c = clients(&mut d, 2);
    let script = "local v = redis.call('GET', KEYS[1]) \
                  redis.call('SET', KEYS[1], 'script') \
                  return v";
    for round in 0..ROUNDS {
        let key = format!("sc{round}");
        cmd_on(&mut d, c[1], &["SET", &key, "before"]);
        send_on(&mut d, c[0], &["EVAL", script, "1", &key]);
        send_on(&mut d, c[1], &["SET", &key, "after"]);
        read_on(&mut d, c[0]);
        read_on(&mut d, c[1]);
        cmd_on(&mut d, c[1], &["GET", &key]);
    }
}

/// A multi-key command queued behind another keeps its place on all its
/// keys at once: MSET a b then GET b from another client sees the MSET.
#[test]
fn a_multi_key_command_takes_all_its_places_at_once() {
    let mut d = Diff::new();
    let c = clients(&mut d, 3);
    for round in 0..ROUNDS {
        let (a, b) = (format!("{{t{round}}}a"), format!("{{u{round}}}b"));
        send_on(&mut d, c[0], &["INCR", &a]);
        send_on(&mut d, c[1], &["MSET", &a, "10", &b, "20"]);
        send_on(&mut d, c[2], &["MGET", &a, &b]);
        read_on(&mut d, c[0]);
        read_on(&mut d, c[1]);
        read_on(&mut d, c[2]);
    }
}

// ------------------------------------------------------------ WATCH

/// EXEC is ordered with the writes of its watched keys: a push read after
/// EXEC that wakes a BRPOPLPUSH onto a watched key does not abort it
/// (Redis's "BRPOPLPUSH does not affect WATCH while still blocked").
#[test]
fn exec_is_ordered_with_writes_of_its_watched_keys() {
    let mut d = Diff::new();
    let c = clients(&mut d, 3);
    for round in 0..ROUNDS {
        let (src, dst, some) = (
            format!("src{round}"),
            format!("dst{round}"),
            format!("some{round}"),
        );
        cmd_on(&mut d, c[2], &["SET", &some, "value"]);
        send_on(&mut d, c[0], &["BRPOPLPUSH", &src, &dst, "0"]);
        d.wait_blocked(c[2], c[1], 1);
        cmd_on(&mut d, c[1], &["WATCH", &dst]);
        cmd_on(&mut d, c[1], &["MULTI"]);
        cmd_on(&mut d, c[1], &["GET", &some]);
        send_on(&mut d, c[1], &["EXEC"]);
        cmd_on(&mut d, c[2], &["LPUSH", &src, "element"]);
        read_on(&mut d, c[1]);
        read_on(&mut d, c[0]);
    }
}

/// WATCH aborts only where Redis signals the key modified: commands that
/// change nothing Redis counts leave the transaction to run.
#[test]
fn watch_aborts_only_where_redis_signals_a_change() {
    let mut d = Diff::new();
    let c = clients(&mut d, 1);
    let setups: &[&[&str]] = &[
        &["SET", "{k}", "v"],
        &["SET", "{k}", "\x01"],
        &["XADD", "{k}", "1-0", "f", "v"],
        &["XADD", "{k}", "1-0", "f", "v"],
        &["XADD", "{k}", "1-0", "f", "v"],
        &["XADD", "{k}", "1-0", "f", "v"],
        &["XADD", "{k}", "1-0", "f", "v"],
        &["XADD", "{k}", "1-0", "f", "v"],
        &["XADD", "{k}", "1-0", "f", "v"],
    ];
    let touches: &[&[&str]] = &[
        &["GETEX", "{k}", "PERSIST"],
        &["SETBIT", "{k}", "7", "1"],
        &["XGROUP", "CREATE", "{k}", "g2", "$"],
        &["XGROUP", "SETID", "{k}", "g", "0"],
        &["XGROUP", "CREATECONSUMER", "{k}", "g", "c2"],
        &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "{k}", ">"],
        &["XACK", "{k}", "g", "1-0"],
        &["XSETID", "{k}", "5-0"],
        &["XGROUP", "DESTROY", "{k}", "g"],
    ];
    for (setup, touch) in setups.iter().zip(touches) {
        for round in 0..3 {
            let key = format!("wk{round}");
            d.use_client(0);
            d.cmd(&["DEL", &key]);
            d.cmd(&strs(&fill(setup, &key, "", 0)));
            if touch[0] != "GETEX" && touch[0] != "SETBIT" {
                d.cmd(&["XGROUP", "CREATE", &key, "g", "0"]);
            }
            d.cmd(&["WATCH", &key]);
            cmd_on(&mut d, c[0], &strs(&fill(touch, &key, "", 0)));
            d.use_client(0);
            d.cmd(&["MULTI"]);
            d.cmd(&["PING"]);
            d.cmd(&["EXEC"]);
        }
    }
}

// ------------------------------------------------------------ tracking

/// Switches client pair `client` to RESP3 (HELLO's id differs).
fn resp3_on(d: &mut Diff, client: usize) {
    d.use_client(client);
    d.cmd_type_only(&["HELLO", "3"]);
}

/// The case: a RESP3 tracking client's GET and another client's SET
/// of the same key written at once, then a second SET. Whichever ran
/// first, the tracking client is told of the change that follows its read:
/// its cache never keeps a value the server no longer holds.
#[test]
fn a_tracked_read_is_never_left_stale_by_a_racing_write() {
    let mut d = Diff::new();
    let c = clients(&mut d, 2);
    resp3_on(&mut d, c[0]);
    cmd_on(&mut d, c[0], &["CLIENT", "TRACKING", "ON"]);
    for round in 0..ROUNDS {
        let key = format!("t{round}");
        // Read first, then the writes.
        send_on(&mut d, c[0], &["GET", &key]);
        send_on(&mut d, c[1], &["SET", &key, "a"]);
        read_on(&mut d, c[1]);
        cmd_on(&mut d, c[1], &["SET", &key, "b"]);
        read_on(&mut d, c[0]);
        read_on(&mut d, c[0]);
        // The write first, then the read (which sees "a"), then "b".
        send_on(&mut d, c[1], &["SET", &key, "a"]);
        send_on(&mut d, c[0], &["GET", &key]);
        read_on(&mut d, c[1]);
        read_on(&mut d, c[0]);
        cmd_on(&mut d, c[1], &["SET", &key, "b"]);
        read_on(&mut d, c[0]);
        cmd_on(&mut d, c[0], &["PING"]);
    }
}

/// One command's invalidations come in the order it modified its keys
/// (MSET k2 v k1 v: k2, then k1), after the writer's own reply on its own
/// connection, and never inside an EXEC's reply; a FLUSHDB in MULTI
/// likewise.
#[test]
fn own_invalidations_follow_the_reply_in_modification_order() {
    let mut d = Diff::new();
    let c = clients(&mut d, 1);
    resp3_on(&mut d, 0);
    d.cmd(&["CLIENT", "TRACKING", "ON"]);
    for round in 0..ROUNDS {
        let (k1, k2) = (format!("{{h{round}}}1"), format!("{{h{round}}}2"));
        d.use_client(0);
        d.cmd(&["MSET", &k1, "1", &k2, "2"]);
        d.cmd(&["MGET", &k1, &k2]);
        cmd_on(&mut d, c[0], &["MSET", &k2, "x", &k1, "y"]);
        read_on(&mut d, 0);
        read_on(&mut d, 0);
        d.cmd(&["HSET", &k1, "f", "1"]);
        d.use_client(0);
        d.cmd(&["DEL", &k1]);
        d.cmd(&["HSET", &k1, "f", "1"]);
        d.cmd(&["HGET", &k1, "f"]);
        d.cmd(&["HDEL", &k1, "f"]);
        d.read_both();
        d.cmd(&["SET", &k1, "1"]);
        d.cmd(&["GET", &k1]);
        d.cmd(&["MULTI"]);
        d.cmd(&["INCR", &k1]);
        d.cmd(&["GET", &k2]);
        d.cmd(&["EXEC"]);
        d.read_both();
        d.cmd(&["MULTI"]);
        d.cmd(&["FLUSHDB"]);
        d.cmd(&["EXEC"]);
        d.read_both();
        d.cmd(&["PING"]);
    }
}

/// The tracking modes, each with a write read right after the tracked
/// read on another connection: BCAST (one message per prefix), OPTIN with
/// CLIENT CACHING yes, OPTOUT with CLIENT CACHING no, NOLOOP, and RESP2
/// redirected to a subscribed connection.
#[test]
fn tracking_modes_are_told_in_arrival_order() {
    let mut d = Diff::new();
    let c = clients(&mut d, 3);
    resp3_on(&mut d, c[0]);
    let modes: &[&[&str]] = &[
        &["CLIENT", "TRACKING", "ON"],
        &["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "bc:"],
        &["CLIENT", "TRACKING", "ON", "OPTIN"],
        &["CLIENT", "TRACKING", "ON", "OPTOUT"],
        &["CLIENT", "TRACKING", "ON", "NOLOOP"],
    ];
    for mode in modes {
        cmd_on(&mut d, c[0], &["CLIENT", "TRACKING", "OFF"]);
        cmd_on(&mut d, c[0], mode);
        for round in 0..ROUNDS {
            let key = format!("bc:{round}");
            if mode.contains(&"OPTIN") {
                cmd_on(&mut d, c[0], &["CLIENT", "CACHING", "YES"]);
            }
            if mode.contains(&"OPTOUT") && round % 2 == 1 {
                cmd_on(&mut d, c[0], &["CLIENT", "CACHING", "NO"]);
            }
            send_on(&mut d, c[0], &["GET", &key]);
            send_on(&mut d, c[1], &["SET", &key, "v"]);
            read_on(&mut d, c[1]);
            read_on(&mut d, c[0]);
            cmd_on(&mut d, c[0], &["SET", &key, "own"]);
            cmd_on(&mut d, c[1], &["SET", &key, "w"]);
            cmd_on(&mut d, c[0], &["PING"]);
        }
    }
    // RESP2, its invalidations redirected to a subscriber.
    d.use_client(c[2]);
    let id = d.cmd_type_only(&["CLIENT", "ID"]);
    cmd_on(&mut d, c[2], &["SUBSCRIBE", "__redis__:invalidate"]);
    let (redis_id, firn_id) = match id {
        (R::Int(r), R::Int(f)) => (r, f),
        other => panic!("CLIENT ID: {other:?}"),
    };
    let redirect = d.open_client();
    d.use_client(redirect);
    let pair = d.client();
    pair.redis.cmd(&[
        "CLIENT",
        "TRACKING",
        "ON",
        "REDIRECT",
        &redis_id.to_string(),
    ]);
    pair.firn
        .cmd(&["CLIENT", "TRACKING", "ON", "REDIRECT", &firn_id.to_string()]);
    for round in 0..ROUNDS {
        let key = format!("rd{round}");
        send_on(&mut d, redirect, &["GET", &key]);
        send_on(&mut d, c[1], &["SET", &key, "v"]);
        read_on(&mut d, c[1]);
        read_on(&mut d, redirect);
        read_on(&mut d, c[2]);
    }
}

/// Keys evicted from the tracking table for its limit are invalidated
/// before the reply of the read that evicted them.
#[test]
fn tracking_table_evictions_come_before_the_reply_that_caused_them() {
    let mut d = Diff::new();
    resp3_on(&mut d, 0);
    d.cmd(&["CONFIG", "SET", "tracking-table-max-keys", "1"]);
    d.cmd(&["CLIENT", "TRACKING", "ON"]);
    d.cmd(&["SET", "e1", "1"]);
    d.cmd(&["SET", "e2", "2"]);
    d.cmd(&["GET", "e1"]);
    d.cmd(&["GET", "e2"]);
    d.read_both();
    d.cmd(&["PING"]);
    d.cmd(&["CONFIG", "SET", "tracking-table-max-keys", "1000000"]);
}
