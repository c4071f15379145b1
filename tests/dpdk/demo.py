#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The README's demo, short configuration (tools/demo.sh --short: 1.5 s, flow 1 from 0.5 to
1.0 s), through rocefw-cp with a 1 Gbit/s bottleneck below the offered load. Asserts from the
files it writes (summary.json, cnps.csv, flows.csv, queue.csv):

- CE marks appear at rocefw-cp, and the receiver's NP counted them;
- CNPs are sent, every one seen on the wire by the receiver port's TX callback is counted by the
  NP, arrives at the sender and is handled by its RP;
- per QP, no two CNPs closer than np_min_time_between_cnps (on the NP's clock; the gap on the
  TX clock is printed too);
- each sender's rate RC dropped below the line rate after its first CNP, and rate cuts happened;
- nothing lost: rocefw-cp dropped nothing (RED, tail, random, RX ring or mbufs), the PMDs
  refused nothing, and every frame counted leaving one hop is counted arriving at the next,
  both directions; every WRITE completed and was verified at the responder.
  With nothing lost, nothing is retransmitted and the receiver sees no PSN out of sequence
  (the pacer keeps a QP's packets in PSN order also when its rate returns to the line rate while
  packets are parked).
- the PNG exists and every file carries its schema;
- bad rocefw-demo options are refused with exit status 2, naming the option.

usage: demo.py DEMO_SH BUILD_DIR
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

DEMO_SH, BUILD = sys.argv[1:3]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def rows(path):
    with open(path) as f:
        lines = f.read().splitlines()
    return [l for l in lines if l.startswith("#")], \
        list(csv.DictReader(l for l in lines if not l.startswith("#")))


def bad_options():
    """rocefw-demo refuses bad values before EAL starts: exit 2, the option named."""
    demo = os.path.join(BUILD, "tools", "demo", "rocefw-demo")
    for args, name in ((["--flows", "9"], "--flows"), (["--cc-profile", "fast"], "--cc-profile"),
                       (["--cc", "rp_gd=99"], "rp_gd"), (["--cc", "rp_gd"], "--cc"),
                       (["--stagger-ms", "2000"], "--stagger-ms"),
                       (["--size", "4194304", "--depth", "8"], "--size"),
                       (["--duration-ms", "1.5"], "--duration-ms")):
        r = subprocess.run([demo, "--"] + args, capture_output=True, text=True, timeout=10)
        check(r.returncode == 2 and name in r.stderr,
              f"rocefw-demo {' '.join(args)}: refused naming {name}")


