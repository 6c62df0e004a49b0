//! SORT and SORT_RO over lists, sets and sorted sets, as Redis 7.0's
//! sort.c: numeric (C `strtod`) or ALPHA order, BY a pattern of string keys
//! or hash fields (`weight_*`, `obj_*->field`, a constant pattern meaning
//! "no sort"), GET patterns (`#` is the element), LIMIT, ASC/DESC, STORE.
//!
//! The keys BY and GET read are not declared by the command, so, as in
//! Redis Cluster, they are not locked: a concurrent write to one of them
//! may or may not be seen. The sorted key and the STORE key are locked.

use bytes::Bytes;
use firn_prims::strtod;
use firn_resp::Reply;
use firn_storage::{notify_class as class, Cf, Collection, ValueType};
use std::cmp::Ordering;
use std::ops::Bound;

use super::offload::off_thread_if;
use super::{def_all_if, Ctx, Def};
use crate::args::{is, parse_i64};
use crate::errors::{CmdError, CmdResult, NOT_INTEGER, SYNTAX};

pub const COMMANDS: &[Def] = &[
    def_all_if("sort", sort, reads_patterns),
    def_all_if("sort_ro", sort_ro, reads_patterns),
];

/// Whether a SORT reads keys its arguments only give as patterns (BY with
/// a `*`, GET other than `#`): it then holds every key lock, so that those
/// reads see one state and their lazy expiry and cache fills are made
/// under locks. Read loosely (any BY/GET word counts): more locking is
/// only slower.
fn reads_patterns(args: &[Bytes]) -> bool {
    args.windows(2).skip(2).any(|pair| {
        (is(&pair[0], "by") && pair[1].contains(&b'*'))
            || (is(&pair[0], "get") && pair[1].as_ref() != b"#")
    })
}

fn sort(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    sort_generic(ctx, args, false)
}

fn sort_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    sort_generic(ctx, args, true)
}

struct Options {
    desc: bool,
    alpha: bool,
    limit: (i64, i64),
    store: Option<Bytes>,
    by: Option<Bytes>,
    /// BY a pattern without `*`: keep the stored order.
    dontsort: bool,
    gets: Vec<Bytes>,
}

