#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Oracle: the "Mellanox DCQCN" (CcMode 1) reaction point of HPCC's ns-3 simulator, transliterated
from alibaba-edu/High-Precision-Congestion-Control, simulation/src/point-to-point/model/rdma-hw.cc
(commit 9f4be2a: cnp_received_mlx, UpdateAlphaMlx, ScheduleUpdateAlphaMlx, CheckRateDecreaseMlx,
ScheduleDecreaseRateMlx, RateIncEventTimerMlx, RateIncEventMlx, FastRecoveryMlx,
ActiveIncreaseMlx, HyperIncreaseMlx), with the parameters simulation/run.py writes for
`--cc dcqcn` (t_alpha 1, t_dec 4, t_inc 300 us, g 0.00390625, FAST_RECOVERY_TIMES 1,
RATE_AI 5*bw/25, RATE_HAI 50*bw/25 Mb/s with Python 2 integer division, MIN_RATE 1000Mb/s,
CLAMP_TARGET_RATE 0) and RdmaHw's default RateOnFirstCnp 1.0 (scratch/third.cc does not set it).

Written from the reference's text, not from rocefw's cc/. Arithmetic as ns-3 does it: alpha a C
double (Python float, IEEE binary64), rates ns3::DataRate (uint64 b/s) where `rate * double` and
`rate / 2` build a new DataRate from a double (truncated toward zero, data-rate.cc operator* and
operator/), and the simulator's event queue ordered by (time, insertion order) as ns-3's default
MapScheduler does (EventKey: m_ts then m_uid).

Script events (CNPs) at time t are delivered after every simulator event due at or before t: the
same convention as rocefw-cc, which runs due timers before a script event of the same time.

