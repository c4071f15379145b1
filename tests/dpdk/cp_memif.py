#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""4096-byte path MTU frames over memif between two processes: rocefw-cp A reads a capture of
2000 RoCEv2 RDMA WRITE ONLY frames with 4096-byte payloads (IPv4 and IPv6, up to 4190-byte
frames) from net_pcap and forwards them to a memif server port; rocefw-cp B, the memif client,
forwards them to a net_pcap file. Checks with rocefw-replay that every frame arrived, byte
counts equal, every ICRC valid: memif with bsize=8192 carries them whole although it reports
a 1518-byte maximum frame. A on core 0, B on core 1 (memif both on one core crawls).

usage: cp_memif.py ROCEFW_CP ROCEFW_REPLAY GEN_ECT_PCAP
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

CP, REPLAY, GEN = sys.argv[1:4]
EAL = ["--no-huge", "-m", "512", "--no-pci", "--no-shconf", "--log-level=lib.eal:warning"]
OPTS = ["--rate-gbps", "1000", "--queue-kb", "16384", "--kmin-kb", "8000", "--kmax-kb",
        "16000", "--json"]
N = 2000
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def replay(path):
    return json.loads(subprocess.run([REPLAY, "check", "--json", path], capture_output=True,
                                     text=True, check=True).stdout)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = os.path.join(tmp, "in.pcap"), os.path.join(tmp, "out.pcap")
        empty, sock = os.path.join(tmp, "empty.pcap"), os.path.join(tmp, "m.sock")
        subprocess.run([GEN, inp, str(N), "4096"], check=True)
        with open(empty, "wb") as f:  # a pcap header and no frames: B's pcap port RX
            f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        memif = f"socket={sock},socket-abstract=no,bsize=8192"
        a = subprocess.Popen([CP] + EAL + ["-l", "0", f"--vdev=net_pcap0,rx_pcap={inp},"
                                           "tx_pcap=/dev/null",
                                           f"--vdev=net_memif0,role=server,{memif}", "--",
                                           "--idle-exit-ms", "1000"] + OPTS,
                             stdout=subprocess.PIPE, text=True)
        # Start the client once the server's socket exists (EAL start-up without hugepages
        # touches 512 MB and can take seconds on a loaded machine). The server still refuses a
        # client until its port is started ("ID not found"); rfw_port_link_wait restarts a
        # memif port whose link stays down, so the client then connects again.
        deadline = time.monotonic() + 30
        while not os.path.exists(sock) and a.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if not os.path.exists(sock):
            a.kill()
            print("FAIL rocefw-cp A never created its memif socket", sock)
            return 1
        b = subprocess.Popen([CP] + EAL + ["-l", "1", f"--vdev=net_memif0,role=client,{memif}",
                                           f"--vdev=net_pcap0,rx_pcap={empty},tx_pcap={out}",
                                           "--", "--idle-exit-ms", "2500"] + OPTS,
                             stdout=subprocess.PIPE, text=True)
        try:
            ra = json.loads(a.communicate(timeout=60)[0])
            rb = json.loads(b.communicate(timeout=60)[0])
        finally:
            for p in (a, b):
                if p.poll() is None:
                    p.kill()
        check(a.returncode == 0 and b.returncode == 0, "both rocefw-cp exited 0")
        src, dst = replay(inp), replay(out)
        print("  A:", {k: ra["ports"][1][k] for k in ("enqueued", "forwarded", "dropped_tail")})
        print("  B:", {k: rb["ports"][0][k] for k in ("rx_pkts", "rx_nombuf", "imissed")})
        print("  out:", dst["frames"], "frames", dst["bytes"], "bytes, icrc_ok", dst["icrc_ok"])
        check(ra["ports"][1]["forwarded"] == N, f"A sent all {N} frames into memif")
        check(rb["ports"][0]["rx_pkts"] == N, f"B received all {N} from memif")
        check(dst["frames"] == N and dst["bytes"] == src["bytes"],
              "every frame arrived, same byte count")
        check(dst["icrc_ok"] == N and dst["icrc_bad"] == 0 and dst["malformed"] == 0,
              "every ICRC valid, nothing malformed")
        check(dst["by_opcode"] == src["by_opcode"], "opcodes as sent")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
