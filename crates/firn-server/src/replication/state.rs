//! Replication's shared state: ids, the backlog, the replicas fed, the
//! link followed. It uses nothing of the server (server.rs holds it), so
//! the subsystem's modules depend on the server and not the reverse.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

use super::backlog::Backlog;
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
    pub reader: Arc<super::backlog::Reader>,
}

pub const STATE_WAIT_BGSAVE: u8 = 0;
pub const STATE_SEND_BULK: u8 = 1;
pub const STATE_ONLINE: u8 = 2;

/// The settings a write's admission reads, parsed once per CONFIG SET
/// (looking options up by name cost every write a scan and a string).
#[derive(Default)]
pub struct WriteRules {
    pub read_only: AtomicBool,
    pub min_replicas: AtomicU64,
    pub max_lag_secs: AtomicU64,
}

/// Everything replication shares.
pub struct Replication {
    pub rules: WriteRules,
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
            rules: WriteRules {
                read_only: AtomicBool::new(true),
                min_replicas: AtomicU64::new(0),
                max_lag_secs: AtomicU64::new(10),
            },
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
    use rand::Rng;
    let mut rng = rand::rng();
    (0..40)
        .map(|_| format!("{:x}", rng.random_range(0..16u8)))
        .collect()
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// What PSYNC asked for (SYNC asks for nothing: `?` and -1).
pub struct Psync {
    pub replid: String,
    /// The first byte wanted, as Redis numbers them (position + 1).
    pub offset: i64,
}
