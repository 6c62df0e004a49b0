#!/usr/bin/env bash
# Replication: how fast a full sync goes next to what the disk can read,
# what replicas cost the primary, how far behind a replica runs under
# load, and how fast a live redis-server is imported; Firn beside Kvrocks
# (KVROCKS=) in one run.
#
#   sudo bench/replication.sh
#   sudo KVROCKS=../shared/peers/kvrocks/kvrocks bench/replication.sh
#   sudo FIRN_REPL_GB=0.5 FIRN_REPL_REQUESTS=500000 FIRN_REPL_LAG_SECONDS=10 \
#       KVROCKS=../shared/peers/kvrocks/kvrocks bench/replication.sh   # a few minutes
#
# Sizes and knobs (environment):
#   FIRN_REPL_GB               data set of the full sync, in GB of values (5)
#   FIRN_REPL_VALUE_BYTES      bytes per value in that data set (1000)
#   FIRN_REPL_REQUESTS         SETs per redis-benchmark run in part 2 (2000000)
#   FIRN_REPL_LAG_SECONDS      length of the lag run (30)
#   FIRN_REPL_IMPORT_KEYS      small strings in the redis-server to import (1000000)
#   FIRN_REPL_IMPORT_ELEMENTS  elements of each of its 4 big collections (100000)
#   FIRN_REPL_PARTS            the parts to run ("sync throughput lag import")
#   FIRN_REPL_TIMEOUT          seconds before a load or a sync is given up (3600)
#   MEMTIER                    memtier_benchmark (../shared/peers/memtier/ beside the checkout)
#   FIRN_BIN, FIRN_LOAD        prebuilt binaries instead of a build (see lib.sh)
#
# Every server listens on 127.0.0.1 with its own directory under /var/tmp
# (a real disk: the page cache is dropped); all are stopped on exit, even
# on failure. Each kind of server runs its parts alone, one after the
# other, and a part's data is removed when it ends. The full sync needs
# about 3.2 (Firn) or 4.6 (Kvrocks) times FIRN_REPL_GB of free disk, plus
# 2 GB; without it that part is skipped (the peaks measured: the
# primary, the replica's copy, Firn's incoming checkpoint, Kvrocks's WAL
# archive).
#
# 1. Full sync ("sync"). The primary is loaded with firn-load (keys
#    repl-1 .. repl-N, N = GB / value bytes, 4 clients, 64 SETs per
#    write, values of 90 printable symbols different in every key: about
#    6.5 bits a byte, which neither LZ4/ZSTD nor Snappy shrink much), not
#    restarted, and given up to 120 s for compactions to settle (SST bytes
#    unchanged for 5 s). The page cache is dropped, an empty replica
#    started, and REPLICAOF (Kvrocks: SLAVEOF) timed until the replica
#    says master_link_status:up and its slave_repl_offset equals the
#    primary's master_repl_offset (INFO replication polled every 20 ms);
#    three keys are checked on the replica. The primary's size is then
#    `du -sb` of its directory: after the sync, whose checkpoint flushed
#    the memtables, so it is what a full sync carries and not the WAL the
#    load left (Kvrocks's db/archive left out: WAL files it keeps for
#    partial syncs). MB/s = that size / the seconds (MB = 10^6 bytes).
#    Both servers are then stopped, the page cache dropped again, and the
#    primary's SST files read with `cat` to /dev/null: the disk's
#    sequential read, MB/s. Target: full sync / disk read >= 0.8. For
#    context, the disk's sequential write: dd of as many MB of zeros (at
#    most 2,000) with conv=fdatasync.
# 2. Primary throughput ("throughput"): a new, empty primary;
#    `redis-benchmark -t set -P 16 -c 50 -n REQUESTS -d 100 -r 1000000`
#    once to fill the key space (not reported), then with 0 replicas,
#    with 1 and with 2 (each attached by a full sync and caught up before
#    its run); req/s and 2 replicas / 0 replicas (target >= 0.9). After
#    the last run, how long the replicas took to catch up. CPU µs per SET
#    (utime + stime from /proc/PID/stat over the requests) of the primary
#    in each run, and of each replica from the run's start until it had
#    caught up: on a small machine the replicas share the cores with the
#    primary and redis-benchmark, and this says what they cost.
# 3. Lag ("lag", needs "throughput"): the primary of part 2 with one
#    replica (the second is stopped) under memtier_benchmark SETs at half
#    of its 0-replica rate: 50 connections (-t 2 -c 25), --pipeline=16,
#    100-byte values over 1,000,000 keys, --rate-limiting = rate / 50 per
#    connection (redis-benchmark has no rate limit). Meanwhile
#    replication.py writes a probe every 10 ms, SET lag:<n> on the
#    primary, and reads it back from the replica every 0.2 ms until it is
#    there: lag = seen - sent, so it includes the primary's own SET
#    latency (reported apart, and the lag counted from the primary's
#    reply instead: a lower bound, as the write may have been applied on
#    the primary any time between). p50/p99/max ms; target p99 < 10 ms.
#    Each probe also reads the gap between the primary's
#    master_repl_offset and the replica's slave_repl_offset (Firn: bytes
#    of the stream; Kvrocks: RocksDB sequence numbers).
# 4. Import ("import", Firn only): a redis-server 7.0 (no persistence,
#    diskless sync with no delay) holding IMPORT_KEYS strings (DEBUG
#    POPULATE: key:<n> = value:<n>) and a hash, a list, a set and a
#    sorted set of IMPORT_ELEMENTS each; an empty Firn's REPLICAOF timed
#    as in 1; keys/s = keys / seconds. If the sync fails (a Firn without
#    the RDB importer) the row says so and the run goes on.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
gb="${FIRN_REPL_GB:-5}"
value_bytes="${FIRN_REPL_VALUE_BYTES:-1000}"
requests="${FIRN_REPL_REQUESTS:-2000000}"
lag_seconds="${FIRN_REPL_LAG_SECONDS:-30}"
import_keys="${FIRN_REPL_IMPORT_KEYS:-1000000}"
import_elements="${FIRN_REPL_IMPORT_ELEMENTS:-100000}"
parts=" ${FIRN_REPL_PARTS:-sync throughput lag import} "
timeout_s="${FIRN_REPL_TIMEOUT:-3600}"
memtier="${MEMTIER:-$here/../../shared/peers/memtier/memtier_benchmark}"
[ "$(id -u)" = 0 ] || { echo "needs root (drop_caches)" >&2; exit 1; }
if [[ "$parts" == *" lag "* ]]; then
    [ -x "$memtier" ] || { echo "no memtier_benchmark at $memtier (set MEMTIER)" >&2; exit 1; }
    [[ "$parts" == *" throughput "* ]] || { echo "the lag part needs the throughput part (its rate and servers)" >&2; exit 1; }
