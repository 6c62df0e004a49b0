#!/usr/bin/env bash
# Peak memory of firn under a dataset far larger than maxmemory.
#
#   bench/memory.sh [maxmemory_mb] [keys] [value_bytes]
#   FIRN_BEFORE=/path/to/older/firn bench/memory.sh   # also measure that build
#   FIRN_BENCH_SECONDS=2 FIRN_BENCH_REQUESTS=2000 bench/memory.sh 64 20000
#                                       # a quick check of the script
#
# Builds firn and firn-load (release; FIRN_BENCH_PROFILE=debug for a debug
# build), then for each binary (FIRN_BEFORE first, if given) starts it on a
# free loopback port with a temporary data dir and
# `--maxmemory <maxmemory_mb>mb`, and runs three phases while a
# sampler reads VmRSS from /proc every 200 ms:
#   load   firn-load writes `keys` poorly compressible values (default 1M x
#          1000 B = 1 GB, 16x a 64 MB budget), 64 SETs pipelined per client;
#   mix    20 s (FIRN_BENCH_SECONDS) of random GETs over the whole range
#          (mostly cold reads) by 4 clients while 2 clients SET random keys;
#   bench  redis-benchmark GET and SET, 50 clients, -P 1 and -P 16,
#          200,000 requests (FIRN_BENCH_REQUESTS) over 100,000 keys with
#          3-byte values (hot keys: the cache settings must not slow them).
# Prints a Markdown table: peak RSS (the kernel's VmHWM) against the target
# 1.1 x maxmemory + 30 MB, per-phase peaks, INFO used_memory at the end and
# throughputs. Every server is stopped on exit, even on failure; each step
# has a time limit, so the script ends within 10 minutes.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"
maxmemory_mb="${1:-64}"
keys="${2:-1000000}"
value_bytes="${3:-1000}"
bench_requests="${FIRN_BENCH_REQUESTS:-200000}"
mix_seconds="${FIRN_BENCH_SECONDS:-20}"
build

mb() { python3 -c "import sys; print(f'{int(sys.argv[1])/1048576:.1f}')" "$1"; }
kib_field() { awk -v f="$2:" '$1==f {print $2*1024}' "/proc/$1/status"; }
rps() { # port pipeline test -> requests/s
    timeout 120 redis-benchmark -p "$1" -c 50 -n "$bench_requests" -r 100000 -P "$2" -t "$3" --csv -q 2>/dev/null \
        | awk -F, -v t="\"${3^^}\"" '$1==t {gsub(/"/,"",$2); printf "%d", $2}'
}
phase_peak() { awk -v p="$2" '$1==p && $2>m {m=$2} END {print m+0}' "$1"; }

target_bytes=$(python3 -c "print(int(1.1*$maxmemory_mb*1048576 + 30*1048576))")
rows=()

measure() { # label binary
    local label="$1" bin="$2" port samples phase_file pid sampler
    port=$(free_port)
    samples="$work/$label.rss"
    phase_file="$work/$label.phase"
    echo start >"$phase_file"
    start_firn_binary "$bin" "$label" "$port" --maxmemory "${maxmemory_mb}mb"
    pid=$server_pid
    (
        while kill -0 "$pid" 2>/dev/null; do
            rss=$(kib_field "$pid" VmRSS 2>/dev/null || true)
            [ -n "$rss" ] && echo "$(cat "$phase_file") $rss" >>"$samples"
            sleep 0.2
        done
    ) &
    sampler=$!
    pids+=("$sampler")

    echo load >"$phase_file"
    local loaded
    loaded=$(timeout 300 "$load" --port "$port" --mode load --keys "$keys" \
        --value-size "$value_bytes" --clients 8)
    echo mix >"$phase_file"
    timeout "$((mix_seconds + 40))" "$load" --port "$port" --mode set --keys "$keys" --value-size "$value_bytes" \
        --clients 2 --seconds "$mix_seconds" >"$work/$label.mixset" &
    local mixset=$!
    local mixget
    mixget=$(timeout "$((mix_seconds + 40))" "$load" --port "$port" --mode get --keys "$keys" --clients 4 --seconds "$mix_seconds")
    wait "$mixset"
    echo bench >"$phase_file"
    local get1 get16 set1 set16
    get1=$(rps "$port" 1 get)
    set1=$(rps "$port" 1 set)
    get16=$(rps "$port" 16 get)
    set16=$(rps "$port" 16 set)
    local used peak
    used=$(redis-cli -p "$port" INFO memory | tr -d '\r' | awk -F: '$1=="used_memory" {print $2}')
    peak=$(kib_field "$pid" VmHWM)
    redis-cli -p "$port" INFO memory | tr -d '\r' >"$work/$label.info"
    redis-cli -p "$port" INFO storage | tr -d '\r' >>"$work/$label.info"
    stop_server "$pid"
    wait "$sampler" 2>/dev/null || true
    local verdict="no"
    [ "$peak" -le "$target_bytes" ] && verdict="yes"
    rows+=("| $label | $(mb "$peak") | $(ratio "$peak" "$((maxmemory_mb * 1048576))") | $verdict | $(mb "$(phase_peak "$samples" load)") | $(mb "$(phase_peak "$samples" mix)") | $(mb "$(phase_peak "$samples" bench)") | $(mb "$used") | $(field "$loaded" ops_per_sec) | $(field "$mixget" ops_per_sec) | $get1 | $set1 | $get16 | $set16 |")
    echo "--- $label: INFO memory and storage at the end" >&2
    grep -E '^(used_memory|mem_|maxmemory_|rocksdb_(block_cache|memtable|index|table|sst))' "$work/$label.info" >&2 || true
}

if [ -n "${FIRN_BEFORE:-}" ]; then
    measure before "$FIRN_BEFORE"
fi
measure after "$firn"

echo "| build | peak RSS MB | peak / maxmemory | within target | load peak MB | mix peak MB | bench peak MB | used_memory MB | load SET/s | mix GET/s | GET -P1 | SET -P1 | GET -P16 | SET -P16 |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for row in "${rows[@]}"; do echo "$row"; done
echo
echo "maxmemory=${maxmemory_mb}mb target=1.1 x maxmemory + 30 MB = $(mb "$target_bytes") MB; keys=$keys x ${value_bytes} B loaded by firn-load (8 clients, 64 SETs pipelined); mix = $mix_seconds s of 4 GET + 2 SET clients over all keys; redis-benchmark: 50 clients, $bench_requests requests over 100,000 keys, 3-byte values; $(nproc) cores"
