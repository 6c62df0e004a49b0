#!/usr/bin/env python3
"""Generates crates/firn-server/src/command_table.rs: one declaration per
command Firn serves, as data (arity, flags, key positions, the complete
COMMAND INFO and COMMAND DOCS replies).

Interface facts (arity, flags, key specs, argument structure, group, since,
complexity) are read from a redis-server 7.0.15 started on a free loopback
port, over RESP3 so that maps, sets and simple strings keep their types.
The `summary` of each command is Firn's own text (SUMMARIES below). Redis
7.2's CLIENT SETINFO and CLIENT NO-TOUCH, which 7.0 lacks, are declared
here by hand.

    scripts/gen_command_table.py           # rewrite the file
    scripts/gen_command_table.py --check   # exit 1 if the file is stale
"""
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "crates", "firn-server", "src", "command_table.rs")

COMMANDS = """ping echo hello auth select quit reset client
info dbsize flushdb flushall time lastsave monitor config command shutdown save bgsave slowlog swapdb
set get getex getdel getset mget mset msetnx setnx setex psetex incr decr incrby decrby incrbyfloat
append strlen getrange substr setrange lcs
setbit getbit bitcount bitpos bitop bitfield bitfield_ro
del unlink exists type touch keys scan randomkey expire pexpire expireat pexpireat ttl pttl
expiretime pexpiretime persist rename renamenx copy move object dump restore""".split()

