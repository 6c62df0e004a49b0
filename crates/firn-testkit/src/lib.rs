//! Test support for firn-server's integration and differential tests: run
//! the same commands against `redis-server` (7.0.15, the specification)
//! and `firn`, and require byte-identical replies. Compiled once and shared
//! by every test binary under `crates/firn-server/tests/`.
//!
//! - [`server`]: [`Server`] starts a process on a free loopback port in its
//!   own temporary directory and kills it on drop, so a panicking test
//!   never leaks one.
//! - [`resp`], [`reply`], [`conn`]: [`Conn`] is a raw RESP client; it writes
//!   multibulk requests (or any raw bytes) and reads exactly one RESP2/RESP3
//!   reply, keeping the reply's bytes next to its parsed tree [`R`].
//! - [`diff`]: [`Diff`] holds a client of each server, sends every command
//!   to both and compares; on a mismatch it panics with both replies and the
//!   history.
//! - [`info`]: INFO fields and the INFO normalisers of differential tests;
//!   [`cost`] counts the engine's work through them.
//! - [`keyspace_events`]: a keyspace-notification subscriber.
//! - [`streamed`]: reading a huge reply element by element.
//! - [`data`]: deterministic byte patterns.
//! - [`env`]: the `FIRN_DIFF_*` switches (self-test, cold reads, writers,
//!   seeds).
//!
//! ```ignore
//! use firn_testkit::Diff;
//! let mut d = Diff::new();
//! d.cmd(&["SET", "k", "v", "EX", "100"]);   // byte-identical replies
//! d.ttl("k");                               // TTL, +-1 s
//! d.cmd_unordered(&["KEYS", "*"]);          // order does not matter
//! d.cmd_type_only(&["TIME"]);               // only the shape must match
//! ```

pub mod conn;
pub mod cost;
pub mod data;
pub mod diff;
pub mod env;
pub mod info;
pub mod keyspace_events;
pub mod reply;
pub mod resp;
pub mod server;
pub mod streamed;
pub mod wait;

pub use conn::Conn;
pub use diff::Diff;
pub use reply::R;
pub use resp::encode_request;
pub use server::{Kind, Server};
pub use wait::{config_file_words, wait_until};
