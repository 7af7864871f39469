"""The traverse stage: commit this cycle's grants. A packet crosses the crossbar whole (cross_packet), or with a flit
crossbar one cycle of crossbar time per grant while its head goes on (cross_flits); it takes its downstream VC's
credits, holds the input, output and link for its time (timing.py), and schedules the credit return upstream and
its ready time downstream or its delivery."""

from __future__ import annotations

from ..build.network import NODE, P_CLASS, P_LATENCY, P_ROUTER
from ..registry import X_FLIT
from ._jit import PREFETCH, jit_inline, jit_stage, prefetch
from .pool import pop_vc, push_vc, schedule, vc_reserve
from .ready import next_head, pop_head, wake_port
from .routing import took_hop
from .state import (
    C_EPOCH, C_LAST_PROGRESS, C_N_ASLEEP, C_PHIT_HOPS, E_CREDIT, E_DELIVER, E_READY, PK_ARRIVE, PK_CLS, PK_DVC,
    PK_HOPS, PK_OUT, PK_READY, PK_SIZE, PT_IN_BUSY, PT_IN_PICK, PT_IN_PKT, PT_IN_TAIL, PT_LINK_BUSY, PT_OUT_BUSY,
    PT_PHITS, PT_RR_IN, PT_RR_OUT, PT_RR_VC, PT_WAIT, VC_HEAD, VS_DVC, VS_END, VS_FEED, VS_OUT, VS_PKT, VS_SENT,
    VS_TAIL, port_of,
)
from .timing import crossing, head_route, phits_crossed, serialise, streaming, tail_arrives, xbar_input, xbar_local
from .vc_alloc import release_vc, rr_next


