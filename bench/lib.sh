# Sourced by every bench script (after it has set $here): the build, the
# servers and the small helpers they share, each defined once.
#
#   build                  builds firn and firn-load once per run and sets
#                          $firn and $load; FIRN_BENCH_PROFILE=debug (or
#                          BUILD=debug) uses a debug build, for a quick
#                          check of a script with small numbers;
#                          FIRN_BIN=/path/to/firn (and FIRN_LOAD, by
#                          default firn-load beside FIRN_BIN) skips the
#                          build and runs those binaries instead
#   start_firn NAME PORT [firn args...]
#                          FIRN_ARGS="--io-threads 8 ..." adds options to
#                          every firn a script starts (an experiment's knob)
#   start_firn_binary BINARY NAME PORT [firn args...]   another firn build
#   start_redis NAME PORT [redis-server args...]
#                          redis-server without persistence unless the args
#                          say otherwise ("${redis_aof[@]}": AOF everysec,
#                          firn's own durability)
#   start_kvrocks NAME PORT [BLOCK_CACHE_MB]
#                          Kvrocks from $KVROCKS (see bench/README.md),
#                          block cache 512 MB unless given
#                          Each starts on 127.0.0.1:PORT with its data in
#                          $work/NAME and its log in $work/NAME.log, waits
#                          for PONG and leaves its pid in $server_pid.
#                          A script may set server_wrapper (an array, empty
#                          by default) to a command each server is started
#                          through, e.g. a shell that joins a cgroup and
#                          execs the server, so that its pid stays the same.
#   stop_server PID        SIGTERM, and wait for it to exit
#   free_port, field JSON KEY, ratio A B [DIGITS]
#   pin_from_env           FIRN_BENCH_PIN="SERVER_CPUS/CLIENT_CPUS" (default
#                          "1/0" on 2+ cores, empty for none): sets $pin,
#                          server_wrapper (taskset) and client_pin, an array
#                          to run load generators through
#   cpu_ns PID             nanoseconds all threads of PID have run
#
# Every server started here is stopped on exit, even on failure, and the
# temporary work dir ($work, under $bench_tmp if set, else $TMPDIR or /tmp)
# is removed; a script with more to undo defines bench_cleanup.
# The test set: redis-server and redis-benchmark are the reference side.
"$here/../scripts/install-deps.sh" test >&2
source "$here/../scripts/env.sh"

work="$(mktemp -d "${bench_tmp:-${TMPDIR:-/tmp}}/firn-bench.XXXXXX")"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if declare -F bench_cleanup >/dev/null; then bench_cleanup || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

profile="${FIRN_BENCH_PROFILE:-${BUILD:-release}}"
built=""
build() {
    [ -n "$built" ] && return 0
    if [ -n "${FIRN_BIN:-}" ]; then
        firn="$FIRN_BIN"
        load="${FIRN_LOAD:-$(dirname "$FIRN_BIN")/firn-load}"
        [ -x "$firn" ] && [ -x "$load" ] || { echo "FIRN_BIN=$firn or FIRN_LOAD=$load is not an executable" >&2; exit 1; }
        built=1
        return 0
    fi
    local flags=(--locked -q -p firn-server -p firn-bench --manifest-path "$here/../Cargo.toml")
    [ "$profile" = release ] && flags+=(--release)
    # From the repository, whose .cargo/config.toml sets the cfg flags.
    (cd "$here/.." && cargo build "${flags[@]}")
    firn="$CARGO_TARGET_DIR/$profile/firn"
    load="$CARGO_TARGET_DIR/$profile/firn-load"
    built=1
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

server_wrapper=()
client_pin=()

pin_from_env() {
    pin="${FIRN_BENCH_PIN-$([ "$(nproc)" -ge 2 ] && echo 1/0 || echo)}"
    if [ -n "$pin" ]; then
        server_wrapper=(taskset -c "${pin%/*}")
        client_pin=(taskset -c "${pin#*/}")
    fi
}

# Threads that exit during a run are not counted: no server ends threads
# while it serves.
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }

# Runs "$@" in the background, through "${server_wrapper[@]}", as server
# NAME on PORT (see the header) and waits for its first PONG; stops the
# script, with the log's tail, if the server exits or does not answer
# within 30 s.
launch() { # name port command...
    local name="$1" port="$2"
    shift 2
    mkdir -p "$work/$name"
    "${server_wrapper[@]}" "$@" >>"$work/$name.log" 2>&1 &
    server_pid=$!
    pids+=("$server_pid")
    for _ in $(seq 1 300); do
        redis-cli -p "$port" PING >/dev/null 2>&1 && return 0
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "$name did not start on port $port:" >&2
    tail -20 "$work/$name.log" >&2
    exit 1
}

start_firn() { # name port [firn args...]
    build
    start_firn_binary "$firn" "$@"
}

start_firn_binary() { # binary name port [firn args...]
    local binary="$1" name="$2" port="$3"
    shift 3
    launch "$name" "$port" "$binary" --port "$port" --bind 127.0.0.1 --dir "$work/$name" \
        --loglevel warning "$@" ${FIRN_ARGS:-}
}

redis_aof=(--appendonly yes --appendfsync everysec)

start_redis() { # name port [redis-server args...]
    local name="$1" port="$2" persistence=(--appendonly no)
    shift 2
    [[ " $* " == *" --appendonly "* ]] && persistence=()
    launch "$name" "$port" redis-server --port "$port" --bind 127.0.0.1 --save "" \
        "${persistence[@]}" --daemonize no --dir "$work/$name" "$@"
}

start_kvrocks() { # name port [block_cache_mb]
    local name="$1" port="$2" block_cache="${3:-512}"
    launch "$name" "$port" "$KVROCKS" -c "$(dirname "$KVROCKS")/kvrocks.conf" \
        --bind 127.0.0.1 --port "$port" --dir "$work/$name" --log-dir "$work/$name" \
        --workers "$(nproc)" --rocksdb.block_cache_size "$block_cache" --daemonize no
}

stop_server() { # pid
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
    # Forget it, so that cleanup never signals a reused pid.
    local kept=() p
    for p in "${pids[@]}"; do [ "$p" = "$1" ] || kept+=("$p"); done
    pids=("${kept[@]}")
}

# A field of firn-load's JSON line.
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }

# A / B with DIGITS decimals (2 by default); "-" when B is 0 or either is
# not a number (a failed measurement).
ratio() {
    python3 -c "
import sys
try:
    a, b = float(sys.argv[1]), float(sys.argv[2])
    print(f'{a / b:.{int(sys.argv[3])}f}' if b else '-')
except ValueError:
    print('-')" "$1" "$2" "${3:-2}"
}

# The disk's random-read rate for `bs` blocks (default 16k), direct I/O,
# 32 in flight, 10 s over a 2 GB file under $work: fio's read IOPS. fio
# is installed if missing; "-" if it cannot run.
disk_randread_iops() { # [bs]
    local bs="${1:-16k}"
    if ! command -v fio >/dev/null; then
        apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio >/dev/null 2>&1 || true
    fi
    command -v fio >/dev/null || { echo -; return 0; }
    fio --name=randread --filename="$work/fio.dat" --size=2G --rw=randread --bs="$bs" \
        --direct=1 --ioengine=libaio --iodepth=32 --runtime=10 --time_based \
        --output-format=json 2>/dev/null |
        python3 -c 'import json,sys; print("%.0f" % json.load(sys.stdin)["jobs"][0]["read"]["iops"])' ||
        echo -
    rm -f "$work/fio.dat"
}
