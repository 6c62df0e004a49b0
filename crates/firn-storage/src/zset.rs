//! Sorted sets, stored member by member with a by-score index.
//!
//! Two entries per member, both under the collection's `member_prefix`:
//! - `Cf::Data`: `member` -> its score, 8 bytes (the f64's bits, big-endian);
//! - `Cf::ZScore`: `order(score) · member` -> empty, where `order` is the
//!   score's IEEE bits with the sign bit flipped for positives and every bit
//!   flipped for negatives, big-endian. Byte order of the index is then
//!   Redis's order: by score, then by member bytes. -0.0 is indexed as 0.0
//!   (Redis compares them equal, so they tie on the member); a -0.0 score,
//!   which Redis keeps only in its skiplist encoding, stores its exact bits
//!   as the index value.
//!
//! Score ranges, rank walks and lex ranges (Redis's lex commands assume one
//! score) are range scans of the index in either direction: they read only
//! the entries they visit.
//!
//! The Txn methods the command layer (sorted sets, geo) uses:
//! - [`Txn::zset_score`]: one member's score;
//! - [`Txn::zset_add`]: ZADD's add-or-update of one member under
//!   [`ZAddFlags`] (NX/XX/GT/LT/INCR);
//! - [`Txn::zset_put`]: set a member's score unconditionally;
//! - [`Txn::zset_remove`]: remove one member;
//! - [`Txn::zset_scan_scores`]: walk members in a [`ScoreRange`], either
//!   direction, until the visitor says stop (limits are the visitor's);
//! - [`Txn::zset_scan_lex`]: the same over a [`LexRange`];
//! - [`Txn::zset_rank`]: a member's rank, walking from the nearer end;
//! - [`Txn::zset_store`]: replace a key by a whole new sorted set (the
//!   *STORE commands), [`Txn::zset_store_inserted`] the same member by
//!   member (ZRANGESTORE's encoding rules);
//! - [`KeyspaceView::zset_scan_scores`], [`KeyspaceView::zset_scan_lex`]:
//!   the same walks in a snapshot, for replies too big to hold (streamed).
//!
//! Every method that changes members keeps `coll.size` and the sticky
//! `coll.big` flag in step; the caller stores the record back with
//! [`Txn::save_collection`].

use bytes::Bytes;
use std::ops::Bound;

use crate::error::{Result, StorageError};
use crate::meta::{Collection, ValueType};
use crate::txn::Txn;
use crate::view::KeyspaceView;
use crate::zset_args::{LexBound, LexRange, RankLookup, ScoreRange, ZAddFlags, ZAddOutcome};
use crate::Cf;

/// The index key's 8-byte prefix for `score` (see the file header).
pub fn score_order_bytes(score: f64) -> [u8; 8] {
    // -0.0 == 0.0 in Redis's comparisons: one index position for both.
    let score = if score == 0.0 { 0.0 } else { score };
    let bits = score.to_bits();
    let ordered = if bits >> 63 == 0 {
        bits | (1 << 63)
    } else {
        !bits
    };
    ordered.to_be_bytes()
}

/// The inverse of [`score_order_bytes`].
fn score_from_order(ordered: u64) -> f64 {
    let bits = if ordered >> 63 == 1 {
        ordered & !(1 << 63)
    } else {
        !ordered
    };
    f64::from_bits(bits)
}

/// Splits an index entry (past the member prefix) into member and score.
fn decode_index<'a>(entry: &'a [u8], value: &[u8]) -> Option<(f64, &'a [u8])> {
    let ordered: [u8; 8] = entry.get(..8)?.try_into().ok()?;
    let member = entry.get(8..)?;
    let score = match value.get(..8).and_then(|v| <[u8; 8]>::try_from(v).ok()) {
        Some(exact) => f64::from_bits(u64::from_be_bytes(exact)),
        None => score_from_order(u64::from_be_bytes(ordered)),
    };
    Some((score, member))
}

fn index_entry(score: f64, member: &[u8]) -> Vec<u8> {
    let mut entry = Vec::with_capacity(8 + member.len());
    entry.extend_from_slice(&score_order_bytes(score));
    entry.extend_from_slice(member);
    entry
}

fn decode_score(raw: &[u8]) -> Result<f64> {
    let bits: [u8; 8] = raw
        .try_into()
        .map_err(|_| StorageError::Corrupt("zset score"))?;
    Ok(f64::from_bits(u64::from_be_bytes(bits)))
}

