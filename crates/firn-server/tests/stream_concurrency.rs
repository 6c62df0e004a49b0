//! Consumer groups under concurrency: producers XADD while consumers of
//! one group XREADGROUP `>` (some blocking, some inside MULTI with their
//! XACK, some through EVAL) and others XAUTOCLAIM what stays pending. Every
//! entry is delivered by `>` exactly once, nothing is lost, and the pending
//! list at the end is exactly what was delivered or claimed and not
//! acknowledged. Runs in the default mode and with every read cold.

use firn_testkit::{Conn, Server, R};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Barrier};

const PRODUCERS: usize = 3;
const CONSUMERS: usize = 4;
const PER_PRODUCER: usize = 400;

fn id_of(r: &R) -> String {
    r.as_str()
        .unwrap_or_else(|| panic!("ID expected, got {}", r.render()))
}

/// The IDs of an XREADGROUP reply.
fn read_ids(reply: &R) -> Vec<String> {
    reply
        .items()
        .iter()
        .flat_map(|stream| stream.items().get(1).map_or(&[][..], |e| e.items()))
        .map(|entry| id_of(&entry.items()[0]))
        .collect()
}

fn ack(c: &mut Conn, ids: &[String]) -> i64 {
    let mut args = vec!["XACK", "s", "g"];
    args.extend(ids.iter().map(|s| s.as_str()));
    c.cmd(&args).as_int().unwrap_or(-1)
}

