//! MULTI/EXEC: a connection's transaction state, queueing, and EXEC.
//!
//! While a client is in MULTI, every command except EXEC, DISCARD, MULTI,
//! WATCH, QUIT and RESET is checked as if it were to run (existence, arity,
//! NOAUTH, MISCONF, commands refused inside a transaction, CLIENT PAUSE
//! WRITE for writes) and queued with `+QUEUED` (`pipeline.rs` calls
//! [`queue`] where it would have run it). A refusal marks the transaction
//! so that EXEC answers EXECABORT.
//!
//! EXEC runs the queued commands as one unit of `exec.rs` (`Body::Transaction`):
//! under the locks of the union of their keys, over one `Txn`, committed
//! once; cold reads send the whole list to the pool and back, as for one
//! command. Runtime errors stay in their slot (and leave no writes). The
//! WATCH check (firn-storage's watch.rs) is made where the body commits,
//! under its locks. Work a handler defers (streamed replies, blocking jobs)
//! runs after the commit and its reply is put in its slot whole.

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::Watcher;
use std::sync::Arc;

use crate::after_call::{self, Call};
use crate::command_table::Flags;
use crate::commands::{Command, Deferred, Traits};
use crate::errors::CmdError;
use crate::exec::{execute_body, Body, Executed, Outcome, Step};
use crate::server::{ClientInfo, ReplyMode, Server, Session};
use crate::stream_reply::Part;

const EXECABORT: &str = "EXECABORT Transaction discarded because of previous errors.";
const NOT_IN_MULTI: &str = "ERR Command not allowed inside a transaction";

/// MULTI.
pub fn begin(session: &mut Session, client: &ClientInfo) -> Result<(), CmdError> {
    if session.tx.in_multi() {
        return Err(CmdError::Static("ERR MULTI calls can not be nested"));
    }
    session.tx.queued = Some(Vec::new());
    client.tx.publish(0, 0);
    Ok(())
}

/// Leaves MULTI and forgets the watched keys (DISCARD, EXEC, RESET).
pub fn discard(server: &Server, session: &mut Session, client: &ClientInfo) {
    session.tx.queued = None;
    session.tx.aborted = false;
    session.tx.writes = false;
    client.tx.publish(-1, 0);
    unwatch(server, client);
}

/// UNWATCH: forgets the watched keys and that one of them changed.
pub fn unwatch(server: &Server, client: &ClientInfo) {
    server.engine.unwatch_all(&client.tx.watcher);
    client.tx.watcher.clear_dirty();
}

/// A request refused before it could be queued or run (unknown command,
/// wrong arity): inside MULTI, EXEC will answer EXECABORT.
pub fn flag_error(session: &mut Session) {
    if session.tx.in_multi() {
        session.tx.aborted = true;
    }
}

/// A resolved command refused before running (NOAUTH, MISCONF...). Inside
/// MULTI the transaction is marked. A refused EXEC discards the transaction
/// and says why, in or out of MULTI, as Redis's execCommandAbort.
pub fn refused(
    server: &Server,
    session: &mut Session,
    client: &ClientInfo,
    cmd: &Command,
    reply: Reply,
) -> Reply {
    flag_error(session);
    if cmd.name() != "exec" {
        return reply;
    }
    discard(server, session, client);
    match reply {
        Reply::Error(text) => {
            let mut out = b"EXECABORT Transaction discarded because of: ".to_vec();
            out.extend_from_slice(&text);
            Reply::Error(out.into())
        }
        other => other,
    }
}

/// A request that did not resolve (unknown command, wrong arity): inside
/// MULTI, EXEC will answer EXECABORT; EXEC with arguments is itself
/// aborted. Redis formats these rejections without the `ERR` prefix when
/// it aborts.
pub fn rejected(
    server: &Server,
    session: &mut Session,
    client: &ClientInfo,
    arity_of: Option<&str>,
    reply: Reply,
) -> Reply {
    flag_error(session);
    match (arity_of, reply) {
        (Some("exec"), Reply::Error(text)) => {
            discard(server, session, client);
            let text = text.strip_prefix(b"ERR ").unwrap_or(&text);
            let mut out = b"EXECABORT Transaction discarded because of: ".to_vec();
            out.extend_from_slice(text);
            Reply::Error(out.into())
        }
        (_, reply) => reply,
    }
}

