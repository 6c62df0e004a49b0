//! One `redis.call`/`redis.pcall` of a running script: the Rust side the
//! VM calls (`call_entry`, installed through `vm::Hooks`), which runs the
//! command over the run's transaction, with memory-only reads, and records
//! its replay form and side effects. A call that needs a lock the run does
//! not hold, or data not in memory, abandons the run (run.rs runs it again).

use bytes::Bytes;
use firn_resp::{Protocol, Reply};
use firn_storage::{GrowingGuard, ReadMode, Txn};
use mlua::{Lua, MultiValue, Value};
use std::cell::{Cell, RefCell};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::convert::{error_table, reply_to_lua};
use super::shared::{Shared, ABANDONED, KILLED};
use super::vm::{RunSettings, REPL_NONE};
use crate::command_table::Flags;
use crate::commands::{Ctx, Deferred};
use crate::effects::SideEffect;
use crate::server::{ClientInfo, Server, Session};

pub(super) enum Abandoned {
    /// A lock was taken or the command needs every lock.
    AllLocks,
    /// A read missed memory: warm `args` (in database `db`), run again.
    Cold { args: Vec<Bytes>, db: u8 },
}

/// What one run's `redis.call` works with.
pub(super) struct RunState<'a> {
    pub(super) server: &'a Arc<Server>,
    pub(super) client: &'a Arc<ClientInfo>,
    pub(super) shared: &'a Shared,
    pub(super) txn: Option<Txn<'a>>,
    pub(super) guard: GrowingGuard<'a>,
    pub(super) epoch: u64,
    /// The script's own session (its SELECT never leaks to the caller),
    /// lent to each call's `Ctx` and taken back.
    pub(super) session: Option<&'a mut Session>,
    pub(super) read_only: bool,
    /// Replay form of the writes, in order (SELECTs included).
    pub(super) replay: Vec<Vec<Bytes>>,
    /// Database the replay is in at its end.
    pub(super) replay_db: u8,
    pub(super) abandoned: Option<Abandoned>,
    /// The script's declared keys in the caller's database, which a
    /// tracking caller tracks once the script runs a read-only command.
    pub(super) declared: (u8, &'a [Bytes]),
    pub(super) declared_tracked: bool,
    /// The calls' side effects (PUBLISH, MONITOR lines, commandstats),
    /// applied once the run commits: an abandoned run makes none.
    pub(super) effects: Vec<crate::effects::SideEffect>,
}

/// The run in progress, as `redis.call` finds it.
pub(super) struct CurrentRun<'s, 'a> {
    pub(super) state: &'s RefCell<RunState<'a>>,
    pub(super) settings: &'s RunSettings,
}

thread_local! {
    /// The run in progress on the script thread (a `CurrentRun` on
    /// `run_function`'s stack), or null. `redis.call` is one function
    /// registered once; this is how it reaches the run, instead of a
    /// function created (and collected) per run.
    static CURRENT_RUN: Cell<*const ()> = const { Cell::new(std::ptr::null()) };
}

/// Clears [`CURRENT_RUN`] when the run ends, even by a panic.
pub(super) struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        CURRENT_RUN.with(|c| c.set(std::ptr::null()));
    }
}

impl CurrentRun<'_, '_> {
    pub(super) fn install(&self) -> Installed {
        CURRENT_RUN.with(|c| c.set(self as *const Self as *const ()));
        Installed
    }
}

/// The Rust side of `redis.call`/`redis.pcall` (see `vm.rs`): runs the
/// command in the current run, `(status, value)`.
pub fn call_entry(lua: &Lua, args: MultiValue) -> mlua::Result<(i32, Value)> {
    let current = CURRENT_RUN.with(|c| c.get());
    if current.is_null() {
        return Ok((1, Value::Table(error_table(lua, "no script is running")?)));
    }
    // SAFETY: CURRENT_RUN points at the `CurrentRun` of the run in progress
    // on this thread: `run_function` sets it for exactly as long as that
    // value lives on its stack (the `Installed` guard clears it before the
    // value goes), and only this thread reads it.
    let current = unsafe { &*(current as *const CurrentRun<'_, '_>) };
    let Ok(mut state) = current.state.try_borrow_mut() else {
        return Ok((
            1,
            Value::Table(error_table(lua, "redis.call is not reentrant")?),
        ));
    };
    redis_call(lua, &mut state, current.settings, args)
}