/// Index bounds `[start, end)` of `range` on the 8-byte score prefix;
/// None when the range is empty (as Redis's zslIsInRange decides).
fn index_bounds(range: &ScoreRange) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    if range.min > range.max
        || (range.min == range.max && (range.min_exclusive || range.max_exclusive))
    {
        return None;
    }
    let after = |score: f64| u64::from_be_bytes(score_order_bytes(score)).checked_add(1);
    let start = if range.min_exclusive {
        after(range.min)?.to_be_bytes().to_vec()
    } else {
        score_order_bytes(range.min).to_vec()
    };
    let end = if range.max_exclusive {
        Some(score_order_bytes(range.max).to_vec())
    } else {
        after(range.max).map(|e| e.to_be_bytes().to_vec())
    };
    Some((start, end))
}

impl Txn<'_> {
    /// The score of `member`, if present.
    pub fn zset_score(
        &mut self,
        db: u8,
        key: &[u8],
        coll: &Collection,
        member: &[u8],
    ) -> Result<Option<f64>> {
        match self.get_member(Cf::Data, db, key, coll, member)? {
            Some(raw) => decode_score(&raw).map(Some),
            None => Ok(None),
        }
    }

    /// Adds or updates `member` as Redis's zsetAdd does under `flags`.
    pub fn zset_add(
        &mut self,
        db: u8,
        key: &[u8],
        coll: &mut Collection,
        member: &[u8],
        score: f64,
        flags: ZAddFlags,
    ) -> Result<ZAddOutcome> {
        if score.is_nan() {
            return Ok(ZAddOutcome::NotANumber);
        }
        match self.zset_score(db, key, coll, member)? {
            Some(current) => {
                if flags.nx {
                    return Ok(ZAddOutcome::Skipped);
                }
                let score = if flags.incr { score + current } else { score };
                if score.is_nan() {
                    return Ok(ZAddOutcome::NotANumber);
                }
                if (flags.lt && score >= current) || (flags.gt && score <= current) {
                    return Ok(ZAddOutcome::Skipped);
                }
                if score == current {
                    return Ok(ZAddOutcome::Unchanged(score));
                }
                self.zset_write(db, key, coll, member, Some(current), score);
                Ok(ZAddOutcome::Updated(score))
            }
            None if flags.xx => Ok(ZAddOutcome::Skipped),
            None => {
                self.zset_insert(db, key, coll, member, score);
                Ok(ZAddOutcome::Added(score))
            }
        }
    }

    /// Sets `member`'s score whatever it was; returns the previous score.
    pub fn zset_put(
        &mut self,
        db: u8,
        key: &[u8],
        coll: &mut Collection,
        member: &[u8],
        score: f64,
    ) -> Result<Option<f64>> {
        let current = self.zset_score(db, key, coll, member)?;
        match current {
            Some(current) => self.zset_write(db, key, coll, member, Some(current), score),
            None => self.zset_insert(db, key, coll, member, score),
        }
        Ok(current)
    }

    /// Removes `member`; returns whether it was there.
    pub fn zset_remove(
        &mut self,
        db: u8,
        key: &[u8],
        coll: &mut Collection,
        member: &[u8],
    ) -> Result<bool> {
        let Some(score) = self.zset_score(db, key, coll, member)? else {
            return Ok(false);
        };
        self.zset_remove_known(db, key, coll, member, score);
        Ok(true)
    }

    /// Removes a member whose score the caller has just read (from a walk).
    pub fn zset_remove_known(
        &mut self,
        db: u8,
        key: &[u8],
        coll: &mut Collection,
        member: &[u8],
        score: f64,
    ) {
        self.delete_member(Cf::Data, db, key, coll, member);
        self.delete_member(Cf::ZScore, db, key, coll, &index_entry(score, member));
        coll.size = coll.size.saturating_sub(1);
    }

    /// A new member: Redis converts to the skiplist when the listpack
    /// would pass its entry count or the member its length.
    fn zset_insert(
        &mut self,
        db: u8,
        key: &[u8],
        coll: &mut Collection,
        member: &[u8],
        score: f64,
    ) {
        coll.size += 1;
        let limits = self.encoding_limits();
        if coll.size > limits.zset_max_listpack_entries
            || member.len() as u64 > limits.zset_max_listpack_value
        {
            coll.big = true;
        }
        self.zset_write(db, key, coll, member, None, score);
    }

    fn zset_write(
        &mut self,
        db: u8,
        key: &[u8],
        coll: &Collection,
        member: &[u8],
        old: Option<f64>,
        score: f64,
    ) {
        // A listpack stores an integral score as an integer: -0 becomes 0.
        let score = if score == 0.0 && !coll.big {
            0.0
        } else {
            score
        };
        if let Some(old) = old {
            self.delete_member(Cf::ZScore, db, key, coll, &index_entry(old, member));
        }
        let bits = Bytes::copy_from_slice(&score.to_bits().to_be_bytes());
        let exact = if score == 0.0 && score.is_sign_negative() {
            bits.clone()
        } else {
            Bytes::new()
        };
        self.put_member(Cf::Data, db, key, coll, member, bits);
        self.put_member(
            Cf::ZScore,
            db,
            key,
            coll,
            &index_entry(score, member),
            exact,
        );
    }

    /// Visits the members whose score is in `range`, by score then member
    /// (or the opposite, `reverse`), until `visit` returns false.
    pub fn zset_scan_scores(
        &mut self,
        db: u8,
        key: &[u8],
        coll: &Collection,
        range: &ScoreRange,
        reverse: bool,
        mut visit: impl FnMut(&[u8], f64) -> bool,
    ) -> Result<()> {
        let mut index = TxnIndex { txn: self, db };
        scan_scores(&mut index, key, coll, range, reverse, &mut visit)
    }

    /// Visits the members in the lex `range` (forward: from the first
    /// member at or above `min` while at or below `max`; `reverse`: the
    /// mirror image), until `visit` returns false.
    ///
    /// Redis defines lex ranges only when every member has the same score.
    /// A compact set is walked from its end, as Redis walks a listpack; a
    /// big one seeks into the first (last) score's members, as Redis's
    /// skiplist descent lands there when the scores are equal.
    pub fn zset_scan_lex(
        &mut self,
        db: u8,
        key: &[u8],
        coll: &Collection,
        range: &LexRange,
        reverse: bool,
        mut visit: impl FnMut(&[u8], f64) -> bool,
    ) -> Result<()> {
        let mut index = TxnIndex { txn: self, db };
        scan_lex(&mut index, key, coll, range, reverse, &mut visit)
    }

    /// The rank of `member` from the lowest score (or the highest,
    /// `reverse`), walking at most `limit` entries from each end.
    pub fn zset_rank(
        &mut self,
        db: u8,
        key: &[u8],
        coll: &Collection,
        member: &[u8],
        reverse: bool,
        limit: u64,
    ) -> Result<RankLookup> {
        let Some(score) = self.zset_score(db, key, coll, member)? else {
            return Ok(RankLookup::Missing);
        };
        let target = index_entry(score, member);
        // Walks from each end in turn with doubling lengths, so the cost
        // is a small multiple of the distance to the nearer end.
        let mut step = 32u64;
        let from_low = loop {
            let this_limit = step.min(limit);
            if let Some(before) =
                self.zset_count_beyond(db, key, coll, &target, false, this_limit)?
            {
                break before;
            }
            if let Some(after) = self.zset_count_beyond(db, key, coll, &target, true, this_limit)? {
                break coll.size.saturating_sub(after + 1);
            }
            if this_limit == limit {
                return Ok(RankLookup::TooFar);
            }
            step = step.saturating_mul(2);
        };
        let rank = if reverse {
            coll.size.saturating_sub(from_low + 1)
        } else {
            from_low
        };
        Ok(RankLookup::Found(rank, score))
    }

    /// Index entries strictly below (or, `above`, above) `target`, if
    /// there are at most `limit`.
    fn zset_count_beyond(
        &mut self,
        db: u8,
        key: &[u8],
        coll: &Collection,
        target: &[u8],
        above: bool,
        limit: u64,
    ) -> Result<Option<u64>> {
        let (from, to) = if above {
            (Bound::Excluded(target), Bound::Unbounded)
        } else {
            (Bound::Unbounded, Bound::Excluded(target))
        };
        let mut walked = 0u64;
        self.scan_members(Cf::ZScore, db, key, coll, from, to, above, |_, _| {
            walked += 1;
            walked <= limit
        })?;
        Ok((walked <= limit).then_some(walked))
    }

    /// Replaces whatever `key` holds by a sorted set of `members` (distinct,
    /// any order) with no expiry, as the *STORE commands do; an empty
    /// result deletes the key. Returns the number of members stored.
    /// `big` is set as Redis 7.0 leaves its result: skiplist past the
    /// listpack limits, listpack otherwise.
    pub fn zset_store(
        &mut self,
        db: u8,
        key: &[u8],
        members: impl IntoIterator<Item = (Bytes, f64)>,
    ) -> Result<u64> {
        let members: Vec<(Bytes, f64)> = members.into_iter().collect();
        // A result replaces the old value in place (a fresh version), as
        // Redis's setKey overwrites: the key is not deleted and created
        // anew (no `new` event); an empty result deletes it.
        if members.is_empty() {
            self.delete_key(db, key)?;
            return Ok(0);
        }
        let mut coll = self.new_collection(ValueType::ZSet, Bytes::new());
        let limits = self.encoding_limits();
        coll.big = members.len() as u64 > limits.zset_max_listpack_entries
            || members
                .iter()
                .any(|(m, _)| m.len() as u64 > limits.zset_max_listpack_value);
        for (member, score) in &members {
            self.zset_write(db, key, &coll, member, None, *score);
        }
        coll.size = members.len() as u64;
        self.save_collection(db, key, &coll)?;
        Ok(coll.size)
    }
    /// Replaces whatever `key` holds by a sorted set built by inserting
    /// `members` (distinct) one by one in the given order, as ZRANGESTORE
    /// does: the set starts big when `start_big` (Redis sized it for more
    /// than the listpack limit), else it converts on the insertion that
    /// passes a limit, and the members inserted before keep no -0.
    /// Returns the number of members stored.
    pub fn zset_store_inserted(
        &mut self,
        db: u8,
        key: &[u8],
        members: impl IntoIterator<Item = (Bytes, f64)>,
        start_big: bool,
    ) -> Result<u64> {
        let mut members = members.into_iter().peekable();
        if members.peek().is_none() {
            self.delete_key(db, key)?;
            return Ok(0);
        }
        let mut coll = self.new_collection(ValueType::ZSet, Bytes::new());
        coll.big = start_big;
        for (member, score) in members {
            self.zset_insert(db, key, &mut coll, &member, score);
        }
        self.save_collection(db, key, &coll)?;
        Ok(coll.size)
    }
}

