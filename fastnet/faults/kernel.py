"""What a failure does to the packets and credits of a running network (docs/faults.md), applied between two
cycles by plan.FaultPlan.apply: the failed ports have already lost their peer router (Topology.port
P_PEER_ROUTER = -1), which is all routing reads.

- A failed router's input buffers are emptied: its packets are dropped (cause "router").
- A failed link's packets are dropped (cause "link"): those whose tail has not reached the input buffer at the
  far end. They are the last ones in their VC, since a link delivers in order. A packet whose tail has arrived
  stays in that buffer and is routed on from there. A packet whose head the far router has already forwarded
  (virtual cut-through) while its tail was still on the link has lost its tail: it goes on, marked (PK_LOST),
  and is dropped where it would have been delivered, as a destination discards a truncated packet.
- The phits of a dropped packet are given back to its VC at once, so the VC's credits add up to its size again
  (the credits already on their way back arrive as scheduled): failures cannot leak buffer space.
- Heads at the routers next to a failed link that were routed to it, or had allocated a VC behind it, lose
  their route and VC and route again (kernels/routing.py routes around failed ports).
- With a flit crossbar a packet streams through several routers at once (kernels/traverse.py cross_flits). A
  stream over a failed link, or out of a failed router, is cut: the packet has lost its tail, and goes on
  marked where its head is, or is dropped if it was bound for its node; the VC it has reached holds it whole from
  then on. The streams upstream of the cut that still carry it stop, and so does its node if it still sends
  it: their unsent phits are given back to their VCs, as a dropped packet's are.
"""

from __future__ import annotations

import numpy as np

from ..build.network import P_ROUTER
from ..kernels._jit import jit_alloc, jit_callee
from ..kernels.events import credits_back
from ..kernels.ready import leave_ready, listed, wake
from ..kernels.timing import phits_crossed, phits_sent_in, serialise, streaming, tail_arrives
from ..kernels.vc_alloc import free_vc
from ..kernels.pool import drop_packet, release_event, vc_reserve
from ..kernels.state import (
    C_DROP_LINK, C_DROP_ROUTER, C_EPOCH, E_READY, EV_KIND, EV_NEXT, EV_TARGET, PK_ARRIVE, PK_DVC,
    PK_LOST, PK_NEXT, PK_OUT, PK_READY, PK_SIZE, PT_IN_PKT, PT_IN_TAIL, PT_WAIT, VC_HEAD, VC_OWNER, VC_TAIL,
    VC_WAKE, VS_DVC, VS_FEED, VS_NODE_PKT, VS_NODE_SENT, VS_OUT, VS_PKT, VS_SENT, ND_BUSY, PK_SRC, port_of,
)
from ..registry import X_FLIT


@jit_callee
def _stop_waiting(st, v, cancel):
    """VC v no longer waits for allocation: it leaves the ready list, or its pending E_READY is cancelled."""
    if listed(st, v):
        leave_ready(st, v)
    else:
        cancel[v] = True


@jit_callee
def _drop_tail(port, prm, st, v, t, on_link_only, cause, cancel):
    """Drop the packets of VC v from the first one still on the link (or from its head), to its tail."""
    pk, vc = st.pk, st.vc
    p = port_of(prm, v)
    prev, h = -1, vc[v, VC_HEAD]
    while h >= 0 and on_link_only and pk[h, PK_ARRIVE] + serialise(port, p, pk[h, PK_SIZE]) <= t:
        prev, h = h, pk[h, PK_NEXT]
    if h < 0:
        return
    if prm.crossbar == X_FLIT and st.vs[v, VS_NODE_PKT] >= 0:  # (its newest packet: one of those dropped)
        _end_node_feed(prm, st, v, t)
    if prev < 0 and streaming(prm, st.vs, v):  # the head goes; v still streams the packet before it out
        vc[v, VC_HEAD] = -1
    elif prev < 0:  # the head goes: v no longer waits for allocation
        vc[v, VC_HEAD] = -1
        _stop_waiting(st, v, cancel)
        vc[v, VC_WAKE] = t - st.ctr[C_EPOCH] - 1
    else:
        pk[prev, PK_NEXT] = -1
    vc[v, VC_TAIL] = prev
    while h >= 0:
        nxt = pk[h, PK_NEXT]
        size = pk[h, PK_SIZE]
        credits_back(st, prm, v, size, t)
        if pk[h, PK_OUT] >= 0:
            st.pt[pk[h, PK_OUT], PT_WAIT] -= size
        if pk[h, PK_DVC] >= 0:
            vc[pk[h, PK_DVC], VC_OWNER] = -1
        pk[h, PK_OUT] = -1
        pk[h, PK_DVC] = -1
        drop_packet(pk, st.ctr, prm, h, cause)
        h = nxt


