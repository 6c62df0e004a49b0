//! Listpacks, Redis 7.0's compact encoding of small hashes, sorted sets
//! and list nodes: built as `lpAppend` builds them (integers in the
//! smallest encoding, byte-identical to Redis) and read with every length,
//! back-length and count checked. Also the text a sorted set score takes
//! inside one (Redis's `d2string`).

use crate::blob::{byte_at, le_at, sign_extend, slice_at, Entry};
use crate::RdbError;
use firn_prims::{format_double, string2ll};

/// A score as Redis 7.0's d2string writes it into a listpack: integral
/// values within +-2^62 as integers, others as printf's "%.17g".
pub fn score_text(score: f64) -> Vec<u8> {
    const LIMIT: f64 = (i64::MAX / 2) as f64;
    if score.is_nan() {
        return b"nan".to_vec();
    }
    if score.is_infinite() {
        return if score > 0.0 {
            b"inf".to_vec()
        } else {
            b"-inf".to_vec()
        };
    }
    if (-LIMIT..=LIMIT).contains(&score) && score.trunc() == score {
        return (score as i64).to_string().into_bytes();
    }
    format_double(score).into_bytes()
}

/// Builds a listpack the way Redis's lpAppend does.
///
/// Layout: total bytes (u32 LE), element count (u16 LE, 65535 = unknown),
/// entries, 0xFF. An entry is an encoding byte (plus data), then its
/// "backlen": the size of encoding + data in 1-5 bytes of 7 bits, written
/// so it can be read from the right (high bit = more bytes to the left).
pub(crate) struct ListpackWriter {
    buf: Vec<u8>,
    count: usize,
}

impl ListpackWriter {
    pub(crate) fn new() -> Self {
        ListpackWriter {
            buf: vec![0; 6],
            count: 0,
        }
    }

    /// The size the finished listpack would have.
    pub(crate) fn bytes(&self) -> usize {
        self.buf.len() + 1
    }

    pub(crate) fn push(&mut self, element: &[u8]) {
        let start = self.buf.len();
        match string2ll(element) {
            Some(value) => push_integer_encoding(&mut self.buf, value),
            None => push_string_encoding(&mut self.buf, element),
        }
        self.end_element(start);
    }

    /// Appends an integer as lpAppendInteger does: the same bytes `push`
    /// writes for its decimal text.
    pub(crate) fn push_integer(&mut self, value: i64) {
        let start = self.buf.len();
        push_integer_encoding(&mut self.buf, value);
        self.end_element(start);
    }

    /// Appends the elements of another listpack under construction.
    pub(crate) fn extend(&mut self, tail: ListpackWriter) {
        self.buf
            .extend_from_slice(tail.buf.get(6..).unwrap_or_default());
        self.count += tail.count;
    }

    fn end_element(&mut self, start: usize) {
        let entry_len = self.buf.len() - start;
        push_backlen(&mut self.buf, entry_len as u64);
        self.count += 1;
    }

    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.buf.push(0xFF);
        let total = self.buf.len() as u32;
        let count = u16::try_from(self.count).unwrap_or(u16::MAX);
        self.buf[0..4].copy_from_slice(&total.to_le_bytes());
        self.buf[4..6].copy_from_slice(&count.to_le_bytes());
        self.buf
    }
}

/// The bytes an integer element takes in a listpack, its backlen
/// included (always one byte: an integer's encoding is at most 9).
pub(crate) fn integer_element_bytes(value: i64) -> usize {
    let mut encoding = Vec::with_capacity(9);
    push_integer_encoding(&mut encoding, value);
    encoding.len() + 1
}

/// An integer in the smallest of the listpack's integer encodings.
fn push_integer_encoding(buf: &mut Vec<u8>, value: i64) {
    match value {
        0..=127 => buf.push(value as u8),
        -4096..=4095 => {
            let bits = (value as u64) & 0x1FFF;
            buf.push(0xC0 | (bits >> 8) as u8);
            buf.push(bits as u8);
        }
        _ if i16::try_from(value).is_ok() => {
            buf.push(0xF1);
            buf.extend_from_slice(&value.to_le_bytes()[..2]);
        }
        -8_388_608..=8_388_607 => {
            buf.push(0xF2);
            buf.extend_from_slice(&value.to_le_bytes()[..3]);
        }
        _ if i32::try_from(value).is_ok() => {
            buf.push(0xF3);
            buf.extend_from_slice(&value.to_le_bytes()[..4]);
        }
        _ => {
            buf.push(0xF4);
            buf.extend_from_slice(&value.to_le_bytes());
        }
    }
}

fn push_string_encoding(buf: &mut Vec<u8>, element: &[u8]) {
    let len = element.len();
    if len < 64 {
        buf.push(0x80 | len as u8);
    } else if len < 4096 {
        buf.push(0xE0 | (len >> 8) as u8);
        buf.push(len as u8);
    } else {
        buf.push(0xF0);
        buf.extend_from_slice(&(len as u32).to_le_bytes());
    }
    buf.extend_from_slice(element);
}

