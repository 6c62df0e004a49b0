//! The command registry. Metadata (arity, flags, key positions, COMMAND
//! INFO/DOCS replies) is declared once in `command_table.rs`; each group
//! file registers its handlers in a short table next to the functions.
//! Dispatch, arity checks, key locking and COMMAND all read the same entry.

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::Txn;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use crate::command_table::{CommandSpec, Flags, COMMANDS};
use crate::errors::{truncate_for_error, unknown_subcommand, wrong_arity, CmdError, CmdResult};
use crate::server::{ClientInfo, Server, Session};

pub mod bitmaps;
pub mod client;
pub mod collection;
pub mod debug;
pub mod geo;
pub mod hashes;
pub mod hyperloglog;
pub mod keyspace;
pub mod latency;
pub mod lists;
pub mod long_double;
pub mod module;
pub mod offload;
pub mod replies;
pub mod scan;
pub mod server_cmds;
pub mod sets;
pub mod sort;
pub mod streams;
pub mod strings;
pub mod zsets;

/// What a handler sees: the transaction to read and write through, the
/// client's session, and the server.
pub struct Ctx<'a> {
    pub server: &'a Arc<Server>,
    pub txn: Txn<'a>,
    pub session: &'a mut Session,
    pub client: &'a Arc<ClientInfo>,
    /// Work the connection must do after the reply is decided.
    pub deferred: Option<Deferred>,
    /// The command runs inside a unit of several (EXEC, a script), which
    /// may run again and commits once: it builds its reply now, from this
    /// transaction (no deferred job over a snapshot, which would miss the
    /// unit's own writes or see later ones), and records its side effects
    /// on `effects` instead of performing them (effects.rs).
    pub in_unit: bool,
    /// Side effects to apply once the unit commits (effects.rs).
    pub effects: Vec<crate::effects::SideEffect>,
    /// The run holds its keys' locks shared and is thrown away if it turns
    /// out to write (a lazy expiry, an event): the side effects it would
    /// perform at once go to `effects` too (exec.rs).
    pub provisional: bool,
}

impl Ctx<'_> {
    /// The session's logical database.
    pub fn db(&self) -> u8 {
        self.session.db
    }

    /// Counts `changes` toward INFO rdb_changes_since_last_save, as Redis's
    /// handlers add to `server.dirty`: every write handler says what it
    /// changed (one per element added, removed or updated, one per key
    /// stored or deleted; nothing for a write that changed nothing). The
    /// count is an effect of the transaction (see `Txn::add_dirty`).
    pub fn dirty(&mut self, changes: u64) {
        self.txn.add_dirty(changes);
    }

    /// Runs `f` without counting its changes (see [`Ctx::dirty`]).
    pub fn uncounted<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let counted = self.txn.dirty();
        let out = f(self);
        self.txn.reset_dirty(counted);
        out
    }

    /// Records the deterministic command a replica replays instead of the
    /// command as received (as Redis rewrites SET EX into SET PXAT).
    pub fn replay_as(&mut self, command: &[&[u8]]) {
        self.txn.set_replay(vec![command
            .iter()
            .map(|arg| Bytes::copy_from_slice(arg))
            .collect()]);
    }

    /// Makes the command's reply the one `job` streams (stream_reply.rs).
    pub fn stream_reply(
        &mut self,
        job: impl FnOnce(&Arc<Server>, &mut crate::stream_reply::Sink) -> CmdResult<()> + Send + 'static,
    ) {
        self.deferred = Some(Deferred::Stream(Box::new(job)));
    }
}

/// A job for a blocking thread; its reply replaces the handler's.
pub type BlockingJob = Box<dyn FnOnce(&Arc<Server>) -> Reply + Send>;

/// Finds the `(logical db, key)` pairs a command locks.
pub type KeyFinder = fn(&[Bytes], u8) -> Vec<(u8, Bytes)>;

