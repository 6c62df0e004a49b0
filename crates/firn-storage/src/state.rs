//! What the engine, its transactions and its threads share ([`Inner`]):
//! RocksDB, the overlay, the hot tier, the key locks, the key counts, the
//! database map, the writers' queues and the WATCH registry, and the one
//! path every write takes into them, [`Inner::submit`].
//!
//! Invariants kept here:
//! - every write reaches RocksDB through a group-commit writer (writer.rs):
//!   submit numbers batches in `seq` order under the queue lock and hands
//!   one key's batches to one writer, and batches that span writers to all
//!   of them; each batch's ticket resolves after it is written;
//! - per-database key counts live in the `System` CF as merge operands
//!   (summed there, see system.rs) written in the same batch as the
//!   keys they count, so DBSIZE is exact after a crash ([`Counts`]);
//! - collection versions come from a persisted monotonic counter
//!   (`next_version`) and are never reused, so a member whose version
//!   differs from its key's stored metadata is garbage that the compaction
//!   filter may drop (member_filter.rs).
//!
//! It depends on the leaves and on what it holds (batch, dbmap,
//! commit_queue, watch), never on the modules that use it.

use parking_lot::Mutex;
use rocksdb::{Cache, ColumnFamily, WriteBufferManager, DB};
use std::sync::atomic::{
    AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
use std::sync::Arc;

use crate::batch::CommitBatch;
use crate::collcache::CollCache;
use crate::commit_queue::{CommitQueue, Completions};
use crate::dbmap::DbMap;
use crate::error::{Result, StorageError};
use crate::hotcache::HotCache;
use crate::keys::MAX_DATABASES;
use crate::locks::KeyLocks;
use crate::overlay::Overlay;
use crate::signals::{Signals, SubmitListener, Submitted};
use crate::ticket::Ticket;
use crate::watch::{TicketOnDrop, WatchRegistry};
use crate::Cf;

/// When the write-ahead log is fsynced (Redis's `appendfsync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SyncPolicy {
    /// fsync before every reply (group commit shares one fsync per batch).
    Always,
    /// WAL written before the reply, fsynced once a second.
    EverySec,
    /// WAL written before the reply; the OS decides when to flush.
    No,
}

#[derive(Default)]
pub struct EngineStats {
    pub commits: AtomicU64,
    pub commit_groups: AtomicU64,
    /// Member reads the decoded-collection cache answered (a part of
    /// `point_reads`, see [`EngineStats::point_reads`]).
    pub collection_member_reads: AtomicU64,
    /// Point reads RocksDB answered from memory (memtables, block cache).
    pub memory_reads: AtomicU64,
    /// Point reads that loaded at least one block from the SST files.
    pub disk_reads: AtomicU64,
    /// Entries that range scans handed to their visitors.
    pub scanned_entries: AtomicU64,
    pub incomplete_reads: AtomicU64,
    pub expired_keys: AtomicU64,
    pub write_errors: AtomicU64,
}

