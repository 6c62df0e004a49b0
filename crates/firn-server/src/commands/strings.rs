//! Strings: SET/GET and friends, counters, ranges, LCS.
//!
//! Encoding (firn-storage `string.rs`): up to 64 KiB inline in the key's
//! meta record, longer values in 64 KiB chunks, so range commands cost one
//! or two chunks whatever the value's size.

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::{notify_class as class, EncodingHint, ExpireAction, Txn};

use super::long_double::{long_double_sum, LongDoubleError};
use super::offload::{run_off_network_thread, BIG_READ_BYTES};
use super::{def, Ctx, Def};
use crate::args::{int_arg, is, parse_i64, ArgCursor};
use crate::errors::{
    wrong_arity, CmdError, CmdResult, NOT_FINITE, NOT_FLOAT, NOT_INTEGER, OVERFLOW,
    STRING_TOO_LONG, SYNTAX,
};

pub const COMMANDS: &[Def] = &[
    def("get", get),
    def("set", set),
    def("getex", getex),
    def("getdel", getdel),
    def("getset", getset),
    def("mget", mget),
    def("mset", mset),
    def("msetnx", msetnx),
    def("setnx", setnx),
    def("setex", setex),
    def("psetex", psetex),
    def("incr", incr),
    def("decr", decr),
    def("incrby", incrby),
    def("decrby", decrby),
    def("incrbyfloat", incrbyfloat),
    def("append", append),
    def("strlen", strlen),
    def("getrange", getrange),
    def("substr", getrange),
    def("setrange", setrange),
    def("lcs", lcs),
];

fn bulk_or_null(value: Option<Bytes>) -> Reply {
    value.map_or(Reply::Null, Reply::Bulk)
}

fn get(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    Ok(bulk_or_null(ctx.txn.get_string(db, &args[1])?))
}

/// SET's expiry option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ExpireOpt {
    None,
    Keep,
    /// Absolute Unix time in ms (already converted from EX/PX/EXAT/PXAT).
    At(u64),
}

/// Converts an EX/PX/EXAT/PXAT argument to absolute ms, with Redis's
/// checks: "value is not an integer" and "invalid expire time in '<cmd>'".
pub fn parse_expire(
    arg: &[u8],
    unit_ms: i64,
    absolute: bool,
    now_ms: u64,
    cmd: &str,
) -> CmdResult<u64> {
    let n = parse_i64(arg).ok_or(CmdError::Static(NOT_INTEGER))?;
    let invalid = || CmdError::Owned(format!("ERR invalid expire time in '{cmd}' command"));
    if n <= 0 {
        return Err(invalid());
    }
    let ms = n.checked_mul(unit_ms).ok_or_else(invalid)?;
    let at = if absolute {
        ms
    } else {
        ms.checked_add(now_ms as i64).ok_or_else(invalid)?
    };
    Ok(at as u64)
}

/// The unit and absoluteness of an EX/PX/EXAT/PXAT keyword.
fn expire_keyword(opt: &[u8]) -> Option<(i64, bool)> {
    match opt.to_ascii_lowercase().as_slice() {
        b"ex" => Some((1000, false)),
        b"px" => Some((1, false)),
        b"exat" => Some((1000, true)),
        b"pxat" => Some((1, true)),
        _ => None,
    }
}

/// Stores a string with SET's expiry option. A time already past is stored
/// as is: like Redis 7.0, the key then expires on its next access or in
/// the next active-expiry cycle.
fn store(txn: &mut Txn<'_>, db: u8, key: &[u8], value: Bytes, expire: ExpireOpt) -> CmdResult<()> {
    let action = match expire {
        ExpireOpt::At(at) => ExpireAction::At(at),
        ExpireOpt::Keep => ExpireAction::Keep,
        ExpireOpt::None => ExpireAction::Clear,
    };
    txn.set_string(db, key, value, action)?;
    Ok(())
}

