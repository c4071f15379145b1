#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Issue 19's speed rows against the code the issue measured, on this host (docs/perf.md
# "(eighteenth)"). The issue's "now" column was measured on one machine and its targets are
# absolute, while these VMs' hosts differ by up to twice in memif's own rate; so this builds
# rocefw-perf at REV (default cf0c4a4: main when the issue was filed, before its first change)
# and runs it interleaved with BUILD's, round by round, the same rows the same way:
#   loopback 64 B WRITE (one core), Estats off and on (ROCEFW_ESTATS=1);
#   loopback 64 KiB WRITE;
#   memif 64 B and 64 KiB WRITE, server on core 0, client on core 1.
# Both sides are judged by what both versions print: the wall rate (msg_rate_mpps,
# bw_average_gbps), every byte verified. Printed: each median, this build's over the baseline's,
# and the ratio the issue asks for (its target over its "now"); Estats' cost in each build.
# usage: tools/perf/bench_baseline.sh [BUILD_DIR] [SECONDS] [ROUNDS] [REV]  (build 3 3 cf0c4a4)
# BASE_PERF=FILE: a baseline rocefw-perf already built (nothing is built then);
# BENCH_DIR=DIR keeps the runs' JSON (and the baseline's tree) there.
set -eu
build=${1:-build}
secs=${2:-3}
rounds=${3:-3}
rev=${4:-cf0c4a4}
perf="$build/tools/perf/rocefw-perf"
[ -x "$perf" ] || { echo "bench_baseline: $perf not built" >&2; exit 2; }
dir=${BENCH_DIR:-$(mktemp -d)}
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cleanup() {
	[ -d "$dir/base" ] && git -C "$repo" worktree remove --force "$dir/base" >/dev/null 2>&1
	[ -n "${BENCH_DIR:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
me=bench_baseline
eal="--no-huge -m 512 --no-pci --no-shconf --log-level=lib.eal:warning"
port=19631

# The baseline's rocefw-perf, built from REV in a worktree of its own (about two minutes).
base_build() {
	git -C "$repo" worktree add --detach "$dir/base" "$rev" >/dev/null 2>&1 ||
		{ echo "bench_baseline: no revision $rev in $repo" >&2; exit 2; }
	{ meson setup "$dir/base/build" "$dir/base" && ninja -C "$dir/base/build" \
		tools/perf/rocefw-perf; } >"$dir/base_build.log" 2>&1 ||
		{ echo "bench_baseline: building $rev failed ($dir/base_build.log)" >&2; exit 2; }
	echo "$dir/base/build/tools/perf/rocefw-perf"
}

. "$(dirname "$0")/bench_lib.sh"

base=${BASE_PERF:-}
[ -n "$base" ] || base=$(base_build) || exit 2
echo "baseline $rev: $base; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
i=1
while [ $i -le "$rounds" ]; do
	for v in base now; do
		bin=$perf
		[ $v = now ] || bin=$base
		bench_loop lb64-$v "$bin" 64
		bench_loop lb64e-$v "$bin" 64 ROCEFW_ESTATS=1
		bench_loop lb64k-$v "$bin" 65536
		bench_memif mf64-$v "$bin" 64
		bench_memif mf64k-$v "$bin" 65536
	done
	i=$((i + 1))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$dir" "$rounds" <<'PY'
import json, os, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
def col(name, key):
    out = []
    for i in range(1, rounds + 1):
        r = json.load(open(os.path.join(d, f"{name}.{i}.json")))["results"][0]
        if not r["verified"]:
            sys.exit(f"bench_baseline: {name} run {i} not verified")
        out.append(r[key])
    return out
med = statistics.median
def runs(v, f):
    return " / ".join(f.format(x) for x in v)
# (figure, run, key, the issue's "now", its target): the ratio it asks is target / now.
rows = [("loopback 64 B WRITE [M/s]", "lb64", "msg_rate_mpps", 3.99, 8, "{:.2f}"),
        ("loopback 64 KiB WRITE [Gb/s]", "lb64k", "bw_average_gbps", 31, None, "{:.1f}"),
        ("memif 64 B WRITE [M/s]", "mf64", "msg_rate_mpps", 5.5, 10, "{:.2f}"),
        ("memif 64 KiB WRITE [Gb/s]", "mf64k", "bw_average_gbps", 39, 60, "{:.1f}")]
print("| figure (wall rate, median) | baseline: runs | this build: runs | ratio "
      "| the issue asks |")
print("|---|---|---|---|---|")
for name, run, key, now, target, f in rows:
    b, n = col(run + "-base", key), col(run + "-now", key)
    ratio = med(n) / med(b) if med(b) > 0 else 0
    ask = f"{target / now:.2f} ({now} -> {target})" if target else "(a byte-work ratio)"
    met = " met" if target and ratio >= target / now else ""
    print(f"| {name} | {f.format(med(b))}: {runs(b, f)} | {f.format(med(n))}: {runs(n, f)} "
          f"| {ratio:.2f}{met} | {ask} |")
for v, label in (("base", "baseline"), ("now", "this build")):
    off, on = col(f"lb64-{v}", "msg_rate_mpps"), col(f"lb64e-{v}", "msg_rate_mpps")
    cost = [(a - b) / a * 100 for a, b in zip(off, on)]
    print(f"Estats on, 64 B loopback, {label}: cost {med(cost):.1f} % ({runs(cost, '{:.1f}')}; "
          f"each on run against the off run before it; the issue asks <= 5 %)")
PY
