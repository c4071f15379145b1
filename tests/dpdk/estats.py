#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Estats over DPDK telemetry (docs/estats.md): test_estats (two rfw_nic endpoints, N 64-byte
WRITEs one at a time) with Estats switched on only through the environment, then
/rocefw/estats read over the telemetry socket: schema, one row per stage for the QP with
count = N and p50 <= p99 <= p99.9 <= max; the trigger (threshold 1 us) left exactly one dump
of the QP with schema rocefw.estats.dump/1. Then Estats off (no rows, enabled 0) and a bad
tunable (the NIC refuses to start). Standard library only.

usage: estats.py TEST_ESTATS
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

from telemetry_client import Telemetry, eal

BIN = sys.argv[1]
ITERS = 200
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def start(prefix, env):
    p = subprocess.Popen([BIN] + eal(prefix) + ["--", str(ITERS)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env=env)
    exp = None
    while True:
        line = p.stdout.readline()
        if not line:
            p.wait()
            raise SystemExit(f"test_estats ended before READY (exit {p.returncode})")
        if line.startswith("{"):
            exp = json.loads(line)
        if line.strip() == "READY":
            return p, exp


def stop(p, what):
    p.stdin.close()
    check(p.wait(timeout=20) == 0, f"{what}: test_estats exits 0 (its own checks passed)")


def test_on(tmp):
    env = dict(os.environ, ROCEFW_ESTATS="1", ROCEFW_ESTATS_THRESHOLD_US="1",
               ROCEFW_ESTATS_DUMP_DIR=tmp)
    env.pop("ROCEFW_ESTATS_INTERVAL_MS", None)
    prefix = f"rfwes{os.getpid()}a"
    p, exp = start(prefix, env)
    try:
        t = Telemetry(prefix)
        check("/rocefw/estats" in t.query("/"), "/rocefw/estats registered")
        na, qa = exp["nic_a"], exp["qpn_a"]
        es = t.query(f"/rocefw/estats,{na}")
        print("  /rocefw/estats:", {k: v for k, v in es.items() if k != "rows"})
        check(es["schema"] == "rocefw.estats/1" and es["nic"] == na and es["enabled"] == 1,
              "schema rocefw.estats/1, enabled")
        check(es["interval_ns"] == 60 * 10**9, "default interval 60 s")
        check(es["window"] == "current", "no complete interval yet: the current window")
        # DPDK 22.11 telemetry has no arrays of objects: rows is keyed QPN/op/status/stage.
        check(all(k == f"{r['qpn']}/{r['op']}/{r['status']}/{r['stage']}"
                  for k, r in es["rows"].items()), "rows keyed QPN/op/status/stage")
        rows = [r for r in es["rows"].values() if r["qpn"] == qa]
        for r in rows:
            print(f"  {r['op']} {r['status']} {r['stage']}: n={r['count']} p50={r['p50_ns']} "
                  f"p99={r['p99_ns']} p99.9={r['p999_ns']} max={r['max_ns']} ns")
        stages = {r["stage"] for r in rows}
        check(stages == {"t6_t1", "t5_t1", "t2_t1", "t3_t2", "t4_t3", "t5_t4", "t6_t5"},
              "one row per stage for the requester QP")
        check(all(r["op"] == "write" and r["status"] == "success" and r["count"] == ITERS
                  for r in rows), f"every row: write, success, count = {ITERS}")
        check(all(r["p50_ns"] <= r["p99_ns"] <= r["p999_ns"] <= r["max_ns"] for r in rows),
              "p50 <= p99 <= p99.9 <= max")
        by = {r["stage"]: r for r in rows}
        if "t6_t1" in by and "t4_t3" in by:
            check(by["t6_t1"]["max_ns"] >= by["t4_t3"]["max_ns"] and by["t4_t3"]["p50_ns"] > 0,
                  "the round trip is inside the end-to-end latency and not zero")
        last = t.query(f"/rocefw/estats,{na},last")
        check(last["window"] == "last" and not last["rows"], "last window: empty")
        bad = t.query(f"/rocefw/estats,{na},yesterday")
        check(bad is None, "bad window parameter rejected")
    finally:
        stop(p, "Estats on")
    dumps = glob.glob(os.path.join(tmp, f"rocefw-estats-nic{na}-qp{qa}-*.json"))
    check(len(dumps) == 1, f"one trigger dump for the QP (rate-limited per interval): {dumps}")
    check(exp["dumps"] >= 0 and not glob.glob(os.path.join(tmp, "*.tmp")), "no partial dump")
    if dumps:
        d = json.load(open(dumps[0]))
        check(d["schema"] == "rocefw.estats.dump/1" and d["qpn"] == qa and d["nic"] == na,
              "dump: schema, nic, qpn")
        check(d["trigger"]["latency_ns"] > 1000 and d["trigger"]["threshold_ns"] == 1000 and
              d["trigger"]["stage"] in ("t6_t1", "t5_t1") and d["trigger"]["op"] == "write",
              "dump: the crossing (latency over the 1 us threshold)")
        check(all(k in d for k in ("qp", "psn", "inflight", "rate", "counters", "nic_counters"))
              and d["rate"]["cc"] is True and "rc_kbps" in d["rate"] and
              d["counters"]["tx_packets"] > 0, "dump: QP state, PSNs, in-flight, rate, counters")


def test_off_and_bad():
    env = dict(os.environ)
    for k in ("ROCEFW_ESTATS", "ROCEFW_ESTATS_THRESHOLD_US", "ROCEFW_ESTATS_DUMP_DIR",
              "ROCEFW_ESTATS_INTERVAL_MS"):
        env.pop(k, None)
    env["ROCEFW_SNAPSHOT_MAX_PER_S"] = "20000"
    prefix = f"rfwes{os.getpid()}b"
    p, exp = start(prefix, env)
    try:
        tel = Telemetry(prefix)
        es = tel.query(f"/rocefw/estats,{exp['nic_a']}")
        check(es["enabled"] == 0 and not es["rows"], "Estats off: enabled 0, no rows")
        nic = tel.query(f"/rocefw/nic,{exp['nic_a']}")
        check(nic.get("snapshot_max_per_s") == 20000 and nic.get("snapshot_us") == 1000,
              "ROCEFW_SNAPSHOT_MAX_PER_S=20000 reaches the NIC (/rocefw/nic)")
    finally:
        stop(p, "Estats off (the C API reports no rows)")
    env["ROCEFW_ESTATS"] = "1"
    for var, bad, tag in (("ROCEFW_ESTATS_INTERVAL_MS", "0", "c"),
                          ("ROCEFW_SNAPSHOT_MAX_PER_S", "999", "d")):
        r = subprocess.run([BIN] + eal(f"rfwes{os.getpid()}{tag}") + ["--", "1"],
                           env=dict(env, **{var: bad}), stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=30)
        check(r.returncode != 0 and var in r.stderr,
              f"{var}={bad}: refused, saying which variable")


with tempfile.TemporaryDirectory() as tmp:
    test_on(tmp)
test_off_and_bad()
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
