//! Redis's `sdssplitargs`: a line split into arguments the way redis.conf,
//! redis-cli and a function library's `#!lua name=...` line are split.
//! Double quotes take `\n`, `\r`, `\t`, `\b`, `\a`, `\xHH` and `\<any>`
//! escapes; single quotes take only `\'`; a quote may open in the middle
//! of an argument (`name="foo"` is `name=foo`), and a closing quote must be
//! followed by a blank or the end of the line.

/// C's isspace, as sdssplitargs skips blanks.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn hex_value(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// The arguments of `line`, or None for unbalanced quotes or a closing
/// quote followed by something else (sdssplitargs's NULL).
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        while at < line.len() && is_space(line[at]) {
            at += 1;
        }
        if at >= line.len() {
            return Some(out);
        }
        let (arg, next) = one_arg(line, at)?;
        out.push(arg);
        at = next;
    }
}

/// The argument starting at `at` and where the scan goes on.
fn one_arg(line: &[u8], mut at: usize) -> Option<(Vec<u8>, usize)> {
    let byte = |i: usize| line.get(i).copied();
    let ends_here = |i: usize| byte(i).is_none_or(is_space);
    let mut arg = Vec::new();
    let (mut in_double, mut in_single) = (false, false);
    loop {
        let c = byte(at);
        if in_double {
            match c? {
                b'\\'
                    if byte(at + 1) == Some(b'x')
                        && byte(at + 2).and_then(hex_value).is_some()
                        && byte(at + 3).and_then(hex_value).is_some() =>
                {
                    let high = byte(at + 2).and_then(hex_value)?;
                    let low = byte(at + 3).and_then(hex_value)?;
                    arg.push(high * 16 + low);
                    at += 3;
                }
                b'\\' if byte(at + 1).is_some() => {
                    at += 1;
                    arg.push(match byte(at)? {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    });
                }
                b'"' => {
                    if !ends_here(at + 1) {
                        return None;
                    }
                    return Some((arg, at + 1));
                }
                other => arg.push(other),
            }
        } else if in_single {
            match c? {
                b'\\' if byte(at + 1) == Some(b'\'') => {
                    at += 1;
                    arg.push(b'\'');
                }
                b'\'' => {
                    if !ends_here(at + 1) {
                        return None;
                    }
                    return Some((arg, at + 1));
                }
                other => arg.push(other),
            }
        } else {
            match c {
                None => return Some((arg, at)),
                Some(b) if is_space(b) => return Some((arg, at)),
                Some(b'"') => in_double = true,
                Some(b'\'') => in_single = true,
                Some(other) => arg.push(other),
            }
        }
        at += 1;
    }
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
    fn refuses_what_sdssplitargs_refuses() {
        assert_eq!(split("\"open"), None);
        assert_eq!(split("'open"), None);
        assert_eq!(split("\"a\"b"), None);
        assert_eq!(split("'a'b"), None);
    }
}
