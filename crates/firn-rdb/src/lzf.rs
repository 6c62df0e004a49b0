//! LZF, the compression of long RDB strings: liblzf 3.6 with Redis's
//! settings, so that DUMP output is byte-identical to Redis's, and a
//! decompressor that checks every back reference and the announced length.
//!
//! Format: a control byte 000LLLLL is followed by L+1 literal bytes;
//! LLLooooo oooooooo copies L+2 bytes from `offset + 1` back in the output,
//! and 111ooooo LLLLLLLL oooooooo copies L+9.

use crate::blob::{byte_at, slice_at};
use crate::RdbError;

const LZF_HASH_LOG: u32 = 16;
const LZF_MAX_LITERAL: usize = 1 << 5;
const LZF_MAX_OFFSET: usize = 1 << 13;
const LZF_MAX_REFERENCE: usize = (1 << 8) + (1 << 3);

/// Compresses as liblzf 3.6 does with Redis's settings (HLOG 16, VERY_FAST,
/// not ULTRA_FAST), so that DUMP output is byte-identical to Redis.
/// Returns None when the result would not fit in `out_len` bytes, using
/// liblzf's own (conservative) bounds checks.
///
/// liblzf leaves its hash table uninitialised (INIT_HTAB 0), yet its output
/// is deterministic and a zeroed table reproduces it: a stale slot can only
/// be consulted for a trigram not seen at any hashed position before, and
/// every trigram inside a match also occurs at an earlier hashed position,
/// so a stale candidate never compares equal. Offset 0 is never a valid
/// candidate in liblzf either, which is why 0 can mean "empty".
pub(crate) fn lzf_compress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    fn slot(hval: u32) -> usize {
        ((hval >> (24 - LZF_HASH_LOG)).wrapping_sub(hval.wrapping_mul(5))
            & ((1 << LZF_HASH_LOG) - 1)) as usize
    }
    fn set(out: &mut [u8], at: usize, byte: u8) -> Option<()> {
        *out.get_mut(at)? = byte;
        Some(())
    }
    fn at(input: &[u8], i: usize) -> u32 {
        input.get(i).copied().map_or(0, u32::from)
    }

    let in_len = input.len();
    if in_len == 0 || out_len == 0 {
        return None;
    }
    let mut table = vec![0u32; 1 << LZF_HASH_LOG];
    let mut out = vec![0u8; out_len];
    let mut lit: usize = 0;
    let mut op: usize = 1; // out[op - lit - 1] holds the open literal run's header
    let mut ip: usize = 0;
    let mut hval: u32 = (at(input, 0) << 8) | at(input, 1);
    while ip + 2 < in_len {
        hval = (hval << 8) | at(input, ip + 2);
        let h = slot(hval);
        let reference = table[h] as usize;
        table[h] = ip as u32;
        let is_match = reference > 0
            && reference < ip
            && ip - reference - 1 < LZF_MAX_OFFSET
            && input.get(reference..reference + 3) == input.get(ip..ip + 3);
        if is_match {
            let off = ip - reference - 1;
            let mut len: usize = 2;
            let max_len = (in_len - ip - len).min(LZF_MAX_REFERENCE);
            if op - usize::from(lit == 0) + 3 + 1 >= out_len {
                return None;
            }
            set(&mut out, op - lit - 1, (lit as u8).wrapping_sub(1))?;
            if lit == 0 {
                op -= 1;
            }
            // liblzf compares 16 bytes unrolled before its bounded loop when
            // more than 16 are possible; reproduce its exact lengths.
            let mut mismatch = false;
            if max_len > 16 {
                for _ in 0..16 {
                    len += 1;
                    if input.get(reference + len) != input.get(ip + len) {
                        mismatch = true;
                        break;
                    }
                }
            }
            if !mismatch {
                loop {
                    len += 1;
                    if !(len < max_len && input.get(reference + len) == input.get(ip + len)) {
                        break;
                    }
                }
            }
            len -= 2;
            ip += 1;
            if len < 7 {
                set(&mut out, op, ((off >> 8) + (len << 5)) as u8)?;
                op += 1;
            } else {
                set(&mut out, op, ((off >> 8) + (7 << 5)) as u8)?;
                set(&mut out, op + 1, (len - 7) as u8)?;
                op += 2;
            }
            set(&mut out, op, off as u8)?;
            op += 2; // and open a new literal run
            lit = 0;
            ip += len + 1;
            if ip + 2 >= in_len {
                break;
            }
            // VERY_FAST: hash the last two positions of the match.
            ip -= 2;
            hval = (at(input, ip) << 8) | at(input, ip + 1);
            for _ in 0..2 {
                hval = (hval << 8) | at(input, ip + 2);
                table[slot(hval)] = ip as u32;
                ip += 1;
            }
        } else {
            if op >= out_len {
                return None;
            }
            set(&mut out, op, at(input, ip) as u8)?;
            op += 1;
            ip += 1;
            lit += 1;
            if lit == LZF_MAX_LITERAL {
                set(&mut out, op - lit - 1, (lit - 1) as u8)?;
                lit = 0;
                op += 1;
            }
        }
    }
    if op + 3 > out_len {
        return None;
    }
    while ip < in_len {
        set(&mut out, op, at(input, ip) as u8)?;
        op += 1;
        ip += 1;
        lit += 1;
        if lit == LZF_MAX_LITERAL {
            set(&mut out, op - lit - 1, (lit - 1) as u8)?;
            lit = 0;
            op += 1;
        }
    }
    set(&mut out, op - lit - 1, (lit as u8).wrapping_sub(1))?;
    if lit == 0 {
        op -= 1;
    }
    out.truncate(op);
    Some(out)
}

