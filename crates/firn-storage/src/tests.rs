//! Engine tests against a real RocksDB in a temporary directory.

use bytes::Bytes;

use crate::test_engine::{open, read, submit_set, write};
use crate::{Body, Engine, ExpireAction, ExpireCycle, ReadMode, StorageError, CHUNK_SIZE};

#[test]
fn strings_survive_reopen_with_exact_counts() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = open(dir.path());
        write(&engine, |t| {
            t.set_string(0, b"a", Bytes::from_static(b"1"), ExpireAction::Clear)
        });
        write(&engine, |t| {
            t.set_string(
                0,
                b"b",
                Bytes::from_static(b"2"),
                ExpireAction::At(u64::MAX / 2),
            )
        });
        write(&engine, |t| {
            t.set_string(3, b"a", Bytes::from_static(b"3"), ExpireAction::Clear)
        });
        write(&engine, |t| {
            t.set_string(0, b"a", Bytes::from_static(b"4"), ExpireAction::Clear)
        });
        assert_eq!(engine.key_count(0), (2, 1));
        assert_eq!(engine.key_count(3), (1, 0));
        engine.shutdown();
    }
    let engine = open(dir.path());
    assert_eq!(engine.key_count(0), (2, 1));
    assert_eq!(
        read(&engine, |t| t.get_string(0, b"a")),
        Some(Bytes::from_static(b"4"))
    );
    assert_eq!(
        read(&engine, |t| t.get_string(3, b"a")),
        Some(Bytes::from_static(b"3"))
    );
    write(&engine, |t| t.delete_key(0, b"b"));
    assert_eq!(engine.key_count(0), (1, 0));
    engine.shutdown();
}

#[test]
fn reload_tells_each_column_family_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    write(&engine, |t| {
        t.set_string(0, b"k", Bytes::from_static(b"v"), ExpireAction::Clear)
    });
    let mut seen = Vec::new();
    engine
        .reload_with_progress(|done, total| seen.push((done, total)))
        .expect("reload");
    let total = crate::Cf::ALL.len() as u64;
    let expected: Vec<(u64, u64)> = (0..=total).map(|done| (done, total)).collect();
    assert_eq!(seen, expected);
    let mut txn = engine.txn(ReadMode::Blocking);
    assert!(txn.meta(0, b"k").expect("read").is_some());
}

#[test]
fn pending_writes_are_visible_before_commit() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let mut txn = engine.txn(ReadMode::MemoryOnly);
    txn.set_string(0, b"k", Bytes::from_static(b"v"), ExpireAction::Clear)
        .unwrap();
    let tickets = txn.commit().unwrap();
    // Another command sees the write whether or not the writer got to it.
    assert_eq!(
        read(&engine, |t| t.get_string(0, b"k")),
        Some(Bytes::from_static(b"v"))
    );
    tickets[0].wait_blocking().unwrap();
    assert_eq!(
        read(&engine, |t| t.get_string(0, b"k")),
        Some(Bytes::from_static(b"v"))
    );
    engine.shutdown();
}

#[test]
fn big_strings_are_chunked_and_ranges_touch_only_their_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let value: Vec<u8> = (0..(3 * CHUNK_SIZE + 100))
        .map(|i| (i % 251) as u8)
        .collect();
    write(&engine, |t| {
        t.set_string(0, b"big", Bytes::from(value.clone()), ExpireAction::Clear)
    });
    let meta = read(&engine, |t| t.string_meta(0, b"big")).unwrap();
    assert!(matches!(meta.body, Body::Chunked { len, .. } if len == value.len() as u64));
    assert_eq!(read(&engine, |t| t.get_string(0, b"big")).unwrap(), value);
    // Across a chunk boundary.
    let start = CHUNK_SIZE - 3;
    let got = read(&engine, |t| {
        let meta = t.string_meta(0, b"big")?.unwrap();
        t.read_string_range(0, b"big", &meta, start, 10)
    });
    assert_eq!(&got[..], &value[start as usize..start as usize + 10]);
    // A write far past the end creates one chunk; the gap reads as zeros.
    let far = 100 * CHUNK_SIZE + 5;
    let len = write(&engine, |t| {
        t.write_string_range(0, b"big", far, b"xyz", 512 << 20)
    });
    assert_eq!(len, far + 3);
    let got = read(&engine, |t| {
        let meta = t.string_meta(0, b"big")?.unwrap();
        t.read_string_range(0, b"big", &meta, far - 2, 10)
    });
    assert_eq!(&got[..], b"\0\0xyz");
    let too_big = {
        let mut txn = engine.txn(ReadMode::Blocking);
        txn.write_string_range(0, b"big", 1 << 20, b"x", 1 << 20)
    };
    assert_eq!(too_big, Err(StorageError::TooLarge));
    engine.shutdown();
}

#[test]
fn small_string_grows_into_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    write(&engine, |t| {
        t.set_string(0, b"s", Bytes::from_static(b"hello"), ExpireAction::Clear)
    });
    write(&engine, |t| {
        t.write_string_range(0, b"s", CHUNK_SIZE + 10, b"!", 512 << 20)
    });
    let full = read(&engine, |t| t.get_string(0, b"s")).unwrap();
    assert_eq!(full.len() as u64, CHUNK_SIZE + 11);
    assert_eq!(&full[..5], b"hello");
    assert_eq!(full[full.len() - 1], b'!');
    assert!(full[5..full.len() - 1].iter().all(|&b| b == 0));
    engine.shutdown();
}

#[test]
fn expiry_is_lazy_and_active() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let past = crate::now_ms() - 1;
    write(&engine, |t| {
        t.set_string(0, b"lazy", Bytes::from_static(b"x"), ExpireAction::At(past))
    });
    write(&engine, |t| {
        t.set_string(
            0,
            b"active",
            Bytes::from_static(b"x"),
            ExpireAction::At(past),
        )
    });
    write(&engine, |t| {
        t.set_string(
            0,
            b"keep",
            Bytes::from_static(b"x"),
            ExpireAction::At(past + 3_600_000),
        )
    });
    assert_eq!(engine.key_count(0), (3, 3));
    // Lazy: reading an expired key deletes it.
    assert_eq!(write(&engine, |t| t.get_string(0, b"lazy")), None);
    assert_eq!(engine.key_count(0), (2, 2));
    // Active: the cycle deletes the other without anyone touching it.
    let cycle = ExpireCycle::new(engine.clone());
    cycle.run_once(100).unwrap();
    let tickets = engine.txn(ReadMode::Blocking).commit().unwrap();
    assert!(tickets.is_empty());
    for _ in 0..100 {
        if engine.key_count(0) == (1, 1) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(engine.key_count(0), (1, 1));
    engine.shutdown();
}

