//! Differential tests of functions against redis-server 7.0.15: FUNCTION
//! LOAD (metadata, registration forms, flags and every load error),
//! FCALL and FCALL_RO (keys and arguments, flags, errors), FUNCTION LIST
//! (LIBRARYNAME, WITHCODE), DELETE, FLUSH, STATS, KILL and HELP, in RESP2
//! and RESP3. Redis lists libraries and functions in hash order, so
//! listings of more than one are compared unordered.

use firn_testkit::Diff;

const LOAD_CASES: &[&str] = &[
    "return 1",
    "#!lua\nreturn 1",
    "#!lua name=lib1\nreturn 1",
    "#!lua name=lib1 foo=bar\nreturn 1",
    "#!js name=lib1\nreturn 1",
    "#!lua name=lib1",
    "#!lua name=l-1\nredis.register_function('f', function() return 1 end)",
    "#!lua name=lib1\nredis.register_function('f-1', function() return 1 end)",
    "#!lua name=lib1\nredis.register_function('f1')",
    "#!lua name=lib1\nredis.register_function('f1', 5)",
    "#!lua name=lib1\nredis.register_function(5, function() return 1 end)",
    "#!lua name=lib1\nredis.register_function({function_name='f1'})",
    "#!lua name=lib1\nredis.register_function({function_name='f1', callback=function() return 1 end, flags={'bad'}})",
    "#!lua name=lib1\nredis.register_function({function_name='f1', callback=function() return 1 end, foo=1})",
    "#!lua name=lib1\nredis.register_function({callback=function() return 1 end})",
    "#!lua name=lib1\nredis.register_function({function_name='f1', callback=function() return 1 end, flags='no-writes'})",
    "#!lua name=lib1\nredis.register_function({function_name='f1', callback=5})",
    "#!lua name=lib1\nredis.register_function({function_name={}, callback=function() return 1 end})",
    "#!lua name=lib1\nredis.register_function()",
    "#!lua name=lib1\nredis.register_function('a', 'b', 'c')",
    "#!lua name=lib1\nredis.register_function(1)",
    "#!lua name=lib1\nredis.call('set', 'x', 'y')",
    "#!lua name=lib1\nx = 1",
    "#!lua name=lib1\nreturn 1 +",
    "#!lua name=lib1\nredis.register_function('f1', function() return 1 end) redis.register_function('f1', function() return 1 end)",
    "#!lua name=lib1\nredis.register_function('f1', function() return 1 end) redis.register_function('F1', function() return 1 end)",
    "#!lua name=lib1\nerror('oops')",
    "#!lua name=lib1\nlocal t = redis.setresp",
    "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)\nreturn type(redis.call)",
    "#!lua name=lib1\nredis.log(redis.LOG_NOTICE, 'loading') redis.register_function('f1', function() return redis.REDIS_VERSION end)",
    "#!LUA name=Lib_2\nredis.register_function('f_2', function() return 2 end)",
    // The metadata line is split as Redis splits config lines.
    "#!lua name=\"foo\"\nredis.register_function('foo', function() return 1 end)",
    "#!lua NAME='q'\nredis.register_function('q', function() return 1 end)",
    "#!lua name=foo name=bar\nredis.register_function('foo', function() return 1 end)",
    "#!lua name=\"foo\nreturn 1",
    "#!lua name=\"foo\"x\nreturn 1",
    "#!js name=\"bad name\"\nreturn 1",
    "#!lua name=\nreturn 1",
];

#[test]
fn function_load_and_its_errors() {
    let mut d = Diff::new();
    for code in LOAD_CASES {
        d.cmd(&["FUNCTION", "FLUSH"]);
        d.cmd(&["FUNCTION", "LOAD", code]);
        d.cmd_unordered_deep(&["FUNCTION", "LIST", "WITHCODE"]);
    }
    d.cmd(&["FUNCTION", "LOAD"]);
    d.cmd(&["FUNCTION", "LOAD", "REPLACE"]);
    d.cmd(&["FUNCTION", "FLUSH", "bad_arg"]);
    d.cmd(&["FUNCTION", "FLUSH", "sync", "extra_arg"]);
    d.cmd(&["FUNCTION", "LIST", "WITHCODE", "WITHCODE"]);
    d.cmd(&[
        "FUNCTION",
        "LIST",
        "WITHCODE",
        "LIBRARYNAME",
        "x",
        "LIBRARYNAME",
        "x",
    ]);
    d.cmd(&[
        "FUNCTION",
        "LOAD",
        "FOO",
        "#!lua name=a\nredis.register_function('a', function() end)",
    ]);
}

