//! Configuration: one definition per option (name, default, whether CONFIG
//! SET may change it, how to parse and print it). Parsing of the config file
//! and of `--name value` flags, CONFIG GET/SET/REWRITE and
//! docs/configuration.md all come from `OPTIONS`.
//!
//! Syntax follows redis.conf: one `name arg...` per line, `#` comments,
//! double/single-quoted arguments; the command line is
//! `firn [config-file] [--name value ...]`, as redis-server accepts it.

use std::path::PathBuf;

/// `appendfsync` is the storage engine's WAL sync policy, one type.
pub use firn_storage::SyncPolicy as AppendFsync;

/// One class of `client-output-buffer-limit`: a client is closed when its
/// unsent output passes `hard_bytes`, or stays above `soft_bytes` for more
/// than `soft_seconds` (0 = no such limit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputLimit {
    pub hard_bytes: u64,
    pub soft_bytes: u64,
    pub soft_seconds: u64,
}

/// `client-output-buffer-limit`, per client class, as in Redis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputLimits {
    pub normal: OutputLimit,
    /// Accepted and printed for compatibility: Firn has no replicas yet.
    pub replica: OutputLimit,
    /// Clients with pub/sub subscriptions (`pubsub/state.rs`).
    pub pubsub: OutputLimit,
}

impl Default for OutputLimits {
    /// Redis's defaults.
    fn default() -> Self {
        OutputLimits {
            normal: OutputLimit::default(),
            replica: OutputLimit {
                hard_bytes: 256 << 20,
                soft_bytes: 64 << 20,
                soft_seconds: 60,
            },
            pubsub: OutputLimit {
                hard_bytes: 32 << 20,
                soft_bytes: 8 << 20,
                soft_seconds: 60,
            },
        }
    }
}

