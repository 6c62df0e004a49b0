//! `bit`: LuaBitOp as Redis builds it for Lua 5.1 with double numbers.
//!
//! An argument becomes 32 bits the LuaBitOp way: add 2^52+2^51 to the
//! double and keep the low 32 bits of its representation (rounding to the
//! nearest integer, ties to even, wrapping modulo 2^32 for values up to
//! 2^51, and exactly the same bits as the C code for anything else). A
//! string that Lua can convert counts as a number. Results are signed
//! 32-bit numbers. Shift counts use their low 5 bits.
//!
//! These are plain C functions on the Lua API (no mlua callback): they
//! allocate nothing on the Rust side and hold no Rust value with a
//! destructor, so raising an error (a `longjmp`) from them skips nothing,
//! and a call costs what the C library's costs.

use mlua::{ffi, Lua, Table};
use std::os::raw::c_int;

pub(crate) fn module(lua: &Lua) -> mlua::Result<Table> {
    let bit = lua.create_table()?;
    let functions: [(&str, ffi::lua_CFunction); 12] = [
        ("tobit", tobit),
        ("bnot", bnot),
        ("band", band),
        ("bor", bor),
        ("bxor", bxor),
        ("lshift", lshift),
        ("rshift", rshift),
        ("arshift", arshift),
        ("rol", rol),
        ("ror", ror),
        ("bswap", bswap),
        ("tohex", tohex),
    ];
    for (name, function) in functions {
        // SAFETY: each function below follows the Lua C API's rules.
        bit.set(name, unsafe { lua.create_c_function(function)? })?;
    }
    Ok(bit)
}

/// LuaBitOp's `barg`: raises "number expected" for what is not a number.
unsafe fn bit_arg(state: *mut ffi::lua_State, narg: c_int) -> u32 {
    let number = ffi::lua_tonumber(state, narg);
    let bits = (number + 6_755_399_441_055_744.0).to_bits() as u32;
    if bits == 0 && ffi::lua_isnumber(state, narg) == 0 {
        ffi::luaL_typerror(state, narg, c"number".as_ptr());
    }
    bits
}

unsafe fn ret(state: *mut ffi::lua_State, bits: u32) -> c_int {
    ffi::lua_pushnumber(state, f64::from(bits as i32));
    1
}

unsafe extern "C-unwind" fn tobit(state: *mut ffi::lua_State) -> c_int {
    ret(state, bit_arg(state, 1))
}

unsafe extern "C-unwind" fn bnot(state: *mut ffi::lua_State) -> c_int {
    ret(state, !bit_arg(state, 1))
}

unsafe extern "C-unwind" fn bswap(state: *mut ffi::lua_State) -> c_int {
    ret(state, bit_arg(state, 1).swap_bytes())
}

/// band/bor/bxor: the first argument, then the others from the last down
/// (the order in which LuaBitOp reads them, which decides which bad
/// argument is reported).
unsafe fn fold(state: *mut ffi::lua_State, op: fn(u32, u32) -> u32) -> c_int {
    let mut bits = bit_arg(state, 1);
    let mut narg = ffi::lua_gettop(state);
    while narg > 1 {
        bits = op(bits, bit_arg(state, narg));
        narg -= 1;
    }
    ret(state, bits)
}

unsafe extern "C-unwind" fn band(state: *mut ffi::lua_State) -> c_int {
    fold(state, |a, b| a & b)
}

unsafe extern "C-unwind" fn bor(state: *mut ffi::lua_State) -> c_int {
    fold(state, |a, b| a | b)
}

unsafe extern "C-unwind" fn bxor(state: *mut ffi::lua_State) -> c_int {
    fold(state, |a, b| a ^ b)
}

unsafe fn shift(state: *mut ffi::lua_State, op: fn(u32, u32) -> u32) -> c_int {
    let bits = bit_arg(state, 1);
    let count = bit_arg(state, 2) & 31;
    ret(state, op(bits, count))
}

unsafe extern "C-unwind" fn lshift(state: *mut ffi::lua_State) -> c_int {
    shift(state, |b, n| b << n)
}

unsafe extern "C-unwind" fn rshift(state: *mut ffi::lua_State) -> c_int {
    shift(state, |b, n| b >> n)
}

unsafe extern "C-unwind" fn arshift(state: *mut ffi::lua_State) -> c_int {
    shift(state, |b, n| ((b as i32) >> n) as u32)
}

unsafe extern "C-unwind" fn rol(state: *mut ffi::lua_State) -> c_int {
    shift(state, u32::rotate_left)
}

unsafe extern "C-unwind" fn ror(state: *mut ffi::lua_State) -> c_int {
    shift(state, u32::rotate_right)
}

/// `bit.tohex(x [, n])`: n hex digits (8 by default), upper case when n is
/// negative, at most 8.
unsafe extern "C-unwind" fn tohex(state: *mut ffi::lua_State) -> c_int {
    let mut bits = bit_arg(state, 1);
    let mut digits = if ffi::lua_type(state, 2) == ffi::LUA_TNONE {
        8
    } else {
        bit_arg(state, 2) as i32
    };
    let mut alphabet = b"0123456789abcdef";
    if digits < 0 {
        // i32::MIN has no positive counterpart; Redis (after CVE-2024-31449)
        // treats it as the largest negative value.
        digits = digits.checked_neg().unwrap_or(i32::MAX);
        alphabet = b"0123456789ABCDEF";
    }
    let digits = digits.min(8) as usize;
    let mut text = [0u8; 8];
    for slot in text[..digits].iter_mut().rev() {
        *slot = alphabet[(bits & 15) as usize];
        bits >>= 4;
    }
    ffi::lua_pushlstring(state, text.as_ptr().cast(), digits);
    1
}
