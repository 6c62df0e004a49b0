#!/usr/bin/env python3
"""Generate crates/firn-server/src/command_table.rs from redis-server 7.0.15.

Firn declares every command once, as data (as Redis does in src/commands/*.json).
This script asks a real redis-server for the interface facts of each command
Firn serves and writes them out as Rust:

    scripts/gen_command_table.py            # regenerate the checked-in file
    scripts/gen_command_table.py --check    # regenerate into a temp file, diff, exit 1 if different

How it works:
  * starts `redis-server` (must report version 7.0.15) on a free loopback port,
    with no persistence, in a temporary directory; it is stopped on exit, on
    error and on SIGINT/SIGTERM;
  * sends `HELLO 3`, then `COMMAND INFO <name>` and `COMMAND DOCS <name>` for
    every command in COMMAND_GROUPS, over a raw socket, parsed by the small
    RESP3 reader below so that maps, sets, arrays, simple strings, bulk strings
    and integers keep their exact wire type;
  * replaces every `summary` in the docs with Firn's own sentence (SUMMARIES);
    every other field (arity, flags, ACL categories, tips, key specs, argument
    structure, group, since, complexity, history, deprecation facts) is copied
    as Redis returns it;
  * adds the subcommands Firn serves that Redis 7.0 lacks (EXTRA_SUBCOMMANDS,
    hand-written from Redis 7.2's command JSON, in the shape 7.0 replies with);
  * sorts subcommands by name. Redis keeps them in a dict hashed with a seed
    chosen at startup, so their order changes from one redis-server run to the
    next; sorting makes the output reproducible;
  * lists, in KEY_SPECS, the name, arity, flags and key specs of every other
    Redis command and subcommand (from `COMMAND`), so that COMMAND GETKEYS
    finds the keys of any Redis command line, served or not, as Redis does;
  * lists, in UNSERVED, every other Redis command with its subcommands, whole,
    for COMMAND INFO and COMMAND DOCS; their summaries say Firn does not serve
    them yet (Redis's summaries are never copied).

Only the Python standard library is used.
"""

import argparse
import atexit
import difflib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

REDIS_VERSION = "7.0.15"
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(REPO_ROOT, "crates", "firn-server", "src", "command_table.rs")

# The commands Firn serves in this wave, grouped as Redis documents them. Each
# is taken with all of its Redis 7.0 subcommands (plus EXTRA_SUBCOMMANDS).
COMMAND_GROUPS = [
    ("connection", "ping echo hello auth select quit reset client"),
    ("server", "info dbsize flushdb flushall time lastsave monitor config command shutdown save bgsave slowlog memory module lolwut latency debug"),
    (
        "strings",
        "set get getex getdel getset mget mset msetnx setnx setex psetex incr decr incrby decrby "
        "incrbyfloat append strlen getrange substr setrange lcs",
    ),
    ("bitmaps", "setbit getbit bitcount bitpos bitop bitfield bitfield_ro"),
    (
        "keyspace",
        "del unlink exists type touch keys scan randomkey expire pexpire expireat pexpireat ttl pttl "
        "expiretime pexpiretime persist rename renamenx copy move swapdb object dump restore",
    ),
    (
        "hashes",
        "hset hsetnx hmset hget hmget hgetall hkeys hvals hlen hstrlen hexists hdel hincrby "
        "hincrbyfloat hrandfield hscan",
    ),
    (
        "lists",
        "lpush rpush lpushx rpushx lpop rpop llen lindex lrange lset linsert lrem ltrim lpos "
        "rpoplpush lmove lmpop",
    ),
    (
        "sets",
        "sadd srem scard sismember smismember smembers smove spop srandmember sinter sunion sdiff "
        "sinterstore sunionstore sdiffstore sintercard sscan",
    ),
    (
        "sorted_sets",
        "zadd zincrby zscore zmscore zcard zcount zlexcount zrank zrevrank zrem zrange zrevrange "
        "zrangebyscore zrevrangebyscore zrangebylex zrevrangebylex zrangestore zremrangebyrank "
        "zremrangebyscore zremrangebylex zpopmin zpopmax zmpop zrandmember zunion zinter zdiff "
        "zunionstore zinterstore zdiffstore zintercard zscan",
    ),
    ("hyperloglog", "pfadd pfcount pfmerge pfdebug pfselftest"),
    (
        "geo",
        "geoadd geodist geohash geopos geosearch geosearchstore georadius georadius_ro "
        "georadiusbymember georadiusbymember_ro",
    ),
    ("sort", "sort sort_ro"),
    (
        "streams",
        "xadd xrange xrevrange xlen xdel xtrim xread xreadgroup xgroup xack xpending xclaim "
        "xautoclaim xinfo xsetid",
    ),
    ("blocking", "blpop brpop brpoplpush blmove blmpop bzpopmin bzpopmax bzmpop"),
    (
        "pubsub",
        "subscribe unsubscribe psubscribe punsubscribe ssubscribe sunsubscribe publish spublish "
        "pubsub",
    ),
    ("transactions", "multi exec discard watch unwatch"),
    ("scripting", "eval evalsha eval_ro evalsha_ro script fcall fcall_ro function"),
    ("replication", "replicaof slaveof role psync sync replconf wait failover"),
    ("acl", "acl"),
]
COMMAND_NAMES = [name for _, names in COMMAND_GROUPS for name in names.split()]

