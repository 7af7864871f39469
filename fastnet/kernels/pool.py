"""Packet pool, FIFOs, active lists and the event wheel: the small primitives every stage uses.

Each takes the record arrays it touches (see state.py for why not the State tuple).
"""

from __future__ import annotations

from ._jit import jit_inline
from .state import (
    C_CREATED, C_DROPPED, C_EMPTIED, C_EV_FREE_COUNT, C_EV_FREE_HEAD, C_FREE_COUNT, C_FREE_HEAD, C_MEAS_CREATED,
    C_MEAS_DROPPED, C_N_ACTIVE_NODES, C_QUEUED, HIST_SUB, EV_AMOUNT, EV_KIND, EV_NEXT, EV_TARGET, ND_HEAD, ND_POS,
    ND_TAIL, PK_BIRTH, PK_DST, PK_GHOPS, PK_HOPS, PK_INTER, PK_LOST, PK_MSG, PK_NEXT, PK_OUT, PK_PHASE, PK_DVC, PK_SIZE,
    PK_SRC, PK_VCC, S_OFFERED_PHITS, PT_HELD, TS_CREATED_PHITS, VC_CAP, VC_FREE, VC_HEAD, VC_TAIL, port_of,
)


@jit_inline
def list_add(items, recs, col, ctr, count_at, x):
    """Append x to an unordered list of length ctr[count_at]; recs[x, col] remembers where it is."""
    i = ctr[count_at]
    items[i] = x
    recs[x, col] = i
    ctr[count_at] = i + 1


@jit_inline
def list_remove(items, recs, col, ctr, count_at, x):
    """Remove x by moving the last item into its place."""
    i = recs[x, col]
    last = ctr[count_at] - 1
    moved = items[last]
    items[i] = moved
    recs[moved, col] = i
    recs[x, col] = -1
    ctr[count_at] = last


@jit_inline
def fifo_append(links, col, owners, o, head, tail, x):
    """Append row x to the FIFO of owners[o] (head and tail columns; rows linked through links[:, col]).
    Returns True if the FIFO was empty."""
    links[x, col] = -1
    last = owners[o, tail]
    if last < 0:
        owners[o, head] = x
    else:
        links[last, col] = x
    owners[o, tail] = x
    return last < 0


@jit_inline
def fifo_unlink(links, col, owners, o, head, tail, x, prev):
    """Remove row x, which follows row prev (-1: x is the head), from the FIFO of owners[o]."""
    nxt = links[x, col]
    if prev < 0:
        owners[o, head] = nxt
    else:
        links[prev, col] = nxt
    if owners[o, tail] == x:
        owners[o, tail] = prev
    links[x, col] = -1


