//! HyperLogLog: PFADD, PFCOUNT, PFMERGE, and the debugging commands
//! PFDEBUG and PFSELFTEST.
//!
//! An HLL is a plain string in Redis's own format (see `firn_prims::hll`), read
//! and written whole with the string storage, so GET, SET, DUMP/RESTORE,
//! APPEND and SETRANGE see and change exactly what Redis's would. Every
//! PF* write leaves the value "raw" (modified in place, as Redis's
//! `dbUnshareStringValue` makes it) and keeps the key's expiry.
//!
//! PFCOUNT of one key stores the cardinality it computed in the value's
//! header, as Redis does; it is then replicated as itself, like Redis
//! propagates it (PFDEBUG GETREG/TODENSE likewise when they convert).

use bytes::Bytes;
use firn_prims::hll::{registers_cardinality, self_test, Hll, HllError, Registers, REGISTERS};
use firn_resp::Reply;
use firn_storage::{notify_class as class, EncodingHint, ExpireAction, Meta, Txn, CHUNK_SIZE};

use super::collection::string_encoding;
use super::offload::off_thread_if;
use super::{def, Ctx, Def, Deferred, Traits};
use crate::args::is;
use crate::errors::{truncate_for_error, CmdError, CmdResult};

pub const COMMANDS: &[Def] = &[
    def("pfadd", pfadd),
    def("pfcount", pfcount),
    def("pfmerge", pfmerge),
    def("pfdebug", pfdebug).with(Traits::QUIET),
    def("pfselftest", pfselftest),
];

/// A string that is not an HLL.
const NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
/// A sparse HLL whose opcodes do not add up.
const CORRUPT_HLL: &str = "INVALIDOBJ Corrupted HLL object detected";

/// Bytes of HLL values one command may read on a network thread: a value
/// longer than a chunk (only a hand-made "sparse" string can be) or many
/// keys send the command to the cold-read pool.
const INLINE_HLL_BYTES: u64 = 1 << 20;

/// Bytes of sparse value walked that count as one member visited, for
/// `off_thread_if` (1,000 members = 16 MB walked).
const SPARSE_BYTES_PER_MEMBER: u64 = 16 << 10;

fn hll_error(e: HllError) -> CmdError {
    match e {
        HllError::NotHll => CmdError::Static(NOT_HLL),
        HllError::Corrupt => CmdError::Static(CORRUPT_HLL),
    }
}

/// An HLL key as read: its value and whether it is reported "embstr".
struct Loaded {
    hll: Hll,
    embstr: bool,
}

/// The meta of a string key, checking the type (plain WRONGTYPE for another
/// type) before anything is read.
fn hll_meta(txn: &mut Txn<'_>, db: u8, key: &[u8]) -> CmdResult<Option<Meta>> {
    Ok(txn.string_meta(db, key)?)
}

/// Reads and checks an HLL value described by `meta`.
fn load(txn: &mut Txn<'_>, db: u8, key: &[u8], meta: &Meta) -> CmdResult<Loaded> {
    let len = Txn::string_len_of(meta);
    let value = txn.read_string_range(db, key, meta, 0, len)?;
    let hll = Hll::from_value(&value).map_err(hll_error)?;
    Ok(Loaded {
        hll,
        embstr: string_encoding(meta) == "embstr",
    })
}

/// Sends the command to the cold-read pool when the values it reads add up
/// to more than [`INLINE_HLL_BYTES`], or one is stored in chunks.
fn off_thread_for(ctx: &Ctx<'_>, metas: &[Option<Meta>]) -> CmdResult<()> {
    let lens = metas.iter().flatten().map(Txn::string_len_of);
    let total: u64 = lens.clone().sum();
    if total > INLINE_HLL_BYTES || lens.into_iter().any(|l| l > CHUNK_SIZE) {
        off_thread_if(ctx, u64::MAX)?;
    }
    Ok(())
}

/// Writes `hll` back under `key`, keeping `expire_at_ms` (0 = none): the
/// caller read the key's meta already, and a second lookup would count
/// twice in INFO's keyspace_hits.
fn store(ctx: &mut Ctx<'_>, key: &[u8], hll: &Hll, expire_at_ms: u64) -> CmdResult<()> {
    let db = ctx.db();
    let expire = match expire_at_ms {
        0 => ExpireAction::Clear,
        at => ExpireAction::At(at),
    };
    ctx.txn.set_string_as(
        db,
        key,
        Bytes::copy_from_slice(hll.as_bytes()),
        expire,
        EncodingHint::Raw,
    )?;
    Ok(())
}

