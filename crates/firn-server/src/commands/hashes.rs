//! Hashes: HSET and friends, counters, HRANDFIELD, HSCAN, and the hash
//! side of DUMP/RESTORE.
//!
//! Encoding (firn-storage `hash.rs`): one `data` entry per field under the
//! key's version, so a field read or write costs one point read, HLEN is
//! the meta record's count, and whole-hash replies walk the fields in byte
//! order (Redis answers a small hash in insertion order; clients must not
//! rely on either). Replies that visit more than a thousand fields run on
//! the cold-read pool (`off_thread_if`).

use bytes::Bytes;
use firn_resp::{Protocol, Reply};
use firn_storage::{notify_class as class, Cf, Collection, ValueType};
use rand::Rng;

use super::collection::{member_scan, stream_members, streamed, Shape, StreamMember};
use super::long_double::{long_double_sum, LongDoubleError};
use super::offload::off_thread_if;
use super::{def, Ctx, Def};
use crate::args::{int_arg, is, parse_i64};
use crate::errors::{wrong_arity, CmdError, CmdResult, NOT_FINITE, NOT_FLOAT, OVERFLOW, SYNTAX};
use crate::rdb::RdbValue;
use crate::stream_reply::Sink;

pub const COMMANDS: &[Def] = &[
    def("hset", hset),
    def("hmset", hmset),
    def("hsetnx", hsetnx),
    def("hget", hget),
    def("hmget", hmget),
    def("hgetall", hgetall),
    def("hkeys", hkeys),
    def("hvals", hvals),
    def("hlen", hlen),
    def("hstrlen", hstrlen),
    def("hexists", hexists),
    def("hdel", hdel),
    def("hincrby", hincrby),
    def("hincrbyfloat", hincrbyfloat),
    def("hrandfield", hrandfield),
    def("hscan", hscan),
];

/// HRANDFIELD with a negative count returns this many fields at most
/// (Redis has no limit and would build the reply until memory runs out).
const MAX_REPEATED_FIELDS: u64 = 10_000_000;

/// HRANDFIELD's count range: -LONG_MAX..=LONG_MAX, and half of it with
/// WITHVALUES (whose reply has twice as many elements).
const COUNT_RANGE: &str =
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
const OUT_OF_RANGE: &str = "ERR value is out of range";

/// HSET/HMSET: the number of fields that were new. Redis checks the
/// argument count itself (HSET's table arity only says "at least 4").
fn set_pairs(ctx: &mut Ctx<'_>, args: &[Bytes], name: &str) -> CmdResult<i64> {
    if !args.len().is_multiple_of(2) {
        return Err(wrong_arity(name));
    }
    let db = ctx.db();
    let key = &args[1];
    let mut hash = ctx.txn.hash_or_new(db, key)?;
    let mut added = 0;
    for pair in args[2..].chunks_exact(2) {
        added += ctx
            .txn
            .hash_set(db, key, &mut hash, &pair[0], pair[1].clone())? as i64;
    }
    ctx.txn.save_collection(db, key, &hash)?;
    ctx.notify(class::HASH, "hset", key);
    // Redis counts every field set, new or not.
    ctx.dirty(args.len() as u64 / 2 - 1);
    Ok(added)
}

fn hset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    set_pairs(ctx, args, "hset").map(Reply::Integer)
}

fn hmset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    set_pairs(ctx, args, "hmset").map(|_| Reply::ok())
}

fn hsetnx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let (key, field) = (&args[1], &args[2]);
    let mut hash = ctx.txn.hash_or_new(db, key)?;
    // Redis converts for a long value only when it does set the field.
    if ctx.txn.hash_get(db, key, &hash, field)?.is_some() {
        return Ok(Reply::Integer(0));
    }
    ctx.txn
        .hash_set(db, key, &mut hash, field, args[3].clone())?;
    ctx.txn.save_collection(db, key, &hash)?;
    ctx.notify(class::HASH, "hset", key);
    ctx.dirty(1);
    Ok(Reply::Integer(1))
}

fn hget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let Some(hash) = ctx.txn.hash(db, &args[1])? else {
        return Ok(Reply::Null);
    };
    let value = ctx.txn.hash_get(db, &args[1], &hash, &args[2])?;
    Ok(value.map_or(Reply::Null, Reply::Bulk))
}

