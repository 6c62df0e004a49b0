//! MONITOR mode: a connection that streams the feed and still serves
//! its own requests.

use bytes::{Bytes, BytesMut};
use firn_resp::{Limits, Reply, RequestDecoder};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::command_table::Flags;
use crate::pipeline::{run_one, Flow, Outgoing};
use crate::server::{ClientInfo, Server, Session};
use firn_storage::Ticket;

/// The connection's parts MONITOR mode uses: the socket halves of plain
/// TCP, or those of a TLS session (connection/tls.rs); writes are flushed,
/// which costs plain TCP nothing.
pub(crate) struct Monitored<'a, R, W> {
    pub(crate) reader: &'a mut R,
    pub(crate) writer: &'a mut W,
    pub(crate) inbuf: &'a mut BytesMut,
    pub(crate) decoder: &'a mut RequestDecoder,
    pub(crate) limits: &'a Limits,
    pub(crate) query_limit: u64,
}

/// Redis's reply to a monitor's command that reads or writes keys: a
/// monitor is a replica-like client, which may not touch the keyspace.
const MONITOR_KEYSPACE: &str = "ERR Replica can't interact with the keyspace";

/// MONITOR mode: streams the monitor feed and, as Redis does, keeps serving
/// the connection's own requests. Commands that read or write keys are
/// refused, MONITOR again is ignored (no reply), QUIT closes, and RESET
/// leaves the mode: then the requests still buffered are the caller's.
pub(crate) async fn monitor_loop<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    server: &Arc<Server>,
    client: &Arc<ClientInfo>,
    session: &mut Session,
    conn: &mut Monitored<'_, R, W>,
    mut feed: tokio::sync::broadcast::Receiver<Bytes>,
) -> Flow {
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
                    let _ = conn.writer.flush().await;
                    return Flow::Close;
                }
            };
            let mut awaiting: Vec<Ticket> = Vec::new();
            let flow = match crate::commands::registry().lookup(&args) {
                Ok(cmd) if cmd.name() == "monitor" => Flow::Continue,
                Ok(cmd) if cmd.has(Flags::READONLY) || cmd.has(Flags::WRITE) => {
                    server.stats.commands.record_rejected(cmd.name());
                    server.stats.count_error(MONITOR_KEYSPACE.as_bytes());
                    Reply::Error(Bytes::from_static(MONITOR_KEYSPACE.as_bytes()))
                        .encode(&mut out, session.protocol);
                    Flow::Continue
                }
                _ => {
                    let (reply, flow, tickets) = run_one(server, client, session, &args).await;
                    match reply {
                        Some(Outgoing::Reply(reply)) => reply.encode(&mut out, session.protocol),
                        // Keyspace commands are refused above: no command a
                        // monitor may send streams its reply.
                        Some(Outgoing::Stream(_)) | None => {}
                        Some(Outgoing::Block(_)) => {
                            Reply::NullArray.encode(&mut out, session.protocol)
                        }
                    }
                    awaiting.extend(tickets);
                    flow
                }
            };
            // The reply goes out before the feed line of this very command.
            if flush_monitor(conn.writer, &mut out, server, &mut awaiting)
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
                    if conn.writer.write_all(&line).await.is_err()
                        || conn.writer.flush().await.is_err()
                    {
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

/// Writes a monitor's own replies once the batches they depend on are
/// durable (a failed batch closes the connection, as in [`Connection`]).
async fn flush_monitor<W: AsyncWrite + Unpin>(
    writer: &mut W,
    out: &mut BytesMut,
    server: &Server,
    awaiting: &mut Vec<Ticket>,
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
    writer.flush().await?;
    out.clear();
    Ok(())
}
