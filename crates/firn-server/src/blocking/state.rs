//! Clients blocked on keys (BLPOP, BLMOVE, BZPOPMIN, ... see
//! `blocking/commands.rs`): the waiter registry and its wake-ups.
//!
//! A blocked client is a suspended future on its connection's task holding
//! no key lock; what it waits for is its [`Waiter`] in this registry, one
//! FIFO per `(logical db, key)`. A client registers while its first run
//! still holds its keys' locks (exec.rs), so a command that comes after it
//! finds it blocked. Wake-ups come from submit (firn-storage signals.rs):
//! while at least one client is blocked, every batch submitted hands its
//! *ready* keys over synchronously, while its submitter still holds their
//! locks, as Redis's `signalKeyAsReady` queues them: a key some command
//! may have added elements to (any write but those of commands that add
//! nothing: pops, acknowledgements, XDEL, XTRIM, XSETID, XGROUP but
//! DESTROY). Each ready key wakes the *first* waiter of that key (Redis
//! serves the client that blocked first). The woken client re-runs its
//! command under the key's lock, as any command runs (memory first, the
//! cold path if needed):
//! - served: it leaves every queue and wakes the new first waiter of each
//!   of its keys, which may find more elements (a push of several, or the
//!   destination of its BLMOVE);
//! - nothing there (another client took it): it keeps its place.
//!
//! Whom a change wakes is the waiter's [`Wake`]: the first in line for the
//! pops, every XREAD reader (readers do not consume what they read), the
//! first XREADGROUP reader of each group (a group's readers share its
//! entries). A stream reader also learns which of its keys were written,
//! in order ([`Waiter::take_wake`]). A whole-database change (FLUSH*,
//! SWAPDB) wakes everyone.
//!
//! A waiter that leaves unserved (timeout, disconnect, CLIENT UNBLOCK,
//! kill) with a wake-up it did not use passes it on to the next waiter.
//!
//! Cost when nobody is blocked: one atomic load per write; submits hand
//! nothing over while no client is blocked.

use bytes::Bytes;
use firn_storage::{Engine, OwnedKeysRequest, SubmitListening, Submitted};
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

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
    /// The keys its command locks, `(logical db, key)`.
    lock_keys: Vec<(u8, Bytes)>,
    /// Served, it has woken the next waiters already, from its run
    /// ([`Blocking::served_in_turn`]).
    passed_on: AtomicBool,
    /// Its command's place in those keys' lock queues, taken by the write
    /// that woke it while the writer still held them: so the run that
    /// serves it comes before any command read after that write, as Redis
    /// serves blocked clients within the write's own turn.
    reservation: Mutex<Reservation>,
}

/// See [`Waiter::reservation`].
#[derive(Default)]
struct Reservation {
    place: Option<OwnedKeysRequest>,
    /// A run is under way: it has its own place already (one taken now
    /// would queue ahead of it and never be used).
    running: bool,
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

    /// A run begins: the place the write that woke it took for it, if any.
    /// Until [`Waiter::ran`], a wake-up takes no place for it.
    pub fn start_run(&self) -> Option<OwnedKeysRequest> {
        let mut reservation = self.reservation.lock();
        reservation.running = true;
        reservation.place.take()
    }

    /// The run that [`Waiter::start_run`] began has ended.
    pub fn ran(&self) {
        self.reservation.lock().running = false;
    }

