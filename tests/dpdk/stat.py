#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rocefw-stat against a running rocefw-perf --loopback and rocefw-bench-lcores (docs/stat.md,
issue 9).

Starts `rocefw-perf ... --file-prefix rfwstatPID -- write bw --loopback -D 20` (core 0) and a
second one (prefix rfwstatPIDb, core 1) and, while they move traffic:
- rocefw-stat --json: schema rocefw-stat/2, the process (pid), 2 ports of one queue each (no
  per-queue view), 2 NICs, one QP each; every counter rocefw-gen-counters --list names (the
  generated docs/counters.md) is present where the document says it is read (the rdma_cm's:
  tests/verbs/cm_run.py reject); Estats: as /rocefw/estats says (absent / disabled / rows with
  p50, p99, p999, max); no rdma_cm (absent, said so in the table);
- a second --json read: TX counters grew;
- --watch 1 --count 1 --json: rates per second > 0 for the TX / RX counters and consistent with
  the values (rate ~ delta / interval); --watch as a table and --csv;
- dpdk-telemetry.py (DPDK's client) reads /rocefw/nic,0 with the same counter names and values
  not below rocefw-stat's earlier ones;
- --file-prefix A --file-prefix B: both, in order, with rates; --all-processes finds both;
then rocefw-bench-lcores (two ports of two queues, a NIC on each queue, QPs crossing queues) for
the per-queue view: every port counter per queue, the QPN range each queue's NIC owns (its
qpn_base), frames handed between queues both ways, queue sums not below the port's; the table
of queues; --watch rates and --csv of portP.qQ.*; then the errors: a prefix without a socket (names the path, exit 1), bad options (named, exit 2).

usage: stat.py ROCEFW_STAT ROCEFW_PERF ROCEFW_GEN_COUNTERS ROCEFW_BENCH_LCORES
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

STAT, PERF, GEN, LCORES = sys.argv[1:5]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def sock_dir():
    if os.getuid() == 0:
        return "/var/run/dpdk"
    return os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")


def stat(*args, timeout=30):
    return subprocess.run([STAT, *args], capture_output=True, text=True, timeout=timeout)


def documented():
    """(table, key) for every counter of the generated document; PFC per-priority expanded."""
    out = subprocess.run([GEN, "--list"], capture_output=True, text=True, check=True).stdout
    rows, bad = [], []
    for line in out.splitlines():
        table, key, unit = line.split("\t")
        if unit not in ("bytes", "us", "ns", "packets", "events"):
            bad.append(f"{table}.{key}: {unit}")
        if "%u" in key:
            rows += [(table, key.replace("%u", str(p))) for p in range(8)]
        else:
            rows.append((table, key))
    check(not bad, f"every counter has a unit (bad: {bad[:4]})")
    return rows


def where(proc, table):
    """The dicts of a rocefw-stat/1 process object that hold the counters of TABLE."""
    nics, ports = proc["nics"], proc["ports"]
    qps = [q for n in nics for q in n["qps"]]
    return {
        "transport": [n["dev_counters"] for n in nics] + [q["counters"] for q in qps],
        "nic": [n["counters"] for n in nics],
        "nic_qp": [q["nic_counters"] for q in qps],
        "port": [p["counters"] for p in ports],
        "pfc": [p.get("pfc", {}) for p in ports],
        "pfc_prio": [p.get("pfc", {}) for p in ports],
        "dcqcn_rp": [q["rp_counters"] for q in qps],
        "dcqcn_np": [q["np_counters"] for q in qps],
    }[table]


def estats_written(doc):
    """WRITE rows with samples in the first process's Estats: the Estats thread publishes its
    rows on a tick every 100 ms (NIC_ES_PUB_NS), so the read that first found the process
    sending can come before the first rows (it did once, 0.27 s after the socket came up)."""
    return any(r["op"] == "write" and r["count"] > 0
               for n in first_proc(doc).get("nics", []) for r in n["estats"].get("rows", []))


