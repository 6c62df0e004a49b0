//! The group-commit writer: one thread applies every command's batch to
//! RocksDB. It takes whatever has queued up since its last write, folds it
//! into one `WriteBatch` (plus the key counters and the version high-water
//! mark, so they are crash-consistent with the data) and writes it with the
//! configured sync policy. Each batch also writes its replay record into
//! the WAL (`put_log_data`). Network threads never wait on the WAL or on a
//! write stall; a connection awaits the tickets of its batches, which the
//! writer resolves after the write, and the writer then publishes each
//! batch, in commit order, to the change stream.
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
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::changes::{encode_log_record, Change};
use crate::engine::Inner;
use crate::ticket::Ticket;
use crate::{Cf, SyncPolicy};

/// One command's writes and effects, in commit order.
#[derive(Default)]
pub(crate) struct CommitBatch {
    pub seq: u64,
    pub writes: BTreeMap<Vec<u8>, Option<Bytes>>,
    pub range_deletes: Vec<(Cf, Vec<u8>, Vec<u8>)>,
    pub count_deltas: Vec<(u8, i64, i64)>,
    pub count_resets: Vec<u8>,
    pub max_version: u64,
    /// Lock stripes of the keys written.
    pub stripes: Vec<usize>,
    /// Physical databases flushed (fenced in the overlay until committed).
    pub flushes: Vec<u8>,
    /// Logical databases swapped (applied to the map at submit).
    pub swap: Option<(u8, u8)>,
    /// For a swap: what the watched keys of both databases were (watch.rs).
    pub swap_checks: Vec<crate::watch::SwapCheck>,
    /// Logical database of the replay commands.
    pub db: u8,
    /// The client whose command made the batch (0: the server).
    pub client: u64,
    /// The replay form of the batch's commands.
    pub commands: Vec<Vec<Bytes>>,
    /// Keyspace events to publish once committed.
    pub events: Vec<crate::changes::Event>,
    /// Set by submit.
    pub ticket: Option<Ticket>,
}

impl CommitBatch {
    fn bytes(&self) -> usize {
        self.writes
            .iter()
            .map(|(k, v)| k.len() + v.as_ref().map_or(0, |v| v.len()))
            .sum()
    }
}

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

pub(crate) fn run(inner: Arc<Inner>, rx: Receiver<CommitBatch>) {
    let mut persisted_version = inner.next_version.load(Ordering::Acquire);
    loop {
        let first = match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(batch) => batch,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                probe_after_error(&inner, &write_options(&inner));
                continue;
            }
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
        };
        let mut group = vec![first];
        let mut bytes: usize = 0;
        while bytes < MAX_GROUP_BYTES {
            match rx.try_recv() {
                Ok(next) => {
                    bytes += next.bytes();
                    group.push(next);
                }
                Err(_) => break,
            }
        }
        commit_group(
            &inner,
            &group,
            &write_options(&inner),
            &mut persisted_version,
        );
    }
}

fn commit_group(
    inner: &Inner,
    group: &[CommitBatch],
    opts: &WriteOptions,
    persisted_version: &mut u64,
) {
    // Key counters after this group, computed before writing so they go into
    // the same atomic batch; applied in memory only once RocksDB has them.
    let mut touched: BTreeMap<u8, (i64, i64)> = BTreeMap::new();
    for batch in group {
        for &db in &batch.count_resets {
            touched.insert(db, (0, 0));
        }
        for &(db, keys, expires) in &batch.count_deltas {
            let entry = touched.entry(db).or_insert_with(|| inner.counts.get(db));
            entry.0 += keys;
            entry.1 += expires;
        }
    }
    let max_version = group.iter().map(|b| b.max_version).max().unwrap_or(0);
    // Once writes are already failing, a group gets one attempt: retrying
    // each queued group for a second would stall shutdown and everyone.
    let retries = if inner.write_error_text().is_some() {
        1
    } else {
        RETRIES
    };
    let mut attempt = 0;
    loop {
        let mut wb = WriteBatch::default();
        for batch in group {
            if !batch.commands.is_empty() {
                wb.put_log_data(encode_log_record(batch.db, &batch.commands));
            }
            for (cf, start, end) in &batch.range_deletes {
                if let Some(handle) = inner.cf(*cf) {
                    wb.delete_range_cf(handle, start, end);
                }
            }
            for (key, value) in &batch.writes {
                let Some(handle) = key
                    .first()
                    .and_then(|&b| Cf::from_u8(b))
                    .and_then(|cf| inner.cf(cf))
                else {
                    continue;
                };
                match value {
                    Some(v) => wb.put_cf(handle, &key[1..], v),
                    None => wb.delete_cf(handle, &key[1..]),
                }
            }
        }
        if let Some(system) = inner.cf(Cf::System) {
            for (&db, &(keys, expires)) in &touched {
                wb.put_cf(
                    system,
                    crate::engine::count_key(db),
                    crate::engine::encode_counts(keys, expires),
                );
            }
            if max_version > *persisted_version {
                wb.put_cf(
                    system,
                    crate::engine::VERSION_KEY,
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
    if max_version > *persisted_version {
        *persisted_version = max_version;
    }
    for (&db, &(keys, expires)) in &touched {
        inner.counts.set(db, keys, expires);
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
    inner.stats.commit_groups.fetch_add(1, Ordering::Relaxed);
    inner
        .stats
        .commits
        .fetch_add(group.len() as u64, Ordering::Relaxed);
    // The stream has a change, and subscribers the keyspace events, before
    // its client hears it is done.
    publish(inner, group);
    if group.iter().any(|b| !b.events.is_empty()) {
        let sink = inner.event_sink.read().clone();
        if let Some(sink) = sink {
            for batch in group.iter().filter(|b| !b.events.is_empty()) {
                sink(&batch.events);
            }
        }
    }
    for batch in group {
        if let Some(ticket) = &batch.ticket {
            ticket.resolve(true);
        }
    }
    inner.drained.notify_waiters();
}

/// Hands committed batches, in order, to the change stream.
fn publish(inner: &Inner, group: &[CommitBatch]) {
    if inner.changes.receiver_count() == 0 {
        return;
    }
    for batch in group {
        let mut whole_dbs = batch.flushes.clone();
        if let Some((a, b)) = batch.swap {
            // After the swap: the physical databases now behind a and b.
            whole_dbs.push(inner.physical(a));
            whole_dbs.push(inner.physical(b));
        }
        let _ = inner.changes.send(Arc::new(Change {
            seq: batch.seq,
            db: batch.db,
            client: batch.client,
            // Derived here, only when someone listens.
            keys: crate::txn::changed_keys(&batch.writes),
            whole_dbs,
            commands: batch.commands.clone(),
            events: batch.events.clone(),
        }));
    }
}

/// Gives up on a group that cannot be written: nothing of it reaches
/// RocksDB, its writes leave the overlay, and its clients learn it failed.
fn roll_back(inner: &Inner, group: &[CommitBatch]) {
    inner.overlay.remove_committed(
        group
            .iter()
            .flat_map(|b| b.writes.keys().map(move |k| (b.seq, k))),
    );
    for batch in group.iter().rev() {
        for &pdb in &batch.flushes {
            inner.overlay.remove_fence(pdb, batch.seq);
        }
        if let Some((a, b)) = batch.swap {
            inner.swap_map(a, b);
        }
    }
    inner.hot.clear();
    inner.coll.clear();
    for batch in group {
        if let Some(ticket) = &batch.ticket {
            ticket.resolve(false);
        }
    }
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
