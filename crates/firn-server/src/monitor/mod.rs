//! MONITOR, as Redis's replicationFeedMonitors and monitorCommand: the
//! line a monitor is shown (`line`), the after-call observer that feeds it
//! each command that ran (`feed`), the mode a monitor's connection is in
//! (`mode`) and the MONITOR command (`commands`).

pub mod commands;
pub mod feed;
pub mod line;
pub mod mode;
