//! Function libraries (FUNCTION LOAD and friends, FCALL) on the script
//! thread.
//!
//! A library's code runs once at load time, in an environment that offers
//! only `redis.register_function`, `redis.log` and Redis's constants (any
//! other name fails as an undeclared global, as in Redis 7.0.15); the
//! callbacks it registers then run with the full sandbox. Each library
//! gets its own environment table whose view is switched from the loading
//! one to the scripts' globals once the load succeeded.
//!
//! Libraries are durable: each is a record of the System column family
//! (`lib:<name>` → code) written through a transaction like any command's
//! writes, with `FUNCTION LOAD REPLACE <code>` / `FUNCTION DELETE <name>` /
//! `FUNCTION FLUSH` as its replay form, so it reaches the change stream.
//! The VM loads them again when it starts.

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::{ReadMode, Ticket};
use mlua::{Function, Lua, MultiValue, Table, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::flags::ScriptFlags;
use super::libraries::{FunctionDef, Libraries, Library};
use super::request::RestorePolicy;
use super::vm::{raise, Vm};
use crate::server::Server;

/// Redis's error for `redis.register_function` called after the load.
const NOT_LOADING: &str = "ERR redis.register_function can only be called on FUNCTION LOAD command";

/// Record key prefix of a library.
const LIBRARY_RECORD: &[u8] = b"lib:";
/// How long a library's code may run while it loads.
const LOAD_TIMEOUT_MS: u64 = 500;

fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_')
}

const BAD_NAME: &str = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

/// The library name and the length of the metadata line, checked in
/// Redis's order: the metadata line (split as Redis splits it, quotes
/// included), its values, the name, then the engine.
fn metadata(code: &[u8]) -> Result<(String, usize), String> {
    if !code.starts_with(b"#!") {
        return Err("Missing library metadata".into());
    }
    let Some(end) = memchr::memchr(b'\n', code) else {
        return Err("Invalid library metadata".into());
    };
    let parts = match firn_prims::split_args(&code[..end]) {
        Some(parts) if !parts.is_empty() => parts,
        _ => return Err("Invalid library metadata".into()),
    };
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let engine = text(parts[0].get(2..).unwrap_or_default());
    let mut name = None;
    for part in &parts[1..] {
        let is_name = part.len() >= 5 && part[..5].eq_ignore_ascii_case(b"name=");
        if !is_name {
            return Err(format!("Invalid metadata value given: {}", text(part)));
        }
        if name.is_some() {
            return Err("Invalid metadata value, name argument was given multiple times".into());
        }
        name = Some(text(&part[5..]));
    }
    let Some(name) = name else {
        return Err("Library name was not given".into());
    };
    if !valid_name(name.as_bytes()) {
        return Err(BAD_NAME.into());
    }
    if !engine.eq_ignore_ascii_case("lua") {
        return Err(format!("Engine '{engine}' not found"));
    }
    Ok((name, end))
}

/// One `redis.register_function` call's result.
struct Registration {
    name: String,
    def: FunctionDef,
}

fn text_arg(lua: &Lua, value: &Value) -> mlua::Result<Option<Bytes>> {
    Ok(match value {
        Value::String(_) | Value::Integer(_) | Value::Number(_) => lua
            .coerce_string(value.clone())?
            .map(|s| Bytes::copy_from_slice(&s.as_bytes())),
        _ => None,
    })
}

