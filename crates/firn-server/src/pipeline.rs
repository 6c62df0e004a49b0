//! The request pipeline, read top to bottom: look the command up, admit
//! it (auth, busy script, MISCONF, subscribed mode, CLIENT PAUSE, MULTI
//! queueing), run it (execute or EXEC), finish its deferred work, then
//! the after-call stage and the reply (CLIENT REPLY).

/// What a command sends back: a reply, or a reply streamed in parts.
use bytes::Bytes;
use firn_resp::{Protocol, Reply};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc;

use crate::after_call::{self, Call};
use crate::blocking::state::BlockOn;
use crate::command_table::Flags;
use crate::commands::{Command, Deferred, Traits};
use crate::errors::{CmdError, NOAUTH};
use crate::exec::{execute, Executed};
use crate::multi::transaction;
use crate::server::{ClientInfo, ReplyMode, Server, Session};
use crate::stream_reply::Part;
use firn_storage::Ticket;

pub(crate) enum Outgoing {
    Reply(Reply),
    Stream(mpsc::Receiver<Part>),
    /// A blocking command found nothing: wait for its keys first.
    Block(BlockedCall),
}

/// A blocking command that found nothing to serve (see [`Connection::block`]).
pub(crate) struct BlockedCall {
    pub(crate) on: BlockOn,
    /// When it started: the timeout counts from here.
    pub(crate) started: Instant,
    /// Its wait, registered under its keys' locks when it found nothing.
    pub(crate) registration: Option<crate::blocking::state::Registration>,
}

pub(crate) enum Flow {
    Continue,
    /// Send what is queued, then close (QUIT, protocol error).
    Close,
    /// Close at once, dropping what is queued (a limit was passed).
    Drop,
    /// Send what is queued, then become a MONITOR.
    Monitor,
    /// Send what is queued, then become a replica's feed.
    Replica(crate::replication::state::Psync),
}

/// Executes one request; returns the reply to send (per CLIENT REPLY
/// mode), what the connection does next, and the batches to wait for.
pub(crate) async fn run_one(
    server: &Arc<Server>,
    client: &Arc<ClientInfo>,
    session: &mut Session,
    args: &[Bytes],
) -> (Option<Outgoing>, Flow, Vec<Ticket>) {
    let mut started = Instant::now();
    let mut ran = None;
    let (executed, name) = match crate::commands::registry().lookup(args) {
        Err(e) => {
            let reply = e.into_reply();
            let arity_of = rejected_command(args, &reply);
            if let Some(name) = arity_of {
                server.stats.commands.record_rejected(name);
            }
            let reply = transaction::rejected(server, session, client, arity_of, reply);
            (Executed::reply(reply), None)
        }
        Ok(cmd) => match check_allowed(server, session, cmd, client, args) {
            Err(e) => {
                server.stats.commands.record_rejected(cmd.name());
                let reply = transaction::refused(server, session, client, cmd, e.into_reply());
                (Executed::reply(reply), Some(cmd.name()))
            }
            Ok(()) => {
                server
                    .pause
                    .hold(|| transaction::pauses_as_write(server, session, cmd, args))
                    .await;
                if let Some(reply) = transaction::queue(server, session, client, cmd, args) {
                    if let Reply::Error(text) = &reply {
                        server.stats.commands.record_rejected(cmd.name());
                        server.stats.count_error(text);
                    }
                    let sent = reply_mode_pass(session, reply).map(Outgoing::Reply);
                    return (sent, Flow::Continue, Vec::new());
                }
                started = Instant::now();
                ran = Some(cmd);
                let executed = if transaction::is_exec(session, cmd) {
                    transaction::exec(server, session, client).await
                } else {
                    after_call::before(&Call::new(server, client, cmd, args, session.db));
                    execute(server, cmd, args, session, client).await
                };
                after_call::ran(&Call::new(server, client, cmd, args, session.db));
                (executed, Some(cmd.name()))
            }
        },
    };
    if let Some(name) = name {
        *client.last_cmd.lock() = name;
    }
    client.db.store(session.db, Ordering::Relaxed);
    // Ran (or was refused): the read it came in no longer holds back the
    // connections read after it, whatever the command waits for next. A
    // script ends it once its place is taken (scripting/run.rs).
    if !matches!(
        &executed.deferred,
        Some(Deferred::Script(
            crate::scripting::request::Request::Eval(_)
                | crate::scripting::request::Request::Fcall(_)
        ))
    ) {
        client.end_arrival();
    }

    let Executed {
        reply,
        mut tickets,
        deferred,
        registration,
    } = executed;
    let mut flow = Flow::Continue;
    let mut stream = None;
    let reply = match deferred {
        None | Some(Deferred::Monitor) => Some(reply),
        Some(Deferred::Silent) => {
            // CLIENT REPLY SKIP still counts this command as the skipped one.
            let _ = reply_mode_pass(session, Reply::Null);
            None
        }
        Some(Deferred::Close) => {
            flow = Flow::Close;
            Some(reply)
        }
        Some(Deferred::Shutdown { save }) => {
            if save {
                let engine = server.engine.clone();
                let dir = server.config().dir.join("checkpoint");
                let _ = tokio::task::spawn_blocking(move || engine.checkpoint(&dir)).await;
            }
            server.request_shutdown();
            return (None, Flow::Close, tickets);
        }
        Some(Deferred::Stream(job)) => {
            stream = Some(crate::stream_reply::start(server, job));
            None
        }
        // Counted and logged once it is served (Connection::block).
        Some(Deferred::Block(on)) if ran.is_some() => {
            let call = BlockedCall {
                on,
                started,
                registration,
            };
            return (Some(Outgoing::Block(call)), flow, tickets);
        }
        Some(Deferred::Block(_)) => Some(reply),
        Some(Deferred::Script(request)) => {
            let (reply, more) =
                crate::scripting::dispatch::dispatch(server, client, session, request).await;
            tickets.extend(more);
            Some(reply)
        }
        Some(Deferred::Sleep(pause)) => {
            tokio::time::sleep(pause).await;
            Some(reply)
        }
        Some(Deferred::Async(job)) => Some(job.await),
        Some(Deferred::Replica(req)) => {
            flow = Flow::Replica(req);
            None
        }
        Some(Deferred::Blocking(job)) => {
            let job_server = server.clone();
            match tokio::task::spawn_blocking(move || job(&job_server)).await {
                Ok(reply) => Some(reply),
                Err(_) => Some(Reply::Error("ERR background job failed".into())),
            }
        }
    };
    // Only commands that ran are counted as calls and logged, as in Redis.
    if let Some(cmd) = ran {
        let micros = started.elapsed().as_micros() as u64;
        let call = Call::new(server, client, cmd, args, session.db);
        after_call::finished(&call, micros, reply.as_ref());
    }
    let mut sent = None;
    if let Some(parts) = stream {
        // A streamed reply obeys CLIENT REPLY like any other; one not sent
        // stops its producer (the receiver is dropped).
        sent = reply_mode_pass(session, Reply::Null).map(|_| Outgoing::Stream(parts));
    }
    if let Some(reply) = reply {
        if let Reply::Error(text) = &reply {
            server.stats.count_error(text);
        }
        sent = match transaction::take_exec_pass(session) {
            Some((mode_after, send)) => {
                session.reply_mode = mode_after;
                send.then_some(Outgoing::Reply(reply))
            }
            None => reply_mode_pass(session, reply).map(Outgoing::Reply),
        };
    }
    // WAIT counts replicas from after this client's last write (only
    // replicas can acknowledge it: with none, WAIT has nothing to wait for).
    if server.replication.active.load(Ordering::Relaxed) {
        if let Some(last) = tickets.iter().max_by_key(|t| t.seq()) {
            *client.last_write.lock() = Some(last.clone());
        }
    }
    if client.close_after_reply.swap(false, Ordering::AcqRel) {
        flow = Flow::Close;
    }
    client.resp.store(
        if session.protocol == Protocol::Resp3 {
            3
        } else {
            2
        },
        Ordering::Relaxed,
    );
    (sent, flow, tickets)
}

