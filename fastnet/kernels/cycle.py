"""The router pipeline's stages: input-queued virtual cut-through routers with credits, VCs and separable
allocation. engine/loop.py runs them once a cycle, with the traffic or workload that feeds them.

Timing of one hop (virtual cut-through): a link sends a packet of L phits in `serialise` cycles, L at the
reference rate of one phit per cycle, more on a slower link (units.py). A packet granted at cycle t crosses the
crossbar in ceil(L/S) cycles (S = speedup) but never before its own tail has arrived; its head starts on the link
when the link is free, and the link is held until the tail has gone: the link's own time, or longer when the tail
still streams in from a slower link. How the crossbar is shared (`router.crossbar`): "packet" holds the input and
the output until the tail has crossed, into an output queue of one packet, and frees the downstream VC for
another packet once the tail has left on the link; "flit" (BookSim2's router, which moves flits) makes each cycle
of crossbar time a grant of its own, and the head goes on to the next router after the first while its VC
streams the rest behind it (`cross_flits`); the output queue is bounded only by the credits of the VCs
downstream, and the downstream VC is free once the tail has crossed. The tail reaches the next router `latency`
cycles after it left, the head as if the packet had crossed at this link's rate (with a flit crossbar, `latency`
after its own first phits left), and the packet may be granted
`delay` cycles after its head arrived. A downstream VC is reserved only if all L phits fit (VCT). The L credits
return to the upstream when the tail has left the buffer, plus `credit_delay`, plus the link latency. Allocation
reads the state the previous cycle left and `traverse` commits afterwards, so the order in which routers are visited does not matter. A node has one
ejection channel shared by its router's input ports (`router.ejection = "single"`), or takes a packet from each
of them at once ("multiple", FSIN's multiple consumption).

The kernels are compiled without reference counting (`_jit.jit`), so handing the State/Topology tuples to a
stage costs nothing; stages pass plain arrays to the helpers in their loops.
"""

from __future__ import annotations

import numpy as np

from ..build.network import NODE_PORT, NODE, P_CLASS, P_LATENCY, P_PEER_PORT, P_PERIOD, P_ROUTER
from ..registry import SA_ISLIP, SA_SEPARABLE, VA_GREEDY, VA_ISLIP, VA_SEPARABLE, X_FLIT
from ._jit import jit_callee, jit_inline, jit_stage, no_implementation, prefetch, trailing_zeros
from .pool import (
    drop_packet, hist_bin, is_measured, list_add, list_remove, pop_source, pop_vc, push_vc, schedule, vc_reserve,
)
from .routing import route, took_hop
from .state import (
    C_CREATED, C_DELIVERED, C_DROP_UNROUTABLE, C_DROPPED, C_EV_FREE_COUNT, C_FREE_COUNT, C_INJECTED,
    C_LAST_PROGRESS, C_EPOCH, C_N_ASLEEP, C_MEAS_DELIVERED, C_N_ACTIVE, C_N_ACTIVE_NODES, C_PHIT_HOPS, C_QUEUED,
    C_STAMP, E_CREDIT, E_DELIVER, E_READY, ND_BUSY, ND_HEAD, ND_LAST_VC, ND_TAIL, PK_ARRIVE, PK_BIRTH, PK_CLS,
    PK_GHOPS, PK_HOPS, PK_DVC, PK_INJECT, PK_OUT, PK_READY, PK_SIZE, PK_SRC, PT_IN_BUSY, PT_IN_DVC, PT_IN_PKT,
    PT_IN_TAIL, PT_IN_KEY, PT_IN_MATCH, PT_IN_PICK, PT_IN_STAMP, PT_LINK_BUSY, PT_OUT_BUSY, PT_OUT_KEY,
    PT_OUT_MATCH, PT_OUT_PICK, PT_OUT_STAMP, PT_PHITS, PT_RR_IN, PT_RR_OUT, PT_RR_VC, PT_WAIT, S_ACCEPTED_PHITS,
    S_COUNT, S_HOPS_GLOBAL, S_HOPS_LOCAL, S_HOPS_SUM, S_INJECTED_PHITS, S_LAT_MAX, S_LAT_SUM, S_NET_MAX, S_NET_SUM,
    TS_DELIVERED_PHITS, TS_IN_NETWORK, TS_LAT_COUNT, TS_LAT_SUM, TS_QUEUED, VC_ALLOC, VC_FREE, VC_HEAD, VC_OWNER,
    VC_POS, VC_CAP, VC_WAITER, VC_WAKE, VG_ASKED, VG_KEY, VG_PICK, VG_PTR, VG_STAMP, VS_DVC, VS_END, VS_FEED,
    VS_OUT, VS_NODE_END, VS_NODE_PKT, VS_NODE_SENT, VS_PKT, VS_SENT, VS_TAIL, STREAMING, DRAINING, ASLEEP, NEVER,
)

WAIT = -2  # head_request: the head cannot ask before VC_WAKE (the allocator parks its VC until then)
DROP = -3  # head_request: no live route leads to the head's destination (faults): drop_head removes it
FULL = -4  # head_request: its downstream VC lacks room; only a credit (an event) or a grant changes that


@jit_inline
def serialise(port, p, size):
    """Cycles the link of port p takes to send `size` phits: `size` at one phit per cycle (the reference rate),
    more on a slower link (P_PERIOD: cycles per phit in 1/65536ths, units.PERIOD_ONE)."""
    return (np.int64(size) * port[p, P_PERIOD] + 65535) >> 16


@jit_inline
def crossing(prm, size):
    """Cycles of crossbar time a packet of `size` phits takes at speedup S."""
    return np.int64(np.ceil(size / prm.speedup))


