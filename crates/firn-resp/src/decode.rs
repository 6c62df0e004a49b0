//! Request decoding, following Redis 7.0's `processMultibulkBuffer` and
//! `processInlineBuffer` (networking.c) byte for byte:
//!
//! - A request starting with `*` is a multibulk: `*<count>\r\n` then
//!   `count` times `$<len>\r\n<len bytes>` followed by two bytes that Redis
//!   skips without looking at them (normally `\r\n`).
//! - Anything else is an inline line ending in `\n` (an `\r` before it is
//!   dropped), split with `sdssplitargs` quoting rules.
//! - Redis finds line ends with C's `strchr`, which stops at a NUL byte: a
//!   header or inline line with a NUL before its terminator is never
//!   complete, and only the "too big" limit ends the wait. We do the same.
//! - Only the byte *after* a header's `\r` has to be present; it is skipped
//!   unchecked, like the two bytes after a payload.
//!
//! The buffer is left untouched until a whole request is present; then the
//! request is split off and frozen once, and every argument is a zero-copy
//! slice of it (inline arguments too, unless quoting rewrote them).
//!
//! [`RequestDecoder`] remembers how far it has validated a partial request,
//! so a request arriving in many reads is scanned once in total. The free
//! function [`decode_request`] is the same decoder without memory: a partial
//! request is re-parsed from its first header on each call, which costs
//! O(arguments) per call and never touches payload bytes, so one huge bulk
//! is cheap, but a request with millions of arguments arriving in small
//! pieces is quadratic: a connection should hold a `RequestDecoder`.

use bytes::{Bytes, BytesMut};

use crate::encode::Reply;
use firn_prims::splitargs::{split_tokens, Token};
use firn_prims::string2ll;

/// Limits enforced while decoding (configured by the server).
#[derive(Clone, Debug)]
pub struct Limits {
    /// `proto-max-bulk-len`: the largest bulk argument (default 512 MiB).
    pub max_bulk_len: u64,
    /// The largest multibulk count. Redis 7.0 accepts up to `INT_MAX`
    /// (older Redis used 1024*1024); verified on 7.0.15: `*2147483647`
    /// waits for arguments, `*2147483648` is an invalid multibulk length.
    pub max_multibulk_len: u64,
    /// `PROTO_INLINE_MAX_SIZE` (64 KiB): the longest inline request, and
    /// the longest `*`/`$` header line, before a "too big" error.
    pub max_inline_len: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bulk_len: 512 * 1024 * 1024,
            max_multibulk_len: i32::MAX as u64,
            max_inline_len: 64 * 1024,
        }
    }
}

/// Redis's protocol errors. `Display` is the reply text without the "ERR "
/// prefix, exactly as Redis 7.0.15 sends it (all verified against a live
/// server, see the tests), except that a byte >= 0x80 in
/// [`ProtocolError::ExpectedDollar`] is shown as the Latin-1 character:
/// Redis sends the raw byte, which [`ProtocolError::to_reply`] reproduces.
/// After replying, the server closes the connection, as Redis does.
#[derive(Debug, thiserror::Error, PartialEq, Eq, Clone)]
pub enum ProtocolError {
    #[error("Protocol error: invalid multibulk length")]
    InvalidMultibulkLength,
    #[error("Protocol error: invalid bulk length")]
    InvalidBulkLength,
    /// The byte found where a `$` header was expected.
    #[error("Protocol error: expected '$', got '{}'", shown_byte(*.0))]
    ExpectedDollar(u8),
    #[error("Protocol error: unbalanced quotes in request")]
    UnbalancedQuotes,
    #[error("Protocol error: too big inline request")]
    TooBigInline,
    #[error("Protocol error: too big mbulk count string")]
    TooBigMbulkCount,
    #[error("Protocol error: too big bulk count string")]
    TooBigBulkCount,
    /// More than 10 arguments before AUTH (Redis's `authRequired` limit).
    #[error("Protocol error: unauthenticated multibulk length")]
    UnauthenticatedMultibulk,
    /// A bulk longer than 16384 bytes before AUTH.
    #[error("Protocol error: unauthenticated bulk length")]
    UnauthenticatedBulk,
}

