#!/usr/bin/env python3
"""PAUSE / PFC frames written by rocefw's builders, decoded by tshark, must show what we wrote.

usage: pfc_tshark.py GEN_PFC_EXE [SEED ...]

GEN_PFC_EXE writes a pcap and prints the expected values as TSV with tshark's field names as
columns ('-': tshark must not show the field). Any difference fails, and so does any expert
message from tshark's MAC Control dissector (wrong destination, non-zero reserved bits, ...).
Fails when tshark is missing: this check needs the independent decoder and says so.
"""
import shutil
import subprocess
import sys
import tempfile


def norm(v):
    if v in ("", "-"):
        return None
    return int(v, 0)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    tshark = shutil.which("tshark")
    if tshark is None:
        print("FAIL: tshark is not installed; this check needs it (tools/install-deps.sh)",
              file=sys.stderr)
        return 1
    failures = checked = 0
    for seed in sys.argv[2:] or ["0x5eed", "7", "99"]:
        with tempfile.TemporaryDirectory() as tmp:
            pcap = f"{tmp}/pfc.pcap"
            out = subprocess.run([sys.argv[1], pcap, seed], check=True, capture_output=True,
                                 text=True).stdout.splitlines()
            fields = out[0].split("\t")[1:]
            cmd = [tshark, "-r", pcap, "-T", "fields", "-E", "separator=/t",
                   "-e", "frame.number", "-e", "_ws.expert.message"]
            for f in fields:
                cmd += ["-e", f]
            got = subprocess.run(cmd, check=True, capture_output=True,
                                 text=True).stdout.splitlines()
            if len(got) != len(out) - 1:
                print(f"FAIL seed {seed}: tshark shows {len(got)} frames, "
                      f"expected {len(out) - 1}")
                failures += 1
                continue
            for exp_line, got_line in zip(out[1:], got):
                exp = exp_line.split("\t")
                g = got_line.split("\t")
                if g[1]:
                    print(f"FAIL seed {seed} frame {exp[0]}: tshark says {g[1]!r}")
                    failures += 1
                for name, e, v in zip(fields, exp[1:], g[2:]):
                    checked += 1
                    if norm(e) != norm(v):
                        print(f"FAIL seed {seed} frame {exp[0]}: {name} = {v!r}, "
                              f"expected {e!r}")
                        failures += 1
    print(f"pfc_tshark: {checked} fields checked, {failures} differences")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
