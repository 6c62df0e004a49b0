//! Pub/Sub: who is subscribed to what ([`PubSub`], on the `Server`), and
//! how a message reaches a connection ([`Mailbox`], one per client).
//!
//! - The registry maps channels, patterns and shard channels to their
//!   subscribers, in subscription order, behind `parking_lot` read-write
//!   locks that are only held for CPU work (never across an await).
//!   A counter of all subscriptions lets [`publish`] return at once, with
//!   one atomic load, when nobody is subscribed to anything.
//! - Delivery never waits for a subscriber: [`publish`] appends the
//!   message to each subscriber's mailbox and wakes its connection, which
//!   encodes it with its own protocol (RESP2 array, RESP3 push) in the
//!   same output queue as its replies (`Connection::deliver_messages`).
//!   A subscriber whose unsent output (mailbox plus output queue) passes
//!   `client-output-buffer-limit pubsub` is closed by the publisher, as
//!   Redis closes it, so a slow subscriber costs bounded memory and never
//!   slows the publisher.
//! - Confirmations (`subscribe`, `unsubscribe`...) go through the same
//!   mailbox, queued before the subscription is visible to publishers, so
//!   a client always sees its confirmation before the first message.

use bytes::Bytes;
use firn_prims::glob::Glob;
use firn_resp::Reply;
use parking_lot::{Mutex, RwLock};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

/// The three subscription spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Channel,
    Pattern,
    Shard,
}

impl Kind {
    fn subscribe_word(self) -> &'static str {
        match self {
            Kind::Channel => "subscribe",
            Kind::Pattern => "psubscribe",
            Kind::Shard => "ssubscribe",
        }
    }

    fn unsubscribe_word(self) -> &'static str {
        match self {
            Kind::Channel => "unsubscribe",
            Kind::Pattern => "punsubscribe",
            Kind::Shard => "sunsubscribe",
        }
    }
}

/// Estimated wire bytes of a message besides its payloads (headers and
/// the kind word), for the output limit.
const MESSAGE_OVERHEAD_BYTES: u64 = 40;

/// Server-initiated messages waiting for one connection.
#[derive(Default)]
pub struct Mailbox {
    /// Messages, each with the number it was queued as.
    queue: Mutex<VecDeque<(u64, Arc<Reply>)>>,
    /// Messages queued so far (the next one's number).
    queued: AtomicU64,
    /// The number of messages queued before the running command took
    /// effect (see [`Mailbox::mark_reply`]).
    reply_mark: AtomicU64,
    /// Messages that follow the reply of the command the client is running
    /// (an invalidation its own write caused), sent after `queue`'s.
    after_reply: Mutex<VecDeque<Arc<Reply>>>,
    /// Estimated wire bytes of `queue`.
    bytes: AtomicU64,
    /// Messages in `queue`.
    len: AtomicU64,
    /// Wakes the connection when a message arrives.
    pub notify: Notify,
    /// Since when (Unix ms) the client's unsent output has been above the
    /// soft limit, as seen by publishers; 0 = not above.
    pub(super) over_soft_since_ms: AtomicU64,
}

impl Mailbox {
    pub fn is_empty(&self) -> bool {
        self.len.load(Ordering::Acquire) == 0
    }

    pub fn queued_bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    pub fn queued_len(&self) -> u64 {
        self.len.load(Ordering::Relaxed)
    }

    /// Queues a message; returns the bytes queued after it. With
    /// `after_reply` it goes behind the reply of the command the client is
    /// running.
    pub fn push(&self, message: Arc<Reply>, bytes: u64, after_reply: bool) -> u64 {
        if after_reply {
            self.after_reply.lock().push_back(message);
        } else {
            let mut queue = self.queue.lock();
            let number = self.queued.fetch_add(1, Ordering::AcqRel);
            queue.push_back((number, message));
        }
        self.len.fetch_add(1, Ordering::Release);
        self.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes
    }

    /// The running command takes effect (under its keys' locks): messages
    /// queued so far may precede its reply, those queued later (another
    /// client's write that ran after it) follow it.
    pub fn mark_reply(&self) {
        let _queue = self.queue.lock();
        self.reply_mark
            .store(self.queued.load(Ordering::Acquire), Ordering::Release);
    }

