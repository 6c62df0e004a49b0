//! DUMP and RESTORE end to end: payloads byte-identical to redis-server
//! 7.0.15's, payloads in older encodings, round trips, and corrupt or
//! hostile payloads refused without a panic.

use crate::encoding::{Reader, ENC_LZF};
use crate::object::*;
use crate::payload::CRC64;
use crate::xorshift::Gen;
use crate::*;
use firn_prims::string2ll;

pub(crate) fn hex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

pub(crate) fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Appends the version and checksum to a hand-made object.
pub(crate) fn with_footer(body: &[u8]) -> Vec<u8> {
    let mut payload = body.to_vec();
    payload.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = CRC64.checksum(&payload);
    payload.extend_from_slice(&crc.to_le_bytes());
    payload
}

fn bytes_list(items: &[&str]) -> Vec<Vec<u8>> {
    items.iter().map(|s| s.as_bytes().to_vec()).collect()
}

// DUMP outputs of redis-server 7.0.15.
const STRING_VECTORS: &[(&[u8], &str)] = &[
    (b"hello", "000568656c6c6f0a006372df766534200a"),
    (b"", "00000a005d9b5c400f7fa2da"),
    (b"0", "00c0000a009840a778f8500308"),
    (b"-1", "00c0ff0a000c937e2485089dc5"),
    (b"127", "00c07f0a000db5eb315254c514"),
    (b"128", "00c180000a00eb7ab3b510cf4b65"),
    (b"-128", "00c0800a009966326d2f0c5bd9"),
    (b"-129", "00c17fff0a001760822854808480"),
    (b"32767", "00c1ff7f0a00495a37da17f4d52b"),
    (b"32768", "00c2008000000a0045d82eedd5bda910"),
    (b"2147483647", "00c2ffffff7f0a002c74e59ee02eada1"),
    (
        b"2147483648",
        "000a323134373438333634380a00e7b129a34c1d76ee",
    ),
    (b"-2147483648", "00c2000000800a00c74f873e33558187"),
    (b"007", "00033030370a007258e27b4c69bad9"),
    (b"-0", "00022d300a00d5411fd9d6d050cc"),
    (b"1.5", "0003312e350a001df5d4bedb5b860d"),
    (
        b"12345678901",
        "000b31323334353637383930310a00304e52d727176510",
    ),
    (
        b"aaaaaaaaaaaaaaaaaaaa",
        "001461616161616161616161616161616161616161610a0083b46b5e1b11acf1",
    ),
    (
        b"hello world hello world hello world",
        "00c314230c68656c6c6f20776f726c642068e00b0b016c640a00778390696934acb7",
    ),
];

#[test]
fn string_dumps_match_redis_7_0() {
    let mut vectors: Vec<(Vec<u8>, String)> = STRING_VECTORS
        .iter()
        .map(|(v, h)| (v.to_vec(), h.to_string()))
        .collect();
    // LZF-compressed: "a" x 100 and "x" x 70.
    vectors.push((
        vec![b'a'; 100],
        "00c3094064016161e057000161610a00e8a3b507b06df271".into(),
    ));
    vectors.push((
        vec![b'x'; 70],
        "00c3094046017878e039000178780a0031ca1bede0f32a8d".into(),
    ));
    for (value, expected) in vectors {
        let label = String::from_utf8_lossy(&value).into_owned();
        assert_eq!(
            to_hex(&dump(&RdbValue::String(value.clone()))),
            expected,
            "{label}"
        );
        assert_eq!(
            restore(&hex(&expected)),
            Ok(RdbValue::String(value)),
            "{label}"
        );
    }
}

fn generated_string(g: &mut Gen, i: usize) -> Vec<u8> {
    let n = 21 + g.below(3000) as usize;
    let mut out = Vec::new();
    match i % 4 {
        0 => {
            let alphabet = 1 + g.below(20);
            for _ in 0..n {
                out.push(b'a' + g.below(alphabet) as u8);
            }
        }
        1 => {
            for _ in 0..n {
                out.push(g.next() as u8);
            }
        }
        2 => {
            let words: Vec<Vec<u8>> = (0..12)
                .map(|_| {
                    let len = 1 + g.below(7);
                    (0..len).map(|_| b'a' + g.below(26) as u8).collect()
                })
                .collect();
            while out.len() < n {
                out.extend_from_slice(&words[g.below(12) as usize]);
                out.push(b' ');
            }
        }
        _ => {
            let len = 1 + g.below(40);
            let pattern: Vec<u8> = (0..len).map(|_| g.next() as u8).collect();
            while out.len() < n {
                if g.below(4) != 0 {
                    out.extend_from_slice(&pattern);
                } else {
                    out.push(g.next() as u8);
                }
            }
        }
    }
    out.truncate(n);
    out
}

