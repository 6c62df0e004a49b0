//! Sets, member by member.
//!
//! Layout: the key's meta record is a [`Collection`] of type `Set` (size =
//! number of members); each member is one `Cf::Data` entry
//! `member_prefix(db, key, version) · member` with an empty value. So
//! SADD/SREM/SISMEMBER cost one point read per member (plus one write),
//! SCARD reads only the meta record, and whole-set walks visit the members
//! in byte order, reading only what they visit.
//!
//! The sticky `big` flag follows Redis 7.0's intset -> hashtable conversion
//! under the default `set-max-intset-entries 512`: a set becomes big once
//! it is given a member that is not a canonical 64-bit integer (Redis's
//! `string2ll`) or grows past 512 members, and never goes back. A set
//! built from scratch (the *STORE commands, RESTORE, SMOVE into a new
//! key) starts compact, so its flag follows its contents alone.
//!
//! The type field (`extra`) counts the members deleted under the current
//! version. A deleted member stays in RocksDB as a tombstone until
//! compaction, and every walk and random seek over the set steps over it;
//! so a small set left with more than twice as many tombstones as members
//! (a set emptied by SPOP) moves its members to a fresh version
//! ([`Txn::set_shed_deleted`]).

use bytes::Bytes;
use std::ops::Bound;

use crate::error::Result;
use crate::meta::{Collection, ValueType};
use crate::txn::Txn;
use crate::Cf;

/// Sets up to this size move to a fresh version when deletions have left
/// too many tombstones (a bigger one waits for compaction: moving it would
/// not be a short command).
const SHED_MAX_MEMBERS: u64 = 1024;
/// Tombstones a set may always have, whatever its size.
const SHED_MIN_DELETED: u64 = 64;

/// Members deleted under the set's current version.
fn deleted_count(set: &Collection) -> u64 {
    <[u8; 8]>::try_from(set.extra.as_ref()).map_or(0, u64::from_be_bytes)
}

/// The integer an intset would hold for `member`: Redis's `string2ll`
/// (optional '-', no '+', no leading zeros or spaces, fits in an i64),
/// which is also how every integer argument is read.
pub fn intset_value(member: &[u8]) -> Option<i64> {
    firn_prims::string2ll(member)
}