/// The most bytes one sparse update of `hll` walks: its length, or the
/// length it may grow to (a sparse form of 16384 registers stays far below
/// a chunk, whatever `hll-sparse-max-bytes` says).
fn sparse_walk_bytes(hll: &Hll, max_bytes: u64) -> u64 {
    (hll.len() as u64).max(max_bytes.min(CHUNK_SIZE))
}

fn sparse_max_bytes(ctx: &Ctx<'_>) -> u64 {
    ctx.server.config().hll_sparse_max_bytes
}

/// PFADD key [element ...]: 1 if a register changed or the key was created.
fn pfadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let elements = &args[2..];
    let meta = hll_meta(&mut ctx.txn, db, key)?;
    off_thread_for(ctx, std::slice::from_ref(&meta))?;
    let expire_at_ms = meta.as_ref().map_or(0, |m| m.expire_at_ms);
    // Redis counts the key's creation and each element that changed a
    // register.
    let mut changes = u64::from(meta.is_none());
    let (mut hll, mut updated, embstr) = match &meta {
        None => (Hll::new(), true, false),
        Some(meta) => {
            let loaded = load(&mut ctx.txn, db, key, meta)?;
            (loaded.hll, false, loaded.embstr)
        }
    };
    let max_bytes = sparse_max_bytes(ctx);
    if !hll.is_dense() {
        // Each sparse update walks the value: bound the work done inline.
        let sparse_work = elements.len() as u64 * sparse_walk_bytes(&hll, max_bytes);
        off_thread_if(ctx, sparse_work / SPARSE_BYTES_PER_MEMBER)?;
    }
    for element in elements {
        match hll.add(element, max_bytes) {
            Ok(changed) => {
                updated |= changed;
                changes += u64::from(changed);
            }
            // Redis keeps what the earlier elements changed and replies
            // with the error: commit the value, then reply.
            Err(e) => {
                if updated {
                    store(ctx, key, &hll, expire_at_ms)?;
                    return Ok(hll_error(e).into_reply());
                }
                return Err(hll_error(e));
            }
        }
    }
    if updated {
        hll.invalidate_cache();
    }
    if updated || embstr {
        store(ctx, key, &hll, expire_at_ms)?;
    }
    if updated {
        ctx.notify(class::STRING, "pfadd", key);
        ctx.dirty(changes);
    }
    Ok(Reply::Integer(i64::from(updated)))
}

/// PFCOUNT key [key ...]: the estimated cardinality of the union.
fn pfcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let keys = &args[1..];
    if keys.len() > 1 {
        return Ok(Reply::Integer(
            registers_cardinality(&union(ctx, keys)?.registers) as i64,
        ));
    }
    let key = &args[1];
    let Some(meta) = hll_meta(&mut ctx.txn, db, key)? else {
        return Ok(Reply::Integer(0));
    };
    off_thread_for(ctx, std::slice::from_ref(&Some(meta.clone())))?;
    let Loaded { mut hll, embstr } = load(&mut ctx.txn, db, key, &meta)?;
    let card = match hll.cached_cardinality() {
        Some(card) => {
            if embstr {
                store(ctx, key, &hll, meta.expire_at_ms)?;
            }
            card
        }
        None => {
            let card = hll.cardinality().map_err(hll_error)?;
            hll.set_cached_cardinality(card);
            store(ctx, key, &hll, meta.expire_at_ms)?;
            // Redis counts the refreshed cache as a change.
            ctx.dirty(1);
            card
        }
    };
    if ctx.txn.has_writes() {
        ctx.replay_as(&[b"PFCOUNT".as_slice(), key.as_ref()]);
    }
    // Redis replies with the unsigned count as a signed integer.
    Ok(Reply::Integer(card as i64))
}

/// The registers of several keys merged (missing keys count as empty), and
/// whether any of them is dense.
struct Union {
    registers: Box<Registers>,
    any_dense: bool,
}

fn union(ctx: &mut Ctx<'_>, keys: &[Bytes]) -> CmdResult<Union> {
    let db = ctx.db();
    // Redis checks and merges key by key, in order, so the first bad key's
    // error wins; the metas are read first only to size the work.
    let metas: Vec<CmdResult<Option<Meta>>> = keys
        .iter()
        .map(|key| hll_meta(&mut ctx.txn, db, key))
        .collect();
    let readable: Vec<Option<Meta>> = metas
        .iter()
        .filter_map(|m| m.as_ref().ok().cloned())
        .collect();
    off_thread_for(ctx, &readable)?;
    let mut registers: Box<Registers> = Box::new([0u8; REGISTERS]);
    let mut any_dense = false;
    for (key, meta) in keys.iter().zip(metas) {
        let Some(meta) = meta? else {
            continue;
        };
        let loaded = load(&mut ctx.txn, db, key, &meta)?;
        any_dense |= loaded.hll.is_dense();
        loaded.hll.merge_into(&mut registers).map_err(hll_error)?;
    }
    Ok(Union {
        registers,
        any_dense,
    })
}