impl OutputLimits {
    /// Redis's CONFIG GET form: `normal 0 0 0 slave 268435456 67108864 60
    /// pubsub 33554432 8388608 60`.
    fn render(&self) -> String {
        [
            ("normal", self.normal),
            ("slave", self.replica),
            ("pubsub", self.pubsub),
        ]
        .iter()
        .map(|(class, l)| {
            format!(
                "{class} {} {} {}",
                l.hard_bytes, l.soft_bytes, l.soft_seconds
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
    }

    /// Applies `<class> <hard> <soft> <soft seconds>` groups (all or
    /// nothing), with Redis's error texts.
    fn apply(&mut self, words: &[&str]) -> Result<(), String> {
        if !words.len().is_multiple_of(4) {
            return Err("Wrong number of arguments in buffer limit configuration.".into());
        }
        let mut updated = *self;
        for group in words.chunks(4) {
            let class = match group[0].to_ascii_lowercase().as_str() {
                "normal" => &mut updated.normal,
                "replica" | "slave" => &mut updated.replica,
                "pubsub" => &mut updated.pubsub,
                _ => {
                    return Err(
                        "Invalid client class specified in buffer limit configuration.".into(),
                    )
                }
            };
            let bad =
                || "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
            let hard_bytes = parse_memory(group[1]).ok_or_else(bad)?;
            let soft_bytes = parse_memory(group[2]).ok_or_else(bad)?;
            let soft_seconds = group[3]
                .parse::<u64>()
                .ok()
                .filter(|s| *s <= i64::MAX as u64)
                .ok_or_else(bad)?;
            *class = OutputLimit {
                hard_bytes,
                soft_bytes,
                soft_seconds,
            };
        }
        *self = updated;
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Config {
    pub port: u16,
    pub bind: Vec<String>,
    pub protected_mode: bool,
    pub dir: PathBuf,
    pub databases: usize,
    pub requirepass: Option<String>,
    pub maxclients: usize,
    pub timeout_secs: u64,
    /// Keys the client-side caching table remembers (0 = no bound).
    pub tracking_table_max_keys: u64,
    pub tcp_backlog: u32,
    pub tcp_keepalive_secs: u64,
    pub appendfsync: AppendFsync,
    pub loglevel: String,
    pub logfile: String,
    pub pidfile: String,
    pub io_threads: usize,
    pub writer_threads: usize,
    pub io_queue_max: usize,
    pub maxmemory: u64,
    pub proto_max_bulk_len: u64,
    pub client_query_buffer_limit: u64,
    pub client_output_buffer_limit: OutputLimits,
    pub slowlog_log_slower_than: i64,
    pub slowlog_max_len: u64,
    /// Testing aid: every memory-only read of committed data answers
    /// "not in memory", so every command takes the cold path.
    pub debug_cold_reads: bool,
    /// `busy-reply-threshold` (alias `lua-time-limit`): after this long a
    /// running script makes other clients get BUSY.
    pub busy_reply_threshold_ms: u64,
    /// Accepted and reported, never applied: Firn evicts no data.
    pub maxmemory_policy: &'static str,
    pub maxmemory_samples: u32,
    /// `notify-keyspace-events` as a `firn_storage::notify_class` mask.
    pub notify_keyspace_events: u32,
    /// Accepted and reported (clamped to 1..500 as Redis does); Firn has no
    /// periodic cron whose frequency it would set.
    pub hz: u32,
    pub replica_read_only: bool,
    pub stop_writes_on_bgsave_error: bool,
    /// Largest sparse HyperLogLog string before PFADD/PFMERGE convert it to
    /// the dense encoding.
    pub hll_sparse_max_bytes: u64,
    /// The file the config was read from (CONFIG REWRITE writes it back).
    pub config_file: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            port: 6379,
            bind: vec!["127.0.0.1".into()],
            protected_mode: true,
            dir: PathBuf::from("./firn-data"),
            databases: 16,
            requirepass: None,
            maxclients: 10000,
            timeout_secs: 0,
            tracking_table_max_keys: 1_000_000,
            tcp_backlog: 511,
            tcp_keepalive_secs: 300,
            appendfsync: AppendFsync::EverySec,
            loglevel: "notice".into(),
            logfile: String::new(),
            pidfile: String::new(),
            io_threads: 4,
            writer_threads: 1,
            io_queue_max: 1024,
            maxmemory: 0,
            proto_max_bulk_len: 512 << 20,
            client_query_buffer_limit: 1 << 30,
            client_output_buffer_limit: OutputLimits::default(),
            slowlog_log_slower_than: 10_000,
            slowlog_max_len: 128,
            debug_cold_reads: false,
            busy_reply_threshold_ms: 5000,
            maxmemory_policy: "noeviction",
            maxmemory_samples: 5,
            notify_keyspace_events: 0,
            hz: 10,
            replica_read_only: true,
            stop_writes_on_bgsave_error: true,
            hll_sparse_max_bytes: 3000,
            config_file: None,
        }
    }
}

type Getter = fn(&Config) -> String;
type Setter = fn(&mut Config, &[String]) -> Result<(), String>;

pub struct OptionDef {
    pub name: &'static str,
    /// May CONFIG SET change it while running?
    pub mutable: bool,
    pub doc: &'static str,
    pub get: Getter,
    pub set: Setter,
}

fn one(args: &[String]) -> Result<&str, String> {
    match args {
        [v] => Ok(v.as_str()),
        _ => Err("wrong number of arguments".into()),
    }
}

fn yes_no(args: &[String]) -> Result<bool, String> {
    match one(args)?.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err("argument must be 'yes' or 'no'".into()),
    }
}

fn int_in(args: &[String], min: i64, max: i64) -> Result<i64, String> {
    let v: i64 = one(args)?
        .parse()
        .map_err(|_| "argument couldn't be parsed into an integer".to_string())?;
    if v < min || v > max {
        return Err(format!(
            "argument must be between {min} and {max} inclusive"
        ));
    }
    Ok(v)
}

/// Bytes of submitted but uncommitted writes (the overlay and the writer's
/// queue) beyond which connections stop reading requests until the writer
/// catches up: half the budget's reserve (1/16 of the budget), at least
/// 16 MiB.
pub fn pending_writes_limit(maxmemory: u64) -> u64 {
    (MemoryBudget::of(maxmemory).reserve_bytes / 2).max(16 << 20)
}

/// How `maxmemory` is shared out: every cache gets a fixed share, and a
/// reserve is kept for what is not a cache. The shares add up to the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryBudget {
    /// `maxmemory`; 1 GiB when it is 0, and at least 32 MiB.
    pub total_bytes: u64,
    /// 1/8, given to no cache: client buffers, the pending-write overlay,
    /// flush and compaction buffers, SST readers, allocator slack.
    pub reserve_bytes: u64,
    /// 1/4: Firn's hot tier of meta records (small strings whole) and
    /// decoded small collections.
    pub hot_cache_bytes: u64,
    /// 5/8: RocksDB's block cache. It holds data blocks, index and filter
    /// blocks, and the memtables, which are charged to it.
    pub block_cache_bytes: u64,
    /// The part of `block_cache_bytes` memtables may take before RocksDB
    /// flushes: 1/8 of the budget, between 4 MiB and 512 MiB.
    pub memtable_bytes: u64,
}

/// The budget when `maxmemory` is 0.
const DEFAULT_BUDGET_BYTES: u64 = 1 << 30;
/// Below this the caches are too small to work; smaller values are raised.
const MIN_BUDGET_BYTES: u64 = 32 << 20;

impl MemoryBudget {
    pub fn of(maxmemory: u64) -> MemoryBudget {
        let total = if maxmemory == 0 {
            DEFAULT_BUDGET_BYTES
        } else {
            maxmemory.max(MIN_BUDGET_BYTES)
        };
        let reserve = total / 8;
        let hot_cache = total / 4;
        MemoryBudget {
            total_bytes: total,
            reserve_bytes: reserve,
            hot_cache_bytes: hot_cache,
            block_cache_bytes: total - reserve - hot_cache,
            memtable_bytes: (total / 8).clamp(4 << 20, 512 << 20),
        }
    }