/// `redis.acl_check_cmd`: whether the user of the run in progress may run
/// `argv` (Redis's ACLCheckAllUserCommandPerm on the script's caller), or
/// `None` when `argv` names no command.
pub fn acl_check_entry(argv: &[Bytes]) -> Option<bool> {
    let cmd = crate::commands::registry().resolve(argv).ok()?;
    let current = CURRENT_RUN.with(|c| c.get());
    if current.is_null() {
        return None;
    }
    // SAFETY: as in `call_entry`: the pointer is the live `CurrentRun` of
    // this thread's run, cleared before that value goes.
    let current = unsafe { &*(current as *const CurrentRun<'_, '_>) };
    let state = current.state.try_borrow().ok()?;
    let user = &state.session.as_ref()?.user;
    Some(crate::acl::check::check_user(user, cmd, argv).is_ok())
}

/// `(status, value)` of one `redis.call`/`redis.pcall`: 0 and the reply,
/// 1 and an error table (call raises it, pcall returns it), or 2 and an
/// error table both raise (the run is killed or abandoned).
fn redis_call(
    lua: &Lua,
    state: &mut RunState<'_>,
    settings: &RunSettings,
    args: MultiValue,
) -> mlua::Result<(i32, Value)> {
    let shared = state.shared;
    if state.abandoned.is_some() || shared.abandon.load(Ordering::Acquire) {
        return Ok((2, Value::Table(error_table(lua, ABANDONED)?)));
    }
    if shared.kill.load(Ordering::Acquire) {
        return Ok((2, Value::Table(error_table(lua, KILLED)?)));
    }
    let fail = |text: &str| -> mlua::Result<(i32, Value)> {
        Ok((1, Value::Table(error_table(lua, text)?)))
    };
    if args.is_empty() {
        return fail("Please specify at least one argument for this redis lib call");
    }
    let mut argv: Vec<Bytes> = Vec::with_capacity(args.len());
    for arg in args.iter() {
        match arg {
            Value::String(s) => argv.push(Bytes::copy_from_slice(&s.as_bytes())),
            Value::Integer(n) => argv.push(Bytes::from(n.to_string())),
            Value::Number(n) => argv.push(Bytes::from(firn_resp::format_double(*n))),
            _ => return fail("Lua redis lib command arguments must be strings or integers"),
        }
    }
    let server = state.server;
    let cmd = match crate::commands::registry().lookup(&argv) {
        Ok(cmd) => cmd,
        Err(e) => {
            let reply = e.into_reply();
            let arity = matches!(&reply, Reply::Error(text) if text.starts_with(b"ERR wrong number of arguments"));
            if arity {
                return fail("Wrong number of args calling Redis command from script");
            }
            return match redis_command_flags(&argv) {
                // A Redis command Firn does not serve answers as it does
                // outside a script.
                Some(flags) if !flags.contains(Flags::NOSCRIPT) => {
                    Ok((1, reply_to_lua(lua, &reply, false)?))
                }
                Some(_) => fail("This Redis command is not allowed from script"),
                None => fail("Unknown Redis command called from script"),
            };
        }
    };
    let flags = cmd.spec.flags;
    let deny = !server.scripts_may_call_anything.load(Ordering::Relaxed);
    if deny && flags.contains(Flags::NOSCRIPT) {
        return fail("This Redis command is not allowed from script");
    }
    if let Some(session) = state.session.as_ref() {
        if let Err(denied) = crate::acl::check::check_user(&session.user, cmd, &argv) {
            let entry = crate::acl::check::entry(
                state.client,
                &session.user,
                cmd,
                &argv,
                denied,
                crate::acl::state::Context::Lua,
            );
            // Logged once, when the run commits (a run may be abandoned).
            state.effects.push(SideEffect::AclLog(entry));
            return fail(&denied.script_error());
        }
    }
    if state.read_only && (cmd.has(Flags::WRITE) || flags.contains(Flags::MAY_REPLICATE)) {
        return fail("Write commands are not allowed from read-only scripts.");
    }
    if cmd.has(Flags::WRITE) {
        if let Some(why) = server.engine.write_error() {
            return fail(&format!(
                "-MISCONF Errors writing to the RocksDB write-ahead log: {why}"
            ));
        }
        // Redis's scriptVerifyWriteCommandAllow: a script that has not
        // written yet may still be refused its first write (a read-only
        // replica, too few good replicas); one that has must go on.
        if !shared.dirty.load(Ordering::Acquire) {
            if let Err(e) = crate::replication::admit_write(server, state.client) {
                if let Reply::Error(text) = e.into_reply() {
                    return fail(&format!("-{}", String::from_utf8_lossy(&text)));
                }
            }
        }
    }
    // The locks this command needs, tried without waiting.
    let locked = if cmd.locks_all(&argv) {
        state.guard.holds_all()
    } else {
        let db = state.session.as_ref().map_or(0, |s| s.db);
        let keys = cmd.lock_keys(&argv, db);
        if keys.is_empty() && (cmd.has(Flags::READONLY) || cmd.has(Flags::WRITE)) {
            // A keyspace command without keys (KEYS, SCAN, RANDOMKEY,
            // DBSIZE) sees the whole database: only every lock keeps the
            // script's view of it atomic.
            state.guard.holds_all()
        } else {
            let pairs: Vec<(u8, &[u8])> = keys.iter().map(|(d, k)| (*d, k.as_ref())).collect();
            server
                .engine
                .try_lock_more(&mut state.guard, &pairs, state.epoch)
        }
    };
    if !locked {
        return abandon(lua, state, Abandoned::AllLocks);
    }
    if cmd.has(Flags::WRITE) {
        shared.dirty.store(true, Ordering::Release);
    }
    if !cmd.has(Flags::ADMIN) {
        state.effects.push(SideEffect::Monitor {
            db: state.session.as_ref().map_or(0, |s| s.db),
            args: argv.clone(),
        });
    }
    if cmd.has(Flags::READONLY) && !state.declared_tracked {
        state.declared_tracked = true;
        let (db, keys) = state.declared;
        crate::tracking::state::remember_script_keys(server, state.client, db, keys);
    }
    let resp3 = settings.resp.get() == 3;
    let (Some(txn), Some(session)) = (state.txn.take(), state.session.take()) else {
        return fail("internal error: no transaction");
    };
    session.protocol = if resp3 {
        Protocol::Resp3
    } else {
        Protocol::Resp2
    };
    let db = session.db;
    let started = Instant::now();
    let mut ctx = Ctx {
        server,
        txn,
        session,
        client: state.client,
        deferred: None,
        in_unit: true,
        provisional: false,
        effects: Vec::new(),
    };
    ctx.txn.set_read_lookups(cmd.has(Flags::READONLY));
    ctx.txn.set_signal_mode(cmd.signal_mode());
    let lookups = ctx.txn.key_lookups();
    let generation = ctx.txn.write_generation();
    let mut result = (cmd.handler)(&mut ctx, &argv);
    // A read that missed memory before the command wrote anything: the
    // run keeps its keys' places and reads on from the disk (the script
    // thread waits for that one read), so that no command read after the
    // script runs before it. One that missed after writing gives the run
    // up, to run again once the data is warm.
    if matches!(&result, Err(e) if e.is_incomplete())
        && ctx.txn.write_generation() == generation
        && ctx.deferred.is_none()
    {
        if ctx.txn.mode() == ReadMode::MemoryOnly {
            server.stats.cold_commands.fetch_add(1, Ordering::Relaxed);
        }
        ctx.txn.read_blocking();
        result = (cmd.handler)(&mut ctx, &argv);
    }
    if result.is_ok() {
        let after = ctx.txn.key_lookups();
        crate::exec::count_lookups(&mut ctx, cmd, (after.0 - lookups.0, after.1 - lookups.1));
    }
    let handler_replay = ctx.txn.take_replay();
    let deferred = ctx.deferred.take();
    let db_after = ctx.session.db;
    state.effects.append(&mut ctx.effects);
    state.txn = Some(ctx.txn);
    state.session = Some(ctx.session);
    let reply = match result {
        Err(e) if e.is_incomplete() => {
            return abandon(lua, state, Abandoned::Cold { args: argv, db });
        }
        Err(e) => e.into_reply(),
        Ok(reply) => match deferred {
            Some(Deferred::Blocking(job)) => job(server),
            Some(Deferred::Stream(job)) => collect_stream(server, job),
            _ => reply,
        },
    };
    let failed = reply.is_error();
    let call = crate::after_call::Call::new(server, state.client, cmd, &argv, db);
    if let Some(change) = crate::bookkeeping::access_change(&call, Some(&reply)) {
        state.effects.push(SideEffect::Access(change));
    }
    state.effects.push(SideEffect::Call {
        name: cmd.name(),
        usec: started.elapsed().as_micros() as u64,
        failed,
    });
    if cmd.has(Flags::WRITE) && !failed && settings.repl.get() != REPL_NONE {
        let commands = if handler_replay.is_empty() {
            vec![argv]
        } else {
            handler_replay
        };
        let db = db_after;
        if db != state.replay_db {
            state.replay.push(vec![
                Bytes::from_static(b"SELECT"),
                Bytes::from(db.to_string()),
            ]);
            state.replay_db = db;
        }
        state.replay.extend(commands);
    }
    let value = reply_to_lua(lua, &reply, resp3)?;
    Ok((i32::from(failed), value))
}

