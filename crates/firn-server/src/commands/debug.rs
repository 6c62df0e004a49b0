//! DEBUG: Redis's testing aid, behind `enable-debug-command` (the pipeline
//! refuses it when the option does not allow the client, as Redis does
//! before anything else). The subcommands are those Redis's own tests use;
//! each one that concerns a structure Firn does not have (quicklists,
//! RDB files, jemalloc) replies what Redis replies when it has nothing to
//! do. docs/compatibility.md lists what each one means in Firn.
//!
//! DIGEST and DIGEST-VALUE follow Redis's algorithm (debug.c's
//! `xorObjectDigest`): a key's digest mixes its type, its elements (in
//! order for a list, XORed for the unordered types) and whether it has an
//! expiry; the dataset's XORs its keys' digests, database by database. So
//! the same data gives the same digest in Firn and in Redis.

use bytes::Bytes;
use firn_resp::{Protocol, Reply};
use firn_storage::{Meta, ValueType};
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::replies::help_reply;
use super::{def_all_if, Ctx, Def, Deferred};
use crate::args::parse_i64;
use crate::errors::{subcommand_syntax, CmdError, CmdResult, NO_SUCH_KEY};
use crate::rdb::RdbValue;
use crate::server::{ClientInfo, Server};

pub static COMMANDS: &[Def] = &[def_all_if("debug", debug, alone).guarded(allowed)];

/// `enable-debug-command` decides who may run DEBUG.
fn allowed(server: &Server, client: &ClientInfo) -> CmdResult<()> {
    if server.config().enable_debug_command.allows(&client.addr) {
        Ok(())
    } else {
        Err(CmdError::Static(NOT_ALLOWED))
    }
}

/// Redis's refusal when `enable-debug-command` does not allow the client.
const NOT_ALLOWED: &str = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.";

/// DIGEST reads, and RELOAD restarts, the whole dataset: they run alone
/// among keyed commands.
fn alone(args: &[Bytes]) -> bool {
    args.get(1).is_some_and(|sub| {
        sub.eq_ignore_ascii_case(b"digest") || sub.eq_ignore_ascii_case(b"reload")
    })
}

const HELP: &[&str] = &[
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANGE-REPL-ID",
    "    Draws a new replication id (INFO replication's master_replid).",
    "DIGEST",
    "    Replies a hex digest of every database's keys, values and expiries.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Replies a hex digest of each key's value (zeros for a missing key).",
    "ERROR <text>",
    "    Replies an error with this text.",
    "LISTPACK <key>",
    "    Checks that the key is held in the listpack encoding.",
    "LOG <message>",
    "    Writes the message to the server log.",
    "OBJECT <key>",
    "    Describes the key's value: its encoding and its serialized length.",
    "PROTOCOL <type>",
    "    Replies a sample value of a RESP type: string, integer, double, bignum,",
    "    null, array, set, map, attrib, push, verbatim, true or false.",
    "QUICKLIST <key> [<0|1>]",
    "    Checks that the key is held in the quicklist encoding.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Checks a list element size threshold (Firn keeps no quicklists).",
    "RELOAD [MERGE|NOFLUSH|NOSAVE ...]",
    "    Makes every write durable, flushes the memory tables and empties the",
    "    in-memory caches, so that later reads come from the files.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Stops (0) or restarts (1) the deletion of expired keys in the background.",
    "SET-DISABLE-DENY-SCRIPTS <0|1>",
    "    Accepted; scripts still may not call the commands denied to them.",
    "SLEEP <seconds>",
    "    Waits this many seconds (decimals allowed) before replying.",
    "STRINGMATCH-TEST",
    "    Accepted; Firn's pattern matcher is tested by its own test suite.",
    "HELP",
    "    Prints this help.",
];