/// Redis replaces `\r` and `\n` in error texts with spaces.
fn shown_byte(byte: u8) -> char {
    match byte {
        b'\r' | b'\n' => ' ',
        other => char::from(other),
    }
}

impl ProtocolError {
    /// The error reply Redis sends, byte-identical (including a raw
    /// non-ASCII byte in "expected '$', got 'X'").
    pub fn to_reply(&self) -> Reply {
        match self {
            ProtocolError::ExpectedDollar(byte) => {
                let mut text = b"ERR Protocol error: expected '$', got '".to_vec();
                text.push(*byte);
                text.push(b'\'');
                Reply::Error(Bytes::from(text))
            }
            other => Reply::Error(Bytes::from(format!("ERR {other}"))),
        }
    }
}

/// Redis's limits for a client that still has to authenticate
/// (networking.c, since the fix for CVE-2021-32675).
const UNAUTH_MAX_MULTIBULK: i64 = 10;
const UNAUTH_MAX_BULK: i64 = 16384;

/// Decodes one request from the front of `buf`.
///
/// - `Ok(None)`: more bytes are needed; `buf` is untouched.
/// - `Ok(Some(args))`: one request was split off `buf`; `args` are slices
///   of it. `args` may be empty (blank inline line, `*0`, `*-1`): the
///   server skips those, as Redis does.
/// - `Err(e)`: reply `e.to_reply()` and close the connection.
///
/// `authenticated == false` applies Redis's stricter limits for clients
/// that have not passed AUTH yet (more than 10 arguments or a bulk over
/// 16384 bytes is an error).
pub fn decode_request(
    buf: &mut BytesMut,
    limits: &Limits,
    authenticated: bool,
) -> Result<Option<Vec<Bytes>>, ProtocolError> {
    RequestDecoder::new().decode(buf, limits, authenticated)
}

/// A request decoder that remembers its progress through a partial
/// request, so that bytes are validated once however many reads the request
/// takes to arrive (Redis keeps the same state in its client struct).
///
/// Use one decoder per connection, always with the same buffer, and only
/// append to that buffer between calls that return `Ok(None)`. After
/// `Ok(Some(_))` or `Err(_)` the decoder starts afresh. If the buffer is
/// shorter than what the decoder has already seen (it was modified
/// elsewhere), the decoder starts over from the front; it never panics.
#[derive(Debug, Default)]
pub struct RequestDecoder {
    /// Offset in the buffer of the next header (or payload) to read.
    pos: usize,
    /// Where the search for the current line's terminator resumes: bytes
    /// before it have been searched already (or it points at the NUL that
    /// blocks the line, which the next search finds again at once).
    search_from: usize,
    /// The multibulk in progress, once its `*<count>` line was read.
    multibulk: Option<Multibulk>,
    /// `(start, end)` of each complete argument of the multibulk in
    /// progress. Kept here, not in `Multibulk`, so its capacity is reused.
    spans: Vec<(usize, usize)>,
}

#[derive(Debug)]
struct Multibulk {
    /// Arguments not read yet (including one whose payload is pending).
    remaining: usize,
    /// Length of the argument whose `$<len>` line was read and whose
    /// payload starts at `pos`.
    bulk_len: Option<usize>,
}

/// A line search outcome: the offset of the terminator, or not yet.
enum Line {
    Found(usize),
    Pending,
}

