//! The stream workloads of `firn-load` (bench/streams.sh):
//!
//! - `--mode xadd`: `--clients` clients send `XADD <stream> * f <value>`
//!   (`--value-size` bytes) for `--seconds`, one request in flight each,
//!   in turn over the `--streams` streams `<prefix>0`, `<prefix>1`...;
//!   reports XADD throughput and latency.
//! - `--mode stream-pipeline`: deletes the stream `--prefix` and creates
//!   consumer group `g` on it (`XGROUP CREATE <stream> g $ MKSTREAM`), then
//!   `--producers` clients XADD to it while `--clients` consumers (`c0`,
//!   `c1`...) loop `XREADGROUP GROUP g c<i> COUNT <--count> BLOCK 100
//!   STREAMS <stream> >` and XACK what they got, one request in flight
//!   each. Every entry carries its send time in field `t` (nanoseconds
//!   since the run started, one clock for the whole process), so the end
//!   to end latency runs from the XADD's send to the XACK's reply. After
//!   `--seconds` the producers stop and the consumers drain until every
//!   entry is acknowledged, or until none has been for 5 s; then
//!   XPENDING's count (`pending_left`) and `acked` against `produced` say
//!   whether an entry was lost. Rates and latencies count the `--seconds`
//!   window only (`drain_ms` is how long the drain took).
//!
//! Both print one JSON line, like the other modes. Any error reply (an
//! unknown command, for one) ends the run with the server's message.

use crate::{request, value_for, Args};
use hdrhistogram::Histogram;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The consumer group of stream-pipeline.
const GROUP: &[u8] = b"g";
/// XREADGROUP's BLOCK, in milliseconds: how often an idle consumer looks
/// at the clock.
const BLOCK_MS: &[u8] = b"100";
/// The drain ends when no entry has been acknowledged for this long.
const DRAIN_IDLE: Duration = Duration::from_secs(5);

fn histogram() -> Result<Histogram<u64>, String> {
    Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).map_err(|e| e.to_string())
}

fn micros(d: Duration) -> u64 {
    d.as_micros().max(1) as u64
}

/// One RESP2 reply (this tool never sends HELLO 3). firn-resp decodes
/// requests only, and the other modes skip replies unread; these
/// workloads need the entries' ids and fields.
#[derive(Debug)]
enum Reply {
    /// `*-1`, `$-1` or RESP3's `_`: Redis answers a timed-out XREADGROUP
    /// with a null array, Kvrocks 2.10 with a null bulk string.
    Null,
    Integer(i64),
    /// A simple or bulk string.
    Text(Vec<u8>),
    Array(Vec<Reply>),
    Error(String),
}

impl Reply {
    fn read(reader: &mut impl BufRead) -> std::io::Result<Reply> {
        let mut line = Vec::new();
        reader.read_until(b'\n', &mut line)?;
        if !line.ends_with(b"\r\n") {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "server closed the connection",
            ));
        }
        let body = &line[1..line.len() - 2];
        let number = || {
            std::str::from_utf8(body)
                .ok()
                .and_then(|s| s.parse::<i64>().ok())
                .ok_or_else(|| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("bad length in {:?}", String::from_utf8_lossy(&line)),
                    )
                })
        };
        Ok(match line[0] {
            b'+' => Reply::Text(body.to_vec()),
            b'-' => Reply::Error(String::from_utf8_lossy(body).into_owned()),
            b':' => Reply::Integer(number()?),
            b'_' => Reply::Null,
            b'$' => match usize::try_from(number()?) {
                Ok(len) => {
                    let mut text = vec![0u8; len + 2];
                    reader.read_exact(&mut text)?;
                    text.truncate(len);
                    Reply::Text(text)
                }
                Err(_) => Reply::Null,
            },
            b'*' => match usize::try_from(number()?) {
                Ok(n) => Reply::Array(
                    (0..n)
                        .map(|_| Reply::read(reader))
                        .collect::<std::io::Result<_>>()?,
                ),
                Err(_) => Reply::Null,
            },
            _ => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("unexpected reply {:?}", String::from_utf8_lossy(&line)),
                ))
            }
        })
    }
}

/// One connection, one request in flight.
struct Conn {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Conn {
    fn open(o: &Args) -> Result<Conn, String> {
        let connect = || -> std::io::Result<Conn> {
            let writer = TcpStream::connect((o.host.as_str(), o.port))?;
            writer.set_nodelay(true)?;
            let reader = BufReader::with_capacity(1 << 16, writer.try_clone()?);
            Ok(Conn { writer, reader })
        };
        connect().map_err(|e| format!("connecting to {}:{}: {e}", o.host, o.port))
    }

