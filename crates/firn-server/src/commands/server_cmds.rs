//! Server commands: INFO, DBSIZE, FLUSHDB/FLUSHALL, SWAPDB, TIME, LASTSAVE,
//! MONITOR, CONFIG, COMMAND, SHUTDOWN, SAVE/BGSAVE, SLOWLOG.

use bytes::Bytes;
use firn_resp::Reply;

use super::{def, Ctx, Def};
use crate::errors::CmdResult;

pub const COMMANDS: &[Def] = &[def("dbsize", dbsize)];

fn dbsize(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::Integer(
        ctx.server.engine.key_count(ctx.db()).0 as i64,
    ))
}