fn hmget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let hash = ctx.txn.hash(db, key)?;
    let mut values = Vec::with_capacity(args.len() - 2);
    for field in &args[2..] {
        let value = match &hash {
            Some(hash) => ctx.txn.hash_get(db, key, hash, field)?,
            None => None,
        };
        values.push(value.map_or(Reply::Null, Reply::Bulk));
    }
    Ok(Reply::Array(values))
}

/// Visits every field and value of the hash at `key` in byte order
/// (nothing if it is missing), on the pool when there are many. A hash of
/// more than [`STREAM_MEMBERS`] fields is not visited: its reply is
/// streamed in `shape` by `emit`, and the handler's reply is ignored.
fn visit_all(
    ctx: &mut Ctx<'_>,
    key: &Bytes,
    stream: (Shape, StreamMember),
    mut visit: impl FnMut(&[u8], &Bytes),
) -> CmdResult<()> {
    let db = ctx.db();
    let Some(hash) = ctx.txn.hash(db, key)? else {
        return Ok(());
    };
    if streamed(ctx, hash.size) {
        stream_members(ctx, key, ValueType::Hash, Cf::Data, stream.0, stream.1);
        return Ok(());
    }
    off_thread_if(ctx, hash.size)?;
    ctx.txn.hash_fields(db, key, &hash, None, |field, value| {
        visit(field, value);
        true
    })?;
    Ok(())
}

fn read_pairs(ctx: &mut Ctx<'_>, key: &[u8], hash: &Collection) -> CmdResult<Vec<(Bytes, Bytes)>> {
    let db = ctx.db();
    let mut pairs = Vec::with_capacity(usize::try_from(hash.size).unwrap_or(0).min(1 << 20));
    ctx.txn.hash_fields(db, key, hash, None, |field, value| {
        pairs.push((Bytes::copy_from_slice(field), value.clone()));
        true
    })?;
    Ok(pairs)
}

fn stream_pair(sink: &mut Sink, field: &[u8], value: &[u8]) -> bool {
    sink.item(Reply::Bulk(Bytes::copy_from_slice(field)))
        && sink.item(Reply::Bulk(Bytes::copy_from_slice(value)))
}

fn stream_field(sink: &mut Sink, field: &[u8], _: &[u8]) -> bool {
    sink.item(Reply::Bulk(Bytes::copy_from_slice(field)))
}

fn stream_value(sink: &mut Sink, _: &[u8], value: &[u8]) -> bool {
    sink.item(Reply::Bulk(Bytes::copy_from_slice(value)))
}

fn hgetall(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut pairs = Vec::new();
    visit_all(ctx, &args[1], (Shape::Map, stream_pair), |field, value| {
        pairs.push((
            Reply::Bulk(Bytes::copy_from_slice(field)),
            Reply::Bulk(value.clone()),
        ));
    })?;
    Ok(Reply::Map(pairs))
}

fn hkeys(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut fields = Vec::new();
    let shape = Shape::Array { per_member: 1 };
    visit_all(ctx, &args[1], (shape, stream_field), |field, _| {
        fields.push(Reply::Bulk(Bytes::copy_from_slice(field)));
    })?;
    Ok(Reply::Array(fields))
}

fn hvals(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut values = Vec::new();
    let shape = Shape::Array { per_member: 1 };
    visit_all(ctx, &args[1], (shape, stream_value), |_, value| {
        values.push(Reply::Bulk(value.clone()))
    })?;
    Ok(Reply::Array(values))
}

fn hlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let size = ctx.txn.hash(db, &args[1])?.map_or(0, |h| h.size);
    Ok(Reply::Integer(i64::try_from(size).unwrap_or(i64::MAX)))
}

/// The value of `field`, if the hash and the field exist.
fn field_value(ctx: &mut Ctx<'_>, key: &[u8], field: &[u8]) -> CmdResult<Option<Bytes>> {
    let db = ctx.db();
    match ctx.txn.hash(db, key)? {
        Some(hash) => Ok(ctx.txn.hash_get(db, key, &hash, field)?),
        None => Ok(None),
    }
}

fn hstrlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let len = field_value(ctx, &args[1], &args[2])?.map_or(0, |v| v.len());
    Ok(Reply::Integer(len as i64))
}

