#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run rocefw-cc on small scripts and check a few output values against the DCQCN formulas
worked here (paper profile: alpha = 1 at the first CNP, cut RC * alpha / 2, fast recovery
RC = (RT + RC) / 2 every T = 55 us). Usage: test_rocefw_cc.py PATH/TO/rocefw-cc"""
import csv
import io
import os
import subprocess
import sys
import tempfile

EXE = sys.argv[1]
failures = []


def run(args, stdin=""):
    p = subprocess.run([EXE] + args, input=stdin, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def rows(out):
    lines = out.splitlines()
    if not lines or not lines[0].startswith("# rocefw-cc schema 2 "):
        raise AssertionError("missing schema line: %r" % lines[:1])
    data = [l for l in lines[1:] if not l.startswith("#")]
    return list(csv.DictReader(io.StringIO("\n".join(data))))


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def mbps(bps):
    return "%d.%06d" % (bps // 1000000, bps % 1000000)


LINE = 40000 * 1000000  # b/s

# 1. First CNP at line rate, then three timer firings printed between events.
rc_, out, err = run(["--profile", "paper", "--line-rate-mbps", "40000"],
                    "# comment\n\n0,cnp\n200000,tick\n")
check(rc_ == 0, "paper run exits 0 (%s)" % err)
r = rows(out)
check(list(r[0].keys())[:6] == ["t_ns", "rc_mbps", "rt_mbps", "alpha", "t_stage", "bc_stage"],
      "header starts t_ns,rc_mbps,rt_mbps,alpha,t_stage,bc_stage")
rc, rt = LINE - LINE * 1024 // 2048, LINE
check(r[0]["event"] == "cnp" and r[0]["rc_mbps"] == mbps(rc) and r[0]["rt_mbps"] == mbps(rt)
      and r[0]["alpha"] == "1.000000000000000", "first CNP row: %r" % r[0])
expect_t = [55000, 110000, 165000]
timers = [x for x in r if x["event"] == "timer"]
check([int(x["t_ns"]) for x in timers] == expect_t, "timer rows at 55/110/165 us: %r" % timers)
for x in timers:
    rc = (rt + rc + 1) // 2
    check(x["rc_mbps"] == mbps(rc) and x["state"] == "fr", "fast recovery row %r" % x)
check(r[-1]["event"] == "tick" and int(r[-1]["t_ns"]) == 200000, "last row is the tick")

# 2. Same script from a file gives the identical output (determinism, file argument).
with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    f.write("0,cnp\n200000,tick\n")
    script = f.name
rc2, out2, _ = run(["--profile", "paper", "--line-rate-mbps", "40000", script])
rc3, out3, _ = run(["--profile", "paper", "--line-rate-mbps", "40000", script])
check(rc2 == 0 and out2 == out3 and rows(out2) == rows(out)[0:len(rows(out2))],
      "file and stdin runs identical")

# 3. --set and --profile-file change the machine: rp_gd 12 cuts a quarter.
_, out, _ = run(["--profile", "paper", "--line-rate-mbps", "40000", "--set", "rp_gd=12"],
                "0,cnp\n")
check(rows(out)[0]["rc_mbps"] == mbps(LINE - LINE // 4), "--set rp_gd=12")
with tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False) as f:
    f.write("; a profile\n[dcqcn]\nrp_gd = 12\nrp_byte_reset = 1000  # bytes\n")
    ini = f.name
_, out, err = run(["--profile", "paper", "--line-rate-mbps", "40000", "--profile-file", ini],
                  "0,cnp\n1,tx,1000\n")
r = rows(out)
rc = LINE - LINE // 4
check(r[0]["rc_mbps"] == mbps(rc), "--profile-file rp_gd (%s)" % err)
check(r[1]["rc_mbps"] == mbps((LINE + rc + 1) // 2) and r[1]["bc_stage"] == "1",
      "byte-counter event from tx: %r" % r[1])

# 4. TIMELY: RTT 2 ms > T_high 1 ms: rate *= 1 - 0.8 * (1 - 1/2) in 1/1024 fixed point.
_, out, _ = run(["--algo", "timely", "--line-rate-mbps", "100000"], "0,rtt,2000000\n")
f_q10 = 819 * (2000000 - 1000000) // 2000000
r0 = 40000000
check(rows(out)[0]["rc_mbps"] == mbps((r0 - (r0 * f_q10 >> 10)) * 1000),
      "timely high-RTT decrease")

# 5. Errors name the line or the parameter and exit non-zero.
code, _, err = run(["--profile", "paper"], "0,cnp\n\nfoo\n")
check(code != 0 and ":3:" in err, "bad line reported with its number: %r" % err)
code, _, err = run([], "0,cnp\n10,jump\n")
check(code != 0 and ":2:" in err and "jump" in err, "unknown event: %r" % err)
code, _, err = run([], "10,cnp\n5,cnp\n")
check(code != 0 and ":2:" in err, "time going back: %r" % err)
# a time near 2^64 made the alpha timer's deadline wrap: the tick below ran timers for ever
# (found by fuzz_cc_script in CI as a timeout)
code, _, err = run([], "18446744073709550000,cnp\n18446744073709551615,tick\n")
check(code != 0 and ":1:" in err and "beyond the latest" in err, "time near 2^64: %r" % err)
code, _, err = run([], "0,tx\n")
check(code != 0 and ":1:" in err, "tx without bytes: %r" % err)
code, _, err = run(["--set", "rp_gd=40"], "")
check(code != 0 and "rp_gd: 40 out of range 0..31" in err, "--set range: %r" % err)
code, _, err = run(["--set", "rp_nope=1"], "")
check(code != 0 and "rp_nope" in err, "--set unknown: %r" % err)
code, _, err = run(["--profile", "nope"], "")
check(code != 0 and "nope" in err, "--profile unknown: %r" % err)
code, _, err = run(["--line-rate-mbps", "fast"], "")
check(code != 0 and "--line-rate-mbps" in err, "--line-rate-mbps bad: %r" % err)
code, _, err = run(["--bogus"], "")
check(code != 0 and "--bogus" in err, "unknown option: %r" % err)
with tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False) as f:
    f.write("[dcqcn]\nrp_gd = 11\n[other]\n")
    bad_ini = f.name
code, _, err = run(["--profile-file", bad_ini], "")
check(code != 0 and ":3:" in err, "bad INI section with line: %r" % err)

# 6. Listings.
code, out, _ = run(["--list-params"])
for name in ["rp_time_reset", "rp_byte_reset", "rp_threshold", "rp_ai_rate", "rp_hai_rate",
             "rp_min_rate", "rp_max_rate", "rp_min_dec_fac", "rp_gd",
             "rp_rate_to_set_on_first_cnp", "rp_dce_tcp_g", "rp_dce_tcp_rtt",
             "rp_rate_reduce_monitor_period", "rp_initial_alpha_value", "rp_clamp_tgt_rate",
             "rp_clamp_tgt_rate_ati", "np_min_time_between_cnps", "np_cnp_dscp", "np_cnp_prio",
             "rp_scope", "timely_beta"]:
    check(any(l.split()[:1] == [name] for l in out.splitlines()), "--list-params has " + name)
code, out, _ = run(["--list-profiles"])
for name in ["unified", "paper", "mlx5-cx5", "hpcc-ns3", "shared-port"]:
    check(any(l.split()[:1] == [name] for l in out.splitlines()), "--list-profiles has " + name)
code, out, _ = run(["--help"])
check(code == 0 and "--profile-file" in out, "--help")

# 7. --dump-profile round trip: each profile written as INI and read back on top of another
#    base gives the same trajectory as the built-in profile, on a script that exercises cuts,
#    folded CNPs, timers and the byte counter.
events = ["0,cnp", "2000,cnp", "3000,cnp", "40000,cnp"]
t = 50000
for i in range(400):
    t += 5000
    events.append("%d,tx,%d" % (t, 60000))
    if i % 97 == 0:
        events.append("%d,cnp" % t)
events.append("%d,tick" % (t + 3000000))
mixed = "\n".join(events) + "\n"
dumps = []
for prof in ["unified", "paper", "mlx5-cx5", "hpcc-ns3", "shared-port"]:
    code, ini_text, err = run(["--profile", prof, "--dump-profile"])
    check(code == 0 and ini_text.startswith(";"), "--dump-profile %s (%s)" % (prof, err))
    with tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False) as f:
        f.write(ini_text)
        dumps.append(f.name)
    base = "paper" if prof != "paper" else "unified"
    _, direct, _ = run(["--profile", prof], mixed)
    _, via_ini, err = run(["--profile", base, "--profile-file", dumps[-1]], mixed)
    check(len(rows(direct)) > 400 and rows(direct) == rows(via_ini),
          "profile %s equals its INI dump loaded over %s (%s)" % (prof, base, err))

# 8. The parameter table in docs/cc.md matches --list-params (it is generated from it).
if len(sys.argv) > 2:
    doc = open(sys.argv[2]).read()
    code, out, _ = run(["--list-params"])
    dc = out.split("\n\n")[0].splitlines()[2:]
    for l in dc:
        f = l.split(None, 8)
        row = "| `%s` | %s |" % (f[0], " | ".join(x.replace("|", "\\|") for x in f[1:]))
        check(row in doc, "docs/cc.md has the current row for " + f[0])

for p in [script, ini, bad_ini] + dumps:
    os.unlink(p)
if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("rocefw-cc: all checks passed")
