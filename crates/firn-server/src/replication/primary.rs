//! Serving one replica, on the connection that sent PSYNC (or SYNC).
//!
//! 1. PSYNC's answer: `+CONTINUE <replid>` when the replica's replication
//!    id is ours (or our previous one, up to where it ended) and the
//!    backlog still holds its position; otherwise `+FULLRESYNC <replid>
//!    <offset>` and a full sync.
//! 2. A full sync cuts a RocksDB checkpoint (`Engine::checkpoint_cut`: hard
//!    links, the writers stopped only while RocksDB links the files) and
//!    streams its files: `$FIRN-CHECKPOINT <db> <files> <bytes>\r\n`, then per file
//!    `<size> <name>\r\n` and its bytes. `<db>` is the database the stream
//!    has selected at the cut (-1: the next record selects one). The
//!    replica's place in the backlog is pinned from before the cut, so the
//!    writes made during the transfer wait there, up to the replica's hard
//!    output limit.
//! 3. The stream from the backlog, as it grows. The replica's ACKs are
//!    read on the side (WAIT, `min-replicas-to-write`, INFO's lag).
//!
//! A replica that falls further behind than its hard limit (or stays past
//! the soft limit too long), whose socket takes no bytes for `repl-timeout`,
//! or that is killed, is dropped; it reconnects and syncs again. Nothing
//! here ever makes a writer wait.

use bytes::{Bytes, BytesMut};
use firn_resp::{Limits, RequestDecoder};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::activate;
use super::state::{now_ms, Psync, ReplicaInfo, STATE_ONLINE, STATE_SEND_BULK, STATE_WAIT_BGSAVE};
use crate::server::{ClientInfo, Server};

/// Bytes of stream written to the socket at a time.
const SEND_BYTES: usize = 1 << 20;

/// Feeds the replica on the connection's socket halves: plain TCP's, or
/// those of a TLS session (connection/tls.rs); writes are flushed, which
/// costs plain TCP nothing.
pub async fn serve<R, W>(
    server: Arc<Server>,
    client: Arc<ClientInfo>,
    reader: R,
    mut writer: W,
    leftover: BytesMut,
    req: Psync,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send,
{
    activate(&server);
    let repl = &server.replication;
    let (hard, soft, soft_secs, timeout) = {
        let config = server.config();
        let limit = config.client_output_buffer_limit.replica;
        let timeout = config.setting_u64("repl-timeout").max(1);
        (
            limit.hard_bytes,
            limit.soft_bytes,
            limit.soft_seconds,
            timeout,
        )
    };
    let timeout = Duration::from_secs(timeout);
    let ids = repl.ids.lock().clone();
    let (start, end) = repl.backlog.range();
    let want = (req.offset - 1).max(-1);
    let known_id =
        req.replid == ids.replid || (req.replid == ids.replid2 && want <= ids.second_offset);
    let continues = known_id && want >= start as i64 && want <= end as i64;
    let pos_now = if continues { want as u64 } else { end };
    let reader_pos = repl.backlog.join(pos_now, hard);
    let hello = client.repl_hello.lock().clone();
    let info = Arc::new(ReplicaInfo {
        client_id: client.id,
        ip: hello.ip.clone().unwrap_or_else(|| {
            client
                .addr
                .rsplit_once(':')
                .map_or(client.addr.clone(), |a| a.0.to_string())
        }),
        port: hello.port.into(),
        state: STATE_WAIT_BGSAVE.into(),
        ack: 0.into(),
        ack_ms: now_ms().into(),
        reader: reader_pos.clone(),
    });
    repl.replicas.lock().push(info.clone());
    client
        .role_flag
        .store(crate::server::ROLE_REPLICA, Ordering::Relaxed);

    let outcome = async {
        let pos = if continues {
            repl.sync_partial_ok.fetch_add(1, Ordering::Relaxed);
            let reply = format!("+CONTINUE {}\r\n", ids.replid);
            write_timed(&mut writer, reply.as_bytes(), timeout).await?;
            want as u64
        } else {
            if req.replid != "?" {
                repl.sync_partial_err.fetch_add(1, Ordering::Relaxed);
            }
            repl.sync_full.fetch_add(1, Ordering::Relaxed);
            if !hello.firn_checkpoint {
                let reply =
                    "-ERR Firn feeds Firn replicas only (REPLCONF capa firn-checkpoint)\r\n";
                let _ = writer.write_all(reply.as_bytes()).await;
                let _ = writer.flush().await;
                return Err("a replica that cannot load a checkpoint".to_string());
            }
            info.state.store(STATE_SEND_BULK, Ordering::Release);
            full_sync(&server, &client, &mut writer, &reader_pos, timeout).await?
        };
        info.state.store(STATE_ONLINE, Ordering::Release);
        info.ack_ms.store(now_ms(), Ordering::Release);
        stream(
            &server,
            &client,
            &info,
            reader,
            &mut writer,
            leftover,
            pos,
            (hard, soft, soft_secs),
            timeout,
        )
        .await
    }
    .await;
    if let Err(why) = outcome {
        tracing::info!(replica = %client.addr, reason = %why, "replica dropped");
    }
    repl.backlog.leave(&reader_pos);
    repl.replicas.lock().retain(|r| !Arc::ptr_eq(r, &info));
    repl.acked.notify_waiters();
}

async fn write_timed<W: AsyncWrite + Unpin>(
    writer: &mut W,
    bytes: &[u8],
    timeout: Duration,
) -> Result<(), String> {
    let write = async {
        writer.write_all(bytes).await?;
        writer.flush().await
    };
    match tokio::time::timeout(timeout, write).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("write: {e}")),
        Err(_) => Err("the replica took no bytes for repl-timeout".into()),
    }
}

