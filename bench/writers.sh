#!/usr/bin/env bash
# What parallel group-commit writers buy: redis-benchmark against Firn with
# `writer-threads 1` and with `writer-threads 2` (the default), and against
# redis-server with AOF everysec (the same durability), in the same run.
# Cases, 50 clients each: SET of 3-byte and of 1 KB values at -P 16, SET at
# -P 1, MSET (10 keys, every batch spans both writers) at -P 16, and a mix
# where 25 clients SET while 25 others MSET at the same time (both
# throughputs). Every case runs `rounds` times per server, alternating
# servers; the table gives the mean and the ratios.
#
#   bench/writers.sh [requests] [keyspace] [rounds]
#
# Servers listen on 127.0.0.1 free ports with temporary dirs and are stopped
# on exit, even on failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"
requests="${1:-400000}"
keyspace="${2:-100000}"
rounds="${3:-3}"
build

aof_port=$(free_port)
w1_port=$(free_port)
w2_port=$(free_port)
start_redis aof "$aof_port" "${redis_aof[@]}"
start_firn w1 "$w1_port" --writer-threads 1
start_firn w2 "$w2_port" --writer-threads 2

rps() { # port clients requests pipeline test [redis-benchmark args...] -> requests/s
    local port="$1" clients="$2" n="$3" pipeline="$4" test="$5"
    shift 5
    redis-benchmark -p "$port" -c "$clients" -n "$n" -r "$keyspace" -P "$pipeline" -t "$test" "$@" --csv -q 2>/dev/null \
        | awk -F, -v t="${test^^}" '{gsub(/"/,""); if ($1 == t || index($1, t " (") == 1) print $2}'
}

mean() { python3 -c "import sys; v=[float(x) for x in sys.argv[1:]]; print(f'{sum(v)/len(v):.0f}')" "$@"; }

row() { # label aof w1 w2 (means)
    echo "| $1 | $2 | $3 | $4 | $(ratio "$4" "$3") | $(ratio "$3" "$2") | $(ratio "$4" "$2") |"
}

echo "| case | redis AOF req/s | firn 1 writer | firn 2 writers | 2 / 1 writers | 1 writer / redis-AOF | 2 writers / redis-AOF |"
echo "|---|---|---|---|---|---|---|"
case_row() { # label clients requests pipeline test [args...]
    local label="$1"
    shift
    local a=() b=() c=()
    for _ in $(seq 1 "$rounds"); do
        a+=("$(rps "$aof_port" "$@")")
        b+=("$(rps "$w1_port" "$@")")
        c+=("$(rps "$w2_port" "$@")")
    done
    row "$label" "$(mean "${a[@]}")" "$(mean "${b[@]}")" "$(mean "${c[@]}")"
}
case_row "SET 3 B, -P 16" 50 "$requests" 16 set
case_row "SET 1 KB, -P 16" 50 "$((requests / 4))" 16 set -d 1000
case_row "SET 3 B, -P 1" 50 "$((requests / 4))" 1 set
case_row "MSET 10 keys, -P 16" 50 "$((requests / 10))" 16 mset

# 25 clients SET while 25 others MSET: both throughputs.
mixed() { # port -> "set_rps mset_rps"
    local out="$work/mixed.$1"
    rps "$1" 25 "$((requests / 2))" 16 set >"$out" &
    local setter=$!
    local m
    m=$(rps "$1" 25 "$((requests / 20))" 16 mset)
    wait "$setter"
    echo "$(cat "$out") $m"
}
sa=() sb=() sc=() ma=() mb=() mc=()
for _ in $(seq 1 "$rounds"); do
    read -r s m < <(mixed "$aof_port"); sa+=("$s"); ma+=("$m")
    read -r s m < <(mixed "$w1_port"); sb+=("$s"); mb+=("$m")
    read -r s m < <(mixed "$w2_port"); sc+=("$s"); mc+=("$m")
done
row "mix: SET (25 clients)" "$(mean "${sa[@]}")" "$(mean "${sb[@]}")" "$(mean "${sc[@]}")"
row "mix: MSET (25 clients, same time)" "$(mean "${ma[@]}")" "$(mean "${mb[@]}")" "$(mean "${mc[@]}")"
echo
echo "requests=$requests keyspace=$keyspace rounds=$rounds, $(nproc) cores; firn appendfsync=everysec"
