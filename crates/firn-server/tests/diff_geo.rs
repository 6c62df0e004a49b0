//! Differential tests of the geo commands against redis-server 7.0.15:
//! GEOADD (NX/XX/CH), GEODIST, GEOHASH, GEOPOS, GEOSEARCH, GEOSEARCHSTORE,
//! GEORADIUS, GEORADIUS_RO, GEORADIUSBYMEMBER, GEORADIUSBYMEMBER_RO with
//! every option, in RESP2 and RESP3: scores, coordinates and distances to
//! the digit, result order (sorted, COUNT's partial sort, unsorted cell
//! order), each error text in geo.c's parse order, WRONGTYPE and arity,
//! sorted-set commands on geo keys, seeded random searches over random
//! points (ties included), a seeded random sequence mixing GEO* with
//! ZADD/ZREM/SET/DEL/TYPE, and the restart rule.

use firn_testkit::{env::random_seeds, Diff, Kind, Server};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn sicily(d: &mut Diff) {
    d.cmd(&[
        "GEOADD",
        "Sicily",
        "13.361389",
        "38.115556",
        "Palermo",
        "15.087269",
        "37.502669",
        "Catania",
    ]);
    d.cmd(&[
        "GEOADD",
        "Sicily",
        "12.758489",
        "38.788135",
        "edge1",
        "17.241510",
        "38.788135",
        "edge2",
        "13.583333",
        "37.316667",
        "Agrigento",
    ]);
}

/// A few hundred cities' worth of points spread over the globe, with
/// duplicates (equal distances) and points near the limits.
fn world(d: &mut Diff, key: &str) {
    let points: &[(&str, &str, &str)] = &[
        ("-0.1278", "51.5074", "london"),
        ("2.3522", "48.8566", "paris"),
        ("13.4050", "52.5200", "berlin"),
        ("-3.7038", "40.4168", "madrid"),
        ("12.4964", "41.9028", "rome"),
        ("-74.0060", "40.7128", "newyork"),
        ("-118.2437", "34.0522", "la"),
        ("139.6917", "35.6895", "tokyo"),
        ("151.2093", "-33.8688", "sydney"),
        ("-43.1729", "-22.9068", "rio"),
        ("179.9999", "0", "dateline_e"),
        ("-179.9999", "0", "dateline_w"),
        ("180", "85.05112878", "corner_ne"),
        ("-180", "-85.05112878", "corner_sw"),
        ("0", "0", "origin"),
        ("0", "84.9", "north"),
        ("0", "-84.9", "south"),
        ("2.3522", "48.8566", "paris_twin"),
        ("2.3522", "48.8566", "paris_triplet"),
        ("2.35", "48.85", "paris_near"),
        ("2.36", "48.86", "paris_near2"),
        ("-0.1278", "51.5074", "london_twin"),
    ];
    let mut args: Vec<&str> = vec!["GEOADD", key];
    for (lon, lat, name) in points {
        args.extend_from_slice(&[lon, lat, name]);
    }
    d.cmd(&args);
}

// ------------------------------------------------------------------ GEOADD

#[test]
fn geoadd_scores_and_options() {
    let mut d = Diff::new();
    // Options without a single triple are ZADD's syntax error.
    d.cmd(&["GEOADD", "Sicily", "NX", "CH", "CH"]);
    d.cmd(&["GEOADD", "Sicily", "CH", "CH", "CH"]);
    sicily(&mut d);
    d.cmd(&["ZRANGE", "Sicily", "0", "-1", "WITHSCORES"]);
    d.cmd(&["ZSCORE", "Sicily", "Palermo"]);
    d.cmd(&["ZCARD", "Sicily"]);
    d.cmd(&["TYPE", "Sicily"]);
    d.cmd(&["OBJECT", "ENCODING", "Sicily"]);
    // NX, XX, CH.
    d.cmd(&[
        "GEOADD", "Sicily", "NX", "1", "2", "Palermo", "3", "4", "new",
    ]);
    d.cmd(&[
        "GEOADD", "Sicily", "XX", "1", "2", "Palermo", "3", "4", "absent",
    ]);
    d.cmd(&[
        "GEOADD", "Sicily", "XX", "CH", "5", "6", "Palermo", "3", "4", "x",
    ]);
    d.cmd(&[
        "GEOADD", "Sicily", "CH", "5", "6", "Palermo", "7", "8", "fresh",
    ]);
    d.cmd(&["GEOADD", "Sicily", "CH", "XX", "5", "6", "Palermo"]);
    d.cmd(&[
        "GEOADD", "Sicily", "ch", "nx", "9", "9", "Palermo", "9", "9", "n2",
    ]);
    d.cmd(&["GEOADD", "Sicily", "CH", "CH", "CH"]);
    d.cmd(&["GEOADD", "Sicily", "NX", "XX", "1", "2", "m"]);
    d.cmd(&["GEOADD", "Sicily", "1", "2", "m", "3"]);
    d.cmd(&["GEOADD", "Sicily", "1", "2"]);
    d.cmd(&["GEOADD", "Sicily", "GT", "1", "2", "m"]);
    d.cmd(&["GEOADD", "Sicily", "INCR", "1", "2", "m"]);
    d.cmd(&["GEOADD", "nokey", "XX", "1", "2", "m"]);
    d.cmd(&["EXISTS", "nokey"]);
    d.cmd(&["ZRANGE", "Sicily", "0", "-1", "WITHSCORES"]);
    // Limits: the Mercator latitudes and +-180 are accepted.
    d.cmd(&[
        "GEOADD",
        "lim",
        "180",
        "85.05112878",
        "a",
        "-180",
        "-85.05112878",
        "b",
        "180",
        "-85.05112878",
        "c",
        "-180",
        "85.05112878",
        "d",
        "0",
        "0",
        "e",
        "-0",
        "-0",
        "f",
    ]);
    d.cmd(&["ZRANGE", "lim", "0", "-1", "WITHSCORES"]);
    d.cmd(&["GEOPOS", "lim", "a", "b", "c", "d", "e", "f"]);
    d.cmd(&["GEOHASH", "lim", "a", "b", "c", "d", "e", "f"]);
    d.cmd(&["OBJECT", "ENCODING", "lim"]);
}

