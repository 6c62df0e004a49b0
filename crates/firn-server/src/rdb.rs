//! Redis's DUMP/RESTORE payload: an RDB object (type byte + encoding), the
//! RDB version (2 bytes LE, 10 for Redis 7.0) and a CRC64 (Jones, as Redis
//! computes it; 8 bytes LE) over everything before it.
//!
//! Firn stores strings in this wave. Strings are written exactly as Redis
//! 7.0 writes them except that values longer than 20 bytes are not LZF
//! compressed (both forms are valid payloads for either server); reading
//! accepts every string encoding Redis produces: raw, 8/16/32-bit integers
//! and LZF. Other object types are recognised by name so that RESTORE can
//! refuse them clearly. Every length read from a payload is checked against
//! the bytes actually present.

use crc::{Crc, CRC_64_REDIS};

pub const RDB_VERSION: u16 = 10;
const CRC64: Crc<u64> = Crc::<u64>::new(&CRC_64_REDIS);

const TYPE_STRING: u8 = 0;
const ENC_INT8: u8 = 0;
const ENC_INT16: u8 = 1;
const ENC_INT32: u8 = 2;
const ENC_LZF: u8 = 3;

#[derive(Debug, Clone, PartialEq)]
pub enum RdbValue {
    String(Vec<u8>),
    /// A valid payload of a type Firn cannot store yet (its TYPE name).
    Other(&'static str),
}

impl RdbValue {
    pub fn type_name(&self) -> &'static str {
        match self {
            RdbValue::String(_) => "string",
            RdbValue::Other(name) => name,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RdbError {
    /// Reply: "ERR DUMP payload version or checksum are wrong".
    #[error("DUMP payload version or checksum are wrong")]
    BadChecksum,
    /// Reply: "ERR Bad data format".
    #[error("Bad data format")]
    BadFormat,
}

impl RdbError {
    pub fn reply_text(&self) -> String {
        format!("ERR {self}")
    }
}

fn push_length(out: &mut Vec<u8>, len: u64) {
    if len < 64 {
        out.push(len as u8);
    } else if len < 16384 {
        out.push(0x40 | (len >> 8) as u8);
        out.push(len as u8);
    } else if len <= u32::MAX as u64 {
        out.push(0x80);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&len.to_be_bytes());
    }
}

/// Redis's rdbTryIntegerEncoding: canonical integers of up to 11 characters
/// that fit in 32 bits are stored as integers.
fn integer_encoding(value: &[u8]) -> Option<Vec<u8>> {
    if value.len() > 11 {
        return None;
    }
    let n = crate::args::parse_i64(value)?;
    if let Ok(b) = i8::try_from(n) {
        Some(vec![0xC0 | ENC_INT8, b as u8])
    } else if let Ok(h) = i16::try_from(n) {
        let mut out = vec![0xC0 | ENC_INT16];
        out.extend_from_slice(&h.to_le_bytes());
        Some(out)
    } else if let Ok(w) = i32::try_from(n) {
        let mut out = vec![0xC0 | ENC_INT32];
        out.extend_from_slice(&w.to_le_bytes());
        Some(out)
    } else {
        None
    }
}

/// Serialises a value as DUMP does.
pub fn dump(value: &RdbValue) -> Vec<u8> {
    let mut out = Vec::new();
    if let RdbValue::String(v) = value {
        out.push(TYPE_STRING);
        match integer_encoding(v) {
            Some(encoded) => out.extend_from_slice(&encoded),
            None => {
                push_length(&mut out, v.len() as u64);
                out.extend_from_slice(v);
            }
        }
    }
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = CRC64.checksum(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8, RdbError> {
        let b = *self.data.get(self.pos).ok_or(RdbError::BadFormat)?;
        self.pos += 1;
        Ok(b)
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], RdbError> {
        let n = usize::try_from(n).map_err(|_| RdbError::BadFormat)?;
        let end = self.pos.checked_add(n).ok_or(RdbError::BadFormat)?;
        let slice = self.data.get(self.pos..end).ok_or(RdbError::BadFormat)?;
        self.pos = end;
        Ok(slice)
    }

    /// A length, or `Err(special)` for an encoded string.
    fn length(&mut self) -> Result<Result<u64, u8>, RdbError> {
        let first = self.byte()?;
        Ok(match first >> 6 {
            0 => Ok((first & 0x3F) as u64),
            1 => Ok((((first & 0x3F) as u64) << 8) | self.byte()? as u64),
            2 if first == 0x80 => Ok(u32::from_be_bytes(
                self.take(4)?.try_into().map_err(|_| RdbError::BadFormat)?,
            ) as u64),
            2 if first == 0x81 => Ok(u64::from_be_bytes(
                self.take(8)?.try_into().map_err(|_| RdbError::BadFormat)?,
            )),
            2 => return Err(RdbError::BadFormat),
            _ => Err(first & 0x3F),
        })
    }

    fn plain_length(&mut self) -> Result<u64, RdbError> {
        self.length()?.map_err(|_| RdbError::BadFormat)
    }

    fn string(&mut self) -> Result<Vec<u8>, RdbError> {
        match self.length()? {
            Ok(len) => Ok(self.take(len)?.to_vec()),
            Err(ENC_INT8) => Ok((self.byte()? as i8).to_string().into_bytes()),
            Err(ENC_INT16) => {
                let b = self.take(2)?;
                Ok(i16::from_le_bytes([b[0], b[1]]).to_string().into_bytes())
            }
            Err(ENC_INT32) => {
                let b = self.take(4)?;
                Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]])
                    .to_string()
                    .into_bytes())
            }
            Err(ENC_LZF) => {
                let compressed_len = self.plain_length()?;
                let len = self.plain_length()?;
                let compressed = self.take(compressed_len)?;
                lzf_decompress(compressed, len)
            }
            Err(_) => Err(RdbError::BadFormat),
        }
    }
}

