#!/usr/bin/env bash
# The throughput cost of ACL checks, Firn and redis-server 7.0 side by side
# in the same run.
#
#   bench/acl.sh [keyspace] [users]
#
# 1. redis-benchmark (50 clients) runs `GET k9:__rand_int__` and
#    `SET k9:__rand_int__ xxx` (keyspace 100,000 by default) at -P 1 and
#    -P 16 as four users on each server:
#      default   no rules: its check is skipped (`unrestricted` on Firn)
#      bench     on >pw +@all ~k0:* ~k1:* ... ~k9:*
#      getset    on >pw +get +set and the same 10 key patterns
#      bench100  on >pw +@all and 100 key patterns, ~k10:* ... ~k99:* then
#                ~k0:* ... ~k9:*
#    The benchmark's keys match only the LAST pattern of each user, so every
#    pattern is tried for every key. Each run lasts about
#    FIRN_BENCH_SECONDS (default 1.5): the request count of each server and
#    test comes from the default user's rate, at first in a calibration
#    run, then in its latest run, so a busier machine does not stretch the
#    script. FIRN_BENCH_ROUNDS rounds (default 5): in a round each
#    server serves every user once, back to back (the order of the servers
#    and of the users rotates from round to round); the ratio
#    restricted/default is taken within the round, and its median (with
#    the lowest and highest) reported beside the median req/s. The
#    server's own CPU time per request (all its threads' run time,
#    /proc/PID/task/*/schedstat) is reported the same way: when the machine
#    is shared, or redis-benchmark rather than the server is the
#    bottleneck, CPU/op still shows what the check costs.
# 2. `users` more users (default 10,000), each `on >pw +@all` with 100 key
#    patterns, are created on both servers (ACL SETUSER through
#    redis-cli --pipe, timed), and default and bench are measured again the
#    same way: the check must not slow down with the number of users.
#
# Servers: a release build of firn (appendfsync everysec, its default) and
# Debian's redis-server 7.0.15 without persistence, on free loopback ports
# with temporary dirs, stopped on exit. FIRN_BENCH_PIN="SERVER_CPUS/CLIENT_CPUS"
# (default "1/0" when the machine has 2 or more cores; empty for none)
# pins every server thread and redis-benchmark with taskset. FIRN_PROFILE=1
# then records a perf profile of firn (a fresh server for each, 6 s) while
# bench runs each test, and bench100 GET and SET at -P 16, and writes
# bench/profiles/acl-{get,set}-P{1,16} and acl-bench100-{get,set}-P16
# .{svg,txt}: a flame graph (inferno) and the CPU share of the check's
# functions (needs root for perf).
#
# Prints Markdown tables, how much of the CPUs other work used meanwhile,
# and the time taken: about 7 minutes with the defaults on 2 cores, plus
# 1.5 with FIRN_PROFILE=1.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"
keyspace="${1:-100000}"
users="${2:-10000}"
rounds="${FIRN_BENCH_ROUNDS:-5}"
seconds="${FIRN_BENCH_SECONDS:-1.5}"
build
started=$SECONDS
# How busy the machine was with other work during the measurements: the
# CPU time all processes used (/proc/stat: user, nice, system; interrupts
# not counted) less this script's own (its children's, which include every
# redis-benchmark, and the servers').
ticks_per_s=$(getconf CLK_TCK)
busy_ticks() { awk '/^cpu / {print $2 + $3 + $4}' /proc/stat; }
own_ticks() { awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat; }
busy_start=$(busy_ticks)
own_start=$(own_ticks)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# Pinning: servers on one set of CPUs, the load generator on another.
pin_from_env

# The users of part 1 and their rules.
patterns10=()
for i in $(seq 0 9); do patterns10+=("~k$i:*"); done
patterns100=()
for i in $(seq 10 99) $(seq 0 9); do patterns100+=("~k$i:*"); done
user_names=(default bench getset bench100)
create_users() { # port
    redis-cli -p "$1" ACL SETUSER bench reset on '>pw' +@all "${patterns10[@]}" >/dev/null
    redis-cli -p "$1" ACL SETUSER getset reset on '>pw' +get +set "${patterns10[@]}" >/dev/null
    redis-cli -p "$1" ACL SETUSER bench100 reset on '>pw' +@all "${patterns100[@]}" >/dev/null
}
# The path measured is the one intended: each user may SET and GET k9:...
# and is refused other keys (and getset other commands).
check_users() { # port name
    local u out
    for u in bench getset bench100; do
        out=$(redis-cli -p "$1" --user "$u" --pass pw SET k9:check xxx 2>/dev/null)
        [ "$out" = OK ] || { echo "$2: $u cannot SET k9:check: $out" >&2; exit 1; }
        out=$(redis-cli -p "$1" --user "$u" --pass pw GET k9:check 2>/dev/null)
        [ "$out" = xxx ] || { echo "$2: $u cannot GET k9:check: $out" >&2; exit 1; }
        out=$(redis-cli -p "$1" --user "$u" --pass pw GET other:check 2>/dev/null)
        [[ "$out" == NOPERM* ]] || { echo "$2: $u was not refused other:check: $out" >&2; exit 1; }
    done
    out=$(redis-cli -p "$1" --user getset --pass pw DEL k9:check 2>/dev/null)
    [[ "$out" == NOPERM* ]] || { echo "$2: getset was not refused DEL: $out" >&2; exit 1; }
}

