//! Differential tests of Pub/Sub against redis-server 7.0.15: the same
//! subscribe/publish sequences, with two or three clients on each server,
//! every confirmation and message compared byte for byte in RESP2 and
//! RESP3, and every error path (RESP2 subscribed mode, arity, PUBSUB).
//!
//! Normalised only where Redis's order is a hash table's: the replies of
//! UNSUBSCRIBE without arguments (channel names compared as a set, counts
//! in order) and PUBSUB CHANNELS.

use firn_testkit::{Conn, Diff, R};

/// Sends a command whose output is `n` separate replies (SUBSCRIBE a b)
/// and compares each.
fn multi_reply(d: &mut Diff, args: &[&str], n: usize) {
    d.send(args);
    for _ in 0..n {
        d.read_both();
    }
}

/// Reads `n` confirmations from each server whose channel order is a hash
/// table's: the names must be the same set, the counts the same sequence.
fn unordered_confirmations(d: &mut Diff, args: &[&str], n: usize) {
    d.send(args);
    let pair = d.client();
    let read = |conn: &mut Conn| {
        let mut names = Vec::new();
        let mut rest = Vec::new();
        for _ in 0..n {
            let (_, reply) = conn.read_reply();
            let items = reply.items().to_vec();
            assert_eq!(items.len(), 3, "{}", reply.render());
            names.push(items[1].encode());
            rest.push((
                items[0].encode(),
                items[2].encode(),
                matches!(reply, R::Push(_)),
            ));
        }
        names.sort();
        (names, rest)
    };
    let redis = read(&mut pair.redis);
    let firn = read(&mut pair.firn);
    assert_eq!(redis, firn, "confirmations of {args:?}");
}

#[test]
fn resp2_channel_and_pattern_delivery() {
    let mut d = Diff::new();
    let subscriber = d.open_client();
    let pattern_subscriber = d.open_client();
    d.use_client(subscriber);
    multi_reply(&mut d, &["SUBSCRIBE", "news", "sport"], 2);
    multi_reply(&mut d, &["SUBSCRIBE", "news"], 1);
    d.use_client(pattern_subscriber);
    multi_reply(&mut d, &["PSUBSCRIBE", "n*", "s?ort", "[a-m]*"], 3);
    multi_reply(&mut d, &["SUBSCRIBE", "news"], 1);

    d.use_client(0);
    // The channel subscriber, then the pattern's `pmessage`, as Redis orders.
    d.cmd(&["PUBLISH", "news", "hello"]);
    d.cmd(&["PUBLISH", "sport", "goal"]);
    d.cmd(&["PUBLISH", "nothing-here", "x"]);
    d.cmd(&["PUBLISH", "zzz", "nobody"]);
    d.cmd(&["PUBLISH", "", ""]);
    d.cmd(&[
        b"PUBLISH".as_slice(),
        b"news",
        b"\x00\xff\r\nbinary payload",
    ]);
    d.use_client(subscriber);
    for _ in 0..3 {
        d.read_both();
    }
    d.use_client(pattern_subscriber);
    // news: message, pmessage n*; sport: pmessage s?ort; nothing-here:
    // pmessage n*; news again: message, pmessage n*.
    for _ in 0..6 {
        d.read_both();
    }
    d.assert_silent_both(std::time::Duration::from_millis(100));

    d.use_client(subscriber);
    multi_reply(&mut d, &["UNSUBSCRIBE", "news", "not-subscribed"], 2);
    d.use_client(0);
    d.cmd(&["PUBLISH", "news", "after"]);
    d.cmd(&["PUBLISH", "sport", "still"]);
    d.use_client(subscriber);
    d.read_both();
    d.use_client(pattern_subscriber);
    // Pending: news (message, pmessage n*), sport (pmessage s?ort); then
    // the confirmation.
    multi_reply(&mut d, &["PUNSUBSCRIBE", "n*"], 4);
    d.use_client(0);
    d.cmd(&["PUBSUB", "NUMPAT"]);
    d.cmd(&["PUBSUB", "NUMSUB", "news", "sport", "none"]);
    d.cmd_unordered(&["PUBSUB", "CHANNELS"]);
    d.cmd_unordered(&["PUBSUB", "CHANNELS", "n*"]);
    d.cmd_unordered(&["PUBSUB", "CHANNELS", "[s]*"]);
}