fn register(
    lua: &Lua,
    registered: &RefCell<Option<Vec<Registration>>>,
    args: MultiValue,
) -> mlua::Result<()> {
    let mut name: Option<Bytes> = None;
    let mut callback: Option<Function> = None;
    let mut flags = ScriptFlags::default();
    let mut description = None;
    match args.len() {
        1 => {
            let Some(Value::Table(table)) = args.front() else {
                return Err(raise("ERR calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."));
            };
            for pair in table.clone().pairs::<Value, Value>() {
                let (key, value) = pair?;
                let key = match &key {
                    Value::String(s) => s.to_string_lossy(),
                    _ => String::new(),
                };
                match key.as_str() {
                    "function_name" => match text_arg(lua, &value)? {
                        Some(text) => name = Some(text),
                        None => return Err(raise("ERR function_name argument given to redis.register_function must be a string")),
                    },
                    "callback" => match value {
                        Value::Function(f) => callback = Some(f),
                        _ => return Err(raise("ERR callback argument given to redis.register_function must be a function")),
                    },
                    "description" => match text_arg(lua, &value)? {
                        Some(text) => description = Some(text),
                        None => return Err(raise("ERR description argument given to redis.register_function must be a string")),
                    },
                    "flags" => {
                        let Value::Table(list) = value else {
                            return Err(raise("ERR flags argument to redis.register_function must be a table representing function flags"));
                        };
                        for flag in list.sequence_values::<Value>() {
                            let known = match flag? {
                                Value::String(s) => flags.set(&s.to_string_lossy()),
                                _ => false,
                            };
                            if !known {
                                return Err(raise("ERR unknown flag given"));
                            }
                        }
                    }
                    _ => {
                        return Err(raise(
                            "ERR unknown argument given to redis.register_function",
                        ))
                    }
                }
            }
        }
        2 => {
            let mut it = args.iter();
            match it.next().map(|v| text_arg(lua, v)).transpose()?.flatten() {
                Some(text) => name = Some(text),
                None => {
                    return Err(raise(
                        "ERR first argument to redis.register_function must be a string",
                    ))
                }
            }
            match it.next() {
                Some(Value::Function(f)) => callback = Some(f.clone()),
                _ => {
                    return Err(raise(
                        "ERR second argument to redis.register_function must be a function",
                    ))
                }
            }
        }
        _ => {
            return Err(raise(
                "ERR wrong number of arguments to redis.register_function",
            ))
        }
    }
    let Some(name) = name else {
        return Err(raise(
            "ERR redis.register_function must get a function name argument",
        ));
    };
    let Some(func) = callback else {
        return Err(raise(
            "ERR redis.register_function must get a callback argument",
        ));
    };
    // Redis 7.0.15 reports a bad function name with the library text.
    if !valid_name(&name) {
        return Err(raise(&format!("ERR {BAD_NAME}")));
    }
    let name = String::from_utf8_lossy(&name).into_owned();
    let mut registered = registered.borrow_mut();
    let Some(registered) = registered.as_mut() else {
        return Err(raise(NOT_LOADING));
    };
    if registered.iter().any(|r| r.name == name) {
        return Err(raise("ERR Function already exists in the library"));
    }
    registered.push(Registration {
        name,
        def: FunctionDef {
            func,
            flags,
            description,
        },
    });
    Ok(())
}

/// The table names resolve in while a library loads: `redis` with
/// `register_function`, `log` and the constants; nothing else.
fn load_view(lua: &Lua, vm: &Vm, register_fn: Function) -> mlua::Result<Table> {
    let strict = lua.create_table()?;
    strict.raw_set("__index", vm.missing_global.clone())?;
    let real_redis = &vm.redis_real;
    let redis = lua.create_table()?;
    for key in [
        "log",
        "LOG_DEBUG",
        "LOG_VERBOSE",
        "LOG_NOTICE",
        "LOG_WARNING",
        "REDIS_VERSION",
        "REDIS_VERSION_NUM",
    ] {
        redis.raw_set(key, real_redis.raw_get::<Value>(key)?)?;
    }
    redis.raw_set("register_function", register_fn)?;
    redis.set_metatable(Some(strict.clone()));
    // Read-only as in Redis: a library keeping it in an upvalue cannot
    // plant `redis` or `math` in it for a later load.
    let shown: Table = vm.error_meta.call(())?;
    let redis: Table = vm.make_readonly.call((redis, shown))?;
    let view = lua.create_table()?;
    view.raw_set("redis", redis)?;
    view.set_metatable(Some(strict));
    Ok(view)
}

