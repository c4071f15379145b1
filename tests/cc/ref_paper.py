#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Oracle: the DCQCN reaction point as published (Zhu et al., "Congestion Control for Large-Scale
RDMA Deployments", SIGCOMM 2015, §3.1), written from the algorithm's statement as collected in
/work/shared/reference/dcqcn.md, in real numbers (Python floats), not from rocefw's cc/:

- On a CNP: RT = RC; RC = max(Rmin, RC (1 - alpha/2)); alpha = (1 - g) alpha + g; the increase
  timer, the byte counter and both stage counters restart; the alpha timer restarts.
- No CNP for K: alpha = (1 - g) alpha (and again every K).
- Increase events: the timer every T after the last cut, the byte counter every B bytes sent after
  it; each event counts in its own stage. Fast recovery while max(T_stage, BC_stage) < F
  (RC = (RT + RC)/2); hyper once both stages > F (RT += i R_HAI, i = min(T_stage, BC_stage) - F +
  1; RC = (RT + RC)/2); additive otherwise (RT += R_AI; RC = (RT + RC)/2). The stages are those
  before the event is counted, so that F events are spent in fast recovery ("F = 5" fast recovery
  iterations). RT never exceeds the line rate.
- Values: the 40G sample configuration, g = 1/256, K = 55 us, T = 55 us, B = 10 MB (taken as
  10 000 000 bytes), F = 5, R_AI 40 Mb/s, R_HAI 200 Mb/s. alpha starts at 1. The paper gives no
  Rmin: 10 Mb/s, the value of rocefw's `paper` profile.

Script events at time t are applied after the timers due at or before t (rocefw-cc's order).
run(script_lines, line_bps) -> list of (t_ns, kind, rc_bps, rt_bps, alpha), kind in first, cut,
fr, ai, hai.
"""

G = 1.0 / 256
K_NS = 55000
T_NS = 55000
B_BYTES = 10000000
F = 5
R_AI = 40e6
R_HAI = 200e6
R_MIN = 10e6


class PaperRp:
    def __init__(self, line_bps, log):
        self.line = float(line_bps)
        self.rc = float(line_bps)
        self.rt = float(line_bps)
        self.alpha = 1.0
        self.t_stage = 0
        self.bc_stage = 0
        self.bytes = 0
        self.limited = False  # the increase machinery runs once a CNP has cut
        self.alpha_at = None
        self.inc_at = None
        self.log = log

    def emit(self, t, kind):
        self.log.append((t, kind, self.rc, self.rt, self.alpha))

    def cnp(self, t):
        if not self.limited:
            self.emit(t, "first")  # the first CNP starts the rate limiter
        self.rt = self.rc
        self.rc = max(R_MIN, self.rc * (1 - self.alpha / 2))
        self.alpha = (1 - G) * self.alpha + G
        self.t_stage = self.bc_stage = 0
        self.bytes = 0
        self.limited = True
        self.inc_at = t + T_NS
        self.alpha_at = t + K_NS
        self.emit(t, "cut")

    def increase(self, t, from_timer):
        hi = max(self.t_stage, self.bc_stage)
        lo = min(self.t_stage, self.bc_stage)
        if hi < F:
            kind = "fr"
        elif lo > F:
            kind = "hai"
            self.rt = min(self.line, self.rt + (lo - F + 1) * R_HAI)
        else:
            kind = "ai"
            self.rt = min(self.line, self.rt + R_AI)
        self.rc = (self.rt + self.rc) / 2
        if from_timer:
            self.t_stage += 1
        else:
            self.bc_stage += 1
        self.emit(t, kind)

    def timers_until(self, t):
        while True:
            due = [x for x in (self.alpha_at, self.inc_at) if x is not None and x <= t]
            if not due:
                return
            now = min(due)
            if self.alpha_at == now:
                self.alpha = (1 - G) * self.alpha
                self.alpha_at = now + K_NS
            if self.inc_at == now:
                self.inc_at = now + T_NS
                self.increase(now, True)

    def tx(self, t, nbytes):
        if not self.limited:
            return
        self.bytes += nbytes
        while self.bytes >= B_BYTES:
            self.bytes -= B_BYTES
            self.increase(t, False)


def run(lines, line_bps):
    log = []
    rp = PaperRp(line_bps, log)
    for t, ev, arg in lines:
        rp.timers_until(t)
        if ev == "cnp":
            rp.cnp(t)
        elif ev == "tx":
            rp.tx(t, arg)
    return log
