//! Client-side caching (CLIENT TRACKING): which clients may hold which
//! keys, and the invalidation messages sent when those keys change.
//!
//! - **Reads.** Before a read-only command of a tracking client runs, its
//!   keys (from the command table's key specs, as Redis's
//!   `trackingRememberKeys`) enter the tracking table, key → client ids.
//!   Remembering them *before* the read means a write committed after the
//!   read always finds them. Like Redis, the table ignores databases.
//! - **Writes.** Invalidations come from the engine's change stream: every
//!   committed batch with the keys it wrote or deleted (expiry included,
//!   and writes to values that were cold on disk) and the databases it
//!   flushed. One task reads the stream, and only while at least one
//!   client has tracking on: the writer derives changed keys only while
//!   the stream has a subscriber, so without tracking clients the feature
//!   costs nothing per write. Each change's origin client (`Change::client`)
//!   is what NOLOOP filters on.
//! - **Delivery** goes through the target's pub/sub mailbox
//!   (`pubsub::deliver`): a RESP3 `invalidate` push, or for a RESP2 client
//!   redirecting to a subscribed connection a `message` on
//!   `__redis__:invalidate`. FLUSHDB/FLUSHALL send the null invalidation to
//!   every tracking client and empty the table; SWAPDB sends nothing, as in
//!   Redis 7.0.
//! - **Bound.** `tracking-table-max-keys` caps the table: past it the
//!   oldest remembered keys are dropped, first sending their invalidation
//!   (Redis drops random keys; either way the client is told).
//! - **BCAST** clients register prefixes instead; a changed key matching a
//!   prefix is sent to that prefix's clients, one message per prefix with
//!   the keys of all the changes read in one go, sorted, as Redis sends
//!   them once per event-loop turn.

use bytes::Bytes;
use firn_resp::{Protocol, Reply};
use firn_storage::Change;
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

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
    if !state.task_running {
        // Subscribed here, before the reply: every read remembered from now
        // on sees the writes committed after it.
        let changes = server.engine.subscribe_changes();
        state.task_running = true;
        tokio::spawn(invalidation_task(server.clone(), changes));
    }
    tracking.publish_totals(&state);
}

/// CLIENT TRACKING OFF, RESET and disconnection (Redis's disableTracking).
/// Keys the client read stay in the table until they change or are
/// evicted; invalidations then skip it.
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
        tracking.stop.notify_one();
    }
    tracking.publish_totals(&state);
}

/// Tracking as an observer of the after-call stage: it acts before a
/// command runs ([`before_command`]).
pub struct TrackReads;

impl crate::after_call::Observer for TrackReads {
    fn before(&self, call: &crate::after_call::Call) {
        before_command(call.server, call.client, call.cmd, call.args, call.db);
    }
}

/// Before a command runs: a tracking client's read-only command remembers
/// its keys (per OPTIN/OPTOUT and CLIENT CACHING), and the CLIENT CACHING
/// flag, which applies to one command, is spent. One atomic load for a
/// client without tracking.
fn before_command(server: &Server, client: &ClientInfo, cmd: &Command, args: &[Bytes], db: u8) {
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
    remember_reads(server, client, cmd, args, db, caching);
}

