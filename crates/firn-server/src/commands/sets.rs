//! Sets: SADD and friends, random members, the algebra (SINTER, SUNION,
//! SDIFF, their STORE forms, SINTERCARD), SSCAN, and the set side of
//! DUMP/RESTORE.
//!
//! Encoding (firn-storage `set.rs`): one `data` entry per member under the
//! key's version, so membership costs one point read, SCARD is the meta
//! record's count, and whole-set replies walk the members in byte order.
//! Redis answers a compact (intset) set in numeric order and a big one in
//! its hash order, which clients cannot rely on; so a reply of at most 512
//! integers is sorted numerically here (exactly Redis's order whenever
//! Redis's order is defined), any other in byte order. Replies that visit
//! more than a thousand members run on the cold-read pool
//! (`off_thread_if`).

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::{intset_value, notify_class as class, Cf, Collection, ValueType};
use rand::seq::SliceRandom;
use rand::Rng;
use std::collections::{BTreeSet, HashSet};

use super::collection::{member_scan, notify_if_emptied, stream_members, streamed, Shape};
use super::offload::{off_thread_if, INLINE_MEMBERS};
use super::{def, Ctx, Def};
use crate::args::{is, parse_i64};
use crate::errors::{CmdError, CmdResult, NOT_INTEGER, SYNTAX};
use crate::rdb::RdbValue;
use crate::stream_reply::Sink;

pub const COMMANDS: &[Def] = &[
    def("sadd", sadd),
    def("srem", srem),
    def("scard", scard),
    def("sismember", sismember),
    def("smismember", smismember),
    def("smembers", smembers),
    def("smove", smove),
    def("spop", spop),
    def("srandmember", srandmember),
    def("sinter", sinter),
    def("sinterstore", sinterstore),
    def("sintercard", sintercard),
    def("sunion", sunion),
    def("sunionstore", sunionstore),
    def("sdiff", sdiff),
    def("sdiffstore", sdiffstore),
    def("sscan", sscan),
];

/// SPOP's count: getPositiveLongFromObjectOrReply, for a non-integer too.
const POSITIVE_COUNT: &str = "ERR value is out of range, must be positive";
/// SRANDMEMBER's count range: -LONG_MAX..=LONG_MAX.
const COUNT_RANGE: &str =
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
/// SRANDMEMBER with a negative count returns at most this many members
/// (Redis has no limit and builds the reply until memory runs out).
const MAX_REPEATED_MEMBERS: u64 = 10_000_000;
const REPEATED_RANGE: &str = "ERR value is out of range";

/// Redis's SPOP_MOVE_STRATEGY_MUL: SPOP with a count builds a new set of
/// the members left when they are few compared to those popped.
const SPOP_MOVE_STRATEGY_MUL: u64 = 5;

/// Members a paged walk reads between probes of other keys.
const PAGE_MEMBERS: usize = INLINE_MEMBERS as usize;

/// Whether Redis would hold these members (a set built from scratch) as an
/// intset: at most `set-max-intset-entries` canonical integers.
fn fits_intset<'a>(ctx: &Ctx<'_>, mut members: impl ExactSizeIterator<Item = &'a Bytes>) -> bool {
    members.len() as u64 <= ctx.txn.encoding_limits().set_max_intset_entries
        && members.all(|m| intset_value(m).is_some())
}

/// Puts whole-set members in the order Redis replies with when it is
/// defined: numeric for what Redis holds as an intset; byte order (one of
/// Redis's unspecified hash orders) otherwise.
fn in_reply_order(ctx: &Ctx<'_>, members: &mut [Bytes]) {
    if fits_intset(ctx, members.iter()) {
        members.sort_by_key(|m| intset_value(m).unwrap_or_default());
    }
}

fn set_reply(ctx: &Ctx<'_>, mut members: Vec<Bytes>) -> Reply {
    in_reply_order(ctx, &mut members);
    Reply::Set(members.into_iter().map(Reply::Bulk).collect())
}

/// Every member of `set` in byte order. The caller has moved a big walk off
/// the network thread.
fn all_members(ctx: &mut Ctx<'_>, key: &[u8], set: &Collection) -> CmdResult<Vec<Bytes>> {
    let db = ctx.db();
    let mut members = Vec::with_capacity(usize::try_from(set.size).unwrap_or(0).min(1 << 20));
    ctx.txn.set_members(db, key, set, None, |member| {
        members.push(Bytes::copy_from_slice(member));
        true
    })?;
    Ok(members)
}

