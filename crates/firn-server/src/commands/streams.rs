//! Streams: XADD, ranges, trimming, XREAD, consumer groups (XGROUP,
//! XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM), XINFO and XSETID, with
//! Redis 7.0.15's replies and errors (t_stream.c).
//!
//! Storage (firn-storage `stream.rs`): one record per entry, per node, per
//! group, per pending entry and per consumer, so every command here costs
//! what it returns or changes. XREAD and XREADGROUP with BLOCK wait on the
//! blocking machinery (`blocking/state.rs`) like BLPOP: a suspended future
//! with no lock, woken by the writes Redis signals (XADD, a group
//! destroyed, the key created, deleted or replaced), which runs the
//! command again over the keys written, in write order
//! ([`serve_written`]).

use bytes::Bytes;
use firn_resp::{Protocol, Reply};
use firn_storage::{
    notify_class as class, AppendError, PendingEntry, StreamGroup, StreamId, StreamMeta, Trim,
};
use std::sync::atomic::Ordering;

use super::offload::off_thread_if;
use super::replies::help_reply;
use super::{def, Ctx, Def, Deferred, Traits};
use crate::args::{int_arg, is, parse_i64};
use crate::blocking::state::{BlockOn, Wake};
use crate::errors::{subcommand_syntax, wrong_arity, CmdError, CmdResult, SYNTAX};
use crate::rdb::{
    PendingEntry as RdbPending, RdbValue, StreamConsumer as RdbConsumer, StreamGroup as RdbGroup,
    StreamId as RdbId, StreamValue as RdbStream,
};

pub const COMMANDS: &[Def] = &[
    def("xadd", xadd),
    def("xrange", xrange),
    def("xrevrange", xrevrange),
    def("xlen", xlen),
    def("xdel", xdel).with(Traits::ADDS_NOTHING),
    def("xtrim", xtrim).with(Traits::ADDS_NOTHING),
    def("xread", xread),
    def("xreadgroup", xread).with(Traits::ADDS_NOTHING.with(Traits::QUIET)),
    def("xgroup|create", xgroup).with(Traits::ADDS_NOTHING.with(Traits::QUIET)),
    def("xgroup|setid", xgroup).with(Traits::ADDS_NOTHING.with(Traits::QUIET)),
    def("xgroup|destroy", xgroup).with(Traits::QUIET),
    def("xgroup|createconsumer", xgroup).with(Traits::ADDS_NOTHING.with(Traits::QUIET)),
    def("xgroup|delconsumer", xgroup).with(Traits::ADDS_NOTHING.with(Traits::QUIET)),
    def("xgroup|help", xgroup),
    def("xack", xack).with(Traits::ADDS_NOTHING.with(Traits::QUIET)),
    def("xpending", xpending),
    def("xclaim", xclaim).with(Traits::ADDS_NOTHING.with(Traits::QUIET)),
    def("xautoclaim", xautoclaim).with(Traits::ADDS_NOTHING.with(Traits::QUIET)),
    def("xinfo|stream", xinfo),
    def("xinfo|groups", xinfo),
    def("xinfo|consumers", xinfo),
    def("xinfo|help", xinfo),
    def("xsetid", xsetid).with(Traits::ADDS_NOTHING.with(Traits::QUIET)),
];

const INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";

/// A blocked XREAD without COUNT is served this many entries at most
/// (XREAD_BLOCKED_DEFAULT_COUNT).
const BLOCKED_DEFAULT_COUNT: u64 = 1000;

// ---- IDs ----

/// Redis's streamGenericParseIDOrReply: `-` and `+` (unless `strict`),
/// `ms-seq`, or `ms` alone with `missing_seq`; with `star`, `ms-*` too,
/// which leaves the sequence to the stream (the `bool` is then false).
fn parse_id_full(
    arg: &[u8],
    missing_seq: u64,
    strict: bool,
    star: bool,
) -> Option<(StreamId, bool)> {
    if arg.len() > 127 {
        return None;
    }
    // A C string: it ends at the first NUL.
    let text = match arg.iter().position(|&b| b == 0) {
        Some(nul) => &arg[..nul],
        None => arg,
    };
    match text {
        b"-" | b"+" if strict => None,
        b"-" => Some((StreamId::MIN, true)),
        b"+" => Some((StreamId::MAX, true)),
        _ => {
            let (ms, seq) = match text.iter().position(|&b| b == b'-') {
                Some(dash) => (&text[..dash], Some(&text[dash + 1..])),
                None => (text, None),
            };
            let ms = firn_prims::string2ull(ms)?;
            match seq {
                Some(b"*") if star => Some((StreamId::new(ms, 0), false)),
                Some(seq) => Some((StreamId::new(ms, firn_prims::string2ull(seq)?), true)),
                None => Some((StreamId::new(ms, missing_seq), true)),
            }
        }
    }
}

fn parse_id(arg: &[u8], missing_seq: u64, strict: bool) -> CmdResult<StreamId> {
    parse_id_full(arg, missing_seq, strict, false)
        .map(|(id, _)| id)
        .ok_or(CmdError::Static(INVALID_ID))
}

fn strict_id(arg: &[u8]) -> CmdResult<StreamId> {
    parse_id(arg, 0, true)
}

/// A range bound (streamParseIntervalIDOrReply): `(` makes it exclusive.
fn interval_id(arg: &[u8], missing_seq: u64) -> CmdResult<(StreamId, bool)> {
    if arg.len() > 1 && arg[0] == b'(' {
        Ok((parse_id(&arg[1..], missing_seq, true)?, true))
    } else {
        Ok((parse_id(arg, missing_seq, false)?, false))
    }
}

/// The start of a range, moved past an exclusive bound.
fn range_start(arg: &[u8]) -> CmdResult<StreamId> {
    match interval_id(arg, 0)? {
        (id, false) => Ok(id),
        (id, true) => id
            .next()
            .ok_or(CmdError::Static("ERR invalid start ID for the interval")),
    }
}

fn range_end(arg: &[u8]) -> CmdResult<StreamId> {
    match interval_id(arg, u64::MAX)? {
        (id, false) => Ok(id),
        (id, true) => id
            .prev()
            .ok_or(CmdError::Static("ERR invalid end ID for the interval")),
    }
}

fn id_reply(id: StreamId) -> Reply {
    Reply::Bulk(Bytes::from(id.to_string()))
}

fn entry_reply(id: StreamId, pairs: Vec<(Bytes, Bytes)>) -> Reply {
    let mut fields = Vec::with_capacity(pairs.len() * 2);
    for (f, v) in pairs {
        fields.push(Reply::Bulk(f));
        fields.push(Reply::Bulk(v));
    }
    Reply::Array(vec![id_reply(id), Reply::Array(fields)])
}

/// Milliseconds since `at`, in Redis's signed arithmetic (a delivery or
/// seen time from a RESTORE payload may be anything): wraps, never panics.
fn idle_ms(now: i64, at: u64) -> i64 {
    now.wrapping_sub(at as i64)
}

fn long_arg(arg: &[u8], error: &'static str) -> CmdResult<i64> {
    parse_i64(arg).ok_or(CmdError::Static(error))
}

fn key_text(key: &[u8]) -> String {
    String::from_utf8_lossy(crate::errors::truncate_for_error(key, usize::MAX)).into_owned()
}

fn no_group(key: &[u8], group: &[u8]) -> CmdError {
    CmdError::Owned(format!(
        "NOGROUP No such key '{}' or consumer group '{}'",
        key_text(key),
        key_text(group)
    ))
}

/// The stream at `key` for a write; WRONGTYPE for another type.
fn stream_of(ctx: &mut Ctx<'_>, key: &[u8]) -> CmdResult<Option<StreamMeta>> {
    let db = ctx.db();
    Ok(ctx.txn.stream(db, key)?)
}

/// The stream at `key` and its group `name`; NOGROUP if either is
/// missing (XPENDING, XCLAIM, XAUTOCLAIM).
fn stream_and_group(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    name: &[u8],
) -> CmdResult<(StreamMeta, StreamGroup)> {
    let db = ctx.db();
    let Some(stream) = stream_of(ctx, key)? else {
        return Err(no_group(key, name));
    };
    match ctx.txn.stream_group(db, key, &stream, name)? {
        Some(group) => Ok((stream, group)),
        None => Err(no_group(key, name)),
    }
}

// ---- XADD, XTRIM ----

