//! What the tests that need a real engine share: one opened in a temporary
//! directory, and a transaction run to its end. A module of its own, just
//! above engine.rs, so that a value type's tests (hash.rs, zset.rs...) use
//! it without importing the end-to-end tests (tests.rs), which use every
//! module of the crate.

use bytes::Bytes;

use crate::{Engine, EngineConfig, ExpireAction, ReadMode, SyncPolicy};

pub(crate) fn open(dir: &std::path::Path) -> Engine {
    Engine::open(&EngineConfig {
        path: dir.join("db"),
        databases: 16,
        block_cache_bytes: 16 << 20,
        write_buffer_bytes: 4 << 20,
        hot_cache_bytes: 1 << 20,
        sync: SyncPolicy::EverySec,
        writers: 2,
    })
    .expect("open engine")
}

/// Queues one SET in database 0 without waiting for it to be committed.
pub(crate) fn submit_set(engine: &Engine, key: &[u8], expire: ExpireAction) {
    let mut txn = engine.txn(ReadMode::Blocking);
    txn.set_string(0, key, Bytes::from_static(b"v"), expire)
        .expect("set");
    txn.commit().expect("commit");
}

/// Runs `f` in a blocking transaction, commits, and waits for durability.
pub(crate) fn write<T>(
    engine: &Engine,
    f: impl FnOnce(&mut crate::Txn<'_>) -> crate::Result<T>,
) -> T {
    let mut txn = engine.txn(ReadMode::Blocking);
    let out = f(&mut txn).expect("txn body");
    for ticket in txn.commit().expect("commit") {
        ticket.wait_blocking().expect("durable");
    }
    out
}

pub(crate) fn read<T>(
    engine: &Engine,
    f: impl FnOnce(&mut crate::Txn<'_>) -> crate::Result<T>,
) -> T {
    let mut txn = engine.txn(ReadMode::Blocking);
    f(&mut txn).expect("read")
}
