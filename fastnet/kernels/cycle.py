"""The cycle loop: input-queued virtual cut-through routers with credits, VCs and separable allocation.

One cycle, in pipeline order (`step`):

1. `fire_events`   credits that have travelled back upstream, and packet tails reaching their node
2. generate        traffic sources add packets to their node's (unbounded) source queue
3. `inject`        each node whose injection link is free sends its oldest packet into a router VC with room
4. `allocate`      route newly ready heads; separable input-first round-robin switch allocation
5. `traverse`      move the granted packets: reserve the downstream VC (credits), occupy crossbar and link,
                   schedule the credit return and, at the last router, the delivery

Timing of one hop (virtual cut-through, one phit per cycle per link): a packet of L phits granted at cycle t
holds the crossbar for ceil(L/S) cycles (S = speedup) but never finishes before its own tail has arrived; its head
starts on the link when the link is free (an output queue of one packet absorbs a crossbar faster than the link)
and reaches the next router `latency` cycles later, where it may be granted `delay` cycles after arrival. A
downstream VC is reserved only if all L phits fit (VCT). The L credits return to the upstream when the tail has
left the buffer, plus `credit_delay`, plus the link latency. Allocation reads the state left by the previous
cycle and `traverse` commits afterwards, so the order in which routers are visited does not matter.
"""

from __future__ import annotations

import numpy as np

from ..traffic.openloop import generate_open_loop
from ._jit import jit
from .pool import free_packet, pop_source, pop_vc, push_vc, schedule, vc_reserve
from .routing import route_head
from .state import (
    C_DELIVERED, C_EV_FREE_COUNT, C_EV_FREE_HEAD, C_MEAS_CREATED, C_FREE_COUNT, C_INJECTED, C_LAST_PROGRESS, C_MEAS_DELIVERED, C_N_ACTIVE,
    C_N_ACTIVE_NODES, C_QUEUED, C_CREATED, C_STAMP, EV_CREDIT, EV_DELIVER, HIST_SUB, S_ACCEPTED_PHITS, S_COUNT,
    S_HOPS_GLOBAL, S_HOPS_LOCAL, S_HOPS_SUM, S_INJECTED_PHITS, S_LAT_MAX, S_LAT_SUM, S_NET_MAX, S_NET_SUM,
    TS_DELIVERED_PHITS, TS_IN_NETWORK, TS_LAT_COUNT, TS_LAT_SUM, TS_QUEUED,
)

OK, GROW, DEADLOCK, DRAINED = 0, 1, 2, 3


@jit
def hist_bin(v):
    """Log-linear bin: exact below 2*HIST_SUB, then HIST_SUB bins per octave."""
    if v < 2 * HIST_SUB:
        return v
    e = 0
    while (v >> e) >= 2 * HIST_SUB:
        e += 1
    return 2 * HIST_SUB + (e - 1) * HIST_SUB + ((v >> e) - HIST_SUB)


@jit
def deliver(topo, prm, st, h, t):
    """The tail of packet h reached its destination node at cycle t."""
    size = st.pk_size[h]
    birth = st.pk_birth[h]
    if prm.w0 <= t < prm.w1:
        st.sc[S_ACCEPTED_PHITS] += size
    if prm.w0 <= birth < prm.w1:
        lat = t - birth
        net = t - st.pk_inject[h]
        st.sc[S_COUNT] += 1
        st.sc[S_LAT_SUM] += lat
        st.sc[S_NET_SUM] += net
        st.sc[S_LAT_MAX] = max(st.sc[S_LAT_MAX], lat)
        st.sc[S_NET_MAX] = max(st.sc[S_NET_MAX], net)
        st.sc[S_HOPS_SUM] += st.pk_hops[h]
        st.sc[S_HOPS_GLOBAL] += st.pk_ghops[h]
        st.sc[S_HOPS_LOCAL] += st.pk_hops[h] - st.pk_ghops[h]
        st.lat_hist[hist_bin(lat)] += 1
        st.net_hist[hist_bin(net)] += 1
        st.ctr[C_MEAS_DELIVERED] += 1
    if prm.ts_interval > 0:
        row = t // prm.ts_interval
        st.ts[row, TS_DELIVERED_PHITS] += size
        st.ts[row, TS_LAT_SUM] += t - birth
        st.ts[row, TS_LAT_COUNT] += 1
    st.ctr[C_DELIVERED] += 1
    free_packet(st, h)


