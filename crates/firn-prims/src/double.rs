//! Doubles as Redis reads and writes them: C's `strtod` (the one parser
//! under every Redis double: `string2d`/`getDoubleFromObject`, SORT, score
//! ranges, Lua's `tonumber`, lua-cjson's numbers) and glibc's
//! `printf("%.<p>g")` (Redis's `%.17g` double replies and listpack scores,
//! Lua's `%.14g` number text, lua-cjson's `encode_number_precision`).
//!
//! Parsing calls the C library's own `strtod` rather than a port: it is
//! the code Redis runs, hexadecimal floats, `nan(...)`, ERANGE and correct
//! rounding included, in the "C" locale Firn never changes.
//!
//! `%.<p>g` is: round to p significant digits (exactly, ties to even);
//! with X the decimal exponent after rounding, use fixed notation when
//! -4 <= X < p, else `d.ddde±XX` (at least two exponent digits); then drop
//! trailing zeros and a trailing '.'. Rust's `{:.<p-1>e}` gives exactly the
//! rounded digits and X (checked against glibc on millions of values, ties
//! included, for p = 17), so only the layout is done here, in a stack
//! buffer.

use std::fmt::Write;

/// C's `isspace` in the "C" locale.
pub fn is_c_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// What [`strtod`] read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strtod {
    pub value: f64,
    /// Bytes consumed, leading spaces included; 0 when nothing converts
    /// (then `value` is 0).
    pub len: usize,
    /// errno was ERANGE: the value overflowed to ±inf or underflowed to 0
    /// or a subnormal.
    pub out_of_range: bool,
}

