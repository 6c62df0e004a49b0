//! Differential tests of the bitmap commands against redis-server 7.0.15:
//! SETBIT/GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO,
//! including offsets far beyond Firn's 64 KiB string chunks.

use firn_testkit::{
    data::{all_bytes, pattern},
    reply::assert_err,
    Diff,
};

// ------------------------------------------------------------------ SETBIT / GETBIT

#[test]
fn setbit_returns_the_old_bit_and_getbit_reads_it() {
    let mut d = Diff::new();
    d.cmd(&["SETBIT", "b", "7", "1"]);
    d.cmd(&["SETBIT", "b", "7", "1"]);
    d.cmd(&["SETBIT", "b", "7", "0"]);
    d.cmd(&["SETBIT", "b", "0", "1"]);
    d.cmd(&["SETBIT", "b", "100", "1"]);
    d.cmd(&["GET", "b"]);
    d.cmd(&["STRLEN", "b"]);
    for off in ["0", "1", "7", "99", "100", "101", "1000", "4294967295"] {
        d.cmd(&["GETBIT", "b", off]);
    }
    d.cmd(&["GETBIT", "missing", "5"]);
}

#[test]
fn setbit_on_existing_string_values() {
    let mut d = Diff::new();
    d.cmd(&["SET", "s", "abc"]);
    d.cmd(&["SETBIT", "s", "2", "1"]);
    d.cmd(&["GET", "s"]);
    d.cmd(&["SET", "n", "12"]);
    d.cmd(&["SETBIT", "n", "15", "1"]);
    d.cmd(&["GET", "n"]);
    d.cmd(&["OBJECT", "ENCODING", "n"]);
    d.cmd(&["SET", "e", "x", "EX", "100"]);
    d.cmd(&["SETBIT", "e", "1", "0"]);
    d.ttl("e");
}

#[test]
fn setbit_and_getbit_offset_errors() {
    let mut d = Diff::new();
    let r = d.cmd(&["SETBIT", "b", "-1", "1"]);
    assert_err(&r, "ERR bit offset is not an integer or out of range");
    d.cmd(&["SETBIT", "b", "4294967296", "1"]);
    d.cmd(&["SETBIT", "b", "abc", "1"]);
    d.cmd(&["SETBIT", "b", "1.5", "1"]);
    d.cmd(&["SETBIT", "b", "", "1"]);
    d.cmd(&["GETBIT", "b", "-1"]);
    d.cmd(&["GETBIT", "b", "4294967296"]);
    d.cmd(&["GETBIT", "b", "x"]);
    d.cmd(&["SET", "s", "abc"]);
    d.cmd(&["GETBIT", "s", "4294967296"]);
    d.cmd(&["EXISTS", "b"]);
}

#[test]
fn setbit_bit_value_errors() {
    let mut d = Diff::new();
    let r = d.cmd(&["SETBIT", "b", "1", "2"]);
    assert_err(&r, "ERR bit is not an integer or out of range");
    d.cmd(&["SETBIT", "b", "1", "-1"]);
    d.cmd(&["SETBIT", "b", "1", "true"]);
    d.cmd(&["SETBIT", "b", "1", ""]);
    d.cmd(&["SETBIT", "b", "1", "01"]);
    d.cmd(&["SETBIT", "b", "-1", "2"]);
    d.cmd(&["SETBIT", "b", "1"]);
    d.cmd(&["GETBIT", "b"]);
    d.cmd(&["GETBIT", "b", "1", "2"]);
    d.cmd(&["EXISTS", "b"]);
}

