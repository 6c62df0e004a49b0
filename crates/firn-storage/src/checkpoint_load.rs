//! Loading another Firn's checkpoint into the running engine
//! ([`Engine::load_checkpoint`]): a replica's full sync.
//!
//! The `Engine` handle is cloned all over the server, so the RocksDB
//! object cannot be swapped for one opened on the checkpoint. Instead the
//! live column families are emptied (whole SST files dropped, range
//! deletes for the rest, a compaction that purges both) and the
//! checkpoint's contents are copied in key order into SST files and
//! ingested. Ingested files get a sequence number above the range
//! deletes', so they show over them; with the column family purged first
//! they also land on the bottom level instead of piling up in L0, where
//! a big dataset would stall writes. Memory stays bounded whatever the
//! dataset's size: one iterator over the checkpoint and one SST writer at
//! a time, and the checkpoint's index and filter blocks are charged to
//! the engine's block cache.
//!
//! Then the in-memory state that mirrors the disk is rebuilt from the
//! loaded System CF, as `Engine::open` builds it.

use rocksdb::{
    BottommostLevelCompaction, ColumnFamily, ColumnFamilyDescriptor, CompactOptions,
    IngestExternalFileOptions, Options, ReadOptions, SstFileWriter, WriteBatch, WriteOptions, DB,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use crate::engine::{file_options, Engine};
use crate::error::{Result, StorageError};
use crate::keys::{parse_member_key, PAST_EVERY_KEY};
use crate::member_filter::PinMembers;
use crate::meta::Facts;
use crate::state::Inner;
use crate::system::{SystemRecords, VERSION_KEY};
use crate::Cf;

/// An SST file is closed and a new one begun past this size: big files
/// keep the file count (and the MANIFEST) small, and only the file being
/// written is held in memory, in part.
const SST_FILE_BYTES: u64 = 256 << 20;

/// The scratch directory for SST files, inside the engine's directory so
/// that ingesting them moves them (a hard link), never copies them.
const SCRATCH_DIR: &str = "load-checkpoint.tmp";

/// What [`Engine::load_checkpoint`] loaded, for its log line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadedCheckpoint {
    /// Keys over every database, as the loaded key counts have them.
    pub keys: u64,
    /// RocksDB entries copied, over every column family.
    pub entries: u64,
    /// The bytes of their keys and values.
    pub bytes: u64,
    /// SST files written and ingested.
    pub files: usize,
}

impl Engine {
    /// Replaces everything this engine holds with the checkpoint at `dir`
    /// (another Firn's [`Engine::checkpoint`]): every column family, the
    /// key counts, the database map and the server's records (function
    /// libraries: the caller reloads what it keeps of them). Blocking.
    /// The caller guarantees that no command runs meanwhile (it holds
    /// every key lock) and submits nothing.
    ///
    /// The result is durable when it returns. Afterwards the engine's
    /// in-memory state is the loaded one, as if it had been opened on it:
    /// - key counts, both committed and visible, from the loaded records
    ///   (zero for a database without one);
    /// - the database map, live and committed, from the loaded record;
    /// - the version counter: the larger of its own and the loaded one
    ///   (or of any loaded member's version), persisted, so a new
    ///   collection never reuses a loaded member's version;
    /// - the hot tier and the collection cache emptied;
    /// - the lock epoch bumped: a lock-free pool run that read before
    ///   cannot commit, and keys are re-locked under the new map;
    /// - every WATCHing client dirty.
    ///
    /// A keyspace view open meanwhile keeps showing what it showed.
    ///
    /// An unreadable checkpoint (not a database, a column family missing)
    /// is an error that leaves the live data as it was. An error after the
    /// live data was emptied leaves the engine empty, and usable.
    pub fn load_checkpoint(&self, dir: &Path) -> Result<LoadedCheckpoint> {
        self.load_checkpoint_in_files_of(dir, SST_FILE_BYTES)
    }

