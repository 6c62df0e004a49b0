//! `cjson`: lua-cjson 2.1.0 as Redis ships it.
//!
//! Encoding: strings escaped as lua-cjson escapes them (control bytes as
//! `\uXXXX` except `\b \t \n \f \r`, `"`, `\`, `/` and DEL), bytes >= 0x80
//! copied untouched; numbers with `%.14g` (`encode_number_precision`);
//! NaN and infinities refused, or written as `nan`/`inf` or `null`
//! (`encode_invalid_numbers`); `nil` and `cjson.null` as `null`; a table
//! whose keys are all positive integers as an array up to its largest key
//! (holes as `null`) unless excessively sparse (`encode_sparse_array`),
//! any other table, the empty one included, as an object in `next` order.
//!
//! Decoding: lua-cjson's tokenizer: `strtod` numbers (hexadecimal, `inf`,
//! `nan`, a leading `+` or zeros accepted unless `decode_invalid_numbers`
//! is off), a NUL byte ends the input, `null` becomes `cjson.null`.
//!
//! The settings live with the module table (`cjson.new()` makes another
//! with its own) and last as long as the VM, as in Redis. Both directions
//! model the C functions' Lua stack limit (8000 slots), which bounds the
//! nesting together with `encode_max_depth`/`decode_max_depth` (1000).

use super::{
    exact_value, lib_function, next_function, type_name, Args, Fail, LazyTable, LibResult, Ret,
    MAX_C_STACK,
};
use firn_prims::{format_g, strtod};
use mlua::{LightUserData, Lua, MultiValue, Table, Value};
use parking_lot::Mutex;
use std::sync::Arc;

#[derive(Clone, Copy)]
struct Config {
    sparse_convert: i32,
    sparse_ratio: i32,
    sparse_safe: i32,
    encode_max_depth: i32,
    decode_max_depth: i32,
    /// 0 refuse, 1 "nan"/"inf", 2 "null".
    encode_invalid_numbers: i32,
    decode_invalid_numbers: i32,
    encode_keep_buffer: i32,
    encode_number_precision: i32,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            sparse_convert: 0,
            sparse_ratio: 2,
            sparse_safe: 10,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            encode_invalid_numbers: 0,
            decode_invalid_numbers: 1,
            encode_keep_buffer: 1,
            encode_number_precision: 14,
        }
    }
}

type Shared = Arc<Mutex<Config>>;

/// `cjson.null`: a NULL light userdata.
fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