impl KeyspaceView<'_> {
    /// [`Txn::zset_scan_scores`] in the view's snapshot (streamed replies).
    pub fn zset_scan_scores(
        &mut self,
        key: &[u8],
        coll: &Collection,
        range: &ScoreRange,
        reverse: bool,
        mut visit: impl FnMut(&[u8], f64) -> bool,
    ) -> Result<()> {
        scan_scores(self, key, coll, range, reverse, &mut visit)
    }

    /// [`Txn::zset_scan_lex`] in the view's snapshot (streamed replies).
    pub fn zset_scan_lex(
        &mut self,
        key: &[u8],
        coll: &Collection,
        range: &LexRange,
        reverse: bool,
        mut visit: impl FnMut(&[u8], f64) -> bool,
    ) -> Result<()> {
        scan_lex(self, key, coll, range, reverse, &mut visit)
    }
}

/// A sorted set's by-score index as something to walk: a command's
/// transaction or a snapshot view. The walks below serve both.
trait ScoreIndex {
    /// Visits index entries (past the member prefix) in `(from, to)`.
    fn scan_index(
        &mut self,
        key: &[u8],
        coll: &Collection,
        from: Bound<&[u8]>,
        to: Bound<&[u8]>,
        reverse: bool,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()>;
}

/// A transaction's view of the index of one logical database.
struct TxnIndex<'t, 'e> {
    txn: &'t mut Txn<'e>,
    db: u8,
}

impl ScoreIndex for TxnIndex<'_, '_> {
    fn scan_index(
        &mut self,
        key: &[u8],
        coll: &Collection,
        from: Bound<&[u8]>,
        to: Bound<&[u8]>,
        reverse: bool,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.txn
            .scan_members(Cf::ZScore, self.db, key, coll, from, to, reverse, |m, v| {
                visit(m, v)
            })
    }
}

impl ScoreIndex for KeyspaceView<'_> {
    fn scan_index(
        &mut self,
        key: &[u8],
        coll: &Collection,
        from: Bound<&[u8]>,
        to: Bound<&[u8]>,
        reverse: bool,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.scan_members(Cf::ZScore, key, coll, from, to, reverse, |m, v| visit(m, v))
    }
}

