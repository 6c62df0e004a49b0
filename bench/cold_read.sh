#!/usr/bin/env bash
# Does a cold read stall other clients? (DESIGN.md principle 3)
#
#   sudo bench/cold_read.sh [cold_keys] [read_iops] [maxmemory] [cold_clients]
#
# read_iops 0 leaves the disk unthrottled. The heavier case of issue 10:
#   sudo bench/cold_read.sh 300000 0 256mb 32
#   sudo bench/cold_read.sh 300000 1000 256mb 32
#
# 1. Loads `cold_keys` (default 1,000,000) poorly compressible 1000-byte
#    values plus 1,000 hot keys into firn with a 64 MB memory budget, so
#    almost all data lives only in SST files.
# 2. Restarts firn, warms the hot keys, syncs and drops the page cache, and
#    puts firn in a cgroup-v1 blkio group limited to `read_iops` (default
#    200) reads/s on its disk: every cold GET really waits for the device.
# 3. Measures hot-key GET latency alone, then again while 16 other clients
#    read random cold keys, with firn-load (one request in flight per
#    client, hdrhistogram). If cold reads blocked network threads, the hot
#    p99 would jump to the device's service time (5 ms at 200 IOPS).
# FIRN_BENCH_SECONDS sets the hot runs' length (default 8; the cold
# clients run 2 s longer). Needs root (drop_caches, cgroups). Everything is
# stopped on exit.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cold_keys="${1:-1000000}"
iops="${2:-200}"
maxmemory="${3:-64mb}"
cold_clients="${4:-16}"
seconds="${FIRN_BENCH_SECONDS:-8}"
[ "$(id -u)" = 0 ] || { echo "needs root (drop_caches, blkio cgroup)" >&2; exit 1; }
# The data must be on a real disk for the page cache and the throttle.
bench_tmp=/var/tmp
source "$here/lib.sh"
build

cg=/sys/fs/cgroup/blkio/firn-cold-$$
bench_cleanup() {
    [ -d "$cg" ] || return 0
    cat "$cg/cgroup.procs" 2>/dev/null | while read -r p; do echo "$p" > /sys/fs/cgroup/blkio/cgroup.procs 2>/dev/null || true; done
    rmdir "$cg" 2>/dev/null || true
}

port=$(free_port)
start_firn firn "$port" --maxmemory "$maxmemory"
echo "loading $cold_keys cold keys and 1000 hot keys..." >&2
"$load" --port "$port" --mode load --prefix cold: --keys "$cold_keys" --value-size 1000 --clients 4 >&2
"$load" --port "$port" --mode load --prefix hot: --keys 1000 --value-size 100 --clients 1 >&2
stop_server "$server_pid"
du -sh "$work/firn" >&2

start_firn firn "$port" --maxmemory "$maxmemory"
pid=$server_pid
"$load" --port "$port" --mode get --prefix hot: --keys 1000 --clients 2 --seconds 2 >/dev/null
sync
echo 3 > /proc/sys/vm/drop_caches
dev=$(lsblk -no PKNAME "$(df --output=source "$work" | tail -1)" 2>/dev/null || true)
majmin=$(lsblk -no MAJ:MIN "/dev/${dev:-$(basename "$(df --output=source "$work" | tail -1)")}" 2>/dev/null | head -1 | tr -d ' ')
if [ "$iops" != 0 ]; then
    mkdir -p "$cg"
    echo "$majmin $iops" > "$cg/blkio.throttle.read_iops_device"
    echo "$pid" > "$cg/cgroup.procs"
    for t in $(ls /proc/"$pid"/task); do echo "$t" > "$cg/tasks" 2>/dev/null || true; done
fi

hot_alone=$("$load" --port "$port" --mode get --prefix hot: --keys 1000 --clients 4 --seconds "$seconds")
"$load" --port "$port" --mode get --prefix cold: --keys "$cold_keys" --clients "$cold_clients" --seconds "$((seconds + 2))" >"$work/cold.json" &
cold_pid=$!
sleep 1
hot_mixed=$("$load" --port "$port" --mode get --prefix hot: --keys 1000 --clients 4 --seconds "$seconds")
wait "$cold_pid"
cold=$(cat "$work/cold.json")

echo "| run | ops/s | p50 µs | p99 µs | p99.9 µs | max µs |"
echo "|---|---|---|---|---|---|"
for row in "hot GETs alone|$hot_alone" "hot GETs during cold reads|$hot_mixed" "cold GETs ($cold_clients clients)|$cold"; do
    name="${row%%|*}"; json="${row#*|}"
    echo "| $name | $(field "$json" ops_per_sec) | $(field "$json" p50_us) | $(field "$json" p99_us) | $(field "$json" p999_us) | $(field "$json" max_us) |"
done
echo
echo "cold_keys=$cold_keys x 1000 B, maxmemory=$maxmemory, read IOPS limit=$iops (0 = none) on $majmin, page cache dropped, $(nproc) cores"
redis-cli -p "$port" INFO storage | tr -d '\r' | grep -E "cold|incomplete|hot|io_" >&2 || true
