//! The users and the ACL log: what the server holds of ACL (Redis's `Users`
//! radix tree and `ACLLog`).
//!
//! A user is never changed in place: ACL SETUSER builds the changed copy
//! and swaps it in, and the generation counter moves. A connection keeps
//! its user (`Session::user`) and, before each command, compares one
//! atomic generation with the one it saw; when they differ it takes its
//! user again by name, so a change applies to live connections at once
//! and the check itself takes no lock.

use bytes::Bytes;
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::rules::{has_spaces, merge_selector_args, User};

/// Log entries of the same kind closer together than this are counted in
/// one entry (Redis's ACL_LOG_GROUPING_MAX_TIME_DELTA).
const GROUPING_MS: u64 = 60_000;
/// How many of the newest entries a new one may be grouped with.
const GROUPING_SCAN: usize = 10;

/// Why a command (or AUTH) was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Command,
    Key,
    Auth,
    Channel,
}

impl Reason {
    pub fn name(self) -> &'static str {
        match self {
            Reason::Command => "command",
            Reason::Key => "key",
            Reason::Auth => "auth",
            Reason::Channel => "channel",
        }
    }
}

/// Where the refused command ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    Toplevel,
    Multi,
    Lua,
}

impl Context {
    pub fn name(self) -> &'static str {
        match self {
            Context::Toplevel => "toplevel",
            Context::Multi => "multi",
            Context::Lua => "lua",
        }
    }
}

/// One ACL LOG entry.
#[derive(Clone, Debug)]
pub struct LogEntry {
    pub count: u64,
    pub reason: Reason,
    pub context: Context,
    /// The command, key or channel refused, or the user AUTH named.
    pub object: Bytes,
    pub username: Bytes,
    /// When it last happened (ms since the epoch).
    pub at_ms: u64,
    /// The client's CLIENT LIST line (without the newline).
    pub client_info: String,
}

pub struct Acl {
    users: RwLock<BTreeMap<Bytes, Arc<User>>>,
    generation: AtomicU64,
    log: Mutex<VecDeque<LogEntry>>,
}

impl Default for Acl {
    fn default() -> Self {
        Self::new()
    }
}

impl Acl {
    /// Only the default user: on, no password, everything.
    pub fn new() -> Self {
        let mut users = BTreeMap::new();
        users.insert(
            Bytes::from_static(b"default"),
            Arc::new(User::new_default()),
        );
        Acl {
            users: RwLock::new(users),
            generation: AtomicU64::new(0),
            log: Mutex::new(VecDeque::new()),
        }
    }