fn hexists(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let found = field_value(ctx, &args[1], &args[2])?.is_some();
    Ok(Reply::Integer(found as i64))
}

fn hdel(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let Some(mut hash) = ctx.txn.hash(db, key)? else {
        return Ok(Reply::Integer(0));
    };
    let mut deleted = 0;
    for field in &args[2..] {
        deleted += ctx.txn.hash_delete(db, key, &mut hash, field)? as i64;
    }
    if deleted > 0 {
        ctx.txn.save_collection(db, key, &hash)?;
        ctx.notify(class::HASH, "hdel", key);
        super::collection::notify_if_emptied(ctx, key, &hash);
        ctx.dirty(deleted as u64);
    }
    Ok(Reply::Integer(deleted))
}

fn hincrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let (key, field) = (&args[1], &args[2]);
    let incr = int_arg(&args[3])?;
    let mut hash = ctx.txn.hash_or_new(db, key)?;
    let current = match ctx.txn.hash_get(db, key, &hash, field)? {
        Some(value) => {
            parse_i64(&value).ok_or(CmdError::Static("ERR hash value is not an integer"))?
        }
        None => 0,
    };
    let next = current
        .checked_add(incr)
        .ok_or(CmdError::Static(OVERFLOW))?;
    ctx.txn
        .hash_set(db, key, &mut hash, field, Bytes::from(next.to_string()))?;
    ctx.txn.save_collection(db, key, &hash)?;
    ctx.notify(class::HASH, "hincrby", key);
    ctx.dirty(1);
    Ok(Reply::Integer(next))
}

fn hincrbyfloat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let (key, field, incr) = (&args[1], &args[2], &args[3]);
    // The increment is checked before the key is looked up, as in Redis.
    match long_double_sum(b"0", incr) {
        Err(LongDoubleError::NotFloat) => return Err(CmdError::Static(NOT_FLOAT)),
        Err(LongDoubleError::NotFinite) => {
            return Err(CmdError::Static("ERR value is NaN or Infinity"))
        }
        Ok(_) => {}
    }
    let mut hash = ctx.txn.hash_or_new(db, key)?;
    let current = ctx
        .txn
        .hash_get(db, key, &hash, field)?
        .unwrap_or_else(|| Bytes::from_static(b"0"));
    let next = long_double_sum(&current, incr).map_err(|e| match e {
        LongDoubleError::NotFloat => CmdError::Static("ERR hash value is not a float"),
        LongDoubleError::NotFinite => CmdError::Static(NOT_FINITE),
    })?;
    ctx.txn.hash_set(db, key, &mut hash, field, next.clone())?;
    ctx.txn.save_collection(db, key, &hash)?;
    // Replicas must not redo the float arithmetic (Redis propagates HSET).
    ctx.replay_as(&[b"HSET", key, field, &next]);
    ctx.notify(class::HASH, "hincrbyfloat", key);
    ctx.dirty(1);
    Ok(Reply::Bulk(next))
}

/// HRANDFIELD key [count [WITHVALUES]], as Redis 7.0's hrandfieldCommand:
/// the count and option are checked before the key is looked up.
fn hrandfield(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    if args.len() == 2 {
        let Some(hash) = ctx.txn.hash(db, key)? else {
            return Ok(Reply::Null);
        };
        let picked = ctx
            .txn
            .random_members(Cf::Data, db, key, &hash, 1, rand::random())?;
        return Ok(picked
            .into_iter()
            .next()
            .map_or(Reply::Null, |(field, _)| Reply::Bulk(field)));
    }
    let count = int_arg(&args[2])?;
    if count == i64::MIN {
        return Err(CmdError::Static(COUNT_RANGE));
    }
    let with_values = match args.get(3) {
        None => false,
        Some(opt) if args.len() == 4 && is(opt, "withvalues") => true,
        Some(_) => return Err(CmdError::Static(SYNTAX)),
    };
    if with_values && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&count) {
        return Err(CmdError::Static(OUT_OF_RANGE));
    }
    let Some(hash) = ctx.txn.hash(db, key)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    let shape = PickShape {
        with_values,
        resp3: ctx.session.protocol == Protocol::Resp3,
    };
    let mut items = Vec::new();
    match count {
        0 => {}
        1.. => {
            for (field, value) in distinct_fields(ctx, key, &hash, count.unsigned_abs())? {
                shape.push(&mut items, &field, &value);
            }
        }
        _ => repeated_fields(ctx, key, &hash, count.unsigned_abs(), |field, value| {
            shape.push(&mut items, field, value)
        })?,
    }
    Ok(Reply::Array(items))
}

