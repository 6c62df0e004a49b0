//! Differential tests of Lua scripting against redis-server 7.0.15: EVAL,
//! EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT; the `redis` API; conversions
//! between replies and Lua values both ways, in RESP2 and RESP3 (the
//! client's protocol and the script's `redis.setresp`); error replies of
//! `redis.call` and `redis.pcall` and of failing scripts; shebang flags;
//! and the sandbox catalogue (protected globals, missing libraries,
//! `loadstring` of bytecode, Redis's own `pcall`).

use firn_testkit::Diff;

/// EVAL with `numkeys_keys_args`: numkeys, then keys and arguments.
fn eval(d: &mut Diff, script: &str, numkeys_keys_args: &[&str]) {
    let mut args = vec!["EVAL", script];
    args.extend_from_slice(numkeys_keys_args);
    d.cmd(&args);
}

/// EVAL with numkeys 0.
fn eval0(d: &mut Diff, script: &str) {
    d.cmd(&["EVAL", script, "0"]);
}

fn resp3(d: &mut Diff) {
    d.cmd_type_only(&["HELLO", "3"]);
}

// ---------------------------------------------------------------- EVAL family

#[test]
fn eval_checks_its_arguments() {
    let mut d = Diff::new();
    d.cmd(&["EVAL", "return 1", "-1"]);
    d.cmd(&["EVAL", "return 1", "2", "a"]);
    d.cmd(&["EVAL", "return 1", "x"]);
    d.cmd(&["EVAL", "return 1"]);
    d.cmd(&["EVAL"]);
    d.cmd(&["EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"]);
    d.cmd(&["EVALSHA", "fff", "0"]);
    d.cmd(&["EVALSHA", "fff", "x"]);
    d.cmd(&["EVAL_RO", "return 1", "-3"]);
    d.cmd(&[
        "EVALSHA_RO",
        "ffffffffffffffffffffffffffffffffffffffff",
        "0",
    ]);
}

#[test]
fn keys_and_argv_reach_the_script() {
    let mut d = Diff::new();
    eval(
        &mut d,
        "return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV}",
        &["2", "k1", "k2", "a1", "a2"],
    );
    eval(&mut d, "return {#KEYS, #ARGV}", &["0"]);
    eval(&mut d, "return ARGV", &["0", "x", "", "z"]);
}

#[test]
fn script_load_exists_flush_and_evalsha() {
    let mut d = Diff::new();
    d.cmd(&["SCRIPT", "LOAD", "return 'loaded'"]);
    d.cmd(&["EVALSHA", "6b1bf486c81ceb7edf3c093f4c48582e38c0e791", "0"]);
    d.cmd(&["EVALSHA", "6B1BF486C81CEB7EDF3C093F4C48582E38C0E791", "0"]);
    d.cmd(&[
        "EVALSHA_RO",
        "6b1bf486c81ceb7edf3c093f4c48582e38c0e791",
        "0",
    ]);
    d.cmd(&[
        "SCRIPT",
        "EXISTS",
        "6b1bf486c81ceb7edf3c093f4c48582e38c0e791",
        "ffffffffffffffffffffffffffffffffffffffff",
        "6B1BF486C81CEB7EDF3C093F4C48582E38C0E791",
    ]);
    eval0(&mut d, "return 'by eval'");
    d.cmd(&["EVALSHA", "c4e8eb7cf5f5ea4b4c2b1b3c1b41d6f0b4a3c0b2", "0"]);
    d.cmd(&["SCRIPT", "LOAD", "return 1 +"]);
    d.cmd(&["SCRIPT", "FLUSH", "FOO"]);
    d.cmd(&["SCRIPT", "FLUSH", "ASYNC", "SYNC"]);
    d.cmd(&["SCRIPT", "FLUSH", "SYNC"]);
    d.cmd(&[
        "SCRIPT",
        "EXISTS",
        "6b1bf486c81ceb7edf3c093f4c48582e38c0e791",
    ]);
    d.cmd(&["EVALSHA", "6b1bf486c81ceb7edf3c093f4c48582e38c0e791", "0"]);
    d.cmd(&["SCRIPT", "LOAD", "return 2"]);
    d.cmd(&["SCRIPT", "FLUSH", "ASYNC"]);
    d.cmd(&["SCRIPT", "FLUSH"]);
    d.cmd(&["SCRIPT", "EXISTS"]);
    d.cmd(&["SCRIPT", "LOAD"]);
    d.cmd(&["SCRIPT", "KILL"]);
    d.cmd(&["SCRIPT", "KILL", "x"]);
    d.cmd(&["SCRIPT", "HELP"]);
    d.cmd(&["SCRIPT", "DEBUG", "NO"]);
    d.cmd(&["SCRIPT", "DEBUG", "FOO"]);
    d.cmd(&["SCRIPT", "NOSUCH"]);
}