/// The flags Redis 7.0 gives a command line's command, served or not.
fn redis_command_flags(argv: &[Bytes]) -> Option<Flags> {
    let name = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
    let specs = crate::command_table::KEY_SPECS;
    if let Some(sub) = argv.get(1) {
        let full = format!(
            "{name}|{}",
            String::from_utf8_lossy(sub).to_ascii_lowercase()
        );
        if let Some(spec) = specs.iter().find(|s| s.name == full) {
            return Some(spec.flags);
        }
    }
    specs.iter().find(|s| s.name == name).map(|s| s.flags)
}

fn abandon(lua: &Lua, state: &mut RunState<'_>, why: Abandoned) -> mlua::Result<(i32, Value)> {
    state.abandoned = Some(why);
    state.shared.abandon.store(true, Ordering::Release);
    Ok((2, Value::Table(error_table(lua, ABANDONED)?)))
}

/// A streamed reply (KEYS, big HGETALL...) gathered whole for the script.
fn collect_stream(server: &Arc<Server>, job: crate::stream_reply::StreamJob) -> Reply {
    use crate::stream_reply::Part;
    let mut parts = crate::stream_reply::start(server, job);
    let mut shape: Option<Part> = None;
    let mut items: Vec<Reply> = Vec::new();
    while let Some(part) = parts.blocking_recv() {
        match part {
            Part::Error(reply) => return reply,
            Part::Items(mut batch) => items.append(&mut batch),
            header => shape = Some(header),
        }
    }
    match shape {
        Some(Part::Map(_)) => {
            let mut pairs = Vec::with_capacity(items.len() / 2);
            let mut it = items.into_iter();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                pairs.push((k, v));
            }
            Reply::Map(pairs)
        }
        Some(Part::Set(_)) => Reply::Set(items),
        _ => Reply::Array(items),
    }
}
