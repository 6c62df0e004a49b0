//! The replica's side: one task per `REPLICAOF host port`, until REPLICAOF
//! points elsewhere or says NO ONE.
//!
//! States (ROLE's words): `connect` → `connecting` → `handshake` (PING,
//! AUTH with `masterauth`, REPLCONF listening-port and capa, PSYNC with
//! this server's replication id and offset) → `sync` (a full sync's
//! payload) → `connected` (the stream). Any failure goes back to
//! `connect` after a second; the data is kept, and the next PSYNC
//! continues from it when the primary still can.
//!
//! A full sync from a Firn is a checkpoint: its files go to
//! `<dir>/repl-incoming/` and replace the dataset in place
//! (`Engine::load_checkpoint`) while every key lock is held. From a
//! redis-server it is an RDB, streamed through the RDB codec into the
//! emptied dataset key by key (`rdb_import.rs`), never held whole.
//! Either is a long operation in `Server::progress` ("full-sync",
//! "import": bytes received of the payload's length) until it is loaded.
//!
//! The stream is applied as the primary's client (`role_flag` MASTER: it
//! may write to a read-only replica) through the normal pipeline, in
//! parts: the commands read so far run, their batches become durable, and
//! only then are their bytes counted as applied, appended to this server's
//! own backlog (for its replicas: the same bytes, so the same offsets) and
//! acknowledged (`REPLCONF ACK`).
//!
//! With `tls-replication yes` the link is TLS (tokio-rustls, the client
//! configuration of tls/): the primary's certificate is verified against
//! the CA options, and this server shows `tls-client-cert-file` (else its
//! `tls-cert-file`).

use bytes::{Buf, Bytes, BytesMut};
use firn_resp::{Limits, RequestDecoder};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;

use super::state::{now_ms, Following, LinkState};
use crate::progress::Operation;
use crate::server::{ClientInfo, Server, Session, ROLE_MASTER};

/// Bytes read from the primary at a time.
const READ_BYTES: usize = 256 * 1024;
/// The longest line of the handshake.
const MAX_LINE: usize = 4096;

/// Starts following `host:port` (stopping any current link).
pub async fn follow(server: &Arc<Server>, host: String, port: u16) {
    // From one primary to another the replication id stays, as Redis's
    // replicationSetMaster keeps its cached master: a replica that Sentinel
    // points at the replica it promoted (same history, now its `replid2`)
    // continues with a partial sync instead of copying the whole dataset.
    end_link(server).await;
    super::activate(server);
    let stop = Arc::new(Notify::new());
    let stopped = Arc::new(AtomicBool::new(false));
    let repl = &server.replication;
    *repl.following.lock() = Some(Following {
        host: host.clone(),
        port,
        state: LinkState::Connect,
        last_io_ms: 0,
        down_since_ms: now_ms(),
        sync_bytes: (0, 0),
        stop: stop.clone(),
        stopped: stopped.clone(),
    });
    repl.is_replica.store(true, Ordering::Release);
    server.config.write().set_replica_of(Some((&host, port)));
    let generation = repl.link_generation.fetch_add(1, Ordering::AcqRel) + 1;
    let server = server.clone();
    tokio::spawn(async move {
        run(&server, &host, port, &stop, &stopped, generation).await;
    });
}

/// Stops following (REPLICAOF NO ONE): the link finishes the part it is
/// applying, then ends; its replicas keep the stream, under a new
/// replication id.
pub async fn stop(server: &Arc<Server>) -> bool {
    if !end_link(server).await {
        return false;
    }
    let repl = &server.replication;
    server.config.write().set_replica_of(None);
    // From here this server's own batches feed the backlog.
    repl.is_replica.store(false, Ordering::Release);
    repl.shift_replid();
    true
}

/// Ends the current link, if any, once the part it is applying is
/// applied; `false` if this server followed no one.
async fn end_link(server: &Arc<Server>) -> bool {
    let repl = &server.replication;
    let following = repl.following.lock().take();
    let Some(following) = following else {
        return false;
    };
    following.stopped.store(true, Ordering::Release);
    following.stop.notify_waiters();
    let _applying = repl.apply_lock.lock().await;
    true
}

