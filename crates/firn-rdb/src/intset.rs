//! Intsets, the encoding of a set of up to 512 integers: written as Redis
//! writes them (the narrowest width that holds every value) and read with
//! width, count and strict ascending order checked.

use crate::blob::{le_at, sign_extend};
use crate::RdbError;

/// An intset: encoding width (2, 4 or 8) and count as u32 LE, then the
/// values ascending, each little-endian in that width.
pub(crate) fn intset_bytes(sorted: &[i64]) -> Vec<u8> {
    let width: usize = sorted
        .iter()
        .map(|&v| {
            if i16::try_from(v).is_ok() {
                2
            } else if i32::try_from(v).is_ok() {
                4
            } else {
                8
            }
        })
        .max()
        .unwrap_or(2);
    let mut blob = Vec::with_capacity(8 + width * sorted.len());
    blob.extend_from_slice(&(width as u32).to_le_bytes());
    blob.extend_from_slice(&(sorted.len() as u32).to_le_bytes());
    for &v in sorted {
        blob.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    blob
}

/// Decodes and validates an intset (layout at `intset_bytes`); values must
/// be strictly ascending.
pub(crate) fn intset_values(blob: &[u8]) -> Result<Vec<i64>, RdbError> {
    let width = u32::from_le_bytes(le_at(blob, 0)?) as usize;
    let count = u32::from_le_bytes(le_at(blob, 4)?) as usize;
    if !matches!(width, 2 | 4 | 8) || count.checked_mul(width) != Some(blob.len() - 8) {
        return Err(RdbError::BadFormat);
    }
    let mut values: Vec<i64> = Vec::with_capacity(count);
    for chunk in blob.get(8..).unwrap_or_default().chunks_exact(width) {
        let mut bytes = [0u8; 8];
        bytes[..width].copy_from_slice(chunk);
        let value = sign_extend(u64::from_le_bytes(bytes), width as u32 * 8);
        if values.last().is_some_and(|&last| last >= value) {
            return Err(RdbError::BadFormat);
        }
        values.push(value);
    }
    Ok(values)
}
