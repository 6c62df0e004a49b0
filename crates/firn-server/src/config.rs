//! Configuration: one definition per option (name, default, whether CONFIG
//! SET may change it, how to parse and print it). Parsing of the config file
//! and of `--name value` flags, CONFIG GET/SET/REWRITE and
//! docs/configuration.md all come from `OPTIONS`.
//!
//! Syntax follows redis.conf: one `name arg...` per line, `#` comments,
//! double/single-quoted arguments; the command line is
//! `firn [config-file] [--name value ...]`, as redis-server accepts it.

use std::collections::BTreeMap;
use std::path::PathBuf;

pub use firn_storage::EncodingLimits;

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
    /// A replica this server feeds: how far behind the stream's end it may
    /// fall (replication/primary.rs).
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

/// `tls-auth-clients`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsAuthClients {
    No,
    Yes,
    Optional,
}

const TLS_AUTH_CLIENTS: &[&str] = &["no", "yes", "optional"];

impl TlsAuthClients {
    /// From a value [`Kind::Enum`] of `TLS_AUTH_CLIENTS` accepted.
    fn parse(value: &str) -> TlsAuthClients {
        match value {
            "no" => TlsAuthClients::No,
            "optional" => TlsAuthClients::Optional,
            _ => TlsAuthClients::Yes,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TlsAuthClients::No => "no",
            TlsAuthClients::Yes => "yes",
            TlsAuthClients::Optional => "optional",
        }
    }
}

/// The `tls-*` options, as given (tls/ builds rustls's configuration from
/// them; paths are read when it does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsOptions {
    pub port: u16,
    pub cert_file: String,
    pub key_file: String,
    pub key_file_pass: String,
    pub client_cert_file: String,
    pub client_key_file: String,
    pub client_key_file_pass: String,
    pub dh_params_file: String,
    pub ca_cert_file: String,
    pub ca_cert_dir: String,
    pub auth_clients: TlsAuthClients,
    pub protocols: String,
    pub ciphers: String,
    pub ciphersuites: String,
    pub prefer_server_ciphers: bool,
    pub session_caching: bool,
    pub session_cache_size: u64,
    pub session_cache_timeout_secs: u64,
    pub replication: bool,
}

impl Default for TlsOptions {
    /// Redis's defaults.
    fn default() -> Self {
        TlsOptions {
            port: 0,
            cert_file: String::new(),
            key_file: String::new(),
            key_file_pass: String::new(),
            client_cert_file: String::new(),
            client_key_file: String::new(),
            client_key_file_pass: String::new(),
            dh_params_file: String::new(),
            ca_cert_file: String::new(),
            ca_cert_dir: String::new(),
            auth_clients: TlsAuthClients::Yes,
            protocols: String::new(),
            ciphers: String::new(),
            ciphersuites: String::new(),
            prefer_server_ciphers: false,
            session_caching: true,
            session_cache_size: 20 * 1024,
            session_cache_timeout_secs: 300,
            replication: false,
        }
    }
}

impl TlsOptions {
    /// Whether TLS is in use: a TLS listener, or replication over TLS
    /// (Redis configures TLS then, and only then).
    pub fn enabled(&self) -> bool {
        self.port != 0 || self.replication
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
    /// The metrics and status page port (0: none) and its address.
    pub metrics_port: u16,
    pub metrics_bind: String,
    pub maxmemory: u64,
    pub proto_max_bulk_len: u64,
    pub client_query_buffer_limit: u64,
    pub client_output_buffer_limit: OutputLimits,
    pub slowlog_log_slower_than: i64,
    pub slowlog_max_len: u64,
    /// The slow-cold-read log (coldlog.rs): commands whose disk wait
    /// reached this many µs (-1: none), at most `cold_read_log_max_len`.
    pub cold_read_log_slower_than_us: i64,
    pub cold_read_log_max_len: u64,
    /// LATENCY's monitor records commands at least this slow (ms; 0: off).
    pub latency_monitor_threshold_ms: u64,
    /// Per-command latency histograms (LATENCY HISTOGRAM, INFO latencystats).
    pub latency_tracking: bool,
    /// The percentiles INFO latencystats shows, as the option prints them.
    pub latency_percentiles: String,
    /// Testing aid: every memory-only read of committed data answers
    /// "not in memory", so every command takes the cold path.
    pub debug_cold_reads: bool,
    /// `busy-reply-threshold` (alias `lua-time-limit`): after this long a
    /// running script makes other clients get BUSY.
    pub busy_reply_threshold_ms: u64,
    /// Accepted and reported, never applied: Firn evicts no data.
    pub maxmemory_policy: &'static str,
    /// `notify-keyspace-events` as a `firn_storage::notify_class` mask.
    pub notify_keyspace_events: u32,
    /// Accepted and reported (clamped to 1..500 as Redis does); Firn has no
    /// periodic cron whose frequency it would set.
    pub hz: u32,
    /// Largest sparse HyperLogLog string before PFADD/PFMERGE convert it to
    /// the dense encoding.
    pub hll_sparse_max_bytes: u64,
    /// The compact encodings' thresholds (`hash-max-listpack-*`,
    /// `zset-max-listpack-*`, `set-max-intset-entries`): what OBJECT
    /// ENCODING and DUMP report follows them (firn-storage's limits.rs).
    pub encoding: EncodingLimits,
    /// `daemonize yes`: fork into the background at start (main.rs).
    pub daemonize: bool,
    /// `enable-debug-command`: who may run DEBUG.
    pub enable_debug_command: Protected,
    /// Who may run MODULE LOAD, LOADEX and UNLOAD (they still fail).
    pub enable_module_command: Protected,
    /// The `tls-*` options.
    pub tls: TlsOptions,
    /// The values of the options Firn accepts and keeps only to report
    /// them (those with `kept` in `OPTIONS`), by primary name; an option
    /// not here has its default.
    pub kept: BTreeMap<&'static str, String>,
    /// Options the config file or the flags set, in order (start-up warns
    /// about those whose meaning Firn cannot keep).
    pub given: Vec<&'static str>,
    /// Directives of a redis.conf Firn accepts and cannot apply
    /// (`rename-command`, `user`, `loadmodule`): one warning each at start.
    pub ignored_directives: Vec<String>,
    /// `rename-command from to` lines, in order (lowercase; an empty `to`
    /// removes the command): applied to the registry at start-up.
    pub renamed_commands: Vec<(String, String)>,
    /// `user <name> rules...` lines, in order (without `user`): the ACL
    /// users created at start-up (acl/commands.rs).
    pub users: Vec<Vec<String>>,
    /// The directives of the top-level file or flags that are not options
    /// (`include`, `rename-command`, `user`, `loadmodule`), as given: CONFIG
    /// REWRITE writes them back, before the options.
    directives: Vec<Vec<String>>,
    /// A `save` line of the file being read replaces the default schedule,
    /// later ones add to it (as Redis reads them).
    save_from_file: bool,
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
            metrics_port: 0,
            metrics_bind: "127.0.0.1".to_string(),
            maxmemory: 0,
            proto_max_bulk_len: 512 << 20,
            client_query_buffer_limit: 1 << 30,
            client_output_buffer_limit: OutputLimits::default(),
            slowlog_log_slower_than: 10_000,
            slowlog_max_len: 128,
            cold_read_log_slower_than_us: 10_000,
            cold_read_log_max_len: 128,
            latency_monitor_threshold_ms: 0,
            latency_tracking: true,
            latency_percentiles: "50 99 99.9".to_string(),
            debug_cold_reads: false,
            busy_reply_threshold_ms: 5000,
            maxmemory_policy: "noeviction",
            notify_keyspace_events: 0,
            hz: 10,
            hll_sparse_max_bytes: 3000,
            encoding: EncodingLimits::default(),
            daemonize: false,
            enable_debug_command: Protected::No,
            enable_module_command: Protected::No,
            tls: TlsOptions::default(),
            kept: BTreeMap::new(),
            given: Vec::new(),
            ignored_directives: Vec::new(),
            renamed_commands: Vec::new(),
            users: Vec::new(),
            directives: Vec::new(),
            save_from_file: false,
            config_file: None,
        }
    }
}

type Getter = fn(&Config) -> String;
type Setter = fn(&mut Config, &[String]) -> Result<(), String>;

pub struct OptionDef {
    pub name: &'static str,
    /// Redis's second name for it (`hash-max-ziplist-entries`,
    /// `slave-read-only`...): accepted everywhere, listed by CONFIG GET.
    pub alias: Option<&'static str>,
    /// May CONFIG SET change it while running?
    pub mutable: bool,
    pub doc: &'static str,
    /// A field of `Config` (unused when `kept` is set).
    pub get: Getter,
    pub set: Setter,
    /// An option Firn keeps only to report it (`Config::kept`).
    pub kept: Option<Kept>,
}

/// An option Firn accepts, checks as Redis does and reports, without acting
/// on it (its doc says why).
pub struct Kept {
    pub kind: Kind,
    /// As CONFIG GET prints it.
    pub default: &'static str,
    /// When a value given in the config file or flags is named at start-up,
    /// with what Firn does instead.
    pub warn: Warn,
}

/// How a kept option's value is parsed, checked and printed: Redis 7.0's
/// config types, with their error texts.
#[derive(Clone, Copy)]
pub enum Kind {
    /// yes / no.
    Bool,
    /// A signed integer in the range (INTEGER_CONFIG of a signed type).
    Int(i64, i64),
    /// An integer of an unsigned type (size_t, unsigned int): a negative
    /// value is out of range.
    UInt(u64, u64),
    /// A memory value (`4kb`) of a signed type, printed in bytes.
    Memory(i64, i64),
    /// A memory value of an unsigned type.
    UMemory(u64, u64),
    /// A memory value or a percentage (`maxmemory-clients`).
    MemoryOrPercent,
    /// An octal number up to the bound (`unixsocketperm`), printed octal.
    Octal(u64),
    /// One of the names, any case; `alias=name` entries are accepted and
    /// print as `name`'s first spelling (`oom-score-adj relative` prints
    /// `yes`).
    Enum(&'static [&'static str]),
    /// Any of the names, space separated (`shutdown-on-sigint nosave now`).
    Flags(&'static [&'static str]),
    /// Any string.
    Text,
    /// Checked by the function, which returns the text CONFIG GET prints;
    /// it gets the words of a multi-word value.
    Words(fn(&[String]) -> Result<String, String>),
}

