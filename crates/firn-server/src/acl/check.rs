//! The permission check every command passes, wherever it runs: a direct
//! call and a command queued in MULTI (pipeline.rs), a queued command again
//! at EXEC (exec.rs), `redis.call` in a script or function
//! (scripting/call.rs), and ACL DRYRUN. One function decides
//! ([`check_user`], Redis's ACLCheckAllUserCommandPerm): a selector allows
//! the command when it allows its command bit (or its first argument),
//! every key it names with the access the key spec gives it, and every
//! channel it names; the user is allowed when one selector allows it.

use bytes::Bytes;
use std::sync::Arc;

use super::rules::{Selector, User};
use super::state::{Context, LogEntry, Reason};
use crate::command_table::Flags;
use crate::commands::{Channels, Command};
use crate::keyspecs::{KeyRef, Keyed};
use crate::server::{ClientInfo, Server, Session};

/// What a check refused: the command, or the argument at this position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Denied {
    Command,
    Key(usize),
    Channel(usize),
}

impl Denied {
    /// Redis's order of preference among selectors' refusals.
    fn rank(self) -> (u8, usize) {
        match self {
            Denied::Command => (1, 0),
            Denied::Key(at) => (2, at),
            Denied::Channel(at) => (4, at),
        }
    }

    pub fn reason(self) -> Reason {
        match self {
            Denied::Command => Reason::Command,
            Denied::Key(_) => Reason::Key,
            Denied::Channel(_) => Reason::Channel,
        }
    }

    /// The NOPERM error of a refused command (Redis's processCommand).
    pub fn error(self, cmd: &Command) -> String {
        match self {
            Denied::Command => format!(
                "NOPERM this user has no permissions to run the '{}' command",
                cmd.name()
            ),
            Denied::Key(_) => "NOPERM this user has no permissions to access one of the keys used as arguments".into(),
            Denied::Channel(_) => "NOPERM this user has no permissions to access one of the channels used as arguments".into(),
        }
    }

    /// The error of a queued command the user may no longer run at EXEC.
    pub fn exec_error(self) -> String {
        let reason = match self {
            Denied::Command => "no permission to execute the command or subcommand",
            Denied::Key(_) => "no permission to touch the specified keys",
            Denied::Channel(_) => "no permission to access one of the channels used as arguments",
        };
        format!("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {reason}")
    }

    /// The error `redis.call` raises (Redis's scriptVerifyACL).
    pub fn script_error(self) -> String {
        let what = match self {
            Denied::Command => "can't run this command or subcommand",
            Denied::Key(_) => {
                "can't access at least one of the keys mentioned in the command arguments"
            }
            Denied::Channel(_) => "can't publish to the channel mentioned in the command",
        };
        format!("The user executing the script {what}")
    }
}

/// What a check needs of a command: served ones give it from their
/// registration ([`target_of`]), the others Redis has (ACL
/// DRYRUN of MIGRATE) from the generated table ([`unserved_target`]).
pub struct Target<'a> {
    pub acl_id: usize,
    pub name: &'static str,
    pub flags: Flags,
    pub keyed: &'a Keyed,
    pub channels: Channels,
}

/// What the check needs of a served command.
pub fn target_of(cmd: &Command) -> Target<'_> {
    Target {
        acl_id: cmd.acl_id,
        name: cmd.name(),
        flags: cmd.spec.flags,
        keyed: &cmd.keyed,
        channels: cmd.channels,
    }
}

/// The key specs of a Redis command Firn does not serve, with its ACL id.
pub fn unserved_target(args: &[Bytes]) -> Option<(usize, Keyed)> {
    let keyed = crate::keyspecs::lookup(args)?;
    let id = super::catalog::catalog().id(keyed.name)?;
    Some((id, keyed))
}

/// Whether `user` may run `cmd` with `args`.
pub fn check_user(user: &User, cmd: &Command, args: &[Bytes]) -> Result<(), Denied> {
    if user.unrestricted {
        return Ok(());
    }
    check_target(user, &target_of(cmd), args)
}

/// Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess for reads: a selector
/// allows the command and may read every key (SORT's BY and GET patterns
/// read keys no argument names).
pub fn reads_any_key(user: &User, cmd: &Command, args: &[Bytes]) -> bool {
    if user.unrestricted {
        return true;
    }
    let target = target_of(cmd);
    let mut keys = None;
    user.all_selectors().any(|s| {
        check_selector(s, &target, args, &mut keys).is_ok()
            && (s.all_keys || s.keys.iter().any(|p| p.read && p.pattern.as_ref() == b"*"))
    })
}

/// [`check_user`] for any command Redis has.
pub fn check_target(user: &User, cmd: &Target<'_>, args: &[Bytes]) -> Result<(), Denied> {
    if user.unrestricted {
        return Ok(());
    }
    let mut keys = None;
    let mut relevant = Denied::Command;
    for selector in user.all_selectors() {
        match check_selector(selector, cmd, args, &mut keys) {
            Ok(()) => return Ok(()),
            Err(denied) => {
                if denied.rank() > relevant.rank() {
                    relevant = denied;
                }
            }
        }
    }
    Err(relevant)
}

