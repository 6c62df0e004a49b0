//! The `meta` CF value: one record per user key.
//!
//! ```text
//! type:u8 · flags:u8 · [expire_at_ms:u64 if FLAG_EXPIRE] · body
//! body (inline string)   = the payload itself
//! body (chunked string)  = version:u64 · len:u64
//! body (collections)     = version:u64 · size:u64 · type fields
//! ```
//! Small strings cost two bytes of overhead; a string longer than
//! `CHUNK_SIZE` lives in the `data` CF in fixed-size chunks so that a
//! SETRANGE/SETBIT on a huge value touches only one chunk.
//!
//! Besides [`Meta`], the record decoded for what a command does with it:
//! [`Collection`] (any collection's version, size and type fields),
//! [`List`] (a list's end positions) and [`ExpireAction`] (what a write
//! does to the expiry). The operations on them are `Txn` methods in the
//! type modules (collection.rs, list.rs, string.rs...), which sit above
//! the transaction; the records sit below it.

use bytes::Bytes;

use crate::error::{Result, StorageError};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ValueType {
    String = 0,
    List = 1,
    Set = 2,
    ZSet = 3,
    Hash = 4,
    Stream = 5,
}

impl ValueType {
    fn from_u8(b: u8) -> Option<Self> {
        Some(match b {
            0 => Self::String,
            1 => Self::List,
            2 => Self::Set,
            3 => Self::ZSet,
            4 => Self::Hash,
            5 => Self::Stream,
            _ => return None,
        })
    }

    /// The name TYPE and SCAN TYPE use.
    pub fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::List => "list",
            Self::Set => "set",
            Self::ZSet => "zset",
            Self::Hash => "hash",
            Self::Stream => "stream",
        }
    }
}

const FLAG_EXPIRE: u8 = 1;
const FLAG_CHUNKED: u8 = 2;
const FLAG_RAW: u8 = 4;
const FLAG_PLAIN: u8 = 8;