/// Cuts a checkpoint, sends `+FULLRESYNC` and its files; returns the
/// stream position the replica continues from.
async fn full_sync(
    server: &Arc<Server>,
    client: &ClientInfo,
    writer: &mut (impl AsyncWrite + Unpin),
    reader_pos: &Arc<super::backlog::Reader>,
    timeout: Duration,
) -> Result<u64, String> {
    let repl = &server.replication;
    let dir = server.config().dir.join(format!("repl-sync-{}", client.id));
    let _ = std::fs::remove_dir_all(&dir);
    // A replica feeding replicas cuts between the parts it applies, so the
    // cut has a place in its primary's stream.
    let applying = if repl.is_replica() {
        Some(repl.apply_lock.lock().await)
    } else {
        None
    };
    let engine = server.engine.clone();
    let target = dir.clone();
    let cut = tokio::task::spawn_blocking(move || engine.checkpoint_cut(&target))
        .await
        .map_err(|e| format!("checkpoint task: {e}"))?
        .map_err(|e| format!("checkpoint: {e}"));
    drop(applying);
    let seq = match cut {
        Ok(seq) => seq,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
    };
    let Some((pos, db)) = repl.backlog.take_cut(seq) else {
        let _ = std::fs::remove_dir_all(&dir);
        return Err("the cut was not seen in the stream".into());
    };
    reader_pos.pos.store(pos, Ordering::Release);
    let sent = send_checkpoint(server, writer, &dir, pos, db, timeout).await;
    let _ = std::fs::remove_dir_all(&dir);
    sent.map(|()| pos)
}

async fn send_checkpoint(
    server: &Arc<Server>,
    writer: &mut (impl AsyncWrite + Unpin),
    dir: &Path,
    pos: u64,
    db: Option<u8>,
    timeout: Duration,
) -> Result<(), String> {
    let files = checkpoint_files(dir).map_err(|e| format!("listing the checkpoint: {e}"))?;
    let replid = server.replication.replid();
    let db_word = db.map_or("-1".to_string(), |d| d.to_string());
    let head = format!(
        "+FULLRESYNC {replid} {pos}\r\n$FIRN-CHECKPOINT {db_word} {} {}\r\n",
        files.len(),
        files.iter().map(|(_, size)| size).sum::<u64>()
    );
    write_timed(writer, head.as_bytes(), timeout).await?;
    let mut buf = vec![0u8; SEND_BYTES];
    for (name, size) in files {
        let line = format!("{size} {name}\r\n");
        write_timed(writer, line.as_bytes(), timeout).await?;
        let mut file = tokio::fs::File::open(dir.join(&name))
            .await
            .map_err(|e| format!("{name}: {e}"))?;
        let mut left = size;
        while left > 0 {
            let want = (left as usize).min(buf.len());
            let n = file
                .read(&mut buf[..want])
                .await
                .map_err(|e| format!("{name}: {e}"))?;
            if n == 0 {
                return Err(format!("{name} shrank while sent"));
            }
            write_timed(writer, &buf[..n], timeout).await?;
            left -= n as u64;
        }
    }
    Ok(())
}

