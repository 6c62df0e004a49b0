//! Lists: pushes and pops at either end, indexes and ranges, LINSERT, LREM,
//! LTRIM, LPOS, LMOVE/RPOPLPUSH and LMPOP, with Redis 7.0's replies and
//! error texts (t_list.c). The blocking variants (`blocking/state.rs`) call the
//! pops shared here: [`pop_one`], [`move_element`], [`parse_multi_pop`] and
//! [`multi_pop`].
//!
//! Encoding (firn-storage `list.rs`): one entry per element under its
//! position, with the head and tail positions in the meta record, so both
//! ends and any index cost O(1) and a range reads only what it returns.
//! A command that would visit more than a thousand elements (a long range,
//! a search that has not found its match by then, a shift of many
//! elements) moves to the cold-read pool.

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::{notify_class as class, Cf, Collection, List, ValueType};
use std::ops::Bound;

use super::collection::{stream_span, streamed, Shape, Span};
use super::offload::{off_thread_if, INLINE_MEMBERS};
use super::{def, Ctx, Def, Traits};
use crate::args::{int_arg, is, parse_i64};
use crate::errors::{wrong_arity, CmdError, CmdResult, NO_SUCH_KEY, SYNTAX};
use crate::rdb::RdbValue;
use crate::stream_reply::Sink;

pub const COMMANDS: &[Def] = &[
    def("lpush", lpush),
    def("rpush", rpush),
    def("lpushx", lpushx),
    def("rpushx", rpushx),
    def("lpop", lpop).with(Traits::ADDS_NOTHING),
    def("rpop", rpop).with(Traits::ADDS_NOTHING),
    def("llen", llen),
    def("lindex", lindex),
    def("lset", lset),
    def("lrange", lrange),
    def("ltrim", ltrim),
    def("lrem", lrem),
    def("linsert", linsert),
    def("lpos", lpos),
    def("rpoplpush", rpoplpush),
    def("lmove", lmove),
    def("lmpop", lmpop).with(Traits::ADDS_NOTHING),
];

const OUT_OF_RANGE: &str = "ERR index out of range";
/// getPositiveLongFromObjectOrReply's default text (also for a count that
/// is not a number at all).
const NOT_POSITIVE: &str = "ERR value is out of range, must be positive";

/// Which end of a list a command works on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    Left,
    Right,
}

/// The `lpush`/`rpush` and `lpop`/`rpop` event names of an end.
fn push_event(end: End) -> &'static str {
    if end.is_left() {
        "lpush"
    } else {
        "rpush"
    }
}

fn pop_event(end: End) -> &'static str {
    if end.is_left() {
        "lpop"
    } else {
        "rpop"
    }
}

/// The `del` event of a list a command emptied (Redis deletes it).
fn notify_if_emptied(ctx: &mut Ctx<'_>, key: &[u8], list: &List) {
    if list.is_empty() {
        ctx.notify(class::GENERIC, "del", key);
    }
}

impl End {
    /// LEFT/RIGHT, case-insensitive; anything else is a syntax error.
    pub(crate) fn parse(arg: &[u8]) -> CmdResult<End> {
        if is(arg, "left") {
            Ok(End::Left)
        } else if is(arg, "right") {
            Ok(End::Right)
        } else {
            Err(CmdError::Static(SYNTAX))
        }
    }

    pub(crate) fn is_left(self) -> bool {
        self == End::Left
    }
}

/// A count that must be a non-negative long; `message` for anything else
/// (Redis's getPositiveLongFromObjectOrReply).
fn non_negative(arg: &[u8], message: &'static str) -> CmdResult<u64> {
    match parse_i64(arg) {
        Some(n) if n >= 0 => Ok(n as u64),
        _ => Err(CmdError::Static(message)),
    }
}

/// Element `index` (negative counts from the tail) of a list of `len`.
fn resolve_index(len: u64, index: i64) -> Option<u64> {
    let index = if index < 0 {
        (len as i64).checked_add(index)?
    } else {
        index
    };
    u64::try_from(index).ok().filter(|&i| i < len)
}

