#!/usr/bin/env bash
# bench-fastpaths.sh: what each of slotd's hand-written fast paths saves,
# end to end. It builds slotd as shipped and once with each path switched
# off by its build tag, then runs `slotd bench` (in-process slotd, the
# shipped contracts) PAIRS times for each build, alternating the order
# within each round so that the machine's drift falls on both alike, and
# prints every run and, per path, the mean over pairs of
#   turns/s (off / on) and CPU per turn of the slotd side (off / on).
# A path pays when turning it off loses 3% of turns/s or costs 5% more CPU
# per turn.
#
# Usage: SLOTD_DATABASE_URL=postgres://... scripts/bench-fastpaths.sh
#   PAIRS (default 3), BENCH_ARGS (extra slotd bench flags), PATHS (the
#   build tags to measure).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${SLOTD_DATABASE_URL:?set SLOTD_DATABASE_URL to a Postgres server the bench may make databases on}"
PAIRS=${PAIRS:-3}
PATHS=${PATHS:-"slotd_nofastcodec slotd_nofastschema slotd_nologline"}
BENCH_ARGS=${BENCH_ARGS:-}
GO=${GO:-go}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

"$GO" build -o "$dir/on" ./cmd/slotd
for p in $PATHS; do "$GO" build -tags "$p" -o "$dir/$p" ./cmd/slotd; done

run() { # run BUILD ROUND: one slotd bench, one result line in $dir/runs
	local out
	# shellcheck disable=SC2086
	out=$("$dir/$1" bench -q --json $BENCH_ARGS | tail -n 1)
	echo "$out" | jq -r --arg b "$1" --arg r "$2" \
		'[$r, $b, .slotd_side.turns_per_s, .slotd_side.cpu_per_turn.bench_us, .ratio, .slotd_side.other_load, .slotd_side.errors] | @tsv' |
		tee -a "$dir/runs"
}

printf 'round\tbuild\tturns_per_s\tcpu_us_per_turn\tratio_slotd_direct\tother_load\terrors\n'
for ((i = 1; i <= PAIRS; i++)); do
	if ((i % 2)); then order="on $PATHS"; else order="$(echo "$PATHS" | tr ' ' '\n' | tac | tr '\n' ' ') on"; fi
	for b in $order; do run "$b" "$i"; done
done

echo
awk -F'\t' '
	$2 == "on" { tps[$1] = $3; cpu[$1] = $4; next }
	{ off[$2] = 1; otps[$2, $1] = $3; ocpu[$2, $1] = $4; rounds[$1] = 1 }
	END {
		for (b in off) {
			n = 0; st = 0; sc = 0
			for (r in rounds) if ((b, r) in otps && cpu[r] > 0) {
				n++; st += otps[b, r] / tps[r]; sc += ocpu[b, r] / cpu[r]
			}
			printf "%s off/on over %d pairs: turns/s %.3f, CPU per turn %.3f\n", b, n, st / n, sc / n
		}
	}' "$dir/runs"
