//! Running one command: DESIGN principle 3 in code.
//!
//! A command that names keys takes its place in their lock queues the
//! moment it starts, before any await (`Engine::request_keys`): so two
//! commands that share a key take effect in the order the server read
//! them, whichever network thread read each (docs/architecture.md, "Arrival
//! order"). Holding the locks, it runs with memory-only reads and queues
//! its batch; nearly every command ends there, on the network thread. If a
//! read needed the disk (`Incomplete`), it runs again on the cold-read pool
//! with blocking reads *still holding its locks*, so that no later command
//! on its keys overtakes it; only its own keys wait for that disk read,
//! never another key's client, and never a network thread. What must be in
//! place before a later command runs happens under the same locks: a
//! blocking command that finds nothing registers its wait
//! (blocking/state.rs), a tracking client's read remembers its keys
//! (tracking/state.rs).
//!
//! A body that takes every lock (a whole-database command, a transaction
//! with a keyless read or a SELECT) must not hold them across a disk read,
//! which would stall every client: it keeps the optimistic rounds. Its
//! first run is under the locks with memory-only reads; if that misses, it
//! runs once on the pool *without* locks and with blocking reads, and back
//! on the network thread it awaits its locks and compares the write stamp
//! of its keys' stripes with the one taken before the pool run: unchanged
//! means nothing it read has changed, so its batch is committed as if it
//! had run under the locks; otherwise it runs again. After
//! [`OPTIMISTIC_ROUNDS`] such pool runs it takes its locks first. Keyless
//! commands (KEYS, SCAN, RANDOMKEY) lock nothing and take their pool result
//! as it is.
//!
//! No lock is ever held while waiting for durability. The unit the rounds
//! run is a [`Body`]: one command, or a transaction's queued commands
//! (EXEC), which run in order over one `Txn` under the union of their
//! keys' locks and commit once (see multi/transaction.rs).

use bytes::Bytes;
use firn_resp::{Protocol, Reply};
use firn_storage::{LockMode, OwnedKeysRequest, ReadMode, Ticket, TxnParts, Watcher};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::blocking::state::Registration;
use crate::coldpool::JobTiming;
use crate::command_table::Flags;
use crate::commands::{Command, Ctx, Deferred, Traits};
use crate::effects::SideEffect;
use crate::server::{ClientInfo, ReplyMode, Server, Session};

/// Lock-free pool runs before a command takes its locks for the next one:
/// each fails only if another client wrote one of its keys meanwhile.
/// (Giving up after 16 instead answered 139 of 300 LRANGEs of a busy list
/// with an error.)
const OPTIMISTIC_ROUNDS: usize = 2;

pub struct Executed {
    pub reply: Reply,
    /// Batches that must be durable before the reply may leave.
    pub tickets: Vec<Ticket>,
    pub deferred: Option<Deferred>,
    /// A blocking command that found nothing: its wait, registered under
    /// its keys' locks (see [`Blocked`]).
    pub registration: Option<Registration>,
}

impl Executed {
    pub fn reply(reply: Reply) -> Self {
        Executed {
            reply,
            tickets: Vec::new(),
            deferred: None,
            registration: None,
        }
    }
}

/// Which run of a blocking command this is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Blocked {
    /// Its first: if it finds nothing to serve, its wait is registered
    /// while its keys' locks are held, so that a command that comes after
    /// it finds it blocked, as in Redis.
    First,
    /// A blocked client's run after a wake-up: its registration stands
    /// (and keeps its place among the key's waiters).
    Again,
}

/// What runs as one unit under one set of locks.
#[derive(Clone, Copy)]
pub enum Body<'a> {
    /// One command, already resolved.
    Command(&'a Command, &'a [Bytes]),
    /// A transaction's queued commands, run in order over one `Txn`. It
    /// does not run at all if `watcher` says a watched key changed, checked
    /// where it commits (under the locks).
    Transaction {
        commands: &'a [Vec<Bytes>],
        watcher: &'a Arc<Watcher>,
    },
}

/// A [`Body`] that can cross to a pool thread.
enum OwnedBody {
    Command(Vec<Bytes>),
    Transaction(Vec<Vec<Bytes>>),
}