/// XADD's and XTRIM's options (streamAddTrimArgs).
struct AddTrim {
    /// XADD's explicit ID, and whether its sequence was given.
    id: Option<(StreamId, bool)>,
    no_mkstream: bool,
    trim: Option<Trim>,
    approx: bool,
    /// The index of the MAXLEN/MINID value (rewritten for replay).
    trim_arg: usize,
    limit: u64,
    /// XADD: the index of the ID.
    id_pos: usize,
}

/// streamParseAddOrTrimArgsOrReply.
fn parse_add_trim(ctx: &Ctx<'_>, args: &[Bytes], xadd: bool) -> CmdResult<AddTrim> {
    let mut out = AddTrim {
        id: None,
        no_mkstream: false,
        trim: None,
        approx: false,
        trim_arg: 0,
        limit: 0,
        id_pos: args.len(),
    };
    let mut limit_given = false;
    let mut limit: i64 = 0;
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = &args[i][..];
        if xadd && opt == b"*" {
            break;
        } else if (is(opt, "maxlen") || is(opt, "minid")) && more > 0 {
            if out.trim.is_some() {
                return Err(CmdError::Static(
                    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible",
                ));
            }
            out.approx = false;
            let next = &args[i + 1][..];
            if more >= 2 && next == b"~" {
                out.approx = true;
                i += 1;
            } else if more >= 2 && next == b"=" {
                i += 1;
            }
            let value = &args[i + 1];
            if is(opt, "maxlen") {
                let max = int_arg(value)?;
                if max < 0 {
                    return Err(CmdError::Static("ERR The MAXLEN argument must be >= 0."));
                }
                out.trim = Some(Trim::MaxLen(max as u64));
            } else {
                out.trim = Some(Trim::MinId(strict_id(value)?));
            }
            i += 1;
            out.trim_arg = i;
        } else if is(opt, "limit") && more > 0 {
            limit = int_arg(&args[i + 1])?;
            if limit < 0 {
                return Err(CmdError::Static("ERR The LIMIT argument must be >= 0."));
            }
            limit_given = true;
            i += 1;
        } else if xadd && is(opt, "nomkstream") {
            out.no_mkstream = true;
        } else if xadd {
            out.id = Some(parse_id_full(opt, 0, true, true).ok_or(CmdError::Static(INVALID_ID))?);
            break;
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
        i += 1;
    }
    out.id_pos = i;
    if limit != 0 && out.trim.is_none() {
        return Err(CmdError::Static(
            "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy",
        ));
    }
    if !xadd && out.trim.is_none() {
        return Err(CmdError::Static(
            "ERR syntax error, XTRIM must be called with a trimming strategy",
        ));
    }
    if limit_given {
        if !out.approx {
            return Err(CmdError::Static(
                "ERR syntax error, LIMIT cannot be used without the special ~ option",
            ));
        }
        out.limit = limit as u64;
    } else if out.approx {
        let entries = ctx.txn.encoding_limits().stream_node_max_entries;
        out.limit = match entries.saturating_mul(100) {
            0 => 10_000,
            n => n.min(1_000_000),
        };
    }
    Ok(out)
}

/// Trims after XADD or for XTRIM; returns how many entries went.
fn trim_stream(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    stream: &mut StreamMeta,
    parsed: &AddTrim,
) -> CmdResult<u64> {
    let Some(trim) = parsed.trim else {
        return Ok(0);
    };
    let db = ctx.db();
    let deleted = ctx
        .txn
        .stream_trim(db, key, stream, trim, parsed.approx, parsed.limit)?;
    if deleted > 0 {
        ctx.notify(class::STREAM, "xtrim", key);
    }
    Ok(deleted)
}

/// The replay form of an approximate trim: `=` and the length or first ID
/// it left (streamRewriteTrimArgument), so a replay trims the same.
fn rewrite_trim(args: &mut [Bytes], stream: &StreamMeta, parsed: &AddTrim) {
    if !parsed.approx {
        return;
    }
    args[parsed.trim_arg - 1] = Bytes::from_static(b"=");
    args[parsed.trim_arg] = match parsed.trim {
        Some(Trim::MaxLen(_)) => Bytes::from(stream.len().to_string()),
        _ => Bytes::from(stream.first_id.to_string()),
    };
}

/// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value ...
fn xadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let parsed = parse_add_trim(ctx, args, true)?;
    let fields_at = parsed.id_pos + 1;
    let n = args.len().saturating_sub(fields_at);
    if n < 2 || !n.is_multiple_of(2) {
        return Err(wrong_arity("xadd"));
    }
    if let Some((id, true)) = parsed.id {
        if id.is_zero() {
            return Err(CmdError::Static(
                "ERR The ID specified in XADD must be greater than 0-0",
            ));
        }
    }
    let db = ctx.db();
    let key = &args[1];
    let mut stream = match stream_of(ctx, key)? {
        Some(stream) => stream,
        None if parsed.no_mkstream => return Ok(Reply::Null),
        None => ctx.txn.new_stream(),
    };
    if stream.last_id == StreamId::MAX {
        return Err(CmdError::Static(
            "ERR The stream has exhausted the last possible ID, unable to add more items",
        ));
    }
    let last = stream.last_id;
    let id = match parsed.id {
        None => {
            let now = ctx.txn.now_ms();
            if now > last.ms {
                StreamId::new(now, 0)
            } else {
                last.next().unwrap_or(StreamId::MAX)
            }
        }
        Some((id, true)) => id,
        Some((id, false)) if id.ms == last.ms => match last.next() {
            Some(next) if last.seq < u64::MAX => next,
            _ => return Err(CmdError::Static(
                "ERR The ID specified in XADD is equal or smaller than the target stream top item",
            )),
        },
        Some((id, false)) => id,
    };
    let pairs: Vec<(Bytes, Bytes)> = args[fields_at..]
        .chunks_exact(2)
        .map(|p| (p[0].clone(), p[1].clone()))
        .collect();
    match ctx.txn.stream_append(db, key, &mut stream, id, &pairs) {
        Ok(stored) => stored?,
        Err(failed) => {
            // Redis created the key before the append failed.
            if !stream.coll.stored {
                ctx.txn.save_stream(db, key, &mut stream)?;
            }
            return Err(CmdError::Static(match failed {
                AppendError::NotAbove => {
                    "ERR The ID specified in XADD is equal or smaller than the target stream top item"
                }
                AppendError::TooLarge => "ERR Elements are too large to be stored",
            }));
        }
    }
    ctx.notify(class::STREAM, "xadd", key);
    ctx.dirty(1);
    trim_stream(ctx, key, &mut stream, &parsed)?;
    ctx.txn.save_stream(db, key, &mut stream)?;
    let mut replay = args.to_vec();
    rewrite_trim(&mut replay, &stream, &parsed);
    replay[parsed.id_pos] = Bytes::from(id.to_string());
    let replay: Vec<&[u8]> = replay.iter().map(|a| &a[..]).collect();
    ctx.replay_as(&replay);
    Ok(id_reply(id))
}

/// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
fn xtrim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let parsed = parse_add_trim(ctx, args, false)?;
    let db = ctx.db();
    let key = &args[1];
    let Some(mut stream) = stream_of(ctx, key)? else {
        return Ok(Reply::Integer(0));
    };
    let deleted = trim_stream(ctx, key, &mut stream, &parsed)?;
    if deleted > 0 {
        ctx.txn.save_stream(db, key, &mut stream)?;
        ctx.dirty(deleted);
        let mut replay = args.to_vec();
        rewrite_trim(&mut replay, &stream, &parsed);
        let replay: Vec<&[u8]> = replay.iter().map(|a| &a[..]).collect();
        ctx.replay_as(&replay);
    }
    Ok(Reply::Integer(deleted as i64))
}

// ---- reading ----

fn xrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    range(ctx, args, false)
}

fn xrevrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    range(ctx, args, true)
}