    /// Takes every queued message, oldest first, those that wait for a
    /// reply last.
    pub fn take(&self) -> VecDeque<Arc<Reply>> {
        let mut all = self.take_queued(|_| true);
        all.append(&mut self.take_after_reply());
        all
    }

    /// Takes the messages that wait for the running command's reply.
    pub fn take_after_reply(&self) -> VecDeque<Arc<Reply>> {
        let mut queue = self.after_reply.lock();
        let taken = std::mem::take(&mut *queue);
        self.len.fetch_sub(taken.len() as u64, Ordering::AcqRel);
        if self.len.load(Ordering::Acquire) == 0 {
            self.bytes.store(0, Ordering::Relaxed);
        }
        taken
    }

    /// Takes the messages that may precede the running command's reply:
    /// those queued before it took effect.
    pub fn take_before_reply(&self) -> VecDeque<Arc<Reply>> {
        let mark = self.reply_mark.load(Ordering::Acquire);
        self.take_queued(|number| number < mark)
    }

    fn take_queued(&self, taken: impl Fn(u64) -> bool) -> VecDeque<Arc<Reply>> {
        let mut queue = self.queue.lock();
        let mut out = VecDeque::new();
        while queue.front().is_some_and(|(number, _)| taken(*number)) {
            if let Some((_, message)) = queue.pop_front() {
                out.push_back(message);
            }
        }
        self.len.fetch_sub(out.len() as u64, Ordering::AcqRel);
        if self.len.load(Ordering::Acquire) == 0 {
            self.bytes.store(0, Ordering::Relaxed);
        }
        out
    }

    /// The connection saw its unsent output back under the soft limit.
    pub fn clear_soft_timer(&self) {
        self.over_soft_since_ms.store(0, Ordering::Relaxed);
    }
}

/// One client's subscriptions and its mailbox (a field of `ClientInfo`).
#[derive(Default)]
pub struct ClientSubs {
    pub mailbox: Mailbox,
    channels: AtomicU32,
    patterns: AtomicU32,
    shard: AtomicU32,
    /// The names behind the counters; only the client's own commands and
    /// its disconnection change them.
    own: Mutex<OwnSubs>,
}

#[derive(Default)]
struct OwnSubs {
    channels: HashSet<Bytes>,
    patterns: HashSet<Bytes>,
    shard: HashSet<Bytes>,
}

impl OwnSubs {
    fn of(&mut self, kind: Kind) -> &mut HashSet<Bytes> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard,
        }
    }
}

impl ClientSubs {
    fn counter(&self, kind: Kind) -> &AtomicU32 {
        match kind {
            Kind::Channel => &self.channels,
            Kind::Pattern => &self.patterns,
            Kind::Shard => &self.shard,
        }
    }

    /// CLIENT LIST `sub=`, `psub=`, `ssub=`.
    pub fn counts(&self) -> (u32, u32, u32) {
        (
            self.channels.load(Ordering::Relaxed),
            self.patterns.load(Ordering::Relaxed),
            self.shard.load(Ordering::Relaxed),
        )
    }

    /// Whether the client has any subscription (Redis's CLIENT_PUBSUB
    /// flag: RESP2 subscribed mode, the `pubsub` client class).
    pub fn subscribed(&self) -> bool {
        let (c, p, s) = self.counts();
        c + p + s > 0
    }

    /// Its channels (shard channels included) and its patterns.
    pub fn names(&self) -> (Vec<Bytes>, Vec<Bytes>) {
        let own = self.own.lock();
        let channels = own
            .channels
            .iter()
            .chain(own.shard.iter())
            .cloned()
            .collect();
        (channels, own.patterns.iter().cloned().collect())
    }

    /// The count a (un)subscribe confirmation of `kind` reports: channels
    /// and patterns together, shard channels apart.
    fn confirmation_count(&self, kind: Kind) -> i64 {
        let (c, p, s) = self.counts();
        i64::from(match kind {
            Kind::Channel | Kind::Pattern => c + p,
            Kind::Shard => s,
        })
    }
}

/// What the registry needs of a subscribed client: its id and its
/// subscriptions (the server's `ClientInfo` is one).
pub trait Subscriber {
    fn id(&self) -> u64;
    fn subs(&self) -> &ClientSubs;
}

type Subscribers<C> = Vec<Arc<C>>;

