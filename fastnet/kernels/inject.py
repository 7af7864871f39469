"""The inject stage: each node whose injection link is free sends the oldest packet of its source queue into an
injection VC with room for the whole packet (virtual cut-through); with a flit crossbar, into one with room for a
phit, the rest following as credits come back (send_from_node, called by the engine's credit events)."""

from __future__ import annotations

from ..build.network import NODE, NODE_PORT
from ..registry import X_FLIT
from ._jit import jit_callee, jit_inline, jit_stage
from .pool import is_measured, pop_source, push_vc, schedule, vc_reserve
from .ready import wake
from .state import (
    C_EPOCH, C_INJECTED, C_LAST_PROGRESS, C_N_ACTIVE_NODES, E_READY, ND_BUSY, ND_HEAD, ND_LAST_VC, ND_TAIL, NEVER,
    PK_ARRIVE, PK_INJECT, PK_READY, PK_SIZE, PK_SRC, STREAMING, S_INJECTED_PHITS, S_MEAS_INJECTED_PHITS, VC_CAP,
    VC_FREE, VS_NODE_END, VS_NODE_PKT, VS_NODE_SENT, port_of,
)
from .timing import serialise, streaming, tail_arrives


@jit_callee
def send_from_node(port, prm, st, v, t):
    """Flit crossbar: credits came back to injection VC v, whose node still sends a packet in: it sends as many
    more phits as they allow, one link cycle each; once its tail has gone, the node may start its next packet."""
    pk, vs = st.pk, st.vs
    h = vs[v, VS_NODE_PKT]
    p = port_of(prm, v)
    size = pk[h, PK_SIZE]
    more = min(size - vs[v, VS_NODE_SENT], st.vc[v, VC_FREE])
    if more <= 0:
        return
    vc_reserve(st.vc, st.pt, st.vc_area, st.vc_since, prm, v, more, t)
    vs[v, VS_NODE_SENT] += more
    vs[v, VS_NODE_END] = max(vs[v, VS_NODE_END], t) + serialise(port, p, more)
    wake(st, v, t - st.ctr[C_EPOCH])  # (chunk_ready follows the node's stream, as wake_port's)
    if vs[v, VS_NODE_SENT] < size:
        return
    vs[v, VS_NODE_PKT] = -1
    st.nd[pk[h, PK_SRC], ND_BUSY] = vs[v, VS_NODE_END]
    tail_arrives(pk, vs, v, h, vs[v, VS_NODE_END] + prm.inject_latency, serialise(port, p, size))


@jit_inline
def injection_vc(vc, nd, prm, n, first, count, need):
    """The injection VC among first..first+count-1 that node n starts a packet into, if it has `need` free phits
    (the whole packet: virtual cut-through; one, with a flit crossbar); else -1: the one with the most free
    phits, or (round robin) the first after the node's last one, as BookSim2's sources take turns. With
    wait_tail_credit, only an empty VC (the tail of the node's last packet in it has had its credit back)."""
    if prm.vc_round_robin:
        last = nd[n, ND_LAST_VC] - first
        for i in range(1, count + 1):
            v = first + (last + i) % count if 0 <= last < count else first + i - 1
            if vc[v, VC_FREE] >= need and not (prm.wait_tail_credit and vc[v, VC_FREE] < vc[v, VC_CAP]):
                nd[n, ND_LAST_VC] = v
                return v
        return -1
    best = -1
    room = need - 1
    for v in range(first, first + count):
        if vc[v, VC_FREE] > room and not (prm.wait_tail_credit and vc[v, VC_FREE] < vc[v, VC_CAP]):
            best = v
            room = vc[v, VC_FREE]
    return best


@jit_stage
def inject(topo, rt, prm, st, t):
    """Nodes send the head of their source queue into an injection VC with room for the whole packet; with a flit
    crossbar, into one with room for a phit, the rest following as credits come back (send_from_node). Returns
    the first cycle after t at which one of them may send again by its link (NEVER: none); one that found no VC
    with room waits for a credit (fire_events says when)."""
    pk, nd, vc, ctr, node_act = st.pk, st.nd, st.vc, st.ctr, st.node_act
    soon = NEVER
    i = 0
    while i < ctr[C_N_ACTIVE_NODES]:
        n = node_act[i]
        i += 1
        if nd[n, ND_BUSY] > t:
            soon = min(soon, nd[n, ND_BUSY])
            continue
        if st.blocked[n]:  # as when it was last looked at: only a credit changes that
            continue
        h = nd[n, ND_HEAD]
        size = pk[h, PK_SIZE]
        port = topo.node[n, NODE_PORT]
        v = injection_vc(vc, nd, prm, n, port * prm.vcs, rt.vcr[NODE, 0, 1], 1 if prm.crossbar == X_FLIT else size)
        if v < 0:
            st.blocked[n] = 1
            continue
        more = nd[n, ND_HEAD] != nd[n, ND_TAIL]
        if not more:
            i -= 1  # the queue empties: the last active node moves into this slot
        pop_source(pk, nd, node_act, ctr, n)
        sent = min(size, vc[v, VC_FREE])  # (all of it, but with a flit crossbar)
        vc_reserve(vc, st.pt, st.vc_area, st.vc_since, prm, v, sent, t)
        end = t + serialise(topo.port, port, sent)
        nd[n, ND_BUSY] = end if sent == size else STREAMING
        if more:  # (STREAMING: its credits come back first)
            soon = min(soon, nd[n, ND_BUSY])
        if sent < size:  # the rest follows as credits come back
            st.vs[v, VS_NODE_PKT], st.vs[v, VS_NODE_SENT], st.vs[v, VS_NODE_END] = h, sent, end
        pk[h, PK_INJECT] = t
        pk[h, PK_ARRIVE] = t + prm.inject_latency
        pk[h, PK_READY] = pk[h, PK_ARRIVE] + prm.delay
        if push_vc(pk, vc, v, h) and not streaming(prm, st.vs, v):
            schedule(st.ev, st.wheel, ctr, prm.wheel_mask, E_READY, v, pk[h, PK_READY], pk[h, PK_READY])
        ctr[C_INJECTED] += 1
        ctr[C_LAST_PROGRESS] = t
        if prm.w0 <= t < prm.w1:
            st.sc[S_INJECTED_PHITS] += size
            if is_measured(pk, prm, h):
                st.sc[S_MEAS_INJECTED_PHITS] += size
    return soon