# RESP for `users` ACL SETUSER u<N> on >pw +@all ~k0:* ... ~k99:*.
many_users_file="$work/users.resp"
python3 - "$users" >"$many_users_file" <<'EOF'
import sys
out = sys.stdout.buffer
for n in range(int(sys.argv[1])):
    args = [b"ACL", b"SETUSER", b"u%d" % n, b"on", b">pw", b"+@all"]
    args += [b"~k%d:*" % i for i in range(100)]
    out.write(b"*%d\r\n" % len(args))
    for a in args:
        out.write(b"$%d\r\n%s\r\n" % (len(a), a))
EOF

declare -A port_of pid_of requests_of
redis_port=$(free_port)
start_redis redis "$redis_port"
port_of[redis]=$redis_port pid_of[redis]=$server_pid
firn_port=$(free_port)
start_firn firn "$firn_port"
port_of[firn]=$firn_port pid_of[firn]=$server_pid
servers=(redis firn)
for s in "${servers[@]}"; do
    create_users "${port_of[$s]}"
    check_users "${port_of[$s]}" "$s"
done

rb() { # port pipeline user op requests -> requests/s
    local auth=() cmd
    [ "$3" = default ] || auth=(--user "$3" -a pw)
    case "$4" in
        get) cmd=(GET 'k9:__rand_int__') ;;
        set) cmd=(SET 'k9:__rand_int__' xxx) ;;
    esac
    "${client_pin[@]}" redis-benchmark -p "$1" -c 50 -n "$5" -r "$keyspace" -P "$2" \
        "${auth[@]}" --csv -q "${cmd[@]}" 2>/dev/null \
        | awk -F, 'NR > 1 {gsub(/"/,""); rate = $2} END {print rate}'
}

# How many requests last about $seconds at this rate.
requests_for() { python3 -c "import sys; print(max(5000, int(float(sys.argv[1]) * float(sys.argv[2]))))" "$1" "$seconds"; }

# Warm-up and calibration (not measured): SET first, filling the keyspace so
# that GETs hit, then each test once as the default user; each server and
# test then runs for about $seconds.
for s in "${servers[@]}"; do
    rb "${port_of[$s]}" 16 default set $((keyspace * 3)) >/dev/null
    for p in 1 16; do
        for op in set get; do
            n=20000
            [ "$p" = 1 ] || n=100000
            rate=$(rb "${port_of[$s]}" "$p" default "$op" "$n")
            requests_of[$s.$p.$op]=$(requests_for "$rate")
        done
    done
done

results="$work/results.tsv"
# One measurement, appended to $results:
# phase server user pipeline op round req/s µs-of-server-CPU/op.
measure() { # phase server user pipeline op round
    local port=${port_of[$2]} pid=${pid_of[$2]} requests=${requests_of[$2.$4.$5]} before after rate
    before=$(cpu_ns "$pid")
    rate=$(rb "$port" "$4" "$3" "$5" "$requests")
    after=$(cpu_ns "$pid")
    [ -n "$rate" ] || { echo "$2: redis-benchmark as $3 ($5 -P $4) failed" >&2; exit 1; }
    # The default user's rate sets the next runs' length: the script's time
    # stays bounded when the machine is busier than at the calibration.
    [ "$3" = default ] && requests_of[$2.$4.$5]=$(requests_for "$rate")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "$rate" \
        "$(python3 -c "import sys; print(f'{(int(sys.argv[2]) - int(sys.argv[1])) / 1e3 / int(sys.argv[3]):.4f}')" "$before" "$after" "$requests")" \
        >>"$results"
}

