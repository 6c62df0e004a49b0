//! Lua scripting: EVAL scripts (and the VM FUNCTION uses), run on one
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
//! [`Shared::busy`], which every connection checks with one atomic load
//! before running a command (`pipeline.rs`).

pub mod commands;
mod convert;
pub mod function_commands;
mod functions;
mod readonly;
mod run;
pub mod sha1;
mod vm;

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::Ticket;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use crate::command_table::Flags;
use crate::server::{ClientInfo, Server, Session};

pub use functions::RestorePolicy;
pub use run::{EvalRequest, FcallRequest, RunRequest};
pub use vm::ScriptFlags;

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
pub(crate) const KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";
/// The error that unwinds an abandoned run (never seen by a client).
pub(crate) const ABANDONED: &str = "ERR script run abandoned: it will run again";

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
    /// Cached EVAL scripts: sha → body length.
    pub scripts: RwLock<HashMap<String, usize>>,
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
}

impl Shared {
    fn start(&self, kind: u8, threshold_ms: u64) {
        self.kill.store(false, Ordering::Release);
        self.dirty.store(false, Ordering::Release);
        self.abandon.store(false, Ordering::Release);
        self.started_ms
            .store(firn_storage::now_ms(), Ordering::Release);
        self.threshold_ms.store(threshold_ms, Ordering::Release);
        self.running.store(kind, Ordering::Release);
    }

    fn start_load(&self, timeout_ms: u64) {
        self.load_deadline_ms
            .store(firn_storage::now_ms() + timeout_ms, Ordering::Release);
    }

    fn load_timed_out(&self) -> bool {
        let deadline = self.load_deadline_ms.load(Ordering::Acquire);
        deadline != 0 && firn_storage::now_ms() > deadline
    }

    /// When the running script started (ms).
    pub fn started_ms(&self) -> u64 {
        self.started_ms.load(Ordering::Acquire)
    }

    fn finish(&self) {
        self.load_deadline_ms.store(0, Ordering::Release);
        *self.running_function.lock() = None;
        self.running.store(KIND_NONE, Ordering::Release);
        self.busy.store(KIND_NONE, Ordering::Release);
        self.kill.store(false, Ordering::Release);
        self.abandon.store(false, Ordering::Release);
    }

