//! What the SCAN family shares (SCAN, HSCAN, SSCAN, ZSCAN) and KEYS: the
//! cursor as Redis parses it and the MATCH pattern.

use firn_prims::glob::Glob;

/// A KEYS or SCAN MATCH pattern. A lone `*` takes every key, the empty key
/// included: Redis tests for it before matching, and the matcher itself
/// never matches an empty subject with a non-empty pattern.
pub(crate) enum KeyPattern {
    All,
    Glob(Glob),
}

impl KeyPattern {
    pub(crate) fn new(pattern: &[u8]) -> KeyPattern {
        if pattern == b"*" {
            KeyPattern::All
        } else {
            KeyPattern::Glob(Glob::new(pattern, false))
        }
    }

    pub(crate) fn matches(&self, key: &[u8]) -> bool {
        match self {
            KeyPattern::All => true,
            KeyPattern::Glob(glob) => glob.matches(key),
        }
    }

    /// [`KeyPattern::matches`] within a step budget (see `Glob::matches_within`).
    pub(crate) fn matches_within(&self, key: &[u8], budget: &mut u64) -> Option<bool> {
        match self {
            KeyPattern::All => Some(true),
            KeyPattern::Glob(glob) => glob.matches_within(key, budget),
        }
    }
}

/// Redis's cursor parsing (`strtoul` base 10, then "the whole argument was
/// consumed and did not start with a space"): an optional sign and digits,
/// a negative value wrapping around as C's `strtoul` does, and the empty
/// string reading as 0.
pub(crate) fn parse_cursor(arg: &[u8]) -> Option<u64> {
    let (negative, digits) = match arg.first() {
        None => return Some(0),
        Some(b'-') => (true, &arg[1..]),
        Some(b'+') => (false, &arg[1..]),
        Some(_) => (false, arg),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut value: u64 = 0;
    for &d in digits {
        value = value.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_parse_like_strtoul() {
        assert_eq!(parse_cursor(b"0"), Some(0));
        assert_eq!(parse_cursor(b""), Some(0));
        assert_eq!(parse_cursor(b"00"), Some(0));
        assert_eq!(parse_cursor(b"+7"), Some(7));
        assert_eq!(parse_cursor(b"-0"), Some(0));
        assert_eq!(parse_cursor(b"-1"), Some(u64::MAX));
        assert_eq!(parse_cursor(b"-18446744073709551615"), Some(1));
        assert_eq!(parse_cursor(b"18446744073709551615"), Some(u64::MAX));
        for bad in [
            &b"18446744073709551616"[..],
            b"-18446744073709551616",
            b"++1",
            b"+-1",
            b"-",
            b"+",
            b" 1",
            b"1 ",
            b"1.5",
            b"0x10",
            b"abc",
        ] {
            assert_eq!(
                parse_cursor(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