#[test]
fn writes_and_reads_inside_scripts() {
    let mut d = Diff::new();
    eval(
        &mut d,
        "redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])",
        &["1", "k", "v1"],
    );
    d.cmd(&["GET", "k"]);
    eval(
        &mut d,
        "local n = redis.call('incr', KEYS[1]); redis.call('incrby', KEYS[1], 10); return {n, redis.call('get', KEYS[1])}",
        &["1", "counter"],
    );
    // Keys not declared in KEYS are served too.
    eval0(&mut d, "redis.call('rpush', 'undeclared', 'a', 'b'); return redis.call('lrange', 'undeclared', 0, -1)");
    d.cmd(&["LRANGE", "undeclared", "0", "-1"]);
    // Writes before an error stay.
    eval0(&mut d, "redis.call('set', 'kept', '1'); error('late')");
    d.cmd(&["GET", "kept"]);
    // SELECT inside a script does not change the caller's database.
    eval0(
        &mut d,
        "redis.call('select', 1); redis.call('set', 'in1', 'x'); return redis.call('get', 'in1')",
    );
    d.cmd(&["GET", "in1"]);
    d.cmd(&["SELECT", "1"]);
    d.cmd(&["GET", "in1"]);
    d.cmd(&["SELECT", "0"]);
    // (DBSIZE and KEYS do not see the script's own writes: see
    // compatibility.md.)
    eval0(&mut d, "return redis.call('set', 'z1', '1')");
    eval0(&mut d, "return {redis.call('dbsize'), redis.call('keys', 'z*'), redis.call('scan', 0, 'match', 'z*')}");
    eval0(&mut d, "return {redis.call('exists', 'z1'), redis.call('randomkey') ~= nil, type(redis.call('time'))}");
    eval0(&mut d, "return redis.call('flushall')");
    d.cmd(&["DBSIZE"]);
}

#[test]
fn read_only_scripts_refuse_writes() {
    let mut d = Diff::new();
    d.cmd(&["EVAL_RO", "return redis.call('set', 'a', 'b')", "0"]);
    d.cmd(&["EVAL_RO", "return redis.pcall('set', 'a', 'b')", "0"]);
    d.cmd(&["EVAL_RO", "return redis.call('get', 'a')", "0"]);
    d.cmd(&[
        "EVAL",
        "#!lua flags=no-writes\nreturn redis.call('set','a','b')",
        "0",
    ]);
    d.cmd(&[
        "EVAL",
        "#!lua flags=no-writes\nreturn redis.call('get','a')",
        "0",
    ]);
    // Commands Redis marks may-replicate count as writes here too.
    d.cmd(&["EVAL_RO", "return redis.call('publish', 'c', 'm')", "0"]);
    d.cmd(&["EVAL_RO", "return redis.pcall('pfcount', 'h')", "0"]);
    d.cmd(&[
        "EVAL",
        "#!lua flags=no-writes\nreturn redis.call('spublish','c','m')",
        "0",
    ]);
    d.cmd(&["EVAL_RO", "#!lua\nreturn 1", "0"]);
    d.cmd(&["EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0"]);
    d.cmd(&["EVAL", "#!lua\nreturn redis.call('set','a','c')", "0"]);
    d.cmd(&["GET", "a"]);
}

#[test]
fn shebang_lines() {
    let mut d = Diff::new();
    for script in [
        "#!lua flags=no-writes,bad\nreturn 1",
        "#!luax\nreturn 1",
        "#!lua foo=bar\nreturn 1",
        "#!lua",
        "#!lua flags=allow-oom,allow-stale,no-cluster,allow-cross-slot-keys,no-writes\nreturn 1",
        "#!lua flags=\nreturn 1",
        "#!lua\n\nerror('line three')",
    ] {
        eval0(&mut d, script);
    }
}

// ---------------------------------------------------------------- errors

