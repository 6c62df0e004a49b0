//! Running one command: DESIGN.md principle 3 in code.
//!
//! 1. Lock the command's keys, run it with memory-only reads, queue its
//!    writes, unlock. Nearly every command ends here, on the network thread.
//! 2. If a read needed the disk (`Incomplete`), the command is re-run on the
//!    cold-read pool *without* locks and with blocking reads, purely to pull
//!    its data into the block cache; its writes are thrown away. Then step 1
//!    runs again. Locks are therefore never held while waiting for the disk,
//!    and only this client waits.
//! 3. If the data was evicted again in between (twice), the command runs
//!    once on the pool with its locks held and blocking reads.

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::ReadMode;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::commands::{Command, Ctx, Deferred};
use crate::server::{ClientInfo, Server, Session};

pub struct Executed {
    pub reply: Reply,
    /// Commit sequence to wait for before the reply may leave.
    pub seq: Option<u64>,
    pub deferred: Option<Deferred>,
}

impl Executed {
    fn reply(reply: Reply) -> Self {
        Executed {
            reply,
            seq: None,
            deferred: None,
        }
    }
}

enum Attempt {
    Done(Executed),
    Incomplete,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    /// Locked, committed: a real execution.
    Real(ReadMode),
    /// Unlocked, blocking reads, writes discarded: warms the cache.
    Warmup,
}

fn attempt(
    server: &Arc<Server>,
    cmd: &Command,
    args: &[Bytes],
    session: &mut Session,
    client: &Arc<ClientInfo>,
    run: Run,
) -> Attempt {
    let pairs = cmd.lock_keys(args, session.db);
    let refs: Vec<(u8, &[u8])> = pairs.iter().map(|(db, k)| (*db, k.as_ref())).collect();
    let _guard = match run {
        Run::Real(_) if !refs.is_empty() => Some(server.engine.lock_keys_in(&refs)),
        _ => None,
    };
    let mode = match run {
        Run::Real(mode) => mode,
        Run::Warmup => ReadMode::Blocking,
    };
    let mut ctx = Ctx {
        server,
        // Only a run holding its keys' locks may fill the hot cache.
        txn: if _guard.is_some() {
            server.engine.txn_locked(mode)
        } else {
            server.engine.txn(mode)
        },
        session,
        client,
        deferred: None,
    };
    let result = (cmd.handler)(&mut ctx, args);
    match result {
        Err(e) if e.is_incomplete() => Attempt::Incomplete,
        Err(e) => Attempt::Done(Executed::reply(e.into_reply())),
        Ok(_) if run == Run::Warmup => Attempt::Done(Executed::reply(Reply::Null)),
        Ok(reply) => {
            if cmd.readonly {
                // Redis counts key lookups of read-only commands.
                let (hits, misses) = ctx.txn.key_lookups();
                server
                    .stats
                    .keyspace_hits
                    .fetch_add(hits, Ordering::Relaxed);
                server
                    .stats
                    .keyspace_misses
                    .fetch_add(misses, Ordering::Relaxed);
            }
            let deferred = ctx.deferred.take();
            match ctx.txn.commit() {
                Ok(seq) => Attempt::Done(Executed {
                    reply,
                    seq,
                    deferred,
                }),
                Err(e) => Attempt::Done(Executed::reply(
                    crate::errors::CmdError::Storage(e).into_reply(),
                )),
            }
        }
    }
}

/// Runs `args` (already resolved to `cmd`) for a client.
pub async fn execute(
    server: &Arc<Server>,
    cmd: &Command,
    args: &[Bytes],
    session: &mut Session,
    client: &Arc<ClientInfo>,
) -> Executed {
    // Round 0 runs on this thread; before rounds 1 and 2 the command warms
    // the cache on the cold-read pool.
    for round in 0..3 {
        if round > 0 {
            if round == 1 {
                server.stats.cold_commands.fetch_add(1, Ordering::Relaxed);
            }
            if let Err(reply) = on_pool(server, args, session, client, Run::Warmup).await {
                return Executed::reply(reply);
            }
        }
        let real = Run::Real(ReadMode::MemoryOnly);
        if let Attempt::Done(done) = attempt(server, cmd, args, session, client, real) {
            return done;
        }
    }
    match on_pool(server, args, session, client, Run::Real(ReadMode::Blocking)).await {
        Ok(Some(done)) => done,
        Ok(None) => Executed::reply(Reply::Error("ERR command could not read its data".into())),
        Err(reply) => Executed::reply(reply),
    }
}

async fn on_pool(
    server: &Arc<Server>,
    args: &[Bytes],
    session: &Session,
    client: &Arc<ClientInfo>,
    run: Run,
) -> Result<Option<Executed>, Reply> {
    let job_server = server.clone();
    let job_args = args.to_vec();
    let mut job_session = session.clone();
    let job_client = client.clone();
    let submitted = server.cold_pool.submit(move || {
        let cmd = job_server.registry.lookup(&job_args).ok()?;
        match attempt(
            &job_server,
            cmd,
            &job_args,
            &mut job_session,
            &job_client,
            run,
        ) {
            Attempt::Done(done) => Some(done),
            Attempt::Incomplete => None,
        }
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