/// The checkpoint's files with their sizes (a checkpoint is flat).
fn checkpoint_files(dir: &Path) -> std::io::Result<Vec<(String, u64)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        if meta.is_file() {
            if let Some(name) = entry.file_name().to_str() {
                files.push((name.to_string(), meta.len()));
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Where a replica's full sync is received (`link.rs`).
pub fn incoming_dir(server: &Server) -> PathBuf {
    server.config().dir.join("repl-incoming")
}

#[allow(clippy::too_many_arguments)]
async fn stream(
    server: &Arc<Server>,
    client: &Arc<ClientInfo>,
    info: &Arc<ReplicaInfo>,
    reader: impl AsyncRead + Unpin + Send + 'static,
    writer: &mut (impl AsyncWrite + Unpin),
    leftover: BytesMut,
    mut pos: u64,
    (hard, soft, soft_secs): (u64, u64, u64),
    timeout: Duration,
) -> Result<(), String> {
    let repl = &server.replication;
    let acks = tokio::spawn(read_acks(server.clone(), info.clone(), reader, leftover));
    let mut shutdown = server.shutdown.subscribe();
    let mut over_soft_since: Option<Instant> = None;
    let mut out = Vec::with_capacity(SEND_BYTES);
    let result = loop {
        if client.killed.load(Ordering::Acquire) {
            break Err("killed".into());
        }
        if acks.is_finished() {
            break Err("the replica closed the connection".into());
        }
        let grew = repl.backlog.grew.notified();
        tokio::pin!(grew);
        grew.as_mut().enable();
        let chunks = match repl.backlog.read(pos, SEND_BYTES) {
            Ok(chunks) => chunks,
            Err(_) => break Err("fell behind the backlog".into()),
        };
        let behind = repl.backlog.end().saturating_sub(pos);
        if hard > 0 && behind > hard {
            break Err("passed the replica hard output limit".into());
        }
        if soft > 0 && behind > soft {
            let since = *over_soft_since.get_or_insert_with(Instant::now);
            if since.elapsed() > Duration::from_secs(soft_secs) {
                break Err("stayed past the replica soft output limit".into());
            }
        } else {
            over_soft_since = None;
        }
        if chunks.is_empty() {
            tokio::select! {
                _ = &mut grew => {}
                _ = client.kill.notified() => {}
                _ = crate::server::until_shutdown(&mut shutdown) => break Ok(()),
                _ = tokio::time::sleep(Duration::from_millis(500)) => {}
            }
            continue;
        }
        out.clear();
        for chunk in &chunks {
            out.extend_from_slice(chunk);
        }
        if let Err(e) = write_timed(writer, &out, timeout).await {
            break Err(e);
        }
        pos += out.len() as u64;
        info.reader.pos.store(pos, Ordering::Release);
        server
            .stats
            .net_repl_output_bytes
            .fetch_add(out.len() as u64, Ordering::Relaxed);
    };
    acks.abort();
    result
}

/// Reads the replica's `REPLCONF ACK <offset>` lines until it closes.
async fn read_acks(
    server: Arc<Server>,
    info: Arc<ReplicaInfo>,
    mut reader: impl AsyncRead + Unpin + Send,
    mut buf: BytesMut,
) {
    let mut decoder = RequestDecoder::new();
    let limits = Limits::default();
    loop {
        loop {
            match decoder.decode(&mut buf, &limits, true) {
                Ok(Some(args)) => note_ack(&server, &info, &args),
                Ok(None) => break,
                Err(_) => return,
            }
        }
        buf.reserve(4096);
        match reader.read_buf(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

fn note_ack(server: &Server, info: &ReplicaInfo, args: &[Bytes]) {
    let is = |a: &Bytes, w: &str| a.eq_ignore_ascii_case(w.as_bytes());
    if args.len() >= 3 && is(&args[0], "replconf") && is(&args[1], "ack") {
        if let Some(offset) = std::str::from_utf8(&args[2])
            .ok()
            .and_then(|t| t.parse::<u64>().ok())
        {
            info.ack.fetch_max(offset, Ordering::AcqRel);
            info.ack_ms.store(now_ms(), Ordering::Release);
            server.replication.acked.notify_waiters();
        }
    }
}
