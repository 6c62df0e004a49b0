//! A whole RDB file or stream (what SAVE writes, what a master sends its
//! replica), read one entry at a time: [`RdbFileReader`] never holds more
//! than the entry it returns, so a file of any size loads in the memory of
//! its largest key.
//!
//! The format (rdb.c, RDB version 10 for Redis 7.0): `REDIS` and the
//! version as 4 ASCII digits; then opcodes, each a byte: AUX (250, two
//! strings), MODULE_AUX (247), FUNCTION2 (245, a library's code as a
//! string; 246 is the release candidates' FUNCTION), SELECTDB (254, a
//! length), RESIZEDB (251, two lengths), SLOT_INFO (244, three lengths,
//! Redis 7.4's), and before a key EXPIRETIME_MS (252, 8 bytes LE),
//! EXPIRETIME (253, 4 bytes LE, seconds), IDLE (248, a length) and FREQ
//! (249, a byte); any other byte is an object type, followed by the key
//! (a string) and the object; EOF (255) ends the data, followed from
//! version 5 on by the CRC64 of every byte before it (8 bytes LE; 0 when
//! the server had `rdbchecksum no`).
//!
//! An object is read in two steps so that the DUMP decoder (`object`,
//! `stream`) stays the only one: its bytes are first copied from the
//! stream by walking its encoding at the level of lengths and strings
//! (the blobs inside, listpacks and the like, are strings here), then the
//! copy is decoded as RESTORE decodes a payload. The copy grows as bytes
//! arrive, never ahead of them, so a corrupt length cannot make it
//! allocate more than the stream holds.

use std::io::{BufReader, Read};

use crc::Digest;

use crate::encoding::{Reader, ENC_INT16, ENC_INT32, ENC_INT8, ENC_LZF};
use crate::object::{
    read_object, TYPE_HASH, TYPE_HASH_LISTPACK, TYPE_HASH_ZIPLIST, TYPE_HASH_ZIPMAP, TYPE_LIST,
    TYPE_LIST_QUICKLIST, TYPE_LIST_QUICKLIST_2, TYPE_LIST_ZIPLIST, TYPE_SET, TYPE_SET_INTSET,
    TYPE_STRING, TYPE_ZSET, TYPE_ZSET_2, TYPE_ZSET_LISTPACK, TYPE_ZSET_ZIPLIST,
};
use crate::payload::CRC64;
use crate::stream::{TYPE_STREAM_LISTPACKS, TYPE_STREAM_LISTPACKS_2, TYPE_STREAM_LISTPACKS_3};
use crate::{append_footer, RdbValue};

// Opcodes (rdb.h).
const OPCODE_SLOT_INFO: u8 = 244;
const OPCODE_FUNCTION2: u8 = 245;
const OPCODE_FUNCTION: u8 = 246;
const OPCODE_MODULE_AUX: u8 = 247;
const OPCODE_IDLE: u8 = 248;
const OPCODE_FREQ: u8 = 249;
const OPCODE_AUX: u8 = 250;
const OPCODE_RESIZEDB: u8 = 251;
const OPCODE_EXPIRETIME_MS: u8 = 252;
const OPCODE_EXPIRETIME: u8 = 253;
const OPCODE_SELECTDB: u8 = 254;
const OPCODE_EOF: u8 = 255;

// Module values: Firn loads no modules, so it cannot read them.
const TYPE_MODULE_PRE_GA: u8 = 6;
const TYPE_MODULE_2: u8 = 7;

/// The newest RDB version read: Redis 7.0's.
pub const RDB_FILE_VERSION_MAX: u32 = 10;
/// The version from which the file ends with a CRC64.
const FIRST_VERSION_WITH_CHECKSUM: u32 = 5;
/// What the input is read in: one system call per 64 KB at most.
const INPUT_BUFFER_BYTES: usize = 64 << 10;
/// A copy grows by at most this much before the bytes are there.
const COPY_CHUNK_BYTES: u64 = 64 << 10;

/// One entry of the file.
#[derive(Debug, Clone, PartialEq)]
pub enum RdbEntry {
    Key(RdbKey),
    /// A function library's code, as FUNCTION LOAD takes it.
    Function(Vec<u8>),
}

/// A key with its decoded value.
#[derive(Debug, Clone, PartialEq)]
pub struct RdbKey {
    pub db: u32,
    pub key: Vec<u8>,
    pub value: RdbValue,
    /// Unix time in milliseconds; may already be past.
    pub expire_at_ms: Option<i64>,
}

