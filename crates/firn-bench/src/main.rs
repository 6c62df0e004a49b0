//! `firn-load`: drives a Redis-protocol server with GET or SET traffic over
//! a key range and reports throughput and a latency histogram (hdrhistogram)
//! as one JSON line. redis-benchmark cannot express what Firn needs
//! measured: a small hot key set queried while another client reads a large
//! cold range from disk.
//!
//! ```text
//! firn-load --port 6379 --mode load --keys 1000000 --value-size 1000
//! firn-load --port 6379 --mode get  --prefix hot: --keys 1000 --clients 4 --seconds 10
//! firn-load --port 6379 --mode subscribe --prefix chan --clients 1000 --seconds 30
//! ```
//! `subscribe` opens `--clients` connections subscribed to the channel
//! named by `--prefix` that read and discard what comes for `--seconds`
//! (the subscribers of bench/pubsub.sh); `ops` is then the bytes read.
//! Each client is a thread with one blocking connection and one request in
//! flight (pipeline depth 1 measures latency honestly); `load` pipelines.
//! The blocking-command workloads (`--mode queue`, `--mode idle-blocked`)
//! live in `blocking.rs`, the stream workloads (`--mode xadd`, `--mode
//! stream-pipeline`) in `streams.rs`. `firn-load --help` lists every flag and default;
//! one set of flags serves every mode, and each mode reads the ones it
//! needs.

mod blocking;
mod streams;

use clap::{Parser, ValueEnum};
use hdrhistogram::Histogram;
use rand::Rng;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// firn-load: GET/SET/load/subscribe traffic, the blocking-command
/// workloads or the stream workloads, against a Redis-protocol server;
/// prints one JSON line.
#[derive(Parser, Clone, Debug)]
#[command(name = "firn-load", version)]
struct Args {
    /// Server address.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    #[arg(long, default_value_t = 6379)]
    port: u16,
    /// What to run.
    #[arg(long, value_enum, default_value_t = Mode::Get)]
    mode: Mode,
    /// Keys are `<prefix><n>`; in subscribe mode, the channel; in
    /// stream-pipeline, the stream.
    #[arg(long, default_value = "key:")]
    prefix: String,
    /// Keys in the range [default: 100000; 1000 hot keys in idle-blocked].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    keys: Option<u64>,
    /// First key number of the range.
    #[arg(long, default_value_t = 0)]
    first: u64,
    /// Client threads (consumers in queue mode, GET clients in
    /// idle-blocked, XREADGROUP consumers in stream-pipeline).
    #[arg(long, default_value_t = 4, value_parser = at_least_one)]
    clients: usize,
    /// How long to run (every mode but load).
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Bytes per value (per item in queue mode, of each entry's `f` field
    /// in the stream modes).
    #[arg(long, default_value_t = 100)]
    value_size: usize,
    /// LPUSH clients (queue), XADD clients (stream-pipeline).
    #[arg(long, default_value_t = 4, value_parser = at_least_one, help_heading = "queue, stream-pipeline")]
    producers: usize,
    /// Lists the producers and consumers share.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..), help_heading = "queue")]
    queues: u64,
    /// Idle connections to open.
    #[arg(long, default_value_t = 10_000, help_heading = "idle-blocked")]
    connections: usize,
    /// How many of them wait in BLPOP.
    #[arg(long, default_value_t = 1_000, help_heading = "idle-blocked")]
    blocked: usize,
    /// The server's process id, to read its RSS from /proc.
    #[arg(long, default_value_t = 0, help_heading = "idle-blocked")]
    pid: u32,
    /// Streams the XADD clients spread over, `<prefix>0`, `<prefix>1`...
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..), help_heading = "xadd")]
    streams: u64,
    /// Entries per XREADGROUP (its COUNT).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..), help_heading = "stream-pipeline")]
    count: u64,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Random GETs over the range, one in flight per client.
    Get,
    /// Random SETs over the range, one in flight per client.
    Set,
    /// SET every key of the range once, 64 per write.
    Load,
    /// Subscribers that read and discard (`ops` is then bytes read).
    Subscribe,
    /// Producers LPUSH while consumers BRPOP.
    Queue,
    /// Idle connections, some in BLPOP, while GET clients measure.
    IdleBlocked,
    /// XADD to `--streams` streams, one in flight per client.
    Xadd,
    /// Producers XADD, a consumer group XREADGROUPs and XACKs; checks
    /// that every entry was acknowledged.
    StreamPipeline,
}

impl Mode {
    fn name(self) -> String {
        self.to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }
}

impl Args {
    /// `--keys`, or the mode's default.
    fn keys(&self) -> u64 {
        self.keys.unwrap_or(match self.mode {
            Mode::IdleBlocked => 1_000,
            _ => 100_000,
        })
    }
}

fn at_least_one(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{value} is not a whole number of at least 1")),
    }
}

fn request(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Reads one reply; returns false on an error reply.
fn read_reply(reader: &mut BufReader<TcpStream>) -> std::io::Result<bool> {
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line)?;
    match line.first() {
        Some(b'$') => {
            let len: i64 = std::str::from_utf8(&line[1..line.len().saturating_sub(2)])
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(-1);
            if len >= 0 {
                let mut body = vec![0u8; len as usize + 2];
                reader.read_exact(&mut body)?;
            }
            Ok(true)
        }
        Some(b'-') => Ok(false),
        Some(_) => Ok(true),
        None => Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "server closed the connection",
        )),
    }
}

