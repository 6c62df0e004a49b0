//! How far `Engine::open` has replayed RocksDB's write-ahead log, read
//! from outside while the open runs (RocksDB reports no progress of its
//! recovery).
//!
//! The WAL files are `<number>.log` in the database directory and are
//! replayed in the order of their numbers, each read front to back. The
//! total is their sizes before the open; the part done is the files below
//! the one RocksDB has open for reading now, plus that file's read
//! position, which the kernel shows in `/proc/self/fdinfo/<fd>` (`pos:`).
//! The position runs ahead of the records applied by at most RocksDB's
//! read buffer (32 KB). Off Linux, or between files, the figure stays at
//! the last file seen.

use std::path::{Path, PathBuf};

/// The WAL files found before an open, and what was seen replayed.
pub struct WalReplay {
    dir: PathBuf,
    /// (file number, size in bytes), by number.
    files: Vec<(u64, u64)>,
    /// The highest file number seen open, and the bytes replayed then.
    seen: (u64, u64),
}

impl WalReplay {
    /// The WAL files in the database directory `dir` (none if it does
    /// not exist yet). Call before `Engine::open`.
    pub fn scan(dir: &Path) -> WalReplay {
        let mut files: Vec<(u64, u64)> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let number = wal_number(&entry.path())?;
                Some((number, entry.metadata().ok()?.len()))
            })
            .collect();
        files.sort_unstable();
        WalReplay {
            // The links in /proc name files by their canonical paths.
            dir: std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()),
            files,
            seen: (0, 0),
        }
    }

    /// Bytes of WAL to replay.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|&(_, size)| size).sum()
    }

    /// Bytes replayed so far, as this process's open WAL file shows it;
    /// never less than an earlier call said.
    pub fn replayed_bytes(&mut self) -> u64 {
        if let Some((number, pos)) = self.open_wal_position() {
            let below: u64 = self
                .files
                .iter()
                .filter(|&&(n, _)| n < number)
                .map(|&(_, size)| size)
                .sum();
            let size = self
                .files
                .iter()
                .find(|&&(n, _)| n == number)
                .map_or(0, |&(_, size)| size);
            let now = below + pos.min(size);
            if (number, now) > self.seen {
                self.seen = (number, now);
            }
        }
        self.seen.1
    }

    /// The WAL file (of those found) this process has open, and its read
    /// position; the highest-numbered if several.
    fn open_wal_position(&self) -> Option<(u64, u64)> {
        let fds = std::fs::read_dir("/proc/self/fd").ok()?;
        let mut best: Option<(u64, u64)> = None;
        for fd in fds.flatten() {
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            if target.parent() != Some(self.dir.as_path()) {
                continue;
            }
            let Some(number) = wal_number(&target) else {
                continue;
            };
            if !self.files.iter().any(|&(n, _)| n == number) {
                continue;
            }
            let info = Path::new("/proc/self/fdinfo").join(fd.file_name());
            let Some(pos) = std::fs::read_to_string(info).ok().and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("pos:"))
                    .and_then(|v| v.trim().parse::<u64>().ok())
            }) else {
                continue;
            };
            if best.is_none_or(|(n, _)| number > n) {
                best = Some((number, pos));
            }
        }
        best
    }
}

/// `Some(number)` for a WAL file's name, `<digits>.log`.
fn wal_number(path: &Path) -> Option<u64> {
    let name = path.file_name()?.to_str()?;
    let digits = name.strip_suffix(".log")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn counts_the_files_below_the_open_one_and_its_position() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("000004.log"), vec![0u8; 1000]).unwrap();
        std::fs::write(dir.path().join("000007.log"), vec![0u8; 3000]).unwrap();
        std::fs::write(dir.path().join("LOG"), b"not a wal").unwrap();
        std::fs::write(dir.path().join("000009.sst"), b"not a wal").unwrap();
        let mut replay = WalReplay::scan(dir.path());
        assert_eq!(replay.total_bytes(), 4000);
        assert_eq!(replay.replayed_bytes(), 0);
        let mut reading = std::fs::File::open(dir.path().join("000007.log")).unwrap();
        let mut buf = vec![0u8; 500];
        reading.read_exact(&mut buf).unwrap();
        if cfg!(target_os = "linux") {
            assert_eq!(replay.replayed_bytes(), 1500);
        }
        drop(reading);
        // Closed: the last figure stays.
        let expected = if cfg!(target_os = "linux") { 1500 } else { 0 };
        assert_eq!(replay.replayed_bytes(), expected);
    }

    #[test]
    fn a_missing_directory_has_nothing_to_replay() {
        let dir = tempfile::tempdir().unwrap();
        let mut replay = WalReplay::scan(&dir.path().join("db"));
        assert_eq!(replay.total_bytes(), 0);
        assert_eq!(replay.replayed_bytes(), 0);
    }

    #[test]
    fn wal_names_are_digits_then_log() {
        assert_eq!(wal_number(Path::new("/d/000123.log")), Some(123));
        assert_eq!(wal_number(Path::new("/d/LOG")), None);
        assert_eq!(wal_number(Path::new("/d/LOG.old.1")), None);
        assert_eq!(wal_number(Path::new("/d/.log")), None);
        assert_eq!(wal_number(Path::new("/d/x1.log")), None);
    }
}