    /// Sends one command and reads its reply; an error reply is an `Err`
    /// that names the command.
    fn call(&mut self, args: &[&[u8]]) -> Result<Reply, String> {
        let command = String::from_utf8_lossy(args[0]).into_owned();
        let io = |e: std::io::Error| format!("{command}: {e}");
        self.writer.write_all(&request(args)).map_err(io)?;
        match Reply::read(&mut self.reader).map_err(io)? {
            Reply::Error(message) => Err(format!("{command}: {message}")),
            reply => Ok(reply),
        }
    }

    /// After a null reply to a blocking XREADGROUP: reads, and counts,
    /// any reply the server sent beyond the one per request. Kvrocks 2.10
    /// answers an XREADGROUP BLOCK that was woken but found no entry (a
    /// competing consumer took them) with `*-1` and then `*0`
    /// (apache/kvrocks#3338, fixed after 2.10.1). Both are usually in the
    /// buffer already; otherwise a PING marks where this connection's
    /// replies end (one round trip per timeout on a server without the bug).
    fn skip_extra_replies(&mut self) -> Result<u64, String> {
        let io = |e: std::io::Error| format!("reading extra replies: {e}");
        if !self.reader.buffer().is_empty() {
            Reply::read(&mut self.reader).map_err(io)?;
            return Ok(1);
        }
        self.writer.write_all(&request(&[b"PING"])).map_err(io)?;
        let mut extra = 0;
        loop {
            match Reply::read(&mut self.reader).map_err(io)? {
                Reply::Text(pong) if pong == b"PONG" => return Ok(extra),
                _ => extra += 1,
            }
        }
    }
}

/// The body of one client thread.
type Thread<'a, T> = Box<dyn FnOnce() -> Result<T, String> + Send + 'a>;

/// Runs `threads` on scoped threads and returns their results, or the
/// first error.
fn run_all<T: Send>(threads: Vec<Thread<'_, T>>) -> Result<Vec<T>, String> {
    std::thread::scope(|s| {
        let handles: Vec<_> = threads.into_iter().map(|t| s.spawn(t)).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("thread panicked".into())))
            .collect()
    })
}

/// `--mode xadd`.
pub fn xadd(o: &Args) -> Result<String, String> {
    let keys: Vec<String> = (0..o.streams).map(|n| format!("{}{n}", o.prefix)).collect();
    let value = value_for(0, o.value_size);
    let started = Instant::now();
    let end = started + Duration::from_secs(o.seconds);
    let mut clients: Vec<Thread<Histogram<u64>>> = Vec::new();
    for c in 0..o.clients {
        let (keys, value) = (&keys, &value);
        clients.push(Box::new(move || {
            let mut latency = histogram()?;
            let mut conn = Conn::open(o)?;
            let mut n = c;
            while Instant::now() < end {
                let key = keys[n % keys.len()].as_bytes();
                n += 1;
                let sent = Instant::now();
                conn.call(&[b"XADD", key, b"*", b"f", value])?;
                let _ = latency.record(micros(sent.elapsed()));
            }
            Ok(latency)
        }));
    }
    let mut latency = histogram()?;
    for h in run_all(clients)? {
        let _ = latency.add(&h);
    }
    let elapsed = started.elapsed().as_secs_f64();
    Ok(format!(
        "{{\"mode\":\"xadd\",\"clients\":{},\"streams\":{},\"value_size\":{},\"ops\":{},\"seconds\":{:.2},\"ops_per_sec\":{:.0},\"p50_us\":{},\"p99_us\":{},\"p999_us\":{},\"max_us\":{}}}",
        o.clients,
        o.streams,
        o.value_size,
        latency.len(),
        elapsed,
        latency.len() as f64 / elapsed,
        latency.value_at_quantile(0.5),
        latency.value_at_quantile(0.99),
        latency.value_at_quantile(0.999),
        latency.max(),
    ))
}

/// An entry a consumer was given: its id and the send time in its `t`
/// field, if it has one.
struct Delivered {
    id: Vec<u8>,
    sent_ns: Option<u64>,
}

/// The entries of an XREADGROUP reply: `[[stream, [[id, [field, value,
/// ...]], ...]], ...]`, or a null on timeout.
fn delivered(reply: Reply) -> Result<Vec<Delivered>, String> {
    let bad = || format!("XREADGROUP: unexpected reply shape {reply:?}");
    let streams = match &reply {
        Reply::Null => return Ok(Vec::new()),
        Reply::Array(streams) => streams,
        _ => return Err(bad()),
    };
    let mut out = Vec::new();
    for stream in streams {
        let Reply::Array(pair) = stream else {
            return Err(bad());
        };
        let [_, Reply::Array(entries)] = pair.as_slice() else {
            return Err(bad());
        };
        for entry in entries {
            let Reply::Array(entry) = entry else {
                return Err(bad());
            };
            let (Some(Reply::Text(id)), fields) = (entry.first(), entry.get(1)) else {
                return Err(bad());
            };
            let sent_ns = match fields {
                Some(Reply::Array(fields)) => fields.chunks(2).find_map(|pair| match pair {
                    [Reply::Text(name), Reply::Text(value)] if name == b"t" => {
                        std::str::from_utf8(value).ok()?.parse().ok()
                    }
                    _ => None,
                }),
                _ => None,
            };
            out.push(Delivered {
                id: id.clone(),
                sent_ns,
            });
        }
    }
    Ok(out)
}