def main():
    bad_options()
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([DEMO_SH, "--short", "--build", BUILD, "--out", out],
                           capture_output=True, text=True, timeout=90)
        print(r.stdout)
        if r.returncode != 0:
            print(r.stderr)
        check(r.returncode == 0, "tools/demo.sh --short exited 0 (every WRITE verified)")
        if not os.path.exists(os.path.join(out, "summary.json")):
            print("FAIL no summary.json")
            return 1
        s = json.load(open(os.path.join(out, "summary.json")))
        cnp_hdr, cnps = rows(os.path.join(out, "cnps.csv"))
        flows_hdr, series = rows(os.path.join(out, "flows.csv"))
        q_hdr, _ = rows(os.path.join(out, "queue.csv"))
        check(s["schema"] == "rocefw.demo.summary/1", "summary schema")
        check(cnp_hdr[0].startswith("# schema=rocefw.demo.cnps/1") and
              flows_hdr[0].startswith("# schema=rocefw.demo.flows/1") and
              q_hdr[0].startswith("# schema=rocefw.cp.queue/1"), "CSV schemas")
        check(s["png"] is not None and os.path.getsize(s["png"]) > 10000, "demo.png written")
        nf = s["config"]["demo"]["flows"]
        check(nf >= 2 and len(s["flows"]) == nf, f"{nf} flows")

        # CE marks at the congestion point, seen by the NP.
        cp = s["cp"]
        ce_rx = sum(f["ce_received"] for f in s["flows"])
        check(cp["marked_ce"] > 0, f"rocefw-cp marked {cp['marked_ce']} frames CE")
        check(ce_rx == cp["marked_ce_to_receiver"],
              f"the receiver's NPs counted every CE frame rocefw-cp sent them ({ce_rx} of "
              f"{cp['marked_ce_to_receiver']})")

        # CNPs: sent, on the wire, delivered, handled; spacing per QP.
        gap_us = s["np_min_time_between_cnps_us"]
        sent = sum(f["cnps_sent"] for f in s["flows"])
        check(sent > 0, f"{sent} CNPs sent")
        check(len(cnps) == sent and s["cnps_unlogged"] == 0,
              f"every CNP the NPs counted was seen leaving the receiver port ({len(cnps)})")
        check(s["cnps_rx_at_sender"] == sent,
              f"every CNP arrived at the sender port ({s['cnps_rx_at_sender']})")
        for f in s["flows"]:
            fi = f["flow"]
            mine = [c for c in cnps if int(c["flow"]) == fi]
            np_t = [int(c["np_ns"]) for c in mine]
            tx_t = [int(c["tx_ns"]) for c in mine]
            check(f["cnps_sent"] > 0, f"flow {fi}: {f['cnps_sent']} CNPs sent")
            check(f["cnps_handled"] == f["cnps_sent"],
                  f"flow {fi}: the RP handled every CNP ({f['cnps_handled']})")
            check(len(mine) == f["cnps_sent"], f"flow {fi}: {len(mine)} CNPs on the wire")
            gaps = [b - a for a, b in zip(np_t, np_t[1:])]
            tx_gaps = [b - a for a, b in zip(tx_t, tx_t[1:])]
            short = [g for g in gaps if g < gap_us * 1000]
            print(f"     flow {fi}: closest CNPs {min(gaps, default=0) / 1e3:.1f} us apart on "
                  f"the NP clock, {min(tx_gaps, default=0) / 1e3:.1f} us at TX")
            check(not short, f"flow {fi}: no two CNPs closer than np_min_time_between_cnps "
                  f"({gap_us} us; {len(short)} closer)")
            check(all(g >= 0 for g in gaps), f"flow {fi}: CNP times increase")

            # The reaction: below line rate after the first CNP, and cuts.
            check(f["rate_cuts"] > 0, f"flow {fi}: {f['rate_cuts']} rate cuts")
            check(f["min_rate_gbps"] < f["line_gbps"],
                  f"flow {fi}: rate fell to {f['min_rate_gbps']:.3f} Gb/s, below the line "
                  f"rate {f['line_gbps']} Gb/s")
            # The same in the time series: a sample after its first CNP below line rate.
            below = [r for r in series if int(r[f"f{fi}_cnps_handled"]) > 0 and
                     float(r[f"f{fi}_rc_gbps"]) < f["line_gbps"]]
            check(len(below) > 0, f"flow {fi}: {len(below)} samples below line rate after "
                  "a CNP")

            # Delivery.
            check(f["completed"] == f["messages"] and f["messages"] > 0 and
                  f["bad_messages"] == 0 and
                  f["verified_bytes"] == f["messages"] * s["config"]["demo"]["size"],
                  f"flow {fi}: all {f['messages']} WRITEs completed and verified")
            check(f["retransmitted_packets"] == 0 and f["out_of_sequence_at_receiver"] == 0
                  and f["local_ack_timeouts"] == 0,
                  f"flow {fi}: {f['retransmitted_packets']} packets retransmitted, "
                  f"{f['out_of_sequence_at_receiver']} out of sequence at the receiver, "
                  f"{f['local_ack_timeouts']} ACK timeouts")

        # Nothing lost on the way.
        w = s["wire"]
        check(cp["dropped"] == 0, "rocefw-cp dropped nothing")
        check(w["sender_tx_dropped"] == 0 and w["receiver_tx_dropped"] == 0,
              "no frame refused by a PMD at TX")
        check(w["sender_tx"] == w["cp_rx_from_sender"] == w["cp_tx_to_receiver"] ==
              w["receiver_rx"], "sender -> receiver: " + " = ".join(
                  str(w[k]) for k in ("sender_tx", "cp_rx_from_sender", "cp_tx_to_receiver",
                                      "receiver_rx")))
        check(w["receiver_tx"] == w["cp_rx_from_receiver"] == w["cp_tx_to_sender"] ==
              w["sender_rx"], "receiver -> sender: " + " = ".join(
                  str(w[k]) for k in ("receiver_tx", "cp_rx_from_receiver", "cp_tx_to_sender",
                                      "sender_rx")))
        check(s["ok"], "rocefw-demo reports every WRITE verified")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
