//! Key encoding. All integers are big-endian so byte order is numeric order.
//!
//! | CF       | key                                                        |
//! |----------|------------------------------------------------------------|
//! | `meta`   | `db:u8 · slot:u16 · user_key`                              |
//! | `data`   | `db · slot · len(user_key):u32 · user_key · version:u64 · member` |
//! | `expire` | `at_ms:u64 · db · slot · user_key`                         |
//!
//! `db` is the *physical* database id (SWAPDB swaps a logical→physical map,
//! see `dbmap.rs`). `slot` is CRC16(key or its `{hash tag}`) mod 16384,
//! exactly as Redis Cluster computes it.

use crc::{Crc, CRC_16_XMODEM};

const CRC16: Crc<u16> = Crc::<u16>::new(&CRC_16_XMODEM);

/// The `db` byte: at most this many physical databases.
pub(crate) const MAX_DATABASES: usize = 256;

/// Redis Cluster's hash slot of a key, honouring `{hash tags}`.
pub fn key_slot(key: &[u8]) -> u16 {
    let hashed = match key.iter().position(|&b| b == b'{') {
        Some(open) => match key[open + 1..].iter().position(|&b| b == b'}') {
            Some(len) if len > 0 => &key[open + 1..open + 1 + len],
            _ => key,
        },
        None => key,
    };
    CRC16.checksum(hashed) & 0x3FFF
}

pub fn meta_key(db: u8, key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(3 + key.len());
    out.push(db);
    out.extend_from_slice(&key_slot(key).to_be_bytes());
    out.extend_from_slice(key);
    out
}

/// Splits a meta key into `(db, user_key)`.
pub fn parse_meta_key(raw: &[u8]) -> Option<(u8, &[u8])> {
    if raw.len() < 3 {
        return None;
    }
    Some((raw[0], &raw[3..]))
}

/// Prefix shared by every member of one version of a collection.
pub fn member_prefix(db: u8, key: &[u8], version: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(15 + key.len());
    out.push(db);
    out.extend_from_slice(&key_slot(key).to_be_bytes());
    out.extend_from_slice(&(key.len() as u32).to_be_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&version.to_be_bytes());
    out
}

pub fn member_key(db: u8, key: &[u8], version: u64, member: &[u8]) -> Vec<u8> {
    let mut out = member_prefix(db, key, version);
    out.extend_from_slice(member);
    out
}

/// Splits a data-CF key into `(db, user_key, version)`; the member follows.
pub fn parse_member_key(raw: &[u8]) -> Option<(u8, &[u8], u64)> {
    let len_bytes: [u8; 4] = raw.get(3..7)?.try_into().ok()?;
    let key_len = u32::from_be_bytes(len_bytes) as usize;
    let key_end = 7usize.checked_add(key_len)?;
    let user_key = raw.get(7..key_end)?;
    let version_bytes: [u8; 8] = raw.get(key_end..key_end + 8)?.try_into().ok()?;
    Some((raw[0], user_key, u64::from_be_bytes(version_bytes)))
}

pub fn expire_key(at_ms: u64, db: u8, key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(11 + key.len());
    out.extend_from_slice(&at_ms.to_be_bytes());
    out.push(db);
    out.extend_from_slice(&key_slot(key).to_be_bytes());
    out.extend_from_slice(key);
    out
}

/// Splits an expire-index key into `(at_ms, db, user_key)`.
pub fn parse_expire_key(raw: &[u8]) -> Option<(u64, u8, &[u8])> {
    let at: [u8; 8] = raw.get(0..8)?.try_into().ok()?;
    let db = *raw.get(8)?;
    let user_key = raw.get(11..)?;
    Some((u64::from_be_bytes(at), db, user_key))
}

/// The lock stripe (see locks.rs) of a raw key of column family `cf`: every
/// Firn key embeds its physical db and cluster slot at a fixed place.
pub fn stripe_of_raw(cf: crate::Cf, raw: &[u8]) -> usize {
    let at = match cf {
        crate::Cf::System => return 0,
        crate::Cf::Expire => 8,
        _ => 0,
    };
    match raw.get(at..at + 3) {
        Some(&[pdb, hi, lo]) => crate::locks::stripe_of(pdb, u16::from_be_bytes([hi, lo])),
        _ => 0,
    }
}

/// The stripe of `key` in physical database `pdb`.
pub fn stripe_of_key(pdb: u8, key: &[u8]) -> usize {
    crate::locks::stripe_of(pdb, key_slot(key))
}

/// A key past every key of every column family, for ranges over a whole
/// one. A `meta`, `data`, `zscore` or `stream` key starts `db · slot`, and
/// an `expire` key `at_ms:u64 · db · slot`: a slot is below 0x4000, so its
/// first byte is at most 0x3F and such a key sorts below ten 0xFF bytes
/// even with `db` 255 and `at_ms` `u64::MAX`. System records start with
/// an ASCII name (system.rs).
pub(crate) const PAST_EVERY_KEY: [u8; 10] = [0xFF; 10];

/// The first key after every key that starts with `prefix` (for range ends).
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_match_redis_cluster() {
        // Values from `CLUSTER KEYSLOT` on redis-server 7.0.
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"foo{}{bar}"), key_slot(b"foo{}{bar}"));
        assert_eq!(key_slot(b""), 0);
    }

    #[test]
    fn member_keys_round_trip() {
        let raw = member_key(3, b"user:1", 42, b"field");
        let (db, key, version) = parse_member_key(&raw).unwrap();
        assert_eq!((db, key, version), (3, &b"user:1"[..], 42));
        assert!(parse_member_key(&raw[..9]).is_none());
    }

    #[test]
    fn expire_keys_sort_by_time() {
        let early = expire_key(1_000, 0, b"zzz");
        let late = expire_key(2_000, 0, b"aaa");
        assert!(early < late);
        assert_eq!(parse_expire_key(&late), Some((2_000, 0, &b"aaa"[..])));
    }

    #[test]
    fn every_key_sorts_before_past_every_key() {
        let key = b"{user}\xff\xff";
        let last = [
            meta_key(255, key),
            member_key(255, key, u64::MAX, &[0xFF; 32]),
            expire_key(u64::MAX, 255, key),
            b"version".to_vec(),
        ];
        for raw in last {
            assert!(raw.as_slice() < &PAST_EVERY_KEY[..], "{raw:?}");
        }
    }

    #[test]
    fn prefix_end_carries() {
        assert_eq!(prefix_end(&[1, 2]), Some(vec![1, 3]));
        assert_eq!(prefix_end(&[1, 0xFF]), Some(vec![2]));
        assert_eq!(prefix_end(&[0xFF]), None);
    }
}