/// Length and CRC footer of redis-server 7.0.15's DUMP of each generated
/// string (44 of them LZF-compressed by Redis, 20 raw).
const GENERATED_STRING_DUMPS: &[(usize, &str)] = &[
    (1933, "da96170d2ab214ae"),
    (2268, "7b840a3fa5987e36"),
    (1057, "6f6334b47e594b07"),
    (183, "2e08f263e50dbc80"),
    (527, "2e97137d6a6dbba2"),
    (1832, "706e7849ecc9dccd"),
    (633, "6d2344897bb325d6"),
    (75, "73f548b5d1e792b7"),
    (2126, "2e716e431555efbe"),
    (434, "d47101929e6ebae1"),
    (268, "97e4d86e922b69f3"),
    (602, "830b5dee0d60ef16"),
    (1217, "627b3cb8b9334581"),
    (2953, "f81d47157ac897e2"),
    (1191, "368112f170e14432"),
    (319, "74bfa51693ea7e5d"),
    (1671, "c92eef18adcaa5c5"),
    (822, "96eec2feacf4a863"),
    (231, "f762eefc14996a75"),
    (59, "8c07d12ef1203ae8"),
    (405, "52e488751cc2cd0a"),
    (625, "884305b94821c037"),
    (636, "33afdb3260938fcb"),
    (61, "f278efd44cd97a78"),
    (1403, "bcce964b3e2c3d62"),
    (866, "233794c3e1cbf514"),
    (602, "488f2258955fc10c"),
    (54, "fcb2369d4676f51e"),
    (915, "333219a6a45808e8"),
    (569, "49ca41ae25ee100c"),
    (245, "d73501f1d77b7d7d"),
    (624, "cb1ffa8c0262acf6"),
    (1056, "cba1317632edacc4"),
    (460, "31a998ffcf6a455d"),
    (968, "4a7dc29dada64802"),
    (274, "3eea7d37e27ed026"),
    (1801, "e941279bcabb48a4"),
    (960, "f96dafaa07d57d86"),
    (215, "a5c4e4551cde2b38"),
    (247, "62145f74dca7cb8b"),
    (121, "da6928b035596cd8"),
    (1675, "2e00439c0809441d"),
    (950, "d960349b2cb85170"),
    (231, "135cbb7fb5d2e8d9"),
    (2785, "ef1a22d2ba7f5dff"),
    (1121, "8c78dc8c4cf77a4c"),
    (797, "2c4922263648cb17"),
    (318, "eadf3ae55e6c9ad2"),
    (2252, "fb71871fb6e65066"),
    (1661, "cfa50c7d37a1a6d4"),
    (1155, "ddf2e877b63aba12"),
    (113, "fecdc598f3db441d"),
    (2018, "694bd9c292f2f8cc"),
    (570, "3b61f7de8153abc3"),
    (346, "8aa638c2e57f721b"),
    (106, "536554f0b771245f"),
    (63, "8f1c3e5ba47d57fb"),
    (2768, "ff23674b1e9e05db"),
    (869, "1e5ca2bc15294cd1"),
    (255, "b7456ab8c6b7e71a"),
    (1806, "ae16e8ef41866996"),
    (3025, "426f1e02e2134d30"),
    (803, "93dc97c3dc408985"),
    (87, "3f7689d802aaab08"),
];

/// A dump whose length and CRC equal Redis's is Redis's dump.
fn assert_same_as_redis(payload: &[u8], (len, footer): (usize, &str), label: &str) {
    assert_eq!(payload.len(), len, "{label}: length");
    assert_eq!(
        to_hex(&payload[payload.len() - 8..]),
        footer,
        "{label}: crc"
    );
}

#[test]
fn generated_strings_match_redis_7_0() {
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let mut compressed = 0;
    for (i, expected) in GENERATED_STRING_DUMPS.iter().enumerate() {
        let value = generated_string(&mut g, i);
        let payload = dump(&RdbValue::String(value.clone()));
        assert_same_as_redis(&payload, *expected, &format!("string {i}"));
        compressed += usize::from(payload[1] == 0xC0 | ENC_LZF);
        assert_eq!(restore(&payload), Ok(RdbValue::String(value)));
    }
    assert_eq!(compressed, 44);
}

