//! Firn's storage engine: typed operations over RocksDB.
//!
//! RocksDB is the source of truth. Every command runs as a [`Txn`]: it reads
//! through the pending-write overlay and RocksDB's memory tier (memtable +
//! block cache) and returns [`StorageError::Incomplete`] instead of touching
//! the disk; its writes are queued as one batch for the group-commit writer.
//! The layer above decides where to re-run an incomplete command. This crate
//! knows nothing about RESP.

mod batch;
mod changes;
mod checkpoint_load;
mod collcache;
mod collection;
mod commit_queue;
mod dbmap;
mod engine;
mod error;
mod expire;
mod facts;
mod figures;
mod hash;
mod hotcache;
pub mod keys;
mod keyspace;
mod limits;
mod list;
pub mod locks;
mod member_filter;
mod memory;
pub mod meta;
mod overlay;
mod set;
mod signals;
mod state;
mod stream;
mod stream_meta;
mod string;
mod system;
#[cfg(test)]
mod test_engine;
mod ticket;
mod tiers;
mod txn;
mod view;
mod wal_replay;
mod watch;
mod writer;
mod zset;
mod zset_args;

#[cfg(test)]
mod tests;

pub use changes::{
    decode_log_record, encode_log_record, notify_class, Change, ChangeReceiver, Event, WalRecord,
};
pub use checkpoint_load::LoadedCheckpoint;
pub use commit_queue::{EventSink, ReplaySink, Replayed};
pub use engine::{Engine, EngineConfig, KeysRequest, OwnedKeysRequest, SubmitListening};
pub use error::{Result, StorageError};
pub use expire::ExpireCycle;
pub use figures::{LevelFigures, ReadTiers, RocksFigures};
pub use keyspace::KeyInfo;
pub use limits::EncodingLimits;
pub use locks::{GrowingGuard, KeyGuard, LockMode};
pub use memory::MemoryUsage;
pub use meta::{Body, Collection, EncodingHint, ExpireAction, Facts, List, Meta, ValueType};
pub use set::intset_value;
pub use signals::{SignalMode, Signals, SubmitListener, Submitted};
pub use state::{EngineStats, SyncPolicy};
pub use stream_meta::{
    AppendError, PendingEntry, StreamConsumer, StreamEntry, StreamGroup, StreamId, StreamMeta,
    StreamNode, Trim, STREAM_LISTPACK_MAX_SIZE,
};
pub use string::CHUNK_SIZE;
pub use ticket::Ticket;
pub use tiers::KeyTiers;
pub use txn::{ReadMode, Savepoint, Txn, TxnParts};
pub use view::{KeyspaceView, RandomPick, ScanPage};
pub use wal_replay::WalReplay;
pub use watch::{WatchedState, Watcher};
pub use zset::score_order_bytes;
pub use zset_args::{LexBound, LexRange, RankLookup, ScoreRange, ZAddFlags, ZAddOutcome};

/// RocksDB column families. `System` is RocksDB's `default` CF and holds
/// Firn's own records (version counter, key counts, the database map).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Cf {
    System = 0,
    Meta = 1,
    Data = 2,
    ZScore = 3,
    Stream = 4,
    Expire = 5,
    /// Each key's meta header alone (`Facts`): what a write of a key whose
    /// value is not in memory consults instead of the whole record.
    Facts = 6,
}

impl Cf {
    pub const ALL: [Cf; 7] = [
        Cf::System,
        Cf::Meta,
        Cf::Data,
        Cf::ZScore,
        Cf::Stream,
        Cf::Expire,
        Cf::Facts,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Cf::System => "default",
            Cf::Meta => "meta",
            Cf::Data => "data",
            Cf::ZScore => "zscore",
            Cf::Stream => "stream",
            Cf::Expire => "expire",
            Cf::Facts => "facts",
        }
    }

    fn from_u8(b: u8) -> Option<Cf> {
        Cf::ALL.get(b as usize).copied()
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
