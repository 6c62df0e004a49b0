//! Replication, as Redis's replication.c: a primary feeds any number of
//! replicas, a replica follows one primary (a Firn, or a redis-server for a
//! live import) and may feed replicas of its own. See
//! docs/architecture.md, "Replication", for the protocol and its states.
//!
//! - `state.rs`: ids, the backlog, the replicas fed, the link followed.
//! - `backlog.rs`: the stream's recent bytes, addressed by offsets.
//! - `primary.rs`: serving one replica: PSYNC's answer, the checkpoint of a
//!   full sync, then the stream from the backlog; its ACKs.
//! - `link.rs`: the replica's side: the handshake, the full sync (a
//!   checkpoint from a Firn, an RDB from a Redis), then applying the stream.
//! - `commands.rs`: REPLICAOF, ROLE, PSYNC, REPLCONF, WAIT, FAILOVER.
//! - `lifecycle.rs`: at start-up, following `replicaof` and the PING cron;
//!   a replica's place in the stream kept across a clean restart.
//!
//! This file holds what the request path asks of replication (whether a
//! write may run, the settings it reads) and what both sides share
//! (the replay sink, dropping the replicas): it uses the server's state,
//! never the link or the pipeline, so the pipeline can call it.

pub mod backlog;
pub mod commands;
pub mod lifecycle;
pub mod link;
pub mod primary;
pub mod state;

use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Disconnects every replica this server feeds: its stream changed
/// history (a full sync replaced the data) or id, and they must PSYNC
/// again to learn which.
pub fn drop_replicas(server: &crate::server::Server) {
    let ids: Vec<u64> = server
        .replication
        .replicas
        .lock()
        .iter()
        .map(|r| r.client_id)
        .collect();
    let clients = server.clients.lock();
    for id in ids {
        if let Some(client) = clients.get(&id) {
            client.request_kill();
        }
    }
}

/// Installs the replay sink once: from then on every committed batch is
/// appended to the backlog (a master with a replica, or any replica).
pub fn activate(server: &Arc<crate::server::Server>) {
    let repl = &server.replication;
    if repl.active.swap(true, Ordering::AcqRel) {
        return;
    }
    let weak = Arc::downgrade(server);
    server
        .engine
        .set_replay_sink(Some(Arc::new(move |seq, item| {
            if let Some(server) = weak.upgrade() {
                server.replication.on_commit(seq, item);
            }
        })));
}

/// Whether a write command may run here: a read-only replica takes writes
/// from its primary only, and a primary with `min-replicas-to-write` needs
/// that many replicas that acknowledged within `min-replicas-max-lag`.
pub fn admit_write(
    server: &crate::server::Server,
    client: &crate::server::ClientInfo,
) -> Result<(), crate::errors::CmdError> {
    use crate::errors::CmdError;
    let repl = &server.replication;
    if client.role_flag.load(Ordering::Relaxed) == crate::server::ROLE_MASTER {
        return Ok(());
    }
    let rules = &repl.rules;
    if repl.is_replica() {
        if rules.read_only.load(Ordering::Relaxed) {
            return Err(CmdError::Static(
                "READONLY You can't write against a read only replica.",
            ));
        }
        return Ok(());
    }
    let min = rules.min_replicas.load(Ordering::Relaxed);
    let max_lag = rules.max_lag_secs.load(Ordering::Relaxed);
    if min > 0 && max_lag > 0 && (repl.good_replicas(max_lag) as u64) < min {
        return Err(CmdError::Static(
            "NOREPLICAS Not enough good replicas to write.",
        ));
    }
    Ok(())
}

/// Takes the settings replication reads on every write (and the backlog's
/// size) from `config`: at start-up and after each CONFIG SET.
pub fn apply_config(server: &crate::server::Server, config: &crate::config::Config) {
    let repl = &server.replication;
    let rules = &repl.rules;
    rules
        .read_only
        .store(config.setting_yes("replica-read-only"), Ordering::Relaxed);
    rules.min_replicas.store(
        config.setting_u64("min-replicas-to-write"),
        Ordering::Relaxed,
    );
    rules.max_lag_secs.store(
        config.setting_u64("min-replicas-max-lag"),
        Ordering::Relaxed,
    );
    repl.backlog
        .set_limit(config.setting_u64("repl-backlog-size"));
}