pub(crate) fn module(lua: &Lua) -> mlua::Result<Table> {
    let config: Shared = Arc::new(Mutex::new(Config::default()));
    let table = lua.create_table()?;
    let shared = config.clone();
    table.set(
        "encode",
        lib_function(lua, move |lua, args| encode(lua, args, *shared.lock()))?,
    )?;
    let shared = config.clone();
    table.set(
        "decode",
        lib_function(lua, move |lua, args| decode(lua, args, *shared.lock()))?,
    )?;
    let shared = config.clone();
    table.set(
        "encode_sparse_array",
        lib_function(lua, move |lua, args| {
            let args = arg_init(args, 3)?;
            let mut config = shared.lock();
            let convert = enum_option(lua, &args, 1, &mut config.sparse_convert, None)?;
            let ratio = integer_option(&args, 2, &mut config.sparse_ratio, 0, i32::MAX)?;
            let safe = integer_option(&args, 3, &mut config.sparse_safe, 0, i32::MAX)?;
            Ok(Ret::Values(MultiValue::from_vec(vec![
                convert, ratio, safe,
            ])))
        })?,
    )?;
    for (name, depth) in [
        (
            "encode_max_depth",
            (|c| &mut c.encode_max_depth) as fn(&mut Config) -> &mut i32,
        ),
        ("decode_max_depth", |c| &mut c.decode_max_depth),
    ] {
        let shared = config.clone();
        table.set(
            name,
            lib_function(lua, move |_, args| {
                let args = arg_init(args, 1)?;
                Ret::one(integer_option(
                    &args,
                    1,
                    depth(&mut shared.lock()),
                    1,
                    i32::MAX,
                )?)
            })?,
        )?;
    }
    let shared = config.clone();
    table.set(
        "encode_number_precision",
        lib_function(lua, move |_, args| {
            let args = arg_init(args, 1)?;
            let mut config = shared.lock();
            Ret::one(integer_option(
                &args,
                1,
                &mut config.encode_number_precision,
                1,
                14,
            )?)
        })?,
    )?;
    let shared = config.clone();
    table.set(
        "encode_keep_buffer",
        lib_function(lua, move |lua, args| {
            let args = arg_init(args, 1)?;
            let mut config = shared.lock();
            Ret::one(enum_option(
                lua,
                &args,
                1,
                &mut config.encode_keep_buffer,
                None,
            )?)
        })?,
    )?;
    let shared = config.clone();
    table.set(
        "encode_invalid_numbers",
        lib_function(lua, move |lua, args| {
            let args = arg_init(args, 1)?;
            let mut config = shared.lock();
            let options: &[&str] = &["off", "on", "null"];
            Ret::one(enum_option(
                lua,
                &args,
                1,
                &mut config.encode_invalid_numbers,
                Some(options),
            )?)
        })?,
    )?;
    let shared = config;
    table.set(
        "decode_invalid_numbers",
        lib_function(lua, move |lua, args| {
            let args = arg_init(args, 1)?;
            let mut config = shared.lock();
            Ret::one(enum_option(
                lua,
                &args,
                1,
                &mut config.decode_invalid_numbers,
                None,
            )?)
        })?,
    )?;
    table.set(
        "new",
        lib_function(lua, |lua, _| Ret::one(Value::Table(module(lua)?)))?,
    )?;
    table.set("null", null())?;
    table.set("_NAME", "cjson")?;
    table.set("_VERSION", "2.1.0")?;
    Ok(table)
}

// ---------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------

/// `json_arg_init`: at most `count` arguments.
fn arg_init(args: Args, count: usize) -> LibResult<Args> {
    if args.count() > count {
        return Err(Fail::arg(count as i32 + 1, "found too many arguments"));
    }
    Ok(args)
}

/// `json_integer_option`: sets the value when the argument is not nil
/// (the range error always names argument #1, as in lua-cjson).
fn integer_option(
    args: &Args,
    narg: usize,
    setting: &mut i32,
    min: i32,
    max: i32,
) -> LibResult<Value> {
    if !args.is_none_or_nil(narg) {
        let value = args.check_integer(narg)? as i32;
        if value < min || value > max {
            return Err(Fail::arg(
                1,
                format!("expected integer between {min} and {max}"),
            ));
        }
        *setting = value;
    }
    Ok(Value::Number(f64::from(*setting)))
}

/// `json_enum_option`: a boolean or one of the option names ("off"/"on"
/// when `options` is `None`). Returns a boolean for off/on, else the name.
fn enum_option(
    lua: &Lua,
    args: &Args,
    narg: usize,
    setting: &mut i32,
    options: Option<&[&str]>,
) -> LibResult<Value> {
    let options = options.unwrap_or(&["off", "on"]);
    if !args.is_none_or_nil(narg) {
        if let Some(Value::Boolean(b)) = args.get(narg) {
            *setting = i32::from(b);
        } else {
            let name = args.check_c_string(narg)?;
            let Some(index) = options.iter().position(|o| o.as_bytes() == name) else {
                let mut message = b"invalid option '".to_vec();
                message.extend_from_slice(&name);
                message.push(b'\'');
                return Err(Fail::Arg(narg as i32, message));
            };
            *setting = index as i32;
        }
    }
    if *setting == 0 || *setting == 1 {
        return Ok(Value::Boolean(*setting == 1));
    }
    let name = options.get(*setting as usize).copied().unwrap_or("");
    Ok(Value::String(lua.create_string(name)?))
}

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

