#!/usr/bin/env python3
"""rocefw-ns3 on a small fabric (docs/ns3.md): one switch, hosts with an incast and short flows.

- every flow completes, the FCT file is HPCC's format (hex addresses of HPCC's node_id_to_ip,
  the flows' sizes and start times), no flow beats its standalone FCT by more than 5 %;
- CNPs are sent by the receiver and handled by the senders (DCQCN through ECN marking);
- with PFC on and a small buffer the switch pauses, the NICs receive the PFC frames, nothing is
  dropped; with PFC off the same incast drops and go-back-N recovers, and so does selective
  repeat (its RTO options reach the transport: --sr-rto-low-pkts 65536 makes every expiry an
  RTO_low one);
- the per-host captures decode in tshark (InfiniBand over UDP, nothing malformed, PFC frames
  as MAC Control) and rocefw-replay check finds every ICRC good;
- bad options exit 2 naming the option; a run cut short by --sim-time-ms exits 1;
- two simulators, one firmware: an 8:1 incast of 4 MiB under the unified profile with the same
  marking (at enqueue, Kmin 5 KB, Kmax 200 KB, 1 %) completes in rocefw-sim and rocefw-ns3
  within 1 % (first flow) and 3 % (last flow), with CNP counts within 30 %.

usage: ns3_fabric.py ROCEFW_NS3 ROCEFW_REPLAY ROCEFW_SIM
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

NS3, REPLAY, SIM = sys.argv[1], sys.argv[2], sys.argv[3]
fails = 0


def check(cond, msg):
    global fails
    if not cond:
        fails += 1
        print("FAIL", msg)


def hpcc_ip(i):  # HPCC third.cc node_id_to_ip
    return 0x0b000001 + (i // 256) * 0x10000 + (i % 256) * 0x100


def write_star(d, hosts, name):
    p = os.path.join(d, name)
    with open(p, "w") as f:
        f.write(f"{hosts + 1} 1 {hosts}\n0\n")
        for h in range(1, hosts + 1):
            f.write(f"0 {h} 100Gbps 0.001ms 0\n")
    return p


def write_flows(d, flows, name):
    p = os.path.join(d, name)
    with open(p, "w") as f:
        f.write(f"{len(flows)}\n")
        for fl in flows:
            f.write(" ".join(str(x) for x in fl) + "\n")
    return p


def run(*args, expect_rc=0):
    p = subprocess.run([NS3, *args, "--json"], capture_output=True, text=True, timeout=100)
    check(p.returncode == expect_rc, f"{args}: exit {p.returncode}, want {expect_rc}: {p.stderr}")
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        check(False, f"{args}: not JSON: {p.stdout[:200]}")
        return {}


def read_fct(path):
    with open(path) as f:
        return [ln.split() for ln in f if ln.strip()]


def check_fct(rows, flows, what):
    check(len(rows) == len(flows), f"{what}: {len(rows)} FCT lines for {len(flows)} flows")
    want = {(hpcc_ip(s), hpcc_ip(d), sz, round(st * 1e9)) for s, d, _, _, sz, st in flows}
    got = set()
    for r in rows:
        check(len(r) == 8 and all(len(x) == 8 for x in r[:2]), f"{what}: bad FCT line {r}")
        if len(r) != 8:
            continue
        got.add((int(r[0], 16), int(r[1], 16), int(r[4]), int(r[5])))
        fct, alone = int(r[6]), int(r[7])
        check(fct >= 0.95 * alone, f"{what}: fct {fct} below standalone {alone}: {r}")
    check(got == want, f"{what}: FCT rows {sorted(got)} are not the flows {sorted(want)}")


def tshark_rows(pcap, *fields):
    t = subprocess.run(["tshark", "-r", pcap, "--disable-protocol", "rpcordma", "-T", "fields",
                        *sum((["-e", f] for f in fields), [])],
                       capture_output=True, text=True)
    check(t.returncode == 0, f"tshark {pcap}: {t.stderr}")
    return [ln.split("\t") for ln in t.stdout.splitlines()]


def check_capture(pcap, what):
    rows = tshark_rows(pcap, "eth.type", "infiniband.bth.opcode", "_ws.malformed",
                       "_ws.expert.severity")
    check(len(rows) > 0, f"{what}: empty capture")
    for r in rows:
        r += [""] * (4 - len(r))
        if r[0] == "0x8808":
            continue  # MAC Control (PFC)
        check(r[1] != "", f"{what}: a frame tshark did not decode as InfiniBand: {r}")
        check(r[2] == "", f"{what}: malformed frame: {r}")
    c = subprocess.run([REPLAY, "check", "--json", pcap], capture_output=True, text=True)
    try:
        j = json.loads(c.stdout)
        check(j["icrc_bad"] == 0 and j["malformed"] == 0 and j["icrc_ok"] == j["roce"],
              f"{what}: rocefw-replay check: {j['icrc_ok']} good ICRCs of {j['roce']}, "
              f"{j['malformed']} malformed")
    except (json.JSONDecodeError, KeyError):
        check(False, f"{what}: rocefw-replay check failed: {c.stderr}")
    return rows


def check_one_model(topo9, inc, fct9):
    """7b: rocefw-sim and rocefw-ns3 agree to the ns when no marking draw decides."""
    # With marking made deterministic (Kmin 40 KB, Kmax 40.001 KB, Pmax 1), the two
    # simulators give the same FCTs to the ns and the same CNPs (docs/ns3.md "Sim vs ns-3
    # over marking seeds"). Any difference of link timing, host window or marking point
    # shows here; mlx5-cx5 and hpcc-ns3 send thousands of CNPs.
    for prof in ("mlx5-cx5", "hpcc-ns3"):
        det = ["--kmin-kb", "40", "--kmax-kb", "40.001", "--pmax", "1", "--profile", prof]
        o = run("--topology", topo9, "--flows", inc, "--fct-out", fct9, "--mark-at", "enqueue",
                *det)
        ns3 = sorted(int(r[6]) for r in read_fct(fct9))
        p = subprocess.run([SIM, "--json", "--incast", "8", "--size", "4194304", "--messages",
                            "1", "--depth", "1", "--rate-gbps", "100", "--rtt-us", "4",
                            "--queue-bytes", "33554432", *det], capture_output=True, text=True)
        sj = json.loads(p.stdout)
        sim = sorted(round(f["completion_time_us"] * 1e3) for f in sj["flows"])
        check(ns3 == sim and o.get("cnps_sent") == sj["cnps_sent"],
              f"{prof}, deterministic marking: FCTs (ns) sim {sim} vs ns-3 {ns3}, CNPs "
              f"{sj['cnps_sent']} vs {o.get('cnps_sent')}")


def main():
    check(shutil.which("tshark") is not None, "tshark is not installed (tools/install-deps.sh)")
    d = tempfile.mkdtemp(prefix="ns3fab")
    # 1. 4:1 incast of 2 MB + short flows, the DCQCN paper's marking (Kmin 5 KB, Kmax 200 KB,
    #    1 %): all complete, CNPs both ways, captures clean.
    topo = write_star(d, 5, "star5.txt")
    flows = [(h, 5, 3, 100, 2000000, 0.000001) for h in range(1, 5)]
    flows += [(1, 2, 3, 100, 10000, 0.00005), (2, 3, 3, 100, 5000, 0.00006),
              (3, 4, 3, 100, 1000, 0.00007), (5, 1, 3, 100, 20000, 0.00008)]
    ff = write_flows(d, flows, "flows5.txt")
    fct = os.path.join(d, "fct5.txt")
    pc = os.path.join(d, "pcap5")
    os.mkdir(pc)
    o = run("--topology", topo, "--flows", ff, "--fct-out", fct, "--pcap", pc,
            "--kmin-kb", "5", "--kmax-kb", "200", "--pmax", "0.01")
    for k in ("flows", "cnps_sent", "cnps_handled", "pfc_pauses", "drops", "retransmissions",
              "events", "wall_s"):
        check(k in o, f"--json lacks {k}")
    check(o.get("flows_completed") == len(flows), f"incast: {o.get('flows_completed')} done")
    check(o.get("cnps_sent", 0) > 0, f"incast: no CNP sent: {o}")
    check(o.get("cnps_handled") == o.get("cnps_sent"), f"incast: CNPs sent != handled: {o}")
    check(o.get("drops") == 0 and o.get("retransmissions") == 0, f"incast: losses: {o}")
    check_fct(read_fct(fct), flows, "incast")
    rx = check_capture(os.path.join(pc, "host-5.pcap"), "host-5.pcap")
    check(any(r[1] == "129" for r in rx), "host-5.pcap: no CNP (opcode 0x81) in the capture")
    check_capture(os.path.join(pc, "host-1.pcap"), "host-1.pcap")

    # 1a. ns-3's schedulers give the same events in the same order: the same FCT file.
    with open(fct) as f:
        fct_default = f.read()
    fctm = os.path.join(d, "fct5_map.txt")
    o = run("--topology", topo, "--flows", ff, "--fct-out", fctm, "--kmin-kb", "5", "--kmax-kb",
            "200", "--pmax", "0.01", "--scheduler", "map")
    with open(fctm) as f:
        check(o.get("scheduler") == "ns3::MapScheduler" and f.read() == fct_default,
              f"--scheduler map: another FCT file than the default's: {o}")
    # 1a'. --ack-every 1: every request of host 1 asks for its ACK (tshark reads the BTH's
    #      AckReq bit); the default (64) asks on some only.
    pce = os.path.join(d, "pcape")
    os.mkdir(pce)
    o = run("--topology", topo, "--flows", ff, "--fct-out", fctm, "--kmin-kb", "5", "--kmax-kb",
            "200", "--pmax", "0.01", "--ack-every", "1", "--pcap", pce)
    for pcd, want_all in ((pce, True), (pc, False)):
        req = [r for r in tshark_rows(os.path.join(pcd, "host-1.pcap"), "ip.src",
                                      "infiniband.bth.opcode", "infiniband.bth.a")
               if len(r) == 3 and r[0] == "11.0.1.1" and r[1] != "" and int(r[1]) <= 11]
        asked = sum(r[2] in ("1", "True") for r in req)
        check(len(req) > 0 and (asked == len(req)) == want_all,
              f"--ack-every {'1' if want_all else '64'}: {asked} of {len(req)} requests ask")
    check(o.get("ack_every") == 1 and o.get("flows_completed") == len(flows), f"ack-every: {o}")

    # 1b. HPCC's DCQCN+win (--var-win): the window follows the rate; every request asks for
    #     its ACK (tshark reads the BTH's AckReq bit), and a window that shrinks under packets
    #     in flight never waits for the ACK timeout.
    pcv = os.path.join(d, "pcapv")
    os.mkdir(pcv)
    o = run("--topology", topo, "--flows", ff, "--fct-out", fct, "--pcap", pcv, "--kmin-kb",
            "5", "--kmax-kb", "200", "--pmax", "0.01", "--window-kb", "20", "--var-win")
    check(o.get("flows_completed") == len(flows) and o.get("var_win") is True and
          o.get("window_psns") == 20 and o.get("cnps_sent", 0) > 0, f"var-win: {o}")
    check(o.get("ack_timeouts") == 0 and o.get("retransmissions") == 0 and
          o.get("ack_every") == 1, f"var-win: {o}")
    req = [r for r in tshark_rows(os.path.join(pcv, "host-1.pcap"), "ip.src",
                                  "infiniband.bth.opcode", "infiniband.bth.a")
           if len(r) == 3 and r[0] == "11.0.1.1" and r[1] != "" and int(r[1]) <= 11]
    check(len(req) > 0 and all(r[2] in ("1", "True") for r in req),
          f"var-win: requests without AckReq: {[r for r in req if r[2] not in ('1', 'True')][:3]}")

    # 2. 8:1 incast into a 1 MB buffer, PFC on: pauses, honoured, nothing dropped.
    topo9 = write_star(d, 9, "star9.txt")
    fl9 = [(h, 9, 3, 100, 1000000, 0.000001) for h in range(1, 9)]
    fl9 += [(1 + i % 8, 1 + (i + 3) % 8, 3, 100, 2000 + 1000 * i, 0.00002 * (i + 1))
            for i in range(8)]
    ff9 = write_flows(d, fl9, "flows9.txt")
    pc9 = os.path.join(d, "pcap9")
    os.mkdir(pc9)
    fct9 = os.path.join(d, "fct9.txt")
    o = run("--topology", topo9, "--flows", ff9, "--fct-out", fct9, "--buffer-mb", "1",
            "--pcap", pc9)
    check(o.get("flows_completed") == len(fl9), f"pfc on: {o.get('flows_completed')} done")
    check(o.get("pfc_pauses", 0) > 0, f"pfc on: no pause: {o}")
    check(o.get("pfc_frames_received", 0) >= o.get("pfc_pauses", 1), f"pfc on: not received: {o}")
    check(o.get("drops") == 0, f"pfc on: drops: {o}")
    check_fct(read_fct(fct9), fl9, "pfc on")
    rows = check_capture(os.path.join(pc9, "host-1.pcap"), "pfc host-1.pcap")
    check(any(r[0] == "0x8808" for r in rows), "pfc host-1.pcap: no MAC Control frame")
    pfc = tshark_rows(os.path.join(pc9, "host-1.pcap"), "macc.opcode", "macc.cbfc.enbv")
    check(any(r[0] == "0x0101" for r in pfc), f"tshark: no PFC opcode 0x0101 in {pfc[:3]}")

    # 2b. A 1 Gb/s receiver link behind a 100 G incast: the pause outlasts 0xffff quanta
    #     (335.54 us at 100 G), so the switch refreshes it every half pause time (167.77 us), as
    #     tshark's timestamps of a sender's MAC Control frames show; nothing is dropped.
    slow = os.path.join(d, "slow9.txt")
    with open(topo9) as f, open(slow, "w") as g:
        g.write(f.read().replace("0 9 100Gbps", "0 9 1Gbps"))
    ffs = write_flows(d, [(h, 9, 3, 100, 200000, 0) for h in range(1, 9)], "slow_flows.txt")
    pcs = os.path.join(d, "pcaps")
    os.mkdir(pcs)
    o = run("--topology", slow, "--flows", ffs, "--fct-out", fct9, "--buffer-mb", "1", "--ecn",
            "off", "--pcap", pcs)
    check(o.get("flows_completed") == 8 and o.get("drops") == 0, f"slow link: {o}")
    check(o.get("pfc_refreshes", 0) > 0, f"slow link: no pause refresh: {o}")
    ts = [float(r[0]) for r in tshark_rows(os.path.join(pcs, "host-1.pcap"),
                                           "frame.time_relative", "macc.cbfc.pause_time.c3")
          if len(r) > 1 and r[1] == "65535"]
    gaps = [round((b - a) * 1e9) for a, b in zip(ts, ts[1:])]
    check(any(abs(g - 167770) <= 5 for g in gaps),
          f"slow link: no XOFF refresh 167770 ns after the previous: {gaps[:8]}")

    # 3. The same with PFC off: the buffer drops, go-back-N recovers every flow.
    # (a 1 ms local ACK timeout: tail drops are recovered by it, 67 ms would take seconds)
    o = run("--topology", topo9, "--flows", ff9, "--fct-out", fct9, "--buffer-mb", "1",
            "--pfc", "off", "--ack-timeout", "8")
    check(o.get("flows_completed") == len(fl9), f"pfc off: {o.get('flows_completed')} done")
    check(o.get("pfc_pauses") == 0 and o.get("drops", 0) > 0, f"pfc off: {o}")
    check(o.get("retransmissions", 0) > 0, f"pfc off: no retransmission: {o}")

    # 4. Selective repeat, lossy: completes too.
    o = run("--topology", topo9, "--flows", ff9, "--fct-out", fct9, "--buffer-mb", "1",
            "--pfc", "off", "--transport", "sr", "--ack-timeout", "8")
    check(o.get("flows_completed") == len(fl9) and o.get("transport") == "sr", f"sr: {o}")
    check(o.get("rto_low_timeouts", 0) + o.get("rto_high_timeouts", 0) == o.get("ack_timeouts"),
          f"sr: RTO_low + RTO_high expiries are not the ACK timeouts: {o}")
    # 4b. The RTO options reach the transport: with RTO_low for up to 65536 packets in flight,
    #     every expiry is an RTO_low one.
    o = run("--topology", topo9, "--flows", ff9, "--fct-out", fct9, "--buffer-mb", "1",
            "--pfc", "off", "--transport", "sr", "--ack-timeout", "8", "--sr-rto-low-us", "20",
            "--sr-rto-high-us", "300", "--sr-rto-low-pkts", "65536")
    check(o.get("flows_completed") == len(fl9) and o.get("rto_low_timeouts", 0) > 0 and
          o.get("rto_high_timeouts") == 0 and o.get("sr_rto_low_us") == 20 and
          o.get("sr_rto_high_us") == 300 and o.get("sr_rto_low_pkts") == 65536, f"sr rto: {o}")

    # 5. Cut short: exit 1, fewer flows in the FCT file.
    o = run("--topology", topo, "--flows", ff, "--fct-out", fct, "--sim-time-ms", "0.1",
            expect_rc=1)
    check(o.get("flows_completed", 99) < len(flows), f"cut short: {o}")

    # 6. Bad options and inputs: exit 2, the option named.
    bad_topo = os.path.join(d, "bad_topo.txt")
    with open(bad_topo, "w") as f:
        f.write("3 1 2\n0\n0 1 100Gbps 1us 0\n")
    for args, name in ((["--transport", "xx"], "--transport"), (["--pfc", "maybe"], "--pfc"),
                       (["--sim-time-ms", "-1"], "--sim-time-ms"), (["--mtu", "1000"], "--mtu"),
                       (["--profile", "nope"], "--profile"), (["--bogus"], "--bogus"),
                       (["--kmin-kb", "5"], "--kmax-kb"),
                       (["--sr-rto-low-us", "200", "--sr-rto-high-us", "150"], "--sr-rto-low-us"),
                       (["--sr-rto-high-us", "50"], "--sr-rto-high-us"),
                       (["--sr-rto-low-us", "0"], "--sr-rto-low-us"),
                       (["--sr-rto-low-pkts", "1.5"], "--sr-rto-low-pkts"),
                       (["--window-kb", "-1"], "--window-kb"), (["--var-win"], "--var-win"),
                       (["--var-win", "--window-kb", "9", "--transport", "sr"], "--var-win"),
                       (["--var-win", "--window-kb", "9", "--profile", "none"], "--var-win"),
                       (["--scheduler", "splay"], "--scheduler"),
                       (["--ack-every", "0"], "--ack-every"), (["--ack-every", "2.5"], "--ack-every"),
                       (["--var-win", "--window-kb", "9", "--ack-every", "2"], "--ack-every"),
                       (["--seed", "-1"], "--seed"), (["--seed", "4294967296"], "--seed"),
                       (["--seed", "1.5"], "--seed")):
        p = subprocess.run([NS3, "--topology", topo, "--flows", ff, "--fct-out", fct, *args],
                           capture_output=True, text=True)
        check(p.returncode == 2 and name in p.stderr, f"{args}: exit {p.returncode}: {p.stderr}")
    for args, name in ((["--flows", ff, "--fct-out", fct], "--topology"),
                       (["--topology", bad_topo, "--flows", ff, "--fct-out", fct], "--topology"),
                       (["--topology", topo, "--flows", topo, "--fct-out", fct], "--flows"),
                       (["--topology", topo, "--flows", ff, "--fct-out", "/nonexistent/x"],
                        "--fct-out")):
        p = subprocess.run([NS3, *args], capture_output=True, text=True)
        check(p.returncode == 2 and name in p.stderr, f"{args}: exit {p.returncode}: {p.stderr}")
    # 7. The same firmware in rocefw-sim and rocefw-ns3 (docs/ns3.md "Sim vs ns-3").
    inc = write_flows(d, [(h, 9, 3, 100, 4194304, 0) for h in range(1, 9)], "inc8.txt")
    o = run("--topology", topo9, "--flows", inc, "--fct-out", fct9, "--kmin-kb", "5",
            "--kmax-kb", "200", "--pmax", "0.01", "--mark-at", "enqueue")
    ns3 = sorted(int(r[6]) / 1e3 for r in read_fct(fct9))
    # --seed: 0 by default, echoed; another seed draws other marks (the FCTs move).
    o7 = run("--topology", topo9, "--flows", inc, "--fct-out", fct, "--kmin-kb", "5",
             "--kmax-kb", "200", "--pmax", "0.01", "--mark-at", "enqueue", "--seed", "7")
    check(o.get("seed") == 0 and o7.get("seed") == 7 and
          sorted(int(r[6]) / 1e3 for r in read_fct(fct)) != ns3,
          f"--seed: reported {o.get('seed')} and {o7.get('seed')}, or seed 7 changed nothing")
    p = subprocess.run([SIM, "--json", "--incast", "8", "--size", "4194304", "--messages", "1",
                        "--depth", "1", "--rate-gbps", "100", "--rtt-us", "4", "--kmin-kb", "5",
                        "--kmax-kb", "200", "--pmax", "0.01", "--queue-bytes", "33554432",
                        "--profile", "unified"], capture_output=True, text=True)
    sj = json.loads(p.stdout)
    sim = sorted(f["completion_time_us"] for f in sj["flows"])
    # The mean and the first completion are stable; the last one is the extreme of eight
    # flows whose cuts depend on marking draws and host queueing (docs/ns3.md "Sim vs ns-3":
    # 5008-5237 us in rocefw-ns3 with a host window of 1-8 frames, 5023-5091 us in rocefw-sim
    # over marking seeds), so it gets a wider bound.
    mean = lambda v: sum(v) / len(v) if v else 0
    check(len(ns3) == 8 and abs(ns3[0] / sim[0] - 1) < 0.01 and
          abs(mean(ns3) / mean(sim) - 1) < 0.01 and abs(ns3[-1] / sim[-1] - 1) < 0.05,
          f"sim vs ns-3: first/mean/last completion {sim[0]:.0f}/{mean(sim):.0f}/{sim[-1]:.0f} us "
          f"vs {ns3[0] if ns3 else 0:.0f}/{mean(ns3):.0f}/{ns3[-1] if ns3 else 0:.0f} us")
    check(abs(o.get("cnps_sent", 0) - sj["cnps_sent"]) <= 0.3 * sj["cnps_sent"],
          f"sim vs ns-3: CNPs {sj['cnps_sent']} vs {o.get('cnps_sent')}")

    check_one_model(topo9, inc, fct9)

    # 8. --rates: two staggered flows, each flow's DCQCN rate every 10 us while it sends.
    topo3 = write_star(d, 3, "star3.txt")
    two = write_flows(d, [(1, 3, 3, 100, 8388608, 0), (2, 3, 3, 100, 8388608, 0.0005)], "two.txt")
    rates = os.path.join(d, "rates.csv")
    run("--topology", topo3, "--flows", two, "--fct-out", fct, "--kmin-kb", "5", "--kmax-kb",
        "200", "--pmax", "0.01", "--mark-at", "enqueue", "--rates", rates, "--sample-us", "10")
    with open(rates) as f:
        rows = f.read().splitlines()
    pts = [tuple(float(x) for x in r.split(",")) for r in rows[1:]]
    f1 = [p for p in pts if p[1] == 1]
    check(rows[0] == "time_us,flow,rate_gbps" and len(pts) > 100 and
          all(0 < p[2] <= 100 for p in pts) and f1 and min(p[0] for p in f1) >= 500 and
          any(p[1] == 0 and p[2] < 60 for p in pts),
          f"--rates: header {rows[0]!r}, {len(pts)} samples, flow 1 from "
          f"{min(p[0] for p in f1) if f1 else None} us, a cut of flow 0 seen")

    shutil.rmtree(d)
    # 9. Experiment 2's benchmark command (tools/ns3/bench_fattree.sh), on 0.2 ms of arrivals:
    #    every run completes every flow, the CSV holds each profile and window mode.
    bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "ns3",
                         "bench_fattree.sh")
    bdir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(NS3))))
    bo = os.path.join(d, "bench")
    p = subprocess.run(["sh", bench, "-b", bdir, "-t", "0.0002", "-p", "unified", "-m",
                        "none var", "-o", bo], capture_output=True, text=True, timeout=100)
    check(p.returncode == 0, f"bench_fattree.sh: exit {p.returncode}: {p.stderr[-500:]}")
    for m in ("none", "var"):
        js = os.path.join(bo, f"unified-{m}.json")
        j = json.load(open(js)) if os.path.exists(js) else {}
        check(j.get("flows", 0) > 0 and j.get("flows_completed") == j.get("flows") and
              j.get("var_win") == (m == "var"), f"bench_fattree.sh {m}: {j}")
    labels = set()
    if os.path.exists(os.path.join(bo, "slowdown.csv")):
        labels = {ln.split(",")[0] for ln in open(os.path.join(bo, "slowdown.csv")).read()
                  .splitlines()[1:] if ln}
    check(labels == {"unified+none", "unified+var"}, f"bench_fattree.sh CSV labels {labels}")
    p = subprocess.run(["sh", bench, "-b", bdir, "-m", "tiny", "-o", bo], capture_output=True,
                       text=True)
    check(p.returncode == 2 and "-m" in p.stderr, f"bench_fattree.sh -m tiny: {p.stderr}")

    print("ns3_fabric:", "FAIL" if fails else "ok", f"({fails} failures)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