impl Body<'_> {
    fn detach(self) -> OwnedBody {
        match self {
            Body::Command(_, args) => OwnedBody::Command(args.to_vec()),
            Body::Transaction { commands, .. } => OwnedBody::Transaction(commands.to_vec()),
        }
    }

    /// Whether it takes every key lock: a command that changes whole
    /// databases, or a transaction with one, with a command that changes
    /// the session's database (its later keys would be elsewhere), or with
    /// a keyspace command that names no key (KEYS, SCAN, RANDOMKEY,
    /// DBSIZE: it reads the whole database, which only every lock keeps
    /// still until the transaction commits, as for scripts).
    fn locks_all(&self) -> bool {
        match self {
            Body::Command(cmd, args) => cmd.locks_all(args),
            Body::Transaction { commands, .. } => {
                commands
                    .iter()
                    .any(|args| match crate::commands::registry().lookup(args) {
                        Ok(cmd) => {
                            cmd.locks_all(args)
                                || cmd.is(Traits::SWITCHES_DB)
                                || ((cmd.has(Flags::READONLY) || cmd.has(Flags::WRITE))
                                    && cmd.lock_keys(args, 0).is_empty())
                        }
                        Err(_) => false,
                    })
            }
        }
    }

    /// The `(logical db, key)` pairs it locks (the union for a transaction).
    fn lock_keys(&self, db: u8) -> Vec<(u8, Bytes)> {
        match self {
            Body::Command(cmd, args) => cmd.lock_keys(args, db),
            Body::Transaction { commands, watcher } => {
                // The watched keys too: the check at EXEC is then ordered
                // with every write of them, as Redis runs them in turn.
                let mut keys = watcher.watched_keys();
                for args in commands.iter() {
                    if let Ok(cmd) = crate::commands::registry().lookup(args) {
                        keys.extend(cmd.lock_keys(args, db));
                    }
                }
                keys
            }
        }
    }

    fn watcher(&self) -> Option<&Arc<Watcher>> {
        match self {
            Body::Command(..) => None,
            Body::Transaction { watcher, .. } => Some(watcher),
        }
    }

    /// Its name as COMMAND lists it (`exec` for a transaction).
    fn name(&self) -> &'static str {
        match self {
            Body::Command(cmd, _) => cmd.name(),
            Body::Transaction { .. } => "exec",
        }
    }

    /// Whether it is a unit of several commands (see `Ctx::in_unit`).
    fn is_unit(&self) -> bool {
        matches!(self, Body::Transaction { .. })
    }
}

/// One command run inside a transaction: its reply and what the session
/// looked like right after it (the reply is encoded and filtered by the
/// client's protocol and CLIENT REPLY mode at that point, as in Redis).
pub struct Step {
    pub name: &'static str,
    /// Its command sets CLIENT REPLY's mode (`Def::switches_reply_mode`).
    pub switches_reply_mode: bool,
    pub reply: Reply,
    pub deferred: Option<Deferred>,
    pub protocol: Protocol,
    pub reply_mode: ReplyMode,
    /// The session's database after it ran (MONITOR shows that one).
    pub db: u8,
}

/// What a body produced.
pub enum Outcome {
    Command {
        result: Result<Reply, Reply>,
        deferred: Option<Deferred>,
    },
    Transaction(Vec<Step>),
    /// A watched key changed: the transaction did not run.
    WatchFailed,
    /// The body could not run or commit at all (an error reply).
    Failed(Reply),
}

pub struct Finished {
    pub outcome: Outcome,
    /// Batches that must be durable before the reply may leave.
    pub tickets: Vec<Ticket>,
    /// The wait a blocking command registered (see [`Blocked`]).
    pub registration: Option<Registration>,
}

impl Finished {
    fn new(outcome: Outcome, tickets: Vec<Ticket>) -> Self {
        Finished {
            outcome,
            tickets,
            registration: None,
        }
    }

    fn failed(reply: Reply) -> Self {
        Finished::new(Outcome::Failed(reply), Vec::new())
    }

    /// An error reply of a command that read data (WRONGTYPE, not an
    /// integer...): it tells the client about what it read like any other
    /// reply, so it waits for the pending writes and swaps it read.
    fn failed_after_reads(reply: Reply, read: &[Ticket]) -> Self {
        Finished::new(Outcome::Failed(reply), read.to_vec())
    }
}

// Returned once per run and taken apart at once, never stored: boxing the
// finished run would cost an allocation per command.
#[allow(clippy::large_enum_variant)]
enum Attempt {
    Done(Finished),
    Incomplete,
    /// A run under shared locks would write: run again holding them
    /// exclusively.
    NeedsExclusive,
}

/// What a pool run produced, to be committed under the locks.
struct PoolRun {
    outcome: Outcome,
    parts: TxnParts,
    session: Session,
    effects: Vec<SideEffect>,
}

/// Counts key lookups of read-only commands (INFO keyspace_hits/misses)
/// once, for the run that takes effect. A command alone that succeeded in
/// memory (round 1) always does, so it counts at once, with no allocation
/// on the hot path; a pool run or a unit's command may be discarded, so
/// it records them as a side effect of its commit (effects.rs).
pub(crate) fn count_lookups(ctx: &mut Ctx<'_>, cmd: &Command, (hits, misses): (u64, u64)) {
    if !cmd.has(Flags::READONLY) || hits + misses == 0 {
        return;
    }
    if ctx.in_unit || ctx.provisional || ctx.txn.mode() == ReadMode::Blocking {
        ctx.effects.push(SideEffect::KeyLookups { hits, misses });
    } else {
        let stats = &ctx.server.stats;
        stats.keyspace_hits.fetch_add(hits, Ordering::Relaxed);
        stats.keyspace_misses.fetch_add(misses, Ordering::Relaxed);
    }
}

