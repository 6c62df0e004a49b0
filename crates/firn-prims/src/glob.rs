//! Redis's glob patterns (`stringmatchlen` in util.c): `*`, `?`, `[...]`
//! with ranges and `^` negation, and `\` escapes. Every command that takes
//! a pattern (KEYS, SCAN MATCH, CONFIG GET, COMMAND LIST FILTERBY PATTERN,
//! PSUBSCRIBE, FUNCTION LIST LIBRARYNAME) goes through [`Glob`] or
//! [`glob_match`].
//!
//! Redis matches by recursion, one level per `*`, which is exponential on
//! patterns like `a*a*a*…b` (CVE-2022-36021) and is capped at 1000 levels
//! (CVE-2024-31228). Here the pattern is compiled once into tokens that each
//! consume exactly one byte, plus `*`, and matched with the classic greedy
//! algorithm that keeps one backtrack point (the last `*`): at most
//! (tokens + 1) × (subject + 1) steps. The answers are Redis 7.0.15's,
//! quirks included:
//! - an empty subject matches only the empty pattern (even `*` fails; KEYS
//!   and SCAN special-case a lone `*` before matching);
//! - inside a class, `\x` is `x` compared case-sensitively even for CONFIG
//!   GET's case-insensitive match; `a-z` is a range whatever `a` and `z`
//!   are (`[a-]` is the range `a`..`]`), reversed ranges are swapped, and
//!   bounds compare as C's signed `char`, so `[a-\xff]` means `\xff`..`a`;
//! - an unterminated class or a trailing `\` ends the pattern there;
//! - the cap: the part after the 1001st run of stars can never match, so
//!   it compiles to a token that matches nothing (a trailing run of stars
//!   still matches everything, as Redis returns before recursing).

/// Redis's recursion limit (`nesting > 1000` in stringmatchlen_impl).
const MAX_STAR_RUNS: usize = 1000;

#[derive(Clone, Debug)]
enum Token {
    /// A run of `*`: any number of bytes.
    Star,
    /// `?`: one byte.
    Any,
    Byte(u8),
    /// A letter under case-insensitive matching, stored lowercase.
    ByteNoCase(u8),
    /// `[...]`: the 256 bytes it accepts, negation already applied.
    Class(Box<[u64; 4]>),
    /// What follows Redis's recursion limit: matches nothing.
    Never,
}

impl Token {
    fn accepts(&self, c: u8) -> bool {
        match self {
            Token::Star | Token::Any => true,
            Token::Byte(b) => c == *b,
            Token::ByteNoCase(b) => c.to_ascii_lowercase() == *b,
            Token::Class(bits) => bits[(c >> 6) as usize] & (1u64 << (c & 63)) != 0,
            Token::Never => false,
        }
    }
}

/// A compiled pattern.
#[derive(Clone, Debug)]
pub struct Glob {
    tokens: Vec<Token>,
    /// The pattern had no bytes at all (the only one an empty subject matches).
    empty: bool,
}

/// C's `tolower` in the "C" locale, on a `char` value widened to `int`.
fn c_tolower(c: i32) -> i32 {
    if (i32::from(b'A')..=i32::from(b'Z')).contains(&c) {
        c + 32
    } else {
        c
    }
}

/// A byte as x86-64 C sees a `char`: signed.
fn c_char(b: u8) -> i32 {
    i32::from(b as i8)
}

fn literal(b: u8, nocase: bool) -> Token {
    if nocase && b.is_ascii_alphabetic() {
        Token::ByteNoCase(b.to_ascii_lowercase())
    } else {
        Token::Byte(b)
    }
}

