#!/usr/bin/env bash
# Packets per second of `rocefw-replay cc` beside two references on the same file and core:
#   tshark -r FILE -T fields -e frame.number   (Wireshark's reader and dissectors, the issue's
#                                              comparison; wall time, process start included)
#   rocefw-bench-pcap-loop FILE                (libpcap's plain read loop: pcap_next_ex only)
# rocefw-replay's figure is its own (JSON packets_per_second: the analysis pass, file reading
# included, process start and the line-rate pre-scan excluded) and its wall time.
#
# usage: tools/bench/bench_replay_cc.sh [BUILD_DIR [CAPTURE]]
#   Without CAPTURE, one is generated: 4 unified DCQCN flows, 200 ms, snap length 96 (how cc
#   captures are usually taken: headers only), about 1.6 M frames.
set -euo pipefail
build=${1:-build}
cap=${2:-}
replay=$build/tools/replay/rocefw-replay
loop=$build/tools/bench/rocefw-bench-pcap-loop
gen=$build/tests/ccreplay/gen_cc_capture
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$cap" ]; then
	cap=$tmp/bench.pcap
	"$gen" --out "$cap" --flows 4 --cross-gbps 30 --duration-ms 200 --snaplen 96 --ack-every 64
fi
frames=$("$loop" "$cap" | awk '{print $2}')
echo "capture: $cap, $frames frames, $(du -h "$cap" | cut -f1)"
pin="taskset -c 1"
command -v taskset >/dev/null || pin=""

best() { sort -g | tail -1; }
wall() { # command... -> seconds
	local a b
	a=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	b=$(date +%s.%N)
	echo "$b - $a" | bc -l
}

cc_pps=$(for i in 1 2 3; do $pin "$replay" cc "$cap" --json --no-progress --line-rate-gbps 100 |
	/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["packets_per_second"])'; done | best)
cc_wall=$(for i in 1 2 3; do wall $pin "$replay" cc "$cap" --no-progress --line-rate-gbps 100; done | sort -g | head -1)
loop_pps=$(for i in 1 2 3; do $pin "$loop" "$cap" | awk '{print $6}'; done | best)
ts_wall=$(wall $pin tshark -r "$cap" -T fields -e frame.number)
awk -v f="$frames" -v cc="$cc_pps" -v ccw="$cc_wall" -v lp="$loop_pps" -v tw="$ts_wall" 'BEGIN {
	printf "%-48s %12s\n", "reader", "Mpkt/s"
	printf "%-48s %12.2f\n", "rocefw-replay cc (analysis pass)", cc/1e6
	printf "%-48s %12.2f\n", "rocefw-replay cc (wall, whole process)", f/ccw/1e6
	printf "%-48s %12.2f\n", "libpcap plain loop (rocefw-bench-pcap-loop)", lp/1e6
	printf "%-48s %12.2f\n", "tshark -r FILE -T fields -e frame.number (wall)", f/tw/1e6
	printf "ratio cc / tshark: %.1fx   cc / libpcap loop: %.2fx\n", (f/ccw)/(f/tw), cc/lp
}'
