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

use hdrhistogram::Histogram;
use rand::Rng;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

struct Options {
    host: String,
    port: u16,
    mode: String,
    prefix: String,
    keys: u64,
    first: u64,
    clients: usize,
    seconds: u64,
    value_size: usize,
}

fn parse_options() -> Result<Options, String> {
    let mut o = Options {
        host: "127.0.0.1".into(),
        port: 6379,
        mode: "get".into(),
        prefix: "key:".into(),
        keys: 100_000,
        first: 0,
        clients: 4,
        seconds: 10,
        value_size: 100,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args
            .get(i + 1)
            .cloned()
            .ok_or_else(|| format!("{} needs a value", args[i]))?;
        let num = |v: &str| {
            v.parse::<u64>()
                .map_err(|_| format!("{}: not a number: {v}", args[i]))
        };
        match args[i].as_str() {
            "--host" => o.host = value,
            "--port" => o.port = num(&value)? as u16,
            "--mode" => o.mode = value,
            "--prefix" => o.prefix = value,
            "--keys" => o.keys = num(&value)?.max(1),
            "--first" => o.first = num(&value)?,
            "--clients" => o.clients = num(&value)?.max(1) as usize,
            "--seconds" => o.seconds = num(&value)?,
            "--value-size" => o.value_size = num(&value)? as usize,
            other => return Err(format!("unknown option {other}")),
        }
        i += 2;
    }
    if !["get", "set", "load", "subscribe"].contains(&o.mode.as_str()) {
        return Err("--mode must be get, set, load or subscribe".into());
    }
    Ok(o)
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
fn subscriber(o: &Options, mut stream: TcpStream) -> std::io::Result<u64> {
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

fn client(o: &Options, index: usize) -> std::io::Result<Outcome> {
    let stream = TcpStream::connect((o.host.as_str(), o.port))?;
    stream.set_nodelay(true)?;
    if o.mode == "subscribe" {
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
    if o.mode == "load" {
        // Each client loads its share of the range, 64 SETs per write.
        let share = o.keys.div_ceil(o.clients as u64);
        let start = o.first + share * index as u64;
        let end = (start + share).min(o.first + o.keys);
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
        let k = o.first + rng.random_range(0..o.keys);
        let key = format!("{}{k}", o.prefix);
        let req = if o.mode == "get" {
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
    let options = match parse_options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("firn-load: {e}");
            std::process::exit(2);
        }
    };
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
    let ops = if options.mode == "load" {
        options.keys
    } else if options.mode == "subscribe" {
        bytes
    } else {
        total.len()
    };
    println!(
        "{{\"mode\":\"{}\",\"ops\":{},\"errors\":{},\"seconds\":{:.2},\"ops_per_sec\":{:.0},\"p50_us\":{},\"p99_us\":{},\"p999_us\":{},\"max_us\":{}}}",
        options.mode,
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
