"""The ready list: the VCs whose head packet may ask for the switch. A head that cannot ask before a known cycle
leaves it until then (park: an E_READY puts it back); one short of downstream room sleeps on it (fall_asleep)
until a credit or a grant at its input or output wakes it.

The order the allocator looks at heads in decides ties (the greedy VC allocator serves heads first come; routing
draws from its router's random stream in the order of the router's heads), so it is canonical: routers in turn,
and a router's heads by the cycle each joined, those that joined in one cycle the longest ready first, then the
lower VC (VC_JOIN, VC_AGE). It depends on each router's own history alone, so that an engine whose threads own
routers keeps it.

A VC on the list has its join cycle in VC_JOIN (UNLISTED when off it); `awake` has a bit per VC whose head may
ask (listed, not asleep) and `awake_sum` a bit per word of `awake` that is not zero. Joining and leaving write a
record and a bit; the order is made at each allocation (walk_order): the awake bits are found in VC order, which
is router order (a router's ports, and so its VCs, are consecutive), and only a router with more than one awake
head sorts them, so idle routers cost nothing and the walk itself is a dense list, as the allocator likes it."""

from __future__ import annotations

import numpy as np

from ..build.network import NODE, P_CLASS, P_PEER_PORT, P_ROUTER
from ..registry import X_FLIT
from ._jit import jit_inline, trailing_zeros
from .pool import pop_vc, schedule
from .state import (
    ASLEEP, C_EPOCH, C_N_ACTIVE, C_N_ASLEEP, E_READY, PK_READY, UNLISTED, VC_AGE, VC_HEAD, VC_JOIN, VC_WAITER,
    VC_WAKE, port_of,
)
from .timing import streaming

AGE_MAX = (1 << 31) - 1  # VC_AGE is int32: heads ready longer than this tie on age (then the lower VC first)


@jit_inline
def set_awake(st, v):
    """VC v's head may ask: its bit, and its word's."""
    w = v >> 6
    st.awake[w] |= np.int64(1) << (v & 63)
    st.awake_sum[w >> 6] |= np.int64(1) << (w & 63)


@jit_inline
def clear_awake(st, v):
    """VC v's head may not ask (it left the list, or sleeps)."""
    w = v >> 6
    st.awake[w] &= ~(np.int64(1) << (v & 63))
    if st.awake[w] == 0:
        st.awake_sum[w >> 6] &= ~(np.int64(1) << (w & 63))


@jit_inline
def is_awake(st, v):
    """VC v is on the ready list and its head may ask."""
    return (st.awake[v >> 6] >> (v & 63)) & 1 != 0


@jit_inline
def next_awake(st, i):
    """The first VC from i on whose head is awake; len(st.vc) if none."""
    end = len(st.vc)
    if i >= end:
        return end
    w = i >> 6
    bits = st.awake[w] & (np.int64(-1) << (i & 63))
    if bits != 0:
        return (w << 6) + trailing_zeros(bits)
    w += 1
    s = w >> 6
    if s >= len(st.awake_sum):
        return end
    words = st.awake_sum[s] & (np.int64(-1) << (w & 63))
    while words == 0:
        s += 1
        if s >= len(st.awake_sum):
            return end
        words = st.awake_sum[s]
    w = (s << 6) + trailing_zeros(words)
    return (w << 6) + trailing_zeros(st.awake[w])


@jit_inline
def _before(vc, u, v):
    """VC u's head goes before VC v's at their router: it joined the ready list earlier, or in the same cycle
    having been ready longer (on a tie the lower VC, v, goes first: walk_order inserts u after it)."""
    return vc[u, VC_JOIN] < vc[v, VC_JOIN] or (vc[u, VC_JOIN] == vc[v, VC_JOIN] and vc[u, VC_AGE] > vc[v, VC_AGE])


@jit_inline
def walk_order(ps, port, prm, st):
    """The awake heads in the order the allocator looks at them, in st.act; returns how many. VCs come in VC
    order, routers in turn, and each is put in its place among its router's before it (insertion: a router
    holds few awake heads, most often one)."""
    act, vc, V = st.act, st.vc, prm.vcs
    n = 0
    first = 0  # the place of the first head of u's router
    end = -1  # the VC after u's router's last
    u = next_awake(st, 0)
    while u < len(vc):
        if u >= end:
            end = ps[port[port_of(prm, u), P_ROUTER] + 1] * V
            first = n  # the router's first place
        j = n
        while j > first and _before(vc, u, act[j - 1]):
            act[j] = act[j - 1]
            j -= 1
        act[j] = u
        n += 1
        u = next_awake(st, u + 1)
    return n


