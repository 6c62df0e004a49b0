#!/usr/bin/env bash
# Larger-than-memory: Firn (and Kvrocks with KVROCKS=) serving a data set
# six times its memory budget and over twice all the memory it may use,
# page cache included.
#
#   sudo bench/bigger_than_memory.sh [keys] [limit_mb] [budget_mb]
#   sudo KVROCKS=../shared/peers/kvrocks/kvrocks bench/bigger_than_memory.sh
#   sudo KVROCKS=... FIRN_BENCH_REPLICA=0 bench/bigger_than_memory.sh 10000000 1024 512
#
# Defaults: 1,500,000 keys of 1,000 bytes (about 1.5 GB), a 640 MB memory
# cgroup per server, a 256 MB budget (firn --maxmemory, Kvrocks's block
# cache). The larger size, data ten times the group: 10,000,000 keys
# (about 10 GB) in 1 GB groups with a 512 MB budget. A quick check of the
# script rather than a measurement:
#   sudo FIRN_BENCH_SECONDS=5 KVROCKS=... bench/bigger_than_memory.sh 100000 200 64
#
# 1. Each server runs alone in its own cgroup-v1 memory group limited to
#    `limit_mb` (memory.limit_in_bytes counts the page cache the server's
#    reads and writes bring in, so the data cannot hide there): it is
#    started through a shell that joins the group and execs it, so every
#    thread is inside from the first instruction. Firn runs with
#    --maxmemory `budget_mb`; Kvrocks with a `budget_mb` block cache
#    (plus its memtables, outside it) and --workers $(nproc).
# 2. Load: firn-load SETs keys memtier-1 .. memtier-<keys> once each,
#    4 clients, 64 SETs per write, with poorly compressible 1,000-byte
#    values (90 printable symbols, about 6.5 bits a byte, different in
#    every key). memtier's --random-data is not used for this: it makes
#    one random buffer and changes one byte per value, so its values
#    compress almost entirely across a block and the data set would fit
#    in memory. keys/s = keys / the load's own time. The server is then
#    restarted (its WAL recovered into SST files), its compactions given
#    up to 120 s to settle (SST bytes unchanged for 5 s), and `du -sb` of
#    its RocksDB directory, and its SST files alone, are divided by the
#    bytes stored, sum(1,000 + key length). (Kvrocks keeps recovered WAL
#    files in db/archive for its rocksdb.wal_ttl_seconds, 3 hours by
#    default: du counts them, the SST column does not.)
# 3. Runs: for each key pattern (memtier G:G Gaussian around the middle of
#    the range, stddev range/6; R:R uniform) and each mix (read-only,
#    10 GET : 1 SET, 1:1; memtier's --ratio is SET:GET), each server is
#    stopped, `sync; echo 3 > /proc/sys/vm/drop_caches`, restarted in its
#    group, and driven by memtier_benchmark for FIRN_BENCH_SECONDS
#    (default 30) with 32 connections (-t 4 -c 8, one request in flight
#    each), --distinct-client-seed, memtier's own 1,000-byte values for
#    the SETs. Every run starts cold (empty caches, no page cache); the
#    runs go in the order of the table and the SETs of earlier runs stay
#    in the data (memtier's values, more compressible) for later ones,
#    the same for both servers. ops/s and the GET latency percentiles (ms)
#    come from memtier's JSON; "hit %" is GETs that found their key.
#    Mixes: read-only, 10:1, 1:1 and write-only (SETs of existing keys).
#    Then, unless FIRN_BENCH_REPLICA=0, the Redis-on-Flash paper's
#    replication workload: G:G 10:1 with a replica of the same server
#    attached, in a group of its own with the same limit, started after
#    the primary's cold start and synced (master_link_status up, no sync
#    in progress; at most FIRN_BENCH_SYNC_SECONDS, default 300, else the
#    run goes on with the replica syncing, and says so) before the run.
#    Before the runs, fio measures the disk's random-read rate for 16 KiB
#    and 4 KiB blocks (direct I/O, 32 in flight), the ceiling a cold read
#    path can reach. During Firn's load its WAL bytes
#    (firn_rocksdb_wal_bytes_total on the metrics port) are divided by the
#    value bytes loaded.
# 4. Prints a load table and a run table with Firn/Kvrocks ratio rows.
#    As evidence that the limit held, each run's row also gives the
#    group's peak (memory.max_usage_in_bytes) and what the server read
#    from the device (/proc/PID/io read_bytes, its start included), and a
#    last table gives per server the peaks, how many charges went over the
#    limit (failcnt, memory and memsw) and the OOM kills.
#
# MEMTIER names memtier_benchmark (default ../shared/peers/memtier/ beside
# the checkout); its libevent libraries are installed if missing.
# FIRN_BIN=/path/to/firn runs a prebuilt firn (see lib.sh). Needs root
# (cgroups, drop_caches). Everything is stopped and the groups removed on
# exit, even on failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
keys="${1:-1500000}"
limit_mb="${2:-640}"
budget_mb="${3:-256}"
seconds="${FIRN_BENCH_SECONDS:-30}"
memtier="${MEMTIER:-$here/../../shared/peers/memtier/memtier_benchmark}"
[ "$(id -u)" = 0 ] || { echo "needs root (memory cgroups, drop_caches)" >&2; exit 1; }
[ -x "$memtier" ] || { echo "no memtier_benchmark at $memtier (set MEMTIER)" >&2; exit 1; }
[ -d /sys/fs/cgroup/memory ] || { echo "no cgroup-v1 memory controller at /sys/fs/cgroup/memory" >&2; exit 1; }
# The data must be on a real disk for the page cache to matter.
bench_tmp=/var/tmp
source "$here/lib.sh"
build