/// The subscription registry (see the module comment).
pub struct PubSub<C> {
    /// Subscriptions of every kind by every client.
    total: AtomicUsize,
    patterns_total: AtomicUsize,
    channels: RwLock<HashMap<Bytes, Subscribers<C>>>,
    patterns: RwLock<HashMap<Bytes, (Glob, Subscribers<C>)>>,
    shard: RwLock<HashMap<Bytes, Subscribers<C>>>,
}

impl<C> Default for PubSub<C> {
    fn default() -> Self {
        PubSub {
            total: AtomicUsize::new(0),
            patterns_total: AtomicUsize::new(0),
            channels: RwLock::default(),
            patterns: RwLock::default(),
            shard: RwLock::default(),
        }
    }
}

fn bulk(word: &'static str) -> Reply {
    Reply::Bulk(Bytes::from_static(word.as_bytes()))
}

impl<C: Subscriber> PubSub<C> {
    /// INFO `pubsub_channels`.
    pub fn channel_count(&self) -> usize {
        self.channels.read().len()
    }

    /// INFO `pubsub_patterns`, PUBSUB NUMPAT.
    pub fn pattern_count(&self) -> usize {
        self.patterns.read().len()
    }

    /// INFO `pubsubshard_channels`.
    pub fn shard_channel_count(&self) -> usize {
        self.shard.read().len()
    }

    /// PUBSUB CHANNELS / SHARDCHANNELS: active names matching `pattern`.
    pub fn active(&self, shard: bool, pattern: Option<&[u8]>) -> Vec<Bytes> {
        let glob = pattern.map(|p| Glob::new(p, false));
        let map = if shard { &self.shard } else { &self.channels };
        map.read()
            .keys()
            .filter(|name| glob.as_ref().is_none_or(|g| g.matches(name)))
            .cloned()
            .collect()
    }

    /// PUBSUB NUMSUB / SHARDNUMSUB: subscribers of one name.
    pub fn subscriber_count(&self, shard: bool, name: &[u8]) -> usize {
        let map = if shard { &self.shard } else { &self.channels };
        map.read().get(name).map_or(0, Vec::len)
    }