/// Work that cannot run inside a (re-runnable, non-blocking) handler.
pub enum Deferred {
    /// Run on a blocking thread; its reply replaces the handler's.
    Blocking(BlockingJob),
    /// Send the reply, then close the connection.
    Close,
    /// Stop the server after replying nothing (SHUTDOWN).
    Shutdown { save: bool },
    /// Switch the connection to MONITOR mode.
    Monitor,
    /// Produce the reply on a background thread and write it in parts as
    /// it comes (`stream_reply.rs`); replaces the handler's reply.
    Stream(crate::stream_reply::StreamJob),
    /// Nothing to serve yet: the connection waits for the keys (blocking/state.rs)
    /// and runs the command again when one may have changed (a timeout
    /// answers a null array). The handler's reply is the whole answer where
    /// the client may not block: inside MULTI/EXEC or a script, which must
    /// ignore this variant, as Redis answers there at once.
    Block(crate::blocking::state::BlockOn),
    /// Send no reply: the command's output went to the client's mailbox
    /// (pub/sub confirmations, one per channel).
    Silent,
    /// Run on the script thread (EVAL, SCRIPT LOAD, FUNCTION...); its
    /// reply and tickets replace the handler's.
    Script(crate::scripting::request::Request),
    /// Send the handler's reply after this long, the connection waiting
    /// on a timer, not holding its thread (DEBUG SLEEP).
    Sleep(std::time::Duration),
    /// Await this; its reply replaces the handler's (WAIT, REPLICAOF).
    Async(AsyncJob),
    /// Send nothing more: the connection becomes a replica's feed
    /// (PSYNC, SYNC; replication/primary.rs).
    Replica(crate::replication::state::Psync),
}

/// Work a command finishes asynchronously, on the connection's task.
pub type AsyncJob = std::pin::Pin<Box<dyn std::future::Future<Output = Reply> + Send + 'static>>;

pub type Handler = fn(&mut Ctx<'_>, &[Bytes]) -> CmdResult;

/// How to find the keys a command locks.
#[derive(Clone, Copy)]
pub enum Keys {
    /// From the first/last/step positions of the command table.
    Table,
    /// Computed from the arguments and the session's database.
    Custom(KeyFinder),
    /// Every key lock: the command changes whole databases (FLUSH*, SWAPDB).
    All,
    /// Every key lock when the predicate holds on the arguments (SORT with
    /// BY/GET patterns reads keys its arguments do not name), else the
    /// table's keys.
    AllIf(fn(&[Bytes]) -> bool),
}

/// How a command's keys' access times (OBJECT IDLETIME) change when it
/// runs: Redis's lookups either touch a key or are LOOKUP_NOTOUCH.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Access {
    /// Every key it names is refreshed (the default).
    Touch,
    /// It reads keys without refreshing them (TYPE, TTL, EXISTS, OBJECT).
    NoTouch,
    /// Its keys are gone afterwards, so their access times are dropped.
    Forget,
}

/// The positions of a command line's arguments that the slow log and
/// MONITOR show as "(redacted)" (Redis's redactClientCommandArgument).
pub type Redactor = fn(&[Bytes]) -> Vec<usize>;

/// Who may run a protected command (Redis's `enable-debug-command`,
/// `enable-module-command`): Ok, or the refusal, checked before anything
/// else once the command is found.
pub type Guard = fn(&Server, &ClientInfo) -> CmdResult<()>;

/// A command's flags for one command line, when they depend on it (Redis's
/// getCommandFlags: a script's declared flags replace EVAL's).
pub type FlagsOf = fn(&Server, &[Bytes], Flags) -> Flags;

/// One registration line in a group's table: the handler and the facts
/// about the command that the command table does not hold.
pub struct Def {
    pub name: &'static str,
    pub handler: Handler,
    pub keys: Keys,
    pub access: Access,
    pub redact: Option<Redactor>,
    pub traits: Traits,
    pub flags_of: Option<FlagsOf>,
    pub guard: Option<Guard>,
    pub channels: Channels,
}

