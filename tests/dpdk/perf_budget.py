#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The fast path's instruction budget (tools/perf/budget.py, docs/perf.md "Instruction budget"):
64 B WRITEs over --loopback counted by valgrind's callgrind, Estats off and on.

- The stages sum to what valgrind itself counted (the callgrind file's own total), so the parse
  drops or double-counts nothing; "other" (functions no stage claims) stays under 2 %, so a
  renamed function does not fall out of its stage unnoticed.
- Ceilings, about 13 % above 2026-11-29's counts (2,730 per message off, +196 for Estats): a
  change that adds that much to the path fails here, on a machine whose timings swing by more.
- -Q 100 (a completion every 100 messages, perftest's default): fewer instructions than -Q 1,
  and Estats on at most 200 more (178 on 2026-11-29: the unsignaled WQEs' records go straight
  into the ring; 234 when they were built whole and packed again).
- -l 16 (perftest's --post_list: one post a list of 16 WRs, a completion per list): fewer
  instructions in the verbs and in all than -Q 16 alone (121 against 172 in the verbs, 2,617
  against 2,700 in all on 2026-11-29).
- --max is honoured: Estats on against a ceiling of 1 exits 1, its table still written.
- --transport sr (selective repeat): the same sum, sr.c's functions in their roles' stages
  ("other" under 2 %), and at most MAX_SR_EXTRA instructions a message above go-back-N's count
  of the same run (+110 on 2026-11-30; +309 before the in-order responder's short path, the
  timer's and the retransmission scan's tests made inline, and the SRETH written in words).
  Go-back-N's own inlining since (1a716c5) widened the gap to +189..+206 (CI failed at
  200 on 2026-12-01); with SR's retire inline too, +177..+185 on 2026-12-02, and a run's count
  moves by about 15 with the polls that its timing brings. The ceiling is 240: ~10 % of the
  message's 2,460, a step that size still fails here.
- 64 KiB WRITEs (500 messages): the same sum, and "other" under 2 % there too, where the
  ICRC of 4 KiB packets runs in ISA-L (46 % of the count was unclaimed before budget.py
  gave ISA-L to the ICRC's stage, 2026-11-30).
- --memif: the client of two processes over memif counted alone (1,909 a message on
  2026-11-29, the memif PMD's 211 included), the same sum, at most 2,200, and no responder or
  receive parsing beyond the ACKs (under 60 a message in those stages together).
Needs valgrind (Debian package valgrind); fails saying so otherwise.
usage: perf_budget.py BUDGET_PY ROCEFW_PERF"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BUDGET, PERF = sys.argv[1], sys.argv[2]
MSGS = 50000
MAX_OFF = 3100  # instructions per message, Estats off
MAX_ESTATS = 260  # Estats on minus off
MAX_MEMIF = 2200  # the memif client alone
MAX_ESTATS_Q = 200  # Estats on minus off, -Q 100
MAX_SR_EXTRA = 240  # --transport sr minus go-back-N
failed = 0


def check(cond, what):
    global failed
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failed += 1


def budget(d, name, *extra):
    out = os.path.join(d, name + ".json")
    p = subprocess.run([sys.executable, BUDGET, PERF, "--msgs", str(MSGS), "--json", out] +
                       list(extra), capture_output=True, text=True, timeout=600)
    print(p.stdout, end="")
    if p.returncode == 2 or not os.path.exists(out):
        print(p.stderr[-2000:])
        return p.returncode, None
    return p.returncode, json.load(open(out))


def consistent(tag, b):
    stages = b["stages"]
    counted = sum(stages.values()) * b["msgs"]
    check(abs(counted - b["valgrind_total"]) <= 1,
          f"{tag}: stages sum to valgrind's own total ({counted:.0f} vs {b['valgrind_total']})")
    check(stages["other"] < 0.02 * b["total"],
          f"{tag}: unclaimed functions {stages['other']:.1f} < 2 % of {b['total']:.1f}")


def moderated(d, off):
    """-Q 100, Estats off and on, against @off (-Q 1)."""
    _, qo = budget(d, "q100", "--cq-mod", "100")
    _, qe = budget(d, "q100e", "--cq-mod", "100", "--estats")
    check(qo is not None and qe is not None, "-Q 100: counted, Estats off and on")
    if qo is None or qe is None:
        return
    consistent("-Q 100", qo)
    check(qo["total"] < off["total"],
          f"-Q 100: {qo['total']:.1f} < {off['total']:.1f} instructions per message (-Q 1)")
    cost = qe["total"] - qo["total"]
    check(0 < cost <= MAX_ESTATS_Q,
          f"-Q 100: Estats adds {cost:.1f} instructions per message, 0 < cost <= {MAX_ESTATS_Q}")


def listed(d):
    """-l 16 (lists of 16 WRs per post, a completion per list) against -Q 16 alone."""
    _, q16 = budget(d, "q16", "--cq-mod", "16")
    _, l16 = budget(d, "l16", "--post-list", "16")
    check(q16 is not None and l16 is not None and l16["post_list"] == 16,
          "-Q 16 and -l 16: counted")
    if q16 is None or l16 is None:
        return
    consistent("-l 16", l16)
    check(l16["stages"]["verbs"] < q16["stages"]["verbs"] and l16["total"] < q16["total"],
          f"-l 16: verbs {l16['stages']['verbs']:.1f} < {q16['stages']['verbs']:.1f}, total "
          f"{l16['total']:.1f} < {q16['total']:.1f} instructions per message (-Q 16)")


def selective(d, off):
    """--transport sr against @off (go-back-N, the same run)."""
    _, sr = budget(d, "sr", "--transport", "sr")
    check(sr is not None, "--transport sr: counted")
    if sr is None:
        return
    consistent("sr", sr)
    extra = sr["total"] - off["total"]
    check(extra <= MAX_SR_EXTRA,
          f"sr: {sr['total']:.1f} instructions per message, {extra:+.1f} on go-back-N's "
          f"{off['total']:.1f} (at most +{MAX_SR_EXTRA})")


def large(d):
    """64 KiB WRITEs: the long frames' ICRC (ISA-L) in its stage."""
    _, big = budget(d, "64k", "--size", "65536", "--msgs", "500")
    check(big is not None and big["size"] == 65536, "64 KiB: counted")
    if big is not None:
        consistent("64 KiB", big)


def main():
    if shutil.which("valgrind") is None:
        print("FAIL valgrind missing (Debian package valgrind): the budget cannot be counted")
        return 1
    with tempfile.TemporaryDirectory() as d:
        rc, off = budget(d, "off", "--max", str(MAX_OFF))
        check(off is not None, "budget ran with Estats off")
        if off is None:
            return 1
        consistent("off", off)
        check(rc == 0 and off["total"] <= MAX_OFF,
              f"off: {off['total']:.1f} instructions per message <= {MAX_OFF}")
        check(off["stages"]["estats"] == 0, "off: no Estats instructions")
        rc, on = budget(d, "on", "--estats", "--max", "1")
        check(on is not None and rc == 1, f"on: --max 1 exceeded, exit 1 (exit {rc})")
        if on is None:
            return 1
        consistent("on", on)
        cost = on["total"] - off["total"]
        check(on["stages"]["estats"] > 0 and 0 < cost <= MAX_ESTATS,
              f"on: Estats adds {cost:.1f} instructions per message, 0 < cost <= {MAX_ESTATS}")
        moderated(d, off)
        listed(d)
        selective(d, off)
        large(d)
        rc, mf = budget(d, "memif", "--memif")
        check(mf is not None and rc == 0 and mf["mode"] == "memif-client", "memif client counted")
        if mf is not None:
            consistent("memif", mf)
            st = mf["stages"]
            check(mf["total"] <= MAX_MEMIF,
                  f"memif: the client's {mf['total']:.1f} per message <= {MAX_MEMIF}")
            rx = st["rx_parse"] + st["rx_transport"] + st["responder"]
            check(rx < 60, f"memif: the client receives only ACKs ({rx:.1f} per message)")
    print(f"{failed} check(s) failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
