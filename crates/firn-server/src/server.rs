//! Shared server state: configuration, the engine, the registry, the
//! cold-read pool, connected clients (and the line CLIENT LIST, CLIENT
//! INFO and the ACL log show of one), statistics and the slow log.

use bytes::Bytes;
use firn_resp::Protocol;
use firn_storage::Engine;
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{broadcast, watch, Notify};

use crate::coldpool::ColdReadPool;
use crate::config::Config;
use crate::lfu::LfuSettings;

pub use crate::reply_mode::ReplyMode;

/// Per-connection state that only the connection itself changes.
#[derive(Clone, Debug)]
pub struct Session {
    pub db: u8,
    pub protocol: Protocol,
    pub authenticated: bool,
    /// The user the connection runs as (acl/): refreshed before each
    /// command when any user changed (`acl::check::refresh`).
    pub user: Arc<crate::acl::rules::User>,
    /// The ACL generation `user` was taken at.
    pub acl_generation: u64,
    pub reply_mode: ReplyMode,
    /// MULTI/EXEC state (multi/transaction.rs).
    pub tx: crate::multi::state::TxState,
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
    /// Waiting in a blocking command (CLIENT LIST flag `b`).
    pub blocked: AtomicBool,
    /// A blocked stream reader's run after a wake-up: its keys written
    /// since the last run, in write order (empty for the first run).
    pub woken_keys: Mutex<Vec<Bytes>>,
    /// Pub/sub subscriptions and the mailbox of server-initiated messages.
    pub pubsub: crate::pubsub::state::ClientSubs,
    /// CLIENT TRACKING state.
    pub tracking: crate::tracking::table::ClientTracking,
    /// MULTI and WATCH state as CLIENT LIST shows it (multi/transaction.rs).
    pub tx: crate::multi::state::ClientTx,
    /// What a replica said of itself (REPLCONF) before PSYNC.
    pub repl_hello: Mutex<ReplHello>,
    /// `ROLE_REPLICA` for a replica this server feeds, `ROLE_MASTER` for
    /// the link applying this server's primary's stream (CLIENT LIST `S`,
    /// `M`; the master may write to a read-only replica).
    pub role_flag: AtomicU8,
    /// The last batch this client's commands wrote or waited on: WAIT
    /// counts replicas from the stream position after it.
    pub last_write: Mutex<Option<firn_storage::Ticket>>,
    /// The user it authenticated as (CLIENT LIST `user=`, CLIENT KILL
    /// USER, ACL DELUSER).
    pub user_name: Mutex<Bytes>,
    /// Close the connection once the reply of the command running now is
    /// sent (Redis's CLIENT_CLOSE_AFTER_COMMAND: ACL DELUSER or ACL LOAD of
    /// the caller's own user).
    pub close_after_reply: AtomicBool,
    /// Where its running commands stand in the order connections were
    /// read (arrival.rs).
    pub arrival: Mutex<crate::arrival::Arrival>,
}

pub const ROLE_NONE: u8 = 0;
pub const ROLE_REPLICA: u8 = 1;
pub const ROLE_MASTER: u8 = 2;

/// REPLCONF's facts about a replica.
#[derive(Clone, Debug, Default)]
pub struct ReplHello {
    /// `listening-port`.
    pub port: u64,
    /// `ip-address`.
    pub ip: Option<String>,
    /// `capa firn-checkpoint`: it loads a checkpoint in a full sync.
    pub firn_checkpoint: bool,
}

impl crate::pubsub::state::Subscriber for ClientInfo {
    fn id(&self) -> u64 {
        self.id
    }

