//! Loading a Redis RDB into the running server, key by key: an RDB file
//! (`firn import-rdb`), or what a redis-server 7.0 master sends its
//! replica. Nothing is flushed first; the caller decides.
//!
//! A blocking thread parses (`firn_rdb::RdbFileReader`) and hands each
//! entry over a small channel; the async side writes it through RESTORE's
//! own code, the command `RESTORE key <expire-at-ms> <payload> REPLACE
//! ABSTTL` run by `exec::execute` for an internal client, so that an
//! imported key is stored, locked, committed, notified and invalidated
//! exactly as a restored one is. The payload is the object as the file
//! encodes it with the DUMP footer appended: it is decoded once, by
//! RESTORE. Function libraries go through FUNCTION LOAD REPLACE's path.
//!
//! Up to [`WRITES_IN_FLIGHT`] RESTOREs run at once, so the import is not
//! one commit round trip per key, and every write is durable (its tickets
//! resolved) before `import_rdb` returns. Memory stays bounded: the
//! entries parsed but not yet written hold at most [`IN_FLIGHT_BYTES`]
//! between them (one bigger entry goes alone).

use bytes::Bytes;
use firn_rdb::{RawEntry, RawKey, RdbFileReader};
use firn_resp::Reply;
use std::io::Read;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use crate::scripting::request::Request;
use crate::server::{ClientInfo, Server, Session};

/// RESTOREs running at once. Importing 200k small keys (DEBUG POPULATE)
/// on 2 busy cores, debug build: 1 in flight 14k keys/s, 4 30k, 16 55k,
/// 64 70k, 256 60k. The release build at 64: 95k keys/s (75k with
/// `appendfsync always`).
pub const WRITES_IN_FLIGHT: usize = 64;
/// Bytes of parsed entries not yet written, at most.
pub const IN_FLIGHT_BYTES: usize = 64 << 20;
/// Entries parsed ahead of the writes (the byte budget is the real bound).
const PARSED_AHEAD: usize = 256;

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportStats {
    /// Keys written.
    pub keys: u64,
    /// Function libraries loaded.
    pub functions: u64,
    /// Bytes of RDB read.
    pub bytes: u64,
    /// Keys not written because their expiry had passed (what Redis's
    /// loader does on a master).
    pub expired: u64,
}

/// An entry on its way from the parser to the writes, holding its share
/// of [`IN_FLIGHT_BYTES`] until it is written.
struct Parsed {
    entry: RawEntry,
    permit: OwnedSemaphorePermit,
}

/// Loads every key of the RDB that `reader` yields into the running
/// server, parsing one key at a time, replacing any key of the same name with the
/// value, its absolute expiry and its database; function libraries as
/// FUNCTION LOAD REPLACE loads them. Existing data is not flushed. On an
/// error (a corrupt or truncated RDB, a database the server does not
/// have, a failed write) what was written before it stays, and the error
/// names the entry.
pub async fn import_rdb<R: Read + Send + 'static>(
    server: &Arc<Server>,
    reader: R,
) -> Result<ImportStats, String> {
    let importer = Importer::new(server);
    let budget = Arc::new(Semaphore::new(IN_FLIGHT_BYTES));
    let (entries_tx, mut entries) = mpsc::channel(PARSED_AHEAD);
    let runtime = tokio::runtime::Handle::current();
    let parser_budget = budget.clone();
    let parser =
        tokio::task::spawn_blocking(move || parse(reader, entries_tx, parser_budget, runtime));
    let mut writes: JoinSet<Result<(), String>> = JoinSet::new();
    let mut stats = ImportStats::default();
    let mut failure = None;
    while let Some(Parsed { entry, permit }) = entries.recv().await {
        let done = match entry {
            RawEntry::Function(code) => {
                stats.functions += 1;
                importer.load_library(code).await
            }
            RawEntry::Key(key) => {
                if key
                    .expire_at_ms
                    .is_some_and(|at| at <= firn_storage::now_ms() as i64)
                {
                    stats.expired += 1;
                    continue;
                }
                stats.keys += 1;
                importer.start_restore(&mut writes, key, permit).await
            }
        };
        if let Err(e) = done {
            failure = Some(e);
            break;
        }
    }
    if failure.is_some() {
        // Stops the parser, whether it waits for its byte budget or for
        // room in the channel.
        budget.close();
        drop(entries);
    }
    while let Some(joined) = writes.join_next().await {
        if let Err(e) = joined.map_err(|e| e.to_string()).and_then(|done| done) {
            failure.get_or_insert(e);
        }
    }
    let parsed = parser
        .await
        .map_err(|e| format!("the RDB parser failed: {e}"))?;
    if let Some(e) = failure {
        return Err(e);
    }
    stats.bytes = parsed?;
    Ok(stats)
}