@jit_inline
def phits_crossed(prm, size, k):
    """Phits of a packet of `size` phits that k cycles of flit crossbar time have moved."""
    return min(np.int64(size), np.int64(np.ceil(k * prm.speedup)))


@jit_inline
def room_needed(prm, size, k):
    """Free phits the downstream VC must have for cycle k of a packet's crossbar time: the whole packet (virtual
    cut-through), or with a flit crossbar the phits that cycle moves (credit by credit: BookSim2's wormhole flow
    control with VCs)."""
    if prm.crossbar == X_FLIT:
        return phits_crossed(prm, size, k + 1) - phits_crossed(prm, size, k)
    return size


@jit_inline
def streaming(prm, vs, v):
    """VC v is streaming a packet out through a flit crossbar (its first cycle of crossbar time is past)."""
    return prm.crossbar == X_FLIT and vs[v, VS_PKT] >= 0


@jit_inline
def xbar_input(prm, n_ports, v):
    """The pt row holding the input-side switch state (busy time, arbiters, round-robin pointers) of VC v's
    crossbar input: its port p, or with input_speedup S > 1 input v mod S of the port's S, row p + (v mod S) * P
    (BookSim2's expanded input p * S + v mod S)."""
    p = v // prm.vcs
    if prm.input_speedup == 1:
        return p
    return p + (v % prm.vcs % prm.input_speedup) * n_ports


@jit_inline
def xbar_local(ps, prm, n_ports, r, x):
    """Crossbar input row x's place among router r's crossbar inputs (port, then input of the port): the order of
    its output arbiters' round robin."""
    if prm.input_speedup == 1:
        return x - ps[r]
    return (x % n_ports - ps[r]) * prm.input_speedup + x // n_ports


@jit_inline
def phits_sent_in(prm, pk, vs, v, h):
    """Phits of packet h sent into VC v so far, whose credits v holds: with a flit crossbar, only those the VC
    upstream or the node has sent while it still sends h in; else (and then) all of them."""
    size = pk[h, PK_SIZE]
    if prm.crossbar != X_FLIT:
        return size
    f = vs[v, VS_FEED]
    if f >= 0 and vs[f, VS_PKT] == h:
        return phits_crossed(prm, size, vs[f, VS_SENT])
    if vs[v, VS_NODE_PKT] == h:
        return vs[v, VS_NODE_SENT]
    return size


@jit_inline
def tail_arrives(pk, vs, w, h, tail, span):
    """Flit crossbar: packet h's tail reaches VC w at `tail`, its phits `span` cycles on the link in. The stream
    out of w notes it; a packet still queued in w has its phits taken to arrive as late as the tail allows."""
    if vs[w, VS_PKT] == h:
        vs[w, VS_TAIL] = tail
    else:
        pk[h, PK_ARRIVE] = tail - span


@jit_callee
def chunk_ready(port, pk, vs, prm, v, h, k):
    """With a flit crossbar: the first cycle at which packet h in VC v may have its cycle k of crossbar time (the
    head's: its router delay over), once the last phit it moves is here; -1 if that phit has not left the
    router upstream (or its node) yet. While the upstream VC or the node still sends h in, a phit is taken to
    arrive as late as the phits sent since allow; after that, as late as the tail does."""
    size = pk[h, PK_SIZE]
    last = phits_crossed(prm, size, k + 1)
    f = vs[v, VS_FEED]
    p = v // prm.vcs
    if f >= 0 and vs[f, VS_PKT] == h:
        o = vs[f, VS_OUT]
        sent = phits_crossed(prm, size, vs[f, VS_SENT])
        if sent < last:
            return -1
        at = vs[f, VS_END] + port[o, P_LATENCY] - 1 - (serialise(port, o, sent) - serialise(port, o, last))
    elif vs[v, VS_NODE_PKT] == h:  # its node still sends it in
        sent = vs[v, VS_NODE_SENT]
        if sent < last:
            return -1
        at = vs[v, VS_NODE_END] + prm.inject_latency - 1 - (serialise(port, p, sent) - serialise(port, p, last))
    else:
        tail = vs[v, VS_TAIL] if vs[v, VS_PKT] == h else pk[h, PK_ARRIVE] + serialise(port, p, size)
        at = tail - 1 - (serialise(port, p, size) - serialise(port, p, last))
    return max(at, pk[h, PK_READY]) if k == 0 else at


@jit_inline
def head_route(pk, vc, vs, prm, v):
    """(output, downstream VC) of the packet VC v asks the switch for: its head's, or the one it is streaming."""
    if streaming(prm, vs, v):
        return vs[v, VS_OUT], vs[v, VS_DVC]
    h = vc[v, VC_HEAD]
    return pk[h, PK_OUT], pk[h, PK_DVC]


@jit_inline
def record_delivery(pk, sc, lat_hist, net_hist, ts, ctr, prm, h, t):
    """Statistics of packet h whose tail reached its destination node at cycle t."""
    size = pk[h, PK_SIZE]
    birth = pk[h, PK_BIRTH]
    measured = is_measured(pk, prm, h)
    if measured and prm.w0 <= t < prm.w1:
        sc[S_ACCEPTED_PHITS] += size
    if measured and prm.w0 <= birth < prm.w1:
        lat = t - birth
        net = t - pk[h, PK_INJECT]
        sc[S_COUNT] += 1
        sc[S_LAT_SUM] += lat
        sc[S_NET_SUM] += net
        sc[S_LAT_MAX] = max(sc[S_LAT_MAX], lat)
        sc[S_NET_MAX] = max(sc[S_NET_MAX], net)
        sc[S_HOPS_SUM] += pk[h, PK_HOPS]
        sc[S_HOPS_GLOBAL] += pk[h, PK_GHOPS]
        sc[S_HOPS_LOCAL] += pk[h, PK_HOPS] - pk[h, PK_GHOPS]
        lat_hist[hist_bin(lat)] += 1
        net_hist[hist_bin(net)] += 1
        ctr[C_MEAS_DELIVERED] += 1
    if prm.ts_interval > 0:
        row = t // prm.ts_interval
        ts[row, TS_DELIVERED_PHITS] += size
        ts[row, TS_LAT_SUM] += t - birth
        ts[row, TS_LAT_COUNT] += 1
    ctr[C_DELIVERED] += 1


