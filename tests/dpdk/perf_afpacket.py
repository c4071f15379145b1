#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rocefw-perf WRITE and SEND between two processes over net_af_packet, with loss on the path.

Two private network namespaces A and B, each with one rocefw-perf process driving a veth end
through net_af_packet (server in B on core 0, client in A on core 1). The veth pairs meet in a
third namespace, the path: a bridge there joins them, and nftables drops packets in the
bridge's forward chain. The kernel addresses on the veths (192.168.N.1/2) carry only the
out-of-band TCP exchange; RoCE uses 10.N.0.1/2, which the kernel does not own (so it neither
answers their ARP nor sends ICMP port-unreachable for UDP 4791).

Why not nftables directly on the veth ends of one pair: a packet socket sees received frames
before the netdev ingress hook, and a frame the netdev egress hook drops under af_packet's
transmit ring is not lost - the kernel leaves it in the ring with "send request" status and
sends it again on the next sendto(), so the transport never sees a loss (tried: not one
retransmission by the transport for 144 drops).

Cases, for the transport mode given (gbn or sr), each with a short local ACK timeout
(--ack-timeout 10: 4.2 ms) so that recovery is quick:
  - 1% of the RoCE packets dropped at random in both directions (data and ACKs): every message
    of a WRITE and a SEND run completes and every byte is verified at the server;
  - one chosen data packet (PSN 5, the middle of the first message) dropped exactly once:
    same checks.
Each case checks the nftables counters: loss must have happened (random: at least one drop;
chosen: exactly one), or the case fails - a loss test must prove loss occurred.

Path MTU 1024: rfw_port lowers the port MTU to what net_af_packet reports (1500) and the PMD
applies it to the veth, so 4096-byte frames cannot cross (docs/perf.md).

Needs root (namespaces, veth, nftables); fails saying so otherwise.

usage: perf_afpacket.py ROCEFW_PERF gbn|sr
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

PERF, MODE = sys.argv[1], sys.argv[2]
tag = os.getpid() % 100000
NA, NB, NR = f"rfwpa{tag}", f"rfwpb{tag}", f"rfwpr{tag}"
NET = 100 + tag % 100
KA, KB = f"192.168.{NET}.1", f"192.168.{NET}.2"
RA, RB = f"10.{NET}.0.1", f"10.{NET}.0.2"
EAL = ["--no-huge", "-m", "512", "--no-pci", "--no-shconf", "--log-level=lib.eal:warning"]
COMMON = ["-s", "65536", "-n", "200", "-t", "8", "--mtu", "1024", "--ack-timeout", "10",
          "--oob-timeout", "20", "--transport", MODE]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def sh(*args, ns=None, check_rc=True, inp=None):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, input=inp)
    if check_rc and r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r.stdout


def set_loss(rule_ab, rule_ba):
    """(Re)load the loss table of the path: per direction (A -> B: client to server, B -> A) a
    drop rule, then a counter of the RoCE packets that passed."""
    sh("nft", "delete", "table", "bridge", "rfwloss", ns=NR, check_rc=False)
    sh("nft", "-f", "-", ns=NR, inp=f"""
table bridge rfwloss {{
  chain path {{
    type filter hook forward priority 0;
    iifname "pA" oifname "pB" jump ab
    iifname "pB" oifname "pA" jump ba
  }}
  chain ab {{
    {rule_ab}
    udp dport 4791 counter
  }}
  chain ba {{
    {rule_ba}
    udp dport 4791 counter
  }}
}}
""")


def counters(chain):
    """(dropped, passed) RoCE packets in @chain ('ab' or 'ba') of the path's loss table."""
    out = sh("nft", "list", "chain", "bridge", "rfwloss", chain, ns=NR)
    drop = [int(m) for m in re.findall(r"counter packets (\d+) bytes \d+ drop", out)]
    passed = [int(m) for m in re.findall(r"counter packets (\d+) bytes \d+\s*$", out, re.M)]
    return sum(drop), sum(passed)


