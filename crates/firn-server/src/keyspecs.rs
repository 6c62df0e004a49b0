//! Finding the keys of a command line as Redis 7.0 does, for COMMAND
//! GETKEYS and GETKEYSANDFLAGS: its key specs (an `index` or a `keyword` to
//! begin at, then a `range` or a `keynum` count of keys), and, where the
//! specs are incomplete, the getkeys procedures of SORT, SORT_RO, MIGRATE
//! and GEORADIUS[BYMEMBER], and the per-call key flags of SET and BITFIELD;
//! which command has which procedure is declared in the generated table
//! (`KeysProc`).
//!
//! Every Redis command is known here, served or not: the served ones from
//! the command table, the others from its `KEY_SPECS` list.

use bytes::Bytes;

use crate::args::is;
use crate::command_table::Flags;
use crate::command_table::{CommandSpec, KeySpecs, KeysProc, MetaValue, COMMANDS, KEY_SPECS};

/// A key spec's flags (COMMAND INFO's names) as a bitset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyFlags(u16);

/// Every key-spec flag name of Redis 7.0, in the order it prints them.
const KEY_FLAG_NAMES: [&str; 11] = [
    "RO",
    "RW",
    "OW",
    "RM",
    "access",
    "update",
    "insert",
    "delete",
    "not_key",
    "incomplete",
    "variable_flags",
];

impl KeyFlags {
    pub const ACCESS: KeyFlags = KeyFlags(1 << 4);
    pub const UPDATE: KeyFlags = KeyFlags(1 << 5);
    pub const INSERT: KeyFlags = KeyFlags(1 << 6);
    pub const DELETE: KeyFlags = KeyFlags(1 << 7);
    pub const NOT_KEY: KeyFlags = KeyFlags(1 << 8);
    pub const INCOMPLETE: KeyFlags = KeyFlags(1 << 9);
    pub const VARIABLE_FLAGS: KeyFlags = KeyFlags(1 << 10);

    pub fn from_names(names: &[&str]) -> KeyFlags {
        KeyFlags(
            names
                .iter()
                .filter_map(|n| KEY_FLAG_NAMES.iter().position(|k| k == n))
                .fold(0, |acc, bit| acc | 1 << bit),
        )
    }

    /// The names, in Redis's order.
    pub fn names(self) -> Vec<&'static str> {
        KEY_FLAG_NAMES
            .iter()
            .enumerate()
            .filter(|(bit, _)| self.0 & (1 << bit) != 0)
            .map(|(_, name)| *name)
            .collect()
    }

    pub fn contains(self, other: KeyFlags) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn without(self, other: KeyFlags) -> KeyFlags {
        KeyFlags(self.0 & !other.0)
    }

    /// The key is read (ACL `%R~`).
    pub fn reads(self) -> bool {
        self.contains(KeyFlags::ACCESS)
    }

    /// The key is written (ACL `%W~`): inserted, updated or deleted.
    pub fn writes(self) -> bool {
        self.0 & (KeyFlags::INSERT.0 | KeyFlags::UPDATE.0 | KeyFlags::DELETE.0) != 0
    }
}

/// Where a key spec starts looking.
#[derive(Debug)]
enum Begin {
    Index(i64),
    Keyword {
        keyword: &'static str,
        start_from: i64,
    },
    Unknown,
}

/// How a key spec finds its keys from there.
#[derive(Debug)]
enum Find {
    Range {
        last_key: i64,
        step: i64,
        limit: i64,
    },
    Keynum {
        index: i64,
        first: i64,
        step: i64,
    },
    Unknown,
}

/// One key spec, read once from the COMMAND INFO entry.
#[derive(Debug)]
struct Spec {
    flags: KeyFlags,
    begin: Begin,
    find: Find,
}

/// What finding keys needs of a command: its key specs, parsed once.
#[derive(Debug)]
pub struct Keyed {
    pub name: &'static str,
    pub arity: i32,
    pub flags: Flags,
    specs: Vec<Spec>,
    keys_proc: KeysProc,
}

