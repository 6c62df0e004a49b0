//! One command's view of the database and its queued writes.
//!
//! Reads look, in order, at this command's own writes, the pending-write
//! overlay, and RocksDB. In `MemoryOnly` mode RocksDB may answer only from
//! the memtable and block cache; anything else is `Incomplete`, and the
//! caller re-runs the command where blocking reads are allowed. Writes are
//! buffered here and reach RocksDB only through [`Txn::commit`], so an
//! abandoned or failed execution leaves no trace.
//!
//! Meta writes go through `write_meta`/`remove_meta`, which keep the key
//! counters and the expire index exact.
//!
//! Besides its writes, a transaction carries its *effects*: the replay form
//! of its command(s) (set by the server; a lazy expiry adds a DEL), the
//! changes its handlers counted (`add_dirty`), and, derived at commit, the
//! keys it changed. A read that returned another
//! command's pending write records that batch's ticket: the reply must not
//! leave before that write is durable.

use bytes::Bytes;
use rocksdb::{ReadOptions, ReadTier};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use crate::batch::{CommitBatch, Presence, Swap, SwapCheck};
use crate::changes::{notify_class, Event};
use crate::error::{Result, StorageError};
use crate::keys::{self, expire_key, meta_key, MAX_DATABASES};
use crate::member_filter::PinMembers;
use crate::meta::{Facts, Meta, ValueType};
use crate::overlay::{overlay_key, pdb_of_raw, Lookup};
use crate::signals::{SignalMode, Signals};
use crate::state::Inner;
use crate::ticket::Ticket;
use crate::Cf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadMode {
    /// Memtable and block cache only: safe on a network thread.
    MemoryOnly,
    /// May read SST files from disk: I/O pool and background threads only.
    Blocking,
}

/// What a scan callback wants next.
pub(crate) enum ScanStep {
    Continue,
    Stop,
}

pub struct Txn<'e> {
    pub(crate) inner: &'e Inner,
    mode: ReadMode,
    /// The caller holds the locks of every key this transaction touches.
    locked: bool,
    /// Engine maintenance (expiry) ignores the `debug-cold-reads` aid.
    maintenance: bool,
    /// The last scan merged pending (overlay) or own writes.
    pub(crate) scan_saw_writes: bool,
    /// A missing key found by `meta` is a `keymiss` event (a read-only
    /// command's lookup, as Redis's lookupKeyRead).
    read_lookups: bool,
    /// What the transaction read and produced; detachable (see TxnParts).
    st: TxnParts,
    /// The last meta record read from outside the transaction, by raw key:
    /// a write reads its key's meta twice (the command's lookup, then
    /// `write_meta`'s), and the second read answers from here. Own writes
    /// and flushes are consulted before it, and nothing else can change a
    /// meta record this transaction holds the lock of (an unlocked pool
    /// run is validated by its keys' write stamps). The third field says
    /// whether the record is whole: `raw_facts` leaves only its header
    /// there (an absent record is absent either way).
    meta_memo: Option<(Vec<u8>, Option<Bytes>, bool)>,
}

impl TxnParts {
    /// Expired keys the run deleted lazily: `(physical db, key, expire_at_ms)`.
    pub fn expired_keys(&self) -> &[(u8, Bytes, u64)] {
        &self.effects.expired
    }

    /// The tickets of other clients' pending writes the run read: a reply
    /// that shows them waits for them.
    pub fn pending_reads(&self) -> &[Ticket] {
        &self.effects.depends
    }

    /// Whether committing it would write nothing (see [`Txn::commits_nothing`]).
    pub fn commits_nothing(&self) -> bool {
        let effects = &self.effects;
        self.writes.is_empty()
            && self.range_deletes.is_empty()
            && effects.swaps.is_empty()
            && effects.events.is_empty()
            && !effects.empty_flush
    }
}

/// A transaction's writes and effects at one point (see `Txn::savepoint`).
pub struct Savepoint {
    signals: Option<(usize, usize)>,
    writes: BTreeMap<Vec<u8>, Option<Bytes>>,
    range_deletes: Vec<(Cf, Vec<u8>, Vec<u8>)>,
    count_deltas: Vec<(u8, i64, i64)>,
    count_resets: Vec<u8>,
    db_map: Option<Vec<u8>>,
    flushed: Vec<u8>,
    effects: Effects,
}

/// Everything a transaction produced except the borrow of the engine: a run
/// on the cold-read pool hands this back to be committed under the locks.
pub struct TxnParts {
    now_ms: u64,
    writes: BTreeMap<Vec<u8>, Option<Bytes>>,
    range_deletes: Vec<(Cf, Vec<u8>, Vec<u8>)>,
    count_deltas: Vec<(u8, i64, i64)>,
    count_resets: Vec<u8>,
    max_version: u64,
    /// Live keys found and not found by `meta` (INFO keyspace_hits/misses).
    key_hits: u64,
    key_misses: u64,
    /// Bumped by every write call (a transaction tells which of its
    /// commands wrote by comparing it).
    generation: u64,
    /// The logical→physical map as this transaction's own SWAPDBs left it
    /// (`None`: it swapped nothing, the engine's map applies).
    db_map: Option<Vec<u8>>,
    /// Physical databases this transaction flushed: its later reads of
    /// them see only its own later writes (see [`Txn::flush_databases`]).
    flushed: Vec<u8>,
    /// Held while members written by [`Txn::stage`] wait for this
    /// transaction's commit (or drop).
    pin: Option<PinMembers>,
    effects: Effects,
    /// What its writes signal (signals.rs), recorded when someone listened
    /// as it began; the mode of the command running.
    signals: Option<Signals>,
    signal_mode: SignalMode,
}