#[test]
fn setbit_at_big_offsets_across_chunks() {
    let mut d = Diff::new();
    d.cmd(&["SETBIT", "b", "4000000", "1"]);
    d.cmd(&["STRLEN", "b"]);
    d.cmd(&["GETBIT", "b", "4000000"]);
    d.cmd(&["GETBIT", "b", "3999999"]);
    d.cmd(&["BITCOUNT", "b"]);
    d.cmd(&["BITPOS", "b", "1"]);
    d.cmd(&["BITPOS", "b", "0"]);
    d.cmd(&["GETRANGE", "b", "499999", "500000"]);
    // Bits around the 64 KiB and 128 KiB chunk boundaries.
    for off in [524287u64, 524288, 1048575, 1048576] {
        d.cmd(&["SETBIT", "b", &off.to_string(), "1"]);
    }
    for off in [524286u64, 524287, 524288, 524289, 1048575, 1048576] {
        d.cmd(&["GETBIT", "b", &off.to_string()]);
    }
    d.cmd(&["BITCOUNT", "b"]);
    d.cmd(&["BITCOUNT", "b", "65535", "65536"]);
    d.cmd(&["BITPOS", "b", "1", "65536"]);
    d.cmd(&["BITPOS", "b", "1", "65537"]);
    d.cmd(&["SETBIT", "b", "80000001", "1"]);
    d.cmd(&["STRLEN", "b"]);
    d.cmd(&["GETBIT", "b", "80000001"]);
    d.cmd(&["BITPOS", "b", "1", "-1"]);
    d.cmd(&["DEL", "b"]);
}

// ------------------------------------------------------------------ BITCOUNT

#[test]
fn bitcount_whole_and_byte_ranges() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "foobar"]);
    d.cmd(&["BITCOUNT", "k"]);
    for (s, e) in [
        ("0", "0"),
        ("1", "1"),
        ("0", "-1"),
        ("-2", "-1"),
        ("-100", "100"),
        ("3", "1"),
        ("5", "100"),
        ("6", "6"),
        ("-1", "-6"),
        ("0", "9223372036854775807"),
        ("-9223372036854775808", "-1"),
    ] {
        d.cmd(&["BITCOUNT", "k", s, e]);
        d.cmd(&["BITCOUNT", "k", s, e, "BYTE"]);
    }
    d.cmd(&["BITCOUNT", "missing"]);
    d.cmd(&["BITCOUNT", "missing", "0", "-1"]);
}

#[test]
fn bitcount_bit_ranges() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "foobar"]);
    for (s, e) in [
        ("0", "0"),
        ("1", "1"),
        ("5", "30"),
        ("0", "-1"),
        ("-7", "-1"),
        ("-100", "100"),
        ("30", "5"),
        ("47", "47"),
        ("48", "100"),
        ("7", "8"),
    ] {
        d.cmd(&["BITCOUNT", "k", s, e, "BIT"]);
        d.cmd(&["BITCOUNT", "k", s, e, "bit"]);
    }
    d.cmd(&["BITCOUNT", "missing", "0", "-1", "BIT"]);
}

#[test]
fn bitcount_errors() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "foobar"]);
    d.cmd(&["BITCOUNT", "k", "0"]);
    d.cmd(&["BITCOUNT", "k", "0", "1", "2"]);
    d.cmd(&["BITCOUNT", "k", "0", "1", "WORD"]);
    d.cmd(&["BITCOUNT", "k", "a", "1"]);
    d.cmd(&["BITCOUNT", "k", "0", "b"]);
    d.cmd(&["BITCOUNT", "k", "0", "1", "BIT", "x"]);
    d.cmd(&["BITCOUNT", "missing", "0"]);
    d.cmd(&["BITCOUNT", "missing", "a", "b"]);
    d.cmd(&["BITCOUNT"]);
}

#[test]
fn bitcount_of_all_byte_values() {
    let mut d = Diff::new();
    let bytes = all_bytes();
    d.cmd(&[b"SET".as_slice(), b"k", &bytes]);
    d.cmd(&["BITCOUNT", "k"]);
    d.cmd(&["BITCOUNT", "k", "100", "200"]);
    d.cmd(&["BITCOUNT", "k", "801", "1203", "BIT"]);
    let big = pattern(200_000, 11);
    d.cmd(&[b"SET".as_slice(), b"big", &big]);
    d.cmd(&["BITCOUNT", "big"]);
    d.cmd(&["BITCOUNT", "big", "65530", "131080"]);
    d.cmd(&["BITCOUNT", "big", "524280", "1048600", "BIT"]);
}

// ------------------------------------------------------------------ BITPOS

