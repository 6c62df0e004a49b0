//! What the sorted-set operations (zset.rs) take and return: score and
//! lex ranges with Redis's inclusive and exclusive ends, ZADD's flags and
//! what it did, and a member's rank. Plain values, below the transaction
//! whose methods (in zset.rs) name them.

use bytes::Bytes;

/// A score interval with Redis's `(` exclusive ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreRange {
    pub min: f64,
    pub min_exclusive: bool,
    pub max: f64,
    pub max_exclusive: bool,
}

impl ScoreRange {
    /// Every score.
    pub const ALL: ScoreRange = ScoreRange {
        min: f64::NEG_INFINITY,
        min_exclusive: false,
        max: f64::INFINITY,
        max_exclusive: false,
    };

    pub fn contains(&self, score: f64) -> bool {
        let above = if self.min_exclusive {
            score > self.min
        } else {
            score >= self.min
        };
        let below = if self.max_exclusive {
            score < self.max
        } else {
            score <= self.max
        };
        above && below
    }
}

/// One end of a lex range: `-`, `+`, `[member` or `(member`.
#[derive(Clone, Debug, PartialEq)]
pub enum LexBound {
    /// `-`: below every member.
    Min,
    /// `+`: above every member.
    Max,
    Inclusive(Bytes),
    Exclusive(Bytes),
}

#[derive(Clone, Debug, PartialEq)]
pub struct LexRange {
    pub min: LexBound,
    pub max: LexBound,
}

impl LexRange {
    /// Redis's zslLexValueGteMin.
    pub fn above_min(&self, member: &[u8]) -> bool {
        match &self.min {
            LexBound::Min => true,
            LexBound::Max => false,
            LexBound::Inclusive(m) => member >= m.as_ref(),
            LexBound::Exclusive(m) => member > m.as_ref(),
        }
    }

    /// Redis's zslLexValueLteMax.
    pub fn below_max(&self, member: &[u8]) -> bool {
        match &self.max {
            LexBound::Min => false,
            LexBound::Max => true,
            LexBound::Inclusive(m) => member <= m.as_ref(),
            LexBound::Exclusive(m) => member < m.as_ref(),
        }
    }

    /// Redis's zslIsInLexRange test for ranges that are always empty.
    pub(crate) fn is_empty(&self) -> bool {
        let key = |b: &LexBound| -> (u8, Bytes) {
            match b {
                LexBound::Min => (0, Bytes::new()),
                LexBound::Max => (2, Bytes::new()),
                LexBound::Inclusive(m) | LexBound::Exclusive(m) => (1, m.clone()),
            }
        };
        let (lo, hi) = (key(&self.min), key(&self.max));
        let exclusive = matches!(self.min, LexBound::Exclusive(_))
            || matches!(self.max, LexBound::Exclusive(_));
        lo > hi || (lo == hi && exclusive)
    }
}

/// ZADD's options for one member.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ZAddFlags {
    /// Only add new members.
    pub nx: bool,
    /// Only update existing members.
    pub xx: bool,
    /// Update only to a greater score.
    pub gt: bool,
    /// Update only to a lower score.
    pub lt: bool,
    /// The score is an increment of the current one (0 if new).
    pub incr: bool,
}

/// What [`Txn::zset_add`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ZAddOutcome {
    /// A new member with this score.
    Added(f64),
    /// An existing member whose score changed to this one.
    Updated(f64),
    /// An existing member, left at this score (the new score was equal).
    Unchanged(f64),
    /// Nothing done: NX on an existing member, XX on a missing one, or a
    /// GT/LT condition that failed.
    Skipped,
    /// The increment made the score NaN (inf + -inf); nothing changed.
    NotANumber,
}

/// A member's rank as [`Txn::zset_rank`] finds it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RankLookup {
    Missing,
    /// 0-based rank in the requested direction, and the member's score.
    Found(u64, f64),
    /// The member is further than the walk limit from both ends.
    TooFar,
}
