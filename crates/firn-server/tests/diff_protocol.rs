//! Differential tests of the wire protocol against redis-server 7.0.15:
//! malformed multibulk requests (error text, then the connection is closed),
//! limits on lengths, inline commands and their quoting rules, pipelines
//! sent in one write, and clients that go away mid-pipeline.

use firn_testkit::{diff::command, encode_request, Diff, R};
use std::time::Duration;

const SILENCE: Duration = Duration::from_millis(200);

/// Sends `bytes`, expects one identical error reply and a closed connection.
fn protocol_error(bytes: &[u8]) -> R {
    let mut d = Diff::new();
    d.send_raw(bytes);
    let r = d.read_both();
    assert!(r.is_error(), "{}", r.render());
    d.assert_closed_both();
    r
}

/// Sends `bytes`, expects no reply and an open connection (a request that is
/// not complete yet).
fn waits_for_more(bytes: &[u8]) {
    let mut d = Diff::new();
    d.send_raw(bytes);
    d.assert_silent_both(SILENCE);
}

// ------------------------------------------------------------------ malformed multibulk

#[test]
fn invalid_multibulk_length_closes_the_connection() {
    let r = protocol_error(b"*abc\r\n");
    assert_eq!(
        r,
        R::Error("ERR Protocol error: invalid multibulk length".into())
    );
}

#[test]
fn multibulk_length_forms_that_are_invalid() {
    protocol_error(b"*+1\r\n");
    protocol_error(b"* 1\r\n");
    protocol_error(b"*1 \r\n");
    protocol_error(b"*01\r\n$4\r\nPING\r\n");
    protocol_error(b"*1.0\r\n");
    protocol_error(b"*\r\n");
}

#[test]
fn huge_multibulk_length_is_an_error() {
    protocol_error(b"*99999999999\r\n");
    protocol_error(b"*2147483648\r\n");
    protocol_error(b"*9223372036854775808\r\n");
}

#[test]
fn large_but_valid_multibulk_length_waits_for_arguments() {
    waits_for_more(b"*2147483647\r\n");
    waits_for_more(b"*1048577\r\n");
}

#[test]
fn invalid_bulk_length_closes_the_connection() {
    let r = protocol_error(b"*1\r\n$abc\r\n");
    assert_eq!(
        r,
        R::Error("ERR Protocol error: invalid bulk length".into())
    );
    protocol_error(b"*1\r\n$-1\r\n");
    protocol_error(b"*1\r\n$-5\r\n");
    protocol_error(b"*1\r\n$+4\r\nPING\r\n");
    protocol_error(b"*1\r\n$\r\n");
}

#[test]
fn huge_bulk_length_is_an_error() {
    protocol_error(b"*1\r\n$99999999999\r\n");
    protocol_error(b"*1\r\n$536870913\r\n");
}

#[test]
fn bulk_length_at_the_limit_waits_for_data() {
    waits_for_more(b"*1\r\n$536870912\r\n");
}

