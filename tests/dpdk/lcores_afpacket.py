# SPDX-License-Identifier: BSD-3-Clause
"""Several NICs on one port on a real PMD (issue 20, docs/dataplane.md "Several NICs on one
port"): net_af_packet with two queue pairs on each end of a veth pair, where the kernel's packet
fanout (PACKET_FANOUT_HASH, by flow hash as RSS would) decides which queue a frame reaches, not
us. rocefw-bench-lcores on two lcores, peer MACs by ARP: QPs paired straight (the kernel still
puts some frames on the other queue: the dispatcher must carry them) and crossed, 64 B and
16 KiB SENDs at path MTU 1024 (af_packet admits a 1500-byte MTU). Passes when every run passes
(every byte checked, no frame at a NIC not owning its QP) and frames were dispatched on both
ports in every run. Needs root (veth); fails saying so otherwise.
usage: lcores_afpacket.py ROCEFW_BENCH_LCORES"""
import json
import os
import subprocess
import sys

failed = 0


def check(cond, what):
    global failed
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failed += 1


def sh(*cmd):
    subprocess.run(cmd, check=True)


def run(bench, va, vb, extra, tag):
    out = f"/tmp/rfwlcaf{os.getpid()}.json"
    af = "qpairs=2,framesz=4096,blocksz=4096,framecnt=1024"
    cmd = [bench, "--no-huge", "-m", "1024", "--no-pci", "--no-shconf", "-l", "0,1",
           "--log-level=lib.eal:warning", f"--vdev=net_af_packet0,iface={va},{af}",
           f"--vdev=net_af_packet1,iface={vb},{af}", "--", "--eal-ports", "--resolve", "--mtu",
           "1024", "--seconds", "1", "--json", out] + extra
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    print(p.stdout.strip())
    check(p.returncode == 0, f"{tag}: rocefw-bench-lcores passed")
    if p.returncode != 0:
        print(p.stderr[-2000:])
        return
    r = json.load(open(out))
    os.unlink(out)
    check(r["ports"]["A"]["rx_steered"] > 0 and r["ports"]["B"]["rx_steered"] > 0,
          f"{tag}: frames dispatched on both ports (A {r['ports']['A']['rx_steered']}, "
          f"B {r['ports']['B']['rx_steered']})")
    check(r["rx_unknown_qp"] == 0 and r["l2_resolved"] == 16,
          f"{tag}: no frame at a NIC not owning its QP; 16 QPs resolved by ARP")


def main():
    if os.geteuid() != 0:
        print("FAIL: needs root to create a veth pair (this test does not skip)")
        return 1
    va, vb = f"lca{os.getpid() % 100000}", f"lcb{os.getpid() % 100000}"
    sh("ip", "link", "add", va, "type", "veth", "peer", "name", vb)
    try:
        for v in (va, vb):
            # No IPv6 on the veths: the kernel's own router solicitations stay off the wire.
            sh("sysctl", "-qw", f"net.ipv6.conf.{v}.disable_ipv6=1")
            sh("ip", "link", "set", v, "up")
        run(sys.argv[1], va, vb, [], "straight 64 B")
        run(sys.argv[1], va, vb, ["--cross"], "crossed 64 B")
        run(sys.argv[1], va, vb, ["--cross", "--size", "16384"], "crossed 16 KiB")
    finally:
        subprocess.run(["ip", "link", "del", va], check=False)
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
