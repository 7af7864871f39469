"""The ready list: the VCs whose head packet may ask for the switch (`act`, its first ctr[C_N_ACTIVE] places). A
head that cannot ask before a known cycle leaves it until then (park: an E_READY puts it back); one short of
downstream room sleeps in its place (fall_asleep) until a credit or a grant at its input or output wakes it."""

from __future__ import annotations

import numpy as np

from ..build.network import NODE, P_CLASS, P_PEER_PORT
from ..registry import X_FLIT
from ._jit import jit_inline, trailing_zeros
from .pool import list_add, list_remove, pop_vc, schedule
from .state import ASLEEP, C_EPOCH, C_N_ACTIVE, C_N_ASLEEP, E_READY, PK_READY, VC_HEAD, VC_POS, VC_WAITER, VC_WAKE


@jit_inline
def park(act, awake, vc, ev, wheel, ctr, prm, v, t):
    """Take VC v, whose head cannot be granted before VC_WAKE, off the ready list until then: a waiting head costs
    nothing per cycle (its E_READY puts it back). False if that is beyond the event wheel (it stays, skipped)."""
    wake = vc[v, VC_WAKE] + ctr[C_EPOCH]
    if wake - t > prm.wheel_mask:
        return False
    leave_ready(act, awake, vc, ctr, v)
    schedule(ev, wheel, ctr, prm.wheel_mask, E_READY, v, 0, wake)
    return True


# The ready list (act, first ctr[C_N_ACTIVE]) is unordered, but the order its VCs are looked at in decides ties
# (the greedy VC allocator serves them first come) and so results: a head asleep keeps its place, and `awake`
# (a bit per place) lets the allocator pass over the sleeping ones without reading them.

@jit_inline
def join_ready(act, awake, vc, ctr, v):
    """VC v's head is ready: v joins the ready list, awake."""
    i = ctr[C_N_ACTIVE]
    list_add(act, vc, VC_POS, ctr, C_N_ACTIVE, v)
    awake[i >> 6] |= np.int64(1) << (i & 63)


@jit_inline
def leave_ready(act, awake, vc, ctr, v):
    """VC v leaves the ready list; the last VC on it moves into its place, with its bit."""
    i, last = vc[v, VC_POS], ctr[C_N_ACTIVE] - 1
    bit = (awake[last >> 6] >> (last & 63)) & 1
    awake[i >> 6] = (awake[i >> 6] & ~(np.int64(1) << (i & 63))) | (bit << (i & 63))
    awake[last >> 6] &= ~(np.int64(1) << (last & 63))
    list_remove(act, vc, VC_POS, ctr, C_N_ACTIVE, v)


@jit_inline
def next_awake(awake, ctr, i, n):
    """The first place from i on in the ready list of n VCs whose head is awake; n if none."""
    if i >= n or ctr[C_N_ASLEEP] == 0:  # (an open-loop run's list has few sleepers or none)
        return i
    w = i >> 6
    bits = awake[w] & (np.int64(-1) << (i & 63))
    while bits == 0:
        w += 1
        if w > (n - 1) >> 6:
            return n
        bits = awake[w]
    return (w << 6) + trailing_zeros(bits)


@jit_inline
def fall_asleep(vc, awake, ctr, v, w):
    """VC v's head holds downstream VC w, which lacks room for it: it stays in its place on the ready list but
    is passed over until a credit comes back to w or a grant at its input or output (wake_port) could change
    what it asks; each of those wakes it for a look."""
    vc[v, VC_WAKE] = ASLEEP
    vc[w, VC_WAITER] = v
    i = vc[v, VC_POS]
    awake[i >> 6] &= ~(np.int64(1) << (i & 63))
    ctr[C_N_ASLEEP] += 1


@jit_inline
def wake(vc, awake, ctr, v, now):
    """VC v's head, if asleep (fall_asleep), is looked at again from cycle `now` (- C_EPOCH) on."""
    if v >= 0 and vc[v, VC_WAKE] == ASLEEP:
        vc[v, VC_WAKE] = now
        i = vc[v, VC_POS]
        awake[i >> 6] |= np.int64(1) << (i & 63)
        ctr[C_N_ASLEEP] -= 1


@jit_inline
def wake_port(port, vc, awake, ctr, prm, p, o, now):
    """A grant from input port p to output o has made them busy: the heads asleep at p, and those asleep on
    the VCs behind o, may now have to wait for them instead (head_request's WAIT). With a flit crossbar the heads
    of the VCs behind o wake too: the phits streaming into one moved on, and when its own next phits are there
    (chunk_ready) is taken from how far that stream has got."""
    V = prm.vcs
    for u in range(p * V, p * V + V):
        wake(vc, awake, ctr, u, now)
    if port[o, P_CLASS] != NODE:
        q = port[o, P_PEER_PORT]
        for w in range(q * V, q * V + V):
            wake(vc, awake, ctr, vc[w, VC_WAITER], now)
            if prm.crossbar == X_FLIT:
                wake(vc, awake, ctr, w, now)


@jit_inline
def pop_head(pk, vc, act, awake, ev, wheel, ctr, prm, v, t):
    """Take VC v's head packet out (granted, or dropped). The next packet is routed and allocated only now that it
    is the head: v stays in the ready list if it may ask at once, else leaves it (with an E_READY when the next
    head will be ready). Returns (the packet, whether v left the ready list)."""
    h = pop_vc(pk, vc, v)
    return h, next_head(pk, vc, act, awake, ev, wheel, ctr, prm, v, t)


@jit_inline
def next_head(pk, vc, act, awake, ev, wheel, ctr, prm, v, t):
    """VC v's head packet has gone (its tail, with a flit crossbar): the next one may ask from head_delay on. True
    if v left the ready list (with an E_READY when the next head will be ready)."""
    nxt = vc[v, VC_HEAD]
    if nxt >= 0:
        pk[nxt, PK_READY] = max(pk[nxt, PK_READY], t + prm.head_delay)
        if pk[nxt, PK_READY] <= t:
            return False
    leave_ready(act, awake, vc, ctr, v)
    if nxt >= 0:
        schedule(ev, wheel, ctr, prm.wheel_mask, E_READY, v, 0, pk[nxt, PK_READY])
    return True
