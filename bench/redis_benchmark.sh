#!/usr/bin/env bash
# Side-by-side redis-benchmark of Firn and redis-server in the same run.
#
#   bench/redis_benchmark.sh [requests] [keyspace] [tests]
#
# `tests` is redis-benchmark's -t list, `set,get` by default; the
# collections' run is `lpush,lpop,sadd,hset,zadd,spop,lrange_100`.
#
# Starts a release build of firn and Debian's redis-server on free loopback
# ports with temporary data dirs: one redis-server without persistence (the
# issue's reference) and one with appendonly yes + appendfsync everysec (the
# same durability as firn's default). Runs each test with 50 clients at
# -P 1 and -P 16 against each in turn, and prints a Markdown table of
# requests/s with the ratios. With KVROCKS=/path/to/kvrocks (for example
# ../shared/peers/kvrocks/kvrocks), Kvrocks 2.10 runs too, with --workers
# equal to the core count and the same block cache as firn's default
# budget gives its own (512 MB). All servers are stopped on exit, even on
# failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"
requests="${1:-200000}"
keyspace="${2:-100000}"
tests="${3:-set,get}"
build

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

bench() { # port pipeline test -> requests/s
    # LRANGE_100 is reported as "LRANGE_100 (first 100 elements)".
    redis-benchmark -p "$1" -c 50 -n "$requests" -r "$keyspace" -P "$2" -t "$3" --csv -q 2>/dev/null \
        | awk -F, -v t="${3^^}" '{gsub(/"/,""); if ($1 == t || index($1, t " (first") == 1) print $2}'
}

kv_head=""; kv_rule=""
[ -n "$kv_port" ] && kv_head=" kvrocks req/s | kvrocks/redis-AOF |" && kv_rule="---|---|"
echo "| test | pipeline | redis-server req/s | redis AOF everysec req/s | firn req/s | firn/redis | firn/redis-AOF |$kv_head"
echo "|---|---|---|---|---|---|---|$kv_rule"
for pipeline in 1 16; do
    for test in ${tests//,/ }; do
        r=$(bench "$redis_port" "$pipeline" "$test")
        a=$(bench "$aof_port" "$pipeline" "$test")
        f=$(bench "$firn_port" "$pipeline" "$test")
        kv=""
        if [ -n "$kv_port" ]; then
            k=$(bench "$kv_port" "$pipeline" "$test")
            kv=" $k | $(ratio "$k" "$a") |"
        fi
        echo "| ${test^^} | $pipeline | $r | $a | $f | $(ratio "$f" "$r") | $(ratio "$f" "$a") |$kv"
    done
done
echo
echo "requests=$requests keyspace=$keyspace clients=50, $(nproc) cores; firn appendfsync=everysec"
