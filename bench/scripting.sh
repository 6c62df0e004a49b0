#!/usr/bin/env bash
# EVALSHA of a small script (GET then INCR of one key per call), Firn vs
# redis-server in the same run (issue 13's measure; target >= 0.8x).
#
#   bench/scripting.sh [requests] [keyspace]
#
# Starts a release build of firn and redis-server (no persistence, and
# appendonly everysec: firn's own durability) on free loopback ports with
# temporary data dirs, loads the script with SCRIPT LOAD into each, then
# runs `redis-benchmark -c 50 EVALSHA <sha> 1 key:__rand_int__` at -P 1 and
# -P 16 against each in turn and prints a Markdown table of requests/s with
# the ratios. All servers are stopped on exit, even on failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/../scripts/install-deps.sh"
source "$here/../scripts/env.sh"
requests="${1:-200000}"
keyspace="${2:-100000}"
cargo build --release --locked -q -p firn-server --manifest-path "$here/../Cargo.toml"
firn="$CARGO_TARGET_DIR/release/firn"

source "$here/lib.sh"

script="local v = redis.call('GET', KEYS[1]) return {v, redis.call('INCR', KEYS[1])}"
redis_port=$(free_port)
aof_port=$(free_port)
firn_port=$(free_port)
mkdir -p "$work/redis" "$work/aof" "$work/firn"
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work/redis" >"$work/redis.log" 2>&1 &
pids+=($!)
redis-server --port "$aof_port" --bind 127.0.0.1 --save "" --appendonly yes --appendfsync everysec --dir "$work/aof" >"$work/aof.log" 2>&1 &
pids+=($!)
"$firn" --port "$firn_port" --bind 127.0.0.1 --dir "$work/firn" --loglevel warning >"$work/firn.log" 2>&1 &
pids+=($!)
wait_ping "$redis_port"
wait_ping "$aof_port"
wait_ping "$firn_port"

declare -A sha
for port in "$redis_port" "$aof_port" "$firn_port"; do
    sha[$port]=$(redis-cli -p "$port" SCRIPT LOAD "$script")
done
[ "${sha[$redis_port]}" = "${sha[$firn_port]}" ] || { echo "SCRIPT LOAD differs" >&2; exit 1; }

bench() { # port pipeline -> requests/s
    redis-benchmark -p "$1" -c 50 -n "$requests" -r "$keyspace" -P "$2" --csv -q \
        EVALSHA "${sha[$1]}" 1 "key:__rand_int__" 2>/dev/null \
        | awk -F, 'NR > 1 || $1 !~ /test/ {gsub(/"/,""); if ($2 ~ /^[0-9.]+$/) print $2}' | tail -1
}

ratio() { python3 -c "import sys; print(f'{float(sys.argv[1])/float(sys.argv[2]):.2f}')" "$1" "$2"; }
echo "| test | pipeline | redis-server req/s | redis AOF everysec req/s | firn req/s | firn/redis | firn/redis-AOF |"
echo "|---|---|---|---|---|---|---|"
for pipeline in 1 16; do
    r=$(bench "$redis_port" "$pipeline")
    a=$(bench "$aof_port" "$pipeline")
    f=$(bench "$firn_port" "$pipeline")
    echo "| EVALSHA GET+INCR | $pipeline | $r | $a | $f | $(ratio "$f" "$r") | $(ratio "$f" "$a") |"
done
echo
echo "requests=$requests keyspace=$keyspace clients=50, $(nproc) cores; firn appendfsync=everysec"