fi
bench_tmp=/var/tmp
source "$here/lib.sh"
build

if [ -x "$memtier" ] && ldd "$memtier" | grep -q "not found"; then
    echo "installing memtier_benchmark's libraries..." >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libevent-2.1-7 libevent-openssl-2.1-7 >/dev/null
fi

helper=(python3 "$here/replication.py")
keys=$(python3 -c "import sys; print(max(1, int(float(sys.argv[1]) * 1e9 / int(sys.argv[2]))))" "$gb" "$value_bytes")
servers=(firn)
[ -n "${KVROCKS:-}" ] && servers+=(kvrocks)

start() { # kind name port
    case "$1" in
        firn) start_firn "$2" "$3" ;;
        kvrocks) start_kvrocks "$2" "$3" ;;
    esac
}
follow_command() { if [ "$1" = kvrocks ]; then echo SLAVEOF; else echo REPLICAOF; fi; }
# Where a server keeps its RocksDB files.
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
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }
now() { date +%s.%N; }
mb_per_s() { python3 -c "import sys; print('%.1f' % (int(sys.argv[1]) / 1e6 / float(sys.argv[2])))" "$1" "$2"; }
# Stops a server and removes its directory.
discard() { # pid name
    stop_server "$1"
    rm -rf "${work:?}/$2"
}
# Drops an exited process from the list cleanup signals (its pid may be
# reused).
forget() { # pid
    local kept=() p
    for p in "${pids[@]}"; do [ "$p" = "$1" ] || kept+=("$p"); done
    pids=("${kept[@]}")
}
# A JSON field of the helper's answer, or "-".
jfield() { python3 -c "import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2], '-'))" "$1" "$2" 2>/dev/null || echo -; }