/// A key found: its position in the command line and its flags.
#[derive(Debug, PartialEq, Eq)]
pub struct KeyRef {
    pub pos: usize,
    pub flags: KeyFlags,
}

fn lower(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).to_ascii_lowercase()
}

/// A command's key specs, from its COMMAND INFO entry.
fn table_specs(spec: &'static CommandSpec) -> &'static [MetaValue] {
    match &spec.info {
        MetaValue::Array(fields) => match fields.get(8) {
            Some(MetaValue::Array(specs)) | Some(MetaValue::Set(specs)) => specs,
            _ => &[],
        },
        _ => &[],
    }
}

/// The keys of a command of the table, found as [`lookup`] finds them.
pub fn for_spec(spec: &'static CommandSpec) -> Keyed {
    Keyed {
        name: spec.name,
        arity: spec.arity,
        flags: spec.flags,
        specs: table_specs(spec).iter().map(compile).collect(),
        keys_proc: spec.keys_proc,
    }
}

fn from_key_specs(entry: &'static KeySpecs) -> Keyed {
    let specs: &'static [MetaValue] = match &entry.key_specs {
        MetaValue::Array(specs) | MetaValue::Set(specs) => specs,
        _ => &[],
    };
    Keyed {
        name: entry.name,
        arity: entry.arity,
        flags: entry.flags,
        specs: specs.iter().map(compile).collect(),
        keys_proc: entry.keys_proc,
    }
}

/// Redis's lookupCommand over every command it has: the command named by
/// `argv[0]`, or its subcommand `argv[1]` when it is a container and a
/// subcommand is given.
pub fn lookup(argv: &[Bytes]) -> Option<Keyed> {
    let top = lower(argv.first()?);
    if let Some(spec) = COMMANDS.iter().find(|c| c.name == top) {
        if spec.subcommands.is_empty() || argv.len() < 2 {
            return Some(for_spec(spec));
        }
        let full = format!("{top}|{}", lower(&argv[1]));
        return spec
            .subcommands
            .iter()
            .find(|s| s.name == full)
            .map(for_spec);
    }
    let prefix = format!("{top}|");
    let container = KEY_SPECS.iter().any(|k| k.name.starts_with(&prefix));
    let name = match argv.get(1) {
        Some(sub) if container => format!("{prefix}{}", lower(sub)),
        _ => top,
    };
    KEY_SPECS
        .iter()
        .find(|k| k.name == name)
        .map(from_key_specs)
}

fn field(value: &'static MetaValue, key: &str) -> Option<&'static MetaValue> {
    match value {
        MetaValue::Map(pairs) => pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| v),
        _ => None,
    }
}

fn int_field(value: &'static MetaValue, key: &str) -> Option<i64> {
    match field(value, key)? {
        MetaValue::Int(n) => Some(*n),
        _ => None,
    }
}

