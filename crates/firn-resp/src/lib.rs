//! RESP2/RESP3 codec for Firn: request decoding (multibulk and inline, with
//! Redis 7.0's limits and exact protocol error texts) and reply encoding for
//! both protocol versions. No I/O and no storage live here; integers and
//! doubles are read and written with Redis's own rules from `firn-prims`.

mod decode;
mod encode;

pub use decode::{decode_request, Limits, ProtocolError, RequestDecoder};
pub use encode::{Protocol, Reply};
/// Redis 7.0's `%.17g` double replies (written once, in `firn-prims`).
pub use firn_prims::format_double;
