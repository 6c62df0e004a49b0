//! Bitmaps on string values: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP,
//! BITFIELD, BITFIELD_RO, following Redis 7.0's bitops.c.
//!
//! Bits are numbered from the most significant bit of byte 0. SETBIT,
//! GETBIT and each BITFIELD operation read and write only the (at most 9)
//! bytes they touch, through the chunked string encoding, so their cost
//! does not grow with the value; growing a string writes one byte and the
//! gap reads as zeros.

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::{notify_class as class, EncodingHint, ExpireAction, Meta, Txn};

use super::offload::{run_off_network_thread, BIG_READ_BYTES};
use super::{def, Ctx, Def};
use crate::args::{int_arg, is, parse_i64};
use crate::errors::{CmdError, CmdResult, BIT_OFFSET, SYNTAX};

pub const COMMANDS: &[Def] = &[
    def("setbit", setbit),
    def("getbit", getbit),
    def("bitcount", bitcount),
    def("bitpos", bitpos),
    def("bitop", bitop),
    def("bitfield", bitfield),
    def("bitfield_ro", bitfield_ro),
];

/// A bit offset argument: `#n` (times `hash_width`) when allowed, and below
/// proto-max-bulk-len bytes.
fn bit_offset(ctx: &Ctx<'_>, arg: &[u8], hash_width: Option<u64>) -> CmdResult<u64> {
    let bad = || CmdError::Static(BIT_OFFSET);
    let (digits, width) = match (arg.first(), hash_width) {
        (Some(b'#'), Some(w)) => (&arg[1..], w),
        _ => (arg, 1),
    };
    let n = parse_i64(digits).ok_or_else(bad)?;
    let offset = n.checked_mul(width as i64).ok_or_else(bad)?;
    if offset < 0 || (offset as u64 >> 3) >= ctx.server.config().proto_max_bulk_len {
        return Err(bad());
    }
    Ok(offset as u64)
}

fn max_len(ctx: &Ctx<'_>) -> u64 {
    ctx.server.config().proto_max_bulk_len
}

/// Bytes `[from, from + len)` of a string, zero-padded past its end.
fn window(
    txn: &mut Txn<'_>,
    db: u8,
    key: &[u8],
    meta: Option<&Meta>,
    from: u64,
    len: usize,
) -> CmdResult<Vec<u8>> {
    let mut out = match meta {
        Some(meta) => txn
            .read_string_range(db, key, meta, from, len as u64)?
            .to_vec(),
        None => Vec::new(),
    };
    out.resize(len, 0);
    Ok(out)
}

fn setbit(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let offset = bit_offset(ctx, &args[2], None)?;
    let on = match parse_i64(&args[3]) {
        Some(v @ (0 | 1)) => v as u8,
        _ => {
            return Err(CmdError::Static(
                "ERR bit is not an integer or out of range",
            ))
        }
    };
    let meta = ctx.txn.string_meta(db, &args[1])?;
    let byte_index = offset >> 3;
    let mask = 1u8 << (7 - (offset & 7));
    let byte = window(&mut ctx.txn, db, &args[1], meta.as_ref(), byte_index, 1)?[0];
    let old = (byte & mask != 0) as i64;
    let new = if on == 1 { byte | mask } else { byte & !mask };
    // Redis 7.0 changes (so signals, notifies and propagates) only a
    // created or grown string or a changed bit.
    let grown = meta
        .as_ref()
        .is_none_or(|m| byte_index >= Txn::string_len_of(m));
    if grown || old != on as i64 {
        let max = max_len(ctx);
        ctx.txn
            .write_string_range(db, &args[1], byte_index, &[new], max)?;
        ctx.notify(class::STRING, "setbit", &args[1]);
        ctx.dirty(1);
    }
    Ok(Reply::Integer(old))
}

fn getbit(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let offset = bit_offset(ctx, &args[2], None)?;
    let meta = ctx.txn.string_meta(db, &args[1])?;
    let byte = window(&mut ctx.txn, db, &args[1], meta.as_ref(), offset >> 3, 1)?[0];
    Ok(Reply::Integer((byte >> (7 - (offset & 7)) & 1) as i64))
}