fn set_state(server: &Server, generation: u64, state: LinkState) {
    let repl = &server.replication;
    if repl.link_generation.load(Ordering::Acquire) != generation {
        return;
    }
    if let Some(f) = repl.following.lock().as_mut() {
        if state != LinkState::Connected && f.state == LinkState::Connected {
            f.down_since_ms = now_ms();
        }
        f.state = state;
    }
}

fn touch(server: &Server) {
    if let Some(f) = server.replication.following.lock().as_mut() {
        f.last_io_ms = now_ms();
    }
}

async fn run(
    server: &Arc<Server>,
    host: &str,
    port: u16,
    stop: &Notify,
    stopped: &AtomicBool,
    generation: u64,
) {
    let mut shutdown = server.shutdown.subscribe();
    while !stopped.load(Ordering::Acquire) {
        set_state(server, generation, LinkState::Connecting);
        // Not raced against `stop`: a part being applied or a dataset
        // being loaded must finish (stop waits for it); every wait inside
        // is bounded by repl-timeout.
        let session = tokio::select! {
            r = connect_and_sync(server, host, port, generation, stop, stopped) => r,
            _ = crate::server::until_shutdown(&mut shutdown) => return,
        };
        if let Err(why) = session {
            tracing::warn!(primary = %format!("{host}:{port}"), reason = %why, "replication link down");
        }
        set_state(server, generation, LinkState::Connect);
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = stop.notified() => return,
            _ = crate::server::until_shutdown(&mut shutdown) => return,
        }
    }
}

/// The primary's socket, plain or TLS.
trait LinkIo: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> LinkIo for T {}

/// The primary's connection: its socket and what was read ahead.
struct Conn {
    stream: Box<dyn LinkIo>,
    buf: BytesMut,
}

impl Conn {
    async fn fill(&mut self, timeout: Duration) -> Result<(), String> {
        self.buf.reserve(READ_BYTES);
        match tokio::time::timeout(timeout, self.stream.read_buf(&mut self.buf)).await {
            Ok(Ok(0)) => Err("the primary closed the connection".into()),
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(format!("read: {e}")),
            Err(_) => Err("no bytes from the primary for repl-timeout".into()),
        }
    }

    /// One `\r\n`-ended line (without it).
    async fn line(&mut self, timeout: Duration) -> Result<String, String> {
        loop {
            if let Some(at) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = self.buf.split_to(at + 2);
                return Ok(String::from_utf8_lossy(&line[..at]).into_owned());
            }
            if self.buf.len() > MAX_LINE {
                return Err("a line from the primary is too long".into());
            }
            self.fill(timeout).await?;
        }
    }

    /// A line, skipping the bare newlines a primary sends as keepalives
    /// while it prepares a payload.
    async fn reply_line(&mut self, timeout: Duration) -> Result<String, String> {
        loop {
            while self.buf.first() == Some(&b'\n') {
                self.buf.advance(1);
            }
            if self.buf.is_empty() {
                self.fill(timeout).await?;
                continue;
            }
            return self.line(timeout).await;
        }
    }

    async fn command(&mut self, args: &[&str], timeout: Duration) -> Result<String, String> {
        let mut out = format!("*{}\r\n", args.len());
        for a in args {
            out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        self.stream
            .write_all(out.as_bytes())
            .await
            .map_err(|e| format!("write: {e}"))?;
        self.stream
            .flush()
            .await
            .map_err(|e| format!("write: {e}"))?;
        self.reply_line(timeout).await
    }
}

