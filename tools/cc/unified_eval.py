#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The issue-15 yardstick for a DCQCN profile across a region's RTTs, through rocefw-sim.

usage: unified_eval.py SIM_EXE [--profile P] [--cc-set name=value,...] [--seeds 1,2,3,4]
                       [--only A,E,B,1,C,D]

Runs, for each seed (two at a time), the scenarios docs/cc-experiments.md quotes with their
seed spread, and prints one line per run:
  A  2 us vs 2 ms base RTT, 100 ms (experiment 3)
  E  2 / 20 / 200 / 2000 us base RTTs, 100 ms (experiment 3b)
  B  two equal-RTT flows starting together, 64 KiB and 1 MiB WRITEs, 50 ms (experiment 1b)
  1  flow 1 joining flow 0 after 10 ms (experiment 1)
  C  64:1 incast of 20 x 64 KiB (experiment 2)
  D  all-one-profile fleets, 4 hosts x 1 and x 2 QPs (experiment 4)
Jain and goodput are over the second half; "conv" is rocefw-sim's convergence time. The
targets of issue 15 for `unified`: A Jain >= 0.95 and total >= 0.9 x 93.4 Gb/s; B Jain >= 0.98
at both sizes; C all senders done without timeout; D Jain >= 0.96. A benchmark, not a test.
"""
import argparse
import json
import subprocess
from concurrent.futures import ThreadPoolExecutor

COMMON = ["--json", "--rate-gbps", "100", "--size", "65536", "--mtu", "1024", "--queue-bytes",
          str(16 << 20), "--kmin-kb", "5", "--kmax-kb", "200", "--pmax", "0.01"]
LONG = ["--duration-ms", "100", "--depth", "512", "--max-unacked-psns", "65536"]
RUNS = {
    "A 2/2000": ["--flows", "2", "--rtt-us", "2,2000"] + LONG,
    "E 2..2000": ["--flows", "4", "--rtt-us", "2,20,200,2000"] + LONG,
    "B 64K": ["--flows", "2", "--duration-ms", "50"],
    "B 1M": ["--flows", "2", "--duration-ms", "50", "--size", "1048576"],
    "1 join": ["--flows", "2", "--duration-ms", "50", "--start-gap-us", "10000", "--depth",
               "16", "--rtt-us", "10"],
    "C inc64": ["--incast", "64", "--messages", "20", "--depth", "4", "--rtt-us", "10"],
    "D 4x1": ["--flows", "4", "--qps", "1", "--duration-ms", "50", "--depth", "16",
              "--rtt-us", "10"],
    "D 4x2": ["--flows", "8", "--qps", "2", "--duration-ms", "50", "--depth", "16",
              "--rtt-us", "10"],
}


def run(a, name, seed):
    args = [a.sim] + COMMON + ["--profile", a.profile, "--seed", str(seed)] + RUNS[name]
    if a.cc_set:
        args += ["--cc-set", a.cc_set]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        return "%s s%d: rocefw-sim exit %d: %s" % (name, seed, p.returncode, p.stderr.strip())
    o = json.loads(p.stdout)
    f = o["flows"]
    if name.startswith("C"):
        ct = [x["completion_time_us"] or 0 for x in f]
        return "%s s%d: done %d/%d, last %.0f us, timeouts %d, drops %d" % (
            name, seed, sum(1 for c in ct if c), len(f), max(ct), o["timeouts"],
            o["network"]["queue_drops"])
    tot = sum(x["goodput_second_half_gbps"] for x in f)
    return "%s s%d: conv %s Jain %.4f total %.1f Gb/s queue mean/p99 %.0f/%.0f KB | %s" % (
        name, seed, o.get("convergence_time_ms"), o["jain_index"], tot, o["queue_mean_kb"],
        o["queue_p99_kb"], " ".join("%.1f" % x["goodput_second_half_gbps"] for x in f[:4]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sim")
    ap.add_argument("--profile", default="unified")
    ap.add_argument("--cc-set", default="")
    ap.add_argument("--seeds", default="1,2,3,4")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    only = [x for x in a.only.split(",") if x]
    keys = [(n, int(s)) for n in RUNS for s in a.seeds.split(",")
            if not only or n.split()[0] in only]
    with ThreadPoolExecutor(2) as ex:
        for line in ex.map(lambda k: run(a, *k), keys):
            print(line)


if __name__ == "__main__":
    main()
