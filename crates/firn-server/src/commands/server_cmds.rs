//! Server commands: INFO, DBSIZE, FLUSHDB/FLUSHALL, SWAPDB, TIME, LASTSAVE,
//! MONITOR, CONFIG, COMMAND, SHUTDOWN, SAVE/BGSAVE, SLOWLOG.
//!
//! Whole-database operations (flush, swap, checkpoint) block until durable,
//! so they run as `Deferred::Blocking` jobs, never on a network thread.

use bytes::Bytes;
use firn_resp::Reply;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::keyspace::help_reply;
use super::{def, table_keys, Ctx, Def, Deferred};
use crate::args::{is, parse_i64};
use crate::command_table::{CommandSpec, MetaValue};
use crate::config::{find_option, OPTIONS};
use crate::errors::{
    storage_error_text, wrong_arity, CmdError, CmdResult, DB_OUT_OF_RANGE, SYNTAX,
};
use crate::glob::glob_match;
use crate::server::Server;

pub const COMMANDS: &[Def] = &[
    def("info", info),
    def("dbsize", dbsize),
    def("flushdb", flushdb),
    def("flushall", flushall),
    def("swapdb", swapdb),
    def("time", time),
    def("lastsave", lastsave),
    def("monitor", monitor),
    def("config|get", config_get),
    def("config|set", config_set),
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

fn dbsize(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::Integer(
        ctx.server.engine.key_count(ctx.db()).0 as i64,
    ))
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

fn run_flush(ctx: &mut Ctx<'_>, db: Option<u8>) {
    ctx.deferred = Some(Deferred::Blocking(Box::new(
        move |server: &Arc<Server>| match server.engine.flush(db) {
            Ok(()) => Reply::ok(),
            Err(e) => Reply::error(storage_error_text(&e)),
        },
    )));
}

fn flushdb(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    check_flush_mode(args)?;
    let db = ctx.db();
    run_flush(ctx, Some(db));
    Ok(Reply::ok())
}

fn flushall(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    check_flush_mode(args)?;
    run_flush(ctx, None);
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
        let (a, b) = (first as u8, second as u8);
        ctx.deferred = Some(Deferred::Blocking(Box::new(
            move |server: &Arc<Server>| match server.engine.swap_db(a, b) {
                Ok(()) => Reply::ok(),
                Err(e) => Reply::error(storage_error_text(&e)),
            },
        )));
    }
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

fn monitor(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.client.monitor.store(true, Ordering::Release);
    ctx.deferred = Some(Deferred::Monitor);
    Ok(Reply::ok())
}

fn config_get(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let config = ctx.server.config();
    let mut out: Vec<(Reply, Reply)> = Vec::new();
    let mut listed: Vec<&str> = Vec::new();
    for pattern in &args[2..] {
        // A plain name is echoed as given; a glob lists matching names.
        let is_glob = pattern.iter().any(|b| matches!(b, b'*' | b'?' | b'['));
        for def in OPTIONS {
            let matched = if is_glob {
                glob_match(pattern, def.name.as_bytes(), true)
            } else {
                pattern.eq_ignore_ascii_case(def.name.as_bytes())
            };
            if matched && !listed.contains(&def.name) {
                listed.push(def.name);
                let name = if is_glob {
                    Bytes::from_static(def.name.as_bytes())
                } else {
                    pattern.clone()
                };
                out.push((
                    Reply::Bulk(name),
                    Reply::Bulk(Bytes::from((def.get)(&config))),
                ));
            }
        }
    }
    Ok(Reply::Map(out))
}

fn config_set(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if !args.len().is_multiple_of(2) {
        return Err(CmdError::Static(SYNTAX));
    }
    let mut updated = ctx.server.config().clone();
    let mut seen: Vec<&str> = Vec::new();
    for pair in args[2..].chunks(2) {
        let name = String::from_utf8_lossy(&pair[0]).to_string();
        let Some(def) = find_option(&name) else {
            return Err(CmdError::Owned(format!(
                "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
            )));
        };
        let failed = |why: &str| {
            CmdError::Owned(format!(
                "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
            ))
        };
        if seen.contains(&def.name) {
            return Err(failed("duplicate parameter"));
        }
        seen.push(def.name);
        if !def.mutable {
            return Err(failed("can't set immutable config"));
        }
        let value = String::from_utf8_lossy(&pair[1]).to_string();
        (def.set)(&mut updated, &[value]).map_err(|e| failed(&e))?;
    }
    ctx.server.cold_pool.set_max_queued(updated.io_queue_max);
    ctx.server
        .engine
        .set_sync_policy(crate::config::sync_policy(updated.appendfsync));
    crate::config::MemoryBudget::of(updated.maxmemory).apply(&ctx.server.engine);
    *ctx.server.config.write() = updated;
    Ok(Reply::ok())
}

fn config_resetstat(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.server.reset_stats();
    Ok(Reply::ok())
}

fn config_rewrite(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let (path, text) = {
        let config = ctx.server.config();
        (config.config_file.clone(), config.render())
    };
    let path = path.ok_or(CmdError::Static(
        "ERR The server is running without a config file",
    ))?;
    ctx.deferred = Some(Deferred::Blocking(Box::new(
        move |_server: &Arc<Server>| match std::fs::write(&path, text) {
            Ok(()) => Reply::ok(),
            Err(e) => Reply::error(format!("ERR Rewriting config file: {e}")),
        },
    )));
    Ok(Reply::ok())
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

/// Served commands, sorted by name so replies are stable.
fn served(ctx: &Ctx<'_>) -> Vec<&'static CommandSpec> {
    let mut specs: Vec<&'static CommandSpec> = ctx.server.registry.specs().collect();
    specs.sort_by_key(|s| s.name);
    specs
}

fn find_served(ctx: &Ctx<'_>, name: &[u8]) -> Option<&'static CommandSpec> {
    let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
    let (top, sub) = match lower.split_once('|') {
        Some((top, _)) => (top.to_string(), Some(lower.clone())),
        None => (lower.clone(), None),
    };
    let spec = ctx.server.registry.specs().find(|s| s.name == top)?;
    match sub {
        None => Some(spec),
        Some(full) => spec.subcommands.iter().find(|s| s.name == full),
    }
}

fn command(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::Array(
        served(ctx).iter().map(|s| meta_reply(&s.info)).collect(),
    ))
}

fn command_count(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::Integer(served(ctx).len() as i64))
}

fn command_info(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() == 2 {
        return command(ctx, args);
    }
    Ok(Reply::Array(
        args[2..]
            .iter()
            .map(|name| find_served(ctx, name).map_or(Reply::Null, |s| meta_reply(&s.info)))
            .collect(),
    ))
}

fn command_docs(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let specs: Vec<&'static CommandSpec> = if args.len() == 2 {
        served(ctx)
    } else {
        args[2..]
            .iter()
            .filter_map(|name| find_served(ctx, name))
            .collect()
    };
    Ok(Reply::Map(
        specs
            .iter()
            .map(|s| {
                (
                    Reply::Bulk(Bytes::from_static(s.name.as_bytes())),
                    meta_reply(&s.docs),
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

fn command_list(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut names: Vec<&'static str> = Vec::new();
    for spec in served(ctx) {
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
                        find_served(ctx, n.as_bytes())
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

/// The keys of `args[2..]` as that command would see them.
fn keys_of(ctx: &Ctx<'_>, args: &[Bytes]) -> CmdResult<(Vec<Bytes>, &'static CommandSpec)> {
    let full = &args[2..];
    let command = ctx.server.registry.lookup(full).map_err(|e| match e {
        CmdError::Owned(text) if text.starts_with("ERR wrong number") => {
            CmdError::Static("ERR Invalid number of arguments specified for command")
        }
        _ => CmdError::Static("ERR Invalid command specified"),
    })?;
    let keys = table_keys(command.spec, full);
    if keys.is_empty() {
        return Err(CmdError::Static("ERR The command has no key arguments"));
    }
    Ok((keys, command.spec))
}

fn command_getkeys(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, _) = keys_of(ctx, args)?;
    Ok(Reply::Array(keys.into_iter().map(Reply::Bulk).collect()))
}

/// The key specs of a command's COMMAND INFO entry.
fn key_specs(spec: &CommandSpec) -> &'static [MetaValue] {
    let MetaValue::Array(fields) = &spec.info else {
        return &[];
    };
    match fields.get(8) {
        Some(MetaValue::Array(specs)) | Some(MetaValue::Set(specs)) => specs,
        _ => &[],
    }
}

fn spec_flags(key_spec: &MetaValue) -> Vec<Reply> {
    let MetaValue::Map(fields) = key_spec else {
        return Vec::new();
    };
    match fields
        .iter()
        .find(|(k, _)| *k == "flags")
        .map(|(_, v)| meta_reply(v))
    {
        Some(Reply::Set(items)) | Some(Reply::Array(items)) => items
            .into_iter()
            .filter(|f| !matches!(f, Reply::Simple(s) if s.as_ref() == b"variable_flags"))
            .collect(),
        _ => Vec::new(),
    }
}

/// Flags Redis computes per call for its `variable_flags` commands (its
/// setGetKeys and bitfieldGetKeys).
fn variable_flags(name: &str, full: &[Bytes]) -> Option<&'static [&'static str]> {
    match name {
        "set" if full[3..].iter().any(|a| is(a, "get")) => Some(&["RW", "access", "update"]),
        "set" => Some(&["OW", "update"]),
        "bitfield" => {
            let mut i = 2;
            while i < full.len() {
                let remaining = full.len() - i - 1;
                if is(&full[i], "get") && remaining >= 2 {
                    i += 3;
                } else if is(&full[i], "overflow") && remaining >= 1 {
                    i += 2;
                } else {
                    return Some(&["RW", "access", "update"]);
                }
            }
            Some(&["RO", "access"])
        }
        _ => None,
    }
}

fn command_getkeysandflags(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, spec) = keys_of(ctx, args)?;
    let specs = key_specs(spec);
    let fixed = variable_flags(spec.name, &args[2..]);
    Ok(Reply::Array(
        keys.into_iter()
            .enumerate()
            .map(|(i, k)| {
                let flags = match fixed {
                    Some(names) => names
                        .iter()
                        .map(|n| Reply::Simple(Bytes::from_static(n.as_bytes())))
                        .collect(),
                    // Key i belongs to spec i (the last spec covers the rest).
                    None => specs
                        .get(i.min(specs.len().saturating_sub(1)))
                        .map_or_else(Vec::new, spec_flags),
                };
                Reply::Array(vec![Reply::Bulk(k), Reply::Set(flags)])
            })
            .collect(),
    ))
}

const COMMAND_HELP: &[&str] = &[
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Every command this server serves, with its arity, flags and keys.",
    "COUNT",
    "    How many commands this server serves.",
    "LIST [FILTERBY (MODULE <name>|ACLCAT <category>|PATTERN <glob>)]",
    "    Names of the commands served, optionally filtered.",
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
    server
        .engine
        .checkpoint(&dir)
        .map_err(|e| storage_error_text(&e))?;
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

fn slowlog_get(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let count = match args.get(2) {
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
    };
    if args.len() > 3 {
        return Err(wrong_arity("slowlog|get"));
    }
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

const SLOWLOG_HELP: &[&str] = &[
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    The newest <count> entries (default 10, -1 for all): id, Unix time,",
    "    duration in microseconds, arguments, client address, client name.",
    "LEN",
    "    How many entries the slow log holds.",
    "RESET",
    "    Empty the slow log.",
    "HELP",
    "    Print this help.",
];

fn slowlog_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(help_reply(SLOWLOG_HELP))
}