/// The Pub/Sub channels a command names, which ACL channel patterns
/// govern (Redis's getChannelsFromCommand); declared on the registration
/// line with [`Def::names_channels`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Channels {
    None,
    /// The first argument is a channel it publishes to (PUBLISH, SPUBLISH).
    Publish,
    /// Every argument is a channel it subscribes to (SUBSCRIBE, SSUBSCRIBE).
    Subscribe,
    /// Every argument is a pattern it subscribes to (PSUBSCRIBE): matched
    /// literally against the user's patterns.
    SubscribePatterns,
}

/// What the pipeline and the subsystems must know of a command beyond its
/// flags, declared on its registration line (`def(..).with(Traits::X)`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Traits(u16);

impl Traits {
    pub const NONE: Traits = Traits(0);
    /// It changes the session's database (SELECT, RESET): inside a
    /// transaction, later commands' keys are not known before it runs.
    pub const SWITCHES_DB: Traits = Traits(1);
    /// It runs at once inside MULTI instead of being queued (EXEC,
    /// DISCARD, MULTI, WATCH, QUIT, RESET).
    pub const UNQUEUED: Traits = Traits(1 << 1);
    /// A RESP2 client in subscribed mode may run it ((P|S)SUBSCRIBE,
    /// (P|S)UNSUBSCRIBE, PING, QUIT, RESET).
    pub const SUBSCRIBED_OK: Traits = Traits(1 << 2);
    /// It neither uses nor spends CLIENT CACHING yes (CLIENT's
    /// subcommands, as in Redis).
    pub const KEEPS_CACHING: Traits = Traits(1 << 3);
    /// It sets CLIENT REPLY's mode: inside EXEC, its own reply is sent
    /// only when it turns replies back on.
    pub const SWITCHES_REPLY_MODE: Traits = Traits(1 << 4);
    /// Its handler hands the work to the script thread
    /// (`Deferred::Script`): EXEC commits the commands before it first.
    pub const SCRIPT_THREAD: Traits = Traits(1 << 5);
    /// Its writes never give a blocked client something to take: it only
    /// removes or acknowledges (LPOP, ZPOPMIN, XACK, XREADGROUP...), so a
    /// batch of such commands alone wakes no blocked client
    /// (blocking/state.rs). Redis signals no key as ready for them either.
    pub const ADDS_NOTHING: Traits = Traits(1 << 6);
    /// Its writes modify nothing Redis signals (`signalModifiedKey`): a
    /// consumer group's state (XACK, XCLAIM, XREADGROUP, XGROUP, XSETID),
    /// so a WATCH of the key is not aborted and a tracking client is not
    /// told. Where Redis does signal (XGROUP CREATE ... MKSTREAM making
    /// the stream) the handler says so (`Txn::signal_modified`).
    pub const QUIET: Traits = Traits(1 << 7);

    /// How the command's writes signal (firn-storage signals.rs).
    pub const fn signal_mode(self) -> firn_storage::SignalMode {
        firn_storage::SignalMode {
            quiet: self.contains(Traits::QUIET),
            adds_nothing: self.contains(Traits::ADDS_NOTHING),
        }
    }

    /// Whether every trait of `other` is declared.
    pub const fn contains(self, other: Traits) -> bool {
        self.0 & other.0 == other.0
    }

    /// Both sets of traits.
    pub const fn with(self, other: Traits) -> Traits {
        Traits(self.0 | other.0)
    }
}

impl Def {
    /// Its key lookups do not refresh access times.
    pub const fn no_touch(mut self) -> Def {
        self.access = Access::NoTouch;
        self
    }

    /// It deletes the keys it names.
    pub const fn forgets_keys(mut self) -> Def {
        self.access = Access::Forget;
        self
    }

    /// `redact` names the arguments logs must not show.
    pub const fn redacts(mut self, redact: Redactor) -> Def {
        self.redact = Some(redact);
        self
    }

    /// Its flags for a command line come from `flags_of`, given the
    /// command table's.
    pub const fn flags_by(mut self, flags_of: FlagsOf) -> Def {
        self.flags_of = Some(flags_of);
        self
    }

