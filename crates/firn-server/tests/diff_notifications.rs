//! Differential tests of keyspace notifications against redis-server
//! 7.0.15: a subscriber on `__key*@*__:*` on each server, the same command
//! sequences sent to both, and the exact sequences of keyspace and keyevent
//! messages compared in order, under various `notify-keyspace-events`
//! class combinations; `CONFIG GET` of the option; a seeded random
//! sequence mixing types.
//!
//! Each step ends with a PUBLISH on a marker channel, sent after the
//! step's last reply: both servers must deliver every event of the step
//! before the marker.
//!
//! `FIRN_DIFF_SEED=<n>` runs one seed only; `FIRN_DIFF_STEPS=<n>` changes
//! the number of commands per seed.

use firn_testkit::keyspace_events::{Message, Subscriber, MARKER};
use firn_testkit::{
    env::{random_seeds, random_steps},
    Diff, R,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

/// Both servers, a command client pair and a subscriber on each.
struct Events {
    d: Diff,
    redis_sub: Subscriber,
    firn_sub: Subscriber,
    steps: usize,
}

impl Events {
    fn new(flags: &str) -> Events {
        let d = Diff::new();
        let redis_sub = Subscriber::new(&d.redis_server);
        let firn_sub = Subscriber::new(&d.firn_server);
        let mut events = Events {
            d,
            redis_sub,
            firn_sub,
            steps: 0,
        };
        events.flags(flags);
        events
    }

    fn flags(&mut self, flags: &str) {
        self.d
            .cmd(&["CONFIG", "SET", "notify-keyspace-events", flags]);
        self.d.cmd(&["CONFIG", "GET", "notify-keyspace-events"]);
    }

    /// Sends each command to both servers (replies must be identical),
    /// then compares the events they published.
    fn run(&mut self, commands: &[&[&str]]) {
        for c in commands {
            self.d.cmd(c);
        }
        self.check();
    }

    /// The events of everything sent since the last check must match.
    fn check(&mut self) {
        self.steps += 1;
        let id = self.steps.to_string();
        self.d.cmd(&["PUBLISH", MARKER, &id]);
        // A client's events reach subscribers before its reply, so before
        // the marker it publishes next, on both servers.
        let redis = self.redis_sub.step(&id);
        let firn = self.firn_sub.step(&id);
        if redis != firn {
            self.d
                .fail("keyspace events differ", &render(&redis), &render(&firn));
        }
    }

    /// At the end: nothing more may arrive on Firn's side.
    fn finish(&mut self) {
        self.check();
        let late = self
            .firn_sub
            .drain_until(Instant::now() + Duration::from_millis(300));
        if !late.is_empty() {
            self.d
                .fail("events after the last step", &render(&[]), &render(&late));
        }
    }
}

fn render(events: &[Message]) -> R {
    R::Array(Some(
        events
            .iter()
            .map(|(channel, message)| R::Simple(format!("{channel} {message}")))
            .collect(),
    ))
}

/// Class combinations each group runs under: everything including `new`,
/// then a few narrower ones (a class alone on one channel kind).
const EVERYTHING: &str = "AKEn";

fn under_flags(flags: &[&str], commands: &[&[&str]]) {
    for f in flags {
        let mut e = Events::new(f);
        for c in commands {
            e.run(&[c]);
        }
        e.finish();
    }
}

// ----------------------------------------------------------------- config

#[test]
fn config_get_prints_the_classes_as_redis_does() {
    let mut d = Diff::new();
    for flags in [
        "",
        "A",
        "AKE",
        "Ag",
        "KEA",
        "n",
        "An",
        "AKEn",
        "Kg$lshzxetdnm",
        "KEm",
        "x",
        "gg",
        "Elg",
        "nzK",
        "g$lshzxetd",
        "g$lshzxet",
        "KE",
        "m",
        "Q",
        "AKE ",
        "a",
        "k",
    ] {
        d.cmd(&["CONFIG", "SET", "notify-keyspace-events", flags]);
        d.cmd(&["CONFIG", "GET", "notify-keyspace-events"]);
    }
    d.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA", "hz", "10"]);
    d.cmd(&["CONFIG", "GET", "notify-keyspace-events"]);
}

// ---------------------------------------------------------------- strings

const STRINGS: &[&[&str]] = &[
    &["SET", "a", "1"],
    &["SET", "a", "2"],
    &["SET", "b", "1", "EX", "100"],
    &["SET", "b", "2", "KEEPTTL"],
    &["SET", "c", "1", "NX"],
    &["SET", "c", "2", "NX"],
    &["SET", "c", "3", "XX"],
    &["SET", "d", "1", "XX"],
    &["SET", "c", "4", "GET"],
    &["SET", "c", "5", "PXAT", "99999999999999"],
    &["SETNX", "e", "1"],
    &["SETNX", "e", "2"],
    &["SETEX", "f", "100", "v"],
    &["PSETEX", "g", "100000", "v"],
    &["GETSET", "a", "9"],
    &["MSET", "h", "1", "i", "2"],
    &["MSETNX", "h", "1", "j", "2"],
    &["MSETNX", "j", "1", "k", "2"],
    &["INCR", "n"],
    &["INCRBY", "n", "5"],
    &["DECR", "n"],
    &["DECRBY", "n", "2"],
    &["INCRBYFLOAT", "fl", "1.5"],
    &["INCRBYFLOAT", "fl", "2"],
    &["INCR", "h2"],
    &["SET", "s", "x"],
    &["INCR", "s"],
    &["APPEND", "ap", "x"],
    &["APPEND", "ap", "y"],
    &["APPEND", "ap", ""],
    &["APPEND", "ap2", ""],
    &["SETRANGE", "sr", "2", "ab"],
    &["SETRANGE", "sr", "0", "z"],
    &["SETRANGE", "sr", "0", ""],
    &["SETRANGE", "none", "0", ""],
    &["GETEX", "b", "PERSIST"],
    &["GETEX", "b", "PERSIST"],
    &["GETEX", "a", "EX", "100"],
    &["GETEX", "a"],
    &["GETEX", "a", "PXAT", "1"],
    &["GETEX", "missing", "EX", "10"],
    &["GETDEL", "c"],
    &["GETDEL", "c"],
    &["GET", "missing"],
    // Stored already expired (as Redis 7.0 does): the next write meets it
    // (or active expiry got there first: the same events either way).
    &["SET", "gone", "v", "PXAT", "1"],
    &["LPUSH", "gone", "x"],
    &["STRLEN", "ap"],
    &["MGET", "a", "b"],
    &["GETRANGE", "sr", "0", "-1"],
];

#[test]
fn string_commands_emit_redis_events() {
    under_flags(&[EVERYTHING, "K$", "Eg", "KEn"], STRINGS);
}

#[test]
fn bitmap_commands_emit_redis_events() {
    under_flags(
        &[EVERYTHING, "E$g"],
        &[
            &["SETBIT", "b", "7", "1"],
            &["SETBIT", "b", "7", "1"],
            &["SETBIT", "b", "100", "0"],
            &["GETBIT", "b", "7"],
            &["BITCOUNT", "b"],
            &["SET", "x", "abc"],
            &["BITOP", "AND", "dst", "b", "x"],
            &["BITOP", "OR", "dst", "b", "x"],
            &["BITOP", "NOT", "dst", "missing"],
            &["BITOP", "NOT", "dst2", "missing"],
            &["BITFIELD", "bf", "SET", "u8", "0", "200"],
            &["BITFIELD", "bf", "GET", "u8", "0"],
            &[
                "BITFIELD", "bf", "INCRBY", "u8", "0", "100", "GET", "u4", "0",
            ],
            &[
                "BITFIELD", "bf2", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "10",
            ],
            &[
                "BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "255",
            ],
            &["BITFIELD_RO", "bf", "GET", "u8", "0"],
        ],
    );
}

#[test]
fn hyperloglog_commands_emit_redis_events() {
    under_flags(
        &[EVERYTHING, "K$"],
        &[
            &["PFADD", "h", "a", "b"],
            &["PFADD", "h", "a"],
            &["PFADD", "h", "c"],
            &["PFADD", "h2"],
            &["PFADD", "h2"],
            &["PFCOUNT", "h"],
            &["PFCOUNT", "h", "h2"],
            &["PFMERGE", "m", "h", "h2"],
            &["PFMERGE", "m", "h"],
            &["PFMERGE", "empty"],
        ],
    );
}

// --------------------------------------------------------------- keyspace

#[test]
fn keyspace_commands_emit_redis_events() {
    let commands: &[&[&str]] = &[
        &["SET", "a", "1"],
        &["SET", "b", "2"],
        &["DEL", "a", "b", "missing"],
        &["SET", "a", "1"],
        &["UNLINK", "a", "missing"],
        &["SET", "k", "v"],
        &["EXPIRE", "k", "100"],
        &["EXPIRE", "k", "200", "NX"],
        &["EXPIRE", "k", "200", "XX"],
        &["PEXPIRE", "k", "50000", "GT"],
        &["EXPIREAT", "k", "99999999999", "LT"],
        &["TTL", "k"],
        &["PERSIST", "k"],
        &["PERSIST", "k"],
        &["PEXPIRE", "k", "-1"],
        &["EXPIRE", "missing", "10"],
        &["SET", "k", "v"],
        &["EXPIREAT", "k", "1"],
        &["SET", "k", "v"],
        &["RENAME", "k", "k2"],
        &["SET", "k3", "x"],
        &["RENAME", "k2", "k3"],
        &["RENAME", "k3", "k3"],
        &["RENAMENX", "k3", "k3"],
        &["SET", "k4", "y"],
        &["RENAMENX", "k3", "k4"],
        &["RENAMENX", "k3", "k5"],
        &["COPY", "k5", "c1"],
        &["COPY", "k5", "c1"],
        &["COPY", "k5", "c1", "REPLACE"],
        &["COPY", "k5", "c1", "DB", "1"],
        &["MOVE", "k5", "2"],
        &["SET", "k5", "again"],
        &["MOVE", "k5", "2"],
        &["RPUSH", "l", "a", "b"],
        &["RENAME", "l", "l2"],
        &["COPY", "l2", "l3"],
        &["MOVE", "l3", "1"],
        &["EXISTS", "l2", "missing"],
        &["TYPE", "l2"],
        &["TOUCH", "l2"],
        &["SWAPDB", "0", "1"],
        &["SWAPDB", "0", "1"],
        &["SELECT", "1"],
        &["SET", "in1", "x"],
        &["DEL", "in1"],
        &["SELECT", "0"],
        &["FLUSHDB"],
        &["SET", "x", "1"],
        &["FLUSHALL"],
    ];
    under_flags(&[EVERYTHING, "Kg", "E$"], commands);
}

#[test]
fn restore_emits_new_and_restore() {
    for flags in [EVERYTHING, "Eg"] {
        let mut e = Events::new(flags);
        e.run(&[&["RPUSH", "l", "a", "b"], &["SET", "s", "v"]]);
        let list_payload = e.d.cmd(&["DUMP", "l"]).as_bytes().unwrap().to_vec();
        let string_payload = e.d.cmd(&["DUMP", "s"]).as_bytes().unwrap().to_vec();
        e.check();
        let cases: Vec<Vec<Vec<u8>>> = vec![
            vec![
                b"RESTORE".to_vec(),
                b"l2".to_vec(),
                b"0".to_vec(),
                list_payload.clone(),
            ],
            vec![
                b"RESTORE".to_vec(),
                b"l2".to_vec(),
                b"0".to_vec(),
                list_payload.clone(),
            ],
            vec![
                b"RESTORE".to_vec(),
                b"l2".to_vec(),
                b"0".to_vec(),
                list_payload.clone(),
                b"REPLACE".to_vec(),
            ],
            vec![
                b"RESTORE".to_vec(),
                b"s2".to_vec(),
                b"100000".to_vec(),
                string_payload.clone(),
            ],
            vec![
                b"RESTORE".to_vec(),
                b"s2".to_vec(),
                b"0".to_vec(),
                string_payload.clone(),
                b"REPLACE".to_vec(),
            ],
            // Already expired: nothing stored; with REPLACE the old is deleted.
            vec![
                b"RESTORE".to_vec(),
                b"s2".to_vec(),
                b"1".to_vec(),
                string_payload.clone(),
                b"REPLACE".to_vec(),
                b"ABSTTL".to_vec(),
            ],
            vec![
                b"RESTORE".to_vec(),
                b"s3".to_vec(),
                b"1".to_vec(),
                string_payload.clone(),
                b"ABSTTL".to_vec(),
            ],
        ];
        for c in &cases {
            e.d.cmd(c);
            e.check();
        }
        e.finish();
    }
}

// ------------------------------------------------------------------ lists

#[test]
fn list_commands_emit_redis_events() {
    let commands: &[&[&str]] = &[
        &["LPUSH", "l", "a", "b", "c"],
        &["RPUSH", "l", "d"],
        &["LPUSHX", "missing", "x"],
        &["RPUSHX", "l", "e"],
        &["LPUSHX", "l", "f"],
        &["LINSERT", "l", "BEFORE", "a", "z"],
        &["LINSERT", "l", "AFTER", "nope", "z"],
        &["LINSERT", "missing", "AFTER", "a", "z"],
        &["LSET", "l", "0", "first"],
        &["LRANGE", "l", "0", "-1"],
        &["LTRIM", "l", "0", "4"],
        &["LTRIM", "missing", "0", "1"],
        &["LREM", "l", "0", "z"],
        &["LREM", "l", "0", "nope"],
        &["LPOP", "l"],
        &["RPOP", "l", "2"],
        &["LPOP", "l", "0"],
        &["LPOP", "missing"],
        &["RPUSH", "src", "1", "2"],
        &["RPOPLPUSH", "src", "dst"],
        &["LMOVE", "src", "dst", "LEFT", "RIGHT"],
        &["LMOVE", "src", "dst", "LEFT", "RIGHT"],
        &["LMOVE", "dst", "dst", "LEFT", "RIGHT"],
        &["RPUSH", "one", "x"],
        &["LMOVE", "one", "one", "RIGHT", "LEFT"],
        &["LMPOP", "2", "missing", "dst", "LEFT", "COUNT", "1"],
        &["LMPOP", "1", "dst", "RIGHT", "COUNT", "5"],
        &["RPUSH", "t", "a", "b"],
        &["LTRIM", "t", "5", "10"],
        &["RPUSH", "r", "a", "a"],
        &["LREM", "r", "0", "a"],
        &["RPUSH", "n", "3", "1", "2"],
        &["SORT", "n", "STORE", "sorted"],
        &["SORT", "n", "STORE", "sorted"],
        &["SORT", "missing", "STORE", "sorted"],
        &["SORT", "missing", "STORE", "sorted"],
        &["SORT", "n"],
    ];
    under_flags(&[EVERYTHING, "Kl", "Eg", "KEn"], commands);
}

// ------------------------------------------------------------------- sets

#[test]
fn set_commands_emit_redis_events() {
    let commands: &[&[&str]] = &[
        &["SADD", "s", "a", "b", "c"],
        &["SADD", "s", "a"],
        &["SREM", "s", "a", "nope"],
        &["SREM", "s", "nope"],
        &["SMOVE", "s", "d", "b"],
        &["SMOVE", "s", "d", "nope"],
        &["SMOVE", "s", "d", "c"],
        &["SMOVE", "d", "d", "b"],
        &["SADD", "one", "x"],
        &["SPOP", "one"],
        &["SPOP", "one"],
        &["SADD", "two", "x", "y"],
        &["SPOP", "two", "0"],
        &["SPOP", "two", "5"],
        &["SADD", "a", "1", "2", "3"],
        &["SADD", "b", "2", "3", "4"],
        &["SINTERSTORE", "i", "a", "b"],
        &["SINTERSTORE", "i", "a", "b"],
        &["SUNIONSTORE", "u", "a", "b"],
        &["SDIFFSTORE", "df", "a", "b"],
        &["SDIFFSTORE", "df", "a", "a"],
        &["SDIFFSTORE", "df", "a", "a"],
        &["SINTERSTORE", "u", "a", "missing"],
        &["SINTER", "a", "b"],
        &["SINTERCARD", "2", "a", "b"],
        &["SREM", "a", "1", "2", "3"],
    ];
    let flags_run = |flags: &str| {
        let mut e = Events::new(flags);
        for c in commands {
            if c[0] == "SPOP" && c.len() == 3 || c[0] == "SINTER" {
                e.d.cmd_unordered(c);
            } else {
                e.d.cmd(c);
            }
            e.check();
        }
        // A partial SPOP: random members, deterministic events.
        e.run(&[&["SADD", "p", "1", "2", "3", "4"]]);
        e.d.cmd_type_only(&["SPOP", "p", "2"]);
        e.check();
        e.finish();
    };
    for flags in [EVERYTHING, "Ks", "Eg"] {
        flags_run(flags);
    }
}

// ----------------------------------------------------------------- hashes

#[test]
fn hash_commands_emit_redis_events() {
    under_flags(
        &[EVERYTHING, "Kh", "Eg"],
        &[
            &["HSET", "h", "a", "1", "b", "2"],
            &["HSET", "h", "a", "3"],
            &["HSETNX", "h", "a", "4"],
            &["HSETNX", "h", "c", "4"],
            &["HSETNX", "h2", "c", "4"],
            &["HMSET", "h", "d", "5"],
            &["HDEL", "h", "nope"],
            &["HDEL", "h", "a", "nope"],
            &["HINCRBY", "h", "n", "5"],
            &["HINCRBY", "h", "b", "5"],
            &["HINCRBYFLOAT", "h", "f", "1.5"],
            &["HINCRBY", "h", "f", "1"],
            &["HINCRBYFLOAT", "new", "f", "2"],
            &["HGET", "h", "b"],
            &["HDEL", "h2", "c"],
            &["HDEL", "new", "f", "g"],
        ],
    );
}

// ------------------------------------------------------------- sorted sets

#[test]
fn sorted_set_commands_emit_redis_events() {
    under_flags(
        &[EVERYTHING, "Kz", "Eg", "KEn"],
        &[
            &["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"],
            &["ZADD", "z", "1", "a"],
            &["ZADD", "z", "5", "a"],
            &["ZADD", "z", "XX", "9", "nope"],
            &["ZADD", "missing", "XX", "1", "a"],
            &["ZADD", "z", "NX", "CH", "1", "e"],
            &["ZADD", "z", "INCR", "1", "e"],
            &["ZADD", "z", "GT", "0", "e"],
            &["ZINCRBY", "z", "2", "f"],
            &["ZINCRBY", "new", "2", "f"],
            &["ZREM", "z", "nope"],
            &["ZREM", "z", "f"],
            &["ZREMRANGEBYSCORE", "z", "100", "200"],
            &["ZREMRANGEBYSCORE", "z", "2", "2"],
            &["ZREMRANGEBYRANK", "z", "0", "0"],
            &["ZADD", "lex", "0", "a", "0", "b", "0", "c"],
            &["ZREMRANGEBYLEX", "lex", "[a", "[b"],
            &["ZREMRANGEBYLEX", "lex", "[x", "[y"],
            &["ZREMRANGEBYLEX", "lex", "-", "+"],
            &["ZPOPMIN", "z"],
            &["ZPOPMAX", "z", "0"],
            &["ZPOPMAX", "z", "1"],
            &["ZPOPMIN", "missing"],
            &["ZADD", "p", "1", "a", "2", "b"],
            &["ZMPOP", "2", "missing", "p", "MIN", "COUNT", "1"],
            &["ZMPOP", "1", "p", "MAX", "COUNT", "5"],
            &["ZADD", "x", "1", "a", "2", "b"],
            &["ZADD", "y", "1", "b", "2", "c"],
            &["ZUNIONSTORE", "u", "2", "x", "y"],
            &["ZUNIONSTORE", "u", "2", "x", "y"],
            &["ZINTERSTORE", "i", "2", "x", "y"],
            &["ZINTERSTORE", "i", "2", "x", "missing"],
            &["ZINTERSTORE", "i", "2", "x", "missing"],
            &["ZDIFFSTORE", "d", "2", "x", "y"],
            &["ZRANGESTORE", "r", "x", "0", "-1"],
            &["ZRANGESTORE", "r", "x", "0", "-1"],
            &["ZRANGESTORE", "r", "x", "5", "6"],
            &["ZRANGESTORE", "r2", "missing", "0", "-1"],
            &["ZRANGE", "x", "0", "-1"],
            &["ZUNION", "2", "x", "y"],
            &["ZCARD", "x"],
        ],
    );
}

#[test]
fn geo_commands_emit_redis_events() {
    under_flags(
        &[EVERYTHING, "Ez"],
        &[
            &["GEOADD", "g", "13.361389", "38.115556", "Palermo"],
            &["GEOADD", "g", "13.361389", "38.115556", "Palermo"],
            &["GEOADD", "g", "15.087269", "37.502669", "Catania"],
            &["GEOADD", "g", "XX", "15", "37", "Nowhere"],
            &[
                "GEOSEARCHSTORE",
                "dst",
                "g",
                "FROMLONLAT",
                "15",
                "37",
                "BYRADIUS",
                "200",
                "km",
            ],
            &[
                "GEOSEARCHSTORE",
                "dst",
                "g",
                "FROMLONLAT",
                "15",
                "37",
                "BYRADIUS",
                "1",
                "km",
            ],
            &[
                "GEOSEARCHSTORE",
                "dst",
                "g",
                "FROMLONLAT",
                "15",
                "37",
                "BYRADIUS",
                "1",
                "km",
            ],
            &["GEORADIUS", "g", "15", "37", "200", "km", "STORE", "r"],
            &["GEORADIUS", "g", "15", "37", "200", "km", "STOREDIST", "r"],
            &[
                "GEORADIUSBYMEMBER",
                "g",
                "Palermo",
                "10",
                "km",
                "STORE",
                "r2",
            ],
            &[
                "GEORADIUS",
                "missing",
                "15",
                "37",
                "200",
                "km",
                "STORE",
                "r2",
            ],
            &[
                "GEOSEARCH",
                "g",
                "FROMLONLAT",
                "15",
                "37",
                "BYRADIUS",
                "200",
                "km",
                "ASC",
            ],
            &["GEODIST", "g", "Palermo", "Catania"],
        ],
    );
}

// ------------------------------------------------------------ class masks

/// One sequence touching every class, under masks that each let through a
/// different subset (and a mask without K or E, which publishes nothing).
#[test]
fn each_class_mask_filters_as_redis() {
    let commands: &[&[&str]] = &[
        &["SET", "s", "1", "EX", "100"],
        &["INCR", "n"],
        &["RPUSH", "l", "a"],
        &["SADD", "st", "a"],
        &["HSET", "h", "f", "v"],
        &["ZADD", "z", "1", "a"],
        &["PFADD", "p", "x"],
        &["DEL", "s", "l", "st", "h", "z"],
        &["GET", "missing"],
    ];
    for flags in [
        "", "g", "A", "K", "E", "Kg", "E$", "Kl", "Es", "Kh", "Ez", "Kx", "Kn", "En", "KEn", "AK",
        "AE", "KEg$lshz", "KEm", "Ket", "KEd",
    ] {
        let mut e = Events::new(flags);
        e.run(commands);
        e.finish();
    }
}

#[test]
fn changing_the_mask_takes_effect_for_the_next_command() {
    let mut e = Events::new("");
    e.run(&[&["SET", "a", "1"]]);
    e.flags("KEA");
    e.run(&[&["SET", "a", "2"], &["RPUSH", "l", "x"]]);
    e.flags("El");
    e.run(&[&["SET", "a", "3"], &["RPUSH", "l", "y"]]);
    e.flags("");
    e.run(&[&["SET", "a", "4"], &["RPUSH", "l", "z"]]);
    e.flags("Kg");
    e.run(&[&["DEL", "a", "l"]]);
    e.finish();
}

#[test]
fn events_carry_the_database_of_the_key() {
    let mut e = Events::new(EVERYTHING);
    e.run(&[
        &["SELECT", "3"],
        &["SET", "k", "v"],
        &["MOVE", "k", "5"],
        &["SELECT", "5"],
        &["COPY", "k", "k", "DB", "7"],
        &["RENAME", "k", "k2"],
        &["SELECT", "0"],
    ]);
    e.finish();
}

// ----------------------------------------------------------------- random

/// Commands over a few keys of every type; only deterministic replies.
fn random_command(rng: &mut StdRng) -> Vec<String> {
    let keys = ["k1", "k2", "k3", "k4"];
    let key = keys[rng.random_range(0..keys.len())].to_string();
    let other = keys[rng.random_range(0..keys.len())].to_string();
    let member = format!("m{}", rng.random_range(0..4));
    let n = rng.random_range(0..4).to_string();
    let words: Vec<String> = match rng.random_range(0..34) {
        0 => vec!["SET".into(), key, n],
        1 => vec!["DEL".into(), key, other],
        2 => vec!["INCR".into(), key],
        3 => vec!["APPEND".into(), key, member],
        4 => vec!["EXPIRE".into(), key, "100".into()],
        5 => vec!["PERSIST".into(), key],
        6 => vec!["RENAME".into(), key, other],
        7 => vec!["COPY".into(), key, other, "REPLACE".into()],
        8 => vec!["LPUSH".into(), key, member],
        9 => vec!["RPOP".into(), key],
        10 => vec!["LREM".into(), key, "0".into(), member],
        11 => vec!["LMOVE".into(), key, other, "LEFT".into(), "RIGHT".into()],
        12 => vec!["SADD".into(), key, member],
        13 => vec!["SREM".into(), key, member],
        14 => vec!["SMOVE".into(), key, other, member],
        15 => vec!["SUNIONSTORE".into(), key, other, "k1".into()],
        16 => vec!["HSET".into(), key, member, n],
        17 => vec!["HDEL".into(), key, member],
        18 => vec!["HINCRBY".into(), key, member, n],
        19 => vec!["ZADD".into(), key, n, member],
        20 => vec!["ZREM".into(), key, member],
        21 => vec!["ZINCRBY".into(), key, n, member],
        22 => vec!["ZPOPMIN".into(), key],
        23 => vec!["ZUNIONSTORE".into(), key, "2".into(), other, "k2".into()],
        24 => vec!["GETDEL".into(), key],
        25 => vec!["SETRANGE".into(), key, n, member],
        26 => vec!["LTRIM".into(), key, "1".into(), "-1".into()],
        27 => vec!["ZREMRANGEBYSCORE".into(), key, "0".into(), n],
        28 => vec!["HSETNX".into(), key, member, n],
        29 => vec!["SINTERSTORE".into(), key.clone(), other, key],
        30 => vec!["GETEX".into(), key, "PERSIST".into()],
        31 => vec!["MOVE".into(), key, "1".into()],
        32 => vec!["INCRBYFLOAT".into(), key, "0.5".into()],
        _ => vec!["SETBIT".into(), key, n, "1".into()],
    };
    words
}

#[test]
fn random_mixed_sequences_emit_the_same_events() {
    let steps = random_steps(300);
    for seed in random_seeds(1, 3) {
        let mut e = Events::new(if seed % 2 == 0 { "KEA" } else { EVERYTHING });
        e.d.context = format!("seed {seed}");
        let mut rng = StdRng::seed_from_u64(seed);
        for i in 0..steps {
            let c = random_command(&mut rng);
            let args: Vec<&str> = c.iter().map(String::as_str).collect();
            e.d.cmd(&args);
            // Several commands per marker: events of one client stay ordered.
            if i % 5 == 4 {
                e.check();
            }
        }
        e.finish();
    }
}

// --------------------------------------------------------------- key miss

/// `m`: a read-only command's lookup of a missing key is a `keymiss`.
#[test]
fn read_commands_report_key_misses() {
    let commands: &[&[&str]] = &[
        &["GET", "missing"],
        &["SET", "s", "v"],
        &["GET", "s"],
        &["MGET", "s", "m1", "m2"],
        &["EXISTS", "s", "m1", "m1"],
        &["STRLEN", "m3"],
        &["GETRANGE", "m3", "0", "1"],
        &["LRANGE", "l", "0", "-1"],
        &["LLEN", "l"],
        &["SMEMBERS", "st"],
        &["SISMEMBER", "st", "a"],
        &["HGET", "h", "f"],
        &["HGETALL", "h"],
        &["ZSCORE", "z", "a"],
        &["ZRANGE", "z", "0", "-1"],
        &["GETBIT", "b", "0"],
        &["BITCOUNT", "b"],
        &["PFCOUNT", "p"],
        &["GET", "s"],
        // Write commands that read (some) keys as Redis's lookupKeyRead.
        &["BITOP", "OR", "d1", "s1", "s2"],
        &["PFMERGE", "d2", "s3", "s4"],
        &["COPY", "s8", "d3"],
        &["SORT", "s9", "STORE", "d4"],
        &["SORT", "s", "BY", "w_*", "GET", "g_*", "STORE", "d4b"],
        &["SORT_RO", "s10"],
        &["GEORADIUS", "s12", "15", "37", "200", "km", "STORE", "d5"],
        &[
            "GEOSEARCHSTORE",
            "d6",
            "s13",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "200",
            "km",
        ],
        &["ZRANGESTORE", "d7", "s14", "0", "-1"],
        &["SADD", "set", "m"],
        &["SUNIONSTORE", "d8", "s15", "set"],
        &["SINTERSTORE", "d13", "s28"],
        &["SDIFFSTORE", "d14", "s29"],
        &["ZUNIONSTORE", "d9", "1", "s16"],
        &["ZINTERSTORE", "d15", "1", "s30"],
        &["ZDIFFSTORE", "d16", "1", "s31"],
        &["GETEX", "s25"],
        &["GETDEL", "s26"],
        &["GETSET", "s32", "v"],
        &["SET", "s33", "v", "GET"],
        &["SINTERCARD", "1", "s21"],
        &["ZINTERCARD", "1", "s22"],
        &["LPOS", "s23", "a"],
        &["BITFIELD_RO", "s24", "GET", "u8", "0"],
        &["SINTER", "s57"],
        &["ZUNION", "1", "s58"],
        &["TOUCH", "s59"],
        &["TYPE", "s60"],
        &["TTL", "s60"],
        &["DUMP", "s60"],
        &["OBJECT", "ENCODING", "s61"],
        // Write lookups: no keymiss.
        &["LMOVE", "s17", "d10", "LEFT", "LEFT"],
        &["MOVE", "s19", "1"],
        &["SMOVE", "s20", "d12", "m"],
        &["APPEND", "s34", "v"],
        &["LPOP", "s38"],
        &["HDEL", "s39", "f"],
        &["ZADD", "s40", "XX", "1", "m"],
        &["EXPIRE", "s42", "10"],
        &["SPOP", "s45"],
        &["DEL", "s66"],
    ];
    under_flags(&["KEm", "Em", "AKEm", "KEA"], commands);
}

// ---------------------------------------------------------- expired keys

/// Each write meets a key stored already expired: `expired` first, then
/// `new` and the command's events (or active expiry got there first: the
/// same sequence).
#[test]
fn writes_over_an_expired_key_emit_expired_first() {
    let writes: &[&[&str]] = &[
        &["SET", "x", "1"],
        &["MSET", "x", "1", "y", "2"],
        &["SETNX", "x", "1"],
        &["APPEND", "x", "a"],
        &["INCR", "x"],
        &["SETRANGE", "x", "1", "a"],
        &["SETBIT", "x", "3", "1"],
        &["PFADD", "x", "a"],
        &["RPUSH", "x", "a"],
        &["SADD", "x", "a"],
        &["HSET", "x", "f", "v"],
        &["ZADD", "x", "1", "a"],
        &["GEOADD", "x", "13.361389", "38.115556", "Palermo"],
        &["SUNIONSTORE", "x", "src"],
        &["ZUNIONSTORE", "x", "1", "zsrc"],
        &["SORT", "lsrc", "STORE", "x"],
        &["BITOP", "OR", "x", "y"],
        &["COPY", "y", "x"],
        &["RENAME", "y", "x"],
        &["EXPIRE", "x", "100"],
        &["DEL", "x"],
        &["GETDEL", "x"],
        &["LPUSHX", "x", "a"],
    ];
    let mut e = Events::new(EVERYTHING);
    e.run(&[
        &["SADD", "src", "m"],
        &["ZADD", "zsrc", "1", "m"],
        &["RPUSH", "lsrc", "3", "1"],
    ]);
    for w in writes {
        // y first: when x's `expired` comes (active expiry right after
        // the SET, or lazily in `w`) is timing on both servers; with
        // nothing between the SET and `w`, the order is the same either way.
        e.run(&[&["SET", "y", "v"], &["SET", "x", "old", "PXAT", "1"], w]);
    }
    e.finish();
}

#[test]
fn blocking_pops_transactions_and_scripts_emit_redis_events() {
    let pops: &[&[&str]] = &[
        &["RPUSH", "l", "a", "b", "c"],
        &["BLPOP", "l", "0"],
        &["BRPOP", "l", "0"],
        &["BLMOVE", "l", "dst", "LEFT", "RIGHT", "0"],
        &["BRPOPLPUSH", "dst", "l", "0"],
        &["BLMPOP", "0", "1", "l", "RIGHT", "COUNT", "5"],
        &["ZADD", "z", "1", "a", "2", "b", "3", "c"],
        &["BZPOPMIN", "z", "0"],
        &["BZPOPMAX", "z", "0"],
        &["BZMPOP", "0", "1", "z", "MIN", "COUNT", "3"],
        &["EVAL", "redis.call('SET', KEYS[1], 'v'); redis.call('EXPIRE', KEYS[1], 100); return redis.call('DEL', KEYS[1])", "1", "s"],
        &["EVAL", "return redis.call('HSET', KEYS[1], 'f', 'v')", "1", "h"],
    ];
    for flags in [EVERYTHING, "Kl", "Ez", "Eg"] {
        let mut e = Events::new(flags);
        for c in pops {
            e.run(&[c]);
        }
        // A transaction is one step: its events come at EXEC.
        e.run(&[
            &["MULTI"],
            &["SET", "t", "1"],
            &["INCR", "t"],
            &["LPUSH", "tl", "x"],
            &["DEL", "t"],
            &["EXEC"],
        ]);
        e.finish();
    }
}
