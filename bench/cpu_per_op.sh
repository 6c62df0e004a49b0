#!/usr/bin/env bash
# CPU per operation: the server process's CPU time (user + system, from
# /proc/PID/stat) over the operations it served, side by side.
#
#   sudo bench/cpu_per_op.sh [requests] [keyspace] [cold_keys]
#
# 1. Hot commands: redis-benchmark (50 clients, `requests` of each test over
#    `keyspace` keys) runs GET, SET, HSET, LPUSH, LRANGE_100 and ZADD at
#    -P 1 and -P 16 against Firn, redis-server with AOF everysec, and, with
#    KVROCKS=/path/to/kvrocks, Kvrocks (--workers = cores). Each server's
#    CPU time is read before and after each test: µs/op = CPU / requests.
#    The client's own CPU is not counted. Each cell is the median of
#    FIRN_BENCH_ROUNDS rounds (default 3), the servers taking turns.
# 2. A cold GET: `cold_keys` (default 300,000) poorly compressible 1000-byte
#    values are loaded into Firn at a 256 MB budget (Kvrocks: a 256 MB block
#    cache), the server is restarted, the page cache dropped, and 32
#    firn-load clients read random keys for FIRN_BENCH_SECONDS (default 10):
#    µs/op = CPU / GETs answered.
# 3. FIRN_PROFILE=1 then records a perf profile of Firn on each path, in
#    a phase of its own after every measurement (a fresh server per path,
#    so no path's profile run leaves flushes or compactions behind for a
#    measured one), and writes to bench/profiles/: NAME.svg (a flame
#    graph, inferno) and NAME.txt (CPU per thread, and the functions with
#    the most CPU of their own). Needs perf (linux-perf) and inferno
#    (cargo install inferno; installed when missing).
#
# 4. FIRN_BASELINE=/path/to/firn runs that build too, in the same rounds
#    (taking turns with the others) and on the cold GET: a "before" column
#    and the ratio this build / baseline, for a change's cost.
#
# Needs root (drop_caches). Every server is stopped on exit, even on failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
requests="${1:-500000}"
keyspace="${2:-100000}"
cold_keys="${3:-300000}"
seconds="${FIRN_BENCH_SECONDS:-10}"
[ "$(id -u)" = 0 ] || { echo "needs root (drop_caches)" >&2; exit 1; }
bench_tmp=/var/tmp
source "$here/lib.sh"
build
# SET before GET, so that GET reads keys that exist (as redis-benchmark orders them).
tests=(set get hset lpush lrange_100 zadd)
profiles="$here/profiles"
ticks=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Microseconds of CPU per operation: ticks before, ticks after, operations.
per_op() { python3 -c "import sys; print(f'{(float(sys.argv[2]) - float(sys.argv[1])) / $ticks * 1e6 / float(sys.argv[3]):.2f}')" "$1" "$2" "$3"; }

bench() { # port pipeline test [requests] -> requests/s
    redis-benchmark -p "$1" -c 50 -n "${4:-$requests}" -r "$keyspace" -P "$2" -t "$3" --csv -q 2>/dev/null \
        | awk -F, -v t="${3^^}" '{gsub(/"/,""); if ($1 == t || index($1, t " (first") == 1) print $2}'
}

# perf record of PID while "$@" runs in the background; NAME.svg and NAME.txt.
profile() { # name pid command...
    local name="$1" pid="$2"
    shift 2
    "$@" >/dev/null 2>&1 &
    local load_pid=$!
    sleep 1
    perf record -F 999 -g --call-graph dwarf,16384 -p "$pid" -o "$work/perf.data" -- sleep 4 >/dev/null 2>&1 || true
    kill "$load_pid" 2>/dev/null || true
    wait "$load_pid" 2>/dev/null || true
    perf script -i "$work/perf.data" 2>/dev/null | inferno-collapse-perf >"$work/$name.folded" 2>/dev/null || true
    rm -f "$work/perf.data"
    inferno-flamegraph --title "firn: $name" --minwidth 0.2 <"$work/$name.folded" >"$profiles/$name.svg" 2>/dev/null || true
    python3 - "$work/$name.folded" "$name" >"$profiles/$name.txt" <<'EOF'
import collections, re, sys
total = 0
own = collections.Counter()
threads = collections.Counter()
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    n = int(n)
    total += n
    frames = stack.split(";")
    threads[re.sub(r"\d+$", "N", frames[0])] += n
    own[re.sub(r"<.*?>", "", frames[-1])[:100]] += n
print(f"firn profile: {sys.argv[2]} (perf record -F 999 --call-graph dwarf, 4 s)\n")
print("CPU by thread:")
for name, n in threads.most_common(8):
    print(f"  {100 * n / max(total, 1):5.1f}%  {name}")
print("\nCPU in the function itself (top 30):")
for name, n in own.most_common(30):
    print(f"  {100 * n / max(total, 1):5.1f}%  {name}")
EOF
}