#[test]
fn flush_and_swap_are_whole_database_operations() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    write(&engine, |t| {
        t.set_string(0, b"a", Bytes::from_static(b"0"), ExpireAction::Clear)
    });
    write(&engine, |t| {
        t.set_string(1, b"a", Bytes::from_static(b"1"), ExpireAction::Clear)
    });
    write(&engine, |t| t.swap_databases(0, 1));
    assert_eq!(
        read(&engine, |t| t.get_string(0, b"a")),
        Some(Bytes::from_static(b"1"))
    );
    assert_eq!(
        read(&engine, |t| t.get_string(1, b"a")),
        Some(Bytes::from_static(b"0"))
    );
    write(&engine, |t| {
        t.flush_databases(Some(0));
        Ok(())
    });
    assert_eq!(read(&engine, |t| t.get_string(0, b"a")), None);
    assert_eq!(engine.key_count(0), (0, 0));
    assert_eq!(engine.key_count(1), (1, 0));
    engine.shutdown();
    drop(engine);
    let engine = open(dir.path());
    assert_eq!(
        read(&engine, |t| t.get_string(1, b"a")),
        Some(Bytes::from_static(b"0"))
    );
    write(&engine, |t| {
        t.flush_databases(None);
        Ok(())
    });
    assert_eq!(engine.key_count(1), (0, 0));
    engine.shutdown();
}

#[test]
fn scan_merges_pending_writes_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    for i in 0..50u32 {
        write(&engine, |t| {
            t.set_string(
                0,
                format!("k{i:02}").as_bytes(),
                Bytes::from_static(b"v"),
                ExpireAction::Clear,
            )
        });
    }
    write(&engine, |t| t.delete_key(0, b"k07"));
    let mut seen = Vec::new();
    let mut after: Option<Bytes> = None;
    loop {
        let page = read(&engine, |t| {
            t.scan_keys(0, after.as_deref(), 7, |_, _| true)
        });
        seen.extend(page.keys);
        match page.next_after {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    seen.sort();
    assert_eq!(seen.len(), 49);
    assert!(!seen.contains(&Bytes::from_static(b"k07")));
    assert!(matches!(
        read(&engine, |t| t.random_key(0, 12345, 100)),
        crate::RandomPick::Key(_)
    ));
    assert_eq!(
        read(&engine, |t| t.random_key(5, 1, 100)),
        crate::RandomPick::Empty
    );
    engine.shutdown();
}

#[test]
fn copies_of_chunked_strings_are_independent() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let value = Bytes::from(vec![7u8; (2 * CHUNK_SIZE) as usize]);
    write(&engine, |t| {
        t.set_string(0, b"src", value.clone(), ExpireAction::Clear)
    });
    assert!(write(&engine, |t| t.copy_key(0, b"src", 2, b"dst")));
    write(&engine, |t| {
        t.write_string_range(0, b"src", 0, b"changed", 512 << 20)
    });
    assert_eq!(read(&engine, |t| t.get_string(2, b"dst")), Some(value));
    engine.shutdown();
}

#[test]
fn compaction_drops_orphaned_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let value = Bytes::from(vec![1u8; (4 * CHUNK_SIZE) as usize]);
    write(&engine, |t| {
        t.set_string(0, b"gone", value.clone(), ExpireAction::Clear)
    });
    write(&engine, |t| {
        t.set_string(0, b"kept", value, ExpireAction::Clear)
    });
    write(&engine, |t| t.delete_key(0, b"gone"));
    let inner = engine.inner();
    let data = inner.cf(crate::Cf::Data).unwrap();
    inner.db.flush_cf(data).unwrap();
    inner
        .db
        .flush_cf(inner.cf(crate::Cf::Meta).unwrap())
        .unwrap();
    inner
        .db
        .compact_range_cf(data, None::<&[u8]>, None::<&[u8]>);
    let chunks = inner
        .db
        .iterator_cf(data, rocksdb::IteratorMode::Start)
        .count();
    assert_eq!(chunks, 4, "only the live key's chunks remain");
    engine.shutdown();
}

#[test]
fn memory_only_reads_report_incomplete_instead_of_blocking() {
    let dir = tempfile::tempdir().unwrap();
    {
        let engine = open(dir.path());
        for i in 0..2000u32 {
            write(&engine, |t| {
                t.set_string(
                    0,
                    format!("key:{i}").as_bytes(),
                    Bytes::from(vec![b'x'; 512]),
                    ExpireAction::Clear,
                )
            });
        }
        engine.shutdown();
    }
    // After a reopen the memtable is replayed from the WAL, so flush it to
    // SSTs first; the fresh block cache is then empty.
    let engine = open(dir.path());
    let inner = engine.inner();
    inner
        .db
        .flush_cf(inner.cf(crate::Cf::Meta).unwrap())
        .unwrap();
    engine.shutdown();
    drop(engine);
    let engine = open(dir.path());
    let mut txn = engine.txn(ReadMode::MemoryOnly);
    let cold = txn.get_string(0, b"key:1234");
    assert_eq!(cold, Err(StorageError::Incomplete));
    // A blocking read warms the cache; the memory-only read then succeeds.
    assert!(read(&engine, |t| t.get_string(0, b"key:1234")).is_some());
    let mut txn = engine.txn(ReadMode::MemoryOnly);
    assert!(txn.get_string(0, b"key:1234").unwrap().is_some());
    engine.shutdown();
}

/// Commits `value` at `key` of db 0 with a replay record, and waits.
fn set_replayed(engine: &Engine, key: &str, value: &str) {
    let mut txn = engine.txn(ReadMode::Blocking);
    txn.set_db(0);
    txn.set_string(
        0,
        key.as_bytes(),
        Bytes::from(value.to_string()),
        ExpireAction::Clear,
    )
    .expect("set");
    txn.set_replay(vec![vec![
        Bytes::from_static(b"SET"),
        Bytes::from(key.to_string()),
        Bytes::from(value.to_string()),
    ]]);
    for ticket in txn.commit().expect("commit") {
        ticket.wait_blocking().expect("durable");
    }
}

#[test]
fn the_change_stream_sees_every_commit_once_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let mut changes = engine.subscribe_changes();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let engine = engine.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    set_replayed(&engine, &format!("k{t}:{i}"), &format!("{i}"));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while seen.len() < 200 && std::time::Instant::now() < deadline {
        match changes.try_recv() {
            Ok(change) => seen.push(change),
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(1)),
        }
    }
    assert_eq!(seen.len(), 200);
    assert!(changes.try_recv().is_err(), "no change twice");
    // Two writers write in parallel; batches complete in submit order.
    assert!(seen.windows(2).all(|w| w[0].seq < w[1].seq), "commit order");
    let mut keys: Vec<Bytes> = seen
        .iter()
        .map(|c| {
            assert_eq!(c.keys.len(), 1);
            assert_eq!(c.command_heads[0][0], Bytes::from_static(b"SET"));
            c.keys[0].1.clone()
        })
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 200, "every key exactly once");
    // Within one writer thread, its own changes keep their order.
    for t in 0..4 {
        let own: Vec<String> = seen
            .iter()
            .map(|c| String::from_utf8_lossy(&c.keys[0].1).into_owned())
            .filter(|k| k.starts_with(&format!("k{t}:")))
            .collect();
        let expected: Vec<String> = (0..50).map(|i| format!("k{t}:{i}")).collect();
        assert_eq!(own, expected);
    }
    engine.shutdown();
}

/// Commits a batch setting `keys` in `db` without waiting for it.
fn submit_sets(engine: &Engine, db: u8, keys: &[String]) -> Vec<crate::Ticket> {
    let mut txn = engine.txn(ReadMode::Blocking);
    for key in keys {
        txn.set_string(
            db,
            key.as_bytes(),
            Bytes::from_static(b"v"),
            ExpireAction::Clear,
        )
        .expect("set");
    }
    txn.commit().expect("commit")
}