@jit_stage
def traverse(topo, prm, st, t, n_grants, crossbar):
    """Commit this cycle's grants: a whole packet's crossing, or (flit crossbar) one cycle of it. `crossbar`
    (= prm.crossbar) is a constant of the loop (cycle_loop)."""
    pk, vc, pt, ctr = st.pk, st.vc, st.pt, st.ctr
    ps, port = topo.router_port_start, topo.port
    V = prm.vcs
    for j in range(n_grants):
        prefetch(pt, st.grants[min(j + PREFETCH, n_grants - 1)])
        ahead = pt[st.grants[min(j + PREFETCH // 2, n_grants - 1)], PT_IN_PICK]
        prefetch(vc, ahead)
        prefetch(pk, vc[ahead, VC_HEAD])
        x = st.grants[j]  # a crossbar input (xbar_input)
        v = pt[x, PT_IN_PICK]
        p = port_of(prm, v)
        o = head_route(pk, vc, st.vs, prm, v)[0]
        if crossbar == X_FLIT:
            phits = cross_flits(port, prm, st, t, p, v)
        else:
            phits = cross_packet(port, prm, st, t, p, v, o)
        if ctr[C_N_ASLEEP] > 0:
            wake_port(port, prm, st, p, o, t - ctr[C_EPOCH])
        r = port[p, P_ROUTER]
        S = prm.input_speedup
        # the next of the input's VCs (v mod S apart: BookSim2's), of the output's inputs, of the input's outputs
        pt[x, PT_RR_VC] = rr_next(v - p * V, V) if S == 1 else (v - p * V + S) % V
        pt[o, PT_RR_IN] = rr_next(xbar_local(ps, prm, len(port), r, x), (ps[r + 1] - ps[r]) * S)
        pt[x, PT_RR_OUT] = rr_next(o - ps[r], ps[r + 1] - ps[r])
        ctr[C_PHIT_HOPS] += phits
        if prm.w0 <= t < prm.w1:
            pt[o, PT_PHITS] += phits
    if n_grants > 0:
        ctr[C_LAST_PROGRESS] = t


@jit_inline
def cross_packet(port, prm, st, t, p, v, o):
    """Packet crossbar: VC v's head crosses to output o whole, holding the input and the output until its tail
    has crossed and the link until the tail has left. Returns the phits moved."""
    pk, pt = st.pk, st.pt
    h = pop_head(prm, st, v, t)[0]
    size = pk[h, PK_SIZE]
    send = serialise(port, o, size)
    tail = pk[h, PK_ARRIVE] + serialise(port, p, size)  # its tail's arrival here
    done = max(t + crossing(prm, size), tail)  # its tail has crossed
    own_link = not (prm.multi_eject and port[o, P_CLASS] == NODE)
    start = max(t, pt[o, PT_LINK_BUSY]) if own_link else t
    end = max(start + send, done)  # the tail has left (not before it arrived from a slower link)
    pt[xbar_input(prm, len(port), v), PT_IN_BUSY] = done
    pt[p, PT_IN_PKT] = h
    pt[p, PT_IN_TAIL] = tail
    if own_link:
        pt[o, PT_OUT_BUSY] = done
        pt[o, PT_LINK_BUSY] = end
    schedule(st.ev, st.wheel, st.ctr, prm.wheel_mask, E_CREDIT, v, size,
             done - 1 + prm.credit_delay + port[p, P_LATENCY])
    dvc = pk[h, PK_DVC]
    pk[h, PK_DVC] = -1
    if dvc < 0:
        schedule(st.ev, st.wheel, st.ctr, prm.wheel_mask, E_DELIVER, h, 0, end + port[o, P_LATENCY] - 1)
    else:
        vc_reserve(st.vc, pt, st.vc_area, st.vc_since, prm, dvc, size, t)
        release_vc(st.vc, st.ctr, prm, dvc, t + send)
        move_on(port, prm, st, t, h, o, dvc, end - send + port[o, P_LATENCY])
    pt[o, PT_WAIT] -= size
    pk[h, PK_OUT] = -1
    return size


@jit_stage
def cross_flits(port, prm, st, t, p, v):
    """Flit crossbar: VC v has one cycle of crossbar time, as each flit wins BookSim2's switch allocator on its
    own; the phits it moves leave on the output link behind what is queued there. In its head's cycle the packet
    leaves v's queue and moves on to the next router (its head is on the way), while v streams the rest behind
    it; v's next packet waits for the tail. Returns the phits moved."""
    pk, vc, pt, vs = st.pk, st.vc, st.pt, st.vs
    if vs[v, VS_PKT] < 0:  # the head's cycle
        h = pop_vc(pk, vc, v)
        vs[v, VS_TAIL] = pk[h, PK_ARRIVE] + serialise(port, p, pk[h, PK_SIZE])  # (if fed, set once it is not)
        vs[v, VS_PKT], vs[v, VS_OUT], vs[v, VS_DVC], vs[v, VS_SENT] = h, pk[h, PK_OUT], pk[h, PK_DVC], 0
        pt[vs[v, VS_OUT], PT_WAIT] -= pk[h, PK_SIZE]
        pk[h, PK_OUT] = -1
        pk[h, PK_DVC] = -1
    h, o, dvc, k = vs[v, VS_PKT], vs[v, VS_OUT], vs[v, VS_DVC], vs[v, VS_SENT]
    size = pk[h, PK_SIZE]
    before, after = phits_crossed(prm, size, k), phits_crossed(prm, size, k + 1)
    own_link = not (prm.multi_eject and port[o, P_CLASS] == NODE)
    start = max(t, pt[o, PT_LINK_BUSY]) if own_link else t
    end = start + serialise(port, o, after) - serialise(port, o, before)
    pt[xbar_input(prm, len(port), v), PT_IN_BUSY] = t + 1
    if own_link:
        pt[o, PT_OUT_BUSY] = t + 1
        pt[o, PT_LINK_BUSY] = end
    vs[v, VS_SENT], vs[v, VS_END] = k + 1, end
    if dvc >= 0:  # its phits' credits, one cycle's worth at a time
        vc_reserve(vc, pt, st.vc_area, st.vc_since, prm, dvc, after - before, t)
    schedule(st.ev, st.wheel, st.ctr, prm.wheel_mask, E_CREDIT, v, after - before,
             t + prm.credit_delay + port[p, P_LATENCY])
    if k == 0 and dvc >= 0:
        vs[dvc, VS_FEED] = v
        move_on(port, prm, st, t, h, o, dvc, start + port[o, P_LATENCY])
    if after < size:
        return after - before
    vs[v, VS_PKT] = -1  # the tail has crossed
    if dvc < 0:
        schedule(st.ev, st.wheel, st.ctr, prm.wheel_mask, E_DELIVER, h, 0, end + port[o, P_LATENCY] - 1)
    else:
        release_vc(vc, st.ctr, prm, dvc, t + 1)
        vs[dvc, VS_FEED] = -1
        tail_arrives(pk, vs, dvc, h, end + port[o, P_LATENCY], serialise(port, o, size))  # at the next router
    pt[p, PT_IN_PKT] = h
    pt[p, PT_IN_TAIL] = vs[v, VS_TAIL]
    next_head(prm, st, v, t)
    return after - before


@jit_inline
def move_on(port, prm, st, t, h, o, dvc, head):
    """Packet h has gone through output o: it joins downstream VC dvc (its credits taken by the caller), whose
    router has its head at `head`."""
    pk, vc = st.pk, st.vc
    pk[h, PK_ARRIVE] = head
    pk[h, PK_READY] = max(head + prm.delay, t + 1)
    took_hop(port, prm, pk, h, o, pk[h, PK_CLS])
    pk[h, PK_HOPS] += 1
    if push_vc(pk, vc, dvc, h) and not streaming(prm, st.vs, dvc):
        schedule(st.ev, st.wheel, st.ctr, prm.wheel_mask, E_READY, dvc, pk[h, PK_READY], pk[h, PK_READY])