/// The replay form of a write command that did not set its own: the
/// command as received (deterministic commands replay verbatim).
fn default_replay(ctx: &mut Ctx<'_>, cmd: &Command, args: &[Bytes]) {
    let changed = ctx.txn.has_writes() || ctx.txn.has_swaps();
    if cmd.has(Flags::WRITE) && changed && !ctx.txn.has_replay() {
        ctx.txn.set_replay(vec![args.to_vec()]);
    }
}

/// The `Incomplete` marker: a read needed the disk.
pub struct NeedsDisk;

/// The replay commands of a transaction as its commands add them, with a
/// SELECT wherever a command ran in another database than the one before.
pub struct ReplayLog {
    commands: Vec<Vec<Bytes>>,
    db: u8,
}

impl ReplayLog {
    pub fn new(db: u8) -> Self {
        ReplayLog {
            commands: Vec::new(),
            db,
        }
    }

    /// Adds one command's replay commands, run in database `db`.
    pub fn add(&mut self, db: u8, mut commands: Vec<Vec<Bytes>>) {
        if commands.is_empty() {
            return;
        }
        if db != self.db {
            self.commands.push(vec![
                Bytes::from_static(b"SELECT"),
                Bytes::from(db.to_string()),
            ]);
            self.db = db;
        }
        self.commands.append(&mut commands);
    }

    /// The batch's replay form: as Redis 7.0 propagates, several commands
    /// are wrapped in MULTI/EXEC and a single one goes alone.
    pub fn finish(mut self) -> Vec<Vec<Bytes>> {
        if self.commands.len() > 1 {
            self.commands.insert(0, vec![Bytes::from_static(b"MULTI")]);
            self.commands.push(vec![Bytes::from_static(b"EXEC")]);
        }
        self.commands
    }
}

/// Runs one command of a list over `ctx.txn` (EXEC, and scripts): a
/// failed command leaves no writes, its replay form goes to `log`, its
/// deferred work is handed back. `Err(NeedsDisk)` means the whole list
/// must run again where reads may block.
pub fn run_step(
    ctx: &mut Ctx<'_>,
    cmd: &Command,
    args: &[Bytes],
    log: &mut ReplayLog,
) -> Result<(Reply, Option<Deferred>), NeedsDisk> {
    let db = ctx.session.db;
    let savepoint = cmd.has(Flags::WRITE).then(|| ctx.txn.savepoint());
    let earlier = ctx.txn.take_replay();
    let generation = ctx.txn.write_generation();
    let lookups = ctx.txn.key_lookups();
    ctx.txn.set_read_lookups(cmd.has(Flags::READONLY));
    ctx.txn.set_signal_mode(cmd.signal_mode());
    let result = (cmd.handler)(ctx, args);
    let deferred = ctx.deferred.take();
    match result {
        Err(e) if e.is_incomplete() => Err(NeedsDisk),
        Err(e) => {
            if let Some(savepoint) = savepoint {
                ctx.txn.rollback(savepoint);
            }
            ctx.txn.set_replay(earlier);
            Ok((e.into_reply(), None))
        }
        Ok(reply) => {
            let after = ctx.txn.key_lookups();
            count_lookups(ctx, cmd, (after.0 - lookups.0, after.1 - lookups.1));
            let mut own = ctx.txn.take_replay();
            if own.is_empty() && cmd.has(Flags::WRITE) && ctx.txn.write_generation() != generation {
                own.push(args.to_vec());
            }
            ctx.txn.set_replay(earlier);
            log.add(db, own);
            Ok((reply, deferred))
        }
    }
}

