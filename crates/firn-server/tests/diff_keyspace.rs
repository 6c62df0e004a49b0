//! Differential tests of the generic keyspace commands against
//! redis-server 7.0.15: DEL/UNLINK/EXISTS/TYPE/TOUCH, KEYS and SCAN, RANDOMKEY,
//! the EXPIRE family and TTL queries, RENAME/COPY/MOVE, SELECT/SWAPDB, OBJECT,
//! DUMP/RESTORE. Only strings exist in this wave, so all values are strings.

use firn_testkit::{
    data::pattern,
    diff::command,
    reply::{assert_err, assert_err_prefix},
    Conn, Diff, R,
};

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

// ------------------------------------------------------------------ DEL / UNLINK / EXISTS / TYPE / TOUCH

#[test]
fn del_counts_deleted_keys_once() {
    let mut d = Diff::new();
    d.cmd(&["MSET", "a", "1", "b", "2", "c", "3"]);
    d.cmd(&["DEL", "a", "a", "missing", "b"]);
    d.cmd(&["DEL", "a"]);
    d.cmd(&["EXISTS", "a", "b", "c"]);
    d.cmd(&["DEL"]);
    d.cmd(&["DBSIZE"]);
}

#[test]
fn unlink_behaves_like_del() {
    let mut d = Diff::new();
    d.cmd(&["MSET", "a", "1", "b", "2", "c", "3"]);
    d.cmd(&["UNLINK", "a", "b", "b", "missing"]);
    d.cmd(&["UNLINK", "a"]);
    d.cmd(&["EXISTS", "a", "b", "c"]);
    d.cmd(&["UNLINK"]);
}

#[test]
fn exists_counts_duplicates() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["EXISTS", "a"]);
    d.cmd(&["EXISTS", "a", "a", "a"]);
    d.cmd(&["EXISTS", "a", "missing", "a"]);
    d.cmd(&["EXISTS", "missing"]);
    d.cmd(&["EXISTS"]);
}

#[test]
fn type_of_strings_and_missing_keys() {
    let mut d = Diff::new();
    d.cmd(&["SET", "s", "x"]);
    d.cmd(&["SET", "n", "1"]);
    d.cmd(&["TYPE", "s"]);
    d.cmd(&["TYPE", "n"]);
    d.cmd(&["TYPE", "missing"]);
    d.cmd(&["TYPE"]);
    d.cmd(&["TYPE", "a", "b"]);
}

#[test]
fn touch_counts_existing_keys() {
    let mut d = Diff::new();
    d.cmd(&["MSET", "a", "1", "b", "2"]);
    d.cmd(&["TOUCH", "a", "b", "missing", "a"]);
    d.cmd(&["TOUCH", "missing"]);
    d.cmd(&["TOUCH"]);
}

// ------------------------------------------------------------------ KEYS / SCAN / RANDOMKEY

fn load_pattern_keys(d: &mut Diff) {
    d.cmd(&[
        "MSET", "hello", "1", "hallo", "1", "hxllo", "1", "hllo", "1", "heeeello", "1", "hbllo",
        "1", "hcllo", "1", "h?llo", "1", "h*llo", "1", "h[a]llo", "1", "h\\llo", "1", "a", "1",
        "ab", "1", "abc", "1", "b", "1", "user:1", "1", "user:2", "1", "user:10", "1", "", "1",
    ]);
}

#[test]
fn keys_glob_patterns() {
    let mut d = Diff::new();
    load_pattern_keys(&mut d);
    for p in [
        "*",
        "h?llo",
        "h*llo",
        "h[ae]llo",
        "h[^e]llo",
        "h[!e]llo",
        "h[a-c]llo",
        "h[c-a]llo",
        "h\\?llo",
        "h\\*llo",
        "h\\[a\\]llo",
        "h\\\\llo",
        "user:*",
        "user:?",
        "user:??",
        "a*",
        "*b*",
        "?",
        "??",
        "",
        "[",
        "h[",
        "h[a",
        "h[a-",
        "\\",
        "*\\",
        "nomatch*",
        "[a-b]*",
        "*llo",
        "h*l*o",
        "***",
        "user:[0-9]",
        "user:[^1]*",
    ] {
        d.cmd_unordered(&["KEYS", p]);
    }
}

#[test]
fn keys_on_empty_db_and_arity() {
    let mut d = Diff::new();
    d.cmd(&["KEYS", "*"]);
    d.cmd(&["KEYS"]);
    d.cmd(&["KEYS", "a", "b"]);
}

#[test]
fn keys_does_not_return_expired_keys() {
    let mut d = Diff::new();
    d.cmd(&["SET", "live", "1"]);
    d.cmd(&["SET", "dying", "1", "PX", "20"]);
    d.sleep_ms(120);
    d.cmd_unordered(&["KEYS", "*"]);
}

