//! Generic key commands: DEL, EXISTS, TYPE, expiry, RENAME/COPY/MOVE, KEYS,
//! SCAN, RANDOMKEY, OBJECT, DUMP/RESTORE.
//!
//! Keys of every type share one meta record (see firn-storage meta.rs), so
//! everything here works on metadata: deleting or expiring a collection is
//! O(1) and its members are reclaimed by compaction. Copies (RENAME, COPY,
//! MOVE) of chunked strings and collections copy their members.
//!
//! Commands whose work grows with the data never run on a network thread:
//! KEYS, SCAN with a COUNT above [`SCAN_INLINE_MAX_COUNT`] (or a pattern too
//! long to match inline, see [`SCAN_INLINE_MATCH_STEPS`]), and a RANDOMKEY
//! that finds only expired keys within [`RANDOMKEY_INLINE_VISITS`] records
//! run as blocking jobs over one consistent snapshot (firn-storage's
//! `KeyspaceView`). Short steps stay inline, where they answer faster.

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::{
    notify_class as class, Body, Collection, Meta, RandomPick, ScanPage, Txn, ValueType,
};
use std::sync::Arc;

use super::collection::string_encoding;
use super::replies::help_reply;
use super::scan::{parse_cursor, KeyPattern};
use super::{def, def_keys, Ctx, Def, Deferred, Traits};
use crate::args::{int_arg, is, parse_i64, ArgCursor};
use crate::errors::{
    CmdError, CmdResult, DB_OUT_OF_RANGE, INT_RANGE, NOT_INTEGER, NO_SUCH_KEY, SAME_OBJECT, SYNTAX,
};
use crate::rdb::RdbValue;
use crate::server::Server;

/// SCAN steps visiting at most this many records run on the network thread.
/// Measured (bench/long_commands.md): a step of 100 records answers in
/// 0.07 ms inline, while handing a step to a blocking thread costs about
/// 0.15 ms more; 1000 records would hold a network thread for 0.5 ms.
pub const SCAN_INLINE_MAX_COUNT: usize = 100;

/// Inline SCAN steps take MATCH patterns up to this many bytes...
pub const SCAN_INLINE_MAX_PATTERN: usize = 1024;

/// ...and give up matching after this many glob steps (a few tenths of a
/// millisecond), handing the step to a blocking thread: long keys against
/// a long pattern cost (pattern × key) steps each.
pub const SCAN_INLINE_MATCH_STEPS: u64 = 200_000;

/// Records RANDOMKEY visits on the network thread before handing the search
/// to a blocking thread (only expired keys seen so far).
pub const RANDOMKEY_INLINE_VISITS: usize = 100;

/// An expiry or PERSIST gives a blocked client nothing (ADDS_NOTHING: a
/// stream's XREADGROUP reader stays blocked, as in Redis; an expiry that
/// deletes a stream still ends its wait, see firn-storage txn.rs).
pub const COMMANDS: &[Def] = &[
    def("del", del).forgets_keys(),
    def("unlink", del).forgets_keys(),
    def("exists", exists).no_touch(),
    def("type", key_type).no_touch(),
    def("touch", exists),
    def("keys", keys),
    def("scan", scan),
    def("randomkey", randomkey),
    def("expire", expire).with(Traits::ADDS_NOTHING),
    def("pexpire", pexpire).with(Traits::ADDS_NOTHING),
    def("expireat", expireat).with(Traits::ADDS_NOTHING),
    def("pexpireat", pexpireat).with(Traits::ADDS_NOTHING),
    def("ttl", ttl).no_touch(),
    def("pttl", pttl).no_touch(),
    def("expiretime", expiretime).no_touch(),
    def("pexpiretime", pexpiretime).no_touch(),
    def("persist", persist).with(Traits::ADDS_NOTHING),
    def("rename", rename),
    def("renamenx", renamenx),
    def_keys("copy", copy, copy_keys),
    def_keys("move", move_key, move_keys),
    def("object|encoding", object_encoding).no_touch(),
    def("object|freq", object_freq).no_touch(),
    def("object|idletime", object_idletime).no_touch(),
    def("object|refcount", object_refcount).no_touch(),
    def("object|help", object_help).no_touch(),
    def("memory|usage", memory_usage).no_touch(),
    def("memory|tiers", memory_tiers).no_touch(),
    def("dump", dump),
    def("restore", restore),
];

fn del(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let mut n = 0;
    for key in &args[1..] {
        if ctx.txn.delete_key(db, key)? {
            ctx.notify(class::GENERIC, "del", key);
            n += 1;
        }
    }
    ctx.dirty(n as u64);
    Ok(Reply::Integer(n))
}

