//! Arrival order across connections (docs/architecture.md, "Arrival
//! order").
//!
//! Redis reads every connection on one loop, so a command read first runs
//! first. Firn's connections run on several worker threads: the one woken
//! second may be polled first. The order is taken where it is still
//! known: tokio's I/O driver wakes the parked readers one after another in
//! the order epoll reports them, which is the order their bytes arrived.
//! Each such wake is stamped with the next number ([`ReadWaker`]), and the
//! stamp stays *outstanding* until its connection has taken its first
//! command's place in its keys' queues (or found no whole command).
//!
//! A command on keys (and a keyless one that may write) waits
//! ([`Arrivals::wait_before`]) until no stamp before its own is
//! outstanding, then takes its place: so a DEL sent after another client's
//! XREADGROUP finds the reader registered, a SET sent after a tracking
//! client's GET invalidates what that GET read, and a GET sent after
//! another client's unanswered SET reads what it wrote.
//!
//! The wait is bounded ([`WAIT_LIMIT`]): a stamp whose connection does not
//! come to take its place in that time is given up, so no client can stall
//! the others for longer.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use parking_lot::Mutex;

/// The longest a command waits for connections that were woken before it.
pub const WAIT_LIMIT: Duration = Duration::from_millis(10);

/// The stamps of one server.
pub struct Arrivals {
    inner: Mutex<Inner>,
    /// Waits that ran into [`WAIT_LIMIT`] (INFO `arrival_waits_given_up`).
    pub given_up: AtomicU64,
    /// Commands that waited for an earlier arrival (INFO `arrival_waits`).
    pub waits: AtomicU64,
    /// The lowest outstanding stamp (`u64::MAX`: none), kept under
    /// `inner`'s lock and read without it.
    lowest: AtomicU64,
}

impl Default for Arrivals {
    fn default() -> Self {
        Arrivals {
            inner: Mutex::default(),
            given_up: AtomicU64::new(0),
            waits: AtomicU64::new(0),
            lowest: AtomicU64::new(u64::MAX),
        }
    }
}

#[derive(Default)]
struct Inner {
    /// The next stamp to give; every stamp given is below it.
    next: u64,
    outstanding: BTreeSet<u64>,
    /// Waiting commands by (their stamp, a number of their own).
    waiters: BTreeMap<(u64, u64), Waker>,
    next_waiter: u64,
}

impl Inner {
    /// Whether a command stamped `stamp` may take its place now.
    fn clear_before(&self, stamp: u64) -> bool {
        self.outstanding.range(..stamp).next().is_none()
    }

    /// The waiters that may go on now, taken out of the table.
    fn ready_waiters(&mut self) -> Vec<Waker> {
        let lowest = self.outstanding.first().copied().unwrap_or(u64::MAX);
        let later = self.waiters.split_off(&(lowest, u64::MAX));
        std::mem::replace(&mut self.waiters, later)
            .into_values()
            .collect()
    }
}

impl Arrivals {
    /// The stamp of a command read without a wake (its bytes were waiting
    /// already): after everything stamped so far.
    pub fn now(&self) -> u64 {
        self.inner.lock().next
    }

    /// Gives the next stamp and makes it outstanding.
    fn arrive(&self) -> u64 {
        let mut inner = self.inner.lock();
        let stamp = inner.next;
        inner.next += 1;
        inner.outstanding.insert(stamp);
        self.note_lowest(&inner);
        stamp
    }

    fn note_lowest(&self, inner: &Inner) {
        let lowest = inner.outstanding.first().copied().unwrap_or(u64::MAX);
        self.lowest.store(lowest, Ordering::Release);
    }

    /// Whether no stamp before `stamp` is outstanding, without the lock.
    fn clear_before(&self, stamp: u64) -> bool {
        self.lowest.load(Ordering::Acquire) >= stamp
    }