/// CLIENT REPLY: whether this reply is sent, advancing SKIP's state.
pub(crate) fn reply_mode_pass(session: &mut Session, reply: Reply) -> Option<Reply> {
    match session.reply_mode {
        ReplyMode::On => Some(reply),
        ReplyMode::Off => None,
        ReplyMode::SkipNext => {
            session.reply_mode = ReplyMode::Skipping;
            None
        }
        ReplyMode::Skipping => {
            session.reply_mode = ReplyMode::On;
            None
        }
    }
}

fn rejected_command(args: &[Bytes], reply: &Reply) -> Option<&'static str> {
    let name = crate::commands::registry().name_of(args)?;
    let arity_error = crate::errors::wrong_arity(name).into_reply();
    (*reply == arity_error).then_some(name)
}

fn check_allowed(
    server: &Server,
    session: &mut Session,
    cmd: &Command,
    client: &ClientInfo,
    args: &[Bytes],
) -> Result<(), CmdError> {
    // What CLIENT LIST (and an ACL LOG entry) shows as the client's
    // command from now on, as Redis sets `lastcmd` when it looks it up.
    *client.last_cmd.lock() = cmd.name();
    // Redis checks its protected commands first, right after the arity.
    if let Some(guard) = cmd.guard {
        guard(server, client)?;
    }
    // A user whose rules changed is taken again before anything is checked.
    crate::acl::check::refresh(server, session);
    // Redis's authRequired: an unauthenticated session runs as `default`,
    // which lets it in while it is on and needs no password.
    let open = session.user.enabled && session.user.nopass;
    if !session.authenticated && !open && !cmd.has(Flags::NO_AUTH) {
        return Err(CmdError::Static(NOAUTH));
    }
    // Redis refuses a no-multi command inside MULTI before the ACL check
    // (multi/transaction.rs does that here).
    if !(session.tx.in_multi() && cmd.has(Flags::NO_MULTI)) {
        crate::acl::check::admit(server, session, client, cmd, args).map_err(CmdError::Owned)?;
    }
    // One atomic load unless a script has been running for too long.
    let busy = server.scripting.shared.busy.load(Ordering::Relaxed);
    if busy != 0 {
        if let Some(error) = crate::scripting::shared::busy_error(busy, cmd.spec.flags) {
            return Err(CmdError::Static(error));
        }
    }
    // A script's declared flags decide (Redis's getCommandFlags): a script
    // without `no-writes` is refused where a write would be.
    if cmd.flags_for(server, args).contains(Flags::WRITE) {
        if let Some(why) = server.engine.write_error() {
            return Err(CmdError::Storage(firn_storage::StorageError::WriteFailed(
                why,
            )));
        }
        crate::replication::admit_write(server, client)?;
    }
    // RESP2 subscribed mode (RESP3 clients may run anything).
    if session.protocol == Protocol::Resp2
        && client.pubsub.subscribed()
        && !cmd.is(Traits::SUBSCRIBED_OK)
    {
        return Err(CmdError::Owned(
            crate::pubsub::state::subscribed_mode_error(cmd.name()),
        ));
    }
    Ok(())
}