/// Runs a body over `ctx` (no locking, no commit).
fn run_body(ctx: &mut Ctx<'_>, body: Body<'_>) -> Result<Outcome, NeedsDisk> {
    match body {
        Body::Command(cmd, args) => {
            // A read-only command's missing keys are `keymiss` events.
            ctx.txn.set_read_lookups(cmd.has(Flags::READONLY));
            ctx.txn.set_signal_mode(cmd.signal_mode());
            match (cmd.handler)(ctx, args) {
                Err(e) if e.is_incomplete() => Err(NeedsDisk),
                Err(e) => Ok(Outcome::Command {
                    result: Err(e.into_reply()),
                    deferred: ctx.deferred.take(),
                }),
                Ok(reply) => {
                    let lookups = ctx.txn.key_lookups();
                    count_lookups(ctx, cmd, lookups);
                    default_replay(ctx, cmd, args);
                    Ok(Outcome::Command {
                        result: Ok(reply),
                        deferred: ctx.deferred.take(),
                    })
                }
            }
        }
        Body::Transaction { commands, .. } => {
            let mut log = ReplayLog::new(ctx.session.db);
            let mut steps = Vec::with_capacity(commands.len());
            for args in commands {
                let (name, switches_reply_mode, (reply, deferred)) =
                    match crate::commands::registry().lookup(args) {
                        // Checked when queued; the registry does not change.
                        Err(e) => ("", false, (e.into_reply(), None)),
                        // Permissions are checked again at EXEC: the
                        // user may have lost some since the command was
                        // queued (logged once, when the unit commits).
                        Ok(cmd) => {
                            match crate::acl::check::check_user(&ctx.session.user, cmd, args) {
                                Err(denied) => {
                                    let entry = crate::acl::check::entry(
                                        ctx.client,
                                        &ctx.session.user,
                                        cmd,
                                        args,
                                        denied,
                                        crate::acl::state::Context::Multi,
                                    );
                                    ctx.effects.push(SideEffect::AclLog(entry));
                                    let error = Reply::Error(denied.exec_error().into());
                                    (cmd.name(), false, (error, None))
                                }
                                Ok(()) => (
                                    cmd.name(),
                                    cmd.is(Traits::SWITCHES_REPLY_MODE),
                                    run_step(ctx, cmd, args, &mut log)?,
                                ),
                            }
                        }
                    };
                steps.push(Step {
                    name,
                    switches_reply_mode,
                    reply,
                    deferred,
                    protocol: ctx.session.protocol,
                    reply_mode: ctx.session.reply_mode,
                    db: ctx.session.db,
                });
            }
            ctx.txn.set_replay(log.finish());
            Ok(Outcome::Transaction(steps))
        }
    }
}

/// Awaits the locks a body needs: all of them, its keys', or none.
async fn acquire<'a>(
    server: &'a Server,
    all: bool,
    keys: &[(u8, &[u8])],
) -> Option<firn_storage::KeyGuard<'a>> {
    if all {
        Some(server.engine.lock_all().await)
    } else if keys.is_empty() {
        None
    } else {
        Some(server.engine.lock_keys(keys).await)
    }
}

/// Whether a body's first run may hold its keys' locks shared: a command
/// alone that only reads (and does not block), so that the clients of one
/// hot key read it at once instead of in turn. It is run again under
/// exclusive locks if it turns out to write (a lazy expiry, a keymiss
/// event): it commits nothing under shared locks.
fn reads_only(body: Body<'_>, all: bool, keys: &[(u8, &[u8])]) -> bool {
    match body {
        Body::Command(cmd, _) => {
            !all && !keys.is_empty()
                && cmd.has(Flags::READONLY)
                && !cmd.has(Flags::WRITE)
                && !cmd.has(Flags::BLOCKING)
                && !cmd.is(Traits::SCRIPT_THREAD)
        }
        Body::Transaction { .. } => false,
    }
}

/// Whether a keyless body may change what other clients see: a write, a
/// blocking or pub/sub command, one that may replicate (PUBLISH, a script
/// with no declared keys), an admin command (CLIENT UNBLOCK, FLUSHALL), or
/// a transaction. PING, ECHO or INFO need not wait for anyone.
fn may_write(body: Body<'_>) -> bool {
    match body {
        Body::Command(cmd, _) => [
            Flags::WRITE,
            Flags::BLOCKING,
            Flags::PUBSUB,
            Flags::MAY_REPLICATE,
            Flags::ADMIN,
        ]
        .into_iter()
        .any(|flag| cmd.has(flag)),
        Body::Transaction { .. } => true,
    }
}

/// A command waits until every connection read before it has taken its
/// place (arrival.rs): it never overtakes an earlier blocking read's
/// registration, tracking read or write.
async fn wait_for_earlier_arrivals(server: &Server, client: &ClientInfo, ordered: bool) {
    if ordered {
        let stamp = client.arrival.lock().stamp;
        server.arrivals.wait_before(stamp).await;
    }
}

/// The body has its place in line: the stamp of the read it came in ends
/// (arrival.rs). A script's ends where its run takes its place
/// (scripting/run.rs).
fn end_arrival_unless_scripted(client: &ClientInfo, body: Body<'_>) -> bool {
    !matches!(body, Body::Command(cmd, _) if cmd.is(Traits::SCRIPT_THREAD)) && client.end_arrival()
}

/// The stripes whose write stamp guards a pool run.
fn guarded_stripes(server: &Server, all: bool, keys: &[(u8, &[u8])]) -> Vec<usize> {
    if all {
        (0..firn_storage::locks::STRIPES).collect()
    } else {
        server.engine.stripes_of(keys)
    }
}

/// Whether a transaction must not run: checked under its locks.
fn watch_failed(server: &Server, body: Body<'_>) -> bool {
    body.watcher()
        .is_some_and(|w| server.engine.watch_failed(w, firn_storage::now_ms()))
}