if ldd "$memtier" | grep -q "not found"; then
    echo "installing memtier_benchmark's libraries..." >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libevent-2.1-7 libevent-openssl-2.1-7 >/dev/null
fi

servers=(firn)
[ -n "${KVROCKS:-}" ] && servers+=(kvrocks)
cgroot=/sys/fs/cgroup/memory/firn-btm-$$
declare -A port cg
bench_cleanup() {
    local s p
    for s in "${!cg[@]}"; do
        [ -d "${cg[$s]}" ] || continue
        # cleanup has stopped the servers; anything left is moved out.
        while read -r p; do echo "$p" > /sys/fs/cgroup/memory/cgroup.procs 2>/dev/null || true; done < "${cg[$s]}/cgroup.procs"
        rmdir "${cg[$s]}" 2>/dev/null || echo "could not remove ${cg[$s]}" >&2
    done
}
replica="${FIRN_BENCH_REPLICA:-1}"
groups=("${servers[@]}")
[ "$replica" = 1 ] && for s in "${servers[@]}"; do groups+=("$s-replica"); done
for s in "${groups[@]}"; do
    port[$s]=$(free_port)
    cg[$s]="$cgroot-$s"
    mkdir "${cg[$s]}"
    echo "$((limit_mb * 1024 * 1024))" > "${cg[$s]}/memory.limit_in_bytes"
    # No escape to swap either, on a machine with swap. (Only then: with a
    # memsw limit, this kernel counts no failcnt, in neither file.)
    if [ "$(awk '$1 == "SwapTotal:" {print $2}' /proc/meminfo)" != 0 ] && [ -e "${cg[$s]}/memory.memsw.limit_in_bytes" ]; then
        echo "$((limit_mb * 1024 * 1024))" > "${cg[$s]}/memory.memsw.limit_in_bytes" 2>/dev/null || true
    fi
done
metrics_port=$(free_port)

