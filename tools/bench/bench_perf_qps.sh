#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rocefw-perf in two processes over net_memif at many QPs (docs/scale.md "Many busy QPs"):
# WRITE bw at 64 B (message rate) and 64 KiB (goodput) for each QP count, each point REPS
# times, the median printed with the spread. Server on core 0, client on core 1, every byte
# verified (a point whose run is not verified is reported as FAILED).
#
# usage: tools/bench/bench_perf_qps.sh [BUILD_DIR] [SECONDS] [REPS] [QPS...]
#        defaults: build 3 3 1 32 1024 16384
set -u
build=${1:-build}
secs=${2:-3}
reps=${3:-3}
shift $(($# < 3 ? $# : 3))
qps=${*:-1 32 1024 16384}
perf=$build/tools/perf/rocefw-perf
eal=(--no-huge -m 512 --no-pci --no-shconf --log-level=lib.eal:warning)
tmp=$(mktemp -d /tmp/bench_perf_qps.XXXX)
trap 'rm -rf "$tmp"' EXIT

# one run: prints "mpps gbps verified" from the client's JSON, or "0 0 false"
run() {
	local q=$1 size=$2 port=$((20000 + RANDOM % 20000))
	local m="socket=$tmp/memif.sock,socket-abstract=no,bsize=8192"
	rm -f "$tmp"/memif.sock "$tmp"/c.json
	"$perf" "${eal[@]}" -l 0 --vdev=net_memif0,role=server,$m -- write bw -s "$size" \
		-D "$secs" -q "$q" --ip 10.9.0.2 -p $port >"$tmp"/s.out 2>&1 &
	local spid=$!
	for _ in $(seq 250); do [ -e "$tmp"/memif.sock ] && break; sleep 0.02; done
	"$perf" "${eal[@]}" -l 1 --vdev=net_memif0,role=client,$m -- write bw -s "$size" \
		-D "$secs" -q "$q" --ip 10.9.0.1 -p $port --out_json "$tmp"/c.json 127.0.0.1 \
		>"$tmp"/c.out 2>&1
	wait $spid
	python3 - "$tmp"/c.json <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))["results"][0]
    print(r["msg_rate_mpps"], r["bw_average_gbps"], str(r["verified"]).lower())
except Exception:
    print(0, 0, "false")
PY
	# a run that failed says why (on stderr, beside the table)
	if ! grep -q '"verified": true' "$tmp"/c.json 2>/dev/null; then
		tail -n 3 "$tmp"/c.out "$tmp"/s.out | sed 's/^/# /' >&2
	fi
}

printf "%-7s %-5s %-22s %-22s\n" QPs size "M msg/s median (runs)" "Gb/s median (runs)"
for q in $qps; do
	for size in 64 65536; do
		vals=()
		for _ in $(seq "$reps"); do
			vals+=("$(run "$q" "$size")")
		done
		python3 - "$q" "$size" "${vals[@]}" <<'PY'
import statistics, sys
q, size, runs = sys.argv[1], sys.argv[2], [v.split() for v in sys.argv[3:]]
ok = all(r[2] == "true" for r in runs)
m = [float(r[0]) for r in runs]
g = [float(r[1]) for r in runs]
fmt = lambda xs, f: f"{statistics.median(xs):{f}} ({', '.join(format(x, f) for x in xs)})"
print(f"{q:<7} {size:<5} {fmt(m, '.3f'):<22} {fmt(g, '.2f'):<22}" + ("" if ok else " FAILED"))
PY
	done
done