/// `reads_any_key`: the user may read every key (ACL), which BY and GET
/// patterns need, as they read keys no argument names.
fn parse(args: &[Bytes], readonly: bool, reads_any_key: bool) -> CmdResult<Options> {
    let mut opts = Options {
        desc: false,
        alpha: false,
        limit: (0, -1),
        store: None,
        by: None,
        dontsort: false,
        gets: Vec::new(),
    };
    let mut j = 2;
    while j < args.len() {
        let left = args.len() - j - 1;
        let arg = &args[j];
        if is(arg, "asc") {
            opts.desc = false;
        } else if is(arg, "desc") {
            opts.desc = true;
        } else if is(arg, "alpha") {
            opts.alpha = true;
        } else if is(arg, "limit") && left >= 2 {
            let start = parse_i64(&args[j + 1]).ok_or(CmdError::Static(NOT_INTEGER))?;
            let count = parse_i64(&args[j + 2]).ok_or(CmdError::Static(NOT_INTEGER))?;
            opts.limit = (start, count);
            j += 2;
        } else if !readonly && is(arg, "store") && left >= 1 {
            opts.store = Some(args[j + 1].clone());
            j += 1;
        } else if is(arg, "by") && left >= 1 {
            let pattern = args[j + 1].clone();
            // A pattern without '*' names one key for every element: there
            // is nothing to sort by.
            opts.dontsort = !pattern.contains(&b'*');
            if !opts.dontsort && !reads_any_key {
                return Err(CmdError::Static(
                    "ERR BY option of SORT denied due to insufficient ACL permissions.",
                ));
            }
            opts.by = Some(pattern);
            j += 1;
        } else if is(arg, "get") && left >= 1 {
            if !reads_any_key {
                return Err(CmdError::Static(
                    "ERR GET option of SORT denied due to insufficient ACL permissions.",
                ));
            }
            opts.gets.push(args[j + 1].clone());
            j += 1;
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
        j += 1;
    }
    Ok(opts)
}

/// One element to sort and what it sorts by.
struct Item {
    element: Bytes,
    score: f64,
    by: Option<Bytes>,
}

fn sort_generic(ctx: &mut Ctx<'_>, args: &[Bytes], readonly: bool) -> CmdResult {
    let user = &ctx.session.user;
    let reads_any_key = user.unrestricted
        || crate::commands::registry()
            .resolve(args)
            .is_ok_and(|cmd| crate::acl::check::reads_any_key(user, cmd, args));
    let mut opts = parse(args, readonly, reads_any_key)?;
    // SORT reads its key and patterns with lookupKeyRead (keymiss).
    ctx.txn.set_read_lookups(true);
    let db = ctx.db();
    let key = &args[1];
    let coll = match ctx.txn.meta(db, key)? {
        None => None,
        Some(meta) => match meta.value_type {
            ValueType::List | ValueType::Set | ValueType::ZSet => Collection::of_meta(&meta),
            _ => return Err(CmdError::Storage(firn_storage::StorageError::WrongType)),
        },
    };
    let value_type = coll.as_ref().map_or(ValueType::List, |c| c.value_type);
    // Redis converts a listpack sorted set to its skiplist encoding before
    // sorting it, for good: OBJECT ENCODING tells.
    if let Some(zset) = coll
        .as_ref()
        .filter(|c| c.value_type == ValueType::ZSet && !c.big)
    {
        let mut converted = zset.clone();
        converted.big = true;
        ctx.txn.save_collection(db, key, &converted)?;
    }
    // A set has no order of its own: with nothing to sort by, STORE would
    // store an arbitrary order, so Redis sorts it ALPHA instead.
    if opts.dontsort && value_type == ValueType::Set && opts.store.is_some() {
        opts.dontsort = false;
        opts.alpha = true;
        opts.by = None;
    }
    let len = coll.as_ref().map_or(0, |c| c.size) as i64;
    off_thread_if(ctx, len as u64)?;
    let (mut start, mut end) = limits(opts.limit, len);

    // Load the elements: only the LIMIT range when the stored order is kept.
    let mut items: Vec<Bytes> = Vec::new();
    if let Some(coll) = &coll {
        let ranged = opts.dontsort && value_type != ValueType::Set;
        if ranged {
            if end >= start {
                items = ordered_range(ctx, key, coll, start, end - start + 1, opts.desc)?;
            }
            end -= start;
            start = 0;
        } else {
            items = all_elements(ctx, key, coll)?;
        }
    }
    let mut sorted: Vec<Item> = items
        .into_iter()
        .map(|element| Item {
            element,
            score: 0.0,
            by: None,
        })
        .collect();

    if !opts.dontsort {
        let mut conversion_error = false;
        for item in &mut sorted {
            let by_value = match &opts.by {
                Some(pattern) => match lookup_by_pattern(ctx, db, pattern, &item.element)? {
                    Some(v) => v,
                    None => continue,
                },
                None => item.element.clone(),
            };
            if opts.alpha {
                if opts.by.is_some() {
                    item.by = Some(by_value);
                }
            } else {
                match sort_score(&by_value) {
                    Some(score) => item.score = score,
                    None => conversion_error = true,
                }
            }
        }
        if conversion_error {
            // A reply, not a failed command: the sorted set's conversion
            // above is kept, as in Redis.
            return Ok(Reply::Error(Bytes::from_static(
                b"ERR One or more scores can't be converted into double",
            )));
        }
        let (alpha, by_pattern, desc) = (opts.alpha, opts.by.is_some(), opts.desc);
        sorted.sort_by(|a, b| {
            let cmp = compare(a, b, alpha, by_pattern);
            if desc {
                cmp.reverse()
            } else {
                cmp
            }
        });
    }

    let take: Vec<&Item> = if end >= start {
        sorted
            .iter()
            .skip(start as usize)
            .take((end - start + 1) as usize)
            .collect()
    } else {
        Vec::new()
    };
    let mut out: Vec<Option<Bytes>> = Vec::new();
    for item in take {
        if opts.gets.is_empty() {
            out.push(Some(item.element.clone()));
        }
        for pattern in &opts.gets {
            out.push(lookup_by_pattern(ctx, db, pattern, &item.element)?);
        }
    }
    match opts.store {
        None => Ok(Reply::Array(
            out.into_iter()
                .map(|v| v.map_or(Reply::Null, Reply::Bulk))
                .collect(),
        )),
        Some(dest) => {
            ctx.txn.set_read_lookups(false);
            let count = out.len() as i64;
            if count > 0 {
                // Overwrites what `dest` held, as Redis's setKey (no `new`).
                let values: Vec<Bytes> = out.into_iter().map(Option::unwrap_or_default).collect();
                super::lists::store_list(ctx, &dest, values)?;
                ctx.notify(class::LIST, "sortstore", &dest);
                // Redis counts each element stored.
                ctx.dirty(count as u64);
            } else if ctx.txn.delete_key(db, &dest)? {
                ctx.notify(class::GENERIC, "del", &dest);
                ctx.dirty(1);
            }
            Ok(Reply::Integer(count))
        }
    }
}

/// Redis's LIMIT arithmetic: the inclusive `(start, end)` of the output.
fn limits((limit_start, limit_count): (i64, i64), len: i64) -> (i64, i64) {
    let start = limit_start.max(0).min(len);
    let count = limit_count.max(-1).min(len);
    let mut end = if count < 0 {
        len - 1
    } else {
        start + count - 1
    };
    if start >= len {
        return (len - 1, len - 2);
    }
    if end >= len {
        end = len - 1;
    }
    (start, end)
}

/// sortCompare: numeric with ties broken by the element's bytes, or ALPHA
/// over the BY values (a missing one first) or the elements.
fn compare(a: &Item, b: &Item, alpha: bool, by_pattern: bool) -> Ordering {
    if !alpha {
        return match a.score.partial_cmp(&b.score) {
            Some(Ordering::Equal) | None => a.element.cmp(&b.element),
            Some(order) => order,
        };
    }
    if by_pattern {
        return match (&a.by, &b.by) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => collate(x, y),
        };
    }
    collate(&a.element, &b.element)
}

