//! REPLICAOF (SLAVEOF), ROLE, PSYNC (SYNC), REPLCONF, WAIT and FAILOVER.

use bytes::Bytes;
use firn_resp::Reply;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::link;
use super::state::{now_ms, Psync, STATE_ONLINE};
use crate::args::{is, parse_i64};
use crate::commands::{def, Ctx, Def, Deferred, Traits};
use crate::errors::{CmdError, CmdResult, SYNTAX};
use crate::server::{ClientInfo, Server};

pub static COMMANDS: &[Def] = &[
    def("replicaof", replicaof),
    def("slaveof", replicaof),
    def("role", role),
    def("psync", psync),
    def("sync", sync),
    def("replconf", replconf),
    def("wait", wait),
    def("failover", failover).with(Traits::UNQUEUED),
];

fn ok() -> Reply {
    Reply::Simple(Bytes::from_static(b"OK"))
}

/// `REPLICAOF host port` / `REPLICAOF NO ONE`.
fn replicaof(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() != 3 {
        return Err(crate::errors::wrong_arity(if is(&args[0], "slaveof") {
            "slaveof"
        } else {
            "replicaof"
        }));
    }
    let server = ctx.server.clone();
    if is(&args[1], "no") && is(&args[2], "one") {
        ctx.deferred = Some(Deferred::Async(Box::pin(async move {
            if link::stop(&server).await {
                tracing::info!("MASTER MODE enabled (user request)");
            }
            ok()
        })));
        return Ok(ok());
    }
    let port = parse_i64(&args[2])
        .filter(|p| (0..=65535).contains(p))
        .ok_or(CmdError::Static("ERR Invalid master port"))? as u16;
    let host = String::from_utf8_lossy(&args[1]).into_owned();
    if *ctx.server.replication.failover_state.lock() != "no-failover" {
        return Err(CmdError::Static(
            "ERR REPLICAOF not allowed while failing over.",
        ));
    }
    let same = ctx
        .server
        .replication
        .following
        .lock()
        .as_ref()
        .is_some_and(|f| f.host.eq_ignore_ascii_case(&host) && f.port == port);
    if same {
        return Ok(Reply::Simple(Bytes::from_static(
            b"OK Already connected to specified master",
        )));
    }
    ctx.deferred = Some(Deferred::Async(Box::pin(async move {
        tracing::info!(primary = %format!("{host}:{port}"), "REPLICAOF (user request)");
        link::follow(&server, host, port).await;
        ok()
    })));
    Ok(ok())
}

/// ROLE: `master offset [[ip port ack]...]` or `slave host port state
/// offset`.
fn role(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let repl = &ctx.server.replication;
    let bulk = |s: String| Reply::Bulk(Bytes::from(s));
    if let Some(f) = repl.following.lock().as_ref() {
        return Ok(Reply::Array(vec![
            bulk("slave".into()),
            bulk(f.host.clone()),
            Reply::Integer(f.port as i64),
            bulk(f.state.role_word().into()),
            Reply::Integer(repl.backlog.end() as i64),
        ]));
    }
    let replicas = repl
        .replicas
        .lock()
        .iter()
        .filter(|r| r.state.load(Ordering::Acquire) == STATE_ONLINE)
        .map(|r| {
            Reply::Array(vec![
                bulk(r.ip.clone()),
                bulk(r.port.load(Ordering::Relaxed).to_string()),
                bulk(r.ack.load(Ordering::Relaxed).to_string()),
            ])
        })
        .collect();
    Ok(Reply::Array(vec![
        bulk("master".into()),
        Reply::Integer(repl.backlog.end() as i64),
        Reply::Array(replicas),
    ]))
}

/// `PSYNC replid offset`: the connection becomes a replica's feed.
fn psync(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() < 3 {
        return Err(crate::errors::wrong_arity("psync"));
    }
    let offset = parse_i64(&args[2]).ok_or(CmdError::Static(
        "ERR value is not an integer or out of range",
    ))?;
    start_feed(ctx, String::from_utf8_lossy(&args[1]).into_owned(), offset)
}

/// SYNC: a full sync, as PSYNC ? -1.
fn sync(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    start_feed(ctx, "?".into(), -1)
}

fn start_feed(ctx: &mut Ctx<'_>, replid: String, offset: i64) -> CmdResult {
    if ctx.client.role_flag.load(Ordering::Acquire) == crate::server::ROLE_REPLICA {
        return Ok(Reply::Null);
    }
    let repl = &ctx.server.replication;
    if repl.is_replica()
        && repl
            .following
            .lock()
            .as_ref()
            .is_none_or(|f| f.state != super::state::LinkState::Connected)
    {
        return Err(CmdError::Static(
            "NOMASTERLINK Can't SYNC while not connected with my master",
        ));
    }
    ctx.deferred = Some(Deferred::Replica(Psync { replid, offset }));
    Ok(Reply::Null)
}

