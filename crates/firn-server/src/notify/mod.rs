//! Keyspace notifications (`notify-keyspace-events`), as in Redis 7.0.
//!
//! Events are effects of a command, like its writes: a handler records one
//! with [`Ctx::notify`] on its transaction (one atomic load when its class
//! is off), the storage layer records `expired` (lazy and active expiry)
//! and `new` (a key created) itself, and the events travel with the batch
//! to the writer, which hands them to [`publish_events`] once the batch is
//! written, in commit order and before the batch's clients are answered
//! (the batch's `Change` carries them too). So a pool run whose result was
//! discarded, a failed command or a rolled-back write publishes nothing.
//! Each event goes to `__keyspace@<db>__:<key>` (message: the event) and
//! `__keyevent@<db>__:<event>` (message: the key).

use firn_storage::{notify_class as class, Event};
use std::sync::Arc;

use crate::commands::Ctx;
use crate::server::Server;

pub mod flags;

impl Ctx<'_> {
    /// Records keyspace event `name` of `class` for `key` in the session's
    /// database; published after the command's batch commits.
    pub fn notify(&mut self, class: u32, name: &'static str, key: &[u8]) {
        let db = self.session.db;
        self.txn.notify(class, name, db, key);
    }

    /// [`Ctx::notify`] for a key of another database (MOVE, COPY ... DB).
    pub fn notify_in(&mut self, db: u8, class: u32, name: &'static str, key: &[u8]) {
        self.txn.notify(class, name, db, key);
    }
}

/// Installs the publisher and applies the configured mask; called once
/// at start-up.
pub fn start(server: &Arc<Server>) {
    // A weak reference: the engine (inside the server) holds the sink.
    let weak = Arc::downgrade(server);
    server
        .engine
        .set_event_sink(Some(Arc::new(move |events: &[Event]| {
            if let Some(server) = weak.upgrade() {
                publish_events(&server, events);
            }
        })));
    apply(server, server.config().notify_keyspace_events);
}

/// Sets the mask events are recorded under (CONFIG SET).
pub fn apply(server: &Server, flags: u32) {
    server.engine.set_notify_flags(flags);
}

/// Publishes a committed batch's events on their keyspace and keyevent
/// channels, under the classes enabled now. Runs on the writer thread
/// before the batch's clients are answered: CPU work only (`publish`
/// never waits for a subscriber).
fn publish_events(server: &Server, events: &[Event]) {
    let flags = server.engine.notify_flags();
    let mut channel = Vec::with_capacity(64);
    for event in events {
        if flags & class::KEYSPACE != 0 {
            channel.clear();
            channel.extend_from_slice(b"__keyspace@");
            channel.extend_from_slice(event.db.to_string().as_bytes());
            channel.extend_from_slice(b"__:");
            channel.extend_from_slice(&event.key);
            crate::pubsub::deliver::publish(server, &channel, event.name.as_bytes());
        }
        if flags & class::KEYEVENT != 0 {
            channel.clear();
            channel.extend_from_slice(b"__keyevent@");
            channel.extend_from_slice(event.db.to_string().as_bytes());
            channel.extend_from_slice(b"__:");
            channel.extend_from_slice(event.name.as_bytes());
            crate::pubsub::deliver::publish(server, &channel, &event.key);
        }
    }
}