/// strcoll in the C locale Redis runs with: bytes up to the first NUL.
fn collate(a: &[u8], b: &[u8]) -> Ordering {
    let cut = |s: &[u8]| -> usize { s.iter().position(|&c| c == 0).unwrap_or(s.len()) };
    a[..cut(a)].cmp(&b[..cut(b)])
}

/// The value a BY or GET pattern names for `element`: `#` is the element,
/// `prefix*suffix` a string key, `prefix*suffix->field` a hash field.
/// Anything missing or of another type is `None`, never an error.
fn lookup_by_pattern(
    ctx: &mut Ctx<'_>,
    db: u8,
    pattern: &[u8],
    element: &[u8],
) -> CmdResult<Option<Bytes>> {
    if pattern == b"#" {
        return Ok(Some(Bytes::copy_from_slice(element)));
    }
    // C string semantics: the pattern ends at its first NUL.
    let pattern = &pattern[..pattern
        .iter()
        .position(|&c| c == 0)
        .unwrap_or(pattern.len())];
    let Some(star) = pattern.iter().position(|&c| c == b'*') else {
        return Ok(None);
    };
    let after = &pattern[star + 1..];
    let arrow = after
        .windows(2)
        .position(|w| w == b"->")
        .filter(|&at| at + 2 < after.len());
    let (postfix, field) = match arrow {
        Some(at) => (&after[..at], Some(&after[at + 2..])),
        None => (after, None),
    };
    let mut name = pattern[..star].to_vec();
    name.extend_from_slice(element);
    name.extend_from_slice(postfix);
    let Some(meta) = ctx.txn.meta(db, &name)? else {
        return Ok(None);
    };
    match (field, meta.value_type) {
        (Some(field), ValueType::Hash) => {
            let Some(coll) = Collection::of_meta(&meta) else {
                return Ok(None);
            };
            Ok(ctx.txn.get_member(Cf::Data, db, &name, &coll, field)?)
        }
        (None, ValueType::String) => {
            let len = firn_storage::Txn::string_len_of(&meta);
            Ok(Some(ctx.txn.read_string_range(db, &name, &meta, 0, len)?))
        }
        _ => Ok(None),
    }
}

