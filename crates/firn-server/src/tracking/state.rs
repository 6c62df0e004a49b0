//! Client-side caching (CLIENT TRACKING): which clients may hold which
//! keys, and the invalidation messages sent when those keys change.
//!
//! - **Reads.** Before a tracking client's read-only command runs, the
//!   keys it will read (from the command table's key specs, as Redis's
//!   `trackingRememberKeys`) are noted, per OPTIN/OPTOUT and CLIENT
//!   CACHING; once its run takes effect, still under its keys' locks and
//!   before its own batch is submitted, they enter the tracking table, key
//!   → client ids (`TrackReads::took_effect`). Like Redis, the table
//!   ignores databases.
//! - **Writes.** Invalidations come from submit (firn-storage signals.rs):
//!   every batch submitted while some client tracks hands over the keys its
//!   commands modified, in the order they modified them (expiry and writes
//!   to values that were cold on disk included), and the databases it
//!   flushed, synchronously, while the writer still holds the keys' locks.
//!   So a read and a write of one key are ordered by the key's lock: the
//!   write either ran before the read (which saw it) or finds the read's
//!   keys in the table; and an invalidation is queued to its client
//!   before the write's reply can leave. Without tracking clients nothing
//!   listens and the feature costs one atomic load per write. Each batch's
//!   origin client is what NOLOOP filters on.
//! - **Delivery** goes through the target's pub/sub mailbox
//!   (`pubsub::deliver`): a RESP3 `invalidate` push, or for a RESP2 client
//!   redirecting to a subscribed connection a `message` on
//!   `__redis__:invalidate`. An invalidation a client's own write causes
//!   for itself follows that command's reply, as Redis 7.0 sends it
//!   (never inside an EXEC's reply). FLUSHDB/FLUSHALL send the null
//!   invalidation to every tracking client and empty the table; SWAPDB
//!   sends nothing, as in Redis 7.0.
//! - **Bound.** `tracking-table-max-keys` caps the table: past it the
//!   oldest remembered keys are dropped, first sending their invalidation
//!   (Redis drops random keys; either way the client is told).
//! - **BCAST** clients register prefixes instead; a changed key matching a
//!   prefix is sent to that prefix's clients, one message per prefix and
//!   batch with its keys sorted (Redis sends one per event-loop turn).

use bytes::Bytes;
use firn_resp::{Protocol, Reply};
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::table::{
    Invalidation, State, TrackingOptions, BCAST, BROKEN_REDIRECT, INVALIDATE_CHANNEL, NOLOOP,
    OPTIN, OPTOUT,
};
use crate::command_table::Flags;
use crate::commands::{Command, Traits};
use crate::server::{ClientInfo, Server};

/// Estimated wire bytes of an invalidation besides its keys.
const MESSAGE_OVERHEAD_BYTES: u64 = 48;

/// CLIENT TRACKING ON (Redis's enableTracking): turns tracking on or
/// updates its options; BCAST prefixes add to the existing ones.
pub fn enable(server: &Arc<Server>, client: &Arc<ClientInfo>, options: TrackingOptions) {
    let tracking = &server.tracking;
    let mut state = tracking.state.lock();
    let mine = &client.tracking;
    let was_on = mine.on.swap(true, Ordering::AcqRel);
    if !was_on {
        state.clients.insert(client.id, client.clone());
        tracking.clients_on.fetch_add(1, Ordering::AcqRel);
    }
    mine.flags.store(options.flags, Ordering::Relaxed);
    mine.redirect.store(options.redirect, Ordering::Relaxed);
    if options.flags & BCAST != 0 {
        let mut own = mine.prefixes.lock();
        let prefixes = if options.prefixes.is_empty() {
            vec![Bytes::new()]
        } else {
            options.prefixes
        };
        for prefix in prefixes {
            let prefix = Bytes::copy_from_slice(&prefix);
            state
                .prefixes
                .entry(prefix.clone())
                .or_default()
                .insert(client.id);
            if let Err(at) = own.binary_search(&prefix) {
                own.insert(at, prefix);
            }
        }
    }
    if state.listening.is_none() {
        // Before the reply: every read remembered from now on sees the
        // writes submitted after it.
        state.listening = Some(server.engine.listen_submits());
    }
    tracking.publish_totals(&state);
}

