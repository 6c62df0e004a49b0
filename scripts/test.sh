#!/usr/bin/env bash
# Runs the whole test suite: formatting and lints, unit tests of every
# crate, integration tests against a real `firn`, and the differential
# tests that compare Firn with Debian's redis-server byte for byte.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/install-deps.sh"
"$here/install-deps.sh" --check
source "$here/env.sh"
cd "$here/.."
cargo fmt --all -- --check
cargo clippy --locked --workspace --all-targets -- -D warnings
cargo test --locked --workspace -- --test-threads=2
# The differential suites again with every firn read forced cold
# (debug-cold-reads): each command runs on the cold-read pool and commits
# through the write-stamp check, and must still match redis-server. This
# pass also runs two group-commit writers (writer-threads 2), so every
# command group's batches go through the stripe routing and rendezvous.
FIRN_DIFF_COLD=1 FIRN_DIFF_WRITERS=2 cargo test --locked -p firn-server \
    --test diff_strings --test diff_keyspace --test diff_bitmaps --test diff_random \
    --test diff_hashes --test diff_lists --test diff_sets --test diff_zsets \
    --test diff_hyperloglog --test diff_geo --test diff_sort --test diff_random_types \
    --test diff_blocking --test diff_tracking --test diff_transactions \
    --test diff_scripting --test diff_functions --test diff_lua_libs \
    --test diff_notifications --test diff_dirty \
    -- --test-threads=2
python3 scripts/gen_command_table.py --check
