//! The blobs of Redis before 7.0, read only: ziplists (lists, hashes and
//! sorted sets up to 6.2, and quicklist nodes) and zipmaps (hashes before
//! 2.6). Both are validated in full, as `sanitize-dump-payload yes` would.

use crate::blob::Pairs;
use crate::blob::{byte_at, le_at, sign_extend, slice_at, Entry};
use crate::RdbError;

/// Decodes and fully validates a ziplist (Redis before 7.0).
///
/// Layout: total bytes (u32 LE), offset of the last entry (u32 LE), count
/// (u16 LE, 65535 = unknown), entries, 0xFF. An entry is the previous
/// entry's size (1 byte, or 0xFE + u32 LE), an encoding and its data:
/// 00pppppp / 01pppppp qqqqqqqq / 10xxxxxx + u32 BE: string lengths;
/// 0xC0 i16, 0xD0 i32, 0xE0 i64, 0xF0 i24, 0xFE i8 (all LE);
/// 0xF1..=0xFD: the integers 0..=12.
pub(crate) fn ziplist_entries(blob: &[u8]) -> Result<Vec<Entry<'_>>, RdbError> {
    let total = u32::from_le_bytes(le_at(blob, 0)?) as usize;
    let tail = u32::from_le_bytes(le_at(blob, 4)?) as usize;
    let declared = u16::from_le_bytes(le_at(blob, 8)?);
    if total != blob.len() || blob.len() < 11 || blob.last() != Some(&0xFF) {
        return Err(RdbError::BadFormat);
    }
    let mut entries = Vec::with_capacity(usize::from(declared).min(blob.len()));
    let mut pos = 10;
    let mut previous_size = 0;
    let mut last_entry_at = 10;
    loop {
        let first = byte_at(blob, pos)?;
        if first == 0xFF {
            break;
        }
        let start = pos;
        let (prevlen, header) = if first < 0xFE {
            (usize::from(first), 1)
        } else if first == 0xFE {
            (u32::from_le_bytes(le_at(blob, pos + 1)?) as usize, 5)
        } else {
            return Err(RdbError::BadFormat);
        };
        if prevlen != previous_size {
            return Err(RdbError::BadFormat);
        }
        pos += header;
        let encoding = byte_at(blob, pos)?;
        let (entry, size) = match encoding {
            0x00..=0x3F => {
                let len = usize::from(encoding);
                (Entry::Bytes(slice_at(blob, pos + 1, len)?), 1 + len)
            }
            0x40..=0x7F => {
                let len =
                    (usize::from(encoding & 0x3F) << 8) | usize::from(byte_at(blob, pos + 1)?);
                (Entry::Bytes(slice_at(blob, pos + 2, len)?), 2 + len)
            }
            0x80..=0xBF => {
                let len = u32::from_be_bytes(le_at(blob, pos + 1)?) as usize;
                (
                    Entry::Bytes(slice_at(blob, pos + 5, len)?),
                    len.checked_add(5).ok_or(RdbError::BadFormat)?,
                )
            }
            0xC0 => (
                Entry::Int(i64::from(i16::from_le_bytes(le_at(blob, pos + 1)?))),
                3,
            ),
            0xD0 => (
                Entry::Int(i64::from(i32::from_le_bytes(le_at(blob, pos + 1)?))),
                5,
            ),
            0xE0 => (Entry::Int(i64::from_le_bytes(le_at(blob, pos + 1)?)), 9),
            0xF0 => {
                let [a, b, c] = le_at::<3>(blob, pos + 1)?;
                let bits = u64::from(u32::from_le_bytes([a, b, c, 0]));
                (Entry::Int(sign_extend(bits, 24)), 4)
            }
            0xFE => (Entry::Int(i64::from(byte_at(blob, pos + 1)? as i8)), 2),
            0xF1..=0xFD => (Entry::Int(i64::from(encoding & 0x0F) - 1), 1),
            _ => return Err(RdbError::BadFormat),
        };
        pos = pos.checked_add(size).ok_or(RdbError::BadFormat)?;
        if pos >= blob.len() {
            return Err(RdbError::BadFormat);
        }
        previous_size = pos - start;
        last_entry_at = start;
        entries.push(entry);
    }
    if pos != blob.len() - 1
        || tail != last_entry_at
        || (declared != u16::MAX && usize::from(declared) != entries.len())
    {
        return Err(RdbError::BadFormat);
    }
    Ok(entries)
}

/// Decodes a zipmap (the hash encoding of Redis before 2.6).
///
/// Layout: a count byte (254 = unknown), then per pair: key length, key,
/// value length, a "free" byte, value, that many unused bytes; 0xFF ends
/// it. A length is one byte below 254, or 254 + u32 LE.
pub(crate) fn zipmap_pairs(blob: &[u8]) -> Result<Pairs, RdbError> {
    fn length(blob: &[u8], pos: &mut usize) -> Result<usize, RdbError> {
        match byte_at(blob, *pos)? {
            len @ 0..=253 => {
                *pos += 1;
                Ok(usize::from(len))
            }
            254 => {
                let len = u32::from_le_bytes(le_at(blob, *pos + 1)?) as usize;
                *pos += 5;
                Ok(len)
            }
            _ => Err(RdbError::BadFormat),
        }
    }
    let declared = byte_at(blob, 0)?;
    let mut pairs = Vec::new();
    let mut pos = 1;
    while byte_at(blob, pos)? != 0xFF {
        let key_len = length(blob, &mut pos)?;
        let key = slice_at(blob, pos, key_len)?.to_vec();
        pos += key_len;
        let value_len = length(blob, &mut pos)?;
        let free = usize::from(byte_at(blob, pos)?);
        pos += 1;
        let value = slice_at(blob, pos, value_len)?.to_vec();
        pos += value_len;
        slice_at(blob, pos, free)?;
        pos += free;
        pairs.push((key, value));
    }
    if pos != blob.len() - 1 || (declared < 254 && usize::from(declared) != pairs.len()) {
        return Err(RdbError::BadFormat);
    }
    Ok(pairs)
}