/// CLIENT TRACKING OFF, RESET and disconnection (Redis's disableTracking).
/// Keys the client read stay in the table until they change or are
/// evicted; invalidations then skip it. When the last tracking client
/// stops, the table is emptied (no write reaches it any more).
pub fn disable(server: &Server, client: &ClientInfo) {
    let mine = &client.tracking;
    if !mine.on.load(Ordering::Acquire) {
        return;
    }
    let tracking = &server.tracking;
    let mut state = tracking.state.lock();
    if !mine.on.swap(false, Ordering::AcqRel) {
        return;
    }
    state.clients.remove(&client.id);
    for prefix in std::mem::take(&mut *mine.prefixes.lock()) {
        if let Some(ids) = state.prefixes.get_mut(&prefix) {
            ids.remove(&client.id);
            if ids.is_empty() {
                state.prefixes.remove(&prefix);
            }
        }
    }
    mine.flags.store(0, Ordering::Relaxed);
    mine.redirect.store(0, Ordering::Relaxed);
    mine.caching.store(false, Ordering::Relaxed);
    if tracking.clients_on.fetch_sub(1, Ordering::AcqRel) == 1 {
        // Nobody tracks: writes no longer reach the table, so it is
        // emptied now rather than left to go stale (a client turning
        // tracking on again starts from nothing, as after a FLUSHALL).
        state.listening = None;
        state.table.clear();
        state.order.clear();
        state.items = 0;
    }
    tracking.publish_totals(&state);
}

/// Tracking as an observer of the after-call stages: before a command
/// runs it decides what the command's reads will remember (and spends
/// CLIENT CACHING's flag), and once the command's run takes effect, still
/// under its keys' locks, it enters them in the table. A read remembered
/// after it read can then never miss a write: a write to its keys either
/// ran before it (and the read saw it) or runs after it and finds it.
pub struct TrackReads;

impl crate::after_call::Observer for TrackReads {
    fn before(&self, call: &crate::after_call::Call) {
        before_command(call.client, call.cmd, call.args, call.db);
    }

    fn took_effect(&self, server: &Server, client: &ClientInfo) {
        let mine = &client.tracking;
        if !mine.is_on() {
            return;
        }
        let keys = std::mem::take(&mut *mine.reading.lock());
        if !keys.is_empty() {
            remember(server, client, keys);
        }
    }

    fn finished(
        &self,
        call: &crate::after_call::Call,
        _micros: u64,
        _reply: Option<&firn_resp::Reply>,
    ) {
        // A command whose run never took effect (refused, or a blocked
        // command's first run) remembers nothing.
        let mine = &call.client.tracking;
        if mine.is_on() {
            mine.reading.lock().clear();
        }
    }
}

/// Before a command runs: a tracking client's read-only command notes its
/// keys to remember (per OPTIN/OPTOUT and CLIENT CACHING), and the CLIENT
/// CACHING flag, which applies to one command, is spent. One atomic load
/// for a client without tracking.
fn before_command(client: &ClientInfo, cmd: &Command, args: &[Bytes], db: u8) {
    let mine = &client.tracking;
    if !mine.is_on() {
        return;
    }
    // As in Redis, CLIENT subcommands neither use nor spend the flag.
    let caching = if cmd.is(Traits::KEEPS_CACHING) {
        false
    } else {
        mine.caching.swap(false, Ordering::Relaxed)
    };
    // A read-only script names no keys to lock (EVAL_RO's are tracked by
    // the reads it runs, if any: `remember_script_keys`).
    if !cmd.has(Flags::READONLY) || !remembers(client, caching) {
        return;
    }
    mine.reading.lock().extend(cmd.lock_keys(args, db));
}

