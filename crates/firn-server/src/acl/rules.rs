//! A user and its selectors, changed by ACL rules (`on`, `>pass`, `+get`,
//! `~key*`, `(...)`) and described back in the form ACL LIST, ACL GETUSER
//! and the ACL file use, as Redis 7.0's acl.c does.
//!
//! A selector holds one bit per command of the catalog (`catalog.rs`),
//! the first arguments allowed of otherwise denied commands, its key
//! patterns (each with read and/or write permission) and its channel
//! patterns. A user has a root selector (the rules given outside
//! parentheses) and any number of others; a command is allowed when one
//! selector allows it whole.

use bytes::Bytes;
use firn_prims::glob::Glob;
use sha2::{Digest, Sha256};

use super::catalog::{catalog, category_bit, Catalog, CATEGORIES};

/// Why a rule was refused (Redis's errno values in ACLSetUser).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleError {
    /// EINVAL
    Syntax,
    /// ENOENT
    Unknown,
    /// EEXIST
    KeyAfterAll,
    /// EISDIR
    ChannelAfterAll,
    /// ENODEV
    NoSuchPassword,
    /// EBADMSG
    BadHash,
    /// ECHILD
    FirstArgOfSubcommand,
}

impl RuleError {
    /// Redis's ACLSetUserStringError.
    pub fn message(self) -> &'static str {
        match self {
            RuleError::Unknown => "Unknown command or category name in ACL",
            RuleError::Syntax => "Syntax error",
            RuleError::KeyAfterAll => "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
            RuleError::ChannelAfterAll => "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
            RuleError::NoSuchPassword => "The password you are trying to remove from the user does not exist",
            RuleError::BadHash => "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
            RuleError::FirstArgOfSubcommand => "Allowing first-arg of a subcommand is not supported",
        }
    }
}

/// How a pattern is matched: most ACL patterns are a literal prefix and a
/// final `*` (`~app:*`), matched by comparing bytes (a third of the check's
/// time went to the glob matcher with ten such patterns: bench/README.md).
#[derive(Clone, Debug)]
enum Matcher {
    /// `*`: any non-empty text.
    All,
    /// No special character: the whole key.
    Exact,
    /// A literal prefix of this many bytes, then `*`.
    Prefix(usize),
    Glob(Glob),
}

impl Matcher {
    fn new(pattern: &[u8]) -> Self {
        let special = |c: &u8| matches!(c, b'*' | b'?' | b'[' | b'\\');
        match pattern.iter().position(special) {
            None => Matcher::Exact,
            Some(0) if pattern == b"*" => Matcher::All,
            Some(at) if at + 1 == pattern.len() && pattern[at] == b'*' => Matcher::Prefix(at),
            Some(_) => Matcher::Glob(Glob::new(pattern, false)),
        }
    }

    /// As Redis's stringmatchlen: an empty text matches only an empty
    /// pattern (not even `*`).
    fn matches(&self, pattern: &[u8], text: &[u8]) -> bool {
        match self {
            Matcher::All => !text.is_empty(),
            Matcher::Exact => pattern == text,
            Matcher::Prefix(len) => text.starts_with(&pattern[..*len]),
            Matcher::Glob(glob) => glob.matches(text),
        }
    }
}

/// A key pattern and the access it grants.
#[derive(Clone, Debug)]
pub struct KeyPattern {
    pub pattern: Bytes,
    pub read: bool,
    pub write: bool,
    matcher: Matcher,
}

impl KeyPattern {
    fn new(pattern: Bytes, read: bool, write: bool) -> Self {
        let matcher = Matcher::new(&pattern);
        KeyPattern {
            pattern,
            read,
            write,
            matcher,
        }
    }

    pub fn matches(&self, key: &[u8]) -> bool {
        self.matcher.matches(&self.pattern, key)
    }