#[derive(Default, Clone)]
pub(crate) struct Effects {
    /// Batches whose pending writes this transaction read.
    pub depends: Vec<Ticket>,
    /// The logical database the command ran in.
    pub db: u8,
    /// The client whose command this is (0: the server).
    pub client: u64,
    /// Replay commands the storage layer adds (lazy expiry DELs), first.
    pub implied: Vec<Vec<Bytes>>,
    /// The command's own replay form; `None` = nothing to replay.
    pub commands: Vec<Vec<Bytes>>,
    /// Physical databases this batch flushes.
    pub flushes: Vec<u8>,
    /// A flush found nothing to delete: the batch (its counter resets) is
    /// still submitted, so that its replay record reaches the WAL (Redis
    /// propagates FLUSHALL of an empty database too).
    pub empty_flush: bool,
    /// SWAPDBs of this batch, in order.
    pub swaps: Vec<Swap>,
    /// `(physical db, key, expire_at_ms)` of expired keys deleted lazily.
    pub expired: Vec<(u8, Bytes, u64)>,
    /// Keyspace events, in emission order (see [`Txn::notify`]).
    pub events: Vec<Event>,
    /// Changes the command(s) counted (Redis's `server.dirty`, INFO
    /// rdb_changes_since_last_save), see [`Txn::add_dirty`].
    pub dirty: u64,
}

fn read_options(mode: ReadMode) -> ReadOptions {
    let mut ro = ReadOptions::default();
    if mode == ReadMode::MemoryOnly {
        ro.set_read_tier(ReadTier::BlockCache);
    }
    ro
}

thread_local! {
    // Point reads reuse one ReadOptions per thread and mode instead of
    // allocating a C object per read.
    static POINT_READ_OPTIONS: [ReadOptions; 2] =
        [read_options(ReadMode::MemoryOnly), read_options(ReadMode::Blocking)];
    // RocksDB's per-thread perf context, counting on the threads that make
    // blocking reads (the cold-read pool's, long commands'): whether a read
    // loaded blocks from the files or found them in memory.
    static PERF: rocksdb::perf::PerfContext = {
        rocksdb::perf::set_perf_stats(rocksdb::perf::PerfStatsLevel::EnableCount);
        rocksdb::perf::PerfContext::default()
    };
}

/// Blocks this thread has read from SST files so far (blocking reads only
/// consult it: a memory-only read never touches the files).
fn blocks_read_from_files() -> u64 {
    PERF.with(|perf| perf.metric(rocksdb::perf::PerfMetric::BlockReadCount))
}

impl<'e> Txn<'e> {
    /// The compact encodings' thresholds in force (limits.rs).
    pub fn encoding_limits(&self) -> crate::EncodingLimits {
        self.inner.encoding_limits.load()
    }

    pub(crate) fn new(inner: &'e Inner, mode: ReadMode, now_ms: u64, locked: bool) -> Self {
        Txn {
            inner,
            mode,
            locked,
            maintenance: false,
            scan_saw_writes: false,
            read_lookups: false,
            st: TxnParts {
                now_ms,
                writes: BTreeMap::new(),
                range_deletes: Vec::new(),
                count_deltas: Vec::new(),
                count_resets: Vec::new(),
                max_version: 0,
                key_hits: 0,
                key_misses: 0,
                generation: 0,
                db_map: None,
                flushed: Vec::new(),
                pin: None,
                effects: Effects::default(),
                signals: inner.signals_wanted().then(Signals::default),
                signal_mode: SignalMode::default(),
            },
            meta_memo: None,
        }
    }

    /// A locked memory-only transaction of the engine's own (expiry).
    pub(crate) fn maintenance(inner: &'e Inner, now_ms: u64) -> Self {
        let mut txn = Txn::new(inner, ReadMode::MemoryOnly, now_ms, true);
        txn.maintenance = true;
        txn
    }

    pub(crate) fn forced_cold(&self) -> bool {
        self.mode == ReadMode::MemoryOnly
            && !self.maintenance
            && self.inner.force_cold_reads.load(Ordering::Relaxed)
    }

    /// Rebuilds a transaction from a pool run's results.
    pub(crate) fn from_parts(inner: &'e Inner, mode: ReadMode, parts: TxnParts) -> Self {
        Txn {
            inner,
            mode,
            locked: true,
            maintenance: false,
            scan_saw_writes: false,
            read_lookups: false,
            st: parts,
            meta_memo: None,
        }
    }

    /// Detaches the results (to cross from the pool back to a connection).
    pub fn into_parts(self) -> TxnParts {
        self.st
    }

    /// The logical database whose commands this batch replays.
    pub fn set_db(&mut self, db: u8) {
        self.st.effects.db = db;
    }

    /// The client whose command this is (`Change::client`).
    pub fn set_client(&mut self, client: u64) {
        self.st.effects.client = client;
    }

    /// The replay form of the command; by default the server records the
    /// command as it was received. Handlers of non-deterministic commands
    /// call this with their deterministic form.
    pub fn set_replay(&mut self, commands: Vec<Vec<Bytes>>) {
        self.st.effects.commands = commands;
    }

    /// Writes one of the server's own records (function libraries) to the
    /// System column family, under a prefix no engine record uses.
    pub fn put_server_record(&mut self, key: &[u8], value: Bytes) {
        self.put(Cf::System, &crate::system::server_record_key(key), value);
    }

    #[cfg(test)]
    pub(crate) fn write_count_for_test(&self) -> usize {
        self.st.writes.len()
    }

    #[cfg(test)]
    pub(crate) fn put_server_record_raw_for_test(&mut self, key: &[u8]) {
        self.put(Cf::System, key, Bytes::new());
    }

    /// Deletes one of the server's own records.
    pub fn delete_server_record(&mut self, key: &[u8]) {
        self.delete(Cf::System, &crate::system::server_record_key(key));
    }

    /// Records keyspace event `name` of `class` (a `notify_class` bit) for
    /// `key` of logical database `db`, to be published once the batch is
    /// committed. Free (one atomic load) unless `notify-keyspace-events`
    /// enables the class; a run whose result is discarded publishes nothing.
    pub fn notify(&mut self, class: u32, name: &'static str, db: u8, key: &[u8]) {
        if !self.notifies(class) {
            return;
        }
        self.st.effects.events.push(Event {
            db,
            class,
            name,
            key: Bytes::copy_from_slice(key),
        });
    }

    /// Counts `changes` toward INFO rdb_changes_since_last_save, as a
    /// Redis handler adds to `server.dirty`: each handler says how many
    /// changes it made (one per element added, removed or updated, one per
    /// key stored...). An effect like the writes: a rollback undoes it and
    /// a discarded run counts nothing; the server adds it once the
    /// transaction commits.
    pub fn add_dirty(&mut self, changes: u64) {
        self.st.effects.dirty += changes;
    }