#[test]
fn scan_full_iteration_returns_every_key() {
    let mut d = Diff::new();
    for i in 0..300 {
        d.cmd(&["SET", &format!("key:{i}"), "v"]);
    }
    let keys = d.scan_all(&["SCAN"], &[]);
    assert_eq!(keys.len(), 300);
    d.scan_all(&["SCAN"], &["COUNT", "7"]);
    d.scan_all(&["SCAN"], &["COUNT", "1000"]);
    d.scan_all(&["SCAN"], &["MATCH", "key:1*"]);
    d.scan_all(&["SCAN"], &["MATCH", "key:1?", "COUNT", "3"]);
    d.scan_all(&["SCAN"], &["TYPE", "string"]);
    d.scan_all(&["SCAN"], &["TYPE", "STRING", "MATCH", "*9"]);
    d.scan_all(&["SCAN"], &["TYPE", "hash"]);
    d.scan_all(&["SCAN"], &["MATCH", "nothing*"]);
}

#[test]
fn scan_on_empty_and_small_dbs() {
    let mut d = Diff::new();
    d.cmd(&["SCAN", "0"]);
    d.cmd(&["MSET", "a", "1", "b", "2", "c", "3"]);
    d.scan_all(&["SCAN"], &[]);
    d.scan_all(&["SCAN"], &["MATCH", "[ab]"]);
    d.scan_all(&["SCAN"], &["COUNT", "1"]);
}

#[test]
fn scan_errors() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["SCAN", "abc"]);
    // Redis parses the cursor with strtoull, so "-1" is a valid (huge)
    // cursor; which keys it returns depends on the hash table.
    d.cmd_with(&["SCAN", "-1"], |r| match r {
        R::Error(_) => r.clone(),
        _ => R::Simple("a scan reply".into()),
    });
    d.cmd(&["SCAN", "1.5"]);
    d.cmd(&["SCAN", "18446744073709551616"]);
    d.cmd(&["SCAN", "0", "COUNT", "0"]);
    d.cmd(&["SCAN", "0", "COUNT", "-1"]);
    d.cmd(&["SCAN", "0", "COUNT", "x"]);
    d.cmd(&["SCAN", "0", "COUNT"]);
    d.cmd(&["SCAN", "0", "MATCH"]);
    d.cmd(&["SCAN", "0", "TYPE"]);
    d.cmd(&["SCAN", "0", "FOO", "bar"]);
    d.cmd(&["SCAN", "0", "MATCH", "*", "COUNT"]);
    d.cmd(&["SCAN"]);
}

#[test]
fn randomkey_on_empty_and_nonempty_dbs() {
    let mut d = Diff::new();
    d.cmd(&["RANDOMKEY"]);
    d.cmd(&["SET", "only", "1"]);
    d.cmd(&["RANDOMKEY"]);
    d.cmd(&["MSET", "a", "1", "b", "2", "c", "3"]);
    for _ in 0..5 {
        let (r, f) = d.cmd_type_only(&["RANDOMKEY"]);
        for reply in [r, f] {
            let key = reply.as_str().unwrap_or_default();
            assert!(["only", "a", "b", "c"].contains(&key.as_str()), "{key}");
        }
    }
    d.cmd(&["RANDOMKEY", "x"]);
}

// ------------------------------------------------------------------ glob edge cases, bounded matching

/// Keys made of the bytes glob patterns care about.
fn load_glob_keys(d: &mut Diff) {
    let keys: Vec<&[u8]> = vec![
        b"a", b"b", b"A", b"ab", b"aB", b"abc", b"]", b"^", b"-", b"\\", b"*", b"?", b"[", b"a]",
        b"a\\", b"a-", b"[a]", b"\x00", b"\xff", b"\x80", b"a\x00b", b"\xffa", b"x", b"_", b"`",
    ];
    for key in keys {
        d.cmd(&[&b"SET"[..], key, b"1"]);
    }
}

#[test]
fn keys_glob_quirks_match_redis() {
    let mut d = Diff::new();
    load_glob_keys(&mut d);
    let patterns: Vec<&[u8]> = vec![
        b"[",
        b"[^",
        b"[]",
        b"[]]",
        b"[^]",
        b"[]a]",
        b"[a-]",
        b"[-a]",
        b"[a-]*",
        b"[\\",
        b"[\\]",
        b"[\\]]",
        b"[a\\",
        b"a\\",
        b"\\",
        b"\\\\",
        b"a[\\]]",
        b"[z-a]",
        b"[Z-a]",
        b"[a-\xff]",
        b"[\x80-a]",
        b"[\x00-\x7f]",
        b"[^\x00-\x7f]",
        b"*\x00*",
        b"a\x00?",
        b"?\x00?",
        b"[[]",
        b"[[-]]",
        b"[a-c-e]",
        b"[^a-b]",
        b"[^^]",
        b"*[",
        b"*]",
        b"a*[",
        b"**a",
        b"?*?",
        b"*?*",
        b"[*]",
        b"[?]",
    ];
    for p in patterns {
        d.cmd_unordered(&[&b"KEYS"[..], p]);
    }
}

/// A deterministic pattern generator over the bytes that matter to globs.
struct PatternRng(u64);