# Every (pipeline, op) for `rounds` rounds; within a round each server
# serves each user back to back, both orders rotating from round to round.
run_phase() { # phase users...
    local phase="$1" p op r i j s u n
    shift
    local us=("$@")
    n=${#us[@]}
    for p in 1 16; do
        for op in set get; do
            for ((r = 0; r < rounds; r++)); do
                for ((i = 0; i < ${#servers[@]}; i++)); do
                    s=${servers[(i + r) % ${#servers[@]}]}
                    for ((j = 0; j < n; j++)); do
                        u=${us[(j + r) % n]}
                        measure "$phase" "$s" "$u" "$p" "$op" "$r"
                    done
                done
            done
        done
    done
}

echo "part 1: ${#user_names[@]} users x 2 servers x 4 tests x $rounds rounds" >&2
run_phase single "${user_names[@]}"

declare -A create_seconds
for s in "${servers[@]}"; do
    t0=$(date +%s.%N)
    out=$(redis-cli -p "${port_of[$s]}" --pipe <"$many_users_file" 2>&1)
    t1=$(date +%s.%N)
    [[ "$out" == *"errors: 0, replies: $users"* ]] || { echo "$s: ACL SETUSER of $users users: $out" >&2; exit 1; }
    create_seconds[$s]=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$t0" "$t1")
    count=$(redis-cli -p "${port_of[$s]}" ACL USERS | wc -l)
    [ "$count" = $((users + 4)) ] || { echo "$s: ACL USERS counts $count, not $((users + 4))" >&2; exit 1; }
    check_users "${port_of[$s]}" "$s"
done
echo "part 2: $users more users created; 2 users x 2 servers x 4 tests x $rounds rounds" >&2
run_phase many default bench

python3 - "$results" "$users" <<'EOF'
import collections, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
users = int(sys.argv[2])
runs = collections.defaultdict(dict)   # (phase, server, user, p, op) -> {round: (req/s, µs/op)}
for phase, server, user, p, op, r, rps, us in rows:
    runs[(phase, server, user, p, op)][r] = (float(rps), float(us))

def med(phase, server, user, p, op, idx):
    return statistics.median(v[idx] for v in runs[(phase, server, user, p, op)].values())

def ratios(num, den, idx):
    """num / den per round (both keys of runs), for the rounds both have."""
    a, b = runs[num], runs[den]
    return [a[r][idx] / b[r][idx] for r in a if r in b and b[r][idx]]

def cell(rs):
    if not rs:
        return "-"
    return f"{statistics.median(rs):.3f} ({min(rs):.2f}-{max(rs):.2f})"

def table(phase, users_shown, idx, unit, title):
    print(f"\n{title}\n")
    print(f"| test | pipeline | user | redis-server {unit} | redis-server restricted/default | firn {unit} | firn restricted/default |")
    print("|---|---|---|---|---|---|---|")
    fmt = "{:.0f}" if idx == 0 else "{:.2f}"
    for p in ("1", "16"):
        for op in ("get", "set"):
            for u in users_shown:
                cells = [op.upper(), p, u]
                for s in ("redis", "firn"):
                    cells.append(fmt.format(med(phase, s, u, p, op, idx)))
                    cells.append("1" if u == "default" else
                                 cell(ratios((phase, s, u, p, op), (phase, s, "default", p, op), idx)))
                print("| " + " | ".join(cells) + " |")

note = "medians of the rounds; ratio: median (lowest-highest) of the per-round ratios"
table("single", ["default", "bench", "getset", "bench100"], 0, "req/s", f"Part 1, throughput ({note})")
table("single", ["default", "bench", "getset", "bench100"], 1, "µs/op", f"Part 1, server CPU per request ({note})")
table("many", ["default", "bench"], 0, "req/s", f"Part 2, throughput with {users:,} more users of 100 patterns each")
table("many", ["default", "bench"], 1, "µs/op", f"Part 2, server CPU per request with {users:,} more users")
print(f"\nbench with {users:,} users against bench alone: its restricted/default ratio of part 2 over that of part 1 (1 = no slow-down)\n")
print("| test | pipeline | redis-server req/s | redis-server µs/op | firn req/s | firn µs/op |")
print("|---|---|---|---|---|---|")
for p in ("1", "16"):
    for op in ("get", "set"):
        cells = [op.upper(), p]
        for s in ("redis", "firn"):
            for idx in (0, 1):
                m = ratios(("many", s, "bench", p, op), ("many", s, "default", p, op), idx)
                o = ratios(("single", s, "bench", p, op), ("single", s, "default", p, op), idx)
                cells.append(f"{statistics.median(m) / statistics.median(o):.3f}" if m and o else "-")
        print("| " + " | ".join(cells) + " |")
EOF
busy_end=$(busy_ticks)
own_end=$(own_ticks)
servers_ticks=0
for s in "${servers[@]}"; do
    servers_ticks=$((servers_ticks + $(awk '{print $14 + $15}' "/proc/${pid_of[$s]}/stat")))
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
measured=$((SECONDS - started))

# The profiles: a fresh firn (no other users) for each test, run as bench
# (and at -P 16 as bench100).
if [ "${FIRN_PROFILE:-0}" = 1 ]; then
    command -v perf >/dev/null || apt-get install -y -qq linux-perf >&2
    command -v inferno-flamegraph >/dev/null || cargo install -q inferno >&2
    profiles="$here/profiles"
    mkdir -p "$profiles"
    stop_server "${pid_of[firn]}"
    stop_server "${pid_of[redis]}"
    for what in bench:get:1 bench:set:1 bench:get:16 bench:set:16 bench100:get:16 bench100:set:16; do
        IFS=: read -r prof_user op p <<<"$what"
        name="acl-$op-P$p"
        [ "$prof_user" = bench ] || name="acl-$prof_user-$op-P$p"
        prof_port=$(free_port)
        start_firn firn-profile "$prof_port"
        create_users "$prof_port"
        rb "$prof_port" 16 default set $((keyspace * 3)) >/dev/null
        cmd=(GET 'k9:__rand_int__')
        [ "$op" = set ] && cmd=(SET 'k9:__rand_int__' xxx)
        "${client_pin[@]}" redis-benchmark -p "$prof_port" -c 50 -n 100000000 -r "$keyspace" -P "$p" \
            --user "$prof_user" -a pw -q "${cmd[@]}" >/dev/null 2>&1 &
        load_pid=$!
        sleep 1
        perf record -F 999 -g --call-graph dwarf,16384 -p "$server_pid" -o "$work/perf.data" -- sleep 6 >/dev/null 2>&1 || true
        kill "$load_pid" 2>/dev/null || true
        wait "$load_pid" 2>/dev/null || true
        perf script --no-inline -i "$work/perf.data" 2>/dev/null | inferno-collapse-perf >"$work/$name.folded" 2>/dev/null || true
        rm -f "$work/perf.data"
        inferno-flamegraph --title "firn: $op -P $p as user $prof_user" --minwidth 0.2 \
            <"$work/$name.folded" >"$profiles/$name.svg" 2>/dev/null || true
        python3 - "$work/$name.folded" "$name" "$prof_user" >"$profiles/$name.txt" <<'PY'
import collections, re, sys
total = 0
own = collections.Counter()
inclusive = collections.Counter()
inner = collections.Counter()
# The check's functions (a release build inlines much of it: a frame stands
# for what was inlined into it).
parts = {
    "acl::check (refresh, admit, check_user, check_target, check_selector)": r"acl::check::",
    "keyspecs (keys_with_flags, keys, variable_flags, KeyFlags)": r"keyspecs::",
    "glob matching (firn_prims::glob)": r"firn_prims::glob::",
    "acl::rules (KeyPattern::matches, selectors)": r"acl::rules::",
}
anyof = "|".join(parts.values())
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    n = int(n)
    total += n
    frames = stack.split(";")
    leaf = re.sub(r"<.*?>", "", frames[-1])[:100]
    own[leaf] += n
    for label, pattern in parts.items():
        if any(re.search(pattern, f) for f in frames):
            inclusive[label] += n
    if any(re.search(anyof, f) for f in frames):
        inclusive["any of the above"] += n
    if any(re.search(r"acl::check::", f) for f in frames):
        inner[leaf] += n
print(f"firn profile: {sys.argv[2]} as user {sys.argv[3]} (perf record -F 999 --call-graph dwarf, 6 s)\n")
print("CPU under each part of the check (inclusive, % of all samples):")
for label in list(parts) + ["any of the above"]:
    print(f"  {100 * inclusive[label] / max(total, 1):5.2f}%  {label}")
print("\nUnder acl::check, the function itself (top 15, % of all samples):")
for name, n in inner.most_common(15):
    print(f"  {100 * n / max(total, 1):5.2f}%  {name}")
print("\nCPU in the function itself (top 30):")
for name, n in own.most_common(30):
    print(f"  {100 * n / max(total, 1):5.1f}%  {name}")
PY
        stop_server "$server_pid"
        rm -rf "$work/firn-profile"
    done
fi

echo
echo "ACL SETUSER of $users users (100 patterns each, redis-cli --pipe): redis-server ${create_seconds[redis]} s, firn ${create_seconds[firn]} s"
echo "runs of about $seconds s (each server and test: the request count from the default user's last rate); keyspace=$keyspace; redis-benchmark -c 50; $rounds rounds; $(nproc) cores; pinning: ${pin:-none} (servers/client CPUs); firn appendfsync=everysec, redis-server no persistence"
echo "measurements: $measured s; other work on the machine meanwhile: $(python3 -c "import sys; b, o, t, n = map(float, sys.argv[1:]); print(f'{100 * max(b - o, 0) / max(t * n, 1):.0f}')" \
    $((busy_end - busy_start)) $((own_end - own_start + servers_ticks)) $((measured * ticks_per_s)) "$(nproc)") % of the CPUs' time (/proc/stat user+system less this script's processes); load average $load_start before, $load_end after"
echo "took $((SECONDS - started)) s"