fn set(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let now = ctx.txn.now_ms();
    let (key, value) = (&args[1], args[2].clone());
    let (mut nx, mut xx, mut want_get, mut keep_ttl) = (false, false, false, false);
    // Redis accepts a repeated option (the last value wins) but not two
    // different expiry options.
    let mut expire_arg: Option<(&Bytes, &Bytes)> = None;
    let mut cursor = ArgCursor::new(args, 3);
    while let Some(opt) = cursor.next_arg() {
        let same_expiry = |k: &Bytes| k.eq_ignore_ascii_case(opt);
        if is(opt, "nx") && !xx {
            nx = true;
        } else if is(opt, "xx") && !nx {
            xx = true;
        } else if is(opt, "get") {
            want_get = true;
        } else if is(opt, "keepttl") && expire_arg.is_none() {
            keep_ttl = true;
        } else if expire_keyword(opt).is_some()
            && !keep_ttl
            && expire_arg.is_none_or(|(k, _)| same_expiry(k))
        {
            expire_arg = Some((opt, cursor.value()?));
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    let expire = match expire_arg {
        Some((keyword, raw)) => {
            let (unit, absolute) = expire_keyword(keyword).unwrap_or((1, true));
            ExpireOpt::At(parse_expire(raw, unit, absolute, now, "set")?)
        }
        None if keep_ttl => ExpireOpt::Keep,
        None => ExpireOpt::None,
    };
    let old = if want_get {
        // SET ... GET reads as Redis's lookupKeyRead (a keymiss).
        ctx.txn.set_read_lookups(true);
        let old = ctx.txn.get_string(db, key)?;
        ctx.txn.set_read_lookups(false);
        old
    } else {
        None
    };
    let exists = want_get && old.is_some() || !want_get && ctx.txn.exists(db, key)?;
    if (nx && exists) || (xx && !exists) {
        return Ok(if want_get {
            bulk_or_null(old)
        } else {
            Reply::Null
        });
    }
    if let (ExpireOpt::At(at), Some((keyword, _))) = (expire, expire_arg) {
        if !is(keyword, "pxat") {
            ctx.replay_as(&[b"SET", key, &value, b"PXAT", at.to_string().as_bytes()]);
        }
    }
    store(&mut ctx.txn, db, key, value, expire)?;
    notify_set(ctx, key, expire);
    ctx.dirty(1);
    Ok(if want_get {
        bulk_or_null(old)
    } else {
        Reply::ok()
    })
}

/// SET's events: `set`, then `expire` when it set a time to live.
fn notify_set(ctx: &mut Ctx<'_>, key: &[u8], expire: ExpireOpt) {
    ctx.notify(class::STRING, "set", key);
    if let ExpireOpt::At(_) = expire {
        ctx.notify(class::GENERIC, "expire", key);
    }
}

fn getex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let now = ctx.txn.now_ms();
    let key = &args[1];
    // Redis checks the syntax first, then looks the key up, and validates
    // the expire value only for an existing string.
    let mut persist = false;
    let mut expire_arg: Option<(&Bytes, &Bytes)> = None;
    let mut cursor = ArgCursor::new(args, 2);
    while let Some(opt) = cursor.next_arg() {
        if is(opt, "persist") && expire_arg.is_none() {
            persist = true;
        } else if expire_keyword(opt).is_some()
            && !persist
            && expire_arg.is_none_or(|(k, _)| k.eq_ignore_ascii_case(opt))
        {
            expire_arg = Some((opt, cursor.value()?));
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    ctx.txn.set_read_lookups(true);
    let value = ctx.txn.get_string(db, key)?;
    ctx.txn.set_read_lookups(false);
    let Some(value) = value else {
        return Ok(Reply::Null);
    };
    if let Some((keyword, raw)) = expire_arg {
        let (unit, absolute) = expire_keyword(keyword).unwrap_or((1, true));
        let at = parse_expire(raw, unit, absolute, now, "getex")?;
        if at <= now {
            ctx.txn.delete_key(db, key)?;
            ctx.replay_as(&[b"DEL", key]);
            ctx.notify(class::GENERIC, "del", key);
            ctx.dirty(1);
        } else {
            ctx.txn.set_expire_at(db, key, at)?;
            ctx.replay_as(&[b"PEXPIREAT", key, at.to_string().as_bytes()]);
            ctx.notify(class::GENERIC, "expire", key);
            ctx.dirty(1);
        }
    } else if persist {
        // Without a TTL there is nothing to remove: Redis writes, signals
        // and propagates nothing (a WATCH of the key holds).
        let had_ttl = ctx.txn.meta(db, key)?.is_some_and(|m| m.expire_at_ms != 0);
        if had_ttl {
            ctx.txn.set_expire_at(db, key, 0)?;
            ctx.notify(class::GENERIC, "persist", key);
            ctx.dirty(1);
            ctx.replay_as(&[b"PERSIST", key]);
        }
    }
    Ok(Reply::Bulk(value))
}

fn getdel(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    ctx.txn.set_read_lookups(true);
    let value = ctx.txn.get_string(db, &args[1])?;
    ctx.txn.set_read_lookups(false);
    if value.is_some() {
        ctx.txn.delete_key(db, &args[1])?;
        ctx.replay_as(&[b"DEL", &args[1]]);
        ctx.notify(class::GENERIC, "del", &args[1]);
        ctx.dirty(1);
    }
    Ok(bulk_or_null(value))
}

fn getset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    ctx.txn.set_read_lookups(true);
    let old = ctx.txn.get_string(db, &args[1])?;
    ctx.txn.set_read_lookups(false);
    ctx.txn
        .set_string(db, &args[1], args[2].clone(), ExpireAction::Clear)?;
    ctx.replay_as(&[b"SET", &args[1], &args[2]]);
    ctx.notify(class::STRING, "set", &args[1]);
    ctx.dirty(1);
    Ok(bulk_or_null(old))
}

fn mget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let mut out = Vec::with_capacity(args.len() - 1);
    for key in &args[1..] {
        out.push(match ctx.txn.get_string(db, key) {
            Ok(v) => bulk_or_null(v),
            Err(firn_storage::StorageError::WrongType) => Reply::Null,
            Err(e) => return Err(e.into()),
        });
    }
    Ok(Reply::Array(out))
}

fn mset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len().is_multiple_of(2) {
        return Err(wrong_arity("mset"));
    }
    let db = ctx.db();
    for pair in args[1..].chunks(2) {
        ctx.txn
            .set_string(db, &pair[0], pair[1].clone(), ExpireAction::Clear)?;
        ctx.notify(class::STRING, "set", &pair[0]);
    }
    ctx.dirty(args.len() as u64 / 2);
    Ok(Reply::ok())
}