/// XRANGE key start end [COUNT n] / XREVRANGE key end start [COUNT n]
fn range(ctx: &mut Ctx<'_>, args: &[Bytes], rev: bool) -> CmdResult {
    let (start_arg, end_arg) = if rev {
        (&args[3], &args[2])
    } else {
        (&args[2], &args[3])
    };
    let start = range_start(start_arg)?;
    let end = range_end(end_arg)?;
    let mut count: Option<u64> = None;
    let mut i = 4;
    while i < args.len() {
        if is(&args[i], "count") && i + 1 < args.len() {
            count = Some(int_arg(&args[i + 1])?.max(0) as u64);
            i += 2;
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    let db = ctx.db();
    let key = &args[1];
    let Some(stream) = ctx.txn.stream(db, key)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    let count = match count {
        Some(0) => return Ok(Reply::NullArray),
        Some(n) => n,
        None => 0,
    };
    off_thread_if(ctx, visit_bound(&stream, count))?;
    let entries = ctx
        .txn
        .stream_entries(db, key, &stream, start, end, rev, count)?;
    Ok(Reply::Array(
        entries
            .into_iter()
            .map(|(id, pairs)| entry_reply(id, pairs))
            .collect(),
    ))
}

/// How many entries a read of `count` (0: all) may visit.
fn visit_bound(stream: &StreamMeta, count: u64) -> u64 {
    match count {
        0 => stream.len(),
        n => n.min(stream.len()),
    }
}

fn xlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let len = ctx.txn.stream(db, &args[1])?.map_or(0, |s| s.len());
    Ok(Reply::Integer(len as i64))
}

/// XDEL key id...
fn xdel(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let Some(mut stream) = stream_of(ctx, key)? else {
        return Ok(Reply::Integer(0));
    };
    let ids = args[2..]
        .iter()
        .map(|a| strict_id(a))
        .collect::<CmdResult<Vec<_>>>()?;
    let mut deleted = 0u64;
    let mut first_gone = false;
    for id in ids {
        if ctx.txn.stream_delete(db, key, &mut stream, id)? {
            first_gone |= id == stream.first_id;
            if id > stream.max_deleted_id {
                stream.max_deleted_id = id;
            }
            deleted += 1;
        }
    }
    if deleted > 0 {
        if stream.is_empty() {
            stream.first_id = StreamId::MIN;
        } else if first_gone {
            stream.first_id = ctx
                .txn
                .stream_edge(db, key, &stream, false)?
                .unwrap_or_default();
        }
        ctx.txn.save_stream(db, key, &mut stream)?;
        ctx.notify(class::STREAM, "xdel", key);
        ctx.dirty(deleted);
    }
    Ok(Reply::Integer(deleted as i64))
}

// ---- XREAD, XREADGROUP ----

/// What XREAD/XREADGROUP asked for.
struct ReadArgs {
    block_ms: Option<u64>,
    count: u64,
    group: Option<(Bytes, Bytes)>,
    noack: bool,
    /// Where the keys start; as many IDs follow them.
    streams_at: usize,
    streams: usize,
}

/// The ID a read starts after: `$` resolved, or XREADGROUP's `>`.
#[derive(Clone, Copy)]
enum After {
    Id(StreamId),
    New,
}

fn parse_read(ctx: &Ctx<'_>, args: &[Bytes], group_form: bool) -> CmdResult<ReadArgs> {
    let mut out = ReadArgs {
        block_ms: None,
        count: 0,
        group: None,
        noack: false,
        streams_at: 0,
        streams: 0,
    };
    let mut i = 1;
    while i < args.len() {
        let more = args.len() - i - 1;
        let opt = &args[i][..];
        if is(opt, "block") && more > 0 {
            if ctx.in_unit && !ctx.session.tx.executing {
                return Err(CmdError::Text(Bytes::from(
                    [
                        b"ERR ".as_slice(),
                        &args[0],
                        b" command is not allowed with BLOCK option from scripts",
                    ]
                    .concat(),
                )));
            }
            i += 1;
            out.block_ms = Some(block_timeout(&args[i], ctx.txn.now_ms())?);
        } else if is(opt, "count") && more > 0 {
            i += 1;
            out.count = int_arg(&args[i])?.max(0) as u64;
        } else if is(opt, "streams") && more > 0 {
            out.streams_at = i + 1;
            let n = args.len() - out.streams_at;
            if !n.is_multiple_of(2) {
                return Err(CmdError::Static(
                    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.",
                ));
            }
            out.streams = n / 2;
            break;
        } else if is(opt, "group") && more >= 2 {
            if !group_form {
                return Err(CmdError::Static(
                    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.",
                ));
            }
            out.group = Some((args[i + 1].clone(), args[i + 2].clone()));
            i += 2;
        } else if is(opt, "noack") {
            if !group_form {
                return Err(CmdError::Static(
                    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.",
                ));
            }
            out.noack = true;
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
        i += 1;
    }
    if out.streams_at == 0 {
        return Err(CmdError::Static(SYNTAX));
    }
    if group_form && out.group.is_none() {
        return Err(CmdError::Static("ERR Missing GROUP option for XREADGROUP"));
    }
    Ok(out)
}

/// BLOCK's milliseconds (getTimeoutFromObjectOrReply in milliseconds);
/// 0 waits for ever.
fn block_timeout(arg: &[u8], now_ms: u64) -> CmdResult<u64> {
    let ms = long_arg(arg, "ERR timeout is not an integer or out of range")?;
    if ms < 0 {
        return Err(CmdError::Static("ERR timeout is negative"));
    }
    if ms > 0 && ms > i64::MAX - now_ms as i64 {
        return Err(CmdError::Static("ERR timeout is out of range"));
    }
    Ok(ms as u64)
}

/// XREAD [COUNT n] [BLOCK ms] STREAMS key... id...
/// XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms] [NOACK] STREAMS key... id...
fn xread(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let group_form = args[0].len() == 10;
    let read = parse_read(ctx, args, group_form)?;
    let db = ctx.db();
    // A client served after blocking: a key gone or of another type waits
    // on (XREAD), or ends XREADGROUP's wait with an error, as Redis does.
    let woken = ctx.client.blocked.load(Ordering::Acquire);
    let keys = &args[read.streams_at..read.streams_at + read.streams];
    let id_args = &args[read.streams_at + read.streams..];
    let written = match woken {
        true => ctx.client.woken_keys.lock().clone(),
        false => Vec::new(),
    };
    if !written.is_empty() {
        if let Some(served) = serve_written(ctx, args, &read, &written)? {
            return Ok(read_reply(ctx, vec![served]));
        }
        ctx.deferred = Some(wait(&read, keys, read.block_ms.unwrap_or(0), None));
        return Ok(Reply::NullArray);
    }
    let mut starts = Vec::with_capacity(read.streams);
    let mut resolved = false;
    for (key, id_arg) in keys.iter().zip(id_args) {
        let stream = match ctx.txn.stream(db, key) {
            Err(firn_storage::StorageError::WrongType) if woken => {
                if read.group.is_some() {
                    return Err(CmdError::Static(
                        "UNBLOCKED the stream key no longer exists",
                    ));
                }
                None
            }
            found => found?,
        };
        if let Some((group, _)) = &read.group {
            let found = match &stream {
                Some(s) => ctx.txn.stream_group(db, key, s, group)?,
                None => None,
            };
            if found.is_none() {
                if woken {
                    return Err(CmdError::Static(if stream.is_none() {
                        "UNBLOCKED the stream key no longer exists"
                    } else {
                        "NOGROUP the consumer group this client was blocked on no longer exists"
                    }));
                }
                return Err(CmdError::Owned(format!(
                    "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
                    key_text(key),
                    key_text(group)
                )));
            }
        }
        let after = match &id_arg[..] {
            b"$" => {
                if group_form {
                    return Err(CmdError::Static(
                        "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.",
                    ));
                }
                resolved = true;
                After::Id(stream.as_ref().map_or(StreamId::MIN, |s| s.last_id))
            }
            b">" => {
                if !group_form {
                    return Err(CmdError::Static(
                        "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.",
                    ));
                }
                After::New
            }
            id => After::Id(strict_id(id)?),
        };
        starts.push(after);
    }
    let count = match (woken, read.count) {
        (true, 0) => BLOCKED_DEFAULT_COUNT,
        (_, n) => n,
    };
    let mut served: Vec<(Bytes, Reply)> = Vec::new();
    for (key, after) in keys.iter().zip(&starts) {
        if let Some(entries) = serve_key(ctx, key, *after, count, &read, false)? {
            served.push((key.clone(), entries));
            // A woken client is served from one key, as Redis serves it
            // from the key that became ready.
            if woken {
                break;
            }
        }
    }
    if !served.is_empty() {
        return Ok(read_reply(ctx, served));
    }
    let Some(timeout_ms) = read.block_ms else {
        return Ok(Reply::NullArray);
    };
    // Waiting: `$` means the last ID now, so the runs after a wake-up read
    // after that ID, not after the stream's last ID then.
    let rerun = resolved.then(|| {
        let mut again = args.to_vec();
        for (at, after) in starts.iter().enumerate() {
            if let After::Id(id) = after {
                again[read.streams_at + read.streams + at] = Bytes::from(id.to_string());
            }
        }
        again
    });
    ctx.deferred = Some(wait(&read, keys, timeout_ms, rerun));
    Ok(Reply::NullArray)
}

/// A reader's wait for `keys`.
fn wait(read: &ReadArgs, keys: &[Bytes], timeout_ms: u64, rerun: Option<Vec<Bytes>>) -> Deferred {
    Deferred::Block(BlockOn {
        keys: keys.to_vec(),
        timeout_ms,
        rerun,
        // Readers of one group share its entries as BLPOP's clients share
        // a list's; XREAD readers each read everything.
        wake: match &read.group {
            Some((group, _)) => Wake::Group(group.clone()),
            None => Wake::Every,
        },
    })
}

/// XREAD's and XREADGROUP's reply: each key served and its entries.
fn read_reply(ctx: &Ctx<'_>, served: Vec<(Bytes, Reply)>) -> Reply {
    match ctx.session.protocol {
        Protocol::Resp3 => Reply::Map(
            served
                .into_iter()
                .map(|(k, e)| (Reply::Bulk(k), e))
                .collect(),
        ),
        Protocol::Resp2 => Reply::Array(
            served
                .into_iter()
                .map(|(k, e)| Reply::Array(vec![Reply::Bulk(k), e]))
                .collect(),
        ),
    }
}

/// A blocked reader's run after a wake-up, as Redis serves it
/// (serveClientsBlockedOnStreamKey): only its keys written since its last
/// run count, in the order they were written. XREADGROUP's wait ends with
/// an error when the key is gone or of another type, or its group is
/// destroyed; otherwise the first stream whose last ID passed the reader's
/// serves it, with an empty list when the new entries are already gone
/// (an XADD trimmed at once). `None`: it waits on.
fn serve_written(
    ctx: &mut Ctx<'_>,
    args: &[Bytes],
    read: &ReadArgs,
    written: &[Bytes],
) -> CmdResult<Option<(Bytes, Reply)>> {
    let db = ctx.db();
    let keys = &args[read.streams_at..read.streams_at + read.streams];
    let id_args = &args[read.streams_at + read.streams..];
    let count = match read.count {
        0 => BLOCKED_DEFAULT_COUNT,
        n => n,
    };
    for key in written {
        let Some(at) = keys.iter().position(|k| k == key) else {
            continue;
        };
        let stream = match ctx.txn.stream(db, key) {
            Err(firn_storage::StorageError::WrongType) => None,
            found => found?,
        };
        let Some(stream) = stream else {
            if read.group.is_some() {
                return Err(CmdError::Static(
                    "UNBLOCKED the stream key no longer exists",
                ));
            }
            continue;
        };
        // A blocked XREADGROUP reads `>` from every key: any other ID is
        // served at once.
        let after =
            match &read.group {
                Some((group, _)) => match ctx.txn.stream_group(db, key, &stream, group)? {
                    Some(_) => After::New,
                    None => return Err(CmdError::Static(
                        "NOGROUP the consumer group this client was blocked on no longer exists",
                    )),
                },
                None => After::Id(strict_id(&id_args[at])?),
            };
        if let Some(entries) = serve_key(ctx, key, after, count, read, true)? {
            return Ok(Some((key.clone(), entries)));
        }
    }
    Ok(None)
}

/// The entries `key` serves a read after `after`, or `None` when it has
/// nothing to serve (the read may block). A `woken` reader is served when
/// the stream's last ID passed its own, even if no entry is left after it.
fn serve_key(
    ctx: &mut Ctx<'_>,
    key: &Bytes,
    after: After,
    count: u64,
    read: &ReadArgs,
    woken: bool,
) -> CmdResult<Option<Reply>> {
    let db = ctx.db();
    let Some(stream) = ctx.txn.stream(db, key).or_else(|e| match e {
        firn_storage::StorageError::WrongType => Ok(None),
        e => Err(e),
    })?
    else {
        return Ok(None);
    };
    let Some((group_name, consumer)) = &read.group else {
        let After::Id(after) = after else {
            return Ok(None);
        };
        // Served when an entry lies after the ID (Redis compares the last
        // live entry): the read itself tells. A woken reader is served when
        // the stream's last ID passed its own, even if no entry is left.
        if stream.last_id <= after {
            return Ok(None);
        }
        let entries = read_after(ctx, key, &stream, after, count)?;
        return Ok((woken || !entries.is_empty()).then(|| entries_reply(entries)));
    };
    let Some(mut group) = ctx.txn.stream_group(db, key, &stream, group_name)? else {
        return Ok(None);
    };
    let now = ctx.txn.now_ms();
    let reply = match after {
        After::Id(after) => {
            touch_consumer(ctx, key, &stream, &mut group, consumer, now)?;
            let start = after.next().unwrap_or(StreamId::MAX);
            let history = history(ctx, key, &stream, &mut group, consumer, start, count, now)?;
            Reply::Array(history)
        }
        After::New => {
            if stream.last_id <= group.last_id {
                return Ok(None);
            }
            let entries = read_after(ctx, key, &stream, group.last_id, count)?;
            if entries.is_empty() && !woken {
                return Ok(None);
            }
            touch_consumer(ctx, key, &stream, &mut group, consumer, now)?;
            for (id, _) in &entries {
                stream.advance_group(&mut group, *id);
                if !read.noack {
                    deliver(ctx, key, &stream, &mut group, consumer, *id, now)?;
                }
            }
            entries_reply(entries)
        }
    };
    ctx.txn.save_group(db, key, &stream, &group);
    ctx.dirty(1);
    Ok(Some(reply))
}

/// Up to `count` entries (0: all) after `after`.
fn read_after(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    stream: &StreamMeta,
    after: StreamId,
    count: u64,
) -> CmdResult<Vec<firn_storage::StreamEntry>> {
    let (true, Some(start)) = (stream.last_id > after && !stream.is_empty(), after.next()) else {
        return Ok(Vec::new());
    };
    off_thread_if(ctx, visit_bound(stream, count))?;
    let db = ctx.db();
    Ok(ctx
        .txn
        .stream_entries(db, key, stream, start, StreamId::MAX, false, count)?)
}

fn entries_reply(entries: Vec<firn_storage::StreamEntry>) -> Reply {
    Reply::Array(
        entries
            .into_iter()
            .map(|(id, pairs)| entry_reply(id, pairs))
            .collect(),
    )
}

/// Looks the consumer up, marking it seen, or creates it (with its event
/// and change, as streamCreateConsumer).
fn touch_consumer(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    stream: &StreamMeta,
    group: &mut StreamGroup,
    name: &[u8],
    now: u64,
) -> CmdResult<()> {
    let db = ctx.db();
    if ctx
        .txn
        .stream_touch_consumer(db, key, stream, group, name, now)?
    {
        ctx.notify(class::STREAM, "xgroup-createconsumer", key);
        ctx.dirty(1);
    }
    Ok(())
}

/// Entry `id` delivered to `consumer` now: a new pending entry, or one
/// taken over from whoever had it (delivery count back to 1).
fn deliver(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    stream: &StreamMeta,
    group: &mut StreamGroup,
    consumer: &Bytes,
    id: StreamId,
    now: u64,
) -> CmdResult<()> {
    let db = ctx.db();
    let previous = ctx.txn.stream_pending_entry(db, key, stream, group, id)?;
    let entry = PendingEntry {
        id,
        consumer: consumer.clone(),
        delivery_time_ms: now,
        delivery_count: 1,
    };
    ctx.txn
        .stream_put_pending(db, key, stream, group, &entry, previous.as_ref())?;
    Ok(())
}

/// XREADGROUP with an ID: the consumer's own pending entries from `start`
/// (streamReplyWithRangeFromConsumerPEL); each one served counts a
/// delivery, one deleted since is `[id, nil]`.
#[allow(clippy::too_many_arguments)]
fn history(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    stream: &StreamMeta,
    group: &mut StreamGroup,
    consumer: &[u8],
    start: StreamId,
    count: u64,
    now: u64,
) -> CmdResult<Vec<Reply>> {
    let db = ctx.db();
    let ids = ctx.txn.stream_consumer_pending(
        db,
        key,
        stream,
        group,
        consumer,
        start,
        StreamId::MAX,
        count,
    )?;
    off_thread_if(ctx, ids.len() as u64)?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        match ctx.txn.stream_entry(db, key, stream, id)? {
            Some(pairs) => {
                out.push(entry_reply(id, pairs));
                if let Some(mut entry) = ctx.txn.stream_pending_entry(db, key, stream, group, id)? {
                    let previous = entry.clone();
                    entry.delivery_time_ms = now;
                    entry.delivery_count += 1;
                    ctx.txn
                        .stream_put_pending(db, key, stream, group, &entry, Some(&previous))?;
                }
            }
            None => out.push(Reply::Array(vec![id_reply(id), Reply::NullArray])),
        }
    }
    Ok(out)
}

// ---- XGROUP ----

const XGROUP_HELP: &[&str] = &[
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Prints this help.",
];

/// XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER|HELP (xgroupCommand).
fn xgroup(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    if is(sub, "help") {
        return Ok(help_reply(XGROUP_HELP));
    }
    let syntax = || subcommand_syntax("xgroup", sub);
    let (create, setid) = (is(sub, "create"), is(sub, "setid"));
    let mut mkstream = false;
    let mut entries_read: Option<u64> = None;
    let mut i = 5;
    while i < args.len() {
        if create && is(&args[i], "mkstream") {
            mkstream = true;
            i += 1;
        } else if (create || setid) && is(&args[i], "entriesread") && i + 1 < args.len() {
            let n = int_arg(&args[i + 1])?;
            if n < 0 && n != -1 {
                return Err(CmdError::Static(
                    "ERR value for ENTRIESREAD must be positive or -1",
                ));
            }
            entries_read = (n >= 0).then_some(n as u64);
            i += 2;
        } else {
            return Err(syntax());
        }
    }
    let db = ctx.db();
    let key = &args[2];
    let name = &args[3];
    let stream = stream_of(ctx, key)?;
    if stream.is_none() && !mkstream {
        return Err(CmdError::Static(
            "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.",
        ));
    }
    let mut group = match &stream {
        Some(s) => ctx.txn.stream_group(db, key, s, name)?,
        None => None,
    };
    if group.is_none() && !create && !is(sub, "destroy") {
        return Err(CmdError::Owned(format!(
            "NOGROUP No such consumer group '{}' for key name '{}'",
            key_text(name),
            key_text(key)
        )));
    }
    if create && (5..=8).contains(&args.len()) {
        let id = match &args[4][..] {
            b"$" => stream.as_ref().map_or(StreamId::MIN, |s| s.last_id),
            id => strict_id(id)?,
        };
        let mut stream = match stream {
            Some(s) => s,
            None => {
                // Quiet as XGROUP is, Redis signals the stream it makes.
                ctx.txn.signal_modified(db, key);
                ctx.txn.new_stream()
            }
        };
        let created = ctx
            .txn
            .stream_create_group(db, key, &mut stream, name, id, entries_read)?;
        ctx.txn.save_stream(db, key, &mut stream)?;
        if created.is_none() {
            return Err(CmdError::Static(
                "BUSYGROUP Consumer Group name already exists",
            ));
        }
        ctx.notify(class::STREAM, "xgroup-create", key);
        ctx.dirty(1);
        return Ok(Reply::ok());
    }
    let (Some(mut stream), true) = (stream, !create) else {
        return Err(syntax());
    };
    if setid && (args.len() == 5 || args.len() == 7) {
        let id = match &args[4][..] {
            b"$" => stream.last_id,
            id => parse_id(id, 0, false)?,
        };
        let mut group = group.take().ok_or_else(syntax)?;
        group.last_id = id;
        group.entries_read = entries_read;
        ctx.txn.save_group(db, key, &stream, &group);
        ctx.notify(class::STREAM, "xgroup-setid", key);
        ctx.dirty(1);
        return Ok(Reply::ok());
    }
    if is(sub, "destroy") && args.len() == 4 {
        let Some(group) = group else {
            return Ok(Reply::Integer(0));
        };
        off_thread_if(ctx, group.pending * 2 + group.consumers)?;
        ctx.txn.stream_destroy_group(db, key, &mut stream, &group)?;
        ctx.txn.save_stream(db, key, &mut stream)?;
        ctx.notify(class::STREAM, "xgroup-destroy", key);
        ctx.dirty(1);
        return Ok(Reply::Integer(1));
    }
    let Some(mut group) = group else {
        return Err(syntax());
    };
    if is(sub, "createconsumer") && args.len() == 5 {
        let now = ctx.txn.now_ms();
        let created = ctx
            .txn
            .stream_create_consumer(db, key, &stream, &mut group, &args[4], now)?;
        if created {
            ctx.txn.save_group(db, key, &stream, &group);
            ctx.notify(class::STREAM, "xgroup-createconsumer", key);
            ctx.dirty(1);
        }
        return Ok(Reply::Integer(created as i64));
    }
    if is(sub, "delconsumer") && args.len() == 5 {
        let Some(consumer) = ctx
            .txn
            .stream_consumer(db, key, &stream, &group, &args[4])?
        else {
            return Ok(Reply::Integer(0));
        };
        off_thread_if(ctx, consumer.pending * 2)?;
        let pending = ctx
            .txn
            .stream_delete_consumer(db, key, &stream, &mut group, &consumer)?;
        ctx.txn.save_group(db, key, &stream, &group);
        ctx.notify(class::STREAM, "xgroup-delconsumer", key);
        ctx.dirty(1);
        return Ok(Reply::Integer(pending as i64));
    }
    Err(syntax())
}

// ---- XACK, XPENDING, XCLAIM, XAUTOCLAIM ----

/// XACK key group id...
fn xack(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let Some(stream) = stream_of(ctx, key)? else {
        return Ok(Reply::Integer(0));
    };
    let Some(mut group) = ctx.txn.stream_group(db, key, &stream, &args[2])? else {
        return Ok(Reply::Integer(0));
    };
    let ids = args[3..]
        .iter()
        .map(|a| strict_id(a))
        .collect::<CmdResult<Vec<_>>>()?;
    let mut acked = 0u64;
    for id in ids {
        if let Some(entry) = ctx.txn.stream_pending_entry(db, key, &stream, &group, id)? {
            ctx.txn
                .stream_remove_pending(db, key, &stream, &mut group, &entry)?;
            acked += 1;
        }
    }
    if acked > 0 {
        ctx.txn.save_group(db, key, &stream, &group);
        ctx.dirty(acked);
    }
    Ok(Reply::Integer(acked as i64))
}

/// XPENDING key group [[IDLE min-idle] start end count [consumer]]
fn xpending(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let argc = args.len();
    if argc != 3 && !(6..=9).contains(&argc) {
        return Err(CmdError::Static(SYNTAX));
    }
    let mut range = None;
    let mut min_idle = 0i64;
    let mut consumer_name = None;
    if argc >= 6 {
        let mut at = 3;
        if is(&args[3], "idle") {
            min_idle = int_arg(&args[4])?;
            if argc < 8 {
                return Err(CmdError::Static(SYNTAX));
            }
            at += 2;
        }
        let count = int_arg(&args[at + 2])?.max(0) as u64;
        let start = range_start(&args[at])?;
        let end = range_end(&args[at + 1])?;
        if at + 3 < argc {
            consumer_name = Some(args[at + 3].clone());
        }
        range = Some((start, end, count));
    }
    let db = ctx.db();
    let key = &args[1];
    let (stream, group) = stream_and_group(ctx, key, &args[2])?;
    let now = ctx.txn.now_ms() as i64;
    let Some((start, end, count)) = range else {
        if group.pending == 0 {
            return Ok(Reply::Array(vec![
                Reply::Integer(0),
                Reply::Null,
                Reply::Null,
                Reply::NullArray,
            ]));
        }
        let mut edges = [StreamId::MIN; 2];
        for (slot, rev) in edges.iter_mut().zip([false, true]) {
            ctx.txn.stream_pending_range(
                db,
                key,
                &stream,
                &group,
                StreamId::MIN,
                StreamId::MAX,
                rev,
                |e| {
                    *slot = e.id;
                    false
                },
            )?;
        }
        off_thread_if(ctx, group.consumers)?;
        let consumers = ctx.txn.stream_consumers(db, key, &stream, &group)?;
        let owners = consumers
            .into_iter()
            .filter(|c| c.pending > 0)
            .map(|c| {
                Reply::Array(vec![
                    Reply::Bulk(c.name),
                    Reply::Bulk(Bytes::from(c.pending.to_string())),
                ])
            })
            .collect();
        return Ok(Reply::Array(vec![
            Reply::Integer(group.pending as i64),
            id_reply(edges[0]),
            id_reply(edges[1]),
            Reply::Array(owners),
        ]));
    };
    let detail = |e: &PendingEntry| {
        Reply::Array(vec![
            id_reply(e.id),
            Reply::Bulk(e.consumer.clone()),
            Reply::Integer(idle_ms(now, e.delivery_time_ms).max(0)),
            Reply::Integer(e.delivery_count as i64),
        ])
    };
    let idle_enough =
        |e: &PendingEntry| min_idle == 0 || idle_ms(now, e.delivery_time_ms) >= min_idle;
    let mut out = Vec::new();
    if count == 0 {
        return Ok(Reply::Array(out));
    }
    match consumer_name {
        None => {
            off_thread_if(ctx, count.min(group.pending))?;
            ctx.txn
                .stream_pending_range(db, key, &stream, &group, start, end, false, |e| {
                    if idle_enough(&e) {
                        out.push(detail(&e));
                    }
                    (out.len() as u64) < count
                })?;
        }
        Some(name) => {
            let Some(consumer) = ctx.txn.stream_consumer(db, key, &stream, &group, &name)? else {
                return Ok(Reply::Array(out));
            };
            off_thread_if(ctx, count.min(consumer.pending))?;
            let ids = ctx.txn.stream_consumer_pending(
                db,
                key,
                &stream,
                &group,
                &name,
                start,
                end,
                if min_idle == 0 { count } else { 0 },
            )?;
            for id in ids {
                if let Some(e) = ctx.txn.stream_pending_entry(db, key, &stream, &group, id)? {
                    if idle_enough(&e) {
                        out.push(detail(&e));
                        if out.len() as u64 == count {
                            break;
                        }
                    }
                }
            }
        }
    }
    Ok(Reply::Array(out))
}

/// XCLAIM key group consumer min-idle-time id... [IDLE ms] [TIME ms]
/// [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id]
fn xclaim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let (stream, mut group) = stream_and_group(ctx, key, &args[2])?;
    let min_idle = long_arg(&args[4], "ERR Invalid min-idle-time argument for XCLAIM")?.max(0);
    let mut ids = Vec::new();
    let mut j = 5;
    while j < args.len() {
        match parse_id_full(&args[j], 0, true, false) {
            Some((id, _)) => ids.push(id),
            None => break,
        }
        j += 1;
    }
    let now = ctx.txn.now_ms() as i64;
    let (mut force, mut justid) = (false, false);
    let mut delivery: Option<i64> = None;
    let mut retry: Option<i64> = None;
    let mut last_id = StreamId::MIN;
    while j < args.len() {
        let more = args.len() - 1 - j;
        let opt = &args[j];
        if is(opt, "force") {
            force = true;
        } else if is(opt, "justid") {
            justid = true;
        } else if is(opt, "idle") && more > 0 {
            j += 1;
            delivery = Some(now.wrapping_sub(long_arg(
                &args[j],
                "ERR Invalid IDLE option argument for XCLAIM",
            )?));
        } else if is(opt, "time") && more > 0 {
            j += 1;
            delivery = Some(long_arg(
                &args[j],
                "ERR Invalid TIME option argument for XCLAIM",
            )?);
        } else if is(opt, "retrycount") && more > 0 {
            j += 1;
            retry = Some(long_arg(
                &args[j],
                "ERR Invalid RETRYCOUNT option argument for XCLAIM",
            )?);
        } else if is(opt, "lastid") && more > 0 {
            j += 1;
            last_id = strict_id(&args[j])?;
        } else {
            let mut text = b"ERR Unrecognized XCLAIM option '".to_vec();
            text.extend_from_slice(crate::errors::truncate_for_error(opt, usize::MAX));
            text.push(b'\'');
            return Err(CmdError::Text(Bytes::from(text)));
        }
        j += 1;
    }
    let mut group_moved = false;
    if last_id > group.last_id {
        group.last_id = last_id;
        group_moved = true;
    }
    let delivery = match delivery {
        Some(t) if (0..=now).contains(&t) => t,
        _ => now,
    } as u64;
    off_thread_if(ctx, ids.len() as u64)?;
    let name = &args[3];
    let mut consumer_ready = false;
    let mut out = Vec::new();
    let mut changed = 0u64;
    for id in ids {
        let pending = ctx.txn.stream_pending_entry(db, key, &stream, &group, id)?;
        let Some(pairs) = ctx.txn.stream_entry(db, key, &stream, id)? else {
            if let Some(entry) = pending {
                ctx.txn
                    .stream_remove_pending(db, key, &stream, &mut group, &entry)?;
                changed += 1;
                group_moved = false;
            }
            continue;
        };
        let (previous, mut entry) = match pending {
            Some(entry) => {
                if min_idle > 0 && idle_ms(now, entry.delivery_time_ms) < min_idle {
                    continue;
                }
                (Some(entry.clone()), entry)
            }
            None if force => (
                None,
                PendingEntry {
                    id,
                    consumer: name.clone(),
                    delivery_time_ms: now as u64,
                    delivery_count: 1,
                },
            ),
            None => continue,
        };
        if !consumer_ready {
            touch_consumer(ctx, key, &stream, &mut group, name, now as u64)?;
            consumer_ready = true;
        }
        entry.consumer = name.clone();
        entry.delivery_time_ms = delivery;
        match retry {
            Some(n) if n >= 0 => entry.delivery_count = n as u64,
            _ if !justid => entry.delivery_count += 1,
            _ => {}
        }
        ctx.txn
            .stream_put_pending(db, key, &stream, &mut group, &entry, previous.as_ref())?;
        out.push(if justid {
            id_reply(id)
        } else {
            entry_reply(id, pairs)
        });
        changed += 1;
        group_moved = false;
    }
    if group_moved {
        changed += 1;
    }
    ctx.txn.save_group(db, key, &stream, &group);
    ctx.dirty(changed);
    Ok(Reply::Array(out))
}