@jit_inline
def join_ready(st, v, since, t):
    """VC v's head, ready since cycle `since`, may ask: v joins the ready list at cycle t."""
    st.vc[v, VC_JOIN] = t - st.ctr[C_EPOCH]
    st.vc[v, VC_AGE] = min(t - since, AGE_MAX)
    set_awake(st, v)
    st.ctr[C_N_ACTIVE] += 1


@jit_inline
def leave_ready(st, v):
    """VC v leaves the ready list."""
    st.vc[v, VC_JOIN] = UNLISTED
    clear_awake(st, v)
    st.ctr[C_N_ACTIVE] -= 1


@jit_inline
def listed(st, v):
    """VC v is on the ready list (its head awake or asleep)."""
    return st.vc[v, VC_JOIN] != UNLISTED


@jit_inline
def park(prm, st, v, t):
    """Take VC v, whose head cannot be granted before VC_WAKE, off the ready list until then: a waiting head costs
    nothing per cycle (its E_READY puts it back, with the cycle the head has been ready since). False if that is
    beyond the event wheel (it stays, skipped)."""
    wake = st.vc[v, VC_WAKE] + st.ctr[C_EPOCH]
    if wake - t > prm.wheel_mask:
        return False
    since = wake if streaming(prm, st.vs, v) else st.pk[st.vc[v, VC_HEAD], PK_READY]
    leave_ready(st, v)
    schedule(st.ev, st.wheel, st.ctr, prm.wheel_mask, E_READY, v, since, wake)
    return True


@jit_inline
def fall_asleep(st, v, w):
    """VC v's head holds downstream VC w, which lacks room for it: it stays on the ready list, keeping its place in
    the order, but is passed over until a credit comes back to w or a grant at its input or output (wake_port)
    could change what it asks; each of those wakes it for a look."""
    st.vc[v, VC_WAKE] = ASLEEP
    st.vc[w, VC_WAITER] = v
    clear_awake(st, v)
    st.ctr[C_N_ASLEEP] += 1


@jit_inline
def wake(st, v, now):
    """VC v's head, if asleep (fall_asleep), is looked at again from cycle `now` (- C_EPOCH) on."""
    if v >= 0 and st.vc[v, VC_WAKE] == ASLEEP:
        st.vc[v, VC_WAKE] = now
        set_awake(st, v)
        st.ctr[C_N_ASLEEP] -= 1


@jit_inline
def wake_port(port, prm, st, p, o, now):
    """A grant from input port p to output o has made them busy: the heads asleep at p, and those asleep on
    the VCs behind o, may now have to wait for them instead (head_request's WAIT). With a flit crossbar the heads
    of the VCs behind o wake too: the phits streaming into one moved on, and when its own next phits are there
    (chunk_ready) is taken from how far that stream has got."""
    V = prm.vcs
    for u in range(p * V, p * V + V):
        wake(st, u, now)
    if port[o, P_CLASS] != NODE:
        q = port[o, P_PEER_PORT]
        for w in range(q * V, q * V + V):
            wake(st, st.vc[w, VC_WAITER], now)
            if prm.crossbar == X_FLIT:
                wake(st, w, now)


@jit_inline
def pop_head(prm, st, v, t):
    """Take VC v's head packet out (granted, or dropped). The next packet is routed and allocated only now that it
    is the head: v stays in the ready list if it may ask at once, else leaves it (with an E_READY when the next
    head will be ready). Returns (the packet, whether v left the ready list)."""
    h = pop_vc(st.pk, st.vc, v)
    return h, next_head(prm, st, v, t)


@jit_inline
def next_head(prm, st, v, t):
    """VC v's head packet has gone (its tail, with a flit crossbar): the next one may ask from head_delay on, in
    v's place if at once. True if v left the ready list (with an E_READY when the next head will be ready)."""
    pk = st.pk
    nxt = st.vc[v, VC_HEAD]
    if nxt >= 0:
        pk[nxt, PK_READY] = max(pk[nxt, PK_READY], t + prm.head_delay)
        if pk[nxt, PK_READY] <= t:
            return False
    leave_ready(st, v)
    if nxt >= 0:
        schedule(st.ev, st.wheel, st.ctr, prm.wheel_mask, E_READY, v, pk[nxt, PK_READY], pk[nxt, PK_READY])
    return True