fn msetnx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len().is_multiple_of(2) {
        return Err(wrong_arity("msetnx"));
    }
    let db = ctx.db();
    for pair in args[1..].chunks(2) {
        if ctx.txn.exists(db, &pair[0])? {
            return Ok(Reply::Integer(0));
        }
    }
    for pair in args[1..].chunks(2) {
        ctx.txn
            .set_string(db, &pair[0], pair[1].clone(), ExpireAction::Clear)?;
        ctx.notify(class::STRING, "set", &pair[0]);
    }
    ctx.dirty(args.len() as u64 / 2);
    Ok(Reply::Integer(1))
}

fn setnx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    if ctx.txn.exists(db, &args[1])? {
        return Ok(Reply::Integer(0));
    }
    ctx.txn
        .set_string(db, &args[1], args[2].clone(), ExpireAction::Clear)?;
    ctx.notify(class::STRING, "set", &args[1]);
    ctx.dirty(1);
    Ok(Reply::Integer(1))
}

fn setex_with_unit(ctx: &mut Ctx<'_>, args: &[Bytes], unit_ms: i64, name: &str) -> CmdResult {
    let db = ctx.db();
    let at = parse_expire(&args[2], unit_ms, false, ctx.txn.now_ms(), name)?;
    ctx.replay_as(&[
        b"SET",
        &args[1],
        &args[3],
        b"PXAT",
        at.to_string().as_bytes(),
    ]);
    store(
        &mut ctx.txn,
        db,
        &args[1],
        args[3].clone(),
        ExpireOpt::At(at),
    )?;
    notify_set(ctx, &args[1], ExpireOpt::At(at));
    ctx.dirty(1);
    Ok(Reply::ok())
}

