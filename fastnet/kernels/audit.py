"""End-of-run audit: every packet id is in exactly one place, every VC's credits add up, and every VC with a
head packet waits for allocation in exactly one way (in the ready list, awake or asleep as its bit says, or with one
pending E_READY)."""

from __future__ import annotations

import numba
import numpy as np

from ..registry import X_FLIT
from ._jit import jit, jit_inline
from .timing import phits_crossed, phits_sent_in
from .state import (
    ASLEEP, C_FREE_HEAD, C_N_ACTIVE, C_N_ASLEEP, DRAINING, E_CREDIT, E_DELIVER, E_READY, EV_AMOUNT, EV_KIND, EV_NEXT,
    EV_TARGET, ND_HEAD, PK_NEXT, PK_SIZE, PT_HELD, UNLISTED, VC_CAP, VC_FREE, VC_HEAD, VC_JOIN, VC_OWNER, VC_WAKE,
    VS_DVC, VS_PKT, VS_SENT,
)

# result indices
AU_FREE, AU_QUEUED, AU_IN_VCS, AU_DELIVERING, AU_DUPLICATES, AU_CREDIT_ERRORS, AU_READY_ERRORS = 0, 1, 2, 3, 4, 5, 6


@jit_inline
def _mark(seen, h, out):
    if seen[h]:
        out[AU_DUPLICATES] += 1
    seen[h] = 1


def audit(prm, st) -> np.ndarray:
    """The audit's counts, indexed by AU_*."""
    out = np.zeros(7, dtype=np.int64)
    count(prm, st, out, np.zeros(len(st.pk), dtype=np.int8), np.zeros(len(st.vc), dtype=np.int64),
          np.zeros(len(st.vc), dtype=np.int64))
    return out


COUNT_SCRATCH = (numba.int64[::1], numba.int8[::1], numba.int64[::1], numba.int64[::1])  # count()'s last four


@jit
def count(prm, st, out, seen, held, waits):
    """Fill `out` (AU_*) with scratch arrays from the caller: `seen` a byte per packet, `held` (phits in FIFOs +
    credits on their way back) and `waits` (ready-list entries + pending E_READY events) a count per VC, all zero.
    A kernel that allocates nothing compiles without reference counting: a third faster, in a cold start's
    thread (sim._compile_audit)."""
    pk, vc, ev = st.pk, st.vc, st.ev
    h = st.ctr[C_FREE_HEAD]
    while h >= 0:
        _mark(seen, h, out)
        out[AU_FREE] += 1
        h = pk[h, PK_NEXT]
    for n in range(len(st.nd)):
        h = st.nd[n, ND_HEAD]
        while h >= 0:
            _mark(seen, h, out)
            out[AU_QUEUED] += 1
            h = pk[h, PK_NEXT]
    listed, asleep = 0, 0
    for v in range(len(st.awake) * 64):  # a VC's bit: it is on the ready list (kernels/ready.py) and its head awake
        on = v < len(vc) and vc[v, VC_JOIN] != UNLISTED
        if on:
            listed += 1
            waits[v] += 1
        bit = (st.awake[v >> 6] >> (v & 63)) & 1
        if bit != (on and vc[v, VC_WAKE] != ASLEEP):
            out[AU_READY_ERRORS] += 1
        asleep += on and not bit
    for w in range(len(st.awake)):  # a word's summary bit: the word is not zero
        if ((st.awake_sum[w >> 6] >> (w & 63)) & 1) != (st.awake[w] != 0):
            out[AU_READY_ERRORS] += 1
    if asleep != st.ctr[C_N_ASLEEP] or listed != st.ctr[C_N_ACTIVE]:
        out[AU_READY_ERRORS] += 1
    for v in range(len(vc)):
        h = vc[v, VC_HEAD]
        while h >= 0:
            _mark(seen, h, out)
            out[AU_IN_VCS] += 1
            held[v] += phits_sent_in(prm, pk, st.vs, v, h)
            h = pk[h, PK_NEXT]
        if prm.crossbar == X_FLIT and st.vs[v, VS_PKT] >= 0:  # streaming a packet out: what has not crossed is here;
            h = st.vs[v, VS_PKT]  # the packet itself is in the next VC's queue, or only here when bound for its node
            held[v] += phits_sent_in(prm, pk, st.vs, v, h) - phits_crossed(prm, pk[h, PK_SIZE], st.vs[v, VS_SENT])
            if st.vs[v, VS_DVC] < 0:
                _mark(seen, h, out)
                out[AU_IN_VCS] += 1
    for slot in range(len(st.wheel)):
        e = st.wheel[slot]
        while e >= 0:
            if ev[e, EV_KIND] == E_CREDIT:
                held[ev[e, EV_TARGET]] += ev[e, EV_AMOUNT]
            elif ev[e, EV_KIND] == E_READY:
                waits[ev[e, EV_TARGET]] += 1
            elif ev[e, EV_KIND] == E_DELIVER:
                _mark(seen, ev[e, EV_TARGET], out)
                out[AU_DELIVERING] += 1
            e = ev[e, EV_NEXT]
    V = prm.vcs
    for v in range(len(vc)):
        if held[v] + vc[v, VC_FREE] != vc[v, VC_CAP]:
            out[AU_CREDIT_ERRORS] += 1
        if vc[v, VC_OWNER] == DRAINING and vc[v, VC_FREE] == vc[v, VC_CAP]:  # its tail's credit is back: free
            out[AU_CREDIT_ERRORS] += 1
        if waits[v] != (vc[v, VC_HEAD] >= 0 or (prm.crossbar == X_FLIT and st.vs[v, VS_PKT] >= 0)):
            out[AU_READY_ERRORS] += 1
    for ip in range(len(vc) // V):  # the port totals UGAL and adaptive routing read
        total = 0
        for v in range(ip * V, ip * V + V):
            total += vc[v, VC_CAP] - vc[v, VC_FREE]
        if total != st.pt[ip, PT_HELD]:
            out[AU_CREDIT_ERRORS] += 1
