//! Reply shapes several command groups share.

use bytes::Bytes;
use firn_resp::Reply;

/// A HELP reply: one status line per entry.
pub fn help_reply(lines: &[&'static str]) -> Reply {
    Reply::Array(
        lines
            .iter()
            .map(|l| Reply::Simple(Bytes::from_static(l.as_bytes())))
            .collect(),
    )
}