/// A resolved BITCOUNT/BITPOS range: inclusive byte indices plus the masks
/// Redis uses to ignore bits outside a BIT range in the edge bytes.
struct Range {
    start: i64,
    end: i64,
    first_mask: u8,
    last_mask: u8,
}

fn resolve(mut start: i64, mut end: i64, strlen: i64, is_bit: bool) -> Range {
    let total = if is_bit { strlen << 3 } else { strlen };
    if start < 0 {
        start += total;
    }
    if end < 0 {
        end += total;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= total {
        end = total - 1;
    }
    let (mut first_mask, mut last_mask) = (0u8, 0u8);
    if is_bit && start <= end {
        first_mask = (!((1u32 << (8 - (start & 7))) - 1) & 0xFF) as u8;
        last_mask = ((1u32 << (7 - (end & 7))) - 1) as u8;
        start >>= 3;
        end >>= 3;
    }
    Range {
        start,
        end,
        first_mask,
        last_mask,
    }
}

fn bit_or_byte(arg: &[u8]) -> CmdResult<bool> {
    if is(arg, "bit") {
        Ok(true)
    } else if is(arg, "byte") {
        Ok(false)
    } else {
        Err(CmdError::Static(SYNTAX))
    }
}

fn bitcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    if let Some(reply) = bitcount_in(&mut ctx.txn, db, args, BIG_READ_BYTES)? {
        return Ok(reply);
    }
    let args = args.to_vec();
    run_off_network_thread(ctx, vec![args[1].clone()], move |txn, db| {
        Ok(bitcount_in(txn, db, &args, u64::MAX)?.unwrap_or(Reply::Null))
    })
}

/// BITCOUNT's reply, or `None` if it would read more than `max_bytes`.
/// The range is read and counted one window at a time, so memory stays
/// bounded whatever the value's size.
fn bitcount_in(
    txn: &mut Txn<'_>,
    db: u8,
    args: &[Bytes],
    max_bytes: u64,
) -> CmdResult<Option<Reply>> {
    const WINDOW_BYTES: u64 = 1 << 20;
    // Redis looks the key up before it parses the range arguments.
    let Some(meta) = txn.string_meta(db, &args[1])? else {
        return Ok(Some(Reply::Integer(0)));
    };
    let strlen = Txn::string_len_of(&meta) as i64;
    let range = match args.len() {
        2 => Range {
            start: 0,
            end: strlen - 1,
            first_mask: 0,
            last_mask: 0,
        },
        4 | 5 => {
            let (start, end) = (int_arg(&args[2])?, int_arg(&args[3])?);
            if start < 0 && end < 0 && start > end {
                return Ok(Some(Reply::Integer(0)));
            }
            let is_bit = match args.get(4) {
                Some(unit) => bit_or_byte(unit)?,
                None => false,
            };
            resolve(start, end, strlen, is_bit)
        }
        _ => return Err(CmdError::Static(SYNTAX)),
    };
    if range.start > range.end {
        return Ok(Some(Reply::Integer(0)));
    }
    let (first, last) = (range.start as u64, range.end as u64);
    if last - first + 1 > max_bytes {
        return Ok(None);
    }
    let mut count: i64 = 0;
    let mut pos = first;
    while pos <= last {
        let take = (last - pos + 1).min(WINDOW_BYTES);
        let window = txn.read_string_range(db, &args[1], &meta, pos, take)?;
        count += popcount(&window);
        pos += take;
    }
    let mut edge = |at: u64| {
        txn.read_string_range(db, &args[1], &meta, at, 1)
            .map(|b| b.first().copied().unwrap_or(0))
    };
    if range.first_mask != 0 {
        count -= (edge(first)? & range.first_mask).count_ones() as i64;
    }
    if range.last_mask != 0 {
        count -= (edge(last)? & range.last_mask).count_ones() as i64;
    }
    Ok(Some(Reply::Integer(count)))
}

