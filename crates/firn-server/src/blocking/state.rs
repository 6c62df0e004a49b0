//! Clients blocked on keys (BLPOP, BLMOVE, BZPOPMIN, ... see
//! `blocking/commands.rs`): the waiter registry and its wake-ups.
//!
//! A blocked client is a suspended future on its connection's task holding
//! no key lock; what it waits for is its [`Waiter`] in this registry, one
//! FIFO per `(logical db, key)`. Wake-ups come from the engine's submit
//! stream (`Engine::subscribe_submits`: the change stream's records, sent
//! when a batch is submitted): while at least one client is blocked, a
//! listener task consumes it, and each batch that may have added elements to a key wakes
//! the *first* waiter of that key (Redis serves the client that blocked
//! first). The woken client re-runs its command under the key's lock, as
//! any command runs (memory first, the cold path if needed):
//! - served: it leaves every queue and wakes the new first waiter of each
//!   of its keys, which may find more elements (a push of several, or the
//!   destination of its BLMOVE);
//! - nothing there (another client took it): it keeps its place.
//!
//! Whom a change wakes is the waiter's [`Wake`]: the first in line for the
//! pops, every XREAD reader (readers do not consume what they read), the
//! first XREADGROUP reader of each group (a group's readers share its
//! entries). A stream reader also learns which of its keys were written,
//! in order ([`Waiter::take_wake`]). A batch whose commands all declare
//! `Traits::ADDS_NOTHING` (pops, acknowledgements, claims, XDEL, XTRIM,
//! XSETID, XGROUP but DESTROY) wakes nobody, as Redis signals no key for
//! them.
//!
//! A waiter that leaves unserved (timeout, disconnect, CLIENT UNBLOCK,
//! kill) with a wake-up it did not use passes it on to the next waiter.
//!
//! Race freedom: a client registers *before* its second attempt. A push
//! submitted after that attempt's read (under the key's lock, so after the
//! registration subscribed) reaches the listener; a push before it is seen
//! by the attempt.
//!
//! Cost when nobody is blocked: one atomic load per commit. Submit builds
//! records only while a subscription is alive, and the listener
//! unsubscribes once no client has been blocked for
//! [`LISTENER_IDLE`].

use bytes::Bytes;
use firn_storage::{Change, ChangeReceiver};

/// A subscription the listener reads: the engine's submit stream
/// (`Engine::subscribe_submits`), or any change channel in tests.
pub type Subscription = Box<dyn std::ops::DerefMut<Target = ChangeReceiver> + Send>;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::Notify;

/// How long the listener keeps its subscription after the last blocked
/// client left, so that a queue whose consumers block and unblock all the
/// time does not subscribe and unsubscribe for each pop.
const LISTENER_IDLE: Duration = Duration::from_secs(1);

/// What a handler asks for when it has nothing to serve.
#[derive(Clone, Debug)]
pub struct BlockOn {
    /// The keys to wait on, in the session's database.
    pub keys: Vec<Bytes>,
    /// 0 means forever.
    pub timeout_ms: u64,
    /// The command line the runs after a wake-up use, when it differs
    /// (XREAD's `$` resolved to the ID it meant when the client blocked).
    pub rerun: Option<Vec<Bytes>>,
    /// Which waiters of a changed key are woken with it.
    pub wake: Wake,
}

/// Whom a change of a key wakes, among the clients waiting on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wake {
    /// The first in line: waiters compete for what arrives (the pops).
    First,
    /// Every such waiter: each may read what arrives (XREAD).
    Every,
    /// The first in line of its consumer group: a group's readers share
    /// its entries, and each group reads all of them (XREADGROUP).
    Group(Bytes),
}

/// How CLIENT UNBLOCK ended a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unblocked {
    /// As if the timeout had passed.
    Timeout,
    /// With the error `UNBLOCKED client unblocked via CLIENT UNBLOCK`.
    Error,
}

const NOT_UNBLOCKED: u8 = 0;
const UNBLOCKED_TIMEOUT: u8 = 1;
const UNBLOCKED_ERROR: u8 = 2;

