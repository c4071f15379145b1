#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rocefw-perf between two processes over net_memif (docs/perf.md "Figures, two processes"):
# server on core 0, client on core 1, WRITE bw at 64 B, 4 KiB, 64 KiB and 1 MiB for SECONDS
# each, then WRITE and SEND latency at 64 B. Prints the client's perftest columns (with the
# same-run memcpy + ICRC bound measured on the client's core) and the load average.
# usage: tools/perf/bench_perf_memif.sh [BUILD_DIR] [SECONDS] [MTU]
set -eu
build=${1:-build}
secs=${2:-2}
mtu=${3:-4096}
perf="$build/tools/perf/rocefw-perf"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
eal="--no-huge -m 512 --no-pci --no-shconf --log-level=lib.eal:warning"
memif="socket=$dir/memif.sock,socket-abstract=no,bsize=8192"
port=18531

run() { # args: test options
	rm -f "$dir/memif.sock"
	# shellcheck disable=SC2086
	"$perf" $eal -l 0 --vdev=net_memif0,role=server,$memif -- "$@" --ip 10.88.0.2 -p $port \
		>"$dir/server.out" 2>&1 &
	spid=$!
	while [ ! -S "$dir/memif.sock" ] && kill -0 $spid 2>/dev/null; do sleep 0.05; done
	# shellcheck disable=SC2086
	"$perf" $eal -l 1 --vdev=net_memif0,role=client,$memif -- "$@" --ip 10.88.0.1 -p $port \
		--report_gbits --out_json "$dir/c.json" 127.0.0.1 >"$dir/client.out" 2>&1 || true
	wait $spid || true
	grep -E '^ [0-9]' "$dir/client.out" | sed "s/^/$1 $2 mtu $mtu: /"
	grep -E '^ [0-9]' "$dir/server.out" | sed "s/^/    server: /"
	port=$((port + 1))
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for s in 64 4096 65536 1048576; do
	run write bw -s $s -D "$secs" --mtu "$mtu"
done
run write lat -s 64 -n 20000 --mtu "$mtu"
run send lat -s 64 -n 20000 --mtu "$mtu"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