    /// Only the clients `guard` allows may run it (a protected command).
    pub const fn guarded(mut self, guard: Guard) -> Def {
        self.guard = Some(guard);
        self
    }

    /// The channels it names are checked against ACL channel patterns.
    pub const fn names_channels(mut self, channels: Channels) -> Def {
        self.channels = channels;
        self
    }

    /// Declares `traits` too.
    pub const fn with(mut self, traits: Traits) -> Def {
        self.traits = Traits(self.traits.0 | traits.0);
        self
    }
}

const fn with_keys(name: &'static str, handler: Handler, keys: Keys) -> Def {
    Def {
        name,
        handler,
        keys,
        access: Access::Touch,
        redact: None,
        traits: Traits::NONE,
        flags_of: None,
        guard: None,
        channels: Channels::None,
    }
}

pub const fn def(name: &'static str, handler: Handler) -> Def {
    with_keys(name, handler, Keys::Table)
}

/// A command that runs alone among keyed commands (every key lock).
pub const fn def_all(name: &'static str, handler: Handler) -> Def {
    with_keys(name, handler, Keys::All)
}

/// A command that holds every key lock when `holds` says so of its
/// arguments, and its table keys otherwise.
pub const fn def_all_if(name: &'static str, handler: Handler, holds: fn(&[Bytes]) -> bool) -> Def {
    with_keys(name, handler, Keys::AllIf(holds))
}

pub const fn def_keys(name: &'static str, handler: Handler, keys: KeyFinder) -> Def {
    with_keys(name, handler, Keys::Custom(keys))
}

pub struct Command {
    pub spec: &'static CommandSpec,
    pub handler: Handler,
    pub keys: Keys,
    pub access: Access,
    pub redact: Option<Redactor>,
    pub traits: Traits,
    pub flags_of: Option<FlagsOf>,
    pub guard: Option<Guard>,
    pub channels: Channels,
    /// Its id in the ACL catalog (acl/catalog.rs): its bit in a user's
    /// permissions.
    pub acl_id: usize,
    /// Its key specs, parsed once (ACL key checks, movable keys).
    pub keyed: crate::keyspecs::Keyed,
}

impl Command {
    pub fn name(&self) -> &'static str {
        self.spec.name
    }

    /// Whether the command table gives the command every flag of `flags`.
    pub fn has(&self, flags: Flags) -> bool {
        self.spec.flags.contains(flags)
    }

    /// Its flags for this command line: the table's, or what its
    /// registration's `flags_by` makes of them.
    pub fn flags_for(&self, server: &Server, args: &[Bytes]) -> Flags {
        match self.flags_of {
            Some(flags_of) => flags_of(server, args, self.spec.flags),
            None => self.spec.flags,
        }
    }

    /// The command line as logs show it: the arguments its handler
    /// declares secret replaced by "(redacted)".
    pub fn redacted<'a>(&self, args: &'a [Bytes]) -> std::borrow::Cow<'a, [Bytes]> {
        const REDACTED: Bytes = Bytes::from_static(b"(redacted)");
        let hidden = match self.redact {
            Some(redact) => redact(args),
            None => Vec::new(),
        };
        if hidden.is_empty() {
            return std::borrow::Cow::Borrowed(args);
        }
        let shown = args
            .iter()
            .enumerate()
            .map(|(i, arg)| match hidden.contains(&i) {
                true => REDACTED,
                false => arg.clone(),
            });
        std::borrow::Cow::Owned(shown.collect())
    }

    /// Whether its registration declares every trait of `traits`.
    pub fn is(&self, traits: Traits) -> bool {
        self.traits.contains(traits)
    }

    /// How its writes signal (see [`Traits::signal_mode`]).
    pub fn signal_mode(&self) -> firn_storage::SignalMode {
        self.traits.signal_mode()
    }

    /// Whether the command holds every key lock.
    pub fn locks_all(&self, args: &[Bytes]) -> bool {
        match self.keys {
            Keys::All => true,
            Keys::AllIf(holds) => holds(args),
            _ => false,
        }
    }

    /// The `(logical db, key)` pairs this invocation locks.
    pub fn lock_keys(&self, args: &[Bytes], db: u8) -> Vec<(u8, Bytes)> {
        match self.keys {
            Keys::All => Vec::new(),
            Keys::AllIf(holds) if holds(args) => Vec::new(),
            Keys::Custom(f) => f(args, db),
            // Commands whose keys move (ZUNIONSTORE, LMPOP, SORT ... STORE)
            // are read with their key specs, as COMMAND GETKEYS reads them.
            Keys::Table | Keys::AllIf(_) if self.has(Flags::MOVABLEKEYS) => self
                .keyed
                .keys(args)
                .into_iter()
                .filter(|k| !k.flags.contains(crate::keyspecs::KeyFlags::NOT_KEY))
                .filter_map(|k| args.get(k.pos).map(|key| (db, key.clone())))
                .collect(),
            Keys::Table | Keys::AllIf(_) => table_keys(self.spec, args)
                .into_iter()
                .map(|k| (db, k))
                .collect(),
        }
    }
}