    /// The changes counted so far (see [`Txn::add_dirty`]).
    pub fn dirty(&self) -> u64 {
        self.st.effects.dirty
    }

    /// Takes the count back to `changes`, an earlier [`Txn::dirty`] (for a
    /// handler that must not count what a shared helper counted).
    pub fn reset_dirty(&mut self, changes: u64) {
        self.st.effects.dirty = changes;
    }

    /// Marks the lookups of a read-only command: each key `meta` finds
    /// missing is then a `keymiss` event (class `m`).
    pub fn set_read_lookups(&mut self, read: bool) {
        self.read_lookups = read;
    }

    /// Whether events of `class` are recorded now.
    pub fn notifies(&self, class: u32) -> bool {
        let flags = self.inner.notify_flags.load(Ordering::Relaxed);
        flags & class != 0 && flags & (notify_class::KEYSPACE | notify_class::KEYEVENT) != 0
    }

    /// Whether a handler already set the replay form.
    pub fn has_replay(&self) -> bool {
        !self.st.effects.commands.is_empty()
    }

    /// While a swap is submitted but not written, the map every read goes
    /// through shows it: the reply waits for it, like one that read a
    /// pending write (else a kill -9 could undo a swap a client was shown).
    fn depend_on_pending_swaps(&mut self) {
        if let Some(tickets) = self.inner.db_map.pending_swap_tickets() {
            for ticket in &tickets {
                self.depend_on(ticket);
            }
        }
    }

    fn depend_on(&mut self, ticket: &Ticket) {
        if !ticket.is_done()
            && !self
                .st
                .effects
                .depends
                .iter()
                .any(|t| t.seq() == ticket.seq())
        {
            self.st.effects.depends.push(ticket.clone());
        }
    }

    /// The tickets of other clients' pending writes read so far.
    pub fn pending_reads(&self) -> &[Ticket] {
        &self.st.effects.depends
    }

    /// Whether the caller holds the locks of the keys this transaction
    /// touches (only such a transaction fills the caches).
    pub(crate) fn is_locked(&self) -> bool {
        self.locked
    }

    /// Whether this transaction wrote anything in `cf` in `[start, end)`
    /// (`None` = to the end of the column family).
    pub(crate) fn wrote_in(&self, cf: Cf, start: &[u8], end: Option<&[u8]>) -> bool {
        let lo = overlay_key(cf, start);
        let hi = match end {
            Some(end) => overlay_key(cf, end),
            None => vec![cf as u8 + 1],
        };
        self.st.writes.range(lo..hi).next().is_some()
    }

    /// Whether this transaction wrote the raw key `raw` of `cf`.
    pub(crate) fn wrote(&self, cf: Cf, raw: &[u8]) -> bool {
        self.st.writes.contains_key(&overlay_key(cf, raw))
    }

    /// `(hits, misses)` of key lookups so far.
    pub fn key_lookups(&self) -> (u64, u64) {
        (self.st.key_hits, self.st.key_misses)
    }

    /// The command's clock: fixed for its whole execution, as in Redis.
    pub fn now_ms(&self) -> u64 {
        self.st.now_ms
    }

    pub fn mode(&self) -> ReadMode {
        self.mode
    }

    /// From here on, reads that miss memory read the disk (a script that
    /// holds its keys' places reads on rather than giving them up).
    pub fn read_blocking(&mut self) {
        self.mode = ReadMode::Blocking;
    }

    /// Whether the transaction changes anything: a flush does, even of an
    /// empty database (it resets the counters and is replayed).
    /// Whether the transaction swapped databases (SWAPDB writes nothing
    /// until the writer persists the map, but replays all the same).
    pub fn has_swaps(&self) -> bool {
        !self.st.effects.swaps.is_empty()
    }

    pub fn has_writes(&self) -> bool {
        !self.st.writes.is_empty()
            || !self.st.range_deletes.is_empty()
            || !self.st.count_resets.is_empty()
    }

    /// The physical database behind logical `db` at this point of the
    /// transaction: after its own SWAPDBs, which the engine's map shows
    /// only once the batch is submitted.
    pub(crate) fn physical(&self, db: u8) -> u8 {
        match &self.st.db_map {
            Some(map) => map.get(db as usize).copied().unwrap_or(db),
            None => self.inner.db_map.physical(db),
        }
    }

    /// The logical database behind physical `pdb` at this point.
    pub(crate) fn logical(&self, pdb: u8) -> u8 {
        match &self.st.db_map {
            Some(map) => crate::dbmap::logical_in(map, pdb),
            None => self.inner.db_map.logical(pdb),
        }
    }

    /// Whether this transaction flushed physical database `pdb` (so
    /// nothing but its own later writes is there for it).
    fn flushed_here(&self, cf: Cf, raw: &[u8]) -> bool {
        !self.st.flushed.is_empty()
            && pdb_of_raw(cf, raw).is_some_and(|pdb| self.st.flushed.contains(&pdb))
    }

    /// `(keys, keys with an expiry)` of logical database `db` as this
    /// transaction sees it: every submitted batch, and its own changes.
    pub fn key_count(&self, db: u8) -> (u64, u64) {
        let pdb = self.physical(db);
        let (mut keys, mut expires) = if self.st.count_resets.contains(&pdb) {
            (0, 0)
        } else {
            self.inner.counts.visible(pdb)
        };
        for &(d, k, e) in &self.st.count_deltas {
            if d == pdb {
                keys += k;
                expires += e;
            }
        }
        (keys.max(0) as u64, expires.max(0) as u64)
    }

    pub(crate) fn get(&mut self, cf: Cf, key: &[u8]) -> Result<Option<Bytes>> {
        if cf == Cf::Meta {
            return self.get_meta(key.to_vec());
        }
        if let Some(own) = self.own_view(cf, key) {
            return Ok(own);
        }
        self.get_outside(cf, key)
    }

    /// `get` of a meta record by its owned raw key, which becomes the
    /// memo's key without another copy (`meta_memo`).
    fn get_meta(&mut self, key: Vec<u8>) -> Result<Option<Bytes>> {
        if let Some(own) = self.own_view(Cf::Meta, &key) {
            return Ok(own);
        }
        if let Some((memo_key, value, whole)) = &self.meta_memo {
            if *memo_key == key && (*whole || value.is_none()) {
                return Ok(value.clone());
            }
        }
        let found = self.get_outside(Cf::Meta, &key)?;
        self.meta_memo = Some((key, found.clone(), true));
        Ok(found)
    }

