//! ACL: users, their permissions and the ACL log, as Redis 7.0 has them.
//!
//! - `catalog.rs`: every command and subcommand with its id and ACL
//!   categories (from the generated command table);
//! - `rules.rs`: a user and its selectors, changed by rules and described
//!   back (ACL SETUSER, GETUSER, LIST);
//! - `state.rs`: the users and the ACL log the server holds, the ACL file;
//! - `check.rs`: the permission check every command passes;
//! - `commands.rs`: the ACL command.
//!
//! Where each check happens is in docs/architecture.md, "Security".

pub mod catalog;
pub mod check;
pub mod commands;
pub mod rules;
pub mod state;
