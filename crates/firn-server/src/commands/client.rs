//! Connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET and
//! CLIENT. AUTH and HELLO AUTH authenticate as an ACL user (acl/); the
//! `default` user's password is `requirepass`.

use bytes::Bytes;
use firn_resp::{Protocol, Reply};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{def, Ctx, Def, Deferred, Traits};
use crate::acl::state::{Acl, Context, LogEntry, Reason};
use crate::args::{is, parse_i64};
use crate::blocking::state::Unblocked;
use crate::commands::replies::help_reply;
use crate::effects::SideEffect;
use crate::errors::{
    subcommand_syntax, wrong_arity, CmdError, CmdResult, DB_OUT_OF_RANGE, INT_RANGE, NOT_INTEGER,
    SYNTAX, WRONGPASS,
};
use crate::server::{client_line, ClientInfo, ReplyMode};

pub const COMMANDS: &[Def] = &[
    def("ping", ping).with(Traits::SUBSCRIBED_OK),
    def("echo", echo),
    def("select", select).with(Traits::SWITCHES_DB),
    def("quit", quit)
        .with(Traits::UNQUEUED)
        .with(Traits::SUBSCRIBED_OK),
    def("hello", hello).redacts(hello_secrets),
    def("auth", auth).redacts(auth_secrets),
    def("reset", reset)
        .with(Traits::SWITCHES_DB)
        .with(Traits::UNQUEUED)
        .with(Traits::SUBSCRIBED_OK),
    def("client|id", client_id).with(Traits::KEEPS_CACHING),
    def("client|setname", client_setname).with(Traits::KEEPS_CACHING),
    def("client|getname", client_getname).with(Traits::KEEPS_CACHING),
    def("client|list", client_list).with(Traits::KEEPS_CACHING),
    def("client|info", client_info).with(Traits::KEEPS_CACHING),
    def("client|kill", client_kill).with(Traits::KEEPS_CACHING),
    def("client|unblock", client_unblock).with(Traits::KEEPS_CACHING),
    def("client|setinfo", client_setinfo).with(Traits::KEEPS_CACHING),
    def("client|reply", client_reply)
        .with(Traits::KEEPS_CACHING)
        .with(Traits::SWITCHES_REPLY_MODE),
    def("client|pause", client_pause).with(Traits::KEEPS_CACHING),
    def("client|unpause", client_unpause).with(Traits::KEEPS_CACHING),
    def("client|no-evict", client_no_evict).with(Traits::KEEPS_CACHING),
    def("client|no-touch", client_no_touch).with(Traits::KEEPS_CACHING),
    def("client|help", client_help).with(Traits::KEEPS_CACHING),
];

/// AUTH's arguments the logs hide: all of them.
fn auth_secrets(args: &[Bytes]) -> Vec<usize> {
    (1..args.len()).collect()
}

/// HELLO's arguments the logs hide: AUTH's user name and password, as
/// far as HELLO's own parser reads the options.
fn hello_secrets(args: &[Bytes]) -> Vec<usize> {
    let mut hidden = Vec::new();
    let mut j = 2;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(&args[j], "auth") && more >= 2 {
            hidden.extend([j + 1, j + 2]);
            j += 3;
        } else if is(&args[j], "setname") && more >= 1 {
            j += 2;
        } else {
            break;
        }
    }
    hidden
}

fn ping(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // RESP2 subscribed mode: PING answers `pong` as a pub/sub array.
    if ctx.session.protocol == Protocol::Resp2 && ctx.client.pubsub.subscribed() {
        if args.len() > 2 {
            return Err(wrong_arity("ping"));
        }
        let payload = args.get(1).cloned().unwrap_or_default();
        return Ok(Reply::Array(vec![
            Reply::Bulk(Bytes::from_static(b"pong")),
            Reply::Bulk(payload),
        ]));
    }
    Ok(match args.len() {
        1 => Reply::Simple(Bytes::from_static(b"PONG")),
        2 => Reply::Bulk(args[1].clone()),
        _ => return Err(wrong_arity("ping")),
    })
}

