//! Sorted sets: the whole Redis 7.0 Z* group (the blocking BZ* variants
//! live in `blocking/state.rs` and call [`pop_end`], [`parse_multi_pop`] and
//! [`multi_pop`]), ZSCAN, and the sorted-set side of DUMP/RESTORE.
//!
//! Storage (firn-storage zset.rs) keeps each member's score in `data` and a
//! by-score index in `zscore`, so every range here is a walk of the index
//! from the nearer end that reads only what it visits. Walks longer than
//! [`INLINE_MEMBERS`] move to the cold-read pool (`off_thread_if`), and
//! rank or score ranges of more than [`STREAM_MEMBERS`] members are
//! streamed from a snapshot ([`stream_range`]).
//!
//! Numbers are parsed as Redis parses them: scores and weights with
//! `getDoubleFromObject` (C strtod over the whole argument, no leading
//! space, no overflow, NaN refused), range bounds with `zslParseRange`
//! (strtod, `(` for an open end, overflow allowed), lex bounds with
//! `zslParseLexRange` (`[`, `(`, `-`, `+`). Scores are replied with
//! Redis 7.0's `%.17g` (a RESP3 double).

use bytes::Bytes;
use firn_prims::strtod;
use firn_resp::{Protocol, Reply};
use firn_storage::{
    notify_class as class, Cf, Collection, KeyspaceView, LexBound, LexRange, RankLookup, ReadMode,
    ScoreRange, StorageError, Txn, ValueType, ZAddFlags, ZAddOutcome,
};
use std::collections::HashMap;

use super::collection::{member_scan, streamed, STREAM_MEMBERS};
use super::offload::{off_thread_if, INLINE_MEMBERS};
use super::scan::{parse_cursor, KeyPattern};
use super::{def, Ctx, Def, Traits};
use crate::args::{int_arg, is, parse_double, parse_i64, ArgCursor};
use crate::errors::{CmdError, CmdResult, NOT_FLOAT, NOT_INTEGER, SYNTAX};
use crate::rdb::RdbValue;

pub const COMMANDS: &[Def] = &[
    def("zadd", zadd),
    def("zincrby", zincrby),
    def("zscore", zscore),
    def("zmscore", zmscore),
    def("zcard", zcard),
    def("zcount", zcount),
    def("zlexcount", zlexcount),
    def("zrank", zrank),
    def("zrevrank", zrevrank),
    def("zrem", zrem),
    def("zrange", zrange),
    def("zrevrange", zrevrange),
    def("zrangebyscore", zrangebyscore),
    def("zrevrangebyscore", zrevrangebyscore),
    def("zrangebylex", zrangebylex),
    def("zrevrangebylex", zrevrangebylex),
    def("zrangestore", zrangestore),
    def("zremrangebyrank", zremrangebyrank),
    def("zremrangebyscore", zremrangebyscore),
    def("zremrangebylex", zremrangebylex),
    def("zpopmin", zpopmin).with(Traits::ADDS_NOTHING),
    def("zpopmax", zpopmax).with(Traits::ADDS_NOTHING),
    def("zmpop", zmpop).with(Traits::ADDS_NOTHING),
    def("zrandmember", zrandmember),
    def("zunion", zunion),
    def("zinter", zinter),
    def("zdiff", zdiff),
    def("zunionstore", zunionstore),
    def("zinterstore", zinterstore),
    def("zdiffstore", zdiffstore),
    def("zintercard", zintercard),
    def("zscan", zscan),
];

const SCORE_RANGE_ERR: &str = "ERR min or max is not a float";
const LEX_RANGE_ERR: &str = "ERR min or max not valid string range item";
const NAN_RESULT: &str = "ERR resulting score is not a number (NaN)";
const MUST_BE_POSITIVE: &str = "ERR value is out of range, must be positive";

// ---------------------------------------------------------------------------
// Argument parsing
// ---------------------------------------------------------------------------

fn score_arg(bytes: &[u8], error: &'static str) -> CmdResult<f64> {
    parse_double(bytes).ok_or(CmdError::Static(error))
}

/// One end of a score range as `zslParseRange` reads it: `(` makes it
/// open; strtod must stop at the end of the C string; NaN is refused.
fn parse_score_bound(bytes: &[u8]) -> Option<(f64, bool)> {
    let (text, exclusive) = match bytes.first() {
        Some(b'(') => (&bytes[1..], true),
        _ => (bytes, false),
    };
    let read = strtod(text);
    let at_end = text.get(read.len).is_none_or(|b| *b == 0);
    if !at_end || read.value.is_nan() {
        return None;
    }
    Some((read.value, exclusive))
}

fn score_range(min: &[u8], max: &[u8]) -> CmdResult<ScoreRange> {
    match (parse_score_bound(min), parse_score_bound(max)) {
        (Some((min, min_exclusive)), Some((max, max_exclusive))) => Ok(ScoreRange {
            min,
            min_exclusive,
            max,
            max_exclusive,
        }),
        _ => Err(CmdError::Static(SCORE_RANGE_ERR)),
    }
}

/// `zslParseLexRangeItem`: `+`, `-`, `[member` or `(member`.
fn parse_lex_bound(bytes: &[u8]) -> Option<LexBound> {
    // C compares the byte after '+'/'-' with the string's NUL.
    let alone = bytes.get(1).is_none_or(|b| *b == 0);
    match bytes.first()? {
        b'+' if alone => Some(LexBound::Max),
        b'-' if alone => Some(LexBound::Min),
        b'(' => Some(LexBound::Exclusive(Bytes::copy_from_slice(&bytes[1..]))),
        b'[' => Some(LexBound::Inclusive(Bytes::copy_from_slice(&bytes[1..]))),
        _ => None,
    }
}

fn lex_range(min: &[u8], max: &[u8]) -> CmdResult<LexRange> {
    match (parse_lex_bound(min), parse_lex_bound(max)) {
        (Some(min), Some(max)) => Ok(LexRange { min, max }),
        _ => Err(CmdError::Static(LEX_RANGE_ERR)),
    }
}

/// Redis's `getPositiveLongFromObjectOrReply` with its default message.
fn positive_arg(bytes: &[u8], error: &'static str) -> CmdResult<i64> {
    match parse_i64(bytes) {
        Some(n) if n >= 0 => Ok(n),
        _ => Err(CmdError::Static(error)),
    }
}

// ---------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------

fn zset_of(ctx: &mut Ctx<'_>, key: &[u8]) -> CmdResult<Option<Collection>> {
    Ok(ctx.txn.collection(ctx.db(), key, ValueType::ZSet)?)
}

/// Member visits left before a walk on a network thread must move to the
/// cold-read pool; unlimited there.
struct Budget {
    left: u64,
    exceeded: bool,
}

impl Budget {
    fn new(ctx: &Ctx<'_>) -> Budget {
        Budget {
            left: match ctx.txn.mode() {
                ReadMode::MemoryOnly => INLINE_MEMBERS,
                _ => u64::MAX,
            },
            exceeded: false,
        }
    }

    /// Whether one more member may be visited.
    fn spend(&mut self) -> bool {
        if self.left == 0 {
            self.exceeded = true;
            return false;
        }
        self.left -= 1;
        true
    }

