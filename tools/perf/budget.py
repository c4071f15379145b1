#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The fast path's instruction budget per message, by stage (docs/perf.md "Instruction budget").

Runs `rocefw-perf OP bw --loopback` (both NICs on one core) under valgrind's callgrind,
counting only inside the timed loop (bw_loop), and splits the instructions per message by stage:
each function's own (self) instructions go to exactly one stage, so the stages sum to the total.
Instruction counts repeat within about 1 % from run to run on a shared machine whose timings
swing by tens of percent, so this is the figure to compare two builds by.

usage: budget.py ROCEFW_PERF [--op OP] [--size B] [--msgs N] [--cq-mod N] [--post-list N]
                 [--transport gbn|sr] [--estats] [--memif] [--top N] [--json FILE] [--max N]
                 [--against ROCEFW_PERF2]
  --op     write, read or send (default write)
  --size   message size in bytes (default 64)
  --msgs   messages counted (default 200000; 50000 is within 1 % at 64 B)
  --cq-mod rocefw-perf's -Q: a completion every N messages (default 1: every message)
  --post-list  rocefw-perf's -l: lists of N work requests per post (default 1; -Q is then N
           unless given)
  --transport  rocefw-perf's --transport: gbn (go-back-N, the default) or sr (selective repeat)
  --estats count with Estats on (ROCEFW_ESTATS=1)
  --memif  two processes over memif instead: the server runs on core 0 uncounted, and only the
           client (the requester, whose core bounds the 64 B rate) is counted
  --top    also list each stage's N costliest functions
  --json   write the table as JSON (schema 1)
  --max    fail (exit 1) when the total exceeds N instructions per message
  --against  also count a second build, and print each stage's and function's change from the
           first to it (the way to compare two builds on a machine whose timings swing)
Exit 2: valgrind missing or the run failed.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SCHEMA = 1

# (stage, what it holds, test on (object, source file, function)); the first match takes a
# function. Functions inlined into another count in the one they were inlined into.
# transport/sr.c (selective repeat) holds the three roles' SR halves in one file: its
# functions go to the stage of the role they serve, by name (callgrind may name a function's
# file after a header inlined at its start, so the file cannot say). A function of sr.c not
# named here is "other", so a new one is noticed: dpdk_perf_budget's 2 % check runs SR too.
SR_REQUESTER = ("rfw_sr_inflight_bytes", "rfw_sr_may_send", "sr_drained", "sr_rto",
                "rfw_sr_arm_timer", "rfw_sr_next_rtx", "rfw_sr_sent_rtx", "sr_probe_pick",
                "sr_rtx_eligible", "rfw_sr_timer", "rfw_sr_rnr_expired")
SR_RESPONDER = ("rfw_sr_resp_rx", "sr_advance", "sr_complete", "sr_hold", "sr_slot_flags",
                "sr_pass", "sr_pass_rwqe",
                "sr_retry_held", "sreth_get", "sr_place",
                "sr_place_send", "sr_place_write",
                "sr_note_slot", "sr_check_shape", "sr_fatal", "rfw_sr_recv_posted",
                "rfw_sr_sack_len", "rfw_sr_build_sack")
SR_COMPLETER = ("rfw_sr_comp_rx", "sr_ack", "sr_apply_sack", "sr_cumulative", "sr_retire",
                "sr_progress", "sr_comp_step", "sr_mark_sacked", "sr_round_update",
                "sr_new_round", "sr_error", "sr_local_mr_gone", "sr_wqe_of", "sr_resp_done",
                "sr_read_resp", "sr_atomic_resp")


def sr_fn(n, names):
    """Whether @n (a compiler's clone suffix aside) is one of sr.c's functions @names."""
    return n.split(".")[0] in names