declare -A result
set_result() { result[$1]="$2"; }
get() { echo "${result[$1]:--}"; }

# A full sync's phases from the helper's JSON: REPLICAOF until INFO says
# master_sync_in_progress:1 (handshake; a Firn primary cuts its
# checkpoint before it answers FULLRESYNC), until the last byte came in
# (master_sync_read_bytes, Firn only), and the rest (loading it).
phases() { # kind json
    local p
    p=$(python3 -c '
import json, sys
j = json.loads(sys.argv[1])
f = lambda v: "-" if v is None else "%.2f" % v
start, last, end = j.get("in_sync_at"), j.get("last_byte_at"), j["seconds"]
print(f(start), f(last - start) if None not in (start, last) else "-", f(end - last) if last is not None else "-")' "$2") || return 0
    read -r p_start p_transfer p_load <<<"$p"
    set_result "$1/phase_start" "$p_start"
    set_result "$1/phase_transfer" "$p_transfer"
    set_result "$1/phase_load" "$p_load"
}

# 1. Full sync.
sync_part() { # kind
    local s="$1" pport rport ppid rpid json free need
    free=$(df --output=avail -B1 "$work" | tail -1)
    # Measured peaks, per GB of values: about 2.9 GB for Firn (the
    # primary, the replica's incoming checkpoint and its loaded copy),
    # 4.3 GB for Kvrocks (the primary, its WAL archive, the replica); and
    # 2 GB left for everything else on the machine.
    need=$(python3 -c "import sys; print(int(float(sys.argv[1]) * 1e9 * (3.2 if sys.argv[2] == 'firn' else 4.6) + 2e9))" "$gb" "$s")
    if [ "$free" -lt "$need" ]; then
        echo "$s: only $free bytes free under $work, the full sync needs about $need: skipped" >&2
        set_result "$s/sync_note" "skipped: $free bytes free of the $need needed"
        return 0
    fi
    pport=$(free_port)
    start "$s" "$s-primary" "$pport"
    ppid=$server_pid
    echo "$s: loading $keys keys of $value_bytes bytes..." >&2
    json=$(timeout "$timeout_s" "$load" --port "$pport" --mode load --prefix repl- --first 1 \
        --keys "$keys" --value-size "$value_bytes" --clients 4)
    [ "$(field "$json" errors)" = 0 ] || { echo "$s: the load got errors: $json" >&2; exit 1; }
    set_result "$s/load_rate" "$(field "$json" ops_per_sec)"
    echo "$s: waiting for compactions to settle..." >&2
    settle "$(db_dir "$s-primary")"
    set_result "$s/before_bytes" "$(du -sb --exclude=archive "$work/$s-primary" | cut -f1)"

    drop_caches
    rport=$(free_port)
    start "$s" "$s-replica" "$rport"
    rpid=$server_pid
    echo "$s: full sync..." >&2
    local log=()
    [ "$s" = firn ] && log=(--log "$work/$s-replica.log")
    if json=$("${helper[@]}" sync --primary "$pport" --replica "$rport" --command "$(follow_command "$s")" \
        --timeout "$timeout_s" "${log[@]}"); then
        set_result "$s/sync_s" "$(jfield "$json" seconds)"
        phases "$s" "$json"
        # After the sync: its checkpoint flushed the memtables, so the
        # directory holds what a full sync carries (SST files), not the
        # WAL the load left.
        set_result "$s/primary_bytes" "$(du -sb --exclude=archive "$work/$s-primary" | cut -f1)"
        set_result "$s/sync_mbs" "$(mb_per_s "$(get "$s/primary_bytes")" "$(get "$s/sync_s")")"
        set_result "$s/replica_bytes" "$(du -sb --exclude=archive "$work/$s-replica" | cut -f1)"
        local found
        found=$(redis-cli -p "$rport" EXISTS repl-1 "repl-$(((keys + 1) / 2))" "repl-$keys")
        [ "$found" = 3 ] || { echo "$s: keys missing on the replica after the sync ($found of 3)" >&2; set_result "$s/sync_note" "keys missing"; }
    else
        echo "$s: the full sync failed: $json" >&2
        set_result "$s/sync_note" "failed: $(jfield "$json" error)"
    fi
    discard "$rpid" "$s-replica"
    # Stopped, so that no compaction competes with the read.
    stop_server "$ppid"

    echo "$s: reading the primary's SST files from a cold page cache..." >&2
    set_result "$s/sst_bytes" "$(sst_bytes "$(db_dir "$s-primary")")"
    drop_caches
    local t0 t1
    t0=$(now)
    find "$(db_dir "$s-primary")" -name '*.sst' -print0 | xargs -0 cat >/dev/null
    t1=$(now)
    set_result "$s/read_s" "$(python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$t1")"
    set_result "$s/read_mbs" "$(mb_per_s "$(get "$s/sst_bytes")" "$(get "$s/read_s")")"
    set_result "$s/sync_ratio" "$(ratio "$(get "$s/sync_mbs")" "$(get "$s/read_mbs")")"
    # For context: a replica on this disk writes what the primary reads
    # (a Firn replica twice: the incoming files, then its loaded copy).
    local write_mb
    write_mb=$(python3 -c "import sys; print(max(1, min(2000, int(sys.argv[1]) // 1000000)))" "$(get "$s/sst_bytes")")
    t0=$(now)
    dd if=/dev/zero of="$work/dd-write" bs=1M count="$write_mb" conv=fdatasync status=none
    t1=$(now)
    rm -f "$work/dd-write"
    set_result "$s/write_mbs" "$(python3 -c "import sys; print('%.1f' % (int(sys.argv[1]) * 1048576 / 1e6 / (float(sys.argv[3]) - float(sys.argv[2]))))" "$write_mb" "$t0" "$t1")"
    rm -rf "${work:?}/$s-primary"
}