    /// After the walk: re-run on the pool if it was cut short.
    fn check(&self, ctx: &Ctx<'_>) -> CmdResult<()> {
        if self.exceeded {
            off_thread_if(ctx, u64::MAX)?;
            return Err(CmdError::Storage(StorageError::Incomplete));
        }
        Ok(())
    }
}

/// Members with scores, as a reply: a flat array in RESP2 (scores as
/// bulks), `[member, score]` pairs in RESP3 when `withscores`.
fn members_reply(ctx: &Ctx<'_>, items: Vec<(Bytes, f64)>, withscores: bool) -> Reply {
    let resp3 = ctx.session.protocol == Protocol::Resp3;
    let mut out = Vec::with_capacity(if withscores && !resp3 {
        items.len() * 2
    } else {
        items.len()
    });
    for (member, score) in items {
        match (withscores, resp3) {
            (false, _) => out.push(Reply::Bulk(member)),
            (true, false) => {
                out.push(Reply::Bulk(member));
                out.push(Reply::Double(score));
            }
            (true, true) => out.push(Reply::Array(vec![
                Reply::Bulk(member),
                Reply::Double(score),
            ])),
        }
    }
    Reply::Array(out)
}

/// Redis's rank sanitising: `None` for an empty range, else `[start, end]`
/// within `0..size`.
fn rank_span(start: i64, end: i64, size: u64) -> Option<(u64, u64)> {
    let len = size as i64;
    let start = if start < 0 { len + start } else { start }.max(0);
    let end = if end < 0 { len + end } else { end };
    if start > end || start >= len {
        return None;
    }
    Some((start as u64, end.min(len - 1) as u64))
}

/// Members at ranks `start..=end` (0-based, from the lowest score, or the
/// highest when `reverse`), walking from the nearer end.
fn by_rank(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    coll: &Collection,
    start: u64,
    end: u64,
    reverse: bool,
) -> CmdResult<Vec<(Bytes, f64)>> {
    let count = end - start + 1;
    // The same span counted from the other end starts here.
    let other_start = coll.size - 1 - end;
    let flip = other_start < start;
    let (skip, walk_reverse) = if flip {
        (other_start, !reverse)
    } else {
        (start, reverse)
    };
    off_thread_if(ctx, skip + count)?;
    let mut items = Vec::with_capacity(count.min(INLINE_MEMBERS) as usize);
    let mut seen = 0u64;
    ctx.txn.zset_scan_scores(
        ctx.db(),
        key,
        coll,
        &ScoreRange::ALL,
        walk_reverse,
        |member, score| {
            seen += 1;
            if seen > skip {
                items.push((Bytes::copy_from_slice(member), score));
            }
            (items.len() as u64) < count
        },
    )?;
    if flip {
        items.reverse();
    }
    Ok(items)
}

/// Redis's LIMIT walk: skip `offset` members in range (a negative offset
/// or one past the set gives nothing), then take `limit` (negative: all).
#[derive(Clone, Copy)]
struct Window {
    offset: i64,
    limit: i64,
}

impl Window {
    const ALL: Window = Window {
        offset: 0,
        limit: -1,
    };

    fn is_empty(&self, size: u64) -> bool {
        self.offset < 0 || (self.offset > 0 && self.offset as u64 >= size) || self.limit == 0
    }
}

enum RangeSpec {
    Score(ScoreRange),
    Lex(LexRange),
}

/// Members in a score or lex range, within `window`.
fn by_range(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    coll: &Collection,
    spec: &RangeSpec,
    reverse: bool,
    window: &Window,
) -> CmdResult<Vec<(Bytes, f64)>> {
    let items = by_range_capped(ctx, key, coll, spec, reverse, window, u64::MAX)?;
    Ok(items.unwrap_or_default())
}

/// [`by_range`], or `None` once more than `cap` members would be returned.
fn by_range_capped(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    coll: &Collection,
    spec: &RangeSpec,
    reverse: bool,
    window: &Window,
    cap: u64,
) -> CmdResult<Option<Vec<(Bytes, f64)>>> {
    let mut items = Vec::new();
    if window.is_empty(coll.size) {
        return Ok(Some(items));
    }
    let mut budget = Budget::new(ctx);
    let mut skip = window.offset as u64;
    let limit = u64::try_from(window.limit).unwrap_or(u64::MAX);
    let mut over_cap = false;
    let mut visit = |member: &[u8], score: f64| {
        if !budget.spend() {
            return false;
        }
        if skip > 0 {
            skip -= 1;
            return true;
        }
        if items.len() as u64 == cap {
            over_cap = true;
            return false;
        }
        items.push((Bytes::copy_from_slice(member), score));
        (items.len() as u64) < limit
    };
    let db = ctx.db();
    match spec {
        RangeSpec::Score(range) => ctx
            .txn
            .zset_scan_scores(db, key, coll, range, reverse, &mut visit)?,
        RangeSpec::Lex(range) => ctx
            .txn
            .zset_scan_lex(db, key, coll, range, reverse, &mut visit)?,
    }
    budget.check(ctx)?;
    Ok((!over_cap).then_some(items))
}

/// Counts the members in a range (ZCOUNT, ZLEXCOUNT).
fn count_range(ctx: &mut Ctx<'_>, args: &[Bytes], spec: RangeSpec) -> CmdResult {
    let Some(coll) = zset_of(ctx, &args[1])? else {
        return Ok(Reply::Integer(0));
    };
    let (db, key) = (ctx.db(), &args[1]);
    let mut budget = Budget::new(ctx);
    let mut count = 0i64;
    let mut visit = |_: &[u8], _: f64| {
        count += 1;
        budget.spend()
    };
    match &spec {
        RangeSpec::Score(range) => ctx
            .txn
            .zset_scan_scores(db, key, &coll, range, false, &mut visit)?,
        RangeSpec::Lex(range) => ctx
            .txn
            .zset_scan_lex(db, key, &coll, range, false, &mut visit)?,
    }
    budget.check(ctx)?;
    Ok(Reply::Integer(count))
}

/// Removes `items` (just read from the set) and stores the record back.
fn remove_all(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    coll: &mut Collection,
    items: &[(Bytes, f64)],
    event: &'static str,
) -> CmdResult<()> {
    let db = ctx.db();
    for (member, score) in items {
        ctx.txn.zset_remove_known(db, key, coll, member, *score);
    }
    if !items.is_empty() {
        ctx.txn.save_collection(db, key, coll)?;
        ctx.notify(class::ZSET, event, key);
        super::collection::notify_if_emptied(ctx, key, coll);
    }
    ctx.dirty(items.len() as u64);
    Ok(())
}

/// Replaces `key` by a sorted set of `items` (the *STORE commands); an
/// empty result deletes it. Replies with the number stored.
fn store_result(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    items: Vec<(Bytes, f64)>,
    event: &'static str,
) -> CmdResult {
    let stored = store_zset(ctx, key, items, event, 1)?;
    Ok(Reply::Integer(stored as i64))
}

/// Replaces `key` by a sorted set of `items` with the events of a *STORE
/// command: `event` when something was stored, `del` when an empty result
/// deleted an existing key. Counts `changes` when something was stored (a
/// *STORE counts 1, GEO*STORE the members), one for a deletion.
pub(crate) fn store_zset(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    items: Vec<(Bytes, f64)>,
    event: &'static str,
    changes: u64,
) -> CmdResult<u64> {
    let db = ctx.db();
    if items.is_empty() {
        if ctx.txn.delete_key(db, key)? {
            ctx.notify(class::GENERIC, "del", key);
            ctx.dirty(1);
        }
        return Ok(0);
    }
    let stored = ctx.txn.zset_store(db, key, items)?;
    ctx.notify(class::ZSET, event, key);
    ctx.dirty(changes);
    Ok(stored)
}

