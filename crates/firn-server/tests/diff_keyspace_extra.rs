//! More differential tests of the keyspace group against redis-server
//! 7.0.15, next to diff_keyspace.rs: expiry as every keyspace command sees
//! it, full SCAN iterations over mixed keys, COPY/MOVE/RENAME of chunked
//! (> 64 KiB) strings across databases, DUMP/RESTORE of large and
//! hand-made payloads, and the numeric edge cases of cursors, DB indexes
//! and TTLs near i64::MAX.

use firn_testkit::{data::pattern, diff::command, reply::assert_err, Diff, Kind, Server, R};

/// Builds one command from byte-string parts.
fn cmd(parts: &[&[u8]]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.to_vec()).collect()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Pseudo-random bytes: LZF cannot shrink them, so Redis's DUMP stores them
/// uncompressed and the two servers' payloads are byte-identical.
fn incompressible(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// Redis's CRC-64 (Jones polynomial, reflected), for hand-made payloads.
fn crc64(data: &[u8]) -> u64 {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5;
    let mut crc = 0u64;
    for &byte in data {
        crc ^= u64::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// A DUMP payload: `body`, the RDB version, the CRC-64 of both.
fn payload(body: &[u8], rdb_version: u16) -> Vec<u8> {
    let mut out = body.to_vec();
    out.extend_from_slice(&rdb_version.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

fn bytes_of(r: &R) -> Vec<u8> {
    r.as_bytes().unwrap_or_default().to_vec()
}

// ------------------------------------------------------------------ expiry

#[test]
fn an_expired_key_is_gone_for_every_keyspace_command() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v", "PX", "100"]);
    d.cmd(&["SET", "n", "5"]);
    d.cmd(&["PEXPIRE", "n", "100"]);
    d.cmd(&["SET", "big", &"b".repeat(70_000)]);
    d.cmd(&["PEXPIREAT", "big", &(now_ms() + 100).to_string()]);
    d.cmd(&["SET", "r", "v", "EX", "100"]);
    d.cmd(&["RENAME", "r", "renamed"]);
    d.cmd(&["PEXPIRE", "renamed", "100"]);
    d.cmd(&["EXISTS", "k", "n", "big", "renamed"]);
    d.cmd(&["TYPE", "k"]);
    d.pttl("k");
    d.sleep_ms(300);
    for key in ["k", "n", "big", "renamed"] {
        d.cmd(&["EXISTS", key]);
        d.cmd(&["TYPE", key]);
        d.cmd(&["TTL", key]);
        d.cmd(&["PTTL", key]);
        d.cmd(&["EXPIRETIME", key]);
        d.cmd(&["PEXPIRETIME", key]);
        d.cmd(&["OBJECT", "ENCODING", key]);
        d.cmd(&["OBJECT", "REFCOUNT", key]);
        d.cmd(&["DUMP", key]);
        d.cmd(&["PERSIST", key]);
        d.cmd(&["EXPIRE", key, "100"]);
        d.cmd(&["RENAME", key, "dst"]);
        d.cmd(&["RENAMENX", key, "dst"]);
        d.cmd(&["COPY", key, "dst"]);
        d.cmd(&["MOVE", key, "1"]);
        d.cmd(&["GET", key]);
    }
    d.cmd(&["TOUCH", "k", "n", "big", "renamed"]);
    d.cmd(&["DEL", "k", "n", "big", "renamed"]);
    d.cmd(&["UNLINK", "k"]);
    d.cmd(&["KEYS", "*"]);
    d.cmd(&["RANDOMKEY"]);
    d.scan_all(&["SCAN"], &[]);
    d.cmd(&["DBSIZE"]);
}

#[test]
fn keys_scan_and_randomkey_skip_expired_keys() {
    let mut d = Diff::new();
    for i in 0..40 {
        let ttl = if i % 2 == 0 { "100" } else { "100000" };
        d.cmd(&["SET", &format!("t:{i}"), "v", "PX", ttl]);
    }
    d.cmd(&["SET", "dying", "v", "PX", "100"]);
    d.sleep_ms(300);
    d.cmd_unordered(&["KEYS", "*"]);
    d.cmd_unordered(&["KEYS", "t:1*"]);
    d.scan_all(&["SCAN"], &["COUNT", "3"]);
    d.scan_all(&["SCAN"], &["MATCH", "t:?", "TYPE", "string"]);
    for _ in 0..10 {
        let (r, f) = d.cmd_type_only(&["RANDOMKEY"]);
        for reply in [r, f] {
            let key = reply.as_str().unwrap_or_default();
            let n: u32 = key
                .strip_prefix("t:")
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            assert!(n % 2 == 1, "RANDOMKEY returned an expired key: {key}");
        }
    }
    d.cmd(&["DBSIZE"]);
}

#[test]
fn restore_and_expire_with_short_ttls_expire() {
    let mut d = Diff::new();
    d.cmd(&["SET", "src", "value"]);
    let dump = bytes_of(&d.cmd(&["DUMP", "src"]));
    d.cmd(&cmd(&[b"RESTORE", b"r", b"100", &dump]));
    let at = (now_ms() + 100).to_string();
    d.cmd(&cmd(&[b"RESTORE", b"a", at.as_bytes(), &dump, b"ABSTTL"]));
    d.cmd(&["SET", "e", "v"]);
    d.cmd(&["EXPIREAT", "e", &(now_ms() / 1000 + 100).to_string()]);
    d.cmd(&["PEXPIRE", "e", "100", "LT"]);
    d.cmd(&["EXISTS", "r", "a", "e"]);
    d.sleep_ms(300);
    d.cmd(&["EXISTS", "r", "a", "e", "src"]);
    d.cmd(&cmd(&[b"RESTORE", b"r", b"0", &dump]));
    d.cmd(&["GET", "r"]);
    d.cmd(&["TTL", "r"]);
}

#[test]
fn ttls_near_the_end_of_time() {
    let mut d = Diff::new();
    for at in [
        "9223372036854775807",
        "9223372036854775307",
        "9223372036854775308",
        "9223372036854775000",
    ] {
        d.cmd(&["SET", "k", "v"]);
        d.cmd(&["PEXPIREAT", "k", at]);
        d.cmd(&["EXPIRETIME", "k"]);
        d.cmd(&["PEXPIRETIME", "k"]);
        d.cmd_approx(&["TTL", "k"], 1);
        d.cmd_approx(&["PTTL", "k"], 1000);
    }
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["EXPIREAT", "k", "9223372036854775"]);
    d.cmd(&["PEXPIRETIME", "k"]);
    d.cmd(&["EXPIREAT", "k", "9223372036854776"]);
    d.cmd(&["EXPIRE", "k", "-9223372036854775"]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["EXPIRE", "k", "-9223372036854776"]);
    d.cmd(&["PEXPIRE", "k", "-9223372036854775808"]);
    d.cmd(&["EXISTS", "k"]);
}

#[test]
fn restore_with_ttls_that_overflow() {
    let mut d = Diff::new();
    d.cmd(&["SET", "src", "value"]);
    let dump = bytes_of(&d.cmd(&["DUMP", "src"]));
    // A relative TTL so large that "now + ttl" overflows lands in the past
    // in Redis: the reply is OK and nothing is stored.
    d.cmd(&cmd(&[b"RESTORE", b"a", b"9223372036854775807", &dump]));
    d.cmd(&["EXISTS", "a"]);
    let almost = (i64::MAX as u64 - now_ms() + 60_000).to_string();
    d.cmd(&cmd(&[b"RESTORE", b"b", almost.as_bytes(), &dump]));
    d.cmd(&["EXISTS", "b"]);
    d.cmd(&cmd(&[
        b"RESTORE",
        b"c",
        b"9223372036854775807",
        &dump,
        b"ABSTTL",
    ]));
    d.cmd(&["PEXPIRETIME", "c"]);
    d.cmd(&["EXPIRETIME", "c"]);
    d.cmd(&cmd(&[
        b"RESTORE", b"c", b"1", &dump, b"ABSTTL", b"REPLACE",
    ]));
    d.cmd(&["EXISTS", "c"]);
    d.cmd(&cmd(&[b"RESTORE", b"d", b"9223372036854775808", &dump]));
}

// ------------------------------------------------------------------ SCAN

fn load_mixed_keys(d: &mut Diff) {
    let mut pipeline = Vec::new();
    for i in 0..400 {
        let key = match i % 4 {
            0 => format!("user:{i}"),
            1 => format!("session:{i}:data"),
            2 => format!("h[{i}]"),
            _ => format!("*star{i}"),
        };
        pipeline.push(command(&["SET", &key, &i.to_string()]));
    }
    pipeline.push(command(&["SET", "a\\b", "escaped"]));
    pipeline.push(command(&["SET", "", "empty key"]));
    pipeline.push(command(&["SET", "big", &"q".repeat(70_000)]));
    d.pipeline(&pipeline);
}

#[test]
fn scan_full_iterations_match_keys() {
    let mut d = Diff::new();
    load_mixed_keys(&mut d);
    let all = d.scan_all(&["SCAN"], &[]);
    assert_eq!(all.len(), 403);
    for opts in [
        &["COUNT", "1"][..],
        &["COUNT", "10"],
        &["COUNT", "17"],
        &["COUNT", "100000"],
        &["MATCH", "user:*"],
        &["MATCH", "user:1?", "COUNT", "5"],
        &["MATCH", "session:*:data", "COUNT", "50"],
        &["MATCH", "h\\[1*\\]"],
        &["MATCH", "h[[]2*"],
        &["MATCH", "\\**"],
        &["MATCH", "*[^0-8]"],
        &["MATCH", "a\\\\b"],
        &["MATCH", ""],
        &["MATCH", "*"],
        &["TYPE", "string"],
        &["TYPE", "String", "COUNT", "7"],
        &["TYPE", "list"],
        &["TYPE", "zset", "MATCH", "*"],
        &["TYPE", "nosuchtype"],
        &["MATCH", "user:*", "TYPE", "string", "COUNT", "3"],
        &["COUNT", "3", "MATCH", "nothing", "MATCH", "user:3*"],
        &["count", "2", "match", "*9", "type", "STRING"],
    ] {
        d.scan_all(&["SCAN"], opts);
    }
    for pattern in ["*", "user:*", "h\\[1*", "*[^0-8]", "", "big", "a\\\\b"] {
        d.cmd_unordered(&["KEYS", pattern]);
    }
}

#[test]
fn scan_is_per_database() {
    let mut d = Diff::new();
    for i in 0..30 {
        d.cmd(&["SET", &format!("zero:{i}"), "v"]);
    }
    d.cmd(&["SELECT", "7"]);
    for i in 0..20 {
        d.cmd(&["SET", &format!("seven:{i}"), "v"]);
    }
    let seven = d.scan_all(&["SCAN"], &["COUNT", "4"]);
    assert_eq!(seven.len(), 20);
    d.cmd_unordered(&["KEYS", "*"]);
    d.cmd(&["SELECT", "0"]);
    let zero = d.scan_all(&["SCAN"], &["COUNT", "4"]);
    assert_eq!(zero.len(), 30);
    d.cmd(&["SELECT", "8"]);
    d.cmd(&["SCAN", "0"]);
    d.cmd(&["KEYS", "*"]);
    d.cmd(&["RANDOMKEY"]);
}

#[test]
fn scan_cursor_and_count_parsing() {
    let mut d = Diff::new();
    d.cmd(&["SET", "only", "1"]);
    // Every spelling of cursor 0 that strtoul accepts starts a scan.
    for cursor in ["0", "", "+0", "-0", "00", "000"] {
        d.cmd(&["SCAN", cursor]);
    }
    for cursor in [
        "++1", "+", "-", " 0", "0 ", "\t0", "0x1", "1e3", "1.0", "abc",
    ] {
        let r = d.cmd(&["SCAN", cursor]);
        assert_err(&r, "ERR invalid cursor");
    }
    d.cmd(&["SCAN", "abc", "COUNT", "0"]);
    d.cmd(&["SCAN", "0", "COUNT", "9223372036854775807"]);
    d.cmd(&["SCAN", "0", "COUNT", "9223372036854775808"]);
    d.cmd(&["SCAN", "0", "COUNT", "-9223372036854775808"]);
    d.cmd(&["SCAN", "0", "COUNT", "1", "COUNT", "0"]);
    d.cmd(&["SCAN", "0", "COUNT", "01"]);
    d.cmd(&["SCAN", "0", "MATCH", "o*", "BOGUS"]);
    d.cmd(&["SCAN", "0", "TYPE", "string", "TYPE"]);
}

// ------------------------------------------------------------------ COPY / MOVE / RENAME of chunked values

#[test]
fn copy_and_move_across_databases() {
    let mut d = Diff::new();
    let big = pattern(200_000, 1);
    d.cmd(&cmd(&[b"SET", b"big", &big, b"EX", b"1000"]));
    d.cmd(&["SET", "small", "hello", "PX", "900000"]);
    d.cmd(&["SET", "int", "42"]);
    d.cmd(&["COPY", "big", "big", "DB", "3"]);
    d.cmd(&["COPY", "small", "s2", "DB", "15"]);
    d.cmd(&["COPY", "int", "int", "DB", "3"]);
    d.cmd(&["SELECT", "3"]);
    d.cmd(&["GET", "big"]);
    d.cmd(&["STRLEN", "big"]);
    d.ttl("big");
    d.cmd(&["OBJECT", "ENCODING", "big"]);
    d.cmd(&["OBJECT", "ENCODING", "int"]);
    // The copy is independent of the original.
    d.cmd(&["SETRANGE", "big", "70000", "COPY-CHANGED"]);
    d.cmd(&["APPEND", "big", "tail"]);
    d.cmd(&["GETRANGE", "big", "69990", "70020"]);
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["GETRANGE", "big", "69990", "70020"]);
    d.cmd(&["STRLEN", "big"]);
    d.cmd(&["GET", "big"]);
    // REPLACE over a chunked destination in another database.
    d.cmd(&["COPY", "small", "big", "DB", "3"]);
    d.cmd(&["COPY", "small", "big", "DB", "3", "REPLACE"]);
    d.cmd(&["SELECT", "3"]);
    d.cmd(&["GET", "big"]);
    d.pttl("big");
    d.cmd(&["SETRANGE", "big", "100000", "x"]);
    d.cmd(&["GETRANGE", "big", "65530", "65545"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["SELECT", "15"]);
    d.cmd(&["GET", "s2"]);
    d.pttl("s2");
    // MOVE a chunked value, keeping its TTL; the target must be free.
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["MOVE", "big", "3"]);
    d.cmd(&["MOVE", "big", "4"]);
    d.cmd(&["EXISTS", "big"]);
    d.cmd(&["SELECT", "4"]);
    d.cmd(&["GET", "big"]);
    d.ttl("big");
    d.cmd(&["MOVE", "big", "15"]);
    d.cmd(&["SELECT", "15"]);
    d.cmd(&["STRLEN", "big"]);
    d.cmd(&["GETRANGE", "big", "199990", "-1"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["SELECT", "4"]);
    d.cmd(&["DBSIZE"]);
    d.cmd(&["KEYS", "*"]);
}

#[test]
fn copy_and_move_db_argument_errors() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "1"]);
    for db in [
        "2147483647",
        "2147483648",
        "-2147483648",
        "-2147483649",
        "4294967296",
        "9223372036854775807",
        "9223372036854775808",
        "256",
        "16",
        "15 ",
        "+1",
        "01",
        "",
    ] {
        d.cmd(&["MOVE", "a", db]);
        d.cmd(&["COPY", "a", "b", "DB", db]);
        d.cmd(&["MOVE", "missing", db]);
        d.cmd(&["COPY", "missing", "b", "DB", db]);
    }
    // Options are checked in order; the first bad one answers.
    d.cmd(&["COPY", "a", "b", "DB", "1", "DB", "x"]);
    d.cmd(&["COPY", "a", "b", "DB", "x", "BOGUS"]);
    d.cmd(&["COPY", "a", "b", "BOGUS", "DB", "x"]);
    d.cmd(&["COPY", "a", "b", "DB", "99", "DB", "1"]);
    d.cmd(&["COPY", "a", "a", "DB", "1", "DB", "0"]);
    d.cmd(&["COPY", "a", "b", "DB", "1", "DB", "2"]);
    d.cmd(&["SELECT", "2"]);
    d.cmd(&["KEYS", "*"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["KEYS", "*"]);
}

#[test]
fn rename_of_chunked_values() {
    let mut d = Diff::new();
    let big = pattern(300_000, 2);
    let other = pattern(130_000, 5);
    d.cmd(&cmd(&[b"SET", b"big", &big, b"EX", b"1000"]));
    d.cmd(&cmd(&[b"SET", b"other", &other]));
    d.cmd(&["RENAME", "big", "big2"]);
    d.cmd(&["EXISTS", "big"]);
    d.cmd(&["GET", "big2"]);
    d.cmd(&["STRLEN", "big2"]);
    d.ttl("big2");
    d.cmd(&["OBJECT", "ENCODING", "big2"]);
    // A new key under the old name must not see the old chunks.
    d.cmd(&["SET", "big", "small"]);
    d.cmd(&["SETRANGE", "big", "100000", "x"]);
    d.cmd(&["GETRANGE", "big", "65530", "65545"]);
    d.cmd(&["GETRANGE", "big", "0", "10"]);
    d.cmd(&["STRLEN", "big"]);
    // RENAME over an existing chunked key replaces it, TTL included.
    d.cmd(&["RENAME", "other", "big2"]);
    d.cmd(&["GET", "big2"]);
    d.cmd(&["TTL", "big2"]);
    d.cmd(&["RENAMENX", "big2", "big"]);
    d.cmd(&["RENAMENX", "big2", "big3"]);
    d.cmd(&["GET", "big3"]);
    d.cmd(&["RENAME", "big3", "big3"]);
    d.cmd(&["RENAMENX", "big3", "big3"]);
    d.cmd(&["STRLEN", "big3"]);
    d.cmd(&["SETRANGE", "big3", "129990", "end-of-value"]);
    d.cmd(&["GETRANGE", "big3", "129980", "-1"]);
    d.cmd_unordered(&["KEYS", "*"]);
    d.cmd(&["DBSIZE"]);
}

#[test]
fn shared_integers_keep_their_identity_through_rename_and_move() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "1"]);
    d.cmd(&["RENAME", "a", "b"]);
    d.cmd(&["OBJECT", "REFCOUNT", "b"]);
    d.cmd(&["OBJECT", "ENCODING", "b"]);
    d.cmd(&["MOVE", "b", "1"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["OBJECT", "REFCOUNT", "b"]);
    d.cmd(&["SET", "c", "10000"]);
    d.cmd(&["RENAME", "c", "d"]);
    d.cmd(&["OBJECT", "REFCOUNT", "d"]);
    d.cmd(&["OBJECT", "ENCODING", "d"]);
    d.cmd(&["SET", "e", "abc"]);
    d.cmd(&["APPEND", "e", "d"]);
    d.cmd(&["RENAME", "e", "f"]);
    d.cmd(&["OBJECT", "ENCODING", "f"]);
    d.cmd(&["COPY", "f", "g"]);
    d.cmd(&["OBJECT", "ENCODING", "g"]);
}