#[test]
fn parallel_writers_keep_counts_exact_and_spanning_batches_ordered() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let mut changes = engine.subscribe_changes();
    let singles = {
        let engine = engine.clone();
        std::thread::spawn(move || {
            (0..300)
                .flat_map(|i| submit_sets(&engine, 0, &[format!("s{i}")]))
                .collect::<Vec<_>>()
        })
    };
    let pairs = {
        let engine = engine.clone();
        std::thread::spawn(move || {
            (0..150)
                .flat_map(|i| submit_sets(&engine, 0, &[format!("m{i}a"), format!("m{i}b")]))
                .collect::<Vec<_>>()
        })
    };
    // Db 1: writes, a flush, more writes, none waited for in between.
    let mut tickets = Vec::new();
    for i in 0..60 {
        tickets.extend(submit_sets(&engine, 1, &[format!("before{i}")]));
    }
    let mut flush = engine.txn(ReadMode::MemoryOnly);
    flush.flush_databases(Some(1));
    tickets.extend(flush.commit().unwrap());
    for i in 0..10 {
        tickets.extend(submit_sets(&engine, 1, &[format!("after{i}")]));
    }
    tickets.extend(singles.join().unwrap());
    tickets.extend(pairs.join().unwrap());
    for ticket in tickets {
        ticket.wait_blocking().expect("durable");
    }
    assert_eq!(engine.key_count(0), (600, 0));
    assert_eq!(engine.key_count(1), (10, 0));

    let mut seen = Vec::new();
    while let Ok(change) = changes.try_recv() {
        seen.push(change);
    }
    assert_eq!(seen.len(), 300 + 150 + 60 + 1 + 10);
    assert!(seen.windows(2).all(|w| w[0].seq < w[1].seq), "commit order");
    // A batch whose keys belong to both writers, or a flush, is ordered
    // against every other batch: all before it in the stream were
    // submitted before it, all after it after.
    let writer_of_key = |db: u8, key: &[u8]| engine.stripes_of(&[(db, key)])[0] % 2;
    let mut spanning = 0;
    for (i, change) in seen.iter().enumerate() {
        let writers: std::collections::BTreeSet<usize> = change
            .keys
            .iter()
            .map(|(db, key)| writer_of_key(*db, key))
            .collect();
        if change.whole_dbs.is_empty() && writers.len() < 2 {
            continue;
        }
        spanning += 1;
        assert!(seen[..i].iter().all(|c| c.seq < change.seq), "before {i}");
        assert!(
            seen[i + 1..].iter().all(|c| c.seq > change.seq),
            "after {i}"
        );
    }
    assert!(spanning > 10, "only {spanning} spanning batches");
    engine.shutdown();
    drop(engine);

    let engine = open(dir.path());
    assert_eq!(engine.key_count(0), (600, 0));
    assert_eq!(engine.key_count(1), (10, 0));
    assert_eq!(read(&engine, |t| t.get_string(1, b"before3")), None);
    assert_eq!(
        read(&engine, |t| t.get_string(1, b"after3")),
        Some(Bytes::from_static(b"v"))
    );
    engine.shutdown();
}

#[test]
fn every_batch_writes_its_replay_record_into_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    set_replayed(&engine, "a", "1");
    // A lazy expiry is replayed as a DEL before the command that met it.
    write(&engine, |t| {
        t.set_string(0, b"gone", Bytes::from_static(b"x"), ExpireAction::At(1))
    });
    write(&engine, |t| {
        t.set_db(0);
        t.set_replay(vec![vec![
            Bytes::from_static(b"GET"),
            Bytes::from_static(b"gone"),
        ]]);
        t.get_string(0, b"gone")
    });
    let records = engine.wal_records_since(0).unwrap();
    let commands: Vec<Vec<Bytes>> = records
        .into_iter()
        .flat_map(|(_, db, commands)| {
            assert_eq!(db, 0);
            commands
        })
        .collect();
    let text: Vec<String> = commands
        .iter()
        .map(|c| {
            c.iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(text, vec!["SET a 1", "DEL gone", "GET gone"]);
    engine.shutdown();
}

#[test]
fn a_flush_hides_the_database_at_once_and_later_writes_survive_it() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    for i in 0..20 {
        write(&engine, |t| {
            t.set_string(
                0,
                format!("k{i}").as_bytes(),
                Bytes::from_static(b"v"),
                ExpireAction::Clear,
            )
        });
    }
    // Queue the flush and, without waiting for it, read and write db 0.
    let mut flush = engine.txn(ReadMode::MemoryOnly);
    flush.flush_databases(Some(0));
    let flushed = flush.commit().unwrap();
    assert_eq!(read(&engine, |t| t.get_string(0, b"k3")), None);
    write(&engine, |t| {
        t.set_string(0, b"after", Bytes::from_static(b"1"), ExpireAction::Clear)
    });
    for ticket in flushed {
        ticket.wait_blocking().unwrap();
    }
    assert_eq!(read(&engine, |t| t.get_string(0, b"k3")), None);
    assert_eq!(
        read(&engine, |t| t.get_string(0, b"after")),
        Some(Bytes::from_static(b"1"))
    );
    assert_eq!(engine.key_count(0), (1, 0));
    engine.shutdown();
}

/// Flushes `meta` and `data` to SST files and compacts `data`, which runs
/// the orphan-member compaction filter over every chunk; returns the
/// versions of the chunks left.
fn compact_data(engine: &Engine) -> Vec<u64> {
    let inner = engine.inner();
    let data = inner.cf(crate::Cf::Data).unwrap();
    inner
        .db
        .flush_cf(inner.cf(crate::Cf::Meta).unwrap())
        .unwrap();
    inner.db.flush_cf(data).unwrap();
    inner
        .db
        .compact_range_cf(data, None::<&[u8]>, None::<&[u8]>);
    inner
        .db
        .iterator_cf(data, rocksdb::IteratorMode::Start)
        .map(|entry| {
            let (key, _) = entry.unwrap();
            crate::keys::parse_member_key(&key).unwrap().2
        })
        .collect()
}

/// Polls until `key_count(0)` is `want` (the writer commits in the
/// background), for at most ten seconds.
fn wait_for_key_count(engine: &Engine, want: (u64, u64)) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while engine.key_count(0) != want && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(engine.key_count(0), want);
}