/// Walks index entries in `(from, to)` as (member, score) pairs.
fn scan_decoded(
    index: &mut dyn ScoreIndex,
    key: &[u8],
    coll: &Collection,
    (from, to): (Bound<&[u8]>, Bound<&[u8]>),
    reverse: bool,
    visit: &mut dyn FnMut(&[u8], f64) -> bool,
) -> Result<()> {
    let mut corrupt = false;
    index.scan_index(
        key,
        coll,
        from,
        to,
        reverse,
        &mut |entry, value| match decode_index(entry, value) {
            Some((score, member)) => visit(member, score),
            None => {
                corrupt = true;
                false
            }
        },
    )?;
    if corrupt {
        return Err(StorageError::Corrupt("zset index"));
    }
    Ok(())
}

fn scan_scores(
    index: &mut dyn ScoreIndex,
    key: &[u8],
    coll: &Collection,
    range: &ScoreRange,
    reverse: bool,
    visit: &mut dyn FnMut(&[u8], f64) -> bool,
) -> Result<()> {
    let Some((start, end)) = index_bounds(range) else {
        return Ok(());
    };
    let to = match &end {
        Some(end) => Bound::Excluded(end.as_slice()),
        None => Bound::Unbounded,
    };
    let bounds = (Bound::Included(start.as_slice()), to);
    scan_decoded(index, key, coll, bounds, reverse, visit)
}

