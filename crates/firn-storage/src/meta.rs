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
