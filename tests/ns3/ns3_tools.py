#!/usr/bin/env python3
"""rocefw-ns3's workload generator and FCT analysis (docs/ns3.md "Workloads").

- traffic_gen.py: over many flows, the offered load is the asked load (within 5 %), every flow
  has a valid source and a different destination, starts are sorted and inside the window, and
  the sizes' empirical CDF matches the CDF file at each of its points (within 2 points);
- fct_analysis.py: on an FCT file with known slowdowns (sizes 1..100, slowdown = size) each
  5 % bin holds 5 flows and p50/p95/p99 are the nearest-rank values 3/5/5, 8/10/10, ...;
  bad input (7 columns) exits non-zero.

usage: ns3_tools.py TOOLS_NS3_DIR
"""
import os
import subprocess
import sys
import tempfile

T = sys.argv[1]
fails = 0


def check(cond, msg):
    global fails
    if not cond:
        fails += 1
        print("FAIL", msg)


def read_cdf(path):
    pts = []
    for line in open(path):
        s = line.split("#", 1)[0].split()
        if s:
            pts.append((float(s[0]), float(s[1])))
    return pts


def gen_check(d, cdf, load, hosts, time_s):
    out = os.path.join(d, "flows.txt")
    subprocess.run([sys.executable, os.path.join(T, "traffic_gen.py"), "--cdf", cdf,
                    "--hosts", str(hosts), "--first-host", "1", "--load", str(load),
                    "--bandwidth", "100G", "--time-s", str(time_s), "--seed", "7", "-o", out],
                   check=True, capture_output=True)
    lines = open(out).read().split("\n")
    n = int(lines[0])
    rows = [ln.split() for ln in lines[1:] if ln.strip()]
    check(len(rows) == n, f"{cdf}: count {n} but {len(rows)} flows")
    starts = [float(r[5]) for r in rows]
    check(starts == sorted(starts) and all(0 <= s < time_s for s in starts),
          f"{cdf}: starts not sorted or outside the window")
    check(all(1 <= int(r[0]) <= hosts and 1 <= int(r[1]) <= hosts and r[0] != r[1]
              for r in rows), f"{cdf}: bad src/dst")
    sizes = sorted(int(r[4]) for r in rows)
    offered = sum(sizes) * 8 / (hosts * 100e9 * time_s)
    check(abs(offered / load - 1) < 0.05, f"{cdf}: offered load {offered:.3f}, asked {load}")
    for size, pct in read_cdf(cdf):
        emp = 100 * sum(1 for s in sizes if s <= size) / len(sizes)
        check(abs(emp - pct) <= 2, f"{cdf}: P(size <= {size}) = {emp:.1f} %, file {pct} %")
    return n


def analysis_check(d):
    fct = os.path.join(d, "fct.txt")
    with open(fct, "w") as f:
        for i in range(1, 101):  # size i, standalone 1000, fct 1000 * i: slowdown i
            f.write(f"0b000101 0b000201 49169 100 {i} 0 {1000 * i} 1000\n")
    csv = os.path.join(d, "out.csv")
    p = subprocess.run([sys.executable, os.path.join(T, "fct_analysis.py"), f"x={fct}",
                        "--csv", csv], capture_output=True, text=True)
    check(p.returncode == 0, f"fct_analysis: {p.stderr}")
    rows = [ln.split(",") for ln in open(csv).read().split("\n")[1:] if ln]
    check(len(rows) == 20, f"fct_analysis: {len(rows)} bins, want 20")
    for b, r in enumerate(rows):
        want = [str(5 * b + 5), "5", f"{5 * b + 3}.000", f"{5 * b + 5}.000", f"{5 * b + 5}.000"]
        check(r[2:] == want, f"fct_analysis bin {b}: {r[2:]}, want {want}")
    with open(fct, "a") as f:
        f.write("0b000101 0b000201 49169 100 5 0 1000\n")
    p = subprocess.run([sys.executable, os.path.join(T, "fct_analysis.py"), f"x={fct}",
                        "--csv", csv], capture_output=True, text=True)
    check(p.returncode != 0 and "8 columns" in p.stderr, f"fct_analysis bad input: {p.stderr}")


def main():
    d = tempfile.mkdtemp(prefix="ns3tools")
    n = gen_check(d, os.path.join(T, "cdf", "fb_hadoop.cdf"), 0.3, 16, 0.5)
    check(n > 50000, f"fb_hadoop: only {n} flows")
    gen_check(d, os.path.join(T, "cdf", "websearch.cdf"), 0.5, 16, 1.0)
    analysis_check(d)
    print("ns3_tools:", "FAIL" if fails else "ok", f"({fails} failures)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
