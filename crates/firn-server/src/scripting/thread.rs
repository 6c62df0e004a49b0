//! The script thread, "firn-lua": it owns the Lua VM (`mlua::Lua` is not
//! `Send`) and runs jobs from a channel, one at a time. The server holds
//! [`Scripting`]; what a job does is `dispatch.rs`'s business.

use std::sync::Arc;

use super::shared::Shared;
use super::vm::Vm;

/// A job for the script thread, given its VM slot (empty until a job
/// creates the VM, and again after a panic).
pub type Job = Box<dyn FnOnce(&mut Option<Vm>) + Send>;

/// The scripting engine: the channel to the script thread and the state
/// shared with it.
pub struct Scripting {
    pub shared: Arc<Shared>,
    jobs: crossbeam_channel::Sender<Job>,
    /// Held while a job takes its keys' place in their lock queues and is
    /// queued (`jobs::on_thread_in_line`), so that the script thread's
    /// jobs come in the order of their places.
    pub(super) in_line: parking_lot::Mutex<()>,
}

impl Default for Scripting {
    fn default() -> Self {
        Scripting::new()
    }
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
                let mut vm: Option<Vm> = None;
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
        Scripting {
            shared,
            jobs,
            in_line: parking_lot::Mutex::new(()),
        }
    }

    /// Queues `job` for the script thread; false if the thread is gone.
    pub fn send(&self, job: Job) -> bool {
        self.jobs.send(job).is_ok()
    }

    /// Whether `sha` (lowercase) names a cached script.
    pub fn has_script(&self, sha: &str) -> bool {
        self.shared.scripts.read().contains_key(sha)
    }
}