// DUMP outputs of redis-server 7.0.15 for small collections.
const L1: &str = "1201022a2a00000008008161020101dfff028568656c6c6f06c12c02f290eefe04f4005ed0b200000000098001ff0a00ff305fdcad971ec5";
const S1_PLAIN: &str = "02050662616e616e61c00706636865727279056170706c65022d300a00ee1d79d03543b94e";
const S2_INTSET64_LZF: &str =
    "0bc316200408000000032003a0000080a0070100ff600001ff7f0a005ad47b373d832c0a";
const S3_INTSET16: &str = "0b120200000005000000fbff01000200030064000a0024654d3930953b2d";
const S4_INTSET32: &str = "0b10040000000200000001000000701101000a002735436efd6656c4";
const Z1_LISTPACK: &str = "11c34041404a164a0000000c00816302842d696e660581650293302e3130e00500173114816102010181620283322e3504816602f400e8764817203b04098164028320390104ff0a00c4c471da4192c08f";
const Z2_SKIPLIST: &str =
    "0502c3094046017979e0390001797900000000000000400161000000000000f03f0a004f9d654d790ca0a1";
const H1_LISTPACK: &str = "1025250000000600846e616d6505846669726e0585636f756e74062a0185656d707479068001ff0a005d132c73b585ebc2";
const H2_PLAIN: &str = "040203626967c3094041017a7ae03400017a7a016601760a00ef3d6e8781f6aefa";

#[test]
fn small_collections_match_redis_7_0() {
    let cases: Vec<(&str, RdbValue)> = vec![
        (
            L1,
            RdbValue::List(bytes_list(&[
                "a",
                "1",
                "-1",
                "hello",
                "300",
                "-70000",
                "3000000000",
                "",
            ])),
        ),
        (
            S1_PLAIN,
            RdbValue::Set(bytes_list(&["banana", "7", "cherry", "apple", "-0"])),
        ),
        (
            S2_INTSET64_LZF,
            RdbValue::Set(bytes_list(&[
                "-9223372036854775808",
                "0",
                "9223372036854775807",
            ])),
        ),
        (
            S3_INTSET16,
            RdbValue::Set(bytes_list(&["-5", "1", "2", "3", "100"])),
        ),
        (S4_INTSET32, RdbValue::Set(bytes_list(&["1", "70000"]))),
        (
            Z1_LISTPACK,
            RdbValue::SortedSet(vec![
                (b"c".to_vec(), f64::NEG_INFINITY),
                (b"e".to_vec(), 0.1),
                (b"a".to_vec(), 1.0),
                (b"b".to_vec(), 2.5),
                (b"f".to_vec(), 100_000_000_000.0),
                (b"d".to_vec(), f64::INFINITY),
            ]),
        ),
        (
            Z2_SKIPLIST,
            RdbValue::SortedSet(vec![(b"a".to_vec(), 1.0), (vec![b'y'; 70], 2.0)]),
        ),
        (
            H1_LISTPACK,
            RdbValue::Hash(vec![
                (b"name".to_vec(), b"firn".to_vec()),
                (b"count".to_vec(), b"42".to_vec()),
                (b"empty".to_vec(), b"".to_vec()),
            ]),
        ),
        (
            H2_PLAIN,
            RdbValue::Hash(vec![
                (b"big".to_vec(), vec![b'z'; 65]),
                (b"f".to_vec(), b"v".to_vec()),
            ]),
        ),
    ];
    for (payload, value) in cases {
        assert_eq!(restore(&hex(payload)).as_ref(), Ok(&value), "{payload}");
        assert_eq!(to_hex(&dump(&value)), payload, "{value:?}");
    }
}

fn big_list() -> Vec<Vec<u8>> {
    (0..1000i64)
        .map(|j| match j % 3 {
            0 => (j * 37 - 500).to_string().into_bytes(),
            1 => format!("item-{j}").into_bytes(),
            _ => vec![b'x'; (j % 200) as usize],
        })
        .collect()
}

