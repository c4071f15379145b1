#!/usr/bin/env python3
"""rdma_cm programs on rocefw (docs/rdma-cm.md): Debian's unmodified rdmacm-utils between two
rocefw-run processes over net_memif, each with its own address; the CM runs on each device's
QP1 (no kernel rdma_cm).

Groups:
  rping:SIZE:COUNT   rping -s / rping -c -V (the client verifies every ping's data) with
                     SIZE-byte buffers, COUNT pings: both exit 0, the client printed COUNT
                     verified pings, and the server saw the disconnect.
  ucmatose           ucmatose server / client (-c 2 connections, messages both ways).
  rdma_server        rdma_server / rdma_client (librdmacm's synchronous endpoint API).
  perftest:TOOL      perftest's TOOL (ib_write_bw, ib_read_lat, ...) with -R (connection by
                     rdma_cm) on both ends: both exit 0, the result row has the iterations.
  qperf:TEST         qperf -cm1 TEST (rc_bw, rc_lat): qperf's control connection is kernel
                     TCP, so each end runs in a network namespace whose veth has the same
                     address as its rocefw device; the server forks a child per test, whose
                     NIC comes up then (one test per server: DPDK leaves its memif socket).
  reject             rping -c to an address and port nobody listens on: REJECTED, exit != 0,
                     and quickly (the REJ, not a timeout); then, the server still running,
                     rocefw-stat shows its rdma_cm (every counter of the CM's and QP1's
                     tables in counters.md, the REJ counted, the same values as /rocefw/cm).
  exit_after_disconnect
                     rping -s, and a client (cm_exit_client.py, pyverbs, --progress inline:
                     no thread drives its NIC) that connects, calls rdma_disconnect and exits
                     at once: the DREQ goes out as the process exits (the provider's exit
                     drives the NIC until the CM owes nothing), and the server sees
                     DISCONNECTED and exits by itself within 10 s.
  cmtime:N           cmtime (librdmacm's connection set-up timer) with N connections asked
                     for at once (rocefw-run --max-qp above N): the client exits 0 with its
                     table of steps, its CM established N, QP1 dropped no MAD; the figure
                     is docs/scale.md's rdma_cm churn (tools/bench/bench_cm_churn.sh).

usage: cm_run.py ROCEFW_RUN SANITIZE GROUP [ROCEFW_STAT ROCEFW_GEN_COUNTERS]
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

RUN, SANITIZE, GROUP = sys.argv[1:4]
STAT, GEN = (sys.argv[4:6] + [None, None])[:2]
failures = []
SERVER_IP, CLIENT_IP = "10.0.0.1", "10.0.0.2"
RUN_EXTRA = []  # more rocefw-run options (cmtime: --max-qp)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def need(tool):
    if shutil.which(tool) is None:
        print(f"FAIL: {tool} is not installed (tools/install-deps.sh installs rdmacm-utils)")
        sys.exit(1)


def side(sock, role, ip, extra_eal=""):
    eal = f"--vdev=net_memif0,role={role},socket={sock},socket-abstract=no" + extra_eal
    # stdbuf: the programs' stdout is a pipe here; line buffering shows progress as it comes
    return [RUN] + RUN_EXTRA + ["--eal", eal, "--ip", ip, "--", "stdbuf", "-oL"]


def wait_line(proc, pattern, secs=30):
    """Read @proc's stdout until a line matches; the lines read so far."""
    seen = []
    end = time.time() + secs
    while time.time() < end:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if re.search(pattern, line):
            return True, seen
    return False, seen


def unix_listening(path):
    """Whether a unix socket bound to @path is listening (/proc/net/unix: flag __SO_ACCEPTCON
    0x10000), without connecting to it (a memif server would take that for its client)."""
    try:
        with open("/proc/net/unix") as f:
            for line in f.readlines()[1:]:
                fld = line.split()
                if len(fld) >= 8 and fld[7] == path and int(fld[3], 16) & 0x10000:
                    return True
    except OSError:
        pass
    return False


