//! Reads whose data is only on disk take the cold path (memory-only read ->
//! Incomplete -> warm on the I/O pool -> re-run) and return the right
//! values; INFO shows they did.

use firn_testkit::{encode_request, info, Server, R};

fn value_of(i: usize) -> String {
    format!("{i:06}-").repeat(250)
}

#[test]
fn reads_from_disk_go_through_the_io_pool_and_return_the_data() {
    let mut server = Server::firn_with(&["--maxmemory", "16mb", "--io-threads", "2"]);
    let mut c = server.conn();
    let keys = 6000;
    let mut batch = Vec::new();
    for i in 0..keys {
        batch.extend(encode_request(&[
            b"SET",
            format!("key:{i}").as_bytes(),
            value_of(i).as_bytes(),
        ]));
    }
    c.send_raw(&batch);
    for _ in 0..keys {
        assert_eq!(c.read_reply().1, R::Simple("OK".into()));
    }
    // After a restart RocksDB has flushed everything to SST files and the
    // caches are empty: these reads must reach the disk.
    server.restart();
    let mut c = server.conn();
    for i in (0..keys).step_by(37) {
        assert_eq!(
            c.cmd(&["GET", &format!("key:{i}")]),
            R::bulk(value_of(i).as_bytes()),
            "key:{i}"
        );
    }
    assert!(
        info::storage(&mut c, "cold_commands") > 0,
        "no command took the cold path"
    );
    assert!(info::storage(&mut c, "io_completed") > 0);
    assert_eq!(info::storage(&mut c, "io_queue_rejected"), 0);
    // The same keys are now answered from memory.
    let cold_before = info::storage(&mut c, "cold_commands");
    for i in (0..keys).step_by(37) {
        assert_eq!(
            c.cmd(&["STRLEN", &format!("key:{i}")]),
            R::Int(value_of(i).len() as i64)
        );
    }
    assert_eq!(info::storage(&mut c, "cold_commands"), cold_before);
}