/// Inside MULTI: queues the command and returns `+QUEUED` (or the refusal
/// of a command not allowed in a transaction). `None`: run it now.
pub fn queue(
    server: &Server,
    session: &mut Session,
    client: &ClientInfo,
    cmd: &Command,
    args: &[Bytes],
) -> Option<Reply> {
    let tx = &mut session.tx;
    let queued = tx.queued.as_mut()?;
    if cmd.is(Traits::UNQUEUED) {
        return None;
    }
    if cmd.spec.flags.contains(Flags::NO_MULTI) {
        tx.aborted = true;
        return Some(CmdError::Static(NOT_IN_MULTI).into_reply());
    }
    // As Redis 7.0: a transaction that will fail anyway (a refused
    // command, a watched key changed) keeps nothing more.
    if tx.aborted || client.tx.watcher.is_dirty() {
        return Some(Reply::Simple(Bytes::from_static(b"QUEUED")));
    }
    queued.push(args.to_vec());
    tx.writes |= may_replicate(cmd.flags_for(server, args));
    let memory = client.tx.multi_mem()
        + args.iter().map(|a| a.len() as u64).sum::<u64>()
        + 8 * args.len() as u64;
    client.tx.publish(queued.len() as i64, memory);
    Some(Reply::Simple(Bytes::from_static(b"QUEUED")))
}

/// Whether CLIENT PAUSE WRITE holds this command: a write, or an EXEC
/// whose queue holds one (Redis 7.0's is_may_replicate_command).
pub fn pauses_as_write(server: &Server, session: &Session, cmd: &Command, args: &[Bytes]) -> bool {
    may_replicate(cmd.flags_for(server, args)) || (cmd.name() == "exec" && session.tx.writes)
}

/// Redis's CMD_WRITE or CMD_MAY_REPLICATE, of a command line's flags
/// (a script's declared ones): what CLIENT PAUSE WRITE holds.
fn may_replicate(flags: Flags) -> bool {
    flags.contains(Flags::WRITE) || flags.contains(Flags::MAY_REPLICATE)
}

/// Whether this request is an EXEC that runs a transaction.
pub fn is_exec(session: &Session, cmd: &Command) -> bool {
    cmd.name() == "exec" && session.tx.in_multi()
}

/// After EXEC, how CLIENT REPLY treats its reply: `(mode after, sent)`.
/// Redis adds EXEC's array header before the queued commands run, and each
/// of their replies as the mode then allows; a CLIENT REPLY SKIP inside
/// skips the command after EXEC.
pub fn take_exec_pass(session: &mut Session) -> Option<(ReplyMode, bool)> {
    session.tx.exec_pass.take()
}

