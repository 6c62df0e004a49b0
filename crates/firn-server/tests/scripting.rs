//! Multi-client scripting behaviour: a busy script makes other clients get
//! BUSY until SCRIPT KILL ends it (or, once it wrote, UNKILLABLE); a script
//! is atomic against a concurrent writer on declared and undeclared keys;
//! a script reading data that is only on disk returns it while other
//! clients keep being served; script writes survive a restart.

use firn_testkit::info::{self, Info};
use firn_testkit::{Conn, Server, R};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BUSY: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";

fn send(c: &mut Conn, args: &[&str]) {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    c.send(&args);
}

/// Polls PING on `c` until it answers BUSY (within 10 s).
fn wait_busy(c: &mut Conn) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match c.cmd(&["PING"]) {
            R::Error(text) if text == BUSY => return,
            other => {
                assert!(
                    Instant::now() < deadline,
                    "never busy: last reply {}",
                    other.render()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

#[test]
fn a_busy_script_gets_busy_replies_and_script_kill_ends_it() {
    let server = Server::firn_with(&["--busy-reply-threshold", "200"]);
    let mut runner = server.conn();
    let mut other = server.conn();
    assert_eq!(
        other.cmd(&["SCRIPT", "KILL"]).error_text(),
        Some("NOTBUSY No scripts in execution right now.")
    );
    send(
        &mut runner,
        &["EVAL", "local i = 0 while true do i = i + 1 end", "0"],
    );
    wait_busy(&mut other);
    assert_eq!(other.cmd(&["GET", "x"]).error_text(), Some(BUSY));
    assert_eq!(other.cmd(&["SET", "x", "1"]).error_text(), Some(BUSY));
    // FUNCTION KILL does not end a script.
    assert_eq!(other.cmd(&["FUNCTION", "KILL"]).error_text(), Some(BUSY));
    assert_eq!(other.cmd(&["SCRIPT", "KILL"]), R::Simple("OK".into()));
    let (_, reply) = runner.read_reply();
    let text = reply.error_text().unwrap_or_default().to_string();
    assert!(
        text.starts_with("ERR Script killed by user with SCRIPT KILL... script: "),
        "{text}"
    );
    assert_eq!(other.cmd(&["PING"]), R::Simple("PONG".into()));
    assert_eq!(runner.cmd(&["EVAL", "return 1", "0"]), R::Int(1));
    assert_eq!(
        other.cmd(&["SCRIPT", "KILL"]).error_text(),
        Some("NOTBUSY No scripts in execution right now.")
    );
}

#[test]
fn a_pcall_cannot_swallow_script_kill() {
    let server = Server::firn_with(&["--busy-reply-threshold", "100"]);
    let mut runner = server.conn();
    let mut other = server.conn();
    send(
        &mut runner,
        &[
            "EVAL",
            "while true do pcall(function() local i = 0 while true do i = i + 1 end end) end",
            "0",
        ],
    );
    wait_busy(&mut other);
    assert_eq!(other.cmd(&["SCRIPT", "KILL"]), R::Simple("OK".into()));
    let (_, reply) = runner.read_reply();
    assert!(reply.is_error(), "{}", reply.render());
    assert_eq!(other.cmd(&["PING"]), R::Simple("PONG".into()));
}

#[test]
fn a_script_that_wrote_cannot_be_killed() {
    let server = Server::firn_with(&["--busy-reply-threshold", "100"]);
    let mut runner = server.conn();
    let mut other = server.conn();
    // Writes, then spins for about 1.5 s of server time.
    send(
        &mut runner,
        &[
            "EVAL",
            "redis.call('set', KEYS[1], 'written') \
             local t = redis.call('time') local start = t[1] * 1000000 + t[2] \
             while true do local n = redis.call('time') \
               if n[1] * 1000000 + n[2] - start > 1500000 then break end end \
             return 'done'",
            "1",
            "k",
        ],
    );
    wait_busy(&mut other);
    let unkillable = other.cmd(&["SCRIPT", "KILL"]);
    assert!(
        unkillable.error_text().is_some_and(
            |t| t.starts_with("UNKILLABLE Sorry the script already executed write commands")
        ),
        "{}",
        unkillable.render()
    );
    let (_, reply) = runner.read_reply();
    assert_eq!(reply, R::bulk(b"done"));
    assert_eq!(other.cmd(&["GET", "k"]), R::bulk(b"written"));
}

/// A script reads a key twice with a busy loop in between while another
/// client increments it: both reads see the same value.
fn assert_atomic_reads(script: &str, numkeys: &str) {
    let server = Server::firn();
    let mut setup = server.conn();
    setup.cmd(&["SET", "counter", "0"]);
    let stop = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(AtomicU64::new(0));
    let port = server.port();
    let writer = {
        let stop = stop.clone();
        let writes = writes.clone();
        std::thread::spawn(move || {
            let mut c = Conn::connect(port);
            while !stop.load(Ordering::Relaxed) {
                assert!(matches!(c.cmd(&["INCR", "counter"]), R::Int(_)));
                writes.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let mut c = server.conn();
    let deadline = Instant::now() + Duration::from_secs(10);
    while writes.load(Ordering::Relaxed) < 10 {
        assert!(Instant::now() < deadline, "the writer never ran");
        std::thread::sleep(Duration::from_millis(5));
    }
    for _ in 0..20 {
        let reply = if numkeys == "1" {
            c.cmd(&["EVAL", script, "1", "counter"])
        } else {
            c.cmd(&["EVAL", script, "0"])
        };
        let items = reply.items().to_vec();
        assert_eq!(items.len(), 2, "{}", reply.render());
        assert_eq!(
            items[0],
            items[1],
            "a write was interleaved: {}",
            reply.render()
        );
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().expect("writer");
    assert!(writes.load(Ordering::Relaxed) > 10);
}

#[test]
fn scripts_are_atomic_on_declared_keys() {
    assert_atomic_reads(
        "local a = redis.call('get', KEYS[1]) for i = 1, 300000 do end \
         local b = redis.call('get', KEYS[1]) return {a, b}",
        "1",
    );
}

#[test]
fn scripts_are_atomic_on_undeclared_keys() {
    assert_atomic_reads(
        "local a = redis.call('get', 'counter') for i = 1, 300000 do end \
         local b = redis.call('get', 'counter') return {a, b}",
        "0",
    );
}

fn value_of(i: usize) -> String {
    format!("{i:06}-").repeat(250)
}

#[test]
fn a_script_reads_cold_data_while_other_clients_are_served() {
    let mut server = Server::firn_with(&["--maxmemory", "16mb", "--io-threads", "2"]);
    let mut c = server.conn();
    let keys = 4000;
    for start in (0..keys).step_by(200) {
        let mut args: Vec<String> = vec!["MSET".into()];
        for i in start..start + 200 {
            args.push(format!("key:{i}"));
            args.push(value_of(i));
        }
        let refs: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        c.cmd(&refs);
    }
    c.cmd(&["SET", "hot", "h"]);
    // After a restart the data is in SST files, not in memory.
    server.restart();
    let mut c = server.conn();
    let stop = Arc::new(AtomicBool::new(false));
    let served = Arc::new(AtomicU64::new(0));
    let port = server.port();
    let reader = {
        let stop = stop.clone();
        let served = served.clone();
        std::thread::spawn(move || {
            let mut hot = Conn::connect(port);
            while !stop.load(Ordering::Relaxed) {
                assert_eq!(hot.cmd(&["GET", "hot"]), R::bulk(b"h"));
                served.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let script =
        "local out = {} for i = 1, #ARGV do out[i] = redis.call('get', 'key:' .. ARGV[i]) end \
                  redis.call('set', 'copied', out[#out]) return out";
    for round in 0..5 {
        let ids: Vec<String> = (0..50)
            .map(|j| (round * 700 + j * 13) % keys)
            .map(|i| i.to_string())
            .collect();
        let mut args: Vec<&str> = vec!["EVAL", script, "0"];
        args.extend(ids.iter().map(|s| s.as_str()));
        let reply = c.cmd(&args);
        let items = reply.items();
        assert_eq!(items.len(), ids.len(), "{}", reply.render());
        for (item, id) in items.iter().zip(&ids) {
            let i: usize = id.parse().expect("id");
            assert_eq!(*item, R::bulk(value_of(i).as_bytes()));
        }
        let last: usize = ids[ids.len() - 1].parse().expect("id");
        assert_eq!(
            c.cmd(&["GET", "copied"]),
            R::bulk(value_of(last).as_bytes())
        );
    }
    stop.store(true, Ordering::Relaxed);
    reader.join().expect("reader");
    assert!(served.load(Ordering::Relaxed) > 0);
}

#[test]
fn scripts_read_cold_data_in_cold_mode_too() {
    let server = Server::firn_with(&["--debug-cold-reads", "yes"]);
    let mut c = server.conn();
    c.cmd(&["SET", "a", "1"]);
    c.cmd(&["RPUSH", "l", "x", "y"]);
    let reply = c.cmd(&[
        "EVAL",
        "redis.call('incr', KEYS[1]) return {redis.call('get', KEYS[1]), redis.call('lrange', 'l', 0, -1)}",
        "1",
        "a",
    ]);
    assert_eq!(
        reply,
        R::Array(Some(vec![
            R::bulk(b"2"),
            R::Array(Some(vec![R::bulk(b"x"), R::bulk(b"y")]))
        ]))
    );
}

#[test]
fn script_writes_survive_kill9() {
    let mut server = Server::firn();
    let mut c = server.conn();
    c.cmd(&[
        "EVAL",
        "redis.call('set', 'a', '1') redis.call('rpush', 'l', 'x') return 1",
        "0",
    ]);
    server.kill9_restart();
    let mut c = server.conn();
    assert_eq!(c.cmd(&["GET", "a"]), R::bulk(b"1"));
    assert_eq!(
        c.cmd(&["LRANGE", "l", "0", "-1"]),
        R::Array(Some(vec![R::bulk(b"x")]))
    );
}

#[test]
fn info_reports_scripts_and_lua_memory() {
    let server = Server::firn();
    let mut c = server.conn();
    c.cmd(&["SCRIPT", "LOAD", "return 1"]);
    c.cmd(&["EVAL", "return 2", "0"]);
    let memory = Info::read(&mut c, "memory");
    assert_eq!(memory.field("number_of_cached_scripts"), 2);
    assert!(memory.field("used_memory_lua") > 0);
    assert_eq!(memory.field("used_memory_scripts_eval"), 16);
    c.cmd(&["SCRIPT", "FLUSH"]);
    assert_eq!(info::field(&mut c, "memory", "number_of_cached_scripts"), 0);
}

const LIBRARY: &str = "#!lua name=counters\n\
redis.register_function('bump', function(keys) return redis.call('incr', keys[1]) end)";

#[test]
fn functions_survive_restart_and_kill9() {
    let mut server = Server::firn();
    let mut c = server.conn();
    assert_eq!(c.cmd(&["FUNCTION", "LOAD", LIBRARY]), R::bulk(b"counters"));
    assert_eq!(c.cmd(&["FCALL", "bump", "1", "n"]), R::Int(1));
    server.restart();
    let mut c = server.conn();
    assert_eq!(c.cmd(&["FCALL", "bump", "1", "n"]), R::Int(2));
    c.cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=other\nredis.register_function('two', function() return 2 end)",
    ]);
    server.kill9_restart();
    let mut c = server.conn();
    assert_eq!(c.cmd(&["FCALL", "bump", "1", "n"]), R::Int(3));
    assert_eq!(c.cmd(&["FCALL", "two", "0"]), R::Int(2));
    assert_eq!(
        c.cmd(&["FUNCTION", "DELETE", "other"]),
        R::Simple("OK".into())
    );
    server.kill9_restart();
    let mut c = server.conn();
    assert_eq!(
        c.cmd(&["FCALL", "two", "0"]).error_text(),
        Some("ERR Function not found")
    );
    assert_eq!(c.cmd(&["FCALL", "bump", "1", "n"]), R::Int(4));
    // SCRIPT FLUSH resets the VM but keeps the libraries.
    c.cmd(&["SCRIPT", "FLUSH"]);
    assert_eq!(c.cmd(&["FCALL", "bump", "1", "n"]), R::Int(5));
    c.cmd(&["FUNCTION", "FLUSH"]);
    server.restart();
    let mut c = server.conn();
    assert_eq!(c.cmd(&["FUNCTION", "LIST"]), R::Array(Some(vec![])));
}

#[test]
fn a_busy_function_gets_function_kill() {
    let server = Server::firn_with(&["--busy-reply-threshold", "100"]);
    let mut runner = server.conn();
    let mut other = server.conn();
    other.cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=spin\nredis.register_function('spin', function() while true do end end)",
    ]);
    send(&mut runner, &["FCALL", "spin", "0"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match other.cmd(&["PING"]) {
            R::Error(text) if text.starts_with("BUSY") => {
                assert_eq!(
                    text,
                    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
                );
                break;
            }
            _ => {
                assert!(Instant::now() < deadline, "never busy");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    let stats = other.cmd(&["FUNCTION", "STATS"]);
    assert!(stats.render().contains("spin"), "{}", stats.render());
    assert!(other
        .cmd(&["SCRIPT", "KILL"])
        .error_text()
        .is_some_and(|t| t.starts_with("BUSY")));
    assert_eq!(other.cmd(&["FUNCTION", "KILL"]), R::Simple("OK".into()));
    let (_, reply) = runner.read_reply();
    assert!(reply.is_error(), "{}", reply.render());
    assert_eq!(other.cmd(&["PING"]), R::Simple("PONG".into()));
}

#[test]
fn monitor_shows_the_commands_scripts_run() {
    let server = Server::firn();
    let mut monitor = server.conn();
    assert_eq!(monitor.cmd(&["MONITOR"]), R::Simple("OK".into()));
    let mut c = server.conn();
    c.cmd(&[
        "EVAL",
        "redis.call('set', KEYS[1], '1') return redis.call('get', KEYS[1])",
        "1",
        "a",
    ]);
    let mut lines = Vec::new();
    for _ in 0..3 {
        match monitor.read_reply().1 {
            R::Simple(line) => lines.push(line),
            other => panic!("monitor: {}", other.render()),
        }
    }
    assert!(lines[0].contains("\"EVAL\""), "{lines:?}");
    assert!(
        lines[1].ends_with("[0 lua] \"set\" \"a\" \"1\""),
        "{lines:?}"
    );
    assert!(lines[2].ends_with("[0 lua] \"get\" \"a\""), "{lines:?}");
}

#[test]
fn a_script_that_fills_the_vm_fails_and_the_next_one_runs() {
    let server = Server::firn_with(&["--maxmemory", "64mb"]);
    let mut c = server.conn();
    for script in [
        "local t = {} for i = 1, 1e9 do t[i] = i end",
        "local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 100) .. i end",
        "return string.rep('x', 1e9)",
    ] {
        let reply = c.cmd(&["EVAL", script, "0"]);
        assert!(
            reply
                .error_text()
                .is_some_and(|t| t.contains("not enough memory")),
            "{}",
            reply.render()
        );
        assert_eq!(c.cmd(&["EVAL", "return 1", "0"]), R::Int(1));
    }
    let reply = c.cmd(&[
        "EVAL",
        "local ok = pcall(function() local t = {} for i = 1, 1e9 do t[i] = i end end) return tostring(ok)",
        "0",
    ]);
    assert!(
        reply.is_error() || reply == R::bulk(b"false"),
        "{}",
        reply.render()
    );
    assert!(c
        .cmd(&[
            "EVAL",
            "local function f(n) return f(n + 1) + 1 end return f(1)",
            "0"
        ])
        .is_error());
    assert_eq!(c.cmd(&["PING"]), R::Simple("PONG".into()));
}

/// Redis's "EVAL does not leak in the Lua stack": thousands of scripts
/// leave the VM small, because a collection step runs every 50 scripts as
/// in Redis (LUA_GC_CYCLE_PERIOD). Run on redis-server and Firn alike.
#[test]
fn many_scripts_leave_the_vm_small_as_redis() {
    for server in [Server::redis(), Server::firn()] {
        let mut c = server.conn();
        c.cmd(&["SCRIPT", "FLUSH"]);
        for _ in 0..3000 {
            c.send(&[b"EVAL", b"return redis.call('incr', KEYS[1])", b"1", b"x"]);
        }
        for _ in 0..3000 {
            c.read_reply();
        }
        let lua = firn_testkit::info::field(&mut c, "memory", "used_memory_lua");
        assert!(lua < 100 * 1024, "used_memory_lua {lua}");
        assert_eq!(c.cmd(&["GET", "x"]), R::Bulk(Some(b"3000".to_vec())));
    }
}
