//! Arrival order across connections, compared with redis-server 7.0.15
//! byte for byte (docs/architecture.md, "Arrival order"): commands from
//! different connections that share a key take effect in the order the
//! server read them; a blocking command is registered as blocked before a
//! command read after it runs, and a blocked client woken by a write is
//! served before a command read after that write; a tracking client's read
//! is remembered before a write read after it, and its invalidation is
//! queued before the write's reply, after the writer's own reply on its
//! own connection and never inside an EXEC's reply; a write signals
//! exactly what Redis signals (WATCH, blocked stream readers).
//!
//! Where the order of two connections' commands matters, the keys are
//! first *held* by a script busy in a loop ([`hold`]): Redis runs nothing
//! else meanwhile, and Firn queues every command on those keys behind it.
//! The commands are then written one connection after another, a few
//! milliseconds apart, so that both servers read them in that order, and
//! run in it once the script ends. (Written microseconds apart without a
//! hold, even redis-server runs two connections' commands in either order,
//! whichever its event loop reads first.) Without a hold, a case can only
//! compare what does not depend on that order.
//!
//! Every case runs [`ROUNDS`] times on fresh keys, and the whole suite
//! runs again with every read cold and two writers in CI's second pass.

use firn_testkit::{Diff, R};

/// Rounds of each case.
const ROUNDS: usize = 3;

/// How long the holding script holds its keys, in microseconds (of the
/// server's clock: the script loops on TIME): the longest run of
/// [`GAP`]-separated commands written behind it, with room to spare.
const HOLD_US: &str = "300000";

/// Between two connections' commands: long enough that both servers read
/// the first before the second, even on a loaded machine.
const GAP: std::time::Duration = std::time::Duration::from_millis(20);

/// The holding script: busy until `ARGV[1]` microseconds have passed.
const HOLD_SCRIPT: &str = "local t = redis.call('TIME') \
    local start = t[1] * 1000000 + t[2] \
    repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - start >= tonumber(ARGV[1]) \
    return 1";

/// Holds `keys` on both servers from client pair `holder`: a script busy
/// in a loop that declares them. Read its reply with [`release`] once the
/// commands that must queue behind it are written.
fn hold(d: &mut Diff, holder: usize, keys: &[&str]) {
    let count = keys.len().to_string();
    let mut args = vec!["EVAL", HOLD_SCRIPT, count.as_str()];
    args.extend_from_slice(keys);
    args.push(HOLD_US);
    d.use_client(holder);
    d.send(&args);
    std::thread::sleep(GAP);
}

/// The holding script's reply (it ends by itself).
fn release(d: &mut Diff, holder: usize) {
    read_on(d, holder);
}

/// Reads everything `client` was sent up to the reply to a PING, which
/// must be the same messages in the same order from both servers.
fn drain(d: &mut Diff, client: usize) {
    d.use_client(client);
    d.send(&["PING"]);
    for _ in 0..64 {
        if d.read_both() == R::Simple("PONG".into()) {
            return;
        }
    }
    panic!("no PONG after 64 messages");
}

/// Sends `args` on `client` without reading, then leaves [`GAP`].
fn send_in_turn(d: &mut Diff, client: usize, args: &[&str]) {
    send_on(d, client, args);
    std::thread::sleep(GAP);
}

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

/// Clients block one after the other behind a holder, and another pushes
/// after them: when the hold ends they register in that order, and are
/// served in it, one element each (Redis's "BRPOPLPUSH with multiple
/// blocked clients": a registration made after the lock was let go could
/// come after the next client's).
#[test]
fn blocked_clients_are_served_in_the_order_they_arrived() {
    const WAITERS: usize = 6;
    let mut d = Diff::new();
    let c = clients(&mut d, WAITERS + 2);
    let (pusher, holder) = (c[WAITERS], c[WAITERS + 1]);
    for blocker in BLOCKERS {
        for round in 0..ROUNDS {
            let key = format!("q{round}");
            let dest = format!("d{round}");
            hold(&mut d, holder, &[&key, &dest]);
            for &waiter in &c[..WAITERS] {
                send_in_turn(&mut d, waiter, &strs(&fill(blocker.wait, &key, &dest, 0)));
            }
            send_in_turn(&mut d, pusher, &strs(&fill(blocker.push, &key, &dest, 1)));
            release(&mut d, holder);
            read_on(&mut d, pusher);
            read_on(&mut d, c[0]);
            for (n, &waiter) in c[1..WAITERS].iter().enumerate() {
                cmd_on(
                    &mut d,
                    pusher,
                    &strs(&fill(blocker.push, &key, &dest, n + 2)),
                );
                read_on(&mut d, waiter);
            }
            cmd_on(&mut d, pusher, &["EXISTS", &key, &dest]);
        }
    }
}

/// Redis's case: the first client's destination holds a string, so it is
/// answered WRONGTYPE when the push wakes it, and the element goes to the
/// second.
#[test]
fn a_first_waiter_that_fails_hands_the_element_to_the_next() {
    let mut d = Diff::new();
    let c = clients(&mut d, 4);
    for round in 0..ROUNDS {
        let (key, bad, good) = (
            format!("l{round}"),
            format!("bad{round}"),
            format!("good{round}"),
        );
        cmd_on(&mut d, c[2], &["SET", &bad, "nolist"]);
        hold(&mut d, c[3], &[&key]);
        send_in_turn(&mut d, c[0], &["BRPOPLPUSH", &key, &bad, "0"]);
        send_in_turn(&mut d, c[1], &["BRPOPLPUSH", &key, &good, "0"]);
        send_in_turn(&mut d, c[2], &["LPUSH", &key, "foo"]);
        release(&mut d, c[3]);
        read_on(&mut d, c[2]);
        read_on(&mut d, c[0]);
        read_on(&mut d, c[1]);
        cmd_on(&mut d, c[2], &["LRANGE", &good, "0", "-1"]);
    }
}

