//! RESP2/RESP3 codec for Firn: request decoding (multibulk and inline, with
//! Redis 7.0's limits and exact protocol error texts) and reply encoding for
//! both protocol versions. No I/O and no storage live here.

mod decode;
mod double;
mod encode;

pub use decode::{decode_request, Limits, ProtocolError, RequestDecoder};
pub use double::format_double;
pub use encode::{Protocol, Reply};