# 2. Throughput with 0, 1 and 2 replicas; leaves the primary and the first
# replica running for the lag part.
declare -A main_port main_pid replica_port replica_pid
set_bench() { # port -> SET requests/s
    redis-benchmark -p "$1" -t set -P 16 -c 50 -n "$requests" -d 100 -r 1000000 --csv -q 2>/dev/null \
        | awk -F, '{gsub(/"/,""); if ($1 == "SET") print $2}'
}
attach() { # kind primary_port replica_port: a full sync, then caught up
    local json
    json=$("${helper[@]}" sync --primary "$2" --replica "$3" --command "$(follow_command "$1")" --timeout "$timeout_s") \
        || { echo "$1: a replica did not sync: $json" >&2; return 1; }
}
clock_ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # utime + stime
# CPU µs per SET of a process from two cpu_ticks readings.
us_per_set() { python3 -c "import sys; print('%.2f' % ((int(sys.argv[2]) - int(sys.argv[1])) / int(sys.argv[3]) * 1e6 / int(sys.argv[4])))" "$1" "$2" "$clock_ticks" "$requests"; }
throughput_part() { # kind
    local s="$1" p ppid r1 r1pid r2 r2pid pc r1c r2c
    p=$(free_port)
    start "$s" "$s-main" "$p"
    ppid=$server_pid
    main_port[$s]=$p
    main_pid[$s]=$ppid
    echo "$s: SET -P 16, filling the key space..." >&2
    set_bench "$p" >/dev/null
    echo "$s: SET -P 16, 0 replicas..." >&2
    pc=$(cpu_ticks "$ppid")
    set_result "$s/rps0" "$(set_bench "$p")"
    set_result "$s/cpu_p0" "$(us_per_set "$pc" "$(cpu_ticks "$ppid")")"
    r1=$(free_port)
    start "$s" "$s-r1" "$r1"
    r1pid=$server_pid
    replica_port[$s]=$r1
    replica_pid[$s]=$r1pid
    attach "$s" "$p" "$r1" || { set_result "$s/tp_note" "replica 1 did not sync"; return 0; }
    echo "$s: SET -P 16, 1 replica..." >&2
    pc=$(cpu_ticks "$ppid")
    r1c=$(cpu_ticks "$r1pid")
    set_result "$s/rps1" "$(set_bench "$p")"
    set_result "$s/cpu_p1" "$(us_per_set "$pc" "$(cpu_ticks "$ppid")")"
    "${helper[@]}" caught-up --primary "$p" --replica "$r1" >/dev/null \
        || { set_result "$s/tp_note" "replica 1 did not catch up"; return 0; }
    set_result "$s/cpu_r1" "$(us_per_set "$r1c" "$(cpu_ticks "$r1pid")")"
    r2=$(free_port)
    start "$s" "$s-r2" "$r2"
    r2pid=$server_pid
    attach "$s" "$p" "$r2" || { set_result "$s/tp_note" "replica 2 did not sync"; return 0; }
    echo "$s: SET -P 16, 2 replicas..." >&2
    pc=$(cpu_ticks "$ppid")
    r1c=$(cpu_ticks "$r1pid")
    r2c=$(cpu_ticks "$r2pid")
    set_result "$s/rps2" "$(set_bench "$p")"
    set_result "$s/cpu_p2" "$(us_per_set "$pc" "$(cpu_ticks "$ppid")")"
    set_result "$s/catchup_s" "$("${helper[@]}" caught-up --primary "$p" --replica "$r1" --replica "$r2" || echo -)"
    set_result "$s/cpu_r2" "$(python3 -c "import sys; print('%.2f' % ((float(sys.argv[1]) + float(sys.argv[2])) / 2))" \
        "$(us_per_set "$r1c" "$(cpu_ticks "$r1pid")")" "$(us_per_set "$r2c" "$(cpu_ticks "$r2pid")")")"
    set_result "$s/rps_ratio" "$(ratio "$(get "$s/rps2")" "$(get "$s/rps0")")"
    local found
    found=$(redis-cli -p "$r2" DBSIZE)
    [ "$found" = "$(redis-cli -p "$p" DBSIZE)" ] || echo "$s: replica 2 holds $found keys, the primary $(redis-cli -p "$p" DBSIZE)" >&2
    discard "$r2pid" "$s-r2"
}

