//! RESP2/RESP3 codec for Firn: request decoding (multibulk and inline, with
//! Redis's limits and exact protocol error texts) and reply encoding for
//! both protocol versions. No I/O and no storage live here.

mod decode;
mod encode;

pub use decode::{decode_request, Limits, ProtocolError};
pub use encode::{format_double, Protocol, Reply};