# Firn's own one-line description of each command and subcommand. Redis's
# summary sentences are not reused; everything else in COMMAND DOCS is.
SUMMARIES = {
    # scripting
    "eval": "Runs a Lua script on the server, atomically, with the given keys and arguments.",
    "evalsha": "Runs a cached Lua script, named by the SHA-1 of its body.",
    "eval_ro": "Runs a Lua script that may only read, with the given keys and arguments.",
    "evalsha_ro": "Runs a cached read-only Lua script, named by the SHA-1 of its body.",
    "script": "Groups the commands that manage the cache of Lua scripts.",
    "script|debug": "Sets the debug mode of the scripts this connection runs next.",
    "script|exists": "Tells, for each SHA-1, whether the script is in the cache.",
    "script|flush": "Empties the cache of Lua scripts.",
    "script|help": "Lists the SCRIPT subcommands and what they do.",
    "script|kill": "Stops the script that is running, if it has not written anything.",
    "script|load": "Compiles a Lua script and caches it without running it, replying its SHA-1.",
    "fcall": "Calls a function of a loaded library, with the given keys and arguments.",
    "fcall_ro": "Calls a read-only function of a loaded library, with the given keys and arguments.",
    "function": "Groups the commands that manage libraries of Lua functions.",
    "function|delete": "Removes a library and its functions.",
    "function|dump": "Returns a serialized copy of every loaded library.",
    "function|flush": "Removes every library.",
    "function|help": "Lists the FUNCTION subcommands and what they do.",
    "function|kill": "Stops the function that is running, if it has not written anything.",
    "function|list": "Describes the loaded libraries and their functions.",
    "function|load": "Loads a library of Lua functions, or replaces one.",
    "function|restore": "Loads the libraries of a FUNCTION DUMP payload.",
    "function|stats": "Describes the function that is running and the engines available.",
    # connection
    "ping": "Checks that the server is alive, answering PONG or echoing the message.",
    "echo": "Replies with the message it was given.",
    "hello": "Negotiates the protocol version, optionally authenticating and naming the connection.",
    "auth": "Authenticates the connection with a password, or a username and password.",
    "select": "Switches the connection to the database with the given number.",
    "quit": "Asks the server to close this connection.",
    "reset": "Returns the connection to the state it had just after connecting.",
    "client": "Groups the commands that inspect and control client connections.",
    "client|caching": "Tells the server whether to track the keys read by the next command.",
    "client|getname": "Returns the name given to this connection.",
    "client|getredir": "Returns the ID of the client that receives this connection's tracking notifications.",
    "client|help": "Lists the CLIENT subcommands and what they do.",
    "client|id": "Returns the unique ID of this connection.",
    "client|info": "Describes this connection in the format of a CLIENT LIST line.",
    "client|kill": "Closes client connections chosen by address, ID, type or user.",
    "client|list": "Lists the open client connections and their attributes.",
    "client|no-evict": "Exempts this connection from client eviction, or makes it eligible again.",
    "client|no-touch": "Stops or resumes updating key access statistics for commands sent on this connection.",
    "client|pause": "Holds back client commands, all or only writes, for a number of milliseconds.",
    "client|reply": "Turns replies to this connection's commands on or off, or skips the next one.",
    "client|setinfo": "Records the name or version of the client library using this connection.",
    "client|setname": "Gives this connection a name.",
    "client|tracking": "Turns server-assisted client-side caching on or off for this connection.",
    "client|trackinginfo": "Describes the client-side caching settings of this connection.",
    "client|unblock": "Wakes a client, given by ID, that is waiting in a blocking command.",
    "client|unpause": "Lets paused clients run commands again.",
    # server
    "info": "Returns a text report of server state and statistics, section by section.",
    "dbsize": "Returns how many keys the selected database holds.",
    "flushdb": "Deletes every key in the selected database.",
    "flushall": "Deletes every key in every database.",
    "time": "Returns the server clock as seconds and microseconds.",
    "lastsave": "Returns the Unix time of the last successful save.",
    "monitor": "Streams every command the server processes to this connection.",
    "config": "Groups the commands that read and change the server configuration.",
    "config|get": "Returns the configuration parameters matching the given patterns, with their values.",
    "config|help": "Lists the CONFIG subcommands and what they do.",
    "config|resetstat": "Zeroes the statistics reported by INFO.",
    "config|rewrite": "Writes the running configuration back to the configuration file.",
    "config|set": "Changes configuration parameters while the server runs.",
    "command": "Describes every command the server offers.",
    "command|count": "Returns how many commands the server offers.",
    "command|docs": "Returns the documentation of the named commands, or of all of them.",
    "command|getkeys": "Returns the key names found in a complete command line.",
    "command|getkeysandflags": "Returns the key names of a complete command line and how each is accessed.",
    "command|help": "Lists the COMMAND subcommands and what they do.",
    "command|info": "Describes the named commands, or every command when none is named.",
    "command|list": "Lists command names, optionally filtered by module, ACL category or pattern.",
    "shutdown": "Stops the server, saving first unless told otherwise.",
    "save": "Writes a snapshot of the dataset to disk and replies when it is done.",
    "bgsave": "Starts writing a snapshot of the dataset to disk in the background.",
    "slowlog": "Groups the commands that read and clear the log of slow commands.",
    "slowlog|get": "Returns the most recent entries of the slow command log.",
    "slowlog|help": "Lists the SLOWLOG subcommands and what they do.",
    "slowlog|len": "Returns how many entries the slow command log holds.",
    "slowlog|reset": "Empties the slow command log.",
    "slowlog|coldget": "Returns the most recent entries of Firn's log of commands that waited on the disk.",
    "slowlog|coldlen": "Returns how many entries Firn's log of commands that waited on the disk holds.",
    "slowlog|coldreset": "Empties Firn's log of commands that waited on the disk.",
    # strings
    "set": "Stores a string under a key, with optional expiry and conditions.",
    "get": "Returns the string stored at a key.",
    "getex": "Returns the string stored at a key and optionally changes its expiry.",
    "getdel": "Returns the string stored at a key and deletes the key.",
    "getset": "Stores a new string under a key and returns the previous one.",
    "mget": "Returns the strings stored at several keys.",
    "mset": "Stores several key and string pairs at once.",
    "msetnx": "Stores several key and string pairs at once, only when none of the keys exists.",
    "setnx": "Stores a string under a key only when the key does not exist.",
    "setex": "Stores a string under a key with an expiry in seconds.",
    "psetex": "Stores a string under a key with an expiry in milliseconds.",
    "incr": "Adds one to the integer stored at a key.",
    "decr": "Subtracts one from the integer stored at a key.",
    "incrby": "Adds an integer to the integer stored at a key.",
    "decrby": "Subtracts an integer from the integer stored at a key.",
    "incrbyfloat": "Adds a floating-point number to the number stored at a key.",
    "append": "Adds bytes to the end of the string stored at a key.",
    "strlen": "Returns the length in bytes of the string stored at a key.",
    "getrange": "Returns the bytes of a string between two offsets.",
    "substr": "Returns the bytes of a string between two offsets; the old name of GETRANGE.",
    "setrange": "Overwrites part of a string starting at a byte offset.",
    "lcs": "Finds the longest common subsequence of two strings.",
    # bitmaps
    "setbit": "Sets or clears one bit of a string and returns its previous value.",
    "getbit": "Returns one bit of a string.",
    "bitcount": "Counts the bits set to 1 in a string or in a range of it.",
    "bitpos": "Returns the position of the first 0 or 1 bit in a string or in a range of it.",
    "bitop": "Combines strings with AND, OR, XOR or NOT and stores the result.",
    "bitfield": "Reads, writes and increments integer fields of any width inside a string.",
    "bitfield_ro": "Reads integer fields of any width inside a string, without writing.",
    # keyspace
    "del": "Deletes keys.",
    "unlink": "Deletes keys, reclaiming their space in the background.",
    "exists": "Counts how many of the given keys exist.",
    "type": "Returns the type of the value stored at a key.",
    "touch": "Updates the last access time of keys and counts those that exist.",
    "keys": "Returns every key name matching a glob pattern.",
    "scan": "Walks the key names a batch at a time with a cursor.",
    "randomkey": "Returns a key name picked at random.",
    "expire": "Makes a key expire after a number of seconds.",
    "pexpire": "Makes a key expire after a number of milliseconds.",
    "expireat": "Makes a key expire at a Unix time given in seconds.",
    "pexpireat": "Makes a key expire at a Unix time given in milliseconds.",
    "ttl": "Returns the seconds left before a key expires.",
    "pttl": "Returns the milliseconds left before a key expires.",
    "expiretime": "Returns the Unix time, in seconds, at which a key expires.",
    "pexpiretime": "Returns the Unix time, in milliseconds, at which a key expires.",
    "persist": "Removes the expiry from a key.",
    "rename": "Gives a key a new name, replacing any key that already has it.",
    "renamenx": "Gives a key a new name only when no key has that name yet.",
    "copy": "Copies the value of a key to another key, optionally in another database.",
    "move": "Moves a key to another database.",
    "swapdb": "Exchanges the contents of two databases.",
    "object": "Groups the commands that inspect how the value of a key is stored.",
    "object|encoding": "Returns the internal encoding of the value stored at a key.",
    "object|freq": "Returns the access frequency counter of a key.",
    "object|help": "Lists the OBJECT subcommands and what they do.",
    "object|idletime": "Returns the seconds since a key was last read or written.",
    "object|refcount": "Returns the reference count of the value stored at a key.",
    "debug": "Testing aid, allowed by enable-debug-command: sleeps, digests the data, describes a key, restarts the engine in place, replies sample values of each RESP type.",
    "memory": "Groups the commands that report on the server's memory.",
    "module": "Groups the commands that list, load and unload server modules.",
    "module|help": "Lists the MODULE subcommands and what they do.",
    "module|list": "Returns the loaded modules (Firn loads none).",
    "module|load": "Loads a server module (Firn refuses: it loads none).",
    "module|loadex": "Loads a server module with configuration (Firn refuses: it loads none).",
    "module|unload": "Unloads a server module (none is ever loaded in Firn).",
    "lolwut": "Draws a picture and shows the server's version.",
    # replication
    "replicaof": "Makes the server a replica of another server, or (NO ONE) a primary again.",
    "slaveof": "Makes the server a replica of another server, or (NO ONE) a primary again; REPLICAOF's old name.",
    "role": "Tells whether the server is a primary or a replica, and how its replication stands.",
    "psync": "Asks a primary for its replication stream from an offset (used by replicas).",
    "sync": "Asks a primary for a full copy and then its replication stream (used by old replicas).",
    "replconf": "Tells a primary a replica's settings and acknowledged offset (used by replicas).",
    "acl": "Groups the commands that manage users, their permissions and the ACL log.",
    "acl|cat": "Lists the ACL categories, or the commands of one category.",
    "acl|deluser": "Deletes users, closing the connections authenticated as them.",
    "acl|dryrun": "Tells whether a user may run a command line, without running it.",
    "acl|genpass": "Returns a random password of the given number of bits (256 by default), in hex.",
    "acl|getuser": "Returns a user's flags, password hashes, commands, key and channel patterns and selectors.",
    "acl|help": "Lists the ACL subcommands and what they do.",
    "acl|list": "Lists every user as the rules that would create it.",
    "acl|load": "Reads the users again from the ACL file, all or nothing.",
    "acl|log": "Lists the recent refused commands and failed authentications, or clears them.",
    "acl|save": "Writes every user to the ACL file.",
    "acl|setuser": "Creates a user or changes one with the given rules, all or nothing.",
    "acl|users": "Lists the names of the users.",
    "acl|whoami": "Returns the name of the user this connection runs as.",
    "wait": "Waits until the given number of replicas have every write this client made, or the timeout passes.",
    "failover": "Hands the primary role to a replica once it has every write.",
    "latency": "Groups the commands that report the latency monitor's events and the commands' latencies.",
    "latency|doctor": "Reports in a few sentences what the latency monitor recorded.",
    "latency|graph": "Draws a text chart of one latency event's samples.",
    "latency|help": "Lists the LATENCY subcommands and what they do.",
    "latency|histogram": "Returns each command's calls and their latency distribution.",
    "latency|history": "Returns one latency event's samples, oldest first.",
    "latency|latest": "Returns each latency event's newest sample and its worst.",
    "latency|reset": "Forgets the samples of some or all latency events.",
    "memory|doctor": "Reports memory problems the server can see.",
    "memory|help": "Lists the MEMORY subcommands and what they do.",
    "memory|malloc-stats": "Returns the memory allocator's own statistics.",
    "memory|purge": "Asks the memory allocator to give freed pages back to the system.",
    "memory|stats": "Returns how the server's memory is used, component by component.",
    "memory|usage": "Estimates the bytes a key and its value take in memory.",
    "memory|tiers": "Reports where a key lives in Firn: its bytes in memory, its bytes on disk, whether it is hot.",
    "dump": "Serializes the value stored at a key in the DUMP payload format.",
    "restore": "Creates a key from a value serialized by DUMP.",
    # hashes
    "hset": "Sets one or more fields of a hash, creating it if needed; returns how many fields are new.",
    "hsetnx": "Sets a hash field only if the field does not exist yet.",
    "hmset": "Sets one or more fields of a hash (the older form of HSET, answering OK).",
    "hget": "Returns the value of one field of a hash.",
    "hmget": "Returns the values of the given fields of a hash, nil for missing ones.",
    "hgetall": "Returns every field of a hash with its value.",
    "hkeys": "Returns every field name of a hash.",
    "hvals": "Returns every value of a hash.",
    "hlen": "Returns how many fields a hash has.",
    "hstrlen": "Returns the length in bytes of the value of a hash field.",
    "hexists": "Tells whether a hash has the given field.",
    "hdel": "Removes fields from a hash; returns how many existed.",
    "hincrby": "Adds an integer to the number stored in a hash field.",
    "hincrbyfloat": "Adds a floating-point number to the number stored in a hash field.",
    "hrandfield": "Returns random fields of a hash, optionally with their values or with repetitions.",
    "hscan": "Iterates over the fields and values of a hash with a cursor.",
    # lists
    "lpush": "Inserts elements at the head of a list, creating it if needed.",
    "rpush": "Appends elements at the tail of a list, creating it if needed.",
    "lpushx": "Inserts elements at the head of a list only if the list exists.",
    "rpushx": "Appends elements at the tail of a list only if the list exists.",
    "lpop": "Removes and returns the first elements of a list.",
    "rpop": "Removes and returns the last elements of a list.",
    "llen": "Returns the number of elements of a list.",
    "lindex": "Returns the element at an index of a list.",
    "lrange": "Returns the elements of a list between two indexes.",
    "lset": "Replaces the element at an index of a list.",
    "linsert": "Inserts an element before or after the first occurrence of a pivot in a list.",
    "lrem": "Removes occurrences of an element from a list.",
    "ltrim": "Keeps only the elements of a list between two indexes.",
    "lpos": "Returns the positions of the elements of a list equal to a value.",
    "rpoplpush": "Moves the last element of a list to the head of another (or the same) list.",
    "lmove": "Moves an element from one end of a list to one end of another (or the same) list.",
    "lmpop": "Pops elements from one end of the first non-empty list among several keys.",
    "blpop": "Pops the first element of the first non-empty list among several keys, waiting for one if all are empty.",
    "brpop": "Pops the last element of the first non-empty list among several keys, waiting for one if all are empty.",
    "brpoplpush": "Moves the last element of a list to the head of another, waiting for one if the source is empty. Deprecated in favour of BLMOVE.",
    "blmove": "Moves an element from one end of a list to one end of another, waiting for one if the source is empty.",
    "blmpop": "Pops elements from one end of the first non-empty list among several keys, waiting for one if all are empty.",
    "bzpopmin": "Pops the lowest-scored member of the first non-empty sorted set among several keys, waiting for one if all are empty.",
    "bzpopmax": "Pops the highest-scored member of the first non-empty sorted set among several keys, waiting for one if all are empty.",
    "bzmpop": "Pops the lowest or highest members of the first non-empty sorted set among several keys, waiting for one if all are empty.",
    # sets
    "sadd": "Adds members to a set, creating it if needed; returns how many are new.",
    "srem": "Removes members from a set; returns how many were present.",
    "scard": "Returns the number of members of a set.",
    "sismember": "Tells whether a value is a member of a set.",
    "smismember": "Tells, for each of several values, whether it is a member of a set.",
    "smembers": "Returns every member of a set.",
    "smove": "Moves a member from one set to another.",
    "spop": "Removes and returns random members of a set.",
    "srandmember": "Returns random members of a set, distinct or (negative count) with repetitions.",
    "sinter": "Returns the members common to every given set.",
    "sunion": "Returns the members of any of the given sets.",
    "sdiff": "Returns the members of the first set that are in none of the others.",
    "sinterstore": "Stores the intersection of sets in a key; returns its size.",
    "sunionstore": "Stores the union of sets in a key; returns its size.",
    "sdiffstore": "Stores the difference of sets in a key; returns its size.",
    "sintercard": "Returns the size of the intersection of sets, optionally counting up to a limit.",
    "sscan": "Iterates over the members of a set with a cursor.",
    # sorted sets
    "zadd": "Adds members with scores to a sorted set, or updates their scores.",
    "zincrby": "Adds to the score of a sorted-set member.",
    "zscore": "Returns the score of a sorted-set member.",
    "zmscore": "Returns the scores of several sorted-set members.",
    "zcard": "Returns the number of members of a sorted set.",
    "zcount": "Counts the sorted-set members with a score in a range.",
    "zlexcount": "Counts the sorted-set members in a lexicographical range.",
    "zrank": "Returns the position of a member in a sorted set, lowest score first.",
    "zrevrank": "Returns the position of a member in a sorted set, highest score first.",
    "zrem": "Removes members from a sorted set.",
    "zrange": "Returns sorted-set members by position, score or lexicographical range.",
    "zrevrange": "Returns sorted-set members by position, highest score first.",
    "zrangebyscore": "Returns sorted-set members with a score in a range, lowest first.",
    "zrevrangebyscore": "Returns sorted-set members with a score in a range, highest first.",
    "zrangebylex": "Returns sorted-set members in a lexicographical range.",
    "zrevrangebylex": "Returns sorted-set members in a lexicographical range, in reverse order.",
    "zrangestore": "Stores a range of a sorted set in another key.",
    "zremrangebyrank": "Removes the sorted-set members between two positions.",
    "zremrangebyscore": "Removes the sorted-set members with a score in a range.",
    "zremrangebylex": "Removes the sorted-set members in a lexicographical range.",
    "zpopmin": "Removes and returns the members with the lowest scores.",
    "zpopmax": "Removes and returns the members with the highest scores.",
    "zmpop": "Pops the lowest or highest members of the first non-empty sorted set among several keys.",
    "zrandmember": "Returns random members of a sorted set, optionally with scores.",
    "zunion": "Returns the union of sorted sets with combined scores.",
    "zinter": "Returns the intersection of sorted sets with combined scores.",
    "zdiff": "Returns the members of the first sorted set that are in none of the others.",
    "zunionstore": "Stores the union of sorted sets in a key.",
    "zinterstore": "Stores the intersection of sorted sets in a key.",
    "zdiffstore": "Stores the difference of sorted sets in a key.",
    "zintercard": "Returns the size of the intersection of sorted sets, optionally up to a limit.",
    "zscan": "Iterates over the members and scores of a sorted set with a cursor.",
    # hyperloglog
    "pfadd": "Adds elements to a HyperLogLog; returns 1 if its estimate changed.",
    "pfcount": "Returns the estimated number of distinct elements added to one or more HyperLogLogs.",
    "pfmerge": "Merges HyperLogLogs into a destination key.",
    "pfdebug": "Debugging aid: a HyperLogLog's registers, encoding or sparse opcodes, or its conversion to dense.",
    "pfselftest": "Debugging aid: tests the HyperLogLog register packing and estimator.",
    # streams
    "xadd": "Appends an entry to a stream, creating it unless NOMKSTREAM, and may trim the stream; replies the new entry's ID.",
    "xrange": "Returns the entries of a stream between two IDs, oldest first.",
    "xrevrange": "Returns the entries of a stream between two IDs, newest first.",
    "xlen": "Counts the entries of a stream.",
    "xdel": "Removes entries from a stream by ID; replies how many were there.",
    "xtrim": "Removes the oldest entries of a stream, down to a length or up to an ID.",
    "xread": "Reads the entries after given IDs from one or more streams, waiting for new ones if asked.",
    "xreadgroup": "Reads entries for a consumer of a group: new ones, which become pending, or its own pending ones.",
    "xgroup": "Groups the commands that manage a stream's consumer groups.",
    "xgroup|create": "Creates a consumer group on a stream, starting after a given ID.",
    "xgroup|createconsumer": "Adds a consumer to a consumer group.",
    "xgroup|delconsumer": "Removes a consumer, and its pending entries, from a consumer group.",
    "xgroup|destroy": "Removes a consumer group with its consumers and pending entries.",
    "xgroup|help": "Lists the XGROUP subcommands and what they do.",
    "xgroup|setid": "Moves a consumer group's last delivered ID.",
    "xack": "Acknowledges entries, removing them from a group's pending list.",
    "xpending": "Summarizes a group's pending entries, or lists them with their consumer, idle time and deliveries.",
    "xclaim": "Gives pending entries of a group to another consumer.",
    "xautoclaim": "Gives the pending entries idle for long enough to another consumer, scanning from an ID.",
    "xinfo": "Groups the commands that describe streams, their groups and consumers.",
    "xinfo|consumers": "Describes the consumers of a consumer group.",
    "xinfo|groups": "Describes the consumer groups of a stream.",
    "xinfo|help": "Lists the XINFO subcommands and what they do.",
    "xinfo|stream": "Describes a stream, or with FULL its entries, groups and consumers too.",
    "xsetid": "Sets a stream's last ID, and optionally its count of added entries and its largest deleted ID.",
    # geo
    "geoadd": "Adds places given by longitude and latitude to a geospatial index.",
    "geodist": "Returns the distance between two places of a geospatial index.",
    "geohash": "Returns the geohash strings of places of a geospatial index.",
    "geopos": "Returns the longitude and latitude of places of a geospatial index.",
    "geosearch": "Returns the places of a geospatial index inside a circle or a box.",
    "geosearchstore": "Stores the places of a geospatial index inside a circle or a box in a key.",
    "georadius": "Returns the places within a radius of a point (older form of GEOSEARCH).",
    "georadius_ro": "Returns the places within a radius of a point, read-only form.",
    "georadiusbymember": "Returns the places within a radius of a member (older form of GEOSEARCH).",
    "georadiusbymember_ro": "Returns the places within a radius of a member, read-only form.",
    # sort
    "sort": "Sorts the elements of a list, set or sorted set, optionally storing the result.",
    "sort_ro": "Sorts the elements of a list, set or sorted set (read-only form).",
    # pubsub
    "subscribe": "Listens for messages published to the given channels.",
    "unsubscribe": "Stops listening to the given channels, or to all of them.",
    "psubscribe": "Listens for messages published to channels matching the given patterns.",
    "punsubscribe": "Stops listening to the given channel patterns, or to all of them.",
    "ssubscribe": "Listens for messages published to the given shard channels.",
    "sunsubscribe": "Stops listening to the given shard channels, or to all of them.",
    "publish": "Sends a message to a channel's subscribers and returns how many received it.",
    "spublish": "Sends a message to a shard channel's subscribers and returns how many received it.",
    "pubsub": "Groups the commands that inspect the pub/sub subscriptions.",
    "pubsub|channels": "Lists the channels with at least one subscriber, optionally matching a pattern.",
    "pubsub|help": "Lists the PUBSUB subcommands and what they do.",
    "pubsub|numpat": "Returns how many patterns have subscribers.",
    "pubsub|numsub": "Returns the number of subscribers of each given channel.",
    "pubsub|shardchannels": "Lists the shard channels with at least one subscriber, optionally matching a pattern.",
    "pubsub|shardnumsub": "Returns the number of subscribers of each given shard channel.",
    # transactions
    "multi": "Starts a transaction: the commands that follow are queued until EXEC.",
    "exec": "Runs the queued commands of the transaction as one atomic unit.",
    "discard": "Drops the queued commands of the transaction and leaves it.",
    "watch": "Makes the next EXEC fail if any of these keys changes before it.",
    "unwatch": "Stops watching every key this connection watches.",
}


