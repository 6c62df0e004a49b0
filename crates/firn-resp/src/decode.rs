//! Request decoding, following Redis 7.0's `processMultibulkBuffer` and
//! `processInlineBuffer`: a request starting with `*` is a multibulk array
//! of `$len` bulk strings; anything else is an inline line split with
//! `sdssplitargs` quoting rules.
//!
//! The decoder leaves `buf` untouched until a whole request is present,
//! then splits it off and hands out zero-copy `Bytes` slices. To stay linear
//! on a huge bulk arriving in pieces it first checks the total length the
//! headers announce before scanning further.

use bytes::{Bytes, BytesMut};

/// Limits enforced while decoding (configured by the server).
#[derive(Clone, Debug)]
pub struct Limits {
    /// `proto-max-bulk-len`: the largest bulk argument.
    pub max_bulk_len: u64,
    /// The largest multibulk count (Redis 7.0: INT_MAX).
    pub max_multibulk_len: u64,
    /// `PROTO_INLINE_MAX_SIZE`: the longest inline line or header line.
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
/// prefix. After replying, the server closes the connection, as Redis does.
#[derive(Debug, thiserror::Error, PartialEq, Eq, Clone)]
pub enum ProtocolError {
    #[error("Protocol error: invalid multibulk length")]
    InvalidMultibulkLength,
    #[error("Protocol error: invalid bulk length")]
    InvalidBulkLength,
    #[error("Protocol error: expected '$', got '{0}'")]
    ExpectedDollar(char),
    #[error("Protocol error: unbalanced quotes in request")]
    UnbalancedQuotes,
    #[error("Protocol error: too big inline request")]
    TooBigInline,
    #[error("Protocol error: too big mbulk count string")]
    TooBigMbulkCount,
    #[error("Protocol error: too big bulk count string")]
    TooBigBulkCount,
    #[error("Protocol error: unauthenticated multibulk length")]
    UnauthenticatedMultibulk,
    #[error("Protocol error: unauthenticated bulk length")]
    UnauthenticatedBulk,
}

/// Redis's unauthenticated-client limits (networking.c).
const UNAUTH_MAX_MULTIBULK: i64 = 10;
const UNAUTH_MAX_BULK: i64 = 16384;

/// Decodes one request from the front of `buf`.
///
/// `Ok(None)`: more bytes are needed (`buf` is untouched).
/// `Ok(Some(args))`: one request was consumed; `args` may be empty (blank
/// inline line, `*0`, `*-1`), which the server skips.
pub fn decode_request(
    buf: &mut BytesMut,
    limits: &Limits,
    authenticated: bool,
) -> Result<Option<Vec<Bytes>>, ProtocolError> {
    match buf.first() {
        None => Ok(None),
        Some(b'*') => decode_multibulk(buf, limits, authenticated),
        Some(_) => decode_inline(buf, limits),
    }
}

/// Redis's `string2ll`: optional '-', digits, no leading zeros, no '+'.
fn parse_ll(bytes: &[u8]) -> Option<i64> {
    if bytes.is_empty() || bytes.len() > 20 {
        return None;
    }
    if bytes == b"0" {
        return Some(0);
    }
    let (negative, digits) = match bytes[0] {
        b'-' => (true, &bytes[1..]),
        _ => (false, bytes),
    };
    if digits.is_empty() || digits[0] == b'0' {
        return None;
    }
    let mut value: u64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    if negative {
        if value > i64::MAX as u64 + 1 {
            None
        } else {
            Some((value as i64).wrapping_neg())
        }
    } else {
        i64::try_from(value).ok()
    }
}

/// Position of the `\r` ending the header line that starts at `from`, if
/// the line and its `\n` are complete.
enum Line {
    Complete(usize),
    Incomplete,
}

fn header_line(buf: &[u8], from: usize) -> Line {
    match memchr::memchr(b'\r', &buf[from..]) {
        // Redis needs the byte after '\r' to be present too.
        Some(off) if from + off + 1 < buf.len() => Line::Complete(from + off),
        _ => Line::Incomplete,
    }
}

fn decode_multibulk(
    buf: &mut BytesMut,
    limits: &Limits,
    authenticated: bool,
) -> Result<Option<Vec<Bytes>>, ProtocolError> {
    let cr = match header_line(buf, 0) {
        Line::Complete(cr) => cr,
        Line::Incomplete => {
            if buf.len() > limits.max_inline_len {
                return Err(ProtocolError::TooBigMbulkCount);
            }
            return Ok(None);
        }
    };
    let count = match parse_ll(&buf[1..cr]) {
        Some(n) if n as i128 <= limits.max_multibulk_len as i128 && n <= i32::MAX as i64 => n,
        _ => return Err(ProtocolError::InvalidMultibulkLength),
    };
    if count > UNAUTH_MAX_MULTIBULK && !authenticated {
        return Err(ProtocolError::UnauthenticatedMultibulk);
    }
    let mut pos = cr + 2;
    if count <= 0 {
        let _ = buf.split_to(pos);
        return Ok(Some(Vec::new()));
    }
    // First pass: validate headers and find the end without copying.
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity((count as usize).min(1024));
    for _ in 0..count {
        if pos >= buf.len() {
            return Ok(None);
        }
        let cr = match header_line(buf, pos) {
            Line::Complete(cr) => cr,
            Line::Incomplete => {
                if buf.len() - pos > limits.max_inline_len {
                    return Err(ProtocolError::TooBigBulkCount);
                }
                return Ok(None);
            }
        };
        if buf[pos] != b'$' {
            return Err(ProtocolError::ExpectedDollar(buf[pos] as char));
        }
        let len = match parse_ll(&buf[pos + 1..cr]) {
            Some(n) if n >= 0 && (n as u64) <= limits.max_bulk_len => n,
            _ => return Err(ProtocolError::InvalidBulkLength),
        };
        if len > UNAUTH_MAX_BULK && !authenticated {
            return Err(ProtocolError::UnauthenticatedBulk);
        }
        let start = cr + 2;
        // Redis skips the two bytes after the payload without checking them.
        let end = match start
            .checked_add(len as usize)
            .and_then(|e| e.checked_add(2))
        {
            Some(end) => end,
            None => return Err(ProtocolError::InvalidBulkLength),
        };
        if end > buf.len() {
            return Ok(None);
        }
        spans.push((start, start + len as usize));
        pos = end;
    }
    let frozen = buf.split_to(pos).freeze();
    Ok(Some(
        spans.into_iter().map(|(s, e)| frozen.slice(s..e)).collect(),
    ))
}

fn decode_inline(buf: &mut BytesMut, limits: &Limits) -> Result<Option<Vec<Bytes>>, ProtocolError> {
    let Some(nl) = memchr::memchr(b'\n', buf) else {
        if buf.len() > limits.max_inline_len {
            return Err(ProtocolError::TooBigInline);
        }
        return Ok(None);
    };
    let line_end = if nl > 0 && buf[nl - 1] == b'\r' {
        nl - 1
    } else {
        nl
    };
    let args = split_args(&buf[..line_end]).ok_or(ProtocolError::UnbalancedQuotes)?;
    let _ = buf.split_to(nl + 1);
    Ok(Some(args.into_iter().map(Bytes::from).collect()))
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn hex_value(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Redis's `sdssplitargs`. As in C, a NUL byte ends the line.
fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let line = match memchr::memchr(0, line) {
        Some(nul) => &line[..nul],
        None => line,
    };
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    let mut args = Vec::new();
    let mut p = 0;
    loop {
        while p < line.len() && is_space(line[p]) {
            p += 1;
        }
        if p >= line.len() {
            return Some(args);
        }
        let (mut in_double, mut in_single, mut done) = (false, false, false);
        let mut current = Vec::new();
        while !done {
            let c = at(p);
            if in_double {
                if c == b'\\'
                    && at(p + 1) == b'x'
                    && hex_value(at(p + 2)).is_some()
                    && hex_value(at(p + 3)).is_some()
                {
                    current.push(hex_value(at(p + 2))? * 16 + hex_value(at(p + 3))?);
                    p += 3;
                } else if c == b'\\' && at(p + 1) != 0 {
                    p += 1;
                    current.push(match at(p) {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        other => other,
                    });
                } else if c == b'"' {
                    if at(p + 1) != 0 && !is_space(at(p + 1)) {
                        return None;
                    }
                    done = true;
                } else if c == 0 {
                    return None;
                } else {
                    current.push(c);
                }
            } else if in_single {
                if c == b'\\' && at(p + 1) == b'\'' {
                    p += 1;
                    current.push(b'\'');
                } else if c == b'\'' {
                    if at(p + 1) != 0 && !is_space(at(p + 1)) {
                        return None;
                    }
                    done = true;
                } else if c == 0 {
                    return None;
                } else {
                    current.push(c);
                }
            } else {
                match c {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => done = true,
                    b'"' => in_double = true,
                    b'\'' => in_single = true,
                    other => current.push(other),
                }
            }
            if p < line.len() {
                p += 1;
            }
        }
        args.push(current);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8]) -> Result<Vec<Vec<Bytes>>, ProtocolError> {
        let mut buf = BytesMut::from(input);
        let mut out = Vec::new();
        while let Some(args) = decode_request(&mut buf, &Limits::default(), true)? {
            out.push(args);
        }
        Ok(out)
    }

    fn strs(args: &[Bytes]) -> Vec<&[u8]> {
        args.iter().map(|a| a.as_ref()).collect()
    }

    #[test]
    fn multibulk_and_pipelines() {
        let reqs = decode_all(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n").unwrap();
        assert_eq!(reqs.len(), 2);
        assert_eq!(strs(&reqs[0]), vec![&b"GET"[..], b"k"]);
        assert_eq!(strs(&reqs[1]), vec![&b"PING"[..]]);
        assert_eq!(decode_all(b"*0\r\n").unwrap(), vec![Vec::<Bytes>::new()]);
        assert_eq!(decode_all(b"*-1\r\n").unwrap(), vec![Vec::<Bytes>::new()]);
        assert_eq!(
            strs(&decode_all(b"*1\r\n$0\r\n\r\n").unwrap()[0]),
            vec![&b""[..]]
        );
    }

    #[test]
    fn every_split_point_waits_then_decodes() {
        let samples: [&[u8]; 3] = [
            b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nva\r\nl\r\n",
            b"SET \"a b\" 'c d' plain\r\n",
            b"*1\r\n$10\r\n0123456789\r\n",
        ];
        for sample in samples {
            let whole = decode_all(sample).unwrap();
            for split in 0..sample.len() {
                let mut buf = BytesMut::from(&sample[..split]);
                assert_eq!(
                    decode_request(&mut buf, &Limits::default(), true).unwrap(),
                    None,
                    "split {split}"
                );
                assert_eq!(buf.len(), split, "partial input must stay in the buffer");
                buf.extend_from_slice(&sample[split..]);
                let got = decode_request(&mut buf, &Limits::default(), true)
                    .unwrap()
                    .unwrap();
                assert_eq!(got, whole[0]);
                assert!(buf.is_empty());
            }
        }
    }

    #[test]
    fn protocol_errors_use_redis_texts() {
        let cases: [(&[u8], &str); 9] = [
            (b"*x\r\n", "Protocol error: invalid multibulk length"),
            (
                b"*99999999999\r\n",
                "Protocol error: invalid multibulk length",
            ),
            (b"*1\r\n$x\r\n", "Protocol error: invalid bulk length"),
            (b"*1\r\n$-1\r\n", "Protocol error: invalid bulk length"),
            (
                b"*1\r\n$99999999999\r\n",
                "Protocol error: invalid bulk length",
            ),
            (b"*1\r\n:1\r\n", "Protocol error: expected '$', got ':'"),
            (
                b"SET \"a\r\n",
                "Protocol error: unbalanced quotes in request",
            ),
            (
                b"SET \"a\"b\r\n",
                "Protocol error: unbalanced quotes in request",
            ),
            (
                b"GET 'a\r\n",
                "Protocol error: unbalanced quotes in request",
            ),
        ];
        for (input, text) in cases {
            let err = decode_all(input).unwrap_err();
            assert_eq!(
                err.to_string(),
                text,
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
        let long = vec![b'a'; 70 * 1024];
        assert_eq!(decode_all(&long).unwrap_err(), ProtocolError::TooBigInline);
        let mut long_count = b"*".to_vec();
        long_count.extend(vec![b'1'; 70 * 1024]);
        assert_eq!(
            decode_all(&long_count).unwrap_err(),
            ProtocolError::TooBigMbulkCount
        );
        let mut long_bulk = b"*1\r\n$".to_vec();
        long_bulk.extend(vec![b'1'; 70 * 1024]);
        assert_eq!(
            decode_all(&long_bulk).unwrap_err(),
            ProtocolError::TooBigBulkCount
        );
    }

    #[test]
    fn limits_and_unauthenticated_clients() {
        let limits = Limits {
            max_bulk_len: 10,
            ..Limits::default()
        };
        let mut buf = BytesMut::from(&b"*1\r\n$11\r\n"[..]);
        assert_eq!(
            decode_request(&mut buf, &limits, true),
            Err(ProtocolError::InvalidBulkLength)
        );
        let mut buf = BytesMut::from(&b"*11\r\n"[..]);
        assert_eq!(
            decode_request(&mut buf, &Limits::default(), false),
            Err(ProtocolError::UnauthenticatedMultibulk)
        );
        let mut buf = BytesMut::from(&b"*1\r\n$16385\r\n"[..]);
        assert_eq!(
            decode_request(&mut buf, &Limits::default(), false),
            Err(ProtocolError::UnauthenticatedBulk)
        );
    }

    #[test]
    fn inline_quoting_follows_sdssplitargs() {
        let reqs = decode_all(b"set \"a\\x41\\n\" 'it\\'s' \"q\\\"\"\n  \r\nPING\n").unwrap();
        assert_eq!(strs(&reqs[0]), vec![&b"set"[..], b"aA\n", b"it's", b"q\""]);
        assert!(reqs[1].is_empty());
        assert_eq!(strs(&reqs[2]), vec![&b"PING"[..]]);
        assert_eq!(
            strs(&decode_all(b"a\0b c\r\n").unwrap()[0]),
            vec![&b"a"[..]]
        );
        assert_eq!(strs(&decode_all(b"\"\"\r\n").unwrap()[0]), vec![&b""[..]]);
    }
}