/// One blocked client.
pub struct Waiter {
    client_id: u64,
    db: u8,
    keys: Vec<Bytes>,
    wake: Wake,
    signal: Notify,
    /// A change reached it and it has not retried since.
    woken: AtomicBool,
    /// Stream readers: the keys written since the last retry, in the order
    /// they were written (Redis's ready keys), which decides the key that
    /// serves a reader of several.
    ready: Mutex<Vec<Bytes>>,
    unblocked: AtomicU8,
}

impl Waiter {
    fn wake(&self) {
        self.woken.store(true, Ordering::Release);
        self.signal.notify_one();
    }

    /// Resolves when a change may have served it or CLIENT UNBLOCK ended
    /// its wait.
    pub async fn woken(&self) {
        self.signal.notified().await;
    }

    /// Consumes the pending wake-up before a retry; returns the keys
    /// written since the last one (stream readers only).
    pub fn take_wake(&self) -> Vec<Bytes> {
        let ready = std::mem::take(&mut *self.ready.lock());
        self.woken.store(false, Ordering::Release);
        ready
    }

    /// A retry that served nothing (the write it was told of may not have
    /// been readable yet on the cold path): the keys it took stay first in
    /// line, before any written since, for the next retry.
    pub fn keep_ready(&self, taken: Vec<Bytes>) {
        if taken.is_empty() {
            return;
        }
        let mut ready = self.ready.lock();
        let later: Vec<Bytes> = ready.drain(..).filter(|k| !taken.contains(k)).collect();
        ready.extend(taken);
        ready.extend(later);
    }

    /// A stream reader's key was written.
    fn wake_ready(&self, key: &Bytes) {
        {
            let mut ready = self.ready.lock();
            if !ready.contains(key) {
                ready.push(key.clone());
            }
        }
        self.wake();
    }

    pub fn unblocked(&self) -> Option<Unblocked> {
        match self.unblocked.load(Ordering::Acquire) {
            UNBLOCKED_TIMEOUT => Some(Unblocked::Timeout),
            UNBLOCKED_ERROR => Some(Unblocked::Error),
            _ => None,
        }
    }
}

/// The waiters of one key name, per logical database, in block order.
type KeyQueues = Vec<(u8, VecDeque<Arc<Waiter>>)>;

#[derive(Default)]
struct State {
    by_key: HashMap<Bytes, KeyQueues>,
    by_client: HashMap<u64, Arc<Waiter>>,
    /// A listener task holds a change-stream subscription.
    listening: bool,
}

/// Whether a command (by its head: name and maybe subcommand) only
/// removes or acknowledges, so that a batch of such commands wakes nobody;
/// the caller reads it from the command's declaration.
pub type AddsNothing = fn(&[Bytes]) -> bool;

/// The registry on `Server`.
#[derive(Default)]
pub struct Blocking {
    /// Blocked clients (INFO `blocked_clients`).
    blocked: AtomicUsize,
    /// Blocked clients with a timeout (INFO `clients_in_timeout_table`).
    with_timeout: AtomicUsize,
    state: Mutex<State>,
}

/// A registration; dropping it leaves the queues (see [`Blocking::leave`]).
pub struct Registration {
    registry: Arc<Blocking>,
    waiter: Arc<Waiter>,
    timed: bool,
    served: bool,
}

impl Registration {
    pub fn waiter(&self) -> &Waiter {
        &self.waiter
    }

    /// The command was served: leave, and let the next waiters look.
    pub fn served(mut self) {
        self.served = true;
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.registry.leave(&self.waiter, self.served, self.timed);
    }
}

impl Blocking {
    pub fn blocked_clients(&self) -> usize {
        self.blocked.load(Ordering::Relaxed)
    }

    pub fn clients_with_timeout(&self) -> usize {
        self.with_timeout.load(Ordering::Relaxed)
    }

