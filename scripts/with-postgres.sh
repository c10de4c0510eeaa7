#!/usr/bin/env bash
# Finds or starts a Postgres server, exports its URL, and runs the command given.
#
#   1. SLOTD_TEST_DATABASE_URL, when set;
#   2. else a server on 127.0.0.1:5432 (user postgres, trust auth);
#   3. else (or when SLOTD_THROWAWAY_POSTGRES=1) a throwaway cluster started
#      from the installed Postgres binaries, installed with apt-get when
#      absent, on port SLOTD_TEST_PG_PORT (55432 when unset); it is stopped
#      when the command ends.
#
# The tests that run slotd behind a connection pooler start their own
# pgbouncer in front of that server; it is installed with apt-get when
# absent, as Postgres is; so is chromium, which the console's browser test
# drives.
#
# The command sees SLOTD_TEST_DATABASE_URL (the server's maintenance database,
# where tests create their own databases) and SLOTD_DATABASE_URL (a database
# named slotd, created when missing; the one slotd serve uses). When no
# Postgres can be had, it fails and says why: database tests are never
# skipped.
#
# The command gets SIGTERM, SIGINT and SIGHUP as if run directly: it replaces
# this script, or, when a throwaway cluster must be stopped after it, the
# script passes each signal on and waits for it to end.
set -euo pipefail

log() { echo "with-postgres: $*" >&2; }

# shown is a connection string without its password.
shown() { sed -E 's#(://[^:/@]+):[^@]*@#\1:***@#; s#\?.*##' <<<"$1"; }

can_connect() {
	local url=$1
	if command -v psql >/dev/null 2>&1; then
		psql "$url" -XtAc 'select 1' >/dev/null 2>&1
	else
		# Without psql, a TCP check of the default address is the best we have.
		(exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null
	fi
}

pg_bindir() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			echo "$d"
			return 0
		fi
	done
	command -v initdb >/dev/null 2>&1 && dirname "$(command -v initdb)" && return 0
	return 1
}

start_cluster() {
	local bindir
	if ! bindir=$(pg_bindir); then
		if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
			log "no Postgres binaries; installing them with apt-get"
			DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql postgresql-client >&2
		fi
		bindir=$(pg_bindir) || {
			log "FAILED: no Postgres is reachable and none could be installed or started."
			log "Set SLOTD_TEST_DATABASE_URL to a Postgres server, or install Postgres (apt-get install postgresql)."
			exit 1
		}
	fi
	PGTMP=$(mktemp -d /tmp/slotd-pg.XXXXXX)
	local port=${SLOTD_TEST_PG_PORT:-55432}
	local run=()
	if [ "$(id -u)" -eq 0 ]; then
		# initdb refuses to run as root: run the cluster as the postgres user.
		id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
		chown postgres "$PGTMP"
		run=(runuser -u postgres --)
	fi
	log "starting a throwaway cluster in $PGTMP on port $port"
	"${run[@]}" "$bindir/initdb" -D "$PGTMP/data" -U postgres -A trust >/dev/null
	"${run[@]}" "$bindir/pg_ctl" -D "$PGTMP/data" -l "$PGTMP/log" -w \
		-o "-p $port -k $PGTMP -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300" start >/dev/null
	PG_STOP=("${run[@]}" "$bindir/pg_ctl" -D "$PGTMP/data" -m fast stop)
	trap 'log "stopping the throwaway cluster"; "${PG_STOP[@]}" >/dev/null 2>&1 || true; rm -rf "$PGTMP"' EXIT
	SLOTD_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
}

# ensure_package PACKAGE BINARY WHO installs a Debian package when its
# binary is missing and it can be; WHO, the tests that need it, fail and say
# so when it cannot.
ensure_package() {
	if command -v "$2" >/dev/null 2>&1 || [ -x "/usr/sbin/$2" ] || [ -x "/usr/bin/$2" ]; then
		return 0
	fi
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
		log "no $1; installing it with apt-get"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >&2 ||
			log "could not install $1: $3 will fail and say so"
	else
		log "no $1, and it cannot be installed here (apt-get install $1): $3 will fail and say so"
	fi
}
ensure_package pgbouncer pgbouncer "the tests behind a pooler"
# The console's browser test drives Debian's chromium.
ensure_package chromium chromium "the console's browser test"

if [ -n "${SLOTD_TEST_DATABASE_URL:-}" ]; then
	if ! can_connect "$SLOTD_TEST_DATABASE_URL"; then
		log "FAILED: SLOTD_TEST_DATABASE_URL is set but Postgres does not answer there."
		exit 1
	fi
else
	SLOTD_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	if [ -n "${SLOTD_THROWAWAY_POSTGRES:-}" ] || ! can_connect "$SLOTD_TEST_DATABASE_URL"; then
		start_cluster
	fi
fi
export SLOTD_TEST_DATABASE_URL

if [ -z "${SLOTD_DATABASE_URL:-}" ]; then
	base=${SLOTD_TEST_DATABASE_URL%%\?*}
	base=${base%/*}
	if command -v psql >/dev/null 2>&1; then
		psql "$SLOTD_TEST_DATABASE_URL" -XtAc "select 1 from pg_database where datname = 'slotd'" | grep -q 1 ||
			psql "$SLOTD_TEST_DATABASE_URL" -Xqc "create database slotd" >/dev/null
	fi
	export SLOTD_DATABASE_URL="$base/slotd?sslmode=disable"
fi

log "Postgres at $(shown "$SLOTD_TEST_DATABASE_URL") (SLOTD_TEST_DATABASE_URL: tests make their own databases there)"
log "slotd's database: $(shown "$SLOTD_DATABASE_URL") (SLOTD_DATABASE_URL)"

if [ -z "${PG_STOP+x}" ]; then
	exec "$@"
fi
# A throwaway cluster is stopped on EXIT: run the command as a child, pass
# the signals that end it on, and wait until it has ended.
"$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null || true' TERM HUP
trap 'kill -INT "$child" 2>/dev/null || true' INT
status=0
while :; do
	wait "$child" && status=0 || status=$?
	kill -0 "$child" 2>/dev/null || break
done
exit "$status"
