//! The server's side of submit (firn-storage signals.rs): every batch
//! submitted while a tracking client or a blocked client listens is handed
//! here synchronously, while its submitter still holds its keys' locks,
//! and goes to client-side caching (invalidations, tracking/state.rs) and
//! the blocking registry (wake-ups, blocking/state.rs). That is what puts
//! an invalidation before the write's reply and a wake-up before any
//! command that comes after the write.

use std::sync::{Arc, Weak};

use crate::server::Server;

struct OnSubmit {
    server: Weak<Server>,
}

impl firn_storage::SubmitListener for OnSubmit {
    fn submitted(&self, batch: &firn_storage::Submitted<'_>) {
        let Some(server) = self.server.upgrade() else {
            return;
        };
        crate::tracking::state::on_submit(&server, batch);
        server.blocking.on_submit(Some(&server.engine), batch);
    }
}

/// Installs the listener on `server`'s engine (once, at start-up).
pub fn install(server: &Arc<Server>) {
    server.engine.set_submit_listener(Arc::new(OnSubmit {
        server: Arc::downgrade(server),
    }));
}
