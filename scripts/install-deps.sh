#!/usr/bin/env bash
# Installs what building and testing Firn needs on a fresh Debian machine and
# then checks it. A requirement counts as present only when the very file or
# command the build uses is there:
#
#   cc, c++        the C/C++ compilers the cc crate runs (RocksDB, csrc/)
#   ccache         the compiler wrapper scripts/env.sh routes them through
#   libclang       the C library bindgen dlopens for librocksdb-sys:
#                  libclang.so, libclang.so.N, libclang-N.so or libclang-N.so.M
#                  (libclang-cpp.so.N is Clang's C++ library and does NOT count)
#   python3        scripts/gen_command_table.py
#   redis-server   the reference the differential tests start
#   redis-cli, redis-benchmark   the reference client and bench/'s load tool
#   redis-sentinel the Sentinel tests/sentinel.rs runs over Firn servers
#   redis-py       Python's redis client (Debian's python3-redis), importable
#                  by /usr/bin/python3, the interpreter tests/sentinel.rs
#                  and tests/tls.rs run (a python3 earlier in PATH, e.g.
#                  pyenv's, may lack it)
#   openssl        the command bench/tls.sh makes its certificates with
#   promtool, prometheus   tests/metrics.rs checks /metrics with promtool
#                  and has Prometheus scrape Firn (Debian's prometheus)
#   redis_exporter tests/metrics.rs compares /metrics with the families
#                  redis_exporter derives (prometheus-redis-exporter)
#   chromium       tests/metrics.rs loads the status page headless
#   cargo          Rust >= 1.88 (not installed here: use rustup)
#   go             the concurrent history checker (checker/); Debian's
#                  golang-go if no Go is installed (/usr/local/go counts).
#                  checker/go.mod names Go 1.26 (go-redis v9.23 needs it):
#                  Go >= 1.21 fetches that toolchain from the Go module
#                  proxy by itself; Debian 12's 1.19 cannot.
#
#   install-deps.sh          install what is missing, then check (exit 1 if
#                            anything is still missing)
#   install-deps.sh --check  only report each requirement, found or missing,
#                            with the path found
set -euo pipefail

if ! command -v cargo >/dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then
    export PATH="/usr/local/go/bin:$PATH"
fi

# Prints the first libclang that bindgen (clang-sys) can load, or nothing.
# clang-sys looks in $LIBCLANG_PATH, the LLVM directories and the linker's
# library directories, for the file names listed in the header above.
find_libclang() {
    local dirs=()
    [ -n "${LIBCLANG_PATH:-}" ] && dirs+=("$LIBCLANG_PATH")
    dirs+=(/usr/lib/llvm-*/lib /usr/local/lib /usr/lib /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64)
    local dir file base
    for dir in "${dirs[@]}"; do
        [ -d "$dir" ] || continue
        for file in "$dir"/libclang*.so*; do
            [ -e "$file" ] || continue
            base="${file##*/}"
            if [[ "$base" =~ ^libclang(-[0-9.]+)?\.so(\.[0-9.]+)?$ ]]; then
                echo "$file"
                return 0
            fi
        done
    done
    return 1
}

# One line per requirement: "name|how to find it|Debian package".
requirements() {
    cat <<'EOF'
cc|command cc|gcc
c++|command c++|g++
ccache|command ccache|ccache
libclang|libclang|libclang-dev
python3|command python3|python3
redis-server|command redis-server|redis-server
redis-cli|command redis-cli|redis-tools
redis-benchmark|command redis-benchmark|redis-tools
redis-sentinel|command redis-sentinel|redis-sentinel
redis-py|python-module redis|python3-redis
openssl|command openssl|openssl
go|command go|golang-go
promtool|command promtool|prometheus
prometheus|command prometheus|prometheus
redis_exporter|command prometheus-redis-exporter|prometheus-redis-exporter
chromium|command chromium|chromium
cargo|command cargo|
EOF
}

# Prints where Debian's Python finds a module, or fails.
find_python_module() {
    [ -x /usr/bin/python3 ] || return 1
    /usr/bin/python3 -c "import $1, os; print(os.path.dirname($1.__file__))" 2>/dev/null
}

# Prints the path that satisfies a requirement, or fails.
locate() {
    case "$1" in
        libclang) find_libclang ;;
        command\ *) command -v "${1#command }" ;;
        python-module\ *) find_python_module "${1#python-module }" ;;
    esac
}

check() {
    local missing=0 name how pkg path
    while IFS='|' read -r name how pkg; do
        if path="$(locate "$how")" && [ -n "$path" ]; then
            printf '  %-16s found    %s\n' "$name" "$path"
        else
            printf '  %-16s MISSING  (%s)\n' "$name" "${pkg:-install Rust >= 1.88 with rustup}"
            missing=1
        fi
    done < <(requirements)
    return "$missing"
}

if [ "${1:-}" = "--check" ]; then
    echo "install-deps.sh: build and test requirements"
    check
    exit $?
fi

need=()
crates=()
while IFS='|' read -r name how pkg; do
    [ -n "$pkg" ] || continue
    if ! locate "$how" >/dev/null 2>&1; then
        if [[ "$pkg" == "cargo install "* ]]; then
            crates+=("$pkg")
            continue
        fi
        [[ " ${need[*]-} " == *" $pkg "* ]] || need+=("$pkg")
    fi
done < <(requirements)

if ((${#need[@]})); then
    echo "install-deps.sh: installing ${need[*]}"
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

for install in "${crates[@]}"; do
    echo "install-deps.sh: $install"
    $install >&2
done

# Debian's redis-server, redis-sentinel and prometheus packages start
# system instances (6379, 26379, 9090, 9121); Firn's tests start their own
# on free ports, so they are not needed.
for service in redis-server redis-sentinel prometheus prometheus-redis-exporter; do
    if command -v systemctl >/dev/null && systemctl is-active --quiet "$service" 2>/dev/null; then
        systemctl stop "$service" || true
    fi
done

if ! check >/dev/null; then
    echo "install-deps.sh: requirements still missing after installing:" >&2
    check >&2 || true
    exit 1
fi
