//! Differential tests of the Lua libraries scripts see (`cjson`,
//! `cmsgpack`, `struct`, `bit`) against redis-server 7.0.15, through EVAL:
//!
//! - the whole catalogue of firn-lua-libs' `tests/fixtures/redis_cases.rs`
//!   and the random inputs of `redis_fuzz_cases.txt` beside it (each expression
//!   run under `pcall` by the case wrapper, after SCRIPT FLUSH so that each
//!   starts from fresh library settings, as Redis's VM reset gives);
//! - library results and errors returned straight from a script, so that
//!   the conversion of their values to replies and the error replies of
//!   scripts that fail in a library are compared too, in RESP2 and RESP3;
//! - libraries used with KEYS, ARGV and `redis.call`.

#[path = "../../firn-lua-libs/tests/fixtures/redis_cases.rs"]
#[allow(dead_code)]
mod redis_cases;

use firn_testkit::Diff;

fn run_catalogue(cases: &[(&str, &str)]) {
    let mut d = Diff::new();
    for (expression, _) in cases {
        let script = redis_cases::WRAPPER.replace("EXPR", expression);
        d.cmd(&["SCRIPT", "FLUSH"]);
        d.cmd(&["EVAL", script.as_str(), "0"]);
    }
}

#[test]
fn bit_catalogue() {
    run_catalogue(redis_cases::BIT);
}

#[test]
fn struct_catalogue() {
    run_catalogue(redis_cases::STRUCT);
}

#[test]
fn cmsgpack_catalogue() {
    run_catalogue(redis_cases::CMSGPACK);
}

#[test]
fn cjson_catalogue() {
    run_catalogue(redis_cases::CJSON);
}

/// The random inputs of firn-lua-libs' `tests/fixtures/redis_fuzz_cases.txt`.
#[test]
fn random_inputs() {
    let lines: Vec<&str> = include_str!("../../firn-lua-libs/tests/fixtures/redis_fuzz_cases.txt")
        .lines()
        .collect();
    let cases: Vec<(&str, &str)> = lines
        .chunks(2)
        .filter_map(|pair| Some((*pair.first()?, *pair.get(1)?)))
        .collect();
    run_catalogue(&cases);
}

/// Scripts returning library values directly, or failing inside a library.
const DIRECT: &[&str] = &[
    "return cjson.encode({1, 2, {a = 'x'}})",
    "return cjson.encode({})",
    "return cjson.decode('[1, 2.5, \"a\", true, false, null, {\"k\": [3]}]')",
    "return cjson.decode('{\"a\": 1}')",
    "return cjson.decode('3.75')",
    "return cjson.decode('\"text\"')",
    "return cjson.decode('null')",
    "return cjson.decode('false')",
    "return cjson.decode('[1,')",
    "return cjson.encode(function() end)",
    "return cjson.encode({1/0})",
    "return {cjson.encode_sparse_array()}",
    "return cjson.encode_invalid_numbers()",
    "return cjson.null",
    "return cmsgpack.pack({1, 2, 3}, 'a', true)",
    "return {cmsgpack.unpack(cmsgpack.pack({1, 2, 3}, 'a', true, 1.5))}",
    "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2), 0)}",
    "return cmsgpack.unpack('\\193')",
    "return cmsgpack.pack()",
    "return struct.pack('>i2s', 258, 'ab')",
    "return {struct.unpack('>i2s', struct.pack('>i2s', 258, 'ab'))}",
    "return struct.size('!4bid')",
    "return struct.pack('q', 1)",
    "return struct.unpack('i', 'ab')",
    "return bit.tohex(65535)",
    "return bit.band(0xff, 0x3c)",
    "return bit.tobit(2^31)",
    "return bit.bnot(0)",
    "return bit.lshift(1, 'x')",
    "return bit.tohex(1, 2, 3)",
];

fn run_direct(d: &mut Diff) {
    for script in DIRECT {
        d.cmd(&["SCRIPT", "FLUSH"]);
        d.cmd(&["EVAL", script, "0"]);
    }
}

#[test]
fn library_values_and_errors_as_replies() {
    let mut d = Diff::new();
    run_direct(&mut d);
}

#[test]
fn library_values_and_errors_as_resp3_replies() {
    let mut d = Diff::new();
    d.cmd_type_only(&["HELLO", "3"]);
    run_direct(&mut d);
}

#[test]
fn libraries_with_keys_argv_and_calls() {
    let mut d = Diff::new();
    d.cmd(&["EVAL", "return cjson.encode(ARGV)", "0", "a", "b", "c"]);
    d.cmd(&["EVAL", "return cjson.encode(KEYS)", "2", "k1", "k2"]);
    d.cmd(&[
        "EVAL",
        "return cjson.decode(ARGV[1]).name",
        "0",
        "{\"name\":\"firn\"}",
    ]);
    d.cmd(&[
        "EVAL",
        "redis.call('SET', KEYS[1], cjson.encode({n = tonumber(ARGV[1]), tags = {'x', 'y'}})) \
         return redis.call('GET', KEYS[1])",
        "1",
        "doc",
        "42",
    ]);
    d.cmd(&["GET", "doc"]);
    d.cmd(&[
        "EVAL",
        "return cjson.decode(redis.call('GET', KEYS[1])).tags",
        "1",
        "doc",
    ]);
    d.cmd(&[
        "EVAL",
        "redis.call('SET', KEYS[1], cmsgpack.pack(ARGV)) return #redis.call('GET', KEYS[1])",
        "1",
        "packed",
        "one",
        "two",
    ]);
    d.cmd(&["GET", "packed"]);
    d.cmd(&[
        "EVAL",
        "return cmsgpack.unpack(redis.call('GET', KEYS[1]))",
        "1",
        "packed",
    ]);
    d.cmd(&[
        "EVAL",
        "redis.call('SET', KEYS[1], struct.pack('>I4d', ARGV[1], ARGV[2])) \
         return {struct.unpack('>I4d', redis.call('GET', KEYS[1]))}",
        "1",
        "bin",
        "305419896",
        "2.5",
    ]);
    d.cmd(&["GET", "bin"]);
    d.cmd(&[
        "EVAL",
        "return bit.tohex(tonumber(ARGV[1]))",
        "0",
        "3735928559",
    ]);
    d.cmd(&[
        "EVAL",
        "return bit.bxor(unpack(ARGV))",
        "0",
        "1",
        "2",
        "4",
        "8",
    ]);
}

/// The library tables as scripts see them: their fields, read-only.
#[test]
fn library_tables() {
    let mut d = Diff::new();
    for library in ["cjson", "cmsgpack", "struct", "bit"] {
        let list = format!(
            "local t = {{}} for k, v in pairs({library}) do \
             t[#t + 1] = k .. '=' .. type(v) end table.sort(t) return t"
        );
        d.cmd(&["EVAL", list.as_str(), "0"]);
        let write = format!("{library}.extra = 1 return 1");
        d.cmd(&["EVAL", write.as_str(), "0"]);
        let replace = format!("{library}.pack = nil return 1");
        d.cmd(&["EVAL", replace.as_str(), "0"]);
    }
    d.cmd(&["EVAL", "return tostring(cjson.null)", "0"]);
    d.cmd(&["EVAL", "return {cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION, cjson._NAME, cjson._VERSION}", "0"]);
    d.cmd(&["EVAL", "local c = cjson.new() c.encode_max_depth(3) return {c.encode_max_depth(), cjson.encode_max_depth()}", "0"]);
    d.cmd(&["EVAL", "local c = cjson.new() c.foo = 1 return c.foo", "0"]);
}