fn debug(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = args[1].to_ascii_lowercase();
    let argc = args.len();
    match (sub.as_slice(), argc) {
        (b"help", 2) => Ok(help_reply(HELP)),
        (b"error", 3) => Ok(Reply::Error(args[2].clone())),
        (b"log", 3) => {
            tracing::warn!("DEBUG LOG: {}", String::from_utf8_lossy(&args[2]));
            Ok(Reply::ok())
        }
        (b"sleep", 3) => {
            ctx.deferred = Some(Deferred::Sleep(sleep_arg(&args[2])));
            Ok(Reply::ok())
        }
        (b"set-active-expire", 3) => {
            let on = atoi(&args[2]) != 0;
            ctx.server.active_expire.store(on, Ordering::Relaxed);
            Ok(Reply::ok())
        }
        (b"set-disable-deny-scripts", 3) => {
            let on = parse_i64(&args[2]).is_some_and(|n| n != 0);
            ctx.server
                .scripts_may_call_anything
                .store(on, Ordering::Relaxed);
            Ok(Reply::ok())
        }
        (b"set-skip-checksum-validation", 3) | (b"aof-flush-sleep", 3) | (b"pause-cron", 3) => {
            Ok(Reply::ok())
        }
        (b"quicklist-packed-threshold", 3) => {
            let size = std::str::from_utf8(&args[2])
                .ok()
                .and_then(crate::config::parse_memory);
            match size {
                Some(size) if size <= (1u64 << 32) - (1 << 20) => Ok(Reply::ok()),
                _ => Err(CmdError::Static(
                    "ERR argument must be a memory value bigger than 1 and smaller than 4gb",
                )),
            }
        }
        (b"stringmatch-test", 2) => {
            Ok(Reply::simple("Apparently Redis did not crash: test passed"))
        }
        (b"change-repl-id", 2) => {
            ctx.server.replication.ids.lock().replid = random_hex_id();
            tracing::warn!("Changing replication IDs after receiving DEBUG change-repl-id");
            Ok(Reply::ok())
        }
        (b"protocol", 3) => protocol(ctx.session.protocol, &args[2]),
        (b"object", 3) => object(ctx, &args[2]),
        (b"listpack", 3) => encoding_check(ctx, &args[2], "listpack"),
        (b"quicklist", 3 | 4) => encoding_check(ctx, &args[2], "quicklist"),
        (b"digest", 2) => digest(ctx),
        (b"digest-value", _) => digest_value(ctx, &args[2..]),
        (b"reload", _) => reload(ctx, &args[2..]),
        _ => Err(subcommand_syntax("debug", &args[1])),
    }
}

/// C's `atoi`: the leading integer, 0 when there is none.
fn atoi(arg: &[u8]) -> i64 {
    // strtod reads a number's prefix; no number needs more than 64 bytes,
    // and a longer argument must not cost a parse per prefix length.
    let text = String::from_utf8_lossy(&arg[..arg.len().min(64)]);
    let text = text.trim_start();
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    sign * digits[..end].parse::<i64>().unwrap_or(0)
}

/// SLEEP's seconds as C's `strtod` reads them (the longest number at the
/// start, else 0); a negative or unreadable time does not wait.
fn sleep_arg(arg: &[u8]) -> Duration {
    let text = String::from_utf8_lossy(arg);
    let text = text.trim_start();
    let seconds = (1..=text.len())
        .rev()
        .filter(|&end| text.is_char_boundary(end))
        .find_map(|end| text[..end].parse::<f64>().ok())
        .unwrap_or(0.0);
    if seconds.is_finite() && seconds > 0.0 {
        Duration::from_secs_f64(seconds.min(u32::MAX as f64))
    } else {
        Duration::ZERO
    }
}

fn random_hex_id() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    (0..40)
        .map(|_| format!("{:x}", rng.random_range(0..16u8)))
        .collect()
}

