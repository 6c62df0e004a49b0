//! Runs what command handlers ask of the script thread (`Deferred::Script`
//! requests), and what INFO reads of scripting.

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::Ticket;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::functions;
use super::jobs::on_thread;
use super::request::Request;
use super::run::{self, RunRequest};
use super::vm::Vm;
use crate::server::{ClientInfo, Server, Session};

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
            let done = on_thread(server, move |vm| {
                functions::load(vm, &job_server, &code, replace, true)
            })
            .await;
            done.unwrap_or_else(|e| (e, Vec::new()))
        }
        Request::FunctionDelete(name) => {
            let job_server = server.clone();
            let done = on_thread(server, move |vm| functions::delete(vm, &job_server, &name)).await;
            done.unwrap_or_else(|e| (e, Vec::new()))
        }
        Request::FunctionDump => {
            let reply = on_thread(server, |vm| functions::dump(vm)).await;
            (reply.unwrap_or_else(|e| e), Vec::new())
        }
        Request::FunctionRestore { payload, policy } => {
            let job_server = server.clone();
            let done = on_thread(server, move |vm| {
                functions::restore(vm, &job_server, &payload, policy)
            })
            .await;
            done.unwrap_or_else(|e| (e, Vec::new()))
        }
        Request::FunctionFlush => {
            let job_server = server.clone();
            let done = on_thread(server, move |vm| functions::flush(vm, &job_server)).await;
            done.unwrap_or_else(|e| (e, Vec::new()))
        }
        Request::FunctionList { pattern, with_code } => {
            let reply = on_thread(server, move |vm| {
                functions::list(vm, pattern.as_deref(), with_code)
            })
            .await;
            (reply.unwrap_or_else(|e| e), Vec::new())
        }
        Request::Load(body) => {
            let job_server = server.clone();
            let reply = on_thread(server, move |vm| {
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
            let reply = on_thread(server, move |vm| {
                shared.scripts.write().clear();
                shared.scripts_bytes.store(0, Ordering::Relaxed);
                vm.scripts.clear();
                // A fresh VM, as Redis's SCRIPT FLUSH does; the
                // libraries are loaded into it again.
                let limit = vm.memory_limit();
                match Vm::new(shared.clone(), limit, vm.hooks) {
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