/// Redis's ACLSelectorCheckCmd; `keys` caches the command's keys across
/// selectors.
fn check_selector(
    selector: &Selector,
    cmd: &Target<'_>,
    args: &[Bytes],
    keys: &mut Option<Vec<KeyRef>>,
) -> Result<(), Denied> {
    if !selector.all_commands
        && !cmd.flags.contains(Flags::NO_AUTH)
        && !selector.allows_id(cmd.acl_id)
    {
        let at = if cmd.name.contains('|') { 2 } else { 1 };
        let allowed = match (selector.first_args(cmd.acl_id), args.get(at)) {
            (Some(first_args), Some(arg)) if args.len() >= 2 => {
                first_args.iter().any(|a| a.eq_ignore_ascii_case(arg))
            }
            _ => false,
        };
        if !allowed {
            return Err(Denied::Command);
        }
    }
    if !selector.all_keys && cmd.keyed.has_keys() {
        let keys = keys.get_or_insert_with(|| cmd.keyed.keys_with_flags(args));
        for key in keys.iter() {
            let (read, write) = (key.flags.reads(), key.flags.writes());
            let name = &args[key.pos];
            let allowed = selector
                .keys
                .iter()
                .any(|p| (p.read || !read) && (p.write || !write) && p.matches(name));
            if !allowed {
                return Err(Denied::Key(key.pos));
            }
        }
    }
    if !selector.all_channels {
        let (range, is_pattern) = match cmd.channels {
            Channels::None => return Ok(()),
            Channels::Publish => (1..2.min(args.len()), false),
            Channels::Subscribe => (1..args.len(), false),
            Channels::SubscribePatterns => (1..args.len(), true),
        };
        for at in range {
            if !selector
                .channels
                .iter()
                .any(|c| c.allows(&args[at], is_pattern))
            {
                return Err(Denied::Channel(at));
            }
        }
    }
    Ok(())
}

/// The session's user as it is now: taken again by name when any user
/// changed since the session last looked (one atomic load otherwise).
/// A user that is gone leaves the session unauthenticated as `default`
/// (its connection is being closed: see ACL DELUSER).
pub fn refresh(server: &Server, session: &mut Session) {
    let generation = server.acl.generation();
    if session.acl_generation == generation || session.user.is_internal() {
        return;
    }
    session.acl_generation = generation;
    match server.acl.user(&session.user.name) {
        Some(user) => session.user = user,
        None => {
            session.user = server.acl.default_user();
            session.authenticated = false;
        }
    }
}

/// The check of the request pipeline (after [`refresh`]): refused commands are logged (once:
/// admission runs once per request) and answered with NOPERM.
pub fn admit(
    server: &Server,
    session: &mut Session,
    client: &ClientInfo,
    cmd: &Command,
    args: &[Bytes],
) -> Result<(), String> {
    if session.user.unrestricted {
        return Ok(());
    }
    check_user(&session.user, cmd, args).map_err(|denied| {
        let context = if session.tx.in_multi() {
            Context::Multi
        } else {
            Context::Toplevel
        };
        server.acl_log(entry(client, &session.user, cmd, args, denied, context));
        denied.error(cmd)
    })
}

/// The ACL LOG entry of a refused command.
pub fn entry(
    client: &ClientInfo,
    user: &User,
    cmd: &Command,
    args: &[Bytes],
    denied: Denied,
    context: Context,
) -> LogEntry {
    let object = match denied {
        Denied::Command => Bytes::from_static(cmd.name().as_bytes()),
        Denied::Key(at) | Denied::Channel(at) => args[at].clone(),
    };
    LogEntry {
        count: 1,
        reason: denied.reason(),
        context,
        object,
        username: user.name.clone(),
        at_ms: firn_storage::now_ms(),
        client_info: client_info(client),
    }
}

/// The client as CLIENT LIST shows it, without the newline.
fn client_info(client: &ClientInfo) -> String {
    let mut line = crate::server::client_line(client, firn_storage::now_ms());
    line.truncate(line.trim_end().len());
    line
}

/// Closes the connections authenticated as users that are gone (ACL
/// DELUSER, ACL LOAD), as Redis does; true when `own` (the caller) is one
/// of them: it is closed after its reply.
pub fn close_clients_of(server: &Server, gone: &[Arc<User>], own: u64) -> bool {
    let mut own_closed = false;
    if gone.is_empty() {
        return false;
    }
    let clients: Vec<Arc<ClientInfo>> = server.clients.lock().values().cloned().collect();
    for client in clients {
        let name = client.user_name.lock().clone();
        if gone.iter().any(|u| u.name == name) {
            if client.id == own {
                own_closed = true;
            } else {
                client.request_kill();
            }
        }
    }
    own_closed
}
