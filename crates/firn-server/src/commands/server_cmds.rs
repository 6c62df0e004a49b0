//! Server commands: INFO, DBSIZE, FLUSHDB/FLUSHALL, SWAPDB, TIME, LASTSAVE,
//! MONITOR, CONFIG, COMMAND, SHUTDOWN, SAVE/BGSAVE, SLOWLOG.
//!
//! FLUSHDB, FLUSHALL and SWAPDB hold every key lock only while they queue
//! their batch (a range delete or a database-map change, both O(1)); like
//! any write, their reply waits for durability without holding the locks.
//! Checkpoints block, so they run as `Deferred::Blocking` jobs, never on a
//! network thread.

use bytes::Bytes;
use firn_prims::glob::glob_match;
use firn_resp::Reply;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{def, def_all, Ctx, Def, Deferred};
use crate::args::{is, parse_i64};
use crate::command_table::Flags;
use crate::command_table::{CommandSpec, MetaValue};
use crate::commands::replies::help_reply;
use crate::config::{find_option, OptionDef, HIDDEN_OPTIONS, OPTIONS};
use crate::errors::{
    storage_error_text, subcommand_syntax, CmdError, CmdResult, DB_OUT_OF_RANGE, SYNTAX,
};
use crate::keyspecs;
use crate::server::Server;

pub const COMMANDS: &[Def] = &[
    def("info", info),
    def("dbsize", dbsize),
    def("memory|stats", memory_stats),
    def("memory|doctor", memory_doctor),
    def("memory|malloc-stats", memory_malloc_stats),
    def("memory|purge", memory_purge),
    def("memory|help", memory_help),
    def_all("flushdb", flushdb),
    def_all("flushall", flushall),
    def_all("swapdb", swapdb),
    def("time", time),
    def("lolwut", lolwut),
    def("lastsave", lastsave),
    def("config|get", config_get),
    def("config|set", config_set).redacts(config_set_secrets),
    def("config|resetstat", config_resetstat),
    def("config|rewrite", config_rewrite),
    def("config|help", config_help),
    def("command", command),
    def("command|count", command_count),
    def("command|info", command_info),
    def("command|docs", command_docs),
    def("command|list", command_list),
    def("command|getkeys", command_getkeys),
    def("command|getkeysandflags", command_getkeysandflags),
    def("command|help", command_help),
    def("shutdown", shutdown),
    def("save", save),
    def("bgsave", bgsave),
    def("slowlog|get", slowlog_get),
    def("slowlog|len", slowlog_len),
    def("slowlog|reset", slowlog_reset),
    def("slowlog|help", slowlog_help),
    def("slowlog|coldget", slowlog_coldget),
    def("slowlog|coldlen", slowlog_coldlen),
    def("slowlog|coldreset", slowlog_coldreset),
];

fn info(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sections: Vec<String> = args[1..]
        .iter()
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
        .collect();
    let text = crate::info::render(ctx.server, &sections);
    Ok(Reply::Verbatim {
        format: *b"txt",
        text: Bytes::from(text),
    })
}

/// The keys of every submitted batch (a write counts before it is
/// durable, as it is visible), and inside EXEC or a script the unit's own
/// changes so far, flushes included.
fn memory_stats(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    use crate::info::memory::MemoryStat;
    let bytes = |n: u64| Reply::Integer(n.min(i64::MAX as u64) as i64);
    let mut pairs = Vec::new();
    for (name, stat) in crate::info::memory::memory_stats(ctx.server) {
        match stat {
            MemoryStat::Bytes(n) => pairs.push((Reply::bulk(name), bytes(n))),
            MemoryStat::Ratio(r) => pairs.push((Reply::bulk(name), Reply::Double(r))),
            MemoryStat::Dbs(dbs) => {
                for db in dbs {
                    let overheads = [
                        "overhead.hashtable.main",
                        "overhead.hashtable.expires",
                        "overhead.hashtable.slot-to-keys",
                    ]
                    .into_iter()
                    .map(|n| (Reply::bulk(n), bytes(0)))
                    .collect();
                    pairs.push((
                        Reply::Bulk(Bytes::from(format!("db.{db}"))),
                        Reply::Map(overheads),
                    ));
                }
            }
        }
    }
    Ok(Reply::Map(pairs))
}

/// Redis's report when it finds nothing to say.
fn memory_doctor(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::verbatim_text(Bytes::from_static(
        b"Hi Sam, I can't find any memory issue in your instance. \
          I can only account for what occurs on this base.\n",
    )))
}

/// jemalloc's statistics, as Redis built with jemalloc answers (and its
/// answer without it where Firn has no jemalloc).
fn memory_malloc_stats(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::bulk(crate::allocator::stats_text().unwrap_or_else(
        || "Stats not supported for the current allocator".into(),
    )))
}

