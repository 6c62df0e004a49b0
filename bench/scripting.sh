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
# the ratios. With KVROCKS=/path/to/kvrocks (for example
# ../shared/peers/kvrocks/kvrocks), Kvrocks 2.10 runs too (--workers = cores,
# 512 MB block cache) and gets its own column. All servers are stopped on
# exit, even on failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"
requests="${1:-200000}"
keyspace="${2:-100000}"
build

script="local v = redis.call('GET', KEYS[1]) return {v, redis.call('INCR', KEYS[1])}"
redis_port=$(free_port)
aof_port=$(free_port)
firn_port=$(free_port)
start_redis redis "$redis_port"
start_redis aof "$aof_port" "${redis_aof[@]}"
start_firn firn "$firn_port"
kv_port=""
if [ -n "${KVROCKS:-}" ]; then
    kv_port=$(free_port)
    start_kvrocks kvrocks "$kv_port"
fi
ports=("$redis_port" "$aof_port" "$firn_port" $kv_port)

readonly_script="return redis.call('GET', KEYS[1])"
declare -A sha ro_sha
for port in "${ports[@]}"; do
    sha[$port]=$(redis-cli -p "$port" SCRIPT LOAD "$script")
    ro_sha[$port]=$(redis-cli -p "$port" SCRIPT LOAD "$readonly_script")
done
[ "${sha[$redis_port]}" = "${sha[$firn_port]}" ] || { echo "SCRIPT LOAD differs" >&2; exit 1; }

run() { # port pipeline command... -> requests/s
    local port=$1 pipeline=$2
    shift 2
    redis-benchmark -p "$port" -c 50 -n "$requests" -r "$keyspace" -P "$pipeline" --csv -q \
        "$@" 2>/dev/null \
        | awk -F, 'NR > 1 || $1 !~ /test/ {gsub(/"/,""); if ($2 ~ /^[0-9.]+$/) print $2}' | tail -1
}

kv_head="" kv_rule=""
[ -n "$kv_port" ] && kv_head=" kvrocks req/s | kvrocks/redis-AOF |" && kv_rule="---|---|"
echo "| test | pipeline | redis-server req/s | redis AOF everysec req/s | firn req/s | firn/redis | firn/redis-AOF |$kv_head"
echo "|---|---|---|---|---|---|---|$kv_rule"
# The script itself, then two references that split its cost: the same
# key's INCR without a script (Firn's write path), and a read-only script
# (the script hand-off without a write).
for pipeline in 1 16; do
    for test in "EVALSHA GET+INCR" "INCR (no script)" "EVALSHA GET (read-only)"; do
        declare -A got=()
        for port in "${ports[@]}"; do
            case $test in
                "EVALSHA GET+INCR") got[$port]=$(run "$port" "$pipeline" EVALSHA "${sha[$port]}" 1 "key:__rand_int__") ;;
                "INCR (no script)") got[$port]=$(run "$port" "$pipeline" INCR "key:__rand_int__") ;;
                *) got[$port]=$(run "$port" "$pipeline" EVALSHA "${ro_sha[$port]}" 1 "key:__rand_int__") ;;
            esac
        done
        r=${got[$redis_port]} a=${got[$aof_port]} f=${got[$firn_port]}
        kv=""
        [ -n "$kv_port" ] && kv=" ${got[$kv_port]} | $(ratio "${got[$kv_port]}" "$a") |"
        echo "| $test | $pipeline | $r | $a | $f | $(ratio "$f" "$r") | $(ratio "$f" "$a") |$kv"
    done
done
echo
echo "requests=$requests keyspace=$keyspace clients=50, $(nproc) cores; firn appendfsync=everysec"
