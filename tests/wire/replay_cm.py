#!/usr/bin/env python3
"""rocefw-replay check's CM section against tshark on a real Linux rping capture: the MADs
counted per attribute and per exchange, and the exchange's service ID, QPNs and starting PSNs
as Wireshark reads them from the REQ and the REP.

usage: replay_cm.py ROCEFW_REPLAY PCAP
"""
import json
import subprocess
import sys

REPLAY, PCAP = sys.argv[1:3]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def tshark(fields, flt):
    out = subprocess.run(["tshark", "-r", PCAP, "-Y", flt, "-T", "fields"] +
                         sum((["-e", f] for f in fields), []),
                         capture_output=True, text=True, check=True).stdout
    return [line.split("\t") for line in out.splitlines() if line.strip()]


rep = json.loads(subprocess.run([REPLAY, "check", "--json", PCAP], capture_output=True,
                                text=True, check=True).stdout)
cm = rep.get("cm", {})
attrs = [int(r[0], 16) for r in tshark(["infiniband.mad.attributeid"],
                                         "infiniband.mad.mgmtclass == 0x07")]
names = {0x10: "REQ", 0x11: "MRA", 0x12: "REJ", 0x13: "REP", 0x14: "RTU", 0x15: "DREQ",
         0x16: "DREP"}
want = {}
for a in attrs:
    want[names[a]] = want.get(names[a], 0) + 1
check(cm.get("mads") == len(attrs), f"CM MADs: {cm.get('mads')} (tshark: {len(attrs)})")
check(cm.get("by_attribute") == want, f"per attribute {cm.get('by_attribute')} (tshark: {want})")
xs = cm.get("exchanges", [])
check(len(xs) == 1, f"one exchange ({len(xs)})")
if xs:
    x = xs[0]
    req = tshark(["infiniband.cm.req.serviceid", "infiniband.cm.req.localqpn",
                  "infiniband.cm.req.startpsn"], "infiniband.mad.attributeid == 0x0010")[0]
    rp = tshark(["infiniband.cm.rep.localqpn", "infiniband.cm.rep.startpsn"],
                "infiniband.mad.attributeid == 0x0013")[0]
    for key, t in (("service_id", req[0]), ("req_qpn", req[1]), ("req_start_psn", req[2]),
                   ("rep_qpn", rp[0]), ("rep_start_psn", rp[1])):
        check(x.get(key) == int(t, 16), f"{key} = {x.get(key)} (tshark: {t})")
    check(x.get("mads") == want, "the exchange holds every MAD")
if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
