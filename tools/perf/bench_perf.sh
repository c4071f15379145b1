#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The figures of docs/perf.md: rocefw-perf --loopback WRITE bandwidth at 64 B, 4 KiB, 64 KiB and
# 1 MiB with path MTU 4096 and 1024, and WRITE latency at 64 B, each beside the memcpy + ICRC
# bound of the same run. Prints a markdown table.
#   usage: tools/perf/bench_perf.sh [BUILD_DIR] [CORE] [SECONDS]   (defaults: build 1 2)
set -eu
B=${1:-build}
CORE=${2:-1}
SECS=${3:-2}
PERF="$B/tools/perf/rocefw-perf"
EAL="--no-huge -m 512 --no-pci --no-shconf -l $CORE --log-level=lib.eal:warning"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
i=0
for mtu in 4096 1024; do
	for s in 64 4096 65536 1048576; do
		i=$((i + 1))
		$PERF $EAL -- write bw -s $s -D "$SECS" --mtu $mtu --loopback \
			--out_json "$T/$i.json" >/dev/null 2>&1
	done
done
$PERF $EAL -- write lat -s 64 -n 200000 --loopback --out_json "$T/lat.json" >/dev/null 2>&1
/usr/bin/python3 - "$T" <<'PY'
import glob, json, os, sys
t = sys.argv[1]
print("| test | MTU | bytes | iterations | BW average [Gb/s] | MsgRate [Mpps] | bound [Gb/s] | ratio | verified |")
print("|---|---|---|---|---|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(t, "[0-9]*.json")), key=lambda p: int(os.path.basename(p)[:-5])):
    j = json.load(open(f))
    r = j["results"][0]
    print(f"| write bw | {j['mtu']} | {r['bytes']} | {r['iterations']} | {r['bw_average_gbps']:.2f} | "
          f"{r['msg_rate_mpps']:.3f} | {r['bound_gbps']:.1f} | {r['bound_ratio']:.3f} | {r['verified']} |")
j = json.load(open(os.path.join(t, "lat.json")))
r = j["results"][0]
print()
print("| test | bytes | iterations | t_min [us] | t_typical [us] | t_avg [us] | 99% [us] | 99.9% [us] | t_max [us] | verified |")
print("|---|---|---|---|---|---|---|---|---|---|")
print(f"| write lat | {r['bytes']} | {r['iterations']} | {r['t_min_us']:.2f} | {r['t_typical_us']:.2f} | "
      f"{r['t_avg_us']:.2f} | {r['p99_us']:.2f} | {r['p999_us']:.2f} | {r['t_max_us']:.1f} | {r['verified']} |")
PY