/// Set bits in `bytes`, eight bytes at a time.
fn popcount(bytes: &[u8]) -> i64 {
    let mut words = bytes.chunks_exact(8);
    let mut count: u64 = 0;
    for word in &mut words {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(word);
        count += u64::from(u64::from_ne_bytes(eight).count_ones());
    }
    count += words
        .remainder()
        .iter()
        .map(|b| u64::from(b.count_ones()))
        .sum::<u64>();
    count as i64
}

fn bitpos(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let bit = int_arg(&args[2])?;
    if bit != 0 && bit != 1 {
        return Err(CmdError::Static("ERR The bit argument must be 1 or 0."));
    }
    let Some(meta) = ctx.txn.string_meta(db, &args[1])? else {
        return Ok(Reply::Integer(if bit == 1 { -1 } else { 0 }));
    };
    let strlen = Txn::string_len_of(&meta) as i64;
    let (range, end_given) = match args.len() {
        3 => (
            Range {
                start: 0,
                end: strlen - 1,
                first_mask: 0,
                last_mask: 0,
            },
            false,
        ),
        4..=6 => {
            let start = int_arg(&args[3])?;
            let is_bit = match args.get(5) {
                Some(unit) => bit_or_byte(unit)?,
                None => false,
            };
            let (end, end_given) = match args.get(4) {
                Some(raw) => (int_arg(raw)?, true),
                None if is_bit => ((strlen << 3) + 7, false),
                None => (strlen - 1, false),
            };
            (resolve(start, end, strlen, is_bit), end_given)
        }
        _ => return Err(CmdError::Static(SYNTAX)),
    };
    if range.start > range.end {
        return Ok(Reply::Integer(-1));
    }
    let mut bytes = ctx
        .txn
        .read_string_range(
            db,
            &args[1],
            &meta,
            range.start as u64,
            (range.end - range.start + 1) as u64,
        )?
        .to_vec();
    // Bits outside a BIT range are made to look like the bit not sought.
    let last = bytes.len() - 1;
    if bit == 1 {
        bytes[0] &= !range.first_mask;
        bytes[last] &= !range.last_mask;
    } else {
        bytes[0] |= range.first_mask;
        bytes[last] |= range.last_mask;
    }
    let found = bytes.iter().enumerate().find_map(|(i, &b)| {
        let candidate = if bit == 1 { b } else { !b };
        (candidate != 0).then(|| i as i64 * 8 + candidate.leading_zeros() as i64)
    });
    Ok(Reply::Integer(match found {
        Some(pos) => range.start * 8 + pos,
        // No clear bit: past the end of an open range the string is zeros.
        None if bit == 0 && !end_given => (range.end + 1) * 8,
        None => -1,
    }))
}

fn bitop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let op = args[1].to_ascii_lowercase();
    if !matches!(op.as_slice(), b"and" | b"or" | b"xor" | b"not") {
        return Err(CmdError::Static(SYNTAX));
    }
    if op == b"not" && args.len() != 4 {
        return Err(CmdError::Static(
            "ERR BITOP NOT must be called with a single source key.",
        ));
    }
    let mut sources: Vec<Bytes> = Vec::with_capacity(args.len() - 3);
    // Redis reads the sources with lookupKeyRead: a missing one is a keymiss.
    ctx.txn.set_read_lookups(true);
    for key in &args[3..] {
        sources.push(ctx.txn.get_string(db, key)?.unwrap_or_default());
    }
    ctx.txn.set_read_lookups(false);
    let max = sources.iter().map(|s| s.len()).max().unwrap_or(0);
    if max == 0 {
        if ctx.txn.delete_key(db, &args[2])? {
            ctx.notify(class::GENERIC, "del", &args[2]);
            ctx.dirty(1);
        }
        return Ok(Reply::Integer(0));
    }
    let byte_of = |s: &Bytes, i: usize| s.get(i).copied().unwrap_or(0);
    let result: Vec<u8> = (0..max)
        .map(|i| {
            let first = byte_of(&sources[0], i);
            match op.as_slice() {
                b"not" => !first,
                b"and" => sources[1..]
                    .iter()
                    .fold(first, |acc, s| acc & byte_of(s, i)),
                b"or" => sources[1..]
                    .iter()
                    .fold(first, |acc, s| acc | byte_of(s, i)),
                _ => sources[1..]
                    .iter()
                    .fold(first, |acc, s| acc ^ byte_of(s, i)),
            }
        })
        .collect();
    // Redis builds the result as a raw string object, whatever its length.
    ctx.txn.set_string_as(
        db,
        &args[2],
        Bytes::from(result),
        ExpireAction::Clear,
        EncodingHint::Raw,
    )?;
    ctx.notify(class::STRING, "set", &args[2]);
    ctx.dirty(1);
    Ok(Reply::Integer(max as i64))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FieldOp {
    Get,
    Set(i64),
    IncrBy(i64),
}

