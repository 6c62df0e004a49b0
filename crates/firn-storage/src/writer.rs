//! The group-commit writers apply every command's batch to RocksDB. Each
//! writer thread owns the keys of a fixed share of the lock stripes
//! (`stripe % writers`). It takes whatever has queued up for it since its
//! last write, folds it into one `WriteBatch` (plus the key-count deltas and
//! the version high-water mark, so they are crash-consistent with the
//! data) and writes it with the configured sync policy; writers write at
//! the same time, and RocksDB inserts their batches into the memtables in
//! parallel. One key's batches all go to one writer, so they stay in
//! order. A batch that spans writers, or acts on whole databases (FLUSH*,
//! SWAPDB, a barrier), is queued to every writer at once (under the submit
//! lock, so all queues agree on the order of such batches): each writer
//! commits what it had before it and stops; the first writer commits the
//! batch alone and lets them all go on.
//!
//! Each batch also writes its replay record into the WAL
//! (`put_log_data`). Network threads never wait on the WAL or on a write
//! stall; a connection awaits the tickets of its batches. Written batches
//! are completed in submit order across writers (`Completions`, in
//! commit_queue.rs, with the writers' queues): each is published on the
//! change stream, its keyspace events handed on and its ticket resolved,
//! in `seq` order.
//!
//! A failed write is retried for about a second. If it still fails (a full
//! disk; RocksDB's WAL error is sticky until the database is reopened) the
//! group is rolled back: its writes and fences leave the overlay, a swap is
//! undone, and its tickets resolve as failed, so exactly its clients are
//! told. Nothing was acknowledged, so nothing acknowledged is lost.
//! `write_error` makes new writes fail with MISCONF until a probe write
//! succeeds again.

use bytes::Bytes;
use crossbeam_channel::Receiver;
use rocksdb::{WriteBatch, WriteOptions};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::batch::CommitBatch;
use crate::changes::{encode_log_record, encode_log_record_with, Change};
use crate::commit_queue::{Completion, Job};
use crate::keys::meta_key;
use crate::meta::{inline_string_body, Facts};
use crate::overlay::overlay_key;
use crate::state::{Inner, SyncPolicy};
use crate::Cf;

const MAX_GROUP_BYTES: usize = 8 << 20;

const RETRIES: u32 = 10;
const RETRY_PAUSE: Duration = Duration::from_millis(100);
const PROBE_KEY: &[u8] = b"write-probe";

/// Write options for the current `appendfsync` policy.
fn write_options(inner: &Inner) -> WriteOptions {
    let mut opts = WriteOptions::default();
    opts.set_sync(inner.sync_policy() == SyncPolicy::Always);
    opts
}

pub(crate) fn run(inner: Arc<Inner>, rx: Receiver<Job>) {
    let mut persisted_version = inner.next_version.load(Ordering::Acquire);
    // A rendezvous job met while gathering a group: it goes next.
    let mut held: Option<Job> = None;
    loop {
        let job = match held.take() {
            Some(job) => job,
            None => match rx.recv_timeout(Duration::from_secs(1)) {
                Ok(job) => job,
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    probe_after_error(&inner, &write_options(&inner));
                    continue;
                }
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
            },
        };
        let first = match job {
            Job::Batch(batch) => batch,
            Job::Lead(batch, rendezvous) => {
                rendezvous.arrived.wait();
                if let Some(job) = &batch.checkpoint {
                    // Every batch before the cut is in RocksDB and none
                    // after it: link the files now, alone.
                    link_checkpoint(&inner, job);
                    inner.completions.finish(std::iter::once(Completion {
                        seq: batch.seq,
                        ok: true,
                        change: None,
                        events: Vec::new(),
                        ticket: batch.ticket.clone(),
                        replay: None,
                        cut: true,
                    }));
                    inner.drained.notify_waiters();
                    rendezvous.done.wait();
                    continue;
                }
                // Every other writer is stopped here, so spanning batches
                // queued right behind this one (nothing in between for
                // anyone) join its group: a run of multi-key commands pays
                // one meeting, not one each.
                let group = gather(&rx, batch, &mut held, |job| {
                    matches!(job, Job::Lead(next, meeting)
                            if meeting.follows_directly && next.checkpoint.is_none())
                });
                commit_or_fail(&inner, &group, &mut persisted_version);
                rendezvous.done.wait();
                continue;
            }
            Job::Follow(rendezvous) => {
                // Committed by the lead with an earlier meeting (it set the
                // flag while this thread waited at that meeting).
                if !rendezvous.merged.load(Ordering::Acquire) {
                    rendezvous.arrived.wait();
                    rendezvous.done.wait();
                }
                continue;
            }
        };
        let group = gather(&rx, first, &mut held, |job| matches!(job, Job::Batch(_)));
        commit_or_fail(&inner, &group, &mut persisted_version);
    }
}

