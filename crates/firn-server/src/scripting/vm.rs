//! The Lua VM as Redis 7.0.15 sets it up: Lua 5.1 with base, table,
//! string, math and coroutine, the `redis` table, the sandbox of
//! `sandbox.lua`, a memory limit, and a count hook that notices long
//! runs (BUSY), SCRIPT KILL and abandoned runs. It lives on the script
//! thread only (`mlua::Lua` is not `Send`).

use firn_lua_libs::number_text;
use mlua::{Function, HookTriggers, Lua, LuaOptions, StdLib, Table, Value, VmState};
use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::convert::error_table;
use super::flags::ScriptFlags;
use super::libraries::Libraries;
use super::shared::{Shared, ABANDONED, KILLED};

pub const REDIS_VERSION: &str = "7.0.15";
pub const REDIS_VERSION_NUM: i64 = 0x0007_000f;

/// Instructions between two checks of the hook (Redis uses 100000).
const HOOK_INSTRUCTIONS: u32 = 100_000;

/// Globals a script sees (Redis 7.0.15's list, KEYS and ARGV aside).
const GLOBALS: &[&str] = &[
    "_G",
    "_VERSION",
    "__redis__err__handler",
    "assert",
    "bit",
    "cjson",
    "cmsgpack",
    "collectgarbage",
    "coroutine",
    "error",
    "gcinfo",
    "getmetatable",
    "ipairs",
    "load",
    "loadstring",
    "math",
    "next",
    "pairs",
    "pcall",
    "rawequal",
    "rawget",
    "rawset",
    "redis",
    "select",
    "setmetatable",
    "string",
    "struct",
    "table",
    "tonumber",
    "tostring",
    "type",
    "unpack",
    "xpcall",
];

/// `redis.set_repl` flags.
pub const REPL_NONE: i64 = 0;
pub const REPL_AOF: i64 = 1;
pub const REPL_REPLICA: i64 = 2;
pub const REPL_ALL: i64 = 3;

/// What the `redis` functions read and change during one run.
pub struct RunSettings {
    /// 2 or 3 (`redis.setresp`).
    pub resp: Cell<u8>,
    /// `redis.set_repl` flags.
    pub repl: Cell<i64>,
    /// A run is in progress (not a library load).
    pub in_run: Cell<bool>,
}

/// What the VM calls back into the server for, as plain functions: the
/// VM is a Lua sandbox and knows nothing of the server (run.rs and the
/// command registry fill these in).
#[derive(Clone, Copy)]
pub struct Hooks {
    /// `redis.call`/`redis.pcall`: `(status, value)` (`run::call_entry`).
    pub call: fn(&Lua, mlua::MultiValue) -> mlua::Result<(i32, Value)>,
    /// `redis.acl_check_cmd`: whether the running script's user may run
    /// the command line, or `None` when it names no command
    /// (`call::acl_check_entry`).
    pub acl_check: fn(&[bytes::Bytes]) -> Option<bool>,
}

/// A compiled EVAL script.
pub struct Script {
    pub func: Function,
    pub flags: ScriptFlags,
}

pub struct Vm {
    pub lua: Lua,
    /// The protected globals scripts run in.
    pub env: Table,
    /// Calls a function under the error handler: `(ok, value)`.
    pub runner: Function,
    pub settings: Rc<RunSettings>,
    pub scripts: HashMap<String, Script>,
    pub libraries: Libraries,
    /// The `__newindex` of read-only tables.
    pub readonly_error: Function,
    /// The `__index` that fails on an undeclared global.
    pub missing_global: Function,
    /// `readonly(table, shown)`: the read-only proxy of a table (and of
    /// every table it holds); `getmetatable` shows `shown` for it.
    pub make_readonly: Function,
    /// A fresh read-only `{__index = missing_global}`, what Redis shows
    /// as the metatable of the globals.
    pub error_meta: Function,
    /// The `redis` table itself (scripts see a read-only proxy).
    pub redis_real: Table,
    memory_limit_bytes: usize,
    /// Kept to build a fresh VM like this one (SCRIPT FLUSH).
    pub hooks: Hooks,
    /// Jobs since the last collection step.
    jobs_since_gc: u32,
}

/// Redis's LUA_GC_CYCLE_PERIOD: every this many scripts, a collection
/// step of as many kilobytes, so that garbage never waits for a full
/// cycle (which would add latency) and the VM stays small.
const GC_CYCLE_PERIOD: u32 = 50;

/// Redis's `luaPushError` + `luaError`: a Rust callback fails with the
/// error's full text, which the error handler turns into `{err=...}`.
pub fn raise(text: &str) -> mlua::Error {
    mlua::Error::RuntimeError(text.to_string())
}

