//! A command as MONITOR shows it (Redis's replicationFeedMonitors), sent
//! to every monitor. It needs only the server's feed channel, so both the
//! after-call observer (feed.rs) and a committed script's side effects
//! (effects.rs: the commands it ran, as `[db lua]`) write through it.

use bytes::Bytes;

use crate::server::Server;

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
