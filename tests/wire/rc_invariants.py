#!/usr/bin/env python3
"""RC wire invariants, checked on a capture decoded by tshark (the independent decoder): no
part of rocefw reads the packets here, so a violation is judged against IBA vol. 1 ch. 9 alone.

usage: rc_invariants.py [--mtu N] CAPTURE [CAPTURE ...]
       rc_invariants.py --self-test      (writes synthetic pcaps, one per planted violation)

A connection is the request stream host A -> host B to QP X plus the response stream B -> A
to the requester's QP Y. Responses are paired with their requests by the UDP source port of
the responder (rocefw: 0xC000 | QPN low 14 bits; rxe without a flow label: 0xC000 +
hash_32(QPN, 14)), else by PSN: the one request stream between the two hosts that had sent a
request at the first response's PSN (or the PSN before it, for a NAK). The PSN also overrules
a port that names a stream with no request there when exactly one other stream has one.
Rules (each reported as `frame N: rule: detail`, exit status 1):

  ack_in_read_atomic   a positive ACK (AETH syndrome 000xxxxx) carrying a PSN of a READ
                       request's range or of an atomic request: those are acknowledged only by
                       their own responses (IBA 9.7.5.1.3, 9.7.6.1.1). In rocefw's
                       selective-repeat mode (BTH Resv7 = 0x53, docs/transport-sr.md) an ACK
                       echoes the responder's ePSN - 1 and its requester never completes a
                       READ/atomic from one: there only an ACK before that PSN's own response
                       was sent is flagged
  ack_unknown_psn      a positive ACK for a PSN no request was sent at
  nak_seq_repeated     a second NAK PSN sequence error for the same expected PSN: the responder
                       NAKs a sequence error once until it is corrected (IBA 9.7.5.1.2)
                       (not in selective-repeat mode, whose SACK NAKs repeat by design)
  read_resp_outside    a READ response at a PSN that belongs to no READ request, or a
                       RESPONSE FIRST/ONLY at a PSN where no READ request starts (a READ
                       request consumes one PSN per response packet, IBA 9.7.1.1)
  atomic_ack_outside   an ATOMIC ACKNOWLEDGE at a PSN that is not an atomic request's
  resp_unknown_request a response (ACK, READ response, atomic ACK) on a connection whose
                       requests were never seen, or at a PSN past every request sent
  msn_backwards        the AETH MSN of a response stream decreasing from one response at a
                       new (higher) PSN to the next (IBA ch. 9, AETH: the MSN counts completed
                       messages; it never goes back). Replayed duplicates are not judged.

READ ranges need the path MTU: taken from the payload of FIRST/MIDDLE packets of the same
connection (they carry exactly one PMTU), else --mtu, else bounded between 4096 (PSNs surely in
the READ) and 256 (PSNs possibly in it; neither rule fires on those).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from collections import defaultdict

FIELDS = ["frame.number", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "udp.srcport",
          "udp.length", "infiniband.bth.opcode", "infiniband.bth.destqp",
          "infiniband.bth.psn", "infiniband.bth.reserved7", "infiniband.bth.padcnt",
          "infiniband.aeth.syndrome", "infiniband.aeth.msn", "infiniband.reth.dmalen"]
TSHARK_ARGS = ["--disable-protocol", "rpcordma"]
MASK = 0xFFFFFF
SR_MARK = 0x53

READ_REQ, ACK, ATOMIC_ACK = 0x0C, 0x11, 0x12
READ_RESP = {0x0D: "first", 0x0E: "middle", 0x0F: "last", 0x10: "only"}
ATOMICS = (0x13, 0x14)
SEND_WRITE = set(range(0x00, 0x0C)) - {READ_REQ} | {0x16, 0x17}
# Header bytes after the BTH of the FIRST/MIDDLE packets (which carry exactly one PMTU).
FULL_PKT_HDR = {0x00: 0, 0x01: 0, 0x06: 16, 0x07: 0, 0x0D: 4, 0x0E: 0}


def psn_lt(a, b):
    """a < b in 24-bit serial arithmetic (IBA 9.7.1)."""
    d = (b - a) & MASK
    return 0 < d < (1 << 23)


def psn_add(a, n):
    return (a + n) & MASK


def rxe_port(qpn):
    """rxe's UDP source port: 0xC000 + hash_32(qpn, 14) (Linux golden-ratio hash)."""
    return 0xC000 + (((qpn * 0x61C88647) & 0xFFFFFFFF) >> 18)


