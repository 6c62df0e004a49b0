//! The ACL command (SETUSER, GETUSER, DELUSER, LIST, USERS, CAT, WHOAMI,
//! LOG, GENPASS, DRYRUN, LOAD, SAVE, HELP) and the users' start-up: the
//! config file's `user` lines or the ACL file, after `requirepass`.

use bytes::Bytes;
use firn_resp::Reply;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::catalog::{catalog, category_bit, CATEGORIES};
use super::check::{check_target, close_clients_of, target_of, unserved_target, Denied, Target};
use super::rules::{has_spaces, Selector, User};
use super::state::{file_text, parse_users};
use crate::commands::replies::help_reply;
use crate::commands::{def, Channels, Ctx, Def, Deferred};
use crate::errors::{subcommand_syntax, CmdError, CmdResult, NOT_INTEGER};
use crate::server::{ClientInfo, Server};

pub const COMMANDS: &[Def] = &[
    def("acl|setuser", |ctx, args| later(ctx, args, setuser)).redacts(setuser_secrets),
    def("acl|getuser", |ctx, args| later(ctx, args, getuser)),
    def("acl|deluser", |ctx, args| later(ctx, args, deluser)),
    def("acl|list", |ctx, args| later(ctx, args, list)),
    def("acl|users", |ctx, args| later(ctx, args, users)),
    def("acl|cat", cat),
    def("acl|whoami", whoami),
    def("acl|log", |ctx, args| later(ctx, args, log)),
    def("acl|genpass", genpass),
    def("acl|dryrun", |ctx, args| later(ctx, args, dryrun)),
    def("acl|load", load),
    def("acl|save", save),
    def("acl|help", help),
];

/// What an ACL subcommand does with the users or the log.
type Body = fn(&Arc<Server>, &Arc<ClientInfo>, &[Bytes]) -> CmdResult;

/// Runs `body` once the command's unit has committed (`Deferred::Async`),
/// never inside a run that may be repeated (a transaction after a cold
/// read): a user is created or deleted once per command that takes
/// effect. Inside EXEC the ACL commands keep their order among
/// themselves, after the unit's data commands.
fn later(ctx: &mut Ctx<'_>, args: &[Bytes], body: Body) -> CmdResult {
    let (server, client, args) = (ctx.server.clone(), ctx.client.clone(), args.to_vec());
    ctx.deferred = Some(Deferred::Async(Box::pin(async move {
        body(&server, &client, &args).unwrap_or_else(|e| e.into_reply())
    })));
    Ok(Reply::Null)
}

fn bulk(text: impl Into<Bytes>) -> Reply {
    Reply::Bulk(text.into())
}

fn bulk_str(text: &'static str) -> Reply {
    Reply::Bulk(Bytes::from_static(text.as_bytes()))
}

/// `acl-pubsub-default`: whether new selectors may use every channel.
fn all_channels_default(server: &Server) -> bool {
    server.config().setting("acl-pubsub-default") == "allchannels"
}

/// ACL SETUSER's rules are all hidden from the logs (Redis redacts them).
fn setuser_secrets(args: &[Bytes]) -> Vec<usize> {
    (2..args.len()).collect()
}

fn setuser(server: &Arc<Server>, client: &Arc<ClientInfo>, args: &[Bytes]) -> CmdResult {
    let name = &args[2];
    if has_spaces(name) {
        return Err(CmdError::Static(
            "ERR Usernames can't contain spaces or null characters",
        ));
    }
    let all_channels = all_channels_default(server);
    let (before, after) = server
        .acl
        .set_user(name, &args[3..], all_channels)
        .map_err(|e| CmdError::Owned(format!("ERR {e}")))?;
    if let Some(before) = before {
        close_revoked_subscribers(server, client, &before, &after);
    }
    Ok(Reply::ok())
}

