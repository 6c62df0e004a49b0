//! MULTI, EXEC, DISCARD, WATCH, UNWATCH. The transaction state and EXEC's
//! execution live in `multi/transaction.rs`; queueing happens in the connection
//! before a command would run.

use bytes::Bytes;
use firn_resp::Reply;

use crate::commands::{def, Ctx, Def, Traits};
use crate::effects::SideEffect;
use crate::errors::{CmdError, CmdResult};
use crate::multi::transaction;

pub static COMMANDS: &[Def] = &[
    def("multi", multi).with(Traits::UNQUEUED),
    def("exec", exec).with(Traits::UNQUEUED),
    def("discard", discard).with(Traits::UNQUEUED),
    def("watch", watch).with(Traits::UNQUEUED),
    def("unwatch", unwatch),
];

fn multi(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    transaction::begin(ctx.session, ctx.client)?;
    Ok(Reply::ok())
}

/// Only reached outside MULTI: inside it the connection runs the
/// transaction (`transaction::exec`).
fn exec(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Err(CmdError::Static("ERR EXEC without MULTI"))
}

fn discard(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    if !ctx.session.tx.in_multi() {
        return Err(CmdError::Static("ERR DISCARD without MULTI"));
    }
    transaction::discard(ctx.server, ctx.session, ctx.client);
    Ok(Reply::ok())
}

/// Runs under its keys' locks: what it records of each key (present,
/// already expired, deadline) is what the next write will change.
fn watch(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if ctx.session.tx.in_multi() {
        return Err(CmdError::Static("ERR WATCH inside MULTI is not allowed"));
    }
    let db = ctx.db();
    let mut probes = Vec::with_capacity(args.len() - 1);
    for key in &args[1..] {
        probes.push(ctx.txn.watch_probe(db, key)?);
    }
    // Registered by the run that commits, under the keys' locks (effects.rs):
    // a cold pool run that is then discarded must not leave what it saw (a
    // key created meanwhile, registered as missing, was never dirtied by
    // the FLUSHDB that later deleted it, and its EXEC ran).
    for (key, state) in args[1..].iter().zip(probes) {
        ctx.effects.push(SideEffect::Watch {
            watcher: ctx.client.tx.watcher.clone(),
            db,
            key: key.clone(),
            state,
        });
    }
    Ok(Reply::ok())
}

fn unwatch(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    transaction::unwatch(ctx.server, ctx.client);
    Ok(Reply::ok())
}
