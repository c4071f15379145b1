#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The rocefw verbs device with Debian's unmodified ibverbs-utils (docs/verbs.md).

Groups (one meson test each):
  abi           every verb librocefw-verbs.so exports carries the version Debian's
                libibverbs.so.1 exports that name with by default (objdump -T of both), so a
                program's name@version reference binds to ours when preloaded.
  devinfo       rocefw-run -- ibv_devices / ibv_devinfo -v with no set-up: rocefw0 listed with
                its GUID; port ACTIVE, Ethernet, GID[0] = the IPv4-mapped address, RoCE v2;
                --ip and --dev reach the library; without rocefw-run libibverbs finds nothing.
  options       rocefw-run's bad options exit 2 naming the option, before running anything.
  unsupported   a program needing a verb rocefw lacks (ibv_xsrq_pingpong: XRC domains) gets a
                one-line message naming the verb and fails cleanly, no signal.
  pingpong:MODE[:ARGS]  ibv_rc_pingpong -d rocefw0 -g 0 -c (buffer contents validated) between
                two rocefw-run processes over net_memif, progress MODE (thread|inline), extra
                pingpong ARGS (comma-separated, e.g. -e for CQ events); both sides' output
                checked (addresses exchanged, iterations done).
  uc_pingpong:MODE[:ARGS]  the same with ibv_uc_pingpong (UC QPs: no ACKs, a loss costs its
                message).
  ud_pingpong:MODE[:ARGS]  the same with ibv_ud_pingpong (UD QPs, address handles, the GRH).
  srq_pingpong:MODE[:ARGS]  the same with ibv_srq_pingpong (16 RC QPs on one shared receive
                queue per side, unless -q says otherwise).
  pyverbs       rdma-core's own test suite (python3-pyverbs ships it, gzip-compressed, under
                /usr/share/doc/rdma-core/tests: unpacked to a temporary directory) with
                run_tests.py --dev rocefw0 --gid 0 through rocefw-run on the loopback port: no
                failure or error, and every test of pyverbs_pass.txt (beside this script)
                passes. Skips are counted and printed by reason.
  async         port events: a net_tap port (needs root and /dev/net/tun); pyverbs waits in
                ibv_get_async_event while the tap interface is set down, then up:
                IBV_EVENT_PORT_ERR then IBV_EVENT_PORT_ACTIVE, and ibv_query_port agrees.
  qp_events     affiliated QP events (pyverbs on the loopback port): IBV_EVENT_COMM_EST when a
                SEND reaches a QP in RTR, IBV_EVENT_QP_ACCESS_ERR on the responder of a WRITE
                with a wrong R_Key, IBV_EVENT_QP_LAST_WQE_REACHED when an SRQ's QP goes to ERR.
  limits        ibv_modify_qp with max_rd_atomic 128 (perftest copies rxe's advertised READ
                depth): EINVAL and one line naming the field and the device's limit (16).
  perftest:TOOL[:ARGS]  Debian's perftest TOOL (ib_write_bw, ib_read_lat, ...) -d rocefw0 -x 0
                on both ends over net_memif, thread progress: both exit 0, both print the
                result row with the iterations asked for and the peer's GID.

usage: verbs_run.py ROCEFW_RUN LIBROCEFW_VERBS SANITIZE GROUP
The library cannot be preloaded into unsanitized binaries from an ASan build: there every group
but abi and options is skipped (exit 77), saying so.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

RUN, LIB, SANITIZE, GROUP = sys.argv[1:5]
RUN, LIB = os.path.abspath(RUN), os.path.abspath(LIB)
REAL_LIB = "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def run(args, timeout=60, env=None):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def need(tool):
    if shutil.which(tool) is None:
        print(f"SKIP: {tool} not installed (tools/install-deps.sh installs ibverbs-utils)")
        sys.exit(77)


def dynsyms(path):
    """{name: version} of the defined, default-version dynamic symbols of @path."""
    out = subprocess.run(["objdump", "-T", path], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) < 7 or "*UND*" in line or not f[-1].startswith(("ibv_", "_ibv_")):
            continue
        ver = f[-2]
        if ver.startswith("("):  # a non-default (compatibility) version
            continue
        syms[f[-1]] = ver
    return syms