    /// OBJECT IDLETIME's access times (server.rs `AccessTimes`), taken
    /// from the reserve: 1/32 of the budget.
    pub fn access_times_bytes(&self) -> u64 {
        self.total_bytes / 32
    }

    /// Gives the caches of a running engine their shares (CONFIG SET).
    pub fn apply(&self, engine: &firn_storage::Engine) {
        engine.set_cache_budget(
            self.block_cache_bytes as usize,
            self.memtable_bytes as usize,
            self.hot_cache_bytes,
        );
    }
}

/// Redis's memtoull: a number with an optional k/kb/m/mb/g/gb suffix
/// (k = 1000, kb = 1024, ...).
pub fn parse_memory(text: &str) -> Option<u64> {
    let lower = text.to_ascii_lowercase();
    let split = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (digits, unit) = lower.split_at(split);
    let n: u64 = digits.parse().ok()?;
    let mult: u64 = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    n.checked_mul(mult)
}

fn memory(args: &[String]) -> Result<u64, String> {
    parse_memory(one(args)?).ok_or_else(|| "argument must be a memory value".to_string())
}

/// A memory value in `0..=max`, with Redis's error texts.
fn memory_in(args: &[String], max: u64) -> Result<u64, String> {
    let text = one(args)?;
    let out_of_range = || format!("argument must be between 0 and {max} inclusive");
    match parse_memory(text) {
        Some(v) if v <= max => Ok(v),
        Some(_) => Err(out_of_range()),
        // A plain number too big for 64 bits is out of range, not malformed.
        None if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => Err(out_of_range()),
        None => Err("argument must be a memory value".into()),
    }
}

fn yn(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

pub static OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "port",
        mutable: false,
        doc: "TCP port to listen on.",
        get: |c| c.port.to_string(),
        set: |c, a| {
            c.port = int_in(a, 0, 65535)? as u16;
            Ok(())
        },
    },
    OptionDef {
        name: "bind",
        mutable: false,
        doc: "Addresses to listen on, space separated.",
        get: |c| c.bind.join(" "),
        set: |c, a| {
            let addrs: Vec<String> = a.iter().flat_map(|s| s.split_whitespace().map(String::from)).collect();
            if addrs.is_empty() {
                return Err("wrong number of arguments".into());
            }
            c.bind = addrs;
            Ok(())
        },
    },
    OptionDef {
        name: "protected-mode",
        mutable: true,
        doc: "Refuse clients from non-loopback addresses when no password is set.",
        get: |c| yn(c.protected_mode),
        set: |c, a| {
            c.protected_mode = yes_no(a)?;
            Ok(())
        },
    },
    OptionDef {
        name: "dir",
        mutable: false,
        doc: "Data directory: the RocksDB files (`db/`) and checkpoints (`checkpoint/`).",
        get: |c| c.dir.display().to_string(),
        set: |c, a| {
            c.dir = PathBuf::from(one(a)?);
            Ok(())
        },
    },
    OptionDef {
        name: "databases",
        mutable: false,
        doc: "Number of logical databases (SELECT 0..n-1); at most 256.",
        get: |c| c.databases.to_string(),
        set: |c, a| {
            c.databases = int_in(a, 1, 256)? as usize;
            Ok(())
        },
    },
    OptionDef {
        name: "requirepass",
        mutable: true,
        doc: "Password clients must give with AUTH or HELLO; empty disables it.",
        get: |c| c.requirepass.clone().unwrap_or_default(),
        set: |c, a| {
            let v = one(a)?;
            c.requirepass = if v.is_empty() { None } else { Some(v.to_string()) };
            Ok(())
        },
    },
    OptionDef {
        name: "maxclients",
        mutable: true,
        doc: "Maximum simultaneous clients; RLIMIT_NOFILE is raised to fit at start.",
        get: |c| c.maxclients.to_string(),
        set: |c, a| {
            c.maxclients = int_in(a, 1, u32::MAX as i64)? as usize;
            Ok(())
        },
    },
    OptionDef {
        name: "timeout",
        mutable: true,
        doc: "Close a client idle for this many seconds (0 = never).",
        get: |c| c.timeout_secs.to_string(),
        set: |c, a| {
            c.timeout_secs = int_in(a, 0, i32::MAX as i64)? as u64;
            Ok(())
        },
    },
    OptionDef {
        name: "tracking-table-max-keys",
        mutable: true,
        doc: "Keys the client-side caching table (CLIENT TRACKING) remembers, over all clients; past it the oldest are dropped and their clients sent an invalidation (0 = no bound).",
        get: |c| c.tracking_table_max_keys.to_string(),
        set: |c, a| {
            c.tracking_table_max_keys = int_in(a, 0, i64::MAX)? as u64;
            Ok(())
        },
    },
    OptionDef {
        name: "tcp-backlog",
        mutable: false,
        doc: "Listen backlog.",
        get: |c| c.tcp_backlog.to_string(),
        set: |c, a| {
            c.tcp_backlog = int_in(a, 0, i32::MAX as i64)? as u32;
            Ok(())
        },
    },
    OptionDef {
        name: "tcp-keepalive",
        mutable: true,
        doc: "TCP keepalive interval in seconds for new connections (0 = off).",
        get: |c| c.tcp_keepalive_secs.to_string(),
        set: |c, a| {
            c.tcp_keepalive_secs = int_in(a, 0, i32::MAX as i64)? as u64;
            Ok(())
        },
    },
    OptionDef {
        name: "appendfsync",
        mutable: true,
        doc: "When the RocksDB WAL is fsynced: always (before each reply, group-committed), everysec (WAL written before the reply, fsync every second), no.",
        get: |c| {
            match c.appendfsync {
                AppendFsync::Always => "always",
                AppendFsync::EverySec => "everysec",
                AppendFsync::No => "no",
            }
            .into()
        },
        set: |c, a| {
            c.appendfsync = match one(a)?.to_ascii_lowercase().as_str() {
                "always" => AppendFsync::Always,
                "everysec" => AppendFsync::EverySec,
                "no" => AppendFsync::No,
                _ => return Err("argument(s) must be one of the following: everysec, always, no".into()),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "loglevel",
        mutable: true,
        doc: "debug, verbose, notice or warning.",
        get: |c| c.loglevel.clone(),
        set: |c, a| {
            let v = one(a)?.to_ascii_lowercase();
            if !["debug", "verbose", "notice", "warning", "nothing"].contains(&v.as_str()) {
                return Err("argument(s) must be one of the following: debug, verbose, notice, warning, nothing".into());
            }
            c.loglevel = v;
            Ok(())
        },
    },
    OptionDef {
        name: "logfile",
        mutable: false,
        doc: "Log file; empty logs to standard output.",
        get: |c| c.logfile.clone(),
        set: |c, a| {
            c.logfile = one(a)?.to_string();
            Ok(())
        },
    },
    OptionDef {
        name: "pidfile",
        mutable: false,
        doc: "Write the process id here at start, remove it at shutdown.",
        get: |c| c.pidfile.clone(),
        set: |c, a| {
            c.pidfile = one(a)?.to_string();
            Ok(())
        },
    },
    OptionDef {
        name: "io-threads",
        mutable: false,
        doc: "Threads of the cold-read pool that run commands whose data is not in memory.",
        get: |c| c.io_threads.to_string(),
        set: |c, a| {
            c.io_threads = int_in(a, 1, 128)? as usize;
            Ok(())
        },
    },
    OptionDef {
        name: "writer-threads",
        mutable: false,
        doc: "Group-commit writer threads. Each owns the keys of a share of the lock stripes, and they write to RocksDB in parallel; a batch whose keys span writers (or that acts on whole databases) is ordered against all of them.",
        get: |c| c.writer_threads.to_string(),
        set: |c, a| {
            c.writer_threads = int_in(a, 1, 64)? as usize;
            Ok(())
        },
    },
    OptionDef {
        name: "debug-cold-reads",
        mutable: true,
        doc: "Testing aid: treat all committed data as cold, so every command that reads it runs on the cold-read pool and commits through the write-stamp check (the test suites' cold mode). Never for production.",
        get: |c| yn(c.debug_cold_reads),
        set: |c, a| {
            c.debug_cold_reads = yes_no(a)?;
            Ok(())
        },
    },
    OptionDef {
        name: "busy-reply-threshold",
        mutable: true,
        doc: "Milliseconds a script or function may run before other clients get a BUSY error (and SCRIPT KILL / FUNCTION KILL may stop it).",
        get: |c| c.busy_reply_threshold_ms.to_string(),
        set: |c, a| {
            c.busy_reply_threshold_ms = int_in(a, 0, i64::MAX)? as u64;
            Ok(())
        },
    },
    OptionDef {
        name: "lua-time-limit",
        mutable: true,
        doc: "Alias of `busy-reply-threshold`.",
        get: |c| c.busy_reply_threshold_ms.to_string(),
        set: |c, a| {
            c.busy_reply_threshold_ms = int_in(a, 0, i64::MAX)? as u64;
            Ok(())
        },
    },
    OptionDef {
        name: "io-queue-max",
        mutable: true,
        doc: "Cold reads allowed to wait for the pool; beyond it a command gets an error.",
        get: |c| c.io_queue_max.to_string(),
        set: |c, a| {
            c.io_queue_max = int_in(a, 1, i32::MAX as i64)? as usize;
            Ok(())
        },
    },
    OptionDef {
        name: "maxmemory",
        mutable: true,
        doc: "Memory budget of the whole process, shared out as described under [Memory budget](#memory-budget); 0 = 1 GiB, values below 32mb count as 32mb. Only cached copies are evicted, never data: it lives on disk.",
        get: |c| c.maxmemory.to_string(),
        set: |c, a| {
            c.maxmemory = memory(a)?;
            Ok(())
        },
    },
    OptionDef {
        name: "proto-max-bulk-len",
        mutable: true,
        doc: "Largest bulk string a client may send, and largest string value.",
        get: |c| c.proto_max_bulk_len.to_string(),
        set: |c, a| {
            let v = memory(a)?;
            if v < 1024 * 1024 {
                return Err("argument must be between 1048576 and 9223372036854775807 inclusive".into());
            }
            c.proto_max_bulk_len = v;
            Ok(())
        },
    },
    OptionDef {
        name: "client-query-buffer-limit",
        mutable: true,
        doc: "Largest unparsed input buffered for one client before it is closed.",
        get: |c| c.client_query_buffer_limit.to_string(),
        set: |c, a| {
            let v = memory(a)?;
            if v < 1024 * 1024 {
                return Err("argument must be between 1048576 and 9223372036854775807 inclusive".into());
            }
            c.client_query_buffer_limit = v;
            Ok(())
        },
    },
    OptionDef {
        name: "client-output-buffer-limit",
        mutable: true,
        doc: "`<class> <hard> <soft> <soft-seconds>` groups, classes normal, replica (or slave) and pubsub: a client whose unsent replies pass the hard limit, or stay above the soft one for longer than soft-seconds, is closed (0 = no limit). The pubsub class applies to clients with subscriptions (their queued messages count as unsent output); replica is accepted but unused. Whatever the limit, Firn stops reading a client's requests while more than 64 MiB (or the configured limit, if higher) of its replies are unsent.",
        get: |c| c.client_output_buffer_limit.render(),
        set: |c, a| {
            let words: Vec<&str> = a.iter().flat_map(|s| s.split_whitespace()).collect();
            c.client_output_buffer_limit.apply(&words)
        },
    },
    OptionDef {
        name: "slowlog-log-slower-than",
        mutable: true,
        doc: "Log commands slower than this many microseconds (negative disables).",
        get: |c| c.slowlog_log_slower_than.to_string(),
        set: |c, a| {
            c.slowlog_log_slower_than = int_in(a, -1, i64::MAX)?;
            Ok(())
        },
    },
    OptionDef {
        name: "slowlog-max-len",
        mutable: true,
        doc: "Entries kept by SLOWLOG.",
        get: |c| c.slowlog_max_len.to_string(),
        set: |c, a| {
            c.slowlog_max_len = int_in(a, 0, i64::MAX)? as u64;
            Ok(())
        },
    },
    OptionDef {
        name: "maxmemory-policy",
        mutable: true,
        doc: "Accepted for compatibility and ignored: Firn never evicts data (it lives on disk); only caches are trimmed to `maxmemory`.",
        get: |c| c.maxmemory_policy.to_string(),
        set: |c, a| {
            let v = one(a)?.to_ascii_lowercase();
            c.maxmemory_policy = MAXMEMORY_POLICIES
                .iter()
                .find(|p| **p == v)
                .ok_or_else(|| format!("argument(s) must be one of the following: {}", MAXMEMORY_POLICIES.join(", ")))?;
            Ok(())
        },
    },
    OptionDef {
        name: "maxmemory-samples",
        mutable: true,
        doc: "Accepted for compatibility and ignored (no eviction sampling).",
        get: |c| c.maxmemory_samples.to_string(),
        set: |c, a| {
            c.maxmemory_samples = int_in(a, 1, i32::MAX as i64)? as u32;
            Ok(())
        },
    },
    OptionDef {
        name: "notify-keyspace-events",
        mutable: true,
        doc: "Keyspace notifications published through Pub/Sub: any of the class letters `g$lshzxetdnm` with `K` (keyspace channel) and/or `E` (keyevent channel), `A` standing for `g$lshzxetd`; empty = off. As in Redis (see compatibility.md, Keyspace notifications).",
        get: |c| crate::notify::flags::render_flags(c.notify_keyspace_events),
        set: |c, a| {
            c.notify_keyspace_events = crate::notify::flags::parse_flags(one(a)?)?;
            Ok(())
        },
    },
    OptionDef {
        name: "hz",
        mutable: true,
        doc: "Accepted for compatibility (clamped to 1..500 as Redis does) and ignored: Firn has no periodic cron.",
        get: |c| c.hz.to_string(),
        set: |c, a| {
            c.hz = int_in(a, 0, i32::MAX as i64)?.clamp(1, 500) as u32;
            Ok(())
        },
    },
    OptionDef {
        name: "replica-read-only",
        mutable: true,
        doc: "Accepted for compatibility and ignored: Firn has no replication yet.",
        get: |c| yn(c.replica_read_only),
        set: |c, a| {
            c.replica_read_only = yes_no(a)?;
            Ok(())
        },
    },
    OptionDef {
        name: "stop-writes-on-bgsave-error",
        mutable: true,
        doc: "Accepted for compatibility and ignored: writes stop only when the RocksDB WAL cannot be written.",
        get: |c| yn(c.stop_writes_on_bgsave_error),
        set: |c, a| {
            c.stop_writes_on_bgsave_error = yes_no(a)?;
            Ok(())
        },
    },
    OptionDef {
        name: "hll-sparse-max-bytes",
        mutable: true,
        doc: "Largest sparse HyperLogLog value (header included), as in Redis: a PFADD or PFMERGE that would grow it further converts it to the 12304-byte dense encoding.",
        get: |c| c.hll_sparse_max_bytes.to_string(),
        set: |c, a| {
            c.hll_sparse_max_bytes = memory_in(a, i64::MAX as u64)?;
            Ok(())
        },
    },
    OptionDef {
        name: "cluster-enabled",
        mutable: false,
        doc: "Always no: Firn runs standalone (read-only, for tools that ask).",
        get: |_| "no".into(),
        set: |_, a| match yes_no(a)? {
            false => Ok(()),
            true => Err("Firn has no cluster mode yet".into()),
        },
    },
    OptionDef {
        name: "daemonize",
        mutable: false,
        doc: "Always no: Firn runs in the foreground (use a service manager).",
        get: |_| "no".into(),
        set: |_, a| match yes_no(a)? {
            false => Ok(()),
            true => Err("Firn does not daemonize; run it under a service manager".into()),
        },
    },
    OptionDef {
        name: "appendonly",
        mutable: false,
        doc: "Always yes: every write goes to the RocksDB write-ahead log (read-only, for tools that ask).",
        get: |_| "yes".into(),
        set: |_, a| match yes_no(a)? {
            true => Ok(()),
            false => Err("Firn always logs writes; appendonly cannot be disabled".into()),
        },
    },
    OptionDef {
        name: "save",
        mutable: false,
        doc: "Always empty: Firn needs no snapshot schedule (read-only, for tools that ask); SAVE/BGSAVE write checkpoints on demand.",
        get: |_| String::new(),
        set: |_, a| match a {
            [v] if v.is_empty() => Ok(()),
            _ => Err("Firn has no snapshot schedule; only an empty save is accepted".into()),
        },
    },
];

/// Redis's maxmemory-policy names, in its error message's order.
const MAXMEMORY_POLICIES: &[&str] = &[
    "volatile-lru",
    "volatile-lfu",
    "volatile-random",
    "volatile-ttl",
    "allkeys-lru",
    "allkeys-lfu",
    "allkeys-random",
    "noeviction",
];

pub fn find_option(name: &str) -> Option<&'static OptionDef> {
    OPTIONS.iter().find(|o| o.name.eq_ignore_ascii_case(name))
}

/// Splits one config-file line into arguments (redis.conf quoting).
fn split_line(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&first) = chars.peek() else { break };
        let mut arg = String::new();
        if first == '"' || first == '\'' {
            chars.next();
            let mut closed = false;
            while let Some(c) = chars.next() {
                if c == first {
                    closed = true;
                    break;
                }
                if c == '\\' && first == '"' {
                    match chars.next() {
                        Some('n') => arg.push('\n'),
                        Some('t') => arg.push('\t'),
                        Some('r') => arg.push('\r'),
                        Some(other) => arg.push(other),
                        None => break,
                    }
                } else {
                    arg.push(c);
                }
            }
            if !closed {
                return Err("Unbalanced quotes in configuration line".into());
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                arg.push(c);
                chars.next();
            }
        }
        out.push(arg);
    }
    Ok(out)
}

