//! Work too long for a network thread: a command that would visit many
//! members re-runs on the cold-read pool (`off_thread_if`), a long
//! read-only job runs on a blocking thread (`run_off_network_thread`).

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::{ReadMode, Txn};

use super::{Ctx, Deferred};
use crate::errors::{CmdError, CmdResult};

/// Members a command may visit on a network thread. A command that would
/// visit more (LRANGE 0 -1 of a long list, SMEMBERS, a big ZUNIONSTORE)
/// calls [`off_thread_if`] first and re-runs on the cold-read pool, whose
/// result is committed only if no other write touched its keys meanwhile
/// (the same path as a cold read, see `exec.rs`).
pub const INLINE_MEMBERS: u64 = 1000;

/// Sends the command to the cold-read pool when it would visit more than
/// [`INLINE_MEMBERS`] members; on the pool (blocking mode) it goes on.
pub fn off_thread_if(ctx: &Ctx<'_>, members: u64) -> CmdResult<()> {
    if members > INLINE_MEMBERS && ctx.txn.mode() == ReadMode::MemoryOnly {
        return Err(CmdError::Storage(firn_storage::StorageError::Incomplete));
    }
    Ok(())
}

/// Reads of more than this many bytes of a value (GETRANGE, BITCOUNT) run
/// on a blocking thread, not on a network thread.
pub const BIG_READ_BYTES: u64 = 1 << 20;

/// Lock-free attempts of a long read-only job before it reads under its
/// keys' locks (a read always ends; see exec.rs).
const LONG_READ_ATTEMPTS: usize = 2;

/// `reply` once the other clients' pending writes `txn` read are durable
/// (the job runs on its own thread): a reply never shows a write that may
/// still be rolled back.
fn shown_when_durable(txn: &Txn<'_>, reply: Reply) -> Reply {
    for ticket in txn.pending_reads() {
        if let Err(e) = ticket.wait_blocking() {
            return CmdError::Storage(e).into_reply();
        }
    }
    reply
}

/// Runs the read-only `read` on a blocking thread with blocking reads and
/// no locks; its reply replaces the handler's. For commands that would
/// otherwise hold a network thread for a long time (a range of a 512 MB
/// value, a big LCS table). Atomicity comes from the keys' write stamp
/// (see exec.rs): a read during which no batch touched the keys saw one
/// consistent state; otherwise it runs again.
pub fn run_off_network_thread(
    ctx: &mut Ctx<'_>,
    keys: Vec<Bytes>,
    read: impl Fn(&mut Txn<'_>, u8) -> CmdResult + Send + 'static,
) -> CmdResult {
    let db = ctx.db();
    if ctx.in_unit {
        // Inside EXEC or a script: read now, from the unit's transaction
        // (a job after it would see writes queued after this command).
        return read(&mut ctx.txn, db);
    }
    ctx.deferred = Some(Deferred::Blocking(Box::new(move |server| {
        let locked: Vec<(u8, &[u8])> = keys.iter().map(|k| (db, k.as_ref())).collect();
        for _ in 0..LONG_READ_ATTEMPTS {
            let stripes = server.engine.stripes_of(&locked);
            let stamp = server.engine.write_stamp(&stripes);
            let mut txn = server.engine.txn(ReadMode::Blocking);
            let reply = read(&mut txn, db).unwrap_or_else(CmdError::into_reply);
            if server.engine.write_stamp(&stripes) == stamp {
                return shown_when_durable(&txn, reply);
            }
        }
        // Still changing: read under the keys' locks, which only their
        // writers wait for.
        let guard = server.engine.lock_keys_growing(&locked);
        let mut txn = server.engine.txn(ReadMode::Blocking);
        let reply = read(&mut txn, db).unwrap_or_else(CmdError::into_reply);
        drop(guard);
        shown_when_durable(&txn, reply)
    })));
    Ok(Reply::Null)
}
