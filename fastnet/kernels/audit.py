"""End-of-run audit: every packet id is in exactly one place, and every VC's credits add up."""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .state import C_FREE_HEAD, EV_CREDIT

# result indices
A_FREE, A_QUEUED, A_IN_VCS, A_DELIVERING, A_DUPLICATES, A_CREDIT_ERRORS = 0, 1, 2, 3, 4, 5


@jit
def _mark(seen, h, out):
    if seen[h]:
        out[A_DUPLICATES] += 1
    seen[h] = 1


@jit
def audit(prm, st):
    out = np.zeros(6, dtype=np.int64)
    seen = np.zeros(len(st.pk_src), dtype=np.int8)
    h = st.ctr[C_FREE_HEAD]
    while h >= 0:
        _mark(seen, h, out)
        out[A_FREE] += 1
        h = st.pk_next[h]
    for n in range(len(st.src_head)):
        h = st.src_head[n]
        while h >= 0:
            _mark(seen, h, out)
            out[A_QUEUED] += 1
            h = st.pk_next[h]
    held = np.zeros(len(st.vc_head), dtype=np.int64)  # phits in FIFOs + credits on their way back
    for vc in range(len(st.vc_head)):
        h = st.vc_head[vc]
        while h >= 0:
            _mark(seen, h, out)
            out[A_IN_VCS] += 1
            held[vc] += st.pk_size[h]
            h = st.pk_next[h]
    for slot in range(len(st.wheel)):
        e = st.wheel[slot]
        while e >= 0:
            if st.ev_kind[e] == EV_CREDIT:
                held[st.ev_target[e]] += st.ev_amount[e]
            else:
                _mark(seen, st.ev_target[e], out)
                out[A_DELIVERING] += 1
            e = st.ev_next[e]
    for vc in range(len(st.vc_head)):
        if held[vc] + st.vc_free[vc] != prm.buffer:
            out[A_CREDIT_ERRORS] += 1
    return out
