#!/usr/bin/python3
"""Side-by-side table of rdma-core's test suite on rxe and rocefw (interop/rxe/pyverbs-rxe.sh).

  pyverbs_table.py OUTDIR RUNS

Reads OUTDIR/rxe.N.log and OUTDIR/rocefw.N.log (N = 1..RUNS; `run_tests.py -v` output, a side
may be missing), writes OUTDIR/table.txt (every test), OUTDIR/table.md (the tests whose results
differ in full, counts for the rest) and prints table.txt. A test whose result differs between
runs of one side is "variable" (pyverbs draws random QP capabilities). Standard library only.
"""
import os
import re
import sys

START = re.compile(r"^(test\w*) \(tests\.([\w.]+)\)")
# (unittest prints the skip reason with repr(): in double quotes when it contains a quote)
RESULT = re.compile(r"(?:^|\.\.\. )(ok|FAIL|ERROR|skipped (['\"])(.*)\2|expected failure|unexpected success)\s*$")


def parse(path):
    """{test: result} of one verbose unittest log; result 'ok', 'FAIL', 'ERROR' or 'skip: why'."""
    res, cur = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if line.startswith("=" * 20) or line.startswith("Ran "):
                break
            m = START.match(line)
            if m:
                cur = m.group(2)   # Python 3.11: module.Class.method
                if not cur.endswith("." + m.group(1)):
                    cur += "." + m.group(1)
            if cur is None or cur in res:
                continue
            r = RESULT.search(line)
            if r:
                res[cur] = ("skip: " + r.group(3)) if r.group(3) is not None else r.group(1)
    return res


def side(outdir, name, runs):
    logs = [os.path.join(outdir, "%s.%d.log" % (name, n)) for n in range(1, runs + 1)]
    logs = [p for p in logs if os.path.exists(p)]
    per = [parse(p) for p in logs]
    tests = set().union(*per) if per else set()
    out = {}
    for t in tests:
        seen = []
        for p in per:
            r = p.get(t, "missing")
            if r not in seen:
                seen.append(r)
        out[t] = seen
    return out, len(per)


def norm(seen):
    """One side's results with the device name and libibverbs' rereg error detail (which
    differ between a kernel and a userspace provider) left out, for comparing the sides."""
    if seen is None:
        return None
    return [re.sub(r" \(Failed to rereg MR: .*\)$", "",
                   re.sub(r"Device \w+ doesn't", "Device DEV doesn't", s)) for s in seen]


def show(seen):
    if seen is None:
        return "-"
    if len(seen) == 1:
        return seen[0]
    return "variable (" + " / ".join(seen) + ")"


def kind(seen):
    """'pass' if every run passed, 'var' if some did, 'fail' on FAIL/ERROR, else 'skip'."""
    if seen is None:
        return "none"
    if all(s == "ok" for s in seen):
        return "pass"
    if any(s == "ok" for s in seen):
        return "var"
    if any(s in ("FAIL", "ERROR", "missing") for s in seen):
        return "fail"
    return "skip"


def main(argv):
    outdir, runs = argv[1], int(argv[2])
    rxe, nrxe = side(outdir, "rxe", runs)
    rfw, nrfw = side(outdir, "rocefw", runs)
    if not rxe and not rfw:
        sys.stderr.write("pyverbs_table: no results in %s\n" % outdir)
        return 1
    tests = sorted(set(rxe) | set(rfw))
    w = max(len(t) for t in tests)
    lines = ["%-*s  %-40s  %s" % (w, "test", "rxe (%d runs)" % nrxe, "rocefw (%d runs)" % nrfw)]
    for t in tests:
        lines.append("%-*s  %-40s  %s" % (w, t, show(rxe.get(t)), show(rfw.get(t))))

    def counts(d):
        c = {"pass": 0, "var": 0, "fail": 0, "skip": 0}
        for s in d.values():
            c[kind(s)] += 1
        return "%d tests: %d pass, %d variable (pass in some runs), %d FAIL/ERROR, %d skip" % (
            len(d), c["pass"], c["var"], c["fail"], c["skip"])

    lines += ["", "rxe:    " + counts(rxe), "rocefw: " + counts(rfw)]
    # what matters: rxe passes (in some run) and rocefw does not always pass
    worse = [t for t in tests if kind(rxe.get(t)) in ("pass", "var") and kind(rfw.get(t)) != "pass"
             and not (kind(rxe.get(t)) == "var" and kind(rfw.get(t)) == "var")]
    better = [t for t in tests if kind(rfw.get(t)) in ("pass", "var") and kind(rxe.get(t)) not in ("pass", "var")]
    lines += ["", "rxe passes, rocefw does not (%d):" % len(worse)]
    lines += ["  %s: rxe %s; rocefw %s" % (t, show(rxe.get(t)), show(rfw.get(t))) for t in worse]
    lines += ["", "rocefw passes, rxe does not (%d):" % len(better)]
    lines += ["  %s: rocefw %s; rxe %s" % (t, show(rfw.get(t)), show(rxe.get(t))) for t in better]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(outdir, "table.txt"), "w") as f:
        f.write(text)

    # markdown: tests whose results differ between the sides (or between runs) in full;
    # the rest as counts of identical outcomes
    md = ["| test | rxe | rocefw |", "|---|---|---|"]
    same = {}
    for t in tests:
        a, b = rxe.get(t), rfw.get(t)
        if a is not None and b is not None and len(a) == 1 and norm(a) == norm(b):
            a = norm(a)
            key = a[0] if not a[0].startswith("skip: ") else "skip: " + a[0][6:]
            same[key] = same.get(key, 0) + 1
            continue
        md.append("| %s | %s | %s |" % (t, show(a).replace("|", "/"), show(b).replace("|", "/")))
    md += ["", "Same result on both sides, every run:", "",
           "| result (both) | tests |", "|---|---|"]
    for k, n in sorted(same.items(), key=lambda kv: (-kv[1], kv[0])):
        md.append("| %s | %d |" % (k.replace("|", "/"), n))
    md += ["", "rxe: " + counts(rxe) + "; rocefw: " + counts(rfw) + "."]
    with open(os.path.join(outdir, "table.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