fn setex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    setex_with_unit(ctx, args, 1000, "setex")
}

fn psetex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    setex_with_unit(ctx, args, 1, "psetex")
}

/// INCR/DECR/INCRBY/DECRBY: the value must be a string2ll integer; the
/// key's expiry is kept.
fn add_integer(ctx: &mut Ctx<'_>, key: &Bytes, delta: i64) -> CmdResult {
    let db = ctx.db();
    let current = match ctx.txn.get_string(db, key)? {
        None => 0,
        Some(v) => parse_i64(&v).ok_or(CmdError::Static(NOT_INTEGER))?,
    };
    let next = current
        .checked_add(delta)
        .ok_or(CmdError::Static(OVERFLOW))?;
    ctx.txn
        .set_string(db, key, Bytes::from(next.to_string()), ExpireAction::Keep)?;
    ctx.notify(class::STRING, "incrby", key);
    ctx.dirty(1);
    Ok(Reply::Integer(next))
}

fn incr(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    add_integer(ctx, &args[1], 1)
}

fn decr(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    add_integer(ctx, &args[1], -1)
}

fn incrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let delta = int_arg(&args[2])?;
    add_integer(ctx, &args[1], delta)
}

fn decrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let delta = int_arg(&args[2])?;
    if delta == i64::MIN {
        return Err(CmdError::Static("ERR decrement would overflow"));
    }
    add_integer(ctx, &args[1], -delta)
}

/// `value + incr` in C long double, printed as Redis prints it.
fn long_double_add(value: &[u8], incr: &[u8]) -> CmdResult<Bytes> {
    long_double_sum(value, incr).map_err(|e| match e {
        LongDoubleError::NotFloat => CmdError::Static(NOT_FLOAT),
        LongDoubleError::NotFinite => CmdError::Static(NOT_FINITE),
    })
}

fn incrbyfloat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let current = ctx
        .txn
        .get_string(db, &args[1])?
        .unwrap_or_else(|| Bytes::from_static(b"0"));
    let next = long_double_add(&current, &args[2])?;
    // Redis stores the result as a plain string object, never "int".
    ctx.txn.set_string_as(
        db,
        &args[1],
        next.clone(),
        ExpireAction::Keep,
        EncodingHint::Plain,
    )?;
    // Replicas must not redo the float arithmetic.
    ctx.replay_as(&[b"SET", &args[1], &next, b"KEEPTTL"]);
    ctx.notify(class::STRING, "incrbyfloat", &args[1]);
    ctx.dirty(1);
    Ok(Reply::Bulk(next))
}

fn max_string_len(ctx: &Ctx<'_>) -> u64 {
    ctx.server.config().proto_max_bulk_len
}

fn append(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    match ctx.txn.string_meta(db, key)? {
        None => {
            // Redis stores the argument itself here, so OBJECT ENCODING is
            // int/embstr rather than raw.
            ctx.txn
                .set_string(db, key, args[2].clone(), ExpireAction::Clear)?;
            ctx.notify(class::STRING, "append", key);
            ctx.dirty(1);
            Ok(Reply::Integer(args[2].len() as i64))
        }
        Some(meta) => {
            let len = Txn::string_len_of(&meta);
            if len + args[2].len() as u64 > max_string_len(ctx) {
                return Err(CmdError::Static(STRING_TOO_LONG));
            }
            let max = max_string_len(ctx);
            let new_len = ctx.txn.write_string_range(db, key, len, &args[2], max)?;
            ctx.notify(class::STRING, "append", key);
            ctx.dirty(1);
            Ok(Reply::Integer(new_len as i64))
        }
    }
}