def group_abi():
    mine, real = dynsyms(LIB), dynsyms(REAL_LIB)
    check(len(mine) >= 50, f"librocefw-verbs.so exports {len(mine)} verbs")
    for name, ver in sorted(mine.items()):
        check(real.get(name) == ver,
              f"{name}@@{ver} (libibverbs.so.1: {name}@@{real.get(name)})")


def group_devinfo():
    need("ibv_devinfo")
    rc, out, err = run(["ibv_devices"])
    check(rc != 0 or "rocefw0" not in out, "without rocefw-run: no rocefw0 "
          f"(ibv_devices rc {rc}: {err.strip()[:60]})")
    rc, out, err = run([RUN, "--", "ibv_devices"])
    check(rc == 0 and re.search(r"^\s*rocefw0\s+027266770a000001\s*$", out, re.M) is not None,
          f"ibv_devices lists rocefw0 with its GUID (rc {rc})\n{out}{err}")
    rc, out, err = run([RUN, "--", "ibv_devinfo", "-v"])
    print(out)
    check(rc == 0, f"ibv_devinfo -v exits 0 (rc {rc}) {err}")
    for pat, what in [
        (r"hca_id:\s+rocefw0", "hca_id rocefw0"),
        (r"state:\s+PORT_ACTIVE \(4\)", "port ACTIVE"),
        (r"link_layer:\s+Ethernet", "link layer Ethernet"),
        (r"GID\[\s*0\]:\s+::ffff:10\.0\.0\.1, RoCE v2", "GID[0] ::ffff:10.0.0.1, RoCE v2"),
        (r"active_mtu:\s+4096 \(5\)", "active_mtu 4096 (the loopback port)"),
        (r"max_qp_rd_atom:\s+16", "max_qp_rd_atom 16"),
        (r"atomic_cap:\s+ATOMIC_HCA", "atomic_cap ATOMIC_HCA"),
        (r"max_mr_size:\s+0x80000000", "max_mr_size 2 GiB"),
    ]:
        check(re.search(pat, out) is not None, what)
    check(len(re.findall(r"GID\[", out)) == 1, "one GID in the table (15 empty entries)")
    check(re.search(r"gid_tbl_len:\s+16", out) is not None, "gid_tbl_len 16")
    rc, out, err = run([RUN, "--ip", "192.0.2.7", "--dev", "myrdma3", "--", "ibv_devinfo", "-v"])
    check(rc == 0 and "hca_id:\tmyrdma3" in out and
          re.search(r"GID\[\s*0\]:\s+::ffff:192\.0\.2\.7, RoCE v2", out) is not None,
          f"--ip 192.0.2.7 --dev myrdma3 reach the library (rc {rc})")
    rc, out, err = run([RUN, "--", "ibv_devinfo", "-d", "rocefw0", "-i", "1"])
    check(rc == 0 and "PORT_ACTIVE" in out, "ibv_devinfo -d rocefw0 -i 1")


def group_options():
    for args, opt in [(["--bogus"], "--bogus"), (["--ip", "1.2.3"], "--ip 1.2.3"),
                      (["--progress", "fast"], "--progress fast"),
                      (["--eal", "--vdev=net_null0"], "--eal"), (["--ip"], "--ip"),
                      (["--dev", "x" * 40], "--dev"), ([], "--")]:
        rc, out, err = run([RUN] + args + (["--", "true"] if args and args != ["--ip"] else []))
        check(rc == 2 and err.startswith("rocefw-run: " + opt),
              f"rocefw-run {' '.join(args)[:40]}: exit 2 naming {opt} (rc {rc}: {err.strip()})")
    rc, out, err = run([RUN, "--", "/nonexistent/prog"])
    check(rc == 127 and "/nonexistent/prog" in err, f"missing PROGRAM: exit 127 (rc {rc})")
    rc, out, err = run([RUN, "--help"])
    check(rc == 0 and "usage: rocefw-run" in out, "--help")