/// C's `strtod` over `bytes` as a C string (up to the first NUL): leading
/// spaces, a sign, then a decimal number, a hexadecimal one ("0x1.8p3"),
/// "inf"/"infinity" or "nan"/"nan(...)".
pub fn strtod(bytes: &[u8]) -> Strtod {
    // Only a prefix can take part: leading spaces, then bytes of the
    // characters strtod accepts. Copying just that keeps a call on the rest
    // of a long document (lua-cjson reads numbers so) proportional to the
    // number, not to the document.
    let spaces = bytes.iter().take_while(|&&b| is_c_space(b)).count();
    let candidate = bytes[spaces..]
        .iter()
        .take_while(|&&b| {
            b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.' | b'_' | b'(' | b')')
        })
        .count();
    let end = spaces + candidate;
    let mut text = Vec::with_capacity(end + 1);
    text.extend_from_slice(&bytes[..end]);
    text.push(0);
    let mut stop: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `text` is NUL-terminated and outlives the call; strtod only
    // reads it and stores into `stop` a pointer into it. errno is the
    // calling thread's own.
    let (value, out_of_range) = unsafe {
        *libc::__errno_location() = 0;
        let value = libc::strtod(text.as_ptr().cast(), &mut stop);
        (value, *libc::__errno_location() == libc::ERANGE)
    };
    let len = (stop as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(end);
    Strtod {
        value,
        len,
        out_of_range,
    }
}

/// Redis's `string2d` (what `getDoubleFromObject` reads): the whole input
/// is one strtod number, with no leading space, no overflow or underflow to
/// zero, not NaN.
pub fn string2d(bytes: &[u8]) -> Option<f64> {
    if is_c_space(*bytes.first()?) {
        return None;
    }
    let read = strtod(bytes);
    let overflow_or_zero = read.out_of_range && (read.value.is_infinite() || read.value == 0.0);
    if read.len != bytes.len() || overflow_or_zero || read.value.is_nan() {
        return None;
    }
    Some(read.value)
}

/// Room for any text [`write_g`] writes (at most 24 bytes, e.g.
/// "-2.2250738585072014e-308").
pub const G_BUFFER_BYTES: usize = 32;

/// Redis 7.0's double replies: `%.17g`, infinities spelled "inf"/"-inf"
/// (addReplyDouble special-cases them), NaN as glibc prints it ("nan",
/// "-nan").
pub fn format_double(value: f64) -> String {
    format_g(value, 17)
}

/// [`format_double`] into a stack buffer; returns the length.
pub fn write_double(value: f64, out: &mut [u8; G_BUFFER_BYTES]) -> usize {
    write_g(value, 17, out)
}

/// C's `printf("%.<precision>g", value)` as glibc prints it, for a
/// precision of 1 to 17 (a double has no more significant digits; larger
/// precisions are taken as 17, smaller as 1).
pub fn format_g(value: f64, precision: usize) -> String {
    let mut buf = [0u8; G_BUFFER_BYTES];
    let len = write_g(value, precision, &mut buf);
    buf.get(..len)
        .map(|text| String::from_utf8_lossy(text).into_owned())
        .unwrap_or_default()
}

/// [`format_g`] into a stack buffer; returns the length.
pub fn write_g(value: f64, precision: usize, out: &mut [u8; G_BUFFER_BYTES]) -> usize {
    const MAX_PRECISION: usize = 17;
    let precision = precision.clamp(1, MAX_PRECISION);
    let mut writer = StackWriter { buf: out, len: 0 };
    if value.is_nan() {
        writer.push_all(if value.is_sign_negative() {
            b"-nan"
        } else {
            b"nan"
        });
        return writer.len;
    }
    if value.is_infinite() {
        writer.push_all(if value > 0.0 { b"inf" } else { b"-inf" });
        return writer.len;
    }
    if value.is_sign_negative() {
        writer.push(b'-');
    }
    // "d.ddde<X>": `precision` significant digits and the exponent.
    let mut sci_buf = [0u8; G_BUFFER_BYTES];
    let mut sci = StackWriter {
        buf: &mut sci_buf,
        len: 0,
    };
    if write!(sci, "{:.*e}", precision - 1, value.abs()).is_err() {
        return writer.len;
    }
    let sci_len = sci.len;
    let sci_text = sci_buf.get(..sci_len).unwrap_or_default();
    let Some(e_at) = sci_text.iter().position(|&b| b == b'e') else {
        return writer.len;
    };
    let (mantissa, exponent) = sci_text.split_at(e_at);
    let exponent: i32 = std::str::from_utf8(exponent.get(1..).unwrap_or_default())
        .ok()
        .and_then(|e| e.parse().ok())
        .unwrap_or(0);
    let mut digits = [b'0'; MAX_PRECISION];
    let mut count = 0;
    for &b in mantissa.iter().filter(|b| b.is_ascii_digit()) {
        if let Some(slot) = digits.get_mut(count) {
            *slot = b;
            count += 1;
        }
    }
    // Significant digits once trailing zeros are dropped (at least one).
    let significant = digits.iter().rposition(|&b| b != b'0').map_or(1, |i| i + 1);
    let digits = &digits[..];
    if (-4..precision as i32).contains(&exponent) {
        if exponent >= 0 {
            let int_len = exponent as usize + 1;
            writer.push_all(digits.get(..int_len).unwrap_or_default());
            if significant > int_len {
                writer.push(b'.');
                writer.push_all(digits.get(int_len..significant).unwrap_or_default());
            }
        } else {
            writer.push_all(b"0.");
            for _ in 0..(-exponent - 1) {
                writer.push(b'0');
            }
            writer.push_all(digits.get(..significant).unwrap_or_default());
        }
    } else {
        writer.push_all(digits.get(..1).unwrap_or_default());
        if significant > 1 {
            writer.push(b'.');
            writer.push_all(digits.get(1..significant).unwrap_or_default());
        }
        writer.push(b'e');
        writer.push(if exponent < 0 { b'-' } else { b'+' });
        let magnitude = exponent.unsigned_abs();
        if magnitude < 10 {
            writer.push(b'0');
        }
        let _ = write!(writer, "{magnitude}");
    }
    writer.len
}

/// A `fmt::Write` into a fixed buffer; output past its end is an error.
struct StackWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Write for StackWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let dest = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dest.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl StackWriter<'_> {
    fn push(&mut self, byte: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = byte;
            self.len += 1;
        }
    }

    fn push_all(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.push(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &[u8]) -> (f64, usize) {
        let read = strtod(text);
        (read.value, read.len)
    }

    #[test]
    fn strtod_forms() {
        assert_eq!(read(b"12abc"), (12.0, 2));
        assert_eq!(read(b"  -1.5e3x"), (-1500.0, 8));
        assert_eq!(read(b"1e"), (1.0, 1));
        assert_eq!(read(b".5"), (0.5, 2));
        assert_eq!(read(b"1."), (1.0, 2));
        assert_eq!(read(b"0x10"), (16.0, 4));
        assert_eq!(read(b"0x"), (0.0, 1));
        assert_eq!(read(b"0x1p4"), (16.0, 5));
        assert_eq!(read(b"-Infinity"), (f64::NEG_INFINITY, 9));
        assert_eq!(read(b"7\0junk"), (7.0, 1));
        assert_eq!(read(b"1,2"), (1.0, 1));
        assert_eq!(read(b"."), (0.0, 0));
        assert_eq!(read(b"-"), (0.0, 0));
        assert_eq!(read(b"abc"), (0.0, 0));
        assert_eq!(read(b""), (0.0, 0));
        let nan = strtod(b"nan(123)");
        assert!(nan.value.is_nan() && nan.len == 8);
        assert!(strtod(b"1e400").out_of_range);
        assert!(strtod(b"1e-400").out_of_range);
        assert!(!strtod(b"1e300").out_of_range);
    }

    #[test]
    fn floats_follow_strtod() {
        assert_eq!(string2d(b"1.5"), Some(1.5));
        assert_eq!(string2d(b"3e3"), Some(3000.0));
        assert_eq!(string2d(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(string2d(b"nan"), None);
        assert_eq!(string2d(b" 1"), None);
        assert_eq!(string2d(b""), None);
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
        assert_eq!(format_g(2.5, 1), "2");
        assert_eq!(format_g(99999.5, 5), "1e+05");
        assert_eq!(format_g(0.5, 0), "0.5");
    }

    #[test]
    fn double_replies_are_17g() {
        assert_eq!(format_double(f64::INFINITY), "inf");
        assert_eq!(format_double(f64::NEG_INFINITY), "-inf");
        assert_eq!(format_double(f64::NAN), "nan");
        assert_eq!(format_double(-f64::NAN), "-nan");
        assert_eq!(format_double(0.0), "0");
        assert_eq!(format_double(-0.0), "-0");
        assert_eq!(format_double(1.0), "1");
        assert_eq!(format_double(0.1), "0.10000000000000001");
        assert_eq!(format_double(1e16), "10000000000000000");
        assert_eq!(format_double(1e17), "1e+17");
        assert_eq!(format_double(1e-4), "0.0001");
        assert_eq!(format_double(1e-5), "1.0000000000000001e-05");
        assert_eq!(format_double(1e100), "1e+100");
    }
}
