#!/usr/bin/env bash
# Streams, Firn against redis-server with AOF everysec (Firn's own
# durability) and, when KVROCKS= names its binary, Kvrocks, in one run:
#   XADD      redis-benchmark, 50 clients, `XADD <stream> * f <100 B>` at
#             -P 1 and -P 16 (`requests` each, into a new stream), and
#             `firn-load --mode xadd` with `producers` clients, one request
#             in flight each, for its latency;
#   pipeline  `producers` clients XADD to one stream while `consumers`
#             consumers of one group loop XREADGROUP (COUNT 10, BLOCK 100)
#             and XACK what they got, one request in flight each
#             (`firn-load --mode stream-pipeline`): entries acknowledged
#             per second and the end-to-end latency (XADD sent -> XACK
#             answered), p50 and p99.
# Prints a Markdown table with the firn/redis-AOF and firn/kvrocks ratios.
# The ratios are only reported (the issue's target: firn >= 0.8x the AOF
# Redis on the pipeline, and ahead of Kvrocks). The script fails if a
# server answers XADD with an error (Firn until it serves streams), or if
# the pipeline lost an entry: once the producers stop, the consumers drain
# and XPENDING must count 0 and `acked` must equal `produced`.
#
#   bench/streams.sh [seconds] [producers] [consumers] [requests]
#
# FIRN_BENCH_SERVERS lists the servers to run, in order (default "redis
# firn", and kvrocks when KVROCKS is set); for example
# FIRN_BENCH_SERVERS="redis kvrocks" checks the script without Firn.
# FIRN_BENCH_PROFILE=debug builds and runs debug binaries (a quick check
# with small numbers). Each server runs alone on a free 127.0.0.1 port
# with a temporary dir and is stopped before the next one starts, and on
# exit, even on failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"
seconds="${1:-10}"
producers="${2:-4}"
consumers="${3:-4}"
requests="${4:-200000}"
value_size=100
servers="${FIRN_BENCH_SERVERS:-redis firn${KVROCKS:+ kvrocks}}"
for server in $servers; do
    case $server in
        redis | firn) ;;
        kvrocks) [ -n "${KVROCKS:-}" ] || { echo "FIRN_BENCH_SERVERS names kvrocks but KVROCKS is not set" >&2; exit 1; } ;;
        *) echo "unknown server '$server' in FIRN_BENCH_SERVERS (redis, firn, kvrocks)" >&2; exit 1 ;;
    esac
done
build

# A poorly compressible value, the same for every server (letters and
# digits: redis-benchmark's CSV names the test by the whole command).
value=$(python3 -c "import random, string; r = random.Random(1); print(''.join(r.choices(string.ascii_letters + string.digits, k=$value_size)))")

# XADD req/s from redis-benchmark into a new stream; fails unless the
# stream then holds exactly `requests` entries. (redis-benchmark's stderr
# is kept aside: against Kvrocks it warns that CONFIG GET failed.)
xadd_benchmark() { # port pipeline
    local port=$1 pipeline=$2 stream="bench:xadd:P$2" rps length
    rps=$(redis-benchmark -p "$port" -c 50 -n "$requests" -P "$pipeline" --csv -q \
        XADD "$stream" '*' f "$value" 2>"$work/redis-benchmark.err" \
        | awk -F, 'NR > 1 || $1 !~ /test/ {gsub(/"/,""); if ($2 ~ /^[0-9.]+$/) print $2}' | tail -1)
    length=$(redis-cli -p "$port" XLEN "$stream")
    if [ "$length" != "$requests" ]; then
        echo "XADD -P $pipeline: the stream holds $length entries after $requests XADDs" >&2
        cat "$work/redis-benchmark.err" >&2
        exit 1
    fi
    echo "$rps"
}

declare -A got
lost=()
for server in $servers; do
    port=$(free_port)
    case $server in
        redis) start_redis redis "$port" "${redis_aof[@]}" ;;
        firn) start_firn firn "$port" ;;
        kvrocks) start_kvrocks kvrocks "$port" ;;
    esac
    # Stop here, with the server's answer, if it does not serve XADD.
    probe=$(redis-cli -p "$port" XADD bench:probe '*' f v)
    if ! [[ "$probe" =~ ^[0-9]+-[0-9]+$ ]]; then
        echo "$server answers XADD with: $probe" >&2
        exit 1
    fi
    got[$server,xadd1]=$(xadd_benchmark "$port" 1)
    got[$server,xadd16]=$(xadd_benchmark "$port" 16)
    x=$("$load" --port "$port" --mode xadd --prefix bench:load: --clients "$producers" --seconds "$seconds")
    got[$server,load_rate]=$(field "$x" ops_per_sec)
    got[$server,load_p99]=$(field "$x" p99_us)
    p=$("$load" --port "$port" --mode stream-pipeline --prefix bench:pipeline \
        --producers "$producers" --clients "$consumers" --seconds "$seconds")
    got[$server,items]=$(field "$p" items_per_sec)
    got[$server,e2e_p50]=$(field "$p" e2e_p50_us)
    got[$server,e2e_p99]=$(field "$p" e2e_p99_us)
    got[$server,read_p99]=$(field "$p" xreadgroup_p99_us)
    produced=$(field "$p" produced) acked=$(field "$p" acked) pending=$(field "$p" pending_left)
    got[$server,check]="produced $produced, acked $acked, pending $pending, drained in $(field "$p" drain_ms) ms, extra replies $(field "$p" extra_replies)"
    if [ "$pending" != 0 ] || [ "$acked" != "$produced" ]; then
        lost+=("$server lost pipeline entries: $p")
    fi
    stop_server "$server_pid"
done

cell() { echo "${got[$1,$2]:--}"; }
with_kvrocks=""
[[ " $servers " == *" kvrocks "* ]] && with_kvrocks=1
row() { # label measure
    local r f line
    r=$(cell redis "$2") f=$(cell firn "$2")
    line="| $1 | $r | $f | $(ratio "$f" "$r") |"
    [ -n "$with_kvrocks" ] && line+=" $(cell kvrocks "$2") | $(ratio "$f" "$(cell kvrocks "$2")") |"
    echo "$line"
}
if [ -n "$with_kvrocks" ]; then
    echo "| measure | redis AOF | firn | firn/redis-AOF | kvrocks | firn/kvrocks |"
    echo "|---|---|---|---|---|---|"
else
    echo "| measure | redis AOF | firn | firn/redis-AOF |"
    echo "|---|---|---|---|"
fi
row "XADD req/s (redis-benchmark, 50 clients, -P 1)" xadd1
row "XADD req/s (redis-benchmark, 50 clients, -P 16)" xadd16
row "XADD ops/s (firn-load, $producers clients, -P 1)" load_rate
row "XADD p99 µs (firn-load, $producers clients, -P 1)" load_p99
row "pipeline items/s ($producers XADD, $consumers XREADGROUP+XACK, -P 1)" items
row "pipeline end-to-end p50 µs" e2e_p50
row "pipeline end-to-end p99 µs" e2e_p99
row "pipeline XREADGROUP p99 µs" read_p99
echo
echo "$profile build, $seconds s per firn-load run, $requests redis-benchmark requests, ${value_size} B values, $(nproc) cores; redis appendfsync everysec, firn default (everysec)"
for server in $servers; do
    echo "$server pipeline: ${got[$server,check]}"
done
if [ "${#lost[@]}" -gt 0 ]; then
    printf '%s\n' "${lost[@]}" >&2
    exit 1
fi
