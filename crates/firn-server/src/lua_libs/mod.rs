//! The Lua libraries Redis 7.0 loads into its scripting VM besides Lua's
//! own: `cjson` (lua-cjson 2.1.0), `cmsgpack` (lua-cmsgpack 0.4.0),
//! `struct` (Roberto Ierusalimschy's struct 0.2) and `bit` (LuaBitOp).
//! They are written here in Rust on mlua, and behave as Redis's C builds do,
//! error texts included.
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
mod struct_lib;

use mlua::{ffi, Function, Lua, MultiValue, Table, Value};
use std::os::raw::c_int;

/// Installs the global tables `cjson`, `cmsgpack`, `struct` and `bit`.
pub fn register(lua: &Lua) -> mlua::Result<()> {
    let globals = lua.globals();
    globals.set("cjson", cjson::module(lua)?)?;
    globals.set("cmsgpack", cmsgpack::module(lua)?)?;
    globals.set("struct", struct_lib::module(lua)?)?;
    globals.set("bit", bit::module(lua)?)?;
    Ok(())
}

/// The field that marks the metatable of a read-only proxy of the script
/// sandbox (`scripting/readonly.rs`); its `__index` is the real table.
pub(crate) const READONLY_MARK: &str = "__firn_readonly";

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

/// Lua 5.1's number to text conversion (`LUA_NUMBER_FMT`, "%.14g").
pub(crate) fn number_text(n: f64) -> String {
    format_g(n, 14)
}

/// C's `printf("%.<precision>g", value)` as glibc prints it.
pub(crate) fn format_g(value: f64, precision: usize) -> String {
    if value.is_nan() {
        return if value.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
        .to_string();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let precision = precision.max(1);
    let scientific = format!("{:.*e}", precision - 1, value);
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return scientific;
    };
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if exponent < -4 || exponent >= precision as i32 {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            strip_fraction_zeros(mantissa),
            exponent.unsigned_abs()
        )
    } else {
        let decimals = (precision as i32 - 1 - exponent) as usize;
        let fixed = format!("{value:.decimals$}");
        strip_fraction_zeros(&fixed).to_string()
    }
}

fn strip_fraction_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// C's `isspace` in the "C" locale.
pub(crate) fn is_c_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Lua 5.1's `luaO_str2d`: the string as C sees it (up to a NUL byte) must
/// be one number for `strtod`, with nothing but spaces after it.
pub(crate) fn str_to_number(bytes: &[u8]) -> Option<f64> {
    let text = match bytes.iter().position(|&b| b == 0) {
        Some(nul) => &bytes[..nul],
        None => bytes,
    };
    let (value, used) = strtod(text)?;
    if text[used..].iter().all(|&b| is_c_space(b)) {
        Some(value)
    } else {
        None
    }
}

/// glibc's `strtod` in the "C" locale: leading spaces, a sign, then a
/// decimal number, a hexadecimal one ("0x1.8p3"), "inf"/"infinity" or
/// "nan"/"nan(...)". Returns the value and the bytes used, or `None` when
/// nothing converts.
pub(crate) fn strtod(text: &[u8]) -> Option<(f64, usize)> {
    let mut pos = 0;
    while pos < text.len() && is_c_space(text[pos]) {
        pos += 1;
    }
    let negative = match text.get(pos) {
        Some(b'-') => {
            pos += 1;
            true
        }
        Some(b'+') => {
            pos += 1;
            false
        }
        _ => false,
    };
    let sign = if negative { -1.0 } else { 1.0 };
    let rest = &text[pos..];
    let starts_with =
        |word: &[u8]| rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word);
    if starts_with(b"infinity") {
        return Some((sign * f64::INFINITY, pos + 8));
    }
    if starts_with(b"inf") {
        return Some((sign * f64::INFINITY, pos + 3));
    }
    if starts_with(b"nan") {
        let mut end = pos + 3;
        if text.get(end) == Some(&b'(') {
            let mut close = end + 1;
            while close < text.len() && (text[close].is_ascii_alphanumeric() || text[close] == b'_')
            {
                close += 1;
            }
            if text.get(close) == Some(&b')') {
                end = close + 1;
            }
        }
        let nan = if negative { -f64::NAN } else { f64::NAN };
        return Some((nan, end));
    }
    if rest.len() >= 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' {
        if let Some((value, used)) = hex_float(&rest[2..]) {
            return Some((sign * value, pos + 2 + used));
        }
    }
    let start = pos;
    let mut digits = 0;
    while pos < text.len() && text[pos].is_ascii_digit() {
        pos += 1;
        digits += 1;
    }
    if text.get(pos) == Some(&b'.') {
        let mut fraction = pos + 1;
        while fraction < text.len() && text[fraction].is_ascii_digit() {
            fraction += 1;
            digits += 1;
        }
        if digits > 0 {
            pos = fraction;
        }
    }
    if digits == 0 {
        return None;
    }
    let mantissa_end = pos;
    if matches!(text.get(pos), Some(b'e' | b'E')) {
        let mut exponent = pos + 1;
        if matches!(text.get(exponent), Some(b'+' | b'-')) {
            exponent += 1;
        }
        if text.get(exponent).is_some_and(u8::is_ascii_digit) {
            while exponent < text.len() && text[exponent].is_ascii_digit() {
                exponent += 1;
            }
            pos = exponent;
        }
    }
    let mut literal = String::with_capacity(pos - start + 2);
    let mantissa = std::str::from_utf8(&text[start..mantissa_end]).ok()?;
    if mantissa.starts_with('.') {
        literal.push('0');
    }
    literal.push_str(mantissa);
    if mantissa.ends_with('.') {
        literal.push('0');
    }
    literal.push_str(std::str::from_utf8(&text[mantissa_end..pos]).ok()?);
    let value: f64 = literal.parse().ok()?;
    Some((sign * value, pos))
}

