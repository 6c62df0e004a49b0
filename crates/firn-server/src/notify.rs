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

/// Redis's class letters, in the order `CONFIG GET` prints them.
const CLASS_LETTERS: [(char, u32); 11] = [
    ('g', class::GENERIC),
    ('$', class::STRING),
    ('l', class::LIST),
    ('s', class::SET),
    ('h', class::HASH),
    ('z', class::ZSET),
    ('x', class::EXPIRED),
    ('e', class::EVICTED),
    ('t', class::STREAM),
    ('d', class::MODULE),
    ('n', class::NEW),
];

/// Parses a `notify-keyspace-events` value (Redis's
/// `keyspaceEventsStringToFlags`).
pub fn parse_flags(text: &str) -> Result<u32, String> {
    let mut flags = 0;
    for c in text.chars() {
        flags |= match c {
            'A' => class::ALL,
            'K' => class::KEYSPACE,
            'E' => class::KEYEVENT,
            'm' => class::KEY_MISS,
            _ => CLASS_LETTERS
                .iter()
                .find(|(letter, _)| *letter == c)
                .map(|(_, bit)| *bit)
                .ok_or_else(|| {
                    "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".to_string()
                })?,
        };
    }
    Ok(flags)
}

/// Prints a mask as Redis's `CONFIG GET` does (`keyspaceEventsFlagsToString`):
/// `A` stands for all of its classes and hides `n`.
pub fn render_flags(flags: u32) -> String {
    let mut out = String::new();
    if flags & class::ALL == class::ALL {
        out.push('A');
    } else {
        for (letter, bit) in CLASS_LETTERS {
            if flags & bit != 0 {
                out.push(letter);
            }
        }
    }
    for (letter, bit) in [
        ('K', class::KEYSPACE),
        ('E', class::KEYEVENT),
        ('m', class::KEY_MISS),
    ] {
        if flags & bit != 0 {
            out.push(letter);
        }
    }
    out
}

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
            crate::pubsub::state::publish(server, &channel, event.name.as_bytes());
        }
        if flags & class::KEYEVENT != 0 {
            channel.clear();
            channel.extend_from_slice(b"__keyevent@");
            channel.extend_from_slice(event.db.to_string().as_bytes());
            channel.extend_from_slice(b"__:");
            channel.extend_from_slice(event.name.as_bytes());
            crate::pubsub::state::publish(server, &channel, &event.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_print_as_redis_prints_them() {
        // Pairs checked against redis-server 7.0.15 (CONFIG SET then GET).
        for (given, shown) in [
            ("", ""),
            ("A", "A"),
            ("AKE", "AKE"),
            ("Ag", "A"),
            ("KEA", "AKE"),
            ("n", "n"),
            ("An", "A"),
            ("AKEn", "AKE"),
            ("Kg$lshzxetdnm", "AKm"),
            ("Ag$", "A"),
            ("KEm", "KEm"),
            ("x", "x"),
            ("gg", "g"),
            ("Elg", "glE"),
            ("nzK", "znK"),
        ] {
            assert_eq!(render_flags(parse_flags(given).unwrap()), shown, "{given}");
        }
        assert!(parse_flags("Q").is_err());
        assert!(parse_flags("AKE ").is_err());
    }

    #[test]
    fn a_covers_every_class_but_key_miss_and_new() {
        let all = parse_flags("A").unwrap();
        assert_eq!(all & class::NEW, 0);
        assert_eq!(all & class::KEY_MISS, 0);
        assert_eq!(all, parse_flags("g$lshzxetd").unwrap());
    }
}
