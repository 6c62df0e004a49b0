//! Start-up and shutdown: logging, file-descriptor limit, pidfile, the
//! engine, background threads (active expiry), the listeners and signals;
//! and `firn import-rdb`, the same server state without the listeners.

use firn_storage::{Engine, EngineConfig, ExpireCycle, WalReplay};
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::{broadcast, watch};

use crate::coldpool::ColdReadPool;
use crate::commands::Registry;
use crate::config::Config;
use crate::progress::Progress;
use crate::rdb_import::ImportStats;
use crate::server::{ClientInfo, Server, ServerStats, SlowLog};

/// Protected mode's refusal, as Redis words it.
const PROTECTED_MODE_DENIED: &[u8] = b"-DENIED Firn is running in protected mode because protected mode is enabled and no password is set for the default user. Connections are only accepted from the loopback interface. Set a password with requirepass, or disable protected mode with CONFIG SET protected-mode no.\r\n";

/// Below this many descriptors Firn keeps for itself (RocksDB files, logs).
const RESERVED_FDS: u64 = 32;

/// Where the log goes without a `logfile`: the server's stdout, or stderr
/// for `firn import-rdb`, whose stdout is its result line alone.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LogTo {
    Stdout,
    Stderr,
}

fn init_logging(config: &Config, to: LogTo) {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let level = match config.loglevel.as_str() {
        "debug" => LevelFilter::DEBUG,
        "verbose" => LevelFilter::INFO,
        "warning" | "nothing" => LevelFilter::WARN,
        _ => LevelFilter::INFO,
    };
    // FIRN_LOG overrides loglevel: a level, or `target=level` directives
    // (`FIRN_LOG=info,firn_storage=debug`). tracing-subscriber's Targets
    // filter reads them; its EnvFilter would also take span and field
    // filters, at the price of the regex crates in every first build.
    let filter = std::env::var("FIRN_LOG")
        .ok()
        .and_then(|text| text.parse::<Targets>().ok())
        .unwrap_or_else(|| Targets::new().with_default(level));
    let builder = tracing_subscriber::fmt()
        .with_max_level(LevelFilter::TRACE)
        .with_target(false);
    let _ = if config.logfile.is_empty() {
        match to {
            LogTo::Stdout => builder.finish().with(filter).try_init(),
            // Printed above import-rdb's progress bar, if one is shown.
            LogTo::Stderr => builder
                .with_writer(crate::cli_progress::StderrLog)
                .finish()
                .with(filter)
                .try_init(),
        }
    } else {
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&config.logfile)
        {
            Ok(file) => builder
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .finish()
                .with(filter)
                .try_init(),
            Err(e) => {
                eprintln!(
                    "cannot open logfile {}: {e}; logging to stdout",
                    config.logfile
                );
                builder.finish().with(filter).try_init()
            }
        }
    };
}

/// Raises RLIMIT_NOFILE to fit maxclients, as Redis does, and returns the
/// number of clients the granted limit allows.
fn raise_fd_limit(maxclients: usize) -> usize {
    let wanted = maxclients as u64 + RESERVED_FDS;
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read/write the struct we pass.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return maxclients;
        }
        if lim.rlim_cur >= wanted {
            tracing::info!(
                limit = lim.rlim_cur,
                "open files limit is enough for maxclients"
            );
            return maxclients;
        }
        let mut target = wanted;
        while target > lim.rlim_cur {
            let new = libc::rlimit {
                rlim_cur: target,
                rlim_max: lim.rlim_max.max(target),
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &new) == 0 {
                tracing::info!(limit = target, "raised the open files limit");
                return maxclients;
            }
            let capped = libc::rlimit {
                rlim_cur: target.min(lim.rlim_max),
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &capped) == 0 {
                let granted = target.min(lim.rlim_max);
                let clients = granted.saturating_sub(RESERVED_FDS) as usize;
                tracing::warn!(
                    granted,
                    maxclients = clients,
                    "could not raise the open files limit to fit maxclients; maxclients lowered"
                );
                return clients.max(1);
            }
            target -= 16.min(target);
        }
    }
    let clients = lim.rlim_cur.saturating_sub(RESERVED_FDS) as usize;
    tracing::warn!(
        limit = lim.rlim_cur,
        maxclients = clients,
        "open files limit could not be raised; maxclients lowered"
    );
    clients.max(1)
}