#[test]
fn geoadd_rejects_bad_coordinates() {
    let mut d = Diff::new();
    for (lon, lat) in [
        ("181", "0"),
        ("-180.0000001", "0"),
        ("0", "85.05112879"),
        ("0", "-85.0511288"),
        ("1e300", "1"),
        ("inf", "0"),
        ("0", "-inf"),
        ("abc", "0"),
        ("0", "abc"),
        ("nan", "0"),
        (" 1", "0"),
        ("1 ", "0"),
        ("", "0"),
        ("1e400", "0"),
        ("1e-400", "0"),
        ("0x10", "0x1p4"),
        ("+1.5", "-.5"),
        ("1e1", "1E1"),
    ] {
        d.cmd(&["GEOADD", "g", lon, lat, "m"]);
        d.cmd(&["GEOADD", "g", "1", "1", "ok", lon, lat, "m"]);
    }
    d.cmd(&["EXISTS", "g"]);
    d.cmd(&["ZRANGE", "g", "0", "-1", "WITHSCORES"]);
    // The coordinates are checked before the key's type.
    d.cmd(&["SET", "s", "x"]);
    d.cmd(&["GEOADD", "s", "200", "0", "m"]);
    d.cmd(&["GEOADD", "s", "1", "0", "m"]);
    d.cmd(&["GEOADD", "s", "NX", "XX", "1", "0", "m"]);
    d.cmd(&["GEOADD", "s"]);
    d.cmd(&["GEOADD", "s", "1", "2"]);
}

#[test]
fn big_encoding_from_geoadd() {
    let mut d = Diff::new();
    let mut args: Vec<String> = vec!["GEOADD".into(), "g".into()];
    for i in 0..128 {
        args.push(format!("{}", -179.0 + i as f64 * 2.5));
        args.push(format!("{}", -80.0 + i as f64 * 1.2));
        args.push(format!("m{i}"));
    }
    d.cmd(&args);
    d.cmd(&["OBJECT", "ENCODING", "g"]);
    d.cmd(&["GEOADD", "g", "1", "1", "one_more"]);
    d.cmd(&["OBJECT", "ENCODING", "g"]);
    d.cmd(&["GEOADD", "h", "1", "1", &"x".repeat(65)]);
    d.cmd(&["OBJECT", "ENCODING", "h"]);
    d.cmd(&["GEORADIUS", "g", "0", "0", "20000", "km", "COUNT", "5"]);
    d.cmd(&["GEORADIUS", "g", "0", "0", "2000", "km", "STORE", "dst"]);
    d.cmd(&["OBJECT", "ENCODING", "dst"]);
    d.cmd(&["GEORADIUS", "g", "0", "0", "20000", "km", "STORE", "dst"]);
    d.cmd(&["OBJECT", "ENCODING", "dst"]);
    d.cmd(&["ZCARD", "dst"]);
}

// ------------------------------------------------- GEOPOS GEOHASH GEODIST