/// `REPLCONF <option> <value> ...` from a replica before PSYNC.
fn replconf(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len().is_multiple_of(2) {
        return Err(CmdError::Static(SYNTAX));
    }
    let mut hello = ctx.client.repl_hello.lock().clone();
    for pair in args[1..].chunks(2) {
        let (name, value) = (&pair[0], &pair[1]);
        if is(name, "listening-port") {
            hello.port =
                parse_i64(value)
                    .filter(|p| (0..=65535).contains(p))
                    .ok_or(CmdError::Static(
                        "ERR value is not an integer or out of range",
                    ))? as u64;
        } else if is(name, "ip-address") {
            hello.ip = Some(String::from_utf8_lossy(value).into_owned());
        } else if is(name, "capa") {
            if is(value, "firn-checkpoint") {
                hello.firn_checkpoint = true;
            }
        } else if is(name, "ack") || is(name, "getack") {
            // Only meaningful on a replica's feed (primary.rs): no reply.
            ctx.deferred = Some(Deferred::Silent);
            return Ok(Reply::Null);
        } else if !is(name, "rdb-only") && !is(name, "rdb-filter-only") {
            return Err(CmdError::Owned(format!(
                "ERR Unrecognized REPLCONF option: {}",
                String::from_utf8_lossy(name)
            )));
        }
    }
    *ctx.client.repl_hello.lock() = hello;
    Ok(ok())
}

/// `WAIT numreplicas timeout`: the number of replicas that acknowledged
/// this client's writes, once that many did or the timeout passed.
fn wait(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() != 3 {
        return Err(crate::errors::wrong_arity("wait"));
    }
    if ctx.server.replication.is_replica() {
        return Err(CmdError::Static(
            "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.",
        ));
    }
    let wanted = crate::args::int_arg(&args[1])?;
    let timeout = crate::args::int_arg(&args[2])
        .map_err(|_| CmdError::Static("ERR timeout is not an integer or out of range"))?;
    if timeout < 0 {
        return Err(CmdError::Static("ERR timeout is negative"));
    }
    let server = ctx.server.clone();
    let client = ctx.client.clone();
    if ctx.in_unit {
        // Inside MULTI or a script WAIT does not block, as in Redis.
        let target = server.replication.backlog.end();
        return Ok(Reply::Integer(
            server.replication.acked_at_least(target) as i64
        ));
    }
    ctx.deferred = Some(Deferred::Async(Box::pin(async move {
        let count = wait_for_acks(&server, &client, wanted.max(0) as usize, timeout as u64).await;
        Reply::Integer(count as i64)
    })));
    Ok(Reply::Null)
}

async fn wait_for_acks(
    server: &Arc<Server>,
    client: &Arc<ClientInfo>,
    wanted: usize,
    timeout_ms: u64,
) -> usize {
    // The stream has this client's last write once its batch completed.
    let last = client.last_write.lock().clone();
    if let Some(ticket) = last {
        let _ = ticket.wait().await;
    }
    let repl = &server.replication;
    let target = repl.backlog.end();
    let deadline = (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms));
    loop {
        let acked = repl.acked.notified();
        tokio::pin!(acked);
        acked.as_mut().enable();
        let count = repl.acked_at_least(target);
        if count >= wanted || client.killed.load(Ordering::Acquire) {
            return count;
        }
        let left = match deadline {
            Some(at) => match at.checked_duration_since(Instant::now()) {
                Some(left) => left,
                None => return count,
            },
            None => Duration::from_secs(1),
        };
        tokio::select! {
            _ = &mut acked => {}
            _ = tokio::time::sleep(left.min(Duration::from_secs(1))) => {}
            _ = client.kill.notified() => return repl.acked_at_least(target),
        }
    }
}