/// What the producers and consumers share.
struct Shared {
    started: Instant,
    end: Instant,
    producers_running: AtomicUsize,
    produced: AtomicU64,
    delivered: AtomicU64,
    acked: AtomicU64,
    acked_in_window: AtomicU64,
    /// Replies beyond one per request (see `Conn::skip_extra_replies`).
    extra_replies: AtomicU64,
    /// When the last XACK acknowledged something, in ns since `started`.
    last_ack_ns: AtomicU64,
    /// Set by a thread that failed, so that the others stop too.
    failed: AtomicBool,
}

impl Shared {
    fn since_start_ns(&self, at: Instant) -> u64 {
        at.duration_since(self.started).as_nanos() as u64
    }

    /// Whether a consumer should stop: never within the window; after it,
    /// once the producers are done and all they added is acknowledged, or
    /// when nothing was acknowledged for `DRAIN_IDLE`.
    fn drained(&self, now: Instant) -> bool {
        if self.failed.load(Ordering::Relaxed) {
            return true;
        }
        if now < self.end {
            return false;
        }
        let producers_done = self.producers_running.load(Ordering::Acquire) == 0;
        if producers_done
            && self.acked.load(Ordering::Acquire) >= self.produced.load(Ordering::Acquire)
        {
            return true;
        }
        let idle_ns = self
            .since_start_ns(now)
            .saturating_sub(self.last_ack_ns.load(Ordering::Relaxed));
        idle_ns > DRAIN_IDLE.as_nanos() as u64
    }
}

/// Latencies one thread measured within the window.
struct Latencies {
    xadd: Histogram<u64>,
    xreadgroup: Histogram<u64>,
    end_to_end: Histogram<u64>,
}

impl Latencies {
    fn new() -> Result<Latencies, String> {
        Ok(Latencies {
            xadd: histogram()?,
            xreadgroup: histogram()?,
            end_to_end: histogram()?,
        })
    }
}

fn producer(o: &Args, shared: &Shared, value: &[u8]) -> Result<Latencies, String> {
    let mut latencies = Latencies::new()?;
    let mut conn = Conn::open(o)?;
    let key = o.prefix.as_bytes();
    while !shared.failed.load(Ordering::Relaxed) {
        let sent = Instant::now();
        if sent >= shared.end {
            break;
        }
        let sent_ns = shared.since_start_ns(sent).to_string();
        conn.call(&[b"XADD", key, b"*", b"t", sent_ns.as_bytes(), b"f", value])?;
        shared.produced.fetch_add(1, Ordering::Release);
        let _ = latencies.xadd.record(micros(sent.elapsed()));
    }
    Ok(latencies)
}

fn consumer(o: &Args, shared: &Shared, index: usize) -> Result<Latencies, String> {
    let mut latencies = Latencies::new()?;
    let mut conn = Conn::open(o)?;
    let key = o.prefix.as_bytes();
    let name = format!("c{index}");
    let count = o.count.to_string();
    while !shared.drained(Instant::now()) {
        let sent = Instant::now();
        let reply = conn.call(&[
            b"XREADGROUP",
            b"GROUP",
            GROUP,
            name.as_bytes(),
            b"COUNT",
            count.as_bytes(),
            b"BLOCK",
            BLOCK_MS,
            b"STREAMS",
            key,
            b">",
        ])?;
        if matches!(reply, Reply::Null) {
            let extra = conn.skip_extra_replies()?;
            shared.extra_replies.fetch_add(extra, Ordering::Relaxed);
            continue;
        }
        let entries = delivered(reply)?;
        if entries.is_empty() {
            continue;
        }
        if Instant::now() < shared.end {
            let _ = latencies.xreadgroup.record(micros(sent.elapsed()));
        }
        shared
            .delivered
            .fetch_add(entries.len() as u64, Ordering::Relaxed);
        let mut ack: Vec<&[u8]> = vec![b"XACK", key, GROUP];
        ack.extend(entries.iter().map(|e| e.id.as_slice()));
        let acked = match conn.call(&ack)? {
            Reply::Integer(n) => n.max(0) as u64,
            other => return Err(format!("XACK: unexpected reply {other:?}")),
        };
        let acked_at = Instant::now();
        let acked_ns = shared.since_start_ns(acked_at);
        shared.last_ack_ns.fetch_max(acked_ns, Ordering::Relaxed);
        shared.acked.fetch_add(acked, Ordering::Release);
        if acked_at < shared.end {
            shared.acked_in_window.fetch_add(acked, Ordering::Relaxed);
            for sent_ns in entries.iter().filter_map(|e| e.sent_ns) {
                let _ = latencies
                    .end_to_end
                    .record((acked_ns.saturating_sub(sent_ns) / 1_000).max(1));
            }
        }
    }
    Ok(latencies)
}

