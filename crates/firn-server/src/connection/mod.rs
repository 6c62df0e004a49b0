//! One client connection. [`Connection`] owns the socket halves, the
//! input buffer and its decoder, the output queue and the durability
//! bookkeeping; [`serve`] is its loop: read → decode → run → flush.
//!
//! Output travels in three steps. A reply is encoded into the output
//! queue, *held* there until the batches it depends on are durable (the
//! tickets of its own writes and of other clients' pending writes it
//! showed; [`Connection::wait_durable`] is the only place that waits for
//! the writer), then *released* and written as fast as the socket takes it.
//! Everything sent to a client goes through [`Connection::push_reply`] or
//! [`Connection::push_raw`], so server-initiated messages (pub/sub, RESP3
//! push) can be interleaved in one place.
//!
//! Limits that protect the other clients (docs/configuration.md):
//! - While more than [`Connection::output_bound`] bytes wait to be sent,
//!   the connection neither reads nor runs anything more from that client:
//!   a client that never reads costs at most that much memory.
//! - `client-output-buffer-limit` (class normal) closes a client whose
//!   unsent output passes the hard limit, or stays above the soft limit
//!   for longer than its seconds, as Redis does.
//! - `client-query-buffer-limit` closes a client whose unparsed input
//!   (the request in progress, less its complete arguments) passes it.
//! - `timeout` closes a client with no traffic in either direction.
//! - While the writer is behind by more than the pending-write bound
//!   (`config::pending_writes_limit`), no connection reads more requests.
//!
//! The connection keeps only the connection: the request path itself is
//! `pipeline.rs`, the output queue `output.rs`, a blocked command's wait
//! `blocked.rs`, MONITOR mode `monitor/mode.rs`, TLS's records `tls.rs`
//! (a TLS connection is this same loop; where bytes enter and leave the
//! socket, the session decrypts and encrypts them).

mod blocked;
mod output;
pub(crate) mod tls;

use bytes::{Bytes, BytesMut};
use firn_resp::{Limits, Reply, RequestDecoder};
use rustls::ServerConnection;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};

use crate::arrival::stamped;
use crate::command_table::Flags;
use crate::config::OutputLimit;
use crate::monitor::mode::{monitor_loop, Monitored};
use crate::pipeline::{run_one, Flow, Outgoing};
use crate::server::{ClientInfo, Server, Session};
use crate::stream_reply::Part;
use firn_storage::Ticket;
use output::OutputQueue;

/// Replies are released and written early once this much output is queued.
const FLUSH_BYTES: usize = 64 * 1024;
/// Unsent output above which a client's input is no longer read, when
/// `client-output-buffer-limit` allows more (Redis would buffer without
/// bound; see docs/compatibility.md).
const OUTPUT_BACKPRESSURE_BYTES: u64 = 64 * 1024 * 1024;
/// A bulk reply at least this long is queued by reference, not copied.
const BIG_BULK_BYTES: usize = 64 * 1024;
/// Bytes read from the socket at a time (Redis's PROTO_IOBUF_LEN), unless a
/// big argument is known to be on its way.
const READ_BYTES: usize = 16 * 1024;
/// The largest single read reserved for a big argument in progress.
const BIG_READ_BYTES: usize = 1024 * 1024;
/// Unsent bytes of a streamed reply above which its producer waits.
const STREAM_BUFFER_BYTES: usize = 1024 * 1024;

/// What a wait on the socket ended with.
enum Woke {
    Read(std::io::Result<usize>),
    /// A TLS connection's socket has ciphertext to read.
    TlsReadable(std::io::Result<()>),
    Writable(std::io::Result<()>),
    /// No traffic for `timeout` seconds.
    Idle,
    /// The soft output limit's time is up: check it.
    Timer,
    /// A pub/sub message (or invalidation) is in the mailbox.
    Message,
    /// Killed, or the server is shutting down.
    Stop,
}

/// Why the connection ends without another request.
enum Ended {
    /// The client closed its side: send what is left, then close.
    Eof,
    /// Killed, idle too long, over a limit, a socket error, or shutdown.
    Abort,
}

