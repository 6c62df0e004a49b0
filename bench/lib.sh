# Sourced by the bench scripts: a temporary work dir, servers started in the
# background and all stopped on exit (even on failure), free loopback ports,
# and waiting for a server's first PONG.
work="$(mktemp -d)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_ping() {
    for _ in $(seq 1 300); do
        redis-cli -p "$1" PING >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "server on port $1 did not start" >&2
    exit 1
}