/// Commits a group; if that panics (a bug), the group is given up on like
/// one the disk refused, so that its tickets resolve and its fences leave:
/// a writer that died with them held would make every later ticket wait
/// for ever (completions go in `seq` order). The writer lives on.
fn commit_or_fail(inner: &Inner, group: &[CommitBatch], persisted_version: &mut u64) {
    let committed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        commit_group(inner, group, &write_options(inner), persisted_version)
    }));
    if committed.is_err() {
        tracing::error!(
            batches = group.len(),
            "the writer panicked while committing a group; its clients are told it failed"
        );
        roll_back(inner, group);
    }
}

/// A group: `first` and whatever else is queued (up to `MAX_GROUP_BYTES`)
/// that `accept` takes; the first job it refuses is kept in `held`, to go
/// next. A `Lead` taken is marked merged, so its followers skip it.
fn gather(
    rx: &Receiver<Job>,
    first: CommitBatch,
    held: &mut Option<Job>,
    accept: impl Fn(&Job) -> bool,
) -> Vec<CommitBatch> {
    let mut group = vec![first];
    let mut bytes: usize = 0;
    while bytes < MAX_GROUP_BYTES {
        let Ok(job) = rx.try_recv() else {
            break;
        };
        if !accept(&job) {
            *held = Some(job);
            break;
        }
        let next = match job {
            Job::Batch(next) => next,
            Job::Lead(next, meeting) => {
                meeting.merged.store(true, Ordering::Release);
                next
            }
            follow @ Job::Follow(_) => {
                *held = Some(follow);
                break;
            }
        };
        bytes += next.bytes();
        group.push(next);
    }
    group
}

