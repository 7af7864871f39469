"""The allocate stage: each ready head is routed (again, if adaptive), takes a downstream VC and asks for the
switch (head_request); separable input-first or iSLIP switch allocation (request_round) matches crossbar inputs
with outputs, in `router.alloc_iters` rounds, and lists the grants for traverse. A round's heads may be walked by
several threads, each the heads of a range of routers (kernels/crew.py)."""

from __future__ import annotations

import numpy as np

from ..build.network import NODE, P_CLASS, P_LATENCY, P_ROUTER
from ..registry import R_UGAL_G, SA_ISLIP, SA_SEPARABLE, VA_GREEDY, VA_ISLIP, VA_SEPARABLE, X_FLIT
from ._jit import PREFETCH, jit_callee, jit_inline, jit_stage, no_implementation, prefetch
from .crew import BASE_IN, BASE_OUT, HI, LIVELY, LO, N_DEFER, N_FIRST, N_SECOND, call_crew, split_round, wait_crew
from .pool import drop_packet, schedule
from .ready import fall_asleep, is_awake, park, pop_head, walk_order
from .routing import route_head
from .state import (
    C_DROP_UNROUTABLE, C_EPOCH, C_LAST_PROGRESS, C_STAMP, E_CREDIT, PK_ARRIVE, PK_CLS, PK_DVC, PK_OUT,
    PK_SIZE, PT_IN_BUSY, PT_IN_DVC, PT_IN_KEY, PT_IN_MATCH, PT_IN_PICK, PT_IN_STAMP, PT_LINK_BUSY, PT_OUT_BUSY,
    PT_OUT_KEY, PT_OUT_MATCH, PT_OUT_PICK, PT_OUT_STAMP, PT_RR_IN, PT_RR_OUT, PT_RR_VC, VC_FREE, VC_HEAD, VC_WAKE,
    VS_DVC, VS_OUT, VS_PKT, VS_SENT, port_of,
)
from .timing import chunk_ready, head_route, room_needed, serialise, streaming, xbar_input, xbar_local
from .vc_alloc import allocate_vc, allocate_vcs, downstream_vcs, rr_key, vc_free_at

DEFER_PARK, DEFER_DROP, DEFER_SLEEP = 0, 1, 2  # what a crew member's part lists for the main thread (next_request)
WAIT = -2  # head_request: the head cannot ask before VC_WAKE (the allocator parks its VC until then)
DROP = -3  # head_request: no live route leads to the head's destination (faults): drop_head removes it
FULL = -4  # head_request: its downstream VC lacks room; only a credit (an event) or a grant changes that


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


@jit_callee
def drop_head(port, prm, st, v, t):
    """Remove VC v's head, which has no live route (faults), as a grant to nowhere would: the next packet becomes
    the head, the buffer's credits go back once the tail has arrived. True if v left the ready list."""
    pk, ctr = st.pk, st.ctr
    h, left = pop_head(prm, st, v, t)
    p = port_of(prm, v)
    size = pk[h, PK_SIZE]
    done = max(t + 1, pk[h, PK_ARRIVE] + serialise(port, p, size))
    schedule(st.ev, st.wheel, ctr, prm.wheel_mask, E_CREDIT, v, size, done - 1 + prm.credit_delay + port[p, P_LATENCY])
    drop_packet(pk, ctr, prm, h, C_DROP_UNROUTABLE)
    ctr[C_LAST_PROGRESS] = t
    return left


