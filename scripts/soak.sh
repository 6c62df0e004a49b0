#!/usr/bin/env bash
# Runs the concurrent history checker (checker/) against the debug firn for
# a while, round after round with new seeds: scripts/soak.sh 30m
# (any Go duration; default 10m). Extra arguments go to the checker.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/env.sh"
[ -d /usr/local/go/bin ] && export PATH="/usr/local/go/bin:$PATH"
duration="${1:-10m}"
shift || true
cd "$here/.."
[ -x "$CARGO_TARGET_DIR/debug/firn" ] || cargo build --locked -p firn-server --bin firn
cd checker
exec go run . -firn "$CARGO_TARGET_DIR/debug/firn" -duration "$duration" "$@"
