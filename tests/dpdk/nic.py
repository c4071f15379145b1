#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rfw_nic on the wire: run test_nic (two NICs over a DPDK ring pair, every variant's frames
written to DIR/<variant>.pcap), then decode each capture with tshark (an independent decoder)
and with `rocefw-replay check --json`:

- every RoCEv2 frame: ICRC good, nothing malformed (rocefw-replay);
- IP version and 802.1Q tag as the variant says; VLAN id 100 + variant index; PCP 3 on data
  and responses, np_cnp_prio (6) on CNPs;
- DSCP 26 ECT(0) on data and responses (CE where the test's wire marked it, A -> B only),
  np_cnp_dscp (48) Not-ECT on CNPs; at least one CNP per variant;
- UDP checksum: IPv4 0 (no checksum, as rxe); IPv6 from NIC A (udp6_csum on) verified Good by
  tshark; IPv6 from NIC B (default, as rxe) 0, which tshark calls Illegal (RFC 8200) unless
  udp.ignore_ipv6_zero_checksum is set: docs/nic.md explains the choice;
- the opcodes of WRITE, SEND and READ with their ACKs and READ responses;
- the RC wire invariants (tests/wire/rc_invariants.py);
- ARP request/reply (IPv4) and ND solicitation/advertisement (IPv6) in the variants that
  resolve the peer MAC, none where it was already known; in the VLAN variants that resolve,
  test_nic's wire drops untagged ARP/ND (the port's own probes), so the tagged probes the NIC
  sends on the QP's VLAN must do the job.

