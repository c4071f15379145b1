#!/usr/bin/env bash
# Forwarding rate of rocefw-cp on a net_ring loop, beside the bound measured in the same run:
# the same binary and PMD with --io-fwd (rx -> tx, no queue, RED, rate or header access).
# Two net_ring vdevs each loop TX back to RX; --inject primes them (like testpmd --tx-first)
# and the frames circulate 0 -> 1 -> 0 for --duration-s. One lcore (-l CORE, default 1).
# usage: tools/cp/bench_cp.sh [BUILD_DIR] [SECONDS] [CORE]
set -euo pipefail
build=${1:-build}
secs=${2:-3}
core=${3:-1}
cp="$build/tools/cp/rocefw-cp"
[ -x "$cp" ] || { echo "bench_cp: $cp not built (needs DPDK)" >&2; exit 1; }
eal=(--no-huge -m 512 --no-pci --no-shconf -l "$core" --log-level=lib.eal:warning
     --vdev=net_ring0 --vdev=net_ring1)
run() { # label, options...
	local label=$1; shift
	local mpps
	mpps=$("$cp" "${eal[@]}" -- --inject 256 --duration-s "$secs" --json "$@" 2>/dev/null |
		/usr/bin/env python3 -c '
import json, sys
r = json.load(sys.stdin)
print("%.2f" % (sum(p["forwarded"] for p in r["ports"]) / r["seconds"] / 1e6))')
	printf '%-44s %8s Mpps\n' "$label" "$mpps"
}
echo "rocefw-cp on net_ring, one lcore, ${secs} s per line, Mpps summed over both ports"
for len in 64 1024 4200; do
	run "io-fwd bound, ${len} B" --io-fwd --inject-len "$len"
	run "rocefw-cp, no bottleneck (1000 Gbit/s), ${len} B" --rate-gbps 1000 --inject-len "$len"
	run "rocefw-cp, RED active (Kmin 0, Kmax 2 KiB), ${len} B" --rate-gbps 1000 --kmin-kb 0 \
		--kmax-kb 2 --queue-kb 512 --inject-len "$len"
done
# A bottleneck below the loop's speed: the output rate must be the bottleneck's.
"$cp" "${eal[@]}" -- --inject 256 --inject-len 1024 --duration-s "$secs" --rate-gbps 10 \
	--queue-kb 2048 --kmin-kb 64 --kmax-kb 512 2>/dev/null | grep -E "^port"
