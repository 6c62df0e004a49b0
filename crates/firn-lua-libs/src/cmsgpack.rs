//! `cmsgpack`: lua-cmsgpack 0.4.0 as Redis ships it.
//!
//! Packing: a number that converts to a 64-bit integer exactly is written
//! as the smallest MessagePack integer, any other number as a float 32 when
//! that loses nothing, else as a float 64; strings as fixstr/str8/str16/
//! str32; a table whose keys are exactly 1..n (n > 0 or empty) as an
//! array, any other as a map in `next` order; tables nested 16 deep, nil,
//! functions, userdata (`cjson.null` too) and threads as nil. `pack` takes
//! several values and concatenates their encodings.
//!
//! Unpacking reads every top-level value (`unpack`), one (`unpack_one`) or
//! a limited number (`unpack_limit`) from an offset, the latter two
//! returning the next offset first (-1 at the end). The Lua stack limit of
//! a C function (8000 slots) is modelled, so that too many values or too
//! deep a nesting fail with the same "stack overflow (...)" errors.

use super::{
    exact_value, lib_function, number_to_integer, Args, Fail, LazyTable, LibResult, LuaStack, Ret,
    MAX_C_STACK,
};
use mlua::{Lua, Table, Value};

const MAX_NESTING: usize = 16;

const TOO_MANY_VALUES: &str =
    "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)";

pub(crate) fn module(lua: &Lua) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    table.set("pack", lib_function(lua, pack)?)?;
    table.set("unpack", lib_function(lua, unpack)?)?;
    table.set("unpack_one", lib_function(lua, unpack_one)?)?;
    table.set("unpack_limit", lib_function(lua, unpack_limit)?)?;
    table.set("_NAME", "cmsgpack")?;
    table.set("_VERSION", "lua-cmsgpack 0.4.0")?;
    table.set("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo")?;
    table.set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    Ok(table)
}

// ---------------------------------------------------------------------------
// Packing
// ---------------------------------------------------------------------------

fn pack(lua: &Lua, args: Args) -> LibResult<Ret> {
    let count = args.count();
    if count == 0 {
        return Err(Fail::arg(0, "MessagePack pack needs input."));
    }
    if count * 2 > MAX_C_STACK {
        return Err(Fail::arg(0, "Too many arguments for MessagePack pack."));
    }
    let mut out = Vec::new();
    for narg in 1..=count {
        if let Some(value) = args.get(narg) {
            encode_value(&value, 0, &mut out)?;
        }
    }
    Ret::one(Value::String(lua.create_string(out)?))
}

fn encode_value(value: &Value, level: usize, out: &mut Vec<u8>) -> LibResult<()> {
    match value {
        Value::String(text) => encode_bytes(&text.as_bytes(), out),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(n) => encode_number(*n as f64, out),
        Value::Number(n) => encode_number(*n, out),
        Value::Table(table) if level < MAX_NESTING => encode_table(table, level, out)?,
        _ => out.push(0xc0),
    }
    Ok(())
}

fn encode_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    let len = bytes.len();
    if len < 32 {
        out.push(0xa0 | len as u8);
    } else if len <= 0xff {
        out.extend_from_slice(&[0xd9, len as u8]);
    } else if len <= 0xffff {
        out.push(0xda);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
    out.extend_from_slice(bytes);
}