#[test]
fn compaction_keeps_chunks_of_an_expired_key_until_it_is_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let value = Bytes::from(vec![3u8; (3 * CHUNK_SIZE) as usize]);
    let past = crate::now_ms() - 1;
    // Expired on arrival, and not read since: its meta is still stored,
    // as it is between the expiry time and active expiry's delete.
    write(&engine, |t| {
        t.set_string(0, b"big", value.clone(), ExpireAction::At(past))
    });
    assert_eq!(engine.key_count(0), (1, 1));
    assert_eq!(compact_data(&engine).len(), 3, "expired is not deleted");
    // A command that had read the key before it expired may still keep
    // it: the chunks must be there when it does.
    let mut txn = engine.txn(ReadMode::Blocking);
    let meta = txn.raw_meta(0, b"big").unwrap().unwrap();
    let persisted = crate::Meta {
        expire_at_ms: 0,
        ..meta
    };
    txn.write_meta(0, b"big", &persisted).unwrap();
    for ticket in txn.commit().unwrap() {
        ticket.wait_blocking().unwrap();
    }
    assert_eq!(read(&engine, |t| t.get_string(0, b"big")), Some(value));
    // Expired again and deleted by active expiry: now the chunks go.
    write(&engine, |t| {
        let meta = t.raw_meta(0, b"big")?.unwrap();
        let expiring = crate::Meta {
            expire_at_ms: past,
            ..meta
        };
        t.write_meta(0, b"big", &expiring)
    });
    ExpireCycle::new(engine.clone()).run_once(100).unwrap();
    wait_for_key_count(&engine, (0, 0));
    // The count shows the delete once it is submitted; the chunks go at
    // the first compaction after the writer has written it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut left = compact_data(&engine);
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
        left = compact_data(&engine);
    }
    assert_eq!(left, Vec::<u64>::new());
    engine.shutdown();
}

#[test]
fn compaction_keeps_only_the_live_version_of_a_recreated_key() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let old = Bytes::from(vec![1u8; (4 * CHUNK_SIZE) as usize]);
    let new = Bytes::from(vec![2u8; (2 * CHUNK_SIZE + 1) as usize]);
    write(&engine, |t| t.set_string(0, b"k", old, ExpireAction::Clear));
    // The old version's chunks reach an SST before the key is re-created.
    assert_eq!(compact_data(&engine).len(), 4);
    write(&engine, |t| {
        t.set_string(0, b"k", new.clone(), ExpireAction::Clear)
    });
    let live = match read(&engine, |t| t.string_meta(0, b"k")).unwrap().body {
        Body::Chunked { version, .. } => version,
        other => panic!("not chunked: {other:?}"),
    };
    assert_eq!(compact_data(&engine), vec![live; 3]);
    assert_eq!(read(&engine, |t| t.get_string(0, b"k")), Some(new));
    engine.shutdown();
}

#[test]
fn pending_bytes_count_queued_writes_until_they_are_committed() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    assert_eq!(engine.pending_bytes(), 0);
    let mut txn = engine.txn(ReadMode::MemoryOnly);
    txn.set_string(0, b"k", Bytes::from(vec![0u8; 1000]), ExpireAction::Clear)
        .unwrap();
    let tickets = txn.commit().unwrap();
    // Either still queued (the meta record holds the 1000-byte value) or
    // already committed; never negative, never left behind.
    let queued = engine.pending_bytes();
    assert!(queued == 0 || queued > 1000, "{queued}");
    for ticket in tickets {
        ticket.wait_blocking().unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while engine.pending_bytes() != 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(engine.pending_bytes(), 0);
    let usage = engine.memory_usage();
    assert!(usage.block_cache_bytes > 0, "{usage:?}");
    assert!(usage.memtable_bytes > 0, "{usage:?}");
    assert!(usage.block_cache_capacity_bytes >= 16 << 20, "{usage:?}");
    engine.shutdown();
}

/// Members written by one batch, a second pending one and the running
/// transaction itself are all visited once, in order, both ways; an empty
/// collection disappears.
#[test]
fn collection_members_merge_every_source_in_both_directions() {
    use crate::{Cf, ValueType};
    use std::ops::Bound;
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let members = |t: &mut crate::Txn<'_>, reverse: bool, from: Bound<&[u8]>| {
        let coll = t.collection(0, b"h", ValueType::Hash)?.expect("exists");
        let mut seen = Vec::new();
        t.scan_members(
            Cf::Data,
            0,
            b"h",
            &coll,
            from,
            Bound::Unbounded,
            reverse,
            |m, v| {
                seen.push((m.to_vec(), v.to_vec()));
                true
            },
        )?;
        Ok::<_, crate::StorageError>(seen)
    };
    write(&engine, |t| {
        let mut coll = t.collection_or_new(0, b"h", ValueType::Hash, Bytes::new())?;
        for m in [&b"b"[..], b"d"] {
            t.put_member(Cf::Data, 0, b"h", &coll, m, Bytes::from_static(b"1"));
        }
        coll.size = 2;
        t.save_collection(0, b"h", &coll)
    });
    // A batch left pending in the overlay (not waited for).
    let mut pending = engine.txn(ReadMode::Blocking);
    let mut coll = pending
        .collection(0, b"h", ValueType::Hash)
        .unwrap()
        .unwrap();
    pending.put_member(Cf::Data, 0, b"h", &coll, b"c", Bytes::from_static(b"2"));
    pending.delete_member(Cf::Data, 0, b"h", &coll, b"d");
    coll.size = 2;
    pending.save_collection(0, b"h", &coll).unwrap();
    let _tickets = pending.commit().unwrap();
    let mut txn = engine.txn(ReadMode::Blocking);
    let coll = txn.collection(0, b"h", ValueType::Hash).unwrap().unwrap();
    txn.put_member(Cf::Data, 0, b"h", &coll, b"a", Bytes::from_static(b"3"));
    let names = |seen: Vec<(Vec<u8>, Vec<u8>)>| -> Vec<Vec<u8>> {
        seen.into_iter().map(|(m, _)| m).collect()
    };
    let forward = names(members(&mut txn, false, Bound::Unbounded).unwrap());
    assert_eq!(forward, vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
    let backward = names(members(&mut txn, true, Bound::Unbounded).unwrap());
    assert_eq!(backward, vec![b"c".to_vec(), b"b".to_vec(), b"a".to_vec()]);
    let after_a = names(members(&mut txn, false, Bound::Excluded(b"a")).unwrap());
    assert_eq!(after_a, vec![b"b".to_vec(), b"c".to_vec()]);
    let sample = txn.random_members(Cf::Data, 0, b"h", &coll, 2, 7).unwrap();
    assert_eq!(sample.len(), 2);
    drop(txn);
    write(&engine, |t| {
        let mut coll = t.collection(0, b"h", ValueType::Hash)?.expect("exists");
        coll.size = 0;
        t.save_collection(0, b"h", &coll)
    });
    assert!(read(&engine, |t| t.meta(0, b"h")).is_none());
    assert_eq!(engine.key_count(0), (0, 0));
}

/// A sample of a big collection reads only what it returns and finds
/// members spread over the whole collection.
#[test]
fn random_members_of_a_big_collection_are_spread() {
    use crate::{Cf, ValueType};
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    write(&engine, |t| {
        let mut coll = t.collection_or_new(0, b"s", ValueType::Set, Bytes::new())?;
        for i in 0..5000u32 {
            let m = format!("member:{i:05}");
            t.put_member(Cf::Data, 0, b"s", &coll, m.as_bytes(), Bytes::new());
        }
        coll.size = 5000;
        t.save_collection(0, b"s", &coll)
    });
    let sample = read(&engine, |t| {
        let coll = t.collection(0, b"s", ValueType::Set)?.expect("exists");
        t.random_members(Cf::Data, 0, b"s", &coll, 50, 42)
    });
    assert_eq!(sample.len(), 50);
    let distinct: std::collections::HashSet<_> = sample.iter().map(|(m, _)| m.clone()).collect();
    assert_eq!(distinct.len(), 50);
    let low = sample
        .iter()
        .filter(|(m, _)| m.as_ref() < &b"member:02500"[..])
        .count();
    assert!(
        (5..=45).contains(&low),
        "sample not spread: {low} of 50 in the lower half"
    );
}

