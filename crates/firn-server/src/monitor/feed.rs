//! The MONITOR feed: each command that ran, as Redis shows it.

use bytes::Bytes;

use crate::after_call::{Call, Observer};
use crate::command_table::Flags;
use crate::server::{ClientInfo, Server};

/// The feed as an observer of the after-call stage: each command that ran,
/// with the database it left selected (admin commands are not shown), as
/// Redis's call() feeds it.
pub struct MonitorFeed;

impl Observer for MonitorFeed {
    fn ran(&self, call: &Call) {
        if !call.cmd.has(Flags::ADMIN) {
            feed_monitors(
                call.server,
                call.client,
                call.db,
                &call.cmd.redacted(call.args),
            );
        }
    }
}

/// Shows a command that ran, in database `db`, to the MONITOR clients.
pub fn feed_monitors(server: &Server, client: &ClientInfo, db: u8, args: &[Bytes]) {
    feed_monitors_from(server, &client.addr, db, args);
}

/// Shows a command to the MONITOR clients as coming from `origin` (a
/// client's address, or `lua` for the commands a script runs).
pub fn feed_monitors_from(server: &Server, origin: &str, db: u8, args: &[Bytes]) {
    if server.monitor_feed.receiver_count() == 0 {
        return;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut line = format!(
        "+{}.{:06} [{} {}]",
        now.as_secs(),
        now.subsec_micros(),
        db,
        origin
    );
    for arg in args {
        line.push(' ');
        line.push_str(&quote_arg(arg));
    }
    line.push_str("\r\n");
    let _ = server.monitor_feed.send(Bytes::from(line));
}

/// Redis's sdscatrepr quoting.
pub fn quote_arg(arg: &[u8]) -> String {
    let mut s = String::with_capacity(arg.len() + 2);
    s.push('"');
    for &b in arg {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            7 => s.push_str("\\a"),
            8 => s.push_str("\\b"),
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    s.push('"');
    s
}
