//! MONITOR, as Redis's replicationFeedMonitors and monitorCommand: the
//! feed of commands that ran (`feed`), the mode a monitor's connection is
//! in (`mode`) and the MONITOR command (`commands`).

pub mod commands;
pub mod feed;
pub mod mode;