fn sadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    off_thread_if(ctx, args.len() as u64 - 2)?;
    let mut set = ctx.txn.set_or_new(db, key)?;
    let mut added = 0;
    for member in &args[2..] {
        added += ctx.txn.set_add(db, key, &mut set, member)? as i64;
    }
    if added > 0 {
        ctx.txn.save_collection(db, key, &set)?;
        ctx.notify(class::SET, "sadd", key);
    }
    ctx.dirty(added as u64);
    Ok(Reply::Integer(added))
}

fn srem(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let Some(mut set) = ctx.txn.set(db, key)? else {
        return Ok(Reply::Integer(0));
    };
    off_thread_if(ctx, args.len() as u64 - 2)?;
    let mut removed = 0;
    for member in &args[2..] {
        removed += ctx.txn.set_remove(db, key, &mut set, member)? as i64;
        if set.size == 0 {
            break;
        }
    }
    if removed > 0 {
        ctx.txn.set_shed_deleted(db, key, &mut set)?;
        ctx.txn.save_collection(db, key, &set)?;
        ctx.notify(class::SET, "srem", key);
        notify_if_emptied(ctx, key, &set);
    }
    ctx.dirty(removed as u64);
    Ok(Reply::Integer(removed))
}

fn scard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let size = ctx.txn.set(db, &args[1])?.map_or(0, |set| set.size);
    Ok(Reply::Integer(size as i64))
}

fn sismember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let Some(set) = ctx.txn.set(db, key)? else {
        return Ok(Reply::Integer(0));
    };
    let found = ctx.txn.set_contains(db, key, &set, &args[2])?;
    Ok(Reply::Integer(found as i64))
}

fn smismember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let set = ctx.txn.set(db, key)?;
    off_thread_if(ctx, args.len() as u64 - 2)?;
    let mut found = Vec::with_capacity(args.len() - 2);
    for member in &args[2..] {
        let here = match &set {
            Some(set) => ctx.txn.set_contains(db, key, set, member)?,
            None => false,
        };
        found.push(Reply::Integer(here as i64));
    }
    Ok(Reply::Array(found))
}

/// SMEMBERS is Redis 7.0's SINTER of one key. A set of more than
/// [`STREAM_MEMBERS`] members is streamed from a snapshot (in byte order:
/// Redis holds it as a hashtable), never held whole.
fn smembers(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let Some(set) = ctx.txn.set(db, key)? else {
        return Ok(Reply::Set(Vec::new()));
    };
    if streamed(ctx, set.size) {
        stream_members(
            ctx,
            key,
            ValueType::Set,
            Cf::Data,
            Shape::Set,
            stream_member,
        );
        return Ok(Reply::Set(Vec::new()));
    }
    let members = intersection(ctx, &args[1..2], 0)?;
    Ok(set_reply(ctx, members))
}

fn stream_member(sink: &mut Sink, member: &[u8], _: &[u8]) -> bool {
    sink.item(Reply::Bulk(Bytes::copy_from_slice(member)))
}

fn smove(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let (src, dst, member) = (&args[1], &args[2], &args[3]);
    // Redis answers 0 for a missing source before checking either type.
    let Some(mut src_set) = ctx.txn.set(db, src)? else {
        return Ok(Reply::Integer(0));
    };
    let dst_set = ctx.txn.set(db, dst)?;
    if src == dst {
        let found = ctx.txn.set_contains(db, src, &src_set, member)?;
        return Ok(Reply::Integer(found as i64));
    }
    if !ctx.txn.set_remove(db, src, &mut src_set, member)? {
        return Ok(Reply::Integer(0));
    }
    ctx.txn.set_shed_deleted(db, src, &mut src_set)?;
    ctx.txn.save_collection(db, src, &src_set)?;
    ctx.notify(class::SET, "srem", src);
    notify_if_emptied(ctx, src, &src_set);
    // One change for the removal, one more if the destination gained it.
    ctx.dirty(1);
    let mut dst_set = match dst_set {
        Some(set) => set,
        None => ctx.txn.new_set(),
    };
    if ctx.txn.set_add(db, dst, &mut dst_set, member)? {
        ctx.txn.save_collection(db, dst, &dst_set)?;
        ctx.notify(class::SET, "sadd", dst);
        ctx.dirty(1);
    }
    Ok(Reply::Integer(1))
}