def rocefw_port(qpn):
    return 0xC000 | (qpn & 0x3FFF)


def num(v):
    if v == "":
        return None
    return int(v.split(",")[0], 0)


def decode(path):
    tshark = shutil.which("tshark")
    if tshark is None:
        raise SystemExit("FAIL: tshark is not installed; this check needs it "
                         "(tools/install-deps.sh)")
    cmd = [tshark, "-r", path, *TSHARK_ARGS, "-Y", "infiniband.bth", "-T", "fields",
           "-E", "separator=/t", "-E", "occurrence=f"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    pkts = []
    for line in out.splitlines():
        c = line.split("\t")
        if len(c) < len(FIELDS):
            continue
        p = {"frame": int(c[0]), "src": c[1] or c[3], "dst": c[2] or c[4],
             "sport": num(c[5]), "udp_len": num(c[6]), "op": num(c[7]), "qp": num(c[8]),
             "psn": num(c[9]), "resv7": num(c[10]) or 0, "pad": num(c[11]) or 0,
             "syn": num(c[12]), "msn": num(c[13]), "dmalen": num(c[14])}
        if p["op"] is None or p["op"] >> 5 != 0:  # RC only (not UD, CNP, ...)
            continue
        pkts.append(p)
    return pkts


def is_request(op):
    return op in SEND_WRITE or op == READ_REQ or op in ATOMICS


class Conn:
    """One request stream (A -> B, QP X) and the responses to it."""

    def __init__(self):
        self.kind = {}          # psn -> 'W' (SEND/WRITE), 'R' READ, 'R?' maybe READ, 'A'
        self.read_start = set()
        self.answered = set()   # PSNs a READ response or atomic ACK was sent for
        self.max_psn = None     # the last PSN any request consumed
        self.sr = False
        self.mtu = None
        self.last_nak = None    # PSN of the last NAK sequence error, None once corrected
        self.last_msn = None
        self.max_resp_psn = None  # the highest PSN a response with an AETH carried


def payload_len(p):
    if p["udp_len"] is None:
        return None
    return p["udp_len"] - 8 - 12 - FULL_PKT_HDR[p["op"]] - 4 - p["pad"]


def pair_streams(pkts):
    """Map (B, A, Y, sport) response stream keys to request stream keys (A, B, X): the one
    request stream whose QP X gives the responder's UDP source port, else the one that had
    already sent a request at the first response's PSN (one PSN past: a NAK)."""
    reqs = defaultdict(set)
    psns = defaultdict(set)
    pairing = {}
    for p in pkts:
        if p["psn"] is None:
            continue
        if is_request(p["op"]):
            reqs[(p["src"], p["dst"])].add(p["qp"])
            psns[(p["src"], p["dst"], p["qp"])].add(p["psn"])
            continue
        key = (p["src"], p["dst"], p["qp"], p["sport"])
        if key in pairing:
            continue
        cands = reqs.get((p["dst"], p["src"]), set())
        hit = [x for x in cands if p["sport"] in (rxe_port(x), rocefw_port(x))]
        at_psn = [x for x in cands
                  if {p["psn"], psn_add(p["psn"], -1)} & psns[(p["dst"], p["src"], x)]]
        # The port names a stream that sent nothing at this PSN while exactly one other did:
        # the port guess is wrong (seen with rxe under ibv_srq_pingpong's 16 QPs: QP 0x29
        # answered with hash_32(0x2a)'s port), so the PSN decides.
        if len(hit) != 1 or (hit[0] not in at_psn and len(at_psn) == 1):
            hit = at_psn
        pairing[key] = (p["dst"], p["src"], hit[0]) if len(hit) == 1 else None
    return pairing


def learn_mtu(pkts, pairing, conns):
    for p in pkts:
        if p["op"] not in FULL_PKT_HDR:
            continue
        if is_request(p["op"]):
            key = (p["src"], p["dst"], p["qp"])
            if p["resv7"] == SR_MARK:
                continue  # SR SEND/WRITE packets carry segments behind an SRETH
        else:
            key = pairing.get((p["src"], p["dst"], p["qp"], p["sport"]))
        n = payload_len(p)
        if key is None or n is None or n not in (256, 512, 1024, 2048, 4096):
            continue
        c = conns[key]
        c.mtu = max(c.mtu or 0, n)


class Checker:
    def __init__(self, mtu=None):
        self.mtu = mtu
        self.violations = []

    def flag(self, p, rule, detail):
        self.violations.append(f"frame {p['frame']}: {rule}: {detail}")

    def request(self, c, p):
        op, psn = p["op"], p["psn"]
        if p["resv7"] == SR_MARK:
            c.sr = True
        if op == READ_REQ:
            ln = p["dmalen"] or 0
            mtu = c.mtu or self.mtu
            sure = -(-ln // (mtu or 4096)) or 1
            maybe = -(-ln // (mtu or 256)) or 1
            for i in range(maybe):
                c.kind[psn_add(psn, i)] = "R" if i < sure else "R?"
            c.read_start.add(psn)
            last = psn_add(psn, maybe - 1)
        else:
            c.kind[psn] = "A" if op in ATOMICS else "W"
            c.read_start.discard(psn)
            last = psn
        if c.max_psn is None or psn_lt(c.max_psn, last):
            c.max_psn = last

    def response(self, c, p):
        op, psn = p["op"], p["psn"]
        if c is None:
            self.flag(p, "resp_unknown_request",
                      f"opcode {op:#04x} PSN {psn:#x} to QP {p['qp']:#x}: no request seen")
            return
        if p["resv7"] == SR_MARK:
            c.sr = True
        self.msn(c, p)
        syn = p["syn"]
        if op == ACK and syn is not None and syn >> 5 == 3:
            self.nak(c, p, syn)
            return
        if op == ACK and syn is not None and syn >> 5 == 1:
            # RNR NAK: names the PSN of the request it could not take; that PSN arrived, so a
            # sequence error NAKed at or before it was corrected (a NAK after it is a new one)
            if c.last_nak is not None and not psn_lt(psn, c.last_nak):
                c.last_nak = None
            return
        k = c.kind.get(psn)
        if k is None:
            if c.max_psn is None or psn_lt(c.max_psn, psn):
                self.flag(p, "resp_unknown_request",
                          f"opcode {op:#04x} PSN {psn:#x}: past every request sent")
            elif op == ACK:
                self.flag(p, "ack_unknown_psn", f"PSN {psn:#x}: no request at that PSN")
            else:
                self.flag(p, "resp_unknown_request",
                          f"opcode {op:#04x} PSN {psn:#x}: no request at that PSN")
            return
        if k == "W" or k == "A":
            if c.last_nak is not None and not psn_lt(psn, c.last_nak):
                c.last_nak = None
        if op in READ_RESP or op == ATOMIC_ACK:
            c.answered.add(psn)
        if op == ACK:
            if k in ("R", "A") and not (c.sr and psn in c.answered):
                what = "a READ request's range" if k == "R" else "an atomic request"
                self.flag(p, "ack_in_read_atomic", f"positive ACK PSN {psn:#x} is in "
                          f"{what}; only its own response may acknowledge it")
        elif op == ATOMIC_ACK:
            if k != "A":
                self.flag(p, "atomic_ack_outside", f"PSN {psn:#x} is not an atomic request's")
        elif op in READ_RESP:
            part = READ_RESP[op]
            if k not in ("R", "R?"):
                self.flag(p, "read_resp_outside",
                          f"READ response {part} at PSN {psn:#x}: not in a READ request's range")
            elif part in ("first", "only") and psn not in c.read_start:
                self.flag(p, "read_resp_outside", f"READ response {part} at PSN {psn:#x}: no "
                          "READ request starts there")

    def nak(self, c, p, syn):
        psn = p["psn"]
        if syn != 0x60 or c.sr:
            return
        if c.last_nak == psn:
            self.flag(p, "nak_seq_repeated", f"NAK sequence error for PSN {psn:#x} again, "
                      "before the gap was corrected")
        c.last_nak = psn

    def msn(self, c, p):
        """Only responses at a new PSN: a replayed duplicate may carry the MSN of its first
        execution (rxe resends a saved atomic response as it was)."""
        m, psn = p["msn"], p["psn"]
        if m is None:
            return
        if c.max_resp_psn is not None and not psn_lt(c.max_resp_psn, psn):
            return
        c.max_resp_psn = psn
        if c.last_msn is not None and psn_lt(m, c.last_msn):
            self.flag(p, "msn_backwards", f"MSN {m:#x} after {c.last_msn:#x}")
        c.last_msn = m

    def run(self, pkts):
        pairing = pair_streams(pkts)
        conns = defaultdict(Conn)
        learn_mtu(pkts, pairing, conns)
        for p in pkts:
            if p["psn"] is None:
                continue
            if is_request(p["op"]):
                self.request(conns[(p["src"], p["dst"], p["qp"])], p)
                continue
            if p["op"] not in READ_RESP and p["op"] not in (ACK, ATOMIC_ACK):
                continue  # a reserved opcode: not RC traffic this checker judges
            key = pairing.get((p["src"], p["dst"], p["qp"], p["sport"]))
            self.response(conns.get(key) if key else None, p)
        return self.violations


def check_file(path, mtu=None):
    pkts = decode(path)
    return Checker(mtu).run(pkts), len(pkts)


# ---- self-test: synthetic captures, each with one planted violation ----

def ib_frame(src, dst, sport, op, qp, psn, ext=b"", payload=b"", resv7=0):
    bth = struct.pack(">BBHII", op, 0, 0xFFFF, qp & MASK, (0x80 | resv7) << 24 | (psn & MASK))
    ib = bth + ext + payload + b"\0\0\0\0"  # ICRC (tshark decodes fields regardless)
    udp = struct.pack(">HHHH", sport, 4791, 8 + len(ib), 0) + ib
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     bytes(src), bytes(dst))
    csum = 0
    for i in range(0, 20, 2):
        csum += (ip[i] << 8) | ip[i + 1]
    while csum >> 16:
        csum = (csum & 0xFFFF) + (csum >> 16)
    ip = ip[:10] + struct.pack(">H", ~csum & 0xFFFF) + ip[12:]
    return b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00" + ip + udp


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1, i, len(fr), len(fr)) + fr)