/// Commits a body's writes, then applies its side effects and adds the
/// changes its handlers counted to INFO (once: only a run that commits gets
/// here); an error reply if the batch cannot be queued. Called under the
/// body's locks; what its run must leave in place before any later command
/// (a tracking client's reads remembered) is done first, before the batch
/// is submitted, so that the batch's own writes invalidate its own reads.
fn commit(
    server: &Server,
    client: &ClientInfo,
    txn: firn_storage::Txn<'_>,
    outcome: Outcome,
    effects: Vec<SideEffect>,
) -> Finished {
    crate::after_call::took_effect(server, client);
    let dirty = txn.dirty();
    let finished = match txn.commit() {
        Ok(tickets) => {
            server.stats.dirty.fetch_add(dirty, Ordering::Relaxed);
            crate::effects::apply(server, effects);
            Finished::new(outcome, tickets)
        }
        Err(e) => Finished::failed(crate::errors::CmdError::Storage(e).into_reply()),
    };
    client.pubsub.mailbox.mark_reply();
    finished
}

/// A run that failed with an error reply takes effect too (a tracking
/// client's read remembers its keys whatever the reply, as in Redis); its
/// reply waits for the pending writes it read.
fn failed_run(server: &Server, client: &ClientInfo, outcome: Outcome, read: &[Ticket]) -> Finished {
    crate::after_call::took_effect(server, client);
    client.pubsub.mailbox.mark_reply();
    Finished::new(outcome, read.to_vec())
}

/// One run under held locks (or none, for a keyless body), memory-only
/// reads. `locked`: the caller holds the body's locks, so the run may fill
/// the hot tier.
fn run_held(
    server: &Arc<Server>,
    body: Body<'_>,
    session: &mut Session,
    client: &Arc<ClientInfo>,
    locked: bool,
    shared: bool,
) -> Attempt {
    let engine = &server.engine;
    if watch_failed(server, body) {
        return Attempt::Done(Finished::new(Outcome::WatchFailed, Vec::new()));
    }
    // A unit's commands may change the session (SELECT) before one of
    // them needs the disk: the pool run must start from the session as it
    // was, so the unit runs on a copy kept only if it completes.
    let mut unit_session = body.is_unit().then(|| session.clone());
    let mut ctx = Ctx {
        server,
        // Only a run holding its keys' locks may fill the hot cache.
        txn: if locked {
            engine.txn_locked(ReadMode::MemoryOnly)
        } else {
            engine.txn(ReadMode::MemoryOnly)
        },
        session: match unit_session.as_mut() {
            Some(copy) => copy,
            None => &mut *session,
        },
        client,
        deferred: None,
        in_unit: body.is_unit(),
        effects: Vec::new(),
        provisional: shared,
    };
    ctx.txn.set_db(ctx.session.db);
    ctx.txn.set_client(client.id);
    let outcome = run_body(&mut ctx, body);
    let effects = ctx.effects;
    // Detached from the session's borrow, so the copy can be kept.
    let txn = engine.txn_from_parts(ctx.txn.into_parts());
    if outcome.is_ok() {
        if let Some(copy) = unit_session {
            *session = copy;
        }
    }
    match outcome {
        Err(NeedsDisk) => Attempt::Incomplete,
        // A command that failed alone leaves no writes behind; its reply
        // still waits for what it read.
        Ok(outcome @ Outcome::Command { result: Err(_), .. }) => {
            Attempt::Done(failed_run(server, client, outcome, txn.pending_reads()))
        }
        Ok(_) if shared && !txn.commits_nothing() => Attempt::NeedsExclusive,
        Ok(outcome) => Attempt::Done(commit(server, client, txn, outcome, effects)),
    }
}

/// A run on a pool thread, blocking reads: `locked` when the caller holds
/// the body's locks meanwhile (the run may then fill the hot tier), else
/// lock-free and validated by write stamps afterwards.
fn run_on_pool_thread(
    server: &Arc<Server>,
    body: &OwnedBody,
    watcher: Option<&Arc<Watcher>>,
    mut session: Session,
    client: &Arc<ClientInfo>,
    locked: bool,
) -> Option<PoolRun> {
    let body = match (body, watcher) {
        (OwnedBody::Command(args), _) => {
            Body::Command(crate::commands::registry().lookup(args).ok()?, args)
        }
        (OwnedBody::Transaction(commands), Some(watcher)) => {
            Body::Transaction { commands, watcher }
        }
        (OwnedBody::Transaction(_), None) => return None,
    };
    let mut ctx = Ctx {
        server,
        txn: if locked {
            server.engine.txn_locked(ReadMode::Blocking)
        } else {
            server.engine.txn(ReadMode::Blocking)
        },
        session: &mut session,
        client,
        deferred: None,
        in_unit: body.is_unit(),
        effects: Vec::new(),
        provisional: false,
    };
    ctx.txn.set_db(ctx.session.db);
    ctx.txn.set_client(client.id);
    let outcome = match run_body(&mut ctx, body) {
        Ok(outcome) => outcome,
        // Blocking reads are never incomplete; nothing to keep.
        Err(NeedsDisk) => return None,
    };
    let effects = ctx.effects;
    let parts = ctx.txn.into_parts();
    Some(PoolRun {
        outcome,
        parts,
        session,
        effects,
    })
}