/// Sets up to this size are sampled by reading them whole
/// (`Txn::random_members`).
const EXACT_SAMPLE_SIZE: u64 = 1024;

/// Members a random pick of `count` reads, for `off_thread_if`: the whole
/// set when the count covers it, about `count` from a big set. A set read
/// whole because it is small counts as inline work even past
/// [`INLINE_MEMBERS`] (by at most 24 members): SPOP on a busy set of that
/// size must not go through the pool, whose run is retried each time
/// another write touched the key meanwhile.
fn sampling_cost(set: &Collection, count: u64) -> u64 {
    if count >= set.size {
        set.size
    } else if set.size <= EXACT_SAMPLE_SIZE {
        set.size.min(INLINE_MEMBERS)
    } else {
        count
    }
}

fn spop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    match args.len() {
        2 => spop_one(ctx, &args[1]),
        3 => spop_count(ctx, &args[1], &args[2]),
        _ => Err(CmdError::Static(SYNTAX)),
    }
}

fn spop_one(ctx: &mut Ctx<'_>, key: &Bytes) -> CmdResult {
    let db = ctx.db();
    let Some(mut set) = ctx.txn.set(db, key)? else {
        return Ok(Reply::Null);
    };
    off_thread_if(ctx, sampling_cost(&set, 1))?;
    let picked = ctx
        .txn
        .set_random_members(db, key, &set, 1, rand::random())?;
    let Some(member) = picked.into_iter().next() else {
        return Ok(Reply::Null);
    };
    ctx.txn.set_delete_known(db, key, &mut set, &member);
    ctx.txn.set_shed_deleted(db, key, &mut set)?;
    ctx.txn.save_collection(db, key, &set)?;
    ctx.replay_as(&[b"SREM", key, &member]);
    ctx.notify(class::SET, "spop", key);
    notify_if_emptied(ctx, key, &set);
    ctx.dirty(1);
    Ok(Reply::Bulk(member))
}

/// SPOP with a count, as Redis 7.0's spopWithCountCommand: the whole set
/// (replicated as DEL), a few random members (replicated as one SREM
/// each), or, when few would be left, a new set of the members kept.
fn spop_count(ctx: &mut Ctx<'_>, key: &Bytes, count_arg: &[u8]) -> CmdResult {
    let db = ctx.db();
    let count = parse_i64(count_arg)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or(CmdError::Static(POSITIVE_COUNT))?;
    let Some(mut set) = ctx.txn.set(db, key)? else {
        return Ok(Reply::Set(Vec::new()));
    };
    if count == 0 {
        return Ok(Reply::Set(Vec::new()));
    }
    off_thread_if(ctx, sampling_cost(&set, count))?;
    if count >= set.size {
        let members = all_members(ctx, key, &set)?;
        ctx.txn.delete_key(db, key)?;
        ctx.replay_as(&[b"DEL", key]);
        ctx.notify(class::SET, "spop", key);
        ctx.notify(class::GENERIC, "del", key);
        ctx.dirty(members.len() as u64);
        return Ok(set_reply(ctx, members));
    }
    let remaining = set.size - count;
    let popped = if remaining.saturating_mul(SPOP_MOVE_STRATEGY_MUL) > count {
        let popped = ctx
            .txn
            .set_random_members(db, key, &set, count as usize, rand::random())?;
        for member in &popped {
            ctx.txn.set_delete_known(db, key, &mut set, member);
        }
        popped
    } else {
        let mut members = all_members(ctx, key, &set)?;
        members.shuffle(&mut rand::rng());
        let popped = members.split_off(members.len().min(remaining as usize));
        for member in &popped {
            ctx.txn.set_delete_known(db, key, &mut set, member);
        }
        // Redis stores the members kept as a new set: its encoding follows
        // its contents alone.
        set.big = !fits_intset(ctx, members.iter());
        popped
    };
    ctx.txn.set_shed_deleted(db, key, &mut set)?;
    ctx.txn.save_collection(db, key, &set)?;
    ctx.notify(class::SET, "spop", key);
    let srem = Bytes::from_static(b"SREM");
    ctx.txn.set_replay(
        popped
            .iter()
            .map(|member| vec![srem.clone(), key.clone(), member.clone()])
            .collect(),
    );
    ctx.dirty(popped.len() as u64);
    Ok(Reply::Set(popped.into_iter().map(Reply::Bulk).collect()))
}

