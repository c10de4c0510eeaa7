#!/usr/bin/env bash
# make test-ha: slotd on a two-node Patroni cluster (etcd as its DCS,
# synchronous mode) on loopback, through a crash of the leader (kill -9 of
# its postmaster) and a planned switchover, under load
# (integration/patroni_test.go, which runs only with SLOTD_TEST_PATRONI=1).
#
# Installs postgresql, patroni and etcd-server with apt-get when they are
# missing; fails and says why when they cannot be had. The test starts its
# own etcd and Patronis on free ports, with their data in a temporary
# directory, and stops them when it ends. Bounded: the whole run is killed
# after HA_TIMEOUT (240 s).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "test-ha: $*" >&2; }

missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v patroni >/dev/null 2>&1 || missing+=(patroni)
/usr/bin/python3 -c 'import etcd' >/dev/null 2>&1 || missing+=(python3-etcd)
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		log "FAILED: ${missing[*]} missing, and they cannot be installed here: apt-get install ${missing[*]}"
		exit 1
	fi
	log "installing ${missing[*]} with apt-get"
	# The packages' services are not started: the test runs its own.
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 update -qq >&2 || true
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 install -y -qq "${missing[@]}" >&2
fi

# The full output, slotd's warnings of every failed call included, goes to
# a file, kept when the test fails; the terminal gets the test's own lines.
export SLOTD_TEST_PATRONI=1
out=$(mktemp /tmp/slotd-test-ha.XXXXXX.log)

# The test's temporary directories go under $work, so that a run cut short
# by the timeout (whose cleanups never ran) leaves no etcd, Patroni or
# Postgres behind: each of them runs in a directory there.
work=$(mktemp -d /tmp/slotd-test-ha.XXXXXX)
chmod 755 "$work" # the postgres user reaches its directories through it
export TMPDIR=$work
cleanup() {
	local p cwd
	for p in /proc/[0-9]*; do
		cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
		case $cwd in "$work"/*) kill -9 "${p#/proc/}" 2>/dev/null || true ;; esac
	done
	rm -rf "$work"
}
trap cleanup EXIT
start=$(date +%s)
status=0
timeout --kill-after=10 "${HA_TIMEOUT:-240}" \
	go test -count=1 -timeout 220s -v -run '^TestPatroni' ./integration/ >"$out" 2>&1 || status=$?
grep -v '^time=.* level=WARN msg=' "$out" || true
if [ "$status" -eq 0 ]; then
	rm -f "$out"
	log "took $(($(date +%s) - start)) s (bound: ${HA_TIMEOUT:-240} s)"
else
	log "FAILED after $(($(date +%s) - start)) s (bound: ${HA_TIMEOUT:-240} s); the whole output: $out"
fi
exit "$status"