#[test]
fn geopos_geohash_geodist() {
    let mut d = Diff::new();
    sicily(&mut d);
    d.cmd(&["GEOPOS", "Sicily", "Palermo", "Catania", "nope", "edge2"]);
    d.cmd(&["GEOHASH", "Sicily", "Palermo", "Catania", "nope", "edge1"]);
    d.cmd(&["GEOPOS", "missing", "a", "b"]);
    d.cmd(&["GEOHASH", "missing", "a"]);
    d.cmd(&["GEOPOS", "Sicily"]);
    d.cmd(&["GEOHASH", "Sicily"]);
    for unit in ["m", "km", "KM", "ft", "mi", "Mi", "M"] {
        d.cmd(&["GEODIST", "Sicily", "Palermo", "Catania", unit]);
        d.cmd(&["GEODIST", "Sicily", "edge1", "edge2", unit]);
    }
    d.cmd(&["GEODIST", "Sicily", "Palermo", "Catania"]);
    d.cmd(&["GEODIST", "Sicily", "Palermo", "Palermo"]);
    d.cmd(&["GEODIST", "Sicily", "Palermo", "nope"]);
    d.cmd(&["GEODIST", "Sicily", "nope", "Palermo", "km"]);
    d.cmd(&["GEODIST", "missing", "a", "b"]);
    d.cmd(&["GEODIST", "missing", "a", "b", "parsec"]);
    d.cmd(&["GEODIST", "Sicily", "Palermo", "Catania", "parsec"]);
    d.cmd(&["GEODIST", "Sicily", "Palermo", "Catania", "km", "extra"]);
    d.cmd(&["GEODIST", "Sicily", "Palermo"]);
    d.cmd(&["GEOPOS"]);
    d.cmd(&["GEOHASH"]);
    // Far apart, antipodal-ish, same meridian, same parallel.
    world(&mut d, "w");
    for (a, b) in [
        ("london", "sydney"),
        ("origin", "dateline_e"),
        ("dateline_e", "dateline_w"),
        ("corner_ne", "corner_sw"),
        ("north", "south"),
        ("paris", "paris_twin"),
        ("paris", "paris_near"),
        ("newyork", "tokyo"),
    ] {
        d.cmd(&["GEODIST", "w", a, b]);
        d.cmd(&["GEODIST", "w", a, b, "mi"]);
    }
    d.cmd(&[
        "GEOPOS",
        "w",
        "london",
        "sydney",
        "rio",
        "corner_ne",
        "corner_sw",
        "dateline_w",
        "origin",
    ]);
    d.cmd(&[
        "GEOHASH",
        "w",
        "london",
        "sydney",
        "rio",
        "corner_ne",
        "corner_sw",
        "dateline_w",
        "origin",
    ]);
    // RESP3: coordinates are doubles, distances stay bulk strings.
    d.cmd_type_only(&["HELLO", "3"]);
    d.cmd(&["GEOPOS", "Sicily", "Palermo", "nope", "edge2"]);
    d.cmd(&["GEODIST", "Sicily", "Palermo", "Catania", "km"]);
    d.cmd(&["GEODIST", "Sicily", "Palermo", "nope"]);
    d.cmd(&["GEOHASH", "Sicily", "Palermo", "nope"]);
    d.cmd(&[
        "GEOSEARCH",
        "Sicily",
        "FROMLONLAT",
        "15",
        "37",
        "BYRADIUS",
        "200",
        "km",
        "WITHCOORD",
        "WITHDIST",
        "WITHHASH",
        "ASC",
    ]);
}

/// Scores that are not geohashes decode as Redis decodes them (C's
/// double-to-integer conversion, clamped coordinates).
#[test]
fn non_geo_scores() {
    let mut d = Diff::new();
    d.cmd(&[
        "ZADD",
        "z",
        "-1",
        "neg",
        "1.5",
        "frac",
        "inf",
        "pinf",
        "-inf",
        "ninf",
        "1e20",
        "huge",
        "0",
        "zero",
        "4503599627370496",
        "two52",
        "9007199254740993",
        "big",
    ]);
    let members = [
        "neg", "frac", "pinf", "ninf", "huge", "zero", "two52", "big", "none",
    ];
    let mut pos = vec!["GEOPOS", "z"];
    pos.extend_from_slice(&members);
    d.cmd(&pos);
    let mut hash = vec!["GEOHASH", "z"];
    hash.extend_from_slice(&members);
    d.cmd(&hash);
    d.cmd(&["GEODIST", "z", "neg", "frac"]);
    d.cmd(&["GEODIST", "z", "pinf", "zero", "km"]);
    d.cmd(&[
        "GEORADIUSBYMEMBER",
        "z",
        "zero",
        "20000",
        "km",
        "WITHHASH",
        "WITHCOORD",
    ]);
    d.cmd(&[
        "GEOSEARCH",
        "z",
        "FROMLONLAT",
        "-180",
        "-85",
        "BYBOX",
        "1000",
        "1000",
        "km",
        "WITHHASH",
        "WITHDIST",
    ]);
}

// ---------------------------------------------------------------- searches

