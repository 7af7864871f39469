"""The cycle loop: the router pipeline (fastnet/kernels/) fed by open-loop traffic (fastnet/traffic/) or a
closed-loop workload (fastnet/workloads/, fastnet/mpi/), one stage after another. This room stands above those it
calls, so a run's data flows down through them: no kernel imports a workload.

One cycle, in pipeline order (the body of `run_chunk`):

1. `fire_events`  credits that have travelled back upstream, and packet tails reaching their node (a closed-loop
                  workload's message layer counts them: fastnet/workloads/messages.py)
2. generate       open-loop sources, or the closed-loop workload's stage machines (engine/generate.py), add
                  packets to their node's (unbounded) source queue
3. `inject`       each node whose injection link is free sends its oldest packet into a router VC with room
4. `allocate`     route newly ready heads; separable input-first round-robin switch allocation (a routed head
                  whose input, output or link is busy, or whose downstream VCs are all taken, until a known cycle
                  leaves the ready list until then: waiting costs nothing per cycle)
5. `traverse`     move the granted packets: reserve the downstream VC (credits), occupy crossbar and link,
                  schedule the credit return and, at the last router, the delivery

The stages are one module each in fastnet/kernels/ (inject.py, allocate.py, traverse.py; events.py for what credits
and deliveries do), and the timing of a hop is kernels/timing.py's.
"""

from __future__ import annotations

from typing import Any

from numba import typeof, types

from ..build.network import N_NODE, N_P, NODE, P_CLASS, P_PEER_PORT
from ..build.routing import minimal_scan
from ..kernels._jit import jit, jit_callee, jit_inline, jit_stage, store_release
from ..kernels.allocate import allocate, ask_part, drop_head, head_request
from ..kernels.crew import CMD, CYCLE, LINE, SEQ, STAMP, STOP, wait_change
from ..kernels.events import credits_back, record_delivery
from ..kernels.inject import inject, send_from_node
from ..kernels.pool import drop_packet, free_packet, release_event
from ..kernels.ready import join_ready
from ..kernels.routing import route_head
from ..kernels.traverse import traverse
from ..kernels.state import (
    ASLEEP, C_CREATED, C_DELIVERED, C_DROPPED, C_EV_FREE_COUNT, C_FREE_COUNT, C_LAST_PROGRESS, C_MEAS_CREATED,
    C_MEAS_DELIVERED, C_MEAS_DROPPED, C_N_ACTIVE, C_N_ACTIVE_NODES, C_QUEUED, E_CREDIT, E_READY, EV_AMOUNT, EV_KIND,
    EV_NEXT, EV_TARGET, N_EV, N_ND, N_PK, N_PT, N_TS, N_VC, N_VG, N_VS, NEVER, PK_LOST, PK_MSG, TS_IN_NETWORK,
    TS_QUEUED, VC_WAITER, VC_WAKE, VS_NODE_PKT, port_of,
)
from ..registry import (
    CROSSBARS, GEN_MPI, GEN_OPEN_LOOP, GENERATORS, ROUTINGS, SWITCH_ALLOCATORS, VC_ALLOCATORS, W_OPEN_LOOP, X_FLIT,
)
from ..traffic.openloop import generate_open_loop
from ..workloads.messages import packet_arrived
from ..workloads.state import WC_FREE_COUNT, WC_NEXT
from .generate import (
    WS_FAILED, WS_FINISHED, WS_RUNNING, advance_workload, generator_of, workload_due, workload_kernels, workload_status,
)

OK, GROW, DEADLOCK, DRAINED, FINISHED, FAILED = 0, 1, 2, 3, 4, 5  # FINISHED/FAILED: the closed-loop workload