/// Redis's sample replies of each type (debug.c).
fn protocol(proto: Protocol, name: &[u8]) -> CmdResult {
    let resp3 = proto == Protocol::Resp3;
    let bulk = |text: &'static str| Reply::Bulk(Bytes::from_static(text.as_bytes()));
    let counting = || (0..3).map(Reply::Integer).collect::<Vec<_>>();
    Ok(match name.to_ascii_lowercase().as_slice() {
        b"string" => bulk("Hello World"),
        b"integer" => Reply::Integer(12345),
        // Redis's sample value, not an approximation of pi.
        #[allow(clippy::approx_constant)]
        b"double" => Reply::Double(3.141),
        b"bignum" => Reply::BigNumber(Bytes::from_static(b"1234567999999999999999999999999999999")),
        b"null" => Reply::Null,
        b"array" => Reply::Array(counting()),
        b"set" => Reply::Set(counting()),
        b"map" => Reply::Map(
            (0..3)
                .map(|j| (Reply::Integer(j), Reply::Boolean(j == 1)))
                .collect(),
        ),
        b"attrib" => Reply::Sequence(vec![
            Reply::Attribute(vec![(
                bulk("key-popularity"),
                Reply::Array(vec![bulk("key:123"), Reply::Integer(90)]),
            )]),
            bulk("Some real reply following the attribute"),
        ]),
        b"push" if !resp3 => {
            return Err(CmdError::Static("ERR RESP2 is not supported by this command"))
        }
        b"push" => Reply::Sequence(vec![
            Reply::Push(vec![bulk("server-cpu-usage"), Reply::Integer(42)]),
            bulk("Some real reply following the push reply"),
        ]),
        b"true" => Reply::Boolean(true),
        b"false" => Reply::Boolean(false),
        b"verbatim" => Reply::Verbatim {
            format: *b"txt",
            text: Bytes::from_static(b"This is a verbatim\nstring"),
        },
        _ => return Err(CmdError::Static(
            "ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false",
        )),
    })
}

/// What OBJECT ENCODING replies for the value `meta` describes.
fn encoding_of(meta: &Meta) -> &'static str {
    match meta.value_type {
        ValueType::String => super::collection::string_encoding(meta),
        _ => super::collection::object_encoding(meta),
    }
}

/// OBJECT <key>: Redis's line, with Firn's figures. The address is the
/// key's (stable while the key lives, as an in-place change keeps Redis's
/// object); the serialized length is the DUMP payload's, less its type
/// byte and footer (Redis's rdbSavedObjectLen); the LRU fields come from
/// the key's last access (OBJECT IDLETIME).
fn object(ctx: &mut Ctx<'_>, key: &Bytes) -> CmdResult {
    let db = ctx.db();
    ctx.txn.set_read_lookups(false);
    let Some(meta) = ctx.txn.meta(db, key)? else {
        return Err(CmdError::Static(NO_SUCH_KEY));
    };
    let payload = super::keyspace::dump_payload(ctx, key, &meta)?;
    let serialized = payload.len().saturating_sub(11);
    let now_secs = firn_storage::now_ms() / 1000;
    let idle = match ctx.server.access_times.last_access(db, key, now_secs) {
        Some(at_secs) => now_secs.saturating_sub(at_secs),
        None => ctx.server.uptime_secs(),
    };
    // Redis's LRU clock: seconds, 24 bits.
    let lru = now_secs.saturating_sub(idle) & ((1 << 24) - 1);
    let mut address = sha1_smol::Sha1::new();
    address.update(&[db]);
    address.update(key);
    let bytes = address.digest().bytes();
    let address = u64::from_le_bytes(bytes[..8].try_into().unwrap_or_default()) & 0x00ff_ffff_fff0;
    let mut line = format!(
        "Value at:0x{:x} refcount:1 encoding:{} serializedlength:{serialized} lru:{lru} lru_seconds_idle:{idle}",
        0x7f00_0000_0000 | address,
        encoding_of(&meta)
    );
    if meta.value_type == ValueType::List {
        // One node holds the list, uncompressed (Firn keeps no quicklist).
        let len = match super::keyspace::value_of(ctx, key, &meta)? {
            RdbValue::List(items) => items.iter().map(|i| i.len() as u64).sum::<u64>(),
            _ => 0,
        };
        let count = firn_storage::Collection::of_meta(&meta).map_or(0, |c| c.size);
        line.push_str(&format!(
            " ql_nodes:1 ql_avg_node:{count}.00 ql_listpack_max:-2 ql_compressed:0 ql_uncompressed_size:{len}"
        ));
    }
    Ok(Reply::simple(line))
}

