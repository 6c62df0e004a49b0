//! Striped key locks that wait asynchronously, in arrival order.
//!
//! A key's stripe is derived from its physical database and its cluster
//! slot, both of which are embedded in every RocksDB key Firn writes (see
//! keys.rs). So the stripe of any meta, member or expire-index entry can be
//! computed from the raw key alone, and the pending-write overlay is sharded
//! by the same stripes: a shard is only written under its stripe's lock.
//!
//! **Arrival order.** A command takes its place in the queue of every
//! stripe it needs at one moment, synchronously ([`KeyLocks::request`]),
//! and is granted them strictly in queue order: so two commands that share
//! a key take effect in the order they asked, whichever thread asked and
//! whatever each awaits afterwards. The network thread asks when it has
//! decoded a command, before any await (exec.rs), which is what lets a
//! blocking command register, a tracking read remember its keys and a cold
//! read keep its place before a command read after it runs. A request of
//! several stripes is queued on all of them under one lock (`order`), so
//! every stripe's queue agrees on the order of such requests: a request
//! only ever waits for requests queued before it, and no cycle, so no
//! deadlock, can form (a request of one stripe holds nothing while it
//! waits and needs no such lock).
//!
//! A stripe is held exclusively or shared: a command that only reads takes
//! its stripes shared, so the clients of one hot key read it at the same
//! time; a waiting writer holds back the readers queued after it.
//! Critical sections are CPU-only (memory reads, building a batch, queuing
//! it) or a cold read of the holder's own keys on the I/O pool; a
//! contended stripe is *awaited* (or, off the runtime, parked on), never
//! spun on, and never parks a network thread.
//!
//! Each stripe also counts the batches submitted for it. A command that ran
//! on the cold-read pool without locks (blocking reads) compares these
//! counters before and after: if none moved, nothing it read has changed and
//! its result may be committed as if it had run under the locks.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

pub const STRIPES: usize = 4096;

/// The stripe of a key of physical database `pdb` in cluster slot `slot`.
pub fn stripe_of(pdb: u8, slot: u16) -> usize {
    (slot as usize + (pdb as usize) * 1031) % STRIPES
}

/// How a request holds its stripes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    Exclusive,
    Shared,
}

/// One stripe: who holds it and who waits, in order.
#[derive(Default)]
struct Stripe {
    exclusive: bool,
    shared: u32,
    queue: VecDeque<Queued>,
}

struct Queued {
    request: Arc<Waiting>,
    mode: LockMode,
}

impl Stripe {
    fn admits(&self, mode: LockMode) -> bool {
        match mode {
            LockMode::Shared => !self.exclusive,
            LockMode::Exclusive => !self.exclusive && self.shared == 0,
        }
    }

    fn hold(&mut self, mode: LockMode) {
        match mode {
            LockMode::Shared => self.shared += 1,
            LockMode::Exclusive => self.exclusive = true,
        }
    }

    fn unhold(&mut self, mode: LockMode) {
        match mode {
            LockMode::Shared => self.shared = self.shared.saturating_sub(1),
            LockMode::Exclusive => self.exclusive = false,
        }
    }

    /// Grants the stripe to the requests at the front of the queue that
    /// it now admits; returns those that hold every stripe they asked for.
    fn promote(&mut self, ready: &mut Vec<Arc<Waiting>>) {
        while let Some(front) = self.queue.front() {
            if !self.admits(front.mode) {
                break;
            }
            let Some(next) = self.queue.pop_front() else {
                break;
            };
            self.hold(next.mode);
            if next.request.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                ready.push(next.request);
            }
        }
    }
}

/// Who to tell once a waiting request holds all its stripes.
enum Wakeup {
    None,
    Task(Waker),
    Thread(std::thread::Thread),
}

/// The shared state of a request that had to queue on some stripe.
struct Waiting {
    /// Stripes not granted yet.
    pending: AtomicUsize,
    wakeup: Mutex<Wakeup>,
}