#[test]
fn geosearch_options() {
    let mut d = Diff::new();
    sicily(&mut d);
    world(&mut d, "w");
    let base = ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37"];
    let shapes: [&[&str]; 4] = [
        &["BYRADIUS", "200", "km"],
        &["BYRADIUS", "100", "mi"],
        &["BYBOX", "400", "400", "km"],
        &["BYBOX", "200", "300", "km"],
    ];
    let extras: [&[&str]; 12] = [
        &[],
        &["ASC"],
        &["DESC"],
        &["WITHDIST"],
        &["WITHCOORD", "WITHDIST", "WITHHASH"],
        &["WITHHASH", "DESC"],
        &["COUNT", "1"],
        &["COUNT", "2", "DESC", "WITHDIST"],
        &["COUNT", "2", "ANY"],
        &["COUNT", "10", "ANY", "ASC"],
        &["ANY", "COUNT", "3", "desc", "withcoord"],
        &["count", "100"],
    ];
    for shape in shapes {
        for extra in extras {
            let mut args: Vec<&str> = base.to_vec();
            args.extend_from_slice(shape);
            args.extend_from_slice(extra);
            d.cmd(&args);
        }
    }
    for from in [
        &["FROMMEMBER", "Palermo"][..],
        &["FROMMEMBER", "edge1"],
        &["FROMLONLAT", "13.5", "38"],
    ] {
        for shape in shapes {
            let mut args = vec!["GEOSEARCH", "Sicily"];
            args.extend_from_slice(from);
            args.extend_from_slice(shape);
            args.extend_from_slice(&["WITHDIST", "WITHCOORD"]);
            d.cmd(&args);
        }
    }
    // Shapes in any position, options repeated, mixed case.
    d.cmd(&[
        "geosearch",
        "Sicily",
        "byradius",
        "300",
        "KM",
        "withdist",
        "frommember",
        "Catania",
        "asc",
        "desc",
    ]);
    d.cmd(&[
        "GEOSEARCH",
        "Sicily",
        "FROMMEMBER",
        "Palermo",
        "FROMMEMBER",
        "Catania",
        "BYRADIUS",
        "1",
        "m",
        "BYRADIUS",
        "300",
        "km",
    ]);
    // Zero and huge sizes, around the world.
    for shape in [
        &["BYRADIUS", "0", "m"][..],
        &["BYBOX", "0", "0", "m"],
        &["BYRADIUS", "5000", "km"],
        &["BYRADIUS", "10000", "km"],
        &["BYRADIUS", "20038", "km"],
        &["BYRADIUS", "1e10", "km"],
        &["BYRADIUS", "inf", "m"],
        &["BYBOX", "40000", "20000", "km"],
        &["BYBOX", "100", "5000", "km"],
        &["BYBOX", "5000", "100", "mi"],
        &["BYBOX", "1e7", "1e7", "ft"],
    ] {
        for from in [
            &["FROMMEMBER", "paris"][..],
            &["FROMMEMBER", "corner_ne"],
            &["FROMMEMBER", "dateline_w"],
            &["FROMMEMBER", "north"],
            &["FROMLONLAT", "-179.5", "-70"],
        ] {
            let mut args = vec!["GEOSEARCH", "w"];
            args.extend_from_slice(from);
            args.extend_from_slice(shape);
            d.cmd(&args);
            args.extend_from_slice(&["WITHDIST", "ASC"]);
            d.cmd(&args);
            args.extend_from_slice(&["COUNT", "4"]);
            d.cmd(&args);
        }
    }
    // Ties: equal distances keep Redis's sort order, partial or full.
    for count in ["1", "2", "3", "4", "5", "50"] {
        d.cmd(&[
            "GEOSEARCH",
            "w",
            "FROMMEMBER",
            "paris",
            "BYRADIUS",
            "10",
            "km",
            "COUNT",
            count,
            "WITHDIST",
        ]);
        d.cmd(&[
            "GEOSEARCH",
            "w",
            "FROMLONLAT",
            "2.3",
            "48.8",
            "BYRADIUS",
            "10",
            "km",
            "COUNT",
            count,
            "DESC",
        ]);
    }
}

#[test]
fn geosearch_errors_in_parse_order() {
    let mut d = Diff::new();
    sicily(&mut d);
    d.cmd(&["SET", "str", "x"]);
    let cases: &[&[&str]] = &[
        &["GEOSEARCH", "Sicily", "BYRADIUS", "10", "km"],
        &["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37"],
        &["geosearch", "Sicily", "FROMLONLAT", "15", "37", "WITHDIST"],
        &["GeoSearch", "Sicily", "FROMMEMBER", "Palermo", "ASC"],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMMEMBER",
            "nope",
            "BYRADIUS",
            "1",
            "km",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMMEMBER",
            "nope",
            "BYRADIUS",
            "x",
            "km",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "BYRADIUS",
            "x",
            "km",
            "FROMMEMBER",
            "nope",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "-1",
            "km",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "1",
            "parsec",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYBOX",
            "x",
            "1",
            "km",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYBOX",
            "1",
            "x",
            "km",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYBOX",
            "-1",
            "1",
            "km",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYBOX",
            "1",
            "-1",
            "x",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYBOX",
            "1",
            "1",
            "x",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYBOX",
            "1",
            "1",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "200",
            "37",
            "BYRADIUS",
            "1",
            "km",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "x",
            "37",
            "BYRADIUS",
            "1",
            "km",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "1",
            "km",
            "BYBOX",
            "1",
            "1",
            "km",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMMEMBER",
            "Palermo",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "1",
            "km",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "FROMMEMBER",
            "Palermo",
            "BYRADIUS",
            "1",
            "km",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "1",
            "km",
            "ANY",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "1",
            "km",
            "COUNT",
            "0",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "1",
            "km",
            "COUNT",
            "-3",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "1",
            "km",
            "COUNT",
            "x",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "1",
            "km",
            "COUNT",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "1",
            "km",
            "STORE",
            "x",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "1",
            "km",
            "STOREDIST",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "1",
            "km",
            "bogus",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "BYRADIUS",
            "1",
            "km",
        ],
        &["GEOSEARCH", "Sicily", "FROMMEMBER"],
        &["GEOSEARCH", "Sicily", "ASC", "DESC", "WITHDIST", "ANY"],
        &[
            "GEOSEARCH",
            "missing",
            "FROMMEMBER",
            "x",
            "BYRADIUS",
            "1",
            "km",
        ],
        &[
            "GEOSEARCH",
            "missing",
            "FROMLONLAT",
            "0",
            "0",
            "BYRADIUS",
            "1",
            "km",
            "ANY",
        ],
        &[
            "GEOSEARCH",
            "missing",
            "FROMMEMBER",
            "x",
            "BYRADIUS",
            "z",
            "km",
        ],
        &[
            "GEOSEARCH",
            "missing",
            "FROMMEMBER",
            "x",
            "BYBOX",
            "1",
            "1",
            "km",
            "COUNT",
            "1",
            "ANY",
        ],
        &["GEOSEARCH", "str", "FROMMEMBER", "x", "BYRADIUS", "1", "km"],
        &["GEOSEARCH", "str", "bogus"],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "1",
            "km\0x",
        ],
        &["GEOSEARCH", "Sicily"],
        &[
            "GEOSEARCHSTORE",
            "dst",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "200",
            "km",
            "WITHDIST",
        ],
        &[
            "GEOSEARCHSTORE",
            "dst",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "200",
            "km",
            "STORE",
            "x",
        ],
        &["GEOSEARCHSTORE", "dst", "Sicily", "BYRADIUS", "200", "km"],
        &["geosearchstore", "dst", "Sicily", "FROMLONLAT", "15", "37"],
        &[
            "GEOSEARCHSTORE",
            "dst",
            "str",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "200",
            "km",
        ],
        &["GEOSEARCHSTORE", "dst", "Sicily"],
        // C-string keywords and units: a NUL ends them.
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "200",
            "km",
            "WITHDIST\0junk",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "200",
            "km\0",
            "ASC",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "2e2",
            "km",
            "COUNT",
            "9223372036854775807",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "200",
            "km",
            "COUNT",
            "99999999999999999999",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "200",
            "km",
            "COUNT",
            "+1",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYBOX",
            "inf",
            "inf",
            "m",
            "ASC",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYBOX",
            "1e308",
            "1",
            "km",
            "ASC",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "1e308",
            "mi",
            "DESC",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "nan",
            "km",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "-0",
            "km",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYBOX",
            "-0",
            "0",
            "km",
        ],
        &[
            "GEOSEARCH",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "1e-400",
            "km",
        ],
        &["GEOADD", "dup", "1", "1", "a", "2", "2", "a", "3", "3", "b"],
        &["ZRANGE", "dup", "0", "-1", "WITHSCORES"],
    ];
    for case in cases {
        d.cmd(case);
    }
    d.cmd(&["EXISTS", "dst"]);
}

