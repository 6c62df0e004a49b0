#!/usr/bin/env bash
# Runs the whole test suite: formatting and lints, unit tests of every
# crate, integration tests against a real `firn`, and the differential
# tests that compare Firn with Debian's redis-server byte for byte.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/install-deps.sh" test
source "$here/env.sh"
cd "$here/.."
cargo fmt --all -- --check
cargo clippy --locked --workspace --all-targets -- -D warnings
# No module may join an import cycle, nor use one of a higher layer (the
# layers of docs/architecture.md, "Dependency rules"): firn-modgraph reads
# every library's sources.
cargo run --locked -q -p firn-modgraph
cargo test --locked --workspace -- --test-threads=2
# The differential suites again with every firn read forced cold
# (debug-cold-reads): each command runs on the cold-read pool and commits
# through the write-stamp check, and must still match redis-server. This
# pass also runs two group-commit writers (writer-threads 2), so every
# command group's batches go through the stripe routing and rendezvous.
# Every differential suite is found by its name (tests/diff_*.rs), so a
# new one cannot be left out of this pass.
cold_suites=()
for suite in crates/firn-server/tests/diff_*.rs; do
    cold_suites+=(--test "$(basename "$suite" .rs)")
done
FIRN_DIFF_COLD=1 FIRN_DIFF_WRITERS=2 cargo test --locked -p firn-server \
    "${cold_suites[@]}" -- --test-threads=2
python3 scripts/gen_command_table.py --check
# The Debian package: built, installed with dpkg -i, its unit verified,
# firn started as the unit starts it and PINGed, its log rotated, purged
# (scripts/package_test.sh cleans up whatever happens).
bash scripts/package_test.sh
# The concurrent history checker (checker/, Go): many clients against the
# firn that cargo test built, in rounds of histories with new seeds, in the
# default mode and with every read cold and two writers: the single-key
# and mixed workloads, and the list-append (Elle) workload on lists and on
# streams (XADD/XRANGE), with and without a kill -9 halfway, and the queue
# workload (blocking pops against a FIFO-queue model, two rounds of four
# histories, about 30 s). Mixed histories are kept to 1000 operations,
# and those with a kill -9 to 300 operations of 4 clients (the operations
# the kill leaves without a reply make Porcupine's search far longer), so
# that it does not run out of time on this 2-core machine; an inconclusive
# check counts as a failure. Each run closes with "checker: N passed, M
# failed" and exits non-zero on any failure.
(cd checker && gofmt -l . | (! grep .) && go vet ./... && go test ./...)
firn="$CARGO_TARGET_DIR/debug/firn"
(cd checker && go run . -firn "$firn" -workloads perkey,mixed -kill=false -mixed-ops 1000 \
    -duration 45s)
(cd checker && go run . -firn "$firn" -workloads mixed -mixed-clients 4 -mixed-ops 300 \
    -round 10s -duration 15s)
(cd checker && go run . -firn "$firn" -workloads listappend,streamappend -duration 30s)
(cd checker && go run . -firn "$firn" -workloads queue -duration 30s -round 20s)