#[test]
fn large_collections_match_redis_7_0() {
    // Values built in redis-server 7.0.15 by RPUSH / ZADD / HSET / SADD
    // in this order; lengths and CRCs of its DUMPs.
    let list = RdbValue::List(big_list());
    let zset_big = RdbValue::SortedSet(
        (0..1000u32)
            .map(|j| {
                let score = f64::from(j * 7919 % 1000) / 8.0 - 50.0;
                (format!("m{j}").into_bytes(), score)
            })
            .collect(),
    );
    let zset_small = RdbValue::SortedSet(
        (0..100u32)
            .map(|j| (format!("m{j}").into_bytes(), f64::from(j) * 0.1))
            .collect(),
    );
    let hash_small = RdbValue::Hash(
        (0..100u32)
            .map(|j| {
                (
                    format!("f{j}").into_bytes(),
                    format!("v{}", j * j).into_bytes(),
                )
            })
            .collect(),
    );
    let intset = RdbValue::Set(
        (0..512i64)
            .map(|j| ((j - 256) * 1_000_003).to_string().into_bytes())
            .collect(),
    );
    let cases = [
        (&list, (5818, "98e06e38c6c6f503"), TYPE_LIST_QUICKLIST_2),
        (&zset_big, (12903, "dd7a43f3f8b5f4bc"), TYPE_ZSET_2),
        (&zset_small, (980, "eab26040503c7165"), TYPE_ZSET_LISTPACK),
        (&hash_small, (891, "c96058e68ef8d878"), TYPE_HASH_LISTPACK),
        (&intset, (2069, "856566f6a59d88a7"), TYPE_SET_INTSET),
    ];
    for (value, redis, object_type) in cases {
        let payload = dump(value);
        assert_eq!(payload[0], object_type);
        assert_same_as_redis(&payload, redis, value.type_name());
        let back = restore(&payload).unwrap();
        match (value, &back) {
            (RdbValue::SortedSet(a), RdbValue::SortedSet(b)) => {
                let mut a = a.clone();
                a.sort_by(zset_order);
                assert_eq!(&a, b);
            }
            _ => assert_eq!(value, &back),
        }
    }
}

/// Payloads in the encodings of older Redis versions, made by hand;
/// redis-server 7.0.15 (sanitize-dump-payload yes) restores each of
/// them to the value given.
fn older_encodings() -> Vec<(Vec<u8>, RdbValue)> {
    let b300 = "42".repeat(300);
    let cases: Vec<(String, RdbValue)> = vec![
        (
            "01030161023132000a00027e3986d117fbc9".into(),
            RdbValue::List(bytes_list(&["a", "12", ""])),
        ),
        (
            format!("0a4163630100005b010000090000016103f602feff03c02c0104f090eefe05e0005ed0b2000000000a0568656c6c6f07412c{b300}fe2f0100000178ff0a000486574aef266f20"),
            RdbValue::List(vec![
                b"a".to_vec(),
                b"5".to_vec(),
                b"-1".to_vec(),
                b"300".to_vec(),
                b"-70000".to_vec(),
                b"3000000000".to_vec(),
                b"hello".to_vec(),
                vec![b'B'; 300],
                b"x".to_vec(),
            ]),
        ),
        (
            format!(
                "0e0211110000000d0000000200000161030162ff4056560000000c000000020000fd024046{}ff0a0042d8039b90eede8b",
                "63".repeat(70)
            ),
            RdbValue::List(vec![
                b"a".to_vec(),
                b"b".to_vec(),
                b"12".to_vec(),
                vec![b'c'; 70],
            ]),
        ),
        (
            "0303016103312e350162fe0163ff0a0006d6b5d11bd0084f".into(),
            RdbValue::SortedSet(vec![
                (b"c".to_vec(), f64::NEG_INFINITY),
                (b"a".to_vec(), 1.5),
                (b"b".to_vec(), f64::INFINITY),
            ]),
        ),
        (
            "0c1e1e00000018000000060000016303fefd03016103f20201620303322e35ff0a00c4cef118c18b19a2".into(),
            RdbValue::SortedSet(vec![
                (b"c".to_vec(), -3.0),
                (b"a".to_vec(), 1.0),
                (b"b".to_vec(), 2.5),
            ]),
        ),
        (
            format!("0d414d4d0100001d000000060000026631040276310402663204fe7b0302663304412c{b300}ff0a00570ce80e7c810ea7"),
            RdbValue::Hash(vec![
                (b"f1".to_vec(), b"v1".to_vec()),
                (b"f2".to_vec(), b"123".to_vec()),
                (b"f3".to_vec(), vec![b'B'; 300]),
            ]),
        ),
        (
            format!(
                "09414903026631020276310000fe2c010000{}02027632000002663300020000ff0a00cf83f8b95a75401e",
                "6b".repeat(300)
            ),
            RdbValue::Hash(vec![
                (b"f1".to_vec(), b"v1".to_vec()),
                (vec![b'k'; 300], b"v2".to_vec()),
                (b"f3".to_vec(), b"".to_vec()),
            ]),
        ),
        // Quicklist 2 with a plain node and an empty listpack node.
        (
            "12030105706c61696e0207070000000000ff020a0a0000000100816102ff0a00e97c346d2b5fd251".into(),
            RdbValue::List(bytes_list(&["plain", "a"])),
        ),
    ];
    cases.into_iter().map(|(h, v)| (hex(&h), v)).collect()
}