impl Config {
    /// Applies redis.conf-syntax text.
    pub fn apply_text(&mut self, text: &str) -> Result<(), String> {
        for (lineno, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let args = split_line(trimmed).map_err(|e| format!("line {}: {e}", lineno + 1))?;
            let Some((name, values)) = args.split_first() else {
                continue;
            };
            let def = find_option(name).ok_or_else(|| {
                format!(
                    "line {}: Bad directive or wrong number of arguments: '{name}'",
                    lineno + 1
                )
            })?;
            (def.set)(self, values).map_err(|e| format!("line {}: '{name}': {e}", lineno + 1))?;
        }
        Ok(())
    }

    /// `firn [config-file] [--name value...]`, as redis-server parses it:
    /// each `--name` starts a new directive and the words after it are its
    /// arguments.
    pub fn from_args(args: &[String]) -> Result<Config, String> {
        let mut config = Config::default();
        let mut rest = args;
        if let Some(first) = rest.first() {
            if !first.starts_with("--") {
                let text = std::fs::read_to_string(first)
                    .map_err(|e| format!("cannot read config file {first}: {e}"))?;
                config.apply_text(&text)?;
                config.config_file = Some(PathBuf::from(first));
                rest = &rest[1..];
            }
        }
        let mut directives = String::new();
        for arg in rest {
            if let Some(name) = arg.strip_prefix("--") {
                directives.push('\n');
                directives.push_str(name);
            } else {
                directives.push_str(" \"");
                for c in arg.chars() {
                    match c {
                        '"' | '\\' => {
                            directives.push('\\');
                            directives.push(c);
                        }
                        '\n' => directives.push_str("\\n"),
                        _ => directives.push(c),
                    }
                }
                directives.push('"');
            }
        }
        config.apply_text(&directives)?;
        Ok(config)
    }

