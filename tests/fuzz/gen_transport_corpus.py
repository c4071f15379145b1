#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_transport (tests/fuzz/corpus/transport/). Record format in
fuzz_transport.c: control byte, 16-bit big-endian length, the IB part (BTH first)."""
import os
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                         "corpus", "transport")
os.makedirs(out, exist_ok=True)

B, A = 0, 1                      # target bit: 0 = B (responder side), 1 = A (requester side)
QPN, PSN, VA, CE, TIME, POST = 2, 4, 8, 16, 32, 64
SR = 128                         # set the selective-repeat marker (docs/transport-sr.md)


def bth(op, psn_delta=0, ack=True, pad=0):
    return struct.pack(">BBHBBHBBH", op, pad << 4, 0xffff, 0, 0, 0, 0x80 if ack else 0, 0,
                       psn_delta & 0xff)


def reth(va=0, rkey=0, length=0):
    return struct.pack(">QII", va, rkey, length)


def aeth(syn, msn=0):
    return struct.pack(">I", (syn << 24) | msn)


def sreth_write(va=0, rkey=0, off=0):
    return struct.pack(">QII", va, rkey, off)


def sreth_send(rsn=0, off=0):
    return struct.pack(">IIII", rsn, 0, 0, off)


def sack(words):
    return struct.pack(">HH", len(words), 0) + b"".join(struct.pack(">I", w) for w in words)


def rec(ctl, ib):
    return struct.pack(">BH", ctl, len(ib)) + ib


seeds = {
    "send_only": rec(B | QPN | PSN, bth(0x04) + b"hello world!"),
    "send_first_middle_last": rec(B | QPN | PSN, bth(0x00) + bytes(256)) +
    rec(B | QPN | PSN, bth(0x01) + bytes(256)) + rec(B | QPN | PSN, bth(0x02) + bytes(12)),
    "write_only": rec(B | QPN | PSN | VA, bth(0x0a) + reth(64, 0, 64) + bytes(range(64))),
    "write_only_bad_len": rec(B | QPN | PSN | VA, bth(0x0a) + reth(64, 0, 999) + bytes(64)),
    "write_imm": rec(B | QPN | PSN | VA, bth(0x0b) + reth(0, 0, 8) + struct.pack(">I", 7) +
                     bytes(8)),
    "read_req": rec(B | QPN | PSN | VA, bth(0x0c) + reth(0, 0, 700)),
    "read_req_dup": rec(B | QPN | PSN | VA, bth(0x0c) + reth(0, 0, 700)) +
    rec(B | QPN | PSN | VA, bth(0x0c, 0xfd) + reth(0, 0, 700)),
    "fetch_add": rec(B | QPN | PSN | VA, bth(0x14) + struct.pack(">QIQQ", 8, 0, 5, 0)),
    "cmp_swap_dup": rec(B | QPN | PSN | VA, bth(0x13) + struct.pack(">QIQQ", 16, 0, 9, 0)) +
    rec(B | QPN | PSN | VA, bth(0x13, 0xff) + struct.pack(">QIQQ", 16, 0, 9, 0)),
    "out_of_seq": rec(B | QPN | PSN, bth(0x04, 5) + bytes(4)),
    "ack": rec(A | QPN | PSN, bth(0x11) + aeth(0x1f)),
    "nak_seq": rec(A | QPN | PSN, bth(0x11) + aeth(0x60)),
    "nak_access": rec(A | QPN | PSN, bth(0x11) + aeth(0x62)),
    "rnr_nak_then_time": rec(A | QPN | PSN, bth(0x11) + aeth(0x21)) + rec(TIME, b"\x20"),
    "read_resp_only": rec(A | QPN | PSN, bth(0x10) + aeth(0x1f) + bytes(8)),
    "read_resp_first": rec(A | QPN | PSN, bth(0x0d) + aeth(0x1f) + bytes(256)),
    "atomic_ack": rec(A | QPN | PSN, bth(0x12) + aeth(0x1f) + struct.pack(">Q", 1)),
    "cnp": rec(A | QPN, bth(0x81) + bytes(16)),
    "ce_send": rec(B | QPN | PSN | CE, bth(0x04) + bytes(8)),
    "timeouts": rec(TIME, b"\xff") * 6,
    "post_more": rec(POST, b"\x02") + rec(POST, b"\x05") + rec(TIME, b"\x10"),
    "garbage": rec(B, b"\xde\xad\xbe\xef" * 5),
    # selective repeat (the target runs every input on an sr pair too; MTU 256: 240-byte
    # segments after the 16-byte SRETH)
    "sr_write_middle_ooo": rec(B | QPN | PSN | VA | SR, bth(0x07, 3) + sreth_write(0, 0, 720) +
                                bytes(240)) +
    rec(B | QPN | PSN | VA | SR, bth(0x06) + reth(0, 0, 1000) + sreth_write(0, 0, 0) +
        bytes(240)),
    "sr_write_only": rec(B | QPN | PSN | VA | SR, bth(0x0a) + reth(64, 0, 64) +
                         sreth_write(64, 0, 0) + bytes(range(64))),
    "sr_send_last_first": rec(B | QPN | PSN | SR, bth(0x02, 1) + sreth_send(0, 240) +
                              bytes(20)) +
    rec(B | QPN | PSN | SR, bth(0x00) + sreth_send(0, 0) + bytes(240)),
    "sr_send_dup": rec(B | QPN | PSN | SR, bth(0x04) + sreth_send(0, 0) + bytes(8)) * 2,
    "sr_nak_sack": rec(A | QPN | PSN | SR, bth(0x11) + aeth(0x60) + sack([0x5, 0xffffffff])),
    "sr_nak_bad_sack": rec(A | QPN | PSN | SR, bth(0x11) + aeth(0x60) + struct.pack(">HH", 99,
                                                                                  0)),
    "sr_ack": rec(A | QPN | PSN | SR, bth(0x11) + aeth(0x1f)) + rec(TIME, b"\x02"),
    "sr_read_resp_ooo": rec(A | QPN | PSN | SR, bth(0x0e, 2) + aeth(0x1f) + bytes(256)) +
    rec(A | QPN | PSN | SR, bth(0x0d) + aeth(0x1f) + bytes(256)),
    "sr_timeouts": rec(TIME | SR, b"\x03") * 4 + rec(POST, b"\x01") + rec(TIME, b"\x30"),
}
for name, data in seeds.items():
    with open(os.path.join(out, name + ".bin"), "wb") as f:
        f.write(data)
print(f"wrote {len(seeds)} seeds to {out}")