A_IP, B_IP = (10, 0, 0, 1), (10, 0, 0, 2)
QA, QB = 0x11, 0x12  # A's QP (requester), B's QP (responder)


def req(op, psn, ext=b"", payload=b"", sr=False):
    return ib_frame(A_IP, B_IP, rocefw_port(QA), op, QB, psn, ext, payload,
                    SR_MARK if sr else 0)


def resp(op, psn, syn=0x1F, msn=1, payload=b"", sr=False):
    return ib_frame(B_IP, A_IP, rocefw_port(QB), op, QA, psn,
                    struct.pack(">I", syn << 24 | msn) if syn is not None else b"", payload,
                    SR_MARK if sr else 0)


def reth(ln):
    return struct.pack(">QII", 0x1000, 0x77, ln)


def atomic_eth():
    return struct.pack(">QIQQ", 0x1000, 0x77, 1, 0)


def clean_flow():
    """A legal exchange: WRITE, 3-packet READ at MTU 256, atomic, SEND, with a NAK/retry."""
    return [
        req(0x06, 100, reth(512), bytes(256)), req(0x08, 101, b"", bytes(256)),
        resp(ACK, 101, msn=1),
        req(READ_REQ, 102, reth(700)),
        resp(0x0D, 102, msn=1, payload=bytes(256)), resp(0x0E, 103, None, payload=bytes(256)),
        resp(0x0F, 104, msn=2, payload=bytes(188)),
        req(0x14, 105, atomic_eth()), resp(ATOMIC_ACK, 105, msn=3, payload=bytes(8)),
        req(0x04, 106, b"", bytes(8)), req(0x04, 107, b"", bytes(8)),
        req(0x04, 108, b"", bytes(8)),
        resp(ACK, 106, msn=4), resp(ACK, 107, 0x60, msn=4),  # 107 lost: one NAK
        req(0x04, 107, b"", bytes(8)), req(0x04, 108, b"", bytes(8)),
        resp(ACK, 108, msn=6),
        req(0x04, 109, b"", bytes(8)), req(0x04, 110, b"", bytes(8)),
        resp(ACK, 110, 0x60, msn=6),  # a new gap at 110 (109 lost): one NAK again is fine
        # 110 resent and RNR NAKed (no receive WQE): the expected PSN arrived, so the gap was
        # corrected; 111 behind it is a new gap, NAKed once more (rxe does this, interop
        # rfw-rnr-send)
        req(0x04, 110, b"", bytes(8)), resp(ACK, 110, 0x2E, msn=6),
        req(0x04, 111, b"", bytes(8)), resp(ACK, 110, 0x60, msn=6),
    ]


