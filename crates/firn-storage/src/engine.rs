//! The engine's public face: [`Engine`] opens RocksDB (options, the
//! records loaded from the System CF, the writer and WAL-sync threads) and
//! offers what the server does with the whole engine: transactions, key
//! locks, subscriptions, checkpoints, counters, caches and settings. It
//! sits on top of the crate: the shared state is `Inner` (state.rs), which
//! every other module uses without going through here.
//!
//! RocksDB's memory is the block cache's share: data blocks, index and
//! filter blocks and (through the write-buffer manager) the memtables are
//! all charged to one block cache, but for the `facts` column family's
//! blocks, which have a cache of their own carved out of the same share
//! (`split_block_cache`), so the two capacities bound RocksDB's share of
//! `maxmemory`.

use bytes::Bytes;
use parking_lot::Mutex;
use rocksdb::checkpoint::Checkpoint;
use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompressionType,
    Options, WriteBufferManager, DB,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::changes::ChangeReceiver;
use crate::collcache::CollCache;
use crate::commit_queue::{CommitQueue, EventSink, ReplaySink};
use crate::dbmap::DbMap;
use crate::error::{Result, StorageError};
use crate::hotcache::HotCache;
use crate::keys::{self, MAX_DATABASES};
use crate::locks::{normalise, GrowingGuard, KeyGuard, KeyLocks, LockMode};
use crate::member_filter::OrphanMemberFilterFactory;
use crate::memory::MemoryUsage;
use crate::overlay::Overlay;
use crate::state::{Counts, EngineStats, Inner, SyncPolicy};
use crate::system::{server_record_key, system_merge, SystemRecords, SERVER_RECORD_PREFIX};
use crate::ticket::Ticket;
use crate::txn::{ReadMode, Txn, TxnParts};
use crate::view::KeyspaceView;
use crate::watch::{WatchedState, Watcher};
use crate::writer;
use crate::Cf;

/// The hot tier's share for meta records; the rest (a quarter) holds
/// small collections decoded (`collcache.rs`).
fn hot_meta_share(hot_cache_bytes: u64) -> u64 {
    hot_cache_bytes - hot_cache_bytes / 4
}

#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Directory of the RocksDB instance.
    pub path: PathBuf,
    pub databases: usize,
    /// Capacity of RocksDB's block cache, which also carries the memtables.
    pub block_cache_bytes: usize,
    /// Memtable memory of all column families together (charged to the
    /// block cache); beyond it the largest memtable is flushed, and writes
    /// stall if flushes fall behind.
    pub write_buffer_bytes: usize,
    /// Firn's own hot tier of meta records (0 disables it).
    pub hot_cache_bytes: u64,
    pub sync: SyncPolicy,
    /// Group-commit writer threads (at least 1).
    pub writers: usize,
}