// ------------------------------------------------------------------ DUMP / RESTORE

#[test]
fn dump_and_restore_of_large_values() {
    let mut d = Diff::new();
    let random = incompressible(150_000, 7);
    d.cmd(&cmd(&[b"SET", b"rand", &random]));
    // Incompressible: Redis stores it raw, so the payloads are identical.
    let dump = bytes_of(&d.cmd(&["DUMP", "rand"]));
    assert!(dump.len() > 150_000);
    d.cmd(&cmd(&[b"RESTORE", b"copy", b"0", &dump]));
    d.cmd(&["GET", "copy"]);
    d.cmd(&["OBJECT", "ENCODING", "copy"]);
    d.cmd(&cmd(&[b"RESTORE", b"ttl", b"500000", &dump]));
    d.pttl("ttl");
    d.cmd(&["DUMP", "copy"]);
    // REPLACE a chunked value by a short one and back.
    d.cmd(&["SET", "short", "tiny"]);
    let short = bytes_of(&d.cmd(&["DUMP", "short"]));
    d.cmd(&cmd(&[b"RESTORE", b"copy", b"0", &short, b"REPLACE"]));
    d.cmd(&["SETRANGE", "copy", "80000", "z"]);
    d.cmd(&["GETRANGE", "copy", "65530", "65545"]);
    d.cmd(&cmd(&[b"RESTORE", b"copy", b"0", &dump, b"REPLACE"]));
    d.cmd(&["GET", "copy"]);
    d.cmd(&cmd(&[
        b"RESTORE",
        b"short",
        b"0",
        &dump,
        b"REPLACE",
        b"IDLETIME",
        b"5",
    ]));
    d.cmd(&["STRLEN", "short"]);

    // A compressible value: Redis's DUMP is LZF-compressed, Firn's is not;
    // each server must restore the other's payload.
    let repetitive = pattern(150_000, 3);
    d.cmd(&cmd(&[b"SET", b"rep", &repetitive]));
    let pair = d.client();
    let from_redis = bytes_of(&pair.redis.cmd(&["DUMP", "rep"]));
    let from_firn = bytes_of(&pair.firn.cmd(&["DUMP", "rep"]));
    assert!(!from_redis.is_empty() && !from_firn.is_empty());
    d.cmd(&cmd(&[b"RESTORE", b"r1", b"0", &from_redis]));
    d.cmd(&cmd(&[b"RESTORE", b"r2", b"0", &from_firn]));
    d.cmd(&["GET", "r1"]);
    d.cmd(&["GET", "r2"]);
    d.cmd(&["STRLEN", "r1"]);
}