    /// `~p`, `%R~p` or `%W~p`.
    fn describe(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(match (self.read, self.write) {
            (true, true) => b"~".as_slice(),
            (true, false) => b"%R~",
            _ => b"%W~",
        });
        out.extend_from_slice(&self.pattern);
    }
}

/// A channel pattern.
#[derive(Clone, Debug)]
pub struct ChannelPattern {
    pub pattern: Bytes,
    matcher: Matcher,
}

impl ChannelPattern {
    fn new(pattern: Bytes) -> Self {
        let matcher = Matcher::new(&pattern);
        ChannelPattern { pattern, matcher }
    }

    /// A channel (PUBLISH, SUBSCRIBE) matches as a glob; a pattern
    /// (PSUBSCRIBE) only as the same literal pattern.
    pub fn allows(&self, channel: &[u8], is_pattern: bool) -> bool {
        if is_pattern {
            self.pattern.as_ref() == channel
        } else {
            self.matcher.matches(&self.pattern, channel)
        }
    }
}

/// One selector: what commands, keys and channels it allows.
#[derive(Clone, Debug)]
pub struct Selector {
    pub all_keys: bool,
    pub all_channels: bool,
    pub all_commands: bool,
    /// Set by `+@all` and cleared by `-@all`: commands added later would be
    /// allowed (Redis's reserved bit; it decides `+@all`/`-@all` first in
    /// a description).
    future: bool,
    bits: Vec<u64>,
    /// Allowed first arguments of otherwise denied commands, by id.
    first_args: Vec<(usize, Vec<Bytes>)>,
    pub keys: Vec<KeyPattern>,
    pub channels: Vec<ChannelPattern>,
}

impl Selector {
    /// An empty selector; `all_channels` per `acl-pubsub-default`.
    pub fn new(all_channels: bool) -> Self {
        Selector {
            all_keys: false,
            all_channels,
            all_commands: false,
            future: false,
            bits: vec![0; catalog().len().div_ceil(64)],
            first_args: Vec::new(),
            keys: Vec::new(),
            channels: Vec::new(),
        }
    }

    pub fn allows_id(&self, id: usize) -> bool {
        self.bits[id / 64] & (1 << (id % 64)) != 0
    }

    fn set_bit(&mut self, id: usize, on: bool) {
        if on {
            self.bits[id / 64] |= 1 << (id % 64);
        } else {
            self.bits[id / 64] &= !(1 << (id % 64));
            self.all_commands = false;
        }
    }

