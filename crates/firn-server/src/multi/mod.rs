//! MULTI/EXEC, as Redis's multi.c: a connection's transaction state,
//! queueing and EXEC (`transaction`) and the MULTI, EXEC, DISCARD, WATCH
//! and UNWATCH commands (`commands`).

pub mod commands;
pub mod state;
pub mod transaction;