    /// Ends a stamp: its connection has taken its place, or has nothing
    /// to place. Returns whether a command waited for it.
    fn release(&self, stamp: u64) -> bool {
        let ready = {
            let mut inner = self.inner.lock();
            if !inner.outstanding.remove(&stamp) {
                return false;
            }
            self.note_lowest(&inner);
            if inner.waiters.is_empty() {
                return false;
            }
            inner.ready_waiters()
        };
        let woke = !ready.is_empty();
        for waker in ready {
            waker.wake();
        }
        woke
    }

    /// Gives up every stamp before `stamp` (a wait ran out of time).
    fn give_up_before(&self, stamp: u64) {
        let ready = {
            let mut inner = self.inner.lock();
            let later = inner.outstanding.split_off(&stamp);
            inner.outstanding = later;
            self.note_lowest(&inner);
            inner.ready_waiters()
        };
        for waker in ready {
            waker.wake();
        }
    }

    /// Waits until every connection stamped before `stamp` has taken its
    /// place, for at most [`WAIT_LIMIT`].
    pub async fn wait_before(&self, stamp: u64) {
        if self.clear_before(stamp) {
            return;
        }
        self.waits.fetch_add(1, Ordering::Relaxed);
        let wait = Wait {
            arrivals: self,
            stamp,
            id: None,
        };
        if tokio::time::timeout(WAIT_LIMIT, wait).await.is_err() {
            self.given_up.fetch_add(1, Ordering::Relaxed);
            self.give_up_before(stamp);
        }
    }

    /// How many stamps are outstanding now.
    #[cfg(test)]
    fn outstanding(&self) -> usize {
        self.inner.lock().outstanding.len()
    }
}

/// [`Arrivals::wait_before`]'s wait itself.
struct Wait<'a> {
    arrivals: &'a Arrivals,
    stamp: u64,
    id: Option<u64>,
}

impl Future for Wait<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut inner = self.arrivals.inner.lock();
        if inner.clear_before(self.stamp) {
            if let Some(id) = self.id.take() {
                inner.waiters.remove(&(self.stamp, id));
            }
            return Poll::Ready(());
        }
        let id = match self.id {
            Some(id) => id,
            None => {
                let id = inner.next_waiter;
                inner.next_waiter += 1;
                id
            }
        };
        inner.waiters.insert((self.stamp, id), cx.waker().clone());
        drop(inner);
        self.id = Some(id);
        Poll::Pending
    }
}

impl Drop for Wait<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.arrivals.inner.lock().waiters.remove(&(self.stamp, id));
        }
    }
}

/// An outstanding stamp: ended by [`Ticket::end`], or when dropped.
pub struct Ticket {
    arrivals: Arc<Arrivals>,
    stamp: u64,
    ended: bool,
}

impl Ticket {
    fn new(arrivals: Arc<Arrivals>, stamp: u64) -> Ticket {
        Ticket {
            arrivals,
            stamp,
            ended: false,
        }
    }

    /// Ends the stamp; true when a command was waiting for it.
    pub fn end(mut self) -> bool {
        self.ended = true;
        self.arrivals.release(self.stamp)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if !self.ended {
            self.arrivals.release(self.stamp);
        }
    }
}

/// Where a connection's commands stand in the arrival order
/// (`ClientInfo::arrival`).
#[derive(Default)]
pub struct Arrival {
    /// The stamp of the read the running commands came in (0, before
    /// everything, for the server's own clients).
    pub stamp: u64,
    /// Outstanding until the read's first command has taken its place.
    pub ticket: Option<Ticket>,
}

/// The waker a connection's parked read is polled with: it stamps the
/// wake that ends the park, then wakes the connection's task.
pub struct ReadWaker {
    arrivals: Arc<Arrivals>,
    slot: Mutex<Slot>,
}

#[derive(Default)]
struct Slot {
    /// Set while the connection waits for input and nothing else.
    armed: bool,
    stamp: Option<u64>,
    /// Wakes while armed (a poll keeps its stamp when one came meanwhile).
    wakes: u64,
    task: Option<Waker>,
}