@jit_stage
def fire_events(port, prm, st, wl_kind, wl_msg, wl_wc, wl_inbox, t, crossbar):
    """This cycle's events. Returns whether a node may now inject where it could not (credits came back to an
    injection VC: `inject` runs again). `crossbar` (= prm.crossbar) is a constant of the loop (cycle_loop)."""
    ev, ctr, vc, pk = st.ev, st.ctr, st.vc, st.pk
    slot = t & prm.wheel_mask
    e = st.wheel[slot]
    st.wheel[slot] = -1
    nodes = False
    while e >= 0:
        nxt = ev[e, EV_NEXT]
        kind = ev[e, EV_KIND]
        if kind == E_CREDIT:
            v = ev[e, EV_TARGET]
            credits_back(st, prm, v, ev[e, EV_AMOUNT], t)
            p = port_of(prm, v)
            if port[p, P_CLASS] == NODE:
                nodes = True
                st.blocked[port[p, P_PEER_PORT]] = 0
                if crossbar == X_FLIT:
                    if st.vs[v, VS_NODE_PKT] >= 0:
                        send_from_node(port, prm, st, v, t)
        elif kind == E_READY:
            join_ready(st, ev[e, EV_TARGET], ev[e, EV_AMOUNT], t)
        else:
            h = ev[e, EV_TARGET]
            if pk[h, PK_LOST]:  # a failing link or router cut its tail off on the way (fastnet/faults/kernel.py)
                drop_packet(pk, ctr, prm, h, pk[h, PK_LOST])
            else:
                record_delivery(pk, st.sc, st.lat_hist, st.net_hist, st.ts, ctr, prm, h, t)
                if wl_kind != W_OPEN_LOOP and pk[h, PK_MSG] >= 0:  # (< 0: background traffic's)
                    packet_arrived(wl_msg, wl_wc, wl_inbox, pk, h)
                free_packet(pk, ctr, h)
            ctr[C_LAST_PROGRESS] = t
        release_event(ev, ctr, e)
        e = nxt
    return nodes


@jit_inline
def rows_known(topo, st):
    """Whether every record array has as many columns as its column names say. Checked once at the top of a
    kernel call, it makes each row length a constant of the code below: LLVM carries the equality into every
    access, which then finds a record by a shift and an add instead of a multiply by a length the loop keeps on
    the stack (it holds too many arrays for its registers). A replay on Hopper took 9 % less time with it and
    codes_known (perf/README.md, "What the loop knows at its top")."""
    return (st.pk.shape[1] == N_PK and st.vc.shape[1] == N_VC and st.pt.shape[1] == N_PT and st.ev.shape[1] == N_EV
            and st.nd.shape[1] == N_ND and st.vs.shape[1] == N_VS and st.ts.shape[1] == N_TS
            and st.vc_grant.shape[1] == N_VG and topo.port.shape[1] == N_P and topo.node.shape[1] == N_NODE)


@jit_inline
def codes_known(prm, routing, allocator, vc_alloc, crossbar):
    """Whether the run's codes are those the loop was made for (its constants): checked with rows_known, it lets a
    helper that tests prm.crossbar fold as if handed the constant, and the flit crossbar's branches drop out of a
    packet crossbar's loop."""
    return (prm.crossbar == crossbar and prm.routing == routing and prm.allocator == allocator
            and prm.vc_alloc == vc_alloc)


@jit_callee
def record_timeseries(prm, st, t):
    """The end of a time-series interval: packets in the network and queued at their nodes."""
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
def unheeded_credits(port, st, prm, e):
    """Whether the events of a wheel slot, from event e on, are all credits that nothing waits for: none to a node's
    injection VC (its node may send again) or to a VC a head sleeps on (it may ask again)."""
    ev, vc = st.ev, st.vc
    while e >= 0:
        if ev[e, EV_KIND] != E_CREDIT:
            return False
        v = ev[e, EV_TARGET]
        w = vc[v, VC_WAITER]
        if port[port_of(prm, v), P_CLASS] == NODE or (w >= 0 and vc[w, VC_WAKE] == ASLEEP):
            return False
        e = ev[e, EV_NEXT]
    return True


