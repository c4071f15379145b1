#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Telemetry: start DPDK processes with --file-prefix and read /rocefw/... over the telemetry
socket (/var/run/dpdk/<prefix>/dpdk_telemetry.v2, SOCK_SEQPACKET: on connect the server sends
one JSON object describing itself; then each command written gets one JSON reply), as
dpdk-telemetry.py does. Standard library only.

1. test_rx_classify --hold: /rocefw/ports, /rocefw/port/info, /rocefw/port/stats (counters
   from malformed.pcap and vectors.pcap), /rocefw/neigh (an INCOMPLETE entry), /help.
2. rocefw-cp on net_pcap: /rocefw/cp/ports, /rocefw/cp/config, /rocefw/cp/stats.
3. test_nic --hold (two rfw_nic endpoints with a QP pair that moved traffic, CE-marked on the
   way so CNPs flowed): /rocefw/nics, /rocefw/nic, /rocefw/nic/counters, /rocefw/qp/list,
   /rocefw/qp/info, /rocefw/cc/state, /rocefw/cc/params, compared with the counters the
   process printed from the C API; then QP pairs churned (created, used, destroyed) while
   /rocefw/qp/info and /rocefw/cc/state are read in a loop; and once through DPDK's own client,
   dpdk-telemetry.py (Debian dpdk-dev).

usage: telemetry.py TEST_RX_CLASSIFY ROCEFW_CP GEN_ECT_PCAP ICRC_DATA_DIR   (1 and 2)
       telemetry.py --nic TEST_NIC                                        (3)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from telemetry_client import Telemetry, eal

if sys.argv[1] == "--nic":
    NIC = sys.argv[2]
else:
    RXC, CP, GEN, DATA = sys.argv[1:5]
    NIC = None
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


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


