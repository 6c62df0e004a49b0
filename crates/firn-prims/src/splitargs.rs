//! Redis's `sdssplitargs`: a line split into arguments the way the inline
//! protocol, redis.conf and a function library's `#!lua name=...` line are
//! split. Double quotes take `\n`, `\r`, `\t`, `\b`, `\a`, `\xHH` and
//! `\<any>` escapes; single quotes take only `\'`; a quote may open in the
//! middle of an argument (`name="foo"` is `name=foo`), and a closing quote
//! must be followed by a blank or the end of the line.

/// An inline argument: a slice of the line when it was taken verbatim, or
/// the bytes quoting rules produced.
#[derive(Debug, PartialEq)]
pub enum Token {
    Slice(usize, usize),
    Owned(Vec<u8>),
}

impl Token {
    /// Its bytes, `line` being the line it was split from.
    pub fn bytes<'a>(&'a self, line: &'a [u8]) -> &'a [u8] {
        match self {
            Token::Slice(start, end) => line.get(*start..*end).unwrap_or_default(),
            Token::Owned(bytes) => bytes,
        }
    }

    fn push(&mut self, line: &[u8], byte: u8) {
        match self {
            Token::Slice(start, end) => {
                let mut owned = line.get(*start..*end).unwrap_or_default().to_vec();
                owned.push(byte);
                *self = Token::Owned(owned);
            }
            Token::Owned(bytes) => bytes.push(byte),
        }
    }
}

/// C's `isspace` in the C locale (Redis never sets LC_CTYPE).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Redis's `sdssplitargs` over a C string: `line` ends at its first NUL,
/// if any. `None` is "unbalanced quotes": an unterminated quote, or a
/// closing quote followed by something other than a space.
pub fn split_tokens(line: &[u8]) -> Option<Vec<Token>> {
    let line = match memchr::memchr(0, line) {
        Some(nul) => line.get(..nul).unwrap_or_default(),
        None => line,
    };
    // The byte at `i`, or the terminating NUL.
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    let mut tokens = Vec::new();
    let mut p = 0;
    loop {
        while is_space(at(p)) {
            p += 1;
        }
        if p >= line.len() {
            return Some(tokens);
        }
        let mut token = Token::Slice(p, p);
        let (mut in_double, mut in_single) = (false, false);
        loop {
            let c = at(p);
            if in_double {
                if c == b'\\' && at(p + 1) == b'x' {
                    if let (Some(high), Some(low)) = (hex_value(at(p + 2)), hex_value(at(p + 3))) {
                        token.push(line, high * 16 + low);
                        p += 4;
                        continue;
                    }
                }
                if c == b'\\' && at(p + 1) != 0 {
                    let escaped = match at(p + 1) {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    };
                    token.push(line, escaped);
                    p += 2;
                } else if c == b'"' {
                    // A closing quote must be followed by a space or the end.
                    if at(p + 1) != 0 && !is_space(at(p + 1)) {
                        return None;
                    }
                    p += 1;
                    break;
                } else if c == 0 {
                    return None;
                } else {
                    token.push(line, c);
                    p += 1;
                }
            } else if in_single {
                if c == b'\\' && at(p + 1) == b'\'' {
                    token.push(line, b'\'');
                    p += 2;
                } else if c == b'\'' {
                    if at(p + 1) != 0 && !is_space(at(p + 1)) {
                        return None;
                    }
                    p += 1;
                    break;
                } else if c == 0 {
                    return None;
                } else {
                    token.push(line, c);
                    p += 1;
                }
            } else {
                match c {
                    // Only these end a bare word (not '\v' or '\f').
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => {
                        if c != 0 {
                            p += 1;
                        }
                        break;
                    }
                    b'"' | b'\'' => {
                        // From here on the token is rewritten: own it.
                        if let Token::Slice(start, end) = token {
                            token = Token::Owned(line.get(start..end).unwrap_or_default().to_vec());
                        }
                        in_double = c == b'"';
                        in_single = c == b'\'';
                        p += 1;
                    }
                    _ => {
                        match &mut token {
                            // Bare bytes are consecutive: widen the slice.
                            Token::Slice(_, end) => *end = p + 1,
                            Token::Owned(bytes) => bytes.push(c),
                        }
                        p += 1;
                    }
                }
            }
        }
        tokens.push(token);
    }
}

/// The arguments of `line` as owned bytes, or None for unbalanced quotes
/// (sdssplitargs's NULL).
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let tokens = split_tokens(line)?;
    Some(tokens.iter().map(|t| t.bytes(line).to_vec()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Option<Vec<String>> {
        split_args(line.as_bytes()).map(|args| {
            args.into_iter()
                .map(|a| String::from_utf8_lossy(&a).into_owned())
                .collect()
        })
    }

    #[test]
    fn splits_as_sdssplitargs() {
        assert_eq!(
            split("  a  b\tc "),
            Some(vec!["a".into(), "b".into(), "c".into()])
        );
        assert_eq!(
            split("#!lua name=\"foo\""),
            Some(vec!["#!lua".into(), "name=foo".into()])
        );
        assert_eq!(
            split("\"a\\x41\\n\" 'it\\'s'"),
            Some(vec!["aA\n".into(), "it's".into()])
        );
        assert_eq!(split("\"\" ''"), Some(vec![String::new(), String::new()]));
        assert_eq!(split("\"a\\zb\""), Some(vec!["azb".into()]));
        assert_eq!(split(""), Some(vec![]));
    }

    #[test]
    fn stops_at_nul() {
        // As C's string ends: the inline decoder never passes a NUL (it
        // blocks the line), redis.conf lines may hold one.
        assert_eq!(split_tokens(b"a\0b c"), Some(vec![Token::Slice(0, 1)]));
        assert_eq!(split_tokens(b"\"a\0\""), None);
        assert_eq!(split_tokens(b""), Some(vec![]));
        assert_eq!(split_args(b"x\0y"), Some(vec![b"x".to_vec()]));
    }

    #[test]
    fn only_blanks_of_the_protocol_end_a_bare_word() {
        // '\v' and '\f' are skipped between arguments but end no word.
        assert_eq!(split("a\x0bb"), Some(vec!["a\x0bb".into()]));
    }

    #[test]
    fn refuses_what_sdssplitargs_refuses() {
        assert_eq!(split("\"open"), None);
        assert_eq!(split("'open"), None);
        assert_eq!(split("\"a\"b"), None);
        assert_eq!(split("'a'b"), None);
    }
}