impl Txn<'_> {
    /// The set at `key`: `None` if missing, `WrongType` for another type.
    pub fn set(&mut self, db: u8, key: &[u8]) -> Result<Option<Collection>> {
        self.collection(db, key, ValueType::Set)
    }

    /// [`Txn::set`], or a new empty set (stored by `save_collection` once
    /// it has a member).
    pub fn set_or_new(&mut self, db: u8, key: &[u8]) -> Result<Collection> {
        self.collection_or_new(db, key, ValueType::Set, Bytes::new())
    }

    /// An empty set with a fresh version, to be filled with
    /// [`Txn::set_insert_new`] and stored over whatever `key` held.
    pub fn new_set(&mut self) -> Collection {
        self.new_collection(ValueType::Set, Bytes::new())
    }

    pub fn set_contains(
        &mut self,
        db: u8,
        key: &[u8],
        set: &Collection,
        member: &[u8],
    ) -> Result<bool> {
        Ok(self.get_member(Cf::Data, db, key, set, member)?.is_some())
    }

    /// Adds `member`; true if it is new. Keeps `size` and the `big` flag in
    /// step; the caller stores the record with `save_collection`.
    pub fn set_add(
        &mut self,
        db: u8,
        key: &[u8],
        set: &mut Collection,
        member: &[u8],
    ) -> Result<bool> {
        if self.set_contains(db, key, set, member)? {
            return Ok(false);
        }
        self.set_insert_new(db, key, set, member);
        Ok(true)
    }

    /// [`Txn::set_add`] for a member known to be absent (a new set filled
    /// from distinct members): no read.
    pub fn set_insert_new(&mut self, db: u8, key: &[u8], set: &mut Collection, member: &[u8]) {
        self.put_member(Cf::Data, db, key, set, member, Bytes::new());
        set.size += 1;
        // Redis caps the intset's size at 2^30 whatever the setting.
        let max_intset = self.encoding_limits().set_max_intset_entries.min(1 << 30);
        if set.size > max_intset || intset_value(member).is_none() {
            set.big = true;
        }
    }

    /// Removes `member`; true if it was there. The caller stores the record
    /// (a set left empty is then deleted).
    pub fn set_remove(
        &mut self,
        db: u8,
        key: &[u8],
        set: &mut Collection,
        member: &[u8],
    ) -> Result<bool> {
        if !self.set_contains(db, key, set, member)? {
            return Ok(false);
        }
        self.set_delete_known(db, key, set, member);
        Ok(true)
    }

    /// [`Txn::set_remove`] for a member known to be present: no read.
    pub fn set_delete_known(&mut self, db: u8, key: &[u8], set: &mut Collection, member: &[u8]) {
        self.delete_member(Cf::Data, db, key, set, member);
        set.size = set.size.saturating_sub(1);
        let deleted = deleted_count(set).saturating_add(1);
        set.extra = Bytes::copy_from_slice(&deleted.to_be_bytes());
    }

    /// After deletions: moves a small set with more than twice as many
    /// tombstones as members (and at least 64) to a fresh version, reading
    /// and writing each member once; the old entries are the compaction
    /// filter's. At most once per 2 x size deletions, so O(1) amortised.
    /// The caller stores the record.
    pub fn set_shed_deleted(&mut self, db: u8, key: &[u8], set: &mut Collection) -> Result<()> {
        let deleted = deleted_count(set);
        if set.size == 0
            || set.size > SHED_MAX_MEMBERS
            || deleted <= SHED_MIN_DELETED.max(set.size.saturating_mul(2))
        {
            return Ok(());
        }
        let mut members = Vec::new();
        self.set_members(db, key, set, None, |member| {
            members.push(Bytes::copy_from_slice(member));
            true
        })?;
        set.version = self.alloc_version();
        set.extra = Bytes::new();
        set.size = members.len() as u64;
        for member in &members {
            self.put_member(Cf::Data, db, key, set, member, Bytes::new());
        }
        Ok(())
    }

    /// Visits members after `after` (all of them for `None`) in byte order,
    /// until `visit` returns false.
    pub fn set_members(
        &mut self,
        db: u8,
        key: &[u8],
        set: &Collection,
        after: Option<&[u8]>,
        mut visit: impl FnMut(&[u8]) -> bool,
    ) -> Result<()> {
        let from = after.map_or(Bound::Unbounded, Bound::Excluded);
        self.scan_members(
            Cf::Data,
            db,
            key,
            set,
            from,
            Bound::Unbounded,
            false,
            |member, _| visit(member),
        )
    }

    /// Up to `limit` members after `after`, in byte order: one page of a
    /// walk that must read other keys between pages.
    pub fn set_member_page(
        &mut self,
        db: u8,
        key: &[u8],
        set: &Collection,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Bytes>> {
        let mut page = Vec::new();
        if limit == 0 {
            return Ok(page);
        }
        self.set_members(db, key, set, after, |member| {
            page.push(Bytes::copy_from_slice(member));
            page.len() < limit
        })?;
        Ok(page)
    }

    /// Up to `count` distinct members chosen at random (see
    /// [`Txn::random_members`]: reads about `count` entries of a big set).
    pub fn set_random_members(
        &mut self,
        db: u8,
        key: &[u8],
        set: &Collection,
        count: usize,
        seed: u64,
    ) -> Result<Vec<Bytes>> {
        let picked = self.random_members(Cf::Data, db, key, set, count, seed)?;
        Ok(picked.into_iter().map(|(member, _)| member).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReadMode;

    #[test]
    fn members_sizes_and_the_big_flag() {
        let dir = tempfile::tempdir().unwrap();
        let engine = crate::test_engine::open(dir.path());
        let mut txn = engine.txn(ReadMode::Blocking);
        let mut set = txn.set_or_new(0, b"s").unwrap();
        for i in 0..512 {
            assert!(txn
                .set_add(0, b"s", &mut set, i.to_string().as_bytes())
                .unwrap());
        }
        assert!(!txn.set_add(0, b"s", &mut set, b"7").unwrap());
        assert_eq!((set.size, set.big), (512, false));
        assert!(txn.set_add(0, b"s", &mut set, b"-1").unwrap());
        assert!(set.big, "past 512 members");
        assert!(txn.set_remove(0, b"s", &mut set, b"-1").unwrap());
        assert!(!txn.set_remove(0, b"s", &mut set, b"-1").unwrap());
        assert!(set.big, "sticky");
        txn.save_collection(0, b"s", &set).unwrap();

        let page = txn.set_member_page(0, b"s", &set, None, 3).unwrap();
        assert_eq!(page, vec![&b"0"[..], b"1", b"10"]);
        let next = txn.set_member_page(0, b"s", &set, Some(b"10"), 2).unwrap();
        assert_eq!(next, vec![&b"100"[..], b"101"]);

        let mut text = txn.new_set();
        txn.set_insert_new(0, b"t", &mut text, b"12");
        assert!(!text.big);
        txn.set_insert_new(0, b"t", &mut text, b"012");
        assert!(text.big, "not a canonical integer");
        txn.save_collection(0, b"t", &text).unwrap();
        let stored = txn.set(0, b"t").unwrap().unwrap();
        assert_eq!((stored.size, stored.big), (2, true));
        assert!(txn.set_contains(0, b"t", &stored, b"012").unwrap());
        for ticket in txn.commit().unwrap() {
            ticket.wait_blocking().unwrap();
        }
        engine.shutdown();
    }

    /// Popping random members one by one must not wear the set away from
    /// its ends (a sampler biased to the edges would, and every later seek
    /// would then step over the run of deleted entries left there).
    #[test]
    fn single_random_pops_spread_over_the_set() {
        let dir = tempfile::tempdir().unwrap();
        let engine = crate::test_engine::open(dir.path());
        let member = |i: u32| format!("element:{i:06}").into_bytes();
        let mut txn = engine.txn(ReadMode::Blocking);
        let mut set = txn.new_set();
        for i in 0..5000 {
            txn.set_insert_new(0, b"s", &mut set, &member(i));
        }
        txn.save_collection(0, b"s", &set).unwrap();
        txn.commit().unwrap();
        for round in 0..20u64 {
            let mut txn = engine.txn(ReadMode::Blocking);
            let mut set = txn.set(0, b"s").unwrap().unwrap();
            for pop in 0..100 {
                let picked = txn
                    .set_random_members(0, b"s", &set, 1, round * 1000 + pop)
                    .unwrap();
                txn.set_delete_known(0, b"s", &mut set, &picked[0]);
            }
            txn.save_collection(0, b"s", &set).unwrap();
            for ticket in txn.commit().unwrap() {
                ticket.wait_blocking().unwrap();
            }
        }
        let mut txn = engine.txn(ReadMode::Blocking);
        let set = txn.set(0, b"s").unwrap().unwrap();
        assert_eq!(set.size, 3000);
        let first = txn.set_member_page(0, b"s", &set, None, 1).unwrap();
        let mut last = None;
        txn.set_members(0, b"s", &set, None, |m| {
            last = Some(m.to_vec());
            true
        })
        .unwrap();
        // 40% popped uniformly: the first or last 40 members all gone has
        // a probability of 0.4^40.
        assert!(first[0].as_ref() < member(40).as_slice(), "{first:?}");
        assert!(last.unwrap() > member(4960), "last member worn away");
        engine.shutdown();
    }

    #[test]
    fn a_small_set_left_among_tombstones_moves_to_a_fresh_version() {
        let dir = tempfile::tempdir().unwrap();
        let engine = crate::test_engine::open(dir.path());
        let mut txn = engine.txn(ReadMode::Blocking);
        let mut set = txn.new_set();
        for i in 0..300u32 {
            txn.set_insert_new(0, b"s", &mut set, format!("m{i:03}").as_bytes());
        }
        let first_version = set.version;
        for i in 0..200u32 {
            assert!(txn
                .set_remove(0, b"s", &mut set, format!("m{i:03}").as_bytes())
                .unwrap());
            txn.set_shed_deleted(0, b"s", &mut set).unwrap();
        }
        // 200 deleted, 100 left: not yet.
        assert_eq!((set.version, set.size), (first_version, 100));
        assert!(txn.set_remove(0, b"s", &mut set, b"m200").unwrap());
        txn.set_shed_deleted(0, b"s", &mut set).unwrap();
        assert_ne!(set.version, first_version);
        assert_eq!((set.size, deleted_count(&set)), (99, 0));
        txn.save_collection(0, b"s", &set).unwrap();
        let stored = txn.set(0, b"s").unwrap().unwrap();
        let all = txn.set_member_page(0, b"s", &stored, None, 1000).unwrap();
        assert_eq!(all.len(), 99);
        assert_eq!(all[0].as_ref(), b"m201");
        assert!(!txn.set_contains(0, b"s", &stored, b"m100").unwrap());
        for ticket in txn.commit().unwrap() {
            ticket.wait_blocking().unwrap();
        }
        engine.shutdown();
    }

    #[test]
    fn intset_values_follow_string2ll() {
        assert_eq!(intset_value(b"0"), Some(0));
        assert_eq!(intset_value(b"-1"), Some(-1));
        assert_eq!(intset_value(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(intset_value(b"-9223372036854775808"), Some(i64::MIN));
        for not_int in [
            &b"9223372036854775808"[..],
            b"-9223372036854775809",
            b"+1",
            b"007",
            b" 1",
            b"1 ",
            b"-0",
            b"",
            b"-",
            b"1a",
            b"1.0",
        ] {
            assert_eq!(intset_value(not_int), None, "{not_int:?}");
        }
    }
}
