//! Differential tests of INFO persistence's `rdb_changes_since_last_save`
//! (Redis's `server.dirty`) against redis-server 7.0.15: after every write
//! command, including no-op writes and errors, both servers must have
//! counted the same number of changes. Each group's sequence runs four
//! ways: command by command, each command alone in MULTI/EXEC, each one
//! through `EVAL ... redis.pcall`, and the whole sequence in one
//! MULTI/EXEC (a failed command there must count nothing).
//!
//! The tables are one line per command: words split on spaces, with `$e`
//! for an empty argument, `$lib` for a function library, `$dump` for the
//! last DUMP or FUNCTION DUMP reply, and `@sleep` to let keys expire
//! (lazy expiry counts nothing). A
//! line starting with `~` has a random reply (only its count is compared).

use firn_testkit::{info, Conn, Diff, R};
use std::time::Duration;

const LIB: &str = "#!lua name=dirtylib\n\
redis.register_function('setk', function(keys, args) return redis.call('SET', keys[1], args[1]) end)";

const STRINGS: &[&str] = &[
    "SET s v",
    "SET s v NX",
    "SET s w XX",
    "SET s x NX GET",
    "SET s y XX GET",
    "SET missing v XX GET",
    "SET s v EX 100",
    "SET s v KEEPTTL",
    "SET s v BADOPT",
    "SET s v EX 0",
    "GETEX s PERSIST",
    "GETEX s PERSIST",
    "GETEX s EX 100",
    "GETEX missing EX 100",
    "GETEX s PXAT 1",
    "SET s v",
    "GETDEL s",
    "GETDEL s",
    "GETSET s a",
    "MSET a 1 b 2 c 3",
    "MSETNX a 1 d 4",
    "MSETNX d 4 e 5",
    "SETNX a 1",
    "SETNX f 1",
    "SETEX g 100 v",
    "PSETEX g 100000 v",
    "SETEX g 0 v",
    "INCR i",
    "DECR i",
    "INCRBY i 5",
    "DECRBY i 2",
    "INCRBY s x",
    "INCR s",
    "INCRBYFLOAT fl 1.5",
    "INCRBYFLOAT s 1",
    "APPEND h abc",
    "APPEND h def",
    "SETRANGE h 1 X",
    "SETRANGE h 1 $e",
    "SETRANGE nothing 0 $e",
    "SETRANGE nothing 2 X",
    "GET h",
    "SET e v PX 1",
    "@sleep",
    "GET e",
    "SET e v PX 1",
    "@sleep",
    "SET e w NX",
];

const KEYSPACE: &[&str] = &[
    "SET k v",
    "DEL k missing",
    "DEL k",
    "MSET a 1 b 2",
    "UNLINK a b c",
    "EXPIRE k 100",
    "SET k v",
    "EXPIRE k 100",
    "EXPIRE k 100 NX",
    "PEXPIRE k 100000 XX",
    "EXPIRE k x",
    "EXPIREAT k 1",
    "SET k v",
    "PEXPIREAT k 99999999999999",
    "PERSIST k",
    "PERSIST k",
    "PERSIST missing",
    "RENAME k k",
    "RENAME k k2",
    "RENAME missing x",
    "RENAMENX k2 k",
    "SET j 1",
    "RENAMENX k j",
    "COPY k c",
    "COPY k c",
    "COPY k c REPLACE",
    "COPY k c DB 1",
    "COPY missing c",
    "MOVE c 1",
    "MOVE k 2",
    "MOVE missing 2",
    "SET r v",
    "DUMP r",
    "RESTORE r 0 $dump",
    "RESTORE r 0 $dump REPLACE",
    "RESTORE r2 0 $dump",
    "RESTORE r 1 $dump REPLACE ABSTTL",
    "RESTORE r 1 $dump REPLACE ABSTTL",
    "RESTORE r 0 garbage",
    "TOUCH r r2",
];

