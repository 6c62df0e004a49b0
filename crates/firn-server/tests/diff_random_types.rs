//! Seeded random sequences that mix every value type on the same few keys,
//! sent to redis-server 7.0.15 and to Firn: strings, hashes, lists, sets,
//! sorted sets and HyperLogLogs, plus the keyspace commands that move or
//! copy them (RENAME, COPY, MOVE, DUMP/RESTORE, SORT). Most commands land
//! on a key of another type, so the WRONGTYPE paths are exercised as much
//! as the normal ones. Replies whose order is a hash-table order in Redis
//! are compared unordered; commands with random replies are left out.
//! After each sequence both servers' contents are compared key by key.
//!
//! `FIRN_DIFF_SEED=<n>` runs one seed; `FIRN_DIFF_STEPS=<n>` changes the
//! number of commands per seed. With `FIRN_DIFF_COLD=1` every Firn read is
//! forced through the cold path.

use firn_testkit::{
    env::{random_seeds, random_steps},
    Diff, R,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const KEYS: [&str; 4] = ["a", "b", "c", "d"];
const SEEDS_PER_TEST: u64 = 4;
const DEFAULT_STEPS: usize = 400;

enum Check {
    Exact,
    Unordered,
}

struct Gen {
    rng: StdRng,
}

impl Gen {
    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.rng.random_range(0..items.len())].clone()
    }

    fn key(&mut self) -> String {
        self.pick(&KEYS).to_string()
    }

    /// A member or value: small integers (intsets), short words, and now
    /// and then one long enough to change Redis's encoding.
    fn member(&mut self) -> String {
        match self.rng.random_range(0..10) {
            0..=3 => self.rng.random_range(-3..12).to_string(),
            4 => "x".repeat(70),
            5 => String::new(),
            _ => self
                .pick(&["m", "n", "apple", "pear", "zz", "1.5", "-0"])
                .to_string(),
        }
    }

    fn score(&mut self) -> String {
        self.pick(&[
            "0", "1", "-1", "2.5", "inf", "-inf", "1e3", "nan", "x", "(1", "3",
        ])
        .to_string()
    }

    fn index(&mut self) -> String {
        self.pick(&["0", "1", "-1", "2", "-3", "10", "-100", "x"])
            .to_string()
    }

    fn bound(&mut self) -> String {
        self.pick(&["-inf", "+inf", "0", "(0", "1", "(2.5", "x"])
            .to_string()
    }

    fn lex(&mut self) -> String {
        self.pick(&["-", "+", "[m", "(n", "[", "x", "[apple"])
            .to_string()
    }

    fn members(&mut self, min: usize, max: usize) -> Vec<String> {
        (0..self.rng.random_range(min..=max))
            .map(|_| self.member())
            .collect()
    }

    fn command(&mut self) -> (Vec<String>, Check) {
        let k = self.key();
        let k2 = self.key();
        let owned = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let with = |mut head: Vec<String>, tail: Vec<String>| {
            head.extend(tail);
            head
        };
        let mut check = Check::Exact;
        let cmd = match self.rng.random_range(0..48) {
            // strings and keyspace
            0 => owned(&["SET", &k, &self.member()]),
            1 => owned(&["GET", &k]),
            2 => owned(&["APPEND", &k, &self.member()]),
            3 => owned(&["DEL", &k]),
            4 => owned(&["TYPE", &k]),
            5 => owned(&["EXPIRE", &k, "1000"]),
            6 => owned(&["RENAME", &k, &k2]),
            7 => owned(&["COPY", &k, &k2, "REPLACE"]),
            8 => owned(&["EXISTS", &k, &k2]),
            9 => owned(&["OBJECT", "ENCODING", &k]),
            // hashes
            10 | 11 => {
                let mut c = owned(&["HSET", &k]);
                for _ in 0..self.rng.random_range(1..4) {
                    c.push(self.member());
                    c.push(self.member());
                }
                c
            }
            12 => owned(&["HGET", &k, &self.member()]),
            13 => with(owned(&["HDEL", &k]), self.members(1, 3)),
            14 => owned(&["HINCRBY", &k, &self.member(), &self.index()]),
            15 => {
                check = Check::Unordered;
                owned(&[self.pick(&["HKEYS", "HVALS"]), &k])
            }
            16 => owned(&["HLEN", &k]),
            // lists
            17 | 18 => with(
                owned(&[self.pick(&["LPUSH", "RPUSH", "LPUSHX", "RPUSHX"]), &k]),
                self.members(1, 4),
            ),
            19 => owned(&[self.pick(&["LPOP", "RPOP"]), &k]),
            20 => owned(&[self.pick(&["LPOP", "RPOP"]), &k, &self.index()]),
            21 => owned(&["LRANGE", &k, &self.index(), &self.index()]),
            22 => owned(&["LINDEX", &k, &self.index()]),
            23 => owned(&["LSET", &k, &self.index(), &self.member()]),
            24 => owned(&["LREM", &k, &self.index(), &self.member()]),
            25 => owned(&[
                "LMOVE",
                &k,
                &k2,
                self.pick(&["LEFT", "RIGHT"]),
                self.pick(&["LEFT", "RIGHT"]),
            ]),
            26 => owned(&["LLEN", &k]),
            // sets
            27 | 28 => with(owned(&["SADD", &k]), self.members(1, 4)),
            29 => with(owned(&["SREM", &k]), self.members(1, 3)),
            30 => owned(&["SISMEMBER", &k, &self.member()]),
            31 => {
                check = Check::Unordered;
                owned(&[
                    self.pick(&["SMEMBERS", "SINTER", "SUNION", "SDIFF"]),
                    &k,
                    &k2,
                ])
            }
            32 => owned(&[
                self.pick(&["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"]),
                &k,
                &k2,
                &self.key(),
            ]),
            33 => owned(&["SCARD", &k]),
            34 => owned(&["SMOVE", &k, &k2, &self.member()]),
            // sorted sets
            35 | 36 => {
                let mut c = owned(&["ZADD", &k]);
                if self.rng.random_range(0..4) == 0 {
                    c.push(self.pick(&["NX", "XX", "GT", "LT", "CH", "INCR"]).into());
                }
                for _ in 0..self.rng.random_range(1..3) {
                    c.push(self.score());
                    c.push(self.member());
                }
                c
            }
            37 => owned(&["ZSCORE", &k, &self.member()]),
            38 => owned(&["ZRANGE", &k, &self.index(), &self.index(), "WITHSCORES"]),
            39 => owned(&["ZRANGEBYSCORE", &k, &self.bound(), &self.bound()]),
            40 => owned(&["ZRANGEBYLEX", &k, &self.lex(), &self.lex()]),
            41 => with(owned(&["ZREM", &k]), self.members(1, 3)),
            42 => owned(&["ZINCRBY", &k, &self.score(), &self.member()]),
            43 => owned(&[
                self.pick(&["ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"]),
                &k,
                "2",
                &k2,
                &self.key(),
            ]),
            44 => owned(&["ZRANK", &k, &self.member()]),
            // HyperLogLog and SORT
            45 => with(owned(&["PFADD", &k]), self.members(0, 3)),
            46 => owned(&["PFCOUNT", &k]),
            _ => {
                let mut c = owned(&["SORT", &k]);
                if self.rng.random_range(0..2) == 0 {
                    c.push("ALPHA".into());
                }
                if self.rng.random_range(0..3) == 0 {
                    c.extend(owned(&["LIMIT", "1", "2"]));
                }
                c
            }
        };
        (cmd, check)
    }
}

