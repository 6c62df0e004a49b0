//! The Lua libraries Redis 7.0 loads into its scripting VM besides Lua's
//! own: `cjson` (lua-cjson 2.1.0), `cmsgpack` (lua-cmsgpack 0.4.0),
//! `struct` (Roberto Ierusalimschy's struct 0.2) and `bit` (LuaBitOp).
//! They are written here in Rust on mlua, and behave as Redis's C builds do,
//! error texts included; `tests/matches_redis.rs` checks them against the
//! results redis-server 7.0.15 gave for ~640 expressions and 2,400 random
//! inputs (`tests/fixtures/`).
//!
//! Pure code apart from the VM it is given: [`register`] installs the
//! libraries into any mlua `Lua`. firn-server's scripting VM is the one
//! user; this crate depends on no Firn crate but `firn-prims` (C's
//! `strtod` and `%.14g`).
//!
//! How a library function is called: `bit`'s functions are plain C
//! functions on the Lua API (see `bit.rs`). Every other function the
//! scripts see is a small C closure (`trampoline`) whose upvalue is the
//! Rust implementation, an mlua function. The trampoline calls the implementation, which never
//! raises a Lua error itself for the library's own errors: it returns a
//! status and, on failure, the message. The trampoline then raises the error
//! with `luaL_argerror`/`luaL_where` exactly as the C library does from its
//! own frame, so that the messages carry the same "bad argument #1 to
//! 'tobit'" function name (taken from the caller's debug information) and
//! the same "user_script:1: " position, and so that the error value is a
//! plain Lua string. The trampoline holds no Rust value with a destructor
//! when it raises, so the `longjmp` skips nothing that needs dropping.
//!
//! mlua hands a Lua 5.1 number within `f64::EPSILON` of an integer to Rust
//! as that integer, which turns -0.0 and tiny numbers into 0. The
//! trampoline passes the arguments in a table when one of them is such a
//! number, and table traversals re-read zero values as `f64`, so that
//! every argument and table value reaches the libraries exactly (table
//! keys excepted: a key of -0.0 or smaller than 2.2e-16 reads as 0).

mod bit;
mod cjson;
mod cmsgpack;
mod register;
mod struct_lib;

pub use register::register;

use firn_prims::{format_g, is_c_space, strtod};
use mlua::{ffi, Function, Lua, MultiValue, Table, Value};
use std::os::raw::c_int;

/// The field that marks the metatable of a read-only proxy: the script
/// sandbox of firn-server (`scripting/sandbox.lua`) sets it on the proxies
/// it hands scripts, and its `__index` is the real table.
pub const READONLY_MARK: &str = "__firn_readonly";

/// The table a read-only proxy stands for, or the table itself: the
/// encoders read a library table as Redis's do, not its empty proxy.
pub(crate) fn see_through(table: &Table) -> mlua::Result<Table> {
    if let Some(meta) = table.metatable() {
        if meta.raw_get::<bool>(READONLY_MARK)? {
            if let Value::Table(real) = meta.raw_get::<Value>("__index")? {
                return Ok(real);
            }
        }
    }
    Ok(table.clone())
}

/// Lua 5.1's LUAI_MAXCSTACK: the most stack slots a C function may use.
pub(crate) const MAX_C_STACK: usize = 8000;

/// How a library function fails.
pub(crate) enum Fail {
    /// An error of the VM itself (memory), passed on as mlua raised it.
    Lua(mlua::Error),
    /// `luaL_argerror(L, narg, message)`.
    Arg(i32, Vec<u8>),
    /// `luaL_error(L, "%s", message)`: the caller's position comes first.
    Error(Vec<u8>),
    /// A runtime error raised inside the C function by the VM, which carries
    /// no position (such as "table index is nil").
    Raw(Vec<u8>),
}

impl From<mlua::Error> for Fail {
    fn from(error: mlua::Error) -> Self {
        Fail::Lua(error)
    }
}

impl Fail {
    pub(crate) fn arg(narg: i32, message: impl Into<Vec<u8>>) -> Fail {
        Fail::Arg(narg, message.into())
    }

    pub(crate) fn error(message: impl Into<Vec<u8>>) -> Fail {
        Fail::Error(message.into())
    }
}

pub(crate) type LibResult<T> = Result<T, Fail>;

/// What a library function returns.
pub(crate) enum Ret {
    Values(MultiValue),
    /// Many results (up to the C stack limit), handed over in a table and
    /// pushed one by one by the trampoline: mlua could not return that many
    /// from a callback.
    Packed(Table, usize),
}

