//! `struct`: Roberto Ierusalimschy's struct library as Redis ships it
//! (x86-64: little-endian native order, `long` and `size_t` of 8 bytes).
//!
//! Format: `<` `>` select the byte order, `!n` the maximum alignment (8 by
//! default when n is omitted; 1 until the first `!`), a space is ignored;
//! `b B h H l L T i[n] I[n]` are integers (lower case signed), `f d`
//! floats, `c[n]` a fixed string (`c0`: the whole string when packing, the
//! previous result as length when unpacking), `s` a zero-terminated
//! string, `x` a pad byte. The quirks of the C code are kept: an integer
//! wider than 8 bytes packs zeros above the 8 low bytes and unpacks with
//! the sign taken from bit 63; "string too short" names the argument after
//! the string; `size` ignores unknown letters and digits.

use super::{lib_function, Args, Fail, LibResult, LuaStack, Ret, MAX_C_STACK};
use mlua::{Lua, Table, Value};

const MAX_INT_SIZE: usize = 32;
const MAX_ALIGN: usize = 8;

pub(crate) fn module(lua: &Lua) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    table.set("pack", lib_function(lua, pack)?)?;
    table.set("unpack", lib_function(lua, unpack)?)?;
    table.set("size", lib_function(lua, size)?)?;
    Ok(table)
}

struct Header {
    little_endian: bool,
    align: usize,
}

impl Header {
    fn new() -> Header {
        Header {
            little_endian: true,
            align: 1,
        }
    }
}

/// A format string being read.
struct Format {
    text: Vec<u8>,
    pos: usize,
}

impl Format {
    fn next_option(&mut self) -> Option<u8> {
        let opt = *self.text.get(self.pos)?;
        self.pos += 1;
        Some(opt)
    }

    /// `getnum`: a decimal number at the cursor, or `default`.
    fn number(&mut self, default: usize) -> LibResult<usize> {
        if !self.text.get(self.pos).is_some_and(u8::is_ascii_digit) {
            return Ok(default);
        }
        let mut value: i32 = 0;
        while let Some(&digit) = self.text.get(self.pos).filter(|b| b.is_ascii_digit()) {
            let digit = i32::from(digit - b'0');
            if value > i32::MAX / 10 || value * 10 > i32::MAX - digit {
                return Err(Fail::error("integral size overflow"));
            }
            value = value * 10 + digit;
            self.pos += 1;
        }
        Ok(value as usize)
    }

    /// `optsize`: the size of an option (0 for control options and `s`).
    fn size(&mut self, opt: u8) -> LibResult<usize> {
        Ok(match opt {
            b'B' | b'b' => 1,
            b'H' | b'h' => 2,
            b'L' | b'l' | b'T' | b'd' => 8,
            b'f' => 4,
            b'x' => 1,
            b'c' => self.number(1)?,
            b'i' | b'I' => {
                let size = self.number(4)?;
                if size > MAX_INT_SIZE {
                    return Err(Fail::error(format!(
                        "integral size {size} is larger than limit of {MAX_INT_SIZE}"
                    )));
                }
                size
            }
            _ => 0,
        })
    }

    /// `controloptions`.
    fn control(&mut self, opt: u8, header: &mut Header) -> LibResult<()> {
        match opt {
            b' ' => {}
            b'>' => header.little_endian = false,
            b'<' => header.little_endian = true,
            b'!' => {
                let align = self.number(MAX_ALIGN)?;
                if !align.is_power_of_two() {
                    return Err(Fail::error(format!(
                        "alignment {align} is not a power of 2"
                    )));
                }
                header.align = align;
            }
            _ => {
                let mut message = b"invalid format option '".to_vec();
                message.push(opt);
                message.push(b'\'');
                return Err(Fail::Arg(1, message));
            }
        }
        Ok(())
    }
}

/// `gettoalign`: padding before an item of `size` bytes at offset `len`.
fn padding(len: usize, header: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(header.align);
    size.wrapping_sub(len & size.wrapping_sub(1)) & size.wrapping_sub(1)
}

fn is_integer_option(opt: u8) -> bool {
    matches!(
        opt,
        b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I'
    )
}

/// The C conversion of a double to `unsigned long` as gcc compiles it on
/// x86-64: through `long` below 2^63, with the top bit flipped above.
fn double_to_u64(n: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if n < TWO_63 {
        super::number_to_integer(n) as u64
    } else {
        (super::number_to_integer(n - TWO_63) as u64) ^ (1 << 63)
    }
}

fn pack(lua: &Lua, args: Args) -> LibResult<Ret> {
    let mut format = Format {
        text: args.check_c_string(1)?,
        pos: 0,
    };
    // The C code pushes a nil after the arguments before reading them, so
    // a missing argument right after the last is reported as nil.
    let args = args.with_nil_pushed();
    let mut header = Header::new();
    let mut out = Vec::new();
    let mut narg = 2;
    while let Some(opt) = format.next_option() {
        let mut size = format.size(opt)?;
        let pad = padding(out.len(), &header, opt, size);
        out.resize(out.len() + pad, 0);
        match opt {
            _ if is_integer_option(opt) => {
                let n = args.check_number(narg)?;
                narg += 1;
                let value = if n < 0.0 {
                    super::number_to_integer(n) as u64
                } else {
                    double_to_u64(n)
                };
                let bytes = value.to_le_bytes();
                let mut item: Vec<u8> = (0..size)
                    .map(|i| bytes.get(i).copied().unwrap_or(0))
                    .collect();
                if !header.little_endian {
                    item.reverse();
                }
                out.extend_from_slice(&item);
            }
            b'x' => out.push(0),
            b'f' => {
                let n = args.check_number(narg)? as f32;
                narg += 1;
                if header.little_endian {
                    out.extend_from_slice(&n.to_le_bytes());
                } else {
                    out.extend_from_slice(&n.to_be_bytes());
                }
            }
            b'd' => {
                let n = args.check_number(narg)?;
                narg += 1;
                if header.little_endian {
                    out.extend_from_slice(&n.to_le_bytes());
                } else {
                    out.extend_from_slice(&n.to_be_bytes());
                }
            }
            b'c' | b's' => {
                let text = args.check_bytes(narg)?;
                narg += 1;
                if size == 0 {
                    size = text.len();
                }
                if text.len() < size {
                    return Err(Fail::arg(narg as i32, "string too short"));
                }
                out.extend_from_slice(&text[..size]);
                if opt == b's' {
                    out.push(0);
                }
            }
            _ => format.control(opt, &mut header)?,
        }
    }
    Ret::one(Value::String(lua.create_string(out)?))
}