SUMMARIES = {
    "ping": "Checks the connection; replies PONG or echoes the argument.",
    "echo": "Replies with the given message.",
    "hello": "Chooses the protocol version, optionally authenticating and naming the connection.",
    "auth": "Authenticates the connection.",
    "select": "Switches the connection to another logical database.",
    "quit": "Closes the connection after replying.",
    "reset": "Returns the connection to its initial state.",
    "client": "Inspects and controls client connections.",
    "client|id": "The connection's unique id.",
    "client|setname": "Names the connection.",
    "client|getname": "The connection's name.",
    "client|list": "One line per open connection.",
    "client|info": "This connection as one CLIENT LIST line.",
    "client|kill": "Closes connections that match filters.",
    "client|setinfo": "Records the client library's name or version.",
    "client|reply": "Turns replies to this connection on or off.",
    "client|pause": "Holds clients' commands for a while.",
    "client|unpause": "Ends a CLIENT PAUSE.",
    "client|no-evict": "Marks the connection as never to be evicted.",
    "client|no-touch": "Keeps this connection's reads from counting as key accesses.",
    "client|help": "Lists the CLIENT subcommands.",
    "client|caching": "Controls client-side caching for the next command.",
    "client|getredir": "The id client-side caching redirects to.",
    "client|tracking": "Turns client-side caching on or off.",
    "client|trackinginfo": "Client-side caching state of the connection.",
    "client|unblock": "Unblocks a client blocked in a command.",
    "info": "Server state and statistics as text sections.",
    "dbsize": "Number of keys in the current database.",
    "flushdb": "Removes every key of the current database.",
    "flushall": "Removes every key of every database.",
    "swapdb": "Exchanges the contents of two databases.",
    "time": "The server's clock: seconds and microseconds.",
    "lastsave": "Unix time of the last successful save.",
    "monitor": "Streams every command the server runs.",
    "config": "Reads and changes the server configuration.",
    "config|get": "Options matching patterns, with their values.",
    "config|set": "Changes options at run time.",
    "config|resetstat": "Zeroes the statistics INFO reports.",
    "config|rewrite": "Writes the running configuration back to its file.",
    "config|help": "Lists the CONFIG subcommands.",
    "command": "Describes the commands the server serves.",
    "command|count": "How many commands the server serves.",
    "command|info": "Arity, flags and key positions of commands.",
    "command|docs": "Documentation of commands.",
    "command|list": "Names of the commands served.",
    "command|getkeys": "The keys a full command would touch.",
    "command|getkeysandflags": "The keys a full command would touch, with access flags.",
    "command|help": "Lists the COMMAND subcommands.",
    "shutdown": "Stops the server.",
    "save": "Writes a consistent snapshot and waits for it.",
    "bgsave": "Writes a consistent snapshot in the background.",
    "slowlog": "Reads and clears the log of slow commands.",
    "slowlog|get": "The newest slow-log entries.",
    "slowlog|len": "Number of slow-log entries.",
    "slowlog|reset": "Empties the slow log.",
    "slowlog|help": "Lists the SLOWLOG subcommands.",
    "set": "Stores a string value, with optional expiry and conditions.",
    "get": "The string value of a key.",
    "getex": "The string value of a key, changing its expiry.",
    "getdel": "The string value of a key, deleting the key.",
    "getset": "Stores a string value and returns the previous one.",
    "mget": "The string values of several keys.",
    "mset": "Stores several string values at once.",
    "msetnx": "Stores several string values only if none of the keys exists.",
    "setnx": "Stores a string value only if the key does not exist.",
    "setex": "Stores a string value that expires after some seconds.",
    "psetex": "Stores a string value that expires after some milliseconds.",
    "incr": "Adds one to an integer value.",
    "decr": "Subtracts one from an integer value.",
    "incrby": "Adds an integer to an integer value.",
    "decrby": "Subtracts an integer from an integer value.",
    "incrbyfloat": "Adds a floating-point number to a numeric value.",
    "append": "Appends bytes to a string value.",
    "strlen": "Length of a string value.",
    "getrange": "A byte range of a string value.",
    "substr": "A byte range of a string value (old name of GETRANGE).",
    "setrange": "Overwrites bytes of a string value from an offset.",
    "lcs": "Longest common subsequence of two string values.",
    "setbit": "Sets or clears one bit of a string value.",
    "getbit": "One bit of a string value.",
    "bitcount": "Number of set bits in a string value or a range of it.",
    "bitpos": "Position of the first set or clear bit.",
    "bitop": "Bitwise AND, OR, XOR or NOT of string values into a key.",
    "bitfield": "Reads, writes and increments integer fields of a string value.",
    "bitfield_ro": "Reads integer fields of a string value.",
    "del": "Deletes keys.",
    "unlink": "Deletes keys (members are reclaimed in the background).",
    "exists": "How many of the given keys exist.",
    "type": "The type of the value at a key.",
    "touch": "How many of the given keys exist, marking them accessed.",
    "keys": "Every key matching a pattern.",
    "scan": "Iterates over the keys of the database.",
    "randomkey": "A random key of the database.",
    "expire": "Sets a key's time to live in seconds.",
    "pexpire": "Sets a key's time to live in milliseconds.",
    "expireat": "Sets a key's expiry as a Unix time in seconds.",
    "pexpireat": "Sets a key's expiry as a Unix time in milliseconds.",
    "ttl": "A key's remaining time to live in seconds.",
    "pttl": "A key's remaining time to live in milliseconds.",
    "expiretime": "A key's expiry as a Unix time in seconds.",
    "pexpiretime": "A key's expiry as a Unix time in milliseconds.",
    "persist": "Removes a key's expiry.",
    "rename": "Renames a key, replacing any destination.",
    "renamenx": "Renames a key only if the new name is free.",
    "copy": "Copies a value to another key, possibly in another database.",
    "move": "Moves a key to another database.",
    "object": "Inspects how values are stored.",
    "object|encoding": "The internal encoding of a value.",
    "object|freq": "The access frequency of a key.",
    "object|idletime": "Seconds since a key was last accessed.",
    "object|refcount": "Number of references to a value.",
    "object|help": "Lists the OBJECT subcommands.",
    "dump": "A value serialised in Redis's DUMP format.",
    "restore": "Creates a key from a DUMP payload.",
}

