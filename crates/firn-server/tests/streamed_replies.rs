//! Replies too big to hold whole are streamed: a client that asks for one
//! and does not read it leaves only a bounded part of it queued in the
//! server (CLIENT LIST `omem`), and still gets every byte once it reads.

use firn_testkit::{encode_request, Conn, Server, R};
use std::time::{Duration, Instant};

const KEYS: usize = 150_000;
const KEY_LEN: usize = 100;

fn key(i: usize) -> String {
    format!("{i:0width$}", width = KEY_LEN)
}

/// Unsent output of the client whose last command is `cmd`, from CLIENT LIST.
fn omem_of(probe: &mut Conn, cmd: &str) -> Option<u64> {
    let list = probe.cmd(&["CLIENT", "LIST"]).as_str()?;
    let line = list
        .lines()
        .find(|l| l.split(' ').any(|f| f == format!("cmd={cmd}")))?;
    line.split(' ')
        .find_map(|f| f.strip_prefix("omem="))
        .and_then(|v| v.parse().ok())
}

#[test]
fn keys_over_a_big_keyspace_is_streamed_with_bounded_output() {
    let server = Server::firn();
    let mut loader = server.conn();
    let mut request = Vec::new();
    for batch in (0..KEYS).collect::<Vec<_>>().chunks(1000) {
        let mut args: Vec<Vec<u8>> = vec![b"MSET".to_vec()];
        for &i in batch {
            args.push(key(i).into_bytes());
            args.push(b"v".to_vec());
        }
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        request.extend_from_slice(&encode_request(&refs));
    }
    loader.send_raw(&request);
    for _ in 0..KEYS / 1000 {
        assert_eq!(loader.read_reply().1, R::Simple("OK".into()));
    }

    let mut reader = server.conn();
    reader.send(&[b"KEYS", b"*"]);
    // The reply is about 16 MB; wait until the server stops queueing more
    // of it for the client that does not read, and record the peak.
    let mut probe = server.conn();
    let (mut peak, mut last, mut stable) = (0u64, u64::MAX, 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    while stable < 10 && Instant::now() < deadline {
        let omem = omem_of(&mut probe, "keys").unwrap_or(0);
        peak = peak.max(omem);
        stable = if omem == last && omem > 0 {
            stable + 1
        } else {
            0
        };
        last = omem;
        assert_eq!(probe.cmd(&["GET", &key(7)]), R::bulk(b"v"));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        stable >= 10,
        "the KEYS output never settled (last omem {last})"
    );
    assert!(
        peak <= 3 * 1024 * 1024,
        "{peak} bytes of KEYS output queued for a client that reads nothing"
    );

    let (_, reply) = reader.read_reply();
    let mut keys: Vec<Vec<u8>> = reply
        .items()
        .iter()
        .map(|k| k.as_bytes().unwrap_or_default().to_vec())
        .collect();
    keys.sort();
    assert_eq!(keys.len(), KEYS);
    assert!(keys
        .iter()
        .enumerate()
        .all(|(i, k)| k.as_slice() == key(i).as_bytes()));
    // The connection is still in step.
    assert_eq!(reader.cmd(&["PING"]), R::Simple("PONG".into()));
}
