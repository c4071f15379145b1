# SPDX-License-Identifier: BSD-3-Clause
"""A DPDK telemetry v2 client for the tests (the socket dpdk-telemetry.py talks to): one
SOCK_SEQPACKET connection to the process started with EAL --file-prefix PREFIX."""
import json
import os
import socket
import time


def eal(prefix, core=0):
    """EAL flags without hugepages, with a file prefix (so that telemetry has a socket)."""
    return ["--no-huge", "-m", "512", "--no-pci", f"--file-prefix={prefix}", "-l", str(core),
            "--log-level=lib.eal:warning"]


class Telemetry:
    def __init__(self, prefix, timeout=10.0):
        path = f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2"
        if os.getuid() != 0:
            path = os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk", prefix,
                                "dpdk_telemetry.v2")
        deadline = time.monotonic() + timeout
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise SystemExit(f"telemetry socket {path} did not appear")
            time.sleep(0.05)
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.connect(path)
        self.info = json.loads(self.s.recv(16384).decode())

    def query(self, cmd):
        """The reply to @cmd ("/rocefw/nic,0"), unwrapped from its {"/rocefw/nic": ...}."""
        self.s.send(cmd.encode())
        reply = json.loads(self.s.recv(1 << 16).decode())
        return reply[cmd.split(",")[0]]

    def close(self):
        self.s.close()