/// EXISTS and TOUCH: how many of the keys exist (repeats count again).
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

fn key_type(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let name = ctx
        .txn
        .facts(db, &args[1])?
        .map_or("none", |f| f.value_type.name());
    Ok(Reply::Simple(Bytes::from_static(name.as_bytes())))
}

/// Runs `job` off the network threads; its reply replaces the handler's.
fn defer(ctx: &mut Ctx<'_>, job: impl FnOnce(&Arc<Server>) -> CmdResult + Send + 'static) {
    ctx.deferred = Some(Deferred::Blocking(Box::new(move |server: &Arc<Server>| {
        run_in_background(|| job(server)).unwrap_or_else(CmdError::into_reply)
    })));
}

/// Runs `work` on a fresh thread with a lower CPU priority, so that on a
/// busy machine a long scan takes the CPU time the network threads leave
/// rather than competing with them for it. A fresh thread costs tens of
/// microseconds, nothing next to a long command, and needs no priority
/// restored afterwards (raising it back would need privileges). If no
/// thread can be started, `work` runs here at normal priority.
fn run_in_background(work: impl FnOnce() -> CmdResult + Send) -> CmdResult {
    let failed = || Err(CmdError::Static("ERR background job failed"));
    let slot = parking_lot::Mutex::new(Some(work));
    let take = || slot.lock().take();
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("firn-long-cmd".into())
            .spawn_scoped(scope, || {
                crate::coldpool::lower_thread_priority();
                take().map(|work| work())
            });
        match spawned {
            Ok(handle) => handle.join().ok().flatten().unwrap_or_else(failed),
            Err(_) => take().map_or_else(failed, |work| work()),
        }
    })
}

/// KEYS visits every key: always a streamed job over a snapshot. The
/// snapshot is walked twice, once to count the matching keys (the reply's
/// length comes first) and once to send them, so the reply is never held
/// whole, however many keys match.
fn keys(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    if ctx.in_unit {
        // Inside EXEC or a script: the keys as the unit's transaction sees
        // them at this point, its own writes included (a snapshot would
        // miss them), on the pool.
        super::offload::off_thread_if(ctx, u64::MAX)?;
        let pattern = KeyPattern::new(&args[1]);
        let page = ctx
            .txn
            .scan_keys(db, None, usize::MAX, |key, _| pattern.matches(key))?;
        return Ok(Reply::Array(
            page.keys.into_iter().map(Reply::Bulk).collect(),
        ));
    }
    let pattern = args[1].clone();
    ctx.stream_reply(move |server, sink| {
        // Compiled here: a pattern may be as long as a bulk string.
        let pattern = KeyPattern::new(&pattern);
        let mut view = server.engine.keyspace_view(db)?;
        let mut matching = 0usize;
        view.visit_keys(|key| {
            matching += pattern.matches(key) as usize;
            true
        })?;
        if !sink.array(matching) {
            return Ok(());
        }
        let mut sent = 0usize;
        view.visit_keys(|key| {
            if sent == matching || !pattern.matches(key) {
                return sent < matching;
            }
            sent += 1;
            sink.item(Reply::Bulk(Bytes::copy_from_slice(key)))
        })?;
        Ok(())
    });
    Ok(Reply::Null)
}

/// SCAN's MATCH and TYPE options, compiled.
struct ScanFilter {
    pattern: KeyPattern,
    type_name: Option<Bytes>,
}

impl ScanFilter {
    fn new(pattern: Option<&Bytes>, type_name: Option<Bytes>) -> ScanFilter {
        ScanFilter {
            pattern: pattern.map_or(KeyPattern::All, |p| KeyPattern::new(p)),
            type_name,
        }
    }

    /// Whether SCAN returns `key`; `None` if matching ran out of `budget`.
    fn keeps(&self, key: &[u8], meta: &Meta, budget: &mut u64) -> Option<bool> {
        let type_ok = self
            .type_name
            .as_ref()
            .is_none_or(|t| t.eq_ignore_ascii_case(meta.value_type.name().as_bytes()));
        if !type_ok {
            return Some(false);
        }
        self.pattern.matches_within(key, budget)
    }
}

/// `[next cursor, keys]`, remembering where the step stopped.
fn scan_reply(server: &Server, db: u8, page: ScanPage) -> Reply {
    let next = match page.next_after {
        Some(last) => server.scan_cursors.lock().save(db, last),
        None => 0,
    };
    Reply::Array(vec![
        Reply::Bulk(Bytes::from(next.to_string())),
        Reply::Array(page.keys.into_iter().map(Reply::Bulk).collect()),
    ])
}