fn encode(lua: &Lua, args: Args, config: Config) -> LibResult<Ret> {
    if args.count() != 1 {
        return Err(Fail::arg(1, "expected 1 argument"));
    }
    let value = args.get(1).unwrap_or(Value::Nil);
    let mut encoder = Encoder {
        config,
        out: Vec::new(),
    };
    encoder.value(lua, &value, 1)?;
    Ret::one(Value::String(lua.create_string(encoder.out)?))
}

fn encode_error(value: &Value, reason: &str) -> Fail {
    Fail::error(format!("Cannot serialise {}: {reason}", type_name(value)))
}

struct Encoder {
    config: Config,
    out: Vec<u8>,
}

/// A table being written. Its elements are read by index (array) or, for
/// an object, from the pairs collected while checking for an array, or
/// for large objects step by step with `lua_next` (the key reached so far
/// waiting in a Lua table, slot `2 * level + 2`). Tables nested deeper
/// than `KEEP_TABLES` wait in that Lua table too (slot `2 * level + 1`):
/// mlua handles are limited to about 8000 at a time.
struct Open {
    table: Option<Table>,
    kind: OpenKind,
}

enum OpenKind {
    Array {
        len: i32,
        next_index: i32,
    },
    Object {
        first: bool,
        pairs: Option<std::vec::IntoIter<(Value, Value)>>,
        collected: usize,
    },
}

/// Tables kept as mlua handles while open; deeper ones wait in Lua.
const KEEP_TABLES: usize = 256;
/// Object pairs collected as mlua handles at any one time.
const PAIR_BUDGET: usize = 2048;

impl Open {
    /// Stack slots an element of this table occupies in the C encoder:
    /// the element (array), or the key and the value (object).
    fn slots(&self) -> usize {
        match self.kind {
            OpenKind::Array { .. } => 1,
            OpenKind::Object { .. } => 2,
        }
    }
}

impl Encoder {
    /// Writes `root` without recursion: nesting is bounded by
    /// `encode_max_depth` and the modelled Lua stack, not by Rust's.
    fn value(&mut self, lua: &Lua, root: &Value, base_stack: usize) -> LibResult<()> {
        let mut next: Option<mlua::Function> = None;
        let holder = LazyTable::new(lua);
        let table_slot = |level: usize| 2 * level + 1;
        let key_slot = |level: usize| 2 * level + 2;
        let mut open: Vec<Open> = Vec::new();
        let mut stack = base_stack;
        let mut live_pairs = 0;
        let mut pending = Some(root.clone());
        loop {
            if let Some(value) = pending.take() {
                if let Value::Table(table) = &value {
                    let table = &super::see_through(table)?;
                    let depth = open.len() as i32 + 1;
                    if depth > self.config.encode_max_depth || stack + 3 > MAX_C_STACK {
                        return Err(Fail::error(format!(
                            "Cannot serialise, excessive nesting ({depth})"
                        )));
                    }
                    let budget = PAIR_BUDGET.saturating_sub(live_pairs);
                    let (length, pairs) = self.scan(&value, table, budget)?;
                    let kind = match length {
                        Some(len) if len > 0 => {
                            self.out.push(b'[');
                            OpenKind::Array { len, next_index: 1 }
                        }
                        _ => {
                            self.out.push(b'{');
                            let collected = pairs.as_ref().map_or(0, Vec::len);
                            live_pairs += collected;
                            OpenKind::Object {
                                first: true,
                                pairs: pairs.map(Vec::into_iter),
                                collected,
                            }
                        }
                    };
                    let kept = if open.len() < KEEP_TABLES {
                        Some(table.clone())
                    } else {
                        holder
                            .get()?
                            .raw_set(table_slot(open.len()), table.clone())?;
                        None
                    };
                    let frame = Open { table: kept, kind };
                    stack += frame.slots();
                    open.push(frame);
                } else {
                    self.scalar(&value)?;
                }
            }
            let level = open.len().saturating_sub(1);
            let Some(frame) = open.last_mut() else {
                return Ok(());
            };
            let table: Table = match &frame.table {
                Some(table) => table.clone(),
                None => holder.get()?.raw_get(table_slot(level))?,
            };
            match &mut frame.kind {
                OpenKind::Array { len, next_index } => {
                    if *next_index <= *len {
                        if *next_index > 1 {
                            self.out.push(b',');
                        }
                        let key = Value::Integer(i64::from(*next_index));
                        let element = table.raw_get::<Value>(*next_index)?;
                        pending = Some(exact_value(&table, &key, element)?);
                        *next_index += 1;
                        continue;
                    }
                    self.out.push(b']');
                }
                OpenKind::Object {
                    first,
                    pairs,
                    collected,
                } => {
                    let pair = match pairs {
                        Some(pairs) => pairs.next(),
                        None => {
                            let next = match &next {
                                Some(next) => next,
                                None => next.insert(next_function(lua)?),
                            };
                            let previous: Value = holder.get()?.raw_get(key_slot(level))?;
                            let (key, value): (Value, Value) = next.call((&table, previous))?;
                            holder.get()?.raw_set(key_slot(level), key.clone())?;
                            (key != Value::Nil).then_some((key, value))
                        }
                    };
                    if let Some((key, value)) = pair {
                        if !*first {
                            self.out.push(b',');
                        }
                        *first = false;
                        self.key(&key)?;
                        pending = Some(exact_value(&table, &key, value)?);
                        continue;
                    }
                    live_pairs -= *collected;
                    self.out.push(b'}');
                }
            }
            holder.clear(table_slot(level))?;
            holder.clear(key_slot(level))?;
            if let Some(frame) = open.pop() {
                stack -= frame.slots();
            }
        }
    }

