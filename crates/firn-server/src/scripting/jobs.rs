//! Jobs for the script thread: each creates the VM (with the stored
//! libraries) when there is none, runs on it, and sends its result back
//! to the task that awaits it. A network thread never runs Lua and never
//! waits for a script: it only awaits.

use firn_resp::Reply;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::call;
use super::functions;
use super::shared::lua_memory_limit;
use super::thread::Job;
use super::vm::{Hooks, Vm};
use crate::server::Server;

/// How the VM calls back into the server.
pub const HOOKS: Hooks = Hooks {
    call: call::call_entry,
    acl_check: call::acl_check_entry,
};

/// Queues `job` for the script thread with its VM (created, with the
/// stored libraries, if needed); its result comes on the receiver.
pub fn submit<R: Send + 'static>(
    server: &Arc<Server>,
    job: impl FnOnce(&mut Vm) -> R + Send + 'static,
) -> Option<tokio::sync::oneshot::Receiver<R>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let shared = server.scripting.shared.clone();
    let limit = lua_memory_limit(server.config().maxmemory);
    let job_server = server.clone();
    let boxed: Job = Box::new(move |slot: &mut Option<Vm>| {
        if slot.is_none() {
            match Vm::new(shared.clone(), limit, HOOKS) {
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
            } else {
                vm.collect_a_little();
            }
            shared
                .lua_memory
                .store(vm.lua.used_memory() as u64, Ordering::Relaxed);
            let _ = tx.send(result);
        }
    });
    server.scripting.send(boxed).then_some(rx)
}

/// Runs `job` on the script thread and awaits its result.
pub async fn on_thread<R: Send + 'static>(
    server: &Arc<Server>,
    job: impl FnOnce(&mut Vm) -> R + Send + 'static,
) -> Result<R, Reply> {
    let Some(rx) = submit(server, job) else {
        return Err(Reply::error("ERR the script engine is not running"));
    };
    rx.await
        .map_err(|_| Reply::error("ERR the script engine failed to run the script"))
}

/// [`on_thread`] for a job that takes its keys' place in their lock queues
/// first: `take_place` runs and the job is queued under one lock, so that
/// the script thread takes jobs in the order of their places. (Otherwise a
/// job queued ahead of another whose place came first would wait on the
/// script thread for a place only that other job, behind it, can give
/// back.) The place is taken on the caller's thread, where the command was
/// read, which puts the script in arrival order among commands.
pub async fn on_thread_in_line<P: Send + 'static, R: Send + 'static>(
    server: &Arc<Server>,
    take_place: impl FnOnce() -> P,
    job: impl FnOnce(&mut Vm, P) -> R + Send + 'static,
) -> Result<R, Reply> {
    let submitted = {
        let _in_line = server.scripting.in_line.lock();
        let place = take_place();
        submit(server, move |vm| job(vm, place))
    };
    let Some(rx) = submitted else {
        return Err(Reply::error("ERR the script engine is not running"));
    };
    rx.await
        .map_err(|_| Reply::error("ERR the script engine failed to run the script"))
}

/// Creates the VM now (loading the stored libraries), so that INFO and
/// FUNCTION STATS count them before any script runs.
pub fn start(server: &Arc<Server>) {
    let _ = submit(server, |_vm| ());
}