fn scan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let cursor = parse_cursor(&args[1]).ok_or(CmdError::Static("ERR invalid cursor"))?;
    let (mut pattern, mut type_name, mut count) = (None, None, 10);
    let mut opts = ArgCursor::new(args, 2);
    while let Some(opt) = opts.next_arg() {
        if is(opt, "match") && opts.peek().is_some() {
            pattern = Some(opts.value()?.clone());
        } else if is(opt, "count") && opts.peek().is_some() {
            let n = opts.int_value()?;
            if n < 1 {
                return Err(CmdError::Static(SYNTAX));
            }
            count = usize::try_from(n).unwrap_or(usize::MAX);
        } else if is(opt, "type") && opts.peek().is_some() {
            type_name = Some(opts.value()?.clone());
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    let after = if cursor == 0 {
        None
    } else {
        ctx.server.scan_cursors.lock().resume(db, cursor)
    };
    let short_pattern = pattern
        .as_ref()
        .is_none_or(|p| p.len() <= SCAN_INLINE_MAX_PATTERN);
    // Inside EXEC or a script a step reads the unit's own transaction, on
    // the pool when it is long (see `Ctx::in_unit`).
    if ctx.in_unit {
        super::offload::off_thread_if(ctx, count as u64)?;
    }
    if ctx.in_unit || (count <= SCAN_INLINE_MAX_COUNT && short_pattern) {
        let filter = ScanFilter::new(pattern.as_ref(), type_name.clone());
        let mut budget = if ctx.in_unit {
            u64::MAX
        } else {
            SCAN_INLINE_MATCH_STEPS
        };
        let mut out_of_budget = false;
        let page = ctx
            .txn
            .scan_keys(db, after.as_deref(), count, |key, meta| {
                filter.keeps(key, meta, &mut budget).unwrap_or_else(|| {
                    out_of_budget = true;
                    false
                })
            })?;
        if !out_of_budget {
            return Ok(scan_reply(ctx.server, db, page));
        }
        // Long keys against a long pattern: redo the step off-thread.
    }
    defer(ctx, move |server| {
        let filter = ScanFilter::new(pattern.as_ref(), type_name);
        let mut view = server.engine.keyspace_view(db)?;
        let mut unlimited = u64::MAX;
        let page = view.scan_keys(after.as_deref(), count, |key, meta| {
            filter.keeps(key, meta, &mut unlimited).unwrap_or(false)
        })?;
        Ok(scan_reply(server, db, page))
    });
    Ok(Reply::Null)
}

/// Like Redis, RANDOMKEY answers nil only for a database without live
/// keys, however many expired ones it must pass first. The first
/// [`RANDOMKEY_INLINE_VISITS`] records are tried inline; past them the
/// search continues from the same position on a blocking thread.
fn randomkey(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let seed: u64 = rand::random();
    // Inside EXEC or a script the search reads the unit's own transaction.
    let visits = if ctx.in_unit {
        usize::MAX
    } else {
        RANDOMKEY_INLINE_VISITS
    };
    match ctx.txn.random_key(db, seed, visits)? {
        RandomPick::Key(key) => Ok(Reply::Bulk(key)),
        RandomPick::Empty => Ok(Reply::Null),
        RandomPick::Undecided => {
            defer(ctx, move |server| {
                let mut view = server.engine.keyspace_view(db)?;
                Ok(view.random_key(seed)?.map_or(Reply::Null, Reply::Bulk))
            });
            Ok(Reply::Null)
        }
    }
}

/// EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT, following Redis's
/// expireGenericCommand: options first, then the number, then the key.
fn expire_generic(
    ctx: &mut Ctx<'_>,
    args: &[Bytes],
    unit_ms: i64,
    relative: bool,
    name: &str,
) -> CmdResult {
    let db = ctx.db();
    let now = ctx.txn.now_ms() as i64;
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for opt in &args[3..] {
        if is(opt, "nx") {
            nx = true;
        } else if is(opt, "xx") {
            xx = true;
        } else if is(opt, "gt") {
            gt = true;
        } else if is(opt, "lt") {
            lt = true;
        } else {
            return Err(CmdError::Owned(format!(
                "ERR Unsupported option {}",
                String::from_utf8_lossy(opt)
            )));
        }
    }
    if nx && (xx || gt || lt) {
        return Err(CmdError::Static(
            "ERR NX and XX, GT or LT options at the same time are not compatible",
        ));
    }
    if gt && lt {
        return Err(CmdError::Static(
            "ERR GT and LT options at the same time are not compatible",
        ));
    }
    let invalid = || CmdError::Owned(format!("ERR invalid expire time in '{name}' command"));
    let mut when = int_arg(&args[2])?;
    if unit_ms == 1000 {
        when = when.checked_mul(1000).ok_or_else(invalid)?;
    }
    if relative {
        when = when.checked_add(now).ok_or_else(invalid)?;
    }
    let Some(meta) = ctx.txn.meta(db, &args[1])? else {
        return Ok(Reply::Integer(0));
    };
    let current = (meta.expire_at_ms != 0).then_some(meta.expire_at_ms as i64);
    let refused = (nx && current.is_some())
        || (xx && current.is_none())
        || (gt && current.is_none_or(|c| when <= c))
        || (lt && current.is_some_and(|c| when >= c));
    if refused {
        return Ok(Reply::Integer(0));
    }
    if when <= now {
        ctx.txn.delete_key(db, &args[1])?;
        ctx.replay_as(&[b"DEL", &args[1]]);
        ctx.notify(class::GENERIC, "del", &args[1]);
    } else {
        ctx.txn.set_expire_at(db, &args[1], when as u64)?;
        ctx.replay_as(&[b"PEXPIREAT", &args[1], when.to_string().as_bytes()]);
        ctx.notify(class::GENERIC, "expire", &args[1]);
    }
    ctx.dirty(1);
    Ok(Reply::Integer(1))
}

fn expire(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    expire_generic(ctx, args, 1000, true, "expire")
}

fn pexpire(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    expire_generic(ctx, args, 1, true, "pexpire")
}

fn expireat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    expire_generic(ctx, args, 1000, false, "expireat")
}