# Redis 7.2 subcommands Firn implements, in the parsed-reply shape below.
def S(s): return ("S", s)
def B(s): return ("B", s)
def I(n): return ("I", n)
def A(*xs): return ("A", list(xs))
def T(*xs): return ("T", list(xs))
def M(*kv): return ("M", [(B(k), v) for k, v in kv])

EXTRA_CLIENT_SUBCOMMANDS = [
    (A(B("client|setinfo"), I(4), T(S("noscript"), S("loading"), S("stale")), I(0), I(0), I(0),
       T(S("@slow"), S("@connection")), A(), A(), A()),
     M(("summary", B("")), ("since", B("7.2.0")), ("group", B("connection")), ("complexity", B("O(1)")),
       ("arguments", A(M(("name", B("attr")), ("type", B("oneof")), ("arguments", A(
           M(("name", B("libname")), ("type", B("string")), ("token", B("LIB-NAME"))),
           M(("name", B("libver")), ("type", B("string")), ("token", B("LIB-VER")))))))))),
    (A(B("client|no-touch"), I(3), T(S("noscript"), S("loading"), S("stale")), I(0), I(0), I(0),
       T(S("@slow"), S("@connection")), A(), A(), A()),
     M(("summary", B("")), ("since", B("7.2.0")), ("group", B("connection")), ("complexity", B("O(1)")),
       ("arguments", A(M(("name", B("enabled")), ("type", B("oneof")), ("arguments", A(
           M(("name", B("on")), ("type", B("pure-token")), ("token", B("ON"))),
           M(("name", B("off")), ("type", B("pure-token")), ("token", B("OFF")))))))))),
]


class Resp3:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.f = self.sock.makefile("rb")

    def call(self, *args):
        req = b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in args)
        self.sock.sendall(req)
        return self.read()

    def read(self):
        line = self.f.readline().rstrip(b"\r\n")
        kind, rest = chr(line[0]), line[1:]
        if kind == "+":
            return ("S", rest.decode())
        if kind == "-":
            raise RuntimeError(rest.decode())
        if kind == ":":
            return ("I", int(rest))
        if kind == "$":
            n = int(rest)
            return None if n < 0 else ("B", self.f.read(n + 2)[:-2].decode())
        if kind == "_":
            return None
        if kind in "*~%":
            n = int(rest)
            items = [self.read() for _ in range(n * (2 if kind == "%" else 1))]
            if kind == "%":
                return ("M", [(items[i], items[i + 1]) for i in range(0, len(items), 2)])
            return ("A" if kind == "*" else "T", items)
        raise RuntimeError("unexpected reply " + repr(line))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def fetch():
    port = free_port()
    tmp = tempfile.mkdtemp()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", tmp],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                conn = Resp3(port)
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("redis-server did not start")
        conn.call("HELLO", "3")
        out = []
        for name in COMMANDS:
            info = conn.call("COMMAND", "INFO", name)[1][0]
            docs = conn.call("COMMAND", "DOCS", name)[1][0][1]
            out.append((info, docs))
        return out
    finally:
        proc.terminate()
        proc.wait()


def with_summary(name, docs):
    """The docs map with Firn's summary (and subcommand docs likewise)."""
    kind, pairs = docs
    new = []
    for k, v in pairs:
        if k[1] == "summary":
            v = ("B", SUMMARIES.get(name, ""))
        elif k[1] == "subcommands":
            v = ("M", [(sk, with_summary(sk[1], sv)) for sk, sv in v[1]])
        new.append((k, v))
    return (kind, new)


