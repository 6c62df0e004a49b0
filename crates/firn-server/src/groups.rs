//! Every command group's registration table, in one place: the registry
//! (`commands::Registry`) is built from this list at start-up. A group is
//! a file of handlers with its `COMMANDS` table; each command's facts are
//! declared there and in the generated command table.

use crate::commands::{self, Def};
use crate::{blocking, monitor, multi, pubsub, scripting, tracking};

/// The registration lines of every group.
pub fn all() -> impl Iterator<Item = &'static Def> {
    commands::strings::COMMANDS
        .iter()
        .chain(commands::bitmaps::COMMANDS)
        .chain(commands::keyspace::COMMANDS)
        .chain(commands::client::COMMANDS)
        .chain(commands::server_cmds::COMMANDS)
        .chain(commands::hashes::COMMANDS)
        .chain(commands::lists::COMMANDS)
        .chain(commands::sets::COMMANDS)
        .chain(commands::zsets::COMMANDS)
        .chain(commands::hyperloglog::COMMANDS)
        .chain(commands::geo::COMMANDS)
        .chain(commands::sort::COMMANDS)
        .chain(blocking::commands::COMMANDS)
        .chain(pubsub::commands::COMMANDS)
        .chain(tracking::commands::COMMANDS)
        .chain(multi::commands::COMMANDS)
        .chain(monitor::commands::COMMANDS)
        .chain(scripting::commands::COMMANDS)
        .chain(scripting::function_commands::COMMANDS)
}
