//! Differential tests of the Lua sandbox's read-only tables against
//! redis-server 7.0.15: every way a script might change the globals, their
//! metatable, a library table (`redis`, `string`, `table`, `math`,
//! `coroutine`, `cjson`, `cmsgpack`, `struct`, `bit`) or the strings'
//! metatable fails with Redis's exact reply, in EVAL and in function
//! libraries (at load time and when called), and the functions that bypass
//! metamethods (`rawset`, `rawget`, `next`, `pairs`, `setmetatable`,
//! `getmetatable`, `table.insert`) answer as Redis's do. After each
//! attempt a second client checks that scripts and functions still see
//! the real `redis` and libraries.

use firn_testkit::Diff;

/// A library whose function reads `x`, loaded before the tricks.
const PROBE_LIBRARY: &str = "#!lua name=probe\n\
    redis.register_function('getx', function() return redis.call('get', 'x') end)";

/// What a sound sandbox answers to a second client.
const HEALTH_SCRIPT: &str = "return {type(redis), type(redis.call), type(table), \
    type(table.insert), type(math), type(math.floor), type(cjson), type(string.rep), \
    ('ab'):upper(), type(getmetatable(_G).__index), tostring(getmetatable(redis))}";

/// Sets `x` and loads the probe library; client 1 is the observer.
fn setup() -> Diff {
    let mut d = Diff::new();
    d.cmd(&["SET", "x", "hello"]);
    d.cmd(&["FUNCTION", "LOAD", PROBE_LIBRARY]);
    d.open_client();
    d
}

/// On client 1: a plain script and a function still reach the real
/// `redis.call`, and the globals still hold their libraries.
fn still_sound(d: &mut Diff) {
    d.use_client(1);
    d.cmd(&["EVAL", "return redis.call('get','x')", "0"]);
    d.cmd(&["FCALL", "getx", "0"]);
    d.cmd(&["EVAL", HEALTH_SCRIPT, "0"]);
    d.cmd(&["EVAL", "return a", "0"]);
    d.use_client(0);
}

/// Writes to the globals, their metatable and the library tables.
const EVAL_TRICKS: &[&str] = &[
    // The report's own script, and Redis's "Try trick global protection".
    "local g = getmetatable(_G); g.__index = {redis={call=function() return 'pwned' end}}; return 1",
    "setmetatable(_G, {})",
    "local g = getmetatable(_G)\ng.__index = {}",
    "redis = function() return 1 end",
    "_G = {}",
    // "Try trick readonly table on ..." and the other libraries.
    "redis.call = function() return 1 end",
    "cjson.encode = function() return 1 end",
    "cmsgpack.pack = function() return 1 end",
    "bit.lshift = function() return 1 end",
    "struct.pack = nil",
    "string.rep = nil",
    "math.random = function() return 4 end",
    "table.insert = nil",
    "coroutine.create = nil",
    "_G.redis = nil",
    "_G._G = nil",
    // Globals protection.
    "return a",
    "a = 10",
    "local t = {} t.x = 1 return t.x",
    "loadfile('some file')",
    "dofile('some file')",
    "print('some data')",
    "return bit.tohex(65535, -2147483648)",
    // The functions that bypass metamethods.
    "rawset(_G, 'redis', 1)",
    "rawset(redis, 'call', 1)",
    "rawset(redis, nil, 1)",
    "rawset(getmetatable(_G), '__index', {})",
    "setmetatable(getmetatable(_G), {})",
    "getmetatable(_G).__index = nil",
    "getmetatable(_G).__newindex = function() end",
    "setmetatable(redis, {__index = function() return 1 end})",
    "setmetatable(redis, nil)",
    "setmetatable(_G)",
    "table.insert(redis, 'x')",
    "table.insert(_G, 1, 'x')",
    "table.insert(math, 5, 'x')",
    "table.insert(redis)",
    "table.insert(redis, 'a', 'b')",
    "return table.remove(redis)",
    "table.sort(redis)",
    // The strings' metatable.
    "getmetatable('').__index = {}",
    "getmetatable('').__index.upper = function() return 'pwned' end",
    "rawset(getmetatable(''), '__index', {upper = function() return 'pwned' end})",
    "setmetatable(getmetatable(''), {})",
    "getmetatable('x').__newindex = function() end",
    // Chunks loaded at run time see the same globals.
    "local f = loadstring('x = 7') f()",
    "local f = loadstring('redis = nil') f()",
    "local f = loadstring('rawset(_G, \"redis\", nil)') f()",
    "local n = 0 local f = load(function() n = n + 1 if n == 1 then return 'redis = nil' end end) f()",
    "local n = 0 local f = load(function() n = n + 1 if n == 1 then return 'return 7' end end) return f()",
    "local f = loadstring('return _G') return rawequal(f(), _G)",
    "load('x = 1')",
    "load()",
    "local co = coroutine.create(function() redis.call = nil end) return {coroutine.resume(co)}",
    // The proxies' records are weak tables: a collection keeps them.
    "collectgarbage() collectgarbage() rawset(redis, 'call', 1)",
    "collectgarbage() getmetatable('').__index = {}",
    "collectgarbage() table.insert(string, 'x')",
    "collectgarbage() return {rawequal(getmetatable(''), getmetatable('y')), getmetatable('').__index == string}",
    "local ok, e = pcall(function() redis.call = nil end) return {tostring(ok), e}",
];

