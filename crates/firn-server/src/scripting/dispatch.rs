//! Runs what command handlers ask of the script thread (`Deferred::Script`
//! requests).

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