    /// [`Engine::load_checkpoint`], starting a new SST file past
    /// `file_bytes` (tests roll small files).
    pub(crate) fn load_checkpoint_in_files_of(
        &self,
        dir: &Path,
        file_bytes: u64,
    ) -> Result<LoadedCheckpoint> {
        self.wait_for_submitted()?;
        let inner = self.inner();
        if inner.overlay.len() != 0 {
            return Err(StorageError::WriteFailed(
                "writes were submitted while a checkpoint was loading".into(),
            ));
        }
        // Opened before anything is removed: a checkpoint that cannot be
        // read leaves the live data alone.
        let source = open_checkpoint(inner, dir)?;
        // An open keyspace view (a RocksDB snapshot) pins members too:
        // dropping whole files would take what it shows from under it.
        let drop_files = inner.members_pinned.load(Ordering::SeqCst) == 0;
        // Until every column family is loaded, a member's meta may be
        // missing: the compaction filter must not take it for garbage.
        let _pinned = PinMembers::new(inner);
        let mut copied = LoadedCheckpoint::default();
        let mut max_member_version = 0;
        let loaded = empty_all(inner, drop_files).and_then(|()| {
            let scratch = ScratchDir::create(inner.db.path().join(SCRATCH_DIR))?;
            for cf in Cf::ALL {
                copy_column_family(
                    inner,
                    &source,
                    cf,
                    &scratch.0,
                    file_bytes,
                    &mut copied,
                    &mut max_member_version,
                )?;
            }
            crate::facts::mark_complete(&inner.db)
        });
        drop(source);
        if let Err(e) = &loaded {
            // Some column families may be loaded and others empty: empty
            // them all, so that what remains is consistent.
            tracing::error!(error = %e, "loading a checkpoint failed; emptying the database");
            if let Err(again) = empty_all(inner, drop_files) {
                tracing::error!(error = %again, "emptying the database failed too");
            }
        }
        let reset = reset_state(inner, max_member_version);
        loaded?;
        copied.keys = reset?;
        Ok(copied)
    }
}

/// Opens the checkpoint at `dir` read-only with every column family, the
/// System CF's merge operator included, so that merged records read back
/// merged. Its WAL is replayed into memory (writes not yet in SST files).
fn open_checkpoint(inner: &Inner, dir: &Path) -> Result<DB> {
    // Every RocksDB database has one. Checked first, because opening
    // creates the directory and an info log in it, database or not.
    if !dir.join("CURRENT").is_file() {
        return Err(StorageError::Rocks(format!(
            "no checkpoint at {}",
            dir.display()
        )));
    }
    let cache = inner.block_cache.lock().clone();
    // The facts are derived from the meta records (copy_column_family),
    // so a checkpoint made before they existed loads too.
    let descriptors: Vec<ColumnFamilyDescriptor> = Cf::ALL
        .iter()
        .filter(|&&cf| cf != Cf::Facts)
        .map(|&cf| ColumnFamilyDescriptor::new(cf.name(), file_options(cf, &cache)))
        .collect();
    DB::open_cf_descriptors_read_only(&Options::default(), dir, descriptors, false).map_err(|e| {
        StorageError::Rocks(format!(
            "cannot open the checkpoint at {}: {}",
            dir.display(),
            e.into_string()
        ))
    })
}

fn live_cf(inner: &Inner, cf: Cf) -> Result<&ColumnFamily> {
    inner
        .cf(cf)
        .ok_or_else(|| StorageError::Rocks(format!("no column family {}", cf.name())))
}

/// Removes every entry of every live column family, durably, without
/// reading them: whole SST files are dropped (unless `drop_files` is
/// false: RocksDB's `DeleteFilesInRange` ignores snapshots), a range
/// delete per column family (in one synced WAL write) covers what remains
/// (memtables, L0), and a compaction of each purges the range delete with
/// what it covers, so that ingested files overlap nothing and go to the
/// bottom level.
fn empty_all(inner: &Inner, drop_files: bool) -> Result<()> {
    let mut batch = WriteBatch::default();
    for cf in Cf::ALL {
        let handle = live_cf(inner, cf)?;
        if drop_files {
            inner
                .db
                .delete_file_in_range_cf(handle, &[][..], &PAST_EVERY_KEY[..])?;
        }
        batch.delete_range_cf(handle, &[][..], &PAST_EVERY_KEY[..]);
    }
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    inner.db.write_opt(batch, &sync)?;
    // The compaction flushes the memtable first. Forced on the bottom
    // level: a lone L0 file is otherwise moved down whole, range delete
    // and all, and the ingested files overlapping it would stay in L0. A
    // RocksDB snapshot still open (a keyspace view) keeps what it shows;
    // ingestion then gets a newer sequence number and shows over it.
    let mut purge = CompactOptions::default();
    purge.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
    for cf in Cf::ALL {
        inner
            .db
            .compact_range_cf_opt(live_cf(inner, cf)?, None::<&[u8]>, None::<&[u8]>, &purge);
    }
    Ok(())
}