@jit
def fire_events(topo, prm, st, t):
    slot = t & prm.wheel_mask
    e = st.wheel[slot]
    st.wheel[slot] = -1
    while e >= 0:
        nxt = st.ev_next[e]
        if st.ev_kind[e] == EV_CREDIT:
            vc_reserve(st, prm, st.ev_target[e], -st.ev_amount[e], t)
        else:
            deliver(topo, prm, st, st.ev_target[e], t)
            st.ctr[C_LAST_PROGRESS] = t
        st.ev_next[e] = st.ctr[C_EV_FREE_HEAD]
        st.ctr[C_EV_FREE_HEAD] = e
        st.ctr[C_EV_FREE_COUNT] += 1
        e = nxt


@jit
def pick_vc(st, prm, port, cls, size):
    """Downstream VC of class `cls` at input port `port` with the most room, if the whole packet fits; else -1."""
    base = port * prm.vcs + cls * prm.vcs_per_class
    best = -1
    room = size - 1
    for v in range(base, base + prm.vcs_per_class):
        if st.vc_free[v] > room:
            best = v
            room = st.vc_free[v]
    return best


@jit
def inject(topo, prm, st, t):
    """Nodes send the head of their source queue into any injection VC with room for the whole packet."""
    i = 0
    while i < st.ctr[C_N_ACTIVE_NODES]:
        n = st.node_act[i]
        i += 1
        if st.node_busy[n] > t:
            continue
        h = st.src_head[n]
        size = st.pk_size[h]
        port = topo.node_port[n]
        v = -1
        room = size - 1
        for c in range(port * prm.vcs, (port + 1) * prm.vcs):
            if st.vc_free[c] > room:
                v = c
                room = st.vc_free[c]
        if v < 0:
            continue
        if st.src_head[n] == st.src_tail[n]:
            i -= 1  # pop_source moves the last active node into this slot
        pop_source(st, n)
        vc_reserve(st, prm, v, size, t)
        st.node_busy[n] = t + size
        st.pk_inject[h] = t
        st.pk_arrive[h] = t + topo.port_latency[port]
        st.pk_ready[h] = st.pk_arrive[h] + prm.delay
        push_vc(st, v, h)
        st.ctr[C_INJECTED] += 1
        st.ctr[C_LAST_PROGRESS] = t
        if prm.w0 <= t < prm.w1:
            st.sc[S_INJECTED_PHITS] += size


@jit
def request_round(topo, rt, prm, st, t, stamp):
    """One allocator iteration: input arbiters, then output arbiters (both round-robin). Returns matches."""
    V = prm.vcs
    n_in = 0
    for i in range(st.ctr[C_N_ACTIVE]):
        vc = st.act_list[i]
        port = vc // V
        if st.in_busy[port] > t or st.in_match[port] == t:
            continue
        h = st.vc_head[vc]
        if st.pk_ready[h] > t:
            continue
        if st.pk_out[h] < 0:
            route_head(topo, rt, prm, st, topo.port_router[port], h)
        o = st.pk_out[h]
        if st.out_match[o] == t or st.out_busy[o] > t or st.link_busy[o] > t + prm.max_packet:
            continue
        dvc = -1
        if topo.port_class[o] != 0:
            dvc = pick_vc(st, prm, topo.port_peer_port[o], st.pk_cls[h], st.pk_size[h])
            if dvc < 0:
                continue
        key = (vc - port * V - st.rr_vc[port]) % V
        if st.in_stamp[port] != stamp:
            st.in_stamp[port] = stamp
            st.touched_in[n_in] = port
            n_in += 1
        elif key >= st.in_key[port]:
            continue
        st.in_pick[port] = vc
        st.in_key[port] = key
        st.in_dvc[port] = dvc
    n_out = 0
    for j in range(n_in):
        port = st.touched_in[j]
        o = st.pk_out[st.vc_head[st.in_pick[port]]]
        r = topo.port_router[port]
        first = topo.router_port_start[r]
        radix = topo.router_port_start[r + 1] - first
        key = (port - first - st.rr_in[o]) % radix
        if st.out_stamp[o] != stamp:
            st.out_stamp[o] = stamp
            st.touched_out[n_out] = o
            n_out += 1
        elif key >= st.out_key[o]:
            continue
        st.out_pick[o] = port
        st.out_key[o] = key
    for j in range(n_out):
        o = st.touched_out[j]
        port = st.out_pick[o]
        st.in_match[port] = t
        st.out_match[o] = t
    return n_out