#[test]
fn bitpos_without_range() {
    let mut d = Diff::new();
    for v in [
        b"\xff\xf0\x00".as_slice(),
        b"\x00\x00\x00",
        b"\xff\xff\xff",
        b"\x00\xff\xf0",
        b"",
        b"\x80",
        b"\x01",
    ] {
        d.cmd(&[b"SET".as_slice(), b"k", v]);
        d.cmd(&["BITPOS", "k", "0"]);
        d.cmd(&["BITPOS", "k", "1"]);
    }
    d.cmd(&["BITPOS", "missing", "0"]);
    d.cmd(&["BITPOS", "missing", "1"]);
}

#[test]
fn bitpos_with_byte_ranges() {
    let mut d = Diff::new();
    d.cmd(&[b"SET".as_slice(), b"k", b"\xff\xf0\x00\x0f\xff"]);
    for bit in ["0", "1"] {
        for range in [
            vec!["2"],
            vec!["-1"],
            vec!["10"],
            vec!["0", "0"],
            vec!["1", "2"],
            vec!["2", "-1"],
            vec!["-3", "-2"],
            vec!["3", "1"],
            vec!["-100", "100"],
            vec!["4", "4"],
            vec!["0", "-1", "BYTE"],
            vec!["1", "3", "BYTE"],
        ] {
            let mut cmd = vec!["BITPOS", "k", bit];
            cmd.extend(range);
            d.cmd(&cmd);
        }
    }
    d.cmd(&["BITPOS", "missing", "0", "1", "2"]);
    d.cmd(&["BITPOS", "missing", "1", "1", "2"]);
}

#[test]
fn bitpos_with_bit_ranges() {
    let mut d = Diff::new();
    d.cmd(&[b"SET".as_slice(), b"k", b"\x00\xff\xf0"]);
    for bit in ["0", "1"] {
        for (s, e) in [
            ("0", "7"),
            ("2", "12"),
            ("7", "15"),
            ("8", "15"),
            ("16", "23"),
            ("-5", "-1"),
            ("20", "10"),
            ("-100", "100"),
            ("0", "-1"),
            ("12", "12"),
        ] {
            d.cmd(&["BITPOS", "k", bit, s, e, "BIT"]);
        }
    }
    d.cmd(&["SET", "ones", "\u{7f}"]);
    d.cmd(&["BITPOS", "ones", "0", "1", "7", "BIT"]);
    d.cmd(&["BITPOS", "missing", "0", "0", "5", "BIT"]);
}

#[test]
fn bitpos_errors() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "abc"]);
    let r = d.cmd(&["BITPOS", "k", "2"]);
    assert_err(&r, "ERR The bit argument must be 1 or 0.");
    d.cmd(&["BITPOS", "k", "-1"]);
    d.cmd(&["BITPOS", "k", "x"]);
    d.cmd(&["BITPOS", "k", "1", "a"]);
    d.cmd(&["BITPOS", "k", "1", "0", "b"]);
    d.cmd(&["BITPOS", "k", "1", "0", "1", "WORD"]);
    d.cmd(&["BITPOS", "k", "1", "0", "1", "BIT", "x"]);
    d.cmd(&["BITPOS", "missing", "2"]);
    d.cmd(&["BITPOS", "k"]);
}

#[test]
fn bitpos_in_big_strings() {
    let mut d = Diff::new();
    d.cmd(&["SETRANGE", "k", "200000", "\u{1}"]);
    d.cmd(&["BITPOS", "k", "1"]);
    d.cmd(&["BITPOS", "k", "1", "65536"]);
    d.cmd(&["BITPOS", "k", "1", "-10"]);
    d.cmd(&["BITPOS", "k", "0"]);
    d.cmd(&["BITPOS", "k", "1", "0", "199999"]);
    d.cmd(&["BITPOS", "k", "1", "1000000", "1600007", "BIT"]);
    let ones = vec![0xffu8; 150_000];
    d.cmd(&[b"SET".as_slice(), b"f", &ones]);
    d.cmd(&["BITPOS", "f", "0"]);
    d.cmd(&["BITPOS", "f", "0", "0", "-1"]);
    d.cmd(&["BITPOS", "f", "0", "70000"]);
    d.cmd(&["SETBIT", "f", "1000000", "0"]);
    d.cmd(&["BITPOS", "f", "0"]);
    d.cmd(&["BITPOS", "f", "0", "65536", "-1"]);
}

// ------------------------------------------------------------------ BITOP

