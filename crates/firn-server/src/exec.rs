//! Running one command: DESIGN principle 3 in code.
//!
//! 1. Await the command's key locks (never parking the thread), run it with
//!    memory-only reads, queue its batch, unlock. Nearly every command ends
//!    here, on the network thread.
//! 2. If a read needed the disk (`Incomplete`), the command runs once on
//!    the cold-read pool *without* locks and with blocking reads. Its
//!    result (reply, writes, session) is kept, not thrown away: back on the
//!    network thread the command awaits its locks and compares the write
//!    stamp of its keys' stripes with the one taken before the pool run. If
//!    no batch touched them in between, everything it read is still what it
//!    would read now, so its writes are committed and its reply sent, as if
//!    it had run under the locks. Otherwise round 1 runs again (the data is
//!    in the cache now).
//!
//! No lock is ever held while waiting for the disk or for durability, and
//! a cold command costs one memory attempt plus one pool run.

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::{ReadMode, Ticket, TxnParts};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::commands::{Command, Ctx, Deferred};
use crate::errors::CmdResult;
use crate::server::{ClientInfo, Server, Session};

/// Pool runs a command may need before it gives up: each one fails only if
/// another client wrote one of its keys meanwhile and the data fell out of
/// memory again, so this bound is never reached in practice.
const MAX_COLD_ROUNDS: usize = 16;

pub struct Executed {
    pub reply: Reply,
    /// Batches that must be durable before the reply may leave.
    pub tickets: Vec<Ticket>,
    pub deferred: Option<Deferred>,
}

impl Executed {
    fn reply(reply: Reply) -> Self {
        Executed {
            reply,
            tickets: Vec::new(),
            deferred: None,
        }
    }
}

enum Attempt {
    Done(Executed),
    Incomplete,
}

/// What a lock-free pool run produced, to be committed under the locks.
struct PoolRun {
    result: Result<Reply, Reply>,
    parts: TxnParts,
    session: Session,
    deferred: Option<Deferred>,
}

/// Counts key lookups of read-only commands (INFO keyspace_hits/misses).
fn count_lookups(server: &Server, cmd: &Command, lookups: (u64, u64)) {
    if cmd.readonly {
        server
            .stats
            .keyspace_hits
            .fetch_add(lookups.0, Ordering::Relaxed);
        server
            .stats
            .keyspace_misses
            .fetch_add(lookups.1, Ordering::Relaxed);
    }
}

/// The replay form of a write command that did not set its own: the
/// command as received (deterministic commands replay verbatim).
fn default_replay(ctx: &mut Ctx<'_>, cmd: &Command, args: &[Bytes]) {
    if cmd.write && ctx.txn.has_writes() && !ctx.txn.has_replay() {
        ctx.txn.set_replay(vec![args.to_vec()]);
    }
}

/// Awaits the locks a command needs: all of them, its keys', or none.
async fn acquire<'a>(
    server: &'a Server,
    cmd: &Command,
    keys: &[(u8, &[u8])],
) -> Option<firn_storage::KeyGuard<'a>> {
    if cmd.locks_all() {
        Some(server.engine.lock_all().await)
    } else if keys.is_empty() {
        None
    } else {
        Some(server.engine.lock_keys(keys).await)
    }
}

/// The stripes whose write stamp guards a pool run of `cmd`.
fn guarded_stripes(server: &Server, cmd: &Command, keys: &[(u8, &[u8])]) -> Vec<usize> {
    if cmd.locks_all() {
        (0..firn_storage::locks::STRIPES).collect()
    } else {
        server.engine.stripes_of(keys)
    }
}

/// Round 1: under the locks, memory-only reads.
async fn run_locked(
    server: &Arc<Server>,
    cmd: &Command,
    args: &[Bytes],
    session: &mut Session,
    client: &Arc<ClientInfo>,
    keys: &[(u8, &[u8])],
) -> Attempt {
    let engine = &server.engine;
    let guard = acquire(server, cmd, keys).await;
    let mut ctx = Ctx {
        server,
        // Only a run holding its keys' locks may fill the hot cache.
        txn: if guard.is_some() {
            engine.txn_locked(ReadMode::MemoryOnly)
        } else {
            engine.txn(ReadMode::MemoryOnly)
        },
        session,
        client,
        deferred: None,
    };
    ctx.txn.set_db(ctx.session.db);
    ctx.txn.set_read_lookups(cmd.readonly);
    ctx.txn.set_client(client.id);
    let result = (cmd.handler)(&mut ctx, args);
    match result {
        Err(e) if e.is_incomplete() => Attempt::Incomplete,
        Err(e) => Attempt::Done(Executed::reply(e.into_reply())),
        Ok(reply) => {
            count_lookups(server, cmd, ctx.txn.key_lookups());
            default_replay(&mut ctx, cmd, args);
            let deferred = ctx.deferred.take();
            Attempt::Done(commit(ctx.txn, reply, deferred))
        }
    }
}

