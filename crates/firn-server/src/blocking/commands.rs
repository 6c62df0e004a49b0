//! The blocking pops: BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP, BZPOPMIN,
//! BZPOPMAX and BZMPOP, with Redis 7.0's replies and errors (t_list.c,
//! t_zset.c, timeout.c).
//!
//! A handler parses its arguments in Redis's order, then pops with the
//! non-blocking commands' code (`lists.rs`, `zsets.rs`) when there is
//! something to pop. Otherwise it replies what Redis replies when the client
//! may not block and asks, through `Deferred::Block`, to wait for its keys
//! (a timeout then answers a null array, as in Redis): the connection
//! waits without a thread or a lock (`blocking/state.rs`) and runs the command
//! again when a key may have changed. Where a client may not block (inside
//! MULTI/EXEC or a script) that reply is the answer, as in Redis.
//!
//! A served pop replays as the non-blocking command it amounted to (LPOP,
//! LMOVE, ZPOPMIN...), as Redis propagates it.

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::ValueType;
use std::borrow::Cow;
use std::sync::atomic::Ordering;

use crate::blocking::state::{BlockOn, Wake};
use crate::commands::lists::{self, End};
use crate::commands::zsets;
use crate::commands::{def, Ctx, Def, Deferred, Traits};
use crate::errors::{CmdError, CmdResult};

/// The pops only take (ADDS_NOTHING: a served waiter's run wakes no one
/// but the next in line, which its leaving does); BRPOPLPUSH and BLMOVE
/// push onto their destination.
pub const COMMANDS: &[Def] = &[
    def("blpop", blpop).with(Traits::ADDS_NOTHING),
    def("brpop", brpop).with(Traits::ADDS_NOTHING),
    def("brpoplpush", brpoplpush),
    def("blmove", blmove),
    def("blmpop", blmpop).with(Traits::ADDS_NOTHING),
    def("bzpopmin", bzpopmin).with(Traits::ADDS_NOTHING),
    def("bzpopmax", bzpopmax).with(Traits::ADDS_NOTHING),
    def("bzmpop", bzmpop).with(Traits::ADDS_NOTHING),
];

const TIMEOUT_NOT_FLOAT: &str = "ERR timeout is not a float or out of range";
const TIMEOUT_NEGATIVE: &str = "ERR timeout is negative";

extern "C" {
    fn firn_timeout_ms(text: *const u8, len: usize, out: *mut i64) -> i32;
}

/// A timeout in seconds (fractions allowed, 0 = forever) as milliseconds,
/// computed as Redis 7.0.15 computes it: a C long double times 1000,
/// rounded up, cast to an integer, so "0.0001" is 1 ms, "-0.0001" rounds
/// up to 0 (forever) and "inf" is "negative".
pub(crate) fn timeout_arg(arg: &[u8]) -> CmdResult<u64> {
    let mut ms: i64 = 0;
    // SAFETY: the shim reads exactly `arg.len()` bytes and writes one i64
    // through `out`; it keeps no pointer.
    let parsed = unsafe { firn_timeout_ms(arg.as_ptr(), arg.len(), &mut ms) };
    if parsed == 0 {
        return Err(CmdError::Static(TIMEOUT_NOT_FLOAT));
    }
    u64::try_from(ms).map_err(|_| CmdError::Static(TIMEOUT_NEGATIVE))
}

/// Nothing to pop: wait for `keys`; `reply` is the answer where the client
/// may not block (MULTI/EXEC, scripts).
fn block(ctx: &mut Ctx<'_>, keys: &[Bytes], timeout_ms: u64, reply: Reply) -> CmdResult {
    ctx.deferred = Some(Deferred::Block(BlockOn {
        keys: keys.to_vec(),
        timeout_ms,
        rerun: None,
        wake: Wake::First,
    }));
    Ok(reply)
}

/// The keys a run may pop from. The first run looks at all of them, and
/// one of another type is WRONGTYPE, as in Redis. A run again after a
/// wake-up (its client is blocked) passes such keys over: Redis serves a
/// blocked client only from a key of the type it waits for, and keeps it
/// waiting when one of its keys becomes, say, a string.
fn servable<'k>(
    ctx: &mut Ctx<'_>,
    keys: &'k [Bytes],
    wanted: ValueType,
) -> CmdResult<Cow<'k, [Bytes]>> {
    if !ctx.client.blocked.load(Ordering::Acquire) {
        return Ok(Cow::Borrowed(keys));
    }
    let db = ctx.db();
    let mut kept = Vec::with_capacity(keys.len());
    for key in keys {
        if ctx
            .txn
            .meta(db, key)?
            .is_none_or(|meta| meta.value_type == wanted)
        {
            kept.push(key.clone());
        }
    }
    Ok(Cow::Owned(kept))
}

/// Whether this run serves a client that had blocked: Redis 7.0 then counts
/// no change for a B[LR]POP, BLMOVE or BRPOPLPUSH (serveClientBlockedOnList
/// leaves `server.dirty` alone, unlike the same pop served at once), while
/// BLMPOP and the sorted-set pops count their elements as usual.
fn woken(ctx: &Ctx<'_>) -> bool {
    ctx.client.blocked.load(Ordering::Acquire)
}

fn blpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop_first_list(ctx, args, End::Left)
}

fn brpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop_first_list(ctx, args, End::Right)
}

