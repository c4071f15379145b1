#!/usr/bin/env python3
"""Issue 13.13: the RTT-fairness scenario of docs/cc-experiments.md section 3 (two backlogged
`unified` flows, 2 us and 2 ms base RTT, depth 512 x 64 KiB, 65536 unacknowledged PSNs) with a
300 KB switch buffer, which drops. Reported with the unified of before issue 15 and the
simulator's default buffer: the 2 us flow lost a go-back-N retransmission; the responder had
already sent its one NAK for that PSN (IBA 9.7.5.1.2) and dropped the rest silently, so the
flow waited for the local ACK timeout (67 ms at timeout 14) and, in a 100 ms run, completed
1023 messages and then sent nothing while its DCQCN rate was 13 Gb/s. The current unified does
not drop with the default buffer; with 300 KB the same stall showed (223 messages, 0.46 Gb/s in
the second half, one ACK timeout) until the gbn retry probe. The test asserts that both flows
keep delivering in the second half of the run and that every delivered byte is intact.

usage: sim_rtt_stall.py SIM_EXE
"""
import json
import subprocess
import sys

SIM = sys.argv[1]
ARGS = ["--json", "--flows", "2", "--profile", "unified", "--rtt-us", "2,2000",
        "--duration-ms", "100", "--size", "65536", "--mtu", "1024", "--depth", "512",
        "--max-unacked-psns", "65536", "--queue-bytes", "300000"]

p = subprocess.run([SIM, *ARGS], capture_output=True, text=True)
if p.returncode not in (0, 1):
    sys.exit(f"rocefw-sim exit {p.returncode}: {p.stderr}")
o = json.loads(p.stdout)
fails = 0
for f in o["flows"]:
    print(f"flow {f['flow']} rtt {f['rtt_us']} us: {f['messages_completed']} messages, "
          f"second half {f['goodput_second_half_gbps']:.2f} Gb/s, "
          f"final rate {f['final_rate_gbps']:.2f} Gb/s")
    # A flow stopped by the ACK timer has (almost) no goodput in the second half; live, each
    # gets tens of Gb/s here.
    if f["goodput_second_half_gbps"] < 5:
        print(f"FAIL flow {f['flow']} stalled")
        fails += 1
if o["corrupt"] or o["duplicates_delivered"] or o["error_completions"]:
    print(f"FAIL corrupt {o['corrupt']} duplicates {o['duplicates_delivered']} "
          f"errors {o['error_completions']}")
    fails += 1
print("retransmitted_packets", o["retransmitted_packets"], "timeouts", o["timeouts"],
      "nak_seq_err", o["nak_seq_err"])
sys.exit(1 if fails else 0)