impl ReadWaker {
    pub fn new(arrivals: Arc<Arrivals>) -> Arc<ReadWaker> {
        Arc::new(ReadWaker {
            arrivals,
            slot: Mutex::new(Slot::default()),
        })
    }

    /// Polls `read`, the connection's read of its socket, so that the wake
    /// that makes it ready is stamped.
    pub fn poll_stamped<F: Future>(
        self: &Arc<Self>,
        read: Pin<&mut F>,
        cx: &mut Context<'_>,
    ) -> Poll<F::Output> {
        let before = {
            let mut slot = self.slot.lock();
            slot.armed = true;
            if !slot.task.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                slot.task = Some(cx.waker().clone());
            }
            if slot.stamp.is_none() {
                // Input that is waiting already arrived before any wake
                // stamped from now on: the read is stamped now.
                slot.stamp = Some(self.arrivals.arrive());
            }
            slot.wakes
        };
        let waker = Waker::from(self.clone());
        let polled = read.poll(&mut Context::from_waker(&waker));
        if polled.is_pending() {
            // Nothing to read (for the stamp taken now, or the wake it
            // was stamped for): the stamp ends, and the wake that ends
            // the park gives the next one. A wake during this poll keeps
            // it: the input it announces arrived after the stamp.
            let spurious = {
                let mut slot = self.slot.lock();
                if slot.wakes == before {
                    slot.stamp.take()
                } else {
                    None
                }
            };
            if let Some(stamp) = spurious {
                self.arrivals.release(stamp);
            }
        }
        polled
    }

    /// Ends the park: the read returned, or the connection left it. The
    /// stamp of the wake that ended it (or of the poll that found input
    /// waiting already) comes with its ticket.
    pub fn take(&self) -> Arrival {
        let stamp = {
            let mut slot = self.slot.lock();
            slot.armed = false;
            slot.stamp.take()
        };
        match stamp {
            Some(stamp) => Arrival {
                stamp,
                ticket: Some(Ticket::new(self.arrivals.clone(), stamp)),
            },
            None => Arrival {
                stamp: self.arrivals.now(),
                ticket: None,
            },
        }
    }

    /// Leaves the park without a read: any stamp it got is ended.
    pub fn disarm(&self) {
        let stamp = {
            let mut slot = self.slot.lock();
            slot.armed = false;
            slot.stamp.take()
        };
        if let Some(stamp) = stamp {
            self.arrivals.release(stamp);
        }
    }
}

impl Wake for ReadWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let task = {
            let mut slot = self.slot.lock();
            if slot.armed {
                slot.wakes += 1;
                if slot.stamp.is_none() {
                    slot.stamp = Some(self.arrivals.arrive());
                }
            }
            slot.task.clone()
        };
        if let Some(task) = task {
            task.wake();
        }
    }
}

impl Drop for ReadWaker {
    fn drop(&mut self) {
        if let Some(stamp) = self.slot.get_mut().stamp.take() {
            self.arrivals.release(stamp);
        }
    }
}

/// Awaits `read`, the connection's read of its socket, polled through
/// `waker` so that the wake that makes it ready is stamped.
pub async fn stamped<F: Future>(waker: &Arc<ReadWaker>, read: F) -> F::Output {
    let mut read = std::pin::pin!(read);
    std::future::poll_fn(|cx| waker.poll_stamped(read.as_mut(), cx)).await
}

