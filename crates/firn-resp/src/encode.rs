//! Reply encoding for RESP2 and RESP3. A `Reply` is built once; `encode`
//! writes it for the client's protocol and downgrades RESP3-only types for
//! RESP2 clients exactly as Redis 7.0 does (networking.c `addReply*`): maps
//! flatten to arrays of 2n, sets and pushes become arrays, doubles become
//! bulk strings, booleans integers, big numbers and verbatim strings plain
//! bulk strings, and the two nulls `$-1` / `*-1`.
//!
//! Integers and lengths are written with a hand-rolled two-digits-at-a-time
//! conversion straight into the output: this runs for every header of
//! every reply, and `format!` would allocate.

use bytes::{BufMut, Bytes, BytesMut};

use firn_prims::{write_double, G_BUFFER_BYTES};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Resp2,
    Resp3,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `+OK`. Written verbatim: the text must not contain `\r` or `\n`.
    Simple(Bytes),
    /// Full text without the leading '-', e.g. "ERR syntax error".
    /// `\r` and `\n` inside are written as spaces, as Redis does.
    Error(Bytes),
    Integer(i64),
    Bulk(Bytes),
    /// RESP2 `$-1`, RESP3 `_`.
    Null,
    /// RESP2 `*-1`, RESP3 `_`.
    NullArray,
    Array(Vec<Reply>),
    /// RESP2: a flat array of 2n elements.
    Map(Vec<(Reply, Reply)>),
    /// RESP2: an array.
    Set(Vec<Reply>),
    /// `%.17g` (see [`crate::format_double`]); RESP2: a bulk string.
    Double(f64),
    /// A double already formatted (Redis's human long-double form, as
    /// GEOPOS replies coordinates): RESP3 `,text`; RESP2 a bulk string.
    DoubleText(Bytes),
    /// RESP2: `:1` / `:0`.
    Boolean(bool),
    /// RESP2: a bulk string.
    BigNumber(Bytes),
    /// RESP3 `=<len>\r\n<format>:<text>`; RESP2: a bulk string of `text`.
    Verbatim {
        format: [u8; 3],
        text: Bytes,
    },
    /// RESP2: an array.
    Push(Vec<Reply>),
    /// A RESP3 attribute (`|n` and its pairs), which describes the reply
    /// written after it; RESP2 writes nothing. Only as the first part of a
    /// [`Reply::Sequence`].
    Attribute(Vec<(Reply, Reply)>),
    /// Replies written one after another as one answer: an attribute or
    /// a push message, then the reply proper (DEBUG PROTOCOL).
    Sequence(Vec<Reply>),
}

impl Reply {
    pub fn ok() -> Reply {
        Reply::Simple(Bytes::from_static(b"OK"))
    }

    /// A status reply; `&'static str` costs no allocation.
    pub fn simple(text: impl Into<Bytes>) -> Reply {
        Reply::Simple(text.into())
    }

    /// An error reply: the full text without '-', e.g. "ERR syntax error".
    /// (For a constant text without allocating, use
    /// `Reply::Error(Bytes::from_static(...))`.)
    pub fn error(text: impl Into<String>) -> Reply {
        Reply::Error(Bytes::from(text.into()))
    }

    pub fn bulk(value: impl Into<Bytes>) -> Reply {
        Reply::Bulk(value.into())
    }

    pub fn integer(value: i64) -> Reply {
        Reply::Integer(value)
    }

    pub fn array(items: Vec<Reply>) -> Reply {
        Reply::Array(items)
    }

    /// An array of bulk strings.
    pub fn bulks<I>(items: I) -> Reply
    where
        I: IntoIterator,
        I::Item: Into<Bytes>,
    {
        Reply::Array(items.into_iter().map(|b| Reply::Bulk(b.into())).collect())
    }

