//! Blocking pops: the registry of clients waiting for keys (`state`) and
//! the BLPOP/BLMOVE/BZPOPMIN family of commands (`commands`).

pub mod commands;
pub mod state;
