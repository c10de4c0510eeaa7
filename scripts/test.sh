#!/usr/bin/env bash
# Runs slotd's tests; make test and make check call it.
#
#   scripts/test.sh unit   the tests that need no Postgres: every package
#                          whose tests do not use internal/testkit/dbtest, without
#                          -race, with Go's test cache (make check)
#   scripts/test.sh all    every test once, on the Postgres of
#                          scripts/with-postgres.sh (make test):
#     1. every package but integration; those in RACE_PACKAGES (the engine,
#        the stores, the API, the server and MCP: where goroutines share
#        state) with -race, the others without;
#     2. integration without -race, but for the tests named in
#        integration/race.txt (its concurrency tests), which then run with
#        -race; the package's serial latency tests run before its parallel
#        ones and with no other package's tests beside them;
#     3. internal/testkit/dbtest/cmd/dbsweep: drops the run's databases, templates
#        included, and fails when a test left one behind.
# The fuzz targets' seed corpora run as ordinary tests; make fuzz fuzzes.
#
# GO (default go) is the go command; TESTFLAGS are added to every go test.
# The databases are named with SLOTD_TEST_DB_PREFIX; when it is unset, a
# prefix of this run's own is made, so that the sweep drops nothing of
# another run on a shared server.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
TESTFLAGS=${TESTFLAGS:-}
RACE_PACKAGES=(./internal/session/... ./internal/api/... ./internal/app/server ./internal/app/mcp)
mod=$($GO list -m)

# db_packages lists the packages whose tests use internal/testkit/dbtest.
db_packages() {
	$GO list -test -f '{{.ImportPath}}{{range .Deps}} {{.}}{{end}}' ./... |
		awk -v db="$mod/internal/testkit/dbtest" '{
			p = $1; sub(/(_test|\.test)$/, "", p)
			if (p == db) { print p; next }
			for (i = 2; i <= NF; i++) if ($i == db) { print p; break }
		}' | sort -u
}

case "${1:-}" in
unit)
	# shellcheck disable=SC2046
	exec $GO test $TESTFLAGS $($GO list ./... | grep -vxF -f <(db_packages; echo "$mod/integration"))
	;;
all)
	export SLOTD_TEST_DB_PREFIX=${SLOTD_TEST_DB_PREFIX:-slotd_test_$(printf '%04x' $((RANDOM % 65536)))$(printf '%04x' $((RANDOM % 65536)))_}
	race=$($GO list "${RACE_PACKAGES[@]}")
	rest=$($GO list ./... | grep -vxF -e "$mod/integration" | grep -vxF -f <(echo "$race"))
	racetests="^($(grep -v '^#' integration/race.txt | grep . | paste -sd'|'))\$"
	status=0
	step() {
		echo "== $*" >&2
		"$@" || status=1
	}
	# shellcheck disable=SC2086
	step $GO test $TESTFLAGS -count=1 -timeout 20m $rest
	# shellcheck disable=SC2086
	step $GO test $TESTFLAGS -race -count=1 -timeout 20m $race
	step $GO test $TESTFLAGS -count=1 -timeout 20m -skip "$racetests" ./integration/
	step $GO test $TESTFLAGS -race -count=1 -timeout 20m -run "$racetests" ./integration/
	step $GO run ./internal/testkit/dbtest/cmd/dbsweep
	exit $status
	;;
*)
	echo "usage: scripts/test.sh unit|all" >&2
	exit 2
	;;
esac
