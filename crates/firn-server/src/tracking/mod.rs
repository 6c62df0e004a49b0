//! Client-side caching, as Redis's tracking.c: the tracking table and the
//! invalidations (`state`) and the CLIENT TRACKING family (`commands`).

pub mod commands;
pub mod state;
pub mod table;
