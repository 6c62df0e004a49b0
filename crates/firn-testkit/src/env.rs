//! The environment switches of the test suites, all read here:
//!
//! - `FIRN_DIFF_SELFTEST=1`: [`crate::Server::firn`] starts a second
//!   redis-server; every suite must then pass, which proves the suites
//!   themselves are deterministic (no hash-order or timing dependence left
//!   un-normalised).
//! - `FIRN_DIFF_COLD=1`: every firn runs with `debug-cold-reads yes`.
//! - `FIRN_DIFF_WRITERS=N`: every firn runs with `writer-threads N`.
//! - `FIRN_DIFF_FULL_HISTORY=1`: a mismatch prints the whole command
//!   history instead of the last 60 commands.
//! - `FIRN_DIFF_SEED=S`, `FIRN_DIFF_STEPS=N`: rerun one seed of a random
//!   test, with another number of commands.

/// True when `Server::firn()` is replaced by a second redis-server.
pub fn selftest() -> bool {
    std::env::var("FIRN_DIFF_SELFTEST").is_ok_and(|v| v == "1")
}

/// True when the suites run with every firn read forced cold.
pub fn cold_mode() -> bool {
    std::env::var("FIRN_DIFF_COLD").is_ok_and(|v| v == "1")
}

/// `FIRN_DIFF_WRITERS=N`: every firn runs with `writer-threads N`.
pub fn writers_mode() -> Option<String> {
    std::env::var("FIRN_DIFF_WRITERS")
        .ok()
        .filter(|v| v.parse::<usize>().is_ok_and(|n| n >= 1))
}

/// True when a mismatch should print the whole command history.
pub fn full_history() -> bool {
    std::env::var_os("FIRN_DIFF_FULL_HISTORY").is_some()
}

/// The seeds a seeded random test runs: `first..first + count`, or only
/// the one in `FIRN_DIFF_SEED` (to rerun a failure).
pub fn random_seeds(first: u64, count: u64) -> Vec<u64> {
    match std::env::var("FIRN_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(seed) => vec![seed],
        None => (first..first + count).collect(),
    }
}

/// Commands per seed: `default`, or `FIRN_DIFF_STEPS`.
pub fn random_steps(default: usize) -> usize {
    std::env::var("FIRN_DIFF_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