/// A deterministic, poorly compressible value for key `i`.
fn value_for(i: u64, size: usize) -> Vec<u8> {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..size)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b'!' + (x % 90) as u8
        })
        .collect()
}

struct Outcome {
    histogram: Histogram<u64>,
    errors: u64,
    /// Bytes read by a subscriber.
    bytes: u64,
}

/// A subscriber: reads and discards until the deadline or until the
/// server closes the connection.
fn subscriber(o: &Args, mut stream: TcpStream) -> std::io::Result<u64> {
    stream.write_all(&request(&[b"SUBSCRIBE", o.prefix.as_bytes()]))?;
    stream.set_read_timeout(Some(Duration::from_millis(200)))?;
    let deadline = Instant::now() + Duration::from_secs(o.seconds);
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0;
    while Instant::now() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => bytes += n as u64,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(bytes)
}

fn client(o: &Args, index: usize) -> std::io::Result<Outcome> {
    let stream = TcpStream::connect((o.host.as_str(), o.port))?;
    stream.set_nodelay(true)?;
    if o.mode == Mode::Subscribe {
        let histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let bytes = subscriber(o, stream)?;
        return Ok(Outcome {
            histogram,
            errors: 0,
            bytes,
        });
    }
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::with_capacity(1 << 16, stream);
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut errors = 0;
    let mut rng = rand::rng();
    if o.mode == Mode::Load {
        // Each client loads its share of the range, 64 SETs per write.
        let share = o.keys().div_ceil(o.clients as u64);
        let start = o.first + share * index as u64;
        let end = (start + share).min(o.first + o.keys());
        let mut i = start;
        while i < end {
            let batch_end = (i + 64).min(end);
            let mut buf = Vec::new();
            for k in i..batch_end {
                let key = format!("{}{k}", o.prefix);
                buf.extend(request(&[
                    b"SET",
                    key.as_bytes(),
                    &value_for(k, o.value_size),
                ]));
            }
            writer.write_all(&buf)?;
            for _ in i..batch_end {
                if !read_reply(&mut reader)? {
                    errors += 1;
                }
            }
            i = batch_end;
        }
        return Ok(Outcome {
            histogram,
            errors,
            bytes: 0,
        });
    }
    let deadline = Instant::now() + Duration::from_secs(o.seconds);
    while Instant::now() < deadline {
        let k = o.first + rng.random_range(0..o.keys());
        let key = format!("{}{k}", o.prefix);
        let req = if o.mode == Mode::Get {
            request(&[b"GET", key.as_bytes()])
        } else {
            request(&[b"SET", key.as_bytes(), &value_for(k, o.value_size)])
        };
        let started = Instant::now();
        writer.write_all(&req)?;
        if !read_reply(&mut reader)? {
            errors += 1;
        }
        let _ = histogram.record(started.elapsed().as_micros().max(1) as u64);
    }
    Ok(Outcome {
        histogram,
        errors,
        bytes: 0,
    })
}

fn main() {
    let options = Args::parse();
    let own_report = match options.mode {
        Mode::Queue => Some(blocking::queue(&options)),
        Mode::IdleBlocked => Some(blocking::idle_blocked(&options)),
        Mode::Xadd => Some(streams::xadd(&options)),
        Mode::StreamPipeline => Some(streams::pipeline(&options)),
        _ => None,
    };
    if let Some(result) = own_report {
        match result {
            Ok(json) => println!("{json}"),
            Err(e) => {
                eprintln!("firn-load: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    let started = Instant::now();
    let results: Vec<std::io::Result<Outcome>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..options.clients)
            .map(|i| {
                let o = &options;
                s.spawn(move || client(o, i))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("client thread panicked")))
            })
            .collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let mut total = match Histogram::<u64>::new_with_bounds(1, 60_000_000, 3) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("firn-load: {e}");
            std::process::exit(1);
        }
    };
    let (mut errors, mut bytes) = (0, 0);
    for r in results {
        match r {
            Ok(outcome) => {
                let _ = total.add(&outcome.histogram);
                errors += outcome.errors;
                bytes += outcome.bytes;
            }
            Err(e) => {
                eprintln!("firn-load: client failed: {e}");
                std::process::exit(1);
            }
        }
    }
    let ops = match options.mode {
        Mode::Load => options.keys(),
        Mode::Subscribe => bytes,
        _ => total.len(),
    };
    println!(
        "{{\"mode\":\"{}\",\"ops\":{},\"errors\":{},\"seconds\":{:.2},\"ops_per_sec\":{:.0},\"p50_us\":{},\"p99_us\":{},\"p999_us\":{},\"max_us\":{}}}",
        options.mode.name(),
        ops,
        errors,
        elapsed,
        ops as f64 / elapsed,
        total.value_at_quantile(0.50),
        total.value_at_quantile(0.99),
        total.value_at_quantile(0.999),
        total.max()
    );
}