    /// The redis.conf text CONFIG REWRITE writes: every option, current value.
    pub fn render(&self) -> String {
        let mut out = String::from("# Written by Firn's CONFIG REWRITE.\n");
        for def in OPTIONS {
            let value = (def.get)(self);
            let quoted = format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""));
            out.push_str(&format!("{} {}\n", def.name, quoted));
        }
        out
    }
}

/// docs/configuration.md, generated from `OPTIONS` (a test keeps the file
/// in step: run `FIRN_WRITE_DOCS=1 cargo test -p firn-server config` to
/// rewrite it).
pub fn render_markdown() -> String {
    let defaults = Config::default();
    let mut out = String::from(
        "# Configuration\n\n\
         Firn reads a redis.conf-style file (`firn /path/to/firn.conf`) and the same options as\n\
         `--name value` flags (`firn --port 6380 --dir /var/lib/firn`); flags win over the file.\n\
         `CONFIG GET` reads every option, `CONFIG SET` changes the ones marked mutable, and\n\
         `CONFIG REWRITE` writes the current values back to the config file.\n\n\
         This page is generated from the option table in `crates/firn-server/src/config.rs`.\n\n\
         | option | default | CONFIG SET | meaning |\n|---|---|---|---|\n",
    );
    for def in OPTIONS {
        let default = (def.get)(&defaults);
        let default = if default.is_empty() {
            "\"\"".to_string()
        } else {
            format!("`{default}`")
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            def.name,
            default,
            if def.mutable { "yes" } else { "no" },
            def.doc
        ));
    }
    out.push_str(
        "\nMemory values accept Redis's units: `1k` = 1000, `1kb` = 1024, likewise `m`/`mb`, `g`/`gb`.\n",
    );
    out.push_str(LIMITS_DOC);
    out.push_str(&render_memory_budget());
    out
}