/// The part of a hexadecimal float after "0x": hex digits, an optional
/// fraction and an optional binary exponent. `None` without a digit.
fn hex_float(text: &[u8]) -> Option<(f64, usize)> {
    let mut pos = 0;
    let mut mantissa: u64 = 0;
    let mut exponent: i64 = 0;
    let mut digits = 0;
    let mut push_digit = |digit: u64, fractional: bool, exponent: &mut i64| {
        if mantissa >> 60 == 0 {
            mantissa = mantissa << 4 | digit;
            if fractional {
                *exponent -= 4;
            }
        } else if !fractional {
            *exponent += 4;
        }
    };
    while let Some(digit) = text.get(pos).and_then(|&b| (b as char).to_digit(16)) {
        push_digit(u64::from(digit), false, &mut exponent);
        pos += 1;
        digits += 1;
    }
    if text.get(pos) == Some(&b'.') {
        let mut fraction = pos + 1;
        let mut fraction_digits = 0;
        while let Some(digit) = text.get(fraction).and_then(|&b| (b as char).to_digit(16)) {
            push_digit(u64::from(digit), true, &mut exponent);
            fraction += 1;
            fraction_digits += 1;
        }
        if digits + fraction_digits > 0 {
            pos = fraction;
            digits += fraction_digits;
        }
    }
    if digits == 0 {
        return None;
    }
    if matches!(text.get(pos), Some(b'p' | b'P')) {
        let mut at = pos + 1;
        let negative = match text.get(at) {
            Some(b'-') => {
                at += 1;
                true
            }
            Some(b'+') => {
                at += 1;
                false
            }
            _ => false,
        };
        if text.get(at).is_some_and(u8::is_ascii_digit) {
            let mut power: i64 = 0;
            while let Some(digit) = text.get(at).filter(|b| b.is_ascii_digit()) {
                power = (power * 10 + i64::from(digit - b'0')).min(100_000);
                at += 1;
            }
            exponent += if negative { -power } else { power };
            pos = at;
        }
    }
    let value = mantissa as f64 * 2f64.powi(exponent.clamp(-2000, 2000) as i32);
    Some((value, pos))
}

#[cfg(test)]
mod redis_cases;

#[cfg(test)]
pub(crate) mod testing {
    //! Runs Lua snippets in a fresh VM with the libraries installed.
    use super::register;
    use mlua::Lua;

    pub(crate) fn vm() -> Lua {
        let lua = Lua::new();
        register(&lua).expect("register the libraries");
        lua
    }

    /// Runs `expression` through the case wrapper (see `redis_cases`) in a
    /// fresh VM, as a chunk named as Redis names scripts.
    pub(crate) fn run_case(expression: &str) -> String {
        let lua = vm();
        let chunk = super::redis_cases::WRAPPER.replace("EXPR", expression);
        lua.load(chunk)
            .set_name("@user_script")
            .eval::<String>()
            .unwrap_or_else(|error| format!("VM ERROR {error}"))
    }