    /// RESP3 verbatim text ("txt" format), e.g. INFO and CLIENT LIST.
    pub fn verbatim_text(text: impl Into<Bytes>) -> Reply {
        Reply::Verbatim {
            format: *b"txt",
            text: text.into(),
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }

    /// Appends the reply in `proto` to `out`.
    pub fn encode(&self, out: &mut BytesMut, proto: Protocol) {
        let resp3 = proto == Protocol::Resp3;
        match self {
            Reply::Simple(text) => line(out, b'+', text),
            Reply::Error(text) => error_line(out, text),
            Reply::Integer(n) => header(out, b':', *n),
            Reply::Bulk(body) => bulk(out, body),
            Reply::Null | Reply::NullArray if resp3 => out.put_slice(b"_\r\n"),
            Reply::Null => out.put_slice(b"$-1\r\n"),
            Reply::NullArray => out.put_slice(b"*-1\r\n"),
            Reply::Array(items) => aggregate(out, b'*', items, proto),
            Reply::Set(items) => aggregate(out, if resp3 { b'~' } else { b'*' }, items, proto),
            Reply::Push(items) => aggregate(out, if resp3 { b'>' } else { b'*' }, items, proto),
            Reply::Map(pairs) => {
                if resp3 {
                    header(out, b'%', len_i64(pairs.len()));
                } else {
                    header(out, b'*', len_i64(pairs.len()).saturating_mul(2));
                }
                for (key, value) in pairs {
                    key.encode(out, proto);
                    value.encode(out, proto);
                }
            }
            Reply::Double(value) => {
                let mut digits = [0u8; G_BUFFER_BYTES];
                let len = write_double(*value, &mut digits);
                let text = digits.get(..len).unwrap_or_default();
                if resp3 {
                    line(out, b',', text);
                } else {
                    bulk(out, text);
                }
            }
            Reply::DoubleText(text) if resp3 => line(out, b',', text),
            Reply::DoubleText(text) => bulk(out, text),
            Reply::Boolean(b) if resp3 => out.put_slice(if *b { b"#t\r\n" } else { b"#f\r\n" }),
            Reply::Boolean(b) => out.put_slice(if *b { b":1\r\n" } else { b":0\r\n" }),
            Reply::BigNumber(n) if resp3 => line(out, b'(', n),
            Reply::BigNumber(n) => bulk(out, n),
            Reply::Verbatim { format, text } if resp3 => {
                header(out, b'=', len_i64(text.len()).saturating_add(4));
                out.reserve(text.len() + 6);
                out.put_slice(format);
                out.put_u8(b':');
                out.put_slice(text);
                out.put_slice(b"\r\n");
            }
            Reply::Verbatim { text, .. } => bulk(out, text),
            Reply::Attribute(pairs) if resp3 => {
                header(out, b'|', len_i64(pairs.len()));
                for (key, value) in pairs {
                    key.encode(out, proto);
                    value.encode(out, proto);
                }
            }
            Reply::Attribute(_) => {}
            Reply::Sequence(parts) => {
                for part in parts {
                    part.encode(out, proto);
                }
            }
        }
    }
}

fn len_i64(len: usize) -> i64 {
    i64::try_from(len).unwrap_or(i64::MAX)
}

fn line(out: &mut BytesMut, prefix: u8, body: &[u8]) {
    out.reserve(body.len() + 3);
    out.put_u8(prefix);
    out.put_slice(body);
    out.put_slice(b"\r\n");
}

fn error_line(out: &mut BytesMut, text: &[u8]) {
    out.reserve(text.len() + 3);
    out.put_u8(b'-');
    if memchr::memchr2(b'\r', b'\n', text).is_none() {
        out.put_slice(text);
    } else {
        // A newline inside would break the protocol; Redis writes spaces.
        out.extend(text.iter().map(|&b| match b {
            b'\r' | b'\n' => b' ',
            other => other,
        }));
    }
    out.put_slice(b"\r\n");
}

fn bulk(out: &mut BytesMut, body: &[u8]) {
    header(out, b'$', len_i64(body.len()));
    out.reserve(body.len() + 2);
    out.put_slice(body);
    out.put_slice(b"\r\n");
}

fn aggregate(out: &mut BytesMut, prefix: u8, items: &[Reply], proto: Protocol) {
    header(out, prefix, len_i64(items.len()));
    for item in items {
        item.encode(out, proto);
    }
}

/// `<prefix><n>\r\n`.
fn header(out: &mut BytesMut, prefix: u8, n: i64) {
    let mut buf = [0u8; 24];
    buf[0] = prefix;
    let len = 1 + write_i64(n, &mut buf[1..21]);
    buf[len] = b'\r';
    buf[len + 1] = b'\n';
    out.put_slice(&buf[..len + 2]);
}

const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes `n` in decimal at the front of `out` (at least 20 bytes: the
/// longest i64 is "-9223372036854775808") and returns the length.
pub(crate) fn write_i64(n: i64, out: &mut [u8]) -> usize {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut v = n.unsigned_abs();
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if v >= 10 {
        let pair = v as usize * 2;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + v as u8;
    }
    if n < 0 {
        at -= 1;
        digits[at] = b'-';
    }
    let len = digits.len() - at;
    out[..len].copy_from_slice(&digits[at..]);
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(reply: &Reply, proto: Protocol) -> Vec<u8> {
        let mut out = BytesMut::new();
        reply.encode(&mut out, proto);
        out.to_vec()
    }

    fn both(reply: &Reply) -> (Vec<u8>, Vec<u8>) {
        (enc(reply, Protocol::Resp2), enc(reply, Protocol::Resp3))
    }

    #[test]
    fn simple_error_integer_bulk_are_the_same_in_both_protocols() {
        for (reply, wire) in [
            (Reply::ok(), &b"+OK\r\n"[..]),
            (Reply::simple("PONG"), b"+PONG\r\n"),
            (Reply::error("ERR syntax error"), b"-ERR syntax error\r\n"),
            (Reply::Integer(0), b":0\r\n"),
            (Reply::Integer(-42), b":-42\r\n"),
            (Reply::bulk("hi"), b"$2\r\nhi\r\n"),
            (Reply::bulk(""), b"$0\r\n\r\n"),
            (Reply::bulk(&b"a\r\nb"[..]), b"$4\r\na\r\nb\r\n"),
            (Reply::Array(vec![]), b"*0\r\n"),
        ] {
            assert_eq!(both(&reply), (wire.to_vec(), wire.to_vec()), "{reply:?}");
        }
    }

    #[test]
    fn error_newlines_become_spaces() {
        assert_eq!(
            enc(&Reply::error("ERR a\r\nb\nc"), Protocol::Resp2),
            b"-ERR a  b c\r\n"
        );
    }

    #[test]
    fn integers_at_every_width() {
        let mut n: i64 = 1;
        for _ in 0..19 {
            for v in [n - 1, n, n + 1, -n, -n + 1, -n - 1] {
                assert_eq!(
                    enc(&Reply::Integer(v), Protocol::Resp2),
                    format!(":{v}\r\n").into_bytes()
                );
            }
            n = n.saturating_mul(10);
        }
        for v in [i64::MIN, i64::MAX, i64::MIN + 1, 99, 100, -99, -100] {
            assert_eq!(
                enc(&Reply::Integer(v), Protocol::Resp3),
                format!(":{v}\r\n").into_bytes()
            );
        }
    }

    #[test]
    fn nulls() {
        assert_eq!(both(&Reply::Null), (b"$-1\r\n".to_vec(), b"_\r\n".to_vec()));
        assert_eq!(
            both(&Reply::NullArray),
            (b"*-1\r\n".to_vec(), b"_\r\n".to_vec())
        );
    }

    #[test]
    fn aggregates_downgrade_for_resp2() {
        let map = Reply::Map(vec![
            (Reply::bulk("a"), Reply::Integer(1)),
            (Reply::bulk("b"), Reply::Null),
        ]);
        assert_eq!(
            both(&map),
            (
                b"*4\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n$-1\r\n".to_vec(),
                b"%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n_\r\n".to_vec()
            )
        );
        let set = Reply::Set(vec![Reply::bulk("x")]);
        assert_eq!(
            both(&set),
            (b"*1\r\n$1\r\nx\r\n".to_vec(), b"~1\r\n$1\r\nx\r\n".to_vec())
        );
        let push = Reply::Push(vec![Reply::bulk("message"), Reply::Integer(2)]);
        assert_eq!(
            both(&push),
            (
                b"*2\r\n$7\r\nmessage\r\n:2\r\n".to_vec(),
                b">2\r\n$7\r\nmessage\r\n:2\r\n".to_vec()
            )
        );
        let nested = Reply::Array(vec![Reply::Map(vec![]), Reply::Set(vec![])]);
        assert_eq!(
            both(&nested),
            (
                b"*2\r\n*0\r\n*0\r\n".to_vec(),
                b"*2\r\n%0\r\n~0\r\n".to_vec()
            )
        );
        assert_eq!(
            enc(&Reply::bulks(["a", "bc"]), Protocol::Resp2),
            b"*2\r\n$1\r\na\r\n$2\r\nbc\r\n"
        );
    }

    #[test]
    fn preformatted_doubles_are_bulk_in_resp2_and_doubles_in_resp3() {
        let coordinate = Reply::DoubleText(Bytes::from_static(b"13.36138933897018433"));
        assert_eq!(
            both(&coordinate),
            (
                b"$20\r\n13.36138933897018433\r\n".to_vec(),
                b",13.36138933897018433\r\n".to_vec()
            )
        );
    }

    #[test]
    fn scalars_that_only_resp3_has() {
        assert_eq!(
            both(&Reply::Boolean(true)),
            (b":1\r\n".to_vec(), b"#t\r\n".to_vec())
        );
        assert_eq!(
            both(&Reply::Boolean(false)),
            (b":0\r\n".to_vec(), b"#f\r\n".to_vec())
        );
        assert_eq!(
            both(&Reply::BigNumber(Bytes::from_static(
                b"-12345678901234567890"
            ))),
            (
                b"$21\r\n-12345678901234567890\r\n".to_vec(),
                b"(-12345678901234567890\r\n".to_vec()
            )
        );
        assert_eq!(
            both(&Reply::verbatim_text("a\r\nb")),
            (
                b"$4\r\na\r\nb\r\n".to_vec(),
                b"=8\r\ntxt:a\r\nb\r\n".to_vec()
            )
        );
        let markdown = Reply::Verbatim {
            format: *b"mkd",
            text: Bytes::new(),
        };
        assert_eq!(enc(&markdown, Protocol::Resp3), b"=4\r\nmkd:\r\n");
    }

    /// Redis 7.0 addReplyDouble: RESP2 a bulk of "%.17g" ("inf"/"-inf"
    /// spelled out), RESP3 ",%.17g" (",inf"/",-inf"); checked on 7.0.15
    /// with ZSCORE under HELLO 2 and HELLO 3.
    #[test]
    fn doubles() {
        assert_eq!(
            both(&Reply::Double(1.5)),
            (b"$3\r\n1.5\r\n".to_vec(), b",1.5\r\n".to_vec())
        );
        assert_eq!(
            both(&Reply::Double(0.1)),
            (
                b"$19\r\n0.10000000000000001\r\n".to_vec(),
                b",0.10000000000000001\r\n".to_vec()
            )
        );
        assert_eq!(
            both(&Reply::Double(f64::INFINITY)),
            (b"$3\r\ninf\r\n".to_vec(), b",inf\r\n".to_vec())
        );
        assert_eq!(
            both(&Reply::Double(f64::NEG_INFINITY)),
            (b"$4\r\n-inf\r\n".to_vec(), b",-inf\r\n".to_vec())
        );
        assert_eq!(
            both(&Reply::Double(f64::NAN)),
            (b"$3\r\nnan\r\n".to_vec(), b",nan\r\n".to_vec())
        );
        assert_eq!(
            both(&Reply::Double(-1.7976931348623157e308)),
            (
                b"$24\r\n-1.7976931348623157e+308\r\n".to_vec(),
                b",-1.7976931348623157e+308\r\n".to_vec()
            )
        );
    }
}