/// Gives freed heap pages back to the kernel (allocator.rs), as the
/// trimmer thread does every few seconds.
fn memory_purge(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    crate::allocator::release_free_pages();
    Ok(Reply::ok())
}

const MEMORY_HELP: &[&str] = &[
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    A few sentences on how the memory budget is used.",
    "MALLOC-STATS",
    "    The memory allocator's own figures.",
    "PURGE",
    "    Hands the allocator's free pages back to the operating system.",
    "STATS",
    "    The figures of INFO memory, under Redis's MEMORY STATS names.",
    "TIERS <key>",
    "    Where <key> is (Firn's own): ram-bytes (hot tier, collection cache,",
    "    memtables), disk-bytes (SST files, approximate), hot (1 if in the hot",
    "    tier), and the parts of ram-bytes.",
    "USAGE <key> [SAMPLES <count>]",
    "    Estimated bytes of <key> and its value; a collection's size times the",
    "    mean of its first <count> members (default: 5, 0 means all of them).",
    "HELP",
    "    Prints this help.",
];

fn memory_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(help_reply(MEMORY_HELP))
}

fn dbsize(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::Integer(ctx.txn.key_count(ctx.db()).0 as i64))
}

/// FLUSHDB/FLUSHALL accept one optional ASYNC or SYNC (both behave alike:
/// the flush is a RocksDB range delete, O(1) whatever the size).
fn check_flush_mode(args: &[Bytes]) -> CmdResult<()> {
    match args.len() {
        1 => Ok(()),
        2 if is(&args[1], "async") || is(&args[1], "sync") => Ok(()),
        _ => Err(CmdError::Static(SYNTAX)),
    }
}

// As in Redis, every key a flush removes counts as a change (INFO
// rdb_changes_since_last_save).

fn flushdb(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    check_flush_mode(args)?;
    let db = ctx.db();
    let removed = ctx.txn.flush_databases(Some(db));
    ctx.dirty(removed);
    Ok(Reply::ok())
}

fn flushall(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    check_flush_mode(args)?;
    let removed = ctx.txn.flush_databases(None);
    ctx.dirty(removed);
    Ok(Reply::ok())
}

fn swapdb(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let first = parse_i64(&args[1])
        .filter(|n| i32::try_from(*n).is_ok())
        .ok_or(CmdError::Static("ERR invalid first DB index"))?;
    let second = parse_i64(&args[2])
        .filter(|n| i32::try_from(*n).is_ok())
        .ok_or(CmdError::Static("ERR invalid second DB index"))?;
    let databases = ctx.server.engine.databases() as i64;
    if !(0..databases).contains(&first) || !(0..databases).contains(&second) {
        return Err(CmdError::Static(DB_OUT_OF_RANGE));
    }
    if first != second {
        ctx.txn.swap_databases(first as u8, second as u8)?;
    }
    // Redis counts a swap, even of a database with itself.
    ctx.dirty(1);
    Ok(Reply::ok())
}

fn time(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Ok(Reply::Array(vec![
        Reply::Bulk(Bytes::from(now.as_secs().to_string())),
        Reply::Bulk(Bytes::from(now.subsec_micros().to_string())),
    ]))
}

fn lastsave(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::Integer(
        ctx.server.last_save_unix.load(Ordering::Relaxed) as i64,
    ))
}