/// Runs `args` (already resolved to `cmd`) for a client: its first run
/// (see [`Blocked::First`]).
pub async fn execute(
    server: &Arc<Server>,
    cmd: &Command,
    args: &[Bytes],
    session: &mut Session,
    client: &Arc<ClientInfo>,
) -> Executed {
    execute_as(server, cmd, args, session, client, Blocked::First, None).await
}

/// Runs a blocked client's command again after a wake-up (its wait stays
/// registered), in `reserved`, the place the waking write took for it
/// when there is one.
pub async fn execute_again(
    server: &Arc<Server>,
    cmd: &Command,
    args: &[Bytes],
    session: &mut Session,
    client: &Arc<ClientInfo>,
    reserved: Option<OwnedKeysRequest>,
) -> Executed {
    execute_as(server, cmd, args, session, client, Blocked::Again, reserved).await
}

async fn execute_as(
    server: &Arc<Server>,
    cmd: &Command,
    args: &[Bytes],
    session: &mut Session,
    client: &Arc<ClientInfo>,
    blocked: Blocked,
    reserved: Option<OwnedKeysRequest>,
) -> Executed {
    // Read-only commands' latency, hot or cold, for the metrics port.
    let started = cmd
        .spec
        .flags
        .contains(crate::command_table::Flags::READONLY)
        .then(std::time::Instant::now);
    let mut went_cold = false;
    let body = Body::Command(cmd, args);
    let finished = execute_rounds(
        server,
        body,
        session,
        client,
        &mut went_cold,
        blocked,
        reserved,
    )
    .await;
    if let Some(started) = started {
        server.read_latency[usize::from(went_cold)].record(started.elapsed().as_micros() as u64);
    }
    let Finished {
        outcome,
        tickets,
        registration,
    } = finished;
    match outcome {
        Outcome::Command {
            result: Ok(reply),
            deferred,
        } => Executed {
            reply,
            tickets,
            deferred,
            registration,
        },
        Outcome::Command {
            result: Err(reply), ..
        }
        | Outcome::Failed(reply) => Executed {
            reply,
            tickets,
            deferred: None,
            registration: None,
        },
        // Not produced by a single command.
        Outcome::Transaction(_) | Outcome::WatchFailed => Executed::reply(Reply::NullArray),
    }
}

/// Offers the slow-cold-read log (coldlog.rs) `command`, with its first
/// key, whose run on the pool took effect.
fn log_cold_read(
    server: &Server,
    client: &ClientInfo,
    command: &str,
    key: Option<&Bytes>,
    timing: JobTiming,
) {
    let (threshold_us, max_len) = {
        let config = server.config();
        (
            config.cold_read_log_slower_than_us,
            config.cold_read_log_max_len,
        )
    };
    let entry = crate::coldlog::ColdLogEntry {
        id: 0,
        unix_secs: firn_storage::now_ms() / 1000,
        wait_us: timing.wait_us,
        queue_wait_us: timing.queue_wait_us,
        queue_len: timing.queue_len,
        command: command.to_string(),
        key: key.cloned().unwrap_or_default(),
        addr: client.addr.clone(),
        name: client.name.lock().clone().unwrap_or_default(),
    };
    server.cold_log.offer(entry, threshold_us, max_len);
}

/// Runs a body in rounds (see the module comment).
pub async fn execute_body(
    server: &Arc<Server>,
    body: Body<'_>,
    session: &mut Session,
    client: &Arc<ClientInfo>,
) -> Finished {
    execute_rounds(
        server,
        body,
        session,
        client,
        &mut false,
        Blocked::First,
        None,
    )
    .await
}

/// Counts a body's first cold run (INFO, commandstats).
fn count_cold(server: &Server, body: Body<'_>, went_cold: &mut bool) {
    if !*went_cold {
        *went_cold = true;
        server.stats.cold_commands.fetch_add(1, Ordering::Relaxed);
        server.stats.commands.record_cold(body.name());
    }
}

