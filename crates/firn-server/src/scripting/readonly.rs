//! Read-only tables for the sandbox, as Redis 7.0.15's patched Lua has
//! them (`lua_enablereadonlytable`), built on stock Lua 5.1.
//!
//! Stock Lua writes a field that already exists without asking any
//! metamethod, so a protected table is an empty proxy: reads fall through
//! its metatable to the real table, every write reaches `__newindex` and
//! fails. `sandbox.lua` makes the proxies; three registry tables record
//! them (`firn.readonly`: proxy → real, `firn.proxy_of`: real → proxy,
//! `firn.shown_meta`: proxy → what `getmetatable` shows for it).
//!
//! The base functions that bypass metamethods (`rawset`, `rawget`,
//! `next`, `pairs`, `setmetatable`, `getmetatable`), `table.insert` and
//! `table.foreach` are replaced here by C functions that see through
//! proxies: writes to a proxy fail with Redis's text, reads and iteration
//! reach the real table, and `getmetatable` never hands out a proxy's own
//! metatable. They are C functions, like the ones they replace, so that
//! their argument errors name the same function at the same script line
//! ("bad argument #1 to 'rawset' ...") even in a tail call; `loadstring`
//! and `load` (written in `sandbox.lua`) sit behind C functions here for
//! the same reason. None of them keeps a Rust value with a destructor
//! across a call that can raise a Lua error.

use mlua::ffi::{self, lua_State};
use mlua::{Lua, Table};
use std::ffi::CStr;

pub const READONLY_KEY: &CStr = c"firn.readonly";
pub const PROXY_OF_KEY: &CStr = c"firn.proxy_of";
pub const SHOWN_META_KEY: &CStr = c"firn.shown_meta";
const PAIRS_NEXT_KEY: &CStr = c"firn.pairs_next";

const LOADSTRING_KEY: &CStr = c"firn.loadstring";
const LOAD_KEY: &CStr = c"firn.load";

/// Redis's text for any write to a read-only table.
const READONLY_ERROR: &CStr = c"Attempt to modify a readonly table";

/// The registry tables `sandbox.lua` fills: (proxy → real, real → proxy,
/// proxy → shown metatable), weak so that a library's proxies go with it.
pub fn registry_tables(lua: &Lua) -> mlua::Result<(Table, Table, Table)> {
    let make = |key: &CStr, mode: &str| -> mlua::Result<Table> {
        let table = lua.create_table()?;
        let meta = lua.create_table()?;
        meta.raw_set("__mode", mode)?;
        table.set_metatable(Some(meta));
        let name = key.to_str().map_err(mlua::Error::external)?;
        lua.set_named_registry_value(name, &table)?;
        Ok(table)
    };
    Ok((
        make(READONLY_KEY, "k")?,
        make(PROXY_OF_KEY, "kv")?,
        make(SHOWN_META_KEY, "k")?,
    ))
}

/// Redis's `luaProtectedTableError`, the `__index` of the globals (and of
/// a library's load-time `redis` table): reading an undeclared name
/// fails. A C function, as in Redis, so that its error names the
/// script's line even when a script calls it in a tail call.
pub fn missing_global(lua: &Lua) -> mlua::Result<mlua::Function> {
    // SAFETY: works on its own Lua stack through the C API only.
    unsafe { lua.create_c_function(protected_table_error) }
}

unsafe extern "C-unwind" fn protected_table_error(state: *mut lua_State) -> i32 {
    if ffi::lua_gettop(state) != 2 {
        return ffi::luaL_error(
            state,
            c"Wrong number of arguments to luaProtectedTableError".as_ptr(),
        );
    }
    if ffi::lua_isstring(state, -1) == 0 {
        return ffi::luaL_error(
            state,
            c"Second argument to luaProtectedTableError must be a string or number".as_ptr(),
        );
    }
    let name = ffi::lua_tolstring(state, -1, std::ptr::null_mut());
    ffi::luaL_error(
        state,
        c"Script attempted to access nonexistent global variable '%s'".as_ptr(),
        name,
    )
}