/// Copies column family `cf` of `source` in key order into SST files in
/// `scratch`, a new one past `file_bytes`, and ingests them (moved, not
/// copied). Counts what it copies into `copied`, and the largest member
/// version it meets into `max_member_version`.
fn copy_column_family(
    inner: &Inner,
    source: &DB,
    cf: Cf,
    scratch: &Path,
    file_bytes: u64,
    copied: &mut LoadedCheckpoint,
    max_member_version: &mut u64,
) -> Result<()> {
    // The facts are the meta records' headers, read from the source's meta.
    let facts = cf == Cf::Facts;
    let read_from = if facts { Cf::Meta } else { cf };
    let from = source.cf_handle(read_from.name()).ok_or_else(|| {
        StorageError::Rocks(format!("the checkpoint has no column family {}", cf.name()))
    })?;
    let to = live_cf(inner, cf)?;
    // The live column family's file options: the same blocks, filters and
    // (bottom-level) compression as its own files.
    let options = file_options(cf, &inner.block_cache.lock().clone());
    let mut read_options = ReadOptions::default();
    // A single pass: it must not push the working set out of the cache.
    read_options.fill_cache(false);
    read_options.set_readahead_size(2 << 20);
    let mut iter = source.raw_iterator_cf_opt(from, read_options);
    iter.seek_to_first();
    let members = matches!(cf, Cf::Data | Cf::ZScore | Cf::Stream);
    let mut files: Vec<PathBuf> = Vec::new();
    let mut writer: Option<SstFileWriter<'_>> = None;
    while let (Some(key), Some(value)) = (iter.key(), iter.value()) {
        let sst = match &mut writer {
            Some(sst) => sst,
            None => {
                let path = scratch.join(format!("{}-{}.sst", cf.name(), files.len()));
                let sst = SstFileWriter::create(&options);
                sst.open(&path)?;
                files.push(path);
                writer.insert(sst)
            }
        };
        let value = if facts {
            &value[..Facts::header_len(value).unwrap_or(value.len())]
        } else {
            value
        };
        sst.put(key, value)?;
        if !facts {
            // (A fact is a copy of part of an entry, not one of its own.)
            copied.entries += 1;
            copied.bytes += (key.len() + value.len()) as u64;
        }
        if members {
            if let Some((_, _, version)) = parse_member_key(key) {
                *max_member_version = (*max_member_version).max(version);
            }
        }
        if sst.file_size() >= file_bytes {
            sst.finish()?;
            writer = None;
        }
        iter.next();
    }
    iter.status()?;
    if let Some(mut sst) = writer {
        sst.finish()?;
    }
    if files.is_empty() {
        return Ok(());
    }
    let mut ingest = IngestExternalFileOptions::default();
    ingest.set_move_files(true);
    inner
        .db
        .ingest_external_file_cf_opts(to, &ingest, files.clone())?;
    copied.files += files.len();
    Ok(())
}

/// Rebuilds the in-memory state that mirrors the disk from the System CF
/// as it is now (see [`Engine::load_checkpoint`] for what), whether the
/// load succeeded or left the engine empty. Returns the number of keys.
fn reset_state(inner: &Inner, max_member_version: u64) -> Result<u64> {
    inner.hot.clear();
    inner.coll.clear();
    inner.watches.touch_all();
    let keys = reload_records(inner, max_member_version);
    // Last, as a SWAPDB does it: a locker that saw the old epoch finds
    // its stripes again under the new map, and a pool run that read
    // anything before cannot commit.
    inner.locks.bump_epoch();
    keys
}