/// The "Memory budget" section of docs/configuration.md, with the shares
/// computed by `MemoryBudget` itself.
fn render_memory_budget() -> String {
    let mib = |bytes: u64| format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64);
    let mut out = String::from(
        "\n## Memory budget\n\n\
         `maxmemory` bounds the process, not just one cache. It is shared out at start\n\
         (and again on `CONFIG SET maxmemory`) in fixed shares that add up to the budget:\n\n\
         | share | of the budget | holds |\n|---|---|---|\n\
         | reserve | 1/8 | no cache: client query and reply buffers, writes queued for the writer thread (the pending-write overlay), OBJECT IDLETIME's access times (1/32 of the budget at most), flush and compaction buffers, SST readers, allocator slack |\n\
         | hot tier | 1/4 | Firn's own cache: meta records (a small string is stored whole in its meta record) in three quarters of it, small collections (up to 512 members) decoded in the last quarter |\n\
         | RocksDB block cache | 5/8 | data blocks, index and filter blocks (partitioned; only the top level of each file and the blocks of level-0 files are pinned), and the memtables |\n\
         | of which memtables | 1/8 (4 MiB to 512 MiB) | writes not yet flushed to SST files; they are charged to the block cache through RocksDB's write-buffer manager, which flushes when they reach their share and stalls writes if flushes fall behind |\n\n\
         Index and filter blocks grow with the dataset, so they live in the block cache\n\
         like data blocks instead of beside it: the budget holds whatever the dataset size.\n\
         The column families share the one block cache. `maxmemory 0` means a 1 GiB\n\
         budget; values below 32mb count as 32mb. A new `maxmemory` resizes the block\n\
         cache, the memtable limit and the hot tier at once; each column family keeps the\n\
         memtable size it was opened with until restart.\n\n\
         | maxmemory | hot tier | block cache | of which memtables | reserve |\n|---|---|---|---|---|\n",
    );
    for (label, maxmemory) in [("64mb", 64u64 << 20), ("1gb (and 0)", 1 << 30)] {
        let budget = MemoryBudget::of(maxmemory);
        out.push_str(&format!(
            "| {label} | {} | {} | {} | {} |\n",
            mib(budget.hot_cache_bytes),
            mib(budget.block_cache_bytes),
            mib(budget.memtable_bytes),
            mib(budget.reserve_bytes),
        ));
    }
    out.push_str(
        "\nINFO `memory` reports each component once (see docs/compatibility.md): \
         `used_memory` is their sum, `used_memory_rss` what the kernel counts.\n",
    );
    out
}