impl Waiting {
    fn wake(&self) {
        match std::mem::replace(&mut *self.wakeup.lock(), Wakeup::None) {
            Wakeup::None => {}
            Wakeup::Task(waker) => waker.wake(),
            Wakeup::Thread(thread) => thread.unpark(),
        }
    }
}

fn wake_all(ready: Vec<Arc<Waiting>>) {
    for request in ready {
        request.wake();
    }
}

/// The stripes' holders and queues.
struct LockTable {
    stripes: Box<[Mutex<Stripe>]>,
    /// Held while a request of several stripes takes its places, so that
    /// every queue orders such requests alike.
    order: Mutex<()>,
}

/// The lock table as a request or guard holds it: borrowed from the
/// [`KeyLocks`] (the common case: no reference count is touched), or
/// shared, for a place taken on one thread and awaited on another
/// ([`KeyLocks::request_owned`]).
enum TableRef<'a> {
    Borrowed(&'a LockTable),
    Owned(Arc<LockTable>),
}

impl std::ops::Deref for TableRef<'_> {
    type Target = LockTable;
    fn deref(&self) -> &LockTable {
        match self {
            TableRef::Borrowed(table) => table,
            TableRef::Owned(table) => table,
        }
    }
}

impl LockTable {
    /// See [`KeyLocks::request`].
    fn request<'a>(
        &self,
        this: TableRef<'a>,
        stripes: &[usize],
        mode: LockMode,
    ) -> LockRequest<'a> {
        let stripes: Vec<usize> = stripes.iter().map(|&s| s % STRIPES).collect();
        let mut waiting: Option<Arc<Waiting>> = None;
        let _order = (stripes.len() > 1).then(|| self.order.lock());
        for (at, &s) in stripes.iter().enumerate() {
            let mut stripe = self.stripes[s].lock();
            if stripe.queue.is_empty() && stripe.admits(mode) {
                stripe.hold(mode);
                if let Some(waiting) = &waiting {
                    waiting.pending.fetch_sub(1, Ordering::AcqRel);
                }
                continue;
            }
            let request = waiting.get_or_insert_with(|| {
                // Every stripe from here on counts as pending; those granted
                // at once are taken off as they are.
                Arc::new(Waiting {
                    pending: AtomicUsize::new(stripes.len() - at),
                    wakeup: Mutex::new(Wakeup::None),
                })
            });
            stripe.queue.push_back(Queued {
                request: request.clone(),
                mode,
            });
        }
        LockRequest {
            held: Some(Held {
                table: this,
                stripes,
                mode,
            }),
            waiting,
        }
    }

    /// See [`KeyLocks::request_next_owned`]: `None` when a stripe of
    /// `held` is not held exclusively, or another stripe is taken or has
    /// requests waiting.
    fn request_next(
        &self,
        this: TableRef<'static>,
        stripes: &[usize],
        held: &[usize],
    ) -> Option<LockRequest<'static>> {
        let stripes: Vec<usize> = stripes.iter().map(|&s| s % STRIPES).collect();
        let _order = self.order.lock();
        let mut locked: Vec<(bool, parking_lot::MutexGuard<'_, Stripe>)> = stripes
            .iter()
            .map(|&s| (held.contains(&s), self.stripes[s].lock()))
            .collect();
        let possible = locked.iter().all(|(behind_caller, stripe)| {
            if *behind_caller {
                stripe.exclusive
            } else {
                stripe.queue.is_empty() && stripe.admits(LockMode::Exclusive)
            }
        });
        if !possible {
            return None;
        }
        let behind = locked.iter().filter(|(behind, _)| *behind).count();
        let waiting = (behind > 0).then(|| {
            Arc::new(Waiting {
                pending: AtomicUsize::new(behind),
                wakeup: Mutex::new(Wakeup::None),
            })
        });
        for (behind_caller, stripe) in locked.iter_mut() {
            match (&waiting, *behind_caller) {
                (Some(waiting), true) => stripe.queue.push_front(Queued {
                    request: waiting.clone(),
                    mode: LockMode::Exclusive,
                }),
                _ => stripe.hold(LockMode::Exclusive),
            }
        }
        drop(locked);
        Some(LockRequest {
            held: Some(Held {
                table: this,
                stripes,
                mode: LockMode::Exclusive,
            }),
            waiting,
        })
    }

    /// Gives `stripes` back and grants them to whoever is next.
    fn release(&self, stripes: &[usize], mode: LockMode) {
        let mut ready = Vec::new();
        for &s in stripes {
            let mut stripe = self.stripes[s].lock();
            stripe.unhold(mode);
            stripe.promote(&mut ready);
        }
        wake_all(ready);
    }
}

