//! Generic key commands: DEL, EXISTS, TYPE, expiry, RENAME/COPY/MOVE, SCAN,
//! OBJECT, DUMP/RESTORE.

use bytes::Bytes;
use firn_resp::Reply;

use super::{def, Ctx, Def};
use crate::errors::CmdResult;

pub const COMMANDS: &[Def] = &[def("del", del), def("exists", exists)];

fn del(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let mut n = 0;
    for key in &args[1..] {
        if ctx.txn.delete_key(db, key)? {
            n += 1;
        }
    }
    Ok(Reply::Integer(n))
}

fn exists(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let mut n = 0;
    for key in &args[1..] {
        if ctx.txn.exists(db, key)? {
            n += 1;
        }
    }
    Ok(Reply::Integer(n))
}