pid=""
start() { # server: starts it in its group (server_pid, pid)
    server_wrapper=(sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "${cg[$1]}")
    case "$1" in
        firn) start_firn firn "${port[$1]}" --maxmemory "${budget_mb}mb" --metrics-port "$metrics_port" ;;
        firn-replica) start_firn firn-replica "${port[$1]}" --maxmemory "${budget_mb}mb" ;;
        kvrocks*) start_kvrocks "$1" "${port[$1]}" "$budget_mb" ;;
    esac
    server_wrapper=()
    pid=$server_pid
}
# A replica of `server` in its own group, synced: its pid in replica_pid.
replica_pid=""
start_replica() { # server
    local r="$1-replica" info
    rm -rf "${work:?}/$r"
    local primary_pid=$pid
    start "$r"
    replica_pid=$pid
    pid=$primary_pid
    redis-cli -p "${port[$r]}" REPLICAOF 127.0.0.1 "${port[$1]}" >/dev/null
    for _ in $(seq 1 "${FIRN_BENCH_SYNC_SECONDS:-300}"); do
        info=$(redis-cli -p "${port[$r]}" INFO replication 2>/dev/null | tr -d '\r')
        if grep -q '^master_link_status:up' <<<"$info" && ! grep -q '^master_sync_in_progress:1' <<<"$info"; then
            return 0
        fi
        sleep 1
    done
    # The run goes on: its row then shows a primary with a replica syncing.
    echo "$r: not in sync after ${FIRN_BENCH_SYNC_SECONDS:-300} s: $(grep -E '^master_(link_status|sync_in_progress)' <<<"$info" | tr '\n' ' ')" >&2
}
wal_bytes() { # firn's WAL bytes so far, from its metrics port
    python3 -c '
import sys, urllib.request
text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1]).read().decode()
print(sum(float(l.split()[-1]) for l in text.splitlines() if l.startswith("firn_rocksdb_wal_bytes_total")))' "$metrics_port"
}
stop() { [ -n "$pid" ] && stop_server "$pid"; pid=""; }
cold_start() { # server: stopped before, caches dropped, started again
    stop
    sync
    echo 3 > /proc/sys/vm/drop_caches
    start "$1"
}
reset_peak() { echo 0 > "${cg[$1]}/memory.max_usage_in_bytes"; }
peak_mb() { echo $(($(cat "${cg[$1]}/memory.max_usage_in_bytes") / 1024 / 1024)); }
db_dir() { if [ -d "$work/$1/db" ]; then echo "$work/$1/db"; else echo "$work/$1"; fi; }
sst_bytes() { find "$1" -name '*.sst' -printf '%s\n' 2>/dev/null | awk '{s += $1} END {print s + 0}'; }
settle() { # dir: until its SST bytes stay the same for 5 s, at most 120 s
    local last=-1 now
    for _ in $(seq 1 24); do
        now=$(sst_bytes "$1")
        [ "$now" = "$last" ] && return 0
        last=$now
        sleep 5
    done
    echo "compactions in $1 still running after 120 s" >&2
}
# ops/s, GET hit %, GET p50, p99, p99.9 ms from memtier's JSON; "-" for a
# failed run.
summary() {
    python3 -c '
import json, sys
try:
    a = json.load(open(sys.argv[1]))["ALL STATS"]
    g, ops = a["Gets"], a["Totals"]["Ops/sec"]
    p = g.get("Percentile Latencies", {})
    hit = "%.1f" % (100 * g["Hits/sec"] / g["Ops/sec"]) if g["Ops/sec"] else "-"
    print("%.0f" % ops, hit, p.get("p50.00", "-"), p.get("p99.00", "-"), p.get("p99.90", "-"))
except (OSError, ValueError, KeyError):
    print("- - - - -")' "$1"
}
stored=$(python3 -c "import sys; n = int(sys.argv[1]); print(sum(1000 + len(f'memtier-{i}') for i in range(1, n + 1)))" "$keys")

echo "fio: the disk's random-read rate..." >&2
fio16=$(disk_randread_iops 16k)
fio4=$(disk_randread_iops 4k)
declare -A load_rate load_secs disk sst peak_load peak_runs
wal_per_value="-"
for s in "${servers[@]}"; do
    echo "$s: loading $keys keys of 1000 bytes..." >&2
    reset_peak "$s"
    start "$s"
    json=$(timeout 3600 "$load" --port "${port[$s]}" --mode load --prefix memtier- --first 1 \
        --keys "$keys" --value-size 1000 --clients 4)
    [ "$(field "$json" errors)" = 0 ] || { echo "$s: the load got errors: $json" >&2; exit 1; }
    found=$(redis-cli -p "${port[$s]}" EXISTS memtier-1 "memtier-$(((keys + 1) / 2))" "memtier-$keys")
    [ "$found" = 3 ] || { echo "$s: loaded keys missing after the load ($found of 3 found)" >&2; exit 1; }
    if [ "$s" = firn ]; then
        wal_per_value=$(ratio "$(wal_bytes)" "$((keys * 1000))" 3)
    fi
    load_rate[$s]=$(field "$json" ops_per_sec)
    load_secs[$s]=$(field "$json" seconds)
    peak_load[$s]=$(peak_mb "$s")
    echo "$s: restarting, waiting for compactions to settle..." >&2
    stop
    start "$s"
    settle "$(db_dir "$s")"
    disk[$s]=$(du -sb "$(db_dir "$s")" | cut -f1)
    sst[$s]=$(sst_bytes "$(db_dir "$s")")
    stop
done

mixes=("read-only|0:1" "10 GET : 1 SET|1:10" "1 GET : 1 SET|1:1" "write-only|1:0")
runs=()
for pattern in G:G R:R; do
    for m in "${mixes[@]}"; do runs+=("$pattern|$m"); done