#[test]
fn geosearchstore_and_store_options() {
    let mut d = Diff::new();
    sicily(&mut d);
    world(&mut d, "w");
    d.cmd(&["SET", "str", "x"]);
    let from = ["FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"];
    for extra in [
        &[][..],
        &["STOREDIST"],
        &["COUNT", "2"],
        &["COUNT", "2", "DESC", "STOREDIST"],
        &["COUNT", "1", "ANY"],
        &["storedist", "asc"],
    ] {
        let mut args = vec!["GEOSEARCHSTORE", "dst", "Sicily"];
        args.extend_from_slice(&from);
        args.extend_from_slice(extra);
        d.cmd(&args);
        d.cmd(&["ZRANGE", "dst", "0", "-1", "WITHSCORES"]);
        d.cmd(&["OBJECT", "ENCODING", "dst"]);
        d.cmd(&["TTL", "dst"]);
    }
    // The target loses its expiry and its type; an empty result deletes it.
    d.cmd(&["SET", "dst2", "v", "EX", "1000"]);
    let mut args = vec!["GEOSEARCHSTORE", "dst2", "Sicily"];
    args.extend_from_slice(&from);
    d.cmd(&args);
    d.cmd(&["TTL", "dst2"]);
    d.cmd(&["TYPE", "dst2"]);
    d.cmd(&[
        "GEOSEARCHSTORE",
        "dst2",
        "Sicily",
        "FROMLONLAT",
        "0",
        "0",
        "BYRADIUS",
        "1",
        "km",
    ]);
    d.cmd(&["EXISTS", "dst2"]);
    d.cmd(&["SET", "dst3", "v"]);
    d.cmd(&[
        "GEOSEARCHSTORE",
        "dst3",
        "missing",
        "FROMMEMBER",
        "x",
        "BYRADIUS",
        "1",
        "km",
    ]);
    d.cmd(&["EXISTS", "dst3"]);
    // Source and target the same key.
    d.cmd(&[
        "GEOSEARCHSTORE",
        "Sicily",
        "Sicily",
        "FROMMEMBER",
        "Palermo",
        "BYRADIUS",
        "100",
        "km",
    ]);
    d.cmd(&["ZRANGE", "Sicily", "0", "-1", "WITHSCORES"]);
    // GEORADIUS STORE / STOREDIST, the last one wins.
    d.cmd(&[
        "GEORADIUS",
        "w",
        "2",
        "48",
        "1000",
        "km",
        "STORE",
        "r1",
        "STOREDIST",
        "r2",
    ]);
    d.cmd(&["EXISTS", "r1"]);
    d.cmd(&["ZRANGE", "r2", "0", "-1", "WITHSCORES"]);
    d.cmd(&[
        "GEORADIUSBYMEMBER",
        "w",
        "paris",
        "500",
        "mi",
        "STORE",
        "r3",
        "COUNT",
        "3",
        "DESC",
    ]);
    d.cmd(&["ZRANGE", "r3", "0", "-1", "WITHSCORES"]);
    d.cmd(&[
        "GEORADIUS",
        "w",
        "2",
        "48",
        "1000",
        "km",
        "STORE",
        "r1",
        "WITHDIST",
    ]);
    d.cmd(&[
        "GEORADIUS",
        "w",
        "2",
        "48",
        "1000",
        "km",
        "WITHHASH",
        "STOREDIST",
        "r1",
    ]);
    d.cmd(&["GEORADIUS_RO", "w", "2", "48", "1000", "km", "STORE", "r1"]);
    d.cmd(&[
        "GEORADIUSBYMEMBER_RO",
        "w",
        "paris",
        "1000",
        "km",
        "STOREDIST",
        "r1",
    ]);
    d.cmd(&["GEORADIUS", "w", "2", "48", "1000", "km", "STORE"]);
    d.cmd(&["GEORADIUS", "w", "0", "0", "1", "m", "STORE", "r2"]);
    d.cmd(&["EXISTS", "r2"]);
    d.cmd(&["GEORADIUS", "missing", "0", "0", "1", "m", "STORE", "r3"]);
    d.cmd(&["EXISTS", "r3"]);
    d.cmd(&["GEORADIUS", "w", "0", "0", "1", "m", "STORE", "str"]);
    d.cmd(&["TYPE", "str"]);
    // The keys each form locks are the ones Redis's key specs name.
    for line in [
        &[
            "COMMAND",
            "GETKEYS",
            "GEORADIUS",
            "w",
            "0",
            "0",
            "1",
            "km",
            "STORE",
            "a",
        ][..],
        &[
            "COMMAND",
            "GETKEYS",
            "GEORADIUS",
            "w",
            "0",
            "0",
            "1",
            "km",
            "STOREDIST",
            "b",
            "STORE",
            "a",
        ],
        &[
            "COMMAND",
            "GETKEYS",
            "GEORADIUSBYMEMBER",
            "w",
            "m",
            "1",
            "km",
            "STOREDIST",
            "a",
        ],
        &[
            "COMMAND",
            "GETKEYS",
            "GEORADIUS_RO",
            "w",
            "0",
            "0",
            "1",
            "km",
        ],
        &[
            "COMMAND",
            "GETKEYS",
            "GEOSEARCHSTORE",
            "dst",
            "w",
            "FROMMEMBER",
            "m",
            "BYRADIUS",
            "1",
            "km",
        ],
        &["COMMAND", "GETKEYS", "GEOADD", "w", "0", "0", "m"],
    ] {
        d.cmd(line);
    }
}

