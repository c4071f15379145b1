#!/usr/bin/python3
"""Compare what a capture says about one side's memory with that memory.

  pcap_memcheck.py PCAP PERF_JSON IP

PERF_JSON is rocefw-perf --perftest's JSON with `regions` (QPN, vaddr, bytes of each QP's
peer-visible buffer, in QP order) and `dump` (the file holding those buffers after the run).
IP is rocefw-perf's IPv4 address. From the capture, every RDMA WRITE payload addressed to one
of those regions (RETH on First/Only, later packets of the message at PSN distance x path
MTU, IBA 9.4.1 / 9.7.4) and every RDMA READ response payload sent from them (the READ
request's RETH plus the response's PSN distance from the request) is compared byte for byte
with the dump. perftest writes the same bytes to an address all run long and does not change
what is read, so the last state equals every copy on the wire, retransmissions included.
Prints one line; exit 0 when at least one byte was compared and none differed.
Standard library only.
"""
import json
import socket
import struct
import sys

OP_WRITE_FIRST, OP_WRITE_MIDDLE, OP_WRITE_LAST, OP_WRITE_LAST_IMM = 0x06, 0x07, 0x08, 0x09
OP_WRITE_ONLY, OP_WRITE_ONLY_IMM = 0x0A, 0x0B
OP_READ_REQ = 0x0C
OP_READ_RESP = (0x0D, 0x0E, 0x0F, 0x10)  # first, middle, last, only
PSN_MOD = 1 << 24


def frames(path):
    with open(path, "rb") as f:
        gh = f.read(24)
        if len(gh) < 24:
            return
        magic = gh[:4]
        if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
            end = "<"
        elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
            end = ">"
        else:
            raise ValueError("not a pcap file (pcapng is not read here)")
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                return
            _, _, incl, _ = struct.unpack(end + "IIII", rh)
            yield f.read(incl)


def roce(d):
    """(src ip, dst ip, opcode, padcnt, dest qp, psn, the rest after BTH) or None."""
    if len(d) < 14 + 20 + 8 + 12 + 4 or d[12:14] != b"\x08\x00":
        return None
    ihl = (d[14] & 15) * 4
    if d[23] != 17:
        return None
    u = 14 + ihl
    if struct.unpack(">H", d[u + 2:u + 4])[0] != 4791:
        return None
    tot = struct.unpack(">H", d[16:18])[0]
    d = d[:14 + tot]  # the Ethernet padding is not payload
    b = u + 8
    op, flags = d[b], d[b + 1]
    pad = (flags >> 4) & 3
    qp = int.from_bytes(d[b + 5:b + 8], "big")
    psn = int.from_bytes(d[b + 9:b + 12], "big")
    return d[26:30], d[30:34], op, pad, qp, psn, d[b + 12:len(d) - 4]


def main():
    pcap, pj, ip = sys.argv[1:4]
    me = socket.inet_aton(ip)
    meta = json.load(open(pj))
    mem = open(meta["dump"], "rb").read()
    regions, off = [], 0
    # a READ request goes to rocefw's QP, its responses to the requester's
    peer_to_mine = {r["peer_qpn"]: r["qpn"] for r in meta["regions"]}
    for r in meta["regions"]:
        regions.append((r["vaddr"], r["bytes"], off))
        off += r["bytes"]
    if off != len(mem):
        print("dump holds %d bytes, the regions %d" % (len(mem), off))
        return 1

    def at(va, n):
        for base, size, o in regions:
            if base <= va and va + n <= base + size:
                return o + (va - base)
        return None

    compared = bad = outside = pkts = 0
    first_bad = None
    msg = {}     # WRITE: dest qp -> (first psn, va, pmtu)
    reads = {}   # READ: rocefw's qp -> recent requests (psn, va, len)
    pmtu = {}

    def compare(va, data, what):
        nonlocal compared, bad, outside, first_bad
        o = at(va, len(data))
        if o is None:
            outside += 1
            return
        if mem[o:o + len(data)] != data:
            bad += 1
            if first_bad is None:
                first_bad = "%s at 0x%x (%d bytes)" % (what, va, len(data))
        compared += len(data)

    for d in frames(pcap):
        p = roce(d)
        if p is None:
            continue
        src, dst, op, pad, qp, psn, rest = p
        if dst == me and op in (OP_WRITE_FIRST, OP_WRITE_ONLY, OP_WRITE_ONLY_IMM):
            va, _, dmalen = struct.unpack(">QII", rest[:16])
            data = rest[16 + (4 if op == OP_WRITE_ONLY_IMM else 0):len(rest) - pad]
            if op == OP_WRITE_FIRST:
                msg[qp] = (psn, va, len(data))
            pkts += 1
            compare(va, data, "WRITE PSN 0x%06x" % psn)
        elif dst == me and op in (OP_WRITE_MIDDLE, OP_WRITE_LAST, OP_WRITE_LAST_IMM):
            if qp not in msg:
                continue  # its First was before the capture started
            fpsn, va, mtu = msg[qp]
            k = (psn - fpsn) % PSN_MOD
            data = rest[(4 if op == OP_WRITE_LAST_IMM else 0):len(rest) - pad]
            pkts += 1
            compare(va + k * mtu, data, "WRITE PSN 0x%06x" % psn)
        elif dst == me and op == OP_READ_REQ:
            va, _, dmalen = struct.unpack(">QII", rest[:16])
            reads.setdefault(qp, []).append((psn, va, dmalen))
            reads[qp] = reads[qp][-4096:]
        elif src == me and op in OP_READ_RESP:
            # the response goes to the requester's QP; find the request by the PSN range
            data = rest[(4 if op != 0x0E else 0):len(rest) - pad]  # AETH on all but middle
            if op in (0x0D, 0x10):
                pmtu[qp] = max(pmtu.get(qp, 0), len(data))
            hit = None
            for rpsn, va, n in reversed(reads.get(peer_to_mine.get(qp), [])):
                k = (psn - rpsn) % PSN_MOD
                mtu = pmtu.get(qp, len(data))
                if k * mtu < max(n, 1):
                    hit = (va + k * mtu, data)
                    break
            if hit is None:
                continue
            pkts += 1
            compare(hit[0], hit[1], "READ response PSN 0x%06x" % psn)
    ok = compared > 0 and bad == 0
    print("%s: %d payload bytes in %d packets compared with rocefw's memory, %d differ%s%s" %
          ("ok" if ok else "FAIL", compared, pkts, bad,
           ", first: " + first_bad if first_bad else "",
           ", %d outside the regions" % outside if outside else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
