#!/usr/bin/env python3
"""Randomised transport soak through rocefw-sim: the liveness and exactly-once oracle.

usage: soak.py SIM_EXE [--seeds A-B|A,B,...] [--jobs N] [--wire CHECKER] [--known FILE]
               [--show] [--fabric]

Each seed draws one configuration (below) and runs it; the seed passes only if every message
posted completed successfully, exactly once, in posting order, with the right completion opcode
and bytes (the sim's own per-message verification, docs/sim.md "Workload"), every receive at B
exactly once with its immediate data, nothing corrupt or duplicated, and all of it within the
simulated-time bound (--time-limit-ms: a hang or a stall past the bound is a failure). With
--wire the seed's capture must also pass tests/wire/rc_invariants.py (tshark-decoded RC rules).

Configuration per seed (random.Random(seed), so a seed names one run for ever; --show prints
its command line): transport gbn or sr (seed parity), op mixall (SEND, SEND with immediate,
WRITE, WRITE with immediate, READ, FETCH_ADD; sometimes one of them alone), message size,
MTU, QPs, depth, random loss, reorder, duplication and corruption (and sometimes burst loss),
start PSN (near the 2^24 wrap one time in four), ACK coalescing, max_rd_atomic, local ACK
timeout, and in sr the window (64..4096 PSNs) and BDP cap.

--fabric soaks the switch topology instead (config_fabric: 2-4 backlogged flows, RTTs 2 us
to 2 ms, a DCQCN profile, gbn or sr): every completion intact and exactly once (the sim's
`completed`), and per-flow liveness: a flow whose rate would carry 8 messages in the second
half of the run must complete something in it (local ACK timeout 4.2 ms, so a tail loss at
the switch is recovered well within that half). Known failures there: `soak-fabric:SEED`.

A seed listed in the known-failures file (tests/sim/soak_known_failures.txt, lines
`soak:SEED SYMPTOM itemN`, or `soak-wire:SEED RULE itemN` for what only --wire sees) that fails only with its listed symptoms is reported KNOWN and does
not fail the run; one that passes is reported so its line can be deleted.

Exit status 0: every seed passed or known; 1: a failure (each printed with its command line).
"""
import json
import os
import random
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import known_failures

TIME_LIMIT_MS = 2000  # the liveness bound, simulated; a clean seed needs a few ms