/// A whole small collection read under its lock is kept decoded; a point
/// read or walk then answers from memory; every write to the key (or a new
/// version) makes the next read go back to RocksDB, so no reader ever sees
/// stale members.
#[test]
fn small_collections_are_cached_decoded_and_never_stale() {
    use crate::{Cf, ValueType};
    use std::ops::Bound;
    use std::sync::atomic::Ordering;
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let put = |field: &'static [u8], value: &'static [u8]| {
        write(&engine, |t| {
            let mut h = t.collection_or_new(0, b"h", ValueType::Hash, Bytes::new())?;
            if t.get_member(Cf::Data, 0, b"h", &h, field)?.is_none() {
                h.size += 1;
            }
            t.put_member(Cf::Data, 0, b"h", &h, field, Bytes::from_static(value));
            t.save_collection(0, b"h", &h)
        })
    };
    // A locked memory-only read of every member, as HGETALL does.
    let walk = |engine: &Engine| -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut txn = engine.txn_locked(ReadMode::MemoryOnly);
        let h = txn.collection(0, b"h", ValueType::Hash).unwrap().unwrap();
        let mut seen = Vec::new();
        txn.scan_members(
            Cf::Data,
            0,
            b"h",
            &h,
            Bound::Unbounded,
            Bound::Unbounded,
            false,
            |m, v| {
                seen.push((m.to_vec(), v.to_vec()));
                true
            },
        )
        .unwrap();
        seen
    };
    let field = |engine: &Engine, f: &[u8]| {
        let mut txn = engine.txn_locked(ReadMode::MemoryOnly);
        let h = txn.collection(0, b"h", ValueType::Hash).unwrap().unwrap();
        txn.get_member(Cf::Data, 0, b"h", &h, f).unwrap()
    };
    let hits = || engine.inner().coll.hits.load(Ordering::Relaxed);
    put(b"a", b"1");
    put(b"b", b"2");
    assert_eq!(walk(&engine).len(), 2);
    let before = hits();
    assert_eq!(field(&engine, b"a"), Some(Bytes::from_static(b"1")));
    assert_eq!(walk(&engine).len(), 2);
    assert_eq!(
        hits(),
        before + 2,
        "the second read did not come from the cache"
    );
    // A write invalidates; the next reads see it.
    put(b"a", b"changed");
    assert_eq!(field(&engine, b"a"), Some(Bytes::from_static(b"changed")));
    assert_eq!(walk(&engine)[0].1, b"changed".to_vec());
    // A pending write (not yet durable) is seen too.
    let mut pending = engine.txn(ReadMode::Blocking);
    let mut h = pending
        .collection(0, b"h", ValueType::Hash)
        .unwrap()
        .unwrap();
    pending.put_member(Cf::Data, 0, b"h", &h, b"c", Bytes::from_static(b"3"));
    h.size += 1;
    pending.save_collection(0, b"h", &h).unwrap();
    let _tickets = pending.commit().unwrap();
    assert_eq!(walk(&engine).len(), 3);
    // A transaction's own writes win over the cache.
    let mut own = engine.txn_locked(ReadMode::MemoryOnly);
    let h = own.collection(0, b"h", ValueType::Hash).unwrap().unwrap();
    own.put_member(Cf::Data, 0, b"h", &h, b"b", Bytes::from_static(b"mine"));
    assert_eq!(
        own.get_member(Cf::Data, 0, b"h", &h, b"b").unwrap(),
        Some(Bytes::from_static(b"mine"))
    );
    drop(own);
    // Delete and re-create: a new version never matches the old entry.
    write(&engine, |t| t.delete_key(0, b"h"));
    put(b"z", b"9");
    assert_eq!(walk(&engine), vec![(b"z".to_vec(), b"9".to_vec())]);
}

/// Records what every submitted batch signals.
#[derive(Default)]
struct Recorder(parking_lot::Mutex<Vec<crate::Signals>>);

impl crate::SubmitListener for Recorder {
    fn submitted(&self, batch: &crate::Submitted<'_>) {
        self.0.lock().push(batch.signals.clone());
    }
}

#[test]
fn submitted_batches_hand_their_signals_over_in_write_order_while_listened_to() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let recorder = std::sync::Arc::new(Recorder::default());
    engine.set_submit_listener(recorder.clone());
    set_replayed(&engine, "unheard", "v");
    assert!(recorder.0.lock().is_empty(), "nobody listened");
    let listening = engine.listen_submits();
    let keys =
        |list: &[(u8, Bytes)]| -> Vec<Bytes> { list.iter().map(|(_, k)| k.clone()).collect() };
    // Two keys in one batch, k2 first: signalled k2, then k1, as MSET k2
    // v k1 v signals them (not in key order).
    let mut txn = engine.txn(ReadMode::Blocking);
    for key in ["k2", "k1"] {
        txn.set_string(
            0,
            key.as_bytes(),
            Bytes::from_static(b"v"),
            ExpireAction::Clear,
        )
        .expect("set");
    }
    txn.commit().expect("commit");
    // A command that adds nothing makes no key ready; a quiet one modifies
    // none but what it signals itself.
    let mut txn = engine.txn(ReadMode::Blocking);
    txn.set_signal_mode(crate::SignalMode {
        quiet: true,
        adds_nothing: true,
    });
    txn.set_string(0, b"q", Bytes::from_static(b"v"), ExpireAction::Clear)
        .expect("set");
    txn.signal_modified(0, b"made");
    txn.commit().expect("commit");
    let recorded = recorder.0.lock().clone();
    assert_eq!(recorded.len(), 2);
    assert_eq!(
        keys(&recorded[0].modified),
        [Bytes::from("k2"), Bytes::from("k1")]
    );
    assert_eq!(
        keys(&recorded[0].ready),
        [Bytes::from("k2"), Bytes::from("k1")]
    );
    assert_eq!(keys(&recorded[1].modified), [Bytes::from("made")]);
    assert!(recorded[1].ready.is_empty());
    drop(listening);
    set_replayed(&engine, "unheard", "w");
    assert_eq!(recorder.0.lock().len(), 2, "nobody listens any more");
}

