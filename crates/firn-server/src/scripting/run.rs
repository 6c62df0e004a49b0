//! One script run, and the rounds around it.
//!
//! On the script thread, a run locks the declared KEYS (waiting: critical
//! sections elsewhere are CPU-only), opens one transaction, and runs the
//! script. Each `redis.call` runs its command's handler over that same
//! transaction (so the script reads its own writes), after taking the
//! locks of the command's keys with a *try*: a taken lock, or a command
//! that needs every lock, abandons the run (`Abandoned::AllLocks`), and
//! the next run holds every lock from the start. A read that misses
//! memory abandons the run too (`Abandoned::Cold`). An abandoned run
//! leaves nothing: its transaction is dropped, and a flag makes every
//! later call and the VM's hook fail, so a `pcall` cannot swallow it.
//!
//! On the connection's task, [`run_eval`] submits runs until one is done:
//! after a cold miss it runs the command that missed on the cold-read
//! pool (reads only; its result is dropped) to bring the data into
//! memory, then submits the run again. After `MAX_COLD_ROUNDS` misses the
//! run reads with blocking reads on the script thread (holding only the
//! locks it needs), so it always ends.
//!
//! A finished run commits its transaction once, with the script's write
//! commands as its replay form (wrapped in MULTI/EXEC when there is more
//! than one), and hands the tickets back: the reply waits for durability.

use bytes::Bytes;
use firn_resp::{Protocol, Reply};
use firn_storage::locks::LockRequest;
use firn_storage::{LockMode, OwnedKeysRequest, ReadMode, Ticket};
use mlua::{Function, Lua, Value};
use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::call::{Abandoned, CurrentRun, RunState};
use super::convert::lua_to_reply;
use super::flags::shebang_flags;
use super::jobs::on_thread_in_line;
use super::request::{EvalRequest, FcallRequest};
use super::shared::{CachedScript, Shared, KIND_EVAL, KIND_FUNCTION, NOSCRIPT};
use super::vm::{Script, Vm, REPL_ALL};
use crate::commands::Ctx;
use crate::server::{ClientInfo, Server, Session};

/// Warm-ups a run may need before it reads with blocking reads.
const MAX_COLD_ROUNDS: usize = 4;

/// What a run runs.
#[derive(Clone)]
pub enum RunRequest {
    Eval(EvalRequest),
    Fcall(FcallRequest),
}

impl RunRequest {
    /// The keys it declares.
    fn keys(&self) -> &[Bytes] {
        match self {
            RunRequest::Eval(eval) => &eval.keys,
            RunRequest::Fcall(fcall) => &fcall.keys,
        }
    }
}

/// How a run takes its locks and reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunMode {
    pub all_locks: bool,
    pub blocking_reads: bool,
}

enum Outcome {
    Done(Reply, Vec<Ticket>),
    Abandoned(Abandoned),
}

/// Compiles and caches a script body; returns its sha.
pub fn load_script(vm: &mut Vm, shared: &Shared, body: &Bytes) -> Result<String, Reply> {
    let sha = super::sha1::sha1_hex(body);
    ensure_compiled(vm, shared, &sha, body)?;
    Ok(sha)
}

fn ensure_compiled(vm: &mut Vm, shared: &Shared, sha: &str, body: &Bytes) -> Result<(), Reply> {
    if vm.scripts.contains_key(sha) {
        return Ok(());
    }
    let (flags, shebang_len) = shebang_flags(body).map_err(|e| Reply::error(format!("ERR {e}")))?;
    let func = vm
        .compile(&body[shebang_len..])
        .map_err(|e| Reply::error(format!("ERR Error compiling script (new function): {e}")))?;
    vm.scripts.insert(sha.to_string(), Script { func, flags });
    shared.scripts.write().insert(
        sha.to_string(),
        CachedScript {
            bytes: body.len(),
            flags,
        },
    );
    shared
        .scripts_bytes
        .fetch_add(body.len() as u64, Ordering::Relaxed);
    Ok(())
}

