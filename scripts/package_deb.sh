#!/usr/bin/env bash
# Builds Firn's Debian package with cargo-deb (installed with
# `cargo install` if missing: about a minute on 2 cores) from the release
# build, and prints the .deb's path. The package: /usr/bin/firn, the
# systemd unit firn.service (the firn user, /var/lib/firn), the commented
# /etc/firn/firn.conf, /etc/logrotate.d/firn and the docs; its files are in
# packaging/debian/ and its metadata in crates/firn-server/Cargo.toml
# ([package.metadata.deb]). See docs/operating.md, "Installing the Debian
# package".
#
#   scripts/package_deb.sh [output dir [cargo-deb options]]
#       output dir: default $CARGO_TARGET_DIR/debian; e.g. --fast for a
#       quicker, larger compression (scripts/package_test.sh uses it)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/env.sh"
cd "$here/.."
if ! command -v cargo-deb >/dev/null; then
    echo "package_deb.sh: installing cargo-deb" >&2
    cargo install --locked cargo-deb@3.8.0 >&2
fi
out="${1:-$CARGO_TARGET_DIR/debian}"
shift || true
mkdir -p "$out"
# cargo-deb builds the release binary (cargo build --release --locked),
# strips it and prints the package's path last.
cargo deb --locked -p firn-server --output "$out" "$@" | tail -n 1