/// How Redis would hold a string value, for OBJECT ENCODING.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodingHint {
    /// By content: "int" for a canonical integer, else "embstr"/"raw" by length.
    Auto,
    /// A plain string object (never "int"), as INCRBYFLOAT leaves it.
    Plain,
    /// Modified in place ("raw"), as APPEND/SETRANGE/SETBIT leave it.
    Raw,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// A string stored whole in the meta record.
    Inline(Bytes),
    /// A string stored in `data` chunks under `version`.
    Chunked { version: u64, len: u64 },
    /// A collection's members under `version`; `extra` holds type fields.
    Collection {
        version: u64,
        size: u64,
        extra: Bytes,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Meta {
    pub value_type: ValueType,
    /// Absolute expiry in Unix milliseconds; 0 means no expiry.
    pub expire_at_ms: u64,
    /// What OBJECT ENCODING reports for a string.
    pub encoding: EncodingHint,
    pub body: Body,
}

impl Meta {
    pub fn inline_string(value: Bytes) -> Self {
        Meta {
            value_type: ValueType::String,
            expire_at_ms: 0,
            encoding: EncodingHint::Auto,
            body: Body::Inline(value),
        }
    }

    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expire_at_ms != 0 && self.expire_at_ms <= now_ms
    }

    /// The version that owns this key's `data` members, if any.
    pub fn version(&self) -> Option<u64> {
        match self.body {
            Body::Inline(_) => None,
            Body::Chunked { version, .. } | Body::Collection { version, .. } => Some(version),
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut flags = 0;
        if self.expire_at_ms != 0 {
            flags |= FLAG_EXPIRE;
        }
        match self.encoding {
            EncodingHint::Auto => {}
            EncodingHint::Plain => flags |= FLAG_PLAIN,
            EncodingHint::Raw => flags |= FLAG_RAW,
        }
        if matches!(self.body, Body::Chunked { .. }) {
            flags |= FLAG_CHUNKED;
        }
        let mut out = Vec::with_capacity(32);
        out.push(self.value_type as u8);
        out.push(flags);
        if self.expire_at_ms != 0 {
            out.extend_from_slice(&self.expire_at_ms.to_be_bytes());
        }
        match &self.body {
            Body::Inline(payload) => {
                out.reserve(payload.len());
                out.extend_from_slice(payload);
            }
            Body::Chunked { version, len } => {
                out.extend_from_slice(&version.to_be_bytes());
                out.extend_from_slice(&len.to_be_bytes());
            }
            Body::Collection {
                version,
                size,
                extra,
            } => {
                out.extend_from_slice(&version.to_be_bytes());
                out.extend_from_slice(&size.to_be_bytes());
                out.extend_from_slice(extra);
            }
        }
        out
    }

    pub fn decode(raw: &Bytes) -> Result<Self> {
        let corrupt = StorageError::Corrupt("meta record");
        if raw.len() < 2 {
            return Err(corrupt);
        }
        let value_type = ValueType::from_u8(raw[0]).ok_or(corrupt.clone())?;
        let flags = raw[1];
        let mut pos = 2;
        let mut expire_at_ms = 0;
        if flags & FLAG_EXPIRE != 0 {
            expire_at_ms = read_u64(raw, pos).ok_or(corrupt.clone())?;
            pos += 8;
        }
        let body = if value_type == ValueType::String && flags & FLAG_CHUNKED == 0 {
            Body::Inline(raw.slice(pos..))
        } else {
            let version = read_u64(raw, pos).ok_or(corrupt.clone())?;
            let size = read_u64(raw, pos + 8).ok_or(corrupt)?;
            if value_type == ValueType::String {
                Body::Chunked { version, len: size }
            } else {
                Body::Collection {
                    version,
                    size,
                    extra: raw.slice(pos + 16..),
                }
            }
        };
        Ok(Meta {
            value_type,
            expire_at_ms,
            encoding: if flags & FLAG_RAW != 0 {
                EncodingHint::Raw
            } else if flags & FLAG_PLAIN != 0 {
                EncodingHint::Plain
            } else {
                EncodingHint::Auto
            },
            body,
        })
    }
}

/// The facts a whole-value write needs of the key it replaces: whether it
/// exists, its type and its expiry. They are the meta record's header (its
/// first two or ten bytes), which the writer also stores alone in the
/// `facts` column family, so that a write of a key whose value is on disk
/// reads a small record from small blocks that stay cached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    pub value_type: ValueType,
    /// Absolute expiry in Unix milliseconds; 0 means no expiry.
    pub expire_at_ms: u64,
}

impl Facts {
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expire_at_ms != 0 && self.expire_at_ms <= now_ms
    }

    /// The facts of a whole meta record or of its header alone.
    pub fn decode(raw: &[u8]) -> Result<Facts> {
        let corrupt = StorageError::Corrupt("meta record");
        let (&kind, &flags) = match raw {
            [kind, flags, ..] => (kind, flags),
            _ => return Err(corrupt),
        };
        let value_type = ValueType::from_u8(kind).ok_or(corrupt.clone())?;
        let expire_at_ms = if flags & FLAG_EXPIRE != 0 {
            read_u64(raw, 2).ok_or(corrupt)?
        } else {
            0
        };
        Ok(Facts {
            value_type,
            expire_at_ms,
        })
    }

    /// The length of the header of the encoded meta record `raw` (what the
    /// `facts` column family stores of it), or `None` if `raw` is too short.
    pub fn header_len(raw: &[u8]) -> Option<usize> {
        let flags = *raw.get(1)?;
        let len = if flags & FLAG_EXPIRE != 0 { 10 } else { 2 };
        (raw.len() >= len).then_some(len)
    }
}

/// The value of an encoded meta record that holds a string inline (what
/// a WAL replay record may refer to instead of repeating it).
pub(crate) fn inline_string_body(record: &[u8]) -> Option<&[u8]> {
    let header = Facts::header_len(record)?;
    let inline = record[0] == ValueType::String as u8 && record[1] & FLAG_CHUNKED == 0;
    inline.then(|| &record[header..])
}

