//! EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT. The handlers only parse
//! and check arguments on the network thread; the script itself runs on
//! the script thread (`scripting/`), which the connection awaits through
//! `Deferred::Script`. They lock no keys here: the run locks its own.

use bytes::Bytes;
use firn_resp::Reply;
use std::sync::atomic::Ordering;

use super::flags::{command_flags, shebang_flags};
use super::request::{EvalRequest, Request};
use super::shared::{
    BUSY_EVAL, BUSY_FUNCTION, KIND_EVAL, KIND_FUNCTION, KIND_NONE, NOSCRIPT, NOTBUSY, UNKILLABLE,
};
use crate::args::{int_arg, is};
use crate::command_table::Flags;
use crate::commands::replies::help_reply;
use crate::commands::{def, def_keys, Ctx, Def, Deferred, Traits};
use crate::errors::{subcommand_syntax, CmdError, CmdResult};
use crate::server::Server;

/// EVAL's flags for a command line (Redis's evalGetCommandFlags): those
/// its script's shebang declares; an invalid shebang keeps EVAL's own (the
/// run reports the error).
fn eval_flags(_server: &Server, args: &[Bytes], table: Flags) -> Flags {
    match args.get(1).map(|body| shebang_flags(body)) {
        Some(Ok((script, _))) => command_flags(table, script),
        _ => table,
    }
}

/// EVALSHA's flags: those of the cached script it names, if any.
fn evalsha_flags(server: &Server, args: &[Bytes], table: Flags) -> Flags {
    let Some(sha) = args.get(1).filter(|sha| sha.len() == 40) else {
        return table;
    };
    let sha = String::from_utf8_lossy(sha).to_ascii_lowercase();
    let scripts = server.scripting.shared.scripts.read();
    match scripts.get(&sha) {
        Some(cached) => command_flags(table, cached.flags),
        None => table,
    }
}

pub static COMMANDS: &[Def] = &[
    def_keys("eval", eval, no_keys)
        .with(Traits::SCRIPT_THREAD)
        .flags_by(eval_flags),
    def_keys("evalsha", evalsha, no_keys)
        .with(Traits::SCRIPT_THREAD)
        .flags_by(evalsha_flags),
    def_keys("eval_ro", eval_ro, no_keys)
        .with(Traits::SCRIPT_THREAD)
        .flags_by(eval_flags),
    def_keys("evalsha_ro", evalsha_ro, no_keys)
        .with(Traits::SCRIPT_THREAD)
        .flags_by(evalsha_flags),
    def("script|load", script_load).with(Traits::SCRIPT_THREAD),
    def("script|exists", script_exists),
    def("script|flush", script_flush).with(Traits::SCRIPT_THREAD),
    def("script|kill", script_kill),
    def("script|debug", script_debug),
    def("script|help", script_help),
];

/// Scripts take their locks on the script thread, not before the handler.
fn no_keys(_args: &[Bytes], _db: u8) -> Vec<(u8, Bytes)> {
    Vec::new()
}

/// `numkeys` and the KEYS/ARGV split, with Redis's checks and texts.
pub fn split_keys(args: &[Bytes]) -> CmdResult<(Vec<Bytes>, Vec<Bytes>)> {
    let numkeys = int_arg(&args[2])?;
    let rest = &args[3..];
    if numkeys > rest.len() as i64 {
        return Err(CmdError::Static(
            "ERR Number of keys can't be greater than number of args",
        ));
    }
    if numkeys < 0 {
        return Err(CmdError::Static("ERR Number of keys can't be negative"));
    }
    let (keys, argv) = rest.split_at(numkeys as usize);
    Ok((keys.to_vec(), argv.to_vec()))
}

fn eval_generic(ctx: &mut Ctx<'_>, args: &[Bytes], by_sha: bool, read_only: bool) -> CmdResult {
    if by_sha && args[1].len() != 40 {
        return Err(CmdError::Static(NOSCRIPT));
    }
    let (keys, argv) = split_keys(args)?;
    let (sha, body) = if by_sha {
        let sha = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
        if !ctx.server.scripting.has_script(&sha) {
            return Err(CmdError::Static(NOSCRIPT));
        }
        (sha, None)
    } else {
        (super::sha1::sha1_hex(&args[1]), Some(args[1].clone()))
    };
    ctx.deferred = Some(Deferred::Script(Request::Eval(EvalRequest {
        sha,
        body,
        keys,
        argv,
        read_only,
    })));
    Ok(Reply::Null)
}

fn eval(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    eval_generic(ctx, args, false, false)
}

fn evalsha(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    eval_generic(ctx, args, true, false)
}

fn eval_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    eval_generic(ctx, args, false, true)
}

fn evalsha_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    eval_generic(ctx, args, true, true)
}

fn script_load(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.deferred = Some(Deferred::Script(Request::Load(args[2].clone())));
    Ok(Reply::Null)
}

fn script_exists(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let scripts = ctx.server.scripting.shared.scripts.read();
    Ok(Reply::Array(
        args[2..]
            .iter()
            .map(|sha| {
                let sha = String::from_utf8_lossy(sha).to_ascii_lowercase();
                Reply::Integer(i64::from(scripts.contains_key(&sha)))
            })
            .collect(),
    ))
}

fn script_flush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    match args.get(2) {
        None => {}
        Some(mode) if args.len() == 3 && (is(mode, "sync") || is(mode, "async")) => {}
        Some(_) => {
            return Err(CmdError::Static(
                "ERR SCRIPT FLUSH only support SYNC|ASYNC option",
            ))
        }
    }
    ctx.deferred = Some(Deferred::Script(Request::Flush));
    Ok(Reply::Null)
}

/// Runs on the network thread: it must answer while a script is busy.
fn script_kill(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    kill_running(ctx, KIND_EVAL)
}

/// SCRIPT KILL and FUNCTION KILL: ends the running script of `kind` if it
/// has not written, with Redis's texts otherwise.
pub fn kill_running(ctx: &mut Ctx<'_>, kind: u8) -> CmdResult {
    let shared = &ctx.server.scripting.shared;
    let running = shared.running.load(Ordering::Acquire);
    if running == KIND_NONE {
        return Err(CmdError::Static(NOTBUSY));
    }
    if shared.dirty.load(Ordering::Acquire) {
        return Err(CmdError::Static(UNKILLABLE));
    }
    if running != kind {
        return Err(CmdError::Static(if running == KIND_FUNCTION {
            BUSY_FUNCTION
        } else {
            BUSY_EVAL
        }));
    }
    shared.kill.store(true, Ordering::Release);
    Ok(Reply::ok())
}

/// The Lua debugger is not served: SCRIPT DEBUG NO is the only mode.
fn script_debug(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() != 3 {
        return Err(subcommand_syntax("script", &args[1]));
    }
    let mode = &args[2];
    if is(mode, "no") {
        Ok(Reply::ok())
    } else if is(mode, "yes") || is(mode, "sync") {
        Err(CmdError::Static(
            "ERR SCRIPT DEBUG is not supported: Firn has no Lua debugger",
        ))
    } else {
        Err(CmdError::Static("ERR Use SCRIPT DEBUG YES/SYNC/NO"))
    }
}

const SCRIPT_HELP: &[&str] = &[
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
];

fn script_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(help_reply(SCRIPT_HELP))
}
