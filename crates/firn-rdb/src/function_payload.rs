//! The FUNCTION DUMP / FUNCTION RESTORE payload of Redis 7.0: for each
//! library, the RDB opcode `RDB_OPCODE_FUNCTION2` (245) and the library's
//! code as an RDB string (integer, LZF or raw encoded, as [`write_string`]
//! writes it); then the DUMP footer (RDB version 10 and CRC64, see
//! `payload`). Pure codec: compiling and installing the libraries is the
//! caller's job (firn-server's FUNCTION DUMP and FUNCTION RESTORE).
//!
//! Reading follows `functionRestoreCommand`: the footer is checked first,
//! then opcodes are read while more than the 10 footer bytes remain. A
//! string is read from the whole payload, so one that runs into the footer
//! is accepted as Redis accepts it (and then fails to compile there as
//! here). The opcode of Redis 7.0's release candidates,
//! `RDB_OPCODE_FUNCTION` (246: name, engine, optional description, code),
//! is still read and turned into the current form, `#!<engine>
//! name=<name>\n<code>`, as Redis does.

use bytes::Bytes;

use crate::{append_footer, read_length_at, read_string_at, verify_footer, write_string};

const RDB_OPCODE_FUNCTION2: u8 = 245;
const RDB_OPCODE_FUNCTION: u8 = 246;
/// The DUMP footer: 2 bytes of RDB version, 8 of CRC64.
const FOOTER_LEN: usize = 10;

/// Why a payload is refused; `reply_text` is FUNCTION RESTORE's error.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PayloadError {
    #[error("DUMP payload version or checksum are wrong")]
    BadChecksum,
    #[error("can not read data type")]
    NoType,
    #[error("given type is not a function")]
    NotFunction,
    #[error("Failed loading library payload")]
    Payload,
    #[error("Failed loading library name")]
    Name,
    #[error("Failed loading engine name")]
    Engine,
    #[error("Failed loading library description")]
    Description,
    #[error("Failed loading library blob")]
    Blob,
}

impl PayloadError {
    /// The error reply FUNCTION RESTORE sends.
    pub fn reply_text(&self) -> String {
        format!("ERR {self}")
    }
}

/// FUNCTION DUMP's payload for the libraries' code, in the given order.
pub fn encode(libraries_code: &[Bytes]) -> Vec<u8> {
    let mut out = Vec::new();
    for code in libraries_code {
        out.push(RDB_OPCODE_FUNCTION2);
        write_string(&mut out, code);
    }
    append_footer(&mut out);
    out
}

/// The libraries' code in a FUNCTION RESTORE payload, in payload order.
pub fn decode(payload: &[u8]) -> Result<Vec<Bytes>, PayloadError> {
    verify_footer(payload).map_err(|_| PayloadError::BadChecksum)?;
    let mut libraries = Vec::new();
    let mut pos = 0;
    while payload.len() - pos > FOOTER_LEN {
        let opcode = *payload.get(pos).ok_or(PayloadError::NoType)?;
        pos += 1;
        let string =
            |pos: &mut usize, error: PayloadError| read_string_at(payload, pos).map_err(|_| error);
        let code = match opcode {
            RDB_OPCODE_FUNCTION2 => string(&mut pos, PayloadError::Payload)?,
            RDB_OPCODE_FUNCTION => {
                let name = string(&mut pos, PayloadError::Name)?;
                let engine = string(&mut pos, PayloadError::Engine)?;
                let has_description =
                    read_length_at(payload, &mut pos).map_err(|_| PayloadError::Description)?;
                if has_description != 0 {
                    string(&mut pos, PayloadError::Description)?;
                }
                let blob = string(&mut pos, PayloadError::Blob)?;
                let mut code = Vec::with_capacity(engine.len() + name.len() + blob.len() + 9);
                code.extend_from_slice(b"#!");
                code.extend_from_slice(&engine);
                code.extend_from_slice(b" name=");
                code.extend_from_slice(&name);
                code.push(b'\n');
                code.extend_from_slice(&blob);
                code
            }
            _ => return Err(PayloadError::NotFunction),
        };
        libraries.push(Bytes::from(code));
    }
    Ok(libraries)
}

