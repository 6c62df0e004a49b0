//! Cost of geo searches on a geo set of one million members (a 1000 x 1000
//! grid), measured as work done, never as time:
//!
//! - a small-radius GEOSEARCH (or BYBOX, or FROMMEMBER, or GEORADIUS) reads
//!   only the index entries of its cells: it returns exactly what the same
//!   search returns on a set holding just the neighbourhood, it scans a few
//!   dozen entries (INFO storage `scanned_entries`; the cells hold about 35
//!   grid points) with a point read or two (`point_reads`), and it
//!   stays on the network thread (INFO `cold_commands` does not move);
//! - a search whose cells hold thousands of members leaves the network
//!   thread for the cold-read pool (the control for the check above);
//! - DEL of the million-member set is O(1): the key is gone at once.

use firn_testkit::{encode_request, info, Conn, Server, R};

const SIDE: usize = 1000;
/// GEOADD commands per pipelined write (1000 members each).
const PER_WRITE: usize = 20;

fn longitude(column: usize) -> f64 {
    -100.0 + column as f64 * 0.2
}

fn latitude(row: usize) -> f64 {
    -70.0 + row as f64 * 0.14
}

fn name(row: usize, column: usize) -> String {
    format!("p{row:03}-{column:03}")
}

/// GEOADD `key` with the grid points of `rows` x `columns`, one command
/// per row, pipelined.
fn build(
    conn: &mut Conn,
    key: &str,
    rows: std::ops::Range<usize>,
    columns: std::ops::Range<usize>,
) {
    let rows: Vec<usize> = rows.collect();
    for batch in rows.chunks(PER_WRITE) {
        let mut request = Vec::new();
        for &row in batch {
            let mut args: Vec<Vec<u8>> = vec![b"GEOADD".to_vec(), key.as_bytes().to_vec()];
            for column in columns.clone() {
                args.push(format!("{:.2}", longitude(column)).into_bytes());
                args.push(format!("{:.2}", latitude(row)).into_bytes());
                args.push(name(row, column).into_bytes());
            }
            let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
            request.extend_from_slice(&encode_request(&refs));
        }
        conn.send_raw(&request);
        for _ in batch {
            let reply = conn.read_reply().1;
            assert_eq!(reply, R::Int(columns.len() as i64), "GEOADD");
        }
    }
}

fn cold_commands(conn: &mut Conn) -> u64 {
    info::storage(conn, "cold_commands")
}

#[test]
fn a_small_search_on_a_million_member_geo_set_reads_only_its_cells() {
    let server = Server::firn();
    let mut c = server.conn();
    build(&mut c, "big", 0..SIDE, 0..SIDE);
    assert_eq!(c.cmd(&["ZCARD", "big"]), R::Int((SIDE * SIDE) as i64));
    // The neighbourhood of the searches below (columns 550 +- 10 are
    // longitudes 10 +- 2, rows 640 +- 10 latitudes 19.6 +- 1.4).
    build(&mut c, "near", 630..651, 540..561);

    let searches: [&[&str]; 4] = [
        &[
            "GEOSEARCH",
            "KEY",
            "FROMLONLAT",
            "10.05",
            "19.63",
            "BYRADIUS",
            "20",
            "km",
            "WITHDIST",
            "WITHCOORD",
        ],
        &[
            "GEOSEARCH",
            "KEY",
            "FROMLONLAT",
            "10.05",
            "19.63",
            "BYBOX",
            "60",
            "40",
            "km",
            "ASC",
            "WITHHASH",
        ],
        &[
            "GEOSEARCH",
            "KEY",
            "FROMMEMBER",
            "p640-550",
            "BYRADIUS",
            "30",
            "km",
            "DESC",
            "COUNT",
            "5",
        ],
        &[
            "GEORADIUS",
            "KEY",
            "10",
            "19.6",
            "25",
            "km",
            "ASC",
            "WITHDIST",
        ],
    ];
    for search in searches {
        fn on<'a>(search: &[&'a str], key: &'a str) -> Vec<&'a str> {
            search
                .iter()
                .map(|a| if *a == "KEY" { key } else { *a })
                .collect()
        }
        let on = |key: &'static str| on(search, key);
        let expected = c.cmd(&on("near"));
        let found = match &expected {
            R::Array(Some(items)) => items.len(),
            other => panic!("{search:?}: {}", other.render()),
        };
        assert!(found > 0, "{search:?} found nothing");
        // The first run may read blocks from disk (on the pool); the second
        // finds them cached and must stay on the network thread.
        assert_eq!(c.cmd(&on("big")), expected, "{search:?}");
        let cold = cold_commands(&mut c);
        let scanned = info::storage(&mut c, "scanned_entries");
        let reads = info::storage(&mut c, "point_reads");
        assert_eq!(c.cmd(&on("big")), expected, "{search:?}");
        let visited = info::storage(&mut c, "scanned_entries") - scanned;
        let point_reads = info::storage(&mut c, "point_reads") - reads;
        assert!(
            visited >= found as u64 && visited <= 150,
            "{search:?} on a million members scanned {visited} entries for {found}"
        );
        assert!(point_reads <= 3, "{search:?}: {point_reads} point reads");
        assert_eq!(
            cold_commands(&mut c),
            cold,
            "{search:?} visited more than 1,000 entries (it left the network thread)"
        );
    }

    // The control: cells of thousands of members move the search off-thread.
    let cold = cold_commands(&mut c);
    let reply = c.cmd(&[
        "GEOSEARCH",
        "big",
        "FROMLONLAT",
        "10",
        "19.6",
        "BYRADIUS",
        "500",
        "km",
        "COUNT",
        "3",
    ]);
    assert!(
        matches!(&reply, R::Array(Some(items)) if items.len() == 3),
        "{}",
        reply.render()
    );
    assert!(
        cold_commands(&mut c) > cold,
        "a search over thousands of members stayed on a network thread"
    );

    // DEL is O(1): the key is gone at once, a new set starts empty.
    assert_eq!(c.cmd(&["DEL", "big"]), R::Int(1));
    assert_eq!(c.cmd(&["EXISTS", "big"]), R::Int(0));
    assert_eq!(
        c.cmd(&[
            "GEOSEARCH",
            "big",
            "FROMLONLAT",
            "10",
            "19.6",
            "BYRADIUS",
            "500",
            "km"
        ]),
        R::Array(Some(Vec::new()))
    );
    c.cmd(&["GEOADD", "big", "10", "19.6", "again"]);
    assert_eq!(c.cmd(&["ZCARD", "big"]), R::Int(1));
}
