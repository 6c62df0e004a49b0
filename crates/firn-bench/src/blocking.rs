//! The blocking-command workloads of `firn-load` (bench/blocking.sh):
//!
//! - `--mode queue`: `--producers` clients LPUSH items onto `--queues`
//!   lists while `--clients` consumers BRPOP them, for `--seconds`; reports
//!   items consumed per second and the BRPOP latency of served pops.
//! - `--mode idle-blocked`: opens `--connections` idle connections, of which
//!   `--blocked` wait in `BLPOP <own key> 0`; reads the server's RSS
//!   (`--pid`, from /proc) before and after, then measures hot-key GET
//!   latency of `--clients` other clients for `--seconds` (keys `hot:0..`
//!   `--keys`, loaded with `--mode load` beforehand).
//!
//! Both print one JSON line, like the other modes.

use hdrhistogram::Histogram;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

struct Options {
    host: String,
    port: u16,
    mode: String,
    producers: usize,
    clients: usize,
    queues: u64,
    seconds: u64,
    value_size: usize,
    connections: usize,
    blocked: usize,
    pid: u32,
    keys: u64,
}

/// Runs the mode if it is one of this module's; `None` otherwise.
pub fn dispatch(args: &[String]) -> Option<Result<String, String>> {
    let mode = args
        .iter()
        .position(|a| a == "--mode")
        .and_then(|i| args.get(i + 1))?;
    match mode.as_str() {
        "queue" => Some(parse(args).and_then(|o| queue(&o))),
        "idle-blocked" => Some(parse(args).and_then(|o| idle_blocked(&o))),
        _ => None,
    }
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        host: "127.0.0.1".into(),
        port: 6379,
        mode: String::new(),
        producers: 4,
        clients: 4,
        queues: 1,
        seconds: 10,
        value_size: 100,
        connections: 10_000,
        blocked: 1_000,
        pid: 0,
        keys: 1_000,
    };
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
            "--producers" => o.producers = num(&value)?.max(1) as usize,
            "--clients" => o.clients = num(&value)?.max(1) as usize,
            "--queues" => o.queues = num(&value)?.max(1),
            "--seconds" => o.seconds = num(&value)?,
            "--value-size" => o.value_size = num(&value)? as usize,
            "--connections" => o.connections = num(&value)? as usize,
            "--blocked" => o.blocked = num(&value)? as usize,
            "--pid" => o.pid = num(&value)? as u32,
            "--keys" => o.keys = num(&value)?.max(1),
            other => return Err(format!("unknown option {other} for --mode {}", o.mode)),
        }
        i += 2;
    }
    if o.blocked > o.connections {
        return Err("--blocked cannot exceed --connections".into());
    }
    Ok(o)
}

fn connect(o: &Options) -> std::io::Result<(TcpStream, BufReader<TcpStream>)> {
    let stream = TcpStream::connect((o.host.as_str(), o.port))?;
    stream.set_nodelay(true)?;
    let reader = BufReader::with_capacity(1 << 16, stream.try_clone()?);
    Ok((stream, reader))
}

fn histogram() -> Result<Histogram<u64>, String> {
    Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).map_err(|e| e.to_string())
}

/// Reads one whole reply of any shape; `Ok(false)` for a null or an error.
fn read_any(reader: &mut BufReader<TcpStream>) -> std::io::Result<bool> {
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line)?;
    if line.len() < 3 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "server closed the connection",
        ));
    }
    let number = || -> i64 {
        std::str::from_utf8(&line[1..line.len() - 2])
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(-1)
    };
    match line[0] {
        b'$' | b'=' => {
            let len = number();
            if len >= 0 {
                let mut body = vec![0u8; len as usize + 2];
                reader.read_exact(&mut body)?;
            }
            Ok(len >= 0)
        }
        b'*' | b'~' | b'>' => {
            let n = number();
            for _ in 0..n.max(0) {
                read_any(reader)?;
            }
            Ok(n >= 0)
        }
        b'%' => {
            for _ in 0..number().max(0) * 2 {
                read_any(reader)?;
            }
            Ok(true)
        }
        b'-' | b'_' => Ok(false),
        _ => Ok(true),
    }
}

fn request(args: &[&[u8]]) -> Vec<u8> {
    crate::request(args)
}