#[test]
fn restore_of_hand_made_payloads() {
    let mut d = Diff::new();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("plain", payload(b"\x00\x05hello", 10)),
        ("int8", payload(b"\x00\xc0\x05", 10)),
        ("int8neg", payload(b"\x00\xc0\xfb", 10)),
        ("int16", payload(b"\x00\xc1\x39\x30", 10)),
        ("int32", payload(b"\x00\xc2\x15\xcd\x5b\x07", 10)),
        ("digits", payload(b"\x00\x03123", 10)),
        ("digits5", payload(b"\x00\x0512345", 10)),
        (
            "long",
            payload(&[&b"\x00\x2d"[..], &[b'x'; 45]].concat(), 10),
        ),
        ("old_version", payload(b"\x00\x05hello", 9)),
        ("version1", payload(b"\x00\x05hello", 1)),
        ("future", payload(b"\x00\x05hello", 11)),
        ("bad_type", payload(b"\x63\x05hello", 10)),
        ("bad_encoding", payload(b"\x00\xc5\x05", 10)),
        ("empty_object", payload(b"", 10)),
        ("type_only", payload(b"\x00", 10)),
        ("lzf_bad_len", payload(b"\x00\xc3\x05\x05\x00hello", 10)),
    ];
    for (key, bytes) in &cases {
        d.cmd(&cmd(&[b"RESTORE", key.as_bytes(), b"0", bytes]));
        d.cmd(&["GET", key]);
        d.cmd(&["OBJECT", "ENCODING", key]);
        d.cmd(&["OBJECT", "REFCOUNT", key]);
    }
    // A corrupted checksum, and an all-zero one (not a wildcard in 7.0).
    let mut bad = payload(b"\x00\x05hello", 10);
    let last = bad.len() - 1;
    bad[last] ^= 1;
    d.cmd(&cmd(&[b"RESTORE", b"bad", b"0", &bad]));
    let mut zero = payload(b"\x00\x05hello", 10);
    zero.truncate(zero.len() - 8);
    zero.extend_from_slice(&[0; 8]);
    d.cmd(&cmd(&[b"RESTORE", b"zero", b"0", &zero]));
    // Errors come in Redis's order: options, BUSYKEY, TTL, payload.
    d.cmd(&["SET", "busy", "v"]);
    d.cmd(&cmd(&[b"RESTORE", b"busy", b"abc", b"garbage"]));
    d.cmd(&cmd(&[b"RESTORE", b"busy", b"-1", b"garbage", b"BOGUS"]));
    d.cmd(&cmd(&[b"RESTORE", b"free", b"abc", b"garbage"]));
    d.cmd(&cmd(&[b"RESTORE", b"free", b"-5", b"garbage"]));
    d.cmd(&cmd(&[b"RESTORE", b"busy", b"0", b"garbage", b"REPLACE"]));
    d.cmd(&["GET", "busy"]);
    d.cmd(&cmd(&[
        b"RESTORE",
        b"busy",
        b"0",
        &cases[0].1,
        b"FREQ",
        b"5",
        b"FREQ",
        b"6",
    ]));
    d.cmd(&cmd(&[
        b"RESTORE",
        b"busy",
        b"0",
        &cases[0].1,
        b"replace",
        b"absttl",
        b"idletime",
        b"1",
        b"idletime",
        b"2",
    ]));
    d.cmd(&["GET", "busy"]);
    d.cmd(&["TTL", "busy"]);
}