@jit_inline
def next_activity(port, st, prm, t, limit):
    """With no head that may ask before an event after cycle t, the first cycle in t + 1..limit (the caller's
    bound: the workload's timer, a node's injection link freeing as `inject` found) at which anything can happen:
    the earliest event on the wheel (a credit, a ready head, a delivery). A node whose link was free at t and
    that still holds packets found no injection VC with room, which only a credit event gives it. Every cycle
    before that is a no-op, as a cycle of an idle network is: packets on links and heads parked until a known
    cycle need nothing per cycle. The wheel holds events due in t + 1..t + its size (kernels/pool.py schedule),
    so the first slot found taken is the earliest. A slot of credits that nothing waits for (unheeded_credits)
    is fired on the way, at its own cycle: stepped, that cycle would do nothing more (no head could ask, no node
    send), so the state reached is the same with 3-7 % fewer cycles stepped in a replay (perf/README.md)."""
    wheel, mask = st.wheel, prm.wheel_mask
    for u in range(t + 1, min(limit, t + mask + 1)):
        e = wheel[u & mask]
        if e >= 0:
            if not unheeded_credits(port, st, prm, e):
                return u
            wheel[u & mask] = -1
            while e >= 0:
                nxt = st.ev[e, EV_NEXT]
                credits_back(st, prm, st.ev[e, EV_TARGET], st.ev[e, EV_AMOUNT], u)
                release_event(st.ev, st.ctr, e)
                e = nxt
    return limit


LOOPS: dict[tuple[int, ...], object] = {}  # cycle_loop's codes (generator, routing, ..., crewed) -> the kernel


def cycle_loop(generator: int, routing: int, scan: int, allocator: int, vc_alloc: int, crossbar: int,
               crewed: int = 0):
    """The cycle loop kernel for one generate stage (`generator`: open-loop traffic or one closed-loop workload,
    fastnet/registry.py GENERATORS), one routing algorithm (Params.routing), one way of finding minimal ports (`scan`:
    build/routing.py minimal_scan), one switch allocator (Params.allocator), one way of allocating VCs
    (Params.vc_alloc) and one crossbar (Params.crossbar), made on first use; `crewed` (1: more than one thread,
    kernels/crew.py) adds the crew's code to allocation rounds. All seven are constants of the kernel:
    numba prunes the branches they rule out before inlining what those branches call (_jit._PruneThenInline), so
    a run compiles only its own traffic or workload, routing, topology, allocators and crossbar (most of the
    compile time of a loop serving every case; BookSim2's VC allocators alone add a third to a loop's, the flit
    crossbar a sixth). The stages compiled apart (fire_events, allocate, traverse, ...) receive the constants they
    branch on as arguments: literals, which _PruneThenInline prunes on as on constants. The kernels are cached on
    disk like any other, one per combination. A code no registry declares (fastnet/registry.py) is refused here;
    one declared but taken by no branch of its dispatch does not compile (_jit.no_implementation)."""
    GENERATORS.require(generator)
    ROUTINGS.require(routing)
    SWITCH_ALLOCATORS.require(allocator)
    VC_ALLOCATORS.require(vc_alloc)
    CROSSBARS.require(crossbar)
    key = (int(generator), int(routing), int(scan), int(allocator), int(vc_alloc), int(crossbar), int(crewed))
    if key not in LOOPS:
        LOOPS[key] = _make_cycle_loop(*key)
    return LOOPS[key]