/// Tracks the keys of a script's command (EVAL's declared KEYS) once the
/// script runs a read-only command, as Redis remembers a script's reads:
/// by the caller's declared keys, not by what the script read. The
/// caller's CLIENT CACHING yes was spent by EVAL itself, so under OPTIN a
/// script's keys are not tracked (see docs/compatibility.md).
pub fn remember_script_keys(server: &Server, client: &ClientInfo, db: u8, keys: &[Bytes]) {
    let keys = keys.iter().map(|key| (db, key.clone())).collect();
    remember_keys(server, client, keys, false);
}

/// Whether a tracking client's read now remembers its keys: never in BCAST
/// mode, under OPTIN only with CLIENT CACHING yes, under OPTOUT unless
/// CLIENT CACHING no.
fn remembers(client: &ClientInfo, caching: bool) -> bool {
    let flags = client.tracking.flags();
    if flags & BCAST != 0 {
        false
    } else if flags & OPTIN != 0 {
        caching
    } else if flags & OPTOUT != 0 {
        !caching
    } else {
        true
    }
}

fn remember_keys(server: &Server, client: &ClientInfo, keys: Vec<(u8, Bytes)>, caching: bool) {
    if !client.tracking.is_on() || keys.is_empty() || !remembers(client, caching) {
        return;
    }
    remember(server, client, keys);
}

/// Enters `keys` in the table for `client`; an eviction past
/// `tracking-table-max-keys` sends its invalidations now, before the reply
/// of the command that caused it.
fn remember(server: &Server, client: &ClientInfo, keys: Vec<(u8, Bytes)>) {
    let max_keys = server.config().tracking_table_max_keys;
    let evicted = {
        let mut state = server.tracking.state.lock();
        for (_, key) in keys {
            let ids = match state.table.get_mut(&key) {
                Some(ids) => ids,
                None => {
                    // A copy: `key` may share the connection's read buffer.
                    let key = Bytes::copy_from_slice(&key);
                    state.order.push_back(key.clone());
                    state.table.entry(key).or_default()
                }
            };
            if ids.insert(client.id) {
                state.items += 1;
            }
        }
        let evicted = evict_over_limit(&mut state, max_keys);
        server.tracking.publish_totals(&state);
        evicted
    };
    send_all(server, evicted, 0);
}

/// A lowered `tracking-table-max-keys` takes effect at once: the oldest
/// keys past it are dropped and their clients told (Redis does it in its
/// cron, a little at a time).
pub fn apply_limit(server: &Server, max_keys: u64) {
    let evicted = {
        let mut state = server.tracking.state.lock();
        let evicted = evict_over_limit(&mut state, max_keys);
        server.tracking.publish_totals(&state);
        evicted
    };
    send_all(server, evicted, 0);
}

/// Drops the oldest keys while the table holds more than `max_keys` (0 =
/// no limit), returning the invalidations to send for them.
fn evict_over_limit(state: &mut State<ClientInfo>, max_keys: u64) -> Vec<Invalidation<ClientInfo>> {
    let mut out = Vec::new();
    if max_keys > 0 {
        while state.table.len() as u64 > max_keys {
            let Some(key) = state.order.pop_front() else {
                break;
            };
            if let Some(ids) = state.table.remove(&key) {
                state.items -= ids.len();
                invalidations_for(state, &key, ids, 0, &mut out);
            }
        }
    }
    // Stale entries (keys invalidated since) must not pile up.
    if state.order.len() > 2 * state.table.len() + 1024 {
        let live: HashSet<&Bytes> = state.table.keys().collect();
        let kept: VecDeque<Bytes> = state
            .order
            .iter()
            .filter(|k| live.contains(k))
            .cloned()
            .collect();
        state.order = kept;
    }
    out
}