/// LZF decompression (the format Redis's bundled liblzf writes). The output
/// must come to exactly `expected_len` bytes.
fn lzf_decompress(input: &[u8], expected_len: u64) -> Result<Vec<u8>, RdbError> {
    // Never preallocate more than the input could expand to.
    let cap = expected_len.min(input.len() as u64 * 264) as usize;
    let mut out: Vec<u8> = Vec::with_capacity(cap);
    let mut ip = 0;
    while ip < input.len() {
        let ctrl = input[ip] as usize;
        ip += 1;
        if ctrl < 32 {
            let run = ctrl + 1;
            let literal = input.get(ip..ip + run).ok_or(RdbError::BadFormat)?;
            out.extend_from_slice(literal);
            ip += run;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                len += *input.get(ip).ok_or(RdbError::BadFormat)? as usize;
                ip += 1;
            }
            let low = *input.get(ip).ok_or(RdbError::BadFormat)? as usize;
            ip += 1;
            let back = ((ctrl & 0x1F) << 8) + low + 1;
            let start = out.len().checked_sub(back).ok_or(RdbError::BadFormat)?;
            for i in 0..len + 2 {
                let b = out[start + i];
                out.push(b);
            }
        }
        if out.len() as u64 > expected_len {
            return Err(RdbError::BadFormat);
        }
    }
    if out.len() as u64 != expected_len {
        return Err(RdbError::BadFormat);
    }
    Ok(out)
}

/// The TYPE name of an RDB object type byte Redis 7.0 can write.
fn type_name_of(object_type: u8) -> Option<&'static str> {
    Some(match object_type {
        1 | 10 | 14 | 18 => "list",
        2 | 11 | 20 => "set",
        3 | 5 | 12 | 17 => "zset",
        4 | 9 | 13 | 16 => "hash",
        15 | 19 | 21 => "stream",
        _ => return None,
    })
}

