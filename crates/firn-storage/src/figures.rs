//! What operators watch of the engine: where reads were answered, and
//! RocksDB's own figures (write stalls and their causes, compaction debt,
//! the levels, write amplification, the block cache's hit ratio), read on
//! demand for INFO and the metrics endpoint, never per request.
//!
//! RocksDB keeps tickers (`Statistics`, at the level without histograms or
//! timers: per-core counters) from which the block cache's hits and misses
//! and the bytes flushed and compacted come; the stall counts by cause come
//! from its `cf-write-stall-stats` and `db-write-stall-stats` properties;
//! each level's files and bytes from the live files' metadata; each level's
//! compaction reads and writes from the `cfstats` text, which RocksDB
//! prints in GB with one decimal (its own resolution).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use rocksdb::statistics::Ticker;

use crate::state::Inner;
use crate::Cf;

/// Reads answered by each tier, since start.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadTiers {
    /// Meta records found in Firn's hot tier.
    pub hot: u64,
    /// Collections (or their members) found decoded in the collection cache.
    pub collection_cache: u64,
    /// Point reads RocksDB answered from memory: memtables or block cache.
    pub block_cache: u64,
    /// Point reads that loaded at least one block from the SST files.
    pub disk: u64,
}

/// One LSM level, over every column family.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LevelFigures {
    pub files: u64,
    pub bytes: u64,
    /// Bytes compactions into this level read and wrote (RocksDB's GB
    /// figures, 0.1 GB resolution).
    pub compaction_read_bytes: f64,
    pub compaction_write_bytes: f64,
}

/// RocksDB's figures, summed over the column families.
#[derive(Clone, Debug, Default)]
pub struct RocksFigures {
    pub block_cache_hits: u64,
    pub block_cache_misses: u64,
    /// Bytes the application wrote (RocksDB's `rocksdb.bytes.written`).
    pub bytes_written: u64,
    pub wal_bytes: u64,
    pub flush_write_bytes: u64,
    pub compact_read_bytes: u64,
    pub compact_write_bytes: u64,
    /// Time writers spent stalled, in microseconds.
    pub stall_micros: u64,
    /// Stall counts by cause, e.g. `memtable-limit-delays`,
    /// `l0-file-count-limit-stops`, `pending-compaction-bytes-delays`,
    /// `write-buffer-manager-limit-stops`, with RocksDB's names.
    pub stalls: BTreeMap<String, u64>,
    pub write_stopped: bool,
    /// The rate writes are delayed to, bytes/s (0 when not delayed).
    pub delayed_write_rate: u64,
    pub pending_compaction_bytes: u64,
    pub running_compactions: u64,
    pub running_flushes: u64,
    pub levels: Vec<LevelFigures>,
}

impl RocksFigures {
    /// Bytes written to files (flushes and compactions) per byte the
    /// application wrote; 0 before any write.
    pub fn write_amplification(&self) -> f64 {
        if self.bytes_written == 0 {
            return 0.0;
        }
        (self.flush_write_bytes + self.compact_write_bytes) as f64 / self.bytes_written as f64
    }

    pub fn block_cache_hit_ratio(&self) -> f64 {
        let lookups = self.block_cache_hits + self.block_cache_misses;
        if lookups == 0 {
            return 0.0;
        }
        self.block_cache_hits as f64 / lookups as f64
    }
}

pub(crate) fn read_tiers(inner: &Inner) -> ReadTiers {
    ReadTiers {
        hot: inner.hot.hits.load(Ordering::Relaxed),
        collection_cache: inner.coll.hits.load(Ordering::Relaxed),
        block_cache: inner.stats.memory_reads.load(Ordering::Relaxed),
        disk: inner.stats.disk_reads.load(Ordering::Relaxed),
    }
}

