#!/usr/bin/python3
"""Check the RoCEv2 ICRC of every UDP/4791 frame in pcap / pcapng files (standard library
only; an independent cross-check of the captures, not of rocefw).

ICRC = CRC-32 (Ethernet polynomial, zlib) over 8 bytes of 0xff (stands in for the LRH), the
IP header with the variant fields set to all ones (IPv4: TOS, TTL, header checksum; IPv6:
traffic class, flow label, hop limit), the UDP header with its checksum set to 0xffff, the
BTH with its reserved byte 4 set to 0xff, and the rest of the packet up to the ICRC, which
is stored little-endian. Exit status 1 if any ICRC is wrong.
"""
import struct, sys, zlib
def frames(path):
    d = open(path, 'rb').read()
    magic = struct.unpack('<I', d[:4])[0]
    if magic in (0xa1b2c3d4, 0xa1b23c4d):
        off = 24
        while off < len(d):
            _, _, incl, orig = struct.unpack('<IIII', d[off:off+16]); off += 16
            yield d[off:off+incl]; off += incl
    elif magic == 0x0a0d0d0a:
        off = 0
        while off < len(d):
            btype, blen = struct.unpack('<II', d[off:off+8])
            if btype == 6:
                caplen = struct.unpack('<I', d[off+20:off+24])[0]
                yield d[off+28:off+28+caplen]
            off += blen
def check(fr):
    et = struct.unpack('>H', fr[12:14])[0]; l3 = 14
    if et == 0x0800:
        ihl = (fr[l3] & 0xf) * 4
        if fr[l3+9] != 17: return None
        ip = bytearray(fr[l3:l3+ihl]); ip[1] = 0xff; ip[8] = 0xff; ip[10:12] = b'\xff\xff'
        l4 = l3 + ihl; tot = struct.unpack('>H', fr[l3+2:l3+4])[0]; end = l3 + tot
    elif et == 0x86dd:
        if fr[l3+6] != 17: return None
        ip = bytearray(fr[l3:l3+40]); ip[0] |= 0x0f; ip[1:4] = b'\xff\xff\xff'; ip[7] = 0xff
        l4 = l3 + 40; end = l4 + struct.unpack('>H', fr[l3+4:l3+6])[0]
    else: return None
    if struct.unpack('>H', fr[l4+2:l4+4])[0] != 4791: return None
    udp = bytearray(fr[l4:l4+8]); udp[6:8] = b'\xff\xff'
    bth = bytearray(fr[l4+8:end-4]); bth[4] = 0xff
    crc = zlib.crc32(b'\xff'*8 + bytes(ip) + bytes(udp) + bytes(bth)) & 0xffffffff
    return crc == struct.unpack('<I', fr[end-4:end])[0]
worst = 0
for p in sys.argv[1:]:
    ok = bad = 0
    for fr in frames(p):
        r = check(fr)
        if r is None: continue
        ok += r; bad += (not r)
    print(f"ICRC: {ok} correct, {bad} wrong")
    worst = max(worst, bad)
sys.exit(1 if worst else 0)