/// Compares the whole contents of both servers, key by key.
fn compare_state(d: &mut Diff) {
    d.cmd_unordered(&["KEYS", "*"]);
    for key in KEYS {
        let kind = d.cmd(&["TYPE", key]);
        match kind.as_str().as_deref() {
            Some("string") => {
                d.cmd(&["GET", key]);
            }
            Some("hash") => {
                d.cmd_with(&["HGETALL", key], R::pairs_sorted);
            }
            Some("list") => {
                d.cmd(&["LRANGE", key, "0", "-1"]);
            }
            Some("set") => {
                d.cmd_unordered(&["SMEMBERS", key]);
            }
            Some("zset") => {
                d.cmd(&["ZRANGE", key, "0", "-1", "WITHSCORES"]);
            }
            _ => {}
        }
        d.ttl(key);
    }
}

fn run(group: u64) {
    for seed in random_seeds(group * SEEDS_PER_TEST, SEEDS_PER_TEST) {
        let mut d = Diff::new();
        d.context = format!("seed {seed} (FIRN_DIFF_SEED={seed} to rerun)");
        let mut g = Gen {
            rng: StdRng::seed_from_u64(seed),
        };
        for _ in 0..random_steps(DEFAULT_STEPS) {
            let (cmd, check) = g.command();
            match check {
                Check::Exact => d.cmd(&cmd),
                Check::Unordered => d.cmd_unordered(&cmd),
            };
        }
        compare_state(&mut d);
    }
}

#[test]
fn mixed_types_on_shared_keys_group_0() {
    run(0);
}

#[test]
fn mixed_types_on_shared_keys_group_1() {
    run(1);
}