/// `--mode stream-pipeline`.
pub fn pipeline(o: &Args) -> Result<String, String> {
    let key = o.prefix.as_bytes();
    let mut admin = Conn::open(o)?;
    admin.call(&[b"DEL", key])?;
    match admin.call(&[b"XGROUP", b"CREATE", key, GROUP, b"$", b"MKSTREAM"]) {
        Err(e) if !e.contains("BUSYGROUP") => return Err(e),
        _ => {}
    }
    let value = value_for(0, o.value_size);
    let started = Instant::now();
    let shared = Shared {
        started,
        end: started + Duration::from_secs(o.seconds),
        producers_running: AtomicUsize::new(o.producers),
        produced: AtomicU64::new(0),
        delivered: AtomicU64::new(0),
        acked: AtomicU64::new(0),
        acked_in_window: AtomicU64::new(0),
        extra_replies: AtomicU64::new(0),
        last_ack_ns: AtomicU64::new(0),
        failed: AtomicBool::new(false),
    };
    // Each thread flags a failure to the others, and a producer counts
    // itself out when it stops, however it stops.
    let mut threads: Vec<Thread<Latencies>> = Vec::new();
    for _ in 0..o.producers {
        let (shared, value) = (&shared, &value);
        threads.push(Box::new(move || {
            let result = producer(o, shared, value);
            if result.is_err() {
                shared.failed.store(true, Ordering::Relaxed);
            }
            shared.producers_running.fetch_sub(1, Ordering::AcqRel);
            result
        }));
    }
    for index in 0..o.clients {
        let shared = &shared;
        threads.push(Box::new(move || {
            let result = consumer(o, shared, index);
            if result.is_err() {
                shared.failed.store(true, Ordering::Relaxed);
            }
            result
        }));
    }
    let mut total = Latencies::new()?;
    for l in run_all(threads)? {
        let _ = total.xadd.add(&l.xadd);
        let _ = total.xreadgroup.add(&l.xreadgroup);
        let _ = total.end_to_end.add(&l.end_to_end);
    }
    let drain_ms = shared.end.elapsed().as_millis();
    let pending_left = match admin.call(&[b"XPENDING", key, GROUP])? {
        Reply::Array(summary) => match summary.first() {
            Some(Reply::Integer(n)) => *n,
            _ => return Err(format!("XPENDING: unexpected reply {summary:?}")),
        },
        other => return Err(format!("XPENDING: unexpected reply {other:?}")),
    };
    let stream_length = match admin.call(&[b"XLEN", key])? {
        Reply::Integer(n) => n,
        other => return Err(format!("XLEN: unexpected reply {other:?}")),
    };
    let seconds = o.seconds.max(1) as f64;
    let produced = shared.produced.load(Ordering::Relaxed);
    Ok(format!(
        "{{\"mode\":\"stream-pipeline\",\"producers\":{},\"consumers\":{},\"count\":{},\"value_size\":{},\"seconds\":{},\"produced\":{},\"delivered\":{},\"acked\":{},\"pending_left\":{},\"stream_length\":{},\"drain_ms\":{},\"extra_replies\":{},\"produced_per_sec\":{:.0},\"items_per_sec\":{:.0},\"e2e_p50_us\":{},\"e2e_p99_us\":{},\"e2e_max_us\":{},\"xreadgroup_p50_us\":{},\"xreadgroup_p99_us\":{},\"xadd_p50_us\":{},\"xadd_p99_us\":{}}}",
        o.producers,
        o.clients,
        o.count,
        o.value_size,
        o.seconds,
        produced,
        shared.delivered.load(Ordering::Relaxed),
        shared.acked.load(Ordering::Relaxed),
        pending_left,
        stream_length,
        drain_ms,
        shared.extra_replies.load(Ordering::Relaxed),
        total.xadd.len() as f64 / seconds,
        shared.acked_in_window.load(Ordering::Relaxed) as f64 / seconds,
        total.end_to_end.value_at_quantile(0.5),
        total.end_to_end.value_at_quantile(0.99),
        total.end_to_end.max(),
        total.xreadgroup.value_at_quantile(0.5),
        total.xreadgroup.value_at_quantile(0.99),
        total.xadd.value_at_quantile(0.5),
        total.xadd.value_at_quantile(0.99),
    ))
}