    /// Checks every case, listing all mismatches.
    pub(crate) fn check_cases(cases: &[(&str, &str)]) {
        let mut failures = Vec::new();
        for (expression, expected) in cases {
            let got = run_case(expression);
            if got != *expected {
                failures.push(format!(
                    "{expression}\n   redis: {expected}\n   firn:  {got}"
                ));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} cases differ:\n{}",
            failures.len(),
            cases.len(),
            failures.join("\n")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::testing::check_cases;
    use super::*;

    #[test]
    fn bit_matches_redis() {
        check_cases(redis_cases::BIT);
    }

    #[test]
    fn struct_matches_redis() {
        check_cases(redis_cases::STRUCT);
    }

    #[test]
    fn cmsgpack_matches_redis() {
        check_cases(redis_cases::CMSGPACK);
    }

    #[test]
    fn cjson_matches_redis() {
        check_cases(redis_cases::CJSON);
    }

    /// 2,400 random inputs (`redis_fuzz.py 1`): mutated JSON for
    /// `cjson.decode`, random MessagePack bytes for `cmsgpack.unpack`,
    /// random formats and data for `struct`, re-encodings of decoded JSON,
    /// random Lua tables (mixed keys, holes, nesting) through
    /// `cjson.encode`, `cmsgpack.pack` and back.
    #[test]
    fn random_inputs_match_redis() {
        let lines: Vec<&str> = include_str!("redis_fuzz_cases.txt").lines().collect();
        let cases: Vec<(&str, &str)> = lines
            .chunks(2)
            .filter_map(|pair| Some((*pair.first()?, *pair.get(1)?)))
            .collect();
        assert_eq!(cases.len(), 2400);
        check_cases(&cases);
    }

    #[test]
    fn format_g_matches_printf() {
        assert_eq!(format_g(0.1, 14), "0.1");
        assert_eq!(format_g(1.0 / 3.0, 14), "0.33333333333333");
        assert_eq!(format_g(1e300, 14), "1e+300");
        assert_eq!(format_g(100.0, 14), "100");
        assert_eq!(format_g(-0.0, 14), "-0");
        assert_eq!(format_g(9007199254740992.0, 14), "9.007199254741e+15");
        assert_eq!(format_g(1e15, 14), "1e+15");
        assert_eq!(format_g(1e14, 14), "1e+14");
        assert_eq!(format_g(123456789012345678.0, 14), "1.2345678901235e+17");
        assert_eq!(format_g(-1.5e-7, 14), "-1.5e-07");
        assert_eq!(format_g(0.0001, 14), "0.0001");
        assert_eq!(format_g(0.00001, 14), "1e-05");
        assert_eq!(format_g(5e-324, 14), "4.9406564584125e-324");
        assert_eq!(format_g(f64::INFINITY, 14), "inf");
        assert_eq!(format_g(-f64::NAN, 14), "-nan");
    }

    #[test]
    fn strtod_forms() {
        assert_eq!(strtod(b"12abc"), Some((12.0, 2)));
        assert_eq!(strtod(b"  -1.5e3x"), Some((-1500.0, 8)));
        assert_eq!(strtod(b"1e"), Some((1.0, 1)));
        assert_eq!(strtod(b".5"), Some((0.5, 2)));
        assert_eq!(strtod(b"1."), Some((1.0, 2)));
        assert_eq!(strtod(b"0x10"), Some((16.0, 4)));
        assert_eq!(strtod(b"0x"), Some((0.0, 1)));
        assert_eq!(strtod(b"0x1p4"), Some((16.0, 5)));
        assert_eq!(strtod(b"-Infinity"), Some((f64::NEG_INFINITY, 9)));
        assert_eq!(strtod(b"."), None);
        assert_eq!(strtod(b"-"), None);
        assert_eq!(strtod(b"abc"), None);
        assert!(strtod(b"nan(123)").is_some_and(|(v, used)| v.is_nan() && used == 8));
        assert_eq!(str_to_number(b" 0x1A "), Some(26.0));
        assert_eq!(str_to_number(b"12\0zz"), Some(12.0));
        assert_eq!(str_to_number(b"12 z"), None);
        assert_eq!(str_to_number(b""), None);
    }
}