/// Serves a client on `stream`; `tls` is the session of a TLS connection,
/// its handshake done.
pub async fn serve(
    server: Arc<Server>,
    stream: TcpStream,
    tls: Option<ServerConnection>,
    client: Arc<ClientInfo>,
) {
    let mut connection = Connection::new(server.clone(), stream, tls, client.clone());
    if let Some(psync) = connection.run().await {
        // PSYNC: the socket is the replica's feed from now on.
        let Connection {
            reader,
            writer,
            inbuf,
            tls,
            ..
        } = connection;
        // Over TLS the feed reads and writes the one session from two
        // tasks: through tokio's split of an owned stream.
        type Feed = (
            Box<dyn tokio::io::AsyncRead + Unpin + Send>,
            Box<dyn tokio::io::AsyncWrite + Unpin + Send>,
        );
        let feed: Option<Feed> = match tls {
            None => Some((Box::new(reader), Box::new(writer))),
            Some(session) => match reader.reunite(writer) {
                Ok(tcp) => {
                    let (reader, writer) = tokio::io::split(tls::TlsStream::new(tcp, session));
                    Some((Box::new(reader), Box::new(writer)))
                }
                Err(_) => {
                    tracing::warn!(client = client.id, "cannot reunite the socket halves");
                    None
                }
            },
        };
        if let Some((reader, writer)) = feed {
            crate::replication::primary::serve(
                server.clone(),
                client.clone(),
                reader,
                writer,
                inbuf,
                psync,
            )
            .await;
        }
    }
    leave(&server, &client);
    server.connected.fetch_sub(1, Ordering::AcqRel);
}

/// Takes the client out of everything that can reach it: its
/// subscriptions, tracking, watched keys and the client table (a
/// redirection to it is broken from here on). Once is enough; again is
/// harmless.
fn leave(server: &Server, client: &Arc<ClientInfo>) {
    server.pubsub.forget_client(client);
    crate::tracking::state::disable(server, client);
    crate::multi::transaction::unwatch(server, client);
    server.unregister_client(client.id);
}

/// The batches the held replies depend on: the connection's own writes
/// and other clients' pending writes that its replies showed.
type Awaiting = Vec<Ticket>;

/// One client's connection; see the module comment.
pub struct Connection {
    server: Arc<Server>,
    client: Arc<ClientInfo>,
    session: Session,
    reader: OwnedReadHalf,
    writer: OwnedWriteHalf,
    /// A TLS connection's session (None: plain TCP).
    tls: Option<Box<ServerConnection>>,
    inbuf: BytesMut,
    decoder: RequestDecoder,
    output: OutputQueue,
    awaiting: Awaiting,
    shutdown: watch::Receiver<bool>,
    /// Last time bytes moved either way (the `timeout` clock).
    last_io: Instant,
    /// Since when the output has been above the soft limit.
    over_soft_since: Option<Instant>,
    /// Stamps the wake that ends a wait for input (arrival.rs).
    read_waker: Arc<crate::arrival::ReadWaker>,
}

impl Connection {
    pub fn new(
        server: Arc<Server>,
        stream: TcpStream,
        tls: Option<ServerConnection>,
        client: Arc<ClientInfo>,
    ) -> Self {
        let _ = stream.set_nodelay(true);
        let (reader, writer) = stream.into_split();
        let session = server.new_session();
        let shutdown = server.shutdown.subscribe();
        let read_waker = crate::arrival::ReadWaker::new(server.arrivals.clone());
        Connection {
            server,
            client,
            session,
            reader,
            writer,
            tls: tls.map(Box::new),
            inbuf: BytesMut::with_capacity(READ_BYTES),
            decoder: RequestDecoder::new(),
            output: OutputQueue::default(),
            awaiting: Awaiting::default(),
            shutdown,
            last_io: Instant::now(),
            over_soft_since: None,
            read_waker,
        }
    }

