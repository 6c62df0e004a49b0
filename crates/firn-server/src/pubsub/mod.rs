//! Pub/Sub, as Redis's pubsub.c: the subscriptions and message delivery
//! (`state`) and the SUBSCRIBE/PUBLISH family of commands (`commands`).

pub mod commands;
pub mod deliver;
pub mod state;