async fn connect_and_sync(
    server: &Arc<Server>,
    host: &str,
    port: u16,
    generation: u64,
    stop: &Notify,
    stopped: &AtomicBool,
) -> Result<(), String> {
    let (timeout, auth, user, announce_port, announce_ip, own_port) = {
        let c = server.config();
        (
            Duration::from_secs(c.setting_u64("repl-timeout").max(1)),
            c.setting("masterauth"),
            c.setting("masteruser"),
            c.setting_u64("replica-announce-port"),
            c.setting("replica-announce-ip"),
            c.port,
        )
    };
    let stream = tokio::time::timeout(timeout, TcpStream::connect((host, port)))
        .await
        .map_err(|_| "connect timed out".to_string())?
        .map_err(|e| format!("connect: {e}"))?;
    let _ = stream.set_nodelay(true);
    let stream: Box<dyn LinkIo> = if server.config().tls.replication {
        let config = server
            .tls
            .client_config()
            .ok_or("tls-replication: TLS is not configured")?;
        let name = crate::tls::server_name(host)?;
        let connect = tokio_rustls::TlsConnector::from(config).connect(name, stream);
        let tls = tokio::time::timeout(timeout, connect)
            .await
            .map_err(|_| "TLS handshake timed out".to_string())?
            .map_err(|e| format!("TLS handshake: {e}"))?;
        Box::new(tls)
    } else {
        Box::new(stream)
    };
    let mut conn = Conn {
        stream,
        buf: BytesMut::with_capacity(READ_BYTES),
    };
    set_state(server, generation, LinkState::Handshake);
    let pong = conn.command(&["PING"], timeout).await?;
    if pong.starts_with('-') && !pong.starts_with("-NOAUTH") && !pong.starts_with("-NOPERM") {
        return Err(format!("PING: {pong}"));
    }
    if !auth.is_empty() {
        let reply = if user.is_empty() {
            conn.command(&["AUTH", &auth], timeout).await?
        } else {
            conn.command(&["AUTH", &user, &auth], timeout).await?
        };
        if reply.starts_with('-') {
            return Err(format!("AUTH: {reply}"));
        }
    }
    let port_word = if announce_port > 0 {
        announce_port.to_string()
    } else {
        own_port.to_string()
    };
    conn.command(&["REPLCONF", "listening-port", &port_word], timeout)
        .await?;
    if !announce_ip.is_empty() {
        conn.command(&["REPLCONF", "ip-address", &announce_ip], timeout)
            .await?;
    }
    conn.command(
        &[
            "REPLCONF",
            "capa",
            "eof",
            "capa",
            "psync2",
            "capa",
            "firn-checkpoint",
        ],
        timeout,
    )
    .await?;
    let repl = &server.replication;
    let (replid, offset) = (repl.replid(), repl.backlog.end() + 1);
    let reply = conn
        .command(&["PSYNC", &replid, &offset.to_string()], timeout)
        .await?;
    touch(server);
    let mut words = reply.split_whitespace();
    match words.next() {
        Some("+FULLRESYNC") => {
            let new_id = words.next().unwrap_or_default().to_string();
            let pos: u64 = words
                .next()
                .and_then(|w| w.parse().ok())
                .ok_or_else(|| format!("malformed reply: {reply}"))?;
            set_state(server, generation, LinkState::Transfer);
            // Under the apply lock: REPLICAOF NO ONE waits for a load to
            // end, and a link stopped meanwhile loads nothing.
            let _applying = repl.apply_lock.lock().await;
            if stopped.load(Ordering::Acquire) {
                return Ok(());
            }
            let db = full_sync(server, &mut conn, timeout).await?;
            let mut ids = repl.ids.lock();
            ids.replid = new_id;
            ids.replid2 = "0".repeat(40);
            ids.second_offset = -1;
            drop(ids);
            repl.backlog.reset(pos, db);
            super::drop_replicas(server);
            tracing::info!(primary = %format!("{host}:{port}"), offset = pos, "full sync done");
        }
        Some("+CONTINUE") => {
            if let Some(new_id) = words.next() {
                let mut ids = repl.ids.lock();
                if ids.replid != new_id {
                    ids.replid2 = std::mem::replace(&mut ids.replid, new_id.to_string());
                    ids.second_offset = repl.backlog.end() as i64;
                    drop(ids);
                    super::drop_replicas(server);
                }
            }
            tracing::info!(primary = %format!("{host}:{port}"), offset = offset - 1, "partial sync");
        }
        _ => return Err(format!("PSYNC: {reply}")),
    }
    set_state(server, generation, LinkState::Connected);
    apply_stream(server, conn, timeout, stop, stopped).await
}

/// Records a full sync's size for INFO (`master_sync_total_bytes`; 0 when
/// the primary does not say, as a diskless Redis does not).
fn set_sync_total(server: &Server, total: Option<u64>) {
    if let Some(f) = server.replication.following.lock().as_mut() {
        f.sync_bytes = (total.unwrap_or(0), 0);
    }
}