    /// Woken by a write whose submitter still holds `held` (its keys'
    /// stripes): the run that will serve it takes its place now, right
    /// behind that writer when it holds every stripe the run needs.
    fn reserve(&self, engine: &Engine, held: &[usize]) {
        let mut reservation = self.reservation.lock();
        if reservation.place.is_none() && !reservation.running && !self.lock_keys.is_empty() {
            reservation.place = Some(engine.request_keys_next(&self.lock_keys, held));
        }
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
    fn note_ready(&self, key: &Bytes) {
        let mut ready = self.ready.lock();
        if !ready.contains(key) {
            ready.push(key.clone());
        }
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
    /// Held while any client is blocked: submits hand over their ready
    /// keys ([`Blocking::on_submit`]).
    listening: Option<SubmitListening>,
}

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
    /// `db`, under those keys' locks; `listen` starts the engine's submits
    /// reaching [`Blocking::on_submit`] when this is the first waiter.
    pub fn register(
        self: &Arc<Self>,
        client_id: u64,
        db: u8,
        on: &BlockOn,
        lock_keys: Vec<(u8, Bytes)>,
        listen: impl FnOnce() -> Option<SubmitListening>,
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
            lock_keys,
            passed_on: AtomicBool::new(false),
            reservation: Mutex::new(Reservation::default()),
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
            if state.listening.is_none() {
                // Before the keys' locks are released: every later write
                // of them reaches `on_submit`.
                state.listening = listen();
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
        let pass_on = if served {
            !waiter.passed_on.load(Ordering::Acquire)
        } else {
            waiter.woken.load(Ordering::Acquire)
        };
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
        if state.by_client.is_empty() {
            state.listening = None;
        }
        drop(state);
        self.blocked.fetch_sub(1, Ordering::Relaxed);
        if timed {
            self.with_timeout.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Client `client_id`'s run served it and still holds `held`, its keys'
    /// stripes: the next waiter of each of its keys is woken now, its run
    /// placed right behind this one, as Redis serves as many waiters as a
    /// push brought elements within the push's own turn. (Woken only once
    /// the served client left, a waiter came after a command read after
    /// the push, and a pop sent after a push of three elements took one
    /// while a client waited on: the history checker's queue workload.)
    pub fn served_in_turn(&self, client_id: u64, engine: Option<&Engine>, held: &[usize]) {
        let mut state = self.state.lock();
        let Some(waiter) = state.by_client.get(&client_id).cloned() else {
            return;
        };
        let mut next: Vec<Arc<Waiter>> = Vec::new();
        for key in &waiter.keys {
            let Some(queues) = state.by_key.get_mut(key) else {
                continue;
            };
            let Some(at) = queues.iter().position(|(db, _)| *db == waiter.db) else {
                continue;
            };
            // Served, it waits no more: it leaves the queues now, not when
            // its task gets to drop the registration. (Left in line until
            // then, it was found first by the next served client or the
            // next push, whose wake-up it took and never used: the third
            // waiter of a push of three timed out with the element there.)
            let queue = &mut queues[at].1;
            queue.retain(|w| !Arc::ptr_eq(w, &waiter));
            let found = match &waiter.wake {
                Wake::First => queue.front(),
                // Its wake-up reached every other reader too.
                Wake::Every => None,
                Wake::Group(group) => queue
                    .iter()
                    .find(|w| matches!(&w.wake, Wake::Group(g) if g == group)),
            };
            if let Some(found) = found {
                if !next.iter().any(|w| Arc::ptr_eq(w, found)) {
                    next.push(found.clone());
                }
            }
            if queue.is_empty() {
                queues.swap_remove(at);
            }
            if queues.is_empty() {
                state.by_key.remove(key);
            }
        }
        drop(state);
        waiter.passed_on.store(true, Ordering::Release);
        if let Some(engine) = engine {
            for next in next.iter().rev() {
                next.reserve(engine, held);
            }
        }
        for next in &next {
            next.wake();
        }
    }

    /// Client `client_id`'s run found nothing again and goes on waiting;
    /// called while the run still holds its keys, so a write that comes
    /// next gives its next run a place (a run that ends only later would
    /// let a command read after that write go first).
    pub fn waits_on(&self, client_id: u64) {
        if let Some(waiter) = self.state.lock().by_client.get(&client_id) {
            waiter.ran();
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

    /// A batch was submitted (its submitter holds its keys' locks): wakes
    /// the first waiter of every key it made ready, or everyone for a
    /// whole-database change.
    pub fn on_submit(&self, engine: Option<&Engine>, batch: &Submitted<'_>) {
        if self.blocked_clients() == 0 {
            return;
        }
        let state = self.state.lock();
        let mut woken: Vec<Arc<Waiter>> = Vec::new();
        if !batch.whole_dbs.is_empty() {
            let mut everyone: Vec<&Arc<Waiter>> = state.by_client.values().collect();
            everyone.sort_by_key(|w| w.client_id);
            woken.extend(everyone.into_iter().cloned());
        } else {
            for (_, key) in &batch.signals.ready {
                // `keys` name physical databases, which SWAPDB permutes:
                // the first waiter of the key in every database is woken,
                // and a waiter in another database simply finds nothing.
                if let Some(queues) = state.by_key.get(key) {
                    for (_, queue) in queues {
                        in_line_for(queue, key, &mut woken);
                    }
                }
            }
        }
        drop(state);
        // Their runs' places first, in reverse (each goes first in line),
        // so that they are served in the order they were woken; then the
        // wake-ups, once each run's place exists.
        if let Some(engine) = engine {
            for waiter in woken.iter().rev() {
                waiter.reserve(engine, batch.stripes);
            }
        }
        for waiter in &woken {
            waiter.wake();
        }
    }
}

/// Finds, among the waiters of `key`, the first in line, every XREAD
/// reader and the first reader of each group; a reader learns that `key`
/// was written.
fn in_line_for(queue: &VecDeque<Arc<Waiter>>, key: &Bytes, woken: &mut Vec<Arc<Waiter>>) {
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
        if !wake {
            continue;
        }
        if waiter.wake != Wake::First {
            waiter.note_ready(key);
        }
        if !woken.iter().any(|w| Arc::ptr_eq(w, waiter)) {
            woken.push(waiter.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use firn_storage::Signals;

    /// What a batch that made `keys` ready hands over (the pops' and
    /// acknowledgements' batches make none: their commands add nothing).
    fn ready(registry: &Blocking, keys: &[&str]) {
        let signals = Signals {
            modified: Vec::new(),
            ready: keys
                .iter()
                .map(|k| (0, Bytes::copy_from_slice(k.as_bytes())))
                .collect(),
        };
        registry.on_submit(
            None,
            &Submitted {
                client: 0,
                signals: &signals,
                whole_dbs: &[],
                stripes: &[],
                flushed: false,
            },
        );
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

    fn key(name: &str) -> Bytes {
        Bytes::copy_from_slice(name.as_bytes())
    }

    fn register(registry: &Arc<Blocking>, id: u64, db: u8, on: &BlockOn) -> Registration {
        registry.register(id, db, on, Vec::new(), || None)
    }

    #[test]
    fn the_first_waiter_is_woken_and_passes_on_when_served() {
        let registry = Arc::new(Blocking::default());
        let first = register(&registry, 1, 0, &on(&[key("q")], false, Wake::First));
        let second = register(
            &registry,
            2,
            0,
            &on(&[key("q"), key("q")], true, Wake::First),
        );
        assert_eq!(registry.blocked_clients(), 2);
        assert_eq!(registry.clients_with_timeout(), 1);
        ready(&registry, &["q"]);
        assert!(first.waiter().woken.load(Ordering::Acquire));
        assert!(!second.waiter().woken.load(Ordering::Acquire));
        // A batch that makes nothing ready wakes nobody.
        first.waiter().take_wake();
        ready(&registry, &[]);
        assert!(!first.waiter().woken.load(Ordering::Acquire));
        first.served();
        assert!(second.waiter().woken.load(Ordering::Acquire));
        drop(second);
        assert_eq!(registry.blocked_clients(), 0);
        assert_eq!(registry.clients_with_timeout(), 0);
        assert!(registry.state.lock().by_key.is_empty());
    }

    #[test]
    fn each_served_waiter_wakes_the_next_one_not_served() {
        let registry = Arc::new(Blocking::default());
        let waiters: Vec<Registration> = (1..=3)
            .map(|id| register(&registry, id, 0, &on(&[key("q")], false, Wake::First)))
            .collect();
        let woken = |r: &Registration| r.waiter().woken.load(Ordering::Acquire);
        ready(&registry, &["q"]);
        assert!(woken(&waiters[0]) && !woken(&waiters[1]));
        // Served runs follow one another before the served clients' tasks
        // drop their registrations.
        registry.served_in_turn(1, None, &[]);
        assert!(woken(&waiters[1]) && !woken(&waiters[2]));
        registry.served_in_turn(2, None, &[]);
        assert!(woken(&waiters[2]), "the first two were served already");
        // A push now finds the third first in line.
        waiters[2].waiter().take_wake();
        ready(&registry, &["q"]);
        assert!(woken(&waiters[2]));
        drop(waiters);
        assert_eq!(registry.blocked_clients(), 0);
        assert!(registry.state.lock().by_key.is_empty());
    }

    #[test]
    fn an_unused_wake_up_is_passed_on_and_unblock_reaches_one_client() {
        let registry = Arc::new(Blocking::default());
        let first = register(&registry, 1, 0, &on(&[key("q")], false, Wake::First));
        let second = register(&registry, 2, 0, &on(&[key("q")], false, Wake::First));
        let other_db = register(&registry, 3, 1, &on(&[key("q")], false, Wake::First));
        ready(&registry, &["q"]);
        assert!(other_db.waiter().woken.load(Ordering::Acquire));
        drop(first);
        assert!(second.waiter().woken.load(Ordering::Acquire));
        assert!(registry.unblock(2, Unblocked::Error));
        assert!(!registry.unblock(2, Unblocked::Timeout));
        assert_eq!(second.waiter().unblocked(), Some(Unblocked::Error));
        assert!(!registry.unblock(9, Unblocked::Timeout));
    }

    #[test]
    fn stream_readers_are_woken_each_or_first_of_their_group() {
        let registry = Arc::new(Blocking::default());
        let group = |g: &str| Wake::Group(key(g));
        let a1 = register(&registry, 1, 0, &on(&[key("s")], false, group("a")));
        let x1 = register(&registry, 2, 0, &on(&[key("s")], false, Wake::Every));
        let a2 = register(&registry, 3, 0, &on(&[key("s")], false, group("a")));
        let b1 = register(&registry, 4, 0, &on(&[key("s")], false, group("b")));
        let x2 = register(&registry, 5, 0, &on(&[key("s")], false, Wake::Every));
        let woken = |r: &Registration| r.waiter().woken.load(Ordering::Acquire);
        ready(&registry, &[]);
        assert!(![&a1, &x1, &a2, &b1, &x2].iter().any(|r| woken(r)));
        ready(&registry, &["s"]);
        assert!(woken(&a1) && woken(&x1) && woken(&b1) && woken(&x2));
        assert!(!woken(&a2), "the second reader of group a waits its turn");
        // Served, the first of group a hands on to the next of its group.
        a1.served();
        assert!(woken(&a2));
        drop((x1, a2, b1, x2));
        assert_eq!(registry.blocked_clients(), 0);
    }
}