/// Which values of a kept option are named at start-up.
#[derive(Clone, Copy)]
pub enum Warn {
    Never,
    /// Any value the configuration gives.
    Always(&'static str),
    /// A value other than the one given here.
    Unless(&'static str, &'static str),
}

impl OptionDef {
    /// The value CONFIG GET prints.
    pub fn value(&self, config: &Config) -> String {
        match &self.kept {
            Some(kept) => config
                .kept
                .get(self.name)
                .cloned()
                .unwrap_or_else(|| kept.default.to_string()),
            None => (self.get)(config),
        }
    }

    /// Checks and applies a value (the words after the name).
    pub fn apply(&self, config: &mut Config, args: &[String]) -> Result<(), String> {
        match &self.kept {
            Some(kept) => {
                let value = kept.kind.check(args)?;
                config.kept.insert(self.name, value);
                Ok(())
            }
            None => (self.set)(config, args),
        }
    }

    /// Whether `name` (any case) is this option's name or alias.
    pub fn is_named(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
            || self.alias.is_some_and(|a| a.eq_ignore_ascii_case(name))
    }

    /// The start-up warning for this option's value, if its meaning is not
    /// kept.
    fn warning(&self, config: &Config) -> Option<String> {
        let kept = self.kept.as_ref()?;
        let value = self.value(config);
        let instead = match kept.warn {
            Warn::Never => return None,
            Warn::Always(instead) => instead,
            Warn::Unless(fine, _) if value.eq_ignore_ascii_case(fine) => return None,
            Warn::Unless(_, instead) => instead,
        };
        Some(format!(
            "'{} {}' has no effect in Firn: {instead}",
            self.name, value
        ))
    }
}

/// A kept option's definition (see `OPTIONS`).
const fn kept(
    name: &'static str,
    alias: Option<&'static str>,
    mutable: bool,
    kind: Kind,
    default: &'static str,
    warn: Warn,
    doc: &'static str,
) -> OptionDef {
    OptionDef {
        name,
        alias,
        mutable,
        doc,
        get: |_| String::new(),
        set: |_, _| Ok(()),
        kept: Some(Kept {
            kind,
            default,
            warn,
        }),
    }
}

impl Kind {
    /// The value as CONFIG GET prints it, or Redis's error text.
    fn check(&self, args: &[String]) -> Result<String, String> {
        if let Kind::Words(check) = self {
            let words: Vec<String> = match args {
                [one] => one.split_whitespace().map(String::from).collect(),
                many => many.to_vec(),
            };
            return check(&words);
        }
        if let Kind::Flags(names) = self {
            let words: Vec<&str> = args.iter().flat_map(|a| a.split_whitespace()).collect();
            let mut out = Vec::new();
            for word in &words {
                let Some(name) = names.iter().find(|n| n.eq_ignore_ascii_case(word)) else {
                    return Err(one_of(names));
                };
                out.push(*name);
            }
            if out.is_empty() {
                return Err(one_of(names));
            }
            return Ok(out.join(" "));
        }
        let text = one(args)?;
        let integer = || {
            firn_prims::string2ll(text.as_bytes())
                .ok_or_else(|| "argument couldn't be parsed into an integer".to_string())
        };
        let signed = |v: i64, min: i64, max: i64| {
            if v < min || v > max {
                Err(format!(
                    "argument must be between {min} and {max} inclusive"
                ))
            } else {
                Ok(v.to_string())
            }
        };
        let unsigned = |v: u64, min: u64, max: u64| {
            if v < min || v > max {
                Err(format!(
                    "argument must be between {min} and {max} inclusive"
                ))
            } else {
                Ok(v.to_string())
            }
        };
        let memory =
            || parse_memory(text).ok_or_else(|| "argument must be a memory value".to_string());
        match *self {
            Kind::Bool => yes_no(args).map(yn),
            Kind::Int(min, max) => signed(integer()?, min, max),
            Kind::UInt(min, max) => unsigned(integer()? as u64, min, max),
            Kind::Memory(min, max) => signed(memory()? as i64, min, max),
            Kind::UMemory(min, max) => unsigned(memory()?, min, max),
            Kind::MemoryOrPercent => {
                if let Some(v) = parse_memory(text) {
                    return signed(v as i64, -100, i64::MAX);
                }
                match text
                    .strip_suffix('%')
                    .and_then(|n| firn_prims::string2ll(n.as_bytes()))
                {
                    Some(p) if p >= 0 && text.len() > 1 => {
                        if p > 100 {
                            Err("percentage argument must be less or equal to 100".into())
                        } else {
                            Ok(format!("{p}%"))
                        }
                    }
                    _ => Err("argument must be a memory or percent value".into()),
                }
            }
            Kind::Octal(max) => {
                let v = i64::from_str_radix(text, 8)
                    .map_err(|_| "argument couldn't be parsed as an octal number".to_string())?;
                if v < 0 || v as u64 > max {
                    return Err(format!("argument must be between 0 and {max:o} inclusive"));
                }
                Ok(format!("{v:o}"))
            }
            Kind::Enum(names) => {
                let found = names.iter().find_map(|n| {
                    let (given, shown) = n.split_once('=').unwrap_or((n, n));
                    given.eq_ignore_ascii_case(text).then_some(shown)
                });
                found.map(str::to_string).ok_or_else(|| one_of(names))
            }
            Kind::Text => Ok(text.to_string()),
            Kind::Flags(_) | Kind::Words(_) => unreachable!("handled above"),
        }
    }
}

/// Redis's enum error text.
fn one_of(names: &[&str]) -> String {
    let names: Vec<&str> = names
        .iter()
        .map(|n| n.split_once('=').map_or(*n, |(given, _)| given))
        .collect();
    format!(
        "argument(s) must be one of the following: {}",
        names.join(", ")
    )
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
    // No digits at all reads as 0, as strtoull leaves it ("" and "kb" are 0).
    let n: u64 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
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

/// A `tls-*` option that is a path or a list (`Config::tls`).
macro_rules! tls_text {
    ($name:literal, $field:ident, $doc:literal) => {
        OptionDef {
            name: $name,
            alias: None,
            mutable: true,
            doc: $doc,
            get: |c| c.tls.$field.clone(),
            set: |c, a| {
                c.tls.$field = one(a)?.to_string();
                Ok(())
            },
            kept: None,
        }
    };
}

/// A yes/no `tls-*` option.
macro_rules! tls_bool {
    ($name:literal, $field:ident, $doc:literal) => {
        OptionDef {
            name: $name,
            alias: None,
            mutable: true,
            doc: $doc,
            get: |c| yn(c.tls.$field),
            set: |c, a| {
                c.tls.$field = yes_no(a)?;
                Ok(())
            },
            kept: None,
        }
    };
}

/// An integer `tls-*` option in `0..=max`.
macro_rules! tls_int {
    ($name:literal, $field:ident, $max:expr, $mutable:literal, $doc:literal) => {
        OptionDef {
            name: $name,
            alias: None,
            mutable: $mutable,
            doc: $doc,
            get: |c| c.tls.$field.to_string(),
            set: |c, a| {
                c.tls.$field = int_in(a, 0, $max)?.try_into().unwrap_or_default();
                Ok(())
            },
            kept: None,
        }
    };
}

pub static OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "port",
        alias: None,
        mutable: false,
        doc: "TCP port to listen on.",
        get: |c| c.port.to_string(),
        set: |c, a| {
            c.port = int_in(a, 0, 65535)? as u16;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "bind",
        alias: None,
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
        kept: None,
    },
    OptionDef {
        name: "protected-mode",
        alias: None,
        mutable: true,
        doc: "Refuse clients from non-loopback addresses when no password is set.",
        get: |c| yn(c.protected_mode),
        set: |c, a| {
            c.protected_mode = yes_no(a)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "dir",
        alias: None,
        mutable: false,
        doc: "Data directory: the RocksDB files (`db/`) and checkpoints (`checkpoint/`).",
        get: |c| c.dir.display().to_string(),
        set: |c, a| {
            c.dir = PathBuf::from(one(a)?);
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "databases",
        alias: None,
        mutable: false,
        doc: "Number of logical databases (SELECT 0..n-1); at most 256.",
        get: |c| c.databases.to_string(),
        set: |c, a| {
            c.databases = int_in(a, 1, 256)? as usize;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "requirepass",
        alias: None,
        mutable: true,
        doc: "The `default` user's password (its only one: setting it replaces any ACL SETUSER gave it); empty makes the default user `nopass` again.",
        get: |c| c.requirepass.clone().unwrap_or_default(),
        set: |c, a| {
            let v = one(a)?;
            c.requirepass = if v.is_empty() { None } else { Some(v.to_string()) };
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "maxclients",
        alias: None,
        mutable: true,
        doc: "Maximum simultaneous clients; RLIMIT_NOFILE is raised to fit at start.",
        get: |c| c.maxclients.to_string(),
        set: |c, a| {
            c.maxclients = int_in(a, 1, u32::MAX as i64)? as usize;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "timeout",
        alias: None,
        mutable: true,
        doc: "Close a client idle for this many seconds (0 = never).",
        get: |c| c.timeout_secs.to_string(),
        set: |c, a| {
            c.timeout_secs = int_in(a, 0, i32::MAX as i64)? as u64;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "tracking-table-max-keys",
        alias: None,
        mutable: true,
        doc: "Keys the client-side caching table (CLIENT TRACKING) remembers, over all clients; past it the oldest are dropped and their clients sent an invalidation (0 = no bound).",
        get: |c| c.tracking_table_max_keys.to_string(),
        set: |c, a| {
            c.tracking_table_max_keys = int_in(a, 0, i64::MAX)? as u64;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "tcp-backlog",
        alias: None,
        mutable: false,
        doc: "Listen backlog.",
        get: |c| c.tcp_backlog.to_string(),
        set: |c, a| {
            c.tcp_backlog = int_in(a, 0, i32::MAX as i64)? as u32;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "tcp-keepalive",
        alias: None,
        mutable: true,
        doc: "TCP keepalive interval in seconds for new connections (0 = off).",
        get: |c| c.tcp_keepalive_secs.to_string(),
        set: |c, a| {
            c.tcp_keepalive_secs = int_in(a, 0, i32::MAX as i64)? as u64;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "appendfsync",
        alias: None,
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
        kept: None,
    },
    OptionDef {
        name: "loglevel",
        alias: None,
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
        kept: None,
    },
    OptionDef {
        name: "logfile",
        alias: None,
        mutable: false,
        doc: "Log file; empty logs to standard output.",
        get: |c| c.logfile.clone(),
        set: |c, a| {
            c.logfile = one(a)?.to_string();
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "pidfile",
        alias: None,
        mutable: false,
        doc: "Write the process id here at start, remove it at shutdown.",
        get: |c| c.pidfile.clone(),
        set: |c, a| {
            c.pidfile = one(a)?.to_string();
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "io-threads",
        alias: None,
        mutable: false,
        doc: "Threads of the cold-read pool that run commands whose data is not in memory.",
        get: |c| c.io_threads.to_string(),
        set: |c, a| {
            c.io_threads = int_in(a, 1, 128)? as usize;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "writer-threads",
        alias: None,
        mutable: false,
        doc: "Group-commit writer threads. Each owns the keys of a share of the lock stripes, and they write to RocksDB in parallel; a batch whose keys span writers (or that acts on whole databases) is ordered against all of them.",
        get: |c| c.writer_threads.to_string(),
        set: |c, a| {
            c.writer_threads = int_in(a, 1, 64)? as usize;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "debug-cold-reads",
        alias: None,
        mutable: true,
        doc: "Testing aid: treat all committed data as cold, so every command that reads it runs on the cold-read pool and commits through the write-stamp check (the test suites' cold mode). Never for production.",
        get: |c| yn(c.debug_cold_reads),
        set: |c, a| {
            c.debug_cold_reads = yes_no(a)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "busy-reply-threshold",
        alias: Some("lua-time-limit"),
        mutable: true,
        doc: "Milliseconds a script or function may run before other clients get a BUSY error (and SCRIPT KILL / FUNCTION KILL may stop it).",
        get: |c| c.busy_reply_threshold_ms.to_string(),
        set: |c, a| {
            c.busy_reply_threshold_ms = int_in(a, 0, i64::MAX)? as u64;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "io-queue-max",
        alias: None,
        mutable: true,
        doc: "Cold reads allowed to wait for the pool; beyond it a command gets an error.",
        get: |c| c.io_queue_max.to_string(),
        set: |c, a| {
            c.io_queue_max = int_in(a, 1, i32::MAX as i64)? as usize;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "metrics-port",
        alias: None,
        mutable: false,
        doc: "HTTP port of `/metrics` (Prometheus text format) and the status page at `/`; 0 = none. See docs/operating.md.",
        get: |c| c.metrics_port.to_string(),
        set: |c, a| {
            c.metrics_port = int_in(a, 0, 65535)? as u16;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "metrics-bind",
        alias: None,
        mutable: false,
        doc: "Address the metrics port listens on (one address; the port has no authentication, so loopback by default).",
        get: |c| c.metrics_bind.clone(),
        set: |c, a| {
            let [addr] = a else {
                return Err("wrong number of arguments".into());
            };
            c.metrics_bind = addr.clone();
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "maxmemory",
        alias: None,
        mutable: true,
        doc: "Memory budget of the whole process, shared out as described under [Memory budget](#memory-budget); 0 = 1 GiB, values below 32mb count as 32mb. Only cached copies are evicted, never data: it lives on disk.",
        get: |c| c.maxmemory.to_string(),
        set: |c, a| {
            c.maxmemory = memory(a)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "proto-max-bulk-len",
        alias: None,
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
        kept: None,
    },
    OptionDef {
        name: "client-query-buffer-limit",
        alias: None,
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
        kept: None,
    },
    OptionDef {
        name: "client-output-buffer-limit",
        alias: None,
        mutable: true,
        doc: "`<class> <hard> <soft> <soft-seconds>` groups, classes normal, replica (or slave) and pubsub: a client whose unsent replies pass the hard limit, or stay above the soft one for longer than soft-seconds, is closed (0 = no limit). The pubsub class applies to clients with subscriptions (their queued messages count as unsent output); the replica class bounds how far behind the end of the replication stream a replica may fall before it is dropped and syncs again. Whatever the limit, Firn stops reading a client's requests while more than 64 MiB (or the configured limit, if higher) of its replies are unsent.",
        get: |c| c.client_output_buffer_limit.render(),
        set: |c, a| {
            let words: Vec<&str> = a.iter().flat_map(|s| s.split_whitespace()).collect();
            c.client_output_buffer_limit.apply(&words)
        },
        kept: None,
    },
    OptionDef {
        name: "latency-monitor-threshold",
        alias: None,
        mutable: true,
        doc: "LATENCY's monitor records the commands that take at least this many milliseconds (0 turns it off).",
        get: |c| c.latency_monitor_threshold_ms.to_string(),
        set: |c, a| {
            c.latency_monitor_threshold_ms = int_in(a, 0, i64::MAX)? as u64;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "latency-tracking",
        alias: None,
        mutable: true,
        doc: "Keep a latency histogram per command (LATENCY HISTOGRAM, INFO latencystats).",
        get: |c| yn(c.latency_tracking),
        set: |c, a| {
            c.latency_tracking = yes_no(a)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "latency-tracking-info-percentiles",
        alias: None,
        mutable: true,
        doc: "The percentiles INFO latencystats reports for each command.",
        get: |c| c.latency_percentiles.clone(),
        set: |c, a| {
            let words: Vec<String> = a.iter().flat_map(|w| w.split_ascii_whitespace()).map(str::to_string).collect();
            c.latency_percentiles = percentiles(&words)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "slowlog-log-slower-than",
        alias: None,
        mutable: true,
        doc: "Log commands slower than this many microseconds (negative disables).",
        get: |c| c.slowlog_log_slower_than.to_string(),
        set: |c, a| {
            c.slowlog_log_slower_than = int_in(a, -1, i64::MAX)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "slowlog-max-len",
        alias: None,
        mutable: true,
        doc: "Entries kept by SLOWLOG.",
        get: |c| c.slowlog_max_len.to_string(),
        set: |c, a| {
            c.slowlog_max_len = int_in(a, 0, i64::MAX)? as u64;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "cold-read-log-slower-than",
        alias: None,
        mutable: true,
        doc: "Firn's own: log in the slow-cold-read log (SLOWLOG COLDGET) the commands that waited on the disk (ran on the cold-read pool) this many microseconds or more, from their submission to the pool until their run there finished; -1 logs none, 0 every one.",
        get: |c| c.cold_read_log_slower_than_us.to_string(),
        set: |c, a| {
            c.cold_read_log_slower_than_us = int_in(a, -1, i64::MAX)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "cold-read-log-max-len",
        alias: None,
        mutable: true,
        doc: "Firn's own: entries kept by the slow-cold-read log (SLOWLOG COLDLEN), the newest.",
        get: |c| c.cold_read_log_max_len.to_string(),
        set: |c, a| {
            c.cold_read_log_max_len = int_in(a, 0, i64::MAX)? as u64;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "maxmemory-policy",
        alias: None,
        mutable: true,
        doc: "Firn never evicts data (it lives on disk; only caches are trimmed to `maxmemory`). The policy chooses what is tracked per key: an LFU policy (`allkeys-lfu`, `volatile-lfu`) keeps Redis's access-frequency counters (OBJECT FREQ, `redis-cli --hotkeys`; `lfu-log-factor`, `lfu-decay-time`), any other keeps last-access times (OBJECT IDLETIME). A switch keeps what was tracked, read in the other policy's terms until the key's next access (docs/compatibility.md, OBJECT FREQ).",
        get: |c| c.maxmemory_policy.to_string(),
        set: |c, a| {
            let v = one(a)?.to_ascii_lowercase();
            c.maxmemory_policy = MAXMEMORY_POLICIES
                .iter()
                .find(|p| **p == v)
                .ok_or_else(|| format!("argument(s) must be one of the following: {}", MAXMEMORY_POLICIES.join(", ")))?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "notify-keyspace-events",
        alias: None,
        mutable: true,
        doc: "Keyspace notifications published through Pub/Sub: any of the class letters `g$lshzxetdnm` with `K` (keyspace channel) and/or `E` (keyevent channel), `A` standing for `g$lshzxetd`; empty = off. As in Redis (see compatibility.md, Keyspace notifications).",
        get: |c| crate::notify::flags::render_flags(c.notify_keyspace_events),
        set: |c, a| {
            c.notify_keyspace_events = crate::notify::flags::parse_flags(one(a)?)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "hz",
        alias: None,
        mutable: true,
        doc: "Accepted for compatibility (clamped to 1..500 as Redis does) and ignored: Firn has no periodic cron.",
        get: |c| c.hz.to_string(),
        set: |c, a| {
            c.hz = int_in(a, 0, i32::MAX as i64)?.clamp(1, 500) as u32;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "hll-sparse-max-bytes",
        alias: None,
        mutable: true,
        doc: "Largest sparse HyperLogLog value (header included), as in Redis: a PFADD or PFMERGE that would grow it further converts it to the 12304-byte dense encoding.",
        get: |c| c.hll_sparse_max_bytes.to_string(),
        set: |c, a| {
            c.hll_sparse_max_bytes = memory_in(a, i64::MAX as u64)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "hash-max-listpack-entries",
        alias: Some("hash-max-ziplist-entries"),
        mutable: true,
        doc: "A hash with more fields than this is reported (OBJECT ENCODING, DUMP) as `hashtable` instead of `listpack`, from the write that passes it on, as Redis converts it; it never goes back (RESTORE re-decides from the contents). The storage is the same either way. Redis's built-in default; its sample redis.conf says 128.",
        get: |c| c.encoding.hash_max_listpack_entries.to_string(),
        set: |c, a| {
            c.encoding.hash_max_listpack_entries = uint_in(a, i64::MAX as u64)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "hash-max-listpack-value",
        alias: Some("hash-max-ziplist-value"),
        mutable: true,
        doc: "A hash given a field or value longer than this many bytes becomes a `hashtable`, as above.",
        get: |c| c.encoding.hash_max_listpack_value.to_string(),
        set: |c, a| {
            c.encoding.hash_max_listpack_value = memory_in(a, i64::MAX as u64)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "zset-max-listpack-entries",
        alias: Some("zset-max-ziplist-entries"),
        mutable: true,
        doc: "A sorted set with more members than this is reported as `skiplist` instead of `listpack`, from the write that passes it on (ZADD with 0 makes every new sorted set a skiplist); *STORE results are decided from their size. The storage is the same; a skiplist keeps `-0` scores, as Redis's does.",
        get: |c| c.encoding.zset_max_listpack_entries.to_string(),
        set: |c, a| {
            c.encoding.zset_max_listpack_entries = uint_in(a, i64::MAX as u64)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "zset-max-listpack-value",
        alias: Some("zset-max-ziplist-value"),
        mutable: true,
        doc: "A sorted set given a member longer than this many bytes becomes a `skiplist`, as above.",
        get: |c| c.encoding.zset_max_listpack_value.to_string(),
        set: |c, a| {
            c.encoding.zset_max_listpack_value = memory_in(a, i64::MAX as u64)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "set-max-intset-entries",
        alias: None,
        mutable: true,
        doc: "A set of integers with more members than this (at most 2^30, as Redis caps it) is reported as `hashtable` instead of `intset`; a non-integer member does the same whatever its size. Also the order SMEMBERS and the like reply in (numeric for an intset).",
        get: |c| c.encoding.set_max_intset_entries.to_string(),
        set: |c, a| {
            c.encoding.set_max_intset_entries = uint_in(a, i64::MAX as u64)?;
            Ok(())
        },
        kept: None,
    },
    kept("list-max-listpack-size", Some("list-max-ziplist-size"), true, Kind::Int(i32::MIN as i64, i32::MAX as i64), "-2", Warn::Never,
        "Checked and reported only: Redis 7.0 reports every list as `quicklist` whatever its nodes, and so does Firn, whose lists are stored element by element. DUMP writes quicklist nodes of 8 KB (the default -2)."),
    kept("list-compress-depth", None, true, Kind::Int(0, i32::MAX as i64), "0", Warn::Never,
        "Checked and reported only: RocksDB compresses its blocks whatever the setting."),
    OptionDef {
        name: "stream-node-max-bytes",
        alias: None,
        mutable: true,
        doc: "A stream's node (Redis's listpack) takes no entry that would bring its listpack to this many bytes (0: Redis's 1 GiB cap). Firn stores entries one by one and keeps only each node's counts and size, so the option decides what Redis's nodes decide: which entries approximate trimming (`MAXLEN ~`, `MINID ~`) removes together, and XINFO's `radix-tree-keys`.",
        get: |c| c.encoding.stream_node_max_bytes.to_string(),
        set: |c, a| {
            c.encoding.stream_node_max_bytes = memory_in(a, i64::MAX as u64)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "stream-node-max-entries",
        alias: None,
        mutable: true,
        doc: "A stream's node holds at most this many entries, deleted ones included (0: no limit), with the effects described above.",
        get: |c| c.encoding.stream_node_max_entries.to_string(),
        set: |c, a| {
            c.encoding.stream_node_max_entries = uint_in(a, i64::MAX as u64)?;
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "daemonize",
        alias: None,
        mutable: false,
        doc: "Fork into the background at start, before any thread exists (as Redis: the parent exits, the child starts a new session, standard input and output go to /dev/null). Writes `pidfile` if set (`/var/run/redis.pid` when daemonized without one, as Redis); logs go to `logfile`, or nowhere when it is empty.",
        get: |c| yn(c.daemonize),
        set: |c, a| {
            c.daemonize = yes_no(a)?;
            Ok(())
        },
        kept: None,
    },
    kept("appendonly", None, true, Kind::Bool, "no", Warn::Unless("yes", "every write goes to RocksDB's write-ahead log, fsynced as appendfsync says"),
        "Reported as set: every write goes to RocksDB's write-ahead log whatever it says (`appendfsync` decides the fsync), so `no` cannot turn durability off."),
    kept("save", None, true, Kind::Words(save_schedule), "3600 1 300 100 60 10000", Warn::Always("data lives in RocksDB, durable by its write-ahead log; SAVE and BGSAVE write checkpoints on demand, never on a schedule"),
        "Reported as set: Firn writes no snapshot on a schedule (nor stops writing with `\"\"`): data is durable in RocksDB as it is written; SAVE/BGSAVE write checkpoints on demand."),
    kept("cluster-enabled", None, false, Kind::Words(cluster_enabled), "no", Warn::Never,
        "Only `no`: Firn runs standalone."),
    kept("replica-read-only", Some("slave-read-only"), true, Kind::Bool, "yes", Warn::Never, "A replica refuses write commands from its clients with READONLY; its primary's stream always applies."),
    kept("stop-writes-on-bgsave-error", None, true, Kind::Bool, "yes", Warn::Never,
        "No effect: writes stop only when the RocksDB write-ahead log cannot be written."),
    kept("maxmemory-samples", None, true, Kind::Int(1, i32::MAX as i64), "5", Warn::Never, NO_EVICTION),
    kept("maxmemory-eviction-tenacity", None, true, Kind::Int(0, 100), "10", Warn::Never, NO_EVICTION),
    kept("maxmemory-clients", None, true, Kind::MemoryOrPercent, "0", Warn::Unless("0", "clients are not evicted for their memory; client-output-buffer-limit and client-query-buffer-limit bound each client"),
        "No effect: clients are never evicted for the memory they use together; `client-output-buffer-limit` and `client-query-buffer-limit` bound each one."),
    kept("lfu-log-factor", None, true, Kind::Int(0, i32::MAX as i64), "10", Warn::Never,
        "Under an LFU `maxmemory-policy`, how slowly OBJECT FREQ's logarithmic counter grows, as in Redis (an access counts with probability 1 / ((counter - 5) × factor + 1)). Nothing is evicted."),
    kept("lfu-decay-time", None, true, Kind::Int(0, i32::MAX as i64), "1", Warn::Never,
        "Under an LFU `maxmemory-policy`, OBJECT FREQ's counter loses one per this many minutes without access (0: never), as in Redis. Nothing is evicted."),
    kept("lazyfree-lazy-eviction", None, true, Kind::Bool, "no", Warn::Never, LAZYFREE),
    kept("lazyfree-lazy-expire", None, true, Kind::Bool, "no", Warn::Never, LAZYFREE),
    kept("lazyfree-lazy-server-del", None, true, Kind::Bool, "no", Warn::Never, LAZYFREE),
    kept("lazyfree-lazy-user-del", None, true, Kind::Bool, "no", Warn::Never, LAZYFREE),
    kept("lazyfree-lazy-user-flush", None, true, Kind::Bool, "no", Warn::Never, LAZYFREE),
    kept("replica-lazy-flush", Some("slave-lazy-flush"), true, Kind::Bool, "no", Warn::Never, NO_REPLICATION),
    kept("rdbchecksum", None, false, Kind::Bool, "yes", Warn::Never, NO_RDB),
    kept("rdbcompression", None, true, Kind::Bool, "yes", Warn::Never, NO_RDB),
    kept("rdb-del-sync-files", None, true, Kind::Bool, "no", Warn::Never, NO_RDB),
    kept("rdb-save-incremental-fsync", None, true, Kind::Bool, "yes", Warn::Never, NO_RDB),
    kept("dbfilename", None, true, Kind::Words(db_filename), "dump.rdb", Warn::Never,
        "No effect: Firn writes no RDB file; its data is RocksDB's files under `dir` (CONFIG SET refuses it as protected, as Redis does by default)."),
    kept("rdb-key-save-delay", None, true, Kind::Int(i32::MIN as i64, i32::MAX as i64), "0", Warn::Never, "Redis's testing aid (hidden from CONFIG GET patterns). No effect: no RDB is saved."),
    kept("key-load-delay", None, true, Kind::Int(i32::MIN as i64, i32::MAX as i64), "0", Warn::Never, "Redis's testing aid (hidden from CONFIG GET patterns). No effect: nothing is loaded at start."),
    kept("loading-process-events-interval-bytes", None, true, Kind::Int(1024, i32::MAX as i64), "2097152", Warn::Never, "Hidden from CONFIG GET patterns, as in Redis. No effect: nothing is loaded at start."),
    kept("appendfilename", None, false, Kind::Words(aof_filename), "appendonly.aof", Warn::Never, NO_AOF),
    kept("appenddirname", None, false, Kind::Words(aof_dirname), "appendonlydir", Warn::Never, NO_AOF),
    kept("no-appendfsync-on-rewrite", None, true, Kind::Bool, "no", Warn::Never, NO_AOF),
    kept("auto-aof-rewrite-percentage", None, true, Kind::Int(0, i32::MAX as i64), "100", Warn::Never, NO_AOF),
    kept("auto-aof-rewrite-min-size", None, true, Kind::Memory(0, i64::MAX), "67108864", Warn::Never, NO_AOF),
    kept("aof-load-truncated", None, true, Kind::Bool, "yes", Warn::Never, NO_AOF),
    kept("aof-use-rdb-preamble", None, true, Kind::Bool, "yes", Warn::Never, NO_AOF),
    kept("aof-timestamp-enabled", None, true, Kind::Bool, "no", Warn::Never, NO_AOF),
    kept("aof-rewrite-incremental-fsync", None, true, Kind::Bool, "yes", Warn::Never, NO_AOF),
    kept("aof-disable-auto-gc", None, true, Kind::Bool, "no", Warn::Never, NO_AOF),
    // Followed at start-up (replication::lifecycle::start), so no warning: CONFIG
    // REWRITE writes it for a replica (Config::set_replica_of).
    kept("replicaof", Some("slaveof"), false, Kind::Words(replica_of), "", Warn::Never, "`<host> <port>`: follow that primary from start-up (a Firn, or a redis-server for a live import), as REPLICAOF does at run time; CONFIG GET shows the primary followed."),
    kept("masterauth", None, true, Kind::Text, "", Warn::Never, "The password a replica sends (AUTH) to its primary."),
    kept("masteruser", None, true, Kind::Text, "", Warn::Never, "With `masterauth`: the user a replica authenticates as (AUTH user password)."),
    kept("replica-serve-stale-data", Some("slave-serve-stale-data"), true, Kind::Bool, "yes", Warn::Never, NO_REPLICATION),
    kept("replica-ignore-maxmemory", Some("slave-ignore-maxmemory"), true, Kind::Bool, "yes", Warn::Never, NO_REPLICATION),
    kept("replica-priority", Some("slave-priority"), true, Kind::Int(0, i32::MAX as i64), "100", Warn::Never, "Reported to Sentinel (INFO slave_priority), which promotes the lowest non-zero priority; 0 is never promoted."),
    kept("replica-announced", None, true, Kind::Bool, "yes", Warn::Never, "Reported to Sentinel (INFO replica_announced)."),
    kept("replica-announce-ip", Some("slave-announce-ip"), true, Kind::Text, "", Warn::Never, "The address a replica gives its primary (REPLCONF ip-address) instead of the one the primary sees."),
    kept("replica-announce-port", Some("slave-announce-port"), true, Kind::Int(0, 65535), "0", Warn::Never, "The port a replica gives its primary (REPLCONF listening-port) instead of `port` (0)."),
    kept("replica-ignore-disk-write-errors", None, true, Kind::Bool, "no", Warn::Never, NO_REPLICATION),
    kept("repl-diskless-sync", None, true, Kind::Bool, "yes", Warn::Never, "No effect: a Firn primary always ships a RocksDB checkpoint (hard links, no snapshot file), straight from its files."),
    kept("repl-diskless-sync-delay", None, true, Kind::Int(0, i32::MAX as i64), "5", Warn::Never, "No effect: each replica's full sync starts at once, from its own checkpoint."),
    kept("repl-diskless-sync-max-replicas", None, true, Kind::Int(0, i32::MAX as i64), "0", Warn::Never, NO_REPLICATION),
    kept("repl-diskless-load", None, true, Kind::Enum(&["disabled", "on-empty-db", "swapdb"]), "disabled", Warn::Never, "No effect: a replica receives a checkpoint into `dir/repl-incoming/` and then replaces its dataset; an RDB from a redis-server is streamed key by key."),
    kept("repl-disable-tcp-nodelay", None, true, Kind::Bool, "no", Warn::Never, NO_REPLICATION),
    kept("repl-ping-replica-period", Some("repl-ping-slave-period"), true, Kind::Int(1, i32::MAX as i64), "10", Warn::Never, "Seconds between the PINGs a primary puts into its stream while replicas are connected, so that they can tell a silent primary from a dead one."),
    kept("repl-timeout", None, true, Kind::Int(1, i32::MAX as i64), "60", Warn::Never, "Seconds after which a silent primary, or a replica whose socket takes no bytes, is dropped; also the bound of each handshake step."),
    kept("repl-backlog-size", None, true, Kind::Memory(1, i64::MAX), "1048576", Warn::Never, "Bytes of the replication stream a primary keeps for partial resyncs (PSYNC). More is kept while a connected replica still needs it, up to its `client-output-buffer-limit replica` hard limit."),
    kept("repl-backlog-ttl", None, true, Kind::Int(0, i64::MAX), "3600", Warn::Never, NO_REPLICATION),
    kept("min-replicas-to-write", Some("min-slaves-to-write"), true, Kind::Int(0, i32::MAX as i64), "0", Warn::Never, "With `min-replicas-max-lag`: write commands fail with NOREPLICAS unless this many replicas acknowledged within that many seconds (0: no such rule)."),
    kept("min-replicas-max-lag", Some("min-slaves-max-lag"), true, Kind::Int(0, i32::MAX as i64), "10", Warn::Never, "Seconds since its last acknowledgement within which a replica counts for `min-replicas-to-write`."),
    kept("propagation-error-behavior", None, true, Kind::Enum(&["ignore", "panic", "panic-on-replicas"]), "ignore", Warn::Never, NO_REPLICATION),
    kept("cluster-config-file", None, false, Kind::Text, "nodes.conf", Warn::Never, NO_CLUSTER),
    kept("cluster-port", None, false, Kind::Int(0, 65535), "0", Warn::Never, NO_CLUSTER),
    kept("cluster-node-timeout", None, true, Kind::Int(0, i64::MAX), "15000", Warn::Never, NO_CLUSTER),
    kept("cluster-replica-validity-factor", Some("cluster-slave-validity-factor"), true, Kind::Int(0, i32::MAX as i64), "10", Warn::Never, NO_CLUSTER),
    kept("cluster-migration-barrier", None, true, Kind::Int(0, i32::MAX as i64), "1", Warn::Never, NO_CLUSTER),
    kept("cluster-allow-replica-migration", None, true, Kind::Bool, "yes", Warn::Never, NO_CLUSTER),
    kept("cluster-require-full-coverage", None, true, Kind::Bool, "yes", Warn::Never, NO_CLUSTER),
    kept("cluster-replica-no-failover", Some("cluster-slave-no-failover"), true, Kind::Bool, "no", Warn::Never, NO_CLUSTER),
    kept("cluster-allow-reads-when-down", None, true, Kind::Bool, "no", Warn::Never, NO_CLUSTER),
    kept("cluster-allow-pubsubshard-when-down", None, true, Kind::Bool, "yes", Warn::Never, NO_CLUSTER),
    kept("cluster-announce-ip", None, true, Kind::Text, "", Warn::Never, NO_CLUSTER),
    kept("cluster-announce-hostname", None, true, Kind::Text, "", Warn::Never, NO_CLUSTER),
    kept("cluster-announce-port", None, true, Kind::Int(0, 65535), "0", Warn::Never, NO_CLUSTER),
    kept("cluster-announce-bus-port", None, true, Kind::Int(0, 65535), "0", Warn::Never, NO_CLUSTER),
    kept("cluster-announce-tls-port", None, true, Kind::Int(0, 65535), "0", Warn::Never, NO_CLUSTER),
    kept("cluster-preferred-endpoint-type", None, true, Kind::Enum(&["ip", "hostname", "unknown-endpoint"]), "ip", Warn::Never, NO_CLUSTER),
    kept("cluster-link-sendbuf-limit", None, true, Kind::UMemory(0, u64::MAX), "0", Warn::Never, NO_CLUSTER),
    kept("unixsocket", None, false, Kind::Text, "", Warn::Unless("", "Firn listens on TCP only (bind, port)"),
        "No effect: Firn listens on TCP only."),
    kept("unixsocketperm", None, false, Kind::Octal(0o777), "0", Warn::Never, "No effect: Firn listens on TCP only."),
    kept("socket-mark-id", None, false, Kind::UInt(0, u32::MAX as u64), "0", Warn::Never, "No effect: Firn sets no socket mark."),
    kept("bind-source-addr", None, true, Kind::Text, "", Warn::Never, NO_REPLICATION),
    kept("supervised", None, false, Kind::Enum(&["upstart", "systemd", "auto", "no"]), "no", Warn::Unless("no", "Firn sends no readiness notification; it is ready once it accepts connections"),
        "No effect: Firn sends no upstart/systemd readiness notification (a `Type=simple` unit, or `daemonize yes` with `Type=forking` and `pidfile`, work)."),
    kept("syslog-enabled", None, false, Kind::Bool, "no", Warn::Unless("no", "logs go to logfile (or standard output)"), "No effect: Firn logs to `logfile` or standard output, not to syslog."),
    kept("syslog-ident", None, false, Kind::Text, "redis", Warn::Never, "No effect: no syslog."),
    kept("syslog-facility", None, false, Kind::Enum(&["user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"]), "local0", Warn::Never, "No effect: no syslog."),
    kept("always-show-logo", None, false, Kind::Bool, "no", Warn::Never, "No effect: Firn shows no logo."),
    kept("set-proc-title", None, false, Kind::Bool, "yes", Warn::Never, NO_PROC_TITLE),
    kept("proc-title-template", None, true, Kind::Text, "{title} {listen-addr} {server-mode}", Warn::Never, NO_PROC_TITLE),
    kept("crash-log-enabled", None, true, Kind::Bool, "yes", Warn::Never, "No effect: a Rust panic prints its own report."),
    kept("crash-memcheck-enabled", None, true, Kind::Bool, "yes", Warn::Never, "No effect: no memory test after a crash."),
    kept("use-exit-on-panic", None, true, Kind::Bool, "no", Warn::Never, "Redis's testing aid, hidden from CONFIG GET patterns. No effect."),
    kept("watchdog-period", None, true, Kind::Int(0, i32::MAX as i64), "0", Warn::Never, "Redis's debugging aid, hidden from CONFIG GET patterns. No effect."),
    kept("shutdown-timeout", None, true, Kind::Int(0, i32::MAX as i64), "10", Warn::Never, "No effect: shutdown waits for no replicas (Firn has none)."),
    kept("shutdown-on-sigint", None, true, Kind::Flags(SHUTDOWN_FLAGS), "default", Warn::Never, SHUTDOWN_SIGNAL),
    kept("shutdown-on-sigterm", None, true, Kind::Flags(SHUTDOWN_FLAGS), "default", Warn::Never, SHUTDOWN_SIGNAL),
    kept("io-threads-do-reads", None, false, Kind::Bool, "no", Warn::Never, "No effect: Firn's network threads always read and parse requests (io-threads sizes its cold-read pool)."),
    kept("activerehashing", None, true, Kind::Bool, "yes", Warn::Never, "No effect: Firn has no incrementally rehashed main dictionary."),
    kept("activedefrag", None, true, Kind::Bool, "no", Warn::Never, NO_DEFRAG),
    kept("active-defrag-ignore-bytes", None, true, Kind::UMemory(1, i64::MAX as u64), "104857600", Warn::Never, NO_DEFRAG),
    kept("active-defrag-threshold-lower", None, true, Kind::Int(0, 1000), "10", Warn::Never, NO_DEFRAG),
    kept("active-defrag-threshold-upper", None, true, Kind::Int(0, 1000), "100", Warn::Never, NO_DEFRAG),
    kept("active-defrag-cycle-min", None, true, Kind::Int(1, 99), "1", Warn::Never, NO_DEFRAG),
    kept("active-defrag-cycle-max", None, true, Kind::Int(1, 99), "25", Warn::Never, NO_DEFRAG),
    kept("active-defrag-max-scan-fields", None, true, Kind::Int(1, i64::MAX), "1000", Warn::Never, NO_DEFRAG),
    kept("jemalloc-bg-thread", None, true, Kind::Bool, "yes", Warn::Never, "No effect: jemalloc's background thread (Rust's allocations) is always on, and Firn's trimmer returns glibc's free pages (allocator.rs)."),
    kept("disable-thp", None, false, Kind::Bool, "yes", Warn::Never, "No effect: Firn leaves transparent huge pages as the system sets them."),
    kept("dynamic-hz", None, true, Kind::Bool, "yes", Warn::Never, "No effect: Firn has no periodic cron (see hz)."),
    kept("active-expire-effort", None, true, Kind::Int(1, 10), "1", Warn::Never, "No effect: Firn's active expiry visits due keys in expiry order, with no sampling effort to tune."),
    kept("oom-score-adj", None, true, Kind::Enum(&["no", "yes", "relative=yes", "absolute"]), "no", Warn::Unless("no", "Firn leaves its OOM score as the system set it"), "No effect: Firn does not change its OOM score."),
    kept("oom-score-adj-values", None, true, Kind::Words(oom_score_values), "0 200 800", Warn::Never, "No effect: Firn does not change its OOM score."),
    kept("server_cpulist", None, false, Kind::Text, "", Warn::Unless("", "threads are not pinned to CPUs"), NO_CPULIST),
    kept("bio_cpulist", None, false, Kind::Text, "", Warn::Unless("", "threads are not pinned to CPUs"), NO_CPULIST),
    kept("aof_rewrite_cpulist", None, false, Kind::Text, "", Warn::Never, NO_CPULIST),
    kept("bgsave_cpulist", None, false, Kind::Text, "", Warn::Never, NO_CPULIST),
    kept("ignore-warnings", None, true, Kind::Text, "", Warn::Never, "No effect: Firn makes none of the start-up checks Redis's warnings are about."),
    kept("aclfile", None, false, Kind::Text, "", Warn::Never, "The ACL file: its `user <name> rules...` lines are the users at start-up, ACL LOAD reads it again (all or nothing) and ACL SAVE writes the users to it. Not allowed together with `user` lines in the config file."),
    kept("acllog-max-len", None, true, Kind::Int(0, i64::MAX), "128", Warn::Never, "Entries ACL LOG keeps: refused commands, keys, channels and failed AUTHs, newest first."),
    kept("acl-pubsub-default", None, true, Kind::Enum(&["allchannels", "resetchannels"]), "resetchannels", Warn::Never, "The channels a new user (or selector, or `reset`) may use: none (`resetchannels`) or all (`allchannels`)."),
    kept("enable-protected-configs", None, false, Kind::Enum(PROTECTED_ACTIONS), "no", Warn::Unless("no", "CONFIG SET still refuses dir and dbfilename"), "No effect: CONFIG SET refuses `dir` and `dbfilename` whatever it says."),
    OptionDef {
        name: "enable-debug-command",
        alias: None,
        mutable: false,
        doc: "Who may run DEBUG: `no` nobody, `yes` every client, `local` only clients connected from the loopback address. Others get Redis's \"DEBUG command not allowed\" error.",
        get: |c| c.enable_debug_command.name().to_string(),
        set: |c, a| {
            c.enable_debug_command = Protected::parse(&Kind::Enum(PROTECTED_ACTIONS).check(a)?);
            Ok(())
        },
        kept: None,
    },
    OptionDef {
        name: "enable-module-command",
        alias: None,
        mutable: false,
        doc: "Who may run MODULE LOAD, LOADEX and UNLOAD (`no`, `yes`, `local`), as in Redis; allowed, they still fail: Firn loads no modules.",
        get: |c| c.enable_module_command.name().to_string(),
        set: |c, a| {
            c.enable_module_command = Protected::parse(&Kind::Enum(PROTECTED_ACTIONS).check(a)?);
            Ok(())
        },
        kept: None,
    },
    kept("sanitize-dump-payload", None, true, Kind::Enum(&["no", "yes", "clients"]), "no", Warn::Never, "No effect: RESTORE always checks a payload in full (as `yes`)."),
    tls_int!("tls-port", port, 65535, true,
        "Port of the TLS listeners (0: none), on the `bind` addresses beside `port` (which may be 0 for TLS only). CONFIG SET binds the new port, then closes the old one (its connections go on); a port that cannot be bound fails the CONFIG SET."),
    tls_text!("tls-cert-file", cert_file,
        "The server's certificate chain (PEM; leaf first). CONFIG SET of this or any other tls-* option below reloads TLS for new connections; a file that fails to load fails the CONFIG SET, and the old settings stay."),
    tls_text!("tls-key-file", key_file,
        "The private key of `tls-cert-file` (PEM: PKCS#8, PKCS#1 RSA or SEC1 EC; unencrypted: see `tls-key-file-pass`)."),
    tls_text!("tls-key-file-pass", key_file_pass,
        "Refused when the key is encrypted: rustls reads no encrypted keys (decrypt it with `openssl pkey`); a passphrase given for an unencrypted key is ignored with a warning, as OpenSSL ignores it."),
    tls_text!("tls-client-cert-file", client_cert_file,
        "The certificate a replica shows its primary with `tls-replication yes` (else `tls-cert-file`)."),
    tls_text!("tls-client-key-file", client_key_file,
        "The key of `tls-client-cert-file`."),
    tls_text!("tls-client-key-file-pass", client_key_file_pass,
        "Refused like `tls-key-file-pass` when the client key is encrypted."),
    tls_text!("tls-dh-params-file", dh_params_file,
        "Ignored with a warning: rustls has no finite-field Diffie-Hellman; key exchange is always ECDHE (X25519, P-256, P-384)."),
    tls_text!("tls-ca-cert-file", ca_cert_file,
        "CA certificates (PEM) that client certificates (and a primary's, for a replica) are verified against. This or `tls-ca-cert-dir` is required unless `tls-auth-clients no`."),
    tls_text!("tls-ca-cert-dir", ca_cert_dir,
        "A directory of CA certificates (PEM): every file in it is read (OpenSSL's hashed names are not needed)."),
    OptionDef {
        name: "tls-auth-clients",
        alias: None,
        mutable: true,
        doc: "`yes`: a client must show a certificate the CAs verify; `optional`: one shown is verified; `no`: none is asked for.",
        get: |c| c.tls.auth_clients.name().to_string(),
        set: |c, a| {
            c.tls.auth_clients = TlsAuthClients::parse(&Kind::Enum(TLS_AUTH_CLIENTS).check(a)?);
            Ok(())
        },
        kept: None,
    },
    tls_text!("tls-protocols", protocols,
        "Protocol versions, space separated: `TLSv1.2`, `TLSv1.3` (empty: both). `TLSv1` and `TLSv1.1` are accepted and ignored with a warning (rustls has neither); a list with neither 1.2 nor 1.3 is an error."),
    tls_text!("tls-ciphers", ciphers,
        "TLS 1.2 cipher suites, OpenSSL names separated by `:` (`ECDHE-RSA-AES256-GCM-SHA384`, `ECDHE-ECDSA-CHACHA20-POLY1305`...; `DEFAULT`, `HIGH`, `ALL` mean all six ECDHE AEAD suites rustls has). Unknown names and `!x`/`-x`/`@...` terms are skipped; a list with nothing usable is an error, as OpenSSL refuses it."),
    tls_text!("tls-ciphersuites", ciphersuites,
        "TLS 1.3 suites, `:` separated: `TLS_AES_256_GCM_SHA384`, `TLS_AES_128_GCM_SHA256`, `TLS_CHACHA20_POLY1305_SHA256` (the CCM suites are skipped). A list with nothing usable is an error."),
    tls_bool!("tls-prefer-server-ciphers", prefer_server_ciphers,
        "Pick the cipher suite in the server's order rather than the client's."),
    tls_bool!("tls-session-caching", session_caching,
        "Resumable sessions: a server-side cache (TLS 1.2 session ids, TLS 1.3 tickets that name a cached session). `no`: no session is resumed."),
    tls_int!("tls-session-cache-size", session_cache_size, i32::MAX as i64, true,
        "Sessions the cache holds (0: no bound); the oldest go first."),
    tls_int!("tls-session-cache-timeout", session_cache_timeout_secs, i32::MAX as i64, true,
        "Seconds a cached session may be resumed for."),
    tls_bool!("tls-replication", replication,
        "A replica connects to its primary over TLS (verified against the CA options, shown `tls-client-cert-file` or else `tls-cert-file`)."),
    kept("tls-cluster", None, true, Kind::Bool, "no", Warn::Never, NO_CLUSTER),
];

/// The reasons kept options share (docs/configuration.md shows them).
const NO_REPLICATION: &str = "No effect in Firn's replication.";
const NO_CLUSTER: &str = "No effect: Firn has no cluster mode.";
const NO_EVICTION: &str =
    "No effect: Firn evicts no data (it lives on disk); only caches are trimmed to `maxmemory`.";
const LAZYFREE: &str = "No effect: deleting a big value never blocks in Firn (its members go to RocksDB range deletes and compaction), so there is nothing to free lazily.";
const NO_RDB: &str = "No effect: Firn writes no RDB file; its data is RocksDB's files under `dir`.";
const NO_AOF: &str = "No effect: Firn keeps no append-only file; RocksDB's write-ahead log (under `dir`) has its role, and is never rewritten.";
const NO_DEFRAG: &str = "No effect: Firn runs no active defragmentation.";
const NO_PROC_TITLE: &str = "No effect: Firn keeps its process title.";
const NO_CPULIST: &str = "No effect: Firn does not pin its threads to CPUs.";
const SHUTDOWN_SIGNAL: &str = "No effect: on SIGINT and SIGTERM Firn shuts down cleanly (its data is already durable), as `default` does when no save schedule is set.";
const SHUTDOWN_FLAGS: &[&str] = &["default", "save", "nosave", "now", "force"];
const PROTECTED_ACTIONS: &[&str] = &["no", "yes", "local"];

/// A protected command's switch (Redis's `enable-debug-command`): who may
/// run it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protected {
    No,
    Yes,
    /// Only clients connected from a loopback address.
    Local,
}

impl Protected {
    /// From a value [`Kind::Enum`] of `PROTECTED_ACTIONS` accepted.
    fn parse(value: &str) -> Protected {
        match value {
            "yes" => Protected::Yes,
            "local" => Protected::Local,
            _ => Protected::No,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Protected::No => "no",
            Protected::Yes => "yes",
            Protected::Local => "local",
        }
    }

    /// Whether a client connected from `peer` ("ip:port") may run the
    /// command (Redis's allowProtectedAction and islocalClient).
    pub fn allows(self, peer: &str) -> bool {
        match self {
            Protected::No => false,
            Protected::Yes => true,
            Protected::Local => {
                peer.parse::<std::net::SocketAddr>()
                    .is_ok_and(|addr| match addr.ip() {
                        std::net::IpAddr::V4(ip) => ip == std::net::Ipv4Addr::LOCALHOST,
                        std::net::IpAddr::V6(ip) => ip == std::net::Ipv6Addr::LOCALHOST,
                    })
            }
        }
    }
}

/// Options CONFIG GET lists only when named exactly (Redis's HIDDEN_CONFIG).
pub const HIDDEN_OPTIONS: &[&str] = &[
    "use-exit-on-panic",
    "rdb-key-save-delay",
    "key-load-delay",
    "watchdog-period",
    "loading-process-events-interval-bytes",
];

/// An unsigned integer option (Redis's size_t configs): a negative number
/// is out of range, not malformed.
fn uint_in(args: &[String], max: u64) -> Result<u64, String> {
    let v = firn_prims::string2ll(one(args)?.as_bytes())
        .ok_or_else(|| "argument couldn't be parsed into an integer".to_string())?;
    if v < 0 || v as u64 > max {
        return Err(format!("argument must be between 0 and {max} inclusive"));
    }
    Ok(v as u64)
}

/// `save <seconds> <changes> ...`, or `""` for none.
fn save_schedule(words: &[String]) -> Result<String, String> {
    let words: Vec<&String> = words.iter().filter(|w| !w.is_empty()).collect();
    let bad = || "Invalid save parameters".to_string();
    if !words.len().is_multiple_of(2) {
        return Err(bad());
    }
    let numbers = words
        .iter()
        .map(|w| w.parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(bad))
        .collect::<Result<Vec<i64>, String>>()?;
    Ok(numbers
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(" "))
}

fn cluster_enabled(words: &[String]) -> Result<String, String> {
    match yes_no(words)? {
        false => Ok("no".into()),
        true => Err("Firn has no cluster mode yet".into()),
    }
}

fn db_filename(words: &[String]) -> Result<String, String> {
    let name = one(words)?;
    if name.contains('/') {
        return Err("dbfilename can't be a path, just a filename".into());
    }
    Ok(name.to_string())
}

fn aof_filename(words: &[String]) -> Result<String, String> {
    let name = one(words)?;
    if name.contains('/') {
        return Err("appendfilename can't be a path, just a filename".into());
    }
    Ok(name.to_string())
}

fn aof_dirname(words: &[String]) -> Result<String, String> {
    let name = one(words)?;
    if name.contains('/') {
        return Err("appenddirname can't be a path, just a dirname".into());
    }
    Ok(name.to_string())
}

/// `replicaof <host> <port>` or `replicaof no one`.
fn replica_of(words: &[String]) -> Result<String, String> {
    match words {
        [no, one] if no.eq_ignore_ascii_case("no") && one.eq_ignore_ascii_case("one") => {
            Ok(String::new())
        }
        [host, port] => {
            let port: i64 = port
                .parse()
                .map_err(|_| "Invalid master port".to_string())?;
            if !(0..=65535).contains(&port) {
                return Err("Invalid master port".into());
            }
            Ok(format!("{host} {port}"))
        }
        [] => Ok(String::new()),
        _ => Err("wrong number of arguments".into()),
    }
}

/// Three OOM score adjustments in -2000..=2000.
fn oom_score_values(words: &[String]) -> Result<String, String> {
    if words.len() != 3 {
        return Err("wrong number of arguments".into());
    }
    let values = words
        .iter()
        .map(|w| {
            firn_prims::string2ll(w.as_bytes())
                .filter(|v| (-2000..=2000).contains(v))
                .ok_or_else(|| {
                    "Invalid oom-score-adj-values, elements must be between -2000 and 2000."
                        .to_string()
                })
        })
        .collect::<Result<Vec<i64>, String>>()?;
    Ok(values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(" "))
}

/// Percentiles in 0..=100, printed as Redis's `%f` less its trailing zeros.
fn percentiles(words: &[String]) -> Result<String, String> {
    let words: Vec<&String> = words.iter().filter(|w| !w.is_empty()).collect();
    let mut out = Vec::new();
    for w in words {
        let v: f64 = w
            .parse()
            .map_err(|_| "Invalid latency-tracking-info-percentiles parameters".to_string())?;
        if !(0.0..=100.0).contains(&v) {
            return Err(
                "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
                    .to_string(),
            );
        }
        let text = format!("{v:.6}");
        out.push(text.trim_end_matches('0').trim_end_matches('.').to_string());
    }
    Ok(out.join(" "))
}

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

/// The option `name` (or an alias) names, any case.
pub fn find_option(name: &str) -> Option<&'static OptionDef> {
    OPTIONS.iter().find(|o| o.is_named(name))
}

/// Whether Redis 7.0 has a top-level command `name` (lowercase), served by
/// Firn or not.
fn is_redis_command(name: &str) -> bool {
    crate::command_table::COMMANDS
        .iter()
        .any(|c| c.name == name)
        || crate::command_table::KEY_SPECS
            .iter()
            .any(|c| c.name == name)
}

/// Directives of redis.conf that are not options (config.c's
/// loadServerConfigFromString), and how many arguments each takes.
fn other_directive(name: &str, argc: usize) -> Option<Directive> {
    let lower = name.to_ascii_lowercase();
    Some(match (lower.as_str(), argc) {
        ("include", 1) => Directive::Include,
        ("rename-command", 2) => Directive::Rename,
        ("user", n) if n >= 1 => Directive::User,
        ("loadmodule", n) if n >= 1 => Directive::Ignored("loadmodule: Firn loads no modules"),
        // Redis 7.0 skips these deprecated options silently.
        ("list-max-ziplist-entries" | "list-max-ziplist-value" | "lua-replicate-commands", 1) => {
            Directive::Skipped
        }
        _ => return None,
    })
}

enum Directive {
    Include,
    /// `rename-command from to`.
    Rename,
    Skipped,
    /// Accepted and not applied: named at start-up with this reason.
    Ignored(&'static str),
    /// `user <name> rules...`: an ACL user, created at start-up.
    User,
}

/// Splits one config-file line into arguments as Redis does
/// (`sdssplitargs`: redis.conf quoting).
fn split_line(line: &str) -> Result<Vec<String>, String> {
    firn_prims::split_args(line.as_bytes())
        .map(|args| {
            args.into_iter()
                .map(|arg| String::from_utf8_lossy(&arg).into_owned())
                .collect()
        })
        .ok_or_else(|| "Unbalanced quotes in configuration line".to_string())
}

impl Config {
    /// The value CONFIG GET prints for option `name`, kept options
    /// included (replication reads its settings so).
    pub fn setting(&self, name: &str) -> String {
        OPTIONS
            .iter()
            .find(|o| o.name == name)
            .map(|o| o.value(self))
            .unwrap_or_default()
    }

    /// A numeric setting (0 when not a number).
    pub fn setting_u64(&self, name: &str) -> u64 {
        self.setting(name).parse().unwrap_or(0)
    }

    /// The LFU counter settings when `maxmemory-policy` is an LFU one
    /// (OBJECT FREQ counts then; Firn evicts nothing either way).
    pub fn lfu_settings(&self) -> Option<crate::lfu::LfuSettings> {
        self.maxmemory_policy
            .ends_with("-lfu")
            .then(|| crate::lfu::LfuSettings {
                log_factor: self.setting_u64("lfu-log-factor") as u32,
                decay_minutes: self.setting_u64("lfu-decay-time") as u32,
            })
    }

    /// A yes/no setting.
    pub fn setting_yes(&self, name: &str) -> bool {
        self.setting(name) == "yes"
    }

    /// Records the primary this server follows now (`None`: it is a
    /// primary). In Redis `replicaof` reads the live `server.masterhost`,
    /// so CONFIG GET shows it and CONFIG REWRITE writes it (or drops the
    /// line): Sentinel sends `SLAVEOF` then `CONFIG REWRITE` so that a
    /// reconfigured server restarts as what it became.
    pub fn set_replica_of(&mut self, primary: Option<(&str, u16)>) {
        let value = primary.map_or(String::new(), |(host, port)| format!("{host} {port}"));
        self.kept.insert("replicaof", value);
    }

    /// Applies redis.conf-syntax text.
    pub fn apply_text(&mut self, text: &str) -> Result<(), String> {
        self.apply_source(text, "", 0)
    }

    /// Applies the text of `source` (a file name for errors, "" for the
    /// flags); `depth` counts nested includes.
    fn apply_source(&mut self, text: &str, source: &str, depth: usize) -> Result<(), String> {
        let at = |lineno: usize| match source {
            "" => format!("line {lineno}"),
            file => format!("{file}, line {lineno}"),
        };
        for (lineno, line) in text.lines().enumerate() {
            let lineno = lineno + 1;
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let args = split_line(trimmed).map_err(|e| format!("{}: {e}", at(lineno)))?;
            let Some((name, values)) = args.split_first() else {
                continue;
            };
            let Some(def) = find_option(name) else {
                let directive = other_directive(name, values.len());
                if depth == 0
                    && matches!(
                        directive,
                        Some(
                            Directive::Include
                                | Directive::Rename
                                | Directive::Ignored(_)
                                | Directive::User
                        )
                    )
                {
                    self.directives.push(args.clone());
                }
                match directive {
                    Some(Directive::Include) => {
                        if depth >= 16 {
                            return Err(format!("{}: includes nested too deep", at(lineno)));
                        }
                        let included = std::fs::read_to_string(&values[0]).map_err(|e| {
                            format!(
                                "{}: cannot read included file {}: {e}",
                                at(lineno),
                                values[0]
                            )
                        })?;
                        self.apply_source(&included, &values[0], depth + 1)?;
                    }
                    Some(Directive::Skipped) => {}
                    Some(Directive::Rename) => {
                        let from = values[0].to_ascii_lowercase();
                        if !is_redis_command(&from) {
                            return Err(format!(
                                "{}: No such command in rename-command",
                                at(lineno)
                            ));
                        }
                        self.renamed_commands
                            .push((from, values[1].to_ascii_lowercase()));
                    }
                    Some(Directive::User) => self.users.push(values.to_vec()),
                    Some(Directive::Ignored(why)) => self
                        .ignored_directives
                        .push(format!("'{}' ignored ({why})", args.join(" "))),
                    None => {
                        return Err(format!(
                            "{}: Bad directive or wrong number of arguments: '{name}'",
                            at(lineno)
                        ))
                    }
                }
                continue;
            };
            let mut values = values.to_vec();
            // Several `save` lines in the file make one schedule, replacing
            // the default (as Redis reads them).
            if def.name == "save" {
                if self.save_from_file && !values.iter().all(|v| v.is_empty()) {
                    let before = def.value(self);
                    if !before.is_empty() {
                        values.insert(0, before);
                    }
                    values = values
                        .join(" ")
                        .split_whitespace()
                        .map(String::from)
                        .collect();
                }
                self.save_from_file = true;
            }
            def.apply(self, &values)
                .map_err(|e| format!("{}: '{name}': {e}", at(lineno)))?;
            if !self.given.contains(&def.name) {
                self.given.push(def.name);
            }
        }
        Ok(())
    }

    /// One line per option or directive given whose meaning Firn cannot
    /// keep, with what it does instead (logged at start-up).
    pub fn warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .given
            .iter()
            .filter_map(|name| find_option(name)?.warning(self))
            .collect();
        out.extend(self.ignored_directives.iter().cloned());
        out
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

    /// The redis.conf text CONFIG REWRITE writes: every option, current
    /// value. `users` are the ACL users' `user` lines as they are now
    /// (Redis writes them instead of the lines given, unless an `aclfile`
    /// holds the users).
    pub fn render(&self, users: &[String]) -> String {
        let quote =
            |value: &str| format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""));
        let mut out = String::from("# Written by Firn's CONFIG REWRITE.\n");
        let acl_file = !self.setting("aclfile").is_empty();
        for args in &self.directives {
            let (name, values) = args.split_first().expect("a directive has a name");
            if name.eq_ignore_ascii_case("user") {
                continue;
            }
            out.push_str(name);
            for value in values {
                out.push(' ');
                out.push_str(&quote(value));
            }
            out.push('\n');
        }
        if !acl_file {
            for line in users {
                out.push_str(line);
                out.push('\n');
            }
        }
        for def in OPTIONS {
            let value = def.value(self);
            // A kept option is written only when set to something else.
            if def.kept.as_ref().is_some_and(|k| k.default == value) {
                continue;
            }
            out.push_str(&format!("{} {}\n", def.name, quote(&value)));
        }
        out
    }
}

/// Writes `path` through a temporary file in the same directory, fsynced and
/// renamed over it, so a crash leaves either the old or the new file
/// (CONFIG REWRITE's config file, ACL SAVE's aclfile).
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(format!(".firn-rewrite-{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp_name);
    let written = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
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
         A `redis.conf` of Redis 7.0 starts Firn unchanged: every Redis 7.0 option is accepted,\n\
         under its alias too (`hash-max-ziplist-entries`, `slave-read-only`...), checked with\n\
         Redis's ranges and error texts, and reported by `CONFIG GET` as set. The options\n\
         whose meaning is \"No effect\" below are kept only for that: when the file or a flag\n\
         gives one a value Firn cannot honour (`appendonly no`, a `save` schedule, `unixsocket`,\n\
         `supervised systemd`...), the log names it at start-up, one warning line each, with\n\
         what Firn does instead. `include <file>` reads another file at that point;\n\
         `rename-command` renames or (to \"\") removes a command as in Redis; `user` lines\n\
         create ACL users at start-up; `loadmodule` is accepted and named in the log as not applied; an unknown directive is refused as Redis refuses it (`Bad directive or wrong\n\
         number of arguments`). `daemonize yes` forks into the background as Redis does.\n\n\
         This page is generated from the option table in `crates/firn-server/src/config.rs`.\n\n\
         | option | default | CONFIG SET | meaning |\n|---|---|---|---|\n",
    );
    for def in OPTIONS {
        let default = def.value(&defaults);
        let default = if default.is_empty() {
            "\"\"".to_string()
        } else {
            format!("`{default}`")
        };
        let name = match def.alias {
            Some(alias) => format!("`{}` (alias `{alias}`)", def.name),
            None => format!("`{}`", def.name),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            name,
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
         | of which memtables | 1/8 (4 MiB to 512 MiB) | writes not yet flushed to SST files; they are charged to the block cache through RocksDB's write-buffer manager, which flushes when they pass their share (it never stalls a write: a stall no flush relieves would hold every writer, as CONFIG SET maxmemory 1 once did) |\n\n\
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
        c.apply_text("rename-command KEYS \"\"\nsave 60 1\nslave-read-only no\n")
            .unwrap();
        let rendered = c.render(&[]);
        assert!(
            rendered.contains("\nrename-command \"KEYS\" \"\"\n"),
            "{rendered}"
        );
        let mut again = Config::default();
        again.apply_text(&rendered).unwrap();
        assert_eq!(again.port, 7001);
        assert_eq!(again.requirepass.as_deref(), Some("a b"));
        assert_eq!(find_option("save").unwrap().value(&again), "60 1");
        assert_eq!(
            find_option("replica-read-only").unwrap().value(&again),
            "no"
        );
        assert_eq!(again.render(&[]), rendered);
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

    /// The Debian package's /etc/firn/firn.conf (packaging/debian/): it
    /// loads with no start-up warning, sets what the unit relies on, and
    /// each option it shows commented out (`# name value`) parses as
    /// written, so uncommenting one never stops the server.
    #[test]
    fn the_packaged_firn_conf_loads_and_its_examples_parse() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../packaging/debian/firn.conf"
        );
        let config = Config::from_args(&[path.to_string()]).expect("firn.conf loads");
        assert_eq!(config.warnings(), Vec::<String>::new());
        assert_eq!(config.dir, PathBuf::from("/var/lib/firn"));
        assert_eq!(config.logfile, "/var/log/firn/firn.log");
        assert!(!config.daemonize, "the unit is Type=simple");
        let text = std::fs::read_to_string(path).unwrap();
        let mut examples = Vec::new();
        for line in text.lines() {
            let Some(example) = line.strip_prefix("# ") else {
                continue;
            };
            let name = example.split_whitespace().next().unwrap_or_default();
            if find_option(name).is_none() && name != "rename-command" {
                continue;
            }
            let mut config = Config::default();
            config
                .apply_text(example)
                .unwrap_or_else(|e| panic!("firn.conf's example `{example}`: {e}"));
            examples.push(name);
        }
        assert!(examples.len() >= 20, "only {examples:?}");
        // A line that does not parse is caught.
        assert!(Config::default().apply_text("maxmemory lots").is_err());
    }

    #[test]
    fn kept_options_check_and_print_as_redis() {
        let mut c = Config::default();
        let get = |c: &Config, name: &str| find_option(name).unwrap().value(c);
        c.apply_text(
            "slave-read-only no\noom-score-adj relative\nmaxmemory-clients 10%\n\
             unixsocketperm 700\nshutdown-on-sigint NOSAVE now\nrepl-backlog-size 2mb\n\
             save 900 1\nsave 60 100\nlatency-tracking-info-percentiles \"50 99.90\"\n",
        )
        .unwrap();
        assert_eq!(get(&c, "replica-read-only"), "no");
        assert_eq!(get(&c, "oom-score-adj"), "yes");
        assert_eq!(get(&c, "maxmemory-clients"), "10%");
        assert_eq!(get(&c, "unixsocketperm"), "700");
        assert_eq!(get(&c, "shutdown-on-sigint"), "nosave now");
        assert_eq!(get(&c, "repl-backlog-size"), "2097152");
        assert_eq!(get(&c, "save"), "900 1 60 100");
        assert_eq!(get(&c, "latency-tracking-info-percentiles"), "50 99.9");
        let err = |text: &str| Config::default().apply_text(text).unwrap_err();
        assert!(err("hash-max-ziplist-entries -1")
            .ends_with("argument must be between 0 and 9223372036854775807 inclusive"));
        assert!(
            err("list-max-ziplist-size x").ends_with("argument couldn't be parsed into an integer")
        );
        assert!(err("zset-max-listpack-value -1").ends_with("argument must be a memory value"));
        assert!(err("oom-score-adj maybe")
            .ends_with("argument(s) must be one of the following: no, yes, relative, absolute"));
        assert!(err("save 1").ends_with("Invalid save parameters"));
        assert!(err("sentinel monitor x").contains("Bad directive"));
    }

    #[test]
    fn warnings_name_what_firn_cannot_keep() {
        let mut c = Config::default();
        c.apply_text(
            "appendonly no\nappendonly yes\nsupervised systemd\nrename-command FLUSHALL \"\"\n\
             list-max-ziplist-entries 512\nloglevel notice\n",
        )
        .unwrap();
        let warnings = c.warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("'supervised systemd' has no effect in Firn"));
        // rename-command is applied, not merely named.
        assert_eq!(
            c.renamed_commands,
            [("flushall".to_string(), String::new())]
        );
        assert!(Config::default()
            .apply_text("rename-command nosuchcommand x\n")
            .unwrap_err()
            .contains("No such command in rename-command"));
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