if [ "${FIRN_PROFILE:-0}" = 1 ]; then
    command -v perf >/dev/null || apt-get install -y -qq linux-perf >&2
    command -v inferno-flamegraph >/dev/null || cargo install -q inferno >&2
    mkdir -p "$profiles"
fi

aof_port=$(free_port)
firn_port=$(free_port)
start_redis aof "$aof_port" "${redis_aof[@]}"
aof_pid=$server_pid
start_firn firn "$firn_port"
firn_pid=$server_pid
base_port=""
if [ -n "${FIRN_BASELINE:-}" ]; then
    base_port=$(free_port)
    start_firn_binary "$FIRN_BASELINE" baseline "$base_port"
    base_pid=$server_pid
fi
kv_port=""
if [ -n "${KVROCKS:-}" ]; then
    kv_port=$(free_port)
    start_kvrocks kvrocks "$kv_port"
    kv_pid=$server_pid
fi

rounds="${FIRN_BENCH_ROUNDS:-3}"
median() { # format values... -> the median, printed with format
    python3 -c "import statistics, sys; print(sys.argv[1] % statistics.median(float(v) for v in sys.argv[2:]))" "$@"
}

measure() { # port pid pipeline test -> "req/s µs/op"
    local before after rate
    before=$(cpu_ticks "$2")
    rate=$(bench "$1" "$3" "$4")
    after=$(cpu_ticks "$2")
    echo "$rate $(per_op "$before" "$after" "$requests")"
}

# The median of `rounds` measurements of each server, taking turns.
measure_all() { # pipeline test -> sets ar ac fr fc kr kc br bc
    local r rate cpu
    local arr=() acc=() frr=() fcc=() krr=() kcc=() brr=() bcc=()
    for ((r = 0; r < rounds; r++)); do
        read -r rate cpu < <(measure "$aof_port" "$aof_pid" "$1" "$2"); arr+=("$rate"); acc+=("$cpu")
        read -r rate cpu < <(measure "$firn_port" "$firn_pid" "$1" "$2"); frr+=("$rate"); fcc+=("$cpu")
        if [ -n "$base_port" ]; then
            read -r rate cpu < <(measure "$base_port" "$base_pid" "$1" "$2"); brr+=("$rate"); bcc+=("$cpu")
        fi
        if [ -n "$kv_port" ]; then
            read -r rate cpu < <(measure "$kv_port" "$kv_pid" "$1" "$2"); krr+=("$rate"); kcc+=("$cpu")
        fi
    done
    ar=$(median %.0f "${arr[@]}"); ac=$(median %.2f "${acc[@]}")
    fr=$(median %.0f "${frr[@]}"); fc=$(median %.2f "${fcc[@]}")
    if [ -n "$kv_port" ]; then kr=$(median %.0f "${krr[@]}"); kc=$(median %.2f "${kcc[@]}"); fi
    if [ -n "$base_port" ]; then br=$(median %.0f "${brr[@]}"); bc=$(median %.2f "${bcc[@]}"); fi
}

kv_head=""; kv_rule=""
[ -n "$kv_port" ] && kv_head=" kvrocks req/s | kvrocks µs/op | firn/kvrocks µs |" && kv_rule="---|---|---|"
[ -n "$base_port" ] && kv_head="$kv_head baseline req/s | baseline µs/op | firn/baseline µs |" && kv_rule="$kv_rule---|---|---|"
echo "| test | pipeline | redis AOF req/s | redis AOF µs/op | firn req/s | firn µs/op | firn/redis µs |$kv_head"
echo "|---|---|---|---|---|---|---|$kv_rule"
for pipeline in 1 16; do
    for test in "${tests[@]}"; do
        measure_all "$pipeline" "$test"
        kv=""
        if [ -n "$kv_port" ]; then
            kv=" $kr | $kc | $(ratio "$fc" "$kc") |"
        fi
        if [ -n "$base_port" ]; then
            kv="$kv $br | $bc | $(ratio "$fc" "$bc") |"
        fi
        echo "| ${test^^} | $pipeline | $ar | $ac | $fr | $fc | $(ratio "$fc" "$ac") |$kv"
    done