#[cfg(test)]
mod tests {
    //! Payloads produced by redis-server 7.0.15 (FUNCTION DUMP after
    //! FUNCTION LOAD), and its FUNCTION RESTORE answers to broken ones.
    use super::*;

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
            .collect()
    }

    const MYLIB: &str = "#!lua name=mylib\nredis.register_function('f1', function() return 1 end)";
    const LIB2: &str = "#!lua name=lib2\nredis.register_function('f2', function() return 2 end)";

    /// FUNCTION DUMP with `lib2` and `mylib` loaded (Redis's dict order).
    const TWO_LIBRARIES: &str = "f5404623216c7561206e616d653d6c6962320a72656469732e72656769737465725f66756e6374696f6e28276632272c2066756e6374696f6e28292072657475726e203220656e6429f5404723216c7561206e616d653d6d796c69620a72656469732e72656769737465725f66756e6374696f6e28276631272c2066756e6374696f6e28292072657475726e203120656e64290a001a3ba18f68aa6039";

    /// FUNCTION DUMP of one library of 40 similar functions: LZF encoded.
    const COMPRESSED: &str = "f5c341cd490e1f23216c7561206e616d653d6269676c69620a72656469732e7265676973746572105f66756e6374696f6e2827666e30272c20e0000f0e292072657475726e203020656e6429e013370031e00c370031e018370032e00c370032e018370033e00c370033e018370034e00c370034e018370035e00c370035e018370036e00c370036e018370037e00c370037e018370038e00c370038e018370039e00c370039e018370031e20d300031e21a31e20e32e219330031e20d340031e219350031e20d360031e219370031e20d380031e219390031e20d3a0031e2193b0031e20d3c0031e2193d0031e20d3e0031e2193f0031e20d400031e219410031e20d420031e219430032e20d430032e219430032e20d430032e219430032e20d430032e219430032e20d430032e219430032e20d430032e219430032e20d430032e219430032e20d430032e219430032e20d430032e219430032e20d430032e219430032e20d430032e219430033e20d430033e219430033e20d430033e219430033e20d430033e219430033e20d430033e219430033e20d430033e219430033e20d430033e219430033e20d430033e219430033e20d430033e219430033e20d430033e219430033e20d430033624301290a0a00c1f47ae0be4d0463";

    fn big_library() -> String {
        let mut code = String::from("#!lua name=biglib\n");
        for i in 0..40 {
            code.push_str(&format!(
                "redis.register_function('fn{i}', function() return {i} end)\n"
            ));
        }
        code
    }

    #[test]
    fn encodes_as_redis_dumps() {
        let libraries = [Bytes::from(LIB2), Bytes::from(MYLIB)];
        assert_eq!(encode(&libraries), hex(TWO_LIBRARIES));
        assert_eq!(encode(&[Bytes::from(big_library())]), hex(COMPRESSED));
        assert_eq!(encode(&[]), hex("0a005d9b5c400f7fa2da"));
    }

    #[test]
    fn decodes_redis_dumps() {
        assert_eq!(
            decode(&hex(TWO_LIBRARIES)),
            Ok(vec![Bytes::from(LIB2), Bytes::from(MYLIB)])
        );
        assert_eq!(
            decode(&hex(COMPRESSED)),
            Ok(vec![Bytes::from(big_library())])
        );
        assert_eq!(decode(&hex("0a005d9b5c400f7fa2da")), Ok(vec![]));
    }

    #[test]
    fn accepts_older_rdb_versions() {
        let version_9 = "f5404723216c7561206e616d653d6d796c69620a72656469732e72656769737465725f66756e6374696f6e28276631272c2066756e6374696f6e28292072657475726e203120656e642909 00d7a255c89914b202";
        assert_eq!(
            decode(&hex(&version_9.replace(' ', ""))),
            Ok(vec![Bytes::from(MYLIB)])
        );
    }

    #[test]
    fn reads_the_release_candidate_format() {
        let body = "redis.register_function('f1', function() return 1 end)";
        let expected = format!("#!LUA name=mylib\n{body}");
        let without_description = "f6056d796c6962034c5541003672656469732e72656769737465725f66756e6374696f6e28276631272c2066756e6374696f6e28292072657475726e203120656e64290a00ff29bb25986ce5b0";
        let with_description = "f6056d796c6962034c55410104646573633672656469732e72656769737465725f66756e6374696f6e28276631272c2066756e6374696f6e28292072657475726e203120656e64290a009d16bfccfcd7001d";
        assert_eq!(
            decode(&hex(without_description)),
            Ok(vec![Bytes::from(expected.clone())])
        );
        assert_eq!(
            decode(&hex(with_description)),
            Ok(vec![Bytes::from(expected)])
        );
    }

    /// Each payload with redis-server's FUNCTION RESTORE reply.
    #[test]
    fn refuses_what_redis_refuses() {
        let cases: &[(&str, &str)] = &[
            ("616263", "ERR DUMP payload version or checksum are wrong"),
            // A CRC byte changed.
            ("f5404723216c7561206e616d653d6d796c69620a72656469732e72656769737465725f66756e6374696f6e28276631272c2066756e6374696f6e28292072657475726e203120656e64290a0007500404cd92d1b4", "ERR DUMP payload version or checksum are wrong"),
            // RDB version 11.
            ("f54723216c7561206e616d653d6d796c69620a72656469732e72656769737465725f66756e6374696f6e28276631272c2066756e6374696f6e28292072657475726e203120656e64290b00cd18db904e0ae26d", "ERR DUMP payload version or checksum are wrong"),
            ("00036162630a00d9ac303d4172a2e2", "ERR given type is not a function"),
            ("f5306162630a0095229becc3b75dc0", "ERR Failed loading library payload"),
            ("f5405223216c7561206e616d653d6d796c69620a72656469732e72656769737465725f66756e6374696f6e28276631272c2066756e6374696f6e28292072657475726e203120656e64290a006b2c277f10d9688d", "ERR Failed loading library payload"),
            ("f5c56162630a00213095868974d1ad", "ERR Failed loading library payload"),
            ("f50a003f97752184d95ca4", "ERR Failed loading library payload"),
            ("f63061620a00859844d22360736b", "ERR Failed loading library name"),
            ("f6026162300a00ee3596b3b0e1715e", "ERR Failed loading engine name"),
            ("f6026162034c554101300a00b972cbe7a9aee104", "ERR Failed loading library description"),
            ("f6026162034c554100300a00bf11b26bcac60088", "ERR Failed loading library blob"),
        ];
        for (payload, reply) in cases {
            let error = decode(&hex(payload)).expect_err(payload);
            assert_eq!(error.reply_text(), *reply, "{payload}");
        }
    }

    /// Redis reads a string that runs into the footer (and the library then
    /// fails to compile); so does Firn.
    #[test]
    fn strings_may_run_into_the_footer() {
        let into_footer = "f5404923216c7561206e616d653d6d796c69620a72656469732e72656769737465725f66756e6374696f6e28276631272c2066756e6374696f6e28292072657475726e203120656e64290a003a452fe65874b2c2";
        let mut expected = MYLIB.as_bytes().to_vec();
        expected.extend_from_slice(&[0x0a, 0x00]);
        assert_eq!(decode(&hex(into_footer)), Ok(vec![Bytes::from(expected)]));
        // Redis: "has_desc" read from the footer, then an empty
        // description and a blob taken from the footer too.
        let flag_in_footer = "f6026162034c55410a0007e942702a0afd33";
        assert!(decode(&hex(flag_in_footer)).is_ok());
    }
}