/// The invalidations of one key for the clients that read it: each still
/// tracking, not in BCAST mode, and not its writer when NOLOOP.
fn invalidations_for(
    state: &State<ClientInfo>,
    key: &Bytes,
    ids: HashSet<u64>,
    origin: u64,
    out: &mut Vec<Invalidation<ClientInfo>>,
) {
    let mut ids: Vec<u64> = ids.into_iter().collect();
    ids.sort_unstable();
    for id in ids {
        let Some(client) = state.clients.get(&id) else {
            continue;
        };
        let flags = client.tracking.flags();
        if flags & BCAST != 0 || (flags & NOLOOP != 0 && id == origin) {
            continue;
        }
        out.push(Invalidation {
            client: client.clone(),
            keys: Some(vec![key.clone()]),
        });
    }
}

/// A batch was submitted (firn-storage signals.rs): its submitter still
/// holds its keys' locks, so the invalidations are queued before the
/// write's reply can leave and before any later command on those keys runs.
pub fn on_submit(server: &Server, batch: &firn_storage::Submitted<'_>) {
    if server.tracking.clients_on() == 0 {
        return;
    }
    let invalidations = apply_changes(server, batch);
    send_all(server, invalidations, batch.client);
}

/// What a submitted batch invalidates: each key it modified, in the order
/// its commands modified them, for the clients that read it; BCAST
/// prefixes get one message each with the batch's keys, sorted; a flush
/// invalidates everything.
fn apply_changes(
    server: &Server,
    batch: &firn_storage::Submitted<'_>,
) -> Vec<Invalidation<ClientInfo>> {
    let tracking = &server.tracking;
    let mut state = tracking.state.lock();
    let mut out = Vec::new();
    // BCAST: prefix → changed key → its writer.
    let mut broadcast: BTreeMap<Bytes, BTreeMap<Bytes, u64>> = BTreeMap::new();
    let flushed = batch.flushed;
    let origin = batch.client;
    if !flushed {
        for (_, key) in &batch.signals.modified {
            if let Some(ids) = state.table.remove(key) {
                state.items -= ids.len();
                invalidations_for(&state, key, ids, origin, &mut out);
            }
            for (prefix, _) in state
                .prefixes
                .range::<[u8], _>((
                    std::ops::Bound::Unbounded,
                    std::ops::Bound::Included(&key[..]),
                ))
                .filter(|(prefix, _)| key.starts_with(prefix))
            {
                broadcast
                    .entry(prefix.clone())
                    .or_default()
                    .insert(key.clone(), origin);
            }
        }
    }
    for (prefix, keys) in broadcast {
        let Some(ids) = state.prefixes.get(&prefix) else {
            continue;
        };
        let mut ids: Vec<u64> = ids.iter().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let Some(client) = state.clients.get(&id) else {
                continue;
            };
            let noloop = client.tracking.flags() & NOLOOP != 0;
            let sent: Vec<Bytes> = keys
                .iter()
                .filter(|(_, writer)| !(noloop && **writer == id))
                .map(|(key, _)| key.clone())
                .collect();
            if !sent.is_empty() {
                out.push(Invalidation {
                    client: client.clone(),
                    keys: Some(sent),
                });
            }
        }
    }
    if flushed {
        // Redis: every tracking client hears the null invalidation, and the
        // table is emptied.
        let mut ids: Vec<u64> = state.clients.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            if let Some(client) = state.clients.get(&id) {
                out.push(Invalidation {
                    client: client.clone(),
                    keys: None,
                });
            }
        }
        state.table.clear();
        state.order.clear();
        state.items = 0;
    }
    tracking.publish_totals(&state);
    out
}

/// Sends each invalidation; one caused by `origin`'s own write (0: none)
/// to `origin` itself follows its command's reply, as Redis 7.0 sends it.
fn send_all(server: &Server, invalidations: Vec<Invalidation<ClientInfo>>, origin: u64) {
    for invalidation in invalidations {
        send(server, &invalidation.client, invalidation.keys, origin);
    }
}