/// A run's place in the lock queues, taken as its job is queued for the
/// script thread (see [`run_rounds`]).
pub enum Place {
    /// The declared keys'.
    Keys(OwnedKeysRequest),
    /// Every stripe: a run that needs all the locks.
    All(LockRequest<'static>),
}

/// EVAL, FCALL and friends for a client: runs until a run is done.
pub async fn run_rounds(
    server: &Arc<Server>,
    client: &Arc<ClientInfo>,
    session: &Session,
    request: RunRequest,
) -> (Reply, Vec<Ticket>) {
    let mut mode = RunMode {
        all_locks: false,
        blocking_reads: false,
    };
    let mut cold_rounds = 0;
    // Every run's place in the lock queues is taken here, on the
    // connection's thread, in the same step that queues its job for the
    // script thread (`on_thread_in_line`): the declared keys' place, or
    // every stripe for a run that needs all the locks. So a command on one
    // of those keys read after this one runs after the script, as in
    // Redis, and the script thread, which runs jobs in the order they were
    // queued, only ever waits for a place ahead of every later job's: a run
    // that took its locks on the thread instead waited there for a place a
    // job queued behind it held (the checker's mixed workload: a script
    // that calls FLUSHDB, run again with every lock, stalled every client).
    // A run abandoned (for a lock or a cold read) runs again from the back
    // of the queues.
    let declared: Vec<(u8, Bytes)> = request
        .keys()
        .iter()
        .map(|key| (session.db, key.clone()))
        .collect();
    loop {
        let job_server = server.clone();
        let job_client = client.clone();
        let job_session = session.clone();
        let job_request = request.clone();
        let take_place = || {
            let place = if mode.all_locks {
                Some(Place::All(server.engine.request_all_owned()))
            } else if declared.is_empty() {
                None
            } else {
                Some(Place::Keys(
                    server
                        .engine
                        .request_keys_owned(&declared, LockMode::Exclusive),
                ))
            };
            // In line: the connections read after this one may go.
            client.end_arrival();
            place
        };
        let outcome = on_thread_in_line(
            server,
            take_place,
            move |vm, job_place| match &job_request {
                RunRequest::Eval(eval) => eval_on_thread(
                    vm,
                    &job_server,
                    &job_client,
                    &job_session,
                    eval,
                    mode,
                    job_place,
                ),
                RunRequest::Fcall(fcall) => fcall_on_thread(
                    vm,
                    &job_server,
                    &job_client,
                    &job_session,
                    fcall,
                    mode,
                    job_place,
                ),
            },
        )
        .await;
        match outcome {
            Err(reply) => return (reply, Vec::new()),
            Ok(Outcome::Done(reply, tickets)) => return (reply, tickets),
            Ok(Outcome::Abandoned(Abandoned::AllLocks)) => mode.all_locks = true,
            Ok(Outcome::Abandoned(Abandoned::Cold { args, db })) => {
                if cold_rounds == 0 {
                    server.stats.cold_commands.fetch_add(1, Ordering::Relaxed);
                }
                cold_rounds += 1;
                if cold_rounds >= MAX_COLD_ROUNDS {
                    mode.blocking_reads = true;
                } else {
                    warm(server, client, session, args, db).await;
                }
            }
        }
    }
}

/// Reads what `args` reads on the cold-read pool, so that the next run
/// finds it in memory. Its result, writes included, is dropped.
async fn warm(
    server: &Arc<Server>,
    client: &Arc<ClientInfo>,
    session: &Session,
    args: Vec<Bytes>,
    db: u8,
) {
    let job_server = server.clone();
    let job_client = client.clone();
    let mut job_session = session.clone();
    job_session.db = db;
    let submitted = server.cold_pool.submit(move || {
        if let Ok(cmd) = crate::commands::registry().lookup(&args) {
            let mut ctx = Ctx {
                server: &job_server,
                txn: job_server.engine.txn(ReadMode::Blocking),
                session: &mut job_session,
                client: &job_client,
                deferred: None,
                // Its side effects, like its writes, are dropped.
                in_unit: true,
                provisional: false,
                effects: Vec::new(),
            };
            ctx.txn.set_db(db);
            let _ = (cmd.handler)(&mut ctx, &args);
        }
    });
    if let Ok(done) = submitted {
        let _ = done.await;
    }
}

/// Why a script that may write cannot run now: called with an `*_RO`
/// command, or the disk refuses writes (MISCONF).
fn refuse_writing_script(server: &Server, read_only_command: bool) -> Option<Outcome> {
    let reply = if read_only_command {
        Reply::error("ERR Can not execute a script with write flag using *_ro command.")
    } else {
        let why = server.engine.write_error()?;
        Reply::error(format!(
            "MISCONF Errors writing to the RocksDB write-ahead log: {why}"
        ))
    };
    Some(Outcome::Done(reply, Vec::new()))
}

fn eval_on_thread(
    vm: &mut Vm,
    server: &Arc<Server>,
    client: &Arc<ClientInfo>,
    session: &Session,
    request: &EvalRequest,
    mode: RunMode,
    place: Option<Place>,
) -> Outcome {
    let shared = server.scripting.shared.clone();
    if let Some(body) = &request.body {
        if let Err(reply) = ensure_compiled(vm, &shared, &request.sha, body) {
            return Outcome::Done(reply, Vec::new());
        }
    }
    let Some(script) = vm.scripts.get(&request.sha) else {
        return Outcome::Done(Reply::error(NOSCRIPT), Vec::new());
    };
    let flags = script.flags;
    let func = script.func.clone();
    if !flags.compat && !flags.no_writes {
        if let Some(refused) = refuse_writing_script(server, request.read_only) {
            return refused;
        }
    }
    let read_only = request.read_only || (!flags.compat && flags.no_writes);
    let globals = vm.lua.globals();
    let set_globals = (|| -> mlua::Result<()> {
        globals.raw_set("KEYS", strings_table(&vm.lua, &request.keys)?)?;
        globals.raw_set("ARGV", strings_table(&vm.lua, &request.argv)?)?;
        Ok(())
    })();
    if let Err(e) = set_globals {
        return Outcome::Done(Reply::error(format!("ERR {e}")), Vec::new());
    }
    run_function(
        vm,
        &shared,
        server,
        client,
        session,
        Target {
            func,
            name: &request.sha,
            kind: KIND_EVAL,
            keys: &request.keys,
            args: None,
            shown: None,
        },
        read_only,
        mode,
        place,
    )
}

fn fcall_on_thread(
    vm: &mut Vm,
    server: &Arc<Server>,
    client: &Arc<ClientInfo>,
    session: &Session,
    request: &FcallRequest,
    mode: RunMode,
    place: Option<Place>,
) -> Outcome {
    let shared = server.scripting.shared.clone();
    let found = vm
        .libraries
        .index
        .get(&request.name.to_ascii_lowercase())
        .and_then(|library| vm.libraries.by_name.get(library))
        .and_then(|library| {
            library
                .functions
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(&request.name))
        });
    let Some((name, function)) = found else {
        return Outcome::Done(Reply::error("ERR Function not found"), Vec::new());
    };
    let name = name.clone();
    let flags = function.flags;
    let func = function.func.clone();
    if !flags.no_writes {
        if let Some(refused) = refuse_writing_script(server, request.read_only) {
            return refused;
        }
    }
    let read_only = request.read_only || flags.no_writes;
    let shown = Some((name.clone(), request.command.clone()));
    run_function(
        vm,
        &shared,
        server,
        client,
        session,
        Target {
            func,
            name: &name,
            kind: KIND_FUNCTION,
            keys: &request.keys,
            args: Some(&request.argv),
            shown,
        },
        read_only,
        mode,
        place,
    )
}