#[test]
fn georadius_family() {
    let mut d = Diff::new();
    sicily(&mut d);
    world(&mut d, "w");
    d.cmd(&["SET", "str", "x"]);
    for cmd in ["GEORADIUS", "GEORADIUS_RO"] {
        for extra in [
            &[][..],
            &["WITHDIST"],
            &["WITHCOORD", "WITHHASH", "WITHDIST", "ASC"],
            &["COUNT", "2"],
            &["COUNT", "2", "ANY"],
            &["DESC", "COUNT", "3", "WITHDIST"],
        ] {
            let mut args = vec![cmd, "Sicily", "15", "37", "200", "km"];
            args.extend_from_slice(extra);
            d.cmd(&args);
            let mut args = vec![cmd, "w", "2.3", "48.8", "500", "mi"];
            args.extend_from_slice(extra);
            d.cmd(&args);
        }
        for args in [
            &[cmd, "Sicily", "200", "37", "200", "km"][..],
            &[cmd, "Sicily", "15", "x", "200", "km"],
            &[cmd, "Sicily", "15", "37", "x", "km"],
            &[cmd, "Sicily", "15", "37", "-5", "km"],
            &[cmd, "Sicily", "15", "37", "5", "yards"],
            &[
                cmd, "Sicily", "15", "37", "5", "km", "BYBOX", "1", "1", "km",
            ],
            &[cmd, "Sicily", "15", "37", "5", "km", "FROMMEMBER", "x"],
            &[cmd, "Sicily", "15", "37", "5", "km", "ANY"],
            &[cmd, "Sicily", "15", "37", "5", "km", "COUNT", "0"],
            &[cmd, "missing", "15", "37", "5", "km"],
            &[cmd, "missing", "15", "37", "x", "km"],
            &[cmd, "missing", "15", "37", "5", "km", "ANY"],
            &[cmd, "str", "15", "37", "5", "km"],
            &[cmd, "str", "200", "37", "5", "km"],
            &[cmd, "Sicily", "15", "37", "5"],
        ] {
            d.cmd(args);
        }
    }
    for cmd in ["GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"] {
        for extra in [
            &[][..],
            &["WITHDIST", "WITHCOORD"],
            &["COUNT", "2", "DESC"],
            &["COUNT", "1", "ANY", "WITHHASH"],
        ] {
            let mut args = vec![cmd, "Sicily", "Palermo", "200", "km"];
            args.extend_from_slice(extra);
            d.cmd(&args);
            let mut args = vec![cmd, "w", "london", "1000", "km"];
            args.extend_from_slice(extra);
            d.cmd(&args);
        }
        for args in [
            &[cmd, "Sicily", "nope", "200", "km"][..],
            &[cmd, "Sicily", "nope", "x", "km"],
            &[cmd, "Sicily", "Palermo", "x", "km"],
            &[cmd, "Sicily", "Palermo", "-1", "km"],
            &[cmd, "Sicily", "Palermo", "1", "au"],
            &[cmd, "missing", "x", "abc", "parsec"],
            &[cmd, "missing", "x", "1", "km", "bogus"],
            &[cmd, "missing", "x", "1", "km", "ANY"],
            &[cmd, "str", "x", "1", "km"],
            &[cmd, "Sicily", "Palermo", "200"],
        ] {
            d.cmd(args);
        }
    }
}