/// Redis's ACLKillPubsubClientsIfNeeded: when a user loses channels, its
/// subscribed clients whose subscriptions are no longer all allowed are
/// closed.
fn close_revoked_subscribers(server: &Server, own: &ClientInfo, before: &User, after: &User) {
    if after.all_selectors().any(|s| s.all_channels) {
        return;
    }
    let upcoming: Vec<&Bytes> = after
        .all_selectors()
        .flat_map(|s| s.channels.iter().map(|c| &c.pattern))
        .collect();
    let superset = before
        .all_selectors()
        .all(|s| !s.all_channels && s.channels.iter().all(|c| upcoming.contains(&&c.pattern)));
    if superset {
        return;
    }
    let patterns: Vec<&super::rules::ChannelPattern> = after
        .all_selectors()
        .flat_map(|s| s.channels.iter())
        .collect();
    let allowed =
        |name: &[u8], is_pattern: bool| patterns.iter().any(|p| p.allows(name, is_pattern));
    let clients: Vec<_> = server.clients.lock().values().cloned().collect();
    for client in clients {
        if *client.user_name.lock() != after.name || !client.pubsub.subscribed() {
            continue;
        }
        let (channels, patterns_subscribed) = client.pubsub.names();
        let revoked = patterns_subscribed.iter().any(|p| !allowed(p, true))
            || channels.iter().any(|c| !allowed(c, false));
        if revoked {
            if client.id == own.id {
                own.close_after_reply.store(true, Ordering::Release);
            } else {
                client.request_kill();
            }
        }
    }
}

/// ACL GETUSER's `commands`, `keys` and `channels` fields of a selector.
fn selector_fields(s: &Selector) -> Vec<(Reply, Reply)> {
    vec![
        (bulk_str("commands"), bulk(s.describe_commands())),
        (bulk_str("keys"), bulk(s.describe_keys())),
        (bulk_str("channels"), bulk(s.describe_channels())),
    ]
}

fn getuser(server: &Arc<Server>, _client: &Arc<ClientInfo>, args: &[Bytes]) -> CmdResult {
    let Some(user) = server.acl.user(&args[2]) else {
        return Ok(Reply::Null);
    };
    let mut fields = vec![
        (
            bulk_str("flags"),
            Reply::Set(user.flags().into_iter().map(bulk_str).collect()),
        ),
        (
            bulk_str("passwords"),
            Reply::Array(user.passwords.iter().map(|p| bulk(p.clone())).collect()),
        ),
    ];
    fields.extend(selector_fields(&user.root));
    fields.push((
        bulk_str("selectors"),
        Reply::Array(
            user.selectors
                .iter()
                .map(|s| Reply::Map(selector_fields(s)))
                .collect(),
        ),
    ));
    Ok(Reply::Map(fields))
}

fn deluser(server: &Arc<Server>, client: &Arc<ClientInfo>, args: &[Bytes]) -> CmdResult {
    let names = &args[2..];
    if names.iter().any(|n| n.as_ref() == b"default") {
        return Err(CmdError::Static("ERR The 'default' user cannot be removed"));
    }
    let gone = server.acl.delete(names);
    if close_clients_of(server, &gone, client.id) {
        client.close_after_reply.store(true, Ordering::Release);
    }
    Ok(Reply::Integer(gone.len() as i64))
}

fn list(server: &Arc<Server>, _client: &Arc<ClientInfo>, _args: &[Bytes]) -> CmdResult {
    let users = server.acl.users();
    Ok(Reply::Array(
        users
            .iter()
            .map(|u| {
                let mut line = b"user ".to_vec();
                line.extend_from_slice(&u.name);
                line.push(b' ');
                line.extend_from_slice(&u.describe());
                bulk(line)
            })
            .collect(),
    ))
}

fn users(server: &Arc<Server>, _client: &Arc<ClientInfo>, _args: &[Bytes]) -> CmdResult {
    let users = server.acl.users();
    Ok(Reply::Array(
        users.iter().map(|u| bulk(u.name.clone())).collect(),
    ))
}

fn cat(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let Some(name) = args.get(2) else {
        return Ok(Reply::Array(
            CATEGORIES.iter().map(|c| bulk_str(c)).collect(),
        ));
    };
    if args.len() > 3 {
        return Err(subcommand_syntax("acl", &args[1]));
    }
    let bit = category_bit(name).ok_or_else(|| {
        let shown = &name[..name.len().min(128)];
        CmdError::Owned(format!(
            "ERR Unknown category '{}'",
            String::from_utf8_lossy(shown)
        ))
    })?;
    Ok(Reply::Array(
        catalog()
            .entries
            .iter()
            .filter(|e| e.categories & bit != 0)
            .map(|e| bulk_str(e.name))
            .collect(),
    ))
}