    fn scalar(&mut self, value: &Value) -> LibResult<()> {
        match value {
            Value::String(text) => self.string(&text.as_bytes()),
            Value::Integer(n) => self.number(value, *n as f64)?,
            Value::Number(n) => self.number(value, *n)?,
            Value::Boolean(true) => self.out.extend_from_slice(b"true"),
            Value::Boolean(false) => self.out.extend_from_slice(b"false"),
            Value::Nil => self.out.extend_from_slice(b"null"),
            Value::LightUserData(pointer) if pointer.0.is_null() => {
                self.out.extend_from_slice(b"null")
            }
            _ => return Err(encode_error(value, "type not supported")),
        }
        Ok(())
    }

    fn key(&mut self, key: &Value) -> LibResult<()> {
        match key {
            Value::Integer(n) => {
                self.out.push(b'"');
                self.number(key, *n as f64)?;
                self.out.extend_from_slice(b"\":");
            }
            Value::Number(n) => {
                self.out.push(b'"');
                self.number(key, *n)?;
                self.out.extend_from_slice(b"\":");
            }
            Value::String(text) => {
                self.string(&text.as_bytes());
                self.out.push(b':');
            }
            _ => return Err(encode_error(key, "table key must be a number or string")),
        }
        Ok(())
    }

    fn string(&mut self, bytes: &[u8]) {
        self.out.reserve(bytes.len() + 2);
        self.out.push(b'"');
        for &byte in bytes {
            match byte {
                b'"' => self.out.extend_from_slice(b"\\\""),
                b'\\' => self.out.extend_from_slice(b"\\\\"),
                b'/' => self.out.extend_from_slice(b"\\/"),
                0x08 => self.out.extend_from_slice(b"\\b"),
                b'\t' => self.out.extend_from_slice(b"\\t"),
                b'\n' => self.out.extend_from_slice(b"\\n"),
                0x0c => self.out.extend_from_slice(b"\\f"),
                b'\r' => self.out.extend_from_slice(b"\\r"),
                0x00..=0x1f | 0x7f => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    self.out.extend_from_slice(b"\\u00");
                    self.out.push(HEX[usize::from(byte >> 4)]);
                    self.out.push(HEX[usize::from(byte & 15)]);
                }
                _ => self.out.push(byte),
            }
        }
        self.out.push(b'"');
    }

    fn number(&mut self, value: &Value, n: f64) -> LibResult<()> {
        if n.is_nan() || n.is_infinite() {
            match self.config.encode_invalid_numbers {
                0 => return Err(encode_error(value, "must not be NaN or Inf")),
                1 if n.is_nan() => {
                    self.out.extend_from_slice(b"nan");
                    return Ok(());
                }
                1 => {}
                _ => {
                    self.out.extend_from_slice(b"null");
                    return Ok(());
                }
            }
        }
        let precision = self.config.encode_number_precision.clamp(1, 14) as usize;
        self.out
            .extend_from_slice(format_g(n, precision).as_bytes());
        Ok(())
    }

    /// `lua_array_length`: `Some(largest key)` when every key is a positive
    /// integer, `None` for an object (or an excessively sparse array when
    /// conversion is on). Also returns the pairs, in `next` order, when
    /// there are at most `budget` of them.
    #[allow(clippy::type_complexity)]
    fn scan(
        &self,
        value: &Value,
        table: &Table,
        budget: usize,
    ) -> LibResult<(Option<i32>, Option<Vec<(Value, Value)>>)> {
        let mut max: i32 = 0;
        let mut items: i32 = 0;
        let mut array = true;
        let mut pairs = Some(Vec::new());
        table.for_each(|key: Value, element: Value| {
            if let Some(collected) = &mut pairs {
                if collected.len() < budget {
                    collected.push((key.clone(), element));
                } else {
                    pairs = None;
                }
            }
            if !array {
                return Ok(());
            }
            let k = match key {
                Value::Integer(n) => n as f64,
                Value::Number(n) => n,
                _ => 0.0,
            };
            if k != 0.0 && k.floor() == k && k >= 1.0 {
                if k > f64::from(max) {
                    max = if k < 2_147_483_648.0 {
                        k as i32
                    } else {
                        i32::MIN
                    };
                }
                items = items.wrapping_add(1);
            } else {
                array = false;
            }
            Ok(())
        })?;
        if !array {
            return Ok((None, pairs));
        }
        let config = &self.config;
        if config.sparse_ratio > 0
            && max > items.wrapping_mul(config.sparse_ratio)
            && max > config.sparse_safe
        {
            if config.sparse_convert == 0 {
                return Err(encode_error(value, "excessively sparse array"));
            }
            return Ok((None, pairs));
        }
        Ok((Some(max), if max > 0 { None } else { pairs }))
    }
}

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum TokenKind {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    String,
    Number,
    Boolean,
    Null,
    Colon,
    Comma,
    End,
    Error(&'static str),
}

impl TokenKind {
    /// How lua-cjson names what it found in a parse error.
    fn found(self) -> &'static str {
        match self {
            TokenKind::ObjBegin => "T_OBJ_BEGIN",
            TokenKind::ObjEnd => "T_OBJ_END",
            TokenKind::ArrBegin => "T_ARR_BEGIN",
            TokenKind::ArrEnd => "T_ARR_END",
            TokenKind::String => "T_STRING",
            TokenKind::Number => "T_NUMBER",
            TokenKind::Boolean => "T_BOOLEAN",
            TokenKind::Null => "T_NULL",
            TokenKind::Colon => "T_COLON",
            TokenKind::Comma => "T_COMMA",
            TokenKind::End => "T_END",
            TokenKind::Error(reason) => reason,
        }
    }
}