pub struct KeyLocks {
    table: Arc<LockTable>,
    /// Batches submitted per stripe (bumped after the overlay has them).
    writes: Box<[AtomicU64]>,
    /// Bumped by whole-database changes (flush, swap).
    epoch: AtomicU64,
}

impl Default for KeyLocks {
    fn default() -> Self {
        KeyLocks {
            table: Arc::new(LockTable {
                stripes: (0..STRIPES)
                    .map(|_| Mutex::new(Stripe::default()))
                    .collect(),
                order: Mutex::new(()),
            }),
            writes: (0..STRIPES).map(|_| AtomicU64::new(0)).collect(),
            epoch: AtomicU64::new(0),
        }
    }
}

/// Sorted, deduplicated stripes.
pub fn normalise(mut stripes: Vec<usize>) -> Vec<usize> {
    stripes.sort_unstable();
    stripes.dedup();
    stripes
}

/// Stripes asked for (a request) or held (a guard).
struct Held<'a> {
    table: TableRef<'a>,
    stripes: Vec<usize>,
    mode: LockMode,
}

/// A place taken in the queues of some stripes: await it (or
/// [`LockRequest::wait_blocking`] off the runtime) for the guard. Dropped
/// before it is granted, it leaves every queue and gives back the stripes
/// it already held.
pub struct LockRequest<'a> {
    /// Taken by the guard once granted.
    held: Option<Held<'a>>,
    /// None when every stripe was granted at once.
    waiting: Option<Arc<Waiting>>,
}

impl<'a> LockRequest<'a> {
    /// Whether every stripe is held (no wait needed).
    pub fn is_granted(&self) -> bool {
        self.waiting
            .as_ref()
            .is_none_or(|w| w.pending.load(Ordering::Acquire) == 0)
    }

    fn into_guard(mut self) -> KeyGuard<'a> {
        KeyGuard {
            held: self.held.take(),
        }
    }

    /// Parks the calling thread until the stripes are held. Never call it
    /// on a network thread.
    pub fn wait_blocking(self) -> KeyGuard<'a> {
        if let Some(waiting) = &self.waiting {
            loop {
                if waiting.pending.load(Ordering::Acquire) == 0 {
                    break;
                }
                *waiting.wakeup.lock() = Wakeup::Thread(std::thread::current());
                if waiting.pending.load(Ordering::Acquire) == 0 {
                    break;
                }
                std::thread::park();
            }
        }
        self.into_guard()
    }
}

impl<'a> Future for LockRequest<'a> {
    type Output = KeyGuard<'a>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<KeyGuard<'a>> {
        let this = self.get_mut();
        if let Some(waiting) = &this.waiting {
            if waiting.pending.load(Ordering::Acquire) != 0 {
                *waiting.wakeup.lock() = Wakeup::Task(cx.waker().clone());
                // A grant between the check and the store found no waker.
                if waiting.pending.load(Ordering::Acquire) != 0 {
                    return Poll::Pending;
                }
            }
        }
        Poll::Ready(KeyGuard {
            held: this.held.take(),
        })
    }
}