def lit(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def meta(v, indent=""):
    if v is None:
        return "MetaValue::Array(&[])"
    kind, x = v
    if kind == "S":
        return "MetaValue::Simple(%s)" % lit(x)
    if kind == "B":
        return "MetaValue::Bulk(%s)" % lit(x)
    if kind == "I":
        return "MetaValue::Int(%d)" % x
    if kind == "A":
        return "MetaValue::Array(&[%s])" % ", ".join(meta(i) for i in x)
    if kind == "T":
        return "MetaValue::Set(&[%s])" % ", ".join(meta(i) for i in x)
    if kind == "M":
        return "MetaValue::Map(&[%s])" % ", ".join("(%s, %s)" % (lit(k[1]), meta(v)) for k, v in x)
    raise ValueError(kind)


def spec(info, docs):
    fields = info[1]
    name = fields[0][1]
    subdocs = {}
    for k, v in (docs[1] if docs else []):
        if k[1] == "subcommands":
            subdocs = {sk[1]: sv for sk, sv in v[1]}
    subs = fields[9][1] if len(fields) > 9 else []
    sub_specs = ",\n".join(spec(s, subdocs.get(s[1][0][1])) for s in subs)
    return ("CommandSpec {\n name: %s,\n arity: %d,\n flags: &[%s],\n first_key: %d,\n last_key: %d,\n key_step: %d,\n"
            " info: %s,\n docs: %s,\n subcommands: &[%s],\n}") % (
        lit(name), fields[1][1], ", ".join(lit(f[1]) for f in fields[2][1]), fields[3][1], fields[4][1],
        fields[5][1], meta(info), meta(docs), sub_specs)


def render():
    entries = []
    for info, docs in fetch():
        name = info[1][0][1]
        if name == "client":
            info[1][9][1].extend(i for i, _ in EXTRA_CLIENT_SUBCOMMANDS)
            for k, v in docs[1]:
                if k[1] == "subcommands":
                    v[1].extend((B(i[1][0][1]), d) for i, d in EXTRA_CLIENT_SUBCOMMANDS)
        # Redis lists subcommands in hash-table order; sort for stable output.
        if len(info[1]) > 9:
            info[1][9][1].sort(key=lambda sub: sub[1][0][1])
        for k, v in docs[1]:
            if k[1] == "subcommands":
                v[1].sort(key=lambda pair: pair[0][1])
        entries.append(spec(info, with_summary(name, docs)))
    return HEADER + "pub static COMMANDS: &[CommandSpec] = &[\n" + ",\n".join(entries) + "\n];\n"


HEADER = '''//! Generated by scripts/gen_command_table.py from redis-server 7.0.15's
//! COMMAND INFO / COMMAND DOCS (interface facts) with Firn's own summaries,
//! plus Redis 7.2's CLIENT SETINFO and CLIENT NO-TOUCH. Do not edit by hand:
//! edit the script and run it again.

/// A reply tree as COMMAND INFO / COMMAND DOCS return it, keeping RESP3
/// types so that RESP2 and RESP3 replies can both be produced exactly.
#[derive(Debug)]
pub enum MetaValue {
    Int(i64),
    Simple(&'static str),
    Bulk(&'static str),
    Array(&'static [MetaValue]),
    Set(&'static [MetaValue]),
    Map(&'static [(&'static str, MetaValue)]),
}

/// One command as data: dispatch, arity checks, key locking and COMMAND
/// all read it.
#[derive(Debug)]
pub struct CommandSpec {
    /// Lowercase, `container|sub` for subcommands.
    pub name: &'static str,
    pub arity: i32,
    pub flags: &'static [&'static str],
    pub first_key: i32,
    pub last_key: i32,
    pub key_step: i32,
    /// The complete COMMAND INFO entry.
    pub info: MetaValue,
    /// The complete COMMAND DOCS value.
    pub docs: MetaValue,
    pub subcommands: &'static [CommandSpec],
}

'''


def main():
    text = render()
    formatted = subprocess.run(["rustfmt", "--edition", "2021", "--emit", "stdout", "--quiet"],
                               input=text.encode(), capture_output=True)
    if formatted.returncode == 0:
        text = formatted.stdout.decode()
    if "--check" in sys.argv:
        with open(OUT) as f:
            if f.read() != text:
                print("command_table.rs is stale: run scripts/gen_command_table.py", file=sys.stderr)
                sys.exit(1)
        print("command_table.rs is up to date")
        return
    with open(OUT, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