/// An entry whose value is still encoded (see [`RdbFileReader::next_raw`]).
#[derive(Debug, Clone, PartialEq)]
pub enum RawEntry {
    Key(RawKey),
    /// A function library's code, as FUNCTION LOAD takes it.
    Function(Vec<u8>),
}

/// A key with its value as the file encodes it.
#[derive(Debug, Clone, PartialEq)]
pub struct RawKey {
    pub db: u32,
    pub key: Vec<u8>,
    /// The object: type byte and encoding, what a DUMP payload holds
    /// before its footer.
    pub object: Vec<u8>,
    /// Unix time in milliseconds; may already be past.
    pub expire_at_ms: Option<i64>,
    /// Where the entry (its type byte) starts in the file, for error
    /// messages.
    pub offset: u64,
}

impl RawKey {
    /// Decodes the object as RESTORE does.
    pub fn decode(self) -> Result<RdbKey, RdbFileError> {
        let bad_value = || RdbFileError::BadValue {
            db: self.db,
            key: shown(&self.key),
            offset: self.offset,
        };
        let (&object_type, body) = self.object.split_first().ok_or_else(bad_value)?;
        let mut reader = Reader { data: body, pos: 0 };
        let value = read_object(object_type, &mut reader).map_err(|_| bad_value())?;
        // The copy is exactly one object, or the two walks disagree.
        if reader.pos != body.len() {
            return Err(bad_value());
        }
        Ok(RdbKey {
            db: self.db,
            key: self.key,
            value,
            expire_at_ms: self.expire_at_ms,
        })
    }

    /// The DUMP payload of the value (RESTORE's argument): the object and
    /// the footer, without decoding it.
    pub fn into_dump_payload(self) -> Vec<u8> {
        let mut payload = self.object;
        append_footer(&mut payload);
        payload
    }
}

/// Why a file cannot be read. Offsets count bytes from the file's start.
#[derive(Debug, thiserror::Error)]
pub enum RdbFileError {
    #[error("reading the RDB failed at byte {offset}: {source}")]
    Io { offset: u64, source: std::io::Error },
    #[error(
        "the RDB is truncated: it ends at byte {offset}, inside an entry or before its EOF opcode"
    )]
    Truncated { offset: u64 },
    #[error("not an RDB file: it does not start with REDIS and a 4-digit version")]
    NotRdb,
    #[error("RDB version {0} is not supported (1 to 10, what Redis up to 7.0 writes)")]
    Version(u32),
    #[error("corrupt RDB at byte {offset}: {what}")]
    Corrupt { offset: u64, what: String },
    #[error("the RDB holds module data ({what}, at byte {offset}); Firn loads no modules")]
    Module { offset: u64, what: String },
    #[error("the RDB holds a function library in the format of Redis 7.0's release candidates (opcode 246, at byte {offset}); load it into Redis 7.0 and save it again")]
    OldFunctionFormat { offset: u64 },
    #[error("the RDB's checksum is wrong: its footer says {expected:016x}, its contents give {computed:016x}")]
    Checksum { expected: u64, computed: u64 },
    #[error("the value of key \"{key}\" in db {db} (entry at byte {offset}) does not decode")]
    BadValue { db: u32, key: String, offset: u64 },
}

/// Reads an RDB file or stream entry by entry (see the module header).
pub struct RdbFileReader<R: Read> {
    source: Source<R>,
    version: u32,
    db: u32,
    /// After EOF and its checksum, or after an error.
    finished: bool,
    /// Reused for what opcodes read (lengths, strings).
    scratch: Vec<u8>,
}

impl<R: Read> RdbFileReader<R> {
    /// Reads the header. `input` is read through a buffer of its own (see
    /// [`into_inner`](Self::into_inner) for what follows the RDB).
    pub fn new(input: R) -> Result<Self, RdbFileError> {
        let mut source = Source {
            input: BufReader::with_capacity(INPUT_BUFFER_BYTES, input),
            digest: CRC64.digest(),
            offset: 0,
        };
        let mut header = [0u8; 9];
        source.fill(&mut header).map_err(|e| match e {
            RdbFileError::Truncated { .. } => RdbFileError::NotRdb,
            other => other,
        })?;
        let (magic, digits) = header.split_at(5);
        if magic != b"REDIS" || !digits.iter().all(u8::is_ascii_digit) {
            return Err(RdbFileError::NotRdb);
        }
        let version = digits
            .iter()
            .fold(0u32, |n, digit| n * 10 + u32::from(digit - b'0'));
        if !(1..=RDB_FILE_VERSION_MAX).contains(&version) {
            return Err(RdbFileError::Version(version));
        }
        Ok(RdbFileReader {
            source,
            version,
            db: 0,
            finished: false,
            scratch: Vec::new(),
        })
    }

