#!/usr/bin/env bash
# Pub/Sub fan-out: PUBLISH throughput to 1, 100 and 1,000 subscribers,
# Firn against redis-server in the same run, as ratios.
#
#   bench/pubsub.sh [requests] [payload_bytes] [subscriber counts]
#
# For each subscriber count, on each server in turn: `firn-load --mode
# subscribe` opens that many connections subscribed to one channel, which
# read and discard everything; once PUBSUB NUMSUB shows them all,
# redis-benchmark (50 clients, -P 1) sends `requests` PUBLISHes of a
# `payload_bytes` message, scaled down as the fan-out grows (requests /
# max(1, subscribers / 10)) so that each run delivers a comparable number
# of messages. Prints a Markdown table of PUBLISH/s and messages delivered
# per second, with the Firn/Redis ratio. FIRN_BENCH_PROFILE=debug (or
# BUILD=debug) uses a debug build (to check the script quickly). All
# servers stop on exit, even on failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"
requests="${1:-200000}"
payload="${2:-32}"
counts="${3:-1 100 1000}"
build
ulimit -n 8192 2>/dev/null || true

redis_port=$(free_port)
firn_port=$(free_port)
start_redis redis "$redis_port" --maxclients 4000
start_firn firn "$firn_port" --maxclients 4000

message=$(head -c "$payload" /dev/zero | tr '\0' 'x')

run() { # port subscribers -> "publish_per_sec"
    local port=$1 subs=$2 n=$(( requests / (subs / 10 > 1 ? subs / 10 : 1) ))
    local channel="bench-$subs"
    "$load" --port "$port" --mode subscribe --prefix "$channel" --clients "$subs" --seconds 600 \
        >"$work/subscribers.json" 2>"$work/subscribers.err" &
    local sub_pid=$!
    for _ in $(seq 1 600); do
        [ "$(redis-cli -p "$port" PUBSUB NUMSUB "$channel" | tail -1)" = "$subs" ] && break
        sleep 0.1
    done
    [ "$(redis-cli -p "$port" PUBSUB NUMSUB "$channel" | tail -1)" = "$subs" ] || {
        echo "subscribers did not all subscribe on port $port" >&2; kill "$sub_pid"; exit 1; }
    redis-benchmark -p "$port" -c 50 -n "$n" -P 1 --csv -q PUBLISH "$channel" "$message" 2>/dev/null \
        | awk -F, 'NR > 1 || !/rps/ {gsub(/"/,""); print $2; exit}'
    # Every subscriber must still be there: none was too slow.
    local left
    left=$(redis-cli -p "$port" PUBSUB NUMSUB "$channel" | tail -1)
    kill "$sub_pid" 2>/dev/null || true
    wait "$sub_pid" 2>/dev/null || true
    [ "$left" = "$subs" ] || echo "warning: port $port lost $(( subs - left )) slow subscribers" >&2
}

echo "| subscribers | redis-server PUBLISH/s | firn PUBLISH/s | redis msgs/s | firn msgs/s | firn/redis |"
echo "|---|---|---|---|---|---|"
for subs in $counts; do
    r=$(run "$redis_port" "$subs")
    f=$(run "$firn_port" "$subs")
    rm=$(python3 -c "print(f'{float(\"$r\")*$subs:.0f}')")
    fm=$(python3 -c "print(f'{float(\"$f\")*$subs:.0f}')")
    echo "| $subs | $r | $f | $rm | $fm | $(ratio "$f" "$r") |"
done
echo
echo "requests=$requests (divided by subscribers/10 above 10) payload=${payload}B publishers=50 -P 1, $(nproc) cores, $profile build"
