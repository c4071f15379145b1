#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rocefw-cp forwarding into a link that never comes up (a memif server nobody connects to)
must still end on --idle-exit-ms, exit 0, and say that frames were left queued, instead of
waiting forever. Frames come from net_pcap (a generated capture of ECT(0) RoCEv2 frames).

usage: cp_linkdown.py ROCEFW_CP GEN_ECT_PCAP
"""
import os
import subprocess
import sys
import tempfile
import time

CP, GEN = sys.argv[1:3]
EAL = ["--no-huge", "-m", "512", "--no-pci", "--no-shconf", "--log-level=lib.eal:warning",
       "-l", "0"]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        inp, sock = os.path.join(tmp, "in.pcap"), os.path.join(tmp, "m.sock")
        subprocess.run([GEN, inp, "200", "1024"], check=True)
        t0 = time.monotonic()
        r = subprocess.run([CP] + EAL + [f"--vdev=net_pcap0,rx_pcap={inp},tx_pcap=/dev/null",
                                         f"--vdev=net_memif0,role=server,socket={sock},"
                                         "socket-abstract=no", "--", "--idle-exit-ms", "300",
                                         "--rate-gbps", "10", "--queue-kb", "4096",
                                         "--kmin-kb", "1000", "--kmax-kb", "2000"],
                           capture_output=True, text=True, timeout=90)
        took = time.monotonic() - t0
    fails = []
    if r.returncode != 0:
        fails.append(f"exit status {r.returncode}")
    if "port 1: frames still queued at exit" not in r.stderr:
        fails.append("no warning naming port 1's stranded frames")
    # 10 s link wait at start-up + 0.3 s idle + EAL start: well under a minute.
    if took > 60:
        fails.append(f"took {took:.0f} s")
    for f in fails:
        print("FAIL", f)
    if fails:
        print(r.stderr[-2000:])
        return 1
    print(f"ok   rocefw-cp ended by itself after {took:.1f} s and reported the stranded frames")
    return 0


if __name__ == "__main__":
    sys.exit(main())