/// Keys at the first/last/step positions (COMMAND GETKEYS uses this too).
pub fn table_keys(spec: &CommandSpec, args: &[Bytes]) -> Vec<Bytes> {
    if spec.first_key <= 0 || spec.key_step <= 0 {
        return Vec::new();
    }
    let argc = args.len() as i64;
    let first = spec.first_key as i64;
    let last = if spec.last_key < 0 {
        argc + spec.last_key as i64
    } else {
        spec.last_key as i64
    };
    let mut keys = Vec::new();
    let mut i = first;
    while i <= last && i < argc {
        keys.push(args[i as usize].clone());
        i += spec.key_step as i64;
    }
    keys
}

enum Entry {
    Leaf(Command),
    Container {
        spec: &'static CommandSpec,
        subs: HashMap<Vec<u8>, Command>,
        /// The container called without a subcommand (`COMMAND` alone).
        bare: Option<Command>,
    },
}

pub struct Registry {
    entries: HashMap<Vec<u8>, Entry>,
    /// Every command under its own name, whatever rename-command did
    /// (Redis's `orig_commands`): the server's own requests use these.
    originals: HashMap<Vec<u8>, Entry>,
}

/// The process's registry: static tables indexed once, at start-up.
static REGISTRY: OnceLock<Registry> = OnceLock::new();

/// Makes `registry` the one [`registry`] returns (the first call wins).
pub fn install(registry: Registry) {
    let _ = REGISTRY.set(registry);
}

/// The served commands. Start-up installs them before it accepts a
/// client, so every request path finds them.
pub fn registry() -> &'static Registry {
    REGISTRY
        .get()
        .expect("the command registry is installed at start-up")
}

fn find_spec(name: &str) -> Option<&'static CommandSpec> {
    match name.split_once('|') {
        None => COMMANDS.iter().find(|c| c.name == name),
        Some((container, _)) => COMMANDS
            .iter()
            .find(|c| c.name == container)
            .and_then(|c| c.subcommands.iter().find(|s| s.name == name)),
    }
}

impl Registry {
    /// Builds the registry of `defs` (every group's table: `groups.rs`);
    /// a handler without metadata is a programming error reported at
    /// start-up.
    pub fn build(defs: impl IntoIterator<Item = &'static Def>) -> Result<Registry, String> {
        let defs: Vec<&'static Def> = defs.into_iter().collect();
        Ok(Registry {
            entries: index(&defs)?,
            originals: index(&defs)?,
        })
    }

    /// Resolves a request to its command, checking arity. Errors carry
    /// Redis's texts for unknown commands and subcommands.
    pub fn lookup(&self, args: &[Bytes]) -> CmdResult<&Command> {
        lookup_in(&self.entries, args)
    }

    /// As [`Registry::lookup`], by the commands' own names: what the server
    /// runs for itself (an RDB import's RESTORE) is not renamed away.
    pub fn lookup_original(&self, args: &[Bytes]) -> CmdResult<&Command> {
        lookup_in(&self.originals, args)
    }