@jit
def allocate(topo, rt, prm, st, t):
    """Separable input-first allocation with `iters` iterations; fills st.grants, returns their count."""
    n = 0
    for it in range(prm.iters):
        st.ctr[C_STAMP] += 1
        m = request_round(topo, rt, prm, st, t, st.ctr[C_STAMP])
        for j in range(m):
            st.grants[n + j] = st.out_pick[st.touched_out[j]]
        n += m
        if m == 0:
            break
    return n


@jit
def traverse(topo, prm, st, t, n_grants):
    V = prm.vcs
    for j in range(n_grants):
        port = st.grants[j]
        vc = st.in_pick[port]
        h = pop_vc(st, vc)
        o = st.pk_out[h]
        size = np.int64(st.pk_size[h])
        done = max(t + np.int64(np.ceil(size / prm.speedup)), st.pk_arrive[h] + size)
        st.in_busy[port] = done
        st.out_busy[o] = done
        start = max(t, st.link_busy[o])
        st.link_busy[o] = start + size
        schedule(st, prm, EV_CREDIT, vc, size, done - 1 + prm.credit_delay + topo.port_latency[port])
        if topo.port_class[o] == 0:
            schedule(st, prm, EV_DELIVER, h, 0, start + topo.port_latency[o] + size - 1)
        else:
            dvc = st.in_dvc[port]
            vc_reserve(st, prm, dvc, size, t)
            st.pk_arrive[h] = start + topo.port_latency[o]
            st.pk_ready[h] = st.pk_arrive[h] + prm.delay
            st.pk_hops[h] += 1
            if topo.port_class[o] == 2:
                st.pk_ghops[h] += 1
            push_vc(st, dvc, h)
        st.pk_out[h] = -1
        r = topo.port_router[port]
        first = topo.router_port_start[r]
        st.rr_vc[port] = (vc - port * V + 1) % V
        st.rr_in[o] = (port - first + 1) % (topo.router_port_start[r + 1] - first)
        if prm.w0 <= t < prm.w1:
            st.port_phits[o] += size
    if n_grants > 0:
        st.ctr[C_LAST_PROGRESS] = t


@jit
def record_timeseries(prm, st, t):
    row = t // prm.ts_interval
    st.ts[row, TS_IN_NETWORK] = st.ctr[C_CREATED] - st.ctr[C_DELIVERED] - st.ctr[C_QUEUED]
    st.ts[row, TS_QUEUED] = st.ctr[C_QUEUED]


@jit
def step(topo, rt, prm, tr, st, t):
    fire_events(topo, prm, st, t)
    generate_open_loop(tr, st, prm, t)
    inject(topo, prm, st, t)
    traverse(topo, prm, st, t, allocate(topo, rt, prm, st, t))


@jit
def pools_low(st):
    """Bit 1: fewer free packets than nodes (each may create one this cycle); bit 2: fewer free events than two
    per possible grant (a credit and a delivery)."""
    live = st.ctr[C_CREATED] - st.ctr[C_DELIVERED]
    low = 0
    if st.ctr[C_FREE_COUNT] < len(st.node_busy):
        low |= 1
    if st.ctr[C_EV_FREE_COUNT] < 2 * min(len(st.in_busy), live + len(st.node_busy)) + 16:
        low |= 2
    return low


@jit
def run_chunk(topo, rt, prm, tr, st, t0, t1, stop_when_drained):
    """Advance cycles t0..t1-1. Returns (status, next cycle). Stops early to grow pools, on a deadlock, or once
    the window has ended and every measured packet is delivered (when stop_when_drained)."""
    for t in range(t0, t1):
        if pools_low(st) != 0:
            return GROW, t
        step(topo, rt, prm, tr, st, t)
        if prm.ts_interval > 0 and (t + 1) % prm.ts_interval == 0:
            record_timeseries(prm, st, t)
        live = st.ctr[C_CREATED] - st.ctr[C_DELIVERED]
        if live > 0 and t - st.ctr[C_LAST_PROGRESS] > prm.watchdog:
            return DEADLOCK, t + 1
        if stop_when_drained and t + 1 >= prm.w1 and st.ctr[C_MEAS_CREATED] == st.ctr[C_MEAS_DELIVERED]:
            return DRAINED, t + 1
    return OK, t1