const BITMAPS: &[&str] = &[
    "SETBIT b 7 1",
    "SETBIT b 7 1",
    "SETBIT b 7 0",
    "SETBIT b 100 0",
    "SETBIT b 100 0",
    "SETBIT b 1 2",
    "BITFIELD bf SET u8 0 255",
    "BITFIELD bf SET u8 0 255",
    "BITFIELD bf INCRBY u8 0 1",
    "BITFIELD bf SET u8 0 0 GET u8 0",
    "BITFIELD bf OVERFLOW FAIL INCRBY u8 0 300",
    "BITFIELD bf SET u8 64 1 SET u8 0 1",
    "BITFIELD bf SET u8 64 1 SET u8 0 1",
    "BITFIELD bf GET u8 0",
    "BITFIELD bf SET u8 0",
    "BITFIELD_RO bf GET u8 0",
    "BITOP AND dest b bf",
    "BITOP OR dest none1 none2",
    "BITOP OR dest none1",
    "BITOP NOT dest b bf",
];

const HASHES: &[&str] = &[
    "HSET h a 1 b 2",
    "HSET h a 1",
    "HSET h a",
    "HMSET h c 3",
    "HSETNX h a 1",
    "HSETNX h z 1",
    "HDEL h a b missing",
    "HDEL missing a",
    "HINCRBY h n 5",
    "HINCRBY h z x",
    "HINCRBYFLOAT h f 1.5",
    "HINCRBYFLOAT h c abc",
    "SET str v",
    "HSET str a 1",
    "HDEL h c n f z",
];

const LISTS: &[&str] = &[
    "RPUSH l a b c",
    "LPUSH l x",
    "LPUSHX missing a",
    "RPUSHX l y z",
    "LPOP l",
    "RPOP l 2",
    "LPOP missing",
    "LPOP l 0",
    "LSET l 0 q",
    "LSET l 99 q",
    "LINSERT l BEFORE b n",
    "LINSERT l BEFORE nope n",
    "LREM l 0 n",
    "LREM l 0 nope",
    "RPUSH l a a a",
    "LTRIM l 1 -2",
    "LTRIM l 0 -1",
    "LTRIM missing 0 1",
    "RPOPLPUSH l l2",
    "LMOVE l l LEFT RIGHT",
    "LMOVE missing l LEFT RIGHT",
    "LMPOP 2 missing l LEFT COUNT 2",
    "LMPOP 1 missing RIGHT",
    "BLPOP l 0.01",
    "BRPOP l2 0.01",
    "RPUSH l a b c d e f",
    "BLMOVE l l2 LEFT LEFT 0.01",
    "BRPOPLPUSH l l2 0.01",
    "BLMPOP 0.01 1 l LEFT COUNT 2",
    "BLPOP none 0.01",
    "BLMPOP 0.01 1 none LEFT",
    "LTRIM l 5 6",
];

const SETS: &[&str] = &[
    "SADD s a b c",
    "SADD s a d",
    "SREM s a x",
    "SREM missing a",
    "SMOVE s s2 b",
    "SADD s2 c",
    "SMOVE s s2 c",
    "SMOVE s s2 zz",
    "SMOVE s s d",
    "SPOP s",
    "SPOP s",
    "SADD p 1 2 3 4 5",
    "~SPOP p 2",
    "~SPOP p 10",
    "SPOP p 0",
    "SPOP p -1",
    "SADD x 1 2 3",
    "SADD y 2 3 4",
    "SINTERSTORE d x y",
    "SUNIONSTORE d x y",
    "SDIFFSTORE d x y",
    "SDIFFSTORE d x x",
    "SDIFFSTORE d x x",
    "SINTERSTORE d x missing",
    "SADD str2 a",
    "SET str v",
    "SADD str a",
];

