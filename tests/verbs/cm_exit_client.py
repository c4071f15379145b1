#!/usr/bin/python3
"""An rdma_cm client that connects, calls rdma_disconnect and exits at once (cm_run.py's
exit_after_disconnect group): rdma_disconnect only posts the DREQ on QP1, and with
--progress inline no thread of the NIC runs, so nothing but the provider's exit can put the
DREQ on the wire. The server must see DISCONNECTED all the same.

usage: cm_exit_client.py SRC_IP DST_IP PORT
"""
import sys

import pyverbs.cm_enums as ce
import pyverbs.enums as e
from pyverbs.cmid import CMID, AddrInfo, CMEvent, CMEventChannel, ConnParam
from pyverbs.qp import QPCap, QPInitAttr

src, dst, port = sys.argv[1:4]
ch = CMEventChannel()
cmid = CMID(creator=ch, port_space=ce.RDMA_PS_TCP)


def expect(want):
    ev = CMEvent(ch)
    got = ev.event_type
    ev.ack_cm_event()
    if got != want:
        sys.exit(f"cm_exit_client: event {got}, expected {want}")


cmid.resolve_addr(AddrInfo(src=src, dst=dst, dst_service=port, port_space=ce.RDMA_PS_TCP))
expect(ce.RDMA_CM_EVENT_ADDR_RESOLVED)
cmid.resolve_route()
expect(ce.RDMA_CM_EVENT_ROUTE_RESOLVED)
cmid.create_qp(QPInitAttr(qp_type=e.IBV_QPT_RC, cap=QPCap(max_recv_wr=1)))
cmid.connect(ConnParam())
expect(ce.RDMA_CM_EVENT_ESTABLISHED)
cmid.disconnect()
print("cm_exit_client: disconnected, exiting", flush=True)