    /// The file's RDB version.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// Bytes read so far: the whole file once the last entry is read.
    pub fn bytes_read(&self) -> u64 {
        self.source.offset
    }

    /// The input, with what was read ahead of the RDB's end still in the
    /// buffer (a master sends its replication stream right after it).
    pub fn into_inner(self) -> BufReader<R> {
        self.source.input
    }

    /// The next entry with its value decoded; `None` after the EOF opcode
    /// and a valid checksum.
    pub fn next_entry(&mut self) -> Result<Option<RdbEntry>, RdbFileError> {
        Ok(match self.next_raw()? {
            None => None,
            Some(RawEntry::Function(code)) => Some(RdbEntry::Function(code)),
            Some(RawEntry::Key(raw)) => match raw.decode() {
                Ok(key) => Some(RdbEntry::Key(key)),
                Err(e) => {
                    self.finished = true;
                    return Err(e);
                }
            },
        })
    }

    /// The next entry with its value as the file encodes it, for a caller
    /// that hands it to RESTORE (which decodes it) rather than decoding
    /// it twice; `None` after the EOF opcode and a valid checksum.
    pub fn next_raw(&mut self) -> Result<Option<RawEntry>, RdbFileError> {
        if self.finished {
            return Ok(None);
        }
        let entry = self.read_entry();
        if !matches!(entry, Ok(Some(_))) {
            self.finished = true;
        }
        entry
    }

    fn read_entry(&mut self) -> Result<Option<RawEntry>, RdbFileError> {
        let mut expire_at_ms = None;
        loop {
            let opcode_offset = self.source.offset;
            match self.source.byte()? {
                OPCODE_EXPIRETIME_MS => {
                    expire_at_ms = Some(i64::from_le_bytes(self.source.array()?));
                }
                OPCODE_EXPIRETIME => {
                    let seconds = i32::from_le_bytes(self.source.array()?);
                    expire_at_ms = Some(i64::from(seconds) * 1000);
                }
                OPCODE_FREQ => {
                    self.source.byte()?;
                }
                OPCODE_IDLE => {
                    self.length()?;
                }
                OPCODE_SELECTDB => {
                    let db = self.length()?;
                    self.db = u32::try_from(db).map_err(|_| RdbFileError::Corrupt {
                        offset: opcode_offset,
                        what: format!("SELECTDB {db} is out of range"),
                    })?;
                }
                OPCODE_RESIZEDB => {
                    self.length()?;
                    self.length()?;
                }
                OPCODE_SLOT_INFO => {
                    for _ in 0..3 {
                        self.length()?;
                    }
                }
                OPCODE_AUX => {
                    self.scratch.clear();
                    self.source.copy_string(&mut self.scratch)?;
                    self.source.copy_string(&mut self.scratch)?;
                }
                OPCODE_MODULE_AUX => {
                    return Err(RdbFileError::Module {
                        offset: opcode_offset,
                        what: "MODULE_AUX".into(),
                    })
                }
                OPCODE_FUNCTION2 => return Ok(Some(RawEntry::Function(self.string()?))),
                OPCODE_FUNCTION => {
                    return Err(RdbFileError::OldFunctionFormat {
                        offset: opcode_offset,
                    })
                }
                OPCODE_EOF => {
                    self.verify_checksum()?;
                    return Ok(None);
                }
                object_type => {
                    let key = self.string()?;
                    let mut object = vec![object_type];
                    self.source.copy_object(object_type, &mut object)?;
                    return Ok(Some(RawEntry::Key(RawKey {
                        db: self.db,
                        key,
                        object,
                        expire_at_ms,
                        offset: opcode_offset,
                    })));
                }
            }
        }
    }

    /// A length (rdbLoadLen).
    fn length(&mut self) -> Result<u64, RdbFileError> {
        self.scratch.clear();
        self.source.copy_plain_length(&mut self.scratch)
    }

    /// A string, decoded (raw, integer or LZF).
    fn string(&mut self) -> Result<Vec<u8>, RdbFileError> {
        self.scratch.clear();
        let offset = self.source.offset;
        self.source.copy_string(&mut self.scratch)?;
        Reader {
            data: &self.scratch,
            pos: 0,
        }
        .string()
        .map_err(|_| RdbFileError::Corrupt {
            offset,
            what: "a compressed string does not decompress".into(),
        })
    }

