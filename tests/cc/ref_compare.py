#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Drive rocefw-cc and two independent oracles with the same event scripts and compare the
trajectories event by event:

- `--profile hpcc-ns3` against ref_hpcc_ns3.py (a transliteration of HPCC's ns-3 rdma-hw.cc);
- `--profile paper` against ref_paper.py (the SIGCOMM'15 algorithm in real numbers).

Compared: the events that change the rate machine's rates (first CNP, cut, fast recovery,
additive and hyper increase) grouped by their time in ns, and RC and RT after each group. An
increase event that moves neither RC nor RT by more than the tolerance is not an event (ns-3
keeps firing its timer at the line rate and halves with truncation, rocefw stops at the max
rate); everything else must match: same times to the ns, same kinds, RC and RT within 1 kb/s.

Usage: ref_compare.py ROCEFW_CC [--table]   (--table prints the docs/cc.md table)
"""
import csv
import io
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_hpcc_ns3  # noqa: E402
import ref_paper  # noqa: E402

TOL_BPS = 1000  # 1 kb/s
KINDS = ("first", "cut", "fr", "ai", "hai")
US = 1000
MS = 1000 * US


def lcg(seed):
    """Deterministic pseudo-random numbers (numerical recipes LCG), no dependency on random."""
    while True:
        seed = (seed * 1664525 + 1013904223) % (1 << 32)
        yield seed


def s_one_cnp(prof, gbps):
    return [(0, "cnp", 0), (20 * MS, "tick", 0)]


def s_train(period_ns, count):
    def f(prof, gbps):
        ev = [(i * period_ns, "cnp", 0) for i in range(count)]
        return ev + [(count * period_ns + 10 * MS, "tick", 0)]
    return f


def s_bursts(prof, gbps):
    """Bursts closer than the 4 us check: triples 1.5 us apart, pairs 3.9 us apart."""
    ev, t = [], 0
    for i in range(30):
        ev += [(t, "cnp", 0), (t + 1500, "cnp", 0), (t + 3000, "cnp", 0)]
        ev += [(t + 20 * US, "cnp", 0), (t + 23900, "cnp", 0)]
        t += 37 * US + 123 * (i % 7)
    return ev + [(t + 10 * MS, "tick", 0)]


def inc_times(prof):
    """Increase event times after a CNP at 0 with no other CNP: the references' own timing
    (ns-3: cut at the first check 4 us + 1 ns, then the RP timer every 300 us; paper: cut at the
    CNP, timer every 55 us)."""
    if prof == "hpcc-ns3":
        return [4001 + k * 300 * US for k in range(1, 20)]
    return [k * 55 * US for k in range(1, 60)]


def s_hyper(prof, gbps):
    """A CNP while in hyper increase. ns-3 reaches hyper at its third timer event (F = 1). The
    paper needs both counters past F = 5: eight CNPs 2 us apart bring RT (clamped to RC at each
    cut) far below the line rate, then 10 MB sends at the line rate drive the byte counter while
    the 55 us timer runs; the CNP comes after the seventh send."""
    inc = inc_times(prof)
    if prof == "hpcc-ns3":
        t_cnp = inc[3] + 100 * US
        ev = [(0, "cnp", 0), (t_cnp, "cnp", 0)]
    else:
        step = 10000000 * 8 // gbps
        t_cnp = 20 * US + 7 * step + 10 * US
        ev = [(i * 2 * US, "cnp", 0) for i in range(8)]
        ev += [(20 * US + k * step, "tx", 10000000) for k in range(1, 8)] + [(t_cnp, "cnp", 0)]
    return sorted(ev) + [(t_cnp + 20 * MS, "tick", 0)]


def s_on_increase(prof, gbps):
    """A CNP exactly at the time of an increase event (the event runs first)."""
    inc = inc_times(prof)
    return [(0, "cnp", 0), (inc[2], "cnp", 0), (inc[2] + 20 * MS, "tick", 0)]


def s_line_rate(prof, gbps):
    """64 KiB sends back to back at the line rate for 20 ms, CNPs at random 0.2-2.2 ms gaps."""
    step = 65536 * 8 // gbps
    ev = [(t, "tx", 65536) for t in range(0, 20 * MS, step)]
    r, t = lcg(gbps), 100 * US
    while t < 20 * MS:
        ev.append((t, "cnp", 0))
        t += 200 * US + next(r) % (2 * MS)
    ev.sort(key=lambda e: (e[0], e[1] != "tx"))
    return ev + [(25 * MS, "tick", 0)]


SCRIPTS = [
    ("one CNP then quiet", s_one_cnp),
    ("CNP train 50 us x 40", s_train(50 * US, 40)),
    ("CNP train 8 us x 200", s_train(8 * US, 200)),
    ("CNP train 2 us x 500", s_train(2 * US, 500)),
    ("bursts under 4 us", s_bursts),
    ("CNP in hyper increase", s_hyper),
    ("CNP on an increase event", s_on_increase),
    ("line rate, sporadic CNPs", s_line_rate),
]


# What a script is for: the reference trajectory must contain these kinds, else the script
# no longer tests what its name says.
COVERS = {
    ("hpcc-ns3", "one CNP then quiet"): ("first", "cut", "fr", "ai", "hai"),
    ("paper", "one CNP then quiet"): ("first", "cut", "fr", "ai"),  # hyper needs bytes too
    ("hpcc-ns3", "CNP in hyper increase"): ("hai", "cut"),
    ("paper", "CNP in hyper increase"): ("hai", "cut"),
}


def run_rocefw(exe, prof, gbps, script, sets):
    text = "".join("%d,%s%s\n" % (t, e, ",%d" % a if e == "tx" else "") for t, e, a in script)
    args = [exe, "--profile", prof, "--line-rate-mbps", str(gbps * 1000)]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, input=text, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError("rocefw-cc failed: %s" % p.stderr)
    lines = [l for l in p.stdout.splitlines() if not l.startswith("#")]
    out = []
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        kinds = [k for k in row["actions"].split("+") if k in KINDS]
        if not kinds:
            continue
        rc = round(float(row["rc_mbps"]) * 1e6)
        rt = round(float(row["rt_mbps"]) * 1e6)
        t = int(row["t_ns"])
        # A timer row and a script-event row of the same ns are one group, as in group_ref.
        if out and out[-1][0] == t:
            out[-1] = (t, out[-1][1] + kinds, rc, rt)
        else:
            out.append((t, kinds, rc, rt))
    return out


def group_ref(log):
    """Oracle events grouped by time: (t, kinds, rc, rt) after the last event of that time."""
    out = []
    for t, kind, rc, rt, _alpha in log:
        if out and out[-1][0] == t:
            out[-1] = (t, out[-1][1] + [kind], rc, rt)
        else:
            out.append((t, [kind], rc, rt))
    return out


def drop_noops(groups, start_bps):
    """Drop increase-only groups that move neither RC nor RT by more than the tolerance."""
    out, rc0, rt0 = [], start_bps, start_bps
    for t, kinds, rc, rt in groups:
        only_inc = all(k in ("fr", "ai", "hai") for k in kinds)
        if only_inc and abs(rc - rc0) <= TOL_BPS and abs(rt - rt0) <= TOL_BPS:
            continue
        out.append((t, sorted(kinds), rc, rt))
        rc0, rt0 = rc, rt
    return out


def compare(a, b):
    """(events compared, max |dRC|/|dRT| in b/s, first mismatch or None)."""
    worst = 0.0
    for i, (x, y) in enumerate(zip(a, b)):
        if x[0] != y[0] or x[1] != y[1]:
            return i, worst, "event %d: rocefw %r vs reference %r" % (i, x, y)
        worst = max(worst, abs(x[2] - y[2]), abs(x[3] - y[3]))
    if len(a) != len(b):
        i = min(len(a), len(b))
        return i, worst, "event count: rocefw %d vs reference %d (next: %r)" % (
            len(a), len(b), (a[i:] or b[i:])[0])
    return len(a), worst, None


def main():
    exe = sys.argv[1]
    table = "--table" in sys.argv
    failures = []
    rows = []
    for prof in ("hpcc-ns3", "paper"):
        for gbps in (100, 25):
            line = gbps * 1000 * 1000 * 1000
            sets = []
            if prof == "hpcc-ns3":
                # run.py: ai = 5 * bw / 25, hai = 50 * bw / 25 (Mb/s); the profile holds 100G
                ai, hai = 5 * gbps // 25, 50 * gbps // 25
                sets = ["rp_ai_rate=%d" % ai, "rp_hai_rate=%d" % hai]
            for name, gen in SCRIPTS:
                script = gen(prof, gbps)
                mine = drop_noops(run_rocefw(exe, prof, gbps, script, sets), line)
                if prof == "hpcc-ns3":
                    log = ref_hpcc_ns3.run(script, line, ai * 10**6, hai * 10**6)
                else:
                    log = ref_paper.run(script, line)
                ref = drop_noops(group_ref(log), line)
                n, worst, err = compare(mine, ref)
                need = COVERS.get((prof, name), ())
                seen = {k for _, kinds, _, _ in ref for k in kinds}
                if err is None and not set(need) <= seen:
                    err = "the script does not reach %s" % "/".join(sorted(set(need) - seen))
                rows.append((prof, gbps, name, len(ref), n, worst, err))
                if err is None and worst > TOL_BPS:
                    err = "difference %.3f kb/s above 1 kb/s" % (worst / 1000)
                if err is not None:
                    failures.append("%s %d G '%s': %s" % (prof, gbps, name, err))
                    print("FAIL:", failures[-1])
    if table:
        print("| profile | line | script | events | max RC/RT difference |")
        print("|---|---|---|---|---|")
        for prof, gbps, name, nref, n, worst, err in rows:
            print("| %s | %d Gb/s | %s | %d | %s |" % (
                prof, gbps, name, nref,
                "%.3f kb/s" % (worst / 1000) if err is None else "MISMATCH at %d" % n))
    if failures:
        print("%d comparison(s) failed" % len(failures))
        sys.exit(1)
    print("rocefw-cc agrees with both references on %d runs" % len(rows))


if __name__ == "__main__":
    main()