/// EXEC (the caller checked [`is_exec`]).
pub async fn exec(
    server: &Arc<Server>,
    session: &mut Session,
    client: &Arc<ClientInfo>,
) -> Executed {
    let queued = session.tx.queued.take().unwrap_or_default();
    let aborted = std::mem::take(&mut session.tx.aborted);
    session.tx.writes = false;
    client.tx.publish(-1, 0);
    let done = |reply: Reply, tickets, deferred| Executed {
        reply,
        tickets,
        deferred,
        registration: None,
    };
    if aborted {
        unwatch(server, client);
        return done(
            Reply::Error(Bytes::from_static(EXECABORT.as_bytes())),
            Vec::new(),
            None,
        );
    }
    let start_mode = session.reply_mode;
    // Every queued command's before-stage comes before any of them runs
    // (a tracking client tracks the keys its queued reads will read).
    for args in &queued {
        if let Ok(cmd) = crate::commands::registry().lookup(args) {
            after_call::before(&Call::new(server, client, cmd, args, session.db));
        }
    }
    session.tx.executing = true;
    let mut replies = Vec::with_capacity(queued.len());
    let mut close = false;
    let mut tickets = Vec::new();
    // Scripts run on the script thread over their own Txn, so a transaction
    // that queues one runs in parts, in order: the commands before it (one
    // atomic unit, checked against WATCH), the script, the commands after
    // it, and so on (see docs/compatibility.md).
    let unwatched = Arc::new(Watcher::default());
    let mut start = 0;
    for (part, end) in script_parts(&queued).into_iter().enumerate() {
        let commands = &queued[start..end];
        start = end;
        let body = Body::Transaction {
            commands,
            watcher: if part == 0 {
                &client.tx.watcher
            } else {
                &unwatched
            },
        };
        let finished = execute_body(server, body, session, client).await;
        tickets.extend(finished.tickets);
        let steps = match finished.outcome {
            Outcome::Transaction(steps) => steps,
            Outcome::WatchFailed => {
                session.tx.executing = false;
                // The abort shows that a watched key changed: it waits for
                // the batches that changed it, like a read of their writes.
                tickets.extend(client.tx.watcher.touching_tickets().await);
                unwatch(server, client);
                return done(Reply::NullArray, tickets, None);
            }
            Outcome::Failed(reply) => {
                session.tx.executing = false;
                unwatch(server, client);
                return done(reply, tickets, None);
            }
            Outcome::Command { result, deferred } => {
                session.tx.executing = false;
                unwatch(server, client);
                let reply = result.unwrap_or_else(|e| e);
                return done(reply, tickets, deferred);
            }
        };
        if part == 0 {
            unwatch(server, client);
        }
        for (mut step, args) in steps.into_iter().zip(commands) {
            let reply = std::mem::replace(&mut step.reply, Reply::Null);
            let (reply, closing) = match step.deferred.take() {
                None => (reply, false),
                Some(Deferred::Script(request)) => {
                    let (reply, more) =
                        crate::scripting::dispatch::dispatch(server, client, session, request)
                            .await;
                    tickets.extend(more);
                    (reply, false)
                }
                Some(deferred) => run_deferred(server, deferred, reply).await,
            };
            close |= closing;
            after_step(server, client, &step, args, &reply);
            if sent_in_exec(&step, &reply) {
                replies.push(reply);
            }
        }
    }
    session.tx.executing = false;
    unwatch(server, client);
    // Redis's resetClient after EXEC: a SKIP inside skips the next command.
    let mode_after = match session.reply_mode {
        ReplyMode::SkipNext => ReplyMode::Skipping,
        ReplyMode::Skipping => ReplyMode::On,
        mode => mode,
    };
    session.tx.exec_pass = Some((mode_after, start_mode == ReplyMode::On));
    done(
        Reply::Array(replies),
        tickets,
        close.then_some(Deferred::Close),
    )
}

/// Where a transaction's parts end: after each command that runs on the
/// script thread (declared `Traits::SCRIPT_THREAD`), and at the end.
fn script_parts(queued: &[Vec<Bytes>]) -> Vec<usize> {
    let mut ends = Vec::new();
    for (i, args) in queued.iter().enumerate() {
        let on_script_thread = crate::commands::registry()
            .lookup(args)
            .is_ok_and(|cmd| cmd.is(Traits::SCRIPT_THREAD));
        if on_script_thread {
            ends.push(i + 1);
        }
    }
    if ends.last() != Some(&queued.len()) {
        ends.push(queued.len());
    }
    ends
}

/// Whether a command's reply is added to EXEC's array, by the CLIENT REPLY
/// mode right after it (CLIENT REPLY itself answers only when turning it ON).
fn sent_in_exec(step: &Step, reply: &Reply) -> bool {
    if step.switches_reply_mode && !matches!(reply, Reply::Error(_)) {
        return step.reply_mode == ReplyMode::On;
    }
    matches!(step.reply_mode, ReplyMode::On | ReplyMode::SkipNext)
}