fn echo(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    Ok(Reply::Bulk(args[1].clone()))
}

fn select(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let index = parse_i64(&args[1]).ok_or(CmdError::Static(NOT_INTEGER))?;
    if i32::try_from(index).is_err() {
        return Err(CmdError::Static(INT_RANGE));
    }
    if index < 0 || index as usize >= ctx.server.engine.databases() {
        return Err(CmdError::Static(DB_OUT_OF_RANGE));
    }
    ctx.session.db = index as u8;
    Ok(Reply::ok())
}

fn quit(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.deferred = Some(Deferred::Close);
    Ok(Reply::ok())
}

/// Redis's ACLAuthenticateUser: on success the connection runs as the
/// user; a failure is logged in the ACL log (once, when the command's unit
/// commits) and answered with WRONGPASS.
fn authenticate(
    ctx: &mut Ctx<'_>,
    command: &Bytes,
    user: &Bytes,
    password: &[u8],
) -> CmdResult<()> {
    let generation = ctx.server.acl.generation();
    match ctx.server.acl.authenticate(user, password) {
        Some(found) => {
            ctx.session.authenticated = true;
            ctx.session.user = found;
            ctx.session.acl_generation = generation;
            *ctx.client.user_name.lock() = user.clone();
            Ok(())
        }
        None => {
            let entry = LogEntry {
                count: 1,
                reason: Reason::Auth,
                context: if ctx.session.tx.in_multi() || ctx.in_unit {
                    Context::Multi
                } else {
                    Context::Toplevel
                },
                object: command.clone(),
                username: user.clone(),
                at_ms: firn_storage::now_ms(),
                client_info: client_line(ctx.client, firn_storage::now_ms())
                    .trim_end()
                    .to_string(),
            };
            // Inside a unit (EXEC), which may run again, it is logged
            // when the unit commits; alone, AUTH runs once.
            if ctx.in_unit {
                ctx.effects.push(SideEffect::AclLog(entry));
            } else {
                ctx.server.acl_log(entry);
            }
            Err(CmdError::Static(WRONGPASS))
        }
    }
}

/// Whether the default user lets clients in without AUTH (Redis's
/// authRequired: it is on and `nopass`).
fn default_user_open(ctx: &Ctx<'_>) -> bool {
    let user = ctx.server.acl.default_user();
    user.enabled && user.nopass
}

fn auth(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (user, password) = match args.len() {
        2 => {
            if ctx.server.acl.default_user().nopass {
                return Err(CmdError::Static(
                    "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
                ));
            }
            (Bytes::from_static(b"default"), &args[1])
        }
        3 => (args[1].clone(), &args[2]),
        _ => return Err(CmdError::Static(SYNTAX)),
    };
    authenticate(ctx, &args[0], &user, password)?;
    Ok(Reply::ok())
}

/// Client names (and SETINFO values) are printable ASCII without spaces.
fn valid_name(name: &[u8]) -> bool {
    name.iter().all(|&b| (b'!'..=b'~').contains(&b))
}

const BAD_NAME: &str = "ERR Client names cannot contain spaces, newlines or special characters.";

fn set_name(client: &ClientInfo, name: &Bytes) {
    *client.name.lock() = if name.is_empty() {
        None
    } else {
        Some(name.clone())
    };
}

