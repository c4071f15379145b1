#!/usr/bin/env python3
"""HPCC's fat-tree in its topology format (docs/ns3.md "Topologies"): hosts first, then ToRs,
aggregation and core switches. Pods of POD ToRs and POD aggregation switches, each ToR linked to
every aggregation switch of its pod, aggregation switch j of every pod linked to cores
j*POD .. j*POD+POD-1. The defaults are HPCC's simulation/mix/fat.txt: 320 hosts at 100 G,
20 ToR / 20 Agg / 16 Core, 400 G uplinks, 1 us links.

usage: fattree.py [--tors 20] [--hosts-per-tor 16] [--pod 4] [--host-rate 100Gbps]
                  [--up-rate 400Gbps] [--delay 1000ns] -o TOPOLOGY
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tors", type=int, default=20)
    ap.add_argument("--hosts-per-tor", type=int, default=16)
    ap.add_argument("--pod", type=int, default=4)
    ap.add_argument("--host-rate", default="100Gbps")
    ap.add_argument("--up-rate", default="400Gbps")
    ap.add_argument("--delay", default="1000ns")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    if a.tors % a.pod:
        sys.exit("fattree: --tors must be a multiple of --pod")
    hosts = a.tors * a.hosts_per_tor
    tor0, agg0 = hosts, hosts + a.tors
    core0 = agg0 + a.tors
    ncore = a.pod * a.pod
    links = []
    for h in range(hosts):
        links.append((h, tor0 + h // a.hosts_per_tor, a.host_rate))
    for t in range(a.tors):
        p = t // a.pod
        for j in range(a.pod):
            links.append((tor0 + t, agg0 + p * a.pod + j, a.up_rate))
    for g in range(a.tors):
        j = g % a.pod
        for c in range(a.pod):
            links.append((agg0 + g, core0 + j * a.pod + c, a.up_rate))
    nodes = core0 + ncore
    with open(a.out, "w") as f:
        f.write(f"{nodes} {nodes - hosts} {len(links)}\n")
        f.write(" ".join(str(i) for i in range(hosts, nodes)) + "\n")
        for s, d, r in links:
            f.write(f"{s} {d} {r} {a.delay} 0.000000\n")


if __name__ == "__main__":
    main()