/// Registers `waker` for `socket`'s input without reading it: called
/// before a reply goes out, so that the command the reply prompts finds
/// the read parked and its wake is stamped in arrival order. (Registered
/// only after the write, its arrival could be seen by the driver before
/// the park, unstamped, and the read stamped later than another
/// connection's that arrived after it.)
pub async fn arm(waker: &Arc<ReadWaker>, socket: &tokio::net::TcpStream) {
    std::future::poll_fn(|cx| {
        let mut ready = std::pin::pin!(std::future::poll_fn(|cx| socket.poll_read_ready(cx)));
        let _ = waker.poll_stamped(ready.as_mut(), cx);
        Poll::Ready(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(arrivals: &Arc<Arrivals>) -> Ticket {
        Ticket::new(arrivals.clone(), arrivals.arrive())
    }

    #[tokio::test]
    async fn a_command_waits_for_every_connection_stamped_before_it() {
        let arrivals = Arc::new(Arrivals::default());
        let first = ticket(&arrivals);
        let second = ticket(&arrivals);
        let later = arrivals.now();
        let waiting = arrivals.wait_before(later);
        tokio::pin!(waiting);
        assert!(futures_poll(&mut waiting).is_pending());
        drop(second);
        assert!(futures_poll(&mut waiting).is_pending());
        drop(first);
        assert!(futures_poll(&mut waiting).is_ready());
        assert_eq!(arrivals.given_up.load(Ordering::Relaxed), 0);
    }

    #[tokio::test]
    async fn a_command_does_not_wait_for_its_own_stamp_or_later_ones() {
        let arrivals = Arc::new(Arrivals::default());
        let own = ticket(&arrivals);
        let _later = ticket(&arrivals);
        arrivals.wait_before(own.stamp).await;
        assert_eq!(arrivals.waits.load(Ordering::Relaxed), 0);
    }

    #[tokio::test]
    async fn a_stamp_nobody_ends_is_given_up_after_the_limit() {
        let arrivals = Arc::new(Arrivals::default());
        let stuck = ticket(&arrivals);
        arrivals.wait_before(arrivals.now()).await;
        assert_eq!(arrivals.given_up.load(Ordering::Relaxed), 1);
        // Given up once: the next command does not wait for it again.
        arrivals.wait_before(arrivals.now()).await;
        assert_eq!(arrivals.waits.load(Ordering::Relaxed), 1);
        drop(stuck);
        assert_eq!(arrivals.outstanding(), 0);
    }

    #[test]
    fn only_a_parked_read_is_stamped_and_a_wake_that_brings_nothing_ends_its_stamp() {
        let arrivals = Arc::new(Arrivals::default());
        let waker = ReadWaker::new(arrivals.clone());
        // Not parked: a wake is passed on, unstamped.
        waker.wake_by_ref();
        assert_eq!(arrivals.outstanding(), 0);
        let task = futures_noop_waker();
        let mut cx = Context::from_waker(&task);
        let mut nothing = std::pin::pin!(std::future::pending::<()>());
        assert!(waker.poll_stamped(nothing.as_mut(), &mut cx).is_pending());
        waker.wake_by_ref();
        assert_eq!(arrivals.outstanding(), 1);
        // Polled again and still nothing: the stamp is ended.
        assert!(waker.poll_stamped(nothing.as_mut(), &mut cx).is_pending());
        assert_eq!(arrivals.outstanding(), 0);
        waker.wake_by_ref();
        let arrival = waker.take();
        assert!(arrival.ticket.is_some());
        assert_eq!(arrivals.outstanding(), 1);
        drop(arrival);
        assert_eq!(arrivals.outstanding(), 0);
        // Input waiting already: stamped by the poll that finds it.
        let mut ready = std::pin::pin!(std::future::ready(()));
        assert!(waker.poll_stamped(ready.as_mut(), &mut cx).is_ready());
        let arrival = waker.take();
        assert!(arrival.ticket.is_some());
        assert_eq!(arrivals.outstanding(), 1);
    }

    fn futures_noop_waker() -> Waker {
        struct Noop;
        impl Wake for Noop {
            fn wake(self: Arc<Self>) {}
        }
        Waker::from(Arc::new(Noop))
    }

    fn futures_poll<F: Future + Unpin>(fut: &mut F) -> Poll<F::Output> {
        let waker = futures_noop_waker();
        Pin::new(fut).poll(&mut Context::from_waker(&waker))
    }
}