#[test]
fn eval_tricks_fail_and_scripts_stay_sound() {
    let mut d = setup();
    for script in EVAL_TRICKS {
        d.cmd(&["EVAL", script, "0"]);
        still_sound(&mut d);
    }
}

/// What `getmetatable` and the see-through functions answer.
const EVAL_READS: &[&str] = &[
    "return {type(getmetatable(_G)), type(getmetatable(_G).__index), \
     type(getmetatable(redis)), type(getmetatable(string)), type(getmetatable(cjson))}",
    "return getmetatable(getmetatable(_G))",
    "return getmetatable(_G).__newindex",
    "return rawequal(getmetatable(_G), getmetatable(_G))",
    "local r = {} for k in pairs(getmetatable(_G)) do r[#r + 1] = k end return r",
    "return getmetatable(_G).__index(_G, 'foo')",
    "return getmetatable(_G).__index(_G, 12)",
    "return getmetatable(_G).__index(_G)",
    "return getmetatable(_G).__index(_G, true)",
    "return _G[true]",
    "return rawequal(_G._G, _G)",
    "return rawequal(getmetatable(''), getmetatable('x'))",
    "local mt = getmetatable('') return {mt.__index == string, rawget(mt, '__index') == string}",
    "local r = {} for k in pairs(getmetatable('')) do r[#r + 1] = k end return r",
    "return ('x'):rep(3)",
    "return type(getmetatable(nil))",
    "return type(getmetatable(1))",
    "return type(getmetatable(true))",
    "return type(getmetatable(function() end))",
    "return type(getmetatable(coroutine.create(function() end)))",
    "local t = setmetatable({}, {__metatable = 'locked'}) return getmetatable(t)",
    "local t = setmetatable({}, {__metatable = 'locked'}) setmetatable(t, {})",
    "local mt = {__index = function() return 'meta' end} local t = setmetatable({}, mt) \
     return {t.anything, rawequal(getmetatable(t), mt)}",
    "local t = setmetatable({}, redis) return rawequal(getmetatable(t), redis)",
    "local t = setmetatable({}, _G) return rawequal(getmetatable(t), _G)",
    "return rawget(redis, 'call') ~= nil",
    "return rawget(_G, 'redis') == redis",
    "return rawget(_G, 'nothing')",
    "return next(redis) ~= nil",
    "return next(_G) ~= nil",
    "local n = 0 for k in pairs(redis) do n = n + 1 end return n > 10",
    "local r = {} for k in pairs(math) do r[#r + 1] = k end table.sort(r) return r",
    "local r = {} for k, v in next, string do r[#r + 1] = k end table.sort(r) return r",
    "return rawequal(pairs(redis), next)",
    "return #redis",
    "return cjson.encode(redis)",
    "return cjson.encode({math})",
    "return cjson.encode(getmetatable(_G))",
    "return cjson.encode(getmetatable(''))",
    "return cmsgpack.pack(math)",
    "return cmsgpack.pack({bit, struct})",
    "return cmsgpack.pack(getmetatable(_G))",
    "local n = 0 table.foreach(redis, function() n = n + 1 end) return n > 10",
    "return table.foreach(math, function(k, v) if k == 'floor' then return k end end)",
    "return table.foreach({}, function() end)",
    "table.foreach(redis)",
    "table.foreach(nil, print)",
    "return unpack(redis)",
    "local n = 0 for k, v in ipairs(redis) do n = n + 1 end return n",
    "local t = {} rawset(t, 'x', 1) return t.x",
    "local t = setmetatable({}, {__newindex = function() error('no') end}) rawset(t, 1, 2) return t[1]",
    // Argument errors name the function at the script's line.
    "rawset(nil, 1, 2)",
    "rawset({}, nil, 2)",
    "rawset({}, 1)",
    "rawset(_G)",
    "rawget(1)",
    "rawget({})",
    "setmetatable(1, {})",
    "setmetatable({}, 1)",
    "return getmetatable()",
    "next(1)",
    "next({}, 'nokey')",
    "pairs(nil)",
    "table.insert(nil, 1)",
    "table.insert({}, 'a', 'b')",
    "table.insert({}, 1, 2, 3)",
    "local t = {1, 2, 3} table.insert(t, 2, 'x') return t",
    "local t = {} table.insert(t, 'a') table.insert(t, 1, 'b') table.insert(t, 'c') return t",
    "local t = {1} table.insert(t, 4, 'x') return {t[1], t[4], #t}",
    "return type(load('return 1'))",
    "loadstring({})",
    "return loadstring()",
    "return {loadstring('return 1', {})}",
    "local f, e = loadstring(5) return {tostring(f), tostring(e)}",
    "return loadstring('return 2', 'name')()",
    "return load()",
    "return load(function() return nil end, {})",
];

