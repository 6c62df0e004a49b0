//! The RDB's basic encodings: lengths (6, 14, 32 or 64 bits behind a
//! 2-bit prefix), strings (raw, integer as 8/16/32 bits, or LZF) and
//! doubles (binary, or the old length-prefixed text), with [`Reader`], the
//! bounds-checked cursor every object is read through. Every object type,
//! and FUNCTION DUMP's library code, is made of these.

use crate::blob::parse_score;
use crate::lzf::{lzf_compress, lzf_decompress};
use crate::RdbError;
use firn_prims::string2ll;

// Special string encodings (the low 6 bits after a 0b11 length prefix).
pub(crate) const ENC_INT8: u8 = 0;
pub(crate) const ENC_INT16: u8 = 1;
pub(crate) const ENC_INT32: u8 = 2;
pub(crate) const ENC_LZF: u8 = 3;

pub(crate) fn write_len(out: &mut Vec<u8>, len: u64) {
    if len < 64 {
        out.push(len as u8);
    } else if len < 16384 {
        out.push(0x40 | (len >> 8) as u8);
        out.push(len as u8);
    } else if len <= u32::MAX as u64 {
        out.push(0x80);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&len.to_be_bytes());
    }
}

/// Redis's rdbSaveRawString: integer encoding, then LZF, then raw.
pub fn write_string(out: &mut Vec<u8>, value: &[u8]) {
    if value.len() <= 11 {
        if let Some(n) = string2ll(value) {
            if let Ok(b) = i8::try_from(n) {
                out.push(0xC0 | ENC_INT8);
                out.push(b as u8);
                return;
            } else if let Ok(h) = i16::try_from(n) {
                out.push(0xC0 | ENC_INT16);
                out.extend_from_slice(&h.to_le_bytes());
                return;
            } else if let Ok(w) = i32::try_from(n) {
                out.push(0xC0 | ENC_INT32);
                out.extend_from_slice(&w.to_le_bytes());
                return;
            }
        }
    }
    if value.len() > 20 {
        // Worth it only when it saves at least four bytes.
        if let Some(compressed) = lzf_compress(value, value.len() - 4) {
            out.push(0xC0 | ENC_LZF);
            write_len(out, compressed.len() as u64);
            write_len(out, value.len() as u64);
            out.extend_from_slice(&compressed);
            return;
        }
    }
    write_len(out, value.len() as u64);
    out.extend_from_slice(value);
}

/// Reads one RDB string (raw, integer or LZF encoded) at `*pos`, moving
/// `*pos` past it. Used by FUNCTION RESTORE.
pub fn read_string_at(data: &[u8], pos: &mut usize) -> Result<Vec<u8>, RdbError> {
    let mut reader = Reader { data, pos: *pos };
    let value = reader.string()?;
    *pos = reader.pos;
    Ok(value)
}

/// Reads one RDB length at `*pos` as Redis's `rdbLoadLen(rdb, NULL)` does:
/// the 6-bit value of an encoded-string marker counts as a length. Used by
/// FUNCTION RESTORE.
pub fn read_length_at(data: &[u8], pos: &mut usize) -> Result<u64, RdbError> {
    let mut reader = Reader { data, pos: *pos };
    let length = reader.length()?.unwrap_or_else(u64::from);
    *pos = reader.pos;
    Ok(length)
}