impl Drop for LockRequest<'_> {
    fn drop(&mut self) {
        let Some(held) = self.held.take() else {
            return;
        };
        let mut ready = Vec::new();
        for &s in &held.stripes {
            let mut stripe = held.table.stripes[s].lock();
            let queued = self.waiting.as_ref().and_then(|waiting| {
                stripe
                    .queue
                    .iter()
                    .position(|q| Arc::ptr_eq(&q.request, waiting))
            });
            match queued {
                Some(at) => {
                    stripe.queue.remove(at);
                }
                // Granted already: given back.
                None => stripe.unhold(held.mode),
            }
            stripe.promote(&mut ready);
        }
        wake_all(ready);
    }
}

/// Held stripes; dropping it unlocks them.
pub struct KeyGuard<'a> {
    held: Option<Held<'a>>,
}

impl KeyGuard<'_> {
    fn stripes(&self) -> &[usize] {
        self.held.as_ref().map_or(&[], |held| &held.stripes)
    }
}

impl Drop for KeyGuard<'_> {
    fn drop(&mut self) {
        if let Some(held) = self.held.take() {
            held.table.release(&held.stripes, held.mode);
        }
    }
}

/// Stripes held by a thread outside the runtime (the script thread) that
/// may take more while it runs: the first ones are awaited in order, any
/// later one is only *tried* (a failed try means "start again holding
/// every stripe"), so no lock order is ever violated. Dropping it unlocks.
pub struct GrowingGuard<'a> {
    /// The stripes it waited for.
    first: KeyGuard<'a>,
    /// Stripes added by [`GrowingGuard::try_add`], sorted.
    added: Vec<usize>,
    all: bool,
}

impl GrowingGuard<'_> {
    /// Whether every stripe is held.
    pub fn holds_all(&self) -> bool {
        self.all
    }

    /// Tries to add `stripes` without waiting; false if one is taken or
    /// has requests waiting (the ones already acquired stay held until the
    /// guard is dropped).
    pub fn try_add(&mut self, stripes: &[usize]) -> bool {
        if self.all {
            return true;
        }
        let Some(table) = self.first.held.as_ref().map(|held| &held.table) else {
            return false;
        };
        for &s in stripes {
            let s = s % STRIPES;
            if self.first.stripes().binary_search(&s).is_ok() {
                continue;
            }
            let Err(at) = self.added.binary_search(&s) else {
                continue;
            };
            let mut stripe = table.stripes[s].lock();
            if !stripe.queue.is_empty() || !stripe.admits(LockMode::Exclusive) {
                return false;
            }
            stripe.hold(LockMode::Exclusive);
            drop(stripe);
            self.added.insert(at, s);
        }
        true
    }
}

impl Drop for GrowingGuard<'_> {
    fn drop(&mut self) {
        if let Some(held) = &self.first.held {
            held.table.release(&self.added, LockMode::Exclusive);
        }
    }
}