/// A push, then a pop by a third client read after it: the client blocked
/// before the push gets the element (served in the push's own turn, as
/// Redis serves it), the pop finds nothing.
#[test]
fn a_woken_client_is_served_before_a_command_read_after_the_push() {
    let mut d = Diff::new();
    let c = clients(&mut d, 4);
    for round in 0..ROUNDS {
        let key = format!("w{round}");
        send_on(&mut d, c[0], &["BLPOP", &key, "0"]);
        d.wait_blocked(c[3], c[3], 1);
        hold(&mut d, c[3], &[&key]);
        send_in_turn(&mut d, c[1], &["RPUSH", &key, "x"]);
        send_in_turn(&mut d, c[2], &["LPOP", &key]);
        release(&mut d, c[3]);
        read_on(&mut d, c[1]);
        read_on(&mut d, c[2]);
        read_on(&mut d, c[0]);
    }
}

/// One push of three elements, three blocked clients (two of them moving
/// to a destination the push does not name), and a pop read after the
/// push: all three are served within the push's turn, as Redis serves
/// them, and the pop finds nothing. (A woken BLMOVE whose destination its
/// waker did not hold was once placed behind the pop, and the checker's
/// queue workload saw the pop take the element.)
#[test]
fn a_push_serves_every_waiter_it_can_before_a_later_pop() {
    let mut d = Diff::new();
    let c = clients(&mut d, 6);
    for round in 0..ROUNDS {
        let key = format!("s{round}");
        let (d1, d2) = (format!("s{round}.d1"), format!("s{round}.d2"));
        let waits: [Vec<&str>; 3] = [
            vec!["BLPOP", &key, "0"],
            vec!["BRPOPLPUSH", &key, &d1, "0"],
            vec!["BLMOVE", &key, &d2, "LEFT", "RIGHT", "0"],
        ];
        for (n, wait) in waits.iter().enumerate() {
            send_on(&mut d, c[n], wait);
            d.wait_blocked(c[5], c[5], n as i64 + 1);
        }
        hold(&mut d, c[5], &[&key]);
        send_in_turn(&mut d, c[3], &["RPUSH", &key, "a", "b", "c"]);
        send_in_turn(&mut d, c[4], &["LPOP", &key]);
        release(&mut d, c[5]);
        read_on(&mut d, c[3]);
        read_on(&mut d, c[4]);
        for &waiter in &c[..3] {
            read_on(&mut d, waiter);
        }
        cmd_on(&mut d, c[4], &["LRANGE", &d1, "0", "-1"]);
        cmd_on(&mut d, c[4], &["LRANGE", &d2, "0", "-1"]);
    }
}

/// DEL, SET, FLUSHDB and SWAPDB read right after a blocking list pop: the
/// pop is blocked before each runs, stays blocked through it (a string is
/// passed over, as in Redis) and is served by the push that follows.
/// Rounds of [`commands_written_microseconds_apart_take_effect_in_arrival_order`].
const APART_ROUNDS: usize = 30;

/// One race of two connections without a hold: what runs before, the
/// command written first, the command written a few microseconds after it
/// on another connection, what runs after, and the replies of the first
/// and of the second when they ran in that order.
struct Race {
    before: &'static [&'static [&'static str]],
    first: &'static [&'static str],
    then: &'static [&'static str],
    after: &'static [&'static [&'static str]],
    expect: fn(&R) -> bool,
    expect_then: fn(&R) -> bool,
}

fn is_error_with(reply: &R, text: &str) -> bool {
    matches!(reply, R::Error(e) if e.contains(text))
}

/// A stream with a group and nothing new for it, and a read that blocks.
const STREAM_WITH_GROUP: &[&[&str]] = &[
    &["DEL", "k"],
    &["XADD", "k", "666", "f", "v"],
    &["XGROUP", "CREATE", "k", "g", "$"],
];
const READ_GROUP_BLOCKED: &[&str] = &[
    "XREADGROUP",
    "GROUP",
    "g",
    "Alice",
    "BLOCK",
    "0",
    "STREAMS",
    "k",
    ">",
];

