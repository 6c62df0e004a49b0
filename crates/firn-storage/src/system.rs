//! Firn's own records in the `System` column family (RocksDB's `default`):
//! the version high-water mark, the per-database key counts, the
//! logical→physical database map and the server's records (function
//! libraries). Their keys and encodings live here, with the merge operator
//! that lets parallel writers each write their own part of a record.
//!
//! Key counts are merge operands written in the same batch as the keys they
//! count, so DBSIZE is exact after a crash.

use crate::keys::MAX_DATABASES;

/// The version high-water mark: a `u64`, big-endian, merged as a maximum.
pub(crate) const VERSION_KEY: &[u8] = b"version";
/// The logical→physical database map, one byte per logical database.
pub(crate) const DB_MAP_KEY: &[u8] = b"dbmap";
/// Prefix of the server's own records in the System CF (function
/// libraries: see `Txn::put_server_record`).
pub(crate) const SERVER_RECORD_PREFIX: &[u8] = b"srv:";

pub(crate) fn server_record_key(key: &[u8]) -> Vec<u8> {
    let mut out = SERVER_RECORD_PREFIX.to_vec();
    out.extend_from_slice(key);
    out
}

/// The key-count record of physical database `db`.
pub(crate) fn count_key(db: u8) -> Vec<u8> {
    let mut k = b"count:".to_vec();
    k.push(db);
    k
}

pub(crate) fn encode_counts(keys: i64, expires: i64) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&keys.to_be_bytes());
    out[8..].copy_from_slice(&expires.to_be_bytes());
    out
}

/// A System-CF key-count record: `(keys, keys with an expiry)`.
pub(crate) fn decode_counts(raw: &[u8]) -> Option<(i64, i64)> {
    let keys = raw.get(..8)?.try_into().ok().map(i64::from_be_bytes)?;
    let expires = raw.get(8..16)?.try_into().ok().map(i64::from_be_bytes)?;
    (raw.len() == 16).then_some((keys, expires))
}

/// The System CF's merge operator: key-count records add up (16 bytes:
/// keys and keys with an expiry, big-endian i64s) and the version
/// high-water mark keeps the largest value, so parallel writers can each
/// write their own part. A record of another length counts as absent.
pub(crate) fn system_merge(
    key: &[u8],
    existing: Option<&[u8]>,
    operands: &rocksdb::MergeOperands,
) -> Option<Vec<u8>> {
    let values = existing.into_iter().chain(operands.iter());
    if key == VERSION_KEY {
        let max = values
            .filter_map(|v| v.try_into().ok().map(u64::from_be_bytes))
            .max()
            .unwrap_or(0);
        return Some(max.to_be_bytes().to_vec());
    }
    let (keys, expires) = values
        .filter_map(decode_counts)
        .fold((0i64, 0i64), |(k, e), (dk, de)| {
            (k.wrapping_add(dk), e.wrapping_add(de))
        });
    Some(encode_counts(keys, expires).to_vec())
}

/// The engine's records as RocksDB holds them: what `Engine::open` starts
/// from, and what a loaded checkpoint brings (checkpoint_load.rs).
pub(crate) struct SystemRecords {
    /// The version high-water mark (0 when there is none).
    pub(crate) version: u64,
    /// `(keys, keys with an expiry)` per physical database; a database
    /// without a record has none.
    pub(crate) counts: Vec<(i64, i64)>,
    /// The logical→physical map; the identity when there is none (no
    /// SWAPDB ever) or it is not one byte per database.
    pub(crate) db_map: Vec<u8>,
}

impl SystemRecords {
    pub(crate) fn read(db: &rocksdb::DB) -> crate::Result<SystemRecords> {
        let mut records = SystemRecords {
            version: 0,
            counts: vec![(0, 0); MAX_DATABASES],
            db_map: (0..MAX_DATABASES).map(|d| d as u8).collect(),
        };
        let Some(system) = db.cf_handle(crate::Cf::System.name()) else {
            return Ok(records);
        };
        if let Some(raw) = db.get_cf(system, VERSION_KEY)? {
            if let Some(version) = raw.get(..8).and_then(|b| b.try_into().ok()) {
                records.version = u64::from_be_bytes(version);
            }
        }
        for (pdb, counts) in records.counts.iter_mut().enumerate() {
            let raw = db.get_cf(system, count_key(pdb as u8))?;
            if let Some(found) = raw.as_deref().and_then(decode_counts) {
                *counts = found;
            }
        }
        if let Some(raw) = db.get_cf(system, DB_MAP_KEY)? {
            if raw.len() == MAX_DATABASES {
                records.db_map = raw;
            }
        }
        Ok(records)
    }
}