/// Parses the class whose `[` is at `pattern[start - 1]`; returns the token
/// and the index after the class.
fn compile_class(pattern: &[u8], start: usize, nocase: bool) -> (Token, usize) {
    let mut bits = [0u64; 4];
    let mut set = |c: u8| bits[(c >> 6) as usize] |= 1u64 << (c & 63);
    let mut i = start;
    let negate = pattern.get(i) == Some(&b'^');
    if negate {
        i += 1;
    }
    loop {
        let rest = &pattern[i..];
        match rest {
            // Unterminated: the class (and the pattern) ends here.
            [] => break,
            [b'\\', escaped, ..] => {
                set(*escaped);
                i += 2;
            }
            [b']', ..] => {
                i += 1;
                break;
            }
            [from, b'-', to, ..] => {
                let (mut lo, mut hi) = (c_char(*from), c_char(*to));
                if lo > hi {
                    std::mem::swap(&mut lo, &mut hi);
                }
                if nocase {
                    (lo, hi) = (c_tolower(lo), c_tolower(hi));
                }
                for c in 0..=255u8 {
                    let cc = if nocase {
                        c_tolower(c_char(c))
                    } else {
                        c_char(c)
                    };
                    if lo <= cc && cc <= hi {
                        set(c);
                    }
                }
                i += 3;
            }
            [single, ..] => {
                set(*single);
                if nocase && single.is_ascii_alphabetic() {
                    set(single.to_ascii_lowercase());
                    set(single.to_ascii_uppercase());
                }
                i += 1;
            }
        }
    }
    if negate {
        for word in &mut bits {
            *word = !*word;
        }
    }
    (Token::Class(Box::new(bits)), i)
}

impl Glob {
    /// Compiles `pattern`; `nocase` is CONFIG GET's and COMMAND LIST's
    /// ASCII case-insensitive matching.
    pub fn new(pattern: &[u8], nocase: bool) -> Glob {
        let mut tokens = Vec::new();
        let mut star_runs = 0;
        let mut i = 0;
        while i < pattern.len() {
            match pattern[i] {
                b'*' => {
                    while pattern.get(i) == Some(&b'*') {
                        i += 1;
                    }
                    star_runs += 1;
                    if star_runs > MAX_STAR_RUNS && i < pattern.len() {
                        tokens.push(Token::Never);
                        break;
                    }
                    tokens.push(Token::Star);
                }
                b'?' => {
                    tokens.push(Token::Any);
                    i += 1;
                }
                b'[' => {
                    let (class, next) = compile_class(pattern, i + 1, nocase);
                    tokens.push(class);
                    i = next;
                }
                b'\\' if i + 1 < pattern.len() => {
                    tokens.push(literal(pattern[i + 1], nocase));
                    i += 2;
                }
                b => {
                    tokens.push(literal(b, nocase));
                    i += 1;
                }
            }
        }
        Glob {
            tokens,
            empty: pattern.is_empty(),
        }
    }

    /// Whether `text` matches, as Redis's stringmatchlen answers.
    pub fn matches(&self, text: &[u8]) -> bool {
        let mut unlimited = u64::MAX;
        self.matches_within(text, &mut unlimited).unwrap_or(false)
    }

    /// [`Glob::matches`] spending at most `budget` steps, which it
    /// decrements; `None` once they run out. A match takes at most
    /// (tokens + 1) × (text + 1) + 1 steps, so this is for callers that
    /// must stay short whatever the pattern and key lengths.
    pub fn matches_within(&self, text: &[u8], budget: &mut u64) -> Option<bool> {
        if text.is_empty() {
            return Some(self.empty);
        }
        let tokens = &self.tokens;
        let (mut t, mut s) = (0usize, 0usize);
        // After a failure, retry from the token after the last star with
        // that star swallowing one more byte.
        let mut backtrack: Option<(usize, usize)> = None;
        while s < text.len() {
            *budget = budget.checked_sub(1)?;
            match tokens.get(t) {
                Some(Token::Star) => {
                    t += 1;
                    if t == tokens.len() {
                        return Some(true);
                    }
                    backtrack = Some((t, s));
                    continue;
                }
                Some(token) if token.accepts(text[s]) => {
                    t += 1;
                    s += 1;
                    continue;
                }
                _ => {}
            }
            match backtrack {
                Some((after_star, from)) => {
                    t = after_star;
                    s = from + 1;
                    backtrack = Some((after_star, s));
                }
                None => return Some(false),
            }
        }
        Some(tokens[t..].iter().all(|token| matches!(token, Token::Star)))
    }
}