/// The section of docs/configuration.md on what protects clients from
/// each other.
const LIMITS_DOC: &str = "
## Limits that protect the other clients

Each is tested with a hostile client in `crates/firn-server/tests/hostile.rs`,
side by side with redis-server: the hostile client gets Redis's reply or is
disconnected as Redis does it, and another client's PING keeps being answered.

| limit | what happens past it |
|---|---|
| `maxclients` | a new connection gets `-ERR max number of clients reached` and is closed; a burst of connections cannot slip past it |
| `timeout` | a client with no traffic in either direction for that many seconds is closed (each byte received counts: a request that stops arriving is closed, one arriving a byte at a time is not) |
| `client-query-buffer-limit` | a client whose request in progress, less its complete arguments, passes it is closed without a reply |
| `proto-max-bulk-len` | a longer bulk argument is `Protocol error: invalid bulk length` and the client is closed; also the largest string value and LCS table |
| multibulk length | above 2147483647 (`INT_MAX`, as Redis 7.0) it is `Protocol error: invalid multibulk length`; a request of hundreds of thousands of arguments works |
| `client-output-buffer-limit` | class `normal`: a client whose unsent replies pass the hard limit, or stay above the soft one for longer than its seconds, is closed |
| unsent replies (not configurable) | while more than 64 MiB (or the `normal` hard or soft limit, if higher) of a client's replies are unsent, Firn reads no more of its requests, so a client that never reads costs a bounded amount of memory |
| big values | GETRANGE and BITCOUNT over more than 1 MiB and LCS over more than 2^20 table cells run on a blocking thread, not a network thread; BITCOUNT holds 1 MiB of the value at a time and a big GETRANGE reply is sent without being copied |
";