/// The options CONFIG GET lists for its patterns, each name once, with the
/// name to print: a plain name (or alias) is echoed as given (any case), a
/// glob (matched without case) lists the options' own names and aliases
/// that match, as Redis 7.0 does (`hash-max-*` lists both spellings),
/// except the hidden ones.
fn config_get_matches(patterns: &[Bytes]) -> Vec<(Bytes, &'static OptionDef)> {
    let mut out: Vec<(Bytes, &'static OptionDef)> = Vec::new();
    let seen = |out: &Vec<(Bytes, &'static OptionDef)>, name: &[u8]| {
        out.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    for pattern in patterns {
        let is_glob = pattern.iter().any(|b| matches!(b, b'*' | b'?' | b'['));
        if !is_glob {
            if let Some(def) = find_option(&String::from_utf8_lossy(pattern)) {
                if !seen(&out, pattern) {
                    out.push((pattern.clone(), def));
                }
            }
            continue;
        }
        for def in OPTIONS {
            if HIDDEN_OPTIONS.contains(&def.name) {
                continue;
            }
            for name in std::iter::once(def.name).chain(def.alias) {
                if glob_match(pattern, name.as_bytes(), true) && !seen(&out, name.as_bytes()) {
                    out.push((Bytes::from_static(name.as_bytes()), def));
                }
            }
        }
    }
    out
}

fn config_get(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let config = ctx.server.config();
    Ok(Reply::Map(
        config_get_matches(&args[2..])
            .into_iter()
            .map(|(name, def)| {
                (
                    Reply::Bulk(name),
                    Reply::Bulk(Bytes::from(def.value(&config))),
                )
            })
            .collect(),
    ))
}

/// Options Redis guards with `enable-protected-configs` (off by default), so
/// CONFIG SET refuses them with "protected" rather than "immutable".
const PROTECTED_OPTIONS: &[&str] = &["dir", "dbfilename"];

fn config_set_failed(name: &str, why: &str) -> CmdError {
    CmdError::Owned(format!(
        "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
    ))
}

/// The options a CONFIG SET names, with their new values. As in Redis, every
/// name is checked (unknown, immutable, protected, duplicate) before any
/// value, the first failure wins and is reported with the name as given.
fn config_set_targets(pairs: &[Bytes]) -> CmdResult<Vec<(&'static OptionDef, String, String)>> {
    let mut targets: Vec<(&'static OptionDef, String, String)> = Vec::new();
    for pair in pairs.chunks(2) {
        let given = String::from_utf8_lossy(&pair[0]);
        let Some(def) = find_option(&given) else {
            return Err(CmdError::Owned(format!(
                "ERR Unknown option or number of arguments for CONFIG SET - '{given}'"
            )));
        };
        let refused = if PROTECTED_OPTIONS.contains(&def.name) {
            Some("can't set protected config")
        } else if !def.mutable {
            Some("can't set immutable config")
        } else if targets
            .iter()
            .any(|(_, seen, _)| seen.eq_ignore_ascii_case(&given))
        {
            Some("duplicate parameter")
        } else {
            None
        };
        if let Some(why) = refused {
            return Err(config_set_failed(&given, why));
        }
        let value = pair.get(1).ok_or(CmdError::Static(SYNTAX))?;
        // A bad value is reported with the name given, in lowercase (an
        // alias stays the alias, as in Redis).
        targets.push((
            def,
            given.to_ascii_lowercase(),
            String::from_utf8_lossy(value).into_owned(),
        ));
    }
    Ok(targets)
}

fn config_set(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if !args.len().is_multiple_of(2) {
        return Err(CmdError::Static(SYNTAX));
    }
    let targets = config_set_targets(&args[2..])?;
    let names_requirepass = targets.iter().any(|(def, _, _)| def.name == "requirepass");
    // All values are applied to a copy first: all or none take effect.
    let mut updated = ctx.server.config().clone();
    let mut first_tls = None;
    for (def, name, value) in targets {
        def.apply(&mut updated, &[value])
            .map_err(|why| config_set_failed(&name, &why))?;
        if def.name.starts_with("tls-") && first_tls.is_none() {
            first_tls = Some(name);
        }
    }
    // New connections get the rebuilt TLS configuration; a file that does
    // not load fails the whole CONFIG SET and keeps the old one.
    if let Some(name) = first_tls {
        let old = ctx.server.config().tls.clone();
        let listen = (updated.bind.as_slice(), updated.tcp_backlog);
        crate::tls::reload(&ctx.server.tls, &old, &updated.tls, listen)
            .map_err(|why| config_set_failed(&name, &why))?;
    }
    ctx.server.engine.set_encoding_limits(updated.encoding);
    ctx.server.cold_pool.set_max_queued(updated.io_queue_max);
    ctx.server
        .engine
        .set_force_cold_reads(updated.debug_cold_reads);
    ctx.server.engine.set_sync_policy(updated.appendfsync);
    let budget = crate::config::MemoryBudget::of(updated.maxmemory);
    budget.apply(&ctx.server.engine);
    ctx.server
        .access_times
        .set_limit(budget.access_times_bytes());
    ctx.server.access_times.set_policy(updated.lfu_settings());
    crate::notify::apply(ctx.server, updated.notify_keyspace_events);
    ctx.server.latency.configure(
        updated.latency_tracking,
        updated.latency_monitor_threshold_ms,
    );
    crate::replication::apply_config(ctx.server, &updated);
    if names_requirepass {
        // Redis's updateRequirePass: the default user's passwords become
        // this one (or none: nopass).
        let password = updated.requirepass.as_deref().map(str::as_bytes);
        ctx.server.acl.set_default_password(password);
    }
    let tracking_max_keys = updated.tracking_table_max_keys;
    *ctx.server.config.write() = updated;
    crate::tracking::state::apply_limit(ctx.server, tracking_max_keys);
    Ok(Reply::ok())
}

fn config_resetstat(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.server.reset_stats();
    Ok(Reply::ok())
}

fn config_rewrite(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let path = ctx.server.config().config_file.clone();
    let path = path.ok_or(CmdError::Static(
        "ERR The server is running without a config file",
    ))?;
    // Rendered when the job runs, not here: in Sentinel's `MULTI, SLAVEOF,
    // CONFIG REWRITE, ... EXEC` every handler runs before SLAVEOF's
    // deferred part changes `replicaof`, and the file must get the new one.
    ctx.deferred = Some(Deferred::Blocking(Box::new(move |server: &Arc<Server>| {
        let users = crate::acl::state::user_lines(&server.acl.users());
        let text = server.config().render(&users);
        match crate::config::write_atomically(&path, text.as_bytes()) {
            Ok(()) => Reply::ok(),
            Err(e) => Reply::error(format!("ERR Rewriting config file: {}", os_error_text(&e))),
        }
    })));
    Ok(Reply::ok())
}

/// An I/O error as C's strerror prints it ("Permission denied"), without
/// Rust's " (os error 13)" suffix.
fn os_error_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

const CONFIG_HELP: &[&str] = &[
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern> [<pattern> ...]",
    "    Options whose names match a glob pattern, with their values.",
    "SET <option> <value> [<option> <value> ...]",
    "    Change options that may change at run time, all or none.",
    "RESETSTAT",
    "    Zero the counters INFO reports.",
    "REWRITE",
    "    Write the current options back to the config file.",
    "HELP",
    "    Print this help.",
];

fn config_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(help_reply(CONFIG_HELP))
}

/// A command-table tree as a reply, keeping Redis's RESP3 types.
pub fn meta_reply(value: &MetaValue) -> Reply {
    match value {
        MetaValue::Int(n) => Reply::Integer(*n),
        MetaValue::Simple(s) => Reply::Simple(Bytes::from_static(s.as_bytes())),
        MetaValue::Bulk(s) => Reply::Bulk(Bytes::from_static(s.as_bytes())),
        MetaValue::Array(items) => Reply::Array(items.iter().map(meta_reply).collect()),
        MetaValue::Set(items) => Reply::Set(items.iter().map(meta_reply).collect()),
        MetaValue::Map(pairs) => Reply::Map(
            pairs
                .iter()
                .map(|(k, v)| (Reply::Bulk(Bytes::from_static(k.as_bytes())), meta_reply(v)))
                .collect(),
        ),
    }
}

/// COMMAND's table: every command Firn serves and every other command of
/// Redis 7.0's table, sorted by name so replies are stable. Redis's COMMAND
/// lists its whole table, and clients build their key-routing tables from
/// it (redis-py's CommandsParser), so a command Firn does not serve yet
/// (CLUSTER, MIGRATE, ... answered as unknown commands) is listed too.
fn listed() -> Vec<&'static CommandSpec> {
    let mut specs: Vec<&'static CommandSpec> = crate::commands::registry()
        .specs()
        .chain(crate::command_table::UNSERVED.iter())
        .collect();
    specs.sort_by_key(|s| s.name);
    specs
}

/// Redis's lookupCommand over COMMAND's table: `name` alone, or the
/// container's subcommand when the container has subcommands and `sub` is
/// given.
fn resolve(name: &[u8], sub: Option<&[u8]>) -> Option<&'static CommandSpec> {
    let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
    let top = crate::commands::registry()
        .specs()
        .chain(crate::command_table::UNSERVED.iter())
        .find(|s| s.name == lower)?;
    match sub {
        Some(sub) if !top.subcommands.is_empty() => {
            let full = format!(
                "{lower}|{}",
                String::from_utf8_lossy(sub).to_ascii_lowercase()
            );
            top.subcommands.iter().find(|s| s.name == full)
        }
        _ => Some(top),
    }
}

