//! CLIENT REPLY's mode, a field of the session that EXEC also keeps.

/// Whether a connection's replies are sent (CLIENT REPLY ON/OFF/SKIP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyMode {
    On,
    Off,
    /// Skip the reply of the next command only.
    SkipNext,
    /// Skipping the reply of the current command.
    Skipping,
}
