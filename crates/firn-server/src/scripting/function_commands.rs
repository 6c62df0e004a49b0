//! FCALL, FCALL_RO and FUNCTION. The handlers parse arguments; libraries
//! load and functions run on the script thread (`scripting/functions.rs`),
//! except FUNCTION KILL and FUNCTION STATS, which must answer while a
//! function is busy and read only the state shared with that thread.

use bytes::Bytes;
use firn_resp::Reply;
use std::sync::atomic::Ordering;

use super::commands::{kill_running, split_keys};
use super::flags::command_flags;
use super::request::{FcallRequest, Request, RestorePolicy};
use super::shared::{BUSY_EVAL, KIND_EVAL, KIND_FUNCTION};
use crate::args::is;
use crate::command_table::Flags;
use crate::commands::replies::help_reply;
use crate::commands::{def, def_keys, Ctx, Def, Deferred, Traits};
use crate::errors::{subcommand_syntax, CmdError, CmdResult};
use crate::server::Server;

/// FCALL's flags for a command line (Redis's fcallGetCommandFlags): those
/// its function declares, if it exists.
fn fcall_flags(server: &Server, args: &[Bytes], table: Flags) -> Flags {
    let Some(name) = args.get(1) else {
        return table;
    };
    let name = String::from_utf8_lossy(name).to_ascii_lowercase();
    let functions = server.scripting.shared.function_flags.read();
    match functions.get(&name) {
        Some(script) => command_flags(table, *script),
        None => table,
    }
}

pub static COMMANDS: &[Def] = &[
    def_keys("fcall", fcall, no_keys)
        .with(Traits::SCRIPT_THREAD)
        .flags_by(fcall_flags),
    def_keys("fcall_ro", fcall_ro, no_keys)
        .with(Traits::SCRIPT_THREAD)
        .flags_by(fcall_flags),
    def("function|load", function_load).with(Traits::SCRIPT_THREAD),
    def("function|delete", function_delete).with(Traits::SCRIPT_THREAD),
    def("function|flush", function_flush).with(Traits::SCRIPT_THREAD),
    def("function|list", function_list).with(Traits::SCRIPT_THREAD),
    def("function|stats", function_stats),
    def("function|kill", function_kill),
    def("function|help", function_help),
    def("function|dump", function_dump).with(Traits::SCRIPT_THREAD),
    def("function|restore", function_restore).with(Traits::SCRIPT_THREAD),
];

fn function_dump(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.deferred = Some(Deferred::Script(Request::FunctionDump));
    Ok(Reply::Null)
}

fn function_restore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() > 4 {
        return Err(crate::errors::subcommand_syntax("function", &args[1]));
    }
    let policy =
        match args.get(3) {
            None => RestorePolicy::Append,
            Some(word) if is(word, "append") => RestorePolicy::Append,
            Some(word) if is(word, "replace") => RestorePolicy::Replace,
            Some(word) if is(word, "flush") => RestorePolicy::Flush,
            Some(_) => return Err(CmdError::Static(
                "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
            )),
        };
    ctx.deferred = Some(Deferred::Script(Request::FunctionRestore {
        payload: args[2].clone(),
        policy,
    }));
    Ok(Reply::Null)
}

/// Functions take their locks on the script thread.
fn no_keys(_args: &[Bytes], _db: u8) -> Vec<(u8, Bytes)> {
    Vec::new()
}

fn fcall_generic(ctx: &mut Ctx<'_>, args: &[Bytes], read_only: bool) -> CmdResult {
    if crate::args::parse_i64(&args[2]).is_none() {
        return Err(CmdError::Static("ERR Bad number of keys provided"));
    }
    let (keys, argv) = split_keys(args)?;
    ctx.deferred = Some(Deferred::Script(Request::Fcall(FcallRequest {
        name: String::from_utf8_lossy(&args[1]).into_owned(),
        keys,
        argv,
        read_only,
        command: args.to_vec(),
    })));
    Ok(Reply::Null)
}

