//! Replies too big to hold whole: KEYS over millions of keys, HGETALL of a
//! million-field hash. A background thread reads them from one RocksDB
//! snapshot and hands them over in batches through a small bounded
//! channel; the connection writes each batch as it comes and waits for the
//! client to read before taking more. So memory stays bounded by the
//! channel plus the socket buffer, whatever the reply's size, and a slow
//! reader slows only its own producer.
//!
//! The reply's length is its first part (a snapshot knows it up front). An
//! error before that part becomes the reply; an error after it cannot be
//! expressed in RESP, so the connection is closed, as for a write error.

use bytes::BytesMut;
use firn_resp::{Protocol, Reply};
use std::sync::Arc;
use tokio::sync::mpsc;

use crate::errors::{CmdError, CmdResult};
use crate::server::Server;

/// Items handed over per batch.
const BATCH_ITEMS: usize = 512;
/// Batches in flight between the producer and the connection.
const CHANNEL_BATCHES: usize = 4;

/// One piece of a streamed reply.
pub enum Part {
    /// `*n`: an array of `n` items follows.
    Array(usize),
    /// `%n` in RESP3 (`*2n` in RESP2): `n` key-value pairs follow.
    Map(usize),
    /// `~n` in RESP3 (`*n` in RESP2): a set of `n` items follows.
    Set(usize),
    Items(Vec<Reply>),
    /// The job failed before its header: this is the reply.
    Error(Reply),
}

impl Part {
    /// Encodes this part in the client's protocol.
    pub fn encode(&self, out: &mut BytesMut, proto: Protocol) {
        match self {
            Part::Array(n) => out.extend_from_slice(format!("*{n}\r\n").as_bytes()),
            Part::Map(n) if proto == Protocol::Resp3 => {
                out.extend_from_slice(format!("%{n}\r\n").as_bytes())
            }
            Part::Map(n) => out.extend_from_slice(format!("*{}\r\n", n * 2).as_bytes()),
            Part::Set(n) if proto == Protocol::Resp3 => {
                out.extend_from_slice(format!("~{n}\r\n").as_bytes())
            }
            Part::Set(n) => out.extend_from_slice(format!("*{n}\r\n").as_bytes()),
            Part::Items(items) => {
                for item in items {
                    item.encode(out, proto);
                }
            }
            Part::Error(reply) => reply.encode(out, proto),
        }
    }
}

/// Where a job writes its reply. Every method returns false once the
/// client is gone: the job should stop.
pub struct Sink {
    tx: mpsc::Sender<Part>,
    batch: Vec<Reply>,
    started: bool,
}

impl Sink {
    fn send(&mut self, part: Part) -> bool {
        self.tx.blocking_send(part).is_ok()
    }

    /// Starts an array of `len` items.
    pub fn array(&mut self, len: usize) -> bool {
        self.started = true;
        self.send(Part::Array(len))
    }

    /// Starts a set of `len` items.
    pub fn set(&mut self, len: usize) -> bool {
        self.started = true;
        self.send(Part::Set(len))
    }

    /// Starts a map of `len` pairs (each pair is two items).
    pub fn map(&mut self, len: usize) -> bool {
        self.started = true;
        self.send(Part::Map(len))
    }

    /// Adds one item.
    pub fn item(&mut self, reply: Reply) -> bool {
        self.batch.push(reply);
        if self.batch.len() < BATCH_ITEMS {
            return true;
        }
        self.flush()
    }

    fn flush(&mut self) -> bool {
        if self.batch.is_empty() {
            return true;
        }
        let batch = std::mem::take(&mut self.batch);
        self.send(Part::Items(batch))
    }
}

/// What a streamed command runs off the network threads (a handler hands
/// it over with `Ctx::stream_reply`).
pub type StreamJob = Box<dyn FnOnce(&Arc<Server>, &mut Sink) -> CmdResult<()> + Send>;

/// Starts `job` on a thread of its own at lower CPU priority (like other
/// long commands) and returns the receiving end of its reply.
pub fn start(server: &Arc<Server>, job: StreamJob) -> mpsc::Receiver<Part> {
    server
        .stats
        .streamed_replies
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (tx, rx) = mpsc::channel(CHANNEL_BATCHES);
    let server = server.clone();
    let fallback = tx.clone();
    let spawned = std::thread::Builder::new()
        .name("firn-stream".into())
        .spawn(move || {
            crate::coldpool::lower_thread_priority();
            let mut sink = Sink {
                tx,
                batch: Vec::new(),
                started: false,
            };
            match job(&server, &mut sink) {
                Ok(()) => {
                    sink.flush();
                }
                Err(e) if !sink.started => {
                    let _ = sink.send(Part::Error(e.into_reply()));
                }
                // Dropping the sink mid-reply makes the connection close.
                Err(_) => {}
            }
        });
    if spawned.is_err() {
        let reply = CmdError::Static("ERR could not start a background thread").into_reply();
        let _ = fallback.try_send(Part::Error(reply));
    }
    rx
}
