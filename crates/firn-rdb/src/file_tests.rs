//! RDB files read entry by entry: every payload the DUMP tests know (all
//! encodings, old ones included, and the streams of the fixtures) inside
//! a file with the opcodes around keys; the files of Redis 7.0.15's own
//! test suite (`tests/fixtures/*.rdb`, RDB versions 3 to 10); headers,
//! checksums, what Firn refuses (modules, the release candidates'
//! functions); and truncated or corrupt files: errors, never a panic.
//! Files that redis-server writes itself are read in `tests/rdb_file.rs`.

use crate::encoding::write_len;
use crate::payload::CRC64;
use crate::stream_tests::stream_seeds;
use crate::tests::seeds;
use crate::xorshift::Gen;
use crate::*;

/// A hand-made RDB file: header, opcodes, then EOF and the CRC64.
struct FileBuilder {
    bytes: Vec<u8>,
}

impl FileBuilder {
    fn new(version: u32) -> FileBuilder {
        FileBuilder {
            bytes: format!("REDIS{version:04}").into_bytes(),
        }
    }

    fn raw(mut self, bytes: &[u8]) -> FileBuilder {
        self.bytes.extend_from_slice(bytes);
        self
    }

    fn opcode_len(mut self, opcode: u8, lengths: &[u64]) -> FileBuilder {
        self.bytes.push(opcode);
        for &len in lengths {
            write_len(&mut self.bytes, len);
        }
        self
    }

    fn aux(mut self, name: &str, value: &[u8]) -> FileBuilder {
        self.bytes.push(250);
        write_string(&mut self.bytes, name.as_bytes());
        write_string(&mut self.bytes, value);
        self
    }

    fn select(self, db: u64) -> FileBuilder {
        self.opcode_len(254, &[db])
    }

    fn expire_ms(mut self, at_ms: i64) -> FileBuilder {
        self.bytes.push(252);
        self.bytes.extend_from_slice(&at_ms.to_le_bytes());
        self
    }

    /// `object`: a DUMP payload without its footer.
    fn key(mut self, key: &[u8], object: &[u8]) -> FileBuilder {
        self.bytes.push(object[0]);
        write_string(&mut self.bytes, key);
        self.bytes.extend_from_slice(&object[1..]);
        self
    }

    fn function(mut self, code: &str) -> FileBuilder {
        self.bytes.push(245);
        write_string(&mut self.bytes, code.as_bytes());
        self
    }

    fn finish(mut self) -> Vec<u8> {
        self.bytes.push(255);
        let crc = CRC64.checksum(&self.bytes);
        self.bytes.extend_from_slice(&crc.to_le_bytes());
        self.bytes
    }

    fn finish_with_crc(mut self, crc: u64) -> Vec<u8> {
        self.bytes.push(255);
        self.bytes.extend_from_slice(&crc.to_le_bytes());
        self.bytes
    }
}

fn read_all(file: &[u8]) -> Result<Vec<RdbEntry>, RdbFileError> {
    RdbFileReader::new(file)?.collect()
}

fn key_entry(db: u32, key: &[u8], value: RdbValue, expire_at_ms: Option<i64>) -> RdbEntry {
    RdbEntry::Key(RdbKey {
        db,
        key: key.to_vec(),
        value,
        expire_at_ms,
    })
}

fn object_of(payload: &[u8]) -> &[u8] {
    &payload[..payload.len() - 10]
}

fn all_seeds() -> Vec<Vec<u8>> {
    let mut all = seeds();
    all.extend(stream_seeds());
    all
}