    /// Moves whenever a user changes, appears or goes.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn changed(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    pub fn user(&self, name: &[u8]) -> Option<Arc<User>> {
        self.users.read().get(name).cloned()
    }

    pub fn default_user(&self) -> Arc<User> {
        self.user(b"default")
            .unwrap_or_else(|| Arc::new(User::new_default()))
    }

    /// Every user, by name.
    pub fn users(&self) -> Vec<Arc<User>> {
        self.users.read().values().cloned().collect()
    }

    /// The user `name` with `password`, if it exists, is on, and the
    /// password is one of its own (or it needs none).
    pub fn authenticate(&self, name: &[u8], password: &[u8]) -> Option<Arc<User>> {
        let user = self.user(name)?;
        (user.enabled && user.password_ok(password)).then_some(user)
    }

    /// ACL SETUSER: applies `ops` to a copy of the user (a new one if it
    /// does not exist), all or nothing. Returns the user before and after,
    /// or Redis's error text.
    pub fn set_user(
        &self,
        name: &Bytes,
        ops: &[Bytes],
        all_channels: bool,
    ) -> Result<(Option<Arc<User>>, Arc<User>), String> {
        let merged = merge_selector_args(ops).map_err(|i| {
            format!(
                "Unmatched parenthesis in acl selector starting at '{}'.",
                String::from_utf8_lossy(&ops[i])
            )
        })?;
        let mut users = self.users.write();
        let before = users.get(name).cloned();
        let mut user = match &before {
            Some(user) => User::clone(user),
            None => User::new(name.clone(), all_channels),
        };
        for op in &merged {
            user.apply(op, all_channels).map_err(|e| {
                format!(
                    "Error in ACL SETUSER modifier '{}': {}",
                    String::from_utf8_lossy(op),
                    e.message()
                )
            })?;
        }
        let after = Arc::new(user);
        users.insert(name.clone(), after.clone());
        drop(users);
        self.changed();
        Ok((before, after))
    }

    /// ACL DELUSER: removes the users named; returns the removed ones.
    pub fn delete(&self, names: &[Bytes]) -> Vec<Arc<User>> {
        let mut users = self.users.write();
        let removed: Vec<Arc<User>> = names.iter().filter_map(|n| users.remove(n)).collect();
        drop(users);
        if !removed.is_empty() {
            self.changed();
        }
        removed
    }

    /// Replaces every user (ACL LOAD, start-up); a set without `default`
    /// gets a fresh default user.
    pub fn replace_all(&self, mut users: BTreeMap<Bytes, Arc<User>>) {
        users
            .entry(Bytes::from_static(b"default"))
            .or_insert_with(|| Arc::new(User::new_default()));
        *self.users.write() = users;
        self.changed();
    }

    /// `requirepass`: the default user's only password, or `nopass`
    /// (Redis's ACLUpdateDefaultUserPassword).
    pub fn set_default_password(&self, password: Option<&[u8]>) {
        let mut users = self.users.write();
        let mut user = users
            .get(b"default".as_slice())
            .map(|u| User::clone(u))
            .unwrap_or_else(User::new_default);
        let _ = user.apply(b"resetpass", false);
        match password {
            Some(p) => {
                let mut op = b">".to_vec();
                op.extend_from_slice(p);
                let _ = user.apply(&op, false);
            }
            None => {
                let _ = user.apply(b"nopass", false);
            }
        }
        users.insert(Bytes::from_static(b"default"), Arc::new(user));
        drop(users);
        self.changed();
    }

    /// Adds an entry to the ACL log, or counts it in a recent one of the
    /// same kind; keeps at most `max_len` entries.
    pub fn log(&self, entry: LogEntry, max_len: usize) {
        let mut log = self.log.lock();
        let same = log.iter().take(GROUPING_SCAN).position(|e| {
            e.reason == entry.reason
                && e.context == entry.context
                && e.at_ms.abs_diff(entry.at_ms) <= GROUPING_MS
                && e.object == entry.object
                && e.username == entry.username
        });
        match same.and_then(|i| log.remove(i)) {
            Some(mut existing) => {
                existing.count += 1;
                existing.at_ms = entry.at_ms;
                existing.client_info = entry.client_info;
                log.push_front(existing);
            }
            None => {
                log.push_front(entry);
                log.truncate(max_len);
            }
        }
    }

    /// The newest `count` entries.
    pub fn log_entries(&self, count: usize) -> Vec<LogEntry> {
        self.log.lock().iter().take(count).cloned().collect()
    }

    pub fn reset_log(&self) {
        self.log.lock().clear();
    }
}