# --- The reply tree ----------------------------------------------------------
# A parsed RESP3 value is a (kind, payload) pair:
#   ("int", n) ("simple", s) ("bulk", s) ("array", [v]) ("set", [v])
#   ("map", [(key, v)]) with key itself a ("simple"|"bulk", s) pair.
# The helpers build the same shape by hand.


def Int(n):
    return ("int", n)


def Simple(s):
    return ("simple", s)


def Bulk(s):
    return ("bulk", s)


def Array(*items):
    return ("array", list(items))


def Set(*items):
    return ("set", list(items))


def Map(*pairs):
    """A map whose keys are bulk strings, as in every COMMAND INFO/DOCS map."""
    return ("map", [(Bulk(key), value) for key, value in pairs])


def map_get(value, key):
    assert value[0] == "map", value
    for k, v in value[1]:
        if k[1] == key:
            return v
    return None


def map_set(value, key, new):
    assert value[0] == "map", value
    for i, (k, _) in enumerate(value[1]):
        if k[1] == key:
            value[1][i] = (k, new)
            return
    raise KeyError(key)


def simple_flags(*flags):
    return Set(*(Simple(f) for f in flags))


def no_key_info(name, arity, flags, acl):
    """A COMMAND INFO entry (7.0 layout) for a command without keys, tips or subcommands."""
    return Array(
        Bulk(name),
        Int(arity),
        simple_flags(*flags),
        Int(0),
        Int(0),
        Int(0),
        simple_flags(*acl),
        Set(),  # tips
        Set(),  # key specs
        Set(),  # subcommands: Redis 7.0 replies with an empty *set* when there are none
    )