fn whoami(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(bulk(ctx.session.user.name.clone()))
}

fn log(server: &Arc<Server>, _client: &Arc<ClientInfo>, args: &[Bytes]) -> CmdResult {
    let mut count = 10usize;
    match args.get(2) {
        None => {}
        Some(arg) if arg.eq_ignore_ascii_case(b"reset") => {
            server.acl.reset_log();
            return Ok(Reply::ok());
        }
        Some(arg) => {
            let n = crate::args::parse_i64(arg).ok_or(CmdError::Static(NOT_INTEGER))?;
            count = usize::try_from(n.max(0)).unwrap_or(usize::MAX);
        }
    }
    if args.len() > 3 {
        return Err(subcommand_syntax("acl", &args[1]));
    }
    let now = firn_storage::now_ms();
    let entries = server.acl.log_entries(count);
    Ok(Reply::Array(
        entries
            .into_iter()
            .map(|e| {
                Reply::Map(vec![
                    (bulk_str("count"), Reply::Integer(e.count as i64)),
                    (bulk_str("reason"), bulk_str(e.reason.name())),
                    (bulk_str("context"), bulk_str(e.context.name())),
                    (bulk_str("object"), bulk(e.object)),
                    (bulk_str("username"), bulk(e.username)),
                    (
                        bulk_str("age-seconds"),
                        Reply::Double(now.saturating_sub(e.at_ms) as f64 / 1000.0),
                    ),
                    (bulk_str("client-info"), bulk(e.client_info)),
                ])
            })
            .collect(),
    ))
}

const GENPASS_MAX_BITS: i64 = 4096;

fn genpass(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let bits = match args.get(2) {
        Some(arg) => crate::args::parse_i64(arg).ok_or(CmdError::Static(NOT_INTEGER))?,
        None => 256,
    };
    if args.len() > 3 {
        return Err(subcommand_syntax("acl", &args[1]));
    }
    if bits <= 0 || bits > GENPASS_MAX_BITS {
        return Err(CmdError::Owned(format!("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to {GENPASS_MAX_BITS}")));
    }
    use rand::Rng;
    let mut rng = rand::rng();
    let chars = (bits as usize).div_ceil(4);
    let hex: String = (0..chars)
        .map(|_| char::from(b"0123456789abcdef"[rng.random_range(0..16)]))
        .collect();
    Ok(bulk(hex))
}

fn dryrun(server: &Arc<Server>, _client: &Arc<ClientInfo>, args: &[Bytes]) -> CmdResult {
    let user = server.acl.user(&args[2]).ok_or_else(|| {
        CmdError::Owned(format!(
            "ERR User '{}' not found",
            String::from_utf8_lossy(&args[2])
        ))
    })?;
    let line = &args[3..];
    // Any command Redis has: served ones from the registry, the others
    // (MIGRATE...) from the generated table.
    let unserved;
    let target = match crate::commands::registry().resolve(line) {
        Ok(cmd) => target_of(cmd),
        Err(_) => {
            let not_found = || {
                CmdError::Owned(format!(
                    "ERR Command '{}' not found",
                    String::from_utf8_lossy(&line[0])
                ))
            };
            unserved = unserved_target(line).ok_or_else(not_found)?;
            Target {
                acl_id: unserved.0,
                name: unserved.1.name,
                flags: unserved.1.flags,
                keyed: &unserved.1,
                channels: Channels::None,
            }
        }
    };
    if !target.keyed.arity_ok(line.len()) {
        return Err(CmdError::Owned(format!(
            "ERR wrong number of arguments for '{}' command",
            target.name
        )));
    }
    Ok(match check_target(&user, &target, line) {
        Ok(()) => Reply::ok(),
        Err(Denied::Command) => bulk(format!(
            "This user has no permissions to run the '{}' command",
            target.name
        )),
        Err(Denied::Key(at)) => bulk(format!(
            "This user has no permissions to access the '{}' key",
            String::from_utf8_lossy(&line[at])
        )),
        Err(Denied::Channel(at)) => bulk(format!(
            "This user has no permissions to access the '{}' channel",
            String::from_utf8_lossy(&line[at])
        )),
    })
}

const NO_ACL_FILE: &str = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.";