#[test]
fn bitop_and_or_xor_of_different_lengths() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "foobar"]);
    d.cmd(&["SET", "b", "abc"]);
    d.cmd(&[b"SET".as_slice(), b"c", b"\xff\x00\x0f\xf0\xaa\x55\x01\x80"]);
    for op in ["AND", "OR", "XOR", "and", "Or"] {
        d.cmd(&["BITOP", op, "dest", "a", "b", "c"]);
        d.cmd(&["GET", "dest"]);
        d.cmd(&["BITOP", op, "dest", "a"]);
        d.cmd(&["GET", "dest"]);
        d.cmd(&["BITOP", op, "dest", "c", "a"]);
        d.cmd(&["GET", "dest"]);
    }
}

#[test]
fn bitop_not() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "foobar"]);
    d.cmd(&["BITOP", "NOT", "dest", "a"]);
    d.cmd(&["GET", "dest"]);
    d.cmd(&["BITOP", "NOT", "a", "a"]);
    d.cmd(&["GET", "a"]);
    d.cmd(&["SET", "e", ""]);
    d.cmd(&["BITOP", "NOT", "dest", "e"]);
    d.cmd(&["EXISTS", "dest"]);
    let r = d.cmd(&["BITOP", "NOT", "dest", "a", "b"]);
    assert_err(&r, "ERR BITOP NOT must be called with a single source key.");
}

#[test]
fn bitop_with_missing_keys() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "abc"]);
    d.cmd(&["BITOP", "AND", "dest", "a", "missing"]);
    d.cmd(&["GET", "dest"]);
    d.cmd(&["BITOP", "OR", "dest", "missing", "a"]);
    d.cmd(&["GET", "dest"]);
    d.cmd(&["BITOP", "XOR", "dest", "missing"]);
    d.cmd(&["EXISTS", "dest"]);
    d.cmd(&["SET", "dest", "x", "EX", "100"]);
    d.cmd(&["BITOP", "AND", "dest", "m1", "m2"]);
    d.cmd(&["EXISTS", "dest"]);
    d.cmd(&["SET", "dest", "x", "EX", "100"]);
    d.cmd(&["BITOP", "NOT", "dest", "missing"]);
    d.cmd(&["EXISTS", "dest"]);
    d.cmd(&["BITOP", "OR", "dest", "a"]);
    d.cmd(&["TTL", "dest"]);
}

#[test]
fn bitop_errors() {
    let mut d = Diff::new();
    d.cmd(&["SET", "a", "abc"]);
    d.cmd(&["BITOP", "NAND", "dest", "a"]);
    d.cmd(&["BITOP", "AND", "dest"]);
    d.cmd(&["BITOP", "AND"]);
    d.cmd(&["BITOP", "NOT", "dest"]);
    d.cmd(&["BITOP"]);
    d.cmd(&["EXISTS", "dest"]);
}

#[test]
fn bitop_on_big_values() {
    let mut d = Diff::new();
    let a = pattern(150_000, 1);
    let b = pattern(70_000, 2);
    d.cmd(&[b"SET".as_slice(), b"a", &a]);
    d.cmd(&[b"SET".as_slice(), b"b", &b]);
    for op in ["AND", "OR", "XOR"] {
        d.cmd(&["BITOP", op, "dest", "a", "b"]);
        d.cmd(&["STRLEN", "dest"]);
        d.cmd(&["BITCOUNT", "dest"]);
        d.cmd(&["GETRANGE", "dest", "65530", "65540"]);
        d.cmd(&["GETRANGE", "dest", "69995", "70005"]);
    }
    d.cmd(&["BITOP", "NOT", "dest", "a"]);
    d.cmd(&["GET", "dest"]);
}

// ------------------------------------------------------------------ BITFIELD

