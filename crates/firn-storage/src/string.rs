//! Strings. A value of up to `CHUNK_SIZE` bytes is stored inline in its meta
//! record. A longer one lives in the `data` CF as chunks keyed by
//! `member_key(db, key, version, chunk_index:u64)`; a chunk may be shorter
//! than `CHUNK_SIZE` or missing, and the missing bytes read as zeros. So a
//! SETRANGE/SETBIT/GETRANGE/GETBIT costs one or two chunks whatever the
//! value's size, and a SETRANGE far past the end writes only the chunk it
//! lands in.

use bytes::{Bytes, BytesMut};

use crate::error::{Result, StorageError};
use crate::keys::member_key;
use crate::meta::{Body, EncodingHint, ExpireAction, Meta, ValueType};
use crate::txn::Txn;
use crate::Cf;

pub const CHUNK_SIZE: u64 = 64 * 1024;

fn chunk_key(pdb: u8, key: &[u8], version: u64, index: u64) -> Vec<u8> {
    member_key(pdb, key, version, &index.to_be_bytes())
}

impl Txn<'_> {
    /// The live meta of a string key; `WrongType` for another type.
    pub fn string_meta(&mut self, db: u8, key: &[u8]) -> Result<Option<Meta>> {
        match self.meta(db, key)? {
            Some(meta) if meta.value_type != ValueType::String => Err(StorageError::WrongType),
            other => Ok(other),
        }
    }

    /// Length of a string meta's value.
    pub fn string_len_of(meta: &Meta) -> u64 {
        match &meta.body {
            Body::Inline(v) => v.len() as u64,
            Body::Chunked { len, .. } => *len,
            Body::Collection { .. } => 0,
        }
    }

    /// The whole value of a string key.
    pub fn get_string(&mut self, db: u8, key: &[u8]) -> Result<Option<Bytes>> {
        match self.string_meta(db, key)? {
            None => Ok(None),
            Some(meta) => {
                let len = Self::string_len_of(&meta);
                self.read_string_range(db, key, &meta, 0, len).map(Some)
            }
        }
    }

    /// Bytes `[start, start+len)` of the value described by `meta`, clamped
    /// to the value's length.
    pub fn read_string_range(
        &mut self,
        db: u8,
        key: &[u8],
        meta: &Meta,
        start: u64,
        len: u64,
    ) -> Result<Bytes> {
        match &meta.body {
            Body::Inline(v) => {
                let total = v.len() as u64;
                let s = start.min(total) as usize;
                let e = start.saturating_add(len).min(total) as usize;
                Ok(v.slice(s..e))
            }
            Body::Chunked {
                version,
                len: total,
            } => {
                let end = start.saturating_add(len).min(*total);
                if start >= end {
                    return Ok(Bytes::new());
                }
                let pdb = self.physical(db);
                let mut out = BytesMut::with_capacity((end - start) as usize);
                let mut pos = start;
                while pos < end {
                    let index = pos / CHUNK_SIZE;
                    let chunk_start = index * CHUNK_SIZE;
                    let take_end = end.min(chunk_start + CHUNK_SIZE);
                    let chunk = self.get(Cf::Data, &chunk_key(pdb, key, *version, index))?;
                    let from = (pos - chunk_start) as usize;
                    let to = (take_end - chunk_start) as usize;
                    let stored = chunk.as_deref().unwrap_or(&[]);
                    if from < stored.len() {
                        out.extend_from_slice(&stored[from..to.min(stored.len())]);
                    }
                    out.resize((take_end - start) as usize, 0);
                    pos = take_end;
                }
                Ok(out.freeze())
            }
            Body::Collection { .. } => Err(StorageError::WrongType),
        }
    }

    /// Replaces `key` (of any type) with a string value.
    pub fn set_string(
        &mut self,
        db: u8,
        key: &[u8],
        value: Bytes,
        expire: ExpireAction,
    ) -> Result<()> {
        self.set_string_as(db, key, value, expire, EncodingHint::Auto)
    }

    /// `set_string` with the encoding OBJECT ENCODING should report.
    pub fn set_string_as(
        &mut self,
        db: u8,
        key: &[u8],
        value: Bytes,
        expire: ExpireAction,
        encoding: EncodingHint,
    ) -> Result<()> {
        let old_expire = match expire {
            ExpireAction::Keep => self.meta(db, key)?.map_or(0, |m| m.expire_at_ms),
            _ => 0,
        };
        let expire_at_ms = match expire {
            ExpireAction::Clear => 0,
            ExpireAction::Keep => old_expire,
            ExpireAction::At(at) => at,
        };
        let body = if value.len() as u64 <= CHUNK_SIZE {
            Body::Inline(value)
        } else {
            let version = self.alloc_version();
            let pdb = self.physical(db);
            for (index, chunk) in value.chunks(CHUNK_SIZE as usize).enumerate() {
                self.put(
                    Cf::Data,
                    &chunk_key(pdb, key, version, index as u64),
                    value.slice_ref(chunk),
                );
            }
            Body::Chunked {
                version,
                len: value.len() as u64,
            }
        };
        let meta = Meta {
            value_type: ValueType::String,
            expire_at_ms,
            encoding,
            body,
        };
        self.write_meta(db, key, &meta)
    }

    /// Overwrites bytes of a string starting at `offset`, zero-padding and
    /// creating the key as needed (SETRANGE semantics; the expiry is kept).
    /// Returns the new length. `max_len` is the largest allowed length.
    pub fn write_string_range(
        &mut self,
        db: u8,
        key: &[u8],
        offset: u64,
        data: &[u8],
        max_len: u64,
    ) -> Result<u64> {
        let meta = self.string_meta(db, key)?;
        let old_len = meta.as_ref().map_or(0, Self::string_len_of);
        let end = offset
            .checked_add(data.len() as u64)
            .ok_or(StorageError::TooLarge)?;
        if end > max_len {
            return Err(StorageError::TooLarge);
        }
        let new_len = old_len.max(end);
        let expire_at_ms = meta.as_ref().map_or(0, |m| m.expire_at_ms);
        let pdb = self.physical(db);
        let body = match meta.map(|m| m.body) {
            Some(Body::Inline(old)) if new_len <= CHUNK_SIZE => {
                let mut buf = BytesMut::from(&old[..]);
                splice(&mut buf, offset as usize, data);
                Body::Inline(buf.freeze())
            }
            None if new_len <= CHUNK_SIZE => {
                let mut buf = BytesMut::new();
                splice(&mut buf, offset as usize, data);
                Body::Inline(buf.freeze())
            }
            Some(Body::Chunked { version, .. }) => {
                self.write_chunks(pdb, key, version, offset, data)?;
                Body::Chunked {
                    version,
                    len: new_len,
                }
            }
            other => {
                // Growing past the inline limit: move to chunks.
                let version = self.alloc_version();
                if let Some(Body::Inline(old)) = other {
                    self.write_chunks(pdb, key, version, 0, &old)?;
                }
                self.write_chunks(pdb, key, version, offset, data)?;
                Body::Chunked {
                    version,
                    len: new_len,
                }
            }
        };
        let new_meta = Meta {
            value_type: ValueType::String,
            expire_at_ms,
            encoding: EncodingHint::Raw,
            body,
        };
        self.write_meta(db, key, &new_meta)?;
        Ok(new_len)
    }

    fn write_chunks(
        &mut self,
        pdb: u8,
        key: &[u8],
        version: u64,
        offset: u64,
        data: &[u8],
    ) -> Result<()> {
        let end = offset + data.len() as u64;
        let mut pos = offset;
        while pos < end {
            let index = pos / CHUNK_SIZE;
            let chunk_start = index * CHUNK_SIZE;
            let write_end = end.min(chunk_start + CHUNK_SIZE);
            let ck = chunk_key(pdb, key, version, index);
            let existing = self.get(Cf::Data, &ck)?;
            let mut buf = BytesMut::from(existing.as_deref().unwrap_or(&[]));
            let src = &data[(pos - offset) as usize..(write_end - offset) as usize];
            splice(&mut buf, (pos - chunk_start) as usize, src);
            self.put(Cf::Data, &ck, buf.freeze());
            pos = write_end;
        }
        Ok(())
    }
}

/// Writes `data` at `offset` of `buf`, zero-filling any gap.
fn splice(buf: &mut BytesMut, offset: usize, data: &[u8]) {
    let end = offset + data.len();
    if buf.len() < end {
        buf.resize(end, 0);
    }
    buf[offset..end].copy_from_slice(data);
}
