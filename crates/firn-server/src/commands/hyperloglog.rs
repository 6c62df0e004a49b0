//! hyperloglog: filled in by the collections issue.

use super::Def;

pub const COMMANDS: &[Def] = &[];
