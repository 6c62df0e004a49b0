//! `bit`: LuaBitOp as Redis builds it for Lua 5.1 with double numbers.
//!
//! An argument becomes 32 bits the LuaBitOp way: add 2^52+2^51 to the
//! double and keep the low 32 bits of its representation (rounding to the
//! nearest integer, ties to even, wrapping modulo 2^32 for values up to
//! 2^51, and exactly the same bits as the C code for anything else). A
//! string that Lua can convert counts as a number. Results are signed
//! 32-bit numbers. Shift counts use their low 5 bits.

use super::{lib_function, Args, LibResult, Ret};
use mlua::{Lua, Table, Value};

pub(crate) fn module(lua: &Lua) -> mlua::Result<Table> {
    let bit = lua.create_table()?;
    bit.set(
        "tobit",
        lib_function(lua, |_, args| ret(bit_arg(&args, 1)?))?,
    )?;
    bit.set(
        "bnot",
        lib_function(lua, |_, args| ret(!bit_arg(&args, 1)?))?,
    )?;
    bit.set(
        "band",
        lib_function(lua, |_, args| fold(&args, |a, b| a & b))?,
    )?;
    bit.set(
        "bor",
        lib_function(lua, |_, args| fold(&args, |a, b| a | b))?,
    )?;
    bit.set(
        "bxor",
        lib_function(lua, |_, args| fold(&args, |a, b| a ^ b))?,
    )?;
    bit.set(
        "lshift",
        lib_function(lua, |_, args| shift(&args, |b, n| b << n))?,
    )?;
    bit.set(
        "rshift",
        lib_function(lua, |_, args| shift(&args, |b, n| b >> n))?,
    )?;
    bit.set(
        "arshift",
        lib_function(lua, |_, args| shift(&args, |b, n| ((b as i32) >> n) as u32))?,
    )?;
    bit.set(
        "rol",
        lib_function(lua, |_, args| shift(&args, u32::rotate_left))?,
    )?;
    bit.set(
        "ror",
        lib_function(lua, |_, args| shift(&args, u32::rotate_right))?,
    )?;
    bit.set(
        "bswap",
        lib_function(lua, |_, args| ret(bit_arg(&args, 1)?.swap_bytes()))?,
    )?;
    bit.set("tohex", lib_function(lua, tohex)?)?;
    Ok(bit)
}

/// LuaBitOp's `barg`.
fn bit_arg(args: &Args, narg: usize) -> LibResult<u32> {
    let number = args.to_number(narg);
    let bits = (number.unwrap_or(0.0) + 6_755_399_441_055_744.0).to_bits() as u32;
    if bits == 0 && number.is_none() {
        return Err(args.type_error(narg, "number"));
    }
    Ok(bits)
}

fn ret(bits: u32) -> LibResult<Ret> {
    Ret::number(f64::from(bits as i32))
}

/// band/bor/bxor: the first argument, then the others from the last down
/// (the order in which LuaBitOp reads them, which decides which bad
/// argument is reported).
fn fold(args: &Args, op: fn(u32, u32) -> u32) -> LibResult<Ret> {
    let mut bits = bit_arg(args, 1)?;
    for narg in (2..=args.count()).rev() {
        bits = op(bits, bit_arg(args, narg)?);
    }
    ret(bits)
}

fn shift(args: &Args, op: fn(u32, u32) -> u32) -> LibResult<Ret> {
    let bits = bit_arg(args, 1)?;
    let count = bit_arg(args, 2)? & 31;
    ret(op(bits, count))
}

/// `bit.tohex(x [, n])`: n hex digits (8 by default), upper case when n is
/// negative, at most 8.
fn tohex(lua: &Lua, args: Args) -> LibResult<Ret> {
    let mut bits = bit_arg(&args, 1)?;
    let mut digits = if args.get(2).is_none() {
        8
    } else {
        bit_arg(&args, 2)? as i32
    };
    let mut alphabet = b"0123456789abcdef";
    if digits < 0 {
        // i32::MIN has no positive counterpart; Redis (after CVE-2024-31449)
        // treats it as the largest negative value.
        digits = digits.checked_neg().unwrap_or(i32::MAX);
        alphabet = b"0123456789ABCDEF";
    }
    let digits = digits.min(8) as usize;
    let mut text = vec![0u8; digits];
    for slot in text.iter_mut().rev() {
        *slot = alphabet[(bits & 15) as usize];
        bits >>= 4;
    }
    Ret::one(Value::String(lua.create_string(text)?))
}