impl KeyLocks {
    /// Takes a place in the queue of each of `stripes` (sorted and
    /// deduplicated) now, and grants those that are free and have nobody
    /// waiting. The result resolves once every stripe is held.
    pub fn request(&self, stripes: &[usize], mode: LockMode) -> LockRequest<'_> {
        self.table
            .request(TableRef::Borrowed(&self.table), stripes, mode)
    }

    /// [`KeyLocks::request`], in a form any thread can await or wait for:
    /// a place taken on a network thread for the script thread, or by a
    /// write for the blocked client it wakes.
    pub fn request_owned(&self, stripes: &[usize], mode: LockMode) -> LockRequest<'static> {
        self.table
            .request(TableRef::Owned(self.table.clone()), stripes, mode)
    }

    /// An exclusive place *first* in the queues of `stripes`, for the
    /// request that must follow their current holder before anyone already
    /// waiting: the blocked client that holder's write wakes, served in the
    /// write's own turn as Redis serves it. The caller holds the stripes of
    /// `held` exclusively (a writer at submit); the new request queues
    /// first behind it on those, and is granted at once every other stripe
    /// of `stripes`, which must be free with nobody waiting (BLMOVE's
    /// destination). That keeps it free of deadlock: the new request waits
    /// for the caller alone, who waits for nothing, every request queued
    /// behind it was queued behind the caller already, and what it holds
    /// nobody was waiting for. `None` (nothing taken) when a stripe of
    /// `held` is not held exclusively or another one is not free. Requests
    /// placed so by one holder end up in the reverse of the order they
    /// were placed.
    pub fn request_next_owned(
        &self,
        stripes: &[usize],
        held: &[usize],
    ) -> Option<LockRequest<'static>> {
        self.table
            .request_next(TableRef::Owned(self.table.clone()), stripes, held)
    }

    /// Locks `stripes` (sorted and deduplicated) exclusively, awaiting
    /// contended ones.
    pub async fn lock(&self, stripes: &[usize]) -> KeyGuard<'_> {
        self.request(stripes, LockMode::Exclusive).await
    }

    /// Locks `stripes` (sorted and deduplicated) shared, for a run that
    /// writes nothing, awaiting the ones held exclusively.
    pub async fn lock_shared(&self, stripes: &[usize]) -> KeyGuard<'_> {
        self.request(stripes, LockMode::Shared).await
    }

    /// Locks `stripes` from a thread outside the async runtime (active
    /// expiry). Never call it on a network thread.
    pub fn lock_blocking(&self, stripes: &[usize]) -> KeyGuard<'_> {
        self.request(stripes, LockMode::Exclusive).wait_blocking()
    }

    /// Locks `stripes` (sorted) from a thread outside the async runtime,
    /// in a guard that may grow (see [`GrowingGuard`]). Never call it on a
    /// network thread.
    pub fn lock_growing_blocking(&self, stripes: &[usize]) -> GrowingGuard<'_> {
        growing(
            self.request(stripes, LockMode::Exclusive).wait_blocking(),
            false,
        )
    }

    /// Every stripe, from a thread outside the async runtime.
    pub fn lock_all_blocking(&self) -> GrowingGuard<'_> {
        let all: Vec<usize> = (0..STRIPES).collect();
        growing(
            self.request(&all, LockMode::Exclusive).wait_blocking(),
            true,
        )
    }

    /// Every stripe: the caller runs alone among keyed commands.
    pub async fn lock_all(&self) -> KeyGuard<'_> {
        let all: Vec<usize> = (0..STRIPES).collect();
        self.lock(&all).await
    }

    /// Records that a batch touching `stripes` was submitted.
    pub fn bump(&self, stripes: &[usize]) {
        for &s in stripes {
            self.writes[s % STRIPES].fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Changes with every whole-database batch (flush, swap).
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    pub fn bump_epoch(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
    }

    /// A fingerprint of the write counters of `stripes`: unchanged exactly
    /// when no batch touching them (and no flush or swap) was submitted in
    /// between. The epoch and which stripes were summed are kept apart from
    /// the counters' sum: a sum only grows over one set of stripes, but a
    /// swap changes which stripes a key's lock is, and a sum that folded
    /// the epoch in could come out equal over the new set (a cold LPOP then
    /// committed the pop of a list that a swap had moved to the other
    /// database, found by the history checker).
    pub fn stamp(&self, stripes: &[usize]) -> WriteStamp {
        let epoch = self.epoch.load(Ordering::Acquire);
        let mut writes = 0u64;
        let mut set = 0xcbf2_9ce4_8422_2325u64;
        for &s in stripes {
            writes = writes.wrapping_add(self.writes[s % STRIPES].load(Ordering::Acquire));
            set = (set ^ s as u64).wrapping_mul(0x0100_0000_01b3);
        }
        WriteStamp { epoch, set, writes }
    }
}

/// A guard that may grow, from stripes already held (`all`: every one).
pub fn growing(first: KeyGuard<'_>, all: bool) -> GrowingGuard<'_> {
    GrowingGuard {
        first,
        added: Vec::new(),
        all,
    }
}

/// See [`KeyLocks::stamp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteStamp {
    epoch: u64,
    /// Which stripes (an FNV-1a hash of their ids, in order).
    set: u64,
    writes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn a_contended_stripe_is_awaited_not_blocked() {
        let locks = std::sync::Arc::new(KeyLocks::default());
        let held = locks.lock(&[7, 9]).await;
        let other = locks.clone();
        let waiter = tokio::spawn(async move {
            let _g = other.lock(&[9]).await;
            1
        });
        // The single runtime thread is free to run other work meanwhile.
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        let _free = locks.lock(&[8]).await;
        drop(held);
        assert_eq!(waiter.await.unwrap(), 1);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn readers_share_a_stripe_and_a_waiting_writer_goes_first() {
        let locks = std::sync::Arc::new(KeyLocks::default());
        let first = locks.lock_shared(&[4]).await;
        let second = locks.lock_shared(&[4]).await;
        let other = locks.clone();
        let writer = tokio::spawn(async move {
            let _g = other.lock(&[4]).await;
            1
        });
        tokio::task::yield_now().await;
        assert!(!writer.is_finished());
        // A reader that comes after the waiting writer waits behind it.
        let other = locks.clone();
        let late_reader = tokio::spawn(async move {
            let _g = other.lock_shared(&[4]).await;
            2
        });
        tokio::task::yield_now().await;
        assert!(!late_reader.is_finished());
        drop((first, second));
        assert_eq!(writer.await.unwrap(), 1);
        assert_eq!(late_reader.await.unwrap(), 2);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn requests_are_granted_in_the_order_they_were_made() {
        let locks = std::sync::Arc::new(KeyLocks::default());
        let held = locks.lock(&[2]).await;
        // Three requests queue behind the holder, then are granted in the
        // order they asked, whatever order their tasks are polled in.
        let order = std::sync::Arc::new(Mutex::new(Vec::new()));
        let waiting = |name: &'static str, stripes: &[usize]| {
            let request = locks.request(stripes, LockMode::Exclusive);
            assert!(!request.is_granted());
            let order = order.clone();
            async move {
                let _g = request.await;
                order.lock().push(name);
            }
        };
        let a = waiting("a", &[1, 2]);
        let b = waiting("b", &[2]);
        let c = waiting("c", &[2, 3]);
        drop(held);
        // Polled last first: each must still wait for the ones before it.
        tokio::join!(c, b, a);
        assert_eq!(*order.lock(), vec!["a", "b", "c"]);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_dropped_request_leaves_its_queues_and_gives_back_what_it_held() {
        let locks = KeyLocks::default();
        let held = locks.lock(&[5]).await;
        // Granted 4 at once, queued on 5.
        let request = locks.request(&[4, 5], LockMode::Exclusive);
        assert!(!request.is_granted());
        let behind = locks.request(&[4], LockMode::Exclusive);
        assert!(!behind.is_granted());
        drop(request);
        assert!(behind.is_granted(), "4 was given back to the next in line");
        let behind = behind.await;
        drop((held, behind));
        let again = locks.request(&[4, 5], LockMode::Exclusive);
        assert!(again.is_granted());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_shared_request_waits_behind_a_queued_writer_of_any_stripe() {
        let locks = KeyLocks::default();
        let reader = locks.lock_shared(&[1]).await;
        let writer = locks.request(&[1, 2], LockMode::Exclusive);
        let late = locks.request(&[1], LockMode::Shared);
        assert!(!writer.is_granted() && !late.is_granted());
        drop(reader);
        assert!(writer.is_granted());
        let writer = writer.await;
        assert!(!late.is_granted());
        drop(writer);
        assert!(late.is_granted());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_next_request_goes_before_those_already_waiting() {
        let locks = KeyLocks::default();
        let holder = locks.lock(&[3, 4]).await;
        let waiting = locks.request(&[3], LockMode::Exclusive);
        assert!(
            locks.request_next_owned(&[3, 5], &[3, 4, 5]).is_none(),
            "5 is not held"
        );
        let next = locks.request_next_owned(&[3, 4], &[3, 4]).expect("held");
        assert!(!next.is_granted());
        drop(holder);
        assert!(next.is_granted(), "it follows the holder");
        assert!(!waiting.is_granted());
        let next = next.await;
        drop(next);
        assert!(waiting.is_granted());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_next_request_takes_a_free_stripe_its_caller_does_not_hold() {
        let locks = KeyLocks::default();
        let holder = locks.lock(&[3]).await;
        let waiting = locks.request(&[3], LockMode::Exclusive);
        let other = locks.lock(&[7]).await;
        assert!(
            locks.request_next_owned(&[3, 7], &[3]).is_none(),
            "7 is taken by another"
        );
        let next = locks.request_next_owned(&[3, 6], &[3]).expect("6 is free");
        let later = locks.request(&[6], LockMode::Exclusive);
        assert!(!later.is_granted(), "6 is the next request's already");
        drop(holder);
        assert!(next.is_granted(), "it follows the holder");
        assert!(!waiting.is_granted());
        drop(next.await);
        assert!(waiting.is_granted());
        assert!(later.is_granted());
        drop(other);
        let alone = locks.request_next_owned(&[8], &[]).expect("8 is free");
        assert!(alone.is_granted());
        drop(alone);
        assert!(locks.request(&[8], LockMode::Exclusive).is_granted());
    }

    #[test]
    fn a_request_taken_on_one_thread_is_waited_for_on_another() {
        let locks = std::sync::Arc::new(KeyLocks::default());
        let held = locks.lock_blocking(&[9]);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            let request = locks.request(&[9], LockMode::Exclusive);
            scope.spawn(move || {
                let _g = request.wait_blocking();
                tx.send(()).unwrap();
            });
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert!(rx.try_recv().is_err());
            drop(held);
            rx.recv().unwrap();
        });
    }

    #[test]
    fn a_growing_guard_tries_more_stripes_and_never_waits() {
        let locks = KeyLocks::default();
        let mut guard = locks.lock_growing_blocking(&[3, 5]);
        assert!(guard.try_add(&[5, 6]));
        {
            let mut other = locks.lock_growing_blocking(&[7]);
            assert!(!other.try_add(&[6]));
            assert!(other.try_add(&[8]));
        }
        assert!(!guard.holds_all());
        drop(guard);
        let all = locks.lock_all_blocking();
        assert!(all.holds_all());
        drop(all);
        assert!(locks.lock_growing_blocking(&[6]).try_add(&[3, 5, 7]));
    }

    #[test]
    fn stamps_of_other_stripes_never_match() {
        let locks = KeyLocks::default();
        locks.bump(&[1]);
        // Equal sums over different stripes are different stamps.
        assert_ne!(locks.stamp(&[1]), locks.stamp(&[2, 1]));
        assert_ne!(locks.stamp(&[3]), locks.stamp(&[2]));
        let before = locks.stamp(&[2]);
        locks.bump_epoch();
        locks.bump(&[1]);
        assert_ne!(locks.stamp(&[2]), before);
    }

    #[test]
    fn stamps_change_with_writes_and_epochs() {
        let locks = KeyLocks::default();
        let before = locks.stamp(&[1, 2]);
        locks.bump(&[3]);
        assert_eq!(locks.stamp(&[1, 2]), before);
        locks.bump(&[2]);
        assert_ne!(locks.stamp(&[1, 2]), before);
        let before = locks.stamp(&[1, 2]);
        locks.bump_epoch();
        assert_ne!(locks.stamp(&[1, 2]), before);
    }
}
