//! Every Redis 7.0 command and subcommand as ACL rules name them, served by
//! Firn or not (Redis's `orig_commands`): an id for the permission bitmaps,
//! the full name (`config|get`), the ACL categories from the generated
//! command table, and the container/subcommand links. A rule may name a
//! command Firn does not serve (`+cluster`), as on Redis, so the category
//! counts that ACL GETUSER's description is built from are Redis's own.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::command_table::{CommandSpec, MetaValue, COMMANDS, UNSERVED};

/// Redis's ACL categories, in its order (ACL CAT, COMMAND INFO, and the
/// order in which a user's description tries them).
pub const CATEGORIES: [&str; 21] = [
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// A category's bit in [`Entry::categories`], by name (any case).
pub fn category_bit(name: &[u8]) -> Option<u32> {
    CATEGORIES
        .iter()
        .position(|c| c.as_bytes().eq_ignore_ascii_case(name))
        .map(|i| 1 << i)
}

/// One command or subcommand.
pub struct Entry {
    /// Lowercase, `container|sub` for a subcommand.
    pub name: &'static str,
    /// Bits of [`CATEGORIES`].
    pub categories: u32,
    /// The container's id, for a subcommand.
    pub parent: Option<usize>,
    /// The subcommands' ids, for a container.
    pub children: Vec<usize>,
}

pub struct Catalog {
    pub entries: Vec<Entry>,
    by_name: HashMap<&'static str, usize>,
}

impl Catalog {
    /// The id of the command or subcommand `name` names (any case).
    pub fn id(&self, name: &str) -> Option<usize> {
        self.by_name
            .get(name.to_ascii_lowercase().as_str())
            .copied()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The process's catalog, built once from the generated table.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(build)
}

fn build() -> Catalog {
    let mut catalog = Catalog {
        entries: Vec::new(),
        by_name: HashMap::new(),
    };
    for spec in COMMANDS.iter().chain(UNSERVED.iter()) {
        let id = add(&mut catalog, spec, None);
        for sub in spec.subcommands {
            let child = add(&mut catalog, sub, Some(id));
            catalog.entries[id].children.push(child);
        }
    }
    catalog
}

fn add(catalog: &mut Catalog, spec: &'static CommandSpec, parent: Option<usize>) -> usize {
    let id = catalog.entries.len();
    catalog.entries.push(Entry {
        name: spec.name,
        categories: categories_of(spec),
        parent,
        children: Vec::new(),
    });
    catalog.by_name.insert(spec.name, id);
    id
}

/// The ACL categories of a COMMAND INFO entry (its seventh field).
fn categories_of(spec: &CommandSpec) -> u32 {
    let MetaValue::Array(fields) = &spec.info else {
        return 0;
    };
    let Some(MetaValue::Set(names) | MetaValue::Array(names)) = fields.get(6) else {
        return 0;
    };
    names
        .iter()
        .filter_map(|n| match n {
            MetaValue::Simple(s) | MetaValue::Bulk(s) => s.strip_prefix('@'),
            _ => None,
        })
        .filter_map(|s| category_bit(s.as_bytes()))
        .fold(0, |acc, bit| acc | bit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_redis_command_has_an_id_and_categories_come_from_the_table() {
        let c = catalog();
        let get = c.id("GET").unwrap();
        assert_eq!(c.entries[get].name, "get");
        let read = category_bit(b"read").unwrap();
        assert_ne!(c.entries[get].categories & read, 0);
        // Served or not, containers and subcommands are all there.
        let config_get = c.id("config|get").unwrap();
        assert_eq!(c.entries[config_get].parent, c.id("config"));
        assert!(c.id("cluster").is_some());
        assert!(c.id("cluster|info").is_some());
        assert!(c.id("nosuchcommand").is_none());
    }
}
