#!/usr/bin/env bash
# What the metrics port costs the Redis clients.
#
#   bench/metrics.sh [keyspace]
#
# Two release firns with `metrics-port` set (one per mode, each given the
# same load) serve redis-benchmark (50 clients, `GET k:__rand_int__` and
# `SET k:__rand_int__ xxx` over a keyspace of 100,000 by default, at -P 1
# and -P 16), back to back within each round, the order rotating from
# round to round:
#   quiet    nobody reads the metrics port
#   scraped  a scraper fetches /metrics and /status.json once a second
#            each (Prometheus's default interval is 15 s: this is 15 times
#            it, plus an open status page)
# The ratio scraped/quiet is taken within each round; the median (with the
# lowest and highest) of FIRN_BENCH_ROUNDS rounds (default 9) is reported
# beside the median req/s, and so is the server's CPU time per request
# (all its threads, /proc/PID/task/*/schedstat), which the scrapes' own
# work (on tokio's blocking pool) is part of. Each run lasts about
# FIRN_BENCH_SECONDS (default 3). The scraper is one Python process on the
# load generator's CPUs, started once, that keeps its connection open and
# fetches only during scraped runs. Before the runs,
# the server's own CPU time per fetch of each path is measured at idle
# (the keyspace loaded): at once a second each, that share of one core is
# the most the scrapes can take from a server that is CPU-bound.
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
rounds="${FIRN_BENCH_ROUNDS:-9}"
seconds="${FIRN_BENCH_SECONDS:-3}"

# Pinning: servers on one set of CPUs, the load generator on another.
pin_from_env

build
# One server per mode, each given the same load, so that each has the same
# flushes and compactions behind it.
declare -A port_of pid_of
quiet_port=$(free_port)
start_firn quiet "$quiet_port" --metrics-port "$(free_port)"
port_of[quiet]=$quiet_port pid_of[quiet]=$server_pid
metrics_port=$(free_port)
firn_port=$(free_port)
start_firn firn "$firn_port" --metrics-port "$metrics_port"
firn_pid=$server_pid
port_of[scraped]=$firn_port pid_of[scraped]=$firn_pid
curl -sf "http://127.0.0.1:$metrics_port/metrics" >/dev/null ||
    { echo "the metrics port does not answer" >&2; exit 1; }
modes=(quiet scraped)
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

# The scraper: one Python process on the load generator's CPUs, started
# once, keeping one connection open. While $work/scrape_on exists it
# fetches both paths once a second; otherwise it only wakes once a second
# to look (so that starting a process is no part of a scraped run). It
# counts its fetches and keeps the last /metrics page.
"${client_pin[@]}" python3 - "$metrics_port" "$work" <<'PY' &
import http.client, sys, time, os
port, work = int(sys.argv[1]), sys.argv[2]
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
while True:
    start = time.monotonic()
    if os.path.exists(os.path.join(work, "scrape_on")):
        for path in ("/metrics", "/status.json"):
            try:
                conn.request("GET", path)
                body = conn.getresponse().read()
            except (http.client.HTTPException, OSError):
                # The server closes a connection idle for 10 s: reconnect.
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.request("GET", path)
                body = conn.getresponse().read()
            with open(os.path.join(work, "scrapes"), "a") as f:
                f.write(("m" if path == "/metrics" else "s") + "\n")
            if path == "/metrics":
                with open(os.path.join(work, "last_metrics"), "wb") as f:
                    f.write(body)
    time.sleep(max(0.0, 1.0 - (time.monotonic() - start)))
PY
pids+=($!)
start_scraper() { touch "$work/scrape_on"; }
stop_scraper() { rm -f "$work/scrape_on"; }

# The server's CPU time per fetch, at idle: 50 fetches of each path, less
# what the idle server spends in the same time.
per_fetch_us() { # path
    local before after idle_before idle_after t0 t1
    idle_before=$(cpu_ns "$firn_pid"); t0=$(date +%s%N)
    sleep 1
    idle_after=$(cpu_ns "$firn_pid"); t1=$(date +%s%N)
    local idle_per_ns
    idle_per_ns=$(python3 -c "import sys; print((int(sys.argv[2]) - int(sys.argv[1])) / (int(sys.argv[4]) - int(sys.argv[3])))" "$idle_before" "$idle_after" "$t0" "$t1")
    before=$(cpu_ns "$firn_pid"); t0=$(date +%s%N)
    python3 - "$metrics_port" "$1" <<'PY'
import http.client, sys
conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
for _ in range(50):
    conn.request("GET", sys.argv[2]); conn.getresponse().read()
PY
    after=$(cpu_ns "$firn_pid"); t1=$(date +%s%N)
    python3 -c "import sys; b, a, t0, t1, idle = map(float, sys.argv[1:]); print(f'{(a - b - idle * (t1 - t0)) / 50 / 1e3:.0f}')" \
        "$before" "$after" "$t0" "$t1" "$idle_per_ns"
}

declare -A requests_of
for m in "${modes[@]}"; do
    rb "${port_of[$m]}" 16 set $((keyspace * 3)) >/dev/null
done
metrics_us=$(per_fetch_us /metrics)
status_us=$(per_fetch_us /status.json)
for p in 1 16; do
    for op in set get; do
        n=20000
        [ "$p" = 1 ] || n=100000
        requests_of[$p.$op]=$(requests_for "$(rb "$quiet_port" "$p" "$op" "$n")")
        for m in "${modes[@]}"; do
            [ "$m" = quiet ] || rb "${port_of[$m]}" "$p" "$op" "$n" >/dev/null
        done
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
echo "# server CPU per fetch at idle (the keyspace loaded): /metrics ${metrics_us} µs, /status.json ${status_us} µs; once a second each, $(python3 -c "import sys; print(f'{(float(sys.argv[1]) + float(sys.argv[2])) / 1e4:.3f}')" "$metrics_us" "$status_us") % of one core"
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