fn srandmember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    if args.len() > 3 {
        return Err(CmdError::Static(SYNTAX));
    }
    let Some(count_arg) = args.get(2) else {
        let Some(set) = ctx.txn.set(db, key)? else {
            return Ok(Reply::Null);
        };
        off_thread_if(ctx, sampling_cost(&set, 1))?;
        let picked = ctx
            .txn
            .set_random_members(db, key, &set, 1, rand::random())?;
        return Ok(picked.into_iter().next().map_or(Reply::Null, Reply::Bulk));
    };
    let count = parse_i64(count_arg).ok_or(CmdError::Static(NOT_INTEGER))?;
    if count == i64::MIN {
        return Err(CmdError::Static(COUNT_RANGE));
    }
    let Some(set) = ctx.txn.set(db, key)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    let wanted = count.unsigned_abs();
    if wanted == 0 {
        return Ok(Reply::Array(Vec::new()));
    }
    if count < 0 || wanted == 1 {
        if wanted > MAX_REPEATED_MEMBERS {
            return Err(CmdError::Static(REPEATED_RANGE));
        }
        return repeated_members(ctx, key, &set, wanted);
    }
    off_thread_if(ctx, sampling_cost(&set, wanted))?;
    if wanted >= set.size {
        let mut members = all_members(ctx, key, &set)?;
        in_reply_order(ctx, &mut members);
        return Ok(Reply::Array(members.into_iter().map(Reply::Bulk).collect()));
    }
    let picked = ctx
        .txn
        .set_random_members(db, key, &set, wanted as usize, rand::random())?;
    Ok(Reply::Array(picked.into_iter().map(Reply::Bulk).collect()))
}

/// SRANDMEMBER with a negative count: `count` independent picks. Each pick
/// comes from a uniform sample of up to `count` distinct members (the whole
/// set when it is small), so every member is equally likely at each pick
/// while a big set is read only about `count` times.
fn repeated_members(ctx: &mut Ctx<'_>, key: &[u8], set: &Collection, count: u64) -> CmdResult {
    let db = ctx.db();
    let pool_size = count.min(set.size);
    off_thread_if(ctx, sampling_cost(set, pool_size).max(count))?;
    let pool = ctx
        .txn
        .set_random_members(db, key, set, pool_size as usize, rand::random())?;
    if pool.is_empty() {
        return Ok(Reply::Array(Vec::new()));
    }
    let mut rng = rand::rng();
    let picks = (0..count)
        .map(|_| Reply::Bulk(pool[rng.random_range(0..pool.len())].clone()))
        .collect();
    Ok(Reply::Array(picks))
}

/// The sets at `keys`, `None` for a missing key; WRONGTYPE if any key holds
/// another type.
fn lookup_sets(ctx: &mut Ctx<'_>, keys: &[Bytes]) -> CmdResult<Vec<Option<Collection>>> {
    let db = ctx.db();
    keys.iter().map(|key| Ok(ctx.txn.set(db, key)?)).collect()
}

/// The members of every set at `keys` (none if one is missing), found by
/// walking the smallest set and probing the others; stops after `limit`
/// members (0: no limit). In the walked set's byte order.
fn intersection(ctx: &mut Ctx<'_>, keys: &[Bytes], limit: u64) -> CmdResult<Vec<Bytes>> {
    let db = ctx.db();
    let sets = lookup_sets(ctx, keys)?;
    let Some(sets) = sets.into_iter().collect::<Option<Vec<Collection>>>() else {
        return Ok(Vec::new());
    };
    // Smallest first, ties in argument order (as Redis's qsort leaves them).
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| sets[i].size);
    let Some((&walked, rest)) = order.split_first() else {
        return Ok(Vec::new());
    };
    let walked_key = &keys[walked];
    let mut probed: Vec<usize> = Vec::new();
    for &i in rest {
        if keys[i] != *walked_key && !probed.iter().any(|&j| keys[j] == keys[i]) {
            probed.push(i);
        }
    }
    let smallest = sets[walked].size;
    off_thread_if(ctx, smallest.saturating_mul(1 + probed.len() as u64))?;
    let mut found = Vec::new();
    let mut after: Option<Bytes> = None;
    loop {
        let page = ctx.txn.set_member_page(
            db,
            walked_key,
            &sets[walked],
            after.as_deref(),
            PAGE_MEMBERS,
        )?;
        for member in &page {
            let mut everywhere = true;
            for &i in &probed {
                if !ctx.txn.set_contains(db, &keys[i], &sets[i], member)? {
                    everywhere = false;
                    break;
                }
            }
            if everywhere {
                found.push(member.clone());
                if limit > 0 && found.len() as u64 >= limit {
                    return Ok(found);
                }
            }
        }
        if page.len() < PAGE_MEMBERS {
            return Ok(found);
        }
        after = page.last().cloned();
    }
}