// ---------------------------------------------------------------------------
// ZADD, ZINCRBY, ZSCORE, ZMSCORE, ZCARD, ZCOUNT, ZLEXCOUNT, ZRANK, ZREM
// ---------------------------------------------------------------------------

fn zadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    zadd_generic(ctx, args, false)
}

fn zincrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    zadd_generic(ctx, args, true)
}

/// Redis's zaddGenericCommand: options, then score/member pairs (all
/// scores parsed before anything changes).
fn zadd_generic(ctx: &mut Ctx<'_>, args: &[Bytes], incr_command: bool) -> CmdResult {
    let key = &args[1];
    let mut flags = ZAddFlags {
        incr: incr_command,
        ..ZAddFlags::default()
    };
    let mut ch = false;
    let mut at = 2;
    while let Some(opt) = args.get(at) {
        if is(opt, "nx") {
            flags.nx = true;
        } else if is(opt, "xx") {
            flags.xx = true;
        } else if is(opt, "ch") {
            ch = true;
        } else if is(opt, "incr") {
            flags.incr = true;
        } else if is(opt, "gt") {
            flags.gt = true;
        } else if is(opt, "lt") {
            flags.lt = true;
        } else {
            break;
        }
        at += 1;
    }
    let pairs = &args[at..];
    if pairs.is_empty() || !pairs.len().is_multiple_of(2) {
        return Err(CmdError::Static(SYNTAX));
    }
    if flags.nx && flags.xx {
        return Err(CmdError::Static(
            "ERR XX and NX options at the same time are not compatible",
        ));
    }
    // Any two of GT, LT and NX.
    if [flags.gt, flags.lt, flags.nx]
        .iter()
        .filter(|on| **on)
        .count()
        > 1
    {
        return Err(CmdError::Static(
            "ERR GT, LT, and/or NX options at the same time are not compatible",
        ));
    }
    if flags.incr && pairs.len() > 2 {
        return Err(CmdError::Static(
            "ERR INCR option supports a single increment-element pair",
        ));
    }
    off_thread_if(ctx, (pairs.len() / 2) as u64)?;
    let scored = pairs
        .chunks_exact(2)
        .map(|pair| Ok((score_arg(&pair[0], NOT_FLOAT)?, pair[1].clone())))
        .collect::<CmdResult<Vec<(f64, Bytes)>>>()?;
    add_scored(ctx, key, flags, ch, &scored)
}

/// The type layer under ZADD, ZINCRBY and GEOADD: adds or updates the
/// `(score, member)` pairs of `key` as `flags` say, with ZADD's events,
/// dirty count and reply (`ch`: count updated members too).
pub(crate) fn add_scored(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    flags: ZAddFlags,
    ch: bool,
    scored: &[(f64, Bytes)],
) -> CmdResult {
    let db = ctx.db();
    let found = zset_of(ctx, key)?;
    let no_reply = |flags: ZAddFlags| {
        if flags.incr {
            Reply::Null
        } else {
            Reply::Integer(0)
        }
    };
    let mut coll = match found {
        Some(coll) => coll,
        None if flags.xx => return Ok(no_reply(flags)),
        None => ctx.txn.new_collection(ValueType::ZSet, Bytes::new()),
    };
    let (mut added, mut updated) = (0i64, 0i64);
    let mut last_score = None;
    for (score, member) in scored {
        match ctx
            .txn
            .zset_add(db, key, &mut coll, member, *score, flags)?
        {
            ZAddOutcome::Added(s) => {
                added += 1;
                last_score = Some(s);
            }
            ZAddOutcome::Updated(s) => {
                updated += 1;
                last_score = Some(s);
            }
            ZAddOutcome::Unchanged(s) => last_score = Some(s),
            ZAddOutcome::Skipped => {}
            ZAddOutcome::NotANumber => return Err(CmdError::Static(NAN_RESULT)),
        }
    }
    if added + updated > 0 {
        ctx.txn.save_collection(db, key, &coll)?;
        ctx.notify(class::ZSET, if flags.incr { "zincr" } else { "zadd" }, key);
    }
    ctx.dirty((added + updated) as u64);
    Ok(if flags.incr {
        last_score.map_or(Reply::Null, Reply::Double)
    } else if ch {
        Reply::Integer(added + updated)
    } else {
        Reply::Integer(added)
    })
}

fn zscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let Some(coll) = zset_of(ctx, &args[1])? else {
        return Ok(Reply::Null);
    };
    let score = ctx.txn.zset_score(ctx.db(), &args[1], &coll, &args[2])?;
    Ok(score.map_or(Reply::Null, Reply::Double))
}

fn zmscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    off_thread_if(ctx, (args.len() - 2) as u64)?;
    let coll = zset_of(ctx, &args[1])?;
    let mut out = Vec::with_capacity(args.len() - 2);
    for member in &args[2..] {
        let score = match &coll {
            Some(coll) => ctx.txn.zset_score(ctx.db(), &args[1], coll, member)?,
            None => None,
        };
        out.push(score.map_or(Reply::Null, Reply::Double));
    }
    Ok(Reply::Array(out))
}

fn zcard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let size = zset_of(ctx, &args[1])?.map_or(0, |c| c.size);
    Ok(Reply::Integer(size as i64))
}

fn zcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let range = score_range(&args[2], &args[3])?;
    count_range(ctx, args, RangeSpec::Score(range))
}

fn zlexcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let range = lex_range(&args[2], &args[3])?;
    count_range(ctx, args, RangeSpec::Lex(range))
}

fn zrank(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    rank_generic(ctx, args, false)
}

fn zrevrank(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    rank_generic(ctx, args, true)
}

/// ZRANK walks from the nearer end of the index: O(min(rank, size-rank)).
fn rank_generic(ctx: &mut Ctx<'_>, args: &[Bytes], reverse: bool) -> CmdResult {
    let Some(coll) = zset_of(ctx, &args[1])? else {
        return Ok(Reply::Null);
    };
    let limit = match ctx.txn.mode() {
        ReadMode::MemoryOnly => INLINE_MEMBERS,
        _ => u64::MAX,
    };
    let db = ctx.db();
    match ctx
        .txn
        .zset_rank(db, &args[1], &coll, &args[2], reverse, limit)?
    {
        RankLookup::Missing => Ok(Reply::Null),
        RankLookup::Found(rank, _) => Ok(Reply::Integer(rank as i64)),
        RankLookup::TooFar => {
            off_thread_if(ctx, u64::MAX)?;
            Err(CmdError::Storage(StorageError::Incomplete))
        }
    }
}

fn zrem(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = &args[1];
    let Some(mut coll) = zset_of(ctx, key)? else {
        return Ok(Reply::Integer(0));
    };
    off_thread_if(ctx, (args.len() - 2) as u64)?;
    let db = ctx.db();
    let mut removed = 0;
    for member in &args[2..] {
        if ctx.txn.zset_remove(db, key, &mut coll, member)? {
            removed += 1;
            // Redis stops once the set is gone (and deleted).
            if coll.size == 0 {
                break;
            }
        }
    }
    if removed > 0 {
        ctx.txn.save_collection(db, key, &coll)?;
        ctx.notify(class::ZSET, "zrem", key);
        super::collection::notify_if_emptied(ctx, key, &coll);
    }
    ctx.dirty(removed as u64);
    Ok(Reply::Integer(removed))
}

