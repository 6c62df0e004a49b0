//! MONITOR: the command that turns a connection into a monitor.

use bytes::Bytes;
use firn_resp::Reply;
use std::sync::atomic::Ordering;

use crate::commands::{def, Ctx, Def, Deferred};
use crate::errors::{CmdError, CmdResult};

pub const COMMANDS: &[Def] = &[def("monitor", monitor)];

/// Redis's reply to MONITOR inside a transaction (its clients must get one
/// reply per command).
const MONITOR_IN_EXEC: &str = "ERR MONITOR isn't allowed for DENY BLOCKING client";

fn monitor(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    // A client that expects a reply per command (EXEC) cannot monitor.
    if ctx.in_unit {
        return Err(CmdError::Static(MONITOR_IN_EXEC));
    }
    ctx.client.monitor.store(true, Ordering::Release);
    ctx.deferred = Some(Deferred::Monitor);
    Ok(Reply::ok())
}
