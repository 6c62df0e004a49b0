//! MODULE: Firn loads no Redis modules (they are C code linked against
//! Redis's own structures), so the list is always empty and LOAD fails as
//! Redis's does when a module cannot be loaded.

use bytes::Bytes;
use firn_resp::Reply;

use super::{def, Ctx, Def};
use crate::commands::replies::help_reply;
use crate::errors::{CmdError, CmdResult};
use crate::server::{ClientInfo, Server};

pub const COMMANDS: &[Def] = &[
    def("module|list", module_list),
    def("module|load", module_load).guarded(allowed),
    def("module|loadex", module_load).guarded(allowed),
    def("module|unload", module_unload).guarded(allowed),
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

/// `enable-module-command` decides who may run the protected MODULE
/// subcommands (Redis's refusal otherwise).
fn allowed(server: &Server, client: &ClientInfo) -> CmdResult<()> {
    if server.config().enable_module_command.allows(&client.addr) {
        return Ok(());
    }
    Err(CmdError::Static(
        "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.",
    ))
}

fn module_load(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Err(CmdError::Static(
        "ERR Error loading the extension. Please check the server logs.",
    ))
}

fn module_unload(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Err(CmdError::Static(
        "ERR Error unloading module: no such module with that name",
    ))
}

fn module_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(help_reply(MODULE_HELP))
}
