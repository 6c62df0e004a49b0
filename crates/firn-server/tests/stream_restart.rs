//! Streams across restarts: a `kill -9` in the middle of a consumer-group
//! workload (producers XADD, consumers XREADGROUP then XACK) loses no
//! acknowledged XADD or XACK, and the pending list, the consumers' counts
//! and `last-delivered-id` after the restart are what the acknowledged
//! replies imply; a clean restart keeps a stream with groups exactly.

use firn_testkit::{Conn, Server, R};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// An entry ID as `(ms, seq)`, so sets order as the stream does.
type Id = (u64, u64);

fn parse_id(r: &R) -> Id {
    let text = r
        .as_str()
        .unwrap_or_else(|| panic!("ID expected: {}", r.render()));
    let (ms, seq) = text.split_once('-').expect("ms-seq");
    (ms.parse().expect("ms"), seq.parse().expect("seq"))
}

fn id_text(id: Id) -> String {
    format!("{}-{}", id.0, id.1)
}

fn int(r: &R) -> i64 {
    r.as_int()
        .unwrap_or_else(|| panic!("integer expected, got {}", r.render()))
}

/// What one consumer learnt from its replies, and the one command it may
/// have had in flight when the server died.
#[derive(Default)]
struct Seen {
    delivered: BTreeSet<Id>,
    acked: BTreeSet<Id>,
    /// An XACK sent and not answered: its IDs may or may not be acked.
    acking: Vec<Id>,
    /// An XREADGROUP sent and not answered: it may have delivered entries.
    reading: bool,
}

/// The IDs of an XREADGROUP reply (`[[key, [[id, fields]...]]]`), or none
/// for a timeout.
fn delivered_ids(reply: &R) -> Vec<Id> {
    let mut ids = Vec::new();
    for stream in reply.items() {
        for entry in stream.items().get(1).map_or(&[][..], |e| e.items()) {
            ids.push(parse_id(&entry.items()[0]));
        }
    }
    ids
}