/// Redis's daemonize(): the parent exits, the child leaves the terminal's
/// session and points standard input, output and error at /dev/null. Only
/// safe while the process has one thread: call it before `run`.
pub fn daemonize() -> Result<(), String> {
    // SAFETY: fork in a single-threaded process (main calls this before any
    // thread starts); the child only continues with ordinary Rust code.
    unsafe {
        match libc::fork() {
            -1 => return Err(std::io::Error::last_os_error().to_string()),
            0 => {}
            _ => libc::_exit(0),
        }
        libc::setsid();
        let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR, 0);
        if fd != -1 {
            libc::dup2(fd, libc::STDIN_FILENO);
            libc::dup2(fd, libc::STDOUT_FILENO);
            libc::dup2(fd, libc::STDERR_FILENO);
            if fd > libc::STDERR_FILENO {
                libc::close(fd);
            }
        }
    }
    Ok(())
}

pub fn run(mut config: Config) -> Result<(), String> {
    crate::allocator::configure();
    init_logging(&config, LogTo::Stdout);
    for warning in config.warnings() {
        tracing::warn!("{warning}");
    }
    config.maxclients = raise_fd_limit(config.maxclients);
    std::fs::create_dir_all(&config.dir)
        .map_err(|e| format!("cannot create dir {}: {e}", config.dir.display()))?;
    if !config.pidfile.is_empty() {
        if let Err(e) = std::fs::write(&config.pidfile, format!("{}\n", std::process::id())) {
            tracing::warn!(error = %e, "cannot write pidfile");
        }
    }
    let server = open_server(&config)?;
    let expiry = start_active_expiry(server.clone())?;
    let trimmer = start_memory_trimmer(server.clone())?;
    // Without the LIFO slot a worker runs the connections one readiness
    // event woke in the order it listed them; with it, the last one woken
    // runs first, and a command read later overtook one read before it
    // (Redis's suite sends commands on two connections microseconds apart).
    // The switch is tokio's unstable API: .cargo/config.toml sets the cfg
    // for every build started inside the repository (scripts/run.sh and
    // bench/lib.sh build from there); a build without it still works.
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all().thread_name("firn-net");
    #[cfg(tokio_unstable)]
    builder.disable_lifo_slot();
    let runtime = builder
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let result = runtime.block_on(serve(server.clone()));
    server.request_shutdown();
    runtime.shutdown_timeout(Duration::from_secs(2));
    let _ = expiry.join();
    let _ = trimmer.join();
    server.engine.shutdown();
    if !config.pidfile.is_empty() {
        let _ = std::fs::remove_file(&config.pidfile);
    }
    tracing::info!("Firn is now ready to exit, bye bye...");
    result
}