fn pexpireat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    expire_generic(ctx, args, 1, false, "pexpireat")
}

/// TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 missing, -1 no expiry.
fn ttl_generic(ctx: &mut Ctx<'_>, args: &[Bytes], in_ms: bool, absolute: bool) -> CmdResult {
    let db = ctx.db();
    let now = ctx.txn.now_ms() as i64;
    let Some(meta) = ctx.txn.meta(db, &args[1])? else {
        return Ok(Reply::Integer(-2));
    };
    if meta.expire_at_ms == 0 {
        return Ok(Reply::Integer(-1));
    }
    let at = meta.expire_at_ms as i64;
    let value = if absolute { at } else { (at - now).max(0) };
    // Rounded to seconds in 128 bits: an expiry near i64::MAX must not
    // overflow (redis-server answers the mathematically rounded value).
    Ok(Reply::Integer(if in_ms {
        value
    } else {
        ((i128::from(value) + 500) / 1000) as i64
    }))
}

fn ttl(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ttl_generic(ctx, args, false, false)
}

fn pttl(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ttl_generic(ctx, args, true, false)
}

fn expiretime(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ttl_generic(ctx, args, false, true)
}

fn pexpiretime(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ttl_generic(ctx, args, true, true)
}

fn persist(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    match ctx.txn.meta(db, &args[1])? {
        Some(meta) if meta.expire_at_ms != 0 => {
            ctx.txn.set_expire_at(db, &args[1], 0)?;
            ctx.notify(class::GENERIC, "persist", &args[1]);
            ctx.dirty(1);
            Ok(Reply::Integer(1))
        }
        _ => Ok(Reply::Integer(0)),
    }
}

fn rename_generic(ctx: &mut Ctx<'_>, args: &[Bytes], nx: bool) -> CmdResult {
    let db = ctx.db();
    let (src, dst) = (&args[1], &args[2]);
    if !ctx.txn.exists(db, src)? {
        return Err(CmdError::Static(NO_SUCH_KEY));
    }
    if src == dst {
        return Ok(if nx { Reply::Integer(0) } else { Reply::ok() });
    }
    if nx && ctx.txn.exists(db, dst)? {
        return Ok(Reply::Integer(0));
    }
    // Redis deletes the destination, then adds it (a `new` event).
    ctx.txn.delete_key(db, dst)?;
    copy_key(ctx, db, src, db, dst)?;
    ctx.txn.delete_key(db, src)?;
    ctx.notify(class::GENERIC, "rename_from", src);
    ctx.notify(class::GENERIC, "rename_to", dst);
    ctx.dirty(1);
    Ok(if nx { Reply::Integer(1) } else { Reply::ok() })
}