/// The text of an error value that is not a table: a Rust callback's
/// error as it was raised, anything else as Lua prints it, after "ERR ".
fn error_value_text(lua: &Lua, value: Value, raw: bool) -> mlua::Result<mlua::String> {
    fn innermost(e: &mlua::Error) -> &mlua::Error {
        match e {
            mlua::Error::CallbackError { cause, .. } => innermost(cause),
            other => other,
        }
    }
    let text = match &value {
        Value::Error(e) => match innermost(e) {
            mlua::Error::RuntimeError(text) => text.clone(),
            other if raw => other.to_string(),
            other => format!("ERR {other}"),
        },
        Value::String(s) => format!("ERR {}", s.to_string_lossy()),
        Value::Nil => "ERR nil".to_string(),
        Value::Boolean(b) => format!("ERR {b}"),
        Value::Integer(n) => format!("ERR {}", number_text(*n as f64)),
        Value::Number(n) => format!("ERR {}", number_text(*n)),
        other => format!("ERR {}", other.to_string().unwrap_or_default()),
    };
    lua.create_string(text)
}

impl Vm {
    pub fn new(shared: Arc<Shared>, memory_limit_bytes: usize, hooks: Hooks) -> mlua::Result<Vm> {
        // SAFETY: the debug library is needed by the sandbox's error
        // handler; it is removed from the globals before any script runs
        // and survives only as an upvalue of `sandbox.lua`.
        let lua = unsafe {
            Lua::unsafe_new_with(
                StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::DEBUG,
                LuaOptions::default(),
            )
        };
        let settings = Rc::new(RunSettings {
            resp: Cell::new(2),
            repl: Cell::new(REPL_ALL),
            in_run: Cell::new(false),
        });
        let globals = lua.globals();
        let redis = lua.create_table()?;
        register_api(&lua, &redis, &settings, hooks)?;
        globals.raw_set("redis", redis)?;
        // cjson, cmsgpack, struct and bit, as Redis loads them.
        firn_lua_libs::register(&lua)?;

        let debug: Table = globals.raw_get("debug")?;
        let errtext = lua.create_function(|lua, (value, raw): (Value, Option<bool>)| {
            error_value_text(lua, value, raw.unwrap_or(false))
        })?;
        let redis_real: Table = globals.raw_get("redis")?;
        let table_lib: Table = globals.raw_get("table")?;
        let (real_of, proxy_of, shown_meta) = super::readonly::registry_tables(&lua)?;
        let (env, readonly_error, missing_global, runner, make_readonly, error_meta): (
            Table,
            Function,
            Function,
            Function,
            Function,
            Function,
        ) = lua
            .load(include_str!("sandbox.lua"))
            .set_name("=firn")
            .call((
                debug,
                errtext,
                KILLED,
                ABANDONED,
                real_of,
                proxy_of,
                shown_meta,
                super::readonly::missing_global(&lua)?,
            ))?;
        super::readonly::install(&lua, &globals, &table_lib)?;
        let names: Vec<Value> = globals
            .clone()
            .pairs::<Value, Value>()
            .filter_map(|pair| pair.ok().map(|(k, _)| k))
            .collect();
        for name in names {
            let keep = match &name {
                Value::String(s) => GLOBALS
                    .iter()
                    .any(|g| s.as_bytes().as_ref() == g.as_bytes()),
                _ => false,
            };
            if !keep {
                globals.raw_set(name, Value::Nil)?;
            }
        }
        lua.set_named_registry_value(CALL_REGISTRY_KEY, lua.create_function(hooks.call)?)?;
        lua.set_memory_limit(memory_limit_bytes)?;
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(HOOK_INSTRUCTIONS),
            move |_lua, _debug| {
                if shared.kill.load(Ordering::Acquire) {
                    return Err(raise(KILLED));
                }
                if shared.abandon.load(Ordering::Acquire) {
                    return Err(raise(ABANDONED));
                }
                if shared.load_timed_out() {
                    return Err(raise("ERR FUNCTION LOAD timeout"));
                }
                shared.note_elapsed();
                Ok(VmState::Continue)
            },
        );
        Ok(Vm {
            lua,
            env,
            runner,
            settings,
            scripts: HashMap::new(),
            libraries: Default::default(),
            readonly_error,
            missing_global,
            make_readonly,
            error_meta,
            redis_real,
            memory_limit_bytes,
            hooks,
            jobs_since_gc: 0,
        })
    }

    /// After a job: a collection step every GC_CYCLE_PERIOD jobs.
    pub fn collect_a_little(&mut self) {
        self.jobs_since_gc += 1;
        if self.jobs_since_gc >= GC_CYCLE_PERIOD {
            self.jobs_since_gc = 0;
            let _ = self.lua.gc_step_kbytes(GC_CYCLE_PERIOD as i32);
        }
    }

    pub fn memory_limit(&self) -> usize {
        self.memory_limit_bytes
    }

    /// Compiles a script body (its shebang already cut off, keeping the
    /// line break so that line numbers match) as Redis names it.
    pub fn compile(&self, body: &[u8]) -> Result<Function, String> {
        self.lua
            .load(body)
            .set_name("@user_script")
            .set_environment(self.env.clone())
            .into_function()
            .map_err(|e| match e {
                mlua::Error::SyntaxError { message, .. } => message,
                mlua::Error::MemoryError(message) => message,
                other => other.to_string(),
            })
    }
}

