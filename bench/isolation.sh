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
"$here/../scripts/install-deps.sh"
source "$here/../scripts/env.sh"
keys="${1:-500000}"
seconds="${2:-8}"
cargo build --release --locked -q -p firn-server -p firn-bench --manifest-path "$here/../Cargo.toml"
firn="$CARGO_TARGET_DIR/release/firn"
load="$CARGO_TARGET_DIR/release/firn-load"

source "$here/lib.sh"
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
ratio() { python3 -c "import sys; print(f'{float(sys.argv[1])/float(sys.argv[2]):.1f}')" "$1" "$2"; }
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
        mkdir -p "$work/$server-$case"
        if [ "$server" = redis ]; then
            redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly yes --appendfsync everysec \
                --dir "$work/$server-$case" >"$work/$server-$case.log" 2>&1 &
        else
            "$firn" --port "$port" --bind 127.0.0.1 --dir "$work/$server-$case" --loglevel warning \
                >"$work/$server-$case.log" 2>&1 &
        fi
        pid=$!
        pids+=("$pid")
        wait_ping "$port"
        read -r a l m < <(run_case "$case" "$port")
        echo "| $case | $server | $a | $l | $(ratio "$l" "$a") | $m |"
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
done
echo
echo "keys=$keys x 100 B for flushall, $seconds s per run, 4 hot clients, $(nproc) cores; redis-server with AOF everysec"