Usage as a module: run(script_lines, line_bps, rai_bps, rhai_bps) -> list of events
(t_ns, kind, rc_bps, rt_bps, alpha) with kind in first, cut, fr, ai, hai.
"""
import heapq

NS_PER_US = 1000


class Sim:
    """A minimal ns-3 Simulator: Schedule/Cancel, FIFO among equal times."""

    def __init__(self):
        self.now = 0
        self.heap = []
        self.uid = 0
        self.cancelled = set()

    def schedule(self, delay_ns, fn):
        self.uid += 1
        heapq.heappush(self.heap, (self.now + delay_ns, self.uid, fn))
        return self.uid

    def cancel(self, ev):
        if ev is not None:
            self.cancelled.add(ev)

    def run_until(self, t):
        while self.heap and self.heap[0][0] <= t:
            ts, uid, fn = heapq.heappop(self.heap)
            if uid in self.cancelled:
                continue
            self.now = ts
            fn()
        self.now = t


def trunc_rate(x):
    """DataRate(uint64_t) from a double: C++ floating-to-integer conversion truncates."""
    return int(x)


class MlxQp:
    """RdmaQueuePair::mlx plus the RdmaHw members the Mlx functions use."""

    def __init__(self, sim, line_bps, rai_bps, rhai_bps, log):
        self.sim = sim
        self.log = log
        # RdmaHw attributes as run.py / third.cc set them
        self.m_g = 0.00390625
        self.m_alpha_resume_interval = 1.0  # us
        self.m_rateDecreaseInterval = 4.0  # us
        self.m_rpgTimeReset = 300.0  # us
        self.m_rpgThreshold = 1
        self.m_rai = rai_bps
        self.m_rhai = rhai_bps
        self.m_minRate = 1000 * 1000 * 1000
        self.m_EcnClampTgtRate = False
        self.m_rateOnFirstCNP = 1.0
        self.line = line_bps  # dev->GetDataRate()
        # AddQueuePair: m_rate = m_max_rate = targetRate = line
        self.m_rate = line_bps
        self.m_targetRate = line_bps
        self.m_alpha = 1.0
        self.m_alpha_cnp_arrived = False
        self.m_decrease_cnp_arrived = False
        self.m_first_cnp = True
        self.m_rpTimeStage = 0
        self.m_eventUpdateAlpha = None
        self.m_eventDecreaseRate = None
        self.m_rpTimer = None

    def us(self, v):
        # MicroSeconds(double): the values used are whole microseconds, exact in ns
        return int(round(v * NS_PER_US))

    def emit(self, kind):
        self.log.append((self.sim.now, kind, self.m_rate, self.m_targetRate, self.m_alpha))

    # ---- UpdateAlphaMlx / ScheduleUpdateAlphaMlx ----
    def update_alpha(self):
        if self.m_alpha_cnp_arrived:
            self.m_alpha = (1 - self.m_g) * self.m_alpha + self.m_g
        else:
            self.m_alpha = (1 - self.m_g) * self.m_alpha
        self.m_alpha_cnp_arrived = False
        self.schedule_update_alpha()

    def schedule_update_alpha(self):
        self.m_eventUpdateAlpha = self.sim.schedule(self.us(self.m_alpha_resume_interval),
                                                    self.update_alpha)

    # ---- cnp_received_mlx ----
    def cnp_received(self):
        self.m_alpha_cnp_arrived = True
        self.m_decrease_cnp_arrived = True
        if self.m_first_cnp:
            self.m_alpha = 1.0
            self.m_alpha_cnp_arrived = False
            self.schedule_update_alpha()
            self.schedule_decrease_rate(1)  # +1 ns: the check follows the alpha update
            self.m_rate = trunc_rate(self.m_rateOnFirstCNP * self.m_rate)
            self.m_targetRate = self.m_rate
            self.m_first_cnp = False
            self.emit("first")

    # ---- CheckRateDecreaseMlx / ScheduleDecreaseRateMlx ----
    def check_rate_decrease(self):
        self.schedule_decrease_rate(0)
        if self.m_decrease_cnp_arrived:
            clamp = True
            if not self.m_EcnClampTgtRate:
                if self.m_rpTimeStage == 0:
                    clamp = False
            if clamp:
                self.m_targetRate = self.m_rate
            self.m_rate = max(self.m_minRate,
                              trunc_rate(self.m_rate * (1 - self.m_alpha / 2)))
            self.m_rpTimeStage = 0
            self.m_decrease_cnp_arrived = False
            self.sim.cancel(self.m_rpTimer)
            self.m_rpTimer = self.sim.schedule(self.us(self.m_rpgTimeReset),
                                               self.rate_inc_event_timer)
            self.emit("cut")

    def schedule_decrease_rate(self, delta_ns):
        self.m_eventDecreaseRate = self.sim.schedule(
            self.us(self.m_rateDecreaseInterval) + delta_ns, self.check_rate_decrease)

    # ---- RateIncEventTimerMlx / RateIncEventMlx ----
    def rate_inc_event_timer(self):
        self.m_rpTimer = self.sim.schedule(self.us(self.m_rpgTimeReset),
                                           self.rate_inc_event_timer)
        self.rate_inc_event()
        self.m_rpTimeStage += 1

    def rate_inc_event(self):
        if self.m_rpTimeStage < self.m_rpgThreshold:
            self.fast_recovery()
        elif self.m_rpTimeStage == self.m_rpgThreshold:
            self.active_increase()
        else:
            self.hyper_increase()

    def half_sum(self):
        # (m_rate / 2) + (m_targetRate / 2): two DataRates from doubles, each truncated
        return trunc_rate(self.m_rate / 2.0) + trunc_rate(self.m_targetRate / 2.0)

    def fast_recovery(self):
        self.m_rate = self.half_sum()
        self.emit("fr")

    def active_increase(self):
        self.m_targetRate += self.m_rai
        if self.m_targetRate > self.line:
            self.m_targetRate = self.line
        self.m_rate = self.half_sum()
        self.emit("ai")

    def hyper_increase(self):
        self.m_targetRate += self.m_rhai
        if self.m_targetRate > self.line:
            self.m_targetRate = self.line
        self.m_rate = self.half_sum()
        self.emit("hai")


def run(lines, line_bps, rai_bps, rhai_bps):
    """Drive one QP with a rocefw-cc event script; return its event log."""
    sim = Sim()
    log = []
    qp = MlxQp(sim, line_bps, rai_bps, rhai_bps, log)
    for t, ev, _arg in lines:
        sim.run_until(t)
        if ev == "cnp":
            qp.cnp_received()
        # tx: this model has no byte counter; tick: nothing but the timers
    return log
