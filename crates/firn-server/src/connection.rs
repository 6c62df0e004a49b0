//! One client connection: read, decode every complete request in the
//! buffer, execute them in order, then write all their replies with one
//! syscall once the writes they depend on are committed.

use bytes::{Bytes, BytesMut};
use firn_resp::{Limits, Protocol, Reply, RequestDecoder};
use firn_storage::Ticket;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::commands::server_cmds::redacted_args;
use crate::commands::{Command, Deferred};
use crate::errors::{CmdError, NOAUTH};
use crate::exec::{execute, Executed};
use crate::server::{ClientInfo, ReplyMode, Server, Session};

/// Replies are flushed early once this much output is buffered.
const FLUSH_BYTES: usize = 64 * 1024;

enum Flow {
    Continue,
    Close,
}

pub async fn serve(server: Arc<Server>, stream: TcpStream, client: Arc<ClientInfo>) {
    let _ = stream.set_nodelay(true);
    let (mut reader, mut writer) = stream.into_split();
    let mut session = Session {
        db: 0,
        protocol: Protocol::Resp2,
        authenticated: server.config().requirepass.is_none(),
        reply_mode: ReplyMode::On,
    };
    let mut inbuf = BytesMut::with_capacity(16 * 1024);
    let mut decoder = RequestDecoder::new();
    let mut out = BytesMut::with_capacity(16 * 1024);
    let mut shutdown = server.shutdown.subscribe();
    'conn: loop {
        // Backpressure: while the writer is behind by more than the
        // pending-write bound, no connection reads more requests.
        let room = crate::config::pending_writes_limit(server.config().maxmemory);
        if server.engine.pending_bytes() > room {
            server.engine.wait_for_room(room).await;
        }
        let idle = server.config().timeout_secs;
        let read = async {
            if idle > 0 {
                match tokio::time::timeout(Duration::from_secs(idle), reader.read_buf(&mut inbuf))
                    .await
                {
                    Ok(r) => r,
                    Err(_) => Ok(0),
                }
            } else {
                reader.read_buf(&mut inbuf).await
            }
        };
        let n = tokio::select! {
            r = read => r.unwrap_or(0),
            _ = client.kill.notified() => 0,
            _ = crate::server::until_shutdown(&mut shutdown) => 0,
        };
        if n == 0 || client.killed.load(Ordering::Acquire) {
            break;
        }
        server
            .stats
            .net_input_bytes
            .fetch_add(n as u64, Ordering::Relaxed);
        client
            .last_interaction_ms
            .store(firn_storage::now_ms(), Ordering::Relaxed);
        let (limits, query_limit) = {
            let c = server.config();
            (
                Limits {
                    max_bulk_len: c.proto_max_bulk_len,
                    ..Limits::default()
                },
                c.client_query_buffer_limit,
            )
        };
        let mut awaiting = Awaiting::default();
        loop {
            let args = match decoder.decode(&mut inbuf, &limits, session.authenticated) {
                Ok(None) => break,
                Ok(Some(args)) if args.is_empty() => continue,
                Ok(Some(args)) => args,
                Err(e) => {
                    e.to_reply().encode(&mut out, session.protocol);
                    let _ = flush(&mut writer, &mut out, &server, &mut awaiting).await;
                    break 'conn;
                }
            };
            let (flow, tickets) = run_one(&server, &client, &mut session, &args, &mut out).await;
            awaiting.extend(tickets);
            if let Flow::Close = flow {
                let _ = flush(&mut writer, &mut out, &server, &mut awaiting).await;
                break 'conn;
            }
            if client.monitor.load(Ordering::Acquire) {
                if flush(&mut writer, &mut out, &server, &mut awaiting)
                    .await
                    .is_err()
                {
                    break 'conn;
                }
                let mut monitored = Monitored {
                    reader: &mut reader,
                    writer: &mut writer,
                    inbuf: &mut inbuf,
                    decoder: &mut decoder,
                    limits: &limits,
                    query_limit,
                };
                if let Flow::Close =
                    monitor_loop(&server, &client, &mut session, &mut monitored).await
                {
                    break 'conn;
                }
            }
            if out.len() >= FLUSH_BYTES
                && flush(&mut writer, &mut out, &server, &mut awaiting)
                    .await
                    .is_err()
            {
                break 'conn;
            }
        }
        client
            .query_buffer
            .store(inbuf.len() as u64, Ordering::Relaxed);
        if inbuf.len() as u64 > query_limit {
            tracing::warn!(
                client = client.id,
                "closing client that reached max query buffer length"
            );
            break;
        }
        if flush(&mut writer, &mut out, &server, &mut awaiting)
            .await
            .is_err()
        {
            break;
        }
    }
    server.unregister_client(client.id);
    server.connected.fetch_sub(1, Ordering::AcqRel);
}

/// The batches the buffered replies depend on: the connection's own
/// writes and other clients' pending writes that its replies showed.
type Awaiting = Vec<Ticket>;