/// Redis's stringmatchlen-style glob used by CONFIG GET (and KEYS/SCAN).
pub use firn_prims::glob::glob_match;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_file_syntax() {
        let args: Vec<String> = [
            "--port",
            "7000",
            "--bind",
            "127.0.0.1",
            "::1",
            "--appendfsync",
            "always",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let c = Config::from_args(&args).unwrap();
        assert_eq!(c.port, 7000);
        assert_eq!(c.bind, vec!["127.0.0.1", "::1"]);
        assert_eq!(c.appendfsync, AppendFsync::Always);
    }

    #[test]
    fn config_text_round_trips() {
        let mut c = Config::default();
        c.apply_text("# comment\nport 7001\nrequirepass \"a b\"\nmaxmemory 2gb\n")
            .unwrap();
        assert_eq!(c.port, 7001);
        assert_eq!(c.requirepass.as_deref(), Some("a b"));
        assert_eq!(c.maxmemory, 2 << 30);
        let mut again = Config::default();
        again.apply_text(&c.render()).unwrap();
        assert_eq!(again.port, 7001);
        assert_eq!(again.requirepass.as_deref(), Some("a b"));
    }

    #[test]
    fn memory_budget_shares_add_up_to_the_budget() {
        for maxmemory in [0, 1, 32 << 20, 64 << 20, 100_000_000, 1 << 30, 64 << 30] {
            let b = MemoryBudget::of(maxmemory);
            assert_eq!(
                b.reserve_bytes + b.hot_cache_bytes + b.block_cache_bytes,
                b.total_bytes,
                "{maxmemory}"
            );
            assert!(b.memtable_bytes < b.block_cache_bytes, "{maxmemory}");
            assert!(b.reserve_bytes >= b.total_bytes / 8, "{maxmemory}");
        }
        assert_eq!(MemoryBudget::of(0).total_bytes, 1 << 30);
        assert_eq!(MemoryBudget::of(1).total_bytes, 32 << 20);
        let b = MemoryBudget::of(64 << 20);
        assert_eq!(
            (b.hot_cache_bytes, b.block_cache_bytes, b.memtable_bytes),
            (16 << 20, 40 << 20, 8 << 20)
        );
    }

    #[test]
    fn configuration_doc_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
        let rendered = render_markdown();
        if std::env::var_os("FIRN_WRITE_DOCS").is_some() {
            std::fs::write(path, &rendered).unwrap();
        }
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(on_disk == rendered, "docs/configuration.md is stale: run FIRN_WRITE_DOCS=1 cargo test -p firn-server config");
    }

    #[test]
    fn bad_values_are_errors() {
        let mut c = Config::default();
        assert!(c.apply_text("port nope").is_err());
        assert!(c.apply_text("nosuchoption 1").is_err());
        assert!(c.apply_text("appendfsync sometimes").is_err());
        assert!(c.apply_text("requirepass \"open").is_err());
        assert_eq!(parse_memory("1k"), Some(1000));
        assert_eq!(parse_memory("1kb"), Some(1024));
        assert_eq!(parse_memory("x"), None);
    }
}
