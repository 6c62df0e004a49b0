//! What a command handler asks of the script thread (`Deferred::Script`):
//! plain data, parsed on the network thread, that `dispatch.rs` runs.

use bytes::Bytes;

/// A request that runs on the script thread, from a command handler.
pub enum Request {
    Eval(EvalRequest),
    Fcall(FcallRequest),
    /// FUNCTION LOAD [REPLACE] code.
    FunctionLoad {
        code: Bytes,
        replace: bool,
    },
    FunctionDelete(Bytes),
    FunctionFlush,
    FunctionDump,
    FunctionRestore {
        payload: Bytes,
        policy: RestorePolicy,
    },
    /// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
    FunctionList {
        pattern: Option<Bytes>,
        with_code: bool,
    },
    /// SCRIPT LOAD: compile and cache, reply the sha.
    Load(Bytes),
    /// SCRIPT FLUSH: forget every script and start a fresh VM.
    Flush,
}

/// An EVAL/EVALSHA(_RO) call, parsed by its handler.
#[derive(Clone)]
pub struct EvalRequest {
    /// Lowercase hex SHA-1 of the body.
    pub sha: String,
    /// EVAL's body (compiled and cached if new); None for EVALSHA.
    pub body: Option<Bytes>,
    pub keys: Vec<Bytes>,
    pub argv: Vec<Bytes>,
    /// EVAL_RO / EVALSHA_RO.
    pub read_only: bool,
}

/// An FCALL/FCALL_RO call, parsed by its handler.
#[derive(Clone)]
pub struct FcallRequest {
    pub name: String,
    pub keys: Vec<Bytes>,
    pub argv: Vec<Bytes>,
    pub read_only: bool,
    /// The command line (FUNCTION STATS shows it).
    pub command: Vec<Bytes>,
}

/// How FUNCTION RESTORE treats the libraries already loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestorePolicy {
    Append,
    Replace,
    Flush,
}

impl RestorePolicy {
    pub fn word(self) -> &'static [u8] {
        match self {
            RestorePolicy::Append => b"APPEND",
            RestorePolicy::Replace => b"REPLACE",
            RestorePolicy::Flush => b"FLUSH",
        }
    }
}
