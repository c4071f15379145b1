#!/usr/bin/env python3
"""The CM MAD codec against Wireshark's InfiniBand dissector (an independent decoder).

1. A real Linux rping capture (tests/data/rxe/rxe-v4-rping.pcap: REQ, REP, RTU, DREQ, DREP of
   the kernel's CM): every field our decoder reads equals what tshark reads, and re-encoding
   what we decoded gives the same 256 bytes.
2. Our encoder (cm_mad_dump --gen: every message kind with a distinct value in each field):
   tshark reads back every value we put in.

3. With --capture PCAP (interop/run's rdma_cm cases): every CM MAD of that capture, both
   directions, decoded as tshark decodes it and re-encoded byte for byte; the connection's
   REQ, REP, RTU, DREQ and DREP are all there.

usage: cm_tshark.py CM_MAD_DUMP RPING_PCAP
       cm_tshark.py CM_MAD_DUMP --capture PCAP
"""
import ipaddress
import os
import shutil
import subprocess
import sys
import tempfile

DUMP, RPING = sys.argv[1:3]
# Wireshark 4.0's dissector reads the REQ's Primary Flow Label and Packet Rate off the IBA
# layout (it shows 0x003f8 / 0x3f for the kernel's 0x3f825 / 0, bytes 3f 82 50 00 at offset
# 88): those two are compared with the Linux kernel's definition of the layout instead
# (ibta_vol1_c12.h: CM_FIELD32_LOC(88, 20) and CM_FIELD_BLOC(91, 2, 6)), from the raw bytes.
WIRESHARK_OFF = {"infiniband.cm.req.prim_flowlabel", "infiniband.cm.req.prim_pktrate"}
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def ours(pcap):
    out = subprocess.run([DUMP, pcap], capture_output=True, text=True, check=True).stdout
    frames = {}
    for line in out.splitlines():
        kv = dict(f.split("=", 1) for f in line.split())
        frames[int(kv.pop("frame"))] = kv
    return frames


def value(v):
    """tshark's text of a field (0x.. hex, decimal, dotted IPv4) as a comparable value."""
    v = v.strip()
    try:
        return str(ipaddress.IPv4Address(v))
    except ValueError:
        pass
    if v in ("True", "False"):
        return int(v == "True")
    return int(v, 16) if v.lower().startswith("0x") else int(v)


def theirs(pcap, frame, fields):
    cmd = ["tshark", "-r", pcap, "-Y", f"frame.number == {frame}", "-T", "fields",
           "-E", "separator=\t"] + sum((["-e", f] for f in fields), [])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return dict(zip(fields, out.rstrip("\n").split("\t")))


def compare(pcap, label, want_attrs, exact=True):
    frames = ours(pcap)
    attrs = sorted(int(kv["infiniband.mad.attributeid"]) for kv in frames.values())
    found = attrs if exact else sorted(set(attrs))
    check(found == sorted(want_attrs), f"{label}: CM MADs found {[hex(a) for a in attrs]}")
    for n, kv in sorted(frames.items()):
        check(kv.pop("roundtrip", None) == "ok", f"{label} frame {n}: re-encoded byte for byte")
        t = theirs(pcap, n, list(kv) + ["infiniband.mad.data"])
        raw = bytes.fromhex(t.pop("infiniband.mad.data").replace(":", ""))
        for f in WIRESHARK_OFF & set(kv):
            word = int.from_bytes(raw[88:92], "big")
            want = word >> 12 if f.endswith("flowlabel") else raw[91] & 0x3f
            check(int(kv.pop(f)) == want, f"{label} frame {n}: {f} = {want} (kernel layout)")
        for f, v in kv.items():
            mine = v if "." in v else int(v)
            got = t.get(f, "")
            check(got != "" and value(got) == mine,
                  f"{label} frame {n}: {f} = {v} (tshark: {got!r})")


def main():
    if shutil.which("tshark") is None:
        print("FAIL: tshark is not installed (tools/install-deps.sh installs it)")
        sys.exit(1)
    if RPING == "--capture":
        compare(sys.argv[3], "capture", [0x10, 0x13, 0x14, 0x15, 0x16], exact=False)
        print(f"{len(failures)} check(s) failed" if failures else "CM MADs ok")
        sys.exit(1 if failures else 0)
    compare(RPING, "rxe rping", [0x10, 0x13, 0x14, 0x15, 0x16])
    tmp = tempfile.mkdtemp(prefix="rocefw-cm-")
    try:
        gen = os.path.join(tmp, "ours.pcap")
        subprocess.run([DUMP, "--gen", gen], check=True)
        compare(gen, "ours", [0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)


main()