#[test]
fn bitfield_get_and_set() {
    let mut d = Diff::new();
    d.cmd(&["BITFIELD", "k", "SET", "u8", "0", "255"]);
    d.cmd(&["BITFIELD", "k", "GET", "u8", "0"]);
    d.cmd(&["BITFIELD", "k", "GET", "i8", "0"]);
    d.cmd(&[
        "BITFIELD", "k", "GET", "u4", "0", "GET", "u4", "4", "GET", "i4", "2",
    ]);
    d.cmd(&[
        "BITFIELD", "k", "SET", "i16", "8", "-1000", "GET", "i16", "8",
    ]);
    d.cmd(&["BITFIELD", "k", "SET", "u1", "3", "0", "GET", "u8", "0"]);
    d.cmd(&["BITFIELD", "k", "GET", "i64", "0", "GET", "u63", "1"]);
    d.cmd(&["BITFIELD", "k", "SET", "i64", "0", "-9223372036854775808"]);
    d.cmd(&["BITFIELD", "k", "GET", "i64", "0"]);
    d.cmd(&["BITFIELD", "k", "SET", "u63", "64", "9223372036854775807"]);
    d.cmd(&["BITFIELD", "k", "GET", "u63", "64"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["BITFIELD", "missing", "GET", "u8", "0"]);
    d.cmd(&["EXISTS", "missing"]);
    d.cmd(&["BITFIELD", "k"]);
}

#[test]
fn bitfield_hash_offsets_are_multiplied_by_the_width() {
    let mut d = Diff::new();
    d.cmd(&[
        "BITFIELD", "k", "SET", "u8", "#0", "1", "SET", "u8", "#1", "2", "SET", "u8", "#2", "3",
    ]);
    d.cmd(&["GET", "k"]);
    d.cmd(&[
        "BITFIELD", "k", "GET", "u8", "#1", "GET", "u16", "#1", "GET", "i5", "#3",
    ]);
    d.cmd(&["BITFIELD", "k", "INCRBY", "u8", "#2", "10"]);
    d.cmd(&["BITFIELD", "k", "GET", "u8", "#-1"]);
    d.cmd(&["BITFIELD", "k", "GET", "u8", "#x"]);
    d.cmd(&["BITFIELD", "k", "GET", "u8", "#"]);
}

#[test]
fn bitfield_incrby_with_overflow_modes() {
    let mut d = Diff::new();
    d.cmd(&["BITFIELD", "k", "SET", "u4", "0", "14"]);
    d.cmd(&[
        "BITFIELD", "k", "INCRBY", "u4", "0", "1", "INCRBY", "u4", "0", "1", "INCRBY", "u4", "0",
        "1",
    ]);
    d.cmd(&[
        "BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "u4", "0", "100", "INCRBY", "u4", "0", "-100",
    ]);
    d.cmd(&[
        "BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u4", "0", "100", "GET", "u4", "0",
    ]);
    d.cmd(&[
        "BITFIELD", "k", "OVERFLOW", "WRAP", "INCRBY", "u4", "0", "100",
    ]);
    d.cmd(&["BITFIELD", "s", "SET", "i8", "0", "120"]);
    d.cmd(&["BITFIELD", "s", "INCRBY", "i8", "0", "10"]);
    d.cmd(&[
        "BITFIELD", "s", "OVERFLOW", "SAT", "INCRBY", "i8", "0", "200", "INCRBY", "i8", "0", "-300",
    ]);
    d.cmd(&[
        "BITFIELD", "s", "OVERFLOW", "FAIL", "INCRBY", "i8", "0", "-1", "INCRBY", "i8", "0",
        "-1000",
    ]);
    d.cmd(&[
        "BITFIELD", "s", "overflow", "sat", "SET", "i8", "0", "1000", "GET", "i8", "0",
    ]);
    d.cmd(&[
        "BITFIELD", "s", "OVERFLOW", "FAIL", "SET", "i8", "0", "1000", "GET", "i8", "0",
    ]);
    d.cmd(&[
        "BITFIELD", "s", "OVERFLOW", "WRAP", "SET", "u8", "0", "-1", "GET", "u8", "0",
    ]);
    d.cmd(&[
        "BITFIELD",
        "s",
        "OVERFLOW",
        "SAT",
        "INCRBY",
        "i64",
        "0",
        "9223372036854775807",
        "INCRBY",
        "i64",
        "0",
        "9223372036854775807",
    ]);
    d.cmd(&[
        "BITFIELD",
        "s",
        "OVERFLOW",
        "WRAP",
        "INCRBY",
        "i64",
        "0",
        "9223372036854775807",
    ]);
    d.cmd(&[
        "BITFIELD",
        "s",
        "OVERFLOW",
        "FAIL",
        "INCRBY",
        "u63",
        "64",
        "9223372036854775807",
        "INCRBY",
        "u63",
        "64",
        "1",
    ]);
    d.cmd(&["GET", "s"]);
}

#[test]
fn bitfield_errors() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "abc"]);
    let r = d.cmd(&["BITFIELD", "k", "GET", "u64", "0"]);
    assert_err(
        &r,
        "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.",
    );
    d.cmd(&["BITFIELD", "k", "GET", "i65", "0"]);
    d.cmd(&["BITFIELD", "k", "GET", "u0", "0"]);
    d.cmd(&["BITFIELD", "k", "GET", "x8", "0"]);
    d.cmd(&["BITFIELD", "k", "GET", "u", "0"]);
    d.cmd(&["BITFIELD", "k", "GET", "8", "0"]);
    d.cmd(&["BITFIELD", "k", "GET", "u8", "-1"]);
    d.cmd(&["BITFIELD", "k", "GET", "u8", "4294967296"]);
    d.cmd(&["BITFIELD", "k", "GET", "u8", "4294967289"]);
    d.cmd(&["BITFIELD", "k", "GET", "u8", "abc"]);
    d.cmd(&["BITFIELD", "k", "GET", "u8"]);
    d.cmd(&["BITFIELD", "k", "SET", "u8", "0"]);
    d.cmd(&["BITFIELD", "k", "SET", "u8", "0", "x"]);
    d.cmd(&["BITFIELD", "k", "INCRBY", "u8", "0", "1.5"]);
    d.cmd(&["BITFIELD", "k", "OVERFLOW", "FOO", "GET", "u8", "0"]);
    d.cmd(&["BITFIELD", "k", "OVERFLOW"]);
    d.cmd(&["BITFIELD", "k", "FOO", "u8", "0"]);
    d.cmd(&[
        "BITFIELD", "k", "GET", "u8", "0", "SET", "u8", "0", "1", "BAD",
    ]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["BITFIELD"]);
}