    /// The command (or subcommand) `args` name, whatever their number.
    pub fn resolve(&self, args: &[Bytes]) -> CmdResult<&Command> {
        resolve_in(&self.entries, args)
    }

    /// The served command (or subcommand) a request names, whatever its
    /// arguments: `config|get` for `CONFIG GET ...`.
    pub fn name_of(&self, args: &[Bytes]) -> Option<&'static str> {
        let top = String::from_utf8_lossy(args.first()?).to_ascii_lowercase();
        if !self.has(&top) {
            return None;
        }
        let spec = crate::command_table::COMMANDS
            .iter()
            .find(|s| s.name == top)?;
        match args.get(1) {
            Some(sub) if !spec.subcommands.is_empty() => {
                let full = format!(
                    "{top}|{}",
                    String::from_utf8_lossy(sub).to_ascii_lowercase()
                );
                spec.subcommands
                    .iter()
                    .find(|s| s.name == full)
                    .map(|s| s.name)
            }
            _ => Some(spec.name),
        }
    }

    /// `rename-command from to`: the command `from` answers to `to` instead
    /// (an empty `to` removes it), as Redis renames it in its command
    /// table; a Redis command Firn does not serve has nothing to rename.
    pub fn rename(&mut self, from: &str, to: &str) -> Result<(), String> {
        let Some(entry) = self.entries.remove(from.as_bytes()) else {
            return Ok(());
        };
        if !to.is_empty() && self.entries.insert(to.as_bytes().to_vec(), entry).is_some() {
            return Err(format!(
                "rename-command {from} {to}: Target command name already exists"
            ));
        }
        Ok(())
    }

    /// Whether the registry serves `name` (a top-level command).
    pub fn has(&self, name: &str) -> bool {
        self.entries.contains_key(name.as_bytes())
    }

    /// Top-level specs of every served command.
    pub fn specs(&self) -> impl Iterator<Item = &'static CommandSpec> + '_ {
        self.entries.values().map(|e| match e {
            Entry::Leaf(c) => c.spec,
            Entry::Container { spec, .. } => *spec,
        })
    }
}

/// Indexes `defs` by name (a container's subcommands under it).
fn index(defs: &[&'static Def]) -> Result<HashMap<Vec<u8>, Entry>, String> {
    let mut entries: HashMap<Vec<u8>, Entry> = HashMap::new();
    for d in defs {
        let spec =
            find_spec(d.name).ok_or_else(|| format!("no command table entry for '{}'", d.name))?;
        let command = Command {
            spec,
            handler: d.handler,
            keys: d.keys,
            access: d.access,
            redact: d.redact,
            traits: d.traits,
            flags_of: d.flags_of,
            guard: d.guard,
            channels: d.channels,
            acl_id: crate::acl::catalog::catalog()
                .id(spec.name)
                .ok_or_else(|| format!("'{}' is not in the ACL catalog", d.name))?,
            keyed: crate::keyspecs::for_spec(spec),
        };
        match d.name.split_once('|') {
            None if !spec.subcommands.is_empty() => match entries
                .entry(d.name.as_bytes().to_vec())
                .or_insert_with(|| Entry::Container {
                    spec,
                    subs: HashMap::new(),
                    bare: None,
                }) {
                Entry::Container { bare, .. } => *bare = Some(command),
                Entry::Leaf(_) => return Err(format!("'{}' registered twice", d.name)),
            },
            None => {
                entries.insert(d.name.as_bytes().to_vec(), Entry::Leaf(command));
            }
            Some((container, sub)) => {
                let container_spec = find_spec(container)
                    .ok_or_else(|| format!("no command table entry for '{container}'"))?;
                let entry = entries
                    .entry(container.as_bytes().to_vec())
                    .or_insert_with(|| Entry::Container {
                        spec: container_spec,
                        subs: HashMap::new(),
                        bare: None,
                    });
                match entry {
                    Entry::Container { subs, .. } => {
                        subs.insert(sub.as_bytes().to_vec(), command);
                    }
                    Entry::Leaf(_) => {
                        return Err(format!("'{container}' is both a command and a container"))
                    }
                }
            }
        }
    }
    Ok(entries)
}

fn lookup_in<'r>(entries: &'r HashMap<Vec<u8>, Entry>, args: &[Bytes]) -> CmdResult<&'r Command> {
    let command = resolve_in(entries, args)?;
    let arity = command.spec.arity;
    let argc = args.len() as i32;
    if (arity > 0 && argc != arity) || (arity < 0 && argc < -arity) {
        return Err(wrong_arity(command.spec.name));
    }
    Ok(command)
}