struct Token {
    kind: TokenKind,
    /// 0-based position of the token (of the fault for an error).
    index: usize,
    number: f64,
    boolean: bool,
    text: Vec<u8>,
}

struct Parser<'a> {
    /// The input as C sees it: everything after a NUL byte is not there.
    data: &'a [u8],
    pos: usize,
    config: Config,
    depth: i32,
}

fn decode(lua: &Lua, args: Args, config: Config) -> LibResult<Ret> {
    if args.count() != 1 {
        return Err(Fail::arg(1, "expected 1 argument"));
    }
    let text = args.check_bytes(1)?;
    if text.len() >= 2 && (text[0] == 0 || text[1] == 0) {
        return Err(Fail::error("JSON parser does not support UTF-16 or UTF-32"));
    }
    let data = match text.iter().position(|&b| b == 0) {
        Some(nul) => &text[..nul],
        None => &text[..],
    };
    let mut parser = Parser {
        data,
        pos: 0,
        config,
        depth: 0,
    };
    let token = parser.next_token();
    let value = parser.value(lua, token, 1)?;
    let token = parser.next_token();
    if token.kind != TokenKind::End {
        return Err(parse_error("the end", &token));
    }
    Ret::one(value)
}

fn parse_error(expected: &str, token: &Token) -> Fail {
    Fail::error(format!(
        "Expected {expected} but found {} at character {}",
        token.kind.found(),
        token.index + 1
    ))
}

