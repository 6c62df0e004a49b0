//! Replication, as Redis's replication.c: a primary feeds any number of
//! replicas, a replica follows one primary (a Firn, or a redis-server for a
//! live import) and may feed replicas of its own. See
//! docs/architecture.md, "Replication", for the protocol and its states.
//!
//! - `backlog.rs`: the stream's recent bytes, addressed by offsets.
//! - `primary.rs`: serving one replica: PSYNC's answer, the checkpoint of a
//!   full sync, then the stream from the backlog; its ACKs.
//! - `link.rs`: the replica's side: the handshake, the full sync (a
//!   checkpoint from a Firn, an RDB from a Redis), then applying the stream.
//! - `commands.rs`: REPLICAOF, ROLE, PSYNC, REPLCONF, WAIT, FAILOVER.

pub mod backlog;
pub mod commands;
pub mod link;
pub mod primary;

use bytes::Bytes;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

use backlog::Backlog;
use firn_storage::Replayed;

/// A primary's replication ids (Redis's PSYNC2): the current one, and the
/// one before it, valid up to `second_offset`, so that replicas of a
/// former primary continue after a failover without a full sync.
#[derive(Clone)]
pub struct Ids {
    pub replid: String,
    pub replid2: String,
    /// The last position under `replid2` (-1: none).
    pub second_offset: i64,
}

/// The replica's view of its link to the primary (INFO's master_* fields).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LinkState {
    /// Not connected; connecting next.
    Connect,
    Connecting,
    /// Handshake sent (PING, AUTH, REPLCONF, PSYNC).
    Handshake,
    /// Receiving the full sync's payload.
    Transfer,
    Connected,
}

impl LinkState {
    /// ROLE's word for it.
    pub fn role_word(self) -> &'static str {
        match self {
            LinkState::Connect => "connect",
            LinkState::Connecting => "connecting",
            LinkState::Handshake => "handshake",
            LinkState::Transfer => "sync",
            LinkState::Connected => "connected",
        }
    }
}

/// Whom a replica follows, and how it goes.
pub struct Following {
    pub host: String,
    pub port: u16,
    pub state: LinkState,
    /// Unix ms of the last bytes from the primary.
    pub last_io_ms: u64,
    /// Unix ms since when the link is down (0: never up yet).
    pub down_since_ms: u64,
    /// Full sync progress: (total bytes, bytes read).
    pub sync_bytes: (u64, u64),
    /// Ends the link task (REPLICAOF to elsewhere, NO ONE).
    pub stop: Arc<Notify>,
    pub stopped: Arc<AtomicBool>,
}

/// A connected replica, as the primary sees it.
pub struct ReplicaInfo {
    pub client_id: u64,
    pub ip: String,
    pub port: AtomicU64,
    /// 0 wait_bgsave, 1 send_bulk, 2 online.
    pub state: AtomicU8,
    /// The position acknowledged (REPLCONF ACK).
    pub ack: AtomicU64,
    /// Unix ms of the last ACK.
    pub ack_ms: AtomicU64,
    pub reader: Arc<backlog::Reader>,
}

pub const STATE_WAIT_BGSAVE: u8 = 0;
pub const STATE_SEND_BULK: u8 = 1;
pub const STATE_ONLINE: u8 = 2;

/// Everything replication shares.
pub struct Replication {
    pub backlog: Backlog,
    /// Whether the engine's replay sink feeds the backlog (from the first
    /// replica on, as Redis creates its backlog).
    pub active: AtomicBool,
    pub ids: Mutex<Ids>,
    /// `Some` while this server is a replica.
    pub following: Mutex<Option<Following>>,
    /// Cheap check of `following.is_some()` on the request path.
    pub is_replica: AtomicBool,
    pub replicas: Mutex<Vec<Arc<ReplicaInfo>>>,
    /// Woken by every ACK (WAIT).
    pub acked: Notify,
    /// The client id of the link applying the primary's stream (0: none).
    pub master_client: AtomicU64,
    /// Full syncs served, partial syncs accepted and refused (INFO stats).
    pub sync_full: AtomicU64,
    pub sync_partial_ok: AtomicU64,
    pub sync_partial_err: AtomicU64,
    /// FAILOVER's state word (INFO master_failover_state).
    pub failover_state: Mutex<&'static str>,
    /// Bumped when a link starts, so an old link task knows it is stale.
    pub link_generation: AtomicU64,
    /// Held by the link while it applies a part of the stream, and by a
    /// full sync served from a replica while it cuts its checkpoint, so
    /// that the cut falls between applied parts.
    pub apply_lock: tokio::sync::Mutex<()>,
}

