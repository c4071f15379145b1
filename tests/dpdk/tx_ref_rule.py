# SPDX-License-Identifier: BSD-3-Clause
"""The rule of docs/nic.md "Payload sent from the MR" ("Which packets"), for the DPDK tests
that count the frames it names: perf_loopback.py (copied with their ICRC in one pass on the
ring port) and perf_memif.py (sent from the MR, or copied so by memif's zero-copy client)."""


def ref_packets(op, opts, size, mtu):
    """Packets of one @size-byte @op message at @mtu whose payload the transport hands over
    where it is: at least --tx-ref-min bytes in @opts (default 1024; 0: none), a multiple of 4
    (no pad). Atomics carry none."""
    rmin = int(opts[opts.index("--tx-ref-min") + 1]) if "--tx-ref-min" in opts else 1024
    if op == "atomic" or rmin == 0:
        return 0
    full, last = divmod(size, mtu)
    return (full if mtu >= rmin else 0) + (1 if last >= rmin and last % 4 == 0 else 0)