def pair(server, client, ready, timeout=120, stop_server=False, ready_secs=30,
         server_eal="", on_ready=None, after_client=None, server_secs=60, client_run=None):
    """Start @server (@server_eal: more EAL options), wait for its @ready line, call
    @on_ready(), run @client, call @after_client() (the server still running), then stop the
    server if @stop_server (else wait @server_secs for it to exit); both outputs. @client_run:
    rocefw-run options for the client only."""
    tmp = tempfile.mkdtemp(prefix="rocefw-cm-")
    sock = os.path.join(tmp, "memif.sock")
    srv = subprocess.Popen(side(sock, "server", SERVER_IP, server_eal) + server,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    cli = None
    try:
        if ready:
            ok, seen = wait_line(srv, ready, ready_secs)
            check(ok, f"server ready ({ready!r})")
        else:  # qperf's server says nothing: its TCP port is ready once the process runs
            seen = []
            time.sleep(1)
        # The server's NIC is up once its memif socket listens (rdma_server and perftest
        # print their line before they open the device): a memif client that finds no
        # listener gives up for good (DPDK 22.11), so the client starts only then.
        end = time.time() + 30
        while "memif" in " ".join(side(sock, "server", SERVER_IP)) and \
                not unix_listening(sock) and time.time() < end:
            time.sleep(0.05)
        if on_ready is not None:
            on_ready()
        t0 = time.time()
        cside = side(sock, "client", CLIENT_IP)
        if client_run:
            cside[1:1] = client_run
        cli = subprocess.run(cside + client, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=timeout)
        secs = time.time() - t0
        if after_client is not None:
            after_client()
        # a client that failed leaves the server waiting for it for ever: stop it now
        if stop_server or cli.returncode != 0:
            srv.terminate()
        so, _ = srv.communicate(timeout=server_secs)
    except subprocess.TimeoutExpired:
        srv.kill()
        so, _ = srv.communicate()
        print("server:\n" + "".join(seen) + so)
        print("client:\n" + (cli.stdout if cli is not None else "(still running: killed)"))
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    so = "".join(seen) + so
    print("server:\n" + so + "client:\n" + cli.stdout, flush=True)
    return srv.returncode, so, cli.returncode, cli.stdout, secs


def cm_telemetry(prefix):
    """/rocefw/cm of the server (EAL --file-prefix), once its rdma_cm has started."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dpdk"))
    from telemetry_client import Telemetry
    t = Telemetry(prefix)
    end = time.time() + 10
    r = t.query("/rocefw/cm") or {}  # null until the rdma_cm registers the command
    while r.get("started") != 1 and time.time() < end:
        time.sleep(0.05)
        r = t.query("/rocefw/cm") or {}
    t.close()
    check(r.get("schema") == "rocefw.cm/1" and r.get("started") == 1,
          f"telemetry /rocefw/cm: schema, started ({r.get('schema')}, {r.get('started')})")
    check(set(r.get("cm", {})) >= {"mad_rx", "mad_tx", "established", "req_no_listener"} and
          set(r.get("qp1", {})) >= {"mad_rx", "mad_tx"} and r["cm"]["established"] == 0,
          "telemetry /rocefw/cm: the CM's and QP1's counters, nothing established yet")


def telemetry_cm(prefix):
    """/rocefw/cm read directly (DPDK's protocol, tests/dpdk/telemetry_client.py)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dpdk"))
    from telemetry_client import Telemetry
    t = Telemetry(prefix)
    r = t.query("/rocefw/cm") or {}
    t.close()
    return r


def stat_cm(prefix):
    """rocefw-stat on the rping server after it rejected one REQ: its rdma_cm in --json (every
    counter counters.md lists for the CM and QP1, the values /rocefw/cm gives), the table and
    --csv; its one-queue memif port has no per-queue view."""
    if STAT is None or GEN is None:
        print("NOTE: no ROCEFW_STAT / ROCEFW_GEN_COUNTERS arguments: rocefw-stat not checked")
        return
    doc = {"cm": set(), "cm_qp1": set()}
    for line in subprocess.run([GEN, "--list"], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        table, key, _ = line.split("\t")
        if table in doc:
            doc[table].add(key)
    r = subprocess.run([STAT, "--file-prefix", prefix, "--json"], capture_output=True,
                       text=True, timeout=30)
    check(r.returncode == 0, f"rocefw-stat --json exits 0 ({r.returncode} {r.stderr.strip()})")
    out = json.loads(r.stdout) if r.returncode == 0 else {"processes": [{}]}
    p = out["processes"][0]
    cm = p.get("cm", {})
    direct = telemetry_cm(prefix)
    print(f"rocefw-stat: cm {cm}")
    check(out.get("schema") == "rocefw-stat/2" and cm.get("available") is True and
          cm.get("started") is True and cm.get("source_schema") == "rocefw.cm/1",
          "rocefw-stat/2: rdma_cm available, started, from rocefw.cm/1")
    check(set(cm.get("cm", {})) == doc["cm"] and set(cm.get("qp1", {})) == doc["cm_qp1"],
          f"every counter of counters.md's CM ({len(doc['cm'])}) and QP1 "
          f"({len(doc['cm_qp1'])}) tables, no other")
    c, q = cm.get("cm", {}), cm.get("qp1", {})
    check(c.get("req_no_listener", 0) >= 1 and c.get("rejected_tx", 0) >= 1 and
          c.get("mad_rx", 0) >= 1 and c.get("mad_tx", 0) >= 1 and c.get("established") == 0 and
          q.get("mad_rx", 0) >= 1 and q.get("mad_tx", 0) >= 1,
          "the REJ counted: req_no_listener, rejected_tx, CM and QP1 MADs both ways")
    # nothing moves on the server once the client has gone: the same values
    check(direct.get("cm") == c and direct.get("qp1") == q,
          "the values /rocefw/cm gives (dpdk telemetry read directly)")
    check([(x.get("rx_queues"), "queues" in x) for x in p.get("ports", [])] == [(1, False)],
          "one memif port, one RX queue: no per-queue view")
    r = subprocess.run([STAT, "--file-prefix", prefix], capture_output=True, text=True,
                       timeout=30)
    print(r.stdout, end="")
    check(r.returncode == 0 and
          re.search(r"rdma_cm: established 0, timeouts 0, REJ sent [1-9]", r.stdout) and
          re.search(r"^  cm\.req_no_listener +[1-9]", r.stdout, re.M) is not None and
          re.search(r"^  cm\.qp1\.mad_rx +[1-9]", r.stdout, re.M) is not None,
          "table: the rdma_cm line and cm.*, cm.qp1.* counters")
    r = subprocess.run([STAT, "--file-prefix", prefix, "--csv", "--all"], capture_output=True,
                       text=True, timeout=30)
    rows = {x.split(",")[1] for x in r.stdout.splitlines()[1:]}
    check(r.returncode == 0 and {"cm." + k for k in doc["cm"]} |
          {"cm.qp1." + k for k in doc["cm_qp1"]} <= rows, "--csv --all: every cm.* counter")


def cm_stats(out, side_name):
    """ROCEFW_STATS=1 at exit: the CM's counters beside the transport's."""
    def val(name):
        m = re.search(rf"^rocefw-verbs: {name} (\d+)$", out, re.M)
        return int(m.group(1)) if m else 0
    check(val("cm established") == 1 and val("cm mad_tx") >= 2 and val("qp1 mad_rx") >= 1,
          f"{side_name}: ROCEFW_STATS shows the CM (established {val('cm established')}, "
          f"mad_tx {val('cm mad_tx')}, QP1 mad_rx {val('qp1 mad_rx')})")


def group_rping(size, count):
    need("rping")
    port = str(7000 + os.getpid() % 1000)
    common = ["-a", SERVER_IP, "-p", port, "-S", size, "-C", count]
    src, so, crc, co, _ = pair(["rping", "-s", "-d"] + common,
                               ["rping", "-c", "-V", "-v"] + common, r"rdma_listen")
    check(src == 0, f"rping server exits 0 ({src})")
    check(crc == 0, f"rping client exits 0 ({crc})")
    pings = re.findall(r"ping data: rdma-ping-(\d+): ", co)
    check(len(pings) == int(count), f"client: {count} verified pings ({len(pings)})")
    check([int(p) for p in pings] == list(range(int(count))), "pings in order 0..COUNT-1")
    check("DISCONNECT EVENT" in so, "server: DISCONNECTED event")


def group_ucmatose():
    need("ucmatose")
    port = str(7000 + os.getpid() % 1000)
    src, so, crc, co, _ = pair(["ucmatose", "-p", port, "-c", "2", "-C", "10"],
                               ["ucmatose", "-s", SERVER_IP, "-p", port, "-c", "2", "-C",
                                "10"], r"cmatose: starting server")
    check(src == 0, f"ucmatose server exits 0 ({src})")
    check(crc == 0, f"ucmatose client exits 0 ({crc})")
    check("completing sends" in so and "receiving data transfers" in so,
          "server: data sent and received")
    check("receiving data transfers" in co and "sending replies" in co,
          "client: data received and answered")
    for name, out in [("server", so), ("client", co)]:
        check("data transfers complete" in out and "return status 0" in out,
              f"{name}: transfers complete, status 0")
    check("disconnected" in so, "server: disconnected")


def group_rdma_server():
    need("rdma_server")
    port = str(7000 + os.getpid() % 1000)
    # ROCEFW_STATS here, not with rping: rping's CM thread reads its channel while main
    # destroys it and exits, and a slower exit (the counters printed) lets it see EBADF
    # and telemetry (--file-prefix), read before the client comes
    os.environ["ROCEFW_STATS"] = "1"
    prefix = f"rfwcm{os.getpid()}"
    src, so, crc, co, _ = pair(["rdma_server", "-p", port],
                               ["rdma_client", "-s", SERVER_IP, "-p", port],
                               r"rdma_server: start", server_eal=f" --file-prefix={prefix}",
                               on_ready=lambda: cm_telemetry(prefix))
    del os.environ["ROCEFW_STATS"]
    cm_stats(so, "rdma_server")
    cm_stats(co, "rdma_client")
    check(src == 0, f"rdma_server exits 0 ({src})")
    check(crc == 0, f"rdma_client exits 0 ({crc})")
    check("rdma_server: end 0" in so, "rdma_server: end 0")
    check("rdma_client: end 0" in co, "rdma_client: end 0")


def group_perftest(tool):
    need(tool)
    port = str(18000 + os.getpid() % 1000)
    pt = [tool, "-R", "-d", "rocefw0", "-x", "0", "-n", "500", "-p", port]
    # perftest -R connects twice on the port: its control channel, then (after the server
    # has destroyed that listener and both have synced over the channel) its test QPs, the
    # client's REQ racing the server's new rdma_listen. The CM holds a REQ that finds no
    # listener for a while (docs/rdma-cm.md, listen grace): no REJ 8, no retry here (a
    # client started later changes nothing in that race; perftest 4.5's own retry crashes).
    src, so, crc, co, _ = pair(pt, pt + [SERVER_IP], r"Waiting for client to connect")
    check(src == 0, f"{tool} server exits 0 ({src})")
    check(crc == 0, f"{tool} client exits 0 ({crc})")
    check("Data ex. method : rdma_cm" in co, "client: data exchange by rdma_cm")
    check(re.search(r"^\s*\d+\s+500\s+[0-9.]+\s+[0-9.]+", co, re.M) is not None,
          "client: result row with 500 iterations")


def netns_pair():
    """Two namespaces, each with a veth carrying its rocefw address for the kernel's TCP and
    a second, address-less veth for its rocefw port (af_packet: unlike memif, either end may
    come up first, and qperf's server starts its NIC in a child forked per test)."""
    tag = str(os.getpid() % 10000)
    ns = ["rfwcm-a" + tag, "rfwcm-b" + tag]
    cmds = [["ip", "netns", "add", ns[0]], ["ip", "netns", "add", ns[1]]]
    for pfx in ("rck", "rcr"):
        cmds.append(["ip", "link", "add", pfx + "a" + tag, "netns", ns[0], "type", "veth",
                     "peer", "name", pfx + "b" + tag, "netns", ns[1]])
    for n, ip, end in ((ns[0], SERVER_IP, "a"), (ns[1], CLIENT_IP, "b")):
        cmds += [["ip", "-n", n, "addr", "add", ip + "/24", "dev", "rck" + end + tag],
                 ["ip", "-n", n, "link", "set", "rck" + end + tag, "up"],
                 ["ip", "-n", n, "link", "set", "rcr" + end + tag, "up"],
                 ["ip", "-n", n, "link", "set", "lo", "up"]]
    for c in cmds:
        r = subprocess.run(c, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL: {' '.join(c)}: {r.stderr.strip()} (network namespaces need root)")
            for n in ns:
                subprocess.run(["ip", "netns", "del", n], capture_output=True)
            sys.exit(1)
    return ns, tag


def group_qperf(test):
    need("qperf")
    ns, tag = netns_pair()
    global side
    plain = side

    def in_ns(sock, role, ip, extra_eal=""):
        end = "a" if role == "server" else "b"
        eal = f"--vdev=net_af_packet0,iface=rcr{end}{tag}" + extra_eal
        return ["ip", "netns", "exec", ns[0] if role == "server" else ns[1], RUN, "--eal",
                eal, "--ip", ip, "--"]
    side = in_ns
    try:
        src, so, crc, co, _ = pair(["qperf", "-lp", "19766"],
                                   ["qperf", SERVER_IP, "-lp", "19766", "-t", "2", "-cm1", test],
                                   r"", stop_server=True)
    finally:
        side = plain
        for n in ns:
            subprocess.run(["ip", "netns", "del", n], capture_output=True)
    check(crc == 0, f"qperf client exits 0 ({crc})")
    if test.endswith("_bw"):
        check(re.search(r"bw\s+=\s+[0-9.]+ [KMG]B/sec", co) is not None, f"{test}: bandwidth")
    else:
        check(re.search(r"latency\s+=\s+[0-9.]+ [mun]?s", co) is not None, f"{test}: latency")
    check("unexpected event" not in co and "failed" not in co, f"{test}: no CM error")


def group_exit_after_disconnect():
    need("rping")
    if not os.path.exists("/usr/lib/python3/dist-packages/pyverbs"):
        print("SKIP: python3-pyverbs not installed (tools/install-deps.sh installs it)")
        sys.exit(77)
    port = str(7000 + os.getpid() % 1000)
    client = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cm_exit_client.py")
    try:
        src, so, crc, co, _ = pair(["rping", "-s", "-d", "-a", SERVER_IP, "-p", port, "-C", "1"],
                                   ["/usr/bin/python3", client, CLIENT_IP, SERVER_IP, port],
                                   r"rdma_listen", timeout=30, server_secs=10,
                                   client_run=["--progress", "inline"])
    except subprocess.TimeoutExpired:
        check(False, "server: DISCONNECTED within 10 s of the client's exit (it hung)")
        return
    check(crc == 0 and "disconnected, exiting" in co, f"client: connected, disconnected ({crc})")
    check("ESTABLISHED" in so, "server: ESTABLISHED (the client's RTU went out)")
    check("DISCONNECT EVENT" in so, "server: DISCONNECTED event")


def group_cmtime(n):
    need("cmtime")
    port = str(7000 + os.getpid() % 1000)
    RUN_EXTRA.extend(["--max-qp", str(int(n) + 64)])
    os.environ["ROCEFW_STATS"] = "1"
    # cmtime's server never exits by itself: stopped once the client is done
    _, _, crc, co, secs = pair(["cmtime", "-b", SERVER_IP, "-p", port, "-c", n],
                               ["cmtime", "-s", SERVER_IP, "-p", port, "-c", n], None,
                               stop_server=True)
    del os.environ["ROCEFW_STATS"]
    check(crc == 0, f"cmtime client exits 0 ({crc})")
    steps = re.findall(r"^(create id|resolve addr|resolve route|create qp|connect|disconnect|"
                       r"destroy)\s*:\s+([\d.]+)", co, re.M)
    check(len(steps) == 7, f"client: all 7 steps timed ({[s[0] for s in steps]})")
    m = re.search(r"^rocefw-verbs: cm established (\d+)$", co, re.M)
    check(m is not None and int(m.group(1)) == int(n),
          f"client: the CM established {n} connections ({m.group(1) if m else 0})")
    check(re.search(r"^rocefw-verbs: qp1 mad_tx_dropped", co, re.M) is None,
          "client: QP1 dropped no MAD (its send queue backlog held the burst)")
    print(f"cmtime -c {n}: {secs:.2f} s for the client; steps (ms total): {dict(steps)}")


def group_reject():
    need("rping")
    port = str(7000 + os.getpid() % 1000)
    # The "server" here is a program that opens the device and listens on nothing (a plain
    # ibv_devinfo would exit at once): an rping server on another port.
    prefix = f"rfwcmrej{os.getpid()}"
    src, so, crc, co, secs = pair(["rping", "-s", "-d", "-a", SERVER_IP, "-p", "1"],
                                  ["rping", "-c", "-a", SERVER_IP, "-p", port, "-C", "1"],
                                  r"rdma_listen", timeout=60, stop_server=True,
                                  server_eal=f" --file-prefix={prefix}",
                                  after_client=lambda: stat_cm(prefix))
    # EAL leaves its runtime directory (the socket, the config) behind: not ours to keep
    shutil.rmtree(os.path.join("/var/run/dpdk" if os.getuid() == 0 else os.path.join(
        os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk"), prefix), ignore_errors=True)
    check(crc != 0, f"rping client fails ({crc})")
    check(re.search(r"RDMA_CM_EVENT_REJECTED, error 8\b", co) is not None,
          "client: REJECTED with reason 8 (invalid service ID)")
    check(secs < 10, f"rejected at once ({secs:.1f} s)")


def main():
    g = GROUP.split(":")
    if "address" in SANITIZE:
        print("SKIP: this is an ASan build (b_sanitize=" + SANITIZE + "): an ASan-built "
              "librocefw-verbs.so cannot be LD_PRELOADed into Debian's unsanitized programs. "
              "The rdma_cm suite runs in the plain build tree.", flush=True)
        sys.exit(77)
    if g[0] == "rping":
        group_rping(g[1], g[2])
    elif g[0] == "ucmatose":
        group_ucmatose()
    elif g[0] == "rdma_server":
        group_rdma_server()
    elif g[0] == "perftest":
        group_perftest(g[1])
    elif g[0] == "qperf":
        group_qperf(g[1])
    elif g[0] == "reject":
        group_reject()
    elif g[0] == "exit_after_disconnect":
        group_exit_after_disconnect()
    elif g[0] == "cmtime":
        group_cmtime(g[1])
    else:
        sys.exit(f"unknown group {GROUP}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)


main()