/// XAUTOCLAIM key group consumer min-idle-time start [COUNT n] [JUSTID]
fn xautoclaim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let min_idle = long_arg(
        &args[4],
        "ERR Invalid min-idle-time argument for XAUTOCLAIM",
    )?
    .max(0);
    let start = range_start(&args[5])?;
    let mut count: u64 = 100;
    let mut justid = false;
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(&args[j], "count") && more > 0 {
            let max = i64::MAX / 16;
            count = match parse_i64(&args[j + 1]) {
                Some(n) if (1..=max).contains(&n) => n as u64,
                _ => return Err(CmdError::Static("ERR COUNT must be > 0")),
            };
            j += 1;
        } else if is(&args[j], "justid") {
            justid = true;
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
        j += 1;
    }
    let db = ctx.db();
    let key = &args[1];
    let (stream, mut group) = stream_and_group(ctx, key, &args[2])?;
    let now = ctx.txn.now_ms();
    let name = &args[3];
    let mut attempts = count.saturating_mul(10);
    off_thread_if(ctx, attempts.min(group.pending))?;
    let mut claimed = Vec::new();
    let mut deleted = Vec::new();
    let mut consumer_ready = false;
    let mut changed = 0u64;
    let mut from = start;
    let mut cursor = StreamId::MIN;
    const BATCH: usize = 1024;
    'scan: loop {
        let mut batch = Vec::new();
        ctx.txn.stream_pending_range(
            db,
            key,
            &stream,
            &group,
            from,
            StreamId::MAX,
            false,
            |e| {
                batch.push(e);
                batch.len() < BATCH
            },
        )?;
        let full = batch.len() == BATCH;
        for entry in batch {
            if attempts == 0 || count == 0 {
                cursor = entry.id;
                break 'scan;
            }
            attempts -= 1;
            let id = entry.id;
            let Some(pairs) = ctx.txn.stream_entry(db, key, &stream, id)? else {
                ctx.txn
                    .stream_remove_pending(db, key, &stream, &mut group, &entry)?;
                deleted.push(id_reply(id));
                changed += 1;
                count -= 1;
                continue;
            };
            if min_idle > 0 && idle_ms(now as i64, entry.delivery_time_ms) < min_idle {
                continue;
            }
            if !consumer_ready {
                touch_consumer(ctx, key, &stream, &mut group, name, now)?;
                consumer_ready = true;
            }
            let mut moved = entry.clone();
            moved.consumer = name.clone();
            moved.delivery_time_ms = now;
            if !justid {
                moved.delivery_count += 1;
            }
            ctx.txn
                .stream_put_pending(db, key, &stream, &mut group, &moved, Some(&entry))?;
            claimed.push(if justid {
                id_reply(id)
            } else {
                entry_reply(id, pairs)
            });
            changed += 1;
            count -= 1;
            from = id;
        }
        if !full {
            break;
        }
        match from.next() {
            Some(next) => from = next,
            None => break,
        }
    }
    ctx.txn.save_group(db, key, &stream, &group);
    ctx.dirty(changed);
    Ok(Reply::Array(vec![
        id_reply(cursor),
        Reply::Array(claimed),
        Reply::Array(deleted),
    ]))
}

