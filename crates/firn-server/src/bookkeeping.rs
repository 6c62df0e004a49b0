//! The server's own bookkeeping of each command, as observers of the
//! after-call stage (after_call.rs): INFO commandstats, the slow log, and
//! the access times behind OBJECT IDLETIME, each as the command's
//! registration declares.

use bytes::Bytes;
use firn_resp::Reply;
use std::sync::atomic::Ordering;

use crate::after_call::{Call, Observer};
use crate::command_table::Flags;
use crate::commands::Access;
use crate::server::{AccessChange, ClientInfo, Server, SlowLogEntry};

/// INFO stats' `total_commands_processed` and INFO commandstats.
pub struct CommandStats;

impl Observer for CommandStats {
    fn finished(&self, call: &Call, micros: u64, reply: Option<&Reply>) {
        let stats = &call.server.stats;
        // Redis counts only commands that ran (not rejected ones).
        stats.commands_processed.fetch_add(1, Ordering::Relaxed);
        let failed = call.unblocked || matches!(reply, Some(Reply::Error(_)));
        stats.commands.record_call(call.cmd.name(), micros, failed);
    }
}

/// Per-command latency histograms and the latency monitor (latency.rs).
pub struct LatencyTracking;

impl Observer for LatencyTracking {
    fn finished(&self, call: &Call, micros: u64, _reply: Option<&Reply>) {
        let fast = call.cmd.has(Flags::FAST);
        let now_secs = || firn_storage::now_ms() / 1000;
        call.server
            .latency
            .record(call.cmd.name(), micros, fast, now_secs);
    }
}

/// SLOWLOG: commands slower than `slowlog-log-slower-than`.
pub struct SlowLog;

impl Observer for SlowLog {
    fn finished(&self, call: &Call, micros: u64, _reply: Option<&Reply>) {
        // EXEC is not logged (its commands are, one by one), as in Redis.
        if !call.cmd.has(Flags::SKIP_SLOWLOG) {
            let args = call.cmd.redacted(call.args);
            slowlog_record(call.server, &args, micros, call.client);
        }
    }
}

/// OBJECT IDLETIME's access times (OBJECT FREQ's counters under an LFU
/// policy): touched or forgotten as the command's registration says, and
/// not touched for a client in CLIENT NO-TOUCH mode except by TOUCH
/// (Redis 7.2's lookupKey). A command a script runs changes them the same
/// way, once its run commits ([`access_change`], applied as a side effect).
pub struct AccessTimes;

impl Observer for AccessTimes {
    fn finished(&self, call: &Call, _micros: u64, reply: Option<&Reply>) {
        if let Some(change) = access_change(call, reply) {
            call.server
                .access_times
                .apply(&change, firn_storage::now_ms() / 1000);
        }
    }
}

/// What a command that ran does to its keys' access times, if anything.
pub fn access_change(call: &Call, reply: Option<&Reply>) -> Option<AccessChange> {
    // A command that failed before looking its keys up (a syntax error)
    // must not refresh them; WRONGTYPE means the key was looked up.
    let looked_up = match reply {
        Some(Reply::Error(text)) => text.starts_with(b"WRONGTYPE"),
        _ => true,
    };
    let forget = match call.cmd.access {
        Access::Forget => true,
        Access::Touch
            if looked_up
                && !(call.client.no_touch.load(Ordering::Relaxed)
                    && call.cmd.name() != "touch") =>
        {
            false
        }
        Access::Touch | Access::NoTouch => return None,
    };
    let keys = call.cmd.lock_keys(call.args, call.db);
    (!keys.is_empty()).then_some(AccessChange { forget, keys })
}

/// Records a command in the slow log if it ran long enough.
fn slowlog_record(server: &Server, args: &[Bytes], micros: u64, client: &ClientInfo) {
    let (threshold, max_len) = {
        let c = server.config.read();
        (c.slowlog_log_slower_than, c.slowlog_max_len)
    };
    if threshold < 0 || (micros as i64) < threshold {
        return;
    }
    // Redis keeps at most 32 arguments, each cut to 128 bytes.
    let mut kept: Vec<Bytes> = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        if i == 31 && args.len() > 32 {
            kept.push(Bytes::from(format!(
                "... ({} more arguments)",
                args.len() - 31
            )));
            break;
        }
        if arg.len() > 128 {
            let mut cut = arg[..128].to_vec();
            cut.extend_from_slice(format!("... ({} more bytes)", arg.len() - 128).as_bytes());
            kept.push(Bytes::from(cut));
        } else {
            kept.push(arg.clone());
        }
    }
    let mut log = server.slowlog.lock();
    let id = log.next_id;
    log.next_id += 1;
    log.entries.push_front(SlowLogEntry {
        id,
        unix_secs: firn_storage::now_ms() / 1000,
        micros,
        args: kept,
        addr: client.addr.clone(),
        name: client.name.lock().clone().unwrap_or_default(),
    });
    while log.entries.len() as u64 > max_len {
        log.entries.pop_back();
    }
}
