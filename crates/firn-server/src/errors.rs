//! Command errors and Redis's exact reply texts, defined once.

use bytes::Bytes;
use firn_resp::Reply;
use firn_storage::StorageError;

pub const SYNTAX: &str = "ERR syntax error";
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
pub const NOT_FLOAT: &str = "ERR value is not a valid float";
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const OVERFLOW: &str = "ERR increment or decrement would overflow";
pub const NOT_FINITE: &str = "ERR increment would produce NaN or Infinity";
pub const NO_SUCH_KEY: &str = "ERR no such key";
pub const DB_OUT_OF_RANGE: &str = "ERR DB index is out of range";
pub const NOAUTH: &str = "NOAUTH Authentication required.";
pub const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
pub const STRING_TOO_LONG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
pub const BIT_OFFSET: &str = "ERR bit offset is not an integer or out of range";
pub const SAME_OBJECT: &str = "ERR source and destination objects are the same";
/// getIntFromObjectOrReply on a number that fits a long but not an int.
pub const INT_RANGE: &str =
    "ERR value is out of range, value must between -2147483648 and 2147483647";

#[derive(Debug)]
pub enum CmdError {
    /// A storage-layer failure; `Incomplete` means "re-run with disk access".
    Storage(StorageError),
    /// A fixed Redis error text (with its code prefix, e.g. "ERR ...").
    Static(&'static str),
    /// An error text built at run time.
    Owned(String),
    /// An error text quoting client bytes, sent as they are (Redis copies
    /// them raw, even when they are not UTF-8).
    Text(bytes::Bytes),
}

pub type CmdResult<T = Reply> = Result<T, CmdError>;

impl From<StorageError> for CmdError {
    fn from(e: StorageError) -> Self {
        CmdError::Storage(e)
    }
}

impl CmdError {
    pub fn msg(text: impl Into<String>) -> Self {
        CmdError::Owned(text.into())
    }

    pub fn is_incomplete(&self) -> bool {
        matches!(self, CmdError::Storage(StorageError::Incomplete))
    }

    /// The reply a client sees.
    pub fn into_reply(self) -> Reply {
        match self {
            CmdError::Static(text) => Reply::Error(text.into()),
            CmdError::Owned(text) => Reply::Error(text.into()),
            CmdError::Text(text) => Reply::Error(text),
            CmdError::Storage(e) => Reply::Error(storage_error_text(&e).into()),
        }
    }
}

pub fn storage_error_text(e: &StorageError) -> String {
    match e {
        StorageError::WrongType => WRONGTYPE.to_string(),
        StorageError::TooLarge => STRING_TOO_LONG.to_string(),
        StorageError::WriteFailed(why) => {
            format!("MISCONF Errors writing to the RocksDB write-ahead log: {why}")
        }
        StorageError::Incomplete => "ERR internal error: unexpected cold read".to_string(),
        StorageError::Corrupt(what) => format!("ERR storage error: corrupt {what}"),
        StorageError::Rocks(why) => format!("ERR storage error: {why}"),
    }
}

/// "ERR wrong number of arguments for 'get' command".
pub fn wrong_arity(name: &str) -> CmdError {
    CmdError::Owned(format!(
        "ERR wrong number of arguments for '{name}' command"
    ))
}

/// "ERR unknown subcommand 'x'. Try CONFIG HELP."
pub fn unknown_subcommand(container: &str, sub: &[u8]) -> CmdError {
    let mut text = b"ERR unknown subcommand '".to_vec();
    text.extend_from_slice(truncate_for_error(sub, 128));
    text.extend_from_slice(format!("'. Try {} HELP.", container.to_ascii_uppercase()).as_bytes());
    CmdError::Text(text.into())
}

/// Redis's addReplySubcommandSyntaxError: a known subcommand called with
/// arguments its own parser rejects ("ERR unknown subcommand or wrong number
/// of arguments for 'GET'. Try SLOWLOG HELP.").
pub fn subcommand_syntax(container: &str, sub: &[u8]) -> CmdError {
    let mut text = b"ERR unknown subcommand or wrong number of arguments for '".to_vec();
    text.extend_from_slice(truncate_for_error(sub, 128));
    text.extend_from_slice(format!("'. Try {} HELP.", container.to_ascii_uppercase()).as_bytes());
    CmdError::Text(Bytes::from(text))
}

/// A client-supplied string as Redis quotes it in error texts with C's
/// `%.128s`: at most `max` bytes, ending at the first NUL, raw.
pub fn truncate_for_error(bytes: &[u8], max: usize) -> &[u8] {
    let cut = &bytes[..bytes.len().min(max)];
    match memchr::memchr(0, cut) {
        Some(nul) => &cut[..nul],
        None => cut,
    }
}
