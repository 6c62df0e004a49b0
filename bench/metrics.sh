#!/usr/bin/env bash
# What the metrics port costs the Redis clients.
#
#   bench/metrics.sh [keyspace]
#
# One release firn with `metrics-port` set serves redis-benchmark (50
# clients, `GET k:__rand_int__` and `SET k:__rand_int__ xxx` over a
# keyspace of 100,000 by default, at -P 1 and -P 16) in two modes, back to
# back within each round, the order alternating from round to round:
#   quiet    nobody reads the metrics port
#   scraped  a scraper fetches /metrics and /status.json once a second
#            each (Prometheus's default interval is 15 s: this is 15 times
#            it, plus an open status page)
# The ratio scraped/quiet is taken within each round; the median (with the
# lowest and highest) of FIRN_BENCH_ROUNDS rounds (default 7) is reported
# beside the median req/s, and so is the server's CPU time per request
# (all its threads, /proc/PID/task/*/schedstat), which the scrapes' own
# work (on tokio's blocking pool) is part of. Each run lasts about
# FIRN_BENCH_SECONDS (default 3).
#
# FIRN_BASELINE=/path/to/firn adds a third mode, the same load on that
# build without a metrics port (e.g. the build before the metrics port, for
# the cost of counting reads by tier, RocksDB's tickers and the read
# latency histogram, which run whether the port is open or not).
#
# FIRN_BENCH_PIN="SERVER_CPUS/CLIENT_CPUS" (default "1/0" on 2+ cores)
# pins the server and the load generator (and the scraper, with the load).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"

keyspace="${1:-100000}"
rounds="${FIRN_BENCH_ROUNDS:-7}"
seconds="${FIRN_BENCH_SECONDS:-3}"

pin="${FIRN_BENCH_PIN-$([ "$(nproc)" -ge 2 ] && echo 1/0 || echo)}"
client_pin=()
if [ -n "$pin" ]; then
    server_wrapper=(taskset -c "${pin%/*}")
    client_pin=(taskset -c "${pin#*/}")
fi
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }

build
metrics_port=$(free_port)
firn_port=$(free_port)
start_firn firn "$firn_port" --metrics-port "$metrics_port"
firn_pid=$server_pid
curl -sf "http://127.0.0.1:$metrics_port/metrics" >/dev/null ||
    { echo "the metrics port does not answer" >&2; exit 1; }
modes=(quiet scraped)
declare -A port_of pid_of
port_of[quiet]=$firn_port pid_of[quiet]=$firn_pid
port_of[scraped]=$firn_port pid_of[scraped]=$firn_pid
if [ -n "${FIRN_BASELINE:-}" ]; then
    base_port=$(free_port)
    start_firn_binary "$FIRN_BASELINE" baseline "$base_port"
    port_of[baseline]=$base_port pid_of[baseline]=$server_pid
    modes+=(baseline)
fi

rb() { # port pipeline op requests -> requests/s
    local cmd
    case "$3" in
        get) cmd=(GET 'k:__rand_int__') ;;
        set) cmd=(SET 'k:__rand_int__' xxx) ;;
    esac
    "${client_pin[@]}" redis-benchmark -p "$1" -c 50 -n "$4" -r "$keyspace" -P "$2" \
        --csv -q "${cmd[@]}" 2>/dev/null \
        | awk -F, 'NR > 1 {gsub(/"/,""); rate = $2} END {print rate}'
}
requests_for() { python3 -c "import sys; print(max(5000, int(float(sys.argv[1]) * float(sys.argv[2]))))" "$1" "$seconds"; }

