#!/usr/bin/env python3
"""bench/replication.sh's measuring hands, over raw sockets (no redis-py).

  replication.py sync --primary P --replica R [--command SLAVEOF] [--log FILE]
      sends REPLICAOF 127.0.0.1 P to R and polls INFO replication on both
      every 20 ms until R says master_link_status:up and its offset
      (slave_repl_offset) equals P's master_repl_offset; prints
      {"seconds": ..., "offset": ..., "in_sync_at": ..., "last_byte_at": ...,
      "read_bytes": ...}: the seconds from REPLICAOF to when INFO first
      said master_sync_in_progress:1 and to when master_sync_read_bytes
      (Firn) last grew, and its last value. With --log, a "replication link
      down" line that the replica's log gains meanwhile ends the wait at
      once, as a failure with that line (a Firn replica retries a failed
      sync every second and would otherwise loop until the timeout).
  replication.py caught-up --primary P --replica R [--replica R2 ...]
      waits until every replica's offset equals the primary's; prints the
      seconds it took.
  replication.py lag --primary P --replica R --seconds S [--interval-ms 10]
      every interval: SET lag:<n> <ns> on P, then GET it from R every
      0.2 ms until it is there; lag = that moment - the moment the SET was
      sent (so it includes the primary's own SET latency, reported apart,
      and the lag counted from the primary's reply instead, 0 at least).
      Each tick also reads both offsets (P's master_repl_offset, then R's
      slave_repl_offset): the gap, in the stream's units. Prints JSON.
  replication.py collections --port P --elements E
      fills big:hash, big:list, big:set, big:zset with E elements each,
      1,000 per command, pipelined.

Exits 1 with {"error": ...} on failure.
"""

import argparse
import json
import re
import socket
import sys
import time