#[test]
fn call_and_pcall_error_replies() {
    let mut d = Diff::new();
    d.cmd(&["SET", "str", "x"]);
    for script in [
        "return redis.call('nosuch')",
        "return redis.call('get')",
        "return redis.call('multi')",
        "return redis.call('eval', 'return 1', 0)",
        "return redis.call()",
        "return redis.call({})",
        "return redis.call('get', {})",
        "return redis.call('get', nil)",
        "return redis.pcall('nosuch')",
        "return redis.pcall()",
        "return redis.pcall({})",
        "return redis.pcall('get')",
        "return redis.call('incr', 'str')",
        "return redis.pcall('incr', 'str')",
        "redis.call('incr', 'str')",
        "local t = redis.pcall('incr', 'str'); return t.err",
        "local t = redis.pcall('incr', 'str'); return tostring(t.ignore_error_stats_update)",
        "local ok, e = pcall(redis.call, 'nosuch'); return e",
        "local ok, e = pcall(redis.call, 'incr', 'str'); return {tostring(ok), type(e), e}",
        "local ok, e = pcall(redis.call, 'incr', 'str'); error(e, 0)",
        "local ok, e = pcall(redis.setresp, 5); return {type(e), e}",
        "local ok, e = pcall(error, {err='x'}); return {type(e), e}",
        "local ok, e = pcall(error, 'plain'); return {type(e), e}",
        "local a, b = pcall() return {tostring(a), b}",
        "local a, b = pcall(nil) return {tostring(a), b}",
        "local a, b, c = pcall(function() return 1, 2 end) return {tostring(a), b, c}",
        "error('boom')",
        "error('boom', 0)",
        "error('ERR foo', 0)",
        "error({err='my err'})",
        "error({err='-my err'})",
        "error(123, 0)",
        "error(99999999999999.99, 0)",
        "error(0/0, 0)",
        "error(123456789012345, 0)",
        "error(nil)",
        "return {err='my err'}",
        "return {err='line\\r\\nbreak'}",
        "return 1 +",
        "return nosuch_function()",
        "local t = nil; return t.x",
        "return #nil",
        "local function f(n) return f(n + 1) + 1 end return f(1)",
        "return redis.call('echo', 0.1)",
        "return redis.call('echo', 3)",
        "return redis.call('echo', 1e20)",
        "return redis.call('echo', -0.5)",
    ] {
        eval0(&mut d, script);
    }
}

// ---------------------------------------------------------------- API

#[test]
fn redis_api_functions() {
    let mut d = Diff::new();
    for script in [
        "return redis.error_reply('x')",
        "return redis.error_reply('-x y')",
        "return redis.error_reply('MY code')",
        "return redis.error_reply(1)",
        "return redis.error_reply()",
        "return redis.status_reply('fine')",
        "return redis.status_reply()",
        "return redis.status_reply(1)",
        "return redis.sha1hex('')",
        "return redis.sha1hex('hello')",
        "return redis.sha1hex(12)",
        "return redis.sha1hex(0.1)",
        "return redis.sha1hex(1/3)",
        "return redis.sha1hex(99999999999999.99)",
        "return redis.sha1hex(0/0)",
        "return redis.sha1hex(123456789012345)",
        "return redis.sha1hex(-1.5e-7)",
        "return redis.sha1hex()",
        "return redis.sha1hex('a', 'b')",
        "redis.log(redis.LOG_WARNING, 'from a script', 2)",
        "redis.log(redis.LOG_DEBUG, 'debug')",
        "redis.log(99, 'hi')",
        "redis.log(1)",
        "redis.log('x', 'y')",
        "return redis.setresp(3)",
        "redis.setresp(4)",
        "redis.setresp()",
        "return redis.set_repl(redis.REPL_ALL)",
        "return redis.set_repl(redis.REPL_NONE)",
        "return redis.set_repl(99)",
        "return redis.set_repl()",
        "return redis.replicate_commands()",
        "return redis.breakpoint()",
        "return redis.debug('x')",
        "return redis.acl_check_cmd('get', 'x')",
        "return redis.acl_check_cmd('nosuch')",
        "return redis.acl_check_cmd()",
        "return redis.REDIS_VERSION",
        "return redis.REDIS_VERSION_NUM",
        "return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}",
        "return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}",
        "local r = {} for k in pairs(redis) do r[#r + 1] = k end table.sort(r) return r",
    ] {
        eval0(&mut d, script);
    }
}

// ---------------------------------------------------------------- conversions