impl Ret {
    pub(crate) fn one(value: Value) -> LibResult<Ret> {
        let mut values = MultiValue::with_capacity(1);
        values.push_back(value);
        Ok(Ret::Values(values))
    }

    pub(crate) fn number(value: f64) -> LibResult<Ret> {
        Ret::one(Value::Number(value))
    }
}

// Status values passed from an implementation to the trampoline.
const STATUS_VALUES: i32 = 0;
const STATUS_PACKED: i32 = 1;
const STATUS_ERROR: i32 = 2;
const STATUS_ARG_ERROR: i32 = 3;
const STATUS_RAW_ERROR: i32 = 4;

/// More arguments than this are passed in a table.
const DIRECT_ARGS: c_int = 32;
/// First argument of the implementation: the others come as (table,
/// count) rather than one by one.
const PACKED_ARGS_MARK: f64 = -1.0;
const DIRECT_ARGS_MARK: f64 = 0.0;

/// Whether mlua would hand this number to Rust as something else: it
/// reports a number within `f64::EPSILON` of an integer as that integer,
/// which turns -0.0 and every nonzero number smaller than 2.2e-16 in
/// magnitude into 0.
fn lossy_in_mlua(number: f64) -> bool {
    number.abs() < f64::EPSILON && (number != 0.0 || number.is_sign_negative())
}

/// The C function every library function is.
unsafe extern "C-unwind" fn trampoline(state: *mut ffi::lua_State) -> c_int {
    let nargs = ffi::lua_gettop(state);
    // Many arguments, or a number mlua would not pass exactly, travel in a
    // table: mlua holds a handle for each argument (see `next_function`),
    // and the implementation reads numbers from a table exactly.
    let mut packed = nargs > DIRECT_ARGS;
    let mut index = 1;
    while !packed && index <= nargs {
        packed = ffi::lua_type(state, index) == ffi::LUA_TNUMBER
            && lossy_in_mlua(ffi::lua_tonumber(state, index));
        index += 1;
    }
    if packed {
        ffi::lua_createtable(state, nargs, 0);
        ffi::lua_insert(state, 1);
        for index in (1..=nargs).rev() {
            ffi::lua_rawseti(state, 1, index.into());
        }
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(1));
        ffi::lua_insert(state, 1);
        ffi::lua_pushnumber(state, PACKED_ARGS_MARK);
        ffi::lua_insert(state, 2);
        ffi::lua_pushnumber(state, f64::from(nargs));
        ffi::lua_call(state, 3, ffi::LUA_MULTRET);
        return finish(state);
    }
    ffi::lua_pushvalue(state, ffi::lua_upvalueindex(1));
    ffi::lua_insert(state, 1);
    ffi::lua_pushnumber(state, DIRECT_ARGS_MARK);
    ffi::lua_insert(state, 2);
    ffi::lua_call(state, nargs + 1, ffi::LUA_MULTRET);
    finish(state)
}

/// The trampoline's second half: the implementation's status and results
/// are on the stack.
unsafe fn finish(state: *mut ffi::lua_State) -> c_int {
    let nresults = ffi::lua_gettop(state);
    match ffi::lua_tonumber(state, 1) as i32 {
        STATUS_VALUES => {
            ffi::lua_remove(state, 1);
            nresults - 1
        }
        STATUS_PACKED => {
            let count = ffi::lua_tonumber(state, 3) as c_int;
            ffi::lua_settop(state, 2);
            ffi::lua_remove(state, 1);
            if ffi::lua_checkstack(state, count) == 0 {
                ffi::luaL_error(state, c"stack overflow".as_ptr());
            }
            for index in 1..=count {
                ffi::lua_rawgeti(state, 1, index.into());
            }
            count
        }
        STATUS_ARG_ERROR => {
            let narg = ffi::lua_tonumber(state, 2) as c_int;
            ffi::luaL_argerror(state, narg, ffi::lua_tostring(state, 3))
        }
        STATUS_RAW_ERROR => {
            ffi::lua_settop(state, 3);
            ffi::lua_error(state)
        }
        _ => {
            ffi::lua_settop(state, 3);
            ffi::luaL_where(state, 1);
            ffi::lua_insert(state, 3);
            ffi::lua_concat(state, 2);
            ffi::lua_error(state)
        }
    }
}