/// Seeded random points and random searches: every option, unit and shape,
/// sorted or not, compared byte for byte.
#[test]
fn random_searches() {
    let mut d = Diff::new();
    let units = ["m", "km", "ft", "mi"];
    for seed in 0..5u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        d.context = format!("seed {seed}");
        let key = format!("pts{seed}");
        let (clon, clat): (f64, f64) = match seed {
            0 => (12.5, 41.9),
            1 => (179.5, -60.0),
            2 => (-70.0, 75.0),
            3 => (-179.9, 84.0),
            _ => (0.0, -84.5),
        };
        let mut args: Vec<String> = vec!["GEOADD".into(), key.clone()];
        for i in 0..400 {
            let (lon, lat) = if i % 10 == 9 {
                // Coordinates repeated from an earlier point: equal distances.
                let j = rng.random_range(0..(i / 3).max(1)) * 3;
                let lon: f64 = args[2 + j].parse().unwrap_or(0.0);
                let lat: f64 = args[3 + j].parse().unwrap_or(0.0);
                (lon, lat)
            } else {
                let lon = (clon + rng.random_range(-3.0..3.0f64)).clamp(-180.0, 180.0);
                let lat = (clat + rng.random_range(-2.0..2.0f64)).clamp(-85.0, 85.0);
                (lon, lat)
            };
            args.push(format!("{lon:.6}"));
            args.push(format!("{lat:.6}"));
            args.push(format!("p{i}"));
        }
        d.cmd(&args);
        for _ in 0..120 {
            let unit = units[rng.random_range(0..units.len())];
            let scale = match unit {
                "m" => 1000.0,
                "ft" => 3280.0,
                "mi" => 0.62,
                _ => 1.0,
            };
            let size_km = [0.5, 5.0, 20.0, 80.0, 200.0, 600.0][rng.random_range(0..6)];
            let mut cmd: Vec<String> = vec!["GEOSEARCH".into(), key.clone()];
            if rng.random_bool(0.5) {
                cmd.extend([
                    "FROMMEMBER".into(),
                    format!("p{}", rng.random_range(0..400)),
                ]);
            } else {
                cmd.extend([
                    "FROMLONLAT".into(),
                    format!(
                        "{:.4}",
                        (clon + rng.random_range(-3.0..3.0f64)).clamp(-180.0, 180.0)
                    ),
                    format!(
                        "{:.4}",
                        (clat + rng.random_range(-2.0..2.0f64)).clamp(-85.0, 85.0)
                    ),
                ]);
            }
            if rng.random_bool(0.5) {
                cmd.extend([
                    "BYRADIUS".into(),
                    format!("{}", size_km * scale),
                    unit.into(),
                ]);
            } else {
                cmd.extend([
                    "BYBOX".into(),
                    format!("{}", size_km * scale * rng.random_range(0.5..2.0f64)),
                    format!("{}", size_km * scale * rng.random_range(0.5..2.0f64)),
                    unit.into(),
                ]);
            }
            match rng.random_range(0..4) {
                0 => cmd.push("ASC".into()),
                1 => cmd.push("DESC".into()),
                _ => {}
            }
            if rng.random_bool(0.5) {
                cmd.extend(["COUNT".into(), rng.random_range(1..30).to_string()]);
                if rng.random_bool(0.3) {
                    cmd.push("ANY".into());
                }
            }
            for opt in ["WITHDIST", "WITHCOORD", "WITHHASH"] {
                if rng.random_bool(0.3) {
                    cmd.push(opt.into());
                }
            }
            d.cmd(&cmd);
            if rng.random_bool(0.2) {
                // The same search stored (the WITH* options dropped).
                let mut store: Vec<String> = vec!["GEOSEARCHSTORE".into(), "dst".into()];
                store.extend(cmd[1..].iter().filter(|a| !a.starts_with("WITH")).cloned());
                if rng.random_bool(0.5) {
                    store.push("STOREDIST".into());
                }
                d.cmd(&store);
                d.cmd(&["ZRANGE", "dst", "0", "-1", "WITHSCORES"]);
            }
        }
        d.cmd(&["ZRANGE", &key, "0", "-1", "WITHSCORES"]);
    }
}

const MIX_KEYS: [&str; 3] = ["g1", "g2", "g3"];