class Conn:
    """One RESP2 connection: send a command, read its reply."""

    def __init__(self, port, host="127.0.0.1"):
        self.sock = socket.create_connection((host, port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def send(self, *args):
        self.sock.sendall(encode(args))

    def call(self, *args):
        self.send(*args)
        return self.reply()

    def _line(self):
        while b"\r\n" not in self.buf:
            data = self.sock.recv(1 << 16)
            if not data:
                raise ConnectionError("the server closed the connection")
            self.buf += data
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            data = self.sock.recv(1 << 16)
            if not data:
                raise ConnectionError("the server closed the connection")
            self.buf += data
        out, self.buf = self.buf[:n], self.buf[n + 2 :]
        return out

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise RuntimeError(f"unexpected reply {line!r}")


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def info(conn):
    fields = {}
    for line in conn.call("INFO", "replication").decode().splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            fields[k] = v
    return fields


def primary_offset(conn):
    return int(info(conn)["master_repl_offset"])


def replica_offset(fields):
    """A replica's applied offset: slave_repl_offset (Firn, Kvrocks, Redis)."""
    return int(fields.get("slave_repl_offset", fields.get("master_repl_offset", -1)))


def fail(message):
    print(json.dumps({"error": message}))
    sys.exit(1)


def link_down_line(path, start):
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            f.seek(start)
            for line in f.read().decode(errors="replace").splitlines():
                if "replication link down" in line:
                    # Without the log's colours.
                    return re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
    except OSError:
        pass
    return None


def log_size(path):
    try:
        with open(path, "rb") as f:
            return f.seek(0, 2)
    except OSError:
        return 0


def sync(o):
    p, r = Conn(o.primary), Conn(o.replica)
    log_start = log_size(o.log) if o.log else 0
    started = time.monotonic()
    r.call(o.command, "127.0.0.1", o.primary)
    deadline = started + o.timeout
    last = {}
    # The phases, from what INFO shows (a Firn replica's
    # master_sync_read_bytes grows while the checkpoint comes in, then
    # stays while it is loaded): first poll in sync, last byte counted.
    first_in_sync = last_byte = None
    read_bytes = 0
    while time.monotonic() < deadline:
        last = info(r)
        at = round(time.monotonic() - started, 3)
        if last.get("master_sync_in_progress") == "1" and first_in_sync is None:
            first_in_sync = at
        got = int(last.get("master_sync_read_bytes", 0))
        if got > read_bytes:
            read_bytes, last_byte = got, at
        if last.get("master_link_status") == "up":
            want = primary_offset(p)
            if replica_offset(last) == want:
                print(
                    json.dumps(
                        {
                            "seconds": at,
                            "offset": want,
                            "in_sync_at": first_in_sync,
                            "last_byte_at": last_byte,
                            "read_bytes": read_bytes,
                        }
                    )
                )
                return
        down = link_down_line(o.log, log_start)
        if down:
            fail(f"the sync failed: {down}")
        time.sleep(0.02)
    fail(f"not in sync after {o.timeout} s; the replica says {last}")


def caught_up(o):
    p = Conn(o.primary)
    replicas = [Conn(port) for port in o.replica]
    started = time.monotonic()
    while time.monotonic() < started + o.timeout:
        want = primary_offset(p)
        if all(replica_offset(info(r)) == want for r in replicas):
            print(round(time.monotonic() - started, 3))
            return
        time.sleep(0.02)
    fail(f"replicas not caught up after {o.timeout} s")


def percentile(sorted_values, q):
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def lag(o):
    p, r = Conn(o.primary), Conn(o.replica)
    offsets_p, offsets_r = Conn(o.primary), Conn(o.replica)
    interval = o.interval_ms / 1000
    lags_ms, set_ms, after_ack_ms, gaps = [], [], [], []
    end = time.monotonic() + o.seconds
    next_tick = time.monotonic()
    n = 0
    while time.monotonic() < end:
        n += 1
        key = f"lag:{n}"
        sent = time.perf_counter_ns()
        p.call("SET", key, sent)
        acked = time.perf_counter_ns()
        while True:
            if r.call("GET", key) is not None:
                seen = time.perf_counter_ns()
                break
            if time.perf_counter_ns() - sent > 10e9:
                fail(f"{key} not on the replica 10 s after it was written")
            time.sleep(0.0002)
        lags_ms.append((seen - sent) / 1e6)
        set_ms.append((acked - sent) / 1e6)
        after_ack_ms.append(max(0, seen - acked) / 1e6)
        gaps.append(primary_offset(offsets_p) - replica_offset(info(offsets_r)))
        next_tick += interval
        pause = next_tick - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        else:
            next_tick = time.monotonic()
    p.call("DEL", *[f"lag:{i}" for i in range(1, n + 1)])
    lags_ms.sort()
    set_ms.sort()
    after_ack_ms.sort()
    gaps.sort()
    print(
        json.dumps(
            {
                "probes": n,
                "lag_p50_ms": round(percentile(lags_ms, 0.50), 3),
                "lag_p99_ms": round(percentile(lags_ms, 0.99), 3),
                "lag_max_ms": round(lags_ms[-1], 3),
                "set_p50_ms": round(percentile(set_ms, 0.50), 3),
                "set_p99_ms": round(percentile(set_ms, 0.99), 3),
                "after_ack_p50_ms": round(percentile(after_ack_ms, 0.50), 3),
                "after_ack_p99_ms": round(percentile(after_ack_ms, 0.99), 3),
                "after_ack_max_ms": round(after_ack_ms[-1], 3),
                "gap_p50": percentile(gaps, 0.50),
                "gap_p99": percentile(gaps, 0.99),
                "gap_max": gaps[-1],
            }
        )
    )


def collections(o):
    c = Conn(o.port)
    per_command = 1000
    commands = 0
    for first in range(0, o.elements, per_command):
        members = range(first, min(first + per_command, o.elements))
        hset = ["HSET", "big:hash"]
        zadd = ["ZADD", "big:zset"]
        for i in members:
            hset += [f"field:{i}", f"value:{i}"]
            zadd += [i, f"member:{i}"]
        c.sock.sendall(
            encode(hset)
            + encode(["RPUSH", "big:list"] + [f"item:{i}" for i in members])
            + encode(["SADD", "big:set"] + [f"member:{i}" for i in members])
            + encode(zadd)
        )
        commands += 4
        # At most 64 commands in flight.
        if commands >= 64:
            for _ in range(commands):
                c.reply()
            commands = 0
    for _ in range(commands):
        c.reply()


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    s = sub.add_parser("sync")
    s.add_argument("--primary", type=int, required=True)
    s.add_argument("--replica", type=int, required=True)
    s.add_argument("--command", default="REPLICAOF")
    s.add_argument("--log")
    s.add_argument("--timeout", type=float, default=3600)
    c = sub.add_parser("caught-up")
    c.add_argument("--primary", type=int, required=True)
    c.add_argument("--replica", type=int, action="append", required=True)
    c.add_argument("--timeout", type=float, default=600)
    lg = sub.add_parser("lag")
    lg.add_argument("--primary", type=int, required=True)
    lg.add_argument("--replica", type=int, required=True)
    lg.add_argument("--seconds", type=float, required=True)
    lg.add_argument("--interval-ms", type=float, default=10)
    co = sub.add_parser("collections")
    co.add_argument("--port", type=int, required=True)
    co.add_argument("--elements", type=int, required=True)
    o = ap.parse_args()
    try:
        {"sync": sync, "caught-up": caught_up, "lag": lag, "collections": collections}[o.what](o)
    except (OSError, RuntimeError, ConnectionError) as e:
        fail(f"{o.what}: {e}")


if __name__ == "__main__":
    main()
