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

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::all;
    use crate::command_table::Flags;
    use crate::commands::{Access, Registry, Traits};

    fn args(items: &[&str]) -> Vec<Bytes> {
        items
            .iter()
            .map(|a| Bytes::copy_from_slice(a.as_bytes()))
            .collect()
    }

    /// The facts each registration declares, for the commands Redis's
    /// processCommand, lookupKey and multi.c single out.
    #[test]
    fn registrations_declare_what_redis_singles_out() {
        let registry = Registry::build(all()).expect("registry");
        let get = |line: &[&str]| match registry.lookup(&args(line)) {
            Ok(cmd) => cmd,
            Err(_) => panic!("{line:?} is not served"),
        };
        for line in [
            &["type", "k"][..],
            &["ttl", "k"],
            &["exists", "k"],
            &["object", "freq", "k"],
        ] {
            assert_eq!(get(line).access, Access::NoTouch, "{line:?}");
        }
        for line in [&["get", "k"][..], &["touch", "k"], &["dump", "k"]] {
            assert_eq!(get(line).access, Access::Touch, "{line:?}");
        }
        assert_eq!(get(&["unlink", "k"]).access, Access::Forget);
        let unqueued = ["exec", "discard", "multi", "watch", "quit", "reset"];
        let subscribed = ["subscribe", "sunsubscribe", "ping", "quit", "reset"];
        for name in [
            "exec",
            "discard",
            "multi",
            "quit",
            "reset",
            "get",
            "subscribe",
            "ping",
        ] {
            let cmd = get(&[name, "k"][..if name == "get" || name == "subscribe" {
                2
            } else {
                1
            }]);
            assert_eq!(cmd.is(Traits::UNQUEUED), unqueued.contains(&name), "{name}");
            assert_eq!(
                cmd.is(Traits::SUBSCRIBED_OK),
                subscribed.contains(&name),
                "{name}"
            );
        }
        assert!(get(&["watch", "k"]).is(Traits::UNQUEUED));
        assert!(get(&["client", "id"]).is(Traits::KEEPS_CACHING));
        assert!(get(&["client", "tracking", "on"]).is(Traits::KEEPS_CACHING));
        assert!(!get(&["get", "k"]).is(Traits::KEEPS_CACHING));
        assert!(get(&["select", "1"]).is(Traits::SWITCHES_DB));
        assert!(get(&["client", "reply", "on"]).is(Traits::SWITCHES_REPLY_MODE));
        assert!(get(&["auth", "pw"]).redact.is_some());
        assert!(get(&["publish", "c", "m"]).has(Flags::MAY_REPLICATE));
        assert!(!get(&["get", "k"]).has(Flags::MAY_REPLICATE));
        for line in [
            &["eval", "return 1", "0"][..],
            &["evalsha_ro", "x", "0"],
            &["fcall", "f", "0"],
            &["script", "load", "return 1"],
            &["function", "load", "code"],
            &["function", "restore", "payload"],
        ] {
            assert!(get(line).is(Traits::SCRIPT_THREAD), "{line:?}");
        }
        for line in [
            &["debug", "help"][..],
            &["module", "load", "x"],
            &["module", "unload", "x"],
        ] {
            assert!(get(line).guard.is_some(), "{line:?} is protected");
        }
        assert!(get(&["module", "list"]).guard.is_none());
        for line in [
            &["script", "exists", "x"][..],
            &["function", "stats"],
            &["get", "k"],
        ] {
            assert!(!get(line).is(Traits::SCRIPT_THREAD), "{line:?}");
        }
    }

    /// rename-command hides a command from clients, not from the server's
    /// own requests (an RDB import's RESTORE), as Redis's orig_commands.
    #[test]
    fn a_renamed_command_keeps_its_own_name_for_the_server() {
        let mut registry = Registry::build(all()).expect("registry");
        registry.rename("restore", "").expect("rename");
        let line = args(&["RESTORE", "k", "0", "payload"]);
        assert!(registry.lookup(&line).is_err());
        let original = registry.lookup_original(&line).map(|cmd| cmd.name());
        assert_eq!(original.ok(), Some("restore"));
    }
}
