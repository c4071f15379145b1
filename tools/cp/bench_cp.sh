#!/usr/bin/env bash
# Forwarding rate of rocefw-cp on a net_ring loop, beside the bound measured in the same run:
# the same binary and PMD with --io-fwd (rx -> tx, no queue, RED, rate or header access), and
# --io-fwd --touch (the same, reading each frame's IP header).
# Two net_ring vdevs each loop TX back to RX; --inject primes them (like testpmd --tx-first)
# and the frames circulate 0 -> 1 -> 0 for --duration-s. One lcore (-l CORE, default 1).
# usage: tools/cp/bench_cp.sh [BUILD_DIR] [SECONDS] [CORE] [REPS]
set -euo pipefail
build=${1:-build}
secs=${2:-3}
core=${3:-1}
reps=${4:-3}
cp="$build/tools/cp/rocefw-cp"
[ -x "$cp" ] || { echo "bench_cp: $cp not built (needs DPDK)" >&2; exit 1; }
eal=(--no-huge -m 512 --no-pci --no-shconf -l "$core" --log-level=lib.eal:warning
     --vdev=net_ring0 --vdev=net_ring1)
one() { # options...: prints Mpps summed over the ports
	"$cp" "${eal[@]}" -- --inject 256 --duration-s "$secs" --json "$@" 2>/dev/null |
		/usr/bin/env python3 -c '
import json, sys
r = json.load(sys.stdin)
print("%.2f" % (sum(p["forwarded"] for p in r["ports"]) / r["seconds"] / 1e6))'
}
run() { # label, options...: REPS runs, min / median / max (the VM is shared and noisy)
	local label=$1; shift
	local v=()
	for _ in $(seq "$reps"); do v+=("$(one "$@")"); done
	printf '%-52s %s\n' "$label" "$(printf '%s\n' "${v[@]}" | sort -g | /usr/bin/env python3 -c '
import sys
v = [float(x) for x in sys.stdin]
print("min %7.2f  median %7.2f  max %7.2f Mpps" % (v[0], v[len(v) // 2], v[-1]))')"
}
echo "rocefw-cp on net_ring, one lcore, ${reps} x ${secs} s per line, Mpps summed over both ports"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
for len in 64 1024 4200; do
	run "io-fwd bound, ${len} B" --io-fwd --inject-len "$len"
	run "io-fwd reading the IP header, ${len} B" --io-fwd --touch --inject-len "$len"
	# A queue big enough for every injected frame (256 x 4200 B), so none is tail-dropped.
	run "rocefw-cp, no bottleneck (1000 Gbit/s), ${len} B" --rate-gbps 1000 --queue-kb 4096 \
		--inject-len "$len"
	run "rocefw-cp, RED active (Kmin 0, Kmax 16 KiB), ${len} B" --rate-gbps 1000 --kmin-kb 0 \
		--kmax-kb 16 --queue-kb 4096 --inject-len "$len"
done
# A bottleneck below the loop's speed: the output rate must be the bottleneck's.
"$cp" "${eal[@]}" -- --inject 256 --inject-len 1024 --duration-s "$secs" --rate-gbps 10 \
	--queue-kb 2048 --kmin-kb 64 --kmax-kb 512 2>/dev/null | grep -E "^port"