/// Installs the proxy-aware functions in the real globals and the real
/// `table` library.
pub fn install(lua: &Lua, globals: &Table, table_lib: &Table) -> mlua::Result<()> {
    // SAFETY: each function works on the Lua stack it is given through
    // the C API only, as the base library's own functions do.
    unsafe {
        globals.raw_set("next", lua.create_c_function(sandbox_next)?)?;
        // `pairs` returns a `next` of its own, as Lua 5.1's does.
        lua.set_named_registry_value("firn.pairs_next", lua.create_c_function(sandbox_next)?)?;
        globals.raw_set("pairs", lua.create_c_function(sandbox_pairs)?)?;
        globals.raw_set("rawset", lua.create_c_function(sandbox_rawset)?)?;
        globals.raw_set("rawget", lua.create_c_function(sandbox_rawget)?)?;
        globals.raw_set("setmetatable", lua.create_c_function(sandbox_setmetatable)?)?;
        globals.raw_set("getmetatable", lua.create_c_function(sandbox_getmetatable)?)?;
        table_lib.raw_set("insert", lua.create_c_function(sandbox_insert)?)?;
        table_lib.raw_set("foreach", lua.create_c_function(sandbox_foreach)?)?;
        // `sandbox.lua`'s `loadstring` and `load` (which give a chunk the
        // globals' proxy) behind C functions that check the arguments.
        for (name, key, check) in [
            (
                "loadstring",
                LOADSTRING_KEY,
                checked_loadstring as ffi::lua_CFunction,
            ),
            ("load", LOAD_KEY, checked_load as ffi::lua_CFunction),
        ] {
            let inner: mlua::Function = globals.raw_get(name)?;
            let key = key.to_str().map_err(mlua::Error::external)?;
            lua.set_named_registry_value(key, inner)?;
            globals.raw_set(name, lua.create_c_function(check)?)?;
        }
    }
    Ok(())
}

/// Pushes `registry[key][value at idx]` (nil when absent).
unsafe fn lookup(state: *mut lua_State, key: &CStr, idx: i32) -> i32 {
    let idx = absolute(state, idx);
    ffi::lua_getfield(state, ffi::LUA_REGISTRYINDEX, key.as_ptr());
    ffi::lua_pushvalue(state, idx);
    ffi::lua_rawget(state, -2);
    ffi::lua_remove(state, -2);
    ffi::lua_type(state, -1)
}

fn absolute(state: *mut lua_State, idx: i32) -> i32 {
    if idx > 0 || idx <= ffi::LUA_REGISTRYINDEX {
        idx
    } else {
        // SAFETY: reads the stack top of a live state.
        unsafe { ffi::lua_gettop(state) + idx + 1 }
    }
}

/// Whether the table at `idx` is a read-only proxy.
unsafe fn is_proxy(state: *mut lua_State, idx: i32) -> bool {
    let found = lookup(state, READONLY_KEY, idx) != ffi::LUA_TNIL;
    ffi::lua_pop(state, 1);
    found
}

/// Replaces a proxy at `idx` by the table it protects.
unsafe fn see_through(state: *mut lua_State, idx: i32) {
    if lookup(state, READONLY_KEY, idx) == ffi::LUA_TNIL {
        ffi::lua_pop(state, 1);
    } else {
        ffi::lua_replace(state, idx);
    }
}

/// Redis's error for a write to a read-only table: raised from inside a
/// C function, so without a script position, as Redis's `lua_rawset`.
unsafe fn readonly_error(state: *mut lua_State) -> i32 {
    ffi::lua_pushstring(state, READONLY_ERROR.as_ptr());
    ffi::lua_error(state)
}

unsafe extern "C-unwind" fn sandbox_rawset(state: *mut lua_State) -> i32 {
    ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
    ffi::luaL_checkany(state, 2);
    ffi::luaL_checkany(state, 3);
    ffi::lua_settop(state, 3);
    if is_proxy(state, 1) {
        return readonly_error(state);
    }
    ffi::lua_rawset(state, 1);
    1
}

unsafe extern "C-unwind" fn sandbox_rawget(state: *mut lua_State) -> i32 {
    ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
    ffi::luaL_checkany(state, 2);
    ffi::lua_settop(state, 2);
    see_through(state, 1);
    ffi::lua_rawget(state, 1);
    1
}

unsafe extern "C-unwind" fn sandbox_next(state: *mut lua_State) -> i32 {
    ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
    ffi::lua_settop(state, 2);
    see_through(state, 1);
    if ffi::lua_next(state, 1) != 0 {
        2
    } else {
        ffi::lua_pushnil(state);
        1
    }
}

unsafe extern "C-unwind" fn sandbox_pairs(state: *mut lua_State) -> i32 {
    ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
    ffi::lua_getfield(state, ffi::LUA_REGISTRYINDEX, PAIRS_NEXT_KEY.as_ptr());
    ffi::lua_pushvalue(state, 1);
    ffi::lua_pushnil(state);
    3
}

