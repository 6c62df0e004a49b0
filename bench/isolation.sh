#!/usr/bin/env bash
# Does one client's heavy command stall the others? Hot-key GET latency
# (firn-load, 4 clients, one request in flight each, hdrhistogram) alone and
# while another client:
#   flushall   loops FLUSHALL (after loading `keys` keys),
#   contend    32 clients SET one key as fast as they can,
# for firn and for redis-server side by side, as p99 ratios loaded/alone.
#
#   bench/isolation.sh [keys] [seconds]
#
# Servers listen on 127.0.0.1 free ports with temporary dirs and are stopped
# on exit, even on failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"
keys="${1:-500000}"
seconds="${2:-8}"
build

hot() { "$load" --port "$1" --mode get --prefix hot: --keys 1000 --clients 4 --seconds "$seconds"; }

run_case() { # name port -> prints a table row
    local name="$1" port="$2" alone loaded bg
    "$load" --port "$port" --mode load --prefix hot: --keys 1000 --value-size 100 --clients 1 >/dev/null
    alone=$(hot "$port")
    case "$name" in
        flushall)
            "$load" --port "$port" --mode load --prefix big: --keys "$keys" --value-size 100 --clients 2 >/dev/null
            "$load" --port "$port" --mode load --prefix hot: --keys 1000 --value-size 100 --clients 1 >/dev/null
            ( end=$((SECONDS + seconds)); while [ $SECONDS -lt $end ]; do redis-cli -p "$port" FLUSHALL >/dev/null; done ) &
            bg=$!
            ;;
        contend)
            "$load" --port "$port" --mode set --prefix contended: --keys 1 --clients 32 --seconds "$seconds" >/dev/null &
            bg=$!
            ;;
    esac
    sleep 0.5
    loaded=$(hot "$port")
    wait "$bg" 2>/dev/null || true
    echo "$(field "$alone" p99_us) $(field "$loaded" p99_us) $(field "$loaded" max_us)"
}

echo "| case | server | hot p99 alone µs | hot p99 loaded µs | loaded/alone | hot max loaded µs |"
echo "|---|---|---|---|---|---|"
for case in flushall contend; do
    for server in redis firn; do
        port=$(free_port)
        if [ "$server" = redis ]; then
            start_redis "$server-$case" "$port" "${redis_aof[@]}"
        else
            start_firn "$server-$case" "$port"
        fi
        read -r a l m < <(run_case "$case" "$port")
        echo "| $case | $server | $a | $l | $(ratio "$l" "$a" 1) | $m |"
        stop_server "$server_pid"
    done
done
echo
echo "keys=$keys x 100 B for flushall, $seconds s per run, 4 hot clients, $(nproc) cores; redis-server with AOF everysec"
