# SPDX-License-Identifier: BSD-3-Clause
"""Several NICs on one port, seen through telemetry (issue 20, docs/dataplane.md "Several NICs
on one port"): rocefw-bench-lcores on two lcores with two NICs per port, QPs paired across NICs
and peer MACs resolved by ARP, read over the DPDK telemetry socket while it runs:
  - /rocefw/nics lists four NICs; each /rocefw/nic names its port and queue, and the QPN range
    it numbers from is the one /rocefw/port/queue says the port's dispatcher steers to it;
  - /rocefw/port/queue of each queue: frames handed between queues in both directions
    (rx_steered, rx_steer_in) on both ports; ARP answered on queue 0 only;
  - /rocefw/neigh of each port: the other port's address REACHABLE, learnt by queue 0 and used
    by the NIC on queue 1 too (every QP resolved: the program's own check);
  - the run passes (every byte checked, no frame at a NIC not owning its QP).
usage: lcores_tel.py ROCEFW_BENCH_LCORES"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from telemetry_client import Telemetry  # noqa: E402

failed = 0


def check(cond, what):
    global failed
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failed += 1


def flowing(t, port, q):
    qs = t.query(f"/rocefw/port/queue,{port},{q}") or {}
    return qs.get("rx_steered", 0) > 0 and qs.get("rx_steer_in", 0) > 0


def wait_set_up(t, proc, limit_s=60):
    """/rocefw/nics once the tool is set up: 4 NICs and frames crossing every queue, or the
    last list after LIMIT_S. The socket comes up with EAL, before the NICs (on a loaded CI
    machine under ASan a process took over 20 s to set up)."""
    t0 = time.monotonic()
    while True:
        nics = t.query("/rocefw/nics") or []
        if (len(nics) == 4 and all(flowing(t, pt, q) for pt in (0, 1) for q in (0, 1))) or \
                proc.poll() is not None or time.monotonic() - t0 > limit_s:
            print(f"  set up after {time.monotonic() - t0:.2f} s: {len(nics)} NICs")
            return nics
        time.sleep(0.25)


def main():
    prefix = f"rfwlc{os.getpid()}"
    out = f"/tmp/{prefix}.json"
    eal = ["--no-huge", "-m", "1024", "--no-pci", f"--file-prefix={prefix}", "-l", "0,1",
           "--log-level=lib.eal:warning"]
    p = subprocess.Popen([sys.argv[1]] + eal + ["--", "--nics", "2", "--qps", "4", "--cross",
                                                "--resolve", "--seconds", "4", "--json", out],
                         stdout=subprocess.PIPE, text=True)
    try:
        t = Telemetry(prefix)
        nics = wait_set_up(t, p)
        check(len(nics) == 4, f"/rocefw/nics lists 4 NICs: {nics}")
        owners = {}
        for n in nics:
            info = t.query(f"/rocefw/nic,{n}")
            owners[(info["port"], info["queue"])] = info["qpn_base"]
        check(sorted(owners) == [(0, 0), (0, 1), (1, 0), (1, 1)],
              f"one NIC per queue of each port: {sorted(owners)}")
        for (port, q), base in sorted(owners.items()):
            qs = t.query(f"/rocefw/port/queue,{port},{q}")
            print(f"  port {port} queue {q}: qpn {qs.get('qpn_lo')}+{qs.get('qpn_count')}, "
                  f"steered {qs['rx_steered']} out / {qs['rx_steer_in']} in, arp replies "
                  f"{qs['arp_reply_sent']}")
            check(qs["schema"] == "rocefw.port.queue/1" and qs["qpn_lo"] == base and
                  qs["qpn_count"] > 0, f"port {port} queue {q}: dispatcher owner range starts "
                  f"at the NIC's qpn_base {base}")
            check(qs["rx_steered"] > 0 and qs["rx_steer_in"] > 0,
                  f"port {port} queue {q}: frames handed out and in")
            check((qs["arp_reply_sent"] > 0) == (q == 0),
                  f"port {port} queue {q}: ARP answered on queue 0 only")
        for port, peer in ((0, "10.0.0.2"), (1, "10.0.0.1")):
            neigh = t.query(f"/rocefw/neigh,{port}")
            states = {e["ip"].replace("::ffff:", ""): e["state"] for e in neigh.values()}
            check(states.get(peer) == "reachable", f"port {port}: {peer} reachable ({states})")
        t.close()
        stdout, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    print(stdout)
    check(p.returncode == 0, "rocefw-bench-lcores passed")
    res = json.load(open(out))
    os.unlink(out)
    check(res["schema"] == "rocefw-bench-lcores/1" and res["passed"] and
          res["l2_resolved"] == 16, "JSON: passed, 16 QPs resolved by ARP")
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
