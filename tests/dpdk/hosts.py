#!/usr/bin/env python3
"""One firmware, two hosts (issue 14): the same workload through rocefw-sim's host (plain
buffers, virtual time) and through the DPDK host (rfw_nic on ring ports) must give the same
per-QP sequence of packets where time does not matter (no loss, no congestion control).

test_hosts seq writes both captures; tshark (an independent decoder) reads them. For every
direction and destination QP:
- requests: the sequence of (opcode, PSN, AckReq, UDP length) is identical;
- READ responses: the sequence of (opcode, PSN, UDP length) is identical;
- ACKs depend on arrival timing, which differs between the hosts: a responder acknowledges
  what it has received when it builds the ACK, so it may cover several AckReq packets at once
  (coalesced, IBA 9.7.5.1.1), and the MSN an AETH carries is the count at build time. So each
  ACK must acknowledge the PSN of a request that asked for one, and the last ACK of each QP
  (everything acknowledged) must be identical.

usage: hosts.py TEST_HOSTS
"""
import subprocess
import sys
import tempfile
import os

BIN = sys.argv[1]
EAL = ["--no-huge", "-m", "512", "--no-pci", "--no-shconf", "-l", "0"]
FIELDS = ["ip.src", "infiniband.bth.destqp", "infiniband.bth.opcode", "infiniband.bth.psn",
          "infiniband.bth.a", "infiniband.aeth.syndrome", "infiniband.aeth.msn", "udp.length"]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def sequences(path):
    """{(source IP, destination QP): [(opcode, psn, a, syndrome, msn, udp length), ...]}"""
    cmd = ["tshark", "-r", path, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=f",
           "-Y", "infiniband"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    seqs = {}
    for line in out.splitlines():
        v = (line.split("\t") + [""] * len(FIELDS))[:len(FIELDS)]
        seqs.setdefault((v[0], v[1]), []).append(tuple(v[2:]))
    return seqs


REQUEST_OPS = set(range(0, 13)) | {19, 20}  # SEND, WRITE, READ request, atomics (RC)


def requests(seq):
    return [(p[0], p[1], p[2], p[5]) for p in seq if int(p[0]) in REQUEST_OPS]


def read_responses(seq):
    return [(p[0], p[1], p[5]) for p in seq if 13 <= int(p[0]) <= 16]


def acks_of(seq):
    """(PSN, MSN) of every ACK (opcode 17)."""
    return [(p[1], p[4]) for p in seq if int(p[0]) == 17]


def compare(op, size, msgs, qps, depth):
    with tempfile.TemporaryDirectory() as tmp:
        sim, dpdk = os.path.join(tmp, "sim.pcap"), os.path.join(tmp, "dpdk.pcap")
        r = subprocess.run([BIN] + EAL + ["--", "seq", op, str(size), str(msgs), str(qps),
                                          str(depth), sim, dpdk],
                           capture_output=True, text=True, timeout=100)
        name = f"{op} {msgs} x {size} B over {qps} QPs, depth {depth}"
        check(r.returncode == 0, f"{name}: both hosts completed"
              + ("" if r.returncode == 0 else f" ({r.stderr.strip()[-300:]})"))
        if r.returncode != 0:
            return
        a, b = sequences(sim), sequences(dpdk)
        npk = sum(len(x) for x in a.values())
        check(len(a) == 2 * qps and npk > msgs,
              f"{name}: rocefw-sim sent {npk} packets on {len(a)} (direction, QP) flows")
        check(a.keys() == b.keys(), f"{name}: same flows ({sorted(a)} / {sorted(b)})")
        ackreq = {k: {p[1] for p in v if p[2] == "1"} for k, v in a.items()}
        for k in sorted(a):
            for kind, keep in (("requests", requests), ("READ responses", read_responses)):
                x, y = keep(a[k]), keep(b.get(k, []))
                if not x and not y:
                    continue
                first = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), None)
                check(x == y, f"{name}: {k[0]} -> QP {k[1]}: {len(x)} {kind} identical"
                      + ("" if x == y else f" (rocefw-sim {len(x)}, DPDK {len(y)}, first "
                         f"difference at {first})"))
            acks = [acks_of(a[k]), acks_of(b.get(k, []))]
            peer = [r for r in ackreq if r[0] != k[0]]
            asked = set().union(*(ackreq[r] for r in peer)) if peer else set()
            if not acks[0] and not acks[1]:
                continue
            check(all(acks) and all(p[0] in asked for x in acks for p in x) and
                  acks[0][-1] == acks[1][-1],
                  f"{name}: {k[0]} -> QP {k[1]}: ACKs ({len(acks[0])} / {len(acks[1])}) answer "
                  f"AckReq PSNs, last ACK identical {acks[0][-1:]} / {acks[1][-1:]}")


compare("write", 10000, 24, 2, 4)
compare("read", 5000, 16, 2, 4)
compare("write", 65536, 4, 1, 2)
print(f"{'FAIL' if failures else 'PASS'}: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