/// [`execute_body`], telling through `went_cold` whether the body had to
/// run on the cold-read pool.
async fn execute_rounds(
    server: &Arc<Server>,
    body: Body<'_>,
    session: &mut Session,
    client: &Arc<ClientInfo>,
    went_cold: &mut bool,
    blocked: Blocked,
    reserved: Option<OwnedKeysRequest>,
) -> Finished {
    let all = body.locks_all();
    let owned_keys = if all {
        Vec::new()
    } else {
        body.lock_keys(session.db)
    };
    let keys: Vec<(u8, &[u8])> = owned_keys.iter().map(|(db, k)| (*db, k.as_ref())).collect();
    let optimistic = all || keys.is_empty();
    let mut shared = reads_only(body, all, &keys);
    if blocked == Blocked::First {
        // Every command on keys waits, reads too: a read sent right after
        // another connection's unanswered SET sees it (and a tracking
        // client's GET is then invalidated by the next write, not by that
        // SET), as Redis's tests expect. Keyless commands wait when they
        // may change what others see (PUBLISH, FLUSHALL).
        let ordered = !optimistic || all || may_write(body);
        wait_for_earlier_arrivals(server, client, ordered).await;
    }
    if optimistic {
        return execute_optimistic(server, body, session, client, all, &keys, went_cold).await;
    }
    // The place in line is taken here, before anything is awaited (or was
    // taken by the write that woke this blocked client).
    let mut place = match reserved.filter(|place| !shared && place.is_for(&keys)) {
        Some(reserved) => Place::Reserved(reserved),
        None => Place::Asked(server.engine.request_keys(&keys, lock_mode(shared))),
    };
    if end_arrival_unless_scripted(client, body) {
        // Commands read after this one wait for it (on the other worker):
        // let them, and the connections queued here, take their places
        // before this one runs, so that taking places does not wait for
        // whole commands to run one after another.
        tokio::task::yield_now().await;
    }
    loop {
        let guard = place.acquire().await;
        match run_held(server, body, session, client, true, shared) {
            Attempt::Done(done) => {
                return register_wait(server, client, session, &owned_keys, done, blocked);
            }
            Attempt::NeedsExclusive => {
                // Its run would write (a lazy expiry, an event): again,
                // holding the keys exclusively.
                drop(guard);
                shared = false;
                place = Place::Asked(server.engine.request_keys(&keys, LockMode::Exclusive));
                continue;
            }
            Attempt::Incomplete => {}
        }
        count_cold(server, body, went_cold);
        // The disk read happens holding the keys' locks: a later command on
        // them waits for it, as it arrived later; no other key does.
        let (run, timing) = match on_pool(server, body, session, client, true).await {
            Ok((Some(run), timing)) => (run, timing),
            Ok((None, _)) => {
                return Finished::failed(Reply::Error(
                    "ERR command could not run on the cold-read pool".into(),
                ))
            }
            Err(reply) => return Finished::failed(reply),
        };
        if shared && !run.parts.commits_nothing() {
            drop(guard);
            shared = false;
            place = Place::Asked(server.engine.request_keys(&keys, LockMode::Exclusive));
            continue;
        }
        let key = owned_keys.first().map(|(_, key)| key);
        log_cold_read(server, client, body.name(), key, timing);
        let done = commit_pool_run(server, client, body, session, run);
        let done = register_wait(server, client, session, &owned_keys, done, blocked);
        drop(guard);
        return done;
    }
}

/// A body's place in its keys' lock queues.
enum Place<'a, 'k> {
    Asked(firn_storage::KeysRequest<'a, 'k>),
    /// Taken by the write that woke a blocked client.
    Reserved(OwnedKeysRequest),
}

impl<'a> Place<'a, '_> {
    /// Awaits the keys' locks (a body that must run again asks anew).
    async fn acquire(self) -> firn_storage::KeyGuard<'a> {
        match self {
            Place::Asked(request) => request.acquire().await,
            Place::Reserved(reserved) => reserved.acquire().await,
        }
    }
}

fn lock_mode(shared: bool) -> LockMode {
    if shared {
        LockMode::Shared
    } else {
        LockMode::Exclusive
    }
}

/// Commits what a pool run produced, under the body's locks.
fn commit_pool_run(
    server: &Server,
    client: &ClientInfo,
    body: Body<'_>,
    session: &mut Session,
    run: PoolRun,
) -> Finished {
    if watch_failed(server, body) {
        return Finished::new(Outcome::WatchFailed, Vec::new());
    }
    *session = run.session;
    match run.outcome {
        outcome @ Outcome::Command { result: Err(_), .. } => {
            failed_run(server, client, outcome, run.parts.pending_reads())
        }
        outcome => commit(
            server,
            client,
            server.engine.txn_from_parts(run.parts),
            outcome,
            run.effects,
        ),
    }
}