#[test]
fn a_flush_of_an_empty_database_leaves_no_tombstone_but_its_replay_record() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let entries = || engine.property_sum("rocksdb.num-entries-active-mem-table");
    let flush_all = |with_set: bool| {
        let mut txn = engine.txn(ReadMode::Blocking);
        txn.set_db(0);
        if with_set {
            txn.set_string(0, b"mine", Bytes::from_static(b"v"), ExpireAction::Clear)
                .unwrap();
        }
        txn.flush_databases(None);
        txn.set_replay(vec![vec![Bytes::from_static(b"FLUSHALL")]]);
        for ticket in txn.commit().unwrap() {
            ticket.wait_blocking().unwrap();
        }
    };
    // Per database: 4 range deletes (meta, data, zscore, stream) for a
    // real flush, none for an empty one; its key counter is reset either
    // way (one entry).
    let before = entries();
    flush_all(false);
    assert_eq!(
        entries() - before,
        16,
        "no range delete for empty databases"
    );
    let records = engine.wal_records_since(0).unwrap();
    assert_eq!(records.len(), 1, "the replay record is in the WAL");
    assert_eq!(records[0].2, vec![vec![Bytes::from_static(b"FLUSHALL")]]);

    // The transaction's own write before the flush is flushed with it.
    flush_all(true);
    assert_eq!(read(&engine, |t| t.get_string(0, b"mine")), None);
    assert_eq!(engine.key_count(0), (0, 0));

    // A database with a key is flushed for real, the others are skipped.
    write(&engine, |t| {
        t.set_string(3, b"k", Bytes::from_static(b"v"), ExpireAction::Clear)
    });
    let before = entries();
    flush_all(false);
    assert_eq!(read(&engine, |t| t.get_string(3, b"k")), None);
    assert_eq!(engine.key_count(3), (0, 0));
    assert_eq!(entries() - before, 16 + 5, "one database's range deletes");
    engine.shutdown();
    drop(engine);
    let engine = open(dir.path());
    assert_eq!(read(&engine, |t| t.get_string(3, b"k")), None);
    assert_eq!(engine.key_count(3), (0, 0));
    engine.shutdown();
}

fn set(t: &mut crate::Txn<'_>, db: u8, key: &str, value: &str) -> crate::Result<()> {
    t.set_string(
        db,
        key.as_bytes(),
        Bytes::copy_from_slice(value.as_bytes()),
        ExpireAction::Clear,
    )
}

fn get(t: &mut crate::Txn<'_>, db: u8, key: &str) -> Option<Bytes> {
    t.get_string(db, key.as_bytes()).expect("get")
}

#[test]
fn a_transaction_reads_its_own_flush_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    write(&engine, |t| set(t, 0, "c", "10"));
    write(&engine, |t| set(t, 1, "d", "1"));
    // One transaction: the flush, then a read and a write of the flushed
    // key, as `MULTI; FLUSHALL; INCR c; EXEC` runs them.
    let (after_flush, count) = write(&engine, |t| {
        t.flush_databases(None);
        let seen = get(t, 0, "c");
        set(t, 0, "c", "1")?;
        Ok((seen, t.key_count(0)))
    });
    assert_eq!(after_flush, None);
    assert_eq!(count, (1, 0));
    assert_eq!(engine.key_count(0), (1, 0));
    assert_eq!(engine.key_count(1), (0, 0));
    assert_eq!(
        read(&engine, |t| Ok(get(t, 0, "c"))),
        Some(Bytes::from_static(b"1"))
    );
    assert_eq!(read(&engine, |t| Ok(get(t, 1, "d"))), None);
    engine.shutdown();
    drop(engine);
    let engine = open(dir.path());
    assert_eq!(engine.key_count(0), (1, 0));
    assert_eq!(
        read(&engine, |t| Ok(get(t, 0, "c"))),
        Some(Bytes::from_static(b"1"))
    );
    engine.shutdown();
}

#[test]
fn a_transaction_reads_through_its_own_swaps() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    write(&engine, |t| set(t, 0, "k", "zero"));
    write(&engine, |t| set(t, 1, "k", "one"));
    // SWAPDB then GET reads the other database's value.
    let seen = write(&engine, |t| {
        t.swap_databases(0, 1)?;
        Ok(get(t, 0, "k"))
    });
    assert_eq!(seen, Some(Bytes::from_static(b"one")));
    // Two swaps of the same pair are no swap.
    write(&engine, |t| {
        t.swap_databases(0, 1)?;
        t.swap_databases(0, 1)
    });
    assert_eq!(
        read(&engine, |t| Ok(get(t, 0, "k"))),
        Some(Bytes::from_static(b"one"))
    );
    // SWAPDB then FLUSHDB flushes what the swap put in db 0.
    write(&engine, |t| {
        t.swap_databases(0, 1)?;
        t.flush_databases(Some(0));
        Ok(())
    });
    assert_eq!(read(&engine, |t| Ok(get(t, 0, "k"))), None);
    assert_eq!(
        read(&engine, |t| Ok(get(t, 1, "k"))),
        Some(Bytes::from_static(b"one"))
    );
    assert_eq!((engine.key_count(0), engine.key_count(1)), ((0, 0), (1, 0)));
    engine.shutdown();
    drop(engine);
    let engine = open(dir.path());
    assert_eq!(
        read(&engine, |t| Ok(get(t, 1, "k"))),
        Some(Bytes::from_static(b"one"))
    );
    assert_eq!(read(&engine, |t| Ok(get(t, 0, "k"))), None);
    engine.shutdown();
}

#[test]
fn swaps_given_up_in_any_order_leave_the_committed_map() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let inner = engine.inner();
    let swap = |a, b| crate::batch::Swap {
        a,
        b,
        checks: Vec::new(),
    };
    let batch = |seq, swaps| crate::batch::CommitBatch {
        seq,
        swaps,
        ..Default::default()
    };
    let identity: Vec<u8> = (0..crate::keys::MAX_DATABASES).map(|d| d as u8).collect();
    // Two groups swap overlapping databases; both fail, the first first.
    let (first, second) = (batch(1, vec![swap(0, 1)]), batch(2, vec![swap(0, 2)]));
    inner.db_map.submit_swaps_for_test(&first);
    inner.db_map.submit_swaps_for_test(&second);
    assert_eq!(inner.db_map.physical(0), 2);
    inner.db_map.swaps_abandoned(std::slice::from_ref(&first));
    // Only the second swap is left.
    assert_eq!(
        (
            inner.db_map.physical(0),
            inner.db_map.physical(1),
            inner.db_map.physical(2)
        ),
        (2, 1, 0)
    );
    inner.db_map.swaps_abandoned(std::slice::from_ref(&second));
    assert_eq!(inner.db_map.live_map(), identity);
    // The second fails while the first commits.
    let (first, second) = (batch(3, vec![swap(0, 1)]), batch(4, vec![swap(0, 2)]));
    inner.db_map.submit_swaps_for_test(&first);
    inner.db_map.submit_swaps_for_test(&second);
    let map = inner
        .db_map
        .map_after(std::slice::from_ref(&first))
        .expect("a swap");
    inner
        .db_map
        .swaps_committed(std::slice::from_ref(&first), map);
    inner.db_map.swaps_abandoned(std::slice::from_ref(&second));
    assert_eq!(
        (
            inner.db_map.physical(0),
            inner.db_map.physical(1),
            inner.db_map.physical(2)
        ),
        (1, 0, 2)
    );
    engine.shutdown();
}

#[test]
fn a_writer_that_panics_fails_its_batch_and_later_batches_complete() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let mut txn = engine.txn(ReadMode::Blocking);
    txn.put_server_record_raw_for_test(crate::writer::tests_support::PANIC_KEY);
    let failed = txn.commit().expect("submit");
    for ticket in failed {
        assert!(ticket.wait_blocking().is_err());
    }
    write(&engine, |t| set(t, 0, "after", "1"));
    assert_eq!(
        read(&engine, |t| Ok(get(t, 0, "after"))),
        Some(Bytes::from_static(b"1"))
    );
    assert_eq!(engine.pending_bytes(), 0);
    engine.shutdown();
}