#[test]
fn every_payload_reads_inside_a_file() {
    let seeds = all_seeds();
    let mut file = FileBuilder::new(10)
        .aux("redis-ver", b"7.0.15")
        .aux("ctime", b"1700000000")
        .select(2)
        .opcode_len(251, &[seeds.len() as u64, 1]);
    for (i, seed) in seeds.iter().enumerate() {
        if i % 3 == 0 {
            file = file.expire_ms(1_900_000_000_000 + i as i64);
        }
        file = file.key(format!("key:{i}").as_bytes(), object_of(seed));
    }
    let file = file.finish();

    let mut reader = RdbFileReader::new(&file[..]).unwrap();
    assert_eq!(reader.version(), 10);
    for (i, seed) in seeds.iter().enumerate() {
        let Some(RawEntry::Key(raw)) = reader.next_raw().unwrap() else {
            panic!("key {i} missing");
        };
        assert_eq!(raw.db, 2);
        assert_eq!(raw.key, format!("key:{i}").into_bytes());
        assert_eq!(
            raw.object,
            object_of(seed),
            "key {i}: the copy is the object"
        );
        let expire = (i % 3 == 0).then(|| 1_900_000_000_000 + i as i64);
        assert_eq!(raw.expire_at_ms, expire);
        assert_eq!(restore(&raw.clone().into_dump_payload()), restore(seed));
        let decoded = raw.decode().unwrap();
        assert_eq!(Ok(decoded.value), restore(seed), "key {i}");
    }
    assert!(reader.next_raw().unwrap().is_none());
    assert_eq!(reader.bytes_read(), file.len() as u64);
    assert!(reader.next_raw().unwrap().is_none(), "stays at the end");
}

#[test]
fn opcodes_around_keys() {
    let string = |s: &str| {
        let mut object = vec![0];
        write_string(&mut object, s.as_bytes());
        object
    };
    let file = FileBuilder::new(10)
        .aux("aof-base", b"0")
        .function("#!lua name=lib\nredis.register_function('f', function() return 1 end)")
        .select(0)
        // EXPIRETIME in seconds, then LRU and LFU information.
        .raw(&[253])
        .raw(&1_800_000_000i32.to_le_bytes())
        .opcode_len(248, &[12345])
        .raw(&[249, 7])
        .key(b"a", &string("1"))
        // The expiry was for `a` only.
        .key(b"b", &string("2"))
        .select(15)
        .opcode_len(244, &[1, 2, 3])
        .expire_ms(-5)
        .key(b"c", &string("3"))
        .finish();
    assert_eq!(
        read_all(&file).unwrap(),
        vec![
            RdbEntry::Function(
                b"#!lua name=lib\nredis.register_function('f', function() return 1 end)".to_vec()
            ),
            key_entry(
                0,
                b"a",
                RdbValue::String(b"1".to_vec()),
                Some(1_800_000_000_000)
            ),
            key_entry(0, b"b", RdbValue::String(b"2".to_vec()), None),
            key_entry(15, b"c", RdbValue::String(b"3".to_vec()), Some(-5)),
        ]
    );
}

#[test]
fn headers() {
    let not_rdb = |file: &[u8]| matches!(RdbFileReader::new(file), Err(RdbFileError::NotRdb));
    assert!(not_rdb(b""));
    assert!(not_rdb(b"REDIS001"));
    assert!(not_rdb(b"REDIX0010\xff"));
    assert!(not_rdb(b"REDIS00a1\xff"));
    for (file, version) in [(&b"REDIS0011"[..], 11), (b"REDIS0000", 0)] {
        match RdbFileReader::new(file) {
            Err(RdbFileError::Version(v)) => assert_eq!(v, version),
            other => panic!("{:?}", other.map(|r| r.version())),
        }
    }
    // Versions before 5 end without a checksum.
    assert_eq!(read_all(b"REDIS0004\xff").unwrap(), vec![]);
    assert_eq!(
        read_all(&FileBuilder::new(1).raw(&[255]).bytes).unwrap(),
        vec![]
    );
}

#[test]
fn checksums() {
    let file = FileBuilder::new(10).select(0).key(b"k", &[0, 1, b'v']);
    assert!(read_all(&file.finish()).is_ok());
    let file = FileBuilder::new(10).select(0).key(b"k", &[0, 1, b'v']);
    // `rdbchecksum no` writes 0: nothing to check.
    assert!(read_all(&file.finish_with_crc(0)).is_ok());
    let mut bad = FileBuilder::new(10).key(b"k", &[0, 1, b'v']).finish();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    let error = read_all(&bad).unwrap_err();
    assert!(matches!(error, RdbFileError::Checksum { .. }), "{error}");
    // A changed byte inside the data is caught by the checksum too.
    let mut bad = FileBuilder::new(10).key(b"k", &[0, 1, b'v']).finish();
    bad[13] = b'w';
    assert!(matches!(read_all(&bad), Err(RdbFileError::Checksum { .. })));
}

