//! Redis's `string2ll` (util.c): the one rule by which Firn reads an
//! integer, whether a command argument, a RESP length, an intset member or
//! the integer encoding of an RDB string; and `string2ull`, which stream
//! IDs are read with.

/// Redis's `string2ll`: optional '-', then digits without a leading zero
/// ("0" itself excepted), no '+', no spaces, no "-0", at most 20
/// characters, and the value must fit in an i64.
pub fn string2ll(bytes: &[u8]) -> Option<i64> {
    if bytes.is_empty() || bytes.len() > 20 {
        return None;
    }
    if bytes == b"0" {
        return Some(0);
    }
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut magnitude: u64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        magnitude = magnitude
            .checked_mul(10)?
            .checked_add(u64::from(b - b'0'))?;
    }
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Redis's `string2ull`: `string2ll` when that reads a non-negative
/// value, a negative one is refused, and anything else is left to C's
/// `strtoull` (base 10), which takes leading spaces, a sign (a minus
/// negates, wrapping) and leading zeros, and refuses an overflow. The text
/// ends at its first NUL, as a C string does.
pub fn string2ull(bytes: &[u8]) -> Option<u64> {
    let text = match bytes.iter().position(|&b| b == 0) {
        Some(nul) => &bytes[..nul],
        None => bytes,
    };
    if let Some(v) = string2ll(text) {
        return u64::try_from(v).ok();
    }
    let mut rest = text;
    while let Some((first, tail)) = rest.split_first() {
        if !crate::double::is_c_space(*first) {
            break;
        }
        rest = tail;
    }
    let negative = match rest.first() {
        Some(b'-') => {
            rest = &rest[1..];
            true
        }
        Some(b'+') => {
            rest = &rest[1..];
            false
        }
        _ => false,
    };
    if rest.is_empty() || !rest.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut value: u64 = 0;
    for &b in rest {
        value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
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
    fn string2ull_falls_back_to_strtoull() {
        assert_eq!(string2ull(b"5"), Some(5));
        assert_eq!(string2ull(b"-5"), None);
        assert_eq!(string2ull(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(string2ull(b"18446744073709551616"), None);
        assert_eq!(string2ull(b"05"), Some(5));
        assert_eq!(string2ull(b" +7"), Some(7));
        assert_eq!(string2ull(b"-0"), Some(0));
        assert_eq!(string2ull(b" -1"), Some(u64::MAX));
        assert_eq!(string2ull(b"1x"), None);
        assert_eq!(string2ull(b""), None);
        assert_eq!(string2ull(b" "), None);
        assert_eq!(string2ull(&[b'1', b'2', 0, b'x']), Some(12));
    }

    #[test]
    fn string2ll_is_redis_string2ll() {
        for (text, value) in [
            (&b"0"[..], Some(0)),
            (b"1", Some(1)),
            (b"-1", Some(-1)),
            (b"9223372036854775807", Some(i64::MAX)),
            (b"-9223372036854775808", Some(i64::MIN)),
            (b"9223372036854775808", None),
            (b"-9223372036854775809", None),
            (b"18446744073709551615", None),
            (b"-0", None),
            (b"00", None),
            (b"01", None),
            (b"007", None),
            (b"+1", None),
            (b" 1", None),
            (b"1 ", None),
            (b"-", None),
            (b"", None),
            (b"1a", None),
            (b"1.0", None),
            (b"000000000000000000001", None),
        ] {
            assert_eq!(
                string2ll(text),
                value,
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
    }
}