fn text(value: &'static MetaValue) -> Option<&'static str> {
    match value {
        MetaValue::Bulk(s) | MetaValue::Simple(s) => Some(s),
        _ => None,
    }
}

/// The flags of one key spec ("RW", "access", "not_key"...).
pub fn spec_flags(spec: &'static MetaValue) -> Vec<&'static str> {
    match field(spec, "flags") {
        Some(MetaValue::Set(items)) | Some(MetaValue::Array(items)) => {
            items.iter().filter_map(text).collect()
        }
        _ => Vec::new(),
    }
}

/// A spec's `begin_search` or `find_keys`: its type and its parameters.
fn search(spec: &'static MetaValue, which: &str) -> Option<(&'static str, &'static MetaValue)> {
    let part = field(spec, which)?;
    Some((text(field(part, "type")?)?, field(part, "spec")?))
}

fn compile(spec: &'static MetaValue) -> Spec {
    let begin = match search(spec, "begin_search") {
        Some(("index", at)) => int_field(at, "index").map(Begin::Index),
        Some(("keyword", at)) => (|| {
            Some(Begin::Keyword {
                keyword: text(field(at, "keyword")?)?,
                start_from: int_field(at, "startfrom")?,
            })
        })(),
        _ => None,
    };
    let find = match search(spec, "find_keys") {
        Some(("range", how)) => (|| {
            Some(Find::Range {
                last_key: int_field(how, "lastkey")?,
                step: int_field(how, "keystep")?,
                limit: int_field(how, "limit")?,
            })
        })(),
        Some(("keynum", how)) => (|| {
            Some(Find::Keynum {
                index: int_field(how, "keynumidx")?,
                first: int_field(how, "firstkey")?,
                step: int_field(how, "keystep")?,
            })
        })(),
        _ => None,
    };
    Spec {
        flags: KeyFlags::from_names(&spec_flags(spec)),
        begin: begin.unwrap_or(Begin::Unknown),
        find: find.unwrap_or(Find::Unknown),
    }
}

impl Keyed {
    /// Redis's doesCommandHaveKeys: a key spec that is not `not_key`.
    pub fn has_keys(&self) -> bool {
        self.specs
            .iter()
            .any(|s| !s.flags.contains(KeyFlags::NOT_KEY))
    }

    /// Whether `argc` arguments (the name included) satisfy the arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        let (argc, arity) = (argc as i64, self.arity as i64);
        if arity > 0 {
            argc == arity
        } else {
            argc >= -arity
        }
    }

    /// Redis's getKeysFromCommandWithSpecs: the key specs when they are
    /// complete and their flags fixed, else the command's own procedure.
    pub fn keys(&self, argv: &[Bytes]) -> Vec<KeyRef> {
        let has_key_spec = !self.specs.is_empty();
        let variable = self
            .specs
            .iter()
            .any(|s| s.flags.contains(KeyFlags::VARIABLE_FLAGS));
        if has_key_spec && !variable {
            if let Some(keys) = self.keys_by_specs(argv) {
                return keys;
            }
        }
        match self.keys_proc {
            KeysProc::Sort => sort_keys(argv, true),
            KeysProc::SortRo => sort_keys(argv, false),
            KeysProc::Migrate => migrate_keys(argv),
            KeysProc::Georadius => georadius_keys(argv, true),
            KeysProc::GeoradiusByMember => georadius_keys(argv, false),
            // SET and BITFIELD: one key, at the spec's place.
            KeysProc::Set | KeysProc::Bitfield => self.keys_by_specs(argv).unwrap_or_default(),
            KeysProc::Specs if variable => self.keys_by_specs(argv).unwrap_or_default(),
            // The other procedures find no key where the specs failed.
            KeysProc::Specs => Vec::new(),
        }
    }

    /// The keys with the flags this very call gives them: a
    /// `variable_flags` command's computed ones (SET, BITFIELD).
    pub fn keys_with_flags(&self, argv: &[Bytes]) -> Vec<KeyRef> {
        let computed = self.variable_flags(argv);
        let mut keys = self.keys(argv);
        for key in &mut keys {
            key.flags = match computed {
                Some(names) => KeyFlags::from_names(names),
                None => key.flags.without(KeyFlags::VARIABLE_FLAGS),
            };
        }
        keys
    }

    /// Flags Redis computes per call for its `variable_flags` commands (its
    /// setGetKeys and bitfieldGetKeys).
    pub fn variable_flags(&self, full: &[Bytes]) -> Option<&'static [&'static str]> {
        match self.keys_proc {
            KeysProc::Set if full[3..].iter().any(|a| is(a, "get")) => {
                Some(&["RW", "access", "update"])
            }
            KeysProc::Set => Some(&["OW", "update"]),
            KeysProc::Bitfield => {
                let mut i = 2;
                while i < full.len() {
                    let remaining = full.len() - i - 1;
                    if is(&full[i], "get") && remaining >= 2 {
                        i += 3;
                    } else if is(&full[i], "overflow") && remaining >= 1 {
                        i += 2;
                    } else {
                        return Some(&["RW", "access", "update"]);
                    }
                }
                Some(&["RO", "access"])
            }
            _ => None,
        }
    }

    /// Redis's getKeysUsingKeySpecs; `None` where a spec is unknown,
    /// incomplete or out of bounds.
    fn keys_by_specs(&self, argv: &[Bytes]) -> Option<Vec<KeyRef>> {
        let argc = argv.len() as i64;
        let mut keys = Vec::new();
        for spec in &self.specs {
            if spec.flags.contains(KeyFlags::NOT_KEY) {
                continue;
            }
            let first = match spec.begin {
                Begin::Index(index) => index,
                Begin::Keyword {
                    keyword,
                    start_from,
                } => match find_keyword(argv, keyword, start_from) {
                    Some(at) => at + 1,
                    None => continue,
                },
                Begin::Unknown => return None,
            };
            let (first, last, step) = match spec.find {
                Find::Range {
                    last_key,
                    step,
                    limit,
                } => {
                    let last = if last_key >= 0 {
                        first + last_key
                    } else if limit == 0 {
                        argc + last_key
                    } else {
                        first + ((argc - first) / limit + last_key)
                    };
                    (first, last, step)
                }
                Find::Keynum {
                    index,
                    first: first_key,
                    step,
                } => {
                    let count_at = usize::try_from(first + index).ok()?;
                    let count = std::str::from_utf8(argv.get(count_at)?)
                        .ok()?
                        .parse::<i64>()
                        .ok()
                        .filter(|n| *n >= 0)?;
                    let first = first + first_key;
                    // A client's count may be as large as i64 allows.
                    (first, first.checked_add(count - 1)?, step)
                }
                Find::Unknown => return None,
            };
            if last >= argc || last < first || first >= argc || step <= 0 {
                return None;
            }
            let mut pos = first;
            while pos <= last {
                keys.push(KeyRef {
                    pos: pos as usize,
                    flags: spec.flags,
                });
                pos += step;
            }
            if spec.flags.contains(KeyFlags::INCOMPLETE) {
                return None;
            }
        }
        Some(keys)
    }
}