/// The member with the lowest (or, `last`, the highest) score.
fn edge(
    index: &mut dyn ScoreIndex,
    key: &[u8],
    coll: &Collection,
    last: bool,
) -> Result<Option<(Bytes, f64)>> {
    let mut found = None;
    let all = (Bound::Unbounded, Bound::Unbounded);
    scan_decoded(index, key, coll, all, last, &mut |member, score| {
        found = Some((Bytes::copy_from_slice(member), score));
        false
    })?;
    Ok(found)
}

fn scan_lex(
    index: &mut dyn ScoreIndex,
    key: &[u8],
    coll: &Collection,
    range: &LexRange,
    reverse: bool,
    visit: &mut dyn FnMut(&[u8], f64) -> bool,
) -> Result<()> {
    if range.is_empty() {
        return Ok(());
    }
    // Redis's zzlIsInLexRange/zslIsInLexRange: nothing unless the last
    // member is at or above min and the first at or below max.
    let (Some((first_member, first_score)), Some((last_member, last_score))) = (
        edge(index, key, coll, false)?,
        edge(index, key, coll, true)?,
    ) else {
        return Ok(());
    };
    if !range.above_min(&last_member) || !range.below_max(&first_member) {
        return Ok(());
    }
    let mut seek: Option<Vec<u8>> = None;
    let start_bound = if reverse { &range.max } else { &range.min };
    if coll.big {
        if let LexBound::Inclusive(m) | LexBound::Exclusive(m) = start_bound {
            let score = if reverse { last_score } else { first_score };
            seek = Some(index_entry(score, m));
        }
    }
    let bounds = match (&seek, reverse) {
        (None, _) => (Bound::Unbounded, Bound::Unbounded),
        (Some(s), false) => (Bound::Included(s.as_slice()), Bound::Unbounded),
        // Every entry up to and including score·m (and m's extensions
        // are above m, so excluding score·m·0 onwards is exact).
        (Some(s), true) => (Bound::Unbounded, Bound::Included(s.as_slice())),
    };
    let mut started = false;
    scan_decoded(index, key, coll, bounds, reverse, &mut |member, score| {
        if !started {
            let reached = if reverse {
                range.below_max(member)
            } else {
                range.above_min(member)
            };
            if !reached {
                return true;
            }
            started = true;
        }
        let inside = if reverse {
            range.above_min(member)
        } else {
            range.below_max(member)
        };
        inside && visit(member, score)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_engine::open;
    use crate::ReadMode;

    fn write<T>(engine: &crate::Engine, f: impl FnOnce(&mut Txn<'_>) -> Result<T>) -> T {
        let mut txn = engine.txn(ReadMode::Blocking);
        let out = f(&mut txn).expect("txn body");
        for ticket in txn.commit().expect("commit") {
            ticket.wait_blocking().expect("durable");
        }
        out
    }

    fn zset(t: &mut Txn<'_>) -> Result<Collection> {
        t.collection_or_new(0, b"z", ValueType::ZSet, Bytes::new())
    }

    fn walk(t: &mut Txn<'_>, range: &ScoreRange, reverse: bool) -> Vec<(String, f64)> {
        let coll = zset(t).expect("zset");
        let mut out = Vec::new();
        t.zset_scan_scores(0, b"z", &coll, range, reverse, |m, s| {
            out.push((String::from_utf8_lossy(m).into_owned(), s));
            true
        })
        .expect("walk");
        out
    }

    #[test]
    fn the_index_orders_like_redis() {
        let scores = [
            f64::NEG_INFINITY,
            -1e300,
            -1.5,
            -f64::MIN_POSITIVE,
            0.0,
            f64::MIN_POSITIVE,
            1.0,
            2.5,
            1e300,
            f64::INFINITY,
        ];
        for pair in scores.windows(2) {
            assert!(
                score_order_bytes(pair[0]) < score_order_bytes(pair[1]),
                "{pair:?}"
            );
        }
        for s in scores {
            assert_eq!(
                score_from_order(u64::from_be_bytes(score_order_bytes(s))),
                s
            );
        }
        assert_eq!(score_order_bytes(-0.0), score_order_bytes(0.0));
    }

    #[test]
    fn add_update_range_and_remove() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        write(&engine, |t| {
            let mut coll = zset(t)?;
            for (m, s) in [("c", 3.0), ("a", 1.0), ("b", 1.0), ("d", f64::INFINITY)] {
                let out = t.zset_add(0, b"z", &mut coll, m.as_bytes(), s, ZAddFlags::default())?;
                assert_eq!(out, ZAddOutcome::Added(s));
            }
            let gt = ZAddFlags {
                gt: true,
                ..ZAddFlags::default()
            };
            assert_eq!(
                t.zset_add(0, b"z", &mut coll, b"c", 2.0, gt)?,
                ZAddOutcome::Skipped
            );
            let incr = ZAddFlags {
                incr: true,
                ..ZAddFlags::default()
            };
            assert_eq!(
                t.zset_add(0, b"z", &mut coll, b"c", 4.0, incr)?,
                ZAddOutcome::Updated(7.0)
            );
            assert_eq!(
                t.zset_add(0, b"z", &mut coll, b"d", f64::NEG_INFINITY, incr)?,
                ZAddOutcome::NotANumber
            );
            t.save_collection(0, b"z", &coll)
        });
        let mut txn = engine.txn(ReadMode::Blocking);
        let all = walk(&mut txn, &ScoreRange::ALL, false);
        let names: Vec<&str> = all.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
        let mid = ScoreRange {
            min: 1.0,
            min_exclusive: true,
            max: 7.0,
            max_exclusive: false,
        };
        assert_eq!(walk(&mut txn, &mid, true), vec![("c".to_string(), 7.0)]);
        let coll = zset(&mut txn).unwrap();
        assert_eq!(coll.size, 4);
        assert_eq!(
            txn.zset_rank(0, b"z", &coll, b"c", false, 1).unwrap(),
            RankLookup::Found(2, 7.0)
        );
        assert_eq!(
            txn.zset_rank(0, b"z", &coll, b"b", true, 10).unwrap(),
            RankLookup::Found(2, 1.0)
        );
        drop(txn);
        write(&engine, |t| {
            let mut coll = zset(t)?;
            assert!(t.zset_remove(0, b"z", &mut coll, b"a")?);
            assert!(!t.zset_remove(0, b"z", &mut coll, b"a")?);
            t.save_collection(0, b"z", &coll)
        });
        let mut txn = engine.txn(ReadMode::Blocking);
        assert_eq!(walk(&mut txn, &ScoreRange::ALL, false).len(), 3);
    }

    #[test]
    fn negative_zero_is_kept_only_when_big_and_ties_with_zero() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        write(&engine, |t| {
            let mut coll = zset(t)?;
            t.zset_put(0, b"z", &mut coll, b"a", -0.0)?;
            assert!(t
                .zset_score(0, b"z", &coll, b"a")?
                .unwrap()
                .is_sign_positive());
            coll.big = true;
            t.zset_put(0, b"z", &mut coll, b"c", -0.0)?;
            t.zset_put(0, b"z", &mut coll, b"b", 0.0)?;
            t.save_collection(0, b"z", &coll)
        });
        let mut txn = engine.txn(ReadMode::Blocking);
        let all = walk(&mut txn, &ScoreRange::ALL, false);
        let shown: Vec<(&str, bool)> = all
            .iter()
            .map(|(m, s)| (m.as_str(), s.is_sign_negative()))
            .collect();
        assert_eq!(shown, [("a", false), ("b", false), ("c", true)]);
    }

    /// ZRANGESTORE's rule: members inserted while the set is compact lose
    /// -0; the member that passes a limit converts it and keeps its -0.
    #[test]
    fn stores_follow_redis_conversions() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        let long = Bytes::from(vec![b'x'; 65]);
        let members = vec![
            (Bytes::from_static(b"a"), -0.0),
            (long.clone(), -0.0),
            (Bytes::from_static(b"b"), -0.0),
        ];
        write(&engine, |t| {
            t.zset_store_inserted(0, b"z", members.clone(), false)
        });
        let mut txn = engine.txn(ReadMode::Blocking);
        let coll = zset(&mut txn).unwrap();
        assert!(coll.big);
        let negative = |t: &mut Txn<'_>, m: &[u8]| {
            t.zset_score(0, b"z", &coll, m)
                .unwrap()
                .unwrap()
                .is_sign_negative()
        };
        assert!(!negative(&mut txn, b"a"));
        assert!(negative(&mut txn, &long));
        assert!(negative(&mut txn, b"b"));
        drop(txn);
        // A whole-set store decides once: big, so every -0 stays.
        write(&engine, |t| t.zset_store(0, b"z", members.clone()));
        let mut txn = engine.txn(ReadMode::Blocking);
        let coll = zset(&mut txn).unwrap();
        assert!(coll.big && coll.size == 3);
        assert!(txn
            .zset_score(0, b"z", &coll, b"a")
            .unwrap()
            .unwrap()
            .is_sign_negative());
        drop(txn);
        // Empty: the key goes away.
        write(&engine, |t| t.zset_store(0, b"z", Vec::new()));
        let mut txn = engine.txn(ReadMode::Blocking);
        assert!(txn.meta(0, b"z").unwrap().is_none());
    }

    /// Deleting a sorted set drops only its meta record; compaction then
    /// drops its members and its index entries.
    #[test]
    fn compaction_reclaims_members_and_index_of_a_deleted_set() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        write(&engine, |t| {
            let members = (0..3000).map(|i| (Bytes::from(format!("m{i}")), i as f64));
            t.zset_store(0, b"z", members)
        });
        let entries = |engine: &crate::Engine| {
            let inner = engine.inner();
            inner.db.flush_cf(inner.cf(Cf::Meta).unwrap()).unwrap();
            [Cf::Data, Cf::ZScore].map(|cf| {
                let handle = inner.cf(cf).unwrap();
                inner.db.flush_cf(handle).unwrap();
                inner
                    .db
                    .compact_range_cf(handle, None::<&[u8]>, None::<&[u8]>);
                inner
                    .db
                    .iterator_cf(handle, rocksdb::IteratorMode::Start)
                    .count()
            })
        };
        assert_eq!(entries(&engine), [3000, 3000]);
        write(&engine, |t| t.delete_key(0, b"z"));
        assert_eq!(entries(&engine), [0, 0]);
        engine.shutdown();
    }

    #[test]
    fn lex_ranges_and_store() {
        let dir = tempfile::tempdir().unwrap();
        let engine = open(dir.path());
        let members: Vec<(Bytes, f64)> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|m| (Bytes::copy_from_slice(m.as_bytes()), 0.0))
            .collect();
        write(&engine, |t| t.zset_store(0, b"z", members.clone()));
        let mut txn = engine.txn(ReadMode::Blocking);
        let range = LexRange {
            min: LexBound::Exclusive(Bytes::from_static(b"a")),
            max: LexBound::Inclusive(Bytes::from_static(b"d")),
        };
        for big in [false, true] {
            let mut coll = zset(&mut txn).unwrap();
            coll.big = big;
            for reverse in [false, true] {
                let mut seen = Vec::new();
                txn.zset_scan_lex(0, b"z", &coll, &range, reverse, |m, _| {
                    seen.push(m.to_vec());
                    true
                })
                .unwrap();
                let mut want = vec![b"b".to_vec(), b"c".to_vec(), b"d".to_vec()];
                if reverse {
                    want.reverse();
                }
                assert_eq!(seen, want, "big {big} reverse {reverse}");
            }
        }
        assert_eq!(zset(&mut txn).unwrap().size, 5);
    }
}