fn commit_group(
    inner: &Inner,
    group: &[CommitBatch],
    opts: &WriteOptions,
    persisted_version: &mut u64,
) {
    // Key-count deltas of this group, written in the same atomic batch as
    // merge operands (summed by the System CF's merge operator, so writers
    // need not agree on a total); applied in memory only once RocksDB has
    // them. A reset (only ever in a batch that has every writer stopped)
    // replaces what came before it.
    let mut resets: BTreeSet<u8> = BTreeSet::new();
    let mut deltas: BTreeMap<u8, (i64, i64)> = BTreeMap::new();
    for batch in group {
        for &db in &batch.count_resets {
            resets.insert(db);
            deltas.remove(&db);
        }
        for &(db, keys, expires) in &batch.count_deltas {
            let entry = deltas.entry(db).or_default();
            entry.0 += keys;
            entry.1 += expires;
        }
    }
    #[cfg(test)]
    tests_support::maybe_panic(group);
    let max_version = group.iter().map(|b| b.max_version).max().unwrap_or(0);
    // A group with swaps has every writer stopped (they span them all), so
    // swaps are written in submit order, each onto the map before it.
    let map_after = inner.db_map.map_after(group);
    // Once writes are already failing, a group gets one attempt: retrying
    // each queued group for a second would stall shutdown and everyone.
    let retries = if inner.write_error_text().is_some() {
        1
    } else {
        RETRIES
    };
    let (records, replays) = replay_records(inner, group);
    let mut attempt = 0;
    loop {
        let mut wb = WriteBatch::default();
        // The group's writes go in sorted by key (a stable sort, so one
        // key's writes keep their batch order): RocksDB's skiplist reuses
        // the last insert's position, and a near neighbour costs far fewer
        // comparisons than a random key, which the memtable insert of an
        // unsorted group was (half the writer's time under SET -P 16). A
        // range delete closes a segment: writes before it are emitted
        // before it, and those after it after.
        let mut segment: Vec<(&[u8], &Option<Bytes>)> = Vec::new();
        for (batch, record) in group.iter().zip(&records) {
            if let Some(record) = record {
                wb.put_log_data(record);
            }
            if !batch.range_deletes.is_empty() {
                put_sorted(inner, &mut wb, &mut segment);
            }
            for (cf, start, end) in &batch.range_deletes {
                if let Some(handle) = inner.cf(*cf) {
                    wb.delete_range_cf(handle, start, end);
                }
            }
            segment.extend(batch.writes.iter().map(|(k, v)| (k.as_slice(), v)));
        }
        put_sorted(inner, &mut wb, &mut segment);
        if let Some(system) = inner.cf(Cf::System) {
            for &db in &resets {
                wb.put_cf(
                    system,
                    crate::system::count_key(db),
                    crate::system::encode_counts(0, 0),
                );
            }
            for (&db, &(keys, expires)) in &deltas {
                wb.merge_cf(
                    system,
                    crate::system::count_key(db),
                    crate::system::encode_counts(keys, expires),
                );
            }
            if let Some(map) = &map_after {
                wb.put_cf(system, crate::system::DB_MAP_KEY, map);
            }
            if max_version > *persisted_version {
                // Merged as a maximum: writers may land in any order.
                wb.merge_cf(
                    system,
                    crate::system::VERSION_KEY,
                    max_version.to_be_bytes(),
                );
            }
        }
        match inner.db.write_opt(wb, opts) {
            Ok(()) => break,
            Err(e) => {
                attempt += 1;
                tracing::error!(error = %e, attempt, "write to RocksDB failed; refusing new writes");
                inner.set_write_error(Some(e.into_string()));
                if attempt >= retries {
                    roll_back(inner, group);
                    return;
                }
                std::thread::sleep(RETRY_PAUSE);
            }
        }
    }
    inner.set_write_error(None);
    if let Some(map) = map_after {
        inner.db_map.swaps_committed(group, map);
    }
    if max_version > *persisted_version {
        *persisted_version = max_version;
    }
    for &db in &resets {
        inner.counts.set(db, 0, 0);
    }
    for (&db, &(keys, expires)) in &deltas {
        inner.counts.add(db, keys, expires);
    }
    // Hot tier: in commit order, after RocksDB, before the overlay forgets.
    for batch in group {
        if !batch.range_deletes.is_empty() {
            inner.hot.clear();
            inner.coll.clear();
        }
        for (key, value) in &batch.writes {
            if key.first() == Some(&(Cf::Meta as u8)) {
                match value {
                    Some(record) => inner.hot.put(&key[1..], record),
                    None => inner.hot.remove(&key[1..]),
                }
            }
        }
    }
    forget_committed(inner, group);
    inner.stats.commit_groups.fetch_add(1, Ordering::Relaxed);
    inner
        .stats
        .commits
        .fetch_add(group.len() as u64, Ordering::Relaxed);
    let replays = replays
        .into_iter()
        .zip(group)
        .map(|(record, batch)| record.map(|r| (batch.client, r)));
    inner
        .completions
        .finish(
            completions(inner, group, true)
                .zip(replays)
                .map(|(mut c, replay)| {
                    c.replay = replay;
                    c
                }),
        );
    inner.drained.notify_waiters();
}

