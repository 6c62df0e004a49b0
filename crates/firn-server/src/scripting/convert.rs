//! Redis 7.0's conversions between replies and Lua values, both ways
//! (script_lua.c `redisProtocolToLuaType*` and `luaReplyToRedisReply`).
//!
//! A command's reply reaches Lua in the protocol the script chose with
//! `redis.setresp` (2 by default): in RESP2, RESP3-only types are first
//! downgraded as a RESP2 client would see them (maps flatten, doubles
//! become strings, nulls become `false`). Status replies become `{ok=...}`
//! tables, errors `{err=...}` tables.

use bytes::Bytes;
use firn_resp::Reply;
use mlua::{Lua, Table, Value};

/// Nesting beyond which a reply is refused instead of recursing further.
const MAX_DEPTH: usize = 1000;

/// Redis's `luaPushErrorBuff` text: "-CODE msg" keeps its code, a text
/// without one gets "ERR"; trailing newlines are trimmed.
pub fn error_text(raw: &[u8]) -> Vec<u8> {
    let (code, msg): (&[u8], &[u8]) = match raw.strip_prefix(b"-") {
        Some(rest) => match rest.iter().position(|&b| b == b' ') {
            Some(space) => (&rest[..space], &rest[space + 1..]),
            None => (b"ERR", rest),
        },
        None => (b"ERR", raw),
    };
    let mut end = msg.len();
    while end > 0 && matches!(msg[end - 1], b'\r' | b'\n') {
        end -= 1;
    }
    let mut start = 0;
    while start < end && matches!(msg[start], b'\r' | b'\n') {
        start += 1;
    }
    let mut out = code.to_vec();
    out.push(b' ');
    out.extend_from_slice(&msg[start..end]);
    out
}

/// `{err = text}` as `luaPushError` builds it from a plain message.
pub fn error_table(lua: &Lua, message: &str) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    table.raw_set("err", lua.create_string(error_text(message.as_bytes()))?)?;
    Ok(table)
}

/// A command's reply as the script sees it.
pub fn reply_to_lua(lua: &Lua, reply: &Reply, resp3: bool) -> mlua::Result<Value> {
    reply_to_lua_at(lua, reply, resp3, 0)
}

fn string(lua: &Lua, bytes: &[u8]) -> mlua::Result<Value> {
    Ok(Value::String(lua.create_string(bytes)?))
}

fn single_field(lua: &Lua, field: &str, value: Value) -> mlua::Result<Value> {
    let table = lua.create_table()?;
    table.raw_set(field, value)?;
    Ok(Value::Table(table))
}

fn double_text(value: f64) -> String {
    firn_resp::format_double(value)
}

