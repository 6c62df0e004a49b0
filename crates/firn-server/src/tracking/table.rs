//! Client-side caching's tables: each client's tracking options
//! (`ClientTracking`), and the server-wide table of which clients may
//! cache which keys (`Tracking`, generic over the client type so that it
//! imports nothing of the server that holds it).

use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

/// Option flags of a tracking client.
pub const BCAST: u8 = 1;
pub const OPTIN: u8 = 2;
pub const OPTOUT: u8 = 4;
pub const NOLOOP: u8 = 8;
/// The redirection target disconnected.
pub const BROKEN_REDIRECT: u8 = 16;

/// The channel RESP2 redirection delivers on.
pub const INVALIDATE_CHANNEL: &[u8] = b"__redis__:invalidate";

/// One client's tracking state (a field of `ClientInfo`).
#[derive(Default)]
pub struct ClientTracking {
    pub(super) on: AtomicBool,
    pub(super) flags: AtomicU8,
    /// The client id invalidations go to; 0 = this client.
    pub(super) redirect: AtomicU64,
    /// CLIENT CACHING YES (OPTIN) / NO (OPTOUT) for the next command.
    pub(super) caching: AtomicBool,
    /// BCAST prefixes, sorted.
    pub(super) prefixes: Mutex<Vec<Bytes>>,
    /// The keys of the read-only commands about to run (decided before
    /// they run, per OPTIN/OPTOUT and CLIENT CACHING), entered in the
    /// table once their run takes effect, under their keys' locks.
    pub(super) reading: Mutex<Vec<(u8, Bytes)>>,
}

impl ClientTracking {
    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Acquire)
    }

    pub fn flags(&self) -> u8 {
        self.flags.load(Ordering::Relaxed)
    }

    pub fn redirect(&self) -> u64 {
        self.redirect.load(Ordering::Relaxed)
    }

    pub fn caching(&self) -> bool {
        self.caching.load(Ordering::Relaxed)
    }

    pub fn set_caching(&self) {
        self.caching.store(true, Ordering::Relaxed);
    }

    pub fn prefixes(&self) -> Vec<Bytes> {
        self.prefixes.lock().clone()
    }
}

/// The server-wide tracking state (a field of `Server`).
pub struct Tracking<C> {
    /// Clients with tracking on; zero = nothing to remember, no task.
    pub(super) clients_on: AtomicUsize,
    pub(super) state: Mutex<State<C>>,
    /// INFO tracking_total_keys / items / prefixes, kept outside the lock.
    pub(super) total_keys: AtomicUsize,
    pub(super) total_items: AtomicUsize,
    pub(super) total_prefixes: AtomicUsize,
}

pub(super) struct State<C> {
    /// Held while any client tracks: submits then hand their signals to
    /// `tracking::state::on_submit` (firn-storage signals.rs).
    pub(super) listening: Option<firn_storage::SubmitListening>,
    /// Tracking clients by id (the ones invalidations may be for).
    pub(super) clients: HashMap<u64, Arc<C>>,
    /// Key → ids of the clients that may cache it.
    pub(super) table: HashMap<Bytes, HashSet<u64>>,
    /// Client ids in `table`, over all keys.
    pub(super) items: usize,
    /// Keys in the order they entered the table (with stale entries for
    /// keys since invalidated), for the `tracking-table-max-keys` bound.
    pub(super) order: VecDeque<Bytes>,
    /// BCAST prefix → its clients.
    pub(super) prefixes: BTreeMap<Bytes, HashSet<u64>>,
}

/// An invalidation to send: the tracking client and its keys (`None` =
/// everything, after a flush).
pub(super) struct Invalidation<C> {
    pub(super) client: Arc<C>,
    pub(super) keys: Option<Vec<Bytes>>,
}

impl<C> Tracking<C> {
    pub fn clients_on(&self) -> usize {
        self.clients_on.load(Ordering::Relaxed)
    }

    pub fn total_keys(&self) -> usize {
        self.total_keys.load(Ordering::Relaxed)
    }

    pub fn total_items(&self) -> usize {
        self.total_items.load(Ordering::Relaxed)
    }

    pub fn total_prefixes(&self) -> usize {
        self.total_prefixes.load(Ordering::Relaxed)
    }

    pub(super) fn publish_totals(&self, state: &State<C>) {
        self.total_keys.store(state.table.len(), Ordering::Relaxed);
        self.total_items.store(state.items, Ordering::Relaxed);
        self.total_prefixes
            .store(state.prefixes.len(), Ordering::Relaxed);
    }
}

/// The arguments of CLIENT TRACKING ON, validated.
pub struct TrackingOptions {
    pub redirect: u64,
    pub flags: u8,
    pub prefixes: Vec<Bytes>,
}

impl<C> Default for Tracking<C> {
    fn default() -> Self {
        Tracking {
            clients_on: AtomicUsize::new(0),
            state: Mutex::new(State::default()),
            total_keys: AtomicUsize::new(0),
            total_items: AtomicUsize::new(0),
            total_prefixes: AtomicUsize::new(0),
        }
    }
}

impl<C> Default for State<C> {
    fn default() -> Self {
        State {
            listening: None,
            clients: HashMap::new(),
            table: HashMap::new(),
            items: 0,
            order: VecDeque::new(),
            prefixes: BTreeMap::new(),
        }
    }
}
