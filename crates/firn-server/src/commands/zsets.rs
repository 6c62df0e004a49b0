//! zsets: filled in by the ZSet work of the collections issue.

use bytes::Bytes;
use firn_storage::Collection;

use super::{Ctx, Def};
use crate::errors::{CmdError, CmdResult};
use crate::rdb::RdbValue;

pub const COMMANDS: &[Def] = &[];

pub fn dump_value(_ctx: &mut Ctx<'_>, _key: &[u8], _coll: &Collection) -> CmdResult<RdbValue> {
    Err(CmdError::Static("ERR Firn cannot dump this type yet"))
}

pub fn restore_value(
    _ctx: &mut Ctx<'_>,
    _key: &[u8],
    _members: Vec<(Vec<u8>, f64)>,
    _expire_at_ms: u64,
) -> CmdResult<()> {
    let _ = Bytes::new();
    Err(CmdError::Static("ERR Firn cannot restore this type yet"))
}
