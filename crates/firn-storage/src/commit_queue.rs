//! Between submit and the writer threads (writer.rs): one queue per writer
//! and what is handed on it ([`Job`]), the choice of queue for a batch
//! ([`CommitQueue::send`]: its keys' writer, or every writer for a batch
//! that spans them), and on the way back the completion of written batches
//! in submit order ([`Completions`]: the change stream, the keyspace
//! events, the tickets).

use crossbeam_channel::Sender;
use parking_lot::{Mutex, RwLock};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Barrier};

use crate::batch::CommitBatch;
use crate::changes::{Change, ChangeSender, Event};
use crate::error::{Result, StorageError};
use crate::ticket::Ticket;
use crate::Cf;

/// Receives the keyspace events of each committed batch (see
/// `Engine::set_event_sink`).
pub type EventSink = Arc<dyn Fn(&[Event]) + Send + Sync>;

/// What the replay sink (see `Engine::set_replay_sink`) is handed for a
/// committed batch, in commit order, before its ticket resolves.
pub enum Replayed<'a> {
    /// The batch's replay record: its logical db, then its commands as
    /// RESP (`encode_log_record`), made by client `client` (0: the server).
    Record {
        client: u64,
        record: &'a bytes::Bytes,
    },
    /// A checkpoint cut (`Engine::checkpoint_cut`): the checkpoint holds
    /// every batch handed before this one and none after.
    Cut,
}