    fn subs(&self) -> &crate::pubsub::state::ClientSubs {
        &self.pubsub
    }
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
            blocked: AtomicBool::new(false),
            woken_keys: Mutex::new(Vec::new()),
            pubsub: Default::default(),
            tracking: Default::default(),
            tx: Default::default(),
            repl_hello: Mutex::new(ReplHello::default()),
            role_flag: AtomicU8::new(ROLE_NONE),
            last_write: Mutex::new(None),
            user_name: Mutex::new(Bytes::from_static(b"default")),
            close_after_reply: AtomicBool::new(false),
            arrival: Mutex::new(Default::default()),
        }
    }

    /// Its command has its place in line: the stamp of the read it came in
    /// ends, and the connections read after it may go (arrival.rs). True
    /// when a command was waiting for it.
    pub fn end_arrival(&self) -> bool {
        let ticket = self.arrival.lock().ticket.take();
        ticket.is_some_and(crate::arrival::Ticket::end)
    }

    pub fn request_kill(&self) {
        self.killed.store(true, Ordering::Release);
        self.kill.notify_one();
    }
}

/// One CLIENT LIST/INFO line in Redis 7.0's field order. A connection that
/// used CLIENT SETINFO (Redis 7.2) also gets 7.2's trailing `lib-name=` and
/// `lib-ver=` fields.
pub fn client_line(client: &ClientInfo, now_ms: u64) -> String {
    let name = client.name.lock().clone().unwrap_or_default();
    let idle = now_ms.saturating_sub(client.last_interaction_ms.load(Ordering::Relaxed)) / 1000;
    let qbuf = client.query_buffer.load(Ordering::Relaxed);
    // Redis's letters in its order; "N" for none.
    let mut flags = String::new();
    match client.role_flag.load(Ordering::Relaxed) {
        ROLE_REPLICA => flags.push('S'),
        ROLE_MASTER => flags.push('M'),
        _ => {}
    }
    if client.monitor.load(Ordering::Relaxed) {
        flags.push('O');
    }
    if client.pubsub.subscribed() {
        flags.push('P');
    }
    if client.tx.multi() >= 0 {
        flags.push('x');
    }
    if client.blocked.load(Ordering::Relaxed) {
        flags.push('b');
    }
    let tracking = &client.tracking;
    let redirect = if tracking.is_on() {
        flags.push('t');
        let tracking_flags = tracking.flags();
        if tracking_flags & crate::tracking::table::BROKEN_REDIRECT != 0 {
            flags.push('R');
        }
        if tracking_flags & crate::tracking::table::BCAST != 0 {
            flags.push('B');
        }
        tracking.redirect() as i64
    } else {
        -1
    };
    if client.tx.watcher.is_dirty() {
        flags.push('d');
    }
    if flags.is_empty() {
        flags.push('N');
    }
    let (sub, psub, ssub) = client.pubsub.counts();
    // Unsent output: the output queue plus pub/sub messages not yet in it.
    // Redis's first 16 KB are its static buffer (`obl`), the rest its reply
    // list (`oll` entries, `omem` bytes).
    let unsent = client.output_bytes.load(Ordering::Relaxed) + client.pubsub.mailbox.queued_bytes();
    let obl = unsent.min(16384);
    let oll = if unsent > 16384 {
        client.output_segments.load(Ordering::Relaxed) + client.pubsub.mailbox.queued_len()
    } else {
        0
    };
    let lib_name = client.lib_name.lock().clone();
    let lib_ver = client.lib_ver.lock().clone();
    let lib = if lib_name.is_some() || lib_ver.is_some() {
        format!(
            " lib-name={} lib-ver={}",
            String::from_utf8_lossy(&lib_name.unwrap_or_default()),
            String::from_utf8_lossy(&lib_ver.unwrap_or_default())
        )
    } else {
        String::new()
    };
    format!(
        "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} multi={} qbuf={} qbuf-free={} argv-mem=0 multi-mem={} rbs=16384 rbp=16384 obl={} oll={} omem={} tot-mem={} events=r cmd={} user={} redir={} resp={}{}\n",
        client.id,
        client.addr,
        client.laddr,
        client.fd,
        String::from_utf8_lossy(&name),
        client.created.elapsed().as_secs(),
        idle,
        flags,
        client.db.load(Ordering::Relaxed),
        sub,
        psub,
        ssub,
        client.tx.multi(),
        qbuf,
        16384u64.saturating_sub(qbuf),
        client.tx.multi_mem(),
        obl,
        oll,
        unsent.saturating_sub(16384),
        16384 + qbuf + unsent.saturating_sub(16384) + client.tx.multi_mem(),
        client.last_cmd.lock(),
        String::from_utf8_lossy(&client.user_name.lock()),
        redirect,
        client.resp.load(Ordering::Relaxed),
        lib,
    )
}