/// Where a keyword spec's keyword is: searched forwards from `start_from`
/// (> 0), or backwards from `argc + start_from` down to index 2.
fn find_keyword(argv: &[Bytes], keyword: &str, start_from: i64) -> Option<i64> {
    let argc = argv.len() as i64;
    let (start, end) = if start_from > 0 {
        (start_from, argc - 1)
    } else {
        (argc + start_from, 1)
    };
    let mut i = start;
    while i != end {
        if i >= argc || i < 1 {
            return None;
        }
        if is(&argv[i as usize], keyword) {
            return Some(i);
        }
        i = if start <= end { i + 1 } else { i - 1 };
    }
    None
}

fn key(pos: usize, flags: &[&'static str]) -> KeyRef {
    KeyRef {
        pos,
        flags: KeyFlags::from_names(flags),
    }
}

/// Redis's sortGetKeys / sortROGetKeys: the sorted key, and the last STORE
/// target (LIMIT takes two arguments, GET and BY one).
fn sort_keys(argv: &[Bytes], with_store: bool) -> Vec<KeyRef> {
    let mut keys = vec![key(1, &["RO", "access"])];
    if !with_store {
        return keys;
    }
    let mut store = None;
    let mut i = 2;
    while i < argv.len() {
        let arg = &argv[i];
        if is(arg, "limit") {
            i += 2;
        } else if is(arg, "store") && i + 1 < argv.len() {
            store = Some(i + 1);
        } else if is(arg, "get") || is(arg, "by") {
            i += 1;
        }
        i += 1;
    }
    keys.extend(store.map(|pos| key(pos, &["OW", "update"])));
    keys
}

/// Redis's migrateGetKeys: the key argument, or the keys after KEYS (only
/// with an empty key argument).
fn migrate_keys(argv: &[Bytes]) -> Vec<KeyRef> {
    const FLAGS: &[&str] = &["RW", "access", "delete"];
    let (mut first, mut count) = (3, 1);
    let mut i = 6;
    while i < argv.len() {
        let arg = &argv[i];
        if is(arg, "keys") {
            if !argv[3].is_empty() {
                return Vec::new();
            }
            first = i + 1;
            count = argv.len() - first;
            break;
        } else if is(arg, "auth") {
            i += 1;
        } else if is(arg, "auth2") {
            i += 2;
        }
        i += 1;
    }
    (first..first + count)
        .filter(|pos| *pos < argv.len())
        .map(|pos| key(pos, FLAGS))
        .collect()
}

/// Redis's georadiusGetKeys: the source key and the last STORE/STOREDIST
/// target that has a value after it.
fn georadius_keys(argv: &[Bytes], by_coordinates: bool) -> Vec<KeyRef> {
    let mut keys = vec![key(1, &["RO", "access"])];
    let mut stored = None;
    let mut i = if by_coordinates { 5 } else { 4 };
    while i < argv.len() {
        if (is(&argv[i], "store") || is(&argv[i], "storedist")) && i + 1 < argv.len() {
            stored = Some(i + 1);
            i += 1;
        }
        i += 1;
    }
    keys.extend(stored.map(|pos| key(pos, &["OW", "update"])));
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<Bytes> {
        line.split(' ')
            .map(|s| Bytes::copy_from_slice(s.as_bytes()))
            .collect()
    }

    fn keys(line: &str) -> Vec<String> {
        let args = argv(line);
        let Some(cmd) = lookup(&args) else {
            return vec!["<unknown>".into()];
        };
        cmd.keys(&args)
            .into_iter()
            .map(|k| String::from_utf8_lossy(&args[k.pos]).into_owned())
            .collect()
    }

    #[test]
    fn keynum_and_keyword_specs() {
        assert_eq!(keys("ZUNIONSTORE d 2 a b WEIGHTS 1 2"), ["d", "a", "b"]);
        assert_eq!(keys("EVAL s 2 k1 k2 a1"), ["k1", "k2"]);
        assert_eq!(keys("EVAL s 0"), Vec::<String>::new());
        assert!(keys("EVAL s 3 k1").is_empty());
        assert_eq!(keys("XREAD COUNT 2 STREAMS s1 s2 0 0"), ["s1", "s2"]);
        assert_eq!(keys("MSET a 1 b 2"), ["a", "b"]);
        assert_eq!(keys("GET k"), ["k"]);
    }

    #[test]
    fn procedures_where_specs_are_incomplete() {
        assert_eq!(
            keys("SORT k BY w GET x STORE d LIMIT 0 1 STORE e"),
            ["k", "e"]
        );
        assert_eq!(keys("SORT k LIMIT store d"), ["k"]);
        assert_eq!(keys("SORT_RO k BY x"), ["k"]);
        assert_eq!(keys("MIGRATE h 1 k 0 5"), ["k"]);
        assert_eq!(keys("MIGRATE h 1  0 5 COPY AUTH2 u p KEYS a b"), ["a", "b"]);
        assert!(keys("MIGRATE h 1 k 0 5 KEYS a").is_empty());
        assert_eq!(keys("GEORADIUS g 0 0 1 km STORE d"), ["g", "d"]);
        assert_eq!(keys("GEORADIUS g 0 0 1 km STORE"), ["g"]);
        assert_eq!(keys("GEORADIUSBYMEMBER g m 1 km STOREDIST d"), ["g", "d"]);
    }

    #[test]
    fn subcommands_and_unknown_commands() {
        assert_eq!(keys("XINFO STREAM s"), ["s"]);
        assert_eq!(keys("OBJECT ENCODING k"), ["k"]);
        assert_eq!(keys("NOSUCH k"), ["<unknown>"]);
        assert!(lookup(&argv("XINFO NOSUCH s")).is_none());
        assert!(lookup(&argv("PUBLISH c m")).is_some_and(|c| !c.has_keys()));
    }
}
