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

use crate::{request, Args, Mode};
use hdrhistogram::Histogram;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn connect(o: &Args) -> std::io::Result<(TcpStream, BufReader<TcpStream>)> {
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

/// Producers LPUSH, consumers BRPOP, for `seconds`.
pub fn queue(o: &Args) -> Result<String, String> {
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
fn blocked_clients(o: &Args) -> Result<u64, String> {
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
pub fn idle_blocked(o: &Args) -> Result<String, String> {
    if o.blocked > o.connections {
        return Err("--blocked cannot exceed --connections".into());
    }
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
    let get = Args {
        mode: Mode::Get,
        prefix: "hot:".into(),
        keys: Some(o.keys()),
        first: 0,
        ..o.clone()
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