fn reply_to_lua_at(lua: &Lua, reply: &Reply, resp3: bool, depth: usize) -> mlua::Result<Value> {
    if depth > MAX_DEPTH {
        return Err(mlua::Error::runtime("reached lua stack limit"));
    }
    Ok(match reply {
        Reply::Simple(text) => single_field(lua, "ok", string(lua, text)?)?,
        Reply::Error(text) => {
            let mut raw = b"-".to_vec();
            raw.extend_from_slice(text);
            let table = lua.create_table()?;
            table.raw_set("err", lua.create_string(error_text(&raw))?)?;
            // As Redis marks it: the error was counted when the command ran.
            table.raw_set("ignore_error_stats_update", true)?;
            Value::Table(table)
        }
        Reply::Integer(n) => Value::Number(*n as f64),
        Reply::Bulk(body) => string(lua, body)?,
        Reply::Null | Reply::NullArray => {
            if resp3 {
                Value::Nil
            } else {
                Value::Boolean(false)
            }
        }
        Reply::Array(items) | Reply::Push(items) => array(lua, items, resp3, depth)?,
        Reply::Set(items) if !resp3 => array(lua, items, resp3, depth)?,
        Reply::Set(items) => {
            let set = lua.create_table()?;
            for item in items {
                set.raw_set(reply_to_lua_at(lua, item, resp3, depth + 1)?, true)?;
            }
            single_field(lua, "set", Value::Table(set))?
        }
        Reply::Map(pairs) if !resp3 => {
            let table = lua.create_table_with_capacity(pairs.len() * 2, 0)?;
            let mut i = 1;
            for (key, value) in pairs {
                table.raw_set(i, reply_to_lua_at(lua, key, resp3, depth + 1)?)?;
                table.raw_set(i + 1, reply_to_lua_at(lua, value, resp3, depth + 1)?)?;
                i += 2;
            }
            Value::Table(table)
        }
        Reply::Map(pairs) => {
            let map = lua.create_table()?;
            for (key, value) in pairs {
                map.raw_set(
                    reply_to_lua_at(lua, key, resp3, depth + 1)?,
                    reply_to_lua_at(lua, value, resp3, depth + 1)?,
                )?;
            }
            single_field(lua, "map", Value::Table(map))?
        }
        Reply::Double(value) if !resp3 => string(lua, double_text(*value).as_bytes())?,
        Reply::Double(value) => single_field(lua, "double", Value::Number(*value))?,
        Reply::DoubleText(text) if !resp3 => string(lua, text)?,
        Reply::DoubleText(text) => {
            let value = std::str::from_utf8(text)
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
                .unwrap_or(0.0);
            single_field(lua, "double", Value::Number(value))?
        }
        Reply::Boolean(b) if !resp3 => Value::Number(if *b { 1.0 } else { 0.0 }),
        Reply::Boolean(b) => Value::Boolean(*b),
        Reply::BigNumber(text) if !resp3 => string(lua, text)?,
        Reply::BigNumber(text) => single_field(lua, "big_number", string(lua, text)?)?,
        // Not a command's reply a script can get (DEBUG is denied there):
        // the reply proper, without what precedes it.
        Reply::Attribute(_) => Value::Nil,
        Reply::Sequence(parts) => match parts.last() {
            Some(last) => reply_to_lua_at(lua, last, resp3, depth + 1)?,
            None => Value::Nil,
        },
        Reply::Verbatim { text, .. } if !resp3 => string(lua, text)?,
        Reply::Verbatim { format, text } => {
            let inner = lua.create_table()?;
            inner.raw_set("string", lua.create_string(text)?)?;
            inner.raw_set("format", lua.create_string(format)?)?;
            single_field(lua, "verbatim_string", Value::Table(inner))?
        }
    })
}

fn array(lua: &Lua, items: &[Reply], resp3: bool, depth: usize) -> mlua::Result<Value> {
    let table = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, item) in items.iter().enumerate() {
        table.raw_set(i + 1, reply_to_lua_at(lua, item, resp3, depth + 1)?)?;
    }
    Ok(Value::Table(table))
}

/// What a script's return value becomes; `resp` is the protocol the script
/// chose with `redis.setresp` (it decides what booleans mean).
pub fn lua_to_reply(value: &Value, resp3: bool) -> Reply {
    lua_to_reply_at(value, resp3, 0)
}

fn text_of(value: &Value) -> Option<Bytes> {
    match value {
        Value::String(s) => Some(Bytes::copy_from_slice(&s.as_bytes())),
        _ => None,
    }
}

/// Status and big-number texts may not carry line breaks.
fn one_line(text: Bytes) -> Bytes {
    if !text.iter().any(|&b| b == b'\r' || b == b'\n') {
        return text;
    }
    text.iter()
        .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b })
        .collect::<Vec<u8>>()
        .into()
}

