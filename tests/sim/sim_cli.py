#!/usr/bin/env python3
"""rocefw-sim's command line: the issue's "done when" scenarios through --json, the PSN-wrap
scenario, determinism, --config INI files, usage errors, and --pcap checked by an independent
decoder path (rocefw-replay check --json: every ICRC good, nothing malformed, every frame there).

usage: sim_cli.py SIM_EXE REPLAY_EXE [SCENARIO_DIR]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import known_failures

SIM, REPLAY = sys.argv[1], sys.argv[2]
SCEN = sys.argv[3] if len(sys.argv) > 3 else None
fails = 0
REQUIRED = ["schema", "messages_posted", "messages_completed", "bytes_verified", "corrupt",
            "duplicates_delivered", "goodput_gbps", "retransmitted_packets", "timeouts",
            "nak_seq_err", "sim_time_ns"]


def check(cond, msg):
    global fails
    if not cond:
        fails += 1
        print("FAIL", msg)


def sim(*args):
    p = subprocess.run([SIM, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def sim_json(*args, expect_rc=0):
    rc, out, err = sim("--json", *args)
    check(rc == expect_rc, f"{args}: exit {rc}, want {expect_rc}: {err}")
    try:
        return json.loads(out)
    except json.JSONDecodeError:
        check(False, f"{args}: not JSON: {out[:200]}")
        return {}


# 1. Done-when: 1% loss, reorder and duplication, every op: all complete, nothing corrupt or
#    delivered twice; the impairments were really applied.
for op in ["write", "read", "send", "atomic", "mix"]:
    o = sim_json("--op", op, "--size", "65536", "--messages", "100", "--depth", "8",
                 "--loss", "0.01", "--reorder", "0.01", "--dup", "0.01", "--seed", "3",
                 "--timeout", "10")
    for k in REQUIRED:
        check(k in o, f"{op}: field {k} missing")
    check(o.get("schema") == "rocefw.sim/1", f"{op}: schema {o.get('schema')}")
    check(o.get("messages_completed") == 100 and o.get("messages_posted") == 100,
          f"{op}: completed {o.get('messages_completed')}")
    check(o.get("corrupt") == 0 and o.get("duplicates_delivered") == 0, f"{op}: {o}")
    net = o.get("network", {})
    check(net.get("frames_lost", 0) > 0 and net.get("frames_duplicated", 0) > 0 and
          net.get("frames_reordered", 0) > 0, f"{op}: impairments not applied: {net}")
    if op != "mix":
        want_bytes = 100 * (8 if op == "atomic" else 65536)
        check(o.get("bytes_verified") == want_bytes,
              f"{op}: bytes_verified {o.get('bytes_verified')}")
    else:
        ops = {k: v for k, v in o.get("counters", {}).items()
               if k in ("rx_read_requests", "rx_write_requests", "rx_atomic_requests")}
        check(all(v > 0 for v in ops.values()) and len(ops) == 3, f"mix: not mixed: {ops}")

# 2. PSN wrap: start at 0xFFFFF0, thousands of packets across the wrap.
o = sim_json("--start-psn", "0xFFFFF0", "--mtu", "256", "--size", "4096", "--messages", "1000",
             "--loss", "0.001", "--seed", "5", "--timeout", "10")
check(o.get("completed") is True and o.get("messages_completed") == 1000, f"wrap: {o}")
check(o.get("counters", {}).get("tx_packets", 0) > 16000, "wrap: fewer packets than expected")

# 3. Determinism: same seed, same JSON (wall-clock fields aside); another seed differs.
def strip(o):
    o = dict(o)
    for k in ("wall_time_s", "sim_packets_per_wall_s"):
        o.pop(k, None)
    return o


args = ["--loss", "0.02", "--reorder", "0.02", "--dup", "0.02", "--corrupt", "0.01",
        "--messages", "50", "--qps", "3", "--timeout", "10"]
a, b = sim_json(*args, "--seed", "9"), sim_json(*args, "--seed", "9")
check(strip(a) == strip(b), "same seed gave different results")
c = sim_json(*args, "--seed", "10")
check(strip(a) != strip(c), "different seeds gave identical results")

# 4. --pcap: every frame with real headers and ICRC; the capture checks clean even though
#    the links corrupted frames (the capture is taken where the frame leaves the sender).
with tempfile.TemporaryDirectory() as d:
    cap = os.path.join(d, "sim.pcap")
    o = sim_json("--pcap", cap, "--op", "read", "--size", "20000", "--messages", "40",
                 "--loss", "0.02", "--dup", "0.02", "--reorder", "0.02", "--corrupt", "0.02",
                 "--seed", "11", "--timeout", "10")
    check(o.get("completed") is True, f"pcap run: {o}")
    p = subprocess.run([REPLAY, "check", "--json", cap], capture_output=True, text=True)
    check(p.returncode == 0, f"replay check exit {p.returncode}: {p.stderr}")
    try:
        r = json.loads(p.stdout)
    except json.JSONDecodeError:
        r = {}
        check(False, "replay check: not JSON")
    check(r.get("icrc_bad") == 0, f"icrc_bad {r.get('icrc_bad')}")
    check(r.get("malformed") == 0, f"malformed {r.get('malformed')}")
    check(r.get("frames") == o["network"]["frames_sent"],
          f"pcap has {r.get('frames')} frames, sim sent {o['network']['frames_sent']}")
    check(r.get("roce") == r.get("frames") and r.get("icrc_ok") == r.get("frames"),
          f"not every frame is RoCEv2 with a good ICRC: {r.get('roce')} {r.get('icrc_ok')}")
    check(r.get("duration_ns", 0) > 0, "simulated timestamps missing")

    # 4b. Wireshark decodes the same capture as InfiniBand, nothing malformed, with the
    #     opcodes an op mix must produce (an independent decoder; like tests/wire, a missing
    #     tshark is a failure, not a skip).
    mixcap = os.path.join(d, "mix.pcap")
    o = sim_json("--pcap", mixcap, "--op", "mix", "--size", "3000", "--messages", "60",
                 "--loss", "0.02", "--dup", "0.02", "--seed", "12", "--timeout", "8")
    tshark = shutil.which("tshark")
    check(tshark is not None, "tshark is not installed (tools/install-deps.sh)")
    if tshark:
        t = subprocess.run([tshark, "-r", mixcap, "--disable-protocol", "rpcordma", "-T", "fields",
                            "-e", "infiniband.bth.opcode", "-e", "_ws.malformed"],
                           capture_output=True, text=True)
        rows = [ln.split("\t") for ln in t.stdout.splitlines()]
        check(len(rows) == o["network"]["frames_sent"],
              f"tshark decoded {len(rows)} frames, sim sent {o['network']['frames_sent']}")
        check(all(r[0] != "" for r in rows), "tshark: a frame without a BTH")
        check(all(len(r) < 2 or r[1] == "" for r in rows), "tshark: malformed frames")
        ops = {int(r[0], 0) for r in rows if r[0]}
        # SEND ONLY/FIRST.., WRITE, READ request + responses, FETCH_ADD, ACK, atomic ACK
        for want in (0x0c, 0x11, 0x12, 0x14):
            check(want in ops, f"tshark: opcode {want:#x} missing from an op mix: {sorted(ops)}")
        check(ops & {0x00, 0x04} and ops & {0x06, 0x0a} and ops & {0x0d, 0x10},
              f"tshark: SEND/WRITE/READ response opcodes missing: {sorted(ops)}")

    # 4c. Both captures obey the RC wire invariants (tests/wire/rc_invariants.py).
    inv = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "wire",
                       "rc_invariants.py")
    known = known_failures.load()
    for c in (cap, mixcap):
        p = subprocess.run([sys.executable, inv, c], capture_output=True, text=True)
        rules = {ln.split(": ")[2] for ln in p.stdout.splitlines() if ": frame " in ln}
        k = known.get("sim_cli:" + os.path.basename(c), {})
        if p.returncode and rules and rules <= set(k):
            print(f"KNOWN {os.path.basename(c)}: {sorted(rules)} "
                  f"(waits for {sorted(set(k[r] for r in rules))})")
            continue
        if p.returncode == 0 and k:
            print(f"known failure passes: delete sim_cli:{os.path.basename(c)} from "
                  f"{known_failures.PATH}")
        check(p.returncode == 0, f"wire invariants of {os.path.basename(c)}: {p.stdout[-600:]}"
              f"{p.stderr[-300:]}")

    # 5. INI file, overridden by the command line.
    ini = os.path.join(d, "s.ini")
    with open(ini, "w") as f:
        f.write("# scenario\n[sim]\nop = send\nsize = 3000\nmessages = 30\nrtt_us = 20\n")
    o = sim_json("--config", ini, "--messages", "12")
    check(o.get("config", {}).get("op") == "send" and o.get("messages_completed") == 12,
          f"ini: {o.get('config')}")
    with open(ini, "w") as f:
        f.write("size = 10\nbogus_key = 1\n")
    rc, out, err = sim("--config", ini)
    check(rc == 2 and "s.ini:2" in err, f"bad ini: rc {rc} {err}")

# 6. Usage errors exit 2 with a message; a dead link exits 1.
for bad in (["--loss", "2"], ["--mtu", "1000"], ["--op", "nope"], ["--transport", "rxe"],
            ["--transport", "sr", "--peer-transport", "gbn"],
            ["--frobnicate"], ["stray"]):
    rc, out, err = sim(*bad)
    check(rc == 2 and err.strip(), f"{bad}: rc {rc}, stderr {err!r}")
# --cc-set: names checked against cc/'s table; without the switch topology it would set
# nothing, so it is refused rather than ignored
for bad, word in ((["--cc-set", "rp_ai_rate=5"], "--cc-set needs the switch topology"),
                  (["--incast", "2", "--messages", "2", "--cc-set", "bogus=1"], "bogus"),
                  (["--incast", "2", "--messages", "2", "--cc-set", "rp_ai_rate"],
                   "expected name=value")):
    rc, out, err = sim(*bad)
    check(rc == 2 and word in err, f"{bad}: rc {rc}, stderr {err!r}")
o = sim_json("--incast", "2", "--messages", "2", "--cc-set", "rp_ai_rate=5,rp_hai_rate=50")
check(o.get("completed") is True, f"--cc-set accepted: {o.get('first_error')}")
o = sim_json("--loss", "1", "--messages", "3", "--retry-cnt", "1", "--timeout", "5",
             expect_rc=1)
check(o.get("completed") is False and o.get("error_completions") == 1 and
      "retry counter exceeded" in (o.get("first_error") or ""), f"dead link: {o}")

# 7. The shipped scenario files run as documented.
if SCEN:
    for name, rc_want, done in (("lossy-mix.ini", 0, True), ("psn-wrap.ini", 0, True),
                                ("dead-link.ini", 1, False)):
        o = sim_json("--config", os.path.join(SCEN, name), expect_rc=rc_want)
        check(o.get("completed") is done and o.get("corrupt") == 0 and
              o.get("duplicates_delivered") == 0, f"{name}: {o.get('first_error')}")

# 7b. Selective repeat (docs/transport-sr.md): the done-when figures through the CLI,
# its knobs in the JSON config, and sr against gbn refused at setup with the reason.
DW = ["--size", "1048576", "--messages", "32", "--mtu", "1024", "--rate-gbps", "100",
      "--rtt-us", "10"]
g = {}
for t in ("sr", "gbn"):
    for loss in ("0", "0.01"):
        o = sim_json(*DW, "--transport", t, "--loss", loss)
        check(o.get("completed") is True and o.get("corrupt") == 0 and
              o.get("duplicates_delivered") == 0 and o.get("bytes_verified") == 32 << 20,
              f"done-when {t} {loss}: {o.get('first_error')}")
        g[t, loss] = o.get("goodput_gbps") or 0
check(g["sr", "0.01"] >= 0.85 * g["sr", "0"], f"sr 1% vs own loss-free: {g}")
check(g["sr", "0.01"] >= 2 * g["gbn", "0.01"], f"sr vs gbn at 1%: {g}")
check(g["sr", "0"] >= 0.97 * g["gbn", "0"], f"sr vs gbn at 0 loss: {g}")
o = sim_json(*DW, "--transport", "sr", "--bdp-bytes", "200000", "--rto-low-us", "50",
             "--rto-high-us", "500", "--sr-window", "2048", "--loss", "0.001")
cfg = o.get("config", {})
check(cfg.get("transport") == "sr" and cfg.get("bdp_bytes") == 200000 and
      cfg.get("sr_window") == 2048 and o.get("completed") is True, f"sr knobs: {cfg}")
rc, out, err = sim("--transport", "sr", "--peer-transport", "gbn")
check(rc == 2 and "mismatch" in err and "both ends must be sr" in err, f"mismatch: {rc} {err}")
o = sim_json("--transport", "sr", "--peer-transport", "gbn", "--skip-mode-check", "1",
             "--messages", "4", expect_rc=1)
check(o.get("completed") is False and o.get("bytes_verified") == 0 and o.get("corrupt") == 0,
      f"in-band mismatch: {o}")
a = sim_json("--transport", "sr", "--loss", "0.02", "--reorder", "0.02", "--seed", "7")
b = sim_json("--transport", "sr", "--loss", "0.02", "--reorder", "0.02", "--seed", "7")
check(a.get("goodput_gbps") == b.get("goodput_gbps") and
      a.get("retransmitted_packets") == b.get("retransmitted_packets"), "sr determinism")

if SCEN:
    for name in ("lossy-mix.ini", "psn-wrap.ini"):
        o = sim_json("--config", os.path.join(SCEN, name), "--transport", "sr")
        check(o.get("completed") is True and o.get("corrupt") == 0 and
              o.get("duplicates_delivered") == 0, f"sr {name}: {o.get('first_error')}")
    o = sim_json("--config", os.path.join(SCEN, "sr-done-when.ini"))
    check(o.get("completed") is True and o.get("config", {}).get("transport") == "sr" and
          (o.get("goodput_gbps") or 0) >= 0.85 * g["sr", "0"], f"sr-done-when.ini: {o}")

# 8. Human output names the verdict.
rc, out, err = sim("--messages", "5")
check(rc == 0 and "OK: every message completed intact" in out, f"human: {out}")

print(f"sim_cli: {'FAILED' if fails else 'ok'} ({fails} failures)")
sys.exit(1 if fails else 0)
