#!/usr/bin/env bash
# The Debian package, end to end on this machine (scripts/test.sh runs it):
#
#  1. builds it (scripts/package_deb.sh) and installs it with dpkg -i;
#  2. checks what it installed: /usr/bin/firn, the unit, the commented
#     /etc/firn/firn.conf (a conffile), /etc/logrotate.d/firn, the firn
#     system user owning /var/lib/firn and /var/log/firn;
#  3. verifies the unit with systemd-analyze verify;
#  4. starts /usr/bin/firn the way the unit does (its ExecStart, as its
#     User and Group, in its WorkingDirectory, with its UMask and
#     LimitNOFILE; systemd is not PID 1 here), on a free port added to the
#     command line, and PINGs it with redis-cli; writes a key, CONFIG
#     REWRITEs /etc/firn/firn.conf (the unit's user may), rotates the log
#     with the installed logrotate rule, and shuts it down;
#  5. purges the package and checks that the purge removed the user, the
#     group and the directories.
#
# Whatever happens, the server it started is stopped and the package, the
# user and the directories are removed (the EXIT trap). It refuses to run
# when a firn package, user or /var/lib/firn that it did not create is
# there. Needs root: run as root, or it asks sudo for the steps after the
# build.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Left while the test's package may be installed; a later run finding it
# cleans up what a killed run left behind.
state=/var/tmp/firn-package-test.installed

fail() {
    echo "package_test.sh: FAILED: $*" >&2
    exit 1
}

if [ "${1:-}" != --installed ]; then
    started=$(date +%s)
    deb="$("$here/package_deb.sh" "" --fast)"
    [ -f "$deb" ] || fail "package_deb.sh made no package ($deb)"
    echo "package_test.sh: built $deb ($(du -h "$deb" | cut -f1)) in $(($(date +%s) - started)) s"
    if [ "$(id -u)" = 0 ]; then
        exec bash "$0" --installed "$deb"
    fi
    exec sudo bash "$0" --installed "$deb"
fi
deb="$2"
[ "$(id -u)" = 0 ] || fail "the install steps need root"
started=$(date +%s)

firn_installed() {
    dpkg-query -W -f='${Status}' firn 2>/dev/null | grep -q 'ok installed\|config-files'
}

server_pid=""
cleanup() {
    local status=$?
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$server_pid" 2>/dev/null || true
    fi
    if [ -e "$state" ]; then
        if firn_installed; then
            dpkg --purge firn >/dev/null 2>&1 || true
        fi
        # What a purge that failed, or never ran, left.
        getent passwd firn >/dev/null && userdel firn 2>/dev/null || true
        getent group firn >/dev/null && groupdel firn 2>/dev/null || true
        rm -rf /var/lib/firn /var/log/firn /etc/firn
        rm -f /etc/systemd/system/multi-user.target.wants/firn.service
        rm -f "$state"
    fi
    [ -n "${work:-}" ] && rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -e "$state" ]; then
    echo "package_test.sh: removing what an earlier run left" >&2
    firn_installed && dpkg --purge firn >/dev/null
    getent passwd firn >/dev/null && userdel firn
    getent group firn >/dev/null && groupdel firn
    rm -rf /var/lib/firn /var/log/firn /etc/firn
    rm -f "$state"
fi
if firn_installed || getent passwd firn >/dev/null || [ -e /var/lib/firn ]; then
    trap - EXIT
    fail "this machine already has a firn package, user or /var/lib/firn that this test did not install: it will not touch them"
fi
work="$(mktemp -d)"

# 1. Install.
touch "$state"
dpkg -i "$deb" >"$work/dpkg-install.log" 2>&1 || { cat "$work/dpkg-install.log" >&2; fail "dpkg -i"; }

# 2. What it installed.
unit=/usr/lib/systemd/system/firn.service
for path in /usr/bin/firn "$unit" /etc/firn/firn.conf /etc/logrotate.d/firn \
    /usr/share/doc/firn/copyright /usr/share/doc/firn/README.md; do
    [ -f "$path" ] || fail "the package did not install $path"
done
dpkg-query -W -f='${Conffiles}\n' firn | grep -q '/etc/firn/firn.conf' ||
    fail "/etc/firn/firn.conf is not a conffile"
dpkg-query -W -f='${Depends}\n' firn | grep -q 'libc6' || fail "no shared-library dependencies computed"
/usr/bin/firn --version | grep -q '^firn ' || fail "firn --version"
getent passwd firn >/dev/null || fail "no firn user"
[ "$(stat -c '%U:%G %a' /var/lib/firn)" = "firn:firn 750" ] ||
    fail "/var/lib/firn is $(stat -c '%U:%G %a' /var/lib/firn)"
[ "$(stat -c '%U:%G %a' /var/log/firn)" = "firn:adm 2750" ] ||
    fail "/var/log/firn is $(stat -c '%U:%G %a' /var/log/firn)"
[ "$(stat -c '%U:%G %a' /etc/firn/firn.conf)" = "firn:firn 640" ] ||
    fail "/etc/firn/firn.conf is $(stat -c '%U:%G %a' /etc/firn/firn.conf)"