    /// Read → decode → run → flush, until the client goes or must go, or
    /// asks to be fed as a replica (PSYNC: returned, with its output sent).
    pub async fn run(&mut self) -> Option<crate::replication::state::Psync> {
        // A TLS client's first request may have come with its handshake.
        let mut buffered = match self.tls.as_deref_mut() {
            Some(session) => match tls::take_plaintext(session, &mut self.inbuf) {
                Ok((n, _)) => n > 0,
                Err(_) => return None,
            },
            None => false,
        };
        loop {
            let read = if std::mem::take(&mut buffered) {
                Ok(())
            } else {
                self.read().await
            };
            match read {
                Ok(()) => *self.client.arrival.lock() = self.read_waker.take(),
                Err(Ended::Eof) => {
                    self.read_waker.disarm();
                    let _ = self.finish().await;
                    return None;
                }
                Err(Ended::Abort) => {
                    self.read_waker.disarm();
                    return None;
                }
            }
            // A RESET that ends MONITOR mode hands back the requests still
            // buffered behind it: run them before reading more.
            let mut flow = self.run_buffered().await;
            // A read that completed no command (a large value still
            // arriving) holds nobody back while the rest comes.
            self.client.end_arrival();
            while let Flow::Monitor = flow {
                if !self.monitor().await {
                    return None;
                }
                flow = self.run_buffered().await;
            }
            match flow {
                Flow::Continue | Flow::Monitor => {}
                Flow::Drop => return None,
                Flow::Close => {
                    // Gone before its last reply (QUIT's OK) can be read:
                    // a command another client sends on reading it finds
                    // no subscriber, tracking redirect or client here, as
                    // Redis frees a closing client before reading more.
                    leave(&self.server, &self.client);
                    let _ = self.finish().await;
                    return None;
                }
                Flow::Replica(psync) => {
                    return self.finish().await.is_ok().then_some(psync);
                }
            }
            if self.query_buffer_over_limit() {
                return None;
            }
            if self.wait_durable().await.is_err() {
                return None;
            }
        }
    }

    /// MONITOR mode (see [`monitor_loop`]); false when the connection
    /// must close, true once RESET left the mode.
    async fn monitor(&mut self) -> bool {
        // Subscribed before the OK leaves, as Redis registers a monitor
        // before replying: a command run right after the OK is shown.
        let feed = self.server.monitor_feed.subscribe();
        if self.finish().await.is_err() {
            return false;
        }
        let (limits, query_limit) = {
            let config = self.server.config();
            let limits = Limits {
                max_bulk_len: config.proto_max_bulk_len,
                ..Limits::default()
            };
            (limits, config.client_query_buffer_limit)
        };
        // MONITOR is no hot path: the plain halves or the TLS session's
        // split, behind one type.
        type Reader<'a> = Box<dyn tokio::io::AsyncRead + Unpin + Send + 'a>;
        type Writer<'a> = Box<dyn tokio::io::AsyncWrite + Unpin + Send + 'a>;
        let (mut reader, mut writer): (Reader<'_>, Writer<'_>) = match self.tls.as_deref_mut() {
            None => (Box::new(&mut self.reader), Box::new(&mut self.writer)),
            Some(session) => {
                let io = tls::TlsIo {
                    tcp: self.reader.as_ref(),
                    session,
                };
                let (reader, writer) = tokio::io::split(io);
                (Box::new(reader), Box::new(writer))
            }
        };
        let mut monitored = Monitored {
            reader: &mut reader,
            writer: &mut writer,
            inbuf: &mut self.inbuf,
            decoder: &mut self.decoder,
            limits: &limits,
            query_limit,
        };
        let flow = monitor_loop(
            &self.server,
            &self.client,
            &mut self.session,
            &mut monitored,
            feed,
        )
        .await;
        drop((reader, writer));
        if matches!(flow, Flow::Close) {
            return false;
        }
        // What the session decrypted past MONITOR's last read is the
        // caller's: into the input buffer, as a plain socket would have it.
        match self.tls.as_deref_mut() {
            Some(session) => tls::take_plaintext(session, &mut self.inbuf).is_ok(),
            None => true,
        }
    }

