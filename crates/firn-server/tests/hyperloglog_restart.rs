//! HyperLogLog values survive kill -9 and a clean restart: PFADD, the
//! cached count PFCOUNT writes back and a PFMERGE result, compared with the
//! bytes redis-server 7.0.15 holds after the same commands.

use firn_testkit::{Conn, Server, R};

/// One binary-safe command on a single server.
fn call(conn: &mut Conn, args: &[&[u8]]) -> R {
    conn.send(args);
    conn.read_reply().1
}

/// `PFADD key element...` with elements `prefix<from>..` (`count` of them).
fn pfadd_range(key: &str, prefix: &str, from: usize, count: usize) -> Vec<Vec<u8>> {
    let mut c = vec![b"PFADD".to_vec(), key.as_bytes().to_vec()];
    c.extend((from..from + count).map(|i| format!("{prefix}{i}").into_bytes()));
    c
}

#[test]
fn hlls_survive_kill_9_and_restart() {
    let redis = Server::redis();
    let mut firn = Server::firn();
    let mut expected = Vec::new();
    {
        let (mut rc, mut fc) = (redis.conn(), firn.conn());
        for (key, n) in [("small", 50usize), ("dense", 20_000)] {
            for from in (0..n).step_by(1000) {
                let c = pfadd_range(key, "k", from, 1000.min(n - from));
                let args: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
                assert_eq!(call(&mut rc, &args), call(&mut fc, &args));
            }
            // The cached count PFCOUNT writes must survive too.
            assert_eq!(rc.cmd(&["PFCOUNT", key]), fc.cmd(&["PFCOUNT", key]));
            let value = rc.cmd(&["GET", key]);
            assert_eq!(value, fc.cmd(&["GET", key]));
            expected.push((key, value));
        }
        assert_eq!(
            rc.cmd(&["PFMERGE", "merged", "small", "dense"]),
            fc.cmd(&["PFMERGE", "merged", "small", "dense"])
        );
        let value = rc.cmd(&["GET", "merged"]);
        assert_eq!(value, fc.cmd(&["GET", "merged"]));
        expected.push(("merged", value));
    }
    firn.kill9_restart();
    let check = |firn: &Server, expected: &[(&str, R)]| {
        let mut c = firn.conn();
        for (key, value) in expected {
            assert_eq!(&c.cmd(&["GET", key]), value, "{key}");
        }
    };
    check(&firn, &expected);
    firn.restart();
    check(&firn, &expected);
}