/// Waits until the writes behind `out` are durable, then writes `out`. If
/// the writer gave up on any of them (disk full), the replies are dropped
/// and the connection is closed: the client is never told that a write it
/// cannot find again succeeded, nor shown data that was rolled back.
async fn flush(
    writer: &mut tokio::net::tcp::OwnedWriteHalf,
    out: &mut BytesMut,
    server: &Server,
    awaiting: &mut Awaiting,
) -> std::io::Result<()> {
    for ticket in awaiting.drain(..) {
        if ticket.wait().await.is_err() {
            out.clear();
            return Err(std::io::Error::other("write could not be made durable"));
        }
    }
    if out.is_empty() {
        return Ok(());
    }
    server
        .stats
        .net_output_bytes
        .fetch_add(out.len() as u64, Ordering::Relaxed);
    writer.write_all(out).await?;
    out.clear();
    Ok(())
}

/// Executes one request and appends its reply (per CLIENT REPLY mode).
async fn run_one(
    server: &Arc<Server>,
    client: &Arc<ClientInfo>,
    session: &mut Session,
    args: &[Bytes],
    out: &mut BytesMut,
) -> (Flow, Vec<Ticket>) {
    let mut started = Instant::now();
    let mut ran = None;
    let (executed, name) = match server.registry.lookup(args) {
        Err(e) => {
            let reply = e.into_reply();
            if let Some(name) = rejected_command(server, args, &reply) {
                server.stats.commands.record_rejected(name);
            }
            (
                Executed {
                    reply,
                    tickets: Vec::new(),
                    deferred: None,
                },
                None,
            )
        }
        Ok(cmd) => match check_allowed(server, session, cmd) {
            Err(e) => {
                server.stats.commands.record_rejected(cmd.name());
                (
                    Executed {
                        reply: e.into_reply(),
                        tickets: Vec::new(),
                        deferred: None,
                    },
                    Some(cmd.name()),
                )
            }
            Ok(()) => {
                wait_for_pause(server, cmd).await;
                started = Instant::now();
                ran = Some(cmd);
                let executed = execute(server, cmd, args, session, client).await;
                // As in Redis, monitors see a command once it ran, with the
                // database it left selected; admin commands are not shown.
                if !cmd.admin {
                    feed_monitors(server, client, session, args);
                }
                (executed, Some(cmd.name()))
            }
        },
    };
    if let Some(name) = name {
        *client.last_cmd.lock() = name;
    }
    client.db.store(session.db, Ordering::Relaxed);

    let Executed {
        reply,
        tickets,
        deferred,
    } = executed;
    let mut flow = Flow::Continue;
    let reply = match deferred {
        None | Some(Deferred::Monitor) => Some(reply),
        Some(Deferred::Close) => {
            flow = Flow::Close;
            Some(reply)
        }
        Some(Deferred::Shutdown { save }) => {
            if save {
                let engine = server.engine.clone();
                let dir = server.config().dir.join("checkpoint");
                let _ = tokio::task::spawn_blocking(move || engine.checkpoint(&dir)).await;
            }
            server.request_shutdown();
            return (Flow::Close, tickets);
        }
        Some(Deferred::Blocking(job)) => {
            let job_server = server.clone();
            match tokio::task::spawn_blocking(move || job(&job_server)).await {
                Ok(reply) => Some(reply),
                Err(_) => Some(Reply::Error("ERR background job failed".into())),
            }
        }
    };
    // Only commands that ran are counted as calls and logged, as in Redis.
    if let Some(cmd) = ran {
        let micros = started.elapsed().as_micros() as u64;
        server.after_call(cmd, args, session.db, micros, reply.as_ref(), client);
    }
    if let Some(reply) = reply {
        if let Reply::Error(text) = &reply {
            server.stats.count_error(text);
        }
        match session.reply_mode {
            ReplyMode::On => reply.encode(out, session.protocol),
            ReplyMode::Off => {}
            ReplyMode::SkipNext => session.reply_mode = ReplyMode::Skipping,
            ReplyMode::Skipping => session.reply_mode = ReplyMode::On,
        }
    }
    client.resp.store(
        if session.protocol == Protocol::Resp3 {
            3
        } else {
            2
        },
        Ordering::Relaxed,
    );
    (flow, tickets)
}

/// The command a request names when the registry refused it for its
/// arity: Redis counts that as a rejected call of the command.
fn rejected_command(server: &Server, args: &[Bytes], reply: &Reply) -> Option<&'static str> {
    let name = crate::commands::server_cmds::command_named(server, args)?;
    let arity_error = crate::errors::wrong_arity(name).into_reply();
    (*reply == arity_error).then_some(name)
}

fn check_allowed(server: &Server, session: &Session, cmd: &Command) -> Result<(), CmdError> {
    if !session.authenticated && !cmd.noauth {
        return Err(CmdError::Static(NOAUTH));
    }
    if cmd.write {
        if let Some(why) = server.engine.write_error() {
            return Err(CmdError::Storage(firn_storage::StorageError::WriteFailed(
                why,
            )));
        }
    }
    Ok(())
}