#[test]
fn bitfield_only_overflow_or_nothing() {
    let mut d = Diff::new();
    d.cmd(&["BITFIELD", "k", "OVERFLOW", "SAT"]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&["BITFIELD", "k", "GET", "u8", "100"]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&[
        "BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "10",
    ]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&["STRLEN", "k"]);
}

#[test]
fn bitfield_ro_only_allows_get() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "abc"]);
    d.cmd(&["BITFIELD_RO", "k", "GET", "u8", "0", "GET", "i4", "#3"]);
    d.cmd(&["BITFIELD_RO", "k"]);
    let r = d.cmd(&["BITFIELD_RO", "k", "SET", "u8", "0", "1"]);
    assert_err(&r, "ERR BITFIELD_RO only supports the GET subcommand");
    d.cmd(&["BITFIELD_RO", "k", "INCRBY", "u8", "0", "1"]);
    d.cmd(&["BITFIELD_RO", "k", "OVERFLOW", "SAT", "GET", "u8", "0"]);
    d.cmd(&["BITFIELD_RO", "k", "GET", "u64", "0"]);
    d.cmd(&["BITFIELD_RO", "missing", "GET", "u8", "0"]);
    d.cmd(&["BITFIELD_RO"]);
    d.cmd(&["GET", "k"]);
}

#[test]
fn bitfield_at_big_offsets() {
    let mut d = Diff::new();
    d.cmd(&["BITFIELD", "k", "SET", "u16", "524280", "65535"]);
    d.cmd(&["STRLEN", "k"]);
    d.cmd(&["GETRANGE", "k", "65534", "-1"]);
    d.cmd(&[
        "BITFIELD", "k", "GET", "u32", "524270", "GET", "i16", "524284",
    ]);
    d.cmd(&["BITFIELD", "k", "SET", "i64", "40000003", "-2"]);
    d.cmd(&["STRLEN", "k"]);
    d.cmd(&[
        "BITFIELD", "k", "GET", "i64", "40000003", "GET", "u8", "40000059",
    ]);
    d.cmd(&["BITFIELD", "k", "GET", "i64", "4294967232"]);
    d.cmd(&["BITFIELD", "k", "GET", "u8", "4294967288"]);
    d.cmd(&["DEL", "k"]);
}