/// `firn import-rdb <file>`: loads an RDB file into the data directory of
/// `config` (see `rdb_import`) and exits, listening on no port. The server
/// state is the one `run` serves, without its listeners and background
/// threads; every write is durable when this returns. Its progress is
/// shown on standard error (cli_progress.rs).
pub fn import_rdb_file(config: Config, path: &Path) -> Result<ImportStats, String> {
    crate::allocator::configure();
    init_logging(&config, LogTo::Stderr);
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    std::fs::create_dir_all(&config.dir)
        .map_err(|e| format!("cannot create dir {}: {e}", config.dir.display()))?;
    let file_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let server = open_server(&config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("firn-import")
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    // The bytes of the file read so far are the progress shown (a bar on a
    // terminal, log lines otherwise).
    let operation = server.progress.start("rdb-import", "bytes", file_bytes);
    let shown =
        crate::cli_progress::show(operation.clone(), format!("Importing {}", path.display()));
    let reader = crate::progress::CountedRead::new(file, operation.clone());
    let result = runtime.block_on(crate::rdb_import::import_rdb(&server, reader));
    shown.finish(result.is_ok());
    operation.finish();
    server.request_shutdown();
    runtime.shutdown_timeout(Duration::from_secs(2));
    server.engine.shutdown();
    result
}

/// Opens the engine and builds the server's state on it: the command
/// registry, the observers, the cold-read pool and the script thread.
fn open_server(config: &Config) -> Result<Arc<Server>, String> {
    let budget = crate::config::MemoryBudget::of(config.maxmemory);
    let progress = Progress::default();
    let engine = open_engine(
        &progress,
        &EngineConfig {
            path: config.dir.join("db"),
            databases: config.databases,
            block_cache_bytes: budget.block_cache_bytes as usize,
            hot_cache_bytes: budget.hot_cache_bytes,
            write_buffer_bytes: budget.memtable_bytes as usize,
            sync: config.appendfsync,
            writers: config.writer_threads,
        },
    )
    .map_err(|e| format!("cannot open the database in {}: {e}", config.dir.display()))?;

    engine.set_force_cold_reads(config.debug_cold_reads);
    engine.set_encoding_limits(config.encoding);
    let mut registry = Registry::build(crate::groups::all())?;
    for (from, to) in &config.renamed_commands {
        registry.rename(from, to)?;
    }
    crate::commands::install(registry);
    crate::after_call::install(crate::groups::observers());
    let cold_pool = ColdReadPool::new(config.io_threads, config.io_queue_max)
        .map_err(|e| format!("cannot start the cold-read pool: {e}"))?;
    let (shutdown_tx, _) = watch::channel(false);
    let (monitor_tx, _) = broadcast::channel(4096);
    let server = Arc::new(Server {
        config: RwLock::new(config.clone()),
        engine,
        cold_pool,
        clients: Mutex::new(HashMap::new()),
        next_client_id: AtomicU64::new(1),
        connected: AtomicU32::new(0),
        stats: ServerStats::default(),
        latency: crate::latency::Latency::new(crate::command_table::COMMANDS.iter().flat_map(
            |spec| std::iter::once(spec.name).chain(spec.subcommands.iter().map(|s| s.name)),
        )),
        slowlog: Mutex::new(SlowLog::default()),
        read_latency: Default::default(),
        cold_log: Default::default(),
        started: Instant::now(),
        run_id: random_run_id(),
        replication: crate::replication::state::Replication::new(random_run_id(), 1 << 20),
        active_expire: AtomicBool::new(true),
        scripts_may_call_anything: AtomicBool::new(false),
        shutdown: shutdown_tx,
        last_save_unix: AtomicU64::new(firn_storage::now_ms() / 1000),
        bgsave_in_progress: AtomicBool::new(false),
        last_bgsave_ok: AtomicBool::new(true),
        monitor_feed: monitor_tx,
        pause: Default::default(),
        arrivals: Default::default(),
        scan_cursors: Mutex::new(Default::default()),
        access_times: crate::server::AccessTimes::new(budget.access_times_bytes()),
        blocking: Default::default(),
        pubsub: Default::default(),
        tracking: Default::default(),
        scripting: Default::default(),
        acl: Default::default(),
        tls: Default::default(),
        progress,
    });
    crate::signals::install(&server);
    crate::tls::configure(&server.tls, &config.tls)?;

    crate::acl::commands::load_at_startup(&server)?;
    crate::scripting::jobs::start(&server);
    {
        let config = server.config();
        server.access_times.set_policy(config.lfu_settings());
        server
            .latency
            .configure(config.latency_tracking, config.latency_monitor_threshold_ms);
    }
    Ok(server)
}

/// How often the start-up logs how far the WAL replay is.
const REPLAY_LOG_INTERVAL: Duration = Duration::from_secs(1);

/// `Engine::open`, recorded as the "startup-replay" operation: RocksDB
/// replays its WAL inside the open, and a thread samples how far
/// (`WalReplay`) and logs it every second while the open runs. The
/// operation stays `progress.last_finished()`.
fn open_engine(progress: &Progress, config: &EngineConfig) -> firn_storage::Result<Engine> {
    let mut replay = WalReplay::scan(&config.path);
    let total = replay.total_bytes();
    let operation = progress.start("startup-replay", "bytes", total);
    let started = Instant::now();
    let (opened_tx, opened_rx) = std::sync::mpsc::channel::<()>();
    let sampler = {
        let operation = operation.clone();
        std::thread::Builder::new()
            .name("firn-replay".into())
            .spawn(move || {
                let tick = Duration::from_millis(100);
                let mut next_log = REPLAY_LOG_INTERVAL;
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    opened_rx.recv_timeout(tick)
                {
                    let done = replay.replayed_bytes();
                    operation.set_done(done);
                    if started.elapsed() >= next_log {
                        next_log += REPLAY_LOG_INTERVAL;
                        tracing::info!(
                            "Replaying the WAL: {done} of {total} bytes ({:.2}%)",
                            done as f64 * 100.0 / total.max(1) as f64
                        );
                    }
                }
            })
    };
    let opened = Engine::open(config);
    drop(opened_tx);
    if let Ok(sampler) = sampler {
        let _ = sampler.join();
    }
    if opened.is_ok() {
        operation.set_done(total);
        if total > 0 {
            tracing::info!(
                "WAL replayed: {total} bytes in {:.3} seconds",
                started.elapsed().as_secs_f64()
            );
        }
    }
    operation.finish();
    opened
}

/// 40 random hex digits (a run id, a replication id).
fn random_run_id() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    (0..40)
        .map(|_| format!("{:x}", rng.random_range(0..16u8)))
        .collect()
}

