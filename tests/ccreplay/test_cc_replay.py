#!/usr/bin/env python3
"""`rocefw-replay cc` on captures made by gen_cc_capture (a DCQCN simulation using cc/).

What is checked, and against what:
- flow identification and CNP attribution: counts per flow from an independent decode of the
  pcap (a few lines of struct unpacking below), and the generator's QP numbering convention
  (sender QPN 0x100+i, receiver QPN 0x200+i);
- verdicts: a conformant sender of each built-in profile conforms to that profile and --fit
  names it and the profile's np_min_time_between_cnps (the values of docs/cc.md's table); the
  same capture checked against another profile deviates; a sender that ignores CNPs is
  not_reacting; a receiver that sends no CNPs is no_cnp_for_ce; CNPs closer than the profile's
  gap are cnp_too_frequent;
- capture formats: VLAN, Linux cooked, snap length, non-RoCE frames, pcapng with several
  interfaces, a truncated file; CLI errors and exit codes; CSV units; PNG plots.

usage: test_cc_replay.py REPLAY_EXE GEN_EXE
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

fails = 0
REPLAY = GEN = TMP = None

# np_min_time_between_cnps of each built-in profile, us (docs/cc.md parameter table).
NP_GAP = {"unified": 50, "paper": 50, "mlx5-cx5": 4, "hpcc-ns3": 0, "shared-port": 4}
# Scenario: 100 Gb/s sender, 50 Gb/s bottleneck, 30 Gb/s of cross traffic 1 ms on / 2 ms off.
SCEN = ["--cross-gbps", "30", "--duration-ms", "12"]


def check(cond, msg):
    global fails
    if not cond:
        fails += 1
        print("FAIL", msg)
    return cond


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True)


def gen(name, *args):
    out = os.path.join(TMP, name)
    r = run(GEN, "--out", out, *args)
    if r.returncode != 0:
        raise SystemExit(f"gen_cc_capture {args}: {r.stderr}")
    return out


def cc(path, *args, expect=0):
    r = run(REPLAY, "cc", path, "--json", *args)
    check(r.returncode == expect, f"cc {path} {args}: exit {r.returncode}: {r.stderr}")
    try:
        return json.loads(r.stdout)
    except ValueError:
        check(False, f"cc {path} {args}: no JSON: {r.stdout[:200]!r} {r.stderr!r}")
        return None


def decode(path):
    """Independent decode: per (src, dst, dqpn) data packets and CE; CNPs per (src, dst, dqpn)."""
    raw = open(path, "rb").read()
    magic, = struct.unpack_from("<I", raw, 0)
    assert magic in (0xA1B23C4D, 0xA1B2C3D4), hex(magic)
    linktype, = struct.unpack_from("<I", raw, 20)
    off, data, cnps = 24, {}, {}
    while off + 16 <= len(raw):
        _, _, caplen, _ = struct.unpack_from("<IIII", raw, off)
        fr = raw[off + 16: off + 16 + caplen]
        off += 16 + caplen
        if linktype == 113:
            et, l3 = struct.unpack_from(">H", fr, 14)[0], 16
        else:
            et, l3 = struct.unpack_from(">H", fr, 12)[0], 14
            if et == 0x8100:
                et, l3 = struct.unpack_from(">H", fr, 16)[0], 18
        if et != 0x0800 or fr[l3 + 9] != 17:
            continue
        ihl = (fr[l3] & 15) * 4
        if struct.unpack_from(">H", fr, l3 + ihl + 2)[0] != 4791:
            continue
        bth = l3 + ihl + 8
        key = (".".join(map(str, fr[l3 + 12:l3 + 16])), ".".join(map(str, fr[l3 + 16:l3 + 20])),
               int.from_bytes(fr[bth + 5:bth + 8], "big"))
        op = fr[bth]
        if op == 0x81:
            cnps[key] = cnps.get(key, 0) + 1
        elif op in (0x06, 0x07, 0x08, 0x0A):
            d = data.setdefault(key, [0, 0])
            d[0] += 1
            d[1] += (fr[l3 + 1] & 3) == 3
    return data, cnps


def flow(rep, qpn):
    fl = [f for f in rep["flows"] if f["dst_qpn"] == qpn]
    return fl[0] if check(len(fl) == 1, f"flow to qpn {qpn}: {len(fl)} found") else None


def test_profiles():
    """Each profile: conforms to itself, --fit names it, another profile deviates."""
    names = ["unified", "paper", "mlx5-cx5", "hpcc-ns3"]
    for p in names:
        cap = gen(f"{p}.pcap", "--profile", p, *SCEN)
        rep = cc(cap, "--profile", p, "--fit")
        f = rep and flow(rep, 0x200)
        if not f:
            continue
        check(f["rp_verdict"] == "conforms", f"{p}: rp_verdict {f['rp_verdict']} ({f['reason']})")
        check(f["capture_point"] == "sender_side", f"{p}: capture point {f['capture_point']}")
        check(f["cnps"] > 0 and f["conformance"]["rel_err_median"] <= 0.10,
              f"{p}: cnps {f['cnps']} median {f['conformance']['rel_err_median']}")
        check(f["fit"]["profile"] == p, f"{p}: --fit named {f['fit']['profile']}: {f['fit']}")
        check(f["fit"]["params"]["np_min_time_between_cnps"] == NP_GAP[p],
              f"{p}: fitted np gap {f['fit']['params']['np_min_time_between_cnps']}")
        check(f["observed"]["cnps_followed_by_cut"] > 0.5 * f["cnps"],
              f"{p}: cnps followed by cut {f['observed']}")
        for other in names:
            if other == p:
                continue
            rep2 = cc(cap, "--profile", other)
            f2 = rep2 and flow(rep2, 0x200)
            if f2:
                check(f2["rp_verdict"] == "deviates",
                      f"{p} checked as {other}: rp_verdict {f2['rp_verdict']}")
    # shared-port with one flow per host is mlx5-cx5 exactly: named as one, listed as the other.
    cap = gen("shared.pcap", "--profile", "shared-port", *SCEN)
    f = flow(cc(cap, "--profile", "shared-port", "--fit"), 0x200)
    if f:
        check(f["rp_verdict"] == "conforms", f"shared-port: {f['rp_verdict']}")
        fit = f["fit"]
        check("shared-port" in [fit["profile"]] + fit["indistinguishable_from"]
              and fit["profile"] in ("mlx5-cx5", "shared-port"), f"shared-port fit: {fit}")
    # Two QPs of one host under shared-port share one RP: only the shared model explains them,
    # and --fit tells it from mlx5-cx5, whose per-QP values are the same.
    cap = gen("shared2.pcap", "--profile", "shared-port", "--flows", "2", "--hosts", "1", *SCEN)
    rep = cc(cap, "--profile", "shared-port", "--fit")
    for q in (0x200, 0x201):
        f = rep and flow(rep, q)
        if f:
            check(f["rp_verdict"] == "conforms", f"shared-port 2 QPs: {f['rp_verdict']}")
            check(f["fit"]["profile"] == "shared-port", f"shared-port 2 QPs fit: {f['fit']}")
    rep = cc(cap, "--profile", "mlx5-cx5")
    for q in (0x200, 0x201):
        f = rep and flow(rep, q)
        if f:
            check(f["rp_verdict"] == "deviates", f"shared 2 QPs as mlx5-cx5: {f['rp_verdict']}")
    # A modified profile: --fit names the profile it modifies and the two changed values.
    cap = gen("mod.pcap", "--profile", "unified", "--set", "rp_time_reset=100", "--set",
              "rp_ai_rate=20", *SCEN)
    f = flow(cc(cap, "--fit"), 0x200)
    if f:
        check(f["fit"]["profile"] == "unified"
              and f["fit"]["changed_from_profile"] == {"rp_ai_rate": 20, "rp_time_reset": 100},
              f"modified unified: {f['fit']}")
    # The fitted parameters of a paper-profile capture are the paper's (docs/cc.md table).
    f = flow(cc(os.path.join(TMP, "paper.pcap"), "--profile", "paper", "--fit"), 0x200)
    if f:
        pr = f["fit"]["params"]
        check(pr["rp_ai_rate"] == 40 and pr["rp_time_reset"] == 55 and pr["rp_threshold"] == 5
              and pr["rp_gd"] == 11, f"paper fitted params {pr}")


def test_not_reacting():
    cap = gen("off.pcap", "--cc", "off", *SCEN)
    f = flow(cc(cap), 0x200)
    if f:
        check(f["rp_verdict"] == "not_reacting", f"cc off, sender side: {f['rp_verdict']}")
        check(f["observed"]["cnps_followed_by_cut"] == 0, f"cc off: {f['observed']}")
    cap = gen("off_rx.pcap", "--cc", "off", "--capture", "receiver", *SCEN)
    f = flow(cc(cap), 0x200)
    if f:
        check(f["rp_verdict"] == "not_reacting", f"cc off, receiver side: {f['rp_verdict']}")
        check(f["np_verdict"] == "ok", f"cc off, receiver side NP: {f['np_verdict']}")
        check(f["capture_point"] == "after_marking", f"capture point {f['capture_point']}")


def test_usec():
    """Microsecond timestamps (pcap's default): gaps at 100 Gb/s are below one tick."""
    cap = gen("us_unified.pcap", "--usec", *SCEN)
    rep = cc(cap, "--fit")
    f = rep and flow(rep, 0x200)
    if f:
        check(rep["timestamp_resolution"] == "us", f"resolution {rep['timestamp_resolution']}")
        check(f["rp_verdict"] == "conforms", f"us unified: {f['rp_verdict']} {f['reason']}")
        check(f["fit"]["profile"] == "unified", f"us unified fit: {f['fit']['profile']}")
    cap = gen("us_off.pcap", "--usec", "--cc", "off", *SCEN)
    f = flow(cc(cap), 0x200)
    if f:
        check(f["rp_verdict"] == "not_reacting", f"us cc off: {f['rp_verdict']}")
    rep = cc(os.path.join(TMP, "unified.pcap"))
    check(rep and rep["timestamp_resolution"] == "ns", "ns capture resolution")


def test_switch():
    """A switch port after the marking queue: data marked, rates are the queue's. A conforming
    sender must not be called deviating or non-reacting there; one that ignores CNPs is."""
    for p in ("unified", "mlx5-cx5", "hpcc-ns3"):
        cap = gen(f"sw_{p}.pcap", "--capture", "switch", "--profile", p, *SCEN)
        f = flow(cc(cap, "--profile", p, "--line-rate-gbps", "100"), 0x200)
        if f:
            check(f["capture_point"] == "after_marking", f"switch {p}: {f['capture_point']}")
            check(f["rp_verdict"] in ("conforms", "not_visible"),
                  f"switch {p}: rp_verdict {f['rp_verdict']} ({f['reason']})")
            check(f["np_verdict"] == "ok", f"switch {p}: np_verdict {f['np_verdict']}")
    cap = gen("sw_off.pcap", "--capture", "switch", "--cc", "off", *SCEN)
    f = flow(cc(cap, "--line-rate-gbps", "100"), 0x200)
    if f:
        check(f["rp_verdict"] == "not_reacting", f"switch, cc off: {f['rp_verdict']}")


def test_np():
    # A receiver that answers no CE mark.
    cap = gen("nonp.pcap", "--np", "off", "--capture", "receiver", *SCEN)
    f = flow(cc(cap), 0x200)
    if f:
        check(f["np_verdict"] == "no_cnp_for_ce", f"NP off: np_verdict {f['np_verdict']}")
        check(f["rp_verdict"] == "no_congestion_signals", f"NP off: {f['rp_verdict']}")
        check(f["cnps"] == 0 and f["ce_marked"] > 0, f"NP off: {f['cnps']} {f['ce_marked']}")
    # mlx5-cx5's NP (4 us) checked against unified's 50 us.
    cap = gen("np4.pcap", "--profile", "mlx5-cx5", "--capture", "receiver", *SCEN)
    rep = cc(cap, "--profile", "unified")
    f = rep and flow(rep, 0x200)
    if f:
        check(f["np_verdict"] == "cnp_too_frequent", f"4 us NP vs 50 us: {f['np_verdict']}")
        check(f["np"]["cnp_gaps_below_min"] > 0, f"gaps below: {f['np']}")
    rep = cc(cap, "--profile", "mlx5-cx5")
    f = rep and flow(rep, 0x200)
    if f:
        check(f["np_verdict"] == "ok", f"4 us NP vs mlx5-cx5: {f['np_verdict']} {f['np']}")
        # Answered marks: every CE mark is followed by a CNP within the gap (cc/ NP).
        check(f["np"]["ce_unanswered"] == 0, f"mlx5 NP unanswered: {f['np']}")


def test_attribution():
    cap = gen("multi.pcap", "--flows", "3", "--hosts", "1", *SCEN)
    data, cnps = decode(cap)
    rep = cc(cap)
    if not rep:
        return
    check(len(rep["flows"]) == 3, f"3 flows expected: {len(rep['flows'])}")
    for i in range(3):
        f = flow(rep, 0x200 + i)
        if not f:
            continue
        key = (f["src"], f["dst"], 0x200 + i)
        check(f["data_packets"] == data[key][0], f"flow {i}: data {f['data_packets']} vs {data[key]}")
        check(f["ce_marked"] == data[key][1], f"flow {i}: CE {f['ce_marked']}")
        ck = (f["dst"], f["src"], 0x100 + i)
        check(f["cnps"] == cnps.get(ck, 0) and f["cnps"] > 0,
              f"flow {i}: cnps {f['cnps']} vs {cnps.get(ck)}")
        check(f["src_qpn"] == 0x100 + i, f"flow {i}: paired with QP {f['src_qpn']}")
    check(rep["cnps_unattributed"] == 0, f"unattributed {rep['cnps_unattributed']}")
    # --flow keeps one flow.
    rep = cc(cap, "--flow", "qpn=0x201")
    check(rep and [f["dst_qpn"] for f in rep["flows"]] == [0x201], "--flow qpn=0x201")
    rep = cc(cap, "--flow", "src=10.0.0.9")
    check(rep and rep["flows"] == [], "--flow with no match")


def test_formats():
    base = cc(gen("eth.pcap", *SCEN))
    ref = base and flow(base, 0x200)
    if not ref:
        return
    same = ("data_packets", "cnps", "rp_verdict", "np_verdict")
    for name, args in (("vlan", ["--link", "vlan"]), ("sll", ["--link", "sll"]),
                       ("snap", ["--snaplen", "96"]), ("noise", ["--noise", "5"]),
                       ("ipv6", ["--ipv6"])):
        rep = cc(gen(name + ".pcap", *SCEN, *args))
        f = rep and flow(rep, 0x200)
        if f:
            # IPv6 frames are 20 B longer: another trajectory, the same verdicts.
            for k in same if name != "ipv6" else ("rp_verdict", "np_verdict"):
                check(f[k] == ref[k], f"{name}: {k} {f[k]} vs {ref[k]}")
            if name == "noise":
                check(rep["other_frames"] > 100, f"noise frames {rep['other_frames']}")
            if name == "ipv6":
                check(f["src"] == "2001:db8::1" and f["src_qpn"] == 0x100,
                      f"ipv6 flow {f['src']} {f['src_qpn']}")
            # Frame bytes are on-the-wire lengths, whatever was captured; VLAN adds 4 B.
            if name in ("snap", "noise"):
                check(f["data_bytes"] == ref["data_bytes"], f"{name}: bytes")
    # Truncated: cut inside the last record -> report, message, exit 1.
    src = os.path.join(TMP, "eth.pcap")
    cut = os.path.join(TMP, "cut.pcap")
    raw = open(src, "rb").read()
    open(cut, "wb").write(raw[: len(raw) // 2 + 7])
    r = run(REPLAY, "cc", cut, "--json")
    check(r.returncode == 1 and "truncated" in r.stderr, f"cut: {r.returncode} {r.stderr!r}")
    try:
        rep = json.loads(r.stdout)
        check(rep["truncated"] is True and rep["frames"] > 0, "cut: partial report")
    except ValueError:
        check(False, "cut: no JSON report")
    # pcapng with two interfaces (two captures merged): both flows, as alone.
    mergecap = shutil.which("mergecap")
    if check(mergecap is not None, "mergecap missing (tools/install-deps.sh installs tshark)"):
        other = gen("other.pcap", "--first-host", "4", "--profile", "mlx5-cx5", *SCEN)
        ng = os.path.join(TMP, "two.pcapng")
        subprocess.run([mergecap, "-F", "pcapng", "-I", "none", "-w", ng, src, other], check=True)
        rep = cc(ng)
        if rep:
            check(rep["pcapng_interfaces"] == 2, f"interfaces {rep['pcapng_interfaces']}")
            srcs = sorted(f["src"] for f in rep["flows"])
            check(srcs == ["10.0.0.1", "10.0.0.5"], f"pcapng flows {srcs}")
            for f in rep["flows"]:
                if f["src"] == "10.0.0.1":
                    check(f["data_packets"] == ref["data_packets"] and f["cnps"] == ref["cnps"],
                          "pcapng: flow as alone")
            check(any(a.startswith("several capture interfaces") for a in rep["assumptions"]),
                  "pcapng: assumption stated")
        # Two NICs with different configurations in one capture: --fit names each one's.
        rep = cc(ng, "--fit")
        if rep:
            named = {f["src"]: f["fit"]["profile"] for f in rep["flows"]}
            check(named == {"10.0.0.1": "unified", "10.0.0.5": "mlx5-cx5"},
                  f"per-sender fit: {named}")


def ip4_frame(src, dst, opcode, dqpn, psn, payload, tos=2):
    """Ethernet/IPv4/UDP/BTH frame built here, independently of rocefw's builders (ICRC left
    zero: cc does not verify it). RETH on WRITE FIRST/ONLY, 16 reserved bytes on a CNP."""
    ib = struct.pack(">BBHBBHBBH", opcode, 0, 0xFFFF, 0x40 if opcode == 0x81 else 0,
                     dqpn >> 16, dqpn & 0xFFFF, 0, psn >> 16, psn & 0xFFFF)
    if opcode in (0x06, 0x0A):
        ib += struct.pack(">QII", 0x1000, 0x1234, 65536)
    ib += b"\x10" * 16 if opcode == 0x81 else b"\xab" * payload
    udp_len = 8 + len(ib) + 4
    hdr = struct.pack(">BBHHHBBH4s4s", 0x45, tos, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                      bytes(map(int, src.split("."))), bytes(map(int, dst.split("."))))
    csum = sum(struct.unpack(">10H", hdr))
    while csum >> 16:
        csum = (csum & 0xFFFF) + (csum >> 16)
    hdr = hdr[:10] + struct.pack(">H", ~csum & 0xFFFF) + hdr[12:]
    udp = struct.pack(">HHHH", 49152, 4791, udp_len, 0)
    return b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00" + hdr + udp + ib + b"\0" * 4


def write_ns_pcap(path, frames):
    """frames: (t_ns, bytes), in time order; nanosecond pcap, Ethernet."""
    out = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1)
    for t, fr in frames:
        out += struct.pack("<IIII", t // 10**9, t % 10**9, len(fr), len(fr)) + fr
    open(path, "wb").write(out)


def test_handmade():
    """A capture written packet by packet here: the expected figures follow from how it is
    built, not from cc/ or the generator."""
    t0 = 1_700_000_000 * 10**9
    mid = ip4_frame("10.1.0.1", "10.1.0.2", 0x07, 0x300, 0, 1024)
    L = len(mid)
    gap = L * 8 // 10  # 10 Gb/s: ns per frame
    frames, t, psn = [], t0, 100
    for i in range(400):  # 400 packets at 10 Gb/s
        frames.append((t, ip4_frame("10.1.0.1", "10.1.0.2", 0x07, 0x300, psn, 1024)))
        psn += 1
        t += gap
    t_last = t - gap
    t_cnp = t_last + gap // 2  # a CNP half a gap after packet 400
    frames.append((t_cnp, ip4_frame("10.1.0.2", "10.1.0.1", 0x81, 0x100, 0, 0, tos=0)))
    # Packet 401 leaves at the old spacing (already scheduled), then the sender halves its rate.
    t_401 = t_last + gap
    t = t_401
    for i in range(20):
        frames.append((t, ip4_frame("10.1.0.1", "10.1.0.2", 0x07, 0x300, psn, 1024)))
        psn += 1
        t += 2 * gap
    # A second flow whose receiver sends CNPs every 30 us (unified's NP gap is 50 us).
    t = t0 + 100
    for i in range(6):
        frames.append((t, ip4_frame("10.1.0.3", "10.1.0.2", 0x07, 0x301, 7 + i, 1024)))
        frames.append((t + 50, ip4_frame("10.1.0.2", "10.1.0.3", 0x81, 0x101, 0, 0, tos=0)))
        t += 30_000
    # A bursty sender: pairs of packets 0.1 gap apart, one pair per 2 gaps (10 Gb/s), then
    # after a CNP one pair per 4 gaps (5 Gb/s). Single gaps never show two slower in a row;
    # blocks of packets (--react-block-us) do.
    t, psn = t0 + 7, 500
    for k in range(200):
        if k == 100:
            frames.append((t - gap // 2,
                           ip4_frame("10.1.0.2", "10.1.0.4", 0x81, 0x102, 0, 0, tos=0)))
        for d in (0, gap // 10):
            frames.append((t + d, ip4_frame("10.1.0.4", "10.1.0.2", 0x07, 0x302, psn, 1024)))
            psn += 1
        t += 2 * gap if k < 100 else 4 * gap
    frames.sort(key=lambda x: x[0])
    path = os.path.join(TMP, "handmade.pcap")
    write_ns_pcap(path, frames)
    rep = cc(path, "--line-rate-gbps", "10", "--profile", "unified")
    f = rep and flow(rep, 0x300)
    if f:
        o = f["observed"]
        check(f["data_packets"] == 420 and f["cnps"] == 1 and f["src_qpn"] == 0x100,
              f"handmade counts {f['data_packets']} {f['cnps']} {f['src_qpn']}")
        check(o["cnps_followed_by_cut"] == 1, f"handmade reaction {o}")
        d = o["reaction_delay_us"]["mean"]
        check(d is not None and abs(d * 1000 - (t_401 - t_cnp)) < 1,
              f"reaction delay {d} us, built {(t_401 - t_cnp) / 1000} us")
        check(abs(o["cut_size"]["mean"] - 0.5) < 0.001, f"cut size {o['cut_size']}")
        check(abs(o["max_window_rate_gbps"] - L * 8 / gap) < 0.01,
              f"window rate {o['max_window_rate_gbps']} vs {L * 8 / gap}")
    f = rep and flow(rep, 0x301)
    if f:
        check(f["np"]["cnp_gaps"] == 5 and f["np"]["cnp_gaps_below_min"] == 5
              and f["np_verdict"] == "cnp_too_frequent", f"NP at 30 us: {f['np']} {f['np_verdict']}")
        check(abs(f["np"]["min_cnp_gap_us"] - 30) < 0.001, f"min gap {f['np']['min_cnp_gap_us']}")
    f = rep and flow(rep, 0x302)
    if f:
        check(f["observed"]["cnps_followed_by_cut"] == 0, f"bursty, per gap: {f['observed']}")
    rep = cc(path, "--line-rate-gbps", "10", "--react-block-us", "4")
    f = rep and flow(rep, 0x302)
    if f:
        o = f["observed"]
        check(o["cnps_followed_by_cut"] == 1 and abs(o["cut_size"]["mean"] - 0.5) < 0.1,
              f"bursty, 4 us blocks: {o}")


def test_cli():
    cap = os.path.join(TMP, "eth.pcap")
    r = run(REPLAY, "cc", "/nonexistent/x.pcap")
    check(r.returncode == 1 and "cannot open '/nonexistent/x.pcap'" in r.stderr, r.stderr)
    junk = os.path.join(TMP, "junk.pcap")
    open(junk, "wb").write(b"not a capture" * 10)
    r = run(REPLAY, "cc", junk)
    check(r.returncode == 1 and "cannot read" in r.stderr, f"junk: {r.stderr!r}")
    for args, word in ((["--window-us", "0"], "--window-us"),
                       (["--window-us", "x"], "--window-us"),
                       (["--line-rate-gbps", "9000"], "--line-rate-gbps"),
                       (["--profile", "nosuch"], "--profile"),
                       (["--what-if", "nosuch"], "--what-if"),
                       (["--set", "rp_gd=40"], "rp_gd"),
                       (["--set", "nosuch=1"], "nosuch"),
                       (["--flow", "bogus"], "--flow"),
                       (["--cut-threshold", "95"], "--cut-threshold"),
                       (["--react-block-us", "-1"], "--react-block-us"),
                       (["--idle-us", "0"], "--idle-us"),
                       (["--max-p95-err", "101"], "--max-p95-err"),
                       (["--csv", "/nonexistent/dir"], "--csv"),
                       (["--bogus"], "--bogus")):
        r = run(REPLAY, "cc", cap, *args)
        check(r.returncode == 2 and word in r.stderr, f"{args}: {r.returncode} {r.stderr!r}")
    r = run(REPLAY, "cc")
    check(r.returncode == 2 and "exactly one capture file" in r.stderr, r.stderr)
    r = run(REPLAY, "cc", "--help")
    check(r.returncode == 0 and "--fit" in r.stdout and "--what-if" in r.stdout, "cc --help")
    r = run(REPLAY, "cc", cap)
    check(r.returncode == 0 and "rp_verdict" in r.stdout and "conforms" in r.stdout,
          f"text report: {r.stdout[:300]!r}")
    r = run(REPLAY, "cc", cap, "--json", "--progress")
    check(r.returncode == 0 and "100%" in r.stderr and json.loads(r.stdout)["frames"] > 0,
          f"--progress: {r.stderr!r}")
    rep = cc(cap)
    check(rep and rep["schema"] == "rocefw.replay.cc/1", "schema")
    for k in ("src", "dst", "dst_qpn", "data_packets", "ce_marked", "cnps", "np_verdict",
              "rp_verdict", "conformance"):
        check(rep and k in rep["flows"][0], f"flow field {k}")


def test_csv_plot_whatif():
    cap = os.path.join(TMP, "unified.pcap")
    d = os.path.join(TMP, "out")
    os.mkdir(d)
    gp = shutil.which("gnuplot")
    check(gp is not None, "gnuplot missing: tools/install-deps.sh installs gnuplot-nox")
    rep = cc(cap, "--what-if", "paper", "--csv", d, "--plot", d)
    f = rep and flow(rep, 0x200)
    if not f:
        return
    check(f["what_if"]["profile"] == "paper" and f["what_if"]["windows"] > 0, "what_if object")
    lines = open(os.path.join(d, "flow-0.csv")).read().splitlines()
    check(lines[0].startswith("# rocefw.replay.cc/1 windows"), f"csv comment {lines[0]}")
    cols = lines[1].split(",")
    check(cols == ["t_start_us", "t_end_us", "observed_gbps", "model_gbps", "whatif_gbps",
                   "cnps", "ce_marked", "packets"], f"csv header {cols}")
    rows = [r.split(",") for r in lines[2:]]
    check(len(rows) == f["observed"]["windows"], f"csv rows {len(rows)}")
    check(all(r[4] != "" for r in rows), "what-if column filled")
    check(sum(int(r[5]) for r in rows) <= f["cnps"], "CNPs per window add up")
    ev = open(os.path.join(d, "flow-0-events.csv")).read().splitlines()
    check(ev[1] == "t_us,event,reaction_delay_us,cut_share", f"events header {ev[1]}")
    rows = [e.split(",") for e in ev[2:]]
    check(sum(1 for e in rows if e[1] == "cnp") == f["cnps"], "event CSV has every CNP")
    cuts = [e for e in rows if e[1] == "cut"]
    check(len(cuts) == f["observed"]["cut_size"]["n"] and
          abs(sum(float(e[3]) for e in cuts) / len(cuts) - f["observed"]["cut_size"]["mean"])
          < 0.001, f"cut rows {len(cuts)} vs {f['observed']['cut_size']}")
    # Without gnuplot on PATH: no silent success.
    d2 = os.path.join(TMP, "out2")
    os.mkdir(d2)
    r = subprocess.run([REPLAY, "cc", cap, "--plot", d2], capture_output=True, text=True,
                       env={"PATH": "/nonexistent"})
    check(r.returncode == 1 and "gnuplot" in r.stderr, f"no gnuplot: {r.returncode} {r.stderr!r}")
    png = os.path.join(d, "flow-0.png")
    ok = os.path.exists(png)
    check(ok and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) > 10000,
          "PNG plot written")


def main():
    global REPLAY, GEN, TMP
    REPLAY, GEN = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        TMP = tmp
        for t in (test_profiles, test_not_reacting, test_usec, test_switch, test_np,
                  test_attribution, test_formats, test_handmade, test_cli,
                  test_csv_plot_whatif):
            before = fails
            t()
            print(f"{t.__name__}: {'ok' if fails == before else 'FAILED'}")
    print(f"test_cc_replay: {fails} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
