//! Deterministic test data.

/// Every byte value 0..=255, in order.
pub fn all_bytes() -> Vec<u8> {
    (0..=255u8).collect()
}

/// A deterministic byte pattern of `len` bytes (not compressible to one run).
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u32)
                .wrapping_mul(31)
                .wrapping_add(seed as u32 * 7 + (i as u32 >> 8)) as u8
        })
        .collect()
}