/// Each batch's replay record twice over: the WAL's, in which a value
/// the batch also writes as a string's meta record is a reference to that
/// record (so the WAL holds each SET's value once: changes.rs
/// `encode_log_record_with`), and, while replication listens, the replay
/// sink's, whole.
#[allow(clippy::type_complexity)]
fn replay_records(
    inner: &Inner,
    group: &[CommitBatch],
) -> (Vec<Option<Bytes>>, Vec<Option<Bytes>>) {
    let replaying = inner.completions.replaying();
    // Puts of each meta key by the group's batches so far: a reference
    // names the n-th put of its key in the WAL batch.
    let mut meta_puts: HashMap<&[u8], u32> = HashMap::new();
    let mut wal = Vec::with_capacity(group.len());
    let mut sink = Vec::with_capacity(group.len());
    for batch in group {
        if batch.commands.is_empty() {
            wal.push(None);
            sink.push(None);
        } else {
            let pdb = inner.db_map.physical(batch.db);
            let mut referred = false;
            let record = encode_log_record_with(batch.db, &batch.commands, |key, value| {
                let raw = overlay_key(Cf::Meta, &meta_key(pdb, key));
                let written = batch.writes.get(&raw)?.as_deref()?;
                let same = inline_string_body(written)? == value;
                referred |= same;
                same.then(|| (pdb, meta_puts.get(&raw[1..]).copied().unwrap_or(0)))
            });
            let record = Bytes::from(record);
            sink.push(replaying.then(|| {
                if referred {
                    Bytes::from(encode_log_record(batch.db, &batch.commands))
                } else {
                    record.clone()
                }
            }));
            wal.push(Some(record));
        }
        for (key, value) in &batch.writes {
            if key.first() == Some(&(Cf::Meta as u8)) && value.is_some() {
                *meta_puts.entry(&key[1..]).or_default() += 1;
            }
        }
    }
    (wal, sink)
}

/// Links a cut's checkpoint (hard links to the SST files, the manifest and
/// a copy of the live WAL) and records how it went.
fn link_checkpoint(inner: &Inner, job: &crate::batch::CheckpointJob) {
    let outcome = rocksdb::checkpoint::Checkpoint::new(&inner.db)
        .and_then(|c| c.create_checkpoint(&job.dest))
        .map_err(|e| e.into_string());
    *job.outcome.lock() = Some(outcome);
}

/// Takes a written group's entries and fences out of the overlay, in an
/// order in which every reader sees the committed state at each step:
/// first the entries a fence of the group hides (invisible either way),
/// then the fences (RocksDB now holds the flush and what came after it),
/// then the entries written at or after a flush. Removing all entries
/// before the fences left a moment in which a key written after a flush
/// read as missing, or its meta was found without its members.
fn forget_committed(inner: &Inner, group: &[CommitBatch]) {
    let fences: Vec<(u8, u64)> = group
        .iter()
        .flat_map(|b| b.flushes.iter().map(move |&pdb| (pdb, b.seq)))
        .collect();
    let shown_through_fence = |seq: u64, raw: &[u8]| {
        let cf = raw.first().and_then(|&b| Cf::from_u8(b));
        let pdb = cf.and_then(|cf| crate::overlay::pdb_of_raw(cf, &raw[1..]));
        pdb.is_some_and(|pdb| fences.iter().any(|&(p, s)| p == pdb && seq >= s))
    };
    let entries = || {
        group
            .iter()
            .flat_map(|b| b.writes.keys().map(move |k| (b.seq, k)))
    };
    inner
        .overlay
        .remove_committed(entries().filter(|(seq, k)| !shown_through_fence(*seq, k)));
    for &(pdb, seq) in &fences {
        inner.overlay.remove_fence(pdb, seq);
    }
    if !fences.is_empty() {
        inner
            .overlay
            .remove_committed(entries().filter(|(seq, k)| shown_through_fence(*seq, k)));
    }
}

/// The completions of a group written (`ok`) or given up on. Whether the
/// change stream has a listener is asked once per group: the count takes
/// the channel's lock.
fn completions<'a>(
    inner: &'a Inner,
    group: &'a [CommitBatch],
    ok: bool,
) -> impl Iterator<Item = Completion> + 'a {
    let listened = ok && inner.completions.changes.receiver_count() > 0;
    group.iter().map(move |batch| Completion {
        seq: batch.seq,
        ok,
        change: listened.then(|| change_of(inner, batch)),
        events: if ok { batch.events.clone() } else { Vec::new() },
        ticket: batch.ticket.clone(),
        replay: None,
        cut: false,
    })
}