fn start_active_expiry(server: Arc<Server>) -> Result<std::thread::JoinHandle<()>, String> {
    std::thread::Builder::new()
        .name("firn-expire".into())
        .spawn(move || {
            let cycle = ExpireCycle::new(server.engine.clone());
            let mut shutdown = server.shutdown.subscribe();
            loop {
                if *shutdown.borrow_and_update() {
                    return;
                }
                // A replica deletes keys when its primary's stream says so
                // (the primary's DELs), never on its own clock, as Redis.
                if !server.active_expire.load(Ordering::Relaxed) || server.replication.is_replica()
                {
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
                match cycle.run_once(1000) {
                    Ok(n) if n >= 1000 => continue,
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "active expiry cycle failed"),
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
        .map_err(|e| format!("cannot start the expiry thread: {e}"))
}

/// Hands freed heap pages back to the kernel every few seconds (see
/// allocator.rs), so resident memory follows the caches' bounded usage.
fn start_memory_trimmer(server: Arc<Server>) -> Result<std::thread::JoinHandle<()>, String> {
    std::thread::Builder::new()
        .name("firn-mem-trim".into())
        .spawn(move || {
            let mut shutdown = server.shutdown.subscribe();
            let tick = Duration::from_millis(100);
            let mut waited = Duration::ZERO;
            while !*shutdown.borrow_and_update() {
                std::thread::sleep(tick);
                waited += tick;
                if waited >= crate::allocator::TRIM_INTERVAL {
                    crate::allocator::release_free_pages();
                    waited = Duration::ZERO;
                }
            }
        })
        .map_err(|e| format!("cannot start the memory trim thread: {e}"))
}

async fn serve(server: Arc<Server>) -> Result<(), String> {
    crate::notify::start(&server);
    crate::replication::lifecycle::start(&server).await;
    let (port, tls_port, binds, backlog) = {
        let c = server.config();
        (c.port, c.tls.port, c.bind.clone(), c.tcp_backlog)
    };
    if port == 0 && tls_port == 0 {
        return Err("Configured to not listen anywhere, exiting.".into());
    }
    // `port 0` is no plain listener, as in Redis; `tls-port` adds TLS
    // listeners on the same addresses.
    let bind = |port| match port {
        0 => Ok(Vec::new()),
        port => crate::listen::bind_all(&binds, port, backlog),
    };
    let (plain, tls) = (bind(port)?, bind(tls_port)?);
    if plain.is_empty() && tls.is_empty() {
        return Err("no address to listen on (every optional bind address failed)".into());
    }
    tracing::info!(port, tls_port, "Ready to accept connections");
    for listener in plain {
        let listener = TcpListener::from_std(listener).map_err(|e| e.to_string())?;
        tokio::spawn(accept_loop(server.clone(), listener, false));
    }
    supervise_tls_listeners(&server, tls);
    crate::metrics::start(server.clone()).await?;
    let mut shutdown = server.shutdown.subscribe();
    tokio::select! {
        _ = crate::server::until_shutdown(&mut shutdown) => {}
        _ = signal_shutdown() => { tracing::info!("Received a shutdown signal, scheduling shutdown..."); }
    }
    crate::replication::lifecycle::save_position(&server).await;
    Ok(())
}

/// The TLS listeners' task: runs their accept loops, and replaces them
/// with the ones CONFIG SET tls-port bound (tls::reload), closing the old
/// (their connections go on).
fn supervise_tls_listeners(server: &Arc<Server>, initial: Vec<std::net::TcpListener>) {
    let (sink, mut replaced) = tokio::sync::mpsc::unbounded_channel();
    server.tls.set_listener_sink(sink);
    let server = server.clone();
    tokio::spawn(async move {
        let mut listeners = initial;
        loop {
            let loops: Vec<_> = listeners
                .drain(..)
                .filter_map(|l| match TcpListener::from_std(l) {
                    Ok(l) => Some(tokio::spawn(accept_loop(server.clone(), l, true))),
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot listen for TLS");
                        None
                    }
                })
                .collect();
            let Some(next) = replaced.recv().await else {
                return;
            };
            for accepting in loops {
                accepting.abort();
            }
            listeners = next;
        }
    });
}

async fn signal_shutdown() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

/// Accepts connections on `listener` (TLS ones when `tls`), one task each.
async fn accept_loop(server: Arc<Server>, listener: TcpListener, tls: bool) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(x) => x,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        server
            .stats
            .connections_received
            .fetch_add(1, Ordering::Relaxed);
        let (maxclients, protected, keepalive, timeout_secs) = {
            let c = server.config();
            (
                c.maxclients,
                c.protected_mode,
                c.tcp_keepalive_secs,
                c.timeout_secs,
            )
        };
        // Redis's protected mode asks whether the default user needs a
        // password (requirepass or ACL SETUSER default).
        let has_pass = !server.acl.default_user().nopass;
        if keepalive > 0 {
            let sock = socket2::SockRef::from(&stream);
            let ka = socket2::TcpKeepalive::new().with_time(Duration::from_secs(keepalive));
            let _ = sock.set_tcp_keepalive(&ka);
        }
        // Admission is decided here, one connection at a time, so a burst
        // of connections cannot slip past maxclients.
        let admitted = server
            .connected
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                ((n as usize) < maxclients).then_some(n + 1)
            })
            .is_ok();
        let server2 = server.clone();
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let mut stream = stream;
            if !admitted {
                server2
                    .stats
                    .rejected_connections
                    .fetch_add(1, Ordering::Relaxed);
                // Over TLS the error cannot be read before a handshake;
                // Redis's write of it fails there too: the client is closed.
                if !tls {
                    let _ = stream
                        .write_all(b"-ERR max number of clients reached\r\n")
                        .await;
                }
                return;
            }
            // A TLS client counts in maxclients from here, its handshake
            // included (as Redis creates the client before it).
            let (mut stream, session) = if tls {
                match tls_handshake(&server2, stream, timeout_secs).await {
                    Some((stream, session)) => (stream, Some(session)),
                    None => {
                        server2.connected.fetch_sub(1, Ordering::AcqRel);
                        return;
                    }
                }
            } else {
                (stream, None)
            };
            if protected && !has_pass && !peer.ip().is_loopback() {
                server2.connected.fetch_sub(1, Ordering::AcqRel);
                if let Some(session) = session {
                    deny_tls(stream, session).await;
                    return;
                }
                let _ = stream.write_all(PROTECTED_MODE_DENIED).await;
                return;
            }
            let id = server2.next_client_id.fetch_add(1, Ordering::Relaxed);
            let laddr = stream
                .local_addr()
                .map(|a| a.to_string())
                .unwrap_or_default();
            let client = Arc::new(ClientInfo::new(
                id,
                peer.to_string(),
                laddr,
                stream.as_raw_fd(),
            ));
            server2.register_client(client.clone());
            crate::connection::serve(server2, stream, session, client).await;
        });
    }
}