impl From<&Meta> for Facts {
    fn from(meta: &Meta) -> Facts {
        Facts {
            value_type: meta.value_type,
            expire_at_ms: meta.expire_at_ms,
        }
    }
}

/// What a write does to the key's expiry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpireAction {
    /// Remove any expiry (plain SET).
    Clear,
    /// Keep the current expiry (KEEPTTL, SETRANGE, APPEND...).
    Keep,
    /// Expire at this Unix time in milliseconds.
    At(u64),
}

/// A collection's meta record, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct Collection {
    pub value_type: ValueType,
    pub version: u64,
    /// Number of members (list elements, hash fields...).
    pub size: u64,
    /// Absolute expiry in Unix ms; 0 = none.
    pub expire_at_ms: u64,
    /// Sticky: Redis would hold this value in its big encoding (hashtable,
    /// skiplist) because it once outgrew the compact one. Redis never
    /// converts back, so neither does this flag.
    pub big: bool,
    /// Type-specific fields (a list's head and tail positions...).
    pub extra: Bytes,
    /// Whether the record is stored (false: created by this command).
    pub stored: bool,
}

impl Collection {
    /// The collection behind `meta`; `Corrupt` for a string's record.
    pub(crate) fn from_meta(meta: Meta) -> Result<Collection> {
        match meta.body {
            Body::Collection {
                version,
                size,
                extra,
            } => Ok(Collection {
                value_type: meta.value_type,
                version,
                size,
                expire_at_ms: meta.expire_at_ms,
                big: meta.encoding == EncodingHint::Raw,
                extra,
                stored: true,
            }),
            _ => Err(StorageError::Corrupt("collection meta")),
        }
    }

    /// The collection as a meta record.
    pub fn to_meta(&self) -> Meta {
        Meta {
            value_type: self.value_type,
            expire_at_ms: self.expire_at_ms,
            encoding: if self.big {
                EncodingHint::Raw
            } else {
                EncodingHint::Auto
            },
            body: Body::Collection {
                version: self.version,
                size: self.size,
                extra: self.extra.clone(),
            },
        }
    }

    /// A collection's view of a meta record already read (TYPE-dispatching
    /// commands such as DUMP and OBJECT); `None` for a string.
    pub fn of_meta(meta: &Meta) -> Option<Collection> {
        Collection::from_meta(meta.clone()).ok()
    }
}

/// Where the head and tail of a new list start: the middle of the
/// position space.
const ORIGIN: u64 = 1 << 63;

/// A list's meta record with its end positions decoded: the collection's
/// `extra` holds the head and tail positions, u64 big-endian each (see
/// list.rs for how elements are stored at them). Change it through the
/// `list_*` methods of `Txn`, which move the ends, then store it with
/// `Txn::save_list`.
#[derive(Clone, Debug, PartialEq)]
pub struct List {
    pub coll: Collection,
    /// Position of element 0.
    pub(crate) head: u64,
    /// One past the position of the last element.
    pub(crate) tail: u64,
}

impl List {
    /// A list's view of its collection record (DUMP reads it so).
    pub fn from_collection(coll: Collection) -> Result<List> {
        let corrupt = || StorageError::Corrupt("list positions");
        let head = coll.extra.get(0..8).ok_or_else(corrupt)?;
        let tail = coll.extra.get(8..16).ok_or_else(corrupt)?;
        let head = u64::from_be_bytes(head.try_into().map_err(|_| corrupt())?);
        let tail = u64::from_be_bytes(tail.try_into().map_err(|_| corrupt())?);
        if tail.checked_sub(head) != Some(coll.size) {
            return Err(corrupt());
        }
        Ok(List { coll, head, tail })
    }

    /// The `extra` of a new list: both ends at the origin.
    pub(crate) fn origin_extra() -> Bytes {
        let mut extra = Vec::with_capacity(16);
        extra.extend_from_slice(&ORIGIN.to_be_bytes());
        extra.extend_from_slice(&ORIGIN.to_be_bytes());
        Bytes::from(extra)
    }