/// FUNCTION LOAD [REPLACE]: compiles, runs and installs a library, and
/// commits its record. Returns the reply and the tickets to wait for.
pub fn load(
    vm: &mut Vm,
    server: &Arc<Server>,
    code: &Bytes,
    replace: bool,
    durable: bool,
) -> (Reply, Vec<Ticket>) {
    let shared = server.scripting.shared.clone();
    let (name, meta_len) = match metadata(code) {
        Ok(found) => found,
        Err(e) => return (Reply::error(format!("ERR {e}")), Vec::new()),
    };
    if !replace && vm.libraries.by_name.contains_key(&name) {
        return (
            Reply::error(format!("ERR Library '{name}' already exists")),
            Vec::new(),
        );
    }
    let chunk = match vm
        .lua
        .load(&code[meta_len..])
        .set_name("@user_function")
        .into_function()
    {
        Ok(chunk) => chunk,
        Err(mlua::Error::SyntaxError { message, .. }) => {
            return (
                Reply::error(format!("ERR Error compiling function: {message}")),
                Vec::new(),
            )
        }
        Err(e) => {
            return (
                Reply::error(format!("ERR Error compiling function: {e}")),
                Vec::new(),
            )
        }
    };
    // The library may keep `redis.register_function`; once the load is
    // over (`None`), calling it fails with Redis's error.
    let registered: Rc<RefCell<Option<Vec<Registration>>>> =
        Rc::new(RefCell::new(Some(Vec::new())));
    let loaded: mlua::Result<Result<Table, String>> = (|| {
        let registering = registered.clone();
        let register_fn = vm
            .lua
            .create_function(move |lua, args: MultiValue| register(lua, &registering, args))?;
        let view = load_view(&vm.lua, vm, register_fn)?;
        let env = vm.lua.create_table()?;
        let env_meta = vm.lua.create_table()?;
        env_meta.raw_set("__index", view)?;
        env_meta.raw_set("__newindex", vm.readonly_error.clone())?;
        env.set_metatable(Some(env_meta.clone()));
        chunk.set_environment(env.clone())?;
        shared.start_load(LOAD_TIMEOUT_MS);
        let (ok, value): (bool, Value) = vm.runner.call(chunk.clone())?;
        shared.finish();
        if !ok {
            let text = match &value {
                Value::Table(t) => match t.raw_get::<Value>("err")? {
                    Value::String(s) => s.to_string_lossy(),
                    _ => "ERR unknown error".into(),
                },
                Value::String(s) => s.to_string_lossy(),
                _ => "ERR unknown error".into(),
            };
            return Ok(Err(text));
        }
        // From now on the library's functions see the scripts' globals.
        env_meta.raw_set("__index", vm.env.clone())?;
        Ok(Ok(env))
    })();
    shared.finish();
    let registered = registered.borrow_mut().take().unwrap_or_default();
    match loaded {
        Ok(Ok(_)) => {}
        Ok(Err(text)) => {
            return (
                Reply::error(format!("ERR Error registering functions: {text}")),
                Vec::new(),
            )
        }
        Err(e) => {
            return (
                Reply::error(format!("ERR Error registering functions: {e}")),
                Vec::new(),
            )
        }
    }
    if registered.is_empty() {
        return (Reply::error("ERR No functions registered"), Vec::new());
    }
    for r in &registered {
        if let Some(owner) = vm.libraries.index.get(&r.name.to_ascii_lowercase()) {
            if *owner != name {
                return (
                    Reply::error(format!("ERR Function {} already exists", r.name)),
                    Vec::new(),
                );
            }
        }
    }
    vm.libraries.remove(&name);
    let mut functions = BTreeMap::new();
    for r in registered {
        vm.libraries
            .index
            .insert(r.name.to_ascii_lowercase(), name.clone());
        functions.insert(r.name, r.def);
    }
    vm.libraries.by_name.insert(
        name.clone(),
        Library {
            code: code.clone(),
            functions,
        },
    );
    vm.libraries.publish(&shared);
    if !durable {
        return (Reply::bulk(Bytes::from(name)), Vec::new());
    }
    let mut key = LIBRARY_RECORD.to_vec();
    key.extend_from_slice(name.as_bytes());
    let mut txn = server.engine.txn(ReadMode::MemoryOnly);
    txn.put_server_record(&key, code.clone());
    txn.set_replay(vec![vec![
        Bytes::from_static(b"FUNCTION"),
        Bytes::from_static(b"LOAD"),
        Bytes::from_static(b"REPLACE"),
        code.clone(),
    ]]);
    commit_change(server, txn, Reply::bulk(Bytes::from(name)))
}