const RACES: &[Race] = &[
    // Blocked first, the SET does not wake a list waiter; the element
    // pushed after serves it. (SET first: WRONGTYPE.)
    Race {
        before: &[&["DEL", "k"]],
        first: &["BLPOP", "k", "0"],
        then: &["SET", "k", "s"],
        after: &[&["DEL", "k"], &["RPUSH", "k", "x"]],
        expect: |r| !matches!(r, R::Error(_)),
        expect_then: |_| true,
    },
    Race {
        before: &[&["DEL", "k", "d"]],
        first: &["BLMOVE", "k", "d", "LEFT", "RIGHT", "0"],
        then: &["SET", "k", "s"],
        after: &[&["DEL", "k"], &["RPUSH", "k", "x"]],
        expect: |r| *r == R::bulk(b"x"),
        expect_then: |_| true,
    },
    Race {
        before: &[&["DEL", "k"]],
        first: &["BZPOPMIN", "k", "0"],
        then: &["SET", "k", "s"],
        after: &[&["DEL", "k"], &["ZADD", "k", "1", "m"]],
        expect: |r| !matches!(r, R::Error(_)),
        expect_then: |_| true,
    },
    // Redis's "Blocking XREADGROUP: key deleted" and "... key type changed
    // with SET". (The write first: NOGROUP.)
    Race {
        before: STREAM_WITH_GROUP,
        first: READ_GROUP_BLOCKED,
        then: &["DEL", "k"],
        after: &[],
        expect: |r| is_error_with(r, "no longer exists"),
        expect_then: |_| true,
    },
    Race {
        before: STREAM_WITH_GROUP,
        first: READ_GROUP_BLOCKED,
        then: &["SET", "k", "s"],
        after: &[],
        expect: |r| is_error_with(r, "no longer exists"),
        expect_then: |_| true,
    },
    // The first connection tracks (RESP3): its GET reads "a", and the SET
    // after it is announced to it. (The SET first: "b".)
    Race {
        before: &[&["SET", "k", "a"]],
        first: &["GET", "k"],
        then: &["SET", "k", "b"],
        after: &[],
        expect: |r| *r == R::bulk(b"a"),
        expect_then: |_| true,
    },
    // A write, then a read on another connection: the read sees it
    // (Redis's "RESP3 based basic tracking-redir-broken with client reply
    // off" sends a SET and, without reading its reply, a tracking GET).
    Race {
        before: &[&["SET", "k", "a"]],
        first: &["SET", "k", "b"],
        then: &["GET", "k"],
        after: &[],
        expect: |r| *r == R::Simple("OK".into()),
        expect_then: |r| *r == R::bulk(b"b"),
    },
];