def config(seed):
    r = random.Random(seed)
    sr = seed % 2 == 1
    mtu = r.choice([256, 512, 1024, 2048, 4096])
    size = r.choice([1, 8, 200, 1000, 4096, 4097, 20000, 65536, r.randrange(1, 300000)])
    depth = r.choice([1, 2, 4, 8, 16])
    msgs = max(8, min(200, 4_000_000 // max(size, 1000)))
    op = r.choice(["mixall"] * 6 + ["write", "read", "send", "atomic", "send_imm",
                                    "write_imm"])
    args = ["--transport", "sr" if sr else "gbn", "--op", op, "--size", str(size),
            "--messages", str(r.randrange(msgs // 2, msgs + 1)), "--qps",
            str(r.choice([1, 1, 2, 4])), "--depth", str(depth), "--mtu", str(mtu),
            "--rtt-us", str(r.choice([2, 10, 50])),
            "--loss", f"{r.choice([0, 0.001, 0.01, 0.03]):g}",
            "--reorder", f"{r.choice([0, 0.01, 0.05]):g}",
            "--dup", f"{r.choice([0, 0.01, 0.05]):g}",
            "--corrupt", f"{r.choice([0, 0.001, 0.01]):g}",
            "--timeout", str(r.choice([6, 8, 10])),
            "--ack-every", str(r.choice([1, 4, 64])),
            "--max-rd-atomic", str(r.choice([1, 4, 16])),
            "--seed", str(seed), "--time-limit-ms", str(TIME_LIMIT_MS)]
    if r.random() < 0.25:
        args += ["--start-psn", hex(0xFFFFFF - r.randrange(0, 2000))]
    if r.random() < 0.2:
        args += ["--burst-loss", "0.002", "--burst-len", str(r.choice([2, 8, 32]))]
    if sr:
        args += ["--sr-window", str(r.choice([64, 256, 4096, 4096]))]
    return args


PROFILES = ["unified", "paper", "mlx5-cx5", "hpcc-ns3", "shared-port"]


def config_fabric(seed):
    """--fabric: backlogged flows through the switch (docs/sim.md "Congestion"), RTTs from
    2 us to 2 ms, a DCQCN profile, both transports; nothing lost but by the switch's queue.
    Local ACK timeout 4.2 ms (10): above the longest RTT plus a full queue, and at least six
    of them fit in the second half of the run, so a tail loss is recovered well within it."""
    r = random.Random(seed ^ 0xFAB)
    n = r.choice([2, 2, 3, 4])
    rtts = ",".join(str(r.choice([2, 10, 50, 500, 2000])) for _ in range(n))
    return ["--flows", str(n), "--rtt-us", rtts, "--profile", r.choice(PROFILES),
            "--transport", "sr" if seed % 2 else "gbn",
            "--size", str(r.choice([4096, 65536])), "--depth", str(r.choice([16, 128, 512])),
            "--max-unacked-psns", "65536", "--duration-ms", str(r.choice([50, 100])),
            "--timeout", "10", "--seed", str(seed)]


def fabric_symptoms(o, rc, args):
    """Liveness per flow: a flow whose rate machine lets it send (its final rate would carry 8
    messages in the second half of the run) must have completed something in that half."""
    if rc not in (0, 1):
        return [f"exit_{rc}"]
    bad = [] if o.get("completed") else ["not_completed"]  # corrupt, duplicates, errors
    bad += [k for k in ("corrupt", "duplicates_delivered") if o.get(k)]
    size = int(args[args.index("--size") + 1])
    half_s = float(args[args.index("--duration-ms") + 1]) / 2000
    for f in o.get("flows", []):
        if f["goodput_second_half_gbps"] == 0 and f["final_rate_gbps"] * 1e9 / 8 * half_s >= 8 * size:
            bad.append("flow_stalled")
            break
    return bad


def symptoms(o, rc):
    """The oracle: what is wrong with one run's JSON result (empty: the seed passed)."""
    bad = []
    if rc not in (0, 1):
        return [f"exit_{rc}"]
    if o.get("messages_completed") != o.get("messages_posted") or not o.get("completed"):
        if o.get("error_completions"):
            bad.append("error_completion")
        elif o.get("flushed_completions"):
            bad.append("flushed")
        else:
            bad.append("liveness")  # neither completed nor failed within the bound
    if o.get("corrupt"):
        bad.append("corrupt")
    if o.get("duplicates_delivered"):
        bad.append("duplicates")
    if rc != 0 and not bad:
        bad.append(f"exit_{rc}")
    return bad


def run_seed(sim, seed, checker, fabric=False):
    args = config_fabric(seed) if fabric else config(seed)
    with tempfile.TemporaryDirectory() as d:
        cap = os.path.join(d, "s.pcap")
        extra = ["--pcap", cap] if checker else []
        p = subprocess.run([sim, "--json", *args, *extra], capture_output=True, text=True)
        try:
            o = json.loads(p.stdout)
        except json.JSONDecodeError:
            return seed, [f"exit_{p.returncode}"], p.stderr.strip()[:200], args
        bad = fabric_symptoms(o, p.returncode, args) if fabric else symptoms(o, p.returncode)
        why = o.get("first_error") or ""
        if "flow_stalled" in bad:
            why += " | " + ", ".join(f"flow {f['flow']} ({f['rtt_us']} us): "
                                     f"{f['messages_completed']} msgs, 2nd half "
                                     f"{f['goodput_second_half_gbps']:.2f} Gb/s, rate "
                                     f"{f['final_rate_gbps']:.1f} Gb/s" for f in o["flows"])
        if checker and os.path.exists(cap):
            w = subprocess.run([sys.executable, checker, cap], capture_output=True, text=True)
            rules = sorted({ln.split(": ")[2] for ln in w.stdout.splitlines()
                            if ": frame " in ln})
            bad += rules or (["wire_check_failed"] if w.returncode else [])
            if w.returncode and not rules:
                why += " | " + (w.stderr or w.stdout).strip()[-200:]
            if rules:
                why += " | " + w.stdout.splitlines()[0].split(": ", 1)[1]
    return seed, bad, why, args


def parse_seeds(v):
    out = []
    for part in v.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b) + 1)) if b else [int(a)]
    return out


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    sim, seeds, jobs, checker, known_path, show = argv[0], list(range(1, 21)), 2, None, None, False
    fabric = False
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("--show", "--fabric"):
            show |= a == "--show"
            fabric |= a == "--fabric"
            i += 1
            continue
        v = argv[i + 1]
        if a == "--seeds":
            seeds = parse_seeds(v)
        elif a == "--jobs":
            jobs = int(v)
        elif a == "--wire":
            checker = v
        elif a == "--known":
            known_path = v
        else:
            print(f"unknown option {a}", file=sys.stderr)
            return 2
        i += 2
    if show:
        for s in seeds:
            print(f"seed {s}: rocefw-sim " + " ".join(config_fabric(s) if fabric else config(s)))
        return 0
    known = known_failures.load(known_path) if known_path else known_failures.load()
    fails = knowns = 0
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        tag = "soak-fabric" if fabric else "soak"
        for seed, bad, why, args in ex.map(lambda s: run_seed(sim, s, checker, fabric), seeds):
            k = dict(known.get(f"{tag}:{seed}", {}))
            if checker:
                k.update(known.get(f"soak-wire:{seed}", {}))
            if not bad:
                if k:
                    print(f"known failure passes: delete {tag}:{seed} from the known list")
                continue
            if set(bad) <= set(k):
                knowns += 1
                print(f"KNOWN seed {seed}: {bad} (waits for "
                      f"{sorted(set(k[b] for b in bad))})")
                continue
            fails += 1
            print(f"FAIL seed {seed}: {bad}: {why}\n    rocefw-sim {' '.join(args)}")
    print(f"soak: {len(seeds)} seeds, {fails} failed, {knowns} known failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