const LUA_TO_REPLY: &[&str] = &[
    "return 1",
    "return -7",
    "return 3.99",
    "return -3.99",
    "return 'text'",
    "return ''",
    "return true",
    "return false",
    "return nil",
    "return {}",
    "return {1, 2.7, -3.9, 'x', true, false, nil, 5}",
    "return {1, {2, {3, 'deep'}}, {}}",
    "return {ok='fine'}",
    "return {ok='two\\nlines'}",
    "return {err='bad'}",
    "return {double=3.14}",
    "return {double=3}",
    "return {double='x'}",
    "return {big_number='123456789012345678901234567890'}",
    "return {map={a=1}}",
    "return {map={}}",
    "return {set={a=true}}",
    "return {set={}}",
    "return {1, {ok='nested'}, {err='nested error'}}",
    "return {x=1, y=2}",
    "return {[1]='a', [3]='c'}",
    "return function() end",
];

#[test]
fn lua_values_become_replies_in_resp2() {
    let mut d = Diff::new();
    for script in LUA_TO_REPLY {
        eval0(&mut d, script);
    }
    for script in LUA_TO_REPLY {
        eval0(&mut d, &format!("redis.setresp(3) {script}"));
    }
}

#[test]
fn lua_values_become_replies_in_resp3() {
    let mut d = Diff::new();
    resp3(&mut d);
    for script in LUA_TO_REPLY {
        eval0(&mut d, script);
    }
    for script in LUA_TO_REPLY {
        eval0(&mut d, &format!("redis.setresp(3) {script}"));
    }
}

const REPLY_TO_LUA: &[&str] = &[
    "return redis.call('get', 'str')",
    "return redis.call('get', 'nokey')",
    "return {redis.call('get', 'nokey') == false, redis.call('get', 'nokey') == nil}",
    "return type(redis.call('get', 'nokey'))",
    "return redis.call('set', 'k2', 'v')",
    "return redis.call('set', 'k2', 'v').ok",
    "return redis.call('set', 'k3', 'v', 'xx')",
    "return type(redis.call('set', 'k3', 'v', 'xx'))",
    "return redis.call('incr', 'n')",
    "return type(redis.call('incr', 'n'))",
    "return redis.call('hgetall', 'h')",
    "local t = redis.call('hgetall', 'h'); return type(t.map)",
    "local t = redis.call('hgetall', 'h'); return t.map and t.map.a",
    "return redis.call('smembers', 'nosuchset')",
    "return redis.call('zscore', 'z', 'm')",
    "local s = redis.call('zscore', 'z', 'm'); return type(s)",
    "local s = redis.call('zscore', 'z', 'm'); return type(s) == 'table' and s.double",
    "return redis.call('zscore', 'z', 'nosuch')",
    "return redis.call('zrange', 'z', 0, -1, 'withscores')",
    "return redis.call('lpop', 'nolist', 2)",
    "return type(redis.call('lpop', 'nolist', 2))",
    "return redis.call('exists', 'str', 'nokey')",
    "return redis.call('mget', 'str', 'nokey')",
    "return redis.call('ping')",
    "return redis.call('type', 'h')",
    "return redis.pcall('hget', 'str', 'f')",
    "return redis.call('incrbyfloat', 'f', '1.5')",
    "return redis.call('smismember', 'nosuchset', 'a')",
];

fn reply_fixtures(d: &mut Diff) {
    d.cmd(&["SET", "str", "value"]);
    d.cmd(&["HSET", "h", "a", "1"]);
    d.cmd(&["ZADD", "z", "1.5", "m"]);
}

#[test]
fn replies_become_lua_values() {
    let mut d = Diff::new();
    reply_fixtures(&mut d);
    for script in REPLY_TO_LUA {
        eval0(&mut d, script);
    }
    for script in REPLY_TO_LUA {
        eval0(&mut d, &format!("redis.setresp(3) {script}"));
    }
}

#[test]
fn replies_become_lua_values_for_a_resp3_client() {
    let mut d = Diff::new();
    resp3(&mut d);
    reply_fixtures(&mut d);
    for script in REPLY_TO_LUA {
        eval0(&mut d, script);
    }
    for script in REPLY_TO_LUA {
        eval0(&mut d, &format!("redis.setresp(3) {script}"));
    }
}

// ---------------------------------------------------------------- sandbox