/// `getinteger`: `size` bytes in the given order, sign-extended from the
/// top bit of the item (bit 63 for items wider than 8 bytes, as x86 masks
/// the shift count).
fn read_integer(bytes: &[u8], little_endian: bool, signed: bool) -> f64 {
    let mut value: u64 = 0;
    let mut push = |byte: u8| value = value << 8 | u64::from(byte);
    if little_endian {
        bytes.iter().rev().for_each(|&b| push(b));
    } else {
        bytes.iter().for_each(|&b| push(b));
    }
    if !signed {
        return value as f64;
    }
    let shift = ((bytes.len() as u32) * 8).wrapping_sub(1) & 63;
    let mask = u64::MAX << shift;
    if value & mask != 0 {
        value |= mask;
    }
    value as i64 as f64
}

fn unpack(lua: &Lua, args: Args) -> LibResult<Ret> {
    let mut format = Format {
        text: args.check_c_string(1)?,
        pos: 0,
    };
    let data = args.check_bytes(2)?;
    let mut pos = args.opt_integer(3, 1)? as u64 as usize;
    if pos == 0 {
        return Err(Fail::arg(3, "offset must be 1 or greater"));
    }
    pos -= 1;
    let len = data.len();
    let mut header = Header::new();
    let mut results = LuaStack::new();
    let too_short = || Fail::arg(2, "data string too short");
    while let Some(opt) = format.next_option() {
        let mut size = format.size(opt)?;
        pos = pos.wrapping_add(padding(pos, &header, opt, size));
        if size > len || pos > len - size {
            return Err(too_short());
        }
        if args.count() + results.len() + 2 > MAX_C_STACK {
            return Err(Fail::error("stack overflow (too many results)"));
        }
        let item = &data[pos..pos + size];
        match opt {
            _ if is_integer_option(opt) => {
                let signed = opt.is_ascii_lowercase();
                results.push(
                    lua,
                    Value::Number(read_integer(item, header.little_endian, signed)),
                )?;
            }
            b'x' => {}
            b'f' => {
                let bytes: [u8; 4] = item.try_into().map_err(|_| too_short())?;
                let n = if header.little_endian {
                    f32::from_le_bytes(bytes)
                } else {
                    f32::from_be_bytes(bytes)
                };
                results.push(lua, Value::Number(f64::from(n)))?;
            }
            b'd' => {
                let bytes: [u8; 8] = item.try_into().map_err(|_| too_short())?;
                let n = if header.little_endian {
                    f64::from_le_bytes(bytes)
                } else {
                    f64::from_be_bytes(bytes)
                };
                results.push(lua, Value::Number(n))?;
            }
            b'c' => {
                if size == 0 {
                    let previous = match results.len() {
                        0 => None,
                        _ => super::to_number(&results.last()?),
                    };
                    let Some(previous) = previous else {
                        return Err(Fail::error("format 'c0' needs a previous size"));
                    };
                    results.pop()?;
                    size = double_to_u64(previous) as usize;
                    if size > len || pos > len - size {
                        return Err(too_short());
                    }
                }
                results.push(
                    lua,
                    Value::String(lua.create_string(&data[pos..pos + size])?),
                )?;
            }
            b's' => {
                let Some(nul) = data[pos..].iter().position(|&b| b == 0) else {
                    return Err(Fail::error("unfinished string in data"));
                };
                size = nul + 1;
                results.push(
                    lua,
                    Value::String(lua.create_string(&data[pos..pos + nul])?),
                )?;
            }
            _ => format.control(opt, &mut header)?,
        }
        pos = pos.wrapping_add(size);
    }
    results.push(lua, Value::Number(pos.wrapping_add(1) as i64 as f64))?;
    results.into_results()
}

fn size(_: &Lua, args: Args) -> LibResult<Ret> {
    let mut format = Format {
        text: args.check_c_string(1)?,
        pos: 0,
    };
    let mut header = Header::new();
    let mut pos: usize = 0;
    while let Some(opt) = format.next_option() {
        let size = format.size(opt)?;
        pos = pos.wrapping_add(padding(pos, &header, opt, size));
        if opt == b's' {
            return Err(Fail::arg(1, "option 's' has no fixed size"));
        } else if opt == b'c' && size == 0 {
            return Err(Fail::arg(1, "option 'c0' has no fixed size"));
        }
        if !opt.is_ascii_alphanumeric() {
            format.control(opt, &mut header)?;
        }
        pos = pos.wrapping_add(size);
    }
    Ret::number(pos as i64 as f64)
}
