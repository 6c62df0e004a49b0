#!/usr/bin/env bash
# Installs what building and testing Firn needs on a fresh Debian machine,
# skipping whatever is already there: libclang (RocksDB's bindgen), ccache,
# a C++ toolchain, and redis-server/redis-tools (the reference for the
# differential tests and redis-benchmark for bench/).
set -euo pipefail

need=()
command -v ccache >/dev/null || need+=(ccache)
command -v c++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-cli >/dev/null || need+=(redis-tools)
command -v python3 >/dev/null || need+=(python3)
ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 || ls /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1 || need+=(libclang-dev)

if ((${#need[@]})); then
    echo "installing: ${need[*]}"
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

# Debian's redis-server package starts a system instance on 6379; Firn's
# tests start their own on free ports, so it is not needed.
if command -v systemctl >/dev/null && systemctl is-active --quiet redis-server 2>/dev/null; then
    systemctl stop redis-server || true
fi

if ! command -v cargo >/dev/null; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    else
        echo "Rust (cargo >= 1.88) is required: install it with rustup or your package manager" >&2
        exit 1
    fi
fi