/// RESTORE of a payload Redis dumped replaces a key of another type only
/// with REPLACE, for every collection type, streams included.
#[test]
fn restore_replaces_other_types_only_with_replace() {
    let redis = Server::redis();
    let firn = Server::firn();
    if firn.kind() != Kind::Firn {
        return;
    }
    let (mut rc, mut fc) = (redis.conn(), firn.conn());
    let setups: [(&[&str], &str, &[&str]); 5] = [
        (
            &["RPUSH", "src", "a", "b"],
            "list",
            &["LRANGE", "k", "0", "-1"],
        ),
        (&["SADD", "src", "a"], "set", &["SMEMBERS", "k"]),
        (&["HSET", "src", "f", "v"], "hash", &["HGETALL", "k"]),
        (
            &["ZADD", "src", "1", "m"],
            "zset",
            &["ZRANGE", "k", "0", "-1", "WITHSCORES"],
        ),
        (
            &["XADD", "src", "1-1", "f", "v"],
            "stream",
            &["XRANGE", "k", "-", "+"],
        ),
    ];
    for (setup, type_name, read) in setups {
        rc.cmd(&["DEL", "src"]);
        rc.cmd(setup);
        let dump = bytes_of(&rc.cmd(&["DUMP", "src"]));
        assert!(!dump.is_empty(), "redis DUMP of a {type_name}");
        fc.send(&[b"SET", b"k", b"kept"]);
        fc.read_reply();
        fc.send(&[b"RESTORE", b"k", b"0", &dump]);
        assert_err(
            &fc.read_reply().1,
            "BUSYKEY Target key name already exists.",
        );
        fc.send(&[b"RESTORE", b"k", b"0", &dump, b"REPLACE"]);
        assert_eq!(fc.read_reply().1, R::Simple("OK".into()));
        assert_eq!(fc.cmd(&["TYPE", "k"]), R::Simple(type_name.into()));
        rc.cmd(&["RENAME", "src", "k"]);
        assert_eq!(fc.cmd(read), rc.cmd(read), "{type_name} restored");
    }
}