/// Tracks the keys a read-only command reads for `client`.
fn remember_reads(
    server: &Server,
    client: &ClientInfo,
    cmd: &Command,
    args: &[Bytes],
    db: u8,
    caching: bool,
) {
    // A read-only script names no keys to lock (EVAL_RO's are tracked by
    // the reads it runs, if any: `remember_script_keys`).
    if !cmd.has(Flags::READONLY) {
        return;
    }
    remember_keys(server, client, cmd.lock_keys(args, db), caching);
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

fn remember_keys(server: &Server, client: &ClientInfo, keys: Vec<(u8, Bytes)>, caching: bool) {
    let mine = &client.tracking;
    if !mine.is_on() {
        return;
    }
    let flags = mine.flags();
    if flags & BCAST != 0 {
        return;
    }
    let remember = if flags & OPTIN != 0 {
        caching
    } else if flags & OPTOUT != 0 {
        !caching
    } else {
        true
    };
    if !remember || keys.is_empty() {
        return;
    }
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
    send_all(server, evicted);
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
    send_all(server, evicted);
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

/// Reads the change stream while some client tracks; stops when the last
/// one turns tracking off.
async fn invalidation_task(server: Arc<Server>, mut changes: firn_storage::ChangeReceiver) {
    loop {
        let first = tokio::select! {
            change = changes.recv() => change,
            _ = server.tracking.stop.notified() => {
                let mut state = server.tracking.state.lock();
                if server.tracking.clients_on() == 0 {
                    state.task_running = false;
                    return;
                }
                continue;
            }
        };
        // Everything already committed is handled in one go, so BCAST
        // clients get one message per prefix, as per Redis event-loop turn.
        let mut batch = Vec::new();
        let mut lagged = false;
        match first {
            Ok(change) => batch.push(change),
            Err(RecvError::Lagged(_)) => lagged = true,
            Err(RecvError::Closed) => {
                server.tracking.state.lock().task_running = false;
                return;
            }
        }
        loop {
            match changes.try_recv() {
                Ok(change) => batch.push(change),
                Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => lagged = true,
                Err(_) => break,
            }
        }
        let invalidations = apply_changes(&server, &batch, lagged);
        send_all(&server, invalidations);
    }
}

/// What a run of committed changes invalidates. A lagged stream (changes
/// were lost) is treated as a flush: every client drops everything.
fn apply_changes(
    server: &Server,
    changes: &[Arc<Change>],
    lagged: bool,
) -> Vec<Invalidation<ClientInfo>> {
    let tracking = &server.tracking;
    let mut state = tracking.state.lock();
    let mut out = Vec::new();
    // BCAST: prefix → changed key → its writer (0 once several wrote it).
    let mut broadcast: BTreeMap<Bytes, BTreeMap<Bytes, u64>> = BTreeMap::new();
    let mut flushed = lagged;
    for change in changes {
        if is_flush(change) {
            flushed = true;
            continue;
        }
        for (_, key) in &change.keys {
            if let Some(ids) = state.table.remove(key) {
                state.items -= ids.len();
                invalidations_for(&state, key, ids, change.client, &mut out);
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
                    .entry(key.clone())
                    .and_modify(|writer| {
                        if *writer != change.client {
                            *writer = 0;
                        }
                    })
                    .or_insert(change.client);
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

/// A flush (not a SWAPDB alone, which Redis 7.0 does not signal).
fn is_flush(change: &Change) -> bool {
    change.flushed
}

fn send_all(server: &Server, invalidations: Vec<Invalidation<ClientInfo>>) {
    for invalidation in invalidations {
        send(server, &invalidation.client, invalidation.keys);
    }
}

/// Redis's sendTrackingMessage: to the client itself in RESP3, or to its
/// redirection target (RESP3 push, or a RESP2 subscriber's message on
/// `__redis__:invalidate`); nothing for a RESP2 client without one.
fn send(server: &Server, client: &Arc<ClientInfo>, keys: Option<Vec<Bytes>>) {
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
                    deliver(server, client, notice, MESSAGE_OVERHEAD_BYTES);
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
    deliver(server, to, message, bytes);
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

/// Queues a message under the target's output-limit class.
fn deliver(server: &Server, to: &ClientInfo, message: Reply, bytes: u64) {
    let limits = server.config().client_output_buffer_limit;
    let mut limit = if to.pubsub.subscribed() {
        limits.pubsub
    } else {
        limits.normal
    };
    if limit.hard_bytes == 0 {
        limit.hard_bytes = UNLIMITED_CLASS_CAP_BYTES;
    }
    crate::pubsub::deliver::deliver(to, &Arc::new(message), bytes, limit);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(keys: &[&str], whole: &[u8], flushed: bool, client: u64) -> Arc<Change> {
        Arc::new(Change {
            keys: keys
                .iter()
                .map(|k| (0, Bytes::copy_from_slice(k.as_bytes())))
                .collect(),
            whole_dbs: whole.to_vec(),
            flushed,
            client,
            ..Default::default()
        })
    }

    #[test]
    fn only_flushes_invalidate_everything() {
        assert!(is_flush(&change(&[], &[0], true, 1)));
        assert!(is_flush(&change(&[], &[0, 1], true, 1)));
        assert!(!is_flush(&change(&[], &[0, 1], false, 1)));
        assert!(!is_flush(&change(&["k"], &[], false, 1)));
    }

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