/// Wraps an implementation as a library function (see the file comment).
pub(crate) fn lib_function<F>(lua: &Lua, implementation: F) -> mlua::Result<Function>
where
    F: Fn(&Lua, Args) -> LibResult<Ret> + Send + 'static,
{
    let inner = lua.create_function(move |lua, mut values: MultiValue| {
        let mark = match values.pop_front() {
            Some(Value::Integer(mark)) => mark as f64,
            Some(Value::Number(mark)) => mark,
            _ => DIRECT_ARGS_MARK,
        };
        let args = if mark == PACKED_ARGS_MARK {
            let (table, count) = match (values.pop_front(), values.pop_front()) {
                (Some(Value::Table(table)), Some(count)) => {
                    (table, to_number(&count).unwrap_or(0.0))
                }
                _ => return Err(mlua::Error::runtime("bad library call")),
            };
            Args::Packed(table, count as usize)
        } else {
            Args::Direct(values)
        };
        let status = |code: i32| Value::Integer(code.into());
        let reply = match implementation(lua, args) {
            Ok(Ret::Values(mut results)) => {
                results.push_front(status(STATUS_VALUES));
                results
            }
            Ok(Ret::Packed(table, count)) => MultiValue::from_vec(vec![
                status(STATUS_PACKED),
                Value::Table(table),
                Value::Integer(count as i64),
            ]),
            Err(Fail::Lua(error)) => return Err(error),
            Err(Fail::Arg(narg, message)) => MultiValue::from_vec(vec![
                status(STATUS_ARG_ERROR),
                Value::Integer(narg.into()),
                Value::String(lua.create_string(message)?),
            ]),
            Err(Fail::Error(message)) => MultiValue::from_vec(vec![
                status(STATUS_ERROR),
                Value::Nil,
                Value::String(lua.create_string(message)?),
            ]),
            Err(Fail::Raw(message)) => MultiValue::from_vec(vec![
                status(STATUS_RAW_ERROR),
                Value::Nil,
                Value::String(lua.create_string(message)?),
            ]),
        };
        Ok(reply)
    })?;
    // SAFETY: pushes one C closure over the function just pushed as the
    // only argument; `trampoline` follows the protocol above.
    unsafe {
        lua.exec_raw::<Function>(inner, |state| {
            ffi::lua_pushcclosure(state, trampoline, 1);
        })
    }
}

/// `lua_next` as a function: `(table, key) -> (key, value)` or `nil` at
/// the end. Traversals call it step by step, so that a walk through a deep
/// or large structure holds no Rust handle per level or per element (mlua
/// handles live in a stack limited to about 8000 slots).
pub(crate) fn next_function(lua: &Lua) -> mlua::Result<Function> {
    unsafe extern "C-unwind" fn raw_next(state: *mut ffi::lua_State) -> c_int {
        ffi::lua_settop(state, 2);
        if ffi::lua_next(state, 1) != 0 {
            2
        } else {
            ffi::lua_pushnil(state);
            1
        }
    }
    // SAFETY: `raw_next` is called by Lua with a table and a key, and
    // touches nothing but its own stack frame.
    unsafe { lua.create_c_function(raw_next) }
}

/// A Lua table created on first use: where deep traversals park what they
/// cannot keep as mlua handles.
pub(crate) struct LazyTable<'a> {
    lua: &'a Lua,
    table: std::cell::OnceCell<Table>,
}