STAGES = [
    ("estats", "Estats stamps, records and their hand-over",
     lambda o, f, n: re.search(r"estats|es_crec|(^|_)es_", f + " " + n) is not None),
    # rfw_crc_copy (wire/icrc.c) is here whole: a long payload's copy into its frame fused
    # with its ICRC (under valgrind, whose CPU has no AVX-512: memcpy, then ISA-L)
    ("icrc", "ICRC of every frame, sent and received (wire/icrc.c; ISA-L's CRC for long ones)",
     lambda o, f, n: f.endswith("wire/icrc.c") or n.startswith(("icrc_", "rfw_icrc_")) or
     "libisal" in o),
    ("tool", "rocefw-perf's own loop: posting, reaping, checking every byte",
     lambda o, f, n: "/tools/" in f or n.startswith(("bw_loop", "post_one", "reap", "poll_both",
                                                        "loop_post", "check_send_wc"))),
    ("verbs", "the verbs the tool calls: post_send (and its doorbell), poll_cq",
     lambda o, f, n: n.startswith(("rfw_post_send", "rfw_qp_doorbell", "io_doorbell",
                                   "rfw_poll_cq", "post_check", "rfw_post_recv",
                                   "rfw_rwqe_set"))),
    ("requester", "choosing, building and scheduling each request and response frame",
     lambda o, f, n: f.endswith(("transport/req.c", "nic/frame_tx.c", "nic/rate.c"))
     or n.startswith(("rfw_req_", "next_wqe", "emit", "rfw_tx_begin", "rfw_tx_end",
                      "rfw_tx_finish", "rfw_tx_pkt_init", "rfw_ib_build", "rfw_qp_tx_", "fw_io_tx",
                      "fw_rate_on_tx")) or sr_fn(n, SR_REQUESTER)),
    ("rx_parse", "frame and IB header parsing, address filters (wire/, dataplane/rfw_port.c RX)",
     lambda o, f, n: f.endswith(("wire/frame.c", "wire/frame.h")) or
     n.startswith(("rfw_ib_parse", "rfw_rx_burst", "classify", "is_our_ip", "mac_for_us",
                   "rfw_frame_parse"))),
    ("rx_transport", "dispatching a received frame to its QP (nic/sched.c, transport/recv.c)",
     lambda o, f, n: n.startswith(("rfw_fw_rx", "rfw_dev_rx", "addr_mismatch", "fw_rate_on_rx"))),
    ("responder", "the responder: checks, placement into the MR, ACKs (transport/resp.c)",
     lambda o, f, n: f.endswith("transport/resp.c") or n.startswith("rfw_resp_") or
     sr_fn(n, SR_RESPONDER) or
     # SEND's receive WQEs: taken, their keys checked, the data copied in (a READ response's
     # copy into the requester's SGEs counts here too)
     n.startswith(("rfw_mr_check_remote", "rfw_rq_avail", "rfw_sge_check", "rfw_sge_copy_in"))),
    ("completer", "the completer: ACKs retire WQEs into CQEs (transport/comp.c)",
     lambda o, f, n: f.endswith("transport/comp.c") or
     n.startswith(("rfw_comp_", "rfw_qp_complete", "progress", "retire_covered")) or
     sr_fn(n, SR_COMPLETER)),
    ("scheduler", "the firmware's poll: ready list, timers, snapshots (nic/)",
     lambda o, f, n: "/nic/" in f or n.startswith(("rfw_fw_", "fw_", "rfw_nic_poll"))),
    ("dpdk", "the DPDK host: mbufs, the PMD (ring or memif), TX flush (dataplane/, librte_*)",
     lambda o, f, n: "librte_" in o or "/dataplane/" in f or n.startswith(("mb_", "rte_"))),
    ("libc", "libc's memcpy / memcmp / memset called out of line",
     lambda o, f, n: "libc.so" in o or "ld-linux" in o),
]