    /// An empty list over `coll`, a new collection made with
    /// [`List::origin_extra`].
    pub(crate) fn empty(coll: Collection) -> List {
        List {
            coll,
            head: ORIGIN,
            tail: ORIGIN,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.tail - self.head
    }

    pub fn is_empty(&self) -> bool {
        self.head == self.tail
    }

    /// The member bytes of element `index` (streamed replies walk ranges
    /// of them in a snapshot).
    pub fn position(&self, index: u64) -> [u8; 8] {
        self.head.wrapping_add(index).to_be_bytes()
    }

    /// Writes the ends back into the collection record (before it is saved).
    pub(crate) fn sync_record(&mut self) {
        let mut extra = Vec::with_capacity(16);
        extra.extend_from_slice(&self.head.to_be_bytes());
        extra.extend_from_slice(&self.tail.to_be_bytes());
        self.coll.extra = Bytes::from(extra);
        self.coll.size = self.len();
    }
}

fn read_u64(raw: &[u8], pos: usize) -> Option<u64> {
    let bytes: [u8; 8] = raw.get(pos..pos + 8)?.try_into().ok()?;
    Some(u64::from_be_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let cases = [
            Meta::inline_string(Bytes::from_static(b"hello")),
            Meta {
                expire_at_ms: 1_700_000_000_000,
                encoding: EncodingHint::Raw,
                ..Meta::inline_string(Bytes::new())
            },
            Meta {
                value_type: ValueType::String,
                expire_at_ms: 5,
                encoding: EncodingHint::Auto,
                body: Body::Chunked {
                    version: 9,
                    len: 1 << 30,
                },
            },
            Meta {
                value_type: ValueType::Hash,
                expire_at_ms: 0,
                encoding: EncodingHint::Auto,
                body: Body::Collection {
                    version: 1,
                    size: 2,
                    extra: Bytes::from_static(b"xy"),
                },
            },
        ];
        for meta in cases {
            let encoded = Bytes::from(meta.encode());
            assert_eq!(Meta::decode(&encoded).unwrap(), meta);
        }
    }

    #[test]
    fn facts_read_the_same_from_a_record_and_from_its_header() {
        let with_ttl = Meta {
            expire_at_ms: 1_700_000_000_123,
            ..Meta::inline_string(Bytes::from_static(b"value"))
        };
        let collection = Meta {
            value_type: ValueType::Hash,
            expire_at_ms: 0,
            encoding: EncodingHint::Raw,
            body: Body::Collection {
                version: 7,
                size: 3,
                extra: Bytes::new(),
            },
        };
        for meta in [with_ttl, collection] {
            let raw = meta.encode();
            let header = &raw[..Facts::header_len(&raw).unwrap()];
            assert_eq!(Facts::decode(&raw).unwrap(), Facts::from(&meta));
            assert_eq!(Facts::decode(header).unwrap(), Facts::from(&meta));
        }
        assert!(Facts::decode(&[0]).is_err());
        assert!(Facts::decode(&[9, 0]).is_err());
        assert!(Facts::decode(&[0, FLAG_EXPIRE, 1, 2]).is_err());
        assert_eq!(Facts::header_len(&[0, FLAG_EXPIRE, 1]), None);
    }

    #[test]
    fn truncated_records_are_errors() {
        let encoded = Meta {
            value_type: ValueType::String,
            expire_at_ms: 77,
            encoding: EncodingHint::Auto,
            body: Body::Chunked { version: 1, len: 2 },
        }
        .encode();
        for cut in 0..encoded.len() {
            let _ = Meta::decode(&Bytes::copy_from_slice(&encoded[..cut]));
        }
        assert!(Meta::decode(&Bytes::from_static(b"\x09\x00")).is_err());
        assert!(Meta::decode(&Bytes::from_static(b"\x00")).is_err());
    }
}