const ZSETS: &[&str] = &[
    "ZADD z 1 a 2 b",
    "ZADD z 1 a",
    "ZADD z 3 a",
    "ZADD z CH 3 a 4 c",
    "ZADD z NX 5 a",
    "ZADD z XX 6 a 7 d",
    "ZADD z GT 1 a",
    "ZADD z INCR 1 a",
    "ZADD z INCR 0 a",
    "ZADD z nan a",
    "ZADD z NX XX 1 a",
    "ZINCRBY z 2 b",
    "ZINCRBY z 1 new",
    "ZREM z a missing",
    "ZREM missing a",
    "ZRANGESTORE dst z 0 -1",
    "ZRANGESTORE dst z 5 10",
    "ZRANGESTORE dst z 5 10",
    "ZREMRANGEBYRANK z 0 0",
    "ZADD z 1 m1 2 m2 3 m3 4 m4 5 m5",
    "ZREMRANGEBYSCORE z 1 2",
    "ZREMRANGEBYSCORE z 100 200",
    "ZADD lz 0 a 0 b 0 c",
    "ZREMRANGEBYLEX lz [a [b",
    "ZPOPMIN z",
    "ZPOPMAX z 2",
    "ZPOPMIN missing",
    "ZPOPMIN z 0",
    "ZMPOP 2 missing z MIN COUNT 2",
    "ZMPOP 1 missing MIN",
    "BZPOPMIN z 0.01",
    "BZPOPMAX z 0.01",
    "BZMPOP 0.01 1 z MAX COUNT 2",
    "BZPOPMIN none 0.01",
    "ZADD lz 1 x 2 y",
    "ZUNIONSTORE u 2 lz z",
    "ZINTERSTORE u 2 lz lz WEIGHTS 1 2",
    "ZINTERSTORE u 2 lz missing",
    "ZDIFFSTORE u 1 missing",
    "ZDIFFSTORE u 2 lz z",
];

const GEO: &[&str] = &[
    "GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania",
    "GEOADD g 13.361389 38.115556 Palermo",
    "GEOADD g XX 13.4 38.1 Palermo",
    "GEOADD g NX 13.4 38.1 Palermo",
    "GEOADD g CH 13.5 38.1 Palermo 14 37 Other",
    "GEOADD g 200 100 bad",
    "GEOSEARCHSTORE dst g FROMLONLAT 15 37 BYRADIUS 300 km ASC",
    "GEOSEARCHSTORE dst g FROMLONLAT 15 37 BYRADIUS 300 km ASC COUNT 1",
    "GEOSEARCHSTORE dst g FROMLONLAT 0 0 BYRADIUS 1 km",
    "GEOSEARCHSTORE dst g FROMLONLAT 0 0 BYRADIUS 1 km",
    "GEOSEARCHSTORE dst missing FROMLONLAT 0 0 BYRADIUS 1 km",
    "GEORADIUS g 15 37 300 km STORE dst",
    "GEORADIUSBYMEMBER g Palermo 500 km STOREDIST dst",
    "GEOSEARCHSTORE dst g FROMMEMBER Palermo BYBOX 600 600 km STOREDIST",
    "GEORADIUS g 15 37 300 km",
];

const HYPERLOGLOG: &[&str] = &[
    "PFADD h a b c",
    "PFADD h a",
    "PFADD h d",
    "PFADD h2",
    "PFADD h2",
    "PFCOUNT h",
    "PFCOUNT h",
    "PFCOUNT h h2",
    "PFMERGE m h h2",
    "PFMERGE m",
    "PFMERGE m2",
    "SET s notahll",
    "PFADD s a",
    "PFCOUNT missing",
    "PFDEBUG TODENSE h",
    "PFDEBUG TODENSE h",
    "PFDEBUG GETREG h2",
    "PFDEBUG ENCODING h2",
];

const SORT: &[&str] = &[
    "RPUSH sl 3 1 2",
    "SORT sl STORE out",
    "SORT sl LIMIT 0 1 STORE out",
    "SORT missing STORE out",
    "SORT missing STORE out",
    "SORT sl BY nosort GET # GET nosuch STORE out",
    "SORT sl",
    "SORT_RO sl",
    "SORT sl STORE",
];

const SERVER: &[&str] = &[
    "FLUSHDB",
    "SET a 1",
    "SET b 2",
    "FLUSHDB",
    "SET a 1",
    "FLUSHALL",
    "FLUSHALL ASYNC",
    "FLUSHALL BAD",
    "SET a 1",
    "SWAPDB 0 1",
    "SWAPDB 0 0",
    "SWAPDB 0 99",
    "SWAPDB 1 0",
    "SET c 1",
    "SET d 1",
    "FLUSHALL SYNC",
];