@jit_callee
def _end_node_feed(prm, st, v, t):
    """Injection VC v's node stops sending its packet in (the packet is dropped or cut): the phits it has not sent
    are reserved as if they had come, for the drop to give the packet's phits back whole; the node may go on."""
    h = st.vs[v, VS_NODE_PKT]
    vc_reserve(st.vc, st.pt, st.vc_area, st.vc_since, prm, v, st.pk[h, PK_SIZE] - st.vs[v, VS_NODE_SENT], t)
    st.vs[v, VS_NODE_PKT] = -1
    st.nd[st.pk[h, PK_SRC], ND_BUSY] = t


@jit_callee
def _stop_stream(port, prm, st, f, t, cancel):
    """VC f stops streaming its packet, and so does every VC upstream still streaming it in, and its node if it
    still sends it: the phits each VC holds of it are given back at once, and the VC it streamed into may be
    allocated again."""
    vs, vc, pk = st.vs, st.vc, st.pk
    h = vs[f, VS_PKT]
    while f >= 0 and vs[f, VS_PKT] == h:
        size = pk[h, PK_SIZE]
        if vs[f, VS_NODE_PKT] == h:
            _end_node_feed(prm, st, f, t)
        held = phits_sent_in(prm, pk, vs, f, h) - phits_crossed(prm, size, vs[f, VS_SENT])  # come, not gone on
        credits_back(st, prm, f, held, t)
        up = vs[f, VS_FEED]
        vs[f, VS_PKT] = -1
        w = vs[f, VS_DVC]
        if w >= 0 and vs[w, VS_FEED] == f:
            vs[w, VS_FEED] = -1
            free_vc(vc, st.ctr, prm, w, t)
        nxt = vc[f, VC_HEAD]  # f's next packet waits for allocation as f did; none: f waits no more
        if nxt >= 0:
            pk[nxt, PK_READY] = max(pk[nxt, PK_READY], t + prm.head_delay)
        else:
            _stop_waiting(st, f, cancel)
        f = up


@jit_callee
def _cut_streams(port, prm, st, dead_port, dead_router, t, cancel):
    """Cut every stream over a failed link or out of a failed router (flit crossbar): its packet is dropped if it
    was bound for its node, else marked lost, its tail arriving now where its head is."""
    vs, pk = st.vs, st.pk
    for f in range(len(vs)):
        if vs[f, VS_PKT] < 0:
            continue
        o = vs[f, VS_OUT]
        in_router = dead_router[port[port_of(prm, f), P_ROUTER]]
        if not (dead_port[o] or in_router):
            continue
        h, w = vs[f, VS_PKT], vs[f, VS_DVC]
        missing = pk[h, PK_SIZE] - phits_crossed(prm, pk[h, PK_SIZE], vs[f, VS_SENT])  # phits w has no credit for
        _stop_stream(port, prm, st, f, t, cancel)
        if w < 0:
            drop_packet(pk, st.ctr, prm, h, C_DROP_ROUTER if in_router else C_DROP_LINK)
            continue
        vc_reserve(st.vc, st.pt, st.vc_area, st.vc_since, prm, w, missing, t)  # (over its size, for a while,
        pk[h, PK_LOST] = C_DROP_ROUTER if in_router else C_DROP_LINK  # if it had too few to take them all in)
        tail_arrives(pk, vs, w, h, t, serialise(port, port_of(prm, w), pk[h, PK_SIZE]))