#[test]
fn reads_older_encodings() {
    for (payload, value) in older_encodings() {
        assert_eq!(restore(&payload).as_ref(), Ok(&value));
        // And what Firn writes back restores to the same value.
        assert_eq!(restore(&dump(&value)).as_ref(), Ok(&value));
    }
}

fn assorted_values() -> Vec<RdbValue> {
    let mut g = Gen(42);
    let random_bytes =
        |g: &mut Gen, n: usize| -> Vec<u8> { (0..n).map(|_| g.next() as u8).collect() };
    vec![
        RdbValue::String(Vec::new()),
        RdbValue::String(random_bytes(&mut g, 100_000)),
        RdbValue::String(vec![0; 100_000]),
        RdbValue::List(vec![Vec::new()]),
        RdbValue::List(vec![vec![b'q'; 20_000], b"1".to_vec(), vec![b'r'; 9000]]),
        RdbValue::List(
            (0..3000)
                .map(|i: i64| (i * i * i - 1_000_000).to_string().into_bytes())
                .collect(),
        ),
        RdbValue::Set(
            (0..1000)
                .map(|i| format!("member:{i}").into_bytes())
                .collect(),
        ),
        RdbValue::Set((0..513).map(|i: i64| i.to_string().into_bytes()).collect()),
        RdbValue::SortedSet(vec![(vec![b'm'; 65], -0.5), (b"n".to_vec(), 1e-300)]),
        RdbValue::SortedSet(
            (0..129)
                .map(|i| (format!("{i}").into_bytes(), f64::from(i).sqrt()))
                .collect(),
        ),
        RdbValue::Hash(
            (0..129)
                .map(|i| (format!("f{i}").into_bytes(), random_bytes(&mut g, i)))
                .collect(),
        ),
        RdbValue::Hash(vec![(Vec::new(), Vec::new())]),
        RdbValue::Hash(vec![(b"k".to_vec(), vec![b'v'; 64])]),
    ]
}

#[test]
fn round_trips() {
    for value in assorted_values() {
        let payload = dump(&value);
        let back = restore(&payload).unwrap();
        match (&value, &back) {
            // Intsets come back in ascending order, zsets by score.
            (RdbValue::Set(a), RdbValue::Set(b)) if payload[0] == TYPE_SET_INTSET => {
                let mut a: Vec<i64> = a.iter().map(|m| string2ll(m).unwrap()).collect();
                a.sort_unstable();
                let b: Vec<i64> = b.iter().map(|m| string2ll(m).unwrap()).collect();
                assert_eq!(a, b);
            }
            (RdbValue::SortedSet(a), RdbValue::SortedSet(b)) => {
                let mut a = a.clone();
                a.sort_by(zset_order);
                assert_eq!(&a, b);
            }
            _ => assert_eq!(value, back),
        }
        assert_eq!(dump(&back), payload, "dump(restore(x)) == x");
    }
}

#[test]
fn list_nodes_split_at_8_kb() {
    let payload = dump(&RdbValue::List(vec![vec![b'z'; 5000]; 3]));
    let mut reader = Reader {
        data: &payload,
        pos: 1,
    };
    assert_eq!(reader.count(), Ok(3));
    let payload = dump(&RdbValue::List(vec![vec![b'z'; 3000]; 3]));
    let mut reader = Reader {
        data: &payload,
        pos: 1,
    };
    assert_eq!(reader.count(), Ok(2));
}

