#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The end of the DCQCN demo (tools/demo.sh, docs/demo.md): reads what rocefw-demo and rocefw-cp
wrote into DIR, prints the per-flow table, writes DIR/summary.json (schema rocefw.demo.summary/1)
and DIR/demo.png (gnuplot: DCQCN rate and goodput per flow above, the bottleneck queue below,
one time axis).

usage: report.py DIR        (DIR holds demo.json, flows.csv, cnps.csv, cp.json, queue.csv)
Exit status: 0 when rocefw-demo verified every WRITE, 1 otherwise, 2 on missing input.
Standard library only; gnuplot (Debian gnuplot-nox) for the PNG.
"""
import csv
import json
import os
import shutil
import subprocess
import sys

SCHEMA = "rocefw.demo.summary/1"
GOODPUT_WINDOW_S = 0.02  # goodput is plotted as a moving average over this window


def rows(path):
    """CSV rows as dicts, skipping '#' comment lines; and the first comment line."""
    with open(path) as f:
        lines = f.read().splitlines()
    comment = next((l for l in lines if l.startswith("#")), "")
    return list(csv.DictReader(l for l in lines if not l.startswith("#"))), comment


def header_kv(comment):
    """key=value pairs of a '# schema=... k=v ...; text' line."""
    kv = {}
    for tok in comment.lstrip("# ").split(";")[0].split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            kv[k] = v
    return kv


def cnp_gaps(cnp_rows, nflows):
    """Per flow: CNPs on the wire, the smallest gap between two consecutive ones (us) on the
    NP's clock and on the TX clock, and the longest time from the poll iteration that produced
    a CNP to its hand-over to the PMD (host scheduling: the TX gaps differ by at most this)."""
    out = []
    for fi in range(nflows):
        np_t = [int(r["np_ns"]) for r in cnp_rows if int(r["flow"]) == fi]
        tx_t = [int(r["tx_ns"]) for r in cnp_rows if int(r["flow"]) == fi]
        gap = lambda t: min((b - a for a, b in zip(t, t[1:])), default=None)
        g_np, g_tx = gap(np_t), gap(tx_t)
        delay = max((b - a for a, b in zip(np_t, tx_t)), default=None)
        out.append({"cnps_on_wire": len(np_t),
                    "max_np_to_tx_us": None if delay is None else delay / 1e3,
                    "min_gap_np_us": None if g_np is None else g_np / 1e3,
                    "min_gap_tx_us": None if g_tx is None else g_tx / 1e3})
    return out


def plot(d, flows_rows, queue_rows, off_s, kmin, kmax, flows):
    """demo.png from two derived data files (goodput smoothed, queue on the demo's time axis).
    A flow's rate is drawn only while it is active: an idle reaction point keeps its last RC
    (no traffic, no increase events), which says nothing about the link."""
    nflows = len(flows)
    active = lambda i, t: flows[i]["start_s"] <= t <= flows[i]["stop_s"]
    pf = os.path.join(d, "plot_flows.dat")
    qf = os.path.join(d, "plot_queue.dat")
    t = [float(r["t_s"]) for r in flows_rows]
    with open(pf, "w") as f:
        f.write("# t_s" + "".join(f" f{i}_rc_gbps f{i}_goodput_avg_gbps" for i in range(nflows))
                + "\n")
        lo = 0
        acc = [0.0] * nflows
        for k, r in enumerate(flows_rows):
            # moving average of the per-sample goodput over the last GOODPUT_WINDOW_S
            for i in range(nflows):
                acc[i] += float(r[f"f{i}_goodput_gbps"])
            while t[k] - t[lo] > GOODPUT_WINDOW_S:
                for i in range(nflows):
                    acc[i] -= float(flows_rows[lo][f"f{i}_goodput_gbps"])
                lo += 1
            n = k - lo + 1
            f.write(f"{t[k]:.6f}" + "".join(
                f" {r[f'f{i}_rc_gbps'] if active(i, t[k]) else 'NaN'} {acc[i] / n:.4f}"
                for i in range(nflows)) + "\n")
    with open(qf, "w") as f:
        f.write("# t_s queue_kib marked\n")
        for r in queue_rows:
            f.write(f"{int(r['t_ns']) / 1e9 + off_s:.6f} {int(r['queue_bytes']) / 1024:.2f} "
                    f"{r['marked']}\n")
    tmax = max(t) if t else 1
    gp = os.path.join(d, "demo.gp")
    with open(gp, "w") as f:
        f.write(f"""set terminal pngcairo size 1200,800
set output '{d}/demo.png'
set multiplot layout 2,1 title 'rocefw DCQCN demo: {nflows} flows through rocefw-cp'
set lmargin at screen 0.08
set rmargin at screen 0.80
set xrange [0:{tmax:.3f}]
set key outside right top
set grid
set format x ''
set ylabel 'Gb/s'
set logscale y
plot for [i=0:{nflows - 1}] '{pf}' using 1:(column(2+2*i)) with lines lw 1 \\
       title sprintf('flow %d rate RC', i), \\
     for [i=0:{nflows - 1}] '{pf}' using 1:(column(3+2*i)) with lines lw 2 dt 1 \\
       title sprintf('flow %d goodput', i)
unset logscale y
set format x '%g'
set xlabel 'time (s)'
set ylabel 'queue (KiB)'
plot '{qf}' using 1:2 with lines lc rgb '#404040' title 'bottleneck queue', \\
     {kmin} with lines dt 2 lc rgb '#2060c0' title 'Kmin', \\
     {kmax} with lines dt 2 lc rgb '#c02020' title 'Kmax'
unset multiplot
""")
    if shutil.which("gnuplot") is None:
        print("report.py: gnuplot not found (apt-get install gnuplot-nox): no PNG",
              file=sys.stderr)
        return None
    r = subprocess.run(["gnuplot", gp], stdin=subprocess.DEVNULL, capture_output=True,
                       text=True)
    if r.returncode != 0:
        print("report.py: gnuplot failed:", r.stderr.strip(), file=sys.stderr)
        return None
    return os.path.join(d, "demo.png")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    d = os.path.abspath(sys.argv[1])
    try:
        demo = json.load(open(os.path.join(d, "demo.json")))
        cp = json.load(open(os.path.join(d, "cp.json")))
        flows_rows, _ = rows(os.path.join(d, "flows.csv"))
        cnp_rows, cnp_hdr = rows(os.path.join(d, "cnps.csv"))
        q_all, q_hdr = rows(os.path.join(d, "queue.csv"))
    except (OSError, ValueError) as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 2
    assert demo["schema"] == "rocefw.demo/1" and cp["schema"] == "rocefw.cp.stats/1"
    qkv = header_kv(q_hdr)
    nflows = demo["config"]["flows"]
    off_s = (cp["t0_mono_ns"] - demo["t0_mono_ns"]) / 1e9
    # cp's port 1 is the memif to the receiver: its egress queue is the data direction's
    # bottleneck; port 0's queue carries ACKs and CNPs back to the sender.
    cpp = {p["port"]: p for p in cp["ports"]}
    q_rows = [r for r in q_all if r["port"] == "1"]
    gaps = cnp_gaps(cnp_rows, nflows)
    snd, rcv = demo["endpoints"]["sender"], demo["endpoints"]["receiver"]
    cp_drops = sum(p["dropped_red"] + p["dropped_tail"] + p["dropped_random"] + p["rx_nombuf"] +
                   p["imissed"] for p in cp["ports"])
    summary = {
        "schema": SCHEMA,
        "ok": bool(demo["ok"]),
        "seconds": demo["seconds"],
        "config": {"demo": demo["config"],
                   "cp": {k: float(v) for k, v in qkv.items() if k != "schema"}},
        "np_min_time_between_cnps_us": demo["config"]["cc"]["np_min_time_between_cnps"],
        "cp": {"marked_ce": sum(p["marked_ce"] for p in cp["ports"]),
               "marked_ce_to_receiver": cpp[1]["marked_ce"],
               "dropped": cp_drops,
               "queue_hw_bytes": cpp[1]["queue_hw_bytes"],
               "forwarded_to_receiver": cpp[1]["forwarded"],
               "forwarded_to_sender": cpp[0]["forwarded"]},
        # The same frames counted at each hop: sender port TX -> cp RX -> cp TX -> receiver RX.
        "wire": {"sender_tx": snd["port_ctr"]["tx_pkts"],
                 "sender_tx_dropped": snd["port_ctr"]["tx_dropped"],
                 "cp_rx_from_sender": cpp[0]["rx_pkts"],
                 "cp_tx_to_receiver": cpp[1]["forwarded"],
                 "receiver_rx": rcv["port_ctr"]["rx_pkts"],
                 "receiver_tx": rcv["port_ctr"]["tx_pkts"],
                 "receiver_tx_dropped": rcv["port_ctr"]["tx_dropped"],
                 "cp_rx_from_receiver": cpp[1]["rx_pkts"],
                 "cp_tx_to_sender": cpp[0]["forwarded"],
                 "sender_rx": snd["port_ctr"]["rx_pkts"]},
        "cnps_rx_at_sender": demo["cnp_log"]["rx_at_sender"],
        "cnps_unlogged": demo["cnp_log"]["unlogged"],
        "flows": [],
    }
    for f, g in zip(demo["flows"], gaps):
        summary["flows"].append({
            "flow": f["flow"], "start_s": f["start_s"], "stop_s": f["stop_s"],
            "messages": f["messages"], "completed": f["completed"],
            "verified_bytes": f["verified_bytes"], "bad_messages": f["bad_messages"],
            "goodput_gbps": f["goodput_gbps"],
            "ce_received": f["np"]["np_ecn_marked_roce_packets"],
            "cnps_sent": f["np"]["np_cnp_sent"], "cnps_suppressed": f["np"]["np_cnp_suppressed"],
            "cnps_handled": f["rp"]["rp_cnp_handled"], "rate_cuts": f["rp"]["rp_rate_cuts"],
            "line_gbps": f["line_gbps"], "min_rate_gbps": f["min_rate_gbps"],
            "final_rate_gbps": f["final_rate_gbps"],
            "retransmitted_packets": f["sender_qp"].get("retransmitted_packets", 0),
            "local_ack_timeouts": f["sender_qp"].get("local_ack_timeout_err", 0),
            "out_of_sequence_at_receiver": f["receiver_qp"].get("out_of_sequence", 0),
            **g})
    png = plot(d, flows_rows, q_rows, off_s, float(qkv.get("kmin_kb", 0)),
               float(qkv.get("kmax_kb", 0)), summary["flows"])
    summary["png"] = png
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")

    c = summary["config"]["cp"]
    print(f"\nrocefw DCQCN demo: {nflows} flows, {demo['seconds']:.2f} s, profile "
          f"{demo['config']['cc_profile']}, line {demo['config']['line_gbps']} Gb/s, "
          f"bottleneck {c.get('rate_gbps', 0):g} Gb/s (Kmin {c.get('kmin_kb', 0):g} KiB, "
          f"Kmax {c.get('kmax_kb', 0):g} KiB, Pmax {c.get('pmax', 0):g})")
    print(f"{'flow':>4} {'active_s':>11} {'goodput':>10} {'verified':>10} {'CE_rx':>7} "
          f"{'CNP_sent':>8} {'CNP_hdl':>8} {'cuts':>6} {'min_rate':>9} {'retx':>5}")
    for f in summary["flows"]:
        print(f"{f['flow']:>4} {f['start_s']:5.2f}-{f['stop_s']:<5.2f} "
              f"{f['goodput_gbps']:6.3f}Gb/s {f['verified_bytes'] / 2**20:7.1f}MiB "
              f"{f['ce_received']:>7} {f['cnps_sent']:>8} {f['cnps_handled']:>8} "
              f"{f['rate_cuts']:>6} {f['min_rate_gbps']:5.2f}Gb/s {f['retransmitted_packets']:>5}")
    s = summary["cp"]
    print(f"rocefw-cp: {s['marked_ce']} CE marks, {s['dropped']} drops, queue peak "
          f"{s['queue_hw_bytes'] / 1024:.0f} KiB; every WRITE verified: "
          f"{'yes' if summary['ok'] else 'NO'}")
    gmin = [f["min_gap_np_us"] for f in summary["flows"] if f["min_gap_np_us"] is not None]
    if gmin:
        print(f"CNPs on the wire: {sum(f['cnps_on_wire'] for f in summary['flows'])}, "
              f"closest two of one QP {min(gmin):.1f} us apart "
              f"(np_min_time_between_cnps {summary['np_min_time_between_cnps_us']} us)")
    print(f"files: {d}/summary.json" + (f", {png}" if png else " (no PNG)"))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