@jit_alloc
def fail(topo, prm, st, down, routers, t):
    """Apply failures at cycle t: `routers` just failed (their packets dropped), and the ports in `down` (both
    ends of each failed link, a failed router's among them) lost their link."""
    ps, port = topo.router_port_start, topo.port
    V = prm.vcs
    pk, vc = st.pk, st.vc
    cancel = np.zeros(len(vc), dtype=np.bool_)
    for v in range(len(vc)):  # every head asleep for credits is looked at again: its downstream VC may be gone
        wake(st, v, t - st.ctr[C_EPOCH])
    st.blocked[:] = 0  # and every node looks for an injection VC again
    if prm.crossbar == X_FLIT:
        dead_port = np.zeros(len(port), dtype=np.bool_)
        dead_port[down] = True
        dead_router = np.zeros(len(ps) - 1, dtype=np.bool_)
        dead_router[routers] = True
        _cut_streams(port, prm, st, dead_port, dead_router, t, cancel)
    for o in down:  # a packet forwarded from o while its tail still crosses the link: cut
        if st.pt[o, PT_IN_PKT] >= 0 and st.pt[o, PT_IN_TAIL] > t:  # (still in flight: see on_link)
            pk[st.pt[o, PT_IN_PKT], PK_LOST] = C_DROP_LINK
    for r in routers:
        for v in range(ps[r] * V, ps[r + 1] * V):
            _drop_tail(port, prm, st, v, t, False, C_DROP_ROUTER, cancel)
    for o in down:
        for v in range(o * V, o * V + V):  # the input side of o: what the far end sent over the link
            _drop_tail(port, prm, st, v, t, True, C_DROP_LINK, cancel)
    for o in down:  # heads routed to o, or holding a VC behind it, route again
        r = port[o, P_ROUTER]
        for v in range(ps[r] * V, ps[r + 1] * V):
            h = vc[v, VC_HEAD]
            if h < 0 or pk[h, PK_OUT] != o:
                continue
            st.pt[o, PT_WAIT] -= pk[h, PK_SIZE]
            pk[h, PK_OUT] = -1
            dvc = pk[h, PK_DVC]
            if dvc >= 0:
                vc[dvc, VC_OWNER] = -1
                pk[h, PK_DVC] = -1
            vc[v, VC_WAKE] = min(vc[v, VC_WAKE], t - st.ctr[C_EPOCH])
    for slot in range(len(st.wheel)):  # the E_READY of each VC whose head was dropped
        prev, e = -1, st.wheel[slot]
        while e >= 0:
            nxt = st.ev[e, EV_NEXT]
            if st.ev[e, EV_KIND] == E_READY and cancel[st.ev[e, EV_TARGET]]:
                if prev < 0:
                    st.wheel[slot] = nxt
                else:
                    st.ev[prev, EV_NEXT] = nxt
                release_event(st.ev, st.ctr, e)
            else:
                prev = e
            e = nxt


def on_link(topo, prm, st, ports, t) -> int:
    """Packets on the links into `ports` at cycle t (what `fail` drops there or cuts, counted beforehand: tests).
    A packet forwarded from input o whose tail arrives after t is still in flight: it cannot have been delivered,
    which happens once its tail has left o (PT_IN_BUSY) plus a link's latency. With a flit crossbar, so is a
    packet whose tail the router upstream still streams in."""
    n = 0
    pk, vc, vs, V = st.pk, st.vc, st.vs, prm.vcs

    def fed(v: int, h: int) -> bool:  # (flit crossbar) its tail still streams in from the router upstream
        f = int(vs[v, VS_FEED]) if prm.crossbar == X_FLIT else -1
        return f >= 0 and int(vs[f, VS_PKT]) == h

    for o in ports:
        n += int(st.pt[o, PT_IN_PKT] >= 0 and st.pt[o, PT_IN_TAIL] > t)
        for v in range(o * V, o * V + V):
            if prm.crossbar == X_FLIT and vs[v, VS_PKT] >= 0:  # streaming out while its tail may still stream in
                n += fed(v, int(vs[v, VS_PKT]))
            h = vc[v, VC_HEAD]
            while h >= 0:
                size = int(pk[h, PK_SIZE])
                n += fed(v, int(h)) or int(pk[h, PK_ARRIVE]) + int(serialise(topo.port, int(o), size)) > t
                h = pk[h, PK_NEXT]
    return n