/// Receives each committed batch's replay record (replication's backlog).
pub type ReplaySink = Arc<dyn Fn(u64, Replayed<'_>) + Send + Sync>;

/// What a writer thread is handed.
pub(crate) enum Job {
    /// A batch whose keys all belong to this writer.
    Batch(CommitBatch),
    /// A batch ordered against every writer: this one commits it once all
    /// the others have stopped at it.
    Lead(CommitBatch, Arc<Rendezvous>),
    /// Another writer's `Lead`: commit what came before, then wait for it.
    Follow(Arc<Rendezvous>),
}

/// Where every writer meets for a batch that spans them.
pub(crate) struct Rendezvous {
    pub arrived: Barrier,
    pub done: Barrier,
    /// No batch went to any single writer between the previous spanning
    /// batch and this one: the lead may commit both in one group.
    pub follows_directly: bool,
    /// Set by the lead when it committed this batch with the previous one;
    /// followers then skip it.
    pub merged: AtomicBool,
}

impl Rendezvous {
    fn new(writers: usize, follows_directly: bool) -> Rendezvous {
        Rendezvous {
            arrived: Barrier::new(writers),
            done: Barrier::new(writers),
            follows_directly,
            merged: AtomicBool::new(false),
        }
    }
}

/// The writer of `batch` out of `writers`, or `None` when it must be
/// ordered against all of them: its keys' stripes map to several writers,
/// it has no key (a barrier, a server record), or it acts on whole
/// databases (flush, swap, counter reset).
fn writer_of(batch: &CommitBatch, writers: usize) -> Option<usize> {
    if batch.checkpoint.is_some() {
        return None;
    }
    if writers == 1 {
        return Some(0);
    }
    let whole = !batch.flushes.is_empty()
        || !batch.swaps.is_empty()
        || !batch.range_deletes.is_empty()
        || !batch.count_resets.is_empty()
        || batch
            .writes
            .keys()
            .any(|k| k.first() == Some(&(Cf::System as u8)));
    let first = *batch.stripes.first()? % writers;
    (!whole && batch.stripes.iter().all(|s| s % writers == first)).then_some(first)
}

/// The writers' queues, in submit order (used under the submit lock).
pub(crate) struct CommitQueue {
    next_seq: u64,
    /// One queue per writer thread; `None` once shutting down.
    writers: Option<Vec<Sender<Job>>>,
    /// A batch went to a single writer since the last spanning batch.
    single_since_spanning: bool,
}

impl CommitQueue {
    pub(crate) fn new(writers: Vec<Sender<Job>>) -> CommitQueue {
        CommitQueue {
            next_seq: 0,
            writers: Some(writers),
            single_since_spanning: true,
        }
    }

    /// The next batch's sequence number; an error once shutting down.
    pub(crate) fn next_seq(&mut self) -> Result<u64> {
        if self.writers.is_none() {
            return Err(StorageError::WriteFailed("server is shutting down".into()));
        }
        self.next_seq += 1;
        Ok(self.next_seq)
    }

    /// How many batches were given a sequence number.
    pub(crate) fn submitted(&self) -> u64 {
        self.next_seq
    }

    /// Drops the writers' queues: each writer stops once it has written
    /// what it was handed.
    pub(crate) fn close(&mut self) {
        self.writers = None;
    }

    /// Hands `batch` to its writer, or to every writer when it spans them.
    /// False when a writer thread is gone (or the queues are closed).
    pub(crate) fn send(&mut self, batch: CommitBatch) -> bool {
        let Some(writers) = &self.writers else {
            return false;
        };
        match writer_of(&batch, writers.len()) {
            Some(w) => {
                self.single_since_spanning = true;
                writers[w].send(Job::Batch(batch)).is_ok()
            }
            None => {
                // Every queue gets its place in the same order: this runs
                // under the submit lock.
                let rendezvous = Arc::new(Rendezvous::new(
                    writers.len(),
                    !std::mem::replace(&mut self.single_since_spanning, false),
                ));
                writers[1..]
                    .iter()
                    .all(|f| f.send(Job::Follow(rendezvous.clone())).is_ok())
                    && writers[0].send(Job::Lead(batch, rendezvous)).is_ok()
            }
        }
    }
}

/// What is left to do for a batch once it is written (or given up on).
pub(crate) struct Completion {
    pub seq: u64,
    pub ok: bool,
    pub change: Option<Arc<Change>>,
    pub events: Vec<Event>,
    pub ticket: Option<Ticket>,
    /// The replay record, kept only while a replay sink is set.
    pub replay: Option<(u64, bytes::Bytes)>,
    /// A checkpoint cut's batch.
    pub cut: bool,
}

/// Completes batches in submit (`seq`) order, whichever writer wrote them:
/// the change stream, the keyspace events and the tickets see one order,
/// the order commands ran in, as with a single writer. A batch written
/// while an earlier one is still being written elsewhere waits here (its
/// data is already in RocksDB); the writer that completes the earlier one
/// completes both.
pub(crate) struct Completions {
    queue: Mutex<CompletionQueue>,
    /// Committed batches, in order, for WATCH, notifications, replication.
    pub(crate) changes: ChangeSender,
    /// Where each committed batch's keyspace events go, before its ticket
    /// resolves (the server's publisher).
    pub(crate) event_sink: RwLock<Option<EventSink>>,
    /// Where each committed batch's replay record goes (replication).
    pub(crate) replay_sink: RwLock<Option<ReplaySink>>,
}

struct CompletionQueue {
    next: u64,
    ready: BTreeMap<u64, Completion>,
}

impl Default for Completions {
    fn default() -> Completions {
        Completions {
            queue: Mutex::new(CompletionQueue {
                next: 1,
                ready: BTreeMap::new(),
            }),
            changes: crate::changes::channel(),
            event_sink: RwLock::new(None),
            replay_sink: RwLock::new(None),
        }
    }
}

impl Completions {
    /// How many batches (the first `seq`s) have completed.
    pub(crate) fn completed(&self) -> u64 {
        self.queue.lock().next - 1
    }

    /// Completes a batch that never reached a writer.
    pub(crate) fn fail(&self, ticket: Ticket) {
        let done = Completion {
            seq: ticket.seq(),
            ok: false,
            change: None,
            events: Vec::new(),
            ticket: Some(ticket),
            replay: None,
            cut: false,
        };
        self.finish(std::iter::once(done));
    }

    /// Whether a replay sink wants the batches' records.
    pub(crate) fn replaying(&self) -> bool {
        self.replay_sink.read().is_some()
    }

    /// Completes `done`, and every batch after it that was waiting for it.
    pub(crate) fn finish(&self, done: impl Iterator<Item = Completion>) {
        let replay_sink = self.replay_sink.read().clone();
        let mut queue = self.queue.lock();
        let queue = &mut *queue;
        queue.ready.extend(done.map(|c| (c.seq, c)));
        // Completed under the lock, so that two writers never interleave.
        while let Some(entry) = queue.ready.first_entry() {
            if *entry.key() != queue.next {
                break;
            }
            let c = entry.remove();
            queue.next += 1;
            // The stream has a change, and subscribers the keyspace
            // events, before its client hears it is done.
            if let Some(change) = c.change {
                let _ = self.changes.send(change);
            }
            if let (Some(sink), true) = (&replay_sink, c.ok) {
                if let Some((client, record)) = &c.replay {
                    sink(
                        c.seq,
                        Replayed::Record {
                            client: *client,
                            record,
                        },
                    );
                } else if c.cut {
                    sink(c.seq, Replayed::Cut);
                }
            }
            if !c.events.is_empty() {
                let sink = self.event_sink.read().clone();
                if let Some(sink) = sink {
                    sink(&c.events);
                }
            }
            if let Some(ticket) = &c.ticket {
                ticket.resolve(c.ok);
            }
        }
    }
}