impl RequestDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// The buffer length that the request in progress needs at least, when
    /// the decoder knows it (it is inside a bulk payload). A server may
    /// reserve that much at once instead of growing its buffer by doubling.
    pub fn min_buffer_len(&self) -> Option<usize> {
        let bulk_len = self.multibulk.as_ref()?.bulk_len?;
        self.pos.checked_add(bulk_len)?.checked_add(2)
    }

    /// How many bytes at the front of the buffer hold complete arguments
    /// (and their headers) of the multibulk in progress; 0 between
    /// requests and for an inline request. Redis moves those arguments out
    /// of its query buffer, so `client-query-buffer-limit` applies to the
    /// rest.
    pub fn complete_prefix_len(&self) -> usize {
        if self.multibulk.is_some() {
            self.pos
        } else {
            0
        }
    }

    /// Decodes one request from the front of `buf`; see [`decode_request`]
    /// for the meaning of the result.
    pub fn decode(
        &mut self,
        buf: &mut BytesMut,
        limits: &Limits,
        authenticated: bool,
    ) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        if self.pos > buf.len() || self.search_from > buf.len() {
            self.reset();
        }
        let result = if self.multibulk.is_some() {
            self.continue_multibulk(buf, limits, authenticated)
        } else {
            match buf.first() {
                None => Ok(None),
                Some(b'*') => self.start_multibulk(buf, limits, authenticated),
                Some(_) => self.inline(buf, limits),
            }
        };
        if !matches!(result, Ok(None)) {
            self.reset();
        }
        result
    }

    fn reset(&mut self) {
        self.pos = 0;
        self.search_from = 0;
        self.multibulk = None;
        self.spans.clear();
    }

    /// Finds `terminator` for the line starting at `self.pos`, the way C's
    /// `strchr` would: a NUL byte first means "not found". When it is not
    /// found and the line already exceeds `max_inline_len`, that is
    /// `too_big`.
    fn find_line(
        &mut self,
        buf: &[u8],
        terminator: u8,
        max_inline_len: usize,
        too_big: ProtocolError,
    ) -> Result<Line, ProtocolError> {
        let unsearched = buf.get(self.search_from..).unwrap_or_default();
        match memchr::memchr2(terminator, 0, unsearched) {
            Some(offset) if unsearched.get(offset) == Some(&terminator) => {
                self.search_from += offset;
                return Ok(Line::Found(self.search_from));
            }
            Some(offset) => self.search_from += offset,
            None => self.search_from = buf.len(),
        }
        if buf.len() - self.pos > max_inline_len {
            return Err(too_big);
        }
        Ok(Line::Pending)
    }

    /// Like `find_line` for a `*` or `$` header: also needs the byte after
    /// the `\r` (skipped unchecked, like Redis does). Returns the `\r`.
    fn find_header(
        &mut self,
        buf: &[u8],
        max_inline_len: usize,
        too_big: ProtocolError,
    ) -> Result<Option<usize>, ProtocolError> {
        match self.find_line(buf, b'\r', max_inline_len, too_big)? {
            // Redis waits for the byte after '\r' but never reports "too
            // big" once a '\r' is there (verified on 7.0.15).
            Line::Found(cr) if cr + 1 < buf.len() => Ok(Some(cr)),
            Line::Found(_) | Line::Pending => Ok(None),
        }
    }

    fn start_multibulk(
        &mut self,
        buf: &mut BytesMut,
        limits: &Limits,
        authenticated: bool,
    ) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        let Some(cr) =
            self.find_header(buf, limits.max_inline_len, ProtocolError::TooBigMbulkCount)?
        else {
            return Ok(None);
        };
        let count = match buf.get(1..cr).and_then(string2ll) {
            Some(n) if n <= 0 || (n as u64) <= limits.max_multibulk_len => n,
            _ => return Err(ProtocolError::InvalidMultibulkLength),
        };
        if count > UNAUTH_MAX_MULTIBULK && !authenticated {
            return Err(ProtocolError::UnauthenticatedMultibulk);
        }
        let end = cr + 2;
        if count <= 0 {
            let _ = buf.split_to(end);
            return Ok(Some(Vec::new()));
        }
        let Ok(remaining) = usize::try_from(count) else {
            return Err(ProtocolError::InvalidMultibulkLength);
        };
        self.pos = end;
        self.search_from = end;
        self.multibulk = Some(Multibulk {
            remaining,
            bulk_len: None,
        });
        self.spans.clear();
        // Like Redis, do not trust the count for the allocation.
        self.spans.reserve(remaining.min(1024));
        self.continue_multibulk(buf, limits, authenticated)
    }

    fn continue_multibulk(
        &mut self,
        buf: &mut BytesMut,
        limits: &Limits,
        authenticated: bool,
    ) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        let Some(mut multibulk) = self.multibulk.take() else {
            return Ok(None);
        };
        let result = self.read_arguments(&mut multibulk, buf, limits, authenticated);
        self.multibulk = Some(multibulk);
        if !matches!(result, Ok(true)) {
            return result.map(|_| None);
        }
        let request = buf.split_to(self.pos).freeze();
        Ok(Some(
            self.spans
                .iter()
                .map(|&(start, end)| request.slice(start..end))
                .collect(),
        ))
    }

    /// Reads arguments until the multibulk is complete (`Ok(true)`) or the
    /// buffer runs out (`Ok(false)`).
    fn read_arguments(
        &mut self,
        multibulk: &mut Multibulk,
        buf: &[u8],
        limits: &Limits,
        authenticated: bool,
    ) -> Result<bool, ProtocolError> {
        while multibulk.remaining > 0 {
            let bulk_len = match multibulk.bulk_len {
                Some(len) => len,
                None => {
                    let Some(cr) = self.find_header(
                        buf,
                        limits.max_inline_len,
                        ProtocolError::TooBigBulkCount,
                    )?
                    else {
                        return Ok(false);
                    };
                    let first = buf.get(self.pos).copied().unwrap_or(0);
                    if first != b'$' {
                        return Err(ProtocolError::ExpectedDollar(first));
                    }
                    let len = match buf.get(self.pos + 1..cr).and_then(string2ll) {
                        Some(n) if n >= 0 && (n as u64) <= limits.max_bulk_len => n,
                        _ => return Err(ProtocolError::InvalidBulkLength),
                    };
                    if len > UNAUTH_MAX_BULK && !authenticated {
                        return Err(ProtocolError::UnauthenticatedBulk);
                    }
                    let Ok(len) = usize::try_from(len) else {
                        return Err(ProtocolError::InvalidBulkLength);
                    };
                    self.pos = cr + 2;
                    self.search_from = self.pos;
                    multibulk.bulk_len = Some(len);
                    len
                }
            };
            // The payload and the two bytes after it, which Redis skips
            // without checking them (verified: "$4\r\nPINGxy" is PING).
            let available = buf.len() - self.pos;
            if available < 2 || available - 2 < bulk_len {
                return Ok(false);
            }
            self.spans.push((self.pos, self.pos + bulk_len));
            self.pos += bulk_len + 2;
            self.search_from = self.pos;
            multibulk.bulk_len = None;
            multibulk.remaining -= 1;
        }
        Ok(true)
    }

    fn inline(
        &mut self,
        buf: &mut BytesMut,
        limits: &Limits,
    ) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        let newline = match self.find_line(
            buf,
            b'\n',
            limits.max_inline_len,
            ProtocolError::TooBigInline,
        )? {
            Line::Found(newline) => newline,
            Line::Pending => return Ok(None),
        };
        let line_end = match newline.checked_sub(1) {
            Some(cr) if buf.get(cr) == Some(&b'\r') => cr,
            _ => newline,
        };
        let tokens = split_tokens(buf.get(..line_end).unwrap_or_default())
            .ok_or(ProtocolError::UnbalancedQuotes)?;
        let line = buf.split_to(newline + 1).freeze();
        Ok(Some(
            tokens
                .into_iter()
                .map(|token| match token {
                    Token::Slice(start, end) => line.slice(start..end),
                    Token::Owned(bytes) => Bytes::from(bytes),
                })
                .collect(),
        ))
    }
}

#[cfg(test)]
mod tests;