fn lua_to_reply_at(value: &Value, resp3: bool, depth: usize) -> Reply {
    if depth > MAX_DEPTH {
        return Reply::Error(Bytes::from_static(b"ERR reached lua stack limit"));
    }
    match value {
        Value::String(s) => Reply::Bulk(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Boolean(b) if !resp3 => {
            if *b {
                Reply::Integer(1)
            } else {
                Reply::Null
            }
        }
        Value::Boolean(b) => Reply::Boolean(*b),
        Value::Integer(n) => Reply::Integer(*n),
        Value::Number(n) => Reply::Integer(number_to_i64(*n)),
        Value::Table(table) => table_to_reply(table, resp3, depth),
        _ => Reply::Null,
    }
}

/// C's `(long long)` cast of a Lua number, saturating where C is undefined.
pub fn number_to_i64(n: f64) -> i64 {
    if n.is_nan() {
        i64::MIN
    } else {
        n as i64
    }
}

fn table_to_reply(table: &Table, resp3: bool, depth: usize) -> Reply {
    if let Some(err) = text_of(&table.raw_get("err").unwrap_or(Value::Nil)) {
        return Reply::Error(err);
    }
    if let Some(ok) = text_of(&table.raw_get("ok").unwrap_or(Value::Nil)) {
        return Reply::Simple(one_line(ok));
    }
    match table.raw_get("double").unwrap_or(Value::Nil) {
        Value::Number(n) => return Reply::Double(n),
        Value::Integer(n) => return Reply::Double(n as f64),
        _ => {}
    }
    if let Some(big) = text_of(&table.raw_get("big_number").unwrap_or(Value::Nil)) {
        return Reply::BigNumber(one_line(big));
    }
    if let Ok(Value::Table(map)) = table.raw_get("map") {
        let mut pairs = Vec::new();
        for (key, value) in map.pairs::<Value, Value>().flatten() {
            pairs.push((
                lua_to_reply_at(&key, resp3, depth + 1),
                lua_to_reply_at(&value, resp3, depth + 1),
            ));
        }
        return Reply::Map(pairs);
    }
    if let Ok(Value::Table(set)) = table.raw_get("set") {
        let mut items = Vec::new();
        for (key, _) in set.pairs::<Value, Value>().flatten() {
            items.push(lua_to_reply_at(&key, resp3, depth + 1));
        }
        return Reply::Set(items);
    }
    let mut items = Vec::new();
    let mut i = 1;
    loop {
        match table.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(item) => items.push(lua_to_reply_at(&item, resp3, depth + 1)),
        }
        i += 1;
    }
    Reply::Array(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_texts_keep_or_add_their_code() {
        assert_eq!(error_text(b"-WRONGTYPE bad kind"), b"WRONGTYPE bad kind");
        assert_eq!(error_text(b"-x"), b"ERR x");
        assert_eq!(error_text(b"my error\r\n"), b"ERR my error");
    }

    #[test]
    fn replies_round_trip_through_lua() {
        let lua = Lua::new();
        let reply = Reply::Array(vec![
            Reply::Integer(3),
            Reply::Bulk(Bytes::from_static(b"x")),
            Reply::Simple(Bytes::from_static(b"OK")),
        ]);
        let value = reply_to_lua(&lua, &reply, false).unwrap();
        assert_eq!(lua_to_reply(&value, false), reply);
        let null = reply_to_lua(&lua, &Reply::Null, false).unwrap();
        assert_eq!(null, Value::Boolean(false));
        assert_eq!(lua_to_reply(&null, false), Reply::Null);
        let map = Reply::Map(vec![(
            Reply::Bulk(Bytes::from_static(b"a")),
            Reply::Integer(1),
        )]);
        let value = reply_to_lua(&lua, &map, true).unwrap();
        assert_eq!(lua_to_reply(&value, true), map);
        let value = reply_to_lua(&lua, &map, false).unwrap();
        assert_eq!(
            lua_to_reply(&value, false),
            Reply::Array(vec![
                Reply::Bulk(Bytes::from_static(b"a")),
                Reply::Integer(1)
            ])
        );
    }
}