fn strlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let len = ctx
        .txn
        .string_meta(db, &args[1])?
        .map_or(0, |m| Txn::string_len_of(&m));
    Ok(Reply::Integer(len as i64))
}

/// Resolves GETRANGE's inclusive, possibly negative indices to a
/// `(start, len)` byte range, or `None` for an empty result.
pub fn resolve_range(start: i64, end: i64, strlen: u64) -> Option<(u64, u64)> {
    let strlen = strlen as i64;
    if start < 0 && end < 0 && start > end {
        return None;
    }
    let mut start = if start < 0 {
        strlen.saturating_add(start)
    } else {
        start
    };
    let mut end = if end < 0 {
        strlen.saturating_add(end)
    } else {
        end
    };
    if start < 0 {
        start = 0;
    }
    if end < 0 {
        end = 0;
    }
    if end >= strlen {
        end = strlen - 1;
    }
    if strlen == 0 || start > end {
        return None;
    }
    Some((start as u64, (end - start + 1) as u64))
}

fn getrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let (start, end) = (int_arg(&args[2])?, int_arg(&args[3])?);
    if let Some(reply) = getrange_in(&mut ctx.txn, db, &args[1], start, end, BIG_READ_BYTES)? {
        return Ok(reply);
    }
    let key = args[1].clone();
    run_off_network_thread(ctx, vec![key.clone()], move |txn, db| {
        Ok(getrange_in(txn, db, &key, start, end, u64::MAX)?.unwrap_or(Reply::Null))
    })
}

/// GETRANGE's reply, or `None` if it is longer than `max_bytes`.
fn getrange_in(
    txn: &mut Txn<'_>,
    db: u8,
    key: &[u8],
    start: i64,
    end: i64,
    max_bytes: u64,
) -> CmdResult<Option<Reply>> {
    let Some(meta) = txn.string_meta(db, key)? else {
        return Ok(Some(Reply::Bulk(Bytes::new())));
    };
    let Some((from, len)) = resolve_range(start, end, Txn::string_len_of(&meta)) else {
        return Ok(Some(Reply::Bulk(Bytes::new())));
    };
    if len > max_bytes {
        return Ok(None);
    }
    Ok(Some(Reply::Bulk(
        txn.read_string_range(db, key, &meta, from, len)?,
    )))
}

fn setrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let (key, value) = (&args[1], &args[3]);
    let offset = int_arg(&args[2])?;
    if offset < 0 {
        return Err(CmdError::Static("ERR offset is out of range"));
    }
    let meta = ctx.txn.string_meta(db, key)?;
    let len = meta.as_ref().map_or(0, Txn::string_len_of);
    if value.is_empty() {
        return Ok(Reply::Integer(len as i64));
    }
    let max = max_string_len(ctx);
    if offset as u64 + value.len() as u64 > max {
        return Err(CmdError::Static(STRING_TOO_LONG));
    }
    let new_len = ctx
        .txn
        .write_string_range(db, key, offset as u64, value, max)?;
    ctx.notify(class::STRING, "setrange", key);
    ctx.dirty(1);
    Ok(Reply::Integer(new_len as i64))
}

/// LCS tables of more cells than this are computed on a blocking thread.
const LCS_INLINE_CELLS: u64 = 1 << 20;

