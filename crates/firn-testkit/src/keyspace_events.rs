//! A keyspace-notification subscriber for the notification suites: one
//! connection in subscribed mode on `__key*@*__:*` and on a marker channel,
//! reading `pmessage` pushes as `(channel, message)` pairs.

use crate::conn::{Event, ReadError};
use crate::{Conn, Server, R};
use std::time::{Duration, Instant};

/// The pattern every keyspace and keyevent channel matches.
pub const PATTERN: &str = "__key*@*__:*";
/// The channel a test publishes on to mark the end of a step.
pub const MARKER: &str = "marker";

pub type Message = (String, String);

pub struct Subscriber {
    conn: Conn,
}

impl Subscriber {
    /// Subscribes to every keyspace and keyevent channel and the marker.
    pub fn new(server: &Server) -> Subscriber {
        let mut conn = server.conn();
        conn.send(&[b"PSUBSCRIBE", PATTERN.as_bytes(), MARKER.as_bytes()]);
        for _ in 0..2 {
            let (_, reply) = conn.read_reply();
            assert!(
                reply.items().first().and_then(R::as_str).as_deref() == Some("psubscribe"),
                "PSUBSCRIBE confirmation expected, got {}",
                reply.render()
            );
        }
        Subscriber { conn }
    }

    /// The next message before `deadline`: `(channel, message)`.
    pub fn next(&mut self, deadline: Instant) -> Option<Message> {
        while Instant::now() < deadline {
            match self.conn.wait_event(Duration::from_millis(50)) {
                Event::Data(_) => {}
                Event::Silent => continue,
                other => panic!("subscriber connection: {other:?}"),
            }
            let reply = match self.conn.try_read_reply() {
                Ok((_, reply)) => reply,
                Err(ReadError::Timeout) => continue,
                Err(e) => panic!("subscriber connection: {e:?}"),
            };
            let items = reply.items();
            let text = |i: usize| items.get(i).and_then(R::as_str).unwrap_or_default();
            assert_eq!(text(0), "pmessage", "unexpected push {}", reply.render());
            return Some((text(2), text(3)));
        }
        None
    }

    /// Keyspace messages up to the marker message `id` (published after
    /// the step's last reply).
    pub fn step(&mut self, id: &str) -> Vec<Message> {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut events = Vec::new();
        loop {
            match self.next(deadline) {
                Some((channel, message)) if channel == MARKER => {
                    assert_eq!(message, id, "marker out of order");
                    return events;
                }
                Some(event) => events.push(event),
                None => panic!("marker {id} never came; events so far: {events:?}"),
            }
        }
    }

    /// Every message that arrives before `deadline`.
    pub fn drain_until(&mut self, deadline: Instant) -> Vec<Message> {
        let mut out = Vec::new();
        while let Some(m) = self.next(deadline) {
            out.push(m);
        }
        out
    }

    /// Waits up to `wait` for the first message satisfying `pred`,
    /// returning it and everything before it.
    pub fn wait_for(
        &mut self,
        wait: Duration,
        pred: impl Fn(&Message) -> bool,
    ) -> (Option<Message>, Vec<Message>) {
        let deadline = Instant::now() + wait;
        let mut before = Vec::new();
        while let Some(m) = self.next(deadline) {
            if pred(&m) {
                return (Some(m), before);
            }
            before.push(m);
        }
        (None, before)
    }
}
