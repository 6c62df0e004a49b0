#!/usr/bin/env bash
# Blocking commands, firn and redis-server side by side in one run:
#   queue   producers LPUSH while consumers BRPOP (one request in flight
#           each): items consumed per second and BRPOP p99;
#   idle    `connections` idle connections, `blocked` of them waiting in
#           BLPOP on their own key: the server's RSS per connection, and
#           hot-key GET p99 of 4 other clients meanwhile.
# Reported as firn/redis ratios. Both servers run with appendfsync everysec
# (firn's writes are in RocksDB's WAL before their reply).
#
#   bench/blocking.sh [seconds] [connections] [blocked] [producers] [consumers]
#
# FIRN_BENCH_PROFILE=debug builds and runs debug binaries (a quick check of
# the script with small numbers). Servers listen on 127.0.0.1 free ports
# with temporary dirs and are stopped on exit, even on failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"
seconds="${1:-10}"
connections="${2:-10000}"
blocked="${3:-1000}"
producers="${4:-4}"
consumers="${5:-4}"
build

# Every connection is a descriptor in the load generator and in the server.
ulimit -n "$((connections * 2 + 1024))" 2>/dev/null || ulimit -n "$(ulimit -Hn)"
maxclients=$((connections + 100))

declare -A queue_rate queue_p99 rss_per_conn get_p99 get_alone
for server in redis firn; do
    port=$(free_port)
    if [ "$server" = redis ]; then
        start_redis redis "$port" "${redis_aof[@]}" --maxclients "$maxclients"
    else
        start_firn firn "$port" --maxclients "$maxclients"
    fi
    q=$("$load" --port "$port" --mode queue --producers "$producers" --clients "$consumers" --seconds "$seconds")
    queue_rate[$server]=$(field "$q" items_per_sec)
    queue_p99[$server]=$(field "$q" brpop_p99_us)
    "$load" --port "$port" --mode load --prefix hot: --keys 1000 --value-size 100 --clients 1 >/dev/null
    alone=$("$load" --port "$port" --mode get --prefix hot: --keys 1000 --clients 4 --seconds "$seconds")
    get_alone[$server]=$(field "$alone" p99_us)
    idle=$("$load" --port "$port" --mode idle-blocked --connections "$connections" --blocked "$blocked" \
        --pid "$server_pid" --clients 4 --keys 1000 --seconds "$seconds")
    if [ "$(field "$idle" still_blocked)" != "$blocked" ]; then
        echo "$server: blocked clients went away during the run: $idle" >&2
        exit 1
    fi
    rss_per_conn[$server]=$(field "$idle" bytes_per_connection)
    get_p99[$server]=$(field "$idle" get_p99_us)
    stop_server "$server_pid"
done

echo "| measure | redis-server | firn | firn/redis |"
echo "|---|---|---|---|"
echo "| queue items/s ($producers LPUSH, $consumers BRPOP) | ${queue_rate[redis]} | ${queue_rate[firn]} | $(ratio "${queue_rate[firn]}" "${queue_rate[redis]}") |"
echo "| queue BRPOP p99 µs | ${queue_p99[redis]} | ${queue_p99[firn]} | $(ratio "${queue_p99[firn]}" "${queue_p99[redis]}") |"
echo "| RSS bytes per connection ($connections open, $blocked in BLPOP) | ${rss_per_conn[redis]} | ${rss_per_conn[firn]} | $(ratio "${rss_per_conn[firn]}" "${rss_per_conn[redis]}") |"
echo "| hot GET p99 µs, no other connections | ${get_alone[redis]} | ${get_alone[firn]} | $(ratio "${get_alone[firn]}" "${get_alone[redis]}") |"
echo "| hot GET p99 µs, with those connections | ${get_p99[redis]} | ${get_p99[firn]} | $(ratio "${get_p99[firn]}" "${get_p99[redis]}") |"
echo
echo "$profile build, $seconds s per run, 4 hot GET clients, $(nproc) cores; both servers appendfsync everysec"