    fn verify_checksum(&mut self) -> Result<(), RdbFileError> {
        if self.version < FIRST_VERSION_WITH_CHECKSUM {
            return Ok(());
        }
        let computed = self.source.digest.clone().finalize();
        let mut footer = [0u8; 8];
        self.source.fill(&mut footer)?;
        let expected = u64::from_le_bytes(footer);
        // 0: saved with `rdbchecksum no`, nothing to check (as Redis).
        if expected != 0 && expected != computed {
            return Err(RdbFileError::Checksum { expected, computed });
        }
        Ok(())
    }
}

impl<R: Read> Iterator for RdbFileReader<R> {
    type Item = Result<RdbEntry, RdbFileError>;

    /// Stops after the first error.
    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().transpose()
    }
}

/// The input, the CRC64 of what was read and the offset.
struct Source<R> {
    input: BufReader<R>,
    digest: Digest<'static, u64>,
    offset: u64,
}

impl<R: Read> Source<R> {
    fn fill(&mut self, out: &mut [u8]) -> Result<(), RdbFileError> {
        let offset = self.offset;
        self.input.read_exact(out).map_err(|source| {
            if source.kind() == std::io::ErrorKind::UnexpectedEof {
                RdbFileError::Truncated { offset }
            } else {
                RdbFileError::Io { offset, source }
            }
        })?;
        self.digest.update(out);
        self.offset += out.len() as u64;
        Ok(())
    }

    fn byte(&mut self) -> Result<u8, RdbFileError> {
        Ok(self.array::<1>()?[0])
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], RdbFileError> {
        let mut bytes = [0u8; N];
        self.fill(&mut bytes)?;
        Ok(bytes)
    }

    fn corrupt(&self, what: impl Into<String>) -> RdbFileError {
        RdbFileError::Corrupt {
            offset: self.offset,
            what: what.into(),
        }
    }

    /// Appends the next `n` bytes to `copy`, which grows only as they
    /// arrive.
    fn append(&mut self, copy: &mut Vec<u8>, n: u64) -> Result<(), RdbFileError> {
        let mut left = n;
        while left > 0 {
            let chunk = left.min(COPY_CHUNK_BYTES) as usize;
            let start = copy.len();
            copy.resize(start + chunk, 0);
            self.fill(&mut copy[start..])?;
            left -= chunk as u64;
        }
        Ok(())
    }

    fn copy_byte(&mut self, copy: &mut Vec<u8>) -> Result<u8, RdbFileError> {
        let byte = self.byte()?;
        copy.push(byte);
        Ok(byte)
    }

    /// A length, or `Err(encoding)` for an encoded string's marker (the
    /// same cases as `Reader::length`).
    fn copy_length(&mut self, copy: &mut Vec<u8>) -> Result<Result<u64, u8>, RdbFileError> {
        let first = self.copy_byte(copy)?;
        Ok(match first >> 6 {
            0 => Ok(u64::from(first & 0x3F)),
            1 => Ok((u64::from(first & 0x3F) << 8) | u64::from(self.copy_byte(copy)?)),
            2 if first == 0x80 => Ok(self.copy_big_endian(copy, 4)?),
            2 if first == 0x81 => Ok(self.copy_big_endian(copy, 8)?),
            2 => return Err(self.corrupt(format!("unknown length encoding {first:#04x}"))),
            _ => Err(first & 0x3F),
        })
    }

    /// A big-endian integer of `n` bytes (at most 8).
    fn copy_big_endian(&mut self, copy: &mut Vec<u8>, n: usize) -> Result<u64, RdbFileError> {
        let start = copy.len();
        self.append(copy, n as u64)?;
        Ok(copy[start..]
            .iter()
            .fold(0u64, |value, &b| (value << 8) | u64::from(b)))
    }

    fn copy_plain_length(&mut self, copy: &mut Vec<u8>) -> Result<u64, RdbFileError> {
        self.copy_length(copy)?
            .map_err(|_| self.corrupt("an encoded string where a length belongs"))
    }

    fn copy_string(&mut self, copy: &mut Vec<u8>) -> Result<(), RdbFileError> {
        match self.copy_length(copy)? {
            Ok(len) => self.append(copy, len),
            Err(ENC_INT8) => self.append(copy, 1),
            Err(ENC_INT16) => self.append(copy, 2),
            Err(ENC_INT32) => self.append(copy, 4),
            Err(ENC_LZF) => {
                let compressed_len = self.copy_plain_length(copy)?;
                self.copy_plain_length(copy)?;
                self.append(copy, compressed_len)
            }
            Err(other) => Err(self.corrupt(format!("unknown string encoding {other}"))),
        }
    }