/// A TLS client's handshake, on its own task, bounded by
/// `tls::HANDSHAKE_DEADLINE` and `timeout` when it is shorter; `None` when
/// it failed or took too long (the client is closed).
async fn tls_handshake(
    server: &Server,
    stream: tokio::net::TcpStream,
    timeout_secs: u64,
) -> Option<(tokio::net::TcpStream, rustls::ServerConnection)> {
    let config = server.tls.server_config()?;
    let mut deadline = crate::tls::HANDSHAKE_DEADLINE;
    if timeout_secs > 0 {
        deadline = deadline.min(Duration::from_secs(timeout_secs));
    }
    let peer = stream.peer_addr().ok();
    let accept = tokio_rustls::TlsAcceptor::from(config).accept(stream);
    let mut shutdown = server.shutdown.subscribe();
    let outcome = tokio::select! {
        outcome = tokio::time::timeout(deadline, accept) => outcome,
        _ = crate::server::until_shutdown(&mut shutdown) => return None,
    };
    match outcome {
        Ok(Ok(done)) => Some(done.into_inner()),
        Ok(Err(e)) => {
            tracing::debug!(?peer, error = %e, "Error accepting a client connection (TLS handshake)");
            None
        }
        Err(_) => {
            tracing::debug!(?peer, "TLS handshake timed out");
            None
        }
    }
}

/// Protected mode's refusal, over TLS (the handshake is done first, as
/// Redis checks protected mode once the connection is established).
async fn deny_tls(stream: tokio::net::TcpStream, session: rustls::ServerConnection) {
    use tokio::io::AsyncWriteExt;
    let mut io = crate::connection::tls::TlsStream::new(stream, Box::new(session));
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        io.write_all(PROTECTED_MODE_DENIED).await?;
        io.shutdown().await
    })
    .await;
}
