#!/usr/bin/env python3
"""Every rocefw-sim scenario's capture through the RC wire-invariant checker
(tests/wire/rc_invariants.py, tshark-decoded): the transport's packets judged by IBA rules
that no part of rocefw computes. Switch scenarios run shortened (--duration-ms 3) to keep the
captures small; two-host scenarios run as shipped, and in selective repeat where they allow.

usage: sim_wire.py SIM_EXE CHECKER SCENARIO_DIR
"""
import os
import subprocess
import sys
import tempfile

SIM, CHECKER, SCEN = sys.argv[1:4]
RUNS = [
    ("lossy-mix", []), ("lossy-mix", ["--transport", "sr"]),
    ("psn-wrap", []), ("psn-wrap", ["--transport", "sr"]),
    ("dead-link", []), ("sr-done-when", []),
    ("two-flows-unified", ["--duration-ms", "3"]),
    ("mixed-fleet", ["--duration-ms", "3"]),
]
fails = 0
with tempfile.TemporaryDirectory() as d:
    for name, extra in RUNS:
        cap = os.path.join(d, name + ".pcap")
        ini = os.path.join(SCEN, name + ".ini")
        p = subprocess.run([SIM, "--config", ini, *extra, "--pcap", cap], capture_output=True,
                           text=True)
        if p.returncode not in (0, 1) or not os.path.exists(cap):
            fails += 1
            print(f"FAIL {name} {extra}: sim exit {p.returncode}: {p.stderr.strip()}")
            continue
        r = subprocess.run([sys.executable, CHECKER, cap], capture_output=True, text=True)
        tag = "ok  " if r.returncode == 0 else "FAIL"
        fails += r.returncode != 0
        print(f"{tag} {name} {' '.join(extra)}: {r.stdout.strip().splitlines()[-1]}")
        if r.returncode:
            print(r.stdout + r.stderr)
        os.unlink(cap)
print(f"sim_wire: {len(RUNS)} captures, {fails} failing")
sys.exit(1 if fails else 0)