@jit_inline
def credits_back(st, prm, v, amount, t):
    """`amount` phits of VC v's buffer are free again (their credits are back upstream). With wait_tail_credit a VC
    whose last packet's tail has gone in is free once it is empty: from the next cycle, when BookSim2's VC
    allocator would see it (its credit reaches the router a cycle after fastnet's: docs/booksim.md)."""
    vc = st.vc
    vc_reserve(vc, st.pt, st.vc_area, st.vc_since, prm, v, -amount, t)
    wake(vc, st.awake, st.ctr, vc[v, VC_WAITER], t - st.ctr[C_EPOCH])
    if prm.wait_tail_credit and vc[v, VC_OWNER] == DRAINING and vc[v, VC_FREE] == vc[v, VC_CAP]:
        free_vc(vc, st.ctr, prm, v, t + 1)


@jit_callee
def send_from_node(port, prm, st, v, t):
    """Flit crossbar: credits came back to injection VC v, whose node still sends a packet in: it sends as many
    more phits as they allow, one link cycle each; once its tail has gone, the node may start its next packet."""
    pk, vs = st.pk, st.vs
    h = vs[v, VS_NODE_PKT]
    p = v // prm.vcs
    size = pk[h, PK_SIZE]
    more = min(size - vs[v, VS_NODE_SENT], st.vc[v, VC_FREE])
    if more <= 0:
        return
    vc_reserve(st.vc, st.pt, st.vc_area, st.vc_since, prm, v, more, t)
    vs[v, VS_NODE_SENT] += more
    vs[v, VS_NODE_END] = max(vs[v, VS_NODE_END], t) + serialise(port, p, more)
    wake(st.vc, st.awake, st.ctr, v, t - st.ctr[C_EPOCH])  # (chunk_ready follows the node's stream, as wake_port's)
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


@jit_inline
def rr_start(vc_ptr, v, local, count):
    """Where input VC v's round-robin scan over the `count` VCs numbered local.. in vc_ptr's space starts: after
    the VC it last took, or at the first when that was at another output."""
    k0 = vc_ptr[v] - local
    return k0 if 0 <= k0 < count else 0


@jit_inline
def downstream_vcs(ps, port, vcr, prm, p, o, cls):
    """The VCs a head of input port p, class cls, may take at output o: (first, count, the first's number in
    vc_ptr's space: output port at its router x V + VC; round robin only)."""
    V = prm.vcs
    oc = port[o, P_CLASS]
    first, count = port[o, P_PEER_PORT] * V + vcr[oc, cls, 0], vcr[oc, cls, 1]
    local = (o - ps[port[p, P_ROUTER]]) * V + vcr[oc, cls, 0] if prm.vc_round_robin else 0
    return first, count, local


@jit_inline
def allocate_vc(vc, vc_ptr, prm, first, count, local, h, v, t):
    """VC allocation: give head h, in input VC v, a free VC among first..first+count-1 (no owner, reallocation
    delay over); -1 if none. The one with the most room; or (round robin) the first from v's pointer, which then
    moves past it, whatever the VCs hold: BookSim2's VC allocators take turns so (an input VC's iSLIP accept
    pointer or separable input arbiter over output VCs: a head moving to another output starts from its first
    VC). `local` numbers VC `first` in the pointer's space (output port at its router x V + VC; round robin
    only). The head holds the VC until its switch grant, as a VC held from VC allocation to tail in BookSim2."""
    best = -1
    if prm.vc_round_robin:
        k0 = rr_start(vc_ptr, v, local, count)
        for i in range(count):
            k = k0 + i if k0 + i < count else k0 + i - count
            if vc[first + k, VC_OWNER] == -1 and vc[first + k, VC_ALLOC] <= t:
                best = first + k
                vc_ptr[v] = local + k + 1
                break
    else:
        room = -1
        for w in range(first, first + count):
            if vc[w, VC_OWNER] == -1 and vc[w, VC_ALLOC] <= t and vc[w, VC_FREE] > room:
                best = w
                room = vc[w, VC_FREE]
    if best >= 0:
        vc[best, VC_OWNER] = h
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
            schedule(st.ev, st.wheel, ctr, prm.wheel_mask, E_READY, v, 0, pk[h, PK_READY])
        ctr[C_INJECTED] += 1
        ctr[C_LAST_PROGRESS] = t
        if prm.w0 <= t < prm.w1:
            st.sc[S_INJECTED_PHITS] += size
    return soon


@jit_inline
def blocked_until(pt, port, prm, p, o, own_link):
    """First cycle at which crossbar input p (a pt row: xbar_input) and output o could both be free for a head
    (the busy times only grow while it waits, since neither port can be granted before then); <= t if they are
    free now. `own_link`: output o is a link the head must wait for (every output but a node's, with multiple
    ejection); its output queue holds one packet of the largest size (with a flit crossbar, what credits allow:
    nothing to wait for). A head that holds its downstream VC keeps its route, so it is not examined again
    before then (VC_WAKE: the allocator parks it)."""
    wake = pt[p, PT_IN_BUSY]
    if own_link:
        wake = max(wake, pt[o, PT_OUT_BUSY])
        if prm.crossbar != X_FLIT:
            wake = max(wake, pt[o, PT_LINK_BUSY] - serialise(port, o, prm.max_packet))
    return wake


