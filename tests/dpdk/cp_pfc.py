#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rocefw-cp generating PFC toward its sender, like a switch (docs/pfc.md, docs/cp.md): a
capture of ECT(0) RoCEv2 frames is replayed by net_pcap much faster than a 1 Gbit/s bottleneck,
so the egress queue passes --pfc-xoff-kb; the PFC frames rocefw-cp sends back out of the ingress
port land in the output capture, where tshark decodes them: XOFF for priority 3 only, to
01-80-C2-00-00-01, the configured pause time, refreshed while the queue stays above
--pfc-xon-kb, and an XON after each run of XOFFs once the queue drains (the last one an XON).
Bad --pfc-* combinations are refused.

usage: cp_pfc.py ROCEFW_CP GEN_ECT_PCAP
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

CP, GEN = sys.argv[1:3]
EAL = ["--no-huge", "-m", "512", "--no-pci", "--no-shconf", "-l", "0",
       "--log-level=lib.eal:warning"]
N = 4000
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def main():
    tshark = shutil.which("tshark")
    if tshark is None:
        print("FAIL: tshark is not installed; this check needs it (tools/install-deps.sh)")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        ect = os.path.join(tmp, "ect.pcap")
        out = os.path.join(tmp, "out.pcap")
        subprocess.run([GEN, ect, str(N), "1024"], check=True)
        vdev = f"--vdev=net_pcap0,rx_pcap={ect},tx_pcap={out}"
        r = subprocess.run([CP] + EAL + [vdev, "--", "--idle-exit-ms", "200", "--json",
                                          "--rate-gbps", "1", "--queue-kb", "512",
                                          "--pfc-prio", "3", "--pfc-xoff-kb", "128",
                                          "--pfc-xon-kb", "32", "--pfc-quanta", "1000"],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            print(r.stdout, r.stderr)
            print(f"FAIL rocefw-cp exited {r.returncode}")
            return 1
        st = json.loads(r.stdout)["ports"][0]
        fields = subprocess.run(
            [tshark, "-r", out, "-Y", "macc", "-T", "fields", "-E", "separator=/t",
             "-e", "eth.dst", "-e", "macc.opcode", "-e", "macc.cbfc.enbv",
             "-e", "macc.cbfc.pause_time.c3", "-e", "_ws.expert.message"],
            check=True, capture_output=True, text=True).stdout.splitlines()
        frames = [f.split("\t") for f in fields]
        times = [int(f[3]) for f in frames]
        print(f"{len(frames)} PFC frames: {sum(t > 0 for t in times)} XOFF, "
              f"{sum(t == 0 for t in times)} XON; queue high-water "
              f"{st['queue_hw_bytes']} bytes")
        check(st["queue_hw_bytes"] > 128 * 1024, "the queue passed --pfc-xoff-kb")
        check(len(frames) == st["pfc_frames_sent"],
              f"PFC frames in the capture ({len(frames)}) = pfc_frames_sent "
              f"({st['pfc_frames_sent']})")
        check(all(f[0] == "01:80:c2:00:00:01" and int(f[1], 0) == 0x0101 and
                  int(f[2], 0) == 0x08 and f[4] == "" for f in frames),
              "all PFC, to 01-80-C2-00-00-01, priority 3 only, no tshark complaint")
        check(all(t in (0, 1000) for t in times), "pause times: 1000 (XOFF) or 0 (XON)")
        check(len(times) >= 2 and times[0] == 1000 and times[-1] == 0,
              "starts with XOFF, ends with XON")
        # XON only after XOFF, never two XONs in a row.
        check(all(not (times[i] == 0 and times[i - 1] == 0) for i in range(1, len(times))),
              "no XON without an XOFF before it")
        # The queue stays above 32 KiB for milliseconds: refreshes every 256 us.
        check(sum(t > 0 for t in times) >= 3, "XOFF refreshed while the queue stayed deep")
        for bad in (["--pfc-prio", "3", "--pfc-xoff-kb", "64", "--pfc-xon-kb", "64"],
                    ["--pfc-prio", "8"],
                    ["--pfc-prio", "3", "--io-fwd"],
                    ["--pfc-prio", "3", "--queue-kb", "100", "--kmax-kb", "50",
                     "--pfc-xoff-kb", "200"]):
            r = subprocess.run([CP] + EAL + [vdev, "--"] + bad, capture_output=True, text=True,
                               timeout=60)
            check(r.returncode != 0 and "pfc" in r.stderr, f"refused: {' '.join(bad)}")
    print(f"cp_pfc: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
