//! The module graph of a crate, read from its sources with `syn`, and the
//! check CI runs on it: no module may join an import cycle, and no module
//! may use one of a higher layer than its own (the layers are read from
//! docs/architecture.md, "Dependency rules").
//!
//! An edge is drawn from a file to another wherever the first names an
//! item the second defines: by `use` (following re-exports to the item's
//! own module), by a path in code or in a type, in a test module as in the
//! code around it. `tree.rs` reads the modules and what they declare,
//! `resolve.rs` follows a path to its item, `uses.rs` finds every path,
//! `cycles.rs` and `rules.rs` judge the graph, `check.rs` reports. What it
//! cannot see is in `uses.rs`'s header: method calls, whose `impl` only
//! types would tell.
//!
//! The crate root is a node like any other. It usually only declares
//! modules and re-exports; a re-export is followed to its owner, so naming
//! `crate::Thing` draws an edge to the module that defines `Thing`, not to
//! the root, and the root can join a cycle only if it defines something.

pub mod check;
pub mod cycles;
pub mod resolve;
pub mod rules;
pub mod tree;
pub mod uses;

pub use check::{check, Report, NO_CYCLE};
pub use rules::Rules;
