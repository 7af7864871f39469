"""VC allocation: the downstream VC a head packet takes, greedily as it asks for the switch (allocate_vc), or by
BookSim2's allocators over all of a router's input and output VCs at once (allocate_vcs); and a VC given up again
(release_vc, free_vc)."""

from __future__ import annotations

import numpy as np

from ..build.network import NODE, P_CLASS, P_PEER_PORT, P_ROUTER
from ..registry import VA_SEPARABLE, X_FLIT
from ._jit import jit_inline
from .ready import is_awake
from .routing import route_head
from .state import (
    C_EPOCH, C_STAMP, DRAINING, PK_CLS, PK_DVC, PK_OUT, PK_SIZE, VC_ALLOC, VC_CAP, VC_FREE, VC_HEAD,
    VC_OWNER, VC_WAKE, VG_ASKED, VG_KEY, VG_PICK, VG_PTR, VG_STAMP, VS_FEED, VS_PKT, VS_SENT, port_of,
)
from .timing import crossing, streaming


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
def allocate_vcs(topo, rt, prm, st, t, heads, routing, scan):
    """VC allocation by BookSim2's allocators over all of a router's input and output VCs at once (router.vc_choice
    "islip", src/allocators/islip.cpp, with router.alloc_iters iterations as BookSim2's alloc_iters; or
    "separable_input_first", separable_input_first.cpp), before switch allocation: fastnet's router delay counts
    both stages, so a head may ask for the switch in the cycle its VC is granted. A grant not accepted, and a
    request not granted, are lost for the cycle, as in BookSim2. `heads`: the awake heads in st.act (walk_order)."""
    separable = prm.vc_alloc == VA_SEPARABLE
    for it in range(1 if separable else prm.iters):  # BookSim2's separable allocator has no iterations
        st.ctr[C_STAMP] += 1
        n = ask_vcs(topo, rt, prm, st, t, heads, routing, scan, st.ctr[C_STAMP], separable, it == 0)
        accept_vcs(topo, rt, prm, st, st.ctr[C_STAMP], n, separable, it == 0)


@jit_inline
def ask_vcs(topo, rt, prm, st, t, heads, routing, scan, stamp, separable, first_iteration):
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
    for i in range(heads):  # the awake heads (one asleep holds its downstream VC), in the ready list's order
        v = act[i]
        if not is_awake(st, v):  # parked since the order was made (an earlier iteration found no VC to ask for)
            continue
        if streaming(prm, st.vs, v):
            continue  # its head waits for the packet before it to have crossed
        h = vc[v, VC_HEAD]
        if vc[v, VC_WAKE] > now or pk[h, PK_DVC] >= 0:
            continue
        p = port_of(prm, v)
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
        p = port_of(prm, v)
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
def rr_key(x, first, pointer, n):
    """Distance of entry x of a round-robin arbiter over entries first..first+n-1 from its pointer (0..n-1)."""
    d = x - first - pointer
    return d + n if d < 0 else d


@jit_inline
def rr_next(i, n):
    """The round-robin place after place i of 0..n-1, (i + 1) mod n without a division."""
    return i + 1 if i + 1 < n else 0


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