grep -q '^dir /var/lib/firn$' /etc/firn/firn.conf || fail "firn.conf does not put the data in /var/lib/firn"
# Enabled (deb-systemd-helper links it even while systemd is not running).
wants=/etc/systemd/system/multi-user.target.wants/firn.service
[ -L "$wants" ] || fail "the unit is not enabled ($wants)"

# 3. The unit.
if ! systemd-analyze verify "$unit" >"$work/verify.log" 2>&1; then
    cat "$work/verify.log" >&2
    fail "systemd-analyze verify $unit"
fi
# Warnings about the unit itself fail too (not those about other units).
if grep -i 'firn.service' "$work/verify.log"; then
    fail "systemd-analyze verify warns about the unit"
fi

# 4. Start it as the unit would.
unit_value() {
    sed -n "s/^$1=//p" "$unit" | tail -n 1
}
exec_start="$(unit_value ExecStart)"
user="$(unit_value User)"
group="$(unit_value Group)"
workdir="$(unit_value WorkingDirectory)"
umask_value="$(unit_value UMask)"
nofile="$(unit_value LimitNOFILE)"
[ -n "$exec_start" ] && [ -n "$user" ] && [ -n "$group" ] && [ -n "$workdir" ] ||
    fail "the unit lacks ExecStart, User, Group or WorkingDirectory"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# shellcheck disable=SC2086 # ExecStart's words, as systemd splits them
(
    cd "$workdir"
    umask "${umask_value:-022}"
    # LimitNOFILE, or as near as this machine's hard limit lets root go
    # (a container may cap it below the unit's value).
    if [ -n "$nofile" ] && ! ulimit -n "$nofile" 2>/dev/null; then
        echo "package_test.sh: LimitNOFILE=$nofile above this machine's hard limit; using $(ulimit -Hn)" >&2
        ulimit -n "$(ulimit -Hn)"
    fi
    exec setpriv --reuid="$user" --regid="$group" --init-groups -- $exec_start --port "$port"
) >"$work/server.out" 2>&1 &
server_pid=$!
ready=""
for _ in $(seq 150); do
    if [ "$(redis-cli -p "$port" PING 2>/dev/null)" = PONG ]; then
        ready=yes
        break
    fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.2
done
if [ -z "$ready" ]; then
    cat "$work/server.out" /var/log/firn/firn.log >&2 2>/dev/null || true
    fail "firn started as the unit does did not answer PING on port $port"
fi
[ "$(ps -o user= -p "$server_pid" | tr -d ' ')" = "$user" ] || fail "firn does not run as $user"
[ "$(redis-cli -p "$port" SET package-test ok)" = OK ] || fail "SET"
[ "$(redis-cli -p "$port" GET package-test)" = ok ] || fail "GET"
[ "$(redis-cli -p "$port" CONFIG GET dir | tail -n 1)" = /var/lib/firn ] || fail "CONFIG GET dir"
[ "$(stat -c %U /var/lib/firn/db)" = "$user" ] || fail "/var/lib/firn/db is not $user's"
[ "$(redis-cli -p "$port" CONFIG REWRITE)" = OK ] || fail "CONFIG REWRITE of /etc/firn/firn.conf"
grep -q 'Ready to accept connections' /var/log/firn/firn.log || fail "no start-up lines in /var/log/firn/firn.log"

# The installed rotation rule: the old lines move to firn.log.1 and Firn
# goes on writing to the emptied firn.log (copytruncate).
logrotate --force --state "$work/logrotate.state" /etc/logrotate.d/firn ||
    fail "logrotate /etc/logrotate.d/firn"
grep -q 'Ready to accept connections' /var/log/firn/firn.log.1 || fail "the rotation kept no old log"
redis-cli -p "$port" SHUTDOWN >/dev/null 2>&1 || true
exit_status=0
wait "$server_pid" || exit_status=$?
server_pid=""
[ "$exit_status" = 0 ] || fail "firn exited with status $exit_status"
grep -q 'ready to exit' /var/log/firn/firn.log || fail "no log lines after the rotation"
if grep -q 'Ready to accept connections' /var/log/firn/firn.log; then
    fail "the rotated log still holds the old lines"
fi

# 5. Purge.
dpkg --purge firn >"$work/dpkg-purge.log" 2>&1 || { cat "$work/dpkg-purge.log" >&2; fail "dpkg --purge"; }
! firn_installed || fail "firn is still installed after the purge"
for path in /usr/bin/firn "$unit" "$wants" /etc/firn /var/lib/firn /var/log/firn /etc/logrotate.d/firn; do
    [ ! -e "$path" ] || fail "the purge left $path"
done
! getent passwd firn >/dev/null || fail "the purge left the firn user"
! getent group firn >/dev/null || fail "the purge left the firn group"
rm -f "$state"
echo "package_test.sh: installed, verified, served PING on $port as $user, rotated its log and purged in $(($(date +%s) - started)) s"