const FUNCTIONS: &[&str] = &[
    "FUNCTION LOAD $lib",
    "FUNCTION LOAD $lib",
    "FUNCTION LOAD REPLACE $lib",
    "FCALL setk 1 k v",
    "FCALL setk 1",
    "FUNCTION DUMP",
    "FUNCTION DELETE dirtylib",
    "FUNCTION DELETE dirtylib",
    "FUNCTION RESTORE $dump",
    "FUNCTION RESTORE $dump",
    "FUNCTION FLUSH",
    "FUNCTION FLUSH",
];

const EVAL_PCALL: &str = "return redis.pcall(unpack(ARGV))";

/// The changes counted so far (INFO persistence).
fn changes(conn: &mut Conn) -> i64 {
    info::field(conn, "persistence", "rdb_changes_since_last_save")
}
/// How a sequence is sent.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Alone,
    EachInMulti,
    EachInEval,
    AllInOneMulti,
}

struct Run {
    d: Diff,
    /// The last DUMP / FUNCTION DUMP reply (`$dump`).
    dump: Vec<u8>,
    counted: (i64, i64),
}

impl Run {
    fn new() -> Run {
        let mut d = Diff::new();
        let counted = {
            let pair = d.client();
            (changes(&mut pair.redis), changes(&mut pair.firn))
        };
        Run {
            d,
            dump: Vec::new(),
            counted,
        }
    }

    fn args(&self, line: &str) -> Vec<Vec<u8>> {
        line.split(' ')
            .map(|word| match word {
                "$e" => Vec::new(),
                "$lib" => LIB.as_bytes().to_vec(),
                "$dump" => self.dump.clone(),
                word => word.as_bytes().to_vec(),
            })
            .collect()
    }

    /// Both servers must have counted the same changes since the last call.
    fn check(&mut self, what: &str) {
        let pair = self.d.client();
        let now = (changes(&mut pair.redis), changes(&mut pair.firn));
        let delta = (now.0 - self.counted.0, now.1 - self.counted.1);
        self.counted = now;
        if delta.0 != delta.1 {
            self.d.fail(
                &format!("rdb_changes_since_last_save after {what}"),
                &R::Int(delta.0),
                &R::Int(delta.1),
            );
        }
    }

    /// Sends one command; compares its reply unless `random`.
    fn send(&mut self, args: &[Vec<u8>], random: bool) -> R {
        if random {
            let (r, _) = self.d.cmd_type_only(args);
            r
        } else {
            self.d.cmd(args)
        }
    }

    fn run(&mut self, group: &[&str], mode: Mode) {
        self.d.note(&format!("mode {mode:?}"));
        self.send(&self.args("FLUSHALL"), false);
        self.send(&self.args("FUNCTION FLUSH"), false);
        self.check("the reset");
        if mode == Mode::AllInOneMulti {
            self.send(&self.args("MULTI"), false);
        }
        for line in group {
            if *line == "@sleep" {
                // Inside one MULTI the clock stands still on both.
                if mode != Mode::AllInOneMulti {
                    std::thread::sleep(Duration::from_millis(20));
                }
                continue;
            }
            let random = line.starts_with('~');
            let args = self.args(line.trim_start_matches('~'));
            let reply = match mode {
                Mode::Alone => self.send(&args, random),
                Mode::EachInMulti => {
                    self.send(&self.args("MULTI"), false);
                    self.send(&args, false);
                    self.send(&self.args("EXEC"), random)
                }
                Mode::EachInEval => {
                    let mut eval = self.args("EVAL");
                    eval.push(EVAL_PCALL.as_bytes().to_vec());
                    eval.push(b"0".to_vec());
                    eval.extend(args.iter().cloned());
                    self.send(&eval, random)
                }
                Mode::AllInOneMulti => {
                    self.send(&args, false);
                    continue;
                }
            };
            if args[0].eq_ignore_ascii_case(b"DUMP") || line.starts_with("FUNCTION DUMP") {
                let dumped = match mode {
                    Mode::EachInMulti => reply.items().first().cloned(),
                    _ => Some(reply),
                };
                if let Some(bytes) = dumped.as_ref().and_then(R::as_bytes) {
                    self.dump = bytes.to_vec();
                }
            }
            self.check(&format!("{line} ({mode:?})"));
        }
        if mode == Mode::AllInOneMulti {
            let random = group.iter().any(|line| line.starts_with('~'));
            self.send(&self.args("EXEC"), random);
            self.check("EXEC of the whole sequence");
        }
    }
}

