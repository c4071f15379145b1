#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Several lcores (issue 20, docs/scale.md "Several lcores") in one command: rocefw-bench-lcores
# with one NIC per port on one lcore, and two NICs per port on two lcores, QPs paired straight
# (each frame arrives on its owner's queue) and crossed (every data frame and ACK goes through
# the software dispatcher), 64 B and 64 KiB SENDs; each RUNS times (default 3), medians printed
# beside the ideal (N x the one-lcore median) as a markdown table. Every byte of every message
# is checked in every run; a run that fails fails the script.
# usage: tools/bench/bench_lcores.sh [BUILD_DIR] [SECONDS] [RUNS]  (build 3 3)
set -eu
build=${1:-build}
secs=${2:-3}
runs=${3:-3}
bench="$build/tools/bench/rocefw-bench-lcores"
[ -x "$bench" ] || { echo "bench_lcores: $bench not built" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
eal="--no-huge -m 1024 --no-pci --no-shconf --log-level=lib.eal:warning"

one() { # name, lcores, size, extra options...
	name=$1 lc=$2 size=$3
	shift 3
	"$bench" $eal -l "$lc" -- --qps 4 --size "$size" --seconds "$secs" \
		--json "$dir/$name.$i.json" "$@" >/dev/null 2>&1 ||
		{ echo "bench_lcores: $name run $i failed" >&2; exit 1; }
}

echo "machine: $(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
i=1
while [ "$i" -le "$runs" ]; do
	one s1 0 64
	one s2 0,1 64
	one x2 0,1 64 --cross
	one k1 0 65536
	one k2 0,1 65536
	one kx2 0,1 65536 --cross
	i=$((i + 1))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$dir" "$runs" <<'PY'
import json, statistics, sys
d, runs = sys.argv[1], int(sys.argv[2])
def med(name, key):
    return statistics.median(json.load(open(f"{d}/{name}.{i}.json"))[key]
                             for i in range(1, runs + 1))
def steered(name):
    r = json.load(open(f"{d}/{name}.1.json"))
    return r["ports"]["A"]["rx_steered"] + r["ports"]["B"]["rx_steered"]
print(f"| lcores | NICs per port | pairing | size | median | ideal (N x 1 lcore) | "
      f"of ideal | frames dispatched (run 1) |")
print("|---|---|---|---|---|---|---|---|")
for size, key, unit, scale, names in ((64, "msg_rate", "M msg/s", 1e6, ("s1", "s2", "x2")),
                                       (65536, "goodput_gbps", "Gb/s", 1, ("k1", "k2", "kx2"))):
    base = med(names[0], key) / scale
    for name, lc, pairing in zip(names, (1, 2, 2), ("-", "straight", "crossed")):
        v = med(name, key) / scale
        print(f"| {lc} | {lc} | {pairing} | {size} B | {v:.3f} {unit} | "
              f"{base * lc:.3f} {unit} | {v / (base * lc):.2f} | {steered(name)} |")
PY
