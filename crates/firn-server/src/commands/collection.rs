//! What the collection groups (hashes, lists, sets, sorted sets) share:
//! moving long member walks off the network threads, HSCAN/SSCAN/ZSCAN,
//! and the type dispatch of DUMP, RESTORE and OBJECT ENCODING.

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::{notify_class as class, Cf, Collection, Meta, ValueType};
use std::ops::Bound;

use super::offload::off_thread_if;
use super::scan::{parse_cursor, KeyPattern};
use super::Ctx;
use crate::args::parse_i64;
use crate::args::{is, ArgCursor};
use crate::errors::{CmdError, CmdResult, SYNTAX};
use crate::stream_reply::Sink;
use firn_storage::{Body, EncodingHint};

/// Collections with more members than this are not read whole into a
/// reply by HGETALL, SMEMBERS and the like: they are streamed.
pub const STREAM_MEMBERS: u64 = 10_000;

/// Whether a reply of `members` members is streamed from a snapshot: more
/// than [`STREAM_MEMBERS`], and not inside EXEC or a script, whose replies
/// must be read from the unit's own transaction at the command's place in
/// it (see `Ctx::in_unit`); there it is built whole, on the pool.
pub fn streamed(ctx: &Ctx<'_>, members: u64) -> bool {
    members > STREAM_MEMBERS && !ctx.in_unit
}

/// The shape of a streamed whole-collection reply.
#[derive(Clone, Copy)]
pub enum Shape {
    /// An array of `per_member` items per member (HKEYS: 1, HGETALL in
    /// RESP2 seen as an array: 2).
    Array { per_member: usize },
    /// A map of one pair per member (RESP3 HGETALL; RESP2 flattens it).
    Map,
    /// A set of one item per member (RESP3 SMEMBERS; RESP2: an array).
    Set,
}

/// Writes one member of a streamed reply; false once the client is gone.
pub type StreamMember = fn(&mut Sink, &[u8], &[u8]) -> bool;

/// The part of a collection a streamed reply covers, decided on the
/// snapshot the reply is read from.
pub struct Span {
    /// Members the walk will visit (the reply's length follows from it).
    pub members: usize,
    pub from: Bound<Vec<u8>>,
    pub to: Bound<Vec<u8>>,
    pub reverse: bool,
}

impl Span {
    /// Every member of `coll`, in member order.
    pub fn all(coll: &Collection) -> Span {
        Span {
            members: coll.size as usize,
            from: Bound::Unbounded,
            to: Bound::Unbounded,
            reverse: false,
        }
    }
}

/// Replies with every member of the collection at `key` (in `cf`'s member
/// order), streamed from a snapshot (see [`stream_span`]).
pub fn stream_members(
    ctx: &mut Ctx<'_>,
    key: &Bytes,
    value_type: ValueType,
    cf: Cf,
    shape: Shape,
    emit: StreamMember,
) {
    stream_span(ctx, key, value_type, cf, shape, |c| Ok(Span::all(c)), emit);
}

/// Replies with the members `span` picks from the collection at `key`,
/// streamed from a snapshot on a background thread (see `stream_reply.rs`):
/// a collection of millions of members is never held whole. The handler
/// calls it once it has checked the key's type; a key missing from the
/// snapshot gives an empty reply.
pub fn stream_span(
    ctx: &mut Ctx<'_>,
    key: &Bytes,
    value_type: ValueType,
    cf: Cf,
    shape: Shape,
    span: impl FnOnce(&Collection) -> CmdResult<Span> + Send + 'static,
    emit: StreamMember,
) {
    let (db, key) = (ctx.db(), key.clone());
    ctx.stream_reply(move |server, sink| {
        let mut view = server.engine.keyspace_view(db)?;
        let coll = view.collection(&key, value_type)?;
        let span = match &coll {
            Some(coll) => span(coll)?,
            None => Span {
                members: 0,
                from: Bound::Unbounded,
                to: Bound::Unbounded,
                reverse: false,
            },
        };
        let started = match shape {
            Shape::Array { per_member } => sink.array(span.members.saturating_mul(per_member)),
            Shape::Map => sink.map(span.members),
            Shape::Set => sink.set(span.members),
        };
        let Some(coll) = coll.filter(|_| started && span.members > 0) else {
            return Ok(());
        };
        let mut left = span.members;
        view.scan_members(
            cf,
            &key,
            &coll,
            span.from.as_ref().map(|b| b.as_slice()),
            span.to.as_ref().map(|b| b.as_slice()),
            span.reverse,
            |member, value| {
                left -= 1;
                emit(sink, member, value) && left > 0
            },
        )?;
        Ok(())
    });
}

/// Appends one visited member to a SCAN-family reply.
pub type EmitMember = fn(&mut Vec<Reply>, &[u8], &Bytes);

