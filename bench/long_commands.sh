#!/usr/bin/env bash
# Does a long command stall other clients? (DESIGN.md principle 3, Firn
# issue 11)
#
#   bench/long_commands.sh [keys] [seconds]
#
# Starts firn (release build) and redis-server 7.0.15 side by side on
# 127.0.0.1, loads `keys` (default 1,000,000) small keys plus 1,000 hot keys
# and one 50-byte key of 'a's into each, then measures hot-key GET latency
# (firn-load: 2 clients, one request in flight each, hdrhistogram) for
# `seconds` (default 8) in three phases:
#   1. unloaded;
#   2. while one client loops `KEYS *` (every key in the reply);
#   3. while one client loops the CVE-2022-36021 pattern `a*a*…a*b`
#      (38 stars): an empty reply, but every key is visited.
# Reports each phase's p99 and the ratio loaded p99 / unloaded p99 per
# server, plus how many long commands completed. No root needed; servers
# and temp dirs are removed on exit.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"
keys="${1:-1000000}"
seconds="${2:-8}"
build

firn_port=$(free_port)
start_firn firn "$firn_port"
redis_port=$(free_port)
start_redis redis "$redis_port"

pathological="$(printf 'a*%.0s' $(seq 1 38))b"
for port in "$firn_port" "$redis_port"; do
    echo "loading $keys keys into port $port..." >&2
    "$load" --port "$port" --mode load --prefix key: --keys "$keys" --value-size 16 --clients 2 >&2
    "$load" --port "$port" --mode load --prefix hot: --keys 1000 --value-size 16 --clients 1 >&2
    redis-cli -p "$port" SET "$(printf 'a%.0s' $(seq 1 50))" 1 >/dev/null
    echo "  DBSIZE $(redis-cli -p "$port" DBSIZE)" >&2
done

# Loops one long command until killed, counting completions in a file. The
# client sends the command followed by PING and discards bytes until the
# stream ends in +PONG: it never parses the (up to 20 MB) reply, so the
# client's own CPU use stays small on a machine it shares with the servers.
loop_command() {
    local port="$1" count_file="$2"
    shift 2
    python3 - "$port" "$count_file" "$@" <<'PY'
import os, socket, sys
port, count_file, args = int(sys.argv[1]), sys.argv[2], [a.encode() for a in sys.argv[3:]]
request = b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)
request += b"*1\r\n$4\r\nPING\r\n"
conn = socket.create_connection(("127.0.0.1", port))
done = 0
while True:
    conn.sendall(request)
    tail = b""
    while not tail.endswith(b"+PONG\r\n"):
        chunk = conn.recv(1 << 20)
        if not chunk:
            sys.exit(0)
        tail = (tail + chunk)[-16:]
    done += 1
    # Replaced whole, never truncated: a reader never sees an empty file.
    with open(count_file + ".tmp", "w") as f:
        f.write(str(done))
    os.replace(count_file + ".tmp", count_file)
PY
}

# Hot GET latency, with `$@` (a long command) looping in the background if
# given; `$tag.done` gets how many long commands completed meanwhile.
measure() {
    local port="$1" tag="$2"
    shift 2
    local bg="" started=0
    echo 0 >"$work/$tag.count"
    if [ $# -gt 0 ]; then
        loop_command "$port" "$work/$tag.count" "$@" &
        bg=$!
        sleep 1
        started=$(cat "$work/$tag.count")
    fi
    "$load" --port "$port" --mode get --prefix hot: --keys 1000 --clients 2 --seconds "$seconds" >"$work/$tag.json"
    echo $(( $(cat "$work/$tag.count") - started )) >"$work/$tag.done"
    if [ -n "$bg" ]; then
        kill "$bg" 2>/dev/null || true
        wait "$bg" 2>/dev/null || true
    fi
}

for server in firn redis; do
    port_var="${server}_port"
    port="${!port_var}"
    "$load" --port "$port" --mode get --prefix hot: --keys 1000 --clients 2 --seconds 2 >/dev/null
    measure "$port" "$server-alone"
    measure "$port" "$server-keys" KEYS '*'
    measure "$port" "$server-glob" KEYS "$pathological"
done

echo "| server | phase | GET ops/s | p50 µs | p99 µs | max µs | p99 / unloaded p99 | long commands done |"
echo "|---|---|---|---|---|---|---|---|"
for server in firn redis; do
    base=$(field "$(cat "$work/$server-alone.json")" p99_us)
    for phase in alone keys glob; do
        json="$(cat "$work/$server-$phase.json")"
        case "$phase" in
            alone) name="unloaded" ;;
            keys) name="KEYS * loop" ;;
            glob) name="pathological KEYS loop" ;;
        esac
        p99=$(field "$json" p99_us)
        done_count=$(cat "$work/$server-$phase.done")
        [ "$phase" = alone ] && done_count="-"
        echo "| $server | $name | $(field "$json" ops_per_sec) | $(field "$json" p50_us) | $p99 | $(field "$json" max_us) | $(ratio "$p99" "$base") | $done_count |"
    done
done
echo
echo "keys=$keys (+1000 hot, +1 pathological), ${seconds}s per phase, GET by 2 clients at depth 1, $(nproc) cores; firn $profile build, redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') without persistence"