usage: nic.py TEST_NIC ROCEFW_REPLAY
"""
import json
import os
import subprocess
import sys
import tempfile

TEST_NIC, REPLAY = sys.argv[1:3]
EAL = ["--no-huge", "-m", "512", "--no-pci", "--no-shconf", "-l", "0",
       "--log-level=lib.eal:warning"]
# name, IPv6, VLAN, ARP/ND expected (in the order test_nic runs them: index -> VLAN id)
VARIANTS = [("ipv4", False, False, False), ("ipv6", True, False, False),
            ("ipv4-vlan", False, True, False), ("ipv6-vlan", True, True, False),
            ("ipv4-vlan-resolve", False, True, True), ("ipv6-resolve", True, False, True),
            ("ipv4-resolve", False, False, False), ("ipv6-vlan-resolve", True, True, True)]
FIELDS = ["frame.number", "vlan.id", "vlan.priority", "ip.version", "ipv6.version", "ip.dsfield",
          "ipv6.tclass", "ip.src", "ipv6.src", "udp.dstport", "udp.checksum",
          "udp.checksum.status", "infiniband.bth.opcode", "arp.opcode", "icmpv6.type"]
# Wireshark's checksum status values (epan/proto.h PROTO_CHECKSUM_E_*).
CK_GOOD, CK_NOT_PRESENT, CK_ILLEGAL = 1, 3, 4
OPS_NEEDED = {0, 1, 2, 6, 7, 8, 12, 13, 14, 15, 17}  # SEND f/m/l, WRITE f/m/l, READ, ACK
CNP = 0x81
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def tshark(path):
    cmd = ["tshark", "-r", path, "-o", "udp.check_checksum:TRUE", "-T", "fields",
           "-E", "separator=\t", "-E", "occurrence=f"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        vals = line.split("\t")
        rows.append(dict(zip(FIELDS, vals + [""] * (len(FIELDS) - len(vals)))))
    return rows


def num(s):
    return int(s, 0) if s else None


def check_variant(tmp, idx, name, v6, vlan, neigh):
    path = os.path.join(tmp, name + ".pcap")
    rep = json.loads(subprocess.run([REPLAY, "check", "--json", path], capture_output=True,
                                    text=True, check=True).stdout)
    check(rep["roce"] > 20 and rep["icrc_ok"] == rep["roce"] and rep["icrc_bad"] == 0 and
          rep["malformed"] == 0,
          f"{name}: rocefw-replay: {rep['roce']} RoCEv2 frames, ICRC ok {rep['icrc_ok']}, "
          f"bad {rep['icrc_bad']}, malformed {rep['malformed']}")
    inv = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "wire", "rc_invariants.py"), path], capture_output=True, text=True)
    check(inv.returncode == 0, f"{name}: RC wire invariants: {inv.stdout[-500:]}{inv.stderr}")
    rows = tshark(path)
    roce = [r for r in rows if r["udp.dstport"] == "4791"]
    check(len(roce) == rep["roce"], f"{name}: tshark sees {len(roce)} RoCEv2 frames")
    ops = {num(r["infiniband.bth.opcode"]) for r in roce}
    check(OPS_NEEDED <= ops, f"{name}: opcodes {sorted(o for o in ops if o is not None)}")
    cnps = [r for r in roce if num(r["infiniband.bth.opcode"]) == CNP]
    data = [r for r in roce if num(r["infiniband.bth.opcode"]) != CNP]
    check(len(cnps) >= 1, f"{name}: {len(cnps)} CNP(s) for the CE marks")

    bad = []
    for r in roce:
        cnp = num(r["infiniband.bth.opcode"]) == CNP
        if v6:
            ok_ver = r["ipv6.version"] == "6" and r["ip.dsfield"] == ""
            tos = num(r["ipv6.tclass"])
            src = r["ipv6.src"]
        else:
            ok_ver = r["ip.version"] == "4" and r["ipv6.version"] == ""
            tos = num(r["ip.dsfield"])
            src = r["ip.src"]
        if not ok_ver:
            bad.append((r["frame.number"], "ip version"))
            continue
        dscp, ecn = tos >> 2, tos & 3
        if cnp and (dscp != 48 or ecn != 0):
            bad.append((r["frame.number"], f"CNP dscp {dscp} ecn {ecn}"))
        if not cnp and (dscp != 26 or ecn not in (2, 3)):
            bad.append((r["frame.number"], f"data dscp {dscp} ecn {ecn}"))
        if vlan:
            want_pcp = 6 if cnp else 3
            if num(r["vlan.id"]) != 100 + idx or num(r["vlan.priority"]) != want_pcp:
                bad.append((r["frame.number"],
                            f"vlan {r['vlan.id']} pcp {r['vlan.priority']} (want {want_pcp})"))
        elif r["vlan.id"]:
            bad.append((r["frame.number"], "unexpected 802.1Q tag"))
        ck, st = num(r["udp.checksum"]), num(r["udp.checksum.status"])
        from_a = src in ("10.0.0.1", "fd00::1")
        if v6 and from_a and st != CK_GOOD:
            bad.append((r["frame.number"], f"IPv6 from A: checksum status {st}, want Good"))
        if v6 and not from_a and (ck != 0 or st != CK_ILLEGAL):
            bad.append((r["frame.number"], f"IPv6 from B: checksum {ck} status {st}"))
        if not v6 and (ck != 0 or st != CK_NOT_PRESENT):
            bad.append((r["frame.number"], f"IPv4: checksum {ck} status {st}"))
    check(not bad, f"{name}: headers of {len(roce)} frames ({len(data)} data/response, "
          f"{len(cnps)} CNP) as configured" + (f": {bad[:4]}" if bad else ""))
    ce = sum(1 for r in data if num(r["ipv6.tclass"] if v6 else r["ip.dsfield"]) & 3 == 3)
    check(ce >= 1, f"{name}: {ce} CE-marked frame(s) on the wire")

    arp = sorted(num(r["arp.opcode"]) for r in rows if r["arp.opcode"])
    nd = sorted(num(r["icmpv6.type"]) for r in rows if r["icmpv6.type"] in ("135", "136"))
    # Requests / solicitations: (VLAN id or None) of each.
    req_vlans = {num(r["vlan.id"]) for r in rows
                 if r["arp.opcode"] == "1" or r["icmpv6.type"] == "135"}
    if neigh and not v6:
        check(1 in arp and 2 in arp, f"{name}: ARP request and reply on the wire {arp}")
    elif neigh and v6:
        check(135 in nd and 136 in nd, f"{name}: ND solicitation and advertisement {nd}")
    if neigh and vlan:
        # The port's own probes are untagged and the wire drops them in this variant (a peer
        # only on the VLAN never sees them): what resolved the MAC went on the QP's VLAN.
        check(req_vlans == {100 + idx},
              f"{name}: every probe on the wire on VLAN {100 + idx}: {req_vlans}")
    if not neigh:
        check(not arp and not nd, f"{name}: no ARP/ND (MAC given or already known)")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([TEST_NIC] + EAL + ["--", "--pcap-dir", tmp], capture_output=True,
                           text=True, timeout=90)
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        check(r.returncode == 0, f"test_nic exit status {r.returncode}")
        for idx, (name, v6, vlan, neigh) in enumerate(VARIANTS):
            check_variant(tmp, idx, name, v6, vlan, neigh)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
