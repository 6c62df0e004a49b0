//! The `firn` server: configuration, networking, sessions, the command
//! table and the command groups. Storage lives in `firn-storage`, the wire
//! protocol in `firn-resp`.

pub mod acl;
pub mod after_call;
mod allocator;
pub mod args;
pub mod arrival;
pub mod blocking;
pub mod bookkeeping;
pub mod cli_progress;
pub mod coldlog;
pub mod coldpool;
pub mod command_table;
pub mod commands;
pub mod config;
pub mod connection;
pub mod cursors;
pub mod effects;
pub mod errors;
pub mod exec;
pub mod groups;
pub mod info;
pub mod keyspecs;
pub mod latency;
pub mod lfu;
pub mod listen;
pub mod metrics;
pub mod monitor;
pub mod multi;
pub mod notify;
pub mod pause;
pub mod pipeline;
pub mod progress;
pub mod pubsub;
pub mod rdb_import;
pub mod replication;
pub mod reply_mode;
pub use firn_rdb as rdb;
pub mod scripting;
pub mod server;
pub mod signals;
mod startup;
pub mod stream_reply;
pub mod tls;
pub mod tracking;

pub use startup::{daemonize, import_rdb_file, run};
