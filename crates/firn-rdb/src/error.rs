//! The one error of decoding a payload, with the reply RESTORE sends: every
//! codec module returns it, so it sits below them all.

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RdbError {
    /// Too short, a version newer than 10, or a CRC mismatch.
    /// Reply: "ERR DUMP payload version or checksum are wrong".
    #[error("DUMP payload version or checksum are wrong")]
    BadChecksum,
    /// The checksum holds but the object does not decode, or is of a type
    /// Redis 7.0 cannot restore either (module values: Firn loads no
    /// modules, and Redis replies the same without the module).
    /// Reply: "ERR Bad data format".
    #[error("Bad data format")]
    BadFormat,
}

impl RdbError {
    /// The error reply RESTORE sends.
    pub fn reply_text(&self) -> String {
        format!("ERR {self}")
    }
}