#[test]
fn key_counts_include_submitted_batches() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let mut txn = engine.txn(ReadMode::Blocking);
    set(&mut txn, 0, "a", "1").unwrap();
    let tickets = txn.commit().unwrap();
    // Visible before it is durable, its count too.
    assert_eq!(engine.key_count(0), (1, 0));
    for ticket in tickets {
        ticket.wait_blocking().unwrap();
    }
    assert_eq!(engine.key_count(0), (1, 0));
    engine.shutdown();
}

#[test]
fn a_big_copy_is_staged_in_bounded_batches_and_stays_whole() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let fields = 10_000usize;
    write(&engine, |t| {
        let mut hash = t.hash_or_new(0, b"h")?;
        for i in 0..fields {
            let field = format!("f{i}");
            t.hash_insert_new(
                0,
                b"h",
                &mut hash,
                field.as_bytes(),
                Bytes::from(i.to_string()),
            );
        }
        t.save_collection(0, b"h", &hash)
    });
    // RENAME's work: the copy's last part and the meta stay in the
    // command's own batch; everything before went in staged batches.
    let own_writes = write(&engine, |t| {
        t.copy_key(0, b"h", 0, b"h2")?;
        t.delete_key(0, b"h")?;
        Ok(t.write_count_for_test())
    });
    assert!(own_writes < 4096 + 16, "{own_writes} writes in one batch");
    let (size, last) = read(&engine, |t| {
        let hash = t.hash(0, b"h2")?.expect("copied");
        let last = t.hash_get(0, b"h2", &hash, format!("f{}", fields - 1).as_bytes())?;
        Ok((hash.size, last))
    });
    assert_eq!(size, fields as u64);
    assert_eq!(last, Some(Bytes::from((fields - 1).to_string())));
    let mut seen = 0usize;
    read(&engine, |t| {
        let hash = t.hash(0, b"h2")?.expect("copied");
        t.hash_fields(0, b"h2", &hash, None, |_, _| {
            seen += 1;
            true
        })
    });
    assert_eq!(seen, fields);
    assert_eq!(engine.key_count(0), (1, 0));
    engine.shutdown();
}

#[test]
fn an_open_view_keeps_the_members_it_shows_through_a_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    write(&engine, |t| {
        let mut hash = t.hash_or_new(0, b"h")?;
        for i in 0..100 {
            let field = format!("f{i:03}");
            t.hash_insert_new(
                0,
                b"h",
                &mut hash,
                field.as_bytes(),
                Bytes::from_static(b"v"),
            );
        }
        t.save_collection(0, b"h", &hash)
    });
    let count = |view: &mut crate::KeyspaceView<'_>, hash: &crate::Collection| {
        let mut seen = 0;
        view.scan_members(
            crate::Cf::Data,
            b"h",
            hash,
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            false,
            |_, _| {
                seen += 1;
                true
            },
        )
        .expect("scan");
        seen
    };
    let mut view = engine.keyspace_view(0).expect("view");
    let hash = view
        .collection(b"h", crate::ValueType::Hash)
        .expect("read")
        .expect("hash");
    // A streamed reply's first pass counts, its second sends: the key is
    // deleted and its members compacted in between.
    assert_eq!(count(&mut view, &hash), 100);
    write(&engine, |t| t.delete_key(0, b"h"));
    assert_eq!(compact_data(&engine).len(), 100, "pinned by the view");
    assert_eq!(count(&mut view, &hash), 100);
    drop(view);
    assert!(compact_data(&engine).is_empty(), "reclaimed once unpinned");
    engine.shutdown();
}

#[test]
fn counted_changes_follow_savepoints_and_survive_parts() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let mut txn = engine.txn(ReadMode::Blocking);
    txn.add_dirty(2);
    let savepoint = txn.savepoint();
    txn.add_dirty(5);
    assert_eq!(txn.dirty(), 7);
    // A failed command inside EXEC counts nothing.
    txn.rollback(savepoint);
    assert_eq!(txn.dirty(), 2);
    // A pool run's count crosses back with its parts.
    let txn = engine.txn_from_parts(txn.into_parts());
    assert_eq!(txn.dirty(), 2);
}

// A keyspace view and the engine's figures, over a real engine (view.rs
// and figures.rs sit below engine.rs, so their engine tests are here).

fn all_keys(view: &mut crate::KeyspaceView<'_>) -> Vec<Bytes> {
    let page = view.scan_keys(None, usize::MAX, |_, _| true).expect("scan");
    assert!(page.next_after.is_none());
    page.keys
}

#[test]
fn a_view_holds_every_write_queued_before_it_and_none_after() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    for i in 0..2000u32 {
        submit_set(&engine, format!("k{i:04}").as_bytes(), ExpireAction::Clear);
    }
    let past = crate::now_ms() - 1;
    submit_set(&engine, b"expired", ExpireAction::At(past));
    let mut view = engine.keyspace_view(0).expect("view");
    submit_set(&engine, b"later", ExpireAction::Clear);
    let keys = all_keys(&mut view);
    assert_eq!(keys.len(), 2000);
    assert!(!keys.contains(&Bytes::from_static(b"expired")));
    assert!(!keys.contains(&Bytes::from_static(b"later")));
    // Paged like SCAN: every key once, in order.
    let mut paged = Vec::new();
    let mut after: Option<Bytes> = None;
    loop {
        let page = view
            .scan_keys(after.as_deref(), 300, |_, _| true)
            .expect("scan");
        paged.extend(page.keys);
        match page.next_after {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(paged, keys);
    drop(view);
    let mut fresh = engine.keyspace_view(0).expect("view");
    assert_eq!(all_keys(&mut fresh).len(), 2001);
    assert!(all_keys(&mut engine.keyspace_view(3).expect("view")).is_empty());
    drop(fresh);
    engine.shutdown();
}

#[test]
fn a_flush_shows_in_the_levels_and_a_cold_read_counts_as_disk() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    write(&engine, |t| {
        for i in 0..2000 {
            let key = format!("key:{i}");
            t.set_string(
                0,
                key.as_bytes(),
                Bytes::from(vec![b'x'; 100]),
                ExpireAction::Clear,
            )?;
        }
        Ok(())
    });
    engine.reload().unwrap();
    let figures = engine.rocks_figures();
    let l0 = figures.levels.first().copied().unwrap_or_default();
    assert!(l0.files >= 1 && l0.bytes > 0, "{figures:?}");
    assert!(l0.compaction_write_bytes >= 0.0);
    assert!(figures.bytes_written > 0 && figures.flush_write_bytes > 0);
    assert!(
        figures.stalls.contains_key("memtable-limit-delays"),
        "{figures:?}"
    );
    // After the reload nothing is cached: a blocking read loads blocks.
    let before = engine.read_tiers();
    let mut txn = engine.txn(ReadMode::Blocking);
    assert!(txn.get_string(0, b"key:7").unwrap().is_some());
    let after = engine.read_tiers();
    assert!(after.disk > before.disk, "{before:?} {after:?}");
    // A memory-only read of the same key finds its blocks in the cache.
    let mut txn = engine.txn(ReadMode::MemoryOnly);
    assert!(txn.get_string(0, b"key:7").unwrap().is_some());
    let last = engine.read_tiers();
    assert!(last.block_cache + last.hot > after.block_cache + after.hot);
}

