//! Reads whose data is only on disk take the cold path (memory-only read ->
//! Incomplete -> warm on the I/O pool -> re-run) and return the right
//! values; INFO shows they did.

mod common;

use common::{Server, R};

fn info_field(server: &Server, field: &str) -> u64 {
    let mut c = server.conn();
    let text = match c.cmd(&["INFO", "storage"]) {
        R::Bulk(Some(v)) => String::from_utf8_lossy(&v).to_string(),
        other => panic!("INFO: {}", other.render()),
    };
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in INFO storage:\n{text}"))
}

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
        batch.extend(common::encode_request(&[
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
        info_field(&server, "cold_commands") > 0,
        "no command took the cold path"
    );
    assert!(info_field(&server, "io_completed") > 0);
    assert_eq!(info_field(&server, "io_queue_rejected"), 0);
    // The same keys are now answered from memory.
    let cold_before = info_field(&server, "cold_commands");
    for i in (0..keys).step_by(37) {
        assert_eq!(
            c.cmd(&["STRLEN", &format!("key:{i}")]),
            R::Int(value_of(i).len() as i64)
        );
    }
    assert_eq!(info_field(&server, "cold_commands"), cold_before);
}
