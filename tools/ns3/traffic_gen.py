#!/usr/bin/env python3
"""Poisson flow arrivals for rocefw-ns3 (docs/ns3.md "Workloads"), in HPCC's flow-file format.

Each host starts flows as a Poisson process whose rate makes its offered load LOAD x BANDWIDTH:
mean inter-arrival = mean flow size x 8 / (LOAD x BANDWIDTH). A flow's size is drawn from the
CDF file (bytes, cumulative percent; linear between points), its destination uniformly among the
other hosts. Flows are written sorted by start time: "src dst priority dport size start_s".

usage: traffic_gen.py --cdf FILE --hosts N [--first-host 0] --load 0.3 --bandwidth 100G
                      --time-s 0.01 [--seed 1] [--priority 3] [--dport 100] -o FLOWS
"""
import argparse
import bisect
import random
import sys


def read_cdf(path):
    pts = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            s = line.split("#", 1)[0].split()
            if not s:
                continue
            if len(s) != 2:
                sys.exit(f"traffic_gen: {path}:{n}: expected 'bytes percent'")
            size, pct = float(s[0]), float(s[1])
            if pts and (size < pts[-1][0] or pct < pts[-1][1]):
                sys.exit(f"traffic_gen: {path}:{n}: the CDF must not decrease")
            pts.append((size, pct))
    if len(pts) < 2 or pts[-1][1] != 100:
        sys.exit(f"traffic_gen: {path}: needs two points or more, ending at 100 %")
    return pts


def cdf_mean(pts):
    return sum((pts[i][1] - pts[i - 1][1]) / 100 * (pts[i][0] + pts[i - 1][0]) / 2
               for i in range(1, len(pts)))


def cdf_draw(pts, rng):
    u = rng.uniform(0, 100)
    pcts = [p for _, p in pts]
    i = max(1, bisect.bisect_left(pcts, u))
    (s0, p0), (s1, p1) = pts[i - 1], pts[i]
    size = s0 if p1 == p0 else s0 + (s1 - s0) * (u - p0) / (p1 - p0)
    return max(1, int(round(size)))


def rate(s):
    units = {"G": 1e9, "M": 1e6, "K": 1e3}
    s = s.rstrip("bpsBPS/")
    return float(s[:-1]) * units[s[-1].upper()] if s[-1].upper() in units else float(s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cdf", required=True)
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("--first-host", type=int, default=0)
    ap.add_argument("--load", type=float, required=True)
    ap.add_argument("--bandwidth", default="100G")
    ap.add_argument("--time-s", type=float, required=True)
    ap.add_argument("--start-s", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--priority", type=int, default=3)
    ap.add_argument("--dport", type=int, default=100)
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    if a.hosts < 2 or not 0 < a.load <= 1 or a.time_s <= 0:
        sys.exit("traffic_gen: --hosts >= 2, 0 < --load <= 1, --time-s > 0")
    pts = read_cdf(a.cdf)
    rng = random.Random(a.seed)
    mean_gap = cdf_mean(pts) * 8 / (a.load * rate(a.bandwidth))
    flows = []
    for h in range(a.hosts):
        t = a.start_s + rng.expovariate(1 / mean_gap)
        while t < a.start_s + a.time_s:
            dst = rng.randrange(a.hosts - 1)
            dst += dst >= h
            flows.append((t, a.first_host + h, a.first_host + dst, cdf_draw(pts, rng)))
            t += rng.expovariate(1 / mean_gap)
    flows.sort()
    with open(a.out, "w") as f:
        f.write(f"{len(flows)}\n")
        for t, s, d, size in flows:
            f.write(f"{s} {d} {a.priority} {a.dport} {size} {t:.9f}\n")
    print(f"traffic_gen: {len(flows)} flows, mean size {cdf_mean(pts):.0f} B, "
          f"mean gap per host {mean_gap * 1e6:.2f} us", file=sys.stderr)


if __name__ == "__main__":
    main()
