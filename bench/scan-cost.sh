#!/usr/bin/env bash
# scan-cost.sh: what Options.VulnerabilityScan adds to the guard on the
# ~1 KB order body, the figures of docs/vulnerability-scan.md.
#
#   bench/scan-cost.sh instructions   # callgrind (needs valgrind); steady
#   bench/scan-cost.sh time [ROUNDS]  # fastest and median of ROUNDS (60)
#
# Instructions: each benchmark runs 2,000 and 4,000 iterations under
# callgrind (GOGC=off, one P, no async preemption), and the difference,
# divided by 2,000, is the cost of one request without setup.
# Time (needs taskset, from util-linux, and a second core): the four
# benchmarks run in turn as separate processes, ROUNDS
# times, pinned to one core; the fastest run is the least disturbed.
set -euo pipefail
cd "$(dirname "$0")"
export GOWORK=off # bench/ is outside the workspace (go.work)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=$tmp/bench.test
go test -c -o "$bin" .
benches=(check/scan=off check/scan=on middleware/scan=off middleware/scan=on)

# run LOG CMD...: CMD's output into LOG, shown and fatal if CMD fails.
run() {
	local log=$1
	shift
	if ! "$@" >"$log" 2>&1; then
		cat "$log" >&2
		exit 1
	fi
}

instructions() {
	command -v valgrind >/dev/null || {
		echo "$0: instructions needs valgrind" >&2
		exit 1
	}
	for b in "${benches[@]}"; do
		counts=()
		for n in 2000 4000; do
			run "$tmp/log" env GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind \
				--callgrind-out-file=/dev/null "$bin" -test.run '^$' -test.bench "ContractguardScan/via=$b\$" \
				-test.benchtime ${n}x
			c=$(awk '/Collected :/ {print $4}' "$tmp/log")
			[[ $c =~ ^[0-9]+$ ]] || {
				cat "$tmp/log" >&2
				exit 1
			}
			counts+=("$c")
		done
		echo "$b $(((counts[1] - counts[0]) / 2000)) instructions/op"
	done
}

timing() {
	: >"$tmp/times"
	for _ in $(seq "$1"); do
		for b in "${benches[@]}"; do
			run "$tmp/log" env GOMAXPROCS=1 taskset -c 1 "$bin" -test.run '^$' \
				-test.bench "ContractguardScan/via=$b\$" -test.benchtime 5000x
			awk -v b="$b" '/^Benchmark/ {print b, $3}' "$tmp/log" >>"$tmp/times"
		done
	done
	sort -k1,1 -k2,2n "$tmp/times" | awk '
		{ v[$1] = v[$1] " " $2; n[$1]++ }
		END { for (b in v) { split(substr(v[b], 2), x, " "); printf "%s fastest %d ns, median %d ns (%d runs)\n", b, x[1], x[int((n[b] + 1) / 2)], n[b] } }' | sort
}

case "${1:-}" in
instructions) instructions ;;
time) timing "${2:-60}" ;;
*)
	echo "usage: $0 instructions | time [ROUNDS]" >&2
	exit 2
	;;
esac