/// How HRANDFIELD replies: fields, or fields and values (flat in RESP2,
/// as pairs in RESP3).
struct PickShape {
    with_values: bool,
    resp3: bool,
}

impl PickShape {
    fn push(&self, items: &mut Vec<Reply>, field: &Bytes, value: &Bytes) {
        let (field, value) = (Reply::Bulk(field.clone()), Reply::Bulk(value.clone()));
        match (self.with_values, self.resp3) {
            (false, _) => items.push(field),
            (true, false) => items.extend([field, value]),
            (true, true) => items.push(Reply::Array(vec![field, value])),
        }
    }
}

/// Up to `count` distinct fields at random (the whole hash if it has no
/// more).
fn distinct_fields(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    hash: &Collection,
    count: u64,
) -> CmdResult<Vec<(Bytes, Bytes)>> {
    let db = ctx.db();
    let count = count.min(hash.size);
    // A small hash, or a sample of all of it, is read whole.
    let visits = if hash.size <= 1024 { hash.size } else { count };
    off_thread_if(ctx, visits)?;
    let want = usize::try_from(count).unwrap_or(usize::MAX);
    Ok(ctx
        .txn
        .random_members(Cf::Data, db, key, hash, want, rand::random())?)
}

/// `count` fields drawn independently (repetitions allowed), in random
/// order, given to `emit`. A big hash asked for fewer fields than it holds
/// answers distinct ones (one possible outcome of independent draws) so
/// that only about `count` fields are read.
fn repeated_fields(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    hash: &Collection,
    count: u64,
    mut emit: impl FnMut(&Bytes, &Bytes),
) -> CmdResult<()> {
    if count > MAX_REPEATED_FIELDS {
        return Err(CmdError::Static(OUT_OF_RANGE));
    }
    if hash.size > 1024 && count < hash.size {
        for (field, value) in distinct_fields(ctx, key, hash, count)? {
            emit(&field, &value);
        }
        return Ok(());
    }
    off_thread_if(ctx, count.max(hash.size))?;
    let all = read_pairs(ctx, key, hash)?;
    if all.is_empty() {
        return Ok(());
    }
    let mut rng = rand::rng();
    for _ in 0..count {
        let (field, value) = &all[rng.random_range(0..all.len())];
        emit(field, value);
    }
    Ok(())
}

fn hscan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    member_scan(
        ctx,
        args,
        ValueType::Hash,
        Cf::Data,
        |items, field, value| {
            items.push(Reply::Bulk(Bytes::copy_from_slice(field)));
            items.push(Reply::Bulk(value.clone()));
        },
    )
}

/// The hash's fields and values in byte order, for DUMP.
pub fn dump_value(ctx: &mut Ctx<'_>, key: &[u8], coll: &Collection) -> CmdResult<RdbValue> {
    let pairs = read_pairs(ctx, key, coll)?;
    Ok(RdbValue::Hash(
        pairs
            .into_iter()
            .map(|(f, v)| (f.to_vec(), v.to_vec()))
            .collect(),
    ))
}

/// Stores a restored hash (its fields are distinct: the RDB decoder
/// refuses duplicates). Like Redis loading a payload, the hash is big
/// exactly when its contents exceed the listpack limits, whatever
/// encoding the payload used.
pub fn restore_value(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    pairs: Vec<(Vec<u8>, Vec<u8>)>,
    expire_at_ms: u64,
) -> CmdResult<()> {
    let db = ctx.db();
    let mut hash = ctx.txn.new_collection(ValueType::Hash, Bytes::new());
    hash.expire_at_ms = expire_at_ms;
    for (field, value) in pairs {
        ctx.txn
            .hash_insert_new(db, key, &mut hash, &field, Bytes::from(value));
    }
    ctx.txn.save_collection(db, key, &hash)?;
    Ok(())
}