/// A cheap handle to the storage engine.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Engine {
    pub fn open(config: &EngineConfig) -> Result<Engine> {
        std::fs::create_dir_all(&config.path).map_err(|e| {
            StorageError::Rocks(format!("cannot create {}: {e}", config.path.display()))
        })?;
        let (cache_bytes, facts_bytes) = split_block_cache(config.block_cache_bytes);
        let cache = Cache::new_lru_cache(cache_bytes);
        let facts_cache = Cache::new_lru_cache(facts_bytes);
        // No stall (`allow_stall` false): the manager flushes memtables
        // when they pass its limit, on the next write. A stalled write
        // triggers no further flush, so a limit lowered below what the
        // memtables hold (CONFIG SET maxmemory 1) stalled the writer for
        // ever after its one flush picked a near-empty column family.
        let write_buffers = WriteBufferManager::new_write_buffer_manager_with_cache(
            write_buffer_limit(config.write_buffer_bytes),
            false,
            cache.clone(),
        );
        let weak: Arc<OnceLock<Weak<Inner>>> = Arc::new(OnceLock::new());
        let members_pinned = Arc::new(AtomicUsize::new(0));

        let mut db_opts = Options::default();
        db_opts.create_if_missing(true);
        db_opts.create_missing_column_families(true);
        db_opts.set_max_open_files(-1);
        db_opts.set_max_background_jobs(4);
        db_opts.set_bytes_per_sync(1 << 20);
        db_opts.set_keep_log_file_num(4);
        db_opts.set_write_buffer_manager(&write_buffers);
        // Each input file of a compaction gets a readahead buffer of this
        // size, outside the block cache: RocksDB's 2 MB default made a
        // compaction over a dozen files cost tens of MB beyond the budget.
        db_opts.set_compaction_readahead_size(256 << 10);
        // Tickers only (per-core counters, no histograms or timers): the
        // block cache's hits, bytes flushed and compacted, stall time
        // (figures.rs).
        db_opts.enable_statistics();
        db_opts.set_statistics_level(rocksdb::statistics::StatsLevel::ExceptHistogramOrTimers);
        let descriptors: Vec<ColumnFamilyDescriptor> = Cf::ALL
            .iter()
            .map(|&cf| {
                let cache = if cf == Cf::Facts {
                    &facts_cache
                } else {
                    &cache
                };
                ColumnFamilyDescriptor::new(
                    cf.name(),
                    cf_options(cf, config, cache, &weak, &members_pinned),
                )
            })
            .collect();
        let db = DB::open_cf_descriptors(&db_opts, &config.path, descriptors)?;
        // A database from before the facts column family: built now.
        crate::facts::ensure_complete(&db)?;

        let records = SystemRecords::read(&db)?;
        let counts = Counts::new();
        for (pdb, &(keys, expires)) in records.counts.iter().enumerate() {
            counts.load(pdb as u8, keys, expires);
        }

        let (senders, receivers): (Vec<_>, Vec<_>) = (0..config.writers.max(1))
            .map(|_| crossbeam_channel::unbounded())
            .unzip();
        let inner = Arc::new(Inner {
            db,
            overlay: Overlay::default(),
            hot: HotCache::new(hot_meta_share(config.hot_cache_bytes)),
            coll: CollCache::new(config.hot_cache_bytes - hot_meta_share(config.hot_cache_bytes)),
            locks: KeyLocks::default(),
            next_version: AtomicU64::new(records.version),
            counts,
            sync: AtomicU8::new(config.sync as u8),
            block_cache: Mutex::new(cache.clone()),
            facts_cache: Mutex::new((facts_cache, facts_bytes)),
            write_buffers: Mutex::new(write_buffers),
            stats: EngineStats::default(),
            databases: config.databases.clamp(1, MAX_DATABASES),
            db_map: DbMap::new(records.db_map),
            queue: Mutex::new(CommitQueue::new(senders)),
            completions: Default::default(),
            submit_listener: std::sync::OnceLock::new(),
            submit_listeners: AtomicUsize::new(0),
            drained: tokio::sync::Notify::new(),
            write_error: Mutex::new(None),
            has_write_error: AtomicBool::new(false),
            shutting_down: AtomicBool::new(false),
            force_cold_reads: AtomicBool::new(false),
            expiry_paused_until_ms: AtomicU64::new(0),
            encoding_limits: Default::default(),
            watches: Default::default(),
            notify_flags: AtomicU32::new(0),
            members_pinned,
            statistics: db_opts.clone(),
        });
        let _ = weak.set(Arc::downgrade(&inner));
        // Range deletions (FLUSHDB/FLUSHALL) in a memtable are re-sorted by
        // the first read after each new one, at a cost that grows with
        // their number: past this many, the memtable is flushed and they
        // go to an SST file, where they are sorted once. Without it, a
        // FLUSHALL loop made every GET on a network thread slower and
        // slower (bench/isolation.sh).
        for cf in [Cf::Meta, Cf::Facts, Cf::Data, Cf::ZScore, Cf::Stream] {
            if let Some(handle) = inner.cf(cf) {
                inner.db.set_options_cf(
                    handle,
                    &[("memtable_max_range_deletions", MEMTABLE_MAX_RANGE_DELETIONS)],
                )?;
            }
        }

        let mut threads = Vec::new();
        for rx in receivers {
            let writer_inner = inner.clone();
            threads.push(
                std::thread::Builder::new()
                    .name("firn-writer".into())
                    .spawn(move || writer::run(writer_inner, rx))
                    .map_err(|e| StorageError::Rocks(format!("cannot start writer thread: {e}")))?,
            );
        }
        let sync_inner = inner.clone();
        threads.push(
            std::thread::Builder::new()
                .name("firn-wal-sync".into())
                .spawn(move || {
                    // With everysec, fsync the WAL once a second; wake every
                    // 100 ms to notice shutdown and policy changes.
                    let mut ticks: u64 = 0;
                    while !sync_inner.shutting_down.load(Ordering::Acquire) {
                        std::thread::sleep(Duration::from_millis(100));
                        ticks += 1;
                        if ticks.is_multiple_of(10)
                            && sync_inner.sync_policy() == SyncPolicy::EverySec
                        {
                            if let Err(e) = sync_inner.db.flush_wal(true) {
                                // As Redis does when its AOF fsync fails:
                                // refuse writes (MISCONF) until one succeeds.
                                tracing::error!(error = %e, "WAL fsync failed");
                                sync_inner.set_write_error(Some(format!(
                                    "fsync of the write-ahead log failed: {e}"
                                )));
                            }
                        }
                    }
                })
                .map_err(|e| StorageError::Rocks(format!("cannot start sync thread: {e}")))?,
        );
        Ok(Engine {
            inner,
            threads: Arc::new(Mutex::new(threads)),
        })
    }

    pub(crate) fn inner(&self) -> &Inner {
        &self.inner
    }

    /// Testing aid (`debug-cold-reads`): treat every committed value as
    /// not in memory, so every command that reads one takes the cold path.
    /// Sets the `notify-keyspace-events` mask events are recorded under.
    pub fn set_notify_flags(&self, flags: u32) {
        self.inner.notify_flags.store(flags, Ordering::Relaxed);
    }

    /// Installs the function the writer calls with each committed batch's
    /// keyspace events, on the writer thread, before the batch's clients
    /// hear it is done. It must only do CPU work (no blocking, no waiting
    /// on a ticket).
    pub fn set_event_sink(&self, sink: Option<EventSink>) {
        *self.inner.completions.event_sink.write() = sink;
    }

    /// Sets (or clears) what receives every committed batch's replay
    /// record and every checkpoint cut, in commit order, on a writer
    /// thread, before the batch's clients hear it is done. CPU work only,
    /// like the event sink.
    pub fn set_replay_sink(&self, sink: Option<ReplaySink>) {
        *self.inner.completions.replay_sink.write() = sink;
    }

    pub fn notify_flags(&self) -> u32 {
        self.inner.notify_flags.load(Ordering::Relaxed)
    }

    pub fn set_force_cold_reads(&self, on: bool) {
        self.inner.force_cold_reads.store(on, Ordering::Relaxed);
    }

    /// No expired key is deleted (lazily or by the active cycle) before
    /// `until_ms`; 0 lifts it. CLIENT PAUSE holds expiries as writes, as
    /// Redis 7.0 does; the keys read as missing meanwhile.
    pub fn pause_expiry_until(&self, until_ms: u64) {
        self.inner
            .expiry_paused_until_ms
            .store(until_ms, Ordering::Relaxed);
    }

    /// The compact encodings' thresholds writes follow from now on
    /// (configuration; see limits.rs).
    pub fn set_encoding_limits(&self, limits: crate::EncodingLimits) {
        self.inner.encoding_limits.store(limits);
    }

    pub fn encoding_limits(&self) -> crate::EncodingLimits {
        self.inner.encoding_limits.load()
    }

    /// Changes when the WAL is fsynced (CONFIG SET appendfsync).
    pub fn set_sync_policy(&self, policy: SyncPolicy) {
        self.inner.set_sync_policy(policy);
    }

    /// Resizes the caches for a new memory budget (CONFIG SET maxmemory):
    /// block cache, memtable limit and hot tier take their new shares.
    /// Column families keep the memtable size they were opened with.
    pub fn set_cache_budget(
        &self,
        block_cache_bytes: usize,
        write_buffer_bytes: usize,
        hot_cache_bytes: u64,
    ) {
        let (cache_bytes, facts_bytes) = split_block_cache(block_cache_bytes);
        self.inner.block_cache.lock().set_capacity(cache_bytes);
        {
            let mut facts = self.inner.facts_cache.lock();
            facts.0.set_capacity(facts_bytes);
            facts.1 = facts_bytes;
        }
        self.inner
            .write_buffers
            .lock()
            .set_buffer_size(write_buffer_limit(write_buffer_bytes));
        self.inner.hot.set_capacity(hot_meta_share(hot_cache_bytes));
        self.inner
            .coll
            .set_capacity(hot_cache_bytes - hot_meta_share(hot_cache_bytes));
    }

    /// A transaction for one command execution that holds no key locks.
    pub fn txn(&self, mode: ReadMode) -> Txn<'_> {
        Txn::new(&self.inner, mode, crate::now_ms(), false)
    }

    /// A transaction run while the caller holds the locks of every key it
    /// touches; only such a transaction may fill the hot cache.
    pub fn txn_locked(&self, mode: ReadMode) -> Txn<'_> {
        Txn::new(&self.inner, mode, crate::now_ms(), true)
    }

    /// A locked, memory-only transaction for the engine's own work
    /// (expiry), exempt from the `debug-cold-reads` testing aid.
    pub(crate) fn maintenance_txn(&self) -> Txn<'_> {
        Txn::maintenance(&self.inner, crate::now_ms())
    }

    /// `(hits, misses, entries, bytes)` of the hot tier.
    pub fn hot_cache_stats(&self) -> (u64, u64, usize, u64) {
        let hot = &self.inner.hot;
        (
            hot.hits.load(Ordering::Relaxed),
            hot.misses.load(Ordering::Relaxed),
            hot.entries(),
            hot.used_bytes() + self.inner.coll.used_bytes(),
        )
    }

    /// Whether `key` of logical database `db` is in the hot tier.
    pub fn is_hot(&self, db: u8, key: &[u8]) -> bool {
        self.inner
            .hot
            .contains(&keys::meta_key(self.inner.db_map.physical(db), key))
    }

    pub fn databases(&self) -> usize {
        self.inner.databases
    }

    /// The sorted stripes of `(logical db, key)` pairs, as the current
    /// database map places them.
    pub fn stripes_of(&self, keys: &[(u8, &[u8])]) -> Vec<usize> {
        normalise(
            keys.iter()
                .map(|&(db, k)| keys::stripe_of_key(self.inner.db_map.physical(db), k))
                .collect(),
        )
    }

    /// Locks the keys of a command (logical databases), awaiting contended
    /// stripes. A SWAPDB that lands between finding the stripes and
    /// holding them moves the keys to other stripes: then it locks again.
    pub async fn lock_keys(&self, keys: &[(u8, &[u8])]) -> KeyGuard<'_> {
        self.request_keys(keys, LockMode::Exclusive).acquire().await
    }

    /// [`Engine::lock_keys`], shared: for a run that writes nothing (it may
    /// fill the hot tier, as an exclusive holder may). Its transaction
    /// must not be committed unless [`Txn::commits_nothing`].
    pub async fn lock_keys_shared(&self, keys: &[(u8, &[u8])]) -> KeyGuard<'_> {
        self.request_keys(keys, LockMode::Shared).acquire().await
    }

    /// Takes the place of a command's keys (logical databases) in their
    /// stripes' queues *now*, synchronously: a command that asks later for
    /// one of them is granted it after this one (locks.rs). Await
    /// [`KeysRequest::acquire`] for the guard.
    pub fn request_keys<'a, 'k>(
        &'a self,
        keys: &'k [(u8, &'k [u8])],
        mode: LockMode,
    ) -> KeysRequest<'a, 'k> {
        let epoch = self.inner.locks.epoch();
        let stripes = self.stripes_of(keys);
        let request = self.inner.locks.request(&stripes, mode);
        KeysRequest {
            engine: self,
            keys,
            mode,
            epoch,
            stripes,
            request,
        }
    }

    /// [`Engine::request_keys`], in a form any thread can await or wait
    /// for: a place taken where a command is read, for the thread that will
    /// run it (a script), or by a write for a blocked client it wakes.
    pub fn request_keys_owned(&self, keys: &[(u8, Bytes)], mode: LockMode) -> OwnedKeysRequest {
        let pairs: Vec<(u8, &[u8])> = keys.iter().map(|(db, k)| (*db, k.as_ref())).collect();
        let epoch = self.inner.locks.epoch();
        let stripes = self.stripes_of(&pairs);
        let request = self.inner.locks.request_owned(&stripes, mode);
        OwnedKeysRequest {
            engine: self.clone(),
            keys: keys.to_vec(),
            mode,
            epoch,
            stripes,
            request,
        }
    }

    /// An owned place for `keys` first in line behind their current holder
    /// (see [`KeyLocks::request_next_owned`]): the caller holds the stripes
    /// of `held` exclusively, and any other stripe of `keys` is taken at
    /// once if it is free; when one is not, at the back of the queues.
    pub fn request_keys_next(&self, keys: &[(u8, Bytes)], held: &[usize]) -> OwnedKeysRequest {
        let pairs: Vec<(u8, &[u8])> = keys.iter().map(|(db, k)| (*db, k.as_ref())).collect();
        let epoch = self.inner.locks.epoch();
        let stripes = self.stripes_of(&pairs);
        let next = self.inner.locks.request_next_owned(&stripes, held);
        let request = match next {
            Some(request) => request,
            None => self
                .inner
                .locks
                .request_owned(&stripes, LockMode::Exclusive),
        };
        OwnedKeysRequest {
            engine: self.clone(),
            keys: keys.to_vec(),
            mode: LockMode::Exclusive,
            epoch,
            stripes,
            request,
        }
    }

    /// Every key lock's place, taken now (see [`Engine::request_keys`]).
    /// [`Engine::request_all`] for a request that outlives the borrow (a
    /// script's all-locks run, placed as it is queued for the script
    /// thread).
    pub fn request_all_owned(&self) -> crate::locks::LockRequest<'static> {
        let all: Vec<usize> = (0..crate::locks::STRIPES).collect();
        self.inner.locks.request_owned(&all, LockMode::Exclusive)
    }

    pub fn request_all(&self) -> crate::locks::LockRequest<'_> {
        let all: Vec<usize> = (0..crate::locks::STRIPES).collect();
        self.inner.locks.request(&all, LockMode::Exclusive)
    }

    /// Locks the keys of a script's declared KEYS from a thread outside the
    /// runtime (the script thread), in a guard that may grow; see
    /// [`Engine::try_lock_more`]. Waits while contended: callers hold key
    /// locks only across CPU work, so the wait is short. Never call it on
    /// a network thread.
    pub fn lock_keys_growing(&self, keys: &[(u8, &[u8])]) -> GrowingGuard<'_> {
        loop {
            let epoch = self.inner.locks.epoch();
            let stripes = self.stripes_of(keys);
            let guard = self.inner.locks.lock_growing_blocking(&stripes);
            if self.inner.locks.epoch() == epoch || self.stripes_of(keys) == stripes {
                return guard;
            }
        }
    }

    /// Every key lock, from a thread outside the runtime.
    pub fn lock_all_growing(&self) -> GrowingGuard<'_> {
        self.inner.locks.lock_all_blocking()
    }

    /// Adds the locks of `keys` to `guard` without waiting. False when one
    /// is taken, or when a SWAPDB moved keys since `epoch` (from
    /// [`Engine::lock_epoch`]): the caller starts again with every lock.
    pub fn try_lock_more(
        &self,
        guard: &mut GrowingGuard<'_>,
        keys: &[(u8, &[u8])],
        epoch: u64,
    ) -> bool {
        if guard.holds_all() {
            return true;
        }
        guard.try_add(&self.stripes_of(keys)) && self.inner.locks.epoch() == epoch
    }

    /// The server's own records whose keys start with `prefix`, as
    /// committed to RocksDB (read at start-up; blocking).
    pub fn server_records(&self, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let Some(system) = self.inner.db.cf_handle(Cf::System.name()) else {
            return Ok(Vec::new());
        };
        let start = server_record_key(prefix);
        let mut out = Vec::new();
        let iter = self.inner.db.iterator_cf(
            system,
            rocksdb::IteratorMode::From(&start, rocksdb::Direction::Forward),
        );
        for item in iter {
            let (key, value) = item?;
            if !key.starts_with(&start) {
                break;
            }
            out.push((key[SERVER_RECORD_PREFIX.len()..].to_vec(), value.to_vec()));
        }
        Ok(out)
    }

    /// The lock epoch (bumped by flushes and swaps).
    pub fn lock_epoch(&self) -> u64 {
        self.inner.locks.epoch()
    }

    /// Every key lock: the caller runs alone among keyed commands.
    pub async fn lock_all(&self) -> KeyGuard<'_> {
        self.inner.locks.lock_all().await
    }

    /// Locks physical keys from a thread outside the runtime (expiry).
    pub(crate) fn lock_physical_blocking(&self, pdb: u8, key: &[u8]) -> KeyGuard<'_> {
        self.inner
            .locks
            .lock_blocking(&[keys::stripe_of_key(pdb, key)])
    }

    /// The write stamp of `stripes` (see locks.rs): compare it before and
    /// after a lock-free pool run to know whether its reads still hold.
    pub fn write_stamp(&self, stripes: &[usize]) -> crate::locks::WriteStamp {
        self.inner.locks.stamp(stripes)
    }

    /// Deletes keys a lock-free run found expired, each under its lock and
    /// only if its meta still carries the same expiry (as active expiry
    /// does). A meta that is no longer in memory is left to active expiry.
    /// Returns the tickets to wait for.
    pub async fn delete_expired(&self, expired: &[(u8, Bytes, u64)]) -> Vec<Ticket> {
        let mut tickets = Vec::new();
        for (pdb, key, at) in expired {
            let _guard = self
                .inner
                .locks
                .lock(&[keys::stripe_of_key(*pdb, key)])
                .await;
            let mut txn = self.maintenance_txn();
            match txn.raw_facts(*pdb, key) {
                Ok(Some(facts)) if facts.expire_at_ms == *at && facts.is_expired(txn.now_ms()) => {
                    txn.remove_meta_physical(*pdb, key, Some(&facts));
                    let db = self.inner.db_map.logical(*pdb);
                    txn.set_db(db);
                    txn.set_replay(vec![vec![Bytes::from_static(b"DEL"), key.clone()]]);
                    txn.notify(crate::notify_class::EXPIRED, "expired", db, key);
                    if let Ok(mut more) = txn.commit() {
                        // The pool run that found it is not committed.
                        self.inner
                            .stats
                            .expired_keys
                            .fetch_add(1, Ordering::Relaxed);
                        tickets.append(&mut more);
                    }
                }
                _ => {}
            }
        }
        tickets
    }

    /// Rebuilds a pool run's transaction to commit it under the locks.
    pub fn txn_from_parts(&self, parts: TxnParts) -> Txn<'_> {
        Txn::from_parts(&self.inner, ReadMode::MemoryOnly, parts)
    }

    /// WATCH: registers `watcher` on `key` of logical db `db` with what the
    /// caller read of it, under the key's lock, by the run of WATCH that
    /// commits (a discarded cold run registers nothing). Watching a key
    /// twice keeps the first registration, as in Redis.
    pub fn watch_key(&self, watcher: &Arc<Watcher>, db: u8, key: &[u8], state: WatchedState) {
        self.inner.watches.watch(watcher, db, key, state);
    }

    /// UNWATCH (and EXEC, DISCARD, disconnect): forgets every watched key.
    pub fn unwatch_all(&self, watcher: &Arc<Watcher>) {
        if watcher.watched() > 0 {
            self.inner.watches.unwatch_all(watcher);
        }
    }

    /// Whether an EXEC must fail: a watched key changed, or a key that was
    /// live when watched has expired since (Redis 7.0's isWatchedKeyExpired).
    /// Without a change the deadline seen at WATCH is still the key's.
    pub fn watch_failed(&self, watcher: &Arc<Watcher>, now_ms: u64) -> bool {
        self.inner.watches.failed(watcher, now_ms)
    }

    /// Opens a [`KeyspaceView`] of logical database `db` that contains
    /// every write submitted before the call. Blocks until those writes are
    /// committed: never call it on a network thread (see view.rs).
    pub fn keyspace_view(&self, db: u8) -> Result<KeyspaceView<'_>> {
        KeyspaceView::open(&self.inner, db)
    }

    /// Subscribes to the change stream (committed batches, in order).
    pub fn subscribe_changes(&self) -> ChangeReceiver {
        self.inner.completions.changes.subscribe()
    }

    /// Installs the server's side of submit (signals.rs): called for every
    /// batch submitted while [`Engine::listen_submits`] is held. Once only.
    pub fn set_submit_listener(&self, listener: Arc<dyn crate::SubmitListener>) {
        let _ = self.inner.submit_listener.set(listener);
    }

    /// While the result lives, transactions record what their writes
    /// signal and every submit reaches the listener; with none alive both
    /// cost one atomic load. Take it *before* whatever it is for begins
    /// (a client blocks, tracking turns on), under the keys' locks where
    /// there are any: a transaction that began earlier records nothing,
    /// and submit then signals every key it wrote.
    pub fn listen_submits(&self) -> SubmitListening {
        self.inner.submit_listeners.fetch_add(1, Ordering::AcqRel);
        SubmitListening {
            inner: self.inner.clone(),
        }
    }

    /// The replay records the WAL holds from RocksDB sequence `since` on,
    /// in commit order: `(rocksdb sequence, logical db, commands)`. Only
    /// the WAL files RocksDB still keeps are visible. Blocking.
    pub fn wal_records_since(&self, since: u64) -> Result<Vec<crate::changes::WalRecord>> {
        let meta_cf = self
            .inner
            .cf(Cf::Meta)
            .and_then(crate::changes::column_family_id)
            .ok_or(StorageError::Corrupt("missing column family"))?;
        let mut out = Vec::new();
        for item in self.inner.db.get_updates_since(since)? {
            let (seq, batch) = item?;
            let contents =
                crate::changes::batch_contents(batch.data()).map_err(StorageError::Corrupt)?;
            // A record's references name the meta records the same batch
            // puts (changes.rs `encode_log_record_with`).
            let mut meta_puts: std::collections::HashMap<&[u8], Vec<&[u8]>> =
                std::collections::HashMap::new();
            for &(cf, key, value) in &contents.puts {
                if cf == meta_cf {
                    meta_puts.entry(key).or_default().push(value);
                }
            }
            let resolve = |pdb: u8, key: &[u8], n: u32| {
                let record = *meta_puts
                    .get(&keys::meta_key(pdb, key)[..])?
                    .get(n as usize)?;
                crate::meta::inline_string_body(record).map(Bytes::copy_from_slice)
            };
            for blob in contents.log_data {
                let (db, commands) = crate::changes::decode_log_record_with(blob, resolve)
                    .ok_or(StorageError::Corrupt("malformed replay record in the WAL"))?;
                out.push((seq, db, commands));
            }
        }
        Ok(out)
    }

    /// Bytes of writes submitted but not yet committed.
    pub fn pending_bytes(&self) -> u64 {
        self.inner.overlay.bytes()
    }

    /// Waits until at most `limit_bytes` of writes are pending: connections
    /// call it before reading more requests (backpressure).
    ///
    /// It never waits for ever: if the count stays above the bound while no
    /// batch is in flight, nothing will ever take it back (a bookkeeping
    /// bug), so it says so in the log and lets the connection go on.
    pub async fn wait_for_room(&self, limit_bytes: u64) {
        loop {
            let drained = self.inner.drained.notified();
            let pending = self.inner.overlay.bytes();
            if pending <= limit_bytes {
                return;
            }
            if self.batches_in_flight() == 0 {
                tracing::error!(
                    pending_bytes = pending,
                    limit_bytes,
                    "pending-write bytes counted with no batch in flight; not waiting for them"
                );
                return;
            }
            tokio::select! {
                _ = drained => {}
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        }
    }

    /// Batches submitted and not yet completed (written or given up on).
    pub fn batches_in_flight(&self) -> u64 {
        let submitted = self.inner.queue.lock().submitted();
        submitted.saturating_sub(self.inner.completions.completed())
    }

    /// `(keys, keys with an expiry)` of logical database `db`.
    pub fn key_count(&self, db: u8) -> (u64, u64) {
        let (keys, expires) = self.inner.counts.visible(self.inner.db_map.physical(db));
        (keys.max(0) as u64, expires.max(0) as u64)
    }

    /// The WAL error that currently refuses writes, if any.
    pub fn write_error(&self) -> Option<String> {
        self.inner.write_error_text()
    }

    pub fn stats(&self) -> &EngineStats {
        &self.inner.stats
    }

    pub fn pending_writes(&self) -> usize {
        self.inner.overlay.len()
    }

    /// A database-wide RocksDB integer property (running compactions,
    /// background errors), read once rather than per column family.
    pub fn property(&self, name: &str) -> u64 {
        self.inner
            .db
            .property_int_value(name)
            .ok()
            .flatten()
            .unwrap_or(0)
    }

    /// A RocksDB integer property summed over the column families.
    pub fn property_sum(&self, name: &str) -> u64 {
        self.inner.property_sum(name)
    }

    /// Reads answered by each tier since start (figures.rs).
    pub fn read_tiers(&self) -> crate::figures::ReadTiers {
        crate::figures::read_tiers(&self.inner)
    }

    /// RocksDB's figures: stalls, compaction debt, levels, write
    /// amplification, block-cache hits (figures.rs). Reads properties and
    /// file metadata: call it off the network threads.
    pub fn rocks_figures(&self) -> crate::figures::RocksFigures {
        crate::figures::rocks_figures(&self.inner)
    }

    /// What the engine's memory holds, each part counted once (memory.rs).
    pub fn memory_usage(&self) -> MemoryUsage {
        MemoryUsage::of(&self.inner)
    }

    /// Writes a RocksDB checkpoint (hard-linked SSTs + manifest) to `dest`,
    /// replacing an older one. Blocking: call from a background thread.
    pub fn checkpoint(&self, dest: &Path) -> Result<()> {
        let tmp = dest.with_extension("tmp");
        let _ = std::fs::remove_dir_all(&tmp);
        let checkpoint = Checkpoint::new(&self.inner.db)?;
        checkpoint.create_checkpoint(&tmp)?;
        let _ = std::fs::remove_dir_all(dest);
        std::fs::rename(&tmp, dest)
            .map_err(|e| StorageError::Rocks(format!("cannot rename checkpoint: {e}")))?;
        Ok(())
    }

    /// A checkpoint at a cut of the commit order: it holds every batch
    /// submitted before the cut and none after, because every writer is
    /// stopped at the cut while RocksDB links the files. Returns the cut's
    /// sequence number; the replay sink sees `Replayed::Cut` there, between
    /// the records the checkpoint holds and those it does not. The
    /// memtables are flushed first, with the writers running, so that the
    /// stop lasts only for what was written meanwhile. `dest` must not
    /// exist. Blocking: call from a background thread.
    pub fn checkpoint_cut(&self, dest: &Path) -> Result<u64> {
        let inner = &self.inner;
        let mut flush = rocksdb::FlushOptions::default();
        flush.set_wait(true);
        for cf in Cf::ALL {
            if let Some(handle) = inner.cf(cf) {
                inner.db.flush_cf_opt(handle, &flush)?;
            }
        }
        let job = Arc::new(crate::batch::CheckpointJob {
            dest: dest.to_path_buf(),
            outcome: Mutex::new(None),
        });
        let batch = crate::batch::CommitBatch {
            checkpoint: Some(job.clone()),
            ..Default::default()
        };
        let ticket = inner.submit(batch)?;
        ticket.wait_blocking()?;
        let outcome = job.outcome.lock().take();
        match outcome {
            Some(Ok(())) => Ok(ticket.seq()),
            Some(Err(e)) => Err(StorageError::Rocks(format!("checkpoint failed: {e}"))),
            None => Err(StorageError::Rocks("checkpoint was not taken".into())),
        }
    }

    /// A restart of the engine in place (DEBUG RELOAD): waits until every
    /// batch submitted so far is written, syncs the WAL, flushes every
    /// column family's memtable to SST files, and empties the hot tier and
    /// the collection cache, so that later reads come from the files. The
    /// data is unchanged. Blocking: call from a background thread.
    pub fn reload(&self) -> Result<()> {
        self.reload_with_progress(|_, _| {})
    }

    /// [`Engine::reload`], telling `flushed(done, total)` after each
    /// column family's memtable is flushed (the slow part), out of every
    /// column family.
    pub fn reload_with_progress(&self, mut flushed: impl FnMut(u64, u64)) -> Result<()> {
        let inner = &self.inner;
        self.wait_for_submitted()?;
        inner.db.flush_wal(true)?;
        let total = Cf::ALL.len() as u64;
        flushed(0, total);
        for (done, cf) in Cf::ALL.into_iter().enumerate() {
            if let Some(handle) = inner.cf(cf) {
                inner.db.flush_cf(handle)?;
            }
            flushed(done as u64 + 1, total);
        }
        inner.hot.clear();
        inner.coll.clear();
        Ok(())
    }

    /// Waits until every batch submitted before the call is written (or
    /// given up on), so that the overlay holds none of them. Fails at once
    /// while writes are failing: those batches may never complete.
    /// Blocking.
    pub(crate) fn wait_for_submitted(&self) -> Result<()> {
        let inner = &self.inner;
        let submitted = inner.queue.lock().submitted();
        while inner.completions.completed() < submitted {
            if inner.has_write_error.load(Ordering::Acquire) {
                let why = inner.write_error_text().unwrap_or_default();
                return Err(StorageError::WriteFailed(why));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    /// Stops the writer after it has committed everything queued, and syncs
    /// the WAL. Idempotent.
    pub fn shutdown(&self) {
        self.inner.shutting_down.store(true, Ordering::Release);
        self.inner.queue.lock().close();
        let threads: Vec<JoinHandle<()>> = std::mem::take(&mut *self.threads.lock());
        for t in threads {
            let _ = t.join();
        }
        if let Err(e) = self.inner.db.flush_wal(true) {
            tracing::error!(error = %e, "final WAL sync failed");
        }
    }
}

const MIN_BLOCK_CACHE_BYTES: usize = 8 << 20;

/// The `facts` column family's cache: a quarter of the block cache's
/// share, at least 4 MiB (1.5M keys' facts are about 30 MB of blocks).
const MIN_FACTS_CACHE_BYTES: usize = 4 << 20;

/// `(block cache, facts cache)` capacities out of the block cache's share.
fn split_block_cache(block_cache_bytes: usize) -> (usize, usize) {
    let facts = (block_cache_bytes / 4).max(MIN_FACTS_CACHE_BYTES);
    let rest = block_cache_bytes.saturating_sub(facts);
    (rest.max(MIN_BLOCK_CACHE_BYTES), facts)
}

/// See `memtable_max_range_deletions` in `Engine::open`.
const MEMTABLE_MAX_RANGE_DELETIONS: &str = "32";

fn write_buffer_limit(write_buffer_bytes: usize) -> usize {
    write_buffer_bytes.max(MIN_WRITE_BUFFER_BYTES)
}

/// Each memtable allocates its memory in blocks of this size, and the
/// write-buffer manager counts the blocks. RocksDB's default block is an
/// eighth of the memtable's size (8 MB for a 64 MB memtable), more than a
/// small budget (CONFIG SET maxmemory lowered at run time) leaves for all
/// the column families together. Small blocks keep what the empty
/// memtables hold under [`MIN_WRITE_BUFFER_BYTES`] whatever their sizes.
const ARENA_BLOCK_BYTES: usize = 256 << 10;

/// The write-buffer manager's smallest limit: well above every column
/// family's first arena block, active and being flushed.
const MIN_WRITE_BUFFER_BYTES: usize = 8 << 20;

/// What decides how a column family's SST files are written and read:
/// the table format (blocks, index, filters, the block cache) and the
/// compression, and the System CF's merge operator. Also what the SST
/// files of a loaded checkpoint are written with, and what its reader
/// opens it with (checkpoint_load.rs), so they match the live ones.
pub(crate) fn file_options(cf: Cf, cache: &Cache) -> Options {
    let mut opts = Options::default();
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(cache);
    table.set_bloom_filter(10.0, false);
    // Facts are a dozen bytes each: a 4 KiB block holds a hundred of
    // them. `meta` keeps 16 KiB blocks: measured with 4 KiB ones
    // (bench/README.md, "Writes that read no value"), its index grew
    // fourfold and cold reads got slower, not faster.
    table.set_block_size(if cf == Cf::Facts { 4 << 10 } else { 16 << 10 });
    // Index and filter blocks live in the block cache, so they are bounded
    // by it however large the dataset grows. Partitioned, only the small
    // top level of each file stays pinned (with L0's, which every read
    // consults); the partitions come and go like data blocks.
    table.set_cache_index_and_filter_blocks(true);
    table.set_cache_index_and_filter_blocks_with_high_priority(true);
    table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    table.set_partition_filters(true);
    table.set_pin_top_level_index_and_filter(true);
    table.set_pin_l0_filter_and_index_blocks_in_cache(true);
    opts.set_block_based_table_factory(&table);
    opts.set_compression_type(DBCompressionType::Lz4);
    // The facts are read on the write path: LZ4 at every level (each
    // block read from disk is decompressed on the way into the cache).
    opts.set_bottommost_compression_type(if cf == Cf::Facts {
        DBCompressionType::Lz4
    } else {
        DBCompressionType::Zstd
    });
    if cf == Cf::System {
        opts.set_merge_operator_associative("firn-system", system_merge);
    }
    opts
}

fn cf_options(
    cf: Cf,
    config: &EngineConfig,
    cache: &Cache,
    weak: &Arc<OnceLock<Weak<Inner>>>,
    members_pinned: &Arc<AtomicUsize>,
) -> Options {
    let mut opts = file_options(cf, cache);
    opts.set_level_zero_slowdown_writes_trigger(20);
    opts.set_level_zero_stop_writes_trigger(40);
    // Strings and collection headers go to `meta`, big values and members
    // to `data`: they get half the memtable budget each; the write-buffer
    // manager flushes early when they are full together.
    let total = write_buffer_limit(config.write_buffer_bytes);
    let write_buffer = match cf {
        Cf::Meta | Cf::Data => total / 2,
        _ => (total / 8).max(1 << 20),
    };
    opts.set_write_buffer_size(write_buffer);
    opts.set_arena_block_size(ARENA_BLOCK_BYTES);
    if matches!(cf, Cf::Data | Cf::ZScore | Cf::Stream) {
        opts.set_compaction_filter_factory(OrphanMemberFilterFactory::new(
            weak.clone(),
            members_pinned.clone(),
        ));
    }
    opts
}

/// See [`Engine::listen_submits`]; dropping it stops listening.
pub struct SubmitListening {
    inner: Arc<Inner>,
}

impl Drop for SubmitListening {
    fn drop(&mut self) {
        self.inner.submit_listeners.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A command's place in its keys' lock queues (see
/// [`Engine::request_keys`]).
pub struct KeysRequest<'a, 'k> {
    engine: &'a Engine,
    keys: &'k [(u8, &'k [u8])],
    mode: LockMode,
    /// The lock epoch when the stripes were found.
    epoch: u64,
    stripes: Vec<usize>,
    request: crate::locks::LockRequest<'a>,
}

impl<'a> KeysRequest<'a, '_> {
    /// Awaits the stripes. A SWAPDB submitted between finding them and
    /// holding them may have moved the keys to other stripes: then the
    /// keys are requested again, at the back of the queues.
    pub async fn acquire(self) -> KeyGuard<'a> {
        let KeysRequest {
            engine,
            keys,
            mode,
            mut epoch,
            mut stripes,
            mut request,
        } = self;
        loop {
            let guard = request.await;
            let locks = &engine.inner.locks;
            if locks.epoch() == epoch || engine.stripes_of(keys) == stripes {
                return guard;
            }
            drop(guard);
            epoch = locks.epoch();
            stripes = engine.stripes_of(keys);
            request = locks.request(&stripes, mode);
        }
    }
}

/// [`KeysRequest`] that any thread can hold, await or wait for (see
/// [`Engine::request_keys_owned`]).
pub struct OwnedKeysRequest {
    engine: Engine,
    keys: Vec<(u8, Bytes)>,
    mode: LockMode,
    epoch: u64,
    stripes: Vec<usize>,
    request: crate::locks::LockRequest<'static>,
}

impl OwnedKeysRequest {
    /// Whether this is a place for `keys` (the same pairs, in order).
    pub fn is_for(&self, keys: &[(u8, &[u8])]) -> bool {
        self.keys.len() == keys.len()
            && self
                .keys
                .iter()
                .zip(keys)
                .all(|((db, k), (db2, k2))| db == db2 && k[..] == **k2)
    }

    fn moved(&self) -> Option<Vec<usize>> {
        let locks = &self.engine.inner.locks;
        if locks.epoch() == self.epoch {
            return None;
        }
        let pairs: Vec<(u8, &[u8])> = self.keys.iter().map(|(db, k)| (*db, k.as_ref())).collect();
        let stripes = self.engine.stripes_of(&pairs);
        (stripes != self.stripes).then_some(stripes)
    }

    /// Awaits the stripes (again at the back of the queues if a SWAPDB
    /// moved the keys meanwhile, as [`KeysRequest::acquire`]).
    pub async fn acquire(mut self) -> KeyGuard<'static> {
        loop {
            let guard = (&mut self.request).await;
            match self.moved() {
                None => return guard,
                Some(stripes) => {
                    drop(guard);
                    self.epoch = self.engine.inner.locks.epoch();
                    self.request = self.engine.inner.locks.request_owned(&stripes, self.mode);
                    self.stripes = stripes;
                }
            }
        }
    }

    /// Parks the calling thread until the stripes are held in this place,
    /// or `None` when a SWAPDB moved the keys meanwhile: the place this
    /// request had is gone, and waiting for one at the back of the queues
    /// could wait behind a request the caller must run before (the script
    /// thread's later jobs). Never call it on a network thread.
    pub fn wait_blocking_in_place(self) -> Option<KeyGuard<'static>> {
        let guard = self.request.wait_blocking();
        let locks = &self.engine.inner.locks;
        let pairs: Vec<(u8, &[u8])> = self.keys.iter().map(|(db, k)| (*db, k.as_ref())).collect();
        (locks.epoch() == self.epoch || self.engine.stripes_of(&pairs) == self.stripes)
            .then_some(guard)
    }

    /// Parks the calling thread until the stripes are held. Never call it
    /// on a network thread.
    pub fn wait_blocking(self) -> KeyGuard<'static> {
        let OwnedKeysRequest {
            engine,
            keys,
            mode,
            mut epoch,
            mut stripes,
            mut request,
        } = self;
        let pairs: Vec<(u8, &[u8])> = keys.iter().map(|(db, k)| (*db, k.as_ref())).collect();
        loop {
            let guard = request.wait_blocking();
            let locks = &engine.inner.locks;
            if locks.epoch() == epoch || engine.stripes_of(&pairs) == stripes {
                return guard;
            }
            drop(guard);
            epoch = locks.epoch();
            stripes = engine.stripes_of(&pairs);
            request = locks.request_owned(&stripes, mode);
        }
    }
}