fn push_backlen(out: &mut Vec<u8>, len: u64) {
    if len <= 127 {
        out.push(len as u8);
    } else if len < 16383 {
        out.push((len >> 7) as u8);
        out.push((len & 127) as u8 | 128);
    } else if len < 2_097_151 {
        out.push((len >> 14) as u8);
        out.push(((len >> 7) & 127) as u8 | 128);
        out.push((len & 127) as u8 | 128);
    } else if len < 268_435_455 {
        out.push((len >> 21) as u8);
        out.push(((len >> 14) & 127) as u8 | 128);
        out.push(((len >> 7) & 127) as u8 | 128);
        out.push((len & 127) as u8 | 128);
    } else {
        out.push((len >> 28) as u8);
        out.push(((len >> 21) & 127) as u8 | 128);
        out.push(((len >> 14) & 127) as u8 | 128);
        out.push(((len >> 7) & 127) as u8 | 128);
        out.push((len & 127) as u8 | 128);
    }
}

/// Decodes and fully validates a listpack (layout at `ListpackWriter`).
pub(crate) fn listpack_entries(blob: &[u8]) -> Result<Vec<Entry<'_>>, RdbError> {
    let total = u32::from_le_bytes(le_at(blob, 0)?) as usize;
    let declared = u16::from_le_bytes(le_at(blob, 4)?);
    if total != blob.len() || blob.len() < 7 || blob.last() != Some(&0xFF) {
        return Err(RdbError::BadFormat);
    }
    let mut entries = Vec::with_capacity(usize::from(declared).min(blob.len()));
    let mut pos = 6;
    loop {
        let first = byte_at(blob, pos)?;
        if first == 0xFF {
            break;
        }
        let (entry, size) = match first {
            0x00..=0x7F => (Entry::Int(i64::from(first)), 1),
            0x80..=0xBF => {
                let len = usize::from(first & 0x3F);
                (Entry::Bytes(slice_at(blob, pos + 1, len)?), 1 + len)
            }
            0xC0..=0xDF => {
                let bits = (u64::from(first & 0x1F) << 8) | u64::from(byte_at(blob, pos + 1)?);
                (Entry::Int(sign_extend(bits, 13)), 2)
            }
            0xE0..=0xEF => {
                let len = (usize::from(first & 0x0F) << 8) | usize::from(byte_at(blob, pos + 1)?);
                (Entry::Bytes(slice_at(blob, pos + 2, len)?), 2 + len)
            }
            0xF0 => {
                let len = u32::from_le_bytes(le_at(blob, pos + 1)?) as usize;
                (
                    Entry::Bytes(slice_at(blob, pos + 5, len)?),
                    len.checked_add(5).ok_or(RdbError::BadFormat)?,
                )
            }
            0xF1 => (
                Entry::Int(i64::from(i16::from_le_bytes(le_at(blob, pos + 1)?))),
                3,
            ),
            0xF2 => {
                let [a, b, c] = le_at::<3>(blob, pos + 1)?;
                let bits = u64::from(u32::from_le_bytes([a, b, c, 0]));
                (Entry::Int(sign_extend(bits, 24)), 4)
            }
            0xF3 => (
                Entry::Int(i64::from(i32::from_le_bytes(le_at(blob, pos + 1)?))),
                5,
            ),
            0xF4 => (Entry::Int(i64::from_le_bytes(le_at(blob, pos + 1)?)), 9),
            _ => return Err(RdbError::BadFormat),
        };
        let mut backlen = Vec::with_capacity(5);
        push_backlen(&mut backlen, size as u64);
        let backlen_at = pos.checked_add(size).ok_or(RdbError::BadFormat)?;
        if slice_at(blob, backlen_at, backlen.len())? != backlen.as_slice() {
            return Err(RdbError::BadFormat);
        }
        pos = backlen_at + backlen.len();
        entries.push(entry);
    }
    if pos != blob.len() - 1 || (declared != u16::MAX && usize::from(declared) != entries.len()) {
        return Err(RdbError::BadFormat);
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_are_written_like_redis_7_0_d2string() {
        // Checked against the listpack bytes of redis-server 7.0.15 DUMPs.
        let cases: &[(f64, &str)] = &[
            (0.1, "0.10000000000000001"),
            (-0.0, "0"),
            (1e300, "1.0000000000000001e+300"),
            (1e-5, "1.0000000000000001e-05"),
            (0.0001, "0.0001"),
            (1.5, "1.5"),
            (12345.678, "12345.678"),
            (2.5e-310, "2.5000000000000171e-310"),
            (1e17, "100000000000000000"),
            (4_611_686_018_427_387_904.0, "4611686018427387904"),
            (4_611_686_018_427_388_928.0, "4.6116860184273889e+18"),
            (-4_611_686_018_427_387_904.0, "-4611686018427387904"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (score, text) in cases {
            assert_eq!(
                String::from_utf8(score_text(*score)).unwrap(),
                *text,
                "{score}"
            );
        }
    }
}