impl Replication {
    pub fn new(replid: String, backlog_size: u64) -> Replication {
        Replication {
            backlog: Backlog::new(backlog_size),
            active: AtomicBool::new(false),
            ids: Mutex::new(Ids {
                replid,
                replid2: "0".repeat(40),
                second_offset: -1,
            }),
            following: Mutex::new(None),
            is_replica: AtomicBool::new(false),
            replicas: Mutex::new(Vec::new()),
            acked: Notify::new(),
            master_client: AtomicU64::new(0),
            sync_full: AtomicU64::new(0),
            sync_partial_ok: AtomicU64::new(0),
            sync_partial_err: AtomicU64::new(0),
            failover_state: Mutex::new("no-failover"),
            link_generation: AtomicU64::new(0),
            apply_lock: tokio::sync::Mutex::new(()),
        }
    }

    pub fn is_replica(&self) -> bool {
        self.is_replica.load(Ordering::Acquire)
    }

    pub fn replid(&self) -> String {
        self.ids.lock().replid.clone()
    }

    /// A new replication id, the old one kept as `replid2` up to the
    /// current offset (a replica promoted: its own replicas continue).
    pub fn shift_replid(&self) {
        let end = self.backlog.end();
        let mut ids = self.ids.lock();
        ids.replid2 = std::mem::replace(&mut ids.replid, random_id());
        ids.second_offset = end as i64;
    }

    /// Disconnects every replica this server feeds: its stream changed
    /// history (a full sync replaced the data) or id, and they must PSYNC
    /// again to learn which.
    pub fn drop_replicas(&self, server: &crate::server::Server) {
        let ids: Vec<u64> = self.replicas.lock().iter().map(|r| r.client_id).collect();
        let clients = server.clients.lock();
        for id in ids {
            if let Some(client) = clients.get(&id) {
                client.request_kill();
            }
        }
    }

    /// Replicas whose last ACK is at most `max_lag_secs` old.
    pub fn good_replicas(&self, max_lag_secs: u64) -> usize {
        let now = now_ms();
        self.replicas
            .lock()
            .iter()
            .filter(|r| {
                r.state.load(Ordering::Acquire) == STATE_ONLINE
                    && now.saturating_sub(r.ack_ms.load(Ordering::Acquire)) <= max_lag_secs * 1000
            })
            .count()
    }

    /// Replicas whose ACK has reached `pos`.
    pub fn acked_at_least(&self, pos: u64) -> usize {
        self.replicas
            .lock()
            .iter()
            .filter(|r| r.ack.load(Ordering::Acquire) >= pos)
            .count()
    }

    /// The engine's replay sink: committed batches, in commit order.
    /// While this server is a replica its own batches are not streamed:
    /// the link appends the primary's bytes as received.
    pub fn on_commit(&self, seq: u64, item: Replayed<'_>) {
        match item {
            Replayed::Record { record, .. } => {
                if self.is_replica() {
                    return;
                }
                let Some((&db, _)) = record.split_first() else {
                    return;
                };
                let commands = record.slice(1..);
                self.backlog.append_record(db, commands);
            }
            Replayed::Cut => self.backlog.mark_cut(seq),
        }
    }
}

/// A 40-hex-digit id, as Redis's replication ids.
pub fn random_id() -> String {
    crate::commands::debug::random_hex_id()
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
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
    if repl.is_replica() {
        if server.config().setting_yes("replica-read-only") {
            return Err(CmdError::Static(
                "READONLY You can't write against a read only replica.",
            ));
        }
        return Ok(());
    }
    let (min, max_lag) = {
        let c = server.config();
        (
            c.setting_u64("min-replicas-to-write"),
            c.setting_u64("min-replicas-max-lag"),
        )
    };
    if min > 0 && max_lag > 0 && (repl.good_replicas(max_lag) as u64) < min {
        return Err(CmdError::Static(
            "NOREPLICAS Not enough good replicas to write.",
        ));
    }
    Ok(())
}

/// At start-up: follows the `replicaof` of the configuration, if any, and
/// starts the cron (the backlog's size as configured; a PING into the
/// stream every `repl-ping-replica-period` while replicas are connected,
/// so that they can tell a silent primary from a dead one).
pub async fn start(server: &Arc<crate::server::Server>) {
    let (size, replica_of) = {
        let c = server.config();
        (c.setting_u64("repl-backlog-size"), c.setting("replicaof"))
    };
    server.replication.backlog.set_limit(size);
    let words: Vec<&str> = replica_of.split_whitespace().collect();
    if let [host, port] = words[..] {
        if let Ok(port) = port.parse::<u16>() {
            link::follow(server, host.to_string(), port).await;
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
            let (size, period) = {
                let c = server.config();
                (
                    c.setting_u64("repl-backlog-size"),
                    c.setting_u64("repl-ping-replica-period").max(1),
                )
            };
            let repl = &server.replication;
            repl.backlog.set_limit(size);
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
