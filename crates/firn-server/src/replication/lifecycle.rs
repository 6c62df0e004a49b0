//! Replication at the server's start and clean shutdown, as Redis's
//! replicationCron and the replication info an RDB keeps: a replica's
//! place in its primary's stream is recorded at a clean shutdown and taken
//! back at start-up; then the `replicaof` of the configuration is followed
//! (link.rs) and the cron starts. Called from startup.rs only: it sits
//! above the link, which runs commands through the pipeline.

use bytes::Bytes;
use std::sync::Arc;

use crate::server::Server;

/// Removes what a sync killed half way left in `dir`: a primary's
/// checkpoints for replicas (`repl-sync-<client>`: their hard links would
/// keep obsolete SST files on disk for ever) and a replica's incoming one.
fn remove_leftovers(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("repl-sync-") || name == "repl-incoming" {
            if let Err(e) = std::fs::remove_dir_all(entry.path()) {
                tracing::warn!(path = %entry.path().display(), error = %e, "cannot remove a sync's leftovers");
            }
        }
    }
}

/// The server record of a replica's place in its primary's stream, kept
/// across a clean restart: `<replid> <offset> <db or -1>`.
const POSITION_RECORD: &[u8] = b"repl:position";

/// At a clean shutdown of a replica: records its primary's replication id
/// and the offset it applied, so that after the restart it continues with
/// a partial sync (Redis keeps the same in its RDB). The apply lock is
/// taken and never released: no part is applied after the offset is read,
/// so the data on disk is exactly the stream up to it. A primary records
/// nothing (its clients could still write after the record), nor does a
/// replica killed with -9: both sync fully after a restart.
pub async fn save_position(server: &Arc<Server>) {
    let repl = &server.replication;
    if !repl.is_replica() {
        return;
    }
    // A full sync holds the lock while it loads: then the data is not a
    // point of the stream, and nothing is recorded.
    let wait = std::time::Duration::from_secs(2);
    let Ok(applying) = tokio::time::timeout(wait, repl.apply_lock.lock()).await else {
        return;
    };
    std::mem::forget(applying);
    let db = repl
        .backlog
        .selected_db()
        .map_or("-1".to_string(), |d| d.to_string());
    let record = format!("{} {} {db}", repl.replid(), repl.backlog.end());
    let mut txn = server.engine.txn(firn_storage::ReadMode::MemoryOnly);
    txn.put_server_record(POSITION_RECORD, Bytes::from(record));
    match txn.commit() {
        Ok(tickets) => {
            for t in tickets {
                let _ = t.wait().await;
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot record the replication offset"),
    }
}

/// At start-up: takes (and removes) the position a clean shutdown
/// recorded. A replica continues from it; a server started as a primary
/// begins a history of its own, as Redis does.
async fn restore_position(server: &Arc<Server>, following: bool) {
    let records = match server.engine.server_records(POSITION_RECORD) {
        Ok(records) => records,
        Err(_) => return,
    };
    let Some((_, value)) = records.into_iter().next() else {
        return;
    };
    let text = String::from_utf8_lossy(&value).into_owned();
    let words: Vec<&str> = text.split_whitespace().collect();
    if let ([replid, offset, db], true) = (&words[..], following) {
        if let Ok(offset) = offset.parse::<u64>() {
            let repl = &server.replication;
            repl.ids.lock().replid = replid.to_string();
            repl.backlog.reset(offset, db.parse::<u8>().ok());
            tracing::info!(
                offset,
                "continuing from the replication offset recorded at shutdown"
            );
        }
    }
    // Removed durably before anything is applied: after a crash from here
    // on, the offset on record would no longer match the data.
    let mut txn = server.engine.txn(firn_storage::ReadMode::MemoryOnly);
    txn.delete_server_record(POSITION_RECORD);
    if let Ok(tickets) = txn.commit() {
        for t in tickets {
            let _ = t.wait().await;
        }
    }
}

/// At start-up: follows the `replicaof` of the configuration, if any, and
/// starts the cron (the backlog's size as configured; a PING into the
/// stream every `repl-ping-replica-period` while replicas are connected,
/// so that they can tell a silent primary from a dead one).
pub async fn start(server: &Arc<Server>) {
    let (replica_of, dir) = {
        let c = server.config();
        super::apply_config(server, &c);
        (c.setting("replicaof"), c.dir.clone())
    };
    remove_leftovers(&dir);
    let words: Vec<&str> = replica_of.split_whitespace().collect();
    restore_position(server, words.len() == 2).await;
    if let [host, port] = words[..] {
        if let Ok(port) = port.parse::<u16>() {
            super::link::follow(server, host.to_string(), port).await;
        }
    }
    let weak = Arc::downgrade(server);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
        let mut since_ping = 0u64;
        loop {
            tick.tick().await;
            let Some(server) = weak.upgrade() else {
                return;
            };
            let period = server
                .config()
                .setting_u64("repl-ping-replica-period")
                .max(1);
            let repl = &server.replication;
            since_ping += 1;
            if since_ping >= period {
                since_ping = 0;
                if !repl.is_replica() && !repl.replicas.lock().is_empty() {
                    repl.backlog.append_raw(
                        Bytes::from_static(b"*1\r\n$4\r\nPING\r\n"),
                        repl.backlog.selected_db(),
                    );
                }
            }
        }
    });
}