/// `FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]`: hands the
/// primary role to a replica once it has every write. Writes pause while
/// it catches up; the chosen replica is told `REPLICAOF NO ONE`, and this
/// server follows it.
fn failover(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut target: Option<(String, u16)> = None;
    let mut force = false;
    let mut abort = false;
    let mut timeout_ms: Option<u64> = None;
    let mut i = 1;
    while i < args.len() {
        if is(&args[i], "to") && i + 2 < args.len() && target.is_none() {
            let port = parse_i64(&args[i + 2])
                .filter(|p| (0..=65535).contains(p))
                .ok_or(CmdError::Static(
                    "ERR value is not an integer or out of range",
                ))?;
            target = Some((
                String::from_utf8_lossy(&args[i + 1]).into_owned(),
                port as u16,
            ));
            i += 3;
        } else if is(&args[i], "force") && !force {
            force = true;
            i += 1;
        } else if is(&args[i], "abort") && !abort {
            abort = true;
            i += 1;
        } else if is(&args[i], "timeout") && i + 1 < args.len() && timeout_ms.is_none() {
            let t = parse_i64(&args[i + 1]).ok_or(CmdError::Static(
                "ERR value is not an integer or out of range",
            ))?;
            if t <= 0 {
                return Err(CmdError::Static(
                    "ERR FAILOVER timeout must be greater than 0",
                ));
            }
            timeout_ms = Some(t as u64);
            i += 2;
        } else {
            return Err(CmdError::Static(SYNTAX));
        }
    }
    let repl = &ctx.server.replication;
    if abort {
        if force || target.is_some() || timeout_ms.is_some() {
            return Err(CmdError::Static(SYNTAX));
        }
        let mut state = repl.failover_state.lock();
        if *state == "no-failover" {
            return Err(CmdError::Static("ERR No failover in progress."));
        }
        *state = "aborting";
        return Ok(ok());
    }
    if repl.is_replica() {
        return Err(CmdError::Static(
            "ERR FAILOVER is not valid when server is a replica.",
        ));
    }
    let online: Vec<(String, u16, u64)> = repl
        .replicas
        .lock()
        .iter()
        .filter(|r| r.state.load(Ordering::Acquire) == STATE_ONLINE)
        .map(|r| {
            (
                r.ip.clone(),
                r.port.load(Ordering::Relaxed) as u16,
                r.client_id,
            )
        })
        .collect();
    // Redis's order of checks: replicas first, then what FORCE needs.
    if online.is_empty() {
        return Err(CmdError::Static(
            "ERR FAILOVER requires connected replicas.",
        ));
    }
    if force && (timeout_ms.is_none() || target.is_none()) {
        return Err(CmdError::Static(
            "ERR FAILOVER with force option requires both a timeout and target HOST and IP.",
        ));
    }
    if let Some((host, port)) = &target {
        if !online.iter().any(|(h, p, _)| h == host && p == port) {
            return Err(CmdError::Static(
                "ERR FAILOVER target HOST and PORT is not a replica.",
            ));
        }
    }
    {
        let mut state = repl.failover_state.lock();
        if *state != "no-failover" {
            return Err(CmdError::Static("ERR FAILOVER already in progress."));
        }
        *state = "waiting-for-sync";
    }
    let server = ctx.server.clone();
    tokio::spawn(async move {
        let outcome = run_failover(&server, target, force, timeout_ms).await;
        if let Err(why) = &outcome {
            tracing::warn!(reason = %why, "FAILOVER aborted");
        }
        server.pause.unpause();
        *server.replication.failover_state.lock() = "no-failover";
    });
    Ok(ok())
}

async fn run_failover(
    server: &Arc<Server>,
    target: Option<(String, u16)>,
    force: bool,
    timeout_ms: Option<u64>,
) -> Result<(), String> {
    let repl = &server.replication;
    // Writes pause (as CLIENT PAUSE WRITE) until the end.
    let until = now_ms() + timeout_ms.unwrap_or(u64::MAX / 4).min(u64::MAX / 4);
    server.pause.pause(until, false, now_ms());
    let deadline = timeout_ms.map(|t| Instant::now() + Duration::from_millis(t));
    let chosen = loop {
        if *repl.failover_state.lock() == "aborting" {
            return Err("aborted".into());
        }
        let end = repl.backlog.end();
        let caught_up = repl
            .replicas
            .lock()
            .iter()
            .filter(|r| r.state.load(Ordering::Acquire) == STATE_ONLINE)
            .filter(|r| {
                target
                    .as_ref()
                    .is_none_or(|(h, p)| *h == r.ip && *p as u64 == r.port.load(Ordering::Relaxed))
            })
            .find(|r| r.ack.load(Ordering::Acquire) >= end)
            .map(|r| (r.ip.clone(), r.port.load(Ordering::Relaxed) as u16));
        if let Some(found) = caught_up {
            break found;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            match (&target, force) {
                (Some(t), true) => break t.clone(),
                _ => return Err("no replica caught up before the timeout".into()),
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    *repl.failover_state.lock() = "failover-in-progress";
    promote(server, &chosen.0, chosen.1).await?;
    link::follow(server, chosen.0, chosen.1).await;
    Ok(())
}

/// Tells the replica at `host:port` to become a primary.
async fn promote(server: &Server, host: &str, port: u16) -> Result<(), String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (auth, user) = {
        let c = server.config();
        (c.setting("masterauth"), c.setting("masteruser"))
    };
    let mut stream = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::net::TcpStream::connect((host, port)),
    )
    .await
    .map_err(|_| "connect timed out".to_string())?
    .map_err(|e| format!("connect: {e}"))?;
    let mut out = String::new();
    let mut push = |args: &[&str]| {
        out.push_str(&format!("*{}\r\n", args.len()));
        for a in args {
            out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
    };
    if !auth.is_empty() {
        if user.is_empty() {
            push(&["AUTH", &auth]);
        } else {
            push(&["AUTH", &user, &auth]);
        }
    }
    push(&["REPLICAOF", "NO", "ONE"]);
    stream
        .write_all(out.as_bytes())
        .await
        .map_err(|e| format!("write: {e}"))?;
    let mut buf = vec![0u8; 512];
    let mut got = Vec::new();
    let want_lines = if auth.is_empty() { 1 } else { 2 };
    while got.iter().filter(|&&b| b == b'\n').count() < want_lines {
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
            .await
            .map_err(|_| "no reply to REPLICAOF NO ONE".to_string())?
            .map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return Err("the replica closed the connection".into());
        }
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got);
    if text.lines().any(|l| l.starts_with('-')) {
        return Err(format!("the replica refused: {}", text.trim()));
    }
    Ok(())
}
