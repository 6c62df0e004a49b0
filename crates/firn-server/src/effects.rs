//! Side effects of commands outside the data: a PUBLISH, a MONITOR line,
//! a command's INFO commandstats. Each must happen once per command that
//! takes effect, never once per attempt.
//!
//! A command alone runs its handler once unless it reads cold data, and
//! then its pool run may be discarded: a WATCH records what it saw here
//! too, so that only the run that commits registers it. A unit of several
//! commands may run again: EXEC's list after a cold read (exec.rs), a
//! script abandoned for a lock or a cold read (scripting/run.rs), and
//! either may end without taking effect (a WATCH that fails). So a
//! handler running inside a unit (`Ctx::in_unit`) records its side
//! effects on `Ctx::effects` instead of performing them, and whoever
//! commits the unit applies them with [`apply`] once the commit is
//! queued; a run that is dropped drops them.

use bytes::Bytes;
use std::sync::atomic::Ordering;

use crate::server::Server;

pub enum SideEffect {
    /// PUBLISH (`sharded`: SPUBLISH) of `message` to `channel`.
    Publish {
        channel: Bytes,
        message: Bytes,
        sharded: bool,
    },
    /// A command a script ran, shown to MONITOR clients as `[db lua]`.
    Monitor { db: u8, args: Vec<Bytes> },
    /// WATCH of `key` with what it saw of it: registered when the run that
    /// saw it commits, under the key's lock.
    Watch {
        watcher: std::sync::Arc<firn_storage::Watcher>,
        db: u8,
        key: Bytes,
        state: firn_storage::WatchedState,
    },
    /// Key lookups of read-only commands (INFO keyspace_hits/misses).
    KeyLookups { hits: u64, misses: u64 },
    /// A command ACL refused inside the unit (ACL LOG).
    AclLog(crate::acl::state::LogEntry),
    /// What a command a script ran did to its keys' access times (OBJECT
    /// IDLETIME, OBJECT FREQ), as the same command alone does.
    Access(crate::server::AccessChange),
    /// A command a script ran, counted in INFO commandstats.
    Call {
        name: &'static str,
        usec: u64,
        failed: bool,
    },
}

/// Applies a committed unit's side effects, in the order they were made.
pub fn apply(server: &Server, effects: Vec<SideEffect>) {
    for effect in effects {
        match effect {
            SideEffect::Publish {
                channel,
                message,
                sharded: false,
            } => {
                crate::pubsub::deliver::publish(server, &channel, &message);
            }
            SideEffect::Publish {
                channel,
                message,
                sharded: true,
            } => {
                crate::pubsub::deliver::spublish(server, &channel, &message);
            }
            SideEffect::Monitor { db, args } => {
                crate::monitor::line::feed_monitors_from(server, "lua", db, &args);
            }
            SideEffect::Watch {
                watcher,
                db,
                key,
                state,
            } => server.engine.watch_key(&watcher, db, &key, state),
            SideEffect::KeyLookups { hits, misses } => {
                let stats = &server.stats;
                stats.keyspace_hits.fetch_add(hits, Ordering::Relaxed);
                stats.keyspace_misses.fetch_add(misses, Ordering::Relaxed);
            }
            SideEffect::Call { name, usec, failed } => {
                server.stats.commands.record_call(name, usec, failed);
            }
            SideEffect::AclLog(entry) => server.acl_log(entry),
            SideEffect::Access(change) => server
                .access_times
                .apply(&change, firn_storage::now_ms() / 1000),
        }
    }
}