/// LRANGE/LTRIM's `start stop` (inclusive, negative from the tail) as a
/// half-open range of indexes, or `None` when it is empty.
fn resolve_range(len: u64, start: i64, stop: i64) -> Option<(u64, u64)> {
    let len_i = len as i64;
    let start = if start < 0 { len_i + start } else { start }.max(0);
    let stop = if stop < 0 { len_i + stop } else { stop };
    if start > stop || start >= len_i {
        return None;
    }
    Some((start as u64, stop.min(len_i - 1) as u64 + 1))
}

/// Visits elements `start..stop` (from the tail when `reverse`) until
/// `visit` returns false, like `Txn::list_range`, for the commands that
/// search a list (LPOS, LREM, LINSERT). On a network thread a search that
/// has not ended after [`INLINE_MEMBERS`] elements moves the command to the
/// cold-read pool, so a match near the searched end is found inline.
fn search(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    list: &List,
    start: u64,
    stop: u64,
    reverse: bool,
    mut visit: impl FnMut(u64, &Bytes) -> bool,
) -> CmdResult<()> {
    let db = ctx.db();
    let budget = match off_thread_if(ctx, INLINE_MEMBERS + 1) {
        Ok(()) => u64::MAX,
        Err(_) => INLINE_MEMBERS,
    };
    let (mut visited, mut unfinished) = (0u64, false);
    ctx.txn
        .list_range(db, key, list, start, stop, reverse, |index, value| {
            if visited == budget {
                unfinished = true;
                return false;
            }
            visited += 1;
            visit(index, value)
        })?;
    if unfinished {
        off_thread_if(ctx, stop - start)?;
    }
    Ok(())
}

/// Elements LINSERT/LREM rewrite to change the list at `first..=last`:
/// those between the change and the nearer end.
fn shift_cost(len: u64, first: u64, last: u64) -> u64 {
    (len - first).min(last + 1)
}

fn lpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, End::Left, false)
}

fn rpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, End::Right, false)
}

fn lpushx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, End::Left, true)
}

fn rpushx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, End::Right, true)
}

/// [LR]PUSH[X] key element...: the new length (0 for a missing key with X).
fn push(ctx: &mut Ctx<'_>, args: &[Bytes], end: End, existing_only: bool) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let mut list = match ctx.txn.list(db, key)? {
        Some(list) => list,
        None if existing_only => return Ok(Reply::Integer(0)),
        None => ctx.txn.new_list(),
    };
    for element in &args[2..] {
        ctx.txn
            .list_push(db, key, &mut list, end.is_left(), element.clone());
    }
    ctx.txn.save_list(db, key, &mut list)?;
    ctx.notify(class::LIST, push_event(end), key);
    ctx.dirty(args.len() as u64 - 2);
    Ok(Reply::Integer(list.len() as i64))
}

fn lpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop(ctx, args, End::Left)
}

fn rpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop(ctx, args, End::Right)
}

/// [LR]POP key [count]: one element, or (with a count) an array; a missing
/// key is a null bulk without a count and a null array with one.
fn pop(ctx: &mut Ctx<'_>, args: &[Bytes], end: End) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let count = match args.len() {
        2 => None,
        3 => Some(non_negative(&args[2], NOT_POSITIVE)?),
        _ => return Err(wrong_arity(if end.is_left() { "lpop" } else { "rpop" })),
    };
    let Some(mut list) = ctx.txn.list(db, key)? else {
        return Ok(match count {
            Some(_) => Reply::NullArray,
            None => Reply::Null,
        });
    };
    let Some(count) = count else {
        let value = pop_from(ctx, key, &mut list, end)?;
        return Ok(value.map_or(Reply::Null, Reply::Bulk));
    };
    if count == 0 {
        return Ok(Reply::Array(Vec::new()));
    }
    off_thread_if(ctx, count.min(list.len()))?;
    let popped = ctx
        .txn
        .list_pop_many(db, key, &mut list, end.is_left(), count)?;
    ctx.txn.save_list(db, key, &mut list)?;
    ctx.notify(class::LIST, pop_event(end), key);
    notify_if_emptied(ctx, key, &list);
    ctx.dirty(popped.len() as u64);
    Ok(Reply::Array(popped.into_iter().map(Reply::Bulk).collect()))
}

/// Pops one element from `list`, the list at `key`.
fn pop_from(ctx: &mut Ctx<'_>, key: &[u8], list: &mut List, end: End) -> CmdResult<Option<Bytes>> {
    let db = ctx.db();
    let value = ctx.txn.list_pop(db, key, list, end.is_left())?;
    ctx.txn.save_list(db, key, list)?;
    if value.is_some() {
        ctx.notify(class::LIST, pop_event(end), key);
        notify_if_emptied(ctx, key, list);
        ctx.dirty(1);
    }
    Ok(value)
}

