//! The MONITOR feed as an observer of the after-call stage: each command
//! that ran, shown as coming from its client (line.rs writes the line).

use bytes::Bytes;

use super::line::feed_monitors_from;
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
