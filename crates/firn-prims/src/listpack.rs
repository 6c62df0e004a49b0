//! The sizes of Redis's listpack entries (listpack.c), without the
//! listpack: a stream decides where its nodes split from the byte size its
//! listpack would have (t_stream.c's `stream-node-max-bytes` check), so the
//! storage engine needs the size each element would take, exactly.

use crate::integer::string2ll;

/// A listpack's header (total bytes u32, element count u16) plus its end
/// byte.
pub const LISTPACK_OVERHEAD: u64 = 6 + 1;

/// Strings this long or longer are never integers (LONG_STR_SIZE).
const LONG_STR_SIZE: usize = 21;

/// The bytes an integer element takes: its encoding, then its back-length.
pub fn int_entry_size(v: i64) -> u64 {
    let encoded = match v {
        0..=127 => 1,
        -4096..=4095 => 2,
        -32768..=32767 => 3,
        -8_388_608..=8_388_607 => 4,
        -2_147_483_648..=2_147_483_647 => 5,
        _ => 9,
    };
    encoded + backlen_size(encoded)
}

/// The bytes an element takes when appended as a string: an integer
/// element if it reads as one (lpStringToInt64, the rules of string2ll),
/// else a string with a 1, 2 or 5 byte header; then its back-length.
pub fn entry_size(element: &[u8]) -> u64 {
    if element.len() < LONG_STR_SIZE {
        if let Some(v) = string2ll(element) {
            return int_entry_size(v);
        }
    }
    let len = element.len() as u64;
    let encoded = match len {
        0..=63 => 1 + len,
        64..=4095 => 2 + len,
        _ => 5 + len,
    };
    encoded + backlen_size(encoded)
}

/// The bytes of the reversed length after an element of `len` bytes.
fn backlen_size(len: u64) -> u64 {
    match len {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_listpack_encodings() {
        assert_eq!(entry_size(b"0"), 2);
        assert_eq!(entry_size(b"127"), 2);
        assert_eq!(entry_size(b"128"), 3);
        assert_eq!(entry_size(b"-1"), 3);
        assert_eq!(entry_size(b"40000"), 5);
        assert_eq!(entry_size(b"9223372036854775807"), 10);
        // Not integers: leading zero, plus sign, too long.
        assert_eq!(entry_size(b"01"), 4);
        assert_eq!(entry_size(b"+1"), 4);
        assert_eq!(entry_size(b""), 2);
        assert_eq!(entry_size(&[b'a'; 63]), 65);
        assert_eq!(entry_size(&[b'a'; 64]), 66 + 1);
        assert_eq!(entry_size(&[b'a'; 200]), 202 + 2);
        assert_eq!(entry_size(&[b'a'; 5000]), 5005 + 2);
        assert_eq!(int_entry_size(-4096), 3);
        assert_eq!(int_entry_size(i64::MIN), 10);
    }
}