#[test]
fn reads_see_through_the_protection_as_in_redis() {
    let mut d = setup();
    for script in EVAL_READS {
        d.cmd(&["EVAL", script, "0"]);
    }
    d.cmd(&["EVAL", "KEYS[1] = 'y' return KEYS[1]", "1", "k"]);
    d.cmd(&["EVAL", "table.insert(KEYS, 'z') return KEYS", "1", "k"]);
    d.cmd(&["EVAL", "ARGV[1] = 'b' return ARGV", "0", "a"]);
    d.cmd(&["EVAL", "return {KEYS[1], ARGV[1]}", "1", "k2", "a2"]);
    still_sound(&mut d);
}

/// A library that keeps its load-time `redis` table and tries to change
/// it, or the globals, when its functions are called.
const MALICIOUS_LIBRARY: &str = "#!lua name=lib1\n\
local lib = redis\n\
lib.register_function('f1', function () lib.redis = redis; lib.math = math; return {ok='OK'} end)\n\
lib.register_function('f2', function () lib.register_function('f1', function () return 1 end) end)\n\
lib.register_function('f3', function () local mt = getmetatable(_G) return {type(mt), type(mt.__index)} end)\n\
lib.register_function('f4', function () local mt = getmetatable(_G); mt.__index = {} end)\n\
lib.register_function('f5', function () return redis.call('get','x') end)\n\
lib.register_function('f6', function () return rawget(_G, 'redis') ~= nil end)\n\
lib.register_function('f7', function () return type(getmetatable(lib)) end)\n\
lib.register_function('f8', function () lib.x = 1 end)\n\
lib.register_function('f9', function () rawset(lib, 'x', 1) end)\n\
lib.register_function('f10', function () x = 1 end)\n\
lib.register_function('f11', function () redis.call = function() return 'pwned' end end)\n\
lib.register_function('f12', function () setmetatable(_G, {}) end)\n\
lib.register_function('f13', function () table.insert(lib, 1) end)\n\
lib.register_function('f14', function () getmetatable(lib).__index = {} end)\n\
lib.register_function('f15', function () return lib.nothing end)\n\
lib.register_function('f16', function () local g = getmetatable(_G); g.__index = {redis={call=function() return 'pwned' end}} end)\n\
lib.register_function('f17', function () collectgarbage() collectgarbage() rawset(lib, 'x', 1) end)\n\
lib.register_function('f18', function () collectgarbage() return lib.x end)";

#[test]
fn function_tricks_fail_and_functions_stay_sound() {
    let mut d = setup();
    d.cmd(&["FUNCTION", "LOAD", MALICIOUS_LIBRARY]);
    for i in 1..=18 {
        d.cmd(&["FCALL", &format!("f{i}"), "0"]);
        still_sound(&mut d);
    }
}

/// Load-time tricks: the library's view offers only its `redis` table.
const LOAD_TRICKS: &[&str] = &[
    "#!lua name=lib2\nredis.math.random()",
    "#!lua name=lib2\nredis.redis.call('ping')",
    "#!lua name=lib2\nredis.x = 1",
    "#!lua name=lib2\nredis.register_function = nil",
    "#!lua name=lib2\nredis.log = nil",
    "#!lua name=lib2\nrawset(redis, 'x', 1)",
    "#!lua name=lib2\nlocal mt = getmetatable(redis)",
    "#!lua name=lib2\nmt = getmetatable(_G)",
    "#!lua name=lib2\na = 1",
    "#!lua name=lib2\nreturn redis.register_function.x",
    "#!lua name=lib2\nlocal r = redis\nr.register_function('g', function() r.call = 1 end)",
    // Redis's "FUNCTION - trick global protection 1".
    "#!lua name=test1\nredis.register_function('t1', function()\n\
     mt = getmetatable(_G)\n\
     original_globals = mt.__index\n\
     original_globals['redis'] = function() return 1 end\n\
     end)",
    "#!lua name=test2\nredis.register_function('t2', function()\n\
     local mt = getmetatable(_G)\n\
     local original_globals = mt.__index\n\
     original_globals['redis'] = function() return 1 end\n\
     end)",
];

#[test]
fn load_tricks_fail_and_functions_stay_sound() {
    let mut d = setup();
    for code in LOAD_TRICKS {
        d.cmd(&["FUNCTION", "LOAD", code]);
        still_sound(&mut d);
    }
    d.cmd(&["FCALL", "g", "0"]);
    d.cmd(&["FCALL", "t1", "0"]);
    d.cmd(&["FCALL", "t2", "0"]);
    still_sound(&mut d);
    d.cmd_unordered_deep(&["FUNCTION", "LIST"]);
}