# 3. Lag at half the 0-replica rate, one replica.
lag_part() { # kind
    local s="$1" rate per_conn out json
    [ -n "${replica_port[$s]:-}" ] && [ "$(get "$s/rps0")" != - ] || { set_result "$s/lag_note" "no throughput part"; return 0; }
    rate=$(python3 -c "import sys; print(int(float(sys.argv[1]) / 2))" "$(get "$s/rps0")")
    per_conn=$((rate / 50))
    out="$work/memtier-lag-$s"
    echo "$s: lag under memtier SETs at $rate/s (${per_conn}/s per connection), ${lag_seconds}s..." >&2
    "$memtier" -s 127.0.0.1 -p "${main_port[$s]}" --protocol=redis -t 2 -c 25 --pipeline=16 \
        --ratio=1:0 --key-pattern=R:R --key-prefix=key: --key-minimum=1 --key-maximum=1000000 \
        --data-size=100 --rate-limiting="$per_conn" --test-time=$((lag_seconds + 2)) \
        --hide-histogram --json-out-file="$out.json" >"$out.log" 2>&1 &
    local memtier_pid=$!
    pids+=("$memtier_pid")
    sleep 1
    json=$("${helper[@]}" lag --primary "${main_port[$s]}" --replica "${replica_port[$s]}" --seconds "$lag_seconds") \
        || { echo "$s: the lag probe failed: $json" >&2; set_result "$s/lag_note" "probe failed: $(jfield "$json" error)"; }
    wait "$memtier_pid" || echo "$s: memtier failed: $(tail -3 "$out.log")" >&2
    forget "$memtier_pid"
    set_result "$s/lag_target" "$rate"
    set_result "$s/lag_rate" "$(python3 -c '
import json, sys
try:
    print("%.0f" % json.load(open(sys.argv[1]))["ALL STATS"]["Sets"]["Ops/sec"])
except (OSError, ValueError, KeyError):
    print("-")' "$out.json")"
    local k
    for k in lag_p50_ms lag_p99_ms lag_max_ms set_p99_ms after_ack_p50_ms after_ack_p99_ms after_ack_max_ms gap_p99 gap_max probes; do
        set_result "$s/$k" "$(jfield "$json" "$k")"
    done
    discard "${replica_pid[$s]}" "$s-r1"
    discard "${main_pid[$s]}" "$s-main"
}

