"""Packet pool, FIFOs, active lists and the event wheel: the small primitives every stage uses."""

from __future__ import annotations

from ._jit import jit
from .state import (
    C_CREATED, C_EV_FREE_COUNT, C_EV_FREE_HEAD, C_FREE_COUNT, C_FREE_HEAD, C_MEAS_CREATED, C_N_ACTIVE,
    C_N_ACTIVE_NODES, C_QUEUED, S_OFFERED_PHITS, TS_CREATED_PHITS,
)


@jit
def new_packet(st, prm, src, dst, size, t):
    """Take a packet from the pool (the caller checked there is one) and queue it at its source node."""
    h = st.ctr[C_FREE_HEAD]
    st.ctr[C_FREE_HEAD] = st.pk_next[h]
    st.ctr[C_FREE_COUNT] -= 1
    st.pk_src[h] = src
    st.pk_dst[h] = dst
    st.pk_size[h] = size
    st.pk_birth[h] = t
    st.pk_hops[h] = 0
    st.pk_ghops[h] = 0
    st.pk_phase[h] = 0
    st.pk_inter[h] = -1
    st.pk_out[h] = -1
    st.pk_next[h] = -1
    if st.src_tail[src] < 0:
        st.src_head[src] = h
        pos = st.ctr[C_N_ACTIVE_NODES]
        st.node_act[pos] = src
        st.node_pos[src] = pos
        st.ctr[C_N_ACTIVE_NODES] = pos + 1
    else:
        st.pk_next[st.src_tail[src]] = h
    st.src_tail[src] = h
    st.ctr[C_CREATED] += 1
    st.ctr[C_QUEUED] += 1
    if prm.w0 <= t < prm.w1:
        st.ctr[C_MEAS_CREATED] += 1
        st.sc[S_OFFERED_PHITS] += size
    if prm.ts_interval > 0:
        st.ts[t // prm.ts_interval, TS_CREATED_PHITS] += size
    return h


@jit
def free_packet(st, h):
    st.pk_next[h] = st.ctr[C_FREE_HEAD]
    st.ctr[C_FREE_HEAD] = h
    st.ctr[C_FREE_COUNT] += 1


@jit
def pop_source(st, n):
    """Remove and return the head of node n's source queue."""
    h = st.src_head[n]
    nxt = st.pk_next[h]
    st.src_head[n] = nxt
    if nxt < 0:
        st.src_tail[n] = -1
        pos = st.node_pos[n]
        last = st.ctr[C_N_ACTIVE_NODES] - 1
        moved = st.node_act[last]
        st.node_act[pos] = moved
        st.node_pos[moved] = pos
        st.node_pos[n] = -1
        st.ctr[C_N_ACTIVE_NODES] = last
    st.pk_next[h] = -1
    st.ctr[C_QUEUED] -= 1
    return h


@jit
def push_vc(st, vc, h):
    st.pk_next[h] = -1
    if st.vc_tail[vc] < 0:
        st.vc_head[vc] = h
        pos = st.ctr[C_N_ACTIVE]
        st.act_list[pos] = vc
        st.act_pos[vc] = pos
        st.ctr[C_N_ACTIVE] = pos + 1
    else:
        st.pk_next[st.vc_tail[vc]] = h
    st.vc_tail[vc] = h


@jit
def pop_vc(st, vc):
    h = st.vc_head[vc]
    nxt = st.pk_next[h]
    st.vc_head[vc] = nxt
    if nxt < 0:
        st.vc_tail[vc] = -1
        pos = st.act_pos[vc]
        last = st.ctr[C_N_ACTIVE] - 1
        moved = st.act_list[last]
        st.act_list[pos] = moved
        st.act_pos[moved] = pos
        st.act_pos[vc] = -1
        st.ctr[C_N_ACTIVE] = last
    st.pk_next[h] = -1
    return h


@jit
def schedule(st, prm, kind, target, amount, due):
    """Put an event on the wheel; due - now must be at most the wheel size (checked at build time)."""
    e = st.ctr[C_EV_FREE_HEAD]
    st.ctr[C_EV_FREE_HEAD] = st.ev_next[e]
    st.ctr[C_EV_FREE_COUNT] -= 1
    st.ev_kind[e] = kind
    st.ev_target[e] = target
    st.ev_amount[e] = amount
    slot = due & prm.wheel_mask
    st.ev_next[e] = st.wheel[slot]
    st.wheel[slot] = e


@jit
def vc_reserve(st, prm, vc, amount, t):
    """Change the phits reserved in a VC (negative amount frees), integrating occupancy over the window."""
    if prm.occupancy:
        lo = max(st.vc_since[vc], prm.w0)
        hi = min(t, prm.w1)
        if hi > lo:
            st.vc_area[vc] += (prm.buffer - st.vc_free[vc]) * (hi - lo)
        st.vc_since[vc] = t
    st.vc_free[vc] -= amount