done
[ "$replica" = 1 ] && runs+=("G:G|10 GET : 1 SET, a replica attached|1:10")
declare -A result
for run in "${runs[@]}"; do
        pattern="${run%%|*}"; m="${run#*|}"
        mix="${m%%|*}"; ratio_arg="${m#*|}"
        for s in "${servers[@]}"; do
            echo "$s: $pattern $mix, ${seconds}s from cold..." >&2
            reset_peak "$s"
            cold_start "$s"
            [[ "$mix" == *replica* ]] && start_replica "$s"
            out="$work/memtier-$s-${pattern%%:*}-${ratio_arg/:/-}"
            rm -f "$out.json"
            if ! timeout $((seconds + 120)) "$memtier" -s 127.0.0.1 -p "${port[$s]}" --protocol=redis \
                -t 4 -c 8 --test-time="$seconds" --ratio="$ratio_arg" --key-pattern="$pattern" \
                --key-prefix=memtier- --key-minimum=1 --key-maximum="$keys" --data-size=1000 \
                --random-data --distinct-client-seed --hide-histogram \
                --json-out-file="$out.json" >"$out.log" 2>&1; then
                echo "$s: memtier failed ($pattern $mix):" >&2
                tail -5 "$out.log" >&2
            fi
            if ! kill -0 "$pid" 2>/dev/null; then
                echo "$s: the server died during $pattern $mix:" >&2
                tail -5 "$work/$s.log" >&2
            fi
            peak=$(peak_mb "$s")
            # What the server read from the device (all its threads), start included.
            read_mb=$(awk '$1 == "read_bytes:" {printf "%.0f", $2 / 1048576}' "/proc/$pid/io" 2>/dev/null || echo -)
            [ "$peak" -gt "${peak_runs[$s]:-0}" ] && peak_runs[$s]=$peak
            stop
            if [ -n "$replica_pid" ]; then
                stop_server "$replica_pid"
                replica_pid=""
            fi
            result[$pattern/$mix/$s]="$(summary "$out.json") ${read_mb:--} $peak"
        done
done

echo "| server | load keys/s | load s | disk bytes (du -sb, after restart) | disk bytes per stored byte | SST bytes per stored byte |"
echo "|---|---|---|---|---|---|"
for s in "${servers[@]}"; do
    echo "| $s | ${load_rate[$s]} | ${load_secs[$s]} | ${disk[$s]} | $(ratio "${disk[$s]}" "$stored" 3) | $(ratio "${sst[$s]}" "$stored" 3) |"
done
if [ -n "${KVROCKS:-}" ]; then
    echo "| firn/kvrocks | $(ratio "${load_rate[firn]}" "${load_rate[kvrocks]}") | | | $(ratio "${disk[firn]}" "${disk[kvrocks]}") | $(ratio "${sst[firn]}" "${sst[kvrocks]}") |"
fi
echo
echo "| pattern | mix | server | ops/s | GET hit % | GET p50 ms | GET p99 ms | GET p99.9 ms | disk reads MB | cgroup peak MB |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for run in "${runs[@]}"; do
        pattern="${run%%|*}"; m="${run#*|}"
        mix="${m%%|*}"
        for s in "${servers[@]}"; do
            read -r ops hit p50 p99 p999 reads peak <<<"${result[$pattern/$mix/$s]}"
            echo "| $pattern | $mix | $s | $ops | $hit | $p50 | $p99 | $p999 | $reads | $peak |"
        done
        if [ -n "${KVROCKS:-}" ]; then
            read -r fo _ f50 f99 f999 _ _ <<<"${result[$pattern/$mix/firn]}"
            read -r ko _ k50 k99 k999 _ _ <<<"${result[$pattern/$mix/kvrocks]}"
            echo "| $pattern | $mix | firn/kvrocks | $(ratio "$fo" "$ko") | | $(ratio "$f50" "$k50") | $(ratio "$f99" "$k99") | $(ratio "$f999" "$k999") | | |"
        fi
done
echo
echo "| server | cgroup limit MB | peak MB, load | peak MB, runs | charges over the limit (failcnt) | OOM kills |"
echo "|---|---|---|---|---|---|"
for s in "${servers[@]}"; do
    ooms=$(awk '$1 == "oom_kill" {print $2}' "${cg[$s]}/memory.oom_control")
    # With a memsw limit set (swap present), the charge fails on memsw.
    fails=$(cat "${cg[$s]}/memory.failcnt" "${cg[$s]}"/memory.memsw.failcnt 2>/dev/null | awk '{n += $1} END {print n + 0}')
    echo "| $s | $limit_mb | ${peak_load[$s]} | ${peak_runs[$s]:-0} | $fails | ${ooms:--} |"
done
echo
echo "disk random reads (fio, direct, 32 in flight): ${fio16}/s of 16 KiB, ${fio4}/s of 4 KiB; firn's WAL bytes per value byte during the load: $wal_per_value"
echo "keys=$keys x 1000 B (stored bytes $stored), firn --maxmemory ${budget_mb}mb, kvrocks block cache ${budget_mb} MB, memory cgroup ${limit_mb} MB per server, ${seconds}s per run from cold (page cache dropped), memtier -t 4 -c 8, $(nproc) cores"