#[derive(Default)]
pub struct ServerStats {
    pub connections_received: AtomicU64,
    pub rejected_connections: AtomicU64,
    pub commands_processed: AtomicU64,
    pub cold_commands: AtomicU64,
    /// Replies written in parts from a background thread (stream_reply.rs).
    pub streamed_replies: AtomicU64,
    pub net_input_bytes: AtomicU64,
    pub net_output_bytes: AtomicU64,
    pub keyspace_hits: AtomicU64,
    pub keyspace_misses: AtomicU64,
    pub expired_keys: AtomicU64,
    pub total_error_replies: AtomicU64,
    /// Error replies by prefix ("ERR", "WRONGTYPE"...), for INFO errorstats.
    pub error_counts: Mutex<BTreeMap<String, u64>>,
    /// Recent samples of the counters INFO turns into instantaneous rates.
    pub rate_samples: Mutex<crate::info::rates::RateSamples>,
    /// Calls, time and failures per command, for INFO commandstats.
    pub commands: CommandStats,
    /// Changes since the last successful SAVE/BGSAVE, counted as Redis
    /// counts `server.dirty` (INFO rdb_changes_since_last_save).
    pub dirty: AtomicU64,
    /// Replication stream bytes received from a primary and sent to
    /// replicas (INFO total_net_repl_input_bytes / _output_bytes).
    pub net_repl_input_bytes: AtomicU64,
    pub net_repl_output_bytes: AtomicU64,
}

/// One command's counters, as Redis keeps them in its `redisCommand`.
#[derive(Default)]
pub struct CommandCounters {
    /// Executions (failed ones included).
    pub calls: AtomicU64,
    pub usec: AtomicU64,
    /// Refused before running (wrong arity, NOAUTH, MISCONF...).
    pub rejected_calls: AtomicU64,
    /// Executions that replied with an error.
    pub failed_calls: AtomicU64,
    /// Executions that waited for the disk (ran on the cold-read pool).
    pub cold_calls: AtomicU64,
}

/// Counters for every command and subcommand of the command table, created
/// up front so that counting a call takes no lock.
pub struct CommandStats {
    by_name: HashMap<&'static str, CommandCounters>,
}

impl Default for CommandStats {
    fn default() -> Self {
        let mut by_name = HashMap::new();
        for spec in crate::command_table::COMMANDS {
            by_name.insert(spec.name, CommandCounters::default());
            for sub in spec.subcommands {
                by_name.insert(sub.name, CommandCounters::default());
            }
        }
        CommandStats { by_name }
    }
}