/// Commits one change of the libraries: Redis counts each FUNCTION LOAD,
/// DELETE, FLUSH and RESTORE as one change (INFO
/// rdb_changes_since_last_save), once it is committed.
fn commit_change(
    server: &crate::server::Server,
    mut txn: firn_storage::Txn<'_>,
    reply: Reply,
) -> (Reply, Vec<Ticket>) {
    txn.add_dirty(1);
    let dirty = txn.dirty();
    match txn.commit() {
        Ok(tickets) => {
            server.stats.dirty.fetch_add(dirty, Ordering::Relaxed);
            (reply, tickets)
        }
        Err(e) => (crate::errors::CmdError::Storage(e).into_reply(), Vec::new()),
    }
}

/// FUNCTION DELETE.
pub fn delete(vm: &mut Vm, server: &Arc<Server>, name: &[u8]) -> (Reply, Vec<Ticket>) {
    let name = String::from_utf8_lossy(name).into_owned();
    if !vm.libraries.remove(&name) {
        return (Reply::error("ERR Library not found"), Vec::new());
    }
    vm.libraries.publish(&server.scripting.shared);
    let mut key = LIBRARY_RECORD.to_vec();
    key.extend_from_slice(name.as_bytes());
    let mut txn = server.engine.txn(ReadMode::MemoryOnly);
    txn.delete_server_record(&key);
    txn.set_replay(vec![vec![
        Bytes::from_static(b"FUNCTION"),
        Bytes::from_static(b"DELETE"),
        Bytes::from(name),
    ]]);
    commit_change(server, txn, Reply::ok())
}

/// FUNCTION FLUSH.
pub fn flush(vm: &mut Vm, server: &Arc<Server>) -> (Reply, Vec<Ticket>) {
    let names: Vec<String> = vm.libraries.by_name.keys().cloned().collect();
    vm.libraries = Libraries::default();
    vm.libraries.publish(&server.scripting.shared);
    let mut txn = server.engine.txn(ReadMode::MemoryOnly);
    for name in names {
        let mut key = LIBRARY_RECORD.to_vec();
        key.extend_from_slice(name.as_bytes());
        txn.delete_server_record(&key);
    }
    txn.set_replay(vec![vec![
        Bytes::from_static(b"FUNCTION"),
        Bytes::from_static(b"FLUSH"),
    ]]);
    commit_change(server, txn, Reply::ok())
}

/// Loads the libraries stored durably (when the VM starts).
pub fn restore_stored(vm: &mut Vm, server: &Arc<Server>) {
    let records = match server.engine.server_records(LIBRARY_RECORD) {
        Ok(records) => records,
        Err(e) => {
            tracing::error!("cannot read the stored function libraries: {e}");
            return;
        }
    };
    for (key, code) in records {
        let (reply, _) = load(vm, server, &Bytes::from(code), true, false);
        if let Reply::Error(text) = reply {
            tracing::error!(
                library = %String::from_utf8_lossy(&key),
                "a stored function library does not load: {}",
                String::from_utf8_lossy(&text)
            );
        }
    }
}

/// Replaces the VM's libraries with those stored durably, after the
/// dataset was replaced under it (a replica's full sync).
pub fn reload_stored(vm: &mut Vm, server: &Arc<Server>) {
    vm.libraries = Libraries::default();
    restore_stored(vm, server);
    vm.libraries.publish(&server.scripting.shared);
}

/// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
pub fn list(vm: &Vm, pattern: Option<&[u8]>, with_code: bool) -> Reply {
    let mut out = Vec::new();
    for (name, library) in &vm.libraries.by_name {
        if let Some(pattern) = pattern {
            if !firn_prims::glob::glob_match(pattern, name.as_bytes(), true) {
                continue;
            }
        }
        let functions = library
            .functions
            .iter()
            .map(|(fname, def)| {
                Reply::Map(vec![
                    (Reply::bulk("name"), Reply::bulk(Bytes::from(fname.clone()))),
                    (
                        Reply::bulk("description"),
                        def.description.clone().map_or(Reply::Null, Reply::Bulk),
                    ),
                    (
                        Reply::bulk("flags"),
                        Reply::Set(
                            def.flags
                                .names()
                                .into_iter()
                                .map(|f| Reply::Simple(Bytes::from_static(f.as_bytes())))
                                .collect(),
                        ),
                    ),
                ])
            })
            .collect();
        let mut entry = vec![
            (
                Reply::bulk("library_name"),
                Reply::bulk(Bytes::from(name.clone())),
            ),
            (Reply::bulk("engine"), Reply::bulk("LUA")),
            (Reply::bulk("functions"), Reply::Array(functions)),
        ];
        if with_code {
            entry.push((
                Reply::bulk("library_code"),
                Reply::Bulk(library.code.clone()),
            ));
        }
        out.push(Reply::Map(entry));
    }
    Reply::Array(out)
}