# The scraper: both paths once a second until stopped; it counts its
# fetches and the bytes of the last /metrics page.
scraper_pid=""
start_scraper() {
    (
        while true; do
            "${client_pin[@]}" curl -sf -o "$work/last_metrics" "http://127.0.0.1:$metrics_port/metrics" &&
                echo m >>"$work/scrapes"
            "${client_pin[@]}" curl -sf -o /dev/null "http://127.0.0.1:$metrics_port/status.json" &&
                echo s >>"$work/scrapes"
            sleep 1
        done
    ) &
    scraper_pid=$!
}
stop_scraper() {
    [ -n "$scraper_pid" ] || return 0
    kill "$scraper_pid" 2>/dev/null || true
    wait "$scraper_pid" 2>/dev/null || true
    scraper_pid=""
}
bench_cleanup() { stop_scraper; }

declare -A requests_of
for m in "${modes[@]}"; do
    rb "${port_of[$m]}" 16 set $((keyspace * 3)) >/dev/null
done
for p in 1 16; do
    for op in set get; do
        n=20000
        [ "$p" = 1 ] || n=100000
        requests_of[$p.$op]=$(requests_for "$(rb "$firn_port" "$p" "$op" "$n")")
    done
done

results="$work/results.tsv"
measure() { # mode pipeline op round
    local port=${port_of[$1]} pid=${pid_of[$1]} requests=${requests_of[$2.$3]} before after rate
    [ "$1" = scraped ] && start_scraper
    before=$(cpu_ns "$pid")
    rate=$(rb "$port" "$2" "$3" "$requests")
    after=$(cpu_ns "$pid")
    [ "$1" = scraped ] && stop_scraper
    [ -n "$rate" ] || { echo "redis-benchmark ($1, $3 -P $2) failed" >&2; exit 1; }
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$rate" \
        "$(python3 -c "import sys; print(f'{(int(sys.argv[2]) - int(sys.argv[1])) / 1e3 / int(sys.argv[3]):.4f}')" "$before" "$after" "$requests")" \
        >>"$results"
}

for p in 1 16; do
    for op in set get; do
        for ((r = 0; r < rounds; r++)); do
            for ((i = 0; i < ${#modes[@]}; i++)); do
                measure "${modes[(i + r) % ${#modes[@]}]}" "$p" "$op" "$r"
            done
        done
    done
done

echo "# metrics port cost: firn $(git -C "$here/.." rev-parse --short HEAD), $rounds rounds of ~${seconds}s, keyspace $keyspace, pin '${pin}'"
echo "# scrapes made: $(grep -c m "$work/scrapes" 2>/dev/null || echo 0) of /metrics ($(wc -c <"$work/last_metrics" 2>/dev/null || echo 0) bytes each), $(grep -c s "$work/scrapes" 2>/dev/null || echo 0) of /status.json"
python3 - "$results" "${modes[@]}" <<'EOF'
import sys, statistics
rows = [l.split('\t') for l in open(sys.argv[1]).read().splitlines()]
modes = sys.argv[2:]
by = {}
for mode, p, op, r, rate, cpu in rows:
    by.setdefault((p, op), {}).setdefault(int(r), {})[mode] = (float(rate), float(cpu))
print("| test | mode | req/s (median) | scraped/quiet req/s: median (min-max) | µs CPU/op (median) | CPU ratio |")
print("|---|---|---|---|---|---|")
for (p, op), rounds in sorted(by.items(), key=lambda kv: (int(kv[0][0]), kv[0][1])):
    for mode in modes:
        rates = [v[mode][0] for v in rounds.values()]
        cpus = [v[mode][1] for v in rounds.values()]
        if mode == "quiet":
            ratio = cpu_ratio = "1"
        else:
            rs = sorted(v[mode][0] / v["quiet"][0] for v in rounds.values())
            cs = sorted(v[mode][1] / v["quiet"][1] for v in rounds.values())
            ratio = f"{statistics.median(rs):.3f} ({rs[0]:.3f}-{rs[-1]:.3f})"
            cpu_ratio = f"{statistics.median(cs):.3f}"
        print(f"| {op.upper()} -P {p} | {mode} | {statistics.median(rates):,.0f} | {ratio} | {statistics.median(cpus):.3f} | {cpu_ratio} |")
EOF