# 4. Import from a live redis-server.
import_part() {
    local rp fp fpid json
    rp=$(free_port)
    # No delay before a diskless sync (5 s by default): the time is the
    # import's.
    start_redis redis-import "$rp" --enable-debug-command local --repl-diskless-sync-delay 0
    local rpid=$server_pid
    echo "redis-server: $import_keys strings and 4 collections of $import_elements..." >&2
    redis-cli -p "$rp" DEBUG POPULATE "$import_keys" key 10 >/dev/null
    "${helper[@]}" collections --port "$rp" --elements "$import_elements" >/dev/null
    set_result import/keys "$(redis-cli -p "$rp" DBSIZE)"
    fp=$(free_port)
    start_firn firn-import "$fp"
    fpid=$server_pid
    echo "firn: REPLICAOF the redis-server..." >&2
    if json=$("${helper[@]}" sync --primary "$rp" --replica "$fp" --log "$work/firn-import.log" --timeout "$timeout_s"); then
        set_result import/seconds "$(jfield "$json" seconds)"
        set_result import/rate "$(python3 -c "import sys; print('%.0f' % (int(sys.argv[1]) / float(sys.argv[2])))" "$(get import/keys)" "$(get import/seconds)")"
        local got
        got=$(redis-cli -p "$fp" DBSIZE)
        [ "$got" = "$(get import/keys)" ] || set_result import/note "firn holds $got keys of $(get import/keys)"
    else
        echo "firn: the import failed: $json" >&2
        set_result import/note "needs rdb import ($(jfield "$json" error | cut -c1-160))"
    fi
    discard "$fpid" firn-import
    discard "$rpid" redis-import
}

started=$(now)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for s in "${servers[@]}"; do
    [[ "$parts" == *" sync "* ]] && sync_part "$s"
    [[ "$parts" == *" throughput "* ]] && throughput_part "$s"
    [[ "$parts" == *" lag "* ]] && lag_part "$s"
done
[[ "$parts" == *" import "* ]] && import_part
elapsed=$(python3 -c "import sys; print('%.0f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$started" "$(now)")