def test_nic():
    prefix = f"rfwtel{os.getpid()}c"
    p = subprocess.Popen([NIC] + eal(prefix) + ["--", "--hold"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        exp = None
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit("test_nic --hold ended before READY")
            if line.startswith("{"):
                exp = json.loads(line)
            if line.strip() == "READY":
                break
        print("  test_nic expects:", exp)
        t = Telemetry(prefix)
        cmds = t.query("/")
        check(all(c in cmds for c in ("/rocefw/nics", "/rocefw/nic", "/rocefw/nic/counters",
                                      "/rocefw/qp/list", "/rocefw/qp/info", "/rocefw/cc/state",
                                      "/rocefw/cc/params")), "all NIC commands registered")
        na, nb, qa, qb = exp["nic_a"], exp["nic_b"], exp["qpn_a"], exp["qpn_b"]
        check(t.query("/rocefw/nics") == [na, nb], "/rocefw/nics lists both NICs")

        nic = t.query(f"/rocefw/nic,{na}")
        print("  /rocefw/nic:", {k: v for k, v in nic.items() if not isinstance(v, dict)})
        check(nic["schema"] == "rocefw.nic/1" and nic["nic"] == na and nic["qps_attached"] == 1
              and nic["cc"] == "dcqcn" and nic["dscp"] == 26 and nic["pcp"] == 3,
              "/rocefw/nic: schema, one QP attached, DCQCN, DSCP 26, PCP 3")
        check(nic["counters"]["tx_frame_bytes"] == exp["a_nic_tx_frame_bytes"] > 0 and
              "tx_pkts" not in nic["counters"] and "np_cnp_sent" not in nic["counters"],
              f"/rocefw/nic counters: tx_frame_bytes {nic['counters']['tx_frame_bytes']} "
              f"(API {exp['a_nic_tx_frame_bytes']}); packets and CNPs are the transport's")
        check(nic["counters"]["l2_resolved"] == 4 and nic["counters"]["l2_resolve_failed"] == 1,
              "/rocefw/nic: 4 peers resolved, 1 unreachable")
        dev = nic["dev_counters"]
        check(dev["tx_packets"] == exp["a_dev_tx_packets"] and "np_cnp_sent" in dev and
              "out_of_sequence" in dev and "local_ack_timeout_err" in dev,
              "/rocefw/nic dev_counters: mlx5 names, tx_packets as the API says")
        docs = t.query("/rocefw/nic/counters")
        check(set(docs["nic"]) <= set(nic["counters"]) and "tx_frame_bytes" in docs["qp"],
              "/rocefw/nic/counters documents every counter")

        check(t.query(f"/rocefw/qp/list,{na}") == [qa], f"/rocefw/qp/list: [{qa}]")
        check(t.query("/rocefw/qp/list") == [qa], "/rocefw/qp/list defaults to NIC 0")
        qi = t.query(f"/rocefw/qp/info,{na},{qa}")
        print("  /rocefw/qp/info:", {k: v for k, v in qi.items() if not isinstance(v, dict)})
        check(qi["schema"] == "rocefw.qp.info/1" and qi["qpn"] == qa and qi["state"] == "RTS" and
              qi["transport_mode"] == "gbn" and qi["l2"] == "ready" and qi["dest_qpn"] == qb,
              "/rocefw/qp/info: RTS, go-back-N, MAC known, dest QPN")
        check(qi["ip_version"] == 4 and qi["src_ip"] == "10.0.0.1" and
              qi["dst_ip"] == "10.0.0.2" and qi["dst_mac"] == "02:00:00:00:00:0b" and
              qi["udp_sport"] == (0xc000 | (qa & 0x3fff)) and qi["vlan_id"] == -1 and
              qi["path_mtu"] == 1024, "/rocefw/qp/info: path")
        check(qi["sq_psn"] == exp["a_sq_psn"] and qi["sq_psn"] > 0, "/rocefw/qp/info: sq_psn")
        qc = qi["nic_counters"]
        check(qc["tx_frame_bytes"] == exp["a_qp_tx_frame_bytes"] > 0 and "tx_pkts" not in qc,
              f"/rocefw/qp/info nic_counters: tx_frame_bytes {qc['tx_frame_bytes']} "
              f"(API {exp['a_qp_tx_frame_bytes']})")
        check(qi["counters"]["tx_packets"] == exp["a_qp_transport_tx_packets"] > 80 and
              qi["counters"]["rx_packets"] == exp["a_qp_transport_rx_packets"],
              "/rocefw/qp/info counters: the transport's tx/rx_packets as the API says")
        check(t.query(f"/rocefw/qp/info,{qa}")["qpn"] == qa, "/rocefw/qp/info,QPN: NIC 0")
        check(t.query("/rocefw/qp/info,0,9999") is None and
              t.query("/rocefw/qp/info,5,17") is None and
              t.query("/rocefw/qp/info,x") is None, "unknown QP / NIC / bad params: null")

        cs = t.query(f"/rocefw/cc/state,{na},{qa}")
        print("  /rocefw/cc/state (A):", {k: v for k, v in cs.items() if not isinstance(v, dict)})
        check(cs["schema"] == "rocefw.cc.state/1" and cs["cc"] == "dcqcn" and
              cs["rp_state"] in ("idle", "fr", "ai", "hai", "max") and cs["rate_kbps"] > 0 and
              cs["target_kbps"] >= cs["rate_kbps"] and 0 <= cs["alpha"] <= 1024,
              "/rocefw/cc/state: RP state, RC <= RT, alpha")
        check(cs["rp_counters"]["rp_cnp_handled"] == exp["a_qp_rp_cnp_handled"] > 0 and
              cs["rp_scope"] == "qp",
              f"/rocefw/cc/state: rp_cnp_handled {cs['rp_counters']['rp_cnp_handled']}")
        cb = t.query(f"/rocefw/cc/state,{nb},{qb}")
        check(cb["np_counters"]["np_cnp_sent"] == exp["b_qp_np_cnp_sent"] > 0 and
              cb["np_counters"]["np_ecn_marked_roce_packets"] >= cb["np_counters"]["np_cnp_sent"],
              f"/rocefw/cc/state (B): np_cnp_sent {cb['np_counters']['np_cnp_sent']}")
        pr = t.query(f"/rocefw/cc/params,{na}")
        print("  /rocefw/cc/params:", pr)
        check(pr["schema"] == "rocefw.cc.params/1" and pr["line_rate_mbps"] == 100000 and
              pr["params"]["np_cnp_dscp"] == 48 and pr["params"]["np_cnp_prio"] == 6 and
              pr["params"]["rp_gd"] == 11 and pr["params"]["rp_time_reset"] == 55 and
              pr["params"]["np_min_time_between_cnps"] == 50 and len(pr["params"]) >= 20,
              "/rocefw/cc/params: the unified profile by dcqcn_params.h names")

        # DPDK's own client reads the same commands (dpdk-dev's dpdk-telemetry.py).
        tool = shutil.which("dpdk-telemetry.py")
        check(tool is not None, "dpdk-telemetry.py installed (Debian dpdk-dev)")
        if tool is not None:
            r = subprocess.run([tool, "-f", prefix], input=f"/rocefw/qp/list,{na}\n"
                               f"/rocefw/cc/state,{nb},{qb}\n", capture_output=True, text=True,
                               timeout=20)
            replies = {}
            for line in r.stdout.splitlines():
                line = line.strip()
                if line.startswith("{"):
                    replies.update(json.loads(line))
            print("  dpdk-telemetry.py:", replies)
            check(replies.get("/rocefw/qp/list") == [qa] and
                  replies.get("/rocefw/cc/state", {}).get("np_counters", {}).get(
                      "np_cnp_sent") == exp["b_qp_np_cnp_sent"],
                  "dpdk-telemetry.py reads /rocefw/qp/list and /rocefw/cc/state")

        # QPs created and destroyed while we read them: every reply is null or a whole,
        # consistent snapshot of the QP asked for (never a crash, never another QP's data).
        p.stdin.write("churn\n")
        p.stdin.flush()
        seen, churned, nulls, bad = 0, 0, 0, []
        deadline = time.monotonic() + 0.45
        while time.monotonic() < deadline:
            for q in range(qa, qa + 4):
                r = t.query(f"/rocefw/qp/info,{na},{q}")
                if r is None:
                    nulls += 1
                    continue
                seen += 1
                churned += q != qa
                if r.get("qpn") != q or r.get("schema") != "rocefw.qp.info/1" or \
                        r.get("state") not in ("RESET", "INIT", "RTR", "RTS", "ERR") or \
                        r.get("dst_ip") != "10.0.0.2":
                    bad.append(r)
                c = t.query(f"/rocefw/cc/state,{na},{q}")
                if c is not None and c.get("qpn") != q:
                    bad.append(c)
        line = p.stdout.readline()
        check(line.startswith("CHURNED") and int(line.split()[1]) > 10,
              f"test_nic churned QP pairs: {line.strip()}")
        check(not bad and churned > 0,
              f"qp/info during churn: {seen} snapshots ({churned} of churned QPs), {nulls} "
              f"nulls, {len(bad)} bad "
              f"{bad[:2]}")
        check(t.query(f"/rocefw/qp/list,{na}") == [qa], "after churn: only the held QP listed")
        t.close()
    finally:
        if p.stdin:
            p.stdin.close()
        try:
            rc = p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = -1
        shutil.rmtree(rundir(prefix), ignore_errors=True)
    check(rc == 0, f"test_nic --hold exit status {rc}")


def main():
    if NIC is not None:
        test_nic()
    else:
        with tempfile.TemporaryDirectory() as tmp:
            test_port_layer(tmp)
            test_cp(tmp)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
