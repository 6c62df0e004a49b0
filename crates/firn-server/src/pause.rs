//! CLIENT PAUSE: the pause in force, and the clients it holds. A held
//! client counts in INFO `blocked_clients`, as Redis blocks it
//! (BLOCKED_POSTPONE) until the pause ends.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

#[derive(Clone, Copy, Debug, Default)]
struct State {
    until_ms: u64,
    /// ALL (every command) rather than WRITE.
    all: bool,
}

#[derive(Default)]
pub struct ClientPause {
    state: Mutex<State>,
    changed: Notify,
    held: AtomicUsize,
}

/// Counts a held client while it waits, however the wait ends.
struct Held<'a>(&'a AtomicUsize);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl ClientPause {
    /// Pauses until `until_ms` (never shortening a pause in force), every
    /// command if `all`, else writes. `now_ms` tells a pause already over,
    /// whose mode no longer applies.
    /// Returns when the pause now ends.
    pub fn pause(&self, until_ms: u64, all: bool, now_ms: u64) -> u64 {
        let ends = {
            let mut state = self.state.lock();
            if state.until_ms <= now_ms {
                *state = State::default();
            }
            state.until_ms = state.until_ms.max(until_ms);
            state.all = state.all || all;
            state.until_ms
        };
        self.changed.notify_waiters();
        ends
    }

    /// CLIENT UNPAUSE: the held clients go on.
    pub fn unpause(&self) {
        *self.state.lock() = State::default();
        self.changed.notify_waiters();
    }

    /// Clients held now (INFO `blocked_clients`).
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// Whether a command is held now: every command under ALL, a write
    /// (`write()`, asked only then) under WRITE.
    fn holds(&self, write: &mut impl FnMut() -> bool) -> Option<Duration> {
        let state = *self.state.lock();
        let now = firn_storage::now_ms();
        if state.until_ms <= now || !(state.all || write()) {
            return None;
        }
        Some(Duration::from_millis(state.until_ms - now))
    }

    /// Holds a client's command until the pause ends, counted as a
    /// blocked client while it waits.
    pub async fn hold(&self, mut write: impl FnMut() -> bool) {
        if self.holds(&mut write).is_none() {
            return;
        }
        self.held.fetch_add(1, Ordering::Relaxed);
        let _held = Held(&self.held);
        self.wait(write).await;
    }

    /// Waits until the pause no longer holds a command (`write()`: whether
    /// it is a write), without counting it: a blocked command's retry,
    /// already counted as blocked.
    pub async fn wait(&self, mut write: impl FnMut() -> bool) {
        while let Some(left) = self.holds(&mut write) {
            let changed = self.changed.notified();
            tokio::select! {
                _ = tokio::time::sleep(left) => {}
                _ = changed => {}
            }
        }
    }
}
