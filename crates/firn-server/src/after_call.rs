//! The stages around a command that runs, and the subsystems that watch
//! them. A subsystem that cares about commands (statistics, the slow log,
//! access times, MONITOR, client-side caching; replication later)
//! implements [`Observer`] and is registered once at startup
//! (`startup.rs`); the request pipeline, each step of EXEC and a served
//! blocked command announce the stages here and never call a subsystem by
//! name. What an observer does with a command is read from the command's
//! own declarations (its flags, `Def::redacts`, `Def::no_touch`...).

use bytes::Bytes;
use firn_resp::Reply;
use std::sync::OnceLock;

use crate::commands::Command;
use crate::server::{ClientInfo, Server};

/// A command that runs, as the observers see it.
pub struct Call<'a> {
    pub server: &'a Server,
    pub client: &'a ClientInfo,
    pub cmd: &'a Command,
    pub args: &'a [Bytes],
    /// The database it runs in (after it ran: the one it left selected).
    pub db: u8,
    /// A blocked command that CLIENT UNBLOCK ended (TIMEOUT or ERROR):
    /// Redis counts it failed whatever it replies (updateStatsOnUnblock).
    pub unblocked: bool,
}

impl<'a> Call<'a> {
    pub fn new(
        server: &'a Server,
        client: &'a ClientInfo,
        cmd: &'a Command,
        args: &'a [Bytes],
        db: u8,
    ) -> Call<'a> {
        Call {
            server,
            client,
            cmd,
            args,
            db,
            unblocked: false,
        }
    }
}

/// A subsystem that watches commands run. Each stage is called for every
/// command that runs (not for one refused or queued by MULTI).
pub trait Observer: Sync {
    /// Before the handler runs: what must be in place before the command
    /// can read (a tracking client remembers the keys it is about to read,
    /// so that no write in between goes unseen).
    fn before(&self, _call: &Call) {}

    /// The run of the client's command (or of its unit: EXEC) takes
    /// effect. Called while the run's key locks are still held and before
    /// its batch is submitted, so that nothing a later command does can
    /// come in between: a tracking client's reads enter the table here.
    fn took_effect(&self, _server: &Server, _client: &ClientInfo) {}

    /// The handler has run (a blocked command: it blocked); what follows
    /// the command's order among commands (MONITOR).
    fn ran(&self, _call: &Call) {}

    /// The command is complete with `reply` (None: no reply of its own)
    /// after `micros` (a blocked command: when it was served).
    fn finished(&self, _call: &Call, _micros: u64, _reply: Option<&Reply>) {}
}

static OBSERVERS: OnceLock<Vec<&'static dyn Observer>> = OnceLock::new();

/// Registers the observers, in the order they are called (once, at
/// startup; a second call is ignored).
pub fn install(observers: Vec<&'static dyn Observer>) {
    let _ = OBSERVERS.set(observers);
}

fn observers() -> &'static [&'static dyn Observer] {
    OBSERVERS.get().map(Vec::as_slice).unwrap_or(&[])
}

/// Announces that `call`'s handler is about to run.
pub fn before(call: &Call) {
    for observer in observers() {
        observer.before(call);
    }
}

/// Announces that the run of `client`'s command takes effect (under its
/// locks, before its batch is submitted).
pub fn took_effect(server: &Server, client: &ClientInfo) {
    for observer in observers() {
        observer.took_effect(server, client);
    }
}

/// Announces that `call`'s handler has run.
pub fn ran(call: &Call) {
    for observer in observers() {
        observer.ran(call);
    }
}

/// Announces that `call` is complete.
pub fn finished(call: &Call, micros: u64, reply: Option<&Reply>) {
    for observer in observers() {
        observer.finished(call, micros, reply);
    }
}
