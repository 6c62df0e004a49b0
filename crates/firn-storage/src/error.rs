//! The storage layer's error type. The server maps each variant to Redis's
//! reply text in one place; nothing here knows about RESP.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum StorageError {
    /// A memory-only read (memtable + block cache) could not answer: the
    /// command must be re-run where blocking reads are allowed.
    #[error("read needs the disk")]
    Incomplete,
    /// The key holds a value of another type.
    #[error("wrong type")]
    WrongType,
    /// A string would grow past the configured maximum.
    #[error("string exceeds maximum allowed size")]
    TooLarge,
    /// The write-ahead log could not be written; writes are refused until it
    /// can be again (Redis's MISCONF state).
    #[error("{0}")]
    WriteFailed(String),
    /// Bytes read from disk do not decode: a bug or corruption.
    #[error("corrupt record: {0}")]
    Corrupt(&'static str),
    /// Any other RocksDB error.
    #[error("rocksdb: {0}")]
    Rocks(String),
}

impl From<rocksdb::Error> for StorageError {
    fn from(e: rocksdb::Error) -> Self {
        if e.kind() == rocksdb::ErrorKind::Incomplete {
            StorageError::Incomplete
        } else {
            StorageError::Rocks(e.into_string())
        }
    }
}

pub type Result<T, E = StorageError> = std::result::Result<T, E>;