const LIBRARY: &str = "#!lua name=lib1
local function helper(keys) return #keys end
redis.register_function('f1', function(keys, args) return {keys[1], args[1], helper(keys)} end)
redis.register_function{function_name='f2', callback=function() return redis.call('set', 'x', '1') end, flags={'no-writes'}, description='desc'}
redis.register_function{function_name='f3', callback=function() error('in f3') end, flags={'allow-oom', 'no-writes'}}
redis.register_function('f4', function(keys, args) return redis.call('incr', keys[1]) end)
redis.register_function('f5', function() return type(KEYS) end)
redis.register_function('f6', function() redis.setresp(3) return redis.call('hgetall', 'h') end)
redis.register_function{function_name='f7', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes', 'allow-stale'}}";

#[test]
fn fcall_runs_functions() {
    let mut d = Diff::new();
    d.cmd(&["FUNCTION", "LOAD", LIBRARY]);
    d.cmd(&["HSET", "h", "a", "1"]);
    d.cmd(&["FCALL", "f1", "1", "k", "a"]);
    d.cmd(&["FCALL", "f1", "2", "k", "l"]);
    d.cmd(&["FCALL", "F1", "0"]);
    d.cmd(&["FCALL", "f2", "0"]);
    d.cmd(&["FCALL_RO", "f1", "0"]);
    d.cmd(&["FCALL_RO", "f2", "0"]);
    d.cmd(&["FCALL", "f3", "0"]);
    d.cmd(&["FCALL", "f4", "1", "counter"]);
    d.cmd(&["FCALL", "f4", "1", "counter"]);
    d.cmd(&["FCALL_RO", "f4", "1", "counter"]);
    d.cmd(&["FCALL", "f5", "0"]);
    d.cmd(&["FCALL", "f6", "0"]);
    d.cmd(&["FCALL_RO", "f7", "1", "counter"]);
    d.cmd(&["FCALL", "nosuch", "0"]);
    d.cmd(&["FCALL", "f1", "-1"]);
    d.cmd(&["FCALL", "f1", "5"]);
    d.cmd(&["FCALL", "f1", "x"]);
    d.cmd(&["FCALL", "f1"]);
    d.cmd(&["GET", "counter"]);
    d.cmd_type_only(&["HELLO", "3"]);
    d.cmd(&["FCALL", "f6", "0"]);
    d.cmd(&["FCALL", "f1", "1", "k", "a"]);
}

#[test]
fn function_list_delete_flush_stats() {
    let mut d = Diff::new();
    d.cmd(&["FUNCTION", "LIST"]);
    d.cmd(&["FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function{function_name='f1', callback=function() return 1 end, flags={'no-writes', 'allow-oom'}, description='one'}"]);
    d.cmd(&["FUNCTION", "LIST"]);
    d.cmd(&["FUNCTION", "LIST", "WITHCODE"]);
    d.cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=lib1\nredis.register_function('f2', function() return 2 end)",
    ]);
    d.cmd(&[
        "FUNCTION",
        "LOAD",
        "REPLACE",
        "#!lua name=lib1\nredis.register_function('f2', function() return 2 end)",
    ]);
    d.cmd(&["FCALL", "f1", "0"]);
    d.cmd(&["FCALL", "f2", "0"]);
    d.cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=lib2\nredis.register_function('f2', function() return 3 end)",
    ]);
    d.cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=lib2\nredis.register_function('g', function() return 3 end)",
    ]);
    d.cmd_unordered_deep(&["FUNCTION", "LIST"]);
    d.cmd(&["FUNCTION", "LIST", "LIBRARYNAME", "lib2"]);
    d.cmd(&["FUNCTION", "LIST", "LIBRARYNAME", "LIB2", "WITHCODE"]);
    d.cmd(&["FUNCTION", "LIST", "LIBRARYNAME", "nomatch*"]);
    d.cmd(&["FUNCTION", "LIST", "LIBRARYNAME"]);
    d.cmd(&["FUNCTION", "LIST", "FOO"]);
    d.cmd(&["FUNCTION", "STATS"]);
    d.cmd(&["FUNCTION", "STATS", "x"]);
    d.cmd(&["FUNCTION", "KILL"]);
    d.cmd(&["FUNCTION", "DELETE", "nosuch"]);
    d.cmd(&["FUNCTION", "DELETE", "lib2"]);
    d.cmd(&["FCALL", "g", "0"]);
    d.cmd(&["FUNCTION", "DELETE"]);
    d.cmd(&["FUNCTION", "FLUSH", "x"]);
    d.cmd(&["FUNCTION", "FLUSH", "ASYNC"]);
    d.cmd(&["FUNCTION", "LIST"]);
    d.cmd(&["FUNCTION", "STATS"]);
    d.cmd(&["FUNCTION", "FLUSH", "SYNC"]);
    d.cmd(&["FUNCTION", "HELP"]);
    d.cmd_type_only(&["HELLO", "3"]);
    d.cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=lib3\nredis.register_function('h', function() return 1 end)",
    ]);
    d.cmd(&["FUNCTION", "LIST"]);
    d.cmd(&["FUNCTION", "STATS"]);
}