    /// From the VM's hook: past the threshold, the running script makes
    /// the server busy.
    fn note_elapsed(&self) {
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

type Job = Box<dyn FnOnce(&mut Option<vm::Vm>) + Send>;

/// The scripting engine: the channel to the script thread and the state
/// shared with it.
pub struct Scripting {
    pub shared: Arc<Shared>,
    jobs: crossbeam_channel::Sender<Job>,
}

impl Default for Scripting {
    fn default() -> Self {
        Scripting::new()
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

/// The extra libraries Redis loads into its VM: cjson, cmsgpack, struct
/// and bit (the `firn-lua-libs` crate).
fn register_libraries(lua: &mlua::Lua) -> mlua::Result<()> {
    firn_lua_libs::register(lua)
}

impl Scripting {
    /// Starts the script thread (the VM is created by its first job).
    pub fn new() -> Scripting {
        let shared = Arc::new(Shared::default());
        let (jobs, receiver) = crossbeam_channel::unbounded::<Job>();
        let thread_shared = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("firn-lua".into())
            .stack_size(16 << 20)
            .spawn(move || {
                let mut vm: Option<vm::Vm> = None;
                while let Ok(job) = receiver.recv() {
                    let outcome =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&mut vm)));
                    if outcome.is_err() {
                        // A bug, not a script: start again with a fresh VM.
                        tracing::error!("the script thread recovered from a panic");
                        // Never leave the server busy behind a dead run.
                        thread_shared.finish();
                        vm = None;
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start the script thread: {e}");
        }
        Scripting { shared, jobs }
    }

    /// Queues `job` for the script thread with its VM (created, with the
    /// stored libraries, if needed); its result comes on the receiver.
    fn submit<R: Send + 'static>(
        &self,
        server: &Arc<Server>,
        job: impl FnOnce(&mut vm::Vm) -> R + Send + 'static,
    ) -> Option<tokio::sync::oneshot::Receiver<R>> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let shared = self.shared.clone();
        let limit = lua_memory_limit(server.config().maxmemory);
        let job_server = server.clone();
        let boxed: Job = Box::new(move |slot: &mut Option<vm::Vm>| {
            if slot.is_none() {
                match vm::Vm::new(shared.clone(), limit) {
                    Ok(mut created) => {
                        functions::restore_stored(&mut created, &job_server);
                        *slot = Some(created)
                    }
                    Err(e) => {
                        tracing::error!("cannot create the Lua VM: {e}");
                        return;
                    }
                }
            }
            if let Some(vm) = slot.as_mut() {
                let result = job(vm);
                // Lua 5.1 has no emergency collection: after a script that
                // filled the VM (and failed with "not enough memory"), its
                // garbage would stay until the next cycle, which needs
                // memory to start. A full collection frees it now.
                if vm.lua.used_memory() > vm.memory_limit() / 2 {
                    // The collection itself allocates a little (mlua's
                    // protected call): lift the limit while it runs.
                    let _ = vm.lua.set_memory_limit(0);
                    let _ = vm.lua.gc_collect();
                    let _ = vm.lua.set_memory_limit(vm.memory_limit());
                }
                shared
                    .lua_memory
                    .store(vm.lua.used_memory() as u64, Ordering::Relaxed);
                let _ = tx.send(result);
            }
        });
        self.jobs.send(boxed).ok().map(|_| rx)
    }

    /// Runs `job` on the script thread and awaits its result.
    async fn on_thread<R: Send + 'static>(
        &self,
        server: &Arc<Server>,
        job: impl FnOnce(&mut vm::Vm) -> R + Send + 'static,
    ) -> Result<R, Reply> {
        let Some(rx) = self.submit(server, job) else {
            return Err(Reply::error("ERR the script engine is not running"));
        };
        rx.await
            .map_err(|_| Reply::error("ERR the script engine failed to run the script"))
    }

    /// Whether `sha` (lowercase) names a cached script.
    pub fn has_script(&self, sha: &str) -> bool {
        self.shared.scripts.read().contains_key(sha)
    }

    /// Creates the VM now (loading the stored libraries), so that INFO and
    /// FUNCTION STATS count them before any script runs.
    pub fn start(&self, server: &Arc<Server>) {
        let _ = self.submit(server, |_vm| ());
    }
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

pub fn memory(server: &Server) -> MemoryReport {
    let shared = &server.scripting.shared;
    let vm = shared.lua_memory.load(Ordering::Relaxed);
    MemoryReport {
        vm_eval_bytes: vm,
        vm_functions_bytes: 0,
        vm_total_bytes: vm,
        scripts_eval_bytes: shared.scripts_bytes.load(Ordering::Relaxed),
        cached_scripts: shared.scripts.read().len() as u64,
        functions_bytes: shared.functions_bytes.load(Ordering::Relaxed),
        functions: shared.functions_count.load(Ordering::Relaxed),
        libraries: shared.libraries_count.load(Ordering::Relaxed),
    }
}

/// A request that runs on the script thread, from a command handler.
pub enum Request {
    Eval(EvalRequest),
    Fcall(FcallRequest),
    /// FUNCTION LOAD [REPLACE] code.
    FunctionLoad {
        code: Bytes,
        replace: bool,
    },
    FunctionDelete(Bytes),
    FunctionFlush,
    FunctionDump,
    FunctionRestore {
        payload: Bytes,
        policy: RestorePolicy,
    },
    /// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
    FunctionList {
        pattern: Option<Bytes>,
        with_code: bool,
    },
    /// SCRIPT LOAD: compile and cache, reply the sha.
    Load(Bytes),
    /// SCRIPT FLUSH: forget every script and start a fresh VM.
    Flush,
}

/// Runs a request for a client: the reply and the batches it waits for.
pub async fn dispatch(
    server: &Arc<Server>,
    client: &Arc<ClientInfo>,
    session: &Session,
    request: Request,
) -> (Reply, Vec<Ticket>) {
    match request {
        Request::Eval(eval) => {
            run::run_rounds(server, client, session, RunRequest::Eval(eval)).await
        }
        Request::Fcall(fcall) => {
            run::run_rounds(server, client, session, RunRequest::Fcall(fcall)).await
        }
        Request::FunctionLoad { code, replace } => {
            let job_server = server.clone();
            let done = server
                .scripting
                .on_thread(server, move |vm| {
                    functions::load(vm, &job_server, &code, replace, true)
                })
                .await;
            done.unwrap_or_else(|e| (e, Vec::new()))
        }
        Request::FunctionDelete(name) => {
            let job_server = server.clone();
            let done = server
                .scripting
                .on_thread(server, move |vm| functions::delete(vm, &job_server, &name))
                .await;
            done.unwrap_or_else(|e| (e, Vec::new()))
        }
        Request::FunctionDump => {
            let reply = server
                .scripting
                .on_thread(server, |vm| functions::dump(vm))
                .await;
            (reply.unwrap_or_else(|e| e), Vec::new())
        }
        Request::FunctionRestore { payload, policy } => {
            let job_server = server.clone();
            let done = server
                .scripting
                .on_thread(server, move |vm| {
                    functions::restore(vm, &job_server, &payload, policy)
                })
                .await;
            done.unwrap_or_else(|e| (e, Vec::new()))
        }
        Request::FunctionFlush => {
            let job_server = server.clone();
            let done = server
                .scripting
                .on_thread(server, move |vm| functions::flush(vm, &job_server))
                .await;
            done.unwrap_or_else(|e| (e, Vec::new()))
        }
        Request::FunctionList { pattern, with_code } => {
            let reply = server
                .scripting
                .on_thread(server, move |vm| {
                    functions::list(vm, pattern.as_deref(), with_code)
                })
                .await;
            (reply.unwrap_or_else(|e| e), Vec::new())
        }
        Request::Load(body) => {
            let job_server = server.clone();
            let reply = server
                .scripting
                .on_thread(server, move |vm| {
                    match run::load_script(vm, &job_server.scripting.shared, &body) {
                        Ok(sha) => Reply::bulk(Bytes::from(sha)),
                        Err(reply) => reply,
                    }
                })
                .await;
            (reply.unwrap_or_else(|e| e), Vec::new())
        }
        Request::Flush => {
            let shared = server.scripting.shared.clone();
            let job_server = server.clone();
            let reply = server
                .scripting
                .on_thread(server, move |vm| {
                    shared.scripts.write().clear();
                    shared.scripts_bytes.store(0, Ordering::Relaxed);
                    vm.scripts.clear();
                    // A fresh VM, as Redis's SCRIPT FLUSH does; the
                    // libraries are loaded into it again.
                    let limit = vm.memory_limit();
                    match vm::Vm::new(shared.clone(), limit) {
                        Ok(mut fresh) => {
                            functions::restore_stored(&mut fresh, &job_server);
                            *vm = fresh;
                            Reply::ok()
                        }
                        Err(e) => Reply::error(format!("ERR cannot reset the Lua VM: {e}")),
                    }
                })
                .await;
            (reply.unwrap_or_else(|e| e), Vec::new())
        }
    }
}