impl PatternRng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn pattern(&mut self) -> Vec<u8> {
        const BYTES: &[u8] = b"abA*?[]^-\\\xff";
        let len = self.next() % 7;
        (0..len)
            .map(|_| BYTES[(self.next() % BYTES.len() as u64) as usize])
            .collect()
    }
}

#[test]
fn keys_random_patterns_match_redis() {
    let mut d = Diff::new();
    load_glob_keys(&mut d);
    let mut rng = PatternRng(0x6b65_7973_2a3f_5b5d);
    for _ in 0..400 {
        let p = rng.pattern();
        d.cmd_unordered(&[&b"KEYS"[..], &p]);
    }
}

#[test]
fn config_get_escapes_in_classes_stay_case_sensitive() {
    let mut d = Diff::new();
    d.cmd(&["CONFIG", "GET", "[\\M]axmemory"]);
    d.cmd(&["CONFIG", "GET", "[\\m]axmemory"]);
    d.cmd(&["CONFIG", "GET", "[M]axmemory"]);
    d.cmd(&["CONFIG", "GET", "[L-N]axmemory"]);
    d.cmd(&["CONFIG", "GET", "MAXMEM?RY"]);
}

/// CVE-2022-36021: redis-server 7.0.15 answers at once; so must Firn.
#[test]
fn pathological_patterns_answer_at_once() {
    let mut d = Diff::new();
    d.cmd(&["SET", &"a".repeat(50), "1"]);
    d.cmd(&["SET", &"a".repeat(500), "1"]);
    let pattern = format!("{}b", "a*".repeat(38));
    d.cmd(&["KEYS", &pattern]);
    d.scan_all(&["SCAN"], &["MATCH", &pattern]);
    d.scan_all(&["SCAN"], &["MATCH", &pattern, "COUNT", "5000"]);
    let long = format!("{}b", "*a".repeat(400));
    d.cmd(&["KEYS", &long]);
    let matching = format!("{}a", "a*".repeat(300));
    d.cmd_unordered(&["KEYS", &matching]);
}

/// Redis caps its recursion at 1000 levels, one per run of stars
/// (CVE-2024-31228): past that a pattern no longer matches, except
/// through a trailing run of stars.
#[test]
fn glob_recursion_cap_matches_redis() {
    let mut d = Diff::new();
    d.cmd(&["SET", &"a".repeat(1010), "1"]);
    for n in [999, 1000, 1001, 1002] {
        d.cmd(&["KEYS", &format!("{}a", "a*".repeat(n))]);
        d.cmd(&["KEYS", &"a*".repeat(n)]);
        d.cmd(&["KEYS", &format!("{}*", "a**".repeat(n))]);
    }
}

#[test]
fn scan_with_a_large_count_returns_every_key() {
    let mut d = Diff::new();
    let mut batch = Vec::new();
    for i in 0..3000 {
        batch.push(command(&["SET", &format!("key:{i}"), "v"]));
    }
    d.pipeline(&batch);
    d.cmd(&["SET", "dying", "1", "PX", "20"]);
    d.sleep_ms(100);
    let keys = d.scan_all(&["SCAN"], &["COUNT", "100000"]);
    assert_eq!(keys.len(), 3000);
    d.scan_all(&["SCAN"], &["COUNT", "1001"]);
    d.scan_all(&["SCAN"], &["COUNT", "2500", "MATCH", "key:1*"]);
    d.scan_all(
        &["SCAN"],
        &["COUNT", "5000", "TYPE", "string", "MATCH", "*7"],
    );
    d.scan_all(&["SCAN"], &["COUNT", "5000", "TYPE", "list"]);
    d.cmd(&["SCAN", "0", "COUNT", "100000", "MATCH", "nomatch*"]);
}

/// Small SCAN steps whose matching would take long (long keys, long
/// pattern) move off the network thread; the keys returned do not change.
#[test]
fn scan_with_long_keys_and_a_long_pattern_returns_the_same_keys() {
    let mut d = Diff::new();
    for i in 0..30 {
        let tail = if i % 3 == 0 { "b" } else { "c" };
        d.cmd(&["SET", &format!("{}{tail}{i}", "a".repeat(5000)), "1"]);
    }
    let pattern = format!("*{}b*", "a".repeat(400));
    d.scan_all(&["SCAN"], &["MATCH", &pattern]);
    d.scan_all(&["SCAN"], &["MATCH", &pattern, "COUNT", "3"]);
    let long_pattern = format!("{}*", "a".repeat(2000));
    d.scan_all(&["SCAN"], &["MATCH", &long_pattern, "COUNT", "5"]);
}