/// Runs `group` every way; `scripts`: also through EVAL.
fn check_group(group: &[&str], scripts: bool) {
    let mut run = Run::new();
    run.run(group, Mode::Alone);
    run.run(group, Mode::EachInMulti);
    if scripts {
        run.run(group, Mode::EachInEval);
    }
    // `$dump` needs the DUMP reply before the command that uses it.
    if !group.iter().any(|line| line.contains("$dump")) {
        run.run(group, Mode::AllInOneMulti);
    }
}

#[test]
fn strings_count_as_redis() {
    check_group(STRINGS, true);
}

#[test]
fn keyspace_commands_count_as_redis() {
    check_group(KEYSPACE, true);
}

#[test]
fn bitmaps_count_only_changed_bits() {
    check_group(BITMAPS, true);
}

#[test]
fn hashes_count_as_redis() {
    check_group(HASHES, true);
}

#[test]
fn lists_count_each_element() {
    check_group(LISTS, true);
}

#[test]
fn sets_count_as_redis() {
    check_group(SETS, true);
}

#[test]
fn sorted_sets_count_added_and_updated_members() {
    check_group(ZSETS, true);
}

#[test]
fn geo_counts_as_redis() {
    check_group(GEO, true);
}

#[test]
fn hyperloglogs_count_changed_registers() {
    check_group(HYPERLOGLOG, true);
}

#[test]
fn sort_store_counts_the_elements_stored() {
    check_group(SORT, true);
}

#[test]
fn flushes_and_swaps_count_as_redis() {
    check_group(SERVER, true);
}

#[test]
fn function_changes_count_once_each() {
    // FUNCTION is refused inside scripts on both.
    check_group(FUNCTIONS, false);
}

/// Redis 7.0 counts nothing for a list element handed to a client that had
/// blocked in BLPOP, BRPOP, BLMOVE or BRPOPLPUSH (served at once, they
/// count it); BLMPOP and the sorted-set pops count what they pop.
#[test]
fn served_blocked_pops_count_as_redis() {
    let mut run = Run::new();
    let waiter = run.d.open_client();
    for (block, push) in [
        ("BLPOP q 0", "RPUSH q a b"),
        ("BRPOP q 0", "RPUSH q a b"),
        ("BLMOVE q q2 LEFT RIGHT 0", "RPUSH q a"),
        ("BRPOPLPUSH q q2 0", "RPUSH q a"),
        ("BLMPOP 0 1 q LEFT COUNT 3", "RPUSH q a b"),
        ("BZPOPMIN zq 0", "ZADD zq 1 a 2 b"),
        ("BZMPOP 0 1 zq MAX COUNT 5", "ZADD zq 1 a 2 b"),
    ] {
        run.d.use_client(waiter);
        let args = run.args(block);
        run.d.send(&args);
        // Both servers must have the waiter blocked before the push.
        run.d.use_client(0);
        wait_blocked(&mut run.d);
        run.send(&run.args(push), false);
        run.d.use_client(waiter);
        run.d.read_both();
        run.d.use_client(0);
        run.check(&format!("{block} served by {push}"));
        run.send(&run.args("FLUSHALL"), false);
        run.check("FLUSHALL");
    }
}

/// Waits until one client is blocked on each server.
fn wait_blocked(d: &mut Diff) {
    let blocked = |conn: &mut Conn| info::field(conn, "clients", "blocked_clients");
    for _ in 0..2000 {
        let pair = d.client();
        if blocked(&mut pair.redis) == 1 && blocked(&mut pair.firn) == 1 {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("the waiter did not block on both servers");
}