#[test]
fn function_dump_and_restore() {
    let mut d = Diff::new();
    d.cmd(&["FUNCTION", "DUMP"]);
    let long_body = format!(
        "#!lua name=big\nlocal filler = '{}'\nredis.register_function('big', function() return #filler end)",
        "abc".repeat(300)
    );
    d.cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)",
    ]);
    d.cmd(&["FUNCTION", "LOAD", long_body.as_str()]);
    d.cmd(&["FUNCTION", "FLUSH"]);
    d.cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)",
    ]);
    let one = d.cmd(&["FUNCTION", "DUMP"]);
    let payload = one.as_bytes().expect("a payload").to_vec();
    d.cmd(&[b"FUNCTION".to_vec(), b"RESTORE".to_vec(), payload.clone()]);
    d.cmd(&[
        b"FUNCTION".to_vec(),
        b"RESTORE".to_vec(),
        payload.clone(),
        b"APPEND".to_vec(),
    ]);
    d.cmd(&[
        b"FUNCTION".to_vec(),
        b"RESTORE".to_vec(),
        payload.clone(),
        b"REPLACE".to_vec(),
    ]);
    d.cmd(&[
        b"FUNCTION".to_vec(),
        b"RESTORE".to_vec(),
        payload.clone(),
        b"FLUSH".to_vec(),
    ]);
    d.cmd(&[
        b"FUNCTION".to_vec(),
        b"RESTORE".to_vec(),
        payload.clone(),
        b"FOO".to_vec(),
    ]);
    d.cmd(&[
        b"FUNCTION".to_vec(),
        b"RESTORE".to_vec(),
        payload.clone(),
        b"FLUSH".to_vec(),
        b"x".to_vec(),
    ]);
    d.cmd(&["FUNCTION", "RESTORE", "garbage"]);
    d.cmd(&["FUNCTION", "RESTORE"]);
    d.cmd(&["FUNCTION", "FLUSH"]);
    d.cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=other\nredis.register_function('f1', function() return 2 end)",
    ]);
    d.cmd(&[b"FUNCTION".to_vec(), b"RESTORE".to_vec(), payload.clone()]);
    d.cmd(&[
        b"FUNCTION".to_vec(),
        b"RESTORE".to_vec(),
        payload.clone(),
        b"REPLACE".to_vec(),
    ]);
    d.cmd(&["FCALL", "f1", "0"]);
    d.cmd(&[
        b"FUNCTION".to_vec(),
        b"RESTORE".to_vec(),
        payload.clone(),
        b"FLUSH".to_vec(),
    ]);
    d.cmd(&["FCALL", "f1", "0"]);
    d.cmd(&["FUNCTION", "LIST", "WITHCODE"]);
    d.cmd(&["FUNCTION", "FLUSH"]);
    d.cmd(&["FUNCTION", "LOAD", long_body.as_str()]);
    d.cmd(&["FUNCTION", "DUMP"]);
    d.cmd(&["FCALL", "big", "0"]);
}
