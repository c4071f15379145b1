#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Two rocefw-perf builds compared at the same time (docs/scale.md "Telemetry and layout"): each
# run starts build A and build B together in loopback (both NICs of a build on one core), one
# per core, and swaps the cores every run, so whatever else the machine does weighs on both.
# On a shared VM where back-to-back runs of one build spread by tens of percent, this is what
# shows a 10 % effect. Prints the 64 B (or SIZE) message rate of each, in M/s, and the mean
# ratio B / A.
#
# usage: tools/bench/bench_perf_pair.sh PERF_A PERF_B [QPS] [SIZE] [SECONDS] [RUNS]
#        defaults: 1024 64 3 4; ROCEFW_* environment applies to both
set -u
if [ $# -lt 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
	echo "usage: $0 PERF_A PERF_B [QPS] [SIZE] [SECONDS] [RUNS] (two rocefw-perf binaries)" >&2
	exit 2
fi
a=$1 b=$2 q=${3:-1024} size=${4:-64} secs=${5:-3} runs=${6:-4}
eal=(--no-huge -m 1024 --no-pci --no-shconf --log-level=lib.eal:warning)
tmp=$(mktemp -d /tmp/bench_perf_pair.XXXX)
trap 'rm -rf "$tmp"' EXIT

# one build on one core: its message rate (M/s), or 0 if the run failed or was not verified
one() {
	"$1" "${eal[@]}" -l "$2" --file-prefix="pair$2_$$" -- write bw --loopback -s "$size" \
		-D "$secs" -q "$q" >"$3" 2>&1
	awk -v s="$size" '$1 == s && $NF == "yes" { print $5; found = 1 } END { if (!found) print 0 }' "$3"
}

printf "%-6s %-10s %-10s\n" run "A M/s" "B M/s"
ra=() rb=()
for i in $(seq "$runs"); do
	ca=$(((i + 1) % 2)) cb=$((i % 2))
	one "$a" "$ca" "$tmp/a.out" >"$tmp/a.rate" &
	one "$b" "$cb" "$tmp/b.out" >"$tmp/b.rate"
	wait
	ra+=("$(cat "$tmp/a.rate")") rb+=("$(cat "$tmp/b.rate")")
	printf "%-6s %-10s %-10s (A on core %d)\n" "$i" "${ra[-1]}" "${rb[-1]}" "$ca"
done
python3 - "${ra[*]}" "${rb[*]}" <<'PY'
import sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
if min(a + b) <= 0:
    print("a run failed or was not verified"); sys.exit(1)
ma, mb = sum(a) / len(a), sum(b) / len(b)
print(f"mean A {ma:.3f}  mean B {mb:.3f}  B/A {mb / ma:.3f}")
PY
