//! Redis's long double arithmetic (INCRBYFLOAT, HINCRBYFLOAT) through the
//! C shim (build.rs): `string2ld`, the addition and `ld2string`.

use bytes::Bytes;

extern "C" {
    fn firn_incrbyfloat(
        value: *const u8,
        value_len: usize,
        incr: *const u8,
        incr_len: usize,
        out: *mut u8,
        out_cap: usize,
    ) -> i32;
}

/// Why [`long_double_sum`] failed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LongDoubleError {
    /// An input is not a long double (string2ld).
    NotFloat,
    /// The sum is NaN or infinite.
    NotFinite,
}

/// `value + incr` in C long double, printed as Redis prints it (INCRBYFLOAT,
/// HINCRBYFLOAT).
pub(crate) fn long_double_sum(value: &[u8], incr: &[u8]) -> Result<Bytes, LongDoubleError> {
    let mut out = vec![0u8; 5 * 1024];
    // SAFETY: the shim reads exactly the given lengths and writes at most
    // `out.len()` bytes including the NUL; it keeps no pointers.
    let n = unsafe {
        firn_incrbyfloat(
            value.as_ptr(),
            value.len(),
            incr.as_ptr(),
            incr.len(),
            out.as_mut_ptr(),
            out.len(),
        )
    };
    match n {
        -2 => Err(LongDoubleError::NotFinite),
        n if n < 0 => Err(LongDoubleError::NotFloat),
        n => {
            out.truncate(n as usize);
            Ok(Bytes::from(out))
        }
    }
}
