#!/usr/bin/env python3
"""`rocefw-replay check --json` against tshark on the same capture.

usage: replay_vs_tshark.py REPLAY_EXE [--clean] [--expect N:REASON[:WARNING],...]
                           [--dir DIR --min N] CAPTURE...

For every capture: the JSON has the documented schema and fields; frame count and RoCEv2 frame
count equal tshark's; per-opcode counts equal tshark's. --clean also requires zero ICRC
failures, zero malformed frames and every ICRC checked. --expect lists, by frame number, the
reason (and optional warning) each malformed or flagged frame must be reported with, and no
others. --dir adds every *.pcap and *.pcapng in DIR and fails if fewer than --min are there.
Missing tshark is a failure, not a skip.
"""
import collections
import glob
import json
import os
import shutil
import subprocess
import sys

REQUIRED = ["schema", "frames", "roce", "icrc_ok", "icrc_bad", "malformed", "by_opcode",
            "flows", "ecn", "cnps", "aeth", "malformed_frames"]


def tshark_counts(tshark, path):
    base = [tshark, "-r", path, "--disable-protocol", "rpcordma"]
    frames = subprocess.run(base + ["-T", "fields", "-e", "frame.number"], check=True,
                            capture_output=True, text=True).stdout.split()
    ops = subprocess.run(base + ["-Y", "udp.dstport == 4791", "-T", "fields", "-e",
                                 "infiniband.bth.opcode", "-e", "frame.number"],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    by_op = collections.Counter()
    roce = 0
    for line in ops:
        roce += 1
        op = line.split("\t")[0]
        if op:
            by_op[int(op, 0)] += 1
    return len(frames), roce, by_op


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    replay = args.pop(0)
    clean = False
    expect = None
    files = []
    dirs = []
    min_files = 1
    while args:
        a = args.pop(0)
        if a == "--dir":
            dirs.append(args.pop(0))
        elif a == "--min":
            min_files = int(args.pop(0))
        elif a == "--clean":
            clean = True
        elif a == "--expect":
            expect = {}
            for item in args.pop(0).split(","):
                parts = item.split(":")
                expect[int(parts[0])] = (parts[1] if parts[1] != "-" else None,
                                         parts[2] if len(parts) > 2 else "")
        else:
            files.append(a)
    for d in dirs:
        found = sorted(glob.glob(os.path.join(d, "*.pcap")) +
                       glob.glob(os.path.join(d, "*.pcapng")))
        if len(found) < min_files:
            print(f"FAIL: {d} holds {len(found)} captures, expected at least {min_files}")
            return 1
        files += found
    tshark = shutil.which("tshark")
    if tshark is None:
        print("FAIL: tshark is not installed; this check needs it", file=sys.stderr)
        return 1
    names = {}
    for line in subprocess.run([replay, "opcodes"], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        val, name = line.split()[:2]
        names[name] = int(val, 0)

    fails = 0

    def fail(msg):
        nonlocal fails
        fails += 1
        print("FAIL", msg)

    for path in files:
        r = subprocess.run([replay, "check", "--json", path], capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"{path}: exit {r.returncode}: {r.stderr.strip()}")
            continue
        rep = json.loads(r.stdout)
        for k in REQUIRED:
            if k not in rep:
                fail(f"{path}: JSON lacks '{k}'")
        if rep.get("schema") != "rocefw.replay.check/1":
            fail(f"{path}: schema {rep.get('schema')!r}")
        frames, roce, by_op = tshark_counts(tshark, path)
        if rep["frames"] != frames:
            fail(f"{path}: frames {rep['frames']} vs tshark {frames}")
        if rep["roce"] != roce:
            fail(f"{path}: RoCEv2 frames {rep['roce']} vs tshark {roce}")
        ours = collections.Counter()
        for name, n in rep["by_opcode"].items():
            val = int(name[len("UNKNOWN_"):], 0) if name.startswith("UNKNOWN_") else names[name]
            ours[val] = n
        if ours != by_op:
            fail(f"{path}: by_opcode {dict(sorted(ours.items()))} vs tshark "
                 f"{dict(sorted(by_op.items()))}")
        if rep["icrc_ok"] + rep["icrc_bad"] + rep["icrc_unchecked"] != rep["roce"]:
            fail(f"{path}: ICRC counts do not add up to the RoCEv2 frames")
        if clean:
            for k in ("icrc_bad", "malformed", "icrc_unchecked"):
                if rep[k] != 0:
                    fail(f"{path}: {k} = {rep[k]}, expected 0 ({rep['malformed_frames'][:5]})")
            if rep["roce"] == 0:
                fail(f"{path}: no RoCEv2 frames at all")
        if expect is not None:
            got = {m["frame"]: (m["reason"], m["warnings"]) for m in rep["malformed_frames"]}
            if got != expect:
                fail(f"{path}: listed {got}\n      expected {expect}")
            nmal = sum(1 for r_, _ in expect.values() if r_)
            if rep["malformed"] != nmal:
                fail(f"{path}: malformed = {rep['malformed']}, expected {nmal}")
        print(f"{path}: {rep['frames']} frames, {rep['roce']} RoCEv2, ICRC ok "
              f"{rep['icrc_ok']} bad {rep['icrc_bad']}, malformed {rep['malformed']}, "
              f"{len(rep['flows'])} flows, {len(by_op)} opcodes match tshark")
    print(f"replay_vs_tshark: {len(files)} captures, {fails} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
