//! Redis's `string2ll` (util.c): the one rule by which Firn reads an
//! integer, whether a command argument, a RESP length, an intset member or
//! the integer encoding of an RDB string.

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

#[cfg(test)]
mod tests {
    use super::*;

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