/// A name as COMMAND INFO/DOCS take it: `get` or `config|get`.
fn find_any(name: &[u8]) -> Option<&'static CommandSpec> {
    match name.iter().position(|&b| b == b'|') {
        None => resolve(name, None),
        Some(bar) => {
            let spec = resolve(&name[..bar], Some(&name[bar + 1..]))?;
            // "get|x" names no subcommand of a plain command.
            spec.name.contains('|').then_some(spec)
        }
    }
}

/// A COMMAND INFO entry, its container's subcommands included.
fn info_reply(spec: &'static CommandSpec) -> Reply {
    match (&spec.info, spec.subcommands.is_empty()) {
        (MetaValue::Array(fields), false) => Reply::Array(
            fields
                .iter()
                .enumerate()
                .map(|(i, field)| match i {
                    9 => Reply::Array(spec.subcommands.iter().map(info_reply).collect()),
                    _ => meta_reply(field),
                })
                .collect(),
        ),
        (info, _) => meta_reply(info),
    }
}

/// A COMMAND DOCS value, its container's subcommands included.
fn docs_reply(spec: &'static CommandSpec) -> Reply {
    match (&spec.docs, spec.subcommands.is_empty()) {
        (MetaValue::Map(pairs), false) => Reply::Map(
            pairs
                .iter()
                .map(|(key, value)| {
                    let value = if *key == "subcommands" {
                        Reply::Map(
                            spec.subcommands
                                .iter()
                                .map(|s| {
                                    (
                                        Reply::Bulk(Bytes::from_static(s.name.as_bytes())),
                                        docs_reply(s),
                                    )
                                })
                                .collect(),
                        )
                    } else {
                        meta_reply(value)
                    };
                    (Reply::Bulk(Bytes::from_static(key.as_bytes())), value)
                })
                .collect(),
        ),
        (docs, _) => meta_reply(docs),
    }
}