impl<'a> LazyTable<'a> {
    pub(crate) fn new(lua: &'a Lua) -> LazyTable<'a> {
        LazyTable {
            lua,
            table: std::cell::OnceCell::new(),
        }
    }

    pub(crate) fn get(&self) -> mlua::Result<&Table> {
        if let Some(table) = self.table.get() {
            return Ok(table);
        }
        let table = self.lua.create_table()?;
        Ok(self.table.get_or_init(|| table))
    }

    /// Empties slot `index` (nothing to do before the first use).
    pub(crate) fn clear(&self, index: usize) -> mlua::Result<()> {
        match self.table.get() {
            Some(table) => table.raw_set(index, Value::Nil),
            None => Ok(()),
        }
    }
}

/// A function's results: Rust values while they are few, moved into a Lua
/// table past `DIRECT_RESULTS` (mlua handles are limited; see
/// `next_function`), and returned from there by the trampoline.
pub(crate) struct LuaStack {
    direct: Vec<Value>,
    table: Option<Table>,
    len: usize,
}

/// Results returned directly, not through a table.
const DIRECT_RESULTS: usize = 32;

impl LuaStack {
    pub(crate) fn new() -> LuaStack {
        LuaStack {
            direct: Vec::new(),
            table: None,
            len: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The table the values are in once there are too many.
    fn spill(&mut self, lua: &Lua) -> mlua::Result<&Table> {
        if self.table.is_none() {
            let table = lua.create_table_with_capacity(self.len * 2, 0)?;
            for (index, value) in self.direct.drain(..).enumerate() {
                table.raw_set(index + 1, value)?;
            }
            self.table = Some(table);
        }
        self.table
            .as_ref()
            .ok_or_else(|| mlua::Error::runtime("results table"))
    }

    pub(crate) fn push(&mut self, lua: &Lua, value: Value) -> mlua::Result<()> {
        if self.table.is_none() && self.len < DIRECT_RESULTS {
            self.direct.push(value);
        } else {
            let index = self.len + 1;
            self.spill(lua)?.raw_set(index, value)?;
        }
        self.len += 1;
        Ok(())
    }

    /// The last value.
    pub(crate) fn last(&self) -> mlua::Result<Value> {
        match &self.table {
            Some(table) => {
                let value = table.raw_get(self.len)?;
                exact_value(table, &Value::Integer(self.len as i64), value)
            }
            None => Ok(self.direct.last().cloned().unwrap_or(Value::Nil)),
        }
    }

    pub(crate) fn pop(&mut self) -> mlua::Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        match &self.table {
            Some(table) => table.raw_set(self.len, Value::Nil)?,
            None => {
                self.direct.pop();
            }
        }
        self.len -= 1;
        Ok(())
    }

    /// Moves everything one place up and puts `value` first.
    pub(crate) fn insert_first(&mut self, lua: &Lua, value: Value) -> mlua::Result<()> {
        if self.table.is_none() && self.len < DIRECT_RESULTS {
            self.direct.insert(0, value);
            self.len += 1;
            return Ok(());
        }
        let len = self.len;
        let table = self.spill(lua)?;
        for index in (1..=len).rev() {
            let moved: Value = table.raw_get(index)?;
            let moved = exact_value(table, &Value::Integer(index as i64), moved)?;
            table.raw_set(index + 1, moved)?;
        }
        table.raw_set(1, value)?;
        self.len += 1;
        Ok(())
    }

    /// The values as a function's results.
    pub(crate) fn into_results(self) -> LibResult<Ret> {
        match self.table {
            Some(table) => Ok(Ret::Packed(table, self.len)),
            None => Ok(Ret::Values(MultiValue::from_vec(self.direct))),
        }
    }
}

/// A library function's arguments, with the C API's conversions.
pub(crate) enum Args {
    Direct(MultiValue),
    /// Many arguments, in a table (see `DIRECT_ARGS`).
    Packed(Table, usize),
}

impl Args {
    /// The arguments with a nil pushed after them.
    pub(crate) fn with_nil_pushed(self) -> Args {
        match self {
            Args::Direct(mut values) => {
                values.push_back(Value::Nil);
                Args::Direct(values)
            }
            // A nil at the end of a table is not there: the count says it.
            Args::Packed(table, count) => Args::Packed(table, count + 1),
        }
    }

    pub(crate) fn count(&self) -> usize {
        match self {
            Args::Direct(values) => values.len(),
            Args::Packed(_, count) => *count,
        }
    }

    /// Argument `narg` (1-based); `None` when absent ("no value").
    pub(crate) fn get(&self, narg: usize) -> Option<Value> {
        if narg == 0 || narg > self.count() {
            return None;
        }
        match self {
            Args::Direct(values) => values.get(narg - 1).cloned(),
            Args::Packed(table, _) => {
                let value = table.raw_get::<Value>(narg).unwrap_or(Value::Nil);
                exact_value(table, &Value::Integer(narg as i64), value).ok()
            }
        }
    }

    pub(crate) fn is_none_or_nil(&self, narg: usize) -> bool {
        matches!(self.get(narg), None | Some(Value::Nil))
    }

    /// `luaL_typename`.
    pub(crate) fn type_name(&self, narg: usize) -> &'static str {
        self.get(narg).as_ref().map_or("no value", type_name)
    }

    /// `lua_tonumber` when the value is a number or a string convertible to
    /// one (`lua_isnumber`), else `None`.
    pub(crate) fn to_number(&self, narg: usize) -> Option<f64> {
        self.get(narg).as_ref().and_then(to_number)
    }