#[test]
fn resp2_subscribed_mode_allows_only_pubsub_commands() {
    let mut d = Diff::new();
    multi_reply(&mut d, &["SUBSCRIBE", "a"], 1);
    d.cmd(&["GET", "k"]);
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["CLIENT", "LIST"]);
    d.cmd(&["CLIENT", "ID"]);
    d.cmd(&["PUBLISH", "a", "x"]);
    d.cmd(&["PUBSUB", "NUMSUB", "a"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["NOSUCHCOMMAND"]);
    d.cmd(&["GET"]);
    d.cmd(&["PING"]);
    d.cmd(&["PING", "hello"]);
    d.cmd(&["PING", "a", "b"]);
    multi_reply(&mut d, &["PSUBSCRIBE", "x*"], 1);
    multi_reply(&mut d, &["SSUBSCRIBE", "s"], 1);
    multi_reply(&mut d, &["UNSUBSCRIBE"], 1);
    multi_reply(&mut d, &["PUNSUBSCRIBE"], 1);
    // Still subscribed to a shard channel: still in subscribed mode.
    d.cmd(&["GET", "k"]);
    multi_reply(&mut d, &["SUNSUBSCRIBE"], 1);
    // Out of subscribed mode: everything works again.
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["PING"]);
    multi_reply(&mut d, &["SUBSCRIBE", "b"], 1);
    d.cmd(&["RESET"]);
    d.cmd(&["GET", "k"]);
    let other = d.open_client();
    d.use_client(other);
    d.cmd(&["PUBLISH", "b", "nobody after RESET"]);
    d.cmd(&["PUBSUB", "NUMSUB", "a", "b"]);
    d.cmd(&["PUBSUB", "NUMPAT"]);
}

#[test]
fn unsubscribing_without_arguments() {
    let mut d = Diff::new();
    // Nothing subscribed: one confirmation with a null channel.
    multi_reply(&mut d, &["UNSUBSCRIBE"], 1);
    multi_reply(&mut d, &["PUNSUBSCRIBE"], 1);
    multi_reply(&mut d, &["SUNSUBSCRIBE"], 1);
    multi_reply(&mut d, &["SUBSCRIBE", "a", "b", "c"], 3);
    multi_reply(&mut d, &["PSUBSCRIBE", "p1", "p2"], 2);
    multi_reply(&mut d, &["SSUBSCRIBE", "s1", "s2"], 2);
    // Counts: channels and patterns together, shard channels apart.
    unordered_confirmations(&mut d, &["UNSUBSCRIBE"], 3);
    multi_reply(&mut d, &["UNSUBSCRIBE", "a"], 1);
    unordered_confirmations(&mut d, &["PUNSUBSCRIBE"], 2);
    unordered_confirmations(&mut d, &["SUNSUBSCRIBE"], 2);
    multi_reply(&mut d, &["SUNSUBSCRIBE", "s1", "zz"], 2);
    d.cmd(&["PING"]);
}