/// A blocking command that found nothing to serve registers its wait now,
/// while its keys' locks are still held: a command that comes after it
/// finds it blocked and wakes it (blocking/state.rs).
fn register_wait(
    server: &Arc<Server>,
    client: &ClientInfo,
    session: &Session,
    lock_keys: &[(u8, Bytes)],
    mut done: Finished,
    blocked: Blocked,
) -> Finished {
    if blocked == Blocked::Again {
        // Served (or answered an error): the next waiters go next, behind
        // this run, which still holds the keys.
        let still_blocked = matches!(
            &done.outcome,
            Outcome::Command {
                deferred: Some(Deferred::Block(_)),
                ..
            }
        );
        if !still_blocked {
            let pairs: Vec<(u8, &[u8])> =
                lock_keys.iter().map(|(db, k)| (*db, k.as_ref())).collect();
            let held = server.engine.stripes_of(&pairs);
            server
                .blocking
                .served_in_turn(client.id, Some(&server.engine), &held);
        } else {
            server.blocking.waits_on(client.id);
        }
        return done;
    }
    if let Outcome::Command {
        result: Ok(_),
        deferred: Some(Deferred::Block(on)),
    } = &done.outcome
    {
        done.registration = Some(server.blocking.register(
            client.id,
            session.db,
            on,
            lock_keys.to_vec(),
            || Some(server.engine.listen_submits()),
        ));
    }
    done
}

/// The optimistic rounds of a body that takes every lock, or none (see the
/// module comment).
async fn execute_optimistic(
    server: &Arc<Server>,
    body: Body<'_>,
    session: &mut Session,
    client: &Arc<ClientInfo>,
    all: bool,
    keys: &[(u8, &[u8])],
    went_cold: &mut bool,
) -> Finished {
    let keyless = keys.is_empty() && !all;
    for round in 0..=OPTIMISTIC_ROUNDS + 1 {
        let attempt = {
            let guard = acquire(server, all, keys).await;
            let attempt = run_held(server, body, session, client, guard.is_some(), false);
            // In effect (a SUBSCRIBE registered), or about to go to the
            // pool: the connections read after it may go.
            let _ = end_arrival_unless_scripted(client, body);
            attempt
        };
        if let Attempt::Done(done) = attempt {
            return done;
        }
        count_cold(server, body, went_cold);
        // After the optimistic rounds the locks come first, and the pool
        // run under them cannot be invalidated.
        let locked_run = round >= OPTIMISTIC_ROUNDS && !keyless;
        let early_guard = if locked_run {
            acquire(server, all, keys).await
        } else {
            None
        };
        let stamp = server
            .engine
            .write_stamp(&guarded_stripes(server, all, keys));
        let (run, timing) = match on_pool(server, body, session, client, locked_run).await {
            Ok((Some(run), timing)) => (run, timing),
            Ok((None, _)) => continue,
            Err(reply) => return Finished::failed(reply),
        };
        // A keyless command (KEYS, SCAN, RANDOMKEY...) locks nothing: its
        // pool result is as good as any. The expired keys it met are
        // deleted under their own locks, as a warm run would have, and
        // its reply waits for the pending writes it read.
        if keyless {
            log_cold_read(server, client, body.name(), None, timing);
            if watch_failed(server, body) {
                return Finished::new(Outcome::WatchFailed, Vec::new());
            }
            *session = run.session;
            let mut tickets = server.engine.delete_expired(run.parts.expired_keys()).await;
            tickets.extend(run.parts.pending_reads().iter().cloned());
            crate::after_call::took_effect(server, client);
            client.pubsub.mailbox.mark_reply();
            return match run.outcome {
                Outcome::Command {
                    result: Err(reply), ..
                } => Finished::failed_after_reads(reply, &tickets),
                outcome => {
                    crate::effects::apply(server, run.effects);
                    Finished::new(outcome, tickets)
                }
            };
        }
        let _guard = match early_guard {
            Some(guard) => Some(guard),
            None => acquire(server, all, keys).await,
        };
        if !locked_run
            && server
                .engine
                .write_stamp(&guarded_stripes(server, all, keys))
                != stamp
        {
            // Someone wrote one of its keys meanwhile: run again.
            continue;
        }
        log_cold_read(server, client, body.name(), None, timing);
        return commit_pool_run(server, client, body, session, run);
    }
    // A locked run always ends the rounds; only a pool that lost the job
    // gets here.
    Finished::failed(Reply::Error(
        "ERR command could not run on the cold-read pool".into(),
    ))
}

async fn on_pool(
    server: &Arc<Server>,
    body: Body<'_>,
    session: &Session,
    client: &Arc<ClientInfo>,
    locked: bool,
) -> Result<(Option<PoolRun>, JobTiming), Reply> {
    let job_server = server.clone();
    let job_body = body.detach();
    let job_watcher = body.watcher().cloned();
    let job_session = session.clone();
    let job_client = client.clone();
    let submitted = server.cold_pool.submit(move || {
        run_on_pool_thread(
            &job_server,
            &job_body,
            job_watcher.as_ref(),
            job_session,
            &job_client,
            locked,
        )
    });
    match submitted {
        Err(full) => Err(Reply::Error(
            format!(
                "ERR cold-read queue is full: io-queue-max ({}) commands are already waiting for the disk",
                full.0
            )
            .into(),
        )),
        Ok(rx) => rx
            .await
            .map_err(|_| Reply::Error("ERR cold-read pool stopped".into())),
    }
}
