//! What the script thread shares with every connection: the running
//! script's state (busy, kill, abandon), the script cache's index and the
//! counts INFO and FUNCTION STATS show, and the error texts of scripting.
//! It depends on nothing else in the server; a connection reads it with
//! one atomic load before each command (`busy`).

use bytes::Bytes;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

use super::flags::ScriptFlags;
use crate::command_table::Flags;

/// What connections know of a cached EVAL script.
#[derive(Clone, Copy, Debug)]
pub struct CachedScript {
    pub bytes: usize,
    pub flags: ScriptFlags,
}

/// What kind of script runs (SCRIPT KILL and FUNCTION KILL each end only
/// their own kind, and the BUSY texts differ).
pub const KIND_NONE: u8 = 0;
pub const KIND_EVAL: u8 = 1;
pub const KIND_FUNCTION: u8 = 2;

pub const BUSY_EVAL: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
pub const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
pub const NOTBUSY: &str = "NOTBUSY No scripts in execution right now.";
pub const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
pub const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";
/// The error a killed script ends with.
pub const KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";
/// The error that unwinds an abandoned run (never seen by a client).
pub const ABANDONED: &str = "ERR script run abandoned: it will run again";

/// The Lua VM's memory limit when `maxmemory` is 0; otherwise a quarter
/// of `maxmemory`, at least 64 MiB. A script past it fails with "not
/// enough memory" instead of growing without bound.
const DEFAULT_LUA_MEMORY_BYTES: u64 = 1 << 30;
const MIN_LUA_MEMORY_BYTES: u64 = 64 << 20;

pub fn lua_memory_limit(maxmemory: u64) -> usize {
    let limit = if maxmemory == 0 {
        DEFAULT_LUA_MEMORY_BYTES
    } else {
        (maxmemory / 4).max(MIN_LUA_MEMORY_BYTES)
    };
    usize::try_from(limit).unwrap_or(usize::MAX)
}

/// What INFO memory reports of scripting (Redis 7.0's fields).
pub struct MemoryReport {
    /// The Lua VM (EVAL scripts and functions share it in Firn).
    pub vm_eval_bytes: u64,
    pub vm_functions_bytes: u64,
    pub vm_total_bytes: u64,
    /// Bodies of the cached EVAL scripts.
    pub scripts_eval_bytes: u64,
    pub cached_scripts: u64,
    /// Code of the loaded libraries.
    pub functions_bytes: u64,
    pub functions: u64,
    pub libraries: u64,
}

impl MemoryReport {
    pub fn scripts_bytes(&self) -> u64 {
        self.scripts_eval_bytes + self.functions_bytes
    }
}

/// State the script thread shares with connections.
#[derive(Default)]
pub struct Shared {
    /// The kind of script running past the busy threshold, or 0. The one
    /// thing the connection path reads for scripting.
    pub busy: AtomicU8,
    /// The kind of script running, or 0.
    pub running: AtomicU8,
    /// SCRIPT KILL / FUNCTION KILL asked the running script to stop.
    pub kill: AtomicBool,
    /// The running script called a write command.
    pub dirty: AtomicBool,
    /// The running run is abandoned (a lock or a cold read): every later
    /// `redis.call` and the hook fail it, whatever `pcall` catches.
    pub abandon: AtomicBool,
    /// When the running script started (ms) and its busy threshold.
    started_ms: AtomicU64,
    threshold_ms: AtomicU64,
    /// Bytes the Lua VM uses (after the last job).
    pub lua_memory: AtomicU64,
    /// Cached EVAL scripts: sha → body length and declared flags.
    pub scripts: RwLock<HashMap<String, CachedScript>>,
    /// Bytes of the cached scripts' bodies.
    pub scripts_bytes: AtomicU64,
    /// While a library loads: when its code must have finished (ms).
    load_deadline_ms: AtomicU64,
    /// The function running (FUNCTION STATS): its name and command line.
    pub running_function: parking_lot::Mutex<Option<(String, Vec<Bytes>)>>,
    /// Loaded libraries, their functions, and their code's bytes.
    pub libraries_count: AtomicU64,
    pub functions_count: AtomicU64,
    pub functions_bytes: AtomicU64,
    /// Each loaded function's declared flags, by lowercase name (FCALL's
    /// flags, read on the network thread).
    pub function_flags: RwLock<HashMap<String, ScriptFlags>>,
}

impl Shared {
    pub(super) fn start(&self, kind: u8, threshold_ms: u64) {
        self.kill.store(false, Ordering::Release);
        self.dirty.store(false, Ordering::Release);
        self.abandon.store(false, Ordering::Release);
        self.started_ms
            .store(firn_storage::now_ms(), Ordering::Release);
        self.threshold_ms.store(threshold_ms, Ordering::Release);
        self.running.store(kind, Ordering::Release);
    }

    pub(super) fn start_load(&self, timeout_ms: u64) {
        self.load_deadline_ms
            .store(firn_storage::now_ms() + timeout_ms, Ordering::Release);
    }

    pub(super) fn load_timed_out(&self) -> bool {
        let deadline = self.load_deadline_ms.load(Ordering::Acquire);
        deadline != 0 && firn_storage::now_ms() > deadline
    }

    /// When the running script started (ms).
    pub fn started_ms(&self) -> u64 {
        self.started_ms.load(Ordering::Acquire)
    }

    pub(super) fn finish(&self) {
        self.load_deadline_ms.store(0, Ordering::Release);
        *self.running_function.lock() = None;
        self.running.store(KIND_NONE, Ordering::Release);
        self.busy.store(KIND_NONE, Ordering::Release);
        self.kill.store(false, Ordering::Release);
        self.abandon.store(false, Ordering::Release);
    }

    /// From the VM's hook: past the threshold, the running script makes
    /// the server busy.
    pub(super) fn note_elapsed(&self) {
        let kind = self.running.load(Ordering::Acquire);
        if kind == KIND_NONE || self.busy.load(Ordering::Relaxed) != KIND_NONE {
            return;
        }
        let elapsed =
            firn_storage::now_ms().saturating_sub(self.started_ms.load(Ordering::Acquire));
        if elapsed >= self.threshold_ms.load(Ordering::Acquire) {
            self.busy.store(kind, Ordering::Release);
        }
    }
}

/// The error a command gets while a script is busy, if it may not run.
pub fn busy_error(busy: u8, flags: Flags) -> Option<&'static str> {
    if busy == KIND_NONE || flags.contains(Flags::ALLOW_BUSY) {
        return None;
    }
    Some(if busy == KIND_FUNCTION {
        BUSY_FUNCTION
    } else {
        BUSY_EVAL
    })
}

impl Shared {
    /// What INFO memory and MEMORY STATS report of scripting.
    pub fn memory_report(&self) -> MemoryReport {
        let vm = self.lua_memory.load(Ordering::Relaxed);
        MemoryReport {
            vm_eval_bytes: vm,
            vm_functions_bytes: 0,
            vm_total_bytes: vm,
            scripts_eval_bytes: self.scripts_bytes.load(Ordering::Relaxed),
            cached_scripts: self.scripts.read().len() as u64,
            functions_bytes: self.functions_bytes.load(Ordering::Relaxed),
            functions: self.functions_count.load(Ordering::Relaxed),
            libraries: self.libraries_count.load(Ordering::Relaxed),
        }
    }
}