#[test]
fn expected_dollar_errors_name_the_byte() {
    let r = protocol_error(b"*1\r\nfoo\r\n");
    assert_eq!(
        r,
        R::Error("ERR Protocol error: expected '$', got 'f'".into())
    );
    protocol_error(b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n:1\r\n");
    protocol_error(b"*1\r\n $4\r\n");
    protocol_error(b"*2\r\n$4\r\nECHO\r\n*1\r\n");
}

#[test]
fn too_long_length_lines_are_errors() {
    let mut req = b"*".to_vec();
    req.extend(std::iter::repeat_n(b'1', 70_000));
    protocol_error(&req);
    let mut req = b"*1\r\n$".to_vec();
    req.extend(std::iter::repeat_n(b'1', 70_000));
    protocol_error(&req);
}

#[test]
fn replies_before_a_protocol_error_are_sent() {
    let mut d = Diff::new();
    d.send_raw(b"PING\r\n*1\r\n$4\r\nPING\r\n*abc\r\n");
    d.read_both();
    d.read_both();
    d.read_both();
    d.assert_closed_both();
}

#[test]
fn a_new_connection_works_after_a_protocol_error() {
    let mut d = Diff::new();
    d.cmd(&["SET", "k", "v"]);
    d.send_raw(b"*1\r\n$x\r\n");
    d.read_both();
    d.assert_closed_both();
    d.reconnect();
    d.cmd(&["GET", "k"]);
}

// ------------------------------------------------------------------ odd but valid multibulk

#[test]
fn empty_and_negative_multibulk_are_ignored() {
    let mut d = Diff::new();
    d.send_raw(b"*0\r\n*-1\r\n*-5\r\n*1\r\n$4\r\nPING\r\n");
    d.read_both();
    d.assert_silent_both(SILENCE);
}

#[test]
fn empty_command_name_is_unknown() {
    let mut d = Diff::new();
    d.send_raw(b"*1\r\n$0\r\n\r\n");
    d.read_both();
    d.cmd(&["PING"]);
}

#[test]
fn bulk_payload_terminator_is_not_checked() {
    // Redis skips the two bytes after a bulk payload without looking at them.
    let mut d = Diff::new();
    d.send_raw(b"*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n");
    d.read_both();
    d.read_both();
}

#[test]
fn incomplete_requests_wait() {
    waits_for_more(b"*1\r\n$4\r\nPING");
    waits_for_more(b"*1\r");
    waits_for_more(b"*2\r\n$3\r\nGET\r\n");
    waits_for_more(b"*1\n$4\nPING\n");
}

#[test]
fn a_request_split_across_writes_is_assembled() {
    let mut d = Diff::new();
    let req = encode_request(&[b"SET", b"split", b"value"]);
    for byte in req.chunks(3) {
        d.send_raw(byte);
        std::thread::sleep(Duration::from_millis(2));
    }
    d.read_both();
    d.cmd(&["GET", "split"]);
}

// ------------------------------------------------------------------ inline commands

#[test]
fn inline_commands_work() {
    let mut d = Diff::new();
    d.send_raw(b"PING\r\n");
    d.read_both();
    d.send_raw(b"set a b\r\nget a\r\n");
    d.read_both();
    d.read_both();
    d.send_raw(b"  PING  \r\n");
    d.read_both();
    d.send_raw(b"PING\n");
    d.read_both();
    d.send_raw(b"\r\n\r\nPING\r\n");
    d.read_both();
    d.send_raw(b"SET k\tv\r\nGET k\r\n");
    d.read_both();
    d.read_both();
    d.send_raw(b"PING\rPING\r\n");
    d.read_both();
    d.send_raw(b"GET\r\n");
    d.read_both();
    d.send_raw(b"NOSUCHCMD a b\r\n");
    d.read_both();
    d.assert_silent_both(SILENCE);
}

#[test]
fn inline_quoting_rules() {
    let mut d = Diff::new();
    for line in [
        b"ECHO \"a\\x41\\n\"\r\n".as_slice(),
        b"ECHO 'a\\x41'\r\n",
        b"ECHO \"\\xZZ\"\r\n",
        b"ECHO \"a\\\"b\"\r\n",
        b"ECHO 'it\\'s'\r\n",
        b"ECHO \"\"\r\n",
        b"ECHO ''\r\n",
        b"ECHO \"tab\\there\\r\\a\\b\"\r\n",
        b"ECHO \"sp ace\"\r\n",
        b"SET \"key with space\" 'single quoted'\r\n",
        b"GET \"key with space\"\r\n",
    ] {
        d.send_raw(line);
        d.read_both();
    }
}

#[test]
fn unbalanced_quotes_close_the_connection() {
    let r = protocol_error(b"set k \"abc\r\n");
    assert_eq!(
        r,
        R::Error("ERR Protocol error: unbalanced quotes in request".into())
    );
    protocol_error(b"ECHO 'a'b\r\n");
    protocol_error(b"ECHO \"a\"b\r\n");
    protocol_error(b"ECHO 'abc\r\n");
}

#[test]
fn too_big_inline_request_closes_the_connection() {
    let r = protocol_error(&vec![b'x'; 70_000]);
    assert_eq!(
        r,
        R::Error("ERR Protocol error: too big inline request".into())
    );
}

// ------------------------------------------------------------------ arity over the wire

#[test]
fn wrong_arity_keeps_the_connection_open() {
    let mut d = Diff::new();
    d.send_raw(b"*1\r\n$3\r\nGET\r\n");
    d.read_both();
    d.send_raw(b"*4\r\n$3\r\nGET\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n");
    d.read_both();
    d.cmd(&["SET", "k"]);
    d.cmd(&["PING"]);
}

// ------------------------------------------------------------------ pipelines

#[test]
fn pipeline_of_100_commands_in_one_write() {
    let mut d = Diff::new();
    let mut cmds = Vec::new();
    for i in 0..100 {
        let key = format!("k{}", i % 7);
        let c = match i % 10 {
            0 => command(&["SET", &key, &i.to_string()]),
            1 => command(&["GET", &key]),
            2 => command(&["INCR", &key]),
            3 => command(&["APPEND", &key, "x"]),
            4 => command(&["GET"]),
            5 => command(&["DEL", &key]),
            6 => command(&["EXISTS", &key, "k1", "k2"]),
            7 => command(&["NOSUCHCMD", &key]),
            8 => command(&["SETRANGE", &key, "3", "abc"]),
            _ => command(&["MGET", "k0", "k1", "k2", "k3", "k4", "k5", "k6"]),
        };
        cmds.push(c);
    }
    let replies = d.pipeline(&cmds);
    assert_eq!(replies.len(), 100);
    d.cmd(&["DBSIZE"]);
}

#[test]
fn pipeline_of_inline_commands_in_one_write() {
    let mut d = Diff::new();
    let mut req = Vec::new();
    for i in 0..100 {
        req.extend_from_slice(format!("INCR counter\r\nECHO e{i}\r\n").as_bytes());
    }
    d.send_raw(&req);
    for _ in 0..200 {
        d.read_both();
    }
    d.cmd(&["GET", "counter"]);
}

#[test]
fn pipeline_with_big_values() {
    let mut d = Diff::new();
    let big = "v".repeat(100_000);
    let mut cmds = Vec::new();
    for i in 0..20 {
        cmds.push(command(&["SET", &format!("big{i}"), &big]));
        cmds.push(command(&["STRLEN", &format!("big{i}")]));
        cmds.push(command(&["GETRANGE", &format!("big{i}"), "99990", "-1"]));
    }
    d.pipeline(&cmds);
    d.cmd(&["DBSIZE"]);
}

#[test]
fn client_disconnecting_mid_pipeline_leaves_the_server_working() {
    let mut d = Diff::new();
    // Complete commands whose replies are read, then half a command, then
    // the client vanishes: the half command must not run.
    d.pipeline(&[command(&["SET", "a", "1"]), command(&["SET", "b", "2"])]);
    d.send_raw(b"*3\r\n$3\r\nSET\r\n$7\r\npartial\r\n$5\r\nval");
    d.client().redis.shutdown();
    d.client().firn.shutdown();
    d.reconnect();
    d.cmd(&["MGET", "a", "b", "partial"]);
    d.cmd(&["EXISTS", "partial"]);
}

#[test]
fn client_disconnecting_without_reading_replies() {
    let mut d = Diff::new();
    let mut req = Vec::new();
    for i in 0..1000 {
        req.extend_from_slice(&encode_request(&[
            b"SET",
            format!("key{i}").as_bytes(),
            &[b'x'; 1000],
        ]));
        req.extend_from_slice(&encode_request(&[b"GET", format!("key{i}").as_bytes()]));
    }
    d.send_raw(&req);
    d.client().redis.shutdown();
    d.client().firn.shutdown();
    d.reconnect();
    d.cmd(&["PING"]);
    d.cmd(&["SET", "after", "1"]);
    d.cmd(&["GET", "after"]);
}

#[test]
fn half_closed_client_still_gets_its_replies() {
    let mut d = Diff::new();
    let mut req = Vec::new();
    for i in 0..10 {
        req.extend_from_slice(&encode_request(&[b"INCR", b"n"]));
        req.extend_from_slice(&encode_request(&[b"ECHO", i.to_string().as_bytes()]));
    }
    d.send_raw(&req);
    d.client().redis.shutdown_write();
    d.client().firn.shutdown_write();
    for _ in 0..20 {
        d.read_both();
    }
    d.assert_closed_both();
}