#[test]
fn resp3_pushes_and_normal_commands_while_subscribed() {
    let mut d = Diff::new();
    let subscriber = d.open_client();
    d.use_client(subscriber);
    d.cmd_type_only(&["HELLO", "3"]);
    multi_reply(&mut d, &["SUBSCRIBE", "a", "b"], 2);
    multi_reply(&mut d, &["PSUBSCRIBE", "a*"], 1);
    // RESP3 clients may run anything while subscribed.
    d.cmd(&["SET", "k", "v"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["PING"]);
    d.cmd(&["PING", "x"]);
    // Publishing to its own channel: the pushes come before the reply.
    d.send(&["PUBLISH", "a", "to myself"]);
    d.read_both();
    d.read_both();
    d.read_both();
    d.use_client(0);
    d.cmd(&["PUBLISH", "b", "from another"]);
    d.cmd(&["PUBLISH", "abc", "pattern only"]);
    d.use_client(subscriber);
    d.read_both();
    d.read_both();
    // Introspection replies in RESP3.
    d.cmd(&["PUBSUB", "NUMSUB", "a", "b", "none"]);
    d.cmd(&["PUBSUB", "SHARDNUMSUB", "a"]);
    d.cmd(&["PUBSUB", "NUMPAT"]);
    d.cmd_unordered(&["PUBSUB", "CHANNELS"]);
    d.cmd(&["PUBSUB", "SHARDCHANNELS"]);
    d.cmd(&["PUBSUB", "HELP"]);
    d.cmd(&["SPUBLISH", "a", "nobody"]);
    // RESP3 unsubscribe with nothing left: a null channel push.
    unordered_confirmations(&mut d, &["UNSUBSCRIBE"], 2);
    multi_reply(&mut d, &["PUNSUBSCRIBE"], 1);
    multi_reply(&mut d, &["UNSUBSCRIBE"], 1);
    d.cmd(&["GET", "k"]);
    // Back to RESP2 while subscribed: subscribed mode rules apply again.
    multi_reply(&mut d, &["SUBSCRIBE", "c"], 1);
    d.cmd_type_only(&["HELLO", "2"]);
    d.cmd(&["GET", "k"]);
    d.cmd(&["PING"]);
}

#[test]
fn shard_channels() {
    let mut d = Diff::new();
    let subscriber = d.open_client();
    d.use_client(subscriber);
    multi_reply(&mut d, &["SSUBSCRIBE", "{user}1", "{user}2"], 2);
    multi_reply(&mut d, &["SUBSCRIBE", "{user}1"], 1);
    d.use_client(0);
    d.cmd(&["SPUBLISH", "{user}1", "shard"]);
    d.cmd(&["PUBLISH", "{user}1", "plain"]);
    d.cmd(&["SPUBLISH", "{user}3", "nobody"]);
    d.cmd(&["PUBSUB", "SHARDNUMSUB", "{user}1", "{user}3"]);
    d.cmd(&["PUBSUB", "SHARDNUMSUB"]);
    d.cmd_unordered(&["PUBSUB", "SHARDCHANNELS"]);
    d.cmd_unordered(&["PUBSUB", "SHARDCHANNELS", "*1"]);
    d.cmd(&["PUBSUB", "NUMSUB", "{user}1", "{user}2"]);
    d.use_client(subscriber);
    d.read_both();
    d.read_both();
    multi_reply(&mut d, &["SUNSUBSCRIBE", "{user}2"], 1);
    d.use_client(0);
    d.cmd_unordered(&["PUBSUB", "SHARDCHANNELS"]);
}

#[test]
fn errors_and_help() {
    let mut d = Diff::new();
    for args in [
        &["SUBSCRIBE"][..],
        &["PSUBSCRIBE"],
        &["SSUBSCRIBE"],
        &["PUBLISH"],
        &["PUBLISH", "a"],
        &["PUBLISH", "a", "b", "c"],
        &["SPUBLISH", "a"],
        &["PUBSUB"],
        &["PUBSUB", "FOO"],
        &["PUBSUB", "CHANNELS", "a", "b"],
        &["PUBSUB", "SHARDCHANNELS", "a", "b"],
        &["PUBSUB", "NUMPAT", "x"],
        &["PUBSUB", "HELP"],
        &["PUBSUB", "help", "extra"],
        &["PUBSUB", "NUMSUB"],
        &["PUBSUB", "CHANNELS"],
    ] {
        d.cmd(args);
    }
}

/// The fields of a CLIENT LIST line that pub/sub decides.
fn pubsub_fields(reply: &R) -> R {
    let text = reply.as_str().unwrap_or_default();
    let mut lines: Vec<String> = text
        .lines()
        .map(|line| {
            line.split(' ')
                .filter(|f| {
                    ["flags=", "sub=", "psub=", "ssub=", "cmd="]
                        .iter()
                        .any(|p| f.starts_with(p))
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    lines.sort();
    R::Simple(lines.join("|"))
}

#[test]
fn client_list_info_and_kill_by_type() {
    let mut d = Diff::new();
    let a = d.open_client();
    let b = d.open_client();
    d.use_client(a);
    multi_reply(&mut d, &["SUBSCRIBE", "x", "y"], 2);
    multi_reply(&mut d, &["PSUBSCRIBE", "p*"], 1);
    d.use_client(b);
    d.cmd_type_only(&["HELLO", "3"]);
    multi_reply(&mut d, &["SSUBSCRIBE", "s"], 1);
    d.use_client(0);
    d.cmd_with(&["CLIENT", "LIST", "TYPE", "pubsub"], pubsub_fields);
    d.cmd_with(&["CLIENT", "LIST", "TYPE", "normal"], pubsub_fields);
    d.cmd_with(&["CLIENT", "LIST"], pubsub_fields);
    let stats = |r: &R| {
        let text = r.as_str().unwrap_or_default();
        R::Simple(
            text.lines()
                .filter(|l| l.starts_with("pubsub"))
                .collect::<Vec<_>>()
                .join("|"),
        )
    };
    d.cmd_with(&["INFO", "stats"], stats);
    d.cmd(&["CLIENT", "KILL", "TYPE", "pubsub"]);
    d.use_client(a);
    d.assert_closed_both();
    d.use_client(b);
    d.assert_closed_both();
}

/// CLIENT REPLY OFF silences replies, not pub/sub: confirmations and
/// messages are pushed anyway (Redis's CLIENT_PUSHING), in RESP2 and RESP3.
#[test]
fn client_reply_off_still_receives_pubsub() {
    for protocol in ["2", "3"] {
        let mut d = Diff::new();
        let subscriber = d.open_client();
        d.use_client(subscriber);
        d.cmd_with(&["HELLO", protocol], |_| R::Simple("hello".into()));
        d.send(&["CLIENT", "REPLY", "OFF"]);
        multi_reply(&mut d, &["SUBSCRIBE", "news", "sport"], 2);
        multi_reply(&mut d, &["PSUBSCRIBE", "n*"], 1);
        d.use_client(0);
        d.cmd(&["PUBLISH", "news", "hello"]);
        d.use_client(subscriber);
        d.read_both();
        d.read_both();
        multi_reply(&mut d, &["UNSUBSCRIBE", "news"], 1);
        // Other commands' replies stay silent.
        d.send(&["PING", "x"]);
        d.send(&["CLIENT", "REPLY", "ON"]);
        d.cmd(&["PUNSUBSCRIBE", "n*"]);
    }
}
