#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Interposition cost, same machine, same run (docs/verbs.md "Figures"): WRITE bw at 64 KiB and
# WRITE lat at 64 B between two processes over net_memif, path MTU 1024, first with
# rocefw-perf's native two-process mode (server core 0, client core 1), then with Debian's
# perftest on both ends through rocefw-run (-d rocefw0 -x 0, thread progress). Prints each
# client's result row and the load average.
# usage: tools/run/bench_verbs_memif.sh [BUILD_DIR] [ITERATIONS]
set -eu
build=${1:-build}
iters=${2:-5000}
perf="$build/tools/perf/rocefw-perf"
run="$build/tools/run/rocefw-run"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
eal="--no-huge -m 512 --no-pci --no-shconf --log-level=lib.eal:warning"
memif="socket=$dir/memif.sock,socket-abstract=no"
port=18631

wait_sock() {
	while [ ! -S "$dir/memif.sock" ] && kill -0 "$1" 2>/dev/null; do sleep 0.05; done
}

native() { # args: test options
	rm -f "$dir/memif.sock"
	# shellcheck disable=SC2086
	"$perf" $eal -l 0 --vdev=net_memif0,role=server,$memif -- "$@" --ip 10.88.0.2 -p $port \
		>"$dir/server.out" 2>&1 &
	spid=$!
	wait_sock $spid
	# shellcheck disable=SC2086
	"$perf" $eal -l 1 --vdev=net_memif0,role=client,$memif -- "$@" --ip 10.88.0.1 -p $port \
		127.0.0.1 >"$dir/client.out" 2>&1 || true
	wait $spid || true
	grep -E '^ [0-9]' "$dir/client.out" | sed "s/^/rocefw-perf $1 $2: /"
	port=$((port + 1))
}

verbs() { # args: perftest tool and options
	rm -f "$dir/memif.sock"
	"$run" --eal "--vdev=net_memif0,role=server,$memif" --ip 10.0.0.1 -- \
		"$@" -d rocefw0 -x 0 -p $port >"$dir/server.out" 2>&1 &
	spid=$!
	wait_sock $spid
	# perftest's client connects once: wait until the server listens.
	while ! ss -ltn | grep -q ":$port " && kill -0 $spid 2>/dev/null; do sleep 0.05; done
	"$run" --eal "--vdev=net_memif0,role=client,$memif" --ip 10.0.0.2 -- \
		"$@" -d rocefw0 -x 0 -p $port 127.0.0.1 >"$dir/client.out" 2>&1 || true
	wait $spid || true
	grep -E '^ +[0-9]+ +[0-9]+ ' "$dir/client.out" | sed "s/^/rocefw-run $1: /"
	port=$((port + 1))
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "columns: bw: #bytes #iterations BW-peak BW-average[MB/s, or Gb/s for rocefw-perf] MsgRate;"
echo "         lat: #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9% [us]"
native write bw -s 65536 -n "$iters" --mtu 1024
verbs ib_write_bw -s 65536 -n "$iters" -m 1024
native write lat -s 64 -n "$iters" --mtu 1024
verbs ib_write_lat -s 64 -n "$iters" -m 1024
verbs ib_send_lat -s 64 -n "$iters" -m 1024
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