/// Parses an ACL file's text (or the `user` lines of a config file) into a
/// set of users, as Redis's ACLLoadFromFile: every line is `user <name>
/// rules...`; any error leaves nothing loaded and is reported with the
/// file name and line number.
pub fn parse_users(
    text: &str,
    file: &str,
    all_channels: bool,
) -> Result<BTreeMap<Bytes, Arc<User>>, String> {
    let mut users: BTreeMap<Bytes, Arc<User>> = BTreeMap::new();
    let mut errors = String::new();
    for (i, line) in text.split('\n').enumerate() {
        let number = i + 1;
        let line = line.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
        if line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split(' ').collect();
        if words[0] != "user" || words.len() < 2 {
            errors.push_str(&format!(
                "{file}:{number} should start with user keyword followed by the username. "
            ));
            continue;
        }
        let name = Bytes::copy_from_slice(words[1].as_bytes());
        if has_spaces(&name) || name.is_empty() {
            errors.push_str(&format!(
                "'{file}:{number}: username '{}' contains invalid characters. ",
                words[1]
            ));
            continue;
        }
        if users.contains_key(&name) {
            errors.push_str(&format!(
                "WARNING: Duplicate user '{}' found on line {number}. ",
                words[1]
            ));
            continue;
        }
        let ops: Vec<Bytes> = words[2..]
            .iter()
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect();
        let Ok(merged) = merge_selector_args(&ops) else {
            errors.push_str(&format!(
                "{file}:{number}: Unmatched parenthesis in selector definition."
            ));
            continue;
        };
        let mut user = User::new(name.clone(), all_channels);
        let mut syntax_error = false;
        for op in &merged {
            let op = op
                .as_ref()
                .strip_suffix(b"\r")
                .unwrap_or(op.as_ref())
                .to_vec();
            if let Err(e) = user.apply(&op, all_channels) {
                if e == super::rules::RuleError::Unknown {
                    errors.push_str(&format!(
                        "{file}:{number}: Error in applying operation '{}': {}. ",
                        String::from_utf8_lossy(&op),
                        e.message()
                    ));
                } else if !syntax_error {
                    errors.push_str(&format!("{file}:{number}: {}. ", e.message()));
                    syntax_error = true;
                }
            }
        }
        users.insert(name, Arc::new(user));
    }
    if errors.is_empty() {
        Ok(users)
    } else {
        errors.push_str(
            "WARNING: ACL errors detected, no change to the previously active ACL rules was performed",
        );
        Err(errors)
    }
}

/// Each user as its `user <name> rules...` line (CONFIG REWRITE).
pub fn user_lines(users: &[Arc<User>]) -> Vec<String> {
    users
        .iter()
        .map(|user| {
            format!(
                "user {} {}",
                String::from_utf8_lossy(&user.name),
                String::from_utf8_lossy(&user.describe())
            )
        })
        .collect()
}

/// The ACL file's text for these users (ACL SAVE).
pub fn file_text(users: &[Arc<User>]) -> Vec<u8> {
    user_lines(users)
        .into_iter()
        .flat_map(|line| (line + "\n").into_bytes())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn setuser_is_all_or_nothing_and_moves_the_generation() {
        let acl = Acl::new();
        let g = acl.generation();
        acl.set_user(&b("u"), &[b("on"), b(">p"), b("+get")], false)
            .unwrap();
        assert!(acl.generation() > g);
        let err = acl
            .set_user(&b("u"), &[b("off"), b("+nosuch")], false)
            .unwrap_err();
        assert_eq!(
            err,
            "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL"
        );
        assert!(acl.user(b"u").unwrap().enabled);
        assert!(acl.authenticate(b"u", b"p").is_some());
        assert!(acl.authenticate(b"u", b"x").is_none());
    }

    #[test]
    fn the_log_groups_recent_entries_of_one_kind() {
        let acl = Acl::new();
        let entry = |object: &str, at_ms| LogEntry {
            count: 1,
            reason: Reason::Key,
            context: Context::Toplevel,
            object: b(object),
            username: b("u"),
            at_ms,
            client_info: String::new(),
        };
        acl.log(entry("k", 1000), 128);
        acl.log(entry("k", 2000), 128);
        acl.log(entry("j", 2000), 128);
        let entries = acl.log_entries(10);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].count, 2);
        acl.log(entry("x", 3000), 2);
        assert_eq!(acl.log_entries(10).len(), 2);
    }

    #[test]
    fn files_load_whole_or_not_at_all() {
        let users = parse_users("user a on >p ~* +@all\n\nuser b off\n", "f.acl", false).unwrap();
        assert_eq!(users.len(), 2);
        let err = parse_users("user a on\nuser a off\nfoo\n", "f.acl", false).unwrap_err();
        assert!(err.contains("Duplicate user 'a' found on line 2"), "{err}");
        assert!(
            err.contains("f.acl:3 should start with user keyword"),
            "{err}"
        );
    }
}
