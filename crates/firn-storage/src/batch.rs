//! A command's batch on its way from its transaction to a writer: its
//! writes and effects ([`CommitBatch`]), and its SWAPDBs with what WATCH
//! needs to judge them ([`Swap`], [`SwapCheck`]). Made by `Txn::commit`,
//! queued by `Inner::submit`, written by a writer (writer.rs).

use bytes::Bytes;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use crate::changes::Event;
use crate::keys;
use crate::ticket::Ticket;
use crate::Cf;

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
    /// Logical databases swapped, in order (applied to the live map at
    /// submit, to the committed map and RocksDB when written).
    pub swaps: Vec<Swap>,
    /// Logical database of the replay commands.
    pub db: u8,
    /// The client whose command made the batch (0: the server).
    pub client: u64,
    /// The replay form of the batch's commands.
    pub commands: Vec<Vec<Bytes>>,
    /// Keyspace events to publish once committed.
    pub events: Vec<Event>,
    /// What its writes signal, in write order (signals.rs); `None` when
    /// nobody listened while it ran.
    pub signals: Option<crate::signals::Signals>,
    /// Set by submit.
    pub ticket: Option<Ticket>,
    /// A checkpoint cut (`Engine::checkpoint_cut`): no writes; the writer
    /// links the checkpoint while every writer is stopped at it.
    pub checkpoint: Option<Arc<CheckpointJob>>,
}

/// Where a cut's checkpoint goes, and how linking it went.
pub(crate) struct CheckpointJob {
    pub dest: std::path::PathBuf,
    pub outcome: parking_lot::Mutex<Option<Result<(), String>>>,
}

impl CommitBatch {
    /// Bytes of its writes, keys and values (a writer's group is bounded
    /// by them).
    pub(crate) fn bytes(&self) -> usize {
        self.writes
            .iter()
            .map(|(k, v)| k.len() + v.as_ref().map_or(0, |v| v.len()))
            .sum()
    }

    /// `(physical db, user key)` of every key the batch writes, from the
    /// raw keys of its meta and member writes.
    pub(crate) fn changed_keys(&self) -> Vec<(u8, Bytes)> {
        let mut keys: Vec<(u8, Bytes)> = Vec::new();
        let mut seen: HashSet<(u8, &[u8])> = HashSet::new();
        for raw in self.writes.keys() {
            let found = match raw.first().and_then(|&b| Cf::from_u8(b)) {
                Some(Cf::Meta) => keys::parse_meta_key(&raw[1..]),
                Some(Cf::Data | Cf::ZScore | Cf::Stream) => {
                    keys::parse_member_key(&raw[1..]).map(|(db, key, _)| (db, key))
                }
                _ => None,
            };
            if let Some((pdb, key)) = found {
                if seen.insert((pdb, key)) {
                    keys.push((pdb, Bytes::copy_from_slice(key)));
                }
            }
        }
        keys
    }
}

/// SWAPDB of logical databases `a` and `b`, with what the watched keys of
/// both were at that point of its transaction (watch.rs).
#[derive(Clone, Debug)]
pub(crate) struct Swap {
    pub a: u8,
    pub b: u8,
    pub checks: Vec<SwapCheck>,
}

/// Whether a key is in a database, as a swap sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Presence {
    Absent,
    Live,
    /// Present but past its deadline (not yet deleted).
    Expired,
}

/// A watched key of a swapped database, looked up in both databases
/// before the swap: `here` in its own, `there` in the other. Made by
/// `Txn::check_swap_watches`, judged by the WATCH registry (watch.rs).
#[derive(Clone, Debug)]
pub(crate) struct SwapCheck {
    pub db: u8,
    pub key: Bytes,
    pub here: Presence,
    pub there: Presence,
}