@jit_inline
def vc_free_at(vc, vs, pk, prm, first, count, t):
    """Earliest cycle (> t) at which one of VCs first..first+count-1, none of which allocate_vc can give now, could
    be allocated: a VC in its reallocation delay at VC_ALLOC; a VC held by another head once that head is
    granted (at t at the soonest) and its tail has left (crossed, with a flit crossbar: one cycle of crossbar time
    after another, from the first it has not had), plus the reallocation delay; a VC draining its last packet
    (wait_tail_credit) once the credits of the phits it holds can have come back (those of one cycle of
    crossbar time at a time: ceil(S) phits at most)."""
    soon = t + (1 << 28)  # the VC records count from C_EPOCH: t and the result too
    for w in range(first, first + count):
        owner = vc[w, VC_OWNER]
        if owner == DRAINING:
            at = t + (vc[w, VC_CAP] - vc[w, VC_FREE]) // np.int64(np.ceil(prm.speedup)) - 1 + prm.vc_realloc
        elif owner < 0:
            at = vc[w, VC_ALLOC]
        else:
            size = pk[owner, PK_SIZE]
            left = size
            if prm.crossbar == X_FLIT:
                f = vs[w, VS_FEED]
                left = crossing(prm, size) - (vs[f, VS_SENT] if f >= 0 and vs[f, VS_PKT] == owner else 0)
            at = t + left - 1 + prm.vc_realloc
        soon = min(soon, max(at, t + 1))
    return soon


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


@jit_callee
def drop_head(port, prm, st, v, t):
    """Remove VC v's head, which has no live route (faults), as a grant to nowhere would: the next packet becomes
    the head, the buffer's credits go back once the tail has arrived. True if v left the ready list."""
    pk, ctr = st.pk, st.ctr
    h, left = pop_head(pk, st.vc, st.act, st.awake, st.ev, st.wheel, ctr, prm, v, t)
    p = v // prm.vcs
    size = pk[h, PK_SIZE]
    done = max(t + 1, pk[h, PK_ARRIVE] + serialise(port, p, size))
    schedule(st.ev, st.wheel, ctr, prm.wheel_mask, E_CREDIT, v, size, done - 1 + prm.credit_delay + port[p, P_LATENCY])
    drop_packet(pk, ctr, prm, h, C_DROP_UNROUTABLE)
    ctr[C_LAST_PROGRESS] = t
    return left


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


PREFETCH = 8  # iterations ahead: the records a loop reads for one item are cache misses on a large network; the
# loops below ask for them this many items (and half as many for the ones found through them) in advance