PLANTED = {
    "ack_in_read_atomic": clean_flow()[:6] + [resp(ACK, 103, msn=1)],
    "ack_in_atomic": clean_flow()[:9] + [resp(ACK, 105, msn=3)],
    "nak_seq_repeated": clean_flow()[:14] + [resp(ACK, 107, 0x60, msn=4)],
    "read_resp_outside": clean_flow()[:3] + [resp(0x0E, 101, None, payload=bytes(256))],
    "read_resp_not_at_start": clean_flow()[:4] + [resp(0x0D, 103, msn=1,
                                                       payload=bytes(256))],
    "atomic_ack_outside": clean_flow()[:4] + [resp(ATOMIC_ACK, 102, msn=1,
                                                   payload=bytes(8))],
    "resp_unknown_request": [resp(ACK, 5, msn=1)],
    "resp_past_requests": clean_flow()[:2] + [resp(ACK, 150, msn=1)],
    "msn_backwards": clean_flow()[:8] + [resp(ACK, 105, 0x63, msn=0)],  # item 8's NAK
}
RULE_OF = {"ack_in_atomic": "ack_in_read_atomic", "read_resp_not_at_start": "read_resp_outside",
           "resp_past_requests": "resp_unknown_request"}


def self_test():
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        clean = os.path.join(tmp, "clean.pcap")
        write_pcap(clean, clean_flow())
        v, n = check_file(clean)
        if n != len(clean_flow()) or v:
            fails += 1
            print(f"FAIL clean capture: {n} packets decoded, violations {v}")
        # The same flow in selective-repeat mode: its repeated NAKs are by design.
        sr = [f for f in PLANTED["nak_seq_repeated"]]
        path = os.path.join(tmp, "sr.pcap")
        write_pcap(path, [req(0x04, 1, b"", bytes(4), sr=True)] + sr)
        # (the SR marker on one request marks the connection; PSN 1 is outside the flow's)
        v, _ = check_file(path)
        if any("nak_seq_repeated" in x for x in v):
            fails += 1
            print(f"FAIL sr connection: repeated SACK NAK flagged: {v}")
        for name, frames in PLANTED.items():
            rule = RULE_OF.get(name, name)
            path = os.path.join(tmp, name + ".pcap")
            write_pcap(path, frames)
            v, _ = check_file(path)
            hit = [x for x in v if f": {rule}:" in x]
            other = [x for x in v if f": {rule}:" not in x]
            last = f"frame {len(frames)}:"
            if not hit or not hit[0].startswith(last) or other:
                fails += 1
                print(f"FAIL planted {name}: want {rule} at the last frame, got {v}")
            else:
                print(f"ok   planted {name}: {hit[0]}")
    print(f"rc_invariants self-test: {len(PLANTED)} planted violations, {fails} failures")
    return 1 if fails else 0


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    if argv[0] == "--self-test":
        return self_test()
    mtu = None
    if argv[0] == "--mtu":
        mtu, argv = int(argv[1]), argv[2:]
    bad = 0
    for path in argv:
        v, n = check_file(path, mtu)
        for x in v[:20]:
            print(f"{path}: {x}")
        if len(v) > 20:
            print(f"{path}: ... {len(v) - 20} more")
        print(f"{path}: {n} RC packets, {len(v)} violations")
        bad += bool(v)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