/// Redis's sendTrackingMessage: to the client itself in RESP3, or to its
/// redirection target (RESP3 push, or a RESP2 subscriber's message on
/// `__redis__:invalidate`); nothing for a RESP2 client without one.
fn send(server: &Server, client: &Arc<ClientInfo>, keys: Option<Vec<Bytes>>, origin: u64) {
    let mine = &client.tracking;
    if !mine.is_on() {
        return;
    }
    let redirect = mine.redirect();
    let target = if redirect != 0 {
        let found = server.clients.lock().get(&redirect).cloned();
        match found {
            Some(target) => Some(target),
            None => {
                mine.flags.fetch_or(BROKEN_REDIRECT, Ordering::Relaxed);
                if protocol_of(client) == Protocol::Resp3 {
                    let notice = Reply::Push(vec![
                        Reply::Bulk(Bytes::from_static(b"tracking-redir-broken")),
                        Reply::Integer(redirect as i64),
                    ]);
                    deliver(server, client, notice, MESSAGE_OVERHEAD_BYTES, false);
                }
                return;
            }
        }
    } else {
        None
    };
    let bytes = MESSAGE_OVERHEAD_BYTES
        + keys
            .as_ref()
            .map_or(0, |k| k.iter().map(|k| k.len() as u64 + 16).sum());
    let payload = match keys {
        Some(keys) => Reply::Array(keys.into_iter().map(Reply::Bulk).collect()),
        None => Reply::Null,
    };
    let to = target.as_ref().unwrap_or(client);
    let after_reply = origin != 0 && to.id == origin;
    let message = if protocol_of(to) == Protocol::Resp3 {
        Reply::Push(vec![
            Reply::Bulk(Bytes::from_static(b"invalidate")),
            payload,
        ])
    } else if target.is_some() && to.pubsub.subscribed() {
        Reply::Push(vec![
            Reply::Bulk(Bytes::from_static(b"message")),
            Reply::Bulk(Bytes::from_static(INVALIDATE_CHANNEL)),
            payload,
        ])
    } else {
        return;
    };
    deliver(server, to, message, bytes, after_reply);
}

fn protocol_of(client: &ClientInfo) -> Protocol {
    if client.resp.load(Ordering::Relaxed) == 3 {
        Protocol::Resp3
    } else {
        Protocol::Resp2
    }
}

/// Invalidations a client with no output limit may have unsent before it
/// is closed: BCAST can send one per write, and Firn bounds what a client
/// that never reads can cost (Redis would buffer without bound).
const UNLIMITED_CLASS_CAP_BYTES: u64 = 64 * 1024 * 1024;

/// Queues a message under the target's output-limit class; `after_reply`:
/// behind the reply of the command the target is running.
fn deliver(server: &Server, to: &ClientInfo, message: Reply, bytes: u64, after_reply: bool) {
    let limits = server.config().client_output_buffer_limit;
    let mut limit = if to.pubsub.subscribed() {
        limits.pubsub
    } else {
        limits.normal
    };
    if limit.hard_bytes == 0 {
        limit.hard_bytes = UNLIMITED_CLASS_CAP_BYTES;
    }
    crate::pubsub::deliver::deliver(to, &Arc::new(message), bytes, limit, after_reply);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eviction_drops_the_oldest_live_keys() {
        let client = Arc::new(ClientInfo::new(7, String::new(), String::new(), 0));
        client.tracking.on.store(true, Ordering::Relaxed);
        let mut state = State::default();
        state.clients.insert(7, client);
        for i in 0..10 {
            let key = Bytes::from(format!("k{i}"));
            state.order.push_back(key.clone());
            state.table.entry(key).or_default().insert(7);
        }
        // k0 was invalidated meanwhile: its order entry is stale.
        state.table.remove(&Bytes::from_static(b"k0"));
        state.items = 9;
        let evicted = evict_over_limit(&mut state, 6);
        let keys: Vec<Bytes> = evicted
            .iter()
            .flat_map(|i| i.keys.clone().unwrap_or_default())
            .collect();
        assert_eq!(
            keys,
            [
                Bytes::from_static(b"k1"),
                Bytes::from_static(b"k2"),
                Bytes::from_static(b"k3")
            ]
        );
        assert_eq!(state.table.len(), 6);
        assert_eq!(state.items, 6);
    }
}