/// `[LR]POP key`: the element, or `None` for a missing key (BLPOP/BRPOP).
pub(crate) fn pop_one(ctx: &mut Ctx<'_>, key: &[u8], end: End) -> CmdResult<Option<Bytes>> {
    let db = ctx.db();
    match ctx.txn.list(db, key)? {
        Some(mut list) => pop_from(ctx, key, &mut list, end),
        None => Ok(None),
    }
}

fn llen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let len = ctx.txn.list(db, &args[1])?.map_or(0, |list| list.len());
    Ok(Reply::Integer(len as i64))
}

fn lindex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    // Redis looks the key up before it parses the index.
    let Some(list) = ctx.txn.list(db, key)? else {
        return Ok(Reply::Null);
    };
    let index = int_arg(&args[2])?;
    let Some(index) = resolve_index(list.len(), index) else {
        return Ok(Reply::Null);
    };
    let value = ctx.txn.list_get(db, key, &list, index)?;
    Ok(value.map_or(Reply::Null, Reply::Bulk))
}

fn lset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let Some(list) = ctx.txn.list(db, key)? else {
        return Err(CmdError::Static(NO_SUCH_KEY));
    };
    let index = int_arg(&args[2])?;
    let Some(index) = resolve_index(list.len(), index) else {
        return Err(CmdError::Static(OUT_OF_RANGE));
    };
    // The record (length, positions) is unchanged: only the element is
    // written.
    ctx.txn.list_set(db, key, &list, index, args[3].clone());
    ctx.notify(class::LIST, "lset", key);
    ctx.dirty(1);
    Ok(Reply::ok())
}

fn lrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let (start, stop) = (int_arg(&args[2])?, int_arg(&args[3])?);
    let Some(list) = ctx.txn.list(db, key)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    let Some((first, end)) = resolve_range(list.len(), start, stop) else {
        return Ok(Reply::Array(Vec::new()));
    };
    if streamed(ctx, end - first) {
        // Re-resolved on the snapshot the reply is read from.
        let span = move |coll: &Collection| {
            let list = List::from_collection(coll.clone())?;
            let (first, end) = resolve_range(list.len(), start, stop).unwrap_or((0, 0));
            Ok(Span {
                members: (end - first) as usize,
                from: Bound::Included(list.position(first).to_vec()),
                to: Bound::Excluded(list.position(end).to_vec()),
                reverse: false,
            })
        };
        let shape = Shape::Array { per_member: 1 };
        stream_span(
            ctx,
            key,
            ValueType::List,
            Cf::Data,
            shape,
            span,
            stream_element,
        );
        return Ok(Reply::Null);
    }
    let (start, stop) = (first, end);
    off_thread_if(ctx, stop - start)?;
    let mut items = Vec::with_capacity((stop - start) as usize);
    ctx.txn
        .list_range(db, key, &list, start, stop, false, |_, value| {
            items.push(Reply::Bulk(value.clone()));
            true
        })?;
    Ok(Reply::Array(items))
}

fn stream_element(sink: &mut Sink, _: &[u8], value: &[u8]) -> bool {
    sink.item(Reply::Bulk(Bytes::copy_from_slice(value)))
}

fn ltrim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let (start, stop) = (int_arg(&args[2])?, int_arg(&args[3])?);
    let Some(mut list) = ctx.txn.list(db, key)? else {
        return Ok(Reply::ok());
    };
    let len = list.len();
    let (start, stop) = resolve_range(len, start, stop).unwrap_or((0, 0));
    let kept = stop - start;
    off_thread_if(ctx, kept.min(len - kept))?;
    ctx.txn.list_trim(db, key, &mut list, start, stop)?;
    ctx.txn.save_list(db, key, &mut list)?;
    ctx.notify(class::LIST, "ltrim", key);
    notify_if_emptied(ctx, key, &list);
    ctx.dirty(len - kept);
    Ok(Reply::ok())
}