unsafe extern "C-unwind" fn sandbox_setmetatable(state: *mut lua_State) -> i32 {
    let kind = ffi::lua_type(state, 2);
    ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
    if kind != ffi::LUA_TNIL && kind != ffi::LUA_TTABLE {
        ffi::luaL_argerror(state, 2, c"nil or table expected".as_ptr());
    }
    if ffi::luaL_getmetafield(state, 1, c"__metatable".as_ptr()) != 0 {
        return ffi::luaL_error(state, c"cannot change a protected metatable".as_ptr());
    }
    ffi::lua_settop(state, 2);
    if is_proxy(state, 1) {
        return readonly_error(state);
    }
    ffi::lua_setmetatable(state, 1);
    1
}

unsafe extern "C-unwind" fn sandbox_getmetatable(state: *mut lua_State) -> i32 {
    ffi::luaL_checkany(state, 1);
    ffi::lua_settop(state, 1);
    if ffi::lua_type(state, 1) == ffi::LUA_TTABLE && is_proxy(state, 1) {
        // What Redis's table would show: nil for a library, the
        // protected `{__index = <error>}` for the globals.
        lookup(state, SHOWN_META_KEY, 1);
        return 1;
    }
    if ffi::lua_getmetatable(state, 1) == 0 {
        ffi::lua_pushnil(state);
        return 1;
    }
    if ffi::luaL_getmetafield(state, 1, c"__metatable".as_ptr()) != 0 {
        return 1;
    }
    // A protected real metatable (strings') is shown as its proxy.
    if lookup(state, PROXY_OF_KEY, 2) == ffi::LUA_TNIL {
        ffi::lua_pop(state, 1);
    }
    1
}

/// Lua 5.1's `table.insert`, failing on a read-only table where Redis's
/// `lua_rawseti` does: after the argument checks.
unsafe extern "C-unwind" fn sandbox_insert(state: *mut lua_State) -> i32 {
    ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
    // C's int arithmetic, as in `tinsert`.
    let mut end = (ffi::lua_objlen(state, 1) as i32).wrapping_add(1);
    let pos = match ffi::lua_gettop(state) {
        2 => end,
        3 => {
            let pos = ffi::luaL_checkinteger(state, 2) as i32;
            if pos > end {
                end = pos;
            }
            if is_proxy(state, 1) {
                return readonly_error(state);
            }
            let mut i = end;
            while i > pos {
                ffi::lua_rawgeti_(state, 1, i - 1);
                ffi::lua_rawseti_(state, 1, i);
                i -= 1;
            }
            pos
        }
        _ => return ffi::luaL_error(state, c"wrong number of arguments to 'insert'".as_ptr()),
    };
    if is_proxy(state, 1) {
        return readonly_error(state);
    }
    ffi::lua_rawseti_(state, 1, pos);
    0
}

/// Lua 5.1's `table.foreach`, over the real table of a proxy.
unsafe extern "C-unwind" fn sandbox_foreach(state: *mut lua_State) -> i32 {
    ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
    ffi::luaL_checktype(state, 2, ffi::LUA_TFUNCTION);
    see_through(state, 1);
    ffi::lua_pushnil(state);
    while ffi::lua_next(state, 1) != 0 {
        ffi::lua_pushvalue(state, 2);
        ffi::lua_pushvalue(state, -3);
        ffi::lua_pushvalue(state, -3);
        ffi::lua_call(state, 2, 1);
        if ffi::lua_type(state, -1) != ffi::LUA_TNIL {
            return 1;
        }
        ffi::lua_pop(state, 2);
    }
    0
}

/// Calls the Lua function registered at `key` with this call's arguments
/// and returns all its results. Used once the arguments are checked, so
/// that the checks' errors name `loadstring`/`load` at the script's line.
unsafe fn call_inner(state: *mut lua_State, key: &CStr) -> i32 {
    let argc = ffi::lua_gettop(state);
    ffi::lua_getfield(state, ffi::LUA_REGISTRYINDEX, key.as_ptr());
    ffi::lua_insert(state, 1);
    ffi::lua_call(state, argc, ffi::LUA_MULTRET);
    ffi::lua_gettop(state)
}

/// `loadstring(s [, chunkname])`, Lua 5.1's argument checks first.
unsafe extern "C-unwind" fn checked_loadstring(state: *mut lua_State) -> i32 {
    ffi::luaL_checklstring(state, 1, std::ptr::null_mut());
    ffi::luaL_optlstring(state, 2, std::ptr::null(), std::ptr::null_mut());
    call_inner(state, LOADSTRING_KEY)
}

/// `load(reader [, chunkname])`, Lua 5.1's argument checks first.
unsafe extern "C-unwind" fn checked_load(state: *mut lua_State) -> i32 {
    ffi::luaL_checktype(state, 1, ffi::LUA_TFUNCTION);
    ffi::luaL_optlstring(state, 2, std::ptr::null(), std::ptr::null_mut());
    call_inner(state, LOAD_KEY)
}