    /// What the transaction's own writes and flushes say of `key`, if
    /// anything; otherwise notes the pending swaps the read depends on.
    fn own_view(&mut self, cf: Cf, key: &[u8]) -> Option<Option<Bytes>> {
        if let Some(local) = self.st.writes.get(&overlay_key(cf, key)) {
            return Some(local.clone());
        }
        if self.flushed_here(cf, key) {
            return Some(None);
        }
        self.depend_on_pending_swaps();
        None
    }

    /// `get` past the transaction's own writes and flushes: the overlay,
    /// the hot tier, RocksDB.
    fn get_outside(&mut self, cf: Cf, key: &[u8]) -> Result<Option<Bytes>> {
        self.get_outside_from(cf, key, cf)
    }

    /// [`Txn::get_outside`] that reads RocksDB's column family `from`
    /// (`Facts` for a meta record's header) after the overlay and the hot
    /// tier have been asked for `cf`'s record. Only a whole meta record
    /// read fills the hot tier.
    fn get_outside_from(&mut self, cf: Cf, key: &[u8], from: Cf) -> Result<Option<Bytes>> {
        match self.inner.overlay.get(cf, key) {
            Lookup::Pending(pending) => {
                self.depend_on(&pending.ticket);
                return Ok(pending.value);
            }
            Lookup::Flushed(ticket) => {
                self.depend_on(&ticket);
                return Ok(None);
            }
            Lookup::Absent => {}
        }
        if self.forced_cold() {
            return Err(StorageError::Incomplete);
        }
        if cf == Cf::Meta {
            if let Some(hot) = self.inner.hot.get(key) {
                return Ok(Some(hot));
            }
        }
        let handle = self
            .inner
            .cf(from)
            .ok_or(StorageError::Corrupt("missing column family"))?;
        let blocking = self.mode == ReadMode::Blocking;
        let blocks_before = if blocking {
            blocks_read_from_files()
        } else {
            0
        };
        let found = POINT_READ_OPTIONS.with(|opts| {
            let ro = &opts[blocking as usize];
            self.inner
                .db
                .get_pinned_cf_opt(handle, key, ro)
                .map(|v| v.map(|v| Bytes::copy_from_slice(&v)))
        });
        match found {
            Ok(found) => {
                self.inner
                    .stats
                    .count_read(blocking && blocks_read_from_files() > blocks_before);
                if let (Cf::Meta, Cf::Meta, true, Some(record)) = (cf, from, self.locked, &found) {
                    // Safe: we hold the key's lock and no write is pending.
                    self.inner.hot.put(key, record);
                }
                Ok(found)
            }
            Err(e) => {
                let err = StorageError::from(e);
                if err == StorageError::Incomplete {
                    self.inner
                        .stats
                        .incomplete_reads
                        .fetch_add(1, Ordering::Relaxed);
                }
                Err(err)
            }
        }
    }

    pub(crate) fn put(&mut self, cf: Cf, key: &[u8], value: Bytes) {
        self.st.generation += 1;
        self.record_signal(cf, key);
        self.st.writes.insert(overlay_key(cf, key), Some(value));
    }

    pub(crate) fn delete(&mut self, cf: Cf, key: &[u8]) {
        self.st.generation += 1;
        self.record_signal(cf, key);
        self.st.writes.insert(overlay_key(cf, key), None);
    }

    /// Records what a write to `raw` of `cf` signals (signals.rs): the key
    /// of a meta record or of a member.
    fn record_signal(&mut self, cf: Cf, raw: &[u8]) {
        let Some(signals) = self.st.signals.as_mut() else {
            return;
        };
        let mode = self.st.signal_mode;
        if mode.quiet && mode.adds_nothing {
            return;
        }
        let owner = match cf {
            Cf::Meta => keys::parse_meta_key(raw),
            Cf::Data | Cf::ZScore | Cf::Stream => {
                keys::parse_member_key(raw).map(|(pdb, key, _)| (pdb, key))
            }
            _ => None,
        };
        if let Some((pdb, key)) = owner {
            signals.record(mode, pdb, key);
        }
    }

    /// How the writes of the command about to run signal (its
    /// declaration: signals.rs).
    pub fn set_signal_mode(&mut self, mode: SignalMode) {
        self.st.signal_mode = mode;
    }

    /// Signals `key` of logical `db` as modified whatever the command's
    /// mode, as Redis's quiet commands do where they create a key.
    pub fn signal_modified(&mut self, db: u8, key: &[u8]) {
        let pdb = self.physical(db);
        if let Some(signals) = self.st.signals.as_mut() {
            crate::signals::push_new(&mut signals.modified, pdb, key);
        }
    }

    /// Moves on with every write call: a caller running several commands
    /// over one transaction compares it to tell which of them wrote.
    pub fn write_generation(&self) -> u64 {
        self.st.generation
    }

    /// Takes the replay commands recorded so far: lazy-expiry DELs, then
    /// the command's own form (MULTI/EXEC collects them per command).
    pub fn take_replay(&mut self) -> Vec<Vec<Bytes>> {
        let mut all = std::mem::take(&mut self.st.effects.implied);
        all.append(&mut self.st.effects.commands);
        all
    }

    /// The state to return to if the next command fails (a command inside
    /// EXEC that errors must leave no writes, as it would alone).
    pub fn savepoint(&self) -> Savepoint {
        Savepoint {
            signals: self.st.signals.as_ref().map(Signals::mark),
            writes: self.st.writes.clone(),
            range_deletes: self.st.range_deletes.clone(),
            count_deltas: self.st.count_deltas.clone(),
            count_resets: self.st.count_resets.clone(),
            db_map: self.st.db_map.clone(),
            flushed: self.st.flushed.clone(),
            effects: Effects {
                depends: Vec::new(),
                ..self.st.effects.clone()
            },
        }
    }