/// LISTPACK / QUICKLIST <key>: Redis prints the structure on its standard
/// output; Firn has none to print, and replies as Redis does after
/// printing when the key has that encoding.
fn encoding_check(ctx: &mut Ctx<'_>, key: &Bytes, wanted: &'static str) -> CmdResult {
    let db = ctx.db();
    ctx.txn.set_read_lookups(false);
    let Some(meta) = ctx.txn.meta(db, key)? else {
        return Err(CmdError::Static(NO_SUCH_KEY));
    };
    match (encoding_of(&meta) == wanted, wanted) {
        (true, "listpack") => Ok(Reply::simple("Listpack structure printed on stdout")),
        (true, _) => Ok(Reply::simple("Quicklist structure printed on stdout")),
        (false, "listpack") => Err(CmdError::Static("ERR Not a listpack encoded object.")),
        (false, _) => Err(CmdError::Static("ERR Not a quicklist encoded object.")),
    }
}

/// RELOAD: Redis saves its RDB file and loads it back. Firn's data is
/// always on disk, so it restarts the engine in place (`Engine::reload`):
/// every write durable, the memory tables flushed, the caches emptied.
/// Its progress (column families flushed) is the "debug-reload" operation.
fn reload(ctx: &mut Ctx<'_>, options: &[Bytes]) -> CmdResult {
    for opt in options {
        let known = [&b"merge"[..], b"noflush", b"nosave"]
            .iter()
            .any(|o| opt.eq_ignore_ascii_case(o));
        if !known {
            return Err(CmdError::Static(
                "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.",
            ));
        }
    }
    ctx.deferred = Some(Deferred::Blocking(Box::new(|server| {
        let operation = server.progress.start("debug-reload", "column-families", 0);
        let reloaded = server.engine.reload_with_progress(|done, total| {
            operation.set_total(total);
            operation.set_done(done);
        });
        operation.finish();
        match reloaded {
            Ok(()) => {
                tracing::warn!("DB reloaded by DEBUG RELOAD");
                Reply::ok()
            }
            Err(e) => CmdError::Storage(e).into_reply(),
        }
    })));
    Ok(Reply::ok())
}

fn hex(digest: &[u8; 20]) -> Reply {
    let text: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Reply::simple(text)
}

/// DIGEST-VALUE key...: one digest per key, zeros for a missing key.
fn digest_value(ctx: &mut Ctx<'_>, keys: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    ctx.txn.set_read_lookups(false);
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        let mut digest = [0u8; 20];
        if let Some(meta) = ctx.txn.meta(db, key)? {
            let value = super::keyspace::value_of(ctx, key, &meta)?;
            object_digest(&mut digest, &value, meta.expire_at_ms != 0);
        }
        out.push(hex(&digest));
    }
    Ok(Reply::Array(out))
}