#[test]
fn refuses_what_redis_refuses() {
    let bad = |body: &[u8]| restore(&with_footer(body));
    // Empty collections.
    assert_eq!(bad(&[TYPE_SET, 0]), Err(RdbError::BadFormat));
    assert_eq!(bad(&[TYPE_HASH, 0]), Err(RdbError::BadFormat));
    assert_eq!(bad(&[TYPE_LIST_QUICKLIST_2, 0]), Err(RdbError::BadFormat));
    let empty_listpack = [7, 0, 0, 0, 0, 0, 0xFF];
    let mut body = vec![TYPE_LIST_QUICKLIST_2, 1, 2, 7];
    body.extend_from_slice(&empty_listpack);
    assert_eq!(bad(&body), Err(RdbError::BadFormat));
    // Unknown quicklist container.
    let mut body = vec![TYPE_LIST_QUICKLIST_2, 1, 3, 10];
    body.extend_from_slice(&[10, 0, 0, 0, 1, 0, 0x81, b'a', 2, 0xFF]);
    assert_eq!(bad(&body), Err(RdbError::BadFormat));
    body[2] = 2;
    assert_eq!(bad(&body), Ok(RdbValue::List(bytes_list(&["a"]))));
    // Duplicates.
    assert_eq!(
        bad(&[TYPE_SET, 2, 1, b'a', 1, b'a']),
        Err(RdbError::BadFormat)
    );
    let dup_fields = [
        17, 0, 0, 0, 4, 0, 0x81, b'a', 2, 1, 1, 0x81, b'a', 2, 2, 1, 0xFF,
    ];
    let mut body = vec![TYPE_HASH_LISTPACK, 17];
    body.extend_from_slice(&dup_fields);
    assert_eq!(bad(&body), Err(RdbError::BadFormat));
    body[14] = b'b'; // the second field becomes "b"
    assert_eq!(
        bad(&body),
        Ok(RdbValue::Hash(vec![
            (b"a".to_vec(), b"1".to_vec()),
            (b"b".to_vec(), b"2".to_vec())
        ]))
    );
    // Intset out of order or repeated.
    assert_eq!(
        bad(&[TYPE_SET_INTSET, 12, 2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 1, 0]),
        Err(RdbError::BadFormat)
    );
    assert_eq!(
        bad(&[TYPE_SET_INTSET, 12, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 1, 0]),
        Err(RdbError::BadFormat)
    );
    // NaN scores, binary and text.
    let mut body = vec![TYPE_ZSET_2, 1, 1, b'a'];
    body.extend_from_slice(&f64::NAN.to_le_bytes());
    assert_eq!(bad(&body), Err(RdbError::BadFormat));
    assert_eq!(bad(&[TYPE_ZSET, 1, 1, b'a', 253]), Err(RdbError::BadFormat));
    assert_eq!(
        bad(&[TYPE_ZSET, 1, 1, b'a', 3, b'n', b'a', b'n']),
        Err(RdbError::BadFormat)
    );
    assert_eq!(
        bad(&[TYPE_ZSET, 1, 1, b'a', 2, b'x', b'y']),
        Err(RdbError::BadFormat)
    );
    // Types Redis 7.0 does not know, and modules (Firn has none).
    for object_type in [6, 7, 8, 20, 22, 255] {
        assert_eq!(bad(&[object_type, 0]), Err(RdbError::BadFormat));
    }
    // Version and checksum.
    let mut newer = vec![TYPE_STRING, 1, b'a'];
    newer.extend_from_slice(&11u16.to_le_bytes());
    let crc = CRC64.checksum(&newer);
    newer.extend_from_slice(&crc.to_le_bytes());
    assert_eq!(restore(&newer), Err(RdbError::BadChecksum));
    assert_eq!(
        RdbError::BadChecksum.reply_text(),
        "ERR DUMP payload version or checksum are wrong"
    );
    assert_eq!(RdbError::BadFormat.reply_text(), "ERR Bad data format");
    let mut older = vec![TYPE_STRING, 1, b'a'];
    older.extend_from_slice(&9u16.to_le_bytes());
    let crc = CRC64.checksum(&older);
    older.extend_from_slice(&crc.to_le_bytes());
    assert_eq!(restore(&older), Ok(RdbValue::String(b"a".to_vec())));
    assert_eq!(restore(b""), Err(RdbError::BadChecksum));
    assert_eq!(restore(b"junk"), Err(RdbError::BadChecksum));
    // Like Redis, bytes after the object are ignored.
    assert_eq!(
        bad(&[TYPE_STRING, 1, b'A', b'B', b'C']),
        Ok(RdbValue::String(b"A".to_vec()))
    );
    // A length that claims more than the payload holds.
    assert_eq!(
        bad(&[TYPE_STRING, 0x80, 0xFF, 0xFF, 0xFF, 0xFF]),
        Err(RdbError::BadFormat)
    );
    assert_eq!(
        bad(&[TYPE_LIST, 0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, b'a']),
        Err(RdbError::BadFormat)
    );
}

