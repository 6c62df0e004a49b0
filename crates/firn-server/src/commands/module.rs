//! MODULE: Firn loads no Redis modules (they are C code linked against
//! Redis's own structures), so the list is always empty and LOAD fails as
//! Redis's does when a module cannot be loaded.

use bytes::Bytes;
use firn_resp::Reply;

use super::{def, Ctx, Def};
use crate::commands::replies::help_reply;
use crate::errors::{CmdError, CmdResult};

pub const COMMANDS: &[Def] = &[
    def("module|list", module_list),
    def("module|load", module_load),
    def("module|loadex", module_load),
    def("module|unload", module_unload),
    def("module|help", module_help),
];

const MODULE_HELP: &[&str] = &[
    "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LIST",
    "    The loaded modules: always none, Firn loads no modules.",
    "LOAD <path> [<arg> ...]",
    "    Fails: Redis modules run inside Redis's own process and structures.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Fails, as LOAD does.",
    "UNLOAD <name>",
    "    Fails: no module is loaded.",
    "HELP",
    "    Prints this help.",
];

fn module_list(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::Array(Vec::new()))
}

/// Redis's refusal of a protected MODULE subcommand while
/// `enable-module-command` does not allow it (`local`: loopback clients
/// only).
fn refused_unless_enabled(ctx: &Ctx<'_>) -> CmdResult<()> {
    let setting = ctx
        .server
        .config()
        .kept
        .get("enable-module-command")
        .cloned()
        .unwrap_or_default();
    let local = ctx.client.addr.starts_with("127.") || ctx.client.addr.starts_with("[::1]");
    if setting == "yes" || (setting == "local" && local) {
        return Ok(());
    }
    Err(CmdError::Static(
        "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.",
    ))
}

fn module_load(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    refused_unless_enabled(ctx)?;
    Err(CmdError::Static(
        "ERR Error loading the extension. Please check the server logs.",
    ))
}

fn module_unload(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    refused_unless_enabled(ctx)?;
    Err(CmdError::Static(
        "ERR Error unloading module: no such module with that name",
    ))
}

fn module_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(help_reply(MODULE_HELP))
}