/// PFMERGE destkey [sourcekey ...]: the destination (merged in too) holds
/// the union, dense if any input was.
fn pfmerge(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let dest = &args[1];
    // Redis reads every key, the destination first, with lookupKeyRead.
    ctx.txn.set_read_lookups(true);
    let merged = union(ctx, &args[1..])?;
    ctx.txn.set_read_lookups(false);
    let (mut hll, expire_at_ms) = match hll_meta(&mut ctx.txn, db, dest)? {
        None => (Hll::new(), 0),
        Some(meta) => (load(&mut ctx.txn, db, dest, &meta)?.hll, meta.expire_at_ms),
    };
    if merged.any_dense {
        hll.make_dense().map_err(hll_error)?;
    }
    let max_bytes = sparse_max_bytes(ctx);
    if !hll.is_dense() {
        // Sparse updates walk the value once per register set.
        let set = merged.registers.iter().filter(|&&r| r != 0).count() as u64;
        let work = set * sparse_walk_bytes(&hll, max_bytes);
        off_thread_if(ctx, work / SPARSE_BYTES_PER_MEMBER)?;
    }
    for (index, &value) in merged.registers.iter().enumerate() {
        if value != 0 {
            // As in Redis, a register the (checked) destination cannot take
            // is skipped rather than reported.
            let _ = hll.raise(index, value, max_bytes);
        }
    }
    hll.invalidate_cache();
    store(ctx, dest, &hll, expire_at_ms)?;
    ctx.notify(class::STRING, "pfadd", dest);
    ctx.dirty(1);
    Ok(Reply::ok())
}

/// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key. GETREG and TODENSE leave a
/// sparse value dense, as in Redis.
fn pfdebug(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let (sub, key) = (&args[1], &args[2]);
    let Some(meta) = hll_meta(&mut ctx.txn, db, key)? else {
        return Err(CmdError::Static("ERR The specified key does not exist"));
    };
    off_thread_for(ctx, std::slice::from_ref(&Some(meta.clone())))?;
    let Loaded { mut hll, embstr } = load(&mut ctx.txn, db, key, &meta)?;
    // Redis makes the value raw before it looks at the subcommand.
    let mut changed = embstr;
    let reply = if is(sub, "getreg") || is(sub, "todense") {
        let was_sparse = !hll.is_dense();
        match hll.make_dense() {
            Err(e) => Err(hll_error(e)),
            Ok(()) => {
                changed |= was_sparse;
                // Redis counts the conversion as a change.
                ctx.dirty(u64::from(was_sparse));
                Ok(if is(sub, "todense") {
                    Reply::Integer(i64::from(was_sparse))
                } else {
                    let values = hll.dense_register_values().unwrap_or_default();
                    Reply::Array(
                        values
                            .into_iter()
                            .map(|v| Reply::Integer(i64::from(v)))
                            .collect(),
                    )
                })
            }
        }
    } else if is(sub, "decode") {
        hll.decode_sparse()
            .map(|text| Reply::Bulk(Bytes::from(text)))
            .ok_or(CmdError::Static("ERR HLL encoding is not sparse"))
    } else if is(sub, "encoding") {
        Ok(Reply::simple(if hll.is_dense() {
            "dense"
        } else {
            "sparse"
        }))
    } else {
        let mut text = b"ERR Unknown PFDEBUG subcommand '".to_vec();
        text.extend_from_slice(truncate_for_error(sub, usize::MAX));
        text.push(b'\'');
        Err(CmdError::Text(Bytes::from(text)))
    };
    if !changed {
        return reply;
    }
    store(ctx, key, &hll, meta.expire_at_ms)?;
    let replay: Vec<&[u8]> = args.iter().map(|a| a.as_ref()).collect();
    ctx.replay_as(&replay);
    Ok(reply.unwrap_or_else(CmdError::into_reply))
}

/// PFSELFTEST: Redis's self-test of the register packing and of the
/// estimator (ten million elements), on a blocking thread.
fn pfselftest(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let sparse_max_bytes = sparse_max_bytes(ctx);
    let seed = ctx.txn.now_ms();
    ctx.deferred = Some(Deferred::Blocking(Box::new(move |_| {
        match self_test(sparse_max_bytes, seed) {
            Ok(()) => Reply::ok(),
            Err(text) => Reply::Error(Bytes::from(format!("ERR {text}"))),
        }
    })));
    Ok(Reply::Null)
}
