//! Differential tests of the connection commands against redis-server
//! 7.0.15: PING, ECHO, SELECT, HELLO (RESP2/RESP3), AUTH without a password,
//! CLIENT SETNAME/GETNAME/ID/INFO/LIST/REPLY, QUIT, RESET, RESP3 reply types
//! and the unknown-command error.
//!
//! Normalised: HELLO's `id` and `version` values; CLIENT INFO/LIST keep the
//! field names in order and only the values that follow from the session
//! (name, db, flags, multi, cmd, user, resp), not addresses, ages or memory.

use firn_testkit::{
    reply::{assert_err, assert_err_prefix},
    Diff, R,
};
use std::time::Duration;

// ------------------------------------------------------------------ PING / ECHO / SELECT

#[test]
fn ping_with_and_without_argument() {
    let mut d = Diff::new();
    d.cmd(&["PING"]);
    d.cmd(&["ping"]);
    d.cmd(&["PING", "hello world"]);
    d.cmd(&["PING", ""]);
    d.cmd(&[b"PING".as_slice(), b"\x00\xff\r\n"]);
    d.cmd(&["PING", "a", "b"]);
}

#[test]
fn echo_returns_its_argument() {
    let mut d = Diff::new();
    d.cmd(&["ECHO", "hello"]);
    d.cmd(&["ECHO", ""]);
    let bytes: Vec<u8> = (0..=255u8).collect();
    d.cmd(&[b"ECHO".as_slice(), &bytes]);
    d.cmd(&["ECHO"]);
    d.cmd(&["ECHO", "a", "b"]);
}

#[test]
fn select_valid_and_invalid_indexes() {
    let mut d = Diff::new();
    d.cmd(&["SELECT", "0"]);
    d.cmd(&["SELECT", "15"]);
    let r = d.cmd(&["SELECT", "16"]);
    assert_err(&r, "ERR DB index is out of range");
    d.cmd(&["SELECT", "-1"]);
    d.cmd(&["SELECT", "abc"]);
    d.cmd(&["SELECT", "1.5"]);
    d.cmd(&["SELECT", ""]);
    d.cmd(&["SELECT", "99999999999999999999"]);
    d.cmd(&["SELECT", "007"]);
    d.cmd(&["SET", "where", "7"]);
    d.cmd(&["SELECT", "7"]);
    d.cmd(&["GET", "where"]);
    d.cmd(&["SELECT"]);
    d.cmd(&["SELECT", "1", "2"]);
}

// ------------------------------------------------------------------ HELLO

/// HELLO's reply with the connection id and the server version blanked
/// (RESP2 flat array or RESP3 map).
fn hello_normalised(r: &R) -> R {
    let blank = |k: &R, v: &R| match k.as_str().as_deref() {
        Some("id") => R::Simple("<id>".into()),
        Some("version") => R::Simple("<version>".into()),
        _ => v.clone(),
    };
    match r {
        R::Map(pairs) => R::Map(
            pairs
                .iter()
                .map(|(k, v)| (k.clone(), blank(k, v)))
                .collect(),
        ),
        R::Array(Some(items)) if items.len() % 2 == 0 => R::Array(Some(
            items
                .chunks(2)
                .flat_map(|kv| [kv[0].clone(), blank(&kv[0], &kv[1])])
                .collect(),
        )),
        other => other.clone(),
    }
}

#[test]
fn hello_2_and_3_report_the_server() {
    let mut d = Diff::new();
    let r = d.cmd_with(&["HELLO"], hello_normalised);
    assert!(matches!(r, R::Array(Some(_))), "{}", r.render());
    d.cmd_with(&["HELLO", "2"], hello_normalised);
    let r = d.cmd_with(&["HELLO", "3"], hello_normalised);
    assert!(matches!(r, R::Map(_)), "{}", r.render());
    d.cmd_with(&["HELLO"], hello_normalised);
    d.cmd_with(&["HELLO", "2"], hello_normalised);
    d.cmd(&["GET", "missing"]);
}