struct Field {
    op: FieldOp,
    signed: bool,
    bits: u32,
    offset: u64,
    overflow: Overflow,
}

const BAD_TYPE: &str = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";

fn field_type(arg: &[u8]) -> CmdResult<(bool, u32)> {
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(CmdError::Static(BAD_TYPE)),
    };
    match parse_i64(&arg[1..]) {
        Some(bits) if bits >= 1 && bits <= if signed { 64 } else { 63 } => {
            Ok((signed, bits as u32))
        }
        _ => Err(CmdError::Static(BAD_TYPE)),
    }
}

fn parse_fields(ctx: &Ctx<'_>, args: &[Bytes]) -> CmdResult<Vec<Field>> {
    let mut fields = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < args.len() {
        let remaining = args.len() - j - 1;
        let name = &args[j];
        let (op_args, is_get) = if is(name, "get") && remaining >= 2 {
            (2, true)
        } else if (is(name, "set") || is(name, "incrby")) && remaining >= 3 {
            (3, false)
        } else if is(name, "overflow") && remaining >= 1 {
            overflow = match args[j + 1].to_ascii_lowercase().as_slice() {
                b"wrap" => Overflow::Wrap,
                b"sat" => Overflow::Sat,
                b"fail" => Overflow::Fail,
                _ => return Err(CmdError::Static("ERR Invalid OVERFLOW type specified")),
            };
            j += 2;
            continue;
        } else {
            return Err(CmdError::Static(SYNTAX));
        };
        let (signed, bits) = field_type(&args[j + 1])?;
        let offset = bit_offset(ctx, &args[j + 2], Some(bits as u64))?;
        let op = if is_get {
            FieldOp::Get
        } else {
            let value = int_arg(&args[j + 3])?;
            if is(name, "set") {
                FieldOp::Set(value)
            } else {
                FieldOp::IncrBy(value)
            }
        };
        fields.push(Field {
            op,
            signed,
            bits,
            offset,
            overflow,
        });
        j += 1 + op_args;
    }
    Ok(fields)
}

/// Reads `bits` bits starting `offset` bits into `buf`, MSB first.
fn get_unsigned(buf: &[u8], offset: u64, bits: u32) -> u64 {
    (0..bits as u64).fold(0u64, |value, i| {
        let pos = offset + i;
        let bit = (buf[(pos >> 3) as usize] >> (7 - (pos & 7))) & 1;
        (value << 1) | bit as u64
    })
}

fn get_signed(buf: &[u8], offset: u64, bits: u32) -> i64 {
    let value = get_unsigned(buf, offset, bits);
    if bits < 64 && value & (1 << (bits - 1)) != 0 {
        (value | (u64::MAX << bits)) as i64
    } else {
        value as i64
    }
}

fn set_bits(buf: &mut [u8], offset: u64, bits: u32, value: u64) {
    for i in 0..bits as u64 {
        let bit = ((value >> (bits as u64 - 1 - i)) & 1) as u8;
        let pos = offset + i;
        let byte = &mut buf[(pos >> 3) as usize];
        let mask = 1u8 << (7 - (pos & 7));
        *byte = (*byte & !mask) | (bit << (7 - (pos & 7)));
    }
}

