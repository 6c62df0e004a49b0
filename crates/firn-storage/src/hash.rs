//! Hashes, field by field.
//!
//! Layout: the key's meta record is a [`Collection`] of type `Hash` (size =
//! number of fields); each field is one `Cf::Data` entry
//! `member_prefix(db, key, version) · field` whose value is the field's
//! value, as given. So HGET/HSET/HDEL/HEXISTS cost one point read (plus one
//! write), HLEN reads only the meta record, and HGETALL/HSCAN walk the
//! fields in byte order, reading only what they visit.
//!
//! The sticky `big` flag follows Redis 7.0's listpack -> hashtable
//! conversion under the configured `hash-max-listpack-entries` (default
//! 512; the sample redis.conf says 128) and `hash-max-listpack-value`
//! (default 64): a hash becomes big once it holds more fields or is given a
//! longer field or value than they allow, and never goes back.

use bytes::Bytes;
use std::ops::Bound;

use crate::error::Result;
use crate::meta::{Collection, ValueType};
use crate::txn::Txn;
use crate::Cf;

impl Txn<'_> {
    /// The hash at `key`: `None` if missing, `WrongType` for another type.
    pub fn hash(&mut self, db: u8, key: &[u8]) -> Result<Option<Collection>> {
        self.collection(db, key, ValueType::Hash)
    }

    /// [`Txn::hash`], or a new empty hash (stored by `save_collection` once
    /// it has a field).
    pub fn hash_or_new(&mut self, db: u8, key: &[u8]) -> Result<Collection> {
        self.collection_or_new(db, key, ValueType::Hash, Bytes::new())
    }

    pub fn hash_get(
        &mut self,
        db: u8,
        key: &[u8],
        hash: &Collection,
        field: &[u8],
    ) -> Result<Option<Bytes>> {
        self.get_member(Cf::Data, db, key, hash, field)
    }

    /// Sets `field` to `value`; true if the field is new. Keeps `size` and
    /// the `big` flag in step (Redis's hashTypeSet: a long field or value
    /// converts before the write, too many fields after it); the caller
    /// stores the record with `save_collection`.
    pub fn hash_set(
        &mut self,
        db: u8,
        key: &[u8],
        hash: &mut Collection,
        field: &[u8],
        value: Bytes,
    ) -> Result<bool> {
        let added = self.hash_get(db, key, hash, field)?.is_none();
        if added {
            self.hash_insert_new(db, key, hash, field, value);
        } else {
            self.note_lengths(hash, field, &value);
            self.put_member(Cf::Data, db, key, hash, field, value);
            // Redis checks the length after an update too: a lowered
            // hash-max-listpack-entries converts on the next write.
            if hash.size > self.encoding_limits().hash_max_listpack_entries {
                hash.big = true;
            }
        }
        Ok(added)
    }

    /// [`Txn::hash_set`] for a field known to be absent (a new hash filled
    /// from distinct fields): no read.
    pub fn hash_insert_new(
        &mut self,
        db: u8,
        key: &[u8],
        hash: &mut Collection,
        field: &[u8],
        value: Bytes,
    ) {
        self.note_lengths(hash, field, &value);
        self.put_member(Cf::Data, db, key, hash, field, value);
        hash.size += 1;
        if hash.size > self.encoding_limits().hash_max_listpack_entries {
            hash.big = true;
        }
    }

    /// Removes `field`; true if it was there. The caller stores the record
    /// (a hash left empty is then deleted).
    pub fn hash_delete(
        &mut self,
        db: u8,
        key: &[u8],
        hash: &mut Collection,
        field: &[u8],
    ) -> Result<bool> {
        if self.hash_get(db, key, hash, field)?.is_none() {
            return Ok(false);
        }
        self.delete_member(Cf::Data, db, key, hash, field);
        hash.size = hash.size.saturating_sub(1);
        Ok(true)
    }

    /// Visits fields after `after` (all of them for `None`) in byte order
    /// with their values, until `visit` returns false.
    pub fn hash_fields(
        &mut self,
        db: u8,
        key: &[u8],
        hash: &Collection,
        after: Option<&[u8]>,
        visit: impl FnMut(&[u8], &Bytes) -> bool,
    ) -> Result<()> {
        let from = after.map_or(Bound::Unbounded, Bound::Excluded);
        self.scan_members(
            Cf::Data,
            db,
            key,
            hash,
            from,
            Bound::Unbounded,
            false,
            visit,
        )
    }

    /// A field or value too long for a listpack makes the hash big.
    fn note_lengths(&self, hash: &mut Collection, field: &[u8], value: &[u8]) {
        let max = self.encoding_limits().hash_max_listpack_value;
        if field.len() as u64 > max || value.len() as u64 > max {
            hash.big = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_engine::open;
    use crate::{ReadMode, StorageError};

    fn write<T>(engine: &crate::Engine, f: impl FnOnce(&mut Txn<'_>) -> Result<T>) -> T {
        let mut txn = engine.txn(ReadMode::Blocking);
        let out = f(&mut txn).expect("txn body");
        for ticket in txn.commit().expect("commit") {
            ticket.wait_blocking().expect("durable");
        }
        out
    }

    fn fields(engine: &crate::Engine, key: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut txn = engine.txn(ReadMode::Blocking);
        let Some(hash) = txn.hash(0, key).expect("read") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        txn.hash_fields(0, key, &hash, None, |f, v| {
            out.push((f.to_vec(), v.to_vec()));
            true
        })
        .expect("scan");
        out
    }

    #[test]
    fn fields_are_set_counted_and_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        let added = write(&engine, |t| {
            let mut h = t.hash_or_new(0, b"h")?;
            let mut added = 0;
            for (f, v) in [("b", "2"), ("a", "1"), ("b", "3")] {
                added += t.hash_set(0, b"h", &mut h, f.as_bytes(), Bytes::from(v))? as u32;
            }
            t.save_collection(0, b"h", &h)?;
            Ok(added)
        });
        assert_eq!(added, 2);
        assert_eq!(
            fields(&engine, b"h"),
            vec![
                (b"a".to_vec(), b"1".to_vec()),
                (b"b".to_vec(), b"3".to_vec())
            ]
        );
        let size = write(&engine, |t| Ok(t.hash(0, b"h")?.map(|h| (h.size, h.big))));
        assert_eq!(size, Some((2, false)));
        // A string key is another type.
        write(&engine, |t| {
            t.set_string(0, b"s", Bytes::from("x"), crate::ExpireAction::Clear)
        });
        let mut txn = engine.txn(ReadMode::Blocking);
        assert_eq!(txn.hash(0, b"s"), Err(StorageError::WrongType));
        drop(txn);
        // Deleting every field deletes the key.
        write(&engine, |t| {
            let mut h = t.hash(0, b"h")?.expect("exists");
            assert!(t.hash_delete(0, b"h", &mut h, b"a")?);
            assert!(!t.hash_delete(0, b"h", &mut h, b"a")?);
            assert!(t.hash_delete(0, b"h", &mut h, b"b")?);
            t.save_collection(0, b"h", &h)
        });
        assert_eq!(write(&engine, |t| t.hash(0, b"h")), None);
        engine.shutdown();
    }

    #[test]
    fn big_flag_follows_the_listpack_limits_and_sticks() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        let big_after = |fields: u64, value_len: usize| {
            write(&engine, |t| {
                let mut h = t.new_collection(ValueType::Hash, Bytes::new());
                for i in 0..fields {
                    let value = Bytes::from(vec![b'v'; value_len]);
                    t.hash_set(0, b"x", &mut h, format!("f{i}").as_bytes(), value)?;
                }
                Ok(h.big)
            })
        };
        assert!(!big_after(512, 64));
        assert!(big_after(513, 1));
        assert!(big_after(1, 65));
        // A long value, then a short one: still big, as in Redis.
        let big = write(&engine, |t| {
            let mut h = t.hash_or_new(0, b"h")?;
            t.hash_set(0, b"h", &mut h, b"f", Bytes::from(vec![b'v'; 65]))?;
            t.hash_set(0, b"h", &mut h, b"f", Bytes::from("short"))?;
            t.save_collection(0, b"h", &h)?;
            Ok(t.hash(0, b"h")?.map(|h| h.big))
        });
        assert_eq!(big, Some(true));
        engine.shutdown();
    }

    /// Deleting a hash drops only its meta record; compaction then drops
    /// its fields.
    #[test]
    fn compaction_reclaims_the_fields_of_a_deleted_hash() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        write(&engine, |t| {
            let mut h = t.hash_or_new(0, b"h")?;
            for i in 0..5000 {
                t.hash_set(
                    0,
                    b"h",
                    &mut h,
                    format!("field:{i}").as_bytes(),
                    Bytes::from("v"),
                )?;
            }
            t.save_collection(0, b"h", &h)
        });
        let data_entries = |engine: &crate::Engine| {
            let inner = engine.inner();
            let data = inner.cf(Cf::Data).unwrap();
            inner.db.flush_cf(inner.cf(Cf::Meta).unwrap()).unwrap();
            inner.db.flush_cf(data).unwrap();
            inner
                .db
                .compact_range_cf(data, None::<&[u8]>, None::<&[u8]>);
            inner
                .db
                .iterator_cf(data, rocksdb::IteratorMode::Start)
                .count()
        };
        assert_eq!(data_entries(&engine), 5000);
        // One meta delete, whatever the size.
        let mut txn = engine.txn(ReadMode::Blocking);
        assert!(txn.delete_key(0, b"h").unwrap());
        let tickets = txn.commit().unwrap();
        for ticket in tickets {
            ticket.wait_blocking().unwrap();
        }
        assert_eq!(data_entries(&engine), 0);
        engine.shutdown();
    }
}