def check_estats(proc, want_enabled):
    """Estats as /rocefw/estats says: absent (the command not registered), or enabled as the
    process was started (ROCEFW_ESTATS) with write rows whose quantiles are ordered."""
    es = [n["estats"] for n in proc["nics"]]
    if not any(e["available"] for e in es):
        check(all(e["enabled"] is False and "rows" not in e for e in es),
              f"{proc['file_prefix']} estats: absent (no /rocefw/estats), said so")
        return
    check(all(e["available"] and e["enabled"] is want_enabled for e in es),
          f"{proc['file_prefix']} estats: enabled is {want_enabled} on every NIC")
    rows = [r for e in es for r in e.get("rows", [])]
    bad = [r for r in rows if not all(k in r for k in (
        "qpn", "op", "status", "stage", "count", "p50", "p99", "p999", "max")) or
        not r["p50"] <= r["p99"] <= r["p999"] <= r["max"]]
    check(not bad, f"estats rows: every field, p50 <= p99 <= p999 <= max (bad: {bad[:2]})")
    if want_enabled:
        check(any(r["op"] == "write" and r["count"] > 0 for r in rows),
              f"estats: WRITE rows with samples ({len(rows)} rows)")
    else:
        check(not rows, "estats disabled: no rows")


def start_perf(prefix, core, env=None):
    return subprocess.Popen(
        [PERF, "--no-huge", "-m", "512", "--no-pci", "--no-shconf", f"--file-prefix={prefix}",
         "-l", str(core), "--log-level=lib.eal:warning", "--", "write", "bw", "-s", "4096",
         "--loopback", "-D", "20"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=env)


def first_proc(doc):
    """The first process of a rocefw-stat --json document ({} when there is none)."""
    return doc["processes"][0] if doc.get("processes") else {}


def set_up(doc):
    """Both ports and both NICs registered, each NIC's QP in RTS and sending."""
    p = first_proc(doc)
    nics = p.get("nics", [])
    return (len(p.get("ports", [])) == 2 and len(nics) == 2 and
            all(len(n["qps"]) == 1 and n["qps"][0]["state"] == "RTS" for n in nics) and
            nics[0]["counters"].get("tx_frame_bytes", 0) > 0)


def lcores_set_up(doc):
    """Four NICs, both ports' two queues listed, every queue sending and receiving frames
    handed from the other queue (the QPs cross queues)."""
    p = first_proc(doc)
    qs = [q for port in p.get("ports", []) for q in port.get("queues", [])]
    return (len(p.get("nics", [])) == 4 and len(qs) == 4 and
            all(q["counters"].get(k, 0) > 0 for q in qs for k in ("tx_pkts", "rx_pkts",
                                                                   "rx_steer_in")))


def wait_set_up(prefix, proc, ready=set_up, limit_s=60):
    """The first --json read that finds the process set up (READY). The telemetry socket comes
    up with EAL, before the tool has made its ports and NICs; on a loaded CI machine under
    ASan that took over 20 s once (a read 1 s after the socket found 1 port, no NIC). Each
    read is printed; the last is returned either way."""
    t0 = time.monotonic()
    tries = 0
    while True:
        tries += 1
        t1 = time.monotonic()
        r = stat("--file-prefix", prefix, "--json")
        t_read = time.monotonic() - t1
        doc = json.loads(r.stdout) if r.returncode == 0 else {}
        p = first_proc(doc)
        print(f"  --json read {tries} at {t1 - t0:.2f} s took {t_read:.2f} s: rc {r.returncode}, "
              f"ports {len(p.get('ports', []))}, nics {len(p.get('nics', []))}")
        if (r.returncode == 0 and ready(doc)) or proc.poll() is not None or \
                time.monotonic() - t0 > limit_s:
            return r, doc
        time.sleep(0.25)


def check_two(prefix, prefix_b, pids):
    """--file-prefix A --file-prefix B: both processes, in that order; rates for both."""
    r = stat("--file-prefix", prefix, "--file-prefix", prefix_b, "--json")
    procs = json.loads(r.stdout)["processes"] if r.returncode == 0 else []
    check([(x["file_prefix"], x["pid"]) for x in procs] == list(zip((prefix, prefix_b), pids))
          and all(x["nics"][0]["counters"]["tx_frame_bytes"] > 0 for x in procs),
          "two --file-prefix: both processes, in order, with their pids and traffic")
    if len(procs) == 2:
        check_estats(procs[1], False)
    r = stat("--file-prefix", prefix, "--file-prefix", prefix_b, "--watch", "0.5", "--count",
             "1", "--json")
    procs = json.loads(r.stdout)["processes"] if r.returncode == 0 else []
    check(len(procs) == 2 and all(x["rates"].get("nic0.tx_frame_bytes", 0) > 0 for x in procs),
          "two --file-prefix --watch: TX rates of both")
    r = stat("--all-processes", "--json")
    procs = json.loads(r.stdout)["processes"] if r.returncode == 0 else []
    found = {x["file_prefix"] for x in procs}
    check(prefix in found and prefix_b in found, "--all-processes finds both")


def check_queue_json(p, port_keys):
    """A rocefw-bench-lcores process in rocefw-stat/2: ports 0 and 1 of two queues, each
    queue's counters and the QPNs its NIC owns."""
    owner = {(n["config"]["port"], n["config"]["queue"]): n["config"]["qpn_base"]
             for n in p["nics"]}
    check(sorted(owner) == [(0, 0), (0, 1), (1, 0), (1, 1)], f"a NIC per queue: {sorted(owner)}")
    for port in p["ports"]:
        qs = port.get("queues", [])
        pid = port["port"]
        check(port.get("rx_queues") == 2 and port.get("tx_queues") == 2 and
              [q["queue"] for q in qs] == [0, 1], f"port {pid}: 2 RX, 2 TX queues, both listed")
        for q in qs:
            c = q["counters"]
            print(f"  port {pid} queue {q['queue']}: qpn {q.get('qpn_lo')}+{q.get('qpn_count')}"
                  f", rx {c['rx_pkts']} (rocev2 {c['rx_rocev2']}), steered out "
                  f"{c['rx_steered']} in {c['rx_steer_in']} full {c['rx_steer_full']}, tx "
                  f"{c['tx_pkts']}")
            check(set(c) == port_keys, f"port {pid} queue {q['queue']}: every port counter "
                  f"of counters.md ({len(port_keys)}), no other")
            check(q.get("qpn_lo") == owner.get((pid, q["queue"])) and q.get("qpn_count", 0) > 0,
                  f"port {pid} queue {q['queue']}: owns QPNs from its NIC's qpn_base "
                  f"{owner.get((pid, q['queue']))}")
            check(all(c[k] > 0 for k in ("rx_pkts", "rx_rocev2", "rx_steered", "rx_steer_in",
                                         "tx_pkts")),
                  f"port {pid} queue {q['queue']}: received, handed out and in, sent")
        # the queues are read after the port's sums, as the traffic goes on
        low = [k for k in port_keys if sum(q["counters"][k] for q in qs) < port["counters"][k]]
        check(not low, f"port {pid}: queue sums not below the port's (below: {low[:4]})")


def check_queues(prefix, rows):
    """rocefw-bench-lcores (ports 0 and 1 of two queues, QPs crossing queues, 6 s) read as
    --json, table, --watch --json and --csv."""
    port_keys = {k for t, k in rows if t == "port"}
    lc = subprocess.Popen(
        [LCORES, "--no-huge", "-m", "1024", "--no-pci", "--no-shconf", f"--file-prefix={prefix}",
         "-l", "0,1", "--log-level=lib.eal:warning", "--", "--nics", "2", "--cross",
         "--seconds", "6"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    path = os.path.join(sock_dir(), prefix, "dpdk_telemetry.v2")
    try:
        deadline = time.monotonic() + 15
        while not os.path.exists(path) and lc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        r, doc = wait_set_up(prefix, lc, lcores_set_up)
        check(r.returncode == 0, f"lcores --json exit status {r.returncode} {r.stderr.strip()}")
        check(lcores_set_up(doc), "rocefw-bench-lcores set up within 60 s: 4 NICs, 4 queues "
              "sending and receiving")
        p = first_proc(doc) or {"nics": [], "ports": []}
        check_queue_json(p, port_keys)
        r = stat("--file-prefix", prefix)
        table = re.findall(r"^ +([01]) +(\d+)\.\.(\d+)( +\d+){6}$", r.stdout, re.M)
        check(r.returncode == 0 and r.stdout.count("queues (2 RX, 2 TX):") == 2 and
              len(table) == 4 and "rdma_cm: absent" in r.stdout,
              f"table: a row per queue of both ports ({len(table)})")
        print("  " + "\n  ".join(x for x in r.stdout.splitlines() if "queue" in x or
                                 re.match(r"^ +[01] +\d+\.\.", x)))
        r = stat("--file-prefix", prefix, "--watch", "0.5", "--count", "1", "--json")
        rates = json.loads(r.stdout)["processes"][0]["rates"] if r.returncode == 0 else {}
        check(all(rates.get(f"port{pt}.q{q}.{k}", 0) > 0 for pt in (0, 1) for q in (0, 1)
                  for k in ("rx_pkts", "rx_steered", "rx_steer_in", "tx_pkts")) and
              not any(k.endswith(("qpn_lo", "qpn_count")) for k in rates),
              "--watch --json: per-queue rates, none for the owned range")
        r = stat("--file-prefix", prefix, "--csv")
        csv = {x.split(",")[1]: int(x.split(",")[2]) for x in r.stdout.splitlines()[1:]}
        q1 = p["ports"][0]["queues"][1] if p["ports"] and p["ports"][0].get("queues") else {}
        check(csv.get("port0.q1.qpn_lo") == q1.get("qpn_lo") and
              csv.get("port1.q0.rx_steer_in", 0) > 0, "--csv: portP.qQ.* counters and range")
        out, _ = lc.communicate(timeout=60)
    finally:
        if lc.poll() is None:
            lc.kill()
            out, _ = lc.communicate()
        shutil.rmtree(os.path.join(sock_dir(), prefix), ignore_errors=True)
    check(lc.returncode == 0, f"rocefw-bench-lcores exit status {lc.returncode}")
    if lc.returncode != 0:
        print(out[-2000:])


def main():
    prefix = f"rfwstat{os.getpid()}"
    rows = documented()
    check(len(rows) > 100, f"rocefw-gen-counters --list: {len(rows)} counters")
    # Estats on (1 s windows) in the first process, off in the second.
    perf = start_perf(prefix, 0, dict(os.environ, ROCEFW_ESTATS="1",
                                      ROCEFW_ESTATS_INTERVAL_MS="1000"))
    # A second process (core 1) for the several-processes reads.
    prefix_b = prefix + "b"
    perf_b = start_perf(prefix_b, 1)
    path = os.path.join(sock_dir(), prefix, "dpdk_telemetry.v2")
    try:
        deadline = time.monotonic() + 15
        while not os.path.exists(path) and perf.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        check(os.path.exists(path), f"telemetry socket {path} (with --no-shconf)")
        r, doc = wait_set_up(prefix, perf)
        check(r.returncode == 0, f"--json exit status {r.returncode} {r.stderr.strip()}")
        ready = set_up(doc)
        check(ready, "rocefw-perf set up within 60 s: 2 ports, 2 NICs, QPs in RTS, sending")
        if not ready:
            print(f"{len(failures)} check(s) failed; the rest needs the process set up")
            return 1
        check(doc["schema"] == "rocefw-stat/2" and len(doc["processes"]) == 1,
              "--json: schema rocefw-stat/2, one process")
        p = doc["processes"][0]
        check(p["pid"] == perf.pid and p["file_prefix"] == prefix and p["socket"] == path,
              "--json: the process's pid, prefix and socket")
        check(len(p["ports"]) == 2 and len(p["nics"]) == 2 and
              all(len(n["qps"]) == 1 for n in p["nics"]), "--json: 2 ports, 2 NICs, 1 QP each")
        check(all(x["rx_queues"] == 1 and x["tx_queues"] == 1 and "queues" not in x
                  for x in p["ports"]), "--json: one queue per port, no per-queue view")
        check(p["cm"] == {"available": False}, "--json: no rdma_cm (available false)")
        # rocefw-perf has no rdma_cm: the CM's tables are checked by cm_reject
        missing = [f"{t}.{k}" for t, k in rows if t not in ("cm", "cm_qp1") and
                   (not where(p, t) or any(k not in d for d in where(p, t)))]
        check(not missing, f"every documented counter is in the telemetry ({len(rows)} "
              f"counters; missing: {missing[:8]})")
        qa = p["nics"][0]["qps"][0]
        check(qa["state"] == "RTS" and qa["cc"]["cc"] in ("dcqcn", "none"),
              f"QP {qa['qpn']}: RTS, cc {qa['cc'].get('cc')}")
        tx0 = p["nics"][0]["counters"]["tx_frame_bytes"]
        check(tx0 > 0 and p["nics"][0]["dev_counters"]["tx_packets"] > 0 and
              p["ports"][0]["counters"]["tx_pkts"] > 0, f"traffic: nic0 tx_frame_bytes {tx0}")
        _, doc = wait_set_up(prefix, perf, ready=estats_written, limit_s=5)
        check_estats(first_proc(doc) or p, True)

        r = stat("--file-prefix", prefix, "--json")
        p2 = json.loads(r.stdout)["processes"][0]
        tx1 = p2["nics"][0]["counters"]["tx_frame_bytes"]
        check(tx1 > tx0 and p2["nics"][1]["dev_counters"]["rx_packets"] >
              p["nics"][1]["dev_counters"]["rx_packets"],
              f"second read: nic0 tx_frame_bytes {tx0} -> {tx1}")

        r = stat("--file-prefix", prefix, "--watch", "1", "--count", "1", "--json")
        check(r.returncode == 0, f"--watch 1 --count 1 --json exit status {r.returncode}")
        lines = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
        check(len(lines) == 1 and lines[0]["schema"] == "rocefw-stat.rates/1",
              "--watch --json: one rocefw-stat.rates/1 object per interval")
        w = lines[0]["processes"][0] if lines and lines[0]["processes"] else {}
        rates, values = w.get("rates", {}), w.get("values", {})
        dt = lines[0]["interval_s"] if lines else 0
        print(f"  rates over {dt:.3f} s: nic0.dev.tx_packets {rates.get('nic0.dev.tx_packets', 0):.0f}/s, "
              f"nic0.tx_frame_bytes {rates.get('nic0.tx_frame_bytes', 0) * 8 / 1e9:.2f} Gbit/s, "
              f"port1.rx_pkts {rates.get('port1.rx_pkts', 0):.0f}/s")
        check(0.9 < dt < 3 and all(rates.get(k, 0) > 0 for k in (
            "nic0.tx_frame_bytes", "nic0.dev.tx_bytes", "nic1.dev.rx_packets", "port0.tx_pkts",
            "port1.rx_pkts", "nic0.dev.tx_packets")), "--watch: TX/RX rates > 0 per second")
        check(all(v > 0 for v in rates.values()), "--watch: only counters that moved listed")
        check(values.get("nic0.tx_frame_bytes", 0) >=
              rates.get("nic0.tx_frame_bytes", 0) * dt * 0.99 and
              values.get("nic0.tx_frame_bytes", 0) > tx1, "--watch: value >= rate x interval, grew")

        r = stat("--file-prefix", prefix, "--watch", "0.5", "--count", "1")
        check(r.returncode == 0 and "rates over" in r.stdout and "nic0.tx_frame_bytes" in r.stdout and
              "/s" in r.stdout, "--watch as a table")
        r = stat("--file-prefix", prefix, "--csv")
        csv = r.stdout.splitlines()
        check(r.returncode == 0 and csv[0] == "file_prefix,counter,value" and
              any(x.startswith(f"{prefix},nic0.tx_frame_bytes,") for x in csv), "--csv")
        r = stat("--file-prefix", prefix)
        check(r.returncode == 0 and "nic0.tx_frame_bytes" in r.stdout and "estats" in r.stdout and
              f"pid {perf.pid}" in r.stdout and
              "rdma_cm: absent (no /rocefw/cm in this process)" in r.stdout and
              "queues" not in r.stdout, "table: counters, QP line, estats line, rdma_cm absent")
        print("  " + "\n  ".join(r.stdout.splitlines()[:4]))
        path_b = os.path.join(sock_dir(), prefix_b, "dpdk_telemetry.v2")
        while not os.path.exists(path_b) and perf_b.poll() is None and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        check_two(prefix, prefix_b, (perf.pid, perf_b.pid))

        tool = shutil.which("dpdk-telemetry.py")
        check(tool is not None, "dpdk-telemetry.py installed (Debian dpdk-dev)")
        if tool is not None:
            r = subprocess.run([tool, "-f", prefix], input="/rocefw/nic,0\n",
                               capture_output=True, text=True, timeout=20)
            rep = {}
            for line in r.stdout.splitlines():
                line = line.strip()
                if line.startswith("{"):
                    rep.update(json.loads(line))
            nic = rep.get("/rocefw/nic") or {}
            c = nic.get("counters", {})
            ok = (set(c) == set(p["nics"][0]["counters"]) and
                  set(nic.get("dev_counters", {})) == set(p["nics"][0]["dev_counters"]) and
                  c.get("tx_frame_bytes", 0) >= tx1)
            if not ok:
                # Once in several clean-clone runs this read came back without the NIC's
                # reply; what the tool said is the only trace of why.
                print(f"  dpdk-telemetry.py exit {r.returncode}\n  stdout: {r.stdout[-1500:]!r}"
                      f"\n  stderr: {r.stderr[-1500:]!r}")
            check(ok, f"dpdk-telemetry.py /rocefw/nic,0: same counters, tx_frame_bytes "
                  f"{c.get('tx_frame_bytes')}"
                  f" >= {tx1}")
        check(perf.poll() is None and perf_b.poll() is None,
              "both rocefw-perf still running through the reads")
    finally:
        for pr, pf in ((perf, prefix), (perf_b, prefix_b)):
            try:
                out, _ = pr.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                pr.kill()
                out, _ = pr.communicate()
            check(pr.returncode == 0, f"rocefw-perf ({pf}) exit status {pr.returncode}")
            if pr.returncode != 0:
                print(out[-2000:])
            shutil.rmtree(os.path.join(sock_dir(), pf), ignore_errors=True)

    check_queues(prefix + "q", rows)

    # Errors: the socket path named, options named.
    r = stat("--file-prefix", prefix + "gone")
    check(r.returncode == 1 and os.path.join(sock_dir(), prefix + "gone", "dpdk_telemetry.v2")
          in r.stderr, f"missing prefix: exit 1, path named: {r.stderr.strip()}")
    r = stat("--file-prefix", prefix, "--file-prefix", prefix + "gone")
    check(r.returncode == 1, "one missing prefix of several: exit 1")
    for args, name in ((["--bogus"], "--bogus"), (["--watch", "0"], "--watch"),
                       (["--watch", "x"], "--watch"), (["--count", "2"], "--count"),
                       (["--json", "--csv"], "--csv"), (["--file-prefix", "a/b"], "a/b"),
                       (["extra"], "extra"), (["--timeout-ms", "-1"], "--timeout-ms")):
        r = stat(*args)
        check(r.returncode == 2 and name in r.stderr,
              f"bad option {' '.join(args)}: exit 2, named: {r.stderr.strip().splitlines()[0]}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