/// B[LR]POP key... timeout: `[key, element]` from the first non-empty
/// list; a key of another type is an error when it is reached.
fn pop_first_list(ctx: &mut Ctx<'_>, args: &[Bytes], end: End) -> CmdResult {
    let last = args.len() - 1;
    let timeout_ms = timeout_arg(&args[last])?;
    let keys = &args[1..last];
    for key in servable(ctx, keys, ValueType::List)?.iter() {
        let popped = if woken(ctx) {
            ctx.uncounted(|ctx| lists::pop_one(ctx, key, end))?
        } else {
            lists::pop_one(ctx, key, end)?
        };
        if let Some(element) = popped {
            let command: &[u8] = if end.is_left() { b"LPOP" } else { b"RPOP" };
            ctx.replay_as(&[command, key]);
            return Ok(Reply::Array(vec![
                Reply::Bulk(key.clone()),
                Reply::Bulk(element),
            ]));
        }
    }
    block(ctx, keys, timeout_ms, Reply::NullArray)
}

/// BRPOPLPUSH source destination timeout
fn brpoplpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let timeout_ms = timeout_arg(&args[3])?;
    move_or_block(ctx, args, End::Right, End::Left, timeout_ms, b"RPOPLPUSH")
}

/// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
fn blmove(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let from = End::parse(&args[3])?;
    let to = End::parse(&args[4])?;
    let timeout_ms = timeout_arg(&args[5])?;
    move_or_block(ctx, args, from, to, timeout_ms, b"LMOVE")
}

/// Moves an element as LMOVE does, or waits for the source.
fn move_or_block(
    ctx: &mut Ctx<'_>,
    args: &[Bytes],
    from: End,
    to: End,
    timeout_ms: u64,
    replay_name: &[u8],
) -> CmdResult {
    let (source, destination) = (&args[1], &args[2]);
    if servable(ctx, std::slice::from_ref(source), ValueType::List)?.is_empty() {
        return block(ctx, std::slice::from_ref(source), timeout_ms, Reply::Null);
    }
    let moved = if woken(ctx) {
        ctx.uncounted(|ctx| lists::move_element(ctx, source, destination, from, to))?
    } else {
        lists::move_element(ctx, source, destination, from, to)?
    };
    match moved {
        Reply::Null => block(ctx, std::slice::from_ref(source), timeout_ms, Reply::Null),
        moved => {
            let side = |end: End| -> &'static [u8] {
                if end.is_left() {
                    b"LEFT"
                } else {
                    b"RIGHT"
                }
            };
            if replay_name == b"LMOVE" {
                ctx.replay_as(&[replay_name, source, destination, side(from), side(to)]);
            } else {
                ctx.replay_as(&[replay_name, source, destination]);
            }
            Ok(moved)
        }
    }
}

/// BLMPOP timeout numkeys key... LEFT|RIGHT [COUNT count]
fn blmpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let pop = lists::parse_multi_pop(args, 2)?;
    let timeout_ms = timeout_arg(&args[1])?;
    let keys = &args[pop.keys];
    let from = servable(ctx, keys, ValueType::List)?;
    match lists::multi_pop(ctx, &from, pop.end, pop.count)? {
        Reply::NullArray => block(ctx, keys, timeout_ms, Reply::NullArray),
        popped => Ok(popped),
    }
}

fn bzpopmin(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop_first_zset(ctx, args, false)
}

fn bzpopmax(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop_first_zset(ctx, args, true)
}

/// BZPOP(MIN|MAX) key... timeout: `[key, member, score]` from the first
/// non-empty sorted set.
fn pop_first_zset(ctx: &mut Ctx<'_>, args: &[Bytes], max: bool) -> CmdResult {
    let last = args.len() - 1;
    let timeout_ms = timeout_arg(&args[last])?;
    let keys = &args[1..last];
    for key in servable(ctx, keys, ValueType::ZSet)?.iter() {
        if let Some((member, score)) = zsets::pop_end(ctx, key, max)? {
            let command: &[u8] = if max { b"ZPOPMAX" } else { b"ZPOPMIN" };
            ctx.replay_as(&[command, key]);
            return Ok(Reply::Array(vec![
                Reply::Bulk(key.clone()),
                Reply::Bulk(member),
                Reply::Double(score),
            ]));
        }
    }
    block(ctx, keys, timeout_ms, Reply::NullArray)
}

/// BZMPOP timeout numkeys key... MIN|MAX [COUNT count]
fn bzmpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let pop = zsets::parse_multi_pop(args, 2)?;
    let timeout_ms = timeout_arg(&args[1])?;
    let keys = &args[pop.keys];
    let from = servable(ctx, keys, ValueType::ZSet)?;
    match zsets::multi_pop(ctx, &from, pop.max, pop.count)? {
        Reply::NullArray => block(ctx, keys, timeout_ms, Reply::NullArray),
        popped => Ok(popped),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_follow_redis_long_double_arithmetic() {
        let ms = |text: &str| timeout_arg(text.as_bytes()).map_err(|e| e.into_reply());
        let not_float = Err(Reply::Error(TIMEOUT_NOT_FLOAT.into()));
        let negative = Err(Reply::Error(TIMEOUT_NEGATIVE.into()));
        assert_eq!(ms("0"), Ok(0));
        assert_eq!(ms("1.5"), Ok(1500));
        assert_eq!(ms("0.0001"), Ok(1));
        assert_eq!(ms("0.001"), Ok(1));
        assert_eq!(ms("-0.0001"), Ok(0));
        assert_eq!(ms("0x10"), Ok(16000));
        assert_eq!(ms("abc"), not_float);
        assert_eq!(ms(""), not_float);
        assert_eq!(ms(" 1"), not_float);
        assert_eq!(ms("nan"), not_float);
        assert_eq!(ms("-1"), negative);
        assert_eq!(ms("inf"), negative);
        assert_eq!(ms("1e400"), negative);
        assert_eq!(ms("9223372036854775807"), negative);
    }
}