fn sinter(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let members = intersection(ctx, &args[1..], 0)?;
    Ok(set_reply(ctx, members))
}

fn sinterstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.txn.set_read_lookups(true);
    let members = intersection(ctx, &args[2..], 0)?;
    store_result(ctx, &args[1], members, false, "sinterstore")
}

fn sintercard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let numkeys = parse_i64(&args[1])
        .filter(|&n| n > 0)
        .ok_or(CmdError::Static("ERR numkeys should be greater than 0"))?;
    let key_args = args.len() as u64 - 2;
    if numkeys as u64 > key_args {
        return Err(CmdError::Static(
            "ERR Number of keys can't be greater than number of args",
        ));
    }
    let keys_end = 2 + numkeys as usize;
    let mut limit = 0u64;
    let mut opts = args[keys_end..].iter();
    while let Some(opt) = opts.next() {
        match opts.as_slice().first() {
            Some(value) if is(opt, "limit") => {
                opts.next();
                limit = parse_i64(value)
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or(CmdError::Static("ERR LIMIT can't be negative"))?;
            }
            _ => return Err(CmdError::Static(SYNTAX)),
        }
    }
    let members = intersection(ctx, &args[2..keys_end], limit)?;
    Ok(Reply::Integer(members.len() as i64))
}

/// The union of the sets at `keys` (missing keys are empty).
fn union(ctx: &mut Ctx<'_>, keys: &[Bytes]) -> CmdResult<Vec<Bytes>> {
    let sets = lookup_sets(ctx, keys)?;
    let total = sets.iter().flatten().map(|s| s.size).sum();
    off_thread_if(ctx, total)?;
    let mut members = BTreeSet::new();
    for (key, set) in keys.iter().zip(&sets) {
        let Some(set) = set else { continue };
        for member in all_members(ctx, key, set)? {
            members.insert(member);
        }
    }
    Ok(members.into_iter().collect())
}

/// The members of the first set at `keys` in none of the others, and
/// whether the set Redis would build for them is big.
///
/// Redis picks one of two algorithms by the set sizes; the second adds the
/// whole first set to the result before removing the others, so its
/// result is big when the first set holds a non-integer or more than 512
/// members, whatever is left. The choice is reproduced for that flag; the
/// work itself loads whichever side is smaller: the other sets into
/// memory, or probes of them for each member of the first.
fn difference(ctx: &mut Ctx<'_>, keys: &[Bytes]) -> CmdResult<(Vec<Bytes>, bool)> {
    let db = ctx.db();
    let sets = lookup_sets(ctx, keys)?;
    let Some(first) = sets.first().cloned().flatten() else {
        return Ok((Vec::new(), false));
    };
    let present: Vec<u64> = sets.iter().flatten().map(|s| s.size).collect();
    let redis_one_work = first.size.saturating_mul(present.len() as u64) / 2;
    let redis_two_work: u64 = present.iter().sum();
    let redis_adds_all_first = redis_one_work > redis_two_work;

    let first_key = &keys[0];
    let mut others: Vec<usize> = Vec::new();
    for (i, key) in keys.iter().enumerate().skip(1) {
        if sets[i].is_none() || others.iter().any(|&j| keys[j] == *key) {
            continue;
        }
        if key == first_key {
            // Every member is in a set subtracted.
            return Ok((Vec::new(), false));
        }
        others.push(i);
    }
    let others_size: u64 = others
        .iter()
        .filter_map(|&i| sets[i].as_ref())
        .map(|s| s.size)
        .sum();
    let probes = first.size.saturating_mul(others.len() as u64);
    let load_others = others_size <= probes;
    off_thread_if(ctx, first.size.saturating_add(others_size.min(probes)))?;

    let mut subtracted: HashSet<Bytes> = HashSet::new();
    if load_others {
        for &i in &others {
            if let Some(set) = &sets[i] {
                subtracted.extend(all_members(ctx, &keys[i], set)?);
            }
        }
    }
    let mut kept = Vec::new();
    let mut first_has_text = false;
    let mut after: Option<Bytes> = None;
    loop {
        let page =
            ctx.txn
                .set_member_page(db, first_key, &first, after.as_deref(), PAGE_MEMBERS)?;
        for member in &page {
            first_has_text |= intset_value(member).is_none();
            let mut elsewhere = false;
            if load_others {
                elsewhere = subtracted.contains(member);
            } else {
                for &i in &others {
                    if let Some(set) = &sets[i] {
                        if ctx.txn.set_contains(db, &keys[i], set, member)? {
                            elsewhere = true;
                            break;
                        }
                    }
                }
            }
            if !elsewhere {
                kept.push(member.clone());
            }
        }
        if page.len() < PAGE_MEMBERS {
            break;
        }
        after = page.last().cloned();
    }
    let big = redis_adds_all_first
        && (first_has_text || first.size > ctx.txn.encoding_limits().set_max_intset_entries);
    Ok((kept, big))
}

