//! Counting the engine's work: cost tests assert how many entries a
//! command's range scans visited and how many point reads it made (INFO
//! storage, Firn's own section), never how long it took.

use crate::info;
use crate::{Conn, R};

/// `(entries range scans visited, point reads)` so far.
pub fn work(conn: &mut Conn) -> (u64, u64) {
    (
        info::storage(conn, "scanned_entries"),
        info::storage(conn, "point_reads"),
    )
}

/// Runs `args`; returns its reply, the entries it scanned and the point
/// reads it made.
pub fn measured(conn: &mut Conn, args: &[&str]) -> (R, u64, u64) {
    let (scanned, reads) = work(conn);
    let reply = conn.cmd(args);
    let (scanned_after, reads_after) = work(conn);
    (reply, scanned_after - scanned, reads_after - reads)
}