    /// Undoes everything since `savepoint` except the dependencies on
    /// other batches (what was read was shown).
    pub fn rollback(&mut self, savepoint: Savepoint) {
        self.st.generation += 1;
        self.st.writes = savepoint.writes;
        self.st.range_deletes = savepoint.range_deletes;
        self.st.count_deltas = savepoint.count_deltas;
        self.st.count_resets = savepoint.count_resets;
        self.st.db_map = savepoint.db_map;
        self.st.flushed = savepoint.flushed;
        if let (Some(signals), Some(mark)) = (self.st.signals.as_mut(), savepoint.signals) {
            signals.truncate(mark);
        }
        let depends = std::mem::take(&mut self.st.effects.depends);
        self.st.effects = Effects {
            depends,
            ..savepoint.effects
        };
    }

    /// Visits live entries of `cf` in `[start, end)` in key order, merging
    /// RocksDB with pending and local writes.
    pub(crate) fn scan(
        &mut self,
        cf: Cf,
        start: &[u8],
        end: Option<&[u8]>,
        visit: impl FnMut(&[u8], &Bytes) -> ScanStep,
    ) -> Result<()> {
        self.scan_dir(cf, start, end, false, visit)
    }

    /// [`Txn::scan`] in either direction: `reverse` visits `[start, end)`
    /// from its last entry down.
    pub(crate) fn scan_dir(
        &mut self,
        cf: Cf,
        start: &[u8],
        end: Option<&[u8]>,
        reverse: bool,
        mut visit: impl FnMut(&[u8], &Bytes) -> ScanStep,
    ) -> Result<()> {
        let mut visited = 0u64;
        let result = self.scan_merged(cf, start, end, reverse, |k, v| {
            visited += 1;
            visit(k, v)
        });
        self.inner
            .stats
            .scanned_entries
            .fetch_add(visited, Ordering::Relaxed);
        result
    }