/// The ACL file as configured (errors name it so) and its path: a relative
/// one is under `dir`, as Redis (which changes into `dir` at start-up)
/// reads it.
fn acl_file(server: &Server) -> Option<(String, std::path::PathBuf)> {
    let config = server.config();
    let file = config.setting("aclfile");
    if file.is_empty() {
        return None;
    }
    let path = config.dir.join(&file);
    Some((file, path))
}

fn load(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let file = acl_file(ctx.server).ok_or(CmdError::Static(NO_ACL_FILE))?;
    let own = ctx.client.clone();
    // Reading the file is disk I/O: off the network thread.
    ctx.deferred = Some(Deferred::Blocking(Box::new(move |server| match load_file(
        server, &file, own.id,
    ) {
        Ok(true) => {
            own.close_after_reply.store(true, Ordering::Release);
            Reply::ok()
        }
        Ok(false) => Reply::ok(),
        Err(e) => Reply::Error(format!("ERR {e}").into()),
    })));
    Ok(Reply::ok())
}

/// Replaces the users with the ACL file's (all or nothing). As in Redis
/// 7.0 every user but `default` is a new one afterwards, so the
/// connections authenticated as any other user are closed (`own`, the
/// caller, after its reply: true if it is one of them).
fn load_file(
    server: &Arc<Server>,
    (file, path): &(String, std::path::PathBuf),
    own: u64,
) -> Result<bool, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("Error loading ACLs, opening file '{file}': {e}"))?;
    let users = parse_users(&text, file, all_channels_default(server))?;
    let gone: Vec<Arc<User>> = server
        .acl
        .users()
        .into_iter()
        .filter(|u| u.name.as_ref() != b"default")
        .collect();
    server.acl.replace_all(users);
    Ok(close_clients_of(server, &gone, own))
}

fn save(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let file = acl_file(ctx.server).ok_or(CmdError::Static(NO_ACL_FILE))?;
    ctx.deferred = Some(Deferred::Blocking(Box::new(move |server| {
        let text = file_text(&server.acl.users());
        match crate::config::write_atomically(&file.1, &text) {
            Ok(()) => Reply::ok(),
            Err(e) => {
                tracing::warn!("ACL SAVE to {}: {e}", file.0);
                Reply::Error(Bytes::from_static(b"ERR There was an error trying to save the ACLs. Please check the server logs for more information"))
            }
        }
    })));
    Ok(Reply::ok())
}

const HELP: &[&str] = &[
    "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
    "HELP",
    "    Prints this help.",
];

fn help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(help_reply(HELP))
}

/// The users at start-up: `requirepass` as the default user's password,
/// then the config file's `user` lines or the ACL file (not both), as
/// Redis's ACLLoadUsersAtStartup. An error stops the start.
pub fn load_at_startup(server: &Arc<Server>) -> Result<(), String> {
    let (requirepass, lines) = {
        let config = server.config();
        (config.requirepass.clone(), config.users.clone())
    };
    let file = acl_file(server);
    server
        .acl
        .set_default_password(requirepass.as_deref().map(str::as_bytes));
    if file.is_some() && !lines.is_empty() {
        return Err("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.".into());
    }
    if !lines.is_empty() {
        let all_channels = all_channels_default(server);
        let mut seen = std::collections::BTreeSet::new();
        for words in &lines {
            let name = Bytes::copy_from_slice(words[0].as_bytes());
            if !seen.insert(name.clone()) {
                return Err(format!(
                    "Duplicate user '{}': a user can only be defined once in config files",
                    words[0]
                ));
            }
            if has_spaces(&name) {
                return Err("Spaces not allowed in ACL usernames".into());
            }
            if name.as_ref() == b"default" {
                server
                    .acl
                    .set_user(&name, &[Bytes::from_static(b"reset")], all_channels)?;
            }
            let ops: Vec<Bytes> = words[1..]
                .iter()
                .map(|w| Bytes::copy_from_slice(w.as_bytes()))
                .collect();
            server
                .acl
                .set_user(&name, &ops, all_channels)
                .map_err(|e| {
                    format!(
                        "Error loading ACL rules for the user named '{}': {e}",
                        words[0]
                    )
                })?;
        }
    }
    if let Some(file) = file {
        load_file(server, &file, u64::MAX)
            .map_err(|e| format!("Aborting start-up because of ACL errors: {e}"))?;
    }
    Ok(())
}
