//! Shared server state: configuration, the engine, the registry, the
//! cold-read pool, connected clients, statistics and the slow log.

use bytes::Bytes;
use firn_resp::Protocol;
use firn_storage::Engine;
use parking_lot::{Mutex, RwLock};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{broadcast, watch, Notify};

use crate::coldpool::ColdReadPool;
use crate::commands::Registry;
use crate::config::Config;

/// Per-connection state that only the connection itself changes.
#[derive(Clone, Debug)]
pub struct Session {
    pub db: u8,
    pub protocol: Protocol,
    pub authenticated: bool,
    pub reply_mode: ReplyMode,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyMode {
    On,
    Off,
    /// Skip the reply of the next command only.
    SkipNext,
    /// Skipping the reply of the current command.
    Skipping,
}

/// What CLIENT LIST/INFO/KILL see of a connection.
pub struct ClientInfo {
    pub id: u64,
    pub addr: String,
    pub laddr: String,
    pub fd: i32,
    pub created: Instant,
    pub last_interaction_ms: AtomicU64,
    pub db: AtomicU8,
    pub resp: AtomicU8,
    pub name: Mutex<Option<Bytes>>,
    pub lib_name: Mutex<Option<Bytes>>,
    pub lib_ver: Mutex<Option<Bytes>>,
    pub last_cmd: Mutex<&'static str>,
    pub query_buffer: AtomicU64,
    /// Unsent reply bytes (CLIENT LIST `omem`).
    pub output_bytes: AtomicU64,
    /// Unsent reply segments (CLIENT LIST `oll`).
    pub output_segments: AtomicU64,
    pub monitor: AtomicBool,
    pub no_evict: AtomicBool,
    pub no_touch: AtomicBool,
    pub killed: AtomicBool,
    pub kill: Notify,
}

impl ClientInfo {
    pub fn new(id: u64, addr: String, laddr: String, fd: i32) -> Self {
        ClientInfo {
            id,
            addr,
            laddr,
            fd,
            created: Instant::now(),
            last_interaction_ms: AtomicU64::new(firn_storage::now_ms()),
            db: AtomicU8::new(0),
            resp: AtomicU8::new(2),
            name: Mutex::new(None),
            lib_name: Mutex::new(None),
            lib_ver: Mutex::new(None),
            last_cmd: Mutex::new("NULL"),
            query_buffer: AtomicU64::new(0),
            output_bytes: AtomicU64::new(0),
            output_segments: AtomicU64::new(0),
            monitor: AtomicBool::new(false),
            no_evict: AtomicBool::new(false),
            no_touch: AtomicBool::new(false),
            killed: AtomicBool::new(false),
            kill: Notify::new(),
        }
    }

    pub fn request_kill(&self) {
        self.killed.store(true, Ordering::Release);
        self.kill.notify_one();
    }
}

#[derive(Default)]
pub struct ServerStats {
    pub connections_received: AtomicU64,
    pub rejected_connections: AtomicU64,
    pub commands_processed: AtomicU64,
    pub cold_commands: AtomicU64,
    pub net_input_bytes: AtomicU64,
    pub net_output_bytes: AtomicU64,
    pub keyspace_hits: AtomicU64,
    pub keyspace_misses: AtomicU64,
    pub expired_keys: AtomicU64,
    pub total_error_replies: AtomicU64,
}

pub struct SlowLogEntry {
    pub id: u64,
    pub unix_secs: u64,
    pub micros: u64,
    pub args: Vec<Bytes>,
    pub addr: String,
    pub name: Bytes,
}

#[derive(Default)]
pub struct SlowLog {
    pub next_id: u64,
    pub entries: VecDeque<SlowLogEntry>,
}

/// CLIENT PAUSE state.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pause {
    pub until_ms: u64,
    pub all: bool,
}

pub struct Server {
    pub config: RwLock<Config>,
    pub engine: Engine,
    pub registry: Registry,
    pub cold_pool: ColdReadPool,
    pub clients: Mutex<HashMap<u64, Arc<ClientInfo>>>,
    pub next_client_id: AtomicU64,
    pub connected: AtomicU32,
    pub stats: ServerStats,
    pub slowlog: Mutex<SlowLog>,
    pub started: Instant,
    pub run_id: String,
    pub committed: watch::Receiver<u64>,
    pub shutdown: watch::Sender<bool>,
    pub last_save_unix: AtomicU64,
    pub bgsave_in_progress: AtomicBool,
    pub last_bgsave_ok: AtomicBool,
    pub monitor_feed: broadcast::Sender<Bytes>,
    pub pause: Mutex<Pause>,
    pub pause_changed: Notify,
    pub scan_cursors: Mutex<crate::cursors::ScanCursors>,
}

impl Server {
    pub fn config(&self) -> parking_lot::RwLockReadGuard<'_, Config> {
        self.config.read()
    }

    pub fn register_client(&self, info: Arc<ClientInfo>) {
        self.clients.lock().insert(info.id, info);
    }

    pub fn unregister_client(&self, id: u64) {
        self.clients.lock().remove(&id);
    }

    pub fn uptime_secs(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    /// Records a command in the slow log if it ran long enough.
    pub fn slowlog_record(&self, args: &[Bytes], micros: u64, client: &ClientInfo) {
        let (threshold, max_len) = {
            let c = self.config.read();
            (c.slowlog_log_slower_than, c.slowlog_max_len)
        };
        if threshold < 0 || (micros as i64) < threshold {
            return;
        }
        // Redis keeps at most 32 arguments, each cut to 128 bytes.
        let mut kept: Vec<Bytes> = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            if i == 31 && args.len() > 32 {
                kept.push(Bytes::from(format!(
                    "... ({} more arguments)",
                    args.len() - 31
                )));
                break;
            }
            if arg.len() > 128 {
                let mut cut = arg[..128].to_vec();
                cut.extend_from_slice(format!("... ({} more bytes)", arg.len() - 128).as_bytes());
                kept.push(Bytes::from(cut));
            } else {
                kept.push(arg.clone());
            }
        }
        let mut log = self.slowlog.lock();
        let id = log.next_id;
        log.next_id += 1;
        log.entries.push_front(SlowLogEntry {
            id,
            unix_secs: firn_storage::now_ms() / 1000,
            micros,
            args: kept,
            addr: client.addr.clone(),
            name: client.name.lock().clone().unwrap_or_default(),
        });
        while log.entries.len() as u64 > max_len {
            log.entries.pop_back();
        }
    }

    /// CONFIG RESETSTAT: zero the counters INFO reports.
    pub fn reset_stats(&self) {
        let s = &self.stats;
        for counter in [
            &s.connections_received,
            &s.rejected_connections,
            &s.commands_processed,
            &s.cold_commands,
            &s.net_input_bytes,
            &s.net_output_bytes,
            &s.keyspace_hits,
            &s.keyspace_misses,
            &s.expired_keys,
            &s.total_error_replies,
        ] {
            counter.store(0, std::sync::atomic::Ordering::Relaxed);
        }
    }

    pub fn request_shutdown(&self) {
        let _ = self.shutdown.send(true);
    }
}

/// Resolves once the server is shutting down.
pub async fn until_shutdown(rx: &mut watch::Receiver<bool>) {
    let _ = rx.wait_for(|s| *s).await;
}