/// LREM key count element: removes the first `count` matches from the head
/// (from the tail for a negative count, all of them for 0).
fn lrem(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let count = int_arg(&args[2])?;
    let Some(mut list) = ctx.txn.list(db, key)? else {
        return Ok(Reply::Integer(0));
    };
    let element = &args[3];
    // i64::MIN's magnitude is 2^63, more than any list holds: "all".
    let limit = match count {
        0 => u64::MAX,
        n => n.unsigned_abs(),
    };
    let len = list.len();
    let mut matches = Vec::new();
    search(ctx, key, &list, 0, len, count < 0, |index, value| {
        if value == element {
            matches.push(index);
        }
        (matches.len() as u64) < limit
    })?;
    matches.sort_unstable();
    let (Some(&first), Some(&last)) = (matches.first(), matches.last()) else {
        return Ok(Reply::Integer(0));
    };
    off_thread_if(ctx, shift_cost(len, first, last))?;
    ctx.txn.list_remove(db, key, &mut list, &matches)?;
    ctx.txn.save_list(db, key, &mut list)?;
    ctx.notify(class::LIST, "lrem", key);
    notify_if_emptied(ctx, key, &list);
    ctx.dirty(matches.len() as u64);
    Ok(Reply::Integer(matches.len() as i64))
}

/// LINSERT key BEFORE|AFTER pivot element: the new length, 0 for a missing
/// key, -1 when the pivot is not found.
fn linsert(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let after = if is(&args[2], "after") {
        true
    } else if is(&args[2], "before") {
        false
    } else {
        return Err(CmdError::Static(SYNTAX));
    };
    let Some(mut list) = ctx.txn.list(db, key)? else {
        return Ok(Reply::Integer(0));
    };
    let pivot = &args[3];
    let len = list.len();
    let mut found = None;
    search(ctx, key, &list, 0, len, false, |index, value| {
        if value == pivot {
            found = Some(index);
        }
        found.is_none()
    })?;
    let Some(index) = found else {
        return Ok(Reply::Integer(-1));
    };
    let at = if after { index + 1 } else { index };
    // Elements at `at` or after move one way, those before it the other.
    off_thread_if(ctx, at.min(len - at))?;
    ctx.txn
        .list_insert(db, key, &mut list, at, args[4].clone())?;
    ctx.txn.save_list(db, key, &mut list)?;
    ctx.notify(class::LIST, "linsert", key);
    ctx.dirty(1);
    Ok(Reply::Integer(list.len() as i64))
}

/// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len].
fn lpos(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let element = &args[2];
    let (mut rank, mut count, mut maxlen) = (1i64, None::<u64>, 0u64);
    let mut i = 3;
    while i < args.len() {
        let (opt, value) = (&args[i], args.get(i + 1));
        match value {
            Some(value) if is(opt, "rank") => {
                rank = int_arg(value)?;
                if rank == 0 {
                    return Err(CmdError::Static(
                        "ERR RANK can't be zero: use 1 to start from the first match, \
                         2 from the second ... or use negative to start from the end of the list",
                    ));
                }
            }
            Some(value) if is(opt, "count") => {
                count = Some(non_negative(value, "ERR COUNT can't be negative")?);
            }
            Some(value) if is(opt, "maxlen") => {
                maxlen = non_negative(value, "ERR MAXLEN can't be negative")?;
            }
            _ => return Err(CmdError::Static(SYNTAX)),
        }
        i += 2;
    }
    let Some(list) = ctx.txn.list(db, key)? else {
        return Ok(match count {
            Some(_) => Reply::Array(Vec::new()),
            None => Reply::Null,
        });
    };
    let len = list.len();
    let walk = if maxlen == 0 { len } else { maxlen.min(len) };
    // Redis negates a negative rank in C `long` arithmetic: RANK
    // -9223372036854775808 stays negative, so every match qualifies and a
    // COUNT never ends the walk. The comparisons below wrap the same way.
    let from_tail = rank < 0;
    let rank = if from_tail { rank.wrapping_neg() } else { rank };
    let wanted = count.map(|c| c as i64);
    let (mut matches, mut found) = (0i64, Vec::new());
    let (start, stop) = if from_tail {
        (len - walk, len)
    } else {
        (0, walk)
    };
    search(ctx, key, &list, start, stop, from_tail, |index, value| {
        if value != element {
            return true;
        }
        matches += 1;
        if matches < rank {
            return true;
        }
        found.push(index as i64);
        match wanted {
            None => false,
            Some(0) => true,
            Some(c) => matches.wrapping_sub(rank).wrapping_add(1) < c,
        }
    })?;
    Ok(match count {
        Some(_) => Reply::Array(found.into_iter().map(Reply::Integer).collect()),
        None => found.first().map_or(Reply::Null, |&i| Reply::Integer(i)),
    })
}