// ---- XINFO, XSETID ----

const XINFO_HELP: &[&str] = &[
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    "HELP",
    "    Prints this help.",
];

fn field(name: &'static str) -> Reply {
    Reply::Bulk(Bytes::from_static(name.as_bytes()))
}

fn entries_read_reply(group: &StreamGroup) -> Reply {
    group
        .entries_read
        .map_or(Reply::Null, |n| Reply::Integer(n as i64))
}

fn lag_reply(stream: &StreamMeta, group: &StreamGroup) -> Reply {
    stream.lag_of(group).map_or(Reply::Null, Reply::Integer)
}

/// XINFO STREAM|GROUPS|CONSUMERS|HELP
fn xinfo(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    if is(sub, "help") {
        return Ok(help_reply(XINFO_HELP));
    }
    if args.len() < 3 {
        return Err(subcommand_syntax("xinfo", sub));
    }
    let db = ctx.db();
    let key = &args[2];
    let Some(stream) = stream_of(ctx, key)? else {
        return Err(CmdError::Static(crate::errors::NO_SUCH_KEY));
    };
    if is(sub, "consumers") && args.len() == 4 {
        let Some(group) = ctx.txn.stream_group(db, key, &stream, &args[3])? else {
            return Err(CmdError::Owned(format!(
                "NOGROUP No such consumer group '{}' for key name '{}'",
                key_text(&args[3]),
                key_text(key)
            )));
        };
        off_thread_if(ctx, group.consumers)?;
        let now = ctx.txn.now_ms() as i64;
        let consumers = ctx.txn.stream_consumers(db, key, &stream, &group)?;
        return Ok(Reply::Array(
            consumers
                .into_iter()
                .map(|c| {
                    Reply::Map(vec![
                        (field("name"), Reply::Bulk(c.name)),
                        (field("pending"), Reply::Integer(c.pending as i64)),
                        (
                            field("idle"),
                            Reply::Integer(idle_ms(now, c.seen_time_ms).max(0)),
                        ),
                    ])
                })
                .collect(),
        ));
    }
    if is(sub, "groups") && args.len() == 3 {
        let groups = ctx.txn.stream_groups(db, key, &stream)?;
        return Ok(Reply::Array(
            groups
                .iter()
                .map(|g| {
                    Reply::Map(vec![
                        (field("name"), Reply::Bulk(g.name.clone())),
                        (field("consumers"), Reply::Integer(g.consumers as i64)),
                        (field("pending"), Reply::Integer(g.pending as i64)),
                        (field("last-delivered-id"), id_reply(g.last_id)),
                        (field("entries-read"), entries_read_reply(g)),
                        (field("lag"), lag_reply(&stream, g)),
                    ])
                })
                .collect(),
        ));
    }
    if is(sub, "stream") {
        return stream_info(ctx, args, &stream);
    }
    Err(subcommand_syntax("xinfo", sub))
}