def command_info(name, arity, flags, acl, tips=(), key_specs=(), keys=(0, 0, 0)):
    """A COMMAND INFO entry (7.0 layout) for a command without subcommands."""
    first, last, step = keys
    return Array(
        Bulk(name),
        Int(arity),
        simple_flags(*flags),
        Int(first),
        Int(last),
        Int(step),
        simple_flags(*acl),
        Set(*(Bulk(t) for t in tips)),
        Set(*key_specs),
        Set(),
    )


def read_only_key_at(index):
    """The key spec of a single key read at argument `index` (MEMORY USAGE's)."""
    return Map(
        ("flags", simple_flags("RO")),
        ("begin_search", Map(("type", Bulk("index")), ("spec", Map(("index", Int(index)))))),
        (
            "find_keys",
            Map(
                ("type", Bulk("range")),
                ("spec", Map(("lastkey", Int(0)), ("keystep", Int(1)), ("limit", Int(0)))),
            ),
        ),
    )


def firn_docs(complexity, arguments=None):
    """COMMAND DOCS of a Firn-only subcommand (since: the version Firn answers as)."""
    pairs = [("summary", Bulk("")), ("since", Bulk(REDIS_VERSION)), ("group", Bulk("server")), ("complexity", Bulk(complexity))]
    if arguments:
        pairs.append(("arguments", Array(*arguments)))
    return Map(*pairs)