fn sunion(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let members = union(ctx, &args[1..])?;
    Ok(set_reply(ctx, members))
}

fn sunionstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.txn.set_read_lookups(true);
    let members = union(ctx, &args[2..])?;
    store_result(ctx, &args[1], members, false, "sunionstore")
}

fn sdiff(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (members, _) = difference(ctx, &args[1..])?;
    Ok(set_reply(ctx, members))
}

fn sdiffstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.txn.set_read_lookups(true);
    let (members, big) = difference(ctx, &args[2..])?;
    store_result(ctx, &args[1], members, big, "sdiffstore")
}

/// Stores distinct `members` as a new set at `dst` (replacing whatever it
/// held, its expiry included), or deletes `dst` when there are none.
/// The set is big if its contents say so or `big` is given.
fn store_result(
    ctx: &mut Ctx<'_>,
    dst: &[u8],
    members: Vec<Bytes>,
    big: bool,
    event: &'static str,
) -> CmdResult {
    // Sources are read as Redis's lookupKeyRead (keymiss), the
    // destination as a write.
    ctx.txn.set_read_lookups(false);
    let db = ctx.db();
    if members.is_empty() {
        if ctx.txn.delete_key(db, dst)? {
            ctx.notify(class::GENERIC, "del", dst);
            ctx.dirty(1);
        }
        return Ok(Reply::Integer(0));
    }
    let mut set = ctx.txn.new_set();
    for member in &members {
        ctx.txn.set_insert_new(db, dst, &mut set, member);
    }
    set.big |= big;
    ctx.txn.save_collection(db, dst, &set)?;
    ctx.notify(class::SET, event, dst);
    ctx.dirty(1);
    Ok(Reply::Integer(set.size as i64))
}

fn sscan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let page = member_scan(ctx, args, ValueType::Set, Cf::Data, |items, member, _| {
        items.push(Reply::Bulk(Bytes::copy_from_slice(member)))
    })?;
    // A compact set comes back whole: in Redis, in the intset's numeric order.
    let db = ctx.db();
    let compact = ctx.txn.set(db, &args[1])?.is_some_and(|set| !set.big);
    match page {
        Reply::Array(mut parts) if compact && parts.len() == 2 => {
            if let Some(Reply::Array(items)) = parts.get_mut(1) {
                items.sort_by_key(|item| match item {
                    Reply::Bulk(member) => intset_value(member).unwrap_or_default(),
                    _ => 0,
                });
            }
            Ok(Reply::Array(parts))
        }
        other => Ok(other),
    }
}

/// The whole set, for DUMP (the codec writes an intset in numeric order).
pub fn dump_value(ctx: &mut Ctx<'_>, key: &[u8], coll: &Collection) -> CmdResult<RdbValue> {
    let members = all_members(ctx, key, coll)?;
    Ok(RdbValue::Set(
        members.into_iter().map(|m| m.to_vec()).collect(),
    ))
}

/// RESTORE of a set (the codec has checked its members are distinct):
/// like Redis loading it, big exactly when its contents say so.
pub fn restore_value(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    members: Vec<Vec<u8>>,
    expire_at_ms: u64,
) -> CmdResult<()> {
    let db = ctx.db();
    let mut set = ctx.txn.new_set();
    set.expire_at_ms = expire_at_ms;
    for member in &members {
        ctx.txn.set_insert_new(db, key, &mut set, member);
    }
    ctx.txn.save_collection(db, key, &set)?;
    Ok(())
}