#[test]
fn a_kill_9_keeps_what_the_replies_said() {
    let mut server = Server::firn();
    let port = server.port();
    let mut setup = server.conn();
    assert_eq!(
        setup.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]),
        R::Simple("OK".into())
    );
    let stop = Arc::new(AtomicBool::new(false));
    let producers: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            let added = Arc::new(Mutex::new((BTreeSet::<Id>::new(), false)));
            let out = added.clone();
            let handle = std::thread::spawn(move || {
                let mut c = Conn::connect(port);
                while !stop.load(Ordering::Acquire) {
                    added.lock().unwrap().1 = true;
                    c.send(&[b"XADD", b"s", b"*", b"f", b"v"]);
                    match c.try_read_reply() {
                        Ok((_, r @ R::Bulk(Some(_)))) => {
                            let mut state = added.lock().unwrap();
                            state.0.insert(parse_id(&r));
                            state.1 = false;
                        }
                        _ => break,
                    }
                }
            });
            (handle, out)
        })
        .collect();
    let consumers: Vec<_> = (0..2)
        .map(|i| {
            let stop = stop.clone();
            let seen = Arc::new(Mutex::new(Seen::default()));
            let out = seen.clone();
            let handle = std::thread::spawn(move || {
                let mut c = Conn::connect(port);
                let name = format!("c{i}");
                while !stop.load(Ordering::Acquire) {
                    seen.lock().unwrap().reading = true;
                    c.send(&[
                        b"XREADGROUP",
                        b"GROUP",
                        b"g",
                        name.as_bytes(),
                        b"COUNT",
                        b"7",
                        b"BLOCK",
                        b"50",
                        b"STREAMS",
                        b"s",
                        b">",
                    ]);
                    let Ok((_, reply)) = c.try_read_reply() else {
                        break;
                    };
                    let ids = delivered_ids(&reply);
                    {
                        let mut state = seen.lock().unwrap();
                        state.reading = false;
                        state.delivered.extend(ids.iter().copied());
                    }
                    // Acknowledge all but every third entry, which stays
                    // pending.
                    let to_ack: Vec<Id> = ids.into_iter().filter(|id| id.1 % 3 != 2).collect();
                    if to_ack.is_empty() {
                        continue;
                    }
                    seen.lock().unwrap().acking = to_ack.clone();
                    let texts: Vec<String> = to_ack.iter().map(|id| id_text(*id)).collect();
                    let mut args: Vec<&[u8]> = vec![b"XACK", b"s", b"g"];
                    args.extend(texts.iter().map(|t| t.as_bytes()));
                    c.send(&args);
                    match c.try_read_reply() {
                        Ok((_, R::Int(n))) => {
                            assert_eq!(n as usize, to_ack.len(), "each ID was pending once");
                            let mut state = seen.lock().unwrap();
                            state.acked.extend(to_ack);
                            state.acking.clear();
                        }
                        _ => break,
                    }
                }
            });
            (handle, out)
        })
        .collect();
    std::thread::sleep(Duration::from_millis(900));
    server.kill9();
    stop.store(true, Ordering::Release);
    let added: Vec<(BTreeSet<Id>, bool)> = producers
        .into_iter()
        .map(|(h, a)| {
            let _ = h.join();
            let state = a.lock().unwrap();
            (state.0.clone(), state.1)
        })
        .collect();
    let seen: Vec<Seen> = consumers
        .into_iter()
        .map(|(h, s)| {
            let _ = h.join();
            std::mem::take(&mut *s.lock().unwrap())
        })
        .collect();
    assert!(
        seen.iter().all(|s| !s.acked.is_empty()),
        "every consumer had acknowledged something before the kill"
    );
    server.kill9_restart();
    let mut c = server.conn();

    // Every acknowledged XADD is there; at most one in flight per producer
    // may be there too.
    let entries = c.cmd(&["XRANGE", "s", "-", "+"]);
    let stored: BTreeSet<Id> = entries
        .items()
        .iter()
        .map(|e| parse_id(&e.items()[0]))
        .collect();
    let acked_adds: BTreeSet<Id> = added
        .iter()
        .flat_map(|(ids, _)| ids.iter().copied())
        .collect();
    assert!(!acked_adds.is_empty(), "no XADD was acknowledged");
    let missing: Vec<_> = acked_adds.difference(&stored).collect();
    assert!(missing.is_empty(), "acknowledged XADDs lost: {missing:?}");
    let extra = stored.difference(&acked_adds).count();
    let in_flight = added.iter().filter(|(_, pending)| *pending).count();
    assert!(extra <= in_flight, "{extra} entries nobody was told of");
    assert_eq!(int(&c.cmd(&["XLEN", "s"])), stored.len() as i64);

    // The pending list: what was delivered and not acknowledged, give or
    // take each consumer's one command in flight.
    let pel_reply = c.cmd(&["XPENDING", "s", "g", "-", "+", "1000000"]);
    let mut pel: BTreeSet<Id> = BTreeSet::new();
    for e in pel_reply.items() {
        pel.insert(parse_id(&e.items()[0]));
    }
    let delivered_max = seen
        .iter()
        .flat_map(|s| s.delivered.iter().copied())
        .max()
        .unwrap_or((0, 0));
    for (i, s) in seen.iter().enumerate() {
        let mine: BTreeSet<Id> = c
            .cmd(&["XPENDING", "s", "g", "-", "+", "1000000", &format!("c{i}")])
            .items()
            .iter()
            .map(|e| parse_id(&e.items()[0]))
            .collect();
        for id in s.delivered.difference(&s.acked) {
            assert!(
                mine.contains(id) || s.acking.contains(id),
                "c{i}: {} was delivered, never acknowledged, and is not pending",
                id_text(*id)
            );
        }
        for id in &mine {
            let known = s.delivered.contains(id) && !s.acked.contains(id);
            let from_read_in_flight = s.reading && *id > delivered_max;
            assert!(
                known || from_read_in_flight,
                "c{i}: {} is pending but its reply said otherwise",
                id_text(*id)
            );
        }
    }
    // The counts agree with the lists.
    let summary = c.cmd(&["XPENDING", "s", "g"]);
    assert_eq!(int(&summary.items()[0]), pel.len() as i64);
    let per_consumer: i64 = summary.items()[3]
        .items()
        .iter()
        .map(|pair| {
            pair.items()[1]
                .as_str()
                .and_then(|n| n.parse::<i64>().ok())
                .unwrap_or(-1)
        })
        .sum();
    assert_eq!(per_consumer, pel.len() as i64);
    // last-delivered-id: at least every delivered ID, at most the last entry.
    let groups = c.cmd(&["XINFO", "GROUPS", "s"]);
    let group = &groups.items()[0];
    let last_delivered = group
        .items()
        .chunks(2)
        .find(|kv| kv[0].as_str().as_deref() == Some("last-delivered-id"))
        .map(|kv| parse_id(&kv[1]))
        .expect("last-delivered-id");
    assert!(last_delivered >= delivered_max);
    assert!(stored.last().is_none_or(|last| last_delivered <= *last));
    // And the stream takes new work after the restart.
    let next = c.cmd(&["XADD", "s", "*", "f", "after"]);
    assert!(parse_id(&next) > *stored.last().unwrap_or(&(0, 0)));
    let read = c.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "late",
        "COUNT",
        "1000000",
        "STREAMS",
        "s",
        ">",
    ]);
    assert!(delivered_ids(&read).contains(&parse_id(&next)));
}

#[test]
fn a_clean_restart_keeps_a_stream_with_its_groups() {
    let mut server = Server::firn();
    let mut c = server.conn();
    for i in 1..=250 {
        c.cmd(&[
            "XADD",
            "s",
            &format!("{i}-1"),
            "field",
            &format!("value-{i}"),
        ]);
    }
    c.cmd(&["XDEL", "s", "3-1", "100-1"]);
    c.cmd(&["XTRIM", "s", "MAXLEN", "~", "120"]);
    c.cmd(&["XGROUP", "CREATE", "s", "g1", "0"]);
    c.cmd(&["XGROUP", "CREATE", "s", "g2", "200-1", "ENTRIESREAD", "190"]);
    c.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "alice",
        "COUNT",
        "20",
        "STREAMS",
        "s",
        ">",
    ]);
    c.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "bob",
        "COUNT",
        "5",
        "STREAMS",
        "s",
        ">",
    ]);
    c.cmd(&["XACK", "s", "g1", "140-1", "141-1"]);
    c.cmd(&["XCLAIM", "s", "g1", "bob", "0", "150-1", "JUSTID"]);
    c.cmd(&["XSETID", "s", "300-0", "MAXDELETEDID", "100-1"]);
    let before = c.cmd(&["XINFO", "STREAM", "s", "FULL", "COUNT", "0"]);
    let groups = c.cmd(&["XINFO", "GROUPS", "s"]);
    drop(c);
    server.restart();
    let mut c = server.conn();
    assert_eq!(
        c.cmd(&["XINFO", "STREAM", "s", "FULL", "COUNT", "0"]),
        before
    );
    assert_eq!(c.cmd(&["XINFO", "GROUPS", "s"]), groups);
    assert!(c.cmd(&["XADD", "s", "300-0", "f", "v"]).is_error());
    assert_eq!(c.cmd(&["XADD", "s", "300-1", "f", "v"]), R::bulk(b"300-1"));
}
