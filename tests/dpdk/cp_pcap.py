#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rocefw-cp end to end with net_pcap ports: a capture of ECT(0) RoCEv2 frames (written with
wire/frame.h by gen_ect_pcap) is replayed by the pcap PMD much faster than the bottleneck,
so the queue builds; the output capture is checked with `rocefw-replay check --json`.

usage: cp_pcap.py ROCEFW_CP ROCEFW_REPLAY GEN_ECT_PCAP
"""
import json
import os
import subprocess
import sys
import tempfile

CP, REPLAY, GEN = sys.argv[1:4]
EAL = ["--no-huge", "-m", "512", "--no-pci", "--no-shconf", "-l", "0",
       "--log-level=lib.eal:warning"]
N = 4000
PAYLOAD = 1024
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def replay(path):
    out = subprocess.run([REPLAY, "check", "--json", path], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def cp(tmp, inp, name, opts):
    out = os.path.join(tmp, "out-" + name + ".pcap")
    vdev = f"--vdev=net_pcap0,rx_pcap={inp},tx_pcap={out}"
    r = subprocess.run([CP] + EAL + [vdev, "--", "--idle-exit-ms", "200", "--json"] + opts,
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"rocefw-cp {name} exited {r.returncode}")
    stats = json.loads(r.stdout)
    assert stats["schema"] == "rocefw.cp.stats/1", stats
    return stats["ports"][0], replay(out)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        ect = os.path.join(tmp, "ect.pcap")
        mixed = os.path.join(tmp, "mixed.pcap")
        subprocess.run([GEN, ect, str(N), str(PAYLOAD)], check=True)
        subprocess.run([GEN, mixed, str(N), str(PAYLOAD), "4"], check=True)
        src = replay(ect)
        check(src["frames"] == N and src["ecn"]["ect0"] == N and src["icrc_bad"] == 0,
              f"input: {N} ECT(0) frames with good ICRCs")

        # 1. Bottleneck 1 Gbit/s, offered load far above: the queue fills, RED marks.
        csv = os.path.join(tmp, "q.csv")
        st, rep = cp(tmp, ect, "marked",
                     ["--rate-gbps", "1", "--queue-kb", "256", "--kmin-kb", "64",
                      "--kmax-kb", "192", "--pmax", "0.1", "--csv", csv, "--sample-us", "50"])
        print("  cp:", {k: st[k] for k in ("rx_pkts", "forwarded", "marked_ce", "dropped_tail",
                                           "queue_hw_bytes")})
        print("  out:", rep["frames"], rep["ecn"], "icrc_bad", rep["icrc_bad"])
        check(st["rx_pkts"] == N, "every input frame received")
        check(rep["ecn"]["ce"] > 0, "CE marks appear in the output")
        check(rep["ecn"]["ce"] == st["marked_ce"], "output CE count = cp's marked_ce")
        check(rep["icrc_bad"] == 0 and rep["icrc_ok"] == rep["frames"],
              "every ICRC still valid after marking (the ICRC masks ECN)")
        check(rep["malformed"] == 0, "nothing malformed (IPv4 header checksum fixed)")
        check(rep["frames"] == st["forwarded"], "output frames = forwarded")
        check(st["dropped_tail"] > 0, "queue overflowed: tail drops")
        check(st["forwarded"] + st["dropped_tail"] == N, "forwarded + dropped = received")
        # The pcap PMD stamps frames when they are sent: the output rate is the bottleneck's,
        # counting the 24 bytes of preamble, IFG and FCS per frame (--overhead default).
        gbps = (rep["bytes"] + 24 * rep["frames"]) * 8 / rep["duration_ns"]
        # Never above the bottleneck. (Below it only when this process is descheduled: the
        # pcap input is read by the same loop, so a loaded machine starves the queue.)
        check(0.2 < gbps < 1.15, f"output rate {gbps:.3f} Gbit/s for a 1 Gbit/s bottleneck")
        check(256 * 1024 - 4200 < st["queue_hw_bytes"] <= 256 * 1024,
              f"high-water {st['queue_hw_bytes']} within one frame of --queue-kb")
        lines = open(csv).read().splitlines()
        check(lines[0].startswith("# schema=rocefw.cp.queue/1"), "CSV schema comment")
        check(lines[1] == "t_ns,port,queue_bytes,queue_pkts,marked,dropped", "CSV header")
        rows = [list(map(int, l.split(","))) for l in lines[2:]]
        check(len(rows) > 10, f"CSV has samples ({len(rows)})")
        check(max(r[2] for r in rows) > 64 * 1024, "sampled queue went above Kmin")
        check(all(rows[i][0] <= rows[i + 1][0] for i in range(len(rows) - 1)),
              "CSV time increases")
        check(rows[-1][4] == st["marked_ce"], "last CSV row's marked = marked_ce")

        # 2. Bottleneck above the offered load: no queue beyond one RX burst, no marks.
        st, rep = cp(tmp, ect, "unmarked",
                     ["--rate-gbps", "1000", "--queue-kb", "256", "--kmin-kb", "64",
                      "--kmax-kb", "192", "--pmax", "0.1"])
        print("  cp:", {k: st[k] for k in ("forwarded", "marked_ce", "queue_hw_bytes")})
        check(rep["frames"] == N and rep["ecn"]["ce"] == 0 and st["marked_ce"] == 0,
              "bottleneck above the offered load: all forwarded, no CE")
        check(rep["icrc_bad"] == 0, "ICRCs valid")
        check(st["queue_hw_bytes"] < 64 * 1024,
              f"queue stayed below Kmin: about one RX burst ({st['queue_hw_bytes']} bytes)")

        # 3. Every 4th frame not-ECT: RED drops those instead of marking them.
        st, rep = cp(tmp, mixed, "mixed",
                     ["--rate-gbps", "1", "--queue-kb", "256", "--kmin-kb", "64",
                      "--kmax-kb", "192", "--pmax", "0.1"])
        print("  cp:", {k: st[k] for k in ("forwarded", "marked_ce", "dropped_red",
                                           "dropped_tail")}, "out ecn", rep["ecn"])
        check(st["dropped_red"] > 0, "non-ECT frames dropped by RED")
        check(st["marked_ce"] > 0 and rep["ecn"]["ce"] == st["marked_ce"], "ECT frames marked")
        check(rep["ecn"]["not_ect"] < N // 4 - st["dropped_red"] + 1, "not-ECT frames lost")
        check(st["forwarded"] + st["dropped_red"] + st["dropped_tail"] == N, "accounting")

        # 4. --drop 0.5 with no bottleneck: about half dropped at random.
        st, rep = cp(tmp, ect, "random", ["--rate-gbps", "1000", "--drop", "0.5"])
        check(0.4 * N < st["dropped_random"] < 0.6 * N,
              f"--drop 0.5 dropped {st['dropped_random']} of {N}")
        check(rep["frames"] == N - st["dropped_random"], "the rest forwarded")

        # 5. Bad values are rejected, naming the option.
        for opts, name in ((["--pmax", "2"], "--pmax"), (["--rate-gbps", "fast"], "--rate-gbps"),
                           (["--kmin-kb", "300"], "--kmin-kb"), (["--queue-kb", "0"], "--queue-kb"),
                           (["--sample-us", "1.5"], "--sample-us")):
            r = subprocess.run([CP] + EAL + ["--vdev=net_pcap0,rx_pcap=" + ect +
                                             ",tx_pcap=/dev/null", "--"] + opts,
                               capture_output=True, text=True, timeout=60)
            check(r.returncode == 2 and name in r.stderr,
                  f"{' '.join(opts)} rejected naming {name}: {r.stderr.strip()}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