/// Every element, in the collection's order (sets: member order).
fn all_elements(ctx: &mut Ctx<'_>, key: &[u8], coll: &Collection) -> CmdResult<Vec<Bytes>> {
    match coll.value_type {
        ValueType::List => ordered_range(ctx, key, coll, 0, coll.size as i64, false),
        ValueType::ZSet => ordered_range(ctx, key, coll, 0, coll.size as i64, false),
        _ => {
            let db = ctx.db();
            let mut out = Vec::with_capacity(coll.size as usize);
            ctx.txn.scan_members(
                Cf::Data,
                db,
                key,
                coll,
                Bound::Unbounded,
                Bound::Unbounded,
                false,
                |member, _| {
                    out.push(Bytes::copy_from_slice(member));
                    true
                },
            )?;
            Ok(out)
        }
    }
}

/// `count` elements of a list (by index) or sorted set (by rank) from
/// position `start`, counted from the tail/highest score when `desc`.
fn ordered_range(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    coll: &Collection,
    start: i64,
    count: i64,
    desc: bool,
) -> CmdResult<Vec<Bytes>> {
    match coll.value_type {
        ValueType::List => super::lists::read_range(ctx, key, coll, start, count, desc),
        _ => {
            let db = ctx.db();
            let (mut skip, mut out) = (start, Vec::new());
            ctx.txn.scan_members(
                Cf::ZScore,
                db,
                key,
                coll,
                Bound::Unbounded,
                Bound::Unbounded,
                desc,
                |entry, _| {
                    if skip > 0 {
                        skip -= 1;
                        return true;
                    }
                    // `score (8 bytes) · member`.
                    if let Some(member) = entry.get(8..) {
                        out.push(Bytes::copy_from_slice(member));
                    }
                    (out.len() as i64) < count
                },
            )?;
            Ok(out)
        }
    }
}

/// A score as SORT reads it: C `strtod` (leading white space allowed) must
/// consume the whole C string (up to a NUL); ERANGE and NaN are errors.
pub fn sort_score(bytes: &[u8]) -> Option<f64> {
    let end = memchr::memchr(0, bytes).unwrap_or(bytes.len());
    let read = strtod(bytes);
    if read.len != end || read.out_of_range || read.value.is_nan() {
        return None;
    }
    Some(read.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_follow_c_strtod() {
        assert_eq!(sort_score(b"1.5"), Some(1.5));
        assert_eq!(sort_score(b"  -2"), Some(-2.0));
        assert_eq!(sort_score(b""), Some(0.0));
        assert_eq!(sort_score(b"0x10"), Some(16.0));
        assert_eq!(sort_score(b"inf"), Some(f64::INFINITY));
        assert_eq!(sort_score(b"1e400"), None);
        assert_eq!(sort_score(b"1e-400"), None);
        assert_eq!(sort_score(b"nan"), None);
        assert_eq!(sort_score(b"1 "), None);
        assert_eq!(sort_score(b"abc"), None);
        assert_eq!(sort_score(b"7\0junk"), Some(7.0));
    }

    #[test]
    fn limits_follow_redis() {
        assert_eq!(limits((0, -1), 5), (0, 4));
        assert_eq!(limits((1, 2), 5), (1, 2));
        assert_eq!(limits((10, 2), 5), (4, 3));
        assert_eq!(limits((-5, 100), 5), (0, 4));
        assert_eq!(limits((0, 0), 5), (0, -1));
        assert_eq!(limits((0, -1), 0), (-1, -2));
    }

    #[test]
    fn pattern_reads_hold_every_lock() {
        let args = |line: &str| -> Vec<Bytes> {
            line.split(' ')
                .map(|w| Bytes::copy_from_slice(w.as_bytes()))
                .collect()
        };
        assert!(reads_patterns(&args("SORT l BY w_*")));
        assert!(reads_patterns(&args("SORT l GET o_* GET #")));
        assert!(reads_patterns(&args("SORT l by w_*->f STORE d")));
        assert!(!reads_patterns(&args("SORT l BY nosort GET #")));
        assert!(!reads_patterns(&args("SORT l ALPHA LIMIT 0 10 STORE d")));
        assert!(!reads_patterns(&args("SORT by LIMIT 0 1")));
    }
}