fn hello(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut version = None;
    let mut next = 1;
    if let Some(raw) = args.get(1) {
        let v = parse_i64(raw).ok_or(CmdError::Static(
            "ERR Protocol version is not an integer or out of range",
        ))?;
        if !(2..=3).contains(&v) {
            return Err(CmdError::Static("NOPROTO unsupported protocol version"));
        }
        version = Some(v);
        next = 2;
    }
    let (mut credentials, mut name) = (None, None);
    let mut j = next;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(&args[j], "auth") && more >= 2 {
            credentials = Some((&args[j + 1], &args[j + 2]));
            j += 3;
        } else if is(&args[j], "setname") && more >= 1 {
            if !valid_name(&args[j + 1]) {
                return Err(CmdError::Static(BAD_NAME));
            }
            name = Some(&args[j + 1]);
            j += 2;
        } else {
            return Err(CmdError::Owned(format!(
                "ERR Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(&args[j])
            )));
        }
    }
    if let Some((user, password)) = credentials {
        let (user, password) = (user.clone(), password.clone());
        authenticate(ctx, &args[0], &user, &password)?;
    }
    if !ctx.session.authenticated && !default_user_open(ctx) {
        return Err(CmdError::Static("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"));
    }
    if let Some(name) = name {
        set_name(ctx.client, name);
    }
    if let Some(v) = version {
        ctx.session.protocol = if v == 3 {
            Protocol::Resp3
        } else {
            Protocol::Resp2
        };
    }
    let proto = if ctx.session.protocol == Protocol::Resp3 {
        3
    } else {
        2
    };
    let field = |s: &'static str| Reply::Bulk(Bytes::from_static(s.as_bytes()));
    Ok(Reply::Map(vec![
        (field("server"), field("redis")),
        (field("version"), field("7.0.15")),
        (field("proto"), Reply::Integer(proto)),
        (field("id"), Reply::Integer(ctx.client.id as i64)),
        (field("mode"), field("standalone")),
        (
            field("role"),
            field(if ctx.server.replication.is_replica() {
                "replica"
            } else {
                "master"
            }),
        ),
        (field("modules"), Reply::Array(Vec::new())),
    ]))
}

fn reset(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    crate::multi::transaction::discard(ctx.server, ctx.session, ctx.client);
    ctx.session.db = 0;
    ctx.session.protocol = Protocol::Resp2;
    ctx.session.reply_mode = ReplyMode::On;
    let fresh = ctx.server.new_session();
    ctx.session.user = fresh.user;
    ctx.session.acl_generation = fresh.acl_generation;
    ctx.session.authenticated = fresh.authenticated;
    *ctx.client.user_name.lock() = Bytes::from_static(b"default");
    *ctx.client.name.lock() = None;
    ctx.client.no_evict.store(false, Ordering::Relaxed);
    ctx.client.no_touch.store(false, Ordering::Relaxed);
    // Leaves MONITOR mode; the connection stops streaming the feed.
    ctx.client.monitor.store(false, Ordering::Release);
    // Leaves subscribed mode, without confirmations, and tracking.
    ctx.server.pubsub.forget_client(ctx.client);
    crate::tracking::state::disable(ctx.server, ctx.client);
    Ok(Reply::Simple(Bytes::from_static(b"RESET")))
}

fn client_id(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Reply::Integer(ctx.client.id as i64))
}

fn client_setname(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if !valid_name(&args[2]) {
        return Err(CmdError::Static(BAD_NAME));
    }
    set_name(ctx.client, &args[2]);
    Ok(Reply::ok())
}

fn client_getname(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(ctx
        .client
        .name
        .lock()
        .clone()
        .map_or(Reply::Null, Reply::Bulk))
}

fn client_info(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    // The connection records these after the command; show them now.
    ctx.client.db.store(ctx.session.db, Ordering::Relaxed);
    *ctx.client.last_cmd.lock() = "client|info";
    Ok(Reply::Verbatim {
        format: *b"txt",
        text: Bytes::from(client_line(ctx.client, firn_storage::now_ms())),
    })
}

fn all_clients(ctx: &Ctx<'_>) -> Vec<Arc<ClientInfo>> {
    let mut clients: Vec<Arc<ClientInfo>> = ctx.server.clients.lock().values().cloned().collect();
    clients.sort_by_key(|c| c.id);
    clients
}

/// The kinds of connection CLIENT LIST/KILL TYPE filter on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ClientType {
    Normal,
    Replica,
    PubSub,
    Master,
}

