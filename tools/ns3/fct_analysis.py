#!/usr/bin/env python3
"""FCT slowdown by flow size from HPCC-format FCT files (docs/ns3.md "FCT analysis").

slowdown = fct / standalone_fct (columns 7 and 8). Flows are sorted by size and cut into bins of
5 % of the flows each (the binning of HPCC's analysis/fct_analysis.py); for each bin the CSV has
the largest size in it and the p50, p95 and p99 slowdown. With several FCT files (one per
label), each gets its own columns and curve; --png draws p95 (and p50, p99 with --all) against
the bin's size with gnuplot.

usage: fct_analysis.py LABEL=FCT_FILE [LABEL=FCT_FILE ...] --csv OUT.csv [--png OUT.png]
                       [--bin-pct 5] [--all] [--title T]
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile


def read_fct(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            s = line.split()
            if not s:
                continue
            if len(s) != 8:
                sys.exit(f"fct_analysis: {path}:{n}: expected 8 columns (HPCC FCT format)")
            size, fct, alone = int(s[4]), int(s[6]), int(s[7])
            if alone <= 0:
                sys.exit(f"fct_analysis: {path}:{n}: standalone_fct must be positive")
            rows.append((size, fct / alone))
    return rows


def pct(sorted_vals, p):
    """Nearest-rank percentile."""
    k = max(0, math.ceil(p / 100 * len(sorted_vals)) - 1)
    return sorted_vals[k]


def bins(rows, bin_pct):
    rows = sorted(rows)
    n, out, nb = len(rows), [], int(round(100 / bin_pct))
    for b in range(nb):
        lo, hi = b * n // nb, (b + 1) * n // nb
        if hi <= lo:
            continue
        sd = sorted(r[1] for r in rows[lo:hi])
        out.append((rows[hi - 1][0], pct(sd, 50), pct(sd, 95), pct(sd, 99), hi - lo))
    return out


def plot(series, png, title, all_p):
    d = tempfile.mkdtemp(prefix="fct")
    cmds = [f"set terminal pngcairo size 900,560", f"set output '{png}'",
            f"set title '{title}'", "set logscale xy", "set xlabel 'flow size (bytes)'",
            "set ylabel 'FCT slowdown'", "set key top left", "set grid"]
    plots = []
    for label, b in series:
        p = os.path.join(d, label + ".dat")
        with open(p, "w") as f:
            for row in b:
                f.write(" ".join(str(x) for x in row) + "\n")
        plots.append(f"'{p}' using 1:3 with linespoints title '{label} p95'")
        if all_p:
            plots.append(f"'{p}' using 1:2 with lines dt 2 title '{label} p50'")
            plots.append(f"'{p}' using 1:4 with lines dt 3 title '{label} p99'")
    cmds.append("plot " + ", ".join(plots))
    r = subprocess.run(["gnuplot"], input="\n".join(cmds) + "\n", text=True,
                       capture_output=True)
    if r.returncode:
        sys.exit(f"fct_analysis: gnuplot: {r.stderr}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+", help="LABEL=FCT_FILE")
    ap.add_argument("--csv", required=True)
    ap.add_argument("--png")
    ap.add_argument("--bin-pct", type=float, default=5)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--title", default="FCT slowdown by flow size")
    a = ap.parse_args()
    series = []
    for spec in a.inputs:
        label, _, path = spec.partition("=")
        if not path:
            sys.exit(f"fct_analysis: '{spec}': expected LABEL=FCT_FILE")
        rows = read_fct(path)
        if not rows:
            sys.exit(f"fct_analysis: {path}: no flows")
        series.append((label, bins(rows, a.bin_pct)))
    with open(a.csv, "w") as f:
        f.write("label,bin,size_max_bytes,flows,p50,p95,p99\n")
        for label, b in series:
            for i, (size, p50, p95, p99, n) in enumerate(b):
                f.write(f"{label},{i},{size},{n},{p50:.3f},{p95:.3f},{p99:.3f}\n")
    if a.png:
        plot(series, a.png, a.title, a.all)


if __name__ == "__main__":
    main()
