#!/usr/bin/env bash
# Runs units of Redis 7.0.15's TCL suite in its normal mode against Firn:
# the harness starts its own servers from config files, which the units
# tagged `external:skip` (unit/acl, unit/acl-v2 ...) need. The external
# runner (../shared/redis-tests) cannot run those.
#
#   scripts/redis_suite_normal_mode.sh [FIRN_BINARY] [UNIT...]
#       default binary: $HOME/.cache/firn/target/release/firn
#       default units:  unit/acl unit/acl-v2
#
# It needs the suite prepared by ../shared/redis-tests/prepare.py in
# $HOME/.cache/redis-tests, and copies it to $HOME/.cache/redis-tests-firn
# (the suite is never copied into this repository), with `src/redis-server`
# a wrapper that prints the " PID: <pid>" line the harness waits for and
# then execs Firn, so the harness's PID is Firn's.
set -euo pipefail

firn=${1:-$HOME/.cache/firn/target/release/firn}
shift || true
units=("$@")
[ ${#units[@]} -gt 0 ] || units=(unit/acl unit/acl-v2)
suite=$HOME/.cache/redis-tests
copy=$HOME/.cache/redis-tests-firn

[ -x "$suite/runtest" ] || { echo "no prepared suite in $suite (see ../shared/redis-tests)" >&2; exit 2; }
[ -x "$firn" ] || { echo "no firn binary at $firn" >&2; exit 2; }
rm -rf "$copy"
cp -a "$suite" "$copy"
mkdir -p "$copy/src"
ln -sf /usr/bin/redis-cli "$copy/src/redis-cli"
ln -sf /usr/bin/redis-benchmark "$copy/src/redis-benchmark"
cat > "$copy/src/redis-server" <<EOF
#!/bin/bash
echo "firn-wrapper PID: \$\$"
export NO_COLOR=1
exec "$firn" "\$@"
EOF
chmod +x "$copy/src/redis-server"

args=()
for unit in "${units[@]}"; do args+=(--single "$unit"); done
tags="-needs:debug -needs:repl -needs:save -needs:pfdebug -needs:latency -needs:config-maxmemory -needs:local-process -slow"
cd "$copy"
TERM=dumb timeout -k 10 1800 ./runtest "${args[@]}" --clients 1 --timeout 600 --tags "$tags" </dev/null
