#!/usr/bin/env python3
"""Frames written by rocefw's builders, decoded by tshark, must show the values we wrote.

usage: tshark_fields.py GEN_FRAMES_EXE [SEED ...]

GEN_FRAMES_EXE writes a pcap (every opcode, IPv4 / IPv6 / VLAN) and prints the expected field
values as TSV, with tshark's field names as column names. '-' means the header is absent and
tshark must not show the field. Fails (exit 1) on any difference, and when tshark is missing:
this check needs the independent decoder and says so rather than skipping.
"""
import shutil
import subprocess
import sys
import tempfile

TSHARK_ARGS = ["--disable-protocol", "rpcordma"]


def norm(field, value):
    """Canonical form of a value as tshark or gen_frames prints it."""
    if value in ("", "-"):
        return None
    # tshark may repeat a field (immdt shows up twice); all copies must agree.
    parts = set(value.split(","))
    if len(parts) != 1:
        return ("conflict", tuple(sorted(parts)))
    v = parts.pop()
    if field in ("infiniband.immdt", "infiniband.ieth"):
        return v.replace(":", "").lower()
    if v in ("True", "False"):
        return int(v == "True")
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
    seeds = sys.argv[2:] or ["0x5eed", "7", "123456789"]
    failures = checked = 0
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            pcap = f"{tmp}/gen.pcap"
            out = subprocess.run([sys.argv[1], pcap, seed], check=True, capture_output=True,
                                 text=True).stdout.splitlines()
            header = out[0].split("\t")
            fields = header[3:]
            ecn_idx = fields.index("ip.dsfield.ecn")
            cmd = [tshark, "-r", pcap, *TSHARK_ARGS, "-T", "fields", "-E", "separator=/t",
                   "-E", "occurrence=a"]
            for f in fields:
                cmd += ["-e", f]
            cmd += ["-e", "ipv6.tclass.ecn"]
            got = subprocess.run(cmd, check=True, capture_output=True,
                                 text=True).stdout.splitlines()
            if len(got) != len(out) - 1:
                print(f"FAIL seed {seed}: tshark decoded {len(got)} frames, we wrote "
                      f"{len(out) - 1}")
                failures += 1
                continue
            for exp_line, got_line in zip(out[1:], got):
                exp = exp_line.split("\t")
                g = got_line.split("\t")
                frame, ipver = exp[0], exp[1]
                # IPv6 frames carry their ECN in the traffic class field.
                if ipver == "6":
                    g[ecn_idx] = g[-1]
                for i, f in enumerate(fields):
                    e, t = norm(f, exp[3 + i]), norm(f, g[i])
                    checked += 1
                    if e != t:
                        failures += 1
                        print(f"FAIL seed {seed} frame {frame} (IPv{ipver}, opcode "
                              f"{exp[3]}): {f}: wrote {exp[3 + i]!r}, tshark shows {g[i]!r}")
    print(f"tshark_fields: {checked} field values compared, {failures} differences")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