    /// `luaL_typerror(L, narg, expected)`.
    pub(crate) fn type_error(&self, narg: usize, expected: &str) -> Fail {
        Fail::arg(
            narg as i32,
            format!("{expected} expected, got {}", self.type_name(narg)),
        )
    }

    /// `luaL_checknumber`.
    pub(crate) fn check_number(&self, narg: usize) -> LibResult<f64> {
        self.to_number(narg)
            .ok_or_else(|| self.type_error(narg, "number"))
    }

    /// `luaL_checkinteger` (a `lua_Integer`, 64 bits).
    pub(crate) fn check_integer(&self, narg: usize) -> LibResult<i64> {
        self.check_number(narg).map(number_to_integer)
    }

    /// `luaL_optinteger`.
    pub(crate) fn opt_integer(&self, narg: usize, default: i64) -> LibResult<i64> {
        if self.is_none_or_nil(narg) {
            Ok(default)
        } else {
            self.check_integer(narg)
        }
    }

    /// `luaL_checklstring`: a string, or a number in its `%.14g` text.
    pub(crate) fn check_bytes(&self, narg: usize) -> LibResult<Vec<u8>> {
        match self.get(narg) {
            Some(Value::String(text)) => Ok(text.as_bytes().to_vec()),
            Some(Value::Integer(n)) => Ok(number_text(n as f64).into_bytes()),
            Some(Value::Number(n)) => Ok(number_text(n).into_bytes()),
            _ => Err(self.type_error(narg, "string")),
        }
    }

    /// `luaL_checkstring` as C code sees it: up to the first NUL byte.
    pub(crate) fn check_c_string(&self, narg: usize) -> LibResult<Vec<u8>> {
        let mut bytes = self.check_bytes(narg)?;
        if let Some(nul) = bytes.iter().position(|&b| b == 0) {
            bytes.truncate(nul);
        }
        Ok(bytes)
    }
}

/// `lua_typename` of a value.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::LightUserData(_) | Value::UserData(_) => "userdata",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::Thread(_) => "thread",
        _ => "userdata",
    }
}

/// `lua_tonumber` for numbers and numeric strings; `None` otherwise.
pub(crate) fn to_number(value: &Value) -> Option<f64> {
    match value {
        Value::Integer(n) => Some(*n as f64),
        Value::Number(n) => Some(*n),
        Value::String(text) => str_to_number(&text.as_bytes()),
        _ => None,
    }
}

/// A number read from a table exactly: mlua reports a number within
/// `f64::EPSILON` of an integer as that `Integer`, which turns -0.0 and
/// tiny numbers into 0, so zeros are re-read as `f64`.
pub(crate) fn exact_value(table: &Table, key: &Value, value: Value) -> mlua::Result<Value> {
    if let Value::Integer(0) = value {
        return Ok(Value::Number(table.raw_get::<f64>(key.clone())?));
    }
    Ok(value)
}

/// `lua_number2integer` on x86-64: truncation, and the "integer
/// indefinite" value for what does not fit.
pub(crate) fn number_to_integer(n: f64) -> i64 {
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&n) {
        n as i64
    } else {
        i64::MIN
    }
}

/// Lua 5.1's number to text conversion (`LUA_NUMBER_FMT`, "%.14g"), as
/// `tostring` and every C function reading a number as a string see it.
pub fn number_text(n: f64) -> String {
    format_g(n, 14)
}

/// Lua 5.1's `luaO_str2d`: the string as C sees it (up to a NUL byte) must
/// be one number for `strtod`, with nothing but spaces after it.
pub(crate) fn str_to_number(bytes: &[u8]) -> Option<f64> {
    let text = match bytes.iter().position(|&b| b == 0) {
        Some(nul) => &bytes[..nul],
        None => bytes,
    };
    let read = strtod(text);
    if read.len > 0 && text[read.len..].iter().all(|&b| is_c_space(b)) {
        Some(read.value)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn str_to_number_is_lua_str2d() {
        assert_eq!(str_to_number(b" 0x1A "), Some(26.0));
        assert_eq!(str_to_number(b"12\0zz"), Some(12.0));
        assert_eq!(str_to_number(b"12 z"), None);
        assert_eq!(str_to_number(b""), None);
        assert_eq!(str_to_number(b"  "), None);
        assert_eq!(str_to_number(b"-1e2\t"), Some(-100.0));
    }
}