    /// Queues client `client_id` last on each of `keys` in logical db
    /// `db`. Must run on the tokio runtime (it may start the listener);
    /// `subscribe` opens the engine's change stream.
    pub fn register(
        self: &Arc<Self>,
        client_id: u64,
        db: u8,
        on: &BlockOn,
        adds_nothing: AddsNothing,
        subscribe: impl FnOnce() -> Subscription,
    ) -> Registration {
        let timed = on.timeout_ms > 0;
        let mut unique: Vec<Bytes> = Vec::with_capacity(on.keys.len());
        for key in &on.keys {
            if !unique.contains(key) {
                unique.push(key.clone());
            }
        }
        let waiter = Arc::new(Waiter {
            client_id,
            db,
            keys: unique,
            wake: on.wake.clone(),
            signal: Notify::new(),
            woken: AtomicBool::new(false),
            ready: Mutex::new(Vec::new()),
            unblocked: AtomicU8::new(NOT_UNBLOCKED),
        });
        {
            let mut state = self.state.lock();
            for key in &waiter.keys {
                let queues = state.by_key.entry(key.clone()).or_default();
                match queues.iter_mut().find(|(d, _)| *d == db) {
                    Some((_, queue)) => queue.push_back(waiter.clone()),
                    None => queues.push((db, VecDeque::from([waiter.clone()]))),
                }
            }
            state.by_client.insert(client_id, waiter.clone());
            if !state.listening {
                // Subscribed before the caller's next attempt reads: every
                // later commit reaches the listener.
                state.listening = true;
                tokio::spawn(listen(self.clone(), subscribe(), adds_nothing));
            }
        }
        self.blocked.fetch_add(1, Ordering::Relaxed);
        if timed {
            self.with_timeout.fetch_add(1, Ordering::Relaxed);
        }
        Registration {
            registry: self.clone(),
            waiter,
            timed,
            served: false,
        }
    }