/// DIGEST: every key of every database (Redis's computeDatasetDigest).
fn digest(ctx: &mut Ctx<'_>) -> CmdResult {
    // It reads everything: on the cold-read pool, never a network thread.
    super::offload::off_thread_if(ctx, u64::MAX)?;
    ctx.txn.set_read_lookups(false);
    let session_db = ctx.session.db;
    let mut fin = [0u8; 20];
    let mut result = Ok(());
    for db in 0..ctx.server.engine.databases() as u8 {
        let keys = match ctx.txn.scan_keys(db, None, usize::MAX, |_, _| true) {
            Ok(page) => page.keys,
            Err(e) => {
                result = Err(CmdError::Storage(e));
                break;
            }
        };
        if keys.is_empty() {
            continue;
        }
        mix_digest(&mut fin, &(db as u32).to_be_bytes());
        // The value readers read the session's database.
        ctx.session.db = db;
        for key in keys {
            let meta = match ctx.txn.meta(db, &key) {
                Ok(Some(meta)) => meta,
                Ok(None) => continue,
                Err(e) => {
                    result = Err(CmdError::Storage(e));
                    break;
                }
            };
            let value = match super::keyspace::value_of(ctx, &key, &meta) {
                Ok(value) => value,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            let mut digest = [0u8; 20];
            mix_digest(&mut digest, &key);
            object_digest(&mut digest, &value, meta.expire_at_ms != 0);
            xor_digest(&mut fin, &digest);
        }
        if result.is_err() {
            break;
        }
    }
    ctx.session.db = session_db;
    result?;
    Ok(hex(&fin))
}

/// Redis's xorDigest: XORs SHA1(data) into the digest (order-free).
fn xor_digest(digest: &mut [u8; 20], data: &[u8]) {
    let hash = sha1_smol::Sha1::from(data).digest().bytes();
    for (d, h) in digest.iter_mut().zip(hash) {
        *d ^= h;
    }
}

/// Redis's mixDigest: digest = SHA1(digest XOR SHA1(data)) (ordered).
fn mix_digest(digest: &mut [u8; 20], data: &[u8]) {
    xor_digest(digest, data);
    *digest = sha1_smol::Sha1::from(&digest[..]).digest().bytes();
}

/// Redis's xorObjectDigest, over the value as RDB reads it.
fn object_digest(digest: &mut [u8; 20], value: &RdbValue, expires: bool) {
    // Redis's OBJ_* type codes.
    let code: u32 = match value {
        RdbValue::String(_) => 0,
        RdbValue::List(_) => 1,
        RdbValue::Set(_) => 2,
        RdbValue::SortedSet(_) => 3,
        RdbValue::Hash(_) => 4,
        RdbValue::Stream(_) => 6,
    };
    mix_digest(digest, &code.to_be_bytes());
    match value {
        RdbValue::String(bytes) => mix_digest(digest, bytes),
        RdbValue::List(items) => {
            for item in items {
                mix_digest(digest, item);
            }
        }
        RdbValue::Set(members) => {
            for member in members {
                xor_digest(digest, member);
            }
        }
        RdbValue::SortedSet(members) => {
            for (member, score) in members {
                let mut element = [0u8; 20];
                mix_digest(&mut element, member);
                mix_digest(&mut element, firn_resp::format_double(*score).as_bytes());
                xor_digest(digest, &element);
            }
        }
        RdbValue::Hash(pairs) => {
            for (field, value) in pairs {
                let mut element = [0u8; 20];
                mix_digest(&mut element, field);
                mix_digest(&mut element, value);
                xor_digest(digest, &element);
            }
        }
        RdbValue::Stream(stream) => {
            for (id, fields) in &stream.entries {
                mix_digest(digest, format!("{}.{}", id.ms, id.seq).as_bytes());
                for (field, value) in fields {
                    mix_digest(digest, field);
                    mix_digest(digest, value);
                }
            }
        }
    }
    if expires {
        xor_digest(digest, b"!!expire!!");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_reads_seconds_as_strtod() {
        assert_eq!(sleep_arg(b"0"), Duration::ZERO);
        assert_eq!(sleep_arg(b"0.25"), Duration::from_millis(250));
        assert_eq!(sleep_arg(b"1xyz"), Duration::from_secs(1));
        assert_eq!(sleep_arg(b"-3"), Duration::ZERO);
        assert_eq!(sleep_arg(b"abc"), Duration::ZERO);
    }

    #[test]
    fn atoi_reads_the_leading_integer() {
        assert_eq!(atoi(b"1"), 1);
        assert_eq!(atoi(b"0"), 0);
        assert_eq!(atoi(b"12abc"), 12);
        assert_eq!(atoi(b"x"), 0);
        assert_eq!(atoi(b"-2"), -2);
    }

    #[test]
    fn a_missing_value_digests_to_zeros_and_order_matters_only_for_lists() {
        let list =
            |items: &[&str]| RdbValue::List(items.iter().map(|s| s.as_bytes().to_vec()).collect());
        let set =
            |items: &[&str]| RdbValue::Set(items.iter().map(|s| s.as_bytes().to_vec()).collect());
        let of = |value: &RdbValue| {
            let mut d = [0u8; 20];
            object_digest(&mut d, value, false);
            d
        };
        assert_ne!(of(&list(&["a", "b"])), of(&list(&["b", "a"])));
        assert_eq!(of(&set(&["a", "b"])), of(&set(&["b", "a"])));
        let mut expiring = [0u8; 20];
        object_digest(&mut expiring, &set(&["a", "b"]), true);
        assert_ne!(expiring, of(&set(&["a", "b"])));
    }
}