#[test]
fn what_firn_cannot_load_is_refused_clearly() {
    let module_aux = FileBuilder::new(10).raw(&[247, 1, 2, 3]).finish();
    let error = read_all(&module_aux).unwrap_err();
    assert!(matches!(error, RdbFileError::Module { offset: 9, .. }));
    assert!(
        error.to_string().contains("Firn loads no modules"),
        "{error}"
    );
    let module_value = FileBuilder::new(10).raw(&[7, 1, b'k', 0, 0]).finish();
    assert!(matches!(
        read_all(&module_value),
        Err(RdbFileError::Module { .. })
    ));
    let old_function = FileBuilder::new(10).raw(&[246, 1, b'f']).finish();
    assert!(matches!(
        read_all(&old_function),
        Err(RdbFileError::OldFunctionFormat { offset: 9 })
    ));
    // Type 20 (a listpack set) is Redis 7.2's, RDB version 11.
    for unknown in [8, 20, 22, 100, 243] {
        let file = FileBuilder::new(10).raw(&[unknown, 1, b'k', 0]).finish();
        let error = read_all(&file).unwrap_err();
        assert!(
            matches!(&error, RdbFileError::Corrupt { what, .. } if what.contains("object type")),
            "{unknown}: {error}"
        );
    }
    // A value that does not decode names its key.
    let file = FileBuilder::new(10)
        .select(3)
        .key(b"bad\x01key", &[TYPE_BAD_LIST, 0])
        .finish();
    let error = read_all(&file).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the value of key \"bad\\x01key\" in db 3 (entry at byte 11) does not decode"
    );
}

/// A plain list: its count, 0 here, which no Redis writes.
const TYPE_BAD_LIST: u8 = 1;

/// A file of many keys, every encoding among them.
fn sample_file() -> Vec<u8> {
    let mut file = FileBuilder::new(10)
        .aux("redis-ver", b"7.0.15")
        .function("#!lua name=x\n");
    for (i, seed) in all_seeds()
        .iter()
        .enumerate()
        .filter(|(_, s)| s.len() < 600)
    {
        file = file
            .select(i as u64 % 4)
            .expire_ms(i as i64)
            .key(format!("{i}").as_bytes(), object_of(seed));
    }
    file.finish()
}

#[test]
fn truncated_files_are_errors() {
    let file = sample_file();
    assert!(read_all(&file).is_ok());
    for cut in 0..file.len() {
        let error = read_all(&file[..cut]).expect_err("a cut file is an error");
        if cut >= 9 {
            assert!(
                matches!(error, RdbFileError::Truncated { offset } if offset <= cut as u64),
                "cut {cut}: {error}"
            );
        }
    }
}

#[test]
fn corrupt_files_are_errors_not_panics() {
    let file = sample_file();
    let mut g = Gen(11);
    for _ in 0..3000 {
        let mut bad = file.clone();
        for _ in 0..1 + g.below(3) {
            let at = 9 + g.below(bad.len() as u64 - 9) as usize;
            match g.below(3) {
                0 => bad[at] = g.next() as u8,
                1 => bad[at] ^= 1 << g.below(8),
                _ => {
                    bad.remove(at);
                }
            }
        }
        if bad != file {
            assert!(read_all(&bad).is_err(), "the checksum catches any change");
        }
    }
}

#[test]
fn huge_lengths_allocate_only_what_arrives() {
    // A string of 2^62 bytes, of which 3 are there.
    let mut file = FileBuilder::new(10).raw(&[0, 1, b'k', 0x81]).bytes;
    file.extend_from_slice(&(1u64 << 62).to_be_bytes());
    file.extend_from_slice(b"abc");
    assert!(matches!(
        read_all(&file),
        Err(RdbFileError::Truncated { .. })
    ));
    // A list that announces 2^60 elements.
    let mut file = FileBuilder::new(10).raw(&[1, 1, b'k', 0x81]).bytes;
    file.extend_from_slice(&(1u64 << 60).to_be_bytes());
    file.extend_from_slice(&[1, b'a']);
    assert!(matches!(
        read_all(&file),
        Err(RdbFileError::Truncated { .. })
    ));
}

#[test]
fn what_follows_the_rdb_stays_readable() {
    use std::io::Read;
    let mut stream = FileBuilder::new(10).key(b"k", &[0, 1, b'v']).finish();
    stream.extend_from_slice(b"+replication stream");
    let mut reader = RdbFileReader::new(&stream[..]).unwrap();
    while reader.next_entry().unwrap().is_some() {}
    let mut rest = String::new();
    reader.into_inner().read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "+replication stream");
}