    /// The first arguments allowed of command `id` when its bit is off.
    pub fn first_args(&self, id: usize) -> Option<&[Bytes]> {
        self.first_args
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, args)| args.as_slice())
    }

    /// Allows or denies a command, and with a container its subcommands.
    fn change(&mut self, catalog: &Catalog, id: usize, allow: bool) {
        self.set_bit(id, allow);
        self.first_args.retain(|(i, _)| *i != id);
        for &child in &catalog.entries[id].children {
            self.set_bit(child, allow);
        }
    }

    fn change_category(&mut self, catalog: &Catalog, bit: u32, allow: bool) {
        for (id, entry) in catalog.entries.iter().enumerate() {
            if entry.categories & bit != 0 {
                self.change(catalog, id, allow);
            }
        }
    }

    fn set_all(&mut self, allow: bool) {
        let word = if allow { u64::MAX } else { 0 };
        self.bits.iter_mut().for_each(|w| *w = word);
        self.all_commands = allow;
        self.future = allow;
        self.first_args.clear();
    }

    /// Applies one selector rule (Redis's ACLSetSelector).
    pub fn apply(&mut self, op: &[u8]) -> Result<(), RuleError> {
        let catalog = catalog();
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if is("allkeys") || is("~*") {
            self.all_keys = true;
            self.keys.clear();
        } else if is("resetkeys") {
            self.all_keys = false;
            self.keys.clear();
        } else if is("allchannels") || is("&*") {
            self.all_channels = true;
            self.channels.clear();
        } else if is("resetchannels") {
            self.all_channels = false;
            self.channels.clear();
        } else if is("allcommands") || is("+@all") {
            self.set_all(true);
        } else if is("nocommands") || is("-@all") {
            self.set_all(false);
        } else if op.first() == Some(&b'~') || op.first() == Some(&b'%') {
            self.add_key_pattern(op)?;
        } else if op.first() == Some(&b'&') {
            if self.all_channels {
                return Err(RuleError::ChannelAfterAll);
            }
            let pattern = &op[1..];
            if has_spaces(pattern) {
                return Err(RuleError::Syntax);
            }
            if !self.channels.iter().any(|c| c.pattern.as_ref() == pattern) {
                self.channels
                    .push(ChannelPattern::new(Bytes::copy_from_slice(pattern)));
            }
            self.all_channels = false;
        } else if op.len() >= 2 && (op[0] == b'+' || op[0] == b'-') && op[1] == b'@' {
            let bit = category_bit(&op[2..]).ok_or(RuleError::Unknown)?;
            self.change_category(catalog, bit, op[0] == b'+');
        } else if op.first() == Some(&b'+') {
            self.allow_command(catalog, &op[1..])?;
        } else if op.first() == Some(&b'-') {
            let name = std::str::from_utf8(&op[1..]).map_err(|_| RuleError::Unknown)?;
            let id = catalog.id(name).ok_or(RuleError::Unknown)?;
            self.change(catalog, id, false);
        } else {
            return Err(RuleError::Syntax);
        }
        Ok(())
    }

    fn add_key_pattern(&mut self, op: &[u8]) -> Result<(), RuleError> {
        if self.all_keys {
            return Err(RuleError::KeyAfterAll);
        }
        let (mut read, mut write) = (false, false);
        let mut offset = 1;
        if op[0] == b'%' {
            loop {
                match op.get(offset).map(u8::to_ascii_uppercase) {
                    Some(b'R') if !read => read = true,
                    Some(b'W') if !write => write = true,
                    Some(b'~') => {
                        offset += 1;
                        break;
                    }
                    // `%R` with no `~` ends the loop with an empty pattern,
                    // as Redis's does.
                    None => break,
                    _ => return Err(RuleError::Syntax),
                }
                offset += 1;
            }
        } else {
            (read, write) = (true, true);
        }
        let pattern = &op[offset.min(op.len())..];
        if has_spaces(pattern) {
            return Err(RuleError::Syntax);
        }
        match self.keys.iter_mut().find(|k| k.pattern.as_ref() == pattern) {
            Some(existing) => {
                existing.read |= read;
                existing.write |= write;
            }
            None => self.keys.push(KeyPattern::new(
                Bytes::copy_from_slice(pattern),
                read,
                write,
            )),
        }
        self.all_keys = false;
        Ok(())
    }

    /// `+cmd`, `+container|sub`, or `+cmd|first-arg`.
    fn allow_command(&mut self, catalog: &Catalog, name: &[u8]) -> Result<(), RuleError> {
        let name = std::str::from_utf8(name).map_err(|_| RuleError::Unknown)?;
        let Some((command, sub)) = name.rsplit_once('|') else {
            let id = catalog.id(name).ok_or(RuleError::Unknown)?;
            self.change(catalog, id, true);
            return Ok(());
        };
        let id = catalog.id(command).ok_or(RuleError::Unknown)?;
        if catalog.entries[id].parent.is_some() {
            return Err(RuleError::FirstArgOfSubcommand);
        }
        if sub.is_empty() {
            return Err(RuleError::Syntax);
        }
        if !catalog.entries[id].children.is_empty() {
            let sub_id = catalog.id(name).ok_or(RuleError::Unknown)?;
            self.change(catalog, sub_id, true);
            return Ok(());
        }
        let sub = Bytes::copy_from_slice(sub.as_bytes());
        match self.first_args.iter_mut().find(|(i, _)| *i == id) {
            Some((_, args)) => {
                if !args.iter().any(|a| a.eq_ignore_ascii_case(&sub)) {
                    args.push(sub);
                }
            }
            None => self.first_args.push((id, vec![sub])),
        }
        Ok(())
    }

    /// How many commands of a category this selector allows and denies.
    fn count(&self, catalog: &Catalog, bit: u32) -> (usize, usize) {
        let (mut on, mut off) = (0, 0);
        for (id, entry) in catalog.entries.iter().enumerate() {
            if entry.categories & bit != 0 {
                if self.allows_id(id) {
                    on += 1;
                } else {
                    off += 1;
                }
            }
        }
        (on, off)
    }

    /// The command rules that rebuild this selector's bitmap (Redis's
    /// ACLDescribeSelectorCommandRules): `+@all` or `-@all`, then the
    /// categories that fit best, then single commands.
    pub fn describe_commands(&self) -> String {
        let catalog = catalog();
        let mut rules = String::new();
        let additive = !self.future;
        let mut fake = Selector::new(false);
        if additive {
            rules.push_str("-@all ");
            fake.set_all(false);
        } else {
            rules.push_str("+@all ");
            fake.set_all(true);
        }
        let mut temp = self.clone();
        let mut applied = [false; CATEGORIES.len()];
        loop {
            let mut best = None;
            let (mut min_diff, mut max_same) = (usize::MAX, 0);
            for (j, _) in CATEGORIES.iter().enumerate() {
                if applied[j] {
                    continue;
                }
                let (on, off) = temp.count(catalog, 1 << j);
                let (diff, same) = if additive { (off, on) } else { (on, off) };
                if same > diff && (diff < min_diff || (diff == min_diff && same > max_same)) {
                    best = Some(j);
                    min_diff = diff;
                    max_same = same;
                }
            }
            let Some(j) = best else { break };
            fake.change_category(catalog, 1 << j, additive);
            temp.change_category(catalog, 1 << j, !additive);
            rules.push(if additive { '+' } else { '-' });
            rules.push('@');
            rules.push_str(CATEGORIES[j]);
            rules.push(' ');
            applied[j] = true;
        }
        // Then single commands, each followed by the first arguments
        // allowed of it, as Redis emits them.
        for (id, entry) in catalog.entries.iter().enumerate() {
            let mine = self.allows_id(id);
            if mine != fake.allows_id(id) {
                rules.push(if mine { '+' } else { '-' });
                rules.push_str(entry.name);
                rules.push(' ');
                fake.change(catalog, id, mine);
            }
            if mine {
                continue;
            }
            for arg in self.first_args(id).unwrap_or_default() {
                rules.push('+');
                rules.push_str(entry.name);
                rules.push('|');
                rules.push_str(&String::from_utf8_lossy(arg));
                rules.push(' ');
            }
        }
        rules.pop();
        rules
    }

    /// ACL GETUSER's `keys` field.
    pub fn describe_keys(&self) -> Vec<u8> {
        if self.all_keys {
            return b"~*".to_vec();
        }
        let mut out = Vec::new();
        for (i, k) in self.keys.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            k.describe(&mut out);
        }
        out
    }

    /// ACL GETUSER's `channels` field.
    pub fn describe_channels(&self) -> Vec<u8> {
        if self.all_channels {
            return b"&*".to_vec();
        }
        let mut out = Vec::new();
        for (i, c) in self.channels.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            out.push(b'&');
            out.extend_from_slice(&c.pattern);
        }
        out
    }

    /// The selector in rule form (Redis's ACLDescribeSelector).
    fn describe(&self, out: &mut Vec<u8>) {
        if self.all_keys {
            out.extend_from_slice(b"~* ");
        } else {
            for k in &self.keys {
                k.describe(out);
                out.push(b' ');
            }
        }
        if self.all_channels {
            out.extend_from_slice(b"&* ");
        } else {
            out.extend_from_slice(b"resetchannels ");
            for c in &self.channels {
                out.push(b'&');
                out.extend_from_slice(&c.pattern);
                out.push(b' ');
            }
        }
        out.extend_from_slice(self.describe_commands().as_bytes());
    }

    /// Whether it allows everything: commands, keys and channels.
    pub fn unrestricted(&self) -> bool {
        self.all_commands && self.all_keys && self.all_channels
    }
}