/// XINFO STREAM key [FULL [COUNT n]]
fn stream_info(ctx: &mut Ctx<'_>, args: &[Bytes], stream: &StreamMeta) -> CmdResult {
    let options = &args[3..];
    let syntax = || subcommand_syntax("xinfo", &args[1]);
    let full = !options.is_empty();
    let mut count: u64 = 10;
    if full {
        if (options.len() != 1 && options.len() != 3) || !is(&options[0], "full") {
            return Err(syntax());
        }
        if options.len() == 3 {
            if !is(&options[1], "count") {
                return Err(syntax());
            }
            let n = int_arg(&options[2])?;
            count = if n < 0 { 10 } else { n as u64 };
        }
    }
    let db = ctx.db();
    let key = &args[2];
    let mut info = vec![
        (field("length"), Reply::Integer(stream.len() as i64)),
        (
            field("radix-tree-keys"),
            Reply::Integer(stream.nodes as i64),
        ),
        (
            field("radix-tree-nodes"),
            Reply::Integer(radix_tree_nodes(stream.nodes) as i64),
        ),
        (field("last-generated-id"), id_reply(stream.last_id)),
        (
            field("max-deleted-entry-id"),
            id_reply(stream.max_deleted_id),
        ),
        (
            field("entries-added"),
            Reply::Integer(stream.entries_added as i64),
        ),
        (field("recorded-first-entry-id"), id_reply(stream.first_id)),
    ];
    if !full {
        info.push((field("groups"), Reply::Integer(stream.groups as i64)));
        for (name, last) in [("first-entry", false), ("last-entry", true)] {
            let (start, end) = (StreamId::MIN, StreamId::MAX);
            let found = ctx
                .txn
                .stream_entries(db, key, stream, start, end, last, 1)?;
            let reply = match found.into_iter().next() {
                Some((id, pairs)) => entry_reply(id, pairs),
                None => Reply::Null,
            };
            info.push((field(name), reply));
        }
        return Ok(Reply::Map(info));
    }
    off_thread_if(ctx, visit_bound(stream, count))?;
    let entries =
        ctx.txn
            .stream_entries(db, key, stream, StreamId::MIN, StreamId::MAX, false, count)?;
    info.push((field("entries"), entries_reply(entries)));
    let mut groups_out = Vec::new();
    for group in ctx.txn.stream_groups(db, key, stream)? {
        let detail = group_detail(ctx, key, stream, &group, count)?;
        let pel = detail.pending.iter().map(|e| {
            Reply::Array(vec![
                id_reply(e.id),
                Reply::Bulk(e.consumer.clone()),
                Reply::Integer(e.delivery_time_ms as i64),
                Reply::Integer(e.delivery_count as i64),
            ])
        });
        let mut consumers_out = Vec::new();
        for (consumer, ids) in detail.consumers {
            let mut own = Vec::with_capacity(ids.len());
            for id in ids {
                if let Some(e) = ctx.txn.stream_pending_entry(db, key, stream, &group, id)? {
                    own.push(Reply::Array(vec![
                        id_reply(id),
                        Reply::Integer(e.delivery_time_ms as i64),
                        Reply::Integer(e.delivery_count as i64),
                    ]));
                }
            }
            consumers_out.push(Reply::Map(vec![
                (field("name"), Reply::Bulk(consumer.name)),
                (
                    field("seen-time"),
                    Reply::Integer(consumer.seen_time_ms as i64),
                ),
                (field("pel-count"), Reply::Integer(consumer.pending as i64)),
                (field("pending"), Reply::Array(own)),
            ]));
        }
        groups_out.push(Reply::Map(vec![
            (field("name"), Reply::Bulk(group.name.clone())),
            (field("last-delivered-id"), id_reply(group.last_id)),
            (field("entries-read"), entries_read_reply(&group)),
            (field("lag"), lag_reply(stream, &group)),
            (field("pel-count"), Reply::Integer(group.pending as i64)),
            (field("pending"), Reply::Array(pel.collect())),
            (field("consumers"), Reply::Array(consumers_out)),
        ]));
    }
    info.push((field("groups"), Reply::Array(groups_out)));
    Ok(Reply::Map(info))
}