/// Receives a full sync's payload and loads it; returns the database the
/// stream has selected where it continues.
async fn full_sync(
    server: &Arc<Server>,
    conn: &mut Conn,
    timeout: Duration,
) -> Result<Option<u8>, String> {
    let head = conn.reply_line(timeout).await?;
    if let Some(rest) = head.strip_prefix("$FIRN-CHECKPOINT ") {
        let mut words = rest.split_whitespace();
        let db: i64 = words
            .next()
            .and_then(|w| w.parse().ok())
            .ok_or("malformed checkpoint header")?;
        let files: usize = words
            .next()
            .and_then(|w| w.parse().ok())
            .ok_or("malformed checkpoint header")?;
        let total: Option<u64> = words.next().and_then(|w| w.parse().ok());
        set_sync_total(server, total);
        let operation = server
            .progress
            .start("full-sync", "bytes", total.unwrap_or(0));
        receive_checkpoint(server, conn, files, timeout, &operation).await?;
        return Ok(u8::try_from(db).ok());
    }
    if let Some(rest) = head.strip_prefix('$') {
        load_rdb(server, conn, rest, timeout).await?;
        return Ok(None);
    }
    Err(format!("unexpected full sync payload: {head}"))
}

async fn receive_checkpoint(
    server: &Arc<Server>,
    conn: &mut Conn,
    files: usize,
    timeout: Duration,
    operation: &Operation,
) -> Result<(), String> {
    let dir = super::primary::incoming_dir(server);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut total: u64 = 0;
    for _ in 0..files {
        let line = conn.line(timeout).await?;
        let (size, name) = line
            .split_once(' ')
            .and_then(|(s, n)| Some((s.parse::<u64>().ok()?, n.to_string())))
            .ok_or_else(|| format!("malformed file header: {line}"))?;
        if name.contains('/') || name.starts_with('.') || name.is_empty() {
            return Err(format!("refusing file name {name:?}"));
        }
        let mut file = tokio::fs::File::create(dir.join(&name))
            .await
            .map_err(|e| format!("{name}: {e}"))?;
        let mut left = size;
        while left > 0 {
            if conn.buf.is_empty() {
                conn.fill(timeout).await?;
            }
            let n = (left as usize).min(conn.buf.len());
            let part = conn.buf.split_to(n);
            file.write_all(&part)
                .await
                .map_err(|e| format!("{name}: {e}"))?;
            left -= n as u64;
            total += n as u64;
            operation.set_done(total);
            if let Some(f) = server.replication.following.lock().as_mut() {
                f.sync_bytes.1 = total;
                f.last_io_ms = now_ms();
            }
        }
        file.sync_all().await.map_err(|e| format!("{name}: {e}"))?;
    }
    server
        .stats
        .net_repl_input_bytes
        .fetch_add(total, Ordering::Relaxed);
    // As a FLUSHALL first, so that tracking clients are told and WATCHes
    // fail as for any flush; then the load replaces the (empty) dataset.
    flush_all(server).await?;
    // Every key lock: no command runs while the dataset is replaced. In a
    // task of its own, so that nothing cancels a load half done.
    let load_server = server.clone();
    let from = dir.clone();
    let loaded = tokio::spawn(async move {
        let _all = load_server.engine.lock_all().await;
        let engine = load_server.engine.clone();
        tokio::task::spawn_blocking(move || engine.load_checkpoint(&from)).await
    })
    .await
    .map_err(|e| format!("load task: {e}"))?
    .map_err(|e| format!("load task: {e}"))?;
    let _ = std::fs::remove_dir_all(&dir);
    loaded.map_err(|e| format!("loading the checkpoint: {e}"))?;
    // The function libraries came with the dataset (System CF).
    let reload_server = server.clone();
    if let Some(done) = crate::scripting::jobs::submit(server, move |vm| {
        crate::scripting::functions::reload_stored(vm, &reload_server)
    }) {
        let _ = done.await;
    }
    Ok(())
}

