//! Operations on keys whatever their type: existence, deletion, expiry,
//! copy/rename/move, scanning and random sampling of the `meta` CF.

use bytes::Bytes;

use crate::error::Result;
use crate::keys::{self, member_prefix};
use crate::meta::{Body, Meta};
use crate::txn::{ScanStep, Txn};
use crate::Cf;

/// Live meta of a key, as TYPE/OBJECT/TTL need it.
pub type KeyInfo = Meta;

/// One SCAN step: the keys found and where to continue (`None` = done).
#[derive(Debug, Default)]
pub struct ScanPage {
    pub keys: Vec<Bytes>,
    pub next_after: Option<Bytes>,
}

impl Txn<'_> {
    pub fn exists(&mut self, db: u8, key: &[u8]) -> Result<bool> {
        Ok(self.meta(db, key)?.is_some())
    }

    /// Deletes a key of any type in O(1); returns whether it existed.
    pub fn delete_key(&mut self, db: u8, key: &[u8]) -> Result<bool> {
        if self.meta(db, key)?.is_none() {
            return Ok(false);
        }
        self.remove_meta(db, key)
    }

    /// Sets (`at_ms > 0`) or removes (`0`) a key's expiry. Returns false if
    /// the key does not exist.
    pub fn set_expire_at(&mut self, db: u8, key: &[u8], at_ms: u64) -> Result<bool> {
        match self.meta(db, key)? {
            None => Ok(false),
            Some(mut meta) => {
                meta.expire_at_ms = at_ms;
                self.write_meta(db, key, &meta)?;
                Ok(true)
            }
        }
    }

    /// Copies `src` (db `src_db`) to `dst` (db `dst_db`) with its expiry,
    /// replacing whatever `dst` held. The caller checks existence rules.
    /// Collections and chunked strings get a fresh version: O(members).
    pub fn copy_key(&mut self, src_db: u8, src: &[u8], dst_db: u8, dst: &[u8]) -> Result<bool> {
        let Some(meta) = self.meta(src_db, src)? else {
            return Ok(false);
        };
        let body = match &meta.body {
            Body::Inline(v) => Body::Inline(v.clone()),
            Body::Chunked { version, len } => Body::Chunked {
                version: self.copy_members(src_db, src, *version, dst_db, dst)?,
                len: *len,
            },
            Body::Collection {
                version,
                size,
                extra,
            } => Body::Collection {
                version: self.copy_members(src_db, src, *version, dst_db, dst)?,
                size: *size,
                extra: extra.clone(),
            },
        };
        let copy = Meta { body, ..meta };
        self.write_meta(dst_db, dst, &copy)?;
        Ok(true)
    }

    fn copy_members(
        &mut self,
        src_db: u8,
        src: &[u8],
        version: u64,
        dst_db: u8,
        dst: &[u8],
    ) -> Result<u64> {
        let new_version = self.alloc_version();
        let (src_pdb, dst_pdb) = (self.physical(src_db), self.physical(dst_db));
        let src_prefix = member_prefix(src_pdb, src, version);
        let dst_prefix = member_prefix(dst_pdb, dst, new_version);
        let end = keys::prefix_end(&src_prefix);
        let mut members: Vec<(Vec<u8>, Bytes)> = Vec::new();
        self.scan(Cf::Data, &src_prefix, end.as_deref(), |k, v| {
            let mut target = dst_prefix.clone();
            target.extend_from_slice(&k[src_prefix.len()..]);
            members.push((target, v.clone()));
            ScanStep::Continue
        })?;
        for (k, v) in members {
            self.put(Cf::Data, &k, v);
        }
        Ok(new_version)
    }

    /// Visits up to `count` keys of `db` after `after` (exclusive), returning
    /// those `keep` accepts. Expired keys are skipped.
    pub fn scan_keys(
        &mut self,
        db: u8,
        after: Option<&[u8]>,
        count: usize,
        mut keep: impl FnMut(&[u8], &Meta) -> bool,
    ) -> Result<ScanPage> {
        let pdb = self.physical(db);
        let start = match after {
            Some(after) => {
                let mut k = keys::meta_key(pdb, after);
                k.push(0);
                k
            }
            None => vec![pdb],
        };
        let end = keys::prefix_end(&[pdb]);
        let now = self.now_ms();
        let mut page = ScanPage::default();
        let mut visited = 0usize;
        let mut last: Option<Bytes> = None;
        let mut decode_error = None;
        self.scan(Cf::Meta, &start, end.as_deref(), |raw_key, raw_value| {
            let Some((_, user_key)) = keys::parse_meta_key(raw_key) else {
                return ScanStep::Continue;
            };
            visited += 1;
            last = Some(Bytes::copy_from_slice(user_key));
            match Meta::decode(raw_value) {
                Ok(meta) if !meta.is_expired(now) && keep(user_key, &meta) => {
                    page.keys.push(Bytes::copy_from_slice(user_key));
                }
                Ok(_) => {}
                Err(e) => decode_error = Some(e),
            }
            if visited >= count.max(1) {
                ScanStep::Stop
            } else {
                ScanStep::Continue
            }
        })?;
        if let Some(e) = decode_error {
            return Err(e);
        }
        if visited >= count.max(1) {
            page.next_after = last;
        }
        Ok(page)
    }

    /// A live key of `db` near the position `seed` picks, or `None` if the
    /// database is empty.
    pub fn random_key(&mut self, db: u8, seed: u64) -> Result<Option<Bytes>> {
        let pdb = self.physical(db);
        let slot = (seed % 16384) as u16;
        let mut start = vec![pdb];
        start.extend_from_slice(&slot.to_be_bytes());
        let end = keys::prefix_end(&[pdb]);
        for (from, to) in [(start.clone(), end.clone()), (vec![pdb], Some(start))] {
            let now = self.now_ms();
            let mut found = None;
            let mut scanned = 0usize;
            self.scan(Cf::Meta, &from, to.as_deref(), |raw_key, raw_value| {
                scanned += 1;
                if let (Some((_, user_key)), Ok(meta)) =
                    (keys::parse_meta_key(raw_key), Meta::decode(raw_value))
                {
                    if !meta.is_expired(now) {
                        found = Some(Bytes::copy_from_slice(user_key));
                        return ScanStep::Stop;
                    }
                }
                if scanned > 10_000 {
                    ScanStep::Stop
                } else {
                    ScanStep::Continue
                }
            })?;
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }
}