fn fcall(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    fcall_generic(ctx, args, false)
}

fn fcall_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    fcall_generic(ctx, args, true)
}

fn function_load(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut replace = false;
    for option in &args[2..args.len() - 1] {
        if is(option, "replace") {
            replace = true;
        } else {
            let mut text = b"ERR Unknown option given: ".to_vec();
            text.extend_from_slice(option);
            return Err(CmdError::Text(text.into()));
        }
    }
    let code = args[args.len() - 1].clone();
    ctx.deferred = Some(Deferred::Script(Request::FunctionLoad { code, replace }));
    Ok(Reply::Null)
}

fn function_delete(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.deferred = Some(Deferred::Script(Request::FunctionDelete(args[2].clone())));
    Ok(Reply::Null)
}

fn function_flush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    match args.get(2) {
        None => {}
        Some(_) if args.len() > 3 => return Err(subcommand_syntax("function", &args[1])),
        Some(mode) if is(mode, "sync") || is(mode, "async") => {}
        Some(_) => {
            return Err(CmdError::Static(
                "ERR FUNCTION FLUSH only supports SYNC|ASYNC option",
            ))
        }
    }
    ctx.deferred = Some(Deferred::Script(Request::FunctionFlush));
    Ok(Reply::Null)
}

fn function_list(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut pattern = None;
    let mut with_code = false;
    let mut i = 2;
    while i < args.len() {
        let arg = &args[i];
        // Each option once: a repeated one is an unknown argument, as in Redis.
        if !with_code && is(arg, "withcode") {
            with_code = true;
        } else if pattern.is_none() && is(arg, "libraryname") {
            let Some(value) = args.get(i + 1) else {
                return Err(CmdError::Static("ERR library name argument was not given"));
            };
            pattern = Some(value.clone());
            i += 1;
        } else {
            let mut text = b"ERR Unknown argument ".to_vec();
            text.extend_from_slice(arg);
            return Err(CmdError::Text(text.into()));
        }
        i += 1;
    }
    ctx.deferred = Some(Deferred::Script(Request::FunctionList {
        pattern,
        with_code,
    }));
    Ok(Reply::Null)
}

/// Answered on the network thread from the shared counters.
fn function_stats(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let shared = &ctx.server.scripting.shared;
    let running = shared.running.load(Ordering::Acquire);
    if running == KIND_EVAL {
        return Err(CmdError::Static(BUSY_EVAL));
    }
    let running_script = match shared.running_function.lock().clone() {
        Some((name, command)) if running == KIND_FUNCTION => Reply::Map(vec![
            (Reply::bulk("name"), Reply::bulk(Bytes::from(name))),
            (
                Reply::bulk("command"),
                Reply::Array(command.into_iter().map(Reply::Bulk).collect()),
            ),
            (
                Reply::bulk("duration_ms"),
                Reply::Integer(firn_storage::now_ms().saturating_sub(shared.started_ms()) as i64),
            ),
        ]),
        _ => Reply::Null,
    };
    let engine = Reply::Map(vec![
        (
            Reply::bulk("libraries_count"),
            Reply::Integer(shared.libraries_count.load(Ordering::Relaxed) as i64),
        ),
        (
            Reply::bulk("functions_count"),
            Reply::Integer(shared.functions_count.load(Ordering::Relaxed) as i64),
        ),
    ]);
    Ok(Reply::Map(vec![
        (Reply::bulk("running_script"), running_script),
        (
            Reply::bulk("engines"),
            Reply::Map(vec![(Reply::bulk("LUA"), engine)]),
        ),
    ]))
}

fn function_kill(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    kill_running(ctx, KIND_FUNCTION)
}

const FUNCTION_HELP: &[&str] = &[
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
];

fn function_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(help_reply(FUNCTION_HELP))
}
