#!/usr/bin/env bash
# TLS, side by side: Firn and redis-server (Debian's 7.0.15, OpenSSL) in
# the same run, each with a plain port and a TLS port, the same
# certificates (made here with openssl: a CA and an ECDSA P-256 server
# certificate; tls-auth-clients no).
#
#   bench/tls.sh [requests] [keyspace] [connections] [rounds]
#
# 1. Throughput: redis-benchmark GET and SET, 50 clients, -P 1 and -P 16,
#    plain and `--tls`, against each server in turn: requests/s, TLS/plain
#    of each server, and Firn's TLS over redis-server's TLS (the target:
#    at least 1).
# 2. Connection set-up over TLS: memtier_benchmark (from $MEMTIER, else
#    ../shared/peers/memtier/memtier_benchmark) with --reconnect-interval 1,
#    a new TLS connection (full handshake) for every GET: connections/s.
#    Skipped when memtier is not there.
# 3. With FIRN_BASELINE=/path/to/firn (a build without TLS, or any older
#    one), that build's plain port too: the plain path's regression check
#    (firn plain / baseline plain, in the same run).
#
# All servers are stopped on exit, even on failure (lib.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"
requests="${1:-200000}"
keyspace="${2:-100000}"
connections="${3:-20000}"
rounds="${4:-3}"
build

certs="$work/certs"
mkdir -p "$certs"
(
    cd "$certs"
    openssl ecparam -name prime256v1 -genkey -noout -out ca.key 2>/dev/null
    openssl req -x509 -new -key ca.key -days 2 -subj "/CN=Firn bench CA" -out ca.crt 2>/dev/null
    openssl ecparam -name prime256v1 -genkey -noout -out server.key 2>/dev/null
    openssl req -new -key server.key -subj "/CN=localhost" -out server.csr 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >ext.cnf
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
        -extfile ext.cnf -out server.crt 2>/dev/null
)
tls_args() { # tls-port
    echo --tls-port "$1" --tls-cert-file "$certs/server.crt" --tls-key-file "$certs/server.key" \
        --tls-ca-cert-file "$certs/ca.crt" --tls-auth-clients no
}

redis_port=$(free_port); redis_tls=$(free_port)
firn_port=$(free_port); firn_tls=$(free_port)
# shellcheck disable=SC2046
start_redis redis "$redis_port" $(tls_args "$redis_tls")
# shellcheck disable=SC2046
start_firn firn "$firn_port" $(tls_args "$firn_tls")
base_port=""
if [ -n "${FIRN_BASELINE:-}" ]; then
    base_port=$(free_port)
    start_firn_binary "$FIRN_BASELINE" baseline "$base_port"
fi

bench() { # port pipeline test [tls flags...] -> requests/s
    local port="$1" pipeline="$2" test="$3"
    shift 3
    redis-benchmark -h 127.0.0.1 -p "$port" "$@" -c 50 -n "$requests" -r "$keyspace" -P "$pipeline" \
        -t "$test" --csv -q 2>/dev/null | awk -F, -v t="${test^^}" '{gsub(/"/,""); if ($1 == t) print $2}'
}
tls=(--tls --cacert "$certs/ca.crt")

# Each cell is the median of $rounds runs, the servers taking turns within
# a round (the machine's noise hits them alike).
results="$work/results"
mkdir -p "$results"
targets=("redis $redis_port" "redis_tls $redis_tls" "firn $firn_port" "firn_tls $firn_tls")
[ -n "$base_port" ] && targets+=("baseline $base_port")
for _ in $(seq 1 "$rounds"); do
    for pipeline in 1 16; do
        for test in set get; do
            for target in "${targets[@]}"; do
                read -r name port <<<"$target"
                flags=()
                [[ "$name" == *_tls ]] && flags=("${tls[@]}")
                bench "$port" "$pipeline" "$test" "${flags[@]}" >>"$results/$name-$test-$pipeline"
            done
        done
    done
done
median() { # name test pipeline
    python3 -c "
import statistics, sys
vals = [float(v) for v in open(sys.argv[1]).read().split()]
print(f'{statistics.median(vals):.0f}' if vals else '-')" "$results/$1-$2-$3"
}

base_head=""; base_rule=""
[ -n "$base_port" ] && base_head=" baseline plain | firn plain / baseline |" && base_rule="---|---|"
echo "### Throughput (redis-benchmark, 50 clients, $requests requests, keyspace $keyspace; median of $rounds rounds)"
echo
echo "| test | pipeline | redis plain | redis TLS | redis TLS/plain | firn plain | firn TLS | firn TLS/plain | firn TLS / redis TLS |$base_head"
echo "|---|---|---|---|---|---|---|---|---|$base_rule"
for pipeline in 1 16; do
    for test in set get; do
        rp=$(median redis "$test" "$pipeline")
        rt=$(median redis_tls "$test" "$pipeline")
        fp=$(median firn "$test" "$pipeline")
        ft=$(median firn_tls "$test" "$pipeline")
        base=""
        if [ -n "$base_port" ]; then
            bp=$(median baseline "$test" "$pipeline")
            base=" $bp | $(ratio "$fp" "$bp") |"
        fi
        echo "| ${test^^} | $pipeline | $rp | $rt | $(ratio "$rt" "$rp") | $fp | $ft | $(ratio "$ft" "$fp") | $(ratio "$ft" "$rt") |$base"
    done
done
echo

memtier="${MEMTIER:-$here/../../shared/peers/memtier/memtier_benchmark}"
if [ -x "$memtier" ]; then
    setup() { # tls-port -> connections/s (one GET per connection)
        "$memtier" -s 127.0.0.1 -p "$1" --protocol=redis --tls --cacert "$certs/ca.crt" \
            --tls-skip-verify -t 2 -c 4 -n $((connections / 8)) --ratio=0:1 \
            --reconnect-interval=1 --hide-histogram 2>/dev/null |
            awk '$1 == "Totals" {print int($2)}'
    }
    rs=$(setup "$redis_tls")
    fs=$(setup "$firn_tls")
    echo "### Connection set-up over TLS (memtier, 2 threads x 4 clients, a new connection per GET, $connections in all)"
    echo
    echo "| redis conn/s | firn conn/s | firn/redis |"
    echo "|---|---|---|"
    echo "| $rs | $fs | $(ratio "$fs" "$rs") |"
    echo
fi
echo "$(nproc) cores; $(uname -r); firn appendfsync=everysec, redis without persistence; both tls-auth-clients no, ECDSA P-256 certificate"