/// Where `redis.call`'s implementation (a Rust function returning
/// `(status, value)`, `run::call_entry`) is registered.
pub const CALL_REGISTRY_KEY: &str = "firn.call";

/// `redis.call` and `redis.pcall`: C functions, as in Redis, so that an
/// error they raise is a table (`{err=...}`) and the frame the error
/// handler reports is the script's, even for `return redis.call(...)`.
/// Status 1 (a command error) is raised by `call` and returned by `pcall`;
/// status 2 (a killed or abandoned run) is raised by both.
unsafe fn call_with_status(state: *mut mlua::ffi::lua_State, raise_errors: bool) -> i32 {
    use mlua::ffi;
    let argc = ffi::lua_gettop(state);
    ffi::lua_getfield(state, ffi::LUA_REGISTRYINDEX, c"firn.call".as_ptr());
    ffi::lua_insert(state, 1);
    ffi::lua_call(state, argc, 2);
    let status = ffi::lua_tointeger(state, -2);
    if status == 2 || (status == 1 && raise_errors) {
        ffi::lua_error(state);
    }
    1
}

unsafe extern "C-unwind" fn redis_call(state: *mut mlua::ffi::lua_State) -> i32 {
    call_with_status(state, true)
}

unsafe extern "C-unwind" fn redis_pcall(state: *mut mlua::ffi::lua_State) -> i32 {
    call_with_status(state, false)
}

fn arg_count(args: &mlua::MultiValue) -> usize {
    args.len()
}