impl EngineStats {
    /// One point read RocksDB answered, from the files or from memory.
    pub(crate) fn count_read(&self, from_disk: bool) {
        let counter = if from_disk {
            &self.disk_reads
        } else {
            &self.memory_reads
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Every point read that found its answer: RocksDB's (from memory or
    /// from the files) and the collection cache's member reads. Cost tests
    /// count a command's reads with it (INFO storage `point_reads`).
    pub fn point_reads(&self) -> u64 {
        [
            &self.memory_reads,
            &self.disk_reads,
            &self.collection_member_reads,
        ]
        .iter()
        .map(|c| c.load(Ordering::Relaxed))
        .sum()
    }
}

/// Per physical database, `(keys, keys with an expiry)` twice: as RocksDB
/// has them (`committed`, applied by the writer), and as every submitted
/// batch leaves them (`visible`, what DBSIZE and INFO keyspace answer: a
/// write is visible before it is durable, its count too).
pub(crate) struct Counts {
    keys: Box<[AtomicI64]>,
    expires: Box<[AtomicI64]>,
    visible_keys: Box<[AtomicI64]>,
    visible_expires: Box<[AtomicI64]>,
}

fn atomics() -> Box<[AtomicI64]> {
    (0..MAX_DATABASES).map(|_| AtomicI64::new(0)).collect()
}

impl Counts {
    pub(crate) fn new() -> Self {
        Counts {
            keys: atomics(),
            expires: atomics(),
            visible_keys: atomics(),
            visible_expires: atomics(),
        }
    }
    /// What RocksDB has.
    pub(crate) fn get(&self, db: u8) -> (i64, i64) {
        (
            self.keys[db as usize].load(Ordering::Acquire),
            self.expires[db as usize].load(Ordering::Acquire),
        )
    }
    /// What every submitted batch leaves.
    pub(crate) fn visible(&self, db: u8) -> (i64, i64) {
        (
            self.visible_keys[db as usize].load(Ordering::Acquire),
            self.visible_expires[db as usize].load(Ordering::Acquire),
        )
    }
    /// Loaded at open: both views agree.
    pub(crate) fn load(&self, db: u8, keys: i64, expires: i64) {
        self.set(db, keys, expires);
        self.visible_keys[db as usize].store(keys, Ordering::Release);
        self.visible_expires[db as usize].store(expires, Ordering::Release);
    }
    pub(crate) fn set(&self, db: u8, keys: i64, expires: i64) {
        self.keys[db as usize].store(keys, Ordering::Release);
        self.expires[db as usize].store(expires, Ordering::Release);
    }
    pub(crate) fn add(&self, db: u8, keys: i64, expires: i64) {
        self.keys[db as usize].fetch_add(keys, Ordering::AcqRel);
        self.expires[db as usize].fetch_add(expires, Ordering::AcqRel);
    }
    /// A batch was submitted (under the submit lock, in `seq` order): its
    /// resets, then its deltas, as the writer will apply them.
    fn submitted(&self, batch: &CommitBatch) {
        for &db in &batch.count_resets {
            self.visible_keys[db as usize].store(0, Ordering::Release);
            self.visible_expires[db as usize].store(0, Ordering::Release);
        }
        for &(db, keys, expires) in &batch.count_deltas {
            self.visible_keys[db as usize].fetch_add(keys, Ordering::AcqRel);
            self.visible_expires[db as usize].fetch_add(expires, Ordering::AcqRel);
        }
    }
    /// A batch was given up on: its deltas are taken back. A reset cannot
    /// be taken back exactly; the committed count stands in for it (the
    /// WAL error that failed it fails every batch after it too).
    pub(crate) fn given_up(&self, batch: &CommitBatch) {
        for &(db, keys, expires) in &batch.count_deltas {
            self.visible_keys[db as usize].fetch_sub(keys, Ordering::AcqRel);
            self.visible_expires[db as usize].fetch_sub(expires, Ordering::AcqRel);
        }
        for &db in &batch.count_resets {
            let (keys, expires) = self.get(db);
            self.visible_keys[db as usize].store(keys, Ordering::Release);
            self.visible_expires[db as usize].store(expires, Ordering::Release);
        }
    }
}

/// What the engine, its transactions and its threads share.
pub(crate) struct Inner {
    pub(crate) db: DB,
    /// The database's options, kept for their statistics (a copy shares
    /// RocksDB's ticker counters, figures.rs).
    pub(crate) statistics: rocksdb::Options,
    pub(crate) overlay: Overlay,
    pub(crate) hot: HotCache,
    /// The hot tier's share for small collections, decoded.
    pub(crate) coll: CollCache,
    pub(crate) locks: KeyLocks,
    pub(crate) next_version: AtomicU64,
    pub(crate) counts: Counts,
    /// The [`SyncPolicy`], as its `u8`.
    pub(crate) sync: AtomicU8,
    pub(crate) block_cache: Mutex<Cache>,
    /// The `facts` column family's own block cache, carved out of the
    /// block cache's share (`split_block_cache`), and its capacity: the facts of
    /// every key a write may meet stay here while values come and go
    /// through the other one.
    pub(crate) facts_cache: Mutex<(Cache, usize)>,
    pub(crate) write_buffers: Mutex<WriteBufferManager>,
    pub(crate) stats: EngineStats,
    pub(crate) databases: usize,
    /// The logical→physical database map (dbmap.rs).
    pub(crate) db_map: DbMap,
    /// The writers' queues; its lock is the submit lock (`seq` order).
    pub(crate) queue: Mutex<CommitQueue>,
    /// Completes committed batches in `seq` order across writers: the
    /// change stream, the event sink, the tickets (commit_queue.rs).
    pub(crate) completions: Completions,
    /// The server's side of submit (signals.rs): tracking's
    /// invalidations, blocked clients' wake-ups.
    pub(crate) submit_listener: std::sync::OnceLock<Arc<dyn SubmitListener>>,
    /// Holders of `Engine::listen_submits`: while it is 0, transactions
    /// record no signals and submit calls no listener (one atomic load).
    pub(crate) submit_listeners: AtomicUsize,
    /// Notified after every commit group (the overlay shrank).
    pub(crate) drained: tokio::sync::Notify,
    /// The WAL error that refuses writes (MISCONF), if any, and whether
    /// there is one (a load per commit instead of a lock).
    pub(crate) write_error: Mutex<Option<String>>,
    pub(crate) has_write_error: AtomicBool,
    /// Stops the WAL-sync thread.
    pub(crate) shutting_down: AtomicBool,
    /// Testing aid: memory-only reads of committed data are `Incomplete`.
    pub(crate) force_cold_reads: AtomicBool,
    /// Until then (Unix ms) no key is deleted for having expired: CLIENT
    /// PAUSE holds writes, and an expiry is one. Expired keys still read
    /// as missing.
    pub(crate) expiry_paused_until_ms: AtomicU64,
    /// The compact encodings' thresholds (limits.rs).
    pub(crate) encoding_limits: crate::limits::LimitCell,
    /// WATCHed keys and their clients (watch.rs).
    pub(crate) watches: WatchRegistry,
    /// The `notify-keyspace-events` mask (`notify_class` bits); 0 = off,
    /// and then recording an event costs this one load.
    pub(crate) notify_flags: AtomicU32,
    /// Live `PinMembers` (open [`crate::KeyspaceView`]s, staged copies):
    /// while there is any, the compaction filter drops no member
    /// (member_filter.rs).
    pub(crate) members_pinned: Arc<AtomicUsize>,
}

impl Inner {
    pub(crate) fn sync_policy(&self) -> SyncPolicy {
        match self.sync.load(Ordering::Relaxed) {
            0 => SyncPolicy::Always,
            1 => SyncPolicy::EverySec,
            _ => SyncPolicy::No,
        }
    }

    pub(crate) fn set_sync_policy(&self, policy: SyncPolicy) {
        self.sync.store(policy as u8, Ordering::Relaxed);
    }

    pub(crate) fn cf(&self, cf: Cf) -> Option<&ColumnFamily> {
        self.db.cf_handle(cf.name())
    }

    /// A RocksDB integer property that each column family has for itself
    /// (memtables, table readers, SST files, pending compaction), summed.
    /// Not for the shared block cache, which every column family would
    /// report whole.
    pub(crate) fn property_sum(&self, name: &str) -> u64 {
        Cf::ALL
            .iter()
            .filter_map(|&cf| self.cf(cf))
            .filter_map(|h| self.db.property_int_value_cf(h, name).ok().flatten())
            .sum()
    }

    pub(crate) fn set_write_error(&self, error: Option<String>) {
        if error.is_some() {
            self.stats.write_errors.fetch_add(1, Ordering::Relaxed);
        }
        if self.has_write_error.load(Ordering::Acquire) || error.is_some() {
            self.has_write_error
                .store(error.is_some(), Ordering::Release);
            *self.write_error.lock() = error;
        }
    }

    /// Whether a transaction beginning now records what its writes signal
    /// (someone WATCHes, or the server listens to submits).
    pub(crate) fn signals_wanted(&self) -> bool {
        self.watches.is_active() || self.submit_listeners.load(Ordering::Acquire) > 0
    }

    pub(crate) fn write_error_text(&self) -> Option<String> {
        if self.has_write_error.load(Ordering::Acquire) {
            self.write_error.lock().clone()
        } else {
            None
        }
    }

    /// Queues a batch: from here on its writes are visible to every
    /// reader (overlay, fences, the swapped map), and the stripes' write
    /// counters move so that optimistic pool runs notice. Returns the
    /// batch's ticket.
    pub(crate) fn submit(&self, mut batch: CommitBatch) -> Result<Ticket> {
        // WATCH: the writer still holds the keys' locks (one load when
        // nobody watches).
        let watched_by = TicketOnDrop(Default::default());
        // A batch that ran while nobody listened (a lock-free pool run)
        // signals every key it wrote, in key order.
        if batch.signals.is_none() && self.signals_wanted() {
            let keys = batch.changed_keys();
            batch.signals = Some(Signals {
                modified: keys.clone(),
                ready: keys,
            });
        }
        if self.watches.is_active() {
            self.watches
                .touch_batch(&self.db_map.live_map(), &batch, &watched_by.0);
        }
        self.announce_submit(&batch);
        let mut queue = self.queue.lock();
        batch.seq = queue.next_seq()?;
        let ticket = Ticket::new(batch.seq);
        let _ = watched_by.0.set(Some(ticket.clone()));
        batch.ticket = Some(ticket.clone());
        self.overlay.insert_all(batch.seq, &ticket, &batch.writes);
        self.counts.submitted(&batch);
        for &pdb in &batch.flushes {
            self.overlay.add_fence(pdb, batch.seq, &ticket);
        }
        // The map RocksDB gets is computed by the writer when the swap
        // commits (writer.rs), from the committed map.
        self.db_map
            .submit_swaps(batch.seq, &batch.swaps, Some(&ticket));
        // After the overlay has the writes: a pool run that read the old
        // value must see its stamp change.
        self.locks.bump(&batch.stripes);
        if !batch.flushes.is_empty() || !batch.swaps.is_empty() {
            self.locks.bump_epoch();
        }
        if !queue.send(batch) {
            // A writer thread is gone: complete the batch as failed, so that
            // later batches are not held behind its sequence number.
            self.completions.fail(ticket.clone());
            return Err(StorageError::WriteFailed("writer thread stopped".into()));
        }
        Ok(ticket)
    }

    /// Hands `batch`'s signals to the server's listener, while anyone
    /// listens (`Engine::listen_submits`); the submitter holds its keys'
    /// locks.
    fn announce_submit(&self, batch: &CommitBatch) {
        if self.submit_listeners.load(Ordering::Acquire) == 0 {
            return;
        }
        let (Some(listener), Some(signals)) = (self.submit_listener.get(), batch.signals.as_ref())
        else {
            return;
        };
        let mut whole_dbs = batch.flushes.clone();
        for swap in &batch.swaps {
            whole_dbs.extend([swap.a, swap.b]);
        }
        listener.submitted(&Submitted {
            client: batch.client,
            signals,
            whole_dbs: &whole_dbs,
            stripes: &batch.stripes,
            flushed: !batch.flushes.is_empty() || !batch.count_resets.is_empty(),
        });
    }
}