/// Copies a key of any type. Members are rewritten under the new name, so
/// a big collection is copied on the cold-read pool, not a network thread.
fn copy_key(ctx: &mut Ctx<'_>, src_db: u8, src: &[u8], dst_db: u8, dst: &[u8]) -> CmdResult<()> {
    if let Some(Body::Collection { size, .. }) = ctx.txn.meta(src_db, src)?.map(|m| m.body) {
        super::offload::off_thread_if(ctx, size)?;
    }
    ctx.txn.copy_key(src_db, src, dst_db, dst)?;
    Ok(())
}

fn rename(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    rename_generic(ctx, args, false)
}

fn renamenx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    rename_generic(ctx, args, true)
}

/// A DB-number argument as MOVE and COPY read it (getIntFromObjectOrReply,
/// then selectDb): not a number, outside an int, then outside the databases.
fn db_arg(ctx: &Ctx<'_>, arg: &[u8]) -> CmdResult<u8> {
    let n = parse_i64(arg).ok_or(CmdError::Static(NOT_INTEGER))?;
    if i32::try_from(n).is_err() {
        return Err(CmdError::Static(INT_RANGE));
    }
    if n < 0 || n as usize >= ctx.server.engine.databases() {
        return Err(CmdError::Static(DB_OUT_OF_RANGE));
    }
    u8::try_from(n).map_err(|_| CmdError::Static(DB_OUT_OF_RANGE))
}

/// The `DB n` option of COPY, if given and numeric.
fn copy_target_db(args: &[Bytes]) -> Option<u8> {
    let mut opts = ArgCursor::new(args, 3);
    let mut target = None;
    while let Some(opt) = opts.next_arg() {
        if is(opt, "db") {
            target = opts
                .next_arg()
                .and_then(|v| parse_i64(v))
                .and_then(|n| u8::try_from(n).ok());
        }
    }
    target
}

fn copy_keys(args: &[Bytes], db: u8) -> Vec<(u8, Bytes)> {
    let target = copy_target_db(args).unwrap_or(db);
    vec![(db, args[1].clone()), (target, args[2].clone())]
}