/// Producers LPUSH, consumers BRPOP, for `seconds`.
fn queue(o: &Options) -> Result<String, String> {
    let consumed = AtomicU64::new(0);
    let pushed = AtomicU64::new(0);
    let started = Instant::now();
    let end = started + Duration::from_secs(o.seconds);
    let item = vec![b'x'; o.value_size];
    let results: Vec<Result<Histogram<u64>, String>> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for p in 0..o.producers {
            let (item, pushed) = (&item, &pushed);
            handles.push(s.spawn(move || -> Result<Histogram<u64>, String> {
                let (mut writer, mut reader) = connect(o).map_err(|e| e.to_string())?;
                let mut n = p as u64;
                while Instant::now() < end {
                    let key = format!("queue:{}", n % o.queues);
                    n += 1;
                    writer
                        .write_all(&request(&[b"LPUSH", key.as_bytes(), item]))
                        .map_err(|e| e.to_string())?;
                    read_any(&mut reader).map_err(|e| e.to_string())?;
                    pushed.fetch_add(1, Ordering::Relaxed);
                }
                histogram()
            }));
        }
        for c in 0..o.clients {
            let consumed = &consumed;
            handles.push(s.spawn(move || -> Result<Histogram<u64>, String> {
                let mut latency = histogram()?;
                let (mut writer, mut reader) = connect(o).map_err(|e| e.to_string())?;
                let key = format!("queue:{}", c as u64 % o.queues);
                while Instant::now() < end {
                    let sent = Instant::now();
                    writer
                        .write_all(&request(&[b"BRPOP", key.as_bytes(), b"1"]))
                        .map_err(|e| e.to_string())?;
                    let served = read_any(&mut reader).map_err(|e| e.to_string())?;
                    if served && Instant::now() < end {
                        consumed.fetch_add(1, Ordering::Relaxed);
                        let _ = latency.record(sent.elapsed().as_micros().max(1) as u64);
                    }
                }
                Ok(latency)
            }));
        }
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("thread panicked".into())))
            .collect()
    });
    let mut latency = histogram()?;
    for r in results {
        let _ = latency.add(&r?);
    }
    let seconds = o.seconds.max(1) as f64;
    let consumed = consumed.load(Ordering::Relaxed);
    Ok(format!(
        "{{\"mode\":\"queue\",\"producers\":{},\"consumers\":{},\"queues\":{},\"pushed_per_sec\":{:.0},\"items_per_sec\":{:.0},\"brpop_p50_us\":{},\"brpop_p99_us\":{}}}",
        o.producers,
        o.clients,
        o.queues,
        pushed.load(Ordering::Relaxed) as f64 / seconds,
        consumed as f64 / seconds,
        latency.value_at_quantile(0.5),
        latency.value_at_quantile(0.99),
    ))
}

/// The server's resident set in KiB (/proc/<pid>/status VmRSS).
fn rss_kib(pid: u32) -> Result<u64, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("reading /proc/{pid}/status: {e}"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| "no VmRSS".into())
}

/// `blocked_clients` of INFO clients, over a fresh connection.
fn blocked_clients(o: &Options) -> Result<u64, String> {
    let (mut writer, mut reader) = connect(o).map_err(|e| e.to_string())?;
    writer
        .write_all(&request(&[b"INFO", b"clients"]))
        .map_err(|e| e.to_string())?;
    let mut header = Vec::new();
    reader
        .read_until(b'\n', &mut header)
        .map_err(|e| e.to_string())?;
    let len: usize =
        std::str::from_utf8(header.get(1..header.len().saturating_sub(2)).unwrap_or(b""))
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or("bad INFO reply")?;
    let mut body = vec![0u8; len + 2];
    reader.read_exact(&mut body).map_err(|e| e.to_string())?;
    String::from_utf8_lossy(&body)
        .lines()
        .find_map(|l| l.strip_prefix("blocked_clients:"))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| "no blocked_clients in INFO".into())
}

/// Idle and blocked connections: RSS per connection and the hot-key GET
/// latency of the other clients meanwhile.
fn idle_blocked(o: &Options) -> Result<String, String> {
    let before = rss_kib(o.pid)?;
    let mut idle = Vec::with_capacity(o.connections);
    for i in 0..o.connections {
        let mut stream = TcpStream::connect((o.host.as_str(), o.port))
            .map_err(|e| format!("connection {i}: {e}"))?;
        if i < o.blocked {
            let key = format!("blocked:{i}");
            stream
                .write_all(&request(&[b"BLPOP", key.as_bytes(), b"0"]))
                .map_err(|e| e.to_string())?;
        } else {
            // One round trip so that the server has set the client up.
            stream
                .write_all(&request(&[b"PING"]))
                .map_err(|e| e.to_string())?;
            let mut pong = [0u8; 7];
            stream.read_exact(&mut pong).map_err(|e| e.to_string())?;
        }
        idle.push(stream);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while blocked_clients(o)? < o.blocked as u64 {
        if Instant::now() > deadline {
            return Err("the blocked connections did not all block within 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // Let allocator caches settle before reading the RSS.
    std::thread::sleep(Duration::from_millis(500));
    let after = rss_kib(o.pid)?;
    let get = crate::Options {
        host: o.host.clone(),
        port: o.port,
        mode: "get".into(),
        prefix: "hot:".into(),
        keys: o.keys,
        first: 0,
        clients: o.clients,
        seconds: o.seconds,
        value_size: o.value_size,
    };
    let outcomes: Vec<std::io::Result<crate::Outcome>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..o.clients)
            .map(|i| {
                let get = &get;
                s.spawn(move || crate::client(get, i))
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
    let mut latency = histogram()?;
    for outcome in outcomes {
        let _ = latency.add(&outcome.map_err(|e| e.to_string())?.histogram);
    }
    let still_blocked = blocked_clients(o)?;
    drop(idle);
    let per_connection = (after.saturating_sub(before) * 1024) as f64 / o.connections.max(1) as f64;
    Ok(format!(
        "{{\"mode\":\"idle-blocked\",\"connections\":{},\"blocked\":{},\"still_blocked\":{},\"rss_before_kib\":{},\"rss_after_kib\":{},\"bytes_per_connection\":{:.0},\"get_ops_per_sec\":{:.0},\"get_p50_us\":{},\"get_p99_us\":{},\"get_max_us\":{}}}",
        o.connections,
        o.blocked,
        still_blocked,
        before,
        after,
        per_connection,
        latency.len() as f64 / o.seconds.max(1) as f64,
        latency.value_at_quantile(0.5),
        latency.value_at_quantile(0.99),
        latency.max(),
    ))
}
