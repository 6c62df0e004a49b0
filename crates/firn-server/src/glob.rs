//! Redis's glob matching (`stringmatchlen`): `*`, `?`, `[...]` with ranges
//! and `^` negation, and `\` escapes. Used by KEYS, SCAN MATCH and CONFIG GET.

pub fn glob_match(pattern: &[u8], text: &[u8], nocase: bool) -> bool {
    // Redis's loop never runs for an empty string, so only an empty pattern
    // matches it (KEYS/SCAN special-case a lone "*" before matching).
    if text.is_empty() {
        return pattern.is_empty();
    }
    glob_inner(pattern, text, nocase, 0)
}

fn eq(a: u8, b: u8, nocase: bool) -> bool {
    if nocase {
        a.eq_ignore_ascii_case(&b)
    } else {
        a == b
    }
}

fn glob_inner(mut p: &[u8], mut s: &[u8], nocase: bool, depth: usize) -> bool {
    // Redis caps recursion to protect itself from patterns like "*a*a*a*...".
    if depth > 1000 {
        return false;
    }
    while let Some(&pc) = p.first() {
        match pc {
            b'*' => {
                while p.len() > 1 && p[1] == b'*' {
                    p = &p[1..];
                }
                if p.len() == 1 {
                    return true;
                }
                loop {
                    if glob_inner(&p[1..], s, nocase, depth + 1) {
                        return true;
                    }
                    if s.is_empty() {
                        return false;
                    }
                    s = &s[1..];
                }
            }
            b'?' => {
                if s.is_empty() {
                    return false;
                }
                s = &s[1..];
            }
            b'[' => {
                let Some(&c) = s.first() else { return false };
                p = &p[1..];
                let negate = p.first() == Some(&b'^');
                if negate {
                    p = &p[1..];
                }
                let mut matched = false;
                loop {
                    match p.first() {
                        None => {
                            // Unterminated class: Redis treats the end as ']'.
                            break;
                        }
                        Some(b'\\') if p.len() >= 2 => {
                            if eq(p[1], c, nocase) {
                                matched = true;
                            }
                            p = &p[2..];
                        }
                        Some(b']') => break,
                        Some(_) if p.len() >= 3 && p[1] == b'-' => {
                            let (mut lo, mut hi) = (p[0], p[2]);
                            if lo > hi {
                                std::mem::swap(&mut lo, &mut hi);
                            }
                            let (lo, hi, cc) = if nocase {
                                (
                                    lo.to_ascii_lowercase(),
                                    hi.to_ascii_lowercase(),
                                    c.to_ascii_lowercase(),
                                )
                            } else {
                                (lo, hi, c)
                            };
                            if cc >= lo && cc <= hi {
                                matched = true;
                            }
                            p = &p[3..];
                        }
                        Some(&other) => {
                            if eq(other, c, nocase) {
                                matched = true;
                            }
                            p = &p[1..];
                        }
                    }
                }
                if negate {
                    matched = !matched;
                }
                if !matched {
                    return false;
                }
                s = &s[1..];
                if p.is_empty() {
                    // Pattern ended inside the class.
                    return s.is_empty();
                }
            }
            b'\\' if p.len() >= 2 => {
                p = &p[1..];
                match s.first() {
                    Some(&c) if eq(p[0], c, nocase) => s = &s[1..],
                    _ => return false,
                }
            }
            _ => match s.first() {
                Some(&c) if eq(pc, c, nocase) => s = &s[1..],
                _ => return false,
            },
        }
        p = &p[1..];
    }
    s.is_empty()
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn matches_like_redis() {
        assert!(glob_match(b"*", b"anything", false));
        assert!(glob_match(b"h?llo", b"hello", false));
        assert!(glob_match(b"h[ae]llo", b"hallo", false));
        assert!(!glob_match(b"h[^e]llo", b"hello", false));
        assert!(glob_match(b"h[a-b]llo", b"hbllo", false));
        assert!(glob_match(b"h\\*llo", b"h*llo", false));
        assert!(!glob_match(b"h\\*llo", b"hello", false));
        assert!(glob_match(b"MAX*", b"maxclients", true));
        assert!(!glob_match(b"a*b", b"acd", false));
        assert!(glob_match(b"", b"", false));
        assert!(!glob_match(b"***", b"", false));
        assert!(glob_match(b"a*", b"a", false));
    }
}
