#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Experiment 2 of docs/ns3.md in one command: HPCC's 320-host fat-tree, a workload at a load,
# every profile asked for, each with no window, HPCC's BDP window, or HPCC's rate-following
# window (its DCQCN+win); FCT files, --json results, one CSV and PNG of p50/p95/p99 slowdown
# per 10 % size bin. The published arrival window is 0.1 s: on a 2-vCPU machine a 10 ms run
# takes 5-12 minutes, a 0.1 s run about ten times that (docs/ns3.md "Experiment 2").
#
# usage: tools/ns3/bench_fattree.sh [-b BUILD] [-w ws|fb] [-l LOAD] [-t SECONDS] [-s SEED]
#                                   [-p "PROFILES"] [-m "MODES"] [-j JOBS] -o OUTDIR
#   -w   websearch (ws, default) or fb_hadoop (fb)      -l  load, default 0.3
#   -t   arrival window in s, default 0.1               -s  traffic seed, default 1
#   -p   profiles, default "hpcc-ns3 unified mlx5-cx5 paper"
#   -m   window modes: none, bdp (--window-kb of HPCC's maxBdp), var (bdp + --var-win);
#        default "none var"
#   -j   runs at a time, default 1 (each is single-threaded; leave a core for the machine)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=build wl=ws load=0.3 secs=0.1 seed=1 jobs=1 out=
profiles="hpcc-ns3 unified mlx5-cx5 paper" modes="none var"
while getopts b:w:l:t:s:p:m:j:o: o; do
	case $o in
	b) build=$OPTARG ;; w) wl=$OPTARG ;; l) load=$OPTARG ;; t) secs=$OPTARG ;;
	s) seed=$OPTARG ;; p) profiles=$OPTARG ;; m) modes=$OPTARG ;; j) jobs=$OPTARG ;;
	o) out=$OPTARG ;;
	*) echo "usage: see the head of $0" >&2; exit 2 ;;
	esac
done
[ -n "$out" ] || { echo "bench_fattree.sh: -o OUTDIR: required" >&2; exit 2; }
case $wl in ws) cdf=websearch ;; fb) cdf=fb_hadoop ;; *) echo "bench_fattree.sh: -w: ws or fb" >&2; exit 2 ;; esac
for m in $modes; do
	case $m in none | bdp | var) ;; *) echo "bench_fattree.sh: -m: '$m': none, bdp or var" >&2; exit 2 ;; esac
done
ns3=$build/tools/ns3/rocefw-ns3
[ -x "$ns3" ] || { echo "bench_fattree.sh: $ns3 not built (libns3-dev missing?)" >&2; exit 2; }
mkdir -p "$out"
python3 "$here/fattree.py" -o "$out/fat.txt"
python3 "$here/traffic_gen.py" --cdf "$here/cdf/$cdf.cdf" --hosts 320 --load "$load" \
	--bandwidth 100G --time-s "$secs" --seed "$seed" -o "$out/flows.txt"
# HPCC's third.cc maxBdp for this tree: (2 x 6 us + 2 x 80 ns + 4 x 20 ns) x 100 Gb/s / 8
bdp_kb=149.4140625
run_one() { # profile mode
	case $2 in none) w= ;; bdp) w="--window-kb $bdp_kb" ;; var) w="--window-kb $bdp_kb --var-win" ;; esac
	# shellcheck disable=SC2086
	/usr/bin/time -f "%U %S %e %M" -o "$out/$1-$2.time" "$ns3" --topology "$out/fat.txt" \
		--flows "$out/flows.txt" --fct-out "$out/fct-$1-$2.txt" --profile "$1" $w --json \
		> "$out/$1-$2.json"
	echo "$1 $2: $(grep -o '"flows_completed": [0-9]*' "$out/$1-$2.json"), CPU s $(cut -d' ' -f1 "$out/$1-$2.time")"
}
n=0
for p in $profiles; do
	for m in $modes; do
		run_one "$p" "$m" &
		n=$((n + 1))
		[ $((n % jobs)) -ne 0 ] || wait
	done
done
wait
args=
for p in $profiles; do for m in $modes; do args="$args $p+$m=$out/fct-$p-$m.txt"; done; done
# shellcheck disable=SC2086
python3 "$here/fct_analysis.py" $args --csv "$out/slowdown.csv" --png "$out/slowdown.png" \
	--bin-pct 10 --title "$wl $load, ${secs} s of arrivals, seed $seed"
echo "bench_fattree.sh: $out/slowdown.csv, $out/slowdown.png"