/// HSCAN/SSCAN/ZSCAN: `key cursor [MATCH pattern] [COUNT count]` over the
/// members of `cf`. Like Redis, a collection in its compact encoding is
/// returned whole with cursor 0 (COUNT is ignored); a big one is walked
/// `COUNT` members per call, resuming after the last member returned.
pub fn member_scan(
    ctx: &mut Ctx<'_>,
    args: &[Bytes],
    value_type: ValueType,
    cf: Cf,
    emit: EmitMember,
) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let cursor = parse_cursor(&args[2]).ok_or(CmdError::Static("ERR invalid cursor"))?;
    let Some(coll) = ctx.txn.collection(db, key, value_type)? else {
        return Ok(scan_page(0, Vec::new()));
    };
    let (mut pattern, mut count) = (None, 10u64);
    let mut opts = ArgCursor::new(args, 3);
    while let Some(opt) = opts.next_arg() {
        if is(opt, "match") && opts.peek().is_some() {
            pattern = Some(KeyPattern::new(opts.value()?));
        } else if is(opt, "count") && opts.peek().is_some() {
            let n = opts.int_value()?;
            if n < 1 {
                return Err(CmdError::Static(SYNTAX));
            }
            count = n as u64;
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    let keep = |member: &[u8]| pattern.as_ref().is_none_or(|p| p.matches(member));
    let mut items = Vec::new();
    if !coll.big {
        ctx.txn.scan_members(
            cf,
            db,
            key,
            &coll,
            Bound::Unbounded,
            Bound::Unbounded,
            false,
            |member, value| {
                if keep(member) {
                    emit(&mut items, member, value);
                }
                true
            },
        )?;
        return Ok(scan_page(0, items));
    }
    off_thread_if(ctx, count.min(coll.size))?;
    let after = match cursor {
        0 => None,
        c => ctx.server.scan_cursors.lock().resume_member(db, key, c),
    };
    let from = match &after {
        Some(member) => Bound::Excluded(member.as_ref()),
        None => Bound::Unbounded,
    };
    let (mut visited, mut last) = (0u64, None);
    ctx.txn.scan_members(
        cf,
        db,
        key,
        &coll,
        from,
        Bound::Unbounded,
        false,
        |member, value| {
            if visited == count {
                return false;
            }
            visited += 1;
            last = Some(Bytes::copy_from_slice(member));
            if keep(member) {
                emit(&mut items, member, value);
            }
            true
        },
    )?;
    // A full page may have been the last: the next call then finds nothing
    // and answers cursor 0, as Redis may.
    let next = match last {
        Some(last) if visited == count => {
            ctx.server
                .scan_cursors
                .lock()
                .save_member(db, key.clone(), last)
        }
        _ => 0,
    };
    Ok(scan_page(next, items))
}

fn scan_page(cursor: u64, items: Vec<Reply>) -> Reply {
    Reply::Array(vec![
        Reply::Bulk(Bytes::from(cursor.to_string())),
        Reply::Array(items),
    ])
}

/// OBJECT ENCODING of a collection: what Redis 7.0 reports for the same
/// contents under its default thresholds (each type sets `big` when Redis
/// would have converted the value, and Redis never converts back).
pub fn object_encoding(meta: &Meta) -> &'static str {
    let big = Collection::of_meta(meta).is_some_and(|c| c.big);
    match (meta.value_type, big) {
        (ValueType::List, _) => "quicklist",
        (ValueType::Hash, false) => "listpack",
        (ValueType::Set, false) => "intset",
        (ValueType::ZSet, false) => "listpack",
        (ValueType::Hash | ValueType::Set, true) => "hashtable",
        (ValueType::ZSet, true) => "skiplist",
        (ValueType::Stream, _) => "stream",
        (ValueType::String, _) => "raw",
    }
}

/// The `del` event of a collection a command emptied (Redis deletes it).
pub(crate) fn notify_if_emptied(ctx: &mut Ctx<'_>, key: &[u8], coll: &Collection) {
    if coll.size == 0 {
        ctx.notify(class::GENERIC, "del", key);
    }
}

/// Redis's string encodings: "int" for a canonical integer, "embstr" up to
/// 44 bytes, "raw" beyond or after an in-place modification.
pub fn string_encoding(meta: &Meta) -> &'static str {
    match &meta.body {
        Body::Inline(v)
            if meta.encoding == EncodingHint::Auto && v.len() <= 20 && parse_i64(v).is_some() =>
        {
            "int"
        }
        Body::Inline(v) if meta.encoding != EncodingHint::Raw && v.len() <= 44 => "embstr",
        _ => "raw",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use firn_storage::EncodingHint;

    fn string_meta(value: &[u8], raw: bool) -> Meta {
        Meta {
            encoding: if raw {
                EncodingHint::Raw
            } else {
                EncodingHint::Auto
            },
            ..Meta::inline_string(Bytes::copy_from_slice(value))
        }
    }

    #[test]
    fn string_encodings_follow_redis() {
        let x44 = vec![b'x'; 44];
        let x45 = vec![b'x'; 45];
        for (value, expected) in [
            (&b"0"[..], "int"),
            (b"-9223372036854775808", "int"),
            (b"9223372036854775807", "int"),
            (b"9223372036854775808", "embstr"),
            (b"007", "embstr"),
            (b"+1", "embstr"),
            (b"-0", "embstr"),
            (b"1.5", "embstr"),
            (b"", "embstr"),
            (&x44, "embstr"),
            (&x45, "raw"),
        ] {
            let name = String::from_utf8_lossy(value);
            assert_eq!(
                string_encoding(&string_meta(value, false)),
                expected,
                "{name}"
            );
        }
        // Modified in place (APPEND/SETRANGE/SETBIT): raw whatever it holds.
        assert_eq!(string_encoding(&string_meta(b"12", true)), "raw");
        assert_eq!(string_encoding(&string_meta(b"ab", true)), "raw");
        let chunked = Meta {
            body: Body::Chunked {
                version: 1,
                len: 1 << 20,
            },
            ..Meta::inline_string(Bytes::new())
        };
        assert_eq!(string_encoding(&chunked), "raw");
    }
}