/// Redis's ACLStringHasSpaces: whitespace or NUL.
pub fn has_spaces(s: &[u8]) -> bool {
    s.iter()
        .any(|&c| c == 0 || c == b' ' || (b'\t'..=b'\r').contains(&c))
}

/// The SHA-256 of a password, in lowercase hex (how users keep them).
pub fn hash_password(password: &[u8]) -> String {
    let digest = Sha256::digest(password);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

fn valid_hash(hash: &[u8]) -> bool {
    hash.len() == 64 && hash.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// A user: its flags, password hashes and selectors.
#[derive(Clone, Debug)]
pub struct User {
    pub name: Bytes,
    pub enabled: bool,
    pub nopass: bool,
    /// `skip-sanitize-payload` (true) or `sanitize-payload` (false) once
    /// either was given; Redis shows whichever flag is set.
    pub skip_sanitize: Option<bool>,
    pub passwords: Vec<String>,
    pub root: Selector,
    pub selectors: Vec<Selector>,
    /// The root selector (and no other) allows everything: the checks can
    /// be skipped.
    pub unrestricted: bool,
}

impl User {
    /// A new user: off, no password, no permissions (Redis's ACLCreateUser).
    pub fn new(name: Bytes, all_channels: bool) -> Self {
        User {
            name,
            enabled: false,
            nopass: false,
            skip_sanitize: None,
            passwords: Vec::new(),
            root: Selector::new(all_channels),
            selectors: Vec::new(),
            unrestricted: false,
        }
    }

    /// The default user as Redis creates it: on, nopass, everything.
    pub fn new_default() -> Self {
        let mut user = User::new(Bytes::from_static(b"default"), false);
        for op in ["+@all", "~*", "&*", "on", "nopass"] {
            let _ = user.apply(op.as_bytes(), false);
        }
        user
    }

    /// The nameless user of the server's own clients (a replica's link to
    /// its primary, an import): allowed everything, never refreshed.
    pub fn internal() -> Self {
        let mut user = User::new_default();
        user.name = Bytes::new();
        user
    }

    /// Whether it is [`User::internal`].
    pub fn is_internal(&self) -> bool {
        self.name.is_empty()
    }

    /// Applies one rule (Redis's ACLSetUser); `all_channels` is what
    /// `acl-pubsub-default` gives new selectors and `reset`.
    pub fn apply(&mut self, op: &[u8], all_channels: bool) -> Result<(), RuleError> {
        let result = self.apply_rule(op, all_channels);
        self.unrestricted = self.root.unrestricted();
        result
    }

    fn apply_rule(&mut self, op: &[u8], all_channels: bool) -> Result<(), RuleError> {
        if op.is_empty() {
            return Ok(());
        }
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if is("on") {
            self.enabled = true;
        } else if is("off") {
            self.enabled = false;
        } else if is("skip-sanitize-payload") {
            self.skip_sanitize = Some(true);
        } else if is("sanitize-payload") {
            self.skip_sanitize = Some(false);
        } else if is("nopass") {
            self.nopass = true;
            self.passwords.clear();
        } else if is("resetpass") {
            self.nopass = false;
            self.passwords.clear();
        } else if op[0] == b'>' || op[0] == b'#' {
            let hash = if op[0] == b'>' {
                hash_password(&op[1..])
            } else if valid_hash(&op[1..]) {
                String::from_utf8_lossy(&op[1..]).into_owned()
            } else {
                return Err(RuleError::BadHash);
            };
            if !self.passwords.contains(&hash) {
                self.passwords.push(hash);
            }
            self.nopass = false;
        } else if op[0] == b'<' || op[0] == b'!' {
            let hash = if op[0] == b'<' {
                hash_password(&op[1..])
            } else if valid_hash(&op[1..]) {
                String::from_utf8_lossy(&op[1..]).into_owned()
            } else {
                return Err(RuleError::BadHash);
            };
            let at = self
                .passwords
                .iter()
                .position(|p| *p == hash)
                .ok_or(RuleError::NoSuchPassword)?;
            self.passwords.remove(at);
        } else if op[0] == b'(' && op[op.len() - 1] == b')' {
            let inner = &op[1..op.len() - 1];
            let mut selector = Selector::new(all_channels);
            let words = firn_prims::split_args(inner).ok_or(RuleError::Syntax)?;
            for word in words {
                selector.apply(&word)?;
            }
            self.selectors.push(selector);
        } else if is("clearselectors") {
            self.selectors.clear();
        } else if is("reset") {
            self.nopass = false;
            self.passwords.clear();
            self.root.all_keys = false;
            self.root.keys.clear();
            self.root.all_channels = all_channels;
            self.root.channels.clear();
            self.enabled = false;
            self.skip_sanitize = Some(false);
            self.selectors.clear();
            self.root.set_all(false);
        } else {
            self.root.apply(op)?;
        }
        Ok(())
    }

    /// Whether `password` is one of the user's (or it needs none).
    pub fn password_ok(&self, password: &[u8]) -> bool {
        if self.nopass {
            return true;
        }
        let hashed = hash_password(password);
        // Compared in full whatever matches, like Redis's
        // time_independent_strcmp.
        self.passwords.iter().fold(false, |found, p| {
            let diff = p
                .bytes()
                .zip(hashed.bytes())
                .fold(0u8, |d, (a, b)| d | (a ^ b));
            found | (diff == 0 && p.len() == hashed.len())
        })
    }

    /// The flags ACL GETUSER lists, in Redis's order.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut flags = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            flags.push("nopass");
        }
        match self.skip_sanitize {
            Some(true) => flags.push("skip-sanitize-payload"),
            Some(false) => flags.push("sanitize-payload"),
            None => {}
        }
        flags
    }

    /// The user in rule form, as ACL LIST and the ACL file show it
    /// (without `user <name> `).
    pub fn describe(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for flag in self.flags() {
            out.extend_from_slice(flag.as_bytes());
            out.push(b' ');
        }
        for p in &self.passwords {
            out.push(b'#');
            out.extend_from_slice(p.as_bytes());
            out.push(b' ');
        }
        self.root.describe(&mut out);
        for s in &self.selectors {
            out.extend_from_slice(b" (");
            s.describe(&mut out);
            out.push(b')');
        }
        out
    }

    /// Every selector, the root first.
    pub fn all_selectors(&self) -> impl Iterator<Item = &Selector> {
        std::iter::once(&self.root).chain(self.selectors.iter())
    }
}