    /// Adds one subscription and queues its confirmation (before any
    /// message can reach the client through it).
    pub fn subscribe(&self, client: &Arc<C>, kind: Kind, name: &[u8]) {
        let subs = client.subs();
        let mut own = subs.own.lock();
        // A copy: `name` may share the connection's whole read buffer.
        let name = Bytes::copy_from_slice(name);
        let added = own.of(kind).insert(name.clone());
        if added {
            subs.counter(kind).fetch_add(1, Ordering::Relaxed);
        }
        confirm(subs, kind.subscribe_word(), Some(&name), kind);
        if !added {
            return;
        }
        match kind {
            Kind::Channel => self
                .channels
                .write()
                .entry(name)
                .or_default()
                .push(client.clone()),
            Kind::Shard => self
                .shard
                .write()
                .entry(name)
                .or_default()
                .push(client.clone()),
            Kind::Pattern => {
                self.patterns
                    .write()
                    .entry(name.clone())
                    .or_insert_with(|| (Glob::new(&name, false), Vec::new()))
                    .1
                    .push(client.clone());
                self.patterns_total.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.total.fetch_add(1, Ordering::Release);
    }

    /// Removes the named subscriptions (all of `kind` when `names` is
    /// empty), queueing Redis's confirmations: one per name, or a single
    /// one with a null name when there was nothing to remove.
    pub fn unsubscribe(&self, client: &Arc<C>, kind: Kind, names: &[Bytes]) {
        let subs = client.subs();
        let mut own = subs.own.lock();
        let names: Vec<Bytes> = if names.is_empty() {
            own.of(kind).iter().cloned().collect()
        } else {
            names.to_vec()
        };
        if names.is_empty() {
            confirm(subs, kind.unsubscribe_word(), None, kind);
            return;
        }
        for name in &names {
            if own.of(kind).remove(name.as_ref()) {
                subs.counter(kind).fetch_sub(1, Ordering::Relaxed);
                self.remove(client, kind, name);
            }
            confirm(subs, kind.unsubscribe_word(), Some(name), kind);
        }
    }

    /// Drops every subscription of a client, without confirmations
    /// (disconnection, RESET).
    pub fn forget_client(&self, client: &Arc<C>) {
        let subs = client.subs();
        if !subs.subscribed() {
            return;
        }
        let mut own = subs.own.lock();
        for kind in [Kind::Channel, Kind::Pattern, Kind::Shard] {
            let names: Vec<Bytes> = own.of(kind).drain().collect();
            for name in names {
                subs.counter(kind).fetch_sub(1, Ordering::Relaxed);
                self.remove(client, kind, &name);
            }
        }
    }

    /// Whether nobody is subscribed to anything (one atomic load).
    pub fn is_idle(&self) -> bool {
        self.total.load(Ordering::Acquire) == 0
    }

    /// PUBLISH: hands `message` to `deliver` for the subscribers of `channel` (`message`)
    /// and of every pattern matching it (`pmessage`), in that order as Redis
    /// does; returns how many deliveries were made. Costs one atomic load
    /// when nobody is subscribed to anything; never waits.
    pub fn publish_with(
        &self,
        channel: &[u8],
        message: &[u8],
        mut deliver: impl FnMut(&C, &Arc<Reply>, u64),
    ) -> usize {
        let pubsub = self;
        if pubsub.total.load(Ordering::Acquire) == 0 {
            return 0;
        }
        let channel = Bytes::copy_from_slice(channel);
        let message = Bytes::copy_from_slice(message);
        let mut receivers = 0;
        {
            let channels = pubsub.channels.read();
            if let Some(subscribers) = channels.get(&channel) {
                let reply = Arc::new(Reply::Push(vec![
                    bulk("message"),
                    Reply::Bulk(channel.clone()),
                    Reply::Bulk(message.clone()),
                ]));
                let bytes = MESSAGE_OVERHEAD_BYTES + (channel.len() + message.len()) as u64;
                for client in subscribers {
                    deliver(client, &reply, bytes);
                    receivers += 1;
                }
            }
        }
        if pubsub.patterns_total.load(Ordering::Relaxed) > 0 {
            let patterns = pubsub.patterns.read();
            for (pattern, (glob, subscribers)) in patterns.iter() {
                if !glob.matches(&channel) {
                    continue;
                }
                let reply = Arc::new(Reply::Push(vec![
                    bulk("pmessage"),
                    Reply::Bulk(pattern.clone()),
                    Reply::Bulk(channel.clone()),
                    Reply::Bulk(message.clone()),
                ]));
                let bytes =
                    MESSAGE_OVERHEAD_BYTES + (pattern.len() + channel.len() + message.len()) as u64;
                for client in subscribers {
                    deliver(client, &reply, bytes);
                    receivers += 1;
                }
            }
        }
        receivers
    }

    /// How many clients a PUBLISH to `channel` (`sharded`: SPUBLISH) reaches
    /// now: its reply inside EXEC or a script, where the message itself goes
    /// out once the unit commits (effects.rs).
    pub fn receivers(&self, channel: &[u8], sharded: bool) -> usize {
        let pubsub = self;
        if pubsub.total.load(Ordering::Acquire) == 0 {
            return 0;
        }
        if sharded {
            return pubsub.shard.read().get(channel).map_or(0, |s| s.len());
        }
        let mut receivers = pubsub.channels.read().get(channel).map_or(0, |s| s.len());
        if pubsub.patterns_total.load(Ordering::Relaxed) > 0 {
            let patterns = pubsub.patterns.read();
            receivers += patterns
                .values()
                .filter(|(glob, _)| glob.matches(channel))
                .map(|(_, subscribers)| subscribers.len())
                .sum::<usize>();
        }
        receivers
    }

    /// SPUBLISH: hands `smessage` to `deliver` for the subscribers of a shard channel.
    pub fn spublish_with(
        &self,
        channel: &[u8],
        message: &[u8],
        mut deliver: impl FnMut(&C, &Arc<Reply>, u64),
    ) -> usize {
        let pubsub = self;
        if pubsub.total.load(Ordering::Acquire) == 0 {
            return 0;
        }
        let shard = pubsub.shard.read();
        let Some(subscribers) = shard.get(channel) else {
            return 0;
        };
        let reply = Arc::new(Reply::Push(vec![
            bulk("smessage"),
            Reply::Bulk(Bytes::copy_from_slice(channel)),
            Reply::Bulk(Bytes::copy_from_slice(message)),
        ]));
        let bytes = MESSAGE_OVERHEAD_BYTES + (channel.len() + message.len()) as u64;
        for client in subscribers {
            deliver(client, &reply, bytes);
        }
        subscribers.len()
    }

    fn remove(&self, client: &C, kind: Kind, name: &[u8]) {
        let drop_client = |list: &mut Subscribers<C>| {
            if let Some(at) = list.iter().position(|c| c.id() == client.id()) {
                list.remove(at);
            }
            list.is_empty()
        };
        match kind {
            Kind::Channel | Kind::Shard => {
                let map = if kind == Kind::Channel {
                    &self.channels
                } else {
                    &self.shard
                };
                let mut map = map.write();
                if map.get_mut(name).is_some_and(drop_client) {
                    map.remove(name);
                }
            }
            Kind::Pattern => {
                let mut map = self.patterns.write();
                if map.get_mut(name).is_some_and(|(_, list)| drop_client(list)) {
                    map.remove(name);
                }
                self.patterns_total.fetch_sub(1, Ordering::Relaxed);
            }
        }
        self.total.fetch_sub(1, Ordering::Release);
    }
}

/// Queues a confirmation: `[word, name or null, count]`.
fn confirm(subs: &ClientSubs, word: &'static str, name: Option<&Bytes>, kind: Kind) {
    let reply = Reply::Push(vec![
        bulk(word),
        name.map_or(Reply::Null, |n| Reply::Bulk(n.clone())),
        Reply::Integer(subs.confirmation_count(kind)),
    ]);
    let bytes = MESSAGE_OVERHEAD_BYTES + name.map_or(0, |n| n.len() as u64);
    subs.mailbox.push(Arc::new(reply), bytes, false);
}

/// Redis's refusal of a command a subscribed RESP2 client may not run
/// (the commands it may run say so: `Def::subscribed_ok`).
pub fn subscribed_mode_error(name: &str) -> String {
    format!(
        "ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A subscriber as the registry sees one (the server's is `ClientInfo`).
    struct Client {
        id: u64,
        pubsub: ClientSubs,
    }

    impl Subscriber for Client {
        fn id(&self) -> u64 {
            self.id
        }

        fn subs(&self) -> &ClientSubs {
            &self.pubsub
        }
    }

    fn client(id: u64) -> Arc<Client> {
        Arc::new(Client {
            id,
            pubsub: ClientSubs::default(),
        })
    }

    fn words(mailbox: &Mailbox) -> Vec<String> {
        mailbox
            .take()
            .iter()
            .map(|r| match &**r {
                Reply::Push(items) => items
                    .iter()
                    .map(|i| match i {
                        Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                        Reply::Integer(n) => n.to_string(),
                        Reply::Null => "nil".into(),
                        _ => "?".into(),
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => "?".into(),
            })
            .collect()
    }

    #[test]
    fn subscriptions_count_and_confirm_like_redis() {
        let registry = PubSub::default();
        let c = client(1);
        registry.subscribe(&c, Kind::Channel, b"a");
        registry.subscribe(&c, Kind::Channel, b"a");
        registry.subscribe(&c, Kind::Pattern, b"p*");
        registry.subscribe(&c, Kind::Shard, b"s");
        assert_eq!(
            words(&c.pubsub.mailbox),
            [
                "subscribe a 1",
                "subscribe a 1",
                "psubscribe p* 2",
                "ssubscribe s 1"
            ]
        );
        assert_eq!(c.pubsub.counts(), (1, 1, 1));
        assert_eq!(registry.channel_count(), 1);
        assert_eq!(registry.pattern_count(), 1);
        assert_eq!(registry.subscriber_count(false, b"a"), 1);
        registry.unsubscribe(&c, Kind::Channel, &[Bytes::from_static(b"x")]);
        registry.unsubscribe(&c, Kind::Channel, &[]);
        registry.unsubscribe(&c, Kind::Channel, &[]);
        assert_eq!(
            words(&c.pubsub.mailbox),
            ["unsubscribe x 2", "unsubscribe a 1", "unsubscribe nil 1"]
        );
        registry.forget_client(&c);
        assert!(!c.pubsub.subscribed());
        assert_eq!(registry.total.load(Ordering::Relaxed), 0);
        assert_eq!(registry.pattern_count() + registry.shard_channel_count(), 0);
    }
}
