#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_transport (tests/fuzz/corpus/transport/), including the
regression inputs of issue 13's items. Record format in fuzz_transport.c: control byte, 16-bit
big-endian length, the IB part (BTH first); a record shorter than a BTH injects nothing (byte 0:
the argument of TIME / POST, byte 1: an impairment of the next exchange)."""
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus", "transport")
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


# post_one's WR kinds (enum wr_kind in fuzz_transport.c)
(K_SEND, K_WRITE, K_READ, K_SEND_IMM, K_FETCH_ADD, K_CMP_SWAP, K_WRITE_IMM, K_INV_UNKNOWN,
 K_INV_PLAIN, K_BAD_LKEY, K_SEND0, K_WRITE0, K_READ0, K_BIG_READ) = range(14)
# impairment bits (record byte 1): lose A->B packet 0..3, lose B->A packet 0..1, dup, reverse
LOSE_AB0, LOSE_BA0, LOSE_BA1, DUP, REVERSE = 0x01, 0x10, 0x20, 0x40, 0x80
IDLE = rec(0, b"\0")             # one exchange: the WRs posted at the start complete


def post(kind, impair=None):
    return rec(POST, bytes([kind]) if impair is None else bytes([kind, impair]))


def impair(mask):
    return rec(0, bytes([0, mask]))


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
    # Strict oracle (nothing injected): every status as IBA prescribes, every byte of the big
    # READ, every SEND / WRITE with immediate received once.
    "strict_all_ops": b"".join(post(k) for k in range(K_INV_UNKNOWN)),
    "strict_zero_length": IDLE + b"".join(post(k) for k in (K_SEND0, K_WRITE0, K_READ0)),
    "strict_bad_lkey_head": IDLE + post(K_SEND) + post(K_BAD_LKEY) + post(K_WRITE),
    "strict_inv_unknown_head": IDLE + post(K_WRITE) + post(K_INV_UNKNOWN) + post(K_SEND),
    "strict_big_read": IDLE + post(K_BIG_READ) + post(K_READ) + post(K_BIG_READ),
    "strict_loss_ab": IDLE + post(K_WRITE, 0x0F) + rec(TIME, b"\x02"),
    "strict_loss_ba": IDLE + post(K_READ, LOSE_BA0 | LOSE_BA1) + rec(TIME, b"\x02"),
    "strict_dup_reorder": IDLE + post(K_SEND) + post(K_WRITE_IMM, DUP | REVERSE) +
    impair(REVERSE),
    "strict_sends_past_rq": b"".join(post(k) for k in (K_SEND, K_SEND_IMM, K_WRITE_IMM) * 3),
    # An RNR NAK (timer code 0: 655 ms) while the first WRs are outstanding, their ACKs, then
    # a LOCAL_INV posted during the wait: when the RNR timer rewinds, the LOCAL_INV, not yet
    # executed, must not be skipped (it was: never executed, never completed, the QP hung).
    "rnr_rewind_local_inv": rec(A | QPN | PSN, bth(0x11) + aeth(0x20)) + post(K_INV_UNKNOWN),
    "rnr_rewind_local_inv_plain": rec(A | QPN | PSN, bth(0x11) + aeth(0x20)) + post(K_INV_PLAIN),
    # Found by fuzz_transport after issue 13.2's READ split: sr, a 64 KiB READ (8 requests of
    # 32 PSNs) fully requested, then another READ: the initiator depth counted the first READ
    # as one WQE, not its 4 outstanding requests, so the fifth found every responder resource
    # busy: NAK invalid request (REM_INV_REQ_ERR)
    "sr_split_read_depth": bytes.fromhex("000001004000010d400001024000017c480403102e6300000d"),
    # Regressions of issue 13 (each failed its oracle before the item's fix):
    # item 3: a local error (bad lkey, LOCAL_INV) behind an outstanding WQE never completed in
    # gbn (hung: nothing to send, no timer armed)
    "item3_bad_lkey_behind": post(K_BAD_LKEY),
    "item3_inv_unknown_behind": post(K_INV_UNKNOWN),
    # item 7: LOCAL_INV of a plain (not fast-registration) MR succeeded
    "item7_inv_plain": IDLE + post(K_INV_PLAIN) + post(K_SEND),
    # item 2: sr, a 64 KiB READ (256 PSNs > sr_window 64) completed successfully with wrong
    # bytes after one lost response
    "item2_sr_big_read": post(K_BIG_READ, LOSE_BA0),
}
for name, data in seeds.items():
    with open(os.path.join(out, name + ".bin"), "wb") as f:
        f.write(data)
print(f"wrote {len(seeds)} seeds to {out}")