    /// Removes a waiter from every queue. The new first waiters of its
    /// keys are woken when it was served (there may be more) or when it
    /// leaves with a wake-up it did not use.
    fn leave(&self, waiter: &Arc<Waiter>, served: bool, timed: bool) {
        let pass_on = served || waiter.woken.load(Ordering::Acquire);
        let mut state = self.state.lock();
        if state
            .by_client
            .get(&waiter.client_id)
            .is_some_and(|w| Arc::ptr_eq(w, waiter))
        {
            state.by_client.remove(&waiter.client_id);
        }
        for key in &waiter.keys {
            let Some(queues) = state.by_key.get_mut(key) else {
                continue;
            };
            if let Some(at) = queues.iter().position(|(d, _)| *d == waiter.db) {
                let queue = &mut queues[at].1;
                queue.retain(|w| !Arc::ptr_eq(w, waiter));
                if pass_on {
                    let next = match &waiter.wake {
                        Wake::First => queue.front(),
                        // Its wake-up reached every other reader too.
                        Wake::Every => None,
                        Wake::Group(group) => queue
                            .iter()
                            .find(|w| matches!(&w.wake, Wake::Group(g) if g == group)),
                    };
                    if let Some(next) = next {
                        next.wake();
                    }
                }
                if queue.is_empty() {
                    queues.swap_remove(at);
                }
            }
            if queues.is_empty() {
                state.by_key.remove(key);
            }
        }
        drop(state);
        self.blocked.fetch_sub(1, Ordering::Relaxed);
        if timed {
            self.with_timeout.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// CLIENT UNBLOCK: ends the wait of a blocked client; false if it is
    /// not blocked.
    pub fn unblock(&self, client_id: u64, how: Unblocked) -> bool {
        let state = self.state.lock();
        let Some(waiter) = state.by_client.get(&client_id) else {
            return false;
        };
        let code = match how {
            Unblocked::Timeout => UNBLOCKED_TIMEOUT,
            Unblocked::Error => UNBLOCKED_ERROR,
        };
        // A second UNBLOCK of a client not yet back at its reply: Redis
        // has already unblocked it, so this one finds nothing to do.
        if waiter
            .unblocked
            .compare_exchange(NOT_UNBLOCKED, code, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return false;
        }
        waiter.signal.notify_one();
        true
    }

    /// Wakes the first waiter of every key a committed batch may have
    /// added elements to, or everyone for a whole-database change.
    fn on_change(&self, change: &Change, adds_nothing: AddsNothing) {
        if !change.whole_dbs.is_empty() {
            self.wake_all();
            return;
        }
        if !change.command_heads.is_empty()
            && change.command_heads.iter().all(|head| adds_nothing(head))
        {
            return;
        }
        let state = self.state.lock();
        for (_, key) in &change.keys {
            // `keys` name physical databases, which SWAPDB permutes: the
            // first waiter of the key in every database is woken, and a
            // waiter in another database simply finds nothing.
            if let Some(queues) = state.by_key.get(key) {
                for (_, queue) in queues {
                    wake_in_line(queue, key);
                }
            }
        }
    }

    /// Everyone retries (a whole-database change, or the listener lagged).
    fn wake_all(&self) {
        for waiter in self.state.lock().by_client.values() {
            waiter.wake();
        }
    }
}

/// Wakes, among the waiters of `key`, the first in line, every XREAD
/// reader and the first reader of each group; a reader learns that `key`
/// was written.
fn wake_in_line(queue: &VecDeque<Arc<Waiter>>, key: &Bytes) {
    let mut groups: Vec<&Bytes> = Vec::new();
    for (at, waiter) in queue.iter().enumerate() {
        let wake = match &waiter.wake {
            Wake::First => at == 0,
            Wake::Every => true,
            Wake::Group(group) if !groups.contains(&group) => {
                groups.push(group);
                true
            }
            Wake::Group(_) => false,
        };
        match (&waiter.wake, wake) {
            (_, false) => {}
            (Wake::First, true) => waiter.wake(),
            (_, true) => waiter.wake_ready(key),
        }
    }
}

/// Consumes the change stream while clients are blocked.
async fn listen(registry: Arc<Blocking>, mut changes: Subscription, adds_nothing: AddsNothing) {
    let mut idle_since: Option<Instant> = None;
    loop {
        match tokio::time::timeout(LISTENER_IDLE, changes.recv()).await {
            Ok(Ok(change)) => registry.on_change(&change, adds_nothing),
            Ok(Err(RecvError::Lagged(_))) => registry.wake_all(),
            Ok(Err(RecvError::Closed)) => {
                registry.state.lock().listening = false;
                return;
            }
            Err(_) => {}
        }
        if registry.blocked.load(Ordering::Relaxed) > 0 {
            idle_since = None;
            continue;
        }
        let since = *idle_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= LISTENER_IDLE {
            let mut state = registry.state.lock();
            if state.by_client.is_empty() {
                state.listening = false;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A subscription to a plain change channel.
    fn plain(tx: &tokio::sync::broadcast::Sender<Arc<Change>>) -> Subscription {
        Box::new(Box::new(tx.subscribe()))
    }

    fn change(keys: &[&str], command: &str) -> Change {
        Change {
            keys: keys
                .iter()
                .map(|k| (0, Bytes::copy_from_slice(k.as_bytes())))
                .collect(),
            command_heads: vec![vec![Bytes::copy_from_slice(command.as_bytes())]],
            ..Change::default()
        }
    }

    /// A wait on `keys`, with a timeout when `timed`.
    fn on(keys: &[Bytes], timed: bool, wake: Wake) -> BlockOn {
        BlockOn {
            keys: keys.to_vec(),
            timeout_ms: if timed { 1000 } else { 0 },
            rerun: None,
            wake,
        }
    }

    /// The pops, as their registrations declare them.
    fn pops(head: &[Bytes]) -> bool {
        [&b"LPOP"[..], b"RPOP", b"ZPOPMIN", b"ZPOPMAX", b"XACK"]
            .iter()
            .any(|pop| head[0].eq_ignore_ascii_case(pop))
    }

    fn key(name: &str) -> Bytes {
        Bytes::copy_from_slice(name.as_bytes())
    }

    #[tokio::test]
    async fn the_first_waiter_is_woken_and_passes_on_when_served() {
        let registry = Arc::new(Blocking::default());
        let (tx, _) = tokio::sync::broadcast::channel(16);
        let first = registry.register(1, 0, &on(&[key("q")], false, Wake::First), pops, || {
            plain(&tx)
        });
        let second = registry.register(
            2,
            0,
            &on(&[key("q"), key("q")], true, Wake::First),
            pops,
            || plain(&tx),
        );
        assert_eq!(registry.blocked_clients(), 2);
        assert_eq!(registry.clients_with_timeout(), 1);
        registry.on_change(&change(&["q"], "LPUSH"), pops);
        assert!(first.waiter().woken.load(Ordering::Acquire));
        assert!(!second.waiter().woken.load(Ordering::Acquire));
        // A pop wakes nobody.
        first.waiter().take_wake();
        registry.on_change(&change(&["q"], "RPOP"), pops);
        assert!(!first.waiter().woken.load(Ordering::Acquire));
        first.served();
        assert!(second.waiter().woken.load(Ordering::Acquire));
        drop(second);
        assert_eq!(registry.blocked_clients(), 0);
        assert_eq!(registry.clients_with_timeout(), 0);
        assert!(registry.state.lock().by_key.is_empty());
    }

    #[tokio::test]
    async fn an_unused_wake_up_is_passed_on_and_unblock_reaches_one_client() {
        let registry = Arc::new(Blocking::default());
        let (tx, _) = tokio::sync::broadcast::channel(16);
        let first = registry.register(1, 0, &on(&[key("q")], false, Wake::First), pops, || {
            plain(&tx)
        });
        let second = registry.register(2, 0, &on(&[key("q")], false, Wake::First), pops, || {
            plain(&tx)
        });
        let other_db = registry.register(3, 1, &on(&[key("q")], false, Wake::First), pops, || {
            plain(&tx)
        });
        registry.on_change(&change(&["q"], "RPUSH"), pops);
        assert!(other_db.waiter().woken.load(Ordering::Acquire));
        drop(first);
        assert!(second.waiter().woken.load(Ordering::Acquire));
        assert!(registry.unblock(2, Unblocked::Error));
        assert!(!registry.unblock(2, Unblocked::Timeout));
        assert_eq!(second.waiter().unblocked(), Some(Unblocked::Error));
        assert!(!registry.unblock(9, Unblocked::Timeout));
    }

    #[tokio::test]
    async fn stream_readers_are_woken_each_or_first_of_their_group() {
        let registry = Arc::new(Blocking::default());
        let (tx, _) = tokio::sync::broadcast::channel(16);
        let group = |g: &str| Wake::Group(key(g));
        let a1 = registry.register(1, 0, &on(&[key("s")], false, group("a")), pops, || {
            plain(&tx)
        });
        let x1 = registry.register(2, 0, &on(&[key("s")], false, Wake::Every), pops, || {
            plain(&tx)
        });
        let a2 = registry.register(3, 0, &on(&[key("s")], false, group("a")), pops, || {
            plain(&tx)
        });
        let b1 = registry.register(4, 0, &on(&[key("s")], false, group("b")), pops, || {
            plain(&tx)
        });
        let x2 = registry.register(5, 0, &on(&[key("s")], false, Wake::Every), pops, || {
            plain(&tx)
        });
        let woken = |r: &Registration| r.waiter().woken.load(Ordering::Acquire);
        // An acknowledgement gives nobody anything.
        registry.on_change(&change(&["s"], "XACK"), pops);
        assert!(![&a1, &x1, &a2, &b1, &x2].iter().any(|r| woken(r)));
        registry.on_change(&change(&["s"], "XADD"), pops);
        assert!(woken(&a1) && woken(&x1) && woken(&b1) && woken(&x2));
        assert!(!woken(&a2), "the second reader of group a waits its turn");
        // Served, the first of group a hands on to the next of its group.
        a1.served();
        assert!(woken(&a2));
        drop((x1, a2, b1, x2));
        assert_eq!(registry.blocked_clients(), 0);
    }
}