done
stop_server "$aof_pid"
stop_server "$firn_pid"
[ -n "$kv_port" ] && stop_server "$kv_pid"
[ -n "$base_port" ] && stop_server "$base_pid"

# The cold GET: load, restart, drop the page cache, read random keys.
cold() { # name port starter... -> sets cold_rate, cold_cpu, cold_p99
    local name="$1" port="$2"
    shift 2
    "$@"
    "$load" --port "$port" --mode load --prefix cold: --keys "$cold_keys" --value-size 1000 --clients 4 >/dev/null
    stop_server "$server_pid"
    sync
    echo 3 >/proc/sys/vm/drop_caches
    "$@"
    local pid=$server_pid before after json
    before=$(cpu_ticks "$pid")
    json=$("$load" --port "$port" --mode get --prefix cold: --keys "$cold_keys" --clients 32 --seconds "$seconds")
    after=$(cpu_ticks "$pid")
    cold_rate=$(field "$json" ops_per_sec)
    cold_cpu=$(per_op "$before" "$after" "$(field "$json" ops)")
    cold_p99=$(field "$json" p99_us)
    if [ "${FIRN_PROFILE:-0}" = 1 ] && [ "$name" = firn ]; then
        stop_server "$pid"
        sync
        echo 3 >/proc/sys/vm/drop_caches
        "$@"
        profile cold-get "$server_pid" \
            "$load" --port "$port" --mode get --prefix cold: --keys "$cold_keys" --clients 32 --seconds 6
    fi
    stop_server "$server_pid"
}
# The hot paths' profiles, after the measurements: a fresh server for each,
# SET run first so that GET reads keys that exist (LRANGE_100 reads the
# list LPUSH built, and redis-benchmark's -t lrange_100 pushes it first).
if [ "${FIRN_PROFILE:-0}" = 1 ]; then
    for pipeline in 1 16; do
        for test in "${tests[@]}"; do
            prof_port=$(free_port)
            start_firn "firn-profile" "$prof_port"
            case "$test" in
                get) bench "$prof_port" 16 set >/dev/null ;;
                lrange_100) bench "$prof_port" 16 lpush >/dev/null ;;
            esac
            what=(-t "$test")
            [ "$test" = lrange_100 ] && what=(LRANGE mylist 0 99)
            profile "${test}-P${pipeline}" "$server_pid" \
                redis-benchmark -p "$prof_port" -c 50 -n 100000000 -r "$keyspace" -P "$pipeline" -q "${what[@]}"
            stop_server "$server_pid"
            rm -rf "$work/firn-profile"
        done
    done
fi
firn_cold_port=$(free_port)
cold firn "$firn_cold_port" start_firn firn-cold "$firn_cold_port" --maxmemory 256mb
fo=$cold_rate fco=$cold_cpu fp=$cold_p99
echo
echo "| cold GET ($cold_keys x 1000 B, page cache dropped, 32 clients, ${seconds} s) | GETs/s | µs/op | p99 µs |"
echo "|---|---|---|---|"
echo "| firn (maxmemory 256mb) | $fo | $fco | $fp |"
if [ -n "${FIRN_BASELINE:-}" ]; then
    base_cold_port=$(free_port)
    cold baseline "$base_cold_port" start_firn_binary "$FIRN_BASELINE" baseline-cold "$base_cold_port" --maxmemory 256mb
    bo=$cold_rate bco=$cold_cpu bp=$cold_p99
    echo "| baseline firn (maxmemory 256mb) | $bo | $bco | $bp |"
    echo "| firn/baseline | $(ratio "$fo" "$bo") | $(ratio "$fco" "$bco") | $(ratio "$fp" "$bp") |"
fi
if [ -n "${KVROCKS:-}" ]; then
    kv_cold_port=$(free_port)
    cold kvrocks "$kv_cold_port" start_kvrocks kvrocks-cold "$kv_cold_port" 256
    ko=$cold_rate kco=$cold_cpu kp=$cold_p99
    echo "| kvrocks (256 MB block cache) | $ko | $kco | $kp |"
    echo "| firn/kvrocks | $(ratio "$fo" "$ko") | $(ratio "$fco" "$kco") | $(ratio "$fp" "$kp") |"
fi
echo
echo "requests=$requests keyspace=$keyspace, redis-benchmark -c 50, median of $rounds rounds, $(nproc) cores; CPU = utime + stime of the server process"