/// Joins a selector given across several arguments (`(+get` `~key)`) into
/// one, as Redis's ACLMergeSelectorArguments does; `Err(i)` names the
/// argument whose parenthesis is never closed.
pub fn merge_selector_args(args: &[Bytes]) -> Result<Vec<Bytes>, usize> {
    let mut merged = Vec::with_capacity(args.len());
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (i, op) in args.iter().enumerate() {
        if let Some((_, selector)) = open.as_mut() {
            selector.push(b' ');
            selector.extend_from_slice(op);
            if op.last() == Some(&b')') {
                let (_, selector) = open.take().unwrap_or_default();
                merged.push(Bytes::from(selector));
            }
            continue;
        }
        if op.first() == Some(&b'(') && op.last() != Some(&b')') {
            open = Some((i, op.to_vec()));
            continue;
        }
        merged.push(op.clone());
    }
    match open {
        Some((i, _)) => Err(i),
        None => Ok(merged),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(rules: &str) -> User {
        let mut u = User::new(Bytes::from_static(b"u"), false);
        let ops: Vec<Bytes> = rules
            .split(' ')
            .filter(|r| !r.is_empty())
            .map(|r| Bytes::copy_from_slice(r.as_bytes()))
            .collect();
        for op in merge_selector_args(&ops).unwrap() {
            u.apply(&op, false).unwrap();
        }
        u
    }

    fn described(rules: &str) -> String {
        String::from_utf8(user(rules).describe()).unwrap()
    }

    #[test]
    fn descriptions_follow_redis() {
        assert_eq!(described(""), "off resetchannels -@all");
        assert_eq!(described("on nopass ~* &* +@all"), "on nopass ~* &* +@all");
        assert_eq!(described("on +@all -get"), "on resetchannels +@all -get");
        assert_eq!(
            described("on ~a* %R~b* %W~c* &ch +get"),
            "on ~a* %R~b* %W~c* resetchannels &ch -@all +get"
        );
        assert_eq!(described("+select|0"), "off resetchannels -@all +select|0");
        assert_eq!(
            described("on (+get ~k*)"),
            "on resetchannels -@all (~k* resetchannels -@all +get)"
        );
        assert_eq!(described("%RW~x"), "off ~x resetchannels -@all");
        assert_eq!(described("+@hash"), "off resetchannels -@all +@hash");
    }

    #[test]
    fn literal_prefixes_match_as_globs_do() {
        let cases: &[(&[u8], &[u8])] = &[
            (b"*", b""),
            (b"*", b"anything"),
            (b"app:*", b"app:1"),
            (b"app:*", b"app:"),
            (b"app:*", b"ap"),
            (b"app:*", b"other"),
            (b"exact", b"exact"),
            (b"exact", b"exactly"),
            (b"", b""),
            (b"", b"x"),
            (b"a?c", b"abc"),
            (b"a[bc]*", b"ac1"),
            (b"a\\*", b"a*"),
            (b"a\\*", b"ab"),
            (b"**", b"x"),
            (b"a*b*", b"axxb"),
        ];
        for (pattern, text) in cases {
            let ours = Matcher::new(pattern).matches(pattern, text);
            let glob = Glob::new(pattern, false).matches(text);
            assert_eq!(
                ours,
                glob,
                "{:?} ~ {:?}",
                String::from_utf8_lossy(pattern),
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn passwords_and_errors() {
        let mut u = user("on >secret");
        assert!(u.password_ok(b"secret"));
        assert!(!u.password_ok(b"other"));
        assert_eq!(u.apply(b"<nope", false), Err(RuleError::NoSuchPassword));
        assert_eq!(u.apply(b"#abc", false), Err(RuleError::BadHash));
        assert_eq!(u.apply(b"+nosuch", false), Err(RuleError::Unknown));
        assert_eq!(u.apply(b"+@nosuch", false), Err(RuleError::Unknown));
        assert_eq!(u.apply(b"bogus", false), Err(RuleError::Syntax));
        assert_eq!(
            u.apply(b"+config|get|x", false),
            Err(RuleError::FirstArgOfSubcommand)
        );
        u.apply(b"~*", false).unwrap();
        assert_eq!(u.apply(b"~a", false), Err(RuleError::KeyAfterAll));
        assert_eq!(
            hash_password(b"foo"),
            "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
        );
    }

    #[test]
    fn selectors_given_across_arguments_are_joined() {
        let args: Vec<Bytes> = ["on", "(+get", "~k)", "(+set ~x)"]
            .iter()
            .map(|s| Bytes::from_static(s.as_bytes()))
            .collect();
        let merged = merge_selector_args(&args).unwrap();
        assert_eq!(merged, ["on", "(+get ~k)", "(+set ~x)"]);
        assert_eq!(merge_selector_args(&args[..2]), Err(1));
    }
}
