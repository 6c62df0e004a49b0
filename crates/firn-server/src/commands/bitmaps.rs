//! Bitmaps on string values: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP,
//! BITFIELD, BITFIELD_RO. Bit and byte ranges read only the chunks they
//! cover (see strings.rs for the encoding).

use super::Def;

pub const COMMANDS: &[Def] = &[];
