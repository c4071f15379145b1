#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rdma_cm connection churn (issue 20, docs/scale.md "rdma_cm churn") in one command: Debian's
# cmtime between two rocefw-run processes over net_memif (server on core 0, client on core 1),
# N connections asked for at once, each N RUNS times (default 3); for each, the median of every
# step's total and of connections per second = N / (sum of the steps: create id .. destroy, the
# whole life of N connections). The CM runs on each device's QP1 (docs/rdma-cm.md).
# usage: tools/bench/bench_cm_churn.sh [BUILD_DIR] [RUNS] [N ...]  (build 3 100 1000 4000)
set -eu
build=${1:-build}
runs=${2:-3}
shift 2 2>/dev/null || shift $#
sizes=${*:-100 1000 4000}
run="$build/tools/run/rocefw-run"
[ -x "$run" ] || { echo "bench_cm_churn: $run not built" >&2; exit 2; }
command -v cmtime >/dev/null || { echo "bench_cm_churn: cmtime not installed (rdmacm-utils)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"; pkill -f "cmtime -b 10.0.0.1 -p 747" 2>/dev/null || true' EXIT
eal="--no-huge -m 512 --no-pci --no-shconf --log-level=lib.eal:warning"
port=7470

one() { # N, run
	n=$1
	sock="$dir/memif.sock"
	rm -f "$sock"
	maxqp=$((n + 64))
	taskset -c 0 "$run" --max-qp $maxqp --eal "$eal --vdev=net_memif0,role=server,socket=$sock,socket-abstract=no" \
		--ip 10.0.0.1 -- cmtime -b 10.0.0.1 -p $port -c "$n" >"$dir/server.out" 2>&1 &
	spid=$!
	while ! grep -q "$sock" /proc/net/unix && kill -0 $spid 2>/dev/null; do sleep 0.05; done
	taskset -c 1 "$run" --max-qp $maxqp --eal "$eal --vdev=net_memif0,role=client,socket=$sock,socket-abstract=no" \
		--ip 10.0.0.2 -- cmtime -s 10.0.0.1 -p $port -c "$n" >"$dir/c.$n.$2.out" 2>&1 ||
		{ echo "bench_cm_churn: cmtime -c $n run $2 failed" >&2; cat "$dir/c.$n.$2.out" >&2; exit 1; }
	kill $spid 2>/dev/null || true
	wait $spid 2>/dev/null || true
	port=$((port + 1))
}

echo "machine: $(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $sizes; do
	i=1
	while [ "$i" -le "$runs" ]; do
		one "$n" "$i"
		i=$((i + 1))
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$dir" "$runs" $sizes <<'PY'
import re, statistics, sys
d, runs, sizes = sys.argv[1], int(sys.argv[2]), [int(x) for x in sys.argv[3:]]
steps = ["create id", "resolve addr", "resolve route", "create qp", "connect", "disconnect",
         "destroy"]
print("| connections at once | " + " | ".join(f"{s} (ms)" for s in steps) +
      " | all steps (ms) | connections/s |")
print("|---" * (len(steps) + 3) + "|")
for n in sizes:
    tot = {s: [] for s in steps}
    for i in range(1, runs + 1):
        out = open(f"{d}/c.{n}.{i}.out").read()
        for s in steps:
            tot[s].append(float(re.search(rf"^{s}\s*:\s+([\d.]+)", out, re.M).group(1)))
    sums = [sum(tot[s][i] for s in steps) for i in range(runs)]
    med = {s: statistics.median(v) for s, v in tot.items()}
    m = statistics.median(sums)
    print(f"| {n} | " + " | ".join(f"{med[s]:.2f}" for s in steps) +
          f" | {m:.1f} | {n / m * 1000:,.0f} |")
PY