/// FUNCTION DUMP: every library's code, in Redis's payload format.
pub fn dump(vm: &Vm) -> Reply {
    let codes: Vec<Bytes> = vm
        .libraries
        .by_name
        .values()
        .map(|l| l.code.clone())
        .collect();
    Reply::Bulk(crate::rdb::function_payload::encode(&codes).into())
}

/// FUNCTION RESTORE: loads the payload's libraries aside, then joins them
/// to the loaded ones under `policy`; any error leaves everything as it
/// was.
pub fn restore(
    vm: &mut Vm,
    server: &Arc<Server>,
    payload: &Bytes,
    policy: RestorePolicy,
) -> (Reply, Vec<Ticket>) {
    let codes = match crate::rdb::function_payload::decode(payload) {
        Ok(codes) => codes,
        Err(e) => return (Reply::error(e.reply_text()), Vec::new()),
    };
    let old = std::mem::take(&mut vm.libraries);
    for code in &codes {
        let (reply, _) = load(vm, server, code, false, false);
        if let Reply::Error(_) = reply {
            vm.libraries = old;
            vm.libraries.publish(&server.scripting.shared);
            return (reply, Vec::new());
        }
    }
    let incoming = std::mem::replace(&mut vm.libraries, old);
    let mut removed: Vec<String> = Vec::new();
    if policy == RestorePolicy::Flush {
        removed = vm.libraries.by_name.keys().cloned().collect();
    } else {
        for name in incoming.by_name.keys() {
            if vm.libraries.by_name.contains_key(name) {
                if policy == RestorePolicy::Append {
                    vm.libraries.publish(&server.scripting.shared);
                    return (
                        Reply::error(format!("ERR Library {name} already exists")),
                        Vec::new(),
                    );
                }
                removed.push(name.clone());
            }
        }
        for (function, library) in &incoming.index {
            if let Some(owner) = vm.libraries.index.get(function) {
                if !removed.contains(owner) {
                    let shown = incoming
                        .by_name
                        .get(library)
                        .and_then(|l| {
                            l.functions
                                .keys()
                                .find(|f| f.eq_ignore_ascii_case(function))
                        })
                        .cloned()
                        .unwrap_or_else(|| function.clone());
                    vm.libraries.publish(&server.scripting.shared);
                    return (
                        Reply::error(format!("ERR Function {shown} already exists")),
                        Vec::new(),
                    );
                }
            }
        }
    }
    let mut txn = server.engine.txn(ReadMode::MemoryOnly);
    for name in &removed {
        vm.libraries.remove(name);
        let mut key = LIBRARY_RECORD.to_vec();
        key.extend_from_slice(name.as_bytes());
        txn.delete_server_record(&key);
    }
    for (name, library) in incoming.by_name {
        let mut key = LIBRARY_RECORD.to_vec();
        key.extend_from_slice(name.as_bytes());
        txn.put_server_record(&key, library.code.clone());
        for function in library.functions.keys() {
            vm.libraries
                .index
                .insert(function.to_ascii_lowercase(), name.clone());
        }
        vm.libraries.by_name.insert(name, library);
    }
    vm.libraries.publish(&server.scripting.shared);
    txn.set_replay(vec![vec![
        Bytes::from_static(b"FUNCTION"),
        Bytes::from_static(b"RESTORE"),
        payload.clone(),
        Bytes::from_static(policy.word()),
    ]]);
    commit_change(server, txn, Reply::ok())
}