@jit_inline
def prefetch_heads(act, n, vc, pk, pt, V, i):
    """Start loading what head_request reads for the ready VCs PREFETCH (VC and port record) and PREFETCH / 2
    (their head packet) places after i."""
    far = act[min(i + PREFETCH, n - 1)]
    prefetch(vc, far)
    prefetch(pt, far // V)
    prefetch(pk, vc[act[min(i + PREFETCH // 2, n - 1)], VC_HEAD])


@jit_inline
def route_head(ps, port, node, dist, ip, alg, vcr, vc, pt, prm, pk, rng, buf, buf2, p, h, routing, scan):
    """Route head packet h of input port p (again, if adaptive), keeping its output's PT_WAIT; False if failures
    left it no route."""
    before = pk[h, PK_OUT]
    route(routing, scan, ps, port, node, dist, ip, alg, vcr, vc, pt, prm, pk, rng, buf, buf2, port[p, P_ROUTER], h)
    if before >= 0:
        pt[before, PT_WAIT] -= pk[h, PK_SIZE]
    if pk[h, PK_OUT] < 0:  # only with failures (kernels/routing.py route)
        return False
    pt[pk[h, PK_OUT], PT_WAIT] += pk[h, PK_SIZE]
    return True


@jit_inline
def allocate_vcs(topo, rt, prm, st, t, routing, scan):
    """VC allocation by BookSim2's allocators over all of a router's input and output VCs at once (router.vc_choice
    "islip", src/allocators/islip.cpp, with router.alloc_iters iterations as BookSim2's alloc_iters; or
    "separable_input_first", separable_input_first.cpp), before switch allocation: fastnet's router delay counts
    both stages, so a head may ask for the switch in the cycle its VC is granted. A grant not accepted, and a
    request not granted, are lost for the cycle, as in BookSim2."""
    separable = prm.vc_alloc == VA_SEPARABLE
    for it in range(1 if separable else prm.iters):  # BookSim2's separable allocator has no iterations
        st.ctr[C_STAMP] += 1
        n = ask_vcs(topo, rt, prm, st, t, routing, scan, st.ctr[C_STAMP], separable, it == 0)
        accept_vcs(topo, rt, prm, st, st.ctr[C_STAMP], n, separable, it == 0)


@jit_inline
def ask_vcs(topo, rt, prm, st, t, routing, scan, stamp, separable, first_iteration):
    """Requests and grants: every ready head without a downstream VC asks for each free VC of its output's class
    (iSLIP), or for the first free one from its round-robin pointer (separable input-first: its input arbiter);
    each asked VC grants the asking input VC first from its own pointer, over the router's input VCs (port x V
    + VC). A head with no free VC to ask for waits off the ready list until one can be (vc_free_at). Lists the
    asking heads' VCs in st.vc_asking and returns how many."""
    pk, vc, act, vcg = st.pk, st.vc, st.act, st.vc_grant
    ps, port = topo.router_port_start, topo.port
    V = prm.vcs
    now = t - st.ctr[C_EPOCH]  # the VC records' times count from C_EPOCH
    n_asking = 0
    for i in range(st.ctr[C_N_ACTIVE]):
        v = act[i]
        if streaming(prm, st.vs, v):
            continue  # its head waits for the packet before it to have crossed
        h = vc[v, VC_HEAD]
        if vc[v, VC_WAKE] > now or pk[h, PK_DVC] >= 0:
            continue
        p = v // V
        if (pk[h, PK_OUT] < 0 or (prm.reroute and first_iteration)) and not route_head(
                ps, port, topo.node, rt.dist, rt.ip, rt.alg, rt.vcr, vc, st.pt, prm, pk, st.rng_router, st.buf,
                st.buf2, p, h, routing, scan):
            continue  # head_request drops it
        o = pk[h, PK_OUT]
        if port[o, P_CLASS] == NODE:
            continue
        first, count, local = downstream_vcs(ps, port, rt.vcr, prm, p, o, pk[h, PK_CLS])
        r = port[p, P_ROUTER]
        x, n = v - ps[r] * V, (ps[r + 1] - ps[r]) * V  # v among the router's input VCs
        asked = False
        k0 = rr_start(st.vc_ptr, v, local, count)
        for j in range(count):
            w = first + (k0 + j if k0 + j < count else k0 + j - count)
            if vc[w, VC_OWNER] == -1 and vc[w, VC_ALLOC] <= now:
                asked = True
                key = rr_key(x, 0, vcg[w, VG_PTR], n)
                if vcg[w, VG_STAMP] != stamp or key < vcg[w, VG_KEY]:
                    vcg[w, VG_STAMP], vcg[w, VG_KEY], vcg[w, VG_PICK] = stamp, key, v
                if separable:
                    vcg[v, VG_ASKED] = w
                    break
        if asked:
            st.vc_asking[n_asking] = v
            n_asking += 1
        elif not prm.reroute:  # nothing to ask for before a VC can be free: head_request parks it
            vc[v, VC_WAKE] = vc_free_at(vc, st.vs, pk, prm, first, count, now)
    return n_asking


@jit_inline
def accept_vcs(topo, rt, prm, st, stamp, n_asking, separable, first_iteration):
    """Accepts: each asking head takes the VC it asked for if that granted it (separable input-first), or the
    first granting VC from its round-robin pointer (iSLIP). Both pointers move past a match, in iSLIP's first
    iteration only."""
    pk, vc, vcg = st.pk, st.vc, st.vc_grant
    ps, port = topo.router_port_start, topo.port
    V = prm.vcs
    for j in range(n_asking):
        v = st.vc_asking[j]
        h = vc[v, VC_HEAD]
        p = v // V
        first, count, local = downstream_vcs(ps, port, rt.vcr, prm, p, pk[h, PK_OUT], pk[h, PK_CLS])
        k0 = vcg[v, VG_ASKED] - first if separable else rr_start(st.vc_ptr, v, local, count)
        for i in range(1 if separable else count):
            k = k0 + i if k0 + i < count else k0 + i - count
            w = first + k
            if vcg[w, VG_STAMP] == stamp and vcg[w, VG_PICK] == v:
                vc[w, VC_OWNER] = h
                pk[h, PK_DVC] = w
                if first_iteration:
                    r = port[p, P_ROUTER]
                    st.vc_ptr[v] = local + k + 1
                    vcg[w, VG_PTR] = (v - ps[r] * V + 1) % ((ps[r + 1] - ps[r]) * V)
                break


@jit_inline
def head_request(ps, port, node, dist, ip, alg, vcr, vc, vc_ptr, vs, pt, prm, pk, rng, buf, buf2, t, epoch, v,
                 routing, scan, crossbar):
    """The output that VC v's head asks for, if it may ask this cycle: route it (again, if adaptive) and allocate
    its downstream VC, then check that its crossbar input and output are free and unmatched and that the
    whole packet fits downstream (with a flit crossbar: that the phits of its next cycle of crossbar time are
    here; a VC streaming a packet out asks for that packet's output). Returns (output, downstream VC (-1: to
    the node), own_link), output -1 if it may not ask this cycle, FULL (and the downstream VC) if that VC lacks
    room (it may ask again once a credit comes back), WAIT if not before VC_WAKE, DROP if failures left it no route.
    Both allocators ask through it. The VC records' times count from `epoch` (C_EPOCH), as allocate_vc's and
    vc_free_at's t does."""
    V = prm.vcs
    if vc[v, VC_WAKE] > t - epoch:  # its ports are busy, or no downstream VC can be free, until then (below)
        return WAIT, -1, False
    p = v // V
    if streaming(prm, vs, v):  # the rest of a packet whose head has gone on: its route and VC are kept
        h, o, dvc, k = vs[v, VS_PKT], vs[v, VS_OUT], vs[v, VS_DVC], vs[v, VS_SENT]
    else:
        h, k = vc[v, VC_HEAD], 0
        dvc = pk[h, PK_DVC]
        if dvc < 0:  # route (again, if adaptive) and allocate a downstream VC; both are kept once a VC is held
            if prm.vc_alloc != VA_GREEDY:  # routed, and asked for a VC, by allocate_vcs this cycle
                if pk[h, PK_OUT] < 0:
                    return DROP, -1, False
            elif (pk[h, PK_OUT] < 0 or prm.reroute) and not route_head(ps, port, node, dist, ip, alg, vcr, vc, pt,
                                                                          prm, pk, rng, buf, buf2, p, h, routing,
                                                                          scan):
                return DROP, -1, False
            o = pk[h, PK_OUT]
            if port[o, P_CLASS] != NODE:
                if prm.vc_alloc != VA_GREEDY:  # no VC granted this cycle (it was parked if none was free)
                    return -1, -1, False
                first, count, local = downstream_vcs(ps, port, vcr, prm, p, o, pk[h, PK_CLS])
                dvc = allocate_vc(vc, vc_ptr, prm, first, count, local, h, v, t - epoch)
                if dvc < 0:
                    if not prm.reroute:  # its route is kept: nothing to do before a VC can be free
                        vc[v, VC_WAKE] = vc_free_at(vc, vs, pk, prm, first, count, t - epoch)
                        return WAIT, -1, False
                    return -1, -1, False
                pk[h, PK_DVC] = dvc
        o = pk[h, PK_OUT]
    own_link = dvc >= 0 or not prm.multi_eject  # dvc < 0: o is the node's ejection port
    x = xbar_input(prm, len(port), v)
    wake = blocked_until(pt, port, prm, x, o, own_link)
    if crossbar == X_FLIT:
        ready = chunk_ready(port, pk, vs, prm, v, h, k)
        if ready < 0:  # its phits have not left the router upstream yet: it asks again next cycle
            return -1, -1, False
        wake = max(wake, ready)
    if wake > t:
        if dvc >= 0 or not prm.reroute or k > 0:  # routed for good: not worth looking at again before then
            vc[v, VC_WAKE] = wake - epoch
            return WAIT, -1, False
        return -1, -1, False
    if pt[x, PT_IN_MATCH] == t or (own_link and pt[o, PT_OUT_MATCH] == t):
        return -1, -1, False
    if dvc >= 0 and vc[dvc, VC_FREE] < room_needed(prm, pk[h, PK_SIZE], k):
        return FULL, dvc, False
    return o, dvc, own_link


@jit_inline
def arbitrate(pt, x, stamp, key, pick, touched, n, c_stamp, c_key, c_pick):
    """Round-robin arbiter of port x in one allocation round (`stamp`): it keeps the request with the lowest key
    (distance from its round-robin pointer), recording it in columns c_pick and c_key. The port's first request
    of the round appends x to `touched`. Returns (ports touched so far, whether x took this request)."""
    if pt[x, c_stamp] != stamp:
        pt[x, c_stamp] = stamp
        touched[n] = x
        n += 1
    elif key >= pt[x, c_key]:
        return n, False
    pt[x, c_pick] = pick
    pt[x, c_key] = key
    return n, True


@jit_inline
def rr_key(x, first, pointer, n):
    """Distance of entry x of a round-robin arbiter over entries first..first+n-1 from its pointer (0..n-1)."""
    d = x - first - pointer
    return d + n if d < 0 else d


@jit_inline
def input_key(ps, r, pt, V, x, o, v):
    """Crossbar input x's (xbar_input) arbitration key for VC v asking for output o: outputs first from the input's
    output pointer, then VCs first from its VC pointer, as BookSim2's separable and iSLIP input arbiters order
    them (inputs that last won different outputs ask for different outputs next)."""
    return rr_key(o, ps[r], pt[x, PT_RR_OUT], ps[r + 1] - ps[r]) * V + rr_key(v % V, 0, pt[x, PT_RR_VC], V)


@jit_inline
def output_key(ps, prm, pt, n_ports, r, x, o):
    """Output o's round-robin key for crossbar input x of router r: inputs first from o's pointer over the
    router's crossbar inputs (xbar_local)."""
    return rr_key(xbar_local(ps, prm, n_ports, r, x), 0, pt[o, PT_RR_IN], (ps[r + 1] - ps[r]) * prm.input_speedup)


@jit_inline
def request_round(topo, rt, prm, st, t, stamp, n0, routing, scan, crossbar, faults):
    """One allocator iteration: round-robin input arbiters pick a VC per input port among those whose head is
    ready, routed, and has a free output with room downstream; round-robin output arbiters pick an input (with
    multiple ejection, every input asking for its node's ejection port wins it). Inputs are crossbar inputs
    (xbar_input: a port's, or with input_speedup S one of its S). Appends the granted crossbar inputs to
    st.grants from n0 on and returns how many, and whether a head that did not ask may ask next cycle with no
    event in between (any but FULL: run_chunk skips cycles only without one)."""
    pk, vc, pt, act = st.pk, st.vc, st.pt, st.act
    epoch = st.ctr[C_EPOCH]  # the VC records' times count from it (state.rebase moves it between calls)
    ps, port = topo.router_port_start, topo.port
    V, P = prm.vcs, len(port)
    n_in = 0
    lively = False  # a head that may ask next cycle without an event first
    i = 0
    while True:  # VCs whose head is ready and awake (asleep: FULL, as it was when it fell asleep)
        i = next_awake(st.awake, st.ctr, i, st.ctr[C_N_ACTIVE])
        if i == st.ctr[C_N_ACTIVE]:
            break
        v = act[i]
        prefetch_heads(act, st.ctr[C_N_ACTIVE], vc, pk, pt, V, i)
        o, dvc, own_link = head_request(ps, port, topo.node, rt.dist, rt.ip, rt.alg, rt.vcr, vc, st.vc_ptr, st.vs, pt,
                                        prm, pk, st.rng_router, st.buf, st.buf2, t, epoch, v, routing, scan, crossbar)
        if o == WAIT and park(act, st.awake, vc, st.ev, st.wheel, st.ctr, prm, v, t):
            continue  # the last ready VC moved into slot i
        if faults and o == DROP and drop_head(topo.port, prm, st, v, t):  # (only failures leave no route)
            continue
        i += 1
        if o == FULL:
            fall_asleep(vc, st.awake, st.ctr, v, dvc)
            continue
        if o < 0:
            lively = True
            continue
        x = xbar_input(prm, P, v)
        key = input_key(ps, port[v // V, P_ROUTER], pt, V, x, o, v)
        n_in, took = arbitrate(pt, x, stamp, key, v, st.touched_in, n_in, PT_IN_STAMP, PT_IN_KEY, PT_IN_PICK)
        if took:
            pt[x, PT_IN_DVC] = dvc
    n_out = 0
    n = n0
    for j in range(n_in):
        x = st.touched_in[j]
        if prm.multi_eject and pt[x, PT_IN_DVC] < 0:  # to the node: no ejection link to share
            pt[x, PT_IN_MATCH] = t
            st.grants[n] = x
            n += 1
            continue
        v = pt[x, PT_IN_PICK]
        o = head_route(pk, vc, st.vs, prm, v)[0]
        key = output_key(ps, prm, pt, P, port[v // V, P_ROUTER], x, o)
        n_out, _ = arbitrate(pt, o, stamp, key, x, st.touched_out, n_out, PT_OUT_STAMP, PT_OUT_KEY, PT_OUT_PICK)
    for j in range(n_out):
        o = st.touched_out[j]
        x = pt[o, PT_OUT_PICK]
        pt[x, PT_IN_MATCH] = t
        pt[o, PT_OUT_MATCH] = t
        st.grants[n] = x
        n += 1
    return n - n0, lively


@jit_inline
def request_round_islip(topo, rt, prm, st, t, stamp, n0, routing, scan, crossbar, faults):
    """One iSLIP iteration (BookSim2's default allocator, its src/allocators/islip.cpp): every input port asks
    for each output that one of its VCs' heads may take (for each output, the VC first from the input's VC
    round-robin pointer asks); each output grants the asking input first from its round-robin pointer; each
    input accepts the granting output first from its own accept pointer (PT_RR_OUT). With multiple ejection
    the node's port grants every input asking for it. Pointers move past each grant (traverse), in every
    iteration (iSLIP moves them in the first only). Inputs are crossbar inputs (xbar_input). Appends the granted
    crossbar inputs to st.grants from n0 on and returns how many, and whether a head that did not ask may ask
    next cycle unprompted (request_round)."""
    pk, vc, pt, act = st.pk, st.vc, st.pt, st.act
    epoch = st.ctr[C_EPOCH]  # the VC records' times count from it (state.rebase moves it between calls)
    ps, port, node = topo.router_port_start, topo.port, topo.node
    dist, ip, alg, vcr = rt.dist, rt.ip, rt.alg, rt.vcr
    rng, buf, buf2 = st.rng_router, st.buf, st.buf2
    V, P = prm.vcs, len(port)
    n_in = 0
    n_out = 0
    lively = False  # a head that may ask next cycle without an event first
    i = 0
    while True:  # requests from awake heads, and the grant phase: each output keeps the first input
        i = next_awake(st.awake, st.ctr, i, st.ctr[C_N_ACTIVE])
        if i == st.ctr[C_N_ACTIVE]:
            break
        v = act[i]
        prefetch_heads(act, st.ctr[C_N_ACTIVE], vc, pk, pt, V, i)
        o, dvc, own_link = head_request(ps, port, node, dist, ip, alg, vcr, vc, st.vc_ptr, st.vs, pt, prm, pk, rng,
                                        buf, buf2, t, epoch, v, routing, scan, crossbar)
        if o == WAIT and park(act, st.awake, vc, st.ev, st.wheel, st.ctr, prm, v, t):
            continue  # the last ready VC moved into slot i
        if faults and o == DROP and drop_head(topo.port, prm, st, v, t):  # (only failures leave no route)
            continue
        i += 1
        if o == FULL:
            fall_asleep(vc, st.awake, st.ctr, v, dvc)
            continue
        if o < 0:
            lively = True
            continue
        x = xbar_input(prm, P, v)
        r = port[v // V, P_ROUTER]
        if not own_link:  # multiple ejection: granted; the input's accept arbiter sees it directly
            n_in, took = arbitrate(pt, x, stamp, input_key(ps, r, pt, V, x, o, v), v, st.touched_in, n_in,
                                   PT_IN_STAMP, PT_IN_KEY, PT_IN_PICK)
            if took:
                pt[x, PT_IN_DVC] = dvc
            continue
        key = output_key(ps, prm, pt, P, r, x, o) * V + rr_key(v % V, 0, pt[x, PT_RR_VC], V)
        n_out, _ = arbitrate(pt, o, stamp, key, v, st.touched_out, n_out, PT_OUT_STAMP, PT_OUT_KEY, PT_OUT_PICK)
    for j in range(n_out):  # accept phase: each input keeps the first granting output
        o = st.touched_out[j]
        v = pt[o, PT_OUT_PICK]
        x = xbar_input(prm, P, v)
        r = port[v // V, P_ROUTER]
        key = rr_key(o, ps[r], pt[x, PT_RR_OUT], ps[r + 1] - ps[r]) * V
        n_in, took = arbitrate(pt, x, stamp, key, v, st.touched_in, n_in, PT_IN_STAMP, PT_IN_KEY, PT_IN_PICK)
        if took:
            pt[x, PT_IN_DVC] = head_route(pk, vc, st.vs, prm, v)[1]
    n = n0
    for j in range(n_in):
        x = st.touched_in[j]
        pt[x, PT_IN_MATCH] = t
        if pt[x, PT_IN_DVC] >= 0 or not prm.multi_eject:
            pt[head_route(pk, vc, st.vs, prm, pt[x, PT_IN_PICK])[0], PT_OUT_MATCH] = t
        st.grants[n] = x
        n += 1
    return n - n0, lively


@jit_inline
def allocate(topo, rt, prm, st, t, routing, scan, allocator, vc_alloc, crossbar, faults):
    """VC allocation by BookSim2's allocators, if `vc_alloc` (Params.vc_alloc, a constant of the cycle loop) asks
    for it, then switch allocation with `iters` iterations (separable input-first, or iSLIP: `allocator`, also a
    constant, as `crossbar` and `faults`); fills st.grants, returns their count and whether the cycle after may see a request
    with no event before it (`lively`: the first round's heads, and BookSim2's VC allocators always)."""
    lively = False
    if vc_alloc == VA_ISLIP or vc_alloc == VA_SEPARABLE:
        allocate_vcs(topo, rt, prm, st, t, routing, scan)
        lively = True
    elif vc_alloc != VA_GREEDY:
        no_implementation(vc_alloc)
        raise ValueError("no VC allocator for this code")
    n = 0
    for k in range(prm.iters):
        st.ctr[C_STAMP] += 1
        if allocator == SA_ISLIP:
            m, more = request_round_islip(topo, rt, prm, st, t, st.ctr[C_STAMP], n, routing, scan, crossbar, faults)
        elif allocator == SA_SEPARABLE:
            m, more = request_round(topo, rt, prm, st, t, st.ctr[C_STAMP], n, routing, scan, crossbar, faults)
        else:
            no_implementation(allocator)
            raise ValueError("no switch allocator for this code")
        if k == 0:
            lively |= more
        n += m
        if m == 0:
            break
    return n, lively


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
        p = v // V
        o = head_route(pk, vc, st.vs, prm, v)[0]
        if crossbar == X_FLIT:
            phits = cross_flits(port, prm, st, t, p, v)
        else:
            phits = cross_packet(port, prm, st, t, p, v, o)
        if ctr[C_N_ASLEEP] > 0:
            wake_port(port, vc, st.awake, ctr, prm, p, o, t - ctr[C_EPOCH])
        r = port[p, P_ROUTER]
        S = prm.input_speedup
        pt[x, PT_RR_VC] = (v - p * V + S) % V  # the next of the input's VCs (v mod S apart: BookSim2's)
        pt[o, PT_RR_IN] = (xbar_local(ps, prm, len(port), r, x) + 1) % ((ps[r + 1] - ps[r]) * S)
        pt[x, PT_RR_OUT] = (o - ps[r] + 1) % (ps[r + 1] - ps[r])  # the input's output pointer
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
    h = pop_head(pk, st.vc, st.act, st.awake, st.ev, st.wheel, st.ctr, prm, v, t)[0]
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
    next_head(pk, vc, st.act, st.awake, st.ev, st.wheel, st.ctr, prm, v, t)
    return after - before


@jit_inline
def release_vc(vc, ctr, prm, w, freed):
    """The tail of the packet downstream VC w was allocated to has gone in (left, with the packet crossbar): w is
    free from `freed` (free_vc), or with wait_tail_credit once the tail's credit is back (fire_events)."""
    if prm.wait_tail_credit:
        vc[w, VC_OWNER] = DRAINING
    else:
        free_vc(vc, ctr, prm, w, freed)


@jit_inline
def free_vc(vc, ctr, prm, w, freed):
    """Downstream VC w may be allocated to another packet from `freed` plus the reallocation delay."""
    vc[w, VC_OWNER] = -1
    vc[w, VC_ALLOC] = freed - ctr[C_EPOCH] - 1 + prm.vc_realloc


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
        schedule(st.ev, st.wheel, st.ctr, prm.wheel_mask, E_READY, dvc, 0, pk[h, PK_READY])


@jit_callee
def record_timeseries(prm, st, t):
    row = t // prm.ts_interval
    st.ts[row, TS_IN_NETWORK] = st.ctr[C_CREATED] - st.ctr[C_DELIVERED] - st.ctr[C_DROPPED] - st.ctr[C_QUEUED]
    st.ts[row, TS_QUEUED] = st.ctr[C_QUEUED]


@jit_inline
def pools_low(ctr, created, n_ports):
    """Bit 1: fewer free packets than one cycle may create (`created`); bit 2: fewer free events than three per
    possible grant (a credit, a delivery or a new head's ready time), one per injection and one per parked head
    (at most one per packet in flight)."""
    live = ctr[C_CREATED] - ctr[C_DELIVERED] - ctr[C_DROPPED]
    low = 0
    if ctr[C_FREE_COUNT] < created:
        low |= 1
    if ctr[C_EV_FREE_COUNT] < 3 * min(n_ports, live + created) + live + created + 16:
        low |= 2
    return low


@jit_inline
def network_idle(ctr, n_events):
    """No packet anywhere and no event pending: until a workload posts a message, every cycle is a no-op."""
    return ctr[C_CREATED] == ctr[C_DELIVERED] + ctr[C_DROPPED] and ctr[C_EV_FREE_COUNT] == n_events


@jit_inline
def next_activity(st, prm, t, limit):
    """With no head that may ask before an event after cycle t, the first cycle in t + 1..limit (the caller's
    bound: the workload's timer, a node's injection link freeing as `inject` found) at which anything can happen:
    the earliest event on the wheel (a credit, a ready head, a delivery). A node whose link was free at t and
    that still holds packets found no injection VC with room, which only a credit event gives it. Every cycle
    before that is a no-op, as a cycle of an idle network is: packets on links and heads parked until a known
    cycle need nothing per cycle. The wheel holds events due in t + 1..t + its size (kernels/pool.py schedule),
    so the first slot found taken is the earliest."""
    wheel, mask = st.wheel, prm.wheel_mask
    for u in range(t + 1, min(limit, t + mask + 1)):
        if wheel[u & mask] >= 0:
            return u
    return limit