/// Checks version and checksum, then decodes the object.
pub fn restore(payload: &[u8]) -> Result<RdbValue, RdbError> {
    if payload.len() < 10 {
        return Err(RdbError::BadChecksum);
    }
    let (body, footer) = payload.split_at(payload.len() - 10);
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    if version > RDB_VERSION {
        return Err(RdbError::BadChecksum);
    }
    let crc = u64::from_le_bytes(
        footer[2..10]
            .try_into()
            .map_err(|_| RdbError::BadChecksum)?,
    );
    if CRC64.checksum(&payload[..payload.len() - 8]) != crc {
        return Err(RdbError::BadChecksum);
    }
    let mut reader = Reader { data: body, pos: 0 };
    match reader.byte()? {
        TYPE_STRING => Ok(RdbValue::String(reader.string()?)),
        other => type_name_of(other)
            .map(RdbValue::Other)
            .ok_or(RdbError::BadFormat),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // DUMP outputs of redis-server 7.0.15 that Firn reproduces exactly.
    const VECTORS: &[(&[u8], &str)] = &[
        (b"hello", "000568656c6c6f0a006372df766534200a"),
        (b"", "00000a005d9b5c400f7fa2da"),
        (b"0", "00c0000a009840a778f8500308"),
        (b"-1", "00c0ff0a000c937e2485089dc5"),
        (b"127", "00c07f0a000db5eb315254c514"),
        (b"128", "00c180000a00eb7ab3b510cf4b65"),
        (b"-128", "00c0800a009966326d2f0c5bd9"),
        (b"-129", "00c17fff0a001760822854808480"),
        (b"32767", "00c1ff7f0a00495a37da17f4d52b"),
        (b"32768", "00c2008000000a0045d82eedd5bda910"),
        (b"2147483647", "00c2ffffff7f0a002c74e59ee02eada1"),
        (
            b"2147483648",
            "000a323134373438333634380a00e7b129a34c1d76ee",
        ),
        (b"-2147483648", "00c2000000800a00c74f873e33558187"),
        (b"007", "00033030370a007258e27b4c69bad9"),
        (b"-0", "00022d300a00d5411fd9d6d050cc"),
        (b"1.5", "0003312e350a001df5d4bedb5b860d"),
        (
            b"12345678901",
            "000b31323334353637383930310a00304e52d727176510",
        ),
        (
            b"aaaaaaaaaaaaaaaaaaaa",
            "001461616161616161616161616161616161616161610a0083b46b5e1b11acf1",
        ),
    ];

    // LZF-compressed DUMPs of redis-server 7.0.15 ("a" x 100, "x" x 70).
    const LZF_VECTOR: &str = "00c3094064016161e057000161610a00e8a3b507b06df271";
    const LZF_X70: &str = "00c3094046017878e039000178780a0031ca1bede0f32a8d";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn dumps_match_redis_7_0() {
        // `DUMP` outputs of redis-server 7.0.15.
        for (value, expected) in VECTORS {
            assert_eq!(
                dump(&RdbValue::String(value.to_vec())),
                hex(expected),
                "{:?}",
                String::from_utf8_lossy(value)
            );
            assert_eq!(
                restore(&hex(expected)).unwrap(),
                RdbValue::String(value.to_vec())
            );
        }
    }

    #[test]
    fn reads_redis_lzf_payloads() {
        let expected = b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        assert_eq!(
            restore(&hex(LZF_VECTOR)).unwrap(),
            RdbValue::String(expected.to_vec())
        );
        assert_eq!(
            restore(&hex(LZF_X70)).unwrap(),
            RdbValue::String(vec![b'x'; 70])
        );
    }

    #[test]
    fn corrupt_payloads_are_errors_not_panics() {
        let good = dump(&RdbValue::String(b"hello world, a longer value".to_vec()));
        for cut in 0..good.len() {
            assert!(restore(&good[..cut]).is_err());
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x55;
            assert!(restore(&bad).is_err());
        }
        assert_eq!(restore(b"junk"), Err(RdbError::BadChecksum));
        // A valid checksum around a bad body.
        let mut body = vec![TYPE_STRING, 0x80, 0xFF, 0xFF, 0xFF, 0xFF];
        body.extend_from_slice(&RDB_VERSION.to_le_bytes());
        let crc = CRC64.checksum(&body);
        body.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(restore(&body), Err(RdbError::BadFormat));
        assert!(lzf_decompress(&[0xE0, 0xFF, 0x00], 10).is_err());
    }
}