/// KEYS runs over a snapshot taken once every write queued before it is
/// committed: writes pipelined just before it are in its answer.
#[test]
fn keys_sees_writes_pipelined_before_it() {
    let mut d = Diff::new();
    let mut batch = Vec::new();
    for i in 0..500 {
        batch.push(command(&["SET", &format!("p:{i}"), "v"]));
    }
    for c in [
        &["DEL", "p:7", "p:8"][..],
        &["SET", "q", "1"],
        &["KEYS", "q"],
        &["KEYS", "p:7"],
        &["KEYS", "p:499"],
        &["DEL", "q"],
        &["KEYS", "q"],
        &["SCAN", "0", "COUNT", "100000", "MATCH", "q"],
    ] {
        batch.push(command(c));
    }
    d.pipeline(&batch);
    d.cmd_unordered(&["KEYS", "p:?"]);
    d.cmd_with(&["KEYS", "*"], |r| R::Int(r.items().len() as i64));
}

/// RANDOMKEY answers nil only when no key is live, however many expired
/// ones come first.
#[test]
fn randomkey_passes_over_many_expired_keys() {
    let mut d = Diff::new();
    let mut batch = Vec::new();
    for i in 0..3000 {
        batch.push(command(&["SET", &format!("gone:{i}"), "v", "PX", "30"]));
    }
    d.pipeline(&batch);
    d.cmd(&["SET", "live", "1"]);
    d.sleep_ms(100);
    for _ in 0..10 {
        d.cmd(&["RANDOMKEY"]);
    }
    d.cmd(&["DEL", "live"]);
    d.pipeline(&batch);
    d.sleep_ms(100);
    d.cmd(&["RANDOMKEY"]);
}

// ------------------------------------------------------------------ EXPIRE family

#[test]
fn expire_and_pexpire_set_ttls() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["EXPIRE", "k", "100"]);
    d.ttl("k");
    d.pttl("k");
    d.cmd(&["PEXPIRE", "k", "50000"]);
    d.ttl("k");
    d.pttl("k");
    d.cmd(&["EXPIRE", "missing", "100"]);
    d.cmd(&["PEXPIRE", "missing", "100"]);
}

#[test]
fn expireat_and_pexpireat_set_absolute_times() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    let at = (now_secs() + 1000).to_string();
    d.cmd(&["EXPIREAT", "k", &at]);
    d.cmd(&["EXPIRETIME", "k"]);
    d.ttl("k");
    let at_ms = ((now_secs() + 2000) * 1000 + 123).to_string();
    d.cmd(&["PEXPIREAT", "k", &at_ms]);
    d.cmd(&["PEXPIRETIME", "k"]);
    d.cmd(&["EXPIRETIME", "k"]);
    d.cmd(&["EXPIREAT", "missing", &at]);
}

#[test]
fn ttl_queries_on_missing_and_persistent_keys() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    for c in ["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"] {
        d.cmd(&[c, "k"]);
        d.cmd(&[c, "missing"]);
        d.cmd(&[c]);
        d.cmd(&[c, "a", "b"]);
    }
}

#[test]
fn expire_in_the_past_deletes_the_key() {
    let mut d = Diff::new();
    for (c, t) in [
        ("EXPIRE", "0"),
        ("EXPIRE", "-10"),
        ("PEXPIRE", "0"),
        ("PEXPIRE", "-1"),
        ("EXPIREAT", "1"),
        ("PEXPIREAT", "1"),
        ("EXPIREAT", "0"),
        ("EXPIREAT", "-5"),
    ] {
        d.cmd(&["SET", "k", "v"]);
        d.cmd(&[c, "k", t]);
        d.cmd(&["EXISTS", "k"]);
        d.cmd(&["TTL", "k"]);
    }
    d.cmd(&["DBSIZE"]);
}

#[test]
fn expire_argument_errors() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    for c in ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"] {
        d.cmd(&[c, "k", "abc"]);
        d.cmd(&[c, "k", "1.5"]);
        d.cmd(&[c, "k", ""]);
        d.cmd(&[c, "k", "9223372036854775807"]);
        d.cmd(&[c, "k", "-9223372036854775808"]);
        d.cmd(&[c, "k", "9223372036854775"]);
        d.cmd(&[c, "k", "9223372036854776"]);
        d.cmd(&[c, "k", "9223372036854775808"]);
        d.cmd(&[c, "missing", "9223372036854775807"]);
        d.cmd(&[c, "k"]);
        d.cmd(&[c]);
    }
    d.cmd(&["TTL", "k"]);
}

#[test]
fn expire_nx_xx_gt_lt() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["EXPIRE", "k", "100", "XX"]);
    d.cmd(&["EXPIRE", "k", "100", "GT"]);
    d.cmd(&["EXPIRE", "k", "100", "LT"]);
    d.ttl("k");
    d.cmd(&["PERSIST", "k"]);
    d.cmd(&["EXPIRE", "k", "100", "NX"]);
    d.cmd(&["EXPIRE", "k", "200", "NX"]);
    d.ttl("k");
    d.cmd(&["EXPIRE", "k", "200", "XX"]);
    d.ttl("k");
    d.cmd(&["EXPIRE", "k", "100", "GT"]);
    d.cmd(&["EXPIRE", "k", "300", "GT"]);
    d.ttl("k");
    d.cmd(&["EXPIRE", "k", "400", "LT"]);
    d.cmd(&["EXPIRE", "k", "50", "LT"]);
    d.ttl("k");
    d.cmd(&["PEXPIRE", "k", "10000", "lt"]);
    d.pttl("k");
    // 9 s, not 10: "not greater" must not depend on both servers running
    // the two commands within one millisecond.
    d.cmd(&["EXPIRE", "k", "9", "XX", "GT"]);
    d.cmd(&["EXPIRE", "k", "1000", "GT", "XX"]);
    d.ttl("k");
    d.cmd(&["EXPIRE", "missing", "10", "NX"]);
    d.cmd(&["EXPIRE", "missing", "10", "XX"]);
}

