#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Telemetry: start DPDK processes with --file-prefix and read /rocefw/... over the telemetry
socket (/var/run/dpdk/<prefix>/dpdk_telemetry.v2, SOCK_SEQPACKET: on connect the server sends
one JSON object describing itself; then each command written gets one JSON reply), as
dpdk-telemetry.py does. Standard library only.

1. test_rx_classify --hold: /rocefw/ports, /rocefw/port/info, /rocefw/port/stats (counters
   from malformed.pcap and vectors.pcap), /rocefw/neigh (an INCOMPLETE entry), /help.
2. rocefw-cp on net_pcap: /rocefw/cp/ports, /rocefw/cp/config, /rocefw/cp/stats.

usage: telemetry.py TEST_RX_CLASSIFY ROCEFW_CP GEN_ECT_PCAP ICRC_DATA_DIR
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

RXC, CP, GEN, DATA = sys.argv[1:5]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def eal(prefix):
    return ["--no-huge", "-m", "512", "--no-pci", f"--file-prefix={prefix}", "-l", "0",
            "--log-level=lib.eal:warning"]


class Telemetry:
    def __init__(self, prefix, timeout=10.0):
        path = f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2"
        if os.getuid() != 0:
            path = os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk", prefix,
                                "dpdk_telemetry.v2")
        deadline = time.monotonic() + timeout
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise SystemExit(f"telemetry socket {path} did not appear")
            time.sleep(0.05)
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.connect(path)
        self.info = json.loads(self.s.recv(16384).decode())

    def query(self, cmd):
        self.s.send(cmd.encode())
        reply = json.loads(self.s.recv(1 << 16).decode())
        return reply[cmd.split(",")[0]]

    def close(self):
        self.s.close()


def rundir(prefix):
    return f"/var/run/dpdk/{prefix}"


def test_port_layer(tmp):
    prefix = f"rfwtel{os.getpid()}a"
    args = [RXC] + eal(prefix) + [
        f"--vdev=net_pcap0,rx_pcap={DATA}/malformed.pcap,tx_pcap={tmp}/a.pcap",
        f"--vdev=net_pcap1,rx_pcap={DATA}/vectors.pcap,tx_pcap={tmp}/b.pcap", "--", "--hold"]
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        if line.strip() != "READY":
            raise SystemExit(f"test_rx_classify did not get ready: {line!r}")
        t = Telemetry(prefix)
        check("version" in t.info and "max_output_len" in t.info, "server greeting")
        check(t.query("/rocefw/ports") == [0, 1], "/rocefw/ports lists both ports")
        cmds = t.query("/")
        check(all(c in cmds for c in ("/rocefw/ports", "/rocefw/port/info",
                                      "/rocefw/port/stats", "/rocefw/neigh")),
              "all /rocefw/ commands registered")
        check("port id" in t.query("/help,/rocefw/port/stats")["/rocefw/port/stats"], "help text")
        docs = t.query("/rocefw/port/counters")
        check(docs.get("rx_icrc_bad", "").startswith("RoCEv2 frames dropped for a wrong ICRC"),
              "/rocefw/port/counters documents the counters")
        st = t.query("/rocefw/port/stats,0")
        print("  /rocefw/port/stats,0:", {k: v for k, v in st.items() if v})
        check(set(docs) <= set(st), "every documented counter is in the stats")
        check(st["schema"] == "rocefw.port.stats/1", "stats schema")
        check(st["rx_pkts"] == 8 and st["rx_icrc_bad"] == 7 and st["rx_malformed"] == 1,
              "port 0 counters: 8 received, 7 bad ICRC, 1 malformed")
        check(st["malformed_by_reason"] == {"truncated_bth": 1}, "malformed_by_reason")
        check(st["rx_rocev2"] == 0, "nothing delivered from malformed.pcap")
        st = t.query("/rocefw/port/stats,1")
        check(st["rx_rocev2"] == 10 and st["rx_icrc_bad"] == 0, "port 1: ten vectors delivered")
        check(st["arp_request_sent"] == 1 and st["tx_pkts"] == 1, "port 1: one ARP request sent")
        info = t.query("/rocefw/port/info,1")
        print("  /rocefw/port/info,1:", info)
        check(info["schema"] == "rocefw.port.info/1" and info["mac"] == "02:00:00:00:00:02",
              "info: schema and MAC")
        check(info["ipv4"] == "192.0.2.2" and info["ipv6"] == "2001:db8::2", "info: addresses")
        check(info["gid"] == "0000:0000:0000:0000:0000:ffff:c000:0202",
              "info: GID is IPv4-mapped")
        neigh = t.query("/rocefw/neigh,1")
        print("  /rocefw/neigh,1:", neigh)
        entries = list(neigh.values()) if isinstance(neigh, dict) else []
        check(len(entries) == 1 and entries[0]["ip"] == "192.0.2.99" and
              entries[0]["state"] == "incomplete" and entries[0]["probes"] == 1,
              "neigh: one INCOMPLETE entry after one probe")
        check(t.query("/rocefw/port/stats,7") is None, "unknown port: null reply")
        t.close()
    finally:
        p.stdin.close()
        rc = p.wait(timeout=20)
        shutil.rmtree(rundir(prefix), ignore_errors=True)
    check(rc == 0, f"test_rx_classify --hold exit status {rc}")


def test_cp(tmp):
    prefix = f"rfwtel{os.getpid()}b"
    inp = os.path.join(tmp, "in.pcap")
    subprocess.run([GEN, inp, "2000", "1024"], check=True)
    args = [CP] + eal(prefix) + [f"--vdev=net_pcap0,rx_pcap={inp},tx_pcap={tmp}/out.pcap",
                                 "--", "--rate-gbps", "1", "--queue-kb", "128", "--kmin-kb",
                                 "16", "--kmax-kb", "64", "--duration-s", "2", "--json"]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    try:
        t = Telemetry(prefix)
        # The pcap is read in well under a second; wait until the queue has drained.
        deadline = time.monotonic() + 2.5
        while True:
            st = t.query("/rocefw/cp/stats,0")
            if (st and st["rx_pkts"] == 2000 and st["queue_pkts"] == 0) or \
                    time.monotonic() > deadline:
                break
            time.sleep(0.05)
        print("  /rocefw/cp/stats,0:", st)
        check(st["schema"] == "rocefw.cp.stats/1", "cp stats schema")
        check(st["rx_pkts"] == 2000, "cp rx_pkts 2000")
        check(st["marked_ce"] > 0 and st["dropped_tail"] > 0, "cp marked and tail-dropped")
        check(st["forwarded"] + st["dropped_tail"] == 2000, "cp accounting")
        check(st["queue_hw_bytes"] > 64 * 1024, "cp high-water above Kmax")
        check(t.query("/rocefw/cp/ports") == [0], "/rocefw/cp/ports")
        cfg = t.query("/rocefw/cp/config")
        check(cfg["schema"] == "rocefw.cp.config/1" and cfg["kmin_kb"] == 16 and
              cfg["kmax_kb"] == 64 and cfg["rate_gbps"] == "1", "/rocefw/cp/config")
        check(t.query("/rocefw/ports") == [0], "cp's port registered with librocefw too")
        t.close()
        out, _ = p.communicate(timeout=20)
        final = json.loads(out)["ports"][0]
        check(final["marked_ce"] == st["marked_ce"], "exit report agrees with telemetry")
    finally:
        if p.poll() is None:
            p.kill()
        shutil.rmtree(rundir(prefix), ignore_errors=True)
    check(p.returncode == 0, f"rocefw-cp exit status {p.returncode}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_port_layer(tmp)
        test_cp(tmp)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