# The table: one column per server, a ratio column with Kvrocks.
row() { # label key [target]
    local line="| $1 |" s
    for s in "${servers[@]}"; do line+=" $(get "$s/$2") |"; done
    [ -n "${KVROCKS:-}" ] && line+=" $(ratio "$(get "firn/$2")" "$(get "kvrocks/$2")") |"
    echo "$line ${3:-} |"
}
head="| measure |"; rule="|---|"
for s in "${servers[@]}"; do head+=" $s |"; rule+="---|"; done
[ -n "${KVROCKS:-}" ] && head+=" firn/kvrocks |" && rule+="---|"
echo
echo "$head target |"
echo "$rule---|"
if [[ "$parts" == *" sync "* ]]; then
    row "full sync: load keys/s (firn-load, not a target)" load_rate
    row "full sync: primary on disk after the load, bytes (du -sb, WAL included)" before_bytes
    row "full sync: primary on disk after the sync, bytes (du -sb)" primary_bytes
    row "full sync: replica on disk after, bytes" replica_bytes
    row "full sync: seconds (REPLICAOF to offsets equal)" sync_s
    row "full sync: MB/s (primary bytes / seconds)" sync_mbs
    row "… of which REPLICAOF → sync in progress, s" phase_start
    row "… transfer (sync read bytes growing), s" phase_transfer
    row "… after the last byte (loading), s" phase_load
    row "disk sequential read of the primary's SST files, MB/s" read_mbs
    row "full sync MB/s / disk read MB/s" sync_ratio "≥ 0.8"
    row "disk sequential write (dd, fdatasync, up to 2 GB), MB/s" write_mbs
    for s in "${servers[@]}"; do [ "$(get "$s/sync_note")" != - ] && echo "| full sync: note | $s: $(get "$s/sync_note") | |"; done
fi
if [[ "$parts" == *" throughput "* ]]; then
    row "SET -P 16 req/s, 0 replicas" rps0
    row "SET -P 16 req/s, 1 replica" rps1
    row "SET -P 16 req/s, 2 replicas" rps2
    row "2 replicas / 0 replicas" rps_ratio "≥ 0.9"
    row "replicas caught up, s after the 2-replica run" catchup_s
    row "primary CPU µs per SET, 0 replicas" cpu_p0
    row "primary CPU µs per SET, 1 replica" cpu_p1
    row "primary CPU µs per SET, 2 replicas" cpu_p2
    row "replica CPU µs per SET applied, 1 replica (until caught up)" cpu_r1
    row "replica CPU µs per SET applied, 2 replicas (mean of both)" cpu_r2
    for s in "${servers[@]}"; do [ "$(get "$s/tp_note")" != - ] && echo "| throughput: note | $s: $(get "$s/tp_note") | |"; done
fi
if [[ "$parts" == *" lag "* ]]; then
    row "lag run: SETs/s asked (half of 0 replicas)" lag_target
    row "lag run: SETs/s done (memtier)" lag_rate
    row "lag p50 ms (probe SET sent → seen on the replica)" lag_p50_ms
    row "lag p99 ms" lag_p99_ms "< 10"
    row "lag max ms" lag_max_ms
    row "probe SET p99 ms on the primary (part of the lag)" set_p99_ms
    row "lag from the primary's reply instead, p50 ms" after_ack_p50_ms
    row "lag from the primary's reply, p99 ms" after_ack_p99_ms
    row "lag from the primary's reply, max ms" after_ack_max_ms
    row "offset gap p99 (firn: bytes, kvrocks: sequence numbers)" gap_p99
    row "offset gap max" gap_max
    for s in "${servers[@]}"; do [ "$(get "$s/lag_note")" != - ] && echo "| lag: note | $s: $(get "$s/lag_note") | |"; done
fi
if [[ "$parts" == *" import "* ]]; then
    echo
    echo "| import from redis-server 7.0.15 | keys | seconds | keys/s | note |"
    echo "|---|---|---|---|---|"
    echo "| firn REPLICAOF redis-server | $(get import/keys) | $(get import/seconds) | $(get import/rate) | $(get import/note) |"
fi
echo
echo "FIRN_REPL_GB=$gb ($keys keys x $value_bytes B), FIRN_REPL_REQUESTS=$requests, FIRN_REPL_LAG_SECONDS=$lag_seconds, FIRN_REPL_IMPORT_KEYS=$import_keys + 4 x $import_elements elements; $(nproc) cores, $(awk '$1 == "MemTotal:" {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), disk $(lsblk -dno NAME,SIZE,MODEL "$(df --output=source "$work" | tail -1)" 2>/dev/null | xargs || echo ?), $(date -u +%Y-%m-%d); ${elapsed} s; load average $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after"
