//! The compaction filter of the member column families (`data`, `zscore`,
//! `stream`): it drops members that no key owns any more, so deleting a big
//! string or a collection costs one meta delete, not one delete per member.
//!
//! A member `db · slot · key · version · member` is garbage only when the
//! key's meta record is gone or carries another version: versions are never
//! reused, so neither state can turn back into "owned by `version`". An
//! *expired* meta still owns its members: until active or lazy expiry
//! deletes the meta through the normal write path, a command in flight may
//! keep the key (a PERSIST queued behind the expiry check), so dropping its
//! members would lose data. A meta that is pending in the overlay (written
//! by a command but not yet in RocksDB) also owns its members.
//!
//! RocksDB makes one filter per compaction through the factory; a filter
//! runs on one thread and sees keys in order, so it remembers the last
//! key's owners: consecutive members of one key cost one meta lookup.

use rocksdb::compaction_filter::{CompactionFilter, Decision};
use rocksdb::compaction_filter_factory::{CompactionFilterContext, CompactionFilterFactory};
use rocksdb::ReadOptions;
use std::ffi::CStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use crate::keys;
use crate::meta::Meta;
use crate::state::Inner;
use crate::Cf;

const NAME: &CStr = c"firn-orphan-members";

/// While one lives, the compaction filter drops no member (see
/// [`OrphanMemberFilter::filter`]): held by open views, whose snapshots the filter does
/// not respect, and by copies staged in several batches (`copy_members`),
/// whose members no meta names until the copy commits.
pub(crate) struct PinMembers(Arc<AtomicUsize>);

impl PinMembers {
    pub(crate) fn new(inner: &Inner) -> Self {
        inner.members_pinned.fetch_add(1, Ordering::SeqCst);
        PinMembers(inner.members_pinned.clone())
    }
}

impl Drop for PinMembers {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Makes one [`OrphanMemberFilter`] per compaction.
pub(crate) struct OrphanMemberFilterFactory {
    /// Set once the engine is open; compactions that run before (while
    /// RocksDB opens) keep everything.
    engine: Arc<OnceLock<Weak<Inner>>>,
    /// Open keyspace views (see [`OrphanMemberFilter::filter`]).
    members_pinned: Arc<AtomicUsize>,
}

impl OrphanMemberFilterFactory {
    pub(crate) fn new(
        engine: Arc<OnceLock<Weak<Inner>>>,
        members_pinned: Arc<AtomicUsize>,
    ) -> Self {
        OrphanMemberFilterFactory {
            engine,
            members_pinned,
        }
    }
}

impl CompactionFilterFactory for OrphanMemberFilterFactory {
    type Filter = OrphanMemberFilter;

    fn create(&mut self, _context: CompactionFilterContext) -> OrphanMemberFilter {
        let mut read_options = ReadOptions::default();
        // A compaction walks every key once: its meta lookups must not push
        // the clients' working set out of the block cache.
        read_options.fill_cache(false);
        OrphanMemberFilter {
            engine: self.engine.get().cloned(),
            members_pinned: self.members_pinned.clone(),
            read_options,
            last: None,
        }
    }

    fn name(&self) -> &CStr {
        NAME
    }
}

/// What one lookup learnt about a user key.
struct Owners {
    db: u8,
    user_key: Vec<u8>,
    /// The versions whose members are live: the stored meta's and that of
    /// a pending write of the meta.
    versions: [Option<u64>; 2],
    /// The meta could not be read or decoded: keep every member.
    unsure: bool,
}

impl Owners {
    fn decision(&self, version: u64) -> Decision {
        if self.unsure || self.versions.contains(&Some(version)) {
            Decision::Keep
        } else {
            Decision::Remove
        }
    }
}

pub(crate) struct OrphanMemberFilter {
    /// Weak, and upgraded per lookup: a compaction must never hold the
    /// engine alive, or dropping the engine would wait on itself.
    engine: Option<Weak<Inner>>,
    read_options: ReadOptions,
    last: Option<Owners>,
    members_pinned: Arc<AtomicUsize>,
}

impl OrphanMemberFilter {
    fn lookup(&self, db: u8, user_key: &[u8]) -> Owners {
        let mut owners = Owners {
            db,
            user_key: user_key.to_vec(),
            versions: [None, None],
            unsure: true,
        };
        let Some(inner) = self.engine.as_ref().and_then(Weak::upgrade) else {
            return owners;
        };
        let Some(meta_cf) = inner.cf(Cf::Meta) else {
            return owners;
        };
        let meta_key = keys::meta_key(db, user_key);
        // The overlay first: a pending write that lands between the two
        // reads is then found in RocksDB.
        if let crate::overlay::Lookup::Pending(crate::overlay::Pending {
            value: Some(raw), ..
        }) = inner.overlay.get(Cf::Meta, &meta_key)
        {
            match Meta::decode(&raw) {
                Ok(meta) => owners.versions[0] = meta.version(),
                Err(_) => return owners,
            }
        }
        match inner
            .db
            .get_pinned_cf_opt(meta_cf, &meta_key, &self.read_options)
        {
            Ok(None) => owners.unsure = false,
            Ok(Some(raw)) => {
                if let Ok(meta) = Meta::decode(&bytes::Bytes::copy_from_slice(&raw)) {
                    owners.versions[1] = meta.version();
                    owners.unsure = false;
                }
            }
            Err(_) => {}
        }
        owners
    }
}

impl CompactionFilter for OrphanMemberFilter {
    fn filter(&mut self, _level: u32, key: &[u8], _value: &[u8]) -> Decision {
        let Some((db, user_key, version)) = keys::parse_member_key(key) else {
            return Decision::Keep;
        };
        // A compaction filter runs even on entries a RocksDB snapshot still
        // shows: while a view is open (KEYS, a streamed reply walking a
        // collection twice, once to count and once to send), its members
        // must stay, or the second pass sends fewer items than the first
        // promised. A decision made before the view opened read a meta
        // state the view also sees (a gone or replaced meta never
        // returns: versions are not reused).
        if self.members_pinned.load(Ordering::SeqCst) > 0 {
            return Decision::Keep;
        }
        if let Some(last) = &self.last {
            if last.db == db && last.user_key == user_key {
                return last.decision(version);
            }
        }
        let owners = self.lookup(db, user_key);
        let decision = owners.decision(version);
        self.last = Some(owners);
        decision
    }

    fn name(&self) -> &CStr {
        NAME
    }
}
