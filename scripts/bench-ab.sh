#!/usr/bin/env bash
# bench-ab.sh: compares two slotd builds over the transports, end to end.
# It starts `slotd serve` from each build side by side (Postgres store,
# GOGC 400, a database of its own each on SLOTD_DATABASE_URL's server) and
# runs `slotd bench --transport T` against them in ROUNDS rounds that
# alternate which build goes first, so that the machine's drift falls on
# both alike. Each line is one run: round, build (A or B), transport,
# turns/s, slotd's CPU per turn in µs, and the share of the machine other
# work took (%); the means per build and transport follow.
#
# Usage: SLOTD_DATABASE_URL=postgres://... scripts/bench-ab.sh A_BIN B_BIN [grpc http mcp]
#   ROUNDS (default 4), DURATION (default 4s, each side of each run), RATE (turns/s
#   each side is paced at, as `slotd bench --rate`; default 0, as fast as it goes).
set -euo pipefail
: "${SLOTD_DATABASE_URL:?set SLOTD_DATABASE_URL to a Postgres server the bench may make databases on}"
[ $# -ge 2 ] || { echo "usage: $0 A_BIN B_BIN [TRANSPORT...]" >&2; exit 2; }
bins=("$1" "$2"); shift 2
transports=("$@"); [ ${#transports[@]} -gt 0 ] || transports=(grpc http mcp)
ROUNDS=${ROUNDS:-4}; DURATION=${DURATION:-4s}; RATE=${RATE:-0}
cd "$(dirname "$0")/.."
base=${SLOTD_DATABASE_URL%%\?*}; base=${base%/*}
query=; [[ $SLOTD_DATABASE_URL == *\?* ]] && query="?${SLOTD_DATABASE_URL#*\?}"
export PGOPTIONS='-c client_min_messages=warning'
dir=$(mktemp -d); pids=()
cleanup() {
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	for i in 0 1; do psql -q "$SLOTD_DATABASE_URL" -c "drop database if exists slotd_ab_$$_$i with (force)" || true; done
	rm -rf "$dir"
}
trap cleanup EXIT
# logged NAME FIELD LOG: FIELD of the log line whose msg is NAME, once logged.
logged() { jq -r --arg m "$1" "select(.msg == \$m) | .$2" "$3" 2>/dev/null | head -n 1; }
declare -a grpc http metrics dbs
for i in 0 1; do
	db="slotd_ab_$$_$i"; dbs[$i]="$base/$db$query"
	psql -q "$SLOTD_DATABASE_URL" -c "drop database if exists $db" -c "create database $db"
	# Port 0 everywhere: each slotd binds ports of its own and logs them.
	GOGC=400 "${bins[$i]}" serve --store postgres --database-url "${dbs[$i]}" --listen 127.0.0.1:0 \
		--http-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --console=false >"$dir/serve$i.log" 2>&1 &
	pids+=($!)
	log="$dir/serve$i.log"
	for _ in $(seq 100); do
		grpc[$i]=$(logged "slotd serving" addr "$log"); http[$i]=$(logged "slotd serving" http "$log")
		metrics[$i]=$(logged "metrics serving" addr "$log")
		[ -n "${metrics[$i]}" ] && [ -n "${grpc[$i]}" ] && curl -sf "http://${metrics[$i]}/readyz" >/dev/null && break
		sleep 0.2
	done
	curl -sf "http://${metrics[$i]}/readyz" >/dev/null || { echo "build $i did not serve:" >&2; cat "$log" >&2; exit 1; }
done
printf 'round\tbuild\ttransport\tturns_per_s\tslotd_cpu_us_per_turn\tother_load_pct\n'
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then order="0 1"; else order="1 0"; fi
	for i in $order; do for t in "${transports[@]}"; do
		"${bins[$i]}" bench -q --json --transport "$t" --addr "${grpc[$i]}" --http-addr "${http[$i]}" \
			--metrics-url "http://${metrics[$i]}/metrics" --database-url "${dbs[$i]}" --duration "$DURATION" --rate "$RATE" --rounds 2 | tail -n 1 |
			jq -r --arg r "$r" --arg b "$([ "$i" = 0 ] && echo A || echo B)" \
				'[$r, $b, .transport, (.slotd_side.turns_per_s | floor), .slotd_side.cpu_per_turn.slotd_us, (.slotd_side.other_load * 100 | floor)] | @tsv' |
			tee -a "$dir/runs"
	done; done
done
echo
awk -F'\t' '{ k = $2 "\t" $3; c[k] += $5; n[k]++ } END { for (k in c) printf "%s\tmean CPU per turn %.0f µs over %d runs\n", k, c[k] / n[k], n[k] }' "$dir/runs" | sort