    /// Reads more input, writing released output meanwhile. Returns once
    /// bytes arrived; while the unsent output is above the bound it only
    /// writes.
    async fn read(&mut self) -> Result<(), Ended> {
        loop {
            if self.client.killed.load(Ordering::Acquire) {
                return Err(Ended::Abort);
            }
            if self.output.has_released() || self.tls_wants_write() {
                crate::arrival::arm(&self.read_waker, self.writer.as_ref()).await;
                self.write_ready().map_err(|_| Ended::Abort)?;
            }
            if self.output_over_limit() {
                return Err(Ended::Abort);
            }
            let room = crate::config::pending_writes_limit(self.server.config().maxmemory);
            if self.server.engine.pending_bytes() > room {
                // Waiting for the writers, not for input.
                self.read_waker.disarm();
                tokio::select! {
                    _ = self.server.engine.wait_for_room(room) => {}
                    _ = self.client.kill.notified() => return Err(Ended::Abort),
                    _ = crate::server::until_shutdown(&mut self.shutdown) => return Err(Ended::Abort),
                }
            }
            let can_read = (self.output.len as u64) <= self.output_bound();
            if !can_read {
                // Not waiting for input: a wake now is no arrival.
                self.read_waker.disarm();
            }
            let plain = self.tls.is_none();
            if can_read && plain {
                self.inbuf.reserve(self.read_size());
            }
            let idle_deadline = self.idle_deadline();
            let soft_deadline = self.soft_limit_deadline();
            let want_write = self.output.has_released() || self.tls_wants_write();
            let woke = tokio::select! {
                read = stamped(&self.read_waker, self.reader.read_buf(&mut self.inbuf)), if can_read && plain => Woke::Read(read),
                ready = stamped(&self.read_waker, self.writer.as_ref().readable()), if can_read && !plain => Woke::TlsReadable(ready),
                ready = self.writer.writable(), if want_write => Woke::Writable(ready),
                _ = sleep_until(idle_deadline), if idle_deadline.is_some() => Woke::Idle,
                _ = sleep_until(soft_deadline), if soft_deadline.is_some() => Woke::Timer,
                _ = self.client.pubsub.mailbox.notify.notified() => Woke::Message,
                _ = self.client.kill.notified() => Woke::Stop,
                _ = crate::server::until_shutdown(&mut self.shutdown) => Woke::Stop,
            };
            match woke {
                Woke::Message => {
                    // Between requests nothing is held: send it right away.
                    self.deliver_messages();
                    if self.awaiting.is_empty() {
                        self.output.release_all();
                    }
                }
                Woke::Read(Ok(0)) => return Err(Ended::Eof),
                Woke::Read(Ok(n)) => {
                    self.note_input(n);
                    return Ok(());
                }
                Woke::TlsReadable(Ok(())) => match self.read_tls()? {
                    0 => {}
                    n => {
                        self.note_input(n);
                        return Ok(());
                    }
                },
                Woke::Writable(Ok(())) => self.write_ready().map_err(|_| Ended::Abort)?,
                Woke::Timer => {}
                Woke::Idle => {
                    tracing::debug!(client = self.client.id, "closing idle client");
                    return Err(Ended::Abort);
                }
                Woke::Read(Err(_))
                | Woke::TlsReadable(Err(_))
                | Woke::Writable(Err(_))
                | Woke::Stop => return Err(Ended::Abort),
            }
        }
    }

    /// Waits until the socket takes more output, then writes what it takes.
    /// With `soft_timer`, also wakes when the soft limit's time is up.
    async fn write_when_ready(&mut self, soft_timer: bool) -> Result<(), Ended> {
        let soft_deadline = self.soft_limit_deadline().filter(|_| soft_timer);
        let woke = tokio::select! {
            ready = self.writer.writable() => Woke::Writable(ready),
            _ = sleep_until(soft_deadline), if soft_deadline.is_some() => Woke::Timer,
            _ = self.client.kill.notified() => Woke::Stop,
            _ = crate::server::until_shutdown(&mut self.shutdown) => Woke::Stop,
        };
        match woke {
            Woke::Writable(Ok(())) => self.write_ready().map_err(|_| Ended::Abort),
            Woke::Timer | Woke::Message => Ok(()),
            _ => Err(Ended::Abort),
        }
    }

    /// How much to reserve for the next read: a big argument in progress
    /// is read in large steps, anything else 16 KiB at a time.
    fn read_size(&self) -> usize {
        match self.decoder.min_buffer_len() {
            Some(need) if need > self.inbuf.len() => {
                (need - self.inbuf.len()).clamp(READ_BYTES, BIG_READ_BYTES)
            }
            _ => READ_BYTES,
        }
    }

    /// A TLS connection's readable socket: the plaintext its records held
    /// (0: none yet), appended to the input.
    fn read_tls(&mut self) -> Result<usize, Ended> {
        let want = self.read_size();
        let Some(session) = self.tls.as_deref_mut() else {
            return Ok(0);
        };
        match tls::read_available(self.reader.as_ref(), session, &mut self.inbuf, want) {
            Ok(tls::Input::Plaintext(n)) => Ok(n),
            Ok(tls::Input::Eof) => Err(Ended::Eof),
            Err(e) => {
                tracing::debug!(client = self.client.id, error = %e, "TLS error");
                Err(Ended::Abort)
            }
        }
    }

