//! INFO as the tests read it: [`Info`] holds one INFO reply (fields
//! compared with each other come from the same moment), [`field`] and
//! [`storage`] read one integer field, and the normalisers below reduce an
//! INFO reply to the lines a differential test compares with
//! `Diff::cmd_with`. Every test reads INFO through here.

use crate::{Conn, R};
use std::str::FromStr;

/// The text of one INFO reply (one or more sections).
pub struct Info {
    text: String,
}

impl Info {
    /// Sends `INFO section` and keeps the reply.
    pub fn read(conn: &mut Conn, section: &str) -> Info {
        match conn.cmd(&["INFO", section]).as_str() {
            Some(text) => Info { text },
            None => panic!("INFO {section}: not a text reply"),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The value of `name:value`, trimmed.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.text
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    }

    /// An integer field; panics (showing the reply) when it is missing.
    #[track_caller]
    pub fn field(&self, name: &str) -> i64 {
        self.number(name)
    }

    #[track_caller]
    fn number<T: FromStr>(&self, name: &str) -> T {
        self.get(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no numeric {name} in INFO:\n{}", self.text))
    }
}

/// An integer field of `INFO section`, read on its own.
#[track_caller]
pub fn field(conn: &mut Conn, section: &str, name: &str) -> i64 {
    Info::read(conn, section).field(name)
}

/// A counter of INFO storage, Firn's own section (cost tests count the
/// engine's work with it, never time).
#[track_caller]
pub fn storage(conn: &mut Conn, name: &str) -> u64 {
    Info::read(conn, "storage").number(name)
}

/// INFO commandstats reduced to the sorted `name calls=N` of each command.
pub fn calls_only(info: &R) -> R {
    let text = info.as_str().unwrap_or_default();
    let mut rows: Vec<String> = text
        .lines()
        .filter_map(|line| line.strip_prefix("cmdstat_"))
        .filter_map(|line| {
            let (name, fields) = line.split_once(':')?;
            let calls = fields.split(',').next()?;
            Some(format!("{name} {calls}"))
        })
        .collect();
    rows.sort();
    R::Array(Some(rows.iter().map(|r| R::bulk(r.as_bytes())).collect()))
}

/// The `keyspace_hits` and `keyspace_misses` lines of INFO stats.
pub fn lookups_only(info: &R) -> R {
    let text = info.as_str().unwrap_or_default();
    let rows: Vec<R> = text
        .lines()
        .filter(|l| l.starts_with("keyspace_hits:") || l.starts_with("keyspace_misses:"))
        .map(|l| R::bulk(l.trim().as_bytes()))
        .collect();
    R::Array(Some(rows))
}

/// The `rdb_changes_since_last_save` line of INFO persistence.
pub fn changes_since_save(info: &R) -> R {
    let text = info.as_str().unwrap_or_default();
    let line = text
        .lines()
        .find(|l| l.starts_with("rdb_changes_since_last_save:"))
        .unwrap_or("rdb_changes_since_last_save missing");
    R::Simple(line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(text: &str) -> Info {
        Info {
            text: text.to_string(),
        }
    }

    #[test]
    fn a_field_is_found_by_its_whole_name() {
        let memory = info("# Memory\r\nused_memory_rss:900\r\nused_memory:120\r\n");
        assert_eq!(memory.field("used_memory"), 120);
        assert_eq!(memory.field("used_memory_rss"), 900);
        assert_eq!(memory.get("used_mem"), None);
    }

    #[test]
    #[should_panic(expected = "no numeric maxmemory")]
    fn a_missing_field_panics_with_the_reply() {
        info("used_memory:1\r\n").field("maxmemory");
    }

    #[test]
    fn normalisers_keep_only_what_both_servers_share() {
        let stats = R::bulk(
            b"cmdstat_set:calls=2,usec=9,usec_per_call=4.50\r\n\
              cmdstat_get:calls=1,usec=3,usec_per_call=3.00\r\n",
        );
        assert_eq!(
            calls_only(&stats),
            R::Array(Some(vec![R::bulk(b"get calls=1"), R::bulk(b"set calls=2")]))
        );
        let persistence = R::bulk(b"loading:0\r\nrdb_changes_since_last_save:3\r\n");
        assert_eq!(
            changes_since_save(&persistence),
            R::Simple("rdb_changes_since_last_save:3".into())
        );
    }
}