    /// `count` times `each`.
    fn copy_each(
        &mut self,
        copy: &mut Vec<u8>,
        mut each: impl FnMut(&mut Self, &mut Vec<u8>) -> Result<(), RdbFileError>,
    ) -> Result<(), RdbFileError> {
        let count = self.copy_plain_length(copy)?;
        for _ in 0..count {
            each(self, copy)?;
        }
        Ok(())
    }

    /// Copies the object after its type byte (already in `copy`), walking
    /// the encodings `object::read_object` decodes.
    fn copy_object(&mut self, object_type: u8, copy: &mut Vec<u8>) -> Result<(), RdbFileError> {
        match object_type {
            TYPE_STRING | TYPE_HASH_ZIPMAP | TYPE_LIST_ZIPLIST | TYPE_SET_INTSET
            | TYPE_ZSET_ZIPLIST | TYPE_HASH_ZIPLIST | TYPE_HASH_LISTPACK | TYPE_ZSET_LISTPACK => {
                self.copy_string(copy)
            }
            TYPE_LIST | TYPE_SET | TYPE_LIST_QUICKLIST => {
                self.copy_each(copy, |s, copy| s.copy_string(copy))
            }
            TYPE_HASH => self.copy_each(copy, |s, copy| {
                s.copy_string(copy)?;
                s.copy_string(copy)
            }),
            TYPE_ZSET => self.copy_each(copy, |s, copy| {
                s.copy_string(copy)?;
                // The old text score: a length byte (253 to 255 stand for
                // NaN and the infinities) and that many bytes.
                let len = s.copy_byte(copy)?;
                if len < 253 {
                    s.append(copy, u64::from(len))?;
                }
                Ok(())
            }),
            TYPE_ZSET_2 => self.copy_each(copy, |s, copy| {
                s.copy_string(copy)?;
                s.append(copy, 8)
            }),
            TYPE_LIST_QUICKLIST_2 => self.copy_each(copy, |s, copy| {
                s.copy_plain_length(copy)?;
                s.copy_string(copy)
            }),
            TYPE_STREAM_LISTPACKS | TYPE_STREAM_LISTPACKS_2 | TYPE_STREAM_LISTPACKS_3 => {
                self.copy_stream(object_type, copy)
            }
            TYPE_MODULE_PRE_GA | TYPE_MODULE_2 => Err(RdbFileError::Module {
                offset: self.offset,
                what: format!("a value of type {object_type}"),
            }),
            _ => Err(self.corrupt(format!("unknown opcode or object type {object_type}"))),
        }
    }

    /// A stream object (the layout is in `stream`'s header).
    fn copy_stream(&mut self, object_type: u8, copy: &mut Vec<u8>) -> Result<(), RdbFileError> {
        let version_2 = object_type != TYPE_STREAM_LISTPACKS;
        // Nodes: master ID and listpack.
        self.copy_each(copy, |s, copy| {
            s.copy_string(copy)?;
            s.copy_string(copy)
        })?;
        // Length and last ID; from type 19 on, first ID, max deleted ID
        // and entries added.
        let lengths = if version_2 { 8 } else { 3 };
        for _ in 0..lengths {
            self.copy_plain_length(copy)?;
        }
        // Groups.
        self.copy_each(copy, |s, copy| {
            s.copy_string(copy)?;
            s.copy_plain_length(copy)?;
            s.copy_plain_length(copy)?;
            if version_2 {
                s.copy_plain_length(copy)?; // entries read
            }
            // Group PEL: raw ID, delivery time, delivery count.
            s.copy_each(copy, |s, copy| {
                s.append(copy, 16 + 8)?;
                s.copy_plain_length(copy).map(drop)
            })?;
            // Consumers: name, seen time (and active time in 21), PEL IDs.
            s.copy_each(copy, |s, copy| {
                s.copy_string(copy)?;
                s.append(copy, 8)?;
                if object_type == TYPE_STREAM_LISTPACKS_3 {
                    s.append(copy, 8)?;
                }
                s.copy_each(copy, |s, copy| s.append(copy, 16))
            })
        })
    }
}

/// A key as error messages show it: text, with other bytes escaped.
fn shown(key: &[u8]) -> String {
    key.escape_ascii().to_string()
}