#[test]
fn expire_gt_lt_with_past_times_and_persistent_keys() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["EXPIRE", "k", "-1", "GT"]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&["EXPIRE", "k", "-1", "LT"]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&["SET", "k", "v", "EX", "100"]);
    d.cmd(&["EXPIRE", "k", "0", "GT"]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&["EXPIRE", "k", "0", "NX"]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&["EXPIREAT", "k", "1", "XX"]);
    d.cmd(&["EXISTS", "k"]);
}

#[test]
fn expire_incompatible_options() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    let r = d.cmd(&["EXPIRE", "k", "10", "NX", "XX"]);
    assert_err(
        &r,
        "ERR NX and XX, GT or LT options at the same time are not compatible",
    );
    d.cmd(&["EXPIRE", "k", "10", "NX", "GT"]);
    d.cmd(&["EXPIRE", "k", "10", "NX", "LT"]);
    let r = d.cmd(&["EXPIRE", "k", "10", "GT", "LT"]);
    assert_err(
        &r,
        "ERR GT and LT options at the same time are not compatible",
    );
    d.cmd(&["PEXPIRE", "k", "10", "LT", "GT"]);
    let r = d.cmd(&["EXPIRE", "k", "10", "FOO"]);
    assert_err(&r, "ERR Unsupported option FOO");
    d.cmd(&["EXPIREAT", "k", "10", "NX", "NX"]);
    d.cmd(&["PEXPIREAT", "k", "10", "xx", "foo"]);
    d.cmd(&["EXPIRE", "missing", "10", "GT", "LT"]);
    d.cmd(&["EXPIRE", "k", "abc", "GT", "LT"]);
    d.cmd(&["TTL", "k"]);
}

#[test]
fn persist_removes_the_ttl() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v", "EX", "100"]);
    d.cmd(&["PERSIST", "k"]);
    d.cmd(&["PERSIST", "k"]);
    d.cmd(&["TTL", "k"]);
    d.cmd(&["PERSIST", "missing"]);
    d.cmd(&["PERSIST"]);
}

#[test]
fn a_key_with_px_expires() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v", "PX", "50"]);
    d.cmd(&["SET", "stay", "v"]);
    d.cmd(&["GET", "k"]);
    d.sleep_ms(200);
    d.cmd(&["GET", "k"]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&["TTL", "k"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["SET", "k2", "v"]);
    d.cmd(&["PEXPIRE", "k2", "50"]);
    d.sleep_ms(200);
    d.cmd(&["EXISTS", "k2"]);
    d.cmd(&["GET", "k2"]);
    d.cmd(&["DBSIZE"]);
}

#[test]
fn expired_keys_can_be_recreated() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "old", "PX", "30"]);
    d.sleep_ms(150);
    d.cmd(&["SET", "k", "new", "NX"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["TTL", "k"]);
    d.cmd(&["SET", "n", "5", "PX", "30"]);
    d.sleep_ms(150);
    d.cmd(&["INCR", "n"]);
    d.cmd(&["APPEND", "a", "x"]);
    d.cmd(&["SETRANGE", "n", "3", "x"]);
    d.cmd(&["GET", "n"]);
}

// ------------------------------------------------------------------ RENAME / RENAMENX

#[test]
fn rename_moves_value_and_ttl() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "1", "EX", "100"]);
    d.cmd(&["SET", "b", "2"]);
    d.cmd(&["RENAME", "a", "c"]);
    d.cmd(&["GET", "c"]);
    d.ttl("c");
    d.cmd(&["EXISTS", "a"]);
    d.cmd(&["RENAME", "b", "c"]);
    d.cmd(&["GET", "c"]);
    d.cmd(&["TTL", "c"]);
    let r = d.cmd(&["RENAME", "missing", "x"]);
    assert_err(&r, "ERR no such key");
    d.cmd(&["RENAME", "c", "c"]);
    d.cmd(&["RENAME", "missing", "missing"]);
    d.cmd(&["GET", "c"]);
    d.cmd(&["RENAME", "c"]);
}

#[test]
fn renamenx_only_renames_to_missing_keys() {
    let mut d = Diff::new();
    d.cmd(&["MSET", "a", "1", "b", "2"]);
    d.cmd(&["RENAMENX", "a", "b"]);
    d.cmd(&["RENAMENX", "a", "c"]);
    d.cmd(&["MGET", "a", "b", "c"]);
    d.cmd(&["RENAMENX", "missing", "x"]);
    d.cmd(&["RENAMENX", "c", "c"]);
    d.cmd(&["RENAMENX", "missing", "missing"]);
    d.cmd(&["RENAMENX", "c"]);
}