def _make_cycle_loop(generator: int, routing: int, scan: int, allocator: int, vc_alloc: int, crossbar: int,
                     crewed: int):
    closed = generator != GEN_OPEN_LOOP

    @jit
    def run_chunk(topo, rt, prm, tr, wl, st, crew, t0, t1, stop_when_drained, budget):
        """Advance cycles t0..t1-1. Returns (status, next cycle, low, work done): stops early when a pool runs low
        (GROW; `low` says which: bits 1 and 2 as pools_low, 4 the workload's message pool; sim.grow_pools), on a
        deadlock, once the window has ended and every measured packet is delivered (when stop_when_drained), when
        the closed-loop workload `wl` has finished or failed, or once `budget` units of work are done: a simulated
        cycle counts one and each grant one more, so that a call's wall time follows its work (a cycle of a busy
        million-node network costs as much as 10^5 idle ones; a closed-loop run skips the cycles in which nothing
        can happen, network_idle, so t1 may lie much further ahead). sim.simulate sizes budgets to half a second."""
        if not (rows_known(topo, st) and codes_known(prm, routing, allocator, vc_alloc, crossbar)):
            raise ValueError("the State's or the Topology's records, or the run's codes, are not the loop's")
        ctr, wheel, wc = st.ctr, st.wheel, wl.wc
        n_nodes, n_ports = len(st.nd), len(st.pt)
        created = n_nodes  # the most packets one cycle creates: open-loop sources make one per node at most
        if closed:  # a workload's tasks may each packetise a message's first packets in one cycle
            created = wl.n_tasks * wl.packets_per_message + (n_nodes if prm.background else 0)
        t = t0 - 1
        work = 0
        inject_at = t0  # the first cycle after the last inject at which a node's link frees (its return value)
        while t + 1 < t1 and work < budget:
            t += 1
            work += 1
            low = pools_low(ctr, created, n_ports)
            if closed and wc[WC_FREE_COUNT] < wl.msg_headroom:  # the workload's message pool
                low |= 4
            if low != 0:
                return GROW, t, low, work - 1
            # the router pipeline, one stage at a time; a stage with nothing to do is skipped
            nodes = False  # the nodes' queues or injection VCs changed: inject looks at every node again
            if wheel[t & prm.wheel_mask] >= 0:
                nodes = fire_events(topo.port, prm, st, wl.kind, wl.msg, wc, wl.inbox, t, crossbar)
            if closed:  # (not `if not closed`: numba prunes a branch on a constant, not on its negation)
                if workload_due(wc, ctr, t):
                    advance_workload(wl, prm, st, t, generator)
                    nodes = True
                if generator == GEN_MPI and prm.background:
                    generate_open_loop(tr, prm, st, t)
                    nodes = True
            else:
                generate_open_loop(tr, prm, st, t)
                nodes = True
            # a node that neither has its link free by now nor got credits or packets would only be skipped
            if ctr[C_N_ACTIVE_NODES] > 0 and (nodes or t >= inject_at):
                inject_at = inject(topo, rt, prm, st, t)
            quiet = True  # no head can ask before an event or a known cycle
            if ctr[C_N_ACTIVE] > 0:
                n, lively = allocate(topo, rt, prm, st, crew, t, routing, scan, allocator, vc_alloc, crossbar, crewed)
                quiet = n == 0 and not lively
                if n > 0:
                    traverse(topo, prm, st, t, n, crossbar)
                    work += n
            if prm.ts_interval > 0 and (t + 1) % prm.ts_interval == 0:
                record_timeseries(prm, st, t)
            if ctr[C_CREATED] > ctr[C_DELIVERED] + ctr[C_DROPPED] and t - ctr[C_LAST_PROGRESS] > prm.watchdog:
                return DEADLOCK, t + 1, 0, work
            if stop_when_drained and t + 1 >= prm.w1 and \
                    ctr[C_MEAS_CREATED] == ctr[C_MEAS_DELIVERED] + ctr[C_MEAS_DROPPED]:
                return DRAINED, t + 1, 0, work
            if closed:
                w = workload_status(wc, ctr, prm.watchdog, t)
                if w != WS_RUNNING:
                    return (FINISHED if w == WS_FINISHED else FAILED if w == WS_FAILED else DEADLOCK), t + 1, 0, work
                if prm.skip_idle and not prm.background and not workload_due(wc, ctr, t + 1):
                    if network_idle(ctr, len(st.ev)):
                        if wc[WC_NEXT] < NEVER:  # nothing can happen before the workload's next timer: skip
                            t = min(wc[WC_NEXT], t1) - 1
                    elif quiet:  # packets on links, parked, or waiting for credits: skip to the next event
                        limit = min(wc[WC_NEXT], t1, ctr[C_LAST_PROGRESS] + prm.watchdog + 1)
                        if ctr[C_N_ACTIVE_NODES] > 0:
                            limit = min(limit, inject_at)
                        if prm.ts_interval > 0:  # record_timeseries samples the end of every interval
                            limit = min(limit, (t + 1) // prm.ts_interval * prm.ts_interval + prm.ts_interval - 1)
                        t = max(t, next_activity(topo.port, st, prm, t, limit) - 1)
        return OK, t + 1, 0, work

    return run_chunk


MEMBERS: dict[tuple[int, ...], object] = {}  # (routing, scan, allocator, crossbar) -> the crew member's kernel


def crew_member(routing: int, scan: int, allocator: int, crossbar: int):
    """The kernel a crew member's thread runs while the cycle loop runs (kernels/crew.py): made, and cached, as the
    loop is, for the loop's routing, scan, switch allocator and crossbar."""
    key = (int(routing), int(scan), int(allocator), int(crossbar))
    if key not in MEMBERS:
        MEMBERS[key] = _make_crew_member(*key)
    return MEMBERS[key]


def _make_crew_member(routing: int, scan: int, allocator: int, crossbar: int):
    @jit
    def member(topo, rt, prm, st, crew, part):
        """Walk part `part` of each allocation round the main thread starts (allocate.py ask_part, its parks,
        drops and sleeps listed for the main thread), until told to stop."""
        seen = 0
        while True:
            seen = wait_change(crew.ctl, SEQ, seen)
            if crew.ctl[CMD] == STOP:
                return
            ask_part(topo, rt, prm, st, crew, part, crew.ctl[CYCLE], crew.ctl[STAMP], crew.buf[part], crew.buf2[part],
                     True, allocator, routing, scan, crossbar)
            store_release(crew.ctl, (1 + part) * LINE, seen)

    return member


def stage_kernels(topo, rt, prm, tr, wl, st, crew) -> list[tuple[Any, tuple]]:
    """The kernels compiled apart that run_chunk(topo, rt, prm, tr, wl, st, crew, ...) calls, directly or through
    another (allocate's head_request and route_head), each with the argument types of its call, the largest first: a
    cold start compiles them on two cores before the loop, each after those it calls (engine/coldstart.py). A call
    changed above and not here costs only that speed-up (tests/test_coldstart.py compares them)."""
    generator = generator_of(wl)
    t, port, x, closed = types.int64, typeof(topo.port), types.literal(int(prm.crossbar)), generator != GEN_OPEN_LOOP
    topo_, rt_, prm_, tr_, st_ = typeof(topo), typeof(rt), typeof(prm), typeof(tr), typeof(st)
    kernels = workload_kernels(generator, wl, st) if closed else []
    events = (port, prm_, st_, typeof(wl.kind), typeof(wl.msg), typeof(wl.wc), typeof(wl.inbox), t, x)
    routing, scan, allocator, vc_alloc = (types.literal(int(c)) for c in (prm.routing, minimal_scan(rt), prm.allocator,
                                                                         prm.vc_alloc))
    head = (typeof(topo.router_port_start), port, typeof(topo.node), typeof(rt.dist), typeof(rt.ip), typeof(rt.alg),
            typeof(rt.vcr), typeof(st.vc))  # the arrays head_request and route_head read first
    draws = (typeof(st.pt), prm_, typeof(st.pk), typeof(st.rng_router), typeof(st.buf), typeof(st.buf2))
    crewed = types.literal(int(crew.threads > 1))
    kernels += [(allocate, (topo_, rt_, prm_, st_, typeof(crew), t, routing, scan, allocator, vc_alloc, x, crewed)),
                (head_request, (*head, typeof(st.vc_ptr), typeof(st.vs), *draws, t, typeof(st.ctr).dtype,
                                typeof(st.act).dtype, routing, scan, x)),
                (route_head, (*head, *draws, types.int64, typeof(st.vc).dtype, routing, scan)),
                (traverse, (topo_, prm_, st_, t, t, x)), (fire_events, events)]
    if not closed or generator == GEN_MPI:  # an MPI run's background traffic
        kernels.append((generate_open_loop, (tr_, prm_, st_, t)))
    return kernels + [(inject, (topo_, rt_, prm_, st_, t)),
                      (drop_head, (port, prm_, st_, types.int32, t)),  # allocate's, for a head with no live route
                      (record_timeseries, (prm_, st_, t))]