/// Redis's checkSignedBitfieldOverflow: `Some(limit)` when `value + incr`
/// overflows `bits` (the wrapped or saturated result), `None` otherwise.
fn signed_overflow(value: i64, incr: i64, bits: u32, overflow: Overflow) -> Option<i64> {
    let max: i64 = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let max_incr = max.wrapping_sub(value);
    let min_incr = min.wrapping_sub(value);
    let wrap = || {
        let mut c = (value as u64).wrapping_add(incr as u64);
        if bits < 64 {
            let mask = u64::MAX << bits;
            if c & (1u64 << (bits - 1)) != 0 {
                c |= mask;
            } else {
                c &= !mask;
            }
        }
        c as i64
    };
    if value > max || (bits != 64 && incr > max_incr) || (value >= 0 && incr > 0 && incr > max_incr)
    {
        Some(if overflow == Overflow::Sat {
            max
        } else {
            wrap()
        })
    } else if value < min
        || (bits != 64 && incr < min_incr)
        || (value < 0 && incr < 0 && incr < min_incr)
    {
        Some(if overflow == Overflow::Sat {
            min
        } else {
            wrap()
        })
    } else {
        None
    }
}

/// Redis's checkUnsignedBitfieldOverflow.
fn unsigned_overflow(value: u64, incr: i64, bits: u32, overflow: Overflow) -> Option<u64> {
    let max: u64 = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let max_incr = max.wrapping_sub(value) as i64;
    let min_incr = (value as i64).wrapping_neg();
    let wrap = || value.wrapping_add(incr as u64) & !(u64::MAX.checked_shl(bits).unwrap_or(0));
    if value > max || (incr > 0 && incr > max_incr) {
        Some(if overflow == Overflow::Sat {
            max
        } else {
            wrap()
        })
    } else if incr < 0 && incr < min_incr {
        Some(if overflow == Overflow::Sat { 0 } else { wrap() })
    } else {
        None
    }
}

fn run_bitfield(ctx: &mut Ctx<'_>, args: &[Bytes], read_only_command: bool) -> CmdResult {
    let db = ctx.db();
    let key = &args[1];
    let fields = parse_fields(ctx, args)?;
    let writes = fields.iter().any(|f| f.op != FieldOp::Get);
    if writes && read_only_command {
        return Err(CmdError::Static(
            "ERR BITFIELD_RO only supports the GET subcommand",
        ));
    }
    let mut meta = ctx.txn.string_meta(db, key)?;
    let max = max_len(ctx);
    // Redis counts a write that changed its bits, or every write once the
    // string was created or grown for them.
    let mut changes = 0;
    let mut grown = false;
    if writes {
        // Like Redis, grow the string to the farthest bit any write reaches
        // before running the operations (even ones that then FAIL).
        let needed = fields
            .iter()
            .filter(|f| f.op != FieldOp::Get)
            .map(|f| ((f.offset + f.bits as u64 - 1) >> 3) + 1)
            .max()
            .unwrap_or(0);
        let len = meta.as_ref().map_or(0, Txn::string_len_of);
        if meta.is_none() || len < needed {
            grown = true;
            let at = needed.max(1) - 1;
            let current = window(&mut ctx.txn, db, key, meta.as_ref(), at, 1)?;
            ctx.txn.write_string_range(db, key, at, &current, max)?;
        }
    }
    let mut replies = Vec::with_capacity(fields.len());
    for field in &fields {
        let first_byte = field.offset >> 3;
        let span = (((field.offset + field.bits as u64 - 1) >> 3) - first_byte + 1) as usize;
        let mut buf = window(&mut ctx.txn, db, key, meta.as_ref(), first_byte, span)?;
        let rel = field.offset - first_byte * 8;
        let (reply, new_value): (Reply, Option<u64>) = if field.signed {
            let old = get_signed(&buf, rel, field.bits);
            match field.op {
                FieldOp::Get => (Reply::Integer(old), None),
                FieldOp::Set(v) => match signed_overflow(v, 0, field.bits, field.overflow) {
                    Some(_) if field.overflow == Overflow::Fail => (Reply::Null, None),
                    Some(limited) => (Reply::Integer(old), Some(limited as u64)),
                    None => (Reply::Integer(old), Some(v as u64)),
                },
                FieldOp::IncrBy(incr) => {
                    match signed_overflow(old, incr, field.bits, field.overflow) {
                        Some(_) if field.overflow == Overflow::Fail => (Reply::Null, None),
                        Some(limited) => (Reply::Integer(limited), Some(limited as u64)),
                        None => (Reply::Integer(old + incr), Some((old + incr) as u64)),
                    }
                }
            }
        } else {
            let old = get_unsigned(&buf, rel, field.bits);
            match field.op {
                FieldOp::Get => (Reply::Integer(old as i64), None),
                FieldOp::Set(v) => match unsigned_overflow(v as u64, 0, field.bits, field.overflow)
                {
                    Some(_) if field.overflow == Overflow::Fail => (Reply::Null, None),
                    Some(limited) => (Reply::Integer(old as i64), Some(limited)),
                    None => (Reply::Integer(old as i64), Some(v as u64)),
                },
                FieldOp::IncrBy(incr) => {
                    match unsigned_overflow(old, incr, field.bits, field.overflow) {
                        Some(_) if field.overflow == Overflow::Fail => (Reply::Null, None),
                        Some(limited) => (Reply::Integer(limited as i64), Some(limited)),
                        None => {
                            let next = old.wrapping_add(incr as u64);
                            (Reply::Integer(next as i64), Some(next))
                        }
                    }
                }
            }
        };
        if let Some(value) = new_value {
            let before = buf.clone();
            set_bits(&mut buf, rel, field.bits, value);
            if grown || buf != before {
                ctx.txn.write_string_range(db, key, first_byte, &buf, max)?;
                meta = ctx.txn.string_meta(db, key)?;
                changes += 1;
            }
        }
        replies.push(reply);
    }
    if changes > 0 {
        ctx.notify(class::STRING, "setbit", key);
        ctx.dirty(changes);
    }
    Ok(Reply::Array(replies))
}