/// One random command of the mixed sequence.
fn mixed_command(rng: &mut StdRng) -> Vec<String> {
    let member = |rng: &mut StdRng| format!("m{}", rng.random_range(0..12));
    let key = MIX_KEYS[rng.random_range(0..MIX_KEYS.len())].to_string();
    let other = MIX_KEYS[rng.random_range(0..MIX_KEYS.len())].to_string();
    let lon = format!("{:.5}", rng.random_range(-10.0..10.0f64));
    let lat = format!("{:.5}", rng.random_range(-10.0..10.0f64));
    match rng.random_range(0..17) {
        0..=2 => {
            let mut c = vec!["GEOADD".to_string(), key];
            if rng.random_bool(0.3) {
                c.push(["NX", "XX", "CH"][rng.random_range(0..3)].into());
            }
            c.extend([lon, lat, member(rng)]);
            c
        }
        3 => vec![
            "ZADD".into(),
            key,
            rng.random_range(-5..5).to_string(),
            member(rng),
        ],
        4 => vec!["ZREM".into(), key, member(rng)],
        5 => vec!["SET".into(), key, "v".into()],
        6 => vec!["DEL".into(), key],
        7 => vec!["TYPE".into(), key],
        8 => vec!["GEOPOS".into(), key, member(rng), member(rng)],
        9 => vec!["GEOHASH".into(), key, member(rng)],
        10 => vec!["GEODIST".into(), key, member(rng), member(rng), "km".into()],
        11 => vec![
            "GEOSEARCH".into(),
            key,
            "FROMLONLAT".into(),
            lon,
            lat,
            "BYRADIUS".into(),
            rng.random_range(1..2000).to_string(),
            "km".into(),
            "WITHDIST".into(),
            "ASC".into(),
        ],
        12 => vec![
            "GEOSEARCHSTORE".into(),
            other,
            key,
            "FROMMEMBER".into(),
            member(rng),
            "BYBOX".into(),
            rng.random_range(1..3000).to_string(),
            rng.random_range(1..3000).to_string(),
            "km".into(),
            "STOREDIST".into(),
        ],
        13 => vec![
            "GEORADIUSBYMEMBER".into(),
            key,
            member(rng),
            rng.random_range(1..2000).to_string(),
            "km".into(),
            "COUNT".into(),
            "3".into(),
            "WITHCOORD".into(),
        ],
        14 => vec![
            "GEORADIUS".into(),
            key,
            lon,
            lat,
            "1500".into(),
            "km".into(),
            "STORE".into(),
            other,
        ],
        15 => vec!["EXPIRE".into(), key, "1000".into()],
        _ => vec!["GET".into(), key],
    }
}

fn compare_mixed_state(d: &mut Diff) {
    for key in MIX_KEYS {
        d.cmd(&["TYPE", key]);
        d.cmd(&["ZRANGE", key, "0", "-1", "WITHSCORES"]);
        d.cmd(&["GET", key]);
        d.cmd(&["OBJECT", "ENCODING", key]);
        d.ttl(key);
    }
    d.cmd_unordered(&["KEYS", "*"]);
}

/// Runs 250 commands of `seed`; `restart` (if any) is applied to firn every
/// 100 commands, after comparing the state.
fn run_mixed(mut d: Diff, seed: u64, restart: Option<fn(&mut Server)>) {
    d.context = format!("seed={seed} (rerun alone with FIRN_DIFF_SEED={seed})");
    let mut rng = StdRng::seed_from_u64(seed);
    for step in 0..250 {
        let cmd = mixed_command(&mut rng);
        d.cmd(&cmd);
        if step % 100 == 99 {
            if let Some(restart) = restart {
                compare_mixed_state(&mut d);
                restart(&mut d.firn_server);
                d.note("firn restarted");
                d.reconnect();
            }
        }
    }
    compare_mixed_state(&mut d);
}

/// GEO* mixed with ZADD/ZREM/SET/DEL/TYPE/GET on a few keys; full state
/// compared at the end.
#[test]
fn random_sequence_mixing_types() {
    for seed in random_seeds(1000, 4) {
        run_mixed(Diff::new(), seed, None);
    }
}

/// The same sequences against a firn with a tiny cache, restarted (cleanly
/// or with kill -9) every 100 commands.
#[test]
fn random_sequence_mixing_types_across_restarts() {
    let restarts: [fn(&mut Server); 2] = [Server::restart, Server::kill9_restart];
    for (i, seed) in random_seeds(2000, 2).into_iter().enumerate() {
        let firn = Server::firn_with(&["--maxmemory", "32mb", "--appendfsync", "always"]);
        if firn.kind() != Kind::Firn {
            return;
        }
        let d = Diff::with_servers(Server::redis(), firn);
        run_mixed(d, seed, Some(restarts[i % 2]));
    }
}

#[test]
fn geo_sets_survive_kill9_and_clean_restarts() {
    let mut d = Diff::new();
    sicily(&mut d);
    world(&mut d, "w");
    d.cmd(&[
        "GEOSEARCHSTORE",
        "near",
        "w",
        "FROMMEMBER",
        "paris",
        "BYRADIUS",
        "1000",
        "km",
        "STOREDIST",
    ]);
    let check = |d: &mut Diff| {
        d.cmd(&["ZRANGE", "Sicily", "0", "-1", "WITHSCORES"]);
        d.cmd(&["ZRANGE", "near", "0", "-1", "WITHSCORES"]);
        d.cmd(&["GEOPOS", "w", "london", "sydney", "corner_ne"]);
        d.cmd(&[
            "GEOSEARCH",
            "w",
            "FROMLONLAT",
            "0",
            "45",
            "BYRADIUS",
            "3000",
            "km",
            "WITHDIST",
            "ASC",
        ]);
    };
    check(&mut d);
    d.firn_server.kill9_restart();
    d.reconnect();
    check(&mut d);
    d.cmd(&["GEOADD", "Sicily", "14", "37", "after"]);
    d.firn_server.restart();
    d.reconnect();
    check(&mut d);
    d.cmd(&["GEOPOS", "Sicily", "after"]);
}