#[test]
fn the_sandbox_catalogue() {
    let mut d = Diff::new();
    for script in [
        "x = 1",
        "return y",
        "_G.x = 1",
        "rawset(_G, 'x', 1) return x",
        "return rawget(_G, 'redis') ~= nil",
        "setmetatable(_G, nil) return 1",
        "string.x = 1 return 1",
        "redis.call = nil return 1",
        "redis = nil return 1",
        "KEYS = {} return 1",
        "math.floor = nil return 1",
        "table.x = 1 return 1",
        "local t = {} t.x = 1 return t.x",
        "local t = setmetatable({}, {__index = function() return 'meta' end}) return t.anything",
        "return type(debug)",
        "return type(os)",
        "return type(io)",
        "return type(print)",
        "print('x')",
        "return type(loadfile)",
        "return type(dofile)",
        "return type(require)",
        "return type(package)",
        "return type(module)",
        "return type(setfenv)",
        "return type(getfenv)",
        "return type(newproxy)",
        "return type(loadstring)",
        "return type(load)",
        "return type(coroutine)",
        "return type(gcinfo)",
        "return type(unpack)",
        "return _VERSION",
        "return type(_G)",
        "return loadstring('return 1')()",
        "return loadstring('return 1 + 2 * 3')()",
        "local f, e = loadstring('return x +'); return e",
        "local f = loadstring('y = 1'); f()",
        "return loadstring(string.dump(function() return 1 end))",
        "local f, e = loadstring(string.dump(function() return 1 end)); return {tostring(f), e}",
        "return type(string.dump)",
        "local n = 0 for k in pairs(_G) do n = n + 1 end return n > 20",
        "local r = {} for k in pairs(_G) do r[#r + 1] = k end table.sort(r) return r",
        "cjson.x = 1 return 1",
        "bit.band = nil return 1",
        "return {bit.band(5, 3), cjson.encode({1, 2}), struct.pack('>I2', 258), cmsgpack.pack(1)}",
        "local r = {} for k in pairs(string) do r[#r + 1] = k end table.sort(r) return r",
        "local r = {} for k in pairs(math) do r[#r + 1] = k end table.sort(r) return r",
        "local r = {} for k in pairs(table) do r[#r + 1] = k end table.sort(r) return r",
        "return ('abc'):upper()",
        "return string.format('%d-%s', 5, 'x')",
        "return tostring(math.huge)",
        "local co = coroutine.create(function() coroutine.yield(1) end) return {coroutine.resume(co)}",
        "return select('#', 1, 2, 3)",
        "return unpack({1, 2, 3})",
        "return tonumber('0x10')",
        "return #string.rep('x', 1000, 'y')",
    ] {
        eval0(&mut d, script);
    }
}

#[test]
fn bad_scripts_fail_and_the_server_goes_on() {
    let mut d = Diff::new();
    eval0(
        &mut d,
        "local t = {} for i = 1, 100000 do t[i] = i end return #t",
    );
    eval0(
        &mut d,
        "local s = 0 for i = 1, 1000000 do s = s + i end return s",
    );
    eval0(&mut d, "local function f() return f() end return 1");
    eval0(&mut d, "return string.rep('x', 10)");
    d.cmd(&["PING"]);
}

/// Redis's unit/scripting "not enough good replicas": a script that may
/// write is refused NOREPLICAS before it runs (its shebang without
/// `no-writes`), or at its first write (no shebang); a read-only one runs.
#[test]
fn scripts_are_refused_without_enough_good_replicas() {
    let mut d = Diff::new();
    d.cmd(&["SET", "x", "some value"]);
    d.cmd(&["CONFIG", "SET", "min-replicas-to-write", "1"]);
    d.cmd(&[
        "EVAL",
        "#!lua flags=no-writes\nreturn redis.call('get','x')",
        "1",
        "x",
    ]);
    d.cmd(&["EVAL", "return redis.call('get','x')", "1", "x"]);
    d.cmd(&["EVAL", "#!lua\nreturn redis.call('get','x')", "1", "x"]);
    d.cmd(&["EVAL", "return redis.call('set','x', 1)", "1", "x"]);
    d.cmd(&["EVAL", "return redis.pcall('set','x', 1)", "1", "x"]);
    d.cmd(&["GET", "x"]);
    d.cmd(&["CONFIG", "SET", "min-replicas-to-write", "0"]);
    d.cmd(&["EVAL", "return redis.call('set','x', 1)", "1", "x"]);
}
