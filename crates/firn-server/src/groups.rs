//! Every command group's registration table, and every observer of the
//! after-call stage, in one place: both are installed at start-up. A group
//! is a file of handlers with its `COMMANDS` table; each command's facts
//! are declared there and in the generated command table. An observer is
//! a subsystem that watches commands run (after_call.rs).

use crate::after_call::Observer;
use crate::commands::{self, Def};
use crate::{blocking, bookkeeping, monitor, multi, pubsub, scripting, tracking};

/// The observers of the after-call stage, in the order each stage calls
/// them.
pub fn observers() -> Vec<&'static dyn Observer> {
    vec![
        &bookkeeping::CommandStats,
        &bookkeeping::SlowLog,
        &bookkeeping::LatencyTracking,
        &bookkeeping::AccessTimes,
        &monitor::feed::MonitorFeed,
        &tracking::state::TrackReads,
    ]
}

/// The registration lines of every group.
pub fn all() -> impl Iterator<Item = &'static Def> {
    commands::strings::COMMANDS
        .iter()
        .chain(commands::bitmaps::COMMANDS)
        .chain(commands::keyspace::COMMANDS)
        .chain(commands::client::COMMANDS)
        .chain(commands::server_cmds::COMMANDS)
        .chain(commands::module::COMMANDS)
        .chain(commands::latency::COMMANDS)
        .chain(commands::debug::COMMANDS)
        .chain(commands::hashes::COMMANDS)
        .chain(commands::lists::COMMANDS)
        .chain(commands::sets::COMMANDS)
        .chain(commands::zsets::COMMANDS)
        .chain(commands::hyperloglog::COMMANDS)
        .chain(commands::geo::COMMANDS)
        .chain(commands::sort::COMMANDS)
        .chain(commands::streams::COMMANDS)
        .chain(blocking::commands::COMMANDS)
        .chain(pubsub::commands::COMMANDS)
        .chain(tracking::commands::COMMANDS)
        .chain(multi::commands::COMMANDS)
        .chain(monitor::commands::COMMANDS)
        .chain(scripting::commands::COMMANDS)
        .chain(scripting::function_commands::COMMANDS)
        .chain(crate::replication::commands::COMMANDS)
        .chain(crate::acl::commands::COMMANDS)
}
