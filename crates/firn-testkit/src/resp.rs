//! The RESP wire format as the tests write and read it: multibulk requests
//! out, and a parser of one RESP2/RESP3 reply (attributes skipped) in.

use crate::reply::escape;
use crate::R;

/// Multibulk encoding of a request.
pub fn encode_request(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Parses the first reply in `buf`: the tree and the bytes it took.
pub(crate) fn parse_reply(buf: &[u8]) -> Result<(R, usize), Parse> {
    let mut cursor = Cursor { buf, pos: 0 };
    let tree = cursor.reply()?;
    Ok((tree, cursor.pos))
}

/// Why `parse_reply` found no reply.
#[derive(Debug)]
pub(crate) enum Parse {
    /// Not enough bytes yet.
    Incomplete,
    Invalid(String),
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn line(&mut self) -> Result<&[u8], Parse> {
        let rest = &self.buf[self.pos..];
        let Some(end) = rest.windows(2).position(|w| w == b"\r\n") else {
            return Err(Parse::Incomplete);
        };
        self.pos += end + 2;
        Ok(&rest[..end])
    }

    fn int_line(&mut self) -> Result<i64, Parse> {
        let line = self.line()?;
        std::str::from_utf8(line)
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
            .ok_or_else(|| Parse::Invalid(format!("bad integer {:?}", escape(line, 40))))
    }

    fn text_line(&mut self) -> Result<String, Parse> {
        Ok(String::from_utf8_lossy(self.line()?).into_owned())
    }

    fn payload(&mut self, len: i64) -> Result<Vec<u8>, Parse> {
        let len = usize::try_from(len).map_err(|_| Parse::Invalid(format!("length {len}")))?;
        if self.buf.len() < self.pos + len + 2 {
            return Err(Parse::Incomplete);
        }
        let data = self.buf[self.pos..self.pos + len].to_vec();
        if &self.buf[self.pos + len..self.pos + len + 2] != b"\r\n" {
            return Err(Parse::Invalid("payload not followed by CRLF".into()));
        }
        self.pos += len + 2;
        Ok(data)
    }

    fn items(&mut self, n: i64) -> Result<Vec<R>, Parse> {
        (0..n).map(|_| self.reply()).collect()
    }

    fn reply(&mut self) -> Result<R, Parse> {
        let Some(&prefix) = self.buf.get(self.pos) else {
            return Err(Parse::Incomplete);
        };
        self.pos += 1;
        Ok(match prefix {
            b'+' => R::Simple(self.text_line()?),
            b'-' => R::Error(self.text_line()?),
            b':' => R::Int(self.int_line()?),
            b'$' => match self.int_line()? {
                -1 => R::Bulk(None),
                n => R::Bulk(Some(self.payload(n)?)),
            },
            b'*' => match self.int_line()? {
                -1 => R::Array(None),
                n => R::Array(Some(self.items(n)?)),
            },
            b'~' => {
                let n = self.int_line()?;
                R::Set(self.items(n)?)
            }
            b'>' => {
                let n = self.int_line()?;
                R::Push(self.items(n)?)
            }
            b'%' => {
                let n = self.int_line()?;
                let mut pairs = Vec::new();
                for _ in 0..n {
                    let k = self.reply()?;
                    let v = self.reply()?;
                    pairs.push((k, v));
                }
                R::Map(pairs)
            }
            b'|' => {
                // An attribute: skip it and return the reply it decorates.
                let n = self.int_line()?;
                for _ in 0..2 * n {
                    self.reply()?;
                }
                self.reply()?
            }
            b',' => R::Double(self.text_line()?),
            b'#' => match self.line()? {
                b"t" => R::Bool(true),
                b"f" => R::Bool(false),
                other => return Err(Parse::Invalid(format!("boolean {:?}", escape(other, 10)))),
            },
            b'_' => {
                self.line()?;
                R::Null
            }
            b'(' => R::BigNum(self.text_line()?),
            b'=' => {
                let n = self.int_line()?;
                let data = self.payload(n)?;
                if data.len() < 4 || data[3] != b':' {
                    return Err(Parse::Invalid("verbatim without format".into()));
                }
                R::Verbatim(
                    String::from_utf8_lossy(&data[..3]).into_owned(),
                    data[4..].to_vec(),
                )
            }
            other => {
                return Err(Parse::Invalid(format!(
                    "unknown type byte {:?}",
                    escape(&[other], 4)
                )))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reply_type_parses_back_from_its_encoding() {
        let reply = R::Array(Some(vec![
            R::Simple("OK".into()),
            R::Error("ERR no".into()),
            R::Int(-7),
            R::Bulk(None),
            R::bulk(b"a\r\nb"),
            R::Array(None),
            R::Map(vec![(R::bulk(b"k"), R::Set(vec![R::Int(1)]))]),
            R::Double("1.5".into()),
            R::Bool(false),
            R::Null,
            R::BigNum("123456789012345678901234567890".into()),
            R::Verbatim("txt".into(), b"some text".to_vec()),
            R::Push(vec![R::bulk(b"message")]),
        ]));
        let bytes = reply.encode();
        let (parsed, used) = parse_reply(&bytes).expect("parses");
        assert_eq!(parsed, reply);
        assert_eq!(used, bytes.len());
    }

    #[test]
    fn a_cut_reply_is_incomplete_and_junk_is_invalid() {
        let bytes = R::Array(Some(vec![R::bulk(b"value"), R::Int(1)])).encode();
        for end in 0..bytes.len() {
            assert!(
                matches!(parse_reply(&bytes[..end]), Err(Parse::Incomplete)),
                "{end} bytes"
            );
        }
        assert!(matches!(parse_reply(b"?x\r\n"), Err(Parse::Invalid(_))));
        assert!(matches!(
            parse_reply(b"$3\r\nabcd\r\n"),
            Err(Parse::Invalid(_))
        ));
    }

    #[test]
    fn attributes_are_skipped() {
        let (parsed, _) = parse_reply(b"|1\r\n+key\r\n:1\r\n:42\r\n").expect("parses");
        assert_eq!(parsed, R::Int(42));
    }
}