fn rpoplpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    move_element(ctx, &args[1], &args[2], End::Right, End::Left)
}

fn lmove(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let from = End::parse(&args[3])?;
    let to = End::parse(&args[4])?;
    move_element(ctx, &args[1], &args[2], from, to)
}

/// Pops from one end of `source` and pushes to one end of `destination`
/// (the same list rotates); null when `source` is missing.
pub(crate) fn move_element(
    ctx: &mut Ctx<'_>,
    source: &Bytes,
    destination: &Bytes,
    from: End,
    to: End,
) -> CmdResult {
    let db = ctx.db();
    let Some(mut list) = ctx.txn.list(db, source)? else {
        return Ok(Reply::Null);
    };
    let mut target = match source == destination {
        true => None,
        false => Some(ctx.txn.list_or_new(db, destination)?),
    };
    let Some(value) = ctx.txn.list_pop(db, source, &mut list, from.is_left())? else {
        return Ok(Reply::Null);
    };
    match &mut target {
        None => {
            ctx.txn
                .list_push(db, source, &mut list, to.is_left(), value.clone());
        }
        Some(target) => {
            ctx.txn
                .list_push(db, destination, target, to.is_left(), value.clone());
            ctx.txn.save_list(db, destination, target)?;
        }
    }
    ctx.notify(class::LIST, push_event(to), destination);
    ctx.txn.save_list(db, source, &mut list)?;
    ctx.notify(class::LIST, pop_event(from), source);
    notify_if_emptied(ctx, source, &list);
    ctx.dirty(1);
    Ok(Reply::Bulk(value))
}

/// The arguments of LMPOP/BLMPOP: which keys, which end, how many.
pub(crate) struct MultiPop {
    /// Indexes of the keys in the arguments.
    pub keys: std::ops::Range<usize>,
    pub end: End,
    pub count: u64,
}

/// Parses `numkeys key... LEFT|RIGHT [COUNT count]` from `numkeys_at`
/// (LMPOP: 1, BLMPOP: 2), with Redis's errors in its order.
pub(crate) fn parse_multi_pop(args: &[Bytes], numkeys_at: usize) -> CmdResult<MultiPop> {
    let numkeys = match args.get(numkeys_at).and_then(|arg| parse_i64(arg)) {
        Some(n) if n >= 1 => n as u64,
        _ => return Err(CmdError::Static("ERR numkeys should be greater than 0")),
    };
    let where_at = numkeys
        .checked_add(numkeys_at as u64 + 1)
        .filter(|&at| at < args.len() as u64)
        .ok_or(CmdError::Static(SYNTAX))? as usize;
    let end = End::parse(&args[where_at])?;
    let mut count = None;
    let mut i = where_at + 1;
    while i < args.len() {
        match args.get(i + 1) {
            Some(value) if count.is_none() && is(&args[i], "count") => {
                count = match parse_i64(value) {
                    Some(n) if n >= 1 => Some(n as u64),
                    _ => return Err(CmdError::Static("ERR count should be greater than 0")),
                };
            }
            _ => return Err(CmdError::Static(SYNTAX)),
        }
        i += 2;
    }
    Ok(MultiPop {
        keys: numkeys_at + 1..where_at,
        end,
        count: count.unwrap_or(1),
    })
}

/// LMPOP numkeys key... LEFT|RIGHT [COUNT count]: pops from the first
/// non-empty list and replies `[key, [elements]]`, or a null array.
fn lmpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let pop = parse_multi_pop(args, 1)?;
    multi_pop(ctx, &args[pop.keys.clone()], pop.end, pop.count)
}

