//! What the embedded blobs (listpack, ziplist, zipmap, intset) and LZF
//! input share: bounds-checked reads, where any length or offset past the
//! buffer is `BadFormat`, and [`Entry`], the element a listpack or ziplist
//! holds.

use crate::RdbError;

/// Hash fields and values.
pub(crate) type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// Parses a score written as text (Redis uses strtod). NaN is refused by
/// the caller.
pub(crate) fn parse_score(text: &[u8]) -> Result<f64, RdbError> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .ok_or(RdbError::BadFormat)
}

/// An element of a listpack or ziplist.
pub(crate) enum Entry<'a> {
    Int(i64),
    Bytes(&'a [u8]),
}

impl Entry<'_> {
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        match self {
            Entry::Int(v) => v.to_string().into_bytes(),
            Entry::Bytes(b) => b.to_vec(),
        }
    }

    pub(crate) fn to_score(&self) -> Result<f64, RdbError> {
        match self {
            Entry::Int(v) => Ok(*v as f64),
            Entry::Bytes(b) => parse_score(b),
        }
    }
}

pub(crate) fn slice_at(blob: &[u8], start: usize, len: usize) -> Result<&[u8], RdbError> {
    let end = start.checked_add(len).ok_or(RdbError::BadFormat)?;
    blob.get(start..end).ok_or(RdbError::BadFormat)
}

pub(crate) fn byte_at(blob: &[u8], at: usize) -> Result<u8, RdbError> {
    blob.get(at).copied().ok_or(RdbError::BadFormat)
}

pub(crate) fn le_at<const N: usize>(blob: &[u8], at: usize) -> Result<[u8; N], RdbError> {
    slice_at(blob, at, N)?
        .try_into()
        .map_err(|_| RdbError::BadFormat)
}

/// Sign-extends the low `bits` bits of `value`.
pub(crate) fn sign_extend(value: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((value << shift) as i64) >> shift
}