fn lcs(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let max_table_bytes = max_string_len(ctx);
    if let Some(reply) = lcs_in(&mut ctx.txn, db, args, max_table_bytes, LCS_INLINE_CELLS)? {
        return Ok(reply);
    }
    let args = args.to_vec();
    run_off_network_thread(
        ctx,
        vec![args[1].clone(), args[2].clone()],
        move |txn, db| Ok(lcs_in(txn, db, &args, max_table_bytes, u64::MAX)?.unwrap_or(Reply::Null)),
    )
}

/// LCS's reply, or `None` if its table has more than `max_inline_cells`.
/// The lengths come from the keys' metadata, so a value too big for the
/// table (Redis: more than proto-max-bulk-len bytes of 4-byte cells) is
/// refused without being read.
fn lcs_in(
    txn: &mut Txn<'_>,
    db: u8,
    args: &[Bytes],
    max_table_bytes: u64,
    max_inline_cells: u64,
) -> CmdResult<Option<Reply>> {
    let mut string_meta = |key: &[u8]| match txn.string_meta(db, key) {
        Ok(meta) => Ok(meta),
        Err(firn_storage::StorageError::WrongType) => Err(CmdError::Static(
            "ERR The specified keys must contain string values",
        )),
        Err(e) => Err(CmdError::Storage(e)),
    };
    let meta_a = string_meta(&args[1])?;
    let meta_b = string_meta(&args[2])?;
    let (mut get_idx, mut get_len, mut with_match_len, mut min_match_len) =
        (false, false, false, 0i64);
    let mut cursor = ArgCursor::new(args, 3);
    while let Some(opt) = cursor.next_arg() {
        if is(opt, "idx") {
            get_idx = true;
        } else if is(opt, "len") {
            get_len = true;
        } else if is(opt, "withmatchlen") {
            with_match_len = true;
        } else if is(opt, "minmatchlen") && cursor.peek().is_some() {
            min_match_len = cursor.int_value()?.max(0);
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    if get_idx && get_len {
        return Err(CmdError::Static(
            "ERR If you want both the length and indexes, please just use IDX.",
        ));
    }
    let len_a = meta_a.as_ref().map_or(0, Txn::string_len_of);
    let len_b = meta_b.as_ref().map_or(0, Txn::string_len_of);
    let cells = (len_a + 1).saturating_mul(len_b + 1);
    if cells.saturating_mul(4) > max_table_bytes || cells > u32::MAX as u64 {
        return Err(CmdError::Static(
            "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len",
        ));
    }
    if cells > max_inline_cells {
        return Ok(None);
    }
    let mut value = |key: &[u8], meta: Option<firn_storage::Meta>, len: u64| match meta {
        Some(meta) => txn.read_string_range(db, key, &meta, 0, len),
        None => Ok(Bytes::new()),
    };
    let a = value(&args[1], meta_a, len_a)?;
    let b = value(&args[2], meta_b, len_b)?;
    Ok(Some(lcs_reply(
        &a,
        &b,
        get_idx,
        get_len,
        with_match_len,
        min_match_len as u64,
    )))
}

/// LCS by dynamic programming, walking back from the end exactly as Redis
/// does so that IDX reports the same ranges in the same order.
fn lcs_reply(
    a: &[u8],
    b: &[u8],
    get_idx: bool,
    get_len: bool,
    with_match_len: bool,
    min_match_len: u64,
) -> Reply {
    let (alen, blen) = (a.len(), b.len());
    let width = blen + 1;
    let mut table = vec![0u32; (alen + 1) * width];
    for i in 1..=alen {
        for j in 1..=blen {
            table[i * width + j] = if a[i - 1] == b[j - 1] {
                table[(i - 1) * width + j - 1] + 1
            } else {
                table[(i - 1) * width + j].max(table[i * width + j - 1])
            };
        }
    }
    let total = table[alen * width + blen];
    let compute = get_idx || !get_len;
    let mut result = vec![0u8; total as usize];
    let mut matches = Vec::new();
    let (mut i, mut j, mut idx) = (alen, blen, total as usize);
    let (mut a_start, mut a_end, mut b_start, mut b_end) = (alen, 0usize, 0usize, 0usize);
    while compute && i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            result[idx - 1] = a[i - 1];
            if a_start == alen {
                (a_start, a_end, b_start, b_end) = (i - 1, i - 1, j - 1, j - 1);
            } else if a_start == i && b_start == j {
                a_start -= 1;
                b_start -= 1;
            } else {
                emit = true;
            }
            if a_start == 0 || b_start == 0 {
                emit = true;
            }
            idx -= 1;
            i -= 1;
            j -= 1;
        } else {
            if table[(i - 1) * width + j] > table[i * width + j - 1] {
                i -= 1;
            } else {
                j -= 1;
            }
            if a_start != alen {
                emit = true;
            }
        }
        if emit {
            let match_len = (a_end - a_start + 1) as u64;
            if get_idx && (min_match_len == 0 || match_len >= min_match_len) {
                let mut entry = vec![
                    Reply::Array(vec![
                        Reply::Integer(a_start as i64),
                        Reply::Integer(a_end as i64),
                    ]),
                    Reply::Array(vec![
                        Reply::Integer(b_start as i64),
                        Reply::Integer(b_end as i64),
                    ]),
                ];
                if with_match_len {
                    entry.push(Reply::Integer(match_len as i64));
                }
                matches.push(Reply::Array(entry));
            }
            a_start = alen;
        }
    }
    if get_idx {
        Reply::Map(vec![
            (
                Reply::Bulk(Bytes::from_static(b"matches")),
                Reply::Array(matches),
            ),
            (
                Reply::Bulk(Bytes::from_static(b"len")),
                Reply::Integer(total as i64),
            ),
        ])
    } else if get_len {
        Reply::Integer(total as i64)
    } else {
        Reply::Bulk(Bytes::from(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_double_addition_matches_redis() {
        assert_eq!(long_double_add(b"10.5", b"0.1").unwrap(), "10.6");
        assert_eq!(long_double_add(b"0", b"3.0e3").unwrap(), "3000");
        assert_eq!(long_double_add(b"1", b"-1").unwrap(), "0");
        assert!(long_double_add(b"abc", b"1").is_err());
        assert!(long_double_add(b"1", b" 1").is_err());
        assert!(long_double_add(b"0", b"1e5000").is_err());
        assert!(long_double_add(b"\0\0", b"1").is_err());
        assert!(long_double_add(b"1\0", b"1").is_err());
    }

    #[test]
    fn ranges_follow_getrange() {
        assert_eq!(resolve_range(0, -1, 5), Some((0, 5)));
        assert_eq!(resolve_range(-3, -1, 5), Some((2, 3)));
        assert_eq!(resolve_range(-1, -3, 5), None);
        assert_eq!(resolve_range(10, 20, 5), None);
        assert_eq!(resolve_range(0, 100, 5), Some((0, 5)));
        assert_eq!(resolve_range(0, 0, 0), None);
        assert_eq!(resolve_range(i64::MIN, i64::MAX, 3), Some((0, 3)));
    }

    #[test]
    fn lcs_reports_redis_ranges() {
        let reply = lcs_reply(b"ohmytext", b"mynewtext", false, false, false, 0);
        assert_eq!(reply, Reply::Bulk(Bytes::from_static(b"mytext")));
        let reply = lcs_reply(b"ohmytext", b"mynewtext", true, false, false, 0);
        let Reply::Map(fields) = reply else {
            panic!("map expected")
        };
        assert_eq!(fields[1].1, Reply::Integer(6));
        let Reply::Array(matches) = &fields[0].1 else {
            panic!("array expected")
        };
        assert_eq!(matches.len(), 2);
        assert_eq!(
            matches[0],
            Reply::Array(vec![
                Reply::Array(vec![Reply::Integer(4), Reply::Integer(7)]),
                Reply::Array(vec![Reply::Integer(5), Reply::Integer(8)]),
            ])
        );
    }
}