/// Runs the work a handler deferred and returns the reply for its slot
/// (whole: a transaction's reply is one array), and whether the connection
/// closes after EXEC's reply.
async fn run_deferred(server: &Arc<Server>, deferred: Deferred, reply: Reply) -> (Reply, bool) {
    match deferred {
        Deferred::Blocking(job) => {
            let job_server = server.clone();
            let reply = match tokio::task::spawn_blocking(move || job(&job_server)).await {
                Ok(reply) => reply,
                Err(_) => Reply::Error("ERR background job failed".into()),
            };
            (reply, false)
        }
        Deferred::Stream(job) => (collect_stream(server, job).await, false),
        Deferred::Sleep(pause) => {
            tokio::time::sleep(pause).await;
            (reply, false)
        }
        Deferred::Async(job) => (job.await, false),
        // PSYNC and SYNC cannot be queued (no-multi).
        Deferred::Replica(_) => (reply, false),
        Deferred::Close => (reply, true),
        // MONITOR is refused inside EXEC and SHUTDOWN cannot be queued.
        Deferred::Monitor | Deferred::Shutdown { .. } => (reply, false),
        // (P|S)SUBSCRIBE's confirmations went to the mailbox, which is
        // delivered before EXEC's reply; the slot holds the handler's reply.
        Deferred::Silent => (reply, false),
        // A blocking command inside MULTI does not block: the handler's
        // reply is already its immediate answer (Redis's deny-blocking).
        Deferred::Block(_) => (reply, false),
        // Handled by `exec` itself (it needs the session and the tickets).
        Deferred::Script(_) => (reply, false),
    }
}

/// Builds a streamed reply whole.
async fn collect_stream(server: &Arc<Server>, job: crate::stream_reply::StreamJob) -> Reply {
    let mut parts = crate::stream_reply::start(server, job);
    let mut shape = None;
    let mut items: Vec<Reply> = Vec::new();
    while let Some(part) = parts.recv().await {
        match part {
            Part::Array(n) => shape = Some((0, n)),
            Part::Map(n) => shape = Some((1, n.saturating_mul(2))),
            Part::Set(n) => shape = Some((2, n)),
            Part::Items(mut more) => items.append(&mut more),
            Part::Error(reply) => return reply,
        }
    }
    match shape {
        Some((kind, n)) if n == items.len() => match kind {
            0 => Reply::Array(items),
            2 => Reply::Set(items),
            _ => {
                let mut pairs = Vec::with_capacity(n / 2);
                let mut items = items.into_iter();
                while let (Some(k), Some(v)) = (items.next(), items.next()) {
                    pairs.push((k, v));
                }
                Reply::Map(pairs)
            }
        },
        _ => Reply::Error("ERR background job failed".into()),
    }
}

/// Per queued command, the after-call stage, as Redis's call() runs it
/// for each command EXEC runs.
fn after_step(
    server: &Arc<Server>,
    client: &Arc<ClientInfo>,
    step: &Step,
    args: &[Bytes],
    reply: &Reply,
) {
    let Ok(cmd) = crate::commands::registry().lookup(args) else {
        return;
    };
    if let Reply::Error(text) = reply {
        server.stats.count_error(text);
    }
    let call = Call::new(server, client, cmd, args, step.db);
    after_call::ran(&call);
    after_call::finished(&call, 0, Some(reply));
}

#[cfg(test)]
mod tests {
    use crate::exec::ReplayLog;
    use bytes::Bytes;

    fn command(line: &str) -> Vec<Bytes> {
        line.split(' ')
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect()
    }

    fn lines(commands: Vec<Vec<Bytes>>) -> Vec<String> {
        commands
            .iter()
            .map(|c| {
                c.iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    #[test]
    fn several_writes_replay_as_multi_exec_with_selects() {
        let mut log = ReplayLog::new(0);
        log.add(0, vec![command("SET a 1")]);
        log.add(0, Vec::new());
        log.add(2, vec![command("DEL x"), command("INCR x")]);
        assert_eq!(
            lines(log.finish()),
            ["MULTI", "SET a 1", "SELECT 2", "DEL x", "INCR x", "EXEC"]
        );
    }

    #[test]
    fn a_single_write_replays_alone() {
        let mut log = ReplayLog::new(3);
        log.add(3, Vec::new());
        log.add(3, vec![command("SET a 1")]);
        assert_eq!(lines(log.finish()), ["SET a 1"]);
        assert!(ReplayLog::new(0).finish().is_empty());
    }
}