def parse_self(path):
    """{(object, file, function): self instructions} of a callgrind output file, and the file's
    own total (its summary line: what valgrind counted, to check this parse against)."""
    names = {"ob": {}, "fl": {}, "fn": {}}
    cur = {"ob": "", "fl": "", "fn": ""}
    out, skip, summary = {}, False, None
    with open(path) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                summary = int(line.split()[1])
                continue
            m = re.match(r"^(c?)(ob|fl|fn|fi|fe)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if m:
                kind = "fl" if m.group(2) in ("fi", "fe") else m.group(2)
                if m.group(4) is not None:
                    names[kind][m.group(3)] = m.group(4)
                if not m.group(1) and m.group(2) in ("ob", "fl", "fn"):
                    cur[kind] = names[kind].get(m.group(3), "?")
                continue
            if line.startswith("calls="):
                skip = True  # the next cost line is the callee's inclusive cost
                continue
            m = re.match(r"^[+\-*]?\d*\s+(\d+)$", line.strip()) if line[:1] in "+-*0123456789" \
                else None
            if m:
                if not skip:
                    key = (cur["ob"], cur["fl"], cur["fn"])
                    out[key] = out.get(key, 0) + int(m.group(1))
                skip = False
    return out, summary


def stage_of(ob, fl, fn):
    for name, _, test in STAGES:
        if test(ob, fl, fn):
            return name
    return "other"


EAL = ["--no-huge", "-m", "512", "--no-pci", "--no-shconf", "--log-level=lib.eal:warning"]


def fail(cmd, rc, err):
    sys.stderr.write((err or "")[-3000:])
    print(f"budget: {' '.join(cmd)} failed (exit {rc})", file=sys.stderr)
    sys.exit(2)


def qarg(a):
    """-Q, -l and --transport only when asked for: builds older than them count as before
    (--against)."""
    return ((["-Q", str(a.cq_mod)] if a.cq_mod != 1 else []) +
            (["-l", str(a.post_list)] if a.post_list != 1 else []) + targ(a))


def targ(a):
    """--transport, which both ends of a memif pair must have alike (gbn: nothing)."""
    return ["--transport", a.transport] if a.transport != "gbn" else []


def memif_server(perf, op, size, msgs, extra, d, both):
    """rocefw-perf's server on core 0 over a memif socket in @d (not counted), listening;
    @extra: the client's options, @both: the server's too."""
    sock = os.path.join(d, "memif.sock")
    port = str(20000 + os.getpid() % 20000)
    memif = f"socket={sock},socket-abstract=no,bsize=8192"
    test = ["--", op, "bw", "-s", str(size), "-n", str(msgs)]
    cmd = [perf] + EAL + ["-l", "0", f"--vdev=net_memif0,role=server,{memif}"] + test + \
        ["--ip", "10.88.0.2", "-p", port] + both
    srv = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while srv.poll() is None and time.monotonic() < deadline:
        if sock in open("/proc/net/unix").read():
            break
        time.sleep(0.05)
    client = ["-l", "1", f"--vdev=net_memif0,role=client,{memif}"] + test + \
        ["--ip", "10.88.0.1", "-p", port] + extra + ["127.0.0.1"]
    return srv, cmd, client


def run(perf, a, out):
    """Count @perf's timed loop into @out: the loopback pair, or (--memif) the client only."""
    env = dict(os.environ, ROCEFW_ESTATS="1" if a.estats else "0")
    # --fair-sched: valgrind runs one thread at a time, and without it the Estats thread that
    # drains the NIC's record ring ran so seldom that the ring stayed full and the poll's
    # counted path was the drop (a third of the records), not the hand-over.
    vg = ["valgrind", "--tool=callgrind", "--fair-sched=yes", f"--callgrind-out-file={out}",
          "--toggle-collect=bw_loop*", perf]
    with tempfile.TemporaryDirectory() as d:
        srv = None
        if a.memif:
            srv, scmd, args = memif_server(perf, a.op, a.size, a.msgs, qarg(a), d, targ(a))
        else:
            args = (["-l", "0", "--", a.op, "bw", "-s", str(a.size), "-n", str(a.msgs),
                     "--loopback"] + qarg(a))
        cmd = vg + EAL + args
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
        if srv is not None:
            try:
                serr = srv.communicate(timeout=60)[1]
            except subprocess.TimeoutExpired:
                srv.kill()
                serr = srv.communicate()[1]
        # The counted process first: a server that fails after its client did is its echo.
        if p.returncode != 0 or not os.path.exists(out):
            fail(cmd, p.returncode, p.stderr)
        if srv is not None and srv.returncode != 0:
            fail(scmd, srv.returncode, serr)


def table(costs, msgs):
    """Instructions per message by stage, and by function within each stage."""
    per = {name: 0.0 for name, _, _ in STAGES}
    per["other"] = 0.0
    fns = {name: {} for name in per}
    for (ob, fl, fn), n in costs.items():
        fn = fn.split(".")[0]  # a compiler's clone (.isra.0, .constprop.0, .lto_priv.0)
        s = stage_of(ob, fl, fn)
        per[s] += n / msgs
        key = fn if not fn.startswith("0x") else f"{fn} [{os.path.basename(ob)}]"
        fns[s][key] = fns[s].get(key, 0) + n / msgs
    return per, fns


def report(a, per, fns, total):
    what = dict((n, w) for n, w, _ in STAGES)
    what["other"] = "functions no stage claims (listed below)"
    where = ("over memif, the client (requester) only, memif PMD included" if a.memif else
             "--loopback, both ends")
    q = "".join(f" {o}" for o in qarg(a))
    print(f"instructions per message: {a.op} bw -s {a.size}{q} {where}, {a.msgs} messages, "
          f"Estats {'on' if a.estats else 'off'} (callgrind, inside bw_loop)")
    for name, v in per.items():
        print(f"  {name:<13} {v:8.1f}  {100 * v / total:5.1f} %  {what[name]}")
        top = a.top if name != "other" else max(a.top, 8)
        for fn, c in sorted(fns[name].items(), key=lambda x: -x[1])[:top]:
            if c >= 0.5:
                print(f"      {c:8.1f}  {fn}")
    print(f"  {'total':<13} {total:8.1f}")


def count(perf, a):
    """(stages, functions, total, valgrind's total) of @perf under @a's options."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "callgrind.out")
        run(perf, a, out)
        costs, summary = parse_self(out)
    per, fns = table(costs, a.msgs)
    return per, fns, sum(per.values()), summary


def compare(per, fns, total, per2, fns2, total2):
    print("change from the first build to the second (--against), per message; a function"
          " inlined in one build and not the other moves its instructions between stages:")
    for name in per:
        print(f"  {name:<13} {per[name]:8.1f} -> {per2[name]:8.1f}  {per2[name] - per[name]:+8.1f}")
    print(f"  {'total':<13} {total:8.1f} -> {total2:8.1f}  {total2 - total:+8.1f} "
          f"({100 * (total2 - total) / total:+.1f} %)")
    flat, flat2 = ({f: c for s in x.values() for f, c in s.items()} for x in (fns, fns2))
    delta = {f: flat2.get(f, 0) - flat.get(f, 0) for f in set(flat) | set(flat2)}
    for f, v in sorted(delta.items(), key=lambda x: -abs(x[1]))[:10]:
        if abs(v) >= 0.5:
            print(f"      {v:+8.1f}  {f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("perf")
    ap.add_argument("--op", choices=("write", "read", "send"), default="write")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--msgs", type=int, default=200000)
    ap.add_argument("--cq-mod", type=int, default=1,
                    help="rocefw-perf -Q: a completion every N messages (default 1: each)")
    ap.add_argument("--post-list", type=int, default=1,
                    help="rocefw-perf -l: lists of N work requests per post (default 1)")
    ap.add_argument("--transport", choices=("gbn", "sr"), default="gbn")
    ap.add_argument("--estats", action="store_true")
    ap.add_argument("--top", type=int, default=0)
    ap.add_argument("--json")
    ap.add_argument("--max", type=float)
    ap.add_argument("--against")
    ap.add_argument("--memif", action="store_true")
    a = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("budget: valgrind is missing (Debian package valgrind): no budget", file=sys.stderr)
        return 2
    per, fns, total, summary = count(a.perf, a)
    report(a, per, fns, total)
    if a.against:
        compare(per, fns, total, *count(a.against, a)[:3])
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"schema": SCHEMA, "op": a.op, "size": a.size, "msgs": a.msgs,
                       "cq_mod": a.cq_mod, "post_list": a.post_list, "estats": a.estats,
                       "transport": a.transport,
                       "mode": "memif-client" if a.memif else "loopback",
                       "total": total, "valgrind_total": summary, "stages": per}, f, indent=1)
    if a.max is not None and total > a.max:
        print(f"budget: {total:.1f} instructions per message exceed --max {a.max:g}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