/// 2,000 keys of 512 bytes in SST files, every cache empty (a reopen).
fn cold_engine(dir: &std::path::Path, expiring: &[u32]) -> Engine {
    {
        let engine = open(dir);
        for i in 0..2000u32 {
            let expire = if expiring.contains(&i) {
                ExpireAction::At(u64::MAX / 2)
            } else {
                ExpireAction::Clear
            };
            write(&engine, |t| {
                t.set_string(
                    0,
                    format!("key:{i}").as_bytes(),
                    Bytes::from(vec![b'x'; 512]),
                    expire,
                )
            });
        }
        engine.reload().unwrap();
        engine.shutdown();
    }
    open(dir)
}

#[test]
fn a_write_of_a_cold_key_reads_its_facts_and_never_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let engine = cold_engine(dir.path(), &[1234]);
    assert_eq!(engine.key_count(0), (2000, 1));
    let memory_only = |f: &mut dyn FnMut(&mut crate::Txn<'_>) -> crate::Result<()>| {
        let mut txn = engine.txn(ReadMode::MemoryOnly);
        f(&mut txn)?;
        for ticket in txn.commit()? {
            ticket.wait_blocking()?;
        }
        Ok::<(), StorageError>(())
    };
    let overwrite = |t: &mut crate::Txn<'_>| {
        t.set_string(
            0,
            b"key:1234",
            Bytes::from_static(b"new"),
            ExpireAction::Clear,
        )
    };
    // Nothing is in memory yet: the facts are on disk too.
    assert_eq!(
        memory_only(&mut |t| overwrite(t)),
        Err(StorageError::Incomplete)
    );
    // A blocking EXISTS brings the key's facts into memory, not its value.
    assert!(read(&engine, |t| t.exists(0, b"key:1234")));
    let mut txn = engine.txn(ReadMode::MemoryOnly);
    assert_eq!(
        txn.get_string(0, b"key:1234"),
        Err(StorageError::Incomplete)
    );
    drop(txn);
    // So a memory-only overwrite succeeds, and the counts stay exact: the
    // key existed (no new key) with a TTL (one expiry fewer).
    memory_only(&mut |t| overwrite(t)).unwrap();
    assert_eq!(engine.key_count(0), (2000, 0));
    assert_eq!(
        read(&engine, |t| t.get_string(0, b"key:1234")),
        Some(Bytes::from_static(b"new"))
    );
    // A DEL of a key whose facts are in memory reads no value either.
    assert!(read(&engine, |t| t.exists(0, b"key:99")));
    memory_only(&mut |t| t.delete_key(0, b"key:99").map(|existed| assert!(existed))).unwrap();
    assert_eq!(engine.key_count(0), (1999, 0));
    engine.shutdown();
    drop(engine);
    // And all of it after a restart.
    let engine = open(dir.path());
    assert_eq!(engine.key_count(0), (1999, 0));
    assert!(!read(&engine, |t| t.exists(0, b"key:99")));
    assert!(read(&engine, |t| t.exists(0, b"key:1234")));
    engine.shutdown();
}

#[test]
fn a_database_without_its_facts_gets_them_built_when_it_opens() {
    let dir = tempfile::tempdir().unwrap();
    let engine = cold_engine(dir.path(), &[7]);
    let inner = engine.inner();
    let facts_cf = inner.cf(crate::Cf::Facts).unwrap();
    let facts_of = |key: &[u8]| {
        inner
            .db
            .get_cf(facts_cf, crate::keys::meta_key(0, key))
            .unwrap()
    };
    let before: Vec<_> = (0..2000)
        .map(|i| facts_of(format!("key:{i}").as_bytes()))
        .collect();
    assert!(before.iter().all(Option::is_some));
    assert_eq!(before[7].as_ref().unwrap().len(), 10, "type, flags, expiry");
    // What a database from before the column family looks like: none of
    // its facts, and no record that they were built.
    let mut wipe = rocksdb::WriteBatch::default();
    wipe.delete_range_cf(facts_cf, &[][..], &crate::keys::PAST_EVERY_KEY[..]);
    wipe.delete_cf(
        inner.cf(crate::Cf::System).unwrap(),
        crate::facts::FACTS_COMPLETE_KEY,
    );
    inner.db.write(wipe).unwrap();
    assert!(facts_of(b"key:7").is_none());
    engine.shutdown();
    drop(engine);
    let engine = open(dir.path());
    let inner = engine.inner();
    let facts_cf = inner.cf(crate::Cf::Facts).unwrap();
    let after: Vec<_> = (0..2000)
        .map(|i| {
            inner
                .db
                .get_cf(
                    facts_cf,
                    crate::keys::meta_key(0, format!("key:{i}").as_bytes()),
                )
                .unwrap()
        })
        .collect();
    assert_eq!(after, before);
    // Built once: the next open finds them complete.
    assert_eq!(crate::facts::ensure_complete(&inner.db).unwrap(), 0);
    engine.shutdown();
}

#[test]
fn the_wal_holds_a_set_value_once_and_replays_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(dir.path());
    let value = |i: u32| Bytes::from(format!("{i:04}").repeat(250));
    let before = engine.rocks_figures().wal_bytes;
    for i in 0..200u32 {
        set_replayed(
            &engine,
            &format!("k{i}"),
            std::str::from_utf8(&value(i)).unwrap(),
        );
    }
    let wal = engine.rocks_figures().wal_bytes - before;
    let per_value_byte = wal as f64 / (200.0 * 1000.0);
    assert!(per_value_byte < 1.1, "{wal} WAL bytes for 200 KB of values");
    // One transaction that sets a key twice writes only the second value:
    // the first is written out in the record, the second referred to.
    write(&engine, |t| {
        t.set_db(0);
        t.set_string(0, b"twice", value(1), ExpireAction::Clear)?;
        t.set_string(0, b"twice", value(2), ExpireAction::Clear)?;
        t.set_replay(vec![
            vec![
                Bytes::from_static(b"SET"),
                Bytes::from_static(b"twice"),
                value(1),
            ],
            vec![
                Bytes::from_static(b"SET"),
                Bytes::from_static(b"twice"),
                value(2),
            ],
        ]);
        Ok(())
    });
    let commands: Vec<Vec<Bytes>> = engine
        .wal_records_since(0)
        .unwrap()
        .into_iter()
        .flat_map(|(_, _, commands)| commands)
        .collect();
    assert_eq!(commands.len(), 202);
    for (i, command) in commands[..200].iter().enumerate() {
        let key = format!("k{i}");
        assert_eq!(command[..2], [Bytes::from_static(b"SET"), Bytes::from(key)]);
        assert_eq!(command[2], value(i as u32));
    }
    assert_eq!(commands[200][2], value(1));
    assert_eq!(commands[201][2], value(2));
    engine.shutdown();
}
