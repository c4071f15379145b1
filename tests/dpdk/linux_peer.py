#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ARP and ND against the Linux kernel as the peer: a veth pair whose one end is in a private
network namespace (the Linux peer, 10.99.7.2 and fd99::2) and whose other end is a rocefw
port through net_af_packet (10.99.7.1 and fd99::1). Checks that
- the kernel resolves us: after it sends a datagram to 10.99.7.1 and fd99::1 its neighbour
  table holds our MAC (our ARP reply and NA were accepted);
- we resolve the kernel: rfw_port_resolve() of 10.99.7.2 and fd99::2 ends with the peer's MAC
  (the kernel answered our ARP request and NS).
Needs root (network namespaces, veth); fails with a message saying so otherwise. Everything
it creates is private to the namespace and removed at the end.

usage: linux_peer.py NEIGH_PEER
"""
import json
import os
import subprocess
import sys
import time

PEER = sys.argv[1]
tag = os.getpid() % 100000
NS, VA, VB = f"rfwnp{tag}", f"rfwa{tag}", f"rfwb{tag}"
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def sh(*args, ns=False, check_rc=True):
    cmd = (["ip", "netns", "exec", NS] if ns else []) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check_rc and r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r.stdout


def send_udp(addr, family):
    code = ("import socket; s = socket.socket(socket.%s, socket.SOCK_DGRAM); "
            "s.sendto(b'x' * 8, ('%s', 9))" % (family, addr))
    sh(sys.executable, "-c", code, ns=True)


def main():
    if os.geteuid() != 0:
        raise SystemExit("linux_peer.py needs root: it creates a network namespace and a veth "
                         "pair")
    try:
        sh("ip", "netns", "add", NS)
        sh("ip", "link", "add", VA, "type", "veth", "peer", "name", VB)
        sh("ip", "link", "set", VB, "netns", NS)
        sh("ip", "link", "set", VA, "up")
        # The rocefw side carries no kernel address, and IPv6 is off on it so that the kernel
        # sends nothing of its own (DAD, router solicitations) from our MAC.
        sh("sysctl", "-qw", f"net.ipv6.conf.{VA}.disable_ipv6=1", check_rc=False)
        sh("ip", "addr", "add", "10.99.7.2/24", "dev", VB, ns=True)
        sh("ip", "addr", "add", "fd99::2/64", "dev", VB, "nodad", ns=True)
        sh("ip", "link", "set", VB, "up", ns=True)
        sh("ip", "link", "set", "lo", "up", ns=True)
        peer_mac = open(f"/sys/class/net/{VA}/address").read().strip()  # ours, via af_packet
        their_mac = sh("cat", f"/sys/class/net/{VB}/address", ns=True).strip()

        args = [PEER, "--no-huge", "-m", "512", "--no-pci", "--no-shconf", "-l", "0",
                "--log-level=lib.eal:warning", f"--vdev=net_af_packet0,iface={VA}", "--",
                "--ip4", "10.99.7.1", "--ip6", "fd99::1", "--peer4", "10.99.7.2",
                "--peer6", "fd99::2", "--seconds", "3", "--resolve-after", "1.5"]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        line = p.stdout.readline()
        if line.strip() != "READY":
            p.kill()
            raise SystemExit(f"neigh_peer did not start: {line!r}")
        # The kernel speaks first (we resolve only after 1.5 s), so it has to ask for us:
        # otherwise it would learn our MAC from our own request.
        time.sleep(0.3)
        send_udp("10.99.7.1", "AF_INET")
        send_udp("fd99::1", "AF_INET6")
        time.sleep(0.5)
        n4 = sh("ip", "neigh", "show", "10.99.7.1", "dev", VB, ns=True).strip()
        n6 = sh("ip", "-6", "neigh", "show", "fd99::1", "dev", VB, ns=True).strip()
        print("  kernel:", n4, "|", n6)
        out, _ = p.communicate(timeout=30)
        r = json.loads(out)
        print("  rocefw:", {k: v for k, v in r.items() if v})
        # REACHABLE: confirmed by a solicited answer (not merely learnt, which is STALE).
        check(f"lladdr {peer_mac} REACHABLE" in n4,
              f"the kernel resolved 10.99.7.1 to our MAC {peer_mac}")
        check(f"lladdr {peer_mac} REACHABLE" in n6,
              f"the kernel resolved fd99::1 to our MAC {peer_mac}")
        check(r["arp_reply_sent"] >= 1 and r["nd_na_sent"] >= 1, "we answered ARP and NS")
        check(r["peer4_mac"].lower() == their_mac, f"we resolved 10.99.7.2 to {their_mac}")
        check(r["peer6_mac"].lower() == their_mac, f"we resolved fd99::2 to {their_mac}")
        check(r["rx_neigh_bad"] == 0, "every ARP/ND frame from Linux was valid to us")
        check(p.returncode == 0, f"neigh_peer exit status {p.returncode}")
    finally:
        sh("ip", "link", "del", VA, check_rc=False)
        sh("ip", "netns", "del", NS, check_rc=False)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