def pure_token(name, token):
    return Map(("name", Bulk(name)), ("type", Bulk("pure-token")), ("token", Bulk(token)))


# Subcommands Firn serves that redis-server 7.0.15 does not have. Facts from
# Redis 7.2's src/commands/client-setinfo.json and client-no-touch.json, laid
# out as Redis 7.0 replies (flag and ACL-category order as 7.0 prints them for
# CLIENT SETNAME, which has the same flags; a command without the `fast` flag
# gets `@slow`). Summaries come from SUMMARIES like all others.
# Firn's own subcommands (MEMORY TIERS, SLOWLOG COLD*) take the flags, ACL
# categories and tips of their Redis neighbours (MEMORY USAGE, SLOWLOG
# GET/LEN/RESET).
SLOWLOG_FLAGS = ["admin", "loading", "stale"]
SLOWLOG_ACL = ["@admin", "@slow", "@dangerous"]
EXTRA_SUBCOMMANDS = {
    "memory": [
        {
            "name": "memory|tiers",
            "subcommands": [],
            "info": command_info("memory|tiers", 3, ["readonly"], ["@read", "@slow"], key_specs=[read_only_key_at(2)], keys=(2, 2, 1)),
            "docs": firn_docs("O(1)", [Map(("name", Bulk("key")), ("type", Bulk("key")), ("key_spec_index", Int(0)))]),
        },
    ],
    "slowlog": [
        {
            "name": "slowlog|coldget",
            "subcommands": [],
            "info": command_info("slowlog|coldget", -2, SLOWLOG_FLAGS, SLOWLOG_ACL, ["request_policy:all_nodes", "nondeterministic_output"]),
            "docs": firn_docs(
                "O(N) where N is the number of entries returned",
                [Map(("name", Bulk("count")), ("type", Bulk("integer")), ("flags", simple_flags("optional")))],
            ),
        },
        {
            "name": "slowlog|coldlen",
            "subcommands": [],
            "info": command_info("slowlog|coldlen", 2, SLOWLOG_FLAGS, SLOWLOG_ACL, ["request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"]),
            "docs": firn_docs("O(1)"),
        },
        {
            "name": "slowlog|coldreset",
            "subcommands": [],
            "info": command_info("slowlog|coldreset", 2, SLOWLOG_FLAGS, SLOWLOG_ACL, ["request_policy:all_nodes", "response_policy:all_succeeded"]),
            "docs": firn_docs("O(N) where N is the number of entries in the log"),
        },
    ],
    "client": [
        {
            "name": "client|setinfo",
            "subcommands": [],
            "info": no_key_info("client|setinfo", 4, ["noscript", "loading", "stale"], ["@slow", "@connection"]),
            "docs": Map(
                ("summary", Bulk("")),
                ("since", Bulk("7.2.0")),
                ("group", Bulk("connection")),
                ("complexity", Bulk("O(1)")),
                (
                    "arguments",
                    Array(
                        Map(
                            ("name", Bulk("attr")),
                            ("type", Bulk("oneof")),
                            (
                                "arguments",
                                Array(
                                    # The JSON spells these tokens "lib-name" and "lib-ver";
                                    # Redis's utils/generate-command-code.py upper-cases every
                                    # token, so COMMAND DOCS reports them in capitals.
                                    Map(("name", Bulk("libname")), ("type", Bulk("string")), ("token", Bulk("LIB-NAME"))),
                                    Map(("name", Bulk("libver")), ("type", Bulk("string")), ("token", Bulk("LIB-VER"))),
                                ),
                            ),
                        )
                    ),
                ),
            ),
        },
        {
            "name": "client|no-touch",
            "subcommands": [],
            "info": no_key_info("client|no-touch", 3, ["noscript", "loading", "stale"], ["@slow", "@connection"]),
            "docs": Map(
                ("summary", Bulk("")),
                ("since", Bulk("7.2.0")),
                ("group", Bulk("connection")),
                ("complexity", Bulk("O(1)")),
                (
                    "arguments",
                    Array(
                        Map(
                            ("name", Bulk("enabled")),
                            ("type", Bulk("oneof")),
                            ("arguments", Array(pure_token("on", "ON"), pure_token("off", "OFF"))),
                        )
                    ),
                ),
            ),
        },
    ],
}


# --- RESP3 over a raw socket -------------------------------------------------


class RespError(Exception):
    pass