fn bitfield(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    run_bitfield(ctx, args, false)
}

fn bitfield_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    run_bitfield(ctx, args, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitfields_read_and_write_msb_first() {
        let mut buf = vec![0u8; 3];
        set_bits(&mut buf, 4, 8, 0xAB);
        assert_eq!(buf, vec![0x0A, 0xB0, 0]);
        assert_eq!(get_unsigned(&buf, 4, 8), 0xAB);
        assert_eq!(get_signed(&buf, 4, 8), 0xABu8 as i8 as i64);
        assert_eq!(get_signed(&[0xFF; 8], 0, 64), -1);
    }

    #[test]
    fn overflow_follows_redis() {
        assert_eq!(signed_overflow(127, 1, 8, Overflow::Wrap), Some(-128));
        assert_eq!(signed_overflow(127, 1, 8, Overflow::Sat), Some(127));
        assert_eq!(signed_overflow(-128, -1, 8, Overflow::Sat), Some(-128));
        assert_eq!(signed_overflow(100, 10, 8, Overflow::Wrap), None);
        assert_eq!(unsigned_overflow(255, 1, 8, Overflow::Wrap), Some(0));
        assert_eq!(unsigned_overflow(0, -1, 8, Overflow::Sat), Some(0));
        assert_eq!(unsigned_overflow(0, -1, 8, Overflow::Wrap), Some(255));
        assert_eq!(unsigned_overflow(250, 20, 8, Overflow::Sat), Some(255));
        assert_eq!(unsigned_overflow(200, 20, 8, Overflow::Sat), None);
        assert_eq!(
            signed_overflow(i64::MAX, 1, 64, Overflow::Wrap),
            Some(i64::MIN)
        );
    }

    #[test]
    fn ranges_follow_bitcount() {
        let r = resolve(1, 3, 4, true);
        assert_eq!((r.start, r.end), (0, 0));
        assert_eq!(r.first_mask, 0x80);
        assert_eq!(r.last_mask, 0x0F);
        let r = resolve(-1, -1, 4, false);
        assert_eq!((r.start, r.end), (3, 3));
    }
}
