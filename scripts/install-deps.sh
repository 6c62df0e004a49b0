#!/usr/bin/env bash
# Installs what Firn needs on a fresh Debian machine and then checks it, in
# two sets: `run` is what building and running need (scripts/run.sh),
# `test` adds what the test suite needs (scripts/test.sh). A requirement
# counts as present only when the very file or command that uses it is
# there. Needed by run.sh (and test.sh):
#
#   cc, c++        the C/C++ compilers the cc crate runs (RocksDB, csrc/)
#   make           jemalloc's build (tikv-jemalloc-sys runs configure, make)
#   ccache         the compiler wrapper scripts/env.sh routes them through
#   libclang       the C library bindgen dlopens for librocksdb-sys:
#                  libclang.so, libclang.so.N, libclang-N.so or libclang-N.so.M
#                  (libclang-cpp.so.N is Clang's C++ library and does NOT count)
#   cargo          Rust >= 1.88 (not installed here: use rustup)
#   redis-cli      the client: the first PING, the README's tour
#
# Needed by test.sh only:
#
#   python3        scripts/gen_command_table.py --check
#   redis-server   the reference the differential tests start
#   redis-benchmark   bench/'s load tool
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
#   go             the concurrent history checker (checker/); Debian's
#                  golang-go if no Go is installed (/usr/local/go counts).
#                  checker/go.mod names Go 1.26 (go-redis v9.23 needs it):
#                  Go >= 1.21 fetches that toolchain from the Go module
#                  proxy by itself; Debian 12's 1.19 cannot.
#   cargo-deb      scripts/package_deb.sh builds the Debian package; built
#                  with `cargo install` (about a minute on 2 cores, once)
#   dpkg-shlibdeps what cargo-deb derives the package's Depends with
#   systemd-analyze      scripts/package_test.sh verifies its unit (systemd)
#   logrotate      scripts/package_test.sh rotates the installed log
#
#   install-deps.sh run      install what run.sh needs, then check it
#   install-deps.sh test     install everything, then check it (exit 1 if
#                            anything is still missing)
#   install-deps.sh --check  only report each requirement, found or missing,
#                            with the path found and the script that needs it
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

# One line per requirement: "name|how to find it|Debian package|set", the
# set being run (run.sh and test.sh need it) or test (test.sh only).
requirements() {
    cat <<'EOF'
cc|command cc|gcc|run
c++|command c++|g++|run
make|command make|make|run
ccache|command ccache|ccache|run
libclang|libclang|libclang-dev|run
cargo|command cargo||run
redis-cli|command redis-cli|redis-tools|run
python3|command python3|python3|test
redis-server|command redis-server|redis-server|test
redis-benchmark|command redis-benchmark|redis-tools|test
redis-sentinel|command redis-sentinel|redis-sentinel|test
redis-py|python-module redis|python3-redis|test
openssl|command openssl|openssl|test
go|command go|golang-go|test
promtool|command promtool|prometheus|test
prometheus|command prometheus|prometheus|test
redis_exporter|command prometheus-redis-exporter|prometheus-redis-exporter|test
chromium|command chromium|chromium|test
cargo-deb|command cargo-deb|cargo install --locked cargo-deb@3.8.0|test
dpkg-shlibdeps|command dpkg-shlibdeps|dpkg-dev|test
systemd-analyze|command systemd-analyze|systemd|test
logrotate|command logrotate|logrotate|test
EOF
}

# The requirements of set $1 (run: run's alone; test: all of them).
requirements_of() {
    if [ "$1" = run ]; then
        requirements | awk -F'|' '$4 == "run"'
    else
        requirements
    fi
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

# Reports each requirement of set $1; fails if any is missing.
check() {
    local missing=0 name how pkg set path needed
    while IFS='|' read -r name how pkg set; do
        needed="test.sh"
        [ "$set" = run ] && needed="run.sh, test.sh"
        if path="$(locate "$how")" && [ -n "$path" ]; then
            printf '  %-16s found    %-44s (%s)\n' "$name" "$path" "$needed"
        else
            printf '  %-16s MISSING  %-44s (%s)\n' "$name" "${pkg:-install Rust >= 1.88 with rustup}" "$needed"
            missing=1
        fi
    done < <(requirements_of "$1")
    return "$missing"
}

case "${1:-}" in
    --check)
        echo "install-deps.sh: requirements, and the script that needs each"
        check test
        exit $?
        ;;
    run | test) set_name="$1" ;;
    *)
        echo "usage: install-deps.sh run|test|--check" >&2
        exit 2
        ;;
esac

need=()
crates=()
while IFS='|' read -r name how pkg set; do
    [ -n "$pkg" ] || continue
    if ! locate "$how" >/dev/null 2>&1; then
        if [[ "$pkg" == "cargo install "* ]]; then
            crates+=("$pkg")
            continue
        fi
        [[ " ${need[*]-} " == *" $pkg "* ]] || need+=("$pkg")
    fi
done < <(requirements_of "$set_name")

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
if [ "$set_name" = test ]; then
    for service in redis-server redis-sentinel prometheus prometheus-redis-exporter; do
        if command -v systemctl >/dev/null && systemctl is-active --quiet "$service" 2>/dev/null; then
            systemctl stop "$service" || true
        fi
    done
fi

echo "install-deps.sh: what ${set_name}.sh needs"
if ! check "$set_name"; then
    echo "install-deps.sh: requirements still missing after installing" >&2
    exit 1
fi
