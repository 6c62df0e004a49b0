//! RocksDB's C++ library for the `rocksdb` crate, built here instead of by
//! librocksdb-sys, for two reasons that shorten Firn's first build (see
//! build.rs and docs/architecture.md, "The first build"):
//!
//! - the 55 source files whose objects the `firn` binary never links (the
//!   linker extracts none of them from the archive: BlobDB, the persistent
//!   and simulated caches, Cassandra's merge operator, fault injection,
//!   sync points...) are not compiled; `unlinked.txt` lists them;
//! - librocksdb-sys's build script no longer holds the C++ compile (it only
//!   runs bindgen when `ROCKSDB_LIB_DIR` is set, as scripts/env.sh does), so
//!   the crates between it and firn-server (rocksdb, firn-storage) compile
//!   while RocksDB does.
//!
//! The crate has no Rust code: it only puts `librocksdb.a` where the linker
//! looks for the `-lrocksdb` librocksdb-sys asks for. Whatever links
//! firn-storage must depend on it (firn-server does; firn-storage's own
//! tests as a dev-dependency).