/// A redis-server's RDB: `$<len>` then that many bytes, or (diskless)
/// `$EOF:<40-byte mark>` then bytes up to the same mark. The dataset is
/// emptied first, as a Redis replica does.
async fn load_rdb(
    server: &Arc<Server>,
    conn: &mut Conn,
    header: &str,
    timeout: Duration,
) -> Result<(), String> {
    enum Until {
        Len(u64),
        Mark(Vec<u8>),
    }
    let mut until = match header.strip_prefix("EOF:") {
        Some(mark) if mark.len() == 40 => Until::Mark(mark.as_bytes().to_vec()),
        Some(_) => return Err("malformed EOF mark".into()),
        None => Until::Len(header.parse().map_err(|_| format!("bad length {header}"))?),
    };
    if let Until::Len(len) = until {
        set_sync_total(server, Some(len));
    }
    let operation = server.progress.start(
        "import",
        "bytes",
        match until {
            Until::Len(len) => len,
            Until::Mark(_) => 0,
        },
    );
    flush_all(server).await?;
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(16);
    let import_server = server.clone();
    let import = tokio::spawn(async move {
        crate::rdb_import::import_rdb(&import_server, ChannelReader::new(rx)).await
    });
    let mut total: u64 = 0;
    // The last bytes passed on, to find the mark across reads.
    let mut tail: Vec<u8> = Vec::new();
    let mut importer_gone = false;
    let feed = async {
        loop {
            if conn.buf.is_empty() {
                conn.fill(timeout).await?;
            }
            let part = match &mut until {
                Until::Len(left) => {
                    let n = (*left as usize).min(conn.buf.len());
                    *left -= n as u64;
                    conn.buf.split_to(n).freeze()
                }
                Until::Mark(_) => conn.buf.split().freeze(),
            };
            total += part.len() as u64;
            operation.set_done(total);
            let done = match &until {
                Until::Len(left) => *left == 0,
                Until::Mark(mark) => {
                    tail.extend_from_slice(&part);
                    if tail.len() > 80 {
                        tail.drain(..tail.len() - 80);
                    }
                    tail.ends_with(mark)
                }
            };
            if let Some(f) = server.replication.following.lock().as_mut() {
                f.sync_bytes.1 = total;
                f.last_io_ms = now_ms();
            }
            // An importer that stopped early (its result says why) takes
            // no more; the payload is still read to its end.
            if !importer_gone && tx.send(part).await.is_err() {
                importer_gone = true;
            }
            if done {
                return Ok::<(), String>(());
            }
        }
    };
    let fed = feed.await;
    drop(tx);
    let imported = import.await.map_err(|e| format!("import task: {e}"))?;
    fed?;
    server
        .stats
        .net_repl_input_bytes
        .fetch_add(total, Ordering::Relaxed);
    let stats = imported?;
    tracing::info!(
        keys = stats.keys,
        functions = stats.functions,
        "RDB from the primary loaded"
    );
    Ok(())
}

/// FLUSHALL on this server, as the start of a full sync from a Redis.
async fn flush_all(server: &Arc<Server>) -> Result<(), String> {
    let (client, mut session) = master_client(server);
    let args = [Bytes::from_static(b"FLUSHALL")];
    let (_, _, tickets) = crate::pipeline::run_one(server, &client, &mut session, &args).await;
    server.unregister_client(client.id);
    for t in tickets {
        t.wait().await.map_err(|e| format!("FLUSHALL: {e}"))?;
    }
    Ok(())
}

/// A std `Read` over chunks handed through a channel (the RDB parser runs
/// on a blocking thread).
pub struct ChannelReader {
    rx: tokio::sync::mpsc::Receiver<Bytes>,
    current: Bytes,
}

impl ChannelReader {
    pub fn new(rx: tokio::sync::mpsc::Receiver<Bytes>) -> ChannelReader {
        ChannelReader {
            rx,
            current: Bytes::new(),
        }
    }
}

impl std::io::Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.rx.blocking_recv() {
                Some(next) => self.current = next,
                None => return Ok(0),
            }
        }
        let n = out.len().min(self.current.len());
        out[..n].copy_from_slice(&self.current[..n]);
        self.current.advance(n);
        Ok(n)
    }
}

/// The client the primary's commands run as.
fn master_client(server: &Arc<Server>) -> (Arc<ClientInfo>, Session) {
    let id = server.next_client_id.fetch_add(1, Ordering::Relaxed);
    let client = Arc::new(ClientInfo::new(id, "primary".into(), String::new(), -1));
    client.role_flag.store(ROLE_MASTER, Ordering::Relaxed);
    server.register_client(client.clone());
    let session = Server::internal_session(server.replication.backlog.selected_db().unwrap_or(0));
    (client, session)
}

/// Applies the stream until the link fails or is stopped.
async fn apply_stream(
    server: &Arc<Server>,
    conn: Conn,
    timeout: Duration,
    stop: &Notify,
    stopped: &AtomicBool,
) -> Result<(), String> {
    let (client, mut session) = master_client(server);
    server
        .replication
        .master_client
        .store(client.id, Ordering::Release);
    let result = apply_loop(
        server,
        conn,
        timeout,
        (stop, stopped),
        &client,
        &mut session,
    )
    .await;
    server.unregister_client(client.id);
    result
}

