//! Argument parsing shared by every command: Redis's number rules and the
//! option cursor used for EX/PX/NX/XX/GET/LIMIT-style flags.

use bytes::Bytes;

use crate::errors::{CmdError, CmdResult, NOT_FLOAT, NOT_INTEGER, SYNTAX};

/// Redis's `string2ll`: optional '-', no '+', no leading zeros or spaces,
/// must fit in an i64. The storage layer owns it because the same rule
/// decides whether a set member fits an intset.
pub fn parse_i64(bytes: &[u8]) -> Option<i64> {
    firn_storage::intset_value(bytes)
}

pub fn parse_u64(bytes: &[u8]) -> Option<u64> {
    parse_i64(bytes).and_then(|v| u64::try_from(v).ok())
}

/// An integer argument, or Redis's "value is not an integer" error.
pub fn int_arg(bytes: &[u8]) -> CmdResult<i64> {
    parse_i64(bytes).ok_or(CmdError::Static(NOT_INTEGER))
}

/// Redis's `string2d`/`getDoubleFromObject`: strtod over the whole string,
/// no leading space, NaN rejected; "inf"/"-inf" accepted.
pub fn parse_f64(bytes: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(bytes).ok()?;
    if text.is_empty() || text.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    let value = match lower.as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
        "-inf" | "-infinity" => f64::NEG_INFINITY,
        _ => {
            if lower.contains("inf") || lower.contains("nan") || lower.contains('_') {
                return None;
            }
            lower.parse::<f64>().ok()?
        }
    };
    if value.is_nan() {
        None
    } else {
        Some(value)
    }
}

pub fn float_arg(bytes: &[u8]) -> CmdResult<f64> {
    parse_f64(bytes).ok_or(CmdError::Static(NOT_FLOAT))
}

/// C's `strtod` over `bytes` up to the first NUL (where a C string ends):
/// the value, how many bytes it consumed, and whether errno was ERANGE.
pub fn c_strtod(bytes: &[u8]) -> (f64, usize, bool) {
    let end = memchr::memchr(0, bytes).unwrap_or(bytes.len());
    let mut text = Vec::with_capacity(end + 1);
    text.extend_from_slice(&bytes[..end]);
    text.push(0);
    let mut stop: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `text` is NUL-terminated and outlives the call; strtod only
    // reads it and stores into `stop` a pointer into it. errno is the
    // calling thread's own.
    let (value, erange) = unsafe {
        *libc::__errno_location() = 0;
        let value = libc::strtod(text.as_ptr().cast(), &mut stop);
        (value, *libc::__errno_location() == libc::ERANGE)
    };
    let consumed = (stop as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(end);
    (value, consumed, erange)
}

/// Redis's `getDoubleFromObject`: the whole argument is one strtod number,
/// with no leading space, no overflow or underflow to zero, not NaN.
pub fn parse_double(bytes: &[u8]) -> Option<f64> {
    let first = *bytes.first()?;
    if matches!(first, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        return None;
    }
    let (value, consumed, erange) = c_strtod(bytes);
    let out_of_range = erange && (value.is_infinite() || value == 0.0);
    if consumed != bytes.len() || out_of_range || value.is_nan() {
        return None;
    }
    Some(value)
}

/// Case-insensitive ASCII comparison of an argument with a keyword.
pub fn is(arg: &[u8], keyword: &str) -> bool {
    arg.eq_ignore_ascii_case(keyword.as_bytes())
}

/// Walks option arguments left to right.
pub struct ArgCursor<'a> {
    args: &'a [Bytes],
    pos: usize,
}

impl<'a> ArgCursor<'a> {
    pub fn new(args: &'a [Bytes], start: usize) -> Self {
        ArgCursor { args, pos: start }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.args.len()
    }

    pub fn peek(&self) -> Option<&'a Bytes> {
        self.args.get(self.pos)
    }

    pub fn next_arg(&mut self) -> Option<&'a Bytes> {
        let arg = self.args.get(self.pos);
        if arg.is_some() {
            self.pos += 1;
        }
        arg
    }

    /// The value following an option keyword, or a syntax error.
    pub fn value(&mut self) -> CmdResult<&'a Bytes> {
        self.next_arg().ok_or(CmdError::Static(SYNTAX))
    }

    pub fn int_value(&mut self) -> CmdResult<i64> {
        let v = self.value()?;
        int_arg(v)
    }

    /// Consumes the next argument if it equals `keyword`.
    pub fn eat(&mut self, keyword: &str) -> bool {
        match self.peek() {
            Some(arg) if is(arg, keyword) => {
                self.pos += 1;
                true
            }
            _ => false,
        }
    }

    pub fn rest(&self) -> &'a [Bytes] {
        &self.args[self.pos.min(self.args.len())..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_follow_strtod() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"3e3"), Some(3000.0));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"nan"), None);
        assert_eq!(parse_f64(b" 1"), None);
        assert_eq!(parse_f64(b""), None);
    }
}