def group_unsupported():
    need("ibv_xsrq_pingpong")
    rc, out, err = run([RUN, "--", "ibv_xsrq_pingpong", "-d", "rocefw0", "-g", "0", "-p",
                        str(free_port())], timeout=30)
    print(out + err)
    check(rc > 0, f"ibv_xsrq_pingpong fails with an exit status, not a signal (rc {rc})")
    check(re.search(r"^rocefw-verbs: ibv_open_xrcd: not supported by rocefw0 \(.*XRC.*\): "
                    r"EOPNOTSUPP$", err, re.M) is not None,
          "one line naming ibv_open_xrcd and XRC")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def listening(port):
    """Whether a TCP socket listens on @port (from /proc/net/tcp: connecting to it would be
    taken by ibv_rc_pingpong's server as its one client)."""
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                for line in f.readlines()[1:]:
                    fld = line.split()
                    if fld[3] == "0A" and int(fld[1].split(":")[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


def wait_listen(port, proc, secs=30):
    end = time.time() + secs
    while time.time() < end and proc.poll() is None:
        if listening(port):
            return True
        time.sleep(0.1)
    return False


def group_pingpong(mode, extra, prog="ibv_rc_pingpong"):
    need(prog)
    tmp = tempfile.mkdtemp(prefix="rocefw-verbs-")
    sock = os.path.join(tmp, "memif.sock")
    port = free_port()
    pp = [prog, "-d", "rocefw0", "-g", "0", "-c", "-p", str(port)] + extra

    def side(role, ip):
        eal = f"--vdev=net_memif0,role={role},socket={sock},socket-abstract=no"
        return [RUN, "--progress", mode, "--eal", eal, "--ip", ip, "--"]

    try:
        srv = subprocess.Popen(side("server", "10.0.0.1") + pp, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        # ibv_rc_pingpong's client connects once: wait until the server listens.
        check(wait_listen(port, srv), "server listens")
        cli = subprocess.run(side("client", "10.0.0.2") + pp + ["127.0.0.1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             timeout=120)
        so, se = srv.communicate(timeout=60)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("server:\n" + so + se + "client:\n" + cli.stdout + cli.stderr)
    check(srv.returncode == 0, f"server exits 0 ({srv.returncode})")
    check(cli.returncode == 0, f"client exits 0 ({cli.returncode})")
    for name, out, me, peer in [("server", so, "10.0.0.1", "10.0.0.2"),
                                ("client", cli.stdout, "10.0.0.2", "10.0.0.1")]:
        check(re.search(r"local address:\s+LID 0x0000, QPN 0x[0-9a-f]+, PSN 0x[0-9a-f]+[,:] "
                        rf"GID ::ffff:{re.escape(me)}", out) is not None,
              f"{name}: local GID ::ffff:{me}")
        check(re.search(rf"remote address:.*GID ::ffff:{re.escape(peer)}", out) is not None,
              f"{name}: remote GID ::ffff:{peer}")
        iters = re.search(r"(\d+) iters in ([0-9.]+) seconds = ([0-9.]+) usec/iter", out)
        n = "-n" in extra and extra[extra.index("-n") + 1] or "1000"
        check(iters is not None and iters.group(1) == n, f"{name}: {n} iterations done")
        if iters:
            print(f"{name}: {iters.group(3)} us/iter")


def two_procs(server, client, port, timeout=120):
    srv = subprocess.Popen(server, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(wait_listen(port, srv), "server listens")
    try:
        cli = subprocess.run(client, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             timeout=timeout)
        so, se = srv.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        srv.kill()
        raise
    print("server:\n" + so + se + "client:\n" + cli.stdout + cli.stderr)
    return srv.returncode, so, cli.returncode, cli.stdout


def group_perftest(tool, extra):
    need(tool)
    tmp = tempfile.mkdtemp(prefix="rocefw-verbs-")
    sock = os.path.join(tmp, "memif.sock")
    port = free_port()
    iters = extra[extra.index("-n") + 1] if "-n" in extra else "1000"
    pt = [tool, "-d", "rocefw0", "-x", "0", "-p", str(port)] + extra

    def side(role, ip):
        eal = f"--vdev=net_memif0,role={role},socket={sock},socket-abstract=no"
        return [RUN, "--eal", eal, "--ip", ip, "--"]

    try:
        src, so, crc, co = two_procs(side("server", "10.0.0.1") + pt,
                                     side("client", "10.0.0.2") + pt + ["127.0.0.1"], port)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    check(src == 0, f"server exits 0 ({src})")
    check(crc == 0, f"client exits 0 ({crc})")
    row = re.compile(rf"^\s*\d+\s+{iters}\s+[0-9.]+\s+[0-9.]+", re.M)
    for name, out, peer in [("server", so, "10:00:00:02"), ("client", co, "10:00:00:01")]:
        check(f"Device         : rocefw0" in out, f"{name}: device rocefw0")
        check(re.search(rf"remote address:.*\n GID: (00:){{10}}255:255:{peer}", out)
              is not None, f"{name}: peer GID ::ffff:{peer}")
    # bw: both sides print the row; lat: the client (and the server for send/read lat).
    check(row.search(co) is not None, f"client: result row with {iters} iterations")
    if "_bw" in tool:
        check(row.search(so) is not None, f"server: result row with {iters} iterations")


def group_pyverbs():
    src = "/usr/share/doc/rdma-core/tests"
    if not os.path.isdir(src) or not os.path.exists("/usr/bin/python3"):
        print("SKIP: python3-pyverbs not installed (tools/install-deps.sh installs it)")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="rocefw-pyverbs-")
    try:
        shutil.copytree(src, os.path.join(tmp, "tests"))
        for f in os.listdir(os.path.join(tmp, "tests")):
            if f.endswith(".gz"):
                subprocess.run(["gunzip", "-f", os.path.join(tmp, "tests", f)], check=True)
        p = subprocess.run([RUN, "--", "/usr/bin/python3", "tests/run_tests.py", "--dev",
                            "rocefw0", "--gid", "0", "-v"], cwd=tmp, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=600)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out = p.stdout
    ok = set(m.group(1) for m in re.finditer(r"^(.*) \.\.\. ok$", out, re.M))
    bad = re.findall(r"^(.*) \.\.\. (?:ERROR|FAIL)$", out, re.M)
    skips = {}
    for m in re.finditer(r"skipped '(.*)'$", out, re.M):
        skips[m.group(1)] = skips.get(m.group(1), 0) + 1
    for why, n in sorted(skips.items(), key=lambda kv: -kv[1]):
        print(f"skipped {n:3d}: {why}")
    ran = re.search(r"^Ran (\d+) tests", out, re.M)
    summary = re.search(r"^(OK|FAILED).*$", out, re.M)
    print(f"ran {ran.group(1) if ran else '?'}: {summary.group(0) if summary else '?'} "
          f"({len(ok)} lines end in ok, {len(bad)} failed)")
    check(p.returncode == 0 and not bad, f"run_tests.py passes (rc {p.returncode}; failed: "
          f"{bad})")
    if p.returncode != 0:
        print(out[-6000:])
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyverbs_pass.txt")) as f:
        for name in (line.strip() for line in f):
            if name:
                check(name in ok, f"passes: {name}")


ASYNC_PROG = '''
import subprocess, sys
from pyverbs.device import Context
import pyverbs.enums as e
iface = sys.argv[1]
ctx = Context(name="rocefw0")
print("state", ctx.query_port(1).state, flush=True)
for updown, want in (("down", e.IBV_EVENT_PORT_ERR), ("up", e.IBV_EVENT_PORT_ACTIVE)):
    subprocess.run(["ip", "link", "set", iface, updown], check=True)
    ev = ctx.get_async_event()
    print("event", updown, ev.event_type, "want", want, flush=True)
    ev.ack()
    print("state", ctx.query_port(1).state, flush=True)
'''


QP_EVENTS_PROG = """
import sys
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.qp import QP, QPInitAttr, QPCap, QPAttr
from pyverbs.srq import SRQ, SrqInitAttr, SrqAttr
from pyverbs.mr import MR
from pyverbs.addr import GlobalRoute, AHAttr
from pyverbs.wr import SendWR, RecvWR, SGE
import pyverbs.enums as e

ctx = Context(name="rocefw0")
pd = PD(ctx)
cq = CQ(ctx, 64)
gid = ctx.query_gid(1, 0)
acc = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
mr = MR(pd, 4096, acc)

def rc_qp(srq=None):
    cap = QPCap(max_send_wr=8, max_recv_wr=0 if srq else 8, max_send_sge=1, max_recv_sge=1)
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, srq=srq, cap=cap))

def attr(peer):
    a = QPAttr(qp_state=e.IBV_QPS_INIT, port_num=1)
    a.qp_access_flags = acc
    a.path_mtu = e.IBV_MTU_1024
    a.dest_qp_num = peer.qp_num
    a.rq_psn = 0
    a.sq_psn = 0
    a.max_dest_rd_atomic = 1
    a.max_rd_atomic = 1
    a.min_rnr_timer = 1
    a.timeout = 14
    a.retry_cnt = 3
    a.rnr_retry = 3
    a.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=0), is_global=1, port_num=1)
    return a

def event(want):
    ev = ctx.get_async_event()
    print("event", ev.event_type, "want", want, flush=True)
    ev.ack()
    if ev.event_type != want:
        sys.exit(1)

def poll(n):
    got = []
    while len(got) < n:
        k, wcs = cq.poll(n - len(got))
        got += wcs
    return got

a, b = rc_qp(), rc_qp()
a.to_init(attr(b)); a.to_rtr(attr(b)); a.to_rts(attr(b))
b.to_init(attr(a)); b.to_rtr(attr(a))
b.post_recv(RecvWR(wr_id=1, num_sge=1, sg=[SGE(mr.buf, 64, mr.lkey)]))
a.post_send(SendWR(wr_id=2, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(mr.buf + 1024, 64, mr.lkey)]))
print("wc", [(w.wr_id, w.status) for w in poll(2)], flush=True)
event(e.IBV_EVENT_COMM_EST)
b.to_rts(attr(a))
wr = SendWR(wr_id=3, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(mr.buf, 8, mr.lkey)])
wr.set_wr_rdma(mr.rkey ^ 0x100, mr.buf)
a.post_send(wr)
print("wc", [(w.wr_id, w.status) for w in poll(1)], flush=True)
event(e.IBV_EVENT_QP_ACCESS_ERR)
srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=8, max_sge=1)))
c = rc_qp(srq)
c.to_init(attr(a))
c.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
event(e.IBV_EVENT_QP_LAST_WQE_REACHED)
# a peer nobody answers ARP for: after the probes, ERR with its WQEs flushed, and QP_FATAL
from pyverbs.addr import GID
d = rc_qp()
da = attr(a)
da.ah_attr = AHAttr(gr=GlobalRoute(dgid=GID("0000:0000:0000:0000:0000:ffff:0a00:0063"), sgid_index=0), is_global=1,
                    port_num=1)
d.to_init(da); d.to_rtr(da); d.to_rts(da)
d.post_send(SendWR(wr_id=4, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(mr.buf, 8, mr.lkey)]))
event(e.IBV_EVENT_QP_FATAL)
print("wc", [(w.wr_id, w.status) for w in poll(1)], flush=True)
print("all events", flush=True)
for o in (d, c, srq, a, b, mr, cq, pd, ctx):
    o.close()
"""


def group_qp_events():
    """Affiliated QP events through ibv_get_async_event on the loopback port (pyverbs)."""
    rc, out, err = run([RUN, "--", "/usr/bin/python3", "-c", QP_EVENTS_PROG], timeout=60)
    print(out + err)
    events = re.findall(r"^event (\d+) want (\d+)$", out, re.M)
    check(rc == 0 and "all events" in out, f"the program ran to its end (rc {rc})")
    check(("4", "4") in events, "IBV_EVENT_COMM_EST: a SEND reached a QP in RTR")
    check(("3", "3") in events, "IBV_EVENT_QP_ACCESS_ERR: a WRITE with a wrong R_Key")
    check(("16", "16") in events, "IBV_EVENT_QP_LAST_WQE_REACHED: an SRQ's QP to ERR")
    check(re.search(r"^wc \[\(3, 10\)\]$", out, re.M) is not None,
          "the requester's WRITE completes with IBV_WC_REM_ACCESS_ERR (10)")
    check(("1", "1") in events, "IBV_EVENT_QP_FATAL: the peer's address cannot be resolved")
    check(re.search(r"^wc \[\(4, 5\)\]$", out, re.M) is not None,
          "that QP's SEND is flushed (IBV_WC_WR_FLUSH_ERR, 5)")


LIMITS_PROG = """
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.qp import QP, QPInitAttr, QPCap, QPAttr
import pyverbs.enums as e
ctx = Context(name="rocefw0"); pd = PD(ctx); cq = CQ(ctx, 8)
qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=QPCap(max_send_wr=4, max_recv_wr=4)))
a = QPAttr(qp_state=e.IBV_QPS_INIT, port_num=1)
qp.to_init(a)
try:
    b = QPAttr(qp_state=e.IBV_QPS_RTS); b.max_rd_atomic = 128
    qp.modify(b, e.IBV_QP_MAX_QP_RD_ATOMIC)
except Exception as x:
    print("refused:", x)
qp.close(); cq.close(); pd.close(); ctx.close()
"""


def group_limits():
    """A value past the device's limit is refused with EINVAL and a line naming the field."""
    rc, out, err = run([RUN, "--", "/usr/bin/python3", "-c", LIMITS_PROG], timeout=60)
    print(out + err)
    check(rc == 0 and "Errno: 22" in out, f"ibv_modify_qp(max_rd_atomic 128) fails with EINVAL "
          f"(rc {rc})")
    check(re.search(r"^rocefw-verbs: ibv_modify_qp: max_rd_atomic 128 is above the device's 16",
                    err, re.M) is not None, "the message names max_rd_atomic and the limit")


def group_async():
    if os.geteuid() != 0 or not os.path.exists("/dev/net/tun"):
        print("SKIP: needs root and /dev/net/tun (a net_tap port)")
        sys.exit(77)
    iface = f"rfwv{os.getpid() % 100000}"
    tmp = tempfile.mkdtemp(prefix="rocefw-verbs-")
    prog = os.path.join(tmp, "async.py")
    with open(prog, "w") as f:
        f.write(ASYNC_PROG)
    try:
        rc, out, err = run([RUN, "--eal", f"--vdev=net_tap0,iface={iface}", "--ip", "10.9.0.1",
                            "--", "/usr/bin/python3", prog, iface], timeout=60)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(out + err)
    check(rc == 0, f"exits 0 ({rc})")
    states = re.findall(r"^state (\d+)$", out, re.M)
    check(states == ["4", "1", "4"], f"port ACTIVE, DOWN, ACTIVE ({states})")
    for updown, name in (("down", "PORT_ERR"), ("up", "PORT_ACTIVE")):
        m = re.search(rf"^event {updown} (\d+) want (\d+)$", out, re.M)
        check(m is not None and m.group(1) == m.group(2),
              f"link {updown}: IBV_EVENT_{name} ({m.group(0) if m else 'no event'})")


def main():
    g = GROUP.split(":")
    if "address" in SANITIZE and g[0] not in ("abi", "options"):
        print("SKIP: this is an ASan build (b_sanitize=" + SANITIZE + "): an ASan-built "
              "librocefw-verbs.so cannot be LD_PRELOADed into Debian's unsanitized ibverbs "
              "programs (the ASan runtime must come first). The verbs suite runs in the plain "
              "build tree only (abi and options, which preload nothing, run here).", flush=True)
        sys.exit(77)
    if g[0] == "abi":
        group_abi()
    elif g[0] == "devinfo":
        group_devinfo()
    elif g[0] == "options":
        group_options()
    elif g[0] == "unsupported":
        group_unsupported()
    elif g[0] == "async":
        group_async()
    elif g[0] == "qp_events":
        group_qp_events()
    elif g[0] == "limits":
        group_limits()
    elif g[0] == "pyverbs":
        group_pyverbs()
    elif g[0] == "perftest":
        group_perftest(g[1], g[2].split(",") if len(g) > 2 and g[2] else [])
    elif g[0] == "pingpong":
        group_pingpong(g[1], g[2].split(",") if len(g) > 2 and g[2] else [])
    elif g[0] == "uc_pingpong":
        group_pingpong(g[1], g[2].split(",") if len(g) > 2 and g[2] else [], "ibv_uc_pingpong")
    elif g[0] == "ud_pingpong":
        group_pingpong(g[1], g[2].split(",") if len(g) > 2 and g[2] else [], "ibv_ud_pingpong")
    elif g[0] == "srq_pingpong":
        group_pingpong(g[1], g[2].split(",") if len(g) > 2 and g[2] else [], "ibv_srq_pingpong")
    else:
        sys.exit(f"unknown group {GROUP}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)


main()