fn hex_digit(byte: u8) -> Option<u32> {
    (byte as char).to_digit(16)
}

fn utf8_push(codepoint: u32, out: &mut Vec<u8>) {
    if codepoint <= 0x7f {
        out.push(codepoint as u8);
    } else if codepoint <= 0x7ff {
        out.push((codepoint >> 6) as u8 | 0xc0);
        out.push((codepoint & 0x3f) as u8 | 0x80);
    } else if codepoint <= 0xffff {
        out.push((codepoint >> 12) as u8 | 0xe0);
        out.push(((codepoint >> 6) & 0x3f) as u8 | 0x80);
        out.push((codepoint & 0x3f) as u8 | 0x80);
    } else {
        out.push((codepoint >> 18) as u8 | 0xf0);
        out.push(((codepoint >> 12) & 0x3f) as u8 | 0x80);
        out.push(((codepoint >> 6) & 0x3f) as u8 | 0x80);
        out.push((codepoint & 0x3f) as u8 | 0x80);
    }
}

impl Parser<'_> {
    /// The byte at `at`, 0 past the end (the C string's terminator).
    fn byte(&self, at: usize) -> u8 {
        self.data.get(at).copied().unwrap_or(0)
    }

    fn token(&self, kind: TokenKind, index: usize) -> Token {
        Token {
            kind,
            index,
            number: 0.0,
            boolean: false,
            text: Vec::new(),
        }
    }

    fn error_here(&self, reason: &'static str) -> Token {
        self.token(TokenKind::Error(reason), self.pos)
    }

    fn next_token(&mut self) -> Token {
        while matches!(self.byte(self.pos), b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let start = self.pos;
        let single = match self.byte(start) {
            b'{' => Some(TokenKind::ObjBegin),
            b'}' => Some(TokenKind::ObjEnd),
            b'[' => Some(TokenKind::ArrBegin),
            b']' => Some(TokenKind::ArrEnd),
            b',' => Some(TokenKind::Comma),
            b':' => Some(TokenKind::Colon),
            0 => return self.token(TokenKind::End, start),
            _ => None,
        };
        if let Some(kind) = single {
            self.pos += 1;
            return self.token(kind, start);
        }
        let ch = self.byte(start);
        let rest = &self.data[start..];
        match ch {
            b'"' => self.string_token(),
            b'-' | b'0'..=b'9' => {
                if self.config.decode_invalid_numbers == 0 && self.is_invalid_number() {
                    return self.error_here("invalid number");
                }
                self.number_token()
            }
            b'f' | b'i' | b'I' | b'n' | b'N' | b't' | b'+' => {
                if rest.starts_with(b"true") {
                    self.pos += 4;
                    let mut token = self.token(TokenKind::Boolean, start);
                    token.boolean = true;
                    token
                } else if rest.starts_with(b"false") {
                    self.pos += 5;
                    self.token(TokenKind::Boolean, start)
                } else if rest.starts_with(b"null") {
                    self.pos += 4;
                    self.token(TokenKind::Null, start)
                } else if self.config.decode_invalid_numbers != 0 && self.is_invalid_number() {
                    self.number_token()
                } else {
                    self.error_here("invalid token")
                }
            }
            _ => self.error_here("invalid token"),
        }
    }

    /// `json_is_invalid_number`: forms strtod takes that JSON does not.
    fn is_invalid_number(&self) -> bool {
        let mut at = self.pos;
        match self.byte(at) {
            b'+' => return true,
            b'-' => at += 1,
            _ => {}
        }
        let ch = self.byte(at);
        if ch == b'0' {
            let next = self.byte(at + 1);
            return (next | 0x20) == b'x' || next.is_ascii_digit();
        }
        // A signed char: bytes >= 0x80 compare below '9'.
        if ch <= b'9' || ch >= 0x80 {
            return false;
        }
        let word = &self.data[at.min(self.data.len())..];
        let starts = |w: &[u8]| word.len() >= 3 && word[..3].eq_ignore_ascii_case(w);
        starts(b"inf") || starts(b"nan")
    }

    fn number_token(&mut self) -> Token {
        let read = strtod(&self.data[self.pos..]);
        if read.len == 0 {
            return self.error_here("invalid number");
        }
        let mut token = self.token(TokenKind::Number, self.pos);
        token.number = read.value;
        self.pos += read.len;
        token
    }

    fn string_token(&mut self) -> Token {
        let start = self.pos;
        self.pos += 1;
        let mut text = Vec::new();
        loop {
            let ch = self.byte(self.pos);
            match ch {
                b'"' => break,
                0 => return self.error_here("unexpected end of string"),
                b'\\' => {
                    let translated = match self.byte(self.pos + 1) {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 0x08,
                        b't' => b'\t',
                        b'n' => b'\n',
                        b'f' => 0x0c,
                        b'r' => b'\r',
                        b'u' => {
                            if !self.unicode_escape(&mut text) {
                                return self.error_here("invalid unicode escape code");
                            }
                            continue;
                        }
                        _ => return self.error_here("invalid escape code"),
                    };
                    text.push(translated);
                    self.pos += 2;
                }
                _ => {
                    text.push(ch);
                    self.pos += 1;
                }
            }
        }
        self.pos += 1;
        let mut token = self.token(TokenKind::String, start);
        token.text = text;
        token
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        (0..4).try_fold(0u32, |acc, i| {
            Some(acc << 4 | hex_digit(self.byte(at + i))?)
        })
    }

    /// `\uXXXX` (and a following low surrogate) at the cursor, appended as
    /// UTF-8. False when malformed.
    fn unicode_escape(&mut self, out: &mut Vec<u8>) -> bool {
        let Some(mut codepoint) = self.hex4(self.pos + 2) else {
            return false;
        };
        let mut escape_len = 6;
        if codepoint & 0xf800 == 0xd800 {
            if codepoint & 0x400 != 0 {
                return false;
            }
            if self.byte(self.pos + 6) != b'\\' || self.byte(self.pos + 7) != b'u' {
                return false;
            }
            let Some(low) = self.hex4(self.pos + 8) else {
                return false;
            };
            if low & 0xfc00 != 0xdc00 {
                return false;
            }
            codepoint = (((codepoint & 0x3ff) << 10) | (low & 0x3ff)) + 0x10000;
            escape_len = 12;
        }
        utf8_push(codepoint, out);
        self.pos += escape_len;
        true
    }

    /// `json_decode_descend`: one more level, with `slots` stack slots.
    fn descend(&mut self, stack: usize, slots: usize) -> LibResult<()> {
        self.depth += 1;
        if self.depth <= self.config.decode_max_depth && stack + slots <= MAX_C_STACK {
            return Ok(());
        }
        Err(Fail::error(format!(
            "Found too many nested data structures ({}) at character {}",
            self.depth, self.pos
        )))
    }

    /// `json_process_value` for `token` and everything nested in it,
    /// without recursion; `base_stack` is the Lua stack slots in use.
    fn value(&mut self, lua: &Lua, mut token: Token, base_stack: usize) -> LibResult<Value> {
        // Open tables, innermost last, with the key awaiting its value.
        // Below `KEEP_TABLES` levels they are mlua handles; deeper ones
        // wait in a Lua table (slots `2 * level + 1`, the key at
        // `2 * level + 2`), as mlua handles are limited.
        struct Level {
            object: bool,
            table: Option<Table>,
            key: Option<mlua::String>,
        }
        let holder = LazyTable::new(lua);
        let table_slot = |level: usize| 2 * level + 1;
        let key_slot = |level: usize| 2 * level + 2;
        let mut open: Vec<Level> = Vec::new();
        let mut stack = base_stack;
        let push =
            |open: &mut Vec<Level>, object: bool, table: Table, key: Option<mlua::String>| {
                let level = open.len();
                if level < KEEP_TABLES {
                    open.push(Level {
                        object,
                        table: Some(table),
                        key,
                    });
                    return Ok(());
                }
                holder.get()?.raw_set(table_slot(level), table)?;
                holder.get()?.raw_set(key_slot(level), key)?;
                open.push(Level {
                    object,
                    table: None,
                    key: None,
                });
                Ok::<(), mlua::Error>(())
            };
        loop {
            let mut value = match token.kind {
                TokenKind::String => Value::String(lua.create_string(&token.text)?),
                TokenKind::Number => Value::Number(token.number),
                TokenKind::Boolean => Value::Boolean(token.boolean),
                TokenKind::Null => null(),
                TokenKind::ObjBegin => {
                    self.descend(stack, 3)?;
                    let table = lua.create_table()?;
                    token = self.next_token();
                    if token.kind == TokenKind::ObjEnd {
                        self.depth -= 1;
                        Value::Table(table)
                    } else {
                        let key = self.object_key(lua, &token)?;
                        push(&mut open, true, table, Some(key))?;
                        stack += 2;
                        token = self.next_token();
                        continue;
                    }
                }
                TokenKind::ArrBegin => {
                    self.descend(stack, 2)?;
                    let table = lua.create_table()?;
                    token = self.next_token();
                    if token.kind == TokenKind::ArrEnd {
                        self.depth -= 1;
                        Value::Table(table)
                    } else {
                        push(&mut open, false, table, None)?;
                        stack += 1;
                        continue;
                    }
                }
                _ => return Err(parse_error("value", &token)),
            };
            // Store the value in the innermost open table, closing those
            // that end here.
            loop {
                let level = open.len().saturating_sub(1);
                let Some(current) = open.last_mut() else {
                    return Ok(value);
                };
                let in_object = current.object;
                let table: Table = match &current.table {
                    Some(table) => table.clone(),
                    None => holder.get()?.raw_get(table_slot(level))?,
                };
                if in_object {
                    let key: mlua::String = match current.key.take() {
                        Some(key) => key,
                        None => holder.get()?.raw_get(key_slot(level))?,
                    };
                    table.raw_set(key, value)?;
                } else {
                    table.raw_set(table.raw_len() + 1, value)?;
                }
                token = self.next_token();
                let (end, expected) = if in_object {
                    (TokenKind::ObjEnd, "comma or object end")
                } else {
                    (TokenKind::ArrEnd, "comma or array end")
                };
                if token.kind == end {
                    self.depth -= 1;
                    open.pop();
                    if level >= KEEP_TABLES {
                        holder.clear(table_slot(level))?;
                        holder.clear(key_slot(level))?;
                    }
                    stack -= if in_object { 2 } else { 1 };
                    value = Value::Table(table);
                    continue;
                }
                if token.kind != TokenKind::Comma {
                    return Err(parse_error(expected, &token));
                }
                token = self.next_token();
                if in_object {
                    let next_key = self.object_key(lua, &token)?;
                    if level < KEEP_TABLES {
                        if let Some(current) = open.last_mut() {
                            current.key = Some(next_key);
                        }
                    } else {
                        holder.get()?.raw_set(key_slot(level), next_key)?;
                    }
                    token = self.next_token();
                }
                break;
            }
        }
    }

    /// A key and its colon: `token` must be a string, the next a colon.
    fn object_key(&mut self, lua: &Lua, token: &Token) -> LibResult<mlua::String> {
        if token.kind != TokenKind::String {
            return Err(parse_error("object key string", token));
        }
        let key = lua.create_string(&token.text)?;
        let colon = self.next_token();
        if colon.kind != TokenKind::Colon {
            return Err(parse_error("colon", &colon));
        }
        Ok(key)
    }
}