// ------------------------------------------------------------------ COPY / MOVE / SELECT / SWAPDB

#[test]
fn copy_within_and_across_dbs() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "1", "EX", "100"]);
    d.cmd(&["COPY", "a", "b"]);
    d.cmd(&["GET", "b"]);
    d.ttl("b");
    d.cmd(&["SET", "c", "3"]);
    d.cmd(&["COPY", "a", "c"]);
    d.cmd(&["GET", "c"]);
    d.cmd(&["COPY", "a", "c", "REPLACE"]);
    d.cmd(&["GET", "c"]);
    d.ttl("c");
    d.cmd(&["COPY", "a", "a", "DB", "1"]);
    d.cmd(&["COPY", "a", "x", "db", "2", "replace"]);
    d.cmd(&["COPY", "missing", "x"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["GET", "a"]);
    d.ttl("a");
    d.cmd(&["SELECT", "2"]);
    d.cmd(&["GET", "x"]);
    d.cmd(&["DBSIZE"]);
}

#[test]
fn copy_errors() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "1"]);
    let r = d.cmd(&["COPY", "a", "a"]);
    assert_err(&r, "ERR source and destination objects are the same");
    d.cmd(&["COPY", "a", "a", "DB", "0"]);
    d.cmd(&["COPY", "a", "a", "REPLACE"]);
    d.cmd(&["COPY", "a", "b", "DB", "16"]);
    d.cmd(&["COPY", "a", "b", "DB", "-1"]);
    d.cmd(&["COPY", "a", "b", "DB", "x"]);
    d.cmd(&["COPY", "a", "b", "DB"]);
    d.cmd(&["COPY", "a", "b", "FOO"]);
    d.cmd(&["COPY", "missing", "missing"]);
    d.cmd(&["COPY", "a"]);
    d.cmd(&["DBSIZE"]);
}

#[test]
fn move_between_dbs() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "1", "EX", "100"]);
    d.cmd(&["MOVE", "a", "1"]);
    d.cmd(&["EXISTS", "a"]);
    d.cmd(&["MOVE", "a", "1"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["GET", "a"]);
    d.ttl("a");
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["SET", "a", "2"]);
    d.cmd(&["MOVE", "a", "1"]);
    d.cmd(&["GET", "a"]);
    let r = d.cmd(&["MOVE", "a", "0"]);
    assert_err(&r, "ERR source and destination objects are the same");
    d.cmd(&["MOVE", "a", "16"]);
    d.cmd(&["MOVE", "a", "-1"]);
    d.cmd(&["MOVE", "a", "x"]);
    d.cmd(&["MOVE", "missing", "0"]);
    d.cmd(&["MOVE", "missing", "1"]);
    d.cmd(&["MOVE", "a"]);
}

#[test]
fn select_isolates_databases() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "db0"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SET", "k", "db1"]);
    d.cmd(&["SET", "only1", "x"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["SELECT", "15"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["DBSIZE"]);
    d.cmd_unordered(&["KEYS", "*"]);
    d.cmd(&["FLUSHDB"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["DBSIZE"]);
}

#[test]
fn swapdb_exchanges_databases() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "db0"]);
    d.cmd(&["SET", "t", "x", "EX", "100"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["SET", "k", "db1"]);
    d.cmd(&["SWAPDB", "0", "1"]);
    d.cmd(&["GET", "k"]);
    d.ttl("t");
    d.cmd(&["DBSIZE"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["SWAPDB", "0", "0"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SWAPDB", "1", "5"]);
    d.cmd(&["SELECT", "5"]);
    d.cmd(&["GET", "t"]);
}

#[test]
fn swapdb_errors() {
    let mut d = Diff::new();
    d.cmd(&["SWAPDB", "0", "16"]);
    d.cmd(&["SWAPDB", "16", "0"]);
    d.cmd(&["SWAPDB", "-1", "0"]);
    d.cmd(&["SWAPDB", "a", "1"]);
    d.cmd(&["SWAPDB", "0", "b"]);
    d.cmd(&["SWAPDB", "0"]);
    d.cmd(&["SWAPDB", "0", "1", "2"]);
}

// ------------------------------------------------------------------ OBJECT

#[test]
fn object_encoding_of_strings() {
    let mut d = Diff::new();
    let long44 = "x".repeat(44);
    let long45 = "x".repeat(45);
    for v in [
        "1",
        "123",
        "-5",
        "0",
        "12345678",
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775808",
        "007",
        "+1",
        " 1",
        "1.5",
        "",
        "hello",
        long44.as_str(),
        long45.as_str(),
    ] {
        d.cmd(&["SET", "k", v]);
        d.cmd(&["OBJECT", "ENCODING", "k"]);
    }
    d.cmd(&["OBJECT", "ENCODING", "missing"]);
}

#[test]
fn object_encoding_after_modifications() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "abc"]);
    d.cmd(&["APPEND", "k", "def"]);
    d.cmd(&["OBJECT", "ENCODING", "k"]);
    d.cmd(&["SET", "n", "10"]);
    d.cmd(&["APPEND", "n", "1"]);
    d.cmd(&["OBJECT", "ENCODING", "n"]);
    d.cmd(&["INCR", "n"]);
    d.cmd(&["OBJECT", "ENCODING", "n"]);
    d.cmd(&["SET", "r", "abc"]);
    d.cmd(&["SETRANGE", "r", "1", "x"]);
    d.cmd(&["OBJECT", "ENCODING", "r"]);
    d.cmd(&["SETBIT", "b", "1", "1"]);
    d.cmd(&["OBJECT", "ENCODING", "b"]);
    d.cmd(&["INCRBYFLOAT", "f", "1.5"]);
    d.cmd(&["OBJECT", "ENCODING", "f"]);
    d.cmd(&["INCRBYFLOAT", "g", "2"]);
    d.cmd(&["OBJECT", "ENCODING", "g"]);
    d.cmd(&["APPEND", "new", "12"]);
    d.cmd(&["OBJECT", "ENCODING", "new"]);
    d.cmd(&["GETSET", "gs", "12"]);
    d.cmd(&["OBJECT", "ENCODING", "gs"]);
    d.cmd(&["MSET", "m1", "5", "m2", "five"]);
    d.cmd(&["OBJECT", "ENCODING", "m1"]);
    d.cmd(&["OBJECT", "ENCODING", "m2"]);
    d.cmd(&["SET", "big", &"y".repeat(100_000)]);
    d.cmd(&["OBJECT", "ENCODING", "big"]);
}