fn resolve_in<'r>(entries: &'r HashMap<Vec<u8>, Entry>, args: &[Bytes]) -> CmdResult<&'r Command> {
    let Some(name) = args.first() else {
        return Err(CmdError::Static("ERR empty command"));
    };
    let lower = name.to_ascii_lowercase();
    let command = match entries.get(&lower) {
        None => return Err(unknown_command(args)),
        Some(Entry::Leaf(c)) => c,
        Some(Entry::Container { spec, subs, bare }) => {
            let Some(sub) = args.get(1) else {
                return match bare {
                    Some(command) => Ok(command),
                    None => Err(wrong_arity(spec.name)),
                };
            };
            match subs.get(&sub.to_ascii_lowercase()) {
                Some(c) => c,
                None => return Err(unknown_subcommand(spec.name, sub)),
            }
        }
    };
    Ok(command)
}

/// "ERR unknown command 'foo', with args beginning with: 'a' 'b' ", with
/// the client's bytes raw, as Redis formats it (`%.128s` each).
pub fn unknown_command(args: &[Bytes]) -> CmdError {
    let mut listed: Vec<u8> = Vec::new();
    for arg in args.iter().skip(1) {
        if listed.len() >= 128 {
            break;
        }
        let room = 128 - listed.len();
        listed.push(b'\'');
        listed.extend_from_slice(truncate_for_error(arg, room));
        listed.extend_from_slice(b"' ");
    }
    let mut text = b"ERR unknown command '".to_vec();
    text.extend_from_slice(truncate_for_error(&args[0], 128));
    text.extend_from_slice(b"', with args beginning with: ");
    text.extend_from_slice(&listed);
    CmdError::Text(text.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(name: &str) -> Command {
        let spec = find_spec(name).expect("in the table");
        Command {
            spec,
            handler: |_, _| Ok(Reply::ok()),
            keys: Keys::Table,
            access: Access::Touch,
            redact: None,
            traits: Traits::NONE,
            flags_of: None,
            guard: None,
            channels: Channels::None,
            acl_id: crate::acl::catalog::catalog().id(spec.name).unwrap_or(0),
            keyed: crate::keyspecs::for_spec(spec),
        }
    }

    fn args(items: &[&str]) -> Vec<Bytes> {
        items
            .iter()
            .map(|a| Bytes::copy_from_slice(a.as_bytes()))
            .collect()
    }

    #[test]
    fn movable_keys_are_locked_from_the_key_specs() {
        let keys = |name: &str, line: &[&str]| -> Vec<Bytes> {
            command(name)
                .lock_keys(&args(line), 3)
                .into_iter()
                .map(|(db, k)| {
                    assert_eq!(db, 3);
                    k
                })
                .collect()
        };
        assert_eq!(
            keys("lmpop", &["LMPOP", "2", "a", "b", "LEFT"]),
            args(&["a", "b"])
        );
        assert_eq!(
            keys(
                "zunionstore",
                &["ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"]
            ),
            args(&["d", "a", "b"])
        );
        assert_eq!(
            keys("sort", &["SORT", "l", "BY", "w_*", "STORE", "dst"]),
            args(&["l", "dst"])
        );
        assert_eq!(keys("get", &["GET", "k"]), args(&["k"]));
    }
}
