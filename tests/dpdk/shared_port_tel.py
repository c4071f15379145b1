#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rp_scope on a real DPDK host, read through DPDK's own telemetry client (issue 14).

Runs `rocefw-perf --loopback -q 2 --ce-mark-every 4` (CE marks -> CNPs -> rate cuts) once
with --cc-profile shared-port and once with unified, and while each moves traffic reads
/rocefw/qp/list and /rocefw/cc/state,QPN of A's two QPs with dpdk-telemetry.py (Debian's
dpdk-dev; not ours). shared-port: both QPs report rp_scope "port" and the same rate_kbps, below
the line rate (they hold one rate machine; each QP's snapshot is published on its own tick, so
a read may straddle a change: up to 8 reads, one must agree). unified: rp_scope "qp".

usage: shared_port_tel.py ROCEFW_PERF
"""
import json
import os
import shutil
import subprocess
import sys
import time

PERF = sys.argv[1]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def sock_dir():
    if os.getuid() == 0:
        return "/var/run/dpdk"
    return os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")


def telemetry(tool, prefix, cmds):
    """Each command's reply, as dpdk-telemetry.py prints it (one JSON object per line)."""
    r = subprocess.run([tool, "-f", prefix], input="".join(c + "\n" for c in cmds),
                       capture_output=True, text=True, timeout=20)
    out = []
    for line in r.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def states(tool, prefix):
    """(rp_scope, rate_kbps) of each QP of NIC 0, the requester side of the loopback."""
    rep = telemetry(tool, prefix, ["/rocefw/qp/list,0"])
    # null (the NIC not registered yet: a slow start on a loaded machine) reads as no QPs; the
    # caller reads again
    qpns = (rep[0].get("/rocefw/qp/list") if rep else None) or []
    if isinstance(qpns, dict):
        qpns = qpns.get("qpns") or []
    rows = telemetry(tool, prefix, [f"/rocefw/cc/state,0,{q}" for q in qpns])
    # null: the QP had no snapshot yet (a slow start) or was just gone; the caller reads again
    return [(r["/rocefw/cc/state"].get("rp_scope"), r["/rocefw/cc/state"].get("rate_kbps"))
            for r in rows if r.get("/rocefw/cc/state")]


def run_case(tool, profile):
    prefix = f"rfwsp{os.getpid()}{profile[:2]}"
    p = subprocess.Popen(
        [PERF, "--no-huge", "-m", "512", "--no-pci", "--no-shconf", f"--file-prefix={prefix}",
         "-l", "0", "--log-level=lib.eal:warning", "--", "write", "bw", "-s", "65536", "-q", "2",
         "--loopback", "-D", "6", "--ce-mark-every", "4", "--cc-profile", profile],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        path = os.path.join(sock_dir(), prefix, "dpdk_telemetry.v2")
        deadline = time.monotonic() + 15
        while not os.path.exists(path) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.5)  # CNPs have cut the rate by now
        # Each QP's snapshot is published on its own tick (snapshot_us): two reads may straddle
        # a rate change (the shared rate moves with every CNP and rate-increase timer, and the
        # two reads are milliseconds apart). Up to 16 reads within the 6 s run; shared-port
        # keeps the first where both QPs' snapshots agree, else the last of both QPs; unified
        # (rates of their own) the first of both QPs. On a loaded machine each read takes a
        # while: the run may be over before the last.
        st = []
        for _ in range(16):
            now = states(tool, prefix)
            if len(now) == 2:
                st = now
                if profile != "shared-port" or now[0][1] == now[1][1]:
                    break
        still = p.poll() is None
    finally:
        p.wait(timeout=30)
    check(still, f"{profile}: rocefw-perf still running through the reads")
    check(len(st) == 2, f"{profile}: /rocefw/cc/state of 2 QPs ({st})")
    return st


def main():
    tool = shutil.which("dpdk-telemetry.py")
    if tool is None:
        print("FAIL dpdk-telemetry.py missing (Debian dpdk-dev): this check cannot run")
        return 1
    st = run_case(tool, "shared-port")
    if len(st) == 2:
        (s0, r0), (s1, r1) = st
        check(s0 == "port" and s1 == "port", f"shared-port: rp_scope port for both ({s0}, {s1})")
        check(r0 == r1 and 0 < r0 < 100_000_000,
              f"shared-port: one rate for both QPs, cut below 100 Gb/s ({r0}, {r1} kb/s)")
    st = run_case(tool, "unified")
    if len(st) == 2:
        check(all(s == "qp" for s, _ in st), f"unified: rp_scope qp for both ({st})")
    print(f"{'FAILED' if failures else 'PASSED'}: {len(failures)} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