fn register_api(
    lua: &Lua,
    redis: &Table,
    settings: &Rc<RunSettings>,
    hooks: Hooks,
) -> mlua::Result<()> {
    // SAFETY: both functions only use the Lua stack they are given, and
    // call the registered Rust function with Lua's own `lua_call`.
    unsafe {
        redis.raw_set("call", lua.create_c_function(redis_call)?)?;
        redis.raw_set("pcall", lua.create_c_function(redis_pcall)?)?;
    }
    redis.raw_set(
        "error_reply",
        lua.create_function(|lua, args: mlua::MultiValue| {
            match (arg_count(&args), args.front()) {
                (1, Some(Value::String(s))) => {
                    let mut raw = s.as_bytes().to_vec();
                    if raw.first() != Some(&b'-') {
                        raw.insert(0, b'-');
                    }
                    let table = lua.create_table()?;
                    table.raw_set("err", lua.create_string(super::convert::error_text(&raw))?)?;
                    Ok(table)
                }
                _ => error_table(lua, "wrong number or type of arguments"),
            }
        })?,
    )?;
    redis.raw_set(
        "status_reply",
        lua.create_function(|lua, args: mlua::MultiValue| {
            match (arg_count(&args), args.front()) {
                (1, Some(Value::String(s))) => {
                    let table = lua.create_table()?;
                    table.raw_set("ok", s.clone())?;
                    Ok(table)
                }
                _ => error_table(lua, "wrong number or type of arguments"),
            }
        })?,
    )?;
    redis.raw_set(
        "sha1hex",
        lua.create_function(|lua, args: mlua::MultiValue| {
            if arg_count(&args) != 1 {
                return Err(raise("ERR wrong number of arguments"));
            }
            let text = match args.front() {
                Some(Value::String(s)) => s.as_bytes().to_vec(),
                Some(Value::Integer(n)) => number_text(*n as f64).into_bytes(),
                Some(Value::Number(n)) => number_text(*n).into_bytes(),
                _ => Vec::new(),
            };
            lua.create_string(super::sha1::sha1_hex(&text))
        })?,
    )?;
    redis.raw_set(
        "log",
        lua.create_function(|lua, args: mlua::MultiValue| {
            if arg_count(&args) < 2 {
                return Err(raise("ERR redis.log() requires two arguments or more."));
            }
            let level = match args.front() {
                Some(Value::Integer(n)) => *n,
                Some(Value::Number(n)) => *n as i64,
                _ => return Err(raise("ERR First argument must be a number (log level).")),
            };
            if !(0..=3).contains(&level) {
                return Err(raise("ERR Invalid debug level."));
            }
            let mut message = String::new();
            for (i, arg) in args.iter().skip(1).enumerate() {
                if let Some(text) = lua.coerce_string(arg.clone())? {
                    if i > 0 {
                        message.push(' ');
                    }
                    message.push_str(&text.to_string_lossy());
                }
            }
            match level {
                0 => tracing::debug!(target: "lua", "{message}"),
                1 | 2 => tracing::info!(target: "lua", "{message}"),
                _ => tracing::warn!(target: "lua", "{message}"),
            }
            Ok(())
        })?,
    )?;
    let resp_settings = settings.clone();
    redis.raw_set(
        "setresp",
        lua.create_function(move |_, args: mlua::MultiValue| {
            if arg_count(&args) != 1 {
                return Err(raise("ERR redis.setresp() requires one argument."));
            }
            let resp = match args.front() {
                Some(Value::Integer(n)) => *n,
                Some(Value::Number(n)) => *n as i64,
                _ => 0,
            };
            if resp != 2 && resp != 3 {
                return Err(raise("ERR RESP version must be 2 or 3."));
            }
            resp_settings.resp.set(resp as u8);
            Ok(())
        })?,
    )?;
    let repl_settings = settings.clone();
    redis.raw_set(
        "set_repl",
        lua.create_function(move |_, args: mlua::MultiValue| {
            if arg_count(&args) != 1 {
                return Err(raise("ERR redis.set_repl() requires two arguments."));
            }
            let flags = match args.front() {
                Some(Value::Integer(n)) => *n,
                Some(Value::Number(n)) => *n as i64,
                _ => -1,
            };
            if !(REPL_NONE..=REPL_ALL).contains(&flags) {
                return Err(raise(
                    "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
                ));
            }
            repl_settings.repl.set(flags);
            Ok(())
        })?,
    )?;
    redis.raw_set("replicate_commands", lua.create_function(|_, ()| Ok(true))?)?;
    redis.raw_set("breakpoint", lua.create_function(|_, ()| Ok(false))?)?;
    redis.raw_set(
        "debug",
        lua.create_function(|_, _: mlua::MultiValue| Ok(()))?,
    )?;
    let acl_settings = settings.clone();
    redis.raw_set(
        "acl_check_cmd",
        lua.create_function(move |lua, args: mlua::MultiValue| {
            if args.is_empty() {
                return Err(raise(
                    "ERR Please specify at least one argument for this redis lib call",
                ));
            }
            let mut argv = Vec::with_capacity(args.len());
            for arg in args.iter() {
                match lua.coerce_string(arg.clone())? {
                    Some(s) => argv.push(bytes::Bytes::copy_from_slice(&s.as_bytes())),
                    None => {
                        return Err(raise(
                            "ERR Lua redis lib command arguments must be strings or integers",
                        ))
                    }
                }
            }
            let allowed = acl_settings
                .in_run
                .get()
                .then(|| (hooks.acl_check)(&argv))
                .flatten();
            allowed.ok_or_else(|| raise("ERR Invalid command passed to redis.acl_check_cmd()"))
        })?,
    )?;
    redis.raw_set("REDIS_VERSION", REDIS_VERSION)?;
    redis.raw_set("REDIS_VERSION_NUM", REDIS_VERSION_NUM)?;
    for (name, value) in [
        ("LOG_DEBUG", 0),
        ("LOG_VERBOSE", 1),
        ("LOG_NOTICE", 2),
        ("LOG_WARNING", 3),
        ("REPL_NONE", REPL_NONE),
        ("REPL_AOF", REPL_AOF),
        ("REPL_SLAVE", REPL_REPLICA),
        ("REPL_REPLICA", REPL_REPLICA),
        ("REPL_ALL", REPL_ALL),
    ] {
        redis.raw_set(name, value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The libraries read a read-only proxy's real table by the mark
    /// `sandbox.lua` puts on the proxy's metatable.
    #[test]
    fn sandbox_marks_proxies_as_the_libraries_expect() {
        let mark = format!("{} = true", firn_lua_libs::READONLY_MARK);
        assert!(include_str!("sandbox.lua").contains(&mark));
    }
}