/// A cursor over a payload or a blob: every read checks that its bytes are
/// there, and fails with `BadFormat` rather than reading past the end.
pub(crate) struct Reader<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn byte(&mut self) -> Result<u8, RdbError> {
        let b = *self.data.get(self.pos).ok_or(RdbError::BadFormat)?;
        self.pos += 1;
        Ok(b)
    }

    pub(crate) fn take(&mut self, n: u64) -> Result<&'a [u8], RdbError> {
        let n = usize::try_from(n).map_err(|_| RdbError::BadFormat)?;
        let end = self.pos.checked_add(n).ok_or(RdbError::BadFormat)?;
        let slice = self.data.get(self.pos..end).ok_or(RdbError::BadFormat)?;
        self.pos = end;
        Ok(slice)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], RdbError> {
        self.take(N as u64)?
            .try_into()
            .map_err(|_| RdbError::BadFormat)
    }

    /// Every element takes at least one byte, so a count can never need
    /// more room than the bytes left.
    pub(crate) fn capacity_for(&self, count: usize) -> usize {
        count.min(self.data.len().saturating_sub(self.pos))
    }

    /// A length, or `Err(special)` for an encoded string.
    pub(crate) fn length(&mut self) -> Result<Result<u64, u8>, RdbError> {
        let first = self.byte()?;
        Ok(match first >> 6 {
            0 => Ok(u64::from(first & 0x3F)),
            1 => Ok((u64::from(first & 0x3F) << 8) | u64::from(self.byte()?)),
            2 if first == 0x80 => Ok(u64::from(u32::from_be_bytes(self.array()?))),
            2 if first == 0x81 => Ok(u64::from_be_bytes(self.array()?)),
            2 => return Err(RdbError::BadFormat),
            _ => Err(first & 0x3F),
        })
    }

    pub(crate) fn plain_length(&mut self) -> Result<u64, RdbError> {
        self.length()?.map_err(|_| RdbError::BadFormat)
    }

    pub(crate) fn count(&mut self) -> Result<usize, RdbError> {
        usize::try_from(self.plain_length()?).map_err(|_| RdbError::BadFormat)
    }

    pub(crate) fn string(&mut self) -> Result<Vec<u8>, RdbError> {
        match self.length()? {
            Ok(len) => Ok(self.take(len)?.to_vec()),
            Err(ENC_INT8) => Ok((self.byte()? as i8).to_string().into_bytes()),
            Err(ENC_INT16) => Ok(i16::from_le_bytes(self.array()?).to_string().into_bytes()),
            Err(ENC_INT32) => Ok(i32::from_le_bytes(self.array()?).to_string().into_bytes()),
            Err(ENC_LZF) => {
                let compressed_len = self.plain_length()?;
                let len = self.plain_length()?;
                let compressed = self.take(compressed_len)?;
                lzf_decompress(compressed, len)
            }
            Err(_) => Err(RdbError::BadFormat),
        }
    }

    /// The old text score: a length byte (253 NaN, 254 +inf, 255 -inf)
    /// then that many ASCII bytes.
    pub(crate) fn text_double(&mut self) -> Result<f64, RdbError> {
        match self.byte()? {
            253 => Ok(f64::NAN),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            len => parse_score(self.take(u64::from(len))?),
        }
    }

    pub(crate) fn binary_double(&mut self) -> Result<f64, RdbError> {
        Ok(f64::from_le_bytes(self.array()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(value: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        write_string(&mut out, value);
        out
    }

    /// Only what `string2ll` reads (the canonical form of an i64) is
    /// written in the integer encoding; anything else stays text.
    #[test]
    fn canonical_integers_follow_string2ll() {
        assert_eq!(encoded(b"0"), [0xC0 | ENC_INT8, 0]);
        assert_eq!(encoded(b"-1"), [0xC0 | ENC_INT8, 0xFF]);
        assert_eq!(encoded(b"300"), [0xC0 | ENC_INT16, 0x2C, 0x01]);
        assert_eq!(
            encoded(b"-2147483648"),
            [0xC0 | ENC_INT32, 0x00, 0x00, 0x00, 0x80]
        );
        // Canonical, but wider than 32 bits: raw.
        assert_eq!(encoded(b"2147483648"), b"\x0a2147483648");
        for bad in ["-", "-0", "00", "01", "+1", " 1", "1 ", "1.0", "0x1"] {
            let mut raw = vec![bad.len() as u8];
            raw.extend_from_slice(bad.as_bytes());
            assert_eq!(encoded(bad.as_bytes()), raw, "{bad}");
        }
    }
}