#[test]
fn hello_rejects_bad_protocol_versions() {
    let mut d = Diff::new();
    let r = d.cmd(&["HELLO", "4"]);
    assert_err_prefix(&r, "NOPROTO");
    d.cmd(&["HELLO", "1"]);
    d.cmd(&["HELLO", "0"]);
    d.cmd(&["HELLO", "-1"]);
    d.cmd(&["HELLO", "abc"]);
    d.cmd(&["HELLO", "3.0"]);
    d.cmd(&["HELLO", "99999999999999999999"]);
    // The protocol did not change.
    d.cmd(&["GET", "missing"]);
}

#[test]
fn hello_with_auth_and_setname() {
    let mut d = Diff::new();
    d.cmd_with(&["HELLO", "2", "SETNAME", "alpha"], hello_normalised);
    d.cmd(&["CLIENT", "GETNAME"]);
    d.cmd_with(
        &["HELLO", "3", "AUTH", "default", "anything"],
        hello_normalised,
    );
    d.cmd(&["HELLO", "3", "AUTH", "nobody", "pw"]);
    d.cmd(&["HELLO", "3", "AUTH", "default"]);
    d.cmd(&["HELLO", "3", "SETNAME", "bad name"]);
    d.cmd(&["HELLO", "3", "SETNAME"]);
    d.cmd(&["HELLO", "3", "FOO"]);
    d.cmd(&["HELLO", "3", "AUTH"]);
    d.cmd_with(
        &["HELLO", "2", "AUTH", "default", "x", "SETNAME", "beta"],
        hello_normalised,
    );
    d.cmd(&["CLIENT", "GETNAME"]);
    d.cmd(&["HELLO", "4", "SETNAME", "gamma"]);
    d.cmd(&["CLIENT", "GETNAME"]);
    d.cmd(&["GET", "missing"]);
}

// ------------------------------------------------------------------ AUTH

#[test]
fn auth_without_a_configured_password() {
    let mut d = Diff::new();
    let r = d.cmd(&["AUTH", "secret"]);
    assert_err_prefix(
        &r,
        "ERR AUTH <password> called without any password configured",
    );
    d.cmd(&["AUTH", "default", "whatever"]);
    d.cmd(&["AUTH", "nobody", "whatever"]);
    d.cmd(&["AUTH"]);
    d.cmd(&["AUTH", "a", "b", "c"]);
    d.cmd(&["PING"]);
}

// ------------------------------------------------------------------ CLIENT

#[test]
fn client_setname_and_getname() {
    let mut d = Diff::new();
    d.cmd(&["CLIENT", "GETNAME"]);
    d.cmd(&["CLIENT", "SETNAME", "worker-1"]);
    d.cmd(&["CLIENT", "GETNAME"]);
    d.cmd(&["CLIENT", "SETNAME", ""]);
    d.cmd(&["CLIENT", "GETNAME"]);
    d.cmd(&["client", "setname", "MiXeD_Case!~"]);
    d.cmd(&["CLIENT", "GETNAME"]);
    d.cmd(&["CLIENT", "SETNAME"]);
    d.cmd(&["CLIENT", "SETNAME", "a", "b"]);
    d.cmd(&["CLIENT", "GETNAME", "x"]);
}

#[test]
fn client_setname_rejects_special_characters() {
    let mut d = Diff::new();
    d.cmd(&["CLIENT", "SETNAME", "ok"]);
    let r = d.cmd(&["CLIENT", "SETNAME", "a b"]);
    assert_err(
        &r,
        "ERR Client names cannot contain spaces, newlines or special characters.",
    );
    d.cmd(&["CLIENT", "SETNAME", "a\nb"]);
    d.cmd(&["CLIENT", "SETNAME", "tab\there"]);
    d.cmd(&[b"CLIENT".as_slice(), b"SETNAME", b"caf\xc3\xa9"]);
    d.cmd(&[b"CLIENT".as_slice(), b"SETNAME", b"\x7f"]);
    d.cmd(&["CLIENT", "GETNAME"]);
}

#[test]
fn client_id_is_an_integer() {
    let mut d = Diff::new();
    let (r, f) = d.cmd_type_only(&["CLIENT", "ID"]);
    assert!(r.as_int().is_some_and(|i| i > 0) && f.as_int().is_some_and(|i| i > 0));
    d.cmd(&["CLIENT", "ID", "extra"]);
}

