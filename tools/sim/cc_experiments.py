#!/usr/bin/env python3
"""The congestion experiments of docs/cc-experiments.md (issue 5), run through rocefw-sim.

usage: cc_experiments.py SIM_EXE [OUT_DIR]

Prints the tables as Markdown; with OUT_DIR, also each run's CSV and PNG plot
(OUT_DIR/<experiment>/<run>/flows.csv, queue.csv, sim.png). A benchmark, not a test: runs for a
few minutes on one core. Every run is deterministic (seed 1), so the tables are reproducible.
"""
import json
import os
import subprocess
import sys

SIM = sys.argv[1]
OUT = sys.argv[2] if len(sys.argv) > 2 else None
PROFILES = ["unified", "paper", "mlx5-cx5", "hpcc-ns3", "shared-port"]
# A 16 MiB switch buffer (a shared-buffer switch's share for one port; there is no PFC in the
# simulator) and the default ACK timeout (14: 67 ms): a shorter one expires while a QP at its
# rate floor (mlx5-cx5: 1 Mb/s, 8 ms per 1 KiB frame) is still pacing its retransmission out,
# and the QP fails with retry exceeded (seen with --timeout 8, docs/cc-experiments.md).
COMMON = ["--rate-gbps", "100", "--size", "65536", "--mtu", "1024",
          "--queue-bytes", str(16 << 20),
          "--kmin-kb", "5", "--kmax-kb", "200", "--pmax", "0.01"]