#[test]
fn object_refcount_of_shared_and_plain_values() {
    let mut d = Diff::new();
    for v in ["1", "9999", "10000", "-1", "abc", "123456789"] {
        d.cmd(&["SET", "k", v]);
        d.cmd(&["OBJECT", "REFCOUNT", "k"]);
    }
    d.cmd(&["OBJECT", "REFCOUNT", "missing"]);
}

#[test]
fn object_help_freq_idletime_and_errors() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["OBJECT", "HELP"]);
    d.cmd(&["OBJECT", "help"]);
    let r = d.cmd(&["OBJECT", "FREQ", "k"]);
    assert_err_prefix(&r, "ERR An LFU maxmemory policy is not selected");
    d.cmd(&["OBJECT", "FREQ", "missing"]);
    d.cmd_type_only(&["OBJECT", "IDLETIME", "k"]);
    d.cmd(&["OBJECT", "IDLETIME", "missing"]);
    d.cmd(&["OBJECT", "FOO", "k"]);
    d.cmd(&["OBJECT"]);
    d.cmd(&["OBJECT", "ENCODING"]);
    d.cmd(&["OBJECT", "ENCODING", "a", "b"]);
    d.cmd(&["OBJECT", "HELP", "extra"]);
}

// ------------------------------------------------------------------ DUMP / RESTORE

#[test]
fn dump_of_short_and_integer_strings_is_identical() {
    let mut d = Diff::new();
    for v in [
        "1",
        "-1",
        "0",
        "127",
        "128",
        "-128",
        "-129",
        "32767",
        "32768",
        "-32769",
        "2147483647",
        "2147483648",
        "-2147483649",
        "9223372036854775807",
        "007",
        "",
        "hello",
        "12345678901234567890",
        "abcdefghijklmnopqrst",
    ] {
        d.cmd(&["SET", "k", v]);
        d.cmd(&["DUMP", "k"]);
    }
    d.cmd(&["DUMP", "missing"]);
}

#[test]
fn restore_round_trips_values() {
    let mut d = Diff::new();
    let values: Vec<Vec<u8>> = vec![
        b"short".to_vec(),
        b"42".to_vec(),
        "x".repeat(100).into_bytes(),
        pattern(1000, 3),
        pattern(200_000, 4),
        (0..=255u8).collect(),
    ];
    for (i, v) in values.iter().enumerate() {
        let src = format!("src{i}");
        let dst = format!("dst{i}");
        d.cmd(&[b"SET".as_slice(), src.as_bytes(), v]);
        // Each server restores its own DUMP payload.
        let pair = d.client();
        let rp = pair.redis.cmd(&["DUMP", &src]);
        let fp = pair.firn.cmd(&["DUMP", &src]);
        let restore = |conn: &mut Conn, payload: &R| {
            let payload = payload.as_bytes().unwrap_or_default().to_vec();
            conn.send(&[b"RESTORE", dst.as_bytes(), b"0", &payload]);
            conn.read_reply().1
        };
        let r = restore(&mut pair.redis, &rp);
        let f = restore(&mut pair.firn, &fp);
        if r != f {
            d.fail(&format!("RESTORE {dst} 0 <own DUMP of {src}>"), &r, &f);
        }
        d.cmd(&["GET", &dst]);
        d.cmd(&["STRLEN", &dst]);
        d.cmd(&["TTL", &dst]);
    }
}

