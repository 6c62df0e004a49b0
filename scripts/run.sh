#!/usr/bin/env bash
# Builds Firn (release) and starts it on the embedded default data dir
# (./firn-data in the current directory). Installs only what building and
# running need (install-deps.sh run: compilers, make, ccache, libclang,
# redis-cli); the test suite's tools come with scripts/test.sh. Extra
# arguments go to firn, e.g.
#   scripts/run.sh --port 6380 --appendfsync always
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/install-deps.sh" run
source "$here/env.sh"
# From the repository, whose .cargo/config.toml sets the cfg flags.
(cd "$here/.." && cargo build --release --locked -p firn-server)
exec "$CARGO_TARGET_DIR/release/firn" "$@"