def sim(name, *args):
    extra = []
    if OUT:
        d = os.path.join(OUT, name)
        os.makedirs(d, exist_ok=True)
        extra = ["--plot", d]
    p = subprocess.run([SIM, "--json", *COMMON, *args, *extra], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"{name}: rocefw-sim exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout)


def table(head, rows):
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---:" if i else "---" for i in range(len(head))) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print()


def conv(o):
    c = o.get("convergence_time_ms")
    return "never" if c is None else f"{c:.1f}"


# 1. Two flows, same profile; the second starts 10 ms after the first.
print("### 1. Two flows, one profile, 100 Gb/s bottleneck (10 us RTT, flow 1 starts at 10 ms)\n")
rows = []
for p in PROFILES:
    o = sim(f"two-flows/{p}", "--flows", "2", "--profile", p, "--duration-ms", "50",
            "--start-gap-us", "10000", "--depth", "16", "--rtt-us", "10")
    f = o["flows"]
    rows.append([p, conv(o), f"{o['jain_index']:.4f}",
                 f"{f[0]['goodput_second_half_gbps']:.2f} / {f[1]['goodput_second_half_gbps']:.2f}",
                 f"{o['queue_mean_kb']:.1f}", f"{o['queue_p99_kb']:.1f}",
                 f"{o['queue_peak_kb']:.1f}", f"{o['cnps_received']}", f"{o['rate_cuts']}"])
table(["profile", "convergence ms", "Jain (2nd half)", "goodput Gb/s (2nd half)",
       "queue mean KB", "queue p99 KB", "queue peak KB", "CNPs", "cuts"], rows)

# 1b. Two equal-RTT flows starting together, 64 KiB and 1 MiB messages (issue 15's done-when:
#     Jain >= 0.98 for both sizes), 10 us RTT, default depth 4.
print("### 1b. Two equal-RTT flows starting together, 64 KiB and 1 MiB WRITEs, 50 ms\n")
rows = []
for p in PROFILES:
    r = [p]
    for size in (65536, 1 << 20):
        o = sim(f"equal-rtt-{size >> 10}k/{p}", "--flows", "2", "--profile", p,
                "--duration-ms", "50", "--size", str(size))
        f = o["flows"]
        r += [f"{o['jain_index']:.4f}",
              f"{f[0]['goodput_second_half_gbps'] + f[1]['goodput_second_half_gbps']:.1f}",
              f"{o['queue_mean_kb']:.1f}"]
    rows.append(r)
table(["profile", "Jain 64 KiB", "total Gb/s 64 KiB", "queue mean KB 64 KiB", "Jain 1 MiB",
       "total Gb/s 1 MiB", "queue mean KB 1 MiB"], rows)

# 2. Incast: N senders x 20 messages of 64 KiB, all at once.
print("### 2. Incast (each sender: 20 x 64 KiB WRITEs, 10 us RTT, 16 MiB buffer)\n")
rows = []
for n in (8, 64):
    for p in PROFILES:
        o = sim(f"incast-{n}/{p}", "--incast", str(n), "--messages", "20", "--profile", p,
                "--depth", "4", "--rtt-us", "10")
        ct = [f["completion_time_us"] for f in o["flows"] if f["completion_time_us"]] or [0]
        rows.append([f"{n}:1", p, f"{sum(1 for f in o['flows'] if f['completion_time_us'])}",
                     f"{o['queue_peak_kb']:.1f}", f"{o['queue_p99_kb']:.1f}",
                     f"{o['network']['queue_drops']}", f"{o['cnps_received']}",
                     f"{min(ct):.0f}", f"{sum(ct) / len(ct):.0f}", f"{max(ct):.0f}",
                     f"{o['retransmitted_packets']}", f"{o['timeouts']}"])
table(["incast", "profile", "senders done", "queue peak KB", "queue p99 KB", "drops", "CNPs",
       "first done us", "mean done us", "last done us", "retransmitted", "timeouts"], rows)

# 3. RTT fairness: 2 us and 2 ms base RTT sharing the bottleneck. Enough in flight that the
#    2 ms flow is not window-limited at its fair share (50 Gb/s x 2 ms = 12.5 MB): 512 x 64 KiB
#    messages and 65536 unacknowledged PSNs (the default 1024 caps it at 1 MiB per RTT).
print("### 3. RTT fairness: base RTT 2 us (flow 0) and 2 ms (flow 1), 100 ms\n")
rows = []
for p in PROFILES:
    o = sim(f"rtt/{p}", "--flows", "2", "--profile", p, "--duration-ms", "100",
            "--rtt-us", "2,2000", "--depth", "512", "--max-unacked-psns", "65536")
    f = o["flows"]
    rows.append([p, f"{f[0]['goodput_second_half_gbps']:.2f}",
                 f"{f[1]['goodput_second_half_gbps']:.2f}", f"{o['jain_index']:.4f}",
                 f"{o['queue_mean_kb']:.1f}", f"{o['queue_p99_kb']:.1f}",
                 f"{f[0]['cnps_received']} / {f[1]['cnps_received']}"])
table(["profile", "2 us flow Gb/s", "2 ms flow Gb/s", "Jain (2nd half)", "queue mean KB",
       "queue p99 KB", "CNPs 2us / 2ms"], rows)

# 3b. Four RTTs across a region (2, 20, 200 and 2000 us) sharing one bottleneck, 100 ms.
print("### 3b. Base RTTs 2, 20, 200 and 2000 us sharing the bottleneck, 100 ms\n")
rows = []
for p in PROFILES:
    o = sim(f"rtt4/{p}", "--flows", "4", "--profile", p, "--duration-ms", "100",
            "--rtt-us", "2,20,200,2000", "--depth", "512", "--max-unacked-psns", "65536")
    f = o["flows"]
    rows.append([p, " / ".join(f"{x['goodput_second_half_gbps']:.2f}" for x in f),
                 f"{sum(x['goodput_second_half_gbps'] for x in f):.1f}",
                 f"{o['jain_index']:.4f}", f"{o['queue_mean_kb']:.1f}",
                 f"{o['queue_p99_kb']:.1f}"])
table(["profile", "goodput Gb/s 2 / 20 / 200 / 2000 us", "total Gb/s", "Jain (2nd half)",
       "queue mean KB", "queue p99 KB"], rows)

# 4. Mixed fleet: half one generation, half another, vs all unified; profiles per sender host
#    round robin. (a) four hosts with one QP each; (b) four hosts with two QPs each (8 flows):
#    there shared-port's one-RP-per-port state differs from mlx5-cx5's per-QP state.
FLEETS = {1: (["unified"], ["paper", "mlx5-cx5"], ["paper", "shared-port"],
              ["mlx5-cx5", "hpcc-ns3"]),
          2: (["unified"], ["paper", "mlx5-cx5"], ["paper", "shared-port"],
              ["mlx5-cx5", "shared-port"], ["mlx5-cx5", "hpcc-ns3"])}
for qps, title in ((1, "4a. Mixed fleet: 4 sender hosts x 1 QP (4 flows, 10 us RTT), 50 ms"),
                   (2, "4b. Mixed fleet: 4 sender hosts x 2 QPs (8 flows, 10 us RTT), 50 ms")):
    print(f"### {title}\n")
    rows = []
    for mix in FLEETS[qps]:
        o = sim(f"mixed-{qps}qp/" + "+".join(mix), "--flows", str(4 * qps), "--qps", str(qps),
                "--profiles", ",".join(mix), "--duration-ms", "50", "--depth", "16",
                "--rtt-us", "10")
        share = {}
        for f in o["flows"]:
            share[f["profile"]] = share.get(f["profile"], 0) + f["goodput_second_half_gbps"]
        tot = sum(share.values())
        rows.append([" + ".join(mix) if len(mix) > 1 else "all unified",
                     ", ".join(f"{k} {v / tot * 100:.1f} %" for k, v in share.items()),
                     " / ".join(f"{f['goodput_second_half_gbps']:.1f}" for f in o["flows"]),
                     f"{o['jain_index']:.4f}", f"{tot:.1f}", f"{o['queue_mean_kb']:.1f}",
                     f"{o['queue_p99_kb']:.1f}"])
    table(["fleet", "throughput share", "per-flow Gb/s (2nd half)", "Jain", "total Gb/s",
           "queue mean KB", "queue p99 KB"], rows)