#[test]
fn restore_accepts_payloads_from_the_other_server() {
    let mut d = Diff::new();
    // Long repetitive strings make redis use LZF compression in DUMP.
    let values: Vec<Vec<u8>> = vec![
        b"7".to_vec(),
        b"-100000".to_vec(),
        b"plain".to_vec(),
        "ab".repeat(50).into_bytes(),
        "z".repeat(70_000).into_bytes(),
        pattern(5000, 9),
    ];
    for (i, v) in values.iter().enumerate() {
        let src = format!("src{i}");
        d.cmd(&[b"SET".as_slice(), src.as_bytes(), v]);
        let pair = d.client();
        let rp = pair.redis.cmd(&["DUMP", &src]);
        let fp = pair.firn.cmd(&["DUMP", &src]);
        let (Some(rp), Some(fp)) = (
            rp.as_bytes().map(<[u8]>::to_vec),
            fp.as_bytes().map(<[u8]>::to_vec),
        ) else {
            d.fail("DUMP returned no payload", &rp, &fp);
        };
        let from_redis = format!("from_redis{i}");
        let from_firn = format!("from_firn{i}");
        d.cmd(&[b"RESTORE".as_slice(), from_redis.as_bytes(), b"0", &rp]);
        d.cmd(&[b"RESTORE".as_slice(), from_firn.as_bytes(), b"0", &fp]);
        d.cmd(&["GET", &from_redis]);
        d.cmd(&["GET", &from_firn]);
        d.cmd(&["OBJECT", "ENCODING", &from_redis]);
    }
}

#[test]
fn restore_with_ttl_replace_and_absttl() {
    let mut d = Diff::new();
    d.cmd(&["SET", "src", "value"]);
    let payload = d
        .cmd(&["DUMP", "src"])
        .as_bytes()
        .unwrap_or_default()
        .to_vec();
    let restore = |d: &mut Diff, extra: &[&str]| {
        let mut args: Vec<Vec<u8>> = vec![b"RESTORE".to_vec()];
        let mut rest: Vec<Vec<u8>> = extra.iter().map(|a| a.as_bytes().to_vec()).collect();
        // extra = [key, ttl, options...]; the payload goes after the ttl.
        let tail = rest.split_off(2.min(rest.len()));
        args.extend(rest);
        args.push(payload.clone());
        args.extend(tail);
        d.cmd(&args)
    };
    restore(&mut d, &["a", "100000"]);
    d.pttl("a");
    let r = restore(&mut d, &["a", "0"]);
    assert_err(&r, "BUSYKEY Target key name already exists.");
    restore(&mut d, &["a", "0", "REPLACE"]);
    d.cmd(&["TTL", "a"]);
    let at_ms = ((now_secs() + 500) * 1000).to_string();
    restore(&mut d, &["b", &at_ms, "ABSTTL"]);
    d.ttl("b");
    restore(&mut d, &["c", "1000", "ABSTTL"]);
    d.cmd(&["EXISTS", "c"]);
    restore(&mut d, &["a", "1", "ABSTTL", "REPLACE"]);
    d.cmd(&["EXISTS", "a"]);
    restore(&mut d, &["e", "-1"]);
    restore(&mut d, &["e", "abc"]);
    restore(&mut d, &["e", "0", "FOO"]);
    restore(&mut d, &["e", "0", "IDLETIME", "10"]);
    d.cmd(&["EXISTS", "e"]);
    restore(&mut d, &["f", "0", "IDLETIME", "-1"]);
    restore(&mut d, &["f", "0", "IDLETIME"]);
    restore(&mut d, &["f", "0", "FREQ", "5"]);
    restore(&mut d, &["f", "0", "FREQ", "300"]);
    restore(&mut d, &["f", "0", "IDLETIME", "1", "FREQ", "1"]);
    d.cmd(&["RESTORE", "g", "0"]);
    d.cmd(&["GET", "e"]);
}

#[test]
fn restore_rejects_bad_payloads() {
    let mut d = Diff::new();
    let r = d.cmd(&["RESTORE", "k", "0", "garbage"]);
    assert_err(&r, "ERR DUMP payload version or checksum are wrong");
    d.cmd(&["RESTORE", "k", "0", ""]);
    d.cmd(&["RESTORE", "k", "0", "0123456789"]);
    d.cmd(&["SET", "src", "value"]);
    let mut payload = d
        .cmd(&["DUMP", "src"])
        .as_bytes()
        .unwrap_or_default()
        .to_vec();
    // Flip a byte of the value: the checksum no longer matches.
    payload[3] ^= 0x20;
    d.cmd(&[b"RESTORE".as_slice(), b"k", b"0", &payload]);
    // A payload from a future RDB version.
    let mut future = d
        .cmd(&["DUMP", "src"])
        .as_bytes()
        .unwrap_or_default()
        .to_vec();
    let n = future.len();
    future[n - 10] = 0xff;
    d.cmd(&[b"RESTORE".as_slice(), b"k", b"0", &future]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&["DUMP"]);
    d.cmd(&["DUMP", "a", "b"]);
}