/// The key counts, the database map and the version counter from the
/// System CF; returns the number of keys.
fn reload_records(inner: &Inner, max_member_version: u64) -> Result<u64> {
    let records = SystemRecords::read(&inner.db)?;
    let mut keys = 0u64;
    for (pdb, &(count, expires)) in records.counts.iter().enumerate() {
        inner.counts.load(pdb as u8, count, expires);
        keys += count.max(0) as u64;
    }
    inner.db_map.reset(records.db_map);
    let loaded_version = records.version.max(max_member_version);
    let version = inner
        .next_version
        .fetch_max(loaded_version, Ordering::AcqRel)
        .max(loaded_version);
    // Persisted now, not with the next collection: the loaded record may
    // be below what this engine handed out before, and a version is never
    // reused (member_filter.rs), not even one of the data just dropped,
    // which an open snapshot may still show.
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    inner.db.merge_cf_opt(
        live_cf(inner, Cf::System)?,
        VERSION_KEY,
        version.to_be_bytes(),
        &sync,
    )?;
    Ok(keys)
}

/// A directory that is removed when dropped, an error's path included;
/// one left by a crash is removed when the next one is created.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn create(path: PathBuf) -> Result<ScratchDir> {
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)
            .map_err(|e| StorageError::Rocks(format!("cannot create {}: {e}", path.display())))?;
        Ok(ScratchDir(path))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use std::sync::Arc;

    use super::PAST_EVERY_KEY;
    use crate::test_engine::{open, read, write};
    use crate::{Cf, Engine, ExpireAction, StreamId, ValueType, Watcher, ZAddFlags, CHUNK_SIZE};

    /// Every entry of column family `cf`, as RocksDB has it.
    fn dump(engine: &Engine, cf: Cf) -> Vec<(Vec<u8>, Vec<u8>)> {
        let inner = engine.inner();
        let handle = inner.cf(cf).expect("column family");
        inner
            .db
            .iterator_cf(handle, rocksdb::IteratorMode::Start)
            .map(|item| {
                let (key, value) = item.expect("read");
                (key.to_vec(), value.to_vec())
            })
            .collect()
    }

    /// Every column family, the version high-water mark left out of the
    /// System CF (a loading engine keeps the larger of its own and the
    /// loaded one).
    fn contents(engine: &Engine) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
        Cf::ALL
            .iter()
            .map(|&cf| {
                let mut entries = dump(engine, cf);
                entries.retain(|(key, _)| cf != Cf::System || key != super::VERSION_KEY);
                entries
            })
            .collect()
    }

    fn persisted_version(engine: &Engine) -> u64 {
        let inner = engine.inner();
        let system = inner.cf(Cf::System).expect("system");
        let raw = inner.db.get_cf(system, super::VERSION_KEY).expect("read");
        u64::from_be_bytes(
            raw.expect("a version")
                .as_slice()
                .try_into()
                .expect("8 bytes"),
        )
    }

    fn key_counts(engine: &Engine) -> Vec<(u64, u64)> {
        (0..engine.databases() as u8)
            .map(|db| engine.key_count(db))
            .collect()
    }

    fn set(engine: &Engine, db: u8, key: &[u8], value: Bytes, expire: ExpireAction) {
        write(engine, |t| t.set_string(db, key, value, expire));
    }

    /// A chunked string that does not compress (xorshift bytes): its SST
    /// files are as big as it is.
    fn big_value(seed: u64) -> Bytes {
        let mut state = seed | 1;
        (0..3 * CHUNK_SIZE + 100)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect::<Vec<u8>>()
            .into()
    }

    /// Engine A's data: every type, expiries, two databases swapped, a
    /// flushed database (range deletes in its files) and many versions
    /// allocated (more than B's), some of it only in the WAL.
    fn fill_a(engine: &Engine) {
        let later = crate::now_ms() + 3_600_000;
        set(
            engine,
            0,
            b"small",
            Bytes::from_static(b"v"),
            ExpireAction::Clear,
        );
        set(engine, 0, b"big", big_value(1), ExpireAction::Clear);
        set(
            engine,
            0,
            b"shared",
            Bytes::from_static(b"from-a"),
            ExpireAction::At(later),
        );
        write(engine, |t| {
            // Versions allocated and left unused: A's counter ends high.
            for _ in 0..50 {
                t.new_set();
            }
            let mut hash = t.hash_or_new(0, b"h")?;
            for (field, value) in [(&b"f1"[..], &b"v1"[..]), (b"f2", b"v2")] {
                t.hash_set(0, b"h", &mut hash, field, Bytes::copy_from_slice(value))?;
            }
            t.save_collection(0, b"h", &hash)
        });
        engine.reload().expect("flush A's memtables");
        write(engine, |t| {
            let mut list = t.list_or_new(0, b"l")?;
            for item in [&b"a"[..], b"b", b"c"] {
                t.list_push(0, b"l", &mut list, false, Bytes::copy_from_slice(item));
            }
            t.save_list(0, b"l", &mut list)?;
            let mut members = t.set_or_new(0, b"s")?;
            t.set_add(0, b"s", &mut members, b"x")?;
            t.set_add(0, b"s", &mut members, b"y")?;
            t.save_collection(0, b"s", &members)?;
            let mut zset = t.collection_or_new(0, b"z", ValueType::ZSet, Bytes::new())?;
            t.zset_add(0, b"z", &mut zset, b"m1", 1.5, ZAddFlags::default())?;
            t.zset_add(0, b"z", &mut zset, b"m2", -3.0, ZAddFlags::default())?;
            t.save_collection(0, b"z", &zset)?;
            t.set_expire_at(0, b"z", later)?;
            let mut stream = t.new_stream();
            for ms in [1, 2] {
                let id = StreamId { ms, seq: 0 };
                let pairs = [(Bytes::from_static(b"f"), Bytes::from(ms.to_string()))];
                t.stream_append(0, b"st", &mut stream, id, &pairs)
                    .expect("id above the last")?;
            }
            t.save_stream(0, b"st", &mut stream)
        });
        set(
            engine,
            1,
            b"one",
            Bytes::from_static(b"1"),
            ExpireAction::Clear,
        );
        set(
            engine,
            2,
            b"two",
            Bytes::from_static(b"2"),
            ExpireAction::At(later),
        );
        set(
            engine,
            3,
            b"gone",
            Bytes::from_static(b"3"),
            ExpireAction::Clear,
        );
        write(engine, |t| {
            t.flush_databases(Some(3));
            t.swap_databases(1, 2)
        });
    }

    /// Engine B's own data: a key A also has, keys A lacks, in files on
    /// the bottom level and in memtables.
    fn fill_b(engine: &Engine) {
        set(engine, 0, b"only-b", big_value(2), ExpireAction::Clear);
        write(engine, |t| {
            let mut hash = t.hash_or_new(5, b"bh")?;
            t.hash_set(5, b"bh", &mut hash, b"f", Bytes::from_static(b"b"))?;
            t.save_collection(5, b"bh", &hash)
        });
        engine.reload().expect("flush B's memtables");
        // Below L0, where a load drops whole files.
        for cf in Cf::ALL {
            let inner = engine.inner();
            let handle = inner.cf(cf).expect("column family");
            inner
                .db
                .compact_range_cf(handle, None::<&[u8]>, None::<&[u8]>);
        }
        // Written after the reload: in the hot tier too.
        set(
            engine,
            0,
            b"shared",
            Bytes::from_static(b"from-b"),
            ExpireAction::Clear,
        );
        assert!(engine.is_hot(0, b"shared"));
        let later = crate::now_ms() + 7_200_000;
        set(
            engine,
            4,
            b"ttl-b",
            Bytes::from_static(b"b"),
            ExpireAction::At(later),
        );
        write(engine, |t| t.swap_databases(0, 7));
        write(engine, |t| t.swap_databases(0, 7));
    }

    /// Copies a directory as it is on disk, as a `kill -9` leaves it.
    fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("read dir") {
            let entry = entry.expect("entry");
            if entry.file_type().expect("type").is_file() {
                std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
            }
        }
    }

    #[test]
    fn a_loaded_checkpoint_replaces_everything_and_survives_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let a = open(&dir.path().join("a"));
        fill_a(&a);
        let checkpoint = dir.path().join("checkpoint");
        a.checkpoint(&checkpoint).expect("checkpoint");
        let b = open(&dir.path().join("b"));
        fill_b(&b);
        let watcher = Arc::new(Watcher::default());
        b.watch_key(&watcher, 9, b"nowhere", Default::default());
        assert!(!b.watch_failed(&watcher, crate::now_ms()));
        let b_version = b
            .inner()
            .next_version
            .load(std::sync::atomic::Ordering::Acquire);
        let a_version = persisted_version(&a);
        assert!(a_version > b_version, "A allocated more versions");

        // Small files, so that every column family with data rolls.
        let loaded = b
            .load_checkpoint_in_files_of(&checkpoint, 16 << 10)
            .expect("load");
        assert_eq!(contents(&b), contents(&a));
        assert_eq!(key_counts(&b), key_counts(&a));
        assert_eq!(loaded.keys, key_counts(&a).iter().map(|c| c.0).sum::<u64>());
        assert_eq!(loaded.keys, 10);
        assert!(loaded.files > Cf::ALL.len(), "{loaded:?}");
        assert!(loaded.bytes > 3 * CHUNK_SIZE, "{loaded:?}");
        assert_eq!(b.inner().db_map.live_map(), a.inner().db_map.live_map());
        assert_eq!(
            b.inner().db_map.committed_map(),
            a.inner().db_map.live_map()
        );
        assert_eq!(persisted_version(&b), a_version);
        assert!(b.watch_failed(&watcher, crate::now_ms()));
        assert!(!b.inner().db.path().join(super::SCRATCH_DIR).exists());
        // The emptied column families held nothing for the files to
        // overlap: they went below L0.
        let live = b.inner().db.live_files().expect("live files");
        assert!(live.iter().all(|f| f.level > 0), "{live:?}");

        // Reads see A's data, over B's range deletes and its old files.
        let get = |engine: &Engine, db, key: &[u8]| read(engine, |t| t.get_string(db, key));
        assert_eq!(get(&b, 0, b"shared"), Some(Bytes::from_static(b"from-a")));
        assert_eq!(get(&b, 0, b"big"), Some(big_value(1)));
        assert_eq!(get(&b, 0, b"only-b"), None);
        assert_eq!(get(&b, 1, b"two"), Some(Bytes::from_static(b"2")));
        assert_eq!(get(&b, 2, b"one"), Some(Bytes::from_static(b"1")));
        let hash = read(&b, |t| t.hash(0, b"h")).expect("the hash");
        assert_eq!(
            read(&b, |t| t.hash_get(0, b"h", &hash, b"f2")),
            Some(Bytes::from_static(b"v2"))
        );

        // Writes go on, with versions above every loaded one.
        let version = write(&b, |t| {
            let mut members = t.set_or_new(6, b"new")?;
            t.set_add(6, b"new", &mut members, b"m")?;
            t.save_collection(6, b"new", &members)?;
            Ok(members.version)
        });
        assert!(version > a_version);
        set(
            &b,
            0,
            b"after",
            Bytes::from_static(b"x"),
            ExpireAction::Clear,
        );
        let expected = contents(&b);
        let counts = key_counts(&b);
        b.shutdown();

        // A crash right now: the files as they are, B still open.
        let crashed = dir.path().join("crashed");
        copy_dir(b.inner().db.path(), &crashed.join("db"));
        let reopened = open(&crashed);
        assert_eq!(contents(&reopened), expected);
        assert_eq!(key_counts(&reopened), counts);
        assert!(persisted_version(&reopened) >= version);
        reopened.shutdown();
        drop(reopened);

        drop(b);
        let b = open(&dir.path().join("b"));
        assert_eq!(contents(&b), expected);
        assert_eq!(key_counts(&b), counts);
        assert_eq!(b.inner().db_map.live_map(), a.inner().db_map.live_map());
        assert_eq!(get(&b, 6, b"after"), None);
        assert_eq!(get(&b, 0, b"after"), Some(Bytes::from_static(b"x")));
        b.shutdown();
        a.shutdown();
    }

    /// An open RocksDB snapshot keeps B's files (none dropped whole), its
    /// range deletes and what they cover through the purge: the ingested
    /// files overlap them, and must show over them.
    #[test]
    fn ingested_files_show_over_range_deletes_a_snapshot_keeps() {
        let dir = tempfile::tempdir().unwrap();
        let a = open(&dir.path().join("a"));
        fill_a(&a);
        let checkpoint = dir.path().join("checkpoint");
        a.checkpoint(&checkpoint).expect("checkpoint");
        let b = open(&dir.path().join("b"));
        fill_b(&b);
        let mut view = b.keyspace_view(0).expect("view");

        b.load_checkpoint(&checkpoint).expect("load");
        let live = b.inner().db.live_files().expect("live files");
        assert!(
            live.iter()
                .any(|f| f.end_key.as_deref() == Some(&PAST_EVERY_KEY[..])),
            "a range delete survived: {live:?}"
        );
        assert_eq!(contents(&b), contents(&a));
        assert_eq!(
            read(&b, |t| t.get_string(0, b"shared")),
            Some(Bytes::from_static(b"from-a"))
        );
        // The view still shows what B held when it opened.
        let mut keys = Vec::new();
        view.visit_keys(|key| {
            keys.push(key.to_vec());
            true
        })
        .expect("scan");
        keys.sort();
        assert_eq!(keys, vec![b"only-b".to_vec(), b"shared".to_vec()]);
        drop(view);
        b.shutdown();
        a.shutdown();
    }

    #[test]
    fn an_unreadable_checkpoint_is_an_error_and_the_engine_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let b = open(&dir.path().join("b"));
        fill_b(&b);
        let before = contents(&b);
        let counts = key_counts(&b);

        let not_a_database = dir.path().join("junk");
        std::fs::create_dir_all(&not_a_database).unwrap();
        std::fs::write(not_a_database.join("CURRENT"), b"nonsense\n").unwrap();
        assert!(b.load_checkpoint(&not_a_database).is_err());
        assert!(b.load_checkpoint(&dir.path().join("missing")).is_err());
        assert!(!dir.path().join("missing").exists());
        // A RocksDB database without Firn's column families.
        let plain = dir.path().join("plain");
        let mut options = rocksdb::Options::default();
        options.create_if_missing(true);
        drop(rocksdb::DB::open(&options, &plain).unwrap());
        let err = b.load_checkpoint(&plain).expect_err("no column families");
        assert!(matches!(err, crate::StorageError::Rocks(_)), "{err:?}");

        // Nothing was removed, and the engine is usable.
        assert_eq!(contents(&b), before);
        assert_eq!(key_counts(&b), counts);
        set(
            &b,
            0,
            b"after",
            Bytes::from_static(b"x"),
            ExpireAction::Clear,
        );
        assert_eq!(
            read(&b, |t| t.get_string(0, b"after")),
            Some(Bytes::from_static(b"x"))
        );
        b.shutdown();
    }

    #[test]
    fn a_load_that_fails_after_emptying_leaves_an_empty_usable_engine() {
        let dir = tempfile::tempdir().unwrap();
        let a = open(&dir.path().join("a"));
        fill_a(&a);
        let checkpoint = dir.path().join("checkpoint");
        a.checkpoint(&checkpoint).expect("checkpoint");
        let b = open(&dir.path().join("b"));
        fill_b(&b);
        // A file where the scratch directory goes: it cannot be created.
        let scratch = b.inner().db.path().join(super::SCRATCH_DIR);
        std::fs::write(&scratch, b"in the way").unwrap();
        assert!(b.load_checkpoint(&checkpoint).is_err());
        assert!(key_counts(&b).iter().all(|&c| c == (0, 0)));
        assert_eq!(read(&b, |t| t.get_string(0, b"shared")), None);
        let contents_now = contents(&b);
        assert!(contents_now[1..].iter().all(Vec::is_empty));

        // Usable: a write, and then a load that succeeds.
        set(
            &b,
            0,
            b"after",
            Bytes::from_static(b"x"),
            ExpireAction::Clear,
        );
        assert_eq!(b.key_count(0), (1, 0));
        std::fs::remove_file(&scratch).unwrap();
        b.load_checkpoint(&checkpoint).expect("load");
        assert_eq!(contents(&b), contents(&a));
        assert_eq!(key_counts(&b), key_counts(&a));
        b.shutdown();
        a.shutdown();
    }
}
