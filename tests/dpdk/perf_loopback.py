#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rocefw-perf --loopback: the RC transport on the DPDK port layer (dataplane/rfw_nic.c), both
endpoints in one process over a ring port pair, on one core, without hugepages.

Checks, from the JSON each run writes: WRITE, READ and SEND bandwidth runs at sizes around the
path MTU (1023/1024/1025 with --mtu 1024, 4095/4097 with 4096) and around 64 KiB (65535/65537),
several QPs, and FETCH_AND_ADD, all with verified=true (every byte compared) and the iteration
count asked for, and the packets the data's sender copied with their ICRC in one pass counted
against the rule (--tx-ref-min, the ring port taking no payload from the MR); every size from
2 B to 8 MiB in one run (SEND); CE marks -> CNPs -> reaction
point -> paced packets; WRITE, SEND and READ latency runs with ordered percentiles; that a
damaged byte is caught (the checker can fail); that a DCQCN profile of 'none' works too; that
--cc-profile timely paces on TIMELY's RTT signal alone; that -Q (perftest's --cq-mod) gives one
completion per Q messages and the last yet checks every message, a damaged unsignaled one
included, and ends a timed run on a group boundary; that -l (perftest's --post_list) posts
lists of WRs with the same checks; and that bad options are named and exit
with status 2 before EAL starts. Speed is not asserted here (docs/perf.md).

usage: perf_loopback.py ROCEFW_PERF
"""
import json
import os
import re
import subprocess
import time
import sys
import tempfile

from tx_ref_rule import ref_packets

PERF = sys.argv[1]
EAL = ["--no-huge", "-m", "512", "--no-pci", "--no-shconf", "-l", "0",
       "--log-level=lib.eal:warning"]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def run(args, tmp, expect_rc=0):
    out = os.path.join(tmp, "r.json")
    if os.path.exists(out):
        os.unlink(out)
    p = subprocess.run([PERF] + EAL + ["--"] + args + ["--loopback", "--out_json", out],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != expect_rc:
        print(p.stdout + p.stderr)
    check(p.returncode == expect_rc, f"{' '.join(args)}: exit {p.returncode} == {expect_rc}")
    if not os.path.exists(out):
        check(False, f"{' '.join(args)}: JSON written")
        return None, p
    with open(out) as f:
        return json.load(f), p


def bw_case(tmp, op, size, n, extra=()):
    """One verified bw run, checked; its JSON (None: not written)."""
    args = [op, "bw", "-s", str(size), "-n", str(n)] + list(extra)
    j, _ = run(args, tmp)
    if j is None:
        return None
    name = " ".join(args)
    check(j["schema"] == "rocefw-perf/1", f"{name}: schema")
    r = j["results"][0]
    qps = j["qps"]
    check(r["bytes"] == size, f"{name}: bytes {r['bytes']}")
    check(r["iterations"] == n * qps, f"{name}: iterations {r['iterations']} == {n * qps}")
    check(r["verified"] is True, f"{name}: verified")
    check(r["checked_bytes"] == n * qps * size, f"{name}: every byte checked")
    check(r["bw_average_gbps"] > 0 and r["msg_rate_mpps"] > 0, f"{name}: rates > 0")
    check(r["bound_gbps"] > 0 and 0 < r["bound_ratio"], f"{name}: bound measured")
    # the byte-work bound (twice the passes of the one-copy bound: both ends' copy and ICRC),
    # measured, and the ratio is goodput over it (their order is not checked: each is timed
    # for 20 ms on a shared machine)
    bw = r["byte_work_bound_gbps"]
    check(bw > 0 and abs(r["byte_work_ratio"] - r["nic_goodput_gbps"] / bw) < 1e-3,
          f"{name}: byte-work bound measured ({bw:.1f} Gb/s), ratio = NIC goodput / it")
    # the checker's and the sender's stamping costs are measured and taken out of the
    # loopback's wall-clock goodput: NIC goodput = bytes / (elapsed - messages x (check_ns +
    # stamp_ns)); every op here stamps its messages (WRITE, SEND, READ). The stamp's is its
    # marginal cost over the copy that follows it (bound.c), which can be nil: its stores
    # hide under that copy's cache misses, or the difference of two timings is noise.
    crc_copy_check(name, j, op, size, extra)
    cns, sns = r["check_ns_per_msg"], r["stamp_ns_per_msg"]
    wall_ns = r["iterations"] * r["bytes"] * 8 / r["bw_average_gbps"]
    if r["iterations"] * (cns + sns) >= wall_ns:
        # Both costs are timed after the run, 20 ms each: on a loaded machine they can come
        # out above the run's own time per message, and then the tool keeps the wall-clock
        # goodput (docs/perf.md) rather than a negative time.
        check(cns > 0 and sns >= 0 and r["nic_goodput_gbps"] == r["bw_average_gbps"],
              f"{name}: checker {cns:.1f} + stamp {sns:.1f} ns/message timed above the run's "
              f"{wall_ns / r['iterations']:.1f} (a loaded machine): NIC goodput kept at wall")
        return j
    want = r["iterations"] * r["bytes"] * 8 / (wall_ns - r["iterations"] * (cns + sns))
    check(cns > 0 and sns >= 0 and r["nic_goodput_gbps"] > r["bw_average_gbps"]
          and abs(r["nic_goodput_gbps"] - want) / want < 5e-3,
          f"{name}: checker {cns:.1f} and stamp {sns:.1f} ns/message taken out: NIC goodput "
          f"{r['nic_goodput_gbps']:.2f} vs wall {r['bw_average_gbps']:.2f} Gb/s")
    return j


def crc_copy_check(name, j, op, size, extra):
    """The ring port takes no payload attached from the MR, so the data's sender (A for WRITE
    and SEND, B's READ responses) copies each packet the rule names (at least --tx-ref-min
    bytes, default 1024, a multiple of 4) into its frame with the ICRC in one pass
    (docs/nic.md "Payload sent from the MR"); retransmitted packets may add to it. None is sent
    from the MR, and the other side copies none."""
    want = ref_packets(op, extra, size, j["mtu"]) * j["results"][0]["iterations"]
    sender, other = ("counters_b", "counters_a") if op == "read" else ("counters_a", "counters_b")
    got = j[sender].get("nic_tx_crc_copy_frames", 0)
    rtx = j[sender].get("retransmitted_packets", 0)
    check(want <= got <= want + rtx and j[other].get("nic_tx_crc_copy_frames", 0) == 0 and
          "nic_tx_ref_frames" not in j["counters_a"] and "nic_tx_ref_frames" not in j["counters_b"],
          f"{name}: {got} frames copied with their ICRC in one pass, {want} expected "
          f"(+{rtx} retransmitted), none sent from the MR")


def timed_groups(tmp, opt, g):
    """Timed, with -Q or -l @g: past the deadline a QP posts to the end of its group (or list),
    whose completion ends it: a whole number of groups, one completion each, verified."""
    j, _ = run(["write", "bw", "-s", "64", "-D", "1", opt, str(g)], tmp)
    if j is not None:
        r = j["results"][0]
        check(r["verified"] and r["iterations"] > 0 and r["iterations"] % g == 0 and
              r["completions"] == r["iterations"] // g,
              f"write bw -D 1 {opt} {g}: {r['iterations']} messages in "
              f"{r['completions']} completions, verified")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for op in ("write", "read", "send"):
            for size in (1023, 1024, 1025):
                bw_case(tmp, op, size, 300, ["--mtu", "1024"])
            bw_case(tmp, op, 4095, 300)
            bw_case(tmp, op, 4097, 300)
            for size in (65535, 65537):
                bw_case(tmp, op, size, 60, ["--mtu", "4096"])
        bw_case(tmp, "write", 65536, 40, ["-q", "4", "--mtu", "2048"])
        # the one-pass copy from 64 bytes on, and none at all (crc_copy_check)
        bw_case(tmp, "write", 1000, 100, ["--mtu", "256", "--tx-ref-min", "64"])
        bw_case(tmp, "send", 65536, 20, ["--tx-ref-min", "0"])
        bw_case(tmp, "send", 8192, 100, ["-q", "3", "--cc-profile", "none"])
        bw_case(tmp, "read", 100000, 20, ["-q", "2", "--cc-profile", "mlx5-cx5", "-t", "4"])
        # Depth: without -t a QP keeps 2 MiB in flight (at least 2 messages, at most
        # perftest's 128); -t is taken as given.
        for size, extra, want in ((64, [], 128), (65536, [], 32), (8388608, [], 2),
                                  (65536, ["-t", "100"], 100)):
            _, p = run(["write", "bw", "-s", str(size), "-n", "4"] + extra, tmp)
            m = re.search(r"TX depth\s*:\s*(\d+)", p.stdout)
            check(m is not None and int(m.group(1)) == want,
                  f"write bw -s {size} {' '.join(extra)}: TX depth {m and m.group(1)} == {want}")
        # many QPs (issue 20): set up while the ports answer each other's ARP, depth cut to
        # the CQ, every byte of every QP's messages verified
        bw_case(tmp, "write", 64, 8, ["-q", "4096"])
        bw_case(tmp, "send", 256, 4, ["-q", "1024"])

        # Every size in one process (fresh QPs per size; receive WQEs of one size never
        # serve the next): 2 B .. 8 MiB, all verified.
        j, _ = run(["send", "bw", "-a", "-n", "4", "--mtu", "2048"], tmp)
        if j is not None:
            rs = j["results"]
            check([r["bytes"] for r in rs] == [2 << i for i in range(23)],
                  "send bw -a: 2 B .. 8 MiB")
            check(all(r["verified"] and r["iterations"] == 4 for r in rs),
                  "send bw -a: every size verified")

        j, _ = run(["atomic", "bw", "-n", "3000", "-q", "2"], tmp)
        if j is not None:
            r = j["results"][0]
            check(r["bytes"] == 8 and r["iterations"] == 6000, "atomic bw: 2 x 3000 adds")
            check(r["verified"] is True, "atomic bw: every returned value checked")

        # Congestion signals end to end: CE marks -> B's notification point sends CNPs ->
        # A's reaction point cuts the rate -> A's scheduler makes requests wait for the pacer.
        j, _ = run(["write", "bw", "-s", "65536", "-n", "100", "--ce-mark-every", "20"], tmp)
        if j is not None:
            a, b = j["counters_a"], j["counters_b"]
            check(j["results"][0]["verified"] is True, "CE marking: data verified")
            check(j["ce_marked"] > 0 and b.get("np_ecn_marked_roce_packets") == j["ce_marked"],
                  f"CE marking: B saw every mark ({j['ce_marked']})")
            check(b.get("np_cnp_sent", 0) > 0 and "nic_np_cnp_sent" not in b,
                  "CE marking: B sent CNPs, counted once (by the transport)")
            check(a.get("rp_cnp_handled") == b.get("np_cnp_sent"),
                  "CE marking: every CNP reached A's reaction point")
            check(a.get("nic_pacer_waits", 0) > 0, "CE marking: A's requests waited for the pacer")
        j, _ = run(["write", "bw", "-s", "65536", "-n", "100"], tmp)
        if j is not None:
            check("np_cnp_sent" not in j["counters_b"] and
                  "nic_pacer_waits" not in j["counters_a"],
                  "no CE marks: no CNP, nothing paced (line rate not reached)")
        # TIMELY on the NIC (issue 14): without any CE mark (where unified paces nothing, above),
        # every RTT sample is above a T_high of 2 us (--cc-set): it cuts, and the NIC paces. (With
        # the default 1 ms T_high the loopback's RTTs sit in the gradient band, where a cut
        # below the rate the core achieves is not certain: a clean-clone run under load saw none.)
        j, _ = run(["write", "bw", "-s", "65536", "-n", "64", "--cc-profile", "timely",
                    "--cc-set", "timely_t_low=1,timely_t_high=2"], tmp)
        if j is not None:
            check(j["results"][0]["verified"] is True and "np_cnp_sent" not in j["counters_b"] and
                  j["counters_a"].get("nic_pacer_waits", 0) > 0,
                  "cc timely: no CE, no CNP, yet A's requests waited for TIMELY's pacer")
        j, _ = run(["write", "bw", "-s", "65536", "-n", "100", "--ce-mark-every", "20",
                    "--cc-profile", "none"], tmp)
        if j is not None:
            check(j["counters_b"].get("np_cnp_sent", 0) > 0 and
                  "nic_pacer_waits" not in j["counters_a"],
                  "cc none: the built-in NP still answers CE, nothing is paced")

        j, _ = run(["write", "lat", "-s", "64", "-n", "500"], tmp)
        if j is not None:
            r = j["results"][0]
            check(r["verified"] is True and r["iterations"] == 500, "write lat: 500 verified")
            check(0 < r["t_min_us"] <= r["t_typical_us"] <= r["p99_us"] <= r["p999_us"]
                  <= r["t_max_us"], "write lat: t_min <= typical <= 99% <= 99.9% <= t_max")
        j, _ = run(["send", "lat", "-s", "5000", "-n", "300", "--mtu", "1024"], tmp)
        if j is not None:
            r = j["results"][0]
            check(r["verified"] is True and r["iterations"] == 300, "send lat: 300 verified")
            check(0 < r["t_min_us"] <= r["t_typical_us"] <= r["p999_us"] <= r["t_max_us"],
                  "send lat: ordered percentiles")
        j, p = run(["send", "lat", "-n", "100", "--check-corrupt-one"], tmp, expect_rc=1)
        if j is not None:
            check(j["results"][0]["verified"] is False and "differs" in p.stderr,
                  "send lat: damaged byte detected")
        j, _ = run(["read", "lat", "-s", "4096", "-n", "200"], tmp)
        if j is not None:
            check(j["results"][0]["verified"] is True, "read lat: verified")

        # The checker can fail: one flipped byte must turn verified false and exit 1.
        for op in ("write", "read", "send", "atomic"):
            j, p = run([op, "bw", "-s", "8" if op == "atomic" else "2048", "-n", "100",
                        "--check-corrupt-one"], tmp, expect_rc=1)
            if j is not None:
                check(j["results"][0]["verified"] is False, f"{op}: damaged byte detected")
                check("differs" in p.stderr or "wrong value" in p.stderr,
                      f"{op}: the failure is named")

        # -Q (perftest's --cq-mod): a completion every Q messages and for the last one, yet
        # every message checked (bw_case: checked_bytes); Q is cut to the TX depth. -l
        # (perftest's --post_list): lists of L WRs in one post; -Q is L unless given (then a
        # divisor of L), both cut to the TX depth, -Q then to a divisor of the list; the last
        # list of a run shorter when -n is not a multiple. Columns: the -Q and -l in effect.
        for op, size, n, extra, q, lst in (
                ("write", 64, 1000, ["-Q", "32"], 32, 1),
                ("read", 4096, 301, ["-Q", "7", "-q", "2"], 7, 1),
                ("send", 2048, 300, ["-Q", "100"], 100, 1),
                ("atomic", 8, 95, ["-Q", "10"], 10, 1),
                ("write", 1024, 50, ["-Q", "9", "-t", "4"], 4, 1),
                ("write", 64, 1000, ["-l", "16"], 16, 16),
                ("write", 64, 1000, ["-l", "16", "-Q", "4"], 4, 16),
                ("write", 64, 1000, ["-l", "12", "-Q", "6", "-t", "8"], 4, 8),
                ("read", 4096, 301, ["-l", "8", "-q", "2"], 8, 8),
                ("send", 2048, 300, ["-l", "16"], 16, 16),
                ("atomic", 8, 95, ["-l", "10"], 10, 10)):
            j = bw_case(tmp, op, size, n, extra)
            if j is not None:
                r, want = j["results"][0], j["qps"] * -(-n // q)
                check(r["cq_mod"] == q and r["post_list"] == lst and
                      r["completions"] == want and r["verified"],
                      f"{op} bw {' '.join(extra)}: cq_mod {r['cq_mod']}, post_list "
                      f"{r['post_list']}, {r['completions']} completions == {want}")
        timed_groups(tmp, "-l", 16)
        # a damaged message between two completions is still found (message 50 of 100 with
        # -Q 32: no completion of its own)
        for op in ("write", "read"):
            j, p = run([op, "bw", "-s", "512", "-n", "100", "-Q", "32", "--check-corrupt-one"],
                       tmp, expect_rc=1)
            if j is not None:
                check(j["results"][0]["verified"] is False and "differs" in p.stderr,
                      f"{op} bw -Q 32: damaged unsignaled message detected")
        timed_groups(tmp, "-Q", 32)

        # lat -D runs for its time (as perftest's), not until a sample buffer is full: 5 s of
        # 2-byte WRITE ping-pongs, every sample kept in a ring of the last 10^6.
        t0 = time.time()
        j, _ = run(["write", "lat", "-s", "2", "-D", "5"], tmp)
        secs = time.time() - t0
        check(4.8 <= secs <= 20, f"write lat -D 5 ran {secs:.1f} s")
        if j is not None:
            res = j["results"][0]
            check(res["iterations"] > 0 and res["verified"], "write lat -D 5: iterations, verified")
            print(f"write lat -D 5: {res['iterations']} iterations in {secs:.1f} s")

        # Bad options: named, exit 2, no EAL start-up (no JSON written either).
        bad = [
            (["write", "bw", "--mtu", "1000", "--loopback"], "--mtu"),
            (["write", "bw", "-s", "0", "--loopback"], "--size"),
            (["write", "bw", "-q", "16385", "--loopback"], "--qps"),
            (["write", "bw", "-q", "16385", "--ip", "10.0.0.1"], "--qps"),
            (["write", "bw", "-q", "33", "--ip", "10.0.0.1", "--perftest"],
             "--perftest: up to 32 QPs"),
            (["write", "bw", "--cc-profile", "bogus", "--loopback"], "--cc-profile"),
            (["write", "bw", "--dscp", "64", "--loopback"], "--dscp"),
            (["write", "bw", "--frobnicate", "--loopback"], "--frobnicate"),
            (["write", "xx", "--loopback"], "xx"),
            (["copy", "bw", "--loopback"], "copy"),
            (["atomic", "bw", "-s", "16", "--loopback"], "--size"),
            (["write", "bw", "-n", "5", "-D", "1", "--loopback"], "--iters"),
            (["write", "bw", "-Q", "0", "--loopback"], "--cq-mod"),
            (["write", "bw", "-Q", "1025", "--loopback"], "--cq-mod"),
            (["write", "lat", "-Q", "2", "--loopback"], "--cq-mod"),
            (["write", "bw", "-Q", "2", "--ip", "10.0.0.1", "--perftest"], "--cq-mod"),
            (["write", "bw", "-l", "0", "--loopback"], "--post_list"),
            (["write", "bw", "-l", "1025", "--loopback"], "--post_list"),
            (["write", "lat", "-l", "2", "--loopback"], "--post_list"),
            (["write", "bw", "-l", "2", "--ip", "10.0.0.1", "--perftest"], "--post_list"),
            (["write", "bw", "-l", "16", "-Q", "5", "--loopback"], "--post_list"),
            (["write", "bw"], "--loopback"),
            (["write", "bw", "-n", "5", "--cc-set", "bogus=1", "--loopback"], "--cc-set: bogus"),
            (["write", "bw", "-n", "5", "--cc-profile", "timely", "--cc-set", "timely_t_high=0",
              "--loopback"], "timely_t_high: 0 out of range"),
            (["write", "bw", "-n", "5", "--cc-set", "rp_alpha_bits", "--loopback"],
             "expected name=value"),
            (["write", "bw", "-n", "5", "--cc-profile", "none", "--cc-set", "rp_ai_rate=5",
              "--loopback"], "--cc-set"),
        ]
        for args, word in bad:
            p = subprocess.run([PERF] + EAL + ["--"] + args, capture_output=True, text=True,
                               timeout=30)
            check(p.returncode == 2 and word in p.stderr,
                  f"bad option {' '.join(args)}: exit {p.returncode}, names {word}")
        p = subprocess.run([PERF] + EAL + ["write", "bw"], capture_output=True, text=True,
                           timeout=30)
        check(p.returncode == 2 and "'--'" in p.stderr, "missing '--': exit 2")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