// ---------------------------------------------------------------------
// The RDB files of Redis 7.0.15's test suite (tests/assets), with the
// contents its tests expect (tests/integration/rdb.tcl and the
// convert-*-on-load.tcl tests).

/// A value as the test suite's `csvdump` lists it: hash fields and set
/// members sorted, sorted sets by score.
fn csv(value: &RdbValue) -> Vec<String> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match value {
        RdbValue::String(s) => vec![text(s)],
        RdbValue::List(items) => items.iter().map(|i| text(i)).collect(),
        RdbValue::Set(members) => {
            let mut members: Vec<String> = members.iter().map(|m| text(m)).collect();
            members.sort();
            members
        }
        RdbValue::SortedSet(members) => members
            .iter()
            .flat_map(|(m, score)| [text(m), format!("{score}")])
            .collect(),
        RdbValue::Hash(pairs) => {
            let mut pairs: Vec<(String, String)> =
                pairs.iter().map(|(f, v)| (text(f), text(v))).collect();
            pairs.sort();
            pairs.into_iter().flat_map(|(f, v)| [f, v]).collect()
        }
        RdbValue::Stream(_) => vec!["<stream>".into()],
    }
}

/// Every key of `file` as `key type contents...`, sorted by key.
fn csvdump(file: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = read_all(file)
        .unwrap()
        .into_iter()
        .map(|entry| match entry {
            RdbEntry::Key(k) => {
                let mut words = vec![
                    String::from_utf8_lossy(&k.key).into_owned(),
                    k.value.type_name().to_string(),
                ];
                words.extend(csv(&k.value));
                words.join(",")
            }
            RdbEntry::Function(code) => String::from_utf8_lossy(&code).into_owned(),
        })
        .collect();
    lines.sort();
    lines
}

#[test]
fn reads_the_redis_test_suite_files() {
    let encodings = include_bytes!("../tests/fixtures/encodings.rdb");
    let compressible = "a".repeat(137);
    assert_eq!(
        csvdump(encodings),
        vec![
            format!("compressible,string,{compressible}"),
            "hash,hash,a,1,aa,10,aaa,100,b,2,bb,20,bbb,200,c,3,cc,30,ccc,300,ddd,400,eee,5000000000".into(),
            "hash_zipped,hash,a,1,b,2,c,3".into(),
            format!("list,list,{0},{0},{0}", "1,2,3,a,b,c,100000,6000000000"),
            "list_zipped,list,1,2,3,a,b,c,100000,6000000000".into(),
            "number,string,10".into(),
            "set,set,1,100000,2,3,6000000000,a,b,c".into(),
            "set_zipped_1,set,1,2,3,4".into(),
            "set_zipped_2,set,100000,200000,300000,400000".into(),
            "set_zipped_3,set,1000000000,2000000000,3000000000,4000000000,5000000000,6000000000".into(),
            "string,string,Hello World".into(),
            "zset,zset,a,1,b,2,c,3,aa,10,bb,20,cc,30,aaa,100,bbb,200,ccc,300,aaaa,1000,cccc,123456789,bbbb,5000000000".into(),
            "zset_zipped,zset,a,1,b,2,c,3".into(),
        ]
    );
    for (file, hash) in [
        (&include_bytes!("../tests/fixtures/hash-zipmap.rdb")[..], 3),
        (include_bytes!("../tests/fixtures/hash-ziplist.rdb"), 9),
    ] {
        let mut reader = RdbFileReader::new(file).unwrap();
        assert_eq!(reader.version(), hash);
        let Some(RdbEntry::Key(key)) = reader.next_entry().unwrap() else {
            panic!("no key");
        };
        assert_eq!(key.key, b"hash");
        assert_eq!(csv(&key.value), ["f1", "v1", "f2", "v2"]);
        assert!(reader.next_entry().unwrap().is_none());
    }
    assert_eq!(
        csvdump(include_bytes!("../tests/fixtures/zset-ziplist.rdb")),
        ["zset,zset,one,1,two,2"]
    );
    assert_eq!(
        csvdump(include_bytes!("../tests/fixtures/list-quicklist.rdb")),
        ["list,list,7", "x,string,7"]
    );
}