/// Redis's getClientTypeByName; the error quotes the name as given.
fn client_type_arg(name: &[u8]) -> CmdResult<ClientType> {
    if is(name, "normal") {
        Ok(ClientType::Normal)
    } else if is(name, "replica") || is(name, "slave") {
        Ok(ClientType::Replica)
    } else if is(name, "pubsub") {
        Ok(ClientType::PubSub)
    } else if is(name, "master") {
        Ok(ClientType::Master)
    } else {
        Err(CmdError::Owned(format!(
            "ERR Unknown client type '{}'",
            String::from_utf8_lossy(name)
        )))
    }
}

/// Redis's getClientType: a replica this server feeds is `replica`, the
/// link to its own primary `master`, a client with subscriptions `pubsub`,
/// any other (MONITOR clients included) `normal`.
fn client_type(client: &ClientInfo) -> ClientType {
    match client.role_flag.load(Ordering::Relaxed) {
        crate::server::ROLE_REPLICA => return ClientType::Replica,
        crate::server::ROLE_MASTER => return ClientType::Master,
        _ => {}
    }
    if client.pubsub.subscribed() {
        ClientType::PubSub
    } else {
        ClientType::Normal
    }
}

fn client_list(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.client.db.store(ctx.session.db, Ordering::Relaxed);
    *ctx.client.last_cmd.lock() = "client|list";
    let clients = all_clients(ctx);
    let listed: Vec<Arc<ClientInfo>> = match args.len() {
        2 => clients,
        4 if is(&args[2], "type") => {
            let kind = client_type_arg(&args[3])?;
            clients
                .into_iter()
                .filter(|c| client_type(c) == kind)
                .collect()
        }
        n if n > 3 && is(&args[2], "id") => {
            // One line per ID argument, in argument order, as Redis does.
            let mut listed = Vec::new();
            for raw in &args[3..] {
                let id = parse_i64(raw).ok_or(CmdError::Static("ERR Invalid client ID"))?;
                if let Some(c) = clients.iter().find(|c| c.id as i64 == id) {
                    listed.push(c.clone());
                }
            }
            listed
        }
        _ => return Err(CmdError::Static(SYNTAX)),
    };
    let now = firn_storage::now_ms();
    let text: String = listed.iter().map(|c| client_line(c, now)).collect();
    Ok(Reply::Verbatim {
        format: *b"txt",
        text: Bytes::from(text),
    })
}

/// The filters of CLIENT KILL's new form; every given filter must match.
#[derive(Debug, PartialEq, Eq)]
struct KillFilter {
    id: Option<u64>,
    addr: Option<String>,
    laddr: Option<String>,
    kind: Option<ClientType>,
    user: Option<Bytes>,
    skip_me: bool,
}

