//! Connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET and
//! CLIENT.

use bytes::Bytes;
use firn_resp::Reply;

use super::{def, Ctx, Def, Deferred};
use crate::errors::{CmdError, CmdResult, DB_OUT_OF_RANGE, INVALID_DB};

pub const COMMANDS: &[Def] = &[
    def("ping", ping),
    def("echo", echo),
    def("select", select),
    def("quit", quit),
];

fn ping(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    Ok(match args.get(1) {
        Some(msg) if args.len() == 2 => Reply::Bulk(msg.clone()),
        Some(_) => return Err(crate::errors::wrong_arity("ping")),
        None => Reply::Simple(Bytes::from_static(b"PONG")),
    })
}

fn echo(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    Ok(Reply::Bulk(args[1].clone()))
}

fn select(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let index = crate::args::parse_i64(&args[1]).ok_or(CmdError::Static(INVALID_DB))?;
    if index < 0 || index as usize >= ctx.server.engine.databases() {
        return Err(CmdError::Static(DB_OUT_OF_RANGE));
    }
    ctx.session.db = index as u8;
    Ok(Reply::ok())
}

fn quit(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.deferred = Some(Deferred::Close);
    Ok(Reply::ok())
}