    /// Whether the TLS session has records to send (output, or its own:
    /// session tickets, alerts).
    fn tls_wants_write(&self) -> bool {
        self.tls.as_ref().is_some_and(|s| s.wants_write())
    }

    fn note_input(&mut self, n: usize) {
        self.last_io = Instant::now();
        self.server
            .stats
            .net_input_bytes
            .fetch_add(n as u64, Ordering::Relaxed);
        self.client
            .last_interaction_ms
            .store(firn_storage::now_ms(), Ordering::Relaxed);
    }

    fn idle_deadline(&self) -> Option<Instant> {
        let idle_secs = self.server.config().timeout_secs;
        (idle_secs > 0).then(|| self.last_io + Duration::from_secs(idle_secs))
    }

    /// Runs every complete request in the input buffer.
    async fn run_buffered(&mut self) -> Flow {
        let limits = Limits {
            max_bulk_len: self.server.config().proto_max_bulk_len,
            ..Limits::default()
        };
        loop {
            let buffered = self.inbuf.len();
            let args =
                match self
                    .decoder
                    .decode(&mut self.inbuf, &limits, self.session.authenticated)
                {
                    Ok(None) => return Flow::Continue,
                    Ok(Some(args)) if args.is_empty() => continue,
                    Ok(Some(args)) => args,
                    Err(e) => {
                        self.push_reply(&e.to_reply());
                        return Flow::Close;
                    }
                };
            // While a command runs, its own bytes count in its client's
            // query buffer (CLIENT LIST's qbuf), as in Redis.
            self.client
                .query_buffer
                .store(buffered as u64, Ordering::Relaxed);
            let flow = self.run_one(&args).await;
            // The read's first command has taken its place: the stamp
            // ends, whatever the command was.
            self.client.end_arrival();
            if !matches!(flow, Flow::Continue) {
                return flow;
            }
            if self.client.monitor.load(Ordering::Acquire) {
                return Flow::Monitor;
            }
            if self.output_over_limit() {
                return Flow::Drop;
            }
            if self.output.len >= FLUSH_BYTES && self.make_room().await.is_err() {
                return Flow::Drop;
            }
        }
    }

    /// Releases the queued replies and writes what the socket takes now;
    /// while the unsent output stays above the bound, waits for the client
    /// to read (its input is not read meanwhile).
    async fn make_room(&mut self) -> Result<(), Ended> {
        let bound = usize::try_from(self.output_bound()).unwrap_or(usize::MAX);
        self.drain_to(bound).await
    }

    /// Waits until the writes behind the held replies are durable, then
    /// releases them for sending. If the writer gave up on any of them
    /// (disk full), the held replies are dropped and the caller closes the
    /// connection: the client is never told that a write it cannot find
    /// again succeeded.
    async fn wait_durable(&mut self) -> std::io::Result<()> {
        for ticket in std::mem::take(&mut self.awaiting) {
            if ticket.wait().await.is_err() {
                self.output.discard_held();
                self.publish_output_size();
                return Err(std::io::Error::other("write could not be made durable"));
            }
        }
        self.output.release_all();
        Ok(())
    }