fn copy(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let (mut target, mut replace) = (db, false);
    let mut opts = ArgCursor::new(args, 3);
    while let Some(opt) = opts.next_arg() {
        if is(opt, "replace") {
            replace = true;
        } else if is(opt, "db") && opts.peek().is_some() {
            target = db_arg(ctx, opts.value()?)?;
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    let (src, dst) = (&args[1], &args[2]);
    if target == db && src == dst {
        return Err(CmdError::Static(SAME_OBJECT));
    }
    // The source is read as Redis's lookupKeyRead (a keymiss).
    ctx.txn.set_read_lookups(true);
    let found = ctx.txn.exists(db, src)?;
    ctx.txn.set_read_lookups(false);
    if !found {
        return Ok(Reply::Integer(0));
    }
    if ctx.txn.exists(target, dst)? {
        if !replace {
            return Ok(Reply::Integer(0));
        }
        ctx.txn.delete_key(target, dst)?;
    }
    copy_key(ctx, db, src, target, dst)?;
    ctx.notify_in(target, class::GENERIC, "copy_to", dst);
    ctx.dirty(1);
    Ok(Reply::Integer(1))
}

fn move_keys(args: &[Bytes], db: u8) -> Vec<(u8, Bytes)> {
    let target = parse_i64(&args[2])
        .and_then(|n| u8::try_from(n).ok())
        .unwrap_or(db);
    vec![(db, args[1].clone()), (target, args[1].clone())]
}

fn move_key(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let target = db_arg(ctx, &args[2])?;
    if target == db {
        return Err(CmdError::Static(SAME_OBJECT));
    }
    let key = &args[1];
    if !ctx.txn.exists(db, key)? || ctx.txn.exists(target, key)? {
        return Ok(Reply::Integer(0));
    }
    copy_key(ctx, db, key, target, key)?;
    ctx.txn.delete_key(db, key)?;
    ctx.notify(class::GENERIC, "move_from", key);
    ctx.notify_in(target, class::GENERIC, "move_to", key);
    ctx.dirty(1);
    Ok(Reply::Integer(1))
}

fn object_encoding(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    // OBJECT looks up without a keymiss (LOOKUP_NONOTIFY).
    ctx.txn.set_read_lookups(false);
    Ok(match ctx.txn.meta(db, &args[2])? {
        None => Reply::Null,
        Some(meta) => {
            let name = match meta.value_type {
                ValueType::String => string_encoding(&meta),
                _ => super::collection::object_encoding(&meta),
            };
            Reply::Bulk(Bytes::from_static(name.as_bytes()))
        }
    })
}

/// MEMORY USAGE key [SAMPLES count]: an estimate of the bytes the key
/// and its value would take in memory (Firn keeps them on disk and caches
/// what is read): the key, a fixed per-key overhead, and for a collection
/// its size times the average of its first `count` members (5 by default,
/// 0 = all), as Redis samples. The arguments are checked as Redis does.
fn memory_usage(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut samples: u64 = 5;
    let mut opts = ArgCursor::new(args, 3);
    while let Some(opt) = opts.next_arg() {
        if is(opt, "samples") && opts.peek().is_some() {
            let n = opts.int_value()?;
            if n < 0 {
                return Err(CmdError::Static(SYNTAX));
            }
            samples = if n == 0 { u64::MAX } else { n as u64 };
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    let db = ctx.db();
    let key = &args[2];
    ctx.txn.set_read_lookups(false);
    let Some(meta) = ctx.txn.meta(db, key)? else {
        return Ok(Reply::Null);
    };
    // Redis's dictEntry, object header and key header, roughly.
    const KEY_OVERHEAD: u64 = 56;
    // Per member: its headers in a hash table or skiplist node.
    const MEMBER_OVERHEAD: u64 = 16;
    let base = KEY_OVERHEAD + key.len() as u64;
    let bytes = match Collection::of_meta(&meta) {
        None => base + Txn::string_len_of(&meta),
        Some(coll) => {
            super::offload::off_thread_if(ctx, samples.min(coll.size))?;
            let (mut seen, mut member_bytes) = (0u64, 0u64);
            ctx.txn.scan_members(
                firn_storage::Cf::Data,
                db,
                key,
                &coll,
                std::ops::Bound::Unbounded,
                std::ops::Bound::Unbounded,
                false,
                |member, value| {
                    seen += 1;
                    member_bytes += (member.len() + value.len()) as u64 + MEMBER_OVERHEAD;
                    seen < samples
                },
            )?;
            let average = member_bytes.checked_div(seen).unwrap_or(0);
            base + average.saturating_mul(coll.size)
        }
    };
    Ok(Reply::Integer(bytes.min(i64::MAX as u64) as i64))
}

const NO_LFU_POLICY: &str = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";
const LFU_POLICY: &str = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";

/// The key's LFU counter, decayed to now (see `server::AccessTimes` and
/// lfu.rs); only under an LFU `maxmemory-policy`.
/// MEMORY TIERS key (Firn's own): where the key's bytes are. `ram-bytes`
/// is its hot-tier record, its decoded members in the collection cache and
/// its records in the memtables; `disk-bytes` RocksDB's approximate size of
/// its records in SST files; `hot` whether its record is in the hot tier.
/// Runs on a blocking thread: SST sizes may read index blocks from disk.
fn memory_tiers(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = args[2].clone();
    super::offload::run_off_network_thread(ctx, vec![key.clone()], move |txn, db| {
        txn.set_read_lookups(false);
        let Some(tiers) = txn.key_tiers(db, &key)? else {
            return Ok(Reply::Null);
        };
        let field = |name: &'static str, n: u64| {
            (
                Reply::Bulk(Bytes::from_static(name.as_bytes())),
                Reply::Integer(n.min(i64::MAX as u64) as i64),
            )
        };
        Ok(Reply::Map(vec![
            field("ram-bytes", tiers.ram_bytes()),
            field("disk-bytes", tiers.disk_bytes),
            field("hot", (tiers.hot_bytes > 0) as u64),
            field("hot-bytes", tiers.hot_bytes),
            field("cache-bytes", tiers.cache_bytes),
            field("memtable-bytes", tiers.memtable_bytes),
        ]))
    })
}

fn object_freq(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    // OBJECT looks up without a keymiss (LOOKUP_NONOTIFY).
    ctx.txn.set_read_lookups(false);
    if ctx.txn.meta(db, &args[2])?.is_none() {
        return Ok(Reply::Null);
    }
    let now_secs = firn_storage::now_ms() / 1000;
    match ctx.server.access_times.frequency(db, &args[2], now_secs) {
        Some(counter) => Ok(Reply::Integer(counter as i64)),
        None => Err(CmdError::Static(NO_LFU_POLICY)),
    }
}

/// Seconds since the key was last accessed (see `server::AccessTimes`); a
/// key not accessed since the server started is idle since the start.
fn object_idletime(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    // OBJECT looks up without a keymiss (LOOKUP_NONOTIFY).
    ctx.txn.set_read_lookups(false);
    Ok(match ctx.txn.meta(db, &args[2])? {
        None => Reply::Null,
        Some(_) if ctx.server.access_times.lfu().is_some() => {
            return Err(CmdError::Static(LFU_POLICY))
        }
        Some(_) => {
            let now_secs = firn_storage::now_ms() / 1000;
            let idle_secs = match ctx.server.access_times.last_access(db, &args[2], now_secs) {
                Some(at_secs) => now_secs.saturating_sub(at_secs),
                None => ctx.server.uptime_secs(),
            };
            Reply::Integer(idle_secs as i64)
        }
    })
}

/// Redis shares the integer objects 0..9999 (refcount INT_MAX).
fn object_refcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    // OBJECT looks up without a keymiss (LOOKUP_NONOTIFY).
    ctx.txn.set_read_lookups(false);
    Ok(match ctx.txn.meta(db, &args[2])? {
        None => Reply::Null,
        Some(meta) => match &meta.body {
            Body::Inline(v)
                if string_encoding(&meta) == "int"
                    && parse_i64(v).is_some_and(|n| (0..10_000).contains(&n)) =>
            {
                Reply::Integer(i32::MAX as i64)
            }
            _ => Reply::Integer(1),
        },
    })
}

const OBJECT_HELP: &[&str] = &[
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Prints this help.",
];

fn object_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(help_reply(OBJECT_HELP))
}

fn dump(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let Some(meta) = ctx.txn.meta(db, &args[1])? else {
        return Ok(Reply::Null);
    };
    Ok(Reply::Bulk(Bytes::from(dump_payload(
        ctx, &args[1], &meta,
    )?)))
}

/// The value of `key` (of the session's database), whose metadata is
/// `meta`, as RDB reads it.
pub(crate) fn value_of(ctx: &mut Ctx<'_>, key: &[u8], meta: &Meta) -> CmdResult<RdbValue> {
    match meta.value_type {
        ValueType::String => {
            let len = Txn::string_len_of(meta);
            let value = ctx.txn.read_string_range(ctx.db(), key, meta, 0, len)?;
            Ok(RdbValue::String(value.to_vec()))
        }
        _ => dump_collection(ctx, key, meta),
    }
}

/// DUMP's payload for `key`, whose metadata is `meta`.
pub(crate) fn dump_payload(ctx: &mut Ctx<'_>, key: &[u8], meta: &Meta) -> CmdResult<Vec<u8>> {
    let value = value_of(ctx, key, meta)?;
    match &value {
        RdbValue::String(_) => return Ok(crate::rdb::dump(&value)),
        // Nodes cut as this server's stream-node-max-* cut them.
        RdbValue::Stream(stream) => {
            let limits = ctx.txn.encoding_limits();
            return Ok(crate::rdb::dump_stream_with(
                stream,
                limits.stream_node_max_entries,
                limits.stream_node_max_bytes,
            ));
        }
        _ => {}
    }
    // Hashes, sets and sorted sets in the encoding the configured
    // thresholds gave them (OBJECT ENCODING), as Redis dumps them.
    let compact = match meta.value_type {
        ValueType::Hash | ValueType::Set | ValueType::ZSet => {
            Collection::of_meta(meta).map(|c| !c.big)
        }
        _ => None,
    };
    Ok(crate::rdb::dump_as(&value, compact))
}

fn restore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let now = ctx.txn.now_ms() as i64;
    let (key, payload) = (&args[1], &args[3]);
    let (mut replace, mut absttl, mut idletime, mut freq) = (false, false, false, false);
    let mut opts = ArgCursor::new(args, 4);
    while let Some(opt) = opts.next_arg() {
        if is(opt, "replace") {
            replace = true;
        } else if is(opt, "absttl") {
            absttl = true;
        } else if is(opt, "idletime") && opts.peek().is_some() && !freq {
            if opts.int_value()? < 0 {
                return Err(CmdError::Static("ERR Invalid IDLETIME value, must be >= 0"));
            }
            idletime = true;
        } else if is(opt, "freq") && opts.peek().is_some() && !idletime {
            if !(0..=255).contains(&opts.int_value()?) {
                return Err(CmdError::Static(
                    "ERR Invalid FREQ value, must be >= 0 and <= 255",
                ));
            }
            freq = true;
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    if !replace && ctx.txn.exists(db, key)? {
        return Err(CmdError::Static("BUSYKEY Target key name already exists."));
    }
    let ttl = int_arg(&args[2])?;
    if ttl < 0 {
        return Err(CmdError::Static("ERR Invalid TTL value, must be >= 0"));
    }
    let value = crate::rdb::restore(payload).map_err(|e| CmdError::Owned(e.reply_text()))?;
    // Redis adds the clock to a relative TTL in C arithmetic: a TTL so
    // large that the sum overflows lands in the past, so nothing is stored.
    let expire_at = match (ttl, absttl) {
        (0, _) => 0,
        (t, true) => t,
        (t, false) => t.wrapping_add(now),
    };
    if ttl != 0 && expire_at <= now {
        // Already expired: Redis replies OK and stores nothing.
        if replace && ctx.txn.delete_key(db, key)? {
            ctx.notify(class::GENERIC, "del", key);
            ctx.dirty(1);
        }
        return Ok(Reply::ok());
    }
    // The old value goes first, so the key is created anew (`new`).
    ctx.txn.delete_key(db, key)?;
    let crate::rdb::RdbValue::String(bytes) = value else {
        restore_collection(ctx, key, value, expire_at as u64)?;
        ctx.notify(class::GENERIC, "restore", key);
        ctx.dirty(1);
        return Ok(Reply::ok());
    };
    let action = if expire_at == 0 {
        firn_storage::ExpireAction::Clear
    } else {
        firn_storage::ExpireAction::At(expire_at as u64)
    };
    ctx.txn.set_string(db, key, Bytes::from(bytes), action)?;
    ctx.notify(class::GENERIC, "restore", key);
    ctx.dirty(1);
    Ok(Reply::ok())
}

/// The whole value of a collection, for DUMP.
fn dump_collection(ctx: &mut Ctx<'_>, key: &[u8], meta: &Meta) -> CmdResult<RdbValue> {
    let coll = Collection::of_meta(meta).ok_or(CmdError::Storage(
        firn_storage::StorageError::Corrupt("collection meta"),
    ))?;
    super::offload::off_thread_if(ctx, coll.size)?;
    match meta.value_type {
        ValueType::Hash => super::hashes::dump_value(ctx, key, &coll),
        ValueType::List => super::lists::dump_value(ctx, key, &coll),
        ValueType::Set => super::sets::dump_value(ctx, key, &coll),
        ValueType::ZSet => super::zsets::dump_value(ctx, key, &coll),
        ValueType::Stream => {
            let stream = firn_storage::StreamMeta::from_collection(coll)?;
            super::streams::dump_value(ctx, key, &stream)
        }
        ValueType::String => Err(CmdError::Storage(firn_storage::StorageError::Corrupt(
            "collection meta",
        ))),
    }
}

/// Stores a restored collection at `key` (which RESTORE has already
/// cleared), with its expiry.
fn restore_collection(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    value: RdbValue,
    expire_at_ms: u64,
) -> CmdResult<()> {
    match value {
        RdbValue::Hash(pairs) => super::hashes::restore_value(ctx, key, pairs, expire_at_ms),
        RdbValue::List(items) => super::lists::restore_value(ctx, key, items, expire_at_ms),
        RdbValue::Set(members) => super::sets::restore_value(ctx, key, members, expire_at_ms),
        RdbValue::SortedSet(members) => {
            super::zsets::restore_value(ctx, key, members, expire_at_ms)
        }
        RdbValue::Stream(stream) => super::streams::restore_value(ctx, key, stream, expire_at_ms),
        RdbValue::String(_) => Err(CmdError::Static("ERR Bad data format")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_and_move_lock_both_databases() {
        let args = |parts: &[&str]| -> Vec<Bytes> {
            parts
                .iter()
                .map(|p| Bytes::copy_from_slice(p.as_bytes()))
                .collect()
        };
        let k = |s: &str| Bytes::copy_from_slice(s.as_bytes());
        assert_eq!(
            copy_keys(&args(&["COPY", "a", "b", "DB", "3", "REPLACE"]), 1),
            vec![(1, k("a")), (3, k("b"))]
        );
        assert_eq!(
            copy_keys(&args(&["COPY", "a", "b"]), 2),
            vec![(2, k("a")), (2, k("b"))]
        );
        // An invalid DB fails in the handler; locking stays in the session's db.
        assert_eq!(
            copy_keys(&args(&["COPY", "a", "b", "DB", "x"]), 2),
            vec![(2, k("a")), (2, k("b"))]
        );
        assert_eq!(
            move_keys(&args(&["MOVE", "a", "5"]), 0),
            vec![(0, k("a")), (5, k("a"))]
        );
        assert_eq!(
            move_keys(&args(&["MOVE", "a", "-1"]), 4),
            vec![(4, k("a")), (4, k("a"))]
        );
    }
}