fn command(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::Array(listed().into_iter().map(info_reply).collect()))
}

fn command_count(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::Integer(listed().len() as i64))
}

fn command_info(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() == 2 {
        return command(ctx, args);
    }
    Ok(Reply::Array(
        args[2..]
            .iter()
            .map(|name| find_any(name).map_or(Reply::Null, info_reply))
            .collect(),
    ))
}

fn command_docs(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let specs: Vec<&'static CommandSpec> = if args.len() == 2 {
        listed()
    } else {
        args[2..].iter().filter_map(|name| find_any(name)).collect()
    };
    Ok(Reply::Map(
        specs
            .into_iter()
            .map(|s| {
                (
                    Reply::Bulk(Bytes::from_static(s.name.as_bytes())),
                    docs_reply(s),
                )
            })
            .collect(),
    ))
}

/// The ACL categories listed in a command's COMMAND INFO entry.
fn acl_categories(spec: &CommandSpec) -> Vec<&'static str> {
    match &spec.info {
        MetaValue::Array(fields) => match fields.get(6) {
            Some(MetaValue::Set(cats)) | Some(MetaValue::Array(cats)) => cats
                .iter()
                .filter_map(|c| match c {
                    MetaValue::Simple(s) | MetaValue::Bulk(s) => Some(*s),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn command_list(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut names: Vec<&'static str> = Vec::new();
    for spec in listed() {
        names.push(spec.name);
        names.extend(spec.subcommands.iter().map(|s| s.name));
    }
    let filtered: Vec<&'static str> = match args.len() {
        2 => names,
        5 if is(&args[2], "filterby") => {
            let value = &args[4];
            if is(&args[3], "module") {
                Vec::new()
            } else if is(&args[3], "aclcat") {
                let wanted = format!("@{}", String::from_utf8_lossy(value).to_ascii_lowercase());
                names
                    .into_iter()
                    .filter(|n| {
                        find_any(n.as_bytes())
                            .is_some_and(|s| acl_categories(s).contains(&wanted.as_str()))
                    })
                    .collect()
            } else if is(&args[3], "pattern") {
                names
                    .into_iter()
                    .filter(|n| glob_match(value, n.as_bytes(), true))
                    .collect()
            } else {
                return Err(CmdError::Static(SYNTAX));
            }
        }
        _ => return Err(CmdError::Static(SYNTAX)),
    };
    Ok(Reply::Array(
        filtered
            .into_iter()
            .map(|n| Reply::Bulk(Bytes::from_static(n.as_bytes())))
            .collect(),
    ))
}

/// The keys of `args[2..]` with their flags, found as Redis finds them
/// for any command it has (served or not), with Redis's checks in Redis's
/// order: known command, has keys, arity, keys found.
fn keys_of(args: &[Bytes]) -> CmdResult<Vec<(Bytes, Vec<&'static str>)>> {
    let full = &args[2..];
    let cmd = keyspecs::lookup(full).ok_or(CmdError::Static("ERR Invalid command specified"))?;
    if !cmd.has_keys() {
        return Err(CmdError::Static("ERR The command has no key arguments"));
    }
    if !cmd.arity_ok(full.len()) {
        return Err(CmdError::Static(
            "ERR Invalid number of arguments specified for command",
        ));
    }
    if cmd.keys(full).is_empty() && !cmd.flags.contains(Flags::NO_MANDATORY_KEYS) {
        return Err(CmdError::Static(
            "ERR Invalid arguments specified for command",
        ));
    }
    Ok(cmd
        .keys_with_flags(full)
        .into_iter()
        .map(|k| (full[k.pos].clone(), k.flags.names()))
        .collect())
}

fn command_getkeys(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    Ok(Reply::Array(
        keys_of(args)?
            .into_iter()
            .map(|(key, _)| Reply::Bulk(key))
            .collect(),
    ))
}

fn command_getkeysandflags(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    Ok(Reply::Array(
        keys_of(args)?
            .into_iter()
            .map(|(key, flags)| {
                let flags = flags
                    .into_iter()
                    .map(|f| Reply::Simple(Bytes::from_static(f.as_bytes())))
                    .collect();
                Reply::Array(vec![Reply::Bulk(key), Reply::Set(flags)])
            })
            .collect(),
    ))
}

const COMMAND_HELP: &[&str] = &[
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Every command of Redis 7.0's table (and Firn's own), with its arity, flags",
    "    and keys, served or not.",
    "COUNT",
    "    How many commands the table holds.",
    "LIST [FILTERBY (MODULE <name>|ACLCAT <category>|PATTERN <glob>)]",
    "    Names of the commands in the table, optionally filtered.",
    "INFO [<command-name> ...]",
    "    Arity, flags, key positions and ACL categories of commands.",
    "DOCS [<command-name> ...]",
    "    Summary, arguments and history of commands.",
    "GETKEYS <full-command>",
    "    The keys a full command would touch.",
    "GETKEYSANDFLAGS <full-command>",
    "    The keys a full command would touch, with their access flags.",
    "HELP",
    "    Print this help.",
];

fn command_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(help_reply(COMMAND_HELP))
}

fn shutdown(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (mut save, mut nosave, mut abort) = (false, false, false);
    for opt in &args[1..] {
        if is(opt, "save") {
            save = true;
        } else if is(opt, "nosave") {
            nosave = true;
        } else if is(opt, "abort") {
            abort = true;
        } else if !(is(opt, "now") || is(opt, "force")) {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    if (save && nosave) || (abort && args.len() > 2) {
        return Err(CmdError::Static(SYNTAX));
    }
    if abort {
        return Err(CmdError::Static("ERR No shutdown in progress."));
    }
    // Every acknowledged write is already in the WAL; SAVE also writes a
    // checkpoint before exiting.
    ctx.deferred = Some(Deferred::Shutdown { save });
    Ok(Reply::ok())
}

/// Writes `<dir>/checkpoint`; returns the reply for SAVE/BGSAVE's outcome.
fn checkpoint(server: &Server) -> Result<(), String> {
    let dir = server.config().dir.join("checkpoint");
    let dirty_before = server.stats.dirty.load(Ordering::Relaxed);
    server
        .engine
        .checkpoint(&dir)
        .map_err(|e| storage_error_text(&e))?;
    // Changes made while the checkpoint was written are still unsaved.
    server
        .stats
        .dirty
        .fetch_sub(dirty_before, Ordering::Relaxed);
    server
        .last_save_unix
        .store(firn_storage::now_ms() / 1000, Ordering::Relaxed);
    Ok(())
}

fn save(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    if ctx.server.bgsave_in_progress.load(Ordering::Acquire) {
        return Err(CmdError::Static("ERR Background save already in progress"));
    }
    ctx.deferred = Some(Deferred::Blocking(Box::new(
        |server: &Arc<Server>| match checkpoint(server) {
            Ok(()) => Reply::ok(),
            Err(e) => Reply::error(e),
        },
    )));
    Ok(Reply::ok())
}

fn bgsave(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    match args.len() {
        1 => {}
        2 if is(&args[1], "schedule") => {}
        _ => return Err(CmdError::Static(SYNTAX)),
    }
    if ctx.server.bgsave_in_progress.swap(true, Ordering::AcqRel) {
        return Err(CmdError::Static("ERR Background save already in progress"));
    }
    let server = ctx.server.clone();
    let spawned = std::thread::Builder::new()
        .name("firn-bgsave".into())
        .spawn(move || {
            let ok = match checkpoint(&server) {
                Ok(()) => true,
                Err(e) => {
                    tracing::error!(error = %e, "background checkpoint failed");
                    false
                }
            };
            server.last_bgsave_ok.store(ok, Ordering::Release);
            server.bgsave_in_progress.store(false, Ordering::Release);
        });
    if spawned.is_err() {
        ctx.server
            .bgsave_in_progress
            .store(false, Ordering::Release);
        return Err(CmdError::Static(
            "ERR cannot start the background save thread",
        ));
    }
    Ok(Reply::Simple(Bytes::from_static(
        b"Background saving started",
    )))
}

/// SLOWLOG GET's and COLDGET's `[count]`: 10 by default, -1 for all.
fn slowlog_count(args: &[Bytes]) -> CmdResult<usize> {
    if args.len() > 3 {
        return Err(subcommand_syntax("slowlog", &args[1]));
    }
    Ok(match args.get(2) {
        None => 10,
        Some(raw) => {
            let n = parse_i64(raw).unwrap_or(i64::MIN);
            if n < -1 {
                return Err(CmdError::Static(
                    "ERR count should be greater than or equal to -1",
                ));
            }
            if n == -1 {
                usize::MAX
            } else {
                n as usize
            }
        }
    })
}

fn slowlog_get(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let count = slowlog_count(args)?;
    let log = ctx.server.slowlog.lock();
    Ok(Reply::Array(
        log.entries
            .iter()
            .take(count)
            .map(|e| {
                Reply::Array(vec![
                    Reply::Integer(e.id as i64),
                    Reply::Integer(e.unix_secs as i64),
                    Reply::Integer(e.micros as i64),
                    Reply::Array(e.args.iter().cloned().map(Reply::Bulk).collect()),
                    Reply::Bulk(Bytes::from(e.addr.clone())),
                    Reply::Bulk(e.name.clone()),
                ])
            })
            .collect(),
    ))
}

fn slowlog_len(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::Integer(
        ctx.server.slowlog.lock().entries.len() as i64
    ))
}

fn slowlog_reset(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.server.slowlog.lock().entries.clear();
    Ok(Reply::ok())
}

/// The slow-cold-read log (coldlog.rs), laid out as SLOWLOG GET's entries
/// where they match: id, Unix time, wait in µs, the command's name and
/// first key (as the arguments), client address, client name; then the
/// queue wait in µs and the queue length it found.
fn slowlog_coldget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let count = slowlog_count(args)?;
    let entries = ctx.server.cold_log.entries(count);
    Ok(Reply::Array(
        entries
            .into_iter()
            .map(|e| {
                let mut command = vec![Reply::Bulk(Bytes::from(e.command))];
                if !e.key.is_empty() {
                    command.push(Reply::Bulk(e.key));
                }
                Reply::Array(vec![
                    Reply::Integer(e.id as i64),
                    Reply::Integer(e.unix_secs as i64),
                    Reply::Integer(e.wait_us as i64),
                    Reply::Array(command),
                    Reply::Bulk(Bytes::from(e.addr)),
                    Reply::Bulk(e.name),
                    Reply::Integer(e.queue_wait_us as i64),
                    Reply::Integer(e.queue_len as i64),
                ])
            })
            .collect(),
    ))
}

fn slowlog_coldlen(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::Integer(ctx.server.cold_log.len() as i64))
}

