#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# docs/scale.md (issue 20) in one command: every scale benchmark in turn, each printing its own
# table (about 10 minutes on a 2-vCPU machine; run it idle, the figures are wall-clock).
#   1. rocefw-bench-churn: connections/s beside 0, 1,024, 16,384, 65,536 live pairs; 100,000 MRs
#   2. rocefw-perf --loopback -q 1 / 32 / 1,024 / 16,384 at 64 B and 64 KiB (one run each)
#   3. tools/bench/bench_perf_qps.sh: the same in two processes over memif (3 runs, medians)
#   4. tools/bench/bench_lcores.sh: one and two lcores, straight and crossed
#   5. tools/bench/bench_cm_churn.sh: Debian's cmtime through rocefw's rdma_cm
# Every WRITE/SEND of every step is verified; a step that fails stops the script.
# usage: tools/bench/bench_scale.sh [BUILD_DIR]  (build)
set -eu
build=${1:-build}
here=$(dirname "$0")
eal="--no-huge -m 4096 --no-pci --no-shconf --log-level=lib.eal:warning -l 1"

echo "== 1. rocefw-bench-churn (docs/scale.md 'Figures')"
for live in 0 1024 16384 65536; do
	printf 'live %s: ' "$live"
	"$build/tools/bench/rocefw-bench-churn" --seconds 2 --live "$live" |
		grep -E "^  (connections|memory) " | tr -s ' ' | tr '\n' ';'
	echo
done
printf '100,000 MRs: '
"$build/tools/bench/rocefw-bench-churn" --seconds 2 --mrs 100000 | grep -E "^  (connections|MRs) "

echo "== 2. rocefw-perf --loopback (docs/scale.md 'Many busy QPs')"
for q in 1 32 1024 16384; do
	for s in 64 65536; do
		printf 'QPs %s, %s B: ' "$q" "$s"
		"$build/tools/perf/rocefw-perf" $eal -- write bw -s "$s" -D 3 -q "$q" --loopback \
			2>/dev/null | grep -E "^ *$s " | awk '{print $5 " M msg/s, " $4 " MB/s, verified " $NF}'
	done
done

echo "== 3. two processes over memif"
"$here/../bench/bench_perf_qps.sh" "$build" 3 3
echo "== 4. several lcores"
"$here/bench_lcores.sh" "$build" 3 3
echo "== 5. rdma_cm churn"
"$here/bench_cm_churn.sh" "$build" 3 100 1000 4000