impl CommandStats {
    /// A command that ran for `usec` microseconds, replying an error or not.
    pub fn record_call(&self, name: &str, usec: u64, failed: bool) {
        if let Some(c) = self.by_name.get(name) {
            c.calls.fetch_add(1, Ordering::Relaxed);
            c.usec.fetch_add(usec, Ordering::Relaxed);
            if failed {
                c.failed_calls.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// A failure of a command that is counted as a call by itself (CLIENT
    /// UNBLOCK ... ERROR: Redis counts a command failed when an error reply
    /// goes out while it runs, to whichever client).
    pub fn record_failure(&self, name: &str) {
        if let Some(c) = self.by_name.get(name) {
            c.failed_calls.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A command refused before it ran.
    pub fn record_rejected(&self, name: &str) {
        if let Some(c) = self.by_name.get(name) {
            c.rejected_calls.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A command whose data was not in memory: it ran on the cold-read pool.
    pub fn record_cold(&self, name: &str) {
        if let Some(c) = self.by_name.get(name) {
            c.cold_calls.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Each command's executions that ran on the cold-read pool, for those
    /// that had any, by name.
    pub fn cold_snapshot(&self) -> Vec<(&'static str, u64)> {
        let mut rows: Vec<(&'static str, u64)> = self
            .by_name
            .iter()
            .map(|(name, c)| (*name, c.cold_calls.load(Ordering::Relaxed)))
            .filter(|(_, cold)| *cold > 0)
            .collect();
        rows.sort_unstable_by_key(|(name, _)| *name);
        rows
    }

    /// Every command with something to report, by name.
    pub fn snapshot(&self) -> Vec<(&'static str, [u64; 4])> {
        let mut rows: Vec<(&'static str, [u64; 4])> = self
            .by_name
            .iter()
            .map(|(name, c)| {
                let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
                (
                    *name,
                    [
                        get(&c.calls),
                        get(&c.usec),
                        get(&c.rejected_calls),
                        get(&c.failed_calls),
                    ],
                )
            })
            .filter(|(_, [calls, _, rejected, failed])| calls + rejected + failed > 0)
            .collect();
        rows.sort_unstable_by_key(|(name, _)| *name);
        rows
    }

    fn reset(&self) {
        for c in self.by_name.values() {
            for counter in [
                &c.calls,
                &c.usec,
                &c.rejected_calls,
                &c.failed_calls,
                &c.cold_calls,
            ] {
                counter.store(0, Ordering::Relaxed);
            }
        }
    }
}

/// Distinct error prefixes INFO errorstats tracks (Redis 7.2's limit).
const MAX_ERROR_PREFIXES: usize = 128;

impl ServerStats {
    /// Counts one error reply under its prefix: the text before the first
    /// space within 32 bytes, else "ERR" (Redis's afterErrorReply).
    pub fn count_error(&self, text: &[u8]) {
        self.total_error_replies.fetch_add(1, Ordering::Relaxed);
        let head = &text[..text.len().min(32)];
        let prefix = match head.iter().position(|&b| b == b' ') {
            Some(end) if end > 0 => String::from_utf8_lossy(&head[..end]).into_owned(),
            _ => "ERR".to_string(),
        };
        let mut counts = self.error_counts.lock();
        if let Some(count) = counts.get_mut(&prefix) {
            *count += 1;
        } else if counts.len() < MAX_ERROR_PREFIXES {
            counts.insert(prefix, 1);
        }
    }
}

/// Last access times of keys, for OBJECT IDLETIME, in Unix seconds (Redis's
/// LRU clock also ticks in seconds); or, under an LFU `maxmemory-policy`,
/// their access counters for OBJECT FREQ (lfu.rs), in the same entries, as
/// Redis keeps either in one object's `lru` field. A switch between the two
/// keeps every entry as it is, as Redis keeps each object's field: an
/// entry is marked with the kind that wrote it ([`LFU_ENTRY`]) and read in
/// the other kind's terms until the key is accessed again (a time is a
/// counter at LFU_INIT_VAL stamped then; a counter's minute is a time), so
/// switching back without an access gives back what was there (a key just
/// written reads idle 0, not idle since the start).
///
/// A key is held as a keyed 64-bit hash of `(db, key)`, not as a copy of
/// its name: every command touches its keys, and copying and comparing
/// names made the map 10 % of `GET -P 16`'s CPU (bench/profiles/). Two keys
/// whose hashes collide (a chance of about n²/2⁶⁵ for n keys held) share
/// one access time, so one of them may report the other's idle time.
///
/// Bounded in bytes by two generations of half its limit each (1/32 of the
/// memory budget, see `MemoryBudget::access_times_bytes`; counted in INFO
/// memory): when the current one is full it becomes the previous one and
/// the old previous one is dropped. The keys accessed most recently (with
/// the default 1 GiB budget, 16 MiB of entries: some 700,000 keys) are
/// therefore always found; a key not found is reported as idle since the
/// server started, as Redis reports keys loaded from an RDB file. (Before
/// it was bounded by the budget, its fixed 64 MiB was most of what a 64 MB
/// `maxmemory` server held beyond its budget.)
pub struct AccessTimes {
    shards: Vec<Mutex<AccessShard>>,
    /// Bytes both generations may hold together, over all shards (a share
    /// of the memory budget: `MemoryBudget::access_times_bytes`).
    limit: AtomicUsize,
    /// Randomly keyed, so that clients cannot choose colliding names.
    hasher: foldhash::quality::RandomState,
    /// The LFU settings packed as `1 << 63 | log_factor << 32 |
    /// decay_minutes` when an LFU policy is selected, 0 otherwise: one load
    /// per command tells how to count it.
    lfu: AtomicU64,
}

const LFU_ON: u64 = 1 << 63;

/// Marks an entry that holds an LFU counter (lfu.rs's packed 24 bits)
/// rather than a time in Unix seconds.
const LFU_ENTRY: u64 = 1 << 62;

/// What an entry means under the other policy (see [`AccessTimes`]): the
/// Unix time of its last access, or its LFU counter packed.
fn entry_time(entry: u64, unix_secs: u64) -> u64 {
    if entry & LFU_ENTRY == 0 {
        return entry;
    }
    let minutes_ago = crate::lfu::minutes_since((entry & !LFU_ENTRY) as u32, unix_secs);
    (unix_secs / 60).saturating_sub(minutes_ago) * 60
}

fn entry_counter(entry: u64) -> u32 {
    if entry & LFU_ENTRY == 0 {
        crate::lfu::initial(entry)
    } else {
        (entry & !LFU_ENTRY) as u32
    }
}

const ACCESS_SHARDS: usize = 16;
/// What an entry costs: its hash and time, and the table's control byte
/// and free slots at its load factor (an estimate).
const ACCESS_ENTRY_BYTES: usize = 24;

/// `(hash of (db, key), unix seconds)`.
#[derive(Default)]
struct Generation {
    entries: hashbrown::HashTable<(u64, u64)>,
}

impl Generation {
    fn find(&self, hash: u64) -> Option<u64> {
        self.entries.find(hash, |e| e.0 == hash).map(|e| e.1)
    }

    fn bytes(&self) -> usize {
        self.entries.len() * ACCESS_ENTRY_BYTES
    }
}

#[derive(Default)]
struct AccessShard {
    current: Generation,
    previous: Generation,
}

impl AccessTimes {
    /// Access times bounded to `limit_bytes` (both generations).
    pub fn new(limit_bytes: u64) -> AccessTimes {
        AccessTimes {
            shards: (0..ACCESS_SHARDS)
                .map(|_| Mutex::new(AccessShard::default()))
                .collect(),
            limit: AtomicUsize::new(limit_bytes as usize),
            hasher: Default::default(),
            lfu: AtomicU64::new(0),
        }
    }

    /// Counts accesses as Redis's LFU does (`Some`) or keeps access times
    /// (`None`), as `maxmemory-policy` says; the entries held stay.
    pub fn set_policy(&self, lfu: Option<LfuSettings>) {
        let packed = lfu.map_or(0, |s| {
            LFU_ON | (s.log_factor as u64) << 32 | s.decay_minutes as u64
        });
        self.lfu.store(packed, Ordering::Relaxed);
    }

    /// The LFU settings when an LFU policy is selected.
    pub fn lfu(&self) -> Option<LfuSettings> {
        let packed = self.lfu.load(Ordering::Relaxed);
        (packed & LFU_ON != 0).then_some(LfuSettings {
            log_factor: (packed >> 32) as u32 & 0x7fff_ffff,
            decay_minutes: packed as u32,
        })
    }

    /// A new bound (CONFIG SET maxmemory); generations adapt as they turn.
    pub fn set_limit(&self, limit_bytes: u64) {
        self.limit.store(limit_bytes as usize, Ordering::Relaxed);
    }

    /// Bytes held (the estimate the bound applies to), for INFO memory.
    pub fn bytes(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| {
                let s = s.lock();
                (s.current.bytes() + s.previous.bytes()) as u64
            })
            .sum()
    }

    /// The hash of `(db, key)` and its shard (bits the table does not use:
    /// it takes its slot from the low bits and its tag from the top 7).
    fn shard(&self, db: u8, key: &[u8]) -> (u64, &Mutex<AccessShard>) {
        use std::hash::BuildHasher;
        let hash = self.hasher.hash_one((db, key));
        (hash, &self.shards[(hash >> 40) as usize % ACCESS_SHARDS])
    }

    /// Records an access to `key` at `unix_secs`: its time, or under LFU
    /// one more access on its counter (a key not held yet starts at
    /// LFU_INIT_VAL, as Redis's new objects do: the access that creates a
    /// key does not count).
    pub fn touch(&self, db: u8, key: &[u8], unix_secs: u64) {
        let lfu = self.lfu();
        let next = |held: Option<u64>| match (lfu, held) {
            (None, _) => unix_secs,
            (Some(settings), Some(entry)) => {
                LFU_ENTRY | crate::lfu::accessed(entry_counter(entry), unix_secs, settings) as u64
            }
            (Some(_), None) => LFU_ENTRY | crate::lfu::initial(unix_secs) as u64,
        };
        // Two generations share the bound: the older one is dropped when
        // the current one fills its half.
        let generation = self.limit.load(Ordering::Relaxed) / 2 / ACCESS_SHARDS;
        let (hash, shard) = self.shard(db, key);
        let mut shard = shard.lock();
        if let Some(entry) = shard.current.entries.find_mut(hash, |e| e.0 == hash) {
            entry.1 = next(Some(entry.1));
            return;
        }
        // A counter carries over from the previous generation.
        let value = next(lfu.and_then(|_| shard.previous.find(hash)));
        if shard.current.bytes() + ACCESS_ENTRY_BYTES > generation {
            shard.previous = std::mem::take(&mut shard.current);
        }
        shard
            .current
            .entries
            .insert_unique(hash, (hash, value), |e| e.0);
    }

    /// Applies what a command did to its keys' access times (bookkeeping.rs).
    pub fn apply(&self, change: &AccessChange, unix_secs: u64) {
        for (db, key) in &change.keys {
            if change.forget {
                self.forget(*db, key);
            } else {
                self.touch(*db, key, unix_secs);
            }
        }
    }

    /// Forgets a key that no longer exists.
    pub fn forget(&self, db: u8, key: &Bytes) {
        let (hash, shard) = self.shard(db, key);
        let shard = &mut *shard.lock();
        for generation in [&mut shard.current, &mut shard.previous] {
            if let Ok(entry) = generation.entries.find_entry(hash, |e| e.0 == hash) {
                entry.remove();
            }
        }
    }

    /// Entries held, both generations.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                let s = s.lock();
                s.current.entries.len() + s.previous.entries.len()
            })
            .sum()
    }

    /// When `key` was last accessed, if it was within the tracked window
    /// (never under LFU: no times are kept then).
    pub fn last_access(&self, db: u8, key: &[u8], unix_secs: u64) -> Option<u64> {
        if self.lfu().is_some() {
            return None;
        }
        self.held(db, key).map(|entry| entry_time(entry, unix_secs))
    }

    /// OBJECT FREQ under LFU: `key`'s counter, decayed to `unix_secs`
    /// (not stored, as Redis's LFUDecrAndReturn); 0 for a key not held
    /// (not accessed since LFU was selected, or not for long), `None`
    /// when no LFU policy is selected.
    pub fn frequency(&self, db: u8, key: &[u8], unix_secs: u64) -> Option<u8> {
        let settings = self.lfu()?;
        Some(self.held(db, key).map_or(0, |entry| {
            crate::lfu::decayed(entry_counter(entry), unix_secs, settings)
        }))
    }

    fn held(&self, db: u8, key: &[u8]) -> Option<u64> {
        let (hash, shard) = self.shard(db, key);
        let shard = shard.lock();
        shard
            .current
            .find(hash)
            .or_else(|| shard.previous.find(hash))
    }
}

/// What one command did to its keys' access times: touched them, or
/// forgot them (they are gone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessChange {
    pub forget: bool,
    pub keys: Vec<(u8, Bytes)>,
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

pub struct Server {
    pub config: RwLock<Config>,
    pub engine: Engine,
    pub cold_pool: ColdReadPool,
    pub clients: Mutex<HashMap<u64, Arc<ClientInfo>>>,
    pub next_client_id: AtomicU64,
    pub connected: AtomicU32,
    pub stats: ServerStats,
    /// Per-command latency histograms and the latency monitor.
    pub latency: crate::latency::Latency,
    pub slowlog: Mutex<SlowLog>,
    /// Read-only commands' latency, answered from memory ([0]) and after
    /// waiting for the disk ([1]), for the metrics endpoint.
    pub read_latency: [crate::metrics::histogram::AtomicHistogram; 2],
    /// Commands that waited on the disk (coldlog.rs; SLOWLOG COLDGET).
    pub cold_log: crate::coldlog::ColdLog,
    pub started: Instant,
    pub run_id: String,
    /// Replication: its ids, backlog, replicas and link (replication/).
    pub replication: crate::replication::state::Replication,
    /// Whether the active expiry thread deletes due keys (DEBUG
    /// SET-ACTIVE-EXPIRE turns it off for tests that watch lazy expiry).
    pub active_expire: AtomicBool,
    /// DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call the commands Redis
    /// flags `noscript` (Redis's test suite calls DEBUG PROTOCOL so).
    pub scripts_may_call_anything: AtomicBool,
    pub shutdown: watch::Sender<bool>,
    pub last_save_unix: AtomicU64,
    pub bgsave_in_progress: AtomicBool,
    pub last_bgsave_ok: AtomicBool,
    pub monitor_feed: broadcast::Sender<Bytes>,
    pub pause: crate::pause::ClientPause,
    /// The order connections' commands were read in (arrival.rs).
    pub arrivals: Arc<crate::arrival::Arrivals>,
    pub scan_cursors: Mutex<crate::cursors::ScanCursors>,
    pub access_times: AccessTimes,
    /// Clients blocked on keys and their wake-ups (blocking/state.rs).
    pub blocking: Arc<crate::blocking::state::Blocking>,
    pub pubsub: crate::pubsub::state::PubSub<ClientInfo>,
    pub tracking: crate::tracking::table::Tracking<ClientInfo>,
    /// Lua scripts and functions (their thread and shared state).
    pub scripting: crate::scripting::thread::Scripting,
    /// ACL users and the ACL log.
    pub acl: crate::acl::state::Acl,
    /// The TLS configuration new connections use (tls/).
    pub tls: crate::tls::TlsContext,
    /// Long operations running (full sync, import, DEBUG RELOAD) and the
    /// last one that ended (the start-up's WAL replay, at first).
    pub progress: crate::progress::Progress,
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

    /// Adds an entry to the ACL log (at most `acllog-max-len` entries).
    pub fn acl_log(&self, entry: crate::acl::state::LogEntry) {
        let max_len = self.config().setting_u64("acllog-max-len");
        self.acl
            .log(entry, usize::try_from(max_len).unwrap_or(usize::MAX));
    }

    /// A new connection's session: database 0, RESP2, the default user
    /// (authenticated when it needs no password and is on).
    pub fn new_session(&self) -> Session {
        let acl_generation = self.acl.generation();
        let user = self.acl.default_user();
        Session {
            db: 0,
            protocol: Protocol::Resp2,
            authenticated: user.enabled && user.nopass,
            acl_generation,
            user,
            reply_mode: ReplyMode::On,
            tx: Default::default(),
        }
    }

    /// The session of the server's own clients (the primary's stream on a
    /// replica, an RDB import): authenticated, with no ACL user at all, as
    /// Redis's master client runs anything.
    pub fn internal_session(db: u8) -> Session {
        Session {
            db,
            protocol: Protocol::Resp2,
            authenticated: true,
            user: Arc::new(crate::acl::rules::User::internal()),
            acl_generation: u64::MAX,
            reply_mode: ReplyMode::On,
            tx: Default::default(),
        }
    }

    pub fn uptime_secs(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    /// CONFIG RESETSTAT: zero the counters INFO reports.
    pub fn reset_stats(&self) {
        self.latency.reset_histograms();
        let s = &self.stats;
        for counter in [
            &s.connections_received,
            &s.rejected_connections,
            &s.commands_processed,
            &s.cold_commands,
            &s.streamed_replies,
            &s.net_input_bytes,
            &s.net_output_bytes,
            &s.keyspace_hits,
            &s.keyspace_misses,
            &s.expired_keys,
            &s.total_error_replies,
        ] {
            counter.store(0, std::sync::atomic::Ordering::Relaxed);
        }
        s.error_counts.lock().clear();
        s.commands.reset();
    }

    pub fn request_shutdown(&self) {
        let _ = self.shutdown.send(true);
    }
}

/// Resolves once the server is shutting down.
pub async fn until_shutdown(rx: &mut watch::Receiver<bool>) {
    let _ = rx.wait_for(|s| *s).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_times_keep_recent_keys_within_their_byte_budget() {
        let limit = 4 << 20;
        let times = AccessTimes::new(limit as u64);
        let key = |i: usize| Bytes::from(format!("key:{i:08}"));
        let per_generation = limit / 2 / ACCESS_ENTRY_BYTES;
        let total = per_generation * 3;
        for i in 0..total {
            times.touch(0, &key(i), i as u64);
        }
        // Two generations at most, and the latest keys are all there.
        assert!(times.len() <= 2 * per_generation + ACCESS_SHARDS);
        assert!(times.bytes() <= limit as u64);
        let now = total as u64;
        for i in total - per_generation / 2..total {
            assert_eq!(times.last_access(0, &key(i), now), Some(i as u64));
        }
        assert_eq!(times.last_access(0, &key(0), now), None);
        assert_eq!(times.last_access(1, &key(total - 1), now), None);
        times.forget(0, &key(total - 1));
        assert_eq!(times.last_access(0, &key(total - 1), now), None);
    }

    /// Redis keeps each object's `lru` field across a policy switch: a key
    /// written just before a switch to LFU and back reads idle 0, and one
    /// counted under LFU keeps its counter through a spell of LRU.
    #[test]
    fn access_entries_survive_a_policy_switch() {
        let times = AccessTimes::new(1 << 20);
        let lfu = LfuSettings {
            log_factor: 0,
            decay_minutes: 1,
        };
        let t0 = 1_700_000_000;
        times.touch(0, b"k", t0);
        times.set_policy(Some(lfu));
        // A time reads as a new key's counter, decayed from then.
        assert_eq!(times.frequency(0, b"k", t0), Some(crate::lfu::LFU_INIT_VAL));
        assert_eq!(
            times.frequency(0, b"k", t0 + 120),
            Some(crate::lfu::LFU_INIT_VAL - 2)
        );
        times.set_policy(None);
        assert_eq!(times.last_access(0, b"k", t0 + 1), Some(t0));
        // Counted under LFU, then read under LRU: its minute, then back.
        times.set_policy(Some(lfu));
        for _ in 0..3 {
            times.touch(0, b"k", t0 + 61);
        }
        assert_eq!(
            times.frequency(0, b"k", t0 + 61),
            Some(crate::lfu::LFU_INIT_VAL + 2)
        );
        times.set_policy(None);
        let at = times.last_access(0, b"k", t0 + 70).unwrap();
        assert_eq!(at, (t0 + 61) / 60 * 60);
        times.set_policy(Some(lfu));
        assert_eq!(
            times.frequency(0, b"k", t0 + 61),
            Some(crate::lfu::LFU_INIT_VAL + 2)
        );
    }

    #[test]
    fn client_line_has_redis_fields_then_lib_fields_once_set() {
        let client = ClientInfo::new(9, "127.0.0.1:1000".into(), "127.0.0.1:6379".into(), 5);
        let fields = |line: &str| -> Vec<String> {
            line.trim_end()
                .split(' ')
                .map(|f| f.split('=').next().unwrap_or_default().to_string())
                .collect()
        };
        let line = client_line(&client, firn_storage::now_ms());
        assert!(line.ends_with('\n'));
        assert_eq!(
            fields(&line).join(" "),
            "id addr laddr fd name age idle flags db sub psub ssub multi qbuf qbuf-free \
             argv-mem multi-mem rbs rbp obl oll omem tot-mem events cmd user redir resp"
        );
        *client.lib_name.lock() = Some(Bytes::from_static(b"redis-py"));
        let line = client_line(&client, firn_storage::now_ms());
        assert!(
            line.ends_with(" resp=2 lib-name=redis-py lib-ver=\n"),
            "{line}"
        );
    }
}