fn encode_number(n: f64, out: &mut Vec<u8>) {
    let integer = number_to_integer(n);
    if !n.is_infinite() && integer as f64 == n {
        encode_integer(integer, out);
        return;
    }
    let single = n as f32;
    if f64::from(single) == n {
        out.push(0xca);
        out.extend_from_slice(&single.to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_integer(n: i64, out: &mut Vec<u8>) {
    if n >= 0 {
        if n <= 127 {
            out.push(n as u8);
        } else if n <= 0xff {
            out.extend_from_slice(&[0xcc, n as u8]);
        } else if n <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        } else if n <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_length(n: usize, fix: u8, wide16: u8, wide32: u8, out: &mut Vec<u8>) {
    if n <= 15 {
        out.push(fix | n as u8);
    } else if n <= 0xffff {
        out.push(wide16);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(wide32);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

/// A table whose keys are exactly 1..n is an array (`table_is_an_array`):
/// every key a number, positive, equal to its `int` conversion.
fn is_array(table: &Table) -> mlua::Result<Option<usize>> {
    let mut count: i64 = 0;
    let mut max: i64 = 0;
    let mut array = true;
    table.for_each(|key: Value, _: Value| {
        if !array {
            return Ok(());
        }
        let n = match key {
            Value::Integer(n) => n as f64,
            Value::Number(n) => n,
            _ => f64::NAN,
        };
        let as_int = if (-2_147_483_648.0..2_147_483_648.0).contains(&n) {
            n as i32
        } else {
            i32::MIN
        };
        if n.is_nan() || n <= 0.0 || f64::from(as_int) != n {
            array = false;
            return Ok(());
        }
        max = max.max(i64::from(as_int));
        count += 1;
        Ok(())
    })?;
    Ok((array && max == count).then_some(count as usize))
}

fn encode_table(table: &Table, level: usize, out: &mut Vec<u8>) -> LibResult<()> {
    let table = &super::see_through(table)?;
    if let Some(len) = is_array(table)? {
        encode_length(len, 0x90, 0xdc, 0xdd, out);
        for index in 1..=len {
            let key = Value::Integer(index as i64);
            let value = table.raw_get::<Value>(index)?;
            let value = exact_value(table, &key, value)?;
            encode_value(&value, level + 1, out)?;
        }
        return Ok(());
    }
    let mut count = 0;
    table.for_each(|_: Value, _: Value| {
        count += 1;
        Ok(())
    })?;
    encode_length(count, 0x80, 0xde, 0xdf, out);
    // Nesting is at most 16 deep, so recursion is fine here.
    let mut failure = None;
    table.for_each(|key: Value, value: Value| {
        if failure.is_some() {
            return Ok(());
        }
        let value = exact_value(table, &key, value)?;
        let result =
            encode_value(&key, level + 1, out).and_then(|()| encode_value(&value, level + 1, out));
        if let Err(fail) = result {
            failure = Some(fail);
        }
        Ok(())
    })?;
    failure.map_or(Ok(()), Err)
}

// ---------------------------------------------------------------------------
// Unpacking
// ---------------------------------------------------------------------------

enum DecodeError {
    /// Not enough bytes ("Missing bytes in input.").
    Eof,
    /// An unknown type byte ("Bad data format in input.").
    BadFormat,
    /// Raised at once, as the C code raises it.
    Raise(Fail),
}

impl From<mlua::Error> for DecodeError {
    fn from(error: mlua::Error) -> Self {
        DecodeError::Raise(Fail::Lua(error))
    }
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn left(&self) -> usize {
        self.data.len() - self.pos
    }

    /// The next `n` bytes (not consumed), or EOF.
    fn need(&self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.left() < n {
            return Err(DecodeError::Eof);
        }
        Ok(&self.data[self.pos..self.pos + n])
    }

    fn consume(&mut self, n: usize) {
        self.pos += n;
    }
}

/// What `decode_head` found: a complete value, or the header of a table
/// whose elements follow.
enum Head {
    Value(Value),
    Array(usize),
    Map(usize),
}

/// A table being filled while its elements are decoded. The tables
/// themselves (and a map's pending key) wait in a Lua table, slots
/// `2 * level + 1` and `2 * level + 2`, so that deep nesting holds no Rust
/// handle per level. `depth` is the stack use of the C decoder (see the
/// file comment) where the table's header was read.
enum Open {
    Array {
        len: usize,
        next_index: usize,
        depth: usize,
    },
    Map {
        pairs_left: usize,
        /// The key read, waiting for its value (in `holder` when parked).
        key: Option<Value>,
        parked_key: bool,
        depth: usize,
    },
}

/// Decodes one value, without recursion (nesting is bounded only by the
/// modelled Lua stack).
fn decode_value(lua: &Lua, cursor: &mut Cursor<'_>, depth: usize) -> Result<Value, DecodeError> {
    let mut open: Vec<Open> = Vec::new();
    // The open tables below `KEEP_TABLES` levels, as mlua handles (mlua
    // handles are limited; deeper ones wait only in `holder`).
    let mut kept: Vec<Table> = Vec::new();
    let holder = LazyTable::new(lua);
    let table_slot = |level: usize| 2 * level + 1;
    let key_slot = |level: usize| 2 * level + 2;
    let mut at_depth = depth;
    loop {
        let mut value = match decode_head(lua, cursor, at_depth)? {
            Head::Value(value) => value,
            Head::Array(len) => {
                let table = lua.create_table()?;
                if at_depth + 2 > MAX_C_STACK {
                    return Err(DecodeError::Raise(Fail::error(
                        "stack overflow (in function mp_decode_to_lua_array)",
                    )));
                }
                if len > 0 {
                    keep(&holder, &mut kept, open.len(), table)?;
                    open.push(Open::Array {
                        len,
                        next_index: 1,
                        depth: at_depth,
                    });
                    at_depth += 2;
                    continue;
                }
                Value::Table(table)
            }
            Head::Map(len) => {
                let table = lua.create_table()?;
                if len > 0 {
                    keep(&holder, &mut kept, open.len(), table)?;
                    open.push(Open::Map {
                        pairs_left: len,
                        key: None,
                        parked_key: false,
                        depth: at_depth,
                    });
                    at_depth += 1;
                    continue;
                }
                Value::Table(table)
            }
        };
        // Hand the value to the innermost open table, closing those that
        // are complete.
        loop {
            let level = open.len().saturating_sub(1);
            let complete = match open.last_mut() {
                None => return Ok(value),
                Some(Open::Array {
                    len,
                    next_index,
                    depth,
                }) => {
                    let table = open_table(&holder, &kept, level)?;
                    table.raw_set(*next_index, value)?;
                    *next_index += 1;
                    if *next_index <= *len {
                        at_depth = *depth + 2;
                        break;
                    }
                    table
                }
                Some(Open::Map {
                    pairs_left,
                    key,
                    parked_key,
                    depth,
                }) => {
                    if key.is_none() && !*parked_key {
                        if level < KEEP_TABLES {
                            *key = Some(value);
                        } else {
                            holder.get()?.raw_set(key_slot(level), value)?;
                            *parked_key = true;
                        }
                        at_depth = *depth + 2;
                        break;
                    }
                    let key = match key.take() {
                        Some(key) => key,
                        None => {
                            *parked_key = false;
                            let slot = key_slot(level);
                            let parked: Value = holder.get()?.raw_get(slot)?;
                            let parked =
                                exact_value(holder.get()?, &Value::Integer(slot as i64), parked)?;
                            holder.clear(slot)?;
                            parked
                        }
                    };
                    match &key {
                        Value::Nil => {
                            return Err(DecodeError::Raise(Fail::Raw(
                                b"table index is nil".to_vec(),
                            )))
                        }
                        Value::Number(n) if n.is_nan() => {
                            return Err(DecodeError::Raise(Fail::Raw(
                                b"table index is NaN".to_vec(),
                            )))
                        }
                        _ => {}
                    }
                    let table = open_table(&holder, &kept, level)?;
                    table.raw_set(key, value)?;
                    *pairs_left -= 1;
                    if *pairs_left > 0 {
                        at_depth = *depth + 1;
                        break;
                    }
                    table
                }
            };
            if level < KEEP_TABLES {
                kept.pop();
            } else {
                holder.clear(table_slot(level))?;
            }
            open.pop();
            value = Value::Table(complete);
        }
    }
}

/// Tables open below this many levels are kept as mlua handles.
const KEEP_TABLES: usize = 256;

/// Keeps the table opened at `level`: as a handle, or in `holder`.
fn keep(
    holder: &LazyTable<'_>,
    kept: &mut Vec<Table>,
    level: usize,
    table: Table,
) -> mlua::Result<()> {
    if level < KEEP_TABLES {
        kept.push(table);
        Ok(())
    } else {
        holder.get()?.raw_set(2 * level + 1, table)
    }
}

/// The table open at `level` (see `keep`).
fn open_table(holder: &LazyTable<'_>, kept: &[Table], level: usize) -> mlua::Result<Table> {
    match kept.get(level) {
        Some(table) if level < KEEP_TABLES => Ok(table.clone()),
        _ => holder.get()?.raw_get(2 * level + 1),
    }
}

/// Reads one value or a table header (`mp_decode_to_lua_type` up to the
/// elements); `depth` is the C decoder's stack use.
fn decode_head(lua: &Lua, cursor: &mut Cursor<'_>, depth: usize) -> Result<Head, DecodeError> {
    if depth + 1 > MAX_C_STACK {
        return Err(DecodeError::Raise(Fail::error(TOO_MANY_VALUES)));
    }
    let head = cursor.need(1)?[0];
    let be = |bytes: &[u8]| bytes.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b));
    let value = match head {
        0xcc => {
            let bytes = cursor.need(2)?;
            cursor.consume(2);
            Value::Number(f64::from(bytes[1]))
        }
        0xd0 => {
            let bytes = cursor.need(2)?;
            cursor.consume(2);
            Value::Number(f64::from(bytes[1] as i8))
        }
        0xcd => {
            let bytes = cursor.need(3)?;
            cursor.consume(3);
            Value::Number(be(&bytes[1..]) as f64)
        }
        0xd1 => {
            let bytes = cursor.need(3)?;
            cursor.consume(3);
            Value::Number(f64::from(be(&bytes[1..]) as u16 as i16))
        }
        0xce => {
            let bytes = cursor.need(5)?;
            cursor.consume(5);
            Value::Number(be(&bytes[1..]) as f64)
        }
        0xd2 => {
            let bytes = cursor.need(5)?;
            cursor.consume(5);
            Value::Number(f64::from(be(&bytes[1..]) as u32 as i32))
        }
        0xcf => {
            // Redis's build reads "uint 64" as a signed 64-bit integer.
            let bytes = cursor.need(9)?;
            cursor.consume(9);
            Value::Number(be(&bytes[1..]) as i64 as f64)
        }
        0xd3 => {
            let bytes = cursor.need(9)?;
            cursor.consume(9);
            Value::Number(be(&bytes[1..]) as i64 as f64)
        }
        0xc0 => {
            cursor.consume(1);
            Value::Nil
        }
        0xc3 => {
            cursor.consume(1);
            Value::Boolean(true)
        }
        0xc2 => {
            cursor.consume(1);
            Value::Boolean(false)
        }
        0xca => {
            let bytes = cursor.need(5)?;
            cursor.consume(5);
            let bits = be(&bytes[1..]) as u32;
            Value::Number(f64::from(f32::from_bits(bits)))
        }
        0xcb => {
            let bytes = cursor.need(9)?;
            cursor.consume(9);
            Value::Number(f64::from_bits(be(&bytes[1..])))
        }
        0xd9 => {
            let len = usize::from(cursor.need(2)?[1]);
            decode_string(lua, cursor, 2, len)?
        }
        0xda => {
            let len = be(&cursor.need(3)?[1..]) as usize;
            decode_string(lua, cursor, 3, len)?
        }
        0xdb => {
            let len = be(&cursor.need(5)?[1..]) as usize;
            decode_string(lua, cursor, 5, len)?
        }
        0xdc => {
            let len = be(&cursor.need(3)?[1..]) as usize;
            cursor.consume(3);
            return Ok(Head::Array(len));
        }
        0xdd => {
            let len = be(&cursor.need(5)?[1..]) as usize;
            cursor.consume(5);
            return Ok(Head::Array(len));
        }
        0xde => {
            let len = be(&cursor.need(3)?[1..]) as usize;
            cursor.consume(3);
            return Ok(Head::Map(len));
        }
        0xdf => {
            let len = be(&cursor.need(5)?[1..]) as usize;
            cursor.consume(5);
            return Ok(Head::Map(len));
        }
        _ if head & 0x80 == 0 => {
            cursor.consume(1);
            Value::Number(f64::from(head))
        }
        _ if head & 0xe0 == 0xe0 => {
            cursor.consume(1);
            Value::Number(f64::from(head as i8))
        }
        _ if head & 0xe0 == 0xa0 => decode_string(lua, cursor, 1, usize::from(head & 0x1f))?,
        _ if head & 0xf0 == 0x90 => {
            cursor.consume(1);
            return Ok(Head::Array(usize::from(head & 0x0f)));
        }
        _ if head & 0xf0 == 0x80 => {
            cursor.consume(1);
            return Ok(Head::Map(usize::from(head & 0x0f)));
        }
        _ => return Err(DecodeError::BadFormat),
    };
    Ok(Head::Value(value))
}

fn decode_string(
    lua: &Lua,
    cursor: &mut Cursor<'_>,
    header: usize,
    len: usize,
) -> Result<Value, DecodeError> {
    let bytes = cursor.need(header.saturating_add(len))?;
    let value = Value::String(lua.create_string(&bytes[header..])?);
    cursor.consume(header + len);
    Ok(value)
}

/// `mp_unpack_full`: `limit` and `offset` both 0 decode everything.
/// `limit` and `offset` are `lua_Integer`s, printed in errors with `%d`
/// (their low 32 bits).
fn unpack_full(
    lua: &Lua,
    args: &Args,
    base_depth: usize,
    limit: i64,
    offset: i64,
) -> LibResult<Ret> {
    let data = args.check_bytes(1)?;
    let len = data.len();
    if offset < 0 || limit < 0 {
        return Err(Fail::error(format!(
            "Invalid request to unpack with offset of {} and limit of {}.",
            offset as i32, len as i32
        )));
    }
    if offset as u64 > len as u64 {
        return Err(Fail::error(format!(
            "Start offset {} greater than input length {}.",
            offset as i32, len as i32
        )));
    }
    let decode_all = limit == 0 && offset == 0;
    let limit = if decode_all {
        i64::from(i32::MAX)
    } else {
        limit
    };
    let mut cursor = Cursor {
        data: &data,
        pos: offset as usize,
    };
    let mut results = LuaStack::new();
    while cursor.left() > 0 && (results.len() as i64) < limit {
        match decode_value(lua, &mut cursor, base_depth + results.len()) {
            Ok(value) => results.push(lua, value)?,
            Err(DecodeError::Eof) => return Err(Fail::error("Missing bytes in input.")),
            Err(DecodeError::BadFormat) => return Err(Fail::error("Bad data format in input.")),
            Err(DecodeError::Raise(fail)) => return Err(fail),
        }
    }
    if !decode_all {
        let next = if cursor.left() == 0 {
            -1.0
        } else {
            f64::from((len - cursor.left()) as i32)
        };
        results.insert_first(lua, Value::Number(next))?;
    }
    results.into_results()
}

fn unpack(lua: &Lua, args: Args) -> LibResult<Ret> {
    unpack_full(lua, &args, args.count(), 0, 0)
}

fn unpack_one(lua: &Lua, args: Args) -> LibResult<Ret> {
    let offset = args.opt_integer(2, 0)?;
    unpack_full(lua, &args, 1, 1, offset)
}

fn unpack_limit(lua: &Lua, args: Args) -> LibResult<Ret> {
    let limit = args.check_integer(2)?;
    let offset = args.opt_integer(3, 0)?;
    unpack_full(lua, &args, 1, limit, offset)
}