/// Parses `<filter> <value> ...` pairs in order, failing on the first bad
/// pair as Redis does (a pair without its value is a syntax error).
fn parse_kill_filter(pairs: &[Bytes], acl: &Acl) -> CmdResult<KillFilter> {
    let mut filter = KillFilter {
        user: None,
        id: None,
        addr: None,
        laddr: None,
        kind: None,
        skip_me: true,
    };
    let mut i = 0;
    while i < pairs.len() {
        let option = &pairs[i];
        let Some(value) = pairs.get(i + 1) else {
            return Err(CmdError::Static(SYNTAX));
        };
        if is(option, "id") {
            let id = parse_i64(value)
                .filter(|n| *n > 0)
                .ok_or(CmdError::Static("ERR client-id should be greater than 0"))?;
            filter.id = Some(id as u64);
        } else if is(option, "type") {
            filter.kind = Some(client_type_arg(value)?);
        } else if is(option, "addr") {
            filter.addr = Some(String::from_utf8_lossy(value).into_owned());
        } else if is(option, "laddr") {
            filter.laddr = Some(String::from_utf8_lossy(value).into_owned());
        } else if is(option, "user") {
            if acl.user(value).is_none() {
                return Err(CmdError::Owned(format!(
                    "ERR No such user '{}'",
                    String::from_utf8_lossy(value)
                )));
            }
            filter.user = Some(value.clone());
        } else if is(option, "skipme") {
            filter.skip_me = if is(value, "yes") {
                true
            } else if is(value, "no") {
                false
            } else {
                return Err(CmdError::Static(SYNTAX));
            };
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
        i += 2;
    }
    Ok(filter)
}

impl KillFilter {
    fn matches(&self, client: &ClientInfo, own_id: u64) -> bool {
        self.id.is_none_or(|id| client.id == id)
            && self.addr.as_ref().is_none_or(|a| &client.addr == a)
            && self.laddr.as_ref().is_none_or(|a| &client.laddr == a)
            && self.kind.is_none_or(|k| client_type(client) == k)
            && self
                .user
                .as_ref()
                .is_none_or(|u| *client.user_name.lock() == *u)
            && !(self.skip_me && client.id == own_id)
    }
}

fn client_kill(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let clients = all_clients(ctx);
    if args.len() == 3 {
        // Old form: CLIENT KILL ip:port, which may name this very client.
        let target = clients
            .iter()
            .find(|c| c.addr.as_bytes() == args[2].as_ref())
            .ok_or(CmdError::Static("ERR No such client"))?;
        kill(ctx, target);
        return Ok(Reply::ok());
    }
    let filter = parse_kill_filter(&args[2..], &ctx.server.acl)?;
    let mut killed = 0;
    for c in clients {
        if filter.matches(&c, ctx.client.id) {
            kill(ctx, &c);
            killed += 1;
        }
    }
    Ok(Reply::Integer(killed))
}

/// Closes `target`; the calling client itself is closed once its reply is
/// sent (Redis's CLIENT_CLOSE_AFTER_REPLY), like QUIT.
fn kill(ctx: &mut Ctx<'_>, target: &ClientInfo) {
    if target.id == ctx.client.id {
        ctx.deferred = Some(Deferred::Close);
    } else {
        target.request_kill();
    }
}

/// CLIENT UNBLOCK id [TIMEOUT|ERROR]: ends a blocking command's wait (1),
/// or 0 when that client is not blocked.
fn client_unblock(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let how = match args.len() {
        3 => Unblocked::Timeout,
        4 if is(&args[3], "timeout") => Unblocked::Timeout,
        4 if is(&args[3], "error") => Unblocked::Error,
        4 => {
            return Err(CmdError::Static(
                "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR",
            ))
        }
        _ => return Err(subcommand_syntax("client", &args[1])),
    };
    let id = parse_i64(&args[2]).ok_or(CmdError::Static(NOT_INTEGER))?;
    let done = u64::try_from(id).is_ok_and(|id| ctx.server.blocking.unblock(id, how));
    if done && how == Unblocked::Error {
        // The blocked client's error reply goes out during this command,
        // which Redis therefore counts failed too (call()'s error count).
        ctx.server.stats.commands.record_failure("client|unblock");
    }
    Ok(Reply::Integer(i64::from(done)))
}

fn client_setinfo(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (attr, value) = (&args[2], &args[3]);
    let slot = if is(attr, "lib-name") {
        &ctx.client.lib_name
    } else if is(attr, "lib-ver") {
        &ctx.client.lib_ver
    } else {
        return Err(CmdError::Owned(format!(
            "ERR Unrecognized option '{}'",
            String::from_utf8_lossy(attr)
        )));
    };
    if !valid_name(value) {
        return Err(CmdError::Owned(format!(
            "ERR {} cannot contain spaces, newlines or special characters.",
            String::from_utf8_lossy(attr)
        )));
    }
    *slot.lock() = if value.is_empty() {
        None
    } else {
        Some(value.clone())
    };
    Ok(Reply::ok())
}

fn client_reply(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.session.reply_mode = if is(&args[2], "on") {
        ReplyMode::On
    } else if is(&args[2], "off") {
        ReplyMode::Off
    } else if is(&args[2], "skip") {
        ReplyMode::SkipNext
    } else {
        return Err(CmdError::Static(SYNTAX));
    };
    Ok(Reply::ok())
}

fn client_pause(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() > 4 {
        return Err(subcommand_syntax("client", &args[1]));
    }
    // Redis checks the mode before the timeout.
    let all = match args.get(3) {
        None => true,
        Some(mode) if is(mode, "all") => true,
        Some(mode) if is(mode, "write") => false,
        Some(_) => {
            return Err(CmdError::Static(
                "ERR CLIENT PAUSE mode must be WRITE or ALL",
            ))
        }
    };
    let timeout = parse_i64(&args[2]).ok_or(CmdError::Static(
        "ERR timeout is not an integer or out of range",
    ))?;
    if timeout < 0 {
        return Err(CmdError::Static("ERR timeout is negative"));
    }
    // Redis adds the timeout to the clock without an overflow check; a
    // timeout that overflows ends in the past, so it pauses nothing.
    let now = firn_storage::now_ms();
    let Some(until) = (now as i64).checked_add(timeout) else {
        return Ok(Reply::ok());
    };
    let ends = ctx.server.pause.pause(until as u64, all, now);
    // Expiries are writes: none until the pause ends (keys still read as
    // missing once expired), as in Redis 7.0.
    ctx.server.engine.pause_expiry_until(ends);
    Ok(Reply::ok())
}

fn client_unpause(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.server.pause.unpause();
    ctx.server.engine.pause_expiry_until(0);
    Ok(Reply::ok())
}

fn on_off(arg: &[u8]) -> CmdResult<bool> {
    if is(arg, "on") {
        Ok(true)
    } else if is(arg, "off") {
        Ok(false)
    } else {
        Err(CmdError::Static(SYNTAX))
    }
}

fn client_no_evict(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.client
        .no_evict
        .store(on_off(&args[2])?, Ordering::Relaxed);
    Ok(Reply::ok())
}

fn client_no_touch(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ctx.client
        .no_touch
        .store(on_off(&args[2])?, Ordering::Relaxed);
    Ok(Reply::ok())
}

const CLIENT_HELP: &[&str] = &[
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ID",
    "    This connection's id.",
    "INFO",
    "    This connection, as one CLIENT LIST line.",
    "LIST [TYPE (NORMAL|MASTER|REPLICA|PUBSUB)] [ID <id> ...]",
    "    Every connection, one line each.",
    "KILL <ip:port> | KILL [ID <id>] [ADDR <ip:port>] [LADDR <ip:port>] [TYPE <type>] [USER <name>] [SKIPME (YES|NO)]",
    "    Close matching connections.",
    "SETNAME <name> | GETNAME",
    "    Name this connection, or read its name.",
    "SETINFO (LIB-NAME|LIB-VER) <value>",
    "    Record the client library's name or version.",
    "REPLY (ON|OFF|SKIP)",
    "    Turn replies to this connection on or off, or skip the next one.",
    "PAUSE <timeout> [WRITE|ALL] | UNPAUSE",
    "    Hold writes (or all commands) for <timeout> milliseconds, or stop holding.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> ...] [OPTIN] [OPTOUT] [NOLOOP]",
    "    Turn client-side caching invalidations on or off for this connection.",
    "CACHING (YES|NO)",
    "    In OPTIN/OPTOUT tracking mode, track (or not) the keys the next command reads.",
    "GETREDIR | TRACKINGINFO",
    "    The client id invalidations are redirected to, or this connection's tracking settings.",
    "NO-EVICT (ON|OFF) | NO-TOUCH (ON|OFF)",
    "    Accepted for compatibility: Firn never evicts clients or data.",
    "HELP",
    "    Print this help.",
];

fn client_help(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(help_reply(CLIENT_HELP))
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

    fn error_of(args: &[&str]) -> String {
        match parse_kill_filter(&bytes(args), &Acl::new()) {
            Ok(f) => format!("ok {f:?}"),
            Err(e) => match e.into_reply() {
                Reply::Error(text) => String::from_utf8_lossy(&text).into_owned(),
                _ => "not an error".into(),
            },
        }
    }

    #[test]
    fn passwords_are_redacted_where_redis_redacts_them() {
        assert_eq!(auth_secrets(&bytes(&["AUTH", "pw"])), [1]);
        assert_eq!(auth_secrets(&bytes(&["auth", "user", "pw"])), [1, 2]);
        let hello = |args: &[&str]| hello_secrets(&bytes(args));
        assert_eq!(
            hello(&["hello", "3", "SETNAME", "n", "AUTH", "u", "p"]),
            [5, 6]
        );
        // HELLO's parser stops at a bad option; so does the redaction.
        assert!(hello(&["hello", "3", "x", "auth", "u"]).is_empty());
        assert!(hello(&["hello", "3"]).is_empty());
    }

    #[test]
    fn kill_filters_parse_in_order() {
        let f = parse_kill_filter(
            &bytes(&[
                "ID",
                "7",
                "addr",
                "1.2.3.4:5",
                "LADDR",
                "127.0.0.1:6379",
                "type",
                "NORMAL",
                "user",
                "default",
                "skipme",
                "NO",
            ]),
            &Acl::new(),
        )
        .ok();
        assert_eq!(
            f,
            Some(KillFilter {
                id: Some(7),
                addr: Some("1.2.3.4:5".into()),
                laddr: Some("127.0.0.1:6379".into()),
                kind: Some(ClientType::Normal),
                user: Some(Bytes::from_static(b"default")),
                skip_me: false,
            })
        );
        // The first bad pair decides the error, as in Redis.
        assert_eq!(
            error_of(&["ID", "abc", "foo"]),
            "ERR client-id should be greater than 0"
        );
        assert_eq!(error_of(&["foo", "bar", "ID", "abc"]), "ERR syntax error");
        assert_eq!(error_of(&["ID", "1", "foo"]), "ERR syntax error");
        assert_eq!(
            error_of(&["USER", "bob", "ID", "0"]),
            "ERR No such user 'bob'"
        );
        assert_eq!(error_of(&["TYPE", "Foo"]), "ERR Unknown client type 'Foo'");
        assert_eq!(error_of(&["SKIPME", "maybe"]), "ERR syntax error");
        assert_eq!(
            error_of(&["ID", "-1"]),
            "ERR client-id should be greater than 0"
        );
        assert_eq!(error_of(&["MAXAGE", "10"]), "ERR syntax error");
    }

    #[test]
    fn kill_filter_matching() {
        let me = ClientInfo::new(1, "127.0.0.1:1000".into(), "127.0.0.1:6379".into(), 5);
        let other = ClientInfo::new(2, "127.0.0.1:2000".into(), "127.0.0.1:6379".into(), 6);
        let filter = |args: &[&str]| parse_kill_filter(&bytes(args), &Acl::new()).ok();
        let f = filter(&["laddr", "127.0.0.1:6379"]).unwrap_or_else(|| unreachable!());
        assert!(!f.matches(&me, 1), "SKIPME defaults to yes");
        assert!(f.matches(&other, 1));
        let f =
            filter(&["laddr", "127.0.0.1:6379", "skipme", "no"]).unwrap_or_else(|| unreachable!());
        assert!(f.matches(&me, 1));
        let f = filter(&["id", "2", "addr", "127.0.0.1:1000"]).unwrap_or_else(|| unreachable!());
        assert!(!f.matches(&other, 1), "all filters must match");
        let f = filter(&["type", "pubsub"]).unwrap_or_else(|| unreachable!());
        assert!(!f.matches(&other, 1));
    }

    #[test]
    fn names_are_printable_ascii_without_spaces() {
        assert!(valid_name(b"abc-1_2.3!~"));
        assert!(valid_name(b""));
        assert!(!valid_name(b"a b"));
        assert!(!valid_name(b"a\nb"));
        assert!(!valid_name("é".as_bytes()));
        assert!(!valid_name(b"a\x7f"));
    }
}