/// Pops up to `count` elements from the first non-empty list of `keys`:
/// `[key, [elements]]`, or a null array when all are missing.
pub(crate) fn multi_pop(ctx: &mut Ctx<'_>, keys: &[Bytes], end: End, count: u64) -> CmdResult {
    let db = ctx.db();
    for key in keys {
        let Some(mut list) = ctx.txn.list(db, key)? else {
            continue;
        };
        let popping = count.min(list.len());
        off_thread_if(ctx, popping)?;
        let popped = ctx
            .txn
            .list_pop_many(db, key, &mut list, end.is_left(), count)?;
        ctx.txn.save_list(db, key, &mut list)?;
        ctx.notify(class::LIST, pop_event(end), key);
        notify_if_emptied(ctx, key, &list);
        ctx.dirty(popped.len() as u64);
        // Redis propagates LMPOP as the [LR]POP it amounted to.
        let command: &[u8] = if end.is_left() { b"LPOP" } else { b"RPOP" };
        ctx.replay_as(&[command, key, popping.to_string().as_bytes()]);
        return Ok(Reply::Array(vec![
            Reply::Bulk(key.clone()),
            Reply::Array(popped.into_iter().map(Reply::Bulk).collect()),
        ]));
    }
    Ok(Reply::NullArray)
}

/// The whole list, head to tail, for DUMP (the caller has moved a long
/// list off the network thread).
pub fn dump_value(ctx: &mut Ctx<'_>, key: &[u8], coll: &Collection) -> CmdResult<RdbValue> {
    let db = ctx.db();
    let list = List::from_collection(coll.clone())?;
    let mut items = Vec::with_capacity(list.len() as usize);
    ctx.txn
        .list_range(db, key, &list, 0, list.len(), false, |_, value| {
            items.push(value.to_vec());
            true
        })?;
    Ok(RdbValue::List(items))
}

/// Stores a restored list at `key` (already cleared), with its expiry.
pub fn restore_value(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    items: Vec<Vec<u8>>,
    expire_at_ms: u64,
) -> CmdResult<()> {
    let db = ctx.db();
    let mut list = ctx.txn.new_list();
    list.coll.expire_at_ms = expire_at_ms;
    for item in items {
        ctx.txn
            .list_push(db, key, &mut list, false, Bytes::from(item));
    }
    ctx.txn.save_list(db, key, &mut list)?;
    Ok(())
}

/// `count` elements from index `start`, counted from the tail when
/// `from_tail` (SORT ... BY nosort reads a list so).
pub fn read_range(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    coll: &Collection,
    start: i64,
    count: i64,
    from_tail: bool,
) -> CmdResult<Vec<Bytes>> {
    let db = ctx.db();
    let list = List::from_collection(coll.clone())?;
    let len = list.len();
    let start = u64::try_from(start).unwrap_or(0).min(len);
    let count = u64::try_from(count).unwrap_or(0).min(len - start);
    let (first, end) = if from_tail {
        (len - start - count, len - start)
    } else {
        (start, start + count)
    };
    let mut items = Vec::with_capacity(count as usize);
    ctx.txn
        .list_range(db, key, &list, first, end, from_tail, |_, value| {
            items.push(value.clone());
            true
        })?;
    Ok(items)
}

/// Replaces `key` (already cleared) by a list of `values`, head first
/// (SORT ... STORE).
pub fn store_list(ctx: &mut Ctx<'_>, key: &[u8], values: Vec<Bytes>) -> CmdResult<()> {
    let db = ctx.db();
    let mut list = ctx.txn.new_list();
    for value in values {
        ctx.txn.list_push(db, key, &mut list, false, value);
    }
    ctx.txn.save_list(db, key, &mut list)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_resolve_like_redis() {
        assert_eq!(resolve_index(3, 0), Some(0));
        assert_eq!(resolve_index(3, -1), Some(2));
        assert_eq!(resolve_index(3, -3), Some(0));
        assert_eq!(resolve_index(3, -4), None);
        assert_eq!(resolve_index(3, 3), None);
        assert_eq!(resolve_index(3, i64::MIN), None);
        assert_eq!(resolve_index(0, 0), None);
    }

    #[test]
    fn ranges_resolve_like_redis() {
        assert_eq!(resolve_range(5, 0, -1), Some((0, 5)));
        assert_eq!(resolve_range(5, -100, 100), Some((0, 5)));
        assert_eq!(resolve_range(5, 2, 1), None);
        assert_eq!(resolve_range(5, 5, 10), None);
        assert_eq!(resolve_range(5, -2, -1), Some((3, 5)));
        assert_eq!(resolve_range(5, 0, -6), None);
        assert_eq!(resolve_range(5, i64::MIN, i64::MAX), Some((0, 5)));
    }
}
