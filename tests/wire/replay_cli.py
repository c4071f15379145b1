#!/usr/bin/env python3
"""rocefw-replay's command line: errors name the problem, exit codes are as documented,
link types and capture formats beyond plain Ethernet pcap are decoded.

usage: replay_cli.py REPLAY_EXE DATA_DIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

fails = 0


def check(cond, msg):
    global fails
    if not cond:
        fails += 1
        print("FAIL", msg)


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def write_pcap(path, linktype, frames, snaplen=65535, cut=None):
    """Classic microsecond pcap; frames as (bytes, wirelen). cut truncates the file."""
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype)
    for i, (data, wirelen) in enumerate(frames):
        out += struct.pack("<IIII", 1700000000, i, len(data), wirelen) + data
    if cut:
        out = out[:-cut]
    with open(path, "wb") as f:
        f.write(out)


def frames_of(pcap):
    """Ethernet frames from a classic little-endian pcap (the shipped vectors)."""
    with open(pcap, "rb") as f:
        raw = f.read()
    frames, off = [], 24
    while off < len(raw):
        _, _, caplen, _ = struct.unpack_from("<IIII", raw, off)
        frames.append(raw[off + 16: off + 16 + caplen])
        off += 16 + caplen
    return frames


def report(exe, path):
    r = run(exe, "check", "--json", path)
    check(r.returncode == 0, f"{path}: exit {r.returncode} {r.stderr}")
    return json.loads(r.stdout) if r.returncode == 0 else None


def main():
    exe, data = sys.argv[1], sys.argv[2]
    vectors = os.path.join(data, "icrc", "vectors.pcap")
    eth = frames_of(vectors)

    r = run(exe, "check", "/nonexistent/x.pcap")
    check(r.returncode == 1 and "cannot open '/nonexistent/x.pcap'" in r.stderr
          and "No such file" in r.stderr, f"missing file: {r.returncode} {r.stderr!r}")
    r = run(exe, "check", "--bogus", vectors)
    check(r.returncode == 2 and "'--bogus'" in r.stderr, f"unknown option: {r.stderr!r}")
    r = run(exe, "check", "--max-list", "lots", vectors)
    check(r.returncode == 2 and "--max-list" in r.stderr and "'lots'" in r.stderr,
          f"bad --max-list: {r.stderr!r}")
    r = run(exe, "check")
    check(r.returncode == 2 and "exactly one capture file" in r.stderr, f"no file: {r.stderr!r}")
    r = run(exe, "frobnicate")
    check(r.returncode == 2 and "'frobnicate'" in r.stderr, f"unknown command: {r.stderr!r}")
    r = run(exe)
    check(r.returncode == 2 and "usage" in r.stderr, "no arguments")
    r = run(exe, "--help")
    check(r.returncode == 0 and "check" in r.stdout and "--json" in r.stdout, "--help")
    r = run(exe, "--version")
    check(r.returncode == 0 and r.stdout.startswith("rocefw-replay "), "--version")

    with tempfile.TemporaryDirectory() as tmp:
        junk = os.path.join(tmp, "junk.pcap")
        with open(junk, "wb") as f:
            f.write(b"this is not a capture file at all" * 4)
        r = run(exe, "check", junk)
        check(r.returncode == 1 and "cannot read" in r.stderr, f"junk file: {r.stderr!r}")
        r = run(exe, "check", tmp)
        check(r.returncode == 1, f"directory: {r.returncode} {r.stderr!r}")

        # A capture cut in the middle of its last record: report, complain, exit 1.
        cut = os.path.join(tmp, "cut.pcap")
        write_pcap(cut, 1, [(f, len(f)) for f in eth], cut=10)
        r = run(exe, "check", "--json", cut)
        check(r.returncode == 1 and "read error" in r.stderr, f"cut file: {r.returncode}")
        check(r.stdout and json.loads(r.stdout)["frames"] == len(eth) - 1, "cut file: partial")

        # Linux cooked v1 (SLL): 16-byte header, protocol in bytes 14-15.
        sll = os.path.join(tmp, "sll.pcap")
        write_pcap(sll, 113, [(struct.pack(">HHH8sH", 0, 1, 6, b"\2\0\0\0\0\1\0\0",
                                           struct.unpack(">H", f[12:14])[0]) + f[14:],
                               len(f) + 2) for f in eth])
        rep = report(exe, sll)
        check(rep and rep["icrc_ok"] == 10 and rep["malformed"] == 0, f"SLL: {rep}")

        # Linux cooked v2 (SLL2): 20-byte header, protocol in bytes 0-1.
        sll2 = os.path.join(tmp, "sll2.pcap")
        write_pcap(sll2, 276, [(f[12:14] + b"\0" * 18 + f[14:], len(f) + 6) for f in eth])
        rep = report(exe, sll2)
        check(rep and rep["icrc_ok"] == 10 and rep["malformed"] == 0, f"SLL2: {rep}")

        # Raw IP (LINKTYPE_RAW), both versions in one file.
        raw = os.path.join(tmp, "raw.pcap")
        write_pcap(raw, 101, [(f[14:], len(f) - 14) for f in eth])
        rep = report(exe, raw)
        check(rep and rep["icrc_ok"] == 10 and rep["malformed"] == 0, f"raw: {rep}")

        # 802.1Q-tagged copies: same ICRCs (tags are outside it).
        vlan = os.path.join(tmp, "vlan.pcap")
        write_pcap(vlan, 1, [(f[:12] + b"\x81\x00\x60\x64" + f[12:], len(f) + 4) for f in eth])
        rep = report(exe, vlan)
        check(rep and rep["icrc_ok"] == 10 and rep["malformed"] == 0, f"VLAN: {rep}")

        # Snap length shorter than the frames: not malformed, ICRC unchecked, counted.
        snap = os.path.join(tmp, "snap.pcap")
        write_pcap(snap, 1, [(f[:74], len(f)) for f in eth], snaplen=74)
        rep, full = report(exe, snap), report(exe, vectors)
        ncut = sum(1 for f in eth if len(f) > 74)
        check(rep and rep["malformed"] == 0 and rep["icrc_unchecked"] == ncut
              and rep["icrc_ok"] == 10 - ncut and rep["snap_truncated"] == ncut
              and rep["roce"] == 10 and rep["by_opcode"] == full["by_opcode"],
              f"snaplen: {rep}")
        # Cut inside the IPv4 header: counted as cut, never as malformed.
        write_pcap(snap, 1, [(f[:30], len(f)) for f in eth], snaplen=30)
        rep = report(exe, snap)
        check(rep and rep["malformed"] == 0 and rep["snap_truncated"] == 10, f"snap 30: {rep}")

        # pcapng, when editcap (Wireshark) is there to convert: the same report.
        editcap = shutil.which("editcap")
        check(editcap is not None, "editcap missing (tools/install-deps.sh installs tshark)")
        if editcap:
            ng = os.path.join(tmp, "v.pcapng")
            subprocess.run([editcap, "-F", "pcapng", vectors, ng], check=True)
            a, b = report(exe, vectors), report(exe, ng)
            for k in ("frames", "roce", "icrc_ok", "by_opcode", "flows"):
                check(a and b and a[k] == b[k], f"pcapng differs in {k}")

        # Unsupported link type: clear message naming it.
        tr = os.path.join(tmp, "tr.pcap")
        write_pcap(tr, 6, [(eth[0], len(eth[0]))])
        r = run(exe, "check", tr)
        check(r.returncode == 1 and "link type 6" in r.stderr, f"linktype: {r.stderr!r}")

        # --max-list bounds the list, not the counts.
        mal = os.path.join(data, "icrc", "malformed.pcap")
        r = run(exe, "check", "--json", "--max-list", "3", mal)
        rep = json.loads(r.stdout)
        check(len(rep["malformed_frames"]) == 3 and rep["malformed"] == 8
              and rep["listed_truncated"], f"--max-list: {rep['malformed_frames']}")
        r = run(exe, "check", mal)
        check(r.returncode == 0 and "frame 6" in r.stdout and "padcnt_exceeds_payload" in r.stdout,
              "text report lists malformed frames")

    print(f"replay_cli: {fails} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