@jit_inline
def new_packet(pk, nd, node_act, ctr, sc, ts, prm, src, dst, size, t, measured):
    """Take a packet from the pool (the caller checked there is one) and queue it at its source node; it counts in
    the window's statistics if created inside the window and `measured`."""
    h = ctr[C_FREE_HEAD]
    ctr[C_FREE_HEAD] = pk[h, PK_NEXT]
    ctr[C_FREE_COUNT] -= 1
    pk[h, PK_SRC] = src
    pk[h, PK_DST] = dst
    pk[h, PK_SIZE] = size
    pk[h, PK_BIRTH] = t
    pk[h, PK_HOPS] = 0
    pk[h, PK_GHOPS] = 0
    pk[h, PK_PHASE] = 0
    pk[h, PK_INTER] = -1
    pk[h, PK_OUT] = -1
    pk[h, PK_VCC] = -1
    pk[h, PK_DVC] = -1
    pk[h, PK_LOST] = 0
    pk[h, PK_NEXT] = -1
    if nd[src, ND_TAIL] < 0:
        nd[src, ND_HEAD] = h
        list_add(node_act, nd, ND_POS, ctr, C_N_ACTIVE_NODES, src)
    else:
        pk[nd[src, ND_TAIL], PK_NEXT] = h
    nd[src, ND_TAIL] = h
    ctr[C_CREATED] += 1
    ctr[C_QUEUED] += 1
    if measured and prm.w0 <= t < prm.w1:
        ctr[C_MEAS_CREATED] += 1
        sc[S_OFFERED_PHITS] += size
    if prm.ts_interval > 0:
        ts[t // prm.ts_interval, TS_CREATED_PHITS] += size
    return h


@jit_inline
def free_packet(pk, ctr, h):
    pk[h, PK_NEXT] = ctr[C_FREE_HEAD]
    ctr[C_FREE_HEAD] = h
    ctr[C_FREE_COUNT] += 1


@jit_inline
def is_measured(pk, prm, h):
    """Whether packet h counts in the statistics (inside the window): not the MPI run's own beside background
    traffic, where only the background's (PK_MSG < 0) are measured."""
    return not prm.background or pk[h, PK_MSG] < 0


@jit_inline
def drop_packet(pk, ctr, prm, h, cause):
    """Packet h is lost to a failure (`cause`: C_DROP_LINK, C_DROP_ROUTER or C_DROP_UNROUTABLE): count it, as
    measured if it would have counted on delivery (cycle.record_delivery), and return it to the pool."""
    ctr[C_DROPPED] += 1
    ctr[cause] += 1
    if is_measured(pk, prm, h) and prm.w0 <= pk[h, PK_BIRTH] < prm.w1:
        ctr[C_MEAS_DROPPED] += 1
    free_packet(pk, ctr, h)


@jit_inline
def pop_source(pk, nd, node_act, ctr, n):
    """Remove and return the head of node n's source queue."""
    h = nd[n, ND_HEAD]
    nxt = pk[h, PK_NEXT]
    nd[n, ND_HEAD] = nxt
    if nxt < 0:
        nd[n, ND_TAIL] = -1
        list_remove(node_act, nd, ND_POS, ctr, C_N_ACTIVE_NODES, n)
        ctr[C_EMPTIED] += 1
    pk[h, PK_NEXT] = -1
    ctr[C_QUEUED] -= 1
    return h


@jit_inline
def push_vc(pk, vc, v, h):
    """Append packet h to VC v; True if it is now the head (the caller schedules its E_READY)."""
    pk[h, PK_NEXT] = -1
    if vc[v, VC_TAIL] < 0:
        vc[v, VC_HEAD] = h
        vc[v, VC_TAIL] = h
        return True
    pk[vc[v, VC_TAIL], PK_NEXT] = h
    vc[v, VC_TAIL] = h
    return False


@jit_inline
def pop_vc(pk, vc, v):
    h = vc[v, VC_HEAD]
    nxt = pk[h, PK_NEXT]
    vc[v, VC_HEAD] = nxt
    if nxt < 0:
        vc[v, VC_TAIL] = -1
    pk[h, PK_NEXT] = -1
    return h


@jit_inline
def schedule(ev, wheel, ctr, wheel_mask, kind, target, amount, due):
    """Put an event on the wheel; due - now must be below the wheel size (sized at build time)."""
    e = ctr[C_EV_FREE_HEAD]
    ctr[C_EV_FREE_HEAD] = ev[e, EV_NEXT]
    ctr[C_EV_FREE_COUNT] -= 1
    ev[e, EV_KIND] = kind
    ev[e, EV_TARGET] = target
    ev[e, EV_AMOUNT] = amount
    slot = due & wheel_mask
    ev[e, EV_NEXT] = wheel[slot]
    wheel[slot] = e


@jit_inline
def release_event(ev, ctr, e):
    ev[e, EV_NEXT] = ctr[C_EV_FREE_HEAD]
    ctr[C_EV_FREE_HEAD] = e
    ctr[C_EV_FREE_COUNT] += 1


@jit_inline
def vc_reserve(vc, pt, vc_area, vc_since, prm, v, amount, t):
    """Reserve `amount` phits of VC v (negative: credits came back), integrating occupancy over the window; the
    port's total (PT_HELD) is what UGAL and adaptive routing read, in O(1)."""
    if prm.occupancy:
        lo = max(vc_since[v], prm.w0)
        hi = min(t, prm.w1)
        if hi > lo:
            vc_area[v] += (vc[v, VC_CAP] - vc[v, VC_FREE]) * (hi - lo)
        vc_since[v] = t
    vc[v, VC_FREE] -= amount
    pt[port_of(prm, v), PT_HELD] += amount


@jit_inline
def hist_bin(v):
    """Log-linear bin: exact below 2*HIST_SUB, then HIST_SUB bins per octave."""
    if v < 2 * HIST_SUB:
        return v
    e = 0
    while (v >> e) >= 2 * HIST_SUB:
        e += 1
    return 2 * HIST_SUB + (e - 1) * HIST_SUB + ((v >> e) - HIST_SUB)
