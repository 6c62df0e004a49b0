//! The libraries against redis-server 7.0.15: every expression of the
//! catalogue (`fixtures/redis_cases.rs`, made by `fixtures/redis_cases.py`)
//! and the random inputs (`fixtures/redis_fuzz_cases.txt`, made by
//! `fixtures/redis_fuzz.py`) run in a fresh VM with the libraries
//! installed, through the same wrapper Redis ran them in, and must give
//! the text Redis gave, error messages included.
//!
//! firn-server's `tests/diff_lua_libs.rs` runs the same catalogue through
//! EVAL on both servers.

#[path = "fixtures/redis_cases.rs"]
mod redis_cases;

use mlua::Lua;

fn vm() -> Lua {
    let lua = Lua::new();
    firn_lua_libs::register(&lua).expect("register the libraries");
    lua
}

/// Runs `expression` through the case wrapper in a fresh VM, as a chunk
/// named as Redis names scripts.
fn run_case(expression: &str) -> String {
    let lua = vm();
    let chunk = redis_cases::WRAPPER.replace("EXPR", expression);
    lua.load(chunk)
        .set_name("@user_script")
        .eval::<String>()
        .unwrap_or_else(|error| format!("VM ERROR {error}"))
}

/// Checks every case, listing all mismatches.
fn check_cases(cases: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for (expression, expected) in cases {
        let got = run_case(expression);
        if got != *expected {
            failures.push(format!(
                "{expression}\n   redis: {expected}\n   firn:  {got}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn bit_matches_redis() {
    check_cases(redis_cases::BIT);
}

#[test]
fn struct_matches_redis() {
    check_cases(redis_cases::STRUCT);
}

#[test]
fn cmsgpack_matches_redis() {
    check_cases(redis_cases::CMSGPACK);
}

#[test]
fn cjson_matches_redis() {
    check_cases(redis_cases::CJSON);
}

/// 2,400 random inputs (`redis_fuzz.py 1`): mutated JSON for
/// `cjson.decode`, random MessagePack bytes for `cmsgpack.unpack`,
/// random formats and data for `struct`, re-encodings of decoded JSON,
/// random Lua tables (mixed keys, holes, nesting) through
/// `cjson.encode`, `cmsgpack.pack` and back.
#[test]
fn random_inputs_match_redis() {
    let lines: Vec<&str> = include_str!("fixtures/redis_fuzz_cases.txt")
        .lines()
        .collect();
    let cases: Vec<(&str, &str)> = lines
        .chunks(2)
        .filter_map(|pair| Some((*pair.first()?, *pair.get(1)?)))
        .collect();
    assert_eq!(cases.len(), 2400);
    check_cases(&cases);
}