/// A CLIENT INFO/LIST line reduced to its field names in order, with the
/// values kept only for fields that follow from the session itself.
fn client_line_normalised(line: &str) -> String {
    // qbuf: while a command runs, its own bytes are in its client's query
    // buffer (26 for CLIENT LIST), as Redis shows them.
    const KEEP: [&str; 8] = [
        "name", "db", "flags", "multi", "qbuf", "cmd", "user", "resp",
    ];
    firn_testkit::diff::client_line_kept(line, &KEEP)
}

fn client_info_normalised(r: &R) -> R {
    match r.as_bytes() {
        Some(b) => {
            let text = String::from_utf8_lossy(b);
            let lines = text.matches('\n').count();
            R::Simple(format!(
                "{} (newlines: {lines})",
                client_line_normalised(&text)
            ))
        }
        None => r.clone(),
    }
}

/// Only the line of the client that ran CLIENT LIST (others, like the
/// harness's start-up probe, may or may not be gone yet).
fn client_list_normalised(r: &R) -> R {
    match r.as_bytes() {
        Some(b) => {
            let text = String::from_utf8_lossy(b);
            let own: Vec<String> = text
                .split_inclusive('\n')
                .filter(|l| l.contains(" cmd=client|list "))
                .map(|l| {
                    format!(
                        "{} (ends with newline: {})",
                        client_line_normalised(l),
                        l.ends_with('\n')
                    )
                })
                .collect();
            R::Array(Some(own.into_iter().map(R::Simple).collect()))
        }
        None => r.clone(),
    }
}

#[test]
fn client_info_has_redis_fields_in_order() {
    let mut d = Diff::new();
    let r = d.cmd_with(&["CLIENT", "INFO"], client_info_normalised);
    let text = r.as_str().unwrap_or_default();
    assert!(text.starts_with("id="), "{text}");
    d.cmd(&["CLIENT", "SETNAME", "named"]);
    d.cmd(&["SELECT", "3"]);
    d.cmd_with(&["CLIENT", "INFO"], client_info_normalised);
    d.cmd_with(&["HELLO", "3"], hello_normalised);
    d.cmd_with(&["CLIENT", "INFO"], client_info_normalised);
    d.cmd(&["CLIENT", "INFO", "extra"]);
}

#[test]
fn client_list_shows_this_connection() {
    let mut d = Diff::new();
    d.cmd(&["CLIENT", "SETNAME", "lister"]);
    d.cmd_with(&["CLIENT", "LIST"], client_list_normalised);
    d.cmd_with(
        &["CLIENT", "LIST", "TYPE", "normal"],
        client_list_normalised,
    );
    d.cmd(&["CLIENT", "LIST", "TYPE", "pubsub"]);
    d.cmd(&["CLIENT", "LIST", "TYPE", "foo"]);
    d.cmd(&["CLIENT", "LIST", "FOO"]);
    d.cmd(&["CLIENT", "LIST", "ID", "abc"]);
}

#[test]
fn client_reply_off_and_on() {
    let mut d = Diff::new();
    d.send(&["CLIENT", "REPLY", "OFF"]);
    d.send(&["SET", "k", "v"]);
    d.send(&["GET", "k"]);
    d.assert_silent_both(Duration::from_millis(200));
    d.cmd(&["CLIENT", "REPLY", "ON"]);
    d.cmd(&["GET", "k"]);
}

#[test]
fn client_reply_skip_skips_one_reply() {
    let mut d = Diff::new();
    d.send(&["CLIENT", "REPLY", "SKIP"]);
    d.send(&["SET", "k", "v"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["CLIENT", "REPLY", "ON"]);
    d.cmd(&["CLIENT", "REPLY", "FOO"]);
    d.cmd(&["CLIENT", "REPLY"]);
}

#[test]
fn client_unknown_subcommand() {
    let mut d = Diff::new();
    let r = d.cmd(&["CLIENT", "FOO"]);
    assert_err(&r, "ERR unknown subcommand 'FOO'. Try CLIENT HELP.");
    d.cmd(&["CLIENT", "foo", "bar"]);
    d.cmd(&["CLIENT"]);
}

// ------------------------------------------------------------------ QUIT / RESET

#[test]
fn quit_replies_ok_and_closes() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["QUIT"]);
    d.assert_closed_both();
    d.reconnect();
    d.cmd(&["GET", "k"]);
}