@jit_inline
def prefetch_heads(act, n, vc, pk, pt, prm, i):
    """Start loading what head_request reads for the ready VCs PREFETCH (VC and port record) and PREFETCH / 2
    (their head packet) places after i."""
    far = act[min(i + PREFETCH, n - 1)]
    prefetch(vc, far)
    prefetch(pt, port_of(prm, far))
    prefetch(pk, vc[act[min(i + PREFETCH // 2, n - 1)], VC_HEAD])


@jit_stage
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
    if vc[v, VC_WAKE] > t - epoch:  # its ports are busy, or no downstream VC can be free, until then (below)
        return WAIT, -1, False
    p = port_of(prm, v)
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
def next_request(topo, rt, prm, st, t, i, n, buf, buf2, defer, n_defer, deferring, routing, scan, crossbar):
    """The walk both switch allocators make over the ready list's awake heads in their order (st.act, up to place
    n: walk_order), from place i on: each head still awake says what it asks for (head_request); one that must
    wait until a known cycle is parked, one with no live route dropped, one short of downstream room put to
    sleep; or, `deferring` (a crew member's part: kernels/crew.py), listed for the main thread to do so, in
    defer[n_defer...]. Returns (the place after the next head that asks, its VC (-1: the walk is done), output,
    downstream VC, own_link, whether a head passed over may ask next cycle with no event first, the deferred
    heads listed so far)."""
    act, vc, pk, pt = st.act, st.vc, st.pk, st.pt
    epoch = st.ctr[C_EPOCH]  # the VC records' times count from it (state.rebase moves it between calls)
    lively = False
    while i < n:
        v = act[i]
        i += 1
        if not is_awake(st, v):  # parked, asleep or gone since the walk's order was made (an earlier round)
            continue
        prefetch_heads(act, n, vc, pk, pt, prm, i - 1)
        o, dvc, own_link = head_request(topo.router_port_start, topo.port, topo.node, rt.dist, rt.ip, rt.alg, rt.vcr,
                                        vc, st.vc_ptr, st.vs, pt, prm, pk, st.rng_router, buf, buf2, t, epoch,
                                        v, routing, scan, crossbar)
        if deferring and (o == WAIT or o == DROP or o == FULL):
            defer[n_defer] = np.int64(v) << 2 | (DEFER_PARK if o == WAIT else DEFER_DROP if o == DROP else DEFER_SLEEP)
            n_defer += 1
            continue
        if o == WAIT and park(prm, st, v, t):
            continue
        if o == DROP and drop_head(topo.port, prm, st, v, t):
            continue
        if o == FULL:
            fall_asleep(st, v, dvc)
        elif o < 0:
            lively = True
        else:
            return i, v, o, dvc, own_link, lively, n_defer
    return i, -1, -1, -1, False, lively, n_defer


@jit_inline
def commit_deferred(topo, prm, st, defer, lo, n_defer, t):
    """What a crew member's walk listed (next_request), in its order: the heads to park, drop or put to sleep.
    Returns whether one of them may ask next cycle with no event first (a park beyond the wheel, a drop that
    left the head on the list)."""
    lively = False
    for j in range(lo, lo + n_defer):
        v = np.int32(defer[j] >> 2)
        what = defer[j] & 3
        if what == DEFER_PARK:
            lively |= not park(prm, st, v, t)
        elif what == DEFER_DROP:
            lively |= not drop_head(topo.port, prm, st, v, t)
        else:
            fall_asleep(st, v, head_route(st.pk, st.vc, st.vs, prm, v)[1])
    return lively


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
def input_key(ps, r, pt, prm, x, o, v):
    """Crossbar input x's (xbar_input) arbitration key for VC v asking for output o: outputs first from the input's
    output pointer, then VCs first from its VC pointer, as BookSim2's separable and iSLIP input arbiters order
    them (inputs that last won different outputs ask for different outputs next)."""
    V = prm.vcs
    return rr_key(o, ps[r], pt[x, PT_RR_OUT], ps[r + 1] - ps[r]) * V + rr_key(v - port_of(prm, v) * V, 0,
                                                                               pt[x, PT_RR_VC], V)


@jit_inline
def output_key(ps, prm, pt, n_ports, r, x, o):
    """Output o's round-robin key for crossbar input x of router r: inputs first from o's pointer over the
    router's crossbar inputs (xbar_local)."""
    return rr_key(xbar_local(ps, prm, n_ports, r, x), 0, pt[o, PT_RR_IN], (ps[r + 1] - ps[r]) * prm.input_speedup)


@jit_inline
def ask_part(topo, rt, prm, st, crew, part, t, stamp, buf, buf2, deferring, allocator, routing, scan, crossbar):
    """Part `part` of an allocation round (kernels/crew.py: its places in the ready list, and in the scratch lists
    of crossbar inputs and outputs with a request): its heads' requests, then the matches among its routers'
    ports (match_part). Separable input-first: each asking head goes to its crossbar input's round-robin arbiter
    (input_key). iSLIP: each asks for its output, whose arbiter keeps the input first from its pointer, and the
    input's VC first from its VC pointer (with multiple ejection, a head asking for its node's port goes to its
    input's accept arbiter directly). Records in the part's row whether a head passed over may ask next cycle
    unprompted and how many heads it deferred (`deferring`: a crew member's part)."""
    pt, ps, port = st.pt, topo.router_port_start, topo.port
    V, P = prm.vcs, len(port)
    lo, hi = crew.part[part, LO], crew.part[part, HI]
    base_in, base_out = crew.part[part, BASE_IN], crew.part[part, BASE_OUT]
    k_in, k_out = base_in, base_out
    n_defer = 0
    lively = False
    i = lo
    while True:
        i, v, o, dvc, own_link, more, n_defer = next_request(topo, rt, prm, st, t, i, hi, buf, buf2, crew.defer,
                                                             lo + n_defer, deferring, routing, scan, crossbar)
        n_defer -= lo
        lively |= more
        if v < 0:
            break
        x = xbar_input(prm, P, v)
        p = port_of(prm, v)
        r = port[p, P_ROUTER]
        if allocator == SA_SEPARABLE or not own_link:  # (iSLIP: multiple ejection's grant; its accept arbiter)
            k_in, took = arbitrate(pt, x, stamp, input_key(ps, r, pt, prm, x, o, v), v, st.touched_in, k_in,
                                   PT_IN_STAMP, PT_IN_KEY, PT_IN_PICK)
            if took:
                pt[x, PT_IN_DVC] = dvc
            continue
        key = output_key(ps, prm, pt, P, r, x, o) * V + rr_key(v - p * V, 0, pt[x, PT_RR_VC], V)
        k_out, _ = arbitrate(pt, o, stamp, key, v, st.touched_out, k_out, PT_OUT_STAMP, PT_OUT_KEY, PT_OUT_PICK)
    crew.part[part, LIVELY] = lively
    crew.part[part, N_DEFER] = n_defer
    match_part(topo, prm, st, crew, part, t, stamp, k_in - base_in, k_out - base_out, allocator)


@jit_inline
def match_part(topo, prm, st, crew, part, t, stamp, n_in, n_out, allocator):
    """The matches of part `part`'s ports, whose requests are in its scratch lists (n_in crossbar inputs, n_out
    outputs). Separable: round-robin output arbiters pick an input (with multiple ejection, every input asking
    for its node's ejection port wins it). iSLIP: each input accepts the granting output first from its own accept
    pointer (PT_RR_OUT); the node's port has granted every input asking for it. Pointers move past each grant
    (traverse), in every iteration (iSLIP moves them in the first only). Leaves the granted crossbar inputs in
    two runs, each in the order one thread walking every part would have granted them (request_round): FIRST
    (separable: those granted their node's port; iSLIP: those the requests matched) in touched_in from the part's
    base on, SECOND (separable: in touched_out from its base on; iSLIP: after the first run)."""
    pk, vc, pt = st.pk, st.vc, st.pt
    ps, port = topo.router_port_start, topo.port
    V, P = prm.vcs, len(port)
    base_in, base_out = crew.part[part, BASE_IN], crew.part[part, BASE_OUT]
    if allocator == SA_SEPARABLE:
        first = base_in  # those granted their node's port, compacted in place
        k_out = base_out
        for j in range(base_in, base_in + n_in):
            x = st.touched_in[j]
            if prm.multi_eject and pt[x, PT_IN_DVC] < 0:  # to the node: no ejection link to share
                pt[x, PT_IN_MATCH] = t
                st.touched_in[first] = x
                first += 1
                continue
            v = pt[x, PT_IN_PICK]
            o = head_route(pk, vc, st.vs, prm, v)[0]
            key = output_key(ps, prm, pt, P, port[port_of(prm, v), P_ROUTER], x, o)
            k_out, _ = arbitrate(pt, o, stamp, key, x, st.touched_out, k_out, PT_OUT_STAMP, PT_OUT_KEY, PT_OUT_PICK)
        for j in range(base_out, k_out):
            o = st.touched_out[j]
            x = pt[o, PT_OUT_PICK]
            pt[x, PT_IN_MATCH] = t
            pt[o, PT_OUT_MATCH] = t
            st.touched_out[j] = x
        crew.part[part, N_FIRST] = first - base_in
        crew.part[part, N_SECOND] = k_out - base_out
    else:
        k_in = base_in + n_in
        for j in range(base_out, base_out + n_out):  # accept phase: each input keeps the first granting output
            o = st.touched_out[j]
            v = pt[o, PT_OUT_PICK]
            x = xbar_input(prm, P, v)
            r = port[port_of(prm, v), P_ROUTER]
            key = rr_key(o, ps[r], pt[x, PT_RR_OUT], ps[r + 1] - ps[r]) * V
            k_in, took = arbitrate(pt, x, stamp, key, v, st.touched_in, k_in, PT_IN_STAMP, PT_IN_KEY, PT_IN_PICK)
            if took:
                pt[x, PT_IN_DVC] = head_route(pk, vc, st.vs, prm, v)[1]
        for j in range(base_in, k_in):
            x = st.touched_in[j]
            pt[x, PT_IN_MATCH] = t
            if pt[x, PT_IN_DVC] >= 0 or not prm.multi_eject:
                pt[head_route(pk, vc, st.vs, prm, pt[x, PT_IN_PICK])[0], PT_OUT_MATCH] = t
        crew.part[part, N_FIRST] = n_in
        crew.part[part, N_SECOND] = k_in - base_in - n_in


@jit_inline
def ask_with_crew(topo, rt, prm, st, crew, t, stamp, n_heads, allocator, routing, scan, crossbar):
    """The parts of a round (split_round), the first walked here while the crew's members walk theirs, then what
    they deferred done in their order. Returns (how many parts, whether a head passed over may ask next cycle with
    no event first)."""
    parts = split_round(topo.router_port_start, topo.port, prm, crew, st.act, n_heads, prm.input_speedup)
    seq = call_crew(crew, t, stamp) if parts > 1 else 0
    ask_part(topo, rt, prm, st, crew, 0, t, stamp, st.buf, st.buf2, False, allocator, routing, scan, crossbar)
    lively = crew.part[0, LIVELY] != 0
    if parts > 1:
        if not wait_crew(crew, parts, seq):
            raise RuntimeError("a thread of the crew failed")
        for p in range(1, parts):
            lively |= crew.part[p, LIVELY] != 0
            lively |= commit_deferred(topo, prm, st, crew.defer, crew.part[p, LO], crew.part[p, N_DEFER], t)
    return parts, lively


@jit_inline
def request_round(topo, rt, prm, st, crew, t, stamp, n0, n_heads, allocator, routing, scan, crossbar, crewed):
    """One allocator iteration (separable input-first, or iSLIP: BookSim2's default allocator, its
    src/allocators/islip.cpp), its parts walked by the crew when there are enough heads (kernels/crew.py): the main
    thread walks and matches the first part while the members do theirs, then does what they deferred, part
    after part (ask_part). Inputs are crossbar inputs (xbar_input: a port's, or with input_speedup S one of its
    S). Appends the granted crossbar inputs to st.grants from n0 on, every part's first run and then every part's
    second (match_part), and returns how many, and whether a head that did not ask may ask next cycle with no
    event in between (any but FULL: run_chunk skips cycles only without one). `crewed` (1: the run has more than
    one thread) is a constant of the loop. UGAL-G reads other routers' queues, which their parts' walks change: its
    rounds are walked by one thread."""
    parts, lively = 0, False
    if crewed == 1:  # (nested: a branch on a constant is pruned, so a loop of one thread compiles no crew code)
        if routing != R_UGAL_G:
            parts, lively = ask_with_crew(topo, rt, prm, st, crew, t, stamp, n_heads, allocator, routing, scan,
                                          crossbar)
    if parts == 0:
        crew.part[0, LO], crew.part[0, HI], crew.part[0, BASE_IN], crew.part[0, BASE_OUT] = 0, n_heads, 0, 0
        ask_part(topo, rt, prm, st, crew, 0, t, stamp, st.buf, st.buf2, False, allocator, routing, scan, crossbar)
        parts, lively = 1, crew.part[0, LIVELY] != 0
    n = n0
    for p in range(parts):
        base = crew.part[p, BASE_IN]
        for j in range(base, base + crew.part[p, N_FIRST]):
            st.grants[n] = st.touched_in[j]
            n += 1
    for p in range(parts):
        if allocator == SA_SEPARABLE:
            base = crew.part[p, BASE_OUT]
            for j in range(base, base + crew.part[p, N_SECOND]):
                st.grants[n] = st.touched_out[j]
                n += 1
        else:
            base = crew.part[p, BASE_IN] + crew.part[p, N_FIRST]
            for j in range(base, base + crew.part[p, N_SECOND]):
                st.grants[n] = st.touched_in[j]
                n += 1
    return n - n0, lively


@jit_stage
def allocate(topo, rt, prm, st, crew, t, routing, scan, allocator, vc_alloc, crossbar, crewed):
    """VC allocation by BookSim2's allocators, if `vc_alloc` (Params.vc_alloc, a constant of the cycle loop) asks
    for it, then switch allocation with `iters` iterations (separable input-first, or iSLIP: `allocator`, also a
    constant, as `crossbar`); fills st.grants, returns their count and whether the cycle after may see a request
    with no event before it (`lively`: the first round's heads, and BookSim2's VC allocators always). Every
    allocator looks at the awake heads in the ready list's order (walk_order)."""
    lively = False
    heads = walk_order(topo.router_port_start, topo.port, prm, st)
    if vc_alloc == VA_ISLIP or vc_alloc == VA_SEPARABLE:
        allocate_vcs(topo, rt, prm, st, t, heads, routing, scan)
        lively = True
    elif vc_alloc != VA_GREEDY:
        no_implementation(vc_alloc)
        raise ValueError("no VC allocator for this code")
    n = 0
    for k in range(prm.iters):
        st.ctr[C_STAMP] += 1
        if allocator != SA_ISLIP and allocator != SA_SEPARABLE:
            no_implementation(allocator)
            raise ValueError("no switch allocator for this code")
        m, more = request_round(topo, rt, prm, st, crew, t, st.ctr[C_STAMP], n, heads, allocator, routing, scan,
                                crossbar, crewed)
        if k == 0:
            lively |= more
        n += m
        if m == 0:
            break
    return n, lively