    /// Writes released output until the socket would block.
    fn write_ready(&mut self) -> std::io::Result<()> {
        if self.tls.is_some() {
            return self.write_ready_tls();
        }
        while self.output.has_released() {
            match self.output.write_released(&self.writer) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.last_io = Instant::now();
                    self.server
                        .stats
                        .net_output_bytes
                        .fetch_add(n as u64, Ordering::Relaxed);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        self.publish_output_size();
        Ok(())
    }

    /// [`Self::write_ready`] over TLS: the session's pending records first,
    /// then more released output encrypted, until the socket would block.
    /// Plaintext bytes are counted, as Redis counts them.
    fn write_ready_tls(&mut self) -> std::io::Result<()> {
        let Some(session) = self.tls.as_deref_mut() else {
            return Ok(());
        };
        let tcp: &TcpStream = self.writer.as_ref();
        while tls::flush_ciphertext(tcp, session)? && self.output.has_released() {
            let n = self
                .output
                .consume_released(|slices| tls::encrypt(session, slices))?;
            if n == 0 {
                break;
            }
            self.last_io = Instant::now();
            self.server
                .stats
                .net_output_bytes
                .fetch_add(n as u64, Ordering::Relaxed);
        }
        self.publish_output_size();
        Ok(())
    }

    /// Sends everything queued (after it is durable), then flushes the
    /// socket. Used before closing and before MONITOR takes the socket.
    async fn finish(&mut self) -> Result<(), Ended> {
        if self.wait_durable().await.is_err() {
            return Err(Ended::Abort);
        }
        while self.output.has_released() || self.tls_wants_write() {
            self.write_when_ready(false).await?;
        }
        self.writer.flush().await.map_err(|_| Ended::Abort)
    }

    /// Queues a reply for the client (held until [`Self::wait_durable`]).
    pub fn push_reply(&mut self, reply: &Reply) {
        match reply {
            Reply::Bulk(body) if body.len() >= BIG_BULK_BYTES => {
                self.output
                    .push_tail(format!("${}\r\n", body.len()).as_bytes());
                self.output.push_segment(body.clone());
                self.output.push_tail(b"\r\n");
            }
            _ => {
                let before = self.output.tail.len();
                reply.encode(&mut self.output.tail, self.session.protocol);
                self.output.len += self.output.tail.len() - before;
            }
        }
        self.publish_output_size();
    }

    /// Moves the mailbox's pub/sub messages into the output queue, encoded
    /// in the session's protocol (RESP2 arrays, RESP3 pushes). With CLIENT
    /// REPLY OFF they are dropped, as Redis drops them.
    fn deliver_messages(&mut self) {
        let mailbox = &self.client.pubsub.mailbox;
        if mailbox.is_empty() {
            return;
        }
        // Sent whatever CLIENT REPLY says, as Redis pushes pub/sub messages,
        // confirmations and invalidations (its CLIENT_PUSHING).
        for message in mailbox.take() {
            self.push_reply(&message);
        }
    }

    /// Queues the messages that may come before the running command's
    /// reply (not the invalidations its own writes caused).
    fn deliver_before_reply(&mut self) {
        let mailbox = &self.client.pubsub.mailbox;
        if mailbox.is_empty() {
            return;
        }
        for message in mailbox.take_before_reply() {
            self.push_reply(&message);
        }
    }

    /// Queues what waited for the command's reply, once it is queued: the
    /// invalidations its own writes caused (Redis 7.0 sends them after the
    /// reply, never inside an EXEC's).
    fn deliver_after_reply(&mut self) {
        let mailbox = &self.client.pubsub.mailbox;
        if mailbox.is_empty() {
            return;
        }
        for message in mailbox.take_after_reply() {
            self.push_reply(&message);
        }
    }

    /// Queues bytes already in wire format.
    pub fn push_raw(&mut self, bytes: &[u8]) {
        self.output.push_tail(bytes);
        self.publish_output_size();
    }

    fn publish_output_size(&self) {
        self.client
            .output_bytes
            .store(self.output.len as u64, Ordering::Relaxed);
        self.client.output_segments.store(
            (self.output.segments.len() + usize::from(!self.output.tail.is_empty())) as u64,
            Ordering::Relaxed,
        );
    }

    /// The `client-output-buffer-limit` class of this client: `pubsub`
    /// while it has subscriptions, as in Redis, else `normal`.
    fn limit(&self) -> OutputLimit {
        let limits = self.server.config().client_output_buffer_limit;
        if self.client.pubsub.subscribed() {
            limits.pubsub
        } else {
            limits.normal
        }
    }

    /// Unsent output above which the client's input is not read: the
    /// backpressure bound, raised to the configured limits so that they
    /// can be reached.
    fn output_bound(&self) -> u64 {
        let limit = self.limit();
        OUTPUT_BACKPRESSURE_BYTES
            .max(limit.hard_bytes)
            .max(limit.soft_bytes)
    }

    /// `client-output-buffer-limit`: true once the client must be closed.
    fn output_over_limit(&mut self) -> bool {
        let limit = self.limit();
        let queued = self.output.len as u64 + self.client.pubsub.mailbox.queued_bytes();
        if limit.hard_bytes > 0 && queued > limit.hard_bytes {
            self.log_output_limit();
            return true;
        }
        if limit.soft_bytes == 0 || queued <= limit.soft_bytes {
            self.over_soft_since = None;
            self.client.pubsub.mailbox.clear_soft_timer();
            return false;
        }
        let since = *self.over_soft_since.get_or_insert_with(Instant::now);
        if since.elapsed() > Duration::from_secs(limit.soft_seconds) {
            self.log_output_limit();
            return true;
        }
        false
    }

    fn log_output_limit(&self) {
        tracing::warn!(
            client = self.client.id,
            addr = %self.client.addr,
            output_bytes = self.output.len,
            "client closed for overcoming of output buffer limits"
        );
    }

    /// When the soft limit will have been exceeded long enough.
    fn soft_limit_deadline(&self) -> Option<Instant> {
        let since = self.over_soft_since?;
        Some(since + Duration::from_secs(self.limit().soft_seconds) + Duration::from_millis(1))
    }

    /// `client-query-buffer-limit`: the request in progress, less its
    /// complete arguments (Redis moves those out of its query buffer).
    fn query_buffer_over_limit(&self) -> bool {
        let pending = self
            .inbuf
            .len()
            .saturating_sub(self.decoder.complete_prefix_len());
        self.client
            .query_buffer
            .store(pending as u64, Ordering::Relaxed);
        if pending as u64 > self.server.config().client_query_buffer_limit {
            tracing::warn!(
                client = self.client.id,
                addr = %self.client.addr,
                "closing client that reached max query buffer length"
            );
            return true;
        }
        false
    }

    async fn run_one(&mut self, args: &[Bytes]) -> Flow {
        let (reply, flow, tickets) =
            run_one(&self.server, &self.client, &mut self.session, args).await;
        self.awaiting.extend(tickets);
        // Messages the command caused (a PUBLISH to the client's own
        // channel, its subscribe confirmations, invalidations of the
        // tracking table's evicted keys) come before its reply. A command's
        // own invalidations come after it, as in Redis 7.0.
        if !self.client.pubsub.mailbox.is_empty()
            && !crate::commands::registry()
                .lookup(args)
                .is_ok_and(|c| c.has(Flags::WRITE))
        {
            self.deliver_before_reply();
        }
        let flow = match reply {
            Some(Outgoing::Reply(reply)) => {
                self.push_reply(&reply);
                flow
            }
            Some(Outgoing::Stream(parts)) => self.pump(parts).await,
            Some(Outgoing::Block(call)) => self.block(args, call).await,
            None => flow,
        };
        self.deliver_after_reply();
        flow
    }
    /// Writes a streamed reply (see `stream_reply.rs`) as its parts come,
    /// after the replies queued before it. Never holds more than about
    /// [`STREAM_BUFFER_BYTES`] of it: past that it waits for the client to
    /// read. A reply cut short (its producer failed) closes the connection.
    async fn pump(&mut self, mut parts: mpsc::Receiver<Part>) -> Flow {
        let (mut expected, mut received) = (None::<usize>, 0usize);
        while let Some(part) = parts.recv().await {
            match &part {
                Part::Array(n) | Part::Set(n) => expected = Some(*n),
                Part::Map(n) => expected = Some(n.saturating_mul(2)),
                Part::Items(items) => received += items.len(),
                Part::Error(_) => {}
            }
            let before = self.output.tail.len();
            part.encode(&mut self.output.tail, self.session.protocol);
            self.output.len += self.output.tail.len() - before;
            self.publish_output_size();
            if let Part::Error(_) = part {
                return Flow::Continue;
            }
            if self.output.len >= FLUSH_BYTES && self.drain_to(STREAM_BUFFER_BYTES).await.is_err() {
                return Flow::Drop;
            }
        }
        match expected {
            Some(n) if n == received => Flow::Continue,
            _ => Flow::Drop,
        }
    }

    /// Releases the queued replies (once durable) and writes until at most
    /// `bound` bytes are left unsent.
    async fn drain_to(&mut self, bound: usize) -> Result<(), Ended> {
        if self.wait_durable().await.is_err() {
            return Err(Ended::Abort);
        }
        self.write_ready().map_err(|_| Ended::Abort)?;
        while self.output.len > bound {
            self.write_when_ready(true).await?;
            if self.output_over_limit() {
                return Err(Ended::Abort);
            }
        }
        Ok(())
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}