/// XINFO's `radix-tree-nodes`: Firn keeps no radix tree, so this is the
/// count Redis's rax shows for nodes whose keys share nothing but their
/// first bytes, an estimate (see compatibility.md).
fn radix_tree_nodes(keys: u64) -> u64 {
    match keys {
        0 => 1,
        n => n * 2,
    }
}

/// A group's pending entries and its consumers with their own pending
/// IDs, at most `count` of each list (0: all): XINFO STREAM FULL and DUMP.
struct GroupDetail {
    pending: Vec<PendingEntry>,
    consumers: Vec<(firn_storage::StreamConsumer, Vec<StreamId>)>,
}

fn group_detail(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    stream: &StreamMeta,
    group: &StreamGroup,
    count: u64,
) -> CmdResult<GroupDetail> {
    let db = ctx.db();
    let mut pending = Vec::new();
    ctx.txn.stream_pending_range(
        db,
        key,
        stream,
        group,
        StreamId::MIN,
        StreamId::MAX,
        false,
        |e| {
            pending.push(e);
            count == 0 || (pending.len() as u64) < count
        },
    )?;
    let mut consumers = Vec::new();
    for consumer in ctx.txn.stream_consumers(db, key, stream, group)? {
        let ids = ctx.txn.stream_consumer_pending(
            db,
            key,
            stream,
            group,
            &consumer.name,
            StreamId::MIN,
            StreamId::MAX,
            count,
        )?;
        consumers.push((consumer, ids));
    }
    Ok(GroupDetail { pending, consumers })
}

/// XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id]
fn xsetid(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let id = strict_id(&args[2])?;
    let mut entries_added: Option<u64> = None;
    let mut max_deleted = StreamId::MIN;
    let mut i = 3;
    while i < args.len() {
        let more = args.len() - 1 - i;
        if is(&args[i], "entriesadded") && more > 0 {
            let n = int_arg(&args[i + 1])?;
            if n < 0 {
                return Err(CmdError::Static("ERR entries_added must be positive"));
            }
            entries_added = Some(n as u64);
            i += 2;
        } else if is(&args[i], "maxdeletedid") && more > 0 {
            max_deleted = strict_id(&args[i + 1])?;
            if id < max_deleted {
                return Err(CmdError::Static(
                    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
                ));
            }
            i += 2;
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    let db = ctx.db();
    let key = &args[1];
    let Some(mut stream) = stream_of(ctx, key)? else {
        return Err(CmdError::Static(crate::errors::NO_SUCH_KEY));
    };
    if !stream.is_empty() {
        let last = ctx
            .txn
            .stream_edge(db, key, &stream, true)?
            .unwrap_or_default();
        if id < last {
            return Err(CmdError::Static(
                "ERR The ID specified in XSETID is smaller than the target stream top item",
            ));
        }
        if entries_added.is_some_and(|n| stream.len() > n) {
            return Err(CmdError::Static(
                "ERR The entries_added specified in XSETID is smaller than the target stream length",
            ));
        }
    }
    stream.last_id = id;
    if let Some(n) = entries_added {
        stream.entries_added = n;
    }
    if !max_deleted.is_zero() {
        stream.max_deleted_id = max_deleted;
    }
    ctx.txn.save_stream(db, key, &mut stream)?;
    ctx.notify(class::STREAM, "xsetid", key);
    ctx.dirty(1);
    Ok(Reply::ok())
}

// ---- DUMP and RESTORE ----

fn rdb_id(id: StreamId) -> RdbId {
    RdbId {
        ms: id.ms,
        seq: id.seq,
    }
}

fn our_id(id: RdbId) -> StreamId {
    StreamId::new(id.ms, id.seq)
}

/// The whole stream, its groups, pending lists and consumers, for DUMP.
pub fn dump_value(ctx: &mut Ctx<'_>, key: &[u8], stream: &StreamMeta) -> CmdResult<RdbValue> {
    let db = ctx.db();
    let entries = ctx
        .txn
        .stream_entries(db, key, stream, StreamId::MIN, StreamId::MAX, false, 0)?
        .into_iter()
        .map(|(id, pairs)| {
            let fields = pairs.into_iter().map(|(f, v)| (f.to_vec(), v.to_vec()));
            (rdb_id(id), fields.collect())
        })
        .collect();
    let mut groups = Vec::new();
    for group in ctx.txn.stream_groups(db, key, stream)? {
        let detail = group_detail(ctx, key, stream, &group, 0)?;
        let pending = detail.pending.into_iter().map(|e| RdbPending {
            id: rdb_id(e.id),
            delivery_time_ms: e.delivery_time_ms,
            delivery_count: e.delivery_count,
            consumer: e.consumer.to_vec(),
        });
        let consumers = detail.consumers.into_iter().map(|(c, ids)| RdbConsumer {
            name: c.name.to_vec(),
            seen_time_ms: c.seen_time_ms,
            pending: ids.into_iter().map(rdb_id).collect(),
        });
        groups.push(RdbGroup {
            name: group.name.to_vec(),
            last_id: rdb_id(group.last_id),
            entries_read: group.entries_read,
            pending: pending.collect(),
            consumers: consumers.collect(),
        });
    }
    Ok(RdbValue::Stream(RdbStream {
        entries,
        length: stream.len(),
        last_id: rdb_id(stream.last_id),
        first_id: rdb_id(stream.first_id),
        max_deleted_id: rdb_id(stream.max_deleted_id),
        entries_added: stream.entries_added,
        groups,
    }))
}

/// Stores a restored stream at `key` (which RESTORE has cleared). Its
/// entries are appended in order, so its nodes are cut as this server's
/// `stream-node-max-*` cut them.
pub fn restore_value(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    value: RdbStream,
    expire_at_ms: u64,
) -> CmdResult<()> {
    let bad = || CmdError::Static("ERR Bad data format");
    let db = ctx.db();
    let mut stream = ctx.txn.new_stream();
    stream.coll.expire_at_ms = expire_at_ms;
    for (id, fields) in value.entries {
        let pairs: Vec<(Bytes, Bytes)> = fields
            .into_iter()
            .map(|(f, v)| (Bytes::from(f), Bytes::from(v)))
            .collect();
        match ctx
            .txn
            .stream_append(db, key, &mut stream, our_id(id), &pairs)
        {
            Ok(stored) => stored?,
            Err(_) => return Err(bad()),
        }
    }
    stream.last_id = our_id(value.last_id);
    stream.first_id = our_id(value.first_id);
    stream.max_deleted_id = our_id(value.max_deleted_id);
    stream.entries_added = value.entries_added;
    for g in value.groups {
        let created = ctx.txn.stream_create_group(
            db,
            key,
            &mut stream,
            &g.name,
            our_id(g.last_id),
            g.entries_read,
        )?;
        let mut group = created.ok_or_else(bad)?;
        for consumer in &g.consumers {
            let made = ctx.txn.stream_create_consumer(
                db,
                key,
                &stream,
                &mut group,
                &consumer.name,
                consumer.seen_time_ms,
            )?;
            if !made {
                return Err(bad());
            }
        }
        for p in g.pending {
            let entry = PendingEntry {
                id: our_id(p.id),
                consumer: Bytes::from(p.consumer),
                delivery_time_ms: p.delivery_time_ms,
                delivery_count: p.delivery_count,
            };
            ctx.txn
                .stream_put_pending(db, key, &stream, &mut group, &entry, None)
                .map_err(|_| bad())?;
        }
        ctx.txn.save_group(db, key, &stream, &group);
    }
    ctx.txn.save_stream(db, key, &mut stream)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_as_redis_reads_them() {
        let p = |s: &str| parse_id_full(s.as_bytes(), 7, false, true);
        assert_eq!(p("5"), Some((StreamId::new(5, 7), true)));
        assert_eq!(p("5-3"), Some((StreamId::new(5, 3), true)));
        assert_eq!(p("5-*"), Some((StreamId::new(5, 0), false)));
        assert_eq!(p("-"), Some((StreamId::MIN, true)));
        assert_eq!(p("+"), Some((StreamId::MAX, true)));
        assert_eq!(p("-5"), None);
        assert_eq!(p("5-x"), None);
        assert_eq!(
            p("18446744073709551615-18446744073709551615"),
            Some((StreamId::MAX, true))
        );
        assert_eq!(parse_id_full(b"+", 0, true, false), None);
        assert_eq!(parse_id_full(&[b'1'; 128], 0, false, false), None);
        assert_eq!(parse_id_full(b"5-*", 0, true, false), None);
    }
}