/// One-off match of `pattern` against `text` (compile once with [`Glob`]
/// when matching many subjects).
pub fn glob_match(pattern: &[u8], text: &[u8], nocase: bool) -> bool {
    Glob::new(pattern, nocase).matches(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line-by-line port of Redis 7.0.15's recursive stringmatchlen_impl
    /// (with CVE-2024-31228's nesting cap), C string semantics included:
    /// reading at the pattern's end yields the terminating NUL.
    fn reference(pattern: &[u8], text: &[u8], nocase: bool) -> bool {
        let mut skip_longer = false;
        reference_impl(pattern, 0, text, 0, nocase, &mut skip_longer, 0)
    }

    fn reference_impl(
        pat: &[u8],
        mut pi: usize,
        st: &[u8],
        mut si: usize,
        nocase: bool,
        skip_longer: &mut bool,
        nesting: u32,
    ) -> bool {
        if nesting > 1000 {
            return false;
        }
        let at = |i: usize| pat.get(i).copied().unwrap_or(0);
        let mut plen = (pat.len() - pi) as isize;
        let mut slen = (st.len() - si) as isize;
        while plen > 0 && slen > 0 {
            match at(pi) {
                b'*' => {
                    while plen > 0 && at(pi + 1) == b'*' {
                        pi += 1;
                        plen -= 1;
                    }
                    if plen == 1 {
                        return true;
                    }
                    while slen > 0 {
                        if reference_impl(pat, pi + 1, st, si, nocase, skip_longer, nesting + 1) {
                            return true;
                        }
                        if *skip_longer {
                            return false;
                        }
                        si += 1;
                        slen -= 1;
                    }
                    *skip_longer = true;
                    return false;
                }
                b'?' => {
                    si += 1;
                    slen -= 1;
                }
                b'[' => {
                    pi += 1;
                    plen -= 1;
                    let not = at(pi) == b'^';
                    if not {
                        pi += 1;
                        plen -= 1;
                    }
                    let mut matched = false;
                    loop {
                        if at(pi) == b'\\' && plen >= 2 {
                            pi += 1;
                            plen -= 1;
                            if at(pi) == st[si] {
                                matched = true;
                            }
                        } else if at(pi) == b']' {
                            break;
                        } else if plen == 0 {
                            pi -= 1;
                            plen += 1;
                            break;
                        } else if plen >= 3 && at(pi + 1) == b'-' {
                            let (mut start, mut end) = (c_char(at(pi)), c_char(at(pi + 2)));
                            let mut c = c_char(st[si]);
                            if start > end {
                                std::mem::swap(&mut start, &mut end);
                            }
                            if nocase {
                                start = c_tolower(start);
                                end = c_tolower(end);
                                c = c_tolower(c);
                            }
                            pi += 2;
                            plen -= 2;
                            if c >= start && c <= end {
                                matched = true;
                            }
                        } else if !nocase {
                            if at(pi) == st[si] {
                                matched = true;
                            }
                        } else if c_tolower(c_char(at(pi))) == c_tolower(c_char(st[si])) {
                            matched = true;
                        }
                        pi += 1;
                        plen -= 1;
                    }
                    if not {
                        matched = !matched;
                    }
                    if !matched {
                        return false;
                    }
                    si += 1;
                    slen -= 1;
                }
                first => {
                    if first == b'\\' && plen >= 2 {
                        pi += 1;
                        plen -= 1;
                    }
                    let same = if nocase {
                        c_tolower(c_char(at(pi))) == c_tolower(c_char(st[si]))
                    } else {
                        at(pi) == st[si]
                    };
                    if !same {
                        return false;
                    }
                    si += 1;
                    slen -= 1;
                }
            }
            pi += 1;
            plen -= 1;
            if slen == 0 {
                while at(pi) == b'*' {
                    pi += 1;
                    plen -= 1;
                }
                break;
            }
        }
        plen == 0 && slen == 0
    }

    fn check(pattern: &[u8], text: &[u8], nocase: bool) {
        assert_eq!(
            glob_match(pattern, text, nocase),
            reference(pattern, text, nocase),
            "pattern {:?} text {:?} nocase {nocase}",
            String::from_utf8_lossy(pattern),
            String::from_utf8_lossy(text),
        );
    }

    #[test]
    fn matches_like_redis() {
        assert!(glob_match(b"*", b"anything", false));
        assert!(glob_match(b"h?llo", b"hello", false));
        assert!(glob_match(b"h[ae]llo", b"hallo", false));
        assert!(!glob_match(b"h[^e]llo", b"hello", false));
        assert!(glob_match(b"h[a-b]llo", b"hbllo", false));
        assert!(glob_match(b"h[b-a]llo", b"hbllo", false));
        assert!(glob_match(b"h\\*llo", b"h*llo", false));
        assert!(!glob_match(b"h\\*llo", b"hello", false));
        assert!(glob_match(b"MAX*", b"maxclients", true));
        assert!(!glob_match(b"MAX*", b"maxclients", false));
        assert!(!glob_match(b"a*b", b"acd", false));
        assert!(glob_match(b"a*b*c", b"aXbYbZc", false));
        assert!(!glob_match(b"a*b*c", b"aXbYbZ", false));
        assert!(glob_match(b"a*", b"a", false));
        assert!(glob_match(b"*a", b"a", false));
        assert!(glob_match(b"?*", b"a", false));
    }

    /// Edge cases whose answers were read from redis-server 7.0.15 (KEYS
    /// and CONFIG GET); diff_keyspace.rs re-checks them against it.
    #[test]
    fn redis_quirks() {
        // The empty subject matches only the empty pattern.
        assert!(glob_match(b"", b"", false));
        assert!(!glob_match(b"*", b"", false));
        assert!(!glob_match(b"***", b"", false));
        assert!(!glob_match(b"", b"a", false));
        // Unterminated classes end the pattern; "[^" accepts any byte.
        assert!(!glob_match(b"[", b"[", false));
        assert!(glob_match(b"[^", b"x", false));
        assert!(glob_match(b"h[a", b"ha", false));
        assert!(!glob_match(b"h[a", b"hax", false));
        // A trailing backslash, in or out of a class, is a literal one.
        assert!(glob_match(b"a\\", b"a\\", false));
        assert!(glob_match(b"[\\", b"\\", false));
        // "[a-]" is the range a..']' (']' < 'a', so swapped).
        assert!(glob_match(b"[a-]", b"]", false));
        assert!(glob_match(b"[a-]", b"^", false));
        assert!(!glob_match(b"[a-]", b"b", false));
        // Bounds compare as signed chars: [a-\xff] is \xff..a.
        assert!(glob_match(b"[a-\xff]", b"\x00", false));
        assert!(!glob_match(b"[a-\xff]", b"b", false));
        assert!(glob_match(b"[\x80-a]", b"\x90", false));
        // Escapes in a class stay case-sensitive under nocase.
        assert!(!glob_match(b"[\\M]axmemory", b"maxmemory", true));
        assert!(glob_match(b"[M]axmemory", b"maxmemory", true));
        assert!(glob_match(b"[L-N]axmemory", b"maxmemory", true));
        // nocase lowers range bounds after swapping them: [Z-a] is z..a.
        assert!(!glob_match(b"[Z-a]", b"_", true));
        assert!(glob_match(b"[Z-a]", b"_", false));
        // A NUL byte is an ordinary byte.
        assert!(glob_match(b"a\x00*", b"a\x00b", false));
    }

    #[test]
    fn redis_recursion_cap_is_kept() {
        // "a*" n times then "a": n star runs, one per recursion level.
        for n in [998, 999, 1000, 1001, 1002] {
            let pattern = [b"a*".repeat(n), b"a".to_vec()].concat();
            let text = b"a".repeat(n + 1);
            assert_eq!(glob_match(&pattern, &text, false), n <= 1000, "{n}");
            check(&pattern, &text, false);
        }
        // A trailing run of stars matches without recursing.
        for n in [1000, 1001, 1002] {
            let pattern = b"a*".repeat(n);
            let text = b"a".repeat(n + 5);
            assert_eq!(glob_match(&pattern, &text, false), n <= 1001, "{n}");
            check(&pattern, &text, false);
        }
    }

    /// A small deterministic generator (xorshift64*), so the test needs no
    /// seeded-RNG API and always explores the same cases.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn pick(&mut self, from: &[u8], max_len: u64) -> Vec<u8> {
            let len = self.next() % (max_len + 1);
            (0..len)
                .map(|_| from[(self.next() % from.len() as u64) as usize])
                .collect()
        }
    }

    #[test]
    fn agrees_with_redis_recursion_on_random_inputs() {
        const PATTERN_BYTES: &[u8] = b"abA*?[]^-\\\xff\x00";
        const TEXT_BYTES: &[u8] = b"abAB]^-\\*[\xff\x00";
        let mut rng = Rng(0x5eed_f1a5_0000_0001);
        for _ in 0..300_000 {
            let pattern = rng.pick(PATTERN_BYTES, 9);
            let text = rng.pick(TEXT_BYTES, 9);
            let nocase = rng.next().is_multiple_of(4);
            check(&pattern, &text, nocase);
        }
    }

    #[test]
    fn a_step_budget_stops_a_long_match() {
        let glob = Glob::new(
            &[b"*".to_vec(), b"a".repeat(100), b"b".to_vec()].concat(),
            false,
        );
        let text = b"a".repeat(10_000);
        let mut budget = 1000;
        assert_eq!(glob.matches_within(&text, &mut budget), None);
        assert_eq!(budget, 0);
        let mut budget = 10;
        assert_eq!(glob.matches_within(b"ab", &mut budget), Some(false));
        assert_eq!(glob.matches_within(b"", &mut budget), Some(false));
        assert!(budget < 10);
    }

    #[test]
    fn pathological_patterns_take_bounded_steps() {
        let cases: Vec<(Vec<u8>, Vec<u8>, bool)> = vec![
            // The CVE-2022-36021 report: 38 stars, a 50-byte key.
            (
                [b"a*".repeat(38), b"b".to_vec()].concat(),
                b"a".repeat(50),
                false,
            ),
            (
                [b"*a".repeat(500), b"b".to_vec()].concat(),
                b"a".repeat(20_000),
                false,
            ),
            (
                [b"*".to_vec(), b"a".repeat(300), b"b".to_vec()].concat(),
                b"a".repeat(20_000),
                false,
            ),
            (
                [b"*?".repeat(300), b"[c]".to_vec()].concat(),
                b"ab".repeat(5_000),
                false,
            ),
            (
                [b"*?".repeat(300), b"[b]".to_vec()].concat(),
                b"ab".repeat(5_000),
                true,
            ),
            (
                [b"*[a-c]*\\a*[^x]".repeat(100), b"z".to_vec()].concat(),
                b"abc".repeat(3_000),
                false,
            ),
        ];
        for (pattern, text, expected) in cases {
            let glob = Glob::new(&pattern, false);
            let mut budget = u64::MAX;
            assert_eq!(glob.matches_within(&text, &mut budget), Some(expected));
            let steps = u64::MAX - budget;
            let bound = (glob.tokens.len() as u64 + 1) * (text.len() as u64 + 1) + 1;
            assert!(
                steps <= bound,
                "{steps} steps > {bound} for a {}-byte pattern",
                pattern.len()
            );
        }
    }
}