fn slowlog_coldreset(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.server.cold_log.reset();
    Ok(Reply::ok())
}

const SLOWLOG_HELP: &[&str] = &[
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    The newest <count> entries (default 10, -1 for all): id, Unix time,",
    "    duration in microseconds, arguments, client address, client name.",
    "LEN",
    "    How many entries the slow log holds.",
    "RESET",
    "    Empty the slow log.",
    "COLDGET [<count>]",
    "    Firn's log of commands that waited on the disk, newest first (default",
    "    10, -1 for all): id, Unix time, wait in microseconds, [command, first",
    "    key], client address, client name, queue wait in microseconds, queue",
    "    length found.",
    "COLDLEN",
    "    How many entries the cold-read log holds.",
    "COLDRESET",
    "    Empty the cold-read log.",
    "HELP",
    "    Print this help.",
];

/// LOLWUT [VERSION v] [...]: a drawing and the version. Firn draws firn,
/// old snow pressed into grains, whatever the version asked for.
fn lolwut(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut at = 1;
    while at < args.len() {
        if is(&args[at], "version") && at + 1 < args.len() {
            parse_i64(&args[at + 1]).ok_or(CmdError::Static(
                "ERR value is not an integer or out of range",
            ))?;
            at += 2;
        } else {
            // Redis's drawings take numbers as their parameters.
            parse_i64(&args[at]).ok_or(CmdError::Static(
                "ERR value is not an integer or out of range",
            ))?;
            at += 1;
        }
    }
    let art = concat!(
        " *   .  *    .   *  .    *   .  \n",
        "  . * . * . * . * . * . * . * . \n",
        " o.o.o.o.o.o.o.o.o.o.o.o.o.o.o.o\n",
        " OoOoOoOoOoOoOoOoOoOoOoOoOoOoOoO\n",
        " @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n",
        "\n",
        "Firn: snow from past seasons, pressed into grains on its way to ice.\n",
    );
    Ok(Reply::Verbatim {
        format: *b"txt",
        text: Bytes::from(format!(
            "{art}Firn ver. {}, Redis ver. 7.0.15\n",
            env!("CARGO_PKG_VERSION")
        )),
    })
}

