//! Lua scripting: EVAL scripts and FUNCTION libraries, run on one
//! dedicated thread, "firn-lua", that owns the Lua VM (`mlua::Lua` is not
//! `Send`) and takes jobs from a channel. A connection's task submits a
//! job and awaits its reply, so a network thread never runs Lua and never
//! waits for a script: it only awaits.
//!
//! A run (run.rs) is atomic on every key it touches: it holds the locks
//! of its declared KEYS from the start, tries the lock of any other key a
//! `redis.call` needs, and runs every call's handler over one transaction
//! with memory-only reads. When a try fails, the run is abandoned (nothing
//! of it is kept) and runs again holding every lock; when a read misses
//! memory, the run is abandoned, the async side warms the data by running
//! the missing command on the cold-read pool, and the run starts again.
//! Its writes are committed once, at the end.
//!
//! Busy scripts: past `busy-reply-threshold` the hook of the VM sets
//! [`shared::Shared::busy`], which every connection checks with one atomic
//! load before running a command (`pipeline.rs`).
//!
//! The folder is layered; each file uses only those above it here, and
//! this file only declares them:
//! - `shared`, `flags`, `request`, `convert`, `readonly`, `sha1`: leaves
//!   (state shared with connections, script flags, what a handler asks,
//!   Lua/RESP conversion, the read-only tables, SHA-1);
//! - `libraries`, then `vm`: the Lua sandbox and the libraries it holds; it
//!   calls back into the server only through `vm::Hooks`;
//! - `thread`: the script thread and its channel (what `Server` holds);
//! - `call`: one `redis.call` of a running script (uses the server and
//!   the command registry);
//! - `functions`: loading and storing libraries;
//! - `jobs`: a job on the thread (creates the VM with `call`'s hook);
//! - `run`: running a script, again after an abandoned attempt;
//! - `dispatch`: runs a handler's request on the thread;
//! - `commands`, `function_commands`: the handlers.

mod call;
pub mod commands;
mod convert;
pub mod dispatch;
pub mod flags;
pub mod function_commands;
pub mod functions;
pub mod jobs;
pub mod libraries;
mod readonly;
pub mod request;
mod run;
pub mod sha1;
pub mod shared;
pub mod thread;
mod vm;