pub(crate) fn rocks_figures(inner: &Inner) -> RocksFigures {
    let ticker = |t: Ticker| inner.statistics.get_ticker_count(t);
    let mut figures = RocksFigures {
        block_cache_hits: ticker(Ticker::BlockCacheHit),
        block_cache_misses: ticker(Ticker::BlockCacheMiss),
        bytes_written: ticker(Ticker::BytesWritten),
        wal_bytes: ticker(Ticker::WalFileBytes),
        flush_write_bytes: ticker(Ticker::FlushWriteBytes),
        compact_read_bytes: ticker(Ticker::CompactReadBytes),
        compact_write_bytes: ticker(Ticker::CompactWriteBytes),
        stall_micros: ticker(Ticker::StallMicros),
        pending_compaction_bytes: inner.property_sum("rocksdb.estimate-pending-compaction-bytes"),
        ..Default::default()
    };
    let db_int = |name: &str| {
        inner
            .db
            .property_int_value(name)
            .ok()
            .flatten()
            .unwrap_or(0)
    };
    figures.write_stopped = db_int("rocksdb.is-write-stopped") != 0;
    figures.delayed_write_rate = db_int("rocksdb.actual-delayed-write-rate");
    figures.running_compactions = db_int("rocksdb.num-running-compactions");
    figures.running_flushes = db_int("rocksdb.num-running-flushes");
    let mut add_stalls = |text: Option<String>| {
        for (cause, count) in parse_stall_stats(text.as_deref().unwrap_or("")) {
            *figures.stalls.entry(cause).or_default() += count;
        }
    };
    add_stalls(
        inner
            .db
            .property_value("rocksdb.db-write-stall-stats")
            .ok()
            .flatten(),
    );
    for cf in Cf::ALL {
        if let Some(handle) = inner.cf(cf) {
            add_stalls(
                inner
                    .db
                    .property_value_cf(handle, "rocksdb.cf-write-stall-stats")
                    .ok()
                    .flatten(),
            );
            let text = inner
                .db
                .property_value_cf(handle, "rocksdb.cfstats-no-file-histogram")
                .ok()
                .flatten()
                .unwrap_or_default();
            for (level, read, write) in parse_compaction_levels(&text) {
                let at = level_slot(&mut figures.levels, level);
                at.compaction_read_bytes += read;
                at.compaction_write_bytes += write;
            }
        }
    }
    if let Ok(files) = inner.db.live_files() {
        for file in files {
            let at = level_slot(&mut figures.levels, file.level.max(0) as usize);
            at.files += 1;
            at.bytes += file.size as u64;
        }
    }
    figures
}

fn level_slot(levels: &mut Vec<LevelFigures>, level: usize) -> &mut LevelFigures {
    if levels.len() <= level {
        levels.resize(level + 1, LevelFigures::default());
    }
    &mut levels[level]
}

/// The counts of RocksDB's write-stall-stats text, `Write Stall (count):
/// cause: n, cause: n, ...`, without the totals (they are the sums).
fn parse_stall_stats(text: &str) -> Vec<(String, u64)> {
    let Some((_, list)) = text.split_once("):") else {
        return Vec::new();
    };
    list.split(',')
        .filter_map(|item| {
            let (cause, count) = item.split_once(':')?;
            let cause = cause.trim();
            let count = count.trim().parse().ok()?;
            (!cause.starts_with("total-")).then(|| (cause.to_string(), count))
        })
        .collect()
}

const GB: f64 = (1u64 << 30) as f64;

/// `(level, bytes read, bytes written)` of each `Ln` row of the first
/// "Compaction Stats" table of a `cfstats` text (columns by header name).
fn parse_compaction_levels(text: &str) -> Vec<(usize, f64, f64)> {
    let mut lines = text.lines().skip_while(|l| !l.contains("Compaction Stats"));
    let Some(header) = lines.nth(1) else {
        return Vec::new();
    };
    let columns: Vec<&str> = header.split_whitespace().collect();
    let column = |name: &str| columns.iter().position(|c| *c == name);
    let (Some(read), Some(write)) = (column("Read(GB)"), column("Write(GB)")) else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    for line in lines.skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some(level) = fields.first().and_then(|f| f.strip_prefix('L')) else {
            break;
        };
        let Ok(level) = level.parse::<usize>() else {
            break;
        };
        // The Size column is two fields ("1.2 MB"): rows have one more
        // field than the header from there on.
        let shift = fields.len().saturating_sub(columns.len());
        let value = |i: usize| {
            fields
                .get(i + shift)
                .and_then(|f| f.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        rows.push((level, value(read) * GB, value(write) * GB));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stall_stats_give_each_cause_without_totals() {
        let text =
            "Write Stall (count): cf-l0-file-count-limit-delays-with-ongoing-compaction: 0, \
                    l0-file-count-limit-delays: 3, l0-file-count-limit-stops: 1, \
                    memtable-limit-delays: 2, total-delays: 5, total-stops: 1\n";
        let stalls = parse_stall_stats(text);
        assert_eq!(stalls.len(), 4);
        assert!(stalls.contains(&("l0-file-count-limit-delays".into(), 3)));
        assert!(stalls.contains(&("memtable-limit-delays".into(), 2)));
        assert!(parse_stall_stats("").is_empty());
    }

    #[test]
    fn compaction_rows_read_columns_by_header() {
        let text = "\n** Compaction Stats [default] **\n\
Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) Moved(GB) W-Amp\n\
-----------------------------------------------------------------------------------------\n  \
L0      2/0    1.50 MB   0.5      0.0     0.0      0.0       0.3      0.3       0.0   1.0\n  \
L1      1/0   20.00 MB   0.1      1.5     0.5      1.0       2.0      1.0       0.0   4.0\n \
Sum      3/0   21.50 MB   0.0      1.5     0.5      1.0       2.3      1.3       0.0   7.0\n";
        let rows = parse_compaction_levels(text);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].0, 0);
        assert!((rows[0].2 - 0.3 * GB).abs() < 1.0);
        assert_eq!(rows[1].0, 1);
        assert!((rows[1].1 - 1.5 * GB).abs() < 1.0);
        assert!(parse_compaction_levels("nothing").is_empty());
    }
}