fn strings_table(lua: &Lua, items: &[Bytes]) -> mlua::Result<mlua::Table> {
    let table = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, item) in items.iter().enumerate() {
        table.raw_set(i + 1, lua.create_string(item)?)?;
    }
    Ok(table)
}

/// What a run calls.
struct Target<'r> {
    func: Function,
    /// The name errors quote ("script: <name>"): a sha or a function name.
    name: &'r str,
    kind: u8,
    keys: &'r [Bytes],
    /// A function's (KEYS, ARGV) arguments; scripts read globals instead.
    args: Option<&'r [Bytes]>,
    /// What FUNCTION STATS shows while it runs: name and command line.
    shown: Option<(String, Vec<Bytes>)>,
}

#[allow(clippy::too_many_arguments)]
fn run_function(
    vm: &mut Vm,
    shared: &Arc<Shared>,
    server: &Arc<Server>,
    client: &Arc<ClientInfo>,
    session: &Session,
    target: Target<'_>,
    read_only: bool,
    mode: RunMode,
    place: Option<Place>,
) -> Outcome {
    let engine = &server.engine;
    let db = session.db;
    let key_pairs: Vec<(u8, &[u8])> = target.keys.iter().map(|k| (db, k.as_ref())).collect();
    let guard = match place {
        Some(Place::All(request)) => firn_storage::locks::growing(request.wait_blocking(), true),
        _ if mode.all_locks => engine.lock_all_growing(),
        Some(Place::Keys(place)) if place.is_for(&key_pairs) => {
            match place.wait_blocking_in_place() {
                Some(guard) => firn_storage::locks::growing(guard, false),
                // A SWAPDB moved the keys: run again with every lock, placed
                // as that run is queued.
                None => return Outcome::Abandoned(Abandoned::AllLocks),
            }
        }
        _ => engine.lock_keys_growing(&key_pairs),
    };
    let epoch = engine.lock_epoch();
    let read_mode = if mode.blocking_reads {
        ReadMode::Blocking
    } else {
        ReadMode::MemoryOnly
    };
    let mut txn = engine.txn_locked(read_mode);
    txn.set_db(db);
    // The caller's writes: tracking's NOLOOP skips its own invalidations.
    txn.set_client(client.id);
    let mut script_session = session.clone();
    script_session.protocol = Protocol::Resp2;
    let state = RefCell::new(RunState {
        server,
        client,
        shared,
        txn: Some(txn),
        guard,
        epoch,
        session: Some(&mut script_session),
        read_only,
        replay: Vec::new(),
        replay_db: db,
        abandoned: None,
        declared: (db, target.keys),
        declared_tracked: false,
        effects: Vec::new(),
    });
    vm.settings.resp.set(2);
    vm.settings.repl.set(REPL_ALL);
    vm.settings.in_run.set(true);
    let threshold_ms = server.config().busy_reply_threshold_ms;
    shared.start(target.kind, threshold_ms);
    *shared.running_function.lock() = target.shown.clone();

    let settings = vm.settings.clone();
    let current = CurrentRun {
        state: &state,
        settings: &settings,
    };
    let result: mlua::Result<Result<Reply, Reply>> = (|| {
        let _running = current.install();
        let (ok, value): (bool, Value) = match target.args {
            None => vm.runner.call(target.func.clone())?,
            Some(argv) => vm.runner.call((
                target.func.clone(),
                strings_table(&vm.lua, target.keys)?,
                strings_table(&vm.lua, argv)?,
            ))?,
        };
        let resp3 = settings.resp.get() == 3;
        Ok(if ok {
            Ok(lua_to_reply(&value, resp3))
        } else {
            Err(failure_reply(&value, target.name))
        })
    })();
    shared.finish();
    vm.settings.in_run.set(false);

    let state = state.into_inner();
    if let Some(abandoned) = state.abandoned {
        return Outcome::Abandoned(abandoned);
    }
    let reply = match result {
        Ok(Ok(reply)) | Ok(Err(reply)) => reply,
        Err(mlua::Error::MemoryError(_)) => Reply::error(format!(
            "ERR Error running script {}, not enough memory",
            target.name
        )),
        Err(e) => Reply::error(format!("ERR Error running script {}, {e}", target.name)),
    };
    let Some(mut txn) = state.txn else {
        return Outcome::Done(reply, Vec::new());
    };
    // The changes the calls counted (INFO rdb_changes_since_last_save).
    let dirty = txn.dirty();
    let effects = state.effects;
    let mut replay = state.replay;
    if replay.len() > 1 {
        replay.insert(0, vec![Bytes::from_static(b"MULTI")]);
        replay.push(vec![Bytes::from_static(b"EXEC")]);
    }
    if !replay.is_empty() {
        txn.set_replay(replay);
    }
    let outcome = match txn.commit() {
        Ok(tickets) => {
            server.stats.dirty.fetch_add(dirty, Ordering::Relaxed);
            crate::effects::apply(server, effects);
            Outcome::Done(reply, tickets)
        }
        Err(e) => Outcome::Done(crate::errors::CmdError::Storage(e).into_reply(), Vec::new()),
    };
    drop(state.guard);
    outcome
}

/// A failed run's reply: the error's text, and where it was raised.
fn failure_reply(value: &Value, name: &str) -> Reply {
    match value {
        Value::Table(table) => {
            let text: Vec<u8> = match table.raw_get::<Value>("err") {
                Ok(Value::String(s)) => s.as_bytes().to_vec(),
                _ => b"ERR unknown error".to_vec(),
            };
            let source = table.raw_get::<Value>("source").ok();
            let line = table.raw_get::<Value>("line").ok();
            let mut out = text;
            if let (Some(Value::String(source)), Some(line)) = (source, line) {
                let line = match line {
                    Value::Integer(n) => n.to_string(),
                    Value::Number(n) => (n as i64).to_string(),
                    _ => String::new(),
                };
                if !line.is_empty() {
                    out.extend_from_slice(format!(" script: {name}, on ").as_bytes());
                    out.extend_from_slice(&source.as_bytes());
                    out.extend_from_slice(format!(":{line}.").as_bytes());
                }
            }
            Reply::Error(out.into())
        }
        Value::String(s) => Reply::error(format!(
            "ERR Error running script {name}, {:.100}",
            s.to_string_lossy()
        )),
        _ => Reply::error(format!(
            "ERR Error running script {name}, execution failure"
        )),
    }
}