/// CLIENT PAUSE: writes (or everything) wait until the pause ends.
async fn wait_for_pause(server: &Server, cmd: &Command) {
    loop {
        let pause = *server.pause.lock();
        let now = firn_storage::now_ms();
        if pause.until_ms <= now || !(pause.all || cmd.write) {
            return;
        }
        let left = Duration::from_millis(pause.until_ms - now);
        tokio::select! {
            _ = tokio::time::sleep(left) => {}
            _ = server.pause_changed.notified() => {}
        }
    }
}

fn feed_monitors(server: &Server, client: &ClientInfo, session: &Session, args: &[Bytes]) {
    if server.monitor_feed.receiver_count() == 0 {
        return;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut line = format!(
        "+{}.{:06} [{} {}]",
        now.as_secs(),
        now.subsec_micros(),
        session.db,
        client.addr
    );
    for arg in redacted_args(args).iter() {
        line.push(' ');
        line.push_str(&quote_arg(arg));
    }
    line.push_str("\r\n");
    let _ = server.monitor_feed.send(Bytes::from(line));
}

/// Redis's sdscatrepr quoting.
pub fn quote_arg(arg: &[u8]) -> String {
    let mut s = String::with_capacity(arg.len() + 2);
    s.push('"');
    for &b in arg {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            7 => s.push_str("\\a"),
            8 => s.push_str("\\b"),
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    s.push('"');
    s
}

/// The connection's halves and input state, lent to [`monitor_loop`].
struct Monitored<'a> {
    reader: &'a mut tokio::net::tcp::OwnedReadHalf,
    writer: &'a mut tokio::net::tcp::OwnedWriteHalf,
    inbuf: &'a mut BytesMut,
    decoder: &'a mut RequestDecoder,
    limits: &'a Limits,
    query_limit: u64,
}

/// Redis's reply to a monitor's command that reads or writes keys: a
/// monitor is a replica-like client, which may not touch the keyspace.
const MONITOR_KEYSPACE: &str = "ERR Replica can't interact with the keyspace";

/// MONITOR mode: streams the monitor feed and, as Redis does, keeps serving
/// the connection's own requests. Commands that read or write keys are
/// refused, MONITOR again is ignored (no reply), QUIT closes, and RESET
/// leaves the mode: then the requests still buffered are the caller's.
async fn monitor_loop(
    server: &Arc<Server>,
    client: &Arc<ClientInfo>,
    session: &mut Session,
    conn: &mut Monitored<'_>,
) -> Flow {
    let mut feed = server.monitor_feed.subscribe();
    let mut shutdown = server.shutdown.subscribe();
    let mut out = BytesMut::new();
    loop {
        // Serve every complete request already buffered, in order.
        while client.monitor.load(Ordering::Acquire) {
            let args = match conn
                .decoder
                .decode(conn.inbuf, conn.limits, session.authenticated)
            {
                Ok(None) => break,
                Ok(Some(args)) if args.is_empty() => continue,
                Ok(Some(args)) => args,
                Err(e) => {
                    e.to_reply().encode(&mut out, session.protocol);
                    let _ = conn.writer.write_all(&out).await;
                    return Flow::Close;
                }
            };
            let mut awaiting = Awaiting::default();
            let flow = match server.registry.lookup(&args) {
                Ok(cmd) if cmd.name() == "monitor" => Flow::Continue,
                Ok(cmd) if cmd.readonly || cmd.write => {
                    server.stats.commands.record_rejected(cmd.name());
                    server.stats.count_error(MONITOR_KEYSPACE.as_bytes());
                    Reply::Error(Bytes::from_static(MONITOR_KEYSPACE.as_bytes()))
                        .encode(&mut out, session.protocol);
                    Flow::Continue
                }
                _ => {
                    let (flow, tickets) = run_one(server, client, session, &args, &mut out).await;
                    awaiting.extend(tickets);
                    flow
                }
            };
            // The reply goes out before the feed line of this very command.
            if flush(conn.writer, &mut out, server, &mut awaiting)
                .await
                .is_err()
            {
                return Flow::Close;
            }
            if let Flow::Close = flow {
                return Flow::Close;
            }
        }
        if !client.monitor.load(Ordering::Acquire) {
            return Flow::Continue;
        }
        tokio::select! {
            line = feed.recv() => match line {
                Ok(line) => {
                    if conn.writer.write_all(&line).await.is_err() {
                        return Flow::Close;
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => return Flow::Close,
            },
            read = conn.reader.read_buf(conn.inbuf) => {
                let n = read.unwrap_or(0);
                if n == 0 || client.killed.load(Ordering::Acquire) {
                    return Flow::Close;
                }
                server.stats.net_input_bytes.fetch_add(n as u64, Ordering::Relaxed);
                client.last_interaction_ms.store(firn_storage::now_ms(), Ordering::Relaxed);
                if conn.inbuf.len() as u64 > conn.query_limit {
                    return Flow::Close;
                }
            }
            _ = client.kill.notified() => return Flow::Close,
            _ = crate::server::until_shutdown(&mut shutdown) => return Flow::Close,
        }
    }
}
