#!/usr/bin/python3
"""pcap_memcheck.py on synthetic captures: a 3-packet WRITE (First/Middle/Last, the Middle
sent twice as a retransmission would be) into rocefw's region and a 2-packet READ answered
from it; the matching memory passes, one flipped byte in either part fails naming it, an
empty capture fails (nothing compared). Standard library only (meson test pcap_memcheck)."""
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ME, PEER = bytes([192, 0, 2, 2]), bytes([192, 0, 2, 1])
MY_QP, PEER_QP, VA, MTU = 0x11, 0x22, 0x7f0000001000, 256


def frame(src, dst, op, qp, psn, rest, pad=0):
    bth = bytes([op, pad << 4, 0xff, 0xff, 0]) + qp.to_bytes(3, "big") + b"\0" + psn.to_bytes(3, "big")
    roce = bth + rest + b"\0" * pad + b"\xaa\xbb\xcc\xdd"  # ICRC not checked here
    udp = struct.pack(">HHHH", 49152, 4791, 8 + len(roce), 0) + roce
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, src, dst) + udp
    return b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip


def pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, d in enumerate(frames):
            f.write(struct.pack("<IIII", i, 0, len(d), len(d)) + d)


def main():
    tmp = tempfile.mkdtemp(prefix="memcheck_")
    mem = bytearray(os.urandom(4096))
    wdata = bytes(mem[0:700])           # WRITE of 700 bytes at VA
    rdata = bytes(mem[1024:1024 + 400])  # READ of 400 bytes at VA + 1024
    reth = lambda va, n: struct.pack(">QII", va, 0x1234, n)
    aeth = b"\x00\x00\x00\x01"
    frames = [
        frame(PEER, ME, 0x06, MY_QP, 100, reth(VA, 700) + wdata[:256]),
        frame(PEER, ME, 0x07, MY_QP, 101, wdata[256:512]),
        frame(PEER, ME, 0x07, MY_QP, 101, wdata[256:512]),
        frame(PEER, ME, 0x08, MY_QP, 102, wdata[512:700]),
        frame(PEER, ME, 0x0C, MY_QP, 103, reth(VA + 1024, 400)),
        frame(ME, PEER, 0x0D, PEER_QP, 103, aeth + rdata[:256]),
        frame(ME, PEER, 0x0F, PEER_QP, 104, aeth + rdata[256:400]),
    ]
    meta = {"regions": [{"qpn": MY_QP, "peer_qpn": PEER_QP, "vaddr": VA, "bytes": 4096}],
            "dump": os.path.join(tmp, "mem")}
    json.dump(meta, open(os.path.join(tmp, "j"), "w"))
    failures = []

    def run(frames_, memory, want_rc, want_text, what):
        pcap(os.path.join(tmp, "p"), frames_)
        open(meta["dump"], "wb").write(memory)
        p = subprocess.run([sys.executable, os.path.join(HERE, "pcap_memcheck.py"),
                            os.path.join(tmp, "p"), os.path.join(tmp, "j"), "192.0.2.2"],
                           capture_output=True, text=True)
        ok = p.returncode == want_rc and want_text in p.stdout
        print(("ok   " if ok else "FAIL ") + what + ": " + p.stdout.strip() + p.stderr.strip())
        if not ok:
            failures.append(what)

    run(frames, bytes(mem), 0, "1356 payload bytes in 6 packets", "matching memory")
    bad = bytearray(mem)
    bad[600] ^= 1
    run(frames, bytes(bad), 1, "first: WRITE PSN 0x000066", "a flipped byte under the WRITE's Last")
    bad = bytearray(mem)
    bad[1024 + 300] ^= 0x80
    run(frames, bytes(bad), 1, "first: READ response PSN 0x000068", "a flipped byte under the READ")
    run([], bytes(mem), 1, "0 payload bytes", "an empty capture")
    print("%d failed" % len(failures) if failures else "all checks passed")
    return 1 if failures else 0


sys.exit(main())