fn slowlog_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(help_reply(SLOWLOG_HELP))
}

/// Options whose CONFIG SET values Redis hides (its SENSITIVE_CONFIG).
const SENSITIVE_OPTIONS: &[&str] = &[
    "requirepass",
    "masterauth",
    "masteruser",
    "tls-key-file-pass",
    "tls-client-key-file-pass",
];

/// CONFIG SET's arguments the logs hide: the value of a sensitive option.
fn config_set_secrets(args: &[Bytes]) -> Vec<usize> {
    let pairs = args.get(2..).unwrap_or_default().chunks(2).enumerate();
    pairs
        .filter(|(_, pair)| pair.len() == 2 && SENSITIVE_OPTIONS.iter().any(|o| is(&pair[0], o)))
        .map(|(i, _)| 3 + 2 * i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(items: &[&str]) -> Vec<Bytes> {
        items
            .iter()
            .map(|s| Bytes::copy_from_slice(s.as_bytes()))
            .collect()
    }

    fn names(patterns: &[&str]) -> Vec<String> {
        config_get_matches(&bytes(patterns))
            .into_iter()
            .map(|(name, _)| String::from_utf8_lossy(&name).into_owned())
            .collect()
    }

    #[test]
    fn config_get_echoes_plain_names_and_expands_globs() {
        assert_eq!(names(&["MAXCLIENTS"]), ["MAXCLIENTS"]);
        assert_eq!(names(&["slowlog*"]).len(), 2);
        assert!(names(&["SLOWLOG-*"])
            .iter()
            .all(|n| n.starts_with("slowlog-")));
        assert_eq!(names(&["data?ases"]), ["databases"]);
        assert_eq!(names(&["[p]ort"]), ["port"]);
        assert!(names(&["nosuch"]).is_empty());
        assert!(names(&["nosuch*"]).is_empty());
    }

    #[test]
    fn config_get_lists_each_option_once() {
        assert_eq!(names(&["timeout", "timeout", "time*"]), ["timeout"]);
        let listed = OPTIONS
            .iter()
            .filter(|o| !HIDDEN_OPTIONS.contains(&o.name))
            .map(|o| 1 + o.alias.is_some() as usize)
            .sum::<usize>();
        assert_eq!(names(&["*"]).len(), listed);
        assert_eq!(names(&["*", "port"]).len(), listed);
        assert_eq!(names(&["watchdog-period"]), ["watchdog-period"]);
        assert!(!names(&["watchdog*"]).contains(&"watchdog-period".to_string()));
    }

    fn set_error(args: &[&str]) -> String {
        match config_set_targets(&bytes(args)) {
            Ok(_) => "ok".into(),
            Err(e) => match e.into_reply() {
                Reply::Error(text) => String::from_utf8_lossy(&text).into_owned(),
                _ => "not an error".into(),
            },
        }
    }

    #[test]
    fn config_set_checks_every_name_before_any_value() {
        assert_eq!(set_error(&["timeout", "abc"]), "ok");
        assert_eq!(
            set_error(&["timeout", "abc", "databases", "3"]),
            "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"
        );
        assert_eq!(
            set_error(&["timeout", "1", "TIMEOUT", "2"]),
            "ERR CONFIG SET failed (possibly related to argument 'TIMEOUT') - duplicate parameter"
        );
        assert_eq!(
            set_error(&["databases", "3", "foo", "1"]),
            "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"
        );
        assert_eq!(
            set_error(&["foo", "1", "databases", "3"]),
            "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"
        );
        assert_eq!(
            set_error(&["DIR", "/tmp"]),
            "ERR CONFIG SET failed (possibly related to argument 'DIR') - can't set protected config"
        );
    }

    #[test]
    fn sensitive_config_values_are_redacted() {
        let secrets = |args: &[&str]| config_set_secrets(&bytes(args));
        assert_eq!(
            secrets(&["config", "set", "timeout", "1", "REQUIREPASS", "pw"]),
            [5]
        );
        assert_eq!(secrets(&["config", "set", "masterauth", "pw"]), [3]);
        assert!(secrets(&["config", "set", "timeout", "1"]).is_empty());
    }

    #[test]
    fn meta_values_keep_their_resp3_types() {
        static PAIRS: &[(&str, MetaValue)] = &[("a", MetaValue::Int(1))];
        static ITEMS: &[MetaValue] = &[MetaValue::Simple("x"), MetaValue::Bulk("y")];
        assert_eq!(
            meta_reply(&MetaValue::Map(PAIRS)),
            Reply::Map(vec![(
                Reply::Bulk(Bytes::from_static(b"a")),
                Reply::Integer(1)
            )])
        );
        assert_eq!(
            meta_reply(&MetaValue::Set(ITEMS)),
            Reply::Set(vec![
                Reply::Simple(Bytes::from_static(b"x")),
                Reply::Bulk(Bytes::from_static(b"y"))
            ])
        );
    }
}