/// Adds `writes` to `wb` in key order (each key's writes in their original
/// order) and empties it. Each meta record written also writes its header
/// to the `facts` column family (removed with it), in the same batch: the
/// two never disagree in RocksDB.
fn put_sorted(inner: &Inner, wb: &mut WriteBatch, writes: &mut Vec<(&[u8], &Option<Bytes>)>) {
    writes.sort_by(|a, b| a.0.cmp(b.0));
    let facts = inner.cf(Cf::Facts);
    for (key, value) in writes.drain(..) {
        let Some(cf) = key.first().and_then(|&b| Cf::from_u8(b)) else {
            continue;
        };
        let Some(handle) = inner.cf(cf) else {
            continue;
        };
        let facts = facts.filter(|_| cf == Cf::Meta);
        match value {
            Some(v) => {
                wb.put_cf(handle, &key[1..], v);
                if let Some(facts) = facts {
                    let header = Facts::header_len(v).unwrap_or(v.len());
                    wb.put_cf(facts, &key[1..], &v[..header]);
                }
            }
            None => {
                wb.delete_cf(handle, &key[1..]);
                if let Some(facts) = facts {
                    wb.delete_cf(facts, &key[1..]);
                }
            }
        }
    }
}

/// The change-stream record of a committed batch.
fn change_of(inner: &Inner, batch: &CommitBatch) -> Arc<Change> {
    let mut whole_dbs = batch.flushes.clone();
    // A flush of an empty database only resets its counter (txn.rs):
    // still a flush to the stream's consumers (tracking's invalidation).
    for &pdb in &batch.count_resets {
        if !whole_dbs.contains(&pdb) {
            whole_dbs.push(pdb);
        }
    }
    for swap in &batch.swaps {
        // After the swap: the physical databases now behind a and b.
        whole_dbs.push(inner.db_map.physical(swap.a));
        whole_dbs.push(inner.db_map.physical(swap.b));
    }
    Arc::new(Change {
        seq: batch.seq,
        db: batch.db,
        client: batch.client,
        // Derived here, only when someone listens.
        keys: batch.changed_keys(),
        whole_dbs,
        flushed: !batch.flushes.is_empty() || !batch.count_resets.is_empty(),
        command_heads: crate::changes::command_heads(&batch.commands),
        events: batch.events.clone(),
    })
}

/// Gives up on a group that cannot be written: nothing of it reaches
/// RocksDB, its writes leave the overlay, and its clients learn it failed.
fn roll_back(inner: &Inner, group: &[CommitBatch]) {
    inner.overlay.remove_committed(
        group
            .iter()
            .flat_map(|b| b.writes.keys().map(move |k| (b.seq, k))),
    );
    for batch in group {
        for &pdb in &batch.flushes {
            inner.overlay.remove_fence(pdb, batch.seq);
        }
    }
    inner.db_map.swaps_abandoned(group);
    for batch in group {
        inner.counts.given_up(batch);
    }
    inner.hot.clear();
    inner.coll.clear();
    inner.completions.finish(completions(inner, group, false));
    inner.drained.notify_waiters();
}

/// While writes are refused, checks once a second whether RocksDB accepts
/// a write again (e.g. after space was freed).
fn probe_after_error(inner: &Inner, opts: &WriteOptions) {
    if inner.write_error_text().is_none() {
        return;
    }
    let Some(system) = inner.cf(Cf::System) else {
        return;
    };
    let mut wb = WriteBatch::default();
    wb.put_cf(system, PROBE_KEY, crate::now_ms().to_be_bytes());
    if inner.db.write_opt(wb, opts).is_ok() {
        tracing::warn!("RocksDB accepts writes again");
        inner.set_write_error(None);
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    use crate::batch::CommitBatch;
    use crate::Cf;

    /// A batch that writes this System-CF key makes the writer panic (to
    /// test that a writer's panic fails its batches instead of stalling
    /// every later one).
    pub(crate) const PANIC_KEY: &[u8] = b"\xffwriter-panic";

    pub(crate) fn maybe_panic(group: &[CommitBatch]) {
        let key = crate::overlay::overlay_key(Cf::System, PANIC_KEY);
        if group.iter().any(|b| b.writes.contains_key(&key)) {
            panic!("writer panic requested by a test");
        }
    }
}
