//! Argument parsing shared by every command: Redis's number rules and the
//! option cursor used for EX/PX/NX/XX/GET/LIMIT-style flags.

use bytes::Bytes;

use crate::errors::{CmdError, CmdResult, NOT_INTEGER, SYNTAX};

/// Redis's `string2ll` (`firn-prims`): optional '-', no '+', no leading
/// zeros or spaces, must fit in an i64.
pub use firn_prims::string2ll as parse_i64;

/// Redis's `string2d`, what `getDoubleFromObject` reads (`firn-prims`): the
/// whole argument is one strtod number, with no leading space, no overflow
/// or underflow to zero, not NaN.
pub use firn_prims::string2d as parse_double;

pub fn parse_u64(bytes: &[u8]) -> Option<u64> {
    parse_i64(bytes).and_then(|v| u64::try_from(v).ok())
}

/// An integer argument, or Redis's "value is not an integer" error.
pub fn int_arg(bytes: &[u8]) -> CmdResult<i64> {
    parse_i64(bytes).ok_or(CmdError::Static(NOT_INTEGER))
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
