#!/usr/bin/env bash
# Fuzzes firn-resp's request decoder (fuzz/fuzz_targets/decode_request.rs)
# for $1 seconds (default 60). Installs cargo-fuzz if it is missing. The
# stable toolchain is used with RUSTC_BOOTSTRAP=1 (cargo-fuzz passes
# nightly -Z flags); if the AddressSanitizer build fails, it falls back to
# --sanitizer none (the decoder is safe Rust, so ASan adds little).
set -euo pipefail
seconds="${1:-60}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/env.sh"
# Its own target dir: fuzz builds use other compiler flags than the workspace.
export CARGO_TARGET_DIR="$HOME/.cache/firn/target-fuzz"
export RUSTC_BOOTSTRAP=1
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
cd "$here/../fuzz"
corpus=corpus/decode_request
mkdir -p "$corpus"
sanitizer=address
if ! cargo fuzz build --sanitizer address decode_request; then
    echo "fuzz.sh: AddressSanitizer build failed, using --sanitizer none" >&2
    sanitizer=none
fi
cargo fuzz run --sanitizer "$sanitizer" decode_request "$corpus" seeds/decode_request -- \
    -max_total_time="$seconds" -max_len=4096 -timeout=10