/// LZF decompression; the output must come to exactly `expected_len` bytes.
pub(crate) fn lzf_decompress(input: &[u8], expected_len: u64) -> Result<Vec<u8>, RdbError> {
    let expected_len = usize::try_from(expected_len).map_err(|_| RdbError::BadFormat)?;
    // The announced length is untrusted: preallocate no more than the
    // compressed input itself and let highly compressed data grow the
    // buffer. Overshooting stops within one back reference (264 bytes).
    let mut out: Vec<u8> = Vec::with_capacity(expected_len.min(input.len()));
    let mut ip = 0;
    while let Some(&ctrl) = input.get(ip) {
        ip += 1;
        let ctrl = usize::from(ctrl);
        if ctrl < 32 {
            let literal = slice_at(input, ip, ctrl + 1)?;
            out.extend_from_slice(literal);
            ip += ctrl + 1;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                len += usize::from(byte_at(input, ip)?);
                ip += 1;
            }
            let back = ((ctrl & 0x1F) << 8) + usize::from(byte_at(input, ip)?) + 1;
            ip += 1;
            let from = out.len().checked_sub(back).ok_or(RdbError::BadFormat)?;
            // The source may overlap what this copy appends (runs).
            for at in from..from + len + 2 {
                let b = *out.get(at).ok_or(RdbError::BadFormat)?;
                out.push(b);
            }
        }
        if out.len() > expected_len {
            return Err(RdbError::BadFormat);
        }
    }
    if out.len() != expected_len {
        return Err(RdbError::BadFormat);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::xorshift::Gen;

    #[test]
    fn lzf_round_trips_and_edges() {
        let mut g = Gen(99);
        for n in [1usize, 2, 3, 4, 5, 31, 32, 33, 264, 265, 8193, 70_000] {
            for alphabet in [1u64, 2, 4, 256] {
                let input: Vec<u8> = (0..n).map(|_| g.below(alphabet) as u8).collect();
                if let Some(c) = lzf_compress(&input, n + 64) {
                    assert_eq!(lzf_decompress(&c, n as u64), Ok(input.clone()));
                }
            }
        }
        assert_eq!(lzf_compress(b"", 10), None);
        assert_eq!(lzf_compress(b"abcdef", 0), None);
        // Back reference before the start.
        assert!(lzf_decompress(&[0xE0, 0xFF, 0x00], 10).is_err());
        assert!(lzf_decompress(&[0x00, b'a', 0x20, 0x01], 4).is_err());
        // Literal run past the input.
        assert!(lzf_decompress(&[0x05, b'a'], 6).is_err());
        // Truncated back reference.
        assert!(lzf_decompress(&[0x00, b'a', 0xE0], 10).is_err());
        // Output longer or shorter than announced.
        assert!(lzf_decompress(&[0x00, b'a', 0x20, 0x00], 2).is_err());
        assert!(lzf_decompress(&[0x00, b'a', 0x20, 0x00], 5).is_err());
        assert_eq!(
            lzf_decompress(&[0x00, b'a', 0x20, 0x00], 4),
            Ok(b"aaaa".to_vec())
        );
        // An absurd announced length allocates nothing up front.
        assert!(lzf_decompress(&[0x00, b'a'], u64::MAX).is_err());
    }
}