/// Without a hold: a command written on one connection and a write on
/// another a few microseconds later take effect in that order, as in
/// redis-server, whose one loop reads them in the order they arrived. Firn
/// stamps each wake of a parked read in the order its I/O driver reports
/// them and holds a write back until every connection woken before it has
/// taken its place (docs/architecture.md, "Arrival order"). Checked on
/// Firn alone, against the reply Redis gives in that order: written this
/// close through this harness, redis-server itself now and then reads the
/// second first. Before the stamps about one round in twenty went the
/// other way (Redis's suite failed "Blocking XREADGROUP: key deleted" in 2
/// of 5 runs).
#[test]
fn commands_written_microseconds_apart_take_effect_in_arrival_order() {
    let server = firn_testkit::Server::firn();
    let mut writer = server.conn();
    let mut failures = Vec::new();
    for round in 0..APART_ROUNDS {
        for race in RACES {
            for args in race.before {
                writer.cmd(args);
            }
            let mut first = server.conn();
            if race.first[0] == "GET" {
                first.cmd(&["HELLO", "3"]);
                first.cmd(&["CLIENT", "TRACKING", "ON"]);
            } else {
                first.cmd(&["PING"]);
            }
            let bytes = |args: &[&str]| -> Vec<Vec<u8>> {
                args.iter().map(|a| a.as_bytes().to_vec()).collect()
            };
            let (a, b) = (bytes(race.first), bytes(race.then));
            let a: Vec<&[u8]> = a.iter().map(Vec::as_slice).collect();
            let b: Vec<&[u8]> = b.iter().map(Vec::as_slice).collect();
            first.send(&a);
            writer.send(&b);
            let then_reply = writer.read_reply().1;
            if !(race.expect_then)(&then_reply) {
                failures.push(format!(
                    "round {round}, {:?} then {:?}: the second answered {then_reply:?}",
                    race.first, race.then
                ));
            }
            for args in race.after {
                writer.cmd(args);
            }
            let reply = first.read_reply().1;
            if !(race.expect)(&reply) {
                failures.push(format!(
                    "round {round}, {:?} then {:?}: {reply:?}",
                    race.first, race.then
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} out of arrival order:\n{}",
        failures.len(),
        APART_ROUNDS * RACES.len(),
        failures.join("\n")
    );
}

#[test]
fn whole_key_and_database_changes_race_a_blocked_pop() {
    let mut d = Diff::new();
    let c = clients(&mut d, 3);
    let races: &[&[&str]] = &[
        &["DEL", "{k}"],
        &["SET", "{k}", "str"],
        &["FLUSHDB"],
        &["SWAPDB", "0", "1"],
    ];
    for race in races {
        for round in 0..ROUNDS {
            let key = format!("r{round}");
            hold(&mut d, c[2], &[&key]);
            send_in_turn(&mut d, c[0], &["BLPOP", &key, "0"]);
            send_in_turn(&mut d, c[1], &strs(&fill(race, &key, "", 0)));
            release(&mut d, c[2]);
            read_on(&mut d, c[1]);
            cmd_on(&mut d, c[1], &["DEL", &key]);
            cmd_on(&mut d, c[1], &["RPUSH", &key, "after"]);
            read_on(&mut d, c[0]);
            cmd_on(&mut d, c[1], &["SELECT", "1"]);
            cmd_on(&mut d, c[1], &["FLUSHDB"]);
            cmd_on(&mut d, c[1], &["SELECT", "0"]);
        }
    }
}

/// A push and a SWAPDB in one transaction or script: the element ends in
/// the other database, and the client blocked on the key in this one stays
/// blocked until a later push (the checker's cold mixed workload once saw
/// a BLPOP served the element the swap had moved away).
#[test]
fn a_push_swapped_away_in_the_same_batch_wakes_nobody() {
    let mut d = Diff::new();
    let c = clients(&mut d, 2);
    let (waiter, writer) = (c[0], c[1]);
    let script = "redis.call('rpush', KEYS[1], 'x') redis.call('swapdb', 0, 1) return 1";
    for round in 0..ROUNDS * 2 {
        let key = format!("sw{round}");
        send_on(&mut d, waiter, &["BLPOP", &key, "0"]);
        d.wait_blocked(writer, writer, 1);
        if round % 2 == 0 {
            cmd_on(&mut d, writer, &["MULTI"]);
            cmd_on(&mut d, writer, &["RPUSH", &key, "x"]);
            cmd_on(&mut d, writer, &["SWAPDB", "0", "1"]);
            cmd_on(&mut d, writer, &["EXEC"]);
        } else {
            cmd_on(&mut d, writer, &["EVAL", script, "1", &key]);
        }
        cmd_on(&mut d, writer, &["RPUSH", &key, "after"]);
        read_on(&mut d, waiter);
        cmd_on(&mut d, writer, &["EXISTS", &key]);
        cmd_on(&mut d, writer, &["SELECT", "1"]);
        cmd_on(&mut d, writer, &["LRANGE", &key, "0", "-1"]);
        cmd_on(&mut d, writer, &["SWAPDB", "0", "1"]);
        cmd_on(&mut d, writer, &["SELECT", "0"]);
        cmd_on(&mut d, writer, &["LRANGE", &key, "0", "-1"]);
    }
}

/// A blocked XREADGROUP whose stream is deleted, overwritten, flushed or
/// swapped away by a command read right after it ends with Redis's errors;
/// a blocked XREAD waits on through a SET and is served by the next XADD.
#[test]
fn stream_readers_race_deletion_type_changes_and_flushes() {
    let mut d = Diff::new();
    let c = clients(&mut d, 3);
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
            hold(&mut d, c[2], &[&key]);
            send_in_turn(
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
            send_in_turn(&mut d, c[1], &strs(&fill(race, &key, "", 0)));
            release(&mut d, c[2]);
            read_on(&mut d, c[1]);
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
        hold(&mut d, c[2], &[&key]);
        send_in_turn(&mut d, c[0], &["XREAD", "BLOCK", "0", "STREAMS", &key, "$"]);
        send_in_turn(&mut d, c[1], &["SET", &key, "val1"]);
        release(&mut d, c[2]);
        read_on(&mut d, c[1]);
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
    let c = clients(&mut d, 5);
    for round in 0..ROUNDS {
        let key = format!("st{round}");
        cmd_on(
            &mut d,
            c[3],
            &["XGROUP", "CREATE", &key, "g", "$", "MKSTREAM"],
        );
        hold(&mut d, c[4], &[&key]);
        send_in_turn(&mut d, c[0], &["XREAD", "BLOCK", "0", "STREAMS", &key, "$"]);
        send_in_turn(
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
        send_in_turn(
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
        send_in_turn(&mut d, c[3], &["XADD", &key, "1-1", "f", "1"]);
        release(&mut d, c[4]);
        read_on(&mut d, c[3]);
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
        d.wait_blocked(c[1], c[1], 1);
        cmd_on(&mut d, c[1], &["MULTI"]);
        cmd_on(&mut d, c[1], &["XGROUP", "SETID", &key, "g", "0"]);
        cmd_on(&mut d, c[1], &["SET", "other", "1"]);
        cmd_on(&mut d, c[1], &["EXEC"]);
        let script = "redis.call('XGROUP', 'SETID', KEYS[1], 'g', '0'); \
                      return redis.call('SET', 'other', '2')";
        cmd_on(&mut d, c[1], &["EVAL", script, "1", &key]);
        cmd_on(&mut d, c[1], &["XACK", &key, "g", "1-0"]);
        d.wait_blocked(c[1], c[1], 1);
        cmd_on(&mut d, c[1], &["XADD", &key, "2-0", "f", "w"]);
        read_on(&mut d, c[0]);
        cmd_on(&mut d, c[1], &["XPENDING", &key, "g"]);
    }
}

/// Writes of a stream that add no entry and neither delete nor overwrite
/// it (`{k}`: the stream, `{d}`: another key), each alone and inside a
/// MULTI beside a write of another key.
const NO_ENTRY_WRITES: &[&str] = &[
    "XDEL {k} 9-9",
    "XTRIM {k} MAXLEN 10",
    "XSETID {k} 1-5",
    "XGROUP CREATE {k} g2 0",
    "XGROUP SETID {k} g 0",
    "XGROUP CREATECONSUMER {k} g c3",
    "XGROUP DELCONSUMER {k} g nobody",
    "XGROUP CREATE {k} g2 0; XREADGROUP GROUP g2 other STREAMS {k} >",
    "XACK {k} g 1-0",
    "XCLAIM {k} g c3 0 1-0",
    "XAUTOCLAIM {k} g c3 0 0",
    "EXPIRE {k} 1000",
    "PEXPIREAT {k} 99999999999999",
    "PERSIST {k}",
    "EXPIRE {k} 1000; PERSIST {k}",
];

/// A blocked XREADGROUP is woken only by what adds entries (XADD) or
/// deletes or overwrites its stream (Redis's `signalKeyAsReady`): after
/// `XGROUP SETID ... 0` the group would read the whole history, so a reader
/// woken by any other write would answer at once with entry 1-0, where
/// Redis's reader waits for the next XADD and then gets 1-0 and 2-0.
/// Deleting the stream by an expiry (EXPIRE 0, a lazy expiry met by XACK)
/// ends its wait with Redis's error.
#[test]
fn a_stream_reader_is_woken_only_by_new_entries_or_the_stream_going() {
    let mut d = Diff::with_servers(
        firn_testkit::Server::redis_with(&["--enable-debug-command", "yes"]),
        firn_testkit::Server::firn_with(&["--enable-debug-command", "yes"]),
    );
    let c = clients(&mut d, 2);
    let read = ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS"];
    for (n, write) in NO_ENTRY_WRITES.iter().enumerate() {
        for in_multi in [false, true] {
            let (key, other) = (format!("rs{n}{in_multi}"), format!("ro{n}"));
            d.context = format!("{write:?}, in MULTI: {in_multi}");
            // c2 holds 1-0 pending; the group has delivered everything.
            cmd_on(&mut d, c[1], &["XADD", &key, "1-0", "f", "v"]);
            cmd_on(&mut d, c[1], &["XGROUP", "CREATE", &key, "g", "0"]);
            cmd_on(
                &mut d,
                c[1],
                &["XREADGROUP", "GROUP", "g", "c2", "STREAMS", &key, ">"],
            );
            let mut args = read.to_vec();
            args.extend([key.as_str(), ">"]);
            send_on(&mut d, c[0], &args);
            d.wait_blocked(c[1], c[1], 1);
            cmd_on(&mut d, c[1], &["XGROUP", "SETID", &key, "g", "0"]);
            if in_multi {
                cmd_on(&mut d, c[1], &["MULTI"]);
            }
            for command in case_commands(write, &key, &other) {
                cmd_on(&mut d, c[1], &strs(&command));
            }
            if in_multi {
                cmd_on(&mut d, c[1], &["SET", &other, "1"]);
                cmd_on(&mut d, c[1], &["EXEC"]);
            }
            d.wait_blocked(c[1], c[1], 1);
            cmd_on(&mut d, c[1], &["XADD", &key, "2-0", "f", "w"]);
            read_on(&mut d, c[0]);
        }
    }
    // An expiry deletes the stream: EXPIRE 0, and a lazy expiry by a
    // command that adds nothing and signals nothing itself (XACK).
    cmd_on(&mut d, c[1], &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    for (n, ending) in [&["EXPIRE", "{k}", "0"][..], &["XACK", "{k}", "g", "1-0"]]
        .iter()
        .enumerate()
    {
        let key = format!("re{n}");
        cmd_on(&mut d, c[1], &["XADD", &key, "1-0", "f", "v"]);
        cmd_on(&mut d, c[1], &["XGROUP", "CREATE", &key, "g", "$"]);
        let mut args = read.to_vec();
        args.extend([key.as_str(), ">"]);
        send_on(&mut d, c[0], &args);
        d.wait_blocked(c[1], c[1], 1);
        if ending[0] == "XACK" {
            cmd_on(&mut d, c[1], &["PEXPIRE", &key, "50"]);
            std::thread::sleep(std::time::Duration::from_millis(120));
        }
        let line: Vec<String> = ending.iter().map(|w| w.replace("{k}", &key)).collect();
        cmd_on(&mut d, c[1], &strs(&line));
        read_on(&mut d, c[0]);
    }
    cmd_on(&mut d, c[1], &["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
}

/// A script takes its declared keys' place where it is read: a command on
/// one of them read right after it runs after the whole script.
#[test]
fn a_script_runs_before_a_command_read_after_it() {
    let mut d = Diff::new();
    let c = clients(&mut d, 3);
    let script = "local v = redis.call('GET', KEYS[1]) \
                  redis.call('SET', KEYS[1], 'script') \
                  return v";
    for round in 0..ROUNDS {
        let key = format!("sc{round}");
        cmd_on(&mut d, c[1], &["SET", &key, "before"]);
        hold(&mut d, c[2], &[&key]);
        send_in_turn(&mut d, c[0], &["EVAL", script, "1", &key]);
        send_in_turn(&mut d, c[1], &["SET", &key, "after"]);
        release(&mut d, c[2]);
        read_on(&mut d, c[0]);
        read_on(&mut d, c[1]);
        cmd_on(&mut d, c[1], &["GET", &key]);
    }
}

/// A command of several keys takes its place on all of them at once: an
/// MSET waiting behind a holder of its first key keeps a GET of its second
/// key, read after it, waiting too, so the GET sees the MSET. (Taking its
/// stripes one at a time in their order, it held none of the second key's
/// while it waited for the first's, when the first sorts lower.)
#[test]
fn a_multi_key_command_takes_all_its_places_at_once() {
    let mut d = Diff::new();
    let c = clients(&mut d, 3);
    let stripe = |key: &str| firn_storage::keys::stripe_of_key(0, key.as_bytes());
    let mut pairs = (0..).map(|i| (format!("{{t{i}}}a"), format!("{{u{i}}}b")));
    for _ in 0..ROUNDS {
        let (a, b) = pairs
            .find(|(a, b)| stripe(a) < stripe(b))
            .expect("such keys exist");
        hold(&mut d, c[2], &[&a]);
        send_in_turn(&mut d, c[0], &["MSET", &a, "10", &b, "20"]);
        send_in_turn(&mut d, c[1], &["GET", &b]);
        release(&mut d, c[2]);
        read_on(&mut d, c[0]);
        read_on(&mut d, c[1]);
    }
}

// ------------------------------------------------------------ WATCH

/// EXEC is ordered with the writes of its watched keys: a push read after
/// EXEC that wakes a BRPOPLPUSH onto a watched key does not abort it
/// (Redis's "BRPOPLPUSH does not affect WATCH while still blocked").
#[test]
fn exec_is_ordered_with_writes_of_its_watched_keys() {
    let mut d = Diff::new();
    let c = clients(&mut d, 4);
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
        hold(&mut d, c[3], &[&src, &dst, &some]);
        send_in_turn(&mut d, c[1], &["EXEC"]);
        send_in_turn(&mut d, c[2], &["LPUSH", &src, "element"]);
        release(&mut d, c[3]);
        read_on(&mut d, c[1]);
        read_on(&mut d, c[2]);
        read_on(&mut d, c[0]);
    }
}

/// The cases of [`watch_aborts_only_where_redis_signals_a_change`], one a
/// line: `setup; setup | touch; touch`. `{k}` is the watched key, `{d}`
/// another key; a token `""` is an empty argument and `"..."` one with
/// spaces. Each line is a command that, in Redis 7.0.15, either changes
/// nothing it counts (no `signalModifiedKey`: the EXEC runs) or changes the
/// key although the change is small or empty (the EXEC is aborted).
const WATCH_CASES: &[&str] = &[
    // Strings: GETEX PERSIST without a TTL, SET NX/XX that do not set,
    // SETRANGE and APPEND of nothing; INCRBY 0 and a same-value SET do.
    "SET {k} v | GETEX {k} PERSIST",
    "SET {k} v EX 100 | GETEX {k} PERSIST",
    "SET {k} v | GETEX {k}",
    "SET {k} v | GETEX {k} EX 100",
    "SET {k} v | GETEX {k} PXAT 1",
    "SET {k} v | MULTI; GETEX {k} PERSIST; EXEC",
    "SET {k} v | EVAL \"return redis.call('getex', KEYS[1], 'persist')\" 1 {k}",
    "SET {k} v | SET {k} v",
    "SET {k} v | SET {k} v NX",
    " | SET {k} v XX",
    "SET {k} v | SET {k} x NX GET",
    "SET {k} v | SETNX {k} x",
    "SET {k} v | MSETNX {d} y {k} x",
    "SET {k} v | SETRANGE {k} 0 \"\"",
    " | SETRANGE {k} 3 \"\"",
    "SET {k} v | SETRANGE {k} 0 v",
    "SET {k} v | APPEND {k} \"\"",
    "SET {k} 1 | INCRBY {k} 0",
    "SET {k} 1 | INCRBYFLOAT {k} 0",
    "SET {k} abc | INCR {k}",
    "SET {k} v | GETDEL {k}",
    " | GETDEL {k}",
    "SET {k} v EX 100 | SET {k} v KEEPTTL",
    // Bitmaps: SETBIT leaving the bit as it was; BITOP storing nothing.
    "SETBIT {k} 7 1 | SETBIT {k} 7 1",
    "SETBIT {k} 7 1 | MULTI; SETBIT {k} 7 1; EXEC",
    "SETBIT {k} 7 1 | SETBIT {k} 7 0",
    "SETBIT {k} 7 1 | SETBIT {k} 100 0",
    " | SETBIT {k} 7 0",
    "SET {k} v | BITFIELD {k} SET u8 0 118",
    "SET {k} v | BITFIELD {k} SET u8 0 119",
    "SET {k} v | BITFIELD {k} INCRBY u8 0 0",
    "SET {k} v | BITFIELD {k} SET u8 100 0",
    "SET {k} v | BITFIELD_RO {k} GET u8 0",
    " | BITOP AND {k} {d}",
    "SET {k} v | BITOP AND {k} {d}",
    "SET {d} a; SET {k} a | BITOP AND {k} {d}",
    // Hashes.
    "HSET {k} f v | HSET {k} f v",
    "HSET {k} f v | HSETNX {k} f x",
    "HSET {k} f v | HDEL {k} nope",
    "HSET {k} f 1 | HINCRBY {k} f 0",
    // Lists: LTRIM signals even when it keeps everything.
    "RPUSH {k} a | LTRIM {k} 0 -1",
    "RPUSH {k} a | LREM {k} 0 z",
    "RPUSH {k} a | LINSERT {k} BEFORE z x",
    "RPUSH {k} a | LSET {k} 0 a",
    " | LPUSHX {k} a",
    "RPUSH {k} a | LMOVE {k} {k} LEFT RIGHT",
    "RPUSH {k} a b | LPOP {k} 0",
    " | LMOVE {d} {k} LEFT RIGHT",
    // Sets.
    "SADD {k} a | SADD {k} a",
    "SADD {k} a | SREM {k} z",
    "SADD {k} a | SMOVE {k} {k} a",
    "SADD {k} a; SADD {d} a | SMOVE {d} {k} a",
    "SADD {k} a | SPOP {k} 0",
    " | SINTERSTORE {k} {d}",
    "SADD {k} a | SINTERSTORE {k} {d}",
    // Sorted sets: a ZADD or ZINCRBY that changes no score.
    "ZADD {k} 1 a | ZADD {k} 1 a",
    "ZADD {k} 1 a | ZINCRBY {k} 0 a",
    "ZADD {k} 1 a | ZADD {k} XX 1 b",
    "ZADD {k} 1 a | ZADD {k} GT 0 a",
    "ZADD {k} 1 a | ZADD {k} 2 a",
    "ZADD {k} 1 a | ZREM {k} z",
    "ZADD {k} 1 a | ZREMRANGEBYSCORE {k} 5 6",
    "ZADD {k} 1 a | ZPOPMIN {k} 0",
    " | ZUNIONSTORE {k} 1 {d}",
    "ZADD {k} 1 a | ZUNIONSTORE {k} 1 {d}",
    "ZADD {d} 1 a | ZRANGESTORE {k} {d} 5 6",
    // Geo, HyperLogLog: PFDEBUG's encoding change is no change; PFCOUNT's
    // cached cardinality and PFMERGE are.
    "GEOADD {k} 13 38 a | GEOADD {k} 13 38 a",
    "GEOADD {d} 13 38 a | GEOSEARCHSTORE {k} {d} FROMLONLAT 0 0 BYRADIUS 1 m",
    "GEOADD {d} 13 38 a; SET {k} v | GEOSEARCHSTORE {k} {d} FROMLONLAT 0 0 BYRADIUS 1 m",
    "PFADD {k} a | PFADD {k} a",
    "PFADD {k} a | PFCOUNT {k}",
    "PFADD {k} a; PFCOUNT {k} | PFCOUNT {k}",
    "PFADD {k} a | PFMERGE {k}",
    "PFADD {k} a | PFDEBUG GETREG {k}",
    "PFADD {k} a | PFDEBUG TODENSE {k}",
    // Streams: consumer-group state is no change; XADD, XDEL and XTRIM
    // that remove something, and MKSTREAM creating the stream, are.
    "XADD {k} 1-0 f v; XGROUP CREATE {k} g 0 | XGROUP CREATE {k} g2 $",
    "XADD {k} 1-0 f v; XGROUP CREATE {k} g 0 | XGROUP SETID {k} g 0",
    "XADD {k} 1-0 f v; XGROUP CREATE {k} g 0 | XGROUP CREATECONSUMER {k} g c2",
    "XADD {k} 1-0 f v; XGROUP CREATE {k} g 0 | XREADGROUP GROUP g c STREAMS {k} >",
    "XADD {k} 1-0 f v; XGROUP CREATE {k} g 0 | XACK {k} g 1-0",
    "XADD {k} 1-0 f v; XGROUP CREATE {k} g 0 | XGROUP DESTROY {k} g",
    "XADD {k} 1-0 f v; XGROUP CREATE {k} g 0; XREADGROUP GROUP g c STREAMS {k} > \
     | XCLAIM {k} g c2 0 1-0",
    "XADD {k} 1-0 f v; XGROUP CREATE {k} g 0; XREADGROUP GROUP g c STREAMS {k} > \
     | XAUTOCLAIM {k} g c2 0 0",
    "XADD {k} 1-0 f v | XSETID {k} 5-0",
    "XADD {k} 1-0 f v | XADD {k} 2-0 f v",
    "XADD {k} 1-0 f v | XDEL {k} 9-9",
    "XADD {k} 1-0 f v | XDEL {k} 1-0",
    "XADD {k} 1-0 f v | XTRIM {k} MAXLEN 10",
    " | XADD {k} NOMKSTREAM * f v",
    " | XGROUP CREATE {k} g $ MKSTREAM",
    // Keys: expiry commands whose condition fails, PERSIST without a TTL,
    // RENAME onto itself, COPY and MOVE refused; the same TTL set again is
    // a change.
    " | DEL {k}",
    "SET {k} v EX 100 | EXPIRE {k} 200 NX",
    "SET {k} v | EXPIRE {k} 200 XX",
    "SET {k} v EX 100 | EXPIRE {k} 50 GT",
    "SET {k} v | EXPIRE {k} 200 LT",
    "SET {k} v; PEXPIREAT {k} 99999999999999 | PEXPIREAT {k} 99999999999999",
    "SET {k} v | PERSIST {k}",
    "SET {k} v EX 100 | PERSIST {k}",
    "SET {k} v | EXPIRE {k} 0",
    " | EXPIRE {k} 100",
    "SET {k} v | RENAME {k} {k}",
    "SET {k} v | RENAMENX {k} {k}",
    "SET {d} v; SET {k} v | RENAMENX {d} {k}",
    "SET {d} v; SET {k} v | COPY {d} {k}",
    "SET {k} v | COPY {k} {d}",
    "SET {k} v; SELECT 1; SET {k} v; SELECT 0 | MOVE {k} 1",
    "SET {k} v | TOUCH {k}",
    "SET {k} v | OBJECT ENCODING {k}",
    "SET {k} v | SWAPDB 0 0",
    " | SORT {d} STORE {k}",
    "SET {k} v | SORT {d} STORE {k}",
];

/// A command line of the table: whitespace-separated, `""` empty,
/// `"..."` one argument with spaces.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').expect("closing quote");
            out.push(quoted[..end].to_string());
            rest = quoted[end + 1..].trim_start();
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            out.push(rest[..end].to_string());
            rest = rest[end..].trim_start();
        }
    }
    out
}

/// The commands of one side of a case, `{k}` and `{d}` filled in.
fn case_commands(side: &str, key: &str, other: &str) -> Vec<Vec<String>> {
    side.split(';')
        .filter(|c| !c.trim().is_empty())
        .map(|c| {
            words(c)
                .iter()
                .map(|w| w.replace("{k}", key).replace("{d}", other))
                .collect()
        })
        .collect()
}

/// WATCH aborts only where Redis signals the key modified
/// ([`WATCH_CASES`]): commands that change nothing Redis counts leave the
/// transaction to run, and every change, however small, aborts it.
#[test]
fn watch_aborts_only_where_redis_signals_a_change() {
    let mut d = Diff::new();
    let c = clients(&mut d, 1);
    for case in WATCH_CASES {
        let (setup, touch) = case.split_once('|').expect("setup | touch");
        for round in 0..2 {
            let (key, other) = (format!("wk{round}"), format!("wd{round}"));
            d.use_client(0);
            d.context = format!("case {case:?}, round {round}");
            for db in ["1", "0"] {
                d.cmd(&["SELECT", db]);
                d.cmd(&["DEL", &key, &other]);
            }
            for command in case_commands(setup, &key, &other) {
                d.cmd(&strs(&command));
            }
            d.cmd(&["WATCH", &key]);
            for command in case_commands(touch, &key, &other) {
                cmd_on(&mut d, c[0], &strs(&command));
            }
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

/// The case: a write and a tracking client's read of the same key,
/// read in either order, then a second write. Whichever ran first, the
/// tracking client is told of the change that follows its read: its cache
/// never keeps a value the server no longer holds. (A read remembered
/// before it ran, and an invalidation sent after the write committed, once
/// left `invalidate` before the read's "a" and nothing for "b".)
#[test]
fn a_tracked_read_is_never_left_stale_by_a_racing_write() {
    let mut d = Diff::new();
    let c = clients(&mut d, 3);
    resp3_on(&mut d, c[0]);
    cmd_on(&mut d, c[0], &["CLIENT", "TRACKING", "ON"]);
    for round in 0..ROUNDS {
        let key = format!("t{round}");
        for read_first in [true, false] {
            hold(&mut d, c[2], &[&key]);
            if read_first {
                send_in_turn(&mut d, c[0], &["GET", &key]);
                send_in_turn(&mut d, c[1], &["SET", &key, "a"]);
            } else {
                send_in_turn(&mut d, c[1], &["SET", &key, "a"]);
                send_in_turn(&mut d, c[0], &["GET", &key]);
            }
            release(&mut d, c[2]);
            read_on(&mut d, c[1]);
            read_on(&mut d, c[0]);
            cmd_on(&mut d, c[1], &["SET", &key, "b"]);
            drain(&mut d, c[0]);
        }
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

/// The tracking modes, each with a write read right after a tracked read
/// on another connection: BCAST, OPTIN with CLIENT CACHING yes, OPTOUT
/// with and without CLIENT CACHING no, NOLOOP; and RESP2 redirected to a
/// subscribed connection.
#[test]
fn tracking_modes_are_told_in_arrival_order() {
    let mut d = Diff::new();
    let c = clients(&mut d, 4);
    resp3_on(&mut d, c[0]);
    let modes: &[&[&str]] = &[
        &["CLIENT", "TRACKING", "ON"],
        &["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "bc:"],
        &["CLIENT", "TRACKING", "ON", "OPTIN"],
        &["CLIENT", "TRACKING", "ON", "OPTOUT"],
        &["CLIENT", "TRACKING", "ON", "NOLOOP"],
    ];
    for (m, mode) in modes.iter().enumerate() {
        cmd_on(&mut d, c[0], &["CLIENT", "TRACKING", "OFF"]);
        cmd_on(&mut d, c[0], mode);
        for round in 0..ROUNDS {
            let key = format!("bc:{m}:{round}");
            if mode.contains(&"OPTIN") {
                cmd_on(&mut d, c[0], &["CLIENT", "CACHING", "YES"]);
            }
            if mode.contains(&"OPTOUT") && round % 2 == 1 {
                cmd_on(&mut d, c[0], &["CLIENT", "CACHING", "NO"]);
            }
            hold(&mut d, c[3], &[&key]);
            send_in_turn(&mut d, c[0], &["GET", &key]);
            send_in_turn(&mut d, c[1], &["SET", &key, "v"]);
            release(&mut d, c[3]);
            read_on(&mut d, c[1]);
            drain(&mut d, c[0]);
            cmd_on(&mut d, c[0], &["GET", &key]);
            cmd_on(&mut d, c[0], &["SET", &key, "own"]);
            drain(&mut d, c[0]);
            cmd_on(&mut d, c[1], &["SET", &key, "w"]);
            drain(&mut d, c[0]);
        }
    }
    cmd_on(&mut d, c[0], &["CLIENT", "TRACKING", "OFF"]);
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
    let on = |id: i64| {
        vec![
            "CLIENT".to_string(),
            "TRACKING".into(),
            "ON".into(),
            "REDIRECT".into(),
            id.to_string(),
        ]
    };
    let (on_redis, on_firn) = (on(redis_id), on(firn_id));
    assert_eq!(
        pair.redis.cmd(&strs(&on_redis)),
        pair.firn.cmd(&strs(&on_firn))
    );
    for round in 0..ROUNDS {
        let key = format!("rd{round}");
        hold(&mut d, c[3], &[&key]);
        send_in_turn(&mut d, redirect, &["GET", &key]);
        send_in_turn(&mut d, c[1], &["SET", &key, "v"]);
        release(&mut d, c[3]);
        read_on(&mut d, redirect);
        read_on(&mut d, c[1]);
        read_on(&mut d, c[2]);
    }
}

/// Keys evicted from the tracking table for its limit are invalidated
/// before the reply of the read that evicted them (the oldest key goes
/// first; Redis drops random ones, before the next command, so this is
/// Firn's alone).
#[test]
fn tracking_table_evictions_come_before_the_reply_that_caused_them() {
    let server = firn_testkit::Server::firn();
    let mut conn = server.conn();
    conn.cmd(&["HELLO", "3"]);
    conn.cmd(&["CONFIG", "SET", "tracking-table-max-keys", "1"]);
    conn.cmd(&["CLIENT", "TRACKING", "ON"]);
    conn.cmd(&["SET", "e1", "1"]);
    conn.cmd(&["SET", "e2", "2"]);
    assert_eq!(conn.cmd(&["GET", "e1"]), R::bulk(b"1"));
    let evicted = conn.cmd(&["GET", "e2"]);
    assert_eq!(
        evicted,
        R::Push(vec![
            R::bulk(b"invalidate"),
            R::Array(Some(vec![R::bulk(b"e1")]))
        ]),
        "the eviction's invalidation comes first"
    );
    assert_eq!(conn.read_reply().1, R::bulk(b"2"));
    assert_eq!(conn.cmd(&["PING"]), R::Simple("PONG".into()));
}
