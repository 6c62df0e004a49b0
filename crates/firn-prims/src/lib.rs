//! Redis's primitives, each written once and answering as Redis 7.0 does:
//! integer parsing (`string2ll`), double parsing and formatting (`strtod`,
//! `string2d`, `%.17g`), glob matching (`stringmatchlen`), geohash
//! arithmetic, HyperLogLog in Redis's own string format, the argument
//! splitter of redis.conf lines (`sdssplitargs`), and the sizes of
//! listpack elements.
//!
//! Pure code: no I/O, no RESP, no storage, nothing of Firn. The codecs
//! (`firn-resp`, `firn-rdb`), the storage engine (`firn-storage`) and the
//! server (`firn-server`) all use these instead of their own copies, so a
//! rule such as "what is an integer" can never differ between a command
//! argument, a RESP length, an intset member and a DUMP payload. This
//! crate depends on no other Firn crate.

pub mod double;
pub mod geohash;
pub mod glob;
pub mod hll;
pub mod integer;
pub mod listpack;
pub mod splitargs;

pub use double::{
    format_double, format_g, is_c_space, string2d, strtod, write_double, write_g, Strtod,
    G_BUFFER_BYTES,
};
pub use integer::{string2ll, string2ull};
pub use splitargs::split_args;
