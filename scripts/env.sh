# Sourced by every project script: where the build lives and how C/C++ is
# compiled. The cargo target dir sits outside the checkout so that CI and the
# next session (a fresh clone) reuse the ~15-minute RocksDB build; ccache is a
# second line of defence when cargo's own fingerprints do not match.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/firn/target}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/firn/ccache}"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-8G}"
export CCACHE_NOHASHDIR=1
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$HOME}"
export CC="ccache cc"
export CXX="ccache c++"
# Portable binaries: never -march=native or host-only instruction sets.
unset RUSTFLAGS
export ROCKSDB_PORTABLE=1
export PORTABLE=1
# RocksDB's C++ is compiled by crates/firn-rocksdb (without the files Firn
# never links, beside the Rust crates): librocksdb-sys only links it. Any
# directory will do; without the variable librocksdb-sys builds it all.
export ROCKSDB_LIB_DIR="$CARGO_TARGET_DIR"
unset ROCKSDB_STATIC
mkdir -p "$CARGO_TARGET_DIR" "$CCACHE_DIR"
# Go for checker/ (installed by install-deps.sh; an official tarball's
# /usr/local/go is used when present).
if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then
    export PATH="/usr/local/go/bin:$PATH"
fi
