//! What a write signals, as Redis's commands signal it: a key *modified*
//! (`signalModifiedKey`: WATCH aborts, a tracking client is told) and a key
//! *ready* (`signalKeyAsReady`: a client blocked on it may now be served).
//!
//! A transaction records both while someone listens, in the order its
//! commands made their writes (so MSET k2 v k1 v invalidates k2, then k1,
//! as Redis does), from the key of every record it writes. Each command runs
//! in a [`SignalMode`] that its declaration gives: a *quiet* command's
//! writes modify nothing Redis counts (XACK, XCLAIM, XGROUP ...: consumer
//! group state), and the writes of a command that *adds nothing* (the pops,
//! acknowledgements, XDEL, XTRIM) make no key ready. A command can also
//! signal a key explicitly ([`crate::Txn::signal_modified`]) where Redis
//! does although the command is quiet (XGROUP CREATE ... MKSTREAM
//! creating the stream).
//!
//! Submit hands a batch's signals to WATCH (watch.rs) and, synchronously,
//! to the server's [`SubmitListener`] while the submitter still holds its
//! keys' locks: so a tracking client's invalidation is queued, and a
//! blocked client woken, before the write's reply can leave and before any
//! later command on those keys runs.

use bytes::Bytes;

/// `(physical db, key)` lists, in the order the writes were made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signals {
    pub modified: Vec<(u8, Bytes)>,
    pub ready: Vec<(u8, Bytes)>,
}

impl Signals {
    /// The lengths of both lists (a savepoint).
    pub(crate) fn mark(&self) -> (usize, usize) {
        (self.modified.len(), self.ready.len())
    }

    /// Back to a savepoint's lengths.
    pub(crate) fn truncate(&mut self, (modified, ready): (usize, usize)) {
        self.modified.truncate(modified);
        self.ready.truncate(ready);
    }

    /// Records a write to `(pdb, key)` under `mode`. A key written again
    /// right after itself (a collection's members) is recorded once.
    pub(crate) fn record(&mut self, mode: SignalMode, pdb: u8, key: &[u8]) {
        if !mode.quiet {
            push_new(&mut self.modified, pdb, key);
        }
        if !mode.adds_nothing {
            push_new(&mut self.ready, pdb, key);
        }
    }
}

pub(crate) fn push_new(list: &mut Vec<(u8, Bytes)>, pdb: u8, key: &[u8]) {
    if list
        .last()
        .is_some_and(|(db, last)| *db == pdb && last[..] == *key)
    {
        return;
    }
    list.push((pdb, Bytes::copy_from_slice(key)));
}

/// How the command that is running signals its writes (see the module
/// comment); the default signals both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SignalMode {
    pub quiet: bool,
    pub adds_nothing: bool,
}

/// A batch as it is submitted, for the [`SubmitListener`]: its writes are
/// visible to every reader but may not be durable yet, and its submitter
/// still holds its keys' locks.
pub struct Submitted<'a> {
    /// The client whose command made it (0: the server, e.g. expiry).
    pub client: u64,
    /// Keys modified and made ready, `(physical db, key)`, in write order.
    pub signals: &'a Signals,
    /// Physical databases changed whole (FLUSHDB, FLUSHALL, SWAPDB).
    pub whole_dbs: &'a [u8],
    /// The lock stripes of the keys it writes, all held exclusively by
    /// its submitter.
    pub stripes: &'a [usize],
    /// Some of `whole_dbs` were flushed, not only swapped.
    pub flushed: bool,
}

/// The server's side of submit (client-side caching, blocked clients):
/// called synchronously for every batch submitted while
/// `Engine::listen_submits` is held. It must do CPU work only.
pub trait SubmitListener: Send + Sync {
    fn submitted(&self, batch: &Submitted<'_>);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_recorded_in_order_once_per_run_and_by_mode() {
        let mut signals = Signals::default();
        let both = SignalMode::default();
        signals.record(both, 0, b"k2");
        signals.record(both, 0, b"k2");
        signals.record(both, 0, b"k1");
        let mark = signals.mark();
        signals.record(
            SignalMode {
                quiet: true,
                adds_nothing: false,
            },
            0,
            b"s",
        );
        signals.record(
            SignalMode {
                quiet: false,
                adds_nothing: true,
            },
            1,
            b"q",
        );
        let keys = |list: &[(u8, Bytes)]| -> Vec<(u8, Vec<u8>)> {
            list.iter().map(|(db, k)| (*db, k.to_vec())).collect()
        };
        assert_eq!(
            keys(&signals.modified),
            vec![(0, b"k2".to_vec()), (0, b"k1".to_vec()), (1, b"q".to_vec())]
        );
        assert_eq!(
            keys(&signals.ready),
            vec![(0, b"k2".to_vec()), (0, b"k1".to_vec()), (0, b"s".to_vec())]
        );
        signals.truncate(mark);
        assert_eq!(signals.modified.len(), 2);
        assert_eq!(signals.ready.len(), 2);
    }
}