// ---------------------------------------------------------------------------
// ZRANGE and friends
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum RangeType {
    Auto,
    Rank,
    Score,
    Lex,
}

#[derive(Clone, Copy, PartialEq)]
enum Direction {
    Auto,
    Forward,
    Reverse,
}

fn zrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    zrange_generic(ctx, args, 1, false, RangeType::Auto, Direction::Auto)
}

fn zrevrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    zrange_generic(ctx, args, 1, false, RangeType::Rank, Direction::Reverse)
}

fn zrangebyscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    zrange_generic(ctx, args, 1, false, RangeType::Score, Direction::Forward)
}

fn zrevrangebyscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    zrange_generic(ctx, args, 1, false, RangeType::Score, Direction::Reverse)
}

fn zrangebylex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    zrange_generic(ctx, args, 1, false, RangeType::Lex, Direction::Forward)
}

fn zrevrangebylex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    zrange_generic(ctx, args, 1, false, RangeType::Lex, Direction::Reverse)
}

fn zrangestore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.txn.set_read_lookups(true);
    zrange_generic(ctx, args, 2, true, RangeType::Auto, Direction::Auto)
}

/// Redis's zrangeGenericCommand: `key min max` at `first`, then options
/// (which ones a command accepts depends on what it fixes), then the range.
fn zrange_generic(
    ctx: &mut Ctx<'_>,
    args: &[Bytes],
    first: usize,
    store: bool,
    mut range_type: RangeType,
    mut direction: Direction,
) -> CmdResult {
    let key = &args[first];
    let (mut min_at, mut max_at) = (first + 1, first + 2);
    let mut withscores = false;
    let mut window = Window::ALL;
    let mut j = first + 3;
    while j < args.len() {
        let arg = &args[j];
        let left = args.len() - j - 1;
        if !store && is(arg, "withscores") {
            withscores = true;
        } else if is(arg, "limit") && left >= 2 {
            window.offset = int_arg(&args[j + 1])?;
            window.limit = int_arg(&args[j + 2])?;
            j += 2;
        } else if direction == Direction::Auto && is(arg, "rev") {
            direction = Direction::Reverse;
        } else if range_type == RangeType::Auto && is(arg, "bylex") {
            range_type = RangeType::Lex;
        } else if range_type == RangeType::Auto && is(arg, "byscore") {
            range_type = RangeType::Score;
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
        j += 1;
    }
    let reverse = direction == Direction::Reverse;
    if range_type == RangeType::Auto {
        range_type = RangeType::Rank;
    }
    if window.limit != -1 && range_type == RangeType::Rank {
        return Err(CmdError::Static(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ));
    }
    if withscores && range_type == RangeType::Lex {
        return Err(CmdError::Static(
            "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
        ));
    }
    if reverse && range_type != RangeType::Rank {
        std::mem::swap(&mut min_at, &mut max_at);
    }
    enum Parsed {
        Rank(i64, i64),
        Range(RangeSpec),
    }
    let parsed = match range_type {
        RangeType::Score => {
            Parsed::Range(RangeSpec::Score(score_range(&args[min_at], &args[max_at])?))
        }
        RangeType::Lex => Parsed::Range(RangeSpec::Lex(lex_range(&args[min_at], &args[max_at])?)),
        _ => Parsed::Rank(int_arg(&args[min_at])?, int_arg(&args[max_at])?),
    };
    // ZRANGESTORE sizes its result for a rank range's length up front.
    let mut sized_big = false;
    let items = match zset_of(ctx, key)? {
        None => Vec::new(),
        Some(coll) => match parsed {
            Parsed::Rank(start, end) => match rank_span(start, end, coll.size) {
                None => Vec::new(),
                Some((from, to)) if !store && streamed(ctx, to - from + 1) => {
                    stream_range(ctx, key, Streamed::Rank(start, end), reverse, withscores);
                    return Ok(Reply::Null);
                }
                Some((start, end)) => {
                    sized_big =
                        end - start + 1 > ctx.txn.encoding_limits().zset_max_listpack_entries;
                    by_rank(ctx, key, &coll, start, end, reverse)?
                }
            },
            Parsed::Range(spec) if !store && streamed(ctx, coll.size) => {
                match by_range_capped(ctx, key, &coll, &spec, reverse, &window, STREAM_MEMBERS)? {
                    Some(items) => items,
                    None => {
                        let streamed = match spec {
                            RangeSpec::Score(range) => Streamed::Score(range, window),
                            RangeSpec::Lex(range) => Streamed::Lex(range, window),
                        };
                        stream_range(ctx, key, streamed, reverse, withscores);
                        return Ok(Reply::Null);
                    }
                }
            }
            Parsed::Range(spec) => by_range(ctx, key, &coll, &spec, reverse, &window)?,
        },
    };
    if store {
        ctx.txn.set_read_lookups(false);
        let db = ctx.db();
        if items.is_empty() {
            return store_result(ctx, &args[1], items, "zrangestore");
        }
        let stored = ctx
            .txn
            .zset_store_inserted(db, &args[1], items, sized_big)?;
        ctx.notify(class::ZSET, "zrangestore", &args[1]);
        ctx.dirty(1);
        return Ok(Reply::Integer(stored as i64));
    }
    Ok(members_reply(ctx, items, withscores))
}

/// A range reply too big to hold, as the streamed job reads it again.
enum Streamed {
    Rank(i64, i64),
    Score(ScoreRange, Window),
    Lex(LexRange, Window),
}

/// Replies with a range of more than [`STREAM_MEMBERS`] members from a
/// snapshot on a background thread, in batches (see `stream_reply.rs`):
/// the reply is never held whole. A score or lex range is walked twice,
/// once to count (the length comes first) and once to send.
fn stream_range(ctx: &mut Ctx<'_>, key: &Bytes, range: Streamed, reverse: bool, withscores: bool) {
    let (db, key) = (ctx.db(), key.clone());
    let resp3 = ctx.session.protocol == Protocol::Resp3;
    ctx.stream_reply(move |server, sink| {
        let mut view = server.engine.keyspace_view(db)?;
        let Some(coll) = view.collection(&key, ValueType::ZSet)? else {
            sink.array(0);
            return Ok(());
        };
        // Walks the range (all of it for ranks) in the reply's order.
        let walk = |view: &mut KeyspaceView<'_>,
                    visit: &mut dyn FnMut(&[u8], f64) -> bool|
         -> CmdResult<()> {
            match &range {
                Streamed::Rank(..) => {
                    view.zset_scan_scores(&key, &coll, &ScoreRange::ALL, reverse, visit)?
                }
                Streamed::Score(scores, _) => {
                    view.zset_scan_scores(&key, &coll, scores, reverse, visit)?
                }
                Streamed::Lex(lex, _) => view.zset_scan_lex(&key, &coll, lex, reverse, visit)?,
            }
            Ok(())
        };
        let (skip, count) = match &range {
            Streamed::Rank(start, end) => match rank_span(*start, *end, coll.size) {
                Some((start, end)) => (start, end - start + 1),
                None => (0, 0),
            },
            Streamed::Score(_, window) | Streamed::Lex(_, window) => {
                if window.is_empty(coll.size) {
                    (0, 0)
                } else {
                    let skip = window.offset as u64;
                    let limit = u64::try_from(window.limit).unwrap_or(u64::MAX);
                    let mut in_range = 0u64;
                    walk(&mut view, &mut |_, _| {
                        in_range += 1;
                        in_range < skip.saturating_add(limit)
                    })?;
                    (skip, in_range.saturating_sub(skip).min(limit))
                }
            }
        };
        let per_member = if withscores && !resp3 { 2 } else { 1 };
        if !sink.array((count as usize).saturating_mul(per_member)) || count == 0 {
            return Ok(());
        }
        let (mut skipped, mut sent, mut open) = (0u64, 0u64, true);
        walk(&mut view, &mut |member, score| {
            if skipped < skip {
                skipped += 1;
                return true;
            }
            let member = Reply::Bulk(Bytes::copy_from_slice(member));
            open = match (withscores, resp3) {
                (false, _) => sink.item(member),
                (true, false) => sink.item(member) && sink.item(Reply::Double(score)),
                (true, true) => sink.item(Reply::Array(vec![member, Reply::Double(score)])),
            };
            sent += 1;
            open && sent < count
        })?;
        if open && sent < count {
            return Err(CmdError::Storage(StorageError::Corrupt("zset index")));
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------
// ZREMRANGEBY*, ZPOPMIN/ZPOPMAX, ZMPOP, ZRANDMEMBER
// ---------------------------------------------------------------------------

fn zremrangebyrank(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (start, end) = (int_arg(&args[2])?, int_arg(&args[3])?);
    let key = &args[1];
    let Some(mut coll) = zset_of(ctx, key)? else {
        return Ok(Reply::Integer(0));
    };
    let Some((start, end)) = rank_span(start, end, coll.size) else {
        return Ok(Reply::Integer(0));
    };
    let items = by_rank(ctx, key, &coll, start, end, false)?;
    remove_all(ctx, key, &mut coll, &items, "zremrangebyrank")?;
    Ok(Reply::Integer(items.len() as i64))
}

fn zremrangebyscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let range = score_range(&args[2], &args[3])?;
    remove_range(ctx, args, RangeSpec::Score(range))
}

fn zremrangebylex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let range = lex_range(&args[2], &args[3])?;
    remove_range(ctx, args, RangeSpec::Lex(range))
}

fn remove_range(ctx: &mut Ctx<'_>, args: &[Bytes], spec: RangeSpec) -> CmdResult {
    let key = &args[1];
    let Some(mut coll) = zset_of(ctx, key)? else {
        return Ok(Reply::Integer(0));
    };
    let items = by_range(ctx, key, &coll, &spec, false, &Window::ALL)?;
    let event = match spec {
        RangeSpec::Score(_) => "zremrangebyscore",
        _ => "zremrangebylex",
    };
    remove_all(ctx, key, &mut coll, &items, event)?;
    Ok(Reply::Integer(items.len() as i64))
}

fn zpopmin(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    zpop_command(ctx, args, false)
}

fn zpopmax(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    zpop_command(ctx, args, true)
}

/// ZPOPMIN/ZPOPMAX `key [count]`: a flat array, or in RESP3 with a count
/// `[member, score]` pairs.
fn zpop_command(ctx: &mut Ctx<'_>, args: &[Bytes], max: bool) -> CmdResult {
    if args.len() > 3 {
        return Err(CmdError::Static(SYNTAX));
    }
    let count = match args.get(2) {
        Some(arg) => Some(positive_arg(arg, MUST_BE_POSITIVE)? as u64),
        None => None,
    };
    let key = &args[1];
    let Some(coll) = zset_of(ctx, key)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    if count == Some(0) {
        return Ok(Reply::Array(Vec::new()));
    }
    let items = pop(ctx, key, coll, count.unwrap_or(1), max)?;
    let nested = count.is_some() && ctx.session.protocol == Protocol::Resp3;
    if nested {
        return Ok(members_reply(ctx, items, true));
    }
    let mut out = Vec::with_capacity(items.len() * 2);
    for (member, score) in items {
        out.push(Reply::Bulk(member));
        out.push(Reply::Double(score));
    }
    Ok(Reply::Array(out))
}

/// Removes and returns up to `count` members from the low (or `max`, the
/// high) end.
fn pop(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    mut coll: Collection,
    count: u64,
    max: bool,
) -> CmdResult<Vec<(Bytes, f64)>> {
    let take = count.min(coll.size);
    off_thread_if(ctx, take)?;
    let items = by_rank(ctx, key, &coll, 0, take.saturating_sub(1), max)?;
    let event = if max { "zpopmax" } else { "zpopmin" };
    remove_all(ctx, key, &mut coll, &items, event)?;
    Ok(items)
}

/// `ZPOPMIN/ZPOPMAX key`: the member and its score, or `None` for a
/// missing key (BZPOPMIN/BZPOPMAX).
pub(crate) fn pop_end(ctx: &mut Ctx<'_>, key: &[u8], max: bool) -> CmdResult<Option<(Bytes, f64)>> {
    let Some(coll) = zset_of(ctx, key)? else {
        return Ok(None);
    };
    Ok(pop(ctx, key, coll, 1, max)?.into_iter().next())
}

/// The arguments of ZMPOP/BZMPOP: which keys, which end, how many.
pub(crate) struct MultiPop {
    /// Indexes of the keys in the arguments.
    pub keys: std::ops::Range<usize>,
    pub max: bool,
    pub count: u64,
}

/// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
fn zmpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let pop = parse_multi_pop(args, 1)?;
    multi_pop(ctx, &args[pop.keys.clone()], pop.max, pop.count)
}

/// Parses `numkeys key... MIN|MAX [COUNT count]` from `numkeys_at` (ZMPOP:
/// 1, BZMPOP: 2), with Redis's errors in its order.
pub(crate) fn parse_multi_pop(args: &[Bytes], numkeys_at: usize) -> CmdResult<MultiPop> {
    const NUMKEYS: &str = "ERR numkeys should be greater than 0";
    let numkeys = match args.get(numkeys_at).and_then(|arg| parse_i64(arg)) {
        Some(n) if n >= 1 => n as usize,
        _ => return Err(CmdError::Static(NUMKEYS)),
    };
    let where_at = numkeys.saturating_add(numkeys_at + 1);
    let Some(which) = args.get(where_at) else {
        return Err(CmdError::Static(SYNTAX));
    };
    let max = if is(which, "min") {
        false
    } else if is(which, "max") {
        true
    } else {
        return Err(CmdError::Static(SYNTAX));
    };
    let mut count: Option<u64> = None;
    let mut opts = ArgCursor::new(args, where_at + 1);
    while let Some(opt) = opts.next_arg() {
        if count.is_none() && is(opt, "count") && opts.peek().is_some() {
            match parse_i64(opts.value()?) {
                Some(n) if n >= 1 => count = Some(n as u64),
                _ => return Err(CmdError::Static("ERR count should be greater than 0")),
            }
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    Ok(MultiPop {
        keys: numkeys_at + 1..where_at,
        max,
        count: count.unwrap_or(1),
    })
}

/// Pops up to `count` members from the first non-empty sorted set of
/// `keys`: `[key, [[member, score]...]]`, or a null array.
pub(crate) fn multi_pop(ctx: &mut Ctx<'_>, keys: &[Bytes], max: bool, count: u64) -> CmdResult {
    for key in keys {
        let Some(coll) = zset_of(ctx, key)? else {
            continue;
        };
        let items = pop(ctx, key, coll, count, max)?;
        // Replicated as the deterministic pop it became.
        let count_text = count.to_string();
        let command: &[u8] = if max { b"ZPOPMAX" } else { b"ZPOPMIN" };
        ctx.replay_as(&[command, key, count_text.as_bytes()]);
        return Ok(Reply::Array(vec![
            Reply::Bulk(key.clone()),
            members_reply_nested(items),
        ]));
    }
    Ok(Reply::NullArray)
}

/// `[member, score]` pairs in every protocol (ZMPOP).
fn members_reply_nested(items: Vec<(Bytes, f64)>) -> Reply {
    Reply::Array(
        items
            .into_iter()
            .map(|(m, s)| Reply::Array(vec![Reply::Bulk(m), Reply::Double(s)]))
            .collect(),
    )
}

/// ZRANDMEMBER key [count [WITHSCORES]]
fn zrandmember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = &args[1];
    let db = ctx.db();
    if args.len() == 2 {
        let Some(coll) = zset_of(ctx, key)? else {
            return Ok(Reply::Null);
        };
        let picked = ctx
            .txn
            .random_members(Cf::Data, db, key, &coll, 1, rand::random())?;
        return Ok(picked
            .into_iter()
            .next()
            .map_or(Reply::Null, |(member, _)| Reply::Bulk(member)));
    }
    let count = match parse_i64(&args[2]) {
        Some(n) if n != i64::MIN => n,
        Some(_) => {
            return Err(CmdError::Static(
                "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
            ))
        }
        None => return Err(CmdError::Static(NOT_INTEGER)),
    };
    if args.len() > 4 || (args.len() == 4 && !is(&args[3], "withscores")) {
        return Err(CmdError::Static(SYNTAX));
    }
    let withscores = args.len() == 4;
    if withscores && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&count) {
        return Err(CmdError::Static("ERR value is out of range"));
    }
    let Some(coll) = zset_of(ctx, key)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    if count == 0 {
        return Ok(Reply::Array(Vec::new()));
    }
    let wanted = count.unsigned_abs();
    let items: Vec<(Bytes, f64)> = if count > 0 {
        // Distinct members.
        off_thread_if(ctx, wanted.min(coll.size))?;
        let take = wanted.min(coll.size) as usize;
        ctx.txn
            .random_members(Cf::Data, db, key, &coll, take, rand::random())?
            .into_iter()
            .map(decode_member)
            .collect::<CmdResult<_>>()?
    } else if streamed(ctx, wanted) {
        stream_random(ctx, key, wanted, withscores);
        return Ok(Reply::Null);
    } else {
        off_thread_if(ctx, wanted)?;
        let mut picks = Vec::with_capacity(wanted as usize);
        random_picks(&mut ctx.txn, db, key, &coll, wanted, |pick| {
            picks.push(pick);
            true
        })?;
        picks
    };
    Ok(members_reply(ctx, items, withscores))
}

/// A member and its score as `random_members` returns them from `data`.
fn decode_member((member, raw): (Bytes, Bytes)) -> CmdResult<(Bytes, f64)> {
    let bits: [u8; 8] = raw
        .as_ref()
        .try_into()
        .map_err(|_| CmdError::Storage(StorageError::Corrupt("zset score")))?;
    Ok((member, f64::from_bits(u64::from_be_bytes(bits))))
}

/// `wanted` independent random picks (repeats allowed), each handed to
/// `emit` until it returns false. A set of up to 1024 members is read once
/// and picked from; a bigger one is sampled by a seek per pick.
fn random_picks(
    txn: &mut Txn<'_>,
    db: u8,
    key: &[u8],
    coll: &Collection,
    wanted: u64,
    mut emit: impl FnMut((Bytes, f64)) -> bool,
) -> CmdResult<()> {
    if coll.size <= 1024 {
        let pool: Vec<(Bytes, f64)> = txn
            .random_members(Cf::Data, db, key, coll, coll.size as usize, rand::random())?
            .into_iter()
            .map(decode_member)
            .collect::<CmdResult<_>>()?;
        for _ in 0..wanted {
            let at = rand::random_range(0..pool.len().max(1));
            if let Some(item) = pool.get(at) {
                if !emit(item.clone()) {
                    break;
                }
            }
        }
        return Ok(());
    }
    for _ in 0..wanted {
        for item in txn.random_members(Cf::Data, db, key, coll, 1, rand::random())? {
            if !emit(decode_member(item)?) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// ZRANDMEMBER with a negative count above [`STREAM_MEMBERS`]: the picks
/// are streamed from a background thread, never held whole (a count of
/// billions costs the client's reading time, not the server's memory).
fn stream_random(ctx: &mut Ctx<'_>, key: &Bytes, wanted: u64, withscores: bool) {
    let (db, key) = (ctx.db(), key.clone());
    let resp3 = ctx.session.protocol == Protocol::Resp3;
    ctx.stream_reply(move |server, sink| {
        let mut txn = server.engine.txn(ReadMode::Blocking);
        let Some(coll) = txn.collection(db, &key, ValueType::ZSet)? else {
            sink.array(0);
            return Ok(());
        };
        let per_member = if withscores && !resp3 { 2 } else { 1 };
        if !sink.array((wanted as usize).saturating_mul(per_member)) {
            return Ok(());
        }
        let mut sent = 0u64;
        random_picks(&mut txn, db, &key, &coll, wanted, |(member, score)| {
            sent += 1;
            match (withscores, resp3) {
                (false, _) => sink.item(Reply::Bulk(member)),
                (true, false) => sink.item(Reply::Bulk(member)) && sink.item(Reply::Double(score)),
                (true, true) => sink.item(Reply::Array(vec![
                    Reply::Bulk(member),
                    Reply::Double(score),
                ])),
            }
        })?;
        if sent < wanted {
            // The client left, or the set could not be sampled.
            return Err(CmdError::Storage(StorageError::Corrupt("zset sample")));
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------
// ZUNION, ZINTER, ZDIFF, their STORE forms, ZINTERCARD
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum SetOp {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy, PartialEq)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

impl Aggregate {
    /// Redis's zunionInterAggregate (a NaN sum becomes 0).
    fn apply(self, target: &mut f64, value: f64) {
        match self {
            Aggregate::Sum => {
                *target += value;
                if target.is_nan() {
                    *target = 0.0;
                }
            }
            // Comparisons as in C: -0 and 0 tie and the first one stays.
            Aggregate::Min if value < *target => *target = value,
            Aggregate::Max if value > *target => *target = value,
            Aggregate::Min | Aggregate::Max => {}
        }
    }
}

/// One input of a set operation: a sorted set, a set (every score 1), or
/// a missing key.
struct Source {
    key: Bytes,
    coll: Option<Collection>,
    weight: f64,
}

impl Source {
    fn len(&self) -> u64 {
        self.coll.as_ref().map_or(0, |c| c.size)
    }
}

fn zunion(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    set_op(ctx, args, None, 1, SetOp::Union, false)
}

fn zinter(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    set_op(ctx, args, None, 1, SetOp::Inter, false)
}

fn zdiff(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    set_op(ctx, args, None, 1, SetOp::Diff, false)
}

fn zunionstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // Redis reads the sources with lookupKeyRead: a missing one is a keymiss.
    ctx.txn.set_read_lookups(true);
    set_op(ctx, args, Some(&args[1]), 2, SetOp::Union, false)
}

fn zinterstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.txn.set_read_lookups(true);
    set_op(ctx, args, Some(&args[1]), 2, SetOp::Inter, false)
}

fn zdiffstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.txn.set_read_lookups(true);
    set_op(ctx, args, Some(&args[1]), 2, SetOp::Diff, false)
}

fn zintercard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    set_op(ctx, args, None, 1, SetOp::Inter, true)
}

/// Redis's zunionInterDiffGenericCommand: numkeys, the keys (looked up,
/// WRONGTYPE first), then WEIGHTS/AGGREGATE/WITHSCORES/LIMIT.
fn set_op(
    ctx: &mut Ctx<'_>,
    args: &[Bytes],
    dst: Option<&Bytes>,
    numkeys_at: usize,
    op: SetOp,
    cardinality_only: bool,
) -> CmdResult {
    let numkeys = int_arg(&args[numkeys_at])?;
    if numkeys < 1 {
        return Err(CmdError::Owned(format!(
            "ERR at least 1 input key is needed for '{}' command",
            String::from_utf8_lossy(&args[0]).to_ascii_lowercase()
        )));
    }
    let first_key = numkeys_at + 1;
    if numkeys as u64 > (args.len() - first_key) as u64 {
        return Err(CmdError::Static(SYNTAX));
    }
    let numkeys = numkeys as usize;
    let mut sources = Vec::with_capacity(numkeys);
    for key in &args[first_key..first_key + numkeys] {
        let coll = match ctx.txn.collection(ctx.db(), key, ValueType::ZSet) {
            Err(StorageError::WrongType) => ctx.txn.collection(ctx.db(), key, ValueType::Set)?,
            other => other?,
        };
        sources.push(Source {
            key: key.clone(),
            coll,
            weight: 1.0,
        });
    }
    let mut aggregate = Aggregate::Sum;
    let mut withscores = false;
    let mut limit = 0u64;
    let mut j = first_key + numkeys;
    while j < args.len() {
        let remaining = args.len() - j;
        let arg = &args[j];
        if op != SetOp::Diff && !cardinality_only && remaining > numkeys && is(arg, "weights") {
            for (i, source) in sources.iter_mut().enumerate() {
                source.weight = score_arg(&args[j + 1 + i], "ERR weight value is not a float")?;
            }
            j += 1 + numkeys;
        } else if op != SetOp::Diff && !cardinality_only && remaining >= 2 && is(arg, "aggregate") {
            let which = &args[j + 1];
            aggregate = if is(which, "sum") {
                Aggregate::Sum
            } else if is(which, "min") {
                Aggregate::Min
            } else if is(which, "max") {
                Aggregate::Max
            } else {
                return Err(CmdError::Static(SYNTAX));
            };
            j += 2;
        } else if dst.is_none() && !cardinality_only && is(arg, "withscores") {
            withscores = true;
            j += 1;
        } else if cardinality_only && remaining >= 2 && is(arg, "limit") {
            limit = positive_arg(&args[j + 1], "ERR LIMIT can't be negative")? as u64;
            j += 2;
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    if op != SetOp::Diff {
        // Smallest first (a stable sort, as glibc's qsort is here).
        sources.sort_by_key(Source::len);
    }
    let work: u64 = match op {
        SetOp::Union => sources.iter().map(Source::len).sum(),
        SetOp::Inter => sources
            .first()
            .map_or(0, |s| s.len().saturating_mul(numkeys as u64)),
        SetOp::Diff => sources
            .first()
            .map_or(0, |s| s.len().saturating_mul(numkeys as u64)),
    };
    off_thread_if(ctx, work)?;
    let items = match op {
        SetOp::Union => union_of(ctx, &sources, aggregate)?,
        SetOp::Inter => inter_of(ctx, &sources, aggregate, limit, cardinality_only)?,
        SetOp::Diff => diff_of(ctx, &sources)?,
    };
    if cardinality_only {
        return Ok(Reply::Integer(items.len() as i64));
    }
    let mut items = items;
    items.sort_by(|a, b| a.1.total_cmp_redis(b.1).then_with(|| a.0.cmp(&b.0)));
    match dst {
        Some(dst) => {
            ctx.txn.set_read_lookups(false);
            let event = match op {
                SetOp::Union => "zunionstore",
                SetOp::Inter => "zinterstore",
                SetOp::Diff => "zdiffstore",
            };
            store_result(ctx, dst, items, event)
        }
        None => Ok(members_reply(ctx, items, withscores)),
    }
}

/// Redis orders scores with `<` and `==`: -0 and 0 tie.
trait RedisOrder {
    fn total_cmp_redis(self, other: f64) -> std::cmp::Ordering;
}

impl RedisOrder for f64 {
    fn total_cmp_redis(self, other: f64) -> std::cmp::Ordering {
        self.partial_cmp(&other)
            .unwrap_or(std::cmp::Ordering::Equal)
    }
}

/// Every member of a source with its score (1 for a set member), in the
/// source's order.
fn source_members(ctx: &mut Ctx<'_>, source: &Source) -> CmdResult<Vec<(Bytes, f64)>> {
    let Some(coll) = &source.coll else {
        return Ok(Vec::new());
    };
    let db = ctx.db();
    let mut out = Vec::with_capacity(coll.size.min(1 << 20) as usize);
    if coll.value_type == ValueType::ZSet {
        ctx.txn
            .zset_scan_scores(db, &source.key, coll, &ScoreRange::ALL, false, |m, s| {
                out.push((Bytes::copy_from_slice(m), s));
                true
            })?;
    } else {
        ctx.txn.scan_members(
            Cf::Data,
            db,
            &source.key,
            coll,
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            false,
            |m, _| {
                out.push((Bytes::copy_from_slice(m), 1.0));
                true
            },
        )?;
    }
    Ok(out)
}

/// The score of `member` in a source, if it is there.
fn source_score(ctx: &mut Ctx<'_>, source: &Source, member: &[u8]) -> CmdResult<Option<f64>> {
    let Some(coll) = &source.coll else {
        return Ok(None);
    };
    let db = ctx.db();
    if coll.value_type == ValueType::ZSet {
        return Ok(ctx.txn.zset_score(db, &source.key, coll, member)?);
    }
    let found = ctx
        .txn
        .get_member(Cf::Data, db, &source.key, coll, member)?;
    Ok(found.map(|_| 1.0))
}

/// A weighted score; Redis turns NaN (0 × inf) into 0.
fn weighted(weight: f64, score: f64) -> f64 {
    let value = weight * score;
    if value.is_nan() {
        0.0
    } else {
        value
    }
}

fn union_of(
    ctx: &mut Ctx<'_>,
    sources: &[Source],
    aggregate: Aggregate,
) -> CmdResult<Vec<(Bytes, f64)>> {
    let mut order: Vec<Bytes> = Vec::new();
    let mut scores: HashMap<Bytes, f64> = HashMap::new();
    for source in sources {
        for (member, score) in source_members(ctx, source)? {
            let value = weighted(source.weight, score);
            match scores.get_mut(&member) {
                Some(total) => aggregate.apply(total, value),
                None => {
                    order.push(member.clone());
                    scores.insert(member, value);
                }
            }
        }
    }
    Ok(order
        .into_iter()
        .filter_map(|m| scores.get(&m).map(|s| (m.clone(), *s)))
        .collect())
}

fn inter_of(
    ctx: &mut Ctx<'_>,
    sources: &[Source],
    aggregate: Aggregate,
    limit: u64,
    cardinality_only: bool,
) -> CmdResult<Vec<(Bytes, f64)>> {
    let mut out = Vec::new();
    let Some((smallest, others)) = sources.split_first() else {
        return Ok(out);
    };
    'members: for (member, score) in source_members(ctx, smallest)? {
        let mut total = weighted(smallest.weight, score);
        for other in others {
            match source_score(ctx, other, &member)? {
                Some(s) => aggregate.apply(&mut total, weighted(other.weight, s)),
                None => continue 'members,
            }
        }
        out.push((member, total));
        if cardinality_only && limit > 0 && out.len() as u64 >= limit {
            break;
        }
    }
    Ok(out)
}

fn diff_of(ctx: &mut Ctx<'_>, sources: &[Source]) -> CmdResult<Vec<(Bytes, f64)>> {
    let mut out = Vec::new();
    let Some((first, others)) = sources.split_first() else {
        return Ok(out);
    };
    'members: for (member, score) in source_members(ctx, first)? {
        for other in others {
            if source_score(ctx, other, &member)?.is_some() {
                continue 'members;
            }
        }
        out.push((member, score));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// ZSCAN, DUMP, RESTORE
// ---------------------------------------------------------------------------

/// ZSCAN: a compact set is returned whole in score order with cursor 0
/// (as Redis returns a listpack); a big one is walked through
/// [`member_scan`] in member order.
fn zscan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let cursor_ok = parse_cursor(&args[2]).is_some();
    if !cursor_ok {
        return Err(CmdError::Static("ERR invalid cursor"));
    }
    let key = &args[1];
    let Some(coll) = zset_of(ctx, key)? else {
        return member_scan(ctx, args, ValueType::ZSet, Cf::Data, emit_big_member);
    };
    if coll.big {
        return member_scan(ctx, args, ValueType::ZSet, Cf::Data, emit_big_member);
    }
    let mut pattern = None;
    let mut opts = ArgCursor::new(args, 3);
    while let Some(opt) = opts.next_arg() {
        if is(opt, "match") && opts.peek().is_some() {
            pattern = Some(KeyPattern::new(opts.value()?));
        } else if is(opt, "count") && opts.peek().is_some() {
            if opts.int_value()? < 1 {
                return Err(CmdError::Static(SYNTAX));
            }
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    let mut items = Vec::new();
    ctx.txn.zset_scan_scores(
        ctx.db(),
        key,
        &coll,
        &ScoreRange::ALL,
        false,
        |member, score| {
            if pattern.as_ref().is_none_or(|p| p.matches(member)) {
                items.push(Reply::Bulk(Bytes::copy_from_slice(member)));
                items.push(Reply::Bulk(Bytes::from(crate::rdb::score_text(score))));
            }
            true
        },
    )?;
    Ok(Reply::Array(vec![
        Reply::Bulk(Bytes::from_static(b"0")),
        Reply::Array(items),
    ]))
}

/// A big set's member and score as Redis's ZSCAN of a skiplist prints it.
fn emit_big_member(items: &mut Vec<Reply>, member: &[u8], value: &Bytes) {
    let score = <[u8; 8]>::try_from(value.as_ref())
        .map(|bits| f64::from_bits(u64::from_be_bytes(bits)))
        .unwrap_or(f64::NAN);
    items.push(Reply::Bulk(Bytes::copy_from_slice(member)));
    items.push(Reply::Bulk(Bytes::from(firn_resp::format_double(score))));
}

/// The whole sorted set, for DUMP (the caller has moved off-thread).
pub fn dump_value(ctx: &mut Ctx<'_>, key: &[u8], coll: &Collection) -> CmdResult<RdbValue> {
    let mut members = Vec::with_capacity(coll.size.min(1 << 20) as usize);
    ctx.txn.zset_scan_scores(
        ctx.db(),
        key,
        coll,
        &ScoreRange::ALL,
        false,
        |member, score| {
            members.push((member.to_vec(), score));
            true
        },
    )?;
    Ok(RdbValue::SortedSet(members))
}

/// Stores a restored sorted set (RESTORE has cleared `key`).
pub fn restore_value(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    members: Vec<(Vec<u8>, f64)>,
    expire_at_ms: u64,
) -> CmdResult<()> {
    let db = ctx.db();
    ctx.txn.zset_store(
        db,
        key,
        members.into_iter().map(|(m, s)| (Bytes::from(m), s)),
    )?;
    if expire_at_ms > 0 {
        ctx.txn.set_expire_at(db, key, expire_at_ms)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_parse_like_get_double_from_object() {
        assert_eq!(parse_double(b"1.5"), Some(1.5));
        assert_eq!(parse_double(b"0x10"), Some(16.0));
        assert_eq!(parse_double(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_double(b"+inf"), Some(f64::INFINITY));
        assert_eq!(parse_double(b"4.9e-324"), Some(4.9e-324));
        for bad in [
            &b"nan"[..],
            b"1e400",
            b"1e-400",
            b" 1",
            b"",
            b"1 ",
            b"1\x002",
            b"abc",
        ] {
            assert_eq!(
                parse_double(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn range_bounds_parse_like_zsl_parse_range() {
        assert_eq!(parse_score_bound(b"(1"), Some((1.0, true)));
        assert_eq!(parse_score_bound(b" 1"), Some((1.0, false)));
        assert_eq!(parse_score_bound(b""), Some((0.0, false)));
        assert_eq!(parse_score_bound(b"("), Some((0.0, true)));
        assert_eq!(parse_score_bound(b"1e400"), Some((f64::INFINITY, false)));
        assert_eq!(parse_score_bound(b"1\x00x"), Some((1.0, false)));
        assert_eq!(parse_score_bound(b"(nan"), None);
        assert_eq!(parse_score_bound(b"1x"), None);
    }

    #[test]
    fn lex_bounds() {
        assert_eq!(parse_lex_bound(b"-"), Some(LexBound::Min));
        assert_eq!(parse_lex_bound(b"+"), Some(LexBound::Max));
        assert_eq!(parse_lex_bound(b"+a"), None);
        assert_eq!(parse_lex_bound(b"a"), None);
        assert_eq!(parse_lex_bound(b""), None);
        assert_eq!(
            parse_lex_bound(b"(a"),
            Some(LexBound::Exclusive(Bytes::from_static(b"a")))
        );
    }

    #[test]
    fn rank_spans_follow_redis() {
        assert_eq!(rank_span(0, -1, 3), Some((0, 2)));
        assert_eq!(rank_span(-100, 100, 3), Some((0, 2)));
        assert_eq!(rank_span(2, 1, 3), None);
        assert_eq!(rank_span(3, 5, 3), None);
        assert_eq!(rank_span(0, -4, 3), None);
    }
}