/// The parser's thread: reads entries and sends them on until the RDB
/// ends; returns the bytes read. Stops early, without an error of its
/// own, when the importer stopped listening.
fn parse<R: Read>(
    input: R,
    entries: mpsc::Sender<Parsed>,
    budget: Arc<Semaphore>,
    runtime: tokio::runtime::Handle,
) -> Result<u64, String> {
    let mut reader = RdbFileReader::new(input).map_err(|e| e.to_string())?;
    while let Some(entry) = reader.next_raw().map_err(|e| e.to_string())? {
        let size = match &entry {
            RawEntry::Key(key) => key.key.len() + key.object.len(),
            RawEntry::Function(code) => code.len(),
        };
        let permits = size.clamp(1, IN_FLIGHT_BYTES) as u32;
        let Ok(permit) = runtime.block_on(budget.clone().acquire_many_owned(permits)) else {
            break;
        };
        if entries.blocking_send(Parsed { entry, permit }).is_err() {
            break;
        }
    }
    Ok(reader.bytes_read())
}

/// How the import runs its commands.
struct Importer {
    server: Arc<Server>,
    client: Arc<ClientInfo>,
    databases: usize,
}

impl Importer {
    fn new(server: &Arc<Server>) -> Importer {
        let id = server.next_client_id.fetch_add(1, Ordering::Relaxed);
        Importer {
            server: server.clone(),
            client: Arc::new(ClientInfo::new(id, "rdb-import".into(), String::new(), -1)),
            databases: server.config().databases,
        }
    }

    /// Starts the RESTORE of `key` once fewer than [`WRITES_IN_FLIGHT`]
    /// run; an error if a finished one failed.
    async fn start_restore(
        &self,
        writes: &mut JoinSet<Result<(), String>>,
        key: RawKey,
        permit: OwnedSemaphorePermit,
    ) -> Result<(), String> {
        let db = u8::try_from(key.db)
            .ok()
            .filter(|&db| usize::from(db) < self.databases)
            .ok_or_else(|| {
                format!(
                    "the RDB has a key in db {}, the server has {} databases (--databases)",
                    key.db, self.databases
                )
            })?;
        while writes.len() >= WRITES_IN_FLIGHT {
            if let Some(joined) = writes.join_next().await {
                joined.map_err(|e| e.to_string())??;
            }
        }
        let server = self.server.clone();
        let client = self.client.clone();
        writes.spawn(async move {
            let done = restore(&server, &client, db, key).await;
            drop(permit);
            done
        });
        Ok(())
    }

    /// FUNCTION LOAD REPLACE `code`, waiting until it is durable.
    async fn load_library(&self, code: Vec<u8>) -> Result<(), String> {
        let request = Request::FunctionLoad {
            code: Bytes::from(code),
            replace: true,
        };
        let session = internal_session(0);
        let (reply, tickets) =
            crate::scripting::dispatch::dispatch(&self.server, &self.client, &session, request)
                .await;
        if let Reply::Error(text) = reply {
            return Err(format!(
                "a function library does not load: {}",
                String::from_utf8_lossy(&text)
            ));
        }
        wait_durable(tickets).await
    }
}

/// `RESTORE key <expire-at-ms or 0> <payload> REPLACE ABSTTL` in `db`,
/// the payload being the object with the DUMP footer appended; waits
/// until it is durable.
async fn restore(
    server: &Arc<Server>,
    client: &Arc<ClientInfo>,
    db: u8,
    key: RawKey,
) -> Result<(), String> {
    let RawKey {
        key: name,
        mut object,
        expire_at_ms,
        ..
    } = key;
    let name = Bytes::from(name);
    firn_rdb::append_footer(&mut object);
    let args = [
        Bytes::from_static(b"RESTORE"),
        name.clone(),
        Bytes::from(expire_at_ms.unwrap_or(0).to_string()),
        Bytes::from(object),
        Bytes::from_static(b"REPLACE"),
        Bytes::from_static(b"ABSTTL"),
    ];
    // By its own name: rename-command, which may hide RESTORE from clients,
    // does not apply to the server's own requests.
    let command = crate::commands::registry()
        .lookup_original(&args)
        .map_err(|e| {
            let Reply::Error(text) = e.into_reply() else {
                return String::new();
            };
            String::from_utf8_lossy(&text).into_owned()
        })?;
    let mut session = internal_session(db);
    let executed = crate::exec::execute(server, command, &args, &mut session, client).await;
    if let Reply::Error(text) = &executed.reply {
        return Err(format!(
            "key \"{}\" in db {db} cannot be restored: {}",
            name.escape_ascii(),
            String::from_utf8_lossy(text)
        ));
    }
    wait_durable(executed.tickets).await
}

async fn wait_durable(tickets: Vec<firn_storage::Ticket>) -> Result<(), String> {
    for ticket in tickets {
        ticket.wait().await.map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The session of the import's own requests.
fn internal_session(db: u8) -> Session {
    Server::internal_session(db)
}