class Resp3Connection:
    def __init__(self, port, timeout=10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.reader = self.sock.makefile("rb")

    def close(self):
        try:
            self.reader.close()
        finally:
            self.sock.close()

    def call(self, *args):
        parts = [b"*%d\r\n" % len(args)]
        for arg in args:
            data = arg.encode() if isinstance(arg, str) else arg
            parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self.sock.sendall(b"".join(parts))
        return self.read()

    def _line(self):
        line = self.reader.readline()
        if not line.endswith(b"\r\n"):
            raise RespError("connection closed or bad line: %r" % line)
        return line[:-2]

    def _text(self, data):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise RespError("non-UTF-8 string in reply: %r" % data) from err

    def read(self):
        line = self._line()
        if not line:
            raise RespError("empty line in reply")
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return ("simple", self._text(rest))
        if kind == b"-":
            raise RespError("error reply: %s" % self._text(rest))
        if kind == b":":
            return ("int", int(rest))
        if kind == b"$":
            size = int(rest)
            if size < 0:
                raise RespError("RESP2 null bulk in a RESP3 reply")
            data = self.reader.read(size + 2)
            if len(data) != size + 2 or data[-2:] != b"\r\n":
                raise RespError("truncated bulk string")
            return ("bulk", self._text(data[:-2]))
        if kind in (b"*", b"~"):
            count = int(rest)
            if count < 0:
                raise RespError("RESP2 null array in a RESP3 reply")
            return ("array" if kind == b"*" else "set", [self.read() for _ in range(count)])
        if kind == b"%":
            return ("map", [(self.read(), self.read()) for _ in range(int(rest))])
        if kind == b"_":
            return ("null", None)
        # Doubles, big numbers, booleans, verbatim strings, attributes and pushes
        # never occur in COMMAND INFO/DOCS; MetaValue has no variant for them.
        raise RespError("unexpected RESP3 type %r in reply" % line)


# --- redis-server lifecycle --------------------------------------------------


def die_with_parent():
    """In the child: ask Linux to SIGTERM redis-server if this script dies, even by SIGKILL."""
    try:
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: the finally/atexit paths still stop it


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RedisServer:
    """A throw-away redis-server: no persistence, temp dir, always stopped."""

    def __init__(self, executable):
        self.executable = executable
        self.process = None
        self.port = None
        self.tmp = tempfile.TemporaryDirectory(prefix="gen-command-table-")

    def start(self):
        last_error = None
        for _ in range(5):  # the free port may be taken between probe and bind
            self.port = free_port()
            log = os.path.join(self.tmp.name, "redis.log")
            self.process = subprocess.Popen(
                [
                    self.executable,
                    "--port", str(self.port),
                    "--bind", "127.0.0.1",
                    "--save", "",
                    "--appendonly", "no",
                    "--daemonize", "no",
                    "--dir", self.tmp.name,
                    "--logfile", log,
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                preexec_fn=die_with_parent,
            )
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.process.poll() is None:
                try:
                    conn = Resp3Connection(self.port, timeout=2)
                except OSError as err:
                    last_error = err
                    time.sleep(0.05)
                    continue
                try:
                    conn.call("PING")
                    return conn
                except (OSError, RespError) as err:  # e.g. still loading
                    last_error = err
                    conn.close()
                    time.sleep(0.05)
            self.stop()
        raise RuntimeError("could not start %s: %s" % (self.executable, last_error))

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def cleanup(self):
        self.stop()
        self.tmp.cleanup()


# --- Collecting the facts ----------------------------------------------------


def check_map_keys(value, where):
    """MetaValue::Map keys are plain &str emitted as bulk strings: insist Redis agrees."""
    kind, payload = value
    if kind == "map":
        for key, item in payload:
            if key[0] != "bulk":
                raise RuntimeError("%s: map key %r is not a bulk string; MetaValue needs a variant for it" % (where, key))
            check_map_keys(item, where)
    elif kind in ("array", "set"):
        for item in payload:
            check_map_keys(item, where)
    elif kind not in ("int", "simple", "bulk"):
        raise RuntimeError("%s: %s value has no MetaValue variant" % (where, kind))


def fetch(conn, name):
    info = conn.call("COMMAND", "INFO", name)
    if info[0] != "array" or len(info[1]) != 1 or info[1][0][0] != "array":
        raise RuntimeError("COMMAND INFO %s: unexpected reply %r" % (name, info))
    docs = conn.call("COMMAND", "DOCS", name)
    if docs[0] != "map" or len(docs[1]) != 1 or docs[1][0][0] != Bulk(name):
        raise RuntimeError("COMMAND DOCS %s: unexpected reply %r" % (name, docs))
    info_entry, docs_entry = info[1][0], docs[1][0][1]
    check_map_keys(info_entry, "COMMAND INFO " + name)
    check_map_keys(docs_entry, "COMMAND DOCS " + name)
    return info_entry, docs_entry


def command_from_redis(info, docs):
    """Split a container's reply into a command record with nested subcommand records."""
    name = info[1][0][1]
    subs = []
    sub_infos = info[1][9][1]
    sub_docs = map_get(docs, "subcommands")
    if sub_infos:
        if sub_docs is None or len(sub_docs[1]) != len(sub_infos):
            raise RuntimeError("%s: COMMAND INFO and COMMAND DOCS disagree on subcommands" % name)
        docs_by_name = {k[1]: v for k, v in sub_docs[1]}
        for sub_info in sub_infos:
            sub_name = sub_info[1][0][1]
            subs.append({"name": sub_name, "info": sub_info, "docs": docs_by_name[sub_name], "subcommands": []})
    elif sub_docs is not None:
        raise RuntimeError("%s: subcommands in COMMAND DOCS only" % name)
    return {"name": name, "info": info, "docs": docs, "subcommands": subs}


def set_subcommands(command, subs):
    """Install `subs` (sorted by name) in the record and in its nested INFO/DOCS replies."""
    subs = sorted(subs, key=lambda s: s["name"])
    command["subcommands"] = subs
    if subs:
        command["info"][1][9] = Array(*(s["info"] for s in subs))
        map_set(command["docs"], "subcommands", ("map", [(Bulk(s["name"]), s["docs"]) for s in subs]))


def apply_summary(command):
    """Put Firn's summary in place of Redis's; drop empty history/doc_flags."""
    name = command["name"]
    if name not in SUMMARIES:
        raise RuntimeError("no Firn summary for %s: add one to SUMMARIES" % name)
    docs = command["docs"]
    if map_get(docs, "summary") is None:
        raise RuntimeError("%s: COMMAND DOCS has no summary" % name)
    map_set(docs, "summary", Bulk(SUMMARIES[name]))
    docs[1][:] = [(k, v) for k, v in docs[1] if not (k[1] in ("history", "doc_flags") and not v[1])]
    check_no_argument_summaries(name, map_get(docs, "arguments"))


def check_no_argument_summaries(name, arguments):
    # Redis 7.0 gives none of these commands' arguments a summary; if one ever
    # appears it is Redis's prose and needs Firn's own words first.
    for argument in (arguments or ("array", []))[1]:
        if map_get(argument, "summary") is not None:
            raise RuntimeError("%s: argument %r has a Redis summary" % (name, map_get(argument, "name")))
        check_no_argument_summaries(name, map_get(argument, "arguments"))


def collect(executable):
    server = RedisServer(executable)
    atexit.register(server.cleanup)
    try:
        conn = server.start()
        try:
            hello = conn.call("HELLO", "3")
            version = map_get(hello, "version")
            if version != Bulk(REDIS_VERSION):
                raise RuntimeError("%s reports version %r, need %s" % (executable, version, REDIS_VERSION))
            others = unserved_key_specs(conn)
            commands = []
            for name in COMMAND_NAMES:
                command = command_from_redis(*fetch(conn, name))
                set_subcommands(command, command["subcommands"] + EXTRA_SUBCOMMANDS.get(name, []))
                commands.append(command)
            unserved = []
            for name in sorted({o["name"] for o in others if "|" not in o["name"]} - set(COMMAND_NAMES)):
                command = command_from_redis(*fetch(conn, name))
                set_subcommands(command, command["subcommands"])
                unserved.append(command)
        finally:
            conn.close()
    finally:
        server.cleanup()
    served = {c["name"] for c in commands} | {s["name"] for c in commands for s in c["subcommands"]}
    others = [o for o in others if o["name"] not in served]
    for command in commands:
        apply_summary(command)
        for sub in command["subcommands"]:
            apply_summary(sub)
    used = {c["name"] for c in commands} | {s["name"] for c in commands for s in c["subcommands"]}
    unused = sorted(set(SUMMARIES) - used)
    if unused:
        raise RuntimeError("SUMMARIES has entries for commands not generated: %s" % ", ".join(unused))
    known = {o["name"] for o in others} | used
    if set(KEYS_PROCS) - known:
        raise RuntimeError("KEYS_PROCS names unknown commands: %s" % ", ".join(sorted(set(KEYS_PROCS) - known)))
    for command in unserved:
        apply_unserved_summary(command)
        for sub in command["subcommands"]:
            apply_unserved_summary(sub)
    return commands, others, unserved


def apply_unserved_summary(command):
    """A command Firn does not serve yet is described as such (Redis's prose
    is never copied); every other field is Redis's."""
    name = command["name"].upper().replace("|", " ")
    docs = command["docs"]
    if map_get(docs, "summary") is None:
        raise RuntimeError("%s: COMMAND DOCS has no summary" % command["name"])
    map_set(docs, "summary", Bulk("Redis 7.0's %s, which Firn does not serve yet." % name))
    docs[1][:] = [(k, v) for k, v in docs[1] if not (k[1] in ("history", "doc_flags") and not v[1])]
    strip_argument_summaries(map_get(docs, "arguments"))


def strip_argument_summaries(arguments):
    for argument in (arguments or ("array", []))[1]:
        argument[1][:] = [(k, v) for k, v in argument[1] if k[1] != "summary"]
        strip_argument_summaries(map_get(argument, "arguments"))


def unserved_key_specs(conn):
    """Name, arity, flags and key specs of every Redis command and subcommand, by name."""
    reply = conn.call("COMMAND")
    if reply[0] != "array":
        raise RuntimeError("COMMAND: unexpected reply %r" % (reply,))
    found = []

    def walk(info):
        fields = info[1]
        found.append({
            "name": fields[0][1],
            "arity": fields[1][1],
            "flags": [f[1] for f in fields[2][1]],
            "key_specs": fields[8],
        })
        for sub in fields[9][1]:
            walk(sub)

    for info in reply[1]:
        check_map_keys(info, "COMMAND")
        walk(info)
    return sorted(found, key=lambda c: c["name"])


# --- Rust output -------------------------------------------------------------

WIDTH = 100

HEADER = '''\
//! Generated by scripts/gen_command_table.py from redis-server 7.0.15's COMMAND INFO / COMMAND DOCS,
//! plus Firn's own entries (see the script). Do not edit by hand: edit the script and re-run it.
//!
//! Every `summary` is Firn's own text; all other facts are Redis's. Subcommands are sorted by
//! name (Redis's own order changes between runs). Map keys are always bulk strings in these
//! replies, so `MetaValue::Map` keys are plain `&str`.

/// A reply tree as COMMAND INFO / COMMAND DOCS return it (RESP3 types kept, so RESP2 and RESP3
/// can both be produced exactly).
#[derive(Debug)]
pub enum MetaValue {
    Int(i64),
    Simple(&'static str),
    Bulk(&'static str),
    Array(&'static [MetaValue]),
    Set(&'static [MetaValue]),
    /// Keys are bulk strings in every COMMAND INFO / COMMAND DOCS map.
    Map(&'static [(&'static str, MetaValue)]),
}

#[derive(Debug)]
pub struct CommandSpec {
    /// Lowercase as Redis reports it, e.g. "get", "config|get".
    pub name: &'static str,
    pub arity: i32,
    /// Command flags, e.g. `Flags::WRITE.with(Flags::DENYOOM)`.
    pub flags: Flags,
    pub first_key: i32,
    pub last_key: i32,
    pub key_step: i32,
    /// Redis's own key-finding procedure, where its key specs are not enough.
    pub keys_proc: KeysProc,
    /// The complete COMMAND INFO entry for this command, as Redis returns it.
    pub info: MetaValue,
    /// The complete COMMAND DOCS value (the map) for this command, with Firn's own summary.
    pub docs: MetaValue,
    pub subcommands: &'static [CommandSpec],
}

/// What COMMAND GETKEYS needs of a command Firn does not serve.
#[derive(Debug)]
pub struct KeySpecs {
    /// Lowercase as Redis reports it, e.g. "sort", "xinfo|stream".
    pub name: &'static str,
    pub arity: i32,
    pub flags: Flags,
    /// The key specs of the command's COMMAND INFO entry.
    pub key_specs: MetaValue,
    pub keys_proc: KeysProc,
}

/// The getkeys procedures of Redis 7.0 (`get_keys_function` in its command
/// JSON) that COMMAND GETKEYS needs when a command's key specs are
/// incomplete (keyspecs.rs); the other commands' specs suffice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeysProc {
    /// The key specs alone.
    Specs,
    Sort,
    SortRo,
    Migrate,
    Georadius,
    GeoradiusByMember,
    /// Its keys by its specs; its keys' flags depend on its arguments.
    Set,
    Bitfield,
}

use MetaValue::{Array, Bulk, Int, Map, Set, Simple};

'''

FOOTER = '''
#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(value: &MetaValue) -> Option<&'static str> {
        match value {
            Bulk(s) => Some(s),
            _ => None,
        }
    }

    fn int(value: &MetaValue) -> Option<i64> {
        match value {
            Int(n) => Some(*n),
            _ => None,
        }
    }

    fn docs_field(spec: &CommandSpec, key: &str) -> Option<&'static MetaValue> {
        match spec.docs {
            Map(pairs) => pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The scalar fields mirror the INFO reply, and subcommands appear in the same (sorted)
    /// order in `subcommands`, in INFO's subcommand array and in DOCS' subcommand map.
    fn check(spec: &CommandSpec, container: Option<&str>) {
        let Array(fields) = spec.info else {
            panic!("{}: COMMAND INFO entry is not an array", spec.name)
        };
        assert_eq!(fields.len(), 10, "{}", spec.name);
        assert_eq!(bulk(&fields[0]), Some(spec.name));
        let arity = Some(i64::from(spec.arity));
        assert_eq!(int(&fields[1]), arity, "{}", spec.name);
        let flags: Vec<&str> = match fields[2] {
            Set(flags) => flags
                .iter()
                .filter_map(|f| match f {
                    Simple(s) => Some(*s),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        let shown = spec.flags.names().filter(|f| *f != "may_replicate");
        assert_eq!(flags, shown.collect::<Vec<_>>(), "{}", spec.name);
        let keys = [spec.first_key, spec.last_key, spec.key_step].map(|n| Some(i64::from(n)));
        let found = [int(&fields[3]), int(&fields[4]), int(&fields[5])];
        assert_eq!(found, keys, "{}", spec.name);
        let summary = docs_field(spec, "summary").and_then(bulk);
        assert!(summary.is_some_and(|s| !s.is_empty()), "{}", spec.name);
        let parent = spec.name.split_once('|').map(|(parent, _)| parent);
        assert_eq!(parent, container, "{}", spec.name);

        let names: Vec<&str> = spec.subcommands.iter().map(|s| s.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted, "{}: subcommands not sorted", spec.name);
        let info_names: Vec<&str> = match fields[9] {
            // Redis 7.0 replies with an empty set, not an empty array, when there are none.
            Set(&[]) => Vec::new(),
            Array(subs) => subs
                .iter()
                .filter_map(|s| match s {
                    Array(sub_fields) => sub_fields.first().and_then(bulk),
                    _ => None,
                })
                .collect(),
            _ => panic!("{}: INFO subcommands field", spec.name),
        };
        assert_eq!(info_names, names, "{}", spec.name);
        let docs_names: Vec<&str> = match docs_field(spec, "subcommands") {
            None => Vec::new(),
            Some(Map(subs)) => subs.iter().map(|(k, _)| *k).collect(),
            Some(_) => panic!("{}: DOCS subcommands field", spec.name),
        };
        assert_eq!(docs_names, names, "{}", spec.name);
        for sub in spec.subcommands {
            check(sub, Some(spec.name));
        }
    }

    #[test]
    fn table_is_consistent() {
        assert!(!COMMANDS.is_empty());
        for spec in COMMANDS {
            check(spec, None);
        }
    }
}
'''


# Every flag name COMMAND INFO can report in Redis 7.0 (server.c
# addReplyCommandFlags), in Redis's order: a bit each in `Flags`.
FLAG_NAMES = (
    "write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript",
    "blocking", "loading", "stale", "skip_monitor", "skip_slowlog", "asking",
    "fast", "no_auth", "may_replicate", "no_mandatory_keys", "no_async_loading",
    "no_multi", "movablekeys", "allow_busy",
)

# Flags Redis 7.0 gives commands in src/commands/*.json but hides from
# COMMAND INFO ("Hidden on purpose" in addReplyCommandFlags). Firn needs
# them (CLIENT PAUSE WRITE holds every MAY_REPLICATE command), so they are
# carried here, by flag, from the 7.0.15 JSON files.
# The commands whose `get_keys_function` (in Redis 7.0.15's command JSON)
# COMMAND GETKEYS needs because their key specs are incomplete or their
# keys' flags vary with the arguments (SET, BITFIELD), carried here
# as HIDDEN_FLAGS are: the procedure each names, as a `KeysProc` variant.
KEYS_PROCS = {
    "sort": "Sort",
    "sort_ro": "SortRo",
    "migrate": "Migrate",
    "georadius": "Georadius",
    "georadiusbymember": "GeoradiusByMember",
    "set": "Set",
    "bitfield": "Bitfield",
}

HIDDEN_FLAGS = {
    "may_replicate": ("eval", "evalsha", "fcall", "pfcount", "publish", "spublish"),
}

FLAGS_RUST = """\
/// A command's flags (the third field of its COMMAND INFO entry) as a bitset, one bit per flag
/// name Redis 7.0 reports. `names` yields them in the order the entry lists them.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Flags(u32);

impl Flags {
    pub const NONE: Flags = Flags(0);
%s
    /// Every flag, with its name as COMMAND INFO spells it.
    pub const ALL: &'static [(Flags, &'static str)] = &[
%s
    ];

    /// `self` with `other`'s flags added.
    pub const fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    /// `self` without `other`'s flags.
    pub const fn without(self, other: Flags) -> Flags {
        Flags(self.0 & !other.0)
    }

    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The names of the flags set, in Redis's order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Flags::ALL
            .iter()
            .filter(move |(flag, _)| self.contains(*flag))
            .map(|(_, name)| *name)
    }
}
""" % (
    "".join("    pub const %s: Flags = Flags(1 << %d);\n" % (f.upper(), i) for i, f in enumerate(FLAG_NAMES)),
    "".join("        (Flags::%s, %s),\n" % (f.upper(), '"%s"' % f) for f in FLAG_NAMES).rstrip("\n"),
)


def check_flags(flags):
    """`flags` are all in Redis's vocabulary and in its order."""
    for flag in flags:
        if flag not in FLAG_NAMES:
            raise RuntimeError("unknown command flag %r: add it to FLAG_NAMES" % flag)
    ordered = [f for f in FLAG_NAMES if f in flags]
    if ordered != list(flags):
        raise RuntimeError("flags %r are not in Redis's order" % (flags,))


def flags_rust(flags):
    """A flag list as a `Flags` constant expression."""
    check_flags(flags)
    if not flags:
        return "Flags::NONE"
    return "Flags::" + flags[0].upper() + "".join(".with(Flags::%s)" % f.upper() for f in flags[1:])


def rust_str(text):
    out = ['"']
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append("\\u{%x}" % ord(ch))
    out.append('"')
    return "".join(out)


def inline(value):
    kind, payload = value
    if kind == "int":
        return "Int(%d)" % payload
    if kind == "simple":
        return "Simple(%s)" % rust_str(payload)
    if kind == "bulk":
        return "Bulk(%s)" % rust_str(payload)
    if kind in ("array", "set"):
        return "%s(&[%s])" % ("Array" if kind == "array" else "Set", ", ".join(inline(v) for v in payload))
    if kind == "map":
        return "Map(&[%s])" % ", ".join("(%s, %s)" % (rust_str(k[1]), inline(v)) for k, v in payload)
    raise ValueError(kind)


def pretty(value, indent, column):
    """`value` as Rust, starting at `column`; broken over lines at `indent` when too wide."""
    flat = inline(value)
    kind, payload = value
    if column + len(flat) + 1 <= WIDTH or kind in ("int", "simple", "bulk"):
        return flat
    inner = indent + 4
    pad = " " * inner
    lines = []
    if kind == "map":
        head = "Map(&["
        for key, item in payload:
            prefix = "(%s, " % rust_str(key[1])
            lines.append(pad + prefix + pretty(item, inner, inner + len(prefix)) + "),")
    else:
        head = "%s(&[" % ("Array" if kind == "array" else "Set")
        for item in payload:
            lines.append(pad + pretty(item, inner, inner) + ",")
    return head + "\n" + "\n".join(lines) + "\n" + " " * indent + "])"


def spec_rust(command, indent):
    fields = command["info"][1]
    pad = " " * (indent + 4)
    flags = [f[1] for f in fields[2][1]]
    check_flags(flags)
    flags = [f for f in FLAG_NAMES if f in flags or command["name"] in HIDDEN_FLAGS.get(f, ())]
    lines = [" " * indent + "CommandSpec {"]
    lines.append(pad + "name: %s," % rust_str(command["name"]))
    lines.append(pad + "arity: %d," % fields[1][1])
    lines.append(pad + "flags: %s," % flags_rust(flags))
    lines.append(pad + "first_key: %d," % fields[3][1])
    lines.append(pad + "last_key: %d," % fields[4][1])
    lines.append(pad + "key_step: %d," % fields[5][1])
    lines.append(pad + "keys_proc: KeysProc::%s," % KEYS_PROCS.get(command["name"], "Specs"))
    lines.append(pad + "info: " + pretty(command["info"], indent + 4, indent + 10) + ",")
    lines.append(pad + "docs: " + pretty(command["docs"], indent + 4, indent + 10) + ",")
    if command["subcommands"]:
        lines.append(pad + "subcommands: &[")
        for sub in command["subcommands"]:
            lines.append(spec_rust(sub, indent + 8))
        lines.append(pad + "],")
    else:
        lines.append(pad + "subcommands: &[],")
    lines.append(" " * indent + "},")
    return "\n".join(lines)


def key_specs_rust(other, indent):
    pad = " " * (indent + 4)
    lines = [" " * indent + "KeySpecs {"]
    lines.append(pad + "name: %s," % rust_str(other["name"]))
    lines.append(pad + "arity: %d," % other["arity"])
    lines.append(pad + "flags: %s," % flags_rust(other["flags"]))
    lines.append(pad + "keys_proc: KeysProc::%s," % KEYS_PROCS.get(other["name"], "Specs"))
    lines.append(pad + "key_specs: " + pretty(other["key_specs"], indent + 4, indent + 15) + ",")
    lines.append(" " * indent + "},")
    return "\n".join(lines)


def render(generated):
    commands, others, unserved = generated
    parts = [HEADER, FLAGS_RUST, "\n"]
    parts.append("/// Every command Firn serves, grouped as in the script's COMMAND_GROUPS.\n")
    parts.append("#[rustfmt::skip]\n")
    parts.append("pub static COMMANDS: &[CommandSpec] = &[\n")
    for group, names in COMMAND_GROUPS:
        parts.append("    // %s\n" % group)
        wanted = set(names.split())
        for command in commands:
            if command["name"] in wanted:
                parts.append(spec_rust(command, 4) + "\n")
    parts.append("];\n\n")
    parts.append(
        "/// Every Redis 7.0 command and subcommand Firn does not serve, sorted by name, with what\n"
        "/// COMMAND GETKEYS needs to find its keys as Redis does.\n"
    )
    parts.append("#[rustfmt::skip]\n")
    parts.append("pub static KEY_SPECS: &[KeySpecs] = &[\n")
    for other in others:
        parts.append(key_specs_rust(other, 4) + "\n")
    parts.append("];\n\n")
    parts.append(
        "/// Every other Redis 7.0 command, with its subcommands, sorted by name: COMMAND INFO and\n"
        "/// COMMAND DOCS describe it as Redis does (its summary says Firn does not serve it yet).\n"
    )
    parts.append("#[rustfmt::skip]\n")
    parts.append("pub static UNSERVED: &[CommandSpec] = &[\n")
    for command in unserved:
        parts.append(spec_rust(command, 4) + "\n")
    parts.append("];\n")
    parts.append(FOOTER)
    return "".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="regenerate into a temp file and diff with the checked-in one")
    parser.add_argument("--redis-server", default="redis-server", help="redis-server %s executable" % REDIS_VERSION)
    parser.add_argument("--output", default=OUTPUT, help="file to write (or to compare with --check)")
    options = parser.parse_args()

    # Turn SIGTERM/SIGHUP into SystemExit so the finally blocks stop redis-server.
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda s, _frame: sys.exit(128 + s))

    text = render(collect(options.redis_server))

    if options.check:
        with tempfile.NamedTemporaryFile("w", suffix=".rs", delete=False) as tmp:
            tmp.write(text)
        try:
            with open(options.output) as current_file:
                current = current_file.read()
            with open(tmp.name) as fresh_file:
                fresh = fresh_file.read()
        finally:
            os.unlink(tmp.name)
        if current != fresh:
            sys.stdout.writelines(
                difflib.unified_diff(
                    current.splitlines(True), fresh.splitlines(True), options.output, "regenerated"
                )
            )
            print("%s is out of date: run scripts/gen_command_table.py" % options.output, file=sys.stderr)
            return 1
        print("%s is up to date" % options.output)
        return 0

    with open(options.output, "w") as out:
        out.write(text)
    print("wrote %s (%d commands)" % (options.output, len(COMMAND_NAMES)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