fn run(server: &Server) {
    let port = server.port();
    let mut setup = server.conn();
    setup.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    let start = Arc::new(Barrier::new(PRODUCERS + CONSUMERS));
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let start = start.clone();
            std::thread::spawn(move || {
                let mut c = Conn::connect(port);
                start.wait();
                let mut ids = Vec::new();
                for i in 0..PER_PRODUCER {
                    let r = c.cmd(&["XADD", "s", "*", "p", &p.to_string(), "i", &i.to_string()]);
                    ids.push(id_of(&r));
                }
                ids
            })
        })
        .collect();
    let total = PRODUCERS * PER_PRODUCER;
    let consumers: Vec<_> = (0..CONSUMERS)
        .map(|n| {
            let start = start.clone();
            std::thread::spawn(move || {
                let mut c = Conn::connect(port);
                let name = format!("c{n}");
                start.wait();
                let mut delivered = Vec::new();
                let mut acked = BTreeSet::new();
                let mut idle_rounds = 0;
                while idle_rounds < 20 {
                    let ids = match n % 4 {
                        // Blocking reads; every other batch acknowledged.
                        0 => read_ids(&c.cmd(&[
                            "XREADGROUP", "GROUP", "g", &name, "COUNT", "5", "BLOCK", "20",
                            "STREAMS", "s", ">",
                        ])),
                        // A read and the previous batch's ack in one MULTI.
                        1 => {
                            c.cmd(&["MULTI"]);
                            c.cmd(&["XREADGROUP", "GROUP", "g", &name, "COUNT", "3", "STREAMS", "s", ">"]);
                            c.cmd(&["XLEN", "s"]);
                            let exec = c.cmd(&["EXEC"]);
                            read_ids(&exec.items()[0])
                        }
                        // Through a script.
                        2 => read_ids(&c.cmd(&[
                            "EVAL",
                            "return redis.call('XREADGROUP','GROUP','g',ARGV[1],'COUNT','4','STREAMS',KEYS[1],'>')",
                            "1", "s", &name,
                        ])),
                        // Plain reads.
                        _ => read_ids(&c.cmd(&[
                            "XREADGROUP", "GROUP", "g", &name, "COUNT", "7", "STREAMS", "s", ">",
                        ])),
                    };
                    if ids.is_empty() {
                        idle_rounds += 1;
                        if n % 4 != 0 {
                            std::thread::sleep(std::time::Duration::from_millis(5));
                        }
                        continue;
                    }
                    idle_rounds = 0;
                    // Acknowledge every other entry of the batch.
                    let to_ack: Vec<String> = ids.iter().step_by(2).cloned().collect();
                    if !to_ack.is_empty() {
                        assert_eq!(ack(&mut c, &to_ack), to_ack.len() as i64, "{name}");
                        acked.extend(to_ack);
                    }
                    delivered.extend(ids);
                }
                (name, delivered, acked)
            })
        })
        .collect();
    let produced: BTreeSet<String> = producers
        .into_iter()
        .flat_map(|h| h.join().expect("producer"))
        .collect();
    assert_eq!(produced.len(), total, "every XADD got its own ID");
    let mut owner: BTreeMap<String, String> = BTreeMap::new();
    let mut acked_all = BTreeSet::new();
    for h in consumers {
        let (name, delivered, acked) = h.join().expect("consumer");
        for id in delivered {
            if let Some(first) = owner.insert(id.clone(), name.clone()) {
                panic!("{id} delivered by '>' to {first} and to {name}");
            }
        }
        acked_all.extend(acked);
    }
    let mut c = server.conn();
    // Whatever no consumer took before they went idle is still new.
    let rest = read_ids(&c.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "late",
        "COUNT",
        "100000",
        "STREAMS",
        "s",
        ">",
    ]));
    for id in rest {
        assert!(
            owner.insert(id.clone(), "late".into()).is_none(),
            "{id} twice"
        );
    }
    let delivered: BTreeSet<String> = owner.keys().cloned().collect();
    assert_eq!(delivered, produced, "every entry delivered exactly once");
    // The pending list: delivered and not acknowledged, each with its owner.
    let pel = c.cmd(&["XPENDING", "s", "g", "-", "+", "100000"]);
    let pending: BTreeMap<String, String> = pel
        .items()
        .iter()
        .map(|e| (id_of(&e.items()[0]), id_of(&e.items()[1])))
        .collect();
    let expected: BTreeMap<String, String> = owner
        .iter()
        .filter(|(id, _)| !acked_all.contains(*id))
        .map(|(id, who)| (id.clone(), who.clone()))
        .collect();
    assert_eq!(pending, expected);
    // XAUTOCLAIM hands all of it to one consumer, in order, once.
    let claimed = c.cmd(&[
        "XAUTOCLAIM",
        "s",
        "g",
        "sweeper",
        "0",
        "0",
        "COUNT",
        "100000",
        "JUSTID",
    ]);
    let ids: Vec<String> = claimed.items()[1].items().iter().map(id_of).collect();
    // In ID order, which is not the strings' order ("5-10" > "5-9").
    let mut want: Vec<String> = expected.keys().cloned().collect();
    want.sort_by_key(|id| {
        let (ms, seq) = id.split_once('-').unwrap_or(("0", "0"));
        (
            ms.parse::<u64>().unwrap_or(0),
            seq.parse::<u64>().unwrap_or(0),
        )
    });
    assert_eq!(
        ids.len(),
        want.len(),
        "claimed {} of {}: {}",
        ids.len(),
        want.len(),
        claimed.render()
    );
    assert_eq!(ids, want);
    let summary = c.cmd(&["XPENDING", "s", "g"]);
    assert_eq!(summary.items()[0], R::Int(expected.len() as i64));
    assert_eq!(
        summary.items()[3],
        R::Array(Some(vec![R::Array(Some(vec![
            R::bulk(b"sweeper"),
            R::bulk(expected.len().to_string().as_bytes()),
        ]))]))
    );
}

#[test]
fn each_entry_is_delivered_once_and_the_pending_list_adds_up() {
    run(&Server::firn());
}

#[test]
fn the_same_with_every_read_cold() {
    run(&Server::firn_with(&[
        "--debug-cold-reads",
        "yes",
        "--writer-threads",
        "2",
    ]));
}