#[test]
fn quit_with_arguments_still_quits() {
    let mut d = Diff::new();
    d.cmd(&["QUIT", "now"]);
    d.assert_closed_both();
}

#[test]
fn reset_restores_connection_defaults() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "db0"]);
    d.cmd(&["SELECT", "2"]);
    d.cmd(&["CLIENT", "SETNAME", "before-reset"]);
    d.cmd_with(&["HELLO", "3"], hello_normalised);
    d.cmd(&["RESET"]);
    d.cmd(&["CLIENT", "GETNAME"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["GET", "missing"]);
    d.cmd(&["RESET", "extra"]);
}

#[test]
fn reset_turns_client_reply_back_on() {
    let mut d = Diff::new();
    d.send(&["CLIENT", "REPLY", "OFF"]);
    d.cmd(&["RESET"]);
    d.cmd(&["PING"]);
}

// ------------------------------------------------------------------ RESP3

#[test]
fn resp3_reply_types() {
    let mut d = Diff::new();
    d.cmd_with(&["HELLO", "3"], hello_normalised);
    d.cmd(&["GET", "missing"]);
    d.cmd(&["RANDOMKEY"]);
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SET", "k", "w", "GET"]);
    d.cmd(&["SET", "k", "x", "NX", "GET"]);
    d.cmd(&["SET", "k", "x", "NX"]);
    d.cmd(&["INCR", "n"]);
    d.cmd(&["INCRBYFLOAT", "f", "1.5"]);
    d.cmd(&["MGET", "k", "missing", "n"]);
    d.cmd(&["EXISTS", "k"]);
    d.cmd(&["TTL", "k"]);
    d.cmd(&["GETDEL", "missing"]);
    d.cmd(&["GETEX", "missing"]);
    d.cmd(&["OBJECT", "ENCODING", "missing"]);
    d.cmd(&["DUMP", "missing"]);
    d.cmd(&["MSET", "a", "ohmytext", "b", "mynewtext"]);
    d.cmd(&["LCS", "a", "b", "IDX", "WITHMATCHLEN"]);
    d.cmd(&[
        "BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "10",
    ]);
    d.cmd(&["SCAN", "0", "MATCH", "nothing"]);
    d.cmd(&["ECHO", "x"]);
    d.cmd(&["PING"]);
    d.cmd(&["CLIENT", "GETNAME"]);
    d.cmd(&["EXPIRETIME", "k"]);
    d.cmd(&["FOOBAR"]);
    d.cmd(&["GET"]);
}

#[test]
fn resp3_then_back_to_resp2() {
    let mut d = Diff::new();
    d.cmd_with(&["HELLO", "3"], hello_normalised);
    d.cmd(&["GET", "missing"]);
    d.cmd_with(&["HELLO", "2"], hello_normalised);
    d.cmd(&["GET", "missing"]);
    d.cmd(&["MGET", "missing"]);
}

// ------------------------------------------------------------------ unknown commands

#[test]
fn unknown_command_errors_quote_the_arguments() {
    let mut d = Diff::new();
    let r = d.cmd(&["FOOBAR", "k", "f", "v"]);
    assert_err(
        &r,
        "ERR unknown command 'FOOBAR', with args beginning with: 'k' 'f' 'v' ",
    );
    d.cmd(&["foobar"]);
    d.cmd(&["NOSUCHCMD", ""]);
    d.cmd(&["x".repeat(200).as_str(), "a"]);
    d.cmd(&["FOOBAR", &"y".repeat(200)]);
    let many: Vec<String> = (0..60).map(|i| format!("arg{i}")).collect();
    let mut cmd: Vec<&str> = vec!["FOOBAR"];
    cmd.extend(many.iter().map(String::as_str));
    d.cmd(&cmd);
    d.cmd(&["FOOBAR", "a\r\nb", "c\nd"]);
    d.cmd(&[b"FOO\r\nBAR".as_slice(), b"x"]);
    d.cmd(&["", "x"]);
    d.cmd(&["PING"]);
}