def pair(tmp, args):
    js, jc = os.path.join(tmp, "s.json"), os.path.join(tmp, "c.json")
    for f in (js, jc):
        if os.path.exists(f):
            os.unlink(f)
    vdev = "net_af_packet0,iface={}"
    srv = subprocess.Popen(["ip", "netns", "exec", NB, PERF] + EAL +
                           ["-l", "0", "--vdev=" + vdev.format("vB"), "--"] + args +
                           ["--ip", RB, "--out_json", js],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = srv.stdout.readline()
    while line and "waiting for a client" not in line:
        line = srv.stdout.readline()
    cli = subprocess.run(["ip", "netns", "exec", NA, PERF] + EAL +
                         ["-l", "1", "--vdev=" + vdev.format("vA"), "--"] + args +
                         ["--ip", RA, "--out_json", jc, KB],
                         capture_output=True, text=True, timeout=90)
    try:
        out_s, _ = srv.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        srv.kill()
        out_s, _ = srv.communicate()
    res = []
    for f in (js, jc):
        res.append(json.load(open(f)) if os.path.exists(f) else None)
    return srv.returncode, cli.returncode, out_s, cli.stdout + cli.stderr, res[0], res[1]


def lossy_case(tmp, name, op, rule_ab, rule_ba, exact_drops=None):
    set_loss(rule_ab, rule_ba)
    args = [op, "bw"] + COMMON
    t0 = time.time()
    rs, rc, out_s, out_c, js, jc = pair(tmp, args)
    dt = time.time() - t0
    da, pa = counters("ab")
    db, pb = counters("ba")
    title = f"{MODE} {op} bw 64 KiB x 200, {name}"
    print(f"  {title}: {dt:.1f} s; dropped {da} client->server, {db} server->client; "
          f"passed {pa} / {pb}")
    if rs != 0 or rc != 0:
        print("--- server\n" + out_s + "--- client\n" + out_c)
    check(rs == 0 and rc == 0, f"{title}: server exit {rs}, client exit {rc}")
    if exact_drops is None:
        check(da + db > 0, f"{title}: loss happened ({da + db} packets dropped)")
    else:
        check(da + db == exact_drops, f"{title}: exactly {exact_drops} packet dropped "
              f"({da + db})")
    if js is None or jc is None:
        check(False, f"{title}: both JSON files written")
        return
    r = jc["results"][0]
    want = 200 * 65536
    check(r["iterations"] == 200, f"{title}: all 200 messages completed ({r['iterations']})")
    check(r["verified"] is True and r["checked_bytes"] == want,
          f"{title}: every byte intact, compared at the server ({r['checked_bytes']})")
    check(js["results"][0]["verified"] is True and js["results"][0]["checked_bytes"] == want,
          f"{title}: the server's own account agrees")
    check(jc["transport"] == MODE and js["transport"] == MODE, f"{title}: transport {MODE}")
    # Every packet of the run crossed the path once at least: what passed A -> B is the
    # client's packets, retransmissions included, so a loss the transport recovered from shows
    # as more than the 200 x 64 packets of the data.
    if da > 0:
        check(pa > 200 * 64, f"{title}: the transport retransmitted ({pa} RoCE packets crossed "
              f"client -> server for {200 * 64} packets of data)")
    else:
        check(pa >= 200 * 64, f"{title}: {pa} RoCE packets crossed client -> server")


def main():
    if os.geteuid() != 0:
        raise SystemExit("perf_afpacket.py needs root: network namespaces, veth, nftables")
    if MODE not in ("gbn", "sr"):
        raise SystemExit("usage: perf_afpacket.py ROCEFW_PERF gbn|sr")
    tmp = tempfile.mkdtemp(prefix="perf_afpacket_")
    t_start = time.time()
    try:
        for ns in (NA, NB, NR):
            sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", "vA", "netns", NA, "type", "veth", "peer", "name", "pA",
           "netns", NR)
        sh("ip", "link", "add", "vB", "netns", NB, "type", "veth", "peer", "name", "pB",
           "netns", NR)
        sh("ip", "link", "add", "br0", "type", "bridge", ns=NR)
        for dev in ("pA", "pB"):
            sh("ip", "link", "set", dev, "master", "br0", ns=NR)
            sh("ip", "link", "set", dev, "up", ns=NR)
            sh("ethtool", "-K", dev, "tx", "off", ns=NR)
        sh("ip", "link", "set", "br0", "up", ns=NR)
        for ns, dev, addr in ((NA, "vA", KA), (NB, "vB", KB)):
            sh("ip", "link", "set", "lo", "up", ns=ns)
            sh("ip", "addr", "add", addr + "/24", "dev", dev, ns=ns)
            sh("ip", "link", "set", dev, "up", ns=ns)
            # Checksum offload off, or captures on the veth show bad UDP checksums; no IPv6
            # chatter from the kernel on the RoCE MAC.
            sh("ethtool", "-K", dev, "tx", "off", ns=ns)
            sh("sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=1", ns=ns, check_rc=False)
        rnd = "udp dport 4791 numgen random mod 100 < 1 counter drop"
        # BTH PSN: 24 bits at byte 9 of the BTH, which follows the 8-byte UDP header (bit 136
        # from the transport header). Only client -> server (data) packets; the quota lets the
        # match fire once, so the retransmission of PSN 5 passes.
        once = "udp dport 4791 @th,136,24 5 quota until 2000 bytes counter drop"
        for op in ("write", "send"):
            lossy_case(tmp, "1% random loss both ways", op, rnd, rnd)
            lossy_case(tmp, "data packet PSN 5 dropped once", op, once, "", exact_drops=1)
    finally:
        for ns in (NA, NB, NR):
            sh("ip", "netns", "del", ns, check_rc=False)
        subprocess.run(["rm", "-rf", tmp])
    print(f"  {time.time() - t_start:.1f} s in all")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