/// Every payload the tests know, valid ones only.
pub(crate) fn seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = [L1, S1_PLAIN, S2_INTSET64_LZF, S3_INTSET16, S4_INTSET32]
        .iter()
        .chain([Z1_LISTPACK, Z2_SKIPLIST, H1_LISTPACK, H2_PLAIN].iter())
        .map(|h| hex(h))
        .collect();
    seeds.extend(STRING_VECTORS.iter().map(|(_, h)| hex(h)));
    seeds.push(dump(&RdbValue::List(big_list())));
    seeds.push(dump(&RdbValue::List(
        (0..40).map(|i| vec![b'a' + i as u8 % 3; 500]).collect(),
    )));
    seeds.extend(
        assorted_values()
            .iter()
            .filter(|v| dump(v).len() < 20_000)
            .map(dump),
    );
    seeds.extend(older_encodings().into_iter().map(|(payload, _)| payload));
    seeds
}

#[test]
fn seeds_are_valid() {
    for seed in seeds() {
        assert!(restore(&seed).is_ok(), "{}", to_hex(&seed));
    }
}

#[test]
fn corrupt_payloads_are_errors_not_panics() {
    // Exhaustive over the small seeds; the random test covers the rest.
    let small = |payload: &Vec<u8>| {
        let decoded_bytes = match restore(payload) {
            Ok(RdbValue::String(s)) => s.len(),
            Ok(RdbValue::List(items) | RdbValue::Set(items)) => items.iter().map(Vec::len).sum(),
            Ok(RdbValue::SortedSet(members)) => members.iter().map(|(m, _)| m.len() + 8).sum(),
            Ok(RdbValue::Hash(pairs)) => pairs.iter().map(|(f, v)| f.len() + v.len()).sum(),
            // stream_tests has its own.
            Ok(RdbValue::Stream(_)) => usize::MAX,
            Err(_) => usize::MAX,
        };
        payload.len() < 500 && decoded_bytes < 4096
    };
    for good in seeds().iter().filter(|s| small(s)) {
        // Without fixing the checksum, any change is caught.
        for cut in 0..good.len() {
            assert!(restore(&good[..cut]).is_err());
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x55;
            assert!(restore(&bad).is_err());
        }
        // With the checksum fixed, the decoder itself must cope.
        let body = &good[..good.len() - 10];
        for cut in 0..body.len() {
            assert!(restore(&with_footer(&body[..cut])).is_err(), "cut {cut}");
        }
        for i in 0..body.len() {
            for byte in [
                0x00, 0x01, 0x3F, 0x40, 0x7F, 0x80, 0x81, 0xC0, 0xC3, 0xFE, 0xFF,
            ] {
                let mut bad = body.to_vec();
                bad[i] = byte;
                let _ = restore(&with_footer(&bad));
                bad[i] = body[i] ^ byte;
                let _ = restore(&with_footer(&bad));
            }
        }
    }
}

#[test]
fn random_mutations_with_valid_checksums_never_panic() {
    let seeds = seeds();
    let mut g = Gen(7);
    for _ in 0..20_000 {
        let seed = &seeds[g.below(seeds.len() as u64) as usize];
        let mut body = seed[..seed.len() - 10].to_vec();
        for _ in 0..1 + g.below(4) {
            let at = g.below(body.len() as u64) as usize;
            match g.below(4) {
                0 => body[at] = g.next() as u8,
                1 => body[at] ^= 1 << g.below(8),
                2 => {
                    body.remove(at);
                }
                _ => body.insert(at, g.next() as u8),
            }
            if body.is_empty() {
                break;
            }
        }
        if let Ok(value) = restore(&with_footer(&body)) {
            // Whatever decodes must survive a round trip.
            assert!(restore(&dump(&value)).is_ok());
        }
    }
}