fn commit(txn: firn_storage::Txn<'_>, reply: Reply, deferred: Option<Deferred>) -> Executed {
    match txn.commit() {
        Ok(tickets) => Executed {
            reply,
            tickets,
            deferred,
        },
        Err(e) => Executed::reply(crate::errors::CmdError::Storage(e).into_reply()),
    }
}

/// Round 2, on a pool thread: no locks, blocking reads.
fn run_unlocked(
    server: &Arc<Server>,
    args: &[Bytes],
    mut session: Session,
    client: &Arc<ClientInfo>,
) -> Option<PoolRun> {
    let cmd = server.registry.lookup(args).ok()?;
    let mut ctx = Ctx {
        server,
        txn: server.engine.txn(ReadMode::Blocking),
        session: &mut session,
        client,
        deferred: None,
    };
    ctx.txn.set_db(ctx.session.db);
    ctx.txn.set_read_lookups(cmd.readonly);
    ctx.txn.set_client(client.id);
    let result: CmdResult = (cmd.handler)(&mut ctx, args);
    let result = match result {
        Ok(reply) => {
            count_lookups(server, cmd, ctx.txn.key_lookups());
            default_replay(&mut ctx, cmd, args);
            Ok(reply)
        }
        Err(e) => Err(e.into_reply()),
    };
    let deferred = ctx.deferred.take();
    let parts = ctx.txn.into_parts();
    Some(PoolRun {
        result,
        parts,
        session,
        deferred,
    })
}

/// Runs `args` (already resolved to `cmd`) for a client.
pub async fn execute(
    server: &Arc<Server>,
    cmd: &Command,
    args: &[Bytes],
    session: &mut Session,
    client: &Arc<ClientInfo>,
) -> Executed {
    let owned_keys = cmd.lock_keys(args, session.db);
    let keys: Vec<(u8, &[u8])> = owned_keys.iter().map(|(db, k)| (*db, k.as_ref())).collect();
    for round in 0..MAX_COLD_ROUNDS {
        if let Attempt::Done(done) = run_locked(server, cmd, args, session, client, &keys).await {
            return done;
        }
        if round == 0 {
            server.stats.cold_commands.fetch_add(1, Ordering::Relaxed);
        }
        let stamp = server
            .engine
            .write_stamp(&guarded_stripes(server, cmd, &keys));
        let run = match on_pool(server, args, session, client).await {
            Ok(Some(run)) => run,
            Ok(None) => continue,
            Err(reply) => return Executed::reply(reply),
        };
        // A keyless command (KEYS, SCAN, RANDOMKEY...) locks nothing: its
        // pool result is as good as any. The expired keys it met are
        // deleted under their own locks, as a warm run would have.
        if keys.is_empty() && !cmd.locks_all() {
            *session = run.session;
            let tickets = server.engine.delete_expired(run.parts.expired_keys()).await;
            return match run.result {
                Ok(reply) => Executed {
                    reply,
                    tickets,
                    deferred: run.deferred,
                },
                Err(reply) => Executed::reply(reply),
            };
        }
        let _guard = acquire(server, cmd, &keys).await;
        if server
            .engine
            .write_stamp(&guarded_stripes(server, cmd, &keys))
            != stamp
        {
            // Someone wrote one of its keys meanwhile: run again.
            continue;
        }
        *session = run.session;
        return match run.result {
            Ok(reply) => commit(server.engine.txn_from_parts(run.parts), reply, run.deferred),
            Err(reply) => Executed::reply(reply),
        };
    }
    Executed::reply(Reply::Error(
        "ERR command could not read its data: its keys kept changing while it waited for the disk"
            .into(),
    ))
}

async fn on_pool(
    server: &Arc<Server>,
    args: &[Bytes],
    session: &Session,
    client: &Arc<ClientInfo>,
) -> Result<Option<PoolRun>, Reply> {
    let job_server = server.clone();
    let job_args = args.to_vec();
    let job_session = session.clone();
    let job_client = client.clone();
    let submitted = server
        .cold_pool
        .submit(move || run_unlocked(&job_server, &job_args, job_session, &job_client));
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