async fn apply_loop(
    server: &Arc<Server>,
    conn: Conn,
    timeout: Duration,
    (stop, stopped): (&Notify, &AtomicBool),
    client: &Arc<ClientInfo>,
    session: &mut Session,
) -> Result<(), String> {
    let repl = &server.replication;
    let Conn { stream, mut buf } = conn;
    let (mut reader, mut writer) = tokio::io::split(stream);
    let mut decoder = RequestDecoder::new();
    let limits = Limits::default();
    // The bytes of complete commands not yet applied.
    let mut acked = 0u64;
    let mut ack_timer = tokio::time::interval(Duration::from_secs(1));
    loop {
        if stopped.load(Ordering::Acquire) || client.killed.load(Ordering::Acquire) {
            return Ok(());
        }
        // Apply what is complete, as one part. While a big argument is
        // still arriving nothing is complete: the buffer is not copied
        // again for every read of it.
        let incomplete = decoder
            .min_buffer_len()
            .is_some_and(|need| need > buf.len());
        if !buf.is_empty() && !incomplete {
            let applying = repl.apply_lock.lock().await;
            if stopped.load(Ordering::Acquire) {
                return Ok(());
            }
            // One copy per part: the stream's bytes for this server's own
            // backlog, exactly as received.
            let snapshot = Bytes::copy_from_slice(&buf);
            let start_len = buf.len();
            let mut tickets = Vec::new();
            let mut getack = false;
            loop {
                match decoder.decode(&mut buf, &limits, true) {
                    Ok(Some(args)) => {
                        if args.is_empty() {
                            continue;
                        }
                        let is = |i: usize, w: &str| {
                            args.get(i)
                                .is_some_and(|a| a.eq_ignore_ascii_case(w.as_bytes()))
                        };
                        if is(0, "replconf") {
                            getack |= is(1, "getack");
                            continue;
                        }
                        if is(0, "ping") {
                            continue;
                        }
                        let (reply, _, more) =
                            crate::pipeline::run_one(server, client, session, &args).await;
                        if let Some(crate::pipeline::Outgoing::Reply(firn_resp::Reply::Error(e))) =
                            reply
                        {
                            tracing::warn!(error = %String::from_utf8_lossy(&e), "a command from the primary failed");
                        }
                        tickets.extend(more);
                    }
                    Ok(None) => break,
                    Err(e) => return Err(format!("protocol error from the primary: {e:?}")),
                }
            }
            for t in tickets {
                t.wait().await.map_err(|e| format!("applying: {e}"))?;
            }
            let consumed = snapshot.slice(..start_len - buf.len());
            if !consumed.is_empty() {
                let n = consumed.len() as u64;
                repl.backlog.append_raw(consumed, Some(session.db));
                server
                    .stats
                    .net_repl_input_bytes
                    .fetch_add(n, Ordering::Relaxed);
            }
            drop(applying);
            let applied = repl.backlog.end();
            if applied != acked || getack {
                send_ack(&mut writer, applied).await?;
                acked = applied;
            }
        }
        buf.reserve(READ_BYTES);
        tokio::select! {
            read = tokio::time::timeout(timeout, reader.read_buf(&mut buf)) => match read {
                Ok(Ok(0)) => return Err("the primary closed the connection".into()),
                Ok(Ok(_)) => touch(server),
                Ok(Err(e)) => return Err(format!("read: {e}")),
                Err(_) => return Err("no bytes from the primary for repl-timeout".into()),
            },
            _ = ack_timer.tick() => {
                send_ack(&mut writer, repl.backlog.end()).await?;
            }
            _ = client.kill.notified() => return Err("killed".into()),
            _ = stop.notified() => return Ok(()),
        }
    }
}

async fn send_ack(writer: &mut (impl AsyncWrite + Unpin), offset: u64) -> Result<(), String> {
    let digits = offset.to_string();
    let line = format!(
        "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n${}\r\n{}\r\n",
        digits.len(),
        digits
    );
    writer
        .write_all(line.as_bytes())
        .await
        .map_err(|e| format!("write: {e}"))?;
    writer.flush().await.map_err(|e| format!("write: {e}"))
}