    /// [`Txn::scan_dir`] without the count of entries visited.
    fn scan_merged(
        &mut self,
        cf: Cf,
        start: &[u8],
        end: Option<&[u8]>,
        reverse: bool,
        mut visit: impl FnMut(&[u8], &Bytes) -> ScanStep,
    ) -> Result<()> {
        self.depend_on_pending_swaps();
        let mut extra: BTreeMap<Vec<u8>, Option<Bytes>> = BTreeMap::new();
        for (k, pending) in self.inner.overlay.range(cf, start, end) {
            if self.flushed_here(cf, &k) {
                continue;
            }
            self.depend_on(&pending.ticket);
            extra.insert(k, pending.value);
        }
        let (inner, flushed) = (self.inner, self.st.flushed.clone());
        let fenced = move |raw: &[u8]| {
            pdb_of_raw(cf, raw)
                .is_some_and(|pdb| flushed.contains(&pdb) || inner.overlay.fence(pdb).is_some())
        };
        let lo = overlay_key(cf, start);
        let hi = match end {
            Some(end) => overlay_key(cf, end),
            None => vec![cf as u8 + 1],
        };
        for (k, v) in self.st.writes.range(lo..hi) {
            extra.insert(k[1..].to_vec(), v.clone());
        }
        self.scan_saw_writes = !extra.is_empty();
        if self.forced_cold() {
            return Err(StorageError::Incomplete);
        }
        let handle = self
            .inner
            .cf(cf)
            .ok_or(StorageError::Corrupt("missing column family"))?;
        let mut ro = read_options(self.mode);
        if let Some(end) = end {
            ro.set_iterate_upper_bound(end.to_vec());
        }
        if reverse {
            ro.set_iterate_lower_bound(start.to_vec());
        }
        let mut arena = ValueArena::default();
        let mut iter = self.inner.db.raw_iterator_cf_opt(handle, ro);
        if reverse {
            iter.seek_to_last();
        } else {
            iter.seek(start);
        }
        let advance = |iter: &mut rocksdb::DBRawIterator<'_>| {
            if reverse {
                iter.prev()
            } else {
                iter.next()
            }
        };
        let mut extra_iter: Box<dyn Iterator<Item = (Vec<u8>, Option<Bytes>)>> = if reverse {
            Box::new(extra.into_iter().rev())
        } else {
            Box::new(extra.into_iter())
        };
        let mut extra_iter = std::iter::from_fn(move || extra_iter.next()).peekable();
        // Whether a pending/local entry comes before (or with) RocksDB's.
        let extra_first = |extra_key: &[u8], db_key: &[u8]| {
            if reverse {
                extra_key >= db_key
            } else {
                extra_key <= db_key
            }
        };
        loop {
            let from_db = if iter.valid() { iter.key() } else { None };
            let step = match (from_db, extra_iter.peek()) {
                (None, None) => break,
                (Some(db_key), Some((extra_key, _))) if extra_first(extra_key, db_key) => {
                    let same = extra_key.as_slice() == db_key;
                    let Some((k, v)) = extra_iter.next() else {
                        break;
                    };
                    if same {
                        advance(&mut iter);
                    }
                    match v {
                        Some(v) => visit(&k, &v),
                        None => ScanStep::Continue,
                    }
                }
                (Some(db_key), _) if fenced(db_key) => {
                    advance(&mut iter);
                    ScanStep::Continue
                }
                (Some(db_key), _) => {
                    // Visited in place: no copy of the key per entry.
                    let v = arena.copy(iter.value().unwrap_or_default());
                    let step = visit(db_key, &v);
                    advance(&mut iter);
                    step
                }
                (None, Some(_)) => {
                    let Some((k, v)) = extra_iter.next() else {
                        break;
                    };
                    match v {
                        Some(v) => visit(&k, &v),
                        None => ScanStep::Continue,
                    }
                }
            };
            if let ScanStep::Stop = step {
                return Ok(());
            }
        }
        iter.status().map_err(|e| {
            let err = StorageError::from(e);
            if err == StorageError::Incomplete {
                self.inner
                    .stats
                    .incomplete_reads
                    .fetch_add(1, Ordering::Relaxed);
            }
            err
        })
    }

    /// A fresh collection version, unique for the life of the database.
    pub(crate) fn alloc_version(&mut self) -> u64 {
        let version = self.inner.next_version.fetch_add(1, Ordering::AcqRel) + 1;
        self.st.max_version = self.st.max_version.max(version);
        version
    }

    /// The meta record physically present (possibly expired).
    pub(crate) fn raw_meta(&mut self, pdb: u8, key: &[u8]) -> Result<Option<Meta>> {
        match self.get_meta(meta_key(pdb, key))? {
            Some(raw) => Ok(Some(Meta::decode(&raw)?)),
            None => Ok(None),
        }
    }

    /// The facts of the meta record physically present (possibly
    /// expired): from this transaction's writes, the record it last read,
    /// the overlay or the hot tier when they have the whole record, else
    /// from the `facts` column family, whose small blocks stay in the
    /// block cache when the values' do not. So a write that replaces a
    /// value does not read it.
    pub(crate) fn raw_facts(&mut self, pdb: u8, key: &[u8]) -> Result<Option<Facts>> {
        let raw = meta_key(pdb, key);
        let record = match self.own_view(Cf::Meta, &raw) {
            Some(own) => own,
            None => match &self.meta_memo {
                Some((memo_key, value, _)) if *memo_key == raw => value.clone(),
                _ => {
                    let found = self.get_outside_from(Cf::Meta, &raw, Cf::Facts)?;
                    self.meta_memo = Some((raw, found.clone(), false));
                    found
                }
            },
        };
        record.map(|r| Facts::decode(&r)).transpose()
    }

    /// The live meta record of `key` in logical database `db`. An expired
    /// key is deleted on the spot (lazy expiry) and reported missing.
    pub fn meta(&mut self, db: u8, key: &[u8]) -> Result<Option<Meta>> {
        let pdb = self.physical(db);
        let found = match self.raw_meta(pdb, key)? {
            Some(meta) if self.expire_lazily(db, pdb, key, &Facts::from(&meta)) => None,
            other => other,
        };
        self.count_lookup(db, key, found.is_some());
        Ok(found)
    }

    /// [`Txn::meta`] that reads only the key's facts (whether it exists,
    /// its type and expiry), with the same lazy expiry and counts.
    pub fn facts(&mut self, db: u8, key: &[u8]) -> Result<Option<Facts>> {
        let pdb = self.physical(db);
        let found = match self.raw_facts(pdb, key)? {
            Some(facts) if self.expire_lazily(db, pdb, key, &facts) => None,
            other => other,
        };
        self.count_lookup(db, key, found.is_some());
        Ok(found)
    }

    /// Whether a key found with `facts` reads as missing because it
    /// expired; deletes it on the spot unless expiries are paused.
    fn expire_lazily(&mut self, db: u8, pdb: u8, key: &[u8], facts: &Facts) -> bool {
        if !facts.is_expired(self.st.now_ms) {
            return false;
        }
        let paused = self.st.now_ms < self.inner.expiry_paused_until_ms.load(Ordering::Relaxed);
        if paused {
            // Expired while expiries are paused: missing, not deleted.
            return true;
        }
        // Whatever the command, an expiry signals what a deletion does
        // (Redis's deleteExpiredKeyAndPropagate: modified, and ready for a
        // stream's XREADGROUP readers), even inside XACK or an XREADGROUP.
        let mode = std::mem::take(&mut self.st.signal_mode);
        self.remove_meta_physical(pdb, key, Some(facts));
        self.st.signal_mode = mode;
        self.st
            .effects
            .expired
            .push((pdb, Bytes::copy_from_slice(key), facts.expire_at_ms));
        // Replicas see the lazy expiry as a DEL, before the command.
        self.st.effects.implied.push(vec![
            Bytes::from_static(b"DEL"),
            Bytes::copy_from_slice(key),
        ]);
        self.notify(notify_class::EXPIRED, "expired", db, key);
        // Counted in INFO expired_keys by the commit: a run that is thrown
        // away (a pool run whose keys changed, a run under shared locks)
        // deleted nothing.
        true
    }

    /// Counts a lookup toward INFO keyspace_hits/misses (a miss of a
    /// read-only command's lookup is a `keymiss` event).
    fn count_lookup(&mut self, db: u8, key: &[u8], found: bool) {
        if found {
            self.st.key_hits += 1;
        } else {
            self.st.key_misses += 1;
            if self.read_lookups {
                self.notify(notify_class::KEY_MISS, "keymiss", db, key);
            }
        }
    }

    /// Stores `meta` for `key`, keeping counters and the expire index exact.
    pub(crate) fn write_meta(&mut self, db: u8, key: &[u8], meta: &Meta) -> Result<()> {
        let pdb = self.physical(db);
        self.write_meta_physical(pdb, key, meta)
    }

    pub(crate) fn write_meta_physical(&mut self, pdb: u8, key: &[u8], meta: &Meta) -> Result<()> {
        // The old record's facts are all a write needs of it: a write of a
        // key whose value is on disk reads no value.
        let old = self.raw_facts(pdb, key)?;
        let old_expire = old.as_ref().map_or(0, |m| m.expire_at_ms);
        let key_delta = if old.is_some() { 0 } else { 1 };
        if self.notifies(notify_class::NEW | notify_class::EXPIRED) {
            // A write that did not look the key up first (MSET) replaces an
            // expired value: Redis would have expired it on the lookup.
            let db = self.logical(pdb);
            let expired = old.as_ref().is_some_and(|m| m.is_expired(self.st.now_ms));
            if expired {
                self.notify(notify_class::EXPIRED, "expired", db, key);
            }
            if old.is_none() || expired {
                // Redis's dbAdd: a key is created.
                self.notify(notify_class::NEW, "new", db, key);
            }
        }
        let expire_delta = (meta.expire_at_ms != 0) as i64 - (old_expire != 0) as i64;
        if old_expire != meta.expire_at_ms {
            if old_expire != 0 {
                self.delete(Cf::Expire, &expire_key(old_expire, pdb, key));
            }
            if meta.expire_at_ms != 0 {
                self.put(
                    Cf::Expire,
                    &expire_key(meta.expire_at_ms, pdb, key),
                    Bytes::new(),
                );
            }
        }
        self.add_counts(pdb, key_delta, expire_delta);
        self.put(Cf::Meta, &meta_key(pdb, key), Bytes::from(meta.encode()));
        Ok(())
    }

    /// Deletes `key` from logical database `db`; members of collections are
    /// left to the compaction filter. Returns whether a live key was removed.
    pub(crate) fn remove_meta(&mut self, db: u8, key: &[u8]) -> Result<bool> {
        let pdb = self.physical(db);
        match self.raw_facts(pdb, key)? {
            Some(facts) => {
                let live = !facts.is_expired(self.st.now_ms);
                self.remove_meta_physical(pdb, key, Some(&facts));
                Ok(live)
            }
            None => Ok(false),
        }
    }

    pub(crate) fn remove_meta_physical(&mut self, pdb: u8, key: &[u8], old: Option<&Facts>) {
        if old.is_some_and(|m| m.value_type == ValueType::Stream) {
            // Whatever the command, deleting a stream ends its XREADGROUP
            // readers' waits (Redis's dbGenericDelete signals it ready):
            // EXPIRE k 0 adds nothing, but deletes.
            if let Some(signals) = self.st.signals.as_mut() {
                crate::signals::push_new(&mut signals.ready, pdb, key);
            }
        }
        let old_expire = old.map_or(0, |m| m.expire_at_ms);
        if old_expire != 0 {
            self.delete(Cf::Expire, &expire_key(old_expire, pdb, key));
        }
        self.add_counts(pdb, -1, -((old_expire != 0) as i64));
        self.delete(Cf::Meta, &meta_key(pdb, key));
    }

    fn add_counts(&mut self, pdb: u8, keys: i64, expires: i64) {
        if keys == 0 && expires == 0 {
            return;
        }
        match self
            .st
            .count_deltas
            .iter_mut()
            .find(|(db, _, _)| *db == pdb)
        {
            Some(entry) => {
                entry.1 += keys;
                entry.2 += expires;
            }
            None => self.st.count_deltas.push((pdb, keys, expires)),
        }
    }

    /// Queues the removal of everything in physical database `pdb`.
    pub(crate) fn delete_database(&mut self, pdb: u8) {
        let start = vec![pdb];
        let end = match keys::prefix_end(&start) {
            Some(end) => end,
            None => vec![0xFF; 4],
        };
        for cf in [Cf::Meta, Cf::Facts, Cf::Data, Cf::ZScore, Cf::Stream] {
            self.st.range_deletes.push((cf, start.clone(), end.clone()));
        }
        self.st.count_deltas.retain(|(db, _, _)| *db != pdb);
        self.st.count_resets.push(pdb);
        // Pending writes of this database made by this transaction before
        // the flush are moot.
        self.st.writes.retain(|k, _| {
            let cf = k.first().and_then(|&b| Cf::from_u8(b));
            !matches!(cf.and_then(|cf| pdb_of_raw(cf, &k[1..])), Some(p) if p == pdb)
        });
        self.st.effects.flushes.push(pdb);
        self.st.generation += 1;
        self.mark_flushed(pdb);
        debug_assert!((pdb as usize) < MAX_DATABASES);
    }

    /// FLUSHDB/FLUSHALL of logical database `db`, or all of them: O(1), a
    /// range delete per CF. Readers see the databases empty at once (a
    /// fence in the overlay) although RocksDB drops the data only when the
    /// writer commits. The caller holds every key lock. Returns how many
    /// keys it removes (committed ones and this transaction's own), which
    /// Redis counts as changes.
    pub fn flush_databases(&mut self, db: Option<u8>) -> u64 {
        // Only the configured databases can hold keys: SWAPDB permutes the
        // physical ids among them. Every range delete costs every later
        // read a tombstone check until compaction, so none is wasted.
        let targets: Vec<u8> = match db {
            Some(db) => vec![self.physical(db)],
            None => (0..self.inner.databases)
                .map(|d| self.physical(d as u8))
                .collect(),
        };
        let mut removed = 0;
        for pdb in targets {
            removed += self.keys_held(pdb);
            if self.holds_nothing(pdb) {
                // Only its counter is reset (to the 0 it holds): the batch
                // then has an entry, and RocksDB's WAL a record to carry
                // the replay form.
                self.st.effects.empty_flush = true;
                self.st.count_resets.push(pdb);
                self.mark_flushed(pdb);
            } else {
                self.delete_database(pdb);
            }
        }
        removed
    }

    /// Keys physical database `pdb` holds as this transaction sees it: the
    /// committed count (unless this transaction flushed it already) plus
    /// the keys it added or removed itself.
    fn keys_held(&self, pdb: u8) -> u64 {
        let committed = if self.st.count_resets.contains(&pdb) {
            0
        } else {
            self.inner.counts.get(pdb).0
        };
        let own: i64 = self
            .st
            .count_deltas
            .iter()
            .filter(|(db, _, _)| *db == pdb)
            .map(|(_, keys, _)| *keys)
            .sum();
        (committed + own).max(0) as u64
    }

    /// Later reads of `pdb` in this transaction ignore everything but its
    /// own later writes: RocksDB, the hot tier and the overlay still hold
    /// the data the flush removes until the batch is submitted and
    /// committed. (Without this, `MULTI; FLUSHALL; INCR c; EXEC` read the
    /// old `c`, and an RPUSH after a flush extended a list whose members
    /// the flush deleted.)
    fn mark_flushed(&mut self, pdb: u8) {
        if !self.st.flushed.contains(&pdb) {
            self.st.flushed.push(pdb);
        }
    }

    /// Whether physical database `pdb` provably has no key, so that a
    /// flush of it has nothing to delete and leaves no range tombstone
    /// (each one costs later reads until compaction): no committed key,
    /// no write pending anywhere (the caller holds every key lock, so none
    /// can start), and none of this transaction's own. Members of deleted
    /// collections may remain; they are already invisible, and compaction
    /// drops them.
    fn holds_nothing(&self, pdb: u8) -> bool {
        self.inner.counts.get(pdb).0 == 0
            && self.inner.overlay.len() == 0
            && self.inner.overlay.fence(pdb).is_none()
            && !self.st.count_deltas.iter().any(|(db, _, _)| *db == pdb)
            && !self.st.writes.keys().any(|k| {
                let cf = k.first().and_then(|&b| Cf::from_u8(b));
                matches!(cf.and_then(|cf| pdb_of_raw(cf, &k[1..])), Some(p) if p == pdb)
            })
    }

    /// SWAPDB: only the logical→physical map changes, when the batch is
    /// submitted. The caller holds every key lock. The watched keys of
    /// both databases are looked up in both (WATCH spares a key that is in
    /// neither), which may need the disk.
    ///
    /// The transaction's own later commands see the swapped map at once
    /// (its own copy; the engine's changes at submit), so two swaps of the
    /// same pair undo each other and a FLUSHDB after a swap flushes the
    /// database the swap put there.
    pub fn swap_databases(&mut self, a: u8, b: u8) -> Result<()> {
        self.st.generation += 1;
        let checks = self.check_swap_watches(a, b)?;
        let mut map = match self.st.db_map.take() {
            Some(map) => map,
            None => self.inner.db_map.live_map(),
        };
        crate::dbmap::swap_entries(&mut map, a, b);
        self.st.db_map = Some(map);
        self.st.effects.swaps.push(Swap { a, b, checks });
        Ok(())
    }

    /// For SWAPDB of logical dbs `a` and `b`: every watched key of either,
    /// looked up in both (none when nobody watches).
    fn check_swap_watches(&mut self, a: u8, b: u8) -> Result<Vec<SwapCheck>> {
        if !self.inner.watches.is_active() {
            return Ok(Vec::new());
        }
        let (pa, pb) = (self.physical(a), self.physical(b));
        let now = self.now_ms();
        let presence = |meta: Option<Meta>| match meta {
            None => Presence::Absent,
            Some(m) if m.is_expired(now) => Presence::Expired,
            Some(_) => Presence::Live,
        };
        let mut checks = Vec::new();
        for (db, key) in self.inner.watches.keys_in(&[a, b]) {
            let (own, other) = if db == a { (pa, pb) } else { (pb, pa) };
            let here = presence(self.raw_meta(own, &key)?);
            let there = presence(self.raw_meta(other, &key)?);
            checks.push(SwapCheck {
                db,
                key,
                here,
                there,
            });
        }
        Ok(checks)
    }

    /// Writes `entries` of `cf` in a batch of their own, now, and waits
    /// until the writer has it: for a copy too big for one batch
    /// (`copy_members`). The caller writes them under a version no meta
    /// names until this transaction commits, so nobody sees them; until it
    /// commits or is dropped the compaction filter keeps them, and the
    /// version high-water mark goes with them, so a crash in between can
    /// only leave orphans, never a reused version. Blocking: pool and
    /// script threads only.
    pub(crate) fn stage(&mut self, cf: Cf, entries: Vec<(Vec<u8>, Bytes)>) -> Result<()> {
        if self.st.pin.is_none() {
            self.st.pin = Some(PinMembers::new(self.inner));
        }
        let writes: BTreeMap<Vec<u8>, Option<Bytes>> = entries
            .into_iter()
            .map(|(k, v)| (overlay_key(cf, &k), Some(v)))
            .collect();
        let stripes = crate::locks::normalise(
            writes
                .keys()
                .map(|k| keys::stripe_of_raw(cf, &k[1..]))
                .collect(),
        );
        let ticket = self.inner.submit(CommitBatch {
            writes,
            stripes,
            max_version: self.st.max_version,
            ..Default::default()
        })?;
        ticket.wait_blocking()
    }

    /// Hands the writes to the writer. Returns the tickets the reply must
    /// wait for: this batch's (if it wrote anything) and those of other
    /// pending batches whose writes it read.
    /// Whether `commit` would queue nothing: no write, flush, swap or
    /// event (a run under shared locks may commit only then).
    pub fn commits_nothing(&self) -> bool {
        self.st.commits_nothing()
    }

    pub fn commit(self) -> Result<Vec<Ticket>> {
        if self.commits_nothing() {
            return Ok(self.st.effects.depends);
        }
        let mut effects = self.st.effects;
        if let Some(error) = self.inner.write_error_text() {
            return Err(StorageError::WriteFailed(error));
        }
        self.inner
            .stats
            .expired_keys
            .fetch_add(effects.expired.len() as u64, Ordering::Relaxed);
        // Small collections cached decoded: forget the keys whose members
        // this batch writes, while their locks are still held (see
        // collcache.rs). A meta-only write (SET, EXPIRE) changes no cached
        // member, and a new version never matches an old entry.
        if !self.inner.coll.is_empty() {
            let mut last: Option<(u8, &[u8])> = None;
            for raw in self.st.writes.keys() {
                let member_cf = matches!(
                    raw.first().and_then(|&b| Cf::from_u8(b)),
                    Some(Cf::Data | Cf::ZScore)
                );
                let owner = raw.get(1..).and_then(keys::parse_member_key);
                if let (true, Some((pdb, key, _))) = (member_cf, owner) {
                    if last != Some((pdb, key)) {
                        self.inner.coll.remove(&meta_key(pdb, key));
                        last = Some((pdb, key));
                    }
                }
            }
        }
        let mut stripes: Vec<usize> = self
            .st
            .writes
            .keys()
            .filter_map(|k| {
                let cf = Cf::from_u8(*k.first()?)?;
                Some(keys::stripe_of_raw(cf, &k[1..]))
            })
            .collect();
        stripes = crate::locks::normalise(stripes);
        let mut commands = std::mem::take(&mut effects.implied);
        commands.append(&mut effects.commands);
        let ticket = self.inner.submit(CommitBatch {
            seq: 0,
            writes: self.st.writes,
            range_deletes: self.st.range_deletes,
            count_deltas: self.st.count_deltas,
            count_resets: self.st.count_resets,
            max_version: self.st.max_version,
            stripes,
            flushes: effects.flushes,
            swaps: effects.swaps,
            db: effects.db,
            client: effects.client,
            commands,
            events: effects.events,
            signals: self.st.signals,
            ticket: None,
            checkpoint: None,
        })?;
        let mut tickets = vec![ticket];
        tickets.append(&mut effects.depends);
        Ok(tickets)
    }
}

/// Copies of the values a scan hands out, carved from shared buffers: a
/// walk over many small members makes one allocation per 64 KiB instead of
/// one per value (which was the top cost of LRANGE-style walks).
#[derive(Default)]
struct ValueArena {
    buf: bytes::BytesMut,
}

impl ValueArena {
    const CHUNK: usize = 64 * 1024;

    fn copy(&mut self, value: &[u8]) -> Bytes {
        if value.len() >= Self::CHUNK / 4 {
            return Bytes::copy_from_slice(value);
        }
        if self.buf.capacity() - self.buf.len() < value.len() {
            self.buf = bytes::BytesMut::with_capacity(Self::CHUNK);
        }
        self.buf.extend_from_slice(value);
        self.buf.split().freeze()
    }
}
